//! Fixed-point world coordinates and the exact integer predicates built on them; the submodules read
//! decimal text into fixed point ([`decimal`]) and turn angles into unit vectors ([`trig`]).
//!
//! World positions use [`Fixed`] (`I48F16`: 16 fractional bits like 0 A.D., 48 integer bits so that
//! squared map-sized lengths never overflow). Every predicate here works on the raw integer bits,
//! widened to `i128`, so it is exact: no rounding happens anywhere, and the answer is the same on every
//! machine.

pub mod decimal;
pub mod trig;

use serde::{Deserialize, Serialize};

/// The world-space scalar: a signed fixed-point number with 16 fractional bits. `[Units: metres]`
pub type Fixed = fixed::types::I48F16;

/// Number of fractional bits in [`Fixed`].
pub const FIXED_FRAC_BITS: u32 = 16;

/// A position on the ground plane. `x` grows east, `z` grows north. `[Units: metres]`
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WorldPos {
    /// East coordinate.
    pub x: Fixed,
    /// North coordinate.
    pub z: Fixed,
}

impl WorldPos {
    /// A position from its two coordinates.
    pub const fn new(x: Fixed, z: Fixed) -> Self {
        Self { x, z }
    }

    /// A position from whole metres.
    pub fn from_int(x: i32, z: i32) -> Self {
        Self { x: Fixed::from_num(x), z: Fixed::from_num(z) }
    }
}

/// A direction or offset on the ground plane, in the same fixed-point units as [`WorldPos`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Vec2 {
    /// East component.
    pub x: Fixed,
    /// North component.
    pub z: Fixed,
}

impl Vec2 {
    /// A vector from its two components.
    pub const fn new(x: Fixed, z: Fixed) -> Self {
        Self { x, z }
    }

    /// The vector turned a quarter turn anticlockwise: `(x, z) -> (-z, x)`. Exact.
    pub fn perp(self) -> Self {
        Self { x: -self.z, z: self.x }
    }
}

/// Raw bits of a fixed value, widened.
#[inline]
pub(crate) fn raw(value: Fixed) -> i128 {
    i128::from(value.to_bits())
}

/// `a.x * b.z - a.z * b.x` on raw values: 32 fractional bits.
#[inline]
pub(crate) fn cross_raw(ax: i128, az: i128, bx: i128, bz: i128) -> i128 {
    ax * bz - az * bx
}

/// Floor division of `num` by a positive `den`.
#[inline]
pub(crate) fn div_floor(num: i128, den: i128) -> i128 {
    debug_assert!(den > 0);
    num.div_euclid(den)
}

/// The navcell index of a raw coordinate and its offset inside the navcell, for a positive
/// navcell size `cell` (raw): `v.div_euclid(cell)` and `v.rem_euclid(cell)`, by shifting and
/// masking when the size is a power of two (1 m is 2^16), which rounds the same way.
#[inline]
pub fn cell_div_rem(v: i64, cell: i64) -> (i64, i64) {
    debug_assert!(cell > 0);
    if cell.count_ones() == 1 { (v >> cell.trailing_zeros(), v & (cell - 1)) } else { (v.div_euclid(cell), v.rem_euclid(cell)) }
}

/// Ceiling division of `num` by a positive `den`.
#[inline]
pub(crate) fn div_ceil(num: i128, den: i128) -> i128 {
    debug_assert!(den > 0);
    -((-num).div_euclid(den))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_division_is_euclidean_division() {
        for cell in [1i64, 3, 4096, 65_536, 65_537, 1 << 20] {
            for v in [0i64, 1, -1, 65_535, 65_536, -65_536, -65_537, 123_456_789, -123_456_789, i64::MAX, i64::MIN] {
                assert_eq!(cell_div_rem(v, cell), (v.div_euclid(cell), v.rem_euclid(cell)), "{v} / {cell}");
            }
        }
    }

    #[test]
    fn floor_and_ceil_division_round_towards_the_right_side() {
        assert_eq!(div_floor(7, 2), 3);
        assert_eq!(div_floor(-7, 2), -4);
        assert_eq!(div_ceil(7, 2), 4);
        assert_eq!(div_ceil(-7, 2), -3);
        assert_eq!(div_ceil(6, 2), 3);
        assert_eq!(div_floor(-6, 2), -3);
    }

    #[test]
    fn perp_turns_anticlockwise() {
        let east = Vec2::new(Fixed::ONE, Fixed::ZERO);
        assert_eq!(east.perp(), Vec2::new(Fixed::ZERO, Fixed::ONE));
        assert_eq!(cross_raw(1, 0, 0, 1), 1);
    }
}
