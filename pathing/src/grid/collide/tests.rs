//! Unit tests of the movement-line tests, against navcell-by-navcell and wide-integer oracles.

use super::*;
use crate::test_support::{CLASS, grid_with_cell, random_grid, random_map};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestCaseError;

fn fx(bits: i64) -> Fixed {
    Fixed::from_bits(bits)
}

fn at(x: i64, z: i64) -> WorldPos {
    WorldPos::new(fx(x), fx(z))
}

/// `segment_clear` both ways, and the line test in `i128` (which only maps wider than 2^29 raw
/// units get), agree with the oracle on a long segment.
fn clear_both_ways_as_the_oracle(map: &PassMap, cell_raw: i64, from: WorldPos, to: WorldPos) -> Result<(), TestCaseError> {
    let oracle = oracle_touched(cell_raw, from, to).iter().all(|&(_, i, j)| oracle_passable(map, i, j));
    for (a, b) in [(from, to), (to, from)] {
        prop_assert_eq!(segment_clear(map, a, b), oracle);
        if let Some(span) = line_spans(map, a, b) {
            prop_assert_eq!(span.clear::<i128>(), Some(oracle));
        }
    }
    Ok(())
}

// ---- Oracles: independent of the walk and of the slab test. ----

/// Whether the closed segment `(x0, z0) → (x1, z1)` meets the closed box, by the separating axis
/// theorem: the boxes' x and z axes and the segment's normal.
fn sat_meets(x0: i128, z0: i128, x1: i128, z1: i128, [bx0, bx1, bz0, bz1]: [i128; 4]) -> bool {
    if x0.max(x1) < bx0 || x0.min(x1) > bx1 || z0.max(z1) < bz0 || z0.min(z1) > bz1 {
        return false;
    }
    let (dx, dz) = (x1 - x0, z1 - z0);
    let sides: Vec<i128> =
        [(bx0, bz0), (bx1, bz0), (bx0, bz1), (bx1, bz1)].iter().map(|&(cx, cz)| (dx * (cz - z0) - dz * (cx - x0)).signum()).collect();
    !(sides.iter().all(|&s| s > 0) || sides.iter().all(|&s| s < 0))
}

/// The smallest parameter at which the segment is in a box it meets, as `(num, den)`.
fn entry_param(x0: i128, z0: i128, x1: i128, z1: i128, [bx0, bx1, bz0, bz1]: [i128; 4]) -> (i128, i128) {
    let axis = |a: i128, b: i128, lo: i128, hi: i128| -> (i128, i128) {
        match (b - a).cmp(&0) {
            Ordering::Greater => ((lo - a).max(0), b - a),
            Ordering::Less => ((a - hi).max(0), a - b),
            Ordering::Equal => (0, 1),
        }
    };
    let (nx, dx) = axis(x0, x1, bx0, bx1);
    let (nz, dz) = axis(z0, z1, bz0, bz1);
    if nx * dz >= nz * dx { (nx, dx) } else { (nz, dz) }
}

/// Every navcell the closed segment touches (by [`sat_meets`]), with its entry parameter, sorted
/// by `(t, i, j)`.
fn oracle_touched(cell_raw: i64, from: WorldPos, to: WorldPos) -> Vec<((i128, i128), i128, i128)> {
    let c = i128::from(cell_raw);
    let (x0, z0, x1, z1) = (raw(from.x), raw(from.z), raw(to.x), raw(to.z));
    let mut out = Vec::new();
    for i in div_floor(x0.min(x1), c) - 1..=div_floor(x0.max(x1), c) + 1 {
        for j in div_floor(z0.min(z1), c) - 1..=div_floor(z0.max(z1), c) + 1 {
            let cell = [i * c, (i + 1) * c, j * c, (j + 1) * c];
            if sat_meets(x0, z0, x1, z1, cell) {
                out.push((entry_param(x0, z0, x1, z1, cell), i, j));
            }
        }
    }
    out.sort_by(|a, b| (a.0.0 * b.0.1).cmp(&(b.0.0 * a.0.1)).then((a.1, a.2).cmp(&(b.1, b.2))));
    out
}

