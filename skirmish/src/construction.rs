//! Construction: foundations laid (paid from the gathering module's store), raised by workers
//! and finished; a building's hit points live in the combat module, where it can be attacked,
//! and rise as it is built; a finished town centre becomes a drop-site of the gathering module.
//!
//! Each turn, after dropping the buildings whose obstruction is gone (razed), it runs every
//! builder in id order: one turn of work when in range of its foundation.

use pathing::{Fixed, ObstructionId};
use serde::{Deserialize, Serialize};
use sim::rules::{Ctx, View};
use sim::{CommandKind, EntityId, Event, GoalSpec, PlayerId, RangeKind, SquareSpec, Target};

use crate::combat::Structure;
use crate::common;
use crate::{BUILDING_CLASS, BuildingKind, GATHER_RANGE, REORDER_TURNS, SkirmishEvent as E, SkirmishReject as R};

/// The module's name in digests (`construction.units`, …) and snapshots.
pub const NAME: &str = "construction";
/// The module's version: a change to any of its rules is a new version.
pub const VERSION: u32 = 1;

/// A unit as construction keeps it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Builder {
    /// The foundation it raises, if any.
    pub building: Option<ObstructionId>,
    /// The first turn construction may give it another order. `[Units: turn number]`
    pub reorder_at: u32,
}

/// A building (its hit points are combat's [`Structure`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Building {
    /// Its owner.
    pub owner: PlayerId,
    /// Its kind.
    pub kind: BuildingKind,
    /// Build work done so far. `[Units: milliseconds of one builder]`
    pub progress: u32,
    /// Whether it is finished (only a finished building trains or takes wood).
    pub finished: bool,
}

/// A player's building record.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Works {
    /// Buildings finished (a start's town centre not counted).
    pub built: u32,
}

/// Construction's commands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConstructionCommand {
    /// Workers lay a foundation (paid now) and raise it.
    Build {
        /// What.
        kind: BuildingKind,
        /// The footprint: its `w` and `h` are the kind's size.
        square: SquareSpec,
        /// The sender's workers.
        builders: Vec<EntityId>,
    },
}

/// The construction module (no parameters).
#[derive(Clone, Copy, Debug, Default)]
pub struct Construction;

impl sim::rules::Rules for Construction {
    const NAME: &'static str = NAME;
    const VERSION: u32 = VERSION;
    type Unit = Builder;
    type Object = Building;
    type Player = Works;
    type State = ();
    type Command = ConstructionCommand;
    type Event = E;
    type Reject = R;

    fn new_unit(&self, _state: &(), _unit: &sim::Unit) -> Builder {
        Builder::default()
    }

    fn check(&self, view: &View<'_, Self>, player: PlayerId, command: &ConstructionCommand) -> Result<(), R> {
        let world = view.world();
        common::sender(player, false)?;
        let ConstructionCommand::Build { kind, square, builders } = command;
        common::own_units(world, player, builders, true)?;
        let size = Fixed::from_num(kind.stats().size);
        if square.w != size || square.h != size {
            return Err(R::BadFootprint);
        }
        crate::gathering::afford(world, player, kind.stats().cost)?;
        common::placeable(world, square)
    }

    fn apply(&self, ctx: &mut Ctx<'_, Self>, player: PlayerId, command: &ConstructionCommand) {
        let ConstructionCommand::Build { kind, square, builders } = command;
        let Some(id) = place(ctx, player, *kind, *square, builders.first().copied(), false) else { return };
        crate::gathering::spend(ctx, player, kind.stats().cost);
        ctx.interrupt(builders);
        for &u in builders {
            if let Some(s) = ctx.unit_mut(u) {
                s.building = Some(id);
                s.reorder_at = 0;
            }
            order(ctx, u);
        }
    }

    fn step(&self, ctx: &mut Ctx<'_, Self>, _events: &[Event]) {
        common::drop_gone_objects(ctx);
        for id in common::unit_ids(ctx.world()) {
            if let Some(b) = ctx.unit(id).and_then(|s| s.building) {
                build(ctx, id, b);
            }
        }
    }

    fn interrupted(&self, ctx: &mut Ctx<'_, Self>, units: &[EntityId]) {
        for &u in units {
            if ctx.unit(u).is_some_and(|s| s.building.is_some())
                && let Some(s) = ctx.unit_mut(u)
            {
                s.building = None;
            }
        }
    }
}

