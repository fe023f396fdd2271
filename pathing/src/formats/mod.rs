//! Text formats read into navcell grids: Moving AI Lab `.map` and `.map.scen` files, and the plain
//! walkable-grid text; and how the JSON configs are read.

pub mod grid_text;
pub mod json;
pub mod movingai;
