//! Range orders against obstructions (docs/motion-rules.md, "Range orders"): approached from every
//! direction, against axis-aligned, rotated and thin obstructions, a unit ends in range and beside
//! the obstruction, never walking round to its end.

use pathing::classes::ClassSet;
use pathing::passability::{Obstruction, ObstructionFlags, WorldDesc};
use pathing::raster::{effective_radius_raw32, oriented_square};
use pathing::terrain::{GridSpec, Terrain};
use pathing::{Fixed, Goal, Square, WorldPos};
use sim::EntityId;
use sim::command::{Command, CommandKind, Event, GoalSpec, Target};
use sim::world::{RANGE_EPSILON, Settings, World};

fn m(n: i32) -> Fixed {
    Fixed::from_num(n)
}

/// `n` hundredths of a metre.
fn cm(n: i32) -> Fixed {
    Fixed::from_num(n) / 100
}

/// The side of the test world, in metres (1 m navcells).
const SIDE: i32 = 64;

/// A flat 64 × 64 m world with the 0 A.D. classes and one obstruction, id 1.
fn world_with(square: Square) -> World {
    let terrain = Terrain::flat(16, 16, m(4), m(12), Fixed::ZERO).unwrap();
    let spec = GridSpec { width: SIDE as u32, height: SIDE as u32, cell_size: Fixed::ONE };
    let desc = WorldDesc::new(spec, ClassSet::zero_ad_defaults(), terrain);
    let obstruction = Obstruction { square, flags: ObstructionFlags::STATIC };
    World::new(desc, vec![(1, obstruction)], Settings { seed: 5, players: 1, ..Settings::default() }).unwrap()
}

/// The obstructions every direction is tried against: name, centre, half-sizes, angle in degrees.
/// Thin ones are tried at three offsets from the navcell lattice: with the fence's side 0.35 m
/// short of a navcell line, the navcells within `clearance + ε` of it are all blocked by the
/// narrow-obstruction rule, so a goal grown by the clearance alone has no passable navcell there.
fn shapes() -> Vec<(String, Square)> {
    let mut out = Vec::new();
    for (hw, hh, deg, what) in [(m(4), m(3), 0, "building 8 × 6"), (m(4), m(3), 30, "building 8 × 6")] {
        out.push((format!("{what} at {deg}°"), oriented_square(WorldPos::from_int(SIDE / 2, SIDE / 2), hw, hh, m(deg)).unwrap()));
    }
    for (hw, hh, deg, what) in [
        (m(12), cm(10), 0, "fence 24 × 0.2"),
        (m(12), cm(10), 30, "fence 24 × 0.2"),
        (m(12), cm(10), 45, "fence 24 × 0.2"),
        (m(12), cm(10), 63, "fence 24 × 0.2"),
        (m(12), cm(10), 90, "fence 24 × 0.2"),
        (cm(25), cm(25), 45, "post 0.5 × 0.5"),
    ] {
        for (dx, dz) in [(0, 0), (55, 55), (30, 80)] {
            let c = WorldPos::new(m(SIDE / 2) + cm(dx), m(SIDE / 2) + cm(dz));
            out.push((format!("{what} at {deg}° offset ({dx}, {dz}) cm"), oriented_square(c, hw, hh, m(deg)).unwrap()));
        }
    }
    out
}

/// The 16 start points, 18 m from the centre, every 22.5° starting at 11.25° (so no start lies on
/// an axis of symmetry, where two routes would tie).
fn starts() -> Vec<WorldPos> {
    (0..16)
        .map(|k| {
            let u = pathing::trig::unit_vector_degrees(Fixed::from_num(1125 + 2250 * k) / 100);
            let r = m(18);
            WorldPos::new(m(SIDE / 2) + u.x * r, m(SIDE / 2) + u.z * r)
        })
        .collect()
}

fn cmd(turn: u32, kind: CommandKind) -> Command {
    Command { turn, player: 1, seq: 0, kind }
}

/// Runs one range order from `start` and returns the world, the unit, whether the order ended in
/// `Arrived`, and the length the unit walked (raw, 16 fractional bits; each turn's step rounded down).
fn run_order(square: Square, start: WorldPos, order: GoalSpec, turns: u32) -> (World, EntityId, bool, i128) {
    let mut world = world_with(square);
    let spawn = CommandKind::Spawn { class: 0, at: start, count: 1, radius: cm(50), speed: m(9) };
    let report = world.step(&[cmd(0, spawn)]);
    assert!(!report.events.iter().any(|e| matches!(e, Event::Rejected { .. })), "{:?}", report.events);
    let unit = world.units().next().unwrap().id;
    let (mut arrived, mut walked, mut last) = (false, 0i128, start);
    for turn in 1..turns {
        let commands =
            if turn == 1 { vec![cmd(1, CommandKind::Move { units: vec![unit], goal: order, queue: false })] } else { Vec::new() };
        let report = world.step(&commands);
        arrived |= report.events.contains(&Event::Arrived { unit });
        let pos = world.unit(unit).unwrap().pos;
        walked += dist2(last, pos).isqrt();
        last = pos;
        if arrived {
            break;
        }
    }
    (world, unit, arrived, walked)
}

/// The square grown on every side by `by`.
fn grown(square: &Square, by: Fixed) -> Square {
    Square::new(square.center(), square.hw() + by, square.hh() + by, square.u(), square.v()).unwrap()
}

/// `R` of the narrow-obstruction rule for class 0 (clearance 1 m) and 1 m navcells, rounded up to
/// 2^-16 m.
fn effective_radius(square: &Square) -> Fixed {
    let r32 = effective_radius_raw32(square, Fixed::ONE, Fixed::ONE);
    Fixed::from_bits(((r32 + 0xffff) >> 16) as i64)
}

/// Exact squared distance (raw², 32 fractional bits) between two points.
fn dist2(a: WorldPos, b: WorldPos) -> i128 {
    let dx = i128::from((a.x - b.x).to_bits());
    let dz = i128::from((a.z - b.z).to_bits());
    dx * dx + dz * dz
}

#[test]
fn range_zero_orders_against_obstructions_end_in_range_beside_them_from_sixteen_directions() {
    let mut failures = Vec::new();
    for (name, square) in shapes() {
        let r = effective_radius(&square);
        // The goal of range 0: the square grown by R + ε.
        let goal = Goal::square(grown(&square, r + RANGE_EPSILON));
        for (k, start) in starts().into_iter().enumerate() {
            let order = GoalSpec::Range { target: Target::Obstruction(1), min: Fixed::ZERO, max: Fixed::ZERO };
            let (world, unit, arrived, walked) = run_order(square, start, order, 120);
            let end = world.unit(unit).unwrap().pos;
            let nearest = goal.nearest_point(start);
            // Beside: the unit walked at most 2 m more than the straight line to the nearest point
            // of its goal (for a start facing the side of a 24 m fence, going round to its end costs more).
            let straight = dist2(start, nearest).isqrt();
            let beside = walked <= straight + i128::from(m(2).to_bits());
            if !arrived || !goal.contains_point(end) || !beside {
                failures.push(format!(
                    "{name}, start {k} ({}, {}): arrived {arrived}, end ({}, {}), in range {}, nearest goal point ({}, {}), walked {} m for {} m",
                    start.x,
                    start.z,
                    end.x,
                    end.z,
                    goal.contains_point(end),
                    nearest.x,
                    nearest.z,
                    walked >> 16,
                    straight >> 16
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
