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
//! [`segment_hits_square`] follows the design's rule for an axis-aligned [`UnitSquare`] expanded by
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

use crate::geometry::{Fixed, WorldPos, div_ceil, div_floor, raw};
use crate::grid::navcell::Navcell;
use crate::grid::pass_map::PassMap;

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
        let (floor, rem) = match (i64::try_from(self.start), i64::try_from(c)) {
            (Ok(s), Ok(c)) => (i128::from(s.div_euclid(c)), i128::from(s.rem_euclid(c))),
            _ => (self.start.div_euclid(c), self.start.rem_euclid(c)),
        };
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
    let mut clear = true;
    walk(map.cell_size(), from, to, |_, i, j| {
        clear = passable(map, i, j);
        clear
    });
    clear
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
/// moving unit's radius), by the 0 A.D. design's rule, in this order:
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
mod tests {
    use super::*;
    use crate::grid::nav_grid::NavGrid;
    use crate::test_support::{CLASS, random_grid, random_map};
    use proptest::prelude::*;
    use proptest::strategy::ValueTree;

    fn fx(bits: i64) -> Fixed {
        Fixed::from_bits(bits)
    }

    fn at(x: i64, z: i64) -> WorldPos {
        WorldPos::new(fx(x), fx(z))
    }

    /// A grid from rows of `.` (passable) and `#` (blocked), first row north, with the given navcell
    /// size in raw units.
    fn grid_from(rows: &[&str], cell_raw: i64) -> NavGrid {
        let h = rows.len() as u32;
        let w = rows[0].len() as u32;
        let mut grid = NavGrid::new(w, h, 1, fx(cell_raw)).unwrap();
        for (k, row) in rows.iter().enumerate() {
            let j = h - 1 - k as u32;
            for (i, ch) in row.chars().enumerate() {
                grid.set_passable(Navcell::new(i as u16, j as u16), CLASS, ch != '#');
            }
        }
        grid
    }

    // ---- Oracles: independent of the walk and of the slab test. ----

    /// Whether the closed segment `(x0, z0) → (x1, z1)` meets the closed box, by the separating axis
    /// theorem: the boxes' x and z axes and the segment's normal.
    fn sat_meets(x0: i128, z0: i128, x1: i128, z1: i128, [bx0, bx1, bz0, bz1]: [i128; 4]) -> bool {
        if x0.max(x1) < bx0 || x0.min(x1) > bx1 || z0.max(z1) < bz0 || z0.min(z1) > bz1 {
            return false;
        }
        let (dx, dz) = (x1 - x0, z1 - z0);
        let sides: Vec<i128> =
            [(bx0, bz0), (bx1, bz0), (bx0, bz1), (bx1, bz1)].iter().map(|&(cx, cz)| (dx * (cz - z0) - dz * (cx - x0)).signum()).collect();
        !(sides.iter().all(|&s| s > 0) || sides.iter().all(|&s| s < 0))
    }

    /// The smallest parameter at which the segment is in a box it meets, as `(num, den)`.
    fn entry_param(x0: i128, z0: i128, x1: i128, z1: i128, [bx0, bx1, bz0, bz1]: [i128; 4]) -> (i128, i128) {
        let axis = |a: i128, b: i128, lo: i128, hi: i128| -> (i128, i128) {
            match (b - a).cmp(&0) {
                Ordering::Greater => ((lo - a).max(0), b - a),
                Ordering::Less => ((a - hi).max(0), a - b),
                Ordering::Equal => (0, 1),
            }
        };
        let (nx, dx) = axis(x0, x1, bx0, bx1);
        let (nz, dz) = axis(z0, z1, bz0, bz1);
        if nx * dz >= nz * dx { (nx, dx) } else { (nz, dz) }
    }

