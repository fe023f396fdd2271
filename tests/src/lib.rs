//! Shared helpers of the cross-crate integration tests: locating the Moving AI benchmark set beside
//! the repository, loading map/scenario pairs, and checking a search against a problem's optimal length.

use std::path::PathBuf;

use pathing::movingai::{self, MovingAiMap, ScenProblem};
use pathing::{Goal, Path, PassMap, PathStatus, SearchLimits, SearchOutcome, SearchScratch};

/// The thirteen Moving AI pairs of `../shared/bench/movingai/`.
pub const PAIRS: [&str; 13] = [
    "arena",
    "den520d",
    "brc202d",
    "orz900d",
    "AR0011SR",
    "AcrosstheCape",
    "maze512-1-0",
    "maze512-32-0",
    "random512-10-0",
    "random512-40-0",
    "8room_000",
    "Berlin_0_256",
    "Berlin_0_1024",
];

/// The folder holding the Moving AI benchmark set (`../shared/bench/movingai` from the repository).
///
/// # Panics
/// When the folder is missing: the conformance tests need it, and CI always has it.
pub fn movingai_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/bench/movingai");
    assert!(dir.is_dir(), "the Moving AI benchmark set is missing: expected it at {}", dir.display());
    dir
}

/// A loaded map/scenario pair with both class maps built.
pub struct Pair {
    /// The pair's name (the map file name without `.map`).
    pub name: String,
    /// The parsed map.
    pub map: MovingAiMap,
    /// The parsed problems, in file order.
    pub problems: Vec<ScenProblem>,
    /// Bit planes of the land and water classes.
    pub land: PassMap,
    /// Bit planes of the water class.
    pub water: PassMap,
}

/// Loads `NAME.map` and `NAME.map.scen` from [`movingai_dir`].
///
/// # Panics
/// When a file is missing or malformed.
pub fn load_pair(name: &str) -> Pair {
    let dir = movingai_dir();
    let map_path = dir.join(format!("{name}.map"));
    let scen_path = dir.join(format!("{name}.map.scen"));
    let map_text = std::fs::read_to_string(&map_path).unwrap_or_else(|e| panic!("{}: {e}", map_path.display()));
    let scen_text = std::fs::read_to_string(&scen_path).unwrap_or_else(|e| panic!("{}: {e}", scen_path.display()));
    let map = movingai::parse_map(&map_text).unwrap_or_else(|e| panic!("{}: {e}", map_path.display()));
    let problems = movingai::parse_scen(&scen_text).unwrap_or_else(|e| panic!("{}: {e}", scen_path.display()));
    movingai::check_against_map(&problems, &map).unwrap_or_else(|e| panic!("{}: {e}", scen_path.display()));
    let land = PassMap::build(&map.grid, movingai::LAND);
    let water = PassMap::build(&map.grid, movingai::WATER);
    Pair { name: name.to_string(), map, problems, land, water }
}

/// Which long-range search to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// Jump point search.
    Jps,
    /// Plain A*.
    AStar,
}

/// The exact length of a path as a float (presentation only).
pub fn path_length(path: &Path) -> f64 {
    let steps = path.steps();
    steps.straight as f64 + steps.diagonal as f64 * std::f64::consts::SQRT_2
}

/// Whether `got` matches a scenario's printed optimal length: relative 1e-5, or within half a unit
/// of the last printed decimal when the file prints fewer decimals than that resolves (AR0011SR).
pub fn length_matches(expected_text: &str, got: f64) -> bool {
    let expected: f64 = expected_text.parse().unwrap_or(f64::NAN);
    let decimals = expected_text.split_once('.').map_or(0, |(_, frac)| frac.len());
    let print_tolerance = 0.5 * 10f64.powi(-(decimals as i32)) + 1e-9;
    (got - expected).abs() <= (1e-5 * expected.abs()).max(print_tolerance.min(0.0051))
}

