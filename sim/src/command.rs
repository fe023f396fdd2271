//! Commands: everything that changes the world from outside, as plain serde data with explicit
//! integer widths, and the events a turn reports.
//!
//! A command carries its `(turn, player, seq)`; a turn applies its commands in that total order,
//! whatever order they arrived in. A command the world cannot carry out is rejected with a reason
//! (an [`Event::Rejected`]) and changes nothing.

use pathing::{Fixed, ObstructionId, PassClass, WorldPos};
use serde::{Deserialize, Serialize};

use crate::formation::{FormationId, Layout};
use crate::goal::Coordinates;
pub use crate::goal::{GoalSpec, RangeKind, Target};
use crate::ids::EntityId;
use crate::waypoint::{PriorityEntry, WaypointNet};

pub use crate::ids::PlayerId;

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
    /// positions around `at` (spawn rings, as from a building of half-size 0, up to
    /// [`crate::POINT_SPAWN_RINGS`] of them): as many as fit, the others counted in
    /// [`Event::SpawnShort`]; refused (`NoRoom`) only when not one fits.
    Spawn {
        /// Passability class index.
        class: PassClass,
        /// Where.
        at: WorldPos,
        /// How many. `[Limit: 1..=4096]`
        count: u16,
        /// Half-size of each unit's obstruction square. `[Units: metres] [Limit: (0, 8]]`
        radius: Fixed,
        /// Speed. `[Units: metres per second] [Limit: (0, 64]]`
        speed: Fixed,
        /// How fast each unit turns to face its way ([`crate::Unit::turn_rate`]); `None`
        /// takes the game's [`crate::MotionSettings::turn_rate`].
        /// `[Units: degrees per second] [Limit: 1..=3600]`
        turn_rate: Option<Fixed>,
    },
    /// Produces `count` units of a class for the sending player at a building (any obstruction,
    /// by id): each appears on the first free spawn point round its footprint; those that do not
    /// fit wait in a spawn order ([`Event::SpawnWaiting`]) that tries again every turn
    /// (`sim/src/world/spawning.rs`, docs/motion-rules.md "Spawning").
    SpawnFromBuilding {
        /// The building's obstruction id.
        building: ObstructionId,
        /// Passability class index.
        class: PassClass,
        /// How many. `[Limit: 1..=4096]`
        count: u16,
        /// Half-size of each unit's obstruction square. `[Units: metres] [Limit: (0, 8]]`
        radius: Fixed,
        /// Speed. `[Units: metres per second] [Limit: (0, 64]]`
        speed: Fixed,
        /// How fast each unit turns to face its way ([`crate::Unit::turn_rate`]); `None`
        /// takes the game's [`crate::MotionSettings::turn_rate`].
        /// `[Units: degrees per second] [Limit: 1..=3600]`
        turn_rate: Option<Fixed>,
    },
    /// Cancels the sender's waiting spawn orders at a building ([`Event::SpawnCancelled`] each).
    CancelSpawns {
        /// The building's obstruction id.
        building: ObstructionId,
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
    /// pathfinding and foundations) and every unit standing where it would block them is ordered
    /// out of the way (foundation dispersal); `builder`, if it stands there, is given a
    /// [`RangeKind::Build`] order to the building instead, which leaves it beside the footprint.
    PlaceBuilding {
        /// The building's passability class index.
        class: PassClass,
        /// The footprint.
        square: SquareSpec,
        /// The unit that builds it: it stays where it is unless the footprint would cover it, and
        /// then walks to build range.
        builder: Option<EntityId>,
    },
    /// Changes what an obstruction blocks (a gate opened for its owner's units is a gate that no
    /// longer blocks pathfinding).
    SetObstructionFlags {
        /// Its id.
        id: ObstructionId,
        /// The new flags.
        flags: u8,
    },
    /// Removes an obstruction by id.
    RemoveObstruction {
        /// Its id.
        id: ObstructionId,
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
        class: PassClass,
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
    /// A command of one of the game's rule modules ([`crate::rules`]): the module's name and the
    /// command's canonical bytes, made by [`crate::rules::command`]. A world without a module of
    /// that name refuses it ([`RejectReason::NoRules`]).
    Game {
        /// The module's [`crate::rules::Rules::NAME`]. `[Limit: 1..=32 bytes]`
        rules: String,
        /// The encoded command. `[Limit: ≤ crate::rules::MAX_GAME_COMMAND bytes]`
        payload: Vec<u8>,
    },
}

// ---------------------------------------------------------------------------------------------
// Commands as text: one line each, the way the tools print them (`player 1 seq 0: move 48v0 49v0
// → (512.5, 300)`), so a divergence report, a diff and the viewer name a command alike. Numbers are
// the fixed-point values' shortest exact decimals; the text is for people, the replay keeps the data.
// ---------------------------------------------------------------------------------------------

/// `player P seq S: ACTION` (the turn is not repeated: commands are listed under their turn).
impl std::fmt::Display for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "player {} seq {}: {}", self.player, self.seq, self.kind)
    }
}

