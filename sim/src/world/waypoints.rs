//! The world's waypoint networks ([`crate::waypoint`]): one per class, their derived graphs kept
//! current with the grid, the players' priority tables, and the "move by waypoints" order.

use std::collections::BTreeMap;

use pathing::waypoints::{
    GraphParams, PriorityTable, WaypointError, WaypointGraph, WaypointId, WaypointPriority, WaypointReach, range_of_metres,
    range_of_navcells,
};
use pathing::{CellRect, Navcell, PassClass, WorldPos};

use super::World;
use crate::command::{Event, GoalSpec, PlayerId, RejectReason};
use crate::digest_tree::Digest;
use crate::geom::grid_navcell;
use crate::ids::EntityId;
use crate::state_hash;
use crate::waypoint::{
    MAX_NET_PAIRS, MAX_NET_RANGE, MAX_NET_RANGE_NAVCELLS, MAX_NET_WAYPOINTS, MAX_ROUTE_WAYPOINTS, PAIRS_PER_WAYPOINT, PriorityEntry,
    ROUTE_BLOCK, ROUTE_STARTS_PER_TURN, WAYPOINT_RADIUS, WaypointNet,
};

/// A network and its graph (derived: rebuilt on load, updated per dirty rectangle).
#[derive(Debug)]
pub(crate) struct Net {
    pub(crate) spec: WaypointNet,
    pub(crate) graph: WaypointGraph,
}

/// The waypoint part of the world, kept in its own module so that every change to its state goes
/// through a method that notes it ([`Waypoints::take_changed`]; docs/decisions.md, "The stores note
/// every change; the digest refresh alone marks digests").
pub(crate) use store::Waypoints;

mod store {
    use std::collections::BTreeMap;

    use pathing::waypoints::{PriorityTable, WaypointGraph, WaypointScratch};
    use pathing::{PassClass, WorldPos};

    use super::Net;
    use crate::command::PlayerId;
    use crate::ids::EntityId;

    /// The nets, the priority tables and the units on routes (state), the graphs and a workspace
    /// (derived, never noted).
    #[derive(Debug, Default)]
    pub(crate) struct Waypoints {
        /// By class.
        nets: BTreeMap<PassClass, Net>,
        /// By (player, class); entries in waypoint-id order.
        tables: BTreeMap<(PlayerId, PassClass), PriorityTable>,
        /// Workspace for builds, updates and routes (never state).
        scratch: WaypointScratch,
        /// Routes planned from a new start in the current turn's commands; reset when a turn
        /// starts, so never state between turns.
        starts_this_turn: u32,
        /// The units following a route (state): each one's goal and whether it was already
        /// re-routed. An entry lives while the unit's last order is the point order to that goal.
        routes: BTreeMap<EntityId, (WorldPos, bool)>,
        /// Whether the state changed since [`Waypoints::take_changed`] last said so.
        changed: bool,
    }

