//! Exact movement-line tests: a unit's step against the navcell grid and against unit obstruction squares.
//!
//! The 0 A.D. design ("Unit movement") checks every step a unit takes against the world before
//! taking it: the movement line against the navcell grid, and against every unit obstruction square
//! expanded by the moving unit's radius. This module is that check, computed exactly.
//!
//! # The grid test
//!
//! Navcells are taken as *closed* squares `[i·c, (i+1)·c] × [j·c, (j+1)·c]` (`c` the navcell size),
//! and the segment `from → to` is closed too. A segment touches a navcell when the two share a point,
//! so a segment through a navcell corner touches all four navcells there and a segment running along
//! a grid line touches the navcells on both sides. [`segment_clear`] asks whether every touched
//! navcell is passable (navcells off the grid never are). With this convention a diagonal step
//! between the centres of two neighbouring navcells is clear exactly when jump point search allows
//! it: both navcells and both orthogonal neighbours passable (no corner cutting).
//!
//! The touched navcells are walked with an integer DDA: crossings of vertical and horizontal grid
//! lines are ordered by their parameters along the segment, compared as cross-multiplied `i128`
//! fractions, and a crossing of both lines at once (a corner) enters three navcells at once. The cost
//! is proportional to the number of navcells touched, and the walk stops at the first blocked one, so
//! it never runs further than the grid is wide and high.
//!
//! # The square test
//!
//! [`segment_hits_square`] follows 0 A.D.'s rule (docs/pathfinding-rules.md) for a [`UnitSquare`] expanded by
//! the mover's radius: if the start is inside or on the edge, the step never collides (so a unit
//! overlapping another can always walk out of it); otherwise, if the end is inside or on the edge, it
//! collides; otherwise it collides exactly when the segment meets the closed square, which includes
//! grazing a corner and sliding along an edge.
//!
//! # Exactness and limits
//!
//! Everything is computed on the raw bits of the fixed-point inputs, widened to `i128` (or `u128`
//! for non-negative products), with no rounding except where a function returns a position. The
//! crate keeps world coordinates within ±[`WORLD_LIMIT`](crate::geometry::decimal::WORLD_LIMIT) (2^14 m),
//! and inside that range every product here is below 2^80. The functions are nonetheless exact for
//! every representable input, and never panic or overflow:
//!
//! - The grid walk starts only when every navcell at `from` is on the grid, so `from` and every grid
//!   line it meets are within 2^40 raw units (65535 navcells of at most 256 m); the segment's
//!   extent is below 2^64, so every product of the walk is below 2^106.
//! - The square test clips each of the square's slabs to the segment's own bounding box before
//!   dividing, so every numerator is at most its denominator (below 2^64) and every cross product
//!   fits in `u128`.

use std::cmp::Ordering;

use crate::geometry::{Fixed, WorldPos, cell_div_rem, div_ceil, div_floor, raw};
use crate::grid::navcell::Navcell;
use crate::grid::pass_map::{BLOCK, PassMap};

/// How many times [`furthest_clear_point`] pulls its answer back before it settles for `from`.
const MAX_PULLBACKS: u32 = 16;

/// A parameter `t = num / den` along a segment, `0 ≤ t ≤ 1`, `den > 0`.
#[derive(Clone, Copy, Debug)]
struct Param {
    num: i128,
    den: i128,
}

impl Param {
    const ZERO: Param = Param { num: 0, den: 1 };

    /// Exact comparison by cross multiplication (both numerators are below 2^42 and both
    /// denominators below 2^64 wherever the walk compares them; see the module documentation).
    fn cmp(self, other: Param) -> Ordering {
        (self.num * other.den).cmp(&(other.num * self.den))
    }

    fn is_zero(self) -> bool {
        self.num == 0
    }
}

/// One axis of a segment, reflected if need be so that its coordinate never decreases along it.
///
/// Reflecting `x → -x` maps the closed navcell `[k·c, (k+1)·c]` onto `[-(k+1)·c, -k·c]`, which is
/// navcell `-1 - k`: the walk runs in the reflected space and maps indices back when it reports.
#[derive(Clone, Copy, Debug)]
struct Axis {
    /// Reflected start coordinate. `[Units: 2^-16 m]`
    start: i128,
    /// Change along the segment, `≥ 0`. `[Units: 2^-16 m]`
    delta: i128,
    /// Whether the axis is reflected.
    flipped: bool,
}

