//! The world and its turn: commands in, events and a state hash out.
//!
//! [`World::step`] runs one turn, in this order:
//!
//! 1. the turn's commands are applied in `(turn, player, seq)` order; a command that cannot be
//!    carried out gives [`Event::Rejected`] and changes nothing;
//! 2. obstruction, area and terrain changes are applied to the passability grids (dirty rectangles
//!    only, [`NavWorld::update`]); then the spawn orders waiting for room round a building try
//!    again, oldest first (`world/spawning.rs`);
//! 3. the oldest pending path requests are computed: long-range ones in order until the work of
//!    the searches taken reaches [`Settings::long_search_budget`] (the search that crosses it is
//!    kept; at most [`Settings::max_paths_per_turn`] searches), and the first
//!    [`crate::motion::MotionSettings::max_short_paths_per_turn`] short-range ones; in parallel
//!    when the world has worker threads (long-range searches in chunks of a fixed size, computed
//!    ahead and cut in request order), and their results applied in request order, so the outcome
//!    does not depend on the thread count; the rest wait, in order, for the next turn;
//! 4. units move ([`crate::motion`]), decided against the positions at the start of the step and
//!    committed in entity-id order; members of a moving formation walk towards the waypoints their
//!    formation gave them at the end of the previous turn;
//! 5. formations update their plans, in formation-id order (`world/formations.rs`): each moving
//!    formation's position advances along its generalised path (candidate positions, corners,
//!    finalising), its flow field is rebuilt when its trigger fires, and its members are
//!    given their next waypoints (towards their slots, or along the field). This comes after the
//!    units moved because everything it decides depends on where
//!    the members now stand (their average position, whether a member still lags or has reached
//!    its slot, whether its straight line to its slot is clear), and because the waypoints it
//!    hands out are then walked in the next turn's step 4 from exactly those positions; a path
//!    the formation asks for is queued for the next turn's step 3, like a unit's; then the units
//!    whose waypoint-route leg failed this turn are routed again, once (`world/waypoints.rs`);
//! 6. the state digest is computed.
//!
//! `step` cannot fail and never panics on any command: everything it does is a pure function of
//! the state and the commands.

use pathing::passability::{NavWorld, Obstruction, ObstructionFlags, ObstructionId, WorldDesc, WorldError};
use pathing::{CellRect, Fixed, Goal, Navcell, PassClass, PathStatus, SearchLimits, Square, WorldPos};
use serde::{Deserialize, Serialize};

use crate::command::{Command, CommandKind, Event, GoalSpec, IdKind, PlayerId, RangeKind, RejectReason, Target, WorldRefusal};
use crate::digest_tree::{Digest, DigestReport, GridDigests, RangeDigests, StateDigest, range_digest_bytes, range_indices};
use crate::formation::{Formation, FormationId};
use crate::geom::{centre, grid_navcell};
use crate::ids::{EntityAllocator, EntityId};
use crate::motion::{MotionParts, Steering};
use crate::rng::SimRng;
use crate::snapshot::{SnapshotError, StateParts};
use crate::state_hash;
use crate::unit::{unit_digest_bytes, unit_static_bytes};
use crate::units::UnitStore;
use rules::{DynGame, Modules, Rules};

// The types a world is made of; `lib.rs` re-exports them flat from the crate root.
pub(crate) use crate::settings::{MAX_LONG_SEARCH_BUDGET, SEARCH_BASE_WORK, Settings};
pub(crate) use crate::unit::{PathRequest, Unit, UnitState};

mod formations;
mod held;
mod jobs;
#[cfg(test)]
mod parallel_motion_tests;
mod plan;
mod query;
pub use query::{PathQuery, QueryRefusal};
#[cfg(test)]
mod push_apart_tests;
pub mod rules;
mod spawning;
#[cfg(feature = "desync-hook")]
mod testing;
#[cfg(test)]
mod unit_state_tests;
mod waypoints;

pub use held::HELD_NODE_BUDGET;
pub use plan::RANGE_EPSILON;
pub use spawning::{MAX_SPAWN_COUNT, MAX_SPAWN_ORDERS_PER_PLAYER, POINT_SPAWN_RINGS};

/// Most orders a unit may hold; a command that would give one more is refused (`OutOfRange`),
/// and a snapshot with more is refused. Bounds a unit's state, and with it snapshots and keyframes.
pub const MAX_ORDERS: usize = 128;

/// Node budget of one long-range search: enough for any path on a 1024 × 1024 grid with room to
/// spare; a search that runs out returns a partial path and the unit asks again from its end.
pub const PATH_NODE_BUDGET: u32 = 1 << 20;

/// The phases of a turn, in order, as reported by [`World::step_observed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Commands applied.
    Commands,
    /// Passability grids and their digests updated.
    Grid,
    /// Path requests computed and applied.
    Paths,
    /// Units moved.
    Motion,
    /// Formations updated their plans.
    Formations,
    /// The game's rules ran ([`rules::Rules::step`]); only in a world with a game.
    Rules,
    /// State digest computed: the core's components (the game's are [`Phase::GameHash`]).
    Hash,
    /// The game's digest components brought up to date; only in a world with a game.
    GameHash,
}

/// What one turn did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnReport {
    /// The turn that was stepped.
    pub turn: u32,
    /// What happened, in order.
    pub events: Vec<Event>,
    /// The state hash at the end of the turn.
    pub hash: [u8; 32],
    /// The component roots it was made from, in the world's fixed order.
    pub digest: StateDigest,
    /// Which events each command caused: its `(turn, player, seq)` and the range `start..end` of
    /// `events` it added (its rejection, the units it spawned, …), in application order.
    pub caused: Vec<((u32, PlayerId, u32), u32, u32)>,
}

/// The simulation state.
///
/// Its fields fall in three parts (docs/decisions.md, "The world keeps state, derived data and
/// scratch apart"): the state itself, which is saved and hashed and from which everything else
/// follows; `Derived` data (digests and caches), a function of the state, rebuilt on load and
/// never saved; and `Scratch`, the turn's notes and the search workspaces, which no result
/// depends on.
#[derive(Debug)]
pub struct World {
    settings: Settings,
    turn: u32,
    /// The passability: the map's description and obstructions (state) with the grids, hierarchy
    /// and tables built from them (derived, kept by `NavWorld` itself).
    nav: NavWorld,
    /// The units and their entity ids; every change to a unit goes through it and is noted for
    /// the digests.
    units: UnitStore,
    next_obstruction: u32,
    rng: SimRng,
    requests: Vec<PathRequest>,
    /// The formations, their path requests and the next formation id; every change goes through
    /// it and is noted for the digest.
    formations: formations::FormationStore,
    /// Waypoint networks (state) with their graphs (derived) and the players' priority tables
    /// (state).
    waypoints: waypoints::Waypoints,
    /// Building spawn orders waiting for room.
    spawns: spawning::SpawnQueue,
    /// The game's rule modules and their state ([`crate::rules`]), in step order; empty for a
    /// world without a game. A module running (and so holding the world) is taken out of its
    /// slot meanwhile.
    games: Vec<Option<Box<dyn DynGame>>>,
    /// Loads a snapshot with these modules ([`World::load_like`]); `None` without a game.
    loader: Option<std::sync::Arc<dyn rules::Loader>>,
    derived: Derived,
    scratch: Scratch,
    /// Worker threads for path requests, the world's own ([`World::set_threads`]) or shared with
    /// the caller ([`World::set_pool`]); not state: results never depend on it.
    pool: Option<std::sync::Arc<rayon::ThreadPool>>,
}

/// What the world computes from its state and keeps: never saved, rebuilt on load, and equal
/// after every turn to what a rebuild from the state gives ([`World::state_digest_from_scratch`]).
#[derive(Debug)]
struct Derived {
    /// Digests of the passability grid per 64 × 64 chunk, updated per dirty rectangle.
    grid_digests: GridDigests,
    /// Digests of the units per range of 64 entity indices, updated for the units the store noted.
    unit_digests: RangeDigests,
    /// Digest of the terrain and area states, recomputed when they change.
    geometry_digest: Digest,
    /// Digest of the obstruction list, recomputed when it changes.
    obstruction_digest: Digest,
    /// Digest of the entity allocator, recomputed when ids were allocated or freed.
    ids_digest: Digest,
    /// Per unit slot, the fields that change only with orders and paths (id, owner, class,
    /// radius, speed, orders, path digest) and an 8-byte digest of their bytes
    /// ([`unit_static_bytes`]), recomputed when a touched unit's fields differ; the range digests
    /// hash it with the fields that change as units move.
    unit_static: Vec<(Option<crate::unit::StaticFields>, [u8; 8])>,
    /// Each formation's flow field as built, rebuilt from the formation's saved inputs whenever it
    /// is missing (after a load) or the grid changed under it.
    fields: std::collections::BTreeMap<FormationId, formations::CachedField>,
    /// Digest of the formations component, recomputed when the store noted a change.
    formations_digest: Digest,
    /// Digest of the waypoints component, recomputed when a net, table or route changes.
    waypoints_digest: Digest,
    /// The state digest of the state as it is, made current by [`World::refresh_digest`] at the
    /// end of everything that changes the state (`new`, `load`, `step` and the few public changes
    /// outside a turn), so that reading it never needs `&mut self`.
    digest: StateDigest,
}

