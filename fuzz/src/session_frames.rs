//! The `session_frames` target: a hosted game of three protocol-honest seats, with frames from
//! several hostile connections interleaved with it and with steps of the clock, all decoded from
//! bytes; and a lone client fed host messages decoded from bytes. Neither the host nor the client
//! may panic, and the honest seats' game must be unaffected.
//!
//! # Layout
//!
//! Actions follow while bytes remain (at most [`MAX_ACTIONS`]), each a byte choosing what it is:
//! a frame from a hostile connection (raw bytes, or a message of any kind with its fields from the
//! bytes, under a sequence number that is mostly the next and sometimes a copy or a gap), a new
//! hostile connection or the loss of one, orders for seat 3 to send (its brain plays them: any
//! player, units named, spawns, names, terrain and game payloads of any size the frame allows),
//! or for seat 3 to send as they are, unsplit,
//! a step of the clock (up to a second), or a host message to the lone client (a welcome with the
//! game's scenario or another, turns of any commands, loads and snapshot chunks, the host's world
//! in chunks, questions, refusals, waits, goodbyes, garbage).
//!
//! # Oracles
//!
//! - Nothing panics; the host's and the client's state machines refuse what they cannot take.
//! - The game then runs to its end: the host closed every turn, in sync; seats 1 to 3 were never
//!   closed, and each stepped every turn with the hashes of a single-process run of the host's
//!   command stream, and saw the end in sync. No hostile connection knows a seat's token, so
//!   none may take a seat, end the game or stall it.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

use replay::scenario::Scenario;
use session::Idle;
use session::single_process_hashes;
use session::{Brain, ClientCore, Order};
use session::{Chunk, ClientMsg, Envelope, HostMsg, PROTOCOL_VERSION, Token, Waiting, encode};
use session::{ConnId, Delay, HostConfig, HostCore};
use sim::digest_tree::DigestReport;
use sim::{Command, CommandKind, EntityId, GoalSpec, PlayerId, TurnReport, World};

use crate::bytes::Bytes;

/// Most actions in one input.
pub const MAX_ACTIONS: u32 = 256;
/// Turns of the game.
const TURNS: u32 = 24;
/// Milliseconds per turn.
const TURN_MS: u32 = 20;
/// The seats: all three are played by protocol-honest clients.
const SEATS: u8 = 3;

const SCENARIO: &str = r#"{"format": "phalanx-scenario", "version": 3, "name": "fuzz-session", "turns": 24,
  "settings": {"players": 3, "seed": 5}, "map": {"generated": {"tiles": 16, "seed": 1}},
  "units": [
    {"name": "a", "player": 1, "class": "default", "at": [20, 20], "count": 3, "radius": 0.5, "speed": 8},
    {"name": "b", "player": 2, "class": "default", "at": [44, 44], "count": 3, "radius": 0.5, "speed": 8},
    {"name": "c", "player": 3, "class": "default", "at": [20, 44], "count": 3, "radius": 0.5, "speed": 8}
  ]}"#;

fn token(seat: u8) -> Token {
    [seat.wrapping_mul(37) ^ 0x5a; 16]
}

/// A seat's brain that sends what the input queued for it, once per turn.
struct Queued {
    orders: Rc<RefCell<VecDeque<Vec<Order>>>>,
}

impl Brain for Queued {
    fn think(&mut self, _world: &World, _report: &TurnReport) -> Vec<Order> {
        self.orders.borrow_mut().pop_front().unwrap_or_default()
    }
}

/// A protocol-honest seat: its connection and client.
struct Seat {
    conn: ConnId,
    core: ClientCore,
    brain: Box<dyn Brain>,
}

/// A hostile connection: the next sequence number it sends under.
struct Hostile {
    next: u32,
}

/// Unit ids, mostly real ones of the scenario (each player's three units), some never seen.
fn ids(b: &mut Bytes<'_>, counts: &[u32]) -> Vec<EntityId> {
    let n = b.pick(counts);
    (0..n)
        .map(|k| if b.below(4) == 0 { EntityId { index: b.u32(), generation: b.u32() } } else { EntityId { index: k % 9, generation: 0 } })
        .collect()
}

