//! The bound on an order: its encoded size and the work it causes (units named, units spawned,
//! area covered, terrain edited), checked by the host when the order arrives, and the typed
//! [`Refusal`] its sender is told of (`docs/protocol.md`, "Orders and their bounds").
//!
//! Every order is bounded on its own ([`check_order`]), and every seat's orders of one turn
//! together ([`SeatTurn`]): the seats' budgets add up to less than a frame, so a turn's `Turn`
//! message always fits in one frame, whatever the seats send.

use serde::{Deserialize, Serialize};
use sim::{CommandKind, GoalSpec, PlayerId};

use crate::protocol::{MAX_COMMANDS_PER_TURN, MAX_FRAME};

/// The most encoded bytes of one order. `[Units: bytes]`
pub const MAX_ORDER_BYTES: usize = 64 * 1024;
/// The most unit ids one order names (a move, stop, removal, formation, builder).
pub const MAX_ORDER_UNITS: usize = 1024;
/// The most unit ids one seat's orders name in one turn.
pub const MAX_TURN_UNITS: usize = 4096;
/// The most units one seat's orders spawn in one turn (a spawn finds room ring by ring, so its
/// cost grows with the count: 64 spawns of 4,096 units stalled every peer past the lag limit).
pub const MAX_TURN_SPAWNS: u32 = 256;
/// The longest side of a placed obstruction or building, or of a square goal. `[Units: metres]`
pub const MAX_AREA_SIDE_M: i64 = 256;
/// The most terrain heights one seat's orders set in one turn.
pub const MAX_TURN_TERRAIN: usize = 4096;
/// The encoded bytes of every seat's orders of one turn together; the rest of a frame is left to
/// the scenario's own commands (script, bots) and the message's other fields. `[Units: bytes]`
pub const TURN_ORDER_BYTES: usize = MAX_FRAME / 4 * 3;

/// Why the host refused an order: it was never applied, and its sender is told ([`crate::HostMsg::Refused`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum Refusal {
    /// The order names a player other than the sender's seat.
    #[error("it names player {player}, not the sender's")]
    OtherPlayer {
        /// The player named.
        player: u8,
    },
    /// An observer plays no player.
    #[error("an observer plays no player")]
    Observer,
    /// The order's encoded size is over [`MAX_ORDER_BYTES`].
    #[error("an order of {bytes} bytes, the limit is {limit}")]
    TooLarge {
        /// Its encoded size.
        bytes: u64,
        /// [`MAX_ORDER_BYTES`].
        limit: u64,
    },
    /// The order names more than [`MAX_ORDER_UNITS`] units.
    #[error("it names {units} units, the limit is {limit} an order")]
    TooManyUnits {
        /// Units named.
        units: u64,
        /// [`MAX_ORDER_UNITS`].
        limit: u64,
    },
    /// The order covers a square with a side over [`MAX_AREA_SIDE_M`].
    #[error("it covers a side of {metres} m, the limit is {limit} m")]
    AreaTooLarge {
        /// The longest side, rounded up. `[Units: metres]`
        metres: i64,
        /// [`MAX_AREA_SIDE_M`].
        limit: i64,
    },
    /// Map data only the world itself sends (a waypoint network).
    #[error("it is map data, which only the world sends")]
    WorldOnly,
    /// The seat's orders of this turn would be over one of its per-turn budgets.
    #[error("seat's turn {turn} is full: {what}")]
    TurnFull {
        /// The turn it would have applied on.
        turn: u32,
        /// Which budget: commands, bytes, units named, units spawned or terrain heights.
        what: String,
    },
}

/// The work an order causes, as its per-turn budgets count it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// Encoded bytes. `[Units: bytes]`
    pub bytes: usize,
    /// Unit ids named.
    pub units: usize,
    /// Units spawned.
    pub spawns: u32,
    /// Terrain heights set.
    pub terrain: usize,
}

/// The longest side of a square, in whole metres rounded up (fixed-point values of any size).
fn side_m(w: pathing::Fixed, h: pathing::Fixed) -> i64 {
    let bits = w.to_bits().unsigned_abs().max(h.to_bits().unsigned_abs());
    i64::try_from(bits.div_ceil(1u64 << pathing::FIXED_FRAC_BITS)).unwrap_or(i64::MAX)
}

/// The unit ids an order names.
fn units_named(kind: &CommandKind) -> usize {
    match kind {
        CommandKind::Move { units, .. }
        | CommandKind::Remove { units }
        | CommandKind::Stop { units }
        | CommandKind::FormGroup { units, .. }
        | CommandKind::MoveByWaypoints { units, .. } => units.len(),
        CommandKind::PlaceBuilding { builder, .. } => usize::from(builder.is_some()),
        _ => 0,
    }
}

