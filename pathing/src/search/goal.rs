//! Path goals (point, circle, square, rounded square, and the inverted shapes for minimum ranges) and the exact
//! "navcell inside goal" predicate after 0 A.D. (docs/pathfinding-rules.md, "Goals").
//!
//! A navcell is inside a goal when any point of the closed navcell is inside (or on the edge of) the
//! goal shape; a point goal holds only the navcell that contains the point. For the inverted shapes,
//! the goal shape is the closed outside of the circle or square, so a navcell is inside the goal
//! unless all four of its corners are strictly inside the circle or square.
//!
//! Every predicate is computed exactly on the raw bits of the fixed-point inputs, widened to `i128`.
//! The coordinate limits checked by the constructors ([`COORD_LIMIT`], [`AXIS_LIMIT`]) are what keep
//! every product below 2^110.

use crate::geometry::{Fixed, Vec2, WorldPos, cross_raw, div_ceil, div_floor, raw};
use crate::grid::cost::octile;

/// Largest absolute coordinate, radius or half-size a goal may have. `[Units: metres]`
pub const COORD_LIMIT: Fixed = Fixed::const_from_int(1 << 24);

/// Largest absolute component of a square's axis vectors (they are meant to be unit vectors).
pub const AXIS_LIMIT: Fixed = Fixed::const_from_int(2);

/// Why a goal could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoalError {
    /// A coordinate, radius or half-size is beyond [`COORD_LIMIT`], or a size is negative.
    OutOfRange,
    /// A square's axis vector has a component beyond [`AXIS_LIMIT`].
    AxisTooLong,
    /// A square's two axes are parallel (or zero), so it has no area to speak of.
    DegenerateAxes,
    /// A rounded square's axes are not a quarter turn apart (`v = u.perp()`), which its exact
    /// distance test needs.
    SkewAxes,
}

impl std::fmt::Display for GoalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GoalError::OutOfRange => write!(f, "goal coordinate or size out of range (|value| <= {COORD_LIMIT}, sizes >= 0)"),
            GoalError::AxisTooLong => write!(f, "square axis component beyond {AXIS_LIMIT}"),
            GoalError::DegenerateAxes => write!(f, "square axes are parallel or zero"),
            GoalError::SkewAxes => write!(f, "rounded square axes are not a quarter turn apart"),
        }
    }
}

impl std::error::Error for GoalError {}

/// An oriented square `(x, z, hw, hh, u, v)` as the 0 A.D. design defines it: the parallelogram
/// with corners `centre ± hw·u ± hh·v`. `u` and `v` are meant to be perpendicular unit vectors;
/// the predicates are exact for any two non-parallel axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Square {
    center: WorldPos,
    /// Half-size along `u`. `[Units: metres] [Limit: 0..=2^24]`
    hw: Fixed,
    /// Half-size along `v`. `[Units: metres] [Limit: 0..=2^24]`
    hh: Fixed,
    u: Vec2,
    v: Vec2,
}

// Range checks rather than `abs()`, which overflows (and panics with debug assertions) for
// `Fixed::MIN`.
fn coord_ok(value: Fixed) -> bool {
    (-COORD_LIMIT..=COORD_LIMIT).contains(&value)
}

fn size_ok(value: Fixed) -> bool {
    value >= Fixed::ZERO && value <= COORD_LIMIT
}

impl Square {
    /// A square from its centre, half-sizes and axes.
    ///
    /// # Errors
    /// [`GoalError`] when a value is out of range or the axes are parallel.
    pub fn new(center: WorldPos, hw: Fixed, hh: Fixed, u: Vec2, v: Vec2) -> Result<Self, GoalError> {
        if !coord_ok(center.x) || !coord_ok(center.z) || !size_ok(hw) || !size_ok(hh) {
            return Err(GoalError::OutOfRange);
        }
        if [u.x, u.z, v.x, v.z].iter().any(|c| !(-AXIS_LIMIT..=AXIS_LIMIT).contains(c)) {
            return Err(GoalError::AxisTooLong);
        }
        if cross_raw(raw(u.x), raw(u.z), raw(v.x), raw(v.z)) == 0 {
            return Err(GoalError::DegenerateAxes);
        }
        Ok(Self { center, hw, hh, u, v })
    }

    /// An axis-aligned square (`u` east, `v` north).
    ///
    /// # Errors
    /// [`GoalError::OutOfRange`] when a value is out of range.
    pub fn axis_aligned(center: WorldPos, hw: Fixed, hh: Fixed) -> Result<Self, GoalError> {
        Self::new(center, hw, hh, Vec2::new(Fixed::ONE, Fixed::ZERO), Vec2::new(Fixed::ZERO, Fixed::ONE))
    }

    /// The centre.
    pub fn center(&self) -> WorldPos {
        self.center
    }

    /// Half-size along `u`.
    pub fn hw(&self) -> Fixed {
        self.hw
    }

    /// Half-size along `v`.
    pub fn hh(&self) -> Fixed {
        self.hh
    }

    /// First axis.
    pub fn u(&self) -> Vec2 {
        self.u
    }

    /// Second axis.
    pub fn v(&self) -> Vec2 {
        self.v
    }

    /// `|cross(u, v)|`, 32 fractional bits.
    fn cross_abs(&self) -> i128 {
        cross_raw(raw(self.u.x), raw(self.u.z), raw(self.v.x), raw(self.v.z)).abs()
    }

    /// Half-extents of the square along x and z, 32 fractional bits.
    fn extents(&self) -> (i128, i128) {
        let (hw, hh) = (raw(self.hw), raw(self.hh));
        let ex = (hw * raw(self.u.x)).abs() + (hh * raw(self.v.x)).abs();
        let ez = (hw * raw(self.u.z)).abs() + (hh * raw(self.v.z)).abs();
        (ex, ez)
    }

    /// Whether the closed box `[x0, x1] × [z0, z1]` (raw, 16 fractional bits) meets the closed
    /// square: a separating-axis test on the box's axes and the square's edge normals.
    pub(crate) fn box_intersects(&self, x0: i128, x1: i128, z0: i128, z1: i128) -> bool {
        let (cx, cz) = (raw(self.center.x), raw(self.center.z));
        let (ex, ez) = self.extents();
        // Axes x and z, in 32 fractional bits.
        if (cx << 16) + ex < x0 << 16 || (cx << 16) - ex > x1 << 16 {
            return false;
        }
        if (cz << 16) + ez < z0 << 16 || (cz << 16) - ez > z1 << 16 {
            return false;
        }
        // The square's edge normals perp(u) and perp(v), in 48 fractional bits.
        let x_abs = self.cross_abs();
        for (axis, half) in [(self.u, raw(self.hh) * x_abs), (self.v, raw(self.hw) * x_abs)] {
            let (nx, nz) = (-raw(axis.z), raw(axis.x));
            let centre = (cx * nx + cz * nz) << 16;
            let box_lo = ((x0 * nx).min(x1 * nx) + (z0 * nz).min(z1 * nz)) << 16;
            let box_hi = ((x0 * nx).max(x1 * nx) + (z0 * nz).max(z1 * nz)) << 16;
            if box_hi < centre - half || box_lo > centre + half {
                return false;
            }
        }
        true
    }

