//! The deterministic, turn-based, fixed-point world of the Phalanx lockstep core.
//!
//! Every peer of a multiplayer game runs this simulation from the same commands and must reach
//! bit-identical state. This crate holds the pieces that make that possible; the world, commands and
//! the turn loop build on them:
//!
//! - [`EntityId`] and [`EntityAllocator`]: generational entity handles allocated in a fixed order,
//!   so a stale id is detected, never aliased, and allocation continues identically after a
//!   snapshot is loaded.
//! - [`SimRng`]: the one random number generator of the simulation, an integer PCG kept in state.
//! - [`state_hash`]: the canonical encoding (bincode, fixed-width little-endian) and blake3 digests
//!   every turn's state hash is built from.
//!
//! ```
//! use sim::{EntityAllocator, SimRng, state_hash};
//!
//! let mut ids = EntityAllocator::default();
//! let a = ids.allocate();
//! ids.free(a);
//! let b = ids.allocate();
//! assert_eq!(a.index, b.index);
//! assert_ne!(a, b, "the slot is reused with a new generation");
//! assert!(!ids.is_live(a));
//!
//! let mut rng = SimRng::new(42);
//! let roll = rng.below(6);
//! assert!(roll < 6);
//!
//! let digest = state_hash::digest("rng", &rng);
//! assert_eq!(digest, state_hash::digest("rng", &rng.clone()));
//! ```
#![deny(clippy::float_arithmetic)]
#![forbid(unsafe_code)]

pub mod command;
pub mod digest_tree;
mod ids;
pub mod motion;
mod rng;
pub mod snapshot;
pub mod state_hash;
pub mod world;

pub use ids::{EntityAllocator, EntityId};
pub use rng::SimRng;
