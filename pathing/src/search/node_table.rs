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
//! The records of a search lie contiguously in the order it touched them, found through an index
//! with linear probing on a multiplicative hash of the navcell id (the ids of the records lie in a
//! parallel array, so that a record is 16 bytes in both layouts: four to a cache line in the dense
//! one, where the id is the position). Index slots are stamped with
//! the search generation, so starting a search clears nothing: a slot of an older generation is
//! empty. Within a search nothing is ever removed, which is what makes "stop at the first empty
//! slot" correct.
//! Lookups are exact, and nothing depends on where a record lies, so the table never affects which
//! path a search returns.

/// One navcell's search state (16 bytes; which navcell it is, is known from where it lies).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct NodeRecord {
    /// Cost from the start. `[Units: fixed-point cost, see crate::grid::cost]`
    pub(crate) g: u64,
    /// Navcell id (`j << 16 | i`) of the parent.
    pub(crate) parent: u32,
    /// `2 × generation` while open, `2 × generation + 1` once closed; anything else: empty slot.
    pub(crate) stamp: u32,
}

/// The smallest index (16 KB): a search whose records fill more than half of it makes it grow, and
/// each growth re-inserts every record, so starting at 2048 slots rather than 512 spares a search of
/// a few hundred to a thousand records (most long-range searches on open maps) two growths.
const MIN_SLOTS: usize = 1 << 11;

/// Records in the hash table beyond which a search moves to the dense layout (below 2^16, the
/// largest record index an index slot holds).
pub(crate) const DENSE_AFTER: usize = 1 << 12;

/// Node records keyed by navcell id, for one search at a time.
///
/// In the hashed layout the records of a search lie one after another in `records`, in the
/// order the search touched them, and `index` maps ids to them: each slot is
/// `id << 32 | generation << 16 | record index` (the id in the slot lets a probe compare ids
/// without reading the records' ids), live when its generation is the current one (so starting a
/// search clears nothing; the 16-bit generation, advanced by every search and every growth of
/// the index, wraps every 65 535 of those, and the index is cleared then). A search thus touches a few contiguous kilobytes.
#[derive(Clone, Debug, Default)]
pub(crate) struct NodeTable {
    /// The index; a search uses its first `active` slots (a power of two), so a small search
    /// touches a small index even after a large one made the allocation grow.
    index: Vec<u64>,
    active: usize,
    /// Records the hashed layout takes before it must grow or go dense: `min(DENSE_AFTER,
    /// active / 2)`, 0 in the dense layout, so that [`Self::entry_record`] tests one number.
    room: usize,
    index_generation: u16,
    records: Vec<NodeRecord>,
    /// The navcell id of each record of `records`.
    ids: Vec<u32>,
    /// One record per navcell of the map (`j * width + i`), used once a search is in dense mode.
    dense: Vec<NodeRecord>,
    dense_mode: bool,
    /// The map's width, for dense indices. `[Units: navcells]`
    width: u32,
    /// The map's navcells.
    cells: usize,
    /// The search generation of the stamps (`2g` open, `2g + 1` closed).
    generation: u32,
}

impl NodeTable {
    /// Grows every layout for searches on a map of `cells` navcells, so that no later search on it
    /// allocates.
    pub(crate) fn reserve(&mut self, cells: usize) {
        if self.index.len() < 2 * DENSE_AFTER {
            self.index.resize(2 * DENSE_AFTER, 0);
        }
        self.records.reserve(DENSE_AFTER + 1);
        self.ids.reserve(DENSE_AFTER + 1);
        if self.dense.len() < cells {
            self.dense.resize(cells, NodeRecord::default());
        }
    }

    /// Starts a new search on a `width` × `height` map, in the dense layout from the start when
    /// `dense`: every record becomes stale.
    pub(crate) fn begin(&mut self, width: u32, height: u32, dense: bool) {
        if self.index.len() < MIN_SLOTS {
            self.index.resize(MIN_SLOTS, 0);
        }
        self.active = MIN_SLOTS;
        self.room = DENSE_AFTER.min(MIN_SLOTS / 2);
        self.next_index_generation();
        self.generation += 1;
        if self.generation >= u32::MAX / 2 {
            self.dense.iter_mut().for_each(|n| n.stamp = 0);
            self.generation = 1;
        }
        self.records.clear();
        self.ids.clear();
        self.dense_mode = false;
        self.width = width;
        self.cells = width as usize * height as usize;
        if dense {
            self.go_dense();
        }
    }

    #[inline]
    pub(crate) fn open_stamp(&self) -> u32 {
        self.generation * 2
    }

    #[inline]
    pub(crate) fn closed_stamp(&self) -> u32 {
        self.generation * 2 + 1
    }

