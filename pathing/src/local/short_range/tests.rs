//! Unit tests of the short-range pathfinder: its edges against reference builds, answers against an
//! oracle, and scenes of units, gaps and goals.

use super::*;
use crate::geometry::Vec2;
use crate::grid::collide::{segment_clear, segment_hits_square};
use crate::search::goal::Square;
use crate::test_support::{CLASS, map_from, random_grid, random_map};
use proptest::prelude::*;

const M: i64 = 1 << 16;
const UNLIMITED: u32 = u32::MAX;

fn fx(bits: i64) -> Fixed {
    Fixed::from_bits(bits)
}

fn at(x: i64, z: i64) -> WorldPos {
    WorldPos::new(fx(x), fx(z))
}

/// A point in metres given in sixteenths (so navcell corners, centres and `EDGE_DELTA` steps
/// are all exact).
fn m16(x: i64, z: i64) -> WorldPos {
    at(x * M / 16, z * M / 16)
}

fn open_map(w: u32, h: u32) -> PassMap {
    PassMap::build(&random_grid(w, h, 0, 0), CLASS)
}

fn square(cx: i64, cz: i64, half: i64) -> UnitSquare {
    UnitSquare { center: at(cx, cz), half: fx(half) }
}

fn query<'a>(start: WorldPos, goal: &'a Goal, range_m: i64, clearance: i64, squares: &'a [UnitSquare]) -> ShortQuery<'a> {
    ShortQuery { start, goal, range: Fixed::from_num(range_m), clearance: fx(clearance), squares, node_budget: UNLIMITED }
}

fn run(map: &PassMap, q: &ShortQuery) -> (ShortOutcome, Vec<WorldPos>) {
    let mut scratch = ShortScratch::new();
    let mut out = Vec::new();
    let outcome = find_short_path(map, q, &mut scratch, &mut out);
    (outcome, out)
}

fn length(a: WorldPos, b: WorldPos) -> u64 {
    floor_length(raw(b.x) - raw(a.x), raw(b.z) - raw(a.z))
}

/// The cost of a path as the search counts it.
fn cost(start: WorldPos, path: &[WorldPos]) -> u64 {
    let mut from = start;
    let mut total = 0;
    for &p in path {
        total += length(from, p);
        from = p;
    }
    total
}

/// Whether some closed navcell containing `p` is passable (the condition under which the
/// terrain edges and `segment_clear` agree).
fn touches_passable(map: &PassMap, p: WorldPos) -> bool {
    let c = raw(map.cell_size());
    let cells = |v: i128| {
        let k = div_floor(v, c);
        if v.rem_euclid(c) == 0 { [k - 1, k] } else { [k, k] }
    };
    cells(raw(p.x)).iter().any(|&i| cells(raw(p.z)).iter().any(|&j| map.passable_padded(i as i64, j as i64)))
}

/// What every answer must satisfy: waypoints in the box, every segment missing every expanded
/// square and (from a start in a passable navcell, and always after the first waypoint)
/// passing `segment_clear`, and a complete path ending in the goal.
#[track_caller]
fn check_answer(map: &PassMap, q: &ShortQuery, outcome: &ShortOutcome, path: &[WorldPos]) {
    if outcome.status == ShortStatus::Complete {
        match path.last() {
            Some(&last) => assert!(q.goal.contains_point(last), "complete path ends at {last:?}, outside the goal"),
            None => assert!(q.goal.contains_point(q.start), "empty complete path from outside the goal"),
        }
    }
    if path.is_empty() {
        return;
    }
    let frame = Frame::new(map, q.start, q.range).expect("a path means the start is on the grid");
    let mut from = q.start;
    for (n, &p) in path.iter().enumerate() {
        assert!(frame.contains(raw(p.x), raw(p.z)), "waypoint {p:?} outside the box");
        if n > 0 || touches_passable(map, q.start) {
            assert!(segment_clear(map, from, p), "segment {from:?} -> {p:?} is not clear");
        }
        for s in q.squares {
            assert!(!segment_hits_square(from, p, s, q.clearance), "segment {from:?} -> {p:?} hits {s:?}");
        }
        from = p;
    }
}

// ---- The terrain edges are the grid. ----

#[test]
fn edges_of_one_blocked_navcell() {
    let map = map_from(&["...", ".#.", "..."]);
    let frame = Frame::new(&map, at(3 * M / 2, 3 * M / 2), Fixed::from_num(10)).unwrap();
    let mut scratch = ShortScratch::new();
    scratch.build_edges(&map, &frame);
    let e = |at: i64, lo: i64, hi: i64| Edge { at: at * M, lo: lo * M, hi: hi * M };
    // The grid boundary faces inwards; the blocked navcell (1, 1) faces outwards.
    assert_eq!(scratch.edges[EAST], vec![e(1, 1, 2), e(3, 0, 3)]);
    assert_eq!(scratch.edges[WEST], vec![e(0, 0, 3), e(2, 1, 2)]);
    assert_eq!(scratch.edges[NORTH], vec![e(1, 1, 2), e(3, 0, 3)]);
    assert_eq!(scratch.edges[SOUTH], vec![e(0, 0, 3), e(2, 1, 2)]);
    // Four convex corners, each pushed diagonally away from the blocked navcell.
    scratch.build_vertices(&map, &query(at(M / 2, M / 2), &Goal::point(at(0, 0)).unwrap(), 10, 0, &[]), &frame, 100);
    let corners: Vec<(i64, i64)> = scratch.vertices[2..].iter().map(|v| (v.x, v.z)).collect();
    let d = M / 16;
    assert_eq!(corners, vec![(M - d, M - d), (2 * M + d, M - d), (M - d, 2 * M + d), (2 * M + d, 2 * M + d)]);
}

