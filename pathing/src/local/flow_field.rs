//! Integer flow fields over a rectangular navcell region: for every navcell, the exact cost of its
//! shortest path to a goal and the next step along one, so that formation members steer round
//! dead ends (docs/pathfinding-rules.md, "Flow fields", and docs/formation-rules.md).
//!
//! # Costs
//!
//! A field is built over one class's [`PassMap`] (the bit planes the long-range search reads) and
//! a rectangle of navcells, the *region*. Moves are those of the long-range search: octile steps
//! between passable navcells, a diagonal step only when both orthogonal neighbours it passes are
//! passable too, costing [`STRAIGHT`] and [`DIAGONAL`] ([`crate::grid::cost`], 30 fractional bits).
//! Only navcells inside the region take part, so a navcell's field distance is exactly the cost of
//! the shortest path from it to the goal that stays in the region: what [`crate::find_path_astar`]
//! returns on the grid with every navcell outside the region made impassable (the property tests
//! check this on random grids). Impassable navcells, and passable ones with no such path, have no
//! distance.
//!
//! The goal ([`FlowGoal`]) is one navcell or a goal shape ([`Goal`], with the exact "navcell inside
//! goal" rule of [`Goal::contains_navcell`]; point goals off the grid are clamped onto it, as the
//! searches do), clipped to the region: every passable navcell of the region inside the goal has
//! distance 0.
//!
//! # Build
//!
//! Dijkstra's algorithm from all goal navcells at once, with the open list replaced by two FIFO
//! queues, one per step cost. Nodes leave the queues in nondecreasing cost order, so the costs
//! pushed onto each queue (the cost popped plus that queue's step cost) are nondecreasing too:
//! each queue stays sorted without any sorting, and the cheaper of the two heads is the global
//! minimum. Every operation is `O(1)`; an entry made stale by a later, cheaper push is skipped
//! when it comes up. With exact integer costs this gives exactly Dijkstra's distances, which do
//! not depend on the order equal-cost entries leave the queues.
//!
//! Before the search the region's passability is copied out of the row bit plane (64 navcells a
//! read) into one byte per navcell, and each navcell's legal steps into an 8-bit mask (shifted
//! rows, no branches). Relaxation is branch-free: each of the 8 neighbours is compared, written
//! and queued unconditionally, and the queue's tail only advances when the step was legal and
//! strictly cheaper. Whether it is is close to random near obstacles, so a branch would mispredict.
//!
//! # Next step and its tie-break
//!
//! A reachable navcell's next step goes to the neighbour `n` on a shortest path: the step is legal
//! and `distance(n) + step cost = distance(cell)` (every reachable navcell off the goal has one).
//! Among several such neighbours the one with the lowest distance wins, which means a diagonal
//! step before a straight one (paths bend once: diagonal first, then straight), and among equal
//! distances the first in the fixed order east, north, west, south (straight) and north-east,
//! north-west, south-west, south-east (diagonal). The order is total, and the choice depends only
//! on the final distances, so it is the same whatever order the build met the navcells in; it is
//! computed when asked (at most 8 look-ups), not stored. Following next steps from any reachable
//! navcell reaches a goal navcell at exactly its distance. Goal navcells have no next step.
//!
//! # Region and rebuild trigger
//!
//! [`flow_region`] is a formation's region (docs/formation-rules.md): the box of the members' positions (and of the
//! formation's move position, so the path from it to the first waypoint is covered), extended by
//! the path's waypoints in order until the path length from the move position reaches
//! [`FlowRegionParams::ahead_distance`] (the waypoint that reaches it is included, so is the
//! first waypoint always), grown by half [`FlowRegionParams::corridor_width`] on every side (the
//! formations use 30 m) and clamped to the grid. [`needs_rebuild`] is the rebuild trigger: the move
//! position has come within a trigger distance of the last waypoint the region was built for.
//!
//! # Reuse
//!
//! A [`FlowField`] owns its buffers: build into the same field every time and, once its buffers
//! have grown to the largest region it sees, a rebuild allocates nothing. Its answers never depend
//! on what it was built for before. Like the search scratch it is workspace data, derived from
//! the pass map, and is never hashed or serialized.
//!
//! # Example
//!
//! ```
//! use pathing::flow_field::{FlowField, FlowGoal};
//! use pathing::{CellRect, Navcell, PassMap, movingai};
//!
//! // A wall with a gap at its north end; the goal is behind it.
//! let map = movingai::parse_map("type octile\nheight 3\nwidth 4\nmap\n....\n.@..\n.@..\n").unwrap();
//! let pass = PassMap::build(&map.grid, movingai::LAND);
//! let goal = map.to_navcell(2, 2).unwrap();
//! let mut field = FlowField::new();
//! let stats = field.build(&pass, CellRect::full(4, 3), &FlowGoal::Cell(goal));
//! assert_eq!((stats.goal_cells, stats.reachable), (1, 10));
//!
//! // From the other side of the wall: two steps north, two east through the gap, two south
//! // (no diagonal: it would cut the wall's corner).
//! let start = map.to_navcell(0, 2).unwrap();
//! let mut at = start;
//! let mut steps = 0;
//! while let Some(next) = field.next(at) {
//!     at = next;
//!     steps += 1;
//! }
//! assert_eq!((at, steps), (goal, 6));
//! assert_eq!(field.distance(start), Some(6 * pathing::cost::STRAIGHT));
//! ```

