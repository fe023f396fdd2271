//! Gathering: trees and the wood in them, drop-sites (registered by the construction module when a
//! town centre is finished), workers cutting and carrying wood, and each player's store of wood,
//! which the other modules spend through [`spend`].
//!
//! Each turn, after dropping trees and drop-sites whose obstruction is gone, it runs every
//! hauling worker in id order: a worker in range of its tree cuts one wood every
//! [`GATHER_MS`] until it carries [`CARRY_CAPACITY`],
//! then walks to its nearest drop-site, deposits and goes back; a felled tree's workers look for
//! the next one within [`NEXT_TREE_RADIUS`].

use pathing::{ObstructionId, WorldPos};
use serde::{Deserialize, Serialize};
use sim::rules::{Ctx, View};
use sim::{CommandKind, EntityId, Event, GoalSpec, PlayerId, RangeKind, Target};

use crate::common::{self, WORLD};
use crate::{
    CARRY_CAPACITY, GATHER_MS, GATHER_RANGE, MAX_RESOURCE_IDS, MAX_TREE_WOOD, NEXT_TREE_RADIUS, REORDER_TURNS, SkirmishEvent as E,
    SkirmishReject as R, turns,
};

/// The module's name in digests (`gathering.units`, …) and snapshots.
pub const NAME: &str = "gathering";
/// The module's version: a change to any of its rules is a new version.
pub const VERSION: u32 = 1;

/// What a worker is doing with wood.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Haul {
    /// Nothing.
    Idle,
    /// Cutting wood at a tree.
    Gather(ObstructionId),
    /// Carrying wood to a drop-site, then back to the tree.
    Return {
        /// The tree to go back to.
        tree: ObstructionId,
        /// The drop-site.
        site: ObstructionId,
    },
}

/// A unit as gathering keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hauler {
    /// What it is doing.
    pub task: Haul,
    /// Wood it carries. `[Units: wood] [Limit: 0..=CARRY_CAPACITY]`
    pub wood: u16,
    /// The first turn it can cut the next wood. `[Units: turn number]`
    pub ready_at: u32,
    /// The first turn gathering may give it another order. `[Units: turn number]`
    pub reorder_at: u32,
}

impl Hauler {
    /// An idle unit carrying nothing.
    pub const IDLE: Hauler = Hauler { task: Haul::Idle, wood: 0, ready_at: 0, reorder_at: 0 };
}

/// An obstruction as gathering keeps it (per obstruction, so a tree cut re-hashes only its
/// range of 64 obstruction ids; docs/decisions.md, "A game keeps state per obstruction").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Resource {
    /// A tree and the wood left in it.
    Tree {
        /// Wood left. `[Units: wood] [Limit: 1..=MAX_TREE_WOOD]`
        wood: u32,
    },
    /// A building where its owner's workers deposit wood.
    DropSite {
        /// Its owner.
        owner: PlayerId,
    },
}

impl Resource {
    /// The tree's wood, if it is a tree.
    pub fn wood(&self) -> Option<u32> {
        match self {
            Self::Tree { wood } => Some(*wood),
            Self::DropSite { .. } => None,
        }
    }
}

/// A player's wood.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stock {
    /// Wood in store. `[Units: wood]`
    pub wood: u32,
    /// Wood deposited, in all. `[Units: wood]`
    pub gathered: u32,
}

/// Gathering's world state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatheringState {
    /// The obstruction ids of every drop-site (whose state is a [`Resource::DropSite`]), so
    /// workers find them without going through every tree.
    pub drop_sites: std::collections::BTreeSet<ObstructionId>,
}

/// Gathering's commands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GatheringCommand {
    /// World only: the obstructions `first..=last` that exist and are not buildings are trees
    /// with `wood` each.
    Resources {
        /// First id.
        first: ObstructionId,
        /// Last id.
        last: ObstructionId,
        /// Wood of each. `[Units: wood] [Limit: 1..=MAX_TREE_WOOD]`
        wood: u32,
    },
    /// Workers gather wood at a tree.
    Gather {
        /// The sender's workers.
        units: Vec<EntityId>,
        /// The tree.
        tree: ObstructionId,
    },
}

/// The gathering module (no parameters).
#[derive(Clone, Copy, Debug, Default)]
pub struct Gathering;

