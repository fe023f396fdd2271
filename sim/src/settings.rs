//! The settings of a game: fixed when the world is made, recorded in replays and snapshots, and
//! hashed with the state.

use serde::{Deserialize, Serialize};

use crate::motion::MotionSettings;

/// Default turn length. `[Units: milliseconds]`
pub const DEFAULT_TURN_MS: u32 = 200;

/// Game settings: part of the replay header, fixed for a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// Turn length. `[Units: milliseconds] [Limit: 1..=10000]`
    pub turn_ms: u32,
    /// Players 1..=players may send commands (player 0 is the world itself).
    pub players: u8,
    /// Seed of the simulation's random number generator.
    pub seed: u64,
    /// Most long-range searches made in one turn (0 A.D.'s `MaxSameTurnMoves` is 64); requests
    /// that share a search (docs/pathfinding-rules.md, "Shared searches") do not count, and the
    /// rest wait, in order, for the next turns. Bounds the worst turn. `[Limit: 1..=65535]`
    pub max_paths_per_turn: u16,
    /// The constants of local movement.
    pub motion: MotionSettings,
}

impl Default for Settings {
    fn default() -> Self {
        Self { turn_ms: DEFAULT_TURN_MS, players: 8, seed: 0, max_paths_per_turn: 64, motion: MotionSettings::default() }
    }
}