    /// The open interval of `t` for which a point on an axis-parallel line is strictly inside the
    /// square. For `along_x` the line is `z = fixed`, the point is `(cx + t, fixed)`; otherwise the
    /// line is `x = fixed` and the point is `(fixed, cz + t)`. `t` is raw (16 fractional bits);
    /// bounds are exact rationals `(numerator, positive denominator)`.
    fn open_section(&self, along_x: bool, fixed: i128) -> Option<(Rational, Rational)> {
        let (ux, uz, vx, vz) = (raw(self.u.x), raw(self.u.z), raw(self.v.x), raw(self.v.z));
        let x_abs = self.cross_abs();
        // With d = (t, e) (or (e, t)), s·X = cross(d, v) and t'·X = cross(u, d), X = cross(u, v).
        // Strictly inside: |cross(d, v)| < hw |X| and |cross(u, d)| < hh |X|.
        let (a1, b1, a2, b2) = if along_x {
            let e = fixed - raw(self.center.z);
            (vz, -e * vx, -uz, ux * e)
        } else {
            let e = fixed - raw(self.center.x);
            (-vx, e * vz, ux, -uz * e)
        };
        let mut lo = Rational::NEG_INF;
        let mut hi = Rational::POS_INF;
        for (a, b, k) in [(a1, b1, raw(self.hw) * x_abs), (a2, b2, raw(self.hh) * x_abs)] {
            // |a t + b| · 2^16 < k, everything in 48 fractional bits.
            let (a, b) = (a << 16, b << 16);
            if a == 0 {
                if b.abs() >= k {
                    return None;
                }
                continue;
            }
            let (l, h) = if a > 0 {
                (Rational::new(-k - b, a), Rational::new(k - b, a))
            } else {
                (Rational::new(b - k, -a), Rational::new(b + k, -a))
            };
            lo = lo.max(l);
            hi = hi.min(h);
        }
        if lo < hi { Some((lo, hi)) } else { None }
    }

    /// Whether a point (raw) is strictly inside the square.
    fn strictly_contains(&self, x: i128, z: i128) -> bool {
        let (dx, dz) = (x - raw(self.center.x), z - raw(self.center.z));
        let (ux, uz, vx, vz) = (raw(self.u.x), raw(self.u.z), raw(self.v.x), raw(self.v.z));
        let x_abs = self.cross_abs();
        (cross_raw(dx, dz, vx, vz).abs() << 16) < raw(self.hw) * x_abs && (cross_raw(ux, uz, dx, dz).abs() << 16) < raw(self.hh) * x_abs
    }

    /// `cross(u, v)`, signed, 32 fractional bits.
    fn cross_signed(&self) -> i128 {
        cross_raw(raw(self.u.x), raw(self.u.z), raw(self.v.x), raw(self.v.z))
    }

    /// The square's own coordinates of the raw point `(x, z)`, scaled by `cross(u, v)`: `(S, T)`
    /// with `p = c + S/(X·2^16)·u + T/(X·2^16)·v` (`X = cross(u, v)`), so `|S| ≤ hw·|X|` and
    /// `|T| ≤ hh·|X|` is [`Square::contains_point`]. 48 fractional bits; below 2^99 for any point.
    fn local(&self, x: i128, z: i128) -> (i128, i128) {
        let (dx, dz) = (x - raw(self.center.x), z - raw(self.center.z));
        let (ux, uz, vx, vz) = (raw(self.u.x), raw(self.u.z), raw(self.v.x), raw(self.v.z));
        (cross_raw(dx, dz, vx, vz) << 16, cross_raw(ux, uz, dx, dz) << 16)
    }

    /// The exact world point of local coordinates `(S, T)` (see [`Square::local`]) whose sizes are
    /// within the square's (`|S| ≤ hw·|X|`, `|T| ≤ hh·|X|`), as raw numerators over one positive
    /// denominator.
    fn world_exact(&self, s: i128, t: i128) -> (i128, i128, i128) {
        let (ux, uz, vx, vz) = (raw(self.u.x), raw(self.u.z), raw(self.v.x), raw(self.v.z));
        // |s|, |t| ≤ 2^40 · 2^35, axes ≤ 2^17: numerators below 2^94, denominator below 2^52.
        let (nx, nz, den) = (s * ux + t * vx, s * uz + t * vz, self.cross_signed() << 16);
        let (nx, nz, den) = if den < 0 { (-nx, -nz, -den) } else { (nx, nz, den) };
        (raw(self.center.x) * den + nx, raw(self.center.z) * den + nz, den)
    }

    /// For [`Goal::nearest_point`]: a point the square holds, near the clamp of `(px, pz)` into the
    /// square in its own coordinates. `(px, pz)` is outside the square.
    fn nearest_inside(&self, px: i128, pz: i128) -> WorldPos {
        let x_abs = self.cross_abs();
        let (s, t) = self.local(px, pz);
        let (s_lim, t_lim) = (raw(self.hw) * x_abs, raw(self.hh) * x_abs);
        let exact = self.world_exact(s.clamp(-s_lim, s_lim), t.clamp(-t_lim, t_lim));
        if let Some(best) = nearest_candidate(px, pz, exact, |x, z| self.contains_point(x, z)) {
            return best;
        }
        // Only a square thinner than a few raw units gets here: walk the exact point towards the
        // centre (rounding towards it) until the square holds it; it always holds the centre.
        let (cx, cz) = (raw(self.center.x), raw(self.center.z));
        let (ex, ez, den) = exact;
        let (ox, oz) = (ex - cx * den, ez - cz * den);
        for k in 1..16 {
            // Truncating division rounds towards the centre.
            let (x, z) = (cx + ox * (16 - k) / (16 * den), cz + oz * (16 - k) / (16 * den));
            if self.contains_point(x, z) {
                return pos_raw(x, z);
            }
        }
        self.center
    }

