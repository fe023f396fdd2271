//! Waypoint graphs: long AI routes planned as hops between waypoints placed on the map, each hop
//! short enough for one bounded long-range search.
//!
//! # The idea
//!
//! A computer player that wants to cross a large map should not run one search over the whole of
//! it for every unit, and it should not get lost in mazes either. Map makers therefore scatter
//! waypoints over the map, close enough that each one can reach a few others by an ordinary
//! path of bounded length. Once, when the map is loaded, every pair of waypoints that can reach
//! each other within that bound is joined by an edge weighted by the length of the path. A long
//! route is then a shortest route in this small graph, and a unit walks it leg by leg, asking the
//! ordinary pathfinder only for the next leg. (This follows the UFO:AI macro-pathfinding proposal,
//! whose rules as we apply them are in docs/pathfinding-rules.md; the details here are our own.)
//!
//! A [`WaypointGraph`] is built for one passability class and one range from a [`ClassNav`] and
//! the waypoints' navcells. Waypoint ids ([`WaypointId`]) are the positions in that list.
//!
//! # The edge rule
//!
//! Let `R` be the range ([`GraphParams::range`], a fixed-point octile cost, see [`crate::grid::cost`])
//! and `c(a, b)` the cost of a shortest octile path without corner cutting between the navcells of
//! waypoints `a` and `b` (the cost [`find_path`] and the A* oracle agree on). Then:
//!
//! - The **candidate pairs** are the unordered pairs `{a, b}`, `a ≠ b`, whose octile distance
//!   (the cost of a straight-line octile walk on an empty grid) is at most `R`. No other pair can
//!   have a path of cost `≤ R`, since the octile distance is a lower bound on every path, so no
//!   other pair is ever searched. Candidate pairs depend on positions and range only, never on
//!   passability; they are found with a bucket grid of side `⌊R / STRAIGHT⌋`, not by testing all
//!   pairs.
//! - A candidate pair is an **edge** exactly when a path with `c(a, b) ≤ R` exists; its weight is
//!   `c(a, b)`. Two waypoints on the same navcell are joined by an edge of weight 0 when that
//!   navcell is passable. A waypoint on an impassable navcell has no edge (a unit could not stand
//!   there), until an update makes its navcell passable.
//!
//! **Symmetry.** On a grid that does not change during the build, `c(a, b) = c(b, a)`: a straight
//! step between two navcells is legal when both are passable, and a diagonal step when its two
//! ends and its two corner navcells are passable, which is the same condition read in either
//! direction, and a step costs the same both ways. So every path reversed is a path of the same
//! cost, and the minimum over paths is the same from either end. The graph is therefore
//! undirected, and each candidate pair is searched once, from its lower id to its higher id. (The
//! property test checks both the symmetry and the weights against A* in both directions.)
//!
//! **Bounded searches.** Every path of cost `≤ R` from `a` to `b` lies inside the region
//! `E = { p : oct(a, p) + oct(p, b) ≤ R }` (each part of the path is at least the octile
//! distance it spans), and an A*-ordered search with the consistent octile heuristic closes only
//! navcells `p` with `g(p) + oct(p, b) ≤ c(a, b)`, each once. So when `c(a, b) ≤ R`, the goal is
//! closed within `|E|` expansions. Each pair search gets a node budget equal to the area of a box
//! holding `E` (along each axis, `|a − p| + |p − b| ≤ ⌊R / STRAIGHT⌋`): a search that runs out of
//! budget proves that no path of cost `≤ R` exists. The work of a pair therefore grows with the
//! range, not with the map, and the pairs are found without a quadratic scan; the build costs at
//! most one budgeted search per candidate pair. A hierarchy look-up first rejects pairs in
//! different connected components without searching.
//!
//! # Routes and their tie-break
//!
//! [`WaypointGraph::route`] finds a shortest route from one waypoint to another;
//! [`WaypointGraph::route_from`] does the same from several possible first waypoints, each with
//! the cost of getting there (as the proposal does: the unit picks among the waypoints it can
//! reach, charging each its own approach). Routes are compared by, in order:
//!
//! 1. total cost: approach cost of the first waypoint, plus the weights of the edges taken, plus
//!    the extra costs of the waypoints visited (see priorities below), lowest first;
//! 2. number of hops (edges), fewest first;
//! 3. the sequence of waypoint ids from first to last, lexicographically smallest first.
//!
//! This order is total over distinct routes, so the chosen route is unique. It is computed by a
//! Dijkstra search backwards from the destination over `(cost, hops)` labels (which ranks the
//! first two keys exactly, because every hop adds one to the hop count), then a walk forwards from
//! the best first waypoint that always steps to the lowest-id neighbour still on an optimal route,
//! which picks the lexicographically smallest of the optimal sequences. Searching from the
//! destination is what the proposal describes as well. The property test checks routes against a
//! Bellman–Ford oracle that compares whole `(cost, hops, sequence)` labels.
//!
//! # Per-actor-type priorities
//!
//! In the proposal every actor carries a table with one number per waypoint. The numbers are set
//! when a route is chosen: the route's waypoints are numbered in order and every other waypoint
//! gets a reserved "do not use" value; the actor then walks towards the best-numbered waypoint
//! it can reach. Waypoints themselves carry no fixed number on the map.
//!
//! Here a route is returned directly as the ordered list of its waypoints ([`Route::waypoints`]),
//! which carries the same information as the numbered table. What remains of the table is the
//! part that should change route choice: a [`PriorityTable`] (one per actor type; the caller owns
//! the tables and decides which type uses which) gives each waypoint a [`WaypointPriority`]:
//!
//! - [`WaypointPriority::Excluded`] is a filter: a route for that actor type never visits the
//!   waypoint, not even as its first or last waypoint (a route to or from an excluded waypoint is
//!   `None`).
//! - [`WaypointPriority::Open`] with `extra_cost = k` adds `k × STRAIGHT` (the cost of `k`
//!   straight navcell steps) to the total cost of a route each time the route visits the
//!   waypoint, its first and last waypoints included. `k = 0` is neutral. A type can thus be
//!   steered away from a waypoint without being forbidden it, by an amount stated in path length.
//!
//! Without a table (`None`), every waypoint is open with no extra cost.
//!
//! # Starting from an arbitrary point
//!
//! [`WaypointGraph::waypoints_in_range`] lists the waypoints a point can reach by a path of cost
//! `≤ R` (same bounded search, same exact costs), and [`WaypointGraph::nearest_waypoint`] picks
//! the cheapest of them (ties to the lowest id). Both return nothing when no waypoint is in range,
//! which is the caller's cue to move locally instead, as the proposal says.
//!
//! # Updates
//!
//! When passability changes inside some dirty rectangles ([`crate::build::passability::NavWorld::update`]
//! returns them, and the [`ClassNav`] has already been updated in place),
//! [`WaypointGraph::update`] searches again exactly the candidate pairs whose answer could depend
//! on a changed navcell, and only those. The answer for a pair depends on the navcells a path of
//! cost `≤ R` can step on, all of which lie in `E` above, and on the corner navcells of its
//! diagonal steps. A corner navcell `q` of a diagonal step from `u` to `v` is one straight step
//! from each, so `oct(a, q) + oct(q, b) ≤ oct(a, u) + oct(v, b) + 2·STRAIGHT ≤ R − DIAGONAL +
//! 2·STRAIGHT`. A pair is therefore searched again when some navcell `p` of a dirty rectangle has
//! `oct(a, p) + oct(p, b) ≤ R + 2·STRAIGHT − DIAGONAL`. That test is exact on navcells, not a
//! bounding box: along one row the sum is a convex piecewise-linear function of the column with
//! integer break points, so its minimum over a run of columns is at a break point or an end of
//! the run. Pairs that had no edge before are tested the same way, so edges appear as well as
//! disappear. Nothing else changes: positions, candidate pairs and the bucket grid do not depend
//! on passability. The result equals [`WaypointGraph::build`] on the updated map (`PartialEq`,
//! checked by the property test).
//!
//! # Determinism and limits
//!
//! Costs are `u64` fixed-point octile costs, ids `u32`; there is no hash map, no floating point
//! and no clock. Candidate pairs are kept sorted by `(a, b)` and each waypoint's neighbours by id,
//! so every loop runs in the same order on every machine. At most [`MAX_WAYPOINTS`] waypoints and
//! at most [`GraphParams::max_pairs`] (itself at most [`MAX_PAIRS`]) candidate pairs; since edges
//! are a subset of candidate pairs, no update can exceed the limit checked at build time. Route
//! totals fit in `u64`: at most 65 534 hops of at most [`MAX_RANGE`] each, an approach cost of at
//! most [`MAX_RANGE`], and at most 65 535 extra costs of at most `65 535 × STRAIGHT` each stay
//! below 2^64.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};