fn oracle_passable(map: &PassMap, i: i128, j: i128) -> bool {
    i >= 0 && j >= 0 && i < i128::from(map.width()) && j < i128::from(map.height()) && map.is_passable(Navcell::new(i as u16, j as u16))
}

/// The first blocked navcell by the oracle, with its entry parameter.
fn oracle_first_blocked(map: &PassMap, from: WorldPos, to: WorldPos) -> Option<((i128, i128), i128, i128)> {
    let cell_raw = map.cell_size().to_bits();
    oracle_touched(cell_raw, from, to).into_iter().find(|&(_, i, j)| !oracle_passable(map, i, j))
}

/// The walk's full output (never stopped early), as `(t, i, j)`.
fn walk_all(cell_raw: i64, from: WorldPos, to: WorldPos) -> Vec<((i128, i128), i128, i128)> {
    let mut out = Vec::new();
    walk(fx(cell_raw), from, to, |t, i, j| {
        out.push(((t.num, t.den), i, j));
        true
    });
    out
}

/// A coordinate strategy: often on grid lines, half-cells or quarter-cells (exact corners and
/// centres), otherwise anywhere, within a couple of navcells around a `n`-navcell grid.
fn coord(n: u32, cell_raw: i64) -> impl Strategy<Value = i64> {
    let lo = -2 * cell_raw;
    let hi = (i64::from(n) + 2) * cell_raw;
    prop_oneof![
        (-8i64..(i64::from(n) + 2) * 4).prop_map(move |q| q * cell_raw / 4),
        (-2i64..i64::from(n) + 2).prop_map(move |k| k * cell_raw),
        lo..=hi,
    ]
}

/// Navcell sizes: tiny ones put every raw position near a grid line, 1 m is the usual one.
fn cell_size() -> impl Strategy<Value = i64> {
    prop_oneof![1i64..=5, Just(1 << 16), (1i64 << 12)..(1 << 17)]
}

/// A random map and a segment on and around it.
fn map_and_segment() -> impl Strategy<Value = (PassMap, i64, WorldPos, WorldPos)> {
    (1u32..10, 1u32..10, any::<u64>(), 0u64..60, cell_size()).prop_flat_map(|(w, h, seed, density, cell_raw)| {
        (coord(w, cell_raw), coord(h, cell_raw), coord(w, cell_raw), coord(h, cell_raw))
            .prop_map(move |(x0, z0, x1, z1)| (random_map(w, h, seed, density, cell_raw), cell_raw, at(x0, z0), at(x1, z1)))
    })
}

// ---- Data-driven examples: one helper draws what the walk touched. ----

/// Draws the grid with the navcells the segment touches (`o` passable, `X` blocked), one row of
/// border around it, then the answers of the three grid functions.
#[track_caller]
fn check(rows: &[&str], from: (i64, i64), to: (i64, i64), expected: &str) {
    let cell = 1 << 16;
    let grid = grid_with_cell(rows, fx(cell));
    let map = PassMap::build(&grid, CLASS);
    let (from, to) = (at(from.0, from.1), at(to.0, to.1));
    let touched: Vec<(i128, i128)> = walk_all(cell, from, to).into_iter().map(|(_, i, j)| (i, j)).collect();
    let (w, h) = (i128::from(map.width()), i128::from(map.height()));
    let mut out = String::new();
    for j in (-1..=h).rev() {
        for i in -1..=w {
            let on = touched.contains(&(i, j));
            let free = oracle_passable(&map, i, j);
            out.push(match (on, free) {
                (true, true) => 'o',
                (true, false) => 'X',
                (false, true) => '.',
                (false, false) => '#',
            });
        }
        out.push('\n');
    }
    let stop = furthest_clear_point(&map, from, to);
    out.push_str(&format!(
        "clear {} first {:?} stop ({}, {})\n",
        segment_clear(&map, from, to),
        first_blocked(&map, from, to).map(|c| (c.i, c.j)),
        stop.x.to_bits(),
        stop.z.to_bits()
    ));
    assert_eq!(out, expected, "\n{out}");
}

