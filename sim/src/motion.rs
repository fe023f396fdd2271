//! Unit motion and local movement: each walking unit advances `speed × turn length` along its
//! turning points; then the collision push-apart, nudging and the replan trigger.
//!
//! # Movement
//!
//! Every movement segment is checked against the navcell grid of the unit's class (all navcells the
//! closed segment touches must be passable, [`pathing::collide::segment_clear`]) and against the
//! *cores* of the units that are not walking: squares of half-size radius × `core_fraction` (the
//! dynamic-obstacle fraction, 0.6), grown by the mover's radius, with 0 A.D.'s
//! rule (docs/pathfinding-rules.md: a segment starting inside a square never collides with it; one ending inside
//! collides; otherwise it collides when it passes through,
//! [`pathing::collide::segment_hits_square`]). The short-range pathfinder plans around the same
//! cores, so a planned detour can be walked; the rest of each unit's radius is soft, kept apart by
//! the push-apart. As in 0 A.D., walking units do not block each other (a column can walk in file).
//! The other units are taken where they stood at the start of the motion step, and units are
//! committed in entity-id order, so no unit's outcome depends on the order a loop visits them.
//! With a pool, the walks run in tasks of consecutive units and the push-apart's passes in tasks
//! of whole connected components of their pairs, each joined in the one-thread order: the result
//! is the same bit for bit on any number of threads (docs/decisions.md, "The motion step runs on
//! the pool with one thread's result").
//!
//! A waypoint is reached when the turn's remaining distance covers it: the unit then stands exactly
//! on it (no threshold is needed because movement is exact along the segment). Distances use an
//! integer square root of the exact squared length, rounded down.
//!
//! # Blocked units
//!
//! A unit that cannot move (a standing unit's core in the way, or the grid changed under its path)
//! asks for a short-range detour to its next long-range waypoint (see "Short-range requests" in the
//! documentation of the path phase, `sim/src/world/plan.rs`); every [`MotionSettings::long_replan_every`] blocked turns it asks for a new
//! long-range path instead (with a cooldown), and after [`MotionSettings::give_up_turns`] blocked
//! turns it gives up its order ([`Event::Failed`]). Any progress resets the count. A standing unit
//! of the same owner with no order that is in the way is nudged aside; a standing unit of another
//! player is searched round instead (`wait_or_go_round`, and `sim/src/world/held.rs`), and the
//! blocked unit waits while there is no way round. A unit standing on an
//! impassable navcell (a building placed on it) asks for a path, which the long-range pathfinder
//! answers with a straight escape to the nearest passable navcell; the grid check is skipped while
//! it is still inside blocked navcells.
//!
//! # Formation members
//!
//! A member of a formation that is not standing (`crate::formation`) is steered by its formation:
//! at the end of each turn the formation phase gives it the waypoints of its next turn (its slot,
//! or steps along the formation's flow field). It walks them here with exactly the rules above
//! (the grid check, standing units' cores, the same stepping and waypoint popping), at its speed,
//! or at [`crate::formation::RUN_MULTIPLIER`] times it while it is behind its slot (the formation
//! phase's `Steering`), but it never plans a path, counts blocked
//! turns or gives up on its own: a member that cannot go on waits for its next waypoints. A member
//! blocked by a standing unit of its own player nudges it, as any walker does. Members are walking
//! units, so they never block one another (0 A.D.'s control groups); the push-apart treats them as
//! any unit.
//!
//! # Facing
//!
//! After its walk, a unit turns toward the direction it walked by at most one turn's angle
//! ([`crate::facing`]); after the whole step each unit's [`Unit::displacement`] is set to how far
//! it moved this turn.
//!
//! # After the moves
//!
//! `push_apart` separates overlapping units, `nudge` sends standing units aside, and
//! `replan_trigger` makes walkers re-plan around standing units that moved into their way; each
//! is documented on its function, and each runs in a fixed order over entity indices.
//!
//! # Overlap tolerance
//!
//! Units are circles of their radius for the push-apart. A walking unit may pass through another
//! walking unit's circle, and the push-apart removes overlap only in `push_iterations` passes, so
//! after a turn two units may still overlap; what is guaranteed is weaker: a unit never ends a turn
//! on an impassable navcell of its class (unless it started on one and is escaping), a unit never
//! steps into a standing unit's core from outside it, and once units stand the push-apart leaves
//! them apart up to [`OVERLAP_TOLERANCE`] (tested over random crowds).

use pathing::collide::{UnitSquare, furthest_clear_point, segment_clear, segment_hits_square, small_box_clear};
use pathing::{Fixed, PassClass, WorldPos};
use serde::{Deserialize, Serialize};

use crate::command::{Event, FailReason, GoalSpec};
pub use crate::geom::off_grid_lines;
use crate::geom::{distance_raw, div, grid_navcell, isqrt, within_of_segment};
use crate::ids::{EntityId, PlayerId};
use crate::unit::{PathRequest, Unit, UnitState};
use crate::units::UnitStore;

/// The constants of local movement: part of [`crate::Settings`], so fixed for a game and
/// recorded with it. The defaults are 0 A.D.'s and the grid pathfinder's values (docs/motion-rules.md) where they
/// give one (named on each field), converted to turns where they are times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MotionSettings {
    /// Half-size of the short-range search box at a unit's first blocked turn (0 A.D.: 12 m).
    /// `[Units: metres] [Limit: 1..=64]`
    pub short_range: Fixed,
    /// Added to the box half-size for each further blocked turn (0 A.D.: 4 m).
    /// `[Units: metres] [Limit: 0..=64]`
    pub short_range_step: Fixed,
    /// Largest box half-size (0 A.D.: 56 m; 32 m here, since a wider detour is the long-range
    /// pathfinder's job). `[Units: metres] [Limit: short_range..=64]`
    pub short_range_max: Fixed,
    /// Vertex expansions of one short-range search; a search that runs out returns a path to the
    /// vertex nearest the goal. `[Limit: 1..=65535]`
    pub short_node_budget: u32,
    /// Most short-range searches in one turn; the rest wait, in order. `[Limit: 1..=65535]`
    pub max_short_paths_per_turn: u16,
    /// A detour around a blocked intermediate waypoint aims for a circle of this radius around it
    /// (0 A.D.'s rejoin radius, 4 m), or half the distance to it when that is less.
    /// `[Units: metres] [Limit: 0..=64]`
    pub rejoin_radius: Fixed,
    /// Every this many blocked turns a unit asks for a new long-range path instead of a short one
    /// (0 A.D. alternates pathfinders at its 3rd failure). `[Limit: 1..=255]`
    pub long_replan_every: u8,
    /// Blocked turns after which a unit gives up its order ([`Event::Failed`]). `[Limit: 1..=255]`
    pub give_up_turns: u8,
    /// Part of a standing unit's radius that blocks others, for planning and for movement (the
    /// dynamic-obstacle radius fraction, 0.6; docs/motion-rules.md); the rest of it is soft and resolved by
    /// the push-apart. `[Limit: 0..=1]`
    pub core_fraction: Fixed,
    /// Standing units farther than this from the straight line of a short-range search are not
    /// obstacles to it (the influence distance, 6 m). `[Units: metres] [Limit: 0..=64]`
    pub influence: Fixed,
    /// Passes of the collision push-apart per turn (3, docs/motion-rules.md). `[Limit: 0..=16]`
    pub push_iterations: u8,
    /// How far a standing unit steps aside when nudged (1.2 m, docs/motion-rules.md).
    /// `[Units: metres] [Limit: 0..=16]`
    pub nudge_distance: Fixed,
    /// A standing unit that moved this turn within this distance of a walker's current segment
    /// makes the walker plan a detour (1.8 m). `[Units: metres] [Limit: 0..=16]`
    pub replan_trigger: Fixed,
    /// Least time between two triggered replans of one unit (500 ms), rounded up to
    /// whole turns. `[Units: milliseconds] [Limit: 0..=60000]`
    pub replan_cooldown_ms: u32,
    /// A unit displaced by less than this in a turn did not move, for the replan trigger (the grid
    /// 0.05 m). `[Units: metres] [Limit: 0..=1]`
    pub moved_epsilon: Fixed,
    /// How fast a unit turns to face its direction of travel (docs/motion-rules.md, "Facing")
    /// when its spawn does not give its own rate; 360°/s turns a unit round in half a second.
    /// `[Units: degrees per second] [Limit: 1..=3600]`
    pub turn_rate: Fixed,
}

/// The turn rates a unit or the game may have. `[Units: degrees per second]`
pub const TURN_RATE_LIMITS: std::ops::RangeInclusive<Fixed> = Fixed::ONE..=Fixed::const_from_int(3600);