/// An order of any player and of a kind whose size and work the bytes choose.
fn order(b: &mut Bytes<'_>) -> Order {
    let player = PlayerId(b.pick(&[3, 3, 3, 0, 1, 2, 4, 255]));
    let at = pathing::WorldPos::from_int(i32::from(b.u8()) % 64, i32::from(b.u8()) % 64);
    let kind = match b.below(8) {
        0 => CommandKind::Stop { units: ids(b, &[1, 3, 1024, 1025, 4096, 70_000]) },
        1 => CommandKind::Move { units: ids(b, &[0, 1, 2, 3, 5, 8]), goal: GoalSpec::Point(at), queue: b.bool() },
        2 => CommandKind::Spawn {
            class: pathing::PassClass::of(0),
            at,
            count: b.pick(&[1, 4, 200, 256, 257, 4096]),
            radius: pathing::Fixed::ONE / 2,
            speed: pathing::Fixed::from_num(8),
            turn_rate: None,
        },
        3 => CommandKind::SetArea { name: "n".repeat(b.pick(&[1, 1000, 60_000, 70_000])), available: b.bool() },
        4 => CommandKind::Remove { units: ids(b, &[0, 1, 3]) },
        5 => {
            let width = b.below(64) + 1;
            let heights = vec![pathing::Fixed::ONE; (width * b.pick(&[1, 8, 64, 100])) as usize];
            CommandKind::EditTerrain { vx: b.below(8), vz: b.below(8), width, heights }
        }
        6 => CommandKind::Game { rules: "m".repeat(b.pick(&[1, 32, 5000])), payload: vec![b.u8(); b.pick(&[0, 16, 4096, 5000])] },
        _ => CommandKind::Move {
            units: ids(b, &[2]),
            goal: GoalSpec::Square { center: at, half: pathing::Fixed::from_num(b.pick(&[1, 100, 200])) },
            queue: false,
        },
    };
    Order { player, kind }
}

fn orders(b: &mut Bytes<'_>) -> Vec<Order> {
    (0..b.pick(&[0, 1, 2, 8, 64, 65])).map(|_| order(b)).collect()
}

/// A client message of any kind, its fields from the bytes.
fn client_msg(b: &mut Bytes<'_>) -> ClientMsg {
    match b.below(8) {
        0 => {
            let mut t: Token = [0; 16];
            t.iter_mut().for_each(|x| *x = b.u8());
            // No hostile connection knows a seat's token.
            if (1..=SEATS).any(|s| token(s) == t) {
                t[0] ^= 1;
            }
            let version = if b.below(4) == 0 { b.u32() } else { PROTOCOL_VERSION };
            ClientMsg::Hello { version, seat: b.below(6) as u8, token: t }
        }
        1 => ClientMsg::Commands { orders: orders(b) },
        2 => ClientMsg::Hash { turn: b.below(40), hash: [b.u8(); 32] },
        3 => ClientMsg::Pong { id: b.below(40) },
        4 => ClientMsg::Digests {
            turn: b.below(40),
            reports: vec![DigestReport { component: "units".to_owned(), leaves: vec![[b.u8(); 32]; b.below(4) as usize] }],
        },
        5 => ClientMsg::Snapshot(chunk(b)),
        6 => ClientMsg::Got { index: b.below(8) },
        _ => ClientMsg::Hello { version: PROTOCOL_VERSION, seat: 0, token: [0; 16] },
    }
}

fn chunk(b: &mut Bytes<'_>) -> Chunk {
    let count = b.pick(&[0, 1, 2, 128, 129]);
    let len = b.pick(&[0, 3, 1000, 512 * 1024, 512 * 1024 + 1]);
    Chunk {
        turn: b.below(40),
        index: b.below(3),
        count,
        total: u64::from(b.pick(&[0u32, 3, 1000, 2000])) << b.below(30),
        bytes: vec![b.u8(); len],
    }
}

