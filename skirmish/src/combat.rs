//! Combat: every unit's kind and hit points, the hit points of structures (buildings, which the
//! construction module registers here), melee and ranged fights, attack-moves, deaths and razing.
//!
//! Each turn it runs every fighting unit in id order: a unit attacking strikes when in range and
//! ready, walks closer when not; an idle soldier, or one attack-moving, engages the nearest enemy
//! within [`AGGRO_RADIUS`]. A unit at 0 hit points is removed at once; a structure at 0 has its
//! obstruction removed (the modules that keep state of it drop it when they next step).

use pathing::{Fixed, Navcell, ObstructionId, WorldPos};
use serde::{Deserialize, Serialize};
use sim::rules::{Ctx, View};
use sim::{CommandKind, EntityId, Event, GoalSpec, PlayerId, RangeKind, Target};

use crate::common::{self, WORLD};
use crate::{AGGRO_RADIUS, BuildingKind, MAX_SPAWN, REORDER_TURNS, SkirmishEvent as E, SkirmishReject as R, UNIT_CLASS, UnitKind, turns};

/// The module's name in digests (`combat.units`, …) and snapshots.
pub const NAME: &str = "combat";
/// The module's version: a change to any of its rules is a new version.
pub const VERSION: u32 = 1;

/// What a unit is doing in a fight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Fight {
    /// Nothing (an idle soldier engages enemies within [`AGGRO_RADIUS`]).
    Idle,
    /// Attacking a unit or a structure until it is dead.
    Attack(Target),
    /// Walking to a point, engaging enemies met on the way.
    AttackMove {
        /// The navcell walked to (its centre): a navcell rather than the command's exact point,
        /// since most of a battle's units carry this task and a navcell is 6 bytes of the unit's
        /// hashed bytes where a point is 10 (docs/skirmish.md, "State kept small").
        to: Navcell,
        /// The enemy engaged now.
        target: Option<Target>,
    },
}

/// A unit as combat keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fighter {
    /// Its kind.
    pub kind: UnitKind,
    /// Hit points left. `[Units: hit points] [Limit: 1..=kind's hp]`
    pub hp: u16,
    /// The first turn it can strike again. `[Units: turn number]`
    ///
    /// A turn number, not a countdown: a unit waiting out its cooldown changes nothing, so its
    /// digest range is not hashed again (docs/decisions.md, "Game state keeps turn numbers, not
    /// countdowns").
    pub ready_at: u32,
    /// The first turn combat may give it another order. `[Units: turn number]`
    pub reorder_at: u32,
    /// What it is doing.
    pub task: Fight,
}

impl Fighter {
    /// A whole, idle unit of a kind.
    pub fn new(kind: UnitKind) -> Self {
        Self { kind, hp: kind.stats().hp, ready_at: 0, reorder_at: 0, task: Fight::Idle }
    }
}

/// A structure's hit points (the core's obstruction has no owner).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Structure {
    /// Its owner.
    pub owner: PlayerId,
    /// Its kind.
    pub kind: BuildingKind,
    /// Hit points left. `[Units: hit points] [Limit: 1..=max_hp]`
    pub hp: u16,
    /// Hit points when whole. `[Units: hit points]`
    pub max_hp: u16,
}

/// A player's combat record.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// Enemy units killed.
    pub kills: u32,
    /// Own units lost.
    pub deaths: u32,
    /// Enemy structures destroyed.
    pub razed: u32,
}

/// Combat's world state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CombatState {
    /// The kind of the units a spawn being made right now creates (read by `new_unit`; set and
    /// cleared round the spawn by [`spawn_kind`]).
    pub spawning: Option<UnitKind>,
}

