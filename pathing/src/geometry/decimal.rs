//! Decimal text to fixed point, without a float anywhere: the numbers of the JSON config files
//! (polygon areas, passability classes) and of the command line.
//!
//! A decimal such as `0.45` is not a multiple of 2^-16, so it is rounded to the nearest [`Fixed`]
//! (ties to even), which is what `fixed`'s own parser does; the result is the same on every
//! machine. JSON numbers reach us as their original text because `serde_json` is built with
//! `arbitrary_precision`.

use crate::geometry::Fixed;
use serde::{Deserialize, Deserializer};

/// Largest absolute value accepted for any world coordinate or length read from text. Keeping every
/// geometric input inside ±2^14 m is what lets the exact predicates (squared distances of
/// cross products) stay inside `i128`. `[Units: metres]`
pub const WORLD_LIMIT: Fixed = Fixed::const_from_int(1 << 14);

/// Parses a decimal number (`-12`, `0.45`, `1e3` is not accepted) into the nearest [`Fixed`].
///
/// # Errors
/// A message saying what was expected when the text is not a plain decimal or its magnitude is
/// above [`WORLD_LIMIT`].
pub fn parse_fixed(text: &str) -> Result<Fixed, String> {
    let body = text.strip_prefix('-').unwrap_or(text);
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let digits_ok = !int.is_empty() && int.bytes().all(|b| b.is_ascii_digit()) && frac.bytes().all(|b| b.is_ascii_digit());
    if !digits_ok || (body.contains('.') && frac.is_empty()) {
        return Err(format!("expected a decimal number such as 12 or -0.45, found {text:?}"));
    }
    // Reject huge integer parts before `fixed` sees them, so the error names the limit.
    let int_trimmed = int.trim_start_matches('0');
    if int_trimmed.len() > 6 {
        return Err(format!("expected a number within ±{WORLD_LIMIT}, found {text}"));
    }
    // Exact rounding here rather than `fixed`'s parser, which rounds some long decimals twice:
    // "0.6809005" is 44623.495… raw units but parsed as 44624 (found by the `fixed_math` fuzz
    // target). The fraction times 2^16 by schoolbook multiplication of its digits: the carry out of
    // the top digit is the whole part, the digits left over are the remainder.
    let mut rest: Vec<u8> = frac.bytes().map(|b| b - b'0').collect();
    let mut carry = 0u32;
    for digit in rest.iter_mut().rev() {
        let v = u32::from(*digit) * 65_536 + carry;
        *digit = (v % 10) as u8;
        carry = v / 10;
    }
    // Rounding: up above one half, to even at exactly one half.
    let above_half = match rest.split_first() {
        None => false,
        Some((&first, tail)) => first > 5 || (first == 5 && (tail.iter().any(|&d| d != 0) || carry % 2 == 1)),
    };
    let whole: i64 =
        if int_trimmed.is_empty() { 0 } else { int_trimmed.parse().map_err(|_| format!("expected a decimal number, found {text:?}"))? };
    let magnitude = (whole << 16) + i64::from(carry) + i64::from(above_half);
    let value = Fixed::from_bits(if text.starts_with('-') { -magnitude } else { magnitude });
    if value.abs() > WORLD_LIMIT {
        return Err(format!("expected a number within ±{WORLD_LIMIT}, found {text}"));
    }
    Ok(value)
}

/// A JSON number read as a [`Fixed`] (see [`parse_fixed`]). Use it as a field type, or through
/// [`deserialize_fixed`] with `#[serde(deserialize_with = ...)]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonFixed(pub Fixed);

impl<'de> Deserialize<'de> for JsonFixed {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let number = serde_json::Number::deserialize(deserializer)?;
        parse_fixed(&number.to_string()).map(JsonFixed).map_err(serde::de::Error::custom)
    }
}

/// `deserialize_with` helper: a JSON number as a [`Fixed`].
///
/// # Errors
/// As [`parse_fixed`], reported through the deserializer (so with its line and column).
pub fn deserialize_fixed<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Fixed, D::Error> {
    JsonFixed::deserialize(deserializer).map(|v| v.0)
}

/// `deserialize_with` helper: an optional JSON number as a [`Fixed`].
///
/// # Errors
/// As [`parse_fixed`].
pub fn deserialize_opt_fixed<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Fixed>, D::Error> {
    Option::<JsonFixed>::deserialize(deserializer).map(|v| v.map(|v| v.0))
}

/// `deserialize_with` helper for a key that may be left out but, when present, holds a number
/// (`null` is refused): leaving the key out is how a file says "none". Use it with
/// `#[serde(default)]`.
///
/// # Errors
/// As [`parse_fixed`].
pub fn deserialize_some_fixed<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Fixed>, D::Error> {
    JsonFixed::deserialize(deserializer).map(|v| Some(v.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_round_to_the_nearest_fixed() {
        assert_eq!(parse_fixed("12").unwrap(), Fixed::from_num(12));
        assert_eq!(parse_fixed("-0.5").unwrap(), Fixed::from_num(-1) / 2);
        // 0.45 * 65536 = 29491.2 -> 29491.
        assert_eq!(parse_fixed("0.45").unwrap().to_bits(), 29491);
        // 0.4 * 65536 = 26214.4 -> 26214.
        assert_eq!(parse_fixed("0.4").unwrap().to_bits(), 26214);
        assert_eq!(parse_fixed("16384").unwrap(), WORLD_LIMIT);
        // 0.6809005 * 65536 = 44623.495168: `fixed`'s parser gave 44624 (two roundings).
        assert_eq!(parse_fixed("0.6809005").unwrap().to_bits(), 44623);
        // 2^-17 exactly is a tie, to even (0); 3 * 2^-17 is a tie, to even (2).
        assert_eq!(parse_fixed("0.00000762939453125").unwrap().to_bits(), 0);
        assert_eq!(parse_fixed("0.00002288818359375").unwrap().to_bits(), 2);
        assert_eq!(parse_fixed("-0.00002288818359376").unwrap().to_bits(), -2);
    }

    #[test]
    fn bad_text_names_what_was_expected() {
        for bad in ["", "-", "1.", ".5", "1e3", "nan", "0x10", "1,5", "16384.1", "99999999999999999999"] {
            let err = parse_fixed(bad).unwrap_err();
            assert!(err.starts_with("expected"), "{bad}: {err}");
        }
    }

    #[test]
    fn json_numbers_keep_their_text() {
        #[derive(Deserialize)]
        struct T {
            #[serde(deserialize_with = "deserialize_fixed")]
            a: Fixed,
            b: Vec<JsonFixed>,
        }
        let t: T = serde_json::from_str(r#"{"a": 0.45, "b": [-5.0, 3]}"#).unwrap();
        assert_eq!(t.a.to_bits(), 29491);
        assert_eq!(t.b, vec![JsonFixed(Fixed::from_num(-5)), JsonFixed(Fixed::from_num(3))]);
        let err = serde_json::from_str::<T>("{\"a\": 1e3, \"b\": []}").err().unwrap();
        assert_eq!(err.line(), 1);
        assert!(err.to_string().contains("expected a decimal"), "{err}");
    }
}
