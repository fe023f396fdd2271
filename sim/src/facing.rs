//! Facing: the direction a unit looks, turned toward its direction of travel at a bounded rate
//! each turn (docs/motion-rules.md, "Facing"), in exact fixed point.
//!
//! A facing is a [`Vec2`] of length one (raw length `2^16` to within a few raw units of rounding): no angle is ever stored, so no arc tangent is needed and every step is a handful of
//! integer products. A turn's rotation is the unit vector of its largest angle,
//! [`pathing::trig::unit_vector_degrees`] of `turn_rate × turn length`, computed once a turn for
//! each turn rate the units have.
//!
//! A unit turns while it moves, as in 0 A.D.: it never waits to face its way before walking, so
//! facing changes nothing of where units go; it is there for a game to draw them.

use pathing::{Fixed, Vec2};

use crate::geom::{div, isqrt};

/// The facing of a new unit: east (+x).
pub const INITIAL_FACING: Vec2 = Vec2 { x: Fixed::ONE, z: Fixed::ZERO };

/// How far a facing may turn in one turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TurnStep {
    /// At least a half turn: a facing becomes the travel direction at once.
    Whole,
    /// `(cos θ, sin θ)` of the largest angle θ < 180° of a turn.
    By(Vec2),
}

impl TurnStep {
    /// The step of a turn of `turn_ms` at `turn_rate` degrees per second (the angle rounded down
    /// to a multiple of 2^-16 degrees).
    pub(crate) fn of(turn_rate: Fixed, turn_ms: u32) -> Self {
        let raw = i128::from(turn_rate.to_bits()) * i128::from(turn_ms) / 1000;
        if raw >= i128::from(Fixed::from_num(180).to_bits()) {
            TurnStep::Whole
        } else {
            TurnStep::By(pathing::trig::unit_vector_degrees(Fixed::from_bits(raw as i64)))
        }
    }
}

/// The turn steps of one turn for each turn rate met so far (a game has a handful of rates), so
/// that a unit's step costs a lookup rather than a sine and cosine. Looked up by value, never
/// iterated to decide anything.
pub(crate) struct TurnSteps {
    turn_ms: u32,
    known: Vec<(Fixed, TurnStep)>,
}

impl TurnSteps {
    /// No rates yet, for turns of `turn_ms`.
    pub(crate) fn new(turn_ms: u32) -> Self {
        Self { turn_ms, known: Vec::new() }
    }

    /// The step of a turn at `turn_rate` degrees per second.
    pub(crate) fn of(&mut self, turn_rate: Fixed) -> TurnStep {
        if let Some(&(_, step)) = self.known.iter().find(|(rate, _)| *rate == turn_rate) {
            return step;
        }
        let step = TurnStep::of(turn_rate, self.turn_ms);
        self.known.push((turn_rate, step));
        step
    }
}

/// `(x, z)` scaled to length one (raw `2^16`), each component truncated toward zero; `None` for the
/// zero vector.
pub(crate) fn unit_direction(x: i128, z: i128) -> Option<Vec2> {
    // Scaled up first (exactly: a power of two), so that the root rounded down to an integer is
    // within one part in 2^40 of the length however short the vector: a step of a few raw units
    // gives as good a direction as a long one.
    let big = x.unsigned_abs().max(z.unsigned_abs());
    if big == 0 {
        return None;
    }
    let shift = 40u32.saturating_sub(128 - big.leading_zeros());
    let (x, z) = (x << shift, z << shift);
    let length = isqrt((x * x + z * z) as u128) as i128;
    let one = i128::from(Fixed::ONE.to_bits());
    Some(Vec2::new(Fixed::from_bits(div(x * one, length) as i64), Fixed::from_bits(div(z * one, length) as i64)))
}

