//! A serde serializer that writes exactly bincode 2's bytes (for every value without floats), for the two configurations of
//! hashed state ([`super::CONFIG`] and [`super::COMPACT`]), straight into a byte sink.
//!
//! bincode's own serde path writes each field through its `Writer` and `std::io::Write` with an
//! error check per write, about 700 instructions for a game unit of two dozen bytes; this one
//! appends to a `Vec` and costs a fraction of that (BENCHMARKS.md, "Bot game"). It is an
//! optimisation only: the bytes are bincode's, so the format stays bincode's and snapshots written
//! by either decode with bincode. The rules it follows, restated from bincode's specification:
//! - `u8`, `i8` and `bool` are one byte; `char` is its UTF-8 bytes.
//! - Fixed-width form: every other integer is little-endian at its own width, `usize` as `u64`.
//! - Variable form: an unsigned value below 251 is one byte; otherwise a marker (251, 252, 253 or
//!   254) and the value as a little-endian `u16`, `u32`, `u64` or `u128`, the smallest that
//!   holds it; a signed value is zigzagged first (`n ≥ 0` → `2n`, `n < 0` → `2(−n) − 1`).
//! - Lengths of sequences, maps, strings and byte strings are `u64` integers; enum variant
//!   indices are `u32` integers; `None` is 0 and `Some(v)` is 1 then `v`; structs, tuples and
//!   newtypes are their fields in order with no framing.
//! - A sequence or map of unknown length cannot be encoded (bincode refuses it too), and neither
//!   can a float (bincode would write its bits; state has no floats, docs/determinism.md).
//!
//! `tests::bytes_equal_bincode_for_every_serde_shape` checks the rules against bincode itself.

use serde::ser::{self, Serialize};

/// Where encoded bytes go.
pub(super) trait Sink {
    /// Appends bytes.
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

impl Sink for &mut Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// A sink that feeds a hasher through a buffer, so a large value needs no buffer of its size and
/// the hasher sees few large updates instead of one per field.
pub(super) struct HashSink<'h> {
    buffer: Vec<u8>,
    hasher: &'h mut blake3::Hasher,
}

impl<'h> HashSink<'h> {
    /// The buffer is flushed when it holds this many bytes.
    const FLUSH_AT: usize = 16 * 1024;

    pub(super) fn new(hasher: &'h mut blake3::Hasher) -> Self {
        Self { buffer: Vec::with_capacity(Self::FLUSH_AT + 64), hasher }
    }

    /// Hashes what is left in the buffer.
    pub(super) fn finish(mut self) {
        self.hasher.update(&self.buffer);
        self.buffer.clear();
    }
}

impl Sink for HashSink<'_> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
        if self.buffer.len() >= Self::FLUSH_AT {
            self.hasher.update(&self.buffer);
            self.buffer.clear();
        }
    }
}

/// Why a value could not be encoded: a float, a sequence or map of unknown length, or a custom
/// error a `Serialize` implementation raised.
#[derive(Debug)]
pub struct EncodeError(String);

impl std::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl EncodeError {
    fn floats() -> Self {
        Self("a float cannot be part of hashed or saved state (docs/determinism.md)".into())
    }
}

impl std::error::Error for EncodeError {}

impl ser::Error for EncodeError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Self(msg.to_string())
    }
}

/// The serializer: `VARINT` selects [`super::COMPACT`]'s integers, otherwise [`super::CONFIG`]'s.
pub(super) struct Encoder<S, const VARINT: bool> {
    pub(super) sink: S,
}

/// Encodes `value` into `sink` in the chosen form.
pub(super) fn encode_to<T: Serialize + ?Sized, S: Sink, const VARINT: bool>(value: &T, sink: S) -> Result<S, EncodeError> {
    let mut encoder = Encoder::<S, VARINT> { sink };
    value.serialize(&mut encoder)?;
    Ok(encoder.sink)
}

impl<S: Sink, const VARINT: bool> Encoder<S, VARINT> {
    /// An unsigned integer of a type `width` bytes wide.
    #[inline]
    fn unsigned(&mut self, value: u64, width: usize) {
        if VARINT {
            self.varint(value);
        } else {
            self.sink.put(&value.to_le_bytes()[..width]);
        }
    }

    #[inline]
    fn varint(&mut self, value: u64) {
        if value <= 250 {
            self.sink.put(&[value as u8]);
        } else if let Ok(v) = u16::try_from(value) {
            let [a, b] = v.to_le_bytes();
            self.sink.put(&[251, a, b]);
        } else if let Ok(v) = u32::try_from(value) {
            let [a, b, c, d] = v.to_le_bytes();
            self.sink.put(&[252, a, b, c, d]);
        } else {
            let mut bytes = [253; 9];
            bytes[1..].copy_from_slice(&value.to_le_bytes());
            self.sink.put(&bytes);
        }
    }

