//! The formations' part of a turn: their commands, their path requests and results, and the
//! formation phase (step 5 of a turn, see `World::step`), after the units moved (docs/formation-rules.md).
//!
//! # The formation phase
//!
//! Every formation that is not idle, in formation-id order:
//!
//! 1. **Group positions** (the pathfinder design). The *average position* is the mean of the
//!    members' positions; the *move position* is the formation's own position
//!    ([`Formation::pos`]), the centre the slots are laid round. The move position leads the
//!    average position along the path by at most `2·d + 2 m` (`d` the formation's walk in a turn,
//!    measured along the facing: the average position projected onto the path); when the members
//!    lag further behind (a gap narrower than the formation, members stuck behind others) the move
//!    position waits for them, at most [`MAX_WAIT_TURNS`] turns in a row. Path vectors behind the
//!    formation are dropped as it turns past their end waypoint, so only the first two vectors
//!    (`from` → `path[0]` → `path[1]`) are ever looked at.
//! 2. **Following a straight line** (the motion proposal). Three candidate positions one turn's
//!    walk `d` away: straight ahead, and 45° to either side. A side candidate farther than the
//!    formation's width from the line being followed is dropped. Each is scored by the number of
//!    navcells under the footprint at that position (facing unchanged) that are impassable for the
//!    formation's class ([`pathing::passability::NavWorld::count_blocked`]: navcells whose centre
//!    is inside the rotated rectangle), plus, for every standing unit that is not a member with its
//!    centre inside it, the navcells its square covers (at least one). The lowest score wins; ties
//!    go to the candidate nearest the line, then to straight ahead, left, right. A side step keeps
//!    the facing.
//!
//!    **Other formations** (docs/formation-rules.md, "Formations that meet"). Against every other
//!    active formation near it, a moving formation keeps two zones in its own frame: the *keep-out
//!    zone*, its footprint grown on every side by the gap (the sum of the two formations' slot
//!    spacings), and the *look-ahead zone*, the keep-out zone stretched forward by its width plus
//!    its depth plus twice the gap. The other formation is its members' positions and its slots;
//!    a point's depth in a zone is one raw unit plus its distance to the zone's nearest edge (0
//!    outside), and a zone's *penetration* is the sum of the depths. A candidate whose keep-out
//!    penetration is not zero and larger than at the current position is dropped; the others are
//!    ranked by their look-ahead penetration first, then as above. While another formation is
//!    near, a side step may go twice the width from the line. When every candidate is dropped the
//!    formation stays. A formation *gives way*, staying where it is, while a moving formation with
//!    a lower id that does not come head on (facings more than 135° apart) has a point in its
//!    look-ahead zone at its current position. Turning and finalising steps that would raise the
//!    keep-out penetration above zero and above the current one are not taken. A formation
//!    standing still for [`HOLD_TURNS`] with another near, held by one that is held too, yields
//!    (docs/formation-rules.md, "Formations that hold each other"): the higher id steps back or
//!    aside out of the other's look-ahead zone, then plans its path again from where it stands.
//!    No candidate position lies on a navcell the class cannot use.
//! 3. **Corners.** When the position projected onto the segment `from → path[0]` lies at or beyond
//!    `path[0]`, the formation turns as a block round that waypoint: position and facing rotate
//!    together about it, without going forward, by `d / R` radians a turn (at most 45°), where
//!    `R` is the turning radius of its outermost corner (distance from the waypoint to the
//!    position plus half the footprint's diagonal), so that the outermost member walks no farther
//!    than `d`. The last step rotates exactly onto the next segment's direction (the rotation
//!    that takes the facing to it, no trigonometry), then the waypoint is dropped. An exact U-turn
//!    turns anticlockwise.
//! 4. **Finalising.** On the last segment, once the distance to the last waypoint is at most the
//!    larger of the distance to the line and `depth / 2 + d`, the formation goes straight to it,
//!    keeping its facing, and stops scoring; there it *arrives*: it stops, and waits for the
//!    members to reach their slots. It has arrived ([`Event::FormationArrived`]) when every member
//!    is within [`ARRIVE_DISTANCE`] of its slot, or after [`ARRIVE_STALL_TURNS`] turns in which the
//!    members got no nearer in total, or after [`ARRIVE_MAX_TURNS`] turns; its members are then
//!    ordinary standing units.
//! 5. **Flow field** (the pathfinder design). The formation keeps a
//!    [`pathing::flow_field::FlowField`] for its class over [`pathing::flow_field::flow_region`]:
//!    the members' bounding box and the path from the move position up to [`FIELD_AHEAD`] along
//!    it (cut there: the point at exactly that distance is the last), grown by half of
//!    [`FIELD_CORRIDOR`]. Its goal is the navcell of that last point (the nearest passable one,
//!    when it is impassable). A new field is made when the path changes, when a member stands
//!    outside the region, or, while the point is not the path's end, when
//!    [`pathing::flow_field::needs_rebuild`] says the move position is within [`FIELD_TRIGGER`] of
//!    it (or the point has fallen behind the facing). The field itself is derived data: it is
//!    rebuilt from the saved inputs ([`crate::formation::FieldInputs`]) whenever it is missing
//!    (the first turn after a load) or the grid changed inside its region this turn, which gives
//!    exactly the field a world that never stopped has.
//! 6. **Slots and steering.** Slot `k` is at the move position plus the layout's offset `k`
//!    turned to the facing. A slot on a navcell the member's class cannot use, or that the field
//!    does not reach, is replaced by the centre of the nearest navcell the field reaches. A member
//!    whose straight line to its slot is clear ([`pathing::collide::segment_clear`]) is given the
//!    slot as its one waypoint; otherwise the field has priority: it is given the navcell centres
//!    along the field's next steps (as many as it covers in a turn, at most [`STEER_STEPS`]),
//!    from the farthest one it can see, so no member walks into a dead end or an impassable slot.
//!    A member off the field heads straight for the nearest navcell on it.
//! 7. **The movement corridor** (the pathfinder design's "centre spline" and "width"). The corridor
//!    is the polyline `from`, then the path, with half the width the larger of half
//!    [`FIELD_CORRIDOR`] and twice the footprint's width plus half its diagonal plus one turn's walk
//!    (the farthest a slot lawfully gets from the line). A member's waypoint outside it is moved
//!    onto its edge, on the way from the line's nearest point ([`Corridor::clamp`]).
//!
//! Members then walk in the next turn's motion step with every rule of [`crate::motion`] (the grid
//! check, standing units' cores, the push-apart): at [`RUN_MULTIPLIER`] times their speed while
//! their slot lies more than [`ARRIVE_DISTANCE`] ahead of them along the facing (behind it, they
//! catch up), at their own speed otherwise ([`Steering`]). Members
//! of a moving formation are walking units, so, as 0 A.D.'s control groups, they never block one
//! another; only standing units block them.

use pathing::flow_field::{FlowField, FlowGoal, FlowRegionParams, flow_region, needs_rebuild};
use pathing::trig::{unit_vector_degrees, unit_vector_radians};
use pathing::{PassMap, Vec2};

use super::jobs::{FormationJob, LongJob};
use super::*;
use crate::formation::{
    ARRIVE_DISTANCE, ARRIVE_MAX_TURNS, ARRIVE_STALL_TURNS, Corridor, FIELD_AHEAD, FIELD_CORRIDOR, FIELD_TRIGGER, FieldInputs,
    FormationState, HOLD_TURNS, Layout, MAX_MEMBERS, MAX_WAIT_TURNS, Profile, RUN_MULTIPLIER, STEER_STEPS, STRANDED_SPACINGS,
    YIELD_MAX_TURNS, footprint, length, length_squared, local_to_world, moved, raw, rotate, slot_offsets, spacing, sub, unit, with_length,
};
use crate::motion::UnitIndex;