#[test]
fn edges_merge_into_maximal_runs_and_stop_at_the_box() {
    let map = map_from(&["#....", "#.##.", "#.##.", "#...."]);
    // A box from x = 0.5 to 4.5: navcell columns 0..=4 can be touched, rows all.
    let frame = Frame::new(&map, at(5 * M / 2, 2 * M), fx(2 * M)).unwrap();
    assert_eq!((frame.i0, frame.i1, frame.j0, frame.j1), (0, 4, -1, 4));
    let mut scratch = ShortScratch::new();
    scratch.build_edges(&map, &frame);
    let e = |at: i64, lo: i64, hi: i64| Edge { at: at * M, lo: lo * M, hi: hi * M };
    // Blocked column 0 gives one edge at x = 1 the whole height, its impassable side west;
    // the block in the middle gives one edge per side; the grid's south and north
    // boundaries give one edge each from x = 1 (column 0 is blocked on both sides there) to
    // x = 5, beyond the box, since runs are maximal over the navcells a segment can touch.
    assert_eq!(scratch.edges[WEST], vec![e(1, 0, 4), e(4, 1, 3)]);
    assert_eq!(scratch.edges[EAST], vec![e(2, 1, 3)]);
    assert_eq!(scratch.edges[NORTH], vec![e(1, 2, 4), e(4, 1, 5)]);
    assert_eq!(scratch.edges[SOUTH], vec![e(0, 1, 5), e(3, 2, 4)]);
}

/// Coordinates on and around a `n`-navcell axis: on grid lines, at quarter navcells, or
/// anywhere.
fn coord(n: u32, cell_raw: i64) -> impl Strategy<Value = i64> {
    let hi = i64::from(n) * cell_raw;
    prop_oneof![
        (0i64..=i64::from(n) * 4).prop_map(move |q| q * cell_raw / 4),
        (0i64..=i64::from(n)).prop_map(move |k| k * cell_raw),
        0..=hi,
    ]
}

fn cell_size() -> impl Strategy<Value = i64> {
    prop_oneof![1i64..=5, Just(M), (1i64 << 12)..(1 << 17)]
}

