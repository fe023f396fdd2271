//! Scale benchmark (issue 24): `examples/scenarios/reference.json` (1,000 units) and
//! `examples/scenarios/ten-thousand.json` (10,000 units in 200 groups of 50, all ordered across the
//! map on turn 1 and back on turn 60) run in one process, so that the two are measured on the same
//! machine under the same load.
//!
//! Reported per run: the median, p99 and maximum time of `World::step` (the first turn, which
//! spawns the units, left out), the slowest turn against the run's own median, the ten-thousand
//! run's median against the reference run's, the order latency in turns (p50, p99, maximum, from
//! `World::scale_stats`), the long-range searches and the longest path-request queue; then the
//! peak resident memory of the process (`VmHWM`) and the heap bytes per unit: the heap the world
//! holds after its last turn less the heap of the same world with no units, over the units.
//!
//! `cargo bench -p phalanx-replay --bench scale`; `PHALANX_BENCH_QUICK=1` (or no `--bench` argument, as
//! `cargo test --benches` runs it) runs 20 turns of each. `PHALANX_BENCH_TURNS=N` sets the turns.
//! `PHALANX_SCALE_SCENARIO=FILE` runs another scenario in place of the ten-thousand one (a name in
//! examples/scenarios, or a path). `PHALANX_SCALE_GROWTH=1` runs instead the scaled scenarios
//! `scale-1k` to `scale-40k` (the same map and staggered script at 1,000 to 40,000 units,
//! `scripts/gen-scale-scenarios`) for 200 turns each and prints how the turn, a walking unit-turn's
//! cost and the order latency grow with the units. `PHALANX_SCALE_THREADS=1` runs instead
//! `scale-10k` and `scale-40k` on one thread and on two (the pool kept awake through the motion
//! step, and not), `PHALANX_SCALE_ROUNDS` times each (3), and prints each one's median turn,
//! motion and hash phases against one thread's. The ten-thousand scenario also runs on two
//! threads, and the run exits with status 1 when the two hash sequences differ.

// A benchmark, not simulation code: it needs the wall clock to time and floats to report.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]
// The counting allocator must implement `GlobalAlloc`, an unsafe trait (as tests/tests/no_alloc.rs).
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The system allocator, counting the bytes live, so the benchmark can weigh the world.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

/// Whether the allocator counts: the thread table turns it off, since two threads updating one
/// counter on every allocation would slow the two-thread runs it compares.
static COUNTING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

// SAFETY: every call is passed on unchanged to the system allocator; only a counter is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is the system allocator's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() && COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.dealloc(ptr, layout) };
        if COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract is the system allocator's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() && COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            LIVE.fetch_add(new_size, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// One scenario's run.
struct Run {
    name: String,
    units: usize,
    /// Wall-clock time of each `World::step` after the first.
    turns: Vec<Duration>,
    /// The same turns' time by phase (`World::step_observed`): each phase's time since the last.
    phases: Vec<Vec<(sim::Phase, Duration)>>,
    hashes: Vec<[u8; 32]>,
    stats: sim::ScaleStats,
    /// Heap bytes the world holds after its last turn, and with no units (before turn 0).
    heap: (usize, usize),
}

fn run(file: &str, turns: u32, threads: usize) -> Run {
    run_awake(file, turns, threads, true)
}

