//! Motion rules end to end (docs/motion-rules.md): repeated orders that keep their path, facing and
//! the last turn's displacement, and passages held by another player's standing units.

use pathing::{Fixed, PassClass, WorldPos};
use sim::test_support::{FIELD, world_from};
use sim::{Command, CommandKind, EntityId, Event, FailReason, GoalSpec, PlayerId, World};

fn m(n: i32) -> Fixed {
    Fixed::from_num(n)
}

/// `n` hundredths of a metre.
fn cm(n: i32) -> Fixed {
    Fixed::from_num(n) / 100
}

fn cmd(turn: u32, player: u8, seq: u32, kind: CommandKind) -> Command {
    Command { turn, player: PlayerId(player), seq, kind }
}

fn spawn_at(turn: u32, player: u8, seq: u32, at: WorldPos) -> Command {
    cmd(
        turn,
        player,
        seq,
        CommandKind::Spawn { class: PassClass::of(0), at, count: 1, radius: Fixed::ONE / 2, speed: m(6), turn_rate: None },
    )
}

fn go(turn: u32, player: u8, units: Vec<EntityId>, goal: WorldPos) -> Command {
    cmd(turn, player, 0, CommandKind::Move { units, goal: GoalSpec::Point(goal), queue: false })
}

/// One unit walking east across `FIELD` to (40.5, 8.5), three turns after its order; then the
/// same unit ordered to `(40.5 + dx, 8.5)`: whether that turn searched a long-range path, and the
/// unit's waypoints before and after the turn.
fn order_again(dx: Fixed) -> (u32, Vec<WorldPos>, Vec<WorldPos>, World) {
    let mut world = world_from(FIELD, 1);
    let goal = WorldPos::new(cm(4050), cm(850));
    world.step(&[spawn_at(0, 1, 0, WorldPos::new(cm(450), cm(850)))]);
    let unit = world.units().next().unwrap().id;
    world.step(&[go(1, 1, vec![unit], goal)]);
    world.step(&[]);
    let before = world.unit(unit).unwrap().waypoints().to_vec();
    world.step(&[go(3, 1, vec![unit], WorldPos::new(goal.x + dx, goal.z))]);
    let after = world.unit(unit).unwrap().waypoints().to_vec();
    (world.path_stats().long, before, after, world)
}

#[test]
fn a_repeated_order_within_the_replan_threshold_keeps_the_path() {
    for dx in [Fixed::ZERO, cm(20), sim::TARGET_REPLAN_THRESHOLD, -cm(25)] {
        let (searches, before, after, world) = order_again(dx);
        assert_eq!(searches, 0, "an order {dx} m away searched a path");
        assert_eq!(before, after, "an order {dx} m away changed the path");
        assert!(world.requests().is_empty());
        let unit = world.units().next().unwrap();
        assert_eq!(unit.orders, vec![GoalSpec::Point(WorldPos::new(cm(4050), cm(850)))]);
    }
}

#[test]
fn a_repeated_order_beyond_the_replan_threshold_replans() {
    // 0.3 m, and 0.25 m and one raw unit (2^-16 m): just beyond the threshold.
    let just_beyond = Fixed::from_bits(sim::TARGET_REPLAN_THRESHOLD.to_bits() + 1);
    for dx in [cm(30), just_beyond] {
        let (searches, before, after, _) = order_again(dx);
        assert_eq!(searches, 1, "an order {dx} m away did not search a path");
        assert_ne!(before, after);
        assert_eq!(after.last().copied(), Some(WorldPos::new(cm(4050) + dx, cm(850))));
    }
}