    /// A signed integer of a type `width` bytes wide (`value` sign-extended).
    #[inline]
    fn signed(&mut self, value: i64, width: usize) {
        if VARINT {
            self.varint(zigzag(value));
        } else {
            self.sink.put(&value.to_le_bytes()[..width]);
        }
    }

    /// A length (a `u64` in either form).
    #[inline]
    fn length(&mut self, len: usize) {
        self.unsigned(len as u64, 8);
    }

    /// An enum variant index (a `u32` in either form).
    #[inline]
    fn variant(&mut self, index: u32) {
        self.unsigned(u64::from(index), 4);
    }
}

/// `n ≥ 0` → `2n`, `n < 0` → `2(−n) − 1`, as bincode maps signed integers to unsigned ones.
#[inline]
fn zigzag(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

fn zigzag128(n: i128) -> u128 {
    ((n << 1) ^ (n >> 127)) as u128
}

impl<S: Sink, const VARINT: bool> ser::Serializer for &mut Encoder<S, VARINT> {
    type Ok = ();
    type Error = EncodeError;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    #[inline]
    fn serialize_bool(self, v: bool) -> Result<(), EncodeError> {
        self.sink.put(&[u8::from(v)]);
        Ok(())
    }
    #[inline]
    fn serialize_i8(self, v: i8) -> Result<(), EncodeError> {
        self.sink.put(&v.to_le_bytes());
        Ok(())
    }
    #[inline]
    fn serialize_i16(self, v: i16) -> Result<(), EncodeError> {
        self.signed(i64::from(v), 2);
        Ok(())
    }
    #[inline]
    fn serialize_i32(self, v: i32) -> Result<(), EncodeError> {
        self.signed(i64::from(v), 4);
        Ok(())
    }
    #[inline]
    fn serialize_i64(self, v: i64) -> Result<(), EncodeError> {
        self.signed(v, 8);
        Ok(())
    }
    #[inline]
    fn serialize_i128(self, v: i128) -> Result<(), EncodeError> {
        if VARINT {
            self.serialize_u128(zigzag128(v))
        } else {
            self.sink.put(&v.to_le_bytes());
            Ok(())
        }
    }
    #[inline]
    fn serialize_u8(self, v: u8) -> Result<(), EncodeError> {
        self.sink.put(&[v]);
        Ok(())
    }
    #[inline]
    fn serialize_u16(self, v: u16) -> Result<(), EncodeError> {
        self.unsigned(u64::from(v), 2);
        Ok(())
    }
    #[inline]
    fn serialize_u32(self, v: u32) -> Result<(), EncodeError> {
        self.unsigned(u64::from(v), 4);
        Ok(())
    }
    #[inline]
    fn serialize_u64(self, v: u64) -> Result<(), EncodeError> {
        self.unsigned(v, 8);
        Ok(())
    }
    #[inline]
    fn serialize_u128(self, v: u128) -> Result<(), EncodeError> {
        match u64::try_from(v) {
            Ok(small) if VARINT => self.varint(small),
            Err(_) if VARINT => {
                self.sink.put(&[254]);
                self.sink.put(&v.to_le_bytes());
            }
            _ => self.sink.put(&v.to_le_bytes()),
        }
        Ok(())
    }
    // Floats have no place in hashed state (docs/determinism.md): a type that has one is refused
    // instead of hashed, where bincode would write its bits.
    #[inline]
    #[allow(clippy::disallowed_types, reason = "the serde trait names the float types; they are refused")]
    fn serialize_f32(self, _v: f32) -> Result<(), EncodeError> {
        Err(EncodeError::floats())
    }
    #[inline]
    #[allow(clippy::disallowed_types, reason = "the serde trait names the float types; they are refused")]
    fn serialize_f64(self, _v: f64) -> Result<(), EncodeError> {
        Err(EncodeError::floats())
    }
    #[inline]
    fn serialize_char(self, v: char) -> Result<(), EncodeError> {
        self.sink.put(v.encode_utf8(&mut [0; 4]).as_bytes());
        Ok(())
    }
    #[inline]
    fn serialize_str(self, v: &str) -> Result<(), EncodeError> {
        self.serialize_bytes(v.as_bytes())
    }
    #[inline]
    fn serialize_bytes(self, v: &[u8]) -> Result<(), EncodeError> {
        self.length(v.len());
        self.sink.put(v);
        Ok(())
    }
    #[inline]
    fn serialize_none(self) -> Result<(), EncodeError> {
        self.sink.put(&[0]);
        Ok(())
    }
    #[inline]
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), EncodeError> {
        self.sink.put(&[1]);
        value.serialize(self)
    }
    #[inline]
    fn serialize_unit(self) -> Result<(), EncodeError> {
        Ok(())
    }
    #[inline]
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), EncodeError> {
        Ok(())
    }
    #[inline]
    fn serialize_unit_variant(self, _name: &'static str, index: u32, _variant: &'static str) -> Result<(), EncodeError> {
        self.variant(index);
        Ok(())
    }
    #[inline]
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<(), EncodeError> {
        value.serialize(self)
    }
    #[inline]
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        index: u32,
        _variant: &'static str,
        value: &T,
    ) -> Result<(), EncodeError> {
        self.variant(index);
        value.serialize(self)
    }
    #[inline]
    fn serialize_seq(self, len: Option<usize>) -> Result<Self, EncodeError> {
        let len = len.ok_or_else(|| EncodeError("a sequence of unknown length cannot be encoded".into()))?;
        self.length(len);
        Ok(self)
    }
    #[inline]
    fn serialize_tuple(self, _len: usize) -> Result<Self, EncodeError> {
        Ok(self)
    }
    #[inline]
    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Self, EncodeError> {
        Ok(self)
    }
    #[inline]
    fn serialize_tuple_variant(self, _name: &'static str, index: u32, _variant: &'static str, _len: usize) -> Result<Self, EncodeError> {
        self.variant(index);
        Ok(self)
    }
    #[inline]
    fn serialize_map(self, len: Option<usize>) -> Result<Self, EncodeError> {
        let len = len.ok_or_else(|| EncodeError("a map of unknown length cannot be encoded".into()))?;
        self.length(len);
        Ok(self)
    }
    #[inline]
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self, EncodeError> {
        Ok(self)
    }
    #[inline]
    fn serialize_struct_variant(self, _name: &'static str, index: u32, _variant: &'static str, _len: usize) -> Result<Self, EncodeError> {
        self.variant(index);
        Ok(self)
    }
    #[inline]
    fn is_human_readable(&self) -> bool {
        false
    }
}

