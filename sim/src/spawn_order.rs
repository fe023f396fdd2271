//! A spawn order: the units of a spawn from a building that did not fit round it yet and wait, in
//! the world's state, for room (the rules are in `world/spawning.rs`).

use pathing::{Fixed, ObstructionId, PassClass};
use serde::{Deserialize, Serialize};

use crate::ids::PlayerId;

/// A spawn from a building whose units did not all fit round it: the units still to come.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpawnOrder {
    /// Its id, in the order the orders were made.
    pub id: u32,
    /// Whose units.
    pub player: PlayerId,
    /// The building's obstruction id.
    pub building: ObstructionId,
    /// The units' passability class.
    pub class: PassClass,
    /// Units still to place. `[Limit: 1..=MAX_SPAWN_COUNT]`
    pub remaining: u16,
    /// The units' half-size. `[Units: metres] [Limit: (0, 8]]`
    pub radius: Fixed,
    /// The units' speed. `[Units: metres per second] [Limit: (0, 64]]`
    pub speed: Fixed,
    /// The units' turn rate, the game's default already applied.
    /// `[Units: degrees per second] [Limit: 1..=3600]`
    pub turn_rate: Fixed,
}
