//! The world's waypoint networks ([`crate::waypoint`]): one per class, their derived graphs kept
//! current with the grid, the players' priority tables, and the "move by waypoints" order.

use std::collections::BTreeMap;

use pathing::waypoints::{GraphParams, PriorityTable, WaypointGraph, WaypointId, WaypointPriority, WaypointReach, range_of_metres};
use pathing::{CellRect, Navcell, PassClass, WorldPos};

use super::{World, grid_navcell};
use crate::command::{Event, GoalSpec, PlayerId, RejectReason};
use crate::digest_tree::Digest;
use crate::ids::EntityId;
use crate::state_hash;
use crate::waypoint::{MAX_NET_RANGE, MAX_NET_WAYPOINTS, PAIRS_PER_WAYPOINT, PriorityEntry, WAYPOINT_RADIUS, WaypointNet};

/// A network and its graph (derived: rebuilt on load, updated per dirty rectangle).
#[derive(Debug)]
pub(crate) struct Net {
    pub(crate) spec: WaypointNet,
    pub(crate) graph: WaypointGraph,
}

/// The waypoint part of the world.
#[derive(Debug, Default)]
pub(crate) struct Waypoints {
    /// By class.
    pub(crate) nets: BTreeMap<u8, Net>,
    /// By (player, class); entries in waypoint-id order.
    pub(crate) tables: BTreeMap<(PlayerId, u8), PriorityTable>,
    /// Workspace for builds, updates and routes (never state).
    scratch: pathing::waypoints::WaypointScratch,
}

/// What the snapshot stores of the priority tables: player, class, one priority per waypoint.
pub(crate) type StoredTable = (PlayerId, u8, Vec<WaypointPriority>);

impl Waypoints {
    /// The digest of the `waypoints` component: the nets and the tables, in key order.
    pub(crate) fn digest(&self) -> Digest {
        let nets: Vec<&WaypointNet> = self.nets.values().map(|n| &n.spec).collect();
        let tables: Vec<StoredTable> = self.stored_tables();
        state_hash::digest("waypoints", &(nets, tables))
    }

    pub(crate) fn stored_tables(&self) -> Vec<StoredTable> {
        self.tables.iter().map(|(&(player, class), t)| (player, class, t.entries().to_vec())).collect()
    }
}

impl World {
    /// Sets (or, with no points, removes) the waypoint network of a class: map data, for a world
    /// being made (a scenario's `waypoints`) or changed by the world itself
    /// ([`crate::command::CommandKind::SetWaypoints`]). Every priority table of the class is dropped.
    ///
    /// # Errors
    /// [`RejectReason`] when the class is not a movement class, the range or the number of
    /// waypoints is outside its limits, a waypoint is off the map, or the waypoints are too dense
    /// for the range ([`crate::waypoint::PAIRS_PER_WAYPOINT`]).
    pub fn set_waypoints(&mut self, net: WaypointNet) -> Result<(), RejectReason> {
        self.sync_grid();
        let class = self.movement_class(net.class)?;
        if net.points.is_empty() {
            self.waypoints.nets.remove(&net.class);
        } else {
            let graph = self.build_graph(class, &net)?;
            self.waypoints.nets.insert(net.class, Net { spec: net.clone(), graph });
        }
        self.waypoints.tables.retain(|&(_, c), _| c != net.class);
        self.waypoints_digest = self.waypoints.digest();
        Ok(())
    }

    /// The waypoint network of a class, if it has one.
    pub fn waypoint_net(&self, class: u8) -> Option<&WaypointNet> {
        self.waypoints.nets.get(&class).map(|n| &n.spec)
    }

    /// The graph of a class's waypoint network (derived from the net and the grid), if it has one.
    pub fn waypoint_graph(&self, class: u8) -> Option<&WaypointGraph> {
        self.waypoints.nets.get(&class).map(|n| &n.graph)
    }

    /// A player's priority table for a class, if it set one.
    pub fn waypoint_priorities(&self, player: PlayerId, class: u8) -> Option<&PriorityTable> {
        self.waypoints.tables.get(&(player, class))
    }

    /// The class index as a movement class of this world.
    fn movement_class(&self, class: u8) -> Result<PassClass, RejectReason> {
        PassClass::new(class).filter(|c| class < self.nav.classes().len() && self.nav.class_nav(*c).is_some()).ok_or(RejectReason::BadClass)
    }

