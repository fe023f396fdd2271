//! The world's units by entity slot, with their ids: the one way to change a unit, so that every
//! change is noted where the digests will find it (docs/decisions.md, "The stores note every
//! change; the digest refresh alone marks digests").

use crate::ids::{EntityAllocator, EntityId};
use crate::unit::Unit;

/// The units and the entity ids. Every mutable access to a unit notes its slot as touched, and
/// every id allocated or freed notes that the ids changed; the world's digest refresh takes those
/// notes and recomputes what they cover. No code that changes a unit marks a digest itself, so none
/// can forget to.
#[derive(Clone, Debug, Default)]
pub(crate) struct UnitStore {
    ids: EntityAllocator,
    /// Units by entity index.
    slots: Vec<Option<Unit>>,
    /// Slots touched since the last [`UnitStore::take_touched`], each once, with a flag per slot.
    touched: Vec<u32>,
    is_touched: Vec<bool>,
    /// Whether ids were allocated or freed since the last [`UnitStore::take_ids_changed`].
    ids_changed: bool,
    /// How many ids this store ever allocated or freed: a cheap test of whether units came or went
    /// since some earlier moment (the game's unit sync). Not state: a loaded world starts at 0.
    id_epoch: u64,
}

impl UnitStore {
    /// A store of these ids and units (one slot per id slot), every slot and the ids noted as
    /// changed, as a world that had just made them all.
    pub(crate) fn from_parts(ids: EntityAllocator, slots: Vec<Option<Unit>>) -> Self {
        let mut store = Self { ids, slots, ids_changed: true, ..Self::default() };
        for index in 0..store.slots.len() as u32 {
            store.touch(index);
        }
        store
    }

    /// The entity ids.
    pub(crate) fn ids(&self) -> &EntityAllocator {
        &self.ids
    }

    /// Every slot, by entity index.
    pub(crate) fn slots(&self) -> &[Option<Unit>] {
        &self.slots
    }

    /// A live unit.
    pub(crate) fn get(&self, id: EntityId) -> Option<&Unit> {
        self.slots.get(id.index as usize).and_then(Option::as_ref).filter(|u| u.id == id)
    }

    /// Every live unit, in id order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Unit> + '_ {
        self.slots.iter().flatten()
    }

    /// A live unit to change; its slot is noted.
    pub(crate) fn get_mut(&mut self, id: EntityId) -> Option<&mut Unit> {
        let live = self.get(id).is_some();
        if live {
            self.touch(id.index);
        }
        self.slots.get_mut(id.index as usize).and_then(Option::as_mut).filter(|_| live)
    }

    /// The unit in a slot, to change; the slot is noted when it holds one.
    pub(crate) fn slot_mut(&mut self, index: u32) -> Option<&mut Unit> {
        if self.slots.get(index as usize).is_some_and(Option::is_some) {
            self.touch(index);
        }
        self.slots.get_mut(index as usize).and_then(Option::as_mut)
    }

    /// The live units `keep` accepts, in id order, to change; their slots are noted.
    pub(crate) fn iter_mut_where<'a>(&'a mut self, mut keep: impl FnMut(&Unit) -> bool + 'a) -> impl Iterator<Item = &'a mut Unit> + 'a {
        let Self { slots, touched, is_touched, .. } = self;
        slots.iter_mut().filter_map(Option::as_mut).filter_map(move |unit| {
            if !keep(unit) {
                return None;
            }
            note(touched, is_touched, unit.id.index);
            Some(unit)
        })
    }

    /// A new unit, made by `make` for the id it gets.
    pub(crate) fn add(&mut self, make: impl FnOnce(EntityId) -> Unit) -> EntityId {
        let id = self.ids.allocate();
        let slot = id.index as usize;
        if self.slots.len() <= slot {
            self.slots.resize(slot + 1, None);
        }
        self.slots[slot] = Some(make(id));
        self.touch(id.index);
        self.ids_changed = true;
        self.id_epoch += 1;
        id
    }

    /// Removes a live unit and frees its id.
    pub(crate) fn remove(&mut self, id: EntityId) -> Option<Unit> {
        self.get(id)?;
        self.touch(id.index);
        self.ids.free(id);
        self.ids_changed = true;
        self.id_epoch += 1;
        self.slots[id.index as usize].take()
    }

    /// How many ids this store ever allocated or freed (see the field).
    pub(crate) fn id_epoch(&self) -> u64 {
        self.id_epoch
    }

    /// The slots touched since the last call, in ascending order; none is touched afterwards.
    pub(crate) fn take_touched(&mut self) -> Vec<u32> {
        let mut list = std::mem::take(&mut self.touched);
        if list.len() * 8 >= self.is_touched.len() {
            // Most slots touched (a turn of walking units): reading the flags in order is cheaper
            // than sorting the list, and gives the same ascending list.
            list.clear();
            for (index, flag) in self.is_touched.iter_mut().enumerate() {
                if std::mem::take(flag) {
                    list.push(index as u32);
                }
            }
            return list;
        }
        list.sort_unstable();
        for &index in &list {
            self.is_touched[index as usize] = false;
        }
        list
    }

    /// Whether ids were allocated or freed since the last call.
    pub(crate) fn take_ids_changed(&mut self) -> bool {
        std::mem::take(&mut self.ids_changed)
    }

    fn touch(&mut self, index: u32) {
        note(&mut self.touched, &mut self.is_touched, index);
    }
}

