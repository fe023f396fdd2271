//! Deterministic integer trigonometry: the unit vector `(cos θ, sin θ)` of an angle, for turning the
//! editor form of an obstruction `(x, z, w, h, θ)` into the axes of an oriented square.
//!
//! # How it works
//!
//! The angle is reduced to a quadrant and a remainder `a ∈ [0, 90°)`; the remainder is folded onto
//! `b = min(a, 90° − a) ∈ [0, 45°]`, where `cos b` and `sin b` are evaluated once each by their
//! Taylor series in 62-bit fixed point on `i128`, then rounded to the nearest multiple of 2^-16
//! (the resolution of [`Fixed`]). The other octants are signed permutations of that one pair, so
//! the symmetries of sine and cosine hold exactly, not just approximately:
//!
//! - `f(θ + 90°) = perp(f(θ))`, `f(θ + 360°) = f(θ)`, `f(−θ) = (c, −s)`, `f(90° − θ) = (s, c)`;
//! - every multiple of 90° gives exactly `(±1, 0)` or `(0, ±1)`, and 45° gives two equal components.
//!
//! Degrees reduce exactly (a [`Fixed`] angle is a multiple of 2^-16 degrees, and a full turn is
//! `360 · 2^16` of those). Radians cannot reduce exactly, since π is irrational: the reduction uses
//! π/2 rounded to 2^-79, which adds at most `|θ| · 2^-80` (at most 2^-33 for any [`Fixed`]) to the
//! error in the reduced angle. Of the symmetries, only `f(−θ) = (c, −s)` applies to radians (π/2 is
//! not a [`Fixed`] value), and it holds exactly.
//!
//! # Error bounds
//!
//! Write `(c, s)` for the result and `(cos θ, sin θ)` for the exact values at the exact input.
//!
//! - Degrees: `|c − cos θ| ≤ 2^-17 + 2^-50` and the same for `s`: the result is the correctly
//!   rounded value except when the exact value lies within 2^-50 of a rounding boundary.
//! - Radians: `|c − cos θ| ≤ 2^-17 + 2^-50 + |θ| · 2^-80`, so at most `2^-17 + 2^-32` for every input.
//! - Length: `|c² + s² − 1| ≤ 3 · 2^-17` (from `2 √2 · 2^-17` plus squares of the error). On raw bits
//!   (16 fractional bits) that is `|c_raw² + s_raw² − 2^32| ≤ 3 · 2^15`.
//!
//! The integration test `tests/tests/trig.rs` checks these bounds against double-precision floating point on a dense sweep.

use crate::geometry::{Fixed, Vec2};

/// Fractional bits of the internal evaluation.
const EVAL_BITS: u32 = 62;

/// One in the internal fixed point.
const EVAL_ONE: i128 = 1 << EVAL_BITS;

/// A quarter turn in raw [`Fixed`] degrees (`90 · 2^16`).
const QUARTER_TURN_DEGREES_RAW: i128 = 90 << 16;

/// A full turn in raw [`Fixed`] degrees (`360 · 2^16`).
const FULL_TURN_DEGREES_RAW: i128 = 360 << 16;

/// Fractional bits of [`HALF_PI_Q79`].
const HALF_PI_BITS: u32 = 79;

/// `π/2 · 2^79`, rounded to the nearest integer (checked against Machin's formula in the tests).
const HALF_PI_Q79: i128 = 949_488_118_409_084_645_196_998;

/// Fractional bits of [`RADIANS_PER_DEGREE_Q110`].
const RADIANS_PER_DEGREE_BITS: u32 = 110;

/// `π/180 · 2^110`, rounded to the nearest integer (checked against Machin's formula in the tests).
const RADIANS_PER_DEGREE_Q110: u128 = 22_655_668_980_597_745_002_315_953_003_817;

/// `(cos θ, sin θ)` for an angle in degrees, anticlockwise from +x (east) towards +z (north).
///
/// Every input is accepted; see the module documentation for the error bound and the exact
/// symmetries. Quarter turns are exact: `unit_vector_degrees(90) == (0, 1)`.
pub fn unit_vector_degrees(degrees: Fixed) -> Vec2 {
    let reduced = i128::from(degrees.to_bits()).rem_euclid(FULL_TURN_DEGREES_RAW);
    let quadrant = reduced / QUARTER_TURN_DEGREES_RAW;
    let remainder = reduced % QUARTER_TURN_DEGREES_RAW;
    // 0 ≤ folded ≤ 45 · 2^16 < 2^22 and the constant is below 2^105, so the product fits in u128.
    fold(quadrant, remainder, QUARTER_TURN_DEGREES_RAW, |folded| {
        let folded = folded.unsigned_abs();
        let shift = RADIANS_PER_DEGREE_BITS + 16 - EVAL_BITS;
        let radians = (folded * RADIANS_PER_DEGREE_Q110 + (1 << (shift - 1))) >> shift;
        // Below π/4 · 2^62 < 2^62, so the conversion is lossless.
        i128::try_from(radians).unwrap_or(EVAL_ONE)
    })
}

