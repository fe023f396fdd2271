//! The reference game on Phalanx: units and buildings with hit points, melee and ranged combat,
//! training, a wood economy, building, and bots, written with only the public API of `sim` and
//! `pathing` (docs/skirmish.md).
//!
//! The game is four rule modules composed ([`sim::rules::Modules`]), each with its own state, commands
//! and digest components, stepping in this order ([`Skirmish`]):
//! - [`production`]: players' starts, training queues and the units they spawn;
//! - [`combat`]: every unit's kind and hit points, structures' hit points, fights;
//! - [`gathering`]: trees, drop-sites, workers carrying wood, each player's store of wood;
//! - [`construction`]: foundations, builders, finished buildings.
//!
//! A unit does one thing at a time: a module that gives units a task tells the others
//! ([`sim::rules::Ctx::interrupt`]), and they drop theirs.
//!
//! Everything is integers and fixed point: times are milliseconds turned into whole turns of the
//! world's `turn_ms`, distances are `pathing::Fixed` metres, hit points and wood are integers.

#![deny(clippy::float_arithmetic)]
#![forbid(unsafe_code)]

use pathing::{Fixed, ObstructionId, PassClass, WorldPos};
use serde::{Deserialize, Serialize};
use sim::{EntityId, PlacementRefusal, PlayerId, RejectReason, SquareSpec};

pub mod bot;
pub mod combat;
mod common;
pub mod construction;
pub mod gathering;
pub mod play;
pub mod production;
#[cfg(feature = "tools")]
pub mod tools;

pub use bot::Bot;
pub use combat::{Combat, CombatCommand};
pub use construction::{Construction, ConstructionCommand};
pub use gathering::{Gathering, GatheringCommand};
pub use play::{Outcome, PlayerSummary, play, setup, start_spot, summary};
pub use production::{Production, ProductionCommand};

/// The game's name in the tools' registry and in replay headers (its modules have their own
/// names in digests and snapshots).
pub const NAME: &str = "skirmish";
/// The game's version: a change to any rule or constant below, or to its modules, is a new version.
pub const VERSION: u32 = 4;

/// The reference game: its four modules in step order.
pub type Skirmish = (Production, Combat, Gathering, Construction);

/// The reference game's value ([`sim::World::with_rules`] takes it).
pub const SKIRMISH: Skirmish = (Production, Combat, Gathering, Construction);

/// Wood each player has when it starts. `[Units: wood]`
pub const START_WOOD: u32 = 300;
/// Workers each player starts with, beside its town centre.
pub const START_WORKERS: u16 = 5;
/// Most wood a worker carries. `[Units: wood]`
pub const CARRY_CAPACITY: u16 = 10;
/// Time a worker in range of a tree takes to cut one wood. `[Units: milliseconds]`
pub const GATHER_MS: u32 = 400;
/// How far from a tree's or drop-site's square a worker gathers or deposits. `[Units: metres]`
pub const GATHER_RANGE: Fixed = Fixed::ONE;
/// How far a felled tree's gatherers look for the next tree. `[Units: metres]`
pub const NEXT_TREE_RADIUS: Fixed = Fixed::from_bits(30 << 16);
/// The radius within which an attack-moving or idle soldier engages an enemy. `[Units: metres]`
pub const AGGRO_RADIUS: Fixed = Fixed::from_bits(14 << 16);
/// The radius round a player's units and buildings within which its bot sees enemies.
/// `[Units: metres]`
pub const VISION_RADIUS: Fixed = Fixed::from_bits(24 << 16);
/// Turns a unit waits after an order the rules gave it before the rules give it another (so a
/// unit that cannot reach its target does not ask for a path every turn). `[Units: turns]`
pub const REORDER_TURNS: u32 = 5;
/// Most units one command names.
pub const MAX_COMMAND_UNITS: usize = 256;
/// Most units a building's training queue holds.
pub const MAX_QUEUE: usize = 10;
/// Most units one `Train` command asks for.
pub const MAX_BATCH: u16 = 5;
/// Most units one world `Spawn` command places.
pub const MAX_SPAWN: u16 = 64;
/// Most wood one tree holds. `[Units: wood]`
pub const MAX_TREE_WOOD: u32 = 10_000;
/// Most obstruction ids one `Resources` command names.
pub const MAX_RESOURCE_IDS: u32 = 1 << 16;
/// The passability class of every unit (the 0 A.D. defaults' `default`, clearance 1 m).
pub const UNIT_CLASS: PassClass = PassClass::of(0);
/// The passability class of every building (the 0 A.D. defaults' `building-land`).
pub const BUILDING_CLASS: PassClass = PassClass::of(4);
/// Extra reach of an in-range test against a building's or tree's square, beyond the range and
/// the distance `R` the core grows the square by for the unit's class (its clearance, 1 m, or more
/// for a narrow square): the core's ε (1/8 m) and half a metre for where a unit stands within its
/// last navcell. `[Units: metres]`
pub const SQUARE_SLACK: Fixed = Fixed::from_bits(5 << 13);
/// The clearance of [`UNIT_CLASS`] (the 0 A.D. defaults' `default`). `[Units: metres]`
pub const UNIT_CLEARANCE: Fixed = Fixed::ONE;
/// Extra reach of an in-range test between two units, beyond the range and the two radii: the
/// core's ε (1/8 m) and as much again. `[Units: metres]`
pub const UNIT_SLACK: Fixed = Fixed::from_bits(1 << 14);