/// One body for the compound serializers: each element, key, value or field in order.
macro_rules! compound {
    ($($trait:ident :: $method:ident $(($key:ident))?),* $(,)?) => {$(
        impl<S: Sink, const VARINT: bool> ser::$trait for &mut Encoder<S, VARINT> {
            type Ok = ();
            type Error = EncodeError;
            #[inline]
            fn $method<T: Serialize + ?Sized>(&mut self, $($key: &'static str,)? value: &T) -> Result<(), EncodeError> {
                $(let _ = $key;)?
                value.serialize(&mut **self)
            }
            #[inline]
            fn end(self) -> Result<(), EncodeError> {
                Ok(())
            }
        }
    )*};
}

compound!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field,
    SerializeStruct::serialize_field(key),
    SerializeStructVariant::serialize_field(key),
);

impl<S: Sink, const VARINT: bool> ser::SerializeMap for &mut Encoder<S, VARINT> {
    type Ok = ();
    type Error = EncodeError;
    #[inline]
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), EncodeError> {
        key.serialize(&mut **self)
    }
    #[inline]
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), EncodeError> {
        value.serialize(&mut **self)
    }
    #[inline]
    fn end(self) -> Result<(), EncodeError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde::Serialize;
    use std::collections::BTreeMap;

    /// Every serde shape the state types use, and the ones they do not.
    #[derive(Debug, Clone, Serialize)]
    enum Shape {
        Unit,
        Newtype(i16),
        Tuple(u8, i8, bool),
        Struct { a: u128, b: i128, c: Option<u64> },
    }

    #[derive(Debug, Clone, Serialize)]
    struct Whole {
        ints: (u16, u32, u64, i32, i64, usize),
        pair: (u32, u64),
        text: String,
        letter: char,
        #[serde(with = "serde_bytes_like")]
        raw: Vec<u8>,
        shapes: Vec<Shape>,
        map: BTreeMap<u32, Option<i64>>,
        nothing: (),
        fixed: pathing::Fixed,
    }

    /// Serializes a byte vector through `serialize_bytes` (as `serde_bytes` would).
    mod serde_bytes_like {
        pub fn serialize<S: serde::Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(v)
        }
    }

    fn shape() -> impl Strategy<Value = Shape> {
        prop_oneof![
            Just(Shape::Unit),
            any::<i16>().prop_map(Shape::Newtype),
            (any::<u8>(), any::<i8>(), any::<bool>()).prop_map(|(a, b, c)| Shape::Tuple(a, b, c)),
            (any::<u128>(), any::<i128>(), any::<Option<u64>>()).prop_map(|(a, b, c)| Shape::Struct { a, b, c }),
        ]
    }

    /// Integers near every varint boundary, and any.
    fn edgy_u64() -> impl Strategy<Value = u64> {
        prop_oneof![0u64..=260, 65_530u64..=65_540, 4_294_967_290u64..=4_294_967_300, any::<u64>()]
    }

    fn whole() -> impl Strategy<Value = Whole> {
        (
            (any::<u16>(), any::<u32>(), edgy_u64(), any::<i32>(), any::<i64>(), edgy_u64()),
            (any::<u32>(), any::<u64>()),
            ".{0,12}",
            any::<char>(),
            proptest::collection::vec(any::<u8>(), 0..300),
            proptest::collection::vec(shape(), 0..6),
            proptest::collection::btree_map(any::<u32>(), any::<Option<i64>>(), 0..5),
            any::<i64>(),
        )
            .prop_map(|(ints, pair, text, letter, raw, shapes, map, bits)| Whole {
                ints: (ints.0, ints.1, ints.2, ints.3, ints.4, ints.5 as usize),
                pair,
                text,
                letter,
                raw,
                shapes,
                map,
                nothing: (),
                fixed: pathing::Fixed::from_bits(bits),
            })
    }

    proptest! {
        #[test]
        fn bytes_equal_bincode_for_every_serde_shape(value in whole(), small in edgy_u64(), signed in any::<i64>()) {
            let fixint = encode_to::<_, _, false>(&value, Vec::new()).unwrap();
            prop_assert_eq!(fixint, bincode::serde::encode_to_vec(&value, crate::state_hash::CONFIG).unwrap());
            let varint = encode_to::<_, _, true>(&value, Vec::new()).unwrap();
            prop_assert_eq!(varint, bincode::serde::encode_to_vec(&value, crate::state_hash::COMPACT).unwrap());
            for n in [small as i64, signed, -(small as i64)] {
                let ours = encode_to::<_, _, true>(&(n, n as i16, n as u16, n as i32), Vec::new()).unwrap();
                let theirs = bincode::serde::encode_to_vec((n, n as i16, n as u16, n as i32), crate::state_hash::COMPACT).unwrap();
                prop_assert_eq!(ours, theirs);
            }
        }
    }

    #[test]
    fn integers_at_every_varint_boundary_encode_as_bincode_encodes_them() {
        let mut edges = Vec::new();
        for edge in [250u64, 251, 65_535, 65_536, u64::from(u32::MAX), u64::from(u32::MAX) + 1, u64::MAX] {
            edges.extend([edge - 1, edge, edge.saturating_add(1)]);
        }
        edges.push(0);
        for &n in &edges {
            let values = (n, n as u32, n as u16, n as i64, n as i32, n as i16, (n as i64).wrapping_neg(), u128::from(n) << 60);
            for (ours, config) in [
                (encode_to::<_, _, true>(&values, Vec::new()).unwrap(), None),
                (encode_to::<_, _, false>(&values, Vec::new()).unwrap(), Some(crate::state_hash::CONFIG)),
            ] {
                let theirs = match config {
                    Some(c) => bincode::serde::encode_to_vec(values, c).unwrap(),
                    None => bincode::serde::encode_to_vec(values, crate::state_hash::COMPACT).unwrap(),
                };
                assert_eq!(ours, theirs, "{values:?}");
            }
        }
    }

    #[test]
    fn the_hash_sink_hashes_the_bytes_of_a_value_longer_than_its_buffer() {
        let value: Vec<u64> = (0..10_000).collect();
        let mut hasher = blake3::Hasher::new();
        let sink = encode_to::<_, _, false>(&value, HashSink::new(&mut hasher)).unwrap();
        sink.finish();
        assert_eq!(hasher.finalize(), blake3::hash(&bincode::serde::encode_to_vec(&value, crate::state_hash::CONFIG).unwrap()));
    }

    #[test]
    #[allow(clippy::disallowed_types, reason = "the test shows floats are refused")]
    fn floats_are_refused() {
        let err = encode_to::<_, _, false>(&(1u8, 0.5f64), Vec::new()).unwrap_err();
        assert!(err.to_string().contains("float"), "{err}");
        assert!(encode_to::<_, _, true>(&Some(1.5f32), Vec::new()).is_err());
    }

    #[test]
    fn a_sequence_of_unknown_length_is_refused() {
        struct Unsized;
        impl Serialize for Unsized {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeSeq;
                let seq = s.serialize_seq(None)?;
                seq.end()
            }
        }
        let err = encode_to::<_, _, true>(&Unsized, Vec::new()).unwrap_err();
        assert!(err.to_string().contains("unknown length"), "{err}");
        assert!(bincode::serde::encode_to_vec(&Unsized, crate::state_hash::COMPACT).is_err(), "bincode refuses it too");
    }
}
