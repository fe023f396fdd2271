//! Motion rules end to end (docs/motion-rules.md): repeated orders that keep their path.

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