/// The kinds of unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum UnitKind {
    /// Gathers wood, builds, fights weakly.
    Worker,
    /// A melee soldier.
    Spearman,
    /// A ranged soldier.
    Archer,
}

/// One unit kind's numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnitStats {
    /// Hit points when whole. `[Units: hit points]`
    pub hp: u16,
    /// Damage of one strike. `[Units: hit points]`
    pub damage: u16,
    /// Time between strikes. `[Units: milliseconds]`
    pub cooldown_ms: u32,
    /// Attack range, edge to edge. `[Units: metres]`
    pub range: Fixed,
    /// Melee or ranged, as the core shapes the range goal.
    pub ranged: bool,
    /// Cost. `[Units: wood]`
    pub cost: u32,
    /// Training time. `[Units: milliseconds]`
    pub train_ms: u32,
    /// Walking speed. `[Units: metres per second]`
    pub speed: Fixed,
    /// Half-size of the unit's square. `[Units: metres]`
    pub radius: Fixed,
}

impl UnitKind {
    /// Every kind, in order.
    pub const ALL: [UnitKind; 3] = [UnitKind::Worker, UnitKind::Spearman, UnitKind::Archer];

    /// The kind's numbers.
    pub const fn stats(self) -> UnitStats {
        let half = Fixed::from_bits(1 << 15);
        match self {
            UnitKind::Worker => UnitStats {
                hp: 50,
                damage: 2,
                cooldown_ms: 1000,
                range: half,
                ranged: false,
                cost: 50,
                train_ms: 8000,
                speed: Fixed::from_bits(5 << 16),
                radius: half,
            },
            UnitKind::Spearman => UnitStats {
                hp: 100,
                damage: 8,
                cooldown_ms: 1000,
                range: Fixed::ONE,
                ranged: false,
                cost: 60,
                train_ms: 10_000,
                speed: Fixed::from_bits(5 << 16),
                radius: half,
            },
            UnitKind::Archer => UnitStats {
                hp: 60,
                damage: 5,
                cooldown_ms: 1500,
                range: Fixed::from_bits(16 << 16),
                ranged: true,
                cost: 70,
                train_ms: 12_000,
                speed: Fixed::from_bits(6 << 16),
                radius: half,
            },
        }
    }

    /// Whether the kind fights on its own (idle soldiers engage enemies; idle workers do not).
    pub const fn is_soldier(self) -> bool {
        !matches!(self, UnitKind::Worker)
    }
}

/// The kinds of building.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum BuildingKind {
    /// The drop-site for wood; trains workers.
    TownCentre,
    /// Trains soldiers.
    Barracks,
}