use crate::geometry::{Fixed, WorldPos};
use crate::grid::cost::{DIAGONAL, STRAIGHT, octile};
use crate::grid::nav_grid::PassClass;
use crate::grid::navcell::{CellRect, Navcell};
use crate::grid::pass_map::PassMap;
use crate::search::driver::{Path, PathStatus, SearchLimits, SearchScratch};
use crate::search::goal::Goal;
use crate::search::long_range::{ClassNav, find_path};

/// Most waypoints in one graph (ids fit in 16 bits, so a route has at most 65 534 hops).
pub const MAX_WAYPOINTS: u32 = 65_535;

/// Most candidate pairs (pairs within octile range, each a possible edge) a graph may hold:
/// about 40 MiB of pairs, costs and adjacency at the limit.
pub const MAX_PAIRS: u32 = 1 << 20;

/// Largest range: the octile distance across the largest grid, `65 535` diagonal steps.
/// `[Units: fixed-point cost, see crate::grid::cost]`
pub const MAX_RANGE: u64 = 65_535 * DIAGONAL;

/// How far past the range a changed navcell can still matter to a pair: the corner navcells of a
/// diagonal step (see the module docs, "Updates"). `[Units: fixed-point cost]`
const CORNER_ALLOWANCE: u64 = 2 * STRAIGHT - DIAGONAL;

/// A waypoint: its position in the list the graph was built from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct WaypointId(pub u32);

impl WaypointId {
    /// The id as an index into per-waypoint tables.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl std::fmt::Display for WaypointId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// How a waypoint graph is built; the caller fills every field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphParams {
    /// The longest edge: a pair of waypoints is joined when a path between them costs at most
    /// this. [`range_of_navcells`] and [`range_of_metres`] convert lengths.
    /// `[Units: fixed-point cost, see crate::grid::cost]` `[Limit: ≤ MAX_RANGE]`
    pub range: u64,
    /// Most candidate pairs (pairs within octile range) the graph may hold; the build fails
    /// beyond it. `[Limit: ≤ MAX_PAIRS]`
    pub max_pairs: u32,
}

