//! Test-only hooks, compiled with the `desync-hook` feature: a deliberately planted
//! nondeterminism, so that tests can check that a divergence is detected and localised to the
//! right component, entity and field. Nothing in the simulation calls them.

use pathing::Fixed;

use super::World;
use crate::ids::EntityId;

impl World {
    /// Flips the lowest bit of a unit's x coordinate (2⁻¹⁶ m) with no command: the one-bit
    /// difference a platform-dependent float would make. Returns `false` when the unit is not live.
    pub fn plant_desync(&mut self, unit: EntityId) -> bool {
        let Some(u) = self.units.get_mut(unit.index as usize).and_then(Option::as_mut).filter(|u| u.id == unit) else {
            return false;
        };
        u.pos.x = Fixed::from_bits(u.pos.x.to_bits() ^ 1);
        self.unit_digests.mark(unit.index);
        self.refresh_digest();
        true
    }
}
