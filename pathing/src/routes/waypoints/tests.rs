//! Unit tests of waypoint graphs: edges and routes against A* and Bellman-Ford oracles, and edits
//! against rebuilds.

use super::*;
use crate::test_support::{CLASS, drawn_cells, grid_from, random_grid};
use crate::{NavGrid, find_path_astar};
use proptest::prelude::*;

/// A small random case: grid, waypoints, range.
#[derive(Clone, Debug)]
struct Case {
    grid: NavGrid,
    waypoints: Vec<Navcell>,
    range: u64,
}

fn arb_case() -> impl Strategy<Value = Case> {
    (
        12u32..36,
        12u32..36,
        any::<u64>(),
        0u64..40,
        prop::collection::vec((0u16..36, 0u16..36), 0..12),
        0u64..30,
        any::<bool>(),
        0u64..STRAIGHT,
    )
        .prop_map(|(w, h, seed, density, points, steps, whole, fraction)| {
            let grid = random_grid(w, h, seed, density);
            let waypoints = points.iter().map(|&(i, j)| Navcell::new(i % w as u16, j % h as u16)).collect();
            // Whole step counts put the range exactly on straight path costs, so the `≤` edge
            // of the rule is exercised; fractions put it between costs.
            let range = steps * STRAIGHT + if whole { 0 } else { fraction };
            Case { grid, waypoints, range }
        })
}

fn params(range: u64) -> GraphParams {
    GraphParams { range, max_pairs: MAX_PAIRS }
}

fn build(nav: &ClassNav, case: &Case) -> WaypointGraph {
    WaypointGraph::build(nav, case.waypoints.clone(), &params(case.range), &mut WaypointScratch::new()).expect("test graphs are valid")
}

/// The A* oracle: cost of a shortest path, unlimited.
fn astar_cost(map: &PassMap, from: Navcell, to: Navcell) -> Option<u64> {
    let mut scratch = SearchScratch::new();
    let mut path = Path::new();
    let goal = Goal::navcell_center(to.i, to.j, map.cell_size());
    let outcome = find_path_astar(map, None, from, &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut path);
    (outcome.status == PathStatus::Complete).then(|| path.cost())
}

/// A route oracle label: total cost, hops, the id sequence, path cost.
type OracleLabel = (u64, u32, Vec<WaypointId>, u64);

/// Bellman–Ford over whole `(cost, hops, sequence)` labels, forwards from the starts: the
/// route oracle. Extending two labels of one waypoint by the same edge keeps their order (same
/// hop count means same sequence length), so the relaxation converges to the best label.
fn oracle_route(
    graph: &WaypointGraph,
    starts: &[WaypointReach],
    to: WaypointId,
    table: Option<&PriorityTable>,
) -> Option<(u64, u64, Vec<WaypointId>)> {
    let n = graph.n_waypoints() as usize;
    let extra = |k: WaypointId| match table.map_or(WaypointPriority::Open { extra_cost: 0 }, |t| t.get(k)) {
        WaypointPriority::Open { extra_cost } => Some(u64::from(extra_cost) * STRAIGHT),
        WaypointPriority::Excluded => None,
    };
    let mut labels: Vec<Option<OracleLabel>> = vec![None; n];
    for s in starts {
        let Some(x) = extra(s.waypoint) else { continue };
        let candidate = (s.cost + x, 0, vec![s.waypoint], s.cost);
        let slot = &mut labels[s.waypoint.index()];
        if slot.as_ref().is_none_or(|l| (candidate.0, candidate.1, &candidate.2) < (l.0, l.1, &l.2)) {
            *slot = Some(candidate);
        }
    }
    let edges: Vec<Edge> = graph.edges().collect();
    for _ in 0..n {
        for e in &edges {
            for (u, w) in [(e.a, e.b), (e.b, e.a)] {
                let (Some(lu), Some(xw)) = (labels[u.index()].clone(), extra(w)) else { continue };
                let mut seq = lu.2.clone();
                seq.push(w);
                let candidate = (lu.0 + e.cost + xw, lu.1 + 1, seq, lu.3 + e.cost);
                let slot = &mut labels[w.index()];
                if slot.as_ref().is_none_or(|l| (candidate.0, candidate.1, &candidate.2) < (l.0, l.1, &l.2)) {
                    *slot = Some(candidate);
                }
            }
        }
    }
    labels[to.index()].clone().map(|(total, _, seq, path_cost)| (total, path_cost, seq))
}