    /// For [`Goal::nearest_point`] on an inverted square: a point not strictly inside the square,
    /// near `(px, pz)` pushed out through the nearest side. `(px, pz)` is strictly inside.
    fn nearest_outside(&self, px: i128, pz: i128) -> WorldPos {
        let x_abs = self.cross_abs();
        let (s, t) = self.local(px, pz);
        let (s_lim, t_lim) = (raw(self.hw) * x_abs, raw(self.hh) * x_abs);
        // Strictly inside, so both margins are positive. The world distance to a `u` side is
        // `margin_s·|u|` (over a common factor) when the axes are perpendicular.
        let (margin_s, margin_t) = (s_lim - s.abs(), t_lim - t.abs());
        let (ux, uz, vx, vz) = (raw(self.u.x), raw(self.u.z), raw(self.v.x), raw(self.v.z));
        let (u2, v2) = ((ux * ux + uz * uz) as u128, (vx * vx + vz * vz) as u128);
        let through_u = if u2 == v2 {
            margin_s <= margin_t
        } else {
            // Unequal axis lengths: compare with the integer roots (margins below 2^76, roots
            // below 2^18). Approximate, but only for axes no constructor here makes.
            margin_s * u2.isqrt() as i128 <= margin_t * v2.isqrt() as i128
        };
        let side = |value: i128, limit: i128| if value < 0 { -limit } else { limit };
        let exact = if through_u { self.world_exact(side(s, s_lim), t) } else { self.world_exact(s, side(t, t_lim)) };
        if let Some(best) = nearest_candidate(px, pz, exact, |x, z| !self.strictly_contains(x, z)) {
            return best;
        }
        // Never needed (a lattice point next to a side is outside the open square); a point east of
        // the bounding box is outside it whatever the shape.
        let (ex, _) = self.extents();
        pos_raw(raw(self.center.x) + div_ceil(ex, 1 << 16) + 1, pz)
    }

    /// Whether the raw point `(x, z)` is within `radius` (raw) of the closed square, exactly.
    /// Needs `v = u.perp()` (so `|u| = |v|` and `cross(u, v) = |u|²`), which
    /// [`Goal::rounded_square`] checks.
    fn within(&self, x: i128, z: i128, radius: i128) -> bool {
        let (s, t) = self.local(x, z);
        let x_abs = self.cross_abs();
        // The excess beyond each side, in local units: `e·|u|` world metres is `E / (2^48 |u|)`.
        let es = (s.abs() - raw(self.hw) * x_abs).max(0).unsigned_abs();
        let et = (t.abs() - raw(self.hh) * x_abs).max(0).unsigned_abs();
        // distance² = (Es² + Et²) / (2^64 · X) ≤ r²/2^32  ⇔  Es² + Et² ≤ r² · X · 2^32.
        let lhs = Wide::square(es).add(Wide::square(et));
        let r = radius.max(0).unsigned_abs();
        let rhs = Wide::mul(r * r, x_abs.unsigned_abs() << 32);
        lhs <= rhs
    }

    /// The four corners, raw with 32 fractional bits.
    fn corners32(&self) -> [(i128, i128); 4] {
        let (cx, cz) = (raw(self.center.x) << 16, raw(self.center.z) << 16);
        let (hw, hh) = (raw(self.hw), raw(self.hh));
        let (ux, uz, vx, vz) = (raw(self.u.x), raw(self.u.z), raw(self.v.x), raw(self.v.z));
        [(1, 1), (1, -1), (-1, 1), (-1, -1)].map(|(a, b)| (cx + a * hw * ux + b * hh * vx, cz + a * hw * uz + b * hh * vz))
    }

    /// Whether the closed box `[x0, x1] × [z0, z1]` (raw) comes within `radius` (raw) of the closed
    /// square: they meet, or a corner of one is within `radius` of the other (two disjoint convex
    /// polygons are nearest at a corner of one of them).
    fn box_within(&self, x0: i128, x1: i128, z0: i128, z1: i128, radius: i128) -> bool {
        if self.box_intersects(x0, x1, z0, z1) {
            return true;
        }
        if [(x0, z0), (x0, z1), (x1, z0), (x1, z1)].into_iter().any(|(x, z)| self.within(x, z, radius)) {
            return true;
        }
        let r = radius.max(0).unsigned_abs();
        let limit = Wide::mul(r * r, 1 << 32);
        self.corners32().into_iter().any(|(qx, qz)| {
            let ex = ((x0 << 16) - qx).max(qx - (x1 << 16)).max(0).unsigned_abs();
            let ez = ((z0 << 16) - qz).max(qz - (z1 << 16)).max(0).unsigned_abs();
            Wide::square(ex).add(Wide::square(ez)) <= limit
        })
    }

    /// For [`Goal::nearest_point`] on a rounded square: a point within `radius` of the square near
    /// the exact nearest one, the nearest point of the square moved `radius` towards `(px, pz)`.
    /// `(px, pz)` is farther than `radius` from the square.
    fn nearest_within(&self, px: i128, pz: i128, radius: i128) -> WorldPos {
        let x_abs = self.cross_abs();
        let (s, t) = self.local(px, pz);
        let (s_lim, t_lim) = (raw(self.hw) * x_abs, raw(self.hh) * x_abs);
        let (qx, qz, den) = self.world_exact(s.clamp(-s_lim, s_lim), t.clamp(-t_lim, t_lim));
        let (dx, dz) = (px * den - qx, pz * den - qz);
        if dx != 0 || dz != 0 {
            let (ox, oz) = scale_to_length(dx, dz, radius.clamp(0, 1 << 41), Rounding::Inward);
            let exact = (qx + ox * den, qz + oz * den, den);
            if let Some(best) = nearest_candidate(px, pz, exact, |x, z| self.within(x, z, radius)) {
                return best;
            }
        }
        // A radius of a few raw units: a point of the square itself.
        self.nearest_inside(px, pz)
    }

    /// Whether a point (raw) is inside or on the edge of the square.
    pub(crate) fn contains_point(&self, x: i128, z: i128) -> bool {
        let (dx, dz) = (x - raw(self.center.x), z - raw(self.center.z));
        let (ux, uz, vx, vz) = (raw(self.u.x), raw(self.u.z), raw(self.v.x), raw(self.v.z));
        let x_abs = self.cross_abs();
        (cross_raw(dx, dz, vx, vz).abs() << 16) <= raw(self.hw) * x_abs && (cross_raw(ux, uz, dx, dz).abs() << 16) <= raw(self.hh) * x_abs
    }
}

/// An exact rational with a positive denominator; infinities have denominator 0.
#[derive(Clone, Copy, Debug)]
struct Rational {
    num: i128,
    den: i128,
}

impl Rational {
    const NEG_INF: Self = Self { num: -1, den: 0 };
    const POS_INF: Self = Self { num: 1, den: 0 };

    fn new(num: i128, den: i128) -> Self {
        debug_assert!(den > 0);
        Self { num, den }
    }

    fn cmp(self, other: Self) -> std::cmp::Ordering {
        match (self.den, other.den) {
            (0, 0) => self.num.cmp(&other.num),
            (0, _) => self.num.cmp(&0),
            (_, 0) => 0.cmp(&other.num),
            _ => (self.num * other.den).cmp(&(other.num * self.den)),
        }
    }

    fn max(self, other: Self) -> Self {
        if self.cmp(other).is_ge() { self } else { other }
    }

    fn min(self, other: Self) -> Self {
        if self.cmp(other).is_le() { self } else { other }
    }
}

impl PartialEq for Rational {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(*other).is_eq()
    }
}

impl PartialOrd for Rational {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(Rational::cmp(*self, *other))
    }
}