use crate::geometry::{Fixed, WorldPos, div_ceil, div_floor, raw};
use crate::grid::cost::{DIAGONAL, STRAIGHT};
use crate::grid::navcell::{CellRect, Navcell};
use crate::grid::pass_map::PassMap;
use crate::search::goal::{Goal, GoalRaster};

/// What a flow field leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowGoal {
    /// One navcell. A navcell outside the region (or impassable) leaves the field with no goal,
    /// so no navcell is reachable.
    Cell(Navcell),
    /// The navcells inside a goal shape, as [`Goal::contains_navcell`] defines them for the whole
    /// grid, clipped to the region.
    Shape(Goal),
}

/// Counts from the last build of a [`FlowField`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowStats {
    /// Passable navcells of the region inside the goal (distance 0). `[Units: navcells]`
    pub goal_cells: u32,
    /// Navcells of the region with a distance, goal navcells included. `[Units: navcells]`
    pub reachable: u32,
}

/// The eight steps `(dx, dz)`: east, north, west, south, north-east, north-west, south-west,
/// south-east. Bit `k` of a navcell's move mask is step `k`.
const STEPS: [(i32, i32); 8] = [(1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)];

/// The order in which next steps are tried: the diagonals, then the straight steps (indices into
/// [`STEPS`]). The first legal step on a shortest path wins.
const TIE_BREAK: [usize; 8] = [4, 5, 6, 7, 0, 1, 2, 3];

/// The cost of each of [`STEPS`].
const STEP_COSTS: [u64; 8] = [STRAIGHT, STRAIGHT, STRAIGHT, STRAIGHT, DIAGONAL, DIAGONAL, DIAGONAL, DIAGONAL];

/// The distance of a navcell without one.
const UNREACHED: u64 = u64::MAX;

/// A queue entry: a padded index and the cost it was pushed with.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    cost: u64,
    index: usize,
}

/// What [`Fifo::peek`] gives for an empty queue: a cost no navcell has.
const END: Entry = Entry { cost: u64::MAX, index: 0 };

/// A FIFO queue that is only ever appended to during a build and reset between builds. Its
/// `entries` only grow (their length is the capacity in use), so that an entry can be written
/// unconditionally and then kept or not by bumping `tail`: the search's inner loop has no branch
/// on whether a neighbour improved.
#[derive(Clone, Debug, Default)]
struct Fifo {
    entries: Vec<Entry>,
    head: usize,
    tail: usize,
}

