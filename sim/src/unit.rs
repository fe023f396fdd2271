//! A unit: what it is (owner, class, size, speed), where it stands and faces, what it was ordered
//! to do and the path it walks; with the path requests it queues and the canonical bytes the state
//! digest hashes for it.
//!
//! Units are plain data owned by the world; the phases of a turn (`world.rs`, `motion.rs`) change
//! them, and every change to the waypoints goes through [`Unit`]'s methods so that the path digest
//! stays current.

use pathing::{Fixed, PassClass, WorldPos};
use serde::{Deserialize, Serialize};

use crate::goal::{GoalSpec, RangeKind, Target};
use crate::ids::{EntityId, PlayerId};
use crate::state_hash;

/// What a unit is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum UnitState {
    /// No order.
    Idle,
    /// Its path request is queued.
    WaitingForPath,
    /// Following its waypoints.
    Moving,
    /// Could not move for this many consecutive turns.
    Blocked(u8),
}

/// A unit. `[Units: metres, metres per second]`
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unit {
    /// Its id.
    pub id: EntityId,
    /// Its player.
    pub owner: PlayerId,
    /// Its passability class index.
    pub class: PassClass,
    /// Where it stands.
    pub pos: WorldPos,
    /// Half-size of its obstruction square.
    pub radius: Fixed,
    /// Speed.
    pub speed: Fixed,
    /// How fast it turns to face its way (docs/motion-rules.md, "Facing").
    /// `[Units: degrees per second] [Limit: 1..=3600]`
    pub turn_rate: Fixed,
    /// Orders; the first is the current one.
    pub orders: Vec<GoalSpec>,
    /// Remaining turning points of the current path, next first.
    waypoints: Vec<WorldPos>,
    /// What it is doing.
    pub state: UnitState,
    /// Turns left before it may ask for a new path after being blocked.
    pub replan_cooldown: u8,
    /// Its waypoints are an escape from impassable navcells, not the path of its order.
    pub escape: bool,
    /// Consecutive turns it could not move (kept across replans; reset by any progress).
    pub stalled: u8,
    /// Derived: digest of `waypoints`, kept current by every change to them (so the state digest
    /// covers the waypoints without hashing them every turn); recomputed on load, never stored.
    #[serde(skip)]
    path_digest: [u8; 32],
    /// The current path ended early for lack of search budget: ask again when it is walked.
    pub resume: bool,
    /// How many of the first waypoints are a short-range detour (around units in the way) before
    /// the next waypoint of the long-range path.
    pub detour: u16,
    /// The goal is taken by standing units: the current path ends as near as it can get, and the
    /// order is done when it is walked.
    pub settle: bool,
    /// The direction it faces, a unit vector (docs/motion-rules.md, "Facing"): turned toward its
    /// direction of travel by at most [`Unit::turn_rate`] a turn.
    pub facing: pathing::Vec2,
    /// How far it moved in the last turn (walking, pushed or nudged): its velocity is this over
    /// the turn length. With [`Unit::pos`] and [`Unit::facing`], what a game interpolates
    /// between turns. `[Units: metres]`
    pub displacement: pathing::Vec2,
    /// Long-range searches made round standing units of other players since it last made
    /// progress (docs/motion-rules.md, "Passages held by other players"); 0 when it has made none.
    pub held_searches: u8,
    /// The group of its current order: nonzero when one command gave that order to it and to other
    /// units together (a [`crate::CommandKind::Move`] of several units), the same for
    /// every unit of that command and different from every other command's (docs/pathfinding-rules.md,
    /// "Shared searches"); 0 for an order given to it alone, any order that became current by an
    /// earlier one ending, and no order. Units of one group that share a search each end at their
    /// own point near the goal.
    pub order_group: u64,
}

impl Unit {
    /// A new idle unit at `pos`, facing [`crate::facing::INITIAL_FACING`], with no orders.
    pub(crate) fn new(
        id: EntityId,
        owner: PlayerId,
        class: PassClass,
        pos: WorldPos,
        radius: Fixed,
        speed: Fixed,
        turn_rate: Fixed,
    ) -> Self {
        Self {
            id,
            owner,
            class,
            pos,
            radius,
            speed,
            turn_rate,
            orders: Vec::new(),
            waypoints: Vec::new(),
            state: UnitState::Idle,
            replan_cooldown: 0,
            escape: false,
            stalled: 0,
            path_digest: path_digest(&[]),
            resume: false,
            detour: 0,
            settle: false,
            facing: crate::facing::INITIAL_FACING,
            displacement: pathing::Vec2::new(Fixed::ZERO, Fixed::ZERO),
            held_searches: 0,
            order_group: 0,
        }
    }