/// A formation's flow field as built, with what it was built from (derived data).
pub(crate) struct CachedField {
    inputs: FieldInputs,
    field: FlowField,
}

impl std::fmt::Debug for CachedField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedField").field("inputs", &self.inputs).finish_non_exhaustive()
    }
}

/// The formations, their pending path requests and the id the next one gets: the one way to
/// change them, noting every change for the digest (docs/decisions.md, "The stores note every
/// change; the digest refresh alone marks digests").
#[derive(Clone, Debug, Default)]
pub(super) struct FormationStore {
    by_id: std::collections::BTreeMap<FormationId, Formation>,
    /// Pending formation path requests, oldest first (computed before the units' long-range
    /// requests, from the same per-turn budget).
    requests: Vec<FormationId>,
    next: u32,
    changed: bool,
}

impl FormationStore {
    pub(super) fn get(&self, id: &FormationId) -> Option<&Formation> {
        self.by_id.get(id)
    }

    pub(super) fn contains_key(&self, id: &FormationId) -> bool {
        self.by_id.contains_key(id)
    }

    /// Every formation, in id order.
    pub(super) fn values(&self) -> impl Iterator<Item = &Formation> + '_ {
        self.by_id.values()
    }

    /// Every formation with its id, in id order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&FormationId, &Formation)> + '_ {
        self.by_id.iter()
    }

    /// Takes a formation out to change it; put it back with [`FormationStore::insert`].
    pub(super) fn remove(&mut self, id: &FormationId) -> Option<Formation> {
        self.changed = true;
        self.by_id.remove(id)
    }

    pub(super) fn insert(&mut self, id: FormationId, f: Formation) {
        self.changed = true;
        self.by_id.insert(id, f);
    }

    pub(super) fn requests(&self) -> &[FormationId] {
        &self.requests
    }

    pub(super) fn requests_mut(&mut self) -> &mut Vec<FormationId> {
        self.changed = true;
        &mut self.requests
    }

    /// The id the next formation gets.
    pub(super) fn next(&self) -> u32 {
        self.next
    }

    /// Hands out the next formation id, unless the ids are exhausted.
    pub(super) fn allocate(&mut self) -> Option<FormationId> {
        if self.next == u32::MAX {
            return None;
        }
        self.changed = true;
        self.next += 1;
        Some(FormationId(self.next - 1))
    }

    /// A store of a snapshot's requests and next id, with no formations yet.
    pub(super) fn loaded(requests: Vec<FormationId>, next: u32) -> Self {
        Self { by_id: std::collections::BTreeMap::new(), requests, next, changed: true }
    }

    /// A copy noted as changed, for a digest computed afresh.
    pub(super) fn changed_copy(&self) -> Self {
        Self { changed: true, ..self.clone() }
    }

    /// Whether anything changed since the last call.
    pub(super) fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    /// The digest of the formations component.
    pub(super) fn digest(&self) -> Digest {
        let list: Vec<&Formation> = self.by_id.values().collect();
        state_hash::digest("formations", &(self.next, &self.requests, list))
    }
}

/// `a·b` of raw vectors.
fn dot(a: (i128, i128), b: (i128, i128)) -> i128 {
    a.0 * b.0 + a.1 * b.1
}

/// `a × b` of raw vectors.
fn cross(a: (i128, i128), b: (i128, i128)) -> i128 {
    a.0 * b.1 - a.1 * b.0
}

fn vec_raw(v: Vec2) -> (i128, i128) {
    (raw(v.x), raw(v.z))
}

/// π/4 in radians, raw.
const QUARTER_PI_RAW: i64 = 51_472;

/// cos 45°, raw: two formations whose facings' dot product is below its negative meet head on.
const COS_45_RAW: i128 = 46_341;

/// Whether a member at `pos` is behind its slot: the slot lies more than [`ARRIVE_DISTANCE`] ahead
/// of it along the facing.
fn behind_slot(facing: Vec2, pos: WorldPos, slot: WorldPos) -> bool {
    dot(sub(slot, pos), vec_raw(facing)) >> 16 > raw(ARRIVE_DISTANCE)
}

/// Another formation near a moving one, as it stands: what the moving one keeps clear of
/// (docs/formation-rules.md, "Formations that meet").
struct Presence {
    id: FormationId,
    /// It moves along its path (following, turning or finalising).
    moving: bool,
    facing: Vec2,
    /// Its slot spacing, raw.
    spacing: i128,
    /// Its members' positions and its slots.
    points: Vec<WorldPos>,
    /// Its position and footprint, raw spacing aside (its zones are computed from them).
    pos: WorldPos,
    width: Fixed,
    depth: Fixed,
    /// Its count of held turns and the formation it yields to ([`Formation::held`]).
    held: u16,
    yield_to: Option<FormationId>,
}

/// A rectangle in a formation's frame round `centre`: `half_across` to either side, `back` behind
/// and `front` ahead of it, all raw.
#[derive(Clone, Copy)]
struct Zone {
    centre: WorldPos,
    facing: (i128, i128),
    half_across: i128,
    back: i128,
    front: i128,
}

impl Zone {
    /// How deep `p` lies inside the zone: one raw unit plus its distance to the nearest edge, 0
    /// outside.
    fn depth(&self, p: WorldPos) -> i128 {
        let rel = sub(p, self.centre);
        let left = (-self.facing.1, self.facing.0);
        let (a, b) = (dot(rel, left) >> 16, dot(rel, self.facing) >> 16);
        let depth = (self.half_across - a.abs()).min(self.front - b).min(b + self.back);
        if depth < 0 { 0 } else { depth + 1 }
    }

    /// The sum of the points' depths inside the zone.
    fn penetration(&self, points: &[WorldPos]) -> i128 {
        points.iter().map(|&p| self.depth(p)).sum()
    }
}

/// Whether moving a formation from `from` to `to` (position and facing) takes other formations'
/// members or slots deeper into its footprint grown by the gap: the penetration there is not zero
/// and larger than where it stands (so formations already entangled may still move apart).
fn intrudes(others: &[Presence], from: (WorldPos, Vec2), to: (WorldPos, Vec2), width: Fixed, depth: Fixed, spacing: i128) -> bool {
    let penetration = |(pos, facing): (WorldPos, Vec2)| -> i128 {
        others.iter().map(|g| zones(pos, facing, width, depth, spacing, g.spacing).0.penetration(&g.points)).sum()
    };
    let after = penetration(to);
    after > 0 && after > penetration(from)
}

/// The keep-out zones of a formation of footprint `(width, depth)` at `centre` facing `facing`
/// against another of spacing `other_spacing`: the footprint grown by the gap (the sum of both
/// spacings), and that zone stretched ahead by the look-ahead (the width plus the depth plus
/// twice the gap), both raw. `(hard, soft)`.
fn zones(centre: WorldPos, facing: Vec2, width: Fixed, depth: Fixed, spacing: i128, other_spacing: i128) -> (Zone, Zone) {
    let gap = spacing + other_spacing;
    let (hw, hd) = (raw(width) / 2, raw(depth) / 2);
    let hard = Zone { centre, facing: vec_raw(facing), half_across: hw + gap, back: hd + gap, front: hd + gap };
    let ahead = raw(width) + raw(depth) + 2 * gap;
    (hard, Zone { front: hard.front + ahead, ..hard })
}

impl World {
    /// A formation.
    pub fn formation(&self, id: FormationId) -> Option<&Formation> {
        self.formations.get(&id)
    }

