//! What the long-range searches share: the caller-owned scratch, limits, outcomes, the open list with
//! its total order, and turning-point path reconstruction.
//!
//! The open list orders entries by `(f, ⌊h⌋, j, i)`, all ascending: lowest estimated total cost
//! first; among equal `f`, the entry closest to the goal (lowest `h` counted in whole straight
//! steps, `⌊h / STRAIGHT⌋`, so highest `g`); among those, the lowest row `j`, then the lowest column
//! `i`. The three keys pack into one `u128` (`f` in the high 64 bits, `⌊h⌋` and the navcell id
//! `j << 16 | i` in the low 64), so one integer comparison orders two entries. This order is total,
//! so a search expands the same nodes in the same order on every machine. A node's cost only changes when a strictly cheaper way
//! is found; an equally cheap later way keeps the first parent.

use std::collections::BinaryHeap;

use crate::grid::cost::{STRAIGHT, StepCounts};
use crate::grid::navcell::Navcell;
use crate::grid::pass_map::PassMap;
use crate::search::goal::{Goal, GoalRaster};
use crate::search::landmarks::{LandmarkBound, Landmarks};
use crate::search::node_table::{NodeRecord, NodeTable};

/// Limits of one search, filled in by the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchLimits {
    /// Most nodes the search may expand before it gives up and returns a partial path to the best
    /// node reached. `[Units: expansions]`
    pub node_budget: u32,
}

impl SearchLimits {
    /// No limit short of exhausting the grid.
    pub const UNLIMITED: SearchLimits = SearchLimits { node_budget: u32::MAX };
}

/// Why a path does not reach the goal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PartialReason {
    /// The node budget ran out first; the path leads to the expanded node nearest the goal.
    NodeBudget,
    /// The open list ran empty without reaching the goal, so no goal navcell is reachable. The path
    /// leads to the *expanded* node nearest the goal (lowest heuristic, then lowest cost, then lowest
    /// index). For A* that is the nearest reachable navcell by the heuristic; JPS expands only jump
    /// points, so its fallback can be farther away.
    Unreachable,
    /// The start navcell is impassable for the class, so the search did not run.
    StartImpassable,
}

/// Whether a search reached its goal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PathStatus {
    /// The path ends in a goal navcell and is a shortest one.
    Complete,
    /// The path ends elsewhere, for this reason.
    Partial(PartialReason),
}

/// The result of a search besides the path itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchOutcome {
    /// Whether the goal was reached.
    pub status: PathStatus,
    /// Nodes expanded (taken off the open list and closed). `[Units: nodes]`
    pub expanded: u32,
    /// Entries pushed onto the open list. `[Units: nodes]`
    pub pushed: u32,
}

/// A path as turning points: the start, every navcell where the direction changes, and the end.
/// Consecutive turning points are joined by straight or diagonal runs of navcells.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Path {
    waypoints: Vec<Navcell>,
    steps: StepCounts,
}

impl Path {
    /// An empty path, to be filled by a search.
    pub fn new() -> Self {
        Self::default()
    }

    /// The turning points, start first.
    pub fn waypoints(&self) -> &[Navcell] {
        &self.waypoints
    }

    /// The number of straight and diagonal steps along the path.
    pub fn steps(&self) -> StepCounts {
        self.steps
    }

    /// The fixed-point cost of the path (see [`crate::grid::cost`]).
    pub fn cost(&self) -> u64 {
        self.steps.cost()
    }

    /// Every navcell along the path, start first, by walking the runs between turning points.
    pub fn cells(&self) -> Vec<Navcell> {
        let mut cells = Vec::new();
        let Some(&first) = self.waypoints.first() else { return cells };
        cells.push(first);
        for pair in self.waypoints.windows(2) {
            let (mut i, mut j) = (i32::from(pair[0].i), i32::from(pair[0].j));
            let (ti, tj) = (i32::from(pair[1].i), i32::from(pair[1].j));
            while (i, j) != (ti, tj) {
                i += (ti - i).signum();
                j += (tj - j).signum();
                cells.push(Navcell::new(i as u16, j as u16));
            }
        }
        cells
    }