impl Axis {
    fn new(from: Fixed, to: Fixed) -> Self {
        let (a, b) = (raw(from), raw(to));
        if b < a { Axis { start: -a, delta: a - b, flipped: true } } else { Axis { start: a, delta: b - a, flipped: false } }
    }

    /// The lowest reflected navcell index touched at the start, and how many more navcells the start
    /// touches on this axis that stay touched all along: 1 when the segment runs along a grid line
    /// of this axis, else 0. (A start on a grid line that the segment leaves touches the lower
    /// navcell only at `t = 0`; the walk enters the upper one by a crossing at `t = 0`.)
    fn first_cell(self, c: i128) -> (i128, i128) {
        // `⌈start / c⌉ - 1` from one floor division. World coordinates and navcell sizes fit in
        // `i64`, whose division is several times cheaper than `i128`'s; the result is the same.
        let (floor, rem) = floor_div_rem(self.start, c);
        let first = floor + i128::from(rem != 0) - 1;
        let extra = i128::from(self.delta == 0 && rem == 0);
        (first, extra)
    }

    /// The parameter at which the segment enters reflected navcell `k + 1` from `k`, if it does.
    fn exit(self, k: i128, c: i128) -> Option<Param> {
        let boundary = (k + 1) * c;
        if self.delta == 0 || boundary > self.start + self.delta {
            None
        } else {
            Some(Param { num: boundary - self.start, den: self.delta })
        }
    }

    /// The navcell index in the original, unreflected space.
    fn unreflect(self, k: i128) -> i128 {
        if self.flipped { -1 - k } else { k }
    }
}

/// `(⌊n / q⌋, n − q·⌊n / q⌋)` for `q > 0`: Euclidean division, in `i64` when both fit (several times
/// cheaper than `i128`'s, with the same result), which world coordinates, navcell sizes and the
/// products of the segment tests on any map of ordinary size do.
fn floor_div_rem(n: i128, q: i128) -> (i128, i128) {
    match (i64::try_from(n), i64::try_from(q)) {
        (Ok(n), Ok(q)) => (i128::from(n.div_euclid(q)), i128::from(n.rem_euclid(q))),
        _ => (n.div_euclid(q), n.rem_euclid(q)),
    }
}

/// Calls `visit(t, i, j)` once for every navcell `(i, j)` (signed, possibly off the grid) that the
/// closed segment touches, where `t` is the smallest parameter at which it touches it, in
/// non-decreasing order of `t`, until `visit` returns `false`.
///
/// Callers must stop (return `false`) at the latest at the first navcell off the grid, after any
/// further navcells touched at the same `t`: that is what bounds the products (see the module
/// documentation) and the length of the walk.
fn walk(cell_size: Fixed, from: WorldPos, to: WorldPos, mut visit: impl FnMut(Param, i128, i128) -> bool) {
    // A `PassMap` comes from a `NavGrid`, whose navcell size is positive; the clamp only keeps a
    // division by zero impossible.
    let c = raw(cell_size).max(1);
    let (ax, az) = (Axis::new(from.x, to.x), Axis::new(from.z, to.z));
    let (mut i, extra_i) = ax.first_cell(c);
    let (mut j, extra_j) = az.first_cell(c);
    for di in 0..=extra_i {
        for dj in 0..=extra_j {
            if !visit(Param::ZERO, ax.unreflect(i + di), az.unreflect(j + dj)) {
                return;
            }
        }
    }
    loop {
        let (t, step_i, step_j) = match (ax.exit(i, c), az.exit(j, c)) {
            (None, None) => return,
            (Some(tx), None) => (tx, true, false),
            (None, Some(tz)) => (tz, false, true),
            (Some(tx), Some(tz)) => match tx.cmp(tz) {
                Ordering::Less => (tx, true, false),
                Ordering::Greater => (tz, false, true),
                Ordering::Equal => (tx, true, true),
            },
        };
        let keep_going = if step_i && step_j {
            // Through a corner: three navcells are entered at once. Both axes move, so neither
            // holds an extra navcell.
            visit(t, ax.unreflect(i + 1), az.unreflect(j))
                && visit(t, ax.unreflect(i), az.unreflect(j + 1))
                && visit(t, ax.unreflect(i + 1), az.unreflect(j + 1))
        } else if step_i {
            (0..=extra_j).all(|dj| visit(t, ax.unreflect(i + 1), az.unreflect(j + dj)))
        } else {
            (0..=extra_i).all(|di| visit(t, ax.unreflect(i + di), az.unreflect(j + 1)))
        };
        if !keep_going {
            return;
        }
        i += i128::from(step_i);
        j += i128::from(step_j);
    }
}