impl Derived {
    /// The derived data of a world with this passability and nothing else yet; the caller brings
    /// the rest up to date with [`World::refresh_digest`].
    fn new(nav: &NavWorld) -> Self {
        Self {
            grid_digests: GridDigests::build(nav.grid()),
            unit_digests: RangeDigests::new("units"),
            geometry_digest: geometry_digest(nav),
            obstruction_digest: obstruction_digest(nav),
            ids_digest: state_hash::digest("ids", &EntityAllocator::default()),
            unit_static: Vec::new(),
            fields: std::collections::BTreeMap::new(),
            formations_digest: formations::FormationStore::default().digest(),
            waypoints_digest: waypoints::Waypoints::default().digest(),
            digest: StateDigest::new(0, Vec::new()),
        }
    }
}

/// What a turn notes for its later phases, and the search workspaces: never saved or hashed, and
/// no result depends on it.
#[derive(Debug)]
struct Scratch {
    /// Search workspace per worker thread (index 0 also serves the calling thread), kept across
    /// turns so that a query allocates nothing.
    workspaces: Vec<std::sync::Mutex<jobs::Workspace>>,
    /// Navcell rectangles updated earlier in this turn (by `sync_grid`), for the grid digests.
    turn_rects: Vec<CellRect>,
    /// A terrain edit or area toggle happened this turn.
    geometry_changed: bool,
    /// Counters of the last turn's path phase (for benchmarks and profilers).
    path_stats: PathStats,
    /// Order latency and path scheduling counters since the world was made or loaded.
    scale: ScaleStats,
    /// Units given an order that have not walked since, with the turn the order was applied
    /// (the first of several, if they were ordered again before walking).
    awaiting: std::collections::BTreeMap<EntityId, u32>,
    /// Units given an order whose first path request has not been served since, likewise.
    unanswered: std::collections::BTreeMap<EntityId, u32>,
    /// The units that walked in this turn's motion phase, in the order they moved.
    walked: Vec<EntityId>,
    /// The navcell rectangles the grid changed in this turn, for the formation phase.
    turn_dirty: Vec<CellRect>,
    /// Game actions taken so far this turn, for their `seq` ([`rules::ACTION_SEQ_BASE`]); zero
    /// between turns.
    actions: u32,
    /// Order groups handed out so far this turn ([`Unit::order_group`]); zero between turns.
    order_groups: u32,
    /// The navcell rectangles the game's actions changed after the formation phase, which the
    /// next turn's formation phase must see (a loaded world rebuilds every field).
    carried_dirty: Vec<CellRect>,
    /// The unit slots in the push-apart's sweep order at the end of the last turn: where the next
    /// turn's sort starts, as units move little in a turn. Only a starting point: the sweep order
    /// is total, so any start (an empty one after a load) gives the same order.
    sweep_order: Vec<u32>,
    /// How many times a helper thread of the path phase finds no job before it sleeps
    /// ([`World::set_helper_spins`]).
    helper_spins: u32,
    /// Whether the pool's other threads stay awake through the motion step
    /// ([`World::set_motion_awake`]).
    motion_awake: bool,
}

impl Scratch {
    fn new(threads: usize) -> Self {
        Self {
            workspaces: jobs::workspaces(threads),
            turn_rects: Vec::new(),
            geometry_changed: false,
            path_stats: PathStats::default(),
            scale: ScaleStats::default(),
            awaiting: std::collections::BTreeMap::new(),
            unanswered: std::collections::BTreeMap::new(),
            walked: Vec::new(),
            turn_dirty: Vec::new(),
            actions: 0,
            order_groups: 0,
            carried_dirty: Vec::new(),
            sweep_order: Vec::new(),
            helper_spins: plan::HELPER_SPINS,
            motion_awake: true,
        }
    }
}

/// What the path phase of a turn computed: counters for benchmarks and profilers, never state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathStats {
    /// Long-range searches.
    pub long: u32,
    /// Work of the long-range searches taken (nodes expanded plus
    /// [`SEARCH_BASE_WORK`] each), which [`Settings::long_search_budget`] bounds.
    pub long_work: u64,
    /// Long-range searches computed ahead in the parallel batch, then dropped because they fell
    /// after the turn's cutoff (they are made again on a later turn); not counted in `long`.
    /// Always 0 on one thread, which computes one search at a time; on more it depends on the
    /// batching, so unlike the rest it may differ between thread counts.
    pub discarded: u32,
    /// Short-range searches (a retry without the standing units counts again).
    pub short: u32,
    /// Vertices the short-range searches expanded.
    pub short_expanded: u64,
    /// Long-range requests served by another unit's search (docs/pathfinding-rules.md, "Shared
    /// searches"), not counted in `long`.
    pub shared: u32,
}

/// Order latency and path scheduling since the world was made or loaded (docs/decisions.md,
/// "Scale counters are counted in turns but are not state"): the same on every machine and thread
/// count, but never saved or hashed, so a loaded world counts from zero.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScaleStats {
    /// Order latency: `latency[t]` ordered units took their first step `t` turns after their order
    /// was applied (0: in the same turn). A unit still waiting counts at the turns it has waited
    /// so far; a unit whose order ended (arrived, failed, stopped) or that was removed before it
    /// walked does not count.
    pub latency: Vec<u64>,
    /// Of those, the units still waiting for their first step.
    pub waiting: u64,
    /// Path latency: `answered[t]` ordered units had their first path request served `t` turns
    /// after their order was applied, counted as [`ScaleStats::latency`] is (a unit whose order
    /// ended first, or that was removed, does not count). It differs from the order latency by
    /// the turns a unit with a path stood blocked by standing units before its first step.
    pub answered: Vec<u64>,
    /// The most long-range path requests (units' and formations') waiting at the start of a
    /// turn's path phase.
    pub max_queue: u32,
    /// Long-range searches made.
    pub long_searches: u64,
    /// Of those, searches round passages held by other players' standing units
    /// (docs/motion-rules.md, "Passages held by other players").
    pub held_searches: u64,
    /// Their work ([`PathStats::long_work`]).
    pub long_work: u64,
    /// The most long-range search work taken in one turn.
    pub max_turn_work: u64,
    /// Long-range requests served by another unit's search.
    pub shared_paths: u64,
    /// Unit steps: the units that walked, summed over the turns (a unit counts in a turn when
    /// its own walk moved it; formation members and pushed units do not). A turn's cost grows
    /// with its walking units, so a workload's turn time per walking unit is what compares.
    pub unit_steps: u64,
}

impl ScaleStats {
    /// Ordered units counted in [`ScaleStats::latency`].
    pub fn ordered(&self) -> u64 {
        self.latency.iter().sum()
    }

    /// The latency in turns that at least `per_mille`/1000 of the counted units took or bettered
    /// (the nearest-rank quantile; 1000 is the maximum), or `None` when no unit was counted.
    pub fn latency_quantile(&self, per_mille: u32) -> Option<u32> {
        quantile(&self.latency, per_mille)
    }

    /// [`ScaleStats::latency_quantile`] of the path latency ([`ScaleStats::answered`]).
    pub fn answered_quantile(&self, per_mille: u32) -> Option<u32> {
        quantile(&self.answered, per_mille)
    }

    fn count(&mut self, turns: u32) {
        count_in(&mut self.latency, turns);
    }
}

/// The nearest-rank quantile `per_mille`/1000 of a histogram by turns, `None` when it is empty.
fn quantile(histogram: &[u64], per_mille: u32) -> Option<u32> {
    let n: u64 = histogram.iter().sum();
    if n == 0 {
        return None;
    }
    let rank = (u128::from(n) * u128::from(per_mille.min(1000))).div_ceil(1000).max(1);
    let mut seen = 0u128;
    for (t, &count) in histogram.iter().enumerate() {
        seen += u128::from(count);
        if seen >= rank {
            return Some(t as u32);
        }
    }
    None
}

fn count_in(histogram: &mut Vec<u64>, turns: u32) {
    let t = turns as usize;
    if histogram.len() <= t {
        histogram.resize(t + 1, 0);
    }
    histogram[t] += 1;
}

/// Why a world could not be made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetupError {
    /// The geometry was refused.
    World(WorldError),
    /// A setting is out of range.
    Settings(String),
    /// The world is larger than a snapshot may hold ([`crate::snapshot::MAX_GRID_CELLS`], or its
    /// jump or landmark tables over their limits), so it could be saved but never loaded.
    Limits(String),
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SetupError::World(e) => write!(f, "{e}"),
            SetupError::Settings(e) => write!(f, "settings: {e}"),
            SetupError::Limits(e) => write!(f, "world too large to save and load: {e}"),
        }
    }
}

impl std::error::Error for SetupError {}

