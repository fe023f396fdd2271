//! Jump point search: optimal octile paths without corner cutting, expanding only jump points.
//!
//! The rules (Harabor & Grastien 2011, in the no-corner-cutting form of their 2014 paper and of the
//! grid-pathfinding competitions):
//!
//! - A straight jump runs until it hits an impassable navcell (no successor) or reaches a *jump
//!   point*: a navcell where, on either side, the navcell beside it is passable while the one beside
//!   the previous navcell is not (an obstacle just ended, so a turn there may be the only shortest
//!   way around it), or a goal navcell.
//! - A node reached straight continues straight; for each side whose "behind" navcell is impassable
//!   and whose "beside" navcell is passable, it also turns straight to that side and diagonally
//!   forward to that side.
//! - A diagonal jump steps diagonally while the step is legal (the target and both orthogonal
//!   neighbours passable). At each step it checks for the goal and runs the two straight jumps
//!   along its components; straight jump points found there are pushed at once, with the diagonal
//!   run's origin as parent (the bend is recovered when the path is rebuilt), and the diagonal goes
//!   on. Diagonal intermediate navcells are never pushed ("intermediate pruning").
//! - A node reached diagonally continues straight along both components and diagonally.
//!
//! Straight jumps are block-based: 64 navcells per step from the row-major or column-major bit
//! plane of the [`PassMap`].
//!
//! All successor costs are octile distances, so with the consistent heuristic of the goal raster
//! the search is optimal and returns exactly the cost of [`crate::find_path_astar`]. Paths of equal
//! cost may differ between the two, since they expand different nodes.

use crate::cost::{DIAGONAL, STRAIGHT};
use crate::goal::Goal;
use crate::navcell::Navcell;
use crate::pass_map::PassMap;
use crate::search::{Expander, Path, SearchLimits, SearchOutcome, SearchScratch, drive};

/// Finds a shortest path from `start` to any navcell of `goal` with jump point search.
///
/// The path is written into `path` as turning points; the outcome says whether it reaches the goal.
pub fn find_path_jps(
    map: &PassMap,
    start: Navcell,
    goal: &Goal,
    limits: &SearchLimits,
    scratch: &mut SearchScratch,
    path: &mut Path,
) -> SearchOutcome {
    drive(map, start, goal, limits, scratch, path, &mut Jps)
}

struct Jps;

impl Jps {
    /// Jumps along row `j` from column `i` in direction `dx`; the first jump point or goal navcell.
    #[inline]
    fn jump_row(map: &PassMap, scratch: &mut SearchScratch, i: i32, j: i32, dx: i32) -> Option<i32> {
        let (line, pos) = ((j + 1) as usize, (i + 1) as usize);
        let (stop, is_jump) = if dx > 0 { map.rows.scan_fwd(line, pos) } else { map.rows.scan_bwd(line, pos) };
        let stop = stop as i32 - 1;
        let goal = if dx > 0 { scratch.goal.row_first_after(j, i) } else { scratch.goal.row_last_before(j, i) };
        if let Some(g) = goal {
            let before = if dx > 0 { g < stop } else { g > stop };
            if before || (g == stop && is_jump) {
                return Some(g);
            }
        }
        is_jump.then_some(stop)
    }

    /// Jumps along column `i` from row `j` in direction `dy`.
    #[inline]
    fn jump_col(map: &PassMap, scratch: &mut SearchScratch, i: i32, j: i32, dy: i32) -> Option<i32> {
        let (line, pos) = ((i + 1) as usize, (j + 1) as usize);
        let (stop, is_jump) = if dy > 0 { map.cols.scan_fwd(line, pos) } else { map.cols.scan_bwd(line, pos) };
        let stop = stop as i32 - 1;
        let goal = if dy > 0 { scratch.goal.col_first_after(i, j) } else { scratch.goal.col_last_before(i, j) };
        if let Some(g) = goal {
            let before = if dy > 0 { g < stop } else { g > stop };
            if before || (g == stop && is_jump) {
                return Some(g);
            }
        }
        is_jump.then_some(stop)
    }

