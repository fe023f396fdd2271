//! Unit motion: each moving unit advances `speed × turn length` along its turning points.
//!
//! Every movement segment is checked against the navcell grid of the unit's class (all navcells the
//! closed segment touches must be passable, [`pathing::collide::segment_clear`]) and against the
//! obstruction squares of the units that are not moving, grown by the mover's radius, with the 0
//! A.D. design's rule (a segment starting inside a square never collides with it; one ending inside
//! collides; otherwise it collides when it passes through,
//! [`pathing::collide::segment_hits_square`]). As in 0 A.D., moving units do not block each other
//! (a column of units can walk in file); keeping them apart is the job of the collision push-apart.
//! The other units are taken where they stood at the start of the motion step, and units are
//! committed in entity-id order, so no unit's outcome depends on the order a loop visits them.
//!
//! A waypoint is reached when the turn's remaining distance covers it: the unit then stands exactly
//! on it (no threshold is needed because movement is exact along the segment). Distances use an
//! integer square root of the exact squared length, rounded down.
//!
//! Blocked units: when the grid changed under a path (a building placed on it), the unit stops at
//! the segment's last clear point and asks for a new path at once. When another unit is in the
//! way, it waits; after [`BLOCKED_REPLAN_TURNS`] turns it asks for a new path, and after
//! [`BLOCKED_FAIL_TURNS`] it gives up its order ([`Event::Failed`]). A unit standing on an
//! impassable navcell (a building placed on it) asks for a path, which the long-range pathfinder
//! answers with a straight escape to the nearest passable navcell; the grid check is skipped while
//! it is still inside blocked navcells.

use pathing::collide::{UnitSquare, furthest_clear_point, segment_clear, segment_hits_square};
use pathing::{Fixed, PassClass, WorldPos};

use crate::command::Event;
use crate::ids::EntityId;
use crate::world::{PathRequest, UnitState, World};

/// Turns a unit waits behind another unit before it asks for a new path.
pub const BLOCKED_REPLAN_TURNS: u8 = 3;

/// Turns a unit stays blocked before it gives up its order.
pub const BLOCKED_FAIL_TURNS: u8 = 25;

/// Side of the buckets of the unit index. `[Units: metres]`
const BUCKET_M: i64 = 8;

/// The position moved off navcell borders: a coordinate exactly on a grid line moves one raw
/// unit (2^-16 m) into the navcell that contains it. Movement checks treat navcells as closed, so a
/// unit standing exactly on the edge of a blocked navcell would touch it with every step; keeping
/// units off the lines (which changes nothing else: the navcell under the unit is the same) means
/// it never does.
pub fn off_grid_lines(pos: WorldPos, cell_size: Fixed) -> WorldPos {
    let s = cell_size.to_bits();
    let nudge = |v: Fixed| if v.to_bits().rem_euclid(s) == 0 { Fixed::from_bits(v.to_bits() + 1) } else { v };
    WorldPos::new(nudge(pos.x), nudge(pos.z))
}

/// Floor of the square root.
pub(crate) fn isqrt(n: u128) -> u128 {
    if n < 2 {
        return n;
    }
    // Newton from above: start at a power of two not below the root.
    let mut x = 1u128 << (128 - n.leading_zeros()).div_ceil(2);
    loop {
        let y = (x + n / x) / 2;
        if y >= x {
            return x;
        }
        x = y;
    }
}

/// Exact-floor length of `to − from`, raw with 16 fractional bits.
fn distance_raw(from: WorldPos, to: WorldPos) -> i128 {
    let dx = i128::from(to.x.to_bits()) - i128::from(from.x.to_bits());
    let dz = i128::from(to.z.to_bits()) - i128::from(from.z.to_bits());
    isqrt((dx * dx + dz * dz) as u128) as i128
}

/// The point `budget` along the segment from `from` towards `to` (of length `length`, both raw),
/// each coordinate rounded toward `from`.
fn advance(from: WorldPos, to: WorldPos, budget: i128, length: i128) -> WorldPos {
    let step = |a: Fixed, b: Fixed| {
        let d = i128::from(b.to_bits()) - i128::from(a.to_bits());
        let moved = d * budget / length; // truncates toward zero: toward `from`
        Fixed::from_bits((i128::from(a.to_bits()) + moved) as i64)
    };
    WorldPos::new(step(from.x, to.x), step(from.z, to.z))
}

