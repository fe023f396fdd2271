//! Simple polygons in fixed point (navigation areas and obstacles of the grid-pathfinding design):
//! validation, exact point predicates, centre rasterization onto navcells, and the polygon config
//! file with its standalone grid build.
//!
//! # Exactness
//!
//! Every predicate works on the raw bits of the fixed-point inputs widened to `i128`, so nothing is
//! rounded. Navcell centres `origin + (i + ½) · cellSize` may fall half-way between two [`Fixed`]
//! values; the rasterizer therefore works in half units (2^-17 m) internally, and a centre is
//! always tested exactly.
//!
//! # Limits
//!
//! Polygon coordinates lie within ±[`WORLD_LIMIT`] (2^14 m, raw ±2^30) and polygons have at most
//! [`MAX_VERTICES`] vertices. Distances tested against are clamped to [`MAX_RADIUS`] (2^15 m,
//! raw 2^31), which no config can exceed (`agentRadius + objectPadding ≤ 2 · WORLD_LIMIT`). These
//! are what keep every product below 2^128 (the bounds are worked out where each product is
//! formed).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::formats::grid_text::{GridText, WALKABLE, format_fixed};
use crate::formats::json::{JsonError, from_json, locate};
use crate::geometry::decimal::{JsonFixed, WORLD_LIMIT, deserialize_some_fixed};
use crate::geometry::{Fixed, WorldPos, cross_raw, div_ceil, div_floor, raw};
use crate::grid::nav_grid::{MAX_CELL_SIZE, MAX_SIDE, NavGrid};
use crate::grid::navcell::{CellRect, Navcell};

/// Most vertices a polygon may have; the self-intersection check is quadratic in the worst case.
pub const MAX_VERTICES: usize = 4096;

/// Largest distance the distance predicates test against; larger values are clamped to it.
/// `[Units: metres]`
pub const MAX_RADIUS: Fixed = Fixed::const_from_int(1 << 15);

/// Why a list of points is not a [`Polygon`]. Edge `k` runs from vertex `k` to vertex `(k + 1) mod n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolygonError {
    /// Fewer than three vertices.
    TooFewPoints {
        /// Number of vertices given.
        n: usize,
    },
    /// More than [`MAX_VERTICES`] vertices.
    TooManyPoints {
        /// Number of vertices given.
        n: usize,
    },
    /// A coordinate beyond ±[`WORLD_LIMIT`].
    OutOfRange {
        /// The first vertex with such a coordinate.
        index: usize,
    },
    /// A vertex equal to the one before it, or the last vertex equal to the first (the ring is
    /// closed implicitly, so it must not repeat its first point): a zero-length edge.
    RepeatedPoint {
        /// The repeating vertex.
        index: usize,
    },
    /// Two edges cross or touch, other than adjacent edges at their shared vertex (adjacent edges
    /// that fold back over each other count as touching).
    SelfIntersecting {
        /// The lower-numbered edge.
        edge_a: usize,
        /// The higher-numbered edge.
        edge_b: usize,
    },
    /// All vertices lie on one line.
    ZeroArea,
}

impl std::fmt::Display for PolygonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PolygonError::TooFewPoints { n } => write!(f, "polygon has {n} points, expected at least 3"),
            PolygonError::TooManyPoints { n } => write!(f, "polygon has {n} points, expected at most {MAX_VERTICES}"),
            PolygonError::OutOfRange { index } => write!(f, "point {index} is outside ±{WORLD_LIMIT} m"),
            PolygonError::RepeatedPoint { index } => {
                write!(f, "point {index} repeats the point before it (the ring closes itself; do not repeat the first point)")
            }
            PolygonError::SelfIntersecting { edge_a, edge_b } => {
                write!(f, "edges {edge_a} and {edge_b} cross or touch; expected a simple polygon")
            }
            PolygonError::ZeroArea => write!(f, "all points lie on one line; expected a polygon with area"),
        }
    }
}

impl std::error::Error for PolygonError {}

/// A simple polygon: at least 3 vertices, no zero-length edge, no two edges crossing or touching
/// except adjacent edges at their shared vertex, so it encloses a non-zero area. Concave polygons
/// are fine; either orientation is accepted and kept as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Polygon {
    /// The vertices in order, the ring closed implicitly. `[Limit: 3..=MAX_VERTICES, each
    /// coordinate within ±WORLD_LIMIT]`
    vertices: Vec<WorldPos>,
    /// Bounding-box corner with the smallest coordinates.
    min: WorldPos,
    /// Bounding-box corner with the largest coordinates.
    max: WorldPos,
}

/// An edge on raw coordinates.
#[derive(Clone, Copy, Debug)]
struct Edge {
    ax: i128,
    az: i128,
    bx: i128,
    bz: i128,
}

impl Edge {
    fn min_x(&self) -> i128 {
        self.ax.min(self.bx)
    }
    fn max_x(&self) -> i128 {
        self.ax.max(self.bx)
    }
    fn min_z(&self) -> i128 {
        self.az.min(self.bz)
    }
    fn max_z(&self) -> i128 {
        self.az.max(self.bz)
    }
}

/// Sign of the turn `a → b → c`: positive anticlockwise. Raw coordinates within ±2^30 keep every
/// product below 2^63.
fn orient(a: (i128, i128), b: (i128, i128), c: (i128, i128)) -> i128 {
    cross_raw(b.0 - a.0, b.1 - a.1, c.0 - a.0, c.1 - a.1).signum()
}

/// Whether `p` lies in the bounding box of `a` and `b` (for a `p` collinear with them: on the segment).
fn in_box(a: (i128, i128), b: (i128, i128), p: (i128, i128)) -> bool {
    a.0.min(b.0) <= p.0 && p.0 <= a.0.max(b.0) && a.1.min(b.1) <= p.1 && p.1 <= a.1.max(b.1)
}

/// Whether the closed segments `ab` and `cd` share a point.
fn segments_touch(a: (i128, i128), b: (i128, i128), c: (i128, i128), d: (i128, i128)) -> bool {
    let (o1, o2, o3, o4) = (orient(a, b, c), orient(a, b, d), orient(c, d, a), orient(c, d, b));
    if o1 * o2 < 0 && o3 * o4 < 0 {
        return true;
    }
    (o1 == 0 && in_box(a, b, c)) || (o2 == 0 && in_box(a, b, d)) || (o3 == 0 && in_box(c, d, a)) || (o4 == 0 && in_box(c, d, b))
}

