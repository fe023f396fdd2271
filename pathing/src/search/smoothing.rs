//! String pulling (docs/pathfinding-rules.md, "Turning a path into waypoints"): a grid path reduced
//! to the points where a unit really has to turn, pulled over every navcell of the path, not only
//! its turning points.
//!
//! The input is a list of points, usually a search's turning points (navcell centres). Between two
//! consecutive points whose difference is a whole number of navcells on both axes, the grid path
//! walks diagonally first and then straight, as [`crate::Path::cells`] does; the centres it passes
//! become *stretch points*, candidates as good as the input's own points. Other pairs (a unit's
//! exact position, an exact goal point) have no stretch points.
//!
//! From an anchor (the first point) the walk goes forward over the input points while the anchor
//! still sees the next one: the straight segment between them touches only passable navcells
//! ([`crate::local::collide::segment_clear`], closed navcells, so the result never cuts a corner the
//! grid forbids). Then it refines inside the stretch after the last input point it saw, which ends
//! at an input point it does not see: it probes the stretch points 1, 2, 4, … steps past the last
//! seen point until one is not seen, then bisects between the last seen and the first unseen probe.
//! The point found is seen and the next stretch point is not; it becomes the new anchor, until
//! the last point. When the anchor sees neither the next input point nor the next stretch point (an
//! input whose own segments are not clear), the next point is kept as it is, so the walk always
//! advances.
//!
//! The grid pathfinder this comes from samples every half navcell and looks at every navcell of
//! the path; here every test is exact, so a smoothed path is legal by construction, and probing
//! instead of testing every stretch point one by one bounds the cost: at most `2n + 2·k·⌈log₂ L⌉`
//! exact segment tests for `n` input points, `k` output segments and stretches of at most `L`
//! navcells, each test as long as the segment it checks. (Searching the whole rest of the path for
//! the farthest visible point costs a quadratic number of long tests; docs/decisions.md.)
//!
//! Every kept point is an input point or a stretch point, in path order, and the first and last
//! are always kept; each output segment is clear whenever the input's grid path was.

use crate::geometry::{Fixed, WorldPos};
use crate::grid::pass_map::PassMap;
use crate::local::collide::segment_clear;

/// The points of `points` with every stretch point between them (see the module documentation),
/// and for each expanded point whether it is an input point.
fn expand(points: &[WorldPos], cell: i128) -> Vec<(WorldPos, bool)> {
    let mut out = Vec::with_capacity(points.len());
    for pair in points.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        out.push((a, true));
        let (dx, dz) = (i128::from(b.x.to_bits()) - i128::from(a.x.to_bits()), i128::from(b.z.to_bits()) - i128::from(a.z.to_bits()));
        if cell <= 0 || dx % cell != 0 || dz % cell != 0 {
            continue;
        }
        let (ni, nj) = (dx / cell, dz / cell);
        let (mut i, mut j) = (0i128, 0i128);
        loop {
            i += (ni - i).signum();
            j += (nj - j).signum();
            if (i, j) == (ni, nj) {
                break;
            }
            // Between two world points, so within their bounding box: the sums fit in `i64`.
            let at = |base: Fixed, k: i128| Fixed::from_bits((i128::from(base.to_bits()) + k * cell) as i64);
            out.push((WorldPos::new(at(a.x, i), at(a.z, j)), false));
        }
    }
    if let Some(&last) = points.last() {
        out.push((last, true));
    }
    out
}