/// The cost of `n` straight navcell steps, as a range.
pub const fn range_of_navcells(n: u32) -> u64 {
    n as u64 * STRAIGHT
}

/// The cost of `metres` of straight walking on a grid with navcells of `cell_size` metres,
/// rounded down (so a straight path of exactly that length is within the range), saturating at
/// `u64::MAX`. A non-positive `cell_size` counts as the smallest positive one.
pub fn range_of_metres(metres: u32, cell_size: Fixed) -> u64 {
    let cell_raw = u128::try_from(cell_size.to_bits()).unwrap_or(0).max(1);
    let cost = (u128::from(metres) << crate::FIXED_FRAC_BITS) * u128::from(STRAIGHT) / cell_raw;
    u64::try_from(cost).unwrap_or(u64::MAX)
}

/// Why a graph could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaypointError {
    /// More waypoints than [`MAX_WAYPOINTS`].
    TooManyWaypoints {
        /// Waypoints given.
        count: u64,
        /// The limit.
        limit: u32,
    },
    /// A waypoint's navcell is outside the grid.
    OffGrid {
        /// The waypoint.
        waypoint: WaypointId,
        /// Its navcell.
        cell: Navcell,
    },
    /// The range is above [`MAX_RANGE`].
    RangeTooLarge {
        /// The range asked for.
        range: u64,
        /// The limit.
        limit: u64,
    },
    /// [`GraphParams::max_pairs`] is above [`MAX_PAIRS`].
    PairLimitTooLarge {
        /// The limit asked for.
        max_pairs: u32,
        /// The largest allowed.
        limit: u32,
    },
    /// More candidate pairs than [`GraphParams::max_pairs`]: waypoints too dense for the range.
    TooManyPairs {
        /// The limit that was exceeded.
        limit: u32,
    },
}

impl std::fmt::Display for WaypointError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WaypointError::TooManyWaypoints { count, limit } => write!(f, "{count} waypoints, more than the limit of {limit}"),
            WaypointError::OffGrid { waypoint, cell } => write!(f, "waypoint {waypoint} at navcell {cell} is off the grid"),
            WaypointError::RangeTooLarge { range, limit } => write!(f, "waypoint range {range} is above the limit of {limit}"),
            WaypointError::PairLimitTooLarge { max_pairs, limit } => {
                write!(f, "waypoint pair limit {max_pairs} is above the largest allowed, {limit}")
            }
            WaypointError::TooManyPairs { limit } => write!(f, "more than {limit} waypoint pairs are within range of each other"),
        }
    }
}

impl std::error::Error for WaypointError {}

/// How routes of one actor type treat one waypoint (see the module docs, "Per-actor-type
/// priorities").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WaypointPriority {
    /// Routes may visit the waypoint; each visit adds `extra_cost` straight navcell steps
    /// (`extra_cost × STRAIGHT`) to the route's cost. `0` is neutral. `[Units: straight steps]`
    Open {
        /// The added cost per visit. `[Units: straight navcell steps]`
        extra_cost: u16,
    },
    /// Routes never visit the waypoint.
    Excluded,
}

/// One actor type's priorities: a [`WaypointPriority`] per waypoint, indexed by [`WaypointId`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PriorityTable {
    entries: Vec<WaypointPriority>,
}

impl PriorityTable {
    /// Every one of `n_waypoints` waypoints open with no extra cost.
    pub fn neutral(n_waypoints: u32) -> Self {
        Self { entries: vec![WaypointPriority::Open { extra_cost: 0 }; n_waypoints as usize] }
    }

    /// A table from its entries, entry `k` for waypoint `k`.
    pub fn new(entries: Vec<WaypointPriority>) -> Self {
        Self { entries }
    }

    /// The number of waypoints it covers.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it covers no waypoint.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The priority of a waypoint.
    ///
    /// # Panics
    /// When the table has no entry for `id`.
    pub fn get(&self, id: WaypointId) -> WaypointPriority {
        self.entries[id.index()]
    }

    /// Changes the priority of a waypoint (the proposal's in-game table updates).
    ///
    /// # Panics
    /// When the table has no entry for `id`.
    pub fn set(&mut self, id: WaypointId, priority: WaypointPriority) {
        self.entries[id.index()] = priority;
    }

    /// Every entry, in id order.
    pub fn entries(&self) -> &[WaypointPriority] {
        &self.entries
    }
}

/// A waypoint reachable from somewhere, and the exact cost of getting there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WaypointReach {
    /// The waypoint.
    pub waypoint: WaypointId,
    /// The cost of a shortest path to it. `[Units: fixed-point cost]` `[Limit: ≤ MAX_RANGE]`
    pub cost: u64,
}

/// An edge of the graph: `a < b`, joined by a path of cost `cost`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Edge {
    /// The lower id.
    pub a: WaypointId,
    /// The higher id.
    pub b: WaypointId,
    /// The cost of a shortest path between their navcells. `[Units: fixed-point cost]`
    pub cost: u64,
}

