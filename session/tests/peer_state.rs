//! What a peer is told about the game it is in (issue 36): what the game waits for, and one
//! clear ending for each way a client's game ends.

mod common;

use std::net::{TcpListener, TcpStream};
use std::time::Instant;

use session::Ending;
use session::Mover;
use session::Waiting;
use session::run_client;
use session::{ClientCore, ClientEvent};
use session::{Delay, HostConfig, HostCore, HostEvent};
use session::{MemGame, MemNet, NetConfig};
use sim::PlayerId;

fn config(turns: u32) -> HostConfig {
    HostConfig {
        tokens: vec![[1; 16], [2; 16]],
        turns,
        turn_ms: 50,
        delay: Delay::Fixed(2),
        drop_after_ms: 5_000,
        max_lead: 16,
        keyframe_every: 0,
    }
}

fn mover(seat: u8) -> Box<Mover> {
    Box::new(Mover::new(PlayerId(seat), 7, 5, 14, 82))
}

fn waits(events: &[ClientEvent]) -> Vec<&Waiting> {
    events.iter().filter_map(|e| if let ClientEvent::Waiting(w) = e { Some(w) } else { None }).collect()
}

/// The host's progress before anyone joined looked like a stalled game: nothing said how many
/// players it waited for. The lobby now tells every connection, and logs each change.
#[test]
fn the_lobby_says_how_many_players_it_waits_for() {
    let scenario = common::scenario("peer-state", 2, 7, 60);
    let host = HostCore::new(&scenario, config(60)).expect("host");
    let mut game = MemGame::new(host, MemNet::new(NetConfig { latency_ms: 5, ..NetConfig::default() }, 7), 5);
    game.add_client(ClientCore::new(1, [1; 16]), mover(1), None);
    assert!(!game.run(2_500), "seat 2 has not come");
    game.add_client(ClientCore::new(2, [2; 16]), mover(2), None);
    assert!(game.run(60_000), "the game ended");
    let first = game.clients[0].core.take_events();
    assert_eq!(waits(&first), [&Waiting::Players { joined: 1, seats: 2 }], "one line while it waits: {first:?}");
    assert_eq!(Waiting::Players { joined: 1, seats: 2 }.to_string(), "waiting for players (1 of 2)");
    let logged: Vec<&Waiting> =
        game.host_events.iter().filter_map(|e| if let HostEvent::Waiting(w) = e { Some(w) } else { None }).collect();
    assert_eq!(logged, [&Waiting::Players { joined: 0, seats: 2 }, &Waiting::Players { joined: 1, seats: 2 }]);
    assert_eq!(game.clients[0].core.ending(), Some(&Ending::Ended { turns: 60, in_sync: true }));
}

/// A lagging or frozen seat showed only as a run of `delay changed` lines, never as who the game
/// waits for and how far behind. Within two turns of the stall, every peer is told.
#[test]
fn a_frozen_seat_is_named_with_its_lag_and_its_drop_time_within_two_turns_of_the_stall() {
    let scenario = common::scenario("peer-state", 2, 8, 200);
    let config = config(200);
    let (turn_ms, max_lead, drop) = (u64::from(config.turn_ms), u64::from(config.max_lead), config.drop_after_ms);
    let host = HostCore::new(&scenario, config).expect("host");
    let mut game = MemGame::new(host, MemNet::new(NetConfig { latency_ms: 5, ..NetConfig::default() }, 8), 5);
    game.add_client(ClientCore::new(1, [1; 16]), mover(1), None);
    game.add_client(ClientCore::new(2, [2; 16]), mover(2), Some(30));
    assert!(game.run(60_000), "the game ended");
    let events = game.clients[0].core.take_events();
    let seat_waits: Vec<(u64, u64)> = waits(&events)
        .into_iter()
        .filter_map(|w| if let Waiting::Seat { seat: 2, behind_ms, drops_at_ms } = w { Some((*behind_ms, *drops_at_ms)) } else { None })
        .collect();
    let (first_behind, drops_at) = *seat_waits.first().unwrap_or_else(|| panic!("seat 2 was named: {events:?}"));
    assert_eq!(drops_at, drop);
    // The host stalls once it is `max_lead` turns ahead of the seat's last hash; two turns later at most, the peers know.
    assert!(first_behind <= (max_lead + 2) * turn_ms, "first told {first_behind} ms behind: {seat_waits:?}");
    assert!(seat_waits.windows(2).all(|w| w[0].0 < w[1].0), "the lag grows toward the drop: {seat_waits:?}");
    assert!(seat_waits.len() >= 3, "told every second until the drop: {seat_waits:?}");
    assert!(events.contains(&ClientEvent::Dropped { seat: 2 }), "{events:?}");
    let line = Waiting::Seat { seat: 2, behind_ms: 3_540, drops_at_ms: 10_000 }.to_string();
    assert_eq!(line, "waiting for seat 2: 3.5 s behind (drops at 10.0 s)");
    assert_eq!(game.clients[0].core.ending(), Some(&Ending::Ended { turns: 200, in_sync: true }));
}

