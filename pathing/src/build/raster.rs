//! Rasterization of obstruction squares onto the navcell grid, exactly, in integers.
//!
//! # The rule (docs/pathfinding-rules.md, "Obstruction squares" and "Narrow obstructions")
//!
//! For a clearance `c`, a navcell is blocked by a square when **every corner** of the navcell is
//! inside the square or at a distance `d ≤ R` from it, where
//!
//! ```text
//! R = max(c, (3·s − min(w, h)) / 2)        s = navcell size, w = 2·hw, h = 2·hh
//! ```
//!
//! The second term is the narrow-obstruction rule: a fence thinner than three navcells is
//! rasterized as if it were padded out to three navcells, so that it always blocks a line of
//! navcells with no diagonal gap (at any angle), as 0 A.D.'s design argues from its 45° and √5 figures.
//! Partially covered navcells stay passable, so a unit can always reach any distance `> R` from the
//! shape without standing on a blocked navcell.
//!
//! 0 A.D.'s design does not say more; its code adds one metre to every clearance instead of the
//! narrow rule. We follow 0 A.D.'s design (docs/decisions.md): any distance `> R` from a square is
//! reachable, which is the class's stated clearance `c` for squares at least three navcells thick;
//! near a thinner one only distances `> R` are, so range orders grow their targets by
//! [`effective_radius`], not by `c`.
//!
//! # Exactness
//!
//! "Distance to the square" is measured in the square's own frame: for a point `p`,
//! `a = (p − centre)·u`, `b = (p − centre)·v`, `ea = max(|a| − hw, 0)`, `eb = max(|b| − hh, 0)`,
//! and the point counts when `ea² + eb² ≤ R²`. For perpendicular unit axes that is the Euclidean
//! distance to the rectangle; for the axes the integer trigonometry gives (unit to within about
//! 2^-16, see [`crate::geometry::trig`]) it differs from it by at most about `2^-15 · |p − centre|`. Either
//! way it is one exact integer predicate: every quantity is computed from the raw bits in `i128`
//! without rounding, so every machine blocks the same navcells.
//!
//! # How
//!
//! The set of corner points that count is convex (the square grown by `R` has rounded corners),
//! so on each horizontal line of corners `z = j·s` the corners that count form one interval of
//! `i`. The squared distance is convex along the line, so its minimum and the interval's two ends
//! are found by binary search: `O(rows · log(width))` exact predicate evaluations per square, no
//! matter how large it is. A navcell row `j` is then blocked from
//! `max(left(j), left(j+1))` to `min(right(j), right(j+1)) − 1`.

use crate::geometry::{Fixed, WorldPos, raw};
use crate::grid::navcell::CellRect;
use crate::search::goal::{GoalError, Square};

/// A square centred on `center` with half-sizes `hw` (along its first axis) and `hh`, turned
/// `degrees` anticlockwise from the x axis: `u = (cos θ, sin θ)`, `v = (−sin θ, cos θ)` from the
/// integer trigonometry of [`crate::geometry::trig`] (each component within its documented bound of the true
/// value; multiples of 90° exact).
///
/// # Errors
/// [`GoalError::OutOfRange`] for negative half-sizes or coordinates beyond
/// [`crate::geometry::decimal::WORLD_LIMIT`].
pub fn oriented_square(center: WorldPos, hw: Fixed, hh: Fixed, degrees: Fixed) -> Result<Square, GoalError> {
    let limit = crate::geometry::decimal::WORLD_LIMIT;
    // Not `abs()`, which overflows for `Fixed::MIN`.
    if !(-limit..=limit).contains(&center.x) || !(-limit..=limit).contains(&center.z) || hw > limit || hh > limit {
        return Err(GoalError::OutOfRange);
    }
    let u = crate::geometry::trig::unit_vector_degrees(degrees);
    Square::new(center, hw, hh, u, u.perp())
}

