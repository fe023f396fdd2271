//! Waypoint networks in the simulation: the route a "move by waypoints" order takes is the best
//! route of an independent oracle (A* for every leg, then a label-correcting search over whole
//! `(cost, hops, sequence)` labels), the graph follows the grid as obstructions come and go, the
//! players' priorities steer routes, and all of it saves, loads and replays bit for bit.

use pathing::classes::{ClassDef, ClassSet, ObstructionMode};
use pathing::passability::WorldDesc;
use pathing::terrain::CellKind;
use pathing::waypoints::WaypointPriority;
use pathing::{Fixed, Goal, Navcell, PassClass, PassMap, SearchLimits, SearchScratch, WorldPos, find_path_astar};
use sim::waypoint::{PriorityEntry, WAYPOINT_RADIUS, WaypointNet};
use sim::{Command, CommandKind, EntityId, Event, GoalSpec, PlayerId, RejectReason, Settings, SquareSpec, TurnReport, World};

const SIDE: u32 = 120;
const RANGE: u32 = 16;

/// A serpentine: three walls across a 120 m square, with gaps at the right (wall 1, z = 30), at
/// both ends (wall 2, z = 60) and at the right (wall 3, z = 90). Class 0 walks on ground
/// (clearance 0.5 m, one navcell, so the 0.5 m units fit it), class 1 is a second land class with
/// no network.
fn desc() -> WorldDesc {
    let mut cells = vec![CellKind::Ground; (SIDE * SIDE) as usize];
    let mut wall = |j: u32, from: u32, to: u32| {
        for i in from..to {
            cells[(j * SIDE + i) as usize] = CellKind::Blocked;
        }
    };
    wall(30, 0, 100);
    wall(60, 20, 105);
    wall(90, 0, 100);
    let classes = ClassSet::new(vec![
        ClassDef {
            max_water_depth: Some(Fixed::from_num(2)),
            clearance: Fixed::ONE / 2,
            ..ClassDef::unbounded("land", ObstructionMode::Pathfinding)
        },
        ClassDef {
            max_water_depth: Some(Fixed::from_num(2)),
            clearance: Fixed::ONE / 2,
            ..ClassDef::unbounded("other", ObstructionMode::Pathfinding)
        },
    ])
    .unwrap();
    WorldDesc::from_cells(SIDE, SIDE, Fixed::ONE, cells, classes).unwrap()
}

/// Waypoints every 10 m on navcell centres, except on walls.
fn net() -> WaypointNet {
    let mut points = Vec::new();
    for j in 0..12 {
        for i in 0..12 {
            let (x, z) = (10 * i + 5, 10 * j + 5);
            points.push(WorldPos::new(Fixed::from_num(x) + Fixed::ONE / 2, Fixed::from_num(z) + Fixed::ONE / 2));
        }
    }
    WaypointNet { class: PassClass::of(0), range: RANGE, points }
}

fn world() -> World {
    let mut world = World::new(desc(), Vec::new(), Settings::default()).unwrap();
    world.set_waypoints(net()).unwrap();
    world
}

fn cmd(turn: u32, player: u8, kind: CommandKind) -> Command {
    Command { turn, player: PlayerId(player), seq: 0, kind }
}

fn spawn(world: &mut World, class: PassClass, at: WorldPos) -> EntityId {
    let kind = CommandKind::Spawn { class, at, count: 1, radius: Fixed::ONE / 2, speed: Fixed::from_num(16), turn_rate: None };
    let report = world.step(&[cmd(world.turn(), 1, kind)]);
    let [Event::Spawned { unit }] = report.events[..] else { panic!("{:?}", report.events) };
    unit
}

fn pos(x: i32, z: i32) -> WorldPos {
    WorldPos::from_int(x, z)
}

fn cell(p: WorldPos) -> Navcell {
    Navcell::new(p.x.to_num::<u16>(), p.z.to_num::<u16>())
}

/// The oracle's cost of a shortest path between two navcells (A*), if one exists.
fn astar_cost(map: &PassMap, a: Navcell, b: Navcell) -> Option<u64> {
    let mut scratch = SearchScratch::new();
    let mut path = pathing::Path::new();
    let goal = Goal::navcell_center(b.i, b.j, Fixed::ONE);
    let outcome = find_path_astar(map, None, a, &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut path);
    (outcome.status == pathing::PathStatus::Complete).then(|| path.cost())
}