impl Fifo {
    fn reset(&mut self) {
        (self.head, self.tail) = (0, 0);
    }

    /// Makes room for `extra` more entries (amortized doubling).
    #[inline(always)]
    fn reserve(&mut self, extra: usize) {
        if self.tail + extra > self.entries.len() {
            let n = (self.tail + extra).max(2 * self.entries.len()).max(1024);
            self.entries.resize(n, END);
        }
    }

    /// Writes `entry` at the tail and keeps it when `keep`. Needs room reserved.
    #[inline(always)]
    fn push_if(&mut self, entry: Entry, keep: bool) {
        self.entries[self.tail] = entry;
        self.tail += usize::from(keep);
    }

    /// The head entry, or [`END`] when empty.
    #[inline(always)]
    fn peek(&self) -> Entry {
        if self.head < self.tail { self.entries[self.head] } else { END }
    }
}

/// An integer distance field with next steps over a rectangular region of one class's navcells.
///
/// Build it with [`FlowField::build`], reusing the same value for every rebuild; read it with
/// [`FlowField::distance`], [`FlowField::next`] and [`FlowField::direction`].
#[derive(Clone)]
pub struct FlowField {
    /// The region of the last build, clipped to the grid (all zero when empty).
    region: CellRect,
    /// Side of one navcell of the grid built on. `[Units: metres]`
    cell_size: Fixed,
    /// Grid size of the last build. `[Units: navcells]`
    grid_width: u32,
    /// `[Units: navcells]`
    grid_height: u32,
    /// Padded row length: region width + 2. The region is surrounded by one ring of impassable
    /// navcells so that neighbours can be read without bounds tests on coordinates.
    stride: usize,
    /// 1 when passable and inside the region, per padded navcell.
    pass: Vec<u8>,
    /// Distance to the goal per padded navcell, [`UNREACHED`] when none. `[Units: cost, 2^-30 steps]`
    dist: Vec<u64>,
    /// The legal steps per padded navcell: bit `k` set when step `STEPS[k]` leads to a passable
    /// navcell of the region and, for a diagonal, both navcells beside it are too (0 for
    /// impassable navcells).
    moves: Vec<u8>,
    /// Entries pushed with a straight step, in nondecreasing cost order.
    straight_queue: Fifo,
    /// Entries pushed with a diagonal step (or as goal navcells), in nondecreasing cost order.
    diagonal_queue: Fifo,
    /// Goal spans per row for shape goals.
    goal: GoalRaster,
    stats: FlowStats,
}

impl std::fmt::Debug for FlowField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlowField").field("region", &self.region).field("stats", &self.stats).finish_non_exhaustive()
    }
}

impl Default for FlowField {
    fn default() -> Self {
        Self::new()
    }
}

impl FlowField {
    /// An empty field (no region, nothing reachable); it grows on first build.
    pub fn new() -> Self {
        Self {
            region: CellRect::new(0, 0, 0, 0),
            cell_size: Fixed::ONE,
            grid_width: 0,
            grid_height: 0,
            stride: 2,
            pass: Vec::new(),
            dist: Vec::new(),
            moves: Vec::new(),
            straight_queue: Fifo::default(),
            diagonal_queue: Fifo::default(),
            goal: GoalRaster::default(),
            stats: FlowStats::default(),
        }
    }