/// The editor form `(x, z, w, h, θ)` of the 0 A.D. design as an oriented square: full sizes are
/// halved (rounded down to a multiple of 2^-16 m) and the angle is in degrees, as
/// [`oriented_square`].
///
/// # Errors
/// As [`oriented_square`].
pub fn editor_square(x: Fixed, z: Fixed, w: Fixed, h: Fixed, degrees: Fixed) -> Result<Square, GoalError> {
    if w < Fixed::ZERO || h < Fixed::ZERO {
        return Err(GoalError::OutOfRange);
    }
    oriented_square(WorldPos::new(x, z), Fixed::from_bits(w.to_bits() >> 1), Fixed::from_bits(h.to_bits() >> 1), degrees)
}

/// The effective distance of the rule, `max(c, (3·s − min(w, h)) / 2)`, as a raw value with 32
/// fractional bits (the narrow term can be a half of a raw unit). Negative clearances count as 0.
pub fn effective_radius_raw32(square: &Square, clearance: Fixed, cell_size: Fixed) -> i128 {
    let c = raw(clearance).max(0) << 16;
    let min_half = raw(square.hw()).min(raw(square.hh()));
    // (3s − 2·min_half) / 2 with 32 fractional bits = (3s − 2·min_half) << 15.
    let narrow = (3 * raw(cell_size) - 2 * min_half) << 15;
    c.max(narrow)
}

/// [`effective_radius_raw32`] rounded up to a whole raw unit (2^-16 m): the distance from `square`
/// beyond which a class with `clearance` finds passable navcells, so every goal that reaches
/// farther than this from the square has passable navcells in it (docs/pathfinding-rules.md,
/// "Narrow obstructions"; range orders grow their targets by it).
pub fn effective_radius(square: &Square, clearance: Fixed, cell_size: Fixed) -> Fixed {
    let r32 = effective_radius_raw32(square, clearance, cell_size);
    Fixed::from_bits(i64::try_from((r32 + 0xffff) >> 16).unwrap_or(i64::MAX))
}

/// The navcells blocked by `square` for `clearance` (the rule of the module documentation), inside
/// `clip`: `mark(j, i0, i1)` is called once per row that has blocked navcells, with the row's
/// blocked navcells `i0 ≤ i < i1`, rows in increasing `j`.
///
/// `cell_size` must be positive. The square's coordinates should be within
/// [`crate::geometry::decimal::WORLD_LIMIT`] and the clearance below it, which keeps every product inside
/// `i128`.
pub fn rasterize_square(square: &Square, clearance: Fixed, cell_size: Fixed, clip: CellRect, mark: impl FnMut(u32, u32, u32)) {
    let r32 = effective_radius_raw32(square, clearance, cell_size);
    rasterize_with_radius(square, r32, cell_size, clip, mark);
}

/// [`rasterize_square`] with the distance `R` given directly (raw, 32 fractional bits), without the
/// narrow-obstruction rule. For tests of the rule itself and for callers with their own rule.
pub fn rasterize_with_radius(square: &Square, r32: i128, cell_size: Fixed, clip: CellRect, mut mark: impl FnMut(u32, u32, u32)) {
    if clip.is_empty() {
        return;
    }
    let frame = Frame::new(square, r32, raw(cell_size), 0);
    // Corner lines z = j·s for j in [j_lo, j_hi], corner columns x = k·s for k in [k_lo, k_hi],
    // restricted to what the clip window can use.
    let (k_lo, k_hi, j_lo, j_hi) = frame.corner_bounds();
    let k_lo = k_lo.max(i128::from(clip.i0));
    let k_hi = k_hi.min(i128::from(clip.i1));
    let j_lo = j_lo.max(i128::from(clip.j0));
    let j_hi = j_hi.min(i128::from(clip.j1));
    if k_lo >= k_hi || j_lo >= j_hi {
        return;
    }
    let mut below = frame.interval(j_lo, k_lo, k_hi);
    for j in j_lo..j_hi {
        let above = frame.interval(j + 1, k_lo, k_hi);
        if let (Some((a0, a1)), Some((b0, b1))) = (below, above) {
            let i0 = a0.max(b0);
            let i1 = a1.min(b1); // last corner; the last navcell is i1 − 1
            if i1 > i0 {
                mark(j as u32, i0 as u32, i1 as u32);
            }
        }
        below = above;
    }
}