impl sim::rules::Rules for Gathering {
    const NAME: &'static str = NAME;
    const VERSION: u32 = VERSION;
    type Unit = Hauler;
    type Object = Resource;
    type Player = Stock;
    type State = GatheringState;
    type Command = GatheringCommand;
    type Event = E;
    type Reject = R;

    fn new_unit(&self, _state: &GatheringState, _unit: &sim::Unit) -> Hauler {
        Hauler::IDLE
    }

    fn check(&self, view: &View<'_, Self>, player: PlayerId, command: &GatheringCommand) -> Result<(), R> {
        let world = view.world();
        common::sender(player, matches!(command, GatheringCommand::Resources { .. }))?;
        match command {
            GatheringCommand::Resources { first, last, wood } => {
                if first.0 == 0 || first > last || last.0 - first.0 >= MAX_RESOURCE_IDS || last.0 > sim::rules::MAX_OBJECT_ID {
                    return Err(R::BadRange);
                }
                if !(1..=MAX_TREE_WOOD).contains(wood) {
                    return Err(R::BadAmount);
                }
                if world.nav().obstructions().range(*first..=*last).next().is_none() {
                    return Err(R::BadRange);
                }
                Ok(())
            }
            GatheringCommand::Gather { units, tree } => {
                common::own_units(world, player, units, true)?;
                match view.object(*tree).and_then(Resource::wood) {
                    Some(wood) if wood > 0 && world.nav().obstructions().contains_key(tree) => Ok(()),
                    _ => Err(R::NotATree(*tree)),
                }
            }
        }
    }

    fn apply(&self, ctx: &mut Ctx<'_, Self>, _player: PlayerId, command: &GatheringCommand) {
        match command {
            GatheringCommand::Resources { first, last, wood } => {
                let ids: Vec<ObstructionId> = ctx.world().nav().obstructions().range(*first..=*last).map(|(&id, _)| id).collect();
                for id in ids {
                    let building = ctx.world().game::<crate::Construction>().is_some_and(|c| c.object(id).is_some());
                    if !building && !matches!(ctx.object(id), Some(Resource::DropSite { .. })) {
                        // The ids exist and `check` kept them within `MAX_OBJECT_ID`.
                        let _ = ctx.set_object(id, Resource::Tree { wood: *wood });
                    }
                }
            }
            GatheringCommand::Gather { units, tree } => {
                ctx.interrupt(units);
                set_tasks(ctx, units, Haul::Gather(*tree));
            }
        }
    }

    fn step(&self, ctx: &mut Ctx<'_, Self>, _events: &[Event]) {
        let sites: Vec<ObstructionId> = ctx.state().drop_sites.iter().copied().collect();
        for id in sites {
            if !ctx.world().nav().obstructions().contains_key(&id) {
                remove_drop_site(ctx, id);
            }
        }
        for id in common::unit_ids(ctx.world()) {
            match ctx.unit(id).map(|s| s.task) {
                Some(Haul::Gather(tree)) => gather(ctx, id, tree),
                Some(Haul::Return { tree, site }) => deposit(ctx, id, tree, site),
                Some(Haul::Idle) | None => {}
            }
        }
    }

    fn interrupted(&self, ctx: &mut Ctx<'_, Self>, units: &[EntityId]) {
        for &u in units {
            if ctx.unit(u).is_some_and(|s| s.task != Haul::Idle)
                && let Some(s) = ctx.unit_mut(u)
            {
                s.task = Haul::Idle;
            }
        }
    }
}

/// A player's wood in store (0 without the gathering module).
pub fn wood_of(world: &sim::World, player: PlayerId) -> u32 {
    world.game::<Gathering>().and_then(|g| g.player(player).map(|p| p.wood)).unwrap_or(0)
}

/// Whether `player` has `cost` wood, read from the gathering module's state.
///
/// # Errors
/// [`R::NotEnoughResources`] when not (a world without the gathering module has no wood).
pub fn afford(world: &sim::World, player: PlayerId, cost: u32) -> Result<(), R> {
    let have = wood_of(world, player);
    if have < cost { Err(R::NotEnoughResources { need: cost, have }) } else { Ok(()) }
}

