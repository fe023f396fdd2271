//! The `fixed_math` target: the fixed-point helpers against wide-integer references.
//!
//! The first byte picks a check; the rest are its inputs.
//!
//! - Integer trigonometry in degrees and radians ([`pathing::trig`]) against a Taylor series in
//!   `i128` with 60 fractional bits over a plain reduction to `(−π, π]` (no octant folding, so an
//!   independent route): the documented error bound (`2^-17 + 2^-50`, plus `|θ|·2^-80` in radians),
//!   the length bound `|c² + s² − 1| ≤ 3·2^-17`, exact quarter turns and the exact symmetries
//!   `f(θ + 90°) = perp f(θ)`, `f(θ + 360°) = f(θ)`, `f(−θ) = (c, −s)`, `f(90° − θ) = (s, c)`.
//! - Octile costs ([`pathing::cost`]): `octile` and `StepCounts` against `i128` sums, and the claim
//!   of the module documentation that costs order paths exactly like their true lengths
//!   `a + b√2` while the diagonal counts differ by fewer than about 179 000 (checked at the nearest
//!   competitors, `Δa ≈ −Δb·√2`, against an exact comparison of `Δa + Δb√2` with zero).
//! - Decimal text to fixed point ([`pathing::decimal::parse_fixed`]) against exact long
//!   multiplication of the decimal digits by 2^16, rounded half to even, with the same syntax and
//!   range rules.

use pathing::cost::{DIAGONAL, STRAIGHT, StepCounts, octile};
use pathing::decimal::{WORLD_LIMIT, parse_fixed};
use pathing::trig::{unit_vector_degrees, unit_vector_radians};
use pathing::{Fixed, Vec2};

use crate::bytes::Bytes;

/// Fractional bits of the reference trigonometry.
const REF_BITS: u32 = 60;

/// `π · 2^60`, rounded to nearest.
const PI_Q60: i128 = 3_622_009_729_038_561_421;

/// `2π · 2^80`, rounded to nearest.
const TWO_PI_Q80: u128 = 7_595_904_947_272_677_161_575_987;

/// `π · 2^80`, rounded to nearest.
const PI_Q80: u128 = 3_797_952_473_636_338_580_787_994;

/// A quarter turn in raw degrees.
const QUARTER: i64 = 90 << 16;

/// `(cos x, sin x)` with 60 fractional bits for `|x| ≤ π` (60 fractional bits), by their Taylor
/// series; each term is rounded once, so the error is a few dozen units of 2^-60 at most.
fn cos_sin_reference(x: i128) -> (i128, i128) {
    let one = 1i128 << REF_BITS;
    let (mut cos, mut sin, mut term) = (0i128, 0i128, one);
    for k in 0..64i128 {
        match k % 4 {
            0 => cos += term,
            1 => sin += term,
            2 => cos -= term,
            _ => sin -= term,
        }
        // |term| < 2^63 and |x| < 2^62: the product fits.
        term = ((term * x + (1 << (REF_BITS - 1))) >> REF_BITS) / (k + 1);
        if term == 0 {
            break;
        }
    }
    (cos, sin)
}

/// Raw degrees reduced to `(−180°, 180°]` and converted to radians with 60 fractional bits.
fn degrees_to_reference(degrees: i64) -> i128 {
    let full = 360i128 << 16;
    let mut r = i128::from(degrees).rem_euclid(full);
    if r > full / 2 {
        r -= full;
    }
    let den = 180i128 << 16;
    (r * PI_Q60 + den / 2).div_euclid(den)
}

/// Raw radians (16 fractional bits) reduced to `(−π, π]` with 60 fractional bits. The reduction
/// uses 2π to 2^-81, which adds at most `|θ|·2^-83` to the error.
fn radians_to_reference(radians: i64) -> i128 {
    let scaled = u128::from(radians.unsigned_abs()) << 64; // |θ| · 2^80 < 2^127
    let mut r = scaled % TWO_PI_Q80;
    if radians < 0 && r != 0 {
        r = TWO_PI_Q80 - r;
    }
    let signed = if r > PI_Q80 { -((TWO_PI_Q80 - r) as i128) } else { r as i128 };
    (signed + (1 << 19)) >> 20
}

fn raw_pair(v: Vec2) -> (i64, i64) {
    (v.x.to_bits(), v.z.to_bits())
}

