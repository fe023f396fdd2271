//! The navcell grid and the forms queries read: navcells, the per-class grid, the bit planes of one
//! class, path costs and ASCII renderings.

pub mod cost;
pub(crate) mod nav_grid;
pub(crate) mod navcell;
pub(crate) mod pass_map;
pub(crate) mod render;
