//! The command line of the two-peer game, as a function the `game_loop` example's `main` and the
//! docs test (`tests/tests/docs.rs`, which runs `docs/desync-walkthrough.md`) both call.
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
//!
//! The perturbation is the caller's `plant` function, so that this library never needs sim's
//! test-only `desync-hook` feature: the example and the tests pass `World::plant_desync`, which
//! their dev-dependency on sim enables.

use std::cell::RefCell;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use pathing::WorldPos;
use sim::digest_tree::range_indices;
use sim::state_hash::hex;
use sim::{Command, CommandKind, EntityId, TurnReport, Unit, World};

use crate::{INPUT_DELAY, MAP_TILES, run_game};

const USAGE: &str = "usage: game_loop [--turns N] [--desync-at TURN] [--record DIR]";

/// Runs the game's command line: `args` without the program name, the report to `out`, usage
/// and errors to `err`. `plant` perturbs a unit of peer B's world when `--desync-at` asks for it
/// and says whether it could.
///
/// Returns the exit code: 0 when the peers agreed on every hash, 1 after a desync, 2 on a usage
/// error or when the game could not be built, recorded or reported.
pub fn game_loop(args: &[String], out: &mut dyn Write, err: &mut dyn Write, plant: &mut dyn FnMut(&mut World, EntityId) -> bool) -> u8 {
    let (mut turns, mut desync_at, mut record) = (100u32, None::<u32>, None::<PathBuf>);
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == "--help" || arg == "-h" {
            return if writeln!(out, "{USAGE}").is_ok() { 0 } else { 2 };
        }
        let value = args.next();
        let number = || value.and_then(|v| v.parse::<u32>().ok());
        match (arg.as_str(), number()) {
            ("--turns", Some(n)) => turns = n,
            ("--desync-at", Some(t)) => desync_at = Some(t),
            ("--record", _) if value.is_some() => record = value.map(PathBuf::from),
            _ => {
                let _ = writeln!(err, "{USAGE}");
                return 2;
            }
        }
    }
    match play(turns, desync_at, record.as_deref(), out, plant) {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(err, "game_loop: {e}");
            2
        }
    }
}

/// The report, written from the game's callbacks too; the first write error is kept and returned
/// once the game is over, since a callback cannot return it.
struct Log<'a> {
    out: &'a mut dyn Write,
    error: Option<io::Error>,
}

impl Log<'_> {
    fn line(&mut self, text: std::fmt::Arguments<'_>) {
        if self.error.is_none()
            && let Err(e) = writeln!(self.out, "{text}")
        {
            self.error = Some(e);
        }
    }

    fn finish(self) -> io::Result<()> {
        self.error.map_or(Ok(()), Err)
    }
}

fn play(
    turns: u32,
    desync_at: Option<u32>,
    record: Option<&Path>,
    out: &mut dyn Write,
    plant: &mut dyn FnMut(&mut World, EntityId) -> bool,
) -> Result<u8, Box<dyn std::error::Error>> {
    let log = RefCell::new(Log { out, error: None });
    let side = MAP_TILES * 4;
    log.borrow_mut()
        .line(format_args!("{side} x {side} navcells, 2 peers (B with 2 path threads), input delay {INPUT_DELAY} turns, {turns} turns"));
    let outputs = match record {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            // The replay writer flushes every record, so a crashed game leaves a readable file.
            Some([File::create(dir.join("a.replay"))?, File::create(dir.join("b.replay"))?])
        }
        None => None,
    };

    // The fault: a one-bit change that no command explains, as a float computed differently on
    // one machine would make.
    let mut fault = |world: &mut World| {
        if Some(world.turn()) == desync_at {
            let first = world.units().next().map(|u| u.id);
            let turn = world.turn();
            match first {
                Some(unit) if plant(world, unit) => {
                    log.borrow_mut().line(format_args!("turn {turn}: peer B flips one bit of unit {}", name(unit)))
                }
                _ => log.borrow_mut().line(format_args!("turn {turn}: peer B has no unit to perturb")),
            }
        }
    };
    let mut on_turn = |commands: &[Command], report: &TurnReport| {
        let mut log = log.borrow_mut();
        for c in commands {
            log.line(format_args!("turn {}: player {} seq {}: {}", c.turn, c.player, c.seq, describe(&c.kind)));
        }
        if (report.turn + 1).is_multiple_of(10) {
            log.line(format_args!("turn {}: hash {}", report.turn, &hex(&report.hash)[..16]));
        }
    };
    let outcome = run_game(turns, outputs, &mut fault, &mut on_turn)?;
    let mut log = log.into_inner();
    let n = outcome.counts;
    log.line(format_args!(
        "peer A saw {} units spawned, {} orders completed, {} waypoint routes, {} obstructions placed, {} commands rejected",
        n.spawned, n.arrived, n.routes, n.placed, n.rejected
    ));

    let Some(d) = outcome.desync else {
        log.line(format_args!("{} turns, the peers agreed on every hash; final hash {}", outcome.turns, hex(&outcome.final_hash)));
        if let Some(dir) = record {
            log.line(format_args!("replays: {} {}", dir.join("a.replay").display(), dir.join("b.replay").display()));
        }
        log.finish()?;
        return Ok(0);
    };
    log.line(format_args!("DESYNC after turn {}: peer A {}, peer B {}", d.turn, &hex(&d.hashes[0])[..16], &hex(&d.hashes[1])[..16]));
    log.line(format_args!("  components: {}", d.components.join(", ")));
    for leaf in &d.leaves {
        for k in &leaf.leaves {
            match (leaf.component.as_str(), range_indices(*k)) {
                ("units", Some(r)) => log.line(format_args!("  units: leaf {k}, entity indices {}..={}", r.start(), r.end())),
                (component, _) => log.line(format_args!("  {component}: leaf {k}")),
            }
        }
    }
    let pos = |u: &Option<Unit>| u.as_ref().map_or("gone".to_owned(), |u| format!("({}, {})", u.pos.x, u.pos.z));
    for (a, b) in &d.units {
        let id = a.as_ref().or(b.as_ref()).map_or(String::new(), |u| name(u.id));
        log.line(format_args!("  unit {id}: peer A at {}, peer B at {}", pos(a), pos(b)));
    }
    if let Some(dir) = record {
        std::fs::write(dir.join("a.snapshot"), &d.snapshots[0])?;
        std::fs::write(dir.join("b.snapshot"), &d.snapshots[1])?;
        log.line(format_args!("saved {0}/a.snapshot {0}/b.snapshot and both replays", dir.display()));
    }
    log.finish()?;
    Ok(1)
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
