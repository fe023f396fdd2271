//! The deterministic, turn-based, fixed-point world of the Phalanx lockstep core.
//!
//! Every peer of a multiplayer game runs this simulation from the same commands and must reach
//! bit-identical state. A [`World`] is built from the world's geometry
//! (`pathing::passability::WorldDesc`) and stepped one turn at a time with the commands scheduled for
//! that turn; each step returns the turn's events and its state hash, and can be saved and loaded
//! at any turn boundary.
//!
//! What a game embedding the world uses is re-exported here, flat: [`World`], [`Settings`] (with
//! [`MotionSettings`]), [`Command`], [`CommandKind`], [`GoalSpec`], [`TurnReport`], [`Event`],
//! [`RejectReason`], [`Unit`], [`UnitState`], [`EntityId`] and [`PlayerId`]. The modules hold
//! the rest:
//!
//! - [`world`]: the world, the turn loop and snapshots in and out; [`settings`]: a game's settings.
//! - [`command`]: commands, events and the reasons a command is rejected; [`goal`]: where an order
//!   sends a unit.
//! - [`unit`](mod@unit): a unit's state and the path requests it queues.
//! - [`formation`]: formations (groups of units moving as one block): layouts, slots, generalised
//!   paths; the turn phase that moves them is in `world/formations.rs`.
//! - [`waypoint`]: waypoint networks (map data) and routes over them for long AI moves; the world
//!   part is in `world/waypoints.rs`.
//! - [`motion`]: how units follow their paths, checked against the grid and against each other,
//!   and the local movement around them: short-range detours, the push-apart, nudging and
//!   replanning, with every constant in [`motion::MotionSettings`].
//! - [`digest_tree`]: the per-component digests a turn's hash is made of, and [`digest_tree::locate`],
//!   which finds the component and the chunk or entity range where two peers diverged.
//! - [`snapshot`]: the byte format of a saved world.
//! - [`lookup`]: hash sets and maps for look-ups only, with a fixed hasher and no iteration.
//! - [`EntityId`], [`EntityAllocator`], [`SimRng`], [`state_hash`]: generational ids, the integer
//!   random generator and the canonical encoding everything hashed uses.
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

pub mod command;
pub mod digest_tree;
pub mod facing;
pub mod formation;
mod geom;
pub mod goal;
mod ids;
pub mod lookup;
pub mod motion;
mod rng;
pub mod settings;
pub mod snapshot;
mod spawn_order;
pub mod state_hash;
#[cfg(feature = "test-support")]
pub mod test_support;
pub mod unit;
mod units;
pub mod waypoint;
pub mod world;

// The embedding API, flat: what a game needs to make a world, step it and read what happened.
pub use command::{Command, CommandKind, Event, RejectReason};
pub use goal::GoalSpec;
pub use ids::{EntityAllocator, EntityId, PlayerId};
pub use motion::MotionSettings;
pub use rng::SimRng;
pub use settings::Settings;
pub use unit::{Unit, UnitState};
pub use world::{TurnReport, World};
// The game-rules API, `sim::rules` (it lives with the world, which calls it every turn).
pub use world::rules;
pub use world::rules::{Ctx, Modules, Rules, View};
