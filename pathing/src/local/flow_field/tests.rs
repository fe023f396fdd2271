//! Unit tests of flow fields: distances against A*, nearest reachable navcells, and the steps along
//! the field.

use super::*;
use crate::grid::nav_grid::NavGrid;
use crate::search::driver::{Path, PathStatus, SearchLimits, SearchScratch};
use crate::test_support::{CLASS, grid_from, random_grid};
use crate::{Square, Vec2, find_path_astar};
use proptest::prelude::*;

fn fx(raw_value: i64) -> Fixed {
    Fixed::from_bits(raw_value)
}

/// `grid` with navcell size `cell_raw` raw units and, when given, every navcell outside
/// `region` impassable.
fn copy_grid(grid: &NavGrid, cell_raw: i64, region: Option<CellRect>) -> NavGrid {
    let (w, h) = (grid.width(), grid.height());
    let mut out = NavGrid::new(w, h, 1, fx(cell_raw)).unwrap();
    for j in 0..h {
        for i in 0..w {
            let cell = Navcell::new(i as u16, j as u16);
            let inside = region.is_none_or(|r| r.contains(i, j));
            out.set_passable(cell, CLASS, inside && grid.is_passable(cell, CLASS));
        }
    }
    out
}

/// The one helper that builds fields in these tests: builds `goal`'s field over `region` of
/// `map` into `field`, and checks it against A* on the grid restricted to the region
/// (`restricted`): for every navcell of the grid, the distance exists exactly when A* finds a
/// path inside the region and equals its cost; following next steps is legal, stays in the
/// region and reaches a goal navcell at exactly the distance.
#[track_caller]
fn check(field: &mut FlowField, map: &PassMap, restricted: &PassMap, region: CellRect, goal: &FlowGoal) -> Result<(), TestCaseError> {
    let stats = field.build(map, region, goal);
    // A navcell goal off the grid has no navcell at all (a point goal would be clamped onto it).
    let oracle_goal = match *goal {
        FlowGoal::Cell(c) => map.is_passable(c).then(|| Goal::navcell_center(c.i, c.j, map.cell_size())),
        FlowGoal::Shape(g) => Some(g),
    };
    let (mut scratch, mut path) = (SearchScratch::new(), Path::new());
    let mut reachable = 0;
    let mut goal_cells = 0;
    for j in 0..map.height() {
        for i in 0..map.width() {
            let cell = Navcell::new(i as u16, j as u16);
            let expected = oracle_goal.and_then(|g| {
                let outcome = find_path_astar(restricted, None, cell, &g, &SearchLimits::UNLIMITED, &mut scratch, &mut path);
                (outcome.status == PathStatus::Complete).then(|| path.cost())
            });
            prop_assert_eq!(field.distance(cell), expected, "distance at {}", cell);
            let Some(distance) = expected else {
                prop_assert_eq!(field.next(cell), None);
                continue;
            };
            reachable += 1;
            goal_cells += u32::from(distance == 0);
            // Follow the next steps.
            let (mut at, mut walked, mut n_steps) = (cell, 0u64, 0);
            while let Some(to) = field.next(at) {
                let (dx, dz) = (i32::from(to.i) - i32::from(at.i), i32::from(to.j) - i32::from(at.j));
                prop_assert!(dx.abs() <= 1 && dz.abs() <= 1 && (dx, dz) != (0, 0), "step {} -> {}", at, to);
                prop_assert!(restricted.is_passable(to), "step {} -> {} enters a closed navcell", at, to);
                if dx != 0 && dz != 0 {
                    let sides = [Navcell::new(to.i, at.j), Navcell::new(at.i, to.j)];
                    prop_assert!(sides.iter().all(|&c| restricted.is_passable(c)), "step {} -> {} cuts a corner", at, to);
                    walked += DIAGONAL;
                } else {
                    walked += STRAIGHT;
                }
                at = to;
                n_steps += 1;
                prop_assert!(n_steps <= map.width() * map.height(), "next steps loop");
            }
            prop_assert_eq!(field.distance(at), Some(0), "following {} ends off the goal at {}", cell, at);
            prop_assert_eq!(walked, distance, "following {} costs its distance", cell);
        }
    }
    prop_assert_eq!(stats, FlowStats { goal_cells, reachable });
    Ok(())
}