/// Whether the squared length of `(x, z)` is at most `limit`; a square that does not fit in `u128`
/// is larger than any limit used here.
fn norm_sq_at_most(x: i128, z: i128, limit: u128) -> bool {
    let (x, z) = (x.unsigned_abs(), z.unsigned_abs());
    match x.checked_mul(x).and_then(|xx| z.checked_mul(z).and_then(|zz| xx.checked_add(zz))) {
        Some(sq) => sq <= limit,
        None => false,
    }
}

/// Whether the point `(px, pz)`, given in half units (2^-17 m, so any navcell centre is exact), is
/// within distance `r` (raw, `0 ≤ r ≤ 2^31`) of the closed segment `e` (raw).
///
/// With `d = b − a` (raw, each component within ±2^31 because the vertices are within ±2^30) and
/// `w = p − 2a` (half units, any size): the foot of the perpendicular lies inside the segment when
/// `0 < w·d < 2|d|²`, and then the squared distance is `cross(d, w)² / (4|d|²)`, compared as
/// `cross(d, w)² ≤ (2r)² |d|²`. The right side is at most `2^64 · 2^63 = 2^127`, so it fits in
/// `u128`; a `cross²` that does not fit is larger. Otherwise the nearest point is an endpoint, and
/// `|w|² ≤ (2r)²` (at most 2^64) is checked the same way.
fn segment_within_half(e: &Edge, px: i128, pz: i128, r: i128) -> bool {
    let (dx, dz) = (e.bx - e.ax, e.bz - e.az);
    let (wx, wz) = (px - 2 * e.ax, pz - 2 * e.az);
    let two_r = (2 * r).unsigned_abs();
    let limit = two_r * two_r;
    // |w| ≤ 2^66 (points up to 2^65 in half units), |d| ≤ 2^32: the dot product stays below 2^100.
    let t = wx * dx + wz * dz;
    if t <= 0 {
        return norm_sq_at_most(wx, wz, limit);
    }
    let d_sq = dx * dx + dz * dz;
    if t >= 2 * d_sq {
        return norm_sq_at_most(px - 2 * e.bx, pz - 2 * e.bz, limit);
    }
    let cross = cross_raw(dx, dz, wx, wz).unsigned_abs();
    match cross.checked_mul(cross) {
        Some(cross_sq) => cross_sq <= limit * d_sq.unsigned_abs(),
        None => false,
    }
}

/// Whether the point (half units) lies on the closed segment `e`.
fn on_segment_half(e: &Edge, px: i128, pz: i128) -> bool {
    let (dx, dz) = (e.bx - e.ax, e.bz - e.az);
    let (wx, wz) = (px - 2 * e.ax, pz - 2 * e.az);
    if cross_raw(dx, dz, wx, wz) != 0 {
        return false;
    }
    let t = wx * dx + wz * dz;
    t >= 0 && t <= 2 * (dx * dx + dz * dz)
}

/// What a navcell centre must satisfy to be marked by [`Polygon::mark_cells`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellTest {
    /// Inside the closed polygon (boundary points count as inside).
    Inside,
    /// Inside the closed polygon, or at distance `≤ r` from its boundary: the polygon grown by `r`
    /// (obstacle erosion of free space). A negative `r` behaves as [`CellTest::Inside`]; `r` above
    /// [`MAX_RADIUS`] is clamped to it. `[Units: metres]`
    InsideOrNear(Fixed),
    /// Inside the polygon and at distance `> r` from its boundary: the polygon shrunk by `r` (area
    /// boundary padding; a centre at exactly `r` from the edge is too close). With `r = 0` this is
    /// the open interior. A negative `r` behaves as [`CellTest::Inside`]; `r` above [`MAX_RADIUS`]
    /// is clamped to it. `[Units: metres]`
    InsideAwayFrom(Fixed),
}

/// A [`CellTest`] with its radius resolved to raw bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Inside,
    Near(i128),
    Away(i128),
}

impl Mode {
    fn of(test: CellTest) -> Mode {
        let clamp = |r: Fixed| raw(r.min(MAX_RADIUS));
        match test {
            CellTest::Inside => Mode::Inside,
            CellTest::InsideOrNear(r) if r < Fixed::ZERO => Mode::Inside,
            CellTest::InsideAwayFrom(r) if r < Fixed::ZERO => Mode::Inside,
            CellTest::InsideOrNear(r) => Mode::Near(clamp(r)),
            CellTest::InsideAwayFrom(r) => Mode::Away(clamp(r)),
        }
    }

    /// How far outside the polygon's bounding box a marked centre can lie (raw).
    fn margin(self) -> i128 {
        match self {
            Mode::Near(r) => r,
            Mode::Inside | Mode::Away(_) => 0,
        }
    }

    /// The distance whose neighbourhood of the boundary is added or removed (raw); the boundary
    /// itself (distance 0) for `Inside`.
    fn radius(self) -> i128 {
        match self {
            Mode::Inside => 0,
            Mode::Near(r) | Mode::Away(r) => r,
        }
    }
}

/// Half-open intervals `[lo, hi)` of navcell columns, sorted and merged in place.
fn merge_intervals(intervals: &mut Vec<(i128, i128)>) {
    intervals.retain(|&(lo, hi)| lo < hi);
    intervals.sort_unstable();
    let mut out = 0;
    for k in 0..intervals.len() {
        let (lo, hi) = intervals[k];
        if out > 0 && lo <= intervals[out - 1].1 {
            intervals[out - 1].1 = intervals[out - 1].1.max(hi);
        } else {
            intervals[out] = (lo, hi);
            out += 1;
        }
    }
    intervals.truncate(out);
}

/// The grid geometry of one [`Polygon::mark_cells`] call in half units: centre of navcell
/// `(i, j)` is `(x0 + step · i, z0 + step · j)`.
#[derive(Clone, Copy, Debug)]
struct Lattice {
    x0: i128,
    z0: i128,
    step: i128,
}

