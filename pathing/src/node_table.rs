//! The per-search node records of the long-range searches, in a compact open-addressing table.
//!
//! A jump point search touches a few hundred to a few thousand navcells of a map of up to a million.
//! A dense array with one record per navcell puts each of them on its own cache line, scattered
//! over megabytes that other work evicts between two queries, so on a large map nearly every
//! record access went to memory. This table holds only the navcells a search touches: a few
//! kilobytes that stay in the first- and second-level caches, growing by doubling. A search that
//! touches more than [`DENSE_AFTER`] navcells (plain A*, or jump point search on a maze or a
//! random-obstacle map) is better served by the dense array after all: there the records move
//! into one record per navcell of the map, indexed directly, for the rest of that search. Both
//! layouts only grow, so once a scratch has served its largest search, searches no longer allocate.
//!
//! Linear probing with a multiplicative hash of the navcell id. Slots are stamped with the search
//! generation, so starting a search clears nothing: a slot of an older generation is empty. Within
//! a search nothing is ever removed, which is what makes "stop at the first empty slot" correct.
//! Lookups are exact, and nothing depends on where a record lies, so the table never affects which
//! path a search returns.

/// One navcell's search state.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct NodeRecord {
    /// Cost from the start. `[Units: fixed-point cost, see crate::cost]`
    pub(crate) g: u64,
    /// Navcell id (`j << 16 | i`) of the parent.
    pub(crate) parent: u32,
    /// `2 × generation` while open, `2 × generation + 1` once closed; anything else: empty slot.
    pub(crate) stamp: u32,
    /// The navcell id this slot holds.
    pub(crate) id: u32,
}

/// The smallest table; a search that touches more than half of it makes it grow.
const MIN_SLOTS: usize = 1 << 10;

/// Records in the hash table beyond which a search moves to the dense layout.
pub(crate) const DENSE_AFTER: usize = 1 << 12;

/// Node records keyed by navcell id, for one search at a time.
#[derive(Clone, Debug, Default)]
pub(crate) struct NodeTable {
    /// The hash table (power-of-two length).
    slots: Vec<NodeRecord>,
    /// One record per navcell of the map (`j * width + i`), used once a search is in dense mode.
    dense: Vec<NodeRecord>,
    dense_mode: bool,
    /// The map's width, for dense indices. `[Units: navcells]`
    width: u32,
    /// The map's navcells.
    cells: usize,
    /// Records of the current search in the hash table.
    live: usize,
    generation: u32,
}

impl NodeTable {
    /// Starts a new search on a `width` × `height` map: every record becomes stale.
    pub(crate) fn begin(&mut self, width: u32, height: u32) {
        if self.slots.is_empty() {
            self.slots = vec![NodeRecord::default(); MIN_SLOTS];
        }
        self.generation += 1;
        if self.generation >= u32::MAX / 2 {
            self.slots.iter_mut().for_each(|n| n.stamp = 0);
            self.dense.iter_mut().for_each(|n| n.stamp = 0);
            self.generation = 1;
        }
        self.live = 0;
        self.dense_mode = false;
        self.width = width;
        self.cells = width as usize * height as usize;
    }

    /// Moves this search's records into the dense layout.
    fn go_dense(&mut self) {
        if self.dense.len() < self.cells {
            // Old records in the reused part are stale by their stamps; new ones are empty.
            self.dense.resize(self.cells, NodeRecord::default());
        }
        for k in 0..self.slots.len() {
            let record = self.slots[k];
            if record.stamp >> 1 == self.generation {
                let index = self.dense_index(record.id);
                self.dense[index] = record;
            }
        }
        self.dense_mode = true;
    }

    #[inline(always)]
    fn dense_index(&self, id: u32) -> usize {
        (id >> 16) as usize * self.width as usize + (id & 0xffff) as usize
    }

    #[inline]
    pub(crate) fn open_stamp(&self) -> u32 {
        self.generation * 2
    }

    #[inline]
    pub(crate) fn closed_stamp(&self) -> u32 {
        self.generation * 2 + 1
    }

    #[inline(always)]
    fn is_live(&self, slot: &NodeRecord) -> bool {
        slot.stamp >> 1 == self.generation
    }

    #[inline(always)]
    fn home(&self, id: u32) -> usize {
        // Fibonacci hashing: the high bits of the product, masked to the table size.
        (id.wrapping_mul(0x9E37_79B9) as usize >> 8) & (self.slots.len() - 1)
    }

    /// The slot holding `id` in this search, if any.
    #[inline]
    pub(crate) fn find(&self, id: u32) -> Option<usize> {
        if self.dense_mode {
            let index = self.dense_index(id);
            return self.is_live(&self.dense[index]).then_some(index);
        }
        let mask = self.slots.len() - 1;
        let mut at = self.home(id);
        loop {
            let slot = &self.slots[at];
            if !self.is_live(slot) {
                return None;
            }
            if slot.id == id {
                return Some(at);
            }
            at = (at + 1) & mask;
        }
    }

