//! The path phase of a turn: pending requests, long-range and short-range, computed in parallel
//! when the world has worker threads and applied in request order, so that the outcome never
//! depends on the thread count.
//!
//! # What a unit plans for
//!
//! A unit's goal is read from its current order as the world is now ([`World::order_goal`]):
//! fixed goals (point, circle, square) as they are; a range order from where its target stands,
//! with 0 A.D.'s range constraints (ε = [`RANGE_EPSILON`]; docs/motion-rules.md, "Range orders"):
//!
//! - a unit target of radius `r₂`, for a mover of radius `r₁`: the circle of radius
//!   `max + r₁ + r₂ + ε` around it, and for a minimum range the inverted circle of radius
//!   `min + r₁ + r₂ + ε`;
//! - an obstruction target (a building, possibly rotated): its square grown on every side by
//!   `max + R + ε`, and the inverted square grown by `min + R + ε`, where `R` is the distance the
//!   rasterization blocks round that square for the mover's class (its clearance, or more for a
//!   square thinner than three navcells: docs/pathfinding-rules.md, "Narrow obstructions"). Growing
//!   by the clearance alone left a thin fence's goal band on blocked navcells, and the unit walked
//!   round to the fence's end.
//!
//! - the order's [`RangeKind`] shapes the goal against an obstruction: `Melee` is the grown square
//!   above; `Ranged` is the circle round the square's centre of radius `min(hw, hh) + max + R + ε`,
//!   the largest circle round the centre wholly within the range (its minimum range stays the
//!   inverted square); `Build` is the grown square with the range raised to at least `s/2` (min)
//!   and `s` (max), `s` the navcell size, so a builder ends strictly outside the footprint grown by
//!   `R + s/2`, where foundation dispersal would move it.
//!
//! A unit already in its band is done; a unit inside its minimum range retreats by a short-range
//! path to the inverted goal (as in 0 A.D., minimum ranges are small enough for the short-range
//! pathfinder, which does not care whether it starts inside the goal); otherwise it plans a
//! long-range path to the maximum-range goal. A target that is gone fails the order.
//!
//! # Short-range requests
//!
//! A unit blocked by standing units asks for a detour ([`PathRequest::short`]): a short-range path
//! ([`pathing::short_range`]) in a box of half-size `short_range + short_range_step × (blocked
//! turns − 1)` (capped) around it, to a circle of radius `min(rejoin_radius, distance / 2)` around
//! its next long-range waypoint, or to its order's goal when that waypoint is the last. The
//! obstacles are the standing units (every unit that is not walking) whose centres lie within
//! `influence` of the straight line from the unit to that target, each its core square (radius ×
//! `core_fraction`, the same core that blocks movement, so a planned detour can be walked). When
//! those units block the only way the search is retried without them (docs/motion-rules.md, "Blocked units"): the
//! unit walks up to them and nudges them aside. When the goal itself is taken by a standing unit
//! the unit settles instead, walking as near as it can and ending its order there (a crowd ordered
//! to one point gathers around it rather than jostling for it).

use pathing::collide::{UnitSquare, point_in_square};
use pathing::short_range::{ShortPartial, ShortQuery, ShortScratch, ShortStatus, find_short_path};

use super::*;
use crate::geom::{distance_raw, off_grid_lines, within_of_segment};
use crate::motion::UnitIndex;
use pathing::GoalShape;

/// The ε of 0 A.D.'s range constraints: 1/8 m (docs/motion-rules.md, "Range orders").
pub const RANGE_EPSILON: Fixed = Fixed::from_bits(1 << 13);

/// One search workspace for each of `threads` worker threads (at least one, which also serves the
/// calling thread), indexed by the worker's index in its pool.
pub(crate) fn workspaces(threads: usize) -> Vec<std::sync::Mutex<Workspace>> {
    (0..threads.max(1)).map(|_| std::sync::Mutex::new(Workspace::default())).collect()
}

/// One worker's search workspace, reused across queries and turns (never hashed or saved).
#[derive(Debug, Default)]
pub(crate) struct Workspace {
    search: SearchScratch,
    path: Path,
    short: ShortScratch,
    short_out: Vec<WorldPos>,
}

impl Workspace {
    /// The long-range scratch and path, for a held-passage search (`world/held.rs`).
    pub(super) fn held_parts(&mut self) -> (&mut SearchScratch, &mut Path) {
        (&mut self.search, &mut self.path)
    }
}

