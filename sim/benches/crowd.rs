//! Crowd benchmarks for local movement (issue 7): 1000 units through a chokepoint, and two armies
//! of 500 passing through each other.
//!
//! The world is flat, 256 × 128 m with 1 m navcells, walled round. `chokepoint`: a wall across the
//! middle with one 12 m gap; 1000 units in a 40 × 25 block on the west side, each ordered to its
//! mirror point on the east side (a group move, every unit to its own place in the block).
//! `armies`: two blocks of 500 (25 × 20) facing each other, each ordered onto the other's
//! positions, so they meet head on in the middle.
//!
//! A run lasts until every unit has been without an order for 5 turns (or at most 300 turns).
//! Reported per scenario: the turns it took, median, p99 and maximum turn time; long-range and
//! short-range searches per turn and the vertices a short-range search expands; arrivals and failures; the worst overlap
//! at the end. Target: median turn under 8 ms. Exits with status 1 when one and two path threads
//! give different hashes.
//!
//! `cargo bench -p phalanx-sim --bench crowd`; `PHALANX_BENCH_QUICK=1` (or no `--bench` argument) runs
//! 200 units for at most 120 turns (CI smoke run). `PHALANX_BENCH_THREADS=N` computes path requests on N
//! threads.

// A benchmark, not simulation code: it needs the wall clock to time and floats to report.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use std::time::{Duration, Instant};

use common::ms;
use pathing::{Fixed, WorldPos};
use sim::test_support::{Wall, flat_world};
use sim::{Command, CommandKind, Event, GoalSpec, PlayerId, Settings, World};

const W: i32 = 256;
const H: i32 = 128;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Scenario {
    Chokepoint,
    Armies,
}

/// Wall rectangles `(x0, z0, x1, z1)` in metres.
fn walls(scenario: Scenario) -> Vec<Wall> {
    let mut out = vec![(0, 0, W, 1), (0, H - 1, W, H), (0, 0, 1, H), (W - 1, 0, W, H)];
    if scenario == Scenario::Chokepoint {
        out.push((127, 0, 129, 58));
        out.push((127, 70, 129, H));
    }
    out
}

fn world(scenario: Scenario, threads: usize) -> World {
    flat_world(W as u32, H as u32, &walls(scenario), Settings { seed: 9, players: 2, ..Settings::default() }, threads)
}

/// The spawn points of a block `cols × rows`, 2 m apart, with its south-west corner at `(x, z)`.
fn block(x: i32, z: i32, cols: i32, rows: i32) -> Vec<(i32, i32)> {
    (0..rows).flat_map(|r| (0..cols).map(move |c| (x + 2 * c, z + 2 * r))).collect()
}

/// A unit to place: its player, spawn point and goal point (metres).
type Placement = (u8, (i32, i32), (i32, i32));

struct Run {
    turns: Vec<Duration>,
    hashes: Vec<[u8; 32]>,
    long: Vec<u32>,
    short: Vec<u32>,
    expanded: u64,
    arrived: usize,
    failed: usize,
    units: usize,
    worst_overlap: f64,
}