impl Default for MotionSettings {
    fn default() -> Self {
        Self {
            short_range: Fixed::from_num(12),
            short_range_step: Fixed::from_num(4),
            short_range_max: Fixed::from_num(32),
            short_node_budget: 128,
            max_short_paths_per_turn: 256,
            rejoin_radius: Fixed::from_num(4),
            long_replan_every: 3,
            give_up_turns: 25,
            core_fraction: Fixed::from_bits(39_322), // 0.6, rounded to the nearest 2^-16
            influence: Fixed::from_num(6),
            push_iterations: 3,
            nudge_distance: Fixed::from_bits(78_643),  // 1.2
            replan_trigger: Fixed::from_bits(117_965), // 1.8
            replan_cooldown_ms: 500,
            moved_epsilon: Fixed::from_bits(3_277), // 0.05
            turn_rate: Fixed::from_num(360),
        }
    }
}

impl MotionSettings {
    /// Checks every field against its documented limits.
    ///
    /// # Errors
    /// [`crate::Error::Settings`], naming the first field out of range.
    pub fn check(&self) -> Result<(), crate::Error> {
        self.field_out_of_range().map_err(|message| crate::Error::Settings { message })
    }

    /// [`MotionSettings::check`], its text alone.
    fn field_out_of_range(&self) -> Result<(), String> {
        let metres = |name: &str, v: Fixed, lo: i32, hi: i32| {
            if v < Fixed::from_num(lo) || v > Fixed::from_num(hi) {
                Err(format!("motion.{name} = {v} m outside {lo}..={hi}"))
            } else {
                Ok(())
            }
        };
        metres("short_range", self.short_range, 1, 64)?;
        metres("short_range_step", self.short_range_step, 0, 64)?;
        metres("short_range_max", self.short_range_max, 1, 64)?;
        if self.short_range_max < self.short_range {
            return Err("motion.short_range_max is less than motion.short_range".into());
        }
        metres("rejoin_radius", self.rejoin_radius, 0, 64)?;
        metres("core_fraction", self.core_fraction, 0, 1)?;
        metres("influence", self.influence, 0, 64)?;
        metres("nudge_distance", self.nudge_distance, 0, 16)?;
        metres("replan_trigger", self.replan_trigger, 0, 16)?;
        metres("moved_epsilon", self.moved_epsilon, 0, 1)?;
        if !TURN_RATE_LIMITS.contains(&self.turn_rate) {
            return Err(format!("motion.turn_rate = {} degrees per second outside 1..=3600", self.turn_rate));
        }
        if !(1..=65_535).contains(&self.short_node_budget) {
            return Err(format!("motion.short_node_budget = {} outside 1..=65535", self.short_node_budget));
        }
        if self.max_short_paths_per_turn == 0 || self.long_replan_every == 0 || self.give_up_turns == 0 {
            return Err("motion.max_short_paths_per_turn, long_replan_every and give_up_turns must be positive".into());
        }
        if self.push_iterations > 16 {
            return Err(format!("motion.push_iterations = {} outside 0..=16", self.push_iterations));
        }
        if self.replan_cooldown_ms > 60_000 {
            return Err(format!("motion.replan_cooldown_ms = {} outside 0..=60000", self.replan_cooldown_ms));
        }
        Ok(())
    }

    /// The half-size of a standing unit's blocking core.
    pub fn core(&self, radius: Fixed) -> Fixed {
        Fixed::from_bits(((i128::from(radius.to_bits()) * i128::from(self.core_fraction.to_bits())) >> 16) as i64)
    }
}

/// Once units stand (two turns after the last one stopped), no two of them overlap by more than
/// this fraction of the sum of their radii where the push-apart has room to separate them (in a
/// corridor narrower than two units it has none): the tolerance the tests check. Walking units may
/// overlap more while they pass one another. `[Limit: 0..=1]`
pub const OVERLAP_TOLERANCE: Fixed = Fixed::from_bits(1 << 12);

/// Side of the buckets of the unit index. `[Units: metres]`
const BUCKET_M: i64 = 8;

/// The point `budget` along the segment from `from` towards `to` (of length `length`, both raw),
/// each coordinate rounded toward `from`.
fn advance(from: WorldPos, to: WorldPos, budget: i128, length: i128) -> WorldPos {
    let step = |a: Fixed, b: Fixed| {
        let d = i128::from(b.to_bits()) - i128::from(a.to_bits());
        let moved = div(d * budget, length); // truncates toward zero: toward `from`
        Fixed::from_bits((i128::from(a.to_bits()) + moved) as i64)
    };
    WorldPos::new(step(from.x, to.x), step(from.z, to.z))
}

/// Units where they stood at the start of the step, sorted by bucket of `BUCKET_M` metres: memory
/// in proportion to the units, not to the map.
pub(crate) struct UnitIndex {
    /// `(id, position, half-size of the blocking square)`.
    entries: Vec<(EntityId, WorldPos, Fixed)>,
    /// `(bucket z, bucket x, entry)`, sorted.
    sorted: Vec<(i64, i64, u32)>,
    max_radius: i128,
    /// Where each bucket's entries start in `sorted`, for the buckets of the units' bounding box,
    /// when that box holds not many more buckets than there are units: a look-up then reads its
    /// rows' runs directly instead of searching for them. Either way gives the same units in the
    /// same order.
    table: Option<BucketTable>,
}

/// The start in [`UnitIndex::sorted`] of every bucket of a box of buckets, row by row, and one
/// past the end.
struct BucketTable {
    bx0: i64,
    bz0: i64,
    width: i64,
    height: i64,
    start: Vec<u32>,
}

impl BucketTable {
    /// The place of bucket `(bx, bz)` of the box in [`Self::start`].
    fn cell(&self, bx: i64, bz: i64) -> usize {
        ((bz - self.bz0) * self.width + (bx - self.bx0)) as usize
    }
}

/// A bucket table is built when its box holds at most this many buckets per unit (plus
/// [`TABLE_SPARE_BUCKETS`]): memory in proportion to the units, whatever the map.
const TABLE_BUCKETS_PER_UNIT: i128 = 16;
const TABLE_SPARE_BUCKETS: i128 = 1 << 16;

impl UnitIndex {
    pub(crate) fn new(entries: Vec<(EntityId, WorldPos, Fixed)>) -> Self {
        let keys: Vec<(i64, i64, u32)> = entries
            .iter()
            .enumerate()
            .map(|(n, &(_, pos, _))| {
                let (bx, bz) = Self::bucket(pos);
                (bz, bx, n as u32)
            })
            .collect();
        let max_radius = entries.iter().map(|e| i128::from(e.2.to_bits())).max().unwrap_or(0);
        let (sorted, table) = match Self::table(&keys) {
            // Counted into the table's buckets in entry order: sorted by (bucket, entry) as a
            // sort would, in time linear in the units and buckets.
            Some(table) => {
                let mut next = table.start.clone();
                let mut sorted = keys.clone();
                for &key in &keys {
                    let cell = table.cell(key.1, key.0);
                    sorted[next[cell] as usize] = key;
                    next[cell] += 1;
                }
                (sorted, Some(table))
            }
            None => {
                let mut sorted = keys;
                sorted.sort_unstable();
                (sorted, None)
            }
        };
        Self { entries, sorted, max_radius, table }
    }

    /// The bucket table of the units whose `(bucket z, bucket x, entry)` are `keys` (in any
    /// order), when its box is small enough.
    fn table(keys: &[(i64, i64, u32)]) -> Option<BucketTable> {
        let bz0 = keys.iter().map(|e| e.0).min()?;
        let bz1 = keys.iter().map(|e| e.0).max()?;
        let bx0 = keys.iter().map(|e| e.1).min()?;
        let bx1 = keys.iter().map(|e| e.1).max()?;
        let (width, height) = (i128::from(bx1) - i128::from(bx0) + 1, i128::from(bz1) - i128::from(bz0) + 1);
        if width * height > TABLE_BUCKETS_PER_UNIT * keys.len() as i128 + TABLE_SPARE_BUCKETS {
            return None;
        }
        let (width, height) = (width as i64, height as i64);
        let cells = (width * height) as usize;
        let mut table = BucketTable { bx0, bz0, width, height, start: vec![0u32; cells + 1] };
        for &(bz, bx, _) in keys {
            let cell = table.cell(bx, bz);
            table.start[cell + 1] += 1;
        }
        for k in 1..table.start.len() {
            table.start[k] += table.start[k - 1];
        }
        Some(table)
    }

    fn bucket(pos: WorldPos) -> (i64, i64) {
        let b = |v: Fixed| (v.to_bits() >> 16).div_euclid(BUCKET_M);
        (b(pos.x), b(pos.z))
    }

    /// The largest half-size in the index.
    pub(crate) fn max_radius(&self) -> Fixed {
        Fixed::from_bits(self.max_radius as i64)
    }