fn arb_priority(n: usize) -> impl Strategy<Value = Vec<WaypointPriority>> {
    prop::collection::vec(
        prop_oneof![
            6 => Just(WaypointPriority::Open { extra_cost: 0 }),
            3 => (1u16..4).prop_map(|extra_cost| WaypointPriority::Open { extra_cost }),
            1 => Just(WaypointPriority::Excluded),
        ],
        n,
    )
}

proptest! {
    /// (a) Every pair of waypoints is an edge exactly when A* finds a path of cost ≤ range
    /// between them, and the edge weight is A*'s cost, which is the same in both directions.
    #[test]
    fn edges_are_the_pairs_astar_joins_within_range(case in arb_case()) {
        let nav = ClassNav::build(&case.grid, CLASS);
        let graph = build(&nav, &case);
        let n = case.waypoints.len();
        for a in 0..n {
            for b in a + 1..n {
                let (ca, cb) = (case.waypoints[a], case.waypoints[b]);
                let forward = astar_cost(nav.pass_map(), ca, cb);
                prop_assert_eq!(forward, astar_cost(nav.pass_map(), cb, ca), "symmetry of {} and {}", ca, cb);
                let expected = forward.filter(|&c| c <= case.range);
                prop_assert_eq!(graph.edge_cost(WaypointId(a as u32), WaypointId(b as u32)), expected, "pair {} {}", a, b);
            }
        }
        let listed: Vec<Edge> = graph.edges().collect();
        prop_assert_eq!(listed.len() as u32, graph.n_edges());
        for e in &listed {
            prop_assert!(e.a < e.b);
            prop_assert_eq!(graph.edge_cost(e.b, e.a), Some(e.cost));
        }
    }

    /// (b) Routes equal the Bellman–Ford oracle with the same order (cost, hops, sequence),
    /// under random priority tables and several starts with approach costs.
    #[test]
    fn routes_match_the_bellman_ford_oracle(
        case in arb_case(),
        table in arb_priority(12),
        use_table in any::<bool>(),
        starts in prop::collection::vec((0u32..12, 0u64..4 * STRAIGHT), 1..4),
        to in 0u32..12,
    ) {
        let nav = ClassNav::build(&case.grid, CLASS);
        let graph = build(&nav, &case);
        let n = graph.n_waypoints();
        prop_assume!(n > 0);
        let table = PriorityTable::new(table[..n as usize].to_vec());
        let table = use_table.then_some(&table);
        let to = WaypointId(to % n);
        // Approach costs in whole steps make ties between starts likely.
        let starts: Vec<WaypointReach> =
            starts.iter().map(|&(s, c)| WaypointReach { waypoint: WaypointId(s % n), cost: c / STRAIGHT * STRAIGHT }).collect();
        let mut scratch = WaypointScratch::new();
        let route = graph.route_from(&starts, to, table, &mut scratch);
        let expected = oracle_route(&graph, &starts, to, table);
        prop_assert_eq!(route.as_ref().map(|r| (r.cost(), r.path_cost(), r.waypoints().to_vec())), expected);
        if let Some(route) = &route {
            for pair in route.waypoints().windows(2) {
                prop_assert!(graph.edge_cost(pair[0], pair[1]).is_some());
            }
        }
        // Every single-start route, with the same scratch reused.
        for from in 0..n {
            let from = WaypointId(from);
            let route = graph.route(from, to, table, &mut scratch);
            let expected = oracle_route(&graph, &[WaypointReach { waypoint: from, cost: 0 }], to, table);
            prop_assert_eq!(route.map(|r| (r.cost(), r.path_cost(), r.waypoints().to_vec())), expected);
        }
    }

    /// (c) After random obstruction changes, updating the class and then the graph with the
    /// dirty rectangles equals building the graph again.
    #[test]
    fn incremental_update_equals_a_rebuild(
        case in arb_case(),
        changes in prop::collection::vec((0u32..36, 0u32..36, 1u32..6, 1u32..6, any::<bool>()), 1..4),
        rounds in 1usize..3,
    ) {
        let mut grid = case.grid.clone();
        let mut nav = ClassNav::build(&grid, CLASS);
        let mut graph = build(&nav, &case);
        let mut scratch = WaypointScratch::new();
        let (w, h) = (grid.width(), grid.height());
        for round in 0..rounds {
            let mut dirty = Vec::new();
            for (k, &(i, j, rw, rh, passable)) in changes.iter().enumerate() {
                // Later rounds shift the rectangles so that they undo and redo different cells.
                let (i0, j0) = ((i + 7 * round as u32) % w, (j + 5 * round as u32 + k as u32) % h);
                let rect = CellRect::new(i0, j0, (i0 + rw).min(w), (j0 + rh).min(h));
                for jj in rect.j0..rect.j1 {
                    for ii in rect.i0..rect.i1 {
                        grid.set_passable(Navcell::new(ii as u16, jj as u16), CLASS, passable ^ (round % 2 == 1));
                    }
                }
                nav.update_rect(&grid, rect);
                dirty.push(rect);
            }
            graph.update(&nav, &dirty, &mut scratch);
            let rebuilt = WaypointGraph::build(&nav, case.waypoints.clone(), &params(case.range), &mut WaypointScratch::new())
                .expect("test graphs are valid");
            prop_assert_eq!(&graph, &rebuilt);
        }
    }

    /// (c) again with the range set to the exact cost of the path between the first two
    /// waypoints and single navcells toggled around them, one update each: paths then sit
    /// on the edge of the range, where the corner navcells of diagonal steps decide.
    #[test]
    fn incremental_update_equals_a_rebuild_at_tight_ranges(
        case in arb_case(),
        toggles in prop::collection::vec((any::<u16>(), any::<u16>()), 1..12),
    ) {
        prop_assume!(case.waypoints.len() >= 2);
        let mut grid = case.grid.clone();
        let mut nav = ClassNav::build(&grid, CLASS);
        let (a, b) = (case.waypoints[0], case.waypoints[1]);
        let tight = astar_cost(nav.pass_map(), a, b);
        prop_assume!(tight.is_some());
        let case = Case { range: tight.unwrap_or(0), ..case };
        let mut graph = build(&nav, &case);
        let mut scratch = WaypointScratch::new();
        let (w, h) = (grid.width() as u16, grid.height() as u16);
        for &(x, y) in &toggles {
            // A navcell of the pair's bounding box grown by one.
            let i = (a.i.min(b.i) + x % (a.i.abs_diff(b.i) + 3)).saturating_sub(1).min(w - 1);
            let j = (a.j.min(b.j) + y % (a.j.abs_diff(b.j) + 3)).saturating_sub(1).min(h - 1);
            let cell = Navcell::new(i, j);
            grid.set_passable(cell, CLASS, !grid.is_passable(cell, CLASS));
            let rect = CellRect::new(u32::from(i), u32::from(j), u32::from(i) + 1, u32::from(j) + 1);
            nav.update_rect(&grid, rect);
            graph.update(&nav, &[rect], &mut scratch);
            let rebuilt = WaypointGraph::build(&nav, case.waypoints.clone(), &params(case.range), &mut WaypointScratch::new())
                .expect("test graphs are valid");
            prop_assert_eq!(&graph, &rebuilt);
        }
    }

    /// The exact region test agrees with checking every navcell of the rectangle.
    #[test]
    fn region_test_matches_brute_force(
        ai in 0u16..30, aj in 0u16..30, bi in 0u16..30, bj in 0u16..30,
        reach in 0u64..40 * STRAIGHT,
        i0 in 0u32..30, j0 in 0u32..30, rw in 0u32..12, rh in 0u32..12,
    ) {
        let (a, b) = (Navcell::new(ai, aj), Navcell::new(bi, bj));
        let rect = CellRect::new(i0, j0, i0 + rw, j0 + rh);
        let mut brute = false;
        for j in rect.j0..rect.j1.min(30) {
            for i in rect.i0..rect.i1.min(30) {
                let p = Navcell::new(i as u16, j as u16);
                brute |= cell_octile(a, p) + cell_octile(p, b) <= reach;
            }
        }
        prop_assert_eq!(region_meets_rect(a, b, reach, &rect, 30, 30), brute);
    }

    /// `nearest_waypoint` and `waypoints_in_range` agree with A* from the start's navcell.
    #[test]
    fn waypoints_in_range_match_astar(case in arb_case(), si in 0u16..36, sj in 0u16..36) {
        let nav = ClassNav::build(&case.grid, CLASS);
        let graph = build(&nav, &case);
        let start = Navcell::new(si % case.grid.width() as u16, sj % case.grid.height() as u16);
        let at = WorldPos::new(Fixed::from_num(start.i) + Fixed::from_bits(1 << 15), Fixed::from_num(start.j) + Fixed::from_bits(3 << 14));
        let mut expected = Vec::new();
        for (k, &cell) in case.waypoints.iter().enumerate() {
            if let Some(cost) = astar_cost(nav.pass_map(), start, cell).filter(|&c| c <= case.range) {
                expected.push(WaypointReach { waypoint: WaypointId(k as u32), cost });
            }
        }
        let mut scratch = WaypointScratch::new();
        let mut found = Vec::new();
        graph.waypoints_in_range(&nav, at, &mut scratch, &mut found);
        prop_assert_eq!(&found, &expected);
        let nearest = expected.iter().min_by_key(|r| (r.cost, r.waypoint)).copied();
        prop_assert_eq!(graph.nearest_waypoint(&nav, at, &mut scratch), nearest);
    }
}

