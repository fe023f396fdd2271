//! Whether a command is allowed: every refusal the game makes, read from the world and the game's
//! state only, so a refused command changes nothing (`sim::Rules::check`).

use std::collections::BTreeSet;

use pathing::{Fixed, WorldPos};
use sim::command::Target;
use sim::{EntityId, PlayerId, View};

use crate::{BUILDING_CLASS, BuildingKind, MAX_BATCH, MAX_COMMAND_UNITS, MAX_QUEUE, MAX_RESOURCE_IDS, MAX_SPAWN, MAX_TREE_WOOD};
use crate::{Skirmish, SkirmishCommand as C, SkirmishReject as R, UnitKind};

/// The world's player: it owns no units and no buildings.
const WORLD: PlayerId = PlayerId(0);

/// Why `player` may not give `command` now, if it may not.
pub(crate) fn check(view: &View<'_, Skirmish>, player: PlayerId, command: &C) -> Result<(), R> {
    let world_only = matches!(command, C::Start { .. } | C::Resources { .. } | C::Spawn { .. });
    if world_only != (player == WORLD) {
        return Err(if world_only { R::WorldOnly } else { R::NotAPlayer });
    }
    match command {
        C::Start { player: p, x, z } => {
            if *p == 0 || *p > view.world().settings().players {
                return Err(R::UnknownPlayer);
            }
            if view.player(PlayerId(*p)).is_some_and(|s| s.started) {
                return Err(R::AlreadyStarted);
            }
            let (x, z) = (Fixed::from_num(*x), Fixed::from_num(*z));
            placeable(view, &crate::footprint(BuildingKind::TownCentre, x, z, Fixed::ZERO))
        }
        C::Resources { first, last, wood } => {
            if first.0 == 0 || first > last || last.0 - first.0 >= MAX_RESOURCE_IDS || last.0 > sim::rules::MAX_OBJECT_ID {
                return Err(R::BadRange);
            }
            if !(1..=MAX_TREE_WOOD).contains(wood) {
                return Err(R::BadAmount);
            }
            if view.world().nav().obstructions().range(*first..=*last).next().is_none() {
                return Err(R::BadRange);
            }
            Ok(())
        }
        C::Spawn { player: p, at, count, .. } => {
            if *p == 0 || *p > view.world().settings().players {
                return Err(R::UnknownPlayer);
            }
            if !(1..=MAX_SPAWN).contains(count) {
                return Err(R::BadCount);
            }
            on_map(view, *at)
        }
        C::Attack { units, target } => {
            own_units(view, player, units, false)?;
            match *target {
                Target::Unit(id) => {
                    let unit = live(view, id)?;
                    if unit.owner == player {
                        return Err(R::OwnTarget);
                    }
                }
                Target::Obstruction(id) => {
                    let b = crate::building(view, id).ok_or(R::NotABuilding(id))?;
                    if b.owner == player {
                        return Err(R::OwnTarget);
                    }
                }
            }
            Ok(())
        }
        C::AttackMove { units, to } => {
            own_units(view, player, units, false)?;
            on_map(view, *to)
        }
        C::Stop { units } => own_units(view, player, units, false),
        C::Train { building, kind, count } => {
            let b = crate::building(view, *building).ok_or(R::NotABuilding(*building))?;
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
            if b.queue.len() + usize::from(*count) > MAX_QUEUE {
                return Err(R::QueueFull);
            }
            afford(view, player, kind.stats().cost * u32::from(*count))
        }
        C::Gather { units, tree } => {
            own_units(view, player, units, true)?;
            match view.object(*tree).and_then(crate::Object::wood) {
                Some(wood) if wood > 0 && view.world().nav().obstructions().contains_key(tree) => Ok(()),
                _ => Err(R::NotATree(*tree)),
            }
        }
        C::Build { kind, square, builders } => {
            own_units(view, player, builders, true)?;
            let size = Fixed::from_num(kind.stats().size);
            if square.w != size || square.h != size {
                return Err(R::BadFootprint);
            }
            afford(view, player, kind.stats().cost)?;
            placeable(view, square)
        }
    }
}

/// The live unit `id`, or why not.
fn live<'a>(view: &View<'a, Skirmish>, id: EntityId) -> Result<&'a sim::Unit, R> {
    if view.world().unit_removed(id) {
        return Err(R::Dead(id));
    }
    view.world().unit(id).ok_or(R::UnknownUnit(id))
}

/// Whether `units` are 1 to [`MAX_COMMAND_UNITS`] distinct live units of `player` (workers, when
/// `workers`).
fn own_units(view: &View<'_, Skirmish>, player: PlayerId, units: &[EntityId], workers: bool) -> Result<(), R> {
    if units.is_empty() || units.len() > MAX_COMMAND_UNITS {
        return Err(R::BadUnitCount);
    }
    let mut seen = BTreeSet::new();
    for &id in units {
        if !seen.insert(id) {
            return Err(R::Duplicate(id));
        }
        let unit = live(view, id)?;
        if unit.owner != player {
            return Err(R::NotOwned(id));
        }
        if workers && view.unit(id).is_some_and(|s| s.kind != UnitKind::Worker) {
            return Err(R::NotAWorker(id));
        }
    }
    Ok(())
}

/// Whether `player` has `cost` wood.
fn afford(view: &View<'_, Skirmish>, player: PlayerId, cost: u32) -> Result<(), R> {
    let have = view.player(player).map_or(0, |p| p.wood);
    if have < cost { Err(R::NotEnoughResources { need: cost, have }) } else { Ok(()) }
}

/// Whether `pos` is on the map.
fn on_map(view: &View<'_, Skirmish>, pos: WorldPos) -> Result<(), R> {
    let grid = view.world().nav().grid();
    let (w, h) = (Fixed::from_num(grid.width()) * grid.cell_size(), Fixed::from_num(grid.height()) * grid.cell_size());
    if pos.x < Fixed::ZERO || pos.z < Fixed::ZERO || pos.x >= w || pos.z >= h {
        return Err(R::OffMap);
    }
    Ok(())
}

/// Whether a building may stand on `square`: the core's own placement check, so the foundation
/// the command then lays is not refused.
fn placeable(view: &View<'_, Skirmish>, square: &sim::command::SquareSpec) -> Result<(), R> {
    let sq = pathing::raster::editor_square(square.x, square.z, square.w, square.h, square.degrees).map_err(|_| R::BadFootprint)?;
    view.world().nav().check_building_placement(BUILDING_CLASS, &sq).map_err(|e| R::CannotPlace(e.into()))
}