    /// Calls `f(id, position, half)` for every unit whose position lies in the box spanned by
    /// `from` and `to` grown by `reach` (and perhaps a few more), in a fixed order (by bucket, then
    /// by entry); stops early when `f` returns `true`, and returns whether it did.
    fn find_in(&self, from: WorldPos, to: WorldPos, reach: i128, mut f: impl FnMut(EntityId, WorldPos, Fixed) -> bool) -> bool {
        // Bounds in whole metres; everything in i128, so no position or reach overflows it.
        let reach = reach >> 16;
        let metres = |v: Fixed| i128::from(v.to_bits()) >> 16;
        let (x0, x1) = (metres(from.x).min(metres(to.x)) - reach - 1, metres(from.x).max(metres(to.x)) + reach + 1);
        let (z0, z1) = (metres(from.z).min(metres(to.z)) - reach - 1, metres(from.z).max(metres(to.z)) + reach + 1);
        let b = |m: i128| m.div_euclid(i128::from(BUCKET_M)).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
        let (bx0, bx1, bz0, bz1) = (b(x0), b(x1), b(z0), b(z1));
        if let Some(table) = &self.table {
            // The box of buckets within the table; each row's buckets are one run of `sorted`.
            let (cx0, cx1) = (bx0.max(table.bx0), bx1.min(table.bx0 + table.width - 1));
            let (cz0, cz1) = (bz0.max(table.bz0), bz1.min(table.bz0 + table.height - 1));
            if cx0 > cx1 {
                return false;
            }
            for bz in cz0..=cz1 {
                let lo = table.start[table.cell(cx0, bz)] as usize;
                let hi = table.start[table.cell(cx1, bz) + 1] as usize;
                for &(_, _, n) in &self.sorted[lo..hi] {
                    let (id, pos, half) = self.entries[n as usize];
                    if f(id, pos, half) {
                        return true;
                    }
                }
            }
            return false;
        }
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
                if f(id, pos, half) {
                    return true;
                }
            }
            at = row_end;
        }
        false
    }

    /// Calls `f(id, position, half)` for every unit within `reach` of `center` on both axes (and
    /// perhaps a few more), in a fixed order.
    pub(crate) fn for_each_near(&self, center: WorldPos, reach: Fixed, mut f: impl FnMut(EntityId, WorldPos, Fixed)) {
        self.find_in(center, center, i128::from(reach.to_bits()), |id, pos, half| {
            f(id, pos, half);
            false
        });
    }

    /// Whether the step hits the square, grown by `radius`, of a unit for which `counts` holds.
    fn hits_where(&self, me: EntityId, from: WorldPos, to: WorldPos, radius: Fixed, counts: impl Fn(EntityId) -> bool) -> bool {
        self.find_in(from, to, self.max_radius + i128::from(radius.to_bits()), |id, pos, half| {
            id != me && counts(id) && segment_hits_square(from, to, &UnitSquare { center: pos, half }, radius)
        })
    }

    /// The first unit (in the index's fixed order) whose square, grown by `radius`, the step hits.
    fn first_hit(&self, me: EntityId, from: WorldPos, to: WorldPos, radius: Fixed) -> Option<EntityId> {
        let mut hit = None;
        self.find_in(from, to, self.max_radius + i128::from(radius.to_bits()), |id, pos, half| {
            let blocks = id != me && segment_hits_square(from, to, &UnitSquare { center: pos, half }, radius);
            if blocks {
                hit = Some(id);
            }
            blocks
        });
        hit
    }
}

/// The unit vector from `from` towards `to` times `length` (raw), each coordinate truncated; the
/// zero vector when the two coincide.
fn scaled_direction(from: WorldPos, to: WorldPos, length: i128) -> (i128, i128) {
    let (dx, dz) = (i128::from(to.x.to_bits()) - i128::from(from.x.to_bits()), i128::from(to.z.to_bits()) - i128::from(from.z.to_bits()));
    let d = isqrt((dx * dx + dz * dz) as u128) as i128;
    if d == 0 { (0, 0) } else { (div(dx * length, d), div(dz * length, d)) }
}

fn offset(p: WorldPos, (dx, dz): (i128, i128)) -> WorldPos {
    let clamp = |v: i128| Fixed::from_bits(v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64);
    WorldPos::new(clamp(i128::from(p.x.to_bits()) + dx), clamp(i128::from(p.z.to_bits()) + dz))
}

/// Whether a unit of `class` may be moved straight from `from` to `to` by the push-apart or a
/// nudge: it stands on a passable navcell, and the step touches only passable navcells (so never
/// onto an unwalkable one, and never through a wall).
fn may_shift(nav: &pathing::passability::NavWorld, class: PassClass, from: WorldPos, to: WorldPos) -> bool {
    let Some(class_nav) = nav.class_nav(class) else { return false };
    let pass = class_nav.pass_map();
    // Most shifts are short steps in the open, which the bounding box answers alone.
    small_box_clear(pass, from, to) || (pass.is_passable(grid_navcell(nav.grid(), from)) && segment_clear(pass, from, to))
}

/// What one unit's walk of a turn did.
struct Walk {
    /// It got anywhere.
    moved: bool,
    /// The standing unit whose core stopped it.
    blocker: Option<EntityId>,
    /// A blocked navcell stopped it (the grid changed under its path, or a formation's waypoint
    /// lies beyond a wall).
    blocked_by_grid: bool,
}

/// Walks `unit` along its waypoints for `budget` (raw metres): each step checked against the grid
/// of its class and the standing units' cores in `index`, reached waypoints popped (and a
/// long-range waypoint just behind a finished detour dropped when the one after it is in sight).
fn walk(
    unit: &mut Unit,
    mut budget: i128,
    pass: &pathing::PassMap,
    grid: &pathing::NavGrid,
    index: &UnitIndex,
    motion: &MotionSettings,
) -> Walk {
    let navcell = |p: WorldPos| grid_navcell(grid, p);
    let mut moved = false;
    let mut blocker: Option<EntityId> = None;
    let mut blocked_by_grid = false;
    while budget > 0 {
        let Some(&next) = unit.waypoints().first() else { break };
        let length = distance_raw(unit.pos, next);
        let target = if length <= budget { next } else { advance(unit.pos, next, budget, length) };
        let escaping = !pass.is_passable(navcell(unit.pos));
        if !escaping && !segment_clear(pass, unit.pos, target) {
            let stop = off_grid_lines(furthest_clear_point(pass, unit.pos, target), grid.cell_size());
            if pass.is_passable(navcell(stop)) && index.first_hit(unit.id, unit.pos, stop, unit.radius).is_none() {
                moved |= stop != unit.pos;
                unit.pos = stop;
            }
            blocked_by_grid = true;
            break;
        }
        if let Some(other) = index.first_hit(unit.id, unit.pos, target, unit.radius) {
            blocker = Some(other);
            break;
        }
        moved |= target != unit.pos;
        budget -= length.min(budget);
        unit.pos = off_grid_lines(target, grid.cell_size());
        if target != next {
            break;
        }
        let ends_detour = unit.detour == 1;
        unit.pop_waypoint();
        // Back from a detour: the long-range waypoint it led to is dropped when it is near and
        // the one after it can be walked to straight.
        if ends_detour
            && let [rejoin, after, ..] = *unit.waypoints()
            && distance_raw(unit.pos, rejoin) <= i128::from(motion.rejoin_radius.to_bits())
            && segment_clear(pass, unit.pos, after)
        {
            unit.pop_waypoint();
        }
    }
    Walk { moved, blocker, blocked_by_grid }
}

/// What motion reads and writes of the world, borrowed apart.
pub(crate) struct MotionParts<'a> {
    pub(crate) nav: &'a pathing::passability::NavWorld,
    /// The units: every unit motion changes is reached through the store, which notes it.
    pub(crate) units: &'a mut UnitStore,
    pub(crate) requests: &'a mut Vec<PathRequest>,
    pub(crate) turn_ms: u32,
    pub(crate) motion: &'a MotionSettings,
    /// By unit index: whether the unit is a member of a formation that steers it, and at which speed.
    pub(crate) steered: Vec<Steering>,
    /// The units that walked (for the order latency counters): appended to.
    pub(crate) walked: &'a mut Vec<EntityId>,
    /// The push-apart's sweep order of the last turn, where this turn's starts (see [`Sweep`]);
    /// replaced by this turn's.
    pub(crate) sweep_order: &'a mut Vec<u32>,
    /// The pool the walks and the push-apart's passes run on (the path phase's): results never
    /// depend on it or on its number of threads.
    pub(crate) pool: Option<&'a rayon::ThreadPool>,
}

/// How the motion step moves a unit, by the formation phase's rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Steering {
    /// Not steered by a formation: the ordinary rules.
    Free,
    /// A member at or ahead of its slot: its own speed.
    Walk,
    /// A member behind its slot: [`crate::formation::RUN_MULTIPLIER`] times its speed.
    Run,
}

/// Units walked by one task of the motion step, at most: small enough that two threads share a
/// crowd's walks evenly, large enough that handing out a task costs little beside its walks.
pub(crate) const WALK_TASK_UNITS: usize = 256;

/// Below this many units the push-apart's sweep finds its pairs on the calling thread.
const PARALLEL_SWEEP_UNITS: usize = 2048;

/// Below this many candidate pairs a push-apart pass runs on the calling thread: handing a few
/// pairs to the pool costs more than pushing them.
pub(crate) const PARALLEL_PUSH_PAIRS: usize = 1024;

