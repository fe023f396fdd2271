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

use crate::pass_map::PassMap;

/// Entry kind: the jump ends at an impassable navcell (straight) or a blocked step (diagonal).
pub(crate) const WALL: u16 = 0;
/// Entry kind: the jump ends at a jump point (straight) or a diagonal stop (diagonal).
pub(crate) const JUMP: u16 = 1;
/// Entry kind: no stop within the distance; continue from the navcell there.
pub(crate) const CONTINUE: u16 = 2;

const KIND_SHIFT: u32 = 14;
/// Largest distance an entry holds.
const MAX_DISTANCE: u32 = (1 << KIND_SHIFT) - 1;

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
}

impl JumpTable {
    /// Computes the table of a map: four straight sweeps per line, then four diagonal passes.
    pub fn build(map: &PassMap) -> Self {
        let (w, h) = (map.width() as i32, map.height() as i32);
        let n = w as usize * h as usize;
        let mut table = Self { width: map.width(), height: map.height(), entries: vec![[0; 8]; n] };
        // Whether each straight ray from a navcell ends at a jump point, one bit per straight slot.
        let mut finds_jump = vec![0u8; n];
        let pass = |i: i32, j: i32| map.passable_padded(i64::from(i), i64::from(j));
        let idx = |i: i32, j: i32| j as usize * w as usize + i as usize;
        for (s, &(dx, dy)) in DIRECTIONS.iter().enumerate().take(4) {
            // Walk each line against the direction, remembering the nearest stop ahead.
            let (n_lines, len) = if dy == 0 { (h, w) } else { (w, h) };
            for line in 0..n_lines {
                let at = |p: i32| if dy == 0 { (p, line) } else { (line, p) };
                let (first, end, step) = if dx + dy > 0 { (len - 1, -1, -1) } else { (0, len, 1) };
                // The border beyond the line's end is impassable: a wall stop.
                let mut stop = first - step;
                let mut stop_is_jump = false;
                let mut p = first;
                while p != end {
                    let (i, j) = at(p);
                    let distance = (stop - p).unsigned_abs();
                    let entry = if distance > MAX_DISTANCE {
                        encode(CONTINUE, MAX_DISTANCE)
                    } else {
                        encode(if stop_is_jump { JUMP } else { WALL }, distance)
                    };
                    table.entries[idx(i, j)][s] = entry;
                    if stop_is_jump {
                        finds_jump[idx(i, j)] |= 1 << s;
                    }
                    // Is p itself a stop for rays arriving from behind it?
                    let (bi, bj) = (i - dx, j - dy);
                    let (si, sj) = (dy, dx); // a side offset, perpendicular to the direction
                    let forced = (pass(i + si, j + sj) && !pass(bi + si, bj + sj)) || (pass(i - si, j - sj) && !pass(bi - si, bj - sj));
                    if !pass(i, j) {
                        (stop, stop_is_jump) = (p, false);
                    } else if forced {
                        (stop, stop_is_jump) = (p, true);
                    }
                    p += step;
                }
            }
        }
        for (s, &(dx, dy)) in DIRECTIONS.iter().enumerate().skip(4) {
            let straight_bits = (1u8 << slot(dx, 0)) | (1u8 << slot(0, dy));
            // Visit each navcell after its diagonal successor.
            let rows: Vec<i32> = if dy > 0 { (0..h).rev().collect() } else { (0..h).collect() };
            let cols: Vec<i32> = if dx > 0 { (0..w).rev().collect() } else { (0..w).collect() };
            for &j in &rows {
                for &i in &cols {
                    let (mi, mj) = (i + dx, j + dy);
                    let legal = pass(mi, mj) && pass(mi, j) && pass(i, mj);
                    let entry = if !legal {
                        encode(WALL, 0)
                    } else if finds_jump[idx(mi, mj)] & straight_bits != 0 {
                        encode(JUMP, 1)
                    } else {
                        let (kind, distance) = decode(table.entries[idx(mi, mj)][s]);
                        let distance = distance as u32 + 1;
                        if distance > MAX_DISTANCE { encode(CONTINUE, 1) } else { encode(kind, distance) }
                    };
                    table.entries[idx(i, j)][s] = entry;
                }
            }
        }
        table
    }

    /// Brings the table up to date after the map changed inside `i0 ≤ i < i1`, `j0 ≤ j < j1`.
    ///
    /// Today this rebuilds the whole table.
    pub fn update_rect(&mut self, map: &PassMap, i0: u32, j0: u32, i1: u32, j1: u32) {
        let _ = (i0, j0, i1, j1);
        *self = Self::build(map);
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
    use crate::{Fixed, NavGrid, Navcell, PassClass};
    use proptest::prelude::*;

    fn random_map(w: u32, h: u32, seed: u64, density: u64) -> PassMap {
        let class = PassClass::new(0).unwrap();
        let mut grid = NavGrid::new(w, h, 1, Fixed::ONE).unwrap();
        let mut state = seed;
        for j in 0..h as u16 {
            for i in 0..w as u16 {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                if (state >> 33) % 100 < density {
                    grid.set_passable(Navcell::new(i, j), class, false);
                }
            }
        }
        PassMap::build(&grid, class)
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
}
