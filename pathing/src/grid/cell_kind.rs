//! What a painted navcell is ([`CellKind`]): the one fact of a painted map (a Moving AI map, a grid
//! text file) below both the map formats that read it and the terrain that builds a grid from it.

use crate::geometry::Fixed;

/// What a painted navcell is.
///
/// One per navcell in [`WorldDesc::cells`](crate::build::passability::WorldDesc::cells); the
/// [terrain module](crate::build::terrain)'s documentation (Painted navcells) says how each kind meets the class bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
pub enum CellKind {
    /// Dry land: water depth [`PAINTED_GROUND_DEPTH`].
    Ground = 0,
    /// Deep water: water depth [`PAINTED_WATER_DEPTH`], shore distance 0.
    Water = 1,
    /// Impassable for every class.
    Blocked = 2,
}

impl CellKind {
    /// The kind's byte (its discriminant: 0 ground, 1 water, 2 blocked), as snapshots store it.
    pub fn to_byte(self) -> u8 {
        self as u8
    }

    /// The kind of a byte written by [`CellKind::to_byte`]; `None` for any byte above 2.
    pub fn from_byte(byte: u8) -> Option<Self> {
        match byte {
            0 => Some(CellKind::Ground),
            1 => Some(CellKind::Water),
            2 => Some(CellKind::Blocked),
            _ => None,
        }
    }

    /// The water depth of a painted navcell of this kind. `[Units: metres]`
    pub fn water_depth(self) -> Fixed {
        match self {
            CellKind::Water => PAINTED_WATER_DEPTH,
            CellKind::Ground | CellKind::Blocked => PAINTED_GROUND_DEPTH,
        }
    }
}

/// Water depth of a [`CellKind::Water`] navcell: deep water, deeper than any wading bound of the
/// built-in classes (land classes may wade 2 m) and than the depth their ships need (1 m).
/// `[Units: metres]`
pub const PAINTED_WATER_DEPTH: Fixed = Fixed::const_from_int(16);

/// Water depth of a [`CellKind::Ground`] navcell (and of a blocked one, where no class passes
/// anyway): dry land 16 m above the water, the mirror of [`PAINTED_WATER_DEPTH`]. `[Units: metres]`
pub const PAINTED_GROUND_DEPTH: Fixed = Fixed::const_from_int(-16);