/// Moves every unit for one turn (see the module documentation).
pub(crate) fn move_units(parts: MotionParts<'_>, events: &mut Vec<Event>) {
    let MotionParts { nav, units, requests, turn_ms, motion, steered, walked, sweep_order, pool } = parts;
    let grid = nav.grid();
    // As 0 A.D.'s movement filter: only units that are not walking block, and only with their
    // core; walking units pass through one another (separating them is the push-apart's job).
    let index = UnitIndex::new(units.iter().filter(|u| u.state == UnitState::Idle).map(|u| (u.id, u.pos, motion.core(u.radius))).collect());
    let before: Vec<Option<WorldPos>> = units.slots().iter().map(|u| u.as_ref().map(|u| u.pos)).collect();
    let owners: Vec<Option<PlayerId>> = units.slots().iter().map(|u| u.as_ref().map(|u| u.owner)).collect();
    let navcell = |p: WorldPos| grid_navcell(grid, p);
    let cooldown_turns = u8::try_from(motion.replan_cooldown_ms.div_ceil(turn_ms)).unwrap_or(u8::MAX);
    // The units something can happen to this turn; the others are not touched.
    let acts = |unit: &Unit| {
        let Some(class_nav) = nav.class_nav(unit.class) else { return false };
        if steered.get(unit.id.index as usize).is_some_and(|&s| s != Steering::Free) {
            return !unit.waypoints().is_empty();
        }
        let stuck = !class_nav.pass_map().is_passable(navcell(unit.pos));
        !(unit.state == UnitState::WaitingForPath || (unit.state == UnitState::Idle && !stuck && unit.replan_cooldown == 0))
    };
    // Each unit's walk reads only itself and what stood still when the step began (the standing
    // units' cores in `index`, the grid), so the walks run in tasks of consecutive units on the
    // pool, and their outputs are joined in task order: the same requests, events and nudges in
    // the same order as one loop over the units in id order, on any number of threads.
    let context = WalkContext { nav, motion, turn_ms, steered: &steered, owners: &owners, index: &index };
    let mut acting: Vec<&mut Unit> = units.iter_mut_where(acts).collect();
    let walk_task = |task: &mut [&mut Unit]| {
        let mut out = WalkOut::new(turn_ms);
        for unit in task.iter_mut() {
            step_unit(unit, &context, &mut out);
        }
        out
    };
    let outs: Vec<WalkOut> = match pool {
        Some(pool) if pool.current_num_threads() > 1 && acting.len() > WALK_TASK_UNITS => {
            use rayon::prelude::*;
            pool.install(|| acting.par_chunks_mut(WALK_TASK_UNITS).map(walk_task).collect())
        }
        _ => vec![walk_task(&mut acting)],
    };
    drop(acting);
    let mut nudges: Vec<(EntityId, WorldPos, PlayerId)> = Vec::new();
    for out in outs {
        events.extend(out.events);
        requests.extend(out.requests);
        nudges.extend(out.nudges);
        walked.extend(out.walked);
    }
    push_apart(PushContext { nav, motion, index: &index, owners: &owners, pool }, units, &mut nudges, sweep_order);
    nudge(nav, units, motion, &index, &mut nudges, events);
    replan_trigger(units, &before, motion, turn_ms, cooldown_turns, requests);
    record_displacements(units, &before);
}

/// What every unit's walk of a turn reads besides the unit itself: nothing any walk changes.
struct WalkContext<'a> {
    nav: &'a pathing::passability::NavWorld,
    motion: &'a MotionSettings,
    turn_ms: u32,
    steered: &'a [Steering],
    /// By unit slot, the owner of the unit there when the step began.
    owners: &'a [Option<PlayerId>],
    /// The standing units as the step began.
    index: &'a UnitIndex,
}

/// What the walks of a run of consecutive units produced, in their id order.
struct WalkOut {
    events: Vec<Event>,
    requests: Vec<PathRequest>,
    /// (standing unit, the position and owner of the unit walking into it)
    nudges: Vec<(EntityId, WorldPos, PlayerId)>,
    walked: Vec<EntityId>,
    turn_steps: crate::facing::TurnSteps,
}

impl WalkOut {
    fn new(turn_ms: u32) -> Self {
        Self {
            events: Vec::new(),
            requests: Vec::new(),
            nudges: Vec::new(),
            walked: Vec::new(),
            turn_steps: crate::facing::TurnSteps::new(turn_ms),
        }
    }
}

/// One unit's turn of motion before the push-apart: its walk, and what being blocked, arriving
/// or finishing a path makes it do (see the module documentation).
fn step_unit(unit: &mut Unit, context: &WalkContext<'_>, out: &mut WalkOut) {
    let WalkContext { nav, motion, turn_ms, steered, owners, index } = *context;
    let grid = nav.grid();
    let navcell = |p: WorldPos| grid_navcell(grid, p);
    let Some(class_nav) = nav.class_nav(unit.class) else { return };
    let pass = class_nav.pass_map();
    let stuck = !pass.is_passable(navcell(unit.pos));
    let steering = steered.get(unit.id.index as usize).copied().unwrap_or(Steering::Free);
    if steering != Steering::Free {
        // A member of a formation that steers it: it walks towards the waypoints its formation
        // gave it (runs, when it is behind its slot), with every rule of movement, and never
        // plans a path of its own.
        let (num, den) = if steering == Steering::Run { crate::formation::RUN_MULTIPLIER } else { (1, 1) };
        let budget = (i128::from(unit.speed.to_bits()) * i128::from(turn_ms) * num) / (1000 * den);
        let from = unit.pos;
        let Walk { moved, blocker, .. } = walk(unit, budget, pass, grid, index, motion);
        face_travel(unit, from, out.turn_steps.of(unit.turn_rate));
        if let Some(other) = blocker
            && !moved
        {
            out.nudges.push((other, unit.pos, unit.owner));
        }
        return;
    }
    if unit.replan_cooldown > 0 {
        unit.replan_cooldown -= 1;
    }
    match unit.state {
        UnitState::Moving | UnitState::Blocked(_) => {
            if stuck && !unit.escape {
                // Something was built on it: ask for a path, which starts with the escape.
                unit.clear_waypoints();
                unit.state = UnitState::WaitingForPath;
                out.requests.push(PathRequest::long(unit.id));
                return;
            }
        }
        UnitState::Idle => {
            if stuck {
                // A request without an order is an escape request.
                unit.state = UnitState::WaitingForPath;
                out.requests.push(PathRequest::long(unit.id));
            }
            return;
        }
        UnitState::WaitingForPath => return,
    }
    let budget = (i128::from(unit.speed.to_bits()) * i128::from(turn_ms)) / 1000;
    let from = unit.pos;
    let Walk { moved, blocker, blocked_by_grid } = walk(unit, budget, pass, grid, index, motion);
    if moved {
        out.walked.push(unit.id);
    }
    face_travel(unit, from, out.turn_steps.of(unit.turn_rate));
    if blocked_by_grid || (blocker.is_some() && !moved) {
        // Blocked: the grid changed under the path, or a standing unit is in the way. A
        // short-range detour first, a new long-range path every `long_replan_every` blocked
        // turns, and after `give_up_turns` the order is given up.
        unit.stalled = if moved { 0 } else { unit.stalled.saturating_add(1) };
        if unit.stalled == 1 {
            out.events.push(Event::Blocked { unit: unit.id });
        }
        if unit.stalled >= motion.give_up_turns {
            let reason = if unit.held_searches > 0 { FailReason::PassageHeld } else { FailReason::Blocked };
            unit.give_up();
            unit.stalled = 0;
            out.events.push(Event::Failed { unit: unit.id, reason });
            return;
        }
        // Only a unit on an order (or escaping) nudges: a unit stepping aside from a nudge
        // that runs into another standing unit stops, or the two would nudge each other back
        // and forth for ever.
        if let Some(other) = blocker
            && (!unit.orders.is_empty() || unit.escape)
        {
            out.nudges.push((other, unit.pos, unit.owner));
        }
        let held = blocker.is_some_and(|b| owners.get(b.index as usize).copied().flatten().is_some_and(|o| o != unit.owner));
        if held && !blocked_by_grid && !unit.orders.is_empty() && !unit.escape {
            wait_or_go_round(unit, motion, &mut out.requests);
            return;
        }
        if unit.orders.is_empty() && !unit.escape {
            // A nudged unit that cannot step aside stays where it is.
            unit.clear_waypoints();
            unit.state = UnitState::Idle;
            unit.stalled = 0;
            return;
        }
        let long = unit.stalled > 0 && unit.stalled.is_multiple_of(motion.long_replan_every) && unit.replan_cooldown == 0;
        unit.state = UnitState::WaitingForPath;
        if long || unit.orders.is_empty() {
            unit.replan_cooldown = motion.long_replan_every;
            unit.clear_waypoints();
            out.requests.push(PathRequest::long(unit.id));
        } else {
            out.requests.push(PathRequest::short(unit.id));
        }
        return;
    }
    if moved {
        unit.stalled = 0;
        unit.held_searches = 0;
    }
    unit.state = UnitState::Moving;
    if !unit.waypoints().is_empty() {
        return;
    }
    if unit.escape || unit.resume {
        // Out of the impassable navcells, or at the end of a path cut short by the search
        // budget: resume the order, if any.
        unit.escape = false;
        unit.resume = false;
        if unit.orders.is_empty() {
            unit.state = UnitState::Idle;
        } else {
            unit.state = UnitState::WaitingForPath;
            out.requests.push(PathRequest::long(unit.id));
        }
        return;
    }
    let range_order = matches!(unit.orders.first(), Some(GoalSpec::Range { .. }));
    if range_order && !unit.settle {
        // Whether a range order is met depends on where its target is now: the path phase
        // decides (done, or after it). A unit that asks again without having moved (a path
        // that cannot bring it into range) counts a blocked turn, so it gives up in the end.
        if !moved {
            unit.stalled = unit.stalled.saturating_add(1);
            if unit.stalled >= motion.give_up_turns {
                unit.give_up();
                unit.stalled = 0;
                out.events.push(Event::Failed { unit: unit.id, reason: FailReason::Blocked });
                return;
            }
        }
        unit.state = UnitState::WaitingForPath;
        out.requests.push(PathRequest::long(unit.id));
        return;
    }
    unit.settle = false;
    if !unit.orders.is_empty() {
        unit.orders.remove(0);
        unit.order_group = 0;
        out.events.push(Event::Arrived { unit: unit.id });
    }
    if unit.orders.is_empty() {
        unit.state = UnitState::Idle;
    } else {
        unit.state = UnitState::WaitingForPath;
        out.requests.push(PathRequest::long(unit.id));
    }
}