/// A spawn's own turn rate as ` turn rate R`, nothing for the game's default.
struct TurnRate(Option<Fixed>);

impl std::fmt::Display for TurnRate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(rate) => write!(f, " turn rate {rate}"),
            None => Ok(()),
        }
    }
}

/// Units as their ids separated by spaces, with a run of consecutive slots of one generation as
/// `48v0..=147v0`, so an order to a thousand units stays one readable line and still names each.
struct Units<'a>(&'a [EntityId]);

impl std::fmt::Display for Units<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(no units)");
        }
        let mut k = 0;
        while k < self.0.len() {
            let first = self.0[k];
            let mut last = k;
            while last + 1 < self.0.len()
                && self.0[last + 1].generation == first.generation
                && self.0[last].index.checked_add(1) == Some(self.0[last + 1].index)
            {
                last += 1;
            }
            if k > 0 {
                f.write_str(" ")?;
            }
            match last - k {
                0 => write!(f, "{first}")?,
                1 => write!(f, "{first} {}", self.0[last])?,
                _ => write!(f, "{first}..={}", self.0[last])?,
            }
            k = last + 1;
        }
        Ok(())
    }
}

/// An obstruction square as `(x, z) w×h θ°`.
impl std::fmt::Display for SquareSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}×{} {}°", Coordinates(WorldPos::new(self.x, self.z)), self.w, self.h, self.degrees)
    }
}