/// An unsigned 256-bit number as two 128-bit halves `(hi, lo)`, for the exact distance tests of
/// rounded squares, whose squared distances reach past 2^128.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Wide(u128, u128);

impl Wide {
    /// `a · b`, exact.
    fn mul(a: u128, b: u128) -> Self {
        let mask = u128::from(u64::MAX);
        let (a1, a0, b1, b0) = (a >> 64, a & mask, b >> 64, b & mask);
        let (ll, lh, hl, hh) = (a0 * b0, a0 * b1, a1 * b0, a1 * b1);
        let mid = (ll >> 64) + (lh & mask) + (hl & mask);
        let lo = (ll & mask) | (mid << 64);
        let hi = hh + (lh >> 64) + (hl >> 64) + (mid >> 64);
        Self(hi, lo)
    }

    fn square(a: u128) -> Self {
        Self::mul(a, a)
    }

    fn add(self, other: Self) -> Self {
        let (lo, carry) = self.1.overflowing_add(other.1);
        Self(self.0 + other.0 + u128::from(carry), lo)
    }
}

/// The shape of a goal, as given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoalShape {
    /// Reach the navcell that contains this point.
    Point(WorldPos),
    /// Reach any navcell that touches the closed disc.
    Circle {
        /// Centre of the disc.
        center: WorldPos,
        /// Radius. `[Units: metres]`
        radius: Fixed,
    },
    /// Reach any navcell that touches the closed square.
    Square(Square),
    /// Reach any navcell not strictly inside the disc (a minimum range).
    InvertedCircle {
        /// Centre of the disc.
        center: WorldPos,
        /// Radius. `[Units: metres]`
        radius: Fixed,
    },
    /// Reach any navcell not strictly inside the square (a minimum range).
    InvertedSquare(Square),
    /// Reach any navcell that comes within `radius` of the closed square: the square grown by
    /// `radius` with round corners (a ranged unit's maximum range against a building).
    RoundedSquare {
        /// The square, with `v = u.perp()`.
        square: Square,
        /// How far from it. `[Units: metres]`
        radius: Fixed,
    },
}

/// A path goal with checked coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Goal {
    shape: GoalShape,
}

impl Goal {
    /// A point goal.
    ///
    /// # Errors
    /// [`GoalError::OutOfRange`] beyond [`COORD_LIMIT`].
    pub fn point(at: WorldPos) -> Result<Self, GoalError> {
        if !coord_ok(at.x) || !coord_ok(at.z) {
            return Err(GoalError::OutOfRange);
        }
        Ok(Self { shape: GoalShape::Point(at) })
    }

    /// A circle goal.
    ///
    /// # Errors
    /// [`GoalError::OutOfRange`] beyond [`COORD_LIMIT`] or for a negative radius.
    pub fn circle(center: WorldPos, radius: Fixed) -> Result<Self, GoalError> {
        if !coord_ok(center.x) || !coord_ok(center.z) || !size_ok(radius) {
            return Err(GoalError::OutOfRange);
        }
        Ok(Self { shape: GoalShape::Circle { center, radius } })
    }

    /// An inverted circle goal: get out of the disc.
    ///
    /// # Errors
    /// As [`Goal::circle`].
    pub fn inverted_circle(center: WorldPos, radius: Fixed) -> Result<Self, GoalError> {
        let Goal { shape: GoalShape::Circle { center, radius } } = Self::circle(center, radius)? else {
            unreachable!("Goal::circle makes circles")
        };
        Ok(Self { shape: GoalShape::InvertedCircle { center, radius } })
    }

    /// A square goal.
    pub fn square(square: Square) -> Self {
        Self { shape: GoalShape::Square(square) }
    }

    /// An inverted square goal: get out of the square.
    pub fn inverted_square(square: Square) -> Self {
        Self { shape: GoalShape::InvertedSquare(square) }
    }

    /// A rounded-square goal: within `radius` of `square`.
    ///
    /// # Errors
    /// [`GoalError::SkewAxes`] unless `v = u.perp()` (as in every oriented
    /// square the rasterizer makes); [`GoalError::OutOfRange`] for a negative radius or
    /// one beyond [`COORD_LIMIT`].
    pub fn rounded_square(square: Square, radius: Fixed) -> Result<Self, GoalError> {
        if square.v != square.u.perp() {
            return Err(GoalError::SkewAxes);
        }
        if !size_ok(radius) {
            return Err(GoalError::OutOfRange);
        }
        Ok(Self { shape: GoalShape::RoundedSquare { square, radius } })
    }

    /// The navcell goal at the centre of navcell `(i, j)` of a grid with the given navcell size.
    pub fn navcell_center(i: u16, j: u16, cell_size: Fixed) -> Self {
        let half = cell_size / 2;
        let x = cell_size * Fixed::from_num(i) + half;
        let z = cell_size * Fixed::from_num(j) + half;
        Self { shape: GoalShape::Point(WorldPos::new(x, z)) }
    }

    /// The shape.
    pub fn shape(&self) -> GoalShape {
        self.shape
    }

    /// Whether this is an inverted goal.
    pub fn is_inverted(&self) -> bool {
        matches!(self.shape, GoalShape::InvertedCircle { .. } | GoalShape::InvertedSquare(_))
    }

    /// Whether navcell `(i, j)` of a grid with navcell size `cell_size` is inside the goal, for a
    /// grid `width × height` (point goals off the grid are clamped onto its nearest navcell).
    pub fn contains_navcell(&self, i: u32, j: u32, cell_size: Fixed, width: u32, height: u32) -> bool {
        let s = raw(cell_size);
        let (x0, x1) = (i128::from(i) * s, i128::from(i + 1) * s);
        let (z0, z1) = (i128::from(j) * s, i128::from(j + 1) * s);
        match self.shape {
            GoalShape::Point(at) => point_cell(at, s, width, height) == (i, j),
            GoalShape::Circle { center, radius } => circle_box_intersects(center, radius, x0, x1, z0, z1),
            GoalShape::Square(sq) => sq.box_intersects(x0, x1, z0, z1),
            GoalShape::RoundedSquare { square, radius } => square.box_within(x0, x1, z0, z1, raw(radius)),
            GoalShape::InvertedCircle { center, radius } => !circle_box_strictly_inside(center, radius, x0, x1, z0, z1),
            GoalShape::InvertedSquare(sq) => {
                !(sq.strictly_contains(x0, z0)
                    && sq.strictly_contains(x1, z0)
                    && sq.strictly_contains(x0, z1)
                    && sq.strictly_contains(x1, z1))
            }
        }
    }