const M: i64 = 1 << 16;

#[test]
fn diagonal_through_a_corner_touches_all_four() {
    // Centre of (0, 0) to centre of (1, 1): through the corner (1, 1), touching (1, 0) and (0, 1).
    check(
        &["...", "...", "..."],
        (M / 2, M / 2),
        (3 * M / 2, 3 * M / 2),
        "#####\n#...#\n#oo.#\n#oo.#\n#####\nclear true first None stop (98304, 98304)\n",
    );
    check(
        &["...", ".#.", "..."],
        (M / 2, 3 * M / 2),
        (3 * M / 2, 5 * M / 2),
        // Corner cut past the blocked middle: (1, 1) is touched at the corner.
        "#####\n#oo.#\n#oX.#\n#...#\n#####\nclear false first Some((1, 1)) stop (65535, 131071)\n",
    );
}

#[test]
fn segment_along_a_grid_line_touches_both_sides() {
    // Along z = 1 m from x = 0.5 to x = 2.5: rows 0 and 1 both touched.
    check(
        &["...", "..#", "..."],
        (M / 2, M),
        (5 * M / 2, M),
        "#####\n#...#\n#ooX#\n#ooo#\n#####\nclear false first Some((2, 1)) stop (131071, 65536)\n",
    );
    // Along the west edge of the grid: the off-grid column -1 is touched from the start.
    check(&["..", ".."], (0, M / 2), (0, 3 * M / 2), "####\nXo.#\nXo.#\n####\nclear false first Some((65535, 0)) stop (0, 32768)\n");
}

#[test]
fn leaving_the_grid_is_blocked_at_its_edge() {
    // Heading east out of a 3-wide grid: column 3 is first touched where x = 3 m.
    check(
        &["...", "...", "..."],
        (M / 2, M / 2 + 7),
        (4 * M, M / 2 + 7),
        "#####\n#...#\n#...#\n#oooX\n#####\nclear false first Some((3, 0)) stop (196607, 32775)\n",
    );
    // Heading south-west: the corner (0, 0) of the grid touches (-1, -1), (-1, 0) and (0, -1) at
    // once; the tie goes to the smallest column, then row: (-1, -1).
    check(&["..", ".."], (M, M), (-M, -M), "####\n#oo#\nXoo#\nXX##\nclear false first Some((65535, 65535)) stop (1, 1)\n");
}

#[test]
fn a_start_on_a_blocked_edge_stays_put() {
    // The start is on the west edge of the blocked (1, 0): it touches it at t = 0.
    check(&[".#."], (M, M / 2), (0, M / 2), "#####\nXoX.#\n#####\nclear false first Some((1, 0)) stop (65536, 32768)\n");
    // Zero-length step inside a passable navcell.
    check(&[".#."], (M / 4, M / 2), (M / 4, M / 2), "#####\n#o#.#\n#####\nclear true first None stop (16384, 32768)\n");
}

/// Rounding can move the end of a step across a navcell corner that the exact segment missed;
/// `furthest_clear_point` must then pull back again rather than return a step that is not clear.
/// Here (navcells of 2 raw units, so that a raw unit is a large fraction of a navcell) the
/// segment from (1, 5) to (3, 0) first touches a blocked navcell when it leaves the grid at
/// (3, 0). The point just before that, rounded toward the start, is (2, 1): on the east edge of the
/// blocked navcell (0, 0), which the exact segment passes well east of. The step to (1, 3), the
/// rounded point just before the shorter step first touches (0, 0), is clear.
#[test]
fn furthest_clear_point_pulls_back_when_rounding_crosses_a_corner() {
    let grid = grid_with_cell(&["...", "...", "#.."], fx(2));
    let map = PassMap::build(&grid, CLASS);
    let (from, to) = (at(1, 5), at(3, 0));
    assert_eq!(first_blocked(&map, from, to), Some(Navcell::new(1, u16::MAX)));
    assert!(!segment_clear(&map, from, at(2, 1)), "the first rounded answer is not a legal step");
    let stop = furthest_clear_point(&map, from, to);
    assert_eq!(stop, at(1, 3));
    assert!(segment_clear(&map, from, stop));
}

