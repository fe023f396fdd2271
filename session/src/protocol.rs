//! The session's messages, their byte encoding and the per-connection ordering rule (`docs/protocol.md`).
//!
//! A frame is a `u32` little-endian length followed by that many bytes of payload; the payload is an
//! [`Envelope`] encoded with bincode's fixed-width little-endian integers (the configuration the
//! snapshots use). Every envelope carries the sender's per-connection sequence number, so a
//! receiver can put frames back in order and drop copies ([`Link`]) whatever the transport below
//! does. Decoding never panics and never allocates more than [`MAX_FRAME`] bytes.

use crate::Error;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sim::digest_tree::{Digest, DigestReport};
use sim::{Command, CommandKind, PlayerId};

pub use crate::orders::Refusal;

/// The protocol version a `Hello` and a `Welcome` carry; peers of another version are refused.
pub const PROTOCOL_VERSION: u32 = 3;
/// The largest payload of a frame in bytes; a longer frame closes its connection.
pub const MAX_FRAME: usize = 1 << 20;
/// The most commands one seat may have applied in one turn; the rest are refused with an event.
pub const MAX_COMMANDS_PER_TURN: usize = 64;
/// The most frames a receiver holds while it waits for an earlier one; past it the connection closes.
pub const MAX_EARLY_FRAMES: usize = 1024;
/// The most snapshot bytes one [`Chunk`] carries, so a chunk's frame stays under [`MAX_FRAME`].
pub const CHUNK_BYTES: usize = 512 * 1024;
/// The most chunks of one snapshot; with [`CHUNK_BYTES`] this bounds a snapshot at 64 MiB.
pub const MAX_CHUNKS: u32 = 128;
/// The largest snapshot sent or received: [`MAX_CHUNKS`] chunks of [`CHUNK_BYTES`].
pub const MAX_SNAPSHOT: u64 = MAX_CHUNKS as u64 * CHUNK_BYTES as u64;
/// The seat number an observer asks for in `Hello`: it plays no player.
pub const OBSERVER_SEAT: u8 = 0;
/// The bytes of a seat token.
pub const TOKEN_BYTES: usize = 16;

/// A seat's secret: whoever presents it in `Hello` plays that seat.
pub type Token = [u8; TOKEN_BYTES];

/// `n` fresh tokens from the operating system's random source (`getrandom`, on every platform).
///
/// # Errors
/// When the system has no random source to give.
pub fn random_tokens(n: u8) -> Result<Vec<Token>, Error> {
    let mut tokens = vec![[0u8; TOKEN_BYTES]; usize::from(n)];
    for token in &mut tokens {
        getrandom::fill(token).map_err(|source| Error::Random { source })?;
    }
    Ok(tokens)
}

/// A command as a client sends it: the player it claims to speak for and what to do. The host
/// stamps the turn and the sequence number, and refuses a command for a player not the sender's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Order {
    /// The player the command is for; must be the connection's seat.
    pub player: PlayerId,
    /// What to do.
    pub kind: CommandKind,
}

/// One piece of a snapshot: snapshots are sent as `count` chunks, `index` 0 first, in order, each
/// of at most [`CHUNK_BYTES`] bytes, `total` bytes in all ([`chunks`], [`Reassembly`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// The turn the snapshot belongs to (what the turn means is the message's: see its users).
    pub turn: u32,
    /// This chunk's place, from 0.
    pub index: u32,
    /// How many chunks the snapshot has, 1 to [`MAX_CHUNKS`].
    pub count: u32,
    /// The snapshot's length in bytes, at most [`MAX_SNAPSHOT`]; 0 for "no snapshot".
    pub total: u64,
    /// This chunk's bytes.
    pub bytes: Vec<u8>,
}

/// Cuts a snapshot into chunks: at least one (an empty snapshot is one empty chunk), and one
/// empty chunk for a snapshot over [`MAX_SNAPSHOT`], which cannot be sent.
pub fn chunks(turn: u32, bytes: &[u8]) -> Vec<Chunk> {
    if bytes.is_empty() || bytes.len() as u64 > MAX_SNAPSHOT {
        return vec![Chunk { turn, index: 0, count: 1, total: 0, bytes: Vec::new() }];
    }
    let count = bytes.len().div_ceil(CHUNK_BYTES) as u32;
    bytes
        .chunks(CHUNK_BYTES)
        .enumerate()
        .map(|(k, b)| Chunk { turn, index: k as u32, count, total: bytes.len() as u64, bytes: b.to_vec() })
        .collect()
}