impl World {
    /// A world at turn 0 with the given geometry, initial obstructions (ids as given; later ones
    /// are numbered after the largest) and settings.
    ///
    /// # Errors
    /// [`SetupError`] when the geometry or a setting is refused, or when the world could not be
    /// loaded again once saved ([`SetupError::Limits`]).
    pub fn new(desc: WorldDesc, obstructions: Vec<(ObstructionId, Obstruction)>, settings: Settings) -> Result<Self, SetupError> {
        if !(1..=10_000).contains(&settings.turn_ms) {
            return Err(SetupError::Settings(format!("turn length {} ms outside 1..=10000", settings.turn_ms)));
        }
        if settings.max_paths_per_turn == 0 {
            return Err(SetupError::Settings("max_paths_per_turn must be at least 1".into()));
        }
        if !(1..=MAX_LONG_SEARCH_BUDGET).contains(&settings.long_search_budget) {
            return Err(SetupError::Settings(format!(
                "long_search_budget {} outside 1..={}",
                settings.long_search_budget, MAX_LONG_SEARCH_BUDGET
            )));
        }
        settings.motion.check().map_err(|e| SetupError::Settings(e.to_string()))?;
        crate::snapshot::check_limits(desc.grid.width, desc.grid.height, desc.jump_table_classes, desc.landmark_classes)
            .map_err(|(what, e)| SetupError::Limits(format!("{what}: {e}")))?;
        // Ids run upwards from one past the largest initial id; `u32::MAX` is never handed out and
        // marks that the ids are exhausted.
        let next_obstruction = obstructions.iter().map(|(id, _)| id.0.saturating_add(1)).max().unwrap_or(1);
        let nav = NavWorld::build(desc, obstructions).map_err(SetupError::World)?;
        let mut world = Self {
            derived: Derived::new(&nav),
            scratch: Scratch::new(1),
            settings,
            turn: 0,
            nav,
            units: UnitStore::default(),
            next_obstruction,
            rng: SimRng::new(settings.seed),
            requests: Vec::new(),
            formations: formations::FormationStore::default(),
            waypoints: waypoints::Waypoints::default(),
            spawns: spawning::SpawnQueue::default(),
            games: Vec::new(),
            loader: None,
            pool: None,
        };
        world.refresh_digest();
        Ok(world)
    }

    /// A world with a game's rules ([`crate::rules`]): [`World::new`], with the game's state for
    /// every player and its digest components after the core's.
    ///
    /// # Errors
    /// As [`World::new`], and [`SetupError::Settings`] for a ruleset name that is not 1 to 32
    /// bytes of `a-z`, `0-9`, `-` and `_`.
    pub fn with_rules<M: Modules>(
        desc: WorldDesc,
        obstructions: Vec<(ObstructionId, Obstruction)>,
        settings: Settings,
        rules: M,
    ) -> Result<Self, SetupError> {
        let list = M::list();
        for (k, (name, _)) in list.iter().enumerate() {
            if !rules::valid_name(name) {
                return Err(SetupError::Settings(format!("rule module name {name:?} is not 1 to 32 bytes of a-z, 0-9, - and _")));
            }
            if list[..k].iter().any(|(other, _)| other == name) {
                return Err(SetupError::Settings(format!("two rule modules are named {name:?}")));
            }
        }
        let mut world = Self::new(desc, obstructions, settings)?;
        world.games = rules.clone().start(settings.players).into_iter().map(|m| Some(m.0)).collect();
        world.loader = Some(std::sync::Arc::new(rules::LoaderOf(rules)));
        world.refresh_digest();
        Ok(world)
    }

    /// The name and version of each of the world's rule modules, in step order (empty for a
    /// world without a game).
    pub fn rules_names(&self) -> Vec<(&'static str, u32)> {
        self.games.iter().flatten().map(|g| (g.name(), g.version())).collect()
    }

