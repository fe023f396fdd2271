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
//!
//! # Shared searches
//!
//! Units ordered together share one long-range search (docs/pathfinding-rules.md, "Shared
//! searches"): a request takes the path of an earlier request of the turn (its lead) with the same
//! class, goal and exact goal point whose start is near and in sight. A unit whose current order
//! was given to it and others by one command ([`Unit::order_group`]) then ends at its own point
//! ([`spread_end`]): the goal plus its start offset from the first unit of its command served by
//! the same search, pulled towards the goal where that point is blocked, off the map or not in
//! straight sight of the path's previous point, so a compact group arrives in its shape instead of
//! piling on one point. Its order is rewritten to that point, so that any later plan goes there
//! too. Units of separate commands that share a search end at the common goal.

use pathing::collide::{UnitSquare, point_in_square};
use pathing::short_range::{ShortPartial, ShortQuery, ShortStatus, find_short_path};

use super::jobs::{FormationJob, HeldJob, LongJob, ShortJob, Workspace, search_work};
use super::*;
use crate::geom::{distance_raw, off_grid_lines, within_of_segment};
use crate::motion::UnitIndex;
use pathing::GoalShape;

/// The ε of 0 A.D.'s range constraints: 1/8 m (docs/motion-rules.md, "Range orders").
pub const RANGE_EPSILON: Fixed = Fixed::from_bits(1 << 13);

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

#[derive(Clone)]
enum Job {
    Long(LongJob),
    Short(ShortJob),
    /// Decided without a search.
    Settled(OrderGoal),
    /// A formation's path, to be generalised for its size.
    Formation(FormationJob),
    /// A long-range path round standing units of other players (`world/held.rs`).
    Held(HeldJob),
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
    /// A held-passage search's outcome: a way round when complete (`world/held.rs`); else the
    /// short-range search round the exact cores, when it found a way or the goal is taken.
    Held(PathStatus, Vec<WorldPos>, Option<Box<Outcome>>),
    /// No search could be made (cannot happen for a validated unit and goal).
    Failed,
}

/// Most long-range searches the path phase reads ahead of the last one whose work it has counted,
/// when the world has worker threads: two per thread, up to this many (4 on two threads); the
/// threads compute them meanwhile, and those after a turn's cutoff are dropped (at most this
/// many in a turn). On one thread none is read ahead, so none is computed only to be dropped.
/// The cutoff depends on neither.
pub const SEARCH_CHUNK: usize = 16;

/// A long-range request, in the order the path phase takes them.
enum Candidate {
    Formation(crate::formation::FormationId),
    /// The request at this place in the queue.
    Unit(usize),
}

/// A long-range request taken this turn.
struct Taken {
    /// Its place in the candidates.
    candidate: usize,
    job: Option<Job>,
    /// The taken request whose search it shares.
    lead: Option<usize>,
    /// Its class and [`SHARE_RADIUS`] square, when others may share its path.
    key: Option<(PassClass, i64, i64)>,
    outcome: Outcome,
    /// Its search's work ([`search_work`] plus [`SEARCH_BASE_WORK`]; 0 for no search).
    work: u64,
}

/// The long-range requests a turn takes, in order, and those others may share by class and
/// [`SHARE_RADIUS`] square of their start, each list in request order.
struct TakenSet {
    list: Vec<Taken>,
    members: crate::lookup::LookupMap<(PassClass, i64, i64), Vec<usize>>,
    member_count: usize,
}

impl Default for TakenSet {
    fn default() -> Self {
        Self { list: Vec::new(), members: crate::lookup::LookupMap::with_capacity(64), member_count: 0 }
    }
}

impl TakenSet {
    /// Takes candidate `candidate` with its job: a search, or with `lead` a sharer.
    fn push(&mut self, candidate: usize, job: Option<Job>, lead: Option<usize>, sharable: bool) {
        let key = match &job {
            Some(Job::Long(long)) if sharable => {
                let (sx, sz) = share_square(long.pos);
                Some((long.class, sx, sz))
            }
            _ => None,
        };
        if let Some(key) = key {
            match self.members.get_mut(&key) {
                Some(list) => list.push(self.list.len()),
                None => {
                    self.members.insert(key, vec![self.list.len()]);
                }
            }
            self.member_count += 1;
        }
        self.list.push(Taken { candidate, job, lead, key, outcome: Outcome::Failed, work: 0 });
    }

    /// Forgets the requests after the first `len` (the last taken first, so each is the last of
    /// its square's list); returns how many of them were searches computed.
    fn truncate(&mut self, len: usize) -> u32 {
        let mut searches = 0;
        while self.list.len() > len {
            let Some(t) = self.list.pop() else { break };
            searches += u32::from(t.lead.is_none() && t.work > 0);
            if let Some(list) = t.key.and_then(|key| self.members.get_mut(&key)) {
                list.pop();
                self.member_count -= 1;
            }
        }
        searches
    }
}

/// The jobs of the path phase, posted in order by the thread that reads the queue and taken in
/// that order by every thread of the pool, and their results by slot (not state: which thread
/// computes a job never changes its result).
#[derive(Default)]
struct Board {
    queue: std::sync::Mutex<std::collections::VecDeque<(usize, Option<Job>)>>,
    /// Wakes a helper thread asleep on an empty queue: a job was posted, or the board closed.
    posted: std::sync::Condvar,
    results: std::sync::Mutex<Vec<Option<(Outcome, u64)>>>,
    /// No more jobs: the threads that wait for them return.
    closed: std::sync::atomic::AtomicBool,
    /// A job that panicked on another thread, for the reading thread to raise.
    panic: std::sync::Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

/// A job's outcome and work.
type JobResult = (Outcome, u64);

/// How many times a helper thread of the path phase finds no job before it sleeps until one is
/// posted: about 10–50 µs of spinning, which covers the gap between two jobs the reading thread
/// posts in a row, while a helper with nothing to do for the rest of the phase (few searches this
/// turn) sleeps instead of taking a core for the phase's length. Which thread computes a job never
/// changes its result, so this changes only time.
pub const HELPER_SPINS: u32 = 1024;

fn locked<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned lock only means a job panicked, which is raised on the reading thread.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Board {
    fn post(&self, slot: usize, job: Option<Job>) {
        locked(&self.queue).push_back((slot, job));
        self.posted.notify_one();
    }

    fn close(&self) {
        self.closed.store(true, std::sync::atomic::Ordering::Release);
        // Under the queue's lock, so a helper that found the board open and is going to sleep is
        // asleep by now and hears it.
        let _queue = locked(&self.queue);
        self.posted.notify_all();
    }

    /// Computes the next posted job, if any.
    fn compute_one(&self, compute: &(dyn Fn(&Option<Job>) -> JobResult + Sync)) -> bool {
        let Some((slot, job)) = locked(&self.queue).pop_front() else { return false };
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| compute(&job))) {
            Ok(result) => {
                let mut results = locked(&self.results);
                if results.len() <= slot {
                    results.resize_with(slot + 1, || None);
                }
                results[slot] = Some(result);
            }
            Err(payload) => {
                *locked(&self.panic) = Some(payload);
                self.close();
            }
        }
        true
    }

    /// A helper thread: computes posted jobs until the board is closed. While there are none it
    /// spins a little (now and then yielding), to be awake for a job posted at once, then sleeps
    /// until one is posted or the board closes, so an idle helper takes no core from the game's
    /// other threads ([`HELPER_SPINS`]).
    fn work(&self, spins: u32, compute: &(dyn Fn(&Option<Job>) -> JobResult + Sync)) {
        let mut idle = 0u32;
        while !self.closed.load(std::sync::atomic::Ordering::Acquire) {
            if self.compute_one(compute) {
                idle = 0;
            } else if idle < spins {
                idle = idle.saturating_add(1);
                if idle.is_multiple_of(64) {
                    std::thread::yield_now();
                } else {
                    std::hint::spin_loop();
                }
            } else {
                let queue = locked(&self.queue);
                if queue.is_empty() && !self.closed.load(std::sync::atomic::Ordering::Acquire) {
                    // A poisoned lock only means a job panicked, which is raised on the reading thread.
                    drop(self.posted.wait(queue).unwrap_or_else(std::sync::PoisonError::into_inner));
                }
            }
        }
    }

    /// The result of the job posted at `slot`, computing posted jobs while it is not there.
    fn wait(&self, slot: usize, compute: &(dyn Fn(&Option<Job>) -> JobResult + Sync)) -> JobResult {
        loop {
            if let Some(result) = locked(&self.results).get_mut(slot).and_then(Option::take) {
                return result;
            }
            if let Some(payload) = locked(&self.panic).take() {
                std::panic::resume_unwind(payload);
            }
            if !self.compute_one(compute) {
                std::hint::spin_loop();
            }
        }
    }

    /// How many jobs at slots `from` and after were computed.
    fn computed_from(&self, from: usize) -> u32 {
        let results = locked(&self.results);
        u32::try_from(results.iter().skip(from).filter(|r| r.is_some()).count()).unwrap_or(u32::MAX)
    }
}

