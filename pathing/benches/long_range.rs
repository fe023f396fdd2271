//! Long-range search benchmark: our jump point searches and A* against two peer crates, on the same
//! Moving AI maps and the same queries, in one run.
//!
//! Implementations, all timed per query with [`Instant`]:
//!
//! - `ours JPS`: [`pathing::find_path_jps`] without accelerators (no corner cutting, exact
//!   fixed-point costs).
//! - `ours JPS+`: [`pathing::find_path_jps`] with a jump table, the same search with every scan
//!   replaced by a look-up in a [`JumpTable`] built once per map and class outside the timing (its
//!   build time and its 16 bytes per navcell are reported with the untimed setup).
//! - `ours JPS (LM)` and `ours JPS+ (LM)`: the same two searches with the landmark heuristic
//!   of a [`Landmarks`] table ([`LANDMARKS`] landmarks, built once per map and class outside the
//!   timing; its build time and its 4 bytes per landmark and navcell are reported with the setup).
//! - `ours A*`: [`pathing::find_path_astar`], the oracle.
//! - `pathfinding::astar`: the `pathfinding` crate's generic A* driven with the same successors as
//!   ours (8-connected, a diagonal needs both orthogonal neighbours passable), the same `u64` costs
//!   ([`pathing::cost::STRAIGHT`], [`pathing::cost::DIAGONAL`]) and the octile heuristic
//!   [`pathing::cost::octile`], so that its costs are exactly ours.
//! - `grid_pathfinding JPS (corner-cutting)`: `grid_pathfinding`'s JPS (default settings, improved
//!   pruning on). It lets diagonals cut corners, so it solves an easier problem with shorter paths;
//!   its lengths are reported, never checked. Tables call it `grid_pathfinding` for short.
//!
//! Maps, scenarios, jump tables and every peer structure are built outside the timed region. Each query runs
//! `R` times per implementation, the implementations interleaved (rotating order) so they share the
//! machine's noise; a query's time is the median of its runs. Every answer is checked: our four
//! jump point searches, ours A* and `pathfinding::astar` must return the same exact `u64` cost,
//! equal to the scenario's optimal length (relative 1e-5, or the file's print precision); the
//! paths of ours JPS and ours JPS (LM) must be legal; and each JPS+ must return exactly the path
//! and [`SearchOutcome`] of the JPS with the same heuristic.
//!
//! The speed-up targets are judged separately for each of our four jump point searches, and the
//! summary says which of them meets each.
//!
//! Modes:
//!
//! - `cargo bench -p phalanx-pathing --bench long_range`: the full run (cargo passes `--bench`).
//! - `PHALANX_BENCH_QUICK=1`, or no `--bench` argument (`cargo test --benches`): 3 short-to-medium
//!   problems per map, 1 run each, so the smoke test takes seconds even unoptimized.
//! - `PHALANX_BENCH_PROBLEMS=N`: problems per map (default 40).
//! - `PHALANX_BENCH_REPS=R`: runs per query of our jump point searches and grid_pathfinding (default 5); ours A*
//!   and `pathfinding::astar`, which take milliseconds, get `ceil(R / 2)` (default 3).
//! - Any other argument not starting with `-` keeps only the maps whose name contains it.
//!
//! Exits with status 1 when any correctness check fails.

// A benchmark, not simulation code: it needs the wall clock to time and floats to report.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};

use grid_pathfinding::PathingGrid;
use grid_util::grid::ValueGrid;
use grid_util::point::Point;
use pathing::cost::{DIAGONAL, STRAIGHT, octile};
use pathing::movingai::{self, LAND, MovingAiMap, ScenProblem, WATER};
use pathing::{
    Accelerators, Goal, JumpTable, Landmarks, Navcell, PassClass, PassMap, Path, PathStatus, SearchLimits, SearchOutcome, SearchScratch,
    find_path_astar, find_path_jps,
};

/// Where the Moving AI files live, relative to this crate.
const MOVINGAI_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/movingai/");

/// Map families and the speed-up over `pathfinding::astar` each must reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    Dao,
    BaldursGate,
    StarCraft,
    Street,
    Rooms,
    Maze,
    Random,
}

impl Family {
    fn label(self) -> &'static str {
        match self {
            Family::Dao => "DAO",
            Family::BaldursGate => "BG",
            Family::StarCraft => "StarCraft",
            Family::Street => "street",
            Family::Rooms => "rooms",
            Family::Maze => "maze",
            Family::Random => "random",
        }
    }

    /// Required `pathfinding::astar` time / our search's time (ours JPS and ours JPS+ alike).
    fn target_vs_astar(self) -> f64 {
        match self {
            Family::Dao | Family::BaldursGate | Family::StarCraft | Family::Street => 100.0,
            Family::Rooms => 10.0,
            Family::Maze | Family::Random => 3.0,
        }
    }
}

/// The benchmarked maps, in report order.
const MAPS: [(&str, Family); 10] = [
    ("den520d", Family::Dao),
    ("brc202d", Family::Dao),
    ("orz900d", Family::Dao),
    ("AR0011SR", Family::BaldursGate),
    ("AcrosstheCape", Family::StarCraft),
    ("maze512-1-0", Family::Maze),
    ("maze512-32-0", Family::Maze),
    ("random512-40-0", Family::Random),
    ("8room_000", Family::Rooms),
    ("Berlin_0_1024", Family::Street),
];

const GP_LABEL: &str = "grid_pathfinding JPS (corner-cutting)";
/// The short name of [`GP_LABEL`] in table headers.
const GP: &str = "grid_pathfinding";

/// Bytes of a [`JumpTable`] per navcell: eight `u16` jump distances.
const JUMP_TABLE_BYTES_PER_NAVCELL: u64 = 16;