impl Lattice {
    fn new(origin: WorldPos, cell_size: Fixed) -> Lattice {
        let s = raw(cell_size);
        Lattice { x0: 2 * raw(origin.x) + s, z0: 2 * raw(origin.z) + s, step: 2 * s }
    }

    /// First index whose centre is `≥ num / den` (half units, `den > 0`) along an axis starting at `start`.
    fn first_at_or_after(&self, start: i128, num: i128, den: i128) -> i128 {
        div_ceil(num - den * start, self.step * den)
    }

    /// Last index whose centre is `≤ num / den` (half units, `den > 0`).
    fn last_at_or_before(&self, start: i128, num: i128, den: i128) -> i128 {
        div_floor(num - den * start, self.step * den)
    }
}

impl Polygon {
    /// A polygon from its vertices in order (either orientation; the last vertex connects back to
    /// the first, so do not repeat it).
    ///
    /// The checks run in this order, and the first failing one is reported: the vertex count, the
    /// coordinate range, repeated consecutive points, all points on one line, then edges that cross
    /// or touch (adjacent edges folding back first, then other pairs; the pair reported is always the
    /// same for the same input). The intersection test is exact and examines only pairs of edges
    /// whose x ranges overlap, so typical polygons cost `O(n log n)`; the worst case is `O(n²)`.
    ///
    /// # Errors
    /// [`PolygonError`] naming the first problem found.
    pub fn new(vertices: Vec<WorldPos>) -> Result<Polygon, PolygonError> {
        let n = vertices.len();
        if n < 3 {
            return Err(PolygonError::TooFewPoints { n });
        }
        if n > MAX_VERTICES {
            return Err(PolygonError::TooManyPoints { n });
        }
        // Not `abs()`, which overflows for `Fixed::MIN`.
        let in_range = |c: Fixed| (-WORLD_LIMIT..=WORLD_LIMIT).contains(&c);
        if let Some(index) = vertices.iter().position(|v| !in_range(v.x) || !in_range(v.z)) {
            return Err(PolygonError::OutOfRange { index });
        }
        if let Some(index) = (1..n).find(|&k| vertices[k] == vertices[k - 1]) {
            return Err(PolygonError::RepeatedPoint { index });
        }
        if vertices[n - 1] == vertices[0] {
            return Err(PolygonError::RepeatedPoint { index: n - 1 });
        }
        let pts: Vec<(i128, i128)> = vertices.iter().map(|v| (raw(v.x), raw(v.z))).collect();
        if pts.iter().all(|&p| orient(pts[0], pts[1], p) == 0) {
            return Err(PolygonError::ZeroArea);
        }
        check_simple(&pts)?;
        let mut min = vertices[0];
        let mut max = vertices[0];
        for v in &vertices {
            min = WorldPos::new(min.x.min(v.x), min.z.min(v.z));
            max = WorldPos::new(max.x.max(v.x), max.z.max(v.z));
        }
        Ok(Polygon { vertices, min, max })
    }

    /// The vertices, in the order given.
    pub fn vertices(&self) -> &[WorldPos] {
        &self.vertices
    }

    /// The bounding box as `(min, max)` corners.
    pub fn bbox(&self) -> (WorldPos, WorldPos) {
        (self.min, self.max)
    }

