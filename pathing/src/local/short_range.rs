//! The short-range pathfinder: an exact points-of-visibility search in a box around a unit, among
//! the navcells of its class and the squares of other units.
//!
//! The long-range searches plan on the navcell grid and know nothing of units. Near a unit, 0 A.D.
//! plans again with a "vector" pathfinder (docs/pathfinding-rules.md, "Short-range search"): the
//! world in a box around the unit becomes straight edges and corner vertices, and A* runs over the
//! vertices that see each other. This module is that search, computed exactly.
//!
//! # The model
//!
//! - **The box** `K`: `[start − range, start + range]` on both axes, intersected with the grid's
//!   extent `[0, width·c] × [0, height·c]` (`c` the navcell size). Every vertex lies in it.
//! - **Terrain edges**: the outlines of the map's navcells inside the box. Along every grid line in
//!   the box, each side shared by a passable and an impassable navcell is a unit edge piece
//!   (navcells off the grid are impassable, so the grid's own boundary is an outline too), and
//!   maximal runs of pieces whose impassable side is the same become one axis-aligned edge. An edge
//!   is one-sided: it knows its impassable side. Edges are kept in four lists by impassable side
//!   (east, west, north, south), each sorted by the edge's fixed coordinate, so a segment test
//!   binary-searches the lines its span crosses and looks only at the edges facing it there (and
//!   at the other lists on the start's own lines, where the start is on an edge's line).
//! - **Blocking rule**: an edge blocks the segment `a → b` when the closed segment meets the
//!   closed edge and `a` is not strictly on the edge's impassable side. So crossing from the
//!   impassable side to the passable side is free, which lets a unit that starts on an impassable
//!   navcell walk out (the search still runs from such a start).
//! - **Vertices**: index 0 is the start and index 1 the goal vertex. The goal vertex has no fixed
//!   place: each time a vertex `u` is expanded it is placed at [`Goal::nearest_point`] of `u`,
//!   clamped into the box shrunk by [`EDGE_DELTA`](edge_delta) (`c / 16`, at least one raw unit).
//!   Then come the terrain's convex corners in order of rows, then columns: at a grid point in the
//!   box where exactly one of the four navcells around is impassable, a vertex pushed `EDGE_DELTA`
//!   diagonally into the navcell opposite it (the passable navcell whose two side neighbours are
//!   passable and whose diagonal neighbour is not). Then, for each unit square in the caller's order
//!   that meets the box once expanded by the mover's clearance, its four corners (south-west,
//!   south-east, north-west, north-east) pushed `EDGE_DELTA` further out diagonally, kept when
//!   inside the box, on a passable navcell (the one containing the point, rounding down) and not
//!   inside or on any other expanded square.
//! - **Visibility** `u → v`: no terrain edge blocks it, and for every unit square
//!   [`segment_hits_square`](crate::grid::collide::segment_hits_square) with the clearance is false
//!   (how the tests are organised is under [Visibility tests](#visibility-tests)). That rule
//!   never blocks a step that starts inside a square, so a unit inside another's square can walk
//!   out; it always blocks one that ends inside or on a square, so a goal point inside a unit's
//!   expanded square is never reached (the path goes to the nearest vertex instead).
//!
//! # Why the terrain edges agree with the grid
//!
//! [`segment_clear`](crate::grid::collide::segment_clear) takes navcells and segments as closed sets: a
//! segment is blocked when it touches an impassable navcell at all, even at a corner. For a segment
//! inside the box whose start `a` lies in at least one passable navcell (closed), "some terrain edge
//! blocks it" is exactly `!segment_clear`:
//!
//! - If an edge blocks the segment, the meeting point is on the closed side of an impassable
//!   navcell, so the segment touches that navcell.
//! - Conversely, let `p` be the first point (smallest parameter) at which the segment touches an
//!   impassable navcell `Q`. If `p = a`, then `a` is on the boundary of both a passable navcell and
//!   `Q`; among the two or four navcells around `a`, two side neighbours differ, and the edge piece
//!   between them contains `a`, which is on the edge's line and so not strictly on either side. If
//!   `p` comes later, every point before it touches only passable navcells. When `p` is inside a
//!   side (not a corner), the segment reaches it from the passable navcell across that side (a
//!   segment running along the line would have touched `Q` earlier), so `a` is strictly on the
//!   passable side of that edge piece. When `p` is a corner, the navcells the segment arrives
//!   through are passable; if one of their side neighbours at `p` is impassable, the piece between
//!   them faces `a`, and otherwise only the navcell diagonally opposite the arrival is impassable,
//!   and the piece between it and either side neighbour contains `p` with `a` strictly on the
//!   passable side of its line. In every case an edge meets the segment at `p` and `a` is not
//!   strictly on its impassable side. (The edges are built from every navcell a segment in the box
//!   can touch, so the pieces named here are all there.)
//!
//! The condition on `a` is needed: a point on the shared side of two impassable navcells (or at a
//! corner of four) is in no navcell's interior, yet no edge passes through it, and a segment from
//! it is blocked by the grid test but only by edges it crosses the wrong way. Every vertex the
//! search expands, except possibly the start, satisfies it: terrain corners are strictly inside a
//! passable navcell and square corners are kept only on one. All the products involved are below
//! 2^84 (coordinates within the grid, at most 2^40 raw units).
//!
//! # The search
//!
//! A* over visibility discovered lazily: expanding `u` relaxes the goal vertex (placed for `u`) and
//! then every other vertex in index order, testing visibility only when the new cost would be
//! lower. The cost of a segment is the floor of its exact Euclidean length in raw units (an exact
//! integer square root), `g` is the sum along the path, and the open list pops the smallest
//! `(f, h, vertex index)`, packed into one `u128`: a total order, so the search is deterministic. A
//! vertex's parent changes only on a strictly lower `g`, and a closed vertex that gets one is
//! opened again, so the search does not depend on the heuristic being consistent. Once the goal
//! vertex has been reached, a vertex is not offered a cost whose `f` is not below the goal
//! vertex's: it would be popped after the goal vertex and never expanded, so this changes no
//! expansion, only which vertices count as reached when the node budget runs out.
//!
//! The heuristic `h(v)` is a lower bound of the straight-line distance from `v` to wherever the
//! goal vertex can be placed, rounded down. When the goal's bounding box lies inside the shrunk box,
//! the goal vertex is always at a nearest point of the goal, so `h(v)` is the distance from `v` to
//! its own nearest goal point. Otherwise the clamp can move the goal vertex, and `h(v)` is the
//! distance to the goal's bounding box clamped into the shrunk box (zero for inverted goals).
//! Floors and the rounding of nearest points make `h` exceed the true remaining cost by less than
//! one raw unit per remaining segment plus two, which bounds how much more than the optimum a
//! returned cost can be; the oracle test checks this against Dijkstra over the full visibility
//! graph.
//!
//! The answer (`out`: waypoints after the start, next first):
//!
//! - The start in the goal: [`ShortStatus::Complete`] with no waypoints.
//! - The goal vertex popped: `Complete` when the goal holds its point, else
//!   [`ShortPartial::OutOfBox`] (the goal's nearest point was clamped into the box); the path
//!   ends there.
//! - The open list empty ([`ShortPartial::Unreachable`]) or the node budget spent
//!   ([`ShortPartial::NodeBudget`]): the path to the reached vertex nearest to the goal (by the
//!   rounded-down distance to its nearest goal point, then lowest index), empty when that is the
//!   start.
//!
//! # Visibility tests
//!
//! In a crowd nearly every test fails, so the work is ordered to make failing cheap. None of this
//! changes an answer: a test is a yes-or-no question whatever order its parts run in, and within
//! one expansion the order of the relaxations does not matter either (each vertex is offered one
//! cost, and the open list's order is total).
//!
//! - The cost checks come first: a vertex is tested only when `g(u) + |uv|` would beat its current
//!   cost (compared squared, without a square root) and, once the goal vertex is reached, the goal
//!   vertex's `f`.
//! - Squares come before terrain edges: in a crowd they hide most vertices, and the terrain test is
//!   a few binary searches.
//! - A square is tested on its clipped box by the separating-axis theorem in integers: a bounding
//!   box check, the start-inside rule, then the signs of two cross products at the corners the
//!   segment's direction picks. On segments in the box this is exactly `segment_hits_square`
//!   (checked by a property test), without its divisions; boxes up to 2^30 raw units wide (16 384
//!   m) compute it in `i64`, wider ones in `i128`.
//! - First the square that last hid the vertex being tested, which starts as the square it is a
//!   corner of: that square hides nearly a quarter of the plane from it (every segment arriving
//!   through the square). Then the square that last hid a vertex from the one being expanded,
//!   which starts as its own square, for the same reason.
//! - Then the squares along the segment: they are listed in a uniform grid of buckets over the box
//!   (built once per query into reused buffers), and the segment walks the buckets it passes from
//!   the expanded vertex's end, stepping rows and columns with exact integer comparisons. Buckets
//!   are a power of two wide, at least the mean expanded square and at least the box over `2√S`
//!   (`S` squares, at most 64 buckets a side): walking empty buckets costs more than testing a
//!   few more squares, so a handful of squares gets a handful of buckets.
//!
//! The terrain edges and corners are built 64 navcells at a time from the pass map's bit planes:
//! along a line, the edge pieces with a given impassable side are the set bits of `before & !after`
//! for the two navcell lines on either side, and each run of set bits is an edge; a grid point is a
//! convex corner when exactly one of the four words around it, shifted into line, has its bit clear.
//!
//! 0 A.D.'s vertex pathfinder also prunes by quadrant: a square's corner vertex is never left
//! towards the quadrant its square is in, since a shortest path wraps round a corner and does not
//! turn into the obstacle there. That holds for vertices at the obstacles' exact corners. Ours
//! stand `EDGE_DELTA` off them (so that they lie in free space and the terrain edges agree with the
//! grid), and a segment from such a vertex can head into its square's quadrant and still pass the
//! square along a side. The shortest path can then turn at the corner and leave that way, which
//! the rule would forbid, sending it round the next corner at a higher cost: the test
//! `a_corner_can_be_left_towards_its_own_square` is such a path, 68 raw units dearer under the
//! rule. So the rule is not applied; the own-square test above rejects the segments the square
//! really hides, at the price of one exact test each, and keeps the search exact.
//!
//! # Limits
//!
//! - At most [`MAX_VERTICES`] vertices (so indices fit `u16`); terrain corners come before square
//!   corners and anything past the limit is left out, deterministically. A grid point gives at most
//!   one terrain vertex and a square at most four, so a box `n` navcells wide with `s` squares
//!   needs at most `2 + (n + 1)² + 4s`: 0 A.D.'s largest range, 56 m, is a 112 m box, which on
//!   1 m navcells needs at most 12 771 plus the squares.
//! - Building the edges and corners costs `O(navcells in the box / 64)` word operations plus one
//!   step per edge and corner, and the bucket grid `O(buckets + S)` for `S` squares (each square
//!   listed in the few buckets it covers); the scratch memory is `O(edges + vertices + buckets)`,
//!   at most one edge per navcell side. Callers keep the range to tens of metres, as 0 A.D. does
//!   (12 to 56 m).
//! - A query expands each vertex at least once in the worst case and tests every vertex from each:
//!   `O(V² · (E + S))` for `V` vertices, `E` edges on the lines a segment spans and `S` squares,
//!   though a square test usually looks at only a few squares near the segment's ends. The node
//!   budget bounds the expansions.
//! - A start outside the grid's extent gets [`ShortPartial::Unreachable`] and no path (the
//!   long-range escape brings units back onto the grid); any other start is searched from, even
//!   on an impassable navcell.
//! - Floating point appears nowhere; the same inputs give the same path on every machine.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use crate::geometry::{Fixed, WorldPos, div_ceil, div_floor, raw};
use crate::grid::collide::UnitSquare;
use crate::grid::pass_map::PassMap;
use crate::search::goal::Goal;