/// Landmarks per [`Landmarks`] table: enough for most of the gain on the game maps (16 halves the
/// expansions again only on random, rooms and 1-wide maze maps, for twice the memory).
const LANDMARKS: usize = 8;

/// Landmarks per table: `PHALANX_BENCH_LANDMARKS`, else [`LANDMARKS`].
fn landmark_count() -> usize {
    std::env::var("PHALANX_BENCH_LANDMARKS").ok().and_then(|v| v.parse().ok()).unwrap_or(LANDMARKS)
}

/// The seven implementations, in the order of every table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Imp {
    Jps,
    JpsPlus,
    JpsLm,
    JpsPlusLm,
    AStar,
    Pf,
    Gp,
}

const N_IMPS: usize = 7;
const IMPS: [Imp; N_IMPS] = [Imp::Jps, Imp::JpsPlus, Imp::JpsLm, Imp::JpsPlusLm, Imp::AStar, Imp::Pf, Imp::Gp];
/// Our four jump point searches, whose speed-ups are judged against the targets; their slots are
/// `0..4`, so per-search arrays of ours index by slot.
const OURS: [Imp; 4] = [Imp::Jps, Imp::JpsPlus, Imp::JpsLm, Imp::JpsPlusLm];
/// Our searches that keep a scratch and a path: the four jump point searches and ours A*.
const N_SEARCHES: usize = 5;

impl Imp {
    fn slot(self) -> usize {
        IMPS.iter().position(|&i| i == self).expect("every implementation is in IMPS")
    }

    /// The name in table headers.
    fn label(self) -> &'static str {
        match self {
            Imp::Jps => "ours JPS",
            Imp::JpsPlus => "ours JPS+",
            Imp::JpsLm => "ours JPS (LM)",
            Imp::JpsPlusLm => "ours JPS+ (LM)",
            Imp::AStar => "ours A*",
            Imp::Pf => "pathfinding::astar",
            Imp::Gp => GP,
        }
    }
}

/// Run settings, from the environment and the command line.
struct Config {
    quick: bool,
    problems_per_map: usize,
    /// Runs per query of our jump point searches and grid_pathfinding (cheap).
    reps_fast: usize,
    /// Runs per query of ours A* and pathfinding::astar (milliseconds each).
    reps_slow: usize,
    filters: Vec<String>,
}

impl Config {
    fn from_env() -> Self {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let bench_mode = args.iter().any(|a| a == "--bench");
        let env_quick = std::env::var("PHALANX_BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0");
        let quick = env_quick || !bench_mode;
        let env_usize = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<usize>().ok()).filter(|&n| n > 0);
        let filters = args.iter().filter(|a| !a.starts_with('-')).cloned().collect();
        if quick {
            Self { quick, problems_per_map: env_usize("PHALANX_BENCH_PROBLEMS").unwrap_or(3), reps_fast: 1, reps_slow: 1, filters }
        } else {
            let reps = env_usize("PHALANX_BENCH_REPS");
            Self {
                quick,
                problems_per_map: env_usize("PHALANX_BENCH_PROBLEMS").unwrap_or(40),
                reps_fast: reps.unwrap_or(5),
                reps_slow: reps.map_or(3, |r| r.div_ceil(2).max(1)),
                filters,
            }
        }
    }

    fn reps(&self, imp: Imp) -> usize {
        match imp {
            Imp::Jps | Imp::JpsPlus | Imp::JpsLm | Imp::JpsPlusLm | Imp::Gp => self.reps_fast,
            Imp::AStar | Imp::Pf => self.reps_slow,
        }
    }
}

/// A padded byte grid of one class for `pathfinding::astar`: node = `(j + 1) * (w + 2) + (i + 1)`
/// in navcell coordinates, with an impassable border so successors need no bounds checks.
struct PeerGrid {
    padded_width: u32,
    passable: Vec<bool>,
    /// Index offsets and costs of the eight moves, in the order of our A*: E, N, W, S, NE, NW, SW, SE.
    moves: [(isize, isize, isize, u64); 8],
}

impl PeerGrid {
    fn build(pass: &PassMap) -> Self {
        let (w, h) = (pass.width(), pass.height());
        let pw = w + 2;
        let mut passable = vec![false; pw as usize * (h as usize + 2)];
        for j in 0..h {
            for i in 0..w {
                passable[((j + 1) * pw + i + 1) as usize] = pass.is_passable(Navcell::new(i as u16, j as u16));
            }
        }
        let row = pw as isize;
        // (target offset, first orthogonal offset, second orthogonal offset, cost); straight moves
        // repeat the target as both orthogonals.
        let dirs: [(isize, isize); 8] = [(1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)];
        let moves = dirs.map(|(dx, dy)| {
            let target = dx + dy * row;
            if dx != 0 && dy != 0 { (target, dx, dy * row, DIAGONAL) } else { (target, target, target, STRAIGHT) }
        });
        Self { padded_width: pw, passable, moves }
    }

    fn node(&self, c: Navcell) -> u32 {
        (u32::from(c.j) + 1) * self.padded_width + u32::from(c.i) + 1
    }

    /// The legal moves from `node`: the same successors and costs as our A*.
    #[inline]
    fn successors(&self, node: u32) -> impl Iterator<Item = (u32, u64)> + '_ {
        let n = node as isize;
        self.moves.iter().filter_map(move |&(t, a, b, cost)| {
            let ok = self.passable[(n + t) as usize] && self.passable[(n + a) as usize] && self.passable[(n + b) as usize];
            ok.then_some(((n + t) as u32, cost))
        })
    }

    /// The octile heuristic to `goal`, exactly [`pathing::cost::octile`].
    #[inline]
    fn heuristic(&self, node: u32, goal: u32) -> u64 {
        let pw = self.padded_width;
        let (x, y) = (node % pw, node / pw);
        let (gx, gy) = (goal % pw, goal / pw);
        octile(u64::from(x.abs_diff(gx)), u64::from(y.abs_diff(gy)))
    }
}