#[test]
fn facing_turns_toward_travel_at_the_turn_rate_and_displacement_is_the_turns_move() {
    // The default 360°/s over 200 ms turns is 72° a turn: a unit facing east (as spawned) and
    // walking west turns anticlockwise, 72° and 144°, and faces due west on its third turn.
    let mut world = world_from(FIELD, 1);
    world.step(&[spawn_at(0, 1, 0, WorldPos::new(cm(4050), cm(850)))]);
    let unit = world.units().next().unwrap().id;
    assert_eq!(world.unit(unit).unwrap().facing, sim::INITIAL_FACING);
    // Due west of where it was placed.
    let z = world.unit(unit).unwrap().pos.z;
    world.step(&[go(1, 1, vec![unit], WorldPos::new(cm(450), z))]);
    // Within two raw units (2^-15) of the unit vector of the angle, on each component.
    let faces = |u: &sim::Unit, degrees: i32| {
        let v = pathing::trig::unit_vector_degrees(m(degrees));
        (u.facing.x - v.x).abs() <= Fixed::from_bits(2) && (u.facing.z - v.z).abs() <= Fixed::from_bits(2)
    };
    let first = world.unit(unit).unwrap().clone();
    assert!(faces(&first, 72), "{:?}", first.facing);
    let mut before = first.pos;
    world.step(&[]);
    let second = world.unit(unit).unwrap().clone();
    assert!(faces(&second, 144), "{:?}", second.facing);
    assert_eq!(second.displacement, pathing::Vec2::new(second.pos.x - before.x, second.pos.z - before.z));
    assert_eq!(second.displacement.z, Fixed::ZERO);
    assert!(second.displacement.x < -m(1), "walked west 1.2 m: {:?}", second.displacement);
    before = second.pos;
    world.step(&[]);
    let third = world.unit(unit).unwrap().clone();
    assert_eq!(third.facing, pathing::Vec2::new(-Fixed::ONE, Fixed::ZERO));
    assert_eq!(third.displacement, pathing::Vec2::new(third.pos.x - before.x, Fixed::ZERO));
    // Standing still: no displacement, and the facing stays.
    let mut turns = 0;
    while world.unit(unit).unwrap().state != sim::UnitState::Idle && turns < 60 {
        world.step(&[]);
        turns += 1;
    }
    world.step(&[]);
    let idle = world.unit(unit).unwrap();
    assert_eq!(idle.displacement, pathing::Vec2::new(Fixed::ZERO, Fixed::ZERO));
    assert_eq!(idle.facing, pathing::Vec2::new(-Fixed::ONE, Fixed::ZERO));
}

#[test]
fn a_spawn_with_its_own_turn_rate_turns_at_it_and_rates_outside_the_limits_are_refused() {
    // Two units walking west side by side: one at the game's 360°/s (72° a 200 ms turn), one
    // spawned with 90°/s (18° a turn), as a ship or a siege engine would be.
    let mut world = world_from(FIELD, 1);
    let spawn = |seq: u32, z: i32, turn_rate: Option<Fixed>| {
        let kind = CommandKind::Spawn {
            class: PassClass::of(0),
            at: WorldPos::new(cm(4050), cm(z)),
            count: 1,
            radius: Fixed::ONE / 2,
            speed: m(6),
            turn_rate,
        };
        cmd(0, 1, seq, kind)
    };
    let r = world.step(&[spawn(0, 450, None), spawn(1, 1150, Some(m(90)))]);
    let ids: Vec<EntityId> = r.events.iter().filter_map(|e| if let Event::Spawned { unit } = e { Some(*unit) } else { None }).collect();
    let [quick, slow] = ids[..] else { panic!("{:?}", r.events) };
    assert_eq!(world.unit(quick).unwrap().turn_rate, sim::MotionSettings::default().turn_rate);
    assert_eq!(world.unit(slow).unwrap().turn_rate, m(90));
    let west = |u: EntityId, w: &World| WorldPos::new(cm(450), w.unit(u).unwrap().pos.z);
    world.step(&[
        go(1, 1, vec![quick], west(quick, &world)),
        cmd(1, 1, 1, CommandKind::Move { units: vec![slow], goal: GoalSpec::Point(west(slow, &world)), queue: false }),
    ]);
    let faces = |u: EntityId, degrees: i32, w: &World| {
        let (f, v) = (w.unit(u).unwrap().facing, pathing::trig::unit_vector_degrees(m(degrees)));
        (f.x - v.x).abs() <= Fixed::from_bits(2) && (f.z - v.z).abs() <= Fixed::from_bits(2)
    };
    assert!(faces(quick, 72, &world) && faces(slow, 18, &world));
    world.step(&[]);
    assert!(faces(quick, 144, &world) && faces(slow, 36, &world));
    // The rate is part of the unit's state: saved, loaded, hashed.
    let loaded = World::load(&world.save()).unwrap();
    assert_eq!(loaded.unit(slow).unwrap().turn_rate, m(90));
    assert_eq!(loaded.state_hash(), world.state_hash());
    // Outside 1..=3600 degrees per second: refused, nothing spawned.
    for bad in [Fixed::ZERO, Fixed::ONE - Fixed::from_bits(1), m(3600) + Fixed::from_bits(1), -m(90)] {
        let command = Command { turn: world.turn(), ..spawn(0, 800, Some(bad)) };
        let r = world.step(&[command]);
        assert!(matches!(r.events[..], [Event::Rejected { reason: sim::RejectReason::OutOfRange, .. }]), "turn rate {bad}: {:?}", r.events);
    }
}