/// [`run`], with the pool's threads kept awake through the motion step or not
/// (`World::set_motion_awake`).
fn run_awake(file: &str, turns: u32, threads: usize, awake: bool) -> Run {
    // A file name is taken from examples/scenarios; a path (with a `/`) as it is.
    let path = if file.contains('/') {
        std::path::PathBuf::from(file)
    } else {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios").join(file)
    };
    let scenario = replay::scenario::Scenario::load(&path).expect("the example scenario parses");
    let before = LIVE.load(Ordering::Relaxed);
    let mut world = replay::record::build_world(&scenario, threads).expect("the scenario's world");
    world.set_motion_awake(awake);
    let empty = LIVE.load(Ordering::Relaxed).saturating_sub(before);
    let mut script = scenario.script();
    let mut out = Run {
        name: scenario.name().to_string(),
        units: 0,
        turns: Vec::new(),
        phases: Vec::new(),
        hashes: Vec::new(),
        stats: Default::default(),
        heap: (0, empty),
    };
    for turn in 0..turns {
        let commands = script.turn_commands(&world);
        let started = Instant::now();
        let mut phases = Vec::new();
        let mut last = started;
        let report = world.step_observed(&commands, &mut |phase| {
            let now = Instant::now();
            phases.push((phase, now - last));
            last = now;
        });
        let took = started.elapsed();
        if turn > 0 {
            out.turns.push(took);
            out.phases.push(phases);
        }
        script.observe(&report);
        out.hashes.push(report.hash);
    }
    out.units = world.units().count();
    out.stats = world.scale_stats();
    out.heap.0 = LIVE.load(Ordering::Relaxed).saturating_sub(before);
    drop(world);
    out
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The nearest-rank quantile of sorted times, `per_mille` of 1000.
fn quantile(sorted: &[Duration], per_mille: usize) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[(sorted.len() * per_mille).div_ceil(1000).clamp(1, sorted.len()) - 1]
}

/// The peak resident set of this process (`VmHWM`), in KiB, where /proc has it.
fn peak_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Walking units in an average turn of the run (the world's unit steps over its turns).
fn walkers(r: &Run) -> f64 {
    r.stats.unit_steps as f64 / (r.turns.len() + 1) as f64
}

fn report(r: &Run, threads: usize) -> Duration {
    let mut sorted = r.turns.clone();
    sorted.sort();
    let (median, p99, max) = (quantile(&sorted, 500), quantile(&sorted, 990), quantile(&sorted, 1000));
    let lat = |q| r.stats.latency_quantile(q).map_or_else(|| "-".to_string(), |t| t.to_string());
    let spike = if median.is_zero() { 0.0 } else { max.as_secs_f64() / median.as_secs_f64() };
    let per_unit = r.heap.0.saturating_sub(r.heap.1).checked_div(r.units).unwrap_or(0);
    println!(
        "{:<13} {threads} thr {:>6} units  turn median {:>7.2} ms  p99 {:>7.2} ms  max {:>7.2} ms  max/median {:>5.1}  latency p50 {:>3} p99 {:>3} max {:>3} turns ({} units, {} waiting)  searches {:>6}  queue {:>6}  heap {:>5.1} MB, {} bytes/unit",
        r.name,
        r.units,
        ms(median),
        ms(p99),
        ms(max),
        spike,
        lat(500),
        lat(990),
        lat(1000),
        r.stats.ordered(),
        r.stats.waiting,
        r.stats.long_searches,
        r.stats.max_queue,
        r.heap.0 as f64 / 1e6,
        per_unit,
    );
    // Where the time goes: each phase's median over the turns, and the slowest turn by phase.
    let mut names: Vec<sim::Phase> = Vec::new();
    for turn in &r.phases {
        for &(phase, _) in turn {
            if !names.contains(&phase) {
                names.push(phase);
            }
        }
    }
    let median_of = |phase| {
        let mut times: Vec<Duration> = r.phases.iter().map(|t| t.iter().filter(|(p, _)| *p == phase).map(|(_, d)| *d).sum()).collect();
        times.sort();
        quantile(&times, 500)
    };
    let medians: Vec<String> = names.iter().map(|&p| format!("{p:?} {:.2}", ms(median_of(p)))).collect();
    println!("{:<13} {threads} thr   phase medians (ms): {}", r.name, medians.join(", "));
    let per_walker = if walkers(r) > 0.0 { ms(median) * 1e3 / walkers(r) } else { 0.0 };
    println!("{:<13} {threads} thr   walking units per turn {:.0}, median turn per walking unit {per_walker:.3} µs", r.name, walkers(r));
    // The five slowest turns, slowest first, each by phase.
    let mut order: Vec<usize> = (0..r.turns.len()).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(r.turns[k]));
    for &k in order.iter().take(5) {
        let parts: Vec<String> = r.phases[k].iter().map(|(p, d)| format!("{p:?} {:.2}", ms(*d))).collect();
        println!("{:<13} {threads} thr   slow turn {} ({:.2} ms): {}", r.name, k + 1, ms(r.turns[k]), parts.join(", "));
    }
    median
}

