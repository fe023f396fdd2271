//! Shared helpers of the cross-crate integration tests: locating the Moving AI benchmark set in
//! the repository, loading map/scenario pairs, and checking a search against a problem's optimal length.

use std::path::PathBuf;

pub mod any_angle;
pub mod ci;

use pathing::movingai::{self, MovingAiMap, ScenProblem};
use pathing::{Goal, PassMap, Path, PathStatus, SearchLimits, SearchOutcome, SearchScratch};

/// The thirteen Moving AI pairs of `data/movingai/`.
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

/// The folder holding the Moving AI benchmark set (`data/movingai` in the repository).
///
/// # Panics
/// When the folder is missing, which only happens in a damaged checkout: it is part of the repository.
pub fn movingai_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/movingai");
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
    /// Jump tables of the land class.
    pub land_table: pathing::JumpTable,
    /// Jump tables of the water class.
    pub water_table: pathing::JumpTable,
    /// Landmark distances of the land class.
    pub land_landmarks: pathing::Landmarks,
    /// Landmark distances of the water class.
    pub water_landmarks: pathing::Landmarks,
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
    let land_table = pathing::JumpTable::build(&land);
    let water_table = pathing::JumpTable::build(&water);
    let land_landmarks = pathing::Landmarks::build(&land, LANDMARKS);
    let water_landmarks = pathing::Landmarks::build(&water, LANDMARKS);
    Pair { name: name.to_string(), map, problems, land, water, land_table, water_table, land_landmarks, water_landmarks }
}

/// Which long-range search to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// Jump point search.
    Jps,
    /// Plain A*.
    AStar,
    /// Jump point search with jump tables.
    JpsPlus,
    /// Jump point search with the landmark heuristic.
    JpsLm,
    /// Jump point search with jump tables and the landmark heuristic.
    JpsPlusLm,
}

/// Landmarks per class in a [`Pair`]: what the benchmark and `phalanx scen --algo jps-lm` use.
pub const LANDMARKS: usize = 8;

pub use phalanx_cli::files::{length_matches, path_length};