/// Two rooms joined by two corridors of one navcell's passable width for the default class: a
/// straight one (z = 4) and, when `detour`, a longer one along the top (z = 13); otherwise the top
/// is walled too.
fn two_rooms(detour: bool) -> Vec<String> {
    let open = format!("#{}#", ".".repeat(46));
    let walled = format!("#{}{}{}#", ".".repeat(10), "#".repeat(27), ".".repeat(9));
    let border = "#".repeat(48);
    let top = if detour { &open } else { &walled };
    let mut rows = vec![border.clone()];
    rows.extend(std::iter::repeat_n(top.clone(), 3)); // z = 14..=12
    rows.extend(std::iter::repeat_n(walled.clone(), 6)); // z = 11..=6
    rows.extend(std::iter::repeat_n(open.clone(), 3)); // z = 5..=3
    rows.extend(std::iter::repeat_n(walled, 2)); // z = 2..=1
    rows.push(border);
    rows
}

/// What happened to player 1's unit walking from the west room to the east room through the
/// straight corridor, held by a standing unit of player 2: every turn's events, the unit's
/// positions, long-range searches and the standing unit's position.
struct Held {
    events: Vec<(u32, Event)>,
    positions: Vec<WorldPos>,
    searches: Vec<u32>,
    holder: (WorldPos, WorldPos),
}

fn walk_through_held_corridor(detour: bool, turns: u32) -> Held {
    let rows = two_rooms(detour);
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let mut world = world_from(&rows, 1);
    world.step(&[spawn_at(0, 1, 0, WorldPos::new(cm(450), cm(450))), spawn_at(0, 2, 0, WorldPos::new(cm(2450), cm(450)))]);
    let walker = world.units().find(|u| u.owner == PlayerId(1)).unwrap().id;
    let holder = world.units().find(|u| u.owner == PlayerId(2)).unwrap().id;
    let holder_at = world.unit(holder).unwrap().pos;
    let mut held = Held { events: Vec::new(), positions: Vec::new(), searches: Vec::new(), holder: (holder_at, holder_at) };
    for turn in 1..turns {
        let commands = if turn == 1 { vec![go(1, 1, vec![walker], WorldPos::new(cm(4250), cm(450)))] } else { Vec::new() };
        let report = world.step(&commands);
        held.events.extend(report.events.into_iter().map(|e| (turn, e)));
        held.positions.push(world.unit(walker).unwrap().pos);
        held.searches.push(world.path_stats().long);
    }
    held.holder.1 = world.unit(holder).unwrap().pos;
    held
}

