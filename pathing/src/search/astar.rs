//! Plain A* over the navcell grid: the reference oracle for jump point search.
//!
//! Octile moves without corner cutting: a straight step costs 1, a diagonal step √2 and needs both
//! orthogonal neighbours passable. Costs, heuristic and tie-break are those of [`crate::search::driver`].
//! It expands every node on its way, so it is slow on open maps; its value is that it is simple
//! enough to be obviously right.

use crate::grid::cost::{DIAGONAL, STRAIGHT};
use crate::grid::navcell::Navcell;
use crate::grid::pass_map::PassMap;
use crate::search::driver::{Expander, Path, Search, SearchLimits, SearchOutcome, SearchScratch, drive};
use crate::search::goal::Goal;
use crate::search::landmarks::Landmarks;

/// Finds a shortest path from `start` to any navcell of `goal` with plain A*, with the landmark
/// heuristic when `landmarks` is given (the table requirements of
/// [`Accelerators::landmarks`](crate::Accelerators::landmarks)): the same cost with fewer
/// expansions, the oracle that shows the landmark bound keeps searches exact.
///
/// The path is written into `path` as turning points; the outcome says whether it reaches the goal.
///
/// # Panics
/// When the landmark table's size differs from the map's.
pub fn find_path_astar(
    map: &PassMap,
    landmarks: Option<&Landmarks>,
    start: Navcell,
    goal: &Goal,
    limits: &SearchLimits,
    scratch: &mut SearchScratch,
    path: &mut Path,
) -> SearchOutcome {
    drive(map, start, goal, limits, landmarks, scratch, path, &mut AStar)
}

struct AStar;

/// The eight moves in a fixed order: east, north, west, south, then the diagonals.
const MOVES: [(i32, i32); 8] = [(1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)];

impl Expander for AStar {
    // A* touches every navcell within its cost bound: tens of thousands on large maps.
    const DENSE: bool = true;

    #[inline]
    fn expand(&mut self, map: &PassMap, scratch: &mut Search<'_>, id: u32, i: i32, j: i32, g: u64, _dir: (i32, i32)) -> u32 {
        let mut pushed = 0;
        for (dx, dy) in MOVES {
            let (ni, nj) = (i + dx, j + dy);
            if !map.passable_padded(i64::from(ni), i64::from(nj)) {
                continue;
            }
            let cost = if dx != 0 && dy != 0 {
                if !map.passable_padded(i64::from(ni), i64::from(j)) || !map.passable_padded(i64::from(i), i64::from(nj)) {
                    continue;
                }
                DIAGONAL
            } else {
                STRAIGHT
            };
            pushed += u32::from(scratch.relax(g + cost, id, ni, nj));
        }
        pushed
    }
}