    /// Every navcell the closed segment touches (by [`sat_meets`]), with its entry parameter, sorted
    /// by `(t, i, j)`.
    fn oracle_touched(cell_raw: i64, from: WorldPos, to: WorldPos) -> Vec<((i128, i128), i128, i128)> {
        let c = i128::from(cell_raw);
        let (x0, z0, x1, z1) = (raw(from.x), raw(from.z), raw(to.x), raw(to.z));
        let mut out = Vec::new();
        for i in div_floor(x0.min(x1), c) - 1..=div_floor(x0.max(x1), c) + 1 {
            for j in div_floor(z0.min(z1), c) - 1..=div_floor(z0.max(z1), c) + 1 {
                let cell = [i * c, (i + 1) * c, j * c, (j + 1) * c];
                if sat_meets(x0, z0, x1, z1, cell) {
                    out.push((entry_param(x0, z0, x1, z1, cell), i, j));
                }
            }
        }
        out.sort_by(|a, b| (a.0.0 * b.0.1).cmp(&(b.0.0 * a.0.1)).then((a.1, a.2).cmp(&(b.1, b.2))));
        out
    }

    fn oracle_passable(map: &PassMap, i: i128, j: i128) -> bool {
        i >= 0 && j >= 0 && i < i128::from(map.width()) && j < i128::from(map.height()) && map.is_passable(Navcell::new(i as u16, j as u16))
    }

    /// The first blocked navcell by the oracle, with its entry parameter.
    fn oracle_first_blocked(map: &PassMap, from: WorldPos, to: WorldPos) -> Option<((i128, i128), i128, i128)> {
        let cell_raw = map.cell_size().to_bits();
        oracle_touched(cell_raw, from, to).into_iter().find(|&(_, i, j)| !oracle_passable(map, i, j))
    }

    /// The walk's full output (never stopped early), as `(t, i, j)`.
    fn walk_all(cell_raw: i64, from: WorldPos, to: WorldPos) -> Vec<((i128, i128), i128, i128)> {
        let mut out = Vec::new();
        walk(fx(cell_raw), from, to, |t, i, j| {
            out.push(((t.num, t.den), i, j));
            true
        });
        out
    }

    /// A coordinate strategy: often on grid lines, half-cells or quarter-cells (exact corners and
    /// centres), otherwise anywhere, within a couple of navcells around a `n`-navcell grid.
    fn coord(n: u32, cell_raw: i64) -> impl Strategy<Value = i64> {
        let lo = -2 * cell_raw;
        let hi = (i64::from(n) + 2) * cell_raw;
        prop_oneof![
            (-8i64..(i64::from(n) + 2) * 4).prop_map(move |q| q * cell_raw / 4),
            (-2i64..i64::from(n) + 2).prop_map(move |k| k * cell_raw),
            lo..=hi,
        ]
    }

    /// Navcell sizes: tiny ones put every raw position near a grid line, 1 m is the usual one.
    fn cell_size() -> impl Strategy<Value = i64> {
        prop_oneof![1i64..=5, Just(1 << 16), (1i64 << 12)..(1 << 17)]
    }

    /// A random map and a segment on and around it.
    fn map_and_segment() -> impl Strategy<Value = (PassMap, i64, WorldPos, WorldPos)> {
        (1u32..10, 1u32..10, any::<u64>(), 0u64..60, cell_size()).prop_flat_map(|(w, h, seed, density, cell_raw)| {
            (coord(w, cell_raw), coord(h, cell_raw), coord(w, cell_raw), coord(h, cell_raw))
                .prop_map(move |(x0, z0, x1, z1)| (random_map(w, h, seed, density, cell_raw), cell_raw, at(x0, z0), at(x1, z1)))
        })
    }

    // ---- Data-driven examples: one helper draws what the walk touched. ----

    /// Draws the grid with the navcells the segment touches (`o` passable, `X` blocked), one row of
    /// border around it, then the answers of the three grid functions.
    #[track_caller]
    fn check(rows: &[&str], from: (i64, i64), to: (i64, i64), expected: &str) {
        let cell = 1 << 16;
        let grid = grid_from(rows, cell);
        let map = PassMap::build(&grid, CLASS);
        let (from, to) = (at(from.0, from.1), at(to.0, to.1));
        let touched: Vec<(i128, i128)> = walk_all(cell, from, to).into_iter().map(|(_, i, j)| (i, j)).collect();
        let (w, h) = (i128::from(map.width()), i128::from(map.height()));
        let mut out = String::new();
        for j in (-1..=h).rev() {
            for i in -1..=w {
                let on = touched.contains(&(i, j));
                let free = oracle_passable(&map, i, j);
                out.push(match (on, free) {
                    (true, true) => 'o',
                    (true, false) => 'X',
                    (false, true) => '.',
                    (false, false) => '#',
                });
            }
            out.push('\n');
        }
        let stop = furthest_clear_point(&map, from, to);
        out.push_str(&format!(
            "clear {} first {:?} stop ({}, {})\n",
            segment_clear(&map, from, to),
            first_blocked(&map, from, to).map(|c| (c.i, c.j)),
            stop.x.to_bits(),
            stop.z.to_bits()
        ));
        assert_eq!(out, expected, "\n{out}");
    }