// ---- Properties against the oracles. ----

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The walk visits exactly the navcells the closed segment meets, each once, with its exact
    /// entry parameter, in non-decreasing order of it.
    #[test]
    fn walk_visits_every_touched_cell_once_in_entry_order((map, cell_raw, from, to) in map_and_segment()) {
        let _ = map;
        let walked = walk_all(cell_raw, from, to);
        for pair in walked.windows(2) {
            let ((n0, d0), (n1, d1)) = (pair[0].0, pair[1].0);
            prop_assert!(n0 * d1 <= n1 * d0, "parameters decrease: {:?}", walked);
        }
        let mut sorted = walked.clone();
        sorted.sort_by(|a, b| (a.0.0 * b.0.1).cmp(&(b.0.0 * a.0.1)).then((a.1, a.2).cmp(&(b.1, b.2))));
        let oracle = oracle_touched(cell_raw, from, to);
        prop_assert_eq!(sorted.len(), oracle.len(), "walk {:?}\noracle {:?}", sorted, oracle);
        for (w, o) in sorted.iter().zip(&oracle) {
            prop_assert_eq!((w.1, w.2), (o.1, o.2));
            // Same parameter, compared as fractions.
            prop_assert_eq!(w.0.0 * o.0.1, o.0.0 * w.0.1, "t of ({}, {})", w.1, w.2);
        }
    }

    /// `segment_clear` is "every navcell the oracle says is touched is passable", and agrees with
    /// `first_blocked`.
    #[test]
    fn segment_clear_matches_the_exact_cell_oracle((map, cell_raw, from, to) in map_and_segment()) {
        let oracle = oracle_touched(cell_raw, from, to).iter().all(|&(_, i, j)| oracle_passable(&map, i, j));
        prop_assert_eq!(segment_clear(&map, from, to), oracle);
        prop_assert_eq!(first_blocked(&map, from, to).is_none(), oracle);
        // The closed segment touches the same navcells whichever way it is walked.
        prop_assert_eq!(segment_clear(&map, to, from), oracle);
    }

    /// `small_box_clear` says `true` only when the segment is clear by the oracle and the navcell
    /// holding `from` (by floor division) is a passable navcell of the grid; and it does say `true`
    /// for a short step whose bounding box touches only passable navcells of the grid.
    #[test]
    fn small_box_clear_promises_a_clear_step_from_a_passable_navcell((map, cell_raw, from, to) in map_and_segment()) {
        let oracle = oracle_touched(cell_raw, from, to).iter().all(|&(_, i, j)| oracle_passable(&map, i, j));
        let c = i128::from(cell_raw);
        let (i, j) = (div_floor(raw(from.x), c), div_floor(raw(from.z), c));
        let box_cells = |a: i128, b: i128| {
            let (lo, hi) = (a.min(b), a.max(b));
            (div_floor(lo, c) - i128::from(lo.rem_euclid(c) == 0), div_floor(hi, c))
        };
        let ((i0, i1), (j0, j1)) = (box_cells(raw(from.x), raw(to.x)), box_cells(raw(from.z), raw(to.z)));
        let box_open = i1 - i0 <= 3 && j1 - j0 <= 3 && (i0..=i1).all(|i| (j0..=j1).all(|j| oracle_passable(&map, i, j)));
        let said = small_box_clear(&map, from, to);
        prop_assert_eq!(said, box_open);
        if said {
            prop_assert!(oracle);
            prop_assert!(oracle_passable(&map, i, j));
        }
    }

    /// Long segments over wide, mostly open maps (runs of passable navcells across several words
    /// of the bit planes, in rows and in columns) agree with the oracle too, both ways.
    #[test]
    fn long_segments_over_wide_maps_match_the_oracle(
        (w, h) in prop_oneof![(60u32..200, 1u32..12), (1u32..12, 60u32..200)],
        seed in any::<u64>(),
        density in 0u64..4,
        cell_raw in prop_oneof![Just(1i64 << 16), (1i64 << 12)..(1 << 17), 1i64..=5],
        ends in any::<[u64; 4]>(),
    ) {
        let map = random_map(w, h, seed, density, cell_raw);
        // Ends anywhere on the map, a quarter of them on grid lines.
        let pick = |r: u64, n: u32| {
            let span = i64::from(n) * cell_raw;
            let v = (r >> 2) as i64 % (span + 1);
            if r & 3 == 0 { v / cell_raw * cell_raw } else { v }
        };
        let (from, to) = (at(pick(ends[0], w), pick(ends[1], h)), at(pick(ends[2], w), pick(ends[3], h)));
        clear_both_ways_as_the_oracle(&map, cell_raw, from, to)?;
    }

    /// Long segments in every direction over wide square maps with few obstacles, where many
    /// 8 × 8 blocks are open and the row-by-row test skips them a block row at a time, agree with
    /// the oracle; also after navcells are blocked in a copy (`PassMap::block`), which must keep
    /// the open-block bits current.
    #[test]
    fn long_segments_across_open_blocks_match_the_oracle(
        size in 30u32..120,
        seed in any::<u64>(),
        density in 0u64..3,
        cell_raw in prop_oneof![Just(1i64 << 16), (1i64 << 12)..(1 << 17)],
        ends in any::<[u64; 4]>(),
        stamps in proptest::collection::vec(any::<(u16, u16)>(), 0..6),
    ) {
        let mut map = random_map(size, size, seed, density, cell_raw);
        for &(i, j) in &stamps {
            map.block(Navcell::new(i % size as u16, j % size as u16));
        }
        prop_assert_eq!(map.check_invariants(), Ok(()));
        let pick = |r: u64| {
            let span = i64::from(size) * cell_raw;
            let v = (r >> 2) as i64 % (span + 1);
            if r & 3 == 0 { v / cell_raw * cell_raw } else { v }
        };
        let (from, to) = (at(pick(ends[0]), pick(ends[1])), at(pick(ends[2]), pick(ends[3])));
        clear_both_ways_as_the_oracle(&map, cell_raw, from, to)?;
    }

    /// `first_blocked` is the touched blocked navcell with the smallest entry parameter, ties to
    /// the smallest column, then row.
    #[test]
    fn first_blocked_is_the_touched_blocked_cell_with_the_smallest_entry((map, _cell_raw, from, to) in map_and_segment()) {
        let expected = oracle_first_blocked(&map, from, to).map(|(_, i, j)| Navcell::new(report_index(i), report_index(j)));
        prop_assert_eq!(first_blocked(&map, from, to), expected);
        if let Some(cell) = expected {
            prop_assert!(!map.is_passable(cell));
        }
    }

    /// `furthest_clear_point` is `to` when clear, `from` when blocked at the start, and otherwise a
    /// point the unit may step to: the step to it is clear, it is strictly before the first
    /// block along the segment, and it is within the segment's bounding box.
    #[test]
    fn furthest_clear_point_stays_clear_and_short_of_the_first_block((map, _cell_raw, from, to) in map_and_segment()) {
        let stop = furthest_clear_point(&map, from, to);
        match oracle_first_blocked(&map, from, to) {
            None => prop_assert_eq!(stop, to),
            Some(((0, _), ..)) => prop_assert_eq!(stop, from),
            Some(((num, den), ..)) => {
                prop_assert!(segment_clear(&map, from, stop), "step to {:?} is not clear", stop);
                let touched = oracle_touched(map.cell_size().to_bits(), from, stop);
                prop_assert!(touched.iter().all(|&(_, i, j)| oracle_passable(&map, i, j)));
                let (x0, z0, x1, z1) = (raw(from.x), raw(from.z), raw(to.x), raw(to.z));
                let (sx, sz) = (raw(stop.x), raw(stop.z));
                prop_assert!(x0.min(x1) <= sx && sx <= x0.max(x1) && z0.min(z1) <= sz && sz <= z0.max(z1));
                // Strictly before Q = from + t·d along d: (stop - from)·d < t·|d|².
                let (dx, dz) = (x1 - x0, z1 - z0);
                let along = (sx - x0) * dx + (sz - z0) * dz;
                prop_assert!(along * den < num * (dx * dx + dz * dz));
            }
        }
    }
}

