//! A host-relayed lockstep session for the Phalanx core: the protocol, the host's and a client's
//! state machines, and an in-memory transport (`docs/protocol.md`).
//!
//! The host assigns each connection a seat, stamps every command with the turn it applies on
//! (the host's turn plus the input delay), relays each turn's complete, ordered command set, and
//! compares the hashes every peer reports. The state machines do no I/O and read no clock: a
//! transport feeds them frames and the time, so the same code runs over [`MemNet`] in tests and over
//! sockets ([`run_host`], [`run_client`]) in the program.
//!
//! Every item has one public path, flat from the crate root (`session::HostCore`,
//! `session::ClientMsg`, `session::run_host`); the modules are private and only group the code:
//!
//! - `protocol.rs`: the messages, frames, snapshot chunks and limits; `orders.rs`: the checks on
//!   a client's orders.
//! - `host.rs` (and `host/desync.rs`, the desync report): the host's state machine.
//! - `client.rs`: a client's state machine and its [`Brain`]; `recorder.rs`: the kept turns a
//!   peer simulates again to locate a desync.
//! - `mem.rs`: the in-memory transport; `tcp.rs`: the socket transport.
//! - `mover.rs`, `seat_bot.rs`: scripted brains; `stats.rs`: traffic and latency figures.
//! - `error.rs`: [`Error`], why a session cannot start, take a snapshot chunk or simulate a kept
//!   turn again ([`ProtocolError`] is why bytes are not a frame).

mod client;
mod error;
mod host;
mod mem;
mod mover;
mod orders;
mod protocol;
mod recorder;
mod seat_bot;
mod stats;
mod tcp;

pub use client::{Brain, ClientCore, ClientEvent, Ending, Idle, MAX_HELD_TURNS};
pub use error::Error;
pub use host::desync::{Case, DesyncReport};
pub use host::{
    CHUNK_WINDOW, CLIENT_SEQ_BASE, ConnId, Delay, HELLO_WITHIN_MS, HostConfig, HostCore, HostEvent, HostOutput, LOWER_AFTER,
    MAX_BYTES_PER_TURN, MAX_DELAY, MAX_FRAMES_PER_TURN, MAX_OBSERVER_BYTES_PER_TURN, MAX_OBSERVER_LAG, MAX_OBSERVERS, MIN_DELAY,
    STATUS_EVERY_MS, hex, target_delay,
};
pub use mem::{Dir, MemClient, MemGame, MemNet, NetConfig, RawPeer, single_process_hashes};
pub use mover::Mover;
pub use orders::{
    MAX_AREA_SIDE_M, MAX_ORDER_BYTES, MAX_ORDER_UNITS, MAX_TURN_SPAWNS, MAX_TURN_TERRAIN, MAX_TURN_UNITS, Refusal, SeatTurn,
    TURN_ORDER_BYTES, Work, check_order, check_player,
};
pub use protocol::{
    CHUNK_BYTES, Chunk, ClientMsg, Envelope, HostMsg, Link, MAX_CHUNKS, MAX_COMMANDS_PER_TURN, MAX_EARLY_FRAMES, MAX_FRAME, MAX_SNAPSHOT,
    OBSERVER_SEAT, Order, PROTOCOL_VERSION, ProtocolError, Reassembly, TOKEN_BYTES, Token, Waiting, chunks, decode, encode, random_tokens,
    try_encode,
};
pub use recorder::{MAX_KEPT_TURNS, Recorder, Replayed, SNAPSHOT_EVERY};
pub use seat_bot::SeatBot;
pub use stats::{Latency, Traffic};
pub use tcp::{MAX_CONNECTIONS, MAX_QUEUED, run_client, run_client_watched, run_host, run_host_watched};