    /// Read access to rule module `R`'s state, when the world has it (and it is not the module
    /// running now).
    pub fn game<R: Rules>(&self) -> Option<rules::View<'_, R>> {
        self.games.iter().flatten().find_map(|g| rules::View::of(self, g.as_ref()))
    }

    /// Takes the module whose state has type `type_id` out of its slot, with the slot.
    pub(crate) fn take_module(&mut self, type_id: std::any::TypeId) -> Option<(usize, Box<dyn DynGame>)> {
        let slot = self.games.iter().position(|g| g.as_ref().is_some_and(|g| g.as_any().type_id() == type_id))?;
        Some((slot, self.games[slot].take()?))
    }

    /// Takes the module of a slot out of it (`None`: none there, or it is running).
    pub(crate) fn take_module_at(&mut self, slot: usize) -> Option<Box<dyn DynGame>> {
        self.games.get_mut(slot)?.take()
    }

    /// Puts a module taken out back in its slot.
    pub(crate) fn put_module(&mut self, slot: usize, module: Box<dyn DynGame>) {
        self.games[slot] = Some(module);
    }

    /// How many rule modules the world has.
    pub(crate) fn module_count(&self) -> usize {
        self.games.len()
    }

    /// Gives every module not running its state for the units created since it last ran.
    fn sync_modules(&mut self) {
        for slot in 0..self.games.len() {
            if let Some(mut game) = self.games[slot].take() {
                game.sync_units(self);
                self.games[slot] = Some(game);
            }
        }
    }

    /// Every entity slot, for the game's bookkeeping.
    pub(crate) fn unit_slots(&self) -> &[Option<Unit>] {
        self.units.slots()
    }

    /// A count that changes whenever a unit is created or removed ([`UnitStore::id_epoch`]).
    pub(crate) fn id_epoch(&self) -> u64 {
        self.units.id_epoch()
    }

    /// The `seq` of the next game action this turn.
    pub(crate) fn next_action_seq(&mut self) -> u32 {
        let seq = rules::ACTION_SEQ_BASE.saturating_add(self.scratch.actions);
        self.scratch.actions = self.scratch.actions.saturating_add(1);
        seq
    }

    /// A game action: a core command applied now, with a command's validation.
    pub(crate) fn apply_action(&mut self, command: &Command, events: &mut Vec<Event>) -> Result<(), RejectReason> {
        self.apply_checked(command, events, false)
    }

    /// Computes path requests on `threads` worker threads (1 or 0: on the calling thread). The
    /// results are the same for any count.
    ///
    /// # Errors
    /// [`crate::Error::Threads`] when the thread pool cannot start.
    pub fn set_threads(&mut self, threads: usize) -> Result<(), crate::Error> {
        if threads <= 1 {
            self.scratch.workspaces = jobs::workspaces(1);
            self.pool = None;
        } else {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .map_err(|e| crate::Error::Threads { message: e.to_string() })?;
            self.set_pool(std::sync::Arc::new(pool));
        }
        Ok(())
    }

    /// How many times a helper thread of the path phase may find no job to take before it sleeps
    /// until one is posted (1,024 by default, about 10–50 µs of spinning); `u32::MAX` keeps
    /// helpers spinning for the whole phase, as before. Only time changes: which thread computes
    /// a job never changes its result.
    pub fn set_helper_spins(&mut self, spins: u32) {
        self.scratch.helper_spins = spins;
    }

    /// Whether, while the motion step runs with a pool, the pool's other threads stay awake
    /// between the step's parallel parts, spinning (and yielding to the system every 64 spins)
    /// until the step ends, instead of going to sleep after each part and being woken for the
    /// next (true by default: a woken thread starts tens of microseconds to a millisecond late;
    /// on the 2-core machine the 40,000-unit turn took 0.80 of one thread's time awake and 0.86
    /// asleep, the 10,000-unit one 0.82 and 0.81; BENCHMARKS.md, "Two threads (issue 39)").
    /// The cost is a thread spinning through the step's parts that run on one thread. Only time
    /// changes: which thread runs a task never changes the result.
    pub fn set_motion_awake(&mut self, awake: bool) {
        self.scratch.motion_awake = awake;
    }

    /// Computes path requests on the caller's thread pool, shared with the rest of the game (and
    /// with other worlds) instead of threads of the world's own; the world keeps one search
    /// workspace per thread of the pool. The results are the same for any pool, as for any thread
    /// count (docs/decisions.md, "The caller may lend the world its thread pool").
    pub fn set_pool(&mut self, pool: std::sync::Arc<rayon::ThreadPool>) {
        self.scratch.workspaces = jobs::workspaces(pool.current_num_threads());
        self.pool = Some(pool);
    }

    /// Counters of the last turn's path phase.
    pub fn path_stats(&self) -> PathStats {
        self.scratch.path_stats
    }

    /// Order latency and path scheduling counters since the world was made or loaded, the units
    /// still waiting for their first step counted at the turns waited so far ([`ScaleStats`]).
    pub fn scale_stats(&self) -> ScaleStats {
        let mut stats = self.scratch.scale.clone();
        for &since in self.scratch.awaiting.values() {
            stats.count(self.turn.saturating_sub(since));
            stats.waiting += 1;
        }
        for &since in self.scratch.unanswered.values() {
            count_in(&mut stats.answered, self.turn.saturating_sub(since));
        }
        stats
    }

    /// Counts the first paths served by this turn's path phase (the ordered units no longer
    /// waiting for one) and forgets the ordered units whose order ended without one.
    fn note_first_paths(&mut self) {
        if self.scratch.unanswered.is_empty() {
            return;
        }
        let (units, turn) = (&self.units, self.turn);
        let scale = &mut self.scratch.scale;
        self.scratch.unanswered.retain(|&id, &mut since| match units.get(id) {
            Some(u) if u.state == UnitState::WaitingForPath => true,
            Some(u) if !u.orders.is_empty() || u.state != UnitState::Idle => {
                count_in(&mut scale.answered, turn - since);
                false
            }
            // Removed, or its order ended before a path was served.
            _ => false,
        });
    }

    /// Counts the first steps of the units that walked this turn and forgets the ordered units
    /// whose order ended without one.
    fn note_first_steps(&mut self) {
        let walked = std::mem::take(&mut self.scratch.walked);
        self.scratch.scale.unit_steps += walked.len() as u64;
        if self.scratch.awaiting.is_empty() {
            return;
        }
        for id in &walked {
            if let Some(since) = self.scratch.awaiting.remove(id) {
                self.scratch.scale.count(self.turn - since);
            }
        }
        let units = &self.units;
        self.scratch.awaiting.retain(|&id, _| units.get(id).is_some_and(|u| !u.orders.is_empty()));
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The next turn to be stepped.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// The passability of the world.
    pub fn nav(&self) -> &NavWorld {
        &self.nav
    }

    /// A live unit.
    pub fn unit(&self, id: EntityId) -> Option<&Unit> {
        self.units.get(id)
    }

    /// Whether `id` named a unit that has since been removed (as against an id never issued).
    pub fn unit_removed(&self, id: EntityId) -> bool {
        self.units.ids().was_freed(id)
    }

    /// Every live unit, in id order.
    pub fn units(&self) -> impl Iterator<Item = &Unit> + '_ {
        self.units.iter()
    }

    /// Pending path requests, in the order they will be computed.
    pub fn requests(&self) -> &[PathRequest] {
        &self.requests
    }

    /// Runs one turn with the commands scheduled for it (any order; commands of other turns are
    /// rejected). See the module documentation.
    pub fn step(&mut self, commands: &[Command]) -> TurnReport {
        self.step_observed(commands, &mut |_| {})
    }

    /// [`World::step`], calling `observe` as each phase of the turn ends (for profilers and
    /// benchmarks; the simulation itself never reads a clock).
    pub fn step_observed(&mut self, commands: &[Command], observe: &mut dyn FnMut(Phase)) -> TurnReport {
        let mut events = Vec::new();
        self.waypoints.start_turn();
        let mut ordered: Vec<&Command> = commands.iter().collect();
        ordered.sort_by_key(|c| c.order_key());
        let mut caused = Vec::with_capacity(ordered.len());
        for command in ordered {
            let start = events.len() as u32;
            if let Err(reason) = self.apply(command, &mut events) {
                events.push(Event::Rejected { command: command.order_key(), reason });
            }
            caused.push((command.order_key(), start, events.len() as u32));
        }
        observe(Phase::Commands);
        let mut dirty = std::mem::take(&mut self.scratch.carried_dirty);
        dirty.extend(self.settle_grid());
        self.scratch.turn_dirty = dirty;
        self.retry_spawns(&mut events);
        observe(Phase::Grid);
        self.compute_paths(&mut events);
        self.note_first_paths();
        observe(Phase::Paths);
        // On the pool's thread, so the motion step's parallel parts start no hand-off of their own.
        match self.pool.clone() {
            Some(pool) if !self.scratch.motion_awake => pool.install(|| crate::motion::move_units(self.parts_mut(), &mut events)),
            Some(pool) => pool.install(|| {
                // Not scoped: the step never waits for a thread of a lent pool that is busy with
                // the game's own work; such a thread's job finds the step done and returns.
                let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
                let me = rayon::current_thread_index();
                let flag = std::sync::Arc::clone(&done);
                pool.spawn_broadcast(move |ctx| {
                    if Some(ctx.index()) != me {
                        keep_awake(&flag);
                    }
                });
                // Set when the step ends, even by a panic, so no helper spins on.
                struct Done(std::sync::Arc<std::sync::atomic::AtomicBool>);
                impl Drop for Done {
                    fn drop(&mut self) {
                        self.0.store(true, std::sync::atomic::Ordering::Release);
                    }
                }
                let _done = Done(done);
                crate::motion::move_units(self.parts_mut(), &mut events);
            }),
            None => crate::motion::move_units(self.parts_mut(), &mut events),
        }
        self.note_first_steps();
        observe(Phase::Motion);
        self.update_formations(&mut events);
        self.follow_up_routes(&mut events);
        observe(Phase::Formations);
        if !self.games.is_empty() {
            for slot in 0..self.games.len() {
                let Some(mut game) = self.games[slot].take() else { continue };
                game.sync_units(self);
                game.step(self, &mut events);
                game.sync_units(self);
                self.games[slot] = Some(game);
            }
            // Units a later module created get the earlier modules' state before the digest.
            self.sync_modules();
            // The game's grid changes count in this turn's digest, and in the next turn's
            // formation phase.
            let changed = self.settle_grid();
            self.scratch.carried_dirty.extend(changed);
            observe(Phase::Rules);
        }
        self.scratch.actions = 0;
        self.scratch.order_groups = 0;
        let stepped = self.turn;
        self.turn = self.turn.wrapping_add(1);
        // The digest covers the state after the turn, whose turn counter is the next turn.
        self.refresh_digest_observed(observe);
        TurnReport { turn: stepped, events, hash: self.derived.digest.hash, digest: self.derived.digest.clone(), caused }
    }

    /// Applies the pending changes to the passability grids (obstructions, areas, terrain) and
    /// brings their digests up to date; returns the navcell rectangles that changed this way or
    /// earlier in the turn (spawns sync the grid before placing units).
    fn settle_grid(&mut self) -> Vec<CellRect> {
        let obstructions_changed = self.nav.has_pending() || !self.scratch.turn_rects.is_empty();
        let terrain_changed = std::mem::take(&mut self.scratch.geometry_changed);
        let mut dirty = std::mem::take(&mut self.scratch.turn_rects);
        let fresh = self.nav.update();
        self.update_waypoint_graphs(&fresh);
        dirty.extend(fresh);
        self.derived.grid_digests.update(self.nav.grid(), &dirty);
        if obstructions_changed {
            self.derived.obstruction_digest = obstruction_digest(&self.nav);
        }
        if terrain_changed {
            self.derived.geometry_digest = geometry_digest(&self.nav);
        }
        dirty
    }

    /// The 32-byte hash of everything that can influence the future (see [`World::state_digest`]).
    pub fn state_hash(&self) -> [u8; 32] {
        self.derived.digest.hash
    }

    /// The state digest: the roots of the components, in this fixed order, and the turn hash over
    /// them. Large components are trees (the grid by 64 × 64 chunks, units by ranges of 64 entity
    /// indices) whose leaves are recomputed only where something changed, so two peers can compare
    /// roots, then leaves ([`World::digest_reports`], [`crate::digest_tree::locate`]), to find the
    /// diverging component, chunk or entity range.
    ///
    /// It is always current: every change to the state ends by bringing it up to date.
    pub fn state_digest(&self) -> StateDigest {
        self.derived.digest.clone()
    }

    /// Brings the state digest up to date with the state: recomputes the leaves marked dirty since
    /// the last time, then the roots and the turn hash.
    fn refresh_digest(&mut self) {
        self.refresh_digest_observed(&mut |_| {});
    }

    /// [`World::refresh_digest`], telling `observe` when the core's components are done
    /// ([`Phase::Hash`]) and then the game's ([`Phase::GameHash`]).
    fn refresh_digest_observed(&mut self, observe: &mut dyn FnMut(Phase)) {
        if self.waypoints.take_changed() {
            self.derived.waypoints_digest = self.waypoints.digest();
        }
        if self.formations.take_changed() {
            self.derived.formations_digest = self.formations.digest();
        }
        if self.units.take_ids_changed() {
            self.derived.ids_digest = state_hash::digest("ids", self.units.ids());
        }
        // The units the store noted as touched: their ranges are hashed again, and their fixed
        // part only when its bytes changed.
        let mut bytes = Vec::with_capacity(128);
        for index in self.units.take_touched() {
            self.derived.unit_digests.mark(index);
            let slot = index as usize;
            let Some(unit) = self.units.slots().get(slot).and_then(Option::as_ref) else { continue };
            if self.derived.unit_static.len() <= slot {
                self.derived.unit_static.resize(self.units.slots().len().max(slot + 1), (None, [0; 8]));
            }
            let cached = &mut self.derived.unit_static[slot];
            if !cached.0.as_ref().is_some_and(|fields| fields.matches(unit)) {
                bytes.clear();
                unit_static_bytes(unit, &mut bytes);
                cached.1.copy_from_slice(&blake3::hash(&bytes).as_bytes()[..8]);
                cached.0 = Some(crate::unit::StaticFields::of(unit));
            }
        }
        // Each range's leaf reads only its units, so a turn of many changed ranges hashes them
        // on the pool; the leaves are set in range order either way.
        let dirty = self.derived.unit_digests.take_dirty();
        let (slots, statics) = (self.units.slots(), &self.derived.unit_static);
        let leaf = |range: u32| {
            let mut bytes = Vec::with_capacity(64 * 128);
            for unit in range_indices(range).into_iter().flatten().filter_map(|i| slots.get(i as usize).and_then(Option::as_ref)) {
                let fixed_part = statics.get(unit.id.index as usize).map(|s| s.1).unwrap_or_default();
                unit_digest_bytes(unit, &fixed_part, &mut bytes);
            }
            (range, range_digest_bytes("units", range, &bytes))
        };
        let leaves: Vec<(u32, Digest)> = match self.pool.as_deref() {
            Some(pool) if pool.current_num_threads() > 1 && dirty.len() >= PARALLEL_HASH_RANGES => {
                use rayon::prelude::*;
                pool.install(|| dirty.par_iter().map(|&range| leaf(range)).collect())
            }
            _ => dirty.iter().map(|&range| leaf(range)).collect(),
        };
        for (range, digest) in leaves {
            self.derived.unit_digests.set_range(range, digest);
        }
        let small = |name: &str, d: Digest| (name.to_owned(), d);
        let mut components = vec![
            small("settings", state_hash::digest("settings", &self.settings)),
            small("rng", state_hash::digest("rng", &self.rng)),
            small("ids", self.derived.ids_digest),
            small("units", self.derived.unit_digests.root()),
            small("formations", self.derived.formations_digest),
            small("waypoints", self.derived.waypoints_digest),
            small("spawns", self.spawns.digest()),
            small("requests", state_hash::digest("requests", &(&self.requests, self.next_obstruction))),
            small("obstructions", self.derived.obstruction_digest),
            small("geometry", self.derived.geometry_digest),
            small("passability", self.derived.grid_digests.root()),
        ];
        observe(Phase::Hash);
        if !self.games.is_empty() {
            for game in self.games.iter_mut().flatten() {
                components.extend(game.components());
            }
            observe(Phase::GameHash);
        }
        self.derived.digest = StateDigest::new(self.turn, components);
    }

    /// The state digest computed from scratch, ignoring every cached leaf: the oracle the
    /// incremental [`World::state_digest`] must always equal.
    pub fn state_digest_from_scratch(&self) -> StateDigest {
        let nav = self.nav.clone();
        let mut fresh = Self {
            derived: Derived::new(&nav),
            scratch: Scratch::new(1),
            settings: self.settings,
            turn: self.turn,
            nav,
            units: UnitStore::from_parts(self.units.ids().clone(), self.units.slots().to_vec()),
            next_obstruction: self.next_obstruction,
            rng: self.rng.clone(),
            requests: self.requests.clone(),
            formations: self.formations.changed_copy(),
            waypoints: waypoints::Waypoints::default(),
            spawns: self.spawns.clone(),
            games: self.games.iter().map(|g| g.as_ref().map(|g| g.fresh())).collect(),
            loader: self.loader.clone(),
            pool: None,
        };
        // The waypoint graphs are not cloned: the component's digest is computed from this world's.
        fresh.derived.waypoints_digest = self.waypoints.digest();
        fresh.refresh_digest();
        fresh.derived.digest
    }

    /// The leaves of the tree components (passability chunks, unit ranges), for locating a
    /// divergence against another peer's.
    pub fn digest_reports(&self) -> Vec<DigestReport> {
        let mut reports = vec![self.derived.unit_digests.tree().report(), self.derived.grid_digests.tree().report()];
        reports.extend(self.games.iter().flatten().flat_map(|g| g.reports()));
        reports
    }

    fn apply(&mut self, command: &Command, events: &mut Vec<Event>) -> Result<(), RejectReason> {
        self.apply_checked(command, events, true)
    }

    /// Applies a command; `ask_rules`: whether the rule modules' [`Rules::allow`] is asked (a
    /// player's command), or not (a module's own action, [`rules::Ctx::act`]).
    fn apply_checked(&mut self, command: &Command, events: &mut Vec<Event>, ask_rules: bool) -> Result<(), RejectReason> {
        if command.turn != self.turn {
            return Err(RejectReason::WrongTurn);
        }
        if command.player.0 > self.settings.players {
            return Err(RejectReason::UnknownPlayer);
        }
        // A game may refuse its players core commands; the modules' own actions are never asked.
        if ask_rules && !matches!(command.kind, CommandKind::Game { .. }) {
            for game in self.games.iter().flatten() {
                game.allow(self, command.player, &command.kind)?;
            }
        }
        match &command.kind {
            CommandKind::Spawn { class, at, count, radius, speed, turn_rate } => {
                self.sync_grid();
                let batch = self.check_spawn(command.player, *class, *count, *radius, *speed, *turn_rate)?;
                self.spawn_at(command.order_key(), &batch, *at, *count, events)
            }
            CommandKind::SpawnFromBuilding { building, class, count, radius, speed, turn_rate } => {
                self.sync_grid();
                let batch = self.check_spawn(command.player, *class, *count, *radius, *speed, *turn_rate)?;
                self.spawn_from_building(command.order_key(), &batch, *building, *count, events)
            }
            CommandKind::CancelSpawns { building } => self.cancel_spawns(command.player, *building, events),
            CommandKind::Game { rules, payload } => {
                let slot = self.games.iter().position(|g| g.as_ref().is_some_and(|g| g.name() == rules));
                let Some((slot, mut game)) = slot.and_then(|slot| Some((slot, self.games[slot].take()?))) else {
                    return Err(RejectReason::NoRules);
                };
                game.sync_units(self);
                let result = game.command(self, command.player, payload, events);
                game.sync_units(self);
                self.games[slot] = Some(game);
                self.sync_modules();
                result
            }
            CommandKind::Move { units, goal, queue } => {
                self.check_units(command.player, units)?;
                self.check_order(goal)?;
                if let GoalSpec::Range { target: Target::Unit(t), .. } = goal
                    && units.contains(t)
                {
                    return Err(RejectReason::OutOfRange);
                }
                if *queue && units.iter().any(|&id| self.unit(id).is_some_and(|u| u.orders.len() >= MAX_ORDERS)) {
                    return Err(RejectReason::OutOfRange);
                }
                // A unit given an order of its own leaves its formation.
                self.leave_formations(units, events);
                let orders = std::slice::from_ref(goal);
                let group = self.order_group(units);
                // A repeated order keeps the units' paths only when it would keep every one's: the
                // units of a group each go to their own point (docs/pathfinding-rules.md, "Shared
                // searches"), so a repeated order to the group's point plans them all again, together.
                let may_keep = group == 0 || units.iter().all(|&id| self.unit(id).is_some_and(|u| keeps_its_path(u, orders)));
                let mut queued = None;
                for &id in units {
                    self.give_orders_with(id, orders, *queue, group, may_keep, &mut queued);
                }
                Ok(())
            }
            CommandKind::Remove { units } => {
                self.check_units(command.player, units)?;
                self.leave_formations(units, events);
                let mut ids = units.clone();
                ids.sort_unstable();
                ids.dedup();
                for id in ids {
                    self.units.remove(id);
                }
                self.drop_requests_of(units);
                Ok(())
            }
            CommandKind::Stop { units } => {
                self.check_units(command.player, units)?;
                self.leave_formations(units, events);
                for &id in units {
                    self.reset_unit(id, UnitState::Idle);
                }
                self.drop_requests_of(units);
                Ok(())
            }
            CommandKind::PlaceObstruction { square, flags } => {
                let sq = pathing::raster::editor_square(square.x, square.z, square.w, square.h, square.degrees)
                    .map_err(|_| RejectReason::OutOfRange)?;
                if *flags & !(ObstructionFlags::BLOCK_PATHFINDING | ObstructionFlags::BLOCK_FOUNDATION) != 0 {
                    return Err(RejectReason::OutOfRange);
                }
                let id = self.obstruction_id()?;
                self.nav.add_obstruction(id, Obstruction { square: sq, flags: ObstructionFlags(*flags) }).map_err(WorldRefusal::reason)?;
                self.next_obstruction = id.0 + 1;
                events.push(Event::ObstructionPlaced { id });
                Ok(())
            }
            CommandKind::PlaceBuilding { class, square, builder } => {
                self.sync_grid();
                self.place_building(command.player, *class, square, *builder, events)
            }
            CommandKind::SetObstructionFlags { id, flags } => {
                if *flags & !(ObstructionFlags::BLOCK_PATHFINDING | ObstructionFlags::BLOCK_FOUNDATION) != 0 {
                    return Err(RejectReason::OutOfRange);
                }
                let old = *self.nav.obstructions().get(id).ok_or(RejectReason::UnknownObstruction(*id))?;
                self.nav
                    .move_obstruction(*id, Obstruction { square: old.square, flags: ObstructionFlags(*flags) })
                    .map_err(WorldRefusal::reason)
            }
            CommandKind::RemoveObstruction { id } => self.nav.remove_obstruction(*id).map(|_| ()).map_err(WorldRefusal::reason),
            CommandKind::SetArea { name, available } => {
                let changed = self.nav.set_area_available(name, *available).map_err(WorldRefusal::reason)?;
                self.scratch.geometry_changed |= changed;
                Ok(())
            }
            CommandKind::EditTerrain { vx, vz, width, heights } => {
                if *width == 0 || *width > 256 || heights.is_empty() || heights.len() > 65_536 || heights.len() % *width as usize != 0 {
                    return Err(RejectReason::OutOfRange);
                }
                let mut terrain = self.nav.desc().terrain.clone();
                for (n, &h) in heights.iter().enumerate() {
                    let (x, z) = (vx.saturating_add(n as u32 % width), vz.saturating_add(n as u32 / width));
                    terrain.set_vertex_height(x, z, h).map_err(WorldRefusal::terrain)?;
                }
                self.nav.set_terrain(terrain).map_err(WorldRefusal::reason)?;
                self.scratch.geometry_changed = true;
                Ok(())
            }
            CommandKind::FormGroup { units, layout } => self.form_group(command.player, units, *layout, events),
            CommandKind::MoveFormation { formation, goal } => self.move_formation(command.player, *formation, goal),
            CommandKind::SetLayout { formation, layout } => self.set_layout(command.player, *formation, *layout),
            CommandKind::Disband { formation } => self.disband(command.player, *formation, events),
            CommandKind::SetWaypoints { net } => {
                if command.player != PlayerId::WORLD {
                    return Err(RejectReason::WorldOnly);
                }
                self.set_waypoints_reporting(net.clone(), events)
            }
            CommandKind::SetWaypointPriorities { class, reset, entries } => {
                self.set_waypoint_priorities(command.player, *class, *reset, entries)
            }
            CommandKind::MoveByWaypoints { units, goal, queue } => self.move_by_waypoints(command.player, units, *goal, *queue, events),
        }
    }

    /// Gives a live unit `orders` (replacing its orders, or after them when `queue`); a unit that
    /// had none asks for a path to the first.
    fn give_orders(&mut self, id: EntityId, orders: &[GoalSpec], queue: bool) {
        self.give_orders_with(id, orders, queue, 0, true, &mut None);
    }

    /// The order group ([`Unit::order_group`]) of a command's order to `units`: a new one, unique
    /// in the game (the turn in the high 32 bits, the group's place among the turn's groups from 1
    /// in the low), when it names two or more distinct units; else 0.
    fn order_group(&mut self, units: &[EntityId]) -> u64 {
        if units.iter().all(|&id| id == units[0]) {
            return 0;
        }
        self.scratch.order_groups = self.scratch.order_groups.wrapping_add(1);
        (u64::from(self.turn) << 32) | u64::from(self.scratch.order_groups)
    }

    /// [`Self::give_orders`] for one unit of many, so that a command for thousands of units does
    /// not search the whole queue for each of them: only a unit waiting for a path can have a
    /// request queued (every request is queued with its unit put in that state, and the invariant
    /// check holds it), and for those `queued` holds the units with a request, made on first need
    /// and kept up to date. `group` is the order's group ([`Unit::order_group`]), which the unit
    /// takes when the order becomes its current one; a repeated order keeps the unit's path only
    /// when `may_keep`.
    fn give_orders_with(
        &mut self,
        id: EntityId,
        orders: &[GoalSpec],
        queue: bool,
        group: u64,
        may_keep: bool,
        queued: &mut Option<crate::lookup::LookupSet<EntityId>>,
    ) {
        let unit = self.units.get_mut(id).expect("checked live");
        let may_be_queued = unit.state == UnitState::WaitingForPath;
        if !queue && may_keep && keeps_its_path(unit, orders) {
            // The same destination again (docs/motion-rules.md, "Repeated orders"): the unit keeps
            // its order and its path, and only the orders queued after it are dropped, as any
            // order that replaces them would drop them.
            unit.orders.truncate(1);
            return;
        }
        if !queue {
            unit.orders.clear();
            unit.clear_waypoints();
            unit.stalled = 0;
            unit.resume = false;
            unit.settle = false;
            unit.held_searches = 0;
        }
        let had = unit.orders.len();
        unit.orders.extend_from_slice(orders);
        if had == 0 {
            // Queued orders carry no group: it is the current order's.
            unit.order_group = group;
        }
        if had == 0 && !unit.orders.is_empty() {
            self.scratch.awaiting.entry(id).or_insert(self.turn);
            self.scratch.unanswered.entry(id).or_insert(self.turn);
            unit.state = UnitState::WaitingForPath;
            unit.escape = false;
            let requests = &self.requests;
            let fresh = !may_be_queued
                || queued
                    .get_or_insert_with(|| {
                        let mut set = crate::lookup::LookupSet::with_capacity(requests.len());
                        for r in requests {
                            set.insert(r.unit);
                        }
                        set
                    })
                    .insert(id);
            if fresh {
                // A set made before this unit's request keeps it, in case the command names it twice.
                if let Some(set) = queued.as_mut() {
                    set.insert(id);
                }
                self.requests.push(PathRequest::long(id));
            }
        }
    }

    /// Whether an order is valid in this world: a fixed goal in range and on the map, or a range
    /// order with a live target and `0 ≤ min ≤ max ≤` [`MAX_RANGE`].
    fn check_order(&self, goal: &GoalSpec) -> Result<(), RejectReason> {
        match *goal {
            GoalSpec::Range { target, min, max, .. } => {
                if min < Fixed::ZERO || min > max || max > MAX_RANGE {
                    return Err(RejectReason::OutOfRange);
                }
                match target {
                    Target::Unit(id) if self.unit(id).is_none() => Err(RejectReason::UnknownEntity(id)),
                    Target::Obstruction(id) if !self.nav.obstructions().contains_key(&id) => Err(RejectReason::UnknownObstruction(id)),
                    _ => Ok(()),
                }
            }
            _ => {
                goal_of(goal).ok_or(RejectReason::OutOfRange)?;
                if goal.anchor().is_some_and(|a| self.on_map(a)) { Ok(()) } else { Err(RejectReason::NoRoom) }
            }
        }
    }

    /// Whether a point is on the map.
    fn on_map(&self, p: WorldPos) -> bool {
        let grid = self.nav.grid();
        let s = i128::from(grid.cell_size().to_bits());
        let (x, z) = (i128::from(p.x.to_bits()), i128::from(p.z.to_bits()));
        x >= 0 && z >= 0 && x < i128::from(grid.width()) * s && z < i128::from(grid.height()) * s
    }

    /// The id the next obstruction gets, unless the ids are exhausted.
    fn obstruction_id(&self) -> Result<ObstructionId, RejectReason> {
        let id = ObstructionId(self.next_obstruction);
        if self.next_obstruction == u32::MAX || self.nav.obstructions().contains_key(&id) {
            return Err(RejectReason::IdsExhausted(IdKind::Obstruction));
        }
        Ok(id)
    }

    /// Applies queued obstruction, area and terrain changes now, so that a command that reads the
    /// grid (spawning, building placement) sees the commands before it in the same turn.
    fn sync_grid(&mut self) {
        if self.nav.has_pending() {
            let rects = self.nav.update();
            self.update_waypoint_graphs(&rects);
            self.scratch.turn_rects.extend(rects);
        }
    }

    fn place_building(
        &mut self,
        player: PlayerId,
        class: PassClass,
        square: &crate::command::SquareSpec,
        builder: Option<EntityId>,
        events: &mut Vec<Event>,
    ) -> Result<(), RejectReason> {
        if class.index() >= self.nav.classes().len() {
            return Err(RejectReason::BadClass);
        }
        if let Some(b) = builder {
            self.check_units(player, &[b])?;
        }
        let sq =
            pathing::raster::editor_square(square.x, square.z, square.w, square.h, square.degrees).map_err(|_| RejectReason::OutOfRange)?;
        self.nav.check_building_placement(class, &sq).map_err(|e| RejectReason::Placement(e.into()))?;
        let id = self.obstruction_id()?;
        self.nav.add_obstruction(id, Obstruction { square: sq, flags: ObstructionFlags::STATIC }).map_err(WorldRefusal::reason)?;
        self.next_obstruction = id.0 + 1;
        events.push(Event::ObstructionPlaced { id });
        // Foundation dispersal: units whose clearance the footprint would block step out.
        let live: Vec<(EntityId, pathing::placement::DispersalUnit)> = self
            .units()
            .filter_map(|u| {
                let def = self.nav.classes().get(u.class)?;
                let clearance = def.whole_clearance(self.nav.grid().cell_size());
                Some((u.id, pathing::placement::DispersalUnit { pos: u.pos, clearance }))
            })
            .collect();
        let shapes: Vec<pathing::placement::DispersalUnit> = live.iter().map(|l| l.1).collect();
        let moves = pathing::placement::foundation_dispersal(&sq, self.nav.grid().cell_size(), &shapes, None);
        let dispersed: Vec<EntityId> = moves.iter().map(|&(n, _)| live[n].0).collect();
        self.leave_formations(&dispersed, events);
        let building = id;
        for (n, target) in moves {
            let id = live[n].0;
            let unit = self.units.get_mut(id).expect("listed from the live units");
            // The builder walks to build range of its building instead (docs/motion-rules.md,
            // "Placement"): beside the footprint, clear of the zone dispersal empties.
            let order = if Some(id) == builder {
                GoalSpec::Range { target: Target::Obstruction(building), min: Fixed::ZERO, max: Fixed::ZERO, kind: RangeKind::Build }
            } else {
                GoalSpec::Point(target)
            };
            // The step aside comes first; at the order limit the last queued order makes room.
            unit.orders.truncate(MAX_ORDERS - 1);
            unit.orders.insert(0, order);
            unit.order_group = 0;
            unit.clear_waypoints();
            unit.state = UnitState::WaitingForPath;
            unit.escape = false;
            if !self.requests.iter().any(|r| r.unit == id) {
                self.requests.push(PathRequest::long(id));
            }
            events.push(Event::Dispersed { unit: id });
        }
        Ok(())
    }

    fn check_units(&self, player: PlayerId, units: &[EntityId]) -> Result<(), RejectReason> {
        if units.is_empty() || units.len() > 4096 {
            return Err(RejectReason::OutOfRange);
        }
        for &id in units {
            let unit = self.unit(id).ok_or(RejectReason::UnknownEntity(id))?;
            if unit.owner != player {
                return Err(RejectReason::NotOwned(id));
            }
        }
        Ok(())
    }

    /// Drops the queued path requests of `units`, keeping the others in their order. A set makes
    /// this linear in the queue and the units rather than their product (a 10,000-unit stop).
    pub(crate) fn drop_requests_of(&mut self, units: &[EntityId]) {
        if units.is_empty() || self.requests.is_empty() {
            return;
        }
        let units: crate::lookup::LookupSet<EntityId> = units.iter().copied().collect();
        self.requests.retain(|r| !units.contains(&r.unit));
    }

    /// Clears a live unit's orders, path and movement flags and puts it in `state` (stopped, or
    /// handed to its formation); a stale id changes nothing.
    pub(crate) fn reset_unit(&mut self, id: EntityId, state: UnitState) {
        let Some(unit) = self.units.get_mut(id) else { return };
        unit.orders.clear();
        unit.order_group = 0;
        unit.clear_waypoints();
        unit.state = state;
        unit.escape = false;
        unit.resume = false;
        unit.settle = false;
        unit.stalled = 0;
        unit.replan_cooldown = 0;
        unit.held_searches = 0;
    }

    /// The navcell under a position (clamped onto the grid).
    pub fn navcell_of(&self, pos: WorldPos) -> Navcell {
        grid_navcell(self.nav.grid(), pos)
    }

    /// Checks the invariants the rest of the simulation relies on; `Err` names the first one broken.
    ///
    /// # Errors
    /// [`crate::Error::Invariant`], describing the broken invariant.
    pub fn check_invariants(&self) -> Result<(), crate::Error> {
        self.broken_invariant().map_err(|message| crate::Error::Invariant { message })
    }

    /// [`World::check_invariants`], its text alone.
    fn broken_invariant(&self) -> Result<(), String> {
        let grid = self.nav.grid();
        let cell = i128::from(grid.cell_size().to_bits());
        let (w, h) = (i128::from(grid.width()) * cell, i128::from(grid.height()) * cell);
        let requested: crate::lookup::LookupSet<EntityId> = self.requests.iter().map(|r| r.unit).collect();
        for (slot, unit) in self.units.slots().iter().enumerate() {
            let Some(unit) = unit else { continue };
            if unit.id.index as usize != slot || !self.units.ids().is_live(unit.id) {
                return Err(format!("unit {:?} in slot {slot} is not a live id of that slot", unit.id));
            }
            let (x, z) = (i128::from(unit.pos.x.to_bits()), i128::from(unit.pos.z.to_bits()));
            if x < 0 || z < 0 || x >= w || z >= h {
                return Err(format!("unit {:?} at {:?} is off the map", unit.id, unit.pos));
            }
            if unit.state == UnitState::Idle && (!unit.waypoints().is_empty() || !unit.orders.is_empty()) {
                return Err(format!("idle unit {:?} still has orders or waypoints", unit.id));
            }
            if unit.orders.is_empty() && unit.order_group != 0 {
                return Err(format!("unit {:?} has no order but an order group", unit.id));
            }

            if usize::from(unit.detour) > unit.waypoints().len() {
                return Err(format!(
                    "unit {:?} has a detour of {} waypoints but {} waypoints",
                    unit.id,
                    unit.detour,
                    unit.waypoints().len()
                ));
            }
            if unit.state == UnitState::WaitingForPath && !requested.contains(&unit.id) {
                return Err(format!("unit {:?} waits for a path nobody will compute", unit.id));
            }
            if unit.state != UnitState::WaitingForPath && requested.contains(&unit.id) {
                return Err(format!("unit {:?} has a path request queued but does not wait for it", unit.id));
            }
        }
        if self.units.ids().n_live() != self.units().count() {
            return Err(format!("{} live ids but {} units", self.units.ids().n_live(), self.units().count()));
        }
        self.check_formations()?;
        self.check_waypoints()
    }

    /// The world as snapshot bytes ([`crate::snapshot`]).
    pub fn save(&self) -> Vec<u8> {
        let parts = StateParts {
            nav: &self.nav,
            settings: self.settings,
            turn: self.turn,
            ids: self.units.ids(),
            units: self.units.slots(),
            requests: &self.requests,
            rng: &self.rng,
            next_obstruction: self.next_obstruction,
            formations: self.formations.values().cloned().collect(),
            formation_requests: self.formations.requests(),
            next_formation: self.formations.next(),
            waypoint_nets: self.waypoints.nets().values().map(|n| n.spec.clone()).collect(),
            waypoint_tables: self.waypoints.stored_tables(),
            waypoint_routes: self.waypoints.stored_routes(),
            spawn_orders: &self.spawns.orders,
            next_spawn_order: self.spawns.next_order,
            games: self.games.iter().flatten().map(|g| g.save()).collect(),
        };
        crate::snapshot::frame(&crate::snapshot::data_of(parts))
    }

    /// A world from snapshot bytes; it continues exactly as the saved world would have. Runs on the
    /// calling thread until [`World::set_threads`].
    ///
    /// # Errors
    /// [`SnapshotError`] for bytes that are not a valid snapshot, naming the offset or the value.
    pub fn load(bytes: &[u8]) -> Result<Self, SnapshotError> {
        let data = crate::snapshot::unframe(bytes)?;
        if !data.games.is_empty() {
            return Err(SnapshotError::Rules { found: sections_of(&data.games), expected: Vec::new() });
        }
        Self::from_data(data)
    }

    /// A world with game rules `R` from snapshot bytes ([`World::load`]).
    ///
    /// # Errors
    /// [`SnapshotError::Rules`] for a snapshot of another ruleset or version or of a world
    /// without a game; otherwise as [`World::load`], with the game's values named.
    pub fn load_with_rules<M: Modules>(bytes: &[u8], rules: M) -> Result<Self, SnapshotError> {
        let mut data = crate::snapshot::unframe(bytes)?;
        let expected: Vec<(String, u32)> = M::list().into_iter().map(|(name, version)| (name.to_owned(), version)).collect();
        let found = sections_of(&data.games);
        if found != expected {
            return Err(SnapshotError::Rules { found, expected });
        }
        let sections = std::mem::take(&mut data.games);
        let mut world = Self::from_data(data)?;
        let modules = rules.clone().restore(&world, &sections).map_err(|message| SnapshotError::Invalid { message })?;
        world.games = modules.into_iter().map(|m| Some(m.0)).collect();
        world.loader = Some(std::sync::Arc::new(rules::LoaderOf(rules)));
        world.refresh_digest();
        Ok(world)
    }

    /// A world from snapshot bytes with this world's rules (or none, as this world has none):
    /// what a tool that holds a world uses to load another snapshot of the same game.
    ///
    /// # Errors
    /// As [`World::load`] and [`World::load_with_rules`].
    pub fn load_like(&self, bytes: &[u8]) -> Result<Self, SnapshotError> {
        match &self.loader {
            Some(loader) => loader.load(bytes),
            None => Self::load(bytes),
        }
    }

    fn from_data(data: crate::snapshot::SnapshotData) -> Result<Self, SnapshotError> {
        if data.settings.turn_ms == 0
            || data.settings.turn_ms > 10_000
            || data.settings.max_paths_per_turn == 0
            || !(1..=MAX_LONG_SEARCH_BUDGET).contains(&data.settings.long_search_budget)
        {
            return Err(SnapshotError::Invalid { message: "settings out of range".into() });
        }
        let (desc, obstructions) = crate::snapshot::geometry_of(&data)?;
        let invalid = |message: String| SnapshotError::Invalid { message };
        let mut world = World::new(desc, obstructions, data.settings).map_err(|e| invalid(e.to_string()))?;
        world.turn = data.turn;
        world.next_obstruction = data.next_obstruction;
        data.ids.check().map_err(|e| invalid(format!("entity ids: {e}")))?;
        let ids = data.ids;
        world.requests = data.requests;
        world.rng = data.rng;
        let on_map = |p: &WorldPos| world.on_map(*p);
        let mut units: Vec<Option<Unit>> = vec![None; ids.n_slots()];
        for mut unit in data.units {
            let what = format!("unit {:?}", unit.id);
            let slot = units.get_mut(unit.id.index as usize).ok_or_else(|| invalid(format!("{what}: index beyond the entity slots")))?;
            if slot.is_some() {
                return Err(invalid(format!("{what}: stored twice")));
            }
            let movement = world.nav.class_nav(unit.class).is_some();
            if !movement {
                return Err(invalid(format!("{what}: class {} is not a movement class", unit.class)));
            }
            if unit.radius <= Fixed::ZERO
                || unit.radius > Fixed::from_num(8)
                || unit.speed <= Fixed::ZERO
                || unit.speed > Fixed::from_num(64)
                || !crate::motion::TURN_RATE_LIMITS.contains(&unit.turn_rate)
            {
                return Err(invalid(format!("{what}: radius, speed or turn rate outside the limits of Spawn")));
            }
            if unit.owner.0 > world.settings.players {
                return Err(invalid(format!("{what}: owner {} is not a player", unit.owner)));
            }
            if unit.orders.len() > MAX_ORDERS {
                return Err(invalid(format!("{what}: {} orders, more than {MAX_ORDERS}", unit.orders.len())));
            }
            if !unit.waypoints().iter().all(on_map) || usize::from(unit.detour) > unit.waypoints().len() {
                return Err(invalid(format!("{what}: a waypoint is off the map, or its detour is longer than its path")));
            }
            // A range order's target may be gone (the order then fails when planned); its ranges
            // and every fixed goal must be valid.
            let valid = |g: &GoalSpec| match g {
                GoalSpec::Range { .. } => !matches!(world.check_order(g), Err(RejectReason::OutOfRange)),
                _ => world.check_order(g).is_ok(),
            };
            if !unit.orders.iter().all(valid) {
                return Err(invalid(format!("{what}: an order is out of range or off the map")));
            }
            let unit_length = |v: Fixed| v.abs() <= Fixed::ONE;
            if !unit_length(unit.facing.x) || !unit_length(unit.facing.z) || unit.facing == pathing::Vec2::new(Fixed::ZERO, Fixed::ZERO) {
                return Err(invalid(format!("{what}: its facing is not a direction")));
            }
            unit.refresh_path_digest();
            *slot = Some(unit);
        }
        world.units = UnitStore::from_parts(ids, units);
        world.load_formations(data.formations, data.formation_requests, data.next_formation).map_err(invalid)?;
        world.load_waypoints(data.waypoint_nets, data.waypoint_tables, data.waypoint_routes).map_err(invalid)?;
        world.load_spawns(data.spawn_orders, data.next_spawn_order).map_err(invalid)?;
        world.check_invariants().map_err(|e| invalid(e.to_string()))?;
        world.refresh_digest();
        Ok(world)
    }

    pub(crate) fn parts_mut(&mut self) -> MotionParts<'_> {
        let steered = self.steered_members();
        MotionParts {
            nav: &self.nav,
            units: &mut self.units,
            requests: &mut self.requests,
            turn_ms: self.settings.turn_ms,
            motion: &self.settings.motion,
            steered,
            walked: &mut self.scratch.walked,
            sweep_order: &mut self.scratch.sweep_order,
            pool: self.pool.as_deref(),
        }
    }
}