#[test]
fn a_corridor_held_by_another_players_unit_is_gone_round_by_the_other_way() {
    let held = walk_through_held_corridor(true, 150);
    let arrived = held.events.iter().any(|(_, e)| matches!(e, Event::Arrived { .. }));
    let failed: Vec<_> = held.events.iter().filter(|(_, e)| matches!(e, Event::Failed { .. })).collect();
    assert!(arrived && failed.is_empty(), "arrived {arrived}, failed {failed:?}");
    let end = *held.positions.last().unwrap();
    assert!((end.x - cm(4250)).abs() < cm(5) && (end.z - cm(450)).abs() < cm(5), "it ends at its goal: {end:?}");
    // It went by the top corridor, and never past the unit holding the straight one.
    assert!(held.positions.iter().any(|p| p.z > m(12)), "it took the top corridor");
    let holder_x = held.holder.0.x;
    assert!(!held.positions.iter().any(|p| p.z < m(6) && p.x > holder_x && p.x < m(37)), "it did not pass the holder");
    assert_eq!(held.holder.0, held.holder.1, "another player's unit is never nudged");
}

#[test]
fn a_corridor_held_with_no_other_way_waits_retries_and_gives_up_as_held() {
    let give_up = u32::from(sim::MotionSettings::default().give_up_turns);
    let every = u32::from(sim::MotionSettings::default().long_replan_every);
    let held = walk_through_held_corridor(false, 80);
    let blocked: Vec<u32> = held.events.iter().filter(|(_, e)| matches!(e, Event::Blocked { .. })).map(|&(t, _)| t).collect();
    let failed: Vec<(u32, &Event)> = held.events.iter().filter(|(_, e)| matches!(e, Event::Failed { .. })).map(|(t, e)| (*t, e)).collect();
    assert_eq!(blocked.len(), 1, "{blocked:?}");
    let first = blocked[0];
    // Blocked on turn `first` (its 1st blocked turn), it gives up on its `give_up`th.
    assert_eq!(failed.len(), 1, "{failed:?}");
    let (at, event) = failed[0];
    assert_eq!(at, first + give_up - 1);
    assert!(matches!(event, Event::Failed { reason: FailReason::PassageHeld, .. }), "{event:?}");
    // One search round the holder the turn after the first blocked turn, then one every
    // `long_replan_every` blocked turns: the 3rd, 6th, ... before the last.
    let searches: Vec<u32> = (first + 1..=at).filter(|&t| held.searches[(t - 1) as usize] > 0).collect();
    let expected: Vec<u32> =
        std::iter::once(first + 1).chain((1..give_up).filter(|k| k % every == 0).map(|k| first + k)).filter(|&t| t <= at).collect();
    assert_eq!(searches, expected);
    // Meanwhile it waits where it was stopped.
    let stopped = held.positions[(first - 1) as usize];
    assert!(held.positions[(first - 1) as usize..at as usize].iter().all(|&p| p == stopped));
    assert_eq!(held.holder.0, held.holder.1);
}

/// A unit waiting to search round a held passage that has a building placed over it escapes at
/// once, like any unit on a navcell made impassable (a reference-game test saw one stand inside a
/// foundation for 26 turns: the search round the holders came before the escape).
#[test]
fn a_unit_waiting_at_a_held_passage_escapes_a_building_placed_over_it() {
    let rows = two_rooms(false);
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let mut world = world_from(&rows, 1);
    world.step(&[spawn_at(0, 1, 0, WorldPos::new(cm(450), cm(450))), spawn_at(0, 2, 0, WorldPos::new(cm(2450), cm(450)))]);
    let walker = world.units().find(|u| u.owner == PlayerId(1)).unwrap().id;
    let mut placed_at = None;
    for turn in 1..80u32 {
        let mut commands = if turn == 1 { vec![go(1, 1, vec![walker], WorldPos::new(cm(4250), cm(450)))] } else { Vec::new() };
        let unit = world.unit(walker).unwrap();
        if placed_at.is_none() && unit.held_searches > 0 {
            // A 3 m square centred on the walker, placed by the world.
            let square = sim::SquareSpec { x: unit.pos.x, z: unit.pos.z, w: m(3), h: m(3), degrees: Fixed::ZERO };
            commands.push(cmd(turn, 0, 0, CommandKind::PlaceObstruction { square, flags: 3 }));
            placed_at = Some(turn);
        }
        world.step(&commands);
        if let Some(at) = placed_at {
            let unit = world.unit(walker).unwrap();
            let pass = world.nav().class_nav(unit.class).unwrap().pass_map();
            if pass.is_passable(world.navcell_of(unit.pos)) {
                assert!(turn <= at + 3, "the walker left the building only on turn {turn}, placed on turn {at}");
                return;
            }
        }
    }
    panic!("the walker never waited for a held passage ({placed_at:?}) or never left the building");
}

