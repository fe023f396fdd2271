//! What the game does: commands carried out (`apply`) and the game's turn (`step`): spawns
//! named, training, then every unit's task in id order (strikes, wood cut and
//! deposited, foundations raised), deaths at once.

use pathing::{Fixed, Navcell, ObstructionId, WorldPos};
use sim::command::{GoalSpec, RangeKind, Target};
use sim::{CommandKind, Ctx, EntityId, Event, PlayerId};

use crate::{
    BUILDING_CLASS, Building, BuildingKind, CARRY_CAPACITY, GATHER_MS, GATHER_RANGE, NEXT_TREE_RADIUS, Object, REORDER_TURNS, START_WOOD,
    START_WORKERS, Skirmish, SkirmishCommand as C, SkirmishEvent as E, Task, UNIT_CLASS, UnitKind, turns,
};

/// The world's player, which removes obstructions (felled trees, razed buildings).
const WORLD: PlayerId = PlayerId(0);

/// Carries out a command `check` accepted.
pub(crate) fn apply(ctx: &mut Ctx<'_, Skirmish>, player: PlayerId, command: &C) {
    match command {
        C::Start { player: p, x, z } => start(ctx, PlayerId(*p), *x, *z),
        C::Resources { first, last, wood } => {
            let ids: Vec<ObstructionId> = ctx.world().nav().obstructions().range(*first..=*last).map(|(&id, _)| id).collect();
            for id in ids {
                if ctx.object(id).and_then(Object::building).is_none() {
                    // The ids exist and `check` kept them within `MAX_OBJECT_ID`.
                    let _ = ctx.set_object(id, Object::Tree { wood: *wood });
                }
            }
        }
        C::Spawn { player: p, kind, at, count } => {
            let stats = kind.stats();
            let spawn =
                CommandKind::Spawn { class: UNIT_CLASS, at: *at, count: *count, radius: stats.radius, speed: stats.speed, turn_rate: None };
            ctx.state_mut().spawning = Some(*kind);
            refused(ctx, PlayerId(*p), spawn);
            ctx.state_mut().spawning = None;
        }
        C::Attack { units, target } => set_tasks(ctx, units, Task::Attack(*target)),
        C::AttackMove { units, to } => {
            let to = ctx.world().navcell_of(*to);
            set_tasks(ctx, units, Task::AttackMove { to, target: None });
        }
        C::Stop { units } => {
            for &u in units {
                if let Some(s) = ctx.unit_mut(u) {
                    s.task = Task::Idle;
                }
            }
            refused(ctx, player, CommandKind::Stop { units: units.clone() });
        }
        C::Train { building, kind, count } => {
            let cost = kind.stats().cost * u32::from(*count);
            if let Some(p) = ctx.player_mut(player) {
                p.wood -= cost;
            }
            // The step of this very turn is the first of its training turns, as each next unit's
            // first is the step after the one that trained the unit before it.
            let each = turns(kind.stats().train_ms, ctx.world().settings().turn_ms);
            let done_at = ctx.world().turn().saturating_add(each - 1);
            if let Some(b) = ctx.object_mut(*building).and_then(Object::building_mut) {
                // A unit joining an empty queue starts training now.
                if b.queue.is_empty() {
                    b.done_at = done_at;
                }
                b.queue.extend(std::iter::repeat_n(*kind, usize::from(*count)));
            }
        }
        C::Gather { units, tree } => set_tasks(ctx, units, Task::Gather(*tree)),
        C::Build { kind, square, builders } => {
            let place = CommandKind::PlaceBuilding { class: BUILDING_CLASS, square: *square, builder: builders.first().copied() };
            let Some(id) = place_building(ctx, player, place) else { return };
            let stats = kind.stats();
            if let Some(p) = ctx.player_mut(player) {
                p.wood -= stats.cost;
            }
            let building = Building {
                owner: player,
                kind: *kind,
                hp: 1,
                max_hp: stats.hp,
                progress: 0,
                finished: false,
                queue: Vec::new(),
                done_at: 0,
            };
            // The obstruction was just placed, and ids reach `MAX_OBJECT_ID` only after 2^26 placements.
            if ctx.set_object(id, Object::Building(building)).is_ok() {
                ctx.state_mut().buildings.insert(id);
            }
            ctx.emit(&E::Placed { building: id, kind: *kind, owner: player });
            set_tasks(ctx, builders, Task::Build(id));
        }
    }
}