/// Combat's commands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CombatCommand {
    /// World only: `count` whole units of a kind for `player` round `at` (scenario set-up; as
    /// the core's spawn at a point, as many as fit).
    Spawn {
        /// The owner.
        player: u8,
        /// What.
        kind: UnitKind,
        /// Where (on the map).
        at: WorldPos,
        /// How many. `[Limit: 1..=MAX_SPAWN]`
        count: u16,
    },
    /// Units attack a unit or a structure until it is dead.
    Attack {
        /// The sender's units.
        units: Vec<EntityId>,
        /// Another player's unit or structure.
        target: Target,
    },
    /// Units walk to a point, engaging enemies on the way.
    AttackMove {
        /// The sender's units.
        units: Vec<EntityId>,
        /// Where (on the map).
        to: WorldPos,
    },
    /// Units drop their task (in every module) and their orders.
    Stop {
        /// The sender's units.
        units: Vec<EntityId>,
    },
}

/// The combat module (no parameters: every number is a constant of the crate).
#[derive(Clone, Copy, Debug, Default)]
pub struct Combat;

impl sim::rules::Rules for Combat {
    const NAME: &'static str = NAME;
    const VERSION: u32 = VERSION;
    type Unit = Fighter;
    type Object = Structure;
    type Player = Record;
    type State = CombatState;
    type Command = CombatCommand;
    type Event = E;
    type Reject = R;

    fn new_unit(&self, state: &CombatState, _unit: &sim::Unit) -> Fighter {
        // A unit of a building's waiting spawn order is a worker until production reads which
        // kind its order trains; so is a unit the world spawned with a core command.
        Fighter::new(state.spawning.unwrap_or(UnitKind::Worker))
    }

    fn check(&self, view: &View<'_, Self>, player: PlayerId, command: &CombatCommand) -> Result<(), R> {
        let world = view.world();
        common::sender(player, matches!(command, CombatCommand::Spawn { .. }))?;
        match command {
            CombatCommand::Spawn { player: p, at, count, .. } => {
                common::known_player(world, *p)?;
                if !(1..=MAX_SPAWN).contains(count) {
                    return Err(R::BadCount);
                }
                common::on_map(world, *at)
            }
            CombatCommand::Attack { units, target } => {
                common::own_units(world, player, units, false)?;
                let owner = match *target {
                    Target::Unit(id) => common::live(world, id)?.owner,
                    Target::Obstruction(id) => view.object(id).ok_or(R::NotABuilding(id))?.owner,
                };
                if owner == player { Err(R::OwnTarget) } else { Ok(()) }
            }
            CombatCommand::AttackMove { units, to } => {
                common::own_units(world, player, units, false)?;
                common::on_map(world, *to)
            }
            CombatCommand::Stop { units } => common::own_units(world, player, units, false),
        }
    }

    fn apply(&self, ctx: &mut Ctx<'_, Self>, player: PlayerId, command: &CombatCommand) {
        match command {
            CombatCommand::Spawn { player: p, kind, at, count } => {
                let stats = kind.stats();
                let spawn = CommandKind::Spawn {
                    class: UNIT_CLASS,
                    at: *at,
                    count: *count,
                    radius: stats.radius,
                    speed: stats.speed,
                    turn_rate: None,
                };
                ctx.state_mut().spawning = Some(*kind);
                common::refused(ctx, PlayerId(*p), spawn);
                ctx.state_mut().spawning = None;
            }
            CombatCommand::Attack { units, target } => {
                ctx.interrupt(units);
                set_tasks(ctx, units, Fight::Attack(*target));
            }
            CombatCommand::AttackMove { units, to } => {
                ctx.interrupt(units);
                let to = ctx.world().navcell_of(*to);
                set_tasks(ctx, units, Fight::AttackMove { to, target: None });
            }
            CombatCommand::Stop { units } => {
                ctx.interrupt(units);
                for &u in units {
                    if let Some(s) = ctx.unit_mut(u) {
                        s.task = Fight::Idle;
                    }
                }
                common::refused(ctx, player, CommandKind::Stop { units: units.clone() });
            }
        }
    }

    fn step(&self, ctx: &mut Ctx<'_, Self>, _events: &[Event]) {
        // Structures whose obstruction another module or command removed are gone.
        common::drop_gone_objects(ctx);
        for id in common::unit_ids(ctx.world()) {
            if ctx.world().unit(id).is_some() {
                act_unit(ctx, id);
            }
        }
    }