    fn edges(&self) -> impl Iterator<Item = Edge> + '_ {
        let n = self.vertices.len();
        (0..n).map(move |k| {
            let (a, b) = (self.vertices[k], self.vertices[(k + 1) % n]);
            Edge { ax: raw(a.x), az: raw(a.z), bx: raw(b.x), bz: raw(b.z) }
        })
    }

    /// Whether `p` is inside the closed polygon: points on an edge or vertex count as inside. Exact
    /// for every `p`.
    pub fn contains(&self, p: WorldPos) -> bool {
        self.contains_half(2 * raw(p.x), 2 * raw(p.z))
    }

    /// [`Polygon::contains`] for a point in half units.
    fn contains_half(&self, px: i128, pz: i128) -> bool {
        let mut inside = false;
        for e in self.edges() {
            if on_segment_half(&e, px, pz) {
                return true;
            }
            // Half-open rule: an edge counts when exactly one endpoint is at or below the point.
            if (2 * e.az <= pz) != (2 * e.bz <= pz) {
                let (lo, hi) = if e.az <= e.bz { ((e.ax, e.az), (e.bx, e.bz)) } else { ((e.bx, e.bz), (e.ax, e.az)) };
                // The point is left of the upward edge, so the edge crosses the ray towards +x.
                if cross_raw(hi.0 - lo.0, hi.1 - lo.1, px - 2 * lo.0, pz - 2 * lo.1) > 0 {
                    inside = !inside;
                }
            }
        }
        inside
    }

    /// Whether the distance from `p` to the polygon's boundary (its edges, not its interior) is at
    /// most `r`. Exact for every `p`; a negative `r` gives `false`, and `r` above [`MAX_RADIUS`] is
    /// clamped to it.
    pub fn distance_sq_within(&self, p: WorldPos, r: Fixed) -> bool {
        if r < Fixed::ZERO {
            return false;
        }
        self.near_half(2 * raw(p.x), 2 * raw(p.z), raw(r.min(MAX_RADIUS)))
    }

    /// [`Polygon::distance_sq_within`] for a point in half units and a raw radius in `[0, 2^31]`.
    fn near_half(&self, px: i128, pz: i128, r: i128) -> bool {
        self.edges().any(|e| {
            // Skip edges whose box grown by r misses the point: only a shortcut, the test is exact anyway.
            let (lo_x, hi_x) = (2 * (e.min_x() - r), 2 * (e.max_x() + r));
            let (lo_z, hi_z) = (2 * (e.min_z() - r), 2 * (e.max_z() + r));
            lo_x <= px && px <= hi_x && lo_z <= pz && pz <= hi_z && segment_within_half(&e, px, pz, r)
        })
    }

    /// Whether a point satisfies a [`CellTest`]: the per-point definition that
    /// [`Polygon::mark_cells`] applies to navcell centres.
    pub fn matches(&self, test: CellTest, p: WorldPos) -> bool {
        self.matches_half(Mode::of(test), 2 * raw(p.x), 2 * raw(p.z))
    }

    fn matches_half(&self, mode: Mode, px: i128, pz: i128) -> bool {
        match mode {
            Mode::Inside => self.contains_half(px, pz),
            Mode::Near(r) => self.contains_half(px, pz) || self.near_half(px, pz, r),
            Mode::Away(r) => self.contains_half(px, pz) && !self.near_half(px, pz, r),
        }
    }

    /// The navcells of `clip` whose centres lie within the polygon's bounding box grown by `margin`
    /// on every side (a negative margin counts as 0, one above [`MAX_RADIUS`] as [`MAX_RADIUS`]):
    /// every navcell that [`Polygon::mark_cells`] can mark with a radius up to `margin`, for example
    /// the dirty region when an area is toggled. Empty when `cell_size ≤ 0`.
    pub fn cell_bounds(&self, margin: Fixed, origin: WorldPos, cell_size: Fixed, clip: CellRect) -> CellRect {
        let margin = raw(margin.clamp(Fixed::ZERO, MAX_RADIUS));
        match self.index_ranges(margin, Lattice::new(origin, cell_size), clip) {
            Some((i_lo, i_hi, j_lo, j_hi)) => {
                let to_u32 = |v: i128| u32::try_from(v).unwrap_or(u32::MAX);
                CellRect::new(to_u32(i_lo), to_u32(j_lo), to_u32(i_hi + 1), to_u32(j_hi + 1))
            }
            None => CellRect::new(clip.i0, clip.j0, clip.i0, clip.j0),
        }
    }

    /// Inclusive column and row ranges `(i_lo, i_hi, j_lo, j_hi)` of the `clip` navcells whose centres
    /// lie in the bounding box grown by `margin` (raw); `None` when empty or the lattice is degenerate.
    fn index_ranges(&self, margin: i128, lattice: Lattice, clip: CellRect) -> Option<(i128, i128, i128, i128)> {
        if lattice.step <= 0 || clip.is_empty() {
            return None;
        }
        let (min_x, min_z) = (raw(self.min.x) - margin, raw(self.min.z) - margin);
        let (max_x, max_z) = (raw(self.max.x) + margin, raw(self.max.z) + margin);
        let i_lo = lattice.first_at_or_after(lattice.x0, 2 * min_x, 1).max(i128::from(clip.i0));
        let i_hi = lattice.last_at_or_before(lattice.x0, 2 * max_x, 1).min(i128::from(clip.i1) - 1);
        let j_lo = lattice.first_at_or_after(lattice.z0, 2 * min_z, 1).max(i128::from(clip.j0));
        let j_hi = lattice.last_at_or_before(lattice.z0, 2 * max_z, 1).min(i128::from(clip.j1) - 1);
        (i_lo <= i_hi && j_lo <= j_hi).then_some((i_lo, i_hi, j_lo, j_hi))
    }

    /// Calls `mark(i, j)` for every navcell `(i, j)` of `clip` whose centre
    /// `origin + ((i + ½) · cell_size, (j + ½) · cell_size)` satisfies `test` (exactly, see
    /// [`Polygon::matches`]), in row-major order: `j` ascending, then `i` ascending. Nothing is
    /// marked when `cell_size ≤ 0`.
    ///
    /// Work is limited to the rows and columns of the bounding box (grown by the radius when the test
    /// grows the polygon). Per row, the inside part comes from a scanline: the edges crossing the
    /// row's centre line, each crossing turned exactly into the first column at or after it, sorted,
    /// and paired by the even-odd rule. The part near the boundary comes per edge from a binary
    /// search: the centres within distance `r` of a segment form one run of columns on a row (a line
    /// meets a convex set in an interval), found from the column nearest the segment with the exact
    /// distance test. Allocates four small scratch vectors (edges, crossings, runs) per call.
    pub fn mark_cells(&self, test: CellTest, origin: WorldPos, cell_size: Fixed, clip: CellRect, mut mark: impl FnMut(u32, u32)) {
        let mode = Mode::of(test);
        let lattice = Lattice::new(origin, cell_size);
        let Some((i_lo, i_hi, j_lo, j_hi)) = self.index_ranges(mode.margin(), lattice, clip) else {
            return;
        };
        let edges: Vec<Edge> = self.edges().collect();
        let r = mode.radius();
        let mut crossings: Vec<i128> = Vec::new();
        let mut added: Vec<(i128, i128)> = Vec::new();
        let mut removed: Vec<(i128, i128)> = Vec::new();
        for j in j_lo..=j_hi {
            let z = lattice.z0 + lattice.step * j;
            crossings.clear();
            added.clear();
            removed.clear();
            for e in &edges {
                if (2 * e.az <= z) != (2 * e.bz <= z) {
                    let (num, den) = crossing_x(e, z);
                    crossings.push(lattice.first_at_or_after(lattice.x0, num, den));
                }
                if 2 * (e.min_z() - r) <= z
                    && z <= 2 * (e.max_z() + r)
                    && let Some(run) = near_run(e, z, r, lattice, i_lo, i_hi)
                {
                    if matches!(mode, Mode::Away(_)) {
                        removed.push(run);
                    } else {
                        added.push(run);
                    }
                }
            }
            crossings.sort_unstable();
            // A closed ring crosses every line an even number of times; `chunks_exact` would drop
            // an odd last crossing, which cannot occur.
            for pair in crossings.chunks_exact(2) {
                added.push((pair[0], pair[1]));
            }
            merge_intervals(&mut added);
            merge_intervals(&mut removed);
            let Ok(j32) = u32::try_from(j) else {
                continue;
            };
            let mut next_removed = 0;
            for &(lo, hi) in &added {
                let (mut lo, hi) = (lo.max(i_lo), hi.min(i_hi + 1));
                while lo < hi {
                    // Skip removed runs that end before `lo`, then emit up to the next one.
                    while next_removed < removed.len() && removed[next_removed].1 <= lo {
                        next_removed += 1;
                    }
                    let stop = match removed.get(next_removed) {
                        Some(&(r_lo, r_hi)) if r_lo <= lo => {
                            lo = r_hi;
                            continue;
                        }
                        Some(&(r_lo, _)) => r_lo.min(hi),
                        None => hi,
                    };
                    for i in lo..stop {
                        if let Ok(i32) = u32::try_from(i) {
                            mark(i32, j32);
                        }
                    }
                    lo = stop;
                }
            }
        }
    }
}