/// A unit blocked by a standing unit of another player, which it may not nudge (docs/motion-rules.md,
/// "Passages held by other players"): its first such blocked turn, and every `long_replan_every`
/// blocked turns after it, it asks for a long-range path round the standing units of other
/// players near it (`world/held.rs`; the search counts in [`Unit::held_searches`]); in between
/// it waits, keeping its path ([`UnitState::Blocked`]). Giving up after `give_up_turns` blocked
/// turns then says [`FailReason::PassageHeld`].
fn wait_or_go_round(unit: &mut Unit, motion: &MotionSettings, requests: &mut Vec<PathRequest>) {
    if unit.held_searches == 0 || unit.stalled.is_multiple_of(motion.long_replan_every) {
        unit.held_searches = unit.held_searches.saturating_add(1);
        unit.state = UnitState::WaitingForPath;
        requests.push(PathRequest::long(unit.id));
    } else {
        unit.state = UnitState::Blocked(unit.stalled);
    }
}

/// Turns a unit that walked from `from` to where it stands toward that direction of travel, by at
/// most one turn's `step` (docs/motion-rules.md, "Facing"). Only its own walk turns it: a push or a
/// unit that did not get anywhere keeps its facing.
fn face_travel(unit: &mut Unit, from: WorldPos, step: crate::facing::TurnStep) {
    let d = |a: Fixed, b: Fixed| i128::from(a.to_bits()) - i128::from(b.to_bits());
    unit.facing = crate::facing::turn_toward(unit.facing, (d(unit.pos.x, from.x), d(unit.pos.z, from.z)), step);
}

/// Sets each unit's [`Unit::displacement`] to how far it moved this turn (from `before`, where it
/// stood when the motion step began); only the units whose displacement changed are touched.
fn record_displacements(units: &mut UnitStore, before: &[Option<WorldPos>]) {
    for (slot, was) in before.iter().enumerate() {
        let (Some(unit), Some(was)) = (units.slots().get(slot).and_then(Option::as_ref), was) else { continue };
        let moved = pathing::Vec2::new(unit.pos.x - was.x, unit.pos.z - was.z);
        if moved != unit.displacement
            && let Some(unit) = units.slot_mut(slot as u32)
        {
            unit.displacement = moved;
        }
    }
}

/// The collision push-apart (docs/motion-rules.md, "Push-apart"): `push_iterations` passes over
/// every pair of units whose circles (radius = half-size) overlap, in `(lower index, higher index)`
/// order, each moving both units apart by half the overlap along the line between their centres
/// (along x or z, by the parity of their indices, when they coincide). A unit is never moved onto
/// an impassable navcell or through one ([`may_shift`]), nor into the core of another player's
/// standing unit from outside it, and a standing unit with no order is never moved for a unit of another player (the
/// held passage stays as the held-passage search sees it); when one of the two cannot move, the
/// other moves by the whole overlap if it can, and when neither can along the line, one steps
/// aside across it (the higher index first, to the left, then the right). A walking unit pushing
/// a standing one also nudges it.
fn push_apart(
    context: PushContext<'_>,
    store: &mut UnitStore,
    nudges: &mut Vec<(EntityId, WorldPos, PlayerId)>,
    sweep_order: &mut Vec<u32>,
) {
    // Whose standing units there are (they stand as the motion step began, as in `index`): with
    // none, or only the pushed unit's own player's, no push can enter another player's core, and
    // the look-up is skipped (a crowd of one player pays nothing for the rule).
    let standing_owners = store.iter().filter(|u| u.state == UnitState::Idle).fold(StandingOwners::None, |acc, u| match acc {
        StandingOwners::None => StandingOwners::Only(u.owner),
        StandingOwners::Only(p) if p == u.owner => acc,
        _ => StandingOwners::Several,
    });
    let pairs_context = PairsContext { push: &context, standing_owners };
    // What the push reads of each unit, by slot, kept together and apart from the units: the
    // passes change positions only.
    let mut view: Vec<PushUnit> = store.slots().iter().map(PushUnit::of).collect();
    let threads = context.pool.map_or(1, rayon::ThreadPool::current_num_threads);
    let mut sweep: Option<Sweep> = None;
    for _ in 0..context.motion.push_iterations {
        let sweep = match &mut sweep {
            Some(sweep) => {
                sweep.reorder();
                sweep
            }
            None => sweep.insert(Sweep::new(store.slots(), sweep_order)),
        };
        let pairs = sweep.pairs(context.pool);
        if pairs.is_empty() {
            break;
        }
        let moves = match context.pool {
            // A pair's push reads and moves only its two units (the rest of what it reads stood
            // still when the step began), so units linked by no chain of pairs never see each
            // other's pushes: the pass's connected components are pushed apart on the pool, each
            // in the pass's pair order, which gives exactly the positions of one loop over all
            // the pairs in that order, on any number of threads.
            Some(pool) if threads > 1 && pairs.len() >= PARALLEL_PUSH_PAIRS => {
                use rayon::prelude::*;
                let tasks = component_tasks(&pairs, view.len(), 4 * threads);
                let view_ref = &view;
                let results: Vec<TaskResult> = pool.install(|| {
                    tasks
                        .par_iter()
                        .map(|task| {
                            let mut local: Vec<PushUnit> = task.units.iter().map(|&slot| view_ref[slot as usize]).collect();
                            let mut task_nudges = Vec::new();
                            let moved = push_pairs(&pairs_context, &mut local, &task.pairs, &mut task_nudges);
                            let moved = moved.into_iter().map(|place| (task.units[place as usize], local[place as usize].pos)).collect();
                            (moved, task_nudges)
                        })
                        .collect()
                });
                let mut moves = Vec::new();
                for (moved, task_nudges) in results {
                    moves.extend(moved);
                    nudges.extend(task_nudges);
                }
                moves
            }
            _ => push_pairs(&pairs_context, &mut view, &pairs, nudges).into_iter().map(|slot| (slot, view[slot as usize].pos)).collect(),
        };
        for (slot, pos) in moves {
            view[slot as usize].pos = pos;
            view[slot as usize].moved = false;
            if let Some(u) = store.slot_mut(slot) {
                u.pos = pos;
                sweep.moved(slot, pos);
            }
        }
    }
    if let Some(sweep) = sweep {
        sweep_order.clear();
        sweep_order.extend(sweep.order.iter().map(|e| e.index));
    }
}

/// What one push-apart task gives back: the units it moved (slot, new position), and its nudges.
type TaskResult = (Vec<(u32, WorldPos)>, Vec<(EntityId, WorldPos, PlayerId)>);

/// What the push-apart reads besides the units it pushes: nothing it changes.
struct PushContext<'a> {
    nav: &'a pathing::passability::NavWorld,
    motion: &'a MotionSettings,
    /// The standing units as the motion step began.
    index: &'a UnitIndex,
    /// By unit slot, the owner of the unit there.
    owners: &'a [Option<PlayerId>],
    pool: Option<&'a rayon::ThreadPool>,
}

/// What every pair's push reads: the context, and whose standing units there are.
struct PairsContext<'a> {
    push: &'a PushContext<'a>,
    standing_owners: StandingOwners,
}

/// What the push-apart reads of a unit (an empty slot is never in a pair).
#[derive(Clone, Copy)]
struct PushUnit {
    id: EntityId,
    pos: WorldPos,
    radius: Fixed,
    class: PassClass,
    owner: PlayerId,
    /// Standing (no path to follow).
    idle: bool,
    /// Standing with no order: another player's walkers may not move it.
    holds: bool,
    /// Following a path on an order: it nudges the standing units it pushes.
    walking: bool,
    /// Moved in this pass (listed in what [`push_pairs`] returns).
    moved: bool,
}