/// Builds a grid from rows written north first (`#` impassable), with waypoints at the
/// digits (`0`–`9` in id order), and renders the graph with the route from `from` to `to` and
/// its legs. The only caller of the API in the example tests.
#[track_caller]
fn check(rows: &[&str], range_steps: u32, from: u32, to: u32, table: Option<&PriorityTable>, expected: &str) {
    let grid = grid_from(rows);
    let mut found: Vec<(char, Navcell)> = drawn_cells(rows).filter(|&(_, ch)| ch.is_ascii_digit()).map(|(cell, ch)| (ch, cell)).collect();
    found.sort_unstable();
    let waypoints: Vec<Navcell> = found.iter().map(|&(_, c)| c).collect();
    let nav = ClassNav::build(&grid, CLASS);
    let mut scratch = WaypointScratch::new();
    let graph = WaypointGraph::build(&nav, waypoints, &params(range_of_navcells(range_steps)), &mut scratch).expect("a valid test graph");
    let route = graph.route(WaypointId(from), WaypointId(to), table, &mut scratch);
    let mut legs = Vec::new();
    if let Some(route) = &route {
        for pair in route.waypoints().windows(2) {
            let (a, b) = (graph.cell(pair[0]), graph.cell(pair[1]));
            let mut path = Path::new();
            let goal = Goal::navcell_center(b.i, b.j, Fixed::ONE);
            let outcome = find_path(&nav, a, &goal, &SearchLimits::UNLIMITED, &mut SearchScratch::new(), &mut path);
            assert_eq!(outcome.status, PathStatus::Complete);
            assert_eq!(Some(path.cost()), graph.edge_cost(pair[0], pair[1]), "a leg costs its edge's weight");
            legs.push(path);
        }
    }
    let text = graph.render_ascii(nav.pass_map(), &legs, route.as_ref());
    assert_eq!(text, expected, "rendering:\n{text}");
}