/// Solves one problem and checks it: complete, legal and of the optimal length.
///
/// # Errors
/// A description naming the pair, the line and what differed.
pub fn check_problem(pair: &Pair, problem: &ScenProblem, algo: Algo, scratch: &mut SearchScratch, path: &mut Path) -> Result<SearchOutcome, String> {
    let (outcome, length) = solve(pair, problem, algo, scratch, path)?;
    let here = format!("{} line {} ({:?})", pair.name, problem.line, algo);
    if outcome.status != PathStatus::Complete {
        return Err(format!("{here}: no complete path ({:?})", outcome.status));
    }
    if !length_matches(&problem.optimal_length, length) {
        return Err(format!("{here}: length {length:.8}, expected {}", problem.optimal_length));
    }
    let map = if pair.map.class_at(problem.start.0, problem.start.1) == Some(movingai::WATER) { &pair.water } else { &pair.land };
    check_path_legal(map, path).map_err(|e| format!("{here}: {e}"))?;
    let goal = pair.map.to_navcell(problem.goal.0, problem.goal.1).expect("goal on the map");
    if path.waypoints().last() != Some(&goal) {
        return Err(format!("{here}: path ends at {:?}, not the goal {goal}", path.waypoints().last()));
    }
    Ok(outcome)
}

/// Runs one problem; returns the outcome and the path length.
///
/// # Errors
/// When the problem's start is not on a passable cell.
pub fn solve(pair: &Pair, problem: &ScenProblem, algo: Algo, scratch: &mut SearchScratch, path: &mut Path) -> Result<(SearchOutcome, f64), String> {
    let class = pair
        .map
        .class_at(problem.start.0, problem.start.1)
        .ok_or_else(|| format!("{} line {}: start is blocked", pair.name, problem.line))?;
    let map = if class == movingai::WATER { &pair.water } else { &pair.land };
    let start = pair.map.to_navcell(problem.start.0, problem.start.1).expect("checked against the map");
    let goal_cell = pair.map.to_navcell(problem.goal.0, problem.goal.1).expect("checked against the map");
    let goal = Goal::navcell_center(goal_cell.i, goal_cell.j, pair.map.grid.cell_size());
    let outcome = match algo {
        Algo::Jps => pathing::find_path_jps(map, start, &goal, &SearchLimits::UNLIMITED, scratch, path),
        Algo::AStar => pathing::find_path_astar(map, start, &goal, &SearchLimits::UNLIMITED, scratch, path),
    };
    Ok((outcome, path_length(path)))
}

/// Checks that every step of a path is a legal octile move on the map (no corner cutting) and that
/// the step counts agree with the turning points.
///
/// # Errors
/// The first illegal step.
pub fn check_path_legal(map: &PassMap, path: &Path) -> Result<(), String> {
    let cells = path.cells();
    for cell in &cells {
        if !map.is_passable(*cell) {
            return Err(format!("path crosses impassable navcell {cell}"));
        }
    }
    let (mut straight, mut diagonal) = (0u64, 0u64);
    for pair in cells.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let (dx, dy) = (i32::from(b.i) - i32::from(a.i), i32::from(b.j) - i32::from(a.j));
        if dx.abs() > 1 || dy.abs() > 1 || (dx, dy) == (0, 0) {
            return Err(format!("non-adjacent step {a} -> {b}"));
        }
        if dx != 0 && dy != 0 {
            let side1 = pathing::Navcell::new(b.i, a.j);
            let side2 = pathing::Navcell::new(a.i, b.j);
            if !map.is_passable(side1) || !map.is_passable(side2) {
                return Err(format!("diagonal step {a} -> {b} cuts a corner"));
            }
            diagonal += 1;
        } else {
            straight += 1;
        }
    }
    if (straight, diagonal) != (path.steps().straight, path.steps().diagonal) {
        return Err(format!("step counts {:?} disagree with the cells ({straight}, {diagonal})", path.steps()));
    }
    Ok(())
}