    #[inline]
    fn straight(map: &PassMap, scratch: &mut SearchScratch, id: u32, i: i32, j: i32, g: u64, (dx, dy): (i32, i32)) -> u32 {
        if dy == 0 {
            if let Some(ni) = Self::jump_row(map, scratch, i, j, dx) {
                let cost = g + u64::from((ni - i).unsigned_abs()) * STRAIGHT;
                return u32::from(scratch.relax(cost, id, ni, j));
            }
        } else if let Some(nj) = Self::jump_col(map, scratch, i, j, dy) {
            let cost = g + u64::from((nj - j).unsigned_abs()) * STRAIGHT;
            return u32::from(scratch.relax(cost, id, i, nj));
        }
        0
    }

    #[inline]
    fn diagonal(map: &PassMap, scratch: &mut SearchScratch, id: u32, i: i32, j: i32, g: u64, (dx, dy): (i32, i32)) -> u32 {
        let mut pushed = 0;
        let (mut ci, mut cj, mut cg) = (i, j, g);
        loop {
            let (ni, nj) = (ci + dx, cj + dy);
            if !map.passable_padded(i64::from(ni), i64::from(nj))
                || !map.passable_padded(i64::from(ni), i64::from(cj))
                || !map.passable_padded(i64::from(ci), i64::from(nj))
            {
                return pushed;
            }
            (ci, cj, cg) = (ni, nj, cg + DIAGONAL);
            if scratch.goal.contains(ci, cj) {
                return pushed + u32::from(scratch.relax(cg, id, ci, cj));
            }
            if let Some(ti) = Self::jump_row(map, scratch, ci, cj, dx) {
                let cost = cg + u64::from((ti - ci).unsigned_abs()) * STRAIGHT;
                pushed += u32::from(scratch.relax(cost, id, ti, cj));
            }
            if let Some(tj) = Self::jump_col(map, scratch, ci, cj, dy) {
                let cost = cg + u64::from((tj - cj).unsigned_abs()) * STRAIGHT;
                pushed += u32::from(scratch.relax(cost, id, ci, tj));
            }
        }
    }
}

impl Expander for Jps {
    #[inline]
    fn expand(&mut self, map: &PassMap, scratch: &mut SearchScratch, id: u32, i: i32, j: i32, g: u64, dir: (i32, i32)) -> u32 {
        let pass = |a: i32, b: i32| map.passable_padded(i64::from(a), i64::from(b));
        let mut pushed = 0;
        match dir {
            (0, 0) => {
                for d in [(1, 0), (0, 1), (-1, 0), (0, -1)] {
                    pushed += Self::straight(map, scratch, id, i, j, g, d);
                }
                for d in [(1, 1), (-1, 1), (-1, -1), (1, -1)] {
                    pushed += Self::diagonal(map, scratch, id, i, j, g, d);
                }
            }
            (dx, 0) => {
                pushed += Self::straight(map, scratch, id, i, j, g, (dx, 0));
                for side in [1, -1] {
                    if !pass(i - dx, j + side) && pass(i, j + side) {
                        pushed += Self::straight(map, scratch, id, i, j, g, (0, side));
                        pushed += Self::diagonal(map, scratch, id, i, j, g, (dx, side));
                    }
                }
            }
            (0, dy) => {
                pushed += Self::straight(map, scratch, id, i, j, g, (0, dy));
                for side in [1, -1] {
                    if !pass(i + side, j - dy) && pass(i + side, j) {
                        pushed += Self::straight(map, scratch, id, i, j, g, (side, 0));
                        pushed += Self::diagonal(map, scratch, id, i, j, g, (side, dy));
                    }
                }
            }
            (dx, dy) => {
                pushed += Self::straight(map, scratch, id, i, j, g, (dx, 0));
                pushed += Self::straight(map, scratch, id, i, j, g, (0, dy));
                pushed += Self::diagonal(map, scratch, id, i, j, g, (dx, dy));
            }
        }
        pushed
    }
}