    /// Checks that the path is a legal octile walk on `map`: every step goes to an adjacent
    /// navcell, enters a passable one (only the start may be impassable: a stuck unit leaves it),
    /// never cuts a corner, and the step counts agree with the turning points. Escape paths from
    /// an impassable start are straight segments, not walks, and are not legal in this sense.
    ///
    /// # Errors
    /// The first illegal step.
    pub fn check_legal(&self, map: &PassMap) -> Result<(), String> {
        let cells = self.cells();
        let (mut straight, mut diagonal) = (0u64, 0u64);
        for pair in cells.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if !map.is_passable(b) {
                return Err(format!("path enters impassable navcell {b}"));
            }
            let (dx, dy) = (i32::from(b.i) - i32::from(a.i), i32::from(b.j) - i32::from(a.j));
            if dx.abs() > 1 || dy.abs() > 1 || (dx, dy) == (0, 0) {
                return Err(format!("non-adjacent step {a} -> {b}"));
            }
            if dx != 0 && dy != 0 {
                if !map.is_passable(Navcell::new(b.i, a.j)) || !map.is_passable(Navcell::new(a.i, b.j)) {
                    return Err(format!("diagonal step {a} -> {b} cuts a corner"));
                }
                diagonal += 1;
            } else {
                straight += 1;
            }
        }
        if (straight, diagonal) != (self.steps.straight, self.steps.diagonal) {
            return Err(format!("step counts {:?} disagree with the cells ({straight}, {diagonal})", self.steps));
        }
        Ok(())
    }

    fn clear(&mut self) {
        self.waypoints.clear();
        self.steps = StepCounts::default();
    }

    /// Makes the path a single straight segment (possibly not octilinear) from `from` to `to`, for
    /// escapes off impassable navcells. Its step counts are those of the octile walk between them.
    pub(crate) fn set_escape(&mut self, from: Navcell, to: Navcell) {
        self.clear();
        self.waypoints.push(from);
        if to != from {
            self.waypoints.push(to);
            let dx = (i64::from(to.i) - i64::from(from.i)).unsigned_abs();
            let dy = (i64::from(to.j) - i64::from(from.j)).unsigned_abs();
            self.steps.add_segment(dx, dy);
        }
    }

    /// Appends a turning point, merging it with the previous run when the direction is unchanged.
    fn push_point(&mut self, cell: Navcell) {
        let n = self.waypoints.len();
        if n >= 1 {
            let last = self.waypoints[n - 1];
            if last == cell {
                return;
            }
            let dx = (i64::from(cell.i) - i64::from(last.i)).unsigned_abs();
            let dy = (i64::from(cell.j) - i64::from(last.j)).unsigned_abs();
            self.steps.add_segment(dx, dy);
        }
        if n >= 2 {
            let (a, b) = (self.waypoints[n - 2], self.waypoints[n - 1]);
            let d1 = (sign(a.i, b.i), sign(a.j, b.j));
            let d2 = (sign(b.i, cell.i), sign(b.j, cell.j));
            if d1 == d2 {
                self.waypoints[n - 1] = cell;
                return;
            }
        }
        self.waypoints.push(cell);
    }
}

fn sign(from: u16, to: u16) -> i32 {
    (i32::from(to) - i32::from(from)).signum()
}

/// A navcell id: `j << 16 | i`. Ordering ids orders navcells by row, then column.
#[inline(always)]
pub(crate) fn node_id(i: i32, j: i32) -> u32 {
    ((j as u32) << 16) | i as u32
}

/// The coordinates of a navcell id.
#[inline(always)]
pub(crate) fn id_coords(id: u32) -> (i32, i32) {
    ((id & 0xffff) as i32, (id >> 16) as i32)
}

/// The packed open-list key of an entry: `f`, then `⌊h / STRAIGHT⌋` (below 2^17 on any grid with
/// the octile heuristic; saturated at 2^32 − 1), then the navcell id. The heap is a max-heap, so it stores the bitwise complement: the largest stored
/// key is the lowest entry.
#[inline(always)]
fn open_key(f: u64, h: u64, id: u32) -> u128 {
    // `⌊h⌋` saturates at 32 bits so that it can never spill into `f` (a landmark bound is a true
    // distance, which only a serpentine of billions of navcells would push past 2^32 steps).
    let steps = (h / STRAIGHT).min(u64::from(u32::MAX));
    !((u128::from(f) << 64) | (u128::from(steps) << 32) | u128::from(id))
}

