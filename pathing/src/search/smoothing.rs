//! String pulling (docs/pathfinding-rules.md, "Turning a path into waypoints"): a grid path's turning
//! points reduced to the points where a unit really has to turn.
//!
//! From an anchor (the first point), the path is followed forward while the anchor still sees the
//! next point: the straight segment between them touches only passable navcells
//! ([`crate::local::collide::segment_clear`], closed navcells, so the result never cuts a corner the grid
//! forbids). The last point it sees before the first one it does not becomes the new anchor, until
//! the last point. The grid pathfinder this comes from samples every half navcell; here the test is exact, so a
//! smoothed path is legal by construction. (Searching for the furthest visible point over the whole
//! rest of the path, as that pathfinder's description could also mean, costs a quadratic number of long
//! segment tests on long paths; the forward walk stops at the first occlusion.)
//!
//! Every kept point is one of the input points, in order, and the first and last are always kept;
//! each segment of the output is clear whenever the input's segments were. Cost: at most `2n` exact
//! segment tests for `n` turning points, each as long as the stretch it covers.

use crate::geometry::WorldPos;
use crate::grid::pass_map::PassMap;
use crate::local::collide::segment_clear;

/// The string-pulled form of `points` on `map` (see the module documentation). Paths of fewer than
/// three points are returned unchanged.
pub fn string_pull(map: &PassMap, points: &[WorldPos]) -> Vec<WorldPos> {
    let Some(&first) = points.first() else { return Vec::new() };
    if points.len() < 3 {
        return points.to_vec();
    }
    let mut out = vec![first];
    let mut anchor = 0;
    while anchor < points.len() - 1 {
        // Walk forward while the anchor sees the next point; the point right after the anchor is
        // always taken (the input's own segment), so progress is guaranteed.
        let mut next = anchor + 1;
        while next + 1 < points.len() && segment_clear(map, points[anchor], points[next + 1]) {
            next += 1;
        }
        out.push(points[next]);
        anchor = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Fixed;
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

    proptest! {
        /// On random grids, the smoothed JPS path keeps its endpoints, uses only its points in
        /// order, has only clear segments, and is never longer.
        #[test]
        fn smoothed_paths_are_legal_subsequences_and_no_longer(seed in any::<u64>(), density in 0u64..35, si in 0u16..40, sj in 0u16..40, gi in 0u16..40, gj in 0u16..40) {
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
            let mut at = 0;
            for p in &pulled {
                let found = points[at..].iter().position(|q| q == p);
                prop_assert!(found.is_some(), "smoothed point not in order");
                at += found.unwrap_or(0);
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
