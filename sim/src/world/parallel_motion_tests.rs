//! The motion step on a pool (docs/decisions.md, "The motion step runs on the pool with one
//! thread's result"): crowds dense enough that the walks and the push-apart's passes are split
//! between threads give, turn after turn, the hashes of one thread.

use pathing::classes::ClassSet;
use pathing::terrain::{GridSpec, Terrain};

use super::*;
use crate::command::{CommandKind, GoalSpec};

/// A 96 × 96 m world with a wall across its middle (a 12 m gap), three players: two crowds of
/// 30 × 30 units at 0.8 m spacing (radius 0.5, so every unit overlaps its neighbours) on either
/// side, and a line of 40 idle units of a third player standing in the gap; on turn 2 the two
/// crowds are sent through the gap to each other's side.
fn crowd_world(threads: usize) -> (World, Vec<EntityId>, Vec<EntityId>) {
    let m = |n: i32| Fixed::from_num(n);
    let terrain = Terrain::flat(24, 24, m(4), m(12), Fixed::ZERO).unwrap();
    let desc = WorldDesc::new(GridSpec { width: 96, height: 96, cell_size: Fixed::ONE }, ClassSet::zero_ad_defaults(), terrain);
    let wall = |x0: i32, x1: i32| {
        let square = pathing::raster::oriented_square(WorldPos::new(m(x0 + x1) / 2, m(48)), m(x1 - x0) / 2, m(1), Fixed::ZERO).unwrap();
        pathing::passability::Obstruction { square, flags: pathing::passability::ObstructionFlags::STATIC }
    };
    let obstructions = vec![(pathing::ObstructionId(1), wall(0, 42)), (pathing::ObstructionId(2), wall(54, 96))];
    let mut world = World::new(desc, obstructions, Settings::default()).unwrap();
    world.set_threads(threads).unwrap();
    let spawn = |world: &mut World, player: u8, seq: u32, count: u16, at: WorldPos| {
        let kind = CommandKind::Spawn { class: pathing::PassClass::of(0), at, count, radius: Fixed::ONE / 2, speed: m(6), turn_rate: None };
        world.step(&[Command { turn: world.turn(), player: crate::PlayerId(player), seq, kind }]);
    };
    spawn(&mut world, 1, 0, 900, WorldPos::from_int(48, 20));
    spawn(&mut world, 2, 0, 900, WorldPos::from_int(48, 76));
    spawn(&mut world, 3, 0, 40, WorldPos::from_int(48, 48));
    let of = |world: &World, player: u8| world.units().filter(|u| u.owner == crate::PlayerId(player)).map(|u| u.id).collect::<Vec<_>>();
    let (south, north, holders) = (of(&world, 1), of(&world, 2), of(&world, 3));
    let spot = |k: usize, z0: i64| {
        let raw = |metres_sixteenths: i64| Fixed::from_bits(metres_sixteenths << 12);
        // 0.8 m = 12.8 sixteenths; positions kept off navcell borders by a quarter sixteenth.
        WorldPos::new(raw(36 * 16 + (k % 30) as i64 * 13 + 1), raw(z0 * 16 + (k / 30) as i64 * 13 + 1))
    };
    for (k, &id) in south.iter().enumerate() {
        world.units.get_mut(id).unwrap().pos = spot(k, 10);
    }
    for (k, &id) in north.iter().enumerate() {
        world.units.get_mut(id).unwrap().pos = spot(k, 62);
    }
    for (k, &id) in holders.iter().enumerate() {
        let x = Fixed::from_bits((43 * 16 + (k % 20) as i64 * 9 + 1) << 12);
        let z = Fixed::from_bits((47 * 16 + (k / 20) as i64 * 24 + 1) << 12);
        world.units.get_mut(id).unwrap().pos = WorldPos::new(x, z);
    }
    (world, south, north)
}

/// Pairs of units whose circles overlap, counted directly.
fn overlapping_pairs(world: &World) -> usize {
    let units: Vec<&crate::Unit> = world.units().collect();
    let mut count = 0;
    for (k, a) in units.iter().enumerate() {
        for b in &units[k + 1..] {
            let (dx, dz) = (i128::from((b.pos.x - a.pos.x).to_bits()), i128::from((b.pos.z - a.pos.z).to_bits()));
            let reach = i128::from((a.radius + b.radius).to_bits());
            count += usize::from(dx * dx + dz * dz < reach * reach);
        }
    }
    count
}

fn run(threads: usize) -> (Vec<[u8; 32]>, usize, usize) {
    let (mut world, south, north) = crowd_world(threads);
    let crowded = overlapping_pairs(&world);
    let order = |player: u8, units: &[EntityId], to: (i32, i32)| Command {
        turn: 0,
        player: crate::PlayerId(player),
        seq: 1,
        kind: CommandKind::Move { units: units.to_vec(), goal: GoalSpec::Point(WorldPos::from_int(to.0, to.1)), queue: false },
    };
    let mut hashes = Vec::new();
    let mut walked_max = 0;
    for turn in 0..40 {
        let commands = if turn == 0 {
            let turn = world.turn();
            vec![Command { turn, ..order(1, &south, (48, 80)) }, Command { turn, ..order(2, &north, (48, 16)) }]
        } else {
            Vec::new()
        };
        hashes.push(world.step(&commands).hash);
        walked_max = walked_max.max(world.units().filter(|u| u.state == UnitState::Moving).count());
    }
    (hashes, crowded, walked_max)
}

#[test]
fn crowds_split_between_threads_give_the_hashes_of_one_thread() {
    let (one, crowded, walking) = run(1);
    // Dense enough that the pool is used: more overlapping pairs than a pass pushes on the
    // calling thread, more walkers than one walk task holds.
    assert!(crowded >= crate::motion::PARALLEL_PUSH_PAIRS, "{crowded} overlapping pairs");
    assert!(walking > 4 * crate::motion::WALK_TASK_UNITS, "{walking} walking");
    for threads in [2, 8] {
        assert_eq!(run(threads).0, one, "{threads} threads differ from one");
    }
}
