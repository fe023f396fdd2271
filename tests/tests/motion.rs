//! Motion rules end to end (docs/motion-rules.md): repeated orders that keep their path, facing and
//! the last turn's displacement.

use pathing::{Fixed, WorldPos};
use phalanx_tests::sim_maps::world_from;
use sim::EntityId;
use sim::command::{Command, CommandKind, GoalSpec, PlayerId};
use sim::world::World;

fn m(n: i32) -> Fixed {
    Fixed::from_num(n)
}

/// `n` hundredths of a metre.
fn cm(n: i32) -> Fixed {
    Fixed::from_num(n) / 100
}

fn cmd(turn: u32, player: PlayerId, seq: u32, kind: CommandKind) -> Command {
    Command { turn, player, seq, kind }
}

fn spawn_at(turn: u32, player: PlayerId, seq: u32, at: WorldPos) -> Command {
    cmd(turn, player, seq, CommandKind::Spawn { class: 0, at, count: 1, radius: Fixed::ONE / 2, speed: m(6) })
}

fn go(turn: u32, player: PlayerId, units: Vec<EntityId>, goal: WorldPos) -> Command {
    cmd(turn, player, 0, CommandKind::Move { units, goal: GoalSpec::Point(goal), queue: false })
}

const FIELD: &[&str] = &[
    "################################################",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "################################################",
];

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
    for dx in [Fixed::ZERO, cm(20), sim::world::TARGET_REPLAN_THRESHOLD, -cm(25)] {
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
    let just_beyond = Fixed::from_bits(sim::world::TARGET_REPLAN_THRESHOLD.to_bits() + 1);
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
    assert_eq!(world.unit(unit).unwrap().facing, sim::facing::INITIAL_FACING);
    // Due west of where it was placed.
    let z = world.unit(unit).unwrap().pos.z;
    world.step(&[go(1, 1, vec![unit], WorldPos::new(cm(450), z))]);
    // Within two raw units (2^-15) of the unit vector of the angle, on each component.
    let faces = |u: &sim::world::Unit, degrees: i32| {
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
    while world.unit(unit).unwrap().state != sim::world::UnitState::Idle && turns < 60 {
        world.step(&[]);
        turns += 1;
    }
    world.step(&[]);
    let idle = world.unit(unit).unwrap();
    assert_eq!(idle.displacement, pathing::Vec2::new(Fixed::ZERO, Fixed::ZERO));
    assert_eq!(idle.facing, pathing::Vec2::new(-Fixed::ONE, Fixed::ZERO));
}
