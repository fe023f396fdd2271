//! Production: players' starts (a finished town centre, workers and wood), training queues
//! (paid from the gathering module's store) and the units they spawn, whose kind the combat
//! module then keeps; and which core commands a player may send in this game.
//!
//! Each turn it steps first: units of waiting spawn orders that appeared get their kind, then
//! every finished building whose first queued unit is done spawns it and starts the next.

use std::collections::BTreeMap;

use pathing::{Fixed, ObstructionId};
use serde::{Deserialize, Serialize};
use sim::rules::{Ctx, View};
use sim::{CommandKind, EntityId, Event, PlayerId};

use crate::common;
use crate::{
    BuildingKind, MAX_BATCH, MAX_QUEUE, START_WOOD, START_WORKERS, SkirmishEvent as E, SkirmishReject as R, UNIT_CLASS, UnitKind, turns,
};

/// The module's name in digests (`production.units`, …) and snapshots.
pub const NAME: &str = "production";
/// The module's version: a change to any of its rules is a new version.
pub const VERSION: u32 = 1;

/// A building's training queue.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Queue {
    /// Units waiting to be trained, first first. `[Limit: ≤ MAX_QUEUE]`
    pub units: Vec<UnitKind>,
    /// The turn whose step spawns the first unit of the queue (meaningless while the queue is
    /// empty). `[Units: turn number]`
    pub done_at: u32,
}

/// A player's production record.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Output {
    /// Whether the player has been started (`Start`).
    pub started: bool,
    /// Units trained.
    pub trained: u32,
}

/// A building's spawn order waiting for room: what its units will be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    /// Their kind.
    pub kind: UnitKind,
    /// The building.
    pub building: ObstructionId,
    /// Units still to come.
    pub left: u32,
    /// Whether they count as trained (a start's workers do not).
    pub trained: bool,
}

/// Production's world state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProductionState {
    /// The building spawn orders waiting for room, by the core's order id.
    pub pending: BTreeMap<u32, Pending>,
}

/// Production's commands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ProductionCommand {
    /// World only: a finished town centre for `player` centred at `(x, z)`, its workers and its
    /// starting wood.
    Start {
        /// The player started.
        player: u8,
        /// Centre east. `[Units: metres]`
        x: i32,
        /// Centre north. `[Units: metres]`
        z: i32,
    },
    /// A building trains `count` units of a kind (paid now).
    Train {
        /// The sender's finished building.
        building: ObstructionId,
        /// What.
        kind: UnitKind,
        /// How many. `[Limit: 1..=MAX_BATCH]`
        count: u16,
    },
}

/// The production module (no parameters).
#[derive(Clone, Copy, Debug, Default)]
pub struct Production;

impl sim::rules::Rules for Production {
    const NAME: &'static str = NAME;
    const VERSION: u32 = VERSION;
    type Unit = ();
    type Object = Queue;
    type Player = Output;
    type State = ProductionState;
    type Command = ProductionCommand;
    type Event = E;
    type Reject = R;

    fn allow(&self, _view: &View<'_, Self>, player: PlayerId, command: &CommandKind) -> Result<(), R> {
        use sim::CommandKind as K;
        // Players move, stop, remove and group their units; everything that makes units or
        // changes the map goes through the game's commands (paid for) or is the world's.
        let map_or_units = matches!(
            command,
            K::Spawn { .. }
                | K::SpawnFromBuilding { .. }
                | K::CancelSpawns { .. }
                | K::PlaceBuilding { .. }
                | K::PlaceObstruction { .. }
                | K::RemoveObstruction { .. }
                | K::SetObstructionFlags { .. }
                | K::SetArea { .. }
                | K::EditTerrain { .. }
                | K::SetWaypoints { .. }
        );
        if player.0 != 0 && map_or_units { Err(R::CoreCommandRefused) } else { Ok(()) }
    }

    fn new_unit(&self, _state: &ProductionState, _unit: &sim::Unit) {}

    fn check(&self, view: &View<'_, Self>, player: PlayerId, command: &ProductionCommand) -> Result<(), R> {
        let world = view.world();
        common::sender(player, matches!(command, ProductionCommand::Start { .. }))?;
        match command {
            ProductionCommand::Start { player: p, x, z } => {
                common::known_player(world, *p)?;
                if view.player(PlayerId(*p)).is_some_and(|s| s.started) {
                    return Err(R::AlreadyStarted);
                }
                let (x, z) = (Fixed::from_num(*x), Fixed::from_num(*z));
                common::placeable(world, &crate::footprint(BuildingKind::TownCentre, x, z, Fixed::ZERO))
            }
            ProductionCommand::Train { building, kind, count } => {
                let construction = world.game::<crate::Construction>();
                let b = construction.as_ref().and_then(|c| c.object(*building)).ok_or(R::NotABuilding(*building))?;
                if b.owner != player {
                    return Err(R::NotYourBuilding(*building));
                }
                if !b.finished {
                    return Err(R::NotFinished(*building));
                }
                if !b.kind.trains(*kind) {
                    return Err(R::CannotTrain);
                }
                if !(1..=MAX_BATCH).contains(count) {
                    return Err(R::BadCount);
                }
                if queue_len(view, *building) + usize::from(*count) > MAX_QUEUE {
                    return Err(R::QueueFull);
                }
                crate::gathering::afford(world, player, kind.stats().cost * u32::from(*count))
            }
        }
    }

