//! Snapshot tests: hand-written maps in, ASCII renderings of the path and the expanded nodes out.
//! They pin the tie-break of both searches (which of several equal-cost paths is returned) and show
//! the no-corner-cutting rule at work. Legend: see `pathing::render_ascii`.

use pathing::test_support::{drawn_cells, map_from};
use pathing::{
    Fixed, Goal, Layers, NavGrid, Navcell, PassMap, Path, SearchLimits, SearchOutcome, SearchScratch, Square, Vec2, WorldPos, render_ascii,
};

/// Parses a picture (north row first): `#` blocked, `S` start, `G` point goal, anything else passable.
fn parse(picture: &str) -> (PassMap, Navcell, Option<Navcell>) {
    let rows: Vec<&str> = picture.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let (mut start, mut goal) = (None, None);
    for (cell, ch) in drawn_cells(&rows) {
        match ch {
            'S' => start = Some(cell),
            'G' => goal = Some(cell),
            _ => {}
        }
    }
    (map_from(&rows), start.expect("picture has an S"), goal)
}

/// Runs both searches on a picture and renders each result; the only caller of the search API here.
#[track_caller]
fn check(picture: &str, goal: Option<Goal>, limits: SearchLimits) -> String {
    let (map, start, goal_cell) = parse(picture);
    let goal = goal.unwrap_or_else(|| {
        let g = goal_cell.expect("picture has a G or a goal is given");
        Goal::navcell_center(g.i, g.j, Fixed::ONE)
    });
    let mut out = String::new();
    let mut scratch = SearchScratch::new();
    let mut path = Path::new();
    let mut costs = Vec::new();
    type Search = fn(&PassMap, Navcell, &Goal, &SearchLimits, &mut SearchScratch, &mut Path) -> SearchOutcome;
    let searches: [(&str, Search); 2] = [
        ("jps", |map, start, goal, limits, scratch, path| {
            pathing::find_path_jps(map, &pathing::Accelerators::NONE, start, goal, limits, scratch, path)
        }),
        ("astar", |map, start, goal, limits, scratch, path| pathing::find_path_astar(map, None, start, goal, limits, scratch, path)),
    ];
    for (name, search) in searches {
        let outcome = search(&map, start, &goal, &limits, &mut scratch, &mut path);
        let expanded = scratch.closed_cells();
        let steps = path.steps();
        costs.push((outcome.status, path.cost()));
        out.push_str(&format!(
            "{name}: {:?}, expanded {}, {} straight + {} diagonal, turning points {:?}\n",
            outcome.status,
            outcome.expanded,
            steps.straight,
            steps.diagonal,
            path.waypoints().iter().map(|c| (c.i, c.j)).collect::<Vec<_>>()
        ));
        out.push_str(&render_ascii(&map, &Layers { path: Some(&path), expanded: &expanded, goal: Some(&goal) }));
    }
    // Complete paths are optimal, so both searches agree on their cost. Partial paths need not
    // agree: each ends at the best node *it* expanded.
    let complete = pathing::PathStatus::Complete;
    if limits == SearchLimits::UNLIMITED {
        assert_eq!(costs[0].0, costs[1].0, "JPS and A* disagree on reachability");
    }
    if costs[0].0 == complete && costs[1].0 == complete {
        assert_eq!(costs[0].1, costs[1].1, "JPS and A* disagree on the cost");
    }
    out
}

#[test]
fn corner_cutting_trap() {
    // A diagonal chain of blocked cells: a unit could slip through its gaps only by cutting
    // corners, so the path must go around its lower end.
    insta::assert_snapshot!(check(
        "
        .....#....
        .S..#..G..
        ...#......
        ..#.......
        ..........
        ",
        None,
        SearchLimits::UNLIMITED,
    ));
}

#[test]
fn equal_cost_ties_in_an_open_room() {
    // Many shortest paths exist; the tie-break picks one, the same on every machine.
    insta::assert_snapshot!(check(
        "
        .........
        .......G.
        .........
        .........
        .S.......
        ",
        None,
        SearchLimits::UNLIMITED,
    ));
}