/// Most vertices one query builds, the start and the goal vertex included. `[Limit: < 65536]`
pub const MAX_VERTICES: u32 = 65_535;

/// `EDGE_DELTA` is the navcell size divided by this: how far corner vertices are pushed off the
/// corners they stand for, and how far the goal vertex stays inside the box.
pub const EDGE_DELTA_DIVISOR: i64 = 16;

/// `EDGE_DELTA` for a navcell size: `cell_size / 16`, rounded down, at least one raw unit
/// (2^-16 m). `[Units: metres]`
pub fn edge_delta(cell_size: Fixed) -> Fixed {
    Fixed::from_bits((cell_size.to_bits() / EDGE_DELTA_DIVISOR).max(1))
}

const START: usize = 0;
const GOAL: usize = 1;
const UNREACHED: u64 = u64::MAX;

/// One short-range request.
#[derive(Clone, Copy, Debug)]
pub struct ShortQuery<'a> {
    /// Where the unit stands. `[Units: metres]`
    pub start: WorldPos,
    /// Where it wants to be.
    pub goal: &'a Goal,
    /// Half the side of the search box, centred on the start and clamped to the grid; negative
    /// counts as zero. `[Units: metres]`
    pub range: Fixed,
    /// The mover's radius: every square is expanded by it. `[Units: metres]`
    pub clearance: Fixed,
    /// Other units' squares, not expanded, in the caller's deterministic order.
    pub squares: &'a [UnitSquare],
    /// Most vertex expansions. `[Units: expansions]`
    pub node_budget: u32,
}