/// How often the first rounded answer of `furthest_clear_point` is already clear, and that it is
/// then within one raw unit of the exact first-block point on each axis: the pull-back loop is
/// a rare safety net, not the rule.
#[test]
fn furthest_clear_point_is_within_one_raw_unit_of_the_block_almost_always() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut blocked, mut near) = (0u32, 0u32);
    for _ in 0..20000 {
        let (map, _cell_raw, from, to) = map_and_segment().new_tree(&mut runner).unwrap().current();
        let Some(((num, den), ..)) = oracle_first_blocked(&map, from, to) else { continue };
        if num == 0 {
            continue;
        }
        blocked += 1;
        let stop = furthest_clear_point(&map, from, to);
        let (x0, z0, x1, z1) = (raw(from.x), raw(from.z), raw(to.x), raw(to.z));
        // |stop - Q| < 1 raw unit per axis, i.e. |stop·den - (from·den + d·num)| < den.
        let qx = x0 * den + (x1 - x0) * num;
        let qz = z0 * den + (z1 - z0) * num;
        if (raw(stop.x) * den - qx).abs() <= den && (raw(stop.z) * den - qz).abs() <= den {
            near += 1;
        }
    }
    assert!(blocked > 1000, "too few blocked segments ({blocked}) to say anything");
    assert!(near * 100 >= blocked * 95, "only {near} of {blocked} answers were next to the block");
}

