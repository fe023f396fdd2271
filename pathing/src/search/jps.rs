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

use crate::grid::cost::{DIAGONAL, STRAIGHT};
use crate::grid::navcell::Navcell;
use crate::grid::pass_map::PassMap;
use crate::search::driver::{Expander, Path, Search, SearchLimits, SearchOutcome, SearchScratch, drive};
use crate::search::goal::Goal;
use crate::search::jump_table::{CONTINUE, JUMP, JumpTable, decode, slot};
use crate::search::landmarks::Landmarks;

/// The precomputed tables a jump point search may use, each optional; the caller fills in the ones
/// it has built. Neither changes the cost of the path found, only how fast it is found.
#[derive(Clone, Copy, Debug)]
pub struct Accelerators<'a> {
    /// Jump distances built from the map ([`JumpTable::build`]): every scan becomes a look-up
    /// ("JPS+"), with the same successors and tie-break, so the same paths and outcome.
    pub jump_table: Option<&'a JumpTable>,
    /// Landmark distances built from the map, or from a map that differs only by navcells blocked
    /// since (see [`Landmarks`]): a sharper heuristic, the same cost with far fewer expansions on
    /// maps of rooms and corridors. Paths of equal cost may differ from those of the octile
    /// heuristic, since the heuristic orders the open list differently.
    pub landmarks: Option<&'a Landmarks>,
}

impl Accelerators<'_> {
    /// No tables: plain jump point search with the octile heuristic, scanning the bit planes.
    pub const NONE: Accelerators<'static> = Accelerators { jump_table: None, landmarks: None };
}

/// Finds a shortest path from `start` to any navcell of `goal` with jump point search, using the
/// tables of `accelerators`.
///
/// The path is written into `path` as turning points; the outcome says whether it reaches the goal.
/// With or without a jump table the search pushes and expands the same nodes; with landmarks it
/// finds the same cost, usually expanding fewer.
///
/// # Panics
/// When a table's size differs from the map's.
pub fn find_path_jps(
    map: &PassMap,
    accelerators: &Accelerators<'_>,
    start: Navcell,
    goal: &Goal,
    limits: &SearchLimits,
    scratch: &mut SearchScratch,
    path: &mut Path,
) -> SearchOutcome {
    let landmarks = accelerators.landmarks;
    match accelerators.jump_table {
        Some(table) => {
            assert!(table.width() == map.width() && table.height() == map.height(), "jump table built for another map");
            drive(map, start, goal, limits, landmarks, scratch, path, &mut Jps(Tables(table)))
        }
        None => drive(map, start, goal, limits, landmarks, scratch, path, &mut Jps(Scans)),
    }
}

/// How rays are cast: by block scans over the bit planes, or by jump table look-ups.
trait Rays {
    /// Where a straight ray along row `j` from column `i` in direction `DX` stops: the column of
    /// the first jump point (`true`) or of the first impassable navcell (`false`). Goals are not
    /// looked at. Directions are constants, so each direction's ray is compiled without run-time
    /// tests of it.
    fn row_stop<const DX: i32>(&self, map: &PassMap, i: i32, j: i32) -> (i32, bool);

    /// Where a straight ray along column `i` from row `j` in direction `DY` stops, likewise.
    fn col_stop<const DY: i32>(&self, map: &PassMap, i: i32, j: i32) -> (i32, bool);