/// How a short-range search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShortStatus {
    /// The path ends in the goal (or is empty because the start is in it).
    Complete,
    /// The path ends elsewhere, for this reason.
    Partial(ShortPartial),
}

/// Why a short-range path stops short of the goal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShortPartial {
    /// No reachable vertex sees the goal: the path goes to the reached vertex nearest to the goal.
    Unreachable,
    /// The node budget ran out: the path goes to the reached vertex nearest to the goal.
    NodeBudget,
    /// The goal vertex was reached, but clamping it into the box took it out of the goal: the path
    /// goes as near as the box allows.
    OutOfBox,
}

/// What a short-range search did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShortOutcome {
    /// How it ended.
    pub status: ShortStatus,
    /// Vertex expansions (re-expansions included). `[Units: expansions]`
    pub expanded: u32,
    /// Vertices built, the start and the goal vertex included (0 when the start is in the goal or
    /// off the grid). `[Limit: ≤ MAX_VERTICES]`
    pub vertices: u32,
}

/// A terrain edge on the line `x = at` (or `z = at`) from `lo` to `hi`, raw units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Edge {
    at: i64,
    lo: i64,
    hi: i64,
}

/// The edge lists, by impassable side.
const EAST: usize = 0;
const WEST: usize = 1;
const NORTH: usize = 2;
const SOUTH: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Unseen,
    Open,
    Closed,
}

#[derive(Clone, Copy, Debug)]
struct Vertex {
    /// Position, raw units.
    x: i64,
    z: i64,
    /// Cost from the start, `UNREACHED` until reached. `[Units: raw units]`
    g: u64,
    /// Heuristic, set for every vertex when the search starts (0 for the goal vertex).
    h: u64,
    parent: u32,
    /// The active square this vertex is a corner of (its position in `ShortScratch::active`), or
    /// `NO_SQUARE`: the square most likely to hide other vertices from it.
    owner: u32,
    /// The last square that hid this vertex from an expanded one (at first `owner`), tested first
    /// next time.
    blocker: u32,
    state: State,
}

/// `Vertex::owner` of a vertex that is no square's corner.
const NO_SQUARE: u32 = u32::MAX;

impl Vertex {
    fn at(x: i128, z: i128, owner: u32) -> Self {
        Self { x: x as i64, z: z as i64, g: UNREACHED, h: 0, parent: 0, owner, blocker: owner, state: State::Unseen }
    }
}

/// A square that meets the box, expanded by the clearance: its closed box in raw units, clipped
/// to the box grown by one raw unit (which changes no answer about points and segments in the
/// box, and keeps the values small).
#[derive(Clone, Copy, Debug)]
struct Active {
    x0: i64,
    x1: i64,
    z0: i64,
    z1: i64,
}

impl Active {
    /// The box of `square` expanded by `clearance`, clipped, or `None` when that is empty (a
    /// negative half-size) or misses the box `f`.
    fn of(square: &UnitSquare, clearance: Fixed, f: &Frame) -> Option<Self> {
        let half = raw(square.half) + raw(clearance);
        let (cx, cz) = (raw(square.center.x), raw(square.center.z));
        let (x0, x1, z0, z1) = (cx - half, cx + half, cz - half, cz + half);
        if half < 0 || x1 < f.x0 || x0 > f.x1 || z1 < f.z0 || z0 > f.z1 {
            return None;
        }
        let clip_x = |v: i128| v.clamp(f.x0 - 1, f.x1 + 1) as i64;
        let clip_z = |v: i128| v.clamp(f.z0 - 1, f.z1 + 1) as i64;
        Some(Self { x0: clip_x(x0), x1: clip_x(x1), z0: clip_z(z0), z1: clip_z(z1) })
    }

    fn contains(&self, (x, z): (i64, i64)) -> bool {
        // Without short cuts, which only cost branches here.
        (self.x0 <= x) & (x <= self.x1) & (self.z0 <= z) & (z <= self.z1)
    }

    /// [`segment_hits_square`](crate::grid::collide::segment_hits_square)'s rule for this box, for a segment `a → b` in the query's box: a
    /// segment that starts inside or on the box never hits it; any other hits it when the closed
    /// segment meets the closed box.
    ///
    /// The meeting test is the separating-axis theorem: a segment and a box are disjoint exactly
    /// when their extents on the x or z axis are, or when the segment's line leaves all four
    /// corners strictly on one side. The side of a point `p` is the sign of
    /// `s(p) = dx·(p.z − a.z) − dz·(p.x − a.x)`, which is linear in `p`, so its least and
    /// greatest values over the box are at the corners picked by the signs of `dx` and `dz`. All
    /// the values are exact: coordinates in the box are within 2^41 raw units of each other, so
    /// every product is below 2^83.
    ///
    /// On segments in the query's box (every vertex is in it) this is exactly
    /// [`segment_hits_square`](crate::grid::collide::segment_hits_square) of the unclipped square: the clipping only removes points outside
    /// the box. (Checked against it by a property test.)
    ///
    /// `NARROW` computes in `i64`, which is exact when the box is at most 2^30 raw units wide
    /// (16 384 m): then every product is below 2^61.
    #[inline]
    fn hit_by<const NARROW: bool>(&self, a: (i64, i64), b: (i64, i64)) -> bool {
        let ((ax, az), (bx, bz)) = (a, b);
        // Evaluated without short cuts: one well-predicted branch instead of four.
        let apart = (ax.max(bx) < self.x0) | (ax.min(bx) > self.x1) | (az.max(bz) < self.z0) | (az.min(bz) > self.z1);
        if apart || self.contains(a) {
            return false;
        }
        let (z_lo, z_hi) = if bx >= ax { (self.z0, self.z1) } else { (self.z1, self.z0) };
        let (x_lo, x_hi) = if bz >= az { (self.x0, self.x1) } else { (self.x1, self.x0) };
        if NARROW {
            let (dx, dz) = (bx - ax, bz - az);
            let side = |x: i64, z: i64| dx * (z - az) - dz * (x - ax);
            side(x_hi, z_lo) <= 0 && 0 <= side(x_lo, z_hi)
        } else {
            let (dx, dz) = (i128::from(bx - ax), i128::from(bz - az));
            let side = |x: i64, z: i64| dx * i128::from(z - az) - dz * i128::from(x - ax);
            side(x_hi, z_lo) <= 0 && 0 <= side(x_lo, z_hi)
        }
    }
}

