//! Turn benchmark on the reference world (`pathing::refworld`): 1024 × 1024 navcells, 8 classes, 100
//! buildings, 1000 trees, and 1000 units in 20 groups of 50, each group ordered across the map
//! (every unit to its own point of a block around the group's destination), re-ordered every 40
//! turns (staggered) or when all of it has arrived or given up.
//!
//! Reported: median, p99 and maximum turn time over the run, and the share of path search,
//! motion, hashing and the rest, measured through `World::step_observed`. Targets: median turn under
//! 5 ms, p99 under 25 ms, hashing under 5% of the turn. The turn-0 spawn and the first orders are
//! included.
//!
//! `cargo bench -p phalanx-sim --bench turn`; `PHALANX_BENCH_QUICK=1` (or no `--bench` argument) runs a
//! 256 × 256 world with 100 units for 40 turns (CI smoke run). `PHALANX_BENCH_THREADS=N` computes
//! path requests on N threads; `PHALANX_BENCH_LANDMARKS=1` gives the units' class a landmark table
//! (`WorldDesc::landmark_classes`, built with the world, outside the timing);
//! `PHALANX_BENCH_MAP=FILE.map` (relative to the repository root) runs the same workload on a
//! Moving AI map (painted navcells of 1 m, no obstructions) instead of the reference world. Exits
//! with status 1 when two runs give different hashes.

// A benchmark, not simulation code: it needs the wall clock to time and floats to report.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use std::time::{Duration, Instant};

use common::ms;
use pathing::classes::ClassSet;
use pathing::passability::WorldDesc;
use pathing::refworld::{RefWorldParams, generate};
use pathing::{Fixed, PassClass, WorldPos};
use sim::{Command, CommandKind, EntityId, Event, GoalSpec, Phase, PlayerId, Settings, SimRng, World};

struct Run {
    turns: Vec<Duration>,
    phases: [Duration; 5],
    hashes: Vec<[u8; 32]>,
    arrived: usize,
    failed: usize,
    moving_unit_turns: usize,
}

/// Where the units walk: a generated world, or a Moving AI map's text.
enum Map {
    Generated(RefWorldParams),
    MovingAi(String),
}