/// Puts a snapshot's chunks back together, checking every limit: chunks in order, a count and a
/// total within the limits and the same in every chunk, each chunk within [`CHUNK_BYTES`], and the
/// bytes adding up to the total. Memory grows only with the bytes that arrived.
#[derive(Debug, Default)]
pub struct Reassembly {
    /// The first chunk's turn, count and total, and the bytes so far, while a snapshot is arriving.
    partial: Option<(u32, u32, u64, Vec<u8>)>,
    next: u32,
}

impl Reassembly {
    /// Takes the next chunk; returns the turn and the whole snapshot once its last chunk arrived.
    ///
    /// # Errors
    /// Why the chunk breaks the rules: the connection that sent it should be closed.
    pub fn accept(&mut self, chunk: Chunk) -> Result<Option<(u32, Vec<u8>)>, Error> {
        if chunk.index != self.next {
            return Err(Error::ChunkOrder { index: chunk.index, due: self.next });
        }
        if chunk.count == 0 || chunk.count > MAX_CHUNKS {
            return Err(Error::ChunkCount { count: chunk.count });
        }
        if chunk.total > MAX_SNAPSHOT {
            return Err(Error::SnapshotSize { total: chunk.total });
        }
        if chunk.bytes.len() > CHUNK_BYTES {
            return Err(Error::ChunkSize { len: chunk.bytes.len() });
        }
        let (turn, count, total, bytes) = self.partial.get_or_insert_with(|| (chunk.turn, chunk.count, chunk.total, Vec::new()));
        if (*turn, *count, *total) != (chunk.turn, chunk.count, chunk.total) {
            return Err(Error::ChunkMismatch);
        }
        if bytes.len() as u64 + chunk.bytes.len() as u64 > *total {
            return Err(Error::ChunkOverrun { total: *total });
        }
        bytes.extend_from_slice(&chunk.bytes);
        self.next += 1;
        if self.next < *count {
            return Ok(None);
        }
        let whole = self.partial.take().map(|(turn, _, total, bytes)| (turn, total, bytes));
        self.next = 0;
        match whole {
            Some((turn, total, bytes)) if bytes.len() as u64 == total => Ok(Some((turn, bytes))),
            Some((_, total, bytes)) => Err(Error::ChunkShort { len: bytes.len(), total }),
            None => Ok(None),
        }
    }
}

/// Everything a client sends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClientMsg {
    /// The first message: the protocol version, the seat asked for (a player number) and its token.
    Hello {
        /// [`PROTOCOL_VERSION`] of the client.
        version: u32,
        /// The seat, a player number from 1, or [`OBSERVER_SEAT`] to watch.
        seat: u8,
        /// The seat's token (not read for an observer).
        token: Token,
    },
    /// Commands to apply as soon as possible: the host stamps them with a turn.
    Commands {
        /// The commands, at most [`MAX_COMMANDS_PER_TURN`].
        orders: Vec<Order>,
    },
    /// The state hash after the client stepped a turn.
    Hash {
        /// The turn stepped.
        turn: u32,
        /// `TurnReport::hash` of it.
        hash: Digest,
    },
    /// The answer to [`HostMsg::Ping`], sent at once.
    Pong {
        /// The ping's number.
        id: u32,
    },
    /// The answer to [`HostMsg::AskDigests`]: the digest tree leaves after that turn.
    Digests {
        /// The turn asked for.
        turn: u32,
        /// Its leaves, or none when the client no longer holds that turn.
        reports: Vec<DigestReport>,
    },
    /// The answer to [`HostMsg::AskSnapshot`], one chunk of it: `World::save` after turn
    /// `chunk.turn`, or an empty snapshot when the client no longer holds that turn.
    Snapshot(Chunk),
    /// A chunk of [`HostMsg::Snapshot`] arrived: the host sends more chunks only as earlier ones
    /// are acknowledged, so a slow reader never has a whole snapshot queued for it.
    Got {
        /// The chunk's index.
        index: u32,
    },
}

