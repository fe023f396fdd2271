//! Precomputed jump distances ("JPS+"): for every navcell and each of the eight directions, how far
//! a jump goes before it stops, so that a search replaces every scan by a table look-up.
//!
//! Straight entries hold the distance to the first stop of a straight jump (an impassable navcell
//! or a jump point, exactly as [`crate::PassMap`]'s block scans define them). Diagonal entries hold
//! the number of legal diagonal steps to the first navcell whose straight jumps along the
//! diagonal's two components find a jump point (a *diagonal stop*), or, when there is none, the
//! number of legal steps before the diagonal is blocked.
//!
//! An entry is a `u16`: two kind bits ([`WALL`], [`JUMP`], [`CONTINUE`]) and a 14-bit distance.
//! Distances of 16384 navcells or more are chained: a `CONTINUE` entry says "this many steps pass no
//! stop; look again there", so grids of any size up to 65535 work.
//!
//! The table is derived data: build it from a [`PassMap`] and rebuild it whenever the map changes.
//! It costs 16 bytes per navcell.

use crate::grid::navcell::CellRect;
use crate::grid::pass_map::PassMap;

/// Entry kind: the jump ends at an impassable navcell (straight) or a blocked step (diagonal).
pub(crate) const WALL: u16 = 0;
/// Entry kind: the jump ends at a jump point (straight) or a diagonal stop (diagonal).
pub(crate) const JUMP: u16 = 1;
/// Entry kind: no stop within the distance; continue from the navcell there.
pub(crate) const CONTINUE: u16 = 2;

const KIND_SHIFT: u32 = 14;
/// Largest distance an entry holds.
const MAX_DISTANCE: u32 = (1 << KIND_SHIFT) - 1;

/// Seed marker: a navcell's passability may have changed (every entry reading it is stale).
const PASSABILITY_CHANGED: u8 = 0xff;

/// Direction slots: east, north, west, south, north-east, north-west, south-west, south-east.
pub(crate) const DIRECTIONS: [(i32, i32); 8] = [(1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)];

/// The slot of a direction in [`DIRECTIONS`].
#[inline(always)]
pub(crate) fn slot(dx: i32, dy: i32) -> usize {
    match (dx, dy) {
        (1, 0) => 0,
        (0, 1) => 1,
        (-1, 0) => 2,
        (0, -1) => 3,
        (1, 1) => 4,
        (-1, 1) => 5,
        (-1, -1) => 6,
        _ => 7,
    }
}

#[inline(always)]
fn encode(kind: u16, distance: u32) -> u16 {
    debug_assert!(distance <= MAX_DISTANCE);
    (kind << KIND_SHIFT) | distance as u16
}

/// The kind and distance of an entry.
#[inline(always)]
pub(crate) fn decode(entry: u16) -> (u16, i32) {
    (entry >> KIND_SHIFT, i32::from(entry & MAX_DISTANCE as u16))
}

/// Jump distances of one [`PassMap`], eight per navcell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JumpTable {
    /// `[Units: navcells]`
    width: u32,
    /// `[Units: navcells]`
    height: u32,
    /// Entries per navcell, index `j * width + i`, slots as [`DIRECTIONS`].
    entries: Vec<[u16; 8]>,
    /// Per navcell, bit `s` (straight slots 0..4) set when the straight ray in slot `s` ends at a
    /// jump point; the diagonal entries are computed from these.
    finds_jump: Vec<u8>,
}