/// A staircase corridor one navcell wide for the default class (drawn three metres wide: the
/// class's clearance of one metre closes its side rows) between a west room and an east room:
/// east along z = 4 to x = 16, north to z = 8, and so on in steps of six east and four north to
/// z = 16, then east into the room.
fn staircase_rows() -> Vec<String> {
    let (w, h) = (48usize, 24usize);
    let mut open = vec![vec![false; w]; h];
    let mut carve = |x0: usize, z0: usize, x1: usize, z1: usize| {
        for row in open.iter_mut().take(z1 + 1).skip(z0) {
            for cell in row.iter_mut().take(x1 + 1).skip(x0) {
                *cell = true;
            }
        }
    };
    carve(1, 1, 9, 8);
    carve(38, 13, 46, 22);
    // The centre line's legs, each carved one navcell wider on every side.
    for (x0, z0, x1, z1) in
        [(9, 4, 16, 4), (16, 4, 16, 8), (16, 8, 22, 8), (22, 8, 22, 12), (22, 12, 28, 12), (28, 12, 28, 16), (28, 16, 38, 16)]
    {
        carve(x0 - 1, z0 - 1, x1 + 1, z1 + 1);
    }
    open.iter().rev().map(|row| row.iter().map(|&o| if o { '.' } else { '#' }).collect()).collect()
}

