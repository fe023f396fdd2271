//! Formations: groups of units that move as one block, after 0 A.D.'s two formation documents (the motion
//! proposal's generalised path, candidate positions and corners; the pathfinder design's group
//! positions and flow field; docs/formation-rules.md). This module holds the state and the pure geometry; the turn phase
//! that drives them is `sim/src/world/formations.rs`.
//!
//! ```
//! use pathing::refworld::{RefWorldParams, generate};
//! use pathing::{Fixed, PassClass, WorldPos};
//! use sim::{Command, CommandKind, Event, GoalSpec};
//! use sim::formation::Layout;
//! use sim::{Settings, World};
//!
//! let (desc, obstructions) = generate(&RefWorldParams::scaled(16, 1));
//! let mut world = World::new(desc, obstructions, Settings::default()).unwrap();
//! let cmd = |turn, kind| Command { turn, player: sim::PlayerId(1), seq: 0, kind };
//! let spawn = CommandKind::Spawn { class: PassClass::of(0), at: WorldPos::from_int(30, 30), count: 9, radius: Fixed::ONE / 2, speed: Fixed::from_num(8), turn_rate: None };
//! let report = world.step(&[cmd(0, spawn)]);
//! let units: Vec<_> = report.events.iter().filter_map(|e| match e { Event::Spawned { unit } => Some(*unit), _ => None }).collect();
//!
//! // Turn 1: the nine units form a box (a new formation, with its own id)...
//! let report = world.step(&[cmd(1, CommandKind::FormGroup { units, layout: Layout::Box })]);
//! let [Event::FormationCreated { formation }] = report.events[..] else { panic!("{:?}", report.events) };
//! // ... and on turn 2 it is sent somewhere: its path is planned and followed from this turn.
//! let to = WorldPos::from_int(20, 44);
//! world.step(&[cmd(2, CommandKind::MoveFormation { formation, goal: GoalSpec::Point(to) })]);
//! let mut arrived = false;
//! for _ in 3..80 {
//!     arrived |= world.step(&[]).events.contains(&Event::FormationArrived { formation });
//! }
//! assert!(arrived);
//! assert_eq!(world.navcell_of(world.formation(formation).unwrap().pos), world.navcell_of(to));
//! ```
//!
//! # Ids
//!
//! A formation is not an entity: it has no position of its own that other code reads, no
//! obstruction and no unit slot. Its id is a [`FormationId`] from a separate `u32` space, handed out
//! upwards from 0 by the world (`next_formation`, saved and hashed with the formations) and never
//! reused, so a stale formation id names nothing rather than a newer formation. Entity ids stay
//! exactly what they were (units only), which keeps `EntityAllocator` and the units' digests as
//! they are.
//!
//! # Layouts and slots
//!
//! A layout gives each of the `n` members a *slot*: an offset `(along, across)` from the
//! formation's position in its own frame (`along` forward, `across` to the left), laid out in ranks
//! from the front. The spacing between neighbouring slots is `s = 2·r + LAYOUT_GAP`, where `r` is the
//! largest member radius (so neighbours never overlap and the push-apart has nothing to do), doubled
//! for [`Layout::Loose`]. With `files` slots in the widest rank and `ranks` ranks:
//!
//! | layout | ranks, front first | shape |
//! | --- | --- | --- |
//! | `Line` | full ranks of `⌈√(4n)⌉` files (at most `n`), the last rank centred | wide and shallow, about 4 : 1 |
//! | `Box` | full ranks of `⌈√n⌉` files, the last centred | square block |
//! | `Column` | full ranks of `min(n, 3)` files, the last centred | narrow and deep, for passes |
//! | `Wedge` | rank `k` holds `2k + 1` slots (the last what is left), each centred | a triangle pointing forward |
//! | `Loose` | as `Box`, spacing doubled | open order |
//!
//! Within a rank slots run from left to right, `s` apart and centred on the formation's axis; ranks
//! are `s` apart and centred on the formation's position. The formation's footprint, the rectangle
//! the candidate positions are scored with, is `files·s` wide and `ranks·s` deep; its *size*, the
//! generalisation distance, is the smaller of the two.
//!
//! Slots are assigned greedily, slot by slot in slot order, each taking the nearest unassigned
//! member (exact squared distance; ties to the member listed first), as 0 A.D. does. This happens
//! when a formation is formed, when its layout or membership changes, and when a new path starts
//! (the facing changes); between those, member `k` keeps slot `k`.
//!
//! # Generalised paths
//!
//! [`generalise`] is the proposal's rule: while two consecutive points are closer than the size,
//! they are replaced by their midpoint, except that an endpoint absorbs its neighbour (the start
//! and the goal never move), repeated until every pair is at least the size apart (the start and
//! the goal themselves may stay closer).

