//! The long-range entry point against oracles: escapes from impassable starts, the substitute goal
//! for unreachable goals (checked against a brute-force nearest reachable navcell), optimal costs
//! (checked against A*), and incremental updates of everything derived from the grid (checked
//! against a rebuild).

use pathing::test_support::{Edit, edits_equal_a_rebuild};
use pathing::{
    CellRect, ClassNav, Fixed, Goal, GoalReach, GoalShape, NavGrid, Navcell, PartialReason, PassMap, Path, PathStatus, SearchLimits,
    SearchScratch, WorldPos,
};
use phalanx_tests::check_path_legal;
use phalanx_tests::goals::arb_goal;
use phalanx_tests::maps::{self, CLASS, KINDS, Kind};
use proptest::prelude::*;

fn center_cell(goal: &Goal, w: u32, h: u32) -> Navcell {
    let at = match goal.shape() {
        GoalShape::Point(p) => p,
        GoalShape::Circle { center, .. } | GoalShape::InvertedCircle { center, .. } => center,
        GoalShape::Square(sq) | GoalShape::InvertedSquare(sq) | GoalShape::RoundedSquare { square: sq, .. } => sq.center(),
    };
    let i = at.x.floor().to_num::<i64>().clamp(0, i64::from(w) - 1);
    let j = at.z.floor().to_num::<i64>().clamp(0, i64::from(h) - 1);
    Navcell::new(i as u16, j as u16)
}

/// The lowest `(d², j, i)` navcell satisfying `ok`.
fn brute_nearest(w: u32, h: u32, target: Navcell, ok: impl Fn(Navcell) -> bool) -> Option<Navcell> {
    let mut best: Option<(i64, u16, u16)> = None;
    for j in 0..h as u16 {
        for i in 0..w as u16 {
            let cell = Navcell::new(i, j);
            let d2 = (i64::from(i) - i64::from(target.i)).pow(2) + (i64::from(j) - i64::from(target.j)).pow(2);
            if ok(cell) && best.is_none_or(|b| (d2, j, i) < b) {
                best = Some((d2, j, i));
            }
        }
    }
    best.map(|(_, j, i)| Navcell::new(i, j))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn find_path_escapes_substitutes_and_stays_optimal(
        (kind, w, h, seed) in (proptest::sample::select(KINDS.to_vec()), 1u32..90, 1u32..90, any::<u64>()),
        (si, sj) in (any::<u16>(), any::<u16>()),
        goal in arb_goal(90, 90),
    ) {
        let grid = maps::grid(kind, w, h, seed);
        let nav = ClassNav::build(&grid, CLASS);
        let map = nav.pass_map();
        let start = Navcell::new(si % w as u16, sj % h as u16);
        let mut scratch = SearchScratch::new();
        let mut path = Path::new();
        let outcome = pathing::find_path(&nav, start, &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut path);
        let reachable = maps::flood(map, start);
        let at = |c: Navcell| usize::from(c.j) * w as usize + usize::from(c.i);

        if !map.is_passable(start) {
            prop_assert_eq!(outcome.status, PathStatus::Partial(PartialReason::StartImpassable));
            let expected = brute_nearest(w, h, start, |c| map.is_passable(c));
            match expected {
                Some(cell) => prop_assert_eq!(path.waypoints(), &[start, cell][..]),
                None => prop_assert_eq!(path.waypoints(), &[start][..]),
            }
            return Ok(());
        }
        check_path_legal(map, &path).map_err(TestCaseError::fail)?;
        let goal_reachable = (0..w * h).any(|k| {
            let c = Navcell::new((k % w) as u16, (k / w) as u16);
            reachable[at(c)] && goal.contains_navcell(u32::from(c.i), u32::from(c.j), Fixed::ONE, w, h)
        });
        let reach = nav.goal_reach(start, &goal, &mut scratch).unwrap();
        let mut astar_path = Path::new();
        if goal_reachable {
            prop_assert_eq!(reach, GoalReach::Reachable);
            prop_assert_eq!(outcome.status, PathStatus::Complete);
            let astar = pathing::find_path_astar(map, None, start, &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut astar_path);
            prop_assert_eq!(astar.status, PathStatus::Complete);
            prop_assert_eq!(path.cost(), astar_path.cost());
        } else {
            let nearest = brute_nearest(w, h, center_cell(&goal, w, h), |c| reachable[at(c)]).unwrap();
            prop_assert_eq!(reach, GoalReach::Unreachable { nearest });
            prop_assert_eq!(outcome.status, PathStatus::Partial(PartialReason::Unreachable));
            prop_assert_eq!(path.waypoints().last(), Some(&nearest));
            let substitute = Goal::navcell_center(nearest.i, nearest.j, Fixed::ONE);
            pathing::find_path_astar(map, None, start, &substitute, &SearchLimits::UNLIMITED, &mut scratch, &mut astar_path);
            prop_assert_eq!(path.cost(), astar_path.cost());
        }
    }

    /// After any sequence of edits, the incrementally updated bit planes, jump tables and hierarchy
    /// equal a rebuild, and so do query answers.
    #[test]
    fn incremental_class_nav_equals_a_rebuild(
        (w, h, seed) in (1u32..130, 1u32..130, any::<u64>()),
        edits in proptest::collection::vec((any::<u32>(), any::<u32>(), 1u32..20, 1u32..20, any::<bool>()), 1..8),
        goal in arb_goal(130, 130),
    ) {
        let mut grid = maps::grid(Kind::Noise(25), w, h, seed);
        let mut nav = ClassNav::build(&grid, CLASS);
        let mut scratch = SearchScratch::new();
        let (mut a, mut b) = (Path::new(), Path::new());
        let update = |nav: &mut ClassNav, grid: &NavGrid, r: CellRect, (_, _, rw, rh, _): Edit| {
            if rw * rh <= 6 {
                // Small edits go through the list-of-navcells form.
                let cells: Vec<Navcell> = (r.j0..r.j1).flat_map(|j| (r.i0..r.i1).map(move |i| Navcell::new(i as u16, j as u16))).collect();
                nav.update_cells(grid, &cells);
            } else {
                nav.update_rect(grid, r);
            }
        };
        // Query answers agree too.
        let answers_agree = |nav: &ClassNav, rebuilt: &ClassNav, (x, y, _, _, _): Edit| {
            let start = Navcell::new((x / 7 % w) as u16, (y / 7 % h) as u16);
            let one = pathing::find_path(nav, start, &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut a);
            let two = pathing::find_path(rebuilt, start, &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut b);
            if one != two || a != b {
                return Err(format!("answers differ from a rebuild's from {start:?}: {one:?} {a:?} against {two:?} {b:?}"));
            }
            Ok(())
        };
        edits_equal_a_rebuild(&mut grid, CLASS, &mut nav, &edits, |g| ClassNav::build(g, CLASS), update, answers_agree)
            .map_err(TestCaseError::fail)?;
    }
}