/// Takes `cost` wood from `player`'s store (as much as there is: a module checks [`afford`]
/// first, in its `check`).
pub fn spend<M: sim::rules::Rules>(ctx: &mut Ctx<'_, M>, player: PlayerId, cost: u32) {
    ctx.with::<Gathering, _>(|g| {
        if let Some(p) = g.player_mut(player) {
            p.wood = p.wood.saturating_sub(cost);
        }
    });
}

/// Puts `wood` in `player`'s store (a start's wood; not counted as gathered).
pub fn grant<M: sim::rules::Rules>(ctx: &mut Ctx<'_, M>, player: PlayerId, wood: u32) {
    ctx.with::<Gathering, _>(|g| {
        if let Some(p) = g.player_mut(player) {
            p.wood = p.wood.saturating_add(wood);
        }
    });
}

/// Makes an obstruction a drop-site of `owner`.
pub fn add_drop_site<M: sim::rules::Rules>(ctx: &mut Ctx<'_, M>, id: ObstructionId, owner: PlayerId) {
    ctx.with::<Gathering, _>(|g| {
        if g.set_object(id, Resource::DropSite { owner }).is_ok() {
            g.state_mut().drop_sites.insert(id);
        }
    });
}

fn remove_drop_site(ctx: &mut Ctx<'_, Gathering>, id: ObstructionId) {
    ctx.remove_object(id);
    ctx.state_mut().drop_sites.remove(&id);
}

/// Every tree with its wood, by ascending obstruction id.
pub fn trees<'a>(view: &View<'a, Gathering>) -> impl Iterator<Item = (ObstructionId, u32)> + 'a {
    view.objects().filter_map(|(id, o)| o.wood().map(|w| (id, w)))
}

/// Gives workers a haul and the order it needs.
fn set_tasks(ctx: &mut Ctx<'_, Gathering>, units: &[EntityId], task: Haul) {
    for &u in units {
        if let Some(s) = ctx.unit_mut(u) {
            s.task = task;
            s.reorder_at = 0;
        }
        order(ctx, u);
    }
}

/// The core order a worker's haul asks for, given now; a haul the core refuses becomes idle.
fn order(ctx: &mut Ctx<'_, Gathering>, id: EntityId) {
    let Some(state) = ctx.unit(id) else { return };
    let at = match state.task {
        Haul::Idle => return,
        Haul::Gather(tree) => tree,
        Haul::Return { site, .. } => site,
    };
    let goal = GoalSpec::Range { target: Target::Obstruction(at), kind: RangeKind::Melee, min: pathing::Fixed::ZERO, max: GATHER_RANGE };
    let ok = common::order_to(ctx, id, goal);
    let reorder_at = ctx.world().turn().saturating_add(REORDER_TURNS);
    if let Some(s) = ctx.unit_mut(id) {
        s.reorder_at = reorder_at;
        if !ok {
            s.task = Haul::Idle;
        }
    }
}

/// A worker at a tree: cuts wood when in range, goes to deposit when full or the tree is gone.
fn gather(ctx: &mut Ctx<'_, Gathering>, id: EntityId, tree: ObstructionId) {
    let (Some(me), Some(state)) = (ctx.world().unit(id), ctx.unit(id)) else { return };
    let turn = ctx.world().turn();
    let (pos, standing, carried, ready_at, reorder_at) = (me.pos, me.orders.is_empty(), state.wood, state.ready_at, state.reorder_at);
    let square = ctx.world().nav().obstructions().get(&tree).map(|o| o.square);
    let wood = ctx.object(tree).and_then(Resource::wood).unwrap_or(0);
    let (Some(square), true) = (square, wood > 0) else {
        // The tree is gone: the next one near it, or home with what it carries.
        let next = next_tree(ctx, pos);
        match (next, carried > 0) {
            (_, true) => go_deposit(ctx, id, next.unwrap_or(tree)),
            (Some(t), false) => set_tasks(ctx, &[id], Haul::Gather(t)),
            (None, false) => set_tasks(ctx, &[id], Haul::Idle),
        }
        return;
    };
    if carried >= CARRY_CAPACITY {
        go_deposit(ctx, id, tree);
        return;
    }
    if !common::within_or(ctx, pos, &square, GATHER_RANGE, standing && reorder_at <= turn, |ctx| order(ctx, id)) {
        return;
    }
    if turn < ready_at {
        return;
    }
    let turn_ms = ctx.world().settings().turn_ms;
    if let Some(s) = ctx.unit_mut(id) {
        s.wood += 1;
        s.ready_at = turn.saturating_add(turns(GATHER_MS, turn_ms));
    }
    let left = wood - 1;
    if let Some(Resource::Tree { wood }) = ctx.object_mut(tree) {
        *wood = left;
    }
    if left == 0 {
        ctx.remove_object(tree);
        if !common::refused(ctx, WORLD, CommandKind::RemoveObstruction { id: tree }) {
            ctx.emit(&E::Felled { tree });
        }
    }
}