/// The active squares in a uniform grid of buckets over the query's box, so that a segment test
/// looks only at the squares listed in the buckets the segment passes through.
///
/// Bucket `(c, r)` holds the points of the box whose offsets `(dx, dz)` from its south-west corner
/// have `⌊dx / 2^shift⌋ = c` and `⌊dz / 2^shift⌋ = r`. A square is listed in every bucket that
/// holds a point of it (its bucket range clamped into the grid: clipped squares reach one raw unit
/// outside the box). A segment in the box that meets a square meets it at a point of the box, whose
/// bucket lists the square; so testing the squares of every bucket holding a point of the segment
/// finds every square the segment meets, and the answer is the same as testing every square.
///
/// Built once per query; its buffers are reused, so a warm query allocates nothing.
#[derive(Clone, Debug, Default)]
struct SquareGrid {
    /// The box's south-west corner. `[Units: raw units]`
    x0: i64,
    z0: i64,
    /// Buckets are `2^shift` raw units wide.
    shift: u32,
    /// Whether the box is at most 2^30 raw units wide and the buckets at most twice that plus 4,
    /// so that the square tests and the walk can compute in `i64`.
    narrow: bool,
    /// Buckets per row and per column (at most about 64 as `build` sizes them).
    nx: i64,
    nz: i64,
    /// Bucket `c + r·nx` lists `items[start[b]..start[b + 1]]`.
    start: Vec<u32>,
    items: Vec<Slot>,
}

/// An active square in a bucket, and its position in the active list.
#[derive(Clone, Copy, Debug)]
struct Slot {
    square: Active,
    k: u32,
}

impl SquareGrid {
    /// Lists `active` (squares clipped to the box `f` grown by one raw unit) in buckets a power of
    /// two wide, at least the mean square's side and at least the box's longer side over `2√S`
    /// for `S` squares (and over 64).
    fn build(&mut self, f: &Frame, active: &[Active]) {
        if active.is_empty() {
            // Nothing to look up: `covered` and `first_hit` are never called.
            return;
        }
        let span = (f.x1 - f.x0).max(f.z1 - f.z0) as i64;
        let sides: i128 = active.iter().map(|a| i128::from((a.x1 - a.x0).max(a.z1 - a.z0))).sum();
        let mean_side = (sides / active.len() as i128) as i64;
        let across = (active.len() as u64).isqrt() as i64 * 2;
        let width = mean_side.max(span / across.clamp(1, 64)).max(1);
        self.fill(f, active, 64 - (width - 1).leading_zeros());
    }

    /// Lists `active` in buckets `2^shift` raw units wide.
    ///
    /// `first_hit` computes in `i64` when the box is at most 2^30 raw units wide and the buckets at
    /// most twice as wide as the box plus 4 (as `build` makes them: clipped squares are at most
    /// the box plus 2 wide): then every product it forms is below 2^62.
    fn fill(&mut self, f: &Frame, active: &[Active], shift: u32) {
        let (span_x, span_z) = ((f.x1 - f.x0) as i64, (f.z1 - f.z0) as i64);
        let span = span_x.max(span_z);
        self.narrow = span <= 1 << 30 && 1 << shift <= 2 * span + 4;
        self.shift = shift;
        (self.x0, self.z0) = (f.x0 as i64, f.z0 as i64);
        (self.nx, self.nz) = ((span_x >> self.shift) + 1, (span_z >> self.shift) + 1);
        let n_buckets = (self.nx * self.nz) as usize;
        self.start.clear();
        self.start.resize(n_buckets + 1, 0);
        // Count into `start[b]`, turn the counts into ends, then fill backwards so that every
        // `start[b]` ends at the bucket's first item (and each bucket lists squares in order).
        for a in active {
            let (c0, c1, r0, r1) = self.range_of(a);
            for r in r0..=r1 {
                for c in c0..=c1 {
                    self.start[(r * self.nx + c) as usize] += 1;
                }
            }
        }
        let mut total = 0;
        for end in &mut self.start[..n_buckets] {
            total += *end;
            *end = total;
        }
        self.start[n_buckets] = total;
        self.items.clear();
        self.items.resize(total as usize, Slot { square: Active { x0: 0, x1: 0, z0: 0, z1: 0 }, k: 0 });
        for (k, a) in active.iter().enumerate().rev() {
            let (c0, c1, r0, r1) = self.range_of(a);
            for r in r0..=r1 {
                for c in c0..=c1 {
                    let start = &mut self.start[(r * self.nx + c) as usize];
                    *start -= 1;
                    self.items[*start as usize] = Slot { square: *a, k: k as u32 };
                }
            }
        }
    }

    /// The buckets holding a point of `a`: columns `c0..=c1`, rows `r0..=r1`.
    fn range_of(&self, a: &Active) -> (i64, i64, i64, i64) {
        (self.column(a.x0), self.column(a.x1), self.row(a.z0), self.row(a.z1))
    }

    fn column(&self, x: i64) -> i64 {
        ((x - self.x0) >> self.shift).clamp(0, self.nx - 1)
    }

    fn row(&self, z: i64) -> i64 {
        ((z - self.z0) >> self.shift).clamp(0, self.nz - 1)
    }

    fn bucket(&self, c: i64, r: i64) -> &[Slot] {
        let b = (r * self.nx + c) as usize;
        &self.items[self.start[b] as usize..self.start[b + 1] as usize]
    }

    /// Whether the point `p` of the box is inside or on an active square other than `except`.
    fn covered(&self, p: (i64, i64), except: usize) -> bool {
        self.bucket(self.column(p.0), self.row(p.1)).iter().any(|slot| (slot.k as usize != except) & slot.square.contains(p))
    }

