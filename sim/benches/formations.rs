//! Formation benchmark (issue 9): 20 formations of 50 units crossing the reference world of
//! `pathing::refworld` (1024 × 1024 navcells, 100 buildings, 1000 trees, hills and lakes).
//!
//! Each formation is spawned near the west edge, at its own height, formed up (layouts in turn:
//! box, line, column, wedge, loose) and ordered to a point near the east edge at the height of
//! another formation, so their paths cross. A run lasts until every formation has arrived (or at
//! most 900 turns).
//!
//! Reported: turns, median, p99 and maximum turn time, the formation phase's share (measured
//! through `World::step_observed`), path searches, formations arrived, and the members found on a
//! navcell impassable for them at any turn (must be 0). Target: median turn under 10 ms. Exits
//! with status 1 when one and two path threads give different hashes, or a member stood on an
//! impassable navcell.
//!
//! `cargo bench -p phalanx-sim --bench formations`; `PHALANX_BENCH_QUICK=1` (or no `--bench` argument)
//! runs 4 formations of 25 on a 256 × 256 world for at most 200 turns (CI smoke run).
//! `PHALANX_BENCH_THREADS=N` computes path requests on N threads.

// A benchmark, not simulation code: it needs the wall clock to time and floats to report.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use std::time::{Duration, Instant};

use common::ms;
use pathing::refworld::{RefWorldParams, generate};
use pathing::{Fixed, PassClass, WorldPos};
use sim::formation::{FormationId, Layout};
use sim::{Command, CommandKind, EntityId, Event, GoalSpec, Phase, PlayerId, Settings, World};

struct Run {
    turns: Vec<Duration>,
    formation_phase: Duration,
    hashes: Vec<[u8; 32]>,
    long_searches: u64,
    arrived: usize,
    formations: usize,
    units: usize,
    on_impassable: usize,
}

/// The passable navcell of class 0 nearest to `(x, z)` along its row, then the rows around it.
fn passable_near(world: &World, x: i64, z: i64) -> (i64, i64) {
    let class = PassClass::new(0).expect("class 0");
    let side = i64::from(world.nav().grid().width());
    for dz in 0..side {
        for dx in 0..side {
            for (px, pz) in [(x + dx, z + dz), (x - dx, z + dz), (x + dx, z - dz), (x - dx, z - dz)] {
                if (0..side).contains(&px)
                    && (0..side).contains(&pz)
                    && world.nav().grid().is_passable(pathing::Navcell::new(px as u16, pz as u16), class)
                {
                    return (px, pz);
                }
            }
        }
    }
    (x, z)
}

fn run(params: &RefWorldParams, formations: u32, per_formation: u16, max_turns: u32, threads: usize) -> Run {
    let (desc, obstructions) = generate(params);
    let side = i64::from(desc.grid.width);
    let mut world =
        World::new(desc, obstructions, Settings { seed: 5, players: formations as u8, ..Settings::default() }).expect("reference world");
    world.set_threads(threads).expect("thread pool");
    let margin = side / 10;
    let band = |g: u32| margin + (side - 2 * margin) * i64::from(g) / i64::from(formations.max(2) - 1).max(1);
    let layouts = [Layout::Box, Layout::Line, Layout::Column, Layout::Wedge, Layout::Loose];
    let mut goals = Vec::new();
    let mut spawns = Vec::new();
    for g in 0..formations {
        let (x, z) = passable_near(&world, margin, band(g));
        // The goal: the east edge at the height of the formation `formations / 2` further on.
        let goals_at = passable_near(&world, side - margin, band((g + formations / 2) % formations));
        goals.push(goals_at);
        spawns.push(Command {
            turn: 0,
            player: PlayerId((g + 1) as u8),
            seq: g,
            kind: CommandKind::Spawn {
                class: PassClass::of(0),
                at: WorldPos::from_int(x as i32, z as i32),
                count: per_formation,
                radius: Fixed::from_num(1) / 2,
                speed: Fixed::from_num(9),
                turn_rate: None,
            },
        });
    }
    let mut out = Run {
        turns: Vec::new(),
        formation_phase: Duration::ZERO,
        hashes: Vec::new(),
        long_searches: 0,
        arrived: 0,
        formations: formations as usize,
        units: 0,
        on_impassable: 0,
    };
    let mut units: Vec<Vec<EntityId>> = vec![Vec::new(); formations as usize];
    let mut ids: Vec<FormationId> = Vec::new();
    let mut pending = spawns;
    for turn in 0..max_turns {
        let commands: Vec<Command> = std::mem::take(&mut pending)
            .into_iter()
            .map(|mut c| {
                c.turn = turn;
                c
            })
            .collect();
        let started = Instant::now();
        let mut last = started;
        let mut formation_phase = Duration::ZERO;
        let report = world.step_observed(&commands, &mut |phase| {
            let now = Instant::now();
            if phase == Phase::Formations {
                formation_phase += now - last;
            }
            last = now;
        });
        out.turns.push(started.elapsed());
        out.formation_phase += formation_phase;
        out.hashes.push(report.hash);
        out.long_searches += u64::from(world.path_stats().long);
        for e in &report.events {
            match e {
                Event::Spawned { unit } => {
                    let owner = world.unit(*unit).expect("just spawned").owner;
                    units[usize::from(owner.0) - 1].push(*unit);
                    out.units += 1;
                }
                Event::FormationCreated { formation } => ids.push(*formation),
                Event::FormationArrived { .. } if turn > 3 => out.arrived += 1,
                _ => {}
            }
        }
        for u in world.units() {
            let pass = world.nav().class_nav(u.class).expect("movement class").pass_map();
            if !pass.is_passable(world.navcell_of(u.pos)) && !u.escape {
                out.on_impassable += 1;
            }
        }
        match turn {
            0 => {
                for (g, members) in units.iter().enumerate() {
                    let layout = layouts[g % layouts.len()];
                    pending.push(Command {
                        turn: 0,
                        player: PlayerId((g + 1) as u8),
                        seq: 0,
                        kind: CommandKind::FormGroup { units: members.clone(), layout },
                    });
                }
            }
            2 => {
                for (g, &id) in ids.iter().enumerate() {
                    let (x, z) = goals[g];
                    pending.push(Command {
                        turn: 0,
                        player: PlayerId((g + 1) as u8),
                        seq: 1,
                        kind: CommandKind::MoveFormation { formation: id, goal: GoalSpec::Point(WorldPos::from_int(x as i32, z as i32)) },
                    });
                }
            }
            _ => {}
        }
        if turn > 3 && out.arrived == out.formations {
            break;
        }
    }
    out
}

