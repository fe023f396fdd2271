//! Look-up-only hash sets and maps for the simulation: `hashbrown` tables with a fixed hasher,
//! behind an API that cannot iterate.
//!
//! The determinism rules allow hash tables for look-ups and forbid letting their iteration order
//! decide anything. These wrappers make the second half a compile-time fact rather than a review
//! item: they offer `insert`, `contains`, `get` and `get_mut`, and nothing that walks the table.
//! The hasher is `foldhash`'s fixed-seed state, so even the table's internal layout is the same on
//! every run (no OS randomness); nothing depends on it, since no answer depends on where an entry
//! lies.
//!
//! Use them where a loop asks "have I seen this?" or "what is stored under this key?" of a
//! collection that grows with the number of units (a command's units, the path-request queue),
//! where a linear `Vec::contains` would make the loop quadratic.

use std::hash::Hash;

type Hasher = foldhash::fast::FixedState;

/// A set that answers membership and nothing else (no iteration).
#[derive(Clone, Debug, Default)]
pub struct LookupSet<T> {
    table: hashbrown::HashSet<T, Hasher>,
}

impl<T: Hash + Eq> LookupSet<T> {
    /// An empty set with room for `capacity` entries.
    pub fn with_capacity(capacity: usize) -> Self {
        Self { table: hashbrown::HashSet::with_capacity_and_hasher(capacity, Hasher::default()) }
    }

    /// Adds `value`; `true` when it was not there yet.
    pub fn insert(&mut self, value: T) -> bool {
        self.table.insert(value)
    }

    /// Whether `value` is in the set.
    pub fn contains(&self, value: &T) -> bool {
        self.table.contains(value)
    }

    /// How many values the set holds.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}

impl<T: Hash + Eq> FromIterator<T> for LookupSet<T> {
    fn from_iter<I: IntoIterator<Item = T>>(values: I) -> Self {
        let values = values.into_iter();
        let mut set = Self::with_capacity(values.size_hint().0);
        for value in values {
            set.insert(value);
        }
        set
    }
}

/// A map that answers look-ups by key and nothing else (no iteration).
#[derive(Clone, Debug, Default)]
pub struct LookupMap<K, V> {
    table: hashbrown::HashMap<K, V, Hasher>,
}

impl<K: Hash + Eq, V> LookupMap<K, V> {
    /// An empty map with room for `capacity` entries.
    pub fn with_capacity(capacity: usize) -> Self {
        Self { table: hashbrown::HashMap::with_capacity_and_hasher(capacity, Hasher::default()) }
    }

    /// Stores `value` under `key`, returning what was there.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        self.table.insert(key, value)
    }

    /// The value under `key`.
    pub fn get(&self, key: &K) -> Option<&V> {
        self.table.get(key)
    }

    /// The value under `key`, mutably.
    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        self.table.get_mut(key)
    }

    /// How many keys the map holds.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sets and maps agree with a linear search over the same inserts (the oracle), for keys
    /// that collide in their low bits.
    #[test]
    fn lookups_agree_with_a_linear_search() {
        let keys: Vec<u32> = (0..2000u32).map(|k| k.wrapping_mul(2_654_435_761) & 0xffff_f000).collect();
        let mut set = LookupSet::with_capacity(0);
        let mut map = LookupMap::with_capacity(0);
        let mut seen: Vec<u32> = Vec::new();
        for (n, &key) in keys.iter().enumerate() {
            let fresh = !seen.contains(&key);
            assert_eq!(set.insert(key), fresh, "insert {key}");
            if fresh {
                seen.push(key);
                assert_eq!(map.insert(key, n), None);
            }
        }
        assert_eq!(set.len(), seen.len());
        assert_eq!(map.len(), seen.len());
        for probe in 0..5000u32 {
            let key = probe.wrapping_mul(2_654_435_761) & 0xffff_f000;
            assert_eq!(set.contains(&key), seen.contains(&key), "contains {key}");
            let first = keys.iter().position(|&k| k == key);
            assert_eq!(map.get(&key).copied(), first, "get {key}");
        }
        let collected: LookupSet<u32> = keys.iter().copied().collect();
        assert_eq!(collected.len(), seen.len());
    }
}
