//! The deterministic, turn-based, fixed-point world of the Phalanx lockstep core.
//!
//! Every peer of a multiplayer game runs this simulation from the same commands and must reach
//! bit-identical state. A [`World`] is built from the world's geometry
//! (`pathing::passability::WorldDesc`) and stepped one turn at a time with the commands scheduled for
//! that turn; each step returns the turn's events and its state hash, and can be saved and loaded
//! at any turn boundary.
//!
//! Every item has one public path. The embedding API is flat from the crate root: [`World`],
//! [`Settings`] (with [`MotionSettings`]), [`Command`], [`CommandKind`], [`GoalSpec`],
//! [`TurnReport`], [`Event`], [`RejectReason`], [`Unit`], [`UnitState`], [`EntityId`],
//! [`PlayerId`], [`SimRng`], the lookup tables [`LookupSet`] and [`LookupMap`], and the limits
//! that go with them; the modules that hold them (`world.rs`, `command.rs`, `goal.rs`, `unit.rs`,
//! `settings.rs`, `motion.rs`, `ids.rs`, `rng.rs`, `lookup.rs`, `facing.rs`) are private. A few
//! modules stay public as namespaces, because their items are many or their names would clash at
//! the root, and nothing in them is re-exported anywhere else:
//!
//! - [`rules`]: the game-rules API ([`rules::Rules`], [`rules::Modules`], [`rules::Ctx`],
//!   [`rules::View`], `docs/game-rules.md`).
//! - [`formation`]: formations (groups of units moving as one block): layouts, slots, generalised
//!   paths; the turn phase that moves them is in `world/formations.rs`.
//! - [`waypoint`]: waypoint networks (map data) and routes over them for long AI moves; the world
//!   part is in `world/waypoints.rs`.
//! - [`digest_tree`]: the per-component digests a turn's hash is made of, and [`digest_tree::locate`],
//!   which finds the component and the chunk or entity range where two peers diverged.
//! - [`snapshot`]: the byte format of a saved world.
//! - [`state_hash`]: the canonical encoding everything hashed uses.
//!
//! How units follow their paths (checked against the grid and against each other, short-range
//! detours, the push-apart, nudging and replanning) is `motion.rs`, with every constant in
//! [`MotionSettings`].
//!
//! What a game that embeds the world must do to stay in lockstep (commands as the only input,
//! fixed point, snapshots at turn boundaries, exchanging hashes) is `docs/determinism.md`; a whole
//! two-peer game loop with input delay, hash exchange, desync localisation and replays is the
//! `phalanx-examples` crate (`examples/src/lib.rs`).
//!
//! # Quick start
//!
//! ```
//! use pathing::refworld::{RefWorldParams, generate};
//! use pathing::{Fixed, PassClass, WorldPos};
//! use sim::{Command, CommandKind, Event, GoalSpec, PlayerId, Settings, World};
//!
//! // A small generated map (64 × 64 navcells) with its buildings and trees.
//! let (desc, obstructions) = generate(&RefWorldParams::scaled(16, 1));
//! let mut world = World::new(desc, obstructions, Settings::default()).unwrap();
//!
//! // Turn 0: player 1 spawns two units.
//! let spawn = CommandKind::Spawn { class: PassClass::of(0), at: WorldPos::from_int(30, 30), count: 2, radius: Fixed::ONE / 2, speed: Fixed::from_num(8), turn_rate: None };
//! let report = world.step(&[Command { turn: 0, player: PlayerId(1), seq: 0, kind: spawn }]);
//! let units: Vec<_> = report.events.iter().filter_map(|e| match e { Event::Spawned { unit } => Some(*unit), _ => None }).collect();
//!
//! // Turn 1: send them somewhere; the path is computed and they start walking this turn.
//! let go = CommandKind::Move { units: units.clone(), goal: GoalSpec::Point(WorldPos::from_int(40, 36)), queue: false };
//! world.step(&[Command { turn: 1, player: PlayerId(1), seq: 1, kind: go }]);
//!
//! // A snapshot continues exactly like the original.
//! let mut copy = World::load(&world.save()).unwrap();
//! for _ in 0..10 {
//!     assert_eq!(world.step(&[]).hash, copy.step(&[]).hash);
//! }
//! assert!(world.unit(units[0]).unwrap().pos != WorldPos::from_int(30, 30));
//! ```
#![deny(clippy::float_arithmetic)]
#![forbid(unsafe_code)]

mod command;
pub mod digest_tree;
mod error;
mod facing;
pub mod formation;
mod geom;
mod goal;
mod ids;
mod lookup;
mod motion;
mod rng;
mod settings;
pub mod snapshot;
mod spawn_order;
pub mod state_hash;
#[cfg(feature = "test-support")]
pub mod test_support;
mod unit;
mod units;
pub mod waypoint;
mod world;

// The embedding API, flat: what a game needs to make a world, step it and read what happened.
pub use command::{Command, CommandKind, Event, FailReason, IdKind, PlacementRefusal, RejectReason, SquareSpec, WorldRefusal};
pub use error::Error;
pub use facing::INITIAL_FACING;
pub use geom::centre as navcell_centre;
pub use geom::off_grid_lines;
pub use goal::{GoalSpec, RangeKind, Target};
pub use ids::{EntityAllocator, EntityId, PlayerId};
pub use lookup::{LookupMap, LookupSet};
pub use motion::{MotionSettings, OVERLAP_TOLERANCE, TURN_RATE_LIMITS};
pub use rng::SimRng;
pub use settings::{
    DEFAULT_LONG_SEARCH_BUDGET, DEFAULT_MAX_PATHS_PER_TURN, DEFAULT_TURN_MS, MAX_LONG_SEARCH_BUDGET, SEARCH_BASE_WORK, Settings,
};
pub use spawn_order::SpawnOrder;
pub use unit::{PathRequest, Unit, UnitState};
pub use world::{
    HELD_NODE_BUDGET, MAX_ORDERS, MAX_RANGE, MAX_SPAWN_COUNT, MAX_SPAWN_ORDERS_PER_PLAYER, PATH_NODE_BUDGET, POINT_SPAWN_RINGS, PathStats,
    Phase, RANGE_EPSILON, ScaleStats, SetupError, TARGET_REPLAN_THRESHOLD, TurnReport, World,
};
// The game-rules API is a namespace, `sim::rules` (it lives with the world, which calls it every
// turn); its items are not re-exported at the root, so each has one path.
pub use world::rules;
pub use world::{PathQuery, QueryRefusal};