/// Whether the signed navcell `(i, j)` is on the grid and passable.
fn passable(map: &PassMap, i: i128, j: i128) -> bool {
    match (u16::try_from(i), u16::try_from(j)) {
        (Ok(i), Ok(j)) => map.is_passable(Navcell::new(i, j)),
        _ => false,
    }
}

/// Whether every navcell that the closed segment `from → to` touches is passable.
///
/// Navcells are closed squares: a segment through a navcell corner touches all four navcells
/// there, one along a grid line touches the navcells on both sides, and a segment of length zero
/// touches every navcell containing its point (up to four). Navcells off the grid are impassable.
/// A step between the centres of two neighbouring navcells is therefore clear exactly when jump
/// point search may take it: both navcells passable and, for a diagonal step, both orthogonal
/// neighbours too.
///
/// Exact for every input and never panics; costs `O(navcells touched)` and stops at the first blocked navcell.
pub fn segment_clear(map: &PassMap, from: WorldPos, to: WorldPos) -> bool {
    // Most segments asked about are short steps: when every navcell their bounding box touches is
    // passable, so is every navcell the segment touches, and the walk is not needed.
    if small_box_clear(map, from, to) {
        return true;
    }
    if let Some(clear) = spans_clear(map, from, to) {
        return clear;
    }
    let mut clear = true;
    walk(map.cell_size(), from, to, |_, i, j| {
        clear = passable(map, i, j);
        clear
    });
    clear
}

/// Whether the closed bounding box of `from → to` spans at most 4 × 4 navcells and touches only
/// passable ones (navcells are closed squares: a box edge on a grid line touches the navcells on
/// both sides). `true` says that [`segment_clear`] holds and that the navcell containing `from`
/// is a passable navcell of the grid; `false` says nothing: the segment may still be clear.
///
/// The cheap first test of a short step, for a caller that needs both facts.
pub fn small_box_clear(map: &PassMap, from: WorldPos, to: WorldPos) -> bool {
    // Divisions in i64, which every raw coordinate is (much cheaper than i128's).
    let c = map.cell_size().to_bits().max(1);
    let span = |a: Fixed, b: Fixed| {
        let (lo, hi) = (a.to_bits().min(b.to_bits()), a.to_bits().max(b.to_bits()));
        let ((lo_cell, lo_rem), (hi_cell, _)) = (cell_div_rem(lo, c), cell_div_rem(hi, c));
        (lo_cell.saturating_sub(i64::from(lo_rem == 0)), hi_cell)
    };
    let ((i0, i1), (j0, j1)) = (span(from.x, to.x), span(from.z, to.z));
    if i1.saturating_sub(i0) > 3 || j1.saturating_sub(j0) > 3 {
        return false;
    }
    // A box reaching beyond the grid's border is answered by the exact walk.
    map.box_passable_padded((i0, i1), (j0, j1)).unwrap_or(false)
}

/// [`segment_clear`] line by line for a segment whose ends lie strictly inside the map (`None`
/// for any other, which the walk answers). The navcells are cut into lines across the axis along
/// which the segment is shorter (rows when it runs more along x); in each line it touches, the
/// segment touches a run of navcells from the lowest to the highest coordinate it has inside that
/// line's closed strip, and the run is checked a word of the bit plane at a time. The coordinates
/// at the strip edges are kept as exact fractions, stepped from one edge to the next without
/// dividing, and rounded to navcell indices the way the closed navcells require: a coordinate on a
/// grid line touches the navcells on both sides. Eight lines aligned to the map's 8 × 8 blocks are
/// passed at once when every block their runs reach is open (all its navcells passable: the
/// map's open-block bits), which is most of a long segment on open ground.
fn spans_clear(map: &PassMap, from: WorldPos, to: WorldPos) -> Option<bool> {
    let span = line_spans(map, from, to)?;
    // Every coordinate lies in `0..2^29` and the navcell size is at most the map's side, so the
    // largest value [`LineSpans::clear`] makes, `BLOCK · c · (u1 − u0)`, stays under `2^61`:
    // `i64` is exact there, and several times cheaper than `i128`, which any larger map gets.
    if span.extent < 1 << 29 { span.clear::<i64>() } else { span.clear::<i128>() }
}

