//! Units mirrored to entities: one Bevy entity per live unit, spawned when the unit appears and
//! despawned when it goes, with a look-up from `EntityId` to `Entity`.

use bevy::platform::collections::HashMap;
use bevy::prelude::{Commands, Component, Entity, Query, Res, ResMut, Resource, Transform};
use pathing::{Vec2, WorldPos};
use sim::{EntityId, PlayerId, Unit, UnitState};

use crate::SimWorld;
use crate::interpolate::{Pose, pose_at};

/// The mirror of one unit: its id and what the last stepped turn left it at, copied from the
/// world after every step. The plugin spawns it with a `Transform`; the game adds what it draws.
#[derive(Component, Clone, Debug, PartialEq, Eq)]
pub struct SimUnit {
    /// The unit's id in the world.
    pub id: EntityId,
    /// Its player.
    pub owner: PlayerId,
    /// Where it stands at the end of the last stepped turn.
    pub pos: WorldPos,
    /// How far it moved in that turn. `[Units: metres]`
    pub displacement: Vec2,
    /// The way it faces at the end of that turn.
    pub facing: Vec2,
    /// The way it faced at the start of that turn.
    pub previous_facing: Vec2,
    /// Half-size of its obstruction square. `[Units: metres]`
    pub radius: pathing::Fixed,
    /// What it is doing.
    pub state: UnitState,
}

impl SimUnit {
    /// The mirror of `unit` just after it appeared (facing as it was made, nothing to turn from).
    pub fn new(unit: &Unit) -> Self {
        Self {
            id: unit.id,
            owner: unit.owner,
            pos: unit.pos,
            displacement: unit.displacement,
            facing: unit.facing,
            previous_facing: unit.facing,
            radius: unit.radius,
            state: unit.state,
        }
    }

    /// Takes the unit's state after a step, keeping the facing before it.
    fn update(&mut self, unit: &Unit) {
        self.previous_facing = self.facing;
        self.owner = unit.owner;
        self.pos = unit.pos;
        self.displacement = unit.displacement;
        self.facing = unit.facing;
        self.radius = unit.radius;
        self.state = unit.state;
    }

    /// Where to draw it at `alpha` of the way through the turn after the last step
    /// ([`crate::interpolate::pose_at`]).
    pub fn pose_at(&self, alpha: f32) -> Pose {
        pose_at(self.pos, self.displacement, self.previous_facing, self.facing, alpha)
    }
}

/// The entity of each mirrored unit.
///
/// A look-up only: it offers no iteration, so nothing can be decided by a hash map's order. The
/// mirror itself walks a list kept in entity-index order, the world's own unit order.
#[derive(Resource, Debug, Default)]
pub struct UnitEntities {
    by_id: HashMap<EntityId, Entity>,
    /// The mirrored units in the world's order (ascending entity index).
    in_order: Vec<(EntityId, Entity)>,
}

impl UnitEntities {
    /// The entity mirroring unit `id`, while the unit lives.
    pub fn get(&self, id: EntityId) -> Option<Entity> {
        self.by_id.get(&id).copied()
    }

    /// How many units are mirrored.
    pub fn len(&self) -> usize {
        self.in_order.len()
    }

    /// No unit is mirrored.
    pub fn is_empty(&self) -> bool {
        self.in_order.is_empty()
    }
}

/// Brings the mirror up to date with the world after a step: a new entity (with [`SimUnit`] and a
/// `Transform`) for every unit that appeared, a despawn for every unit that went, the state of
/// every other copied into its [`SimUnit`]. One walk over the world's units and the mirror's
/// list, both in entity-index order; a slot reused by a new unit (another generation) is a
/// despawn and a spawn.
pub fn mirror_units(world: Res<SimWorld>, mut entities: ResMut<UnitEntities>, mut mirrors: Query<&mut SimUnit>, mut commands: Commands) {
    let UnitEntities { by_id, in_order } = &mut *entities;
    let old = std::mem::take(in_order);
    let mut old = old.into_iter().peekable();
    in_order.reserve(world.0.units().size_hint().0);
    for unit in world.0.units() {
        while let Some(&(id, entity)) = old.peek() {
            if id.index > unit.id.index || id == unit.id {
                break;
            }
            by_id.remove(&id);
            commands.entity(entity).try_despawn();
            old.next();
        }
        match old.peek() {
            Some(&(id, entity)) if id == unit.id => {
                old.next();
                if let Ok(mut mirror) = mirrors.get_mut(entity) {
                    mirror.update(unit);
                }
                in_order.push((id, entity));
            }
            _ => {
                let entity = commands.spawn((SimUnit::new(unit), Transform::default())).id();
                by_id.insert(unit.id, entity);
                in_order.push((unit.id, entity));
            }
        }
    }
    for (id, entity) in old {
        by_id.remove(&id);
        commands.entity(entity).try_despawn();
    }
}