/// The navcells whose **centre** is inside the closed `square` (no clearance), inside `clip`, as
/// row spans like [`rasterize_square`]. This is the "navcells under a rectangle" count formations
/// score candidate positions with.
pub fn square_centre_spans(square: &Square, cell_size: Fixed, clip: CellRect, mut mark: impl FnMut(u32, u32, u32)) {
    if clip.is_empty() {
        return;
    }
    let s = raw(cell_size);
    // Points at (k·s + s/2, j·s + s/2): evaluate with a half-cell offset in 17-bit units by
    // doubling everything.
    let frame = Frame::new(square, 0, s, 1);
    let (k_lo, k_hi, j_lo, j_hi) = frame.corner_bounds();
    let k_lo = (k_lo - 1).max(i128::from(clip.i0));
    let k_hi = k_hi.min(i128::from(clip.i1) - 1);
    let j_lo = (j_lo - 1).max(i128::from(clip.j0));
    let j_hi = j_hi.min(i128::from(clip.j1) - 1);
    if k_lo > k_hi {
        return;
    }
    for j in j_lo..=j_hi {
        if let Some((a, b)) = frame.interval(j, k_lo, k_hi) {
            mark(j as u32, a as u32, b as u32 + 1);
        }
    }
}

/// Number of navcells whose centre is inside the closed `square` and that `blocked(i, j)` says are
/// obstructed: a formation candidate's score (docs/formation-rules.md). Navcells off the `width × height` grid count
/// as obstructed.
pub fn count_blocked_in_square(
    square: &Square,
    cell_size: Fixed,
    width: u32,
    height: u32,
    mut blocked: impl FnMut(u32, u32) -> bool,
) -> u64 {
    // Every centre inside, on or off the grid, minus the on-grid ones, plus the on-grid blocked ones.
    let frame = Frame::new(square, 0, raw(cell_size), 1);
    let (k_lo, k_hi, j_lo, j_hi) = frame.corner_bounds();
    let mut total = 0u64;
    for j in (j_lo - 1)..=j_hi {
        if let Some((a, b)) = frame.interval(j, k_lo - 1, k_hi) {
            total += (b - a + 1) as u64;
        }
    }
    let (mut on_grid, mut count) = (0u64, 0u64);
    square_centre_spans(square, cell_size, CellRect::full(width, height), |j, a, b| {
        on_grid += u64::from(b - a);
        count += (a..b).filter(|&i| blocked(i, j)).count() as u64;
    });
    count + (total - on_grid)
}

/// A square and a distance, ready for exact evaluation at lattice points
/// `((2k + h)·s/2, (2j + h)·s/2)` where `h` is 0 (navcell corners) or 1 (navcell centres).
struct Frame {
    /// Centre, raw with 17 fractional bits (doubled so that half navcells are whole).
    cx: i128,
    cz: i128,
    ux: i128,
    uz: i128,
    vx: i128,
    vz: i128,
    /// Half-sizes, raw with 33 fractional bits (17 + 16, to compare with `d·u`).
    hw: i128,
    hh: i128,
    /// `R²` in 66 fractional bits.
    r2: i128,
    /// Navcell size, raw with 17 fractional bits.
    s2: i128,
    /// Lattice offset: 0 for corners, 1 for centres.
    half: i128,
    /// Half-extents of the grown square along x and z, 17 fractional bits, rounded up.
    ex: i128,
    ez: i128,
}