/// Three units ordered through the one-navcell staircase corridor all arrive, none ever stands on
/// a blocked navcell or is blocked, and the first one's planned path cuts the corridor's corners: within 2% of
/// the exact any-angle optimum (`phalanx_tests::any_angle`), where the path through navcell centres,
/// which cannot cut a corner of a corridor one navcell wide, is more than 5% above it.
#[test]
fn units_walk_a_one_navcell_staircase_corridor_cutting_its_corners() {
    use phalanx_tests::any_angle::{centre, from_pass_map, length, point, pull_turning_points_only};
    let rows = staircase_rows();
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let mut world = world_from(&rows, 1);
    let class = PassClass::of(0);
    let pass = world.nav().class_nav(class).unwrap().pass_map().clone();
    // The corridor is one navcell wide: on its second riser only x = 16 is passable.
    let open = |i: u16, j: u16| pass.is_passable(pathing::Navcell::new(i, j));
    assert!(open(16, 6) && !open(15, 6) && !open(17, 6));
    let starts = [(350, 350), (350, 550), (550, 350)];
    let goals = [(4150, 1750), (4350, 1750), (4250, 1950)];
    let spawns: Vec<Command> =
        starts.iter().enumerate().map(|(k, &(x, z))| spawn_at(0, 1, k as u32, WorldPos::new(cm(x), cm(z)))).collect();
    world.step(&spawns);
    let ids: Vec<EntityId> = world.units().map(|u| u.id).collect();
    assert_eq!(ids.len(), 3);
    let orders: Vec<Command> = ids
        .iter()
        .zip(goals)
        .enumerate()
        .map(|(k, (&id, (x, z)))| Command { seq: k as u32, ..go(1, 1, vec![id], WorldPos::new(cm(x), cm(z))) })
        .collect();
    let mut planned: Option<Vec<WorldPos>> = None;
    let mut arrived = Vec::new();
    let mut blocked = Vec::new();
    for turn in 1..400 {
        let report = world.step(if turn == 1 { &orders } else { &[] });
        arrived.extend(report.events.iter().filter_map(|e| match e {
            Event::Arrived { unit } => Some(*unit),
            _ => None,
        }));
        blocked
            .extend(report.events.iter().filter(|e| matches!(e, Event::Blocked { .. } | Event::Detour { .. })).map(|e| (turn, e.clone())));
        for u in world.units() {
            let cell = pathing::Navcell::new((u.pos.x.to_bits() >> 16) as u16, (u.pos.z.to_bits() >> 16) as u16);
            assert!(pass.is_passable(cell), "turn {turn}: unit {:?} stands on blocked navcell {cell:?} at {:?}", u.id, u.pos);
        }
        let first = world.unit(ids[0]).unwrap();
        if planned.is_none() && !first.waypoints().is_empty() {
            // The unit walks in the turn its path comes: the plan starts where it was spawned.
            let mut path = vec![WorldPos::new(cm(350), cm(350))];
            path.extend_from_slice(first.waypoints());
            planned = Some(path);
        }
    }
    arrived.sort();
    arrived.dedup();
    assert_eq!(arrived.len(), 3, "arrived: {arrived:?}");
    // The movement check never refuses a step of the planned segments: no unit is ever blocked.
    assert!(blocked.is_empty(), "{blocked:?}");
    for (&id, (x, z)) in ids.iter().zip(goals) {
        let pos = world.unit(id).unwrap().pos;
        assert!((pos.x - cm(x)).abs() < cm(60) && (pos.z - cm(z)).abs() < cm(60), "{id:?} ends at {pos:?}");
    }
    // The first unit's plan, from its spawn point (a navcell centre) to its goal (another).
    let planned = planned.unwrap();
    let (start, goal) = (WorldPos::new(cm(350), cm(350)), WorldPos::new(cm(4150), cm(1750)));
    assert_eq!(planned[planned.len() - 1], goal);
    let optimum = from_pass_map(&pass).shortest(point(start).unwrap(), point(goal).unwrap(), 200.0).unwrap();
    let ours = length(&planned);
    let mut scratch = pathing::SearchScratch::new();
    let mut path = pathing::Path::new();
    let nav = world.nav().class_nav(class).unwrap();
    let (s, g) = (pathing::Navcell::new(3, 3), pathing::Navcell::new(41, 17));
    let target = pathing::Goal::navcell_center(g.i, g.j, Fixed::ONE);
    pathing::find_path(nav, s, &target, &pathing::SearchLimits::UNLIMITED, &mut scratch, &mut path);
    let centres: Vec<WorldPos> = path.waypoints().iter().map(|&c| centre(c)).collect();
    let through_centres = length(&pull_turning_points_only(&pass, &centres));
    assert!(ours >= optimum - 1e-9 && ours / optimum < 1.02, "ours {ours}, optimum {optimum}");
    assert!(through_centres / optimum > 1.05, "through centres {through_centres}, optimum {optimum}");
}

/// A west field of pillars every 4 m (its open lanes cross at hundreds of jump points), walled
/// from the east but for a gap at z = 99.5 held by a standing unit of player 2; player 1's unit
/// walks from the west field to the east. With the holder stamped, the goal has no way round, and
/// the search round the holder gives up within `HELD_NODE_BUDGET` expansions rather than expand
/// every jump point of the field: its turn's search work stays within that budget, the holder's
/// stamped navcells and the base work. The unit keeps waiting short of the holder.
#[test]
fn a_search_round_a_holder_with_no_way_round_stops_at_its_node_budget() {
    let (w, h) = (200usize, 200usize);
    let rows: Vec<String> = (0..h)
        .map(|row| {
            let z = h - 1 - row;
            (0..w)
                .map(|x| {
                    let border = x == 0 || z == 0 || x == w - 1 || z == h - 1;
                    let wall = x == 100 && !(98..=100).contains(&z);
                    let pillar = x < 96 && x % 4 == 0 && z % 4 == 0;
                    if border || wall || pillar { '#' } else { '.' }
                })
                .collect()
        })
        .collect();
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let mut world = world_from(&rows, 1);
    world.step(&[spawn_at(0, 1, 0, WorldPos::new(cm(9650), cm(9950))), spawn_at(0, 2, 0, WorldPos::new(cm(10050), cm(9950)))]);
    let walker = world.units().find(|u| u.owner == PlayerId(1)).unwrap().id;
    let holder = world.units().find(|u| u.owner == PlayerId(2)).unwrap().id;
    // The one holder's stamp: its core grown by the walker's radius, at most 4 × 4 navcells.
    let cells = 16;
    let bound = u64::from(sim::HELD_NODE_BUDGET) + u64::from(sim::SEARCH_BASE_WORK) + cells + 8;
    let mut held_turns = 0;
    for turn in 1..30 {
        let commands = if turn == 1 { vec![go(1, 1, vec![walker], WorldPos::new(cm(15050), cm(9950)))] } else { Vec::new() };
        world.step(&commands);
        let stats = world.path_stats();
        if turn > 1 && stats.long > 0 {
            held_turns += 1;
            assert!(stats.long_work <= bound, "turn {turn}: work {} over {bound}", stats.long_work);
        }
        assert!(world.unit(walker).unwrap().pos.x < world.unit(holder).unwrap().pos.x, "turn {turn}: it never passes the holder");
    }
    assert!(held_turns >= 2, "it searched round the holder ({held_turns} turns)");
}