    /// Rebuilds the field over `region` (clipped to the grid) of `map`, towards `goal`, reusing
    /// this field's buffers. Returns the counts also kept in [`FlowField::stats`].
    ///
    /// Takes `O(area)` time; allocates only while its buffers grow to the largest region seen.
    pub fn build(&mut self, map: &PassMap, region: CellRect, goal: &FlowGoal) -> FlowStats {
        let region = region.intersect(&CellRect::full(map.width(), map.height()));
        let region = if region.is_empty() { CellRect::new(0, 0, 0, 0) } else { region };
        let (w, h) = ((region.i1 - region.i0) as usize, (region.j1 - region.j0) as usize);
        self.region = region;
        self.cell_size = map.cell_size();
        self.grid_width = map.width();
        self.grid_height = map.height();
        self.stride = w + 2;
        self.stats = FlowStats::default();
        let n_padded = (w + 2) * (h + 2);
        // Clear and refill rather than compare stamps: linear writes are cheaper than a stamp
        // test on every neighbour read of the search.
        self.pass.clear();
        self.pass.resize(n_padded, 0);
        self.moves.clear();
        self.moves.resize(n_padded, 0);
        self.dist.clear();
        self.dist.resize(n_padded, UNREACHED);
        self.straight_queue.reset();
        self.diagonal_queue.reset();
        if region.is_empty() {
            return self.stats;
        }
        self.read_passability(map);
        self.find_moves();
        let goal_cells = self.seed_goal(map, goal);
        let reachable = self.search();
        self.stats = FlowStats { goal_cells, reachable };
        self.stats
    }

    /// Copies the region's passability out of the row plane, 64 navcells per read.
    fn read_passability(&mut self, map: &PassMap) {
        let region = self.region;
        let w = (region.i1 - region.i0) as usize;
        for jj in 0..(region.j1 - region.j0) as usize {
            let line = region.j0 as usize + jj + 1;
            let row = &mut self.pass[(jj + 1) * self.stride + 1..][..w];
            for (k, chunk) in row.chunks_mut(64).enumerate() {
                let bits = map.rows.window_fwd(line, region.i0 as usize + 1 + 64 * k);
                for (b, cell) in chunk.iter_mut().enumerate() {
                    *cell = ((bits >> b) & 1) as u8;
                }
            }
        }
    }

    /// Sets the legal steps of every navcell of the region from the passability, a row at a time
    /// on shifted slices (no branches, so the compiler vectorizes it).
    fn find_moves(&mut self) {
        let (stride, w) = (self.stride, (self.region.i1 - self.region.i0) as usize);
        let pass = &self.pass[..];
        for jj in 1..=(self.region.j1 - self.region.j0) as usize {
            // `at(dx, dz)`: the row of neighbours `(dx, dz)` away, aligned with the row's navcells.
            let at = |dx: usize, dz: usize| &pass[(jj + dz - 1) * stride + dx..][..w];
            let (c, e, n, west, s) = (at(1, 1), at(2, 1), at(1, 2), at(0, 1), at(1, 0));
            let (ne, nw, sw, se) = (at(2, 2), at(0, 2), at(0, 0), at(2, 0));
            let out = &mut self.moves[jj * stride + 1..][..w];
            for k in 0..w {
                let (e, n, west, s) = (e[k], n[k], west[k], s[k]);
                let straight = e | (n << 1) | (west << 2) | (s << 3);
                let diagonal = ((ne[k] & e & n) << 4) | ((nw[k] & west & n) << 5) | ((sw[k] & west & s) << 6) | ((se[k] & e & s) << 7);
                // `c` is 0 or 1: impassable navcells have no moves.
                out[k] = (straight | diagonal) * c[k];
            }
        }
    }

    /// Gives every passable goal navcell of the region distance 0 and queues it; returns how many.
    fn seed_goal(&mut self, map: &PassMap, goal: &FlowGoal) -> u32 {
        let region = self.region;
        let mut seeded = 0;
        match goal {
            FlowGoal::Cell(cell) => {
                if region.contains(u32::from(cell.i), u32::from(cell.j)) {
                    seeded += u32::from(self.seed(self.padded(u32::from(cell.i), u32::from(cell.j))));
                }
            }
            FlowGoal::Shape(shape) => {
                self.goal.reset(shape, map.width(), map.height(), map.cell_size());
                if self.goal.is_empty() {
                    return 0;
                }
                let (i0, i1) = (region.i0 as i32, region.i1 as i32 - 1);
                for j in region.j0..region.j1 {
                    let line = self.goal.row(j as i32);
                    for span in line.spans {
                        for i in span.lo.max(i0)..=span.hi.min(i1) {
                            seeded += u32::from(self.seed(self.padded(i as u32, j)));
                        }
                    }
                }
            }
        }
        seeded
    }