    fn interrupted(&self, ctx: &mut Ctx<'_, Self>, units: &[EntityId]) {
        for &u in units {
            if let Some(s) = ctx.unit(u)
                && s.task != Fight::Idle
                && let Some(s) = ctx.unit_mut(u)
            {
                s.task = Fight::Idle;
            }
        }
    }
}

/// Runs `act` with combat's `spawning` set to `kind`, so the units it creates (through any
/// module's `Ctx::act`) are of that kind; without the combat module `act` just runs.
pub fn spawn_kind<M: sim::rules::Rules, T>(ctx: &mut Ctx<'_, M>, kind: UnitKind, act: impl FnOnce(&mut Ctx<'_, M>) -> T) -> T {
    ctx.with::<Combat, _>(|c| c.state_mut().spawning = Some(kind));
    let result = act(ctx);
    // Combat gives the new units their state first (as `with` runs it), then forgets the kind.
    ctx.with::<Combat, _>(|c| c.state_mut().spawning = None);
    result
}

/// Makes a unit whole and idle as a unit of `kind` (a trained unit, once its kind is known).
pub fn become_kind<M: sim::rules::Rules>(ctx: &mut Ctx<'_, M>, unit: EntityId, kind: UnitKind) {
    ctx.with::<Combat, _>(|c| {
        if let Some(s) = c.unit_mut(unit) {
            *s = Fighter::new(kind);
        }
    });
}

/// Registers a structure's hit points (`hp` of `max_hp`) for an obstruction, so units can attack it.
pub fn add_structure<M: sim::rules::Rules>(ctx: &mut Ctx<'_, M>, id: ObstructionId, structure: Structure) {
    ctx.with::<Combat, _>(|c| {
        // The obstruction was just placed, and ids reach `MAX_OBJECT_ID` only after 2^26 placements.
        let _ = c.set_object(id, structure);
    });
}

/// Gives units a fight and the order it needs.
fn set_tasks(ctx: &mut Ctx<'_, Combat>, units: &[EntityId], task: Fight) {
    for &u in units {
        if let Some(s) = ctx.unit_mut(u) {
            s.task = task;
            s.reorder_at = 0;
        }
        order(ctx, u);
    }
}

/// The centre of a navcell, where an attack-move walks to.
fn navcell_centre(cell: Navcell, cell_size: Fixed) -> WorldPos {
    let s = cell_size.to_bits();
    let at = |n: u16| Fixed::from_bits(i64::from(n) * s + s / 2);
    WorldPos::new(at(cell.i), at(cell.j))
}

/// The core order a unit's fight asks for, given now; a fight the core refuses becomes idle.
fn order(ctx: &mut Ctx<'_, Combat>, id: EntityId) {
    let Some(state) = ctx.unit(id) else { return };
    let stats = state.kind.stats();
    let attack = |target: Target| GoalSpec::Range {
        target,
        kind: if stats.ranged { RangeKind::Ranged } else { RangeKind::Melee },
        min: Fixed::ZERO,
        max: stats.range,
    };
    let goal = match state.task {
        Fight::Idle => return,
        Fight::Attack(t) | Fight::AttackMove { target: Some(t), .. } => attack(t),
        Fight::AttackMove { to, target: None } => GoalSpec::Point(navcell_centre(to, ctx.world().nav().grid().cell_size())),
    };
    let ok = common::order_to(ctx, id, goal);
    let reorder_at = ctx.world().turn().saturating_add(REORDER_TURNS);
    if let Some(s) = ctx.unit_mut(id) {
        s.reorder_at = reorder_at;
        if !ok {
            s.task = Fight::Idle;
        }
    }
}