    /// The first active square (its position in `active`) that the segment `a → b` of the box
    /// hits, testing `hint` first and then the squares listed in the buckets along the segment,
    /// from `a`'s end. (A square listed in several of those buckets can be tested again: that costs
    /// less than remembering which were.)
    ///
    /// The walk goes column by column from `a`'s bucket column to `b`'s, and in each column visits
    /// the rows between the segment's rows where it enters and where it leaves: z is monotone along
    /// the segment, so those rows hold every point of it in the column. The row where it leaves,
    /// at the border `x = xe` with the next column, is stepped to from the row where it entered by
    /// comparing `z(xe) = az + dz·|xe − ax| / |dx|` with the rows' borders, multiplied out by
    /// `|dx|`, which is positive whenever the segment leaves a column. Products are below 2^85, and
    /// below 2^62 when `NARROW` (see `fill`).
    fn first_hit<const NARROW: bool>(&self, active: &[Active], a: (i64, i64), b: (i64, i64), hint: u32) -> Option<u32> {
        if active.get(hint as usize).is_some_and(|square| square.hit_by::<NARROW>(a, b)) {
            return Some(hint);
        }
        let (ax, az) = (a.0 - self.x0, a.1 - self.z0);
        let (bx, bz) = (b.0 - self.x0, b.1 - self.z0);
        let s = self.shift;
        let (mut c, c_last) = (self.column(a.0), self.column(b.0));
        let (mut r, r_last) = (self.row(a.1), self.row(b.1));
        loop {
            let mut r_next = r_last;
            if c != c_last {
                // The border with the next column along the walk is `x = xe`, where the
                // segment's z is `az + t / run`; step the row while it is below that z.
                let xe = if bx > ax { (c + 1) << s } else { c << s };
                r_next = r;
                if NARROW {
                    let (run, t) = ((bx - ax).abs(), (bz - az) * (xe - ax).abs());
                    while r_next < r_last && t >= (((r_next + 1) << s) - az) * run {
                        r_next += 1;
                    }
                    while r_next > r_last && t < ((r_next << s) - az) * run {
                        r_next -= 1;
                    }
                } else {
                    let (run, t) = (i128::from((bx - ax).abs()), i128::from(bz - az) * i128::from((xe - ax).abs()));
                    while r_next < r_last && t >= i128::from(((r_next + 1) << s) - az) * run {
                        r_next += 1;
                    }
                    while r_next > r_last && t < i128::from((r_next << s) - az) * run {
                        r_next -= 1;
                    }
                }
            }
            for row in r.min(r_next)..=r.max(r_next) {
                let bucket = (row * self.nx + c) as usize;
                for slot in &self.items[self.start[bucket] as usize..self.start[bucket + 1] as usize] {
                    if slot.square.hit_by::<NARROW>(a, b) {
                        return Some(slot.k);
                    }
                }
            }
            if c == c_last {
                return None;
            }
            r = r_next;
            c += if bx > ax { 1 } else { -1 };
        }
    }
}

/// The geometry of one query, raw units.
#[derive(Clone, Copy, Debug)]
struct Frame {
    /// The box `K`.
    x0: i128,
    x1: i128,
    z0: i128,
    z1: i128,
    /// The box shrunk by `EDGE_DELTA`, where the goal vertex is clamped.
    gx0: i128,
    gx1: i128,
    gz0: i128,
    gz1: i128,
    /// Navcell size and `EDGE_DELTA`.
    cell: i128,
    delta: i128,
    /// The navcells a segment in the box can touch: `i0..=i1 × j0..=j1`, within `-1..=width`.
    i0: i128,
    i1: i128,
    j0: i128,
    j1: i128,
}

impl Frame {
    /// The frame of a query, or `None` when the start is off the grid's extent.
    fn new(map: &PassMap, start: WorldPos, range: Fixed) -> Option<Self> {
        let cell = raw(map.cell_size()).max(1);
        let (w, h) = (i128::from(map.width()) * cell, i128::from(map.height()) * cell);
        let (sx, sz) = (raw(start.x), raw(start.z));
        if !(0..=w).contains(&sx) || !(0..=h).contains(&sz) {
            return None;
        }
        let r = raw(range).clamp(0, 1 << 42);
        let (x0, x1, z0, z1) = ((sx - r).max(0), (sx + r).min(w), (sz - r).max(0), (sz + r).min(h));
        let delta = (cell / i128::from(EDGE_DELTA_DIVISOR)).max(1);
        let shrink = |lo: i128, hi: i128| {
            if hi - lo >= 2 * delta {
                (lo + delta, hi - delta)
            } else {
                let mid = div_floor(lo + hi, 2);
                (mid, mid)
            }
        };
        let ((gx0, gx1), (gz0, gz1)) = (shrink(x0, x1), shrink(z0, z1));
        // A closed segment in [x0, x1] touches navcells ⌈x0/c⌉ − 1 ..= ⌊x1/c⌋.
        let (i0, i1) = (div_ceil(x0, cell) - 1, div_floor(x1, cell));
        let (j0, j1) = (div_ceil(z0, cell) - 1, div_floor(z1, cell));
        Some(Self { x0, x1, z0, z1, gx0, gx1, gz0, gz1, cell, delta, i0, i1, j0, j1 })
    }

    fn contains(&self, x: i128, z: i128) -> bool {
        self.x0 <= x && x <= self.x1 && self.z0 <= z && z <= self.z1
    }

    /// Where the goal vertex goes when `(x, z)` is expanded.
    fn goal_position(&self, goal: &Goal, x: i128, z: i128) -> (i128, i128) {
        let n = goal.nearest_point(pos(x, z));
        (raw(n.x).clamp(self.gx0, self.gx1), raw(n.z).clamp(self.gz0, self.gz1))
    }
}

/// The heuristic of one query (see the module documentation).
#[derive(Clone, Copy, Debug)]
enum Heuristic {
    /// The goal vertex is always at a nearest goal point: the distance to the vertex's own.
    Nearest,
    /// The distance to this box, where the goal vertex always is.
    Box { x0: i128, x1: i128, z0: i128, z1: i128 },
}

impl Heuristic {
    fn new(goal: &Goal, f: &Frame) -> Self {
        let (bx0, bx1, bz0, bz1) = goal.bounds_raw();
        if f.gx0 <= bx0 && bx1 <= f.gx1 && f.gz0 <= bz0 && bz1 <= f.gz1 {
            return Heuristic::Nearest;
        }
        if goal.is_inverted() {
            return Heuristic::Box { x0: f.gx0, x1: f.gx1, z0: f.gz0, z1: f.gz1 };
        }
        let (cx, cz) = (|v: i128| v.clamp(f.gx0, f.gx1), |v: i128| v.clamp(f.gz0, f.gz1));
        Heuristic::Box { x0: cx(bx0), x1: cx(bx1), z0: cz(bz0), z1: cz(bz1) }
    }

    fn eval(self, goal: &Goal, x: i128, z: i128) -> u64 {
        match self {
            Heuristic::Nearest => goal_distance(goal, x, z),
            Heuristic::Box { x0, x1, z0, z1 } => {
                let dx = (x0 - x).max(x - x1).max(0);
                let dz = (z0 - z).max(z - z1).max(0);
                floor_length(dx, dz)
            }
        }
    }
}

/// The rounded-down distance from `(x, z)` to its nearest goal point.
fn goal_distance(goal: &Goal, x: i128, z: i128) -> u64 {
    let n = goal.nearest_point(pos(x, z));
    floor_length(raw(n.x) - x, raw(n.z) - z)
}

/// `⌊√(dx² + dz²)⌋` for offsets below 2^62.
fn floor_length(dx: i128, dz: i128) -> u64 {
    isqrt((dx * dx + dz * dz) as u128)
}

/// `⌊√n⌋`, in 64 bits when `n` fits (the same value, faster).
fn isqrt(n: u128) -> u64 {
    match u64::try_from(n) {
        Ok(small) => small.isqrt(),
        Err(_) => n.isqrt() as u64,
    }
}

fn pos(x: i128, z: i128) -> WorldPos {
    WorldPos::new(Fixed::from_bits(x as i64), Fixed::from_bits(z as i64))
}