    /// What [`Waypoints::route_parts`] lends a route search: the nets and tables to read, the
    /// workspace and the turn's count of route starts to change.
    pub(crate) struct RouteParts<'a> {
        pub(crate) nets: &'a BTreeMap<PassClass, Net>,
        pub(crate) tables: &'a BTreeMap<(PlayerId, PassClass), PriorityTable>,
        pub(crate) scratch: &'a mut WaypointScratch,
        pub(crate) starts_this_turn: &'a mut u32,
    }

    impl Waypoints {
        /// Whether the state changed since the last call (and forgets it).
        pub(crate) fn take_changed(&mut self) -> bool {
            std::mem::take(&mut self.changed)
        }

        /// The nets, by class.
        pub(crate) fn nets(&self) -> &BTreeMap<PassClass, Net> {
            &self.nets
        }

        /// Sets (`Some`) or removes (`None`) the net of a class, and drops the class's tables.
        pub(crate) fn replace_net(&mut self, class: PassClass, net: Option<Net>) {
            match net {
                Some(net) => {
                    self.nets.insert(class, net);
                }
                None => {
                    self.nets.remove(&class);
                }
            }
            self.tables.retain(|&(_, c), _| c != class);
            self.changed = true;
        }

        /// Every graph, to bring up to date with the grid (derived: not a change of state), and
        /// the workspace.
        pub(crate) fn graphs_mut(&mut self) -> (impl Iterator<Item = &mut WaypointGraph>, &mut WaypointScratch) {
            (self.nets.values_mut().map(|n| &mut n.graph), &mut self.scratch)
        }

        /// The workspace.
        pub(crate) fn scratch_mut(&mut self) -> &mut WaypointScratch {
            &mut self.scratch
        }

        /// The priority tables, by (player, class).
        pub(crate) fn tables(&self) -> &BTreeMap<(PlayerId, PassClass), PriorityTable> {
            &self.tables
        }

        /// A player's table for a class, made by `make` if it has none, to change.
        pub(crate) fn table_mut(&mut self, key: (PlayerId, PassClass), make: impl FnOnce() -> PriorityTable) -> &mut PriorityTable {
            self.changed = true;
            self.tables.entry(key).or_insert_with(make)
        }

        /// The units on routes.
        pub(crate) fn routes(&self) -> &BTreeMap<EntityId, (WorldPos, bool)> {
            &self.routes
        }

        /// Puts a unit on a route to `goal` (`rerouted`: whether it was routed again already).
        pub(crate) fn set_route(&mut self, unit: EntityId, goal: WorldPos, rerouted: bool) {
            self.routes.insert(unit, (goal, rerouted));
            self.changed = true;
        }

        /// Takes a unit off its route, if it is on one.
        pub(crate) fn clear_route(&mut self, unit: EntityId) {
            if self.routes.remove(&unit).is_some() {
                self.changed = true;
            }
        }

        /// Keeps the routes `keep` accepts; a change only when one is dropped.
        pub(crate) fn retain_routes(&mut self, keep: impl FnMut(&EntityId, &mut (WorldPos, bool)) -> bool) {
            let before = self.routes.len();
            self.routes.retain(keep);
            if self.routes.len() != before {
                self.changed = true;
            }
        }

        /// A new turn: no route started yet.
        pub(crate) fn start_turn(&mut self) {
            self.starts_this_turn = 0;
        }

        /// Routes started this turn.
        pub(crate) fn starts_this_turn(&self) -> u32 {
            self.starts_this_turn
        }

        /// What a route search reads and writes (nothing it changes is state).
        pub(crate) fn route_parts(&mut self) -> RouteParts<'_> {
            RouteParts { nets: &self.nets, tables: &self.tables, scratch: &mut self.scratch, starts_this_turn: &mut self.starts_this_turn }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn changes_are_noted_and_reads_and_derived_data_are_not() {
            let mut w = Waypoints::default();
            assert!(!w.take_changed(), "a new store has nothing to note");
            let unit = EntityId { index: 3, generation: 0 };
            w.set_route(unit, WorldPos::from_int(4, 5), false);
            assert!(w.take_changed());
            assert!(!w.take_changed(), "taken once");
            w.retain_routes(|_, _| true);
            w.clear_route(EntityId { index: 9, generation: 0 });
            let _ = (w.routes(), w.nets(), w.tables(), w.starts_this_turn());
            let _ = w.graphs_mut();
            let _ = w.scratch_mut();
            w.start_turn();
            assert!(!w.take_changed(), "keeping every route, clearing none, reading and the workspace change nothing");
            w.retain_routes(|_, _| false);
            assert!(w.take_changed(), "a dropped route is a change");
            w.replace_net(PassClass::of(0), None);
            assert!(w.take_changed());
            let _ = w.table_mut((PlayerId(1), PassClass::of(0)), || PriorityTable::neutral(2));
            assert!(w.take_changed());
        }
    }
}

/// What the snapshot stores of a unit following a route: the unit, its goal, re-routed already.
pub(crate) type StoredRoute = (EntityId, WorldPos, bool);

/// What the snapshot stores of the priority tables: player, class, one priority per waypoint.
pub(crate) type StoredTable = (PlayerId, PassClass, Vec<WaypointPriority>);