/// The segment `from → to` for [`spans_clear`], `None` unless both ends lie strictly inside the map.
fn line_spans(map: &PassMap, from: WorldPos, to: WorldPos) -> Option<LineSpans<'_>> {
    let c = raw(map.cell_size());
    let (w, h) = (i128::from(map.width()) * c, i128::from(map.height()) * c);
    let inside = |p: WorldPos| raw(p.x) > 0 && raw(p.x) < w && raw(p.z) > 0 && raw(p.z) < h;
    if c <= 0 || !inside(from) || !inside(to) {
        return None;
    }
    // `v` is the axis the lines are cut across, `u` the axis along them.
    let along_rows = (raw(to.z) - raw(from.z)).abs() <= (raw(to.x) - raw(from.x)).abs();
    let (mut u0, mut v0, mut u1, mut v1) =
        if along_rows { (raw(from.x), raw(from.z), raw(to.x), raw(to.z)) } else { (raw(from.z), raw(from.x), raw(to.z), raw(to.x)) };
    if v1 < v0 {
        (u0, v0, u1, v1) = (u1, v1, u0, v0);
    }
    Some(LineSpans { map, along_rows, extent: w.max(h), c, u0, v0, u1, v1 })
}

/// A signed integer type [`LineSpans::clear`] computes in.
trait Coord:
    Copy
    + Ord
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Rem<Output = Self>
    + std::ops::AddAssign
    + std::ops::SubAssign
    + From<u32>
    + TryFrom<i128>
    + TryInto<u32>
{
    /// `(⌊n / q⌋, n − q·⌊n / q⌋)` for `q > 0`.
    fn floor_div_rem(self, q: Self) -> (Self, Self);
}

impl Coord for i64 {
    fn floor_div_rem(self, q: Self) -> (Self, Self) {
        (self.div_euclid(q), self.rem_euclid(q))
    }
}

impl Coord for i128 {
    fn floor_div_rem(self, q: Self) -> (Self, Self) {
        floor_div_rem(self, q)
    }
}

/// A segment strictly inside the map for [`spans_clear`], its ends ordered along `v` (the axis
/// the lines are cut across), as raw coordinates.
struct LineSpans<'a> {
    map: &'a PassMap,
    along_rows: bool,
    /// The map's larger side, raw.
    extent: i128,
    c: i128,
    u0: i128,
    v0: i128,
    u1: i128,
    v1: i128,
}