    /// Builds the graph of a net on the current grid.
    fn build_graph(&mut self, class: PassClass, net: &WaypointNet) -> Result<WaypointGraph, RejectReason> {
        if !(1..=MAX_NET_RANGE).contains(&net.range) || net.points.len() > MAX_NET_WAYPOINTS {
            return Err(RejectReason::OutOfRange);
        }
        if let Some(k) = net.points.iter().position(|p| !self.on_map(*p)) {
            return Err(RejectReason::World(format!("waypoint {k} is off the map")));
        }
        let cells: Vec<Navcell> = net.points.iter().map(|p| grid_navcell(self.nav.grid(), *p)).collect();
        let params = GraphParams {
            range: range_of_metres(net.range, self.nav.grid().cell_size()),
            max_pairs: PAIRS_PER_WAYPOINT * net.points.len() as u32,
        };
        let nav = self.nav.class_nav(class).ok_or(RejectReason::BadClass)?;
        WaypointGraph::build(nav, cells, &params, &mut self.waypoints.scratch).map_err(|e| RejectReason::World(e.to_string()))
    }

    /// Brings every graph up to date after the grid changed inside `rects`.
    pub(super) fn update_waypoint_graphs(&mut self, rects: &[CellRect]) {
        if rects.is_empty() {
            return;
        }
        let Waypoints { nets, scratch, .. } = &mut self.waypoints;
        for net in nets.values_mut() {
            if let Some(nav) = self.nav.class_nav(net.graph.class()) {
                net.graph.update(nav, rects, scratch);
            }
        }
    }

    /// [`crate::command::CommandKind::SetWaypointPriorities`].
    pub(super) fn set_waypoint_priorities(
        &mut self,
        player: PlayerId,
        class: u8,
        reset: bool,
        entries: &[PriorityEntry],
    ) -> Result<(), RejectReason> {
        let n = self.waypoints.nets.get(&class).ok_or(RejectReason::NoWaypointNet(class))?.spec.points.len();
        if entries.len() > MAX_NET_WAYPOINTS || entries.iter().any(|e| e.waypoint as usize >= n) {
            return Err(RejectReason::OutOfRange);
        }
        let table = self.waypoints.tables.entry((player, class)).or_insert_with(|| PriorityTable::neutral(n as u32));
        if reset {
            *table = PriorityTable::neutral(n as u32);
        }
        for e in entries {
            table.set(WaypointId(e.waypoint), e.priority);
        }
        self.waypoints_digest = self.waypoints.digest();
        Ok(())
    }

    /// [`crate::command::CommandKind::MoveByWaypoints`]: each unit's route, then its orders.
    pub(super) fn move_by_waypoints(
        &mut self,
        player: PlayerId,
        units: &[EntityId],
        goal: WorldPos,
        queue: bool,
        events: &mut Vec<Event>,
    ) -> Result<(), RejectReason> {
        self.check_units(player, units)?;
        self.check_order(&GoalSpec::Point(goal))?;
        // The graphs must see the obstructions placed by earlier commands of this turn.
        self.sync_grid();
        self.leave_formations(units, events);
        let mut seen: Vec<EntityId> = Vec::with_capacity(units.len());
        // Per (class, start navcell): the waypoints in range, so a group standing together is
        // searched once per navcell. Per class: the last waypoint, nearest the goal.
        let mut starts_cache: Vec<((u8, Navcell), Vec<WaypointReach>)> = Vec::new();
        let mut last_cache: BTreeMap<u8, Option<WaypointReach>> = BTreeMap::new();
        for &id in units {
            if seen.contains(&id) {
                continue;
            }
            seen.push(id);
            let unit = self.unit(id).expect("checked live");
            let class = unit.class;
            let from = match unit.orders.last() {
                Some(order) if queue => order.anchor().unwrap_or(unit.pos),
                _ => unit.pos,
            };
            let route = self.route_for(player, class, from, goal, &mut starts_cache, &mut last_cache);
            let mut orders: Vec<GoalSpec> = route.iter().map(|&center| GoalSpec::Circle { center, radius: WAYPOINT_RADIUS }).collect();
            orders.push(GoalSpec::Point(goal));
            self.give_orders(id, &orders, queue);
            events.push(Event::WaypointRoute { unit: id, waypoints: route.len() as u32 });
        }
        Ok(())
    }