#[test]
fn diagonal_centre_steps_follow_the_no_corner_cutting_rule() {
    for seed in 0..40u64 {
        let (w, h) = (9u32, 7u32);
        let map = PassMap::build(&random_grid(w, h, seed, 30), CLASS);
        let ok = |i: i64, j: i64| oracle_passable(&map, i128::from(i), i128::from(j));
        let centre = |i: i64, j: i64| at(i * M + M / 2, j * M + M / 2);
        for i in -1..=i64::from(w) {
            for j in -1..=i64::from(h) {
                for (di, dj) in [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)] {
                    let legal = ok(i, j) && ok(i + di, j + dj) && ok(i + di, j) && ok(i, j + dj);
                    assert_eq!(segment_clear(&map, centre(i, j), centre(i + di, j + dj)), legal, "seed {seed} ({i}, {j}) + ({di}, {dj})");
                }
            }
        }
    }
}

#[test]
fn extreme_inputs_neither_panic_nor_overflow() {
    let map = PassMap::build(&random_grid(5, 5, 3, 0), CLASS);
    let extremes = [i64::MIN, i64::MIN + 1, -1, 0, 1, M * 5, i64::MAX - 1, i64::MAX];
    let inside = at(2 * M + 5, 2 * M + 9);
    for &x in &extremes {
        for &z in &extremes {
            let far = at(x, z);
            // A clear step ends on the closed grid; starting off it is blocked at once.
            let on_grid = (0..=5 * M).contains(&x) && (0..=5 * M).contains(&z);
            assert!(!segment_clear(&map, inside, far) || on_grid, "{far:?}");
            assert_eq!(segment_clear(&map, far, inside), first_blocked(&map, far, inside).is_none());
            assert!(!segment_clear(&map, far, inside) || on_grid, "{far:?}");
            let stop = furthest_clear_point(&map, inside, far);
            assert!(segment_clear(&map, inside, stop), "{far:?} stop {stop:?}");
            assert_eq!(furthest_clear_point(&map, far, far), far);
            for &half in &[i64::MIN, -1, 0, M, i64::MAX] {
                for &expand in &[i64::MIN, 0, M, i64::MAX] {
                    let square = UnitSquare { center: at(x, z), half: fx(half) };
                    let total = i128::from(half) + i128::from(expand);
                    let hit = segment_hits_square(inside, far, &square, fx(expand));
                    let (x0, z0, x1, z1) = (raw(inside.x), raw(inside.z), raw(far.x), raw(far.z));
                    let expected = total >= 0 && {
                        let b = [i128::from(x) - total, i128::from(x) + total, i128::from(z) - total, i128::from(z) + total];
                        !in_box(inside, b) && (in_box(far, b) || sat_meets_wide(x0, z0, x1, z1, b))
                    };
                    assert_eq!(hit, expected, "square {square:?} expand {expand} to {far:?}");
                }
            }
        }
    }
}