impl Waypoints {
    /// The digest of the `waypoints` component: the nets and the tables, in key order.
    pub(crate) fn digest(&self) -> Digest {
        let nets: Vec<&WaypointNet> = self.nets().values().map(|n| &n.spec).collect();
        let tables: Vec<StoredTable> = self.stored_tables();
        state_hash::digest("waypoints", &(nets, tables, self.stored_routes()))
    }

    pub(crate) fn stored_routes(&self) -> Vec<StoredRoute> {
        self.routes().iter().map(|(&unit, &(goal, rerouted))| (unit, goal, rerouted)).collect()
    }

    pub(crate) fn stored_tables(&self) -> Vec<StoredTable> {
        self.tables().iter().map(|(&(player, class), t)| (player, class, t.entries().to_vec())).collect()
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
        let res = self.replace_net(net);
        // Outside a turn the digest must be current at once; inside one, the turn's end makes it so.
        self.refresh_digest();
        res
    }

    /// [`World::set_waypoints`] without the digest, for the command inside a turn.
    fn replace_net(&mut self, net: WaypointNet) -> Result<(), RejectReason> {
        self.sync_grid();
        let class = self.movement_class(net.class)?;
        if net.points.is_empty() {
            self.waypoints.replace_net(net.class, None);
        } else {
            let graph = self.build_graph(class, &net)?;
            self.waypoints.replace_net(net.class, Some(Net { spec: net.clone(), graph }));
        }
        Ok(())
    }

    /// The waypoints of a class's network that no other waypoint reaches (no edge of the graph
    /// joins them to another), by increasing index; empty when the class has no network.
    pub fn isolated_waypoints(&self, class: PassClass) -> Vec<u32> {
        let Some(net) = self.waypoints.nets().get(&class) else { return Vec::new() };
        (0..net.graph.n_waypoints()).filter(|&w| net.graph.neighbors(WaypointId(w)).next().is_none()).collect()
    }

    /// [`crate::command::CommandKind::SetWaypoints`]: sets the net, then reports each waypoint no
    /// other waypoint reaches ([`Event::WaypointUnreached`]), by increasing index.
    pub(super) fn set_waypoints_reporting(&mut self, net: WaypointNet, events: &mut Vec<Event>) -> Result<(), RejectReason> {
        let class = net.class;
        self.replace_net(net)?;
        for waypoint in self.isolated_waypoints(class) {
            events.push(Event::WaypointUnreached { class, waypoint });
        }
        Ok(())
    }

    /// The waypoint network of a class, if it has one.
    pub fn waypoint_net(&self, class: PassClass) -> Option<&WaypointNet> {
        self.waypoints.nets().get(&class).map(|n| &n.spec)
    }

    /// The graph of a class's waypoint network (derived from the net and the grid), if it has one.
    pub fn waypoint_graph(&self, class: PassClass) -> Option<&WaypointGraph> {
        self.waypoints.nets().get(&class).map(|n| &n.graph)
    }

    /// A player's priority table for a class, if it set one.
    pub fn waypoint_priorities(&self, player: PlayerId, class: PassClass) -> Option<&PriorityTable> {
        self.waypoints.tables().get(&(player, class))
    }

    /// The class index as a movement class of this world.
    fn movement_class(&self, class: PassClass) -> Result<PassClass, RejectReason> {
        if class.index() < self.nav.classes().len() && self.nav.class_nav(class).is_some() {
            Ok(class)
        } else {
            Err(RejectReason::BadClass)
        }
    }