/// The scaled scenarios of the growth table (`scripts/gen-scale-scenarios`), smallest first.
const GROWTH: [&str; 6] = ["scale-1k.json", "scale-2k5.json", "scale-5k.json", "scale-10k.json", "scale-20k.json", "scale-40k.json"];

/// `PHALANX_SCALE_GROWTH=1`: every size of [`GROWTH`] for `turns` turns, one thread, and a table of
/// how the turn, a walking unit's cost and the order latency grow with the units.
fn growth(turns: u32) {
    println!(
        "| units | median turn | max turn | walking units per turn | time per walking unit-turn | latency p99 / max | first path p99 / max | waiting at the end |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let mut first_cost = None;
    for file in GROWTH {
        let r = run(file, turns, 1);
        let mut sorted = r.turns.clone();
        sorted.sort();
        let (median, max) = (quantile(&sorted, 500), quantile(&sorted, 1000));
        let total: Duration = r.turns.iter().sum();
        // Every turn's time over every walking unit-turn: what a walking unit costs on average,
        // the turns with few walkers included.
        let steps = r.stats.unit_steps.max(1) as f64;
        let cost_ns = total.as_secs_f64() * 1e9 / steps;
        let growth = first_cost.get_or_insert(cost_ns);
        let lat = |q| r.stats.latency_quantile(q).map_or_else(|| "-".to_string(), |t| t.to_string());
        let answered = |q| r.stats.answered_quantile(q).map_or_else(|| "-".to_string(), |t| t.to_string());
        println!(
            "| {} | {:.2} ms | {:.2} ms | {:.0} | {cost_ns:.0} ns ({:.2}x) | {} / {} turns | {} / {} turns | {} |",
            r.units,
            ms(median),
            ms(max),
            walkers(&r),
            cost_ns / *growth,
            lat(990),
            lat(1000),
            answered(990),
            answered(1000),
            r.stats.waiting
        );
    }
}

/// `PHALANX_SCALE_THREADS=1`: the staggered scenarios of 10,000 and 40,000 units on one thread
/// and on two (the pool's threads kept awake through the motion step, and not), `rounds` times
/// each, interleaved: the median turn and motion phase of each, and their ratios to one thread
/// (issue 39: the 10,000-unit walking turn on 2 threads at most 0.65 x one thread's wall time).
/// Exits with status 1 if the hashes of any run differ from one thread's.
fn threads_table(turns: u32, rounds: usize) {
    COUNTING.store(false, Ordering::Relaxed);
    println!("| units | threads | median turn | motion median | hash median | turn vs 1 thread | motion vs 1 thread |");
    println!("| ---: | --- | ---: | ---: | ---: | ---: | ---: |");
    for file in ["scale-10k.json", "scale-40k.json"] {
        let kinds: [(&str, usize, bool); 3] = [("1", 1, true), ("2, awake", 2, true), ("2, asleep", 2, false)];
        // By kind: each round's median turn, motion and hash phases.
        let mut medians: Vec<Vec<(Duration, Duration, Duration)>> = vec![Vec::new(); kinds.len()];
        let mut reference: Option<Vec<[u8; 32]>> = None;
        let mut units = 0;
        for _ in 0..rounds {
            for (k, &(_, threads, awake)) in kinds.iter().enumerate() {
                let r = run_awake(file, turns, threads, awake);
                units = r.units;
                match &reference {
                    None => reference = Some(r.hashes.clone()),
                    Some(hashes) if *hashes != r.hashes => {
                        eprintln!("{file}: the hashes on {threads} threads differ from one thread's");
                        std::process::exit(1);
                    }
                    Some(_) => {}
                }
                let phase_median = |phase: sim::Phase| {
                    let mut times: Vec<Duration> =
                        r.phases.iter().map(|t| t.iter().filter(|(p, _)| *p == phase).map(|(_, d)| *d).sum()).collect();
                    times.sort();
                    quantile(&times, 500)
                };
                let mut sorted = r.turns.clone();
                sorted.sort();
                medians[k].push((quantile(&sorted, 500), phase_median(sim::Phase::Motion), phase_median(sim::Phase::Hash)));
            }
        }
        let median_of = |runs: &[(Duration, Duration, Duration)], pick: fn(&(Duration, Duration, Duration)) -> Duration| {
            let mut v: Vec<Duration> = runs.iter().map(pick).collect();
            v.sort();
            v[v.len() / 2]
        };
        let one = (median_of(&medians[0], |m| m.0), median_of(&medians[0], |m| m.1));
        for (k, &(name, _, _)) in kinds.iter().enumerate() {
            let (turn, motion, hash) = (median_of(&medians[k], |m| m.0), median_of(&medians[k], |m| m.1), median_of(&medians[k], |m| m.2));
            println!(
                "| {units} | {name} | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} | {:.2} |",
                ms(turn),
                ms(motion),
                ms(hash),
                turn.as_secs_f64() / one.0.as_secs_f64(),
                motion.as_secs_f64() / one.1.as_secs_f64()
            );
        }
    }
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench") && std::env::var_os("PHALANX_BENCH_QUICK").is_none();
    let turns: u32 = std::env::var("PHALANX_BENCH_TURNS").ok().and_then(|t| t.parse().ok()).unwrap_or(if full { 150 } else { 20 });
    if std::env::var("PHALANX_SCALE_THREADS").is_ok_and(|v| v == "1") {
        let rounds = std::env::var("PHALANX_SCALE_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(if full { 3 } else { 1 });
        threads_table(
            if full { std::env::var("PHALANX_BENCH_TURNS").ok().and_then(|t| t.parse().ok()).unwrap_or(200) } else { 20 },
            rounds,
        );
        return;
    }
    if std::env::var("PHALANX_SCALE_GROWTH").is_ok_and(|v| v == "1") {
        growth(if full { std::env::var("PHALANX_BENCH_TURNS").ok().and_then(|t| t.parse().ok()).unwrap_or(200) } else { 20 });
        return;
    }
    let reference = run("reference.json", turns, 1);
    let ref_median = report(&reference, 1);
    let ref_walkers = walkers(&reference);
    drop(reference);
    let big_file = std::env::var("PHALANX_SCALE_SCENARIO").unwrap_or_else(|_| "ten-thousand.json".to_string());
    let big = run(&big_file, turns, 1);
    let big_median = report(&big, 1);
    let two = run(&big_file, turns, 2);
    report(&two, 2);
    let ratio = if ref_median.is_zero() { 0.0 } else { big_median.as_secs_f64() / ref_median.as_secs_f64() };
    let walker_ratio = if ref_walkers > 0.0 { walkers(&big) / ref_walkers } else { 0.0 };
    println!(
        "ten-thousand median / reference median: {ratio:.2}; walking units per turn {walker_ratio:.2} times the reference's, so a walking unit costs {:.2} times the reference's (held at most 1; issue 24's 6 x ratio, docs/decisions.md)",
        if walker_ratio > 0.0 { ratio / walker_ratio } else { 0.0 }
    );
    match peak_kib() {
        Some(kib) => println!("peak resident memory (VmHWM): {:.1} MB", kib as f64 * 1024.0 / 1e6),
        None => println!("peak resident memory: not available (no /proc/self/status)"),
    }
    if big.hashes != two.hashes {
        eprintln!("ten-thousand: the hashes on 1 and 2 threads differ");
        std::process::exit(1);
    }
}