    /// Makes a padded navcell a goal navcell when it is passable.
    fn seed(&mut self, index: usize) -> bool {
        if self.pass[index] == 0 {
            return false;
        }
        self.dist[index] = 0;
        self.diagonal_queue.reserve(1);
        self.diagonal_queue.push_if(Entry { cost: 0, index }, true);
        true
    }

    /// The padded index of navcell `(i, j)` of the region.
    #[inline]
    fn padded(&self, i: u32, j: u32) -> usize {
        (j - self.region.j0 + 1) as usize * self.stride + (i - self.region.i0 + 1) as usize
    }

    /// Dijkstra with one FIFO queue per step cost (see the module documentation); sets every
    /// distance and returns the number of navcells settled.
    fn search(&mut self) -> u32 {
        let stride = self.stride;
        let moves = &self.moves[..];
        let dist = &mut self.dist[..];
        // Owned locals rather than fields behind `&mut self`, so that heads and tails can stay in
        // registers (taking a `Vec` moves its pointer, it does not allocate).
        let mut straight_queue = std::mem::take(&mut self.straight_queue);
        let mut diagonal_queue = std::mem::take(&mut self.diagonal_queue);
        let mut settled = 0;
        loop {
            // The cheaper head; equal costs from the straight queue first (any order would do).
            let (s, d) = (straight_queue.peek(), diagonal_queue.peek());
            let take_straight = s.cost <= d.cost;
            let Entry { cost, index } = if take_straight { s } else { d };
            if cost == u64::MAX {
                break;
            }
            straight_queue.head += usize::from(take_straight);
            diagonal_queue.head += usize::from(!take_straight);
            // A later push lowered the distance: this entry is stale. Every push strictly lowers
            // the distance, so exactly one entry per navcell carries its final distance.
            if dist[index] != cost {
                continue;
            }
            settled += 1;
            let m = moves[index];
            straight_queue.reserve(4);
            diagonal_queue.reserve(4);
            // Branch-free relaxation: whether a step is legal and improves its neighbour is as
            // good as random near obstacles, so every neighbour is written and kept or not.
            for (bit, neighbour) in [(4, index + stride + 1), (5, index + stride - 1), (6, index - stride - 1), (7, index - stride + 1)] {
                relax(dist, &mut diagonal_queue, cost + DIAGONAL, neighbour, (m >> bit) & 1 != 0);
            }
            for (bit, neighbour) in [(0, index + 1), (1, index + stride), (2, index - 1), (3, index - stride)] {
                relax(dist, &mut straight_queue, cost + STRAIGHT, neighbour, (m >> bit) & 1 != 0);
            }
        }
        (self.straight_queue, self.diagonal_queue) = (straight_queue, diagonal_queue);
        settled
    }

    /// The counts of the last build.
    pub fn stats(&self) -> FlowStats {
        self.stats
    }

    /// The region of the last build, clipped to the grid (empty before the first build).
    pub fn region(&self) -> CellRect {
        self.region
    }

    /// The padded index of a navcell of the region, `None` outside it.
    fn index_of(&self, cell: Navcell) -> Option<usize> {
        let (i, j) = (u32::from(cell.i), u32::from(cell.j));
        self.region.contains(i, j).then(|| self.padded(i, j))
    }