    /// The goal's bounding box in raw units, `(x0, x1, z0, z1)`, rounded outwards: the box of the
    /// shape, or for the inverted shapes the box of the disc or square they exclude.
    pub(crate) fn bounds_raw(&self) -> (i128, i128, i128, i128) {
        match self.shape {
            GoalShape::Point(at) => (raw(at.x), raw(at.x), raw(at.z), raw(at.z)),
            GoalShape::Circle { center, radius } | GoalShape::InvertedCircle { center, radius } => {
                let (cx, cz, r) = (raw(center.x), raw(center.z), raw(radius));
                (cx - r, cx + r, cz - r, cz + r)
            }
            GoalShape::Square(sq) | GoalShape::InvertedSquare(sq) => {
                let (ex, ez) = sq.extents();
                let (ex, ez) = (div_ceil(ex, 1 << 16), div_ceil(ez, 1 << 16));
                let (cx, cz) = (raw(sq.center.x), raw(sq.center.z));
                (cx - ex, cx + ex, cz - ez, cz + ez)
            }
            GoalShape::RoundedSquare { square, radius } => {
                let (x0, x1, z0, z1) = Goal::square(square).bounds_raw();
                let r = raw(radius);
                (x0 - r, x1 + r, z0 - r, z1 + r)
            }
        }
    }

    /// Whether a world point is inside (or on the edge of) the goal shape. A point goal contains
    /// only its own point.
    pub fn contains_point(&self, at: WorldPos) -> bool {
        let (x, z) = (raw(at.x), raw(at.z));
        match self.shape {
            GoalShape::Point(p) => p == at,
            GoalShape::Circle { center, radius } => dist2(center, x, z) <= raw(radius) * raw(radius),
            GoalShape::InvertedCircle { center, radius } => dist2(center, x, z) >= raw(radius) * raw(radius),
            GoalShape::Square(sq) => sq.contains_point(x, z),
            GoalShape::InvertedSquare(sq) => !sq.strictly_contains(x, z),
            GoalShape::RoundedSquare { square, radius } => square.within(x, z, raw(radius)),
        }
    }

    /// The point of the goal region nearest to `p`: `p` itself when [`Goal::contains_point`] holds
    /// for it, otherwise a point of the region next to the exact nearest point, for all six shapes.
    ///
    /// The exact nearest point usually has irrational coordinates, so the answer is rounded to a
    /// point the region holds: [`Goal::contains_point`] is always true of it.
    ///
    /// - Point: the point.
    /// - Circle: the exact nearest point `c + r·(p − c)/|p − c|` with each coordinate rounded towards
    ///   the centre (the direction's length is taken from an integer square root with about 62
    ///   significant bits, rounded up, so the offset can only shrink): at most one raw unit
    ///   (2^-16 m) from the exact point on each axis, and never outside the disc.
    /// - Inverted circle (the closed outside of a disc): the same construction rounded away from the
    ///   centre, so the answer is on or beyond the circle; `p` at the centre goes east.
    /// - Square: `p` clamped to the square in the square's own coordinates, which is the exact
    ///   nearest point when the axes are perpendicular (every constructor in this crate makes
    ///   `v = u.perp()`), then the lattice point nearest to `p` among the 16 around it that the
    ///   square holds. Only a square thinner than a few raw units can hold none of them; then the
    ///   answer walks towards the centre, which the square always holds.
    /// - Rounded square (within a distance of a square): the square's nearest point (the clamp in
    ///   its own coordinates) moved the distance towards `p`, rounded inward, then the lattice
    ///   point nearest to `p` among the 16 around that which the shape holds.
    /// - Inverted square (the closed outside of a square's interior): `p` pushed out through the
    ///   nearest side, then the nearest of the 16 lattice points around that which is not strictly
    ///   inside; a point beyond the square's bounding box is the (never needed) last resort.
    ///
    /// Exact integer arithmetic throughout; never overflows or panics for any input. The answer is
    /// within two raw units of the exact nearest point for goals with perpendicular axes and sizes
    /// of at least a few raw units, and `p` within [`COORD_LIMIT`].
    pub fn nearest_point(&self, p: WorldPos) -> WorldPos {
        let (px, pz) = (raw(p.x), raw(p.z));
        let nearest = match self.shape {
            GoalShape::Point(at) => at,
            GoalShape::Circle { center, radius } => {
                let (dx, dz) = (px - raw(center.x), pz - raw(center.z));
                let r = raw(radius);
                if dx.abs().max(dz.abs()) < 1 << 62 && dx * dx + dz * dz <= r * r {
                    return p;
                }
                let (ox, oz) = scale_to_length(dx, dz, r, Rounding::Inward);
                pos_raw(raw(center.x) + ox, raw(center.z) + oz)
            }
            GoalShape::InvertedCircle { center, radius } => {
                let (dx, dz) = (px - raw(center.x), pz - raw(center.z));
                let r = raw(radius);
                if dx.abs().max(dz.abs()) >= 1 << 62 || dx * dx + dz * dz >= r * r {
                    return p;
                }
                let (ox, oz) = if dx == 0 && dz == 0 { (r, 0) } else { scale_to_length(dx, dz, r, Rounding::Outward) };
                pos_raw(raw(center.x) + ox, raw(center.z) + oz)
            }
            GoalShape::Square(sq) => {
                if sq.contains_point(px, pz) {
                    return p;
                }
                sq.nearest_inside(px, pz)
            }
            GoalShape::InvertedSquare(sq) => {
                if !sq.strictly_contains(px, pz) {
                    return p;
                }
                sq.nearest_outside(px, pz)
            }
            GoalShape::RoundedSquare { square, radius } => {
                if square.within(px, pz, raw(radius)) {
                    return p;
                }
                square.nearest_within(px, pz, raw(radius))
            }
        };
        debug_assert!(self.contains_point(nearest), "{self:?} nearest to {p:?} is {nearest:?}");
        nearest
    }
}

/// Which way [`scale_to_length`] rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rounding {
    /// Each coordinate towards zero: the result is no longer than asked.
    Inward,
    /// Each coordinate away from zero: the result is no shorter than asked.
    Outward,
}

/// The vector `(dx, dz)` scaled to length `r`, rounded per coordinate as `rounding` says, so that
/// its exact length is `≤ r` (inward) or `≥ r` (outward). `(dx, dz) ≠ (0, 0)`, `0 ≤ r ≤ 2^41`.
///
/// The length of `(dx, dz)` comes from the integer square root of its square shifted left until
/// it has 125 or 126 bits, so the root has 63 significant bits and is rounded the safe way (up
/// for inward, down for outward): the result is within one raw unit of the exact one on each axis
/// for any `r` up to 2^41. Inputs beyond 2^62 are first shifted right (a change of direction
/// below 2^-60, and the length guarantee holds for the shifted vector).
fn scale_to_length(dx: i128, dz: i128, r: i128, rounding: Rounding) -> (i128, i128) {
    let (mut ax, mut az) = (dx.unsigned_abs(), dz.unsigned_abs());
    while ax.max(az) >= 1 << 62 {
        ax >>= 1;
        az >>= 1;
    }
    let d2 = ax * ax + az * az;
    debug_assert!(d2 > 0 && (0..=1 << 41).contains(&r));
    let bits = 128 - d2.leading_zeros();
    let shift = (126 - bits) / 2;
    let n = d2 << (2 * shift);
    let root = n.isqrt();
    // `den` is √n = |(dx, dz)|·2^shift rounded so that the scaled offset errs on the safe side.
    let den = match rounding {
        Rounding::Inward if root * root != n => root + 1,
        _ => root,
    };
    let r = r.unsigned_abs();
    let scale = |a: u128| -> i128 {
        // (a << shift) ≤ √n < 2^63 and r ≤ 2^41: below 2^104.
        let num = (a << shift) * r;
        let q = match rounding {
            Rounding::Inward => num / den,
            Rounding::Outward => num.div_ceil(den),
        };
        q as i128
    };
    (dx.signum() * scale(ax), dz.signum() * scale(az))
}

