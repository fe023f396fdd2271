//! The documented error bounds of `pathing::trig`, checked against `f64` (allowed here: this is the
//! oracle, not the simulation) on dense sweeps of degrees and radians.
//!
//! The bounds under test (module docs of `pathing::trig`): each component within `2^-17 + 2^-50` of
//! the exact value for degrees and `2^-17 + 2^-50 + |θ| · 2^-80` for radians (the result is the
//! correctly rounded value unless the exact value is within that slack of a rounding boundary), and
//! `|c_raw² + s_raw² − 2^32| ≤ 3 · 2^15`.

use pathing::Fixed;
use pathing::trig::{unit_vector_degrees, unit_vector_radians};
use proptest::prelude::*;

/// One unit of the result: 2^-16.
const ULP: f64 = 1.0 / 65536.0;

/// Allowed distance from the exact value: half a unit of rounding, plus the documented slack, plus a
/// margin for the `f64` oracle itself (a few times 2^-52 relative on angles up to 2^20 rad).
const TOLERANCE: f64 = ULP / 2.0 + 1e-9;

/// How far from a rounding boundary the exact value must be for the result to be pinned to the
/// correctly rounded value.
const TIE_MARGIN: f64 = 1e-6;

#[derive(Default, Debug)]
struct Stats {
    n: usize,
    max_error: f64,
    max_norm_deviation: i128,
    correctly_rounded: usize,
}

/// Checks one result against the exact `(cos, sin)` from `f64`; the only caller of the trig API's
/// results in this file.
#[track_caller]
fn check(stats: &mut Stats, input: &str, got: pathing::Vec2, cos: f64, sin: f64) {
    let (c, s) = (got.x.to_bits(), got.z.to_bits());
    for (raw, exact) in [(c, cos), (s, sin)] {
        let value = raw as f64 * ULP;
        let error = (value - exact).abs();
        assert!(error <= TOLERANCE, "{input}: component {value} vs exact {exact}: error {error:e} above {TOLERANCE:e}");
        stats.max_error = stats.max_error.max(error);
        let scaled = exact * 65536.0;
        if ((scaled - scaled.floor()) - 0.5).abs() > TIE_MARGIN {
            assert_eq!(raw, scaled.round() as i64, "{input}: not correctly rounded (exact {exact})");
            stats.correctly_rounded += 1;
        }
    }
    let norm = i128::from(c) * i128::from(c) + i128::from(s) * i128::from(s);
    let deviation = (norm - (1 << 32)).abs();
    assert!(deviation <= 3 << 15, "{input}: |u|² off by {deviation} raw (32 fractional bits)");
    stats.max_norm_deviation = stats.max_norm_deviation.max(deviation);
    stats.n += 1;
}

#[test]
fn every_64th_of_a_degree_from_minus_720_to_720_is_within_the_bound() {
    let mut stats = Stats::default();
    // 1/64 degree is 2^10 raw.
    for k in -(720 * 64)..=(720 * 64) {
        let raw = i64::from(k) << 10;
        let degrees = raw as f64 / 65536.0;
        let radians = degrees.to_radians();
        check(&mut stats, &format!("{degrees}°"), unit_vector_degrees(Fixed::from_bits(raw)), radians.cos(), radians.sin());
    }
    assert_eq!(stats.n, 2 * 720 * 64 + 1);
    // Nearly every component is pinned to the correctly rounded value.
    assert!(stats.correctly_rounded > 2 * stats.n - 100, "{stats:?}");
    // The bound is tight: rounding does use most of half a unit somewhere.
    assert!(stats.max_error > 0.49 * ULP, "{stats:?}");
}

#[test]
fn every_1024th_of_a_radian_from_minus_64_to_64_is_within_the_bound() {
    let mut stats = Stats::default();
    // 1/1024 rad is 2^6 raw.
    for k in -(64 * 1024)..=(64 * 1024) {
        let raw = i64::from(k) << 6;
        let radians = raw as f64 / 65536.0;
        check(&mut stats, &format!("{radians} rad"), unit_vector_radians(Fixed::from_bits(raw)), radians.cos(), radians.sin());
    }
    assert!(stats.correctly_rounded > 2 * stats.n - 100, "{stats:?}");
}

#[test]
fn quarter_turns_are_exact_and_the_octant_symmetries_hold() {
    for k in -12i32..=12 {
        let v = unit_vector_degrees(Fixed::from_num(90 * k));
        let expected = [(1, 0), (0, 1), (-1, 0), (0, -1)][k.rem_euclid(4) as usize];
        assert_eq!((v.x, v.z), (Fixed::from_num(expected.0), Fixed::from_num(expected.1)), "{k} quarter turns");
    }
    for raw in (0..(90i64 << 16)).step_by(997) {
        let theta = Fixed::from_bits(raw);
        let v = unit_vector_degrees(theta);
        assert_eq!(unit_vector_degrees(-theta), pathing::Vec2::new(v.x, -v.z));
        assert_eq!(unit_vector_degrees(Fixed::from_num(90) - theta), pathing::Vec2::new(v.z, v.x));
        assert_eq!(unit_vector_degrees(theta + Fixed::from_num(90)), v.perp());
    }
}

#[test]
fn the_rounding_of_the_square_norm_stays_within_its_bound_everywhere_in_a_turn() {
    // Every raw degree value in one octant (2.9 million): the largest deviation of |u|² from 1.
    let mut max_deviation = 0i128;
    for raw in 0..=(45i64 << 16) {
        let v = unit_vector_degrees(Fixed::from_bits(raw));
        let (c, s) = (i128::from(v.x.to_bits()), i128::from(v.z.to_bits()));
        max_deviation = max_deviation.max((c * c + s * s - (1 << 32)).abs());
    }
    assert!(max_deviation <= 3 << 15, "{max_deviation}");
    // And the bound is not vacuous: rounding moves |u|² by more than one unit of 2^-16 somewhere.
    assert!(max_deviation > 1 << 16, "{max_deviation}");
}

proptest! {
    #[test]
    fn random_radians_up_to_a_million_are_within_the_bound(raw in -(1i64 << 36)..(1i64 << 36)) {
        let radians = raw as f64 / 65536.0;
        let mut stats = Stats::default();
        check(&mut stats, &format!("{radians} rad"), unit_vector_radians(Fixed::from_bits(raw)), radians.cos(), radians.sin());
    }

    #[test]
    fn random_degrees_are_within_the_bound(raw in -(1i64 << 40)..(1i64 << 40)) {
        // Reduce in f64 exactly (the raw value and 360 · 2^16 are exact integers), then compare.
        let reduced = raw.rem_euclid(360 << 16) as f64 / 65536.0;
        let radians = reduced.to_radians();
        let mut stats = Stats::default();
        check(&mut stats, &format!("{raw} raw degrees"), unit_vector_degrees(Fixed::from_bits(raw)), radians.cos(), radians.sin());
    }
}