/// Everything built for one class of one map, outside the timed region.
struct ClassData {
    pass: PassMap,
    table: JumpTable,
    landmarks: Landmarks,
    peer: PeerGrid,
    gp: PathingGrid,
}

/// How long the untimed structures of one class took to build.
struct BuildTimes {
    pass: Duration,
    table: Duration,
    landmarks: Duration,
    gp: Duration,
}

impl ClassData {
    fn build(map: &MovingAiMap, class: PassClass) -> (Self, BuildTimes) {
        let t = Instant::now();
        let pass = PassMap::build(&map.grid, class);
        let pass_time = t.elapsed();
        let t = Instant::now();
        let table = JumpTable::build(&pass);
        let table_time = t.elapsed();
        let t = Instant::now();
        let landmarks = Landmarks::build(&pass, landmark_count());
        let landmarks_time = t.elapsed();
        let peer = PeerGrid::build(&pass);
        let t = Instant::now();
        let gp = build_pathing_grid(map, &pass);
        let gp_time = t.elapsed();
        (
            Self { pass, table, landmarks, peer, gp },
            BuildTimes { pass: pass_time, table: table_time, landmarks: landmarks_time, gp: gp_time },
        )
    }

    /// The jump table's memory: 16 bytes per navcell.
    fn table_bytes(&self) -> u64 {
        JUMP_TABLE_BYTES_PER_NAVCELL * u64::from(self.table.width()) * u64::from(self.table.height())
    }
}

/// grid_pathfinding's grid in Moving AI coordinates (`x` east, `y` down the file): `true` = blocked.
fn build_pathing_grid(map: &MovingAiMap, pass: &PassMap) -> PathingGrid {
    let (w, h) = (map.grid.width(), map.grid.height());
    let mut grid = PathingGrid::new(w as usize, h as usize, false);
    for y in 0..h {
        for x in 0..w {
            let cell = map.to_navcell(x, y).expect("inside the map");
            if !pass.is_passable(cell) {
                grid.grid.set(x as i32, y as i32, true);
            }
        }
    }
    // Recompute the neighbour masks and jump-point flags from the raw grid, then the components
    // that its queries check first.
    grid.initialize();
    grid.generate_components();
    grid
}

/// One selected problem and what every implementation did on it.
struct Query {
    problem: ScenProblem,
    water: bool,
    start: Navcell,
    goal_cell: Navcell,
    goal: Goal,
    /// Run times per implementation, in nanoseconds.
    times: [Vec<u64>; N_IMPS],
    /// The last outcome of each of our searches, by slot.
    outcome: [Option<SearchOutcome>; N_SEARCHES],
    /// The last cost of each implementation but grid_pathfinding, by slot; `None` when incomplete.
    cost: [Option<u64>; N_IMPS],
    gp_length: Option<f64>,
    optimal: f64,
}

impl Query {
    fn new(problem: ScenProblem, water: bool, start: Navcell, goal_cell: Navcell, goal: Goal, optimal: f64) -> Self {
        Self {
            problem,
            water,
            start,
            goal_cell,
            goal,
            times: Default::default(),
            outcome: [None; N_SEARCHES],
            cost: [None; N_IMPS],
            gp_length: None,
            optimal,
        }
    }

    /// Nodes expanded by one of our searches.
    fn expanded(&self, imp: Imp) -> u32 {
        self.outcome[imp.slot()].map_or(0, |o| o.expanded)
    }

    fn median(&self, imp: Imp) -> u64 {
        let mut t = self.times[imp.slot()].clone();
        t.sort_unstable();
        t[t.len() / 2]
    }
}

/// Reusable per-search state: one scratch and one path for each of our searches, by slot.
struct Workers {
    scratch: [SearchScratch; N_SEARCHES],
    path: [Path; N_SEARCHES],
}

/// A deterministic sample of `n` problems spread over all length buckets, always including the
/// lowest and highest bucket: `n` evenly spaced ranks in the sorted list of distinct buckets, and
/// in the `k`-th chosen bucket its `k mod size`-th problem in file order. Quick mode keeps to the
/// lower half of the buckets so the unoptimized smoke run stays short.
fn select(problems: &[ScenProblem], n: usize, quick: bool) -> Vec<ScenProblem> {
    let mut buckets: Vec<u32> = problems.iter().map(|p| p.bucket).collect();
    buckets.sort_unstable();
    buckets.dedup();
    if quick {
        buckets.truncate(buckets.len().div_ceil(2));
    }
    let b = buckets.len();
    let mut ranks: Vec<usize> = if n <= 1 || b <= 1 { vec![b - 1] } else { (0..n).map(|k| k * (b - 1) / (n - 1)).collect() };
    ranks.dedup();
    ranks
        .iter()
        .enumerate()
        .map(|(k, &r)| {
            let in_bucket: Vec<&ScenProblem> = problems.iter().filter(|p| p.bucket == buckets[r]).collect();
            in_bucket[k % in_bucket.len()].clone()
        })
        .collect()
}

/// The true length of a fixed-point cost from its step counts: the cost determines them, because
/// `DIAGONAL` is odd and `STRAIGHT` a power of two far above any step count here.
fn cost_length(cost: u64) -> f64 {
    // diagonal * DIAGONAL + straight * STRAIGHT: the low 30 bits come only from the diagonal part
    // modulo 2^30, so scan small diagonal counts for the one that matches.
    let mask = STRAIGHT - 1;
    let d_mod = DIAGONAL & mask;
    let target = cost & mask;
    let mut diag = 0u64;
    let mut acc = 0u64;
    while acc != target {
        diag += 1;
        acc = (acc + d_mod) & mask;
        if diag > 1 << 24 {
            return f64::NAN;
        }
    }
    let straight = (cost - diag * DIAGONAL) / STRAIGHT;
    straight as f64 + diag as f64 * std::f64::consts::SQRT_2
}

