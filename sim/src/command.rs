//! Commands: everything that changes the world from outside, as plain serde data with explicit
//! integer widths, and the events a turn reports.
//!
//! A command carries its `(turn, player, seq)`; a turn applies its commands in that total order,
//! whatever order they arrived in. A command the world cannot carry out is rejected with a reason
//! (an [`Event::Rejected`]) and changes nothing.

use pathing::{Fixed, WorldPos};
use serde::{Deserialize, Serialize};

use crate::formation::{FormationId, Layout};
use crate::ids::EntityId;
use crate::waypoint::{PriorityEntry, WaypointNet};

/// A player slot. Player 0 is the world itself (scenario setup, triggers).
pub type PlayerId = u8;

/// One command, stamped with when it applies and who sent it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Command {
    /// The turn it applies in.
    pub turn: u32,
    /// Who sent it.
    pub player: PlayerId,
    /// The sender's sequence number; orders a player's commands within a turn.
    pub seq: u32,
    /// What to do.
    pub kind: CommandKind,
}

impl Command {
    /// The total order commands of a turn are applied in.
    pub fn order_key(&self) -> (u32, PlayerId, u32) {
        (self.turn, self.player, self.seq)
    }
}

/// Where a move order goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GoalSpec {
    /// A point.
    Point(WorldPos),
    /// Anywhere within `radius` of `center` (a unit in range of a target).
    Circle {
        /// Centre.
        center: WorldPos,
        /// Radius. `[Units: metres]`
        radius: Fixed,
    },
    /// Anywhere in an axis-aligned square of half-size `half` (a building's footprint plus range).
    Square {
        /// Centre.
        center: WorldPos,
        /// Half-size. `[Units: metres]`
        half: Fixed,
    },
    /// Within a range band of a target (an attack or gather range): at most `max` and at least
    /// `min` from the target's obstruction, with 0 A.D.'s range constraints (docs/motion-rules.md, "Range orders")
    /// (ranges measured between the edges of the two shapes, plus ε = 1/8 m; see
    /// "What a unit plans for" in the path phase, `sim/src/world/plan.rs`). The target is read where it is each time the unit plans, so a
    /// unit follows a moving target; the order fails when the target is gone.
    Range {
        /// What to keep in range.
        target: Target,
        /// Minimum range (a ballista's dead zone); 0 for none. `[Units: metres] [Limit: 0..=max]`
        min: Fixed,
        /// Maximum range. `[Units: metres] [Limit: 0..=256]`
        max: Fixed,
    },
}

/// What a range order is relative to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Target {
    /// A unit (its obstruction square).
    Unit(EntityId),
    /// A static obstruction, by id (a building).
    Obstruction(u32),
}

impl GoalSpec {
    /// A point in the goal, where a unit aims its last waypoint; `None` for a range order, whose
    /// goal depends on where its target is.
    pub fn anchor(&self) -> Option<WorldPos> {
        match *self {
            GoalSpec::Point(p) => Some(p),
            GoalSpec::Circle { center, .. } | GoalSpec::Square { center, .. } => Some(center),
            GoalSpec::Range { .. } => None,
        }
    }
}

/// An obstruction square in the editor form `(x, z, w, h, θ)`: centre, full sizes and the angle in
/// degrees anticlockwise from the x axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SquareSpec {
    /// Centre x. `[Units: metres]`
    pub x: Fixed,
    /// Centre z. `[Units: metres]`
    pub z: Fixed,
    /// Width along the square's own x axis. `[Units: metres]`
    pub w: Fixed,
    /// Height along its own z axis. `[Units: metres]`
    pub h: Fixed,
    /// Angle. `[Units: degrees]`
    pub degrees: Fixed,
}