/// One unit's turn, by its fight.
fn act_unit(ctx: &mut Ctx<'_, Combat>, id: EntityId) {
    let Some(state) = ctx.unit(id).cloned() else { return };
    match state.task {
        Fight::Idle => {
            if state.kind.is_soldier()
                && let Some(t) = enemy_near(ctx, id)
            {
                set_tasks(ctx, &[id], Fight::Attack(t));
                fight(ctx, id, t);
            }
        }
        Fight::Attack(t) => {
            if !fight(ctx, id, t)
                && let Some(s) = ctx.unit_mut(id)
            {
                s.task = Fight::Idle;
            }
        }
        Fight::AttackMove { to, target } => match target {
            Some(t) => {
                if !fight(ctx, id, t) {
                    set_tasks(ctx, &[id], Fight::AttackMove { to, target: None });
                }
            }
            None => {
                if let Some(t) = enemy_near(ctx, id) {
                    set_tasks(ctx, &[id], Fight::AttackMove { to, target: Some(t) });
                    fight(ctx, id, t);
                } else if ctx.world().unit(id).is_some_and(|u| u.orders.is_empty())
                    && let Some(s) = ctx.unit_mut(id)
                {
                    // Arrived (or gave up): the walk is over.
                    s.task = Fight::Idle;
                }
            }
        },
    }
}

/// The nearest enemy within [`AGGRO_RADIUS`]: a unit, else a structure whose square is that near
/// (nearest centre first, ties by id).
fn enemy_near(ctx: &Ctx<'_, Combat>, id: EntityId) -> Option<Target> {
    let me = ctx.world().unit(id)?;
    let (owner, pos) = (me.owner, me.pos);
    if let Some(u) = ctx.view().nearest(pos, AGGRO_RADIUS, |u, _| u.owner != owner && u.owner != WORLD) {
        return Some(Target::Unit(u));
    }
    let obstructions = ctx.world().nav().obstructions();
    ctx.objects()
        .filter(|(_, s)| s.owner != owner)
        .filter_map(|(sid, _)| {
            let sq = obstructions.get(&sid)?.square;
            crate::within_square(pos, &sq, AGGRO_RADIUS).then(|| (sim::rules::distance2(pos, sq.center()), sid))
        })
        .min()
        .map(|(_, sid)| Target::Obstruction(sid))
}

/// An attacker's turn against `target`: a strike when in range and ready, a new order when out of
/// range and standing. False when the target is gone.
fn fight(ctx: &mut Ctx<'_, Combat>, id: EntityId, target: Target) -> bool {
    let (Some(me), Some(state)) = (ctx.world().unit(id), ctx.unit(id)) else { return false };
    let stats = state.kind.stats();
    let cell = ctx.world().nav().grid().cell_size();
    let in_range = match target {
        Target::Unit(t) => match ctx.world().unit(t) {
            Some(other) => crate::within_unit(me, other, stats.range),
            None => return false,
        },
        Target::Obstruction(b) => {
            if ctx.object(b).is_none() {
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
        Target::Obstruction(b) => hurt_structure(ctx, b, stats.damage, owner),
    }
    true
}

/// Takes hit points from a unit; at 0 it dies.
fn hurt_unit(ctx: &mut Ctx<'_, Combat>, unit: EntityId, damage: u16, by: PlayerId) {
    let Some(s) = ctx.unit_mut(unit) else { return };
    s.hp = s.hp.saturating_sub(damage);
    if s.hp > 0 {
        return;
    }
    let kind = s.kind;
    let Some(owner) = ctx.world().unit(unit).map(|u| u.owner) else { return };
    if common::refused(ctx, owner, CommandKind::Remove { units: vec![unit] }) {
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

/// Takes hit points from a structure; at 0 its obstruction is removed.
fn hurt_structure(ctx: &mut Ctx<'_, Combat>, id: ObstructionId, damage: u16, by: PlayerId) {
    let Some(b) = ctx.object_mut(id) else { return };
    b.hp = b.hp.saturating_sub(damage);
    if b.hp > 0 {
        return;
    }
    let (kind, owner) = (b.kind, b.owner);
    if common::refused(ctx, WORLD, CommandKind::RemoveObstruction { id }) {
        return;
    }
    ctx.remove_object(id);
    if let Some(p) = ctx.player_mut(by) {
        p.razed += 1;
    }
    ctx.emit(&E::Razed { building: id, kind, owner, by });
}