/// One building kind's numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildingStats {
    /// Hit points when finished. `[Units: hit points]`
    pub hp: u16,
    /// Cost. `[Units: wood]`
    pub cost: u32,
    /// Building time of one builder. `[Units: milliseconds]`
    pub build_ms: u32,
    /// Side of the square footprint. `[Units: metres]`
    pub size: i32,
}

impl BuildingKind {
    /// The kind's numbers.
    pub const fn stats(self) -> BuildingStats {
        match self {
            BuildingKind::TownCentre => BuildingStats { hp: 800, cost: 400, build_ms: 60_000, size: 12 },
            BuildingKind::Barracks => BuildingStats { hp: 500, cost: 150, build_ms: 20_000, size: 10 },
        }
    }

    /// Whether the kind trains `unit`.
    pub const fn trains(self, unit: UnitKind) -> bool {
        match self {
            BuildingKind::TownCentre => matches!(unit, UnitKind::Worker),
            BuildingKind::Barracks => matches!(unit, UnitKind::Spearman | UnitKind::Archer),
        }
    }

    /// Whether workers deposit wood here.
    pub const fn is_drop_site(self) -> bool {
        matches!(self, BuildingKind::TownCentre)
    }
}

/// Whole turns of `turn_ms` that `ms` takes, at least one.
pub fn turns(ms: u32, turn_ms: u32) -> u32 {
    ms.div_ceil(turn_ms.max(1)).max(1)
}

/// What the game reports, whichever module reports it (the four share the type; read a turn's
/// with [`events`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SkirmishEvent {
    /// A player was started.
    Started {
        /// The player.
        player: PlayerId,
        /// Its town centre.
        town_centre: ObstructionId,
    },
    /// A unit died.
    Killed {
        /// The unit.
        unit: EntityId,
        /// Its kind.
        kind: UnitKind,
        /// Its owner.
        owner: PlayerId,
        /// The player whose unit struck last.
        by: PlayerId,
    },
    /// A building was destroyed.
    Razed {
        /// The building.
        building: ObstructionId,
        /// Its kind.
        kind: BuildingKind,
        /// Its owner.
        owner: PlayerId,
        /// The player whose unit struck last.
        by: PlayerId,
    },
    /// A unit was trained (it exists now).
    Trained {
        /// The unit.
        unit: EntityId,
        /// Its kind.
        kind: UnitKind,
        /// Where.
        building: ObstructionId,
    },
    /// A worker deposited wood.
    Deposited {
        /// The worker.
        unit: EntityId,
        /// How much. `[Units: wood]`
        wood: u16,
    },
    /// A tree's last wood was cut and its obstruction removed.
    Felled {
        /// The tree.
        tree: ObstructionId,
    },
    /// A foundation was laid.
    Placed {
        /// The building.
        building: ObstructionId,
        /// Its kind.
        kind: BuildingKind,
        /// Its owner.
        owner: PlayerId,
    },
    /// A building was finished.
    Built {
        /// The building.
        building: ObstructionId,
        /// Its kind.
        kind: BuildingKind,
        /// Its owner.
        owner: PlayerId,
    },
    /// An action the rules took was refused by the core (it changed nothing, the wood was not
    /// spent): the rules' own checks should make this rare.
    ActionRefused {
        /// The player it was for.
        player: PlayerId,
        /// The core's reason.
        reason: RejectReason,
    },
}

