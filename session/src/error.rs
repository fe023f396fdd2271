//! The errors of a session that are not about one frame's bytes ([`crate::ProtocolError`]): a host
//! that cannot start, a snapshot's chunks that break the rules, a kept turn that cannot be
//! simulated again, the system's random source.

use sim::SetupError;
use sim::snapshot::SnapshotError;

/// Why a session cannot start, take a snapshot chunk or simulate a kept turn again.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The scenario's world cannot be built.
    #[error("{source}")]
    World {
        /// Why.
        #[from]
        source: SetupError,
    },
    /// A host configured with no seat or more seats than the scenario has players.
    #[error("{seats} seats for a scenario of {players} players")]
    Seats {
        /// The seats configured (one per token).
        seats: usize,
        /// The scenario's players.
        players: u8,
    },
    /// The host's replay cannot be started (its header is larger than a replay allows).
    #[error("{source}")]
    Replay {
        /// Why.
        #[from]
        source: std::io::Error,
    },
    /// The system has no random source to give seat tokens from.
    #[error("the system's random source: {source}")]
    Random {
        /// Why.
        source: getrandom::Error,
    },
    /// A snapshot chunk out of order.
    #[error("snapshot chunk {index} where chunk {due} was due")]
    ChunkOrder {
        /// The chunk's index.
        index: u32,
        /// The index that was due.
        due: u32,
    },
    /// A snapshot announced in no chunk or more chunks than [`crate::MAX_CHUNKS`].
    #[error("a snapshot of {count} chunks, the limit is {}", crate::MAX_CHUNKS)]
    ChunkCount {
        /// The chunks announced.
        count: u32,
    },
    /// A snapshot announced larger than [`crate::MAX_SNAPSHOT`].
    #[error("a snapshot of {total} bytes, the limit is {}", crate::MAX_SNAPSHOT)]
    SnapshotSize {
        /// The bytes announced.
        total: u64,
    },
    /// A snapshot chunk larger than [`crate::CHUNK_BYTES`].
    #[error("a snapshot chunk of {len} bytes, the limit is {}", crate::CHUNK_BYTES)]
    ChunkSize {
        /// The chunk's bytes.
        len: usize,
    },
    /// A chunk whose turn, count or total differ from the first chunk's.
    #[error("a snapshot chunk of another turn, count or total than the first")]
    ChunkMismatch,
    /// Chunks that add up to more bytes than announced.
    #[error("snapshot chunks of more than the {total} bytes announced")]
    ChunkOverrun {
        /// The bytes announced.
        total: u64,
    },
    /// Chunks that add up to fewer bytes than announced.
    #[error("snapshot chunks of {len} bytes, {total} announced")]
    ChunkShort {
        /// The bytes that arrived.
        len: usize,
        /// The bytes announced.
        total: u64,
    },
    /// A turn the recorder no longer keeps (or not yet).
    #[error("turn {turn} is no longer kept")]
    NotKept {
        /// The turn asked for.
        turn: u32,
    },
    /// No kept snapshot precedes the turn.
    #[error("no snapshot before turn {turn}")]
    NoSnapshot {
        /// The turn asked for.
        turn: u32,
    },
    /// The kept snapshot does not load.
    #[error("the kept snapshot before turn {turn}: {source}")]
    KeptSnapshot {
        /// The first turn after the snapshot.
        turn: u32,
        /// Why.
        source: SnapshotError,
    },
}