/// Checks one order on its own: its size, the units it names, the area it covers and whether a
/// seat may send it at all; returns the work it causes for the per-turn budgets.
///
/// # Errors
/// The [`Refusal`] to send back.
pub fn check_order(kind: &CommandKind) -> Result<Work, Refusal> {
    let bytes = bincode::serde::encode_to_vec(kind, sim::state_hash::CONFIG).map_or(usize::MAX, |b| b.len());
    if bytes > MAX_ORDER_BYTES {
        return Err(Refusal::TooLarge { bytes: bytes as u64, limit: MAX_ORDER_BYTES as u64 });
    }
    let units = units_named(kind);
    if units > MAX_ORDER_UNITS {
        return Err(Refusal::TooManyUnits { units: units as u64, limit: MAX_ORDER_UNITS as u64 });
    }
    let area = match kind {
        CommandKind::PlaceObstruction { square, .. } | CommandKind::PlaceBuilding { square, .. } => Some(side_m(square.w, square.h)),
        CommandKind::Move { goal: GoalSpec::Square { half, .. }, .. }
        | CommandKind::MoveFormation { goal: GoalSpec::Square { half, .. }, .. } => Some(side_m(*half, *half).saturating_mul(2)),
        CommandKind::Move { goal: GoalSpec::Circle { radius, .. }, .. }
        | CommandKind::MoveFormation { goal: GoalSpec::Circle { radius, .. }, .. } => Some(side_m(*radius, *radius).saturating_mul(2)),
        _ => None,
    };
    if let Some(metres) = area.filter(|m| *m > MAX_AREA_SIDE_M) {
        return Err(Refusal::AreaTooLarge { metres, limit: MAX_AREA_SIDE_M });
    }
    if matches!(kind, CommandKind::SetWaypoints { .. }) {
        return Err(Refusal::WorldOnly);
    }
    let spawns = match kind {
        CommandKind::Spawn { count, .. } | CommandKind::SpawnFromBuilding { count, .. } => u32::from(*count),
        _ => 0,
    };
    let terrain = match kind {
        CommandKind::EditTerrain { heights, .. } => heights.len(),
        _ => 0,
    };
    Ok(Work { bytes, units, spawns, terrain })
}

/// What one seat's orders of one turn have used of the turn's budgets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SeatTurn {
    /// Orders stamped.
    pub commands: usize,
    /// The work of those orders.
    pub used: Work,
}

impl SeatTurn {
    /// Adds an order's work if it fits every budget of a turn `turn` shared by `seats` seats.
    ///
    /// # Errors
    /// [`Refusal::TurnFull`] naming the budget it would break.
    pub fn take(&mut self, work: Work, turn: u32, seats: usize) -> Result<(), Refusal> {
        let byte_budget = TURN_ORDER_BYTES / seats.max(1);
        let full = |what: String| Err(Refusal::TurnFull { turn, what });
        if self.commands >= MAX_COMMANDS_PER_TURN {
            return full(format!("{MAX_COMMANDS_PER_TURN} commands"));
        }
        if self.used.bytes + work.bytes > byte_budget {
            return full(format!("{} bytes of orders, the seat's budget is {byte_budget}", self.used.bytes + work.bytes));
        }
        if self.used.units + work.units > MAX_TURN_UNITS {
            return full(format!("{} units named, the limit is {MAX_TURN_UNITS}", self.used.units + work.units));
        }
        if self.used.spawns + work.spawns > MAX_TURN_SPAWNS {
            return full(format!("{} units spawned, the limit is {MAX_TURN_SPAWNS}", self.used.spawns + work.spawns));
        }
        if self.used.terrain + work.terrain > MAX_TURN_TERRAIN {
            return full(format!("{} terrain heights, the limit is {MAX_TURN_TERRAIN}", self.used.terrain + work.terrain));
        }
        self.commands += 1;
        self.used.bytes += work.bytes;
        self.used.units += work.units;
        self.used.spawns += work.spawns;
        self.used.terrain += work.terrain;
        Ok(())
    }
}

/// Checks an order of `seat` against the player it names.
///
/// # Errors
/// [`Refusal::OtherPlayer`] when it names another player.
pub fn check_player(seat: u8, player: PlayerId) -> Result<(), Refusal> {
    if player.0 == seat { Ok(()) } else { Err(Refusal::OtherPlayer { player: player.0 }) }
}
