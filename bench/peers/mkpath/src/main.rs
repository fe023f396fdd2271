//! Side-by-side long-range search benchmark: our plain JPS and JPS+ against mkpath's JPS and JPS+
//! (MinusKelvin/mkpath, used through its public API only), on the same problems of the Moving AI
//! maps in `data/movingai/`, in one run.
//!
//! Implementations, each timed per query with [`Instant`]:
//!
//! - `ours JPS`: `pathing::find_path_jps` with no accelerator, a point goal at the goal navcell's
//!   centre, one `SearchScratch` and one `Path` reused for every query.
//! - `ours JPS+`: the same call with a `JumpTable` of the query's class.
//! - `mkpath JPS`: mkpath's `JpsExpander` driven by its `AStarSearcher` with its octile heuristic,
//!   a `HashPool` reset per query and a new open list per query, as mkpath's own `jps` example
//!   does; the transposed grid it needs is built per class outside the timing.
//! - `mkpath JPS+`: the same with its `JpsPlusExpander` and a `JumpDatabase` per class.
//!
//! Problems: a deterministic sample of `N` problems per map, evenly spaced in the scenario sorted
//! by length bucket ([`select`]), all of a map's problems when it has fewer. Each query runs `R`
//! times per implementation, the implementations interleaved in a rotating order so they share the
//! machine's noise; a query's time is the median of its runs, and a map's time is the mean of its
//! queries' times.
//!
//! Checked on every query, outside the timing: all four return a path whose length is the
//! scenario's optimal length (relative 1e-5, or within the file's print precision), and ours JPS+
//! returns exactly the turning points of ours JPS.
//!
//! Jump-table build time: per class a map's problems use, the median of `B` builds of our
//! `JumpTable::build` from the class's `PassMap`, and of mkpath's `JumpDatabase::new` (and its
//! `transpose`, the precomputation of its plain JPS) from the same passability as a `BitGrid`.
//!
//! Environment: `PHALANX_PEER_PROBLEMS` (default 300), `PHALANX_PEER_REPS` (default 5),
//! `PHALANX_PEER_BUILDS` (default 5). Arguments not starting with `-` keep only the maps whose name
//! contains one of them; `--only NAME` (`ours-jps`, `ours-jps-plus`, `mkpath-jps`,
//! `mkpath-jps-plus`) runs one implementation, once per query, for instruction counts: the timed
//! queries of each implementation run inside [`run_queries`], which callgrind can be told to
//! count alone (`--toggle-collect=*run_queries*`).
//!
//! Exits with status 1 when any check fails.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use mkpath::grid::{BitGrid, octile_distance};
use mkpath::jps::{JpsExpander, JpsPlusExpander, JumpDatabase, transpose};
use mkpath::traits::NodePool;
use mkpath::{AStarSearcher, HashPool, NodeBuilder, NodeMemberPointer, PriorityQueueFactory};
use pathing::movingai::{self, LAND, MovingAiMap, ScenProblem, WATER};
use pathing::{Accelerators, Goal, JumpTable, Navcell, PassClass, PassMap, Path, PathStatus, SearchLimits, SearchScratch, find_path_jps};

/// The four implementations, in the order of every table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Imp {
    OursJps,
    OursJpsPlus,
    MkJps,
    MkJpsPlus,
}

const IMPS: [Imp; 4] = [Imp::OursJps, Imp::OursJpsPlus, Imp::MkJps, Imp::MkJpsPlus];

impl Imp {
    fn label(self) -> &'static str {
        match self {
            Imp::OursJps => "ours JPS",
            Imp::OursJpsPlus => "ours JPS+",
            Imp::MkJps => "mkpath JPS",
            Imp::MkJpsPlus => "mkpath JPS+",
        }
    }

    fn flag(self) -> &'static str {
        match self {
            Imp::OursJps => "ours-jps",
            Imp::OursJpsPlus => "ours-jps-plus",
            Imp::MkJps => "mkpath-jps",
            Imp::MkJpsPlus => "mkpath-jps-plus",
        }
    }

    fn slot(self) -> usize {
        self as usize
    }
}