/// A route through the graph, chosen by the tie-break of the module docs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Route {
    waypoints: Vec<WaypointId>,
    cost: u64,
    path_cost: u64,
}

impl Route {
    /// The waypoints to visit in order: the first waypoint, then each next one, ending with the
    /// destination. Never empty.
    pub fn waypoints(&self) -> &[WaypointId] {
        &self.waypoints
    }

    /// The number of edges taken.
    pub fn hops(&self) -> u32 {
        self.waypoints.len() as u32 - 1
    }

    /// The cost that was minimized: approach cost of the first waypoint, plus edge weights, plus
    /// the extra costs of the visited waypoints. `[Units: fixed-point cost]`
    pub fn cost(&self) -> u64 {
        self.cost
    }

    /// The length of the route on the map: approach cost plus edge weights, without extra
    /// costs. `[Units: fixed-point cost]`
    pub fn path_cost(&self) -> u64 {
        self.path_cost
    }
}

/// Reusable memory for building, updating and querying waypoint graphs. Holds only workspace
/// data: no result depends on what it was used for before, and it is never hashed or serialized.
#[derive(Clone, Debug, Default)]
pub struct WaypointScratch {
    search: SearchScratch,
    path: Path,
    /// Best `(cost, hops)` from each waypoint to the destination found so far.
    labels: Vec<Option<(u64, u32)>>,
    settled: Vec<bool>,
    is_start: Vec<bool>,
    /// Dijkstra queue: lowest `(cost, hops, id)` first.
    heap: BinaryHeap<Reverse<(u64, u32, u32)>>,
    candidates: Vec<u32>,
}

impl WaypointScratch {
    /// An empty scratch; it grows on first use.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Waypoints joined by the paths between them, for one passability class and one range. See the
/// module docs for the edge rule, routes, priorities and updates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaypointGraph {
    class: PassClass,
    /// Grid size the graph was built for. `[Units: navcells]`
    width: u32,
    height: u32,
    /// `[Units: fixed-point cost]` `[Limit: ≤ MAX_RANGE]`
    range: u64,
    /// The waypoints' navcells, by id; all on the grid.
    cells: Vec<Navcell>,
    /// Every candidate pair `(a, b)`, `a < b`, octile distance `≤ range`; sorted, no repeats.
    pairs: Vec<(u32, u32)>,
    /// The edge weight of each candidate pair, `None` when it is not an edge.
    costs: Vec<Option<u64>>,
    /// Incident candidate pairs of waypoint `k`: `adjacency[offsets[k]..offsets[k + 1]]`, each
    /// `(neighbour, pair index)`, sorted by neighbour. `offsets` has `n + 1` entries.
    offsets: Vec<u32>,
    adjacency: Vec<(u32, u32)>,
    /// `(bucket key, id)` sorted; the key is `bj << 16 | bi` for the bucket of side `bucket_side`
    /// holding the waypoint.
    buckets: Vec<(u32, u32)>,
    /// At least `⌊range / STRAIGHT⌋` (and 1), so a navcell's candidates are in the 3 × 3 buckets
    /// around its own. `[Units: navcells]` `[Limit: 1..=65535]`
    bucket_side: u32,
}

impl WaypointGraph {
    /// Builds the graph of `waypoints` (id = position in the list) for the class of `nav`, as the
    /// module docs describe: one bounded search per candidate pair.
    ///
    /// # Errors
    /// [`WaypointError`] when there are too many waypoints, one is off the grid, the range or the
    /// pair limit is too large, or the waypoints are too dense for the range (too many pairs).
    pub fn build(
        nav: &ClassNav,
        waypoints: Vec<Navcell>,
        params: &GraphParams,
        scratch: &mut WaypointScratch,
    ) -> Result<Self, WaypointError> {
        let map = nav.pass_map();
        if waypoints.len() > MAX_WAYPOINTS as usize {
            return Err(WaypointError::TooManyWaypoints { count: waypoints.len() as u64, limit: MAX_WAYPOINTS });
        }
        if params.range > MAX_RANGE {
            return Err(WaypointError::RangeTooLarge { range: params.range, limit: MAX_RANGE });
        }
        if params.max_pairs > MAX_PAIRS {
            return Err(WaypointError::PairLimitTooLarge { max_pairs: params.max_pairs, limit: MAX_PAIRS });
        }
        for (k, cell) in waypoints.iter().enumerate() {
            if u32::from(cell.i) >= map.width() || u32::from(cell.j) >= map.height() {
                return Err(WaypointError::OffGrid { waypoint: WaypointId(k as u32), cell: *cell });
            }
        }
        let bucket_side = (params.range / STRAIGHT).clamp(1, u64::from(u16::MAX)) as u32;
        let mut buckets: Vec<(u32, u32)> = waypoints.iter().enumerate().map(|(k, c)| (bucket_key(*c, bucket_side), k as u32)).collect();
        buckets.sort_unstable();
        let n = waypoints.len();
        let mut graph = WaypointGraph {
            class: map.class(),
            width: map.width(),
            height: map.height(),
            range: params.range,
            cells: waypoints,
            pairs: Vec::new(),
            costs: Vec::new(),
            offsets: vec![0; n + 1],
            adjacency: Vec::new(),
            buckets,
            bucket_side,
        };

        // Candidate pairs, checked against the limit before anything is searched.
        let mut pairs = Vec::new();
        for a in 0..n as u32 {
            let cell_a = graph.cells[a as usize];
            graph.collect_near(cell_a, &mut scratch.candidates);
            for &b in &scratch.candidates {
                if b > a && cell_octile(cell_a, graph.cells[b as usize]) <= graph.range {
                    if pairs.len() >= params.max_pairs as usize {
                        return Err(WaypointError::TooManyPairs { limit: params.max_pairs });
                    }
                    pairs.push((a, b));
                }
            }
        }
        pairs.sort_unstable();

        // Adjacency in compressed rows, each row sorted by neighbour.
        for &(a, b) in &pairs {
            graph.offsets[a as usize + 1] += 1;
            graph.offsets[b as usize + 1] += 1;
        }
        for k in 0..n {
            graph.offsets[k + 1] += graph.offsets[k];
        }
        let mut cursor = graph.offsets.clone();
        graph.adjacency = vec![(0, 0); 2 * pairs.len()];
        for (idx, &(a, b)) in pairs.iter().enumerate() {
            graph.adjacency[cursor[a as usize] as usize] = (b, idx as u32);
            cursor[a as usize] += 1;
            graph.adjacency[cursor[b as usize] as usize] = (a, idx as u32);
            cursor[b as usize] += 1;
        }
        for k in 0..n {
            graph.adjacency[graph.offsets[k] as usize..graph.offsets[k + 1] as usize].sort_unstable();
        }

        graph.costs = pairs
            .iter()
            .map(|&(a, b)| {
                bounded_cost(nav, graph.cells[a as usize], graph.cells[b as usize], graph.range, &mut scratch.search, &mut scratch.path)
            })
            .collect();
        graph.pairs = pairs;
        Ok(graph)
    }