/// Whether `got` matches a scenario's printed optimal length: relative 1e-5, or within half a unit
/// of the last printed decimal when the file prints fewer decimals than that resolves (AR0011SR).
fn length_matches(expected_text: &str, got: f64) -> bool {
    let expected: f64 = expected_text.parse().unwrap_or(f64::NAN);
    let decimals = expected_text.split_once('.').map_or(0, |(_, frac)| frac.len());
    let print_tolerance = 0.5 * 10f64.powi(-(decimals as i32)) + 1e-9;
    (got - expected).abs() <= (1e-5 * expected.abs()).max(print_tolerance.min(0.0051))
}

/// Checks that our path runs from `start` to `goal` and is a legal octile walk
/// (`Path::check_legal`).
fn check_path_legal(pass: &PassMap, path: &Path, start: Navcell, goal: Navcell) -> Result<(), String> {
    if path.waypoints().first() != Some(&start) || path.waypoints().last() != Some(&goal) {
        return Err(format!("path runs {:?} -> {:?}, expected {start} -> {goal}", path.waypoints().first(), path.waypoints().last()));
    }
    if !pass.is_passable(start) {
        return Err(format!("path starts on impassable navcell {start}"));
    }
    path.check_legal(pass)
}

/// The length of grid_pathfinding's waypoint list (consecutive waypoints are joined by a diagonal
/// run then a straight run, as its `waypoints_to_path` walks them).
fn waypoints_length(points: &[Point]) -> f64 {
    points
        .windows(2)
        .map(|w| {
            let (dx, dy) = ((w[1].x - w[0].x).unsigned_abs(), (w[1].y - w[0].y).unsigned_abs());
            let (lo, hi) = (dx.min(dy), dx.max(dy));
            f64::from(hi - lo) + f64::from(lo) * std::f64::consts::SQRT_2
        })
        .sum()
}

/// Runs one implementation once on one query; returns its time and records its answer.
fn run_once(imp: Imp, data: &ClassData, q: &mut Query, w: &mut Workers) -> u64 {
    let lim = &SearchLimits::UNLIMITED;
    match imp {
        Imp::Pf => {
            let peer = &data.peer;
            let (s, g) = (peer.node(q.start), peer.node(q.goal_cell));
            let t = Instant::now();
            let result = pathfinding::directed::astar::astar(&s, |&n| peer.successors(n), |&n| peer.heuristic(n, g), |&n| n == g);
            let dt = t.elapsed();
            q.cost[imp.slot()] = black_box(result).map(|(_, c)| c);
            dt.as_nanos() as u64
        }
        Imp::Gp => {
            let (sx, sy) = q.problem.start;
            let (gx, gy) = q.problem.goal;
            let (s, g) = (Point::new(sx as i32, sy as i32), Point::new(gx as i32, gy as i32));
            let t = Instant::now();
            let result = data.gp.get_waypoints_single_goal(s, g, false);
            let dt = t.elapsed();
            q.gp_length = black_box(result).map(|pts| waypoints_length(&pts));
            dt.as_nanos() as u64
        }
        _ => {
            let slot = imp.slot();
            let (scratch, path) = (&mut w.scratch[slot], &mut w.path[slot]);
            let (pass, start, goal) = (&data.pass, q.start, &q.goal);
            // The tables each of our searches may use, chosen before the clock starts.
            let (table, landmarks) = (Some(&data.table), Some(&data.landmarks));
            let accelerators = match imp {
                Imp::JpsPlus => Accelerators { jump_table: table, landmarks: None },
                Imp::JpsLm => Accelerators { jump_table: None, landmarks },
                Imp::JpsPlusLm => Accelerators { jump_table: table, landmarks },
                _ => Accelerators::NONE,
            };
            let t = Instant::now();
            let out = match imp {
                Imp::AStar => find_path_astar(pass, None, start, goal, lim, scratch, path),
                _ => find_path_jps(pass, &accelerators, start, goal, lim, scratch, path),
            };
            let dt = t.elapsed();
            black_box(&*path);
            q.outcome[slot] = Some(out);
            q.cost[slot] = (out.status == PathStatus::Complete).then(|| path.cost());
            dt.as_nanos() as u64
        }
    }
}

/// Per-query time distribution of one of our searches, in µs.
#[derive(Clone, Copy, Debug, Default)]
struct Dist {
    p50: f64,
    p99: f64,
    max: f64,
}

/// Per-map (or per-band) aggregates over a set of queries.
struct Stats {
    problems: usize,
    mean_opt: f64,
    mean_us: [f64; N_IMPS],
    /// Per-query distributions of our jump point searches, in the order of [`OURS`].
    dist: [Dist; 4],
    /// Mean expansions of each of our searches, by slot.
    expanded: [f64; N_SEARCHES],
    gp_len_ratio: f64,
}