    /// Every formation, in id order.
    pub fn formations(&self) -> impl Iterator<Item = &Formation> + '_ {
        self.formations.values()
    }

    /// Pending formation path requests, in the order they will be computed.
    pub fn formation_requests(&self) -> &[FormationId] {
        self.formations.requests()
    }

    /// A formation's flow field as last built (derived data; `None` before the first build or
    /// after a load, until its next turn).
    pub fn formation_field(&self, id: FormationId) -> Option<&FlowField> {
        self.derived.fields.get(&id).map(|c| &c.field)
    }

    /// The slot positions of a formation's members, in member order (before impassable slots are
    /// replaced).
    pub fn formation_slots(&self, id: FormationId) -> Vec<WorldPos> {
        let Some(f) = self.formations.get(&id) else { return Vec::new() };
        let Some(profile) = self.profile(&f.members) else { return Vec::new() };
        self.slots(f, &profile)
    }

    /// By unit index: whether the unit is a member of a formation that steers it, and whether it
    /// runs: a member runs while its slot lies more than [`ARRIVE_DISTANCE`] ahead of it along the
    /// formation's facing, and walks otherwise (step 6 of the module documentation). The slots are
    /// those the formation phase of the last turn laid out, from saved state only.
    pub(super) fn steered_members(&self) -> Vec<Steering> {
        let mut out = vec![Steering::Free; self.units.slots().len()];
        for f in self.formations.values().filter(|f| f.is_active()) {
            let slots = self.profile(&f.members).map(|profile| self.slots(f, &profile)).unwrap_or_default();
            for (k, m) in f.members.iter().enumerate() {
                let behind = match (self.unit(*m), slots.get(k)) {
                    (Some(u), Some(&slot)) => behind_slot(f.facing, u.pos, slot),
                    _ => false,
                };
                if let Some(entry) = out.get_mut(m.index as usize) {
                    *entry = if behind { Steering::Run } else { Steering::Walk };
                }
            }
        }
        out
    }

    /// The members' class, speed and size ([`Profile`]); `None` when a member is gone (never for
    /// a formation that keeps the invariants).
    fn profile(&self, members: &[EntityId]) -> Option<Profile> {
        let mut best: Option<(Fixed, PassClass)> = None;
        let (mut speed, mut radius) = (Fixed::MAX, Fixed::ZERO);
        for &id in members {
            let u = self.unit(id)?;
            let clearance = self.nav.classes().get(u.class).map_or(Fixed::ZERO, |c| c.clearance);
            // Largest clearance, ties to the lowest class index.
            if best.is_none_or(|(c, k)| clearance > c || (clearance == c && u.class < k)) {
                best = Some((clearance, u.class));
            }
            speed = speed.min(u.speed);
            radius = radius.max(u.radius);
        }
        Some(Profile { class: best?.1, speed, radius })
    }

    /// The mean of the members' positions (raw sums, rounded towards −∞).
    fn average_position(&self, members: &[EntityId]) -> WorldPos {
        let (mut x, mut z, mut n) = (0i128, 0i128, 0i128);
        for u in members.iter().filter_map(|&id| self.unit(id)) {
            x += raw(u.pos.x);
            z += raw(u.pos.z);
            n += 1;
        }
        if n == 0 {
            return WorldPos::new(Fixed::ZERO, Fixed::ZERO);
        }
        WorldPos::new(Fixed::from_bits(x.div_euclid(n) as i64), Fixed::from_bits(z.div_euclid(n) as i64))
    }

    /// The slot positions, in member order.
    fn slots(&self, f: &Formation, profile: &Profile) -> Vec<WorldPos> {
        slot_offsets(f.layout, f.members.len(), spacing(f.layout, profile.radius))
            .into_iter()
            .map(|(along, across)| moved(f.pos, local_to_world(f.facing, along, across)))
            .collect()
    }

    /// Gives the slots to the members again, greedily: slot by slot in slot order, each to the
    /// nearest member not yet placed (exact squared distance; ties to the member listed first).
    fn assign_slots(&self, f: &mut Formation) {
        let Some(profile) = self.profile(&f.members) else { return };
        let slots = self.slots(f, &profile);
        let positions: Vec<WorldPos> = f.members.iter().map(|&id| self.unit(id).map_or(f.pos, |u| u.pos)).collect();
        let mut taken = vec![false; f.members.len()];
        let mut order = Vec::with_capacity(f.members.len());
        for slot in slots {
            let best = (0..positions.len()).filter(|&k| !taken[k]).min_by_key(|&k| (length_squared(sub(positions[k], slot)), k));
            if let Some(k) = best {
                taken[k] = true;
                order.push(f.members[k]);
            }
        }
        f.members = order;
    }

    /// Puts members under their formation's control: no orders, paths or requests of their own,
    /// walking (so that they never block one another).
    fn engage_members(&mut self, members: &[EntityId]) {
        self.drop_requests_of(members);
        for &id in members {
            self.reset_unit(id, UnitState::Moving);
        }
    }

    /// Lets members stand: idle where they are.
    fn release_members(&mut self, members: &[EntityId]) {
        for &id in members {
            let Some(unit) = self.units.get_mut(id) else { continue };
            if unit.state != UnitState::Moving {
                continue;
            }
            unit.clear_waypoints();
            unit.state = UnitState::Idle;
        }
    }

    /// Takes `units` out of their formations; a formation left without members is disbanded. A
    /// standing formation whose members changed re-forms.
    pub(super) fn leave_formations(&mut self, units: &[EntityId], events: &mut Vec<Event>) {
        let touched: Vec<FormationId> =
            self.formations.values().filter(|f| f.members.iter().any(|m| units.contains(m))).map(|f| f.id).collect();
        for id in touched {
            let Some(mut f) = self.formations.remove(&id) else { continue };
            f.members.retain(|m| !units.contains(m));
            if f.members.is_empty() {
                self.drop_formation(id, events);
                continue;
            }
            self.assign_slots(&mut f);
            if f.state == FormationState::Idle {
                let members = f.members.clone();
                self.engage_members(&members);
                enter_arriving(&mut f);
            }
            self.formations.insert(id, f);
        }
    }

    /// Forgets a formation (already taken out of the map) and reports it.
    fn drop_formation(&mut self, id: FormationId, events: &mut Vec<Event>) {
        self.formations.requests_mut().retain(|r| *r != id);
        self.derived.fields.remove(&id);
        events.push(Event::FormationDisbanded { formation: id });
    }

    /// The sender's formation, or why not.
    fn owned_formation(&self, player: PlayerId, id: FormationId) -> Result<&Formation, RejectReason> {
        let f = self.formations.get(&id).ok_or(RejectReason::UnknownFormation(id))?;
        if f.owner != player {
            return Err(RejectReason::FormationNotOwned(id));
        }
        Ok(f)
    }

    pub(super) fn form_group(
        &mut self,
        player: PlayerId,
        units: &[EntityId],
        layout: Layout,
        events: &mut Vec<Event>,
    ) -> Result<(), RejectReason> {
        self.check_units(player, units)?;
        let mut members: Vec<EntityId> = Vec::with_capacity(units.len());
        for &id in units {
            if !members.contains(&id) {
                members.push(id);
            }
        }
        if members.len() > MAX_MEMBERS {
            return Err(RejectReason::TooManyMembers { count: members.len() as u32, max: MAX_MEMBERS as u32 });
        }
        let Some(id) = self.formations.allocate() else {
            return Err(RejectReason::IdsExhausted(crate::command::IdKind::Formation));
        };
        self.leave_formations(&members, events);
        self.engage_members(&members);
        let pos = self.average_position(&members);
        let mut f = Formation {
            id,
            owner: player,
            layout,
            state: FormationState::Arriving,
            goal: None,
            members,
            pos,
            facing: Vec2::new(Fixed::ZERO, Fixed::ONE),
            from: pos,
            path: Vec::new(),
            path_serial: 0,
            field: None,
            waited: 0,
            arriving_turns: 0,
            stalled: 0,
            remaining: u64::MAX,
            held: 0,
            yield_to: None,
            yield_turns: 0,
        };
        self.assign_slots(&mut f);
        self.formations.insert(id, f);
        events.push(Event::FormationCreated { formation: id });
        Ok(())
    }

    pub(super) fn move_formation(&mut self, player: PlayerId, id: FormationId, goal: &GoalSpec) -> Result<(), RejectReason> {
        self.owned_formation(player, id)?;
        if matches!(goal, GoalSpec::Range { .. }) {
            return Err(RejectReason::OutOfRange);
        }
        self.check_order(goal)?;
        let mut f = self.formations.remove(&id).expect("checked above");
        if f.state == FormationState::Idle {
            let members = f.members.clone();
            self.engage_members(&members);
        }
        f.goal = Some(*goal);
        f.state = FormationState::WaitingForPath;
        f.waited = 0;
        if !self.formations.requests().contains(&id) {
            self.formations.requests_mut().push(id);
        }
        self.formations.insert(id, f);
        Ok(())
    }

    pub(super) fn set_layout(&mut self, player: PlayerId, id: FormationId, layout: Layout) -> Result<(), RejectReason> {
        self.owned_formation(player, id)?;
        let mut f = self.formations.remove(&id).expect("checked above");
        f.layout = layout;
        self.assign_slots(&mut f);
        if f.state == FormationState::Idle {
            let members = f.members.clone();
            self.engage_members(&members);
            enter_arriving(&mut f);
        }
        self.formations.insert(id, f);
        Ok(())
    }

    pub(super) fn disband(&mut self, player: PlayerId, id: FormationId, events: &mut Vec<Event>) -> Result<(), RejectReason> {
        self.owned_formation(player, id)?;
        let f = self.formations.remove(&id).expect("checked above");
        self.release_members(&f.members);
        self.drop_formation(id, events);
        Ok(())
    }

    /// The path search for a formation's request, read from the world before the parallel phase:
    /// from the members' average position (or, when that is impassable for the formation's class,
    /// from the member nearest to it that stands on a passable navcell) to its goal.
    pub(super) fn formation_job(&self, id: FormationId) -> Option<FormationJob> {
        let f = self.formations.get(&id).filter(|f| f.state == FormationState::WaitingForPath)?;
        let goal = goal_of(f.goal.as_ref()?)?;
        let profile = self.profile(&f.members)?;
        let pass = self.nav.class_nav(profile.class)?.pass_map();
        let average = self.average_position(&f.members);
        let pos = if pass.is_passable(self.navcell_of(average)) {
            average
        } else {
            f.members
                .iter()
                .filter_map(|&m| self.unit(m))
                .filter(|u| pass.is_passable(self.navcell_of(u.pos)))
                .min_by_key(|u| length_squared(sub(u.pos, average)))
                .map_or(average, |u| u.pos)
        };
        let cell_size = self.nav.grid().cell_size();
        let anchor = matches!(f.goal, Some(GoalSpec::Point(_))).then(|| f.goal.and_then(|g| g.anchor())).flatten();
        let (width, depth) = footprint(f.layout, f.members.len(), spacing(f.layout, profile.radius));
        Some(FormationJob {
            long: LongJob {
                class: profile.class,
                pos,
                cell: self.navcell_of(pos),
                goal,
                anchor: anchor.map(|a| crate::motion::off_grid_lines(a, cell_size)),
                group: 0,
            },
            size: width.min(depth),
        })
    }

    /// Applies a formation's path (already generalised; `start` first): it starts from there,
    /// facing its first waypoint.
    pub(super) fn apply_formation_path(&mut self, id: FormationId, mut path: Vec<WorldPos>) {
        let Some(mut f) = self.formations.remove(&id) else { return };
        if f.state == FormationState::WaitingForPath && path.is_empty() {
            // No search could be made (cannot happen for a checked formation): it stays.
            f.goal = None;
            enter_arriving(&mut f);
        } else if f.state == FormationState::WaitingForPath {
            let start = path.remove(0);
            f.from = start;
            f.pos = start;
            if let Some(facing) = path.first().and_then(|&p| unit(sub(p, start))) {
                f.facing = facing;
            }
            f.path = path;
            f.path_serial = f.path_serial.wrapping_add(1);
            f.field = None;
            f.waited = 0;
            self.assign_slots(&mut f);
            if f.path.is_empty() {
                enter_arriving(&mut f);
            } else {
                f.state = FormationState::Following;
            }
        }
        self.formations.insert(id, f);
    }

    /// The formation phase (see the module documentation).
    pub(super) fn update_formations(&mut self, events: &mut Vec<Event>) {
        if self.formations.values().all(|f| !f.is_active()) {
            self.scratch.turn_dirty.clear();
            return;
        }
        let scoring = self.formations.values().any(|f| f.state == FormationState::Following);
        let standing = if scoring {
            UnitIndex::new(self.units().filter(|u| u.state == UnitState::Idle).map(|u| (u.id, u.pos, u.radius)).collect())
        } else {
            UnitIndex::new(Vec::new())
        };
        let ids: Vec<FormationId> = self.formations.iter().filter(|(_, f)| f.is_active()).map(|(&id, _)| id).collect();
        for id in ids {
            let Some(mut f) = self.formations.remove(&id) else { continue };
            let Some(profile) = self.profile(&f.members) else {
                self.formations.insert(id, f);
                continue;
            };
            self.advance(&mut f, &profile, &standing);
            if f.state == FormationState::WaitingForPath && !self.formations.requests().contains(&id) {
                // A yield ended: it plans its path again from where it stands.
                self.formations.requests_mut().push(id);
            }
            let arrived = self.steer(&mut f, &profile);
            if arrived {
                let members = f.members.clone();
                // Members stranded far from their slots (behind a wall the members could not
                // steer round) walk there on paths of their own.
                let stranded_beyond = STRANDED_SPACINGS * raw(spacing(f.layout, profile.radius));
                let stranded: Vec<(EntityId, WorldPos)> = members
                    .iter()
                    .zip(self.slots(&f, &profile))
                    .filter(|&(&m, slot)| self.unit(m).is_some_and(|u| length(sub(slot, u.pos)) > stranded_beyond))
                    .map(|(&m, slot)| (m, on_map(self.nav.grid(), slot)))
                    .collect();
                self.release_members(&members);
                for (m, slot) in stranded {
                    self.give_orders(m, &[GoalSpec::Point(slot)], false);
                }
                f.state = FormationState::Idle;
                f.goal = None;
                f.path.clear();
                f.field = None;
                self.derived.fields.remove(&id);
                events.push(Event::FormationArrived { formation: id });
            }
            self.formations.insert(id, f);
        }
        self.scratch.turn_dirty.clear();
    }

    /// The other active formations near `f` (taken out of the map), in id order, with their
    /// members' positions and slots; only those whose points could reach `f`'s keep-out zones this
    /// turn.
    fn presences(&self, f: &Formation, d: i128, width: Fixed, depth: Fixed, own_spacing: i128) -> Vec<Presence> {
        let mut out = Vec::new();
        for g in self.formations.values().filter(|g| g.is_active() && g.id != f.id) {
            let Some(profile) = self.profile(&g.members) else { continue };
            let spacing_g = raw(spacing(g.layout, profile.radius));
            let mut points: Vec<WorldPos> = g.members.iter().filter_map(|&m| self.unit(m)).map(|u| u.pos).collect();
            points.extend(self.slots(g, &profile));
            // Every point of `g` lies within `spread` of its position; every zone of `f` this turn
            // lies within `reach` of `f`'s position.
            let spread = points.iter().map(|&p| length(sub(p, g.pos))).max().unwrap_or(0);
            let gap = own_spacing + spacing_g;
            let reach = 2 * (raw(width) + raw(depth)) + 4 * gap + 2 * d;
            if length(sub(g.pos, f.pos)) > reach + spread + 1 {
                continue;
            }
            let moving = matches!(g.state, FormationState::Following | FormationState::Turning | FormationState::Finalising);
            let (width_g, depth_g) = footprint(g.layout, g.members.len(), spacing(g.layout, profile.radius));
            out.push(Presence {
                id: g.id,
                moving,
                facing: g.facing,
                spacing: spacing_g,
                points,
                pos: g.pos,
                width: width_g,
                depth: depth_g,
                held: g.held,
                yield_to: g.yield_to,
            });
        }
        out
    }

    /// Moves a formation's position for one turn (steps 1–4 of the module documentation), or one
    /// step out of another formation's way while it yields; counts the turns other formations
    /// leave it no step, and starts yielding once it and the formation holding it are both held.
    fn advance(&self, f: &mut Formation, profile: &Profile, standing: &UnitIndex) {
        let d = raw(profile.speed) * i128::from(self.settings.turn_ms) / 1000;
        let (width, depth) = footprint(f.layout, f.members.len(), spacing(f.layout, profile.radius));
        let own_spacing = raw(spacing(f.layout, profile.radius));
        let moving = matches!(f.state, FormationState::Following | FormationState::Turning | FormationState::Finalising);
        let others = if moving { self.presences(f, d, width, depth, own_spacing) } else { Vec::new() };
        if !moving {
            f.waited = 0;
            f.held = 0;
            f.yield_to = None;
            f.yield_turns = 0;
            return;
        }
        if f.yield_to.is_some() {
            self.yield_step(f, profile, d, width, depth, own_spacing, &others);
            return;
        }
        let before = (f.pos, f.facing);
        let lagging = self.advance_along(f, profile, standing, d, width, depth, own_spacing, &others);
        if (f.pos, f.facing) != before {
            f.held = 0;
        } else if !lagging && !others.is_empty() {
            // Standing still with another formation near, and not waiting for its own members.
            f.held = f.held.saturating_add(1);
        }
        if f.held >= HOLD_TURNS {
            // Held, by a formation that is held too: the higher id steps out of the way, or the
            // lower one when the higher one, yielding, finds no step.
            let to = others
                .iter()
                .filter(|g| {
                    g.moving && g.held > 0 && ((g.id < f.id && g.yield_to.is_none()) || (g.yield_to == Some(f.id) && g.held >= HOLD_TURNS))
                })
                .map(|g| g.id)
                .min();
            if let Some(to) = to {
                f.yield_to = Some(to);
                f.yield_turns = 0;
                f.held = 0;
            }
        }
    }

    /// Steps 1–4 of the module documentation; returns whether the position waited for lagging
    /// members.
    #[allow(clippy::too_many_arguments)]
    fn advance_along(
        &self,
        f: &mut Formation,
        profile: &Profile,
        standing: &UnitIndex,
        d: i128,
        width: Fixed,
        depth: Fixed,
        own_spacing: i128,
        others: &[Presence],
    ) -> bool {
        // Giving way: a formation crossing the way of a moving formation with a lower id that is
        // not coming head on waits while any of that formation's members or slots is in its
        // look-ahead zone.
        let gives_way = others.iter().any(|g| {
            let head_on = dot(vec_raw(f.facing), vec_raw(g.facing)) < -(COS_45_RAW << 16);
            g.moving && g.id < f.id && !head_on && zones(f.pos, f.facing, width, depth, own_spacing, g.spacing).1.penetration(&g.points) > 0
        });
        if gives_way {
            return false;
        }
        let average = self.average_position(&f.members);
        let lead_max = 2 * d + (2 << 16);
        let facing = vec_raw(f.facing);
        let lagging = match f.state {
            FormationState::Following | FormationState::Finalising => dot(sub(f.pos, average), facing) >> 16 > lead_max,
            FormationState::Turning => length(sub(f.pos, average)) > lead_max,
            _ => false,
        };
        if lagging && f.waited < MAX_WAIT_TURNS {
            f.waited += 1;
            return true;
        }
        if !lagging {
            f.waited = 0;
        }
        if f.state == FormationState::Following {
            let Some(&b) = f.path.first() else {
                enter_arriving(f);
                return false;
            };
            let ab = sub(b, f.from);
            let past = dot(sub(f.pos, f.from), ab) >= length_squared(ab);
            if past {
                f.state = if f.path.len() >= 2 { FormationState::Turning } else { FormationState::Finalising };
            } else if f.path.len() == 1 {
                let to_b = length(sub(b, f.pos));
                let ab_len = length(ab).max(1);
                let off_line = cross(ab, sub(f.pos, f.from)).abs() / ab_len;
                if to_b <= off_line.max(raw(depth) / 2 + d) {
                    f.state = FormationState::Finalising;
                }
            }
            if f.state == FormationState::Following {
                self.follow(f, profile, standing, d, width, depth, others);
                return false;
            }
        }
        // Turning and finalising do not score candidates: a step that would take other
        // formations' members or slots deeper into the footprint grown by the gap is not taken.
        let before = f.clone();
        match f.state {
            FormationState::Turning => {
                turn(f, d, width, depth);
                // A turn never leaves the position on a navcell its class cannot use: it turns
                // about the waypoint itself instead.
                if !self.open_at(profile.class, f.pos)
                    && let Some(&pivot) = before.path.first()
                    && self.open_at(profile.class, pivot)
                {
                    f.pos = pivot;
                }
            }
            FormationState::Finalising => finalise(f, d),
            _ => {}
        }
        if !others.is_empty() && intrudes(others, (before.pos, before.facing), (f.pos, f.facing), width, depth, own_spacing) {
            *f = before;
        }
        false
    }

    /// Whether `p` lies on the grid, on a navcell `class` can use.
    fn open_at(&self, class: PassClass, p: WorldPos) -> bool {
        let grid = self.nav.grid();
        let s = raw(grid.cell_size()).max(1);
        let (x, z) = (raw(p.x), raw(p.z));
        if x < 0 || z < 0 || x >= i128::from(grid.width()) * s || z >= i128::from(grid.height()) * s {
            return false;
        }
        self.nav.class_nav(class).is_some_and(|c| c.pass_map().is_passable(self.navcell_of(p)))
    }

    /// One turn of yielding to the formation `f.yield_to`: a step of `d` back, back to either side
    /// or to either side (facing unchanged) that takes the slots less deep into that formation's
    /// look-ahead zone, onto a usable navcell, covering no more blocked navcells than now and
    /// taking no formation deeper into the keep-out zone; the least deep wins (then the fewest
    /// blocked navcells, then that order). The yield ends when no slot is in that zone any more,
    /// when the other formation stops moving or is gone, or after [`YIELD_MAX_TURNS`]; the
    /// formation then plans its path again from where it stands.
    #[allow(clippy::too_many_arguments)]
    fn yield_step(
        &self,
        f: &mut Formation,
        profile: &Profile,
        d: i128,
        width: Fixed,
        depth: Fixed,
        own_spacing: i128,
        others: &[Presence],
    ) {
        f.yield_turns = f.yield_turns.saturating_add(1);
        let slots = self.slots(f, profile);
        let zone = others
            .iter()
            .find(|g| Some(g.id) == f.yield_to && g.moving)
            .map(|g| zones(g.pos, g.facing, g.width, g.depth, g.spacing, own_spacing).1);
        let now = zone.map_or(0, |z| z.penetration(&slots));
        if now == 0 || f.yield_turns > YIELD_MAX_TURNS {
            f.yield_to = None;
            f.yield_turns = 0;
            f.held = 0;
            if f.goal.is_some() {
                f.state = FormationState::WaitingForPath;
            }
            return;
        }
        let Some(zone) = zone else { return };
        let class = profile.class;
        let left = Vec2::new(-f.facing.z, f.facing.x);
        let (hw, hh) = (Fixed::from_bits(width.to_bits() / 2), Fixed::from_bits(depth.to_bits() / 2));
        let blocked_at = |p: WorldPos| Square::new(p, hw, hh, left, f.facing).map(|sq| self.nav.count_blocked(class, &sq)).ok();
        let Some(blocked_now) = blocked_at(f.pos) else { return };
        let facing = vec_raw(f.facing);
        let diagonal = unit_vector_degrees(Fixed::from_num(135));
        let (c, s) = (raw(diagonal.x), raw(diagonal.z));
        let back = (-facing.0, -facing.1);
        let directions = [back, rotate(facing, c, s), rotate(facing, c, -s), (-facing.1, facing.0), (facing.1, -facing.0)];
        let mut best: Option<((i128, u64, usize), WorldPos)> = None;
        for (k, dir) in directions.into_iter().enumerate() {
            let candidate = moved(f.pos, ((dir.0 * d) >> 16, (dir.1 * d) >> 16));
            if !self.open_at(class, candidate) || intrudes(others, (f.pos, f.facing), (candidate, f.facing), width, depth, own_spacing) {
                continue;
            }
            let Some(blocked) = blocked_at(candidate) else { continue };
            if blocked > blocked_now {
                continue;
            }
            let shift = sub(candidate, f.pos);
            let moved_slots: Vec<WorldPos> = slots.iter().map(|&p| moved(p, shift)).collect();
            let deep = zone.penetration(&moved_slots);
            if deep >= now {
                continue;
            }
            let key = (deep, blocked, k);
            if best.is_none_or(|(b, _)| key < b) {
                best = Some((key, candidate));
            }
        }
        match best {
            Some((_, p)) => {
                f.pos = p;
                f.held = 0;
            }
            None => f.held = f.held.saturating_add(1),
        }
    }

    /// One turn of following the straight line `from → path[0]`: the best of three candidates, on
    /// navcells the class can use; when none is, a step back onto the line.
    #[allow(clippy::too_many_arguments)]
    fn follow(&self, f: &mut Formation, profile: &Profile, standing: &UnitIndex, d: i128, width: Fixed, depth: Fixed, others: &[Presence]) {
        let Some(&b) = f.path.first() else { return };
        let ab = sub(b, f.from);
        let ab_len2 = length_squared(ab);
        let facing = vec_raw(f.facing);
        let diagonal = unit_vector_degrees(Fixed::from_num(45));
        let (c, s) = (raw(diagonal.x), raw(diagonal.z));
        let directions = [facing, rotate(facing, c, s), rotate(facing, c, -s)];
        let class = profile.class;
        let cell = raw(self.nav.grid().cell_size()).max(1);
        let left = Vec2::new(-f.facing.z, f.facing.x);
        let (hw, hh) = (Fixed::from_bits(width.to_bits() / 2), Fixed::from_bits(depth.to_bits() / 2));
        let reach = Fixed::from_bits((length((raw(hw), raw(hh))) + raw(standing.max_radius())) as i64);
        let own_spacing = raw(spacing(f.layout, profile.radius));
        // Another formation near: side steps may go twice as far from the line to make room.
        let limit = if others.is_empty() { raw(width) } else { 2 * raw(width) };
        let mut best: Option<((i128, u64, i128, usize), WorldPos)> = None;
        let mut open = 0;
        for (k, dir) in directions.into_iter().enumerate() {
            let candidate = moved(f.pos, ((dir.0 * d) >> 16, (dir.1 * d) >> 16));
            // A formation's position never lies on a navcell its class cannot use.
            if !self.open_at(class, candidate) {
                continue;
            }
            let off = cross(ab, sub(candidate, f.from)).abs();
            // A side step farther than the width from the line is dropped: off / |ab| > width.
            // Products that overflow `i128` (a side step thousands of kilometres off a line) are
            // decided by which side overflowed: an overflowing bound keeps the step.
            let too_far = match (off.checked_mul(off), limit.checked_mul(limit).and_then(|w2| w2.checked_mul(ab_len2))) {
                (Some(lhs), Some(rhs)) => lhs > rhs,
                (None, Some(_)) => true,
                (_, None) => false,
            };
            if k > 0 && too_far {
                continue;
            }
            open += 1;
            // Other formations: a candidate whose footprint grown by the gap holds another
            // formation's member or slot is dropped; the others count those in their look-ahead
            // zone first.
            if intrudes(others, (f.pos, f.facing), (candidate, f.facing), width, depth, own_spacing) {
                continue;
            }
            let near: i128 =
                others.iter().map(|g| zones(candidate, f.facing, width, depth, own_spacing, g.spacing).1.penetration(&g.points)).sum();
            let Ok(square) = Square::new(candidate, hw, hh, left, f.facing) else { continue };
            let mut score = self.nav.count_blocked(class, &square);
            standing.for_each_near(candidate, reach, |id, pos, radius| {
                if f.members.contains(&id) {
                    return;
                }
                let rel = sub(pos, candidate);
                let (a, b) = (dot(rel, vec_raw(left)) >> 16, dot(rel, facing) >> 16);
                if a.abs() <= raw(hw) && b.abs() <= raw(hh) {
                    let side = (2 * raw(radius) / cell).max(1);
                    score += (side * side) as u64;
                }
            });
            let key = (near, score, off, k);
            if best.is_none_or(|(b, _)| key < b) {
                best = Some((key, candidate));
            }
        }
        if let Some((_, pos)) = best {
            f.pos = pos;
        } else if open == 0 {
            // Every candidate lies on a navcell the class cannot use (a side step took the
            // formation beside a wall): back onto the line, one turn's walk ahead of where the
            // position projects onto it; the line is the path's, clear for the class.
            let ab_len = length(ab).max(1);
            let along = (dot(sub(f.pos, f.from), ab) / ab_len + d).clamp(0, ab_len);
            let step = if along >= ab_len { b } else { moved(f.from, with_length(ab, along)) };
            if self.open_at(class, step) && !intrudes(others, (f.pos, f.facing), (step, f.facing), width, depth, own_spacing) {
                f.pos = step;
            }
        }
    }

    /// Keeps the formation's flow field current (step 5 of the module documentation) and returns
    /// it, built; `None` when the formation's class has no navigation layer.
    fn field_for(&mut self, f: &mut Formation, profile: &Profile) -> Option<&FlowField> {
        let class_nav = self.nav.class_nav(profile.class)?;
        let map = class_nav.pass_map();
        let navcell = |p: WorldPos| grid_navcell(self.nav.grid(), p);
        let positions: Vec<WorldPos> = f.members.iter().filter_map(|&id| self.unit(id)).map(|u| u.pos).collect();
        let stale = match &f.field {
            None => true,
            Some(inputs) => {
                let outside = positions.iter().any(|&p| {
                    let c = navcell(p);
                    !inputs.region.contains(u32::from(c.i), u32::from(c.j))
                });
                let behind = matches!(f.state, FormationState::Following | FormationState::Finalising)
                    && dot(sub(inputs.point, f.pos), vec_raw(f.facing)) >> 16 < raw(FIELD_TRIGGER);
                inputs.serial != f.path_serial || outside || (!inputs.end && (needs_rebuild(f.pos, inputs.point, FIELD_TRIGGER) || behind))
            }
        };
        if stale {
            let (points, end) = field_points(f.pos, &f.path);
            let params = FlowRegionParams { ahead_distance: FIELD_AHEAD, corridor_width: FIELD_CORRIDOR };
            let region = flow_region(positions.iter().copied(), f.pos, &points, &params, map);
            let point = points.last().copied().unwrap_or(f.pos);
            let cell = navcell(point);
            let goal = class_nav.snap(cell, 16).unwrap_or(cell);
            f.field = Some(FieldInputs { region: region.cells, goal, point, end, serial: f.path_serial });
        }
        let inputs = f.field?;
        let changed = self.scratch.turn_dirty.iter().any(|r| !r.intersect(&inputs.region).is_empty());
        let cached = self.derived.fields.entry(f.id).or_insert_with(|| CachedField { inputs, field: FlowField::new() });
        if stale || changed || cached.inputs != inputs || cached.field.region() != inputs.region {
            cached.inputs = inputs;
            cached.field.build(map, inputs.region, &FlowGoal::Cell(inputs.goal));
        }
        Some(&cached.field)
    }

    /// A formation's movement corridor (step 7 of the module documentation).
    pub fn formation_corridor(&self, id: FormationId) -> Option<Corridor> {
        let f = self.formations.get(&id)?;
        Some(self.corridor(f, &self.profile(&f.members)?))
    }

    /// The movement corridor: the polyline `from`, then the path, with half the width the larger
    /// of half [`FIELD_CORRIDOR`] and twice the footprint's width plus half its diagonal plus one
    /// turn's walk (the farthest a slot lawfully gets from the line).
    fn corridor(&self, f: &Formation, profile: &Profile) -> Corridor {
        let d = raw(profile.speed) * i128::from(self.settings.turn_ms) / 1000;
        let (width, depth) = footprint(f.layout, f.members.len(), spacing(f.layout, profile.radius));
        let lawful = 2 * raw(width) + length((raw(width), raw(depth))) / 2 + d;
        let mut points = Vec::with_capacity(f.path.len() + 1);
        points.push(f.from);
        points.extend_from_slice(&f.path);
        Corridor { points, half_width: lawful.max(raw(FIELD_CORRIDOR) / 2) }
    }

    /// Gives every member its waypoints for the next turn (step 6 of the module documentation);
    /// for an arriving formation, returns whether it has arrived.
    fn steer(&mut self, f: &mut Formation, profile: &Profile) -> bool {
        if f.state == FormationState::WaitingForPath && f.path.is_empty() && f.field.is_none() {
            // Waiting for its first path from where it stood: the members stay where they are.
            return false;
        }
        let slots = self.slots(f, profile);
        let corridor = self.corridor(f, profile);
        // Take the field out of the cache for the loop over members (it goes back after).
        let field = match self.field_for(f, profile) {
            Some(_) => self.derived.fields.remove(&f.id),
            None => None,
        };
        let grid = self.nav.grid();
        let cell_size = grid.cell_size();
        let mut all_there = true;
        let mut remaining: u64 = 0;
        for (k, &id) in f.members.iter().enumerate() {
            let Some(u) = self.units.get(id) else { continue };
            let Some(pass) = self.nav.class_nav(u.class).map(|c| c.pass_map()) else { continue };
            let (num, den) = RUN_MULTIPLIER;
            let budget = raw(u.speed) * i128::from(self.settings.turn_ms) * num / (1000 * den);
            let field = field.as_ref().map(|c| &c.field);
            let slot = on_map(grid, slots[k]);
            let target = slot_target(field, pass, grid, slot);
            let distance = length(sub(target, u.pos));
            all_there &= distance <= raw(ARRIVE_DISTANCE);
            remaining = remaining.saturating_add(distance.min(1 << 32) as u64);
            let waypoints = if distance == 0 { Vec::new() } else { member_waypoints(field, pass, grid, u.pos, target, budget) };
            let waypoints: Vec<WorldPos> =
                waypoints.into_iter().map(|p| crate::motion::off_grid_lines(corridor.clamp(p), cell_size)).collect();
            if u.waypoints() != waypoints.as_slice() {
                let unit = self.units.get_mut(id).expect("looked up above");
                unit.set_waypoints(waypoints);
            }
        }
        if let Some(cached) = field {
            self.derived.fields.insert(f.id, cached);
        }
        if f.state != FormationState::Arriving {
            return false;
        }
        f.arriving_turns = f.arriving_turns.saturating_add(1);
        f.stalled = if remaining < f.remaining { 0 } else { f.stalled.saturating_add(1) };
        f.remaining = remaining;
        all_there || f.stalled >= ARRIVE_STALL_TURNS || f.arriving_turns >= ARRIVE_MAX_TURNS
    }

    /// Checks the formations' invariants; `Err` names the first one broken.
    pub(super) fn check_formations(&self) -> Result<(), String> {
        let mut seen = vec![false; self.units.slots().len()];
        for (&id, f) in self.formations.iter() {
            let what = format!("formation {}", id.0);
            if f.id != id || id.0 >= self.formations.next() {
                return Err(format!("{what}: stored under the wrong id, or not yet handed out"));
            }
            if f.members.is_empty() || f.members.len() > MAX_MEMBERS {
                return Err(format!("{what}: {} members", f.members.len()));
            }
            for &m in &f.members {
                let unit = self.unit(m).ok_or_else(|| format!("{what}: member {m:?} is not a live unit"))?;
                if unit.owner != f.owner {
                    return Err(format!("{what}: member {m:?} belongs to player {}", unit.owner));
                }
                let slot = &mut seen[m.index as usize];
                if *slot {
                    return Err(format!("{what}: member {m:?} is in two formations, or twice in one"));
                }
                *slot = true;
                if f.is_active() && (unit.state != UnitState::Moving || !unit.orders.is_empty() || unit.detour != 0) {
                    return Err(format!("{what}: member {m:?} of a moving formation has orders of its own or is not walking"));
                }
            }
            if (f.state == FormationState::WaitingForPath) != self.formations.requests().contains(&id) {
                return Err(format!("{what}: waits for a path nobody will compute, or has a request it does not wait for"));
            }
            let needs_path = match f.state {
                FormationState::Following | FormationState::Finalising => 1,
                FormationState::Turning => 2,
                _ => 0,
            };
            if f.path.len() < needs_path || (f.state == FormationState::WaitingForPath && f.goal.is_none()) {
                return Err(format!("{what}: its state {:?} needs a path or a goal it does not have", f.state));
            }
            if f.facing.x == Fixed::ZERO && f.facing.z == Fixed::ZERO {
                return Err(format!("{what}: faces nowhere"));
            }
        }
        let mut requests = self.formations.requests().to_vec();
        requests.sort_unstable();
        requests.dedup();
        if requests.len() != self.formations.requests().len() {
            return Err("a formation is queued twice for a path".into());
        }
        Ok(())
    }

    /// Takes the formations of a snapshot, checking every value a command could not have made.
    pub(super) fn load_formations(&mut self, formations: Vec<Formation>, requests: Vec<FormationId>, next: u32) -> Result<(), String> {
        self.formations = FormationStore::loaded(requests, next);
        let grid = self.nav.grid();
        // Formation positions stay near the map (they move toward goals on it), but the map itself
        // may be larger than the coordinate limit of the input formats: bound them by both.
        let extent = Fixed::from_bits(grid.cell_size().to_bits().saturating_mul(i64::from(grid.width().max(grid.height()))));
        let limit = pathing::decimal::WORLD_LIMIT.saturating_add(extent);
        let in_limit = |p: &WorldPos| p.x.abs() <= limit && p.z.abs() <= limit;
        for f in formations {
            let what = format!("formation {}", f.id.0);
            if self.formations.contains_key(&f.id) {
                return Err(format!("{what}: stored twice"));
            }
            let facing_ok = f.facing.x.abs() <= Fixed::ONE && f.facing.z.abs() <= Fixed::ONE;
            if !in_limit(&f.pos) || !in_limit(&f.from) || !f.path.iter().all(in_limit) || !facing_ok {
                return Err(format!("{what}: a position beyond the world limit, or a facing longer than one"));
            }
            if f.goal.is_some_and(|g| matches!(g, GoalSpec::Range { .. }) || self.check_order(&g).is_err()) {
                return Err(format!("{what}: its goal is out of range or off the map"));
            }
            if let Some(inputs) = &f.field {
                let full = CellRect::full(grid.width(), grid.height());
                let on_grid = inputs.region.intersect(&full) == inputs.region
                    && u32::from(inputs.goal.i) < grid.width()
                    && u32::from(inputs.goal.j) < grid.height();
                if !on_grid || !in_limit(&inputs.point) {
                    return Err(format!("{what}: its flow field lies off the grid"));
                }
            }
            self.formations.insert(f.id, f);
        }
        Ok(())
    }
}