/// The action alone, starting with a lower-case verb.
impl std::fmt::Display for CommandKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let queued = |queue: bool| if queue { " (queued)" } else { "" };
        match self {
            CommandKind::Spawn { class, at, count, radius, speed, turn_rate } => {
                write!(f, "spawn {count} of class {class} at {} radius {radius} speed {speed}{}", Coordinates(*at), TurnRate(*turn_rate))
            }
            CommandKind::SpawnFromBuilding { building, class, count, radius, speed, turn_rate } => {
                write!(
                    f,
                    "spawn {count} of class {class} from obstruction {building} radius {radius} speed {speed}{}",
                    TurnRate(*turn_rate)
                )
            }
            CommandKind::CancelSpawns { building } => write!(f, "cancel spawns at obstruction {building}"),
            CommandKind::Move { units, goal, queue } => write!(f, "move {} → {goal}{}", Units(units), queued(*queue)),
            CommandKind::Remove { units } => write!(f, "remove {}", Units(units)),
            CommandKind::Stop { units } => write!(f, "stop {}", Units(units)),
            CommandKind::PlaceObstruction { square, flags } => write!(f, "place obstruction {square} flags {flags:#04x}"),
            CommandKind::PlaceBuilding { class, square, builder } => {
                write!(f, "place building of class {class} {square}")?;
                match builder {
                    Some(b) => write!(f, " builder {b}"),
                    None => Ok(()),
                }
            }
            CommandKind::SetObstructionFlags { id, flags } => write!(f, "set obstruction {id} flags {flags:#04x}"),
            CommandKind::RemoveObstruction { id } => write!(f, "remove obstruction {id}"),
            CommandKind::SetArea { name, available } => write!(f, "{} area {name:?}", if *available { "open" } else { "close" }),
            CommandKind::EditTerrain { vx, vz, width, heights } => {
                let rows = if *width == 0 { 0 } else { heights.len() / *width as usize };
                write!(f, "edit terrain at vertex ({vx}, {vz}): {width}×{rows} heights")
            }
            CommandKind::FormGroup { units, layout } => write!(f, "form {} of {}", layout_name(*layout), Units(units)),
            CommandKind::MoveFormation { formation, goal } => write!(f, "move formation {} → {goal}", formation.0),
            CommandKind::SetLayout { formation, layout } => write!(f, "set formation {} layout {}", formation.0, layout_name(*layout)),
            CommandKind::Disband { formation } => write!(f, "disband formation {}", formation.0),
            CommandKind::SetWaypoints { net } => {
                write!(f, "set waypoints of class {}: {} points, range {}", net.class, net.points.len(), net.range)
            }
            CommandKind::SetWaypointPriorities { class, reset, entries } => {
                write!(f, "set waypoint priorities of class {class}:{}", if *reset { " reset," } else { "" })?;
                if entries.is_empty() {
                    return f.write_str(" no changes");
                }
                for (k, e) in entries.iter().enumerate() {
                    let sep = if k == 0 { " " } else { ", " };
                    match e.priority {
                        pathing::waypoints::WaypointPriority::Open { extra_cost } => {
                            write!(f, "{sep}{} open +{extra_cost}", e.waypoint)?;
                        }
                        pathing::waypoints::WaypointPriority::Excluded => write!(f, "{sep}{} excluded", e.waypoint)?,
                    }
                }
                Ok(())
            }
            CommandKind::MoveByWaypoints { units, goal, queue } => {
                write!(f, "move by waypoints {} → {}{}", Units(units), Coordinates(*goal), queued(*queue))
            }
            CommandKind::Game { rules, payload } => write!(f, "game command of {} bytes for {rules}", payload.len()),
        }
    }
}

fn layout_name(layout: Layout) -> &'static str {
    match layout {
        Layout::Line => "line",
        Layout::Box => "box",
        Layout::Column => "column",
        Layout::Wedge => "wedge",
        Layout::Loose => "loose",
    }
}

