//! Text formats read into navcell grids: Moving AI Lab `.map` and `.map.scen` files, and the plain
//! walkable-grid text.

pub mod grid_text;
pub mod movingai;