impl Stats {
    fn of(queries: &[&Query]) -> Self {
        let n = queries.len().max(1) as f64;
        let mut mean_us = [0.0; N_IMPS];
        for imp in IMPS {
            mean_us[imp.slot()] = queries.iter().map(|q| q.median(imp) as f64).sum::<f64>() / n / 1000.0;
        }
        let dist = OURS.map(|imp| {
            let mut t: Vec<u64> = queries.iter().map(|q| q.median(imp)).collect();
            t.sort_unstable();
            let rank = |p: f64| {
                if t.is_empty() { 0.0 } else { t[((p * t.len() as f64).ceil() as usize).clamp(1, t.len()) - 1] as f64 / 1000.0 }
            };
            Dist { p50: rank(0.5), p99: rank(0.99), max: rank(1.0) }
        });
        let gp_ratios: Vec<f64> =
            queries.iter().filter_map(|q| q.gp_length.map(|l| if q.optimal > 0.0 { l / q.optimal } else { 1.0 })).collect();
        Self {
            problems: queries.len(),
            mean_opt: queries.iter().map(|q| q.optimal).sum::<f64>() / n,
            mean_us,
            dist,
            expanded: std::array::from_fn(|slot| queries.iter().map(|q| f64::from(q.expanded(IMPS[slot]))).sum::<f64>() / n),
            gp_len_ratio: gp_ratios.iter().sum::<f64>() / gp_ratios.len().max(1) as f64,
        }
    }

    fn mean(&self, imp: Imp) -> f64 {
        self.mean_us[imp.slot()]
    }

    fn expanded(&self, imp: Imp) -> f64 {
        self.expanded[imp.slot()]
    }

    /// `slow`'s mean time over `fast`'s: how many times faster `fast` is.
    fn ratio(&self, slow: Imp, fast: Imp) -> f64 {
        self.mean(slow) / self.mean(fast)
    }

    /// The per-query distribution of one of [`OURS`].
    fn dist(&self, imp: Imp) -> Dist {
        debug_assert!(OURS.contains(&imp));
        self.dist[imp.slot()]
    }
}

fn fmt_us(us: f64) -> String {
    if us >= 100.0 {
        format!("{us:.0}")
    } else if us >= 10.0 {
        format!("{us:.1}")
    } else {
        format!("{us:.2}")
    }
}

fn fmt_ratio(r: f64) -> String {
    if r >= 100.0 {
        format!("{r:.0}×")
    } else if r >= 10.0 {
        format!("{r:.1}×")
    } else {
        format!("{r:.2}×")
    }
}

fn fmt_mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
}

/// The result of one map.
struct MapResult {
    name: &'static str,
    family: Family,
    size: (u32, u32),
    all: Stats,
    /// Jump tables built (one per class used), their total build time and memory.
    tables: usize,
    table_build: Duration,
    table_bytes: u64,
    /// Landmark tables: their total build time and memory.
    landmarks_build: Duration,
    landmarks_bytes: u64,
    table: String,
}

/// Where two paths first differ, for a failure message.
fn path_difference(expected: &Path, got: &Path) -> String {
    let (a, b) = (expected.waypoints(), got.waypoints());
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(k) => format!("waypoint {k} is {} instead of {} ({} vs {} waypoints)", b[k], a[k], b.len(), a.len()),
        None if a.len() != b.len() => format!("{} waypoints instead of {}", b.len(), a.len()),
        None => format!("step counts {:?} instead of {:?}", got.steps(), expected.steps()),
    }
}

