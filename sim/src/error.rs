//! The one error type of the crate's fallible calls that are not a command's refusal
//! ([`crate::RejectReason`]), a world's set-up ([`crate::SetupError`]) or a snapshot's bytes
//! ([`crate::snapshot::SnapshotError`]).

/// Why a call of the simulation failed; each variant's text says what, naming the value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The path worker threads could not start ([`crate::World::set_threads`]).
    #[error("{message}")]
    Threads {
        /// The thread pool's own words.
        message: String,
    },
    /// An invariant of the world is broken ([`crate::World::check_invariants`]).
    #[error("{message}")]
    Invariant {
        /// Which, and where.
        message: String,
    },
    /// A game value's bytes do not decode as its type, or are too long ([`crate::rules::decode`],
    /// [`crate::rules::decode_snapshot`]).
    #[error("{message}")]
    GameValue {
        /// Which value, and what did not fit.
        message: String,
    },
    /// A setting is outside its documented limits ([`crate::MotionSettings::check`]).
    #[error("{message}")]
    Settings {
        /// The setting, named, and its limits.
        message: String,
    },
    /// An entity allocator's invariants are broken ([`crate::EntityAllocator::check`]).
    #[error("{message}")]
    Ids {
        /// The first broken invariant.
        message: String,
    },
}
