//! The game rules' spatial index: the live units' centres bucketed in square cells, so that
//! [`super::View::units_within`] and [`super::View::nearest`] read the cells near the centre
//! instead of every unit.
//!
//! The grid is derived data of the game's turn: never hashed, never saved, and it never decides an
//! answer, it only narrows the units the exact test (squared distance, then id) is made on. So the
//! answers are exactly the full scan's whatever the cell size, and a loaded world answers the same.
//! Cells are integers (a power of two of raw fixed-point units), entries are kept by cell in id
//! order, and every query visits cells in a fixed order: nothing depends on a hash or a float.

use pathing::WorldPos;

use crate::ids::EntityId;

/// Side of the finest cell: 8 m, as a power of two of raw fixed-point units (2¹⁹ = 8 × 2¹⁶).
const FINEST_SHIFT: u32 = 19;

/// Cells the grid may hold per unit, beyond [`SPARE_CELLS`]: a whole-grid walk (a query with a
/// huge radius) then costs in proportion to the units, never to the map. Units spread wider get
/// coarser cells (the side doubles until the cells fit).
const CELLS_PER_UNIT: i128 = 2;

/// Cells the grid may hold whatever the number of units.
const SPARE_CELLS: i128 = 64;

/// Units created since the grid was built that it keeps in a list scanned by every query; with
/// more (beyond an eighth of the grid's units), the grid is dropped and built afresh.
const ADDED_BASE: usize = 16;

/// Live units by cell, as they stood when it was built, plus the units created since.
#[derive(Clone, Debug, Default)]
pub(crate) struct UnitGrid {
    /// A cell's side is `1 << shift` raw fixed-point units.
    shift: u32,
    /// The cell coordinates (`raw >> shift`) of the first column and row.
    col0: i128,
    row0: i128,
    /// Columns and rows. `[Limit: cols × rows ≤ CELLS_PER_UNIT × units + SPARE_CELLS]`
    cols: i128,
    rows: i128,
    /// Per cell, row by row, where its entries start in `entries`; one more at the end.
    starts: Vec<u32>,
    /// `(id, centre)` by cell, in id order within a cell. A removed unit stays until the next
    /// build; queries skip the ids the world no longer has.
    entries: Vec<(EntityId, WorldPos)>,
    /// Units created since the build, in the order they came.
    added: Vec<(EntityId, WorldPos)>,
}