impl LineSpans<'_> {
    /// The test of [`spans_clear`] in `T`, which every value must fit (`None` when one does not).
    fn clear<T: Coord>(&self) -> Option<bool> {
        let (map, along_rows) = (self.map, self.along_rows);
        let to_t = |v: i128| T::try_from(v).ok();
        let (c, u0, v0, u1, v1) = (to_t(self.c)?, to_t(self.u0)?, to_t(self.v0)?, to_t(self.u1)?, to_t(self.v1)?);
        let (zero, one) = (T::from(0), T::from(1));
        let n_pos = if along_rows { map.width() } else { map.height() };
        // The navcell indices a coordinate `n / q` (`q > 0`) touches: `(⌈n/q⌉ - 1, ⌊n/q⌋)`.
        let touched = |n: T, q: T| {
            let (floor, rem) = n.floor_div_rem(q);
            (if rem == zero { floor - one } else { floor }, floor)
        };
        let run_clear = |line: T, lo: T, hi: T| {
            // Both ends lie inside the map, so every line and position here is on the grid but for
            // a coordinate on the map's edge, which touches the navcell beyond it: off the grid.
            match (line.try_into(), lo.try_into(), hi.try_into()) {
                (Ok(line), Ok(lo), Ok(hi)) if hi < n_pos => map.span_passable(along_rows, line, lo, hi),
                _ => false,
            }
        };
        let (first_line, last_line) = (touched(v0, c).0, touched(v1, c).1);
        let d = v1 - v0;
        if d == zero {
            // Along a line: one run, in one line or (on a grid line) two.
            let (lo, hi) = (touched(u0.min(u1), c).0, touched(u0.max(u1), c).1);
            let mut line = first_line;
            while line <= last_line {
                if !run_clear(line, lo, hi) {
                    return Some(false);
                }
                line += one;
            }
            return Some(true);
        }
        // u(v) = n(v) / q with n(v) = u0·d + (v − v0)·du and q = d·c; the ends have n = u·d.
        let (du, q) = (u1 - u0, d * c);
        let end_lo_hi = |u: T| touched(u * d, q);
        // At the first strip edge after v0, and the step from one edge to the next.
        // n at an edge as `quot · q + rem` with `0 <= rem < q`, stepped by the step's own quotient
        // and remainder: no division inside the loop.
        let first_edge = (first_line + one) * c;
        let n = u0 * d + (first_edge - v0) * du;
        let (mut quot, mut rem) = n.floor_div_rem(q);
        let step = c * du;
        let (step_quot, step_rem) = step.floor_div_rem(q);
        let mut previous = end_lo_hi(u0);
        // `(⌈n/q⌉ - 1, ⌊n/q⌋)` of the edge `(quot, rem)` stands for, as `touched` gives it.
        let at_edge = |quot: T, rem: T| (if rem == zero { quot - one } else { quot }, quot);
        let block = T::from(BLOCK);
        // Steps of `BLOCK - 1` and `BLOCK` edges at once, as quotient and remainder (made when first
        // needed: short segments never skip a block row).
        let mut block_steps: Option<[(T, T); 2]> = None;
        let jump = |(quot, rem): (T, T), (sq, sr): (T, T)| {
            let (quot, rem) = (quot + sq, rem + sr);
            if rem >= q { (quot + one, rem - q) } else { (quot, rem) }
        };
        let mut line = first_line;
        while line <= last_line {
            // A whole block row of lines before the last: when every block its runs reach is open,
            // all of them are passable and the lines are skipped. The runs of lines `line ..
            // line + BLOCK` reach from the touched navcells of the edge below the first to those of
            // the edge above the last (the segment is monotone along the lines).
            if line % block == zero && line + block <= last_line {
                let [step7, step8] =
                    *block_steps.get_or_insert_with(|| [((block - one) * step).floor_div_rem(q), (block * step).floor_div_rem(q)]);
                let top = {
                    let (q7, r7) = jump((quot, rem), step7);
                    at_edge(q7, r7)
                };
                let (lo, hi) = (previous.0.min(top.0), previous.1.max(top.1));
                // `line` is a multiple of `BLOCK` at least `-1`, so at least 0: the divisions floor.
                if lo >= zero && hi < T::from(n_pos) && blocks_open(map, along_rows, line / block, lo / block, hi / block) {
                    (quot, rem) = jump((quot, rem), step8);
                    (previous, line) = (top, line + block);
                    continue;
                }
            }
            let next = if line == last_line {
                end_lo_hi(u1)
            } else {
                let edge = at_edge(quot, rem);
                (quot, rem) = (quot + step_quot, rem + step_rem);
                if rem >= q {
                    (quot, rem) = (quot + one, rem - q);
                }
                edge
            };
            if !run_clear(line, previous.0.min(next.0), previous.1.max(next.1)) {
                return Some(false);
            }
            previous = next;
            line += one;
        }
        Some(true)
    }
}

/// Whether the blocks of block line `line` (a block row when `along_rows`, else a block column)
/// at block positions `from..=to` are all open ([`PassMap::block_open`]).
fn blocks_open<T: Coord>(map: &PassMap, along_rows: bool, line: T, from: T, to: T) -> bool {
    let (Ok(line), Ok(from), Ok(to)) = (line.try_into(), from.try_into(), to.try_into()) else { return false };
    (from..=to).all(|k| if along_rows { map.block_open(k, line) } else { map.block_open(line, k) })
}

/// The first blocked navcell along the segment and the parameter at which the segment touches it.
fn first_blocked_at(map: &PassMap, from: WorldPos, to: WorldPos) -> Option<(Param, i128, i128)> {
    let mut best: Option<(Param, i128, i128)> = None;
    walk(map.cell_size(), from, to, |t, i, j| {
        if let Some((best_t, best_i, best_j)) = best {
            // Parameters never decrease, so once past the first block's, nothing can tie with it.
            if t.cmp(best_t) == Ordering::Greater {
                return false;
            }
            if !passable(map, i, j) && (i, j) < (best_i, best_j) {
                best = Some((t, i, j));
            }
        } else if !passable(map, i, j) {
            best = Some((t, i, j));
        }
        true
    });
    best
}

