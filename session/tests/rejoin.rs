//! Rejoin, observers, resync and snapshots in chunks. Over the in-memory network with seeded
//! faults: a client cut mid-game and reconnected, observers joining at the start and mid-game, a
//! planted desync resynced, all against a single-process run of the host's command stream. Over
//! real sockets on 127.0.0.1: a connection killed mid-game and reconnected, ending with the host's
//! hash. And the chunk rules on their own. The programs themselves, a `phalanx join` process
//! killed and started again and an observer process, are run by `phalanx/tests/rejoin.rs`.

use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod common;

use common::Planter;
use replay::scenario::Scenario;
use session::Idle;
use session::Mover;
use session::{Brain, ClientCore, ClientEvent};
use session::{
    CHUNK_BYTES, Chunk, ClientMsg, Envelope, HostMsg, MAX_CHUNKS, MAX_FRAME, MAX_SNAPSHOT, OBSERVER_SEAT, Order, PROTOCOL_VERSION,
    Reassembly, chunks, decode, encode,
};
use session::{CLIENT_SEQ_BASE, Delay, HostConfig, HostCore, HostEvent, MAX_OBSERVER_LAG};
use session::{MemGame, MemNet, NetConfig, single_process_hashes};
use session::{run_client, run_host};
use sim::digest_tree::Digest;
use sim::{CommandKind, PlayerId, World};

/// The shared scenario, named for this file.
fn scenario(players: u8, seed: u64, turns: u32) -> Scenario {
    common::scenario("rejoin", players, seed, turns)
}

fn config(players: u8, turns: u32) -> HostConfig {
    HostConfig {
        tokens: (1..=players).map(|s| [s; 16]).collect(),
        turns,
        turn_ms: 50,
        delay: Delay::Auto,
        drop_after_ms: 5_000,
        max_lead: 16,
        keyframe_every: 20,
    }
}

fn faulty(seed: u64) -> NetConfig {
    NetConfig { latency_ms: 10 + seed % 30, jitter_ms: 15, loss_pct: 2, rto_ms: 200, reorder_pct: 5, dup_pct: 5 }
}

fn mover(seat: u8, seed: u64) -> Box<dyn Brain> {
    Box::new(Mover::new(PlayerId(seat), seed, 5, 14, 82))
}

/// Runs the game until the virtual time reaches `until` (the game must not be over by then).
fn run_until(game: &mut MemGame, until: u64) {
    assert!(!game.run(until), "the game is still on at {until} ms");
}

/// A client's hashes are the oracle's from its first turn, through the last turn when `whole`.
fn check(client: &ClientCore, oracle: &[Digest], whole: bool, what: &str) {
    let first = client.first_turn() as usize;
    let hashes = client.hashes();
    assert_eq!(hashes, &oracle[first..first + hashes.len()], "{what}");
    if whole {
        assert_eq!(first + hashes.len(), oracle.len(), "{what} stepped to the end");
    }
}

#[test]
fn a_client_cut_mid_game_rejoins_its_seat_and_ends_with_the_single_process_hashes() {
    for seed in 0..6u64 {
        let players = 2 + (seed % 3) as u8;
        let turns = 120;
        let scenario = scenario(players, seed, turns);
        let host = HostCore::new(&scenario, config(players, turns)).expect("host");
        let mut game = MemGame::new(host, MemNet::new(faulty(seed), seed), 5);
        for seat in 1..=players {
            game.add_client(ClientCore::new(seat, [seat; 16]), mover(seat, seed), None);
        }
        // Seat 2's connection breaks about turn 25; it comes back a second later, about turn 45.
        run_until(&mut game, 1_500 + seed * 50);
        game.disconnect(1);
        run_until(&mut game, 2_500 + seed * 50);
        let back = game.add_client(ClientCore::new(2, [2; 16]), mover(2, seed + 100), None);
        assert!(game.run(600_000), "seed {seed}: the game ended");

        assert!(game.host.in_sync(), "seed {seed}: {:?}", game.host_events);
        let oracle = single_process_hashes(&scenario, game.host.history()).expect("oracle");
        assert_eq!(game.host.hashes(), &oracle[..]);
        let left = game.clients[1].core.hashes().len();
        let rejoined = &game.clients[back].core;
        let from = rejoined.first_turn();
        assert!(left > 10 && from as usize > left, "seed {seed}: left after {left} turns, rejoined from {from}");
        for (k, c) in game.clients.iter().enumerate() {
            check(&c.core, &oracle, k != 1, &format!("seed {seed} client {k}"));
            if k != 1 {
                assert_eq!(c.core.ended(), Some((turns, true)), "seed {seed} client {k}");
            }
        }
        assert!(rejoined.world().is_some_and(|w| w.state_hash() == oracle[oracle.len() - 1]));
        let events = &game.host_events;
        assert!(events.contains(&HostEvent::Left { seat: 2 }), "seed {seed}: {events:?}");
        assert!(events.iter().any(|e| matches!(e, HostEvent::Rejoined { seat: 2, from: f, .. } if *f == from)), "seed {seed}: {events:?}");
        // The seat plays again: the new connection's commands are relayed after the rejoin.
        let after = game.host.history().iter().flatten().filter(|c| c.player == PlayerId(2) && c.seq >= CLIENT_SEQ_BASE && c.turn > from);
        assert!(after.count() > 0, "seed {seed}: seat 2 commanded after its rejoin");
        // The other clients were told, and the rejoined one loaded the host's world.
        assert!(game.clients[0].core.hashes().len() == turns as usize);
    }
}

