//! The long-range pathfinder of one passability class: bit planes, jump tables and the hierarchy
//! kept together and updated together, and the path query that uses all three.
//!
//! [`find_path`] is what a simulation calls. Before it searches it asks the hierarchy whether the
//! goal can be reached at all:
//!
//! - A start on an impassable navcell gets a straight escape path to the nearest passable navcell
//!   (0 A.D.'s "stuck units"; docs/pathfinding-rules.md); the unit asks again once it is out.
//! - A goal with no reachable navcell is replaced by the reachable navcell nearest the goal's centre
//!   (squared Euclidean distance between navcells, ties to the lowest `(j, i)`), so the search never
//!   exhausts a component looking for it (docs/pathfinding-rules.md; a grid pathfinder's "approach unreachable
//!   destinations", at the hierarchy's cost).
//! - Otherwise it is one [`find_path_jps`] query with the class's [`ClassNav::accelerators`]: JPS+
//!   over its jump tables (JPS when the class was built without them; the paths are the same),
//!   with the landmark heuristic when the class has a [`Landmarks`] table
//!   ([`ClassNav::set_landmarks`]): the same costs, fewer expansions, and paths of equal cost that
//!   may differ from those of the octile heuristic.

use crate::geometry::{Fixed, WorldPos};
use crate::grid::nav_grid::{NavGrid, PassClass};
use crate::grid::navcell::{CellRect, Navcell};
use crate::grid::pass_map::PassMap;
use crate::hierarchy::Hierarchy;
use crate::search::driver::{PartialReason, Path, PathStatus, SearchLimits, SearchOutcome, SearchScratch};
use crate::search::goal::{Goal, GoalRaster};
use crate::search::jps::{Accelerators, find_path_jps};
use crate::search::jump_table::JumpTable;
use crate::search::landmarks::Landmarks;

/// How far [`ClassNav::snap`] looks for a passable navcell by default: 8 metres, as the
/// grid pathfinder's start and end snapping we took it from (docs/decisions.md). `[Units: metres]`
pub const SNAP_RADIUS_METRES: u32 = 8;

/// Everything the long-range pathfinder derives from one class of a grid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassNav {
    pass: PassMap,
    /// Present when the class was built with jump tables: queries then run JPS+, else JPS. Both
    /// give the same paths; the tables cost 16 bytes per navcell and most of the build time.
    table: Option<JumpTable>,
    hierarchy: Hierarchy,
    /// Present when queries use the landmark heuristic. Not kept current by the updates: it must
    /// come from a grid on which every navcell this class will ever find passable is passable
    /// ([`ClassNav::set_landmarks`]).
    landmarks: Option<Landmarks>,
}

impl ClassNav {
    /// Builds the bit planes, jump tables and hierarchy of one class.
    pub fn build(grid: &NavGrid, class: PassClass) -> Self {
        Self::build_with(grid, class, true)
    }

    /// Builds the bit planes and hierarchy of one class, and the jump tables when `jump_tables`.
    pub fn build_with(grid: &NavGrid, class: PassClass, jump_tables: bool) -> Self {
        let pass = PassMap::build(grid, class);
        let table = jump_tables.then(|| JumpTable::build(&pass));
        let hierarchy = Hierarchy::build(&pass);
        Self { pass, table, hierarchy, landmarks: None }
    }

    /// Makes queries use the landmark heuristic of `landmarks` (or the octile distance, for
    /// `None`). Updates leave the table as it is, so it must have been built from a map on which
    /// every navcell that is passable now, or will become passable through later updates, is
    /// passable: blocking navcells keeps its bound exact, opening one it saw blocked does not (the
    /// searches would still find a path, but not always a shortest one).
    /// [`crate::build::passability::NavWorld`] builds it from the grid with every area open and no
    /// obstruction square, which every later grid only blocks further, and rebuilds it when the
    /// terrain changes.
    ///
    /// # Panics
    /// When the table's size differs from the grid's.
    pub fn set_landmarks(&mut self, landmarks: Option<Landmarks>) {
        if let Some(l) = &landmarks {
            assert!(l.width() == self.pass.width() && l.height() == self.pass.height(), "landmarks built for another map");
        }
        self.landmarks = landmarks;
    }

