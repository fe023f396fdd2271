//! The adapter's overhead per turn: a headless Bevy app stepping a scenario through
//! `PhalanxPlugin` (one turn per frame: queue, step, message, mirror, interpolated transforms)
//! against a plain loop stepping a `World` with the same script.
//!
//! `cargo bench -p bevy_phalanx --bench overhead`: `examples/scenarios/reference.json` (1000 units
//! on the reference world, 150 turns), each way twice, interleaved; per turn the faster of the two
//! runs is kept; prints the median turn of each, the median of the per-turn differences and the
//! ratio of the medians (BENCHMARKS.md). `PHALANX_BENCH_QUICK=1` (or no `--bench` argument, as
//! `cargo test` runs bench targets): `formations.json` for 40 turns, once each way, checking the
//! hashes and timing nothing worth reading. Every run checks that both ways give the same hash
//! every turn.

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use bevy::time::TimeUpdateStrategy;
use bevy_phalanx::SimWorld;
use replay::scenario::Scenario;

/// Per-turn times and hashes of a plain loop: the script's commands, the step, the script
/// learning the turn's ids (what the app's turn does besides the adapter).
fn plain(scenario: &Scenario, turns: u32) -> (Vec<Duration>, Vec<[u8; 32]>) {
    let mut world = scenario.world().expect("a world");
    let mut script = scenario.script();
    let mut times = Vec::new();
    let mut hashes = Vec::new();
    for _ in 0..turns {
        let start = Instant::now();
        let mut commands = script.turn_commands(&world);
        commands.extend(common::removal(&world));
        let report = world.step(&commands);
        script.observe(&report);
        times.push(start.elapsed());
        hashes.push(report.hash);
    }
    (times, hashes)
}

/// Per-turn times and hashes of the app, one turn per `app.update()`.
fn app(scenario: &'static Scenario, turns: u32) -> (Vec<Duration>, Vec<[u8; 32]>) {
    let mut app = common::app(scenario, 5);
    let turn_length = Duration::from_millis(u64::from(scenario.settings().turn_ms));
    app.insert_resource(TimeUpdateStrategy::ManualDuration(turn_length));
    // Bevy's first update sees no elapsed time: run it before timing.
    app.update();
    let mut times = Vec::new();
    while app.world().resource::<SimWorld>().turn() < turns {
        let before = app.world().resource::<SimWorld>().turn();
        let start = Instant::now();
        app.update();
        times.push(start.elapsed());
        assert_eq!(app.world().resource::<SimWorld>().turn(), before + 1, "one turn per frame");
    }
    let hashes = std::mem::take(&mut app.world_mut().resource_mut::<common::Hashes>().0);
    (times, hashes)
}

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let quick = std::env::var("PHALANX_BENCH_QUICK").is_ok_and(|v| v == "1") || !bench;
    let (name, turns, reps) = if quick { ("formations.json", 40, 1) } else { ("reference.json", 150, 2) };
    let scenario = common::scenario(name);
    println!("# bevy_phalanx overhead: {name}, {turns} turns, {reps} run(s) each way, {}", if quick { "quick" } else { "full" });
    let mut best_plain: Vec<Duration> = Vec::new();
    let mut best_app: Vec<Duration> = Vec::new();
    for _ in 0..reps {
        let (plain_times, plain_hashes) = plain(scenario, turns);
        let (app_times, app_hashes) = app(scenario, turns);
        assert_eq!(plain_hashes.len(), turns as usize);
        assert_eq!(app_hashes, plain_hashes, "the app's hashes equal the plain world's every turn");
        let keep = |best: &mut Vec<Duration>, times: Vec<Duration>| {
            if best.is_empty() {
                *best = times;
            } else {
                best.iter_mut().zip(times).for_each(|(b, t)| *b = (*b).min(t));
            }
        };
        keep(&mut best_plain, plain_times);
        keep(&mut best_app, app_times);
    }
    let differences: Vec<Duration> = best_app.iter().zip(&best_plain).map(|(a, p)| a.saturating_sub(*p)).collect();
    let (plain_median, app_median) = (median(&best_plain), median(&best_app));
    println!("plain World::step turn, median\t{:.3} ms", ms(plain_median));
    println!("app turn (PhalanxPlugin), median\t{:.3} ms", ms(app_median));
    println!("per-turn overhead (app - plain), median\t{:.1} us", median(&differences).as_secs_f64() * 1e6);
    println!("ratio of medians (app / plain)\t{:.3}", app_median.as_secs_f64() / plain_median.as_secs_f64());
    println!("hashes equal on all {turns} turns");
}