    const M: i64 = 1 << 16;

    #[test]
    fn diagonal_through_a_corner_touches_all_four() {
        // Centre of (0, 0) to centre of (1, 1): through the corner (1, 1), touching (1, 0) and (0, 1).
        check(
            &["...", "...", "..."],
            (M / 2, M / 2),
            (3 * M / 2, 3 * M / 2),
            "#####\n#...#\n#oo.#\n#oo.#\n#####\nclear true first None stop (98304, 98304)\n",
        );
        check(
            &["...", ".#.", "..."],
            (M / 2, 3 * M / 2),
            (3 * M / 2, 5 * M / 2),
            // Corner cut past the blocked middle: (1, 1) is touched at the corner.
            "#####\n#oo.#\n#oX.#\n#...#\n#####\nclear false first Some((1, 1)) stop (65535, 131071)\n",
        );
    }

    #[test]
    fn segment_along_a_grid_line_touches_both_sides() {
        // Along z = 1 m from x = 0.5 to x = 2.5: rows 0 and 1 both touched.
        check(
            &["...", "..#", "..."],
            (M / 2, M),
            (5 * M / 2, M),
            "#####\n#...#\n#ooX#\n#ooo#\n#####\nclear false first Some((2, 1)) stop (131071, 65536)\n",
        );
        // Along the west edge of the grid: the off-grid column -1 is touched from the start.
        check(&["..", ".."], (0, M / 2), (0, 3 * M / 2), "####\nXo.#\nXo.#\n####\nclear false first Some((65535, 0)) stop (0, 32768)\n");
    }

    #[test]
    fn leaving_the_grid_is_blocked_at_its_edge() {
        // Heading east out of a 3-wide grid: column 3 is first touched where x = 3 m.
        check(
            &["...", "...", "..."],
            (M / 2, M / 2 + 7),
            (4 * M, M / 2 + 7),
            "#####\n#...#\n#...#\n#oooX\n#####\nclear false first Some((3, 0)) stop (196607, 32775)\n",
        );
        // Heading south-west: the corner (0, 0) of the grid touches (-1, -1), (-1, 0) and (0, -1) at
        // once; the tie goes to the smallest column, then row: (-1, -1).
        check(&["..", ".."], (M, M), (-M, -M), "####\n#oo#\nXoo#\nXX##\nclear false first Some((65535, 65535)) stop (1, 1)\n");
    }

    #[test]
    fn a_start_on_a_blocked_edge_stays_put() {
        // The start is on the west edge of the blocked (1, 0): it touches it at t = 0.
        check(&[".#."], (M, M / 2), (0, M / 2), "#####\nXoX.#\n#####\nclear false first Some((1, 0)) stop (65536, 32768)\n");
        // Zero-length step inside a passable navcell.
        check(&[".#."], (M / 4, M / 2), (M / 4, M / 2), "#####\n#o#.#\n#####\nclear true first None stop (16384, 32768)\n");
    }

    /// Rounding can move the end of a step across a navcell corner that the exact segment missed;
    /// `furthest_clear_point` must then pull back again rather than return a step that is not clear.
    /// Here (navcells of 2 raw units, so that a raw unit is a large fraction of a navcell) the
    /// segment from (1, 5) to (3, 0) first touches a blocked navcell when it leaves the grid at
    /// (3, 0). The point just before that, rounded toward the start, is (2, 1): on the east edge of the
    /// blocked navcell (0, 0), which the exact segment passes well east of. The step to (1, 3), the
    /// rounded point just before the shorter step first touches (0, 0), is clear.
    #[test]
    fn furthest_clear_point_pulls_back_when_rounding_crosses_a_corner() {
        let grid = grid_from(&["...", "...", "#.."], 2);
        let map = PassMap::build(&grid, CLASS);
        let (from, to) = (at(1, 5), at(3, 0));
        assert_eq!(first_blocked(&map, from, to), Some(Navcell::new(1, u16::MAX)));
        assert!(!segment_clear(&map, from, at(2, 1)), "the first rounded answer is not a legal step");
        let stop = furthest_clear_point(&map, from, to);
        assert_eq!(stop, at(1, 3));
        assert!(segment_clear(&map, from, stop));
    }