    fn apply(&self, ctx: &mut Ctx<'_, Self>, player: PlayerId, command: &ProductionCommand) {
        match command {
            ProductionCommand::Start { player: p, x, z } => start(ctx, PlayerId(*p), *x, *z),
            ProductionCommand::Train { building, kind, count } => {
                crate::gathering::spend(ctx, player, kind.stats().cost * u32::from(*count));
                // The step of this very turn is the first of its training turns, as each next
                // unit's first is the step after the one that trained the unit before it.
                let each = turns(kind.stats().train_ms, ctx.world().settings().turn_ms);
                let done_at = ctx.world().turn().saturating_add(each - 1);
                let mut queue = ctx.object(*building).cloned().unwrap_or_default();
                // A unit joining an empty queue starts training now.
                if queue.units.is_empty() {
                    queue.done_at = done_at;
                }
                queue.units.extend(std::iter::repeat_n(*kind, usize::from(*count)));
                // `check` found the building, so its obstruction exists.
                let _ = ctx.set_object(*building, queue);
            }
        }
    }

    fn step(&self, ctx: &mut Ctx<'_, Self>, events: &[Event]) {
        common::drop_gone_objects(ctx);
        name_waiting_spawns(ctx, events);
        train(ctx);
    }
}

/// The units queued at a building.
pub fn queue_len(view: &View<'_, Production>, building: ObstructionId) -> usize {
    view.object(building).map_or(0, |q| q.units.len())
}

/// A player's start: a finished town centre, its workers and its wood.
fn start(ctx: &mut Ctx<'_, Production>, player: PlayerId, x: i32, z: i32) {
    let square = crate::footprint(BuildingKind::TownCentre, Fixed::from_num(x), Fixed::from_num(z), Fixed::ZERO);
    let placed =
        ctx.with::<crate::Construction, _>(|c| crate::construction::place(c, player, BuildingKind::TownCentre, square, None, true));
    let Some(id) = placed.flatten() else { return };
    if let Some(p) = ctx.player_mut(player) {
        p.started = true;
    }
    crate::gathering::grant(ctx, player, START_WOOD);
    ctx.emit(&E::Started { player, town_centre: id });
    spawn(ctx, player, id, UnitKind::Worker, START_WORKERS, false);
}

/// Spawns `count` units of a kind at a building: those placed now get their kind from combat's
/// `new_unit` (through [`crate::combat::spawn_kind`]), a waiting order is remembered until its
/// units appear (and then counted as trained if `trained`). Returns the units placed now.
fn spawn(
    ctx: &mut Ctx<'_, Production>,
    player: PlayerId,
    building: ObstructionId,
    kind: UnitKind,
    count: u16,
    trained: bool,
) -> Vec<EntityId> {
    let stats = kind.stats();
    let command =
        CommandKind::SpawnFromBuilding { building, class: UNIT_CLASS, count, radius: stats.radius, speed: stats.speed, turn_rate: None };
    let result = crate::combat::spawn_kind(ctx, kind, |ctx| ctx.act(player, command));
    let mut placed = Vec::new();
    match result {
        Ok(events) => {
            for e in events {
                match e {
                    Event::Spawned { unit } => placed.push(unit),
                    Event::SpawnWaiting { order, waiting, .. } => {
                        ctx.state_mut().pending.insert(order, Pending { kind, building, left: waiting, trained });
                    }
                    _ => {}
                }
            }
        }
        Err(reason) => ctx.emit(&E::ActionRefused { player, reason }),
    }
    placed
}

/// Units of waiting spawn orders that appeared this turn get their kind; dropped orders are
/// forgotten.
fn name_waiting_spawns(ctx: &mut Ctx<'_, Production>, events: &[Event]) {
    for e in events {
        match *e {
            Event::SpawnedFromQueue { order, unit } => {
                let Some(&pending) = ctx.state().pending.get(&order) else { continue };
                if pending.left <= 1 {
                    ctx.state_mut().pending.remove(&order);
                } else if let Some(p) = ctx.state_mut().pending.get_mut(&order) {
                    p.left -= 1;
                }
                crate::combat::become_kind(ctx, unit, pending.kind);
                if pending.trained {
                    trained(ctx, unit, pending.kind, pending.building);
                }
            }
            Event::SpawnCancelled { order, .. } => {
                ctx.state_mut().pending.remove(&order);
            }
            _ => {}
        }
    }
}

/// Records a trained unit.
fn trained(ctx: &mut Ctx<'_, Production>, unit: EntityId, kind: UnitKind, building: ObstructionId) {
    let Some(owner) = ctx.world().unit(unit).map(|u| u.owner) else { return };
    if let Some(p) = ctx.player_mut(owner) {
        p.trained += 1;
    }
    ctx.emit(&E::Trained { unit, kind, building });
}

/// Every finished building whose first queued unit is done spawns it, and starts the next.
fn train(ctx: &mut Ctx<'_, Production>) {
    let (turn, turn_ms) = (ctx.world().turn(), ctx.world().settings().turn_ms);
    let finished = |ctx: &Ctx<'_, Production>, id: ObstructionId| {
        ctx.world().game::<crate::Construction>().and_then(|c| c.object(id).filter(|b| b.finished).map(|b| b.owner))
    };
    let done: Vec<(ObstructionId, PlayerId)> = ctx
        .objects()
        .filter(|(_, q)| !q.units.is_empty() && q.done_at <= turn)
        .filter_map(|(id, _)| finished(ctx, id).map(|owner| (id, owner)))
        .collect();
    for (id, owner) in done {
        let Some(q) = ctx.object_mut(id) else { continue };
        let kind = q.units.remove(0);
        if let Some(&next) = q.units.first() {
            q.done_at = turn.saturating_add(turns(next.stats().train_ms, turn_ms));
        }
        for unit in spawn(ctx, owner, id, kind, 1, true) {
            trained(ctx, unit, kind, id);
        }
    }
}