impl JumpTable {
    /// Computes the table of a map in row-major order, in two passes over the rows: first from the
    /// first row on (east, west and south entries, then the two diagonals going south), then from
    /// the last row back (north, then the two diagonals going north), so every diagonal entry is
    /// computed after its diagonal successor's. Which navcells stop a straight ray comes 64 at a
    /// time from the words of the row bit plane, as the block scans compute it; north and south
    /// carry every column's nearest stop along from row to row. Entries are written in memory
    /// order: the column-wise sweeps of [`Self::update_rect`] would stride a whole row of entries
    /// per step. The result equals those sweeps' (a test checks it).
    pub fn build(map: &PassMap) -> Self {
        let (w, h) = (map.width() as usize, map.height() as usize);
        let n = w * h;
        let mut table = Self { width: map.width(), height: map.height(), entries: vec![[0; 8]; n], finds_jump: vec![0; n] };
        if n == 0 {
            return table;
        }
        let rows = &map.rows;
        let wpl = rows.line_words(0).len();
        // Bit `i` of a row's words, for navcell column `i` (padded position `i + 1`).
        let bit = |words: &[u64], i: usize| (words[(i + 65) >> 6] >> ((i + 65) & 63)) & 1 == 1;
        // Per row, the navcells that stop a ray going east, west, north and south: impassable, or a
        // jump point (see `BitPlane::scan_fwd`); one word array per direction.
        let mut stops = [vec![0u64; wpl], vec![0u64; wpl], vec![0u64; wpl], vec![0u64; wpl]];
        let (east, west, north, south) = (0, 1, 2, 3);
        let row_stops = |j: usize, stops: &mut [Vec<u64>; 4]| {
            let (c, a, b) = (rows.line_words(j + 1), rows.line_words(j + 2), rows.line_words(j));
            for k in 1..wpl - 1 {
                // Side lines: the navcell beside passable while the one beside the previous
                // navcell along the ray is not.
                let fwd = |x: &[u64]| x[k] & !((x[k] << 1) | (x[k - 1] >> 63));
                let bwd = |x: &[u64]| x[k] & !((x[k] >> 1) | (x[k + 1] << 63));
                stops[east][k] = !c[k] | fwd(a) | fwd(b);
                stops[west][k] = !c[k] | bwd(a) | bwd(b);
                // Going north (+j) the previous navcell is in row j - 1 (line `b`), going south in
                // row j + 1 (line `a`); the sides are columns i - 1 and i + 1.
                // (The zero words before and after the line make both ends read as impassable.)
                let beside = |x: &[u64], k: usize| c[k] & !x[k];
                let (n0, n1, n2) = (beside(b, k - 1), beside(b, k), beside(b, k + 1));
                stops[north][k] = !c[k] | (n1 >> 1) | (n2 << 63) | (n1 << 1) | (n0 >> 63);
                let (s0, s1, s2) = (beside(a, k - 1), beside(a, k), beside(a, k + 1));
                stops[south][k] = !c[k] | (s1 >> 1) | (s2 << 63) | (s1 << 1) | (s0 >> 63);
            }
        };
        let entry_for = |stop: i64, p: i64, is_jump: bool| -> u16 {
            let distance = (stop - p).unsigned_abs();
            if distance > u64::from(MAX_DISTANCE) {
                encode(CONTINUE, MAX_DISTANCE)
            } else {
                encode(if is_jump { JUMP } else { WALL }, distance as u32)
            }
        };
        // The nearest stop ahead of every column, going north or south, and whether it is a jump.
        let mut col_stop = vec![(-1i64, false); w];
        for j in 0..h {
            row_stops(j, &mut stops);
            let c = rows.line_words(j + 1);
            let base = j * w;
            // East: from the east end westwards; the first stop ahead is the border at `w`.
            let (mut stop, mut is_jump) = (w as i64, false);
            for i in (0..w).rev() {
                table.entries[base + i][0] = entry_for(stop, i as i64, is_jump);
                table.finds_jump[base + i] |= u8::from(is_jump);
                if bit(&stops[east], i) {
                    (stop, is_jump) = (i as i64, bit(c, i));
                }
            }
            // West: from the west end eastwards; the first stop ahead is the border at -1.
            let (mut stop, mut is_jump) = (-1i64, false);
            for i in 0..w {
                table.entries[base + i][2] = entry_for(stop, i as i64, is_jump);
                table.finds_jump[base + i] |= u8::from(is_jump) << 2;
                if bit(&stops[west], i) {
                    (stop, is_jump) = (i as i64, bit(c, i));
                }
            }
            // South: rows from the first on; the first stop ahead of row 0 is the border at -1.
            for (i, (stop, is_jump)) in col_stop.iter_mut().enumerate() {
                table.entries[base + i][3] = entry_for(*stop, j as i64, *is_jump);
                table.finds_jump[base + i] |= u8::from(*is_jump) << 3;
                if bit(&stops[south], i) {
                    (*stop, *is_jump) = (j as i64, bit(c, i));
                }
            }
            table.diagonal_rows(map, -1, j);
        }
        col_stop.fill((h as i64, false));
        for j in (0..h).rev() {
            row_stops(j, &mut stops);
            let c = rows.line_words(j + 1);
            let base = j * w;
            // North: rows from the last back; the first stop ahead of row h - 1 is the border at h.
            for (i, (stop, is_jump)) in col_stop.iter_mut().enumerate() {
                table.entries[base + i][1] = entry_for(*stop, j as i64, *is_jump);
                table.finds_jump[base + i] |= u8::from(*is_jump) << 1;
                if bit(&stops[north], i) {
                    (*stop, *is_jump) = (j as i64, bit(c, i));
                }
            }
            table.diagonal_rows(map, 1, j);
        }
        table
    }

