//! Navcell grids and long-range pathfinding for the Phalanx deterministic lockstep core.
//!
//! # How it works
//!
//! A [`NavGrid`] stores, for every navcell, one impassable bit per passability class (up to 16).
//! Searches read one class at a time through a [`PassMap`]: the class's passability as two bit planes
//! (row-major and column-major), so that jump point search scans 64 navcells per machine word in
//! every straight direction. The grid is built from text ([`movingai`], [`grid_text`]) or by later
//! layers (terrain, obstructions); the map is rebuilt or patched ([`PassMap::update_rect`]) when it
//! changes. Queries only read it.
//!
//! The front door is [`find_path`]: one class's navigation data, a [`ClassNav`] (its bit planes,
//! optional jump tables and landmarks, and the [`Hierarchy`] that knows which navcells can reach
//! which), answers a query from a start navcell to a [`Goal`]. It first asks the hierarchy whether
//! the goal can be reached at all, so an unreachable goal is replaced by the reachable navcell
//! nearest it instead of exhausting the map, and a start on an impassable navcell gets an escape
//! path; then it runs one jump point search. A query takes a caller-owned [`SearchScratch`], reused
//! across queries so that a warm query allocates nothing, and a node budget; running out of budget,
//! or finding the goal unreachable, gives a partial path to the best node reached rather than an
//! error.
//!
//! Under it, one search runs over a bare [`PassMap`]: [`find_path_jps`] with optional
//! [`Accelerators`], and [`find_path_astar`], the oracle. Both share one driver, one cost model and
//! one tie-break, move octilinearly without cutting corners, cost `1` per straight and `√2` per
//! diagonal step in exact 30-bit fixed point ([`cost`]), and return the same optimal cost. The
//! accelerators are precomputed tables that change the speed, never the cost:
//!
//! - A [`JumpTable`] (16 bytes per navcell) replaces every scan by a look-up ("JPS+"): same
//!   successors, same tie-break, so the same paths, faster where scans are long.
//! - A [`Landmarks`] table holds the exact distances from a few landmarks to every navcell (32
//!   bytes per navcell with 8 landmarks), and the triangle inequality turns them into a lower bound
//!   that sees walls: 2–7× fewer expansions on maps of rooms, corridors and mazes; JPS+ with
//!   landmarks is the fastest search here (BENCHMARKS.md). [`find_path_astar`] takes the same
//!   table. The table stays valid while navcells are only blocked; it must be rebuilt after any
//!   becomes passable. A [`passability::NavWorld`] builds it for the classes of
//!   [`passability::WorldDesc::landmark_classes`] from the grid with every area open and no
//!   obstruction square, so it never needs a rebuild until the terrain changes.
//!
//! Goals ([`Goal`]) are points, circles, oriented squares and their inverted forms (minimum
//! ranges), with the exact "navcell inside goal" predicate of the 0 A.D. design.
//!
//! Near a unit, [`find_short_path`] plans again among other units: a points-of-visibility A* in a
//! box around the unit, over the navcell outlines of the class (one-sided edges that agree exactly
//! with the movement test [`collide::segment_clear`]) and the squares of other units grown by the
//! mover's radius ([`short_range`]).
//!
//! A whole world's geometry becomes these grids in [`passability`]: a [`passability::NavWorld`] is
//! built from a [`passability::WorldDesc`] (terrain and water, [`terrain`]; map border; polygon
//! areas and obstacles, [`polygon`]; passability classes, [`classes`]) and obstruction squares
//! rasterized by [`raster`], keeps one [`ClassNav`] (bit planes, optional jump tables and the
//! [`Hierarchy`]) per movement class, and brings them up to date per dirty rectangle as
//! obstructions, areas and terrain change. [`placement`] answers building and unit placement,
//! [`flow_field`] and [`waypoints`] serve formations and long AI routes, and [`refworld`] generates
//! the reference world of [`refworld`] (the one `sim`'s quick start, the benchmarks and the demo use).
//!
//! Nothing here uses floating point, a clock, randomness or hash-map iteration: the same inputs give
//! the same path on every machine.
//!
//! # Source layout
//!
//! The folders of `src/` follow the split between building and querying: the build side turns
//! descriptions into grids, the query side only reads them.
//!
//! - `grid/`: the navcell grid and the forms queries read (navcells, [`NavGrid`], [`PassMap`],
//!   [`cost`], ASCII renderings).
//! - `geometry/`: fixed-point world coordinates and exact predicates ([`decimal`], [`trig`]).
//! - `build/`: terrain, passability classes, polygons, rasterization, the per-class grids of a
//!   whole world ([`passability`]), placement and the reference world.
//! - `search/`: the long-range searches (driver, jump point search, the A* oracle, jump tables,
//!   landmarks, goals, [`smoothing`]) and the per-class front door [`find_path`].
//! - `hierarchy/`: chunks, regions and components for reachability and nearest-navcell queries.
//! - `local/`: movement near a unit ([`collide`], [`short_range`], [`flow_field`]).
//! - `routes/`: waypoint graphs for long AI routes ([`waypoints`]).
//! - `formats/`: the Moving AI and grid text readers ([`movingai`], [`grid_text`]).
//!
//! The folders are private: the public modules keep their short paths (`pathing::terrain`), and
//! the rest of the API is re-exported flat (`pathing::NavGrid`, `pathing::find_path`). Large
//! modules keep their unit tests in a `tests.rs` file beside them.
//!
//! # Quick start
//!
//! ```
//! use pathing::{ClassNav, Goal, Path, PathStatus, SearchLimits, SearchScratch, find_path};
//! use pathing::movingai;
//!
//! let map = movingai::parse_map("type octile\nheight 3\nwidth 4\nmap\n....\n.@@.\n....\n").unwrap();
//! let nav = ClassNav::build(&map.grid, movingai::LAND);
//! let start = map.to_navcell(0, 1).unwrap();
//! let goal_cell = map.to_navcell(3, 1).unwrap();
//! let goal = Goal::navcell_center(goal_cell.i, goal_cell.j, map.grid.cell_size());
//!
//! let mut scratch = SearchScratch::new();
//! let mut path = Path::new();
//! let outcome = find_path(&nav, start, &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut path);
//! assert_eq!(outcome.status, PathStatus::Complete);
//! // Around the wall: corners cannot be cut, so five straight steps.
//! assert_eq!((path.steps().straight, path.steps().diagonal), (5, 0));
//! assert_eq!(path.waypoints().first(), Some(&start));
//! assert_eq!(path.waypoints().last(), Some(&goal_cell));
//! ```
//!
//! The same query on the bare bit planes, without the hierarchy, with the accelerators spelled out:
//!
//! ```
//! use pathing::{Accelerators, Goal, JumpTable, Navcell, PassMap, Path, PathStatus, SearchLimits, SearchScratch, find_path_jps};
//! use pathing::movingai;
//!
//! let map = movingai::parse_map("type octile\nheight 3\nwidth 4\nmap\n....\n.@@.\n....\n").unwrap();
//! let pass = PassMap::build(&map.grid, movingai::LAND);
//! let table = JumpTable::build(&pass);
//! let accelerators = Accelerators { jump_table: Some(&table), landmarks: None };
//! let goal = Goal::navcell_center(3, 1, map.grid.cell_size());
//!
//! let (mut scratch, mut path) = (SearchScratch::new(), Path::new());
//! let start = Navcell::new(0, 1);
//! let outcome = find_path_jps(&pass, &accelerators, start, &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut path);
//! assert_eq!(outcome.status, PathStatus::Complete);
//! assert_eq!(path.cost(), pathing::cost::octile(5, 0));
//! ```
#![deny(clippy::float_arithmetic)]
#![forbid(unsafe_code)]