    /// The slot of `id`, claimed (empty, stale fields) when the search has not touched it yet;
    /// the second value says whether it was already there.
    #[inline]
    pub(crate) fn entry(&mut self, id: u32) -> (usize, bool) {
        if !self.dense_mode && self.live >= DENSE_AFTER {
            self.go_dense();
        }
        if self.dense_mode {
            let index = self.dense_index(id);
            let seen = self.is_live(&self.dense[index]);
            self.dense[index].id = id;
            return (index, seen);
        }
        if (self.live + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut at = self.home(id);
        loop {
            let slot = &self.slots[at];
            if !self.is_live(slot) {
                self.live += 1;
                self.slots[at].id = id;
                return (at, false);
            }
            if slot.id == id {
                return (at, true);
            }
            at = (at + 1) & mask;
        }
    }

    #[inline(always)]
    pub(crate) fn get(&self, slot: usize) -> &NodeRecord {
        if self.dense_mode { &self.dense[slot] } else { &self.slots[slot] }
    }

    #[inline(always)]
    pub(crate) fn get_mut(&mut self, slot: usize) -> &mut NodeRecord {
        if self.dense_mode { &mut self.dense[slot] } else { &mut self.slots[slot] }
    }

    /// Doubles the table, moving this search's records.
    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(MIN_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![NodeRecord::default(); size]);
        let mask = self.slots.len() - 1;
        for record in old {
            if record.stamp >> 1 != self.generation {
                continue;
            }
            let mut at = self.home(record.id);
            while self.is_live(&self.slots[at]) {
                at = (at + 1) & mask;
            }
            self.slots[at] = record;
        }
    }

    /// The ids of this search's closed records, ascending.
    pub(crate) fn closed_ids(&self) -> Vec<u32> {
        let closed = self.closed_stamp();
        let records = if self.dense_mode { &self.dense[..self.cells] } else { &self.slots[..] };
        let mut ids: Vec<u32> = records.iter().filter(|n| n.stamp == closed).map(|n| n.id).collect();
        ids.sort_unstable();
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_survive_growth_and_vanish_with_the_next_search() {
        let mut table = NodeTable::default();
        table.begin(1024, 300);
        // Distinct ids: (i, j) = (k mod 1024, k / 1024 mod 300) after a permutation of k.
        let ids: Vec<u32> = (0..3000u32).map(|k| (k * 7919) % (1024 * 300)).map(|c| ((c / 1024) << 16) | (c % 1024)).collect();
        for (k, &id) in ids.iter().enumerate() {
            let (slot, existed) = table.entry(id);
            assert!(!existed, "id {id} claimed twice");
            *table.get_mut(slot) = NodeRecord { g: k as u64, parent: id ^ 1, stamp: table.open_stamp(), id };
        }
        for (k, &id) in ids.iter().enumerate() {
            let slot = table.find(id).expect("inserted");
            assert_eq!((table.get(slot).g, table.get(slot).parent), (k as u64, id ^ 1));
            assert_eq!(table.entry(id), (slot, true));
        }
        let closed = ids[17];
        let slot = table.find(closed).expect("inserted");
        table.get_mut(slot).stamp = table.closed_stamp();
        assert_eq!(table.closed_ids(), vec![closed]);
        table.begin(1024, 300);
        assert!(ids.iter().all(|&id| table.find(id).is_none()));
        assert!(table.closed_ids().is_empty());
    }

    #[test]
    fn a_large_search_moves_to_the_dense_layout_and_the_next_starts_hashed() {
        let mut table = NodeTable::default();
        for round in 0..3u64 {
            table.begin(700, 700);
            let ids: Vec<u32> = (0..(DENSE_AFTER as u32 * 3))
                .map(|k| (k * 7919 + round as u32) % (700 * 700))
                .map(|c| ((c / 700) << 16) | (c % 700))
                .collect();
            for (k, &id) in ids.iter().enumerate() {
                let (slot, existed) = table.entry(id);
                assert!(!existed);
                *table.get_mut(slot) = NodeRecord { g: k as u64 + round, parent: 7, stamp: table.closed_stamp(), id };
            }
            assert!(table.dense_mode);
            for (k, &id) in ids.iter().enumerate() {
                let slot = table.find(id).expect("inserted");
                assert_eq!(table.get(slot).g, k as u64 + round);
            }
            let mut sorted = ids.clone();
            sorted.sort_unstable();
            assert_eq!(table.closed_ids(), sorted);
        }
        table.begin(700, 700);
        assert!(!table.dense_mode);
        assert!(table.closed_ids().is_empty());
    }
}
