//! The landmark heuristic against oracles: searches with a [`Landmarks`] table return the optimal
//! cost of plain A* (on the map the table was built from and after navcells were blocked since),
//! the stored bounds are admissible, consistent and sharp against an exact Dijkstra written here,
//! landmark selection follows its documented farthest-first rule, and the bound really saves
//! expansions where the octile distance is misled by a dead end.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use pathing::cost::{DIAGONAL, STRAIGHT};
use pathing::{
    Fixed, Goal, JumpTable, Landmarks, MAX_LANDMARKS, NavGrid, Navcell, PartialReason, PassMap, Path, PathStatus, SearchLimits,
    SearchOutcome, SearchScratch, WorldPos,
};
use proptest::prelude::*;

use phalanx_tests::goals::arb_goal;
use phalanx_tests::maps::{self, CLASS, KINDS, Kind};

fn fx(bits: i64) -> Fixed {
    Fixed::from_bits(bits)
}

/// Grid sizes: small fields, one-wide strips both ways, and a few larger fields.
fn arb_dims() -> impl Strategy<Value = (u32, u32)> {
    prop_oneof![
        3 => (1u32..48, 1u32..48),
        1 => (1u32..2, 1u32..130),
        1 => (1u32..130, 1u32..2),
        1 => (60u32..120, 60u32..120),
    ]
}

/// A grid kind, size and seed, a start navcell on it, a goal around it and a landmark count.
fn arb_case() -> impl Strategy<Value = (Kind, u32, u32, u64, u32, u32, Goal, usize)> {
    (proptest::sample::select(KINDS.to_vec()), arb_dims(), any::<u64>())
        .prop_flat_map(|(kind, (w, h), seed)| (Just(kind), Just(w), Just(h), Just(seed), 0..w, 0..h, arb_goal(w, h), 0usize..=12))
}

fn cell(i: u32, j: u32) -> Navcell {
    Navcell::new(i as u16, j as u16)
}

fn index(map: &PassMap, c: Navcell) -> usize {
    usize::from(c.j) * map.width() as usize + usize::from(c.i)
}

/// The navcells of `goal` on `map` (passable or not), by the goal's own containment test.
fn goal_cells(goal: &Goal, map: &PassMap) -> Vec<Navcell> {
    let mut cells = Vec::new();
    for j in 0..map.height() {
        for i in 0..map.width() {
            if goal.contains_navcell(i, j, map.cell_size(), map.width(), map.height()) {
                cells.push(cell(i, j));
            }
        }
    }
    cells
}

/// Whether the octile move `(dx, dy)` from `(i, j)` is legal on `map`: the target passable and on
/// the map, and for diagonals both orthogonal neighbours passable (no corner cutting).
fn legal_move(map: &PassMap, i: i64, j: i64, dx: i64, dy: i64) -> bool {
    let passable = |i: i64, j: i64| {
        i >= 0 && j >= 0 && i < i64::from(map.width()) && j < i64::from(map.height()) && map.is_passable(cell(i as u32, j as u32))
    };
    passable(i, j) && passable(i + dx, j + dy) && (dx == 0 || dy == 0 || (passable(i + dx, j) && passable(i, j + dy)))
}

const MOVES: [(i64, i64); 8] = [(1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)];

/// Exact shortest-path costs from the passable navcells of `sources` to every navcell, with a
/// straight step costing `straight` and a diagonal one `diagonal`: a plain heap Dijkstra over the
/// legal octile moves. `None` where no source reaches. (Moves are symmetric, so these are also the
/// costs *to* the sources.)
fn dijkstra(map: &PassMap, sources: &[Navcell], straight: u64, diagonal: u64) -> Vec<Option<u64>> {
    let w = map.width() as usize;
    let mut dist: Vec<Option<u64>> = vec![None; w * map.height() as usize];
    let mut heap = BinaryHeap::new();
    for &s in sources {
        if map.is_passable(s) {
            dist[index(map, s)] = Some(0);
            heap.push(Reverse((0u64, index(map, s))));
        }
    }
    while let Some(Reverse((d, at))) = heap.pop() {
        if dist[at] != Some(d) {
            continue;
        }
        let (i, j) = ((at % w) as i64, (at / w) as i64);
        for (dx, dy) in MOVES {
            if !legal_move(map, i, j, dx, dy) {
                continue;
            }
            let n = (j + dy) as usize * w + (i + dx) as usize;
            let c = d + if dx != 0 && dy != 0 { diagonal } else { straight };
            if dist[n].is_none_or(|old| c < old) {
                dist[n] = Some(c);
                heap.push(Reverse((c, n)));
            }
        }
    }
    dist
}

