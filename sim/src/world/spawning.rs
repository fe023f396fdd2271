//! Spawning: new units placed round a point or round a building's footprint, and the building
//! spawn orders that wait, in the world's state, for room round their building.
//!
//! The rules (docs/motion-rules.md, "Spawning"):
//!
//! - Candidates are the spawn rings of `pathing::placement` (nearest ring first, from the middle
//!   of the footprint's front side, alternately anticlockwise and clockwise); each unit of a
//!   command takes the first valid candidate left, so a command's units fill the rings in order.
//! - A spawn at a point searches up to [`POINT_SPAWN_RINGS`] rings and places as many units as
//!   fit; the units that do not fit are dropped and counted in [`Event::SpawnShort`].
//! - A spawn from a building searches [`pathing::placement::SPAWN_RINGS`] rings round the
//!   building's obstruction square. The units that do not fit stay in a [`SpawnOrder`] (reported
//!   once by [`Event::SpawnWaiting`]); every turn, after the grid update, the waiting orders try
//!   again oldest first, each placing as many of its units as now fit ([`Event::SpawnedFromQueue`]),
//!   until it is empty, its building is removed, or its player cancels it
//!   ([`CommandKind::CancelSpawns`](crate::command::CommandKind::CancelSpawns)); the last two give
//!   [`Event::SpawnCancelled`]. A player may have at most [`MAX_SPAWN_ORDERS_PER_PLAYER`] orders
//!   waiting.

use pathing::placement::{SPAWN_EPSILON, SPAWN_RINGS, SpawnCursor, UnitShape};
use pathing::{Fixed, ObstructionId, PassClass, Square, WorldPos};

use super::{Unit, World};
use crate::command::{Event, PlayerId, RejectReason};
use crate::digest_tree::Digest;
use crate::ids::EntityId;
use crate::spawn_order::SpawnOrder;
use crate::state_hash;

/// Most units one spawn command may create (or queue). `[Limit: 1..=4096]`
pub const MAX_SPAWN_COUNT: u16 = 4096;

/// Rings searched round a spawn point: 64 rings of units of one size hold at least 4096 of them
/// (ring `k` has room for `4 + 8k`), so a full-size spawn on open ground places every unit.
pub const POINT_SPAWN_RINGS: u32 = 64;

/// Most building spawn orders one player may have waiting; a spawn from a building while the
/// sender has this many waiting is refused. Bounds the state and the turn's retry work.
pub const MAX_SPAWN_ORDERS_PER_PLAYER: usize = 16;

/// The waiting building spawn orders (state: saved and hashed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SpawnQueue {
    /// Oldest first (so in id order).
    pub(crate) orders: Vec<SpawnOrder>,
    /// The id the next order gets.
    pub(crate) next_order: u32,
}

impl SpawnQueue {
    /// The digest of the `spawns` component (a few hundred orders at most, so hashed whole).
    pub(crate) fn digest(&self) -> Digest {
        state_hash::digest("spawns", &(self.next_order, &self.orders))
    }
}

/// What a spawn command asks for, checked.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Batch {
    pub(crate) player: PlayerId,
    pub(crate) class: PassClass,
    pub(crate) pass: PassClass,
    pub(crate) radius: Fixed,
    pub(crate) speed: Fixed,
    pub(crate) turn_rate: Fixed,
}

impl World {
    /// Checks a spawn's class, count, radius, speed and turn rate against the limits of
    /// [`CommandKind::Spawn`](crate::command::CommandKind::Spawn); a turn rate of `None` becomes
    /// the game's [`MotionSettings::turn_rate`](crate::motion::MotionSettings::turn_rate).
    pub(crate) fn check_spawn(
        &self,
        player: PlayerId,
        class: PassClass,
        count: u16,
        radius: Fixed,
        speed: Fixed,
        turn_rate: Option<Fixed>,
    ) -> Result<Batch, RejectReason> {
        let pass = class;
        if class.index() >= self.nav.classes().len() || self.nav.class_nav(pass).is_none() {
            return Err(RejectReason::BadClass);
        }
        if !(1..=MAX_SPAWN_COUNT).contains(&count)
            || radius <= Fixed::ZERO
            || radius > Fixed::from_num(8)
            || speed <= Fixed::ZERO
            || speed > Fixed::from_num(64)
            || turn_rate.is_some_and(|rate| !crate::motion::TURN_RATE_LIMITS.contains(&rate))
        {
            return Err(RejectReason::OutOfRange);
        }
        let turn_rate = turn_rate.unwrap_or(self.settings.motion.turn_rate);
        // Clearance and radius are tied (docs/pathfinding-rules.md, "Clearance"): a unit wider than
        // its class's clearance would be planned along walls it overlaps.
        let clearance = self.nav.classes().get(class).map_or(Fixed::ZERO, |def| def.whole_clearance(self.nav.grid().cell_size()));
        if radius > clearance {
            return Err(RejectReason::RadiusAboveClearance { radius, clearance });
        }
        Ok(Batch { player, class, pass, radius, speed, turn_rate })
    }

