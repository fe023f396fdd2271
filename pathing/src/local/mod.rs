//! Movement near a unit: the short-range points-of-visibility search
//! among other units, and flow fields for formations.

pub mod flow_field;
pub mod short_range;