    /// Builds the graph of a net on the current grid.
    fn build_graph(&mut self, class: PassClass, net: &WaypointNet) -> Result<WaypointGraph, RejectReason> {
        let range = range_of_metres(net.range, self.nav.grid().cell_size());
        if !(1..=MAX_NET_RANGE).contains(&net.range)
            || range > range_of_navcells(MAX_NET_RANGE_NAVCELLS)
            || net.points.len() > MAX_NET_WAYPOINTS
        {
            return Err(RejectReason::OutOfRange);
        }
        if let Some(k) = net.points.iter().position(|p| !self.on_map(*p)) {
            return Err(RejectReason::WaypointOffMap { waypoint: k as u32 });
        }
        let cells: Vec<Navcell> = net.points.iter().map(|p| grid_navcell(self.nav.grid(), *p)).collect();
        let params = GraphParams { range, max_pairs: (PAIRS_PER_WAYPOINT * net.points.len() as u32).min(MAX_NET_PAIRS) };
        let nav = self.nav.class_nav(class).ok_or(RejectReason::BadClass)?;
        WaypointGraph::build(nav, cells, &params, self.waypoints.scratch_mut()).map_err(|e| match e {
            WaypointError::TooManyPairs { limit } => RejectReason::WaypointsTooDense { max_pairs: limit },
            WaypointError::OffGrid { waypoint, .. } => RejectReason::WaypointOffMap { waypoint: waypoint.0 },
            // The counts and the range were checked against the tighter limits of a net above.
            WaypointError::TooManyWaypoints { .. } | WaypointError::RangeTooLarge { .. } | WaypointError::PairLimitTooLarge { .. } => {
                RejectReason::OutOfRange
            }
        })
    }

    /// Brings every graph up to date after the grid changed inside `rects`.
    pub(super) fn update_waypoint_graphs(&mut self, rects: &[CellRect]) {
        if rects.is_empty() {
            return;
        }
        let (graphs, scratch) = self.waypoints.graphs_mut();
        for graph in graphs {
            if let Some(nav) = self.nav.class_nav(graph.class()) {
                graph.update(nav, rects, scratch);
            }
        }
    }

    /// [`crate::command::CommandKind::SetWaypointPriorities`].
    pub(super) fn set_waypoint_priorities(
        &mut self,
        player: PlayerId,
        class: PassClass,
        reset: bool,
        entries: &[PriorityEntry],
    ) -> Result<(), RejectReason> {
        let n = self.waypoints.nets().get(&class).ok_or(RejectReason::NoWaypointNet(class))?.spec.points.len();
        if entries.len() > MAX_NET_WAYPOINTS || entries.iter().any(|e| e.waypoint as usize >= n) {
            return Err(RejectReason::OutOfRange);
        }
        let table = self.waypoints.table_mut((player, class), || PriorityTable::neutral(n as u32));
        if reset {
            *table = PriorityTable::neutral(n as u32);
        }
        for e in entries {
            table.set(WaypointId(e.waypoint), e.priority);
        }
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
        let mut seen = crate::lookup::LookupSet::with_capacity(units.len());
        // Per (class, start block): the route, so a group standing together is routed once per
        // block. Per class: the last waypoint, nearest the goal.
        let mut routes: crate::lookup::LookupMap<(PassClass, u16, u16), Vec<WorldPos>> = crate::lookup::LookupMap::with_capacity(0);
        let mut last_cache: BTreeMap<PassClass, Option<WaypointReach>> = BTreeMap::new();
        let mut planned: Vec<(EntityId, Vec<GoalSpec>, u32)> = Vec::with_capacity(units.len());
        for &id in units {
            if !seen.insert(id) {
                continue;
            }
            let unit = self.unit(id).expect("checked live");
            let (class, had) = (unit.class, if queue { unit.orders.len() } else { 0 });
            let from = match unit.orders.last() {
                Some(order) if queue => order.anchor().unwrap_or(unit.pos),
                _ => unit.pos,
            };
            let cell = grid_navcell(self.nav.grid(), from);
            let key = (class, cell.i / ROUTE_BLOCK, cell.j / ROUTE_BLOCK);
            let route = match routes.get(&key) {
                Some(route) => route.clone(),
                None => {
                    let route = if self.waypoints.starts_this_turn() < ROUTE_STARTS_PER_TURN {
                        self.route_for(player, class, from, goal, &mut last_cache)
                    } else {
                        Vec::new()
                    };
                    routes.insert(key, route.clone());
                    route
                }
            };
            let mut orders: Vec<GoalSpec> = route.iter().map(|&center| GoalSpec::Circle { center, radius: WAYPOINT_RADIUS }).collect();
            orders.push(GoalSpec::Point(goal));
            if had + orders.len() > super::MAX_ORDERS {
                return Err(RejectReason::OutOfRange);
            }
            planned.push((id, orders, route.len() as u32));
        }
        self.leave_formations(units, events);
        for (id, orders, waypoints) in planned {
            self.give_orders(id, &orders, queue);
            if waypoints > 0 {
                self.waypoints.set_route(id, goal, false);
            } else {
                self.waypoints.clear_route(id);
            }
            events.push(Event::WaypointRoute { unit: id, waypoints });
        }
        Ok(())
    }