/// Goals near `region` (in navcells of 1 m): a navcell of it or just past it, or a shape
/// centred up to 3 navcells beyond it.
fn arb_goal(region: CellRect) -> impl Strategy<Value = FlowGoal> {
    const M: i64 = 1 << 16;
    let (i0, j0, i1, j1) = (i64::from(region.i0), i64::from(region.j0), i64::from(region.i1), i64::from(region.j1));
    let (x, z) = ((i0 - 3) * M..(i1 + 3) * M, (j0 - 3) * M..(j1 + 3) * M);
    let size = 0i64..6 * M;
    let axis = (-M..=M, -M..=M);
    prop_oneof![
        2 => (region.i0..region.i1 + 2, region.j0..region.j1 + 2).prop_map(|(i, j)| FlowGoal::Cell(Navcell::new(i as u16, j as u16))),
        1 => (x.clone(), z.clone()).prop_map(|(x, z)| FlowGoal::Shape(Goal::point(WorldPos::new(fx(x), fx(z))).unwrap())),
        1 => (x.clone(), z.clone(), size.clone())
            .prop_map(|(x, z, r)| FlowGoal::Shape(Goal::circle(WorldPos::new(fx(x), fx(z)), fx(r)).unwrap())),
        1 => (x.clone(), z.clone(), size.clone())
            .prop_map(|(x, z, r)| FlowGoal::Shape(Goal::inverted_circle(WorldPos::new(fx(x), fx(z)), fx(r)).unwrap())),
        2 => (x, z, size.clone(), size, axis, any::<bool>()).prop_filter_map("parallel axes", |(x, z, hw, hh, (ux, uz), inverted)| {
            let u = Vec2::new(fx(ux), fx(uz));
            let sq = Square::new(WorldPos::new(fx(x), fx(z)), fx(hw), fx(hh), u, u.perp()).ok()?;
            Some(FlowGoal::Shape(if inverted { Goal::inverted_square(sq) } else { Goal::square(sq) }))
        }),
    ]
}

fn arb_case() -> impl Strategy<Value = (u32, u32, u64, u64, i64, CellRect, FlowGoal)> {
    (1u32..40, 1u32..40)
        .prop_flat_map(|(w, h)| {
            // Regions may be empty or end past the grid, so clipping is tested too; most are
            // at least half the grid.
            let side = |n: u32| prop_oneof![1 => 0..n + 3, 3 => n / 2..n + 3];
            let rect = (0..w / 2 + 1, 0..h / 2 + 1, side(w), side(h)).prop_map(|(i0, j0, rw, rh)| CellRect::new(i0, j0, i0 + rw, j0 + rh));
            let cell_raw = prop_oneof![Just(1i64 << 16), Just(3i64 << 15), Just(5i64 << 16)];
            (Just(w), Just(h), any::<u64>(), 0u64..45, cell_raw, rect)
        })
        .prop_flat_map(|(w, h, seed, density, cell_raw, rect)| {
            (Just(w), Just(h), Just(seed), Just(density), Just(cell_raw), Just(rect), arb_goal(rect))
        })
        .prop_map(|(w, h, seed, density, cell_raw, rect, goal)| {
            // Goal shapes were drawn for 1 m navcells: scale them with the navcell size.
            let goal = match goal {
                FlowGoal::Shape(g) => FlowGoal::Shape(scale_goal(g, cell_raw)),
                cell => cell,
            };
            (w, h, seed, density, cell_raw, rect, goal)
        })
}

