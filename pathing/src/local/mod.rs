//! Movement near a unit: exact movement-line tests, the short-range points-of-visibility search
//! among other units, and flow fields for formations.

pub mod collide;
pub mod flow_field;
pub mod short_range;
