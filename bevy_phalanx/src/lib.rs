//! Bevy integration of the Phalanx lockstep core: a `sim::World` inside a Bevy app.
//!
//! [`PhalanxPlugin`] takes a world and puts it in the app as the [`SimWorld`] resource. Each
//! frame, the [`TurnClock`] adds the frame's `Time<Virtual>` delta and says how many turns are
//! due (the turn length is the world's `Settings::turn_ms`; why an own clock and not
//! `FixedUpdate` is in [`clock`]); each due turn runs the [`PhalanxTurn`] schedule, whose sets
//! run in this order:
//!
//! 1. [`PhalanxSet::Commands`]: the game's systems that queue commands for the turn about to be
//!    stepped (bots, a scenario script, commands received from the network) in the
//!    [`CommandQueue`];
//! 2. [`PhalanxSet::Step`]: the plugin takes the turn's commands from the queue, in
//!    `(turn, player, seq)` order, and steps the world with exactly them; the report goes into
//!    [`LastTurn`] and, with the commands, into a [`TurnStepped`] message;
//! 3. [`PhalanxSet::Mirror`]: every unit that appeared gets an entity with a [`SimUnit`] and a
//!    `Transform`, every unit that went loses its entity, and [`UnitEntities`] looks entities up by
//!    `EntityId`;
//! 4. [`PhalanxSet::Observe`]: the game's systems that read the turn's report.
//!
//! In `PostUpdate`, [`write_transforms`] moves every mirrored unit between the start and the end
//! of the last stepped turn at [`TurnClock::alpha`] ([`interpolate`]), never past its end.
//!
//! People's orders are issued from ordinary `Update` systems with [`CommandQueue::issue`], which
//! stamps them for the turn [`CommandQueue::input_delay`] turns after the next one, with the
//! player's next `seq`.
//!
//! # Determinism
//!
//! The frame rate decides only *when* a turn is stepped, never *what* it computes: every turn is
//! stepped with the commands queued for it, and nothing else reaches the world. The world is
//! read between turns, never changed outside [`PhalanxSet::Step`]. Floats appear only in
//! presentation (the alpha, `Transform`s), converted from fixed point at the edge; never turn a
//! float, a frame time or an entity into a command except on the one peer that issues it (a
//! click becomes fixed-point coordinates once). The rules a game must keep are
//! `docs/determinism.md`; the Bevy ones are `docs/bevy.md`.
//!
//! # Quick start
//!
//! A headless app stepping a small generated world; `Time<Virtual>` is advanced by hand, 40 ms
//! a frame.
//!
//! ```
//! use std::time::Duration;
//! use bevy::prelude::*;
//! use bevy::time::{TimePlugin, TimeUpdateStrategy};
//! use bevy_phalanx::{CommandQueue, PhalanxPlugin, SimWorld, UnitEntities};
//! use pathing::refworld::{RefWorldParams, generate};
//! use pathing::{Fixed, PassClass, WorldPos};
//! use sim::{CommandKind, PlayerId, Settings, World};
//!
//! let (desc, obstructions) = generate(&RefWorldParams::scaled(16, 1));
//! let world = World::new(desc, obstructions, Settings::default()).unwrap();
//!
//! let mut app = App::new();
//! app.add_plugins((TaskPoolPlugin::default(), TimePlugin, PhalanxPlugin::new(world)));
//! app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(40)));
//!
//! // Player 1 asks for two units; the command is stamped for turn 0 + the input delay.
//! let spawn = CommandKind::Spawn { class: PassClass::of(0), at: WorldPos::from_int(30, 30), count: 2, radius: Fixed::ONE / 2, speed: Fixed::from_num(8), turn_rate: None };
//! app.world_mut().resource_mut::<CommandQueue>().issue(PlayerId(1), spawn);
//!
//! // Two seconds at 25 frames a second are ten turns of 200 ms (Bevy's first update sees no
//! // time, hence one more frame).
//! for _ in 0..51 {
//!     app.update();
//! }
//! assert_eq!(app.world().resource::<SimWorld>().turn(), 10);
//! assert_eq!(app.world().resource::<UnitEntities>().len(), 2);
//! ```

use std::sync::Mutex;

use bevy::app::{App, Plugin, PostUpdate, RunFixedMainLoop, RunFixedMainLoopSystems};
use bevy::ecs::schedule::{IntoScheduleConfigs, Schedule, ScheduleLabel, SystemSet};
use bevy::prelude::{Message, MessageWriter, ResMut, Resource};
use bevy::time::{Time, Virtual};
use bevy::transform::TransformSystems;
use sim::{Command, TurnReport, World};

pub mod clock;
pub mod interpolate;
mod mirror;
mod queue;

pub use clock::TurnClock;
pub use interpolate::{MapPlane, MapProjection, Pose, pose_at, write_transforms};
pub use mirror::{SimUnit, UnitEntities, mirror_units};
pub use queue::{CommandQueue, Readiness, StaleCommand};

/// The input delay [`PhalanxPlugin::new`] starts with: commands issued while turn `t` is next
/// are stamped `t + 2` (400 ms at the default turn length), as `phalanx-examples` does.
pub const DEFAULT_INPUT_DELAY: u32 = 2;

/// The world, as a resource. Read it freely between turns (`Deref` to `sim::World`); only the
/// plugin steps it.
#[derive(Resource, Debug)]
pub struct SimWorld(World);

impl SimWorld {
    /// The world, to change what is not state (`World::set_threads`), or, before the first
    /// turn and on every peer alike, its setup (`World::set_waypoints`). Never change the state
    /// of a running game through it: every change goes through a command.
    pub fn world_mut(&mut self) -> &mut World {
        &mut self.0
    }
}