/// The x coordinate (half units) where edge `e` meets the line `z` (half units) as `(num, den)`
/// with `den > 0`; the edge must not be horizontal, and `z` must lie within its z range.
///
/// `den ≤ 2^31` and `num ≤ 2^31 · 2^31 + 2^32 · 2^31 < 2^65`, so products with coordinates stay far
/// inside `i128`.
fn crossing_x(e: &Edge, z: i128) -> (i128, i128) {
    let ((lo_x, lo_z), (hi_x, hi_z)) = if e.az <= e.bz { ((e.ax, e.az), (e.bx, e.bz)) } else { ((e.bx, e.bz), (e.ax, e.az)) };
    let den = hi_z - lo_z;
    (2 * lo_x * den + (z - 2 * lo_z) * (hi_x - lo_x), den)
}

/// The run `[lo, hi)` of columns `i_lo ≤ i ≤ i_hi` whose centres on row line `z` lie within distance
/// `r` of edge `e`, or `None`.
///
/// The squared distance to a segment is convex along the row, so its minimum over the columns is at
/// one of the two columns around the point of the row nearest to the segment, and the columns within
/// `r` form one run around it; each end is found by binary search with the exact test.
fn near_run(e: &Edge, z: i128, r: i128, lattice: Lattice, i_lo: i128, i_hi: i128) -> Option<(i128, i128)> {
    let lo = lattice.first_at_or_after(lattice.x0, 2 * (e.min_x() - r), 1).max(i_lo);
    let hi = lattice.last_at_or_before(lattice.x0, 2 * (e.max_x() + r), 1).min(i_hi);
    if lo > hi {
        return None;
    }
    // The point of the segment nearest to the row line: where it crosses the line, else its endpoint
    // nearest in z (either endpoint of a horizontal edge).
    let (num, den) = if e.az == e.bz {
        (2 * e.ax, 1)
    } else if z <= 2 * e.min_z() {
        (2 * if e.az <= e.bz { e.ax } else { e.bx }, 1)
    } else if z >= 2 * e.max_z() {
        (2 * if e.az >= e.bz { e.ax } else { e.bx }, 1)
    } else {
        crossing_x(e, z)
    };
    let pass = |i: i128| segment_within_half(e, lattice.x0 + lattice.step * i, z, r);
    let below = lattice.last_at_or_before(lattice.x0, num, den);
    let start = [below.clamp(lo, hi), (below + 1).clamp(lo, hi)].into_iter().find(|&i| pass(i))?;
    // Largest passing column in [start, hi] and smallest in [lo, start].
    let (mut a, mut b) = (start, hi);
    while a < b {
        let mid = a + (b - a + 1) / 2;
        if pass(mid) { a = mid } else { b = mid - 1 }
    }
    let last = a;
    let (mut a, mut b) = (lo, start);
    while a < b {
        let mid = a + (b - a) / 2;
        if pass(mid) { b = mid } else { a = mid + 1 }
    }
    Some((a, last + 1))
}

/// The simplicity checks of [`Polygon::new`] on raw vertices (at least 3, no repeats).
fn check_simple(pts: &[(i128, i128)]) -> Result<(), PolygonError> {
    let n = pts.len();
    // Adjacent edges share a vertex; they touch elsewhere only when they fold back along one line.
    for k in 0..n {
        let (a, b, c) = (pts[k], pts[(k + 1) % n], pts[(k + 2) % n]);
        let (d1, d2) = ((b.0 - a.0, b.1 - a.1), (c.0 - b.0, c.1 - b.1));
        if cross_raw(d1.0, d1.1, d2.0, d2.1) == 0 && d1.0 * d2.0 + d1.1 * d2.1 < 0 {
            let (e1, e2) = (k, (k + 1) % n);
            return Err(PolygonError::SelfIntersecting { edge_a: e1.min(e2), edge_b: e1.max(e2) });
        }
    }
    // Other pairs: sweep the edges in order of their smallest x (ties by index), comparing each with
    // the later ones whose x range starts before it ends.
    let edge = |k: usize| (pts[k], pts[(k + 1) % n]);
    let min_x = |k: usize| pts[k].0.min(pts[(k + 1) % n].0);
    let max_x = |k: usize| pts[k].0.max(pts[(k + 1) % n].0);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_unstable_by_key(|&k| (min_x(k), k));
    for (pos, &k) in order.iter().enumerate() {
        let (a, b) = edge(k);
        for &m in &order[pos + 1..] {
            if min_x(m) > max_x(k) {
                break;
            }
            let gap = k.abs_diff(m);
            if gap == 1 || gap == n - 1 {
                continue;
            }
            let (c, d) = edge(m);
            if a.1.max(b.1) < c.1.min(d.1) || c.1.max(d.1) < a.1.min(b.1) {
                continue;
            }
            if segments_touch(a, b, c, d) {
                return Err(PolygonError::SelfIntersecting { edge_a: k.min(m), edge_b: k.max(m) });
            }
        }
    }
    Ok(())
}

/// Most navcells a polygon config's grid may hold (2^26: 128 MiB of masks at most).
pub const MAX_CONFIG_CELLS: u64 = 1 << 26;

/// Default `cellSize`. `[Units: metres]`
pub const DEFAULT_CELL_SIZE: Fixed = Fixed::lit("0.4");
/// Default `agentRadius`. `[Units: metres]`
pub const DEFAULT_AGENT_RADIUS: Fixed = Fixed::lit("0.45");
/// Default `objectPadding`. `[Units: metres]`
pub const DEFAULT_OBJECT_PADDING: Fixed = Fixed::lit("0.25");

/// Which list of the config a shape is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeKind {
    /// `areas`: walkable navigation areas.
    Area,
    /// `obstacles`: blocked zones.
    Obstacle,
}

impl std::fmt::Display for ShapeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ShapeKind::Area => "area",
            ShapeKind::Obstacle => "obstacle",
        })
    }
}