    /// The landmark table queries use, if any.
    pub fn landmarks(&self) -> Option<&Landmarks> {
        self.landmarks.as_ref()
    }

    /// Brings everything up to date after the grid changed inside `rect`.
    pub fn update_rect(&mut self, grid: &NavGrid, rect: CellRect) {
        self.pass.update_rect(grid, rect);
        if let Some(table) = &mut self.table {
            table.update_rect(&self.pass, rect);
        }
        self.hierarchy.update_rect(&self.pass, rect);
    }

    /// Brings everything up to date after the listed navcells of the grid changed (scattered
    /// changes: each hierarchy chunk is relabelled once).
    pub fn update_cells(&mut self, grid: &NavGrid, cells: &[Navcell]) {
        for c in cells {
            let (i, j) = (u32::from(c.i), u32::from(c.j));
            let cell = CellRect::new(i, j, i + 1, j + 1);
            self.pass.update_rect(grid, cell);
            if let Some(table) = &mut self.table {
                table.update_rect(&self.pass, cell);
            }
        }
        self.hierarchy.update_cells(&self.pass, cells);
    }

    /// The bit planes.
    pub fn pass_map(&self) -> &PassMap {
        &self.pass
    }

    /// The jump tables, when the class was built with them.
    pub fn jump_table(&self) -> Option<&JumpTable> {
        self.table.as_ref()
    }

    /// The tables [`find_path`] searches with: the jump tables and the landmarks the class has.
    pub fn accelerators(&self) -> Accelerators<'_> {
        Accelerators { jump_table: self.table.as_ref(), landmarks: self.landmarks.as_ref() }
    }

    /// The hierarchy.
    pub fn hierarchy(&self) -> &Hierarchy {
        &self.hierarchy
    }

    /// The passable navcell nearest to `cell` within `max_distance` navcells (itself when passable),
    /// for points slightly off the walkable grid. Distance and tie-break as [`Hierarchy::nearest`].
    pub fn snap(&self, cell: Navcell, max_distance: u32) -> Option<Navcell> {
        if self.pass.is_passable(cell) {
            return Some(cell);
        }
        self.hierarchy.nearest(cell, None, max_distance)
    }

    /// The navcell for a world point slightly off the walkable grid (a bounded snap, docs/pathfinding-rules.md;
    /// start and end snapping): the point's navcell (clamped onto the grid) when passable, else
    /// the nearest passable navcell within [`SNAP_RADIUS_METRES`], else `None`.
    pub fn snap_point(&self, at: WorldPos) -> Option<Navcell> {
        let s = i128::from(self.pass.cell_size().to_bits());
        let clamp = |v: Fixed, n: u32| (i128::from(v.to_bits()).div_euclid(s)).clamp(0, i128::from(n) - 1) as u16;
        let cell = Navcell::new(clamp(at.x, self.pass.width()), clamp(at.z, self.pass.height()));
        let radius = (i128::from(Fixed::from_num(SNAP_RADIUS_METRES).to_bits()) / s) as u32;
        self.snap(cell, radius)
    }

    /// Whether any navcell of `goal` can be reached from `start`; when none can, the reachable
    /// navcell nearest the goal's centre. `None` when `start` is impassable.
    pub fn goal_reach(&self, start: Navcell, goal: &Goal, scratch: &mut SearchScratch) -> Option<GoalReach> {
        let component = self.hierarchy.component(start)?;
        scratch.goal.reset(goal, self.pass.width(), self.pass.height(), self.pass.cell_size());
        Some(goal_reach(&self.hierarchy, &mut scratch.goal, start, component))
    }
}

/// Whether a goal can be reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoalReach {
    /// Some navcell of the goal is in the start's component.
    Reachable,
    /// None is; this is the reachable navcell nearest the goal's centre.
    Unreachable {
        /// Where a unit should head instead.
        nearest: Navcell,
    },
}