impl UnitGrid {
    /// The grid of `units` (in id order, as the world lists them).
    pub(crate) fn build(units: impl Iterator<Item = (EntityId, WorldPos)>) -> Self {
        let units: Vec<(EntityId, WorldPos)> = units.collect();
        let Some(bounds) = units
            .iter()
            .map(|&(_, p)| (p.x.to_bits(), p.x.to_bits(), p.z.to_bits(), p.z.to_bits()))
            .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1), a.2.min(b.2), a.3.max(b.3)))
        else {
            return Self::default();
        };
        let (x_min, x_max, z_min, z_max) = bounds;
        let limit = CELLS_PER_UNIT * units.len() as i128 + SPARE_CELLS;
        let mut shift = FINEST_SHIFT;
        let span = |lo: i64, hi: i64, shift: u32| i128::from(hi >> shift) - i128::from(lo >> shift) + 1;
        // At a shift of 63 every coordinate is in cell -1 or 0: at most 4 cells, within the limit.
        while shift < 63 && span(x_min, x_max, shift) * span(z_min, z_max, shift) > limit {
            shift += 1;
        }
        let (cols, rows) = (span(x_min, x_max, shift), span(z_min, z_max, shift));
        let mut grid = Self {
            shift,
            col0: i128::from(x_min >> shift),
            row0: i128::from(z_min >> shift),
            cols,
            rows,
            starts: vec![0; (cols * rows) as usize + 1],
            entries: Vec::with_capacity(units.len()),
            added: Vec::new(),
        };
        // A counting sort by cell keeps the id order within each cell.
        let cells: Vec<usize> = units.iter().map(|&(_, p)| grid.cell_index(p)).collect();
        for &c in &cells {
            grid.starts[c + 1] += 1;
        }
        for c in 1..grid.starts.len() {
            grid.starts[c] += grid.starts[c - 1];
        }
        let mut next: Vec<u32> = grid.starts[..grid.starts.len() - 1].to_vec();
        // Every slot is written below; the first unit only fills them meanwhile.
        grid.entries.resize(units.len(), units[0]);
        for (&unit, &c) in units.iter().zip(&cells) {
            grid.entries[next[c] as usize] = unit;
            next[c] += 1;
        }
        grid
    }

    /// The cell coordinate of a raw coordinate.
    fn cell(&self, raw: i128) -> i128 {
        raw >> self.shift
    }

    /// The index in `starts` of the cell of a point the grid was built with.
    fn cell_index(&self, p: WorldPos) -> usize {
        let col = self.cell(i128::from(p.x.to_bits())) - self.col0;
        let row = self.cell(i128::from(p.z.to_bits())) - self.row0;
        (row * self.cols + col) as usize
    }

    /// Takes in a unit created after the build. Returns `false` when the grid has taken in so
    /// many that it should rather be built afresh.
    pub(crate) fn add(&mut self, id: EntityId, pos: WorldPos) -> bool {
        self.added.push((id, pos));
        self.added.len() <= ADDED_BASE + self.entries.len() / 8
    }

    /// The entries of the cells in columns `c0..=c1` of row `row` (grid coordinates, clamped).
    fn row_span(&self, row: i128, c0: i128, c1: i128) -> &[(EntityId, WorldPos)] {
        let (c0, c1) = (c0.max(self.col0), c1.min(self.col0 + self.cols - 1));
        if row < self.row0 || row >= self.row0 + self.rows || c0 > c1 {
            return &[];
        }
        let base = (row - self.row0) * self.cols;
        let (from, to) = ((base + c0 - self.col0) as usize, (base + c1 - self.col0) as usize + 1);
        &self.entries[self.starts[from] as usize..self.starts[to] as usize]
    }

    /// Calls `f(id, squared distance)` for every unit whose centre is within `radius` (raw, not
    /// negative) of `centre`, the boundary included, in the grid's fixed order; removed units too
    /// (the caller skips them).
    pub(crate) fn for_each_within(&self, centre: WorldPos, radius: i128, mut f: impl FnMut(EntityId, i128)) {
        let r2 = radius * radius;
        let mut visit = |&(id, pos): &(EntityId, WorldPos)| {
            let d2 = super::distance2(centre, pos);
            if d2 <= r2 {
                f(id, d2);
            }
        };
        self.added.iter().for_each(&mut visit);
        if self.entries.is_empty() {
            return;
        }
        let (x, z) = (i128::from(centre.x.to_bits()), i128::from(centre.z.to_bits()));
        let (c0, c1) = (self.cell(x - radius), self.cell(x + radius));
        let (r0, r1) = (self.cell(z - radius).max(self.row0), self.cell(z + radius).min(self.row0 + self.rows - 1));
        for row in r0..=r1 {
            self.row_span(row, c0, c1).iter().for_each(&mut visit);
        }
    }

    /// The least `(squared distance, id)` among the units within `radius` (raw, not negative) of
    /// `centre` that `accept` takes (removed units too: `accept` refuses them).
    ///
    /// Rings of cells are searched outward from the centre's cell; the search stops once the best
    /// found is nearer than any unit of the next ring can be, or the next ring is beyond the
    /// radius or the grid, so it visits each cell at most once: never more than the grid's cells
    /// and units, whatever the radius.
    pub(crate) fn nearest(&self, centre: WorldPos, radius: i128, mut accept: impl FnMut(EntityId) -> bool) -> Option<(i128, EntityId)> {
        let r2 = radius * radius;
        let mut best: Option<(i128, EntityId)> = None;
        let mut consider = |best: &mut Option<(i128, EntityId)>, entries: &[(EntityId, WorldPos)]| {
            for &(id, pos) in entries {
                let d2 = super::distance2(centre, pos);
                if d2 <= r2 && best.is_none_or(|b| (d2, id) < b) && accept(id) {
                    *best = Some((d2, id));
                }
            }
        };
        consider(&mut best, &self.added);
        if self.entries.is_empty() {
            return best;
        }
        let (col, row) = (self.cell(i128::from(centre.x.to_bits())), self.cell(i128::from(centre.z.to_bits())));
        let (col1, row1) = (self.col0 + self.cols - 1, self.row0 + self.rows - 1);
        // Rings nearer than the grid are empty; rings beyond its farthest cell too.
        let first = 0.max(self.col0 - col).max(col - col1).max(self.row0 - row).max(row - row1);
        let last = (col - self.col0).max(col1 - col).max(row - self.row0).max(row1 - row);
        let side = 1i128 << self.shift;
        for ring in first..=last {
            // A unit in ring k lies beyond k − 1 whole cells from the centre on one axis.
            let bound = (ring - 1).max(0) * side;
            if bound > radius {
                break;
            }
            // Strictly nearer: a unit of the ring at the same distance might have a lower id.
            if best.is_some_and(|(d2, _)| bound.checked_mul(bound).is_none_or(|b2| d2 < b2)) {
                break;
            }
            for r in (row - ring).max(self.row0)..=(row + ring).min(row1) {
                if r == row - ring || r == row + ring {
                    consider(&mut best, self.row_span(r, col - ring, col + ring));
                } else {
                    consider(&mut best, self.row_span(r, col - ring, col - ring));
                    consider(&mut best, self.row_span(r, col + ring, col + ring));
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use pathing::{Fixed, WorldPos};

    use super::UnitGrid;
    use crate::ids::EntityId;

    fn id(index: u32) -> EntityId {
        EntityId { index, generation: 0 }
    }

    fn at(x: i32, z: i32) -> WorldPos {
        WorldPos::from_int(x, z)
    }

    fn metres(m: i32) -> i128 {
        i128::from(Fixed::from_num(m).to_bits())
    }

    /// The grid's answers with every unit accepted: `units_within` in the total order, and
    /// `nearest`.
    #[track_caller]
    fn check(units: &[(u32, WorldPos)], centre: WorldPos, radius: i128, within: &[u32], nearest: Option<u32>) {
        let grid = UnitGrid::build(units.iter().map(|&(n, p)| (id(n), p)));
        let mut found = Vec::new();
        grid.for_each_within(centre, radius, |i, d2| found.push((d2, i)));
        found.sort_unstable();
        let found: Vec<u32> = found.into_iter().map(|(_, i)| i.index).collect();
        assert_eq!(found, within, "units_within");
        assert_eq!(grid.nearest(centre, radius, |_| true).map(|(_, i)| i.index), nearest, "nearest");
    }

    #[test]
    fn ties_at_equal_distance_go_by_id_across_cells() {
        // Four units 20 m from the centre in four different cells, ids not in ring or cell order.
        let units = [(7, at(120, 100)), (3, at(100, 120)), (9, at(80, 100)), (5, at(100, 80)), (1, at(150, 150))];
        check(&units, at(100, 100), metres(20), &[3, 5, 7, 9], Some(3));
        check(&units, at(100, 100), metres(1000), &[3, 5, 7, 9, 1], Some(3));
    }

    #[test]
    fn the_boundary_is_included_and_one_raw_unit_less_excludes_it() {
        let units = [(2, at(10, 10)), (4, at(13, 14))];
        // Unit 4 is exactly 5 m from (10, 10).
        check(&units, at(10, 10), metres(5), &[2, 4], Some(2));
        check(&units, at(10, 10), metres(5) - 1, &[2], Some(2));
        check(&units, at(13, 14), 0, &[4], Some(4));
        check(&units, WorldPos::new(Fixed::from_num(13), Fixed::from_bits((14 << 16) + 1)), 0, &[], None);
    }

    #[test]
    fn a_centre_far_off_the_grid_finds_the_units_by_rings() {
        let units = [(1, at(0, 0)), (2, at(40, 0)), (3, at(0, 40))];
        check(&units, at(-10_000, 20), metres(20_000), &[1, 3, 2], Some(1));
        check(&units, at(-10_000, 20), metres(9_000), &[], None);
        check(&units, at(10_000, 10_000), metres(1 << 20), &[2, 3, 1], Some(2));
    }

    #[test]
    fn units_spread_wide_get_coarser_cells_and_the_same_answers() {
        // Two units a million metres apart: the finest cells would be 10¹⁰ of them.
        let units = [(1, at(-500_000, 0)), (2, at(500_000, 3)), (3, at(499_990, 0))];
        let grid = UnitGrid::build(units.iter().map(|&(n, p)| (id(n), p)));
        assert!(grid.cols * grid.rows <= super::CELLS_PER_UNIT * 3 + super::SPARE_CELLS);
        check(&units, at(499_995, 0), metres(6), &[3, 2], Some(3));
        // Unit 1 exactly on the boundary, unit 2 just beyond it.
        check(&units, at(0, 0), metres(500_000), &[3, 1], Some(3));
    }

    #[test]
    fn removed_units_are_refused_by_the_caller_and_added_ones_found() {
        let units = [(1, at(5, 5)), (2, at(6, 5))];
        let mut grid = UnitGrid::build(units.iter().map(|&(n, p)| (id(n), p)));
        assert!(grid.add(id(8), at(5, 6)));
        // Unit 1 is gone: the caller's test refuses it.
        let best = grid.nearest(at(5, 5), metres(10), |i| i != id(1));
        assert_eq!(best, Some((i128::from(Fixed::ONE.to_bits()).pow(2), id(2))));
        let mut all = Vec::new();
        grid.for_each_within(at(5, 5), metres(10), |i, _| all.push(i.index));
        all.sort_unstable();
        assert_eq!(all, [1, 2, 8]);
    }

    #[test]
    fn an_empty_grid_answers_nothing() {
        check(&[], at(0, 0), metres(1_000), &[], None);
    }
}