/// Why the game refuses a command, whichever module refuses it (the four share the type; read
/// it with [`reject`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SkirmishReject {
    /// Only the world (player 0) sends this command.
    WorldOnly,
    /// The world (player 0) has no units or buildings to command.
    NotAPlayer,
    /// No such player.
    UnknownPlayer,
    /// The player was started already.
    AlreadyStarted,
    /// The command names no unit, or more than [`MAX_COMMAND_UNITS`].
    BadUnitCount,
    /// A unit is named twice.
    Duplicate(EntityId),
    /// No such live unit.
    UnknownUnit(EntityId),
    /// The unit died (or was removed).
    Dead(EntityId),
    /// Another player's unit.
    NotOwned(EntityId),
    /// Not a worker (only workers gather and build).
    NotAWorker(EntityId),
    /// No such building.
    NotABuilding(ObstructionId),
    /// Another player's building.
    NotYourBuilding(ObstructionId),
    /// The building is not finished.
    NotFinished(ObstructionId),
    /// The building does not train that kind.
    CannotTrain,
    /// A count outside `1..=MAX_BATCH`.
    BadCount,
    /// The training queue would hold more than [`MAX_QUEUE`].
    QueueFull,
    /// Not enough wood.
    NotEnoughResources {
        /// Needed. `[Units: wood]`
        need: u32,
        /// In store. `[Units: wood]`
        have: u32,
    },
    /// The target is the sender's own.
    OwnTarget,
    /// No such tree (or it has no wood left).
    NotATree(ObstructionId),
    /// A point off the map.
    OffMap,
    /// A footprint whose size is not the kind's, or out of range.
    BadFootprint,
    /// The footprint fails the core's building placement check.
    CannotPlace(PlacementRefusal),
    /// A `Resources` range that is empty, reversed, too long or names no obstruction.
    BadRange,
    /// Wood outside `1..=MAX_TREE_WOOD`.
    BadAmount,
    /// A core command a player may not send in this game (units are trained, buildings built,
    /// the map is the world's): only the world (player 0) sends it.
    CoreCommandRefused,
}

/// The reference game's events among a turn's events, in order, whichever module emitted them.
pub fn events(events: &[sim::Event]) -> impl Iterator<Item = SkirmishEvent> + '_ {
    events.iter().filter_map(|e| match e {
        sim::Event::Game { rules, payload } if MODULES.contains(&rules.as_str()) => {
            sim::rules::decode::<SkirmishEvent>(payload, sim::rules::MAX_GAME_VALUE).ok()
        }
        _ => None,
    })
}

/// The reference game's reason for a refusal, when one of its modules refused.
pub fn reject(reason: &RejectReason) -> Option<SkirmishReject> {
    match reason {
        RejectReason::Game { rules, payload } if MODULES.contains(&rules.as_str()) => {
            sim::rules::decode::<SkirmishReject>(payload, sim::rules::MAX_GAME_VALUE).ok()
        }
        _ => None,
    }
}

/// The modules' names, in step order.
pub const MODULES: [&str; 4] = [production::NAME, combat::NAME, gathering::NAME, construction::NAME];

/// A game command of any of the reference game's modules, as one value (bots and tests build
/// them so; [`GameCommand::kind`] routes it to its module).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GameCommand {
    /// Starts, training.
    Production(ProductionCommand),
    /// Spawns, attacks, stops.
    Combat(CombatCommand),
    /// Trees, gathering.
    Gathering(GatheringCommand),
    /// Building.
    Construction(ConstructionCommand),
}

impl GameCommand {
    /// The core command kind carrying it to its module.
    pub fn kind(&self) -> sim::CommandKind {
        match self {
            Self::Production(c) => sim::rules::command::<Production>(c),
            Self::Combat(c) => sim::rules::command::<Combat>(c),
            Self::Gathering(c) => sim::rules::command::<Gathering>(c),
            Self::Construction(c) => sim::rules::command::<Construction>(c),
        }
    }
}

impl From<ProductionCommand> for GameCommand {
    fn from(c: ProductionCommand) -> Self {
        Self::Production(c)
    }
}

impl From<CombatCommand> for GameCommand {
    fn from(c: CombatCommand) -> Self {
        Self::Combat(c)
    }
}

impl From<GatheringCommand> for GameCommand {
    fn from(c: GatheringCommand) -> Self {
        Self::Gathering(c)
    }
}

impl From<ConstructionCommand> for GameCommand {
    fn from(c: ConstructionCommand) -> Self {
        Self::Construction(c)
    }
}

/// A unit's kind, as the combat module keeps it (`None` without that module or that unit).
pub fn kind_of(world: &sim::World, unit: EntityId) -> Option<UnitKind> {
    world.game::<Combat>()?.unit(unit).map(|f| f.kind)
}