/// [`sat_meets`] for inputs whose products would overflow `i128`: the box is clipped to the
/// segment's bounding box (which changes nothing) and the side tests compare the products in
/// 256-bit form.
fn sat_meets_wide(x0: i128, z0: i128, x1: i128, z1: i128, [bx0, bx1, bz0, bz1]: [i128; 4]) -> bool {
    if x0.max(x1) < bx0 || x0.min(x1) > bx1 || z0.max(z1) < bz0 || z0.min(z1) > bz1 {
        return false;
    }
    let clip = [bx0.max(x0.min(x1)), bx1.min(x0.max(x1)), bz0.max(z0.min(z1)), bz1.min(z0.max(z1))];
    let (dx, dz) = (x1 - x0, z1 - z0);
    let corners = [(clip[0], clip[2]), (clip[1], clip[2]), (clip[0], clip[3]), (clip[1], clip[3])];
    let sides: Vec<Ordering> = corners.iter().map(|&(cx, cz)| wide_cmp_products(dx, cz - z0, dz, cx - x0)).collect();
    !(sides.iter().all(|&s| s == Ordering::Greater) || sides.iter().all(|&s| s == Ordering::Less))
}

/// Compares `a·b` with `c·d` for values below 2^65 in magnitude, exactly, by splitting each
/// product into 64-bit limbs of magnitude plus a sign.
fn wide_cmp_products(a: i128, b: i128, c: i128, d: i128) -> Ordering {
    fn wide(a: i128, b: i128) -> (i8, u128, u128) {
        let sign = (a.signum() * b.signum()) as i8;
        let (a, b) = (a.unsigned_abs(), b.unsigned_abs());
        let (a_hi, a_lo) = (a >> 64, a & u128::from(u64::MAX));
        let (b_hi, b_lo) = (b >> 64, b & u128::from(u64::MAX));
        let lo = a_lo * b_lo;
        let mid = a_hi * b_lo + a_lo * b_hi;
        let hi = a_hi * b_hi + (mid >> 64);
        let (lo, carry) = lo.overflowing_add((mid & u128::from(u64::MAX)) << 64);
        (sign, hi + u128::from(carry), lo)
    }
    let (s1, h1, l1) = wide(a, b);
    let (s2, h2, l2) = wide(c, d);
    let mag = |s: i8, h: u128, l: u128| (s, if s < 0 { (u128::MAX - h, u128::MAX - l) } else { (h, l) });
    match s1.cmp(&s2) {
        Ordering::Equal if s1 == 0 => Ordering::Equal,
        Ordering::Equal => {
            let (_, m1) = mag(s1, h1, l1);
            let (_, m2) = mag(s2, h2, l2);
            m1.cmp(&m2)
        }
        other => other,
    }
}

// ---- Unit squares. ----

fn square(cx: i64, cz: i64, half: i64) -> UnitSquare {
    UnitSquare { center: at(cx, cz), half: fx(half) }
}

#[test]
fn start_inside_or_on_the_edge_never_collides() {
    let sq = square(0, 0, M);
    let expand = fx(M / 2);
    // Inside, walking through and out the far side.
    assert!(!segment_hits_square(at(0, 0), at(5 * M, 0), &sq, expand));
    // On the expanded edge (x = 1.5 m), walking straight in.
    assert!(!segment_hits_square(at(3 * M / 2, 0), at(0, 0), &sq, expand));
    // On the expanded corner, walking along the edge.
    assert!(!segment_hits_square(at(3 * M / 2, 3 * M / 2), at(-3 * M / 2, 3 * M / 2), &sq, expand));
    assert!(point_in_square(at(3 * M / 2, 3 * M / 2), &sq, expand));
    assert!(!point_in_square(at(3 * M / 2 + 1, 0), &sq, expand));
}

