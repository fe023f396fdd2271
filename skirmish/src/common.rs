//! What the four modules share: the checks of a command's units, places and footprints, and the
//! core actions whose refusal a module reports as an event.

use std::collections::BTreeSet;

use pathing::{Fixed, ObstructionId, WorldPos};
use sim::rules::{Ctx, Rules};
use sim::{CommandKind, EntityId, Event, PlayerId, World};

use crate::{BUILDING_CLASS, MAX_COMMAND_UNITS, SkirmishEvent as E, SkirmishReject as R, UnitKind};

/// The world's player: it owns no units and no buildings, and removes obstructions (felled trees,
/// razed buildings).
pub(crate) const WORLD: PlayerId = PlayerId(0);

/// That a world-only command comes from the world and any other from a player.
pub(crate) fn sender(player: PlayerId, world_only: bool) -> Result<(), R> {
    if world_only != (player == WORLD) {
        return Err(if world_only { R::WorldOnly } else { R::NotAPlayer });
    }
    Ok(())
}

/// That `p` is one of the world's players (not the world).
pub(crate) fn known_player(world: &World, p: u8) -> Result<(), R> {
    if p == 0 || p > world.settings().players { Err(R::UnknownPlayer) } else { Ok(()) }
}

/// The live unit `id`, or why not.
pub(crate) fn live(world: &World, id: EntityId) -> Result<&sim::Unit, R> {
    if world.unit_removed(id) {
        return Err(R::Dead(id));
    }
    world.unit(id).ok_or(R::UnknownUnit(id))
}

/// Whether `units` are 1 to [`MAX_COMMAND_UNITS`] distinct live units of `player` (workers, when
/// `workers`: the combat module keeps the kinds, so without it no unit is a worker).
pub(crate) fn own_units(world: &World, player: PlayerId, units: &[EntityId], workers: bool) -> Result<(), R> {
    if units.is_empty() || units.len() > MAX_COMMAND_UNITS {
        return Err(R::BadUnitCount);
    }
    let mut seen = BTreeSet::new();
    for &id in units {
        if !seen.insert(id) {
            return Err(R::Duplicate(id));
        }
        let unit = live(world, id)?;
        if unit.owner != player {
            return Err(R::NotOwned(id));
        }
        if workers && crate::kind_of(world, id) != Some(UnitKind::Worker) {
            return Err(R::NotAWorker(id));
        }
    }
    Ok(())
}

/// Whether `pos` is on the map.
pub(crate) fn on_map(world: &World, pos: WorldPos) -> Result<(), R> {
    let grid = world.nav().grid();
    let (w, h) = (Fixed::from_num(grid.width()) * grid.cell_size(), Fixed::from_num(grid.height()) * grid.cell_size());
    if pos.x < Fixed::ZERO || pos.z < Fixed::ZERO || pos.x >= w || pos.z >= h {
        return Err(R::OffMap);
    }
    Ok(())
}

/// Whether a building may stand on `square`: the core's own placement check, so the foundation
/// the command then lays is not refused.
pub(crate) fn placeable(world: &World, square: &sim::SquareSpec) -> Result<(), R> {
    let sq = pathing::raster::editor_square(square.x, square.z, square.w, square.h, square.degrees).map_err(|_| R::BadFootprint)?;
    world.nav().check_building_placement(BUILDING_CLASS, &sq).map_err(|e| R::CannotPlace(e.into()))
}

/// Carries out a core action, reporting a refusal as the module's event; true when refused.
pub(crate) fn refused<M: Rules<Event = E>>(ctx: &mut Ctx<'_, M>, player: PlayerId, kind: CommandKind) -> bool {
    match ctx.act(player, kind) {
        Ok(_) => false,
        Err(reason) => {
            ctx.emit(&E::ActionRefused { player, reason });
            true
        }
    }
}

/// Lays a building by the core's command; its obstruction id, or `None` (reported) if refused.
pub(crate) fn place_building<M: Rules<Event = E>>(ctx: &mut Ctx<'_, M>, player: PlayerId, place: CommandKind) -> Option<ObstructionId> {
    match ctx.act(player, place) {
        Ok(events) => events.iter().find_map(|e| match e {
            Event::ObstructionPlaced { id } => Some(*id),
            _ => None,
        }),
        Err(reason) => {
            ctx.emit(&E::ActionRefused { player, reason });
            None
        }
    }
}

/// Whether a unit at `pos` is within `range` of a square; if not and `reorder_now`, `order` sends
/// it there again.
pub(crate) fn within_or<M: Rules>(
    ctx: &mut Ctx<'_, M>,
    pos: WorldPos,
    square: &pathing::Square,
    range: Fixed,
    reorder_now: bool,
    order: impl FnOnce(&mut Ctx<'_, M>),
) -> bool {
    let cell = ctx.world().nav().grid().cell_size();
    if crate::within_obstruction(pos, square, range, cell) {
        return true;
    }
    if reorder_now {
        order(ctx);
    }
    false
}

/// Gives a unit a core order to a goal now; false when the core refused it. The unit's owner
/// gives it, as the player would.
pub(crate) fn order_to<M: Rules>(ctx: &mut Ctx<'_, M>, id: EntityId, goal: sim::GoalSpec) -> bool {
    let Some(owner) = ctx.world().unit(id).map(|u| u.owner) else { return false };
    ctx.act(owner, CommandKind::Move { units: vec![id], goal, queue: false }).is_ok()
}

/// Drops the module's state of every obstruction that no longer exists (razed, felled, or removed
/// by the world): each module does so when it steps.
pub(crate) fn drop_gone_objects<M: Rules>(ctx: &mut Ctx<'_, M>) {
    let gone: Vec<ObstructionId> =
        ctx.objects().map(|(id, _)| id).filter(|id| !ctx.world().nav().obstructions().contains_key(id)).collect();
    for id in gone {
        ctx.remove_object(id);
    }
}

/// Every live unit's id, ascending: the order each module runs its units in.
pub(crate) fn unit_ids(world: &World) -> Vec<EntityId> {
    let mut ids: Vec<EntityId> = world.units().map(|u| u.id).collect();
    ids.sort_unstable();
    ids
}