    // ---- Properties against the oracles. ----

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The walk visits exactly the navcells the closed segment meets, each once, with its exact
        /// entry parameter, in non-decreasing order of it.
        #[test]
        fn walk_visits_every_touched_cell_once_in_entry_order((map, cell_raw, from, to) in map_and_segment()) {
            let _ = map;
            let walked = walk_all(cell_raw, from, to);
            for pair in walked.windows(2) {
                let ((n0, d0), (n1, d1)) = (pair[0].0, pair[1].0);
                prop_assert!(n0 * d1 <= n1 * d0, "parameters decrease: {:?}", walked);
            }
            let mut sorted = walked.clone();
            sorted.sort_by(|a, b| (a.0.0 * b.0.1).cmp(&(b.0.0 * a.0.1)).then((a.1, a.2).cmp(&(b.1, b.2))));
            let oracle = oracle_touched(cell_raw, from, to);
            prop_assert_eq!(sorted.len(), oracle.len(), "walk {:?}\noracle {:?}", sorted, oracle);
            for (w, o) in sorted.iter().zip(&oracle) {
                prop_assert_eq!((w.1, w.2), (o.1, o.2));
                // Same parameter, compared as fractions.
                prop_assert_eq!(w.0.0 * o.0.1, o.0.0 * w.0.1, "t of ({}, {})", w.1, w.2);
            }
        }

        /// `segment_clear` is "every navcell the oracle says is touched is passable", and agrees with
        /// `first_blocked`.
        #[test]
        fn segment_clear_matches_the_exact_cell_oracle((map, cell_raw, from, to) in map_and_segment()) {
            let oracle = oracle_touched(cell_raw, from, to).iter().all(|&(_, i, j)| oracle_passable(&map, i, j));
            prop_assert_eq!(segment_clear(&map, from, to), oracle);
            prop_assert_eq!(first_blocked(&map, from, to).is_none(), oracle);
            // The closed segment touches the same navcells whichever way it is walked.
            prop_assert_eq!(segment_clear(&map, to, from), oracle);
        }

        /// `first_blocked` is the touched blocked navcell with the smallest entry parameter, ties to
        /// the smallest column, then row.
        #[test]
        fn first_blocked_is_the_touched_blocked_cell_with_the_smallest_entry((map, _cell_raw, from, to) in map_and_segment()) {
            let expected = oracle_first_blocked(&map, from, to).map(|(_, i, j)| Navcell::new(report_index(i), report_index(j)));
            prop_assert_eq!(first_blocked(&map, from, to), expected);
            if let Some(cell) = expected {
                prop_assert!(!map.is_passable(cell));
            }
        }