/// What a unit's current order asks of the pathfinders.
#[derive(Clone, Copy, Debug)]
pub(crate) enum OrderGoal {
    /// Plan to this goal; `anchor` is the exact point of a point goal; `short` for a minimum-range
    /// retreat, which the short-range pathfinder plans.
    Plan { goal: Goal, anchor: Option<WorldPos>, short: bool },
    /// In range already: the order is done.
    Done,
    /// The target is gone: the order fails.
    Gone,
}

/// A long-range search to make.
pub(super) struct LongJob {
    pub(super) class: PassClass,
    pub(super) pos: WorldPos,
    pub(super) cell: Navcell,
    pub(super) goal: Goal,
    /// The exact point of a point goal, off navcell borders.
    pub(super) anchor: Option<WorldPos>,
}

/// A short-range search to make.
struct ShortJob {
    class: PassClass,
    pos: WorldPos,
    radius: Fixed,
    goal: Goal,
    range: Fixed,
    squares: Vec<UnitSquare>,
    /// The goal is the order's: the path ends the order.
    final_leg: bool,
    /// The goal is taken by a standing unit: no retry without the units.
    occupied: bool,
    /// The long-range waypoints the detour leads back to.
    keep: Vec<WorldPos>,
}

enum Job {
    Long(LongJob),
    Short(ShortJob),
    /// Decided without a search.
    Settled(OrderGoal),
    /// A formation's path, to be generalised for its size.
    Formation(super::formations::FormationJob),
    /// A long-range path round standing units of other players (`world/held.rs`).
    Held(super::held::HeldJob),
}

enum Outcome {
    Long(PathStatus, Vec<WorldPos>),
    Short {
        status: ShortStatus,
        waypoints: Vec<WorldPos>,
        final_leg: bool,
        occupied: bool,
        keep: Vec<WorldPos>,
        /// Searches made (1 or 2) and vertices they expanded, for [`PathStats`].
        searches: u32,
        expanded: u64,
    },
    Settled(OrderGoal),
    /// A formation's generalised path, its start first.
    Formation(PathStatus, Vec<WorldPos>),
    /// A held-passage search's outcome: a way round when complete (`world/held.rs`).
    Held(PathStatus, Vec<WorldPos>),
    /// No search could be made (cannot happen for a validated unit and goal).
    Failed,
}

impl World {
    /// What `unit`'s current order asks for, read from the world as it is now (see the module
    /// documentation). A unit without an order plans to where it stands: an escape, if it is on
    /// impassable navcells.
    pub(crate) fn order_goal(&self, unit: &Unit) -> OrderGoal {
        let here =
            || OrderGoal::Plan { goal: Goal::point(unit.pos).expect("units stand on the map"), anchor: Some(unit.pos), short: false };
        let Some(order) = unit.orders.first() else { return here() };
        let GoalSpec::Range { target, min, max, kind } = *order else {
            return match goal_of(order) {
                Some(goal) => {
                    OrderGoal::Plan { goal, anchor: matches!(order, GoalSpec::Point(_)).then(|| order.anchor()).flatten(), short: false }
                }
                None => OrderGoal::Gone,
            };
        };
        let grow = |by: Fixed| by + RANGE_EPSILON;
        let (inner, outer) = match target {
            Target::Unit(id) => {
                let Some(other) = self.unit(id).filter(|o| o.id != unit.id) else { return OrderGoal::Gone };
                let reach = unit.radius + other.radius;
                let inner = (min > Fixed::ZERO).then(|| Goal::inverted_circle(other.pos, grow(min + reach)));
                (inner.transpose(), Goal::circle(other.pos, grow(max + reach)))
            }
            Target::Obstruction(id) => {
                let Some(o) = self.nav.obstructions().get(&id) else { return OrderGoal::Gone };
                let sq = o.square;
                let r = self.obstruction_reach(unit, &sq);
                let (min, max) = match kind {
                    // Clear of the dispersal zone (the footprint grown by R + s/2), at most a
                    // navcell beyond it.
                    RangeKind::Build => {
                        let s = self.nav.grid().cell_size();
                        (min.max(Fixed::from_bits(s.to_bits() / 2)), max.max(s))
                    }
                    RangeKind::Melee | RangeKind::Ranged => (min, max),
                };
                let grown = |by: Fixed| Square::new(sq.center(), sq.hw() + grow(by + r), sq.hh() + grow(by + r), sq.u(), sq.v());
                let inner = (min > Fixed::ZERO).then(|| grown(min).map(Goal::inverted_square));
                let outer = match kind {
                    // The largest circle round the centre that lies wholly within the range.
                    RangeKind::Ranged => Goal::circle(sq.center(), sq.hw().min(sq.hh()) + grow(max + r)),
                    RangeKind::Melee | RangeKind::Build => grown(max).map(Goal::square),
                };
                (inner.transpose(), outer)
            }
        };
        let (Ok(inner), Ok(outer)) = (inner, outer) else { return OrderGoal::Gone };
        if let Some(inner) = inner
            && !inner.contains_point(unit.pos)
        {
            return OrderGoal::Plan { goal: inner, anchor: None, short: true };
        }
        if outer.contains_point(unit.pos) { OrderGoal::Done } else { OrderGoal::Plan { goal: outer, anchor: None, short: false } }
    }

