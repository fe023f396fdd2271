//! A game over real sockets on 127.0.0.1: a host, two movers, and connections sending garbage, a
//! wrong token and an oversized frame, which are closed while the game completes in sync.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::time::Instant;

use replay::scenario::Scenario;
use session::Mover;
use session::single_process_hashes;
use session::{ClientCore, ClientEvent};
use session::{ClientMsg, Envelope, MAX_FRAME, PROTOCOL_VERSION, encode};
use session::{Delay, HostConfig, HostCore, HostEvent};
use session::{run_client, run_host};
use sim::PlayerId;

const SCENARIO: &str = r#"{"format": "phalanx-scenario", "version": 3, "name": "tcp", "turns": 40,
  "settings": {"players": 2, "seed": 21}, "map": {"generated": {"tiles": 16, "seed": 1}},
  "units": [
    {"name": "a", "player": 1, "class": "default", "at": [20, 20], "count": 3, "radius": 0.5, "speed": 8},
    {"name": "b", "player": 2, "class": "default", "at": [44, 44], "count": 3, "radius": 0.5, "speed": 8}
  ]}"#;

fn framed(payload: &[u8]) -> Vec<u8> {
    let mut bytes = (payload.len() as u32).to_le_bytes().to_vec();
    bytes.extend(payload);
    bytes
}

/// The host's settings of both games: two seats, 40 turns of 20 ms.
fn config() -> HostConfig {
    HostConfig {
        tokens: vec![[1; 16], [2; 16]],
        turns: 40,
        turn_ms: 20,
        delay: Delay::Auto,
        drop_after_ms: 20_000,
        max_lead: 16,
        keyframe_every: 10,
    }
}

#[test]
fn a_game_over_loopback_sockets_ends_in_sync_despite_bad_connections() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let addr = listener.local_addr().expect("its address");
    let start = Instant::now();
    let clock = move || start.elapsed().as_millis() as u64;

    // The misbehaving connections come first, so they are open while the game runs.
    let mut bad = Vec::new();
    for bytes in [
        framed(&[0xff; 33]),
        framed(&encode(&Envelope { seq: 0, msg: ClientMsg::Hello { version: PROTOCOL_VERSION, seat: 1, token: [9; 16] } })),
        ((MAX_FRAME + 1) as u32).to_le_bytes().to_vec(),
    ] {
        let mut s = TcpStream::connect(addr).expect("connect");
        s.write_all(&bytes).expect("send");
        bad.push(s);
    }

    let clients: Vec<_> = (1..=2u8)
        .map(|seat| {
            std::thread::spawn(move || {
                let socket = TcpStream::connect(addr).expect("connect");
                let mut client = ClientCore::new(seat, [seat; 16]);
                let mut mover = Mover::new(PlayerId(seat), 21, 4, 14, 50);
                let mut events = Vec::new();
                run_client(socket, &mut client, &mut mover, &move || start.elapsed().as_millis() as u64, &mut |e| events.push(e.clone()))
                    .expect("client loop");
                (client.hashes().to_vec(), client.ended(), events)
            })
        })
        .collect();

    let scenario = Scenario::parse(SCENARIO, "tcp", &mut |f| Err(format!("no file {f}"))).expect("scenario");
    let config = config();
    let mut host = HostCore::new(&scenario, config).expect("host");
    let mut events = Vec::new();
    run_host(&listener, &mut host, &clock, &mut |e| events.push(e.clone())).expect("host loop");

    assert!(host.in_sync(), "{events:?}");
    let oracle = single_process_hashes(&scenario, host.history()).expect("oracle");
    assert_eq!(host.hashes(), &oracle[..]);
    assert!(host.history().iter().flatten().count() > 5, "the movers' commands were relayed");
    for client in clients {
        let (hashes, ended, client_events) = client.join().expect("client thread");
        assert_eq!(hashes, oracle, "{client_events:?}");
        assert_eq!(ended, Some((40, true)));
        assert!(client_events.contains(&ClientEvent::Ended { turns: 40, in_sync: true }));
    }
    let reasons: Vec<&str> = events
        .iter()
        .filter_map(|e| if let HostEvent::Closed { conn, reason } = e { (*conn < 3).then_some(reason.as_str()) } else { None })
        .collect();
    assert!(reasons.iter().any(|r| r.starts_with("malformed frame")), "{reasons:?}");
    assert!(reasons.contains(&"wrong token for seat 1"), "{reasons:?}");
    assert!(reasons.contains(&format!("frame of {} bytes is over the limit of {MAX_FRAME}", MAX_FRAME + 1).as_str()), "{reasons:?}");
    drop(bad);
}

#[test]
fn silent_and_surplus_connections_are_closed_and_the_players_then_play() {
    use session::HELLO_WITHIN_MS;
    use session::MAX_CONNECTIONS;
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let addr = listener.local_addr().expect("its address");
    let start = Instant::now();
    let clock = move || start.elapsed().as_millis() as u64;

    // Every connection slot taken by a connection that never says Hello, and one more.
    let silent: Vec<TcpStream> = (0..=MAX_CONNECTIONS).map(|_| TcpStream::connect(addr).expect("connect")).collect();
    // The players come once the silent connections have had their time.
    let clients: Vec<_> = (1..=2u8)
        .map(|seat| {
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(HELLO_WITHIN_MS + 1_500));
                let socket = TcpStream::connect(addr).expect("connect");
                let mut client = ClientCore::new(seat, [seat; 16]);
                let mut mover = Mover::new(PlayerId(seat), 21, 4, 14, 50);
                run_client(socket, &mut client, &mut mover, &move || start.elapsed().as_millis() as u64, &mut |_| {}).expect("client loop");
                client.hashes().to_vec()
            })
        })
        .collect();

    let scenario = Scenario::parse(SCENARIO, "tcp", &mut |f| Err(format!("no file {f}"))).expect("scenario");
    let config = config();
    let mut host = HostCore::new(&scenario, config).expect("host");
    let mut events = Vec::new();
    run_host(&listener, &mut host, &clock, &mut |e| events.push(e.clone())).expect("host loop");

    let reasons: Vec<&str> =
        events.iter().filter_map(|e| if let HostEvent::Closed { reason, .. } = e { Some(reason.as_str()) } else { None }).collect();
    let displaced = "displaced: the host is full and this connection had sent no Hello";
    let quiet = format!("no Hello within {HELLO_WITHIN_MS} ms");
    // The surplus connection displaced the oldest silent one, and was itself silent.
    assert_eq!(reasons.iter().filter(|r| **r == displaced).count(), 1, "{reasons:?}");
    assert_eq!(reasons.iter().filter(|r| **r == quiet).count(), MAX_CONNECTIONS, "{reasons:?}");
    assert!(host.in_sync(), "{events:?}");
    let oracle = single_process_hashes(&scenario, host.history()).expect("oracle");
    assert_eq!(host.hashes(), &oracle[..]);
    for client in clients {
        assert_eq!(client.join().expect("client thread"), oracle);
    }
    drop(silent);
}