/// A host message of any kind for the lone client; `world` lends the game's real snapshot.
fn host_msg(b: &mut Bytes<'_>, scenario_text: &str, start_hash: [u8; 32], world: &World) -> HostMsg {
    match b.below(12) {
        0 => HostMsg::Welcome {
            version: if b.below(8) == 0 { b.u32() } else { PROTOCOL_VERSION },
            seat: b.pick(&[1, 1, 1, 2, 0]),
            scenario: if b.below(4) == 0 { "{}".to_owned() } else { scenario_text.to_owned() },
            start_hash: if b.below(8) == 0 { [b.u8(); 32] } else { start_hash },
            from: b.pick(&[0, 0, 0, 5, u32::MAX]),
        },
        1..=3 => {
            let commands = (0..b.below(4))
                .map(|k| Command { turn: b.below(30), player: PlayerId(b.below(4) as u8), seq: k, kind: order(b).kind })
                .collect();
            HostMsg::Turn { turn: b.below(30), delay: b.below(12), agreed: b.below(30), commands }
        }
        4 => HostMsg::Load { from: b.below(30), hash: if b.bool() { world.state_hash() } else { [b.u8(); 32] } },
        5 => {
            let bytes = world.save();
            let pieces = session::chunks(b.below(30), &bytes);
            let k = (b.below(4) as usize).min(pieces.len().saturating_sub(1));
            HostMsg::Snapshot(pieces.into_iter().nth(k).unwrap_or_else(|| chunk(b)))
        }
        6 => HostMsg::Snapshot(chunk(b)),
        7 => HostMsg::AskDigests { turn: b.below(30) },
        8 => HostMsg::AskSnapshot { turn: b.below(30) },
        9 => HostMsg::Waiting(Waiting::Seat { seat: b.u8(), behind_ms: b.u64(), drops_at_ms: b.u64() }),
        10 => HostMsg::Refused { order: b.u32(), refusal: session::Refusal::Observer },
        _ => match b.below(5) {
            0 => HostMsg::Bye { reason: "bye".to_owned() },
            1 => HostMsg::End { turns: b.below(30), in_sync: b.bool() },
            2 => HostMsg::Ping { id: b.u32() },
            3 => HostMsg::Dropped { seat: b.u8() },
            _ => HostMsg::Rejoined { seat: b.u8() },
        },
    }
}

/// The game of the host and its seats, with the hostile connections beside it.
struct Game<'s> {
    host: HostCore<'s>,
    seats: Vec<Seat>,
    hostile: BTreeMap<ConnId, Hostile>,
    next_conn: ConnId,
    now: u64,
    /// Seats the host closed: none may be.
    closed_seats: Vec<ConnId>,
}

impl Game<'_> {
    /// Delivers at once until nothing moves: the host's frames to the seats (a hostile
    /// connection's are read by nobody), the seats' frames to the host, and the host's clock.
    fn pump(&mut self) {
        for _ in 0..64 {
            let mut moved = false;
            let out = self.host.take_output();
            for (conn, frame) in out.frames {
                if let Some(s) = self.seats.iter_mut().find(|s| s.conn == conn) {
                    s.core.on_frame(&frame);
                    moved = true;
                }
            }
            for conn in out.close {
                if self.seats.iter().any(|s| s.conn == conn) {
                    self.closed_seats.push(conn);
                }
                self.hostile.remove(&conn);
            }
            for s in &mut self.seats {
                s.core.tick(self.now);
                s.core.step_ready(self.now, s.brain.as_mut());
                for frame in s.core.take_frames() {
                    self.host.on_frame(s.conn, &frame, self.now);
                    moved = true;
                }
                let _ = s.core.take_events();
            }
            self.host.tick(self.now);
            if !moved {
                break;
            }
        }
    }
}