/// Why a command was refused, in words.
impl std::fmt::Display for RejectReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RejectReason::WrongTurn => f.write_str("not the turn being stepped"),
            RejectReason::UnknownPlayer => f.write_str("no such player"),
            RejectReason::UnknownEntity(id) => write!(f, "no live entity {id}"),
            RejectReason::NotOwned(id) => write!(f, "{id} belongs to another player"),
            RejectReason::BadClass => f.write_str("no such unit class"),
            RejectReason::OutOfRange => f.write_str("a value is outside its limits"),
            RejectReason::NoRoom => f.write_str("no room there"),
            RejectReason::UnknownObstruction(id) => write!(f, "no obstruction has id {id}"),
            RejectReason::IdsExhausted(kind) => write!(f, "{} ids exhausted", kind.name()),
            RejectReason::World(why) => write!(f, "refused: {why}"),
            RejectReason::Placement(why) => write!(f, "cannot be placed: {why}"),
            RejectReason::TooManySpawnOrders { waiting, max } => write!(f, "{waiting} spawn orders already wait, at most {max}"),
            RejectReason::NoSpawnOrder(building) => write!(f, "no spawn order of the sender waits at obstruction {building}"),
            RejectReason::WaypointOffMap { waypoint } => write!(f, "waypoint {waypoint} is off the map"),
            RejectReason::WaypointsTooDense { max_pairs } => {
                write!(f, "more than {max_pairs} waypoint pairs are within range of each other")
            }
            RejectReason::UnknownFormation(id) => write!(f, "no formation {}", id.0),
            RejectReason::FormationNotOwned(id) => write!(f, "formation {} belongs to another player", id.0),
            RejectReason::TooManyMembers { count, max } => write!(f, "{count} members, at most {max}"),
            RejectReason::WorldOnly => f.write_str("only the world (player 0) may send it"),
            RejectReason::NoWaypointNet(class) => write!(f, "class {class} has no waypoint network"),
            RejectReason::RadiusAboveClearance { radius, clearance } => {
                write!(f, "radius {radius} m is above the class's clearance of {clearance} m (whole navcells)")
            }
            RejectReason::NoRules => f.write_str("a game command of rules the world does not have"),
            RejectReason::GameMalformed => f.write_str("a game command the rules cannot decode"),
            RejectReason::Game { rules, payload } => write!(f, "refused by the {rules} rules (reason of {} bytes)", payload.len()),
            RejectReason::NotAnAction => f.write_str("a game command cannot be a game action"),
        }
    }
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
    /// No obstruction has this id (never placed, or removed).
    UnknownObstruction(ObstructionId),
    /// Every id of this kind has been handed out.
    IdsExhausted(IdKind),
    /// The passability world refused the change to its geometry.
    World(WorldRefusal),
    /// A building may not go there.
    Placement(PlacementRefusal),
    /// The sender already has the most building spawn orders waiting.
    TooManySpawnOrders {
        /// Its orders waiting.
        waiting: u32,
        /// The limit, [`crate::MAX_SPAWN_ORDERS_PER_PLAYER`].
        max: u32,
    },
    /// No spawn order of the sender waits at this building.
    NoSpawnOrder(ObstructionId),
    /// A waypoint of a network is off the map.
    WaypointOffMap {
        /// The waypoint's index in the network.
        waypoint: u32,
    },
    /// A waypoint network's points are too dense for its range: more pairs of them are within
    /// range of each other than the limit.
    WaypointsTooDense {
        /// The most pairs the network may have.
        max_pairs: u32,
    },
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
    NoWaypointNet(PassClass),
    /// A unit's radius is above its class's clearance (rounded up to whole navcells), so paths
    /// along walls would let its square overlap them (docs/pathfinding-rules.md, "Clearance").
    RadiusAboveClearance {
        /// The radius asked for. `[Units: metres]`
        radius: Fixed,
        /// The class's clearance in whole navcells. `[Units: metres]`
        clearance: Fixed,
    },
    /// A game command for a rule module the world does not have (or a world without game rules).
    NoRules,
    /// A game command whose bytes are not a command of the world's rules, or are too long.
    GameMalformed,
    /// A rule module refused the command: its name and its reason, encoded (read it with
    /// [`crate::rules::reject`]).
    Game {
        /// The module's [`crate::rules::Rules::NAME`].
        rules: String,
        /// The encoded `Rules::Reject`.
        payload: Vec<u8>,
    },
    /// A game's action was a game command ([`crate::rules::Ctx::act`] takes core commands only).
    NotAnAction,
}

/// Which ids ran out ([`RejectReason::IdsExhausted`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum IdKind {
    /// Obstruction ids (`u32`; the last is never handed out).
    Obstruction,
    /// Formation ids.
    Formation,
    /// Building spawn order ids.
    SpawnOrder,
}

impl IdKind {
    /// The kind in words: `obstruction`, `formation` or `spawn order`.
    pub fn name(self) -> &'static str {
        match self {
            IdKind::Obstruction => "obstruction",
            IdKind::Formation => "formation",
            IdKind::SpawnOrder => "spawn order",
        }
    }
}

/// Why the passability world refused a change to its geometry ([`RejectReason::World`]): the
/// refusals of `pathing::passability::NavWorld` and `pathing::terrain::Terrain`, as data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WorldRefusal {
    /// An obstruction id is in use already.
    ObstructionIdInUse(ObstructionId),
    /// An obstruction square's coordinates or sizes reach beyond ±`limit`, or a size is negative.
    SquareOutOfRange {
        /// The limit, `pathing::decimal::WORLD_LIMIT`. `[Units: metres]`
        limit: Fixed,
    },
    /// An obstruction square has zero width and zero height.
    ZeroSizeSquare,
    /// An obstruction square touches no navcell of the map.
    SquareOffMap,
    /// No navigation area has this name.
    UnknownArea(String),
    /// A terrain vertex of an edit is not on the heightmap.
    VertexOffMap {
        /// Vertex column.
        vx: u32,
        /// Vertex row.
        vz: u32,
    },
    /// A height of a terrain edit is beyond ±`limit`.
    HeightOutOfRange {
        /// Vertex column.
        vx: u32,
        /// Vertex row.
        vz: u32,
        /// The height asked for. `[Units: metres]`
        height: Fixed,
        /// The limit, `pathing::decimal::WORLD_LIMIT`. `[Units: metres]`
        limit: Fixed,
    },
    /// The geometry could not be built: a refusal that only making a world gives (paddings, area
    /// names, polygon configs, the painted layer, the terrain's size), which no command changes;
    /// kept so that every refusal of the passability world maps to a reason.
    Unbuildable,
}