fn run(scenario: Scenario, units: usize, turns: u32, threads: usize) -> Run {
    let mut w = world(scenario, threads);
    let mut plan: Vec<Placement> = Vec::new();
    match scenario {
        Scenario::Chokepoint => {
            let (cols, rows) = if units >= 1000 { (40, 25) } else { (20, 10) };
            for p in block(30, H / 2 - rows, cols, rows) {
                plan.push((1, p, (W - p.0, p.1)));
            }
        }
        Scenario::Armies => {
            let (cols, rows) = if units >= 1000 { (25, 20) } else { (10, 10) };
            let (west, east) = (block(70, H / 2 - rows, cols, rows), block(W - 70 - 2 * cols, H / 2 - rows, cols, rows));
            for (a, b) in west.iter().zip(&east) {
                plan.push((1, *a, *b));
                plan.push((2, *b, *a));
            }
        }
    }
    // Spawns are applied in (player, seq) order: list the plan that way so ids match it.
    plan.sort_by_key(|p| p.0);
    let spawns: Vec<Command> = plan
        .iter()
        .enumerate()
        .map(|(n, &(player, (x, z), _))| Command {
            turn: 0,
            player: PlayerId(player),
            seq: n as u32,
            kind: CommandKind::Spawn {
                class: pathing::PassClass::of(0),
                at: WorldPos::from_int(x, z),
                count: 1,
                radius: Fixed::from_num(1) / 2,
                speed: Fixed::from_num(9),
                turn_rate: None,
            },
        })
        .collect();
    let report = w.step(&spawns);
    let ids: Vec<_> = report.events.iter().filter_map(|e| if let Event::Spawned { unit } = e { Some(*unit) } else { None }).collect();
    let orders: Vec<Command> = ids
        .iter()
        .zip(&plan)
        .enumerate()
        .map(|(n, (&id, &(player, _, (gx, gz))))| Command {
            turn: 1,
            player: PlayerId(player),
            seq: n as u32,
            kind: CommandKind::Move { units: vec![id], goal: GoalSpec::Point(WorldPos::from_int(gx, gz)), queue: false },
        })
        .collect();
    let mut out = Run {
        turns: Vec::new(),
        hashes: Vec::new(),
        long: Vec::new(),
        short: Vec::new(),
        expanded: 0,
        arrived: 0,
        failed: 0,
        units: ids.len(),
        worst_overlap: 0.0,
    };
    let mut quiet = 0;
    for turn in 1..turns {
        // Until every unit has stood without an order for 5 turns.
        quiet = if turn > 1 && w.units().all(|u| u.orders.is_empty()) { quiet + 1 } else { 0 };
        if quiet == 5 {
            break;
        }
        let commands = if turn == 1 { orders.clone() } else { Vec::new() };
        let started = Instant::now();
        let report = w.step(&commands);
        out.turns.push(started.elapsed());
        out.hashes.push(report.hash);
        let stats = w.path_stats();
        out.long.push(stats.long);
        out.short.push(stats.short);
        out.expanded += stats.short_expanded;
        for e in &report.events {
            match e {
                Event::Arrived { .. } => out.arrived += 1,
                Event::Failed { .. } => out.failed += 1,
                _ => {}
            }
        }
    }
    let all: Vec<_> = w.units().collect();
    for (k, a) in all.iter().enumerate() {
        for b in &all[k + 1..] {
            let dx = (a.pos.x - b.pos.x).to_bits() as f64 / 65536.0;
            let dz = (a.pos.z - b.pos.z).to_bits() as f64 / 65536.0;
            let reach = (a.radius + b.radius).to_bits() as f64 / 65536.0;
            let d = (dx * dx + dz * dz).sqrt();
            if d < reach {
                out.worst_overlap = out.worst_overlap.max((reach - d) / reach);
            }
        }
    }
    out
}

fn main() {
    let mode = common::Mode::from_env();
    let (quick, threads) = (mode.quick, mode.threads);
    let (units, turns) = if quick { (200, 120) } else { (1000, 300) };
    println!("Mode: {}; 256 × 128 m flat world, 1 m navcells, turns of 200 ms, {threads} path thread(s).", mode.name());
    println!();
    println!(
        "| scenario | units | turns | median turn | p99 turn | max turn | long searches / turn | short searches / turn (max) | vertices / short search | arrived / failed | worst overlap at end | target median < 8 ms |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |");
    let mut diverged = false;
    for (name, scenario) in [("chokepoint", Scenario::Chokepoint), ("armies", Scenario::Armies)] {
        let a = run(scenario, units, turns, threads);
        let b = run(scenario, units, turns, threads.max(2));
        if a.hashes != b.hashes {
            eprintln!("CHECK FAILED: {name}: {threads} and {} threads gave different hashes", threads.max(2));
            diverged = true;
        }
        let mut sorted = a.turns.clone();
        sorted.sort();
        let median = sorted[sorted.len() / 2];
        let p99 = sorted[(sorted.len() * 99 / 100).min(sorted.len() - 1)];
        let max = *sorted.last().expect("turns");
        let n = a.turns.len() as f64;
        let shorts: u64 = a.short.iter().map(|&s| u64::from(s)).sum();
        let longs: u64 = a.long.iter().map(|&s| u64::from(s)).sum();
        println!(
            "| {name} | {} | {} | {:.3} ms | {:.3} ms | {:.3} ms | {:.2} | {:.1} ({}) | {:.1} | {} / {} | {:.0}% | {} |",
            a.units,
            a.turns.len() + 1,
            ms(median),
            ms(p99),
            ms(max),
            longs as f64 / n,
            shorts as f64 / n,
            a.short.iter().max().copied().unwrap_or(0),
            a.expanded as f64 / (shorts.max(1)) as f64,
            a.arrived,
            a.failed,
            100.0 * a.worst_overlap,
            if ms(median) < 8.0 { "PASS" } else { "MISS" }
        );
    }
    if diverged {
        std::process::exit(1);
    }
}