    /// The cost of the shortest path from `cell` to the goal within the region
    /// (`[Units: 2^-30 steps]`, as [`crate::grid::cost`]); `None` when `cell` is outside the region,
    /// impassable, or cut off from every goal navcell of the region.
    pub fn distance(&self, cell: Navcell) -> Option<u64> {
        let d = self.dist[self.index_of(cell)?];
        (d != UNREACHED).then_some(d)
    }

    /// The neighbour of `cell` on a shortest path to the goal (tie-break in the module
    /// documentation); `None` at a goal navcell and wherever [`FlowField::distance`] is `None`.
    pub fn next(&self, cell: Navcell) -> Option<Navcell> {
        let (dx, dz) = self.step_of(cell)?;
        if (dx, dz) == (0, 0) {
            return None;
        }
        Some(Navcell::new((i32::from(cell.i) + dx) as u16, (i32::from(cell.j) + dz) as u16))
    }

    /// The next step of a reachable navcell as `(dx, dz)`: `(0, 0)` at a goal navcell.
    fn step_of(&self, cell: Navcell) -> Option<(i32, i32)> {
        let index = self.index_of(cell)?;
        if self.dist[index] == UNREACHED {
            return None;
        }
        Some(self.next_step(index).map_or((0, 0), |k| STEPS[k]))
    }

    /// The tie-break: the first step in [`TIE_BREAK`] order that is legal and on a shortest path
    /// from the reachable padded navcell `index`; `None` at a goal navcell. Diagonals come first
    /// because on a shortest path their neighbour is nearer the goal than a straight one's.
    fn next_step(&self, index: usize) -> Option<usize> {
        let d = self.dist[index];
        let m = self.moves[index];
        TIE_BREAK.into_iter().find(|&k| {
            let (dx, dz) = STEPS[k];
            let neighbour = (index as isize + dx as isize + dz as isize * self.stride as isize) as usize;
            // A neighbour's distance is at least `d - step cost`, so no overflow.
            m & (1 << k) != 0 && self.dist[neighbour] < d && self.dist[neighbour] + STEP_COSTS[k] == d
        })
    }

    /// The steering direction for a unit at `pos`, in navcells: `(dx, dz)` with `x` east and `z`
    /// north.
    ///
    /// - On a reachable navcell: its next step, each component in `-1..=1`; `(0, 0)` on a goal
    ///   navcell.
    /// - On any other navcell (impassable, cut off, or outside the region): the whole offset to
    ///   [`FlowField::nearest_reachable`], for a unit to head straight back into the field (as
    ///   the long-range search's escape from an impassable start); normalize it before use.
    /// - `None` when the field has no reachable navcell.
    ///
    /// A position off the grid counts as on the grid's nearest navcell.
    pub fn direction(&self, pos: WorldPos) -> Option<(i32, i32)> {
        if self.stats.reachable == 0 {
            return None;
        }
        let s = raw(self.cell_size);
        let clamp = |v: Fixed, n: u32| div_floor(raw(v), s).clamp(0, i128::from(n) - 1) as u16;
        let cell = Navcell::new(clamp(pos.x, self.grid_width), clamp(pos.z, self.grid_height));
        if let Some(step) = self.step_of(cell) {
            return Some(step);
        }
        let target = self.nearest_reachable(cell)?;
        Some((i32::from(target.i) - i32::from(cell.i), i32::from(target.j) - i32::from(cell.j)))
    }