/// A goal drawn on a 1 m grid, moved to a grid of `cell_raw` raw units per navcell.
fn scale_goal(goal: Goal, cell_raw: i64) -> Goal {
    let scale = |v: Fixed| fx(((i128::from(v.to_bits()) * i128::from(cell_raw)) >> 16) as i64);
    let pos = |p: WorldPos| WorldPos::new(scale(p.x), scale(p.z));
    let square = |sq: Square| Square::new(pos(sq.center()), scale(sq.hw()), scale(sq.hh()), sq.u(), sq.v()).unwrap();
    match goal.shape() {
        crate::GoalShape::Point(p) => Goal::point(pos(p)).unwrap(),
        crate::GoalShape::Circle { center, radius } => Goal::circle(pos(center), scale(radius)).unwrap(),
        crate::GoalShape::InvertedCircle { center, radius } => Goal::inverted_circle(pos(center), scale(radius)).unwrap(),
        crate::GoalShape::Square(sq) => Goal::square(square(sq)),
        crate::GoalShape::InvertedSquare(sq) => Goal::inverted_square(square(sq)),
        crate::GoalShape::RoundedSquare { square: sq, radius } => Goal::rounded_square(square(sq), scale(radius)).unwrap(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// Field distances are A*'s costs on the grid restricted to the region, present exactly
    /// when A* finds a path, and next steps walk them exactly to the goal.
    #[test]
    fn distances_equal_astar_within_the_region((w, h, seed, density, cell_raw, region, goal) in arb_case()) {
        let grid = copy_grid(&random_grid(w, h, seed, density), cell_raw, None);
        let map = PassMap::build(&grid, CLASS);
        let restricted = PassMap::build(&copy_grid(&grid, cell_raw, Some(region)), CLASS);
        check(&mut FlowField::new(), &map, &restricted, region, &goal)?;
    }

    /// A field reused after any other build answers exactly as a fresh one, down to the next
    /// steps (they depend only on the final distances).
    #[test]
    fn scratch_reuse_does_not_change_answers(
        (w, h, seed, density, cell_raw, region, goal) in arb_case(),
        other_region in (0u32..30, 0u32..30, 0u32..30, 0u32..30),
        other_seed in any::<u64>(),
    ) {
        let grid = copy_grid(&random_grid(w, h, seed, density), cell_raw, None);
        let map = PassMap::build(&grid, CLASS);
        let mut fresh = FlowField::new();
        fresh.build(&map, region, &goal);
        let other_map = PassMap::build(&random_grid(30, 30, other_seed, 20), CLASS);
        let (a, b, c, d) = other_region;
        let mut reused = FlowField::new();
        reused.build(&other_map, CellRect::new(a.min(c), b.min(d), a.max(c), b.max(d)), &FlowGoal::Cell(Navcell::new(a as u16, b as u16)));
        reused.build(&map, region, &goal);
        prop_assert_eq!(reused.stats(), fresh.stats());
        prop_assert_eq!(reused.render_ascii(), fresh.render_ascii());
        for j in 0..h as u16 {
            for i in 0..w as u16 {
                let cell = Navcell::new(i, j);
                prop_assert_eq!((reused.distance(cell), reused.next(cell)), (fresh.distance(cell), fresh.next(cell)));
            }
        }
    }

    /// The nearest reachable navcell is a brute-force minimum of (squared distance, j, i).
    #[test]
    fn nearest_reachable_is_the_brute_force_minimum(
        (w, h, seed, density, cell_raw, region, goal) in arb_case(),
        probe in (0u16..30, 0u16..30),
    ) {
        let grid = copy_grid(&random_grid(w, h, seed, density), cell_raw, None);
        let map = PassMap::build(&grid, CLASS);
        let mut field = FlowField::new();
        field.build(&map, region, &goal);
        let probe = Navcell::new(probe.0, probe.1);
        let mut expected: Option<(i64, u16, u16)> = None;
        for j in 0..h as u16 {
            for i in 0..w as u16 {
                if field.distance(Navcell::new(i, j)).is_some() {
                    let key = ((i64::from(i) - i64::from(probe.i)).pow(2) + (i64::from(j) - i64::from(probe.j)).pow(2), j, i);
                    if expected.is_none_or(|e| key < e) {
                        expected = Some(key);
                    }
                }
            }
        }
        prop_assert_eq!(field.nearest_reachable(probe), expected.map(|(_, j, i)| Navcell::new(i, j)));
    }
}

/// The tie-break, pinned on four fields, each headed by its goal. `maze`: the goal (`*`) is
/// behind a wall with one gap (row 3), a room opens to the east, and the region leaves out
/// the grid's two right-hand columns, where the bottom row's wall could be walked round, so
/// the bottom-right navcell steps west. `plus`: a hole shaped like a plus sign (an inverted
/// circle), where the centre has four equal diagonal steps and each arm three equal straight
/// ones. `pillar SW`, `pillar NE`: a pillar next to a corner goal makes the navcell beyond it
/// choose between two equal straight steps.
#[test]
fn next_steps_snapshot() {
    let maze = grid_from(&[
        "..........#...",
        "..#.......#...",
        "....####..#...",
        "....#.....#...",
        "....#..#......",
        "....####..#...",
        "..........#...",
        "...........#..",
    ]);
    let open = grid_from(&[".....", ".....", ".....", ".....", "....."]);
    let pillar = grid_from(&["....", "....", ".#..", "...."]);
    let pillar_ne = grid_from(&["....", "..#.", "....", "...."]);
    let plus = Goal::inverted_circle(WorldPos::new(fx(5 << 15), fx(5 << 15)), fx(18 << 16) / 10).unwrap();
    let cases = [
        ("maze", &maze, CellRect::new(0, 0, 12, 8), FlowGoal::Cell(Navcell::new(11, 4))),
        ("plus", &open, CellRect::full(5, 5), FlowGoal::Shape(plus)),
        ("pillar SW", &pillar, CellRect::full(4, 4), FlowGoal::Cell(Navcell::new(0, 0))),
        ("pillar NE", &pillar_ne, CellRect::full(4, 4), FlowGoal::Cell(Navcell::new(3, 3))),
    ];
    let mut field = FlowField::new();
    let mut text = String::new();
    for (name, grid, region, goal) in cases {
        let stats = field.build(&PassMap::build(grid, CLASS), region, &goal);
        text += &format!("{name}: {} goal, {} reachable\n{}", stats.goal_cells, stats.reachable, field.render_ascii());
    }
    insta::assert_snapshot!(text, @r"
        maze: 1 goal, 77 reachable
        6663333332#2
        98#6666632#2
        6668####32#2
        3398#66632#*
        3332#98#6668
        3332####98#8
        6666666698#8
        99999999984#
        plus: 20 goal, 25 reachable
        *****
        **6**
        *896*
        **6**
        *****
        pillar SW: 1 goal, 15 reachable
        2111
        2441
        2#21
        *444
        pillar NE: 1 goal, 15 reachable
        666*
        98#8
        9668
        9998
        ");
}

#[test]
fn goal_shapes_and_regions_off_the_grid() {
    let map = PassMap::build(&grid_from(&["....", "....", "...."]), CLASS);
    let mut field = FlowField::new();
    // A region wholly off the grid is empty: nothing is reachable and no direction is given.
    let stats = field.build(&map, CellRect::new(10, 10, 20, 20), &FlowGoal::Cell(Navcell::new(11, 11)));
    assert_eq!((stats, field.region().is_empty()), (FlowStats::default(), true));
    assert_eq!(field.direction(WorldPos::from_int(1, 1)), None);
    assert_eq!(field.render_ascii(), "");
    // A goal cell outside the region: nothing reachable.
    let stats = field.build(&map, CellRect::new(0, 0, 2, 3), &FlowGoal::Cell(Navcell::new(3, 0)));
    assert_eq!(stats, FlowStats { goal_cells: 0, reachable: 0 });
    // A unit circle round the corner (2, 1) clipped to the region: it touches the navcells of
    // column 1 and two of column 0 (their corner (1, 1) or edge is 1 away), not (0, 2).
    // From there east and south are equally short, and east comes first.
    let circle = Goal::circle(WorldPos::from_int(2, 1), Fixed::from_num(1)).unwrap();
    let stats = field.build(&map, CellRect::new(0, 0, 2, 3), &FlowGoal::Shape(circle));
    assert_eq!(stats, FlowStats { goal_cells: 5, reachable: 6 });
    assert_eq!(field.render_ascii(), "6*\n**\n**\n");
}

#[test]
fn direction_steps_escapes_and_rejoins() {
    let grid = grid_from(&[
        "......", //
        "..##..", "......",
    ]);
    let map = PassMap::build(&grid, CLASS);
    let mut field = FlowField::new();
    field.build(&map, CellRect::new(0, 0, 5, 3), &FlowGoal::Cell(Navcell::new(0, 1)));
    let at = |x: i64, z: i64| WorldPos::new(fx(x * (1 << 15)), fx(z * (1 << 15)));
    // Half-metre coordinates: (1, 3) is navcell (0, 1), the goal.
    assert_eq!(field.direction(at(1, 3)), Some((0, 0)));
    assert_eq!(field.direction(at(3, 3)), Some((-1, 0)), "east of the goal: west");
    assert_eq!(field.direction(at(7, 1)), Some((-1, 0)), "below the block: west");
    // Inside the block (navcell (3, 1)): straight back to the nearest reachable navcell;
    // (3, 0), (4, 1) and (3, 2) are all 1 away, and the lowest row wins.
    assert_eq!(field.direction(at(7, 3)), Some((0, -1)));
    // Outside the region (navcell (5, 2)): back to (4, 2).
    assert_eq!(field.direction(at(11, 5)), Some((-1, 0)));
    // Off the grid: clamped onto navcell (0, 2), reachable, stepping south to the goal.
    assert_eq!(field.direction(at(-40, 90)), Some((0, -1)));
    assert_eq!(field.nearest_reachable(Navcell::new(3, 1)), Some(Navcell::new(3, 0)));
}

/// A navcell on a later ring can tie with the best one found so far: (4, 3) away is on ring 4
/// at squared distance 25, (0, -5) is on ring 5 at the same distance and on a lower row, so
/// it wins, and the search must look at ring 5 before it stops.
#[test]
fn nearest_reachable_looks_one_ring_further_for_ties() {
    let mut grid = NavGrid::new(12, 12, 1, Fixed::ONE).unwrap();
    for j in 0..12 {
        for i in 0..12 {
            let keep = [(9, 9), (5, 1)].contains(&(i, j));
            grid.set_passable(Navcell::new(i, j), CLASS, keep);
        }
    }
    let map = PassMap::build(&grid, CLASS);
    let mut field = FlowField::new();
    let circle = Goal::circle(WorldPos::new(fx(11 << 15), fx(13 << 15)), Fixed::from_num(5)).unwrap();
    let stats = field.build(&map, CellRect::full(12, 12), &FlowGoal::Shape(circle));
    assert_eq!(stats, FlowStats { goal_cells: 2, reachable: 2 });
    assert_eq!(field.nearest_reachable(Navcell::new(5, 6)), Some(Navcell::new(5, 1)));
}

#[test]
fn warm_rebuild_allocates_nothing() {
    let map = PassMap::build(&random_grid(80, 80, 7, 25), CLASS);
    let mut field = FlowField::new();
    let goal = FlowGoal::Shape(Goal::circle(WorldPos::from_int(40, 40), Fixed::from_num(3)).unwrap());
    field.build(&map, CellRect::new(0, 0, 80, 80), &goal);
    let buffers = |f: &FlowField| {
        (f.pass.as_ptr(), f.dist.as_ptr(), f.moves.as_ptr(), f.straight_queue.entries.as_ptr(), f.diagonal_queue.entries.as_ptr())
    };
    let before = buffers(&field);
    field.build(&map, CellRect::new(10, 10, 70, 70), &FlowGoal::Cell(Navcell::new(40, 40)));
    field.build(&map, CellRect::new(0, 0, 80, 80), &goal);
    assert_eq!(buffers(&field), before);
}

#[test]
fn region_covers_members_waypoints_ahead_and_half_the_corridor() {
    let map = PassMap::build(&random_grid(100, 100, 1, 0), CLASS);
    let params = FlowRegionParams { ahead_distance: Fixed::from_num(25), corridor_width: Fixed::from_num(10) };
    let members = [WorldPos::from_int(20, 20), WorldPos::from_int(24, 18), WorldPos::from_int(22, 23)];
    let move_position = WorldPos::from_int(25, 21);
    // Path lengths from the move position: 15, 15 + 20 = 35 (reaches 25: last taken), then 45.
    let waypoints = [WorldPos::from_int(40, 21), WorldPos::from_int(40, 41), WorldPos::from_int(50, 41)];
    let region = flow_region(members, move_position, &waypoints, &params, &map);
    // x: 20..=40 grown by 5: navcells 15..=45; z: 18..=41 grown by 5: 13..=46.
    assert_eq!(region, FlowRegion { cells: CellRect::new(15, 13, 46, 47), last_waypoint: Some(1) });
    // Near the edge the region is clamped; without waypoints it is the members' box.
    let members = [WorldPos::from_int(2, 97), WorldPos::from_int(3, 99)];
    let region = flow_region(members, WorldPos::from_int(3, 98), &[], &params, &map);
    assert_eq!(region, FlowRegion { cells: CellRect::new(0, 92, 9, 100), last_waypoint: None });
    // A first waypoint beyond the distance is still taken.
    let region = flow_region([], move_position, &[WorldPos::from_int(90, 21)], &params, &map);
    assert_eq!(region.last_waypoint, Some(0));
    assert_eq!(region.cells, CellRect::new(20, 16, 96, 27));
}

#[test]
fn rebuild_triggers_strictly_inside_the_distance() {
    let trigger = Fixed::from_num(5);
    let move_position = WorldPos::from_int(10, 10);
    assert!(!needs_rebuild(move_position, WorldPos::from_int(13, 14), trigger), "exactly 5 away");
    assert!(needs_rebuild(move_position, WorldPos::new(fx(13 << 16), fx((14 << 16) - 1)), trigger));
    assert!(!needs_rebuild(move_position, move_position, Fixed::ZERO));
    assert!(!needs_rebuild(move_position, move_position, -trigger), "a negative distance never triggers");
}