impl PushUnit {
    fn of(slot: &Option<Unit>) -> Self {
        match slot {
            Some(u) => Self {
                id: u.id,
                pos: u.pos,
                radius: u.radius,
                class: u.class,
                owner: u.owner,
                idle: u.state == UnitState::Idle,
                holds: u.state == UnitState::Idle && u.orders.is_empty(),
                walking: u.state == UnitState::Moving && !u.orders.is_empty(),
                moved: false,
            },
            None => Self {
                id: EntityId { index: u32::MAX, generation: 0 },
                pos: WorldPos::new(Fixed::ZERO, Fixed::ZERO),
                radius: Fixed::ZERO,
                class: PassClass::of(0),
                owner: PlayerId(0),
                idle: false,
                holds: false,
                walking: false,
                moved: false,
            },
        }
    }
}

/// The units of some connected components of a pass's pairs (in the order the pairs first name
/// them) and those components' pairs in the pass's order, between their places in `units`.
struct PushTask {
    units: Vec<u32>,
    pairs: Vec<(u32, u32)>,
}

/// The pass's `pairs` (between slots below `slots`) in about `wanted` tasks of whole connected
/// components, each task's components consecutive in the order their first pair comes: the split
/// changes which thread pushes a pair, never the order of the pairs a unit is in.
fn component_tasks(pairs: &[(u32, u32)], slots: usize, wanted: usize) -> Vec<PushTask> {
    const NONE: u32 = u32::MAX;
    let mut parent: Vec<u32> = (0..slots as u32).collect();
    let find = |parent: &mut Vec<u32>, mut x: u32| {
        while parent[x as usize] != x {
            let up = parent[parent[x as usize] as usize];
            parent[x as usize] = up;
            x = up;
        }
        x
    };
    for &(i, j) in pairs {
        let (a, b) = (find(&mut parent, i), find(&mut parent, j));
        if a != b {
            // The lower root stays the root: the result does not depend on the sizes.
            let (lo, hi) = (a.min(b), a.max(b));
            parent[hi as usize] = lo;
        }
    }
    // Components numbered by their first pair; their pair counts.
    let mut component_of_root = vec![NONE; slots];
    let mut pair_component: Vec<u32> = Vec::with_capacity(pairs.len());
    let mut sizes: Vec<usize> = Vec::new();
    for &(i, _) in pairs {
        let root = find(&mut parent, i) as usize;
        if component_of_root[root] == NONE {
            component_of_root[root] = sizes.len() as u32;
            sizes.push(0);
        }
        let c = component_of_root[root];
        sizes[c as usize] += 1;
        pair_component.push(c);
    }
    // Consecutive components packed into tasks of about `pairs / wanted` pairs each.
    let target = pairs.len().div_ceil(wanted.max(1)).max(1);
    let mut task_of: Vec<u32> = Vec::with_capacity(sizes.len());
    let (mut task, mut filled) = (0u32, 0usize);
    for &size in &sizes {
        if filled >= target {
            task += 1;
            filled = 0;
        }
        task_of.push(task);
        filled += size;
    }
    let mut tasks: Vec<PushTask> = (0..=task).map(|_| PushTask { units: Vec::new(), pairs: Vec::new() }).collect();
    let mut local = vec![NONE; slots];
    for (&(i, j), &c) in pairs.iter().zip(&pair_component) {
        let t = &mut tasks[task_of[c as usize] as usize];
        let mut place = |slot: u32| {
            if local[slot as usize] == NONE {
                local[slot as usize] = t.units.len() as u32;
                t.units.push(slot);
            }
            local[slot as usize]
        };
        let (a, b) = (place(i), place(j));
        t.pairs.push((a, b));
    }
    tasks
}

/// One pass of the push-apart over `pairs` (places in `units`, in the pass's order): each pair
/// that overlaps is pushed apart by the rules of [`push_apart`], moving only its two units.
/// Returns the places of the units it moved, each once (marked [`PushUnit::moved`]).
fn push_pairs(
    context: &PairsContext<'_>,
    units: &mut [PushUnit],
    pairs: &[(u32, u32)],
    nudges: &mut Vec<(EntityId, WorldPos, PlayerId)>,
) -> Vec<u32> {
    let mut moved = Vec::new();
    let PushContext { nav, index, owners, .. } = *context.push;
    let standing_owners = context.standing_owners;
    let raw = |v: Fixed| i128::from(v.to_bits());
    let cell_size = nav.grid().cell_size();
    // A standing unit is not pushed by a walking unit of another player (as it is never nudged
    // by one): the other takes the whole overlap, so a passage held by standing units stays as
    // wide as the held-passage search sees it (docs/motion-rules.md, "Passages held by other
    // players").
    let held = |u: &PushUnit, by: &PushUnit| u.holds && !by.idle && by.owner != u.owner;
    // Nor is a unit pushed into the core of another player's standing unit from outside it,
    // which it may not walk into either (and a unit starting inside a core may walk out through
    // it); its own player's standing units it may shove, as it nudges them.
    let owner_of = |id: EntityId| owners.get(id.index as usize).copied().flatten();
    let fits = |u: &PushUnit, to: WorldPos| {
        may_shift(nav, u.class, u.pos, to)
            && (standing_owners == StandingOwners::Only(u.owner)
                || standing_owners == StandingOwners::None
                || !index.hits_where(u.id, u.pos, to, u.radius, |id| owner_of(id) != Some(u.owner)))
    };
    for &(i, j) in pairs {
        let (a, b) = (units[i as usize], units[j as usize]);
        let (dx, dz) = (raw(b.pos.x) - raw(a.pos.x), raw(b.pos.z) - raw(a.pos.z));
        let reach = raw(a.radius) + raw(b.radius);
        let d2 = dx * dx + dz * dz;
        if d2 >= reach * reach {
            continue;
        }
        let d = isqrt(d2 as u128) as i128;
        let overlap = reach - d;
        // Coinciding units are pushed along x or z by the parity of their slots.
        let parity = (u64::from(a.id.index) + u64::from(b.id.index)) % 2;
        let push = |len: i128| {
            if d == 0 { if parity == 0 { (len, 0) } else { (0, len) } } else { (div(dx * len, d), div(dz * len, d)) }
        };
        let half = push(overlap / 2);
        let neg = |(x, z): (i128, i128)| (-x, -z);
        let (a_half, b_half) = (offset(a.pos, neg(half)), offset(b.pos, half));
        let (a_ok, b_ok) = (!held(&a, &b) && fits(&a, a_half), !held(&b, &a) && fits(&b, b_half));
        let (new_a, new_b) = match (a_ok, b_ok) {
            (true, true) => (a_half, b_half),
            _ => {
                let whole = push(overlap);
                let b_whole = offset(b.pos, whole);
                let a_whole = offset(a.pos, neg(whole));
                // Neither can give way along the line between them, though the grid would let
                // one of them: other players' cores wedge them in. One steps aside across the
                // line, b first, to its left then its right, then a, so a pair wedged in a
                // pocket of other players' units still comes apart where the pocket has room.
                // (Between walls, as in a corridor one unit wide, nobody steps aside.)
                let across = |(x, z): (i128, i128)| [(-z, x), (z, -x)];
                let wedged = || may_shift(nav, b.class, b.pos, b_whole) || may_shift(nav, a.class, a.pos, a_whole);
                let aside = |u: &PushUnit, by: &PushUnit| {
                    across(whole).into_iter().map(|v| offset(u.pos, v)).find(|&to| !held(u, by) && fits(u, to))
                };
                if !held(&b, &a) && fits(&b, b_whole) {
                    (a.pos, b_whole)
                } else if !held(&a, &b) && fits(&a, a_whole) {
                    (a_whole, b.pos)
                } else if !wedged() {
                    (a.pos, b.pos)
                } else if let Some(to) = aside(&b, &a) {
                    (a.pos, to)
                } else if let Some(to) = aside(&a, &b) {
                    (to, b.pos)
                } else {
                    (a.pos, b.pos)
                }
            }
        };
        // A walking unit pushing a standing one also nudges it.
        if a.walking && b.idle {
            nudges.push((b.id, a.pos, a.owner));
        } else if b.walking && a.idle {
            nudges.push((a.id, b.pos, b.owner));
        }
        for (place, planned) in [(i, new_a), (j, new_b)] {
            let u = &mut units[place as usize];
            let pos = off_grid_lines(planned, cell_size);
            // A planned position other than where the unit stands was checked above, from where
            // it still stands; only a position moved off a grid line needs a new check.
            if pos != u.pos && (pos == planned || may_shift(nav, u.class, u.pos, pos)) {
                u.pos = pos;
                if !u.moved {
                    u.moved = true;
                    moved.push(place);
                }
            }
        }
    }
    moved
}

/// The owners of the standing units, for the push-apart's rule on other players' cores.
#[derive(Clone, Copy, PartialEq, Eq)]
enum StandingOwners {
    None,
    Only(PlayerId),
    Several,
}

