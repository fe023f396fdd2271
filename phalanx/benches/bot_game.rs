//! Bot-game benchmark: the demo's game (`phalanx_cli::demo::scenario()`, four `skirmish` bots on the
//! reference world, 1020 units at the start) played turn by turn as `phalanx demo` plays it, to
//! one player left or the scenario's turn limit, without recording.
//!
//! Reported: median, p99 and maximum turn time; the peak number of live units; and the share of
//! each phase of the turn, measured through `World::step_observed`: the game's rules
//! (`Phase::Rules`: `Rules::step`, the game's unit bookkeeping and the grid changes its actions
//! made), the core's state hash (`Phase::Hash`), the game's digest components
//! (`Phase::GameHash`: the target is under 1% of the turn), path search and motion. The
//! game's digests are also counted in instructions with callgrind (BENCHMARKS.md, "Bot game").
//!
//! `cargo bench -p phalanx-cli --bench bot_game`; `PHALANX_BENCH_QUICK=1` (or no `--bench` argument)
//! plays the first 60 turns only (CI smoke run). `PHALANX_BENCH_TURNS=N` sets the turn limit;
//! `PHALANX_BENCH_THREADS=N` computes path requests on N threads. Every run plays the game twice,
//! on N and on at least 2 threads, and exits with status 1 when the hashes differ, when fewer than
//! 1000 units were alive at the peak, or when a command was refused.

// A benchmark, not simulation code: it needs the wall clock to time and floats to report.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::time::{Duration, Instant};

use sim::{Event, Phase};

/// One game's measurements.
struct Run {
    /// Wall-clock time of each `World::step`.
    turns: Vec<Duration>,
    /// Total time per part: commands and grid, path search, motion and formations, rules, the
    /// core's hash (the phases of the step), the bots and the script (outside the step), then
    /// the game's digests (`Phase::GameHash`, within the step).
    phases: [Duration; 7],
    /// The state hash after each turn.
    hashes: Vec<[u8; 32]>,
    /// Most units alive after a turn, and that turn.
    peak: (usize, u32),
    /// Commands the world or the rules refused.
    rejected: usize,
    /// Whether the game ended with one player left (rather than at the limit).
    decided: bool,
}

fn play(limit: u32, threads: usize) -> Run {
    let scenario = phalanx_cli::demo::scenario().expect("the embedded demo scenario parses");
    let mut world = replay::record::build_world(&scenario, threads).expect("the demo's world");
    let mut script = scenario.script();
    let mut out = Run { turns: Vec::new(), phases: [Duration::ZERO; 7], hashes: Vec::new(), peak: (0, 0), rejected: 0, decided: false };
    for turn in 0..limit {
        let bots = Instant::now();
        let commands = script.turn_commands(&world);
        out.phases[5] += bots.elapsed();
        let mut marks = [Duration::ZERO; 7];
        let started = Instant::now();
        let mut last = started;
        let report = world.step_observed(&commands, &mut |phase| {
            let now = Instant::now();
            let k = match phase {
                Phase::Commands | Phase::Grid => 0,
                Phase::Paths => 1,
                Phase::Motion | Phase::Formations => 2,
                Phase::Rules => 3,
                Phase::Hash => 4,
                Phase::GameHash => 6,
            };
            marks[k] += now - last;
            last = now;
        });
        out.turns.push(started.elapsed());
        for (total, m) in out.phases.iter_mut().zip(marks) {
            *total += m;
        }
        script.observe(&report);
        out.hashes.push(report.hash);
        out.rejected += report.events.iter().filter(|e| matches!(e, Event::Rejected { .. })).count();
        let units = world.units().count();
        if units > out.peak.0 {
            out.peak = (units, turn);
        }
        if phalanx_cli::demo::decided(&world).is_some() {
            out.decided = true;
            break;
        }
    }
    out
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let quick = std::env::var("PHALANX_BENCH_QUICK").is_ok_and(|v| v == "1") || !bench;
    let threads = std::env::var("PHALANX_BENCH_THREADS").ok().and_then(|v| v.parse().ok()).filter(|&t| (1..=256).contains(&t)).unwrap_or(1);
    let scenario_turns = phalanx_cli::demo::scenario().expect("the embedded demo scenario parses").turns();
    let limit = match std::env::var("PHALANX_BENCH_TURNS").ok().and_then(|v| v.parse().ok()) {
        Some(n) => n,
        None if quick => 60,
        None => scenario_turns,
    };
    println!(
        "Mode: {}; the demo's game (4 skirmish bots, reference world 1024×1024 navcells), up to {limit} turns of 200 ms, {threads} path thread(s).",
        if quick { "quick" } else { "full" }
    );
    let a = play(limit, threads);
    let other = threads.max(2);
    let b = play(limit, other);
    let mut failed = false;
    if a.hashes != b.hashes {
        eprintln!("CHECK FAILED: {threads} and {other} threads gave different hashes");
        failed = true;
    }
    if a.peak.0 < 1000 {
        eprintln!("CHECK FAILED: {} units alive at the peak, fewer than 1000", a.peak.0);
        failed = true;
    }
    if a.rejected > 0 {
        eprintln!("CHECK FAILED: {} commands refused (the bots and the script send valid commands)", a.rejected);
        failed = true;
    }
    let mut sorted = a.turns.clone();
    sorted.sort();
    let pick = |q: usize| sorted[(sorted.len() * q / 100).min(sorted.len() - 1)];
    let total: Duration = a.turns.iter().sum();
    let share = |d: Duration| 100.0 * d.as_secs_f64() / total.as_secs_f64().max(f64::MIN_POSITIVE);
    println!();
    println!(
        "| turns | end | peak units (turn) | median turn ms | p99 turn ms | max turn ms | rules | core hash | game's digests | path search | motion | commands, grid |"
    );
    println!("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    println!(
        "| {} | {} | {} ({}) | {:.2} | {:.2} | {:.2} | {:.1}% | {:.1}% | {:.2}% | {:.1}% | {:.1}% | {:.1}% |",
        a.turns.len(),
        if a.decided { "one player left" } else { "turn limit" },
        a.peak.0,
        a.peak.1,
        ms(pick(50)),
        ms(pick(99)),
        ms(sorted[sorted.len() - 1]),
        share(a.phases[3]),
        share(a.phases[4]),
        share(a.phases[6]),
        share(a.phases[1]),
        share(a.phases[2]),
        share(a.phases[0]),
    );
    println!();
    println!(
        "Outside the step: the bots and the script took {:.1} ms in all ({:.1}% of the steps' time).",
        ms(a.phases[5]),
        share(a.phases[5])
    );
    println!(
        "Checks: {threads} and {other} threads gave the same {} hashes; {} units at the peak (at least 1000); {} commands refused (0).",
        a.hashes.len(),
        a.peak.0,
        a.rejected
    );
    if failed {
        std::process::exit(1);
    }
}