#[test]
fn snapping_is_bounded() {
    let mut grid = NavGrid::new(40, 10, 1, Fixed::ONE).unwrap();
    for j in 0..10 {
        for i in 0..30 {
            grid.set_passable(Navcell::new(i, j), CLASS, false);
        }
    }
    let nav = ClassNav::build(&grid, CLASS);
    assert_eq!(nav.snap(Navcell::new(25, 5), 8), Some(Navcell::new(30, 5)));
    assert_eq!(nav.snap(Navcell::new(10, 5), 8), None, "20 navcells from walkable ground is beyond 8");
    assert_eq!(nav.snap(Navcell::new(35, 5), 0), Some(Navcell::new(35, 5)));
    // World points: 8 metres on a 1-metre grid; points off the map are clamped onto it first.
    assert_eq!(nav.snap_point(WorldPos::new(Fixed::from_num(25.5), Fixed::from_num(5.25))), Some(Navcell::new(30, 5)));
    assert_eq!(nav.snap_point(WorldPos::new(Fixed::from_num(10), Fixed::from_num(5))), None);
    assert_eq!(nav.snap_point(WorldPos::new(Fixed::from_num(99), Fixed::from_num(-3))), Some(Navcell::new(39, 0)));
    let half = ClassNav::build(&NavGrid::new(40, 10, 1, Fixed::from_num(0.5)).unwrap(), CLASS);
    assert_eq!(half.snap_point(WorldPos::new(Fixed::from_num(3.25), Fixed::from_num(1))), Some(Navcell::new(6, 2)));
    assert!(PassMap::build(&grid, CLASS).check_invariants().is_ok());
}

/// The simulation's query snaps without the 8 m bound (docs/decisions.md, "Snapping is unbounded in
/// the simulation"): a start 20 navcells inside a blocked area still escapes, and a goal as deep
/// inside one still gives a path to the reachable navcell nearest it.
#[test]
fn find_path_escapes_and_substitutes_goals_beyond_the_snapping_bound() {
    let mut grid = NavGrid::new(40, 10, 1, Fixed::ONE).unwrap();
    for j in 0..10 {
        for i in 0..30 {
            grid.set_passable(Navcell::new(i, j), CLASS, false);
        }
    }
    let nav = ClassNav::build(&grid, CLASS);
    let deep = Navcell::new(10, 5);
    assert_eq!(nav.snap(deep, 8), None, "beyond the bound");
    let (mut scratch, mut path) = (SearchScratch::new(), Path::new());
    let goal = Goal::navcell_center(35, 5, Fixed::ONE);
    let outcome = pathing::find_path(&nav, deep, &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut path);
    assert_eq!(outcome.status, PathStatus::Partial(PartialReason::StartImpassable));
    assert_eq!(path.waypoints(), [deep, Navcell::new(30, 5)]);
    let into = Goal::navcell_center(10, 5, Fixed::ONE);
    let outcome = pathing::find_path(&nav, Navcell::new(35, 5), &into, &SearchLimits::UNLIMITED, &mut scratch, &mut path);
    assert_eq!(outcome.status, PathStatus::Partial(PartialReason::Unreachable));
    assert_eq!(path.waypoints(), [Navcell::new(35, 5), Navcell::new(30, 5)]);
}
