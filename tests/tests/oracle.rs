//! Property tests of the long-range searches against oracles: JPS costs equal A* costs, a path exists
//! exactly when a flood fill reaches the goal, every step is legal, and budgets are honoured.

use pathing::{Fixed, Goal, Navcell, PartialReason, PassMap, Path, PathStatus, SearchLimits, SearchScratch, WorldPos};
use phalanx_tests::check_path_legal;
use phalanx_tests::goals::arb_goal;
use phalanx_tests::maps::{self, CLASS, KINDS, Kind};
use proptest::prelude::*;

fn arb_case() -> impl Strategy<Value = (Kind, u32, u32, u64, u32, u32, Goal)> {
    let dims = prop_oneof![
        3 => (1u32..48, 1u32..48),
        1 => (1u32..2, 1u32..130),
        1 => (1u32..130, 1u32..2),
        1 => (60u32..140, 60u32..140),
    ];
    (proptest::sample::select(KINDS.to_vec()), dims, any::<u64>())
        .prop_flat_map(|(kind, (w, h), seed)| (Just(kind), Just(w), Just(h), Just(seed), 0..w, 0..h, arb_goal(w, h)))
}

fn goal_cells(goal: &Goal, map: &PassMap) -> Vec<Navcell> {
    let mut cells = Vec::new();
    for j in 0..map.height() {
        for i in 0..map.width() {
            if goal.contains_navcell(i, j, map.cell_size(), map.width(), map.height()) {
                cells.push(Navcell::new(i as u16, j as u16));
            }
        }
    }
    cells
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn jps_equals_astar_and_the_flood_fill((kind, w, h, seed, si, sj, goal) in arb_case()) {
        let grid = maps::grid(kind, w, h, seed);
        let map = PassMap::build(&grid, CLASS);
        let start = Navcell::new(si as u16, sj as u16);
        let mut scratch = SearchScratch::new();
        let (mut jps_path, mut astar_path) = (Path::new(), Path::new());
        let jps = pathing::find_path_jps(&map, &pathing::Accelerators::NONE, start, &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut jps_path);
        let astar = pathing::find_path_astar(&map, None, start, &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut astar_path);

        let table = pathing::JumpTable::build(&map);
        let mut plus_path = Path::new();
        let plus = pathing::find_path_jps(&map, &pathing::Accelerators { jump_table: Some(&table), landmarks: None }, start, &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut plus_path);
        prop_assert_eq!(plus, jps, "JPS+ pushes the same nodes as JPS");
        prop_assert_eq!(&plus_path, &jps_path);

        prop_assert_eq!(jps.status, astar.status);
        check_path_legal(&map, &jps_path).map_err(TestCaseError::fail)?;
        check_path_legal(&map, &astar_path).map_err(TestCaseError::fail)?;
        prop_assert_eq!(jps_path.waypoints().first(), Some(&start));

        let reachable = maps::flood(&map, start);
        let cells = goal_cells(&goal, &map);
        let expect_path = map.is_passable(start) && cells.iter().any(|c| reachable[usize::from(c.j) * w as usize + usize::from(c.i)]);
        prop_assert_eq!(jps.status == PathStatus::Complete, expect_path, "flood fill disagrees: {:?}", jps.status);
        if expect_path {
            prop_assert_eq!(jps_path.cost(), astar_path.cost(), "JPS {:?} vs A* {:?}", jps_path.steps(), astar_path.steps());
            let end = *jps_path.waypoints().last().unwrap();
            prop_assert!(cells.contains(&end), "JPS ended outside the goal at {}", end);
        } else if !map.is_passable(start) {
            prop_assert_eq!(jps.status, PathStatus::Partial(PartialReason::StartImpassable));
        } else {
            prop_assert_eq!(jps.status, PathStatus::Partial(PartialReason::Unreachable));
            // Partial paths end on a reachable cell.
            let end = *jps_path.waypoints().last().unwrap();
            prop_assert!(reachable[usize::from(end.j) * w as usize + usize::from(end.i)]);
        }
    }

    #[test]
    fn node_budget_gives_a_partial_path_within_budget((kind, w, h, seed, si, sj, goal) in arb_case(), budget in 1u32..20) {
        let grid = maps::grid(kind, w, h, seed);
        let map = PassMap::build(&grid, CLASS);
        let start = Navcell::new(si as u16, sj as u16);
        let mut scratch = SearchScratch::new();
        let mut path = Path::new();
        type Search = fn(&PassMap, Navcell, &pathing::Goal, &SearchLimits, &mut SearchScratch, &mut Path) -> pathing::SearchOutcome;
        let searches: [Search; 2] = [
            |map, start, goal, limits, scratch, path| pathing::find_path_jps(map, &pathing::Accelerators::NONE, start, goal, limits, scratch, path),
            |map, start, goal, limits, scratch, path| pathing::find_path_astar(map, None, start, goal, limits, scratch, path),
        ];
        for algo in searches {
            let limited = algo(&map, start, &goal, &SearchLimits { node_budget: budget }, &mut scratch, &mut path);
            prop_assert!(limited.expanded <= budget);
            check_path_legal(&map, &path).map_err(TestCaseError::fail)?;
            let full = algo(&map, start, &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut Path::new());
            if limited.status == PathStatus::Partial(PartialReason::NodeBudget) {
                prop_assert_eq!(limited.expanded, budget);
                prop_assert!(full.expanded > budget || full.status != PathStatus::Complete);
            } else {
                prop_assert_eq!(limited.status, full.status);
            }
        }
    }
}

/// The same scratch gives the same answers whatever it was used for before.
#[test]
fn scratch_reuse_does_not_change_answers() {
    let grid = maps::grid(Kind::Noise(30), 90, 70, 7);
    let map = PassMap::build(&grid, CLASS);
    let small = PassMap::build(&maps::grid(Kind::Maze, 13, 9, 3), CLASS);
    let goal = Goal::point(WorldPos::from_int(80, 60)).unwrap();
    let start = Navcell::new(2, 3);
    let mut fresh_path = Path::new();
    let fresh = pathing::find_path_jps(
        &map,
        &pathing::Accelerators::NONE,
        start,
        &goal,
        &SearchLimits::UNLIMITED,
        &mut SearchScratch::new(),
        &mut fresh_path,
    );
    let mut scratch = SearchScratch::new();
    let mut path = Path::new();
    for round in 0..5 {
        let other = Goal::circle(WorldPos::from_int(round * 3, 4), Fixed::from_num(2)).unwrap();
        pathing::find_path_astar(&small, None, Navcell::new(0, 0), &other, &SearchLimits::UNLIMITED, &mut scratch, &mut path);
        let again =
            pathing::find_path_jps(&map, &pathing::Accelerators::NONE, start, &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut path);
        assert_eq!(again, fresh);
        assert_eq!(path, fresh_path);
    }
}