/// A signed navcell index as a `u16` for reporting: indices outside `0..=65535` become `65535`.
/// No grid is wider or higher than 65535 navcells, so index 65535 is off every grid and the
/// reported navcell is off the grid exactly when the real one is.
fn report_index(k: i128) -> u16 {
    u16::try_from(k).unwrap_or(u16::MAX)
}

/// The first impassable navcell that the closed segment `from → to` touches, or `None` when
/// [`segment_clear`] holds.
///
/// "First" orders the touched impassable navcells by the smallest parameter `t ∈ [0, 1]` at which
/// the segment touches each, then, among navcells first touched at the same `t` (at a corner, on a
/// grid line, or at `from`), by signed column `i` and then signed row `j`, smallest first (west
/// before east, then south before north).
///
/// A navcell off the grid is impassable; one with a coordinate outside `0..=65535` (a negative one,
/// west or south of the grid) is reported with that coordinate as `u16::MAX`. No grid holds column
/// or row 65535, so the reported navcell is off the grid exactly when the touched one is, and
/// [`PassMap::is_passable`] is `false` for it.
///
/// Exact for every input and never panics; costs `O(navcells touched)`.
pub fn first_blocked(map: &PassMap, from: WorldPos, to: WorldPos) -> Option<Navcell> {
    first_blocked_at(map, from, to).map(|(_, i, j)| Navcell::new(report_index(i), report_index(j)))
}

/// The point just before parameter `t` (`0 < t ≤ 1`) on one axis of `from → to`, rounded toward
/// `from` to a whole raw unit: the largest raw value strictly below the exact one when the axis
/// increases, the smallest strictly above when it decreases, `from` when it is constant.
fn just_before(from: Fixed, to: Fixed, t: Param) -> Fixed {
    let delta = raw(to) - raw(from);
    // `t.num < 2^42` and `|delta| < 2^64` (module documentation), so this is below 2^106.
    let offset = delta * t.num;
    let moved = match delta.cmp(&0) {
        Ordering::Greater => div_ceil(offset, t.den) - 1,
        Ordering::Less => div_floor(offset, t.den) + 1,
        Ordering::Equal => 0,
    };
    // `0 < t ≤ 1` puts the result between `from` and `to`, so it always fits; the fallback only
    // avoids a panic path.
    i64::try_from(raw(from) + moved).map(Fixed::from_bits).unwrap_or(from)
}

/// Where a unit walking the segment `from → to` must stop because the grid blocks it: the last
/// point of the segment before it first touches an impassable navcell, rounded toward `from` to a
/// multiple of 2^-16 m.
///
/// - When [`segment_clear`] holds, this is `to`.
/// - When a navcell touched at `from` itself is impassable (`from` inside or on the edge of one, or
///   off the grid), this is `from`.
/// - Otherwise the segment first touches an impassable navcell at some point `Q`; the answer is the
///   point just before `Q` with each coordinate rounded toward `from` (a coordinate that is exactly
///   representable, such as one on the blocked navcell's edge, is moved back by 2^-16 m, so the unit
///   never stops on a blocked navcell's edge, from where every step would touch it).
///
/// Rounding moves the point off the exact line by less than 2^-16 m per axis, and in rare cases
/// (a grid corner that close to the line) the rounded step would touch a navcell the exact one
/// missed. The answer is therefore checked, and while it is not clear the same rule is applied
/// again to the shorter step `from → answer`; after 16 tries the answer is `from`. Hence, whenever
/// `from`'s own navcells are passable, `segment_clear(map, from, answer)` holds: a unit may always
/// take the step this returns.
///
/// Exact for every input and never panics; costs `O(navcells touched)` per try.
pub fn furthest_clear_point(map: &PassMap, from: WorldPos, to: WorldPos) -> WorldPos {
    let Some((mut t, ..)) = first_blocked_at(map, from, to) else {
        return to;
    };
    let mut target = to;
    for _ in 0..MAX_PULLBACKS {
        if t.is_zero() {
            return from;
        }
        let candidate = WorldPos::new(just_before(from.x, target.x, t), just_before(from.z, target.z, t));
        match first_blocked_at(map, from, candidate) {
            None => return candidate,
            Some((next_t, ..)) => {
                target = candidate;
                t = next_t;
            }
        }
    }
    from
}

/// An axis-aligned square unit obstruction: the closed square `center ± half` on both axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnitSquare {
    /// Centre of the square. `[Units: metres]`
    pub center: WorldPos,
    /// Half the side of the square. `[Units: metres]`
    pub half: Fixed,
}