/// A position from raw coordinates (saturating; callers pass values within ±2^43).
fn pos_raw(x: i128, z: i128) -> WorldPos {
    let bits = |v: i128| Fixed::from_bits(v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64);
    WorldPos::new(bits(x), bits(z))
}

/// The lattice point nearest to `(px, pz)`, ties to the smallest `(x, z)`, among the 16 around the
/// exact point `(ex/den, ez/den)` (the floor and the points one below and two above it on each
/// axis) for which `accept` holds, if any does.
fn nearest_candidate(px: i128, pz: i128, (ex, ez, den): (i128, i128, i128), accept: impl Fn(i128, i128) -> bool) -> Option<WorldPos> {
    let (fx, fz) = (div_floor(ex, den), div_floor(ez, den));
    let mut best: Option<(i128, i128)> = None;
    for x in fx - 1..=fx + 2 {
        for z in fz - 1..=fz + 2 {
            if !accept(x, z) {
                continue;
            }
            // |p − a|² − |p − b|² = (b − a)·(2p − a − b): candidates are within three raw units of
            // each other, so this never overflows even for a far `p`.
            let nearer = match best {
                None => true,
                Some((bx, bz)) => (bx - x) * (2 * px - x - bx) + (bz - z) * (2 * pz - z - bz) < 0,
            };
            if nearer {
                best = Some((x, z));
            }
        }
    }
    best.map(|(x, z)| pos_raw(x, z))
}

fn dist2(center: WorldPos, x: i128, z: i128) -> i128 {
    let (dx, dz) = (x - raw(center.x), z - raw(center.z));
    dx * dx + dz * dz
}

/// The navcell containing a point, clamped onto the grid.
fn point_cell(at: WorldPos, s: i128, width: u32, height: u32) -> (u32, u32) {
    let i = div_floor(raw(at.x), s).clamp(0, i128::from(width) - 1);
    let j = div_floor(raw(at.z), s).clamp(0, i128::from(height) - 1);
    (i as u32, j as u32)
}

fn circle_box_intersects(center: WorldPos, radius: Fixed, x0: i128, x1: i128, z0: i128, z1: i128) -> bool {
    let (cx, cz) = (raw(center.x), raw(center.z));
    let dx = cx - cx.clamp(x0, x1);
    let dz = cz - cz.clamp(z0, z1);
    dx * dx + dz * dz <= raw(radius) * raw(radius)
}

/// Whether all four corners of the box are strictly inside the disc.
fn circle_box_strictly_inside(center: WorldPos, radius: Fixed, x0: i128, x1: i128, z0: i128, z1: i128) -> bool {
    let (cx, cz) = (raw(center.x), raw(center.z));
    let fx = (x0 - cx).abs().max((x1 - cx).abs());
    let fz = (z0 - cz).abs().max((z1 - cz).abs());
    fx * fx + fz * fz < raw(radius) * raw(radius)
}

/// A closed range of navcells on one line; empty when `lo > hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) lo: i32,
    pub(crate) hi: i32,
}

impl Span {
    pub(crate) const EMPTY: Span = Span { lo: 1, hi: 0 };

    fn is_empty(self) -> bool {
        self.lo > self.hi
    }
}

/// The goal navcells of one row or column: at most two spans, in increasing order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LineGoal {
    pub(crate) spans: [Span; 2],
}

impl LineGoal {
    const NONE: LineGoal = LineGoal { spans: [Span::EMPTY, Span::EMPTY] };

    /// The first goal position strictly after `pos`.
    #[inline]
    pub(crate) fn first_after(&self, pos: i32) -> Option<i32> {
        self.spans.iter().find(|s| !s.is_empty() && s.hi > pos).map(|s| s.lo.max(pos + 1))
    }

    /// The last goal position strictly before `pos`.
    #[inline]
    pub(crate) fn last_before(&self, pos: i32) -> Option<i32> {
        self.spans.iter().rev().find(|s| !s.is_empty() && s.lo < pos).map(|s| s.hi.min(pos - 1))
    }

    #[inline]
    pub(crate) fn contains(&self, pos: i32) -> bool {
        self.spans.iter().any(|s| s.lo <= pos && pos <= s.hi)
    }
}

/// Lazily computed goal spans for every line of one orientation.
#[derive(Clone, Debug, Default)]
struct LineCache {
    stamp: Vec<u32>,
    lines: Vec<LineGoal>,
}

/// A goal prepared for one search on one grid: its bounding box in navcells and its goal spans per
/// row and per column, computed when first needed. Lives in the search scratch and is reused.
#[derive(Clone, Debug)]
pub(crate) struct GoalRaster {
    goal: Goal,
    width: u32,
    height: u32,
    /// Raw navcell size.
    s: i128,
    /// Navcells that can be in the goal (normal goals) or out of it (inverted goals): `[i0, i1] × [j0, j1]`.
    bbox: (i32, i32, i32, i32),
    /// The point goal's navcell.
    point: Option<(i32, i32)>,
    inverted: bool,
    generation: u32,
    rows: LineCache,
    cols: LineCache,
}

impl Default for GoalRaster {
    fn default() -> Self {
        Self {
            goal: Goal { shape: GoalShape::Point(WorldPos::from_int(0, 0)) },
            width: 0,
            height: 0,
            s: 1,
            bbox: (1, 1, 0, 0),
            point: None,
            inverted: false,
            generation: 0,
            rows: LineCache::default(),
            cols: LineCache::default(),
        }
    }
}