/// What a command does.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CommandKind {
    /// Creates `count` units of a class for the sending player, placed at the first valid
    /// positions around `at` (spawn rings, as from a building of half-size 0).
    Spawn {
        /// Passability class index.
        class: u8,
        /// Where.
        at: WorldPos,
        /// How many. `[Limit: 1..=256]`
        count: u16,
        /// Half-size of each unit's obstruction square. `[Units: metres] [Limit: (0, 8]]`
        radius: Fixed,
        /// Speed. `[Units: metres per second] [Limit: (0, 64]]`
        speed: Fixed,
    },
    /// Orders units to move; `queue` appends to their orders instead of replacing them.
    Move {
        /// The units (each must be live and the sender's).
        units: Vec<EntityId>,
        /// Where.
        goal: GoalSpec,
        /// Append instead of replace.
        queue: bool,
    },
    /// Removes units from the world (killed, garrisoned, converted away); their ids become stale.
    Remove {
        /// The units.
        units: Vec<EntityId>,
    },
    /// Clears units' orders and stops them where they stand.
    Stop {
        /// The units.
        units: Vec<EntityId>,
    },
    /// Places a static obstruction (a building, wall or tree); the world assigns its id, reported by
    /// [`Event::ObstructionPlaced`].
    PlaceObstruction {
        /// The square.
        square: SquareSpec,
        /// Which classes it blocks (`pathing::passability::ObstructionFlags`).
        flags: u8,
    },
    /// Places a building: the footprint must pass the building placement check for `class` (a
    /// foundation class such as `building-land`), then it becomes an obstruction (blocking
    /// pathfinding and foundations) and every unit standing where it would block them, except
    /// `builder`, is ordered out of the way (foundation dispersal).
    PlaceBuilding {
        /// The building's passability class index.
        class: u8,
        /// The footprint.
        square: SquareSpec,
        /// The unit that builds it, which never has to move.
        builder: Option<EntityId>,
    },
    /// Changes what an obstruction blocks (a gate opened for its owner's units is a gate that no
    /// longer blocks pathfinding).
    SetObstructionFlags {
        /// Its id.
        id: u32,
        /// The new flags.
        flags: u8,
    },
    /// Removes an obstruction by id.
    RemoveObstruction {
        /// Its id.
        id: u32,
    },
    /// Opens or closes a navigation area (a door, a gate).
    SetArea {
        /// The area's name.
        name: String,
        /// Open or closed.
        available: bool,
    },
    /// Sets the heights of a rectangle of terrain vertices, row by row (x fastest).
    EditTerrain {
        /// First vertex column.
        vx: u32,
        /// First vertex row.
        vz: u32,
        /// Vertices per row. `[Limit: 1..=256]`
        width: u32,
        /// The heights; `heights.len()` is a multiple of `width`. `[Limit: ≤ 65536 values]`
        heights: Vec<Fixed>,
    },
    /// Makes a new formation of the sender's units ([`crate::formation`]), reported by
    /// [`Event::FormationCreated`]; the units leave any formation they were in and walk to their
    /// slots round where they stand on average, facing north.
    FormGroup {
        /// The members (each must be live and the sender's; repeats count once).
        /// `[Limit: 1..=256 distinct units]`
        units: Vec<EntityId>,
        /// How they stand.
        layout: Layout,
    },
    /// Moves a formation: a path for it is planned, generalised and followed as the formation
    /// seeds describe; [`Event::FormationArrived`] when its members stand in their slots at the end.
    MoveFormation {
        /// The sender's formation.
        formation: FormationId,
        /// Where: a point, circle or square goal (range goals are refused).
        goal: GoalSpec,
    },
    /// Changes a formation's layout; a standing formation re-forms where it stands.
    SetLayout {
        /// The sender's formation.
        formation: FormationId,
        /// The new layout.
        layout: Layout,
    },
    /// Disbands a formation: its members stop where they stand and are ordinary units again.
    Disband {
        /// The sender's formation.
        formation: FormationId,
    },
    /// Sets (or, with no points, removes) the waypoint network of a class ([`crate::waypoint`]):
    /// map data, so only the world itself (player 0) sends it. Every priority table of the class
    /// is dropped.
    SetWaypoints {
        /// The network.
        net: WaypointNet,
    },
    /// Changes the sender's waypoint priorities for its units of a class ([`crate::waypoint`],
    /// "Priorities"): `reset` first makes every waypoint open at no extra cost, then each entry
    /// sets one waypoint.
    SetWaypointPriorities {
        /// The class (it must have a waypoint network).
        class: u8,
        /// Start again from a neutral table.
        reset: bool,
        /// The changes, applied in order. `[Limit: ≤ MAX_NET_WAYPOINTS entries]`
        entries: Vec<PriorityEntry>,
    },
    /// Orders units to a far point along a route over their class's waypoint network, or locally
    /// when no route applies ([`crate::waypoint`], "Moving by waypoints"); `queue` appends the
    /// route's orders instead of replacing the units' orders.
    MoveByWaypoints {
        /// The units (each must be live and the sender's).
        units: Vec<EntityId>,
        /// Where.
        goal: WorldPos,
        /// Append instead of replace.
        queue: bool,
    },
}