    /// The diagonal entries of the two diagonal slots going `dy` (north-east and north-west, or
    /// south-west and south-east) along row `j`, from those of row `j + dy`, which must be complete,
    /// as must the straight `finds_jump` bits there.
    fn diagonal_rows(&mut self, map: &PassMap, dy: i32, j: usize) {
        let w = self.width as usize;
        let h = self.height as usize;
        let slots = if dy > 0 { [4, 5] } else { [7, 6] };
        let base = j * w;
        let Some(next_j) = j.checked_add_signed(dy as isize).filter(|&nj| nj < h) else {
            // No row beyond the map's edge: every diagonal step is blocked.
            for e in &mut self.entries[base..base + w] {
                e[slots[0]] = encode(WALL, 0);
                e[slots[1]] = encode(WALL, 0);
            }
            return;
        };
        let rows = &map.rows;
        let (here, next) = (rows.line_words(j + 1), rows.line_words(next_j + 1));
        // Per word, the columns from which a step east (`legal[0]`) or west (`legal[1]`) along
        // `dy` is legal: the target and both orthogonal neighbours passable.
        let wpl = here.len();
        let mut legal = [vec![0u64; wpl], vec![0u64; wpl]];
        for k in 1..wpl - 1 {
            let east = |x: &[u64]| (x[k] >> 1) | (x[k + 1] << 63);
            let west = |x: &[u64]| (x[k] << 1) | (x[k - 1] >> 63);
            legal[0][k] = east(next) & east(here) & next[k];
            legal[1][k] = west(next) & west(here) & next[k];
        }
        let (row, next_row) = if dy > 0 {
            let (lo, hi) = self.entries.split_at_mut(next_j * w);
            (&mut lo[base..base + w], &hi[..w])
        } else {
            let (lo, hi) = self.entries.split_at_mut(base);
            (&mut hi[..w], &lo[next_j * w..next_j * w + w])
        };
        let next_jump = &self.finds_jump[next_j * w..next_j * w + w];
        for (side, (&s, dx)) in slots.iter().zip([1isize, -1]).enumerate() {
            let straight_bits = (1u8 << slot(dx as i32, 0)) | (1u8 << slot(0, dy));
            let legal = &legal[side];
            for (i, e) in row.iter_mut().enumerate() {
                let p = i + 65;
                e[s] = if (legal[p >> 6] >> (p & 63)) & 1 == 0 {
                    encode(WALL, 0)
                } else {
                    // A legal step's target column is a column of the map.
                    let m = i.wrapping_add_signed(dx);
                    if next_jump[m] & straight_bits != 0 {
                        encode(JUMP, 1)
                    } else {
                        let (kind, distance) = decode(next_row[m][s]);
                        let distance = distance as u32 + 1;
                        if distance > MAX_DISTANCE { encode(CONTINUE, 1) } else { encode(kind, distance) }
                    }
                };
            }
        }
    }