impl GoalRaster {
    /// Prepares the raster for a new goal, reusing its buffers.
    pub(crate) fn reset(&mut self, goal: &Goal, width: u32, height: u32, cell_size: Fixed) {
        self.goal = *goal;
        self.width = width;
        self.height = height;
        self.s = raw(cell_size);
        self.inverted = goal.is_inverted();
        self.point = None;
        let s = self.s;
        let (w, h) = (i128::from(width), i128::from(height));
        // A shape's x or z extent [lo, hi] (raw) touches navcells ceil(lo/s)-1 ..= floor(hi/s).
        let cells = |lo: i128, hi: i128, n: i128| -> (i32, i32) {
            let a = (div_ceil(lo, s) - 1).max(0);
            let b = div_floor(hi, s).min(n - 1);
            if a > b { (1, 0) } else { (a as i32, b as i32) }
        };
        self.bbox = match goal.shape {
            GoalShape::Point(at) => {
                let (i, j) = point_cell(at, s, width, height);
                self.point = Some((i as i32, j as i32));
                (i as i32, j as i32, i as i32, j as i32)
            }
            GoalShape::Circle { center, radius } | GoalShape::InvertedCircle { center, radius } => {
                let (cx, cz, r) = (raw(center.x), raw(center.z), raw(radius));
                let (i0, i1) = cells(cx - r, cx + r, w);
                let (j0, j1) = cells(cz - r, cz + r, h);
                (i0, j0, i1, j1)
            }
            GoalShape::Square(sq) | GoalShape::InvertedSquare(sq) => {
                let (ex, ez) = sq.extents();
                let (cx, cz) = (raw(sq.center.x), raw(sq.center.z));
                // Extents have 32 fractional bits; round outwards to 16.
                let (i0, i1) = cells(cx - div_ceil(ex, 1 << 16), cx + div_ceil(ex, 1 << 16), w);
                let (j0, j1) = cells(cz - div_ceil(ez, 1 << 16), cz + div_ceil(ez, 1 << 16), h);
                (i0, j0, i1, j1)
            }
            GoalShape::RoundedSquare { .. } => {
                let (x0, x1, z0, z1) = goal.bounds_raw();
                let (i0, i1) = cells(x0, x1, w);
                let (j0, j1) = cells(z0, z1, h);
                (i0, j0, i1, j1)
            }
        };
        if self.bbox.0 > self.bbox.2 || self.bbox.1 > self.bbox.3 {
            self.bbox = (1, 1, 0, 0);
        }
        self.generation = self.generation.wrapping_add(1);
        for (cache, n) in [(&mut self.rows, height), (&mut self.cols, width)] {
            if cache.stamp.len() != n as usize || self.generation == 0 {
                cache.stamp.clear();
                cache.stamp.resize(n as usize, 0);
                cache.lines.resize(n as usize, LineGoal::NONE);
            }
        }
        if self.generation == 0 {
            self.generation = 1;
        }
    }

    /// Whether the goal surely holds no navcell of the grid (its bounding box misses the grid).
    pub(crate) fn is_empty(&self) -> bool {
        !self.inverted && self.bbox.0 > self.bbox.2
    }

    /// An admissible, consistent estimate of the cost from `(i, j)` to the nearest goal navcell:
    /// the octile distance to the goal's bounding box (0 for inverted goals).
    #[inline]
    pub(crate) fn heuristic(&self, i: i32, j: i32) -> u64 {
        if self.inverted {
            return 0;
        }
        let (i0, j0, i1, j1) = self.bbox;
        let dx = (i0 - i).max(i - i1).max(0) as u64;
        let dy = (j0 - j).max(j - j1).max(0) as u64;
        octile(dx, dy)
    }

    /// The navcells that can be in the goal (normal goals) or out of it (inverted goals):
    /// `(i0, j0, i1, j1)`, empty when `i0 > i1`.
    pub(crate) fn bbox(&self) -> (i32, i32, i32, i32) {
        self.bbox
    }

    /// Whether the goal is inverted.
    pub(crate) fn is_inverted(&self) -> bool {
        self.inverted
    }

    /// The navcell holding the goal's centre (a point goal's point), clamped onto the grid: what
    /// "nearest to the goal" is measured from.
    pub(crate) fn center_cell(&self) -> (u32, u32) {
        let at = match self.goal.shape {
            GoalShape::Point(at) => at,
            GoalShape::Circle { center, .. } | GoalShape::InvertedCircle { center, .. } => center,
            GoalShape::Square(sq) | GoalShape::InvertedSquare(sq) | GoalShape::RoundedSquare { square: sq, .. } => sq.center,
        };
        point_cell(at, self.s, self.width, self.height)
    }

    /// Whether navcell `(i, j)` is in the goal.
    #[inline(always)]
    pub(crate) fn contains(&mut self, i: i32, j: i32) -> bool {
        if let Some(p) = self.point {
            return p == (i, j);
        }
        self.row(j).contains(i)
    }

    /// The first goal navcell of row `j` east of column `i`. Point goals answer inline; other goals
    /// go through the lazily computed spans.
    #[inline(always)]
    pub(crate) fn row_first_after(&mut self, j: i32, i: i32) -> Option<i32> {
        match self.point {
            Some((pi, pj)) => (pj == j && pi > i).then_some(pi),
            None => self.row(j).first_after(i),
        }
    }

    /// The last goal navcell of row `j` west of column `i`.
    #[inline(always)]
    pub(crate) fn row_last_before(&mut self, j: i32, i: i32) -> Option<i32> {
        match self.point {
            Some((pi, pj)) => (pj == j && pi < i).then_some(pi),
            None => self.row(j).last_before(i),
        }
    }

    /// The first goal navcell of column `i` north of row `j`.
    #[inline(always)]
    pub(crate) fn col_first_after(&mut self, i: i32, j: i32) -> Option<i32> {
        match self.point {
            Some((pi, pj)) => (pi == i && pj > j).then_some(pj),
            None => self.col(i).first_after(j),
        }
    }

    /// The last goal navcell of column `i` south of row `j`.
    #[inline(always)]
    pub(crate) fn col_last_before(&mut self, i: i32, j: i32) -> Option<i32> {
        match self.point {
            Some((pi, pj)) => (pi == i && pj < j).then_some(pj),
            None => self.col(i).last_before(j),
        }
    }