/// Why a polygon config could not be read or built. Lines and columns are 1-based, as `serde_json`
/// reports them; for a value that parses but is invalid they point just after that value, or just
/// inside it when it is an object or a list. `Display` gives `line:column: at PATH: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// Malformed JSON, a missing, unknown or repeated field, a value of the wrong type, or a number
    /// out of range; `message` says what was expected.
    Json {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The JSON path of the value (`areas[2].polygon`); empty for the text as a whole.
        path: String,
        /// What was wrong, without the position.
        message: String,
    },
    /// The polygon of an area or obstacle is not a valid [`Polygon`].
    BadPolygon {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The JSON path of the shape (`obstacles[1]`).
        path: String,
        /// Which list the shape is in.
        shape: ShapeKind,
        /// Its 0-based position in that list.
        index: usize,
        /// Its `name`.
        name: String,
        /// What is wrong with the polygon.
        error: PolygonError,
    },
    /// Two areas have the same name (areas are toggled by name).
    DuplicateAreaName {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The JSON path of the second area with the name (`areas[2]`).
        path: String,
        /// 0-based position of the second area with the name.
        index: usize,
        /// 0-based position of the first.
        first_index: usize,
        /// The repeated name.
        name: String,
    },
    /// The areas need a grid wider or deeper than [`MAX_SIDE`] navcells at this `cellSize`.
    GridTooLarge {
        /// Navcells needed along x.
        width: u64,
        /// Navcells needed along z.
        depth: u64,
    },
    /// [`PolygonConfig::set_area_available`] was given a name no area has.
    UnknownArea {
        /// The name asked for.
        name: String,
    },
}

impl ConfigError {
    /// What is wrong, without the position and the JSON path.
    pub fn message(&self) -> String {
        match self {
            ConfigError::Json { message, .. } => message.clone(),
            ConfigError::BadPolygon { shape, index, name, error, .. } => format!("{shape} {index} ({name:?}): {error}"),
            ConfigError::DuplicateAreaName { index, first_index, name, .. } => {
                format!("area {index} repeats the name {name:?} of area {first_index}; expected unique area names")
            }
            ConfigError::GridTooLarge { width, depth } => format!(
                "the areas need a {width}x{depth} navcell grid; expected at most {MAX_SIDE} on each axis and {MAX_CONFIG_CELLS} in all (use a larger cellSize)"
            ),
            ConfigError::UnknownArea { name } => format!("no area is named {name:?}"),
        }
    }

    /// An error about the value at `path` of `text`, where [`locate`] finds it.
    fn json_at(text: &str, path: &str, message: String) -> Self {
        let JsonError { line, column, path, message } = JsonError::at(text, path, message);
        ConfigError::Json { line, column, path, message }
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigError::Json { line, column, path, .. }
            | ConfigError::BadPolygon { line, column, path, .. }
            | ConfigError::DuplicateAreaName { line, column, path, .. } => {
                write!(f, "{line}:{column}: ")?;
                if !path.is_empty() {
                    write!(f, "at {path}: ")?;
                }
                f.write_str(&self.message())
            }
            ConfigError::GridTooLarge { .. } | ConfigError::UnknownArea { .. } => f.write_str(&self.message()),
        }
    }
}

impl std::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConfigError::BadPolygon { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// A walkable navigation area of a [`PolygonConfig`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Area {
    /// Unique among the areas of a config.
    name: String,
    /// Whether the area is walkable now (doors, gates).
    available: bool,
    polygon: Polygon,
}

impl Area {
    /// The area's name, unique in its config.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the area is currently walkable.
    pub fn available(&self) -> bool {
        self.available
    }

    /// The area's outline.
    pub fn polygon(&self) -> &Polygon {
        &self.polygon
    }
}

/// A blocked zone of a [`PolygonConfig`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Obstacle {
    /// Free text; need not be unique.
    name: String,
    polygon: Polygon,
}

impl Obstacle {
    /// The obstacle's name (not necessarily unique).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The obstacle's outline.
    pub fn polygon(&self) -> &Polygon {
        &self.polygon
    }
}

/// Where the grid of a config lies: the south-west corner and the size in navcells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridBounds {
    /// West edge of column 0. `[Units: metres]`
    pub min_x: Fixed,
    /// South edge of row 0. `[Units: metres]`
    pub min_z: Fixed,
    /// Columns. `[Units: navcells] [Limit: 1..=MAX_SIDE]`
    pub width: u32,
    /// Rows. `[Units: navcells] [Limit: 1..=MAX_SIDE]`
    pub depth: u32,
}

/// A polygon config file (the `.json` form of the grid-pathfinding design): navigation areas,
/// obstacles and the erosion parameters.
///
/// ```json
/// { "cellSize": 0.4, "agentRadius": 0.45, "objectPadding": 0.25, "boundaryPadding": 0.0, "floorY": 0.0,
///   "areas": [ { "name": "main_room", "available": true, "polygon": [[0, 0], [10, 0], [10, 8], [0, 8]] } ],
///   "obstacles": [ { "name": "table", "polygon": [[4, 4], [6, 4], [6, 5], [4, 5]] } ] }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolygonConfig {
    /// `[Units: metres] [Limit: (0, MAX_CELL_SIZE]]`
    cell_size: Fixed,
    /// `[Units: metres] [Limit: 0..=WORLD_LIMIT]`
    agent_radius: Fixed,
    /// `[Units: metres] [Limit: 0..=WORLD_LIMIT]`
    object_padding: Fixed,
    /// `[Units: metres] [Limit: 0..=WORLD_LIMIT]`
    boundary_padding: Fixed,
    /// `[Units: metres]`
    floor_y: Fixed,
    /// At least one; names unique.
    areas: Vec<Area>,
    obstacles: Vec<Obstacle>,
}

/// A config file as written; checked by [`PolygonConfig::parse_json`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase", expecting = "a polygon config object")]
struct RawConfig {
    #[serde(default, deserialize_with = "deserialize_some_fixed")]
    cell_size: Option<Fixed>,
    #[serde(default, deserialize_with = "deserialize_some_fixed")]
    agent_radius: Option<Fixed>,
    #[serde(default, deserialize_with = "deserialize_some_fixed")]
    object_padding: Option<Fixed>,
    #[serde(default, deserialize_with = "deserialize_some_fixed")]
    boundary_padding: Option<Fixed>,
    #[serde(default, deserialize_with = "deserialize_some_fixed")]
    floor_y: Option<Fixed>,
    areas: Vec<RawArea>,
    #[serde(default)]
    obstacles: Vec<RawObstacle>,
}