    /// The table built by the sweeps [`Self::update_rect`] uses, the reference [`Self::build`] is
    /// tested against.
    #[cfg(test)]
    fn build_by_sweeps(map: &PassMap) -> Self {
        let n = map.width() as usize * map.height() as usize;
        let mut table = Self { width: map.width(), height: map.height(), entries: vec![[0; 8]; n], finds_jump: vec![0; n] };
        let (w, h) = (map.width() as i32, map.height() as i32);
        let mut changed = Vec::new();
        for (s, &(dx, dy)) in DIRECTIONS.iter().enumerate().take(4) {
            let (n_lines, len) = if dy == 0 { (h, w) } else { (w, h) };
            // Start at the far end of the line; `settle` beyond the line never allows an early end.
            let (start, settle) = if dx + dy > 0 { (len - 1, -1) } else { (0, len) };
            for line in 0..n_lines {
                table.sweep(map, s, line, start, settle, &mut changed);
                changed.clear();
            }
        }
        for (s, &(dx, dy)) in DIRECTIONS.iter().enumerate().skip(4) {
            let rows: Vec<i32> = if dy > 0 { (0..h).rev().collect() } else { (0..h).collect() };
            let cols: Vec<i32> = if dx > 0 { (0..w).rev().collect() } else { (0..w).collect() };
            for &j in &rows {
                for &i in &cols {
                    let entry = table.diagonal_entry(map, s, i, j);
                    let idx = table.index(i, j);
                    table.entries[idx][s] = entry;
                }
            }
        }
        table
    }

    #[inline(always)]
    fn index(&self, i: i32, j: i32) -> usize {
        j as usize * self.width as usize + i as usize
    }

    /// Recomputes the straight entries of slot `s` (0..4) along one line (a row for east/west, a
    /// column for north/south), walking against the direction from position `start`, remembering
    /// the nearest stop ahead. Once the walk is strictly beyond `settle`, it ends at the first
    /// navcell whose entry and `finds_jump` bit come out unchanged: from there on the walk would
    /// repeat the old one. Pushes every navcell whose `finds_jump` bit changed onto `changed`,
    /// with that bit.
    fn sweep(&mut self, map: &PassMap, s: usize, line: i32, start: i32, settle: i32, changed: &mut Vec<(i32, i32, u8)>) {
        let (dx, dy) = DIRECTIONS[s];
        let forward = dx + dy; // +1 or -1 along the line
        let pass = |i: i32, j: i32| map.passable_padded(i64::from(i), i64::from(j));
        let len = if dy == 0 { self.width as i32 } else { self.height as i32 };
        let at = |p: i32| if dy == 0 { (p, line) } else { (line, p) };
        // Whether position p stops rays arriving from behind it, and as what.
        let stop_at = |p: i32| -> Option<bool> {
            let (i, j) = at(p);
            if !pass(i, j) {
                return Some(false);
            }
            let (bi, bj) = (i - dx, j - dy);
            let (si, sj) = (dy, dx); // a side offset, perpendicular to the direction
            let forced = (pass(i + si, j + sj) && !pass(bi + si, bj + sj)) || (pass(i - si, j - sj) && !pass(bi - si, bj - sj));
            forced.then_some(true)
        };
        let bit = 1u8 << s;
        // The nearest stop strictly ahead of `start`: the line's impassable end, the next position
        // itself, or what that position's entry says lies beyond it.
        let ahead = start + forward;
        let (mut stop, mut stop_is_jump) = if ahead < 0 || ahead >= len {
            (ahead, false)
        } else if let Some(kind) = stop_at(ahead) {
            (ahead, kind)
        } else {
            let idx = self.index(at(ahead).0, at(ahead).1);
            let (_, distance) = decode(self.entries[idx][s]);
            (ahead + forward * distance, self.finds_jump[idx] & bit != 0)
        };
        let mut p = start;
        while p >= 0 && p < len {
            let (i, j) = at(p);
            let distance = (stop - p).unsigned_abs();
            let entry = if distance > MAX_DISTANCE {
                encode(CONTINUE, MAX_DISTANCE)
            } else {
                encode(if stop_is_jump { JUMP } else { WALL }, distance)
            };
            let idx = self.index(i, j);
            let old = self.finds_jump[idx];
            let new = if stop_is_jump { old | bit } else { old & !bit };
            let settled = (p - settle) * forward < 0;
            if settled && entry == self.entries[idx][s] && new == old {
                return;
            }
            self.entries[idx][s] = entry;
            if new != old {
                self.finds_jump[idx] = new;
                changed.push((i, j, bit));
            }
            if let Some(kind) = stop_at(p) {
                (stop, stop_is_jump) = (p, kind);
            }
            p -= forward;
        }
    }