impl Frame {
    fn new(square: &Square, r32: i128, s: i128, half: i128) -> Self {
        let (u, v) = (square.u(), square.v());
        let (ux, uz, vx, vz) = (raw(u.x), raw(u.z), raw(v.x), raw(v.z));
        let hw = raw(square.hw()) << 17;
        let hh = raw(square.hh()) << 17;
        let r33 = r32 << 1;
        // Extents: a point counts only if |a| ≤ hw + R and |b| ≤ hh + R, so the grown square's
        // bounding box bounds every counted point (with |u|, |v| ≤ about 1).
        // 33 + 16 fractional bits, down to 17 (rounded up, plus one raw unit).
        let ex = (((hw + r33) * ux).abs() + ((hh + r33) * vx).abs()) >> 32;
        let ez = (((hw + r33) * uz).abs() + ((hh + r33) * vz).abs()) >> 32;
        Self {
            cx: raw(square.center().x) << 1,
            cz: raw(square.center().z) << 1,
            ux,
            uz,
            vx,
            vz,
            hw,
            hh,
            r2: r33 * r33,
            s2: s << 1,
            half,
            ex: ex + 1,
            ez: ez + 1,
        }
    }

    /// Corner index bounds `[k_lo, k_hi] × [j_lo, j_hi]` covering every point that can count, with
    /// a margin. The extents are over-estimates by construction (axis components may exceed 1 by
    /// the trigonometry's error; a whole navcell of slack covers it).
    fn corner_bounds(&self) -> (i128, i128, i128, i128) {
        let lo = |c: i128, e: i128| (c - e).div_euclid(self.s2) - 1;
        let hi = |c: i128, e: i128| -((-(c + e)).div_euclid(self.s2)) + 1;
        (lo(self.cx, self.ex), hi(self.cx, self.ex), lo(self.cz, self.ez), hi(self.cz, self.ez))
    }

    /// Squared frame distance (66 fractional bits) of the lattice point `(k, j)`.
    #[inline]
    fn dist2(&self, k: i128, j: i128) -> i128 {
        let px = (2 * k + self.half) * self.s2 / 2;
        let pz = (2 * j + self.half) * self.s2 / 2;
        let (dx, dz) = (px - self.cx, pz - self.cz);
        let a = dx * self.ux + dz * self.uz;
        let b = dx * self.vx + dz * self.vz;
        let ea = (a.abs() - self.hw).max(0);
        let eb = (b.abs() - self.hh).max(0);
        ea * ea + eb * eb
    }