/// A killed client, a kicked one and one whose host died all ended with the same `the game did
/// not end`; a refused join printed a summary of a game never played. Each way now has its own
/// ending: refused, kicked (here: its seat claimed again by a new connection), host gone.
#[test]
fn a_refused_a_kicked_and_an_abandoned_client_each_end_their_own_way() {
    let scenario = common::scenario("peer-state", 2, 9, 120);
    let host = HostCore::new(&scenario, config(120)).expect("host");
    let mut game = MemGame::new(host, MemNet::new(NetConfig { latency_ms: 5, ..NetConfig::default() }, 9), 5);
    let refused = game.add_client(ClientCore::new(1, [9; 16]), mover(1), None);
    game.add_client(ClientCore::new(1, [1; 16]), mover(1), None);
    let kicked = game.add_client(ClientCore::new(2, [2; 16]), mover(2), None);
    assert!(!game.run(2_000));
    let again = game.add_client(ClientCore::new(2, [2; 16]), mover(2), None);
    assert!(game.run(60_000), "the game ended");
    assert_eq!(game.clients[refused].core.ending(), Some(&Ending::Refused { reason: "wrong token for seat 1".to_owned() }));
    let kicked_by = Ending::Kicked { reason: format!("seat 2 was claimed again by connection {}", game.clients[again].conn) };
    assert_eq!(game.clients[kicked].core.ending(), Some(&kicked_by));
    assert_eq!(kicked_by.to_string(), format!("closed by the host: seat 2 was claimed again by connection {}", game.clients[again].conn));
    assert_eq!(game.clients[again].core.ending(), Some(&Ending::Ended { turns: 120, in_sync: true }));

    let mut gone = ClientCore::new(1, [1; 16]);
    gone.on_lost("the peer closed the connection".to_owned());
    assert_eq!(gone.ending().map(ToString::to_string).as_deref(), Some("the host is gone: the peer closed the connection"));
}

/// Finding 6: a client whose host went silent without closing (a half-open connection) waited
/// for ever. A host says something at least every second, so a client gives up on one silent
/// for its timeout, with a line saying so.
#[test]
fn a_client_whose_host_goes_silent_without_closing_gives_up_after_its_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let addr = listener.local_addr().expect("its address");
    // A host that accepts and then says nothing, its socket open, until the client is done.
    let silent = std::thread::spawn(move || {
        let (socket, _) = listener.accept().expect("accept");
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut &socket, &mut buf);
    });
    let start = Instant::now();
    let socket = TcpStream::connect(addr).expect("connect");
    let mut client = ClientCore::new(1, [1; 16]).with_host_timeout(300);
    let mut events = Vec::new();
    run_client(socket, &mut client, &mut session::Idle, &move || start.elapsed().as_millis() as u64, &mut |e| {
        events.push(e.clone());
    })
    .expect("client loop");
    let Some(Ending::HostSilent { silent_ms }) = client.ending() else { panic!("{:?} {events:?}", client.ending()) };
    assert!(*silent_ms > 300);
    let line = Ending::HostSilent { silent_ms: 15_020 }.to_string();
    assert_eq!(line, "the host has sent nothing for 15.0 s: giving up");
    assert!(
        matches!(events.last(), Some(ClientEvent::Closed { reason }) if reason.starts_with("the host has sent nothing for")),
        "{events:?}"
    );
    // The client closed its socket on leaving: the silent host sees the end.
    silent.join().expect("the silent host");
}

/// Counts the turns it is shown, and would order something every turn.
struct Counting {
    turns: std::rc::Rc<std::cell::Cell<u32>>,
}

impl session::Brain for Counting {
    fn think(&mut self, _world: &sim::World, report: &sim::TurnReport) -> Vec<session::Order> {
        self.turns.set(report.turn + 1);
        vec![session::Order { player: PlayerId(1), kind: sim::CommandKind::Stop { units: Vec::new() } }]
    }
}

/// An observer's progress showed `0 turns` for the whole game: its brain (which the progress
/// count wraps) was never shown a turn. It is shown every turn now, and what it would order is
/// still never sent.
#[test]
fn an_observer_s_brain_sees_every_turn_and_sends_nothing() {
    let scenario = common::scenario("peer-state", 2, 10, 60);
    let host = HostCore::new(&scenario, config(60)).expect("host");
    let mut game = MemGame::new(host, MemNet::new(NetConfig { latency_ms: 5, ..NetConfig::default() }, 10), 5);
    let turns = std::rc::Rc::new(std::cell::Cell::new(0));
    game.add_client(ClientCore::observer(), Box::new(Counting { turns: turns.clone() }), None);
    for seat in 1..=2 {
        game.add_client(ClientCore::new(seat, [seat; 16]), mover(seat), None);
    }
    assert!(game.run(60_000), "the game ended");
    assert_eq!(turns.get(), 60, "the observer's brain saw every turn");
    assert!(!game.host_events.iter().any(|e| matches!(e, HostEvent::Refused { .. })), "{:?}", game.host_events);
    assert_eq!(game.clients[0].core.ended(), Some((60, true)));
}
