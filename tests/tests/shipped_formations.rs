//! Every shipped scenario of `examples/scenarios/` that makes formations, played to its end: no
//! formation stands still for more than [`STILL_LIMIT`] turns in a row while it has somewhere to
//! go, and every formation sent somewhere arrives before the scenario ends or disbands it
//! (docs/formation-rules.md, "Formations that meet" and "Finalising and arriving").
//!
//! `PHALANX_FORMATION_TRACE=1` prints every active formation's state each turn.

use std::path::PathBuf;

use pathing::WorldPos;
use replay::scenario::Scenario;
use sim::Event;
use sim::formation::{FormationId, FormationState};

/// Turns a formation may stand still (position and facing unchanged) while following, turning or
/// finalising. Waiting for lagging members lasts at most 8 turns in a row, and a formation that
/// gives way to another waits while the other passes; more than this is a formation frozen.
const STILL_LIMIT: u32 = 40;

fn scenarios_with_formations() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter(|p| std::fs::read_to_string(p).unwrap().contains("\"form_group\""))
        .collect();
    out.sort();
    out
}

struct Track {
    still: u32,
    /// The longest run of still turns.
    longest: u32,
    last: Option<(WorldPos, pathing::Vec2)>,
    /// The turn of the last move order not yet followed by an arrival.
    sent: Option<u32>,
}

#[test]
fn every_formation_of_the_shipped_scenarios_keeps_moving_and_arrives() {
    let trace = std::env::var_os("PHALANX_FORMATION_TRACE").is_some();
    let paths = scenarios_with_formations();
    assert!(!paths.is_empty(), "examples/scenarios holds a scenario with formations");
    for path in paths {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let scenario = Scenario::load_with(&path, &phalanx_cli::stock_rulesets()).unwrap_or_else(|e| panic!("{e}"));
        let mut world = scenario.world().unwrap();
        let mut script = scenario.script();
        let mut tracks: Vec<(FormationId, Track)> = Vec::new();
        let mut arrivals = 0;
        for _ in 0..scenario.turns() {
            let commands = script.turn_commands(&world);
            let report = world.step(&commands);
            script.observe(&report);
            for e in &report.events {
                match *e {
                    Event::FormationCreated { formation } => {
                        tracks.push((formation, Track { still: 0, longest: 0, last: None, sent: None }));
                    }
                    Event::FormationArrived { formation } => {
                        arrivals += 1;
                        println!("{name}: formation {} arrived at turn {}", formation.0, report.turn);
                        if let Some((_, t)) = tracks.iter_mut().find(|(id, _)| *id == formation) {
                            t.sent = None;
                        }
                    }
                    Event::FormationDisbanded { formation } => {
                        if let Some((_, t)) = tracks.iter().find(|(id, _)| *id == formation) {
                            assert!(
                                t.sent.is_none(),
                                "{name}: formation {} was disbanded at turn {} before it arrived (sent at turn {:?})",
                                formation.0,
                                report.turn,
                                t.sent
                            );
                        }
                        tracks.retain(|(id, _)| *id != formation);
                    }
                    _ => {}
                }
            }
            for (id, t) in &mut tracks {
                let Some(f) = world.formation(*id) else { continue };
                if trace {
                    println!("{name} turn {} formation {}: {:?} at {:?} facing {:?}", report.turn, id.0, f.state, f.pos, f.facing);
                }
                let going = matches!(f.state, FormationState::Following | FormationState::Turning | FormationState::Finalising);
                if matches!(f.state, FormationState::WaitingForPath) || (going && t.sent.is_none()) {
                    t.sent.get_or_insert(report.turn);
                }
                let now = (f.pos, f.facing);
                if going && t.last == Some(now) {
                    t.still += 1;
                    t.longest = t.longest.max(t.still);
                    assert!(
                        t.still <= STILL_LIMIT,
                        "{name}: formation {} stood still ({:?} at {:?}) for {} turns up to turn {}",
                        id.0,
                        f.state,
                        f.pos,
                        t.still,
                        report.turn
                    );
                } else {
                    t.still = 0;
                }
                t.last = Some(now);
            }
        }
        for (id, t) in &tracks {
            println!("{name}: formation {} stood still at most {} turns in a row", id.0, t.longest);
            assert!(t.sent.is_none(), "{name}: formation {} was sent at turn {:?} and had not arrived at the end", id.0, t.sent);
        }
        assert!(arrivals > 0, "{name}: no formation arrived");
    }
}