    /// The reachable navcell nearest to `cell` (itself when reachable), by squared distance
    /// between navcell indices, ties to the lowest `(j, i)`; `None` when nothing is reachable.
    /// `cell` may lie outside the region. Searches square rings around `cell`, so it costs up to
    /// the region's area: meant for the rare unit that is off the field, not for every unit.
    pub fn nearest_reachable(&self, cell: Navcell) -> Option<Navcell> {
        if self.stats.reachable == 0 {
            return None;
        }
        let region = self.region;
        let (ci, cj) = (i64::from(cell.i), i64::from(cell.j));
        let (i0, j0, i1, j1) = (i64::from(region.i0), i64::from(region.j0), i64::from(region.i1) - 1, i64::from(region.j1) - 1);
        // Rings closer than the region hold none of its navcells; rings past its far corner neither.
        let r_first = (i0 - ci).max(ci - i1).max(j0 - cj).max(cj - j1).max(0);
        let r_last = (ci - i0).max(i1 - ci).max(cj - j0).max(j1 - cj);
        // Best (squared distance, j, i) so far.
        let mut best: Option<(i64, i64, i64)> = None;
        let offer = |best: &mut Option<(i64, i64, i64)>, i: i64, j: i64| {
            let reachable = self.dist[self.padded(i as u32, j as u32)] != UNREACHED;
            let key = ((i - ci).pow(2) + (j - cj).pow(2), j, i);
            if reachable && best.is_none_or(|b| key < b) {
                *best = Some(key);
            }
        };
        for r in r_first..=r_last {
            for j in [cj - r, cj + r] {
                if (j0..=j1).contains(&j) {
                    for i in (ci - r).max(i0)..=(ci + r).min(i1) {
                        offer(&mut best, i, j);
                    }
                }
                if r == 0 {
                    break;
                }
            }
            for i in [ci - r, ci + r] {
                if r > 0 && (i0..=i1).contains(&i) {
                    for j in (cj - r + 1).max(j0)..=(cj + r - 1).min(j1) {
                        offer(&mut best, i, j);
                    }
                }
            }
            // Every navcell on a later ring is at least (r + 1)² away.
            if best.is_some_and(|b| b.0 < (r + 1).pow(2)) {
                break;
            }
        }
        best.map(|(_, j, i)| Navcell::new(i as u16, j as u16))
    }

    /// The next steps of the region as text, one line per row, north first, each line ending in
    /// `\n`: `*` goal navcell, `#` impassable, `.` passable but unreachable, and the next step as
    /// the digit of its direction on a numeric keypad: `6` east, `8` north, `4` west, `2` south,
    /// `9` north-east, `7` north-west, `1` south-west, `3` south-east.
    pub fn render_ascii(&self) -> String {
        const KEYPAD: [u8; 8] = *b"68429713";
        let region = self.region;
        let mut out = String::with_capacity(region.area() as usize + (region.j1 - region.j0) as usize);
        for j in (region.j0..region.j1).rev() {
            for i in region.i0..region.i1 {
                let index = self.padded(i, j);
                let ch = if self.pass[index] == 0 {
                    b'#'
                } else if self.dist[index] == UNREACHED {
                    b'.'
                } else {
                    self.next_step(index).map_or(b'*', |k| KEYPAD[k])
                };
                out.push(char::from(ch));
            }
            out.push('\n');
        }
        out
    }
}

/// Offers `neighbour` the distance `cost` through a settled navcell along a step that is legal
/// when `legal`: when it is strictly cheaper than the neighbour's, the neighbour takes it and is
/// queued (its older entry becomes stale). Needs room reserved in the queue.
#[inline(always)]
fn relax(dist: &mut [u64], queue: &mut Fifo, cost: u64, neighbour: usize, legal: bool) {
    let old = dist[neighbour];
    let better = legal & (cost < old);
    dist[neighbour] = if better { cost } else { old };
    queue.push_if(Entry { cost, index: neighbour }, better);
}

/// The knobs of [`flow_region`], filled in by the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowRegionParams {
    /// How far along the path, from the move position, the region reaches. Negative counts as 0.
    /// `[Units: metres]`
    pub ahead_distance: Fixed,
    /// Width of the formation's movement corridor; the region is grown by half of it on every
    /// side (formations use 30). Negative counts as 0. `[Units: metres]`
    pub corridor_width: Fixed,
}