/// Units where they stood at the start of the step, sorted by bucket of `BUCKET_M` metres: memory
/// in proportion to the units, not to the map.
struct UnitIndex {
    entries: Vec<(EntityId, WorldPos, Fixed)>,
    /// `(bucket z, bucket x, entry)`, sorted.
    sorted: Vec<(i64, i64, u32)>,
    max_radius: i128,
}

impl UnitIndex {
    fn new(entries: Vec<(EntityId, WorldPos, Fixed)>) -> Self {
        let mut sorted: Vec<(i64, i64, u32)> = entries
            .iter()
            .enumerate()
            .map(|(n, &(_, pos, _))| {
                let (bx, bz) = Self::bucket(pos);
                (bz, bx, n as u32)
            })
            .collect();
        sorted.sort_unstable();
        let max_radius = entries.iter().map(|e| i128::from(e.2.to_bits())).max().unwrap_or(0);
        Self { entries, sorted, max_radius }
    }

    fn bucket(pos: WorldPos) -> (i64, i64) {
        let b = |v: Fixed| (v.to_bits() >> 16).div_euclid(BUCKET_M);
        (b(pos.x), b(pos.z))
    }

    /// Whether the segment hits another unit's square grown by `radius`.
    fn hits(&self, me: EntityId, from: WorldPos, to: WorldPos, radius: Fixed) -> bool {
        // Bounds in whole metres, widened by the largest reach; everything in i128, so no
        // position or radius can overflow it.
        let reach = (self.max_radius + i128::from(radius.to_bits())) >> 16;
        let metres = |v: Fixed| i128::from(v.to_bits()) >> 16;
        let (x0, x1) = (metres(from.x).min(metres(to.x)) - reach - 1, metres(from.x).max(metres(to.x)) + reach + 1);
        let (z0, z1) = (metres(from.z).min(metres(to.z)) - reach - 1, metres(from.z).max(metres(to.z)) + reach + 1);
        let b = |m: i128| m.div_euclid(i128::from(BUCKET_M)).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
        let (bx0, bx1, bz0, bz1) = (b(x0), b(x1), b(z0), b(z1));
        // Walk only the rows of buckets that hold units.
        let mut at = self.sorted.partition_point(|&(bz, _, _)| bz < bz0);
        while let Some(&(bz, _, _)) = self.sorted.get(at) {
            if bz > bz1 {
                break;
            }
            let row_end = self.sorted[at..].partition_point(|&(z, _, _)| z == bz) + at;
            let lo = self.sorted[at..row_end].partition_point(|&(_, bx, _)| bx < bx0) + at;
            for &(_, bx, n) in &self.sorted[lo..row_end] {
                if bx > bx1 {
                    break;
                }
                let (id, pos, half) = self.entries[n as usize];
                if id != me && segment_hits_square(from, to, &UnitSquare { center: pos, half }, radius) {
                    return true;
                }
            }
            at = row_end;
        }
        false
    }
}