    /// `R`, the distance from an obstruction square within which the rasterization may block
    /// navcells for `unit`'s class: its clearance, or more for a square thinner than three navcells
    /// (docs/pathfinding-rules.md, "Narrow obstructions"). Range orders grow their target by it
    /// rather than by the clearance alone, so the goal always reaches passable navcells beside the
    /// target.
    fn obstruction_reach(&self, unit: &Unit, square: &Square) -> Fixed {
        let cell_size = self.nav.grid().cell_size();
        let clearance = self.nav.classes().get(unit.class).map_or(Fixed::ZERO, |c| c.whole_clearance(cell_size));
        pathing::raster::effective_radius(square, clearance, cell_size)
    }

    /// The job for one request, read from the world before the parallel phase.
    fn job_for(&self, request: &PathRequest, stationary: &UnitIndex) -> Option<Job> {
        let unit = self.unit(request.unit)?;
        let cell_size = self.nav.grid().cell_size();
        let plan = self.order_goal(unit);
        let OrderGoal::Plan { goal, anchor, short } = plan else { return Some(Job::Settled(plan)) };
        let long_job = || LongJob {
            class: unit.class,
            pos: unit.pos,
            cell: self.navcell_of(unit.pos),
            goal,
            anchor: anchor.map(|a| off_grid_lines(a, cell_size)),
        };
        let long = || Job::Long(long_job());
        // A unit on an impassable navcell (a building placed over it) escapes by the long-range
        // search first, even for a minimum-range retreat or while it waits to search round a held
        // passage: the motion phase asks for a long path again whenever it finds the unit there
        // without an escape, so anything else planned from there would be asked for every turn.
        let stranded = self.nav.class_nav(unit.class).is_some_and(|nav| !nav.pass_map().is_passable(self.navcell_of(unit.pos)));
        if unit.held_searches > 0 && !(request.short || short) && !stranded {
            return Some(Job::Held(self.held_job(unit, long_job(), stationary)));
        }
        if !(request.short || short) || stranded {
            return Some(long());
        }
        let m = &self.settings.motion;
        let long_waypoints = &unit.waypoints()[usize::from(unit.detour).min(unit.waypoints().len())..];
        // The goal of the detour: the order's goal on the last leg (or for a retreat), else a
        // circle around the next long-range waypoint.
        let (goal, final_leg, keep, aim) = match long_waypoints {
            _ if short => (goal, true, Vec::new(), goal.nearest_point(unit.pos)),
            [] => return Some(long()),
            // The long-range path ends short of an unreachable goal: its end is the goal.
            [last] if unit.settle => (Goal::point(*last).ok()?, true, Vec::new(), *last),
            [_] => (goal, true, Vec::new(), goal.nearest_point(unit.pos)),
            [next, ..] => {
                let half = Fixed::from_bits((distance_raw(unit.pos, *next) / 2).min(i128::from(m.rejoin_radius.to_bits())) as i64);
                (Goal::circle(*next, half).ok()?, false, long_waypoints.to_vec(), *next)
            }
        };
        let blocked = i64::from(unit.stalled.saturating_sub(1));
        let range = (m.short_range + m.short_range_step * Fixed::from_num(blocked)).min(m.short_range_max);
        // Standing units near the straight line to the target, as their cores.
        let reach = range + stationary.max_radius();
        let mut squares = Vec::new();
        stationary.for_each_near(unit.pos, reach, |id, pos, core| {
            if id != unit.id && within_of_segment(pos, unit.pos, aim, m.influence) {
                squares.push(UnitSquare { center: pos, half: core });
            }
        });
        let occupied = final_leg && squares.iter().any(|sq| point_in_square(aim, sq, unit.radius));
        Some(Job::Short(ShortJob {
            class: unit.class,
            pos: unit.pos,
            radius: unit.radius,
            goal,
            range,
            squares,
            final_leg,
            occupied,
            keep,
        }))
    }