/// Two rooms joined by a north door (at row 8) and a south door (waypoint 4 stands in it).
const ROOMS: [&str; 11] = [
    "...........#............",
    "...........#............",
    ".....1...........2......",
    "...........#............",
    "...........#............",
    "...........#............",
    "...0.......#.......3....",
    "...........#...##.......",
    "...........#............",
    "...........4............",
    "...........#............",
];

/// The shortest route from 0 to 3 goes through the south door.
#[test]
fn example_rooms_graph_and_route() {
    check(
        &ROOMS,
        12,
        0,
        3,
        None,
        "...........#............\n\
             ...........#............\n\
             .....1...........2......\n\
             ...........#............\n\
             ...........#............\n\
             ...........#............\n\
             ...0.......#.......3....\n\
             ....*......#...##.*.....\n\
             .....*.....#.*****......\n\
             ......*****4*...........\n\
             ...........#............\n\
             edge 0-1: 2 straight + 2 diagonal\n\
             edge 0-4: 5 straight + 3 diagonal\n\
             edge 1-2: 12 straight + 0 diagonal\n\
             edge 1-4: 3 straight + 5 diagonal\n\
             edge 2-3: 2 straight + 2 diagonal\n\
             edge 2-4: 3 straight + 5 diagonal\n\
             edge 3-4: 5 straight + 3 diagonal\n\
             route 0 > 4 > 3: 2 hops, 10 straight + 6 diagonal, extra 0 straight\n",
    );
}