#[test]
fn observers_from_the_lobby_and_from_mid_game_end_with_the_host_s_final_hash() {
    let scenario = scenario(2, 3, 300);
    let host = HostCore::new(&scenario, config(2, 300)).expect("host");
    let mut game = MemGame::new(host, MemNet::new(faulty(3), 3), 5);
    let early = game.add_client(ClientCore::observer(), Box::new(Idle), None);
    // The players come once the first observer is in the lobby.
    run_until(&mut game, 300);
    for seat in 1..=2 {
        game.add_client(ClientCore::new(seat, [seat; 16]), mover(seat, 3), None);
    }
    // A connection that observes, then sends commands, and never steps: its commands are refused
    // and it is closed once it lags too far.
    let hello = encode(&Envelope { seq: 0, msg: ClientMsg::Hello { version: PROTOCOL_VERSION, seat: OBSERVER_SEAT, token: [0; 16] } });
    let kind = CommandKind::Remove { units: Vec::new() };
    let orders = vec![Order { player: PlayerId(1), kind }];
    let commands = encode(&Envelope { seq: 1, msg: ClientMsg::Commands { orders } });
    let silent = game.add_raw(vec![(400, hello), (2_000, commands)]);
    run_until(&mut game, 3_000);
    let late = game.add_client(ClientCore::observer(), Box::new(Idle), None);
    assert!(game.run(600_000), "the game ended");

    assert!(game.host.in_sync(), "{:?}", game.host_events);
    let oracle = single_process_hashes(&scenario, game.host.history()).expect("oracle");
    for k in [early, late] {
        let c = &game.clients[k].core;
        check(c, &oracle, true, &format!("observer {k}"));
        assert_eq!(c.ended(), Some((300, true)));
    }
    assert_eq!(game.clients[early].core.first_turn(), 0);
    let from = game.clients[late].core.first_turn();
    assert!(from > 40, "the late observer started from the host's world before turn {from}");
    // No observer command was relayed: only the movers' and the script's.
    assert!(
        game.host
            .history()
            .iter()
            .flatten()
            .filter(|c| c.seq >= CLIENT_SEQ_BASE)
            .all(|c| c.player == PlayerId(1) || c.player == PlayerId(2))
    );
    let events = &game.host_events;
    assert!(events.iter().any(|e| matches!(e, HostEvent::Refused { seat: OBSERVER_SEAT, player: PlayerId(1), .. })), "{events:?}");
    assert!(events.iter().any(|e| matches!(e, HostEvent::Observing { from: f, .. } if *f == from)), "{events:?}");
    let reason = format!("the observer is {} turns behind, over the limit of {MAX_OBSERVER_LAG}", MAX_OBSERVER_LAG + 1);
    assert!(events.contains(&HostEvent::Closed { conn: silent, reason }), "{events:?}");
}