/// Where the Moving AI files live, relative to this project.
const MOVINGAI_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../data/movingai/");

/// Every map of `data/movingai/`, in report order.
const MAPS: [&str; 13] = [
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

struct Config {
    problems: usize,
    reps: usize,
    builds: usize,
    only: Option<Imp>,
    filters: Vec<String>,
}

impl Config {
    fn from_env() -> Self {
        let env_usize = |name: &str, default: usize| {
            std::env::var(name).ok().and_then(|v| v.parse::<usize>().ok()).filter(|&n| n > 0).unwrap_or(default)
        };
        let mut args = std::env::args().skip(1);
        let mut only = None;
        let mut filters = Vec::new();
        while let Some(a) = args.next() {
            if a == "--only" {
                let name = args.next().unwrap_or_default();
                only =
                    Some(IMPS.into_iter().find(|i| i.flag() == name).unwrap_or_else(|| panic!("--only: unknown implementation {name:?}")));
            } else if !a.starts_with('-') {
                filters.push(a);
            }
        }
        let reps = if only.is_some() { 1 } else { env_usize("PHALANX_PEER_REPS", 5) };
        Self { problems: env_usize("PHALANX_PEER_PROBLEMS", 300), reps, builds: env_usize("PHALANX_PEER_BUILDS", 5), only, filters }
    }
}

/// A deterministic sample of `n` problems spread over all lengths: the problems sorted by bucket
/// (file order within a bucket), then `n` evenly spaced indices, the first and the last included;
/// every problem when there are at most `n`. (The pathing long-range benchmark takes at most one
/// problem per bucket, which gives fewer than 300 on maps with fewer buckets.)
fn select(problems: &[ScenProblem], n: usize) -> Vec<ScenProblem> {
    if problems.len() <= n {
        return problems.to_vec();
    }
    let mut sorted: Vec<&ScenProblem> = problems.iter().collect();
    sorted.sort_by_key(|p| (p.bucket, p.line));
    (0..n).map(|k| sorted[k * (sorted.len() - 1) / (n - 1).max(1)].clone()).collect()
}

/// Whether `got` matches a scenario's printed optimal length: relative 1e-5, or within half a unit
/// of the last printed decimal when the file prints fewer decimals than that resolves (AR0011SR).
fn length_matches(expected_text: &str, got: f64) -> bool {
    let expected: f64 = expected_text.parse().unwrap_or(f64::NAN);
    let decimals = expected_text.split_once('.').map_or(0, |(_, frac)| frac.len());
    let print_tolerance = 0.5 * 10f64.powi(-(decimals as i32)) + 1e-9;
    (got - expected).abs() <= (1e-5 * expected.abs()).max(print_tolerance.min(0.0051))
}

/// Everything built for one class of one map.
struct ClassData {
    pass: PassMap,
    table: JumpTable,
    grid: BitGrid,
    tgrid: BitGrid,
    jump_db: JumpDatabase,
    /// Median build times: our jump table, mkpath's transposed grid and its jump database.
    build: [Duration; 3],
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn timed<T>(builds: usize, mut f: impl FnMut() -> T) -> (T, Duration) {
    let mut times = Vec::with_capacity(builds);
    let mut last = None;
    for _ in 0..builds {
        let t = Instant::now();
        let v = black_box(f());
        times.push(t.elapsed());
        last = Some(v);
    }
    (last.expect("at least one build"), median(times))
}

impl ClassData {
    fn build(map: &MovingAiMap, class: PassClass, builds: usize) -> Self {
        let pass = PassMap::build(&map.grid, class);
        let (w, h) = (map.grid.width(), map.grid.height());
        // mkpath's grid in Moving AI coordinates (x east, y down the file), `true` = traversable,
        // from the same passability as ours.
        let mut grid = BitGrid::new(w as i32, h as i32);
        for y in 0..h {
            for x in 0..w {
                let cell = map.to_navcell(x, y).expect("inside the map");
                grid.set(x as i32, y as i32, pass.is_passable(cell));
            }
        }
        let (table, table_time) = timed(builds, || JumpTable::build(&pass));
        let (tgrid, transpose_time) = timed(builds, || transpose(&grid));
        let (jump_db, db_time) = timed(builds, || JumpDatabase::new(&grid));
        Self { pass, table, grid, tgrid, jump_db, build: [table_time, transpose_time, db_time] }
    }
}

/// One selected problem and what the implementations did on it.
struct Query {
    problem: ScenProblem,
    water: bool,
    start: Navcell,
    goal: Goal,
    /// Run times per implementation, in nanoseconds.
    times: [Vec<u64>; 4],
    /// The last length each implementation returned.
    length: [Option<f64>; 4],
    /// The turning points of ours JPS and ours JPS+.
    ours_path: [Vec<Navcell>; 2],
}

impl Query {
    fn median(&self, imp: Imp) -> u64 {
        let mut t = self.times[imp.slot()].clone();
        t.sort_unstable();
        t[t.len() / 2]
    }
}

/// mkpath's reusable search state, built once per map as its examples do.
struct MkState {
    state: NodeMemberPointer<(i32, i32)>,
    astar: AStarSearcher,
    factory: PriorityQueueFactory,
    pool: HashPool<(i32, i32)>,
}

impl MkState {
    fn new() -> Self {
        let mut builder = NodeBuilder::new();
        let state = builder.add_field((-1, -1));
        let astar = AStarSearcher::new(&mut builder);
        let factory = PriorityQueueFactory::new(&mut builder);
        let pool = HashPool::new(builder.build(), state);
        Self { state, astar, factory, pool }
    }
}

/// Our reusable search state.
struct OursState {
    scratch: SearchScratch,
    path: Path,
}

/// Runs one implementation once on one query; returns its time in nanoseconds and records its
/// answer.
#[inline(never)]
fn run_once(imp: Imp, data: &ClassData, q: &mut Query, ours: &mut OursState, mk: &mut MkState) -> u64 {
    match imp {
        Imp::OursJps | Imp::OursJpsPlus => {
            let accelerators =
                if imp == Imp::OursJpsPlus { Accelerators { jump_table: Some(&data.table), landmarks: None } } else { Accelerators::NONE };
            let t = Instant::now();
            let out =
                find_path_jps(&data.pass, &accelerators, q.start, &q.goal, &SearchLimits::UNLIMITED, &mut ours.scratch, &mut ours.path);
            let dt = t.elapsed();
            black_box(&ours.path);
            q.length[imp.slot()] = (out.status == PathStatus::Complete).then(|| {
                let steps = ours.path.steps();
                steps.straight as f64 + steps.diagonal as f64 * std::f64::consts::SQRT_2
            });
            q.ours_path[imp.slot()] = ours.path.waypoints().to_vec();
            dt.as_nanos() as u64
        }
        Imp::MkJps | Imp::MkJpsPlus => {
            let start = (q.problem.start.0 as i32, q.problem.start.1 as i32);
            let target = (q.problem.goal.0 as i32, q.problem.goal.1 as i32);
            let MkState { state, astar, factory, pool } = mk;
            let state = *state;
            let t = Instant::now();
            pool.reset();
            let open_list = factory.new_queue(astar.ordering());
            let result = if imp == Imp::MkJps {
                let expander = JpsExpander::new(&data.grid, &data.tgrid, &*pool, state, target);
                astar.search(
                    expander,
                    open_list,
                    |n| octile_distance(n.get(state), target),
                    |n| n.get(state) == target,
                    pool.generate(start),
                )
            } else {
                let expander = JpsPlusExpander::new(&data.grid, &data.jump_db, &*pool, state, target);
                astar.search(
                    expander,
                    open_list,
                    |n| octile_distance(n.get(state), target),
                    |n| n.get(state) == target,
                    pool.generate(start),
                )
            };
            let cost = result.map(|path| path.last().expect("a path has its goal").get(astar.g()));
            let dt = t.elapsed();
            q.length[imp.slot()] = black_box(cost);
            dt.as_nanos() as u64
        }
    }
}

/// The timed queries of one implementation alone (for `--only`, under callgrind).
#[inline(never)]
fn run_queries(imp: Imp, queries: &mut [Query], land: &ClassData, water: Option<&ClassData>, ours: &mut OursState, mk: &mut MkState) {
    for q in queries {
        let data = if q.water { water.expect("built when used") } else { land };
        let ns = run_once(imp, data, q, ours, mk);
        q.times[imp.slot()].push(ns);
    }
}

/// What one map contributes to the summary.
struct MapResult {
    name: &'static str,
    problems: usize,
    mean_us: [f64; 4],
    /// Per class used: (class name, [ours table, mkpath transpose, mkpath jump database]).
    builds: Vec<(&'static str, [Duration; 3])>,
}

fn run_map(name: &'static str, cfg: &Config, failures: &mut Vec<String>) -> Option<MapResult> {
    let dir = PathBuf::from(MOVINGAI_DIR);
    let map_text = std::fs::read_to_string(dir.join(format!("{name}.map"))).ok()?;
    let scen_text = std::fs::read_to_string(dir.join(format!("{name}.map.scen"))).ok()?;
    let map = movingai::parse_map(&map_text).unwrap_or_else(|e| panic!("{name}.map: {e}"));
    let problems = movingai::parse_scen(&scen_text).unwrap_or_else(|e| panic!("{name}.map.scen: {e}"));
    movingai::check_against_map(&problems, &map).unwrap_or_else(|e| panic!("{name}.map.scen: {e}"));

    let mut queries = Vec::new();
    for problem in select(&problems, cfg.problems) {
        let Some(class) = map.class_at(problem.start.0, problem.start.1) else {
            failures.push(format!("{name} line {}: start is blocked", problem.line));
            continue;
        };
        let start = map.to_navcell(problem.start.0, problem.start.1).expect("checked against the map");
        let goal_cell = map.to_navcell(problem.goal.0, problem.goal.1).expect("checked against the map");
        let goal = Goal::navcell_center(goal_cell.i, goal_cell.j, map.grid.cell_size());
        queries.push(Query {
            problem,
            water: class == WATER,
            start,
            goal,
            times: Default::default(),
            length: [None; 4],
            ours_path: Default::default(),
        });
    }

    let land = ClassData::build(&map, LAND, cfg.builds);
    let water = queries.iter().any(|q| q.water).then(|| ClassData::build(&map, WATER, cfg.builds));
    let mut builds = vec![("land", land.build)];
    if let Some(w) = &water {
        builds.push(("water", w.build));
    }

    let mut ours = OursState { scratch: SearchScratch::new(), path: Path::new() };
    ours.scratch.reserve(&land.pass);
    let mut mk = MkState::new();

    if let Some(imp) = cfg.only {
        run_queries(imp, &mut queries, &land, water.as_ref(), &mut ours, &mut mk);
    } else {
        // Warm-up on the first query, untimed.
        if let Some(q) = queries.first_mut() {
            let data = if q.water { water.as_ref().expect("built") } else { &land };
            for imp in IMPS {
                run_once(imp, data, q, &mut ours, &mut mk);
            }
        }
        for q in &mut queries {
            let data = if q.water { water.as_ref().expect("built") } else { &land };
            for t in &mut q.times {
                t.clear();
            }
            for rep in 0..cfg.reps {
                for k in 0..IMPS.len() {
                    let imp = IMPS[(k + rep) % IMPS.len()];
                    let ns = run_once(imp, data, q, &mut ours, &mut mk);
                    q.times[imp.slot()].push(ns);
                }
            }
        }
    }

    let run: Vec<Imp> = cfg.only.map_or(IMPS.to_vec(), |i| vec![i]);
    for q in &queries {
        let here = format!("{name} line {} (optimal {})", q.problem.line, q.problem.optimal_length);
        for &imp in &run {
            match q.length[imp.slot()] {
                None => failures.push(format!("{here}: {} found no path", imp.label())),
                Some(l) if !length_matches(&q.problem.optimal_length, l) => {
                    failures.push(format!("{here}: {} length {l:.6} is not the optimum", imp.label()));
                }
                Some(_) => {}
            }
        }
        if cfg.only.is_none() && q.ours_path[0] != q.ours_path[1] {
            failures.push(format!("{here}: ours JPS+ path differs from ours JPS path"));
        }
    }

    let n = queries.len().max(1) as f64;
    let mut mean_us = [f64::NAN; 4];
    for &imp in &run {
        mean_us[imp.slot()] = queries.iter().map(|q| q.median(imp) as f64).sum::<f64>() / n / 1000.0;
    }
    Some(MapResult { name, problems: queries.len(), mean_us, builds })
}

fn geomean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, count) = values.fold((0.0, 0usize), |(s, c), v| (s + v.ln(), c + 1));
    (sum / count.max(1) as f64).exp()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let cfg = Config::from_env();
    let mut failures = Vec::new();
    let started = Instant::now();
    let mut results = Vec::new();
    for name in MAPS {
        if !cfg.filters.is_empty() && !cfg.filters.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        match run_map(name, &cfg, &mut failures) {
            Some(r) => results.push(r),
            None => failures.push(format!("{name}: cannot read its files")),
        }
    }
    if let Some(imp) = cfg.only {
        println!("--only {}: {} maps run once per query; see callgrind for instruction counts.", imp.flag(), results.len());
    } else {
        println!(
            "Queries: {} problems per map (all of a map with fewer), {} runs per implementation per query, median per query, mean per map.",
            cfg.problems, cfg.reps
        );
        println!();
        println!(
            "| map | problems | ours JPS µs | mkpath JPS µs | ours / mkpath JPS | ours JPS+ µs | mkpath JPS+ µs | ours / mkpath JPS+ |"
        );
        println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        for r in &results {
            let m = r.mean_us;
            println!(
                "| {} | {} | {:.1} | {:.1} | {:.2} | {:.1} | {:.1} | {:.2} |",
                r.name,
                r.problems,
                m[0],
                m[2],
                m[0] / m[2],
                m[1],
                m[3],
                m[1] / m[3]
            );
        }
        let g_jps = geomean(results.iter().map(|r| r.mean_us[0] / r.mean_us[2]));
        let g_plus = geomean(results.iter().map(|r| r.mean_us[1] / r.mean_us[3]));
        println!();
        println!(
            "Geometric mean over {} maps of ours / mkpath time: JPS {g_jps:.3}, JPS+ {g_plus:.3} (target at most 0.8).",
            results.len()
        );
    }
    println!();
    println!("| map | class | ours jump table ms | mkpath jump database ms | ours / mkpath | mkpath transpose (its JPS) ms |");
    println!("| --- | --- | ---: | ---: | ---: | ---: |");
    let mut build_ratios = Vec::new();
    for r in &results {
        for (class, b) in &r.builds {
            let ratio = b[0].as_secs_f64() / b[2].as_secs_f64();
            build_ratios.push(ratio);
            println!("| {} | {class} | {:.3} | {:.3} | {ratio:.2} | {:.3} |", r.name, ms(b[0]), ms(b[2]), ms(b[1]));
        }
    }
    println!();
    println!(
        "Jump-table build, ours / mkpath per class: geometric mean {:.3}, worst {:.3} (target at most 1 on every class).",
        geomean(build_ratios.iter().copied()),
        build_ratios.iter().copied().fold(0.0, f64::max)
    );
    println!("Wall time {:.1} s.", started.elapsed().as_secs_f64());
    if failures.is_empty() {
        println!(
            "Correctness: every length of every implementation run was the scenario's optimum; every ours JPS+ path was that of ours JPS."
        );
    } else {
        for f in &failures {
            eprintln!("CHECK FAILED: {f}");
        }
        std::process::exit(1);
    }
}