    /// The interval `[first, last]` of `k` in `[k_lo, k_hi]` whose lattice point on line `j` counts.
    fn interval(&self, j: i128, k_lo: i128, k_hi: i128) -> Option<(i128, i128)> {
        // Minimum of the convex function: the first k whose successor is not lower.
        let (mut lo, mut hi) = (k_lo, k_hi);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.dist2(mid + 1, j) >= self.dist2(mid, j) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let best = lo;
        if self.dist2(best, j) > self.r2 {
            return None;
        }
        // Left end: the first k in [k_lo, best] that counts (non-increasing there).
        let (mut lo, mut hi) = (k_lo, best);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.dist2(mid, j) <= self.r2 {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let first = lo;
        // Right end: the last k in [best, k_hi] that counts (non-decreasing there).
        let (mut lo, mut hi) = (best, k_hi);
        while lo < hi {
            let mid = lo + (hi - lo + 1) / 2;
            if self.dist2(mid, j) <= self.r2 {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        Some((first, lo))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Vec2;

    fn fx(v: i64, den: i64) -> Fixed {
        Fixed::from_bits(v * 65536 / den)
    }

    /// Blocked navcells of `square` on a `w × h` grid of 1 m navcells, as 0 A.D.'s design figures draw them.
    fn blocked(square: &Square, r32: Option<i128>, clearance: Fixed, w: u32, h: u32) -> Vec<(i32, i32)> {
        let mut out = Vec::new();
        let clip = CellRect::full(w, h);
        let mut mark = |j: u32, a: u32, b: u32| out.extend((a..b).map(|i| (i as i32, j as i32)));
        match r32 {
            Some(r) => rasterize_with_radius(square, r, Fixed::ONE, clip, &mut mark),
            None => rasterize_square(square, clearance, Fixed::ONE, clip, &mut mark),
        }
        out
    }

    fn render(cells: &[(i32, i32)], w: i32, h: i32) -> String {
        let mut s = String::new();
        for j in (0..h).rev() {
            for i in 0..w {
                s.push(if cells.contains(&(i, j)) { '#' } else { '.' });
            }
            s.push('\n');
        }
        s
    }

    /// Figure cells are drawn centred on integer points; navcell `(i, j)` spans `[i, i+1)`, so a
    /// figure coordinate maps to the world by adding one half.
    fn seed_square(cx2: i64, cz2: i64, hw2: i64, hh2: i64, u: Vec2) -> Square {
        let v = u.perp();
        Square::new(WorldPos::new(fx(cx2 + 1, 2), fx(cz2 + 1, 2)), fx(hw2, 2), fx(hh2, 2), u, v).unwrap()
    }

    #[test]
    fn seed_figure_axis_aligned_square_with_clearance_one() {
        // Figure: scope shifted to (4, 3), rectangle (-1.5, -1.5)–(1.5, 1) → centre (4, 2.75).
        let sq = Square::axis_aligned(WorldPos::new(fx(9, 2), fx(13, 4)), fx(3, 2), fx(5, 4)).unwrap();
        let got = blocked(&sq, None, Fixed::ONE, 10, 7);
        let mut want = Vec::new();
        for (j, lo, hi) in [(1, 3, 5), (2, 2, 6), (3, 2, 6), (4, 3, 5)] {
            want.extend((lo..=hi).map(|i| (i, j)));
        }
        assert_eq!(got, want, "\n{}", render(&got, 10, 7));
    }

    #[test]
    fn seed_figure_rotated_rectangle_with_clearance_one() {
        // Figure: scope shifted to (13, 5), rectangle (-3.5, -1.5)–(3.5, 1.5) rotated by 30°.
        let u = Vec2::new(Fixed::from_bits(56756), Fixed::from_bits(32768)); // (cos 30°, sin 30°)
        let sq = seed_square(26, 10, 7, 3, u);
        let got: Vec<(i32, i32)> = blocked(&sq, None, Fixed::ONE, 20, 10).into_iter().map(|(i, j)| (i - 13, j - 5)).collect();
        let mut want = Vec::new();
        for (j, lo, hi) in [(-3, -2, -2), (-2, -3, 0), (-1, -3, 1), (0, -3, 3), (1, -1, 3), (2, 0, 3), (3, 2, 2)] {
            want.extend((lo..=hi).map(|i| (i, j)));
        }
        let shifted: Vec<(i32, i32)> = got.iter().map(|&(i, j)| (i + 13, j + 5)).collect();
        assert_eq!(got, want, "\n{}", render(&shifted, 20, 10));
    }

    /// 0 A.D.'s √5 figure: a rectangle 2.22 × 6 including a rounded clearance of 0.5, at
    /// atan(2) ≈ 63.43°, blocks only three separate navcells, so units walk through it.
    #[test]
    fn seed_figure_root_five_fence_has_gaps_without_the_narrow_rule() {
        let u = Vec2::new(Fixed::from_bits(29309), Fixed::from_bits(58617)); // (1, 2) / √5
        let sq = Square::new(WorldPos::new(fx(7, 2), fx(5, 2)), fx(61, 100), fx(5, 2), u, u.perp()).unwrap();
        let half = i128::from(Fixed::ONE.to_bits()) << 15;
        let got: Vec<(i32, i32)> = blocked(&sq, Some(half), Fixed::ZERO, 7, 5).into_iter().map(|(i, j)| (i - 3, j - 2)).collect();
        assert_eq!(got, vec![(2, -1), (0, 0), (-2, 1)]);
        // The narrow rule rasterizes it with R = max(0.5, (3 − 1.22) / 2) = 0.89 instead.
        let fenced = blocked(&sq, None, fx(1, 2), 7, 5);
        assert!(fenced.len() > 3, "\n{}", render(&fenced, 7, 5));
    }
}