/// An extra cost of 4 straight steps on waypoint 4 makes the south route (18.49 steps + 4)
/// dearer than the north one (21.66 steps), so the route takes the north door.
#[test]
fn example_rooms_route_with_extra_cost() {
    let mut table = PriorityTable::neutral(5);
    table.set(WaypointId(4), WaypointPriority::Open { extra_cost: 4 });
    check(
        &ROOMS,
        12,
        0,
        3,
        Some(&table),
        "...........#............\n\
             ...........#............\n\
             .....1***********2......\n\
             .....*.....#......*.....\n\
             .....*.....#.......*....\n\
             ....*......#.......*....\n\
             ...0.......#.......3....\n\
             ...........#...##.......\n\
             ...........#............\n\
             ...........4............\n\
             ...........#............\n\
             edge 0-1: 2 straight + 2 diagonal\n\
             edge 0-4: 5 straight + 3 diagonal\n\
             edge 1-2: 12 straight + 0 diagonal\n\
             edge 1-4: 3 straight + 5 diagonal\n\
             edge 2-3: 2 straight + 2 diagonal\n\
             edge 2-4: 3 straight + 5 diagonal\n\
             edge 3-4: 5 straight + 3 diagonal\n\
             route 0 > 1 > 2 > 3: 3 hops, 16 straight + 4 diagonal, extra 0 straight\n",
    );
}