    /// Up to `count` positions for the batch's units on the first `rings` spawn rings round
    /// `footprint`, in the order the units take them.
    pub(crate) fn spawn_positions(&self, batch: &Batch, footprint: &Square, count: u16, rings: u32) -> Vec<WorldPos> {
        // Only units near enough to meet a spawn ring matter: the footprint reaches at most
        // hw + hh from its centre along either axis, the outermost ring is
        // first + (rings − 1)·max(2r + 2ε, navcell) beyond it (first = max(r, R) + ε), and
        // another unit reaches r + (its radius ≤ 8 m) + ε further.
        let (r, eps, cell) =
            (i128::from(batch.radius.to_bits()), i128::from(SPAWN_EPSILON.to_bits()), i128::from(self.nav.grid().cell_size().to_bits()));
        let first = i128::from(self.nav.first_spawn_ring(batch.pass, footprint, batch.radius).to_bits());
        let extent = i128::from(footprint.hw().to_bits()) + i128::from(footprint.hh().to_bits());
        let reach =
            extent + first + (i128::from(rings) - 1) * (2 * r + 2 * eps).max(cell) + r + i128::from(Fixed::from_num(8).to_bits()) + 2 * eps;
        let at = footprint.center();
        let near = |p: WorldPos| {
            (i128::from(p.x.to_bits()) - i128::from(at.x.to_bits())).abs() <= reach
                && (i128::from(p.z.to_bits()) - i128::from(at.z.to_bits())).abs() <= reach
        };
        let mut shapes: Vec<UnitShape> = self.units().filter(|u| near(u.pos)).map(|u| UnitShape { pos: u.pos, radius: u.radius }).collect();
        let mut cursor = SpawnCursor::default();
        let mut placed = Vec::new();
        while placed.len() < usize::from(count) {
            let Some(pos) = self.nav.next_spawn_point(batch.pass, footprint, batch.radius, &shapes, rings, &mut cursor) else { break };
            let pos = crate::motion::off_grid_lines(pos, self.nav.grid().cell_size());
            shapes.push(UnitShape { pos, radius: batch.radius });
            placed.push(pos);
        }
        placed
    }

    /// Creates an idle unit of the batch at `pos`.
    pub(crate) fn add_unit(&mut self, batch: &Batch, pos: WorldPos) -> EntityId {
        self.units.add(|id| Unit::new(id, batch.player, batch.class, pos, batch.radius, batch.speed, batch.turn_rate))
    }

    /// [`CommandKind::Spawn`](crate::command::CommandKind::Spawn): as many units as fit on the
    /// rings round `at`, the rest counted in [`Event::SpawnShort`]; refused with `NoRoom` only
    /// when not one fits.
    pub(crate) fn spawn_at(
        &mut self,
        command: (u32, PlayerId, u32),
        batch: &Batch,
        at: WorldPos,
        count: u16,
        events: &mut Vec<Event>,
    ) -> Result<(), RejectReason> {
        let origin = Square::axis_aligned(at, Fixed::ZERO, Fixed::ZERO).map_err(|_| RejectReason::OutOfRange)?;
        let placed = self.spawn_positions(batch, &origin, count, POINT_SPAWN_RINGS);
        if placed.is_empty() {
            return Err(RejectReason::NoRoom);
        }
        let missing = usize::from(count) - placed.len();
        for pos in placed {
            let unit = self.add_unit(batch, pos);
            events.push(Event::Spawned { unit });
        }
        if missing > 0 {
            events.push(Event::SpawnShort { command, missing: missing as u32 });
        }
        Ok(())
    }

    /// [`CommandKind::SpawnFromBuilding`](crate::command::CommandKind::SpawnFromBuilding): as many
    /// units as fit round the building now; the rest wait in a new [`SpawnOrder`].
    pub(crate) fn spawn_from_building(
        &mut self,
        command: (u32, PlayerId, u32),
        batch: &Batch,
        building: ObstructionId,
        count: u16,
        events: &mut Vec<Event>,
    ) -> Result<(), RejectReason> {
        let footprint = self.nav.obstructions().get(&building).ok_or(RejectReason::UnknownObstruction(building))?.square;
        let waiting = self.spawns.orders.iter().filter(|o| o.player == batch.player).count();
        if waiting >= MAX_SPAWN_ORDERS_PER_PLAYER {
            return Err(RejectReason::TooManySpawnOrders { waiting: waiting as u32, max: MAX_SPAWN_ORDERS_PER_PLAYER as u32 });
        }
        if self.next_spawn_order_id().is_none() {
            return Err(RejectReason::IdsExhausted(crate::command::IdKind::SpawnOrder));
        }
        let placed = self.spawn_positions(batch, &footprint, count, SPAWN_RINGS);
        let remaining = count - placed.len() as u16;
        for pos in placed {
            let unit = self.add_unit(batch, pos);
            events.push(Event::Spawned { unit });
        }
        if remaining > 0 {
            let id = self.next_spawn_order_id().expect("checked above");
            self.spawns.next_order = id + 1;
            self.spawns.orders.push(SpawnOrder {
                id,
                player: batch.player,
                building,
                class: batch.class,
                remaining,
                radius: batch.radius,
                speed: batch.speed,
                turn_rate: batch.turn_rate,
            });
            events.push(Event::SpawnWaiting { command, order: id, building, waiting: u32::from(remaining) });
        }
        Ok(())
    }