/// Why a command was refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RejectReason {
    /// Its turn is not the turn being stepped.
    WrongTurn,
    /// The player is not in the game.
    UnknownPlayer,
    /// An entity id is stale or was never allocated.
    UnknownEntity(EntityId),
    /// The entity belongs to another player.
    NotOwned(EntityId),
    /// A class index names no class, or a class that units cannot have.
    BadClass,
    /// A value is outside its documented limits.
    OutOfRange,
    /// No valid position was found (spawning) or the position is off the map.
    NoRoom,
    /// The world refused the change; the text says why.
    World(String),
    /// A building may not go there; the text says why.
    Placement(String),
    /// No formation has this id (never made, or disbanded).
    UnknownFormation(FormationId),
    /// The formation belongs to another player.
    FormationNotOwned(FormationId),
    /// A formation may have at most `max` members.
    TooManyMembers {
        /// Distinct units in the command.
        count: u32,
        /// The limit, [`crate::formation::MAX_MEMBERS`].
        max: u32,
    },
    /// Only the world itself (player 0) may send this command (map data).
    WorldOnly,
    /// The class has no waypoint network.
    NoWaypointNet(u8),
}

/// Something that happened during a turn, in the order it happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Event {
    /// A command was refused and changed nothing.
    Rejected {
        /// Its `(turn, player, seq)`.
        command: (u32, PlayerId, u32),
        /// Why.
        reason: RejectReason,
    },
    /// A unit was created.
    Spawned {
        /// The new unit.
        unit: EntityId,
    },
    /// An obstruction was placed.
    ObstructionPlaced {
        /// Its id.
        id: u32,
    },
    /// A unit reached the goal of its current order.
    Arrived {
        /// The unit.
        unit: EntityId,
    },
    /// A unit's path stops short of its goal (unreachable: it heads for the nearest reachable
    /// navcell instead).
    PathPartial {
        /// The unit.
        unit: EntityId,
    },
    /// A unit could not move this turn (another unit or a new obstruction in the way).
    Blocked {
        /// The unit.
        unit: EntityId,
    },
    /// A unit gave up its order after failing to make progress.
    Failed {
        /// The unit.
        unit: EntityId,
    },
    /// A unit was ordered out of the way of a new building.
    Dispersed {
        /// The unit.
        unit: EntityId,
    },
    /// A unit planned a short-range detour (around units in the way, or a minimum-range retreat).
    Detour {
        /// The unit.
        unit: EntityId,
    },
    /// A standing unit was asked to step aside for a unit walking into it.
    Nudged {
        /// The unit that steps aside.
        unit: EntityId,
    },
    /// A unit stood on an impassable navcell and was moved off it.
    Unstuck {
        /// The unit.
        unit: EntityId,
    },
    /// A formation was made ([`CommandKind::FormGroup`]).
    FormationCreated {
        /// Its id.
        formation: FormationId,
    },
    /// A formation's members stand in their slots at the end of a move or of forming up (those
    /// that could not get there stand where they stopped).
    FormationArrived {
        /// The formation.
        formation: FormationId,
    },
    /// A formation's path stops short of its goal (unreachable for the formation's clearance, or
    /// beyond the search budget): it heads for the nearest reachable point instead, and its
    /// [`Event::FormationArrived`] then means it stands there.
    FormationPathPartial {
        /// The formation.
        formation: FormationId,
    },
    /// A formation ceased to exist: disbanded, or its last member left it.
    FormationDisbanded {
        /// The formation.
        formation: FormationId,
    },
    /// A unit was given the orders of a route over its waypoint network
    /// ([`CommandKind::MoveByWaypoints`]).
    WaypointRoute {
        /// The unit.
        unit: EntityId,
        /// The waypoints of its route; 0 when it moves locally instead.
        waypoints: u32,
    },
}