impl WorldRefusal {
    /// The reason a refusal of the passability world gives a command (an unknown obstruction id
    /// is [`RejectReason::UnknownObstruction`], the others [`RejectReason::World`]).
    pub(crate) fn reason(e: pathing::passability::WorldError) -> RejectReason {
        use pathing::passability::WorldError;
        let limit = pathing::decimal::WORLD_LIMIT;
        RejectReason::World(match e {
            WorldError::UnknownId(id) => return RejectReason::UnknownObstruction(id),
            WorldError::DuplicateId(id) => WorldRefusal::ObstructionIdInUse(id),
            WorldError::OutOfRange => WorldRefusal::SquareOutOfRange { limit },
            WorldError::ZeroSize => WorldRefusal::ZeroSizeSquare,
            WorldError::OffMap => WorldRefusal::SquareOffMap,
            WorldError::UnknownArea(name) => WorldRefusal::UnknownArea(name),
            WorldError::Terrain(e) => return Self::terrain(e),
            WorldError::DuplicateArea(_) | WorldError::BadPadding | WorldError::Config(_) | WorldError::CellCount { .. } => {
                WorldRefusal::Unbuildable
            }
        })
    }

    /// The reason a refused terrain edit gives a command.
    pub(crate) fn terrain(e: pathing::terrain::TerrainError) -> RejectReason {
        use pathing::terrain::TerrainError;
        RejectReason::World(match e {
            TerrainError::VertexOffMap { vx, vz } => WorldRefusal::VertexOffMap { vx, vz },
            TerrainError::HeightOutOfRange { vx, vz, height } => {
                WorldRefusal::HeightOutOfRange { vx, vz, height, limit: pathing::decimal::WORLD_LIMIT }
            }
            _ => WorldRefusal::Unbuildable,
        })
    }
}

/// The refusal in words, as `pathing` words it.
impl std::fmt::Display for WorldRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WorldRefusal::ObstructionIdInUse(id) => write!(f, "obstruction id {id} is already in use"),
            WorldRefusal::SquareOutOfRange { limit } => {
                write!(f, "obstruction coordinates and sizes must be within ±{limit} m, sizes ≥ 0")
            }
            WorldRefusal::ZeroSizeSquare => f.write_str("obstruction has zero width and zero height"),
            WorldRefusal::SquareOffMap => f.write_str("obstruction does not touch the map"),
            WorldRefusal::UnknownArea(name) => write!(f, "no navigation area is named {name:?}"),
            WorldRefusal::VertexOffMap { vx, vz } => write!(f, "terrain vertex ({vx}, {vz}) is not on the heightmap"),
            WorldRefusal::HeightOutOfRange { vx, vz, height, limit } => {
                write!(f, "height {height} m at terrain vertex ({vx}, {vz}) is beyond ±{limit} m")
            }
            WorldRefusal::Unbuildable => f.write_str("the geometry cannot be built"),
        }
    }
}

/// Why a building may not be placed ([`RejectReason::Placement`]), as
/// `pathing::placement::PlacementError` says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PlacementRefusal {
    /// Part of the footprint (with its spacing) is off the map.
    OffMap,
    /// This navcell under the footprint (with its spacing) is impassable for the building's class.
    Blocked(pathing::Navcell),
    /// The footprint (with its spacing) meets the obstruction with this id.
    Overlaps(ObstructionId),
}