/// Lays a building of `player` by the core's command: a foundation at 1 hit point, or, when
/// `finished`, a whole building (a player's start). Its hit points go to the combat module, a
/// finished drop-site to the gathering module. `None` (reported) when the core refuses.
pub fn place(
    ctx: &mut Ctx<'_, Construction>,
    player: PlayerId,
    kind: BuildingKind,
    square: SquareSpec,
    builder: Option<EntityId>,
    finished: bool,
) -> Option<ObstructionId> {
    let id = common::place_building(ctx, player, CommandKind::PlaceBuilding { class: BUILDING_CLASS, square, builder })?;
    let stats = kind.stats();
    let building = Building { owner: player, kind, progress: if finished { stats.build_ms } else { 0 }, finished };
    // The obstruction was just placed, and ids reach `MAX_OBJECT_ID` only after 2^26 placements.
    let _ = ctx.set_object(id, building);
    let hp = if finished { stats.hp } else { 1 };
    crate::combat::add_structure(ctx, id, Structure { owner: player, kind, hp, max_hp: stats.hp });
    if finished && kind.is_drop_site() {
        crate::gathering::add_drop_site(ctx, id, player);
    }
    if !finished {
        ctx.emit(&E::Placed { building: id, kind, owner: player });
    }
    Some(id)
}

/// Every building, by ascending obstruction id.
pub fn buildings<'a>(view: &View<'a, Construction>) -> impl Iterator<Item = (ObstructionId, &'a Building)> + 'a {
    view.objects()
}

/// Sends a builder to its foundation.
fn order(ctx: &mut Ctx<'_, Construction>, id: EntityId) {
    let Some(b) = ctx.unit(id).and_then(|s| s.building) else { return };
    let goal = GoalSpec::Range { target: Target::Obstruction(b), kind: RangeKind::Build, min: Fixed::ZERO, max: GATHER_RANGE };
    let ok = common::order_to(ctx, id, goal);
    let reorder_at = ctx.world().turn().saturating_add(REORDER_TURNS);
    if let Some(s) = ctx.unit_mut(id) {
        s.reorder_at = reorder_at;
        if !ok {
            s.building = None;
        }
    }
}

/// A builder at its foundation: one turn of work when in range; the building's hit points rise in
/// proportion to the work done, and it is finished when the work is.
fn build(ctx: &mut Ctx<'_, Construction>, id: EntityId, building: ObstructionId) {
    let (Some(me), Some(state)) = (ctx.world().unit(id), ctx.unit(id)) else { return };
    let turn = ctx.world().turn();
    let (owner, pos, standing, reorder_at) = (me.owner, me.pos, me.orders.is_empty(), state.reorder_at);
    let ours = ctx.object(building).filter(|b| b.owner == owner && !b.finished).is_some();
    let square = ctx.world().nav().obstructions().get(&building).map(|o| o.square);
    let (Some(square), true) = (square, ours) else {
        if let Some(s) = ctx.unit_mut(id) {
            s.building = None;
        }
        return;
    };
    let cell = ctx.world().nav().grid().cell_size();
    // The core's build range is at least a navcell (RangeKind::Build).
    if !common::within_or(ctx, pos, &square, GATHER_RANGE.max(cell), standing && reorder_at <= turn, |ctx| order(ctx, id)) {
        return;
    }
    let turn_ms = ctx.world().settings().turn_ms;
    let Some(b) = ctx.object_mut(building) else { return };
    let total = b.kind.stats().build_ms;
    let before = b.progress;
    b.progress = (b.progress + turn_ms).min(total);
    let (after, kind) = (b.progress, b.kind);
    let finished = after >= total;
    if finished {
        b.finished = true;
    }
    ctx.with::<crate::Combat, _>(|c| {
        if let Some(s) = c.object_mut(building) {
            let share = |p: u32| u64::from(s.max_hp - 1) * u64::from(p) / u64::from(total);
            let gain = u16::try_from(share(after) - share(before)).unwrap_or(u16::MAX);
            s.hp = s.hp.saturating_add(gain).min(s.max_hp);
        }
    });
    if !finished {
        return;
    }
    if let Some(p) = ctx.player_mut(owner) {
        p.built += 1;
    }
    if kind.is_drop_site() {
        crate::gathering::add_drop_site(ctx, building, owner);
    }
    ctx.emit(&E::Built { building, kind, owner });
}