/// Exact fine costs (see [`pathing::cost`]).
fn exact(map: &PassMap, sources: &[Navcell]) -> Vec<Option<u64>> {
    dijkstra(map, sources, STRAIGHT, DIAGONAL)
}

/// The coarse metric the module documents for maps of fewer than about 2.9 million navcells:
/// `STRAIGHT >> 20` and `DIAGONAL >> 20` per step.
const SHIFT: u32 = 20;

fn coarse(map: &PassMap, source: Navcell) -> Vec<Option<u64>> {
    dijkstra(map, &[source], STRAIGHT >> SHIFT, DIAGONAL >> SHIFT)
}

/// Connected areas by 4-connected flood fill (which decides octile connectivity without corner
/// cutting): per navcell its area's number, areas numbered in order of their lowest navcell.
fn areas(map: &PassMap) -> (Vec<Option<usize>>, Vec<usize>) {
    let (w, h) = (map.width() as usize, map.height() as usize);
    let mut label = vec![None; w * h];
    let mut sizes = Vec::new();
    for start in 0..w * h {
        if label[start].is_some() || !map.is_passable(cell((start % w) as u32, (start / w) as u32)) {
            continue;
        }
        let id = sizes.len();
        let mut size = 0;
        label[start] = Some(id);
        let mut stack = vec![start];
        while let Some(at) = stack.pop() {
            size += 1;
            let (i, j) = ((at % w) as i64, (at / w) as i64);
            for (dx, dy) in &MOVES[..4] {
                if legal_move(map, i, j, *dx, *dy) {
                    let n = (j + dy) as usize * w + (i + dx) as usize;
                    if label[n].is_none() {
                        label[n] = Some(id);
                        stack.push(n);
                    }
                }
            }
        }
        sizes.push(size);
    }
    (label, sizes)
}

/// The largest area (lowest-numbered on ties), if any.
fn largest_area(sizes: &[usize]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (a, &s) in sizes.iter().enumerate() {
        if best.is_none_or(|b| s > sizes[b]) {
            best = Some(a);
        }
    }
    best
}

/// The landmarks the module documents, chosen by this file's own coarse Dijkstra: the first is
/// the navcell farthest from the lowest navcell of the largest area, each next one the navcell
/// farthest from its nearest landmark so far (lowest index on ties), until `count` are chosen or
/// every navcell of the area is one. (So an area of one navcell gets that navcell as its landmark.)
fn oracle_landmarks(map: &PassMap, count: usize) -> Vec<Navcell> {
    let w = map.width() as usize;
    let (label, sizes) = areas(map);
    let Some(area) = largest_area(&sizes) else { return Vec::new() };
    let seed = label.iter().position(|&l| l == Some(area)).unwrap();
    let mut nearest = coarse(map, cell((seed % w) as u32, (seed / w) as u32));
    let mut points = Vec::new();
    while points.len() < count.min(MAX_LANDMARKS) {
        let mut far: Option<(u64, usize)> = None;
        for (c, d) in nearest.iter().enumerate() {
            if let Some(d) = *d
                && far.is_none_or(|(b, _)| d > b)
            {
                far = Some((d, c));
            }
        }
        let (d, far) = far.unwrap();
        if d == 0 && !points.is_empty() {
            break; // every navcell of the area is a landmark already
        }
        let landmark = cell((far % w) as u32, (far / w) as u32);
        let from = coarse(map, landmark);
        for (n, f) in nearest.iter_mut().zip(&from) {
            *n = if points.is_empty() { *f } else { (*n).min(*f) };
        }
        points.push(landmark);
    }
    points
}

/// The outcomes of the three landmark searches and of plain A*, with their paths.
struct Runs {
    astar: (SearchOutcome, Path),
    jps_lm: (SearchOutcome, Path),
    plus_lm: (SearchOutcome, Path),
    astar_lm: (SearchOutcome, Path),
}

fn run_all(map: &PassMap, table: &Landmarks, start: Navcell, goal: &Goal, limits: &SearchLimits) -> Runs {
    let jumps = JumpTable::build(map);
    let mut scratch = SearchScratch::new();
    let mut run = |f: &mut dyn FnMut(&mut SearchScratch, &mut Path) -> SearchOutcome| {
        let mut path = Path::new();
        let outcome = f(&mut scratch, &mut path);
        (outcome, path)
    };
    Runs {
        astar: run(&mut |s, p| pathing::find_path_astar(map, None, start, goal, &SearchLimits::UNLIMITED, s, p)),
        jps_lm: run(&mut |s, p| {
            pathing::find_path_jps(map, &pathing::Accelerators { jump_table: None, landmarks: Some(table) }, start, goal, limits, s, p)
        }),
        plus_lm: run(&mut |s, p| {
            pathing::find_path_jps(
                map,
                &pathing::Accelerators { jump_table: Some(&jumps), landmarks: Some(table) },
                start,
                goal,
                limits,
                s,
                p,
            )
        }),
        astar_lm: run(&mut |s, p| pathing::find_path_astar(map, Some(table), start, goal, limits, s, p)),
    }
}