    /// The first step `k` in `1..=distance` of a diagonal from `(i, j)` in direction `(dx, dy)` whose
    /// navcell lies on a row or column holding goal navcells, so that a jump table search looks at
    /// it instead of jumping past it. `None` when no such step exists.
    #[inline(always)]
    pub(crate) fn diagonal_goal_step(&self, i: i32, j: i32, dx: i32, dy: i32, distance: i32) -> Option<i32> {
        if distance < 1 {
            return None;
        }
        if let Some((pi, pj)) = self.point {
            // The steps at which the diagonal crosses the goal's column and row.
            let (kc, kr) = ((pi - i) * dx, (pj - j) * dy);
            let kc = if kc >= 1 && kc <= distance { kc } else { i32::MAX };
            let kr = if kr >= 1 && kr <= distance { kr } else { i32::MAX };
            let k = kc.min(kr);
            return (k != i32::MAX).then_some(k);
        }
        if self.inverted {
            return Some(1);
        }
        let (i0, j0, i1, j1) = self.bbox;
        if i0 > i1 || j0 > j1 {
            return None;
        }
        // Steps k with lo <= a + k·d <= hi, as a range of k (d is ±1).
        let range = |a: i32, d: i32, lo: i32, hi: i32| if d > 0 { (lo - a, hi - a) } else { (a - hi, a - lo) };
        let first = |(lo, hi): (i32, i32)| {
            let k = lo.max(1);
            (k <= hi && k <= distance).then_some(k)
        };
        match (first(range(i, dx, i0, i1)), first(range(j, dy, j0, j1))) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The goal spans of row `j`.
    #[inline(never)]
    pub(crate) fn row(&mut self, j: i32) -> LineGoal {
        if let Some((pi, pj)) = self.point {
            return if pj == j { LineGoal { spans: [Span { lo: pi, hi: pi }, Span::EMPTY] } } else { LineGoal::NONE };
        }
        if j < self.bbox.1 || j > self.bbox.3 {
            return self.outside_bbox_line(self.width);
        }
        if self.rows.stamp[j as usize] != self.generation {
            let line = self.compute_line(true, j);
            self.rows.lines[j as usize] = line;
            self.rows.stamp[j as usize] = self.generation;
        }
        self.rows.lines[j as usize]
    }

    /// The goal spans of column `i`.
    #[inline(never)]
    pub(crate) fn col(&mut self, i: i32) -> LineGoal {
        if let Some((pi, pj)) = self.point {
            return if pi == i { LineGoal { spans: [Span { lo: pj, hi: pj }, Span::EMPTY] } } else { LineGoal::NONE };
        }
        if i < self.bbox.0 || i > self.bbox.2 {
            return self.outside_bbox_line(self.height);
        }
        if self.cols.stamp[i as usize] != self.generation {
            let line = self.compute_line(false, i);
            self.cols.lines[i as usize] = line;
            self.cols.stamp[i as usize] = self.generation;
        }
        self.cols.lines[i as usize]
    }

    fn outside_bbox_line(&self, len: u32) -> LineGoal {
        if self.inverted { LineGoal { spans: [Span { lo: 0, hi: len as i32 - 1 }, Span::EMPTY] } } else { LineGoal::NONE }
    }

    /// Computes the spans of a row (`along_x`) or column. For normal goals the goal navcells of a
    /// line are contiguous (a convex shape), found by two binary searches on the exact
    /// "half-line box meets the shape" test. For inverted goals the navcells strictly inside the
    /// shape are contiguous, and the line's goal is the rest.
    fn compute_line(&self, along_x: bool, line: i32) -> LineGoal {
        let s = self.s;
        let len = if along_x { self.width } else { self.height } as i32;
        let (l0, l1) = (i128::from(line) * s, i128::from(line + 1) * s);
        let full = i128::from(len) * s;
        // The box from position a to position b (inclusive navcells) on this line, as x/z ranges.
        let bx = |a: i128, b: i128| -> (i128, i128, i128, i128) { if along_x { (a, b, l0, l1) } else { (l0, l1, a, b) } };
        match self.goal.shape {
            GoalShape::Point(_) => unreachable!("point goals never reach compute_line"),
            GoalShape::Circle { .. } | GoalShape::Square(_) | GoalShape::RoundedSquare { .. } => {
                let meets = |(x0, x1, z0, z1): (i128, i128, i128, i128)| match self.goal.shape {
                    GoalShape::Circle { center, radius } => circle_box_intersects(center, radius, x0, x1, z0, z1),
                    GoalShape::Square(sq) => sq.box_intersects(x0, x1, z0, z1),
                    GoalShape::RoundedSquare { square, radius } => square.box_within(x0, x1, z0, z1, raw(radius)),
                    _ => false,
                };
                if !meets(bx(0, full)) {
                    return LineGoal::NONE;
                }
                // lo: smallest p with the box [0, (p+1)s] meeting the shape.
                let (mut a, mut b) = (0i32, len - 1);
                while a < b {
                    let m = a + (b - a) / 2;
                    if meets(bx(0, i128::from(m + 1) * s)) { b = m } else { a = m + 1 }
                }
                let lo = a;
                // hi: largest p with the box [p s, len s] meeting the shape.
                let (mut a, mut b) = (lo, len - 1);
                while a < b {
                    let m = a + (b - a + 1) / 2;
                    if meets(bx(i128::from(m) * s, full)) { a = m } else { b = m - 1 }
                }
                LineGoal { spans: [Span { lo, hi: a }, Span::EMPTY] }
            }
            GoalShape::InvertedCircle { center, radius } => {
                let inside = |p: i32| {
                    let (x0, x1, z0, z1) = bx(i128::from(p) * s, i128::from(p + 1) * s);
                    circle_box_strictly_inside(center, radius, x0, x1, z0, z1)
                };
                let c = if along_x { raw(center.x) } else { raw(center.z) };
                let seed = div_floor(c, s).clamp(0, i128::from(len) - 1) as i32;
                if !inside(seed) {
                    return LineGoal { spans: [Span { lo: 0, hi: len - 1 }, Span::EMPTY] };
                }
                let (mut a, mut b) = (0, seed);
                while a < b {
                    let m = a + (b - a) / 2;
                    if inside(m) { b = m } else { a = m + 1 }
                }
                let hole_lo = a;
                let (mut a, mut b) = (seed, len - 1);
                while a < b {
                    let m = a + (b - a + 1) / 2;
                    if inside(m) { a = m } else { b = m - 1 }
                }
                hole_to_line(hole_lo, a, len)
            }
            GoalShape::InvertedSquare(sq) => {
                let sections = (sq.open_section(along_x, l0), sq.open_section(along_x, l1));
                let (Some((lo0, hi0)), Some((lo1, hi1))) = sections else {
                    return LineGoal { spans: [Span { lo: 0, hi: len - 1 }, Span::EMPTY] };
                };
                let (lo, hi) = (lo0.max(lo1), hi0.min(hi1));
                if lo >= hi {
                    return LineGoal { spans: [Span { lo: 0, hi: len - 1 }, Span::EMPTY] };
                }
                let c = if along_x { raw(sq.center.x) } else { raw(sq.center.z) };
                // Navcell p is strictly inside when p·s − c > lo and (p+1)·s − c < hi.
                let first = if lo.den == 0 { 0 } else { div_floor(lo.num + c * lo.den, s * lo.den) + 1 };
                let last = if hi.den == 0 { i128::from(len) - 1 } else { div_ceil(hi.num + c * hi.den, s * hi.den) - 2 };
                let first = first.max(0);
                let last = last.min(i128::from(len) - 1);
                if first > last {
                    return LineGoal { spans: [Span { lo: 0, hi: len - 1 }, Span::EMPTY] };
                }
                hole_to_line(first as i32, last as i32, len)
            }
        }
    }
}

fn hole_to_line(hole_lo: i32, hole_hi: i32, len: i32) -> LineGoal {
    LineGoal { spans: [Span { lo: 0, hi: hole_lo - 1 }, Span { lo: hole_hi + 1, hi: len - 1 }] }
}

#[cfg(test)]
mod tests;
