//! The navcell grid and the forms queries read: navcells, the per-class grid, the bit planes of one
//! class, path costs, exact movement checks and what a painted navcell is.

pub(crate) mod cell_kind;
pub mod collide;
pub mod cost;
pub(crate) mod nav_grid;
pub(crate) mod navcell;
pub(crate) mod pass_map;