use pathing::{Fixed, PassClass, Vec2, WorldPos};
use serde::{Deserialize, Serialize};

use crate::geom::isqrt;
use crate::goal::GoalSpec;
use crate::ids::{EntityId, PlayerId};

/// Most members of one formation.
pub const MAX_MEMBERS: usize = 256;

/// Room between neighbouring members' squares in a layout. `[Units: metres]`
pub const LAYOUT_GAP: Fixed = Fixed::from_bits(1 << 15);

/// Members behind their slots walk at their speed times this fraction (0 A.D.'s run multiplier
/// is 1.67), so they can catch up with slots that move at the formation's speed (the slowest
/// member's walking speed); the others walk at their speed. `[Units: numerator, denominator]`
pub const RUN_MULTIPLIER: (i128, i128) = (3, 2);

/// How far along the path, from the formation's position, its flow field reaches.
/// `[Units: metres]`
pub const FIELD_AHEAD: Fixed = Fixed::const_from_int(40);

/// The movement corridor's width: the flow-field region is grown by half of it on every side (the
/// 30 m of docs/formation-rules.md, "Flow field and steering"). `[Units: metres]`
pub const FIELD_CORRIDOR: Fixed = Fixed::const_from_int(30);

/// The flow field is rebuilt when the formation comes this close to the point it leads to (unless
/// that point is the end of the path). `[Units: metres]`
pub const FIELD_TRIGGER: Fixed = Fixed::const_from_int(12);

/// A member this close to its slot stands in it. `[Units: metres]`
pub const ARRIVE_DISTANCE: Fixed = Fixed::from_bits(1 << 14);

/// Turns without progress after which a formation whose position has reached the goal ends its
/// move, with the members that cannot get to their slots where they are.
pub const ARRIVE_STALL_TURNS: u8 = 5;

/// Most turns a formation waits at the goal for its members.
pub const ARRIVE_MAX_TURNS: u16 = 100;

/// Most consecutive turns a formation's position waits for members that lag behind before it goes
/// on without them (until they catch up, when it starts waiting for them again).
pub const MAX_WAIT_TURNS: u8 = 8;

/// Most navcell steps of the flow field a member is given as waypoints in one turn.
pub const STEER_STEPS: usize = 8;

/// Consecutive turns a moving formation stands still with another formation near (giving way,
/// every candidate refused, a turn refused, no candidate left), not waiting for its own members,
/// before it may yield to a formation that is held too (docs/formation-rules.md, "Formations that
/// hold each other").
pub const HOLD_TURNS: u16 = 6;

/// Most turns a formation spends yielding (stepping out of another formation's way) before it
/// plans its path again from where it stands.
pub const YIELD_MAX_TURNS: u16 = 30;

/// A member farther than this many slot spacings from its slot when its formation arrives is
/// stranded: it is given a move of its own to its slot (docs/formation-rules.md, "Finalising and
/// arriving").
pub const STRANDED_SPACINGS: i128 = 2;

/// A formation's movement corridor: the points within `half_width` of the polyline from the start
/// of the straight line it follows through the rest of its path (the pathfinder design's "centre
/// spline" and "width"; docs/formation-rules.md, "The movement corridor"). Members are kept inside
/// it: a waypoint outside it is moved onto its edge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Corridor {
    /// The centre line, `from` first (one point when the formation has no path left).
    pub(crate) points: Vec<WorldPos>,
    /// Half the corridor's width, raw.
    pub(crate) half_width: i128,
}