/// A player's start: a finished town centre, its workers and its wood.
fn start(ctx: &mut Ctx<'_, Skirmish>, player: PlayerId, x: i32, z: i32) {
    let square = crate::footprint(BuildingKind::TownCentre, Fixed::from_num(x), Fixed::from_num(z), Fixed::ZERO);
    let Some(id) = place_building(ctx, player, CommandKind::PlaceBuilding { class: BUILDING_CLASS, square, builder: None }) else {
        return;
    };
    let hp = BuildingKind::TownCentre.stats().hp;
    let building = Building {
        owner: player,
        kind: BuildingKind::TownCentre,
        hp,
        max_hp: hp,
        progress: 0,
        finished: true,
        queue: Vec::new(),
        done_at: 0,
    };
    // The obstruction was just placed, and ids reach `MAX_OBJECT_ID` only after 2^26 placements.
    if ctx.set_object(id, Object::Building(building)).is_ok() {
        ctx.state_mut().buildings.insert(id);
    }
    if let Some(p) = ctx.player_mut(player) {
        p.started = true;
        p.wood = START_WOOD;
    }
    ctx.emit(&crate::SkirmishEvent::Started { player, town_centre: id });
    spawn(ctx, player, id, UnitKind::Worker, START_WORKERS, false);
}