/// `(cos θ, sin θ)` for an angle in radians, anticlockwise from +x (east) towards +z (north).
///
/// Every input is accepted; see the module documentation for the error bound.
pub fn unit_vector_radians(radians: Fixed) -> Vec2 {
    // θ · 2^79 = raw · 2^63; |raw| ≤ 2^63, so |scaled| ≤ 2^126 and fits in i128. The quotient is at
    // most 2^47 / (π/2) in magnitude, and quotient · HALF_PI_Q79 ≤ |scaled| + HALF_PI_Q79 fits too.
    let scaled = i128::from(radians.to_bits()) << (HALF_PI_BITS - 16);
    let quotient = scaled.div_euclid(HALF_PI_Q79);
    let remainder = scaled.rem_euclid(HALF_PI_Q79);
    let shift = HALF_PI_BITS - EVAL_BITS;
    fold(quotient.rem_euclid(4), remainder, HALF_PI_Q79, |folded| (folded + (1 << (shift - 1))) >> shift)
}

/// Folds `remainder ∈ [0, quarter)` of quadrant `quadrant ∈ 0..4` onto `[0, quarter/2]`, evaluates
/// there (`to_eval` converts the folded remainder to radians with [`EVAL_BITS`] fractional bits),
/// and unfolds. The fold is what makes the symmetries exact.
fn fold(quadrant: i128, remainder: i128, quarter: i128, to_eval: impl Fn(i128) -> i128) -> Vec2 {
    let (c, s) = match (2 * remainder).cmp(&quarter) {
        std::cmp::Ordering::Less => cos_sin_octant(to_eval(remainder)),
        std::cmp::Ordering::Equal => {
            // Exactly half a quarter turn: both components are the same value, so compute it once.
            let (c, _) = cos_sin_octant(to_eval(remainder));
            (c, c)
        }
        std::cmp::Ordering::Greater => {
            let (c, s) = cos_sin_octant(to_eval(quarter - remainder));
            (s, c)
        }
    };
    let (x, z) = match quadrant {
        0 => (c, s),
        1 => (-s, c),
        2 => (-c, -s),
        _ => (s, -c),
    };
    Vec2::new(Fixed::from_bits(x), Fixed::from_bits(z))
}