/// Checks one result against the reference within `2^-17 + 2^-50 + extra` (60 fractional bits).
fn check_bound(what: &str, input: i64, got: Vec2, reference: i128, extra: i128) {
    let (c_ref, s_ref) = cos_sin_reference(reference);
    // 2^-17 + 2^-50 of the bound, and 2^-52 for the reference's own error.
    let tolerance = (1i128 << 43) + (1 << 10) + (1 << 8) + extra;
    let (c, s) = raw_pair(got);
    let (dc, ds) = ((i128::from(c) << 44) - c_ref, (i128::from(s) << 44) - s_ref);
    assert!(dc.abs() <= tolerance, "{what}({input} raw): cos {c} raw is {dc} units of 2^-60 from the reference {c_ref}");
    assert!(ds.abs() <= tolerance, "{what}({input} raw): sin {s} raw is {ds} units of 2^-60 from the reference {s_ref}");
    let length = i128::from(c) * i128::from(c) + i128::from(s) * i128::from(s) - (1i128 << 32);
    assert!(length.abs() <= 3 << 15, "{what}({input} raw): c² + s² − 1 = {length} · 2^-32");
}

fn trig_degrees(b: &mut Bytes) {
    let d = match b.below(4) {
        0 => i64::from(b.u32() as i32),
        // Near a multiple of 45°, where folding and rounding meet.
        1 => i64::from(b.u8() as i8) * (45 << 16) + i64::from(b.u8() as i8),
        2 => b.pick(&[i64::MIN, i64::MAX, i64::MIN + 1, -1, 0, 1]),
        _ => b.i64(),
    };
    let f = unit_vector_degrees(Fixed::from_bits(d));
    check_bound("unit_vector_degrees", d, f, degrees_to_reference(d), 0);
    let (c, s) = raw_pair(f);
    if d % QUARTER == 0 {
        let exact = [(1 << 16, 0), (0, 1 << 16), (-(1 << 16), 0), (0, -(1 << 16))]
            [(i128::from(d).rem_euclid(4 * i128::from(QUARTER)) / i128::from(QUARTER)) as usize];
        assert_eq!((c, s), exact, "unit_vector_degrees({d} raw) is not exact at a quarter turn");
    }
    if let Some(next) = d.checked_add(QUARTER) {
        assert_eq!(raw_pair(unit_vector_degrees(Fixed::from_bits(next))), (-s, c), "f(θ + 90°) ≠ perp f(θ) at {d} raw");
    }
    if let Some(next) = d.checked_add(4 * QUARTER) {
        assert_eq!(raw_pair(unit_vector_degrees(Fixed::from_bits(next))), (c, s), "f(θ + 360°) ≠ f(θ) at {d} raw");
    }
    if let Some(negated) = d.checked_neg() {
        assert_eq!(raw_pair(unit_vector_degrees(Fixed::from_bits(negated))), (c, -s), "f(−θ) ≠ (c, −s) at {d} raw");
    }
    if let Some(complement) = QUARTER.checked_sub(d) {
        assert_eq!(raw_pair(unit_vector_degrees(Fixed::from_bits(complement))), (s, c), "f(90° − θ) ≠ (s, c) at {d} raw");
    }
}

fn trig_radians(b: &mut Bytes) {
    let r = match b.below(4) {
        0 => i64::from(b.u32() as i32),
        // Near a multiple of π/4 (π/4 is 51472 raw, rounded).
        1 => i64::from(b.u8() as i8) * 51_472 + i64::from(b.u8() as i8),
        2 => b.pick(&[i64::MIN, i64::MAX, i64::MIN + 1, -1, 0, 1]),
        _ => b.i64(),
    };
    let f = unit_vector_radians(Fixed::from_bits(r));
    // |θ| · 2^-80 from the implementation's reduction and |θ| · 2^-83 from the reference's, in
    // units of 2^-60: below |raw| · 2^-35.
    let extra = i128::from(r.unsigned_abs() >> 35) + 1;
    check_bound("unit_vector_radians", r, f, radians_to_reference(r), extra);
    if let Some(negated) = r.checked_neg() {
        let (c, s) = raw_pair(f);
        assert_eq!(raw_pair(unit_vector_radians(Fixed::from_bits(negated))), (c, -s), "f(−θ) ≠ (c, −s) at {r} raw");
    }
}

/// `⌊√n⌋`.
fn isqrt(n: u128) -> u128 {
    if n < 2 {
        return n;
    }
    let mut x = 1u128 << (128 - n.leading_zeros()).div_ceil(2);
    loop {
        let y = (x + n / x) / 2;
        if y >= x {
            return x;
        }
        x = y;
    }
}

/// The sign of `da + db·√2`, exactly.
fn sign_of_a_plus_b_root2(da: i128, db: i128) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (da.cmp(&0), db.cmp(&0)) {
        (Ordering::Equal, s) | (s, Ordering::Equal) => s,
        (a, b) if a == b => a,
        // Opposite signs: the larger magnitude wins; da² = 2·db² is impossible (√2 is irrational).
        (a, _) => {
            if da * da > 2 * db * db {
                a
            } else {
                a.reverse()
            }
        }
    }
}

