//! The frame encoding and the per-connection ordering rule: round trips, damaged and hostile
//! bytes, duplicated and reordered frames.

use session::{
    Chunk, ClientMsg, Envelope, HostMsg, Link, MAX_EARLY_FRAMES, MAX_FRAME, Order, PROTOCOL_VERSION, ProtocolError, decode, encode,
};
use sim::digest_tree::DigestReport;
use sim::{Command, CommandKind, EntityId, PlayerId};

fn client_messages() -> Vec<ClientMsg> {
    let kind = CommandKind::Remove { units: vec![EntityId { index: 3, generation: 1 }] };
    vec![
        ClientMsg::Hello { version: PROTOCOL_VERSION, seat: 2, token: [7; 16] },
        ClientMsg::Commands { orders: vec![Order { player: PlayerId(2), kind }] },
        ClientMsg::Hash { turn: 9, hash: [1; 32] },
        ClientMsg::Pong { id: 4 },
        ClientMsg::Digests { turn: 9, reports: vec![DigestReport { component: "units".to_owned(), leaves: vec![[2; 32], [3; 32]] }] },
        ClientMsg::Snapshot(Chunk { turn: 12, index: 0, count: 1, total: 3, bytes: vec![1, 2, 3] }),
        ClientMsg::Got { index: 2 },
    ]
}

fn host_messages() -> Vec<HostMsg> {
    let command = Command { turn: 5, player: PlayerId(1), seq: 0, kind: CommandKind::Remove { units: Vec::new() } };
    vec![
        HostMsg::Welcome { version: PROTOCOL_VERSION, seat: 1, scenario: "{}".to_owned(), start_hash: [5; 32], from: 0 },
        HostMsg::Turn { turn: 5, delay: 2, agreed: 3, commands: vec![command] },
        HostMsg::Ping { id: 1 },
        HostMsg::AskDigests { turn: 3 },
        HostMsg::AskSnapshot { turn: 4 },
        HostMsg::Dropped { seat: 2 },
        HostMsg::End { turns: 100, in_sync: true },
        HostMsg::Bye { reason: "bye".to_owned() },
        HostMsg::Load { from: 7, hash: [6; 32] },
        HostMsg::Snapshot(Chunk { turn: 7, index: 1, count: 2, total: 5, bytes: vec![4, 5] }),
        HostMsg::Rejoined { seat: 2 },
        HostMsg::Refused { order: 3, refusal: session::Refusal::TooLarge { bytes: 70_000, limit: 65_536 } },
        HostMsg::Waiting(session::Waiting::Seat { seat: 2, behind_ms: 3_500, drops_at_ms: 10_000 }),
    ]
}

#[test]
fn every_message_round_trips_and_every_cut_is_an_error() {
    for (seq, msg) in client_messages().into_iter().enumerate() {
        let bytes = encode(&Envelope { seq: seq as u32, msg: msg.clone() });
        assert_eq!(decode::<ClientMsg>(&bytes), Ok(Envelope { seq: seq as u32, msg }));
        for cut in 0..bytes.len() {
            assert!(decode::<ClientMsg>(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(decode::<ClientMsg>(&longer), Err(ProtocolError::Trailing(1)));
    }
    for msg in host_messages() {
        let bytes = encode(&Envelope { seq: 0, msg: msg.clone() });
        assert_eq!(decode::<HostMsg>(&bytes), Ok(Envelope { seq: 0, msg }));
        for cut in 0..bytes.len() {
            assert!(decode::<HostMsg>(&bytes[..cut]).is_err(), "cut at {cut}");
        }
    }
}

#[test]
fn the_byte_layout_is_the_documented_one() {
    // docs/protocol.md: u32 sequence number, u32 variant index, then the fields, little-endian
    // and fixed-width.
    let bytes = encode(&Envelope { seq: 1, msg: ClientMsg::Pong { id: 0x0102_0304 } });
    assert_eq!(bytes, [1, 0, 0, 0, 3, 0, 0, 0, 4, 3, 2, 1]);
    let bytes = encode(&Envelope { seq: 0, msg: ClientMsg::Hash { turn: 2, hash: [9; 32] } });
    assert_eq!(&bytes[..12], [0, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0]);
    assert_eq!(&bytes[12..], [9; 32]);
}

#[test]
fn hostile_lengths_and_garbage_are_refused_without_allocating() {
    // A snapshot chunk (turn 1, chunk 0 of 1, 3 bytes) claiming 2⁶⁴ − 1 bytes: refused by the
    // frame limit before any allocation.
    let mut bytes = vec![0, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0];
    bytes.extend(3u64.to_le_bytes());
    bytes.extend(u64::MAX.to_le_bytes());
    assert!(matches!(decode::<ClientMsg>(&bytes), Err(ProtocolError::Malformed(_))));
    assert_eq!(decode::<ClientMsg>(&vec![0; MAX_FRAME + 1]), Err(ProtocolError::Oversized(MAX_FRAME + 1)));
    // Seeded garbage of every length up to 300 bytes: an error or a message, never a panic.
    let mut state = 1u64;
    for len in 0..300 {
        let frame: Vec<u8> = (0..len)
            .map(|_| {
                state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                (state >> 56) as u8
            })
            .collect();
        let _ = decode::<ClientMsg>(&frame);
        let _ = decode::<HostMsg>(&frame);
    }
}

#[test]
fn a_link_gives_frames_once_in_the_senders_order() {
    let mut sender: Link<HostMsg> = Link::default();
    let frames: Vec<Vec<u8>> = (0..20).map(|id| sender.encode(ClientMsg::Pong { id })).collect();
    // Reversed, with every frame twice: each message once, in order.
    let mut receiver: Link<ClientMsg> = Link::default();
    let mut got = Vec::new();
    for frame in frames.iter().rev().chain(frames.iter()) {
        got.extend(receiver.accept(frame).expect("well-formed"));
    }
    assert_eq!(got, (0..20).map(|id| ClientMsg::Pong { id }).collect::<Vec<_>>());
}

#[test]
fn a_link_refuses_to_hold_too_many_early_frames() {
    let mut sender: Link<HostMsg> = Link::default();
    let frames: Vec<Vec<u8>> = (0..=MAX_EARLY_FRAMES as u32 + 1).map(|id| sender.encode(ClientMsg::Pong { id })).collect();
    let mut receiver: Link<ClientMsg> = Link::default();
    // Frame 0 never comes: the early ones fill the buffer, then the next is refused.
    for frame in &frames[1..=MAX_EARLY_FRAMES] {
        assert_eq!(receiver.accept(frame), Ok(Vec::new()));
    }
    assert_eq!(receiver.accept(&frames[MAX_EARLY_FRAMES + 1]), Err(ProtocolError::TooFarAhead(0)));
}

/// Tokens were read from `/dev/urandom` as a file, which does not exist on Windows; they come
/// from `getrandom` now: as many as asked, each of the token's length, no two alike.
#[test]
fn tokens_come_from_the_system_random_source_on_every_platform() {
    let tokens = session::random_tokens(8).expect("a random source");
    assert_eq!(tokens.len(), 8);
    for (k, a) in tokens.iter().enumerate() {
        assert!(tokens[k + 1..].iter().all(|b| a != b), "two equal tokens");
    }
}