/// The landmark searches (unlimited) against plain A* and the flood fill: same status, same cost,
/// legal paths that end in the goal, and JPS+ identical to JPS.
fn check_against_astar(map: &PassMap, table: &Landmarks, start: Navcell, goal: &Goal) -> Result<(), TestCaseError> {
    let runs = run_all(map, table, start, goal, &SearchLimits::UNLIMITED);
    let (astar, astar_path) = &runs.astar;
    let cells = goal_cells(goal, map);
    let reach = exact(map, &[start]);
    let expect_complete = map.is_passable(start) && cells.iter().any(|&c| reach[index(map, c)].is_some());
    prop_assert_eq!(astar.status == PathStatus::Complete, expect_complete, "A* disagrees with the flood fill");
    prop_assert_eq!(runs.plus_lm.0, runs.jps_lm.0, "JPS+ with landmarks pushes the same nodes as JPS with landmarks");
    prop_assert_eq!(&runs.plus_lm.1, &runs.jps_lm.1);
    for (name, (outcome, path)) in [("JPS", &runs.jps_lm), ("A*", &runs.astar_lm)] {
        prop_assert_eq!(outcome.status, astar.status, "{} with landmarks: status", name);
        prop_assert_eq!(path.waypoints().first(), Some(&start), "{} with landmarks: path starts elsewhere", name);
        path.check_legal(map).map_err(|e| TestCaseError::fail(format!("{name} with landmarks: {e}")))?;
        if outcome.status == PathStatus::Complete {
            prop_assert_eq!(path.cost(), astar_path.cost(), "{} with landmarks: {:?}, A*: {:?}", name, path.steps(), astar_path.steps());
            let end = *path.waypoints().last().unwrap();
            prop_assert!(cells.contains(&end), "{} with landmarks ended outside the goal at {}", name, end);
        } else if map.is_passable(start) {
            prop_assert_eq!(outcome.status, PathStatus::Partial(PartialReason::Unreachable));
            let end = *path.waypoints().last().unwrap();
            prop_assert!(reach[index(map, end)].is_some(), "{} with landmarks: partial path ends unreachably at {}", name, end);
        }
    }
    // The optimal cost, computed independently of every search.
    if expect_complete {
        let best = cells.iter().filter_map(|&c| reach[index(map, c)]).min().unwrap();
        prop_assert_eq!(astar_path.cost(), best, "A* cost differs from the Dijkstra oracle");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// On the map the table was built from, every landmark search (any `k`, including 0) finds
    ///    the cost of plain A* exactly when plain A* completes.
    #[test]
    fn landmark_searches_equal_astar((kind, w, h, seed, si, sj, goal, k) in arb_case()) {
        let map = PassMap::build(&maps::grid(kind, w, h, seed), CLASS);
        let table = Landmarks::build(&map, k);
        check_against_astar(&map, &table, cell(si, sj), &goal)?;
        // A point goal on a passable navcell, so that most cases have a long complete path.
        let passable: Vec<Navcell> = (0..w * h).map(|c| cell(c % w, c / w)).filter(|&c| map.is_passable(c)).collect();
        if !passable.is_empty() {
            let target = passable[(seed % passable.len() as u64) as usize];
            check_against_astar(&map, &table, cell(si, sj), &Goal::navcell_center(target.i, target.j, Fixed::ONE))?;
        }
    }

    /// With a node budget the landmark searches stop within it with a legal partial path, and
    ///     when they complete anyway the cost is still optimal; JPS+ still equals JPS.
    #[test]
    fn landmark_searches_honour_the_budget((kind, w, h, seed, si, sj, goal, k) in arb_case(), budget in 1u32..30) {
        let map = PassMap::build(&maps::grid(kind, w, h, seed), CLASS);
        let table = Landmarks::build(&map, k);
        let runs = run_all(&map, &table, cell(si, sj), &goal, &SearchLimits { node_budget: budget });
        prop_assert_eq!(runs.plus_lm.0, runs.jps_lm.0);
        prop_assert_eq!(&runs.plus_lm.1, &runs.jps_lm.1);
        for (outcome, path) in [&runs.jps_lm, &runs.astar_lm] {
            prop_assert!(outcome.expanded <= budget);
            path.check_legal(&map).map_err(TestCaseError::fail)?;
            match outcome.status {
                PathStatus::Complete => prop_assert_eq!(path.cost(), runs.astar.1.cost()),
                PathStatus::Partial(PartialReason::NodeBudget) => prop_assert_eq!(outcome.expanded, budget),
                other => prop_assert_eq!(other, runs.astar.0.status),
            }
        }
    }

    /// The stored bounds against exact Dijkstra distances from each landmark: equal to the coarse
    ///    metric's distance times 2^20, never above the fine distance and at most 2·10⁻⁴ below it,
    ///    `None` exactly where the landmark does not reach, and changing across every legal step by
    ///    at most that step's cost (consistency). The differential bound built from them never
    ///    exceeds the exact distance to a goal, computed by Dijkstra from the goal's navcells.
    #[test]
    fn bounds_are_admissible_consistent_and_sharp(
        (kind, (w, h), seed) in (proptest::sample::select(KINDS.to_vec()), prop_oneof![3 => (1u32..40, 1u32..40), 1 => (1u32..2, 1u32..100), 1 => (1u32..100, 1u32..2)], any::<u64>()),
        k in 0usize..=12,
        goal_seed in any::<u64>(),
        radius in 0i64..(4 << 16),
    ) {
        let map = PassMap::build(&maps::grid(kind, w, h, seed), CLASS);
        let table = Landmarks::build(&map, k);
        let cells: Vec<Navcell> = (0..w * h).map(|c| cell(c % w, c / w)).collect();
        let points = table.points();
        let mut exact_from = Vec::new();
        for (l, &p) in points.iter().enumerate() {
            prop_assert_eq!(table.distance_bound(l, p), Some(0), "landmark {} at {}", l, p);
            let fine = exact(&map, &[p]);
            let coarse = coarse(&map, p);
            for &c in &cells {
                let bound = table.distance_bound(l, c);
                let d = fine[index(&map, c)];
                prop_assert_eq!(bound.is_some(), d.is_some(), "landmark {} at {} reaches {}: table {:?}, Dijkstra {:?}", l, p, c, bound, d);
                prop_assert_eq!(bound, coarse[index(&map, c)].map(|d| d << SHIFT), "landmark {} at {}, navcell {}: not the coarse distance", l, p, c);
                if let (Some(b), Some(d)) = (bound, d) {
                    prop_assert!(b <= d, "landmark {} at {}, navcell {}: bound {} above the distance {}", l, p, c, b, d);
                    prop_assert!(b * 10_000 >= d * 9_998, "landmark {} at {}, navcell {}: bound {} far below the distance {}", l, p, c, b, d);
                }
                for (dx, dy) in MOVES {
                    if !legal_move(&map, i64::from(c.i), i64::from(c.j), dx, dy) {
                        continue;
                    }
                    let m = cell((i64::from(c.i) + dx) as u32, (i64::from(c.j) + dy) as u32);
                    let step = if dx != 0 && dy != 0 { DIAGONAL } else { STRAIGHT };
                    let (bn, bm) = (bound, table.distance_bound(l, m));
                    prop_assert_eq!(bn.is_some(), bm.is_some(), "landmark {}: neighbours {} and {} disagree on reach", l, c, m);
                    if let (Some(bn), Some(bm)) = (bn, bm) {
                        prop_assert!(bn.abs_diff(bm) <= step, "landmark {}: step {} -> {} changes the bound by {} > {}", l, c, m, bn.abs_diff(bm), step);
                    }
                }
            }
            exact_from.push(fine);
        }

        // A goal: a disc of navcells around a random navcell, or that navcell alone.
        let centre = cells[(goal_seed % cells.len() as u64) as usize];
        let at = WorldPos::new(Fixed::from_num(centre.i) + Fixed::from_bits(1 << 15), Fixed::from_num(centre.j) + Fixed::from_bits(1 << 15));
        let goal = if goal_seed % 3 == 0 { Goal::point(at).unwrap() } else { Goal::circle(at, fx(radius)).unwrap() };
        let goal_set = goal_cells(&goal, &map);
        let to_goal = exact(&map, &goal_set);
        for (l, from) in exact_from.iter().enumerate() {
            // The interval [lo, hi] of the landmark's bounds over the goal navcells it reaches.
            let reached: Vec<u64> = goal_set.iter().filter_map(|&g| table.distance_bound(l, g)).collect();
            prop_assert_eq!(reached.is_empty(), goal_set.iter().all(|&g| from[index(&map, g)].is_none()));
            let (Some(&lo), Some(&hi)) = (reached.iter().min(), reached.iter().max()) else { continue };
            for &c in &cells {
                if let (Some(d), Some(b)) = (to_goal[index(&map, c)], table.distance_bound(l, c)) {
                    let differential = lo.saturating_sub(b).max(b.saturating_sub(hi));
                    prop_assert!(differential <= d, "landmark {}: bound {} from {} to the goal exceeds the distance {}", l, differential, c, d);
                }
            }
        }
    }

    /// Selection: deterministic (two builds are equal), exactly the documented farthest-first
    ///    choice (checked against this file's own Dijkstra), all distinct passable navcells of the
    ///    largest connected area, as many as asked, capped by `MAX_LANDMARKS` and by that area.
    #[test]
    fn selection_is_deterministic_farthest_first_in_the_largest_area(
        (kind, (w, h), seed) in (proptest::sample::select(KINDS.to_vec()), prop_oneof![3 => (1u32..40, 1u32..40), 1 => (1u32..2, 1u32..60), 1 => (1u32..60, 1u32..2)], any::<u64>()),
        k in prop_oneof![3 => 0usize..=12, 1 => 0usize..=70],
    ) {
        let map = PassMap::build(&maps::grid(kind, w, h, seed), CLASS);
        let table = Landmarks::build(&map, k);
        prop_assert_eq!(&table, &Landmarks::build(&map, k));
        prop_assert_eq!((table.width(), table.height()), (w, h));
        let points = table.points();
        let (label, sizes) = areas(&map);
        let area = largest_area(&sizes);
        let area_size = area.map_or(0, |a| sizes[a]);
        prop_assert_eq!(points, &oracle_landmarks(&map, k)[..]);
        prop_assert_eq!(points.len(), k.min(MAX_LANDMARKS).min(area_size));
        prop_assert_eq!(table.memory_bytes(), (w * h) as usize * points.len() * 4);
        for (n, &p) in points.iter().enumerate() {
            prop_assert!(map.is_passable(p), "landmark {} is impassable", p);
            prop_assert_eq!(label[index(&map, p)], area, "landmark {} is outside the largest area", p);
            prop_assert!(!points[..n].contains(&p), "landmark {} chosen twice", p);
        }
    }

    /// A table built before navcells were blocked still gives optimal searches on the blocked
    ///    map, and its bounds stay below the new exact distances.
    #[test]
    fn stale_table_after_blocking_stays_exact(
        (kind, w, h, seed, si, sj, goal, k) in arb_case(),
        blocks in proptest::collection::vec((any::<u32>(), any::<u32>(), 1u32..8, 1u32..8), 1..6),
    ) {
        let mut grid = maps::grid(kind, w, h, seed);
        let table = Landmarks::build(&PassMap::build(&grid, CLASS), k);
        for (x, y, bw, bh) in blocks {
            let (i0, j0) = (x % w, y % h);
            for j in j0..(j0 + bh).min(h) {
                for i in i0..(i0 + bw).min(w) {
                    grid.set_passable(cell(i, j), CLASS, false);
                }
            }
        }
        let map = PassMap::build(&grid, CLASS);
        check_against_astar(&map, &table, cell(si, sj), &goal)?;
        for (l, &p) in table.points().iter().enumerate() {
            if !map.is_passable(p) {
                continue;
            }
            let fine = exact(&map, &[p]);
            for (c, d) in fine.iter().enumerate() {
                if let Some(d) = *d {
                    let b = table.distance_bound(l, cell(c as u32 % w, c as u32 / w));
                    prop_assert!(b.is_some_and(|b| b <= d), "landmark {}: stale bound {:?} vs distance {}", l, b, d);
                }
            }
        }
    }
}

/// Degenerate maps: no navcell at all gives no landmark, and searches still answer like plain
/// A*; a tiny largest area caps the count; `MAX_LANDMARKS` caps it on a big one.
#[test]
fn degenerate_maps_and_caps() {
    // Out-of-range questions get `None`, not another navcell's data.
    let open = PassMap::build(&NavGrid::new(10, 10, 1, Fixed::ONE).unwrap(), CLASS);
    let two = Landmarks::build(&open, 2);
    assert_eq!(two.points().len(), 2);
    assert!(two.distance_bound(1, cell(0, 0)).is_some());
    assert_eq!(two.distance_bound(2, cell(0, 0)), None);
    assert_eq!(two.distance_bound(0, cell(10, 0)), None);
    assert_eq!(two.distance_bound(0, cell(0, 10)), None);
    assert_eq!(Landmarks::build(&open, 0).distance_bound(0, cell(0, 0)), None);
    // All blocked.
    let mut grid = NavGrid::new(12, 7, 1, Fixed::ONE).unwrap();
    for j in 0..7 {
        for i in 0..12 {
            grid.set_passable(cell(i, j), CLASS, false);
        }
    }
    let blocked = PassMap::build(&grid, CLASS);
    for k in [0, 1, 5, MAX_LANDMARKS, 1000] {
        let table = Landmarks::build(&blocked, k);
        assert!(table.points().is_empty(), "k = {k}");
        assert_eq!(table.memory_bytes(), 0);
        let goal = Goal::point(WorldPos::from_int(9, 3)).unwrap();
        let runs = run_all(&blocked, &table, cell(2, 2), &goal, &SearchLimits::UNLIMITED);
        for (outcome, path) in [&runs.jps_lm, &runs.plus_lm, &runs.astar_lm] {
            assert_eq!(outcome.status, PathStatus::Partial(PartialReason::StartImpassable));
            assert_eq!(path.waypoints(), &[cell(2, 2)]);
        }
    }

    // One open 1×1 map: its one navcell whenever at least one is asked, and searches there work.
    let single = PassMap::build(&NavGrid::new(1, 1, 1, Fixed::ONE).unwrap(), CLASS);
    assert_eq!(Landmarks::build(&single, 0).points(), &[] as &[Navcell]);
    let table = Landmarks::build(&single, 7);
    assert_eq!(table.points(), &[cell(0, 0)]);
    let runs = run_all(&single, &table, cell(0, 0), &Goal::navcell_center(0, 0, Fixed::ONE), &SearchLimits::UNLIMITED);
    for (outcome, path) in [&runs.jps_lm, &runs.plus_lm, &runs.astar_lm] {
        assert_eq!(outcome.status, PathStatus::Complete);
        assert_eq!(path.waypoints(), &[cell(0, 0)]);
    }

    // The largest area has three navcells (a blocked column splits off two smaller ones).
    let mut grid = NavGrid::new(9, 1, 1, Fixed::ONE).unwrap();
    for i in [2, 6] {
        grid.set_passable(cell(i, 0), CLASS, false);
    }
    let strips = PassMap::build(&grid, CLASS);
    let table = Landmarks::build(&strips, 10);
    let mut points = table.points().to_vec();
    points.sort_by_key(|c| c.i);
    assert_eq!(points, [cell(3, 0), cell(4, 0), cell(5, 0)]);
    // Farthest-first from the area's lowest navcell (3, 0): (5, 0), then (3, 0), then (4, 0).
    assert_eq!(table.points(), &[cell(5, 0), cell(3, 0), cell(4, 0)]);
    // A search inside a smaller area (no landmark reaches it) falls back to the octile distance:
    // exactly plain JPS.
    let goal = Goal::navcell_center(0, 0, Fixed::ONE);
    let mut scratch = SearchScratch::new();
    let (mut a, mut b) = (Path::new(), Path::new());
    let plain =
        pathing::find_path_jps(&strips, &pathing::Accelerators::NONE, cell(1, 0), &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut a);
    let with = pathing::find_path_jps(
        &strips,
        &pathing::Accelerators { jump_table: None, landmarks: Some(&table) },
        cell(1, 0),
        &goal,
        &SearchLimits::UNLIMITED,
        &mut scratch,
        &mut b,
    );
    assert_eq!((plain, &a), (with, &b));
    assert_eq!(with.status, PathStatus::Complete);
    // From the largest area to a smaller one: unreachable, as for A*.
    let runs = run_all(&strips, &table, cell(4, 0), &goal, &SearchLimits::UNLIMITED);
    assert_eq!(runs.astar.0.status, PathStatus::Partial(PartialReason::Unreachable));
    for (outcome, _) in [&runs.jps_lm, &runs.plus_lm, &runs.astar_lm] {
        assert_eq!(outcome.status, PathStatus::Partial(PartialReason::Unreachable));
    }

    // An open 20×20 field has 400 navcells: asking for more than MAX_LANDMARKS gives exactly that.
    let open = PassMap::build(&NavGrid::new(20, 20, 1, Fixed::ONE).unwrap(), CLASS);
    for k in [MAX_LANDMARKS, MAX_LANDMARKS + 1, 400, usize::MAX] {
        let table = Landmarks::build(&open, k);
        assert_eq!(table.points().len(), MAX_LANDMARKS, "k = {k}");
        assert_eq!(table.memory_bytes(), 400 * MAX_LANDMARKS * 4);
        assert_eq!(table, Landmarks::build(&open, MAX_LANDMARKS));
    }
    // The first landmark on an open field: farthest from (0, 0) is the opposite corner.
    assert_eq!(Landmarks::build(&open, 1).points(), &[cell(19, 19)]);
    // Landmark prefixes agree: the first k of a larger table are the k of a smaller one.
    let big = Landmarks::build(&open, 12);
    assert_eq!(&big.points()[..5], Landmarks::build(&open, 5).points());
}

/// With no landmark the heuristic is the plain octile distance, so the landmark searches are the
/// plain ones exactly: same outcome, same path.
#[test]
fn zero_landmarks_are_the_plain_searches() {
    let map = PassMap::build(&maps::grid(Kind::Rooms, 70, 50, 11), CLASS);
    let table = Landmarks::build(&map, 0);
    assert!(table.points().is_empty());
    let jumps = JumpTable::build(&map);
    let mut scratch = SearchScratch::new();
    let goals = [
        Goal::point(WorldPos::from_int(65, 45)).unwrap(),
        Goal::circle(WorldPos::from_int(40, 10), Fixed::from_num(3)).unwrap(),
        Goal::inverted_circle(WorldPos::from_int(2, 2), Fixed::from_num(6)).unwrap(),
    ];
    for goal in &goals {
        for start in [cell(1, 1), cell(33, 20), cell(69, 0)] {
            let mut p = [Path::new(), Path::new(), Path::new(), Path::new(), Path::new(), Path::new()];
            let lim = &SearchLimits::UNLIMITED;
            let tables = |jump_table, landmarks| pathing::Accelerators { jump_table, landmarks };
            let jps = pathing::find_path_jps(&map, &tables(None, None), start, goal, lim, &mut scratch, &mut p[0]);
            let jps_lm = pathing::find_path_jps(&map, &tables(None, Some(&table)), start, goal, lim, &mut scratch, &mut p[1]);
            let plus = pathing::find_path_jps(&map, &tables(Some(&jumps), None), start, goal, lim, &mut scratch, &mut p[2]);
            let plus_lm = pathing::find_path_jps(&map, &tables(Some(&jumps), Some(&table)), start, goal, lim, &mut scratch, &mut p[3]);
            let astar = pathing::find_path_astar(&map, None, start, goal, lim, &mut scratch, &mut p[4]);
            let astar_lm = pathing::find_path_astar(&map, Some(&table), start, goal, lim, &mut scratch, &mut p[5]);
            assert_eq!((jps, &p[0]), (jps_lm, &p[1]), "{start} -> {goal:?}");
            assert_eq!((plus, &p[2]), (plus_lm, &p[3]), "{start} -> {goal:?}");
            assert_eq!((astar, &p[4]), (astar_lm, &p[5]), "{start} -> {goal:?}");
        }
    }
}

/// A hand-made stale table: a wall built across a corridor after the table was made forces a
/// long detour that the old distances know nothing about; the searches still find it.
#[test]
fn stale_table_after_walling_off_a_shortcut() {
    // A 40×20 field split by a wall at column 20 with a gap at rows 9..=10; the gap is walled up
    // afterwards, leaving only a gap at row 0.
    let mut grid = NavGrid::new(40, 20, 1, Fixed::ONE).unwrap();
    for j in 1..20 {
        if j != 9 && j != 10 {
            grid.set_passable(cell(20, j), CLASS, false);
        }
    }
    let table = Landmarks::build(&PassMap::build(&grid, CLASS), 8);
    grid.set_passable(cell(20, 9), CLASS, false);
    grid.set_passable(cell(20, 10), CLASS, false);
    let map = PassMap::build(&grid, CLASS);
    for goal in [Goal::navcell_center(30, 15, Fixed::ONE), Goal::circle(WorldPos::from_int(35, 12), Fixed::from_num(2)).unwrap()] {
        check_against_astar(&map, &table, cell(10, 15), &goal).unwrap();
        let runs = run_all(&map, &table, cell(10, 15), &goal, &SearchLimits::UNLIMITED);
        assert_eq!(runs.jps_lm.0.status, PathStatus::Complete);
        // The detour through row 0 is longer than the old straight-ish way through the gap.
        assert!(runs.jps_lm.1.waypoints().iter().any(|c| c.j == 0), "{:?}", runs.jps_lm.1.waypoints());
    }
}

/// The bound sharpens the search: from inside a U-shaped dead end towards a goal behind its
/// bottom, the octile distance pulls A* into the cup, while eight landmarks see the wall.
#[test]
fn landmarks_save_expansions_behind_a_dead_end() {
    let (w, h) = (48u32, 48u32);
    let mut grid = NavGrid::new(w, h, 1, Fixed::ONE).unwrap();
    // The cup: walls at columns 12 and 36 over rows 8..=34, bottom at row 34, open at the top.
    for j in 8..=34 {
        grid.set_passable(cell(12, j), CLASS, false);
        grid.set_passable(cell(36, j), CLASS, false);
    }
    for i in 12..=36 {
        grid.set_passable(cell(i, 34), CLASS, false);
    }
    let map = PassMap::build(&grid, CLASS);
    let table = Landmarks::build(&map, 8);
    assert_eq!(table.points().len(), 8);
    let (start, goal) = (cell(24, 28), Goal::navcell_center(24, 42, Fixed::ONE));
    let runs = run_all(&map, &table, start, &goal, &SearchLimits::UNLIMITED);
    let (plain, plain_path) = &runs.astar;
    let (with, with_path) = &runs.astar_lm;
    assert_eq!(plain.status, PathStatus::Complete);
    assert_eq!(with.status, PathStatus::Complete);
    assert_eq!(with_path.cost(), plain_path.cost());
    assert_eq!(Some(plain_path.cost()), exact(&map, &[start])[index(&map, cell(24, 42))]);
    assert!(
        with.expanded < plain.expanded,
        "landmarks expanded {} nodes, plain A* {}: the bound did not sharpen",
        with.expanded,
        plain.expanded
    );
    // And JPS with landmarks expands no more than plain JPS here.
    let mut scratch = SearchScratch::new();
    let plain_jps =
        pathing::find_path_jps(&map, &pathing::Accelerators::NONE, start, &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut Path::new());
    assert!(
        runs.jps_lm.0.expanded <= plain_jps.expanded,
        "JPS: {} with landmarks vs {} without",
        runs.jps_lm.0.expanded,
        plain_jps.expanded
    );
    eprintln!(
        "U-shaped dead end: A* {} -> {} expansions with 8 landmarks; JPS {} -> {}",
        plain.expanded, with.expanded, plain_jps.expanded, runs.jps_lm.0.expanded
    );
}

/// A map above the size where the coarse metric must get coarser than `>> 20` to keep the
/// longest conceivable distance below `u32::MAX` (about 2.97 million navcells): the bounds stay
/// admissible, consistent and sharp, and a search across it is exact. On an open field the exact
/// distance is the octile distance, so the whole map is checked against that closed form.
#[test]
fn large_map_bounds_stay_exact() {
    let (w, h) = (1800u32, 1650u32);
    let map = PassMap::build(&NavGrid::new(w, h, 1, Fixed::ONE).unwrap(), CLASS);
    let table = Landmarks::build(&map, 2);
    // Farthest-first on an open field: the corner opposite (0, 0), then (0, 0) itself.
    assert_eq!(table.points(), &[cell(w - 1, h - 1), cell(0, 0)]);
    for (l, p) in table.points().iter().enumerate() {
        for j in 0..h {
            for i in 0..w {
                let c = cell(i, j);
                let d = pathing::cost::octile(u64::from(i.abs_diff(u32::from(p.i))), u64::from(j.abs_diff(u32::from(p.j))));
                let b = table.distance_bound(l, c).unwrap();
                assert!(b <= d && b * 10_000 >= d * 9_998, "landmark {l} at {p}, navcell {c}: bound {b}, distance {d}");
                for (dx, dy, step) in [(1, 0, STRAIGHT), (0, 1, STRAIGHT), (1, 1, DIAGONAL), (-1, 1, DIAGONAL)] {
                    let (ni, nj) = (i64::from(i) + dx, i64::from(j) + dy);
                    if ni < 0 || ni >= i64::from(w) || nj >= i64::from(h) {
                        continue;
                    }
                    let m = table.distance_bound(l, cell(ni as u32, nj as u32)).unwrap();
                    assert!(b.abs_diff(m) <= step, "landmark {l}: step {c} -> ({ni}, {nj}) changes the bound by {}", b.abs_diff(m));
                }
            }
        }
    }
    let goal = Goal::navcell_center(1700, 1500, Fixed::ONE);
    let mut scratch = SearchScratch::new();
    let mut path = Path::new();
    let outcome = pathing::find_path_jps(
        &map,
        &pathing::Accelerators { jump_table: None, landmarks: Some(&table) },
        cell(3, 40),
        &goal,
        &SearchLimits::UNLIMITED,
        &mut scratch,
        &mut path,
    );
    assert_eq!(outcome.status, PathStatus::Complete);
    assert_eq!(path.cost(), pathing::cost::octile(1697, 1460));
    path.check_legal(&map).unwrap();
}