/// What the push-apart's sweep reads of a unit, kept together so that the sweep never touches
/// the unit itself.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct SweepEntry {
    strip: i64,
    x: i64,
    index: u32,
    z: i64,
    radius: i64,
}

/// The units in strips along z as high as the largest sum of two radii, each strip in `(x, index)`
/// order: the push-apart's candidate pairs come from sweeping it. It is built once a turn, starting
/// from the last turn's order (units move little in a turn, so few are out of place), and kept in
/// order through the passes, as only the units a pass moved change place in it. The order is total,
/// so where the sort starts changes how long it takes, never the order.
struct Sweep {
    order: Vec<SweepEntry>,
    /// By unit slot: where its entry is in `order`.
    at: Vec<u32>,
    height: i128,
    reach_max: i128,
}

impl Sweep {
    /// The sweep of `units`, sorted starting from `previous` (unit slots in some order: the units
    /// it lists come first in that order, then the others by slot).
    fn new(units: &[Option<Unit>], previous: &[u32]) -> Self {
        let max_r = units.iter().flatten().map(|u| u.radius.to_bits()).max().unwrap_or(0);
        // Radii are at most a few metres, so sums and differences of positions and radii fit i128.
        let reach_max = 2 * i128::from(max_r);
        let height = reach_max.max(1);
        let mut sweep = Self { order: Vec::with_capacity(units.len()), at: vec![u32::MAX; units.len()], height, reach_max };
        let add = |sweep: &mut Self, slot: usize| {
            if let Some(Some(u)) = units.get(slot)
                && sweep.at[slot] == u32::MAX
            {
                // Marks the slot as listed; `index_places` sets the real place.
                sweep.at[slot] = 0;
                let entry = sweep.entry(u.id.index, u.pos, u.radius);
                sweep.order.push(entry);
            }
        };
        for &slot in previous {
            add(&mut sweep, slot as usize);
        }
        for slot in 0..units.len() {
            add(&mut sweep, slot);
        }
        // (strip, x, index) is unique, so the order is total whatever follows it.
        sort_sweep(&mut sweep.order);
        sweep.index_places();
        sweep
    }

    fn entry(&self, index: u32, pos: WorldPos, radius: Fixed) -> SweepEntry {
        // The height fits `i64` for every radius a unit can have; `i64` division is much cheaper.
        let strip = match i64::try_from(self.height) {
            Ok(height) => pos.z.to_bits().div_euclid(height),
            Err(_) => i128::from(pos.z.to_bits()).div_euclid(self.height) as i64,
        };
        SweepEntry { strip, x: pos.x.to_bits(), index, z: pos.z.to_bits(), radius: radius.to_bits() }
    }

    fn index_places(&mut self) {
        for (k, e) in self.order.iter().enumerate() {
            self.at[e.index as usize] = k as u32;
        }
    }

    /// A unit moved to `pos`: its entry takes the new position (its place is fixed by [`Self::reorder`]).
    fn moved(&mut self, slot: u32, pos: WorldPos) {
        let k = self.at[slot as usize] as usize;
        let radius = Fixed::from_bits(self.order[k].radius);
        self.order[k] = self.entry(slot, pos, radius);
    }

    /// Puts the entries back in order after some moved.
    fn reorder(&mut self) {
        sort_sweep(&mut self.order);
        self.index_places();
    }

    /// The pairs `(lower index, higher index)` of units whose centres are nearer than the sum of
    /// their radii on both axes (the push-apart's candidates), sorted. A unit is swept against the
    /// later units of its own strip and the units of the next strip within reach on x, so every
    /// pair is found exactly once and the set does not depend on how the units are stored.
    fn pairs(&self, pool: Option<&rayon::ThreadPool>) -> Vec<(u32, u32)> {
        let order = &self.order;
        // Where each strip starts, and the end.
        let mut bounds: Vec<usize> = Vec::new();
        for (k, e) in order.iter().enumerate() {
            if k == 0 || order[k - 1].strip != e.strip {
                bounds.push(k);
            }
        }
        bounds.push(order.len());
        let strips = bounds.len() - 1;
        // Each pair as one integer, `lower << 32 | higher`: sorting those is sorting the pairs.
        // The strips are swept in groups on the pool when there are many units; the pairs are
        // sorted after, so the grouping never shows.
        let pairs: Vec<u64> = match pool {
            Some(pool) if pool.current_num_threads() > 1 && order.len() >= PARALLEL_SWEEP_UNITS => {
                use rayon::prelude::*;
                let groups = 4 * pool.current_num_threads();
                let per_group = strips.div_ceil(groups).max(1);
                pool.install(|| {
                    (0..strips.div_ceil(per_group))
                        .into_par_iter()
                        .map(|g| {
                            let mut pairs = Vec::new();
                            for s in g * per_group..((g + 1) * per_group).min(strips) {
                                self.strip_pairs(&bounds, s, &mut pairs);
                            }
                            pairs
                        })
                        .collect::<Vec<Vec<u64>>>()
                        .concat()
                })
            }
            _ => {
                let mut pairs = Vec::new();
                for s in 0..strips {
                    self.strip_pairs(&bounds, s, &mut pairs);
                }
                pairs
            }
        };
        sort_pairs(&pairs, self.at.len())
    }

    /// The candidate pairs of strip `s` (of the strips starting at `bounds`) with itself and the
    /// strip after it, as `lower << 32 | higher`.
    fn strip_pairs(&self, bounds: &[usize], s: usize, pairs: &mut Vec<u64>) {
        let order = &self.order;
        let reach_max = self.reach_max;
        let mut check = |a: &SweepEntry, b: &SweepEntry| {
            let reach = i128::from(a.radius) + i128::from(b.radius);
            if (i128::from(b.x) - i128::from(a.x)).abs() < reach && (i128::from(b.z) - i128::from(a.z)).abs() < reach {
                pairs.push(u64::from(a.index.min(b.index)) << 32 | u64::from(a.index.max(b.index)));
            }
        };
        let (strip_start, strip_end) = (bounds[s], bounds[s + 1]);
        let strip = order[strip_start].strip;
        let next_end = if s + 2 < bounds.len() && order[strip_end].strip == strip + 1 { bounds[s + 2] } else { strip_end };
        let (this, next) = (&order[strip_start..strip_end], &order[strip_end..next_end]);
        // The first unit of the next strip that may be within reach on x: it only moves forward,
        // since this strip's units come in x order.
        let mut lo = 0;
        for (k, a) in this.iter().enumerate() {
            for b in &this[k + 1..] {
                if i128::from(b.x) - i128::from(a.x) >= reach_max {
                    break;
                }
                check(a, b);
            }
            while lo < next.len() && i128::from(next[lo].x) - i128::from(a.x) <= -reach_max {
                lo += 1;
            }
            for b in &next[lo..] {
                if i128::from(b.x) - i128::from(a.x) >= reach_max {
                    break;
                }
                check(a, b);
            }
        }
    }
}

/// Sorts the sweep's entries: counted into one bucket per strip (kept in the order they come in,
/// which is the last order, so nearly sorted), then each strip sorted by `(x, index)`: linear in
/// the entries and strips, where a sort of all entries is not. Strips spread over more than a few
/// times the entries (units far apart) take a sort of all. The order is total, so either way gives
/// the same order.
fn sort_sweep(order: &mut Vec<SweepEntry>) {
    let (Some(lo), Some(hi)) = (order.iter().map(|e| e.strip).min(), order.iter().map(|e| e.strip).max()) else { return };
    let strips = i128::from(hi) - i128::from(lo) + 1;
    if strips > 4 * order.len() as i128 + 1024 {
        order.sort_unstable();
        return;
    }
    *order = bucket_sort(order, strips as usize, |e| (i128::from(e.strip) - i128::from(lo)) as usize, <[SweepEntry]>::sort_unstable);
}

/// The pairs `lower << 32 | higher` (lower and higher below `slots`) as `(lower, higher)`, sorted:
/// counted into one bucket per lower index, each bucket then sorted by the higher, which is
/// linear in the pairs and the slots where a sort of all pairs is not.
fn sort_pairs(pairs: &[u64], slots: usize) -> Vec<(u32, u32)> {
    let split: Vec<(u32, u32)> = pairs.iter().map(|&p| ((p >> 32) as u32, p as u32)).collect();
    bucket_sort(&split, slots, |&(lower, _)| lower as usize, sort_nearly_sorted)
}

/// `items` sorted, given a key below `buckets` that the order sorts by first: counted into one
/// bucket per key (each keeping the items' order), then each bucket sorted.
fn bucket_sort<T: Copy + Ord>(items: &[T], buckets: usize, key: impl Fn(&T) -> usize, sort: impl Fn(&mut [T])) -> Vec<T> {
    let mut start = vec![0u32; buckets + 1];
    for item in items {
        start[key(item) + 1] += 1;
    }
    for k in 1..start.len() {
        start[k] += start[k - 1];
    }
    let mut next = start.clone();
    let mut sorted = items.to_vec();
    for item in items {
        let b = key(item);
        sorted[next[b] as usize] = *item;
        next[b] += 1;
    }
    for bucket in start.windows(2) {
        sort(&mut sorted[bucket[0] as usize..bucket[1] as usize]);
    }
    sorted
}