/// Resets the arrival counters and enters [`FormationState::Arriving`].
fn enter_arriving(f: &mut Formation) {
    f.state = FormationState::Arriving;
    f.arriving_turns = 0;
    f.stalled = 0;
    f.remaining = u64::MAX;
}

/// One turn of turning round `path[0]` (step 3 of the module documentation).
fn turn(f: &mut Formation, d: i128, width: Fixed, depth: Fixed) {
    let (Some(&pivot), Some(&next)) = (f.path.first(), f.path.get(1)) else {
        f.state = FormationState::Finalising;
        return;
    };
    let Some(goal) = unit(sub(next, pivot)) else {
        // A zero-length segment: nothing to turn to.
        f.path.remove(0);
        f.from = pivot;
        f.state = FormationState::Following;
        return;
    };
    let (facing, g) = (vec_raw(f.facing), vec_raw(goal));
    let (c_fg, d_fg) = (cross(facing, g), dot(facing, g));
    let radius = length(sub(f.pos, pivot)) + length((raw(width), raw(depth))) / 2;
    let angle = ((d << 16) / radius.max(1)).clamp(1, i128::from(QUARTER_PI_RAW));
    let step = unit_vector_radians(Fixed::from_bits(angle as i64));
    let (c, s) = (raw(step.x), raw(step.z));
    let offset = sub(f.pos, pivot);
    if d_fg >= c << 16 {
        // Within one step of the new direction: the rotation that takes the facing onto it.
        let rotated = ((offset.0 * d_fg - offset.1 * c_fg).div_euclid(1 << 32), (offset.0 * c_fg + offset.1 * d_fg).div_euclid(1 << 32));
        f.pos = moved(pivot, rotated);
        f.facing = goal;
        f.from = pivot;
        f.path.remove(0);
        f.state = FormationState::Following;
        f.waited = 0;
        return;
    }
    // Anticlockwise when the new direction is to the left (or exactly behind), else clockwise.
    let s = if c_fg < 0 { -s } else { s };
    f.pos = moved(pivot, rotate(offset, c, s));
    if let Some(facing) = unit(rotate(facing, c, s)) {
        f.facing = facing;
    }
}