/// A random map, a box on it, and a segment in the box.
#[allow(clippy::type_complexity)]
fn map_box_segment() -> impl Strategy<Value = (PassMap, WorldPos, Fixed, WorldPos, WorldPos)> {
    (1u32..10, 1u32..10, any::<u64>(), 0u64..60, cell_size()).prop_flat_map(|(w, h, seed, density, cell_raw)| {
        let range = prop_oneof![Just(i64::MAX / 4), 0..i64::from(w.max(h)) * cell_raw];
        (coord(w, cell_raw), coord(h, cell_raw), range, coord(w, cell_raw), coord(h, cell_raw), coord(w, cell_raw), coord(h, cell_raw))
            .prop_map(move |(sx, sz, range, x0, z0, x1, z1)| {
                let map = random_map(w, h, seed, density, cell_raw);
                (map, at(sx, sz), fx(range), at(x0, z0), at(x1, z1))
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20000))]

    /// The module's exactness claim: for a segment in the box whose start lies in a passable
    /// navcell, "blocked by a terrain edge" is `!segment_clear`; for any start, an edge only
    /// blocks segments the grid blocks.
    #[test]
    fn terrain_edges_agree_with_segment_clear((map, start, range, a, b) in map_box_segment()) {
        let frame = Frame::new(&map, start, range).expect("the start is on the grid");
        let clamp = |p: WorldPos| (raw(p.x).clamp(frame.x0, frame.x1), raw(p.z).clamp(frame.z0, frame.z1));
        let (a, b) = (clamp(a), clamp(b));
        let mut scratch = ShortScratch::new();
        scratch.build_edges(&map, &frame);
        let blocked = scratch.terrain_blocks(a, b);
        let clear = segment_clear(&map, pos(a.0, a.1), pos(b.0, b.1));
        if touches_passable(&map, pos(a.0, a.1)) {
            prop_assert_eq!(blocked, !clear, "segment {:?} -> {:?}", a, b);
        } else {
            prop_assert!(!blocked || !clear, "segment {:?} -> {:?}", a, b);
        }
    }
}

/// Regression for the condition on the start: a point on the shared side of two blocked
/// navcells is not inside either, yet the grid blocks every segment from it while the edges
/// let it walk out (which is what the search wants from a start there).
#[test]
fn a_start_between_two_blocked_navcells_walks_out() {
    let map = map_from(&["....", "##..", "...."]);
    let frame = Frame::new(&map, at(M, 3 * M / 2), Fixed::from_num(10)).unwrap();
    let mut scratch = ShortScratch::new();
    scratch.build_edges(&map, &frame);
    let (a, b) = ((i128::from(M), i128::from(3 * M / 2)), (i128::from(M), i128::from(5 * M / 2)));
    assert!(!touches_passable(&map, pos(a.0, a.1)));
    assert!(!segment_clear(&map, pos(a.0, a.1), pos(b.0, b.1)));
    assert!(!scratch.terrain_blocks(a, b));
}

// ---- The word-at-a-time builds against navcell-at-a-time references. ----

/// The terrain edges built one navcell side at a time, straight from the definition.
fn reference_edges(map: &PassMap, f: &Frame) -> [Vec<Edge>; 4] {
    let mut edges: [Vec<Edge>; 4] = Default::default();
    let pass = |i: i128, j: i128| map.passable_padded(i as i64, j as i64);
    for vertical in [true, false] {
        let (lines, cells) = if vertical { (f.i0 + 1..=f.i1, (f.j0, f.j1)) } else { (f.j0 + 1..=f.j1, (f.i0, f.i1)) };
        for k in lines {
            let mut run: Option<(usize, i128)> = None;
            for p in cells.0..=cells.1 + 1 {
                let side = if p > cells.1 {
                    None
                } else {
                    let (before, after) = if vertical { (pass(k - 1, p), pass(k, p)) } else { (pass(p, k - 1), pass(p, k)) };
                    match (before, after, vertical) {
                        (true, false, true) => Some(EAST),
                        (false, true, true) => Some(WEST),
                        (true, false, false) => Some(NORTH),
                        (false, true, false) => Some(SOUTH),
                        _ => None,
                    }
                };
                if run.map(|r| r.0) != side {
                    if let Some((list, from)) = run {
                        edges[list].push(Edge { at: (k * f.cell) as i64, lo: (from * f.cell) as i64, hi: (p * f.cell) as i64 });
                    }
                    run = side.map(|s| (s, p));
                }
            }
        }
    }
    edges
}

/// The terrain corner vertices, one grid point at a time.
fn reference_corners(map: &PassMap, f: &Frame) -> Vec<(i64, i64)> {
    let pass = |i: i128, j: i128| map.passable_padded(i as i64, j as i64);
    let mut out = Vec::new();
    for m in f.j0 + 1..=f.j1 {
        for k in f.i0 + 1..=f.i1 {
            let (sw, se, nw, ne) = (pass(k - 1, m - 1), pass(k, m - 1), pass(k - 1, m), pass(k, m));
            if u8::from(sw) + u8::from(se) + u8::from(nw) + u8::from(ne) != 3 {
                continue;
            }
            let (dx, dz) = match (sw, se, nw, ne) {
                (false, ..) => (1, 1),
                (_, false, ..) => (-1, 1),
                (_, _, false, _) => (1, -1),
                _ => (-1, -1),
            };
            let (x, z) = (k * f.cell + dx * f.delta, m * f.cell + dz * f.delta);
            if f.contains(x, z) {
                out.push((x as i64, z as i64));
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Maps wider and taller than a word (64 navcells), so runs carry from one word to the
    /// next and corners fall on both sides of a window's end.
    #[test]
    fn word_builds_match_the_references(
        w in 1u32..200,
        h in 1u32..200,
        seed in any::<u64>(),
        density in prop_oneof![0u64..3, 0u64..60, 97u64..101],
        cell_raw in cell_size(),
        (sx, sz) in (0i64..=1 << 40, 0i64..=1 << 40),
        half_cells in prop_oneof![Just(1i64 << 20), 0i64..256],
    ) {
        let map = random_map(w, h, seed, density, cell_raw);
        let start = at(sx % (i64::from(w) * cell_raw + 1), sz % (i64::from(h) * cell_raw + 1));
        let frame = Frame::new(&map, start, fx(half_cells * cell_raw / 2)).expect("the start is on the grid");
        let mut scratch = ShortScratch::new();
        scratch.build_edges(&map, &frame);
        prop_assert_eq!(&scratch.edges, &reference_edges(&map, &frame));
        let goal = Goal::point(start).unwrap();
        scratch.build_vertices(&map, &query(start, &goal, 0, 0, &[]), &frame, MAX_VERTICES as usize);
        let corners: Vec<(i64, i64)> = scratch.vertices[2..].iter().map(|v| (v.x, v.z)).collect();
        prop_assert_eq!(corners, reference_corners(&map, &frame));
    }
}

// ---- The square tests against `segment_hits_square`, the bucket walk against every square. ----

/// A random map, a box on it, a segment in the box, squares around it (centre, half-size) and a
/// clearance. Navcells up to 2^24 raw units (256 m), so boxes up to 2^31 raw units wide, on both
/// sides of the `i64` limit of 2^30.
#[allow(clippy::type_complexity)]
fn box_segment_squares() -> impl Strategy<Value = (Frame, (i64, i64), (i64, i64), Vec<UnitSquare>, Fixed)> {
    let cell = prop_oneof![cell_size(), (1i64 << 20)..=1 << 24];
    (1u32..128, 1u32..128, cell).prop_flat_map(|(w, h, cell_raw)| {
        let (wx, hz) = (i64::from(w) * cell_raw, i64::from(h) * cell_raw);
        let point = move || (coord(w, cell_raw), coord(h, cell_raw));
        let near = move |n: i64| -n / 4..=n + n / 4;
        let half = move || prop_oneof![-cell_raw / 4..=cell_raw, 0..=2 * cell_raw, Just(0), 0..=wx.max(hz)];
        let squares = prop::collection::vec((near(wx), near(hz), half()), 0..40);
        let range = prop_oneof![Just(i64::MAX / 4), 0..=wx.max(hz)];
        (point(), range, point(), point(), squares, -cell_raw / 4..=cell_raw).prop_map(
            move |((sx, sz), range, a, b, squares, clearance)| {
                let map = random_map(w, h, 0, 0, cell_raw);
                let frame = Frame::new(&map, at(sx, sz), fx(range)).expect("the start is on the grid");
                let clamp =
                    |(x, z): (i64, i64)| (i128::from(x).clamp(frame.x0, frame.x1) as i64, i128::from(z).clamp(frame.z0, frame.z1) as i64);
                let squares = squares.into_iter().map(|(x, z, half)| square(x, z, half)).collect();
                (frame, clamp(a), clamp(b), squares, fx(clearance))
            },
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5000))]

    /// `Active::hit_by` is `segment_hits_square` for segments in the box (in `i128`, and in
    /// `i64` where the box allows it), and a square that misses the box hits no such segment.
    #[test]
    fn square_test_is_segment_hits_square((frame, a, b, squares, clearance) in box_segment_squares()) {
        let narrow = (frame.x1 - frame.x0).max(frame.z1 - frame.z0) <= 1 << 30;
        for s in &squares {
            let expected = segment_hits_square(pos(a.0.into(), a.1.into()), pos(b.0.into(), b.1.into()), s, clearance);
            match Active::of(s, clearance, &frame) {
                Some(active) => {
                    prop_assert_eq!(active.hit_by::<false>(a, b), expected, "{:?} -> {:?}, {:?}", a, b, s);
                    if narrow {
                        prop_assert_eq!(active.hit_by::<true>(a, b), expected, "{:?} -> {:?}, {:?}", a, b, s);
                    }
                }
                None => prop_assert!(!expected),
            }
        }
    }

    /// The bucket walk finds a hit exactly when some square is hit (and what it returns is
    /// hit), whatever the bucket size and the hint; `covered` is the brute-force look-up.
    #[test]
    fn bucket_walk_finds_what_testing_every_square_finds(
        (frame, a, b, squares, clearance) in box_segment_squares(),
        shift_back in 0u32..8,
        hint in 0u32..48,
        except in 0usize..48,
    ) {
        let active: Vec<Active> = squares.iter().filter_map(|s| Active::of(s, clearance, &frame)).collect();
        prop_assume!(!active.is_empty());
        let span = (frame.x1 - frame.x0).max(frame.z1 - frame.z0) as i64;
        let mut grid = SquareGrid::default();
        // From buckets twice the box's width down to 1/128 of it (at least one raw unit).
        let widest = 64 - (2 * span + 3).leading_zeros() - 1;
        grid.fill(&frame, &active, widest.saturating_sub(shift_back));
        let brute = active.iter().any(|s| s.hit_by::<false>(a, b));
        let wide = grid.first_hit::<false>(&active, a, b, hint);
        prop_assert_eq!(wide.is_some(), brute);
        prop_assert!(wide.is_none_or(|k| active[k as usize].hit_by::<false>(a, b)));
        if grid.narrow {
            let narrow = grid.first_hit::<true>(&active, a, b, hint);
            prop_assert_eq!(narrow.is_some(), brute);
            prop_assert!(narrow.is_none_or(|k| active[k as usize].hit_by::<false>(a, b)));
        }
        let covered = active.iter().enumerate().any(|(k, s)| k != except && s.contains(a));
        prop_assert_eq!(grid.covered(a, except), covered);
        // As `build` sizes them.
        grid.build(&frame, &active);
        prop_assert!(grid.narrow || span > 1 << 30);
        prop_assert_eq!(grid.first_hit::<false>(&active, a, b, hint).is_some(), brute);
        if grid.narrow {
            prop_assert_eq!(grid.first_hit::<true>(&active, a, b, hint).is_some(), brute);
        }
    }
}

/// Why the search does not use 0 A.D.'s quadrant rule (a corner vertex is never left towards
/// the quadrant of its own square). Corner vertices stand `EDGE_DELTA` off their squares, so a
/// segment can leave one into that quadrant and still pass the square: here the shortest path
/// comes down the west side of the square, turns at its south-west corner and leaves rising to
/// the north-east, just clearing the square's south-east corner. Going round the south-east
/// corner vertex instead, as the quadrant rule would have it, costs 68 raw units more.
#[test]
fn a_corner_can_be_left_towards_its_own_square() {
    let map = open_map(40, 20);
    let squares = [square(10 * M, 10 * M, M)];
    let goal_point = at(30 * M, 9 * M + 9 * M / 16);
    let goal = Goal::point(goal_point).unwrap();
    let q = query(at(17 * M / 2, 19 * M / 2), &goal, 24, 0, &squares);
    let (outcome, path) = run(&map, &q);
    check_answer(&map, &q, &outcome, &path);
    assert_eq!(outcome.status, ShortStatus::Complete);
    let corner = m16(143, 143);
    assert_eq!(path, vec![corner, goal_point]);
    // The last leg heads into the corner's own quadrant (north-east, where its square is).
    assert!(goal_point.x > corner.x && goal_point.z > corner.z);
    let round = m16(177, 143);
    assert_eq!(cost(corner, &[round, goal_point]) - cost(corner, &[goal_point]), 68);
}

// ---- Hand-built searches. ----

#[test]
fn around_a_single_unit_square() {
    let map = open_map(20, 20);
    let goal = Goal::point(at(17 * M, 10 * M)).unwrap();
    let squares = [square(10 * M, 10 * M, M)];
    let q = query(at(3 * M, 10 * M), &goal, 16, M / 2, &squares);
    let (outcome, path) = run(&map, &q);
    check_answer(&map, &q, &outcome, &path);
    assert_eq!(outcome.status, ShortStatus::Complete);
    // Both ways round are equally long; the tie goes to the lower vertex index, the south
    // corners: the expanded square's corners pushed out by 1/16 m.
    assert_eq!(path, vec![m16(135, 135), m16(185, 135), at(17 * M, 10 * M)]);
    assert!(cost(q.start, &path) > 14 * M as u64);
    assert_eq!(outcome.vertices, 2 + 4);
}

#[test]
fn through_a_one_cell_gap() {
    let map = map_from(&["..........", ".....#....", ".....#....", ".....#....", "..........", ".....#....", ".....#....", ".....#...."]);
    // The wall at x = 5..6 has a gap in row 3 (z = 3..4).
    let goal = Goal::circle(at(8 * M, 13 * M / 2), fx(M / 4)).unwrap();
    let q = query(at(2 * M, 13 * M / 2), &goal, 12, 0, &[]);
    let (outcome, path) = run(&map, &q);
    check_answer(&map, &q, &outcome, &path);
    assert_eq!(outcome.status, ShortStatus::Complete);
    // Over the corner of the wall's northern half, not through the gap: the top row is open.
    assert_eq!(path.len(), 3, "{path:?}");
    // Now close the top row: the only way is the gap.
    let map = map_from(&[".....#....", ".....#....", ".....#....", ".....#....", "..........", ".....#....", ".....#....", ".....#...."]);
    let (outcome, path) = run(&map, &q);
    check_answer(&map, &q, &outcome, &path);
    assert_eq!(outcome.status, ShortStatus::Complete);
    // In at the gap's north-west corner, out at its north-east corner (pushed 1/16 m into the
    // gap row, which is z = 3..4).
    assert_eq!(&path[..2], &[m16(79, 63), m16(97, 63)]);
    assert!(path.iter().all(|p| raw(p.x) <= 5 * i128::from(M) || raw(p.x) >= 6 * i128::from(M) || raw(p.z) <= 4 * i128::from(M)));
}

#[test]
fn corridor_blocked_by_a_unit_is_unreachable() {
    // A room (x < 8) and a corridor one navcell wide along row 4 (z = 4..5).
    let map = map_from(&[
        "........################",
        "........################",
        "........################",
        "........################",
        "........................",
        "........################",
        "........################",
        "........################",
        "........################",
    ]);
    let goal = Goal::point(at(41 * M / 2, 9 * M / 2)).unwrap();
    let squares = [square(29 * M / 2, 9 * M / 2, M / 2)];
    let q = query(at(7 * M / 2, 9 * M / 2), &goal, 20, M / 4, &squares);
    let (outcome, path) = run(&map, &q);
    check_answer(&map, &q, &outcome, &path);
    assert_eq!(outcome.status, ShortStatus::Partial(ShortPartial::Unreachable));
    // The square's corners are in the walls, so the reached vertices are the start and the two
    // corners of the corridor's mouth, equally near the goal: the lower index wins.
    assert_eq!(path, vec![m16(127, 65)]);
    // Without the unit the goal is straight down the corridor.
    let (outcome, path) = run(&map, &query(q.start, &goal, 20, M / 4, &[]));
    assert_eq!((outcome.status, path), (ShortStatus::Complete, vec![at(41 * M / 2, 9 * M / 2)]));
}

#[test]
fn goal_inside_another_units_square() {
    let map = open_map(20, 20);
    let squares = [square(10 * M, 10 * M, M)];
    // A point inside the expanded square is never reached: a step ending inside collides.
    let goal = Goal::point(at(10 * M, 21 * M / 2)).unwrap();
    let q = query(at(3 * M, 10 * M), &goal, 12, M / 2, &squares);
    let (outcome, path) = run(&map, &q);
    check_answer(&map, &q, &outcome, &path);
    assert_eq!(outcome.status, ShortStatus::Partial(ShortPartial::Unreachable));
    // The nearest reached vertex is a northern corner (the goal is north of the centre).
    assert_eq!(path.last(), Some(&m16(135, 185)));
    // A range goal around that unit, wider than its expanded square, is reached.
    let goal = Goal::circle(at(10 * M, 10 * M), fx(2 * M)).unwrap();
    let (outcome, path) = run(&map, &query(q.start, &goal, 12, M / 2, &squares));
    assert_eq!(outcome.status, ShortStatus::Complete);
    assert_eq!(path, vec![at(8 * M, 10 * M)]);
}

#[test]
fn inverted_circle_retreat_from_inside() {
    let map = open_map(20, 20);
    let goal = Goal::inverted_circle(at(10 * M, 10 * M), fx(3 * M)).unwrap();
    let start = at(10 * M + M / 4, 10 * M + M / 4);
    let q = query(start, &goal, 12, 0, &[]);
    let (outcome, path) = run(&map, &q);
    check_answer(&map, &q, &outcome, &path);
    assert_eq!(outcome.status, ShortStatus::Complete);
    assert_eq!(path.len(), 1);
    // Straight out along the diagonal, to the circle (rounded outwards by at most a raw unit).
    let (dx, dz) = (raw(path[0].x) - 10 * i128::from(M), raw(path[0].z) - 10 * i128::from(M));
    assert_eq!(dx, dz);
    let r = 3 * i128::from(M);
    assert!(dx * dx + dz * dz >= r * r && dx * dx + dz * dz <= (r + 2) * (r + 2));
    // With a unit in the way out, the retreat goes round it (or elsewhere), still complete.
    let squares = [square(12 * M, 12 * M, M / 2)];
    let q = query(start, &goal, 12, M / 4, &squares);
    let (outcome, path) = run(&map, &q);
    check_answer(&map, &q, &outcome, &path);
    assert_eq!(outcome.status, ShortStatus::Complete);
}

#[test]
fn node_budget_one_is_partial() {
    let map = open_map(20, 20);
    let goal = Goal::point(at(17 * M, 10 * M)).unwrap();
    let squares = [square(10 * M, 10 * M, M)];
    let mut q = query(at(3 * M, 10 * M), &goal, 12, M / 2, &squares);
    q.node_budget = 1;
    let (outcome, path) = run(&map, &q);
    check_answer(&map, &q, &outcome, &path);
    assert_eq!(outcome.status, ShortStatus::Partial(ShortPartial::NodeBudget));
    assert_eq!(outcome.expanded, 1);
    // The start sees the two western corners; the south one has the lower index.
    assert_eq!(path, vec![m16(135, 135)]);
    q.node_budget = 0;
    let (outcome, path) = run(&map, &q);
    assert_eq!((outcome.status, outcome.expanded, path.len()), (ShortStatus::Partial(ShortPartial::NodeBudget), 0, 0));
}

#[test]
fn goal_beyond_the_box_is_out_of_box() {
    let map = open_map(60, 20);
    let goal = Goal::point(at(50 * M, 10 * M)).unwrap();
    let q = query(at(10 * M, 10 * M), &goal, 8, 0, &[]);
    let (outcome, path) = run(&map, &q);
    check_answer(&map, &q, &outcome, &path);
    assert_eq!(outcome.status, ShortStatus::Partial(ShortPartial::OutOfBox));
    // Clamped into the box shrunk by 1/16 m.
    assert_eq!(path, vec![m16(18 * 16 - 1, 160)]);
}

#[test]
fn start_in_the_goal_or_off_the_grid() {
    let map = open_map(10, 10);
    let goal = Goal::circle(at(5 * M, 5 * M), fx(M)).unwrap();
    let (outcome, path) = run(&map, &query(at(5 * M, 5 * M), &goal, 8, 0, &[]));
    assert_eq!((outcome.status, outcome.expanded, path.len()), (ShortStatus::Complete, 0, 0));
    let (outcome, path) = run(&map, &query(at(-M, 5 * M), &goal, 8, 0, &[]));
    assert_eq!((outcome.status, outcome.vertices, path.len()), (ShortStatus::Partial(ShortPartial::Unreachable), 0, 0));
}

#[test]
fn a_start_on_an_impassable_navcell_walks_out() {
    let map = map_from(&["..........", "..####....", "..####....", "..........", ".........."]);
    let goal = Goal::point(at(8 * M, M / 2)).unwrap();
    // Inside the block, which has no passable navcell around the start.
    let q = query(at(3 * M + M / 2, 3 * M + M / 4), &goal, 12, 0, &[]);
    assert!(!touches_passable(&map, q.start));
    let (outcome, path) = run(&map, &q);
    check_answer(&map, &q, &outcome, &path);
    assert_eq!(outcome.status, ShortStatus::Complete);
    assert!(!segment_clear(&map, q.start, path[0]), "the first step crosses blocked navcells on the way out");
}

#[test]
fn the_vertex_limit_leaves_out_the_rest_deterministically() {
    let map = map_from(&["#.#.#.#", ".......", "#.#.#.#", ".......", "#.#.#.#"]);
    let squares: Vec<UnitSquare> = (0..6).map(|k| square(M / 2 + k * M, 3 * M / 2, M / 8)).collect();
    let goal = Goal::point(at(6 * M, 0)).unwrap();
    let q = query(at(M / 2, 7 * M / 2), &goal, 20, 0, &squares);
    let frame = Frame::new(&map, q.start, q.range).unwrap();
    let mut all = ShortScratch::new();
    all.build_vertices(&map, &q, &frame, MAX_VERTICES as usize);
    assert!(all.vertices.len() > 12, "{}", all.vertices.len());
    for cap in [0, 2, 5, 12] {
        let mut capped = ShortScratch::new();
        capped.build_vertices(&map, &q, &frame, cap);
        assert_eq!(capped.vertices.len(), cap.max(2));
        let positions = |s: &ShortScratch| s.vertices.iter().map(|v| (v.x, v.z)).collect::<Vec<_>>();
        assert_eq!(positions(&capped)[..], positions(&all)[..cap.max(2)]);
    }
}

// ---- Determinism and scratch reuse. ----

/// A query's inputs: start, goal, range in metres, clearance in raw units, squares.
type QueryParts = (WorldPos, Goal, i64, i64, Vec<UnitSquare>);

fn mixed_queries() -> (PassMap, Vec<QueryParts>) {
    let map = PassMap::build(&random_grid(30, 24, 7, 18), CLASS);
    let goals = [
        Goal::point(at(25 * M + 3, 20 * M + 7)).unwrap(),
        Goal::circle(at(5 * M, 19 * M), fx(2 * M)).unwrap(),
        Goal::inverted_circle(at(15 * M, 12 * M), fx(5 * M)).unwrap(),
        Goal::square(Square::new(at(20 * M, 4 * M), fx(2 * M), fx(M), Vec2::new(fx(M), fx(0)), Vec2::new(fx(0), fx(M))).unwrap()),
        Goal::point(at(200 * M, 4 * M)).unwrap(),
    ];
    let squares: Vec<UnitSquare> = (0..12).map(|k| square((3 + 2 * k) * M + k * 977, (4 + (k * 7) % 16) * M, M / 3)).collect();
    let mut queries = Vec::new();
    for (n, goal) in goals.iter().enumerate() {
        let start = at((2 + 5 * n as i64) * M + M / 3, (6 + 3 * n as i64) * M + M / 5);
        queries.push((start, *goal, 6 + 4 * n as i64, M / 4, squares[..2 * n + 2].to_vec()));
    }
    (map, queries)
}

#[test]
fn same_query_twice_gives_the_same_bytes() {
    let (map, queries) = mixed_queries();
    let mut scratch = ShortScratch::new();
    let mut out = Vec::new();
    for (start, goal, range, clearance, squares) in &queries {
        let q = query(*start, goal, *range, *clearance, squares);
        let first = find_short_path(&map, &q, &mut scratch, &mut out);
        let first_bits: Vec<(i64, i64)> = out.iter().map(|p| (p.x.to_bits(), p.z.to_bits())).collect();
        let second = find_short_path(&map, &q, &mut scratch, &mut out);
        let second_bits: Vec<(i64, i64)> = out.iter().map(|p| (p.x.to_bits(), p.z.to_bits())).collect();
        assert_eq!(first, second);
        assert_eq!(first_bits, second_bits);
        check_answer(&map, &q, &first, &out);
    }
}

#[test]
fn scratch_reuse_does_not_change_answers() {
    let (map, queries) = mixed_queries();
    let fresh: Vec<_> = queries.iter().map(|(s, g, r, c, sq)| run(&map, &query(*s, g, *r, *c, sq))).collect();
    assert!(fresh.iter().any(|(o, _)| o.status == ShortStatus::Complete));
    assert!(fresh.iter().any(|(o, _)| o.status != ShortStatus::Complete));
    let mut scratch = ShortScratch::new();
    let mut out = vec![at(1, 1); 3];
    // Forwards, backwards and forwards again through one scratch.
    let order: Vec<usize> = (0..queries.len()).chain((0..queries.len()).rev()).chain(0..queries.len()).collect();
    for k in order {
        let (s, g, r, c, sq) = &queries[k];
        let outcome = find_short_path(&map, &query(*s, g, *r, *c, sq), &mut scratch, &mut out);
        assert_eq!((outcome, out.clone()), fresh[k], "query {k}");
    }
}

// ---- The oracle: Dijkstra over the whole visibility graph. ----

/// Dijkstra from the start over every vertex the search built, visibility by `segment_clear`
/// and `segment_hits_square` (not the edges), the goal vertex a sink placed per source as the
/// search places it. Returns the costs (`UNREACHED` where unreached) and, for the goal vertex,
/// the number of segments of its cheapest path.
///
/// From a start inside the impassable area (no passable navcell around it) the grid blocks
/// everything, and the model's answer is by definition the walk-out rule of the edges, so
/// segments from such a start use `edges` instead.
fn dijkstra(map: &PassMap, q: &ShortQuery, frame: &Frame, vertices: &[(i128, i128)], edges: &ShortScratch) -> (Vec<u64>, u32) {
    let n = vertices.len();
    let start_inside_blocked = !touches_passable(map, q.start);
    let visible = |a: (i128, i128), b: (i128, i128)| {
        let terrain = if start_inside_blocked && a == vertices[START] {
            !edges.terrain_blocks(a, b)
        } else {
            segment_clear(map, pos(a.0, a.1), pos(b.0, b.1))
        };
        let (a, b) = (pos(a.0, a.1), pos(b.0, b.1));
        terrain && q.squares.iter().all(|s| !segment_hits_square(a, b, s, q.clearance))
    };
    let mut dist = vec![UNREACHED; n];
    let mut segments = vec![0u32; n];
    let mut done = vec![false; n];
    dist[START] = 0;
    loop {
        let next = (0..n).filter(|&v| !done[v] && dist[v] != UNREACHED && v != GOAL).min_by_key(|&v| (dist[v], v));
        let Some(u) = next else { break };
        done[u] = true;
        let pu = vertices[u];
        let goal_at = frame.goal_position(q.goal, pu.0, pu.1);
        for v in 1..n {
            if v == u || done[v] {
                continue;
            }
            let pv = if v == GOAL { goal_at } else { vertices[v] };
            let d = dist[u] + floor_length(pv.0 - pu.0, pv.1 - pu.1);
            if d < dist[v] && visible(pu, pv) {
                dist[v] = d;
                segments[v] = segments[u] + 1;
            }
        }
    }
    (dist, segments[GOAL])
}

fn oracle_goal() -> impl Strategy<Value = Goal> {
    let c = || 0i64..16 * M;
    let size = || 0i64..3 * M;
    prop_oneof![
        (c(), c()).prop_map(|(x, z)| Goal::point(at(x, z)).unwrap()),
        (c(), c(), size()).prop_map(|(x, z, r)| Goal::circle(at(x, z), fx(r)).unwrap()),
        (c(), c(), size()).prop_map(|(x, z, r)| Goal::inverted_circle(at(x, z), fx(r)).unwrap()),
        (c(), c(), size(), size(), 0i64..360 * M, any::<bool>()).prop_map(|(x, z, hw, hh, deg, inverted)| {
            let u = crate::geometry::trig::unit_vector_degrees(fx(deg));
            let sq = Square::new(at(x, z), fx(hw), fx(hh), u, u.perp()).unwrap();
            if inverted { Goal::inverted_square(sq) } else { Goal::square(sq) }
        }),
    ]
}

#[allow(clippy::type_complexity)]
fn oracle_case() -> impl Strategy<Value = (PassMap, WorldPos, Goal, i64, i64, Vec<UnitSquare>)> {
    (
        8u32..16,
        8u32..16,
        any::<u64>(),
        0u64..35,
        (0i64..16 * M, 0i64..16 * M),
        oracle_goal(),
        prop_oneof![2i64..16, Just(40)],
        0i64..3 * M / 4,
        prop::collection::vec((0i64..16 * M, 0i64..16 * M, M / 16..M), 0..7),
    )
        .prop_map(|(w, h, seed, density, (sx, sz), goal, range, clearance, squares)| {
            let map = random_map(w, h, seed, density, M);
            let start = at(sx % (i64::from(w) * M), sz % (i64::from(h) * M));
            let squares = squares.into_iter().map(|(x, z, half)| square(x, z, half)).collect();
            (map, start, goal, range * M, clearance, squares)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// The search against Dijkstra over the full visibility graph of the same vertices:
    /// reachability agrees; a reached goal costs at least the optimum and at most one raw unit
    /// per segment of the optimal path plus two more (`h` rounds the distance to a nearest
    /// goal point that is itself rounded, while each segment's cost is rounded down, so `h`
    /// can exceed the remaining cost by that much); an unreachable goal gives the path to the
    /// same vertex at exactly the optimal cost (the open list ran dry, so every cost is exact).
    #[test]
    fn search_matches_dijkstra_over_the_visibility_graph((map, start, goal, range_raw, clearance, squares) in oracle_case()) {
        let q = ShortQuery { start, goal: &goal, range: fx(range_raw), clearance: fx(clearance), squares: &squares, node_budget: UNLIMITED };
        let mut scratch = ShortScratch::new();
        let mut out = Vec::new();
        let outcome = find_short_path(&map, &q, &mut scratch, &mut out);
        check_answer(&map, &q, &outcome, &out);
        if goal.contains_point(start) {
            prop_assert_eq!(outcome.status, ShortStatus::Complete);
            return Ok(());
        }
        let frame = Frame::new(&map, start, q.range).unwrap();
        let vertices: Vec<(i128, i128)> = (0..scratch.vertices.len()).map(|v| scratch.position(v)).collect();
        let (dist, goal_segments) = dijkstra(&map, &q, &frame, &vertices, &scratch);
        let found = cost(start, &out);
        match outcome.status {
            ShortStatus::Complete | ShortStatus::Partial(ShortPartial::OutOfBox) => {
                prop_assert!(dist[GOAL] != UNREACHED, "the search reached a goal Dijkstra cannot");
                prop_assert!(found >= dist[GOAL], "cost {} below the optimum {}", found, dist[GOAL]);
                prop_assert!(found <= dist[GOAL] + u64::from(goal_segments) + 2, "cost {} vs optimum {} over {} segments", found, dist[GOAL], goal_segments);
                let last = *out.last().unwrap();
                prop_assert_eq!(outcome.status == ShortStatus::Complete, goal.contains_point(last));
            }
            ShortStatus::Partial(ShortPartial::Unreachable) => {
                prop_assert_eq!(dist[GOAL], UNREACHED, "Dijkstra reaches the goal");
                let best = (0..vertices.len())
                    .filter(|&v| v != GOAL && dist[v] != UNREACHED)
                    .min_by_key(|&v| (goal_distance(&goal, vertices[v].0, vertices[v].1), v))
                    .unwrap();
                let expected = if best == START { None } else { Some(pos(vertices[best].0, vertices[best].1)) };
                prop_assert_eq!(out.last().copied(), expected);
                prop_assert_eq!(found, dist[best]);
            }
            ShortStatus::Partial(ShortPartial::NodeBudget) => prop_assert!(false, "no budget was set"),
        }
    }
}
