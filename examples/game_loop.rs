//! The command line of the two-peer game in `src/lib.rs` (read that first).
//!
//! ```text
//! cargo run --release -p phalanx-examples --example game_loop -- [--turns N] [--desync-at TURN] [--record DIR]
//! ```
//!
//! Prints every turn's commands and, every 10 turns, the hash both peers agreed on. With
//! `--record DIR` each peer writes its replay (`DIR/a.replay`, `DIR/b.replay`); with
//! `--desync-at TURN`, peer B's world is perturbed (one bit of one unit's x coordinate) just
//! before it steps `TURN`, and the game reports where the peers diverged, saves both states
//! (`DIR/a.snapshot`, `DIR/b.snapshot`) and exits with code 1.

use std::fs::File;
use std::path::PathBuf;
use std::process::ExitCode;

use pathing::WorldPos;
use phalanx_examples::{INPUT_DELAY, MAP_TILES, run_game};
use sim::EntityId;
use sim::command::{Command, CommandKind};
use sim::digest_tree::range_indices;
use sim::state_hash::hex;
use sim::world::{TurnReport, Unit, World};

const USAGE: &str = "usage: game_loop [--turns N] [--desync-at TURN] [--record DIR]";

fn main() -> ExitCode {
    let (mut turns, mut desync_at, mut record) = (100u32, None::<u32>, None::<PathBuf>);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--help" || arg == "-h" {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        let value = args.next();
        let number = || value.as_deref().and_then(|v| v.parse::<u32>().ok());
        match (arg.as_str(), number()) {
            ("--turns", Some(n)) => turns = n,
            ("--desync-at", Some(t)) => desync_at = Some(t),
            ("--record", _) if value.is_some() => record = value.map(PathBuf::from),
            _ => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    match play(turns, desync_at, record) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("game_loop: {e}");
            ExitCode::from(2)
        }
    }
}

fn play(turns: u32, desync_at: Option<u32>, record: Option<PathBuf>) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let side = MAP_TILES * 4;
    println!("{side} x {side} navcells, 2 peers (B with 2 path threads), input delay {INPUT_DELAY} turns, {turns} turns");
    let outputs = match &record {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            // The replay writer flushes every record, so a crashed game leaves a readable file.
            Some([File::create(dir.join("a.replay"))?, File::create(dir.join("b.replay"))?])
        }
        None => None,
    };

    // The fault: a one-bit change that no command explains, as a float computed differently on
    // one machine would make. Only with sim's `desync-hook` feature.
    let mut fault = |world: &mut World| {
        if Some(world.turn()) == desync_at {
            let first = world.units().next().map(|u| u.id);
            match first {
                Some(unit) if world.plant_desync(unit) => println!("turn {}: peer B flips one bit of unit {}", world.turn(), name(unit)),
                _ => println!("turn {}: peer B has no unit to perturb", world.turn()),
            }
        }
    };
    let mut on_turn = |commands: &[Command], report: &TurnReport| {
        for c in commands {
            println!("turn {}: player {} seq {}: {}", c.turn, c.player, c.seq, describe(&c.kind));
        }
        if (report.turn + 1).is_multiple_of(10) {
            println!("turn {}: hash {}", report.turn, &hex(&report.hash)[..16]);
        }
    };
    let outcome = run_game(turns, outputs, &mut fault, &mut on_turn)?;
    let n = outcome.counts;
    println!(
        "peer A saw {} units spawned, {} orders completed, {} waypoint routes, {} obstructions placed, {} commands rejected",
        n.spawned, n.arrived, n.routes, n.placed, n.rejected
    );

    let Some(d) = outcome.desync else {
        println!("{} turns, the peers agreed on every hash; final hash {}", outcome.turns, hex(&outcome.final_hash));
        if let Some(dir) = &record {
            println!("replays: {} {}", dir.join("a.replay").display(), dir.join("b.replay").display());
        }
        return Ok(ExitCode::SUCCESS);
    };
    println!("DESYNC after turn {}: peer A {}, peer B {}", d.turn, &hex(&d.hashes[0])[..16], &hex(&d.hashes[1])[..16]);
    println!("  components: {}", d.components.join(", "));
    for leaf in &d.leaves {
        for k in &leaf.leaves {
            match (leaf.component.as_str(), range_indices(*k)) {
                ("units", Some(r)) => println!("  units: leaf {k}, entity indices {}..={}", r.start(), r.end()),
                (component, _) => println!("  {component}: leaf {k}"),
            }
        }
    }
    let pos = |u: &Option<Unit>| u.as_ref().map_or("gone".to_owned(), |u| format!("({}, {})", u.pos.x, u.pos.z));
    for (a, b) in &d.units {
        let id = a.as_ref().or(b.as_ref()).map_or(String::new(), |u| name(u.id));
        println!("  unit {id}: peer A at {}, peer B at {}", pos(a), pos(b));
    }
    if let Some(dir) = &record {
        std::fs::write(dir.join("a.snapshot"), &d.snapshots[0])?;
        std::fs::write(dir.join("b.snapshot"), &d.snapshots[1])?;
        println!("saved {0}/a.snapshot {0}/b.snapshot and both replays", dir.display());
    }
    Ok(ExitCode::from(1))
}

/// An entity id as `phalanx verify` and `phalanx diff` write it: index `v` generation.
fn name(id: EntityId) -> String {
    format!("{}v{}", id.index, id.generation)
}

/// A command in a few words, for the log.
fn describe(kind: &CommandKind) -> String {
    let at = |p: &WorldPos| format!("({}, {})", p.x, p.z);
    match kind {
        CommandKind::Spawn { count, at: p, .. } => format!("Spawn {count} units at {}", at(p)),
        CommandKind::Move { units, goal, .. } => {
            format!("Move {} units to {}", units.len(), goal.anchor().map_or("a target".into(), |p| at(&p)))
        }
        CommandKind::MoveByWaypoints { units, goal, .. } => format!("MoveByWaypoints {} units to {}", units.len(), at(goal)),
        CommandKind::PlaceBuilding { square, .. } => format!("PlaceBuilding at ({}, {})", square.x, square.z),
        CommandKind::SetWaypoints { net } => format!("SetWaypoints {} waypoints for class {}", net.points.len(), net.class),
        other => format!("{other:?}"),
    }
}
