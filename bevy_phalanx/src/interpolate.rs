//! Interpolation between turns: `Transform`s written every frame from a unit's position,
//! displacement and facing, never past the end of the last stepped turn.
//!
//! The world moves in steps of one turn (200 ms by default); drawn at those positions, units
//! jump five times a second. Every frame, [`write_transforms`] draws each unit between where it
//! was at the start of the last stepped turn (`pos - displacement`) and where it is at its end
//! (`pos`), at `alpha` = time since that step / turn length ([`crate::TurnClock::alpha`], clamped
//! to `[0, 1]`), and turns its facing the short way from the facing before the step to the one
//! after. So the picture runs one turn behind the world and never shows a place the world has
//! not reached (extrapolating from `displacement` would overshoot every stop and every turn).
//!
//! This is presentation: it computes in `f32`, converted from the fixed-point state here at the
//! edge, and nothing it computes goes back into the world.

use bevy::prelude::{Quat, Query, Res, Resource, Transform, Vec3};
use pathing::{Fixed, Vec2, WorldPos};

use crate::clock::TurnClock;
use crate::mirror::SimUnit;

/// How world coordinates (metres, `x` east, `z` north) become Bevy coordinates.
#[derive(Resource, Clone, Copy, Debug, PartialEq)]
pub struct MapProjection {
    /// The Bevy plane the map lies in.
    pub plane: MapPlane,
    /// Bevy units per metre.
    pub scale: f32,
    /// Added after scaling (for example, minus the map's centre, to centre it on the origin).
    pub offset: bevy::math::Vec2,
}

/// The Bevy plane a map lies in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapPlane {
    /// 2D: east is `+x`, north is `+y`; facing turns about `+z`; `translation.z` (the draw
    /// order) is kept.
    Xy,
    /// 3D ground, `y` up: east is `+x`, north is `-z` (Bevy's forward); facing turns about `+y`;
    /// `translation.y` (the height) is kept.
    Xz,
}

impl Default for MapProjection {
    /// 2D, one Bevy unit per metre, no offset.
    fn default() -> Self {
        Self { plane: MapPlane::Xy, scale: 1.0, offset: bevy::math::Vec2::ZERO }
    }
}

/// A unit drawn between turns: where and which way.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    /// East. `[Units: metres]`
    pub x: f32,
    /// North. `[Units: metres]`
    pub z: f32,
    /// The facing, anticlockwise from east. `[Units: radians] [Limit: -π..=π]`
    pub yaw: f32,
}

/// A fixed-point number as `f32`, for drawing.
pub fn to_f32(v: Fixed) -> f32 {
    v.to_num::<f32>()
}

/// The angle of a facing vector, anticlockwise from east.
pub fn yaw_of(facing: Vec2) -> f32 {
    to_f32(facing.z).atan2(to_f32(facing.x))
}

/// The pose of a unit at `alpha` (clamped to `[0, 1]`) through the turn that took it from
/// `pos - displacement`, facing `previous_facing`, to `pos`, facing `facing`: linear in position,
/// the shorter way round in facing. At `alpha = 1` it is exactly the turn's end.
pub fn pose_at(pos: WorldPos, displacement: Vec2, previous_facing: Vec2, facing: Vec2, alpha: f32) -> Pose {
    let alpha = if alpha.is_nan() { 1.0 } else { alpha.clamp(0.0, 1.0) };
    let behind = 1.0 - alpha;
    let x = to_f32(pos.x) - to_f32(displacement.x) * behind;
    let z = to_f32(pos.z) - to_f32(displacement.z) * behind;
    let to = yaw_of(facing);
    let from = yaw_of(previous_facing);
    let mut turn = to - from;
    if turn > std::f32::consts::PI {
        turn -= std::f32::consts::TAU;
    } else if turn < -std::f32::consts::PI {
        turn += std::f32::consts::TAU;
    }
    let yaw = if alpha >= 1.0 { to } else { from + turn * alpha };
    Pose { x, z, yaw }
}

impl MapProjection {
    /// Writes `pose` into `transform`: translation in the plane, rotation about its normal; the
    /// third coordinate is kept.
    pub fn apply(&self, pose: Pose, transform: &mut Transform) {
        let x = pose.x * self.scale + self.offset.x;
        let north = pose.z * self.scale + self.offset.y;
        match self.plane {
            MapPlane::Xy => {
                transform.translation = Vec3::new(x, north, transform.translation.z);
                transform.rotation = Quat::from_rotation_z(pose.yaw);
            }
            MapPlane::Xz => {
                transform.translation = Vec3::new(x, transform.translation.y, -north);
                transform.rotation = Quat::from_rotation_y(pose.yaw);
            }
        }
    }
}

/// Writes every mirrored unit's `Transform` at the clock's alpha (the plugin runs it in
/// `PostUpdate`, before transform propagation).
pub fn write_transforms(clock: Res<TurnClock>, projection: Res<MapProjection>, mut units: Query<(&SimUnit, &mut Transform)>) {
    let alpha = clock.alpha();
    for (unit, mut transform) in &mut units {
        projection.apply(unit.pose_at(alpha), &mut transform);
    }
}