/// The target body.
pub fn session_frames(data: &[u8]) {
    let Ok(scenario) = Scenario::parse(SCENARIO, "fuzz-session", &mut |f| Err(format!("no file {f}"))) else {
        panic!("the target's scenario parses")
    };
    let config = HostConfig {
        tokens: (1..=SEATS).map(token).collect(),
        turns: TURNS,
        turn_ms: TURN_MS,
        delay: Delay::Fixed(2),
        drop_after_ms: 60_000,
        max_lead: 8,
        keyframe_every: 0,
    };
    let Ok(host) = HostCore::new(&scenario, config) else { panic!("the target's host starts") };
    let queue: Rc<RefCell<VecDeque<Vec<Order>>>> = Rc::default();
    let mut game = Game { host, seats: Vec::new(), hostile: BTreeMap::new(), next_conn: 0, now: 0, closed_seats: Vec::new() };
    for seat in 1..=SEATS {
        let conn = game.next_conn;
        game.next_conn += 1;
        game.host.on_connect(conn);
        let brain: Box<dyn Brain> = if seat == 3 {
            Box::new(Queued { orders: queue.clone() })
        } else {
            Box::new(session::Mover::new(PlayerId(seat), 5, 3, 14, 50))
        };
        game.seats.push(Seat { conn, core: ClientCore::new(seat, token(seat)), brain });
    }
    // The lone client, and what it needs to be fed a plausible game.
    let mut lone = ClientCore::new(1, token(1));
    let mut lone_seq = 0u32;
    let Ok(reference) = scenario.world() else { panic!("the target's world builds") };
    let start_hash = reference.state_hash();
    let text = scenario.canonical_text().to_owned();

    let mut b = Bytes::new(data);
    let mut actions = 0;
    while !b.is_empty() && actions < MAX_ACTIONS {
        actions += 1;
        match b.below(10) {
            0 | 1 => {
                // A frame from a hostile connection, opened if there is none.
                if game.hostile.is_empty() || b.below(8) == 0 {
                    let conn = game.next_conn;
                    game.next_conn += 1;
                    game.host.on_connect(conn);
                    game.hostile.insert(conn, Hostile { next: 0 });
                }
                let keys: Vec<ConnId> = game.hostile.keys().copied().collect();
                let conn = keys[b.below(keys.len() as u32) as usize];
                let frame = if b.below(6) == 0 {
                    (0..b.below16(4096)).map(|_| b.u8()).collect()
                } else {
                    let msg = client_msg(&mut b);
                    let h = game.hostile.get_mut(&conn).map_or(0, |h| {
                        let seq = match b.below(8) {
                            0 => h.next.saturating_sub(1),
                            1 => h.next + 1 + b.below(4),
                            _ => h.next,
                        };
                        h.next = h.next.max(seq + 1);
                        seq
                    });
                    encode(&Envelope { seq: h, msg })
                };
                game.host.on_frame(conn, &frame, game.now);
            }
            2 => {
                // A hostile connection lost.
                let keys: Vec<ConnId> = game.hostile.keys().copied().collect();
                if let Some(&conn) = keys.get(b.below(4) as usize) {
                    game.hostile.remove(&conn);
                    game.host.on_disconnect(conn, game.now);
                }
            }
            3 => queue.borrow_mut().push_back(orders(&mut b)),
            9 => {
                // Seat 3 sends orders as they are, unsplit and unchecked, on its own connection.
                // More than 64 in one message closes the connection: a seat's own doing, not
                // an attack on the others, so the target stays within it.
                let mut orders = orders(&mut b);
                orders.truncate(session::MAX_COMMANDS_PER_TURN);
                if let Some(s) = game.seats.get_mut(2) {
                    s.core.send_unchecked(ClientMsg::Commands { orders });
                }
            }
            4 | 5 => game.now += u64::from(b.below16(1000)),
            _ => {
                // The lone client's turn: a host message or garbage, its clock and a step.
                let frame = if b.below(8) == 0 {
                    (0..b.below16(512)).map(|_| b.u8()).collect()
                } else {
                    let msg = host_msg(&mut b, &text, start_hash, game.host.world());
                    let seq = if b.below(8) == 0 { b.below(4) } else { lone_seq };
                    lone_seq = lone_seq.max(seq + 1);
                    encode(&Envelope { seq, msg })
                };
                lone.on_frame(&frame);
                lone.tick(game.now);
                lone.step_ready(game.now, &mut Idle);
                let _ = (lone.take_frames(), lone.take_events());
            }
        }
        game.pump();
    }
    // The game runs to its end; the clock moves a turn at a time.
    for _ in 0..10 * TURNS {
        if game.host.is_over() && game.seats.iter().all(|s| s.core.ended().is_some()) {
            break;
        }
        game.now += u64::from(TURN_MS);
        game.pump();
    }
    assert!(game.closed_seats.is_empty(), "an honest seat was closed: {:?}", game.closed_seats);
    assert!(game.host.is_over(), "the game ended");
    assert!(game.host.in_sync(), "the game stayed in sync");
    let Ok(oracle) = single_process_hashes(&scenario, game.host.history()) else { panic!("the oracle runs") };
    assert_eq!(oracle.len(), TURNS as usize, "every turn closed");
    assert_eq!(game.host.hashes(), &oracle[..], "the host's hashes");
    for s in &game.seats {
        assert_eq!(s.core.hashes(), &oracle[..], "seat {} stepped every turn", s.core.seat());
        assert_eq!(s.core.ended(), Some((TURNS, true)), "seat {} saw the end", s.core.seat());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seeded inputs beside the corpus: the body over splitmix bytes of several lengths.
    #[test]
    fn seeded_inputs_leave_the_honest_seats_game_unaffected() {
        let mut z = 0x9e37_79b9_7f4a_7c15u64;
        for len in [0usize, 16, 64, 200, 600, 1500, 3000] {
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
                    let mut x = z;
                    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                    (x ^ (x >> 31)) as u8
                })
                .collect();
            session_frames(&data);
        }
    }
}