/// The string-pulled form of `points` on `map` (see the module documentation). Paths of fewer than
/// three points, counting stretch points, are returned unchanged.
pub fn string_pull(map: &PassMap, points: &[WorldPos]) -> Vec<WorldPos> {
    let Some(&first) = points.first() else { return Vec::new() };
    let all = expand(points, i128::from(map.cell_size().to_bits()));
    if all.len() < 3 {
        return points.to_vec();
    }
    let last = all.len() - 1;
    let sees = |from: usize, to: usize| segment_clear(map, all[from].0, all[to].0);
    let mut out = vec![first];
    let mut anchor = 0;
    while anchor < last {
        // The first input point after the anchor, and the input points the anchor sees from there.
        let mut next_input = anchor + 1;
        while !all[next_input].1 {
            next_input += 1;
        }
        let mut seen = anchor;
        let mut unseen = None;
        let mut at = next_input;
        loop {
            if !sees(anchor, at) {
                unseen = Some(at);
                break;
            }
            seen = at;
            if at == last {
                break;
            }
            at += 1;
            while !all[at].1 {
                at += 1;
            }
        }
        // Refine inside the stretch between the last seen input point and the first unseen one:
        // probe 1, 2, 4, … stretch points past it, then bisect.
        if let Some(mut hi) = unseen {
            let base = seen;
            let mut step = 1;
            while base + step < hi {
                if sees(anchor, base + step) {
                    seen = base + step;
                    step *= 2;
                } else {
                    hi = base + step;
                    break;
                }
            }
            while hi - seen > 1 {
                let mid = seen + (hi - seen) / 2;
                if sees(anchor, mid) { seen = mid } else { hi = mid }
            }
        }
        // An anchor that sees nothing ahead keeps the next point, so the walk always advances.
        let next = seen.max(anchor + 1);
        out.push(all[next].0);
        anchor = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{CLASS, random_grid};
    use crate::{Accelerators, Goal, Navcell, Path, PathStatus, SearchLimits, SearchScratch, find_path_jps};
    use proptest::prelude::*;

    fn centre(c: Navcell) -> WorldPos {
        WorldPos::new(Fixed::from_num(c.i) + Fixed::ONE / 2, Fixed::from_num(c.j) + Fixed::ONE / 2)
    }

    #[test]
    fn a_staircase_on_open_ground_becomes_one_segment() {
        let grid = random_grid(20, 20, 1, 0);
        let map = PassMap::build(&grid, CLASS);
        let stairs: Vec<WorldPos> = (0..10).map(|k| centre(Navcell::new(k, k / 2))).collect();
        assert_eq!(string_pull(&map, &stairs), vec![stairs[0], stairs[9]]);
    }

    #[test]
    fn short_paths_are_unchanged() {
        let grid = random_grid(4, 4, 1, 0);
        let map = PassMap::build(&grid, CLASS);
        let two = [centre(Navcell::new(0, 0)), centre(Navcell::new(3, 3))];
        assert_eq!(string_pull(&map, &two), two.to_vec());
        assert!(string_pull(&map, &[]).is_empty());
    }

    fn at(x2: i64, z2: i64) -> WorldPos {
        WorldPos::new(Fixed::from_num(x2) / 2, Fixed::from_num(z2) / 2)
    }

    /// The example of the rule (docs/pathfinding-rules.md, "Turning a path into waypoints"): on a
    /// 24 × 12 grid with a 2 × 2 block, the search's turning points are (4, 3), (8, 7), (14, 7); the
    /// turning points alone pull to 4√2 + 6 ≈ 11.657 m, the stretch point (11, 7) to √65 + 3 ≈ 11.062 m.
    #[test]
    fn string_pulling_uses_every_navcell_of_the_path_not_only_its_turning_points() {
        let mut grid = random_grid(24, 12, 1, 0);
        for (i, j) in [(11, 5), (12, 5), (11, 6), (12, 6)] {
            grid.set_passable(Navcell::new(i, j), CLASS, false);
        }
        let map = PassMap::build(&grid, CLASS);
        let mut scratch = SearchScratch::new();
        let mut path = Path::new();
        let goal = Goal::navcell_center(14, 7, Fixed::ONE);
        let outcome =
            find_path_jps(&map, &Accelerators::NONE, Navcell::new(4, 3), &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut path);
        assert_eq!(outcome.status, PathStatus::Complete);
        assert_eq!(path.waypoints(), [Navcell::new(4, 3), Navcell::new(8, 7), Navcell::new(14, 7)]);
        let points: Vec<WorldPos> = path.waypoints().iter().map(|&c| centre(c)).collect();
        assert_eq!(string_pull(&map, &points), vec![at(9, 7), at(23, 15), at(29, 15)]);
    }

    /// Stretch points are found by probing and bisection: a long stretch whose far part the anchor
    /// cannot see still gives the last navcell it sees before the first one it does not.
    #[test]
    fn the_anchor_advances_to_the_last_stretch_point_it_sees() {
        // A wall at i = 5 for j ≤ 5; the path runs north along i = 0, then east along j = 6.
        let mut grid = random_grid(40, 8, 1, 0);
        for j in 0..=5 {
            grid.set_passable(Navcell::new(5, j), CLASS, false);
        }
        let map = PassMap::build(&grid, CLASS);
        // From (0.5, 0.5) up to (0.5, 6.5) is the input's first stretch, then east to (39.5, 6.5).
        let points = [at(1, 1), at(1, 13), at(79, 13)];
        let pulled = string_pull(&map, &points);
        for w in pulled.windows(2) {
            assert!(segment_clear(&map, w[0], w[1]));
        }
        // (0.5, 0.5) sees (0.5, 6.5) but not the far end. Along the second stretch it sees
        // (1.5, 6.5) to (4.5, 6.5) (probes 1, 2 and 4 steps on), not (8.5, 6.5) (probe 8) nor, by
        // bisection, (6.5, 6.5) and (5.5, 6.5), whose segments touch the wall's top navcell (5, 5).
        assert_eq!(pulled, vec![at(1, 1), at(9, 13), at(79, 13)]);
    }

    proptest! {
        /// On random grids, the smoothed JPS path keeps its endpoints, uses only the centres of its
        /// navcells in order, has only clear segments, and is never longer.
        #[test]
        fn smoothed_paths_keep_path_navcells_in_order_are_clear_and_no_longer(seed in any::<u64>(), density in 0u64..35, si in 0u16..40, sj in 0u16..40, gi in 0u16..40, gj in 0u16..40) {
            let grid = random_grid(40, 40, seed, density);
            let map = PassMap::build(&grid, CLASS);
            let (start, goal) = (Navcell::new(si, sj), Navcell::new(gi, gj));
            prop_assume!(map.is_passable(start) && map.is_passable(goal));
            let mut scratch = SearchScratch::new();
            let mut path = Path::new();
            let outcome = find_path_jps(&map, &Accelerators::NONE, start, &Goal::navcell_center(gi, gj, Fixed::ONE), &SearchLimits::UNLIMITED, &mut scratch, &mut path);
            prop_assume!(outcome.status == PathStatus::Complete);
            let points: Vec<WorldPos> = path.waypoints().iter().map(|&c| centre(c)).collect();
            let pulled = string_pull(&map, &points);
            prop_assert_eq!(pulled.first(), points.first());
            prop_assert_eq!(pulled.last(), points.last());
            // Every kept point is a navcell centre of the grid path, in path order.
            let cells: Vec<WorldPos> = path.cells().iter().map(|&c| centre(c)).collect();
            let mut k = 0;
            for p in &pulled {
                let found = cells[k..].iter().position(|q| q == p);
                prop_assert!(found.is_some(), "smoothed point not on the path in order");
                k += found.unwrap_or(0);
            }
            for w in pulled.windows(2) {
                prop_assert!(segment_clear(&map, w[0], w[1]));
            }
            // Length, compared exactly: sum of floor square roots of raw squared lengths.
            let len = |ps: &[WorldPos]| -> u128 {
                ps.windows(2).map(|w| {
                    let dx = i128::from(w[1].x.to_bits() - w[0].x.to_bits());
                    let dz = i128::from(w[1].z.to_bits() - w[0].z.to_bits());
                    let n = (dx * dx + dz * dz) as u128;
                    // Floor square root by bisection (exact, integer only).
                    let (mut lo, mut hi) = (0u128, 1u128 << 64);
                    while lo < hi {
                        let mid = (lo + hi).div_ceil(2);
                        if mid * mid <= n { lo = mid } else { hi = mid - 1 }
                    }
                    lo
                }).sum()
            };
            prop_assert!(len(&pulled) <= len(&points) + pulled.len() as u128);
        }
    }
}