impl std::ops::Deref for SimWorld {
    type Target = World;
    fn deref(&self) -> &World {
        &self.0
    }
}

/// The report of the last stepped turn (`None` before the first).
#[derive(Resource, Debug, Default)]
pub struct LastTurn(pub Option<TurnReport>);

/// Sent after every stepped turn: its commands, as stepped, and its report (events, hash,
/// digest). What a game records in a replay or compares with its peers.
#[derive(Message, Clone, Debug)]
pub struct TurnStepped {
    /// The commands the turn was stepped with, in `(turn, player, seq)` order.
    pub commands: Vec<Command>,
    /// The turn's report.
    pub report: TurnReport,
}

/// The schedule run once per stepped turn (see the crate documentation for its sets).
#[derive(ScheduleLabel, Clone, Debug, PartialEq, Eq, Hash)]
pub struct PhalanxTurn;

/// The parts of a turn, in order, in the [`PhalanxTurn`] schedule.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PhalanxSet {
    /// The game's systems that queue commands for the turn about to be stepped.
    Commands,
    /// The step itself.
    Step,
    /// The mirror of units to entities.
    Mirror,
    /// The game's systems that read the turn's report.
    Observe,
}

/// The plugin: see the crate documentation.
pub struct PhalanxPlugin {
    /// The world, taken by `build` (a plugin is built once; a `Mutex` because `build` has
    /// `&self`).
    world: Mutex<Option<World>>,
    input_delay: u32,
    readiness: Readiness,
    max_turns_per_frame: u32,
    projection: MapProjection,
}

impl PhalanxPlugin {
    /// A plugin for `world`: a local game ([`Readiness::Always`]), [`DEFAULT_INPUT_DELAY`],
    /// [`clock::DEFAULT_MAX_TURNS_PER_FRAME`], 2D projection at one Bevy unit per metre.
    pub fn new(world: World) -> Self {
        Self {
            world: Mutex::new(Some(world)),
            input_delay: DEFAULT_INPUT_DELAY,
            readiness: Readiness::Always,
            max_turns_per_frame: clock::DEFAULT_MAX_TURNS_PER_FRAME,
            projection: MapProjection::default(),
        }
    }

    /// Stamps issued commands `turns` ahead of the next turn.
    #[must_use]
    pub fn with_input_delay(mut self, turns: u32) -> Self {
        self.input_delay = turns;
        self
    }

    /// When a due turn may be stepped ([`Readiness::Sealed`] for a networked game).
    #[must_use]
    pub fn with_readiness(mut self, readiness: Readiness) -> Self {
        self.readiness = readiness;
        self
    }

    /// Steps at most `turns` turns in one frame.
    #[must_use]
    pub fn with_max_turns_per_frame(mut self, turns: u32) -> Self {
        self.max_turns_per_frame = turns;
        self
    }

    /// Draws the map with `projection`.
    #[must_use]
    pub fn with_projection(mut self, projection: MapProjection) -> Self {
        self.projection = projection;
        self
    }
}

impl Plugin for PhalanxPlugin {
    fn build(&self, app: &mut App) {
        let world = self.world.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        let Some(world) = world else {
            // Added twice: the first instance holds the world.
            return;
        };
        app.insert_resource(TurnClock::new(world.settings().turn_ms).with_max_turns_per_frame(self.max_turns_per_frame))
            .insert_resource(CommandQueue::new(world.turn(), self.input_delay, self.readiness))
            .insert_resource(self.projection)
            .insert_resource(SimWorld(world))
            .init_resource::<LastTurn>()
            .init_resource::<UnitEntities>()
            .add_message::<TurnStepped>();
        let mut turn = Schedule::new(PhalanxTurn);
        turn.configure_sets((PhalanxSet::Commands, PhalanxSet::Step, PhalanxSet::Mirror, PhalanxSet::Observe).chain());
        turn.add_systems((step_world.in_set(PhalanxSet::Step), mirror_units.in_set(PhalanxSet::Mirror)));
        app.add_schedule(turn);
        app.add_systems(RunFixedMainLoop, run_due_turns.in_set(RunFixedMainLoopSystems::AfterFixedMainLoop));
        app.add_systems(PostUpdate, write_transforms.before(TransformSystems::Propagate));
    }
}

/// Runs [`PhalanxTurn`] once for every turn the clock says is due and the queue says is ready.
fn run_due_turns(world: &mut bevy::prelude::World) {
    let delta = world.get_resource::<Time<Virtual>>().map_or(std::time::Duration::ZERO, Time::delta);
    let due = world.resource_mut::<TurnClock>().advance(delta);
    for _ in 0..due {
        if !world.resource::<CommandQueue>().ready() {
            world.resource_mut::<TurnClock>().hold();
            break;
        }
        world.run_schedule(PhalanxTurn);
        world.resource_mut::<TurnClock>().stepped_one();
    }
}

/// Steps the world with the next turn's commands from the queue.
fn step_world(
    mut world: ResMut<SimWorld>,
    mut queue: ResMut<CommandQueue>,
    mut last: ResMut<LastTurn>,
    mut stepped: MessageWriter<TurnStepped>,
) {
    debug_assert_eq!(queue.next_turn(), world.turn(), "the queue follows the world's turns");
    let commands = queue.take_next();
    let report = world.0.step(&commands);
    stepped.write(TurnStepped { commands, report: report.clone() });
    last.0 = Some(report);
}
