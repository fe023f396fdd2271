//! Whole games over the in-memory transport: every peer's hashes against a single-process run of
//! the host's command stream, and the refusals and drops that must not stop a game.

mod common;

use replay::scenario::Scenario;
use session::Mover;
use session::{Brain, ClientCore, Order};
use session::{CLIENT_SEQ_BASE, Delay, HostConfig, HostCore, HostEvent, MAX_DELAY, MIN_DELAY};
use session::{ClientMsg, Envelope, MAX_FRAME, PROTOCOL_VERSION, Token, encode};
use session::{MemGame, MemNet, NetConfig, single_process_hashes};
use sim::{CommandKind, PlayerId, TurnReport, World};

/// The shared scenario, named for this file.
fn scenario(players: u8, seed: u64, turns: u32) -> Scenario {
    common::scenario("session", players, seed, turns)
}

fn token(seat: u8, seed: u64) -> Token {
    let mut t = [0; 16];
    t[..8].copy_from_slice(&seed.to_le_bytes());
    t[8] = seat;
    t[15] = 0xa5;
    t
}

fn config(players: u8, seed: u64, turns: u32, delay: Delay) -> HostConfig {
    HostConfig {
        tokens: (1..=players).map(|s| token(s, seed)).collect(),
        turns,
        turn_ms: 50,
        delay,
        drop_after_ms: 5_000,
        max_lead: 16,
        keyframe_every: 20,
    }
}

/// A game of movers, not yet run.
fn game(scenario: &Scenario, players: u8, seed: u64, turns: u32, net: NetConfig, delay: Delay) -> MemGame<'_> {
    let host = HostCore::new(scenario, config(players, seed, turns, delay)).expect("host");
    let mut game = MemGame::new(host, MemNet::new(net, seed), 5);
    for seat in 1..=players {
        let brain = Box::new(Mover::new(PlayerId(seat), seed, 7, 14, 82));
        game.add_client(ClientCore::new(seat, token(seat, seed)), brain, None);
    }
    game
}