    /// The id the next spawn order gets, unless the ids are exhausted (`u32::MAX` is never handed out).
    fn next_spawn_order_id(&self) -> Option<u32> {
        (self.spawns.next_order != u32::MAX).then_some(self.spawns.next_order)
    }

    /// [`CommandKind::CancelSpawns`](crate::command::CommandKind::CancelSpawns): drops the
    /// sender's waiting orders at `building`, oldest first; refused when there is none.
    pub(crate) fn cancel_spawns(&mut self, player: PlayerId, building: ObstructionId, events: &mut Vec<Event>) -> Result<(), RejectReason> {
        if !self.spawns.orders.iter().any(|o| o.player == player && o.building == building) {
            return Err(RejectReason::NoSpawnOrder(building));
        }
        self.spawns.orders.retain(|o| {
            let cancel = o.player == player && o.building == building;
            if cancel {
                events.push(Event::SpawnCancelled { order: o.id, remaining: u32::from(o.remaining) });
            }
            !cancel
        });
        Ok(())
    }

    /// The turn's retry of the waiting spawn orders, oldest first, after the grid update: an order
    /// whose building is gone is cancelled; every other places as many of its units as now fit.
    pub(crate) fn retry_spawns(&mut self, events: &mut Vec<Event>) {
        if self.spawns.orders.is_empty() {
            return;
        }
        let orders = std::mem::take(&mut self.spawns.orders);
        let mut kept = Vec::with_capacity(orders.len());
        for mut order in orders {
            let Some(footprint) = self.nav.obstructions().get(&order.building).map(|o| o.square) else {
                events.push(Event::SpawnCancelled { order: order.id, remaining: u32::from(order.remaining) });
                continue;
            };
            // A saved order was checked on load, and the class set never changes, so this holds.
            let Ok(batch) = self.check_spawn(order.player, order.class, order.remaining, order.radius, order.speed, Some(order.turn_rate))
            else {
                events.push(Event::SpawnCancelled { order: order.id, remaining: u32::from(order.remaining) });
                continue;
            };
            let placed = self.spawn_positions(&batch, &footprint, order.remaining, SPAWN_RINGS);
            order.remaining -= placed.len() as u16;
            for pos in placed {
                let unit = self.add_unit(&batch, pos);
                events.push(Event::SpawnedFromQueue { order: order.id, unit });
            }
            if order.remaining > 0 {
                kept.push(order);
            }
        }
        self.spawns.orders = kept;
    }

    /// The waiting spawn orders, oldest first.
    pub fn spawn_orders(&self) -> &[SpawnOrder] {
        &self.spawns.orders
    }

    /// Takes loaded spawn orders after checking them: ids increasing and below the next id, valid
    /// players, classes and limits, at most [`MAX_SPAWN_ORDERS_PER_PLAYER`] per player (their
    /// buildings may be gone: such an order is cancelled at the next retry, as in the saved world).
    pub(crate) fn load_spawns(&mut self, orders: Vec<SpawnOrder>, next_order: u32) -> Result<(), String> {
        let mut last: Option<u32> = None;
        let mut per_player = std::collections::BTreeMap::<PlayerId, usize>::new();
        for o in &orders {
            let what = format!("spawn order {}", o.id);
            if last.is_some_and(|l| l >= o.id) || o.id >= next_order {
                return Err(format!("{what}: ids out of order or not below the next id {next_order}"));
            }
            last = Some(o.id);
            if o.player.0 > self.settings.players {
                return Err(format!("{what}: player {} is not a player", o.player));
            }
            self.check_spawn(o.player, o.class, o.remaining, o.radius, o.speed, Some(o.turn_rate))
                .map_err(|e| format!("{what}: class, count, radius, speed or turn rate refused: {e}"))?;
            let n = per_player.entry(o.player).or_default();
            *n += 1;
            if *n > MAX_SPAWN_ORDERS_PER_PLAYER {
                return Err(format!("{what}: player {} has more than {MAX_SPAWN_ORDERS_PER_PLAYER} orders", o.player));
            }
        }
        self.spawns = SpawnQueue { orders, next_order };
        Ok(())
    }
}