/// Solves one problem and checks it: complete, legal and of the optimal length.
///
/// # Errors
/// A description naming the pair, the line and what differed.
pub fn check_problem(
    pair: &Pair,
    problem: &ScenProblem,
    algo: Algo,
    scratch: &mut SearchScratch,
    path: &mut Path,
) -> Result<SearchOutcome, String> {
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
pub fn solve(
    pair: &Pair,
    problem: &ScenProblem,
    algo: Algo,
    scratch: &mut SearchScratch,
    path: &mut Path,
) -> Result<(SearchOutcome, f64), String> {
    let class = pair
        .map
        .class_at(problem.start.0, problem.start.1)
        .ok_or_else(|| format!("{} line {}: start is blocked", pair.name, problem.line))?;
    let (map, table, landmarks) = if class == movingai::WATER {
        (&pair.water, &pair.water_table, &pair.water_landmarks)
    } else {
        (&pair.land, &pair.land_table, &pair.land_landmarks)
    };
    let start = pair.map.to_navcell(problem.start.0, problem.start.1).expect("checked against the map");
    let goal_cell = pair.map.to_navcell(problem.goal.0, problem.goal.1).expect("checked against the map");
    let goal = Goal::navcell_center(goal_cell.i, goal_cell.j, pair.map.grid.cell_size());
    let limits = &SearchLimits::UNLIMITED;
    // The algorithm names the tables the search may use; A* is the oracle and uses none.
    let jump_table = matches!(algo, Algo::JpsPlus | Algo::JpsPlusLm).then_some(table);
    let landmarks = matches!(algo, Algo::JpsLm | Algo::JpsPlusLm).then_some(landmarks);
    let outcome = match algo {
        Algo::AStar => pathing::find_path_astar(map, None, start, &goal, limits, scratch, path),
        _ => pathing::find_path_jps(map, &pathing::Accelerators { jump_table, landmarks }, start, &goal, limits, scratch, path),
    };
    Ok((outcome, path_length(path)))
}

/// Checks that a path is a legal octile walk on the map; see `pathing::Path::check_legal`.
///
/// # Errors
/// The first illegal step.
pub fn check_path_legal(map: &PassMap, path: &Path) -> Result<(), String> {
    path.check_legal(map)
}

/// Seeded grid generators for property tests: every kind of map the searches must handle.
pub mod maps {
    use pathing::{Fixed, NavGrid, Navcell, PassClass};

    /// The single class of generated grids.
    pub const CLASS: PassClass = match PassClass::new(0) {
        Some(c) => c,
        None => unreachable!(),
    };

    /// A small deterministic generator: pathing's [`pathing::SplitMix64`] with the draws the map
    /// generators use.
    pub struct Rng(pathing::SplitMix64);

    impl Rng {
        /// A generator from a seed.
        pub fn new(seed: u64) -> Self {
            Self(pathing::SplitMix64::new(seed))
        }

        /// The next 64 random bits.
        pub fn next_u64(&mut self) -> u64 {
            self.0.next_u64()
        }

        /// A number in `0..n` (n > 0).
        pub fn below(&mut self, n: u32) -> u32 {
            (self.next_u64() % u64::from(n.max(1))) as u32
        }

        /// True with probability `percent / 100`.
        pub fn chance(&mut self, percent: u32) -> bool {
            self.below(100) < percent
        }
    }

    /// The kinds of generated grid.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Kind {
        /// Nearly empty.
        Open,
        /// Independent random obstacles at the given percentage.
        Noise(u32),
        /// Rooms separated by walls with one-cell doors.
        Rooms,
        /// A perfect maze with one-wide corridors.
        Maze,
        /// Mostly blocked, with one-wide straight corridors.
        Corridors,
        /// Diagonal obstacle chains whose gaps are only passable by cutting corners.
        DiagonalGaps,
    }

    /// All kinds, for strategies.
    pub const KINDS: [Kind; 9] = [
        Kind::Open,
        Kind::Noise(10),
        Kind::Noise(25),
        Kind::Noise(40),
        Kind::Rooms,
        Kind::Maze,
        Kind::Corridors,
        Kind::DiagonalGaps,
        Kind::Noise(33),
    ];

    /// A `width × height` grid of the given kind.
    pub fn grid(kind: Kind, width: u32, height: u32, seed: u64) -> NavGrid {
        let mut rng = Rng::new(seed);
        let mut grid = NavGrid::new(width, height, 1, Fixed::ONE).expect("generated sizes are valid");
        let set = |grid: &mut NavGrid, i: u32, j: u32, passable: bool| {
            if i < width && j < height {
                grid.set_passable(Navcell::new(i as u16, j as u16), CLASS, passable);
            }
        };
        match kind {
            Kind::Open | Kind::Noise(_) => {
                let percent = if let Kind::Noise(p) = kind { p } else { 2 };
                for j in 0..height {
                    for i in 0..width {
                        if rng.chance(percent) {
                            set(&mut grid, i, j, false);
                        }
                    }
                }
            }
            Kind::Rooms => {
                let room = 3 + rng.below(5);
                for j in 0..height {
                    for i in 0..width {
                        if i % room == room - 1 || j % room == room - 1 {
                            set(&mut grid, i, j, false);
                        }
                    }
                }
                // Doors: each wall segment between two rooms gets an opening most of the time.
                for rj in 0..height.div_ceil(room) {
                    for ri in 0..width.div_ceil(room) {
                        if rng.chance(80) {
                            set(&mut grid, ri * room + room - 1, rj * room + rng.below(room - 1), true);
                        }
                        if rng.chance(80) {
                            set(&mut grid, ri * room + rng.below(room - 1), rj * room + room - 1, true);
                        }
                    }
                }
            }
            Kind::Maze => {
                for j in 0..height {
                    for i in 0..width {
                        set(&mut grid, i, j, false);
                    }
                }
                let (cw, ch) = (width.div_ceil(2), height.div_ceil(2));
                let mut seen = vec![false; (cw * ch) as usize];
                let mut stack = vec![(0u32, 0u32)];
                seen[0] = true;
                set(&mut grid, 0, 0, true);
                while let Some(&(ci, cj)) = stack.last() {
                    let mut options = Vec::new();
                    for (dx, dy) in [(1i32, 0i32), (-1, 0), (0, 1), (0, -1)] {
                        let (ni, nj) = (ci as i32 + dx, cj as i32 + dy);
                        if ni >= 0 && nj >= 0 && (ni as u32) < cw && (nj as u32) < ch && !seen[(nj as u32 * cw + ni as u32) as usize] {
                            options.push((ni as u32, nj as u32));
                        }
                    }
                    if options.is_empty() {
                        stack.pop();
                        continue;
                    }
                    let (ni, nj) = options[rng.below(options.len() as u32) as usize];
                    seen[(nj * cw + ni) as usize] = true;
                    set(&mut grid, ci + ni, cj + nj, true);
                    set(&mut grid, 2 * ni, 2 * nj, true);
                    stack.push((ni, nj));
                }
            }
            Kind::Corridors => {
                for j in 0..height {
                    for i in 0..width {
                        set(&mut grid, i, j, false);
                    }
                }
                for _ in 0..(width + height) / 3 + 1 {
                    let (i, j) = (rng.below(width), rng.below(height));
                    let len = 2 + rng.below(width.max(height));
                    let horizontal = rng.chance(50);
                    for k in 0..len {
                        if horizontal { set(&mut grid, i + k, j, true) } else { set(&mut grid, i, j + k, true) }
                    }
                }
            }
            Kind::DiagonalGaps => {
                for _ in 0..(width + height) / 2 + 1 {
                    let (mut i, mut j) = (rng.below(width) as i64, rng.below(height) as i64);
                    let dx = if rng.chance(50) { 1 } else { -1 };
                    for _ in 0..width.max(height) {
                        if i < 0 || j < 0 || i >= i64::from(width) || j >= i64::from(height) {
                            break;
                        }
                        set(&mut grid, i as u32, j as u32, false);
                        i += dx;
                        j += 1;
                    }
                }
            }
        }
        grid
    }

    /// The cells reachable from `start` by 4-connected moves (which decide octile connectivity
    /// without corner cutting), as a dense flag array.
    pub fn flood(map: &pathing::PassMap, start: Navcell) -> Vec<bool> {
        let (w, h) = (map.width() as usize, map.height() as usize);
        let mut seen = vec![false; w * h];
        if !map.is_passable(start) {
            return seen;
        }
        let mut queue = std::collections::VecDeque::from([start]);
        seen[usize::from(start.j) * w + usize::from(start.i)] = true;
        while let Some(c) = queue.pop_front() {
            for (dx, dy) in [(1i32, 0i32), (-1, 0), (0, 1), (0, -1)] {
                let (ni, nj) = (i32::from(c.i) + dx, i32::from(c.j) + dy);
                if ni < 0 || nj < 0 || ni as usize >= w || nj as usize >= h {
                    continue;
                }
                let n = Navcell::new(ni as u16, nj as u16);
                let idx = nj as usize * w + ni as usize;
                if !seen[idx] && map.is_passable(n) {
                    seen[idx] = true;
                    queue.push_back(n);
                }
            }
        }
        seen
    }
}