impl Corridor {
    /// The centre line's points.
    pub fn points(&self) -> &[WorldPos] {
        &self.points
    }

    /// Half the corridor's width.
    pub fn half_width(&self) -> Fixed {
        Fixed::from_bits(self.half_width.clamp(0, i128::from(i64::MAX)) as i64)
    }

    /// Whether `p` lies in the corridor (exact: squared distances compared in wide integers).
    pub fn contains(&self, p: WorldPos) -> bool {
        let h2 = self.half_width * self.half_width;
        if self.points.len() == 1 {
            return length_squared(sub(p, self.points[0])) <= h2;
        }
        self.points.windows(2).any(|w| segment_within(w[0], w[1], p, self.half_width))
    }

    /// The nearest point of the centre line to `p` (the first segment's, on ties), rounded
    /// towards −∞.
    fn nearest_on_line(&self, p: WorldPos) -> WorldPos {
        let mut best = (i128::MAX, self.points[0]);
        for w in self.points.windows(2) {
            let q = nearest_on_segment(w[0], w[1], p);
            let d = length_squared(sub(p, q));
            if d < best.0 {
                best = (d, q);
            }
        }
        if self.points.len() == 1 { self.points[0] } else { best.1 }
    }

    /// `p` when it lies in the corridor, else the point on the corridor's edge on the way from
    /// the centre line's nearest point to `p` (that nearest point itself when rounding would put
    /// the edge point outside).
    pub fn clamp(&self, p: WorldPos) -> WorldPos {
        if self.contains(p) {
            return p;
        }
        let near = self.nearest_on_line(p);
        // Two raw units inside the edge, so that rounding each coordinate cannot leave it.
        let edge = moved(near, with_length(sub(p, near), (self.half_width - 2).max(0)));
        if self.contains(edge) { edge } else { near }
    }
}

/// The nearest point to `p` on the segment `a → b`, rounded towards −∞.
fn nearest_on_segment(a: WorldPos, b: WorldPos, p: WorldPos) -> WorldPos {
    let ab = sub(b, a);
    let l2 = length_squared(ab);
    let t = ab.0 * sub(p, a).0 + ab.1 * sub(p, a).1;
    if l2 == 0 || t <= 0 {
        return a;
    }
    if t >= l2 {
        return b;
    }
    moved(a, ((ab.0 * t).div_euclid(l2), (ab.1 * t).div_euclid(l2)))
}

/// Whether `p` is within `h` (raw) of the segment `a → b`, exactly. Products too large for `i128`
/// (positions millions of kilometres apart) count as farther.
fn segment_within(a: WorldPos, b: WorldPos, p: WorldPos, h: i128) -> bool {
    let (ab, ap) = (sub(b, a), sub(p, a));
    let l2 = length_squared(ab);
    let t = ab.0 * ap.0 + ab.1 * ap.1;
    let h2 = h * h;
    if l2 == 0 || t <= 0 {
        return length_squared(ap) <= h2;
    }
    if t >= l2 {
        return length_squared(sub(p, b)) <= h2;
    }
    // Distance from the line: |ab × ap| / |ab| ≤ h ⇔ (ab × ap)² ≤ h²·|ab|².
    let cross = ab.0 * ap.1 - ab.1 * ap.0;
    match (cross.checked_mul(cross), h2.checked_mul(l2)) {
        (Some(lhs), Some(rhs)) => lhs <= rhs,
        (None, _) => false,
        (Some(_), None) => true,
    }
}

/// A formation's id: a separate `u32` space, never reused (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct FormationId(pub u32);

/// How the members of a formation stand (see the module documentation for the slot geometry).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Layout {
    /// Wide and shallow ranks.
    Line,
    /// A square block.
    Box,
    /// Three files, deep.
    Column,
    /// A triangle pointing forward.
    Wedge,
    /// A square block in open order (double spacing).
    Loose,
}