#[test]
fn a_planted_desync_with_resync_is_reported_and_the_game_ends_in_step() {
    let scenario = scenario(3, 13, 100);
    let mut host = HostCore::new(&scenario, config(3, 100)).expect("host");
    host.set_resync(true);
    let mut game = MemGame::new(host, MemNet::new(faulty(13), 13), 5);
    for seat in 1..=3u8 {
        let brain: Box<dyn Brain> =
            if seat == 2 { Box::new(Planter { mover: Mover::new(PlayerId(2), 13, 5, 14, 82), at: 30 }) } else { mover(seat, 13) };
        game.add_client(ClientCore::new(seat, [seat; 16]), brain, None);
    }
    assert!(game.run(600_000), "the game ended");

    // The desync happened and is reported as without --resync; the game went on to the end.
    assert!(!game.host.in_sync());
    let events = &game.host_events;
    assert_eq!(events.iter().filter(|e| matches!(e, HostEvent::Desync { .. })).count(), 1, "{events:?}");
    assert!(events.contains(&HostEvent::Desync { turn: 30, seats: vec![2] }), "{events:?}");
    let from =
        events.iter().find_map(|e| if let HostEvent::Resynced { seats, from } = e { (seats == &[2]).then_some(*from) } else { None });
    let from = from.expect("seat 2 was resynced");
    assert!(from > 30);
    let report = game.host.report().expect("a report");
    assert_eq!(report.turn, 30);
    assert_eq!(report.first_field().map(|f| f.field.as_str()), Some("pos.x"));
    assert!(report.replay.is_some(), "the report has the whole game's replay");

    let oracle = single_process_hashes(&scenario, game.host.history()).expect("oracle");
    assert_eq!(game.host.hashes(), &oracle[..]);
    assert_eq!(oracle.len(), 100);
    for (k, c) in game.clients.iter().enumerate() {
        check(&c.core, &oracle, true, &format!("client {k}"));
        assert_eq!(c.core.ended(), Some((100, false)), "client {k}");
        assert_eq!(c.core.world().map(World::state_hash), oracle.last().copied(), "client {k} ends on the host's world");
    }
    assert_eq!(game.clients[1].core.first_turn(), from, "seat 2 stepped on the host's world from turn {from}");
}

#[test]
fn the_reference_world_in_chunks_reaches_a_rejoining_seat_and_a_late_observer() {
    // The reference workload: the reference world and its 1000 units, for its first 40 turns.
    let text = include_str!("../../examples/scenarios/reference.json");
    let scenario = Scenario::parse(text, "reference", &mut |f| Err(format!("no file {f}"))).expect("scenario");
    let host = HostCore::new(&scenario, config(2, 40)).expect("host");
    let net = NetConfig { latency_ms: 20, jitter_ms: 10, loss_pct: 1, rto_ms: 200, reorder_pct: 5, dup_pct: 5 };
    let mut game = MemGame::new(host, MemNet::new(net, 1), 5);
    for seat in 1..=2 {
        game.add_client(ClientCore::new(seat, [seat; 16]), Box::new(Mover::new(PlayerId(seat), 1, 5, 100, 400)), None);
    }
    run_until(&mut game, 600);
    // About 0.6 to 0.8 MB in these turns: more than a chunk, so it travels in pieces.
    let size = game.host.world().save().len();
    assert!(size > CHUNK_BYTES && size < MAX_FRAME, "the reference world's snapshot is {size} bytes");
    game.disconnect(0);
    let observer = game.add_client(ClientCore::observer(), Box::new(Idle), None);
    run_until(&mut game, 900);
    let back = game.add_client(ClientCore::new(1, [1; 16]), Box::new(Mover::new(PlayerId(1), 2, 5, 100, 400)), None);
    assert!(game.run(600_000), "the game ended");

    assert!(game.host.in_sync(), "{:?}", game.host_events);
    let oracle = single_process_hashes(&scenario, game.host.history()).expect("oracle");
    for k in [1, observer, back] {
        let c = &game.clients[k].core;
        check(c, &oracle, true, &format!("client {k}"));
        assert_eq!(c.ended(), Some((40, true)), "client {k}");
        assert!(c.first_turn() > 0 || k == 1, "client {k} started from the host's world");
    }
}

/// Seeded bytes, so a misplaced chunk changes the result.
fn bytes(len: usize) -> Vec<u8> {
    let mut state = 7u64;
    (0..len)
        .map(|_| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (state >> 56) as u8
        })
        .collect()
}