/// An `areas` entry as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "an area object with a name and a polygon")]
struct RawArea {
    name: String,
    #[serde(default = "available_by_default")]
    available: bool,
    polygon: Vec<[JsonFixed; 2]>,
}

fn available_by_default() -> bool {
    true
}

/// An `obstacles` entry as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "an obstacle object with a name and a polygon")]
struct RawObstacle {
    name: String,
    polygon: Vec<[JsonFixed; 2]>,
}

/// The polygon of entry `index` of the `shape` list, or the error that names it.
fn check_polygon(text: &str, shape: ShapeKind, index: usize, name: &str, points: &[[JsonFixed; 2]]) -> Result<Polygon, ConfigError> {
    let vertices = points.iter().map(|[x, z]| WorldPos::new(x.0, z.0)).collect();
    Polygon::new(vertices).map_err(|error| {
        let path = format!("{}[{index}]", if shape == ShapeKind::Area { "areas" } else { "obstacles" });
        let (line, column) = locate(text, &path).unwrap_or((1, 1));
        ConfigError::BadPolygon { line, column, path, shape, index, name: name.to_string(), error }
    })
}

impl PolygonConfig {
    /// Reads a config from JSON text. Top-level keys: `cellSize` (default 0.4, in
    /// `(0, MAX_CELL_SIZE]`), `agentRadius` (0.45), `objectPadding` (0.25), `boundaryPadding` (0),
    /// all three `≥ 0`, `floorY` (0), `areas` (required, at least one:
    /// `{ "name", "available" (default true), "polygon": [[x, z], ...] }`, names unique) and
    /// `obstacles` (default none: `{ "name", "polygon" }`). Numbers are decimals within
    /// ±[`WORLD_LIMIT`], read exactly (see [`crate::geometry::decimal`]); unknown or repeated keys are errors.
    ///
    /// # Errors
    /// [`ConfigError::Json`], [`ConfigError::BadPolygon`] or [`ConfigError::DuplicateAreaName`], with
    /// the line and column.
    pub fn parse_json(text: &str) -> Result<PolygonConfig, ConfigError> {
        let raw: RawConfig =
            from_json(text).map_err(|JsonError { line, column, path, message }| ConfigError::Json { line, column, path, message })?;
        if let Some(value) = raw.cell_size.filter(|&v| v <= Fixed::ZERO || v > MAX_CELL_SIZE) {
            return Err(ConfigError::json_at(text, "cellSize", format!("expected `cellSize` in (0, {MAX_CELL_SIZE}], found {value}")));
        }
        for (key, value) in
            [("agentRadius", raw.agent_radius), ("objectPadding", raw.object_padding), ("boundaryPadding", raw.boundary_padding)]
        {
            if let Some(value) = value.filter(|&v| v < Fixed::ZERO) {
                return Err(ConfigError::json_at(text, key, format!("expected `{key}` ≥ 0, found {value}")));
            }
        }
        if raw.areas.is_empty() {
            return Err(ConfigError::json_at(text, "areas", "expected at least one entry in `areas`".to_string()));
        }
        let mut names: BTreeMap<&str, usize> = BTreeMap::new();
        let mut areas = Vec::with_capacity(raw.areas.len());
        for (index, area) in raw.areas.iter().enumerate() {
            let polygon = check_polygon(text, ShapeKind::Area, index, &area.name, &area.polygon)?;
            if let Some(&first_index) = names.get(area.name.as_str()) {
                let path = format!("areas[{index}]");
                let (line, column) = locate(text, &path).unwrap_or((1, 1));
                return Err(ConfigError::DuplicateAreaName { line, column, path, index, first_index, name: area.name.clone() });
            }
            names.insert(&area.name, index);
            areas.push(Area { name: area.name.clone(), available: area.available, polygon });
        }
        let mut obstacles = Vec::with_capacity(raw.obstacles.len());
        for (index, obstacle) in raw.obstacles.iter().enumerate() {
            let polygon = check_polygon(text, ShapeKind::Obstacle, index, &obstacle.name, &obstacle.polygon)?;
            obstacles.push(Obstacle { name: obstacle.name.clone(), polygon });
        }
        Ok(PolygonConfig {
            cell_size: raw.cell_size.unwrap_or(DEFAULT_CELL_SIZE),
            agent_radius: raw.agent_radius.unwrap_or(DEFAULT_AGENT_RADIUS),
            object_padding: raw.object_padding.unwrap_or(DEFAULT_OBJECT_PADDING),
            boundary_padding: raw.boundary_padding.unwrap_or(Fixed::ZERO),
            floor_y: raw.floor_y.unwrap_or(Fixed::ZERO),
            areas,
            obstacles,
        })
    }

    /// Side of a navcell. `[Units: metres]`
    pub fn cell_size(&self) -> Fixed {
        self.cell_size
    }

    /// Agent half-width, eroded around obstacles. `[Units: metres]`
    pub fn agent_radius(&self) -> Fixed {
        self.agent_radius
    }

    /// Extra clearance around obstacles. `[Units: metres]`
    pub fn object_padding(&self) -> Fixed {
        self.object_padding
    }

    /// Inward erosion from the edges of areas. `[Units: metres]`
    pub fn boundary_padding(&self) -> Fixed {
        self.boundary_padding
    }

    /// Height placed on path waypoints; unused by the grid. `[Units: metres]`
    pub fn floor_y(&self) -> Fixed {
        self.floor_y
    }

    /// The navigation areas, in file order.
    pub fn areas(&self) -> &[Area] {
        &self.areas
    }

    /// The obstacles, in file order.
    pub fn obstacles(&self) -> &[Obstacle] {
        &self.obstacles
    }

    /// Opens or closes the area called `name` (a door, a gate); rebuild the grid afterwards.
    ///
    /// # Errors
    /// [`ConfigError::UnknownArea`] when no area has that name.
    pub fn set_area_available(&mut self, name: &str, available: bool) -> Result<(), ConfigError> {
        match self.areas.iter_mut().find(|a| a.name == name) {
            Some(area) => {
                area.available = available;
                Ok(())
            }
            None => Err(ConfigError::UnknownArea { name: name.to_string() }),
        }
    }