    /// Brings the edges up to date after passability changed inside `dirty` (the rectangles
    /// [`crate::build::passability::NavWorld::update`] returns; `nav` must already be updated). Searches
    /// again exactly the candidate pairs a changed navcell could affect (module docs, "Updates")
    /// and returns how many. Afterwards the graph equals a fresh [`WaypointGraph::build`].
    ///
    /// # Panics
    /// When `nav` is of another class or grid size than the graph was built for.
    pub fn update(&mut self, nav: &ClassNav, dirty: &[CellRect], scratch: &mut WaypointScratch) -> u32 {
        self.check_nav(nav);
        let reach = self.range + CORNER_ALLOWANCE;
        let mut searched = 0;
        for (k, &(a, b)) in self.pairs.iter().enumerate() {
            let (cell_a, cell_b) = (self.cells[a as usize], self.cells[b as usize]);
            if dirty.iter().any(|rect| region_meets_rect(cell_a, cell_b, reach, rect, self.width, self.height)) {
                self.costs[k] = bounded_cost(nav, cell_a, cell_b, self.range, &mut scratch.search, &mut scratch.path);
                searched += 1;
            }
        }
        searched
    }

    /// The class the graph was built for.
    pub fn class(&self) -> PassClass {
        self.class
    }

    /// The range. `[Units: fixed-point cost]`
    pub fn range(&self) -> u64 {
        self.range
    }

    /// The number of waypoints.
    pub fn n_waypoints(&self) -> u32 {
        self.cells.len() as u32
    }

    /// The navcell of a waypoint.
    ///
    /// # Panics
    /// When `id` is not a waypoint of the graph.
    pub fn cell(&self, id: WaypointId) -> Navcell {
        self.cells[id.index()]
    }

    /// The number of candidate pairs (pairs within octile range, each searched once).
    pub fn n_candidate_pairs(&self) -> u32 {
        self.pairs.len() as u32
    }

    /// The number of edges.
    pub fn n_edges(&self) -> u32 {
        self.costs.iter().filter(|c| c.is_some()).count() as u32
    }