/// A building's footprint centred at `(x, z)` turned by `degrees`.
pub fn footprint(kind: BuildingKind, x: Fixed, z: Fixed, degrees: Fixed) -> SquareSpec {
    let side = Fixed::from_num(kind.stats().size);
    SquareSpec { x, z, w: side, h: side, degrees }
}

/// Whether `pos` is within `reach` of the square: inside it grown by `reach` on every side, in
/// the square's own axes (exact, in `i128`).
pub fn within_square(pos: WorldPos, square: &pathing::Square, reach: Fixed) -> bool {
    let c = square.center();
    let (dx, dz) = (i128::from((pos.x - c.x).to_bits()), i128::from((pos.z - c.z).to_bits()));
    let along = |axis: pathing::Vec2| (dx * i128::from(axis.x.to_bits()) + dz * i128::from(axis.z.to_bits())).abs();
    let one = 1i128 << pathing::FIXED_FRAC_BITS;
    let limit = |half: Fixed| i128::from((half + reach).to_bits()) * one;
    along(square.u()) <= limit(square.hw()) && along(square.v()) <= limit(square.hh())
}

/// Whether `pos` is within `range` of an obstruction's square as the core measures a range order
/// against it for a unit of [`UNIT_CLASS`] (plus [`SQUARE_SLACK`]).
pub fn within_obstruction(pos: WorldPos, square: &pathing::Square, range: Fixed, cell_size: Fixed) -> bool {
    let r = pathing::raster::effective_radius(square, UNIT_CLEARANCE, cell_size);
    within_square(pos, square, range + r + SQUARE_SLACK)
}

/// Whether two units are within `range` of each other, edge to edge, as the core measures a range
/// order against a unit (plus [`UNIT_SLACK`]).
pub fn within_unit(a: &sim::Unit, b: &sim::Unit, range: Fixed) -> bool {
    let reach = i128::from((range + a.radius + b.radius + UNIT_SLACK).to_bits());
    sim::rules::distance2(a.pos, b.pos) <= reach * reach
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(n: i32) -> Fixed {
        Fixed::from_num(n)
    }

    #[test]
    fn turns_round_up_and_are_never_zero() {
        assert_eq!(turns(1000, 200), 5);
        assert_eq!(turns(1001, 200), 6);
        assert_eq!(turns(1, 200), 1);
        assert_eq!(turns(0, 200), 1);
        assert_eq!(turns(400, 0), 400, "a zero turn length counts milliseconds");
    }

    #[test]
    fn within_square_measures_in_the_square_s_own_axes() {
        // A 4 × 2 m square at (10, 10), then the same turned by 90°: its long side along z.
        let flat = pathing::raster::oriented_square(WorldPos::from_int(10, 10), m(2), m(1), Fixed::ZERO).unwrap();
        let turned = pathing::raster::oriented_square(WorldPos::from_int(10, 10), m(2), m(1), m(90)).unwrap();
        let east = WorldPos::from_int(13, 10);
        assert!(within_square(east, &flat, m(1)), "1 m east of the flat square's edge");
        assert!(!within_square(east, &flat, Fixed::ONE / 2));
        assert!(!within_square(east, &turned, m(1)), "2 m east of the turned square's edge");
        assert!(within_square(east, &turned, m(2)));
        assert!(within_square(WorldPos::from_int(10, 13), &turned, m(1)));
        // A corner: within the grown square, though farther than the reach from the corner.
        assert!(within_square(WorldPos::from_int(13, 12), &flat, m(1)));
    }

    #[test]
    fn within_obstruction_adds_the_rasterized_radius_and_the_slack() {
        let sq = pathing::raster::oriented_square(WorldPos::from_int(10, 10), m(3), m(3), Fixed::ZERO).unwrap();
        // Edge at x = 13; range 1, R = 1 (clearance), slack 5/8: in range up to x = 15.625.
        let at = |x: Fixed| WorldPos::new(x, m(10));
        assert!(within_obstruction(at(m(15) + Fixed::from_bits(5 << 13)), &sq, m(1), Fixed::ONE));
        assert!(!within_obstruction(at(m(15) + Fixed::from_bits((5 << 13) + 1)), &sq, m(1), Fixed::ONE));
    }
}