    /// Computes the oldest pending requests (at most [`Settings::max_paths_per_turn`] long-range
    /// searches and [`MotionSettings::max_short_paths_per_turn`] short-range ones; the rest wait in
    /// order) and applies the results in request order. A long-range request that can share a
    /// search taken this turn (docs/pathfinding-rules.md, "Shared searches") is taken wherever it
    /// stands in the queue and costs no search. Formation requests are long-range requests: they
    /// are taken first, oldest first, from the same budget, computed in the same parallel batch,
    /// and applied after the units' results, in their own request order.
    pub(super) fn compute_paths(&mut self, events: &mut Vec<Event>) {
        let (mut longs, mut shorts) =
            (usize::from(self.settings.max_paths_per_turn), usize::from(self.settings.motion.max_short_paths_per_turn));
        let queued = self.requests.iter().filter(|r| !r.short).count() + self.formations.requests().len();
        self.scratch.scale.max_queue = self.scratch.scale.max_queue.max(u32::try_from(queued).unwrap_or(u32::MAX));
        let n_formations = self.formations.requests().len().min(longs);
        let formation_requests: Vec<crate::formation::FormationId> = self.formations.requests_mut().drain(..n_formations).collect();
        longs -= n_formations;
        let core = |u: &Unit| self.settings.motion.core(u.radius);
        let stationary = UnitIndex::new(self.units().filter(|u| u.state == UnitState::Idle).map(|u| (u.id, u.pos, core(u))).collect());
        // The requests taken this turn, their jobs and, for a request served by another's search
        // (docs/pathfinding-rules.md, "Shared searches"), the index of that request's job.
        let mut requests = Vec::new();
        let mut jobs: Vec<Option<Job>> = Vec::new();
        let mut follows: Vec<Option<usize>> = Vec::new();
        // The jobs of this turn that others may share (searches and the requests sharing them),
        // by class and [`SHARE_RADIUS`] square of their start, each list in request order.
        let mut members: crate::lookup::LookupMap<(PassClass, i64, i64), Vec<usize>> = crate::lookup::LookupMap::with_capacity(64);
        let square = |p: WorldPos| (p.x.to_bits().div_euclid(SHARE_RADIUS.to_bits()), p.z.to_bits().div_euclid(SHARE_RADIUS.to_bits()));
        let pending = std::mem::take(&mut self.requests);
        let mut kept = Vec::with_capacity(pending.len());
        for r in pending {
            if r.short {
                if shorts == 0 {
                    kept.push(r);
                } else {
                    shorts -= 1;
                    jobs.push(self.job_for(&r, &stationary));
                    follows.push(None);
                    requests.push(r);
                }
                continue;
            }
            if longs == 0 && members.is_empty() {
                kept.push(r);
                continue;
            }
            let job = self.job_for(&r, &stationary);
            let sharable = matches!(&job, Some(Job::Long(long)) if self.may_share(long));
            let mut lead = None;
            if let Some(Job::Long(long)) = &job
                && sharable
            {
                // The first member that may lead it, the nine squares round its start taken in a
                // fixed order.
                let (sx, sz) = square(long.pos);
                'find: for dz in -1..=1 {
                    for dx in -1..=1 {
                        for &k in members.get(&(long.class, sx + dx, sz + dz)).map_or(&[][..], Vec::as_slice) {
                            if let Some(Job::Long(other)) = &jobs[k]
                                && self.shares(other, long)
                            {
                                lead = Some(k);
                                break 'find;
                            }
                        }
                    }
                }
            }
            if lead.is_none() {
                if longs == 0 {
                    kept.push(r);
                    continue;
                }
                longs -= 1;
            }
            if let Some(Job::Long(long)) = &job
                && sharable
            {
                let (sx, sz) = square(long.pos);
                match members.get_mut(&(long.class, sx, sz)) {
                    Some(list) => list.push(jobs.len()),
                    None => {
                        members.insert((long.class, sx, sz), vec![jobs.len()]);
                    }
                }
            }
            jobs.push(job);
            follows.push(lead);
            requests.push(r);
        }
        self.requests = kept;
        jobs.extend(formation_requests.iter().map(|&id| self.formation_job(id).map(Job::Formation)));
        follows.resize(jobs.len(), None);
        let nav = &self.nav;
        let motion = self.settings.motion;
        let cell_size = nav.grid().cell_size();
        let run = |ws: &mut Workspace, job: &Option<Job>| -> Outcome {
            match job {
                None => Outcome::Failed,
                Some(Job::Settled(plan)) => Outcome::Settled(*plan),
                Some(Job::Long(job)) => run_long(nav, job, ws).map_or(Outcome::Failed, |(s, w)| Outcome::Long(s, w)),
                Some(Job::Held(job)) => super::held::run_held(nav, job, ws).map_or(Outcome::Failed, |(s, w)| Outcome::Held(s, w)),
                Some(Job::Formation(job)) => match run_long(nav, &job.long, ws) {
                    Some((status, waypoints)) => {
                        let mut points = Vec::with_capacity(waypoints.len() + 1);
                        points.push(job.long.pos);
                        points.extend(waypoints);
                        Outcome::Formation(status, crate::formation::generalise(&points, job.size))
                    }
                    None => Outcome::Failed,
                },
                Some(Job::Short(job)) => {
                    let Some(class_nav) = nav.class_nav(job.class) else { return Outcome::Failed };
                    let map = class_nav.pass_map();
                    let mut query = ShortQuery {
                        start: job.pos,
                        goal: &job.goal,
                        range: job.range,
                        clearance: job.radius,
                        squares: &job.squares,
                        node_budget: motion.short_node_budget,
                    };
                    let first = find_short_path(map, &query, &mut ws.short, &mut ws.short_out);
                    let (mut status, mut searches, mut expanded) = (first.status, 1, u64::from(first.expanded));
                    // Only a search that found no way counts as blocked: one that ran out of box
                    // (a path to the edge of the box towards the goal) or budget found a way.
                    if status == ShortStatus::Partial(ShortPartial::Unreachable) && !job.squares.is_empty() && !job.occupied {
                        // The standing units block the only way: plan through them (they get
                        // nudged aside when the unit reaches them).
                        query.squares = &[];
                        let again = find_short_path(map, &query, &mut ws.short, &mut ws.short_out);
                        (status, searches, expanded) = (again.status, 2, expanded + u64::from(again.expanded));
                    }
                    let waypoints = ws.short_out.iter().map(|&p| off_grid_lines(p, cell_size)).collect();
                    Outcome::Short {
                        status,
                        waypoints,
                        final_leg: job.final_leg,
                        occupied: job.occupied,
                        keep: job.keep.clone(),
                        searches,
                        expanded,
                    }
                }
            }
        };
        let workspaces = &self.scratch.workspaces;
        let with_workspace = |job: &Option<Job>| {
            // Each worker thread has its own slot, so the lock is never contended; a poisoned
            // lock only means a previous query panicked, and the workspace is reset per query.
            let slot = rayon::current_thread_index().unwrap_or(0).min(workspaces.len() - 1);
            let mut guard = workspaces[slot].lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            run(&mut guard, job)
        };
        // A shared request's job waits for its leader's outcome: the first batch skips it.
        let searched = |(job, follow): (&Option<Job>, &Option<usize>)| match follow {
            Some(_) => Outcome::Failed,
            None => with_workspace(job),
        };
        let mut results: Vec<Outcome> = match &self.pool {
            Some(pool) => pool.install(|| {
                use rayon::prelude::*;
                jobs.par_iter().zip(follows.par_iter()).map(searched).collect()
            }),
            None => jobs.iter().zip(follows.iter()).map(searched).collect(),
        };
        // In request order, since a request sharing a search may itself be shared: its lead's
        // outcome is always earlier.
        let mut shared = 0u32;
        for i in 0..jobs.len() {
            let Some(k) = follows[i] else { continue };
            shared += 1;
            results[i] = match (&jobs[i], &jobs[k]) {
                (Some(Job::Long(job)), Some(Job::Long(lead))) => follow_path(nav, job, lead, &results[k]),
                _ => Outcome::Failed,
            };
        }
        self.scratch.path_stats = PathStats::default();
        self.scratch.path_stats.shared = shared;
        self.scratch.scale.shared_paths += u64::from(shared);
        let mut results = results.into_iter().zip(follows);
        for (request, (result, follow)) in requests.iter().zip(results.by_ref()) {
            match &result {
                Outcome::Long(..) | Outcome::Held(..) if follow.is_none() => self.scratch.path_stats.long += 1,
                Outcome::Short { searches, expanded, .. } => {
                    self.scratch.path_stats.short += searches;
                    self.scratch.path_stats.short_expanded += expanded;
                }
                _ => {}
            }
            self.apply_outcome(request.unit, result, events);
        }
        for (&id, (result, _)) in formation_requests.iter().zip(results) {
            let path = match result {
                Outcome::Formation(status, path) => {
                    self.scratch.path_stats.long += 1;
                    if status != PathStatus::Complete && self.formations.contains_key(&id) {
                        events.push(Event::FormationPathPartial { formation: id });
                    }
                    path
                }
                _ => Vec::new(),
            };
            self.apply_formation_path(id, path);
        }
        self.scratch.scale.long_searches += u64::from(self.scratch.path_stats.long);
    }

    /// Whether a long-range job's search may serve others, or be served by another's: a plain
    /// search from a passable navcell (an escape from a blocked one is the unit's own).
    fn may_share(&self, job: &LongJob) -> bool {
        self.nav.class_nav(job.class).is_some_and(|nav| nav.pass_map().is_passable(job.cell))
    }

    /// Whether `job` may take `lead`'s path: the same class, goal and exact goal point, a start
    /// within [`SHARE_RADIUS`] of the leader's on both axes, and the straight line from it to the
    /// leader's start clear on the class's grid.
    fn shares(&self, lead: &LongJob, job: &LongJob) -> bool {
        let near = |a: Fixed, b: Fixed| (i128::from(a.to_bits()) - i128::from(b.to_bits())).abs() <= i128::from(SHARE_RADIUS.to_bits());
        lead.class == job.class
            && lead.goal == job.goal
            && lead.anchor == job.anchor
            && near(lead.pos.x, job.pos.x)
            && near(lead.pos.z, job.pos.z)
            && self.nav.class_nav(job.class).is_some_and(|nav| pathing::collide::segment_clear(nav.pass_map(), job.pos, lead.pos))
    }

    fn apply_outcome(&mut self, id: EntityId, outcome: Outcome, events: &mut Vec<Event>) {
        let Some(unit) = self.units.get_mut(id) else {
            return;
        };
        unit.state = UnitState::Moving;
        match outcome {
            Outcome::Failed | Outcome::Formation(..) | Outcome::Settled(OrderGoal::Gone) => {
                unit.give_up();
                events.push(Event::Failed { unit: unit.id, reason: crate::command::FailReason::NoPath });
            }
            Outcome::Settled(_) => {
                // In range already: the order is done; the next one, if any, plans next turn.
                unit.orders.remove(0);
                unit.clear_waypoints();
                unit.settle = false;
                unit.resume = false;
                events.push(Event::Arrived { unit: unit.id });
                if unit.orders.is_empty() {
                    unit.state = UnitState::Idle;
                } else {
                    unit.state = UnitState::WaitingForPath;
                    self.requests.push(PathRequest::long(id));
                }
            }
            Outcome::Long(status, waypoints) => {
                // A path to the reachable navcell nearest an unreachable goal ends the order
                // when it is walked.
                unit.settle = matches!(status, PathStatus::Partial(pathing::PartialReason::Unreachable)) && !unit.orders.is_empty();
                if unit.settle {
                    events.push(Event::PathPartial { unit: unit.id });
                }
                unit.escape = matches!(status, PathStatus::Partial(pathing::PartialReason::StartImpassable));
                if unit.escape {
                    events.push(Event::Unstuck { unit: unit.id });
                }
                unit.resume = status == PathStatus::Partial(pathing::PartialReason::NodeBudget);
                unit.set_waypoints(waypoints);
            }
            Outcome::Held(status, waypoints) => {
                if status == PathStatus::Complete {
                    // A way round the held passage: take it.
                    unit.resume = false;
                    unit.set_waypoints(waypoints);
                } else {
                    // None: keep the path and wait (docs/motion-rules.md, "Passages held by other
                    // players"); the blocked turns lead to a retry or to giving up.
                    unit.state = UnitState::Blocked(unit.stalled);
                }
            }
            Outcome::Short { status, waypoints, final_leg, occupied, keep, .. } => {
                events.push(Event::Detour { unit: unit.id });
                match status {
                    ShortStatus::Complete if final_leg => {
                        unit.resume = false;
                        unit.set_waypoints(waypoints);
                    }
                    ShortStatus::Partial(ShortPartial::Unreachable) if final_leg && occupied => {
                        // The goal is taken: get as near as the standing units allow, then stop.
                        events.push(Event::PathPartial { unit: unit.id });
                        unit.set_waypoints(waypoints);
                        unit.settle = true;
                    }
                    ShortStatus::Partial(_) if final_leg && !waypoints.is_empty() => {
                        // Part of the way (the box or the budget ran out): walk it, then plan again.
                        unit.resume = true;
                        unit.settle = false;
                        unit.set_waypoints(waypoints);
                    }
                    // A detour (whole, or towards the edge of the box) back to the long path.
                    _ if !final_leg && (status == ShortStatus::Complete || !waypoints.is_empty()) => {
                        let n = waypoints.len();
                        let mut all = waypoints;
                        all.extend(keep);
                        unit.set_detour(all, n);
                    }
                    // No way round within the box: keep the path; the unit stays blocked, and
                    // its blocked turns lead to a long-range replan or to giving up.
                    _ => {}
                }
            }
        }
    }
}