/// Everything the host sends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum HostMsg {
    /// The seat is the client's: the game it plays, from the scenario text.
    Welcome {
        /// [`PROTOCOL_VERSION`] of the host.
        version: u32,
        /// The seat granted.
        seat: u8,
        /// The scenario's canonical text, from which the client builds the world.
        scenario: String,
        /// The world's hash before turn 0, which the client's world must equal.
        start_hash: Digest,
        /// The first turn the client steps: 0 in the lobby; later, a [`HostMsg::Load`] follows.
        from: u32,
    },
    /// A turn's complete, ordered command set: a peer steps turn `turn` only once it holds this.
    Turn {
        /// The turn.
        turn: u32,
        /// The input delay in force from this turn on, in turns.
        delay: u32,
        /// Turns `0..agreed` had equal hashes everywhere: a peer may forget what it kept of them.
        agreed: u32,
        /// The commands, in `(turn, player, seq)` order.
        commands: Vec<Command>,
    },
    /// A round-trip probe; the client answers with [`ClientMsg::Pong`].
    Ping {
        /// The probe's number.
        id: u32,
    },
    /// The host wants the client's digest tree leaves after a turn (a desync is being located).
    AskDigests {
        /// The turn.
        turn: u32,
    },
    /// The host wants the client's world after a turn (kept since, as the turn was not agreed).
    AskSnapshot {
        /// The turn.
        turn: u32,
    },
    /// A seat was dropped: its player's units stay, idle.
    Dropped {
        /// The seat.
        seat: u8,
    },
    /// The game is over after `turns` turns.
    End {
        /// Turns played.
        turns: u32,
        /// Whether every hash compared agreed.
        in_sync: bool,
    },
    /// The host closes the connection, and says why.
    Bye {
        /// The reason, one line.
        reason: String,
    },
    /// The client's world is replaced by the host's snapshot that follows in [`HostMsg::Snapshot`]
    /// chunks: the world before turn `from`, whose hash is `hash`. The client steps from `from`
    /// on (turns it held before `from` are dropped). Sent on a rejoin, to a late observer and on
    /// a resync.
    Load {
        /// The first turn to step on the loaded world.
        from: u32,
        /// The loaded world's hash (the host's after turn `from - 1`).
        hash: Digest,
    },
    /// One chunk of the snapshot a [`HostMsg::Load`] announced; `chunk.turn` is its `from`.
    Snapshot(Chunk),
    /// A seat that had left plays again.
    Rejoined {
        /// The seat.
        seat: u8,
    },
    /// An order of the connection's was refused and will never apply.
    Refused {
        /// The order's place among every order the connection sent, from 0.
        order: u32,
        /// Why.
        refusal: Refusal,
    },
    /// What the game waits for: sent every second while it waits (so it also tells a client
    /// the host is alive when no turn closes).
    Waiting(Waiting),
}

/// What a game waits for ([`HostMsg::Waiting`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Waiting {
    /// The lobby: `joined` of `seats` seats are taken.
    Players {
        /// Seats taken.
        joined: u8,
        /// Seats in all.
        seats: u8,
    },
    /// A seat's hashes are late: the game holds its turns for it.
    Seat {
        /// The seat.
        seat: u8,
        /// How long its oldest missing hash is late. `[Units: milliseconds]`
        behind_ms: u64,
        /// When it is dropped, on the same count. `[Units: milliseconds]`
        drops_at_ms: u64,
    },
    /// A desync is being located: the game is stopped while the peers answer.
    Desync {
        /// The turn after which the hashes differed.
        turn: u32,
    },
}

impl std::fmt::Display for Waiting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Players { joined, seats } => write!(f, "waiting for players ({joined} of {seats})"),
            Self::Seat { seat, behind_ms, drops_at_ms } => write!(
                f,
                "waiting for seat {seat}: {}.{} s behind (drops at {}.{} s)",
                behind_ms / 1000,
                behind_ms % 1000 / 100,
                drops_at_ms / 1000,
                drops_at_ms % 1000 / 100
            ),
            Self::Desync { turn } => write!(f, "waiting: a desync after turn {turn} is being located"),
        }
    }
}

/// A message with its sender's per-connection sequence number.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope<M> {
    /// 0 for the connection's first frame, then one more per frame.
    pub seq: u32,
    /// The message.
    pub msg: M,
}

/// Why bytes could not be read as a frame.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    /// The payload is longer than [`MAX_FRAME`].
    #[error("frame of {0} bytes is over the limit of {MAX_FRAME}")]
    Oversized(usize),
    /// The payload is not a message.
    #[error("malformed frame: {0}")]
    Malformed(String),
    /// The payload holds bytes after its message.
    #[error("{0} trailing bytes after the message")]
    Trailing(usize),
    /// Too many frames arrived ahead of a missing one.
    #[error("more than {MAX_EARLY_FRAMES} frames ahead of frame {0}")]
    TooFarAhead(u32),
}