fn run(map: &Map, groups: u32, per_group: u16, turns: u32, threads: usize, landmarks: bool) -> Run {
    let (mut desc, obstructions) = match map {
        Map::Generated(params) => generate(params),
        Map::MovingAi(text) => {
            let parsed = pathing::movingai::parse_map(text).expect("a Moving AI map");
            let (w, h) = (parsed.grid.width(), parsed.grid.height());
            let desc = WorldDesc::from_cells(w, h, Fixed::ONE, parsed.cell_kinds(), ClassSet::zero_ad_defaults()).expect("map size");
            (desc, Vec::new())
        }
    };
    if landmarks {
        desc.landmark_classes = 1; // class 0, `default`, the only class that moves here
    }
    let (side_x, side_z) = (i64::from(desc.grid.width), i64::from(desc.grid.height));
    let mut world =
        World::new(desc, obstructions, Settings { seed: 5, players: groups as u8, ..Settings::default() }).expect("reference world");
    world.set_threads(threads).expect("thread pool");
    if let Some(spins) = std::env::var("PHALANX_BENCH_HELPER_SPINS").ok().and_then(|v| v.parse().ok()) {
        world.set_helper_spins(spins);
    }
    let mut rng = SimRng::new(77);
    let mut pick = |lo: i64, hi: i64| lo + i64::from(rng.below((hi - lo) as u32));
    let margin = (side_x.min(side_z) / 12).min(40);
    let mut spawns = Vec::new();
    let class = pathing::PassClass::new(0).expect("class 0");
    let mut free_point = |world: &World| loop {
        let (x, z) = (pick(margin, side_x - margin), pick(margin, side_z - margin));
        if world.nav().grid().is_passable(pathing::Navcell::new(x as u16, z as u16), class) {
            return (x, z);
        }
    };
    for g in 0..groups {
        let (x, z) = free_point(&world);
        let at = WorldPos::from_int(x as i32, z as i32);
        // One player per group, so a group's units are found by their owner.
        let player = (g + 1) as u8;
        spawns.push(Command {
            turn: 0,
            player: PlayerId(player),
            seq: g,
            kind: CommandKind::Spawn {
                class: PassClass::of(0),
                at,
                count: per_group,
                radius: Fixed::from_num(1) / 2,
                speed: Fixed::from_num(9),
                turn_rate: None,
            },
        });
    }
    let mut group_units: Vec<Vec<EntityId>> = vec![Vec::new(); groups as usize];
    let mut out = Run { turns: Vec::new(), phases: [Duration::ZERO; 5], hashes: Vec::new(), arrived: 0, failed: 0, moving_unit_turns: 0 };
    let mut pending: Vec<Command> = spawns;
    let mut seq = 1000u32;
    let mut idle_turns = vec![0u32; groups as usize];
    for turn in 0..turns {
        let commands: Vec<Command> = pending
            .drain(..)
            .map(|mut c| {
                c.turn = turn;
                c
            })
            .collect();
        let mut marks = [Duration::ZERO; 5];
        let mut last = Instant::now();
        let started = last;
        let report = world.step_observed(&commands, &mut |phase| {
            let now = Instant::now();
            let k = match phase {
                Phase::Commands => 0,
                Phase::Grid => 1,
                Phase::Paths => 2,
                // This workload has no formations and no game: their (empty) phases count with motion.
                Phase::Motion | Phase::Formations | Phase::Rules => 3,
                Phase::Hash | Phase::GameHash => 4,
            };
            marks[k] += now - last;
            last = now;
        });
        out.turns.push(started.elapsed());
        for (total, m) in out.phases.iter_mut().zip(marks) {
            *total += m;
        }
        out.hashes.push(report.hash);
        for e in &report.events {
            match e {
                Event::Spawned { unit } => {
                    let owner = world.unit(*unit).expect("just spawned").owner;
                    group_units[usize::from(owner.0) - 1].push(*unit);
                }
                Event::Arrived { .. } => out.arrived += 1,
                Event::Failed { .. } => out.failed += 1,
                _ => {}
            }
        }
        out.moving_unit_turns += world.units().filter(|u| !u.orders.is_empty()).count();
        // Re-order a group every 40 turns (staggered by group), or when none of its units has an
        // order for 5 turns (all arrived or gave up).
        for (g, units) in group_units.iter().enumerate() {
            let moving = units.iter().any(|&id| world.unit(id).is_some_and(|u| !u.orders.is_empty()));
            idle_turns[g] = if moving { 0 } else { idle_turns[g] + 1 };
            if !units.is_empty() && (turn == 1 || idle_turns[g] == 5 || (turn + 2 * g as u32).is_multiple_of(40)) {
                idle_turns[g] = 0;
                let dest = free_point(&world);
                let player = (g + 1) as u8;
                for (k, &id) in units.iter().enumerate() {
                    let k = k as i64;
                    // A block of 8 × 7 points 6 m apart: units do not yet step around standing
                    // units, so their destinations leave room to walk between them.
                    let goal = WorldPos::from_int((dest.0 + 6 * (k % 8) - 24) as i32, (dest.1 + 6 * (k / 8) - 21) as i32);
                    pending.push(Command {
                        turn: 0,
                        player: PlayerId(player),
                        seq,
                        kind: CommandKind::Move { units: vec![id], goal: GoalSpec::Point(goal), queue: false },
                    });
                    seq += 1;
                }
            }
        }
    }
    out
}