/// How far apart on each axis two units' starts may be for one to take the other's path (docs/pathfinding-rules.md, "Shared searches"). `[Units: metres]`
pub const SHARE_RADIUS: Fixed = Fixed::from_bits(16 << 16);

/// A shared request's path: the lead's waypoints, from the first when the unit sees it, else
/// by the lead's start, which it sees (docs/pathfinding-rules.md, "Shared searches"). A lead
/// without a path (which a validated unit and goal cannot have) leaves the follower without one.
fn follow_path(nav: &NavWorld, job: &LongJob, lead: &LongJob, outcome: &Outcome) -> Outcome {
    let (Outcome::Long(status, waypoints), Some(class_nav)) = (outcome, nav.class_nav(job.class)) else { return Outcome::Failed };
    let sees_first = waypoints.first().is_some_and(|&first| pathing::collide::segment_clear(class_nav.pass_map(), job.pos, first));
    let mut path = Vec::with_capacity(waypoints.len() + 1);
    if !sees_first && lead.pos != job.pos {
        path.push(lead.pos);
    }
    path.extend_from_slice(waypoints);
    Outcome::Long(*status, path)
}

/// One long-range search and its waypoints: the centres of the turning navcells after the unit's
/// own, with the exact goal point in place of the last centre when a point goal lies in that
/// navcell (last-waypoint precision). The unit goes straight from where it stands to
/// the first of them when it can (first-waypoint trimming), else by its own
/// navcell's centre, as the path does (docs/pathfinding-rules.md). Then string pulling: any-angle
/// shortcuts between points that see each other, never touching an impassable navcell. An escape
/// path stays as it is.
fn run_long(nav: &NavWorld, job: &LongJob, ws: &mut Workspace) -> Option<(PathStatus, Vec<WorldPos>)> {
    let class_nav = nav.class_nav(job.class)?;
    let cell_size = nav.grid().cell_size();
    let limits = SearchLimits { node_budget: PATH_NODE_BUDGET };
    let status = pathing::find_path(class_nav, job.cell, &job.goal, &limits, &mut ws.search, &mut ws.path).status;
    let cells = ws.path.waypoints();
    let mut waypoints: Vec<WorldPos> = cells.iter().skip(1).map(|c| centre(*c, cell_size)).collect();
    if let Some(anchor) = job.anchor
        && status == PathStatus::Complete
        && cells.last() == Some(&grid_navcell(nav.grid(), anchor))
    {
        match waypoints.last_mut() {
            Some(last) => *last = anchor,
            None if job.pos != anchor => waypoints.push(anchor),
            None => {}
        }
    }
    if let (Some(&first), Some(&start)) = (waypoints.first(), cells.first())
        && !pathing::collide::segment_clear(class_nav.pass_map(), job.pos, first)
    {
        waypoints.insert(0, centre(start, cell_size));
    }
    if status == PathStatus::Partial(pathing::PartialReason::StartImpassable) {
        return Some((status, waypoints));
    }
    let mut points = vec![job.pos];
    points.extend(waypoints);
    let mut pulled: Vec<WorldPos> = pathing::smoothing::string_pull(class_nav.pass_map(), &points).into_iter().skip(1).collect();
    // A path to a shape ends in the first navcell that touches it, whose centre may lie outside
    // it: end it on the shape's nearest point when that is in reach, so the unit really arrives.
    if job.anchor.is_none() && status == PathStatus::Complete {
        let end = pulled.last().copied().unwrap_or(job.pos);
        if !job.goal.contains_point(end) {
            let nearest = job.goal.nearest_point(end);
            let shifted = off_grid_lines(nearest, cell_size);
            let target = if job.goal.contains_point(shifted) { shifted } else { nearest };
            if pathing::collide::segment_clear(class_nav.pass_map(), end, target) {
                pulled.push(target);
            } else if let Some(inside) = cells.last().and_then(|&cell| point_of_cell_in_goal(&job.goal, cell, cell_size)) {
                // The shape's nearest point lies beyond blocked navcells (beside a thin fence the
                // shape can reach past them only within the last navcell): stop inside that navcell.
                pulled.push(inside);
            }
        }
    }
    Some((status, pulled))
}