/// `(cos x, sin x)` rounded to raw [`Fixed`] bits, for `0 ≤ x ≤ π/4` given with [`EVAL_BITS`]
/// fractional bits.
///
/// Both series alternate with terms decreasing in size, and stop once a term rounds to zero; each
/// step truncates by under one unit of 2^-62, so with at most 14 terms the sum is within 2^-56 of
/// the exact value, far below the final rounding to 2^-16.
fn cos_sin_octant(x: i128) -> (i64, i64) {
    // x ≤ 0.79 · 2^62, so every product of two terms stays below 2^124.
    let x_sq = (x * x) >> EVAL_BITS;
    let series = |first: i128, first_power: i128| {
        let (mut term, mut power, mut sum, mut positive) = (first, first_power, 0i128, true);
        while term != 0 {
            sum += if positive { term } else { -term };
            term = ((term * x_sq) >> EVAL_BITS) / ((power + 1) * (power + 2));
            power += 2;
            positive = !positive;
        }
        sum
    };
    let round = |value: i128| {
        let shift = EVAL_BITS - 16;
        // |value| ≤ 2^62, so the rounded value is at most 2^16 and fits in i64.
        i64::try_from((value + (1 << (shift - 1))) >> shift).unwrap_or(1 << 16)
    };
    (round(series(EVAL_ONE, 0)), round(series(x, 1)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn degrees(value: i32) -> Fixed {
        Fixed::from_num(value)
    }

    fn bits(v: Vec2) -> (i64, i64) {
        (v.x.to_bits(), v.z.to_bits())
    }

    /// `π · 2^120` by Machin's formula `π = 16 atan(1/5) − 4 atan(1/239)`, within 2^10.
    fn machin_pi_q120() -> i128 {
        let atan_inverse = |x: i128| {
            let (mut sum, mut k, mut power) = (0i128, 0i128, x);
            loop {
                let term = ((1i128 << 120) / power) / (2 * k + 1);
                if term == 0 {
                    return sum;
                }
                sum += if k % 2 == 0 { term } else { -term };
                k += 1;
                power = match power.checked_mul(x * x) {
                    Some(p) => p,
                    None => return sum,
                };
            }
        };
        16 * atan_inverse(5) - 4 * atan_inverse(239)
    }

    #[test]
    fn constants_match_machins_formula() {
        let pi = machin_pi_q120();
        // π/2 · 2^79 = π · 2^120 / 2^42; rounding adds at most 2^41, Machin's sum at most 2^10.
        assert!((HALF_PI_Q79 * (1 << 42) - pi).abs() <= (1 << 41) + (1 << 10));
        // π/180 · 2^110 = π · 2^120 / (180 · 2^10).
        let deg = i128::try_from(RADIANS_PER_DEGREE_Q110).unwrap();
        assert!((deg * 180 * (1 << 10) - pi).abs() <= 90 * (1 << 10) + (1 << 10));
    }

    #[test]
    fn quarter_turns_are_exact() {
        let one = 1 << 16;
        for k in -8i32..=8 {
            let expected = [(one, 0), (0, one), (-one, 0), (0, -one)][k.rem_euclid(4) as usize];
            assert_eq!(bits(unit_vector_degrees(degrees(90 * k))), expected, "{k} quarter turns");
        }
        assert_eq!(bits(unit_vector_radians(Fixed::ZERO)), (one, 0));
    }

    #[test]
    fn known_values_are_correctly_rounded() {
        // cos 45° · 2^16 = 46340.95 -> 46341; sin 30° = 0.5 exactly; cos 60° = 0.5.
        assert_eq!(bits(unit_vector_degrees(degrees(45))), (46341, 46341));
        assert_eq!(bits(unit_vector_degrees(degrees(30))), (56756, 32768));
        assert_eq!(bits(unit_vector_degrees(degrees(60))), (32768, 56756));
        // 1 radian: cos 1 · 2^16 = 35409.25, sin 1 · 2^16 = 55146.64.
        assert_eq!(bits(unit_vector_radians(Fixed::ONE)), (35409, 55147));
        // π/2 rounded to 2^-16 is 102944 raw (1.570800781 > π/2 by 4.5e-6), so cos is -4.5e-6.
        assert_eq!(bits(unit_vector_radians(Fixed::from_bits(102_944))), (0, 1 << 16));
    }

    #[test]
    fn extreme_inputs_do_not_panic_and_stay_unit() {
        for value in [Fixed::MIN, Fixed::MAX, Fixed::DELTA, -Fixed::DELTA, Fixed::MIN + Fixed::DELTA] {
            for v in [unit_vector_degrees(value), unit_vector_radians(value)] {
                let (c, s) = (i128::from(v.x.to_bits()), i128::from(v.z.to_bits()));
                assert!((c * c + s * s - (1 << 32)).abs() <= 3 << 15, "{value}: {v:?}");
            }
        }
    }

    proptest! {
        #[test]
        fn degree_symmetries_are_exact(raw in any::<i64>()) {
            let theta = Fixed::from_bits(raw);
            let (c, s) = bits(unit_vector_degrees(theta));
            let quarter = Fixed::from_num(90);
            // Stay away from the ends of the range, where θ ± 360° would overflow.
            if theta.abs() < Fixed::MAX / 2 {
                prop_assert_eq!(bits(unit_vector_degrees(-theta)), (c, -s));
                prop_assert_eq!(bits(unit_vector_degrees(quarter - theta)), (s, c));
                prop_assert_eq!(bits(unit_vector_degrees(theta + quarter)), (-s, c));
                prop_assert_eq!(bits(unit_vector_degrees(theta + Fixed::from_num(360))), (c, s));
            }
            prop_assert!((i128::from(c) * i128::from(c) + i128::from(s) * i128::from(s) - (1 << 32)).abs() <= 3 << 15);
        }

        #[test]
        fn radian_negation_is_exact(raw in (i64::MIN + 1)..=i64::MAX) {
            let (c, s) = bits(unit_vector_radians(Fixed::from_bits(raw)));
            prop_assert_eq!(bits(unit_vector_radians(Fixed::from_bits(-raw))), (c, -s));
            prop_assert!((i128::from(c) * i128::from(c) + i128::from(s) * i128::from(s) - (1 << 32)).abs() <= 3 << 15);
        }

        #[test]
        fn degrees_and_radians_agree(raw in -(720i64 << 16)..(720 << 16)) {
            // θ degrees as radians, rounded to 2^-16: the two results differ by at most the rounding of
            // the input (|Δθ| ≤ 2^-17 rad moves each component by at most that) plus both roundings.
            let per_degree_q70 = i128::try_from(RADIANS_PER_DEGREE_Q110 >> 40).unwrap();
            let rad_bits = (i128::from(raw) * per_degree_q70 + (1 << 69)) >> 70;
            let a = bits(unit_vector_degrees(Fixed::from_bits(raw)));
            let b = bits(unit_vector_radians(Fixed::from_bits(i64::try_from(rad_bits).unwrap())));
            prop_assert!((a.0 - b.0).abs() <= 2 && (a.1 - b.1).abs() <= 2, "{:?} vs {:?}", a, b);
        }
    }
}