/// The workspace of [`find_short_path`]: edges, squares, vertices and the open list. Reused across
/// queries, so a warm query allocates nothing; never part of any state, and no answer depends on
/// what it held before.
#[derive(Clone, Debug, Default)]
pub struct ShortScratch {
    /// Terrain edges by impassable side (`EAST`, `WEST`, `NORTH`, `SOUTH`), sorted by `(at, lo)`.
    edges: [Vec<Edge>; 4],
    /// The squares that meet the box, in the caller's order.
    active: Vec<Active>,
    /// The same, by bucket.
    grid: SquareGrid,
    vertices: Vec<Vertex>,
    /// `(f, h, index)` packed as `f << 64 | h << 16 | index`.
    open: BinaryHeap<Reverse<u128>>,
}

impl ShortScratch {
    /// An empty workspace.
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds the terrain edges of the frame's navcells.
    ///
    /// Vertical lines `x = k·c` lie between navcell columns `k − 1` and `k`; horizontal lines
    /// `z = m·c` between rows `m − 1` and `m`. Along a line, the pieces whose impassable side is
    /// on one side are the set bits of `before & !after` (or `!before & after`) for the two
    /// navcell lines' passability words, 64 navcells at a time, and each run of set bits is one
    /// edge (runs carry over from one word to the next). Each list gets its edges line by line,
    /// and along a line in order, so it is sorted by `(at, lo)`.
    fn build_edges(&mut self, map: &PassMap, f: &Frame) {
        for list in &mut self.edges {
            list.clear();
        }
        let cell = f.cell as i64;
        let (i0, i1, j0, j1) = (f.i0 as i64, f.i1 as i64, f.j0 as i64, f.j1 as i64);
        // The planes are padded: navcell `(i, j)` is at line `j + 1`, position `i + 1` of the
        // rows plane and line `i + 1`, position `j + 1` of the columns plane, and every navcell
        // from −1 to the width (height) is readable.
        for (plane, lines, cells, [to_before, to_after]) in
            [(&map.cols, i0 + 1..=i1, (j0, j1), [EAST, WEST]), (&map.rows, j0 + 1..=j1, (i0, i1), [NORTH, SOUTH])]
        {
            for k in lines {
                let at = k * cell;
                let mut open = [None; 2];
                let mut p = cells.0;
                while p <= cells.1 {
                    let n = (cells.1 - p + 1).min(64) as u32;
                    let valid = u64::MAX >> (64 - n);
                    let before = plane.window_fwd(k as usize, (p + 1) as usize);
                    let after = plane.window_fwd((k + 1) as usize, (p + 1) as usize);
                    let runs = Runs { at, cell, base: p, n };
                    runs.push(&mut self.edges[to_before], &mut open[0], before & !after & valid);
                    runs.push(&mut self.edges[to_after], &mut open[1], !before & after & valid);
                    p += 64;
                }
                for (list, from) in [(to_before, open[0]), (to_after, open[1])] {
                    if let Some(from) = from {
                        self.edges[list].push(Edge { at, lo: from * cell, hi: (cells.1 + 1) * cell });
                    }
                }
            }
        }
    }

