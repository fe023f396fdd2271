//! Waypoint networks: long routes for computer players, planned over a graph of waypoints that
//! the map places (the UFO:AI macro-pathfinding proposal; the graph itself is
//! [`pathing::waypoints`]). This module holds the map data and the rules; the world keeps one
//! network per passability class (`sim/src/world/waypoints.rs`).
//!
//! ```
//! use pathing::refworld::{RefWorldParams, generate};
//! use pathing::{Fixed, PassClass, WorldPos};
//! use sim::{Command, CommandKind, Event};
//! use sim::waypoint::WaypointNet;
//! use sim::{Settings, World};
//!
//! let (desc, obstructions) = generate(&RefWorldParams::scaled(32, 1));
//! let mut world = World::new(desc, obstructions, Settings::default()).unwrap();
//! // Map data: a lattice of waypoints every 16 m for class 0, joined within 24 m of walking.
//! let points = (0..7).flat_map(|i| (0..7).map(move |j| WorldPos::from_int(16 + 16 * i, 16 + 16 * j))).collect();
//! world.set_waypoints(WaypointNet { class: PassClass::of(0), range: 24, points }).unwrap();
//!
//! let cmd = |turn, kind| Command { turn, player: sim::PlayerId(1), seq: 0, kind };
//! let spawn = CommandKind::Spawn { class: PassClass::of(0), at: WorldPos::from_int(14, 14), count: 1, radius: Fixed::ONE / 2, speed: Fixed::from_num(8), turn_rate: None };
//! let report = world.step(&[cmd(0, spawn)]);
//! let [Event::Spawned { unit }] = report.events[..] else { panic!() };
//!
//! // A long route: the unit walks from waypoint to waypoint across the map.
//! let go = CommandKind::MoveByWaypoints { units: vec![unit], goal: WorldPos::from_int(112, 112), queue: false };
//! let report = world.step(&[cmd(1, go)]);
//! assert!(report.events.iter().any(|e| matches!(e, Event::WaypointRoute { waypoints, .. } if *waypoints > 1)));
//! ```
//!
//! # Map data
//!
//! A [`WaypointNet`] is the map maker's part: a passability class, a range in metres and the
//! waypoints' positions. It is set when the world is made ([`crate::World::set_waypoints`],
//! which a scenario's `waypoints` field calls) or later by the world itself (player 0's
//! [`crate::CommandKind::SetWaypoints`], for a map that changes its network mid-game). A
//! class has at most one network; setting another replaces it, and an empty list of points removes
//! it. Only the net is state (saved, hashed in the `waypoints` component); its graph (which pairs of
//! waypoints a path of at most the range joins, and how long that path is) is derived: built when the
//! net is set or the world is loaded, and brought up to date from the dirty rectangles of every grid
//! change ([`pathing::waypoints::WaypointGraph::update`], which equals a fresh build).
//!
//! # Priorities
//!
//! Each player has, per class, a table of per-waypoint priorities (the proposal's per-actor tables:
//! the actor type here is "this player's units of this class"): a waypoint is open with an extra
//! cost in straight navcell steps, or excluded (`pathing::waypoints::WaypointPriority`). Without a
//! table every waypoint is open at no extra cost. A player changes its own table with
//! [`crate::CommandKind::SetWaypointPriorities`]; replacing a class's network drops every
//! table of that class, because the waypoint ids it was written for no longer mean the same.
//!
//! # Moving by waypoints
//!
//! [`crate::CommandKind::MoveByWaypoints`] gives each unit the orders of a route, decided
//! once, when the command is applied, from where the unit stands (or, for a queued order, from the
//! point its last order goes to; where it stands when that is a range order). Units of one command
//! whose starts lie in the same block of [`ROUTE_BLOCK`]² navcells share the route planned from the
//! first of them, and a turn plans at most [`ROUTE_STARTS_PER_TURN`] routes (later units move
//! locally), so commands cannot ask unbounded work of a turn. For a unit of class `c`, start `s`
//! and goal `g`:
//!
//! 1. when `c` has no network, or the octile distance from `s` to `g` is within the range (one leg
//!    reaches), the unit moves locally: an ordinary move to `g`;
//! 2. otherwise the waypoints a path of cost at most the range joins to `s` are the possible first
//!    waypoints, each charged its exact path cost, and the last waypoint is the one nearest `g` by
//!    path (ties to the lowest id) among those the player has not excluded; when either is missing,
//!    the unit moves locally;
//! 3. the route is the best route between them under the player's priorities (total cost, then
//!    hops, then the id sequence: [`pathing::waypoints`], "Routes and their tie-break"); when
//!    there is none (the waypoints are in different parts of the map, or excluded), or it has more
//!    than [`MAX_ROUTE_WAYPOINTS`] waypoints, the unit moves locally;
//! 4. the unit's orders become one circle order of radius [`WAYPOINT_RADIUS`] round each waypoint
//!    of the route, in order, then a point order to `g`. Each leg is an ordinary long-range path no
//!    longer than about the range, planned when the unit starts it, so it sees the map as it is
//!    then.
//!
//! Each unit reports [`crate::Event::WaypointRoute`] with the number of waypoints of its
//! route, 0 when it moves locally. A command that would give a unit more than
//! [`crate::MAX_ORDERS`] orders is refused.
//!
//! # A failed leg
//!
//! The world remembers, for each unit given a route, its goal and whether it was re-routed (state:
//! hashed with the networks and saved), for as long as the unit's last order is the point order to
//! that goal. When a leg fails (the unit gives up, [`crate::Event::Failed`], or its path
//! to the leg's waypoint stops short, [`crate::Event::PathPartial`]), the unit is routed
//! again from where it stands, once; the second time, or when no route applies, it gets an
//! ordinary move to its goal. Either way it reports [`crate::Event::WaypointReroute`].
//!
//! # Waypoints nothing reaches
//!
//! [`crate::CommandKind::SetWaypoints`] reports each waypoint that no edge of the new
//! graph joins to another ([`crate::Event::WaypointUnreached`]);
//! [`crate::World::isolated_waypoints`] lists them for any network.

