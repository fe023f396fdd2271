//! Hash exchange benchmark: what a peer pays each turn, besides stepping the world, so that the
//! session can detect and study a desync, as a share of the turn (issue 23's target: under 1%).
//!
//! The workload is the demo's game (`phalanx/demo.json`, four `skirmish` bots on the
//! reference world, 1020 units at the start), stepped turn by turn as a peer steps it. Each turn
//! is timed, and then, apart, the work a peer adds to it:
//! - `kept`: what the session keeps to answer questions about a turn not yet agreed
//!   (`session::Recorder::record`: the turn's commands, and a snapshot every
//!   `SNAPSHOT_EVERY` turns);
//! - `message`: the `Hash` message encoded by the client's link and decoded by the host's, and
//!   the host's comparison with its own hash;
//! - for comparison, `every turn`: a snapshot and the digest leaves after every turn, what the
//!   session kept before the recorder (`World::save` and `World::digest_reports`).
//!
//! `cargo bench -p phalanx-session --bench hash_exchange`; `PHALANX_BENCH_QUICK=1` (or no `--bench`
//! argument) plays 60 turns (CI smoke run), `PHALANX_BENCH_TURNS=N` sets the turns. The run exits
//! with status 1 when a kept turn, simulated again, does not give the hash the peer had.

// A benchmark, not simulation code: it needs the wall clock to time and floats to report.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use session::{ClientMsg, HostMsg, Link};
use session::{Recorder, SNAPSHOT_EVERY};

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let quick = std::env::var("PHALANX_BENCH_QUICK").is_ok_and(|v| v == "1") || !bench;
    let turns: u32 = match std::env::var("PHALANX_BENCH_TURNS").ok().and_then(|v| v.parse().ok()) {
        Some(n) => n,
        None if quick => 60,
        None => 500,
    };
    let rulesets = replay::rules::Rulesets::none().with(skirmish::tools::ruleset());
    let demo = include_str!("../../phalanx/demo.json");
    let scenario = replay::scenario::Scenario::parse_with(demo, "phalanx/demo.json", &mut |f| Err(format!("no file {f}")), &rulesets)
        .expect("the demo scenario parses");
    let mut world = replay::record::build_world(&scenario, 1).expect("the demo's world");
    let mut script = scenario.script();
    println!("Mode: {}; the demo's game (4 skirmish bots, reference world), {turns} turns.", if quick { "quick" } else { "full" });

    let mut recorder = Recorder::default();
    recorder.start(0, &world);
    let (mut client, mut host) = (Link::<HostMsg>::default(), Link::<ClientMsg>::default());
    let (mut step, mut kept, mut message, mut every_turn) = (Vec::new(), Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let mut hashes = Vec::new();
    let mut bytes = 0usize;
    for turn in 0..turns {
        let commands = script.turn_commands(&world);
        let started = Instant::now();
        let report = world.step(&commands);
        step.push(started.elapsed());
        script.observe(&report);
        hashes.push(report.hash);

        let started = Instant::now();
        recorder.record(turn, &commands, report.hash, &world);
        kept += started.elapsed();

        let started = Instant::now();
        let frame = client.encode(ClientMsg::Hash { turn, hash: report.hash });
        let got = host.accept(&frame).expect("the host decodes the client's frame");
        let agree = matches!(got.as_slice(), [ClientMsg::Hash { hash, .. }] if *hash == report.hash);
        message += started.elapsed();
        assert!(agree, "turn {turn}: the host read another hash");
        bytes += frame.len() + 4;

        let started = Instant::now();
        black_box((world.save(), world.digest_reports()));
        every_turn += started.elapsed();

        // The host agrees a few turns behind, as over a network.
        recorder.agreed(turn.saturating_sub(4));
    }
    let total: Duration = step.iter().sum();
    let share = |d: Duration| 100.0 * d.as_secs_f64() / total.as_secs_f64().max(f64::MIN_POSITIVE);
    let mut sorted = step.clone();
    sorted.sort();
    println!();
    println!(
        "| turns | median turn ms | kept (recorder) | Hash message | exchange in all | before: snapshot and leaves every turn | bytes per turn |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    println!(
        "| {} | {:.2} | {:.3}% | {:.3}% | {:.3}% | {:.1}% | {} |",
        step.len(),
        ms(sorted[sorted.len() / 2]),
        share(kept),
        share(message),
        share(kept + message),
        share(every_turn),
        bytes / step.len().max(1)
    );
    println!();
    println!("Snapshots kept every {SNAPSHOT_EVERY} turns; the shares are of the {:.1} ms the {} steps took.", ms(total), step.len());

    // The check: the last kept turn, simulated again from the recorder, has the hash it had.
    let last = turns - 1;
    let replayed = recorder.replay_to(last, &world, &mut |_, _| {}).expect("the last turn is kept");
    if !replayed.reproduced || replayed.world.state_hash() != hashes[last as usize] {
        eprintln!("CHECK FAILED: turn {last} simulated again from the recorder has another hash");
        std::process::exit(1);
    }
    println!("Check: turn {last} simulated again from the recorder has the hash the game had.");
}