    /// The end of a turn for units on routes ([`crate::waypoint`], "A failed leg"): each unit whose
    /// leg failed this turn ([`Event::Failed`], or [`Event::PathPartial`] while a waypoint leg is
    /// its current order), in the order of those events, is routed again from where it stands, once;
    /// the second time, or when no route applies, it moves locally to its goal. Each reports
    /// [`Event::WaypointReroute`]. Then the entries of units no longer on their route are dropped.
    pub(super) fn follow_up_routes(&mut self, events: &mut Vec<Event>) {
        if self.waypoints.routes().is_empty() {
            return;
        }
        let mut seen = crate::lookup::LookupSet::with_capacity(0);
        let failed: Vec<EntityId> = events
            .iter()
            .filter_map(|e| match e {
                Event::Failed { unit, .. } | Event::PathPartial { unit } => Some(*unit),
                _ => None,
            })
            .filter(|id| self.waypoints.routes().contains_key(id) && seen.insert(*id))
            .collect();
        let mut last_cache = BTreeMap::new();
        for id in failed {
            let (goal, rerouted) = self.waypoints.routes()[&id];
            let Some(unit) = self.unit(id) else { continue };
            // A unit that gave up has no orders left; one whose path stops short of a waypoint
            // still has that leg first and the goal last.
            let on_leg = unit.orders.is_empty() || (unit.orders.len() > 1 && unit.orders.last() == Some(&GoalSpec::Point(goal)));
            if !on_leg {
                continue;
            }
            let (player, class, from) = (unit.owner, unit.class, unit.pos);
            let route = if !rerouted && self.waypoints.starts_this_turn() < ROUTE_STARTS_PER_TURN {
                self.route_for(player, class, from, goal, &mut last_cache)
            } else {
                Vec::new()
            };
            let mut orders: Vec<GoalSpec> = route.iter().map(|&center| GoalSpec::Circle { center, radius: WAYPOINT_RADIUS }).collect();
            orders.push(GoalSpec::Point(goal));
            self.give_orders(id, &orders, false);
            if route.is_empty() {
                self.waypoints.clear_route(id);
            } else {
                self.waypoints.set_route(id, goal, true);
            }
            events.push(Event::WaypointReroute { unit: id, waypoints: route.len() as u32 });
        }
        let units = &self.units;
        self.waypoints.retain_routes(|id, (goal, _)| units.get(*id).is_some_and(|u| u.orders.last() == Some(&GoalSpec::Point(*goal))));
    }