#[test]
fn around_a_long_wall() {
    insta::assert_snapshot!(check(
        "
        ..............
        ..####........
        .....#........
        .S...#.....G..
        .....#........
        ..####........
        ..............
        ",
        None,
        SearchLimits::UNLIMITED,
    ));
}

#[test]
fn circle_and_rotated_square_goals() {
    let picture = "
        ................
        ................
        ....#######.....
        ................
        .S..............
        ................
        ";
    let circle = Goal::circle(WorldPos::from_int(12, 5), Fixed::from_num(2)).unwrap();
    let s = Fixed::from_bits(46341); // ≈ 1/√2
    let square =
        Square::new(WorldPos::from_int(12, 2), Fixed::from_num(3), Fixed::from_bits(1 << 15), Vec2::new(s, s), Vec2::new(-s, s)).unwrap();
    let mut out = check(picture, Some(circle), SearchLimits::UNLIMITED);
    out.push_str(&check(picture, Some(Goal::square(square)), SearchLimits::UNLIMITED));
    insta::assert_snapshot!(out);
}

#[test]
fn inverted_goals_lead_out_of_the_shape() {
    let picture = "
        ...........
        ...........
        .....S.....
        .....#.....
        ...........
        ";
    let circle = Goal::inverted_circle(WorldPos::from_int(5, 2), Fixed::from_num(2)).unwrap();
    let square = Square::axis_aligned(WorldPos::from_int(5, 2), Fixed::from_num(3), Fixed::from_num(2)).unwrap();
    let mut out = check(picture, Some(circle), SearchLimits::UNLIMITED);
    out.push_str(&check(picture, Some(Goal::inverted_square(square)), SearchLimits::UNLIMITED));
    insta::assert_snapshot!(out);
}

#[test]
fn unreachable_goal_gives_a_partial_path_to_the_nearest_cell() {
    insta::assert_snapshot!(check(
        "
        ......#...
        .S....#...
        ......#.G.
        ......#...
        ......#...
        ",
        None,
        SearchLimits::UNLIMITED,
    ));
}

#[test]
fn node_budget_gives_a_partial_path() {
    insta::assert_snapshot!(check(
        "
        ....................
        .S.......#......G...
        .........#..........
        ....................
        ",
        None,
        SearchLimits { node_budget: 3 },
    ));
}

/// Renders a picture's components and answers `goal_reach` for its `S` and `G`; the only caller
/// of the hierarchy API here.
#[track_caller]
fn check_hierarchy(picture: &str) -> String {
    let (map, start, goal_cell) = parse(picture);
    // Rebuild the grid the picture describes to make a ClassNav (bit planes, tables, hierarchy).
    let mut grid = NavGrid::new(map.width(), map.height(), 1, Fixed::ONE).unwrap();
    let class = pathing::PassClass::new(0).unwrap();
    for j in 0..map.height() as u16 {
        for i in 0..map.width() as u16 {
            grid.set_passable(Navcell::new(i, j), class, map.is_passable(Navcell::new(i, j)));
        }
    }
    let nav = pathing::ClassNav::build(&grid, class);
    let g = goal_cell.expect("picture has a G");
    let goal = Goal::navcell_center(g.i, g.j, Fixed::ONE);
    let reach = nav.goal_reach(start, &goal, &mut SearchScratch::new());
    let mut path = Path::new();
    let outcome = pathing::find_path(&nav, start, &goal, &SearchLimits::UNLIMITED, &mut SearchScratch::new(), &mut path);
    format!(
        "components: {}\nreach: {:?}\nfind_path: {:?}, turning points {:?}\n{}",
        nav.hierarchy().n_components(),
        reach,
        outcome.status,
        path.waypoints().iter().map(|c| (c.i, c.j)).collect::<Vec<_>>(),
        nav.hierarchy().render_components()
    )
}

#[test]
fn components_and_the_nearest_reachable_navcell() {
    // Three areas: the start's, a walled room holding the goal, and a pocket in the corner.
    insta::assert_snapshot!(check_hierarchy(
        "
        ......#.....##...
        ......#.....#.#..
        .S....#.....##...
        ......#..........
        ......####.......
        ..........###....
        .........#.G.#...
        .........#...#...
        .........#####...
        "
    ));
}