fn main() {
    let mode = common::Mode::from_env();
    let (quick, threads) = (mode.quick, mode.threads);
    let landmarks = std::env::var("PHALANX_BENCH_LANDMARKS").is_ok_and(|v| v == "1");
    let (params, groups, per_group, turns) =
        if quick { (RefWorldParams::scaled(64, 1), 4, 25, 40) } else { (RefWorldParams::reference(1), 20, 50, 300) };
    let (map, name) = match std::env::var("PHALANX_BENCH_MAP") {
        Ok(path) => {
            // Relative paths are from the repository root (cargo runs benches in the crate's folder).
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            let text = std::fs::read_to_string(root.join(&path)).unwrap_or_else(|e| panic!("{path}: {e}"));
            (Map::MovingAi(text), path)
        }
        Err(_) => (Map::Generated(params), format!("generated {0}×{0} navcells", params.tiles * 4)),
    };
    println!(
        "Mode: {}; {name}, {} units in {groups} groups, {turns} turns of 200 ms, {threads} path thread(s), {}.",
        mode.name(),
        u32::from(per_group) * groups,
        if landmarks { "landmark table for the units' class" } else { "octile heuristic" }
    );
    let (cpu_before, wall_before) = (process_cpu_seconds(), Instant::now());
    let a = run(&map, groups, per_group, turns, threads, landmarks);
    let (cpu, wall) = (process_cpu_seconds().zip(cpu_before).map(|(after, before)| after - before), wall_before.elapsed());
    let b = run(&map, groups, per_group, turns, threads.max(2), landmarks);
    if a.hashes != b.hashes {
        eprintln!("CHECK FAILED: {threads} and {} threads gave different hashes", threads.max(2));
        std::process::exit(1);
    }
    let mut sorted = a.turns.clone();
    sorted.sort();
    let median = sorted[sorted.len() / 2];
    let p99 = sorted[(sorted.len() * 99 / 100).min(sorted.len() - 1)];
    let max = *sorted.last().expect("turns");
    let total: Duration = a.turns.iter().sum();
    let share = |d: Duration| 100.0 * d.as_secs_f64() / total.as_secs_f64().max(1e-12);
    println!();
    println!("| measure | value | target | verdict |");
    println!("| --- | ---: | --- | --- |");
    println!("| median turn | {:.3} ms | < 5 ms | {} |", ms(median), if ms(median) < 5.0 { "PASS" } else { "MISS" });
    println!("| p99 turn | {:.3} ms | < 25 ms | {} |", ms(p99), if ms(p99) < 25.0 { "PASS" } else { "MISS" });
    println!("| max turn | {:.3} ms | | |", ms(max));
    println!("| hashing share | {:.2}% | < 5% | {} |", share(a.phases[4]), if share(a.phases[4]) < 5.0 { "PASS" } else { "MISS" });
    println!("| path search share | {:.1}% | | |", share(a.phases[2]));
    println!("| path search, mean per turn | {:.3} ms | | |", ms(a.phases[2]) / a.turns.len() as f64);
    println!("| motion share | {:.1}% | | |", share(a.phases[3]));
    println!("| commands + grid updates share | {:.1}% | | |", share(a.phases[0] + a.phases[1]));
    println!("| unit-turns with an order / arrivals / gave up | {} / {} / {} | | |", a.moving_unit_turns, a.arrived, a.failed);
    println!("| second run ({} threads): same hashes | yes | | |", threads.max(2));
    if let Some(cpu) = cpu {
        // The world's set-up is inside this window too; on 2 threads an idle helper that spins
        // shows as processor time beyond the wall time.
        println!(
            "| processor time of the first run (set-up included) | {cpu:.2} s, {:.0}% of its {:.2} s | | |",
            100.0 * cpu / wall.as_secs_f64(),
            wall.as_secs_f64()
        );
    }
}

/// The process's processor time so far (user and system, every thread), from `/proc/self/stat`
/// (Linux; its clock ticks are 1/100 s, the kernel's fixed `USER_HZ`); `None` elsewhere.
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}