/// What a formation is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FormationState {
    /// Standing in formation; its members are ordinary standing units.
    Idle,
    /// Its path request is queued; its position stays where it is.
    WaitingForPath,
    /// Following the straight line from `from` to the next waypoint, scoring candidate positions.
    Following,
    /// Turning as a block round the next waypoint towards the one after it.
    Turning,
    /// Going straight to the last waypoint.
    Finalising,
    /// Its position has reached the goal (or it is forming up): the members close on their slots.
    Arriving,
}

/// What a formation's flow field was last built from: enough to rebuild exactly the same field
/// from the grid (it is derived data, never saved), and to decide when to build a new one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldInputs {
    /// The region, in navcells, clamped to the grid.
    pub region: pathing::CellRect,
    /// The goal navcell.
    pub goal: pathing::Navcell,
    /// The point on the path the field leads to (the goal navcell is it, or the nearest passable
    /// navcell to it).
    pub point: WorldPos,
    /// The point is the end of the path: moving on never calls for a new field.
    pub end: bool,
    /// The `Formation::path_serial` the field was built for.
    pub serial: u32,
}

/// A formation. `[Units: metres, metres per second]`
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Formation {
    /// Its id.
    pub id: FormationId,
    /// Its player (every member is this player's).
    pub owner: PlayerId,
    /// Its layout.
    pub layout: Layout,
    /// What it is doing.
    pub state: FormationState,
    /// The goal of its current move.
    pub goal: Option<GoalSpec>,
    /// Members in slot order: member `k` stands in slot `k`. `[Limit: 1..=MAX_MEMBERS]`
    pub(crate) members: Vec<EntityId>,
    /// The formation's position: the centre of its footprint, which the slots are placed round
    /// (the formation position of 0 A.D.'s motion proposal, the move position of its pathfinder design).
    pub pos: WorldPos,
    /// The direction it faces, a unit vector to within 2^-15 (raw length about 2^16).
    pub facing: Vec2,
    /// Where the straight line it follows starts: the previous waypoint, or where the path began.
    pub(crate) from: WorldPos,
    /// The generalised path ahead, next waypoint first.
    pub(crate) path: Vec<WorldPos>,
    /// Counts the paths it has been given, so that a field built for an older one is replaced.
    pub(crate) path_serial: u32,
    /// What its flow field is built from (`None`: no field yet, build one).
    pub(crate) field: Option<FieldInputs>,
    /// Consecutive turns its position waited for lagging members (see [`MAX_WAIT_TURNS`]).
    pub(crate) waited: u8,
    /// Turns spent arriving.
    pub(crate) arriving_turns: u16,
    /// Consecutive arriving turns in which the members got no nearer to their slots.
    pub(crate) stalled: u8,
    /// The sum of the members' distances to their slots at the last arriving turn (raw, capped
    /// per member at 2^32).
    pub(crate) remaining: u64,
    /// Consecutive turns it stood still while moving with another formation near (see
    /// [`HOLD_TURNS`]); while yielding, the turns it found no step out of the way.
    pub(crate) held: u16,
    /// The formation it is stepping out of the way of, if any.
    pub(crate) yield_to: Option<FormationId>,
    /// Turns spent yielding (see [`YIELD_MAX_TURNS`]).
    pub(crate) yield_turns: u16,
}

impl Formation {
    /// The members, in slot order.
    pub fn members(&self) -> &[EntityId] {
        &self.members
    }

    /// The generalised path ahead, next waypoint first.
    pub fn path(&self) -> &[WorldPos] {
        &self.path
    }

    /// Where the straight line being followed starts.
    pub fn from(&self) -> WorldPos {
        self.from
    }

    /// What the flow field is built from.
    pub fn field_inputs(&self) -> Option<&FieldInputs> {
        self.field.as_ref()
    }

    /// Whether the formation steers its members (every state but [`FormationState::Idle`]).
    pub fn is_active(&self) -> bool {
        self.state != FormationState::Idle
    }
}