/// A diagonal step needs both corner navcells. With the range exactly one diagonal step, the
/// corners of the step between the two waypoints lie outside the region of navcells a path
/// within range can stand on, yet blocking one removes the edge: the update must search the
/// pair again (the corner allowance of the module docs).
#[test]
fn blocking_a_corner_outside_the_region_removes_the_edge() {
    let mut grid = NavGrid::new(4, 4, 1, Fixed::ONE).expect("valid");
    let mut nav = ClassNav::build(&grid, CLASS);
    let waypoints = vec![Navcell::new(1, 1), Navcell::new(2, 2)];
    let p = params(DIAGONAL);
    let mut scratch = WaypointScratch::new();
    let mut graph = WaypointGraph::build(&nav, waypoints.clone(), &p, &mut scratch).expect("valid");
    assert_eq!(graph.edge_cost(WaypointId(0), WaypointId(1)), Some(DIAGONAL));
    let corner = Navcell::new(2, 1);
    assert!(cell_octile(waypoints[0], corner) + cell_octile(corner, waypoints[1]) > DIAGONAL);
    grid.set_passable(corner, CLASS, false);
    nav.update_rect(&grid, CellRect::new(2, 1, 3, 2));
    let searched = graph.update(&nav, &[CellRect::new(2, 1, 3, 2)], &mut scratch);
    assert_eq!(searched, 1);
    assert_eq!(graph.edge_cost(WaypointId(0), WaypointId(1)), None);
    assert_eq!(graph, WaypointGraph::build(&nav, waypoints, &p, &mut WaypointScratch::new()).expect("valid"));
}

/// A change far from every pair searches nothing again.
#[test]
fn distant_changes_search_nothing() {
    let grid = random_grid(60, 20, 7, 10);
    let nav = ClassNav::build(&grid, CLASS);
    let waypoints = vec![Navcell::new(2, 2), Navcell::new(8, 3), Navcell::new(5, 9)];
    let mut scratch = WaypointScratch::new();
    let mut graph = WaypointGraph::build(&nav, waypoints, &params(range_of_navcells(10)), &mut scratch).expect("valid");
    assert_eq!(graph.n_candidate_pairs(), 3);
    assert_eq!(graph.update(&nav, &[CellRect::new(40, 0, 60, 20)], &mut scratch), 0);
    assert_eq!(graph.update(&nav, &[CellRect::new(5, 2, 6, 3)], &mut scratch), 3);
}

#[test]
fn limits_are_checked() {
    let grid = random_grid(20, 20, 1, 0);
    let nav = ClassNav::build(&grid, CLASS);
    let mut scratch = WaypointScratch::new();
    let dense: Vec<Navcell> = (0..10).map(|k| Navcell::new(k, k)).collect();
    let tight = GraphParams { range: range_of_navcells(100), max_pairs: 44 };
    assert_eq!(WaypointGraph::build(&nav, dense.clone(), &tight, &mut scratch), Err(WaypointError::TooManyPairs { limit: 44 }));
    let enough = GraphParams { max_pairs: 45, ..tight };
    assert_eq!(WaypointGraph::build(&nav, dense, &enough, &mut scratch).map(|g| g.n_candidate_pairs()), Ok(45));
    assert_eq!(
        WaypointGraph::build(&nav, vec![Navcell::new(20, 0)], &enough, &mut scratch),
        Err(WaypointError::OffGrid { waypoint: WaypointId(0), cell: Navcell::new(20, 0) })
    );
    let far = GraphParams { range: MAX_RANGE + 1, ..enough };
    assert_eq!(
        WaypointGraph::build(&nav, Vec::new(), &far, &mut scratch),
        Err(WaypointError::RangeTooLarge { range: MAX_RANGE + 1, limit: MAX_RANGE })
    );
    let many = GraphParams { max_pairs: MAX_PAIRS + 1, ..enough };
    assert!(matches!(WaypointGraph::build(&nav, Vec::new(), &many, &mut scratch), Err(WaypointError::PairLimitTooLarge { .. })));
}

#[test]
fn ranges_convert_from_lengths() {
    assert_eq!(range_of_navcells(200), 200 * STRAIGHT);
    assert_eq!(range_of_metres(200, Fixed::ONE), 200 * STRAIGHT);
    assert_eq!(range_of_metres(200, Fixed::from_num(2)), 100 * STRAIGHT);
    assert_eq!(range_of_metres(1, Fixed::from_num(3)), STRAIGHT / 3);
}