/// Closes the board when the reading thread is done with it, also when it unwinds, so that the
/// helper threads return.
struct Finish<'a>(&'a Board);

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// The [`SHARE_RADIUS`] square of a start.
fn share_square(p: WorldPos) -> (i64, i64) {
    (p.x.to_bits().div_euclid(SHARE_RADIUS.to_bits()), p.z.to_bits().div_euclid(SHARE_RADIUS.to_bits()))
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
                    // Every point within the range of some part of the square.
                    RangeKind::Ranged => Goal::rounded_square(sq, grow(max + r)),
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
            group: if matches!(unit.orders.first(), Some(GoalSpec::Point(_))) { unit.order_group } else { 0 },
        };
        let long = || Job::Long(long_job());
        // A unit on an impassable navcell (a building placed over it) escapes by the long-range
        // search first, even for a minimum-range retreat or while it waits to search round a held
        // passage: the motion phase asks for a long path again whenever it finds the unit there
        // without an escape, so anything else planned from there would be asked for every turn.
        let stranded = self.nav.class_nav(unit.class).is_some_and(|nav| !nav.pass_map().is_passable(self.navcell_of(unit.pos)));
        if unit.held_searches > 0 && !(request.short || short) && !stranded {
            // Round the held passage by the navcells first; where that finds no way, by the exact
            // cores the motion checks, which may leave a band between the holders (see
            // `world/held.rs`).
            // Towards the order's goal itself (a detour back to the long-range path would lead
            // into the holders again).
            let fallback = self.short_job(unit, goal, true, stationary, true).ok();
            return Some(Job::Held(self.held_job(unit, long_job(), stationary, fallback)));
        }
        if !(request.short || short) || stranded {
            return Some(long());
        }
        match self.short_job(unit, goal, short, stationary, false) {
            Ok(job) => Some(Job::Short(job)),
            Err(true) => Some(long()),
            Err(false) => None,
        }
    }

    /// The short-range job of `unit` towards `goal` (see "Short-range requests"), or `Err(true)`
    /// when the unit has no long-range waypoints left to detour to (a long-range search is due), or
    /// `Err(false)` when no goal can be made. `held`: the fallback of a held-passage search, whose
    /// goal also counts as taken when the navcells stamped for other players' standing units
    /// cover it (`world/held.rs`).
    fn short_job(&self, unit: &Unit, goal: Goal, short: bool, stationary: &UnitIndex, held: bool) -> Result<ShortJob, bool> {
        let m = &self.settings.motion;
        let long_waypoints = &unit.waypoints()[usize::from(unit.detour).min(unit.waypoints().len())..];
        // The goal of the detour: the order's goal on the last leg (or for a retreat), else a
        // circle around the next long-range waypoint.
        let (goal, final_leg, keep, aim) = match long_waypoints {
            _ if short => (goal, true, Vec::new(), goal.nearest_point(unit.pos)),
            [] => return Err(true),
            // The long-range path ends short of an unreachable goal: its end is the goal.
            [last] if unit.settle => (Goal::point(*last).map_err(|_| false)?, true, Vec::new(), *last),
            [_] => (goal, true, Vec::new(), goal.nearest_point(unit.pos)),
            [next, ..] => {
                let half = Fixed::from_bits((distance_raw(unit.pos, *next) / 2).min(i128::from(m.rejoin_radius.to_bits())) as i64);
                (Goal::circle(*next, half).map_err(|_| false)?, false, long_waypoints.to_vec(), *next)
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
        let occupied = final_leg
            && (squares.iter().any(|sq| point_in_square(aim, sq, unit.radius))
                || (held
                    && self.held_stamps(unit, stationary).iter().any(|&(i0, j0, i1, j1)| {
                        let cell = self.navcell_of(aim);
                        (i0..=i1).contains(&u32::from(cell.i)) && (j0..=j1).contains(&u32::from(cell.j))
                    })));
        Ok(ShortJob { class: unit.class, pos: unit.pos, radius: unit.radius, goal, range, squares, final_leg, occupied, keep, held })
    }

    /// Computes the oldest pending requests and applies the results in request order
    /// (docs/pathfinding-rules.md, "The per-turn search budget"). Long-range requests are taken in
    /// order, formations' first (oldest first), then the units', the first searches of orders
    /// ahead of the replans of blocked units but for the oldest replan ([`first_searches_first`]):
    /// each either shares a search taken
    /// this turn (docs/pathfinding-rules.md, "Shared searches"), costing nothing, or is a search,
    /// until the work of the searches taken reaches [`Settings::long_search_budget`] (the search
    /// that crosses it is kept) or [`Settings::max_paths_per_turn`] searches are taken. After that
    /// cutoff a request that can share a search taken is still served, wherever it stands in the
    /// queue; the rest wait, in order. The first [`MotionSettings::max_short_paths_per_turn`]
    /// short-range requests are taken whatever the long-range ones do; those that turn into
    /// long-range searches count their work first.
    ///
    /// One thread reads the queue, posting each search (and the short-range jobs) to a board from
    /// which every thread of the pool takes jobs in the order posted; it reads at most two per
    /// thread (at most [`SEARCH_CHUNK`]) ahead of the last search whose work it has counted (none
    /// ahead on one thread), and finds the cutoff in request order as the results come in: the
    /// searches read after it are dropped (made again on a later turn) and the queue is read on
    /// from the cutoff as if they had never been read, so the outcome is the same for any thread
    /// count (and any reading ahead). Formation results are applied after the units', in their own
    /// request order.
    ///
    /// The phase runs as four free functions over what each borrows, as the motion phase does
    /// ([`crate::motion::move_units`]): [`path_jobs`] reads the jobs from the world,
    /// [`search_jobs`] hands them to the pool and finds the cutoff, [`share_searches`] gives the
    /// requests that share a search their lead's path, and [`apply_unit_paths`] writes the units'
    /// outcomes back; the formations' outcomes go through [`World::apply_formation_outcomes`].
    ///
    /// [`MotionSettings::max_short_paths_per_turn`]: crate::motion::MotionSettings::max_short_paths_per_turn
    pub(super) fn compute_paths(&mut self, events: &mut Vec<Event>) {
        let queued = self.requests.iter().filter(|r| !r.short).count() + self.formations.requests().len();
        self.scratch.scale.max_queue = self.scratch.scale.max_queue.max(u32::try_from(queued).unwrap_or(u32::MAX));
        let pending = first_searches_first(&self.units, std::mem::take(&mut self.requests), self.turn);
        let jobs = path_jobs(self, pending);
        let parts = SearchParts {
            nav: &self.nav,
            motion: &self.settings.motion,
            workspaces: &self.scratch.workspaces,
            pool: self.pool.as_deref(),
            budget: u64::from(self.settings.long_search_budget),
            cap: usize::from(self.settings.max_paths_per_turn),
            spins: self.scratch.helper_spins,
        };
        let read_candidate =
            |candidate: &Candidate, taken: &TakenSet| self.candidate_job(candidate, &jobs.pending, &jobs.stationary, taken);
        let Searched { mut taken, work, discarded, short_results } =
            search_jobs(parts, &jobs.short_jobs, &jobs.candidates, &read_candidate);
        let (shared, own_points) = share_searches(&self.nav, &mut taken, &jobs.candidates, &jobs.pending);
        let (outcomes, formation_results) = outcomes_by_request(&jobs, short_results, taken);
        drop(self.formations.requests_mut().drain(..formation_results.len()));
        self.scratch.path_stats = PathStats::default();
        self.scratch.path_stats.shared = shared;
        self.scratch.path_stats.long_work = work;
        self.scratch.path_stats.discarded = discarded;
        self.scratch.scale.shared_paths += u64::from(shared);
        let parts = ApplyParts {
            units: &mut self.units,
            requests: &mut self.requests,
            path_stats: &mut self.scratch.path_stats,
            scale: &mut self.scratch.scale,
        };
        apply_unit_paths(parts, jobs.pending, outcomes, own_points, events);
        self.apply_formation_outcomes(formation_results, events);
        self.scratch.scale.long_searches += u64::from(self.scratch.path_stats.long);
        self.scratch.scale.long_work += work;
        self.scratch.scale.max_turn_work = self.scratch.scale.max_turn_work.max(work);
    }

    /// Applies the formations' path outcomes, in their request order (after the units').
    fn apply_formation_outcomes(&mut self, formation_results: Vec<(FormationId, Outcome)>, events: &mut Vec<Event>) {
        for (id, result) in formation_results {
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
    }
    /// The job for a long-range candidate and, for a unit's request that may share a search
    /// (`sharable`), the first request taken this turn that may lead it (`members` gives the taken
    /// ones by class and square), the nine squares round its start taken in a fixed order.
    fn candidate_job(
        &self,
        candidate: &Candidate,
        pending: &[PathRequest],
        stationary: &UnitIndex,
        taken: &TakenSet,
    ) -> (Option<Job>, Option<usize>, bool) {
        let i = match *candidate {
            Candidate::Formation(id) => return (self.formation_job(id).map(Job::Formation), None, false),
            Candidate::Unit(i) => i,
        };
        let job = self.job_for(&pending[i], stationary);
        let Some(Job::Long(long)) = &job else { return (job, None, false) };
        if !self.may_share(long) {
            return (job, None, false);
        }
        let (sx, sz) = share_square(long.pos);
        for dz in -1..=1 {
            for dx in -1..=1 {
                for &k in taken.members.get(&(long.class, sx + dx, sz + dz)).map_or(&[][..], Vec::as_slice) {
                    if let Some(Job::Long(other)) = &taken.list[k].job
                        && self.shares(other, long)
                    {
                        return (job, Some(k), true);
                    }
                }
            }
        }
        (job, None, true)
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
}

/// The path phase's jobs, read from the world before any search.
struct PathJobs {
    /// The requests taken out of the queue, in order; those not served go back.
    pending: Vec<PathRequest>,
    /// The standing units, for short-range and held-passage jobs.
    stationary: UnitIndex,
    /// The places in `pending` of the short-range requests taken: the first ones, whatever the
    /// long-range ones do.
    short_at: Vec<usize>,
    /// Their jobs, in the same order.
    short_jobs: Vec<Option<Job>>,
    /// The long-range requests in the order they are taken: formations', then units'.
    candidates: Vec<Candidate>,
}

/// The queue in the order its long-range requests are taken (docs/pathfinding-rules.md, "The
/// per-turn search budget"): every request that is not a *replan* ([`is_replan`]: a long-range
/// request of a unit that counts blocked turns or has searched round a held passage), in queue
/// order (the first searches of orders, escapes, resumed paths, range orders following their
/// target, and the short-range requests, which keep their own count), then the replans, in queue
/// order; on even turns the oldest replan goes first of all, so replans make progress whatever
/// the other requests ask, and an order waits at most one turn for it. A stable reordering
/// decided by the units' hashed state and the turn alone, so it is the same on every peer and
/// after a load.
fn first_searches_first(units: &UnitStore, pending: Vec<PathRequest>, turn: u32) -> Vec<PathRequest> {
    let replans: Vec<bool> = pending.iter().map(|r| units.get(r.unit).is_some_and(|u| is_replan(r, u))).collect();
    let Some(oldest) = replans.iter().position(|&r| r) else { return pending };
    let first = turn.is_multiple_of(2).then_some(oldest);
    let (mut ordered, mut later) = (Vec::with_capacity(pending.len()), Vec::new());
    ordered.extend(first.map(|k| pending[k]));
    for (i, (request, replan)) in pending.into_iter().zip(replans).enumerate() {
        match (replan, Some(i) == first) {
            (_, true) => {}
            (true, false) => later.push(request),
            (false, false) => ordered.push(request),
        }
    }
    ordered.append(&mut later);
    ordered
}

/// Whether `request` is a replan: a long-range request of a unit that is blocked (it counts
/// blocked turns) or has searched round a passage held by another player's units. Such searches
/// are the costly ones of a crowd (a held-passage search stamps the standing units into a copy of
/// the grid) and their units already have somewhere to be; an order's first search is not one.
fn is_replan(request: &PathRequest, unit: &Unit) -> bool {
    !request.short && (unit.stalled > 0 || unit.held_searches > 0)
}

/// The jobs phase: what each short-range request asks for and the long-range candidates in the
/// order they are taken (their jobs are read later, as the queue is read, since whether one shares
/// a search depends on those taken before it). Reads the world, which the jobs describe.
fn path_jobs(world: &World, pending: Vec<PathRequest>) -> PathJobs {
    let core = |u: &Unit| world.settings.motion.core(u.radius);
    let stationary = UnitIndex::new(world.units().filter(|u| u.state == UnitState::Idle).map(|u| (u.id, u.pos, core(u))).collect());
    let short_at: Vec<usize> = pending
        .iter()
        .enumerate()
        .filter(|(_, r)| r.short)
        .map(|(i, _)| i)
        .take(usize::from(world.settings.motion.max_short_paths_per_turn))
        .collect();
    let short_jobs: Vec<Option<Job>> = short_at.iter().map(|&i| world.job_for(&pending[i], &stationary)).collect();
    let candidates: Vec<Candidate> = world
        .formations
        .requests()
        .iter()
        .map(|&id| Candidate::Formation(id))
        .chain(pending.iter().enumerate().filter(|(_, r)| !r.short).map(|(i, _)| Candidate::Unit(i)))
        .collect();
    PathJobs { pending, stationary, short_at, short_jobs, candidates }
}

/// What the hand-off to the pool borrows of the world.
struct SearchParts<'a> {
    nav: &'a NavWorld,
    motion: &'a crate::motion::MotionSettings,
    /// One per worker thread ([`super::jobs::workspaces`]).
    workspaces: &'a [std::sync::Mutex<Workspace>],
    /// The world's worker threads, if any.
    pool: Option<&'a rayon::ThreadPool>,
    /// [`Settings::long_search_budget`]. `[Units: work]`
    budget: u64,
    /// [`Settings::max_paths_per_turn`].
    cap: usize,
    /// How long an idle helper thread spins before it sleeps ([`World::set_helper_spins`]).
    spins: u32,
}

/// A long-range candidate's job and, for a unit's request, the taken request whose search it may
/// share and whether others may share its own ([`World::candidate_job`]).
type CandidateReader<'a> = dyn Fn(&Candidate, &TakenSet) -> (Option<Job>, Option<usize>, bool) + Sync + 'a;

/// What the hand-off to the pool gives back.
struct Searched {
    /// The long-range requests taken, in order; a sharer's outcome is still to be filled in.
    taken: Vec<Taken>,
    /// The work of the searches taken. `[Units: work]`
    work: u64,
    /// Searches read ahead, computed, and dropped at the cutoff (made again on a later turn).
    discarded: u32,
    /// The short-range jobs' outcomes, in their order.
    short_results: Vec<Outcome>,
}

/// The hand-off to the pool: the short-range jobs and the long-range candidates, read in order by
/// `read_candidate`, are posted to a board from which every thread of the pool takes them; the
/// cutoff is found in request order as their results come in ([`read_queue`]). Without a pool, or
/// with one thread, the reading thread computes every job itself. A job that panicked is raised
/// here.
fn search_jobs(
    parts: SearchParts<'_>,
    short_jobs: &[Option<Job>],
    candidates: &[Candidate],
    read_candidate: &CandidateReader<'_>,
) -> Searched {
    let SearchParts { nav, motion, workspaces, pool, budget, cap, spins } = parts;
    let compute = |job: &Option<Job>| compute_in_workspace(nav, motion, workspaces, job);
    let threads = pool.map_or(1, rayon::ThreadPool::current_num_threads);
    // How many searches the queue is read ahead of the last one whose work is counted: two
    // per thread keep every thread busy; one thread reads none ahead, so drops none.
    let ahead = if threads > 1 { (2 * threads).min(SEARCH_CHUNK) } else { 1 };
    let limits = ReadLimits { ahead, cap, budget };
    let board = Board::default();
    // The queue, read in order on one thread (inside the pool, below).
    let read = || read_queue(&board, &compute, short_jobs, candidates, read_candidate, limits);
    let QueueRead { taken, work, counted_slots, short_results } = match pool {
        Some(pool) if threads > 1 => pool.install(|| {
            rayon::scope(|scope| {
                for _ in 1..threads {
                    scope.spawn(|_| board.work(spins, &compute));
                }
                read()
            })
        }),
        Some(pool) => pool.install(read),
        None => read(),
    };
    // A job that panicked after the last result was waited for (one read past the cutoff) is
    // raised here all the same.
    if let Some(payload) = locked(&board.panic).take() {
        std::panic::resume_unwind(payload);
    }
    let discarded = board.computed_from(counted_slots);
    Searched { taken: taken.list, work, discarded, short_results }
}

/// How far [`read_queue`] reads and where it stops.
#[derive(Clone, Copy)]
struct ReadLimits {
    /// Searches read ahead of the last one whose work is counted.
    ahead: usize,
    /// [`Settings::max_paths_per_turn`].
    cap: usize,
    /// [`Settings::long_search_budget`]. `[Units: work]`
    budget: u64,
}

/// What [`read_queue`] read.
struct QueueRead {
    taken: TakenSet,
    /// The work counted, the short-range jobs' included. `[Units: work]`
    work: u64,
    /// The board's slots whose results were counted: those after were read past the cutoff.
    counted_slots: usize,
    short_results: Vec<Outcome>,
}

/// Reads the queue in order on one thread: each search read is posted to the board, where every
/// thread takes the jobs in the order posted; the cutoff is found in request order as their
/// results come in, and what was read after it is forgotten. After the cutoff only requests that
/// share a search taken are served.
fn read_queue(
    board: &Board,
    compute: &(dyn Fn(&Option<Job>) -> JobResult + Sync),
    short_jobs: &[Option<Job>],
    candidates: &[Candidate],
    read_candidate: &CandidateReader<'_>,
    limits: ReadLimits,
) -> QueueRead {
    let ReadLimits { ahead, cap, budget } = limits;
    let _finish = Finish(board);
    let n_short = short_jobs.len();
    let mut taken = TakenSet::default();
    // Room for every candidate at once: a turn of 10,000 requests otherwise regrows it from
    // scratch, copying its entries (hundreds of bytes each) a dozen times.
    taken.list.reserve(candidates.len());
    for (slot, job) in short_jobs.iter().enumerate() {
        board.post(slot, job.clone());
    }
    let (mut next, mut work) = (0usize, 0u64);
    // Each search read, as its place in `taken`; the first `counted` have their work counted.
    let mut searches: Vec<usize> = Vec::new();
    let mut counted = 0;
    let mut short_results = None;
    let mut cut = None;
    loop {
        while next < candidates.len() && searches.len() - counted < ahead && searches.len() < cap {
            let (job, lead, sharable) = read_candidate(&candidates[next], &taken);
            if lead.is_none() {
                board.post(n_short + searches.len(), job.clone());
                searches.push(taken.list.len());
            }
            taken.push(next, job, lead, sharable);
            next += 1;
        }
        if short_results.is_none() {
            // A short-range request that became a long-range search (the unit's path ran
            // out, or it stands on an impassable navcell) spends the budget like any, first.
            let mut outcomes = Vec::with_capacity(n_short);
            for slot in 0..n_short {
                let (outcome, w) = board.wait(slot, compute);
                outcomes.push(outcome);
                work += w;
            }
            short_results = Some(outcomes);
        }
        // Nothing read ahead: the queue is read to its end, or the count cap is reached.
        let Some(&i) = searches.get(counted) else { break };
        let (outcome, w) = board.wait(n_short + counted, compute);
        (taken.list[i].outcome, taken.list[i].work) = (outcome, w);
        counted += 1;
        work += w;
        if work >= budget {
            cut = Some(i);
            break;
        }
    }
    if let Some(i) = cut {
        // Forget what was read after the cutoff, as if it had never been.
        taken.truncate(i + 1);
        next = taken.list[i].candidate + 1;
    }
    board.close();
    // After the cutoff: only requests that share a search taken.
    for (c, candidate) in candidates.iter().enumerate().skip(next) {
        if matches!(candidate, Candidate::Unit(_)) && taken.member_count > 0 {
            let (job, lead, sharable) = read_candidate(candidate, &taken);
            if lead.is_some() {
                taken.push(c, job, lead, sharable);
            }
        }
    }
    QueueRead { taken, work, counted_slots: n_short + counted, short_results: short_results.unwrap_or_default() }
}

/// A job's outcome and its work, computed in the calling worker's workspace: a long-range
/// or held-passage search's [`search_work`] plus [`SEARCH_BASE_WORK`] (and a held-passage
/// search's stamped navcells, `world/held.rs`), nothing for anything else.
fn compute_in_workspace(
    nav: &NavWorld,
    motion: &crate::motion::MotionSettings,
    workspaces: &[std::sync::Mutex<Workspace>],
    job: &Option<Job>,
) -> JobResult {
    // Each worker thread has its own slot, so the lock is never contended; a poisoned
    // lock only means a previous query panicked, and the workspace is reset per query.
    let slot = rayon::current_thread_index().unwrap_or(0).min(workspaces.len() - 1);
    let mut guard = workspaces[slot].lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    guard.work = 0;
    let outcome = run_job(nav, motion, &mut guard, job);
    let work = match job {
        Some(Job::Long(_) | Job::Formation(_) | Job::Held(_)) => guard.work + u64::from(SEARCH_BASE_WORK),
        _ => 0,
    };
    (outcome, work)
}

/// One job's outcome: a long-range, held-passage, formation or short-range search, or what was
/// decided without one.
fn run_job(nav: &NavWorld, motion: &crate::motion::MotionSettings, ws: &mut Workspace, job: &Option<Job>) -> Outcome {
    match job {
        None => Outcome::Failed,
        Some(Job::Settled(plan)) => Outcome::Settled(*plan),
        Some(Job::Long(job)) => run_long(nav, job, ws).map_or(Outcome::Failed, |(s, w)| Outcome::Long(s, w)),
        Some(Job::Held(job)) => match super::held::run_held(nav, job, ws) {
            None => Outcome::Failed,
            Some((status, waypoints)) if status == PathStatus::Complete => Outcome::Held(status, waypoints, None),
            Some((status, waypoints)) => {
                // No way round by the navcells: the exact cores, which the motion checks. Only a
                // way through (or, to a goal the holders take, as near as they allow) is taken.
                let fallback = job.fallback.as_ref().map(|short| run_short(nav, motion, short, ws)).filter(|short| match short {
                    Outcome::Short { status: ShortStatus::Complete | ShortStatus::Partial(ShortPartial::OutOfBox), waypoints, .. } => {
                        !waypoints.is_empty()
                    }
                    Outcome::Short { status: ShortStatus::Partial(ShortPartial::Unreachable), final_leg, occupied, .. } => {
                        *final_leg && *occupied
                    }
                    _ => false,
                });
                Outcome::Held(status, waypoints, fallback.map(Box::new))
            }
        },
        Some(Job::Formation(job)) => match run_long(nav, &job.long, ws) {
            Some((status, waypoints)) => {
                let mut points = Vec::with_capacity(waypoints.len() + 1);
                points.push(job.long.pos);
                points.extend(waypoints);
                Outcome::Formation(status, crate::formation::generalise(&points, job.size))
            }
            None => Outcome::Failed,
        },
        Some(Job::Short(job)) => run_short(nav, motion, job, ws),
    }
}

/// A short-range search, retried without the standing units when they block the only way.
fn run_short(nav: &NavWorld, motion: &crate::motion::MotionSettings, job: &ShortJob, ws: &mut Workspace) -> Outcome {
    let Some(class_nav) = nav.class_nav(job.class) else { return Outcome::Failed };
    let cell_size = nav.grid().cell_size();
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
    if status == ShortStatus::Partial(ShortPartial::Unreachable) && !job.squares.is_empty() && !job.occupied && !job.held {
        // The standing units block the only way: plan through them (they get
        // nudged aside when the unit reaches them).
        query.squares = &[];
        let again = find_short_path(map, &query, &mut ws.short, &mut ws.short_out);
        (status, searches, expanded) = (again.status, 2, expanded + u64::from(again.expanded));
    }
    let waypoints = ws.short_out.iter().map(|&p| off_grid_lines(p, cell_size)).collect();
    Outcome::Short { status, waypoints, final_leg: job.final_leg, occupied: job.occupied, keep: job.keep.clone(), searches, expanded }
}

/// The sharing phase: each taken request that shares a search gets its lead's path, in request
/// order, since a request sharing a search may itself be shared (its lead's outcome is always
/// earlier); then the followers of an order group end at their own points ([`spread_ends`]).
/// Returns how many requests shared a search, and the units whose path now ends at their own
/// point, with that point.
fn share_searches(
    nav: &NavWorld,
    taken: &mut [Taken],
    candidates: &[Candidate],
    pending: &[PathRequest],
) -> (u32, Vec<(EntityId, WorldPos)>) {
    let mut shared = 0u32;
    for i in 0..taken.len() {
        let Some(k) = taken[i].lead else { continue };
        shared += 1;
        let (before, after) = taken.split_at_mut(i);
        let (t, lead) = (&mut after[0], &before[k]);
        t.outcome = match (&t.job, &lead.job) {
            (Some(Job::Long(job)), Some(Job::Long(lead_job))) => follow_path(nav, job, lead_job, &lead.outcome),
            _ => Outcome::Failed,
        };
    }
    (shared, spread_ends(nav, taken, candidates, pending))
}

/// Every taken request's outcome by its place in the queue, with whether it followed another's
/// search (`None` for the requests that wait, in order), and the formations' outcomes in their
/// request order.
fn outcomes_by_request(
    jobs: &PathJobs,
    short_results: Vec<Outcome>,
    taken: Vec<Taken>,
) -> (Vec<RequestOutcome>, Vec<(FormationId, Outcome)>) {
    let mut outcomes: Vec<RequestOutcome> = std::iter::repeat_with(|| None).take(jobs.pending.len()).collect();
    for (&i, outcome) in jobs.short_at.iter().zip(short_results) {
        outcomes[i] = Some((outcome, false));
    }
    let mut formation_results = Vec::new();
    for t in taken {
        match jobs.candidates[t.candidate] {
            Candidate::Unit(i) => outcomes[i] = Some((t.outcome, t.lead.is_some())),
            Candidate::Formation(id) => formation_results.push((id, t.outcome)),
        }
    }
    (outcomes, formation_results)
}

/// A request's outcome and whether it followed another's search; `None` for a request that waits.
type RequestOutcome = Option<(Outcome, bool)>;

/// What applying the units' outcomes borrows of the world.
struct ApplyParts<'a> {
    /// The units: every change goes through the store, which notes it.
    units: &'a mut UnitStore,
    /// The queue: the requests that wait go back first, in order, then those the outcomes ask for.
    requests: &'a mut Vec<PathRequest>,
    path_stats: &'a mut PathStats,
    scale: &'a mut ScaleStats,
}

/// The applying phase for units: the requests without an outcome go back to the queue, in order;
/// each outcome is counted and applied to its unit, in request order; then the units of spread
/// groups take their own points as their orders' goals ([`take_own_points`]).
fn apply_unit_paths(
    parts: ApplyParts<'_>,
    pending: Vec<PathRequest>,
    outcomes: Vec<RequestOutcome>,
    own_points: Vec<(EntityId, WorldPos)>,
    events: &mut Vec<Event>,
) {
    let ApplyParts { units, requests, path_stats, scale } = parts;
    let mut apply = Vec::with_capacity(pending.len());
    for (request, outcome) in pending.into_iter().zip(outcomes) {
        match outcome {
            Some(outcome) => apply.push((request.unit, outcome)),
            None => requests.push(request),
        }
    }
    for (unit, (result, follower)) in apply {
        match &result {
            Outcome::Held(_, _, fallback) => {
                path_stats.long += 1;
                scale.held_searches += 1;
                if let Some(Outcome::Short { searches, expanded, .. }) = fallback.as_deref() {
                    path_stats.short += searches;
                    path_stats.short_expanded += expanded;
                }
            }
            Outcome::Long(..) if !follower => path_stats.long += 1,
            Outcome::Short { searches, expanded, .. } => {
                path_stats.short += searches;
                path_stats.short_expanded += expanded;
            }
            _ => {}
        }
        apply_outcome(units, requests, unit, result, events);
    }
    take_own_points(units, own_points);
}

/// Ends each shared path of a unit of an order group at the unit's own point near the goal
/// (docs/pathfinding-rules.md, "Shared searches"): [`spread_end`] with the unit's start offset
/// from its group's reference, the first request of its group served by the same search (the
/// search's own request, or the first of its followers of that group). Only followers with a
/// complete path to a point goal and a nonzero [`LongJob::group`] are spread, so units of
/// separate commands that share a path still end at the order's point. Returns, in request
/// order, the units whose path now ends at their own point, and that point, which their
/// order's goal becomes ([`take_own_points`]).
fn spread_ends(nav: &NavWorld, taken: &mut [Taken], candidates: &[Candidate], pending: &[PathRequest]) -> Vec<(EntityId, WorldPos)> {
    let cell_size = nav.grid().cell_size();
    // The search each request's path comes from, and each (search, group)'s reference.
    let mut roots: Vec<usize> = (0..taken.len()).collect();
    let mut references: std::collections::BTreeMap<(usize, u64), usize> = std::collections::BTreeMap::new();
    let mut own = Vec::new();
    for i in 0..taken.len() {
        if let Some(k) = taken[i].lead {
            roots[i] = roots[k];
        }
        let (Some(Job::Long(job)), Candidate::Unit(c)) = (&taken[i].job, &candidates[taken[i].candidate]) else { continue };
        let id = pending[*c].unit;
        if job.group == 0 || job.anchor.is_none() {
            continue;
        }
        let reference = *references.entry((roots[i], job.group)).or_insert(i);
        if reference == i || taken[i].lead.is_none() {
            continue;
        }
        let Some(Job::Long(reference_job)) = &taken[reference].job else { continue };
        let reference_pos = reference_job.pos;
        let Some(map) = nav.class_nav(job.class).map(|n| n.pass_map()) else { continue };
        let pos = job.pos;
        let Outcome::Long(PathStatus::Complete, waypoints) = &mut taken[i].outcome else { continue };
        if let Some(end) = spread_end(map, cell_size, pos, reference_pos, waypoints) {
            own.push((id, end));
            if let Some(last) = waypoints.last_mut() {
                *last = end;
            }
        }
    }
    own
}

/// Makes each unit's own point (from [`spread_ends`]) the goal of its current point
/// order, so that a unit that plans again (blocked, or its path ran out) goes to its own point
/// rather than back to the shared one.
fn take_own_points(units: &mut UnitStore, own: Vec<(EntityId, WorldPos)>) {
    for (id, end) in own {
        if let Some(unit) = units.get_mut(id)
            && let Some(order @ GoalSpec::Point(_)) = unit.orders.first_mut()
        {
            *order = GoalSpec::Point(end);
        }
    }
}

/// Applies one request's outcome to its unit (gone units are skipped); a settled order whose
/// unit has more orders asks for the next path.
fn apply_outcome(units: &mut UnitStore, requests: &mut Vec<PathRequest>, id: EntityId, outcome: Outcome, events: &mut Vec<Event>) {
    let Some(unit) = units.get_mut(id) else {
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
            unit.order_group = 0;
            unit.clear_waypoints();
            unit.settle = false;
            unit.resume = false;
            events.push(Event::Arrived { unit: unit.id });
            if unit.orders.is_empty() {
                unit.state = UnitState::Idle;
            } else {
                unit.state = UnitState::WaitingForPath;
                requests.push(PathRequest::long(id));
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
        Outcome::Held(_, _, Some(fallback)) => apply_outcome(units, requests, id, *fallback, events),
        Outcome::Held(status, waypoints, None) => {
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

/// The end of a shared path for a unit that starts at `start`, when the reference unit of its
/// order group started at `reference`: the path's end moved by the unit's offset from
/// `reference`, so that a compact group keeps its shape (docs/pathfinding-rules.md, "Shared
/// searches"). When that point is not clear (its navcell impassable for the class, off the map,
/// or the straight line to it from the path's previous point, or from `start` for a one-point
/// path, touching an impassable navcell), the first clear one of the points with each axis of the
/// offset scaled by 1, 3/4, 1/2, 1/4 or 0 (rounded toward zero), nearest the wanted point first,
/// then the larger sum of the two scales, then the larger scale on x. `None` when the end stays
/// where it is: an empty path, no offset, an offset above [`SHARE_RADIUS`] on either axis (a unit
/// strung out behind the reference, as in a column, goes to the goal itself), or no clear point
/// but the end.
fn spread_end(map: &pathing::PassMap, cell_size: Fixed, start: WorldPos, reference: WorldPos, waypoints: &[WorldPos]) -> Option<WorldPos> {
    let (&end, before) = waypoints.split_last()?;
    let from = before.last().copied().unwrap_or(start);
    let r = SHARE_RADIUS.to_bits();
    let (dx, dz) = (start.x.to_bits() - reference.x.to_bits(), start.z.to_bits() - reference.z.to_bits());
    if (dx, dz) == (0, 0) || dx.abs() > r || dz.abs() > r {
        return None;
    }
    let try_at = |a: i64, b: i64| {
        let (x, z) = (end.x.to_bits().checked_add(a * dx / 4)?, end.z.to_bits().checked_add(b * dz / 4)?);
        let p = off_grid_lines(WorldPos::new(Fixed::from_bits(x), Fixed::from_bits(z)), cell_size);
        (x >= 0 && z >= 0 && p != end && pathing::collide::segment_clear(map, from, p)).then_some(p)
    };
    // The whole offset comes first in the order below (its distance is 0, and on a tie the
    // larger scales come first): most units get it, and need no list.
    if let Some(p) = try_at(4, 4) {
        return Some(p);
    }
    // Scales in quarters, and the squared distance of each scaled point from the wanted one.
    let mut scales: Vec<(i128, i64, i64)> = Vec::with_capacity(25);
    for a in (0..=4i64).rev() {
        for b in (0..=4i64).rev() {
            let (ex, ez) = (i128::from((4 - a) * dx), i128::from((4 - b) * dz));
            scales.push((ex * ex + ez * ez, a, b));
        }
    }
    scales.sort_by_key(|&(d2, a, b)| (d2, -(a + b), -a));
    scales.into_iter().filter(|&(_, a, b)| (a, b) != (0, 0) && (a, b) != (4, 4)).find_map(|(_, a, b)| try_at(a, b))
}

/// One long-range search and its waypoints: the centres of the turning navcells after the unit's
/// own, with the exact goal point in place of the last centre when a point goal lies in that
/// navcell (last-waypoint precision). The unit goes straight from where it stands to
/// the first of them when it can (first-waypoint trimming), else by its own
/// navcell's centre, as the path does (docs/pathfinding-rules.md). Then string pulling: any-angle
/// shortcuts between points that see each other, never touching an impassable navcell. An escape
/// path stays as it is.
pub(super) fn run_long(nav: &NavWorld, job: &LongJob, ws: &mut Workspace) -> Option<(PathStatus, Vec<WorldPos>)> {
    let class_nav = nav.class_nav(job.class)?;
    let cell_size = nav.grid().cell_size();
    let limits = SearchLimits { node_budget: PATH_NODE_BUDGET };
    let outcome = pathing::find_path(class_nav, job.cell, &job.goal, &limits, &mut ws.search, &mut ws.path);
    let status = outcome.status;
    ws.work = search_work(&outcome, &ws.path);
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

/// A point of navcell `cell` (2^-16 m inside its edges) that lies in the goal's circle, square or
/// rounded square, if the navcell's point nearest the shape's centre is one: for a circle that is
/// every navcell the circle touches; for the squares, most of them. `None` for other goals.
fn point_of_cell_in_goal(goal: &Goal, cell: Navcell, cell_size: Fixed) -> Option<WorldPos> {
    let target = match goal.shape() {
        GoalShape::Circle { center, .. } => center,
        GoalShape::Square(square) | GoalShape::RoundedSquare { square, .. } => square.center(),
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

    /// A wall (an obstruction blocking pathfinding) of centre `(x, z)` and size `w × h` metres.
    fn wall(turn: u32, x: i32, z: i32, w: i32, h: i32) -> Command {
        Command {
            turn,
            player: crate::PlayerId(1),
            seq: 0,
            kind: CommandKind::PlaceObstruction {
                square: crate::command::SquareSpec {
                    x: Fixed::from_num(x),
                    z: Fixed::from_num(z),
                    w: Fixed::from_num(w),
                    h: Fixed::from_num(h),
                    degrees: Fixed::ZERO,
                },
                flags: pathing::passability::ObstructionFlags::BLOCK_PATHFINDING,
            },
        }
    }

    /// The units' positions.
    fn positions(world: &World, ids: &[EntityId]) -> Vec<WorldPos> {
        ids.iter().map(|id| world.unit(*id).unwrap().pos).collect()
    }

    /// The last waypoint of each unit's path.
    fn ends(world: &World, ids: &[EntityId]) -> Vec<WorldPos> {
        ids.iter().map(|id| *world.unit(*id).unwrap().waypoints().last().expect("a path")).collect()
    }

    /// `p` moved by `to - from`, off grid lines (navcells of 1 m).
    fn shifted(p: WorldPos, from: WorldPos, to: WorldPos) -> WorldPos {
        off_grid_lines(WorldPos::new(p.x + (to.x - from.x), p.z + (to.z - from.z)), Fixed::ONE)
    }

    /// Steps with no commands until every unit is idle (at most `turns` turns).
    fn run_idle(world: &mut World, turns: u32) {
        for _ in 0..turns {
            if world.units().all(|u| u.state == UnitState::Idle) {
                return;
            }
            world.step(&[]);
        }
        panic!("units still walking after {turns} turns");
    }

    #[test]
    fn a_group_ordered_together_shares_one_search_and_walks_at_once() {
        let mut world = open_world(Settings::default());
        let groups = spawn_groups(&mut world, &[(8, 8)], 20);
        world.step(&[order(1, 0, &groups[0], 56, 56)]);
        assert_eq!(world.path_stats().long, 1, "one search");
        assert_eq!(world.path_stats().shared, 19, "the other 19 share it");
        // The exact point, kept off grid lines as every waypoint is, for the unit that searched;
        // each other unit at its own point.
        let goal = off_grid_lines(WorldPos::from_int(56, 56), Fixed::ONE);
        let at_goal = groups[0].iter().filter(|id| world.unit(**id).unwrap().waypoints().last() == Some(&goal)).count();
        assert_eq!(at_goal, 1, "one unit ends at the order's point");
        let stats = world.scale_stats();
        assert_eq!(stats.latency, vec![20], "all 20 took their first step in the turn of the order");
        assert_eq!((stats.waiting, stats.long_searches, stats.shared_paths, stats.max_queue), (0, 1, 19, 20));
        // Unit steps: each turn adds the units whose own walk moved them, counted from positions.
        let mut expected = stats.unit_steps;
        assert_eq!(expected, 20, "all 20 walked in the turn of the order");
        for _ in 0..5 {
            let before: Vec<WorldPos> = groups[0].iter().map(|id| world.unit(*id).unwrap().pos).collect();
            let walking: Vec<bool> = groups[0].iter().map(|id| world.unit(*id).unwrap().state == UnitState::Moving).collect();
            world.step(&[]);
            let moved = groups[0]
                .iter()
                .zip(&before)
                .zip(&walking)
                .filter(|((id, was), walks)| **walks && world.unit(**id).unwrap().pos != **was)
                .count();
            expected += moved as u64;
            assert_eq!(world.scale_stats().unit_steps, expected);
        }
    }

    #[test]
    fn units_ordered_by_separate_commands_share_a_search_and_its_end_point() {
        let mut world = open_world(Settings::default());
        let ids = spawn_groups(&mut world, &[(12, 12)], 20).remove(0);
        // One command per unit, all in one turn, to one point: the way the skirmish rules order
        // units, each on its own.
        let orders: Vec<Command> = ids.iter().enumerate().map(|(n, id)| order(1, n as u32, &[*id], 44, 40)).collect();
        world.step(&orders);
        assert_eq!((world.path_stats().long, world.path_stats().shared), (1, 19));
        let goal = off_grid_lines(WorldPos::from_int(44, 40), Fixed::ONE);
        for id in &ids {
            let unit = world.unit(*id).unwrap();
            assert_eq!(unit.order_group, 0, "unit {id:?}: an order to one unit has no group");
            assert_eq!(unit.waypoints().last(), Some(&goal), "unit {id:?} ends at the order's point");
            assert_eq!(unit.orders.first(), Some(&GoalSpec::Point(WorldPos::from_int(44, 40))));
        }
        // Two groups (two commands) from one crowd: each spreads round its own reference, and
        // neither spreads round the other's.
        let mut world = open_world(Settings::default());
        let ids = spawn_groups(&mut world, &[(12, 12)], 20).remove(0);
        let starts = positions(&world, &ids);
        let (a, b) = ids.split_at(10);
        world.step(&[order(1, 0, a, 44, 40), order(1, 1, b, 44, 40)]);
        assert_eq!((world.path_stats().long, world.path_stats().shared), (1, 19));
        let ends = ends(&world, &ids);
        let group_a = world.unit(a[0]).unwrap().order_group;
        let group_b = world.unit(b[0]).unwrap().order_group;
        assert!(group_a != 0 && group_b != 0 && group_a != group_b);
        // Each command's first unit is its reference: it ends at the order's point, and every
        // other unit of its command at the goal plus its offset from it.
        for (members, first) in [(0..10, 0), (10..20, 10)] {
            for i in members {
                assert_eq!(ends[i], shifted(goal, starts[first], starts[i]), "unit {i}");
            }
        }
    }

    #[test]
    fn a_compact_group_ordered_to_an_open_point_arrives_in_its_shape() {
        let mut world = open_world(Settings::default());
        let ids = spawn_groups(&mut world, &[(12, 12)], 20).remove(0);
        let starts = positions(&world, &ids);
        world.step(&[order(1, 0, &ids, 44, 40)]);
        assert_eq!((world.path_stats().long, world.path_stats().shared), (1, 19));
        let goal = off_grid_lines(WorldPos::from_int(44, 40), Fixed::ONE);
        let ends = ends(&world, &ids);
        // The first unit of the order searched, and is the group's reference.
        let lead = starts[0];
        assert_eq!(ends[0], goal);
        for (i, id) in ids.iter().enumerate() {
            let own = shifted(goal, lead, starts[i]);
            assert_eq!(ends[i], own, "unit {id:?} ends at the goal plus its offset from the lead's start");
            let unit = world.unit(*id).unwrap();
            let order = if i == 0 { WorldPos::from_int(44, 40) } else { own };
            assert_eq!(unit.orders.first(), Some(&GoalSpec::Point(order)), "unit {id:?}'s order goes to its own point");
        }
        run_idle(&mut world, 200);
        for (i, id) in ids.iter().enumerate() {
            let unit = world.unit(*id).unwrap();
            assert_eq!(unit.pos, shifted(goal, lead, starts[i]), "unit {id:?} stands at its own point");
            assert_eq!(unit.order_group, 0, "unit {id:?}: no order, no group");
        }
    }

    #[test]
    fn a_group_ordered_beside_a_wall_ends_on_clear_points_it_can_walk_to() {
        let mut world = open_world(Settings::default());
        let ids = spawn_groups(&mut world, &[(12, 32)], 30).remove(0);
        // A wall 2 m east of the goal, from z = 17 to 47.
        world.step(&[wall(1, 47, 32, 2, 30)]);
        let starts = positions(&world, &ids);
        world.step(&[order(2, 0, &ids, 44, 32)]);
        let goal = off_grid_lines(WorldPos::from_int(44, 32), Fixed::ONE);
        let map = world.nav.class_nav(PassClass::of(0)).unwrap().pass_map().clone();
        let ends = ends(&world, &ids);
        assert_eq!(ends[0], goal, "the reference ends at the goal");
        let lead = starts[0];
        let mut moved_in = 0;
        for (i, id) in ids.iter().enumerate() {
            let unit = world.unit(*id).unwrap();
            let path = unit.waypoints();
            let from = path.len().checked_sub(2).map_or(unit.pos, |k| path[k]);
            assert!(
                pathing::collide::segment_clear(&map, from, ends[i]),
                "unit {id:?}: its end is passable and in sight of its previous point"
            );
            assert!(ends[i].x < Fixed::from_num(46), "unit {id:?}: its end is west of the wall");
            let wanted = shifted(goal, lead, starts[i]);
            // Never farther from the goal than its offset, on either axis.
            assert!((ends[i].x - goal.x).abs() <= (wanted.x - goal.x).abs() + Fixed::from_bits(1), "unit {id:?}");
            assert!((ends[i].z - goal.z).abs() <= (wanted.z - goal.z).abs() + Fixed::from_bits(1), "unit {id:?}");
            moved_in += usize::from(ends[i] != wanted);
        }
        assert!(moved_in > 0, "some units' offsets would have put them in the wall");
        let distinct: std::collections::BTreeSet<(i64, i64)> = ends.iter().map(|p| (p.x.to_bits(), p.z.to_bits())).collect();
        assert!(distinct.len() > ids.len() / 2, "the group is spread, not piled on one point: {} ends", distinct.len());
        run_idle(&mut world, 300);
        for id in &ids {
            let pos = world.unit(*id).unwrap().pos;
            assert!(map.is_passable(world.navcell_of(pos)), "unit {id:?} stands on a passable navcell");
        }
    }

    #[test]
    fn a_group_ordered_to_the_map_edge_ends_on_the_map() {
        let mut world = open_world(Settings::default());
        let ids = spawn_groups(&mut world, &[(32, 32)], 30).remove(0);
        world.step(&[order(1, 0, &ids, 63, 1)]);
        let map = world.nav.class_nav(PassClass::of(0)).unwrap().pass_map().clone();
        let ends = ends(&world, &ids);
        for (i, end) in ends.iter().enumerate() {
            assert!(end.x < Fixed::from_num(64) && end.z > Fixed::ZERO, "unit {i}: {end:?} on the map");
            assert!(map.is_passable(world.navcell_of(*end)), "unit {i}");
        }
        run_idle(&mut world, 300);
    }

    #[test]
    fn a_blocked_unit_of_a_spread_group_plans_again_to_its_own_point() {
        let mut world = open_world(Settings::default());
        let ids = spawn_groups(&mut world, &[(12, 32)], 12).remove(0);
        world.step(&[order(1, 0, &ids, 52, 32)]);
        let own = ends(&world, &ids);
        let goal = off_grid_lines(WorldPos::from_int(52, 32), Fixed::ONE);
        assert_eq!(own.iter().filter(|&&p| p == goal).count(), 1, "the others have their own points");
        // A wall across the way, from z = 22 to 42: every unit is blocked and plans round it.
        world.step(&[wall(2, 30, 32, 2, 20)]);
        let mut detours = 0;
        for _ in 0..300 {
            if world.units().all(|u| u.state == UnitState::Idle) {
                break;
            }
            let report = world.step(&[]);
            detours += report.events.iter().filter(|e| matches!(e, Event::Detour { .. })).count();
            for (i, id) in ids.iter().enumerate() {
                let unit = world.unit(*id).unwrap();
                if let Some(order) = unit.orders.first() {
                    assert_eq!(order, &GoalSpec::Point(if own[i] == goal { WorldPos::from_int(52, 32) } else { own[i] }), "unit {id:?}");
                }
                // A path of a unit still under its order ends at its own point, unless it is
                // part of the way (a detour's box or budget ran out) or settles short of a taken
                // point.
                if let Some(&end) = unit.waypoints().last()
                    && !unit.resume
                    && !unit.settle
                    && !unit.orders.is_empty()
                {
                    assert_eq!(end, own[i], "unit {id:?}'s new path still ends at its own point");
                }
            }
        }
        assert!(detours > 0 || world.scale_stats().long_searches > 1, "the wall made units plan again");
        // Units arriving by different ways round the wall nudge a few that stood already.
        let mut exact = 0;
        for (i, id) in ids.iter().enumerate() {
            let unit = world.unit(*id).unwrap();
            assert_eq!(unit.state, UnitState::Idle, "unit {id:?} arrived");
            let d = distance_raw(unit.pos, own[i]);
            assert!(d <= i128::from(Fixed::from_num(2).to_bits()), "unit {id:?} by its own point: {:?} vs {:?}", unit.pos, own[i]);
            exact += usize::from(d == 0);
        }
        assert!(exact >= ids.len() * 3 / 4, "{exact} of {} units exactly at their own points", ids.len());
    }

    #[test]
    fn a_queued_order_to_a_group_carries_no_group_and_ends_at_the_common_point() {
        let mut world = open_world(Settings::default());
        let ids = spawn_groups(&mut world, &[(12, 12)], 10).remove(0);
        let mut queued = order(1, 1, &ids, 20, 48);
        if let CommandKind::Move { queue, .. } = &mut queued.kind {
            *queue = true;
        }
        world.step(&[order(1, 0, &ids, 44, 12), queued]);
        let group = world.unit(ids[0]).unwrap().order_group;
        assert!(group != 0 && ids.iter().all(|id| world.unit(*id).unwrap().order_group == group), "one group for the current order");
        // Walk until every unit is on its queued order: it has no group, and every unit's path
        // ends at the queued order's point (shared or searched, never spread).
        let goal = off_grid_lines(WorldPos::from_int(20, 48), Fixed::ONE);
        let mut checked = std::collections::BTreeSet::new();
        for _ in 0..400 {
            if world.units().all(|u| u.state == UnitState::Idle) {
                break;
            }
            world.step(&[]);
            for id in &ids {
                let unit = world.unit(*id).unwrap();
                if unit.orders.first() != Some(&GoalSpec::Point(WorldPos::from_int(20, 48))) {
                    continue;
                }
                assert_eq!(unit.order_group, 0, "unit {id:?}: a queued order has no group");
                if !unit.settle
                    && !unit.resume
                    && unit.detour == 0
                    && let Some(end) = unit.waypoints().last()
                {
                    assert_eq!(*end, goal, "unit {id:?} ends at the queued order's point");
                    checked.insert(*id);
                }
            }
        }
        let checked = checked.len();
        assert!(checked > ids.len() / 2, "{checked} paths checked");
        world.check_invariants().unwrap();
    }

    #[test]
    fn a_repeated_order_to_a_spread_group_plans_the_group_again_together() {
        let mut world = open_world(Settings::default());
        let ids = spawn_groups(&mut world, &[(12, 12)], 20).remove(0);
        world.step(&[order(1, 0, &ids, 44, 40)]);
        world.step(&[]);
        world.step(&[]);
        // The group walks in its shape, so planning it again from where it stands gives the same
        // ends, with the same unit (the first of the order) making the search.
        let before = ends(&world, &ids);
        world.step(&[order(4, 0, &ids, 44, 40)]);
        assert_eq!((world.path_stats().long, world.path_stats().shared), (1, 19), "the whole group planned again");
        assert_eq!(ends(&world, &ids), before);
    }

    #[test]
    fn spread_ends_do_not_depend_on_the_thread_count_and_survive_save_and_load() {
        let run = |threads: usize, reload: bool| {
            let mut world = open_world(Settings::default());
            world.set_threads(threads).unwrap();
            let groups = spawn_groups(&mut world, &[(12, 12), (12, 40), (30, 30)], 15);
            world.step(&[wall(1, 47, 32, 2, 30)]);
            let all: Vec<EntityId> = groups.concat();
            world.step(&[order(2, 0, &groups[0], 44, 30), order(2, 1, &groups[1], 44, 34), order(2, 2, &groups[2], 44, 32)]);
            let ends = ends(&world, &all);
            if reload {
                world = World::load(&world.save()).unwrap();
                world.set_threads(threads).unwrap();
            }
            run_idle(&mut world, 400);
            (ends, positions(&world, &all), world.state_hash())
        };
        let one = run(1, false);
        assert_eq!(one, run(3, false));
        assert_eq!(one, run(2, true));
    }

    #[test]
    fn latency_counts_the_turns_a_group_waits_for_the_search_budget() {
        // The count cap and the work budget at their least both take one search a turn.
        latency_with(Settings { max_paths_per_turn: 1, ..Settings::default() });
        latency_with(Settings { long_search_budget: 1, ..Settings::default() });
    }

    /// Six groups of two, 20 m apart (too far to share), and the orders of turn 1: group 0's
    /// first unit, groups 1 to 5, then group 0's second unit (last in the queue, sharing its
    /// group's search), each group to the east edge.
    fn six_groups(settings: Settings, threads: usize) -> (World, Vec<Vec<EntityId>>, Vec<Command>) {
        let mut world = open_world(settings);
        world.set_threads(threads).unwrap();
        let groups = spawn_groups(&mut world, &[(8, 8), (8, 28), (8, 48), (28, 8), (28, 28), (28, 48)], 2);
        let mut orders = vec![order(1, 0, &groups[0][..1], 56, 8)];
        for (g, z) in [(1, 28), (2, 48), (3, 8), (4, 28), (5, 48)] {
            orders.push(order(1, g, &groups[g as usize], 56 + (g as i32 % 2) * 2, z));
        }
        orders.push(order(1, 6, &groups[0][1..], 56, 8));
        (world, groups, orders)
    }

    #[test]
    fn the_search_budget_cuts_in_request_order_the_same_on_every_thread_count() {
        // With a budget of 1 every turn takes exactly one search: the searches' own work, in
        // request order.
        let (mut world, _, orders) = six_groups(Settings { long_search_budget: 1, ..Settings::default() }, 1);
        let mut works = Vec::new();
        world.step(&orders);
        for _ in 0..6 {
            assert_eq!(world.path_stats().long, 1, "one search a turn, however small the budget");
            works.push(world.path_stats().long_work);
            world.step(&[]);
        }
        assert!(works.iter().all(|&w| w > u64::from(SEARCH_BASE_WORK)), "{works:?}");
        // A budget the first two searches fall short of by one: the third crosses it and is
        // kept, whatever was read after it; the next turn takes the other three (their work is
        // below the budget).
        let budget = works[0] + works[1] + 1;
        assert!(works[3] + works[4] < budget, "{works:?}");
        let settings = Settings { long_search_budget: u32::try_from(budget).unwrap(), ..Settings::default() };
        let mut runs = Vec::new();
        for threads in [1, 2, 8] {
            let (mut world, groups, orders) = six_groups(settings, threads);
            let mut seen = Vec::new();
            let report = world.step(&orders);
            let stats = world.path_stats();
            assert_eq!((stats.long, stats.shared, stats.long_work), (3, 3, works[0] + works[1] + works[2]), "{threads} threads");
            let waiting =
                |world: &World, group: &[EntityId]| group.iter().all(|id| world.unit(*id).unwrap().state == UnitState::WaitingForPath);
            // Groups 0 to 2 walk (group 0's second unit too, though it stands after the cutoff
            // in the queue: it shares a search taken); groups 3 to 5 wait, in order.
            assert!((0..3).all(|g| !waiting(&world, &groups[g])), "{threads} threads");
            assert!((3..6).all(|g| waiting(&world, &groups[g])), "{threads} threads");
            // Searches computed ahead and dropped: none on one thread; how many on more depends
            // on the batching, which is why they are not compared across thread counts.
            if threads == 1 {
                assert_eq!(stats.discarded, 0, "one thread computes no search it then drops");
            }
            seen.push((report.hash, PathStats { discarded: 0, ..stats }));
            let report = world.step(&[]);
            let stats = world.path_stats();
            assert_eq!((stats.long, stats.long_work), (3, works[3] + works[4] + works[5]), "{threads} threads: the rest, next turn");
            assert!((0..6).all(|g| !waiting(&world, &groups[g])));
            seen.push((report.hash, PathStats { discarded: 0, ..stats }));
            runs.push(seen);
        }
        assert_eq!(runs[0], runs[1], "1 and 2 threads");
        assert_eq!(runs[0], runs[2], "1 and 8 threads");
    }

    #[test]
    fn a_short_range_request_that_becomes_a_long_search_spends_the_budget() {
        // A unit whose path ran out asks for a short-range detour: that is a long-range search,
        // whose work counts against the turn's budget, ahead of the long-range requests.
        let run = |settings: Settings, others: bool| {
            let mut world = open_world(settings);
            let groups = spawn_groups(&mut world, &[(8, 8), (8, 28), (8, 48)], 1);
            let lone = groups[0][0];
            let unit = world.units.get_mut(lone).unwrap();
            unit.orders.push(GoalSpec::Point(WorldPos::from_int(56, 8)));
            unit.state = UnitState::WaitingForPath;
            world.requests.push(PathRequest::short(lone));
            let orders = if others { vec![order(1, 0, &groups[1], 56, 28), order(1, 1, &groups[2], 56, 48)] } else { Vec::new() };
            world.step(&orders);
            let waiting = |g: usize| world.unit(groups[g][0]).unwrap().state == UnitState::WaitingForPath;
            (world.path_stats(), [0, 1, 2].map(waiting))
        };
        let (alone, waiting) = run(Settings::default(), false);
        assert_eq!((alone.long, alone.short, waiting[0]), (1, 0, false), "{alone:?}");
        assert!(alone.long_work > u64::from(SEARCH_BASE_WORK), "{alone:?}");
        // A budget the detour's search alone fills: one long-range request is still taken (every
        // turn takes one), the next waits.
        let settings = Settings { long_search_budget: u32::try_from(alone.long_work).unwrap(), ..Settings::default() };
        let (stats, waiting) = run(settings, true);
        assert_eq!((stats.long, waiting), (2, [false, false, true]), "{stats:?}");
        assert!(stats.long_work > alone.long_work, "{stats:?}");
    }

    /// Two blocked units' replans queued before two fresh orders, one search a turn: the fresh
    /// orders go ahead of the replans, but for the oldest replan on even turns, whatever the turn
    /// the orders come in; the outcome is the same on 1 and 3 threads.
    #[test]
    fn first_searches_go_ahead_of_replans_and_the_oldest_replan_every_second_turn() {
        let run = |start_odd: bool, threads: usize| {
            let mut world = open_world(Settings { long_search_budget: 1, ..Settings::default() });
            world.set_threads(threads).unwrap();
            let groups = spawn_groups(&mut world, &[(8, 8), (8, 28), (8, 48), (28, 8)], 1);
            let ids: Vec<EntityId> = groups.iter().map(|g| g[0]).collect();
            if world.turn().is_multiple_of(2) == start_odd {
                world.step(&[]);
            }
            // One blocked for two turns, one on its first blocked turn with a search round a
            // held passage made.
            for (&id, (stalled, held)) in ids[..2].iter().zip([(2, 0), (1, 1)]) {
                let unit = world.units.get_mut(id).unwrap();
                unit.orders.push(GoalSpec::Point(WorldPos::from_int(56, 30)));
                unit.state = UnitState::WaitingForPath;
                (unit.stalled, unit.held_searches) = (stalled, held);
                world.requests.push(PathRequest::long(id));
            }
            let turn = world.turn();
            world.step(&[order(turn, 0, &ids[2..3], 56, 8), order(turn, 1, &ids[3..4], 56, 48)]);
            let mut served = Vec::new();
            for _ in 0..6 {
                for (k, &id) in ids.iter().enumerate() {
                    if world.unit(id).unwrap().state != UnitState::WaitingForPath && !served.contains(&k) {
                        served.push(k);
                    }
                }
                world.step(&[]);
            }
            (served, world.state_hash())
        };
        // Replans are units 0 and 1, fresh orders 2 and 3.
        let even = run(false, 1);
        assert_eq!(even.0, vec![0, 2, 1, 3], "an even turn takes the oldest replan first, then the orders go ahead");
        let odd = run(true, 1);
        assert_eq!(odd.0, vec![2, 0, 3, 1], "an odd turn takes the first order first");
        assert_eq!(even, run(false, 3));
        assert_eq!(odd, run(true, 3));
    }

    fn latency_with(settings: Settings) {
        let mut world = open_world(settings);
        let groups = spawn_groups(&mut world, &[(8, 8), (8, 48)], 5);
        world.step(&[order(1, 0, &groups[0], 56, 8), order(1, 1, &groups[1], 56, 48)]);
        assert_eq!((world.path_stats().long, world.path_stats().shared), (1, 4), "the first group's search only");
        let stats = world.scale_stats();
        assert_eq!((stats.latency.clone(), stats.waiting), (vec![5, 5], 5), "the second group still waits, one turn so far");
        assert_eq!(stats.answered, vec![5, 5], "the first group has its path, the second waits for one");
        world.step(&[]);
        let stats = world.scale_stats();
        assert_eq!(stats.latency, vec![5, 5], "the second group walked one turn after its order");
        assert_eq!(stats.answered, vec![5, 5], "and had its path then");
        assert_eq!((stats.waiting, stats.long_searches, stats.shared_paths, stats.max_queue), (0, 2, 8, 10));
        assert_eq!((stats.latency_quantile(500), stats.latency_quantile(990), stats.latency_quantile(1000)), (Some(0), Some(1), Some(1)));
        // Not state: a loaded world counts from zero and keeps the hash.
        let loaded = World::load(&world.save()).unwrap();
        assert_eq!(loaded.state_hash(), world.state_hash());
        assert_eq!(loaded.scale_stats(), ScaleStats::default());
    }
}