/// The open list: a binary max-heap of packed keys ([`open_key`]) plus one entry held beside it.
///
/// The held entry is the best of the entries pushed since the last pop, when it is better than
/// the heap's top at that pop (a jump point search's next node is very often a successor of the
/// node just expanded, straight on towards the goal). Such an entry never enters the heap, which
/// saves its sift-up and its sift-down. [`OpenList::pop`] still returns the lowest entry of all
/// (the heap's and the held one), and keys are unique (the navcell id is part of the key, and a
/// node's cost only ever falls), so the pop order is exactly that of a plain heap.
#[derive(Clone, Debug, Default)]
pub(crate) struct OpenList {
    heap: BinaryHeap<u128>,
    /// A stored key (larger is better, as in the heap), or none.
    held: Option<u128>,
}

impl OpenList {
    fn clear(&mut self) {
        self.heap.clear();
        self.held = None;
    }

    /// Adds a stored key; the better of it and the held one stays held.
    #[inline(always)]
    fn push(&mut self, key: u128) {
        match self.held {
            Some(held) if held >= key => self.heap.push(key),
            Some(held) => {
                self.heap.push(held);
                self.held = Some(key);
            }
            None => self.held = Some(key),
        }
    }

    /// Removes and returns the best stored key.
    #[inline(always)]
    fn pop(&mut self) -> Option<u128> {
        if let Some(held) = self.held
            && self.heap.peek().is_none_or(|&top| held > top)
        {
            self.held = None;
            return Some(held);
        }
        self.heap.pop()
    }
}

/// Reusable memory for long-range searches. Create one per thread, pass it to every query: once it
/// has been reserved for the largest grid it sees ([`SearchScratch::reserve`]), or has served the
/// largest searches, searches allocate nothing (except growing the caller's [`Path`]). It holds no
/// state that outlives a query and is never hashed or serialized.
#[derive(Clone, Debug, Default)]
pub struct SearchScratch {
    pub(crate) nodes: NodeTable,
    pub(crate) open: OpenList,
    pub(crate) goal: GoalRaster,
    pub(crate) chain: Vec<u32>,
    /// Navcells pushed during the current expansion whose heuristic is still to be computed
    /// (landmark searches only): `(id, g)`.
    pub(crate) pending: Vec<(u32, u64)>,
}

impl SearchScratch {
    /// An empty scratch; it grows on first use.
    pub fn new() -> Self {
        Self::default()
    }

    /// Grows the scratch for searches on `map` now, so that no search on it allocates (except
    /// growing the caller's [`Path`] and the open list): the goal raster, the compact node records
    /// of a jump point search, and the one record per navcell (16 bytes) that A* and searches
    /// touching thousands of navcells use.
    pub fn reserve(&mut self, map: &PassMap) {
        self.goal.reset(&Goal::navcell_center(0, 0, map.cell_size()), map.width(), map.height(), map.cell_size());
        self.nodes.reserve(map.width() as usize * map.height() as usize);
    }

    /// Readies the scratch for a search on `map` towards `goal`.
    pub(crate) fn begin(&mut self, map: &PassMap, goal: &Goal, dense: bool) {
        self.nodes.begin(map.width(), map.height(), dense);
        self.open.clear();
        self.pending.clear();
        self.goal.reset(goal, map.width(), map.height(), map.cell_size());
    }

    /// The navcells closed by the last search, in index order (for renderings and tests).
    pub fn closed_cells(&self) -> Vec<Navcell> {
        self.nodes
            .closed_ids()
            .into_iter()
            .map(|id| {
                let (i, j) = id_coords(id);
                Navcell::new(i as u16, j as u16)
            })
            .collect()
    }

    /// Writes the path from the start to `end` (navcell ids) into `path`, inserting the bend of
    /// every diagonal-then-straight jump and merging collinear runs.
    pub(crate) fn reconstruct(&mut self, start: u32, end: u32, path: &mut Path) {
        path.clear();
        self.chain.clear();
        let mut at = end;
        self.chain.push(at);
        while at != start {
            let slot = self.nodes.find(at).expect("every node on the parent chain has a record");
            at = self.nodes.get(slot).parent;
            self.chain.push(at);
        }
        let cell = |id: u32| {
            let (i, j) = id_coords(id);
            (i64::from(i), i64::from(j))
        };
        for k in (0..self.chain.len()).rev() {
            let (i, j) = cell(self.chain[k]);
            if k + 1 < self.chain.len() {
                let (pi, pj) = cell(self.chain[k + 1]);
                let (dx, dy) = (i - pi, j - pj);
                let diag = dx.abs().min(dy.abs());
                if diag != 0 && dx.abs() != dy.abs() {
                    let bend = (pi + diag * dx.signum(), pj + diag * dy.signum());
                    path.push_point(Navcell::new(bend.0 as u16, bend.1 as u16));
                }
            }
            path.push_point(Navcell::new(i as u16, j as u16));
        }
    }
}