fn bench_map(name: &'static str, family: Family, cfg: &Config, w: &mut Workers, failures: &mut Vec<String>) -> Option<MapResult> {
    let read = |suffix: &str| {
        let path = format!("{MOVINGAI_DIR}{name}{suffix}");
        std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))
    };
    let (map_text, scen_text) = match (read(".map"), read(".map.scen")) {
        (Ok(m), Ok(s)) => (m, s),
        (Err(e), _) | (_, Err(e)) => {
            failures.push(format!("{name}: cannot read: {e}"));
            return None;
        }
    };
    let load = Instant::now();
    let map = movingai::parse_map(&map_text).unwrap_or_else(|e| panic!("{name}.map: {e}"));
    let problems = movingai::parse_scen(&scen_text).unwrap_or_else(|e| panic!("{name}.map.scen: {e}"));
    movingai::check_against_map(&problems, &map).unwrap_or_else(|e| panic!("{name}.map.scen: {e}"));
    let parse_time = load.elapsed();

    let selected = select(&problems, cfg.problems_per_map, cfg.quick);
    let mut queries = Vec::with_capacity(selected.len());
    for problem in selected {
        let Some(class) = map.class_at(problem.start.0, problem.start.1) else {
            failures.push(format!("{name} line {}: start is blocked", problem.line));
            continue;
        };
        let start = map.to_navcell(problem.start.0, problem.start.1).expect("checked against the map");
        let goal_cell = map.to_navcell(problem.goal.0, problem.goal.1).expect("checked against the map");
        let goal = Goal::navcell_center(goal_cell.i, goal_cell.j, map.grid.cell_size());
        let optimal = problem.optimal_length.parse().unwrap_or(f64::NAN);
        queries.push(Query::new(problem, class == WATER, start, goal_cell, goal, optimal));
    }

    // Build per class only what the selected problems use.
    let (land, land_times) = ClassData::build(&map, LAND);
    let water = queries.iter().any(|q| q.water).then(|| ClassData::build(&map, WATER));
    let class_of = |q: &Query| {
        if q.water { &water.as_ref().expect("built when used").0 } else { &land }
    };

    // Warm-up: grow the scratches to this map before timing anything.
    for scratch in &mut w.scratch {
        scratch.reserve(&land.pass);
    }
    if let Some(q) = queries.first() {
        let mut probe = Query::new(q.problem.clone(), q.water, q.start, q.goal_cell, q.goal, q.optimal);
        for imp in [Imp::Jps, Imp::JpsPlus, Imp::JpsLm, Imp::JpsPlusLm, Imp::AStar] {
            run_once(imp, class_of(&probe), &mut probe, w);
        }
    }

    let bench_start = Instant::now();
    let max_reps = cfg.reps_fast.max(cfg.reps_slow);
    for q in &mut queries {
        let data = class_of(q);
        for rep in 0..max_reps {
            for k in 0..IMPS.len() {
                let imp = IMPS[(k + rep) % IMPS.len()];
                if rep < cfg.reps(imp) {
                    let ns = run_once(imp, data, q, w);
                    q.times[imp.slot()].push(ns);
                }
            }
        }
        // Verify, outside the timing. `run_once` kept the last answer of each implementation.
        let here = format!("{name} line {} (bucket {}, optimal {})", q.problem.line, q.problem.bucket, q.problem.optimal_length);
        for imp in [Imp::Jps, Imp::JpsPlus, Imp::JpsLm, Imp::JpsPlusLm, Imp::AStar, Imp::Pf] {
            match q.cost[imp.slot()] {
                None => failures.push(format!("{here}: {} found no complete path", imp.label())),
                Some(c) if !length_matches(&q.problem.optimal_length, cost_length(c)) => {
                    failures.push(format!("{here}: {} length {:.8} (cost {c}) is not the optimum", imp.label(), cost_length(c)));
                }
                Some(_) => {}
            }
        }
        let reference = q.cost[Imp::AStar.slot()];
        for imp in [Imp::Jps, Imp::JpsPlus, Imp::JpsLm, Imp::JpsPlusLm, Imp::Pf] {
            let c = q.cost[imp.slot()];
            if c.is_some() && reference.is_some() && c != reference {
                failures.push(format!("{here}: {} cost {c:?} differs from ours A* {reference:?}", imp.label()));
            }
        }
        // Only a search's own runs write its path, so each still holds this query's path: those
        // of ours JPS and ours JPS (LM) must be legal, and each JPS+ must have returned exactly
        // what the JPS with the same heuristic returned.
        for (online, plus) in [(Imp::Jps, Imp::JpsPlus), (Imp::JpsLm, Imp::JpsPlusLm)] {
            let (path, plus_path) = (&w.path[online.slot()], &w.path[plus.slot()]);
            if q.cost[online.slot()].is_some()
                && let Err(e) = check_path_legal(&data.pass, path, q.start, q.goal_cell)
            {
                failures.push(format!("{here}: {} path: {e}", online.label()));
            }
            if q.outcome[plus.slot()] != q.outcome[online.slot()] {
                failures.push(format!(
                    "{here}: {} outcome {:?} differs from {} {:?}",
                    plus.label(),
                    q.outcome[plus.slot()],
                    online.label(),
                    q.outcome[online.slot()]
                ));
            }
            if plus_path != path {
                failures.push(format!(
                    "{here}: {} path differs from {}: {}",
                    plus.label(),
                    online.label(),
                    path_difference(path, plus_path)
                ));
                if q.cost[plus.slot()].is_some()
                    && let Err(e) = check_path_legal(&data.pass, plus_path, q.start, q.goal_cell)
                {
                    failures.push(format!("{here}: {} path: {e}", plus.label()));
                }
            }
        }
        if q.gp_length.is_none() {
            failures.push(format!("{here}: {GP_LABEL} found no path (reported, not a bug of ours)"));
        }
    }
    let bench_time = bench_start.elapsed();

    // Per-map table: quartile bands of the sampled problems by bucket, then all of them.
    let mut order: Vec<&Query> = queries.iter().collect();
    order.sort_by_key(|q| (q.problem.bucket, q.problem.line));
    let mut table = String::new();
    let (width, height) = (map.grid.width(), map.grid.height());
    let _ = writeln!(
        table,
        "### {name} ({}, {width}×{height}, {} of {} problems, runs per query: {} fast / {} slow)\n",
        family.label(),
        queries.len(),
        problems.len(),
        cfg.reps_fast,
        cfg.reps_slow
    );
    let mut header = String::from("| band (buckets) | problems | mean optimal length |");
    for imp in IMPS {
        let _ = write!(header, " {} µs |", imp.label());
    }
    for imp in OURS {
        let _ = write!(header, " {} / {} |", Imp::Pf.label(), imp.label());
    }
    for imp in [Imp::Jps, Imp::JpsLm, Imp::AStar] {
        let _ = write!(header, " {} expansions |", imp.label());
    }
    for imp in OURS {
        let _ = write!(header, " {0} p50 µs | {0} p99 µs |", imp.label());
    }
    let columns = 3 + N_IMPS + OURS.len() + 3 + 2 * OURS.len();
    let _ = writeln!(table, "{header}\n| --- |{}", " ---: |".repeat(columns - 1));
    let n = order.len();
    let mut bands: Vec<(String, Vec<&Query>)> = Vec::new();
    if n >= 8 {
        for b in 0..4 {
            let part: Vec<&Query> = order[b * n / 4..(b + 1) * n / 4].to_vec();
            let label = format!("Q{} ({}–{})", b + 1, part[0].problem.bucket, part[part.len() - 1].problem.bucket);
            bands.push((label, part));
        }
    }
    bands.push(("**all**".to_string(), order.clone()));
    for (label, part) in &bands {
        let s = Stats::of(part);
        let mut row = format!("| {label} | {} | {:.1} |", s.problems, s.mean_opt);
        for imp in IMPS {
            let _ = write!(row, " {} |", fmt_us(s.mean(imp)));
        }
        for imp in OURS {
            let _ = write!(row, " {} |", fmt_ratio(s.ratio(Imp::Pf, imp)));
        }
        let _ = write!(row, " {:.0} | {:.0} | {:.0} |", s.expanded(Imp::Jps), s.expanded(Imp::JpsLm), s.expanded(Imp::AStar));
        for imp in OURS {
            let d = s.dist(imp);
            let _ = write!(row, " {} | {} |", fmt_us(d.p50), fmt_us(d.p99));
        }
        let _ = writeln!(table, "{row}");
    }
    let all = Stats::of(&order);
    let mut per_query = String::new();
    for imp in OURS {
        let d = all.dist(imp);
        let _ = write!(
            per_query,
            "{} per query: mean {} µs, p50 {} µs, p99 {} µs, max {} µs; ",
            imp.label(),
            fmt_us(all.mean(imp)),
            fmt_us(d.p50),
            fmt_us(d.p99),
            fmt_us(d.max)
        );
    }
    let _ = writeln!(table, "\n{per_query}{GP_LABEL} path length / optimum: {:.4} (mean).", all.gp_len_ratio);
    let mut tables = 1;
    let (mut table_build, mut landmarks_build) = (land_times.table, land_times.landmarks);
    let (mut table_bytes, mut landmarks_bytes) = (land.table_bytes(), land.landmarks.memory_bytes() as u64);
    if let Some((data, times)) = &water {
        tables += 1;
        table_build += times.table;
        table_bytes += data.table_bytes();
        landmarks_build += times.landmarks;
        landmarks_bytes += data.landmarks.memory_bytes() as u64;
    }
    let _ = writeln!(
        table,
        "Untimed setup{}: parse {:.1} ms, our PassMap build {:.2} ms, our JumpTable build {:.1} ms ({} = {JUMP_TABLE_BYTES_PER_NAVCELL} B × {}×{} navcells), our Landmarks build ({} landmarks) {:.1} ms ({}), {GP_LABEL} grid + components {:.1} ms; timed loop {:.1} s.",
        if water.is_some() { " (land class; the water class was built too)" } else { "" },
        parse_time.as_secs_f64() * 1e3,
        land_times.pass.as_secs_f64() * 1e3,
        land_times.table.as_secs_f64() * 1e3,
        fmt_mib(land.table_bytes()),
        land.table.width(),
        land.table.height(),
        land.landmarks.points().len(),
        land_times.landmarks.as_secs_f64() * 1e3,
        fmt_mib(land.landmarks.memory_bytes() as u64),
        land_times.gp.as_secs_f64() * 1e3,
        bench_time.as_secs_f64()
    );
    Some(MapResult { name, family, size: (width, height), all, tables, table_build, table_bytes, landmarks_build, landmarks_bytes, table })
}
/// Which of ours meet a target on one map, as a phrase.
fn met_by(ok: &[bool; 4]) -> String {
    let names: Vec<&str> = OURS.iter().zip(ok).filter(|(_, ok)| **ok).map(|(imp, _)| imp.label()).collect();
    match names.len() {
        0 => "none".to_string(),
        4 => "all four".to_string(),
        _ => names.join(", "),
    }
}