/// A point of navcell `cell` (2^-16 m inside its edges) that lies in the goal's circle or square,
/// if the navcell's point nearest the shape's centre is one: for a circle that is every navcell
/// the circle touches; for a square, most of them. `None` for other goals.
fn point_of_cell_in_goal(goal: &Goal, cell: Navcell, cell_size: Fixed) -> Option<WorldPos> {
    let target = match goal.shape() {
        GoalShape::Circle { center, .. } => center,
        GoalShape::Square(square) => square.center(),
        _ => return None,
    };
    let s = cell_size.to_bits();
    let (x0, z0) = (i64::from(cell.i) * s, i64::from(cell.j) * s);
    let clamp = |v: Fixed, lo: i64| Fixed::from_bits(v.to_bits().clamp(lo + 1, lo + s - 1));
    let p = WorldPos::new(clamp(target.x, x0), clamp(target.z, z0));
    goal.contains_point(p).then_some(p)
}

#[cfg(test)]
mod tests {
    use pathing::classes::ClassSet;
    use pathing::terrain::{GridSpec, Terrain};

    use super::*;

    /// A flat, open 64 × 64 m world with `settings`.
    fn open_world(settings: Settings) -> World {
        let terrain = Terrain::flat(16, 16, Fixed::from_num(4), Fixed::from_num(12), Fixed::ZERO).unwrap();
        let desc = WorldDesc::new(GridSpec { width: 64, height: 64, cell_size: Fixed::ONE }, ClassSet::zero_ad_defaults(), terrain);
        World::new(desc, Vec::new(), settings).unwrap()
    }