/// One turn of finalising: straight towards the last waypoint; there, arriving.
fn finalise(f: &mut Formation, d: i128) {
    let Some(&end) = f.path.last() else {
        enter_arriving(f);
        return;
    };
    let to_end = sub(end, f.pos);
    if length(to_end) <= d {
        f.pos = end;
        f.from = end;
        f.path.clear();
        enter_arriving(f);
    } else {
        f.pos = moved(f.pos, with_length(to_end, d));
    }
}

/// The path from `pos` up to [`FIELD_AHEAD`] along it: the waypoints within that distance and the
/// point at exactly that distance, or all of them when the path is shorter (`true`: the last
/// point is the path's end).
fn field_points(pos: WorldPos, path: &[WorldPos]) -> (Vec<WorldPos>, bool) {
    let ahead = raw(FIELD_AHEAD);
    let mut out = Vec::new();
    let mut travelled = 0i128;
    let mut from = pos;
    for &p in path {
        let v = sub(p, from);
        let l = length(v);
        if travelled + l >= ahead {
            let rest = ahead - travelled;
            out.push(if rest >= l { p } else { moved(from, with_length(v, rest)) });
            let end = rest >= l && out.len() == path.len();
            return (out, end);
        }
        travelled += l;
        out.push(p);
        from = p;
    }
    (out, true)
}