fn goal_reach(hierarchy: &Hierarchy, raster: &mut GoalRaster, start: Navcell, component: u32) -> GoalReach {
    let reachable = if raster.is_inverted() {
        // Goal navcells are everywhere outside a hole: look for one in the component, nearest the
        // start first, so that the usual case (the start inside the hole) ends at once.
        hierarchy.any_in_component(start, component, |i, j| raster.contains(i, j))
    } else {
        let (i0, j0, i1, j1) = raster.bbox();
        let mut found = false;
        for j in j0..=j1 {
            let line = raster.row(j);
            for span in line.spans {
                if span.lo <= span.hi && hierarchy.any_in_row(j as u32, span.lo as u32, span.hi as u32, component) {
                    found = true;
                    break;
                }
            }
            if found || i0 > i1 {
                break;
            }
        }
        found
    };
    if reachable {
        return GoalReach::Reachable;
    }
    let (ci, cj) = raster.center_cell();
    let nearest = hierarchy.nearest(Navcell::new(ci as u16, cj as u16), Some(component), u32::MAX).unwrap_or(start);
    GoalReach::Unreachable { nearest }
}

/// What a query did before (or instead of) its search, as [`find_path_with`] decided it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryPlan {
    /// Some navcell of the goal is reachable: the search ran to the goal itself.
    Goal,
    /// No navcell of the goal is reachable: the search ran to this navcell, the reachable one
    /// nearest the goal's centre ([`GoalReach::Unreachable`]).
    Nearest(Navcell),
    /// The start is impassable: no search, a straight escape to this navcell, the passable one
    /// nearest the start (the start itself on a grid with none).
    Escape(Navcell),
}

/// Finds a path for one class from `start` towards `goal`, as described in the module docs.
///
/// Outcomes: `Complete` when the goal is reached; `Partial(Unreachable)` with a shortest path to
/// the reachable navcell nearest the goal; `Partial(StartImpassable)` with a straight two-point
/// escape path to the nearest passable navcell (or just the start on a grid with none);
/// `Partial(NodeBudget)` as for the plain searches.
pub fn find_path(
    nav: &ClassNav,
    start: Navcell,
    goal: &Goal,
    limits: &SearchLimits,
    scratch: &mut SearchScratch,
    path: &mut Path,
) -> SearchOutcome {
    let accelerators = nav.accelerators();
    find_path_with(&nav.pass, &nav.hierarchy, start, goal, scratch, path, |goal, scratch, path| {
        find_path_jps(&nav.pass, &accelerators, start, goal, limits, scratch, path)
    })
    .0
}

/// [`find_path`]'s decisions with any search: the hierarchy (built from `pass`) decides whether
/// the start must escape and whether the goal must be replaced by the nearest reachable navcell,
/// then `search(goal, scratch, path)` runs to the goal it settled on. Returns the outcome and
/// which of the three happened. This is the one place those rules live: the simulation (through
/// [`find_path`]) and tools that choose their own search (`phalanx path --algo`) answer alike.
pub fn find_path_with(
    pass: &PassMap,
    hierarchy: &Hierarchy,
    start: Navcell,
    goal: &Goal,
    scratch: &mut SearchScratch,
    path: &mut Path,
    search: impl FnOnce(&Goal, &mut SearchScratch, &mut Path) -> SearchOutcome,
) -> (SearchOutcome, QueryPlan) {
    let Some(component) = hierarchy.component(start) else {
        let escape = hierarchy.nearest(start, None, u32::MAX).unwrap_or(start);
        path.set_escape(start, escape);
        let outcome = SearchOutcome { status: PathStatus::Partial(PartialReason::StartImpassable), expanded: 0, pushed: 0 };
        return (outcome, QueryPlan::Escape(escape));
    };
    scratch.goal.reset(goal, pass.width(), pass.height(), pass.cell_size());
    match goal_reach(hierarchy, &mut scratch.goal, start, component) {
        GoalReach::Reachable => (search(goal, scratch, path), QueryPlan::Goal),
        GoalReach::Unreachable { nearest } => {
            let substitute = Goal::navcell_center(nearest.i, nearest.j, pass.cell_size());
            let mut outcome = search(&substitute, scratch, path);
            if outcome.status == PathStatus::Complete {
                outcome.status = PathStatus::Partial(PartialReason::Unreachable);
            }
            (outcome, QueryPlan::Nearest(nearest))
        }
    }
}
