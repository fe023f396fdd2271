//! Exact integer geometry shared by the turn's phases: square roots, distances, the navcell under
//! a position and the centre of a navcell, and keeping positions off grid lines.
//!
//! Everything here works on raw fixed-point bits in `i128`/`u128`, so no result depends on the
//! platform; motion, formations, facing and the world's phases all measure with these functions,
//! which is why they live below all of them.

use pathing::{Fixed, NavGrid, Navcell, WorldPos};

/// The position moved off navcell borders: a coordinate exactly on a grid line moves one raw
/// unit (2^-16 m) into the navcell that contains it. Movement checks treat navcells as closed, so a
/// unit standing exactly on the edge of a blocked navcell would touch it with every step; keeping
/// units off the lines (which changes nothing else: the navcell under the unit is the same) means
/// it never does.
pub fn off_grid_lines(pos: WorldPos, cell_size: Fixed) -> WorldPos {
    let s = cell_size.to_bits();
    let nudge = |v: Fixed| if v.to_bits().rem_euclid(s) == 0 { Fixed::from_bits(v.to_bits() + 1) } else { v };
    WorldPos::new(nudge(pos.x), nudge(pos.z))
}

/// Floor of the square root (the integer algorithm of `core`: exact on every platform).
pub(crate) fn isqrt(n: u128) -> u128 {
    // Distances in a turn are short: their squares fit `u64`, whose root is much cheaper.
    match u64::try_from(n) {
        Ok(small) => u128::from(small.isqrt()),
        Err(_) => n.isqrt(),
    }
}

/// `a / b` truncated toward zero, as `i128` division, computed in `i64` when both fit (several
/// times cheaper; the same result).
pub(crate) fn div(a: i128, b: i128) -> i128 {
    match (i64::try_from(a), i64::try_from(b)) {
        (Ok(a), Ok(b)) if b != 0 && !(a == i64::MIN && b == -1) => i128::from(a / b),
        _ => a / b,
    }
}

/// Exact-floor length of `to − from`, raw with 16 fractional bits.
pub(crate) fn distance_raw(from: WorldPos, to: WorldPos) -> i128 {
    let dx = i128::from(to.x.to_bits()) - i128::from(from.x.to_bits());
    let dz = i128::from(to.z.to_bits()) - i128::from(from.z.to_bits());
    isqrt((dx * dx + dz * dz) as u128) as i128
}

/// Whether `p` is within `d` of the closed segment `a → b`: exact, on raw bits (products stay
/// below 2^128 for positions on any grid and `d` ≤ 64 m; larger ones saturate on the safe side).
pub(crate) fn within_of_segment(p: WorldPos, a: WorldPos, b: WorldPos, d: Fixed) -> bool {
    let r = |v: Fixed| i128::from(v.to_bits());
    let (dx, dz) = (r(b.x) - r(a.x), r(b.z) - r(a.z));
    let (wx, wz) = (r(p.x) - r(a.x), r(p.z) - r(a.z));
    let d2 = (r(d) * r(d)) as u128;
    let sq = |x: i128| x.unsigned_abs().saturating_mul(x.unsigned_abs());
    let len2 = sq(dx).saturating_add(sq(dz));
    let t = wx.saturating_mul(dx).saturating_add(wz.saturating_mul(dz));
    if len2 == 0 || t <= 0 {
        return sq(wx).saturating_add(sq(wz)) <= d2;
    }
    if t.unsigned_abs() >= len2 {
        return sq(r(p.x) - r(b.x)).saturating_add(sq(r(p.z) - r(b.z))) <= d2;
    }
    let cross = wx.saturating_mul(dz).saturating_sub(wz.saturating_mul(dx));
    sq(cross) <= d2.saturating_mul(len2)
}

/// The navcell under a position, clamped onto the grid.
pub(crate) fn grid_navcell(grid: &NavGrid, pos: WorldPos) -> Navcell {
    // A navcell size is positive, so the `i64` division cannot overflow.
    let s = grid.cell_size().to_bits().max(1);
    let c = |v: Fixed, n: u32| pathing::cell_div_rem(v.to_bits(), s).0.clamp(0, i64::from(n) - 1) as u16;
    Navcell::new(c(pos.x, grid.width()), c(pos.z, grid.height()))
}

/// The centre of a navcell (public as `sim::navcell_centre`, for tools drawing paths).
pub fn centre(cell: Navcell, cell_size: Fixed) -> WorldPos {
    let s = cell_size.to_bits();
    WorldPos::new(Fixed::from_bits(i64::from(cell.i) * s + s / 2), Fixed::from_bits(i64::from(cell.j) * s + s / 2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `within_of_segment` against the squared distance to the nearest point of the segment,
        /// computed as an exact fraction in vector form (clamped projection), on small raw values
        /// where every case is hit: endpoints, interior, degenerate segments, distance exactly `d`.
        #[test]
        fn within_of_segment_matches_the_clamped_projection(
            a in (-40i64..40, -40i64..40), b in (-40i64..40, -40i64..40), p in (-40i64..40, -40i64..40), d in 0i64..60,
        ) {
            let pos = |(x, z): (i64, i64)| WorldPos::new(Fixed::from_bits(x), Fixed::from_bits(z));
            let (dx, dz) = (i128::from(b.0 - a.0), i128::from(b.1 - a.1));
            let (wx, wz) = (i128::from(p.0 - a.0), i128::from(p.1 - a.1));
            let len2 = dx * dx + dz * dz;
            let dot = wx * dx + wz * dz;
            // Nearest point a + (num / den)·(b − a), with num / den clamped into [0, 1].
            let (num, den) = if len2 == 0 { (0, 1) } else { (dot.clamp(0, len2), len2) };
            let (ex, ez) = (wx * den - num * dx, wz * den - num * dz);
            let expected = ex * ex + ez * ez <= i128::from(d * d) * den * den;
            prop_assert_eq!(within_of_segment(pos(p), pos(a), pos(b), Fixed::from_bits(d)), expected);
        }
    }

    #[test]
    fn div_is_i128_division() {
        let values = [
            0i128,
            1,
            -1,
            2,
            -7,
            65_536,
            -65_537,
            i128::from(i64::MAX),
            i128::from(i64::MIN),
            i128::from(i64::MIN) - 3,
            1 << 70,
            -(1 << 90),
        ];
        for a in values {
            for b in values.iter().filter(|&&b| b != 0) {
                assert_eq!(div(a, *b), a / b, "{a} / {b}");
            }
        }
    }

    #[test]
    fn isqrt_is_the_floor_root() {
        for n in 0u128..5000 {
            let r = isqrt(n);
            assert!(r * r <= n && (r + 1) * (r + 1) > n, "{n}");
        }
        for n in [u128::from(u64::MAX), u128::from(u64::MAX) + 1, 1 << 100, (1 << 100) - 1, u128::MAX >> 2, u128::MAX] {
            let r = isqrt(n);
            assert!(r * r <= n && (r + 1).checked_mul(r + 1).is_none_or(|s| s > n), "{n}");
        }
    }
}