    /// The centres of the waypoints of the route a unit of `class` takes from `from` to `goal`,
    /// empty when it moves locally ([`crate::waypoint`], "Moving by waypoints").
    fn route_for(
        &mut self,
        player: PlayerId,
        class: PassClass,
        from: WorldPos,
        goal: WorldPos,
        last_cache: &mut BTreeMap<PassClass, Option<WaypointReach>>,
    ) -> Vec<WorldPos> {
        let store::RouteParts { nets, tables, scratch, starts_this_turn } = self.waypoints.route_parts();
        let Some(net) = nets.get(&class) else { return Vec::new() };
        let graph = &net.graph;
        let Some(nav) = self.nav.class_nav(graph.class()) else { return Vec::new() };
        let grid = self.nav.grid();
        let (a, b) = (grid_navcell(grid, from), grid_navcell(grid, goal));
        let direct = pathing::cost::octile(u64::from(a.i.abs_diff(b.i)), u64::from(a.j.abs_diff(b.j)));
        if direct <= graph.range() {
            return Vec::new();
        }
        let table = tables.get(&(player, class));
        let open = |w: WaypointId| table.is_none_or(|t| t.get(w) != WaypointPriority::Excluded);
        let last = *last_cache.entry(class).or_insert_with(|| {
            // The nearest waypoint to the goal that the player's units may use.
            let mut near = Vec::new();
            graph.waypoints_in_range(nav, goal, scratch, &mut near);
            near.into_iter().filter(|r| open(r.waypoint)).min_by_key(|r| (r.cost, r.waypoint))
        });
        let Some(last) = last else { return Vec::new() };
        *starts_this_turn += 1;
        let mut starts = Vec::new();
        graph.waypoints_in_range(nav, from, scratch, &mut starts);
        if starts.is_empty() {
            return Vec::new();
        }
        let Some(route) = graph.route_from(&starts, last.waypoint, table, scratch) else { return Vec::new() };
        if route.waypoints().len() > MAX_ROUTE_WAYPOINTS {
            return Vec::new();
        }
        // The map's point of each waypoint (inside the navcell the graph measured from).
        route.waypoints().iter().map(|&w| net.spec.points[w.index()]).collect()
    }

    /// Rebuilds the graphs of loaded nets and checks the loaded tables.
    pub(super) fn load_waypoints(
        &mut self,
        nets: Vec<WaypointNet>,
        tables: Vec<super::waypoints::StoredTable>,
        routes: Vec<StoredRoute>,
    ) -> Result<(), String> {
        let mut last: Option<PassClass> = None;
        for net in nets {
            if last.is_some_and(|c| c >= net.class) || net.points.is_empty() {
                return Err(format!("waypoint net of class {}: out of class order, repeated or empty", net.class));
            }
            last = Some(net.class);
            let class = net.class;
            self.replace_net(net).map_err(|e| format!("waypoint net of class {class}: {e:?}"))?;
        }
        let mut last: Option<(PlayerId, PassClass)> = None;
        for (player, class, entries) in tables {
            let n = self.waypoints.nets().get(&class).map(|n| n.spec.points.len());
            if last.is_some_and(|k| k >= (player, class)) || n != Some(entries.len()) || player.0 > self.settings.players {
                return Err(format!("waypoint priorities of player {player}, class {class}: out of order, or not one per waypoint"));
            }
            last = Some((player, class));
            *self.waypoints.table_mut((player, class), || PriorityTable::neutral(0)) = PriorityTable::new(entries);
        }
        let mut last: Option<EntityId> = None;
        for (unit, goal, rerouted) in routes {
            let on_route = self.unit(unit).is_some_and(|u| u.orders.last() == Some(&GoalSpec::Point(goal)));
            if last.is_some_and(|l| l >= unit) || !on_route {
                return Err(format!("waypoint route of unit {unit}: out of order, or the unit is not on its way to the route's goal"));
            }
            last = Some(unit);
            self.waypoints.set_route(unit, goal, rerouted);
        }
        Ok(())
    }

    /// The waypoint invariants: each graph belongs to its net (class, waypoint count) and each
    /// table has one entry per waypoint of its class's net.
    pub(super) fn check_waypoints(&self) -> Result<(), String> {
        for (&class, net) in self.waypoints.nets() {
            if net.spec.class != class || net.graph.class() != class || net.graph.n_waypoints() as usize != net.spec.points.len() {
                return Err(format!("the waypoint graph of class {class} does not belong to its net"));
            }
        }
        for (&(player, class), table) in self.waypoints.tables() {
            if self.waypoints.nets().get(&class).is_none_or(|n| n.spec.points.len() != table.len()) {
                return Err(format!("the waypoint priorities of player {player}, class {class} do not match the class's net"));
            }
        }
        Ok(())
    }
}