/// Every client's hashes are a prefix of the single-process run's (all of it unless `short` holds
/// its index), and so are the host's.
fn check_hashes(scenario: &Scenario, game: &MemGame, turns: u32, short: &[usize]) {
    let oracle = single_process_hashes(scenario, game.host.history()).expect("oracle");
    assert_eq!(oracle.len(), turns as usize, "the host closed every turn");
    assert_eq!(game.host.hashes(), &oracle[..], "host");
    for (k, c) in game.clients.iter().enumerate() {
        let hashes = c.core.hashes();
        assert_eq!(hashes, &oracle[..hashes.len()], "client {k}");
        if !short.contains(&k) {
            assert_eq!(hashes.len(), turns as usize, "client {k} stepped every turn");
            assert_eq!(c.core.ended(), Some((turns, true)), "client {k} saw the end");
        }
    }
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[test]
fn seeded_games_agree_with_a_single_process_run() {
    let mut commands = 0;
    let mut delays_changed = 0;
    for seed in 0..200u64 {
        let r = |k: u64| splitmix(seed * 16 + k);
        let players = 2 + (r(0) % 7) as u8;
        let turns = 60 + (r(1) % 61) as u32;
        let net = NetConfig {
            latency_ms: r(2) % 80,
            jitter_ms: r(3) % 40,
            loss_pct: r(4) % 4,
            rto_ms: 200,
            reorder_pct: r(5) % 10,
            dup_pct: r(6) % 10,
        };
        let delay = if seed % 2 == 0 { Delay::Auto } else { Delay::Fixed(1 + (r(7) % 4) as u32) };
        let scenario = scenario(players, seed, turns);
        let mut game = game(&scenario, players, seed, turns, net, delay);
        assert!(game.run(600_000), "seed {seed}: the game ended");
        assert!(game.host.in_sync(), "seed {seed}");
        let dropped = game.host_events.iter().filter(|e| matches!(e, HostEvent::Dropped { .. } | HostEvent::Left { .. })).count();
        assert_eq!(dropped, 0, "seed {seed}: nobody dropped: {:?}", game.host_events);
        check_hashes(&scenario, &game, turns, &[]);
        commands += game.host.history().iter().map(Vec::len).sum::<usize>();
        delays_changed += game.host_events.iter().filter(|e| matches!(e, HostEvent::DelayChanged { .. })).count();
    }
    // The games did something: the movers' commands were relayed, and the delay adapted.
    assert!(commands > 1000, "{commands} commands");
    assert!(delays_changed > 0);
}

#[test]
fn the_delay_follows_the_round_trip_and_stays_in_bounds() {
    // 150 ms each way and 50 turns of 50 ms: a round trip of 300 ms needs 7 turns of delay.
    let net = NetConfig { latency_ms: 150, ..NetConfig::default() };
    let scenario = scenario(2, 3, 120);
    let mut game = game(&scenario, 2, 3, 120, net, Delay::Auto);
    assert!(game.run(600_000));
    check_hashes(&scenario, &game, 120, &[]);
    let changes: Vec<u32> =
        game.host_events.iter().filter_map(|e| if let HostEvent::DelayChanged { delay, .. } = e { Some(*delay) } else { None }).collect();
    // One turn at a time from the starting 2, never past the bound; the first samples' large
    // deviation overshoots, then the delay settles on the 7 turns the steady round trip needs.
    let mut last = 2;
    for d in &changes {
        assert_eq!(d.abs_diff(last), 1, "{changes:?}");
        assert!((MIN_DELAY..=MAX_DELAY).contains(d));
        last = *d;
    }
    assert_eq!(game.host.delay(), 7, "{changes:?}");
}

/// A brain that also sends commands for another player.
struct Impostor(Mover, PlayerId);

impl Brain for Impostor {
    fn think(&mut self, world: &World, report: &TurnReport) -> Vec<Order> {
        let mut orders = self.0.think(world, report);
        if report.turn.is_multiple_of(5) {
            let theirs: Vec<_> = world.units().filter(|u| u.owner == self.1).map(|u| u.id).collect();
            orders.push(Order { player: self.1, kind: CommandKind::Remove { units: theirs } });
        }
        orders
    }
}

#[test]
fn a_command_for_another_seat_is_refused_and_never_applied() {
    let net = NetConfig { latency_ms: 20, jitter_ms: 10, ..NetConfig::default() };
    let scenario = scenario(2, 5, 60);
    let host = HostCore::new(&scenario, config(2, 5, 60, Delay::Fixed(2))).expect("host");
    let mut game = MemGame::new(host, MemNet::new(net, 5), 5);
    game.add_client(ClientCore::new(1, token(1, 5)), Box::new(Impostor(Mover::new(PlayerId(1), 5, 7, 14, 82), PlayerId(2))), None);
    game.add_client(ClientCore::new(2, token(2, 5)), Box::new(session::Idle), None);
    assert!(game.run(600_000));
    check_hashes(&scenario, &game, 60, &[]);
    let refused = game.host_events.iter().filter(|e| matches!(e, HostEvent::Refused { seat: 1, player: PlayerId(2), .. })).count();
    assert_eq!(refused, 12, "one refusal every 5 turns: {:?}", game.host_events);
    let from_clients = game.host.history().iter().flatten().filter(|c| c.seq >= CLIENT_SEQ_BASE);
    assert!(from_clients.clone().count() > 5);
    assert!(from_clients.clone().all(|c| c.player == PlayerId(1)), "no client command of player 2 relayed");
    assert_eq!(game.host.world().units().filter(|u| u.owner == PlayerId(2)).count(), 3, "player 2's units all stand");
}

fn hello(seat: u8, token: Token, version: u32) -> Vec<u8> {
    encode(&Envelope { seq: 0, msg: ClientMsg::Hello { version, seat, token } })
}

#[test]
fn bad_peers_are_closed_while_the_game_completes() {
    let net = NetConfig { latency_ms: 10, jitter_ms: 5, ..NetConfig::default() };
    let scenario = scenario(3, 9, 70);
    let mut game = game(&scenario, 3, 9, 70, net, Delay::Auto);
    let wrong_token = game.add_raw(vec![(0, hello(1, token(1, 10), PROTOCOL_VERSION))]);
    let garbage = game.add_raw(vec![(30, vec![0xff; 40])]);
    let oversized = game.add_raw(vec![(40, vec![0; MAX_FRAME + 1])]);
    let old_version = game.add_raw(vec![(50, hello(2, token(2, 9), PROTOCOL_VERSION + 1))]);
    let no_hello = game.add_raw(vec![(60, encode(&Envelope { seq: 0, msg: ClientMsg::Pong { id: 0 } }))]);
    let mut flood = vec![(1000, hello(3, token(3, 77), PROTOCOL_VERSION))];
    flood.splice(0..0, (0..400u32).map(|k| (900, encode(&Envelope { seq: k + 1, msg: ClientMsg::Pong { id: k } }))));
    let flooder = game.add_raw(flood);
    assert!(game.run(600_000));
    check_hashes(&scenario, &game, 70, &[]);
    let reason = |conn| {
        game.host_events
            .iter()
            .find_map(|e| if let HostEvent::Closed { conn: c, reason } = e { (*c == conn).then(|| reason.clone()) } else { None })
            .unwrap_or_default()
    };
    assert_eq!(reason(wrong_token), "wrong token for seat 1");
    assert!(reason(garbage).starts_with("malformed frame"), "{}", reason(garbage));
    assert_eq!(reason(oversized), format!("frame of {} bytes is over the limit of {MAX_FRAME}", MAX_FRAME + 1));
    assert_eq!(reason(old_version), format!("protocol version {}, this host speaks {PROTOCOL_VERSION}", PROTOCOL_VERSION + 1));
    assert_eq!(reason(no_hello), "a message before Hello");
    assert!(reason(flooder).starts_with("flood") || reason(flooder).starts_with("more than"), "{}", reason(flooder));
    for conn in [wrong_token, garbage, oversized, old_version, no_hello, flooder] {
        assert!(game.is_closed(conn));
    }
}

#[test]
fn a_lagging_peer_is_dropped_and_the_rest_finish() {
    let net = NetConfig { latency_ms: 15, jitter_ms: 10, ..NetConfig::default() };
    let scenario = scenario(3, 11, 90);
    let mut cfg = config(3, 11, 90, Delay::Auto);
    cfg.drop_after_ms = 2_000;
    let host = HostCore::new(&scenario, cfg).expect("host");
    let mut game = MemGame::new(host, MemNet::new(net, 11), 5);
    for seat in 1..=3 {
        let freeze = (seat == 2).then_some(25);
        game.add_client(ClientCore::new(seat, token(seat, 11)), Box::new(Mover::new(PlayerId(seat), 11, 5, 14, 82)), freeze);
    }
    assert!(game.run(600_000));
    assert!(game.host.in_sync());
    check_hashes(&scenario, &game, 90, &[1]);
    // It stepped 25 turns and froze before its 25th hash left.
    assert_eq!(game.clients[1].core.hashes().len(), 25);
    assert!(game.host_events.contains(&HostEvent::Dropped { seat: 2, behind_at: 24 }), "{:?}", game.host_events);
    assert!(game.clients[1].cut);
    // The dropped player's units stay: no command of player 2 after it froze.
    let last = game.host.history().iter().flatten().filter(|c| c.player == PlayerId(2)).map(|c| c.turn).max().unwrap_or(0);
    assert!(last < 25 + 16, "player 2's last command applies on turn {last}");
    assert_eq!(game.host.world().units().filter(|u| u.owner == PlayerId(2)).count(), 3);
}

#[test]
fn an_order_waits_at_most_one_turn_whatever_the_delay_and_both_ends_count_the_same_bytes() {
    let (players, seed, turns) = (3, 41, 80);
    let scenario = scenario(players, seed, turns);
    for delay in [1, 4] {
        let mut g = game(&scenario, players, seed, turns, NetConfig::default(), Delay::Fixed(delay));
        assert!(g.run(60_000), "the game ended");
        check_hashes(&scenario, &g, turns, &[]);
        // The host stamps an order on arrival for `current + delay` and closes that turn at its
        // next boundary, so with no network latency an order waits for one boundary at most
        // (50 ms), plus a 5 ms loop at each end; the delay is how far ahead turns are sent.
        let (mut sent, mut received) = (0, 0);
        for (k, c) in g.clients.iter().enumerate() {
            let latency = c.core.order_latency();
            assert!(latency.count() >= 10, "delay {delay}, client {k}: {latency}");
            let (min, max) = (latency.percentile(0).expect("orders"), latency.percentile(100).expect("orders"));
            // Each order is sent as a turn is stepped, so it waits for the whole of the next turn.
            assert!((40..=60).contains(&min) && max <= 60, "delay {delay}, client {k}: {latency}, min {min}");
            sent += c.core.traffic().sent;
            received += c.core.traffic().received;
        }
        // Nothing is lost or duplicated here, so what one end counts sent the other counts received.
        assert_eq!(g.host.traffic().received, sent, "delay {delay}");
        assert_eq!(g.host.traffic().sent, received, "delay {delay}");
    }
}