    /// The grid the areas need: the union of the bounding boxes of all areas (available or not, so
    /// toggling never moves the grid), grown on every side by `2 · cellSize + agentRadius +
    /// objectPadding`. Column 0 starts exactly at the grown west edge and row 0 at the grown south
    /// edge; width and depth are the grown extents divided by `cellSize`, rounded up, so the east and
    /// north margins may be up to one navcell wider.
    ///
    /// # Errors
    /// [`ConfigError::GridTooLarge`] when a side would exceed [`MAX_SIDE`] navcells or the grid
    /// would hold more than [`MAX_CONFIG_CELLS`] navcells (a few bytes of JSON must not be able to
    /// ask for gigabytes).
    pub fn grid_bounds(&self) -> Result<GridBounds, ConfigError> {
        let margin = raw(self.cell_size) * 2 + raw(self.agent_radius) + raw(self.object_padding);
        let (mut min_x, mut min_z, mut max_x, mut max_z) = (i128::MAX, i128::MAX, i128::MIN, i128::MIN);
        for area in &self.areas {
            let (lo, hi) = area.polygon.bbox();
            min_x = min_x.min(raw(lo.x));
            min_z = min_z.min(raw(lo.z));
            max_x = max_x.max(raw(hi.x));
            max_z = max_z.max(raw(hi.z));
        }
        // Coordinates are within ±2^30 raw and the margin below 2^34, so nothing here overflows.
        let cell = raw(self.cell_size);
        let width = div_ceil(max_x - min_x + 2 * margin, cell);
        let depth = div_ceil(max_z - min_z + 2 * margin, cell);
        let side = |n: i128| u32::try_from(n).ok().filter(|n| (1..=MAX_SIDE).contains(n));
        let (Some(w), Some(d), Ok(x0), Ok(z0)) = (side(width), side(depth), i64::try_from(min_x - margin), i64::try_from(min_z - margin))
        else {
            let to_u64 = |n: i128| u64::try_from(n).unwrap_or(u64::MAX);
            return Err(ConfigError::GridTooLarge { width: to_u64(width), depth: to_u64(depth) });
        };
        if u64::from(w) * u64::from(d) > MAX_CONFIG_CELLS {
            return Err(ConfigError::GridTooLarge { width: u64::from(w), depth: u64::from(d) });
        }
        Ok(GridBounds { min_x: Fixed::from_bits(x0), min_z: Fixed::from_bits(z0), width: w, depth: d })
    }

    /// Builds the walkable grid of a polygon config alone (docs/pathfinding-rules.md), in the grid-file form:
    ///
    /// 1. every navcell whose centre is inside an available area is walkable; with
    ///    `boundaryPadding > 0`, only if the centre is also farther than `boundaryPadding` from that
    ///    area's edges ([`CellTest::InsideAwayFrom`]);
    /// 2. every navcell whose centre is inside an obstacle, or within `agentRadius + objectPadding`
    ///    of its edges, is blocked ([`CellTest::InsideOrNear`]).
    ///
    /// The grid has one class ([`crate::formats::grid_text::WALKABLE`]) and lies at [`PolygonConfig::grid_bounds`];
    /// the header lists `cellSize`, `agentRadius`, `objectPadding`, `boundaryPadding`, `floorY`,
    /// `minX`, `minZ`, `gridWidth`, `gridDepth`, so [`crate::formats::grid_text::write_grid_text`] saves it.
    ///
    /// # Errors
    /// [`ConfigError::GridTooLarge`] as [`PolygonConfig::grid_bounds`].
    pub fn build_grid(&self) -> Result<GridText, ConfigError> {
        let bounds = self.grid_bounds()?;
        let too_large = || ConfigError::GridTooLarge { width: u64::from(bounds.width), depth: u64::from(bounds.depth) };
        let mut grid = NavGrid::new(bounds.width, bounds.depth, 1, self.cell_size).map_err(|_| too_large())?;
        let width = bounds.width as usize;
        let mut walkable = vec![false; grid.n_cells()];
        let origin = WorldPos::new(bounds.min_x, bounds.min_z);
        let clip = CellRect::full(bounds.width, bounds.depth);
        let area_test =
            if self.boundary_padding > Fixed::ZERO { CellTest::InsideAwayFrom(self.boundary_padding) } else { CellTest::Inside };
        for area in self.areas.iter().filter(|a| a.available) {
            area.polygon.mark_cells(area_test, origin, self.cell_size, clip, |i, j| walkable[j as usize * width + i as usize] = true);
        }
        let clearance = CellTest::InsideOrNear(self.agent_radius + self.object_padding);
        for obstacle in &self.obstacles {
            obstacle.polygon.mark_cells(clearance, origin, self.cell_size, clip, |i, j| walkable[j as usize * width + i as usize] = false);
        }
        for (index, _) in walkable.iter().enumerate().filter(|(_, w)| !**w) {
            let (i, j) = (index % width, index / width);
            if let (Ok(i), Ok(j)) = (u16::try_from(i), u16::try_from(j)) {
                grid.set_blocked_mask(Navcell::new(i, j), WALKABLE.bit());
            }
        }
        let header = vec![
            ("cellSize".to_string(), format_fixed(self.cell_size)),
            ("agentRadius".to_string(), format_fixed(self.agent_radius)),
            ("objectPadding".to_string(), format_fixed(self.object_padding)),
            ("boundaryPadding".to_string(), format_fixed(self.boundary_padding)),
            ("floorY".to_string(), format_fixed(self.floor_y)),
            ("minX".to_string(), format_fixed(bounds.min_x)),
            ("minZ".to_string(), format_fixed(bounds.min_z)),
            ("gridWidth".to_string(), bounds.width.to_string()),
            ("gridDepth".to_string(), bounds.depth.to_string()),
        ];
        Ok(GridText { header, cell_size: self.cell_size, min_x: bounds.min_x, min_z: bounds.min_z, grid })
    }
}

#[cfg(test)]
mod tests;
