//! Helpers shared by the unit tests: seeded random grids.

use crate::{Fixed, NavGrid, Navcell, PassClass, PassMap};

/// The class of test grids.
pub(crate) const CLASS: PassClass = match PassClass::new(0) {
    Some(c) => c,
    None => unreachable!(),
};

/// A `w × h` grid, navcell size 1, with each navcell impassable with probability `density`% (a
/// fixed LCG seeded by `seed`, so a proptest case is reproducible).
pub(crate) fn random_grid(w: u32, h: u32, seed: u64, density: u64) -> NavGrid {
    let mut grid = NavGrid::new(w, h, 1, Fixed::ONE).expect("test sizes are valid");
    let mut state = seed;
    for j in 0..h as u16 {
        for i in 0..w as u16 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if (state >> 33) % 100 < density {
                grid.set_passable(Navcell::new(i, j), CLASS, false);
            }
        }
    }
    grid
}

/// [`random_grid`] with navcell size `cell_raw` raw units, as the pass map of [`CLASS`].
pub(crate) fn random_map(w: u32, h: u32, seed: u64, density: u64, cell_raw: i64) -> PassMap {
    let unit = random_grid(w, h, seed, density);
    let mut grid = NavGrid::new(w, h, 1, Fixed::from_bits(cell_raw)).expect("test sizes are valid");
    for j in 0..h as u16 {
        for i in 0..w as u16 {
            let cell = Navcell::new(i, j);
            grid.set_passable(cell, CLASS, unit.is_passable(cell, CLASS));
        }
    }
    PassMap::build(&grid, CLASS)
}