fn note(touched: &mut Vec<u32>, is_touched: &mut Vec<bool>, index: u32) {
    let slot = index as usize;
    if is_touched.len() <= slot {
        is_touched.resize(slot + 1, false);
    }
    if !is_touched[slot] {
        is_touched[slot] = true;
        touched.push(index);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::PlayerId;
    use pathing::{Fixed, PassClass, WorldPos};

    fn unit(id: EntityId) -> Unit {
        let at = WorldPos::new(Fixed::from_num(4), Fixed::from_num(4));
        Unit::new(id, PlayerId(1), PassClass::of(0), at, Fixed::ONE, Fixed::ONE, Fixed::ONE)
    }

    #[test]
    fn every_change_is_noted_once_and_reading_notes_nothing() {
        let mut store = UnitStore::default();
        let a = store.add(unit);
        let b = store.add(unit);
        let c = store.add(unit);
        assert_eq!(store.take_touched(), vec![0, 1, 2]);
        assert!(store.take_ids_changed());
        let _ = store.get(a);
        let _ = store.iter().count();
        assert_eq!(store.take_touched(), Vec::<u32>::new());
        assert!(!store.take_ids_changed());
        store.get_mut(c).expect("live").pos.x = Fixed::from_num(5);
        store.get_mut(c).expect("live").pos.z = Fixed::from_num(5);
        store.slot_mut(a.index).expect("live");
        assert_eq!(store.take_touched(), vec![0, 2]);
        let moved: Vec<EntityId> = store.iter_mut_where(|u| u.id == b).map(|u| u.id).collect();
        assert_eq!(moved, vec![b]);
        assert_eq!(store.take_touched(), vec![1]);
        assert!(!store.take_ids_changed());
        let epoch = store.id_epoch();
        assert!(store.remove(b).is_some());
        assert!(store.remove(b).is_none(), "a stale id removes nothing");
        assert!(store.get_mut(b).is_none());
        assert_eq!(store.take_touched(), vec![1]);
        assert!(store.take_ids_changed());
        assert_eq!(store.id_epoch(), epoch + 1);
    }

    #[test]
    fn a_store_made_from_parts_has_every_slot_noted() {
        let mut made = UnitStore::default();
        let a = made.add(unit);
        made.add(unit);
        made.remove(a);
        let mut store = UnitStore::from_parts(made.ids().clone(), made.slots().to_vec());
        assert_eq!(store.take_touched(), vec![0, 1]);
        assert!(store.take_ids_changed());
    }
}