    /// Recomputes the derived path digest from the waypoints (after a load, which never stores it).
    pub(crate) fn refresh_path_digest(&mut self) {
        self.path_digest = path_digest(&self.waypoints);
    }

    /// Remaining turning points of the current path, next first.
    pub fn waypoints(&self) -> &[WorldPos] {
        &self.waypoints
    }

    /// Replaces the waypoints (none of them a detour).
    pub(crate) fn set_waypoints(&mut self, waypoints: Vec<WorldPos>) {
        self.waypoints = waypoints;
        self.detour = 0;
        self.path_digest = path_digest(&self.waypoints);
    }

    /// Replaces the waypoints, the first `detour` of them a short-range detour.
    pub(crate) fn set_detour(&mut self, waypoints: Vec<WorldPos>, detour: usize) {
        let detour = u16::try_from(detour.min(waypoints.len())).unwrap_or(u16::MAX);
        self.set_waypoints(waypoints);
        self.detour = detour;
    }

    /// Drops the first waypoint (reached).
    pub(crate) fn pop_waypoint(&mut self) {
        if !self.waypoints.is_empty() {
            self.waypoints.remove(0);
            self.detour = self.detour.saturating_sub(1);
            self.path_digest = path_digest(&self.waypoints);
        }
    }

    /// Gives up every order: idle where it stands (the caller reports [`Event::Failed`]).
    pub(crate) fn give_up(&mut self) {
        self.orders.clear();
        self.order_group = 0;
        self.clear_waypoints();
        self.state = UnitState::Idle;
        self.settle = false;
        self.held_searches = 0;
    }

    /// Drops every waypoint.
    pub(crate) fn clear_waypoints(&mut self) {
        if !self.waypoints.is_empty() {
            self.set_waypoints(Vec::new());
        }
    }
}

/// The digest of a unit's remaining waypoints, `state_hash::digest("path", waypoints)`, from the
/// path component's hasher made once (deriving the component's key costs more than hashing a
/// short path, and orders to thousands of units clear thousands of paths in a turn).
fn path_digest(waypoints: &[WorldPos]) -> [u8; 32] {
    static PATH: std::sync::OnceLock<blake3::Hasher> = std::sync::OnceLock::new();
    static EMPTY: std::sync::OnceLock<[u8; 32]> = std::sync::OnceLock::new();
    if waypoints.is_empty()
        && let Some(empty) = EMPTY.get()
    {
        return *empty;
    }
    let mut hasher = PATH.get_or_init(|| state_hash::component_hasher("path")).clone();
    state_hash::encode_into(&waypoints, &mut hasher);
    let digest = *hasher.finalize().as_bytes();
    if waypoints.is_empty() {
        EMPTY.get_or_init(|| digest);
    }
    digest
}

/// The fields [`unit_static_bytes`] encodes, kept to tell whether a touched unit's encoding
/// changed by comparing fields rather than encoding it again every turn.
#[derive(Clone, Debug)]
pub(crate) struct StaticFields {
    id: EntityId,
    owner: PlayerId,
    class: PassClass,
    radius: Fixed,
    speed: Fixed,
    turn_rate: Fixed,
    orders: Vec<GoalSpec>,
    order_group: u64,
    path_digest: [u8; 32],
}

impl StaticFields {
    pub(crate) fn of(u: &Unit) -> Self {
        Self {
            id: u.id,
            owner: u.owner,
            class: u.class,
            radius: u.radius,
            speed: u.speed,
            turn_rate: u.turn_rate,
            orders: u.orders.clone(),
            order_group: u.order_group,
            path_digest: u.path_digest,
        }
    }

    /// Whether `u`'s static fields are these (so its [`unit_static_bytes`] are too).
    pub(crate) fn matches(&self, u: &Unit) -> bool {
        self.id == u.id
            && self.owner == u.owner
            && self.class == u.class
            && self.radius == u.radius
            && self.speed == u.speed
            && self.turn_rate == u.turn_rate
            && self.order_group == u.order_group
            && self.path_digest == u.path_digest
            && self.orders == u.orders
    }
}