/// One search in progress: the caller's scratch and the heuristic's optional landmark bound. It
/// dereferences to the scratch, so successor generators read the goal and nodes through it.
pub(crate) struct Search<'a> {
    scratch: &'a mut SearchScratch,
    landmarks: Option<LandmarkBound<'a>>,
}

impl std::ops::Deref for Search<'_> {
    type Target = SearchScratch;

    fn deref(&self) -> &SearchScratch {
        self.scratch
    }
}

impl std::ops::DerefMut for Search<'_> {
    fn deref_mut(&mut self) -> &mut SearchScratch {
        self.scratch
    }
}

impl Search<'_> {
    /// The heuristic of navcell `(i, j)`: the octile distance to the goal's bounding box, raised to
    /// the landmark bound when there is one. Both are consistent, so their maximum is too.
    #[inline]
    pub(crate) fn heuristic(&self, i: i32, j: i32) -> u64 {
        let h = self.scratch.goal.heuristic(i, j);
        match &self.landmarks {
            Some(bound) => h.max(bound.bound(i, j)),
            None => h,
        }
    }

    /// Offers navcell `(i, j)` with cost `g` and parent id `parent`; pushes it when it is new or
    /// cheaper. Returns whether it was pushed.
    #[inline]
    pub(crate) fn relax(&mut self, g: u64, parent: u32, i: i32, j: i32) -> bool {
        let id = node_id(i, j);
        let nodes = &mut self.scratch.nodes;
        let open = nodes.open_stamp();
        let (node, seen) = nodes.entry_record(id);
        if seen && (node.stamp == open + 1 || node.g <= g) {
            return false;
        }
        *node = NodeRecord { g, parent, stamp: open };
        if self.landmarks.is_some() {
            // The landmark distances of successors lie scattered over a large table; computing
            // them together after the expansion lets the processor fetch them in parallel.
            self.scratch.pending.push((id, g));
        } else {
            let h = self.heuristic(i, j);
            self.scratch.open.push(open_key(g + h, h, id));
        }
        true
    }

    /// Pushes the navcells left pending by [`Search::relax`] onto the open list. The open list
    /// orders entries by their keys alone, so pushing them later changes nothing.
    #[inline(always)]
    pub(crate) fn flush(&mut self) {
        if self.landmarks.is_some() {
            self.flush_pending();
        }
    }

    fn flush_pending(&mut self) {
        let Some(bound) = &self.landmarks else { return };
        for &(id, g) in &self.scratch.pending {
            let (i, j) = id_coords(id);
            let h = self.scratch.goal.heuristic(i, j).max(bound.bound(i, j));
            self.scratch.open.push(open_key(g + h, h, id));
        }
        self.scratch.pending.clear();
    }
}

/// Tracks the closed node nearest the goal for partial paths: lowest `(h, g, id)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BestNode {
    pub(crate) key: (u64, u64, u32),
}

impl BestNode {
    pub(crate) fn new(start: u32, h: u64) -> Self {
        Self { key: (h, 0, start) }
    }

    #[inline]
    pub(crate) fn offer(&mut self, h: u64, g: u64, index: u32) {
        if (h, g, index) < self.key {
            self.key = (h, g, index);
        }
    }

    pub(crate) fn index(&self) -> u32 {
        self.key.2
    }
}