    /// Steps diagonally from `(i, j)` in direction `(DX, DY)`, pushing the straight jump points
    /// found from each diagonal stop with `id` as parent, until the diagonal is blocked or reaches
    /// the goal.
    fn diagonal<const DX: i32, const DY: i32>(&self, map: &PassMap, scratch: &mut Search<'_>, id: u32, i: i32, j: i32, g: u64) -> u32;
}

/// Compares a ray's stop with the goal navcell ahead on its line: the goal wins when it comes
/// first, or at the same position when that position is a (passable) jump point.
#[inline(always)]
fn with_goal(goal: Option<i32>, from: i32, stop: i32, is_jump: bool, forward: bool) -> Option<i32> {
    if let Some(g) = goal {
        let before = if forward { g < stop } else { g > stop };
        if before || (g == stop && is_jump) {
            return Some(g);
        }
    }
    debug_assert!(if forward { stop > from } else { stop < from });
    is_jump.then_some(stop)
}

/// The first jump point or goal navcell along row `j` from column `i` in direction `DX`.
#[inline(always)]
fn jump_row<R: Rays, const DX: i32>(rays: &R, map: &PassMap, scratch: &mut Search<'_>, i: i32, j: i32) -> Option<i32> {
    let (stop, is_jump) = rays.row_stop::<DX>(map, i, j);
    let goal = if DX > 0 { scratch.goal.row_first_after(j, i) } else { scratch.goal.row_last_before(j, i) };
    with_goal(goal, i, stop, is_jump, DX > 0)
}

/// The first jump point or goal navcell along column `i` from row `j` in direction `DY`.
#[inline(always)]
fn jump_col<R: Rays, const DY: i32>(rays: &R, map: &PassMap, scratch: &mut Search<'_>, i: i32, j: i32) -> Option<i32> {
    let (stop, is_jump) = rays.col_stop::<DY>(map, i, j);
    let goal = if DY > 0 { scratch.goal.col_first_after(i, j) } else { scratch.goal.col_last_before(i, j) };
    with_goal(goal, j, stop, is_jump, DY > 0)
}

/// The steps a diagonal from `(i, j)` in direction `(DX, DY)` takes to its first navcell on a row
/// or column holding goal navcells: only there can the step itself or a straight ray from it find
/// the goal, so only there are the goal tests made. `i32::MAX` when there is none (a diagonal is
/// never longer than a side of the map).
#[inline(always)]
fn steps_to_goal_line<const DX: i32, const DY: i32>(map: &PassMap, scratch: &Search<'_>, i: i32, j: i32) -> i32 {
    let beyond = map.width().max(map.height()) as i32 + 1;
    scratch.goal.diagonal_goal_step(i, j, DX, DY, beyond).unwrap_or(i32::MAX)
}

/// The first jump point along row `j` from column `i` in direction `DX`, on a row that holds no
/// goal navcell.
#[inline(always)]
fn row_jump<R: Rays, const DX: i32>(rays: &R, map: &PassMap, i: i32, j: i32) -> Option<i32> {
    let (stop, is_jump) = rays.row_stop::<DX>(map, i, j);
    is_jump.then_some(stop)
}

/// The first jump point along column `i` from row `j` in direction `DY`, on a column that holds no
/// goal navcell.
#[inline(always)]
fn col_jump<R: Rays, const DY: i32>(rays: &R, map: &PassMap, i: i32, j: i32) -> Option<i32> {
    let (stop, is_jump) = rays.col_stop::<DY>(map, i, j);
    is_jump.then_some(stop)
}

/// Rays by block scans over the [`PassMap`]'s bit planes.
struct Scans;

impl Rays for Scans {
    #[inline(always)]
    fn row_stop<const DX: i32>(&self, map: &PassMap, i: i32, j: i32) -> (i32, bool) {
        let (line, pos) = ((j + 1) as usize, (i + 1) as usize);
        let (stop, is_jump) = if DX > 0 { map.rows.scan_fwd(line, pos) } else { map.rows.scan_bwd(line, pos) };
        (stop as i32 - 1, is_jump)
    }

    #[inline(always)]
    fn col_stop<const DY: i32>(&self, map: &PassMap, i: i32, j: i32) -> (i32, bool) {
        let (line, pos) = ((i + 1) as usize, (j + 1) as usize);
        let (stop, is_jump) = if DY > 0 { map.cols.scan_fwd(line, pos) } else { map.cols.scan_bwd(line, pos) };
        (stop as i32 - 1, is_jump)
    }

    #[inline]
    fn diagonal<const DX: i32, const DY: i32>(&self, map: &PassMap, scratch: &mut Search<'_>, id: u32, i: i32, j: i32, g: u64) -> u32 {
        if !map.diagonal_step_legal(i, j, DX, DY) {
            return 0;
        }
        let mut until_goal = steps_to_goal_line::<DX, DY>(map, scratch, i, j);
        let mut pushed = 0;
        let (mut ci, mut cj, mut cg) = (i, j, g);
        loop {
            (ci, cj, cg) = (ci + DX, cj + DY, cg + DIAGONAL);
            until_goal -= 1;
            let on_goal_line = until_goal == 0;
            if on_goal_line {
                if scratch.goal.contains(ci, cj) {
                    return pushed + u32::from(scratch.relax(cg, id, ci, cj));
                }
                until_goal = steps_to_goal_line::<DX, DY>(map, scratch, ci, cj);
            }
            // The three navcells ahead, read once: they decide which rays are cast (a ray whose
            // first navcell is impassable finds neither a jump point nor a goal navcell), and the
            // diagonal goes on when all three are passable.
            let (ahead_x, ahead_y, ahead_xy) = map.diagonal_ahead(ci, cj, DX, DY);
            if ahead_x {
                let ray =
                    if on_goal_line { jump_row::<Self, DX>(self, map, scratch, ci, cj) } else { row_jump::<Self, DX>(self, map, ci, cj) };
                if let Some(ti) = ray {
                    let cost = cg + u64::from((ti - ci).unsigned_abs()) * STRAIGHT;
                    pushed += u32::from(scratch.relax(cost, id, ti, cj));
                }
            }
            if ahead_y {
                let ray =
                    if on_goal_line { jump_col::<Self, DY>(self, map, scratch, ci, cj) } else { col_jump::<Self, DY>(self, map, ci, cj) };
                if let Some(tj) = ray {
                    let cost = cg + u64::from((tj - cj).unsigned_abs()) * STRAIGHT;
                    pushed += u32::from(scratch.relax(cost, id, ci, tj));
                }
            }
            if !(ahead_x && ahead_y && ahead_xy) {
                return pushed;
            }
        }
    }
}

/// Rays by [`JumpTable`] look-ups.
struct Tables<'a>(&'a JumpTable);