    /// Every edge, ordered by `(a, b)`.
    pub fn edges(&self) -> impl Iterator<Item = Edge> + '_ {
        self.pairs.iter().zip(&self.costs).filter_map(|(&(a, b), cost)| cost.map(|cost| Edge { a: WaypointId(a), b: WaypointId(b), cost }))
    }

    /// The weight of the edge between two waypoints, `None` when they are not joined (or equal).
    ///
    /// # Panics
    /// When either id is not a waypoint of the graph.
    pub fn edge_cost(&self, a: WaypointId, b: WaypointId) -> Option<u64> {
        let row = self.row(a.0);
        let at = row.binary_search_by_key(&b.0, |&(w, _)| w).ok()?;
        self.costs[row[at].1 as usize]
    }

    /// The waypoints joined to `id`, with the edge weights, by increasing id.
    ///
    /// # Panics
    /// When `id` is not a waypoint of the graph.
    pub fn neighbors(&self, id: WaypointId) -> impl Iterator<Item = WaypointReach> + '_ {
        self.row(id.0).iter().filter_map(|&(w, pair)| self.costs[pair as usize].map(|cost| WaypointReach { waypoint: WaypointId(w), cost }))
    }

    /// Writes into `out` (cleared first) every waypoint that a path of cost `≤ range` joins to
    /// the navcell of `start`, with that path's exact cost, by increasing id. The navcell is the
    /// one holding `start`, clamped onto the grid (as the simulation picks start navcells); when it
    /// is impassable, nothing is in range (a stuck unit escapes first).
    ///
    /// # Panics
    /// When `nav` is of another class or grid size than the graph was built for.
    pub fn waypoints_in_range(&self, nav: &ClassNav, start: WorldPos, scratch: &mut WaypointScratch, out: &mut Vec<WaypointReach>) {
        out.clear();
        self.for_each_in_range(nav, start, scratch, |reach| out.push(reach));
    }

    /// The waypoint of [`WaypointGraph::waypoints_in_range`] with the lowest cost (ties to the
    /// lowest id), or `None` when no waypoint is in range: then the caller should move locally.
    ///
    /// # Panics
    /// When `nav` is of another class or grid size than the graph was built for.
    pub fn nearest_waypoint(&self, nav: &ClassNav, start: WorldPos, scratch: &mut WaypointScratch) -> Option<WaypointReach> {
        let mut best: Option<WaypointReach> = None;
        self.for_each_in_range(nav, start, scratch, |reach| {
            if best.is_none_or(|b| (reach.cost, reach.waypoint) < (b.cost, b.waypoint)) {
                best = Some(reach);
            }
        });
        best
    }

    /// The route from `from` to `to` (see [`WaypointGraph::route_from`]), starting with no
    /// approach cost.
    ///
    /// # Panics
    /// As [`WaypointGraph::route_from`].
    pub fn route(
        &self,
        from: WaypointId,
        to: WaypointId,
        priorities: Option<&PriorityTable>,
        scratch: &mut WaypointScratch,
    ) -> Option<Route> {
        self.route_from(&[WaypointReach { waypoint: from, cost: 0 }], to, priorities, scratch)
    }

    /// The best route to `to` that starts at one of `starts`, each charged its approach cost
    /// (typically from [`WaypointGraph::waypoints_in_range`]), under the order of the module docs
    /// (total cost, then hops, then the id sequence) and the priorities of one actor type (`None`:
    /// every waypoint open, no extra cost). `None` when no start is joined to `to` through
    /// waypoints that are not excluded, or when `to` or every start is excluded.
    ///
    /// # Panics
    /// When an id is not a waypoint of the graph, an approach cost is above [`MAX_RANGE`], or the
    /// priority table does not have one entry per waypoint.
    pub fn route_from(
        &self,
        starts: &[WaypointReach],
        to: WaypointId,
        priorities: Option<&PriorityTable>,
        scratch: &mut WaypointScratch,
    ) -> Option<Route> {
        let n = self.cells.len();
        assert!(to.index() < n, "destination {to} is not one of the {n} waypoints");
        for s in starts {
            assert!(s.waypoint.index() < n, "start {} is not one of the {n} waypoints", s.waypoint);
            assert!(s.cost <= MAX_RANGE, "approach cost {} of start {} is above MAX_RANGE", s.cost, s.waypoint);
        }
        if let Some(table) = priorities {
            assert_eq!(table.len(), n, "the priority table must have one entry per waypoint");
        }
        let extra = |k: u32| -> Option<u64> {
            match priorities.map_or(WaypointPriority::Open { extra_cost: 0 }, |t| t.entries[k as usize]) {
                WaypointPriority::Open { extra_cost } => Some(u64::from(extra_cost) * STRAIGHT),
                WaypointPriority::Excluded => None,
            }
        };
        let to_extra = extra(to.0)?;

        let WaypointScratch { labels, settled, is_start, heap, .. } = scratch;
        labels.clear();
        labels.resize(n, None);
        settled.clear();
        settled.resize(n, false);
        is_start.clear();
        is_start.resize(n, false);
        heap.clear();
        let mut unsettled_starts = 0u32;
        for s in starts {
            if !is_start[s.waypoint.index()] && extra(s.waypoint.0).is_some() {
                is_start[s.waypoint.index()] = true;
                unsettled_starts += 1;
            }
        }
        if unsettled_starts == 0 {
            return None;
        }

        // Dijkstra from the destination over (cost, hops) labels; a label counts the extra cost of
        // every waypoint from its own to the destination, both included. It stops once every
        // start is settled: the waypoints of their optimal routes have lower labels (one hop
        // fewer each step), so they are settled already.
        labels[to.index()] = Some((to_extra, 0));
        heap.push(Reverse((to_extra, 0, to.0)));
        while let Some(Reverse((cost, hops, v))) = heap.pop() {
            if settled[v as usize] {
                continue;
            }
            settled[v as usize] = true;
            if is_start[v as usize] {
                unsettled_starts -= 1;
                if unsettled_starts == 0 {
                    break;
                }
            }
            for &(w, pair) in self.row(v) {
                let (Some(weight), Some(w_extra)) = (self.costs[pair as usize], extra(w)) else { continue };
                if settled[w as usize] {
                    continue;
                }
                let candidate = (cost + weight + w_extra, hops + 1);
                if labels[w as usize].is_none_or(|label| candidate < label) {
                    labels[w as usize] = Some(candidate);
                    heap.push(Reverse((candidate.0, candidate.1, w)));
                }
            }
        }

        // The first waypoint: lowest (approach + label cost, hops, id).
        let mut best: Option<(u64, u32, u32, u64)> = None;
        for s in starts {
            let k = s.waypoint.index();
            if !settled[k] {
                continue;
            }
            let (cost, hops) = labels[k].expect("a settled waypoint has a label");
            let key = (s.cost + cost, hops, s.waypoint.0, s.cost);
            if best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        }
        let (total, _, first, approach) = best?;

        // Forwards along optimal routes, always to the lowest-id neighbour that stays optimal.
        let mut waypoints = vec![WaypointId(first)];
        let mut path_cost = approach;
        let mut v = first;
        while v != to.0 {
            let (v_cost, v_hops) = labels[v as usize].expect("a waypoint on an optimal route has a label");
            let v_extra = extra(v).expect("a labelled waypoint is open");
            let (next, weight) = self
                .row(v)
                .iter()
                .find_map(|&(w, pair)| {
                    let weight = self.costs[pair as usize]?;
                    let (w_cost, w_hops) = labels[w as usize]?;
                    (settled[w as usize] && w_hops + 1 == v_hops && w_cost + weight + v_extra == v_cost).then_some((w, weight))
                })
                .expect("a labelled waypoint other than the destination has a neighbour one hop closer on an optimal route");
            waypoints.push(WaypointId(next));
            path_cost += weight;
            v = next;
        }
        Some(Route { waypoints, cost: total, path_cost })
    }

    /// Draws the class's passability (`#` impassable, `.` passable), the navcells of `legs` (`*`)
    /// and the waypoints (ids `0`–`9`, then `a`–`z`, then `@`), north row first; then one line per
    /// edge, and one for `route` when given. Costs are written as exact straight and diagonal step
    /// counts.
    pub fn render_ascii(&self, map: &PassMap, legs: &[Path], route: Option<&Route>) -> String {
        let (w, h) = (map.width() as usize, map.height() as usize);
        let mut canvas: Vec<Vec<u8>> =
            (0..h).map(|j| (0..w).map(|i| if map.is_passable(Navcell::new(i as u16, j as u16)) { b'.' } else { b'#' }).collect()).collect();
        for leg in legs {
            for cell in leg.cells() {
                if let Some(row) = canvas.get_mut(usize::from(cell.j))
                    && let Some(ch) = row.get_mut(usize::from(cell.i))
                {
                    *ch = b'*';
                }
            }
        }
        for (k, cell) in self.cells.iter().enumerate() {
            if let Some(row) = canvas.get_mut(usize::from(cell.j))
                && let Some(ch) = row.get_mut(usize::from(cell.i))
            {
                *ch = waypoint_char(k as u32);
            }
        }
        let mut out = String::new();
        for row in canvas.iter().rev() {
            out.push_str(std::str::from_utf8(row).expect("the canvas holds ASCII only"));
            out.push('\n');
        }
        for edge in self.edges() {
            out.push_str(&format!("edge {}-{}: {}\n", edge.a, edge.b, steps_text(edge.cost)));
        }
        if let Some(route) = route {
            let ids: Vec<String> = route.waypoints.iter().map(|id| id.to_string()).collect();
            let extra = (route.cost - route.path_cost) / STRAIGHT;
            out.push_str(&format!(
                "route {}: {} hops, {}, extra {extra} straight\n",
                ids.join(" > "),
                route.hops(),
                steps_text(route.path_cost)
            ));
        }
        out
    }

    fn row(&self, k: u32) -> &[(u32, u32)] {
        &self.adjacency[self.offsets[k as usize] as usize..self.offsets[k as usize + 1] as usize]
    }

    fn check_nav(&self, nav: &ClassNav) {
        let map = nav.pass_map();
        assert!(
            map.class() == self.class && map.width() == self.width && map.height() == self.height,
            "the waypoint graph was built for another class or grid"
        );
    }

    /// Appends to `out` (cleared first) the ids of the waypoints in the 3 × 3 buckets around
    /// `cell`'s bucket: a superset of those within octile range. Unordered.
    fn collect_near(&self, cell: Navcell, out: &mut Vec<u32>) {
        out.clear();
        let (bi, bj) = (i64::from(cell.i) / i64::from(self.bucket_side), i64::from(cell.j) / i64::from(self.bucket_side));
        for nj in (bj - 1).max(0)..=(bj + 1).min(i64::from(u16::MAX)) {
            for ni in (bi - 1).max(0)..=(bi + 1).min(i64::from(u16::MAX)) {
                let key = ((nj as u32) << 16) | ni as u32;
                let lo = self.buckets.partition_point(|&(k, _)| k < key);
                let hi = self.buckets.partition_point(|&(k, _)| k <= key);
                out.extend(self.buckets[lo..hi].iter().map(|&(_, id)| id));
            }
        }
    }

    /// Calls `visit` with every waypoint in range of `start`, by increasing id.
    fn for_each_in_range(&self, nav: &ClassNav, start: WorldPos, scratch: &mut WaypointScratch, mut visit: impl FnMut(WaypointReach)) {
        self.check_nav(nav);
        if self.cells.is_empty() {
            return;
        }
        let map = nav.pass_map();
        let cell_raw = map.cell_size().to_bits().max(1);
        let clamp = |v: Fixed, n: u32| v.to_bits().div_euclid(cell_raw).clamp(0, i64::from(n) - 1) as u16;
        let cell = Navcell::new(clamp(start.x, map.width()), clamp(start.z, map.height()));
        if nav.hierarchy().component(cell).is_none() {
            return;
        }
        self.collect_near(cell, &mut scratch.candidates);
        scratch.candidates.sort_unstable();
        for &id in &scratch.candidates {
            let target = self.cells[id as usize];
            if let Some(cost) = bounded_cost(nav, cell, target, self.range, &mut scratch.search, &mut scratch.path) {
                visit(WaypointReach { waypoint: WaypointId(id), cost });
            }
        }
    }
}

