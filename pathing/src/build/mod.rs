//! The build side: a world's description (terrain, passability classes, areas, obstruction squares)
//! turned into navcell grids and kept current as it changes; queries only read what is built here.

pub mod classes;
pub mod passability;
pub mod placement;
pub mod polygon;
pub mod raster;
pub mod refworld;
pub mod terrain;
