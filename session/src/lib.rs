//! A host-relayed lockstep session for the Phalanx core: the protocol, the host's and a client's
//! state machines, and an in-memory transport (`docs/protocol.md`).
//!
//! The host assigns each connection a seat, stamps every command with the turn it applies on
//! (the host's turn plus the input delay), relays each turn's complete, ordered command set, and
//! compares the hashes every peer reports. The state machines do no I/O and read no clock: a
//! transport feeds them frames and the time, so the same code runs over [`mem`] in tests and over
//! sockets in the program.

pub mod client;
pub mod host;
pub mod mem;
pub mod mover;
pub mod orders;
pub mod protocol;
pub mod recorder;
pub mod seat_bot;
pub mod stats;
pub mod tcp;

pub use client::{Brain, ClientCore, ClientEvent};
pub use host::desync::DesyncReport;
pub use host::{ConnId, Delay, HostConfig, HostCore, HostEvent};
pub use protocol::{ClientMsg, HostMsg, Order};