/// A route label, compared as routes are ordered (docs/pathfinding-rules.md): cost, then hops, then the sequence.
type Label = (u64, u32, Vec<u32>);

/// The best route from `from` to `goal` by the oracle, with every cost from A*: `None` when the
/// unit should move locally.
fn oracle_route(map: &PassMap, net: &WaypointNet, priorities: &[WaypointPriority], from: WorldPos, goal: WorldPos) -> Option<Vec<u32>> {
    let range = pathing::waypoints::range_of_metres(net.range, Fixed::ONE);
    let cells: Vec<Navcell> = net.points.iter().map(|&p| cell(p)).collect();
    let (a, b) = (cell(from), cell(goal));
    if pathing::cost::octile(u64::from(a.i.abs_diff(b.i)), u64::from(a.j.abs_diff(b.j))) <= range {
        return None;
    }
    let open = |k: usize| priorities.get(k).is_none_or(|p| *p != WaypointPriority::Excluded);
    let extra = |k: usize| match priorities.get(k) {
        Some(WaypointPriority::Open { extra_cost }) => u64::from(*extra_cost) * pathing::cost::STRAIGHT,
        _ => 0,
    };
    // The octile distance is a lower bound on every path, so farther pairs need no search.
    let octile = |x: Navcell, y: Navcell| pathing::cost::octile(u64::from(x.i.abs_diff(y.i)), u64::from(x.j.abs_diff(y.j)));
    let within = |x: Navcell, y: Navcell| if octile(x, y) > range { None } else { astar_cost(map, x, y).filter(|&c| c <= range) };
    // The last waypoint: nearest the goal by path among those not excluded, ties to the lowest id.
    let last = (0..cells.len()).filter(|&k| open(k)).filter_map(|k| within(b, cells[k]).map(|c| (c, k))).min()?.1;
    let n = cells.len();
    let mut edges = vec![Vec::new(); n];
    for x in 0..n {
        for y in x + 1..n {
            if let Some(c) = within(cells[x], cells[y]) {
                edges[x].push((y, c));
                edges[y].push((x, c));
            }
        }
    }
    // Best label from each waypoint to `last`, relaxed to a fixed point.
    let mut best: Vec<Option<Label>> = vec![None; n];
    best[last] = Some((extra(last), 0, vec![last as u32]));
    loop {
        let mut changed = false;
        for v in (0..n).filter(|&v| open(v)) {
            for &(u, w) in &edges[v] {
                let Some((cost, hops, seq)) = best[u].clone() else { continue };
                let mut s = vec![v as u32];
                s.extend(seq);
                let candidate = (cost + w + extra(v), hops + 1, s);
                if best[v].as_ref().is_none_or(|b| candidate < *b) {
                    best[v] = Some(candidate);
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    (0..n)
        .filter(|&s| open(s))
        .filter_map(|s| {
            let approach = within(a, cells[s])?;
            let (cost, hops, seq) = best[s].clone()?;
            Some((approach + cost, hops, seq))
        })
        .min()
        .map(|label| label.2)
}

/// The waypoint ids of a unit's circle orders, checking their form (circles of the waypoint radius
/// on the net's points, then one point order at the goal).
fn routed_ids(world: &World, unit: EntityId, goal: WorldPos) -> Vec<u32> {
    let net = world.waypoint_net(PassClass::of(0)).unwrap();
    let orders = &world.unit(unit).unwrap().orders;
    assert_eq!(orders.last(), Some(&GoalSpec::Point(goal)), "{orders:?}");
    orders[..orders.len() - 1]
        .iter()
        .map(|o| match *o {
            GoalSpec::Circle { center, radius } if radius == WAYPOINT_RADIUS => {
                net.points.iter().position(|&p| p == center).expect("a waypoint of the net") as u32
            }
            other => panic!("expected a waypoint circle, found {other:?}"),
        })
        .collect()
}

fn route_event(events: &[Event], unit: EntityId) -> u32 {
    events
        .iter()
        .find_map(|e| match *e {
            Event::WaypointRoute { unit: u, waypoints } if u == unit => Some(waypoints),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no route event for {unit:?} in {events:?}"))
}

fn land_map(world: &World) -> PassMap {
    world.nav().class_nav(pathing::PassClass::new(0).unwrap()).unwrap().pass_map().clone()
}

#[test]
fn a_route_by_waypoints_is_the_oracles_best_route() {
    let mut world = world();
    let starts = [pos(3, 3), pos(58, 12), pos(117, 44), pos(2, 75)];
    let goals = [pos(5, 115), pos(110, 100), pos(20, 50)];
    let map = land_map(&world);
    let mut routed = 0;
    for (k, &from) in starts.iter().enumerate() {
        let unit = spawn(&mut world, PassClass::of(0), from);
        let from = world.unit(unit).unwrap().pos;
        let goal = goals[k % goals.len()];
        let report = world.step(&[cmd(world.turn(), 1, CommandKind::MoveByWaypoints { units: vec![unit], goal, queue: false })]);
        let expected = oracle_route(&map, world.waypoint_net(PassClass::of(0)).unwrap(), &[], from, goal).unwrap_or_default();
        assert_eq!(routed_ids(&world, unit, goal), expected, "unit from {from:?} to {goal:?}");
        assert_eq!(route_event(&report.events, unit), expected.len() as u32);
        routed += usize::from(!expected.is_empty());
        // Stop it again, so the next unit's start is not crowded.
        world.step(&[cmd(world.turn(), 1, CommandKind::Stop { units: vec![unit] })]);
    }
    assert_eq!(routed, starts.len(), "every start here is far from its goal");
}

#[test]
fn a_unit_walks_its_route_to_the_goal() {
    let mut world = world();
    let unit = spawn(&mut world, PassClass::of(0), pos(4, 4));
    let goal = pos(6, 114);
    let report = world.step(&[cmd(world.turn(), 1, CommandKind::MoveByWaypoints { units: vec![unit], goal, queue: false })]);
    assert!(route_event(&report.events, unit) > 10, "the serpentine needs a long route");
    let mut arrivals = 0;
    for _ in 0..400 {
        let report = world.step(&[]);
        arrivals += report.events.iter().filter(|e| **e == Event::Arrived { unit }).count();
        world.check_invariants().unwrap();
        if world.unit(unit).unwrap().orders.is_empty() {
            break;
        }
    }
    let u = world.unit(unit).unwrap();
    assert!(u.orders.is_empty(), "still has {} orders at {:?}", u.orders.len(), u.pos);
    assert_eq!(world.navcell_of(u.pos), world.navcell_of(goal));
    assert!(arrivals > 10, "one arrival per waypoint and one at the goal, found {arrivals}");
}

#[test]
fn units_move_locally_when_no_route_applies() {
    let mut world = world();
    // Near the goal: one leg reaches.
    let near = spawn(&mut world, PassClass::of(0), pos(40, 40));
    let goal = pos(50, 45);
    let report = world.step(&[cmd(world.turn(), 1, CommandKind::MoveByWaypoints { units: vec![near], goal, queue: false })]);
    assert_eq!(route_event(&report.events, near), 0);
    assert_eq!(world.unit(near).unwrap().orders, vec![GoalSpec::Point(goal)]);
    // A class without a network.
    let other = spawn(&mut world, PassClass::of(1), pos(4, 4));
    let goal = pos(6, 114);
    let report = world.step(&[cmd(world.turn(), 1, CommandKind::MoveByWaypoints { units: vec![other], goal, queue: false })]);
    assert_eq!(route_event(&report.events, other), 0);
    assert_eq!(world.unit(other).unwrap().orders, vec![GoalSpec::Point(goal)]);
}

/// The gap of wall 2 at the left, closed by a building.
fn plug() -> CommandKind {
    let square = SquareSpec {
        x: Fixed::from_num(10),
        z: Fixed::from_num(60) + Fixed::ONE / 2,
        w: Fixed::from_num(20),
        h: Fixed::from_num(3),
        degrees: Fixed::ZERO,
    };
    CommandKind::PlaceObstruction { square, flags: 3 }
}

#[test]
fn the_graph_follows_the_grid_and_equals_a_fresh_build() {
    let mut world = world();
    let fresh = |world: &World| {
        let nav = world.nav().class_nav(pathing::PassClass::new(0).unwrap()).unwrap();
        let net = world.waypoint_net(PassClass::of(0)).unwrap();
        let cells = net.points.iter().map(|&p| world.navcell_of(p)).collect();
        let params = pathing::waypoints::GraphParams {
            range: pathing::waypoints::range_of_metres(RANGE, Fixed::ONE),
            max_pairs: sim::waypoint::PAIRS_PER_WAYPOINT * net.points.len() as u32,
        };
        pathing::waypoints::WaypointGraph::build(nav, cells, &params, &mut pathing::waypoints::WaypointScratch::new()).unwrap()
    };
    let before = world.waypoint_graph(PassClass::of(0)).unwrap().clone();
    let report = world.step(&[cmd(0, 0, plug())]);
    let [Event::ObstructionPlaced { id }] = report.events[..] else { panic!("{:?}", report.events) };
    let plugged = world.waypoint_graph(PassClass::of(0)).unwrap().clone();
    assert_eq!(plugged, fresh(&world));
    assert!(plugged.n_edges() < before.n_edges(), "the building cuts edges");
    // A unit below wall 2 bound above it now goes round by the right gap only.
    let unit = spawn(&mut world, PassClass::of(0), pos(5, 45));
    let goal = pos(5, 75);
    world.step(&[cmd(world.turn(), 1, CommandKind::MoveByWaypoints { units: vec![unit], goal, queue: false })]);
    let from = world.unit(unit).unwrap().pos;
    let expected = oracle_route(&land_map(&world), world.waypoint_net(PassClass::of(0)).unwrap(), &[], from, goal).unwrap();
    assert_eq!(routed_ids(&world, unit, goal), expected);
    let net = world.waypoint_net(PassClass::of(0)).unwrap();
    assert!(expected.iter().any(|&w| net.points[w as usize].x > Fixed::from_num(100)), "round by the right: {expected:?}");
    // The building goes: the graph is the original one again.
    world.step(&[cmd(world.turn(), 0, CommandKind::RemoveObstruction { id })]);
    assert_eq!(world.waypoint_graph(PassClass::of(0)).unwrap(), &before);
}

#[test]
fn priorities_steer_a_players_routes_and_no_one_elses() {
    let mut world = world();
    let mine = spawn(&mut world, PassClass::of(0), pos(5, 45));
    let theirs = {
        let kind = CommandKind::Spawn {
            class: PassClass::of(0),
            at: pos(7, 45),
            count: 1,
            radius: Fixed::ONE / 2,
            speed: Fixed::from_num(16),
            turn_rate: None,
        };
        let report = world.step(&[cmd(world.turn(), 2, kind)]);
        let [Event::Spawned { unit }] = report.events[..] else { panic!("{:?}", report.events) };
        unit
    };
    let goal = pos(5, 75);
    // Player 1 excludes the waypoints of the left gap of wall 2 (x = 5 and 15, z = 55 and 65).
    let net = world.waypoint_net(PassClass::of(0)).unwrap().clone();
    let gap: Vec<u32> = (0..net.points.len() as u32)
        .filter(|&k| {
            let p = net.points[k as usize];
            p.x < Fixed::from_num(20) && (Fixed::from_num(55)..=Fixed::from_num(66)).contains(&p.z)
        })
        .collect();
    assert_eq!(gap.len(), 4);
    let entries: Vec<PriorityEntry> = gap.iter().map(|&w| PriorityEntry { waypoint: w, priority: WaypointPriority::Excluded }).collect();
    let turn = world.turn();
    let report = world.step(&[
        Command {
            turn,
            player: PlayerId(1),
            seq: 0,
            kind: CommandKind::SetWaypointPriorities { class: PassClass::of(0), reset: false, entries },
        },
        Command { turn, player: PlayerId(1), seq: 1, kind: CommandKind::MoveByWaypoints { units: vec![mine], goal, queue: false } },
        Command { turn, player: PlayerId(2), seq: 0, kind: CommandKind::MoveByWaypoints { units: vec![theirs], goal, queue: false } },
    ]);
    assert!(report.events.iter().all(|e| !matches!(e, Event::Rejected { .. })), "{:?}", report.events);
    let table = world.waypoint_priorities(PlayerId(1), PassClass::of(0)).unwrap().entries().to_vec();
    let map = land_map(&world);
    for (unit, priorities) in [(mine, table.clone()), (theirs, Vec::new())] {
        let from = world.unit(unit).unwrap().pos;
        let expected = oracle_route(&map, &net, &priorities, from, goal).unwrap();
        assert_eq!(routed_ids(&world, unit, goal), expected, "unit {unit:?}");
    }
    let routes = [routed_ids(&world, mine, goal), routed_ids(&world, theirs, goal)];
    assert!(routes[0].iter().all(|w| !gap.contains(w)), "player 1 avoids the excluded waypoints: {:?}", routes[0]);
    assert!(routes[1].iter().any(|w| gap.contains(w)), "player 2 takes the short way through the left gap: {:?}", routes[1]);
    // Replacing the network drops the tables written for it.
    world.step(&[cmd(world.turn(), 0, CommandKind::SetWaypoints { net: net.clone() })]);
    assert!(world.waypoint_priorities(PlayerId(1), PassClass::of(0)).is_none());
}

#[test]
fn waypoint_commands_are_checked() {
    let mut world = world();
    let unit = spawn(&mut world, PassClass::of(0), pos(4, 4));
    let turn = world.turn();
    let far = WaypointNet { class: PassClass::of(0), range: RANGE, points: vec![pos(500, 5)] };
    let kinds = [
        (1, CommandKind::SetWaypoints { net: net() }, RejectReason::WorldOnly),
        (0, CommandKind::SetWaypoints { net: WaypointNet { range: 0, ..net() } }, RejectReason::OutOfRange),
        (0, CommandKind::SetWaypoints { net: WaypointNet { class: PassClass::of(9), ..net() } }, RejectReason::BadClass),
        (
            1,
            CommandKind::SetWaypointPriorities { class: PassClass::of(1), reset: true, entries: Vec::new() },
            RejectReason::NoWaypointNet(PassClass::of(1)),
        ),
        (
            1,
            CommandKind::SetWaypointPriorities {
                class: PassClass::of(0),
                reset: false,
                entries: vec![PriorityEntry { waypoint: 144, priority: WaypointPriority::Excluded }],
            },
            RejectReason::OutOfRange,
        ),
        (2, CommandKind::MoveByWaypoints { units: vec![unit], goal: pos(6, 114), queue: false }, RejectReason::NotOwned(unit)),
        (1, CommandKind::MoveByWaypoints { units: vec![unit], goal: pos(600, 114), queue: false }, RejectReason::NoRoom),
    ];
    for (player, kind, reason) in kinds {
        let report = world.step(&[Command { turn: world.turn(), player: PlayerId(player), seq: 0, kind }]);
        assert!(matches!(&report.events[..], [Event::Rejected { reason: r, .. }] if *r == reason), "{:?}", report.events);
    }
    let report = world.step(&[cmd(world.turn(), 0, CommandKind::SetWaypoints { net: far })]);
    assert!(
        matches!(&report.events[..], [Event::Rejected { reason: RejectReason::WaypointOffMap { waypoint: 0 }, .. }]),
        "{:?}",
        report.events
    );
    assert!(turn < world.turn());
    assert_eq!(world.waypoint_net(PassClass::of(0)), Some(&net()), "refused commands changed nothing");
}

/// Two units on long routes, a building dropped on the route half-way, priorities changed; run
/// straight, and again with a save and load every 15 turns on two threads: the same hashes.
#[test]
fn routes_replay_bit_for_bit_through_saves_and_threads() {
    let script = |turn: u32, units: &[EntityId]| -> Vec<Command> {
        match turn {
            0 => vec![cmd(0, 1, CommandKind::MoveByWaypoints { units: units.to_vec(), goal: pos(6, 114), queue: false })],
            1 => vec![cmd(1, 1, CommandKind::MoveByWaypoints { units: vec![units[1]], goal: pos(110, 110), queue: true })],
            20 => vec![cmd(20, 0, plug())],
            25 => vec![cmd(
                25,
                1,
                CommandKind::SetWaypointPriorities {
                    class: PassClass::of(0),
                    reset: false,
                    entries: vec![PriorityEntry { waypoint: 3, priority: WaypointPriority::Open { extra_cost: 40 } }],
                },
            )],
            40 => vec![cmd(40, 1, CommandKind::MoveByWaypoints { units: units.to_vec(), goal: pos(115, 5), queue: false })],
            _ => Vec::new(),
        }
    };
    let run = |reload: bool| -> Vec<[u8; 32]> {
        let mut world = world();
        let kind = CommandKind::Spawn {
            class: PassClass::of(0),
            at: pos(4, 4),
            count: 2,
            radius: Fixed::ONE / 2,
            speed: Fixed::from_num(12),
            turn_rate: None,
        };
        let report = world.step(&[cmd(0, 1, kind)]);
        let units: Vec<EntityId> =
            report.events.iter().filter_map(|e| if let Event::Spawned { unit } = e { Some(*unit) } else { None }).collect();
        let mut hashes = Vec::new();
        for t in 0..120 {
            if reload && t % 15 == 7 {
                let graph = world.waypoint_graph(PassClass::of(0)).unwrap().clone();
                world = World::load(&world.save()).unwrap();
                world.set_threads(2).unwrap();
                assert_eq!(world.waypoint_graph(PassClass::of(0)).unwrap(), &graph, "the loaded graph is the one kept up to date");
            }
            let commands: Vec<Command> = script(t, &units).into_iter().map(|c| Command { turn: world.turn(), ..c }).collect();
            hashes.push(world.step(&commands).hash);
            world.check_invariants().unwrap();
            assert_eq!(world.state_digest(), world.state_digest_from_scratch());
        }
        hashes
    };
    assert_eq!(run(false), run(true));
}

/// Writes a snapshot fuzz seed holding a waypoint network and a priority table when
/// PHALANX_WRITE_FUZZ_SEEDS is set; otherwise checks that the committed one still loads with both.
#[test]
fn waypoint_fuzz_seed_loads() {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/snapshot/waypoints.bin");
    if std::env::var("PHALANX_WRITE_FUZZ_SEEDS").is_ok() {
        let mut world = world();
        let unit = spawn(&mut world, PassClass::of(0), pos(4, 4));
        let entries = vec![PriorityEntry { waypoint: 5, priority: WaypointPriority::Open { extra_cost: 9 } }];
        let turn = world.turn();
        world.step(&[
            Command {
                turn,
                player: PlayerId(1),
                seq: 0,
                kind: CommandKind::SetWaypointPriorities { class: PassClass::of(0), reset: false, entries },
            },
            Command {
                turn,
                player: PlayerId(1),
                seq: 1,
                kind: CommandKind::MoveByWaypoints { units: vec![unit], goal: pos(6, 114), queue: false },
            },
        ]);
        world.step(&[]);
        std::fs::write(&path, world.save()).unwrap();
    }
    let mut world = World::load(&std::fs::read(&path).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(world.waypoint_net(PassClass::of(0)), Some(&net()));
    assert!(world.waypoint_priorities(PlayerId(1), PassClass::of(0)).is_some());
    world.step(&[]);
    world.check_invariants().unwrap();
}

/// Queued orders stop at `MAX_ORDERS`: the command that would pass it is refused and changes
/// nothing, so a unit's state (and every snapshot) stays bounded.
#[test]
fn queued_orders_stop_at_the_limit() {
    let mut world = world();
    let unit = spawn(&mut world, PassClass::of(0), pos(4, 4));
    let (a, b) = (pos(6, 114), pos(4, 4));
    let mut refused = false;
    for k in 0..40 {
        let goal = if k % 2 == 0 { a } else { b };
        let report = world.step(&[cmd(world.turn(), 1, CommandKind::MoveByWaypoints { units: vec![unit], goal, queue: true })]);
        let n = world.unit(unit).unwrap().orders.len();
        assert!(n <= sim::MAX_ORDERS, "{n} orders");
        if let [Event::Rejected { reason: RejectReason::OutOfRange, .. }] = report.events[..] {
            refused = true;
        }
    }
    assert!(refused, "a route of this map is more than 3 orders, so 40 of them pass the limit");
    for _ in 0..3 {
        world.step(&[cmd(world.turn(), 1, CommandKind::Move { units: vec![unit], goal: GoalSpec::Point(a), queue: true })]);
    }
    assert!(world.unit(unit).unwrap().orders.len() <= sim::MAX_ORDERS);
    World::load(&world.save()).unwrap();
}

/// A network whose range is too long in navcells for the grid is refused (the pair searches would
/// be unbounded on a fine grid), and so is a network with more candidate pairs than the limit.
#[test]
fn networks_beyond_the_work_limits_are_refused() {
    let cells = vec![CellKind::Ground; 400 * 400];
    let classes = ClassSet::new(vec![ClassDef::unbounded("land", ObstructionMode::Pathfinding)]).unwrap();
    let fine = WorldDesc::from_cells(400, 400, Fixed::ONE / 4, cells, classes).unwrap();
    let mut world = World::new(fine, Vec::new(), Settings::default()).unwrap();
    let points = vec![pos(5, 5), pos(50, 50)];
    // 40 m of 1/4 m navcells is 160 navcells: more than 128.
    assert_eq!(
        world.set_waypoints(WaypointNet { class: PassClass::of(0), range: 40, points: points.clone() }),
        Err(RejectReason::OutOfRange)
    );
    world.set_waypoints(WaypointNet { class: PassClass::of(0), range: 32, points }).unwrap();
    // 1024 waypoints 1 m apart within 32 m of each other: far more than 4096 candidate pairs.
    let dense: Vec<WorldPos> = (0..1024).map(|k| pos(5 + k % 32, 5 + k / 32)).collect();
    let refused = world.set_waypoints(WaypointNet { class: PassClass::of(0), range: 32, points: dense });
    assert_eq!(refused, Err(RejectReason::WaypointsTooDense { max_pairs: 4096 }));
}

/// A turn plans at most `ROUTE_STARTS_PER_TURN` routes from new start blocks; units in one block
/// share their route; the next turn plans again.
#[test]
fn route_planning_per_turn_is_bounded() {
    let mut world = world();
    // Two units in the middle of each of 14 blocks in three rows: 42 blocks, more than the 32
    // routes a turn may plan.
    let mut units = Vec::new();
    for k in 0..14 {
        for z in [4, 20, 44] {
            let kind = CommandKind::Spawn {
                class: PassClass::of(0),
                at: pos(4 + 8 * k, z),
                count: 2,
                radius: Fixed::ONE / 4,
                speed: Fixed::from_num(8),
                turn_rate: None,
            };
            let report = world.step(&[cmd(world.turn(), 1, kind)]);
            units.extend(report.events.iter().filter_map(|e| if let Event::Spawned { unit } = e { Some(*unit) } else { None }));
        }
    }
    let goal = pos(6, 114);
    let report = world.step(&[cmd(world.turn(), 1, CommandKind::MoveByWaypoints { units: units.clone(), goal, queue: false })]);
    let routed: Vec<(EntityId, u32)> = report
        .events
        .iter()
        .filter_map(|e| if let Event::WaypointRoute { unit, waypoints } = e { Some((*unit, *waypoints)) } else { None })
        .collect();
    assert_eq!(routed.len(), units.len());
    let blocks = |id: EntityId| {
        let c = world.navcell_of(world.unit(id).unwrap().pos);
        (c.i / sim::waypoint::ROUTE_BLOCK, c.j / sim::waypoint::ROUTE_BLOCK)
    };
    let mut planned: Vec<(u16, u16)> = routed.iter().filter(|r| r.1 > 0).map(|r| blocks(r.0)).collect();
    planned.sort_unstable();
    planned.dedup();
    assert_eq!(planned.len(), sim::waypoint::ROUTE_STARTS_PER_TURN as usize, "{routed:?}");
    assert!(routed.iter().any(|r| r.1 == 0), "the units past the limit move locally");
    // Units of one block share one route.
    for a in &routed {
        for b in &routed {
            if blocks(a.0) == blocks(b.0) {
                assert_eq!(world.unit(a.0).unwrap().orders, world.unit(b.0).unwrap().orders);
            }
        }
    }
}

#[test]
fn a_waypoint_no_other_waypoint_reaches_is_reported_when_the_net_is_set() {
    let mut world = World::new(desc(), Vec::new(), Settings::default()).unwrap();
    let p = |x: i32, z: i32| WorldPos::new(Fixed::from_num(x) + Fixed::ONE / 2, Fixed::from_num(z) + Fixed::ONE / 2);
    // 0 and 1 are 10 m apart on open ground; 2 is 10 m north of 0 but behind wall 1 (the way round
    // is far beyond the 16 m range); 3 is farther than the range from every other waypoint.
    let points = vec![p(5, 25), p(15, 25), p(5, 35), p(115, 115)];
    let net = WaypointNet { class: PassClass::of(0), range: RANGE, points };
    let report = world.step(&[cmd(0, 0, CommandKind::SetWaypoints { net })]);
    assert_eq!(
        report.events,
        vec![
            Event::WaypointUnreached { class: PassClass::of(0), waypoint: 2 },
            Event::WaypointUnreached { class: PassClass::of(0), waypoint: 3 }
        ]
    );
    assert_eq!(world.isolated_waypoints(PassClass::of(0)), vec![2, 3]);
    assert_eq!(world.isolated_waypoints(PassClass::of(1)), Vec::<u32>::new());
}

/// The centre of a unit's next leg after the current one (its second order, a circle).
fn next_leg(world: &World, unit: EntityId) -> WorldPos {
    match world.unit(unit).unwrap().orders[1] {
        GoalSpec::Circle { center, radius } if radius == WAYPOINT_RADIUS => center,
        ref other => panic!("not a leg: {other:?}"),
    }
}

/// Places a square of half-size `half` over `at` (blocking the 3 m circle round a waypoint there).
fn block(world: &mut World, at: WorldPos, half: Fixed) -> TurnReport {
    let square = SquareSpec { x: at.x, z: at.z, w: half * 2, h: half * 2, degrees: Fixed::ZERO };
    world.step(&[cmd(world.turn(), 0, CommandKind::PlaceObstruction { square, flags: 3 })])
}

/// Steps until the unit reports `WaypointReroute`; its waypoint count.
fn until_rerouted(world: &mut World, unit: EntityId, first: &TurnReport) -> u32 {
    let find = |r: &TurnReport| {
        r.events.iter().find_map(|e| match *e {
            Event::WaypointReroute { unit: u, waypoints } if u == unit => Some(waypoints),
            _ => None,
        })
    };
    if let Some(n) = find(first) {
        return n;
    }
    for _ in 0..80 {
        let r = world.step(&[]);
        assert_eq!(r.digest, world.state_digest_from_scratch());
        if let Some(n) = find(&r) {
            return n;
        }
    }
    panic!("no re-route in 80 turns");
}

#[test]
fn a_failed_leg_is_rerouted_once_then_the_unit_moves_locally() {
    let mut world = world();
    let kind = CommandKind::Spawn {
        class: PassClass::of(0),
        at: pos(50, 10),
        count: 1,
        radius: Fixed::ONE / 2,
        speed: Fixed::from_num(8),
        turn_rate: None,
    };
    let report = world.step(&[cmd(0, 1, kind)]);
    let [Event::Spawned { unit }] = report.events[..] else { panic!("{:?}", report.events) };
    let goal = pos(50, 45);
    let report = world.step(&[cmd(1, 1, CommandKind::MoveByWaypoints { units: vec![unit], goal, queue: false })]);
    assert!(matches!(report.events[..], [Event::WaypointRoute { waypoints, .. }] if waypoints > 1), "{:?}", report.events);
    // The route is state: saved, loaded, hashed.
    let bytes = world.save();
    let loaded = World::load(&bytes).unwrap();
    assert_eq!(loaded.state_hash(), world.state_hash());
    let mut data = sim::snapshot::unframe(&bytes).unwrap();
    assert_eq!(data.waypoint_routes, vec![(unit, goal, false)]);
    data.waypoint_routes[0].2 = true;
    let payload = sim::state_hash::encode(&data);
    let mut changed = bytes[..12].to_vec();
    changed.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    changed.extend_from_slice(&payload);
    changed.extend_from_slice(blake3::hash(&payload).as_bytes());
    assert_ne!(World::load(&changed).unwrap().state_hash(), world.state_hash());
    // Walling in the route's second waypoint while the unit walks to the first makes the second
    // leg fail when it is planned (its 3 m circle is unreachable): a new route from where the
    // unit stands, avoiding it.
    let walled = next_leg(&world, unit);
    let r = block(&mut world, walled, Fixed::from_num(4));
    let n = until_rerouted(&mut world, unit, &r);
    assert!(n >= 2, "re-routed over the network through {n} waypoints");
    let orders = world.unit(unit).unwrap().orders.clone();
    assert_eq!(orders.len(), n as usize + 1);
    assert_eq!(orders.last(), Some(&GoalSpec::Point(goal)));
    assert!(!orders.contains(&GoalSpec::Circle { center: walled, radius: WAYPOINT_RADIUS }));
    assert_eq!(sim::snapshot::unframe(&world.save()).unwrap().waypoint_routes, vec![(unit, goal, true)]);
    // A second failed leg: no second route, an ordinary move to the goal.
    let walled = next_leg(&world, unit);
    let r = block(&mut world, walled, Fixed::from_num(4));
    assert_eq!(until_rerouted(&mut world, unit, &r), 0);
    assert_eq!(world.unit(unit).unwrap().orders, vec![GoalSpec::Point(goal)]);
    assert_eq!(sim::snapshot::unframe(&world.save()).unwrap().waypoint_routes, vec![]);
}