impl Rays for Tables<'_> {
    #[inline(always)]
    fn row_stop<const DX: i32>(&self, _map: &PassMap, i: i32, j: i32) -> (i32, bool) {
        self.0.straight_stop(i, j, DX, 0)
    }

    #[inline(always)]
    fn col_stop<const DY: i32>(&self, _map: &PassMap, i: i32, j: i32) -> (i32, bool) {
        self.0.straight_stop(i, j, 0, DY)
    }

    #[inline]
    fn diagonal<const DX: i32, const DY: i32>(&self, map: &PassMap, scratch: &mut Search<'_>, id: u32, i: i32, j: i32, g: u64) -> u32 {
        let s = slot(DX, DY);
        let mut until_goal = steps_to_goal_line::<DX, DY>(map, scratch, i, j);
        let mut pushed = 0;
        let (mut ci, mut cj, mut cg) = (i, j, g);
        loop {
            let (kind, distance) = decode(self.0.at(ci, cj)[s]);
            // Diagonal steps that cross a goal row or column must be looked at one by one: a
            // straight ray from there may reach the goal although no jump point lies on it.
            let (k, stop) = if until_goal <= distance { (until_goal, true) } else { (distance, kind == JUMP) };
            if k == 0 {
                return pushed;
            }
            (ci, cj, cg) = (ci + k * DX, cj + k * DY, cg + u64::from(k.unsigned_abs()) * DIAGONAL);
            until_goal -= k;
            if stop {
                // Both rays are cast: a look-up answers a ray whose first navcell is impassable
                // (no successor) as fast as testing that navcell would.
                let on_goal_line = until_goal == 0;
                let (row, col) = if on_goal_line {
                    if scratch.goal.contains(ci, cj) {
                        return pushed + u32::from(scratch.relax(cg, id, ci, cj));
                    }
                    until_goal = steps_to_goal_line::<DX, DY>(map, scratch, ci, cj);
                    (jump_row::<Self, DX>(self, map, scratch, ci, cj), jump_col::<Self, DY>(self, map, scratch, ci, cj))
                } else {
                    (row_jump::<Self, DX>(self, map, ci, cj), col_jump::<Self, DY>(self, map, ci, cj))
                };
                if let Some(ti) = row {
                    let cost = cg + u64::from((ti - ci).unsigned_abs()) * STRAIGHT;
                    pushed += u32::from(scratch.relax(cost, id, ti, cj));
                }
                if let Some(tj) = col {
                    let cost = cg + u64::from((tj - cj).unsigned_abs()) * STRAIGHT;
                    pushed += u32::from(scratch.relax(cost, id, ci, tj));
                }
            } else if kind != CONTINUE {
                return pushed;
            }
        }
    }
}

/// The jump point successor rules over some way of casting rays.
struct Jps<R>(R);

impl<R: Rays> Jps<R> {
    /// The straight jump in direction `(DX, DY)` (one of them 0), pushed when it finds a node.
    #[inline(always)]
    fn straight<const DX: i32, const DY: i32>(&self, map: &PassMap, scratch: &mut Search<'_>, id: u32, i: i32, j: i32, g: u64) -> u32 {
        if DY == 0 {
            if let Some(ni) = jump_row::<R, DX>(&self.0, map, scratch, i, j) {
                let cost = g + u64::from((ni - i).unsigned_abs()) * STRAIGHT;
                return u32::from(scratch.relax(cost, id, ni, j));
            }
        } else if let Some(nj) = jump_col::<R, DY>(&self.0, map, scratch, i, j) {
            let cost = g + u64::from((nj - j).unsigned_abs()) * STRAIGHT;
            return u32::from(scratch.relax(cost, id, i, nj));
        }
        0
    }