    /// Makes every index slot stale.
    fn next_index_generation(&mut self) {
        self.index_generation = self.index_generation.wrapping_add(1);
        if self.index_generation == 0 {
            self.index.fill(0);
            self.index_generation = 1;
        }
    }

    /// Moves this search's records into the dense layout.
    fn go_dense(&mut self) {
        if self.dense.len() < self.cells {
            // Old records in the reused part are stale by their stamps; new ones are empty.
            self.dense.resize(self.cells, NodeRecord::default());
        }
        for k in 0..self.records.len() {
            let at = self.dense_index(self.ids[k]);
            self.dense[at] = self.records[k];
        }
        self.dense_mode = true;
        self.room = 0;
    }

    #[inline(always)]
    fn dense_index(&self, id: u32) -> usize {
        (id >> 16) as usize * self.width as usize + (id & 0xffff) as usize
    }

    #[inline(always)]
    fn home(&self, id: u32) -> usize {
        // Fibonacci hashing: the top `log2(len)` bits of the 32-bit product (the index has at
        // least `MIN_SLOTS` slots, so the shift is below 32).
        (id.wrapping_mul(0x9E37_79B9) >> (32 - self.active.trailing_zeros())) as usize
    }

    /// The generation bits of a live index slot.
    #[inline(always)]
    fn live(&self) -> u64 {
        u64::from(self.index_generation) << 16
    }

    /// The index slot of `id`, or of the empty slot where it belongs.
    #[inline(always)]
    fn probe(&self, id: u32) -> (usize, Option<usize>) {
        let mask = self.active - 1;
        let live = self.live();
        // A slot holding `id` in this generation, whatever its record index.
        let wanted = (u64::from(id) << 32) | live;
        let mut at = self.home(id);
        loop {
            let v = self.index[at];
            if v & !0xffff == wanted {
                return (at, Some((v & 0xffff) as usize));
            }
            if v & 0xffff_0000 != live {
                return (at, None);
            }
            at = (at + 1) & mask;
        }
    }

    /// The slot holding `id` in this search, if any.
    #[inline]
    pub(crate) fn find(&self, id: u32) -> Option<usize> {
        if self.dense_mode {
            let at = self.dense_index(id);
            return (self.dense[at].stamp >> 1 == self.generation).then_some(at);
        }
        self.probe(id).1
    }

    /// The slot of `id`, claimed (stale fields) when the search has not touched it yet; the second
    /// value says whether it was already there. A claimed slot must be written with this search's
    /// stamp before the next call.
    #[inline]
    pub(crate) fn entry(&mut self, id: u32) -> (usize, bool) {
        if !self.dense_mode && self.records.len() >= DENSE_AFTER {
            self.go_dense();
        }
        if self.dense_mode {
            let at = self.dense_index(id);
            let seen = self.dense[at].stamp >> 1 == self.generation;
            return (at, seen);
        }
        if (self.records.len() + 1) * 2 > self.active {
            self.grow();
        }
        match self.probe(id) {
            (_, Some(record)) => (record, true),
            (at, None) => {
                let record = self.records.len();
                self.index[at] = (u64::from(id) << 32) | self.live() | record as u64;
                self.records.push(NodeRecord::default());
                self.ids.push(id);
                (record, false)
            }
        }
    }

    /// The record of `id`, as [`Self::entry`] gives its slot: claimed when the search has not
    /// touched it yet, and whether it was already there.
    #[inline]
    pub(crate) fn entry_record(&mut self, id: u32) -> (&mut NodeRecord, bool) {
        // The long searches, which do most of the work, run in the dense layout: tested first.
        if self.dense_mode {
            let at = self.dense_index(id);
            let node = &mut self.dense[at];
            let seen = node.stamp >> 1 == self.generation;
            return (node, seen);
        }
        // The common hashed case in one test: room for one more record (`entry` grows the index
        // when `(len + 1) * 2 > active` and goes dense at `DENSE_AFTER` records).
        if self.records.len() < self.room {
            return match self.probe(id) {
                (_, Some(record)) => (&mut self.records[record], true),
                (at, None) => {
                    let record = self.records.len();
                    self.index[at] = (u64::from(id) << 32) | self.live() | record as u64;
                    self.records.push(NodeRecord::default());
                    self.ids.push(id);
                    (&mut self.records[record], false)
                }
            };
        }
        let (slot, seen) = self.entry(id);
        (self.get_mut(slot), seen)
    }

    /// Closes the record of `id`, which must be in this search, and returns it as it was; `None`
    /// when it was closed already. One look-up for what the search loop does with every popped
    /// entry.
    #[inline(always)]
    pub(crate) fn close(&mut self, id: u32) -> Option<NodeRecord> {
        let closed = self.closed_stamp();
        let node = if self.dense_mode {
            let at = self.dense_index(id);
            &mut self.dense[at]
        } else {
            let record = self.probe(id).1.expect("every pushed node has a record");
            &mut self.records[record]
        };
        if node.stamp == closed {
            return None;
        }
        let was = *node;
        node.stamp = closed;
        Some(was)
    }

