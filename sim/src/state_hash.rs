//! The canonical encoding of simulation state and the blake3 digests built on it.
//!
//! State is encoded in bincode 2's fixed-width little-endian form ([`CONFIG`]), so the bytes, and
//! therefore the hashes, are the same on every platform; `encoder` writes those bytes itself,
//! faster than bincode's serde path, and bincode decodes them. Each component is hashed under its own
//! blake3 derive-key context that names the component and the format version, so a change of format
//! changes every hash by construction, and two components with equal bytes never collide.

use serde::Serialize;

mod encoder;
use encoder::{HashSink, encode_to};

/// The bincode configuration of all hashed and serialized state.
pub const CONFIG: bincode::config::Configuration<bincode::config::LittleEndian, bincode::config::Fixint> =
    bincode::config::standard().with_fixed_int_encoding().with_little_endian();

/// The bincode configuration a game's state is hashed in: variable-length little-endian
/// integers, as canonical as [`CONFIG`] (one encoding per value, the same on every platform) and
/// about half the bytes for the small numbers game state is made of (docs/decisions.md, "A game
/// keeps state per obstruction, and its units are hashed from kept bytes").
pub const COMPACT: bincode::config::Configuration<bincode::config::LittleEndian, bincode::config::Varint> =
    bincode::config::standard().with_little_endian();

/// Version of the state encoding; part of every digest's context.
pub const FORMAT_VERSION: u32 = 1;

/// The canonical bytes of a value.
///
/// # Panics
/// Never for the state types of this crate (they have no maps with non-string keys and no
/// unsupported serde attributes); a type that bincode cannot encode is a programming error.
pub fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    encode_to::<_, _, false>(value, Vec::new()).expect("state types are bincode-encodable")
}

/// Streams the canonical bytes of a value into a hasher (the same bytes as [`encode`], without
/// building them in memory).
///
/// # Panics
/// As [`encode`].
pub fn encode_into<T: Serialize>(value: &T, hasher: &mut blake3::Hasher) {
    encode_to::<_, _, false>(value, HashSink::new(hasher)).expect("state types are bincode-encodable").finish();
}

/// Appends the canonical bytes of a value to `out` (the same bytes as [`encode`], into a buffer
/// the caller reuses).
///
/// # Panics
/// As [`encode`].
pub fn encode_into_vec<T: Serialize>(value: &T, out: &mut Vec<u8>) {
    let mut encoder = encoder::Encoder::<_, false> { sink: out };
    value.serialize(&mut encoder).expect("state types are bincode-encodable");
}

/// Appends the [`COMPACT`] bytes of a value to `out`.
///
/// # Panics
/// As [`encode`].
pub fn encode_compact_into_vec<T: Serialize>(value: &T, out: &mut Vec<u8>) {
    let mut encoder = encoder::Encoder::<_, true> { sink: out };
    value.serialize(&mut encoder).expect("state types are bincode-encodable");
}

/// [`digest`] over the [`COMPACT`] bytes of a value (the game's state).
pub fn compact_digest<T: Serialize>(component: &str, value: &T) -> [u8; 32] {
    compact_digest_from(&component_hasher(component), value)
}

/// The hasher [`digest`] and [`compact_digest`] start from for a component, to keep and clone
/// (the derive-key context is then hashed once, not per digest).
pub fn component_hasher(component: &str) -> blake3::Hasher {
    blake3::Hasher::new_derive_key(&format!("phalanx state v{FORMAT_VERSION} {component}"))
}

/// [`compact_digest`] from a [`component_hasher`] of the component.
pub fn compact_digest_from<T: Serialize>(component: &blake3::Hasher, value: &T) -> [u8; 32] {
    let mut hasher = component.clone();
    encode_to::<_, _, true>(value, HashSink::new(&mut hasher)).expect("state types are bincode-encodable").finish();
    *hasher.finalize().as_bytes()
}

/// The 32-byte digest of one component: blake3 in derive-key mode with the context
/// `"phalanx state v{FORMAT_VERSION} {component}"` over the canonical bytes.
pub fn digest<T: Serialize>(component: &str, value: &T) -> [u8; 32] {
    let context = format!("phalanx state v{FORMAT_VERSION} {component}");
    let mut hasher = blake3::Hasher::new_derive_key(&context);
    encode_into(value, &mut hasher);
    *hasher.finalize().as_bytes()
}

/// Lower-case hexadecimal of a digest.
pub fn hex(digest: &[u8; 32]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_is_fixed_width_little_endian() {
        assert_eq!(encode(&0x0102_0304u32), [4, 3, 2, 1]);
        assert_eq!(encode(&(1u16, 2u64)), [1, 0, 2, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn streaming_encodes_the_same_bytes() {
        let value = (7u32, vec![1u16, 2, 3], Some(-5i64));
        let mut streamed = blake3::Hasher::new();
        encode_into(&value, &mut streamed);
        assert_eq!(streamed.finalize(), blake3::hash(&encode(&value)));
    }

    #[test]
    fn a_list_encodes_as_its_count_then_each_entry() {
        // The game's unit ranges are hashed from cached per-entry bytes on this rule
        // (`world::rules`), so it must hold for references and tuples as for values.
        let entries = [(3u32, vec![1u16, 2]), (9, Vec::new()), (12, vec![7])];
        let refs: Vec<&(u32, Vec<u16>)> = entries.iter().collect();
        let mut joined = (refs.len() as u64).to_le_bytes().to_vec();
        for e in &entries {
            encode_into_vec(e, &mut joined);
        }
        assert_eq!(encode(&refs), joined);
        assert_eq!(encode(&Vec::<&(u32, Vec<u16>)>::new()), 0u64.to_le_bytes());
        // The same in the compact form: the count is itself compact.
        let mut compact = Vec::new();
        encode_compact_into_vec(&(refs.len() as u64), &mut compact);
        for e in &entries {
            encode_compact_into_vec(e, &mut compact);
        }
        let mut whole = Vec::new();
        encode_compact_into_vec(&refs, &mut whole);
        assert_eq!(whole, compact);
    }

    #[test]
    fn the_compact_form_is_shorter_for_small_numbers_and_still_one_per_value() {
        let mut small = Vec::new();
        encode_compact_into_vec(&(3u32, 300u32, -2i64), &mut small);
        assert_eq!(small, [3, 251, 44, 1, 3], "a byte below 251, a marker and a u16, zigzag");
        assert_eq!(compact_digest("x", &5u32), compact_digest("x", &5u32));
        assert_ne!(compact_digest("x", &5u32), digest("x", &5u32), "the two forms hash differently");
    }

    #[test]
    fn digests_depend_on_component_and_value() {
        let a = digest("units", &5u32);
        assert_eq!(a, digest("units", &5u32));
        assert_ne!(a, digest("rng", &5u32));
        assert_ne!(a, digest("units", &6u32));
        assert_eq!(hex(&a).len(), 64);
    }
}
