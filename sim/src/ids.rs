//! Generational entity ids and their deterministic allocator.

use serde::{Deserialize, Serialize};

/// A handle to an entity: a slot index and the generation of that slot when the entity was made.
/// A handle whose generation no longer matches its slot is stale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct EntityId {
    /// Slot index. `[Limit: < 2^32]`
    pub index: u32,
    /// Generation of the slot. `[Limit: < 2^32, wraps]`
    pub generation: u32,
}

/// `48v0`: the slot index, `v`, the generation; how every tool prints an entity.
impl std::fmt::Display for EntityId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}v{}", self.index, self.generation)
    }
}

/// A player slot. Player 0 is the world itself (scenario setup, triggers). It serializes as its
/// `u8`, so replays and snapshots hold one byte per player field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PlayerId(pub u8);

impl PlayerId {
    /// The world itself: scenario setup and map data (waypoint networks) come from it.
    pub const WORLD: PlayerId = PlayerId(0);
}

/// `3`: the player number, as every tool prints it.
impl std::fmt::Display for PlayerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Allocates entity ids. Freed slots are reused lowest-index first, so the sequence of ids depends
/// only on the sequence of allocations and frees. The allocator is part of the simulation state:
/// it is serialized and hashed with it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntityAllocator {
    /// Current generation of every slot ever used.
    generations: Vec<u32>,
    /// Whether each slot is live.
    live: Vec<bool>,
    /// Free slots, kept sorted in descending order so `pop` yields the lowest.
    free: Vec<u32>,
}

impl EntityAllocator {
    /// A new id: the lowest free slot with its next generation, or a fresh slot.
    ///
    /// # Panics
    /// When 2^32 slots are live at once.
    pub fn allocate(&mut self) -> EntityId {
        if let Some(index) = self.free.pop() {
            self.live[index as usize] = true;
            return EntityId { index, generation: self.generations[index as usize] };
        }
        let index = u32::try_from(self.generations.len()).expect("fewer than 2^32 entities");
        self.generations.push(0);
        self.live.push(true);
        EntityId { index, generation: 0 }
    }

    /// Frees a live id; its slot's generation advances so old handles become stale.
    /// Returns `false` (and changes nothing) for a stale or unknown id.
    pub fn free(&mut self, id: EntityId) -> bool {
        if !self.is_live(id) {
            return false;
        }
        let slot = id.index as usize;
        self.live[slot] = false;
        self.generations[slot] = self.generations[slot].wrapping_add(1);
        let at = self.free.partition_point(|&f| f > id.index);
        self.free.insert(at, id.index);
        true
    }

    /// Whether an id names a live entity.
    pub fn is_live(&self, id: EntityId) -> bool {
        let slot = id.index as usize;
        slot < self.live.len() && self.live[slot] && self.generations[slot] == id.generation
    }

    /// Whether an id was issued and its entity has since been freed (a later generation of its
    /// slot was reached): a dead unit's id, as against one never issued.
    pub fn was_freed(&self, id: EntityId) -> bool {
        self.generations.get(id.index as usize).is_some_and(|&g| id.generation < g)
    }

    /// Number of live entities.
    pub fn n_live(&self) -> usize {
        self.live.iter().filter(|&&l| l).count()
    }

    /// Number of slots ever used (live or free).
    pub fn n_slots(&self) -> usize {
        self.generations.len()
    }

    /// Checks the allocator's own invariants (an allocator read from a snapshot must pass before
    /// it is used): one generation and one live flag per slot, the free list strictly descending,
    /// and exactly the slots that are not live.
    ///
    /// # Errors
    /// [`crate::Error::Ids`], naming the first broken invariant.
    pub fn check(&self) -> Result<(), crate::Error> {
        self.broken().map_err(|message| crate::Error::Ids { message })
    }

    /// [`EntityAllocator::check`], its text alone.
    fn broken(&self) -> Result<(), String> {
        if self.generations.len() != self.live.len() {
            return Err(format!("{} generations for {} slots", self.generations.len(), self.live.len()));
        }
        if self.generations.len() > u32::MAX as usize {
            return Err("more than 2^32 slots".into());
        }
        if self.free.windows(2).any(|w| w[0] <= w[1]) {
            return Err("free list not strictly descending".into());
        }
        let n_free = self.live.iter().filter(|&&l| !l).count();
        if n_free != self.free.len() || self.free.iter().any(|&f| self.live.get(f as usize) != Some(&false)) {
            return Err("free list does not match the free slots".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn check_finds_inconsistent_allocators() {
        let mut ids = EntityAllocator::default();
        let a = ids.allocate();
        ids.allocate();
        ids.free(a);
        assert_eq!(ids.check(), Ok(()));
        let mut bad = ids.clone();
        bad.generations.pop();
        assert!(bad.check().is_err());
        let mut bad = ids.clone();
        bad.free = vec![1];
        assert!(bad.check().is_err());
        let mut bad = ids.clone();
        bad.free = vec![0, 0];
        assert!(bad.check().is_err());
        let mut bad = ids;
        bad.free.clear();
        assert!(bad.check().is_err());
    }

    #[test]
    fn freed_slots_are_reused_lowest_first_with_new_generations() {
        let mut ids = EntityAllocator::default();
        let a: Vec<EntityId> = (0..4).map(|_| ids.allocate()).collect();
        assert!(ids.free(a[2]));
        assert!(ids.free(a[0]));
        assert!(!ids.free(a[0]), "double free is refused");
        let b = ids.allocate();
        assert_eq!(b, EntityId { index: 0, generation: 1 });
        assert_eq!(ids.allocate(), EntityId { index: 2, generation: 1 });
        assert_eq!(ids.allocate(), EntityId { index: 4, generation: 0 });
        assert!(!ids.is_live(a[0]));
        assert_eq!(ids.n_live(), 5);
    }

    proptest! {
        /// The allocator is a pure function of the operation sequence, and survives a bincode
        /// round trip mid-sequence (the "continue after a snapshot" rule).
        #[test]
        fn allocation_is_deterministic_across_snapshots(ops in proptest::collection::vec(any::<(bool, u8)>(), 0..200), cut in 0usize..200) {
            let run = |ops: &[(bool, u8)], mut ids: EntityAllocator, live: &mut Vec<EntityId>, log: &mut Vec<EntityId>| {
                for &(alloc, pick) in ops {
                    if alloc || live.is_empty() {
                        let id = ids.allocate();
                        live.push(id);
                        log.push(id);
                    } else {
                        let id = live.remove(pick as usize % live.len());
                        assert!(ids.free(id));
                    }
                }
                ids
            };
            let (mut live1, mut log1) = (Vec::new(), Vec::new());
            let whole = run(&ops, EntityAllocator::default(), &mut live1, &mut log1);
            let cut = cut.min(ops.len());
            let (mut live2, mut log2) = (Vec::new(), Vec::new());
            let first = run(&ops[..cut], EntityAllocator::default(), &mut live2, &mut log2);
            let bytes = crate::state_hash::encode(&first);
            let (restored, _): (EntityAllocator, usize) = bincode::serde::decode_from_slice(&bytes, crate::state_hash::CONFIG).unwrap();
            let rest = run(&ops[cut..], restored, &mut live2, &mut log2);
            prop_assert_eq!(log1, log2);
            prop_assert_eq!(whole, rest);
        }
    }
}