/// A position clamped onto the grid (strictly inside it).
fn on_map(grid: &pathing::NavGrid, p: WorldPos) -> WorldPos {
    let s = raw(grid.cell_size());
    let clamp = |v: Fixed, n: u32| Fixed::from_bits(raw(v).clamp(1, i128::from(n) * s - 1) as i64);
    WorldPos::new(clamp(p.x, grid.width()), clamp(p.z, grid.height()))
}

/// Where a member heads for its slot: the slot, or, when its navcell is impassable for the
/// member's class or off the field, the centre of the nearest navcell the field reaches.
fn slot_target(field: Option<&FlowField>, pass: &PassMap, grid: &pathing::NavGrid, slot: WorldPos) -> WorldPos {
    let cell = grid_navcell(grid, slot);
    let Some(field) = field else { return slot };
    if pass.is_passable(cell) && field.distance(cell).is_some() {
        return slot;
    }
    match field.nearest_reachable(cell) {
        Some(near) => centre(near, grid.cell_size()),
        None => slot,
    }
}

/// A member's waypoints towards `target`: straight there when the line is clear, else along the
/// field (see the module documentation).
fn member_waypoints(
    field: Option<&FlowField>,
    pass: &PassMap,
    grid: &pathing::NavGrid,
    pos: WorldPos,
    target: WorldPos,
    budget: i128,
) -> Vec<WorldPos> {
    if pathing::collide::segment_clear(pass, pos, target) {
        return vec![target];
    }
    let Some(field) = field else { return vec![target] };
    let cell_size = grid.cell_size();
    let mut cell = grid_navcell(grid, pos);
    match field.direction(pos) {
        None | Some((0, 0)) => return vec![target],
        Some((dx, dz)) if field.distance(cell).is_none() => {
            // Off the field: straight for the nearest navcell on it.
            let i = (i32::from(cell.i) + dx).clamp(0, i32::from(u16::MAX)) as u16;
            let j = (i32::from(cell.j) + dz).clamp(0, i32::from(u16::MAX)) as u16;
            return vec![centre(Navcell::new(i, j), cell_size)];
        }
        Some(_) => {}
    }
    let steps = ((budget / raw(cell_size).max(1)) as usize + 2).min(STEER_STEPS);
    let mut chain = Vec::with_capacity(steps);
    for _ in 0..steps {
        let Some(next) = field.next(cell) else { break };
        chain.push(centre(next, cell_size));
        cell = next;
    }
    if chain.is_empty() {
        return vec![target];
    }
    // From the farthest point of the chain in sight (the first is always: a legal step of the
    // field from the member's own navcell).
    let first = (1..chain.len()).rev().find(|&k| pathing::collide::segment_clear(pass, pos, chain[k])).unwrap_or(0);
    chain.split_off(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_points_stop_at_the_distance_ahead() {
        let p = |x: i32, z: i32| WorldPos::from_int(x, z);
        // 30 m to the first waypoint, then 20 m more: the point 40 m along is 10 m past it.
        let (points, end) = field_points(p(0, 0), &[p(30, 0), p(30, 20), p(60, 20)]);
        assert_eq!(points, vec![p(30, 0), p(30, 10)]);
        assert!(!end);
        // A shorter path: all of it, ending at its end.
        let (points, end) = field_points(p(0, 0), &[p(10, 0), p(10, 10)]);
        assert_eq!(points, vec![p(10, 0), p(10, 10)]);
        assert!(end);
        // Exactly at the distance, the last waypoint: the end.
        assert_eq!(field_points(p(0, 0), &[p(40, 0)]), (vec![p(40, 0)], true));
        assert_eq!(field_points(p(0, 0), &[]), (vec![], true));
    }
}