/// The successor generator of one search algorithm: called once per expanded node with its
/// coordinates, cost and arrival direction (`(0, 0)` for the start); it offers successors through
/// [`SearchScratch::relax`] and returns how many it pushed.
pub(crate) trait Expander {
    // The node's fields travel as plain arguments: this is the innermost call of the search and a
    // struct would only be unpacked again.
    #[allow(clippy::too_many_arguments)]
    fn expand(&mut self, map: &PassMap, scratch: &mut Search<'_>, id: u32, i: i32, j: i32, g: u64, dir: (i32, i32)) -> u32;

    /// Whether the search touches so many navcells that its node records should use the dense
    /// layout from the start (see [`crate::search::node_table`]).
    const DENSE: bool = false;
}

/// Runs a best-first search with the given successor generator. Shared by A* and JPS so that both
/// have the same start handling, goal test (on expansion, which keeps the result optimal), budget
/// and partial-path rules.
#[allow(clippy::too_many_arguments)] // the query, the optional landmarks, and the successor generator
pub(crate) fn drive<E: Expander>(
    map: &PassMap,
    start: Navcell,
    goal: &Goal,
    limits: &SearchLimits,
    landmarks: Option<&Landmarks>,
    scratch: &mut SearchScratch,
    path: &mut Path,
    expander: &mut E,
) -> SearchOutcome {
    scratch.begin(map, goal, E::DENSE);
    let landmarks = landmarks.and_then(|table| {
        assert!(table.width() == map.width() && table.height() == map.height(), "landmarks built for another map");
        LandmarkBound::new(table, &mut scratch.goal)
    });
    let scratch = &mut Search { scratch, landmarks };
    path.clear();
    let mut outcome = SearchOutcome { status: PathStatus::Complete, expanded: 0, pushed: 0 };
    if !map.is_passable(start) {
        path.push_point(start);
        outcome.status = PathStatus::Partial(PartialReason::StartImpassable);
        return outcome;
    }
    let (si, sj) = (i32::from(start.i), i32::from(start.j));
    let start_id = node_id(si, sj);
    if scratch.goal.contains(si, sj) {
        path.push_point(start);
        return outcome;
    }
    if scratch.goal.is_empty() {
        path.push_point(start);
        outcome.status = PathStatus::Partial(PartialReason::Unreachable);
        return outcome;
    }
    scratch.relax(0, start_id, si, sj);
    scratch.flush();
    outcome.pushed = 1;
    let mut best = BestNode::new(start_id, scratch.heuristic(si, sj));
    while let Some(key) = scratch.open.pop() {
        let key = !key;
        let f = (key >> 64) as u64;
        let id = key as u32;
        let (i, j) = id_coords(id);
        // An entry left behind when its node got a cheaper cost has a larger key than the newer
        // entry, so it only comes up after that one closed the node: closed means stale.
        let Some(node) = scratch.nodes.close(id) else { continue };
        debug_assert_eq!(node.g + scratch.heuristic(i, j), f, "an open node's only live entry");
        let h = f - node.g;
        outcome.expanded += 1;
        if scratch.goal.contains(i, j) {
            scratch.reconstruct(start_id, id, path);
            return outcome;
        }
        best.offer(h, node.g, id);
        if outcome.expanded >= limits.node_budget {
            scratch.reconstruct(start_id, best.index(), path);
            outcome.status = PathStatus::Partial(PartialReason::NodeBudget);
            return outcome;
        }
        let dir = if id == start_id {
            (0, 0)
        } else {
            let (pi, pj) = id_coords(node.parent);
            let (dx, dy) = (i - pi, j - pj);
            // The last run of a diagonal-then-straight jump is straight.
            if dx.abs() == dy.abs() {
                (dx.signum(), dy.signum())
            } else if dx.abs() > dy.abs() {
                (dx.signum(), 0)
            } else {
                (0, dy.signum())
            }
        };
        outcome.pushed += expander.expand(map, scratch, id, i, j, node.g, dir);
        scratch.flush();
    }
    scratch.reconstruct(start_id, best.index(), path);
    outcome.status = PathStatus::Partial(PartialReason::Unreachable);
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The open list with its held entry pops exactly what a plain binary heap of the same
        /// pushes pops, in the same order (the oracle), under any interleaving of pushes and pops.
        /// Keys are drawn from a small range, so pushes often beat or tie the held entry and the
        /// heap's top.
        #[test]
        fn the_open_list_pops_what_a_plain_heap_pops(ops in prop::collection::vec(prop::option::of(0u128..64), 0..200)) {
            let (mut open, mut oracle) = (OpenList::default(), BinaryHeap::new());
            for op in ops {
                match op {
                    Some(key) => {
                        open.push(key);
                        oracle.push(key);
                    }
                    None => prop_assert_eq!(open.pop(), oracle.pop()),
                }
            }
            while let Some(key) = oracle.pop() {
                prop_assert_eq!(open.pop(), Some(key));
            }
            prop_assert_eq!(open.pop(), None);
            open.push(3);
            open.clear();
            prop_assert_eq!(open.pop(), None);
        }
    }
}