    /// The diagonal entry of slot `s` (4..8) at `(i, j)`, from its diagonal successor's entry.
    fn diagonal_entry(&self, map: &PassMap, s: usize, i: i32, j: i32) -> u16 {
        let (dx, dy) = DIRECTIONS[s];
        let pass = |i: i32, j: i32| map.passable_padded(i64::from(i), i64::from(j));
        let (mi, mj) = (i + dx, j + dy);
        if !(pass(mi, mj) && pass(mi, j) && pass(i, mj)) {
            return encode(WALL, 0);
        }
        let straight_bits = (1u8 << slot(dx, 0)) | (1u8 << slot(0, dy));
        let m = self.index(mi, mj);
        if self.finds_jump[m] & straight_bits != 0 {
            return encode(JUMP, 1);
        }
        let (kind, distance) = decode(self.entries[m][s]);
        let distance = distance as u32 + 1;
        if distance > MAX_DISTANCE { encode(CONTINUE, 1) } else { encode(kind, distance) }
    }

    /// Brings the table up to date after the map changed inside `rect`:
    /// re-sweeps the rows `j0 - 1 ..= j1` and columns `i0 - 1 ..= i1` from the change backwards
    /// until the entries settle (every straight entry whose ray can see the change), then
    /// recomputes the diagonal entries that depend on a changed navcell, following each diagonal
    /// back while its entries keep changing. The result equals a rebuild.
    ///
    /// # Panics
    /// When the map's size differs from the table's.
    pub fn update_rect(&mut self, map: &PassMap, rect: CellRect) {
        let CellRect { i0, j0, i1, j1 } = rect;
        assert!(map.width() == self.width && map.height() == self.height, "map size changed under a JumpTable");
        let (w, h) = (self.width as i32, self.height as i32);
        let (i0, j0, i1, j1) = (i0 as i32, j0 as i32, (i1.min(self.width)) as i32, (j1.min(self.height)) as i32);
        if i0 >= i1 || j0 >= j1 {
            return;
        }
        // Navcells whose passability (all bits) or some `finds_jump` bits may have changed.
        let mut seeds: Vec<(i32, i32, u8)> = Vec::new();
        for j in j0..j1 {
            for i in i0..i1 {
                seeds.push((i, j, PASSABILITY_CHANGED));
            }
        }
        // A change to positions [r0, r1) of a line's axis changes which positions stop a ray: in
        // [r0, r1] going forward, [r0 - 1, r1 - 1] going backward (the "behind" neighbour is read).
        // Entries before those positions along the ray are re-swept until they settle.
        for j in (j0 - 1).max(0)..=j1.min(h - 1) {
            self.sweep(map, 0, j, (i1 - 1).min(w - 1), i0, &mut seeds);
            self.sweep(map, 2, j, i0.max(0), i1 - 1, &mut seeds);
        }
        for i in (i0 - 1).max(0)..=i1.min(w - 1) {
            self.sweep(map, 1, i, (j1 - 1).min(h - 1), j0, &mut seeds);
            self.sweep(map, 3, i, j0.max(0), j1 - 1, &mut seeds);
        }
        for (s, &(dx, dy)) in DIRECTIONS.iter().enumerate().skip(4) {
            let straight_bits = (1u8 << slot(dx, 0)) | (1u8 << slot(0, dy));
            for &(mi, mj, bits) in &seeds {
                // The entries that read navcell m: its passability as diagonal successor or as a
                // side of the step, its straight `finds_jump` bits only as diagonal successor.
                let readers: &[(i32, i32)] = if bits == PASSABILITY_CHANGED {
                    &[(mi - dx, mj - dy), (mi - dx, mj), (mi, mj - dy)]
                } else if bits & straight_bits != 0 {
                    &[(mi - dx, mj - dy)]
                } else {
                    &[]
                };
                // Recompute each reader and, while entries change, the navcells behind it on its
                // diagonal. Any order reaches the same fixed point: an entry computed from a
                // successor that changes later is recomputed when that change runs back to it.
                for &(ci, cj) in readers {
                    let (mut ci, mut cj) = (ci, cj);
                    while ci >= 0 && cj >= 0 && ci < w && cj < h {
                        let entry = self.diagonal_entry(map, s, ci, cj);
                        let idx = self.index(ci, cj);
                        if self.entries[idx][s] == entry {
                            break;
                        }
                        self.entries[idx][s] = entry;
                        (ci, cj) = (ci - dx, cj - dy);
                    }
                }
            }
        }
    }