/// A flow-field region and the waypoint it was extended to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowRegion {
    /// The navcells of the region, clamped to the grid (empty when everything lies off it).
    pub cells: CellRect,
    /// Index of the last waypoint taken into the region, `None` when there were none: the one
    /// [`needs_rebuild`] watches.
    pub last_waypoint: Option<usize>,
}

/// The flow-field region of a formation on `map`'s grid (docs/pathfinding-rules.md, "Flow fields"): the bounding
/// box of `members` and `move_position`, extended with `waypoints` (the path ahead, in order) up to
/// the first whose path length from `move_position` reaches `params.ahead_distance` (the first
/// waypoint always), grown by half `params.corridor_width` on every side and clamped to the grid.
///
/// Path lengths are sums of segment lengths, each the floor of the exact square root of its
/// squared length in raw units; everything is exact integer arithmetic.
pub fn flow_region(
    members: impl IntoIterator<Item = WorldPos>,
    move_position: WorldPos,
    waypoints: &[WorldPos],
    params: &FlowRegionParams,
    map: &PassMap,
) -> FlowRegion {
    let (mut x0, mut x1, mut z0, mut z1) = (raw(move_position.x), raw(move_position.x), raw(move_position.z), raw(move_position.z));
    let mut cover = |p: WorldPos| {
        let (x, z) = (raw(p.x), raw(p.z));
        (x0, x1, z0, z1) = (x0.min(x), x1.max(x), z0.min(z), z1.max(z));
    };
    for member in members {
        cover(member);
    }
    let ahead = raw(params.ahead_distance).max(0);
    let mut travelled: i128 = 0;
    let mut from = move_position;
    let mut last_waypoint = None;
    for (k, &waypoint) in waypoints.iter().enumerate() {
        cover(waypoint);
        last_waypoint = Some(k);
        travelled = travelled.saturating_add(segment_length_raw(from, waypoint));
        if travelled >= ahead {
            break;
        }
        from = waypoint;
    }
    let half = div_ceil(raw(params.corridor_width).max(0), 2);
    let s = raw(map.cell_size());
    // The navcells the grown box touches: floor(lo / s) ..= floor(hi / s), clamped to the grid.
    let cells = |lo: i128, hi: i128, n: u32| {
        let n = i128::from(n);
        (div_floor(lo - half, s).clamp(0, n) as u32, (div_floor(hi + half, s) + 1).clamp(0, n) as u32)
    };
    let (i0, i1) = cells(x0, x1, map.width());
    let (j0, j1) = cells(z0, z1, map.height());
    FlowRegion { cells: CellRect::new(i0, j0, i1, j1), last_waypoint }
}

/// The rebuild trigger of a formation's field: whether the move position has come strictly closer than
/// `trigger_distance` to the last waypoint the current region was built for
/// ([`FlowRegion::last_waypoint`]), so that a new field must be built before units run off the
/// current one. Exact (squared lengths in `u128`). When that waypoint is the end of the path a
/// rebuild cannot reach further, and the caller need not ask.
pub fn needs_rebuild(move_position: WorldPos, last_waypoint_used: WorldPos, trigger_distance: Fixed) -> bool {
    let trigger = raw(trigger_distance).max(0).unsigned_abs();
    squared_length_raw(move_position, last_waypoint_used) < trigger * trigger
}

/// `|b - a|²` in raw units squared (32 fractional bits), saturating far beyond any world.
fn squared_length_raw(a: WorldPos, b: WorldPos) -> u128 {
    let dx = (raw(b.x) - raw(a.x)).unsigned_abs();
    let dz = (raw(b.z) - raw(a.z)).unsigned_abs();
    dx.saturating_mul(dx).saturating_add(dz.saturating_mul(dz))
}

/// `⌊|b - a|⌋` in raw units.
fn segment_length_raw(a: WorldPos, b: WorldPos) -> i128 {
    squared_length_raw(a, b).isqrt() as i128
}

#[cfg(test)]
mod tests;