    #[inline(always)]
    pub(crate) fn get(&self, slot: usize) -> &NodeRecord {
        if self.dense_mode { &self.dense[slot] } else { &self.records[slot] }
    }

    #[inline(always)]
    pub(crate) fn get_mut(&mut self, slot: usize) -> &mut NodeRecord {
        if self.dense_mode { &mut self.dense[slot] } else { &mut self.records[slot] }
    }

    /// Doubles the part of the index in use, re-inserting this search's records under a new
    /// index generation.
    fn grow(&mut self) {
        self.active *= 2;
        self.room = DENSE_AFTER.min(self.active / 2);
        if self.index.len() < self.active {
            self.index.resize(self.active, 0);
        }
        self.next_index_generation();
        let live = self.live();
        let mask = self.active - 1;
        for k in 0..self.records.len() {
            let mut at = self.home(self.ids[k]);
            while self.index[at] & 0xffff_0000 == live {
                at = (at + 1) & mask;
            }
            self.index[at] = (u64::from(self.ids[k]) << 32) | live | k as u64;
        }
    }

    /// The ids of this search's closed records, ascending.
    pub(crate) fn closed_ids(&self) -> Vec<u32> {
        let closed = self.closed_stamp();
        let mut ids: Vec<u32> = if self.dense_mode {
            let width = self.width as usize;
            let at_id = |k: usize| (((k / width) << 16) | (k % width)) as u32;
            self.dense[..self.cells].iter().enumerate().filter(|(_, n)| n.stamp == closed).map(|(k, _)| at_id(k)).collect()
        } else {
            self.records.iter().zip(&self.ids).filter(|(n, _)| n.stamp == closed).map(|(_, &id)| id).collect()
        };
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
        table.begin(1024, 300, false);
        // Distinct ids: (i, j) = (k mod 1024, k / 1024 mod 300) after a permutation of k.
        let ids: Vec<u32> = (0..3000u32).map(|k| (k * 7919) % (1024 * 300)).map(|c| ((c / 1024) << 16) | (c % 1024)).collect();
        for (k, &id) in ids.iter().enumerate() {
            let (slot, existed) = table.entry(id);
            assert!(!existed, "id {id} claimed twice");
            *table.get_mut(slot) = NodeRecord { g: k as u64, parent: id ^ 1, stamp: table.open_stamp() };
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
        table.begin(1024, 300, false);
        assert!(ids.iter().all(|&id| table.find(id).is_none()));
        assert!(table.closed_ids().is_empty());
    }

    #[test]
    fn small_searches_use_a_small_index_after_a_large_one_and_survive_generation_wraps() {
        let mut table = NodeTable::default();
        table.begin(300, 300, false);
        for k in 0..3000u32 {
            let (slot, _) = table.entry(((k / 300) << 16) | (k % 300));
            table.get_mut(slot).stamp = table.open_stamp();
        }
        assert!(table.active >= 4096);
        // 70 000 searches cross the 16-bit index generation's wrap at least once.
        for search in 0..70_000u32 {
            table.begin(300, 300, false);
            assert_eq!(table.active, MIN_SLOTS);
            let ids = [search % 300, ((search % 299) << 16) | 7, (5 << 16) | (search % 11)];
            for (k, &id) in ids.iter().enumerate() {
                let existed = ids[..k].contains(&id);
                let (slot, seen) = table.entry(id);
                assert_eq!(seen, existed, "search {search}: id {id}");
                *table.get_mut(slot) = NodeRecord { g: u64::from(search), parent: 0, stamp: table.open_stamp() };
            }
            for &id in &ids {
                assert_eq!(table.find(id).map(|s| table.get(s).g), Some(u64::from(search)));
            }
            assert!(table.find((299 << 16) | 299).is_none() || ids.contains(&((299 << 16) | 299)));
        }
    }

    #[test]
    fn a_large_search_moves_to_the_dense_layout_and_the_next_starts_hashed() {
        let mut table = NodeTable::default();
        for round in 0..3u64 {
            table.begin(700, 700, false);
            let ids: Vec<u32> = (0..(DENSE_AFTER as u32 * 3))
                .map(|k| (k * 7919 + round as u32) % (700 * 700))
                .map(|c| ((c / 700) << 16) | (c % 700))
                .collect();
            for (k, &id) in ids.iter().enumerate() {
                let (slot, existed) = table.entry(id);
                assert!(!existed);
                *table.get_mut(slot) = NodeRecord { g: k as u64 + round, parent: 7, stamp: table.closed_stamp() };
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
        table.begin(700, 700, false);
        assert!(!table.dense_mode);
        assert!(table.closed_ids().is_empty());
    }
}