/// The encoding configuration: the snapshots' fixed-width little-endian integers, with the frame limit.
fn config() -> impl bincode::config::Config {
    sim::state_hash::CONFIG.with_limit::<MAX_FRAME>()
}

/// Encodes a message as a frame payload (without the length prefix, which the transport adds).
/// The messages of this module cannot fail to encode (serde derives into a `Vec`) unless one is
/// over [`MAX_FRAME`]; such a frame comes out empty, and its receiver closes the connection
/// ([`try_encode`] says so instead).
pub fn encode<M: Serialize>(envelope: &Envelope<M>) -> Vec<u8> {
    try_encode(envelope).unwrap_or_default()
}

/// Encodes a message as a frame payload, refusing one over [`MAX_FRAME`] (bincode's limit bounds
/// only decoding, so the length is checked here).
///
/// # Errors
/// [`ProtocolError::Oversized`] with the payload's length.
pub fn try_encode<M: Serialize>(envelope: &Envelope<M>) -> Result<Vec<u8>, ProtocolError> {
    let bytes = bincode::serde::encode_to_vec(envelope, sim::state_hash::CONFIG).map_err(|e| ProtocolError::Malformed(e.to_string()))?;
    if bytes.len() > MAX_FRAME {
        return Err(ProtocolError::Oversized(bytes.len()));
    }
    Ok(bytes)
}

/// Decodes a frame payload. Refuses a payload over [`MAX_FRAME`] before reading it, and any byte
/// left after the message.
///
/// # Errors
/// [`ProtocolError`] saying what is wrong.
pub fn decode<M: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<Envelope<M>, ProtocolError> {
    if bytes.len() > MAX_FRAME {
        return Err(ProtocolError::Oversized(bytes.len()));
    }
    let (envelope, used) = bincode::serde::decode_from_slice(bytes, config()).map_err(|e| ProtocolError::Malformed(e.to_string()))?;
    if used != bytes.len() {
        return Err(ProtocolError::Trailing(bytes.len() - used));
    }
    Ok(envelope)
}

/// One end of a connection: numbers what it sends, and gives back what it receives in the
/// sender's order, each frame once.
#[derive(Debug)]
pub struct Link<M> {
    next_out: u32,
    next_in: u32,
    early: BTreeMap<u32, M>,
}

impl<M> Default for Link<M> {
    fn default() -> Self {
        Self { next_out: 0, next_in: 0, early: BTreeMap::new() }
    }
}

impl<M: for<'de> Deserialize<'de>> Link<M> {
    /// Encodes an outgoing message with the next sequence number (an empty frame, which its
    /// receiver refuses, for a message over [`MAX_FRAME`]: see [`Link::try_encode`]).
    pub fn encode<O: Serialize>(&mut self, msg: O) -> Vec<u8> {
        self.try_encode(msg).unwrap_or_default()
    }

    /// Encodes an outgoing message with the next sequence number; a message over [`MAX_FRAME`]
    /// takes no number and is not sent.
    ///
    /// # Errors
    /// [`ProtocolError::Oversized`].
    pub fn try_encode<O: Serialize>(&mut self, msg: O) -> Result<Vec<u8>, ProtocolError> {
        let bytes = try_encode(&Envelope { seq: self.next_out, msg })?;
        self.next_out += 1;
        Ok(bytes)
    }

    /// Reads an incoming frame and returns the messages now in order: none when it came early or
    /// is a copy of one already read, several when it filled a gap.
    ///
    /// # Errors
    /// A [`ProtocolError`]: the connection should be closed.
    pub fn accept(&mut self, bytes: &[u8]) -> Result<Vec<M>, ProtocolError> {
        let envelope: Envelope<M> = decode(bytes)?;
        // Sequence numbers are compared in the order they were sent; a frame from before the
        // expected one is a copy.
        if envelope.seq < self.next_in {
            return Ok(Vec::new());
        }
        if envelope.seq > self.next_in {
            if self.early.len() >= MAX_EARLY_FRAMES {
                return Err(ProtocolError::TooFarAhead(self.next_in));
            }
            self.early.entry(envelope.seq).or_insert(envelope.msg);
            return Ok(Vec::new());
        }
        let mut out = vec![envelope.msg];
        self.next_in += 1;
        while let Some(msg) = self.early.remove(&self.next_in) {
            out.push(msg);
            self.next_in += 1;
        }
        Ok(out)
    }
}