/// Lays a building by the core's command; its obstruction id, or `None` (reported) if refused.
fn place_building(ctx: &mut Ctx<'_, Skirmish>, player: PlayerId, place: CommandKind) -> Option<ObstructionId> {
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

/// Carries out a core action, reporting a refusal.
fn refused(ctx: &mut Ctx<'_, Skirmish>, player: PlayerId, kind: CommandKind) -> bool {
    match ctx.act(player, kind) {
        Ok(_) => false,
        Err(reason) => {
            ctx.emit(&E::ActionRefused { player, reason });
            true
        }
    }
}

/// Spawns `count` units of a kind at a building: those placed now get their kind from
/// `new_unit` (through `spawning`), a waiting order is remembered until its units appear (and
/// then counted as trained if `trained`). Returns the units placed now.
fn spawn(
    ctx: &mut Ctx<'_, Skirmish>,
    player: PlayerId,
    building: ObstructionId,
    kind: UnitKind,
    count: u16,
    trained: bool,
) -> Vec<EntityId> {
    let stats = kind.stats();
    let command =
        CommandKind::SpawnFromBuilding { building, class: UNIT_CLASS, count, radius: stats.radius, speed: stats.speed, turn_rate: None };
    ctx.state_mut().spawning = Some(kind);
    let result = ctx.act(player, command);
    ctx.state_mut().spawning = None;
    let mut placed = Vec::new();
    match result {
        Ok(events) => {
            for e in events {
                match e {
                    Event::Spawned { unit } => placed.push(unit),
                    Event::SpawnWaiting { order, waiting, .. } => {
                        ctx.state_mut().pending.insert(order, crate::Pending { kind, building, left: waiting, trained });
                    }
                    _ => {}
                }
            }
        }
        Err(reason) => ctx.emit(&E::ActionRefused { player, reason }),
    }
    placed
}

/// Gives units a task and the order it needs.
/// The centre of a navcell, where an attack-move walks to.
fn navcell_centre(cell: Navcell, cell_size: Fixed) -> WorldPos {
    let s = cell_size.to_bits();
    let at = |n: u16| Fixed::from_bits(i64::from(n) * s + s / 2);
    WorldPos::new(at(cell.i), at(cell.j))
}

fn set_tasks(ctx: &mut Ctx<'_, Skirmish>, units: &[EntityId], task: Task) {
    for &u in units {
        if let Some(s) = ctx.unit_mut(u) {
            s.task = task;
            s.reorder_at = 0;
        }
        order(ctx, u);
    }
}

/// The core order a unit's task asks for, given now; a task whose target is gone becomes idle.
fn order(ctx: &mut Ctx<'_, Skirmish>, id: EntityId) {
    let (Some(unit), Some(state)) = (ctx.world().unit(id), ctx.unit(id)) else { return };
    let owner = unit.owner;
    let stats = state.kind.stats();
    let range = |target: Target, max: Fixed, kind: RangeKind| GoalSpec::Range { target, kind, min: Fixed::ZERO, max };
    let attack = |t: Target| range(t, stats.range, if stats.ranged { RangeKind::Ranged } else { RangeKind::Melee });
    let goal = match state.task {
        Task::Idle => return,
        Task::Attack(t) | Task::AttackMove { target: Some(t), .. } => attack(t),
        Task::AttackMove { to, target: None } => GoalSpec::Point(navcell_centre(to, ctx.world().nav().grid().cell_size())),
        Task::Gather(tree) => range(Target::Obstruction(tree), GATHER_RANGE, RangeKind::Melee),
        Task::Return { site, .. } => range(Target::Obstruction(site), GATHER_RANGE, RangeKind::Melee),
        Task::Build(b) => range(Target::Obstruction(b), GATHER_RANGE, RangeKind::Build),
    };
    let ok = ctx.act(owner, CommandKind::Move { units: vec![id], goal, queue: false }).is_ok();
    let reorder_at = ctx.world().turn().saturating_add(REORDER_TURNS);
    if let Some(s) = ctx.unit_mut(id) {
        s.reorder_at = reorder_at;
        if !ok {
            s.task = Task::Idle;
        }
    }
}

/// The game's turn.
pub(crate) fn step(ctx: &mut Ctx<'_, Skirmish>, events: &[Event]) {
    name_waiting_spawns(ctx, events);
    train(ctx);
    let mut ids: Vec<EntityId> = ctx.world().units().map(|u| u.id).collect();
    ids.sort_unstable();
    for id in ids {
        if ctx.world().unit(id).is_some() {
            act_unit(ctx, id);
        }
    }
}

/// Units of waiting spawn orders that appeared this turn get their kind; dropped orders are
/// forgotten.
fn name_waiting_spawns(ctx: &mut Ctx<'_, Skirmish>, events: &[Event]) {
    for e in events {
        match *e {
            Event::SpawnedFromQueue { order, unit } => {
                let Some(&pending) = ctx.state().pending.get(&order) else { continue };
                if pending.left <= 1 {
                    ctx.state_mut().pending.remove(&order);
                } else if let Some(p) = ctx.state_mut().pending.get_mut(&order) {
                    p.left -= 1;
                }
                if let Some(s) = ctx.unit_mut(unit) {
                    *s = crate::UnitState::new(pending.kind);
                }
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
fn trained(ctx: &mut Ctx<'_, Skirmish>, unit: EntityId, kind: UnitKind, building: ObstructionId) {
    let Some(owner) = ctx.world().unit(unit).map(|u| u.owner) else { return };
    if let Some(p) = ctx.player_mut(owner) {
        p.trained += 1;
    }
    ctx.emit(&E::Trained { unit, kind, building });
}

/// Every finished building whose first queued unit is done spawns it, and starts the next.
fn train(ctx: &mut Ctx<'_, Skirmish>) {
    let (turn, turn_ms) = (ctx.world().turn(), ctx.world().settings().turn_ms);
    let done: Vec<ObstructionId> =
        crate::buildings(&ctx.view()).filter(|(_, b)| b.finished && !b.queue.is_empty() && b.done_at <= turn).map(|(id, _)| id).collect();
    for id in done {
        let Some(b) = ctx.object_mut(id).and_then(Object::building_mut) else { continue };
        let kind = b.queue.remove(0);
        if let Some(&next) = b.queue.first() {
            b.done_at = turn.saturating_add(turns(next.stats().train_ms, turn_ms));
        }
        let owner = b.owner;
        for unit in spawn(ctx, owner, id, kind, 1, true) {
            trained(ctx, unit, kind, id);
        }
    }
}

/// One unit's turn, by its task.
fn act_unit(ctx: &mut Ctx<'_, Skirmish>, id: EntityId) {
    let Some(state) = ctx.unit(id).cloned() else { return };
    match state.task {
        Task::Idle => {
            if state.kind.is_soldier()
                && let Some(t) = enemy_near(ctx, id)
            {
                set_tasks(ctx, &[id], Task::Attack(t));
                fight(ctx, id, t);
            }
        }
        Task::Attack(t) => {
            if !fight(ctx, id, t)
                && let Some(s) = ctx.unit_mut(id)
            {
                s.task = Task::Idle;
            }
        }
        Task::AttackMove { to, target } => match target {
            Some(t) => {
                if !fight(ctx, id, t) {
                    set_tasks(ctx, &[id], Task::AttackMove { to, target: None });
                }
            }
            None => {
                if let Some(t) = enemy_near(ctx, id) {
                    set_tasks(ctx, &[id], Task::AttackMove { to, target: Some(t) });
                    fight(ctx, id, t);
                } else if ctx.world().unit(id).is_some_and(|u| u.orders.is_empty())
                    && let Some(s) = ctx.unit_mut(id)
                {
                    // Arrived (or gave up): the walk is over.
                    s.task = Task::Idle;
                }
            }
        },
        Task::Gather(tree) => gather(ctx, id, tree),
        Task::Return { tree, site } => deposit(ctx, id, tree, site),
        Task::Build(b) => build(ctx, id, b),
    }
}

/// The nearest enemy within [`crate::AGGRO_RADIUS`]: a unit, else a building whose square is that
/// near (nearest centre first, ties by id).
fn enemy_near(ctx: &Ctx<'_, Skirmish>, id: EntityId) -> Option<Target> {
    let me = ctx.world().unit(id)?;
    let (owner, pos) = (me.owner, me.pos);
    if let Some(u) = ctx.view().nearest(pos, crate::AGGRO_RADIUS, |u, _| u.owner != owner && u.owner != WORLD) {
        return Some(Target::Unit(u));
    }
    let obstructions = ctx.world().nav().obstructions();
    crate::buildings(&ctx.view())
        .filter(|(_, b)| b.owner != owner)
        .filter_map(|(bid, _)| {
            let sq = obstructions.get(&bid)?.square;
            crate::within_square(pos, &sq, crate::AGGRO_RADIUS).then(|| (sim::rules::distance2(pos, sq.center()), bid))
        })
        .min()
        .map(|(_, bid)| Target::Obstruction(bid))
}

/// An attacker's turn against `target`: a strike when in range and ready, a new order when out of
/// range and standing. False when the target is gone.
fn fight(ctx: &mut Ctx<'_, Skirmish>, id: EntityId, target: Target) -> bool {
    let (Some(me), Some(state)) = (ctx.world().unit(id), ctx.unit(id)) else { return false };
    let stats = state.kind.stats();
    let cell = ctx.world().nav().grid().cell_size();
    let in_range = match target {
        Target::Unit(t) => match ctx.world().unit(t) {
            Some(other) => crate::within_unit(me, other, stats.range),
            None => return false,
        },
        Target::Obstruction(b) => {
            if crate::building(&ctx.view(), b).is_none() {
                return false;
            }
            match ctx.world().nav().obstructions().get(&b) {
                Some(o) => crate::within_obstruction(me.pos, &o.square, stats.range, cell),
                None => return false,
            }
        }
    };
    let turn = ctx.world().turn();
    let (owner, standing, ready_at, reorder_at) = (me.owner, me.orders.is_empty(), state.ready_at, state.reorder_at);
    if !in_range {
        if standing && reorder_at <= turn {
            order(ctx, id);
        }
        return true;
    }
    if turn < ready_at {
        return true;
    }
    let turn_ms = ctx.world().settings().turn_ms;
    if let Some(s) = ctx.unit_mut(id) {
        s.ready_at = turn.saturating_add(turns(stats.cooldown_ms, turn_ms));
    }
    match target {
        Target::Unit(t) => hurt_unit(ctx, t, stats.damage, owner),
        Target::Obstruction(b) => hurt_building(ctx, b, stats.damage, owner),
    }
    true
}

/// Takes hit points from a unit; at 0 it dies.
fn hurt_unit(ctx: &mut Ctx<'_, Skirmish>, unit: EntityId, damage: u16, by: PlayerId) {
    let Some(s) = ctx.unit_mut(unit) else { return };
    s.hp = s.hp.saturating_sub(damage);
    if s.hp > 0 {
        return;
    }
    let kind = s.kind;
    let Some(owner) = ctx.world().unit(unit).map(|u| u.owner) else { return };
    if refused(ctx, owner, CommandKind::Remove { units: vec![unit] }) {
        return;
    }
    if let Some(p) = ctx.player_mut(owner) {
        p.deaths += 1;
    }
    if let Some(p) = ctx.player_mut(by) {
        p.kills += 1;
    }
    ctx.emit(&E::Killed { unit, kind, owner, by });
}

/// Takes hit points from a building; at 0 its obstruction is removed.
fn hurt_building(ctx: &mut Ctx<'_, Skirmish>, id: ObstructionId, damage: u16, by: PlayerId) {
    let Some(b) = ctx.object_mut(id).and_then(Object::building_mut) else { return };
    b.hp = b.hp.saturating_sub(damage);
    if b.hp > 0 {
        return;
    }
    let (kind, owner) = (b.kind, b.owner);
    if refused(ctx, WORLD, CommandKind::RemoveObstruction { id }) {
        return;
    }
    ctx.remove_object(id);
    ctx.state_mut().buildings.remove(&id);
    if let Some(p) = ctx.player_mut(by) {
        p.razed += 1;
    }
    ctx.emit(&E::Razed { building: id, kind, owner, by });
}

/// A worker at a tree: cuts wood when in range, goes to deposit when full or the tree is gone.
fn gather(ctx: &mut Ctx<'_, Skirmish>, id: EntityId, tree: ObstructionId) {
    let (Some(me), Some(state)) = (ctx.world().unit(id), ctx.unit(id)) else { return };
    let turn = ctx.world().turn();
    let (pos, standing, carried, ready_at, reorder_at) = (me.pos, me.orders.is_empty(), state.wood, state.ready_at, state.reorder_at);
    let square = ctx.world().nav().obstructions().get(&tree).map(|o| o.square);
    let wood = ctx.object(tree).and_then(Object::wood).unwrap_or(0);
    let (Some(square), true) = (square, wood > 0) else {
        // The tree is gone: the next one near it, or home with what it carries.
        let next = next_tree(ctx, pos);
        match (next, carried > 0) {
            (_, true) => go_deposit(ctx, id, next.unwrap_or(tree)),
            (Some(t), false) => set_tasks(ctx, &[id], Task::Gather(t)),
            (None, false) => set_tasks(ctx, &[id], Task::Idle),
        }
        return;
    };
    if carried >= CARRY_CAPACITY {
        go_deposit(ctx, id, tree);
        return;
    }
    if !within_reach_or_reorder(ctx, id, pos, &square, standing && reorder_at <= turn) {
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
    if let Some(Object::Tree { wood }) = ctx.object_mut(tree) {
        *wood = left;
    }
    if left == 0 {
        ctx.remove_object(tree);
        if !refused(ctx, WORLD, CommandKind::RemoveObstruction { id: tree }) {
            ctx.emit(&E::Felled { tree });
        }
    }
}

/// The tree with wood nearest to `pos` within [`NEXT_TREE_RADIUS`] (ties by id).
fn next_tree(ctx: &Ctx<'_, Skirmish>, pos: WorldPos) -> Option<ObstructionId> {
    let obstructions = ctx.world().nav().obstructions();
    let r = i128::from(NEXT_TREE_RADIUS.to_bits());
    crate::trees(&ctx.view())
        .filter(|&(_, w)| w > 0)
        .filter_map(|(t, _)| obstructions.get(&t).map(|o| (sim::rules::distance2(pos, o.square.center()), t)))
        .filter(|&(d2, _)| d2 <= r * r)
        .min()
        .map(|(_, t)| t)
}

/// The nearest finished drop-site of `owner` (ties by id).
fn drop_site(ctx: &Ctx<'_, Skirmish>, owner: PlayerId, pos: WorldPos) -> Option<ObstructionId> {
    let obstructions = ctx.world().nav().obstructions();
    crate::buildings(&ctx.view())
        .filter(|(_, b)| b.owner == owner && b.finished && b.kind.is_drop_site())
        .filter_map(|(id, _)| obstructions.get(&id).map(|o| (sim::rules::distance2(pos, o.square.center()), id)))
        .min()
        .map(|(_, id)| id)
}

/// Sends a worker to its nearest drop-site, or idles it if it has none.
fn go_deposit(ctx: &mut Ctx<'_, Skirmish>, id: EntityId, tree: ObstructionId) {
    let Some(me) = ctx.world().unit(id) else { return };
    match drop_site(ctx, me.owner, me.pos) {
        Some(site) => set_tasks(ctx, &[id], Task::Return { tree, site }),
        None => set_tasks(ctx, &[id], Task::Idle),
    }
}

/// Whether a worker at `pos` is within `GATHER_RANGE` of a square; if not and it stands ready
/// (`reorder_now`), it is sent there again.
fn within_reach_or_reorder(ctx: &mut Ctx<'_, Skirmish>, id: EntityId, pos: WorldPos, square: &pathing::Square, reorder_now: bool) -> bool {
    let cell = ctx.world().nav().grid().cell_size();
    if crate::within_obstruction(pos, square, GATHER_RANGE, cell) {
        return true;
    }
    if reorder_now {
        order(ctx, id);
    }
    false
}

/// A worker carrying wood: deposits it in range of the drop-site, then goes back to its tree.
fn deposit(ctx: &mut Ctx<'_, Skirmish>, id: EntityId, tree: ObstructionId, site: ObstructionId) {
    let (Some(me), Some(state)) = (ctx.world().unit(id), ctx.unit(id)) else { return };
    let turn = ctx.world().turn();
    let (owner, pos, standing, carried, reorder_at) = (me.owner, me.pos, me.orders.is_empty(), state.wood, state.reorder_at);
    let usable = crate::building(&ctx.view(), site).is_some_and(|b| b.owner == owner && b.finished);
    let square = ctx.world().nav().obstructions().get(&site).map(|o| o.square);
    let (Some(square), true) = (square, usable) else {
        go_deposit(ctx, id, tree);
        return;
    };
    if !within_reach_or_reorder(ctx, id, pos, &square, standing && reorder_at <= turn) {
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
    let back = if ctx.object(tree).and_then(Object::wood).is_some() { Some(tree) } else { next_tree(ctx, pos) };
    match back {
        Some(t) => set_tasks(ctx, &[id], Task::Gather(t)),
        None => set_tasks(ctx, &[id], Task::Idle),
    }
}

/// A builder at its foundation: one turn of work when in range; the building's hit points rise in
/// proportion to the work done, and it is finished when the work is.
fn build(ctx: &mut Ctx<'_, Skirmish>, id: EntityId, building: ObstructionId) {
    let (Some(me), Some(state)) = (ctx.world().unit(id), ctx.unit(id)) else { return };
    let turn = ctx.world().turn();
    let (owner, pos, standing, reorder_at) = (me.owner, me.pos, me.orders.is_empty(), state.reorder_at);
    let ours = crate::building(&ctx.view(), building).filter(|b| b.owner == owner && !b.finished).is_some();
    let square = ctx.world().nav().obstructions().get(&building).map(|o| o.square);
    let (Some(square), true) = (square, ours) else {
        set_tasks(ctx, &[id], Task::Idle);
        return;
    };
    let cell = ctx.world().nav().grid().cell_size();
    // The core's build range is at least a navcell (RangeKind::Build).
    if !crate::within_obstruction(pos, &square, GATHER_RANGE.max(cell), cell) {
        if standing && reorder_at <= turn {
            order(ctx, id);
        }
        return;
    }
    let turn_ms = ctx.world().settings().turn_ms;
    let Some(b) = ctx.object_mut(building).and_then(Object::building_mut) else { return };
    let total = b.kind.stats().build_ms;
    let before = b.progress;
    b.progress = (b.progress + turn_ms).min(total);
    let share = |p: u32| u64::from(b.max_hp - 1) * u64::from(p) / u64::from(total);
    let gain = u16::try_from(share(b.progress) - share(before)).unwrap_or(u16::MAX);
    b.hp = b.hp.saturating_add(gain).min(b.max_hp);
    if b.progress < total {
        return;
    }
    b.finished = true;
    let kind = b.kind;
    if let Some(p) = ctx.player_mut(owner) {
        p.built += 1;
    }
    ctx.emit(&E::Built { building, kind, owner });
}