/// The fields of a unit that change only with its orders and paths, as canonical bytes
/// (fixed-width little-endian, declaration order); the state digest hashes 8 bytes of their blake3
/// per unit, recomputed only when they change.
pub(crate) fn unit_static_bytes(u: &Unit, out: &mut Vec<u8>) {
    out.extend_from_slice(&u.id.index.to_le_bytes());
    out.extend_from_slice(&u.id.generation.to_le_bytes());
    out.push(u.owner.0);
    out.push(u.class.index());
    for v in [u.radius, u.speed, u.turn_rate] {
        out.extend_from_slice(&v.to_bits().to_le_bytes());
    }
    out.extend_from_slice(&(u.orders.len() as u32).to_le_bytes());
    for order in &u.orders {
        let (tag, a, b, c) = match *order {
            GoalSpec::Point(p) => (0u8, p.x, p.z, Fixed::ZERO),
            GoalSpec::Circle { center, radius } => (1, center.x, center.z, radius),
            GoalSpec::Square { center, half } => (2, center.x, center.z, half),
            GoalSpec::Range { target, min, max, kind } => {
                let (tag, id) = match target {
                    Target::Unit(id) => (3u8, (u64::from(id.generation) << 32) | u64::from(id.index)),
                    Target::Obstruction(id) => (4, u64::from(id.0)),
                };
                // Melee keeps tags 3 and 4; ranged orders are 5 and 6, build orders 7 and 8.
                let tag = tag
                    + match kind {
                        RangeKind::Melee => 0,
                        RangeKind::Ranged => 2,
                        RangeKind::Build => 4,
                    };
                (tag, Fixed::from_bits(id as i64), min, max)
            }
        };
        out.push(tag);
        for v in [a, b, c] {
            out.extend_from_slice(&v.to_bits().to_le_bytes());
        }
    }
    out.extend_from_slice(&u.order_group.to_le_bytes());
    out.extend_from_slice(&u.path_digest);
}

/// The bytes the state digest hashes for a unit each time it changes: its index, the digest of
/// its static fields, and the fields that change as it moves (position, waypoints consumed and
/// left, which with the path digest determine the waypoints, state, cooldown, escape, stalls,
/// facing, the last turn's displacement, searches round held passages).
/// Written by hand rather than through serde: it is the hot part of the per-turn hash.
pub(crate) fn unit_digest_bytes(u: &Unit, static_digest: &[u8; 8], out: &mut Vec<u8>) {
    out.extend_from_slice(&u.id.index.to_le_bytes());
    out.extend_from_slice(static_digest);
    for v in [u.pos.x, u.pos.z] {
        out.extend_from_slice(&v.to_bits().to_le_bytes());
    }
    out.push(u8::from(u.resume));
    out.push(u8::from(u.settle));
    out.extend_from_slice(&u.detour.to_le_bytes());
    let (state, blocked) = match u.state {
        UnitState::Idle => (0u8, 0u8),
        UnitState::WaitingForPath => (1, 0),
        UnitState::Moving => (2, 0),
        UnitState::Blocked(n) => (3, n),
    };
    out.extend_from_slice(&[state, blocked, u.replan_cooldown, u8::from(u.escape), u.stalled]);
    for v in [u.facing.x, u.facing.z, u.displacement.x, u.displacement.z] {
        out.extend_from_slice(&v.to_bits().to_le_bytes());
    }
    out.push(u.held_searches);
}

/// A queued path request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathRequest {
    /// For which unit.
    pub unit: EntityId,
    /// A short-range detour to the unit's next waypoint (or to its goal when near), instead of a
    /// long-range path to its goal.
    pub short: bool,
}

impl PathRequest {
    /// A long-range request.
    pub(crate) fn long(unit: EntityId) -> Self {
        Self { unit, short: false }
    }

    /// A short-range request.
    pub(crate) fn short(unit: EntityId) -> Self {
        Self { unit, short: true }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kept hasher gives the component digest, for an empty path and for longer ones.
    #[test]
    fn the_path_digest_is_the_path_components_digest() {
        for n in [0i64, 1, 2, 17] {
            let path: Vec<WorldPos> = (0..n).map(|k| WorldPos::new(Fixed::from_bits(k * 65_537), Fixed::from_bits(-k))).collect();
            assert_eq!(path_digest(&path), state_hash::digest("path", &path), "{n} waypoints");
            assert_eq!(path_digest(&path), path_digest(&path));
        }
        assert_ne!(path_digest(&[]), path_digest(&[WorldPos::new(Fixed::ZERO, Fixed::ZERO)]));
    }
}