/// Proptest strategies shared by the oracle tests.
pub mod goals {
    use pathing::{Fixed, Goal, Square, Vec2, WorldPos};
    use proptest::prelude::*;

    fn fx(bits: i64) -> Fixed {
        Fixed::from_bits(bits)
    }

    /// A goal of any shape (point, circle, rotated square and their inversions) around a random
    /// point of a `w × h` grid, including points off the grid's east edge.
    pub fn arb_goal(w: u32, h: u32) -> impl Strategy<Value = Goal> {
        let x = 0..(i64::from(w) << 16);
        let z = 0..(i64::from(h) << 16);
        let r = 0i64..(6 << 16);
        (0u8..10, x, z, r.clone(), r, -(1i64 << 16)..=(1 << 16), -(1i64 << 16)..=(1 << 16)).prop_map(move |(kind, x, z, a, b, ux, uz)| {
            let at = WorldPos::new(fx(x), fx(z));
            let u = Vec2::new(fx(ux), fx(uz));
            let square = Square::new(at, fx(a), fx(b), u, u.perp()).or_else(|_| Square::axis_aligned(at, fx(a), fx(b))).unwrap();
            match kind {
                0..=3 => Goal::point(at).unwrap(),
                4 | 5 => Goal::circle(at, fx(a)).unwrap(),
                6 => Goal::square(square),
                7 => Goal::inverted_circle(at, fx(a)).unwrap(),
                8 => Goal::inverted_square(square),
                _ => Goal::point(WorldPos::new(fx(x) + Fixed::from_num(w), fx(z))).unwrap(),
            }
        })
    }
}

/// Loads every keyframe of a replay into a world like `base` (a world of the replay's game, for
/// its rules) and checks that the loaded world's hash, kept and recomputed from scratch (its
/// derived data rebuilt on load included), is the hash the replay recorded for the turn before
/// the keyframe, which the game had before it was saved. Returns how many keyframes were checked.
///
/// # Errors
/// The first keyframe that does not load or has another hash, and what it has.
pub fn check_keyframes_load_to_recorded_hashes(replay: &replay::format::Replay, base: &sim::World) -> Result<usize, String> {
    for (turn, snapshot) in &replay.keyframes {
        let loaded = base.load_like(snapshot).map_err(|e| format!("the keyframe of turn {turn}: {e}"))?;
        let recorded =
            turn.checked_sub(1).and_then(|t| replay.digest(t)).ok_or_else(|| format!("no turn record before keyframe {turn}"))?;
        let kept = loaded.state_digest();
        let fresh = loaded.state_digest_from_scratch();
        if kept.hash != recorded.hash || fresh.hash != recorded.hash {
            let differ = |d: &sim::digest_tree::StateDigest| -> Vec<String> {
                d.components.iter().zip(&recorded.components).filter(|(a, b)| a != b).map(|(a, _)| a.0.clone()).collect()
            };
            return Err(format!(
                "the keyframe of turn {turn}, loaded: kept digest differs in {:?}, from scratch in {:?}",
                differ(&kept),
                differ(&fresh)
            ));
        }
    }
    Ok(replay.keyframes.len())
}
