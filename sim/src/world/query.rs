//! Path queries for tools (the replay viewer's `--query`): the long-range search the path phase
//! would make for a unit's current order from where it stands, or between two points for a class,
//! with what it expanded. Read-only: nothing here changes the world, its state or its hash.

use super::jobs::{LongJob, Workspace};
use super::plan::{OrderGoal, run_long};
use super::*;
use crate::geom::off_grid_lines;

/// A long-range search's answer with what it looked at (docs/viewer.md, "Path queries").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathQuery {
    /// The class searched.
    pub class: PassClass,
    /// Where the search started (the unit's position, or the query's start).
    pub from: WorldPos,
    /// How the search ended.
    pub status: pathing::PathStatus,
    /// The navcells it closed, in index order.
    pub expanded: Vec<Navcell>,
    /// The grid path's navcells (its jump points and turning points), start first.
    pub cells: Vec<Navcell>,
    /// The waypoints a unit would walk: the grid path smoothed as the path phase smooths it.
    pub waypoints: Vec<WorldPos>,
}

/// Why a path query has no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QueryRefusal {
    /// No live unit has this id.
    NoUnit,
    /// The unit's order needs no long-range search: it has none, it is in range already, its
    /// target is gone, or it is a minimum-range retreat (planned by the short-range pathfinder).
    NoSearch,
    /// The class is not one of the world's.
    NoClass,
    /// A point lies off the map.
    OffMap,
}

impl std::fmt::Display for QueryRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::NoUnit => "no live unit has this id",
            Self::NoSearch => "the unit's current order needs no long-range search (none, in range, target gone, or a retreat)",
            Self::NoClass => "no such passability class",
            Self::OffMap => "a point lies off the map",
        })
    }
}

impl World {
    /// The long-range search the path phase would make now for `unit`'s current order, from
    /// where it stands: the same goal, start navcell, node budget and smoothing. The unit may
    /// walk something else: a group shares one search, a unit blocked by another player's
    /// standing units searches round them, a detour is the short-range pathfinder's.
    ///
    /// # Errors
    /// [`QueryRefusal::NoUnit`], or [`QueryRefusal::NoSearch`] when the order needs no search.
    pub fn query_unit_path(&self, unit: EntityId) -> Result<PathQuery, QueryRefusal> {
        let unit = self.unit(unit).ok_or(QueryRefusal::NoUnit)?;
        if unit.orders.is_empty() {
            return Err(QueryRefusal::NoSearch);
        }
        let OrderGoal::Plan { goal, anchor, short: false } = self.order_goal(unit) else { return Err(QueryRefusal::NoSearch) };
        let cell_size = self.nav.grid().cell_size();
        let job = LongJob {
            class: unit.class,
            pos: unit.pos,
            cell: self.navcell_of(unit.pos),
            goal,
            anchor: anchor.map(|a| off_grid_lines(a, cell_size)),
            group: 0,
        };
        self.run_query(&job)
    }

    /// The long-range search a unit of `class` standing at `from` would make to the point `to`.
    ///
    /// # Errors
    /// [`QueryRefusal::NoClass`] or [`QueryRefusal::OffMap`].
    pub fn query_path(&self, class: PassClass, from: WorldPos, to: WorldPos) -> Result<PathQuery, QueryRefusal> {
        if self.nav.class_nav(class).is_none() {
            return Err(QueryRefusal::NoClass);
        }
        if !self.on_map(from) || !self.on_map(to) {
            return Err(QueryRefusal::OffMap);
        }
        let cell_size = self.nav.grid().cell_size();
        let to = off_grid_lines(to, cell_size);
        let goal = Goal::point(to).map_err(|_| QueryRefusal::OffMap)?;
        let from = off_grid_lines(from, cell_size);
        let job = LongJob { class, pos: from, cell: self.navcell_of(from), goal, anchor: Some(to), group: 0 };
        self.run_query(&job)
    }

    fn run_query(&self, job: &LongJob) -> Result<PathQuery, QueryRefusal> {
        let mut ws = Workspace::default();
        let (status, waypoints) = run_long(&self.nav, job, &mut ws).ok_or(QueryRefusal::NoClass)?;
        Ok(PathQuery {
            class: job.class,
            from: job.pos,
            status,
            expanded: ws.search.closed_cells(),
            cells: ws.path.waypoints().to_vec(),
            waypoints,
        })
    }
}
