//! A desync planted in one client over the in-memory network: the host stops the game, locates
//! the divergence and writes a report whose snapshots `phalanx diff` reads.

mod common;

use common::Planter;
use replay::scenario::Scenario;
use session::host::{Delay, HostConfig, HostCore, HostEvent};
use session::mem::{MemGame, MemNet, NetConfig, single_process_hashes};
use session::mover::Mover;
use session::{Brain, ClientCore};
use sim::PlayerId;

const SCENARIO: &str = r#"{"format": "phalanx-scenario", "version": 3, "name": "desync", "turns": 80,
  "settings": {"players": 3, "seed": 13}, "map": {"generated": {"tiles": 24, "seed": 2}},
  "units": [
    {"name": "a", "player": 1, "class": "default", "at": [20, 20], "count": 3, "radius": 0.5, "speed": 8},
    {"name": "b", "player": 2, "class": "default", "at": [76, 76], "count": 3, "radius": 0.5, "speed": 8},
    {"name": "c", "player": 3, "class": "default", "at": [76, 20], "count": 3, "radius": 0.5, "speed": 8}
  ]}"#;

#[test]
fn a_planted_desync_is_reported_by_turn_component_entity_and_field() {
    let scenario = Scenario::parse(SCENARIO, "desync", &mut |f| Err(format!("no file {f}"))).expect("scenario");
    let tokens: Vec<[u8; 16]> = (1..=3).map(|s| [s; 16]).collect();
    let config = HostConfig { tokens, turns: 80, turn_ms: 50, delay: Delay::Auto, drop_after_ms: 5_000, max_lead: 16, keyframe_every: 20 };
    let host = HostCore::new(&scenario, config).expect("host");
    let net = NetConfig { latency_ms: 30, jitter_ms: 20, loss_pct: 2, rto_ms: 200, reorder_pct: 5, dup_pct: 5 };
    let mut game = MemGame::new(host, MemNet::new(net, 13), 5);
    for seat in 1..=3u8 {
        let mover = Mover::new(PlayerId(seat), 13, 6, 14, 82);
        let brain: Box<dyn Brain> = if seat == 2 { Box::new(Planter { mover, at: 30 }) } else { Box::new(mover) };
        game.add_client(ClientCore::new(seat, [seat; 16]), brain, None);
    }
    assert!(game.run(600_000), "the game ended");
    assert!(!game.host.in_sync());
    assert!(game.host_events.contains(&HostEvent::Desync { turn: 30, seats: vec![2] }), "{:?}", game.host_events);
    for c in &game.clients {
        assert_eq!(c.core.ended().map(|(_, in_sync)| in_sync), Some(false));
    }

    // The host, seats 1 and 3 agree with one process; seat 2 until turn 29.
    let oracle = single_process_hashes(&scenario, game.host.history()).expect("oracle");
    assert_eq!(game.host.hashes(), &oracle[..]);
    for (k, c) in game.clients.iter().enumerate() {
        let agree = if k == 1 { 30 } else { c.core.hashes().len() };
        assert_eq!(c.core.hashes()[..agree], oracle[..agree], "client {k}");
    }
    assert_ne!(game.clients[1].core.hashes()[30], oracle[30]);

    let report = game.host.report().expect("a report");
    assert_eq!(report.turn, 30);
    assert_eq!(report.reference, 0, "the host is on the majority's side");
    let (seat, divergences) = &report.divergences[0];
    assert_eq!(*seat, 2);
    assert_eq!(divergences.iter().map(|d| d.component.as_str()).collect::<Vec<_>>(), ["units"]);
    assert_eq!(divergences[0].leaves, [0], "the first unit range");
    let first = report.first_field().expect("a differing field");
    let planted = game.host.world().units().next().map(|u| u.id).expect("units");
    assert_eq!((first.component.as_str(), first.entity.clone(), first.field.as_str()), ("units", Some(format!("unit {planted}")), "pos.x"));
    assert!(report.text().contains(&format!("first: turn 30 component units entity unit {planted} field pos.x")), "{}", report.text());
    assert_eq!(report.snapshots.iter().map(|(s, _)| *s).collect::<Vec<_>>(), [0, 1, 2, 3]);

    // The files, read back as `phalanx diff` and `verify` read them: the field differs between the
    // host's and seat 2's snapshots, nothing between the host's and seat 1's, and the host's replay
    // verifies.
    let dir = std::env::temp_dir().join(format!("phalanx-session-desync-{}", std::process::id()));
    let written = report.write_to(&dir).expect("report files");
    assert_eq!(written.len(), 6);
    let snapshot = |name: &str| {
        let bytes = std::fs::read(dir.join(name)).expect("a snapshot of the report");
        sim::snapshot::unframe(&bytes).expect("a whole snapshot")
    };
    let rulesets = replay::rules::Rulesets::none();
    let diff = replay::diff::diff_snapshots_with(&snapshot("host.snapshot"), &snapshot("seat-2.snapshot"), 100, &rulesets);
    assert!(
        diff.diffs.iter().any(|d| d.entity.as_deref() == Some(&format!("unit {planted}")) && d.field == "pos.x"),
        "{:?}",
        diff.diffs
    );
    let same = replay::diff::diff_snapshots_with(&snapshot("host.snapshot"), &snapshot("seat-1.snapshot"), 100, &rulesets);
    assert_eq!(same.total, 0, "{:?}", same.diffs);
    let verified = replay::verify::verify_file(&dir.join("game.replay"), &replay::verify::VerifyOptions::default(), &|| {});
    assert_eq!(verified.outcome, replay::verify::Outcome::Identical, "{}", verified.to_text());
    std::fs::remove_dir_all(&dir).expect("clean up");
}