/// The closed box `[x0, x1] × [z0, z1]` of a square expanded by `expand`, in raw units, or `None`
/// when the expanded half-size is negative (an empty square).
fn expanded_box(square: &UnitSquare, expand: Fixed) -> Option<[i128; 4]> {
    let half = raw(square.half) + raw(expand);
    if half < 0 {
        return None;
    }
    let (cx, cz) = (raw(square.center.x), raw(square.center.z));
    Some([cx - half, cx + half, cz - half, cz + half])
}

fn in_box(p: WorldPos, [x0, x1, z0, z1]: [i128; 4]) -> bool {
    let (x, z) = (raw(p.x), raw(p.z));
    x0 <= x && x <= x1 && z0 <= z && z <= z1
}

/// Whether `p` is inside or on the edge of `square` expanded by `expand` on every side (the closed
/// square `center ± (half + expand)`).
///
/// A negative `half + expand` is an empty square that holds no point; zero is the single point
/// `center`. Exact for every input and never panics.
pub fn point_in_square(p: WorldPos, square: &UnitSquare, expand: Fixed) -> bool {
    expanded_box(square, expand).is_some_and(|b| in_box(p, b))
}

/// The parameters `t ∈ [0, 1]` at which one axis of a segment lies in the slab `[lo, hi]`, as
/// `[lo_num / den, hi_num / den]` with `0 ≤ lo_num ≤ hi_num ≤ den`, or `None` when it never does.
#[derive(Clone, Copy, Debug)]
struct Span {
    lo_num: u128,
    hi_num: u128,
    den: u128,
}

fn slab_span(from: i128, to: i128, lo: i128, hi: i128) -> Option<Span> {
    // Reflect so that the coordinate increases; the slab reflects with it.
    let (a, b, lo, hi) = if to < from { (-from, -to, -hi, -lo) } else { (from, to, lo, hi) };
    if hi < a || lo > b {
        return None;
    }
    if a == b {
        return Some(Span { lo_num: 0, hi_num: 1, den: 1 });
    }
    // Clipping the slab to the segment's extent keeps every numerator within the denominator, so
    // the cross products below stay under (2^64)^2 = 2^128. The differences are non-negative, so the
    // casts are exact.
    let (lo, hi) = (lo.max(a), hi.min(b));
    Some(Span { lo_num: (lo - a) as u128, hi_num: (hi - a) as u128, den: (b - a) as u128 })
}

/// Whether the closed segment meets the closed box: the two slabs' parameter spans overlap.
fn segment_meets_box(from: WorldPos, to: WorldPos, [x0, x1, z0, z1]: [i128; 4]) -> bool {
    let Some(sx) = slab_span(raw(from.x), raw(to.x), x0, x1) else {
        return false;
    };
    let Some(sz) = slab_span(raw(from.z), raw(to.z), z0, z1) else {
        return false;
    };
    sx.lo_num * sz.den <= sz.hi_num * sx.den && sz.lo_num * sx.den <= sx.hi_num * sz.den
}

/// Whether a unit stepping from `from` to `to` collides with `square` expanded by `expand` (the
/// moving unit's radius), by 0 A.D.'s rule (docs/pathfinding-rules.md, "Segment against a unit square"), in this order:
///
/// 1. `from` inside or on the edge of the expanded square: `false`, whatever `to` is. A unit that
///    already overlaps an obstruction (it should not, but spawning or a changed world can put it
///    there) can always walk out; it can also walk further in.
/// 2. Otherwise `to` inside or on the edge: `true`. A unit can never step onto the edge, so a unit
///    outside stays strictly outside.
/// 3. Otherwise `true` exactly when the segment meets the closed square: passing through it,
///    grazing a corner, or sliding along (part of) an edge all count.
///
/// A zero-length step is handled by rules 1 and 3 (it never collides). A negative `half + expand` is
/// an empty square that nothing collides with. Exact for every input and never panics.
pub fn segment_hits_square(from: WorldPos, to: WorldPos, square: &UnitSquare, expand: Fixed) -> bool {
    let Some(b) = expanded_box(square, expand) else {
        return false;
    };
    if in_box(from, b) {
        return false;
    }
    in_box(to, b) || segment_meets_box(from, to, b)
}

#[cfg(test)]
mod tests;