/// The local-movement constants are the grid-pathfinding seed's (its section 10, "Key Constants
/// Reference", and the sections it cites), converted to fixed point and to turns where they are
/// times; a change to any of them is a change of the rules and must show here.
#[test]
fn the_motion_constants_are_the_grid_pathfinding_seeds() {
    let motion = sim::MotionSettings::default();
    // Fixed point rounds to the nearest 2^-16 m: within half a raw unit of the seed's decimal value.
    let near = |v: Fixed, hundredths: i64, name: &str| {
        let exact = i128::from(hundredths) << 16; // hundredths of a metre, times 2^16
        let got = i128::from(v.to_bits()) * 100;
        assert!((got - exact).abs() <= 50, "{name} = {v}, the seed says {}.{:02}", hundredths / 100, hundredths % 100);
    };
    // §6 "Dynamic Obstacles" and §10: kDynamicObstacleRadiusFraction = 0.6×.
    near(motion.core_fraction, 60, "core_fraction");
    // §6 and §10: kDynamicObstacleInfluenceDist = 6.0 m.
    near(motion.influence, 600, "influence");
    // §8 "Character Collision Resolution" and §10: kIterations (collision) = 3 passes per frame.
    assert_eq!(motion.push_iterations, 3);
    // §8 nudgeCharacterAside and §10: kNudgeDist = 1.2 m.
    near(motion.nudge_distance, 120, "nudge_distance");
    // §9 "Dynamic Replanning" and §10: kReplanTriggerDist = 1.8 m.
    near(motion.replan_trigger, 180, "replan_trigger");
    // §9 and §10: kReplanCooldownMs = 500 ms, and kMovedEps = 0.05 m.
    assert_eq!(motion.replan_cooldown_ms, 500);
    near(motion.moved_epsilon, 5, "moved_epsilon");
    // §10: TARGET_REPLAN_THRESHOLD = 0.25 m (exact in fixed point).
    assert_eq!(sim::TARGET_REPLAN_THRESHOLD, Fixed::ONE / 4);
    // The seed's 0.6 is 39 321.6 raw: the default is the nearest raw value, not a truncation.
    assert_eq!(motion.core_fraction.to_bits(), 39_322);
    assert_eq!(motion.nudge_distance.to_bits(), 78_643);
    assert_eq!(motion.replan_trigger.to_bits(), 117_965);
    assert_eq!(motion.moved_epsilon.to_bits(), 3_277);
}

/// The signed distance (metres, negative inside) from `p` to an oriented square.
fn signed_distance(p: WorldPos, square: &pathing::Square) -> f64 {
    let f = |v: Fixed| v.to_num::<f64>();
    let (cx, cz) = (f(p.x) - f(square.center().x), f(p.z) - f(square.center().z));
    let (u, v) = (square.u(), square.v());
    let lu = (cx * f(u.x) + cz * f(u.z)).abs() - f(square.hw());
    let lv = (cx * f(v.x) + cz * f(v.z)).abs() - f(square.hh());
    if lu > 0.0 || lv > 0.0 { (lu.max(0.0).powi(2) + lv.max(0.0).powi(2)).sqrt() } else { lu.max(lv) }
}