#[test]
fn a_snapshot_of_several_frames_travels_in_chunks_and_comes_back_whole() {
    // Three and a half frames' worth: over the frame limit as a whole, under it chunk by chunk.
    let snapshot = bytes(3 * MAX_FRAME + MAX_FRAME / 2);
    let pieces = chunks(9, &snapshot);
    assert_eq!(pieces.len(), snapshot.len().div_ceil(CHUNK_BYTES));
    let mut host_side = Reassembly::default();
    let mut client_side = Reassembly::default();
    let mut whole = (None, None);
    for (k, chunk) in pieces.into_iter().enumerate() {
        assert_eq!((chunk.turn, chunk.index, chunk.total), (9, k as u32, snapshot.len() as u64));
        // Both directions carry chunks; each frame is under the limit and decodes back.
        let up = encode(&Envelope { seq: 0, msg: ClientMsg::Snapshot(chunk.clone()) });
        let down = encode(&Envelope { seq: 0, msg: HostMsg::Snapshot(chunk) });
        assert!(up.len() <= MAX_FRAME && down.len() <= MAX_FRAME, "{} {}", up.len(), down.len());
        let Ok(Envelope { msg: ClientMsg::Snapshot(a), .. }) = decode::<ClientMsg>(&up) else { panic!("a client chunk decodes") };
        let Ok(Envelope { msg: HostMsg::Snapshot(b), .. }) = decode::<HostMsg>(&down) else { panic!("a host chunk decodes") };
        whole.0 = host_side.accept(a).expect("in order and within the limits");
        whole.1 = client_side.accept(b).expect("in order and within the limits");
    }
    assert_eq!(whole.0, Some((9, snapshot.clone())));
    assert_eq!(whole.1, Some((9, snapshot)));
    // An empty snapshot ("not kept") is one empty chunk, and comes back empty.
    let empty = chunks(4, &[]);
    assert_eq!(empty, [Chunk { turn: 4, index: 0, count: 1, total: 0, bytes: Vec::new() }]);
    assert_eq!(Reassembly::default().accept(empty[0].clone()).expect("in order and within the limits"), Some((4, Vec::new())));
}

#[test]
fn every_broken_chunk_sequence_is_refused_with_a_reason() {
    let chunk = |index: u32, count: u32, total: u64, len: usize| Chunk { turn: 1, index, count, total, bytes: vec![1; len] };
    let refused = |sequence: Vec<Chunk>| {
        let mut r = Reassembly::default();
        for c in sequence {
            match r.accept(c) {
                Ok(_) => {}
                Err(reason) => return reason.to_string(),
            }
        }
        String::new()
    };
    assert_eq!(refused(vec![chunk(1, 2, 10, 5)]), "snapshot chunk 1 where chunk 0 was due");
    assert_eq!(refused(vec![chunk(0, 3, 10, 5), chunk(0, 3, 10, 5)]), "snapshot chunk 0 where chunk 1 was due");
    assert_eq!(refused(vec![chunk(0, 0, 0, 0)]), format!("a snapshot of 0 chunks, the limit is {MAX_CHUNKS}"));
    assert_eq!(
        refused(vec![chunk(0, MAX_CHUNKS + 1, 10, 5)]),
        format!("a snapshot of {} chunks, the limit is {MAX_CHUNKS}", MAX_CHUNKS + 1)
    );
    assert_eq!(
        refused(vec![chunk(0, 2, MAX_SNAPSHOT + 1, 5)]),
        format!("a snapshot of {} bytes, the limit is {MAX_SNAPSHOT}", MAX_SNAPSHOT + 1)
    );
    assert_eq!(
        refused(vec![chunk(0, 2, 2 * CHUNK_BYTES as u64 + 2, CHUNK_BYTES + 1)]),
        format!("a snapshot chunk of {} bytes, the limit is {CHUNK_BYTES}", CHUNK_BYTES + 1)
    );
    assert_eq!(refused(vec![chunk(0, 2, 10, 5), chunk(1, 2, 11, 5)]), "a snapshot chunk of another turn, count or total than the first");
    assert_eq!(refused(vec![chunk(0, 2, 8, 5), chunk(1, 2, 8, 5)]), "snapshot chunks of more than the 8 bytes announced");
    assert_eq!(refused(vec![chunk(0, 2, 12, 5), chunk(1, 2, 12, 5)]), "snapshot chunks of 10 bytes, 12 announced");
    // After a whole snapshot the next one starts at chunk 0 again.
    let mut r = Reassembly::default();
    assert_eq!(r.accept(chunk(0, 1, 3, 3)).expect("in order and within the limits"), Some((1, vec![1; 3])));
    assert_eq!(r.accept(chunk(0, 1, 2, 2)).expect("in order and within the limits"), Some((1, vec![1; 2])));
    // A snapshot over the limit cannot be sent: it goes as the empty answer.
    assert_eq!(chunks(2, &vec![0; MAX_SNAPSHOT as usize + 1]).len(), 1);
}

const TCP_SCENARIO: &str = r#"{"format": "phalanx-scenario", "version": 3, "name": "rejoin", "turns": 100,
  "settings": {"players": 2, "seed": 21}, "map": {"generated": {"tiles": 16, "seed": 1}},
  "units": [
    {"name": "a", "player": 1, "class": "default", "at": [20, 20], "count": 3, "radius": 0.5, "speed": 8},
    {"name": "b", "player": 2, "class": "default", "at": [44, 44], "count": 3, "radius": 0.5, "speed": 8}
  ]}"#;