use pathing::{Fixed, PassClass, WorldPos};
use serde::{Deserialize, Serialize};

/// Most waypoints in one network.
pub const MAX_NET_WAYPOINTS: usize = 1024;

/// Largest range of a network (see also [`MAX_NET_RANGE_NAVCELLS`]). `[Units: metres]`
pub const MAX_NET_RANGE: u32 = 128;

/// Largest range of a network in navcells (a range in metres on a fine grid is refused beyond
/// it): each pair search is bounded by a box of about `(2 × range)²` navcells.
pub const MAX_NET_RANGE_NAVCELLS: u32 = 128;

/// Most candidate pairs of a network, whatever its size: the build and a full update (after a
/// terrain edit) are at most this many bounded searches.
pub const MAX_NET_PAIRS: u32 = 4096;

/// Most waypoints of a route; a longer one is not taken (the unit moves locally).
pub const MAX_ROUTE_WAYPOINTS: usize = 127;

/// Side of the blocks that share a route within one command: units whose start navcells fall in
/// the same block of `ROUTE_BLOCK × ROUTE_BLOCK` navcells take the route planned from the first
/// of them. `[Units: navcells]`
pub const ROUTE_BLOCK: u16 = 8;

/// Most routes planned from a new start block in one turn, over all commands; once they are
/// used, further units move locally. Bounds the work commands can ask of a turn.
pub const ROUTE_STARTS_PER_TURN: u32 = 32;

/// Candidate pairs a network may have per waypoint (pairs of waypoints within the range as the
/// crow flies in octile terms; each is searched once when the graph is built): a network denser
/// than this for its range is refused, which bounds the build at
/// `PAIRS_PER_WAYPOINT × waypoints` bounded searches.
pub const PAIRS_PER_WAYPOINT: u32 = 24;

/// Radius of the circle order a unit is given round each waypoint of its route: close enough that
/// the next leg starts where the graph measured it, loose enough that a group does not queue for
/// one point. `[Units: metres]`
pub const WAYPOINT_RADIUS: Fixed = Fixed::const_from_int(3);

/// One class's waypoint network as the map gives it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WaypointNet {
    /// The passability class whose units use it (a movement class).
    pub class: PassClass,
    /// Two waypoints are joined when a path of at most this length joins them.
    /// `[Units: metres] [Limit: 1..=MAX_NET_RANGE]`
    pub range: u32,
    /// The waypoints, id = position in the list; each on the map.
    /// `[Limit: ≤ MAX_NET_WAYPOINTS]`
    pub points: Vec<WorldPos>,
}

/// One entry of a priority change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PriorityEntry {
    /// The waypoint's id (its position in the network's list).
    pub waypoint: u32,
    /// Its new priority for the sender's units of the class.
    pub priority: pathing::waypoints::WaypointPriority,
}