#[test]
fn end_on_the_edge_collides() {
    let sq = square(0, 0, M);
    assert!(segment_hits_square(at(3 * M, 0), at(M, 0), &sq, Fixed::ZERO));
    assert!(segment_hits_square(at(3 * M, 3 * M), at(M, M), &sq, Fixed::ZERO), "end on a corner");
    assert!(!segment_hits_square(at(3 * M, 0), at(M + 1, 0), &sq, Fixed::ZERO), "end one raw unit short");
}

#[test]
fn grazing_and_sliding_count_as_meeting() {
    let sq = square(0, 0, M);
    // Along the north edge, from beyond one end to beyond the other.
    assert!(segment_hits_square(at(-3 * M, M), at(3 * M, M), &sq, Fixed::ZERO));
    // Through the north-east corner only.
    assert!(segment_hits_square(at(0, 2 * M), at(2 * M, 0), &sq, Fixed::ZERO));
    // One raw unit outside that corner: misses.
    assert!(!segment_hits_square(at(1, 2 * M), at(2 * M + 1, 1), &sq, Fixed::ZERO));
    // Along the line of an edge but beyond the square.
    assert!(!segment_hits_square(at(2 * M, M), at(3 * M, M), &sq, Fixed::ZERO));
}

#[test]
fn negative_expanded_half_is_an_empty_square_and_zero_is_a_point() {
    let sq = square(0, 0, M);
    assert!(!point_in_square(at(0, 0), &sq, fx(-M - 1)));
    assert!(!segment_hits_square(at(-M, 0), at(M, 0), &sq, fx(-M - 1)));
    assert!(point_in_square(at(0, 0), &sq, fx(-M)));
    assert!(segment_hits_square(at(-M, 0), at(M, 0), &sq, fx(-M)), "through the point");
    assert!(segment_hits_square(at(-M, -M), at(0, 0), &sq, fx(-M)), "onto the point");
    assert!(!segment_hits_square(at(-M, 1), at(M, 1), &sq, fx(-M)), "beside the point");
}

fn square_case() -> impl Strategy<Value = (WorldPos, WorldPos, UnitSquare, Fixed)> {
    let c = || prop_oneof![(-12i64..12).prop_map(|q| q * M / 4), -3 * M..3 * M];
    (
        c(),
        c(),
        c(),
        c(),
        c(),
        c(),
        prop_oneof![(0i64..8).prop_map(|q| q * M / 4), 0..2 * M],
        prop_oneof![(-2i64..4).prop_map(|q| q * M / 4), -M..M],
    )
        .prop_map(|(x0, z0, x1, z1, cx, cz, half, expand)| (at(x0, z0), at(x1, z1), square(cx, cz, half), fx(expand)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// `segment_hits_square` is the three rules of its documentation over the separating-axis oracle.
    #[test]
    fn segment_hits_square_matches_the_oracle((from, to, sq, expand) in square_case()) {
        let total = raw(sq.half) + raw(expand);
        let (cx, cz) = (raw(sq.center.x), raw(sq.center.z));
        let b = [cx - total, cx + total, cz - total, cz + total];
        let inside = |p: WorldPos| total >= 0 && b[0] <= raw(p.x) && raw(p.x) <= b[1] && b[2] <= raw(p.z) && raw(p.z) <= b[3];
        prop_assert_eq!(point_in_square(from, &sq, expand), inside(from));
        let expected = if total < 0 || inside(from) {
            false
        } else {
            inside(to) || sat_meets(raw(from.x), raw(from.z), raw(to.x), raw(to.z), b)
        };
        prop_assert_eq!(segment_hits_square(from, to, &sq, expand), expected);
        // A unit outside never ends a non-colliding step inside or on the edge.
        if !segment_hits_square(from, to, &sq, expand) && !inside(from) {
            prop_assert!(!inside(to));
        }
    }
}
