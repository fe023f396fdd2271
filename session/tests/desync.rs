//! A desync planted in one client over the in-memory network: the host stops the game, locates
//! the divergence and writes a report whose snapshots `phalanx diff` reads.

mod common;

use common::Planter;
use replay::scenario::Scenario;
use session::Mover;
use session::{Brain, ClientCore};
use session::{Delay, HostConfig, HostCore, HostEvent};
use session::{MemGame, MemNet, NetConfig, single_process_hashes};
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
    assert!(diff.diffs.iter().any(|d| d.entity.as_deref() == Some(&format!("unit {planted}")) && d.field == "pos.x"), "{:?}", diff.diffs);
    let same = replay::diff::diff_snapshots_with(&snapshot("host.snapshot"), &snapshot("seat-1.snapshot"), 100, &rulesets);
    assert_eq!(same.total, 0, "{:?}", same.diffs);
    let verified = replay::verify::verify_file(&dir.join("game.replay"), &replay::verify::VerifyOptions::default(), &|| {});
    assert_eq!(verified.outcome, replay::verify::Outcome::Identical, "{}", verified.to_text());
    std::fs::remove_dir_all(&dir).expect("clean up");
}

/// A mover that reports a false hash from turn `from` on, its world the same as everyone's.
struct Liar {
    mover: Mover,
    from: u32,
}

impl Brain for Liar {
    fn think(&mut self, world: &sim::World, report: &sim::TurnReport) -> Vec<session::Order> {
        self.mover.think(world, report)
    }

    fn hash_to_report(&mut self, turn: u32, hash: sim::digest_tree::Digest) -> sim::digest_tree::Digest {
        if turn >= self.from { [0xee; 32] } else { hash }
    }
}

/// Finding 8: one client reporting false hashes ended the game for everyone (without
/// `--resync`), and with `--resync` was resynced every turn to the end; the report did not say
/// that the liar's snapshot equalled the host's. Now the host compares the seat's world with its
/// own: equal, it is a false report, the seat is dropped, and the others play to the end, in
/// sync, with and without `--resync`.
#[test]
fn a_seat_reporting_false_hashes_is_dropped_and_the_others_play_to_the_end() {
    use session::Case;
    let scenario = Scenario::parse(SCENARIO, "desync", &mut |f| Err(format!("no file {f}"))).expect("scenario");
    for resync in [false, true] {
        let tokens: Vec<[u8; 16]> = (1..=3).map(|s| [s; 16]).collect();
        let config =
            HostConfig { tokens, turns: 80, turn_ms: 50, delay: Delay::Auto, drop_after_ms: 5_000, max_lead: 16, keyframe_every: 20 };
        let mut host = HostCore::new(&scenario, config).expect("host");
        host.set_resync(resync);
        let net = NetConfig { latency_ms: 30, jitter_ms: 20, loss_pct: 2, rto_ms: 200, reorder_pct: 5, dup_pct: 5 };
        let mut game = MemGame::new(host, MemNet::new(net, 14), 5);
        for seat in 1..=3u8 {
            let mover = Mover::new(PlayerId(seat), 13, 6, 14, 82);
            let brain: Box<dyn Brain> = if seat == 2 { Box::new(Liar { mover, from: 30 }) } else { Box::new(mover) };
            game.add_client(ClientCore::new(seat, [seat; 16]), brain, None);
        }
        assert!(game.run(600_000), "resync {resync}: the game ended");
        let events = &game.host_events;
        assert!(events.contains(&HostEvent::Desync { turn: 30, seats: vec![2] }), "resync {resync}: {events:?}");
        assert!(events.contains(&HostEvent::FalseHash { seat: 2, turn: 30 }), "resync {resync}: {events:?}");
        assert_eq!(events.iter().filter(|e| matches!(e, HostEvent::Desync { .. })).count(), 1, "resync {resync}: {events:?}");
        assert!(!events.iter().any(|e| matches!(e, HostEvent::Resynced { .. })), "resync {resync}: {events:?}");
        assert!(game.host.in_sync(), "resync {resync}: every world agreed");
        let report = game.host.report().expect("a report");
        assert_eq!(report.cases, [(2, Case::FalseReport)]);
        assert!(report.text().contains("seat 2: a false hash report"), "{}", report.text());
        let oracle = single_process_hashes(&scenario, game.host.history()).expect("oracle");
        assert_eq!(oracle.len(), 80);
        for k in [0, 2] {
            let c = &game.clients[k].core;
            assert_eq!(c.hashes(), &oracle[..], "resync {resync}: client {k}");
            assert_eq!(c.ended(), Some((80, true)), "resync {resync}: client {k}");
        }
        let liar = &game.clients[1].core;
        assert!(matches!(liar.ending(), Some(session::Ending::Kicked { reason }) if reason.contains("a false hash report")));
    }
}

/// A mover whose world gets a one-bit flip before each of `at`.
struct Repeater {
    mover: Mover,
    at: [u32; 2],
}

impl Brain for Repeater {
    fn think(&mut self, world: &sim::World, report: &sim::TurnReport) -> Vec<session::Order> {
        self.mover.think(world, report)
    }

    fn before_step(&mut self, world: &mut sim::World, turn: u32) {
        if self.at.contains(&turn) {
            let first = world.units().next().map(|u| u.id).expect("units on the map");
            assert!(world.plant_desync(first));
        }
    }
}

/// Finding 8, with `--resync`: a seat that diverged was resynced every time, to the end. It is
/// resynced once; diverging again, it is dropped, and the others play to the end.
#[test]
fn a_seat_that_diverges_again_after_a_resync_is_dropped() {
    let scenario = Scenario::parse(SCENARIO, "desync", &mut |f| Err(format!("no file {f}"))).expect("scenario");
    let tokens: Vec<[u8; 16]> = (1..=3).map(|s| [s; 16]).collect();
    let config = HostConfig { tokens, turns: 80, turn_ms: 50, delay: Delay::Auto, drop_after_ms: 5_000, max_lead: 16, keyframe_every: 20 };
    let mut host = HostCore::new(&scenario, config).expect("host");
    host.set_resync(true);
    let mut game = MemGame::new(host, MemNet::new(NetConfig { latency_ms: 20, ..NetConfig::default() }, 15), 5);
    for seat in 1..=3u8 {
        let mover = Mover::new(PlayerId(seat), 13, 6, 14, 82);
        let brain: Box<dyn Brain> = if seat == 2 { Box::new(Repeater { mover, at: [20, 60] }) } else { Box::new(mover) };
        game.add_client(ClientCore::new(seat, [seat; 16]), brain, None);
    }
    assert!(game.run(600_000), "the game ended");
    let events = &game.host_events;
    let desyncs: Vec<&HostEvent> = events.iter().filter(|e| matches!(e, HostEvent::Desync { .. })).collect();
    assert_eq!(desyncs.len(), 2, "{events:?}");
    assert_eq!(events.iter().filter(|e| matches!(e, HostEvent::Resynced { seats, .. } if seats == &[2])).count(), 1, "{events:?}");
    let reason = "seat 2 diverged again after a resync";
    assert!(events.iter().any(|e| matches!(e, HostEvent::Closed { reason: r, .. } if r == reason)), "{events:?}");
    let oracle = single_process_hashes(&scenario, game.host.history()).expect("oracle");
    assert_eq!(oracle.len(), 80);
    for k in [0, 2] {
        assert_eq!(game.clients[k].core.hashes(), &oracle[..], "client {k}");
        assert_eq!(game.clients[k].core.ended(), Some((80, false)), "client {k}");
    }
}