fn costs(b: &mut Bytes) {
    let (dx, dy) = (u64::from(b.u32()), u64::from(b.u32()));
    let (lo, hi) = (i128::from(dx.min(dy)), i128::from(dx.max(dy)));
    assert_eq!(i128::from(octile(dx, dy)), lo * i128::from(DIAGONAL) + (hi - lo) * i128::from(STRAIGHT), "octile({dx}, {dy})");
    assert_eq!(octile(dx, dy), octile(dy, dx), "octile is symmetric");

    let mut steps = StepCounts::default();
    let (mut straight, mut diagonal) = (0i128, 0i128);
    for _ in 0..b.below(16) {
        let (sx, sy) = (u64::from(b.u16()), u64::from(b.u16()));
        steps.add_segment(sx, sy);
        diagonal += i128::from(sx.min(sy));
        straight += i128::from(sx.max(sy) - sx.min(sy));
    }
    assert_eq!((i128::from(steps.straight), i128::from(steps.diagonal)), (straight, diagonal), "step counts");
    assert_eq!(i128::from(steps.cost()), straight * i128::from(STRAIGHT) + diagonal * i128::from(DIAGONAL), "cost of {steps:?}");

    // Two paths whose true lengths differ by as little as it gets for their diagonal counts.
    let db = i128::from(b.u32() % 170_001) * if b.bool() { 1 } else { -1 };
    let nearest = isqrt(2 * (db * db) as u128) as i128; // ⌊|db|·√2⌋
    let da = -db.signum() * (nearest + i128::from(b.u8() % 4)) + i128::from(b.u8() % 3) - 1;
    let base_a = i128::from(b.u32()) + da.abs();
    let base_b = i128::from(b.u32()) + db.abs();
    let one = StepCounts { straight: base_a as u64, diagonal: base_b as u64 };
    let two = StepCounts { straight: (base_a + da) as u64, diagonal: (base_b + db) as u64 };
    assert_eq!(
        two.cost().cmp(&one.cost()),
        sign_of_a_plus_b_root2(da, db),
        "costs of {two:?} and {one:?} do not order them like their lengths"
    );
}

/// The decimal `digits` (a fraction `0.digits`) times 2^16: the whole part, and how the remainder
/// compares with one half (`Less`, `Equal`, `Greater`), by schoolbook multiplication.
fn fraction_times_65536(digits: &[u8]) -> (i128, std::cmp::Ordering) {
    let mut out = vec![0u8; digits.len()];
    let mut carry = 0u64;
    for (k, &d) in digits.iter().enumerate().rev() {
        let v = u64::from(d - b'0') * 65_536 + carry;
        out[k] = (v % 10) as u8;
        carry = v / 10;
    }
    let half = match out.first() {
        None => std::cmp::Ordering::Less,
        Some(&first) => first
            .cmp(&5)
            .then_with(|| if out[1..].iter().any(|&d| d != 0) { std::cmp::Ordering::Greater } else { std::cmp::Ordering::Equal }),
    };
    // A remainder of exactly zero compares as `Less` through the first digit being 0.
    (i128::from(carry), half)
}

/// The reference `parse_fixed`: raw bits, or `None` for an error.
fn parse_reference(text: &str) -> Option<i64> {
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (int, frac) = match body.split_once('.') {
        Some((int, frac)) if !frac.is_empty() => (int, frac),
        Some(_) => return None,
        None => (body, ""),
    };
    if int.is_empty() || !int.bytes().all(|c| c.is_ascii_digit()) || !frac.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let int = int.trim_start_matches('0');
    if int.len() > 6 {
        return None;
    }
    let whole: i128 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let (frac_part, half) = fraction_times_65536(frac.as_bytes());
    let mut magnitude = (whole << 16) + frac_part;
    if half == std::cmp::Ordering::Greater || (half == std::cmp::Ordering::Equal && magnitude % 2 == 1) {
        magnitude += 1;
    }
    if magnitude > i128::from(WORLD_LIMIT.to_bits()) {
        return None;
    }
    Some(if negative { -magnitude } else { magnitude } as i64)
}

fn decimal(b: &mut Bytes, rest: &[u8]) {
    // Mostly text over the decimal alphabet (so that most inputs are numbers), else the raw bytes.
    let text: String = if b.u8() < 200 {
        rest.iter().map(|&c| char::from(b"0123456789-.00000555"[usize::from(c) % 20])).collect()
    } else {
        match std::str::from_utf8(rest) {
            Ok(t) => t.to_owned(),
            Err(_) => return,
        }
    };
    let got = parse_fixed(&text).ok().map(Fixed::to_bits);
    assert_eq!(got, parse_reference(&text), "parse_fixed({text:?})");
}

/// The body: see the module documentation.
pub fn fixed_math(data: &[u8]) {
    let mut b = Bytes::new(data);
    match b.below(4) {
        0 => trig_degrees(&mut b),
        1 => trig_radians(&mut b),
        2 => costs(&mut b),
        _ => {
            let rest = data.get(2..).unwrap_or_default();
            decimal(&mut b, rest);
        }
    }
}