/// Prints, for one kind of target, which of ours meet it on which maps.
fn print_met_by(what: &str, rows: &[(&str, [bool; 4])]) {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for (map, ok) in rows {
        let who = met_by(ok);
        match groups.iter_mut().find(|g| g.0 == who) {
            Some(g) => g.1.push(map),
            None => groups.push((who, vec![map])),
        }
    }
    let text: Vec<String> = groups.iter().map(|(who, maps)| format!("{who} on {}", maps.join(", "))).collect();
    println!("- {what}: met by {}.", text.join("; "));
}

fn main() {
    let cfg = Config::from_env();
    let started = Instant::now();
    println!("# Phalanx long-range search benchmark\n");
    println!(
        "Mode: {}; {} problems per map spread over {}; runs per query: {} (our jump point searches, {GP_LABEL}) / {} (ours A*, pathfinding::astar); a query's time is the median of its runs; map columns are means over the problems (ratios are ratios of those means); `{GP}` stands for {GP_LABEL}; (LM) marks the landmark heuristic ({} landmarks).",
        if cfg.quick { "quick (smoke)" } else { "full" },
        cfg.problems_per_map,
        if cfg.quick { "the lower half of the length buckets" } else { "all length buckets" },
        cfg.reps_fast,
        cfg.reps_slow,
        landmark_count()
    );
    println!("Build: {}.\n", if cfg!(debug_assertions) { "debug (timings meaningless)" } else { "optimized" });
    let mut workers = Workers { scratch: Default::default(), path: Default::default() };
    let mut failures = Vec::new();
    let mut results = Vec::new();
    for (name, family) in MAPS {
        if !cfg.filters.is_empty() && !cfg.filters.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        if let Some(r) = bench_map(name, family, &cfg, &mut workers, &mut failures) {
            println!("{}", r.table);
            results.push(r);
        }
    }

    let (astar, pf) = (Imp::AStar.label(), Imp::Pf.label());
    let verdict = |ok: bool| if ok { "PASS" } else { "MISS" };
    println!("## Summary against the targets\n");
    let mut header = format!("| map | family | size | problems | target | {pf} µs | {GP} µs | {astar} µs |");
    for imp in OURS {
        let _ = write!(header, " {0} µs (mean) | {pf} / {0} | {0} vs target |", imp.label());
    }
    println!("{header} best of ours vs target |");
    println!("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |{} --- |", " ---: | ---: | --- |".repeat(OURS.len()));
    let mut misses: [Vec<String>; 4] = Default::default();
    let (mut pf_rows, mut gp_rows) = (Vec::new(), Vec::new());
    for r in &results {
        let s = &r.all;
        let target = r.family.target_vs_astar();
        let pf_ok = OURS.map(|imp| s.ratio(Imp::Pf, imp) >= target);
        let gp_ok = OURS.map(|imp| s.ratio(Imp::Gp, imp) > 1.0);
        for (k, imp) in OURS.iter().enumerate() {
            if !pf_ok[k] {
                misses[k].push(format!("{} vs pathfinding::astar ({} < {target}×)", r.name, fmt_ratio(s.ratio(Imp::Pf, *imp))));
            }
            if !gp_ok[k] {
                misses[k].push(format!("{} vs {GP} ({})", r.name, fmt_ratio(s.ratio(Imp::Gp, *imp))));
            }
        }
        pf_rows.push((r.name, pf_ok));
        gp_rows.push((r.name, gp_ok));
        let mut row = format!(
            "| {} | {} | {}×{} | {} | ≥{target:.0}× | {} | {} | {} |",
            r.name,
            r.family.label(),
            r.size.0,
            r.size.1,
            s.problems,
            fmt_us(s.mean(Imp::Pf)),
            fmt_us(s.mean(Imp::Gp)),
            fmt_us(s.mean(Imp::AStar))
        );
        for (k, imp) in OURS.iter().enumerate() {
            let _ = write!(row, " {} | {} | {} |", fmt_us(s.mean(*imp)), fmt_ratio(s.ratio(Imp::Pf, *imp)), verdict(pf_ok[k]));
        }
        println!("{row} {} |", verdict(pf_ok.iter().any(|&ok| ok)));
    }
    println!();
    println!("### Against {GP_LABEL}, and ours against ours\n");
    let mut header = String::from("| map |");
    for imp in OURS {
        let _ = write!(header, " {GP} / {0} | {0} vs {GP} |", imp.label());
    }
    let pairs = [
        (Imp::Jps, Imp::JpsPlus),
        (Imp::Jps, Imp::JpsLm),
        (Imp::JpsPlus, Imp::JpsPlusLm),
        (Imp::AStar, Imp::Jps),
        (Imp::AStar, Imp::JpsLm),
    ];
    for (slow, fast) in pairs {
        let _ = write!(header, " {} / {} |", slow.label(), fast.label());
    }
    for imp in [Imp::Jps, Imp::JpsLm, Imp::AStar] {
        let _ = write!(header, " {} expansions |", imp.label());
    }
    for imp in OURS {
        let _ = write!(header, " {} p99 µs |", imp.label());
    }
    println!("{header}");
    println!("| --- |{}{}", " ---: | --- |".repeat(OURS.len()), " ---: |".repeat(pairs.len() + 3 + OURS.len()));
    for (r, (_, gp_ok)) in results.iter().zip(&gp_rows) {
        let s = &r.all;
        let mut row = format!("| {} |", r.name);
        for (k, imp) in OURS.iter().enumerate() {
            let _ = write!(row, " {} | {} |", fmt_ratio(s.ratio(Imp::Gp, *imp)), verdict(gp_ok[k]));
        }
        for (slow, fast) in pairs {
            let _ = write!(row, " {} |", fmt_ratio(s.ratio(slow, fast)));
        }
        let _ = write!(row, " {:.0} | {:.0} | {:.0} |", s.expanded(Imp::Jps), s.expanded(Imp::JpsLm), s.expanded(Imp::AStar));
        for imp in OURS {
            let _ = write!(row, " {} |", fmt_us(s.dist(imp).p99));
        }
        println!("{row}");
    }
    println!();
    println!(
        "Targets, judged for each of our four jump point searches separately: ≥100× faster than pathfinding::astar on DAO, BG, StarCraft and street maps, ≥10× on rooms, ≥3× on mazes and random; faster than {GP_LABEL} on every map (which solves the easier corner-cutting problem).\n"
    );
    print_met_by("≥ family target vs pathfinding::astar", &pf_rows);
    print_met_by(&format!("faster than {GP}"), &gp_rows);
    println!();
    for (k, imp) in OURS.iter().enumerate() {
        if misses[k].is_empty() {
            println!("{}: all targets PASS.", imp.label());
        } else {
            println!("{} MISS: {}.", imp.label(), misses[k].join("; "));
        }
    }
    let none: Vec<String> = pf_rows
        .iter()
        .filter(|r| !r.1.iter().any(|&ok| ok))
        .map(|r| format!("{} vs pathfinding::astar", r.0))
        .chain(gp_rows.iter().filter(|r| !r.1.iter().any(|&ok| ok)).map(|r| format!("{} vs {GP}", r.0)))
        .collect();
    if none.is_empty() {
        println!("Best of ours (per map, the fastest of the four): all targets PASS.");
    } else {
        println!("Best of ours (per map, the fastest of the four) MISS: {}.", none.join("; "));
    }
    println!("Total wall time {:.1} s.\n", started.elapsed().as_secs_f64());

    println!("## Precomputed tables (untimed setup)\n");
    println!(
        "| map | navcells | classes | JumpTable build ms | JumpTable memory (16 B per navcell) | Landmarks build ms | Landmarks memory ({} B per navcell) |",
        4 * landmark_count()
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for r in &results {
        println!(
            "| {} | {} | {} | {:.1} | {} | {:.1} | {} |",
            r.name,
            u64::from(r.size.0) * u64::from(r.size.1),
            r.tables,
            r.table_build.as_secs_f64() * 1e3,
            fmt_mib(r.table_bytes),
            r.landmarks_build.as_secs_f64() * 1e3,
            fmt_mib(r.landmarks_bytes)
        );
    }
    println!();

    let (notes, errors): (Vec<&String>, Vec<&String>) = failures.iter().partition(|f| f.contains("(reported, not a bug of ours)"));
    for n in &notes {
        println!("note: {n}");
    }
    if !errors.is_empty() {
        println!("## CORRECTNESS FAILURES ({})\n", errors.len());
        for e in &errors {
            println!("- {e}");
        }
        std::process::exit(1);
    }
    println!(
        "Correctness: every cost of our four jump point searches, ours A* and pathfinding::astar was equal and optimal; every ours JPS and ours JPS (LM) path was legal; every JPS+ path and outcome was identical to that of the JPS with the same heuristic."
    );
}