/// The members' sizes and speeds a formation's geometry depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    /// The class of the member with the largest clearance (ties: the lowest class index); the
    /// formation's path and flow field are for it (0 A.D.'s rule).
    pub class: PassClass,
    /// The slowest member's speed: the formation's speed. `[Units: metres per second]`
    pub speed: Fixed,
    /// The largest member radius. `[Units: metres]`
    pub radius: Fixed,
}

/// The spacing between neighbouring slots for members of radius at most `radius`.
pub fn spacing(layout: Layout, radius: Fixed) -> Fixed {
    let s = radius * 2 + LAYOUT_GAP;
    if layout == Layout::Loose { s * 2 } else { s }
}

/// Slots per rank, front first, for `n` members.
pub fn ranks(layout: Layout, n: usize) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    let full = |files: usize| {
        let files = files.clamp(1, n);
        let mut out = vec![files; n / files];
        if !n.is_multiple_of(files) {
            out.push(n % files);
        }
        out
    };
    match layout {
        Layout::Line => full(ceil_sqrt(4 * n)),
        Layout::Box | Layout::Loose => full(ceil_sqrt(n)),
        Layout::Column => full(3),
        Layout::Wedge => {
            let mut out = Vec::new();
            let mut left = n;
            let mut k = 0;
            while left > 0 {
                let take = (2 * k + 1).min(left);
                out.push(take);
                left -= take;
                k += 1;
            }
            out
        }
    }
}

fn ceil_sqrt(n: usize) -> usize {
    let r = isqrt(n as u128) as usize;
    if r * r < n { r + 1 } else { r }
}

/// The slot offsets `(along, across)` for `n` members, raw (16 fractional bits), in slot order:
/// ranks front first, each from left to right (see the module documentation).
pub fn slot_offsets(layout: Layout, n: usize, spacing: Fixed) -> Vec<(i128, i128)> {
    let s = i128::from(spacing.to_bits());
    let ranks = ranks(layout, n);
    let depth = ranks.len() as i128;
    let mut out = Vec::with_capacity(n);
    for (r, &m) in ranks.iter().enumerate() {
        // Rank r sits (depth − 1 − 2r)·s/2 ahead of the centre; slot c of m sits (m − 1 − 2c)·s/2
        // to the left.
        let along = (depth - 1 - 2 * r as i128) * s / 2;
        for c in 0..m {
            let across = (m as i128 - 1 - 2 * c as i128) * s / 2;
            out.push((along, across));
        }
    }
    out
}

/// The footprint `(width, depth)` of a layout of `n` members: the widest rank's slots times the
/// spacing, the ranks times the spacing.
pub fn footprint(layout: Layout, n: usize, spacing: Fixed) -> (Fixed, Fixed) {
    let ranks = ranks(layout, n);
    let files = ranks.iter().copied().max().unwrap_or(1) as i64;
    let s = spacing.to_bits();
    (Fixed::from_bits(files * s), Fixed::from_bits(ranks.len().max(1) as i64 * s))
}

/// The proposal's generalisation of `points` (the start first, the goal last) for a formation of
/// size `size` (see the module documentation). Exact: midpoints are rounded towards −∞.
pub fn generalise(points: &[WorldPos], size: Fixed) -> Vec<WorldPos> {
    let mut out: Vec<WorldPos> = points.to_vec();
    let size = raw(size);
    let close = |a: WorldPos, b: WorldPos| length_squared(sub(b, a)) < size * size;
    let mut k = 0;
    while k + 1 < out.len() {
        let last = out.len() - 1;
        if !close(out[k], out[k + 1]) || (k == 0 && k + 1 == last) {
            k += 1;
            continue;
        }
        if k == 0 {
            out.remove(1);
        } else if k + 1 == last {
            out.remove(k);
        } else {
            let (a, b) = (out[k], out[k + 1]);
            out[k] = WorldPos::new(
                Fixed::from_bits((raw(a.x) + raw(b.x)).div_euclid(2) as i64),
                Fixed::from_bits((raw(a.z) + raw(b.z)).div_euclid(2) as i64),
            );
            out.remove(k + 1);
        }
        // The new point may now be close to the one before it.
        k = k.saturating_sub(1);
    }
    out
}

