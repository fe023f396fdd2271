//! One turn of a scenario, repeated: the world is run to the turn before, saved
//! (`World::save`), and the turn is stepped from that snapshot again and again (each time from a
//! fresh `World::load_like`), so a profiler sees that turn alone and its time is a median over
//! many runs, not one sample in a noisy run.
//!
//! `cargo bench -p phalanx-replay --bench turn` steps turn 60 of `examples/scenarios/ten-thousand.json`
//! (the order that sends all 10,000 units back) 30 times and prints the median and minimum time of
//! the turn and of each phase. `PHALANX_TURN=N` picks the turn, `PHALANX_TURN_SCENARIO=FILE` the
//! scenario (a name in examples/scenarios, or a path), `PHALANX_TURN_REPEAT=N` the repetitions,
//! `PHALANX_TURN_THREADS=T` the worker threads (default 1).
//! Every repetition must give the same state hash (the run exits with status 1 if not).

// A benchmark, not simulation code: it needs the wall clock to time and floats to report.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::time::{Duration, Instant};

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    let quick = !std::env::args().any(|a| a == "--bench");
    let file = std::env::var("PHALANX_TURN_SCENARIO").unwrap_or_else(|_| "ten-thousand.json".to_string());
    let turn: u32 = env_or("PHALANX_TURN", if quick { 3 } else { 60 });
    let repeat: usize = env_or("PHALANX_TURN_REPEAT", if quick { 2 } else { 30 }).max(1);
    let threads: usize = env_or("PHALANX_TURN_THREADS", 1usize).clamp(1, 256);
    let path = if file.contains('/') {
        std::path::PathBuf::from(&file)
    } else {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios").join(&file)
    };
    let scenario = replay::scenario::Scenario::load(&path).expect("the scenario parses");
    let mut world = replay::record::build_world(&scenario, threads).expect("the scenario's world");
    let mut script = scenario.script();
    for _ in 0..turn {
        let commands = script.turn_commands(&world);
        let report = world.step(&commands);
        script.observe(&report);
    }
    let commands = script.turn_commands(&world);
    let saved = world.save();
    let mut totals = Vec::with_capacity(repeat);
    let mut phases: Vec<(sim::Phase, Vec<Duration>)> = Vec::new();
    let mut hash = None;
    for _ in 0..repeat {
        let mut again = world.load_like(&saved).expect("the world's own snapshot loads");
        again.set_threads(threads).expect("the thread pool starts");
        let started = Instant::now();
        let mut last = started;
        let mut k = 0;
        let report = again.step_observed(&commands, &mut |phase| {
            let now = Instant::now();
            if phases.len() <= k {
                phases.push((phase, Vec::new()));
            }
            phases[k].1.push(now - last);
            (last, k) = (now, k + 1);
        });
        totals.push(started.elapsed());
        if *hash.get_or_insert(report.hash) != report.hash {
            eprintln!("turn {turn}: the repetitions' hashes differ");
            std::process::exit(1);
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median_min = |times: &mut Vec<Duration>| {
        times.sort();
        (ms(times[times.len() / 2]), ms(times[0]))
    };
    let (median, min) = median_min(&mut totals);
    println!("{} turn {turn} ({repeat} runs, {threads} thread(s)): median {median:.2} ms, min {min:.2} ms", scenario.name());
    for (phase, times) in &mut phases {
        let (median, min) = median_min(times);
        println!("  {:<10} median {median:>7.2} ms  min {min:>7.2} ms", format!("{phase:?}"));
    }
}
