//! The settings of a game: fixed when the world is made, recorded in replays and snapshots, and
//! hashed with the state.

use serde::{Deserialize, Serialize};

use crate::motion::MotionSettings;

/// Default turn length. `[Units: milliseconds]`
pub const DEFAULT_TURN_MS: u32 = 200;

/// Default of [`Settings::max_paths_per_turn`]: high enough that [`DEFAULT_LONG_SEARCH_BUDGET`]
/// binds first on the reference world.
pub const DEFAULT_MAX_PATHS_PER_TURN: u16 = 1024;

/// Default of [`Settings::long_search_budget`], chosen by measurement on
/// `examples/scenarios/ten-thousand.json` (BENCHMARKS.md). `[Units: work]`
pub const DEFAULT_LONG_SEARCH_BUDGET: u32 = 12_000;

/// Largest [`Settings::long_search_budget`]. `[Units: work]`
pub const MAX_LONG_SEARCH_BUDGET: u32 = 1 << 30;

/// The work charged for a long-range search besides the nodes it expanded: the goal raster, the
/// hierarchy's reachability check and the path's string pulling, which every search pays, so
/// that searches which expand few nodes (or none, an escape) still fill the budget. `[Units: work]`
pub const SEARCH_BASE_WORK: u32 = 8;

/// Game settings: part of the replay header, fixed for a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// Turn length. `[Units: milliseconds] [Limit: 1..=10000]`
    pub turn_ms: u32,
    /// Players 1..=players may send commands (player 0 is the world itself).
    pub players: u8,
    /// Seed of the simulation's random number generator.
    pub seed: u64,
    /// Most long-range searches made in one turn, an upper bound beside
    /// [`Settings::long_search_budget`] (0 A.D.'s `MaxSameTurnMoves` is 64; the default is
    /// [`DEFAULT_MAX_PATHS_PER_TURN`], so the work budget decides); requests that share a search
    /// (docs/pathfinding-rules.md, "Shared searches") do not count, and the rest wait, in order,
    /// for the next turns. `[Limit: 1..=65535]`
    pub max_paths_per_turn: u16,
    /// The long-range search work of one turn (docs/pathfinding-rules.md, "The per-turn search
    /// budget"): requests are taken in order until the work of the searches taken reaches it (the
    /// search that crosses it is kept, so a turn always makes progress); the rest wait, in order,
    /// for the next turns. A search's work is the nodes it expanded, plus one for every 8 navcell
    /// steps of its path, plus [`SEARCH_BASE_WORK`]. `[Units: work] [Limit: 1..=2^30]`
    pub long_search_budget: u32,
    /// The constants of local movement.
    pub motion: MotionSettings,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            turn_ms: DEFAULT_TURN_MS,
            players: 8,
            seed: 0,
            max_paths_per_turn: DEFAULT_MAX_PATHS_PER_TURN,
            long_search_budget: DEFAULT_LONG_SEARCH_BUDGET,
            motion: MotionSettings::default(),
        }
    }
}