    /// Spawns `count` units at each point in turn 0 and returns them, group by group.
    fn spawn_groups(world: &mut World, at: &[(i32, i32)], count: u16) -> Vec<Vec<EntityId>> {
        let spawns: Vec<Command> = at
            .iter()
            .enumerate()
            .map(|(seq, &(x, z))| Command {
                turn: 0,
                player: crate::PlayerId(1),
                seq: seq as u32,
                kind: CommandKind::Spawn {
                    class: PassClass::of(0),
                    at: WorldPos::from_int(x, z),
                    count,
                    radius: Fixed::ONE / 2,
                    speed: Fixed::from_num(6),
                    turn_rate: None,
                },
            })
            .collect();
        world.step(&spawns);
        let ids: Vec<EntityId> = world.units().map(|u| u.id).collect();
        assert_eq!(ids.len(), at.len() * usize::from(count), "every unit placed");
        ids.chunks(usize::from(count)).map(<[EntityId]>::to_vec).collect()
    }

    fn order(turn: u32, seq: u32, units: &[EntityId], x: i32, z: i32) -> Command {
        Command {
            turn,
            player: crate::PlayerId(1),
            seq,
            kind: CommandKind::Move { units: units.to_vec(), goal: GoalSpec::Point(WorldPos::from_int(x, z)), queue: false },
        }
    }