    /// Width in navcells.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in navcells.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The eight entries of navcell `(i, j)`.
    #[inline(always)]
    pub(crate) fn at(&self, i: i32, j: i32) -> &[u16; 8] {
        &self.entries[j as usize * self.width as usize + i as usize]
    }

    /// Resolves a straight ray from `(i, j)`: the position along the ray's axis where it stops, and
    /// whether that stop is a jump point (`false`: the impassable navcell that ends it).
    #[inline(always)]
    pub(crate) fn straight_stop(&self, i: i32, j: i32, dx: i32, dy: i32) -> (i32, bool) {
        let s = slot(dx, dy);
        let (mut ci, mut cj) = (i, j);
        loop {
            let (kind, distance) = decode(self.at(ci, cj)[s]);
            ci += distance * dx;
            cj += distance * dy;
            if kind != CONTINUE {
                return (if dy == 0 { ci } else { cj }, kind == JUMP);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CellRect, Fixed, NavGrid, Navcell, PassClass};
    use proptest::prelude::*;

    fn random_map(w: u32, h: u32, seed: u64, density: u64) -> PassMap {
        let class = crate::test_support::CLASS;
        let grid = crate::test_support::random_grid(w, h, seed, density);
        PassMap::build(&grid, class)
    }

    /// Rays longer than an entry can hold are chained through `CONTINUE` entries.
    #[test]
    fn long_rays_chain_through_continue_entries() {
        let class = PassClass::new(0).unwrap();
        let mut grid = NavGrid::new(40_000, 3, 1, Fixed::ONE).unwrap();
        // An obstacle in the top row ends at column 30 000, which makes (30 000, 1) a jump point.
        for i in 29_990..30_000 {
            grid.set_passable(Navcell::new(i, 2), class, false);
        }
        let map = PassMap::build(&grid, class);
        let table = JumpTable::build(&map);
        assert_eq!(decode(table.at(0, 1)[0]).0, CONTINUE);
        assert_eq!(table.straight_stop(0, 1, 1, 0), (30_000, true));
        assert_eq!(table.straight_stop(30_000, 1, 1, 0), (40_000, false));
        assert_eq!(table.straight_stop(39_999, 1, -1, 0), (29_989, true), "going west, the obstacle ends at 29 989");
        assert_eq!(table.straight_stop(29_000, 1, -1, 0), (-1, false));
        assert_eq!(map.rows.scan_fwd(2, 1), (30_001, true), "the block scan agrees");
    }

    proptest! {
        /// Every straight entry resolves to exactly the block scan's stop, and every diagonal entry
        /// to what stepping along the diagonal finds.
        #[test]
        fn entries_match_scans_and_stepping(w in 1u32..90, h in 1u32..90, seed in any::<u64>(), density in 0u64..60) {
            let map = random_map(w, h, seed, density);
            let table = JumpTable::build(&map);
            let pass = |i: i32, j: i32| map.passable_padded(i64::from(i), i64::from(j));
            for j in 0..h as i32 {
                for i in 0..w as i32 {
                    if !pass(i, j) {
                        continue;
                    }
                    let scans = [
                        map.rows.scan_fwd(j as usize + 1, i as usize + 1),
                        map.cols.scan_fwd(i as usize + 1, j as usize + 1),
                        map.rows.scan_bwd(j as usize + 1, i as usize + 1),
                        map.cols.scan_bwd(i as usize + 1, j as usize + 1),
                    ];
                    for (s, &(dx, dy)) in DIRECTIONS.iter().enumerate().take(4) {
                        let (pos, jump) = table.straight_stop(i, j, dx, dy);
                        prop_assert_eq!((pos + 1, jump), (scans[s].0 as i32, scans[s].1), "slot {} at ({}, {})", s, i, j);
                    }
                    for &(dx, dy) in DIRECTIONS.iter().skip(4) {
                        // Step by hand to the first diagonal stop or block.
                        let (mut ci, mut cj, mut k) = (i, j, 0);
                        let expected = loop {
                            let (ni, nj) = (ci + dx, cj + dy);
                            if !(pass(ni, nj) && pass(ni, cj) && pass(ci, nj)) {
                                break (WALL, k);
                            }
                            (ci, cj, k) = (ni, nj, k + 1);
                            if table.straight_stop(ci, cj, dx, 0).1 || table.straight_stop(ci, cj, 0, dy).1 {
                                break (JUMP, k);
                            }
                        };
                        prop_assert_eq!(decode(table.at(i, j)[slot(dx, dy)]), expected, "diagonal ({}, {}) at ({}, {})", dx, dy, i, j);
                    }
                }
            }
        }
    }

    proptest! {
        /// The row-major build equals the table the line sweeps of `update_rect` compute.
        #[test]
        fn build_equals_the_sweeps(w in 1u32..90, h in 1u32..90, seed in any::<u64>(), density in 0u64..60) {
            let map = random_map(w, h, seed, density);
            prop_assert_eq!(JumpTable::build(&map), JumpTable::build_by_sweeps(&map));
        }
    }

    proptest! {
        /// After any sequence of rectangle edits, the updated table equals a rebuilt one.
        #[test]
        fn update_rect_equals_a_rebuild(
            w in 1u32..70,
            h in 1u32..70,
            seed in any::<u64>(),
            edits in proptest::collection::vec((any::<u32>(), any::<u32>(), 1u32..12, 1u32..12, any::<bool>()), 1..8),
        ) {
            let mut grid = crate::test_support::random_grid(w, h, seed, 25);
            let update = |table: &mut JumpTable, map: &PassMap, r: CellRect| table.update_rect(map, r);
            crate::test_support::derived_edits_equal_a_rebuild(&mut grid, &edits, JumpTable::build, update).map_err(TestCaseError::fail)?;
        }
    }
}