/// How far a unit may enter an obstruction's shape (the 0 A.D. seed, "Static obstructions"): a
/// navcell is blocked for clearance `c` when every corner is inside the square or within `c` of
/// it, and a unit stands anywhere on a passable navcell. So a passable navcell has a corner
/// farther than `c` from the square, every point of it lies within the navcell's diagonal `s√2`
/// of that corner, and (distance being 1-Lipschitz) a unit's centre is never nearer the square
/// than `c − s√2`: with the default class (c = 1 m, s = 1 m) never more than 0.414 m inside a
/// rotated square's edge. Over random worlds of rotated squares and units walking random orders
/// through them, every unit's centre keeps that bound every turn.
#[test]
fn no_unit_enters_a_static_obstruction_deeper_than_the_seeds_bound() {
    use pathing::passability::{Obstruction, ObstructionFlags, WorldDesc};
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let cell = 1.0f64;
    let mut checked = 0u64;
    for world_n in 0..6 {
        let terrain = pathing::terrain::Terrain::flat(12, 12, m(4), m(12), Fixed::ZERO).unwrap();
        let desc = WorldDesc::new(
            pathing::terrain::GridSpec { width: 48, height: 48, cell_size: Fixed::ONE },
            pathing::classes::ClassSet::zero_ad_defaults(),
            terrain,
        );
        let squares: Vec<(pathing::ObstructionId, Obstruction)> = (0..8)
            .map(|k| {
                let centre = WorldPos::new(cm(800 + next(3200) as i32), cm(800 + next(3200) as i32));
                let (hw, hh) = (cm(50 + next(250) as i32), cm(50 + next(250) as i32));
                let square = pathing::raster::oriented_square(centre, hw, hh, Fixed::from_num(next(360) as i32)).unwrap();
                (pathing::ObstructionId(k + 1), Obstruction { square, flags: ObstructionFlags::STATIC })
            })
            .collect();
        let shapes: Vec<pathing::Square> = squares.iter().map(|(_, o)| o.square).collect();
        let mut world = World::new(desc, squares, sim::Settings { seed: 3, players: 2, ..sim::Settings::default() }).unwrap();
        let clearance = world.nav().classes().get(PassClass::of(0)).unwrap().whole_clearance(Fixed::ONE).to_num::<f64>();
        let bound = clearance - cell * std::f64::consts::SQRT_2;
        let spawns: Vec<Command> = (0..12)
            .map(|k| {
                let at = WorldPos::new(cm(300 + next(4200) as i32), cm(300 + next(4200) as i32));
                spawn_at(0, 1 + (k % 2) as u8, k, at)
            })
            .collect();
        world.step(&spawns);
        for turn in 1..120u32 {
            let commands: Vec<Command> = if turn % 30 == 1 {
                world
                    .units()
                    .map(|u| (u.id, u.owner.0))
                    .collect::<Vec<_>>()
                    .into_iter()
                    .enumerate()
                    .map(|(k, (id, owner))| {
                        let goal = GoalSpec::Point(WorldPos::new(cm(200 + next(4400) as i32), cm(200 + next(4400) as i32)));
                        cmd(turn, owner, k as u32, CommandKind::Move { units: vec![id], goal, queue: false })
                    })
                    .collect()
            } else {
                Vec::new()
            };
            world.step(&commands);
            for u in world.units() {
                for (k, shape) in shapes.iter().enumerate() {
                    let d = signed_distance(u.pos, shape);
                    assert!(
                        d > bound - 1e-4,
                        "world {world_n}, turn {turn}: {:?} at {:?} is {d} m from square {k}, bound {bound}",
                        u.id,
                        u.pos
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 10_000);
}