/// The bucket key of a navcell: `bj << 16 | bi`.
fn bucket_key(cell: Navcell, side: u32) -> u32 {
    ((u32::from(cell.j) / side) << 16) | (u32::from(cell.i) / side)
}

/// The octile distance between two navcells.
fn cell_octile(a: Navcell, b: Navcell) -> u64 {
    octile(u64::from(a.i.abs_diff(b.i)), u64::from(a.j.abs_diff(b.j)))
}

/// The exact cost of a shortest path from `from` to `to` when it is at most `range`, else
/// `None`; one search with a node budget that bounds it by the range (module docs, "Bounded
/// searches").
fn bounded_cost(nav: &ClassNav, from: Navcell, to: Navcell, range: u64, scratch: &mut SearchScratch, path: &mut Path) -> Option<u64> {
    let hierarchy = nav.hierarchy();
    let (Some(from_component), Some(to_component)) = (hierarchy.component(from), hierarchy.component(to)) else {
        return None;
    };
    if from_component != to_component || cell_octile(from, to) > range {
        return None;
    }
    let map = nav.pass_map();
    let area = reach_box(from, to, range, map.width(), map.height()).map_or(0, |rect| rect.area());
    let limits = SearchLimits { node_budget: area.clamp(1, u64::from(u32::MAX)) as u32 };
    let goal = Goal::navcell_center(to.i, to.j, map.cell_size());
    let outcome = find_path(nav, from, &goal, &limits, scratch, path);
    (outcome.status == PathStatus::Complete && path.cost() <= range).then(|| path.cost())
}