/// `facing` turned toward the direction `(dx, dz)` (raw, any length) by at most one turn's `step`:
/// the direction itself (as a unit vector) when it is within the step, else `facing` rotated by
/// the step toward it, anticlockwise when the direction is exactly behind. A zero direction
/// leaves the facing as it is.
pub(crate) fn turn_toward(facing: Vec2, (dx, dz): (i128, i128), step: TurnStep) -> Vec2 {
    let Some(target) = unit_direction(dx, dz) else { return facing };
    let TurnStep::By(rotation) = step else { return target };
    let r = |v: Fixed| i128::from(v.to_bits());
    let (fx, fz) = (r(facing.x), r(facing.z));
    let cross = fx * dz - fz * dx;
    if cross == 0 && fx * dx + fz * dz > 0 {
        return target;
    }
    let (c, s) = (r(rotation.x), if cross >= 0 { r(rotation.z) } else { -r(rotation.z) });
    let one = i128::from(Fixed::ONE.to_bits());
    let (rx, rz) = (div(fx * c - fz * s, one), div(fx * s + fz * c, one));
    // Rotating past the direction flips the side it lies on: then the direction is within the step.
    let after = rx * dz - rz * dx;
    let passed = if cross >= 0 { after <= 0 } else { after >= 0 };
    if passed { target } else { unit_direction(rx, rz).unwrap_or(target) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn raw(v: Vec2) -> (i128, i128) {
        (i128::from(v.x.to_bits()), i128::from(v.z.to_bits()))
    }

    /// The angle between two unit vectors is at most `θ` (give or take `slack` raw units of
    /// rounding) when their dot product is at least `cos θ`.
    fn within_angle(a: Vec2, b: Vec2, step: Vec2, slack: i128) -> bool {
        let ((ax, az), (bx, bz)) = (raw(a), raw(b));
        let dot = (ax * bx + az * bz) >> 16;
        dot + slack >= raw(step).0
    }

    proptest! {
        /// One turn never turns a facing by more than the turn's angle, and the result is a unit
        /// vector (to within rounding: a few raw units).
        #[test]
        fn facing_turns_at_most_the_turn_rate_per_turn(
            angle in 0i64..360, degrees_per_second in 1i64..900, dx in -1000i64..1000, dz in -1000i64..1000,
        ) {
            let facing = pathing::trig::unit_vector_degrees(Fixed::from_num(angle));
            let step = TurnStep::of(Fixed::from_num(degrees_per_second), 200);
            let TurnStep::By(rotation) = step else { return Ok(()) };
            let turned = turn_toward(facing, (i128::from(dx) << 8, i128::from(dz) << 8), step);
            prop_assert!(within_angle(facing, turned, rotation, 4), "{facing:?} -> {turned:?}");
            let (x, z) = raw(turned);
            let length2 = x * x + z * z;
            prop_assert!((length2 - (1 << 32)).abs() <= 1 << 19, "{turned:?}");
        }

        /// Turning again and again toward a fixed direction reaches exactly that direction's unit
        /// vector, within the half turns over the turn's angle (and one more).
        #[test]
        fn facing_converges_to_the_travel_direction(
            angle in 0i64..360, degrees_per_second in 1i64..900, dx in -1000i64..1000, dz in -1000i64..1000,
        ) {
            prop_assume!(dx != 0 || dz != 0);
            let direction = (i128::from(dx) << 8, i128::from(dz) << 8);
            let target = unit_direction(direction.0, direction.1).unwrap();
            let step = TurnStep::of(Fixed::from_num(degrees_per_second), 200);
            let mut facing = pathing::trig::unit_vector_degrees(Fixed::from_num(angle));
            // A turn of 200 ms turns `degrees_per_second / 5` degrees: a half turn takes
            // `900 / degrees_per_second` of them.
            let bound = 900 / degrees_per_second + 2;
            for _ in 0..bound {
                facing = turn_toward(facing, direction, step);
            }
            prop_assert_eq!(facing, target);
        }
    }

    #[test]
    fn a_direction_behind_turns_anticlockwise() {
        let step = TurnStep::of(Fixed::from_num(450), 200); // 90° a turn
        let turned = turn_toward(INITIAL_FACING, (-(1 << 16), 0), step);
        assert_eq!(turned, Vec2::new(Fixed::ZERO, Fixed::ONE));
        assert_eq!(turn_toward(turned, (-(1 << 16), 0), step), Vec2::new(-Fixed::ONE, Fixed::ZERO));
    }

    #[test]
    fn a_half_turn_a_turn_faces_the_direction_at_once() {
        assert_eq!(TurnStep::of(Fixed::from_num(900), 200), TurnStep::Whole);
        assert_eq!(turn_toward(INITIAL_FACING, (0, -5), TurnStep::Whole), Vec2::new(Fixed::ZERO, -Fixed::ONE));
        assert_eq!(turn_toward(INITIAL_FACING, (0, 0), TurnStep::Whole), INITIAL_FACING);
    }
}