    /// Builds the vertex list (start, goal, terrain corners, square corners) and the active
    /// squares, at most `cap` vertices.
    fn build_vertices(&mut self, map: &PassMap, q: &ShortQuery, f: &Frame, cap: usize) {
        self.vertices.clear();
        let (sx, sz) = (raw(q.start.x), raw(q.start.z));
        self.vertices.push(Vertex::at(sx, sz, NO_SQUARE));
        self.vertices.push(Vertex::at(sx, sz, NO_SQUARE));
        let cap = cap.max(2);
        let delta = f.delta;
        // Terrain corners: exactly one impassable navcell around the grid point; the vertex goes
        // into the navcell diagonally opposite it. For the grid points `k0 + t` of row `m`, bit
        // `t` of the window of navcell row `m − 1` from navcell `k0 − 1` is the south-west navcell
        // and bit `t + 1` the south-east one (so 63 points per window), and likewise north.
        let cell = f.cell as i64;
        let (i0, i1, j0, j1) = (f.i0 as i64, f.i1 as i64, f.j0 as i64, f.j1 as i64);
        'rows: for m in j0 + 1..=j1 {
            let mut k0 = i0 + 1;
            while k0 <= i1 {
                let n = (i1 - k0 + 1).min(63) as u32;
                let south = map.rows.window_fwd(m as usize, k0 as usize);
                let north = map.rows.window_fwd((m + 1) as usize, k0 as usize);
                let (sw, se, nw, ne) = (south, south >> 1, north, north >> 1);
                let only_sw = !sw & se & nw & ne;
                let only_se = sw & !se & nw & ne;
                let only_nw = sw & se & !nw & ne;
                let only_ne = sw & se & nw & !ne;
                let mut corners = (only_sw | only_se | only_nw | only_ne) & (u64::MAX >> (64 - n));
                while corners != 0 {
                    let t = corners.trailing_zeros();
                    corners &= corners - 1;
                    let bit = 1u64 << t;
                    let (dx, dz) = if only_sw & bit != 0 {
                        (1, 1)
                    } else if only_se & bit != 0 {
                        (-1, 1)
                    } else if only_nw & bit != 0 {
                        (1, -1)
                    } else {
                        (-1, -1)
                    };
                    let k = k0 + i64::from(t);
                    let (x, z) = (i128::from(k * cell) + dx * delta, i128::from(m * cell) + dz * delta);
                    if f.contains(x, z) {
                        if self.vertices.len() >= cap {
                            break 'rows;
                        }
                        self.vertices.push(Vertex::at(x, z, NO_SQUARE));
                    }
                }
                k0 += 63;
            }
        }
        // Squares that meet the box once expanded.
        self.active.clear();
        self.active.extend(q.squares.iter().filter_map(|square| Active::of(square, q.clearance, f)));
        self.grid.build(f, &self.active);
        for (slot, a) in self.active.iter().enumerate() {
            let (x0, x1, z0, z1) = (i128::from(a.x0) - delta, i128::from(a.x1) + delta, i128::from(a.z0) - delta, i128::from(a.z1) + delta);
            for (x, z) in [(x0, z0), (x1, z0), (x0, z1), (x1, z1)] {
                // In the box, so both coordinates are non-negative.
                if !f.contains(x, z) || !map.passable_padded(x as i64 / cell, z as i64 / cell) {
                    continue;
                }
                if self.grid.covered((x as i64, z as i64), slot) {
                    continue;
                }
                if self.vertices.len() >= cap {
                    return;
                }
                self.vertices.push(Vertex::at(x, z, slot as u32));
            }
        }
    }

    /// Whether some terrain edge blocks `a → b` (the module's blocking rule).
    fn terrain_blocks(&self, a: (i128, i128), b: (i128, i128)) -> bool {
        let swap = |(x, z): (i128, i128)| (z, x);
        let (ax, az) = a;
        let (bx, bz) = b;
        // An edge whose impassable side is east can block only when `ax ≤ at` (`a` not strictly
        // east of it) and the segment reaches `at`: `ax ≤ at ≤ bx`. So a segment heading east
        // looks at east-facing edges over its span and at west-facing ones only on its start's
        // own line (where `a` is on the edge's line, not strictly on either side); and so on.
        let (a_swapped, b_swapped) = (swap(a), swap(b));
        let vertical = match bx.cmp(&ax) {
            Ordering::Greater => crosses(&self.edges[EAST], ax, bx, a, b) || crosses(&self.edges[WEST], ax, ax, a, b),
            Ordering::Less => crosses(&self.edges[WEST], bx, ax, a, b) || crosses(&self.edges[EAST], ax, ax, a, b),
            Ordering::Equal => crosses(&self.edges[EAST], ax, ax, a, b) || crosses(&self.edges[WEST], ax, ax, a, b),
        };
        vertical
            || match bz.cmp(&az) {
                Ordering::Greater => {
                    crosses(&self.edges[NORTH], az, bz, a_swapped, b_swapped) || crosses(&self.edges[SOUTH], az, az, a_swapped, b_swapped)
                }
                Ordering::Less => {
                    crosses(&self.edges[SOUTH], bz, az, a_swapped, b_swapped) || crosses(&self.edges[NORTH], az, az, a_swapped, b_swapped)
                }
                Ordering::Equal => {
                    crosses(&self.edges[NORTH], az, az, a_swapped, b_swapped) || crosses(&self.edges[SOUTH], az, az, a_swapped, b_swapped)
                }
            }
    }

    /// The first square that hides `b` from `a` (its position in the active list): `first` when it
    /// is a square, else the first square `first_hit` finds, `hint` first.
    fn hiding_square(&self, a: (i64, i64), b: (i64, i64), first: u32, hint: u32) -> Option<u32> {
        fn hiding<const NARROW: bool>(scratch: &ShortScratch, a: (i64, i64), b: (i64, i64), first: u32, hint: u32) -> Option<u32> {
            let active = &scratch.active[..];
            if active.get(first as usize).is_some_and(|square| square.hit_by::<NARROW>(a, b)) {
                return Some(first);
            }
            scratch.grid.first_hit::<NARROW>(active, a, b, hint)
        }
        if self.active.is_empty() {
            None
        } else if self.grid.narrow {
            hiding::<true>(self, a, b, first, hint)
        } else {
            hiding::<false>(self, a, b, first, hint)
        }
    }

    fn position(&self, v: usize) -> (i128, i128) {
        let vertex = &self.vertices[v];
        (i128::from(vertex.x), i128::from(vertex.z))
    }

    /// Offers `v`, at `(vx, vz)`, a path through `u`, the vertex being expanded, at `(ux, uz)` with
    /// cost `gu`. `hint` is the last square that hid a vertex from `u`.
    ///
    /// Only a strictly lower cost is taken, and, once the goal vertex has been reached, only one
    /// whose `f` is below the goal vertex's: any other would be popped after the goal vertex
    /// (ties go to its `h = 0` and index 1) and so never expanded. The cost checks come before the
    /// visibility test (see the module documentation), squares before terrain edges.
    #[inline(always)]
    fn relax(&mut self, u: usize, (ux, uz): (i64, i64), gu: u64, v: usize, (vx, vz): (i64, i64), hint: &mut u32) {
        let vertex = &self.vertices[v];
        let limit = if v == GOAL { vertex.g } else { vertex.g.min(self.vertices[GOAL].g.saturating_sub(vertex.h)) };
        if limit <= gu || v == u {
            return;
        }
        let (dx, dz) = (i128::from(vx - ux), i128::from(vz - uz));
        let d2 = (dx * dx + dz * dz) as u128;
        // ⌊√d2⌋ < limit − gu exactly when d2 < (limit − gu)²: no square root and no visibility
        // test for the many that lose. (Squared lengths in the box are below 2^84.)
        let margin = u128::from(limit - gu);
        if margin < 1 << 62 && d2 >= margin * margin {
            return;
        }
        let ((a, b), first) = (((ux, uz), (vx, vz)), if v == GOAL { NO_SQUARE } else { vertex.blocker });
        if let Some(k) = self.hiding_square(a, b, first, *hint) {
            *hint = k;
            // (The goal vertex's is never read: it moves with every expansion.)
            self.vertices[v].blocker = k;
            return;
        }
        let wide = |(x, z): (i64, i64)| (i128::from(x), i128::from(z));
        if self.terrain_blocks(wide(a), wide(b)) {
            return;
        }
        let g = gu + isqrt(d2);
        if g >= limit {
            return;
        }
        let vertex = &mut self.vertices[v];
        if v == GOAL {
            (vertex.x, vertex.z) = (vx, vz);
        }
        vertex.g = g;
        vertex.parent = u as u32;
        vertex.state = State::Open;
        let h = vertex.h;
        self.open.push(Reverse(pack(g + h, h, v)));
    }

    /// The A* loop; returns the status and the vertex the path goes to.
    fn search(&mut self, q: &ShortQuery, f: &Frame, heuristic: Heuristic) -> (ShortStatus, usize, u32) {
        self.open.clear();
        for v in 0..self.vertices.len() {
            let (x, z) = self.position(v);
            self.vertices[v].h = if v == GOAL { 0 } else { heuristic.eval(q.goal, x, z) };
        }
        let start = &mut self.vertices[START];
        start.g = 0;
        start.state = State::Open;
        self.open.push(Reverse(pack(start.h, start.h, START)));
        let mut expanded = 0u32;
        while let Some(Reverse(key)) = self.open.pop() {
            let (fkey, u) = unpack(key);
            let vertex = self.vertices[u];
            if vertex.state != State::Open || vertex.g + vertex.h != fkey {
                continue;
            }
            if u == GOAL {
                let (x, z) = self.position(GOAL);
                let status =
                    if q.goal.contains_point(pos(x, z)) { ShortStatus::Complete } else { ShortStatus::Partial(ShortPartial::OutOfBox) };
                return (status, GOAL, expanded);
            }
            if expanded >= q.node_budget {
                return (ShortStatus::Partial(ShortPartial::NodeBudget), self.best_reached(q, heuristic), expanded);
            }
            expanded += 1;
            self.vertices[u].state = State::Closed;
            let (ux, uz) = (vertex.x, vertex.z);
            let (gx, gz) = f.goal_position(q.goal, ux.into(), uz.into());
            // The square `u` is a corner of hides nearly a quarter of the plane from it.
            let mut hint = vertex.owner;
            self.relax(u, (ux, uz), vertex.g, GOAL, (gx as i64, gz as i64), &mut hint);
            for v in GOAL + 1..self.vertices.len() {
                let at = (self.vertices[v].x, self.vertices[v].z);
                self.relax(u, (ux, uz), vertex.g, v, at, &mut hint);
            }
        }
        (ShortStatus::Partial(ShortPartial::Unreachable), self.best_reached(q, heuristic), expanded)
    }

    /// The reached vertex with the smallest rounded-down distance to the goal, then lowest index.
    fn best_reached(&self, q: &ShortQuery, heuristic: Heuristic) -> usize {
        let mut best = (u64::MAX, START);
        for (v, vertex) in self.vertices.iter().enumerate() {
            if vertex.g == UNREACHED {
                continue;
            }
            let (x, z) = self.position(v);
            // With `Heuristic::Nearest` the heuristic of a vertex other than the goal vertex is
            // this distance already.
            let distance = match heuristic {
                Heuristic::Nearest if v != GOAL => vertex.h,
                _ => goal_distance(q.goal, x, z),
            };
            if distance < best.0 {
                best = (distance, v);
            }
        }
        best.1
    }

    /// The waypoints from the start to `target`, the start left out, repeated points merged.
    fn write_path(&self, target: usize, out: &mut Vec<WorldPos>) {
        let mut v = target;
        // Parents form a tree rooted at the start (costs never go negative and parents change
        // only on a strictly lower cost); the bound only guards the loop.
        for _ in 0..self.vertices.len() {
            if v == START {
                break;
            }
            let (x, z) = self.position(v);
            out.push(pos(x, z));
            v = self.vertices[v].parent as usize;
        }
        out.reverse();
        out.dedup();
        let (sx, sz) = self.position(START);
        if out.first() == Some(&pos(sx, sz)) {
            out.remove(0);
        }
    }
}