mod build;
mod formats;
mod geometry;
mod grid;
mod hierarchy;
mod local;
mod render;
mod routes;
mod search;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;

// The public modules keep the short paths other crates name them by (`pathing::terrain::Terrain`);
// the folders above only group them by design, so each item has one public path.
pub use build::{classes, passability, placement, polygon, raster, refworld, terrain};
pub use formats::{grid_text, json, movingai};
pub use geometry::{decimal, trig};
pub use grid::collide;
pub use grid::cost;
pub use local::{flow_field, short_range};
pub use routes::waypoints;
pub use search::smoothing;

pub use build::passability::ObstructionId;
pub use build::refworld::SplitMix64;
pub use geometry::{FIXED_FRAC_BITS, Fixed, Vec2, WorldPos, cell_div_rem};
pub use grid::nav_grid::{GridError, MAX_CELL_SIZE, MAX_CLASSES, MAX_SIDE, NavGrid, PassClass};
pub use grid::navcell::{CellRect, Navcell};
pub use grid::pass_map::PassMap;
pub use hierarchy::{CHUNK_SIZE, Hierarchy, RegionId};
pub use local::short_range::{ShortOutcome, ShortPartial, ShortQuery, ShortScratch, ShortStatus, find_short_path};
pub use render::{Layers, render_ascii};
pub use search::astar::find_path_astar;
pub use search::driver::{PartialReason, Path, PathStatus, SearchLimits, SearchOutcome, SearchScratch};
pub use search::goal::{AXIS_LIMIT, COORD_LIMIT, Goal, GoalError, GoalShape, Square};
pub use search::jps::{Accelerators, find_path_jps};
pub use search::jump_table::JumpTable;
pub use search::landmarks::{Landmarks, MAX_LANDMARKS};
pub use search::long_range::{ClassNav, GoalReach, QueryPlan, SNAP_RADIUS_METRES, find_path, find_path_with};