/// What a client thread saw: its first turn, its hashes, the end, its events.
type Seen = (u32, Vec<[u8; 32]>, Option<(u32, bool)>, Vec<ClientEvent>);

fn play(addr: std::net::SocketAddr, mut client: ClientCore, seed: u64, start: Instant, kill: Option<mpsc::Sender<TcpStream>>) -> Seen {
    let socket = TcpStream::connect(addr).expect("connect");
    if let Some(kill) = kill {
        kill.send(socket.try_clone().expect("a handle to cut the connection with")).expect("send the handle");
    }
    let mut mover = Mover::new(client.player(), seed, 4, 14, 50);
    let mut events = Vec::new();
    let clock = move || start.elapsed().as_millis() as u64;
    if client.seat() == 0 {
        run_client(socket, &mut client, &mut Idle, &clock, &mut |e| events.push(e.clone())).expect("client loop");
    } else {
        run_client(socket, &mut client, &mut mover, &clock, &mut |e| events.push(e.clone())).expect("client loop");
    }
    (client.first_turn(), client.hashes().to_vec(), client.ended(), events)
}

#[test]
fn a_connection_killed_mid_game_reconnects_and_an_observer_joins_over_tcp() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let addr = listener.local_addr().expect("its address");
    let start = Instant::now();
    let clock = move || start.elapsed().as_millis() as u64;

    let steady = std::thread::spawn(move || play(addr, ClientCore::new(2, [2; 16]), 21, start, None));
    let (kill_tx, kill_rx) = mpsc::channel();
    let cut = std::thread::spawn(move || {
        // The first connection is cut from outside about 0.6 s into the game (100 turns of 20 ms);
        // the same seat then connects again with a fresh client and plays to the end.
        let first = play(addr, ClientCore::new(1, [1; 16]), 21, start, Some(kill_tx));
        let second = play(addr, ClientCore::new(1, [1; 16]), 22, start, None);
        (first, second)
    });
    let killer = std::thread::spawn(move || {
        let socket: TcpStream = kill_rx.recv().expect("the first connection");
        std::thread::sleep(Duration::from_millis(600));
        socket.shutdown(Shutdown::Both).expect("cut the connection");
    });
    let observer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(400));
        play(addr, ClientCore::observer(), 0, start, None)
    });

    let scenario = Scenario::parse(TCP_SCENARIO, "rejoin", &mut |f| Err(format!("no file {f}"))).expect("scenario");
    let config = HostConfig {
        tokens: vec![[1; 16], [2; 16]],
        turns: 100,
        turn_ms: 20,
        delay: Delay::Auto,
        drop_after_ms: 20_000,
        max_lead: 16,
        keyframe_every: 10,
    };
    let mut host = HostCore::new(&scenario, config).expect("host");
    let mut events = Vec::new();
    run_host(&listener, &mut host, &clock, &mut |e| events.push(e.clone())).expect("host loop");
    killer.join().expect("killer thread");

    assert!(host.in_sync(), "{events:?}");
    let oracle = single_process_hashes(&scenario, host.history()).expect("oracle");
    assert_eq!(host.hashes(), &oracle[..]);
    let check = |(first, hashes, ended, seen): &Seen, what: &str| {
        let first = *first as usize;
        assert_eq!(hashes[..], oracle[first..first + hashes.len()], "{what}: {seen:?}");
        assert_eq!(first + hashes.len(), 100, "{what} stepped to the end: {seen:?}");
        assert_eq!(*ended, Some((100, true)), "{what}: {seen:?}");
    };
    check(&steady.join().expect("seat 2"), "seat 2");
    let (first, second) = cut.join().expect("seat 1");
    assert_eq!(first.2, None, "the first connection did not see the end: {:?}", first.3);
    assert_eq!(first.1[..], oracle[..first.1.len()]);
    assert!(second.0 > 0 && second.0 as usize >= first.1.len(), "rejoined from turn {}: {:?}", second.0, second.3);
    assert!(second.3.contains(&ClientEvent::Loaded { from: second.0 }), "{:?}", second.3);
    check(&second, "seat 1 rejoined");
    let watched = observer.join().expect("observer");
    check(&watched, "observer");
    assert!(events.contains(&HostEvent::Left { seat: 1 }), "{events:?}");
    assert!(events.iter().any(|e| matches!(e, HostEvent::Rejoined { seat: 1, .. })), "{events:?}");
    assert!(events.iter().any(|e| matches!(e, HostEvent::Observing { .. })), "{events:?}");
}