/// The edge pieces of one word along a line: bit `t` is the piece of navcell `base + t`, for
/// `t < n`.
#[derive(Clone, Copy)]
struct Runs {
    /// The line's coordinate and the navcell size. `[Units: raw units]`
    at: i64,
    cell: i64,
    base: i64,
    n: u32,
}

impl Runs {
    /// Pushes the edges of the runs of `mask` (no bits at or above `n`) that end in this word;
    /// `open` is the first navcell of a run that reached the end of the previous word, and
    /// becomes that of a run reaching the end of this one.
    fn push(self, list: &mut Vec<Edge>, open: &mut Option<i64>, mut mask: u64) {
        let edge = |from: i64, to: i64| Edge { at: self.at, lo: from * self.cell, hi: to * self.cell };
        if let Some(from) = *open {
            // The run goes on through the word's low set bits.
            let ones = (!mask).trailing_zeros();
            if ones >= self.n {
                return;
            }
            list.push(edge(from, self.base + i64::from(ones)));
            *open = None;
            mask &= u64::MAX << ones;
        }
        while mask != 0 {
            let first = mask.trailing_zeros();
            // Adding the run's lowest bit carries through it: the run's bits clear and the bit
            // just past it sets (or everything wraps to zero when the run reaches bit 63).
            let carried = mask.wrapping_add(1 << first);
            let end = if carried == 0 { 64 } else { carried.trailing_zeros() };
            if end >= self.n {
                *open = Some(self.base + i64::from(first));
                return;
            }
            list.push(edge(self.base + i64::from(first), self.base + i64::from(end)));
            mask &= carried;
        }
    }
}

/// Whether an edge of `list` (sorted by `at`, on lines `x = at` in the coordinates given, so the
/// caller swaps axes for horizontal edges) with `lo_at ≤ at ≤ hi_at` meets the closed segment
/// `a → b`. The caller picks the list and span so that `a` is never strictly on the impassable
/// side of an edge looked at.
fn crosses(list: &[Edge], lo_at: i128, hi_at: i128, (ax, az): (i128, i128), (bx, bz): (i128, i128)) -> bool {
    let first = list.partition_point(|e| i128::from(e.at) < lo_at);
    let (min_z, max_z) = (az.min(bz), az.max(bz));
    for edge in &list[first..] {
        let x = i128::from(edge.at);
        if x > hi_at {
            break;
        }
        let (lo, hi) = (i128::from(edge.lo), i128::from(edge.hi));
        if hi < min_z || lo > max_z {
            continue;
        }
        if ax == bx {
            // Along the edge's line, and the spans overlap.
            return true;
        }
        // The segment's z at x is az + (bz − az)·num/den, den > 0; compare scaled by den.
        let (num, den) = if bx > ax { (x - ax, bx - ax) } else { (ax - x, ax - bx) };
        let z_scaled = az * den + (bz - az) * num;
        if lo * den <= z_scaled && z_scaled <= hi * den {
            return true;
        }
    }
    false
}

fn pack(f: u64, h: u64, v: usize) -> u128 {
    (u128::from(f) << 64) | (u128::from(h) << 16) | v as u128
}

fn unpack(key: u128) -> (u64, usize) {
    ((key >> 64) as u64, (key & 0xFFFF) as usize)
}

/// Finds a short-range path for `q` on `map`: the waypoints after the start, next first, go to
/// `out` (cleared first). See the module documentation for the model and the answers.
///
/// `Complete` means the last waypoint is in the goal (or `out` is empty because the start is);
/// a partial answer's path goes to the best vertex reached, or is empty when that is the start.
/// Every segment of the path is visible by the module's rule: it misses every expanded square,
/// and when the start lies in a passable navcell it passes
/// [`segment_clear`](crate::grid::collide::segment_clear). Every waypoint is inside the search box.
///
/// A warm `scratch` and an `out` with enough capacity make the query allocation-free.
///
/// # Panics
/// Never for any input.
pub fn find_short_path(map: &PassMap, q: &ShortQuery, scratch: &mut ShortScratch, out: &mut Vec<WorldPos>) -> ShortOutcome {
    out.clear();
    if q.goal.contains_point(q.start) {
        return ShortOutcome { status: ShortStatus::Complete, expanded: 0, vertices: 0 };
    }
    let Some(frame) = Frame::new(map, q.start, q.range) else {
        return ShortOutcome { status: ShortStatus::Partial(ShortPartial::Unreachable), expanded: 0, vertices: 0 };
    };
    scratch.build_edges(map, &frame);
    scratch.build_vertices(map, q, &frame, MAX_VERTICES as usize);
    let heuristic = Heuristic::new(q.goal, &frame);
    let (status, target, expanded) = scratch.search(q, &frame, heuristic);
    scratch.write_path(target, out);
    ShortOutcome { status, expanded, vertices: scratch.vertices.len() as u32 }
}

#[cfg(test)]
mod tests;