impl From<pathing::placement::PlacementError> for PlacementRefusal {
    fn from(e: pathing::placement::PlacementError) -> Self {
        use pathing::placement::PlacementError;
        match e {
            PlacementError::OffMap => PlacementRefusal::OffMap,
            PlacementError::Blocked(cell) => PlacementRefusal::Blocked(cell),
            PlacementError::Overlaps(id) => PlacementRefusal::Overlaps(id),
        }
    }
}

/// The refusal in words, as `pathing` words it.
impl std::fmt::Display for PlacementRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlacementRefusal::OffMap => f.write_str("the footprint leaves the map"),
            PlacementRefusal::Blocked(cell) => write!(f, "navcell {cell} under the footprint is not valid for the building's class"),
            PlacementRefusal::Overlaps(id) => write!(f, "the footprint meets obstruction {id}"),
        }
    }
}

/// Why a unit gave up its order ([`Event::Failed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FailReason {
    /// It could not move for `give_up_turns` blocked turns (units or new obstructions in the way),
    /// or a range order it could not bring into range.
    Blocked,
    /// Standing units of another player held the only way: no path round them was found, and it
    /// waited `give_up_turns` blocked turns for them to leave (docs/motion-rules.md, "Passages held
    /// by other players").
    PassageHeld,
    /// Its order could not be planned: the target is gone.
    NoPath,
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
    /// Not every unit of a spawn at a point fitted on its rings: `missing` were not created.
    SpawnShort {
        /// The spawn's `(turn, player, seq)`.
        command: (u32, PlayerId, u32),
        /// Units not created.
        missing: u32,
    },
    /// The perimeter of a building is full: `waiting` units of a spawn from it wait in a spawn
    /// order, which tries again every turn.
    SpawnWaiting {
        /// The spawn's `(turn, player, seq)`.
        command: (u32, PlayerId, u32),
        /// The order's id.
        order: u32,
        /// The building's obstruction id.
        building: ObstructionId,
        /// Units waiting.
        waiting: u32,
    },
    /// A unit of a waiting spawn order was created.
    SpawnedFromQueue {
        /// The order.
        order: u32,
        /// The new unit.
        unit: EntityId,
    },
    /// A waiting spawn order was dropped: cancelled by its player, or its building is gone.
    SpawnCancelled {
        /// The order.
        order: u32,
        /// Units it still had to place.
        remaining: u32,
    },
    /// An obstruction was placed.
    ObstructionPlaced {
        /// Its id.
        id: ObstructionId,
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
        /// Why.
        reason: FailReason,
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
    /// A waypoint of a network just set ([`CommandKind::SetWaypoints`]) that no other waypoint
    /// reaches: no edge of the network's graph joins it (too far from the others, or walled off),
    /// so no route passes through it.
    WaypointUnreached {
        /// The network's class.
        class: PassClass,
        /// The waypoint's index in the network.
        waypoint: u32,
    },
    /// A unit's leg of a waypoint route failed ([`Event::Failed`], or a path stopping short of the
    /// leg's waypoint): it was given the orders of a new route from where it stands, or, when it
    /// had been re-routed already or no route applies, an ordinary move to its goal.
    WaypointReroute {
        /// The unit.
        unit: EntityId,
        /// The waypoints of its new route; 0 when it moves locally instead.
        waypoints: u32,
    },
    /// A unit was given the orders of a route over its waypoint network
    /// ([`CommandKind::MoveByWaypoints`]).
    WaypointRoute {
        /// The unit.
        unit: EntityId,
        /// The waypoints of its route; 0 when it moves locally instead.
        waypoints: u32,
    },
    /// Something a rule module reported ([`crate::rules::Ctx::emit`]; read it with
    /// [`crate::rules::events`]).
    Game {
        /// The module's [`crate::rules::Rules::NAME`].
        rules: String,
        /// The encoded `Rules::Event`.
        payload: Vec<u8>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(index: u32, generation: u32) -> EntityId {
        EntityId { index, generation }
    }

    fn metres(bits_of_half: i64) -> Fixed {
        Fixed::from_bits(bits_of_half << 15)
    }

    fn command(kind: CommandKind) -> Command {
        Command { turn: 41, player: PlayerId(1), seq: 0, kind }
    }

    #[test]
    fn a_move_prints_as_the_tools_print_it() {
        let goal = GoalSpec::Point(WorldPos::new(metres(1025), metres(600)));
        let c = command(CommandKind::Move { units: vec![id(48, 0), id(49, 0)], goal, queue: false });
        assert_eq!(c.to_string(), "player 1 seq 0: move 48v0 49v0 → (512.5, 300)");
    }

    #[test]
    fn consecutive_units_print_as_a_range() {
        let units = vec![id(3, 0), id(4, 0), id(5, 0), id(6, 0), id(7, 1), id(9, 1), id(10, 1)];
        let kind = CommandKind::Stop { units };
        assert_eq!(kind.to_string(), "stop 3v0..=6v0 7v1 9v1 10v1");
        assert_eq!(CommandKind::Remove { units: Vec::new() }.to_string(), "remove (no units)");
    }

    #[test]
    fn every_command_kind_has_words_not_debug() {
        let p = WorldPos::new(metres(20), metres(41));
        let square = SquareSpec { x: metres(20), z: metres(41), w: metres(8), h: metres(6), degrees: metres(90) };
        let priority = PriorityEntry { waypoint: 2, priority: pathing::waypoints::WaypointPriority::Open { extra_cost: 5 } };
        let cases = [
            (
                CommandKind::Spawn { class: PassClass::of(1), at: p, count: 9, radius: metres(1), speed: metres(16), turn_rate: None },
                "spawn 9 of class 1 at (10, 20.5) radius 0.5 speed 8",
            ),
            (
                CommandKind::SpawnFromBuilding {
                    building: ObstructionId(7),
                    class: PassClass::of(1),
                    count: 5,
                    radius: metres(1),
                    speed: metres(16),
                    turn_rate: None,
                },
                "spawn 5 of class 1 from obstruction 7 radius 0.5 speed 8",
            ),
            (CommandKind::CancelSpawns { building: ObstructionId(7) }, "cancel spawns at obstruction 7"),
            (
                CommandKind::Move {
                    units: vec![id(1, 2)],
                    goal: GoalSpec::Range { target: Target::Unit(id(7, 0)), min: Fixed::ZERO, max: metres(12), kind: RangeKind::Melee },
                    queue: true,
                },
                "move 1v2 → range 0..6 of unit 7v0 (queued)",
            ),
            (
                CommandKind::Move {
                    units: vec![id(1, 2)],
                    goal: GoalSpec::Range {
                        target: Target::Obstruction(ObstructionId(4)),
                        min: metres(2),
                        max: metres(12),
                        kind: RangeKind::Ranged,
                    },
                    queue: false,
                },
                "move 1v2 → ranged range 1..6 of obstruction 4",
            ),
            (
                CommandKind::Move {
                    units: vec![id(1, 2)],
                    goal: GoalSpec::Range {
                        target: Target::Obstruction(ObstructionId(4)),
                        min: Fixed::ZERO,
                        max: Fixed::ZERO,
                        kind: RangeKind::Build,
                    },
                    queue: false,
                },
                "move 1v2 → build range 0..0 of obstruction 4",
            ),
            (CommandKind::PlaceObstruction { square, flags: 3 }, "place obstruction (10, 20.5) 4×3 45° flags 0x03"),
            (
                CommandKind::PlaceBuilding { class: PassClass::of(4), square, builder: Some(id(5, 0)) },
                "place building of class 4 (10, 20.5) 4×3 45° builder 5v0",
            ),
            (CommandKind::SetObstructionFlags { id: ObstructionId(7), flags: 0 }, "set obstruction 7 flags 0x00"),
            (CommandKind::RemoveObstruction { id: ObstructionId(7) }, "remove obstruction 7"),
            (CommandKind::SetArea { name: "gate".into(), available: true }, "open area \"gate\""),
            (
                CommandKind::EditTerrain { vx: 3, vz: 4, width: 2, heights: vec![Fixed::ZERO; 6] },
                "edit terrain at vertex (3, 4): 2×3 heights",
            ),
            (CommandKind::FormGroup { units: vec![id(1, 0), id(2, 0)], layout: Layout::Wedge }, "form wedge of 1v0 2v0"),
            (
                CommandKind::MoveFormation { formation: FormationId(2), goal: GoalSpec::Circle { center: p, radius: metres(6) } },
                "move formation 2 → circle (10, 20.5) radius 3",
            ),
            (CommandKind::SetLayout { formation: FormationId(2), layout: Layout::Box }, "set formation 2 layout box"),
            (CommandKind::Disband { formation: FormationId(2) }, "disband formation 2"),
            (
                CommandKind::SetWaypoints { net: WaypointNet { class: PassClass::of(0), range: 64, points: vec![p, p] } },
                "set waypoints of class 0: 2 points, range 64",
            ),
            (
                CommandKind::SetWaypointPriorities { class: PassClass::of(0), reset: true, entries: vec![priority] },
                "set waypoint priorities of class 0: reset, 2 open +5",
            ),
            (CommandKind::MoveByWaypoints { units: vec![id(1, 0)], goal: p, queue: false }, "move by waypoints 1v0 → (10, 20.5)"),
        ];
        for (kind, text) in cases {
            assert_eq!(kind.to_string(), text, "{kind:?}");
        }
    }

    #[test]
    fn reject_reasons_have_words() {
        assert_eq!(RejectReason::UnknownEntity(id(48, 3)).to_string(), "no live entity 48v3");
        assert_eq!(RejectReason::TooManyMembers { count: 300, max: 256 }.to_string(), "300 members, at most 256");
        assert_eq!(
            RejectReason::RadiusAboveClearance { radius: metres(3), clearance: metres(2) }.to_string(),
            "radius 1.5 m is above the class's clearance of 1 m (whole navcells)"
        );
    }

    /// The refusals that once carried prose carry data, and still read as one line each; those of
    /// `pathing` read exactly as `pathing` words them.
    #[test]
    fn typed_refusals_read_as_one_line() {
        use pathing::passability::WorldError;
        use pathing::placement::PlacementError;
        use pathing::terrain::TerrainError;
        let obstruction = ObstructionId(7);
        let cases = [
            (RejectReason::UnknownObstruction(obstruction), "no obstruction has id 7".to_string()),
            (RejectReason::IdsExhausted(IdKind::SpawnOrder), "spawn order ids exhausted".into()),
            (RejectReason::TooManySpawnOrders { waiting: 16, max: 16 }, "16 spawn orders already wait, at most 16".into()),
            (RejectReason::NoSpawnOrder(obstruction), "no spawn order of the sender waits at obstruction 7".into()),
            (RejectReason::WaypointOffMap { waypoint: 3 }, "waypoint 3 is off the map".into()),
            (RejectReason::WaypointsTooDense { max_pairs: 4096 }, "more than 4096 waypoint pairs are within range of each other".into()),
            (WorldRefusal::reason(WorldError::UnknownId(obstruction)), "no obstruction has id 7".into()),
            (
                WorldRefusal::terrain(TerrainError::HeightOutOfRange { vx: 2, vz: 5, height: metres(-40_000) }),
                "refused: height -20000 m at terrain vertex (2, 5) is beyond ±16384 m".into(),
            ),
            (
                RejectReason::Placement(PlacementError::Overlaps(obstruction).into()),
                format!("cannot be placed: {}", PlacementError::Overlaps(obstruction)),
            ),
        ];
        for (reason, text) in cases {
            assert_eq!(reason.to_string(), text, "{reason:?}");
        }
        // Each refusal of the passability world that a command can meet words itself as `pathing` does.
        for e in [
            WorldError::DuplicateId(obstruction),
            WorldError::UnknownArea("gate".into()),
            WorldError::OutOfRange,
            WorldError::ZeroSize,
            WorldError::OffMap,
        ] {
            let expected = format!("refused: {e}");
            assert_eq!(WorldRefusal::reason(e).to_string(), expected);
        }
        let placement = PlacementError::Blocked(pathing::Navcell::new(3, 4));
        assert_eq!(PlacementRefusal::from(placement).to_string(), placement.to_string());
    }
}