/// The tree with wood nearest to `pos` within [`NEXT_TREE_RADIUS`] (ties by id).
fn next_tree(ctx: &Ctx<'_, Gathering>, pos: WorldPos) -> Option<ObstructionId> {
    let obstructions = ctx.world().nav().obstructions();
    let r = i128::from(NEXT_TREE_RADIUS.to_bits());
    trees(&ctx.view())
        .filter(|&(_, w)| w > 0)
        .filter_map(|(t, _)| obstructions.get(&t).map(|o| (sim::rules::distance2(pos, o.square.center()), t)))
        .filter(|&(d2, _)| d2 <= r * r)
        .min()
        .map(|(_, t)| t)
}

/// The nearest drop-site of `owner` (ties by id).
fn drop_site(ctx: &Ctx<'_, Gathering>, owner: PlayerId, pos: WorldPos) -> Option<ObstructionId> {
    let obstructions = ctx.world().nav().obstructions();
    ctx.state()
        .drop_sites
        .iter()
        .filter(|id| matches!(ctx.object(**id), Some(Resource::DropSite { owner: o }) if *o == owner))
        .filter_map(|&id| obstructions.get(&id).map(|o| (sim::rules::distance2(pos, o.square.center()), id)))
        .min()
        .map(|(_, id)| id)
}

/// Sends a worker to its nearest drop-site, or idles it if it has none.
fn go_deposit(ctx: &mut Ctx<'_, Gathering>, id: EntityId, tree: ObstructionId) {
    let Some(me) = ctx.world().unit(id) else { return };
    match drop_site(ctx, me.owner, me.pos) {
        Some(site) => set_tasks(ctx, &[id], Haul::Return { tree, site }),
        None => set_tasks(ctx, &[id], Haul::Idle),
    }
}

/// A worker carrying wood: deposits it in range of the drop-site, then goes back to its tree.
fn deposit(ctx: &mut Ctx<'_, Gathering>, id: EntityId, tree: ObstructionId, site: ObstructionId) {
    let (Some(me), Some(state)) = (ctx.world().unit(id), ctx.unit(id)) else { return };
    let turn = ctx.world().turn();
    let (owner, pos, standing, carried, reorder_at) = (me.owner, me.pos, me.orders.is_empty(), state.wood, state.reorder_at);
    let usable = matches!(ctx.object(site), Some(Resource::DropSite { owner: o }) if *o == owner);
    let square = ctx.world().nav().obstructions().get(&site).map(|o| o.square);
    let (Some(square), true) = (square, usable) else {
        go_deposit(ctx, id, tree);
        return;
    };
    if !common::within_or(ctx, pos, &square, GATHER_RANGE, standing && reorder_at <= turn, |ctx| order(ctx, id)) {
        return;
    }
    if let Some(s) = ctx.unit_mut(id) {
        s.wood = 0;
    }
    if let Some(p) = ctx.player_mut(owner) {
        p.wood = p.wood.saturating_add(u32::from(carried));
        p.gathered = p.gathered.saturating_add(u32::from(carried));
    }
    if carried > 0 {
        ctx.emit(&E::Deposited { unit: id, wood: carried });
    }
    let back = if ctx.object(tree).and_then(Resource::wood).is_some() { Some(tree) } else { next_tree(ctx, pos) };
    match back {
        Some(t) => set_tasks(ctx, &[id], Haul::Gather(t)),
        None => set_tasks(ctx, &[id], Haul::Idle),
    }
}