    /// The successors of a node reached going east or west (`DX`): straight on, then for each side
    /// (row `j + 1`, then row `j - 1`) whose obstacle just ended, a turn to it and a diagonal.
    #[inline(always)]
    fn after_row<const DX: i32>(&self, map: &PassMap, scratch: &mut Search<'_>, id: u32, i: i32, j: i32, g: u64) -> u32 {
        let pass = |a: i32, b: i32| map.passable_padded(i64::from(a), i64::from(b));
        let mut pushed = self.straight::<DX, 0>(map, scratch, id, i, j, g);
        if !pass(i - DX, j + 1) && pass(i, j + 1) {
            pushed += self.straight::<0, 1>(map, scratch, id, i, j, g);
            pushed += self.0.diagonal::<DX, 1>(map, scratch, id, i, j, g);
        }
        if !pass(i - DX, j - 1) && pass(i, j - 1) {
            pushed += self.straight::<0, -1>(map, scratch, id, i, j, g);
            pushed += self.0.diagonal::<DX, -1>(map, scratch, id, i, j, g);
        }
        pushed
    }

    /// The successors of a node reached going north or south (`DY`), as [`Self::after_row`] with the
    /// sides column `i + 1`, then column `i - 1`.
    #[inline(always)]
    fn after_col<const DY: i32>(&self, map: &PassMap, scratch: &mut Search<'_>, id: u32, i: i32, j: i32, g: u64) -> u32 {
        let pass = |a: i32, b: i32| map.passable_padded(i64::from(a), i64::from(b));
        let mut pushed = self.straight::<0, DY>(map, scratch, id, i, j, g);
        if !pass(i + 1, j - DY) && pass(i + 1, j) {
            pushed += self.straight::<1, 0>(map, scratch, id, i, j, g);
            pushed += self.0.diagonal::<1, DY>(map, scratch, id, i, j, g);
        }
        if !pass(i - 1, j - DY) && pass(i - 1, j) {
            pushed += self.straight::<-1, 0>(map, scratch, id, i, j, g);
            pushed += self.0.diagonal::<-1, DY>(map, scratch, id, i, j, g);
        }
        pushed
    }

    /// The successors of a node reached diagonally: straight along both components, then on.
    #[inline(always)]
    fn after_diagonal<const DX: i32, const DY: i32>(
        &self,
        map: &PassMap,
        scratch: &mut Search<'_>,
        id: u32,
        i: i32,
        j: i32,
        g: u64,
    ) -> u32 {
        let pushed = self.straight::<DX, 0>(map, scratch, id, i, j, g);
        let pushed = pushed + self.straight::<0, DY>(map, scratch, id, i, j, g);
        pushed + self.0.diagonal::<DX, DY>(map, scratch, id, i, j, g)
    }
}

impl<R: Rays> Expander for Jps<R> {
    #[inline]
    fn expand(&mut self, map: &PassMap, scratch: &mut Search<'_>, id: u32, i: i32, j: i32, g: u64, dir: (i32, i32)) -> u32 {
        // Every direction is dispatched once, here, to code compiled for it; the pushes keep the
        // order of the rules in the module documentation, which decides ties.
        match dir {
            (0, 0) => {
                let mut pushed = self.straight::<1, 0>(map, scratch, id, i, j, g);
                pushed += self.straight::<0, 1>(map, scratch, id, i, j, g);
                pushed += self.straight::<-1, 0>(map, scratch, id, i, j, g);
                pushed += self.straight::<0, -1>(map, scratch, id, i, j, g);
                pushed += self.0.diagonal::<1, 1>(map, scratch, id, i, j, g);
                pushed += self.0.diagonal::<-1, 1>(map, scratch, id, i, j, g);
                pushed += self.0.diagonal::<-1, -1>(map, scratch, id, i, j, g);
                pushed + self.0.diagonal::<1, -1>(map, scratch, id, i, j, g)
            }
            (1, 0) => self.after_row::<1>(map, scratch, id, i, j, g),
            (-1, 0) => self.after_row::<-1>(map, scratch, id, i, j, g),
            (0, 1) => self.after_col::<1>(map, scratch, id, i, j, g),
            (0, -1) => self.after_col::<-1>(map, scratch, id, i, j, g),
            (1, 1) => self.after_diagonal::<1, 1>(map, scratch, id, i, j, g),
            (-1, 1) => self.after_diagonal::<-1, 1>(map, scratch, id, i, j, g),
            (-1, -1) => self.after_diagonal::<-1, -1>(map, scratch, id, i, j, g),
            _ => self.after_diagonal::<1, -1>(map, scratch, id, i, j, g),
        }
    }
}