    #[test]
    fn a_group_ordered_together_shares_one_search_and_walks_at_once() {
        let mut world = open_world(Settings::default());
        let groups = spawn_groups(&mut world, &[(8, 8)], 20);
        world.step(&[order(1, 0, &groups[0], 56, 56)]);
        assert_eq!(world.path_stats().long, 1, "one search");
        assert_eq!(world.path_stats().shared, 19, "the other 19 share it");
        // The exact point, kept off grid lines as every waypoint is.
        let goal = off_grid_lines(WorldPos::from_int(56, 56), Fixed::ONE);
        for id in &groups[0] {
            let unit = world.unit(*id).unwrap();
            assert_eq!(unit.waypoints().last(), Some(&goal), "unit {id:?} ends at the order's point");
        }
        let stats = world.scale_stats();
        assert_eq!(stats.latency, vec![20], "all 20 took their first step in the turn of the order");
        assert_eq!((stats.waiting, stats.long_searches, stats.shared_paths, stats.max_queue), (0, 1, 19, 20));
    }

    #[test]
    fn latency_counts_the_turns_a_group_waits_for_the_search_budget() {
        let mut world = open_world(Settings { max_paths_per_turn: 1, ..Settings::default() });
        let groups = spawn_groups(&mut world, &[(8, 8), (8, 48)], 5);
        world.step(&[order(1, 0, &groups[0], 56, 8), order(1, 1, &groups[1], 56, 48)]);
        assert_eq!((world.path_stats().long, world.path_stats().shared), (1, 4), "the first group's search only");
        let stats = world.scale_stats();
        assert_eq!((stats.latency.clone(), stats.waiting), (vec![5, 5], 5), "the second group still waits, one turn so far");
        world.step(&[]);
        let stats = world.scale_stats();
        assert_eq!(stats.latency, vec![5, 5], "the second group walked one turn after its order");
        assert_eq!((stats.waiting, stats.long_searches, stats.shared_paths, stats.max_queue), (0, 2, 8, 10));
        assert_eq!((stats.latency_quantile(500), stats.latency_quantile(990), stats.latency_quantile(1000)), (Some(0), Some(1), Some(1)));
        // Not state: a loaded world counts from zero and keeps the hash.
        let loaded = World::load(&world.save()).unwrap();
        assert_eq!(loaded.state_hash(), world.state_hash());
        assert_eq!(loaded.scale_stats(), ScaleStats::default());
    }
}
