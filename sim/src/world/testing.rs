//! Test-only hooks, compiled with the `desync-hook` feature: a deliberately planted
//! nondeterminism, so that tests can check that a divergence is detected and localised to the
//! right component, entity and field. Nothing in the simulation calls them.

use pathing::Fixed;

use super::World;
use super::rules::{GameState, Rules};
use crate::ids::{EntityId, PlayerId};

impl World {
    /// Flips the lowest bit of a unit's x coordinate (2⁻¹⁶ m) with no command: the one-bit
    /// difference a platform-dependent float would make. Returns `false` when the unit is not live.
    pub fn plant_desync(&mut self, unit: EntityId) -> bool {
        let Some(u) = self.units.get_mut(unit) else {
            return false;
        };
        u.pos.x = Fixed::from_bits(u.pos.x.to_bits() ^ 1);
        self.refresh_digest();
        true
    }

    /// Changes a unit's game state with no command (the game's rules must be `R`). Returns
    /// `false` when the world has no such game or unit.
    pub fn plant_game_desync<R: Rules>(&mut self, unit: EntityId, change: impl FnOnce(&mut R::Unit)) -> bool {
        let Some(game) = self.games.iter_mut().flatten().find_map(|g| g.as_any_mut().downcast_mut::<GameState<R>>()) else { return false };
        let Some(state) = game.unit_mut(unit) else { return false };
        change(state);
        self.refresh_digest();
        true
    }

    /// Changes a player's game state with no command (the game's rules must be `R`). Returns
    /// `false` when the world has no such game or player.
    pub fn plant_player_desync<R: Rules>(&mut self, player: PlayerId, change: impl FnOnce(&mut R::Player)) -> bool {
        let Some(game) = self.games.iter_mut().flatten().find_map(|g| g.as_any_mut().downcast_mut::<GameState<R>>()) else { return false };
        let Some(state) = game.player_mut(player) else { return false };
        change(state);
        self.refresh_digest();
        true
    }
}
