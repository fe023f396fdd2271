//! Long-range search over one class's bit planes: the shared driver, jump point search and its A*
//! oracle, the precomputed accelerators (jump tables, landmarks), goals, and the per-class front
//! door [`long_range::find_path`].

pub(crate) mod astar;
pub(crate) mod driver;
pub(crate) mod goal;
pub(crate) mod jps;
pub(crate) mod jump_table;
pub(crate) mod landmarks;
pub(crate) mod long_range;
pub(crate) mod node_table;
pub mod smoothing;