/// A box holding every navcell `p` with `oct(a, p) + oct(p, b) ≤ reach`, clipped to the grid:
/// along each axis `|a − p| + |p − b| ≤ ⌊reach / STRAIGHT⌋`, since an octile distance is at least
/// `STRAIGHT` times the distance along either axis. `None` when no navcell qualifies.
fn reach_box(a: Navcell, b: Navcell, reach: u64, width: u32, height: u32) -> Option<CellRect> {
    let steps = reach / STRAIGHT;
    let axis = |p: u16, q: u16, n: u32| -> Option<(u32, u32)> {
        let (lo, hi) = (u64::from(p.min(q)), u64::from(p.max(q)));
        let spare = steps.checked_sub(hi - lo)? / 2;
        Some((lo.saturating_sub(spare) as u32, (hi + spare + 1).min(u64::from(n)) as u32))
    };
    let (i0, i1) = axis(a.i, b.i, width)?;
    let (j0, j1) = axis(a.j, b.j, height)?;
    let rect = CellRect::new(i0, j0, i1, j1);
    (!rect.is_empty()).then_some(rect)
}

/// Whether some navcell `p` of `rect` (clipped to the grid) has `oct(a, p) + oct(p, b) ≤ reach`.
/// Exact: along a row, the sum is convex and piecewise linear in the column, with break points
/// at `a.i`, `a.i ± dy_a`, `b.i`, `b.i ± dy_b` (`dy` the row distances), so its minimum over a run
/// of columns is at one of those clamped into the run, or at an end of the run.
fn region_meets_rect(a: Navcell, b: Navcell, reach: u64, rect: &CellRect, width: u32, height: u32) -> bool {
    let Some(bounds) = reach_box(a, b, reach, width, height) else { return false };
    let r = rect.intersect(&bounds);
    if r.is_empty() {
        return false;
    }
    let (ai, aj, bi, bj) = (i64::from(a.i), i64::from(a.j), i64::from(b.i), i64::from(b.j));
    let (lo, hi) = (i64::from(r.i0), i64::from(r.i1) - 1);
    for j in i64::from(r.j0)..i64::from(r.j1) {
        let (dya, dyb) = ((aj - j).abs(), (bj - j).abs());
        let sum = |i: i64| octile((i - ai).unsigned_abs(), dya as u64) + octile((i - bi).unsigned_abs(), dyb as u64);
        let candidates = [lo, hi, ai, ai - dya, ai + dya, bi, bi - dyb, bi + dyb];
        if candidates.iter().any(|&i| sum(i.clamp(lo, hi)) <= reach) {
            return true;
        }
    }
    false
}

/// The character that marks waypoint `k` in renderings.
fn waypoint_char(k: u32) -> u8 {
    match k {
        0..=9 => b'0' + k as u8,
        10..=35 => b'a' + (k - 10) as u8,
        _ => b'@',
    }
}

/// A cost as exact step counts, `"s straight + d diagonal"`. The decomposition is unique for any
/// cost below about 2^30 diagonal steps (`DIAGONAL` is odd, so two decompositions would differ by
/// a multiple of 2^30 diagonal steps).
fn steps_text(cost: u64) -> String {
    for diagonal in 0..=cost / DIAGONAL {
        let rest = cost - diagonal * DIAGONAL;
        if rest.is_multiple_of(STRAIGHT) {
            return format!("{} straight + {diagonal} diagonal", rest / STRAIGHT);
        }
    }
    format!("{cost} (not a whole number of steps)")
}

#[cfg(test)]
mod tests;