/// Raw bits, widened.
pub(crate) fn raw(v: Fixed) -> i128 {
    i128::from(v.to_bits())
}

/// `b − a` as a raw vector.
pub(crate) fn sub(b: WorldPos, a: WorldPos) -> (i128, i128) {
    (raw(b.x) - raw(a.x), raw(b.z) - raw(a.z))
}

/// `|v|²`, raw squared (32 fractional bits).
pub(crate) fn length_squared((x, z): (i128, i128)) -> i128 {
    x * x + z * z
}

/// `⌊|v|⌋`, raw.
pub(crate) fn length(v: (i128, i128)) -> i128 {
    isqrt(length_squared(v) as u128) as i128
}

/// A position moved by a raw vector (saturating at the ends of `i64`).
pub(crate) fn moved(p: WorldPos, (dx, dz): (i128, i128)) -> WorldPos {
    let clamp = |v: i128| Fixed::from_bits(v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64);
    WorldPos::new(clamp(raw(p.x) + dx), clamp(raw(p.z) + dz))
}

/// A raw vector scaled to raw length `length` (the zero vector stays zero), each coordinate
/// rounded towards −∞.
pub(crate) fn with_length(v: (i128, i128), length_raw: i128) -> (i128, i128) {
    let l = length(v);
    if l == 0 { (0, 0) } else { ((v.0 * length_raw).div_euclid(l), (v.1 * length_raw).div_euclid(l)) }
}

/// A unit vector (raw length 2^16, to within one raw unit per coordinate) along `v`; `None` for the
/// zero vector.
pub(crate) fn unit(v: (i128, i128)) -> Option<Vec2> {
    if v == (0, 0) {
        return None;
    }
    let (x, z) = with_length(v, 1 << 16);
    Some(Vec2::new(Fixed::from_bits(x as i64), Fixed::from_bits(z as i64)))
}

/// A vector in a formation's frame (`along` its facing, `across` to its left), raw, turned into
/// the world frame.
pub(crate) fn local_to_world(facing: Vec2, along: i128, across: i128) -> (i128, i128) {
    let (fx, fz) = (raw(facing.x), raw(facing.z));
    // Left of the facing is the facing turned a quarter turn anticlockwise: (−fz, fx).
    ((along * fx - across * fz).div_euclid(1 << 16), (along * fz + across * fx).div_euclid(1 << 16))
}