        /// `furthest_clear_point` is `to` when clear, `from` when blocked at the start, and otherwise a
        /// point the unit may step to: the step to it is clear, it is strictly before the first
        /// block along the segment, and it is within the segment's bounding box.
        #[test]
        fn furthest_clear_point_stays_clear_and_short_of_the_first_block((map, _cell_raw, from, to) in map_and_segment()) {
            let stop = furthest_clear_point(&map, from, to);
            match oracle_first_blocked(&map, from, to) {
                None => prop_assert_eq!(stop, to),
                Some(((0, _), ..)) => prop_assert_eq!(stop, from),
                Some(((num, den), ..)) => {
                    prop_assert!(segment_clear(&map, from, stop), "step to {:?} is not clear", stop);
                    let touched = oracle_touched(map.cell_size().to_bits(), from, stop);
                    prop_assert!(touched.iter().all(|&(_, i, j)| oracle_passable(&map, i, j)));
                    let (x0, z0, x1, z1) = (raw(from.x), raw(from.z), raw(to.x), raw(to.z));
                    let (sx, sz) = (raw(stop.x), raw(stop.z));
                    prop_assert!(x0.min(x1) <= sx && sx <= x0.max(x1) && z0.min(z1) <= sz && sz <= z0.max(z1));
                    // Strictly before Q = from + t·d along d: (stop - from)·d < t·|d|².
                    let (dx, dz) = (x1 - x0, z1 - z0);
                    let along = (sx - x0) * dx + (sz - z0) * dz;
                    prop_assert!(along * den < num * (dx * dx + dz * dz));
                }
            }
        }
    }

    /// How often the first rounded answer of `furthest_clear_point` is already clear, and that it is
    /// then within one raw unit of the exact first-block point on each axis: the pull-back loop is
    /// a rare safety net, not the rule.
    #[test]
    fn furthest_clear_point_is_within_one_raw_unit_of_the_block_almost_always() {
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let (mut blocked, mut near) = (0u32, 0u32);
        for _ in 0..20000 {
            let (map, _cell_raw, from, to) = map_and_segment().new_tree(&mut runner).unwrap().current();
            let Some(((num, den), ..)) = oracle_first_blocked(&map, from, to) else { continue };
            if num == 0 {
                continue;
            }
            blocked += 1;
            let stop = furthest_clear_point(&map, from, to);
            let (x0, z0, x1, z1) = (raw(from.x), raw(from.z), raw(to.x), raw(to.z));
            // |stop - Q| < 1 raw unit per axis, i.e. |stop·den - (from·den + d·num)| < den.
            let qx = x0 * den + (x1 - x0) * num;
            let qz = z0 * den + (z1 - z0) * num;
            if (raw(stop.x) * den - qx).abs() <= den && (raw(stop.z) * den - qz).abs() <= den {
                near += 1;
            }
        }
        assert!(blocked > 1000, "too few blocked segments ({blocked}) to say anything");
        assert!(near * 100 >= blocked * 95, "only {near} of {blocked} answers were next to the block");
    }

    #[test]
    fn diagonal_centre_steps_follow_the_no_corner_cutting_rule() {
        for seed in 0..40u64 {
            let (w, h) = (9u32, 7u32);
            let map = PassMap::build(&random_grid(w, h, seed, 30), CLASS);
            let ok = |i: i64, j: i64| oracle_passable(&map, i128::from(i), i128::from(j));
            let centre = |i: i64, j: i64| at(i * M + M / 2, j * M + M / 2);
            for i in -1..=i64::from(w) {
                for j in -1..=i64::from(h) {
                    for (di, dj) in [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)] {
                        let legal = ok(i, j) && ok(i + di, j + dj) && ok(i + di, j) && ok(i, j + dj);
                        assert_eq!(
                            segment_clear(&map, centre(i, j), centre(i + di, j + dj)),
                            legal,
                            "seed {seed} ({i}, {j}) + ({di}, {dj})"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn extreme_inputs_neither_panic_nor_overflow() {
        let map = PassMap::build(&random_grid(5, 5, 3, 0), CLASS);
        let extremes = [i64::MIN, i64::MIN + 1, -1, 0, 1, M * 5, i64::MAX - 1, i64::MAX];
        let inside = at(2 * M + 5, 2 * M + 9);
        for &x in &extremes {
            for &z in &extremes {
                let far = at(x, z);
                // A clear step ends on the closed grid; starting off it is blocked at once.
                let on_grid = (0..=5 * M).contains(&x) && (0..=5 * M).contains(&z);
                assert!(!segment_clear(&map, inside, far) || on_grid, "{far:?}");
                assert_eq!(segment_clear(&map, far, inside), first_blocked(&map, far, inside).is_none());
                assert!(!segment_clear(&map, far, inside) || on_grid, "{far:?}");
                let stop = furthest_clear_point(&map, inside, far);
                assert!(segment_clear(&map, inside, stop), "{far:?} stop {stop:?}");
                assert_eq!(furthest_clear_point(&map, far, far), far);
                for &half in &[i64::MIN, -1, 0, M, i64::MAX] {
                    for &expand in &[i64::MIN, 0, M, i64::MAX] {
                        let square = UnitSquare { center: at(x, z), half: fx(half) };
                        let total = i128::from(half) + i128::from(expand);
                        let hit = segment_hits_square(inside, far, &square, fx(expand));
                        let (x0, z0, x1, z1) = (raw(inside.x), raw(inside.z), raw(far.x), raw(far.z));
                        let expected = total >= 0 && {
                            let b = [i128::from(x) - total, i128::from(x) + total, i128::from(z) - total, i128::from(z) + total];
                            !in_box(inside, b) && (in_box(far, b) || sat_meets_wide(x0, z0, x1, z1, b))
                        };
                        assert_eq!(hit, expected, "square {square:?} expand {expand} to {far:?}");
                    }
                }
            }
        }
    }

    /// [`sat_meets`] for inputs whose products would overflow `i128`: the box is clipped to the
    /// segment's bounding box (which changes nothing) and the side tests compare the products in
    /// 256-bit form.
    fn sat_meets_wide(x0: i128, z0: i128, x1: i128, z1: i128, [bx0, bx1, bz0, bz1]: [i128; 4]) -> bool {
        if x0.max(x1) < bx0 || x0.min(x1) > bx1 || z0.max(z1) < bz0 || z0.min(z1) > bz1 {
            return false;
        }
        let clip = [bx0.max(x0.min(x1)), bx1.min(x0.max(x1)), bz0.max(z0.min(z1)), bz1.min(z0.max(z1))];
        let (dx, dz) = (x1 - x0, z1 - z0);
        let corners = [(clip[0], clip[2]), (clip[1], clip[2]), (clip[0], clip[3]), (clip[1], clip[3])];
        let sides: Vec<Ordering> = corners.iter().map(|&(cx, cz)| wide_cmp_products(dx, cz - z0, dz, cx - x0)).collect();
        !(sides.iter().all(|&s| s == Ordering::Greater) || sides.iter().all(|&s| s == Ordering::Less))
    }

    /// Compares `a·b` with `c·d` for values below 2^65 in magnitude, exactly, by splitting each
    /// product into 64-bit limbs of magnitude plus a sign.
    fn wide_cmp_products(a: i128, b: i128, c: i128, d: i128) -> Ordering {
        fn wide(a: i128, b: i128) -> (i8, u128, u128) {
            let sign = (a.signum() * b.signum()) as i8;
            let (a, b) = (a.unsigned_abs(), b.unsigned_abs());
            let (a_hi, a_lo) = (a >> 64, a & u128::from(u64::MAX));
            let (b_hi, b_lo) = (b >> 64, b & u128::from(u64::MAX));
            let lo = a_lo * b_lo;
            let mid = a_hi * b_lo + a_lo * b_hi;
            let hi = a_hi * b_hi + (mid >> 64);
            let (lo, carry) = lo.overflowing_add((mid & u128::from(u64::MAX)) << 64);
            (sign, hi + u128::from(carry), lo)
        }
        let (s1, h1, l1) = wide(a, b);
        let (s2, h2, l2) = wide(c, d);
        let mag = |s: i8, h: u128, l: u128| (s, if s < 0 { (u128::MAX - h, u128::MAX - l) } else { (h, l) });
        match s1.cmp(&s2) {
            Ordering::Equal if s1 == 0 => Ordering::Equal,
            Ordering::Equal => {
                let (_, m1) = mag(s1, h1, l1);
                let (_, m2) = mag(s2, h2, l2);
                m1.cmp(&m2)
            }
            other => other,
        }
    }

    // ---- Unit squares. ----

    fn square(cx: i64, cz: i64, half: i64) -> UnitSquare {
        UnitSquare { center: at(cx, cz), half: fx(half) }
    }

    #[test]
    fn start_inside_or_on_the_edge_never_collides() {
        let sq = square(0, 0, M);
        let expand = fx(M / 2);
        // Inside, walking through and out the far side.
        assert!(!segment_hits_square(at(0, 0), at(5 * M, 0), &sq, expand));
        // On the expanded edge (x = 1.5 m), walking straight in.
        assert!(!segment_hits_square(at(3 * M / 2, 0), at(0, 0), &sq, expand));
        // On the expanded corner, walking along the edge.
        assert!(!segment_hits_square(at(3 * M / 2, 3 * M / 2), at(-3 * M / 2, 3 * M / 2), &sq, expand));
        assert!(point_in_square(at(3 * M / 2, 3 * M / 2), &sq, expand));
        assert!(!point_in_square(at(3 * M / 2 + 1, 0), &sq, expand));
    }

    #[test]
    fn end_on_the_edge_collides() {
        let sq = square(0, 0, M);
        assert!(segment_hits_square(at(3 * M, 0), at(M, 0), &sq, Fixed::ZERO));
        assert!(segment_hits_square(at(3 * M, 3 * M), at(M, M), &sq, Fixed::ZERO), "end on a corner");
        assert!(!segment_hits_square(at(3 * M, 0), at(M + 1, 0), &sq, Fixed::ZERO), "end one raw unit short");
    }

    #[test]
    fn grazing_and_sliding_count_as_meeting() {
        let sq = square(0, 0, M);
        // Along the north edge, from beyond one end to beyond the other.
        assert!(segment_hits_square(at(-3 * M, M), at(3 * M, M), &sq, Fixed::ZERO));
        // Through the north-east corner only.
        assert!(segment_hits_square(at(0, 2 * M), at(2 * M, 0), &sq, Fixed::ZERO));
        // One raw unit outside that corner: misses.
        assert!(!segment_hits_square(at(1, 2 * M), at(2 * M + 1, 1), &sq, Fixed::ZERO));
        // Along the line of an edge but beyond the square.
        assert!(!segment_hits_square(at(2 * M, M), at(3 * M, M), &sq, Fixed::ZERO));
    }

    #[test]
    fn negative_expanded_half_is_an_empty_square_and_zero_is_a_point() {
        let sq = square(0, 0, M);
        assert!(!point_in_square(at(0, 0), &sq, fx(-M - 1)));
        assert!(!segment_hits_square(at(-M, 0), at(M, 0), &sq, fx(-M - 1)));
        assert!(point_in_square(at(0, 0), &sq, fx(-M)));
        assert!(segment_hits_square(at(-M, 0), at(M, 0), &sq, fx(-M)), "through the point");
        assert!(segment_hits_square(at(-M, -M), at(0, 0), &sq, fx(-M)), "onto the point");
        assert!(!segment_hits_square(at(-M, 1), at(M, 1), &sq, fx(-M)), "beside the point");
    }

    fn square_case() -> impl Strategy<Value = (WorldPos, WorldPos, UnitSquare, Fixed)> {
        let c = || prop_oneof![(-12i64..12).prop_map(|q| q * M / 4), -3 * M..3 * M];
        (
            c(),
            c(),
            c(),
            c(),
            c(),
            c(),
            prop_oneof![(0i64..8).prop_map(|q| q * M / 4), 0..2 * M],
            prop_oneof![(-2i64..4).prop_map(|q| q * M / 4), -M..M],
        )
            .prop_map(|(x0, z0, x1, z1, cx, cz, half, expand)| (at(x0, z0), at(x1, z1), square(cx, cz, half), fx(expand)))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// `segment_hits_square` is the design's three rules over the separating-axis oracle.
        #[test]
        fn segment_hits_square_matches_the_oracle((from, to, sq, expand) in square_case()) {
            let total = raw(sq.half) + raw(expand);
            let (cx, cz) = (raw(sq.center.x), raw(sq.center.z));
            let b = [cx - total, cx + total, cz - total, cz + total];
            let inside = |p: WorldPos| total >= 0 && b[0] <= raw(p.x) && raw(p.x) <= b[1] && b[2] <= raw(p.z) && raw(p.z) <= b[3];
            prop_assert_eq!(point_in_square(from, &sq, expand), inside(from));
            let expected = if total < 0 || inside(from) {
                false
            } else {
                inside(to) || sat_meets(raw(from.x), raw(from.z), raw(to.x), raw(to.z), b)
            };
            prop_assert_eq!(segment_hits_square(from, to, &sq, expand), expected);
            // A unit outside never ends a non-colliding step inside or on the edge.
            if !segment_hits_square(from, to, &sq, expand) && !inside(from) {
                prop_assert!(!inside(to));
            }
        }
    }
}