/// Sorts `items`, by insertion while few are out of place (the sweep's strips start from the
/// last pass's order, in which units moved little), else by a general sort; the result is the
/// same either way.
fn sort_nearly_sorted<T: Copy + Ord>(items: &mut [T]) {
    // Shifts allowed before giving up on insertion: about what a general sort would cost.
    let mut allowance = 4 * items.len() + 16;
    for k in 1..items.len() {
        let item = items[k];
        let mut at = k;
        while at > 0 && items[at - 1] > item {
            items[at] = items[at - 1];
            at -= 1;
            allowance = allowance.saturating_sub(1);
        }
        items[at] = item;
        if allowance == 0 {
            items.sort_unstable();
            return;
        }
    }
}

/// Nudging (docs/motion-rules.md, "Nudging"): a standing unit with no order that a walking unit of its owner
/// ran into steps `nudge_distance` aside: straight away from the walker, else to its left, its
/// right, or back towards it, whichever first is a legal step ([`may_shift`]) that enters no other
/// standing unit's core. Each unit is nudged at most once a turn, away from the walker that comes
/// first in `(x, z)` order of its position (a total order; several walkers can meet one unit).
#[allow(clippy::too_many_arguments)]
fn nudge(
    nav: &pathing::passability::NavWorld,
    units: &mut UnitStore,
    motion: &MotionSettings,
    index: &UnitIndex,
    nudges: &mut Vec<(EntityId, WorldPos, PlayerId)>,
    events: &mut Vec<Event>,
) {
    let cell_size = nav.grid().cell_size();
    nudges.retain(|&(id, _, owner)| units.get(id).is_some_and(|u| u.owner == owner));
    nudges.sort_unstable_by_key(|&(id, from, _)| (id.index, from.x.to_bits(), from.z.to_bits()));
    nudges.dedup_by_key(|n| n.0);
    for &(id, from, _) in nudges.iter() {
        let Some(unit) = units.get(id) else { continue };
        if unit.state != UnitState::Idle || !unit.orders.is_empty() {
            continue;
        }
        let mut away = scaled_direction(from, unit.pos, i128::from(motion.nudge_distance.to_bits()));
        if away == (0, 0) {
            away = (i128::from(motion.nudge_distance.to_bits()), 0);
        }
        let (x, z) = away;
        let candidates = [(x, z), (-z, x), (z, -x), (-x, -z)];
        let step = candidates
            .into_iter()
            .map(|d| off_grid_lines(offset(unit.pos, d), cell_size))
            .find(|&to| may_shift(nav, unit.class, unit.pos, to) && index.first_hit(unit.id, unit.pos, to, unit.radius).is_none());
        if let Some(to) = step
            && let Some(unit) = units.get_mut(id)
        {
            unit.set_waypoints(vec![to]);
            unit.state = UnitState::Moving;
            events.push(Event::Nudged { unit: id });
        }
    }
}

/// Dynamic replanning (docs/motion-rules.md, "Replan trigger"): a walker (a unit following waypoints,
/// off its replan cooldown) plans a short-range detour when a standing unit that moved more than
/// `moved_epsilon` this turn (pushed aside, or stopped after walking) is within `replan_trigger` of its
/// current segment; it then waits `replan_cooldown_ms` before the next such replan. Only standing
/// units count: walking units are no obstacles to planning, so a replan for them would give the
/// same path. Unlike the grid pathfinder it comes from, only the stretch of the segment the walker covers before it may
/// replan again counts (speed × the cooldown, at least one turn): a unit pushed 40 m further along
/// is no reason to plan now, and in a crowd at its destination (where arriving units push the ones
/// standing) the whole segment would make every walker replan every cooldown.
fn replan_trigger(
    units: &mut UnitStore,
    before: &[Option<WorldPos>],
    motion: &MotionSettings,
    turn_ms: u32,
    cooldown_turns: u8,
    requests: &mut Vec<PathRequest>,
) {
    let eps = i128::from(motion.moved_epsilon.to_bits());
    let movers: Vec<(EntityId, WorldPos)> = units
        .iter()
        .filter(|u| u.state == UnitState::Idle)
        .filter(|u| {
            before.get(u.id.index as usize).copied().flatten().is_none_or(|b| {
                let (dx, dz) =
                    (i128::from(u.pos.x.to_bits()) - i128::from(b.x.to_bits()), i128::from(u.pos.z.to_bits()) - i128::from(b.z.to_bits()));
                dx * dx + dz * dz > eps * eps
            })
        })
        .map(|u| (u.id, u.pos))
        .collect();
    if movers.is_empty() {
        return;
    }
    let index = UnitIndex::new(movers.iter().map(|&(id, pos)| (id, pos, Fixed::ZERO)).collect());
    let reach = i128::from(motion.replan_trigger.to_bits());
    let triggered = |unit: &Unit| {
        if unit.state != UnitState::Moving || unit.replan_cooldown > 0 || unit.orders.is_empty() {
            return false;
        }
        let Some(&next) = unit.waypoints().first() else { return false };
        let (me, pos) = (unit.id, unit.pos);
        let stretch = i128::from(unit.speed.to_bits()) * i128::from(motion.replan_cooldown_ms.max(turn_ms)) / 1000;
        // The stretch ends within `stretch` of the unit on each axis: with no moved unit in that
        // box grown by `reach` (and a metre, for the index's rounding to whole metres), none can
        // be near the stretch, and its end need not be computed.
        if !index.find_in(pos, pos, stretch.saturating_add(reach).saturating_add(1 << 16), |id, _, _| id != me) {
            return false;
        }
        let length = distance_raw(pos, next);
        let end = if length <= stretch { next } else { advance(pos, next, stretch, length) };
        index.find_in(pos, end, reach, |id, p, _| id != me && within_of_segment(p, pos, end, motion.replan_trigger))
    };
    for unit in units.iter_mut_where(triggered) {
        unit.state = UnitState::WaitingForPath;
        unit.replan_cooldown = cooldown_turns;
        requests.push(PathRequest::short(unit.id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn entries(raw: &[(i64, i64, u32)]) -> Vec<SweepEntry> {
        raw.iter().map(|&(strip, x, index)| SweepEntry { strip, x, index, z: strip * 7 + x, radius: 1 }).collect()
    }

    proptest! {
        /// The sweep's sort gives what a full sort gives, from any starting order: strips close
        /// together (the counted buckets) or far apart (the full sort), entries unique by
        /// `(strip, x, index)` as units' are.
        #[test]
        fn the_sweep_sort_is_a_full_sort(
            raw in proptest::collection::vec((-30i64..30, -50i64..50), 0..200),
            far in any::<bool>(),
        ) {
            let raw: Vec<(i64, i64, u32)> =
                raw.iter().enumerate().map(|(n, &(s, x))| (if far { s * 1_000_000 } else { s }, x, n as u32)).collect();
            let mut sorted = entries(&raw);
            sort_sweep(&mut sorted);
            let mut expected = entries(&raw);
            expected.sort_unstable();
            prop_assert!(sorted == expected);
        }

        /// The pairs come out as a full sort orders them.
        #[test]
        fn the_pair_sort_is_a_full_sort(raw in proptest::collection::btree_set((0u32..60, 0u32..60), 0..300)) {
            let pairs: Vec<u64> = raw.iter().filter(|(a, b)| a < b).map(|&(a, b)| u64::from(a) << 32 | u64::from(b)).rev().collect();
            let mut expected: Vec<(u32, u32)> = pairs.iter().map(|&p| ((p >> 32) as u32, p as u32)).collect();
            expected.sort_unstable();
            prop_assert_eq!(sort_pairs(&pairs, 60), expected);
        }

        /// The split of a pass's pairs between tasks: every pair in exactly one task, each task's
        /// pairs in the pass's order, no unit in two tasks (so two pairs sharing a unit are pushed
        /// by one task, one after the other, as one loop would), for any number of tasks wanted.
        #[test]
        fn the_push_tasks_hold_whole_components_in_the_pass_order(
            raw in proptest::collection::btree_set((0u32..80, 0u32..80), 0..200),
            wanted in 1usize..20,
        ) {
            let pairs: Vec<(u32, u32)> = raw.into_iter().filter(|(a, b)| a < b).collect();
            let tasks = component_tasks(&pairs, 80, wanted);
            let mut owner = [usize::MAX; 80];
            let mut seen: Vec<(u32, u32)> = Vec::new();
            for (t, task) in tasks.iter().enumerate() {
                for &slot in &task.units {
                    prop_assert!(owner[slot as usize] == usize::MAX, "slot {} in two tasks", slot);
                    owner[slot as usize] = t;
                }
                let global: Vec<(u32, u32)> = task.pairs.iter().map(|&(a, b)| (task.units[a as usize], task.units[b as usize])).collect();
                prop_assert!(global.windows(2).all(|w| w[0] < w[1]), "task {} out of the pass order", t);
                seen.extend(global);
            }
            seen.sort_unstable();
            prop_assert_eq!(seen, pairs);
        }
    }
}