/// Moves every unit for one turn (see the module documentation).
pub(crate) fn move_units(world: &mut World, events: &mut Vec<Event>) {
    let crate::world::MotionParts { nav, units, requests, turn_ms, digests, static_dirty } = world.parts_mut();
    let grid = nav.grid();
    // As 0 A.D.'s movement filter: only units that are not moving block; moving units pass
    // through one another (separating them is the collision push-apart's job).
    let index = UnitIndex::new(units.iter().flatten().filter(|u| u.state != UnitState::Moving).map(|u| (u.id, u.pos, u.radius)).collect());
    let navcell = |p: WorldPos| crate::world::grid_navcell(grid, p);
    for unit in units.iter_mut().flatten() {
        let Some(class_nav) = PassClass::new(unit.class).and_then(|c| nav.class_nav(c)) else { continue };
        let pass = class_nav.pass_map();
        let stuck = !pass.is_passable(navcell(unit.pos));
        if unit.state == UnitState::WaitingForPath || (unit.state == UnitState::Idle && !stuck && unit.replan_cooldown == 0) {
            continue; // nothing about it changes this turn
        }
        digests.mark(unit.id.index);
        if unit.replan_cooldown > 0 {
            unit.replan_cooldown -= 1;
        }
        match unit.state {
            UnitState::Moving | UnitState::Blocked(_) => {
                if stuck && !unit.escape {
                    // Something was built on it: ask for a path, which starts with the escape.
                    unit.clear_waypoints();
                    static_dirty.push(unit.id.index);
                    unit.state = UnitState::WaitingForPath;
                    requests.push(PathRequest { unit: unit.id });
                    continue;
                }
            }
            UnitState::Idle => {
                if stuck {
                    // A request without an order is an escape request.
                    unit.state = UnitState::WaitingForPath;
                    requests.push(PathRequest { unit: unit.id });
                }
                continue;
            }
            UnitState::WaitingForPath => continue,
        }
        let mut budget = (i128::from(unit.speed.to_bits()) * i128::from(turn_ms)) / 1000;
        let mut moved = false;
        let mut blocked_by_unit = false;
        let mut blocked_by_grid = false;
        while budget > 0 {
            let Some(&next) = unit.waypoints().first() else { break };
            let length = distance_raw(unit.pos, next);
            let target = if length <= budget { next } else { advance(unit.pos, next, budget, length) };
            let escaping = !pass.is_passable(navcell(unit.pos));
            if !escaping && !segment_clear(pass, unit.pos, target) {
                let stop = off_grid_lines(furthest_clear_point(pass, unit.pos, target), grid.cell_size());
                if pass.is_passable(navcell(stop)) && !index.hits(unit.id, unit.pos, stop, unit.radius) {
                    moved |= stop != unit.pos;
                    unit.pos = stop;
                }
                blocked_by_grid = true;
                break;
            }
            if index.hits(unit.id, unit.pos, target, unit.radius) {
                blocked_by_unit = true;
                break;
            }
            moved |= target != unit.pos;
            budget -= length.min(budget);
            unit.pos = off_grid_lines(target, grid.cell_size());
            if target == next {
                unit.pop_waypoint();
                static_dirty.push(unit.id.index);
            } else {
                break;
            }
        }
        if blocked_by_grid {
            // The grid changed under the path: ask again from here (and give up if that keeps
            // happening without progress).
            unit.stalled = if moved { 0 } else { unit.stalled.saturating_add(1) };
            if unit.stalled >= BLOCKED_FAIL_TURNS {
                unit.orders.clear();
                unit.clear_waypoints();
                unit.state = UnitState::Idle;
                unit.stalled = 0;
                static_dirty.push(unit.id.index);
                events.push(Event::Failed { unit: unit.id });
                continue;
            }
            unit.clear_waypoints();
            static_dirty.push(unit.id.index);
            unit.state = UnitState::WaitingForPath;
            requests.push(PathRequest { unit: unit.id });
            events.push(Event::Blocked { unit: unit.id });
            continue;
        }
        if blocked_by_unit && !moved {
            unit.stalled = unit.stalled.saturating_add(1);
            let turns = unit.stalled;
            if turns == 1 {
                events.push(Event::Blocked { unit: unit.id });
            }
            if turns >= BLOCKED_FAIL_TURNS {
                unit.orders.clear();
                unit.clear_waypoints();
                unit.state = UnitState::Idle;
                unit.stalled = 0;
                static_dirty.push(unit.id.index);
                events.push(Event::Failed { unit: unit.id });
            } else if turns % BLOCKED_REPLAN_TURNS == 0 && unit.replan_cooldown == 0 {
                unit.state = UnitState::WaitingForPath;
                unit.replan_cooldown = BLOCKED_REPLAN_TURNS;
                requests.push(PathRequest { unit: unit.id });
            } else {
                unit.state = UnitState::Blocked(turns);
            }
            continue;
        }
        if moved {
            unit.stalled = 0;
        }
        unit.state = UnitState::Moving;
        if unit.waypoints().is_empty() && (unit.escape || unit.resume) {
            // Out of the impassable navcells, or at the end of a path cut short by the search
            // budget: resume the order, if any.
            unit.escape = false;
            unit.resume = false;
            if unit.orders.is_empty() {
                unit.state = UnitState::Idle;
            } else {
                unit.state = UnitState::WaitingForPath;
                requests.push(PathRequest { unit: unit.id });
            }
        } else if unit.waypoints().is_empty() {
            if !unit.orders.is_empty() {
                unit.orders.remove(0);
                static_dirty.push(unit.id.index);
                events.push(Event::Arrived { unit: unit.id });
            }
            if unit.orders.is_empty() {
                unit.state = UnitState::Idle;
            } else {
                unit.state = UnitState::WaitingForPath;
                requests.push(PathRequest { unit: unit.id });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isqrt_is_the_floor_root() {
        for n in 0u128..5000 {
            let r = isqrt(n);
            assert!(r * r <= n && (r + 1) * (r + 1) > n, "{n}");
        }
        for n in [u128::from(u64::MAX), 1 << 100, (1 << 100) - 1, u128::MAX >> 2] {
            let r = isqrt(n);
            assert!(r * r <= n && (r + 1).checked_mul(r + 1).is_none_or(|s| s > n), "{n}");
        }
    }
}