/// `v` turned by the rotation whose cosine and sine are `(c, s)` (raw, 16 fractional bits).
pub(crate) fn rotate((x, z): (i128, i128), c: i128, s: i128) -> (i128, i128) {
    ((x * c - z * s).div_euclid(1 << 16), (x * s + z * c).div_euclid(1 << 16))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: i32, z: i32) -> WorldPos {
        WorldPos::from_int(x, z)
    }

    #[test]
    fn ranks_of_each_layout() {
        assert_eq!(ranks(Layout::Line, 50), vec![15, 15, 15, 5]);
        assert_eq!(ranks(Layout::Box, 50), vec![8, 8, 8, 8, 8, 8, 2]);
        assert_eq!(ranks(Layout::Column, 7), vec![3, 3, 1]);
        assert_eq!(ranks(Layout::Wedge, 10), vec![1, 3, 5, 1]);
        assert_eq!(ranks(Layout::Loose, 4), vec![2, 2]);
        assert_eq!(ranks(Layout::Line, 1), vec![1]);
        assert_eq!(ranks(Layout::Line, 0), Vec::<usize>::new());
    }

    #[test]
    fn slots_are_centred_and_spaced() {
        let s = Fixed::from_num(2);
        let slots = slot_offsets(Layout::Box, 4, s);
        let m = |n: i128| n << 16;
        assert_eq!(slots, vec![(m(1), m(1)), (m(1), m(-1)), (m(-1), m(1)), (m(-1), m(-1))]);
        // A short last rank is centred too.
        let slots = slot_offsets(Layout::Column, 4, s);
        assert_eq!(slots[3], (m(-1), 0));
        assert_eq!(footprint(Layout::Column, 4, s), (Fixed::from_num(6), Fixed::from_num(4)));
        assert_eq!(spacing(Layout::Loose, Fixed::ONE / 2), Fixed::from_num(3));
    }

    #[test]
    fn generalisation_merges_close_points_and_keeps_the_ends() {
        let size = Fixed::from_num(5);
        // Two close corners in the middle become their midpoint.
        assert_eq!(generalise(&[p(0, 0), p(10, 0), p(12, 0), p(30, 0)], size), vec![p(0, 0), p(11, 0), p(30, 0)]);
        // A point close to the start is absorbed by it, one close to the goal by the goal.
        assert_eq!(generalise(&[p(0, 0), p(2, 0), p(20, 0), p(22, 3)], size), vec![p(0, 0), p(22, 3)]);
        // Start and goal close together stay.
        assert_eq!(generalise(&[p(0, 0), p(1, 1)], size), vec![p(0, 0), p(1, 1)]);
        // Repeated: a merged point close to its predecessor merges again.
        // (20, 22) merge into 21, which is then 4 from 25: the two merge into 23.
        let out = generalise(&[p(0, 0), p(20, 0), p(22, 0), p(25, 0), p(60, 0)], size);
        assert_eq!(out, vec![p(0, 0), p(23, 0), p(60, 0)]);
        for w in out.windows(2) {
            assert!(length_squared(sub(w[1], w[0])) >= raw(size) * raw(size));
        }
    }

    #[test]
    fn the_corridor_holds_points_within_its_half_width_of_the_line_and_clamps_others_onto_its_edge() {
        // An L: east 20 m, then north 20 m, 3 m to either side.
        let corridor = Corridor { points: vec![p(0, 0), p(20, 0), p(20, 20)], half_width: 3 << 16 };
        assert_eq!(corridor.half_width(), Fixed::from_num(3));
        // Exactly on the edge is inside, one raw unit beyond it is not.
        assert!(corridor.contains(p(10, 3)) && corridor.contains(p(23, 10)) && corridor.contains(p(-3, 0)));
        let beyond = WorldPos::new(Fixed::from_num(10), Fixed::from_bits((3 << 16) + 1));
        assert!(!corridor.contains(beyond));
        // Round the ends and the corner: circles. (22, -2) is √8 < 3 from the corner.
        assert!(corridor.contains(p(22, -2)) && !corridor.contains(p(23, -1)) && !corridor.contains(p(-2, -3)));
        // The inside of the bend is covered by both arms.
        assert!(corridor.contains(p(17, 3)) && !corridor.contains(p(16, 4)));
        // Inside: unchanged; outside: onto the edge, on the way from the nearest point of the line.
        assert_eq!(corridor.clamp(p(10, 2)), p(10, 2));
        assert_eq!(corridor.clamp(p(10, 9)), WorldPos::new(Fixed::from_num(10), Fixed::from_bits((3 << 16) - 2)));
        assert_eq!(corridor.clamp(p(30, 12)), WorldPos::new(Fixed::from_bits((23 << 16) - 2), Fixed::from_num(12)));
        for q in [p(40, -30), p(-7, 5), p(16, 4), p(100, 100)] {
            let c = corridor.clamp(q);
            assert!(corridor.contains(c), "{q:?} clamped to {c:?}");
        }
        // A corridor of one point is a circle.
        let dot = Corridor { points: vec![p(5, 5)], half_width: 2 << 16 };
        assert!(dot.contains(p(7, 5)) && !dot.contains(p(7, 6)));
        assert!(dot.contains(dot.clamp(p(50, -40))));
    }

    #[test]
    fn local_frame_turns_with_the_facing() {
        let north = Vec2::new(Fixed::ZERO, Fixed::ONE);
        // Facing north, "left" is west.
        assert_eq!(local_to_world(north, 0, 1 << 16), (-(1 << 16), 0));
        assert_eq!(local_to_world(north, 1 << 16, 0), (0, 1 << 16));
        assert_eq!(unit((3 << 16, 4 << 16)), Some(Vec2::new(Fixed::from_bits(39321), Fixed::from_bits(52428))));
    }
}