/// A thread of the pool, while the motion step runs on another: takes the step's parallel tasks
/// as they come, spinning in between (yielding to the system now and then), until `done`.
fn keep_awake(done: &std::sync::atomic::AtomicBool) {
    let mut idle = 0u32;
    while !done.load(std::sync::atomic::Ordering::Acquire) {
        if let Some(rayon::Yield::Executed) = rayon::yield_now() {
            idle = 0;
            continue;
        }
        idle = idle.wrapping_add(1);
        if idle.is_multiple_of(64) {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Below this many changed unit ranges (64 units each) the digest refresh hashes them on the
/// calling thread: handing a few to the pool costs more than hashing them.
const PARALLEL_HASH_RANGES: usize = 16;

/// A repeated point order this near the current one does not replan (0.25 m, the grid
/// pathfinder's target replan threshold; docs/motion-rules.md, "Repeated orders").
/// `[Units: metres]`
pub const TARGET_REPLAN_THRESHOLD: Fixed = Fixed::from_bits(1 << 14);

/// Whether a replacing order of `orders` leaves `unit` on its current path: one point order within
/// [`TARGET_REPLAN_THRESHOLD`] (exact Euclidean distance, the threshold included) of the point the
/// unit is walking to or waiting for a path to. An idle unit, or a unit whose current order is not
/// a point, always plans.
fn keeps_its_path(unit: &Unit, orders: &[GoalSpec]) -> bool {
    let (&[GoalSpec::Point(new)], Some(&GoalSpec::Point(current))) = (orders, unit.orders.first()) else { return false };
    if unit.state == UnitState::Idle || unit.escape {
        return false;
    }
    let d = |a: Fixed, b: Fixed| i128::from(a.to_bits()) - i128::from(b.to_bits());
    let (dx, dz) = (d(new.x, current.x), d(new.z, current.z));
    let t = i128::from(TARGET_REPLAN_THRESHOLD.to_bits());
    dx * dx + dz * dz <= t * t
}

/// A fixed goal spec as a search goal; `None` for a range order (whose goal depends on its
/// target, [`World::order_goal`]) or out-of-range values.
fn goal_of(goal: &GoalSpec) -> Option<Goal> {
    match *goal {
        GoalSpec::Point(p) => Goal::point(p).ok(),
        GoalSpec::Circle { center, radius } => Goal::circle(center, radius).ok(),
        GoalSpec::Square { center, half } => Square::axis_aligned(center, half, half).map(Goal::square).ok(),
        GoalSpec::Range { .. } => None,
    }
}

/// Largest range of a range order. `[Units: metres]`
pub const MAX_RANGE: Fixed = Fixed::const_from_int(256);

/// Digest of the obstruction squares and flags, by id.
fn obstruction_digest(nav: &NavWorld) -> Digest {
    let list: Vec<(ObstructionId, [i64; 8], u8)> =
        nav.obstructions().iter().map(|(&id, o)| (id, square_bits(&o.square), o.flags.0)).collect();
    state_hash::digest("obstructions", &list)
}

/// Digest of what can change of the geometry besides obstructions: terrain heights, water level,
/// area states, the grid and class settings, and the painted navcells.
///
/// The painted layer (one byte per navcell, [`pathing::terrain::CellKind::to_byte`]) is appended
/// only when the world has one, and the classes with landmark tables (which decide among paths of
/// equal cost, so peers must agree on them) only when there are any, after the painted layer
/// (empty or not) and a tag; so the digest of a world with neither is the one it had before
/// either existed (and the golden hashes stay). The encodings cannot be confused: the first four
/// fields are self-delimiting, a painted world's bytes continue past them with a length and that
/// many bytes, and a world with landmarks adds 6 more bytes after that.
fn geometry_digest(nav: &NavWorld) -> Digest {
    let desc = nav.desc();
    let heights: Vec<i64> = desc.terrain.heights().iter().map(|h| h.to_bits()).collect();
    let areas: Vec<(&str, bool)> = desc.areas.iter().map(|a| (a.name.as_str(), a.available)).collect();
    let grid = (desc.grid.width, desc.grid.height, desc.grid.cell_size.to_bits(), desc.classes.to_json());
    let water_level = desc.terrain.water_level().to_bits();
    let cells: Vec<u8> = desc.cells.iter().map(|kind| kind.to_byte()).collect();
    match (cells.is_empty(), desc.landmark_classes) {
        (true, 0) => state_hash::digest("geometry", &(heights, water_level, areas, grid)),
        (false, 0) => state_hash::digest("geometry", &(heights, water_level, areas, grid, cells)),
        (_, landmarks) => state_hash::digest("geometry", &(heights, water_level, areas, grid, cells, LANDMARKS_TAG, landmarks)),
    }
}

/// Marks the geometry digest's landmark field, so that a world with landmark tables never hashes
/// like one without (its paths may differ).
const LANDMARKS_TAG: u32 = u32::from_le_bytes(*b"LMKS");

/// A square's defining values as raw bits, for hashing.
fn square_bits(sq: &Square) -> [i64; 8] {
    [sq.center().x, sq.center().z, sq.hw(), sq.hh(), sq.u().x, sq.u().z, sq.v().x, sq.v().z].map(|v| v.to_bits())
}

/// The module names and versions of a snapshot's game sections.
fn sections_of(sections: &[crate::snapshot::GameSnapshot]) -> Vec<(String, u32)> {
    sections.iter().map(|g| (g.rules.clone(), g.version)).collect()
}
