//! Helpers shared by the unit tests and, behind the `test-support` feature, by the cross-crate
//! tests: seeded random grids, grids drawn as text, and rectangle edits checked against a rebuild.

use crate::{CellRect, Fixed, NavGrid, Navcell, PassClass, PassMap};

/// The class of test grids.
pub const CLASS: PassClass = match PassClass::new(0) {
    Some(c) => c,
    None => unreachable!(),
};

/// A `w × h` grid, navcell size 1, with each navcell impassable with probability `density`% (a
/// fixed LCG seeded by `seed`, so a proptest case is reproducible).
pub fn random_grid(w: u32, h: u32, seed: u64, density: u64) -> NavGrid {
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
pub fn random_map(w: u32, h: u32, seed: u64, density: u64, cell_raw: i64) -> PassMap {
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

/// A grid drawn as text, one string a row, first row north, navcells of 1 m: `#` is impassable for
/// [`CLASS`], any other character passable. See [`drawn_cells`] for marks in the drawing.
///
/// # Panics
/// When the drawing is empty, ragged or too large for a grid.
pub fn grid_from(rows: &[&str]) -> NavGrid {
    grid_with_cell(rows, Fixed::ONE)
}

/// [`grid_from`] with navcells `cell_size` wide.
///
/// # Panics
/// When the drawing is empty, ragged or too large for a grid, or the navcell size is not valid.
pub fn grid_with_cell(rows: &[&str], cell_size: Fixed) -> NavGrid {
    let (w, h) = (rows.first().map_or(0, |r| r.chars().count()) as u32, rows.len() as u32);
    let mut grid = NavGrid::new(w, h, 1, cell_size).expect("a drawing is a valid grid");
    for (cell, ch) in drawn_cells(rows) {
        grid.set_passable(cell, CLASS, ch != '#');
    }
    grid
}

/// [`grid_from`] as the pass map of [`CLASS`].
///
/// # Panics
/// As [`grid_from`].
pub fn map_from(rows: &[&str]) -> PassMap {
    PassMap::build(&grid_from(rows), CLASS)
}

/// Every navcell of a drawing with its character, north row first, west to east: the first row is
/// the grid's top row `j = rows.len() - 1`, and column `i` is the row's `i`-th character.
///
/// # Panics
/// When the rows are not all as long as the first.
pub fn drawn_cells<'a>(rows: &'a [&'a str]) -> impl Iterator<Item = (Navcell, char)> + 'a {
    let (w, h) = (rows.first().map_or(0, |r| r.chars().count()), rows.len());
    rows.iter().enumerate().flat_map(move |(k, row)| {
        assert_eq!(row.chars().count(), w, "row {k} of the drawing is not as long as the first");
        let j = (h - 1 - k) as u16;
        row.chars().enumerate().map(move |(i, ch)| (Navcell::new(i as u16, j), ch))
    })
}

/// One rectangle edit of an update-against-rebuild property, as the properties draw it: a corner
/// anywhere (wrapped into the grid), a width and a depth (clipped at the grid's edges), and the
/// passability to paint.
pub type Edit = (u32, u32, u32, u32, bool);

/// Paints `edit` on `grid` for `class` and returns the navcells it painted.
pub fn paint(grid: &mut NavGrid, class: PassClass, (a, b, rw, rh, passable): Edit) -> CellRect {
    let (w, h) = (grid.width(), grid.height());
    let (i0, j0) = (a % w, b % h);
    let rect = CellRect::new(i0, j0, (i0 + rw).min(w), (j0 + rh).min(h));
    for j in rect.j0..rect.j1 {
        for i in rect.i0..rect.i1 {
            grid.set_passable(Navcell::new(i as u16, j as u16), class, passable);
        }
    }
    rect
}

/// The property every incrementally updated layer keeps: after each edit, painted on `grid` with
/// [`paint`] and handed to `update` (with the painted rectangle and the edit as drawn), `layer`
/// equals `build` of the edited grid, and `also` (given the updated layer, the rebuilt one and the
/// edit) finds nothing wrong.
///
/// # Errors
/// The first difference, naming the edit after which it appeared.
pub fn edits_equal_a_rebuild<L: PartialEq>(
    grid: &mut NavGrid,
    class: PassClass,
    layer: &mut L,
    edits: &[Edit],
    build: impl Fn(&NavGrid) -> L,
    mut update: impl FnMut(&mut L, &NavGrid, CellRect, Edit),
    mut also: impl FnMut(&L, &L, Edit) -> Result<(), String>,
) -> Result<(), String> {
    for &edit in edits {
        let rect = paint(grid, class, edit);
        update(layer, grid, rect, edit);
        let rebuilt = build(grid);
        if *layer != rebuilt {
            return Err(format!("the updated layer differs from a rebuild after editing {rect:?}"));
        }
        also(layer, &rebuilt, edit)?;
    }
    Ok(())
}

/// [`edits_equal_a_rebuild`] for a layer derived from the pass map of [`CLASS`] (jump tables, the
/// hierarchy): after each edit the pass map is patched, then `update` patches the layer from it.
/// Returns the updated layer and pass map.
///
/// # Errors
/// As [`edits_equal_a_rebuild`].
pub fn derived_edits_equal_a_rebuild<L: PartialEq>(
    grid: &mut NavGrid,
    edits: &[Edit],
    build: impl Fn(&PassMap) -> L,
    mut update: impl FnMut(&mut L, &PassMap, CellRect),
) -> Result<(L, PassMap), String> {
    let both = |g: &NavGrid| {
        let map = PassMap::build(g, CLASS);
        (build(&map), map)
    };
    let mut layer = both(grid);
    let patch = |(layer, map): &mut (L, PassMap), g: &NavGrid, r: CellRect, _| {
        map.update_rect(g, r);
        update(layer, map, r);
    };
    edits_equal_a_rebuild(grid, CLASS, &mut layer, edits, both, patch, |_, _, _| Ok(()))?;
    Ok(layer)
}