fn main() {
    let mode = common::Mode::from_env();
    let (quick, threads) = (mode.quick, mode.threads);
    let (params, formations, per_formation, max_turns) =
        if quick { (RefWorldParams::scaled(64, 1), 4, 25, 200) } else { (RefWorldParams::reference(1), 20, 50, 900) };
    println!(
        "Mode: {}; {}×{} navcells, {formations} formations of {per_formation}, at most {max_turns} turns of 200 ms, {threads} path thread(s).",
        mode.name(),
        params.tiles * 4,
        params.tiles * 4,
    );
    let a = run(&params, formations, per_formation, max_turns, threads);
    let b = run(&params, formations, per_formation, max_turns, threads.max(2));
    let mut failed = false;
    if a.hashes != b.hashes {
        eprintln!("CHECK FAILED: {threads} and {} threads gave different hashes", threads.max(2));
        failed = true;
    }
    if a.on_impassable > 0 {
        eprintln!("CHECK FAILED: {} unit-turns on impassable navcells", a.on_impassable);
        failed = true;
    }
    let mut sorted = a.turns.clone();
    sorted.sort();
    let median = sorted[sorted.len() / 2];
    let p99 = sorted[(sorted.len() * 99 / 100).min(sorted.len() - 1)];
    let max = *sorted.last().expect("turns");
    let total: Duration = a.turns.iter().sum();
    println!();
    println!("| measure | value | target | verdict |");
    println!("| --- | ---: | --- | --- |");
    println!("| units / formations | {} / {} | | |", a.units, a.formations);
    println!("| turns | {} | | |", a.turns.len());
    println!("| median turn | {:.3} ms | < 10 ms | {} |", ms(median), if ms(median) < 10.0 { "PASS" } else { "MISS" });
    println!("| p99 turn | {:.3} ms | | |", ms(p99));
    println!("| max turn | {:.3} ms | | |", ms(max));
    println!("| formation phase share | {:.1}% | | |", 100.0 * a.formation_phase.as_secs_f64() / total.as_secs_f64().max(1e-12));
    println!("| long-range searches | {} | | |", a.long_searches);
    println!(
        "| formations arrived | {} / {} | all | {} |",
        a.arrived,
        a.formations,
        if a.arrived == a.formations { "PASS" } else { "MISS" }
    );
    println!("| unit-turns on impassable navcells | {} | 0 | {} |", a.on_impassable, if a.on_impassable == 0 { "PASS" } else { "FAIL" });
    println!("| second run ({} threads): same hashes | {} | | |", threads.max(2), if a.hashes == b.hashes { "yes" } else { "no" });
    if failed {
        std::process::exit(1);
    }
}