    /// The centres of the waypoints of the route a unit of `class` takes from `from` to `goal`,
    /// empty when it moves locally ([`crate::waypoint`], "Moving by waypoints").
    fn route_for(
        &mut self,
        player: PlayerId,
        class: u8,
        from: WorldPos,
        goal: WorldPos,
        starts_cache: &mut Vec<((u8, Navcell), Vec<WaypointReach>)>,
        last_cache: &mut BTreeMap<u8, Option<WaypointReach>>,
    ) -> Vec<WorldPos> {
        let Waypoints { nets, tables, scratch } = &mut self.waypoints;
        let Some(net) = nets.get(&class) else { return Vec::new() };
        let graph = &net.graph;
        let Some(nav) = self.nav.class_nav(graph.class()) else { return Vec::new() };
        let grid = self.nav.grid();
        let (a, b) = (grid_navcell(grid, from), grid_navcell(grid, goal));
        let direct = pathing::cost::octile(u64::from(a.i.abs_diff(b.i)), u64::from(a.j.abs_diff(b.j)));
        if direct <= graph.range() {
            return Vec::new();
        }
        let last = *last_cache.entry(class).or_insert_with(|| graph.nearest_waypoint(nav, goal, scratch));
        let Some(last) = last else { return Vec::new() };
        let at = match starts_cache.iter().position(|(key, _)| *key == (class, a)) {
            Some(at) => at,
            None => {
                let mut starts = Vec::new();
                graph.waypoints_in_range(nav, from, scratch, &mut starts);
                starts_cache.push(((class, a), starts));
                starts_cache.len() - 1
            }
        };
        let starts = &starts_cache[at].1;
        if starts.is_empty() {
            return Vec::new();
        }
        let Some(route) = graph.route_from(starts, last.waypoint, tables.get(&(player, class)), scratch) else { return Vec::new() };
        // The map's point of each waypoint (inside the navcell the graph measured from).
        route.waypoints().iter().map(|&w| net.spec.points[w.index()]).collect()
    }

    /// Rebuilds the graphs of loaded nets and checks the loaded tables.
    pub(super) fn load_waypoints(&mut self, nets: Vec<WaypointNet>, tables: Vec<super::waypoints::StoredTable>) -> Result<(), String> {
        let mut last: Option<u8> = None;
        for net in nets {
            if last.is_some_and(|c| c >= net.class) || net.points.is_empty() {
                return Err(format!("waypoint net of class {}: out of class order, repeated or empty", net.class));
            }
            last = Some(net.class);
            let class = net.class;
            self.set_waypoints(net).map_err(|e| format!("waypoint net of class {class}: {e:?}"))?;
        }
        let mut last: Option<(PlayerId, u8)> = None;
        for (player, class, entries) in tables {
            let n = self.waypoints.nets.get(&class).map(|n| n.spec.points.len());
            if last.is_some_and(|k| k >= (player, class)) || n != Some(entries.len()) || player > self.settings.players {
                return Err(format!("waypoint priorities of player {player}, class {class}: out of order, or not one per waypoint"));
            }
            last = Some((player, class));
            self.waypoints.tables.insert((player, class), PriorityTable::new(entries));
        }
        self.waypoints_digest = self.waypoints.digest();
        Ok(())
    }

    /// The waypoint invariants: each graph belongs to its net (class, waypoint count) and each
    /// table has one entry per waypoint of its class's net.
    pub(super) fn check_waypoints(&self) -> Result<(), String> {
        for (&class, net) in &self.waypoints.nets {
            if net.spec.class != class || net.graph.class().index() != class || net.graph.n_waypoints() as usize != net.spec.points.len() {
                return Err(format!("the waypoint graph of class {class} does not belong to its net"));
            }
        }
        for (&(player, class), table) in &self.waypoints.tables {
            if self.waypoints.nets.get(&class).is_none_or(|n| n.spec.points.len() != table.len()) {
                return Err(format!("the waypoint priorities of player {player}, class {class} do not match the class's net"));
            }
        }
        Ok(())
    }
}
