//! Range orders against obstructions (docs/motion-rules.md, "Range orders"): approached from every
//! direction, against axis-aligned, rotated and thin obstructions, a unit ends in range and beside
//! the obstruction, never walking round to its end.

use pathing::classes::ClassSet;
use pathing::passability::{Obstruction, ObstructionFlags, WorldDesc};
use pathing::raster::{effective_radius_raw32, oriented_square};
use pathing::terrain::{GridSpec, Terrain};
use pathing::{Fixed, Goal, ObstructionId, PassClass, Square, WorldPos};
use sim::{
    Command, CommandKind, EntityId, Event, GoalSpec, PlayerId, RANGE_EPSILON, RangeKind, RejectReason, Settings, SquareSpec, Target, World,
};

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
    World::new(desc, vec![(ObstructionId(1), obstruction)], Settings { seed: 5, players: 1, ..Settings::default() }).unwrap()
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
    Command { turn, player: PlayerId(1), seq: 0, kind }
}

/// Runs one range order from `start` and returns the world, the unit, whether the order ended in
/// `Arrived`, and the length the unit walked (raw, 16 fractional bits; each turn's step rounded down).
fn run_order(square: Square, start: WorldPos, order: GoalSpec, turns: u32) -> (World, EntityId, bool, i128) {
    let mut world = world_with(square);
    let spawn = CommandKind::Spawn { class: PassClass::of(0), at: start, count: 1, radius: cm(50), speed: m(9), turn_rate: None };
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
            let order = GoalSpec::Range {
                target: Target::Obstruction(ObstructionId(1)),
                min: Fixed::ZERO,
                max: Fixed::ZERO,
                kind: RangeKind::Melee,
            };
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

/// A ranged order against an obstruction heads for every point within `max + R + ε` of the
/// square (docs/motion-rules.md, "Range orders"): from every direction the unit ends within that
/// distance of the square (the exact test [`within_reach`]), walking no more than 2 m beyond the
/// least distance into range.
#[test]
fn ranged_orders_against_obstructions_end_in_range_from_sixteen_directions() {
    let mut failures = Vec::new();
    let max = m(4);
    for (name, square) in shapes() {
        let r = effective_radius(&square);
        let reach = max + r + RANGE_EPSILON;
        for (k, start) in starts().into_iter().enumerate() {
            let order = GoalSpec::Range { target: Target::Obstruction(ObstructionId(1)), min: Fixed::ZERO, max, kind: RangeKind::Ranged };
            let (world, unit, arrived, walked) = run_order(square, start, order, 120);
            let end = world.unit(unit).unwrap().pos;
            let straight = i128::from(beyond(start, &square, reach).to_bits());
            let beside = walked <= straight + i128::from(m(2).to_bits());
            if !arrived || !within_reach(end, &square, reach) || !beside {
                failures.push(format!(
                    "{name}, start {k}: arrived {arrived}, end ({}, {}), in range {}, walked {} m for {} m",
                    end.x,
                    end.z,
                    within_reach(end, &square, reach),
                    walked >> 16,
                    straight >> 16
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

/// How far `p` is beyond `reach` of the square (0 within it), to a centimetre above, by bisection
/// on the exact test [`within_reach`].
fn beyond(p: WorldPos, square: &Square, reach: Fixed) -> Fixed {
    let (mut lo, mut hi) = (Fixed::ZERO, m(64));
    if within_reach(p, square, reach) {
        return Fixed::ZERO;
    }
    while hi - lo > cm(1) {
        let mid = (lo + hi) / 2;
        if within_reach(p, square, reach + mid) { hi = mid } else { lo = mid }
    }
    hi
}

/// Foundation dispersal's zone for a unit of class 0: the footprint grown by `R` plus half a
/// navcell, per axis of the footprint. Whether `p` is in it, by pathing's own dispersal rule.
fn in_dispersal_zone(square: &Square, p: WorldPos) -> bool {
    let unit = pathing::placement::DispersalUnit { pos: p, clearance: Fixed::ONE };
    !pathing::placement::foundation_dispersal(square, Fixed::ONE, &[unit], None).is_empty()
}

/// A build order ends beside the footprint, outside the zone foundation dispersal empties (the
/// footprint grown by `R` + half a navcell) and within `R` + a navcell + ε of it, from every
/// direction (docs/motion-rules.md, "Range orders" and "Placement").
#[test]
fn build_orders_end_beside_the_footprint_clear_of_the_dispersal_zone_from_sixteen_directions() {
    let mut failures = Vec::new();
    for (name, square) in shapes() {
        let r = effective_radius(&square);
        let outer = Goal::square(grown(&square, Fixed::ONE + r + RANGE_EPSILON));
        for (k, start) in starts().into_iter().enumerate() {
            let order = GoalSpec::Range {
                target: Target::Obstruction(ObstructionId(1)),
                min: Fixed::ZERO,
                max: Fixed::ZERO,
                kind: RangeKind::Build,
            };
            let (world, unit, arrived, walked) = run_order(square, start, order, 120);
            let end = world.unit(unit).unwrap().pos;
            let straight = dist2(start, outer.nearest_point(start)).isqrt();
            let beside = walked <= straight + i128::from(m(2).to_bits());
            if !arrived || !outer.contains_point(end) || in_dispersal_zone(&square, end) || !beside {
                failures.push(format!(
                    "{name}, start {k}: arrived {arrived}, end ({}, {}), in range {}, in the dispersal zone {}, walked {} m for {} m",
                    end.x,
                    end.z,
                    outer.contains_point(end),
                    in_dispersal_zone(&square, end),
                    walked >> 16,
                    straight >> 16
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

/// A building placed over its builder is no longer refused: the builder is given a build order
/// to it and walks out to stand beside it, outside the dispersal zone, where it stays.
#[test]
fn a_building_placed_over_its_builder_sends_the_builder_to_build_range() {
    let land = PassClass::of(4); // building-land
    let centre = WorldPos::from_int(SIDE / 2, SIDE / 2);
    // A world whose only obstruction is far away in a corner.
    let far = oriented_square(WorldPos::from_int(4, 4), Fixed::ONE, Fixed::ONE, Fixed::ZERO).unwrap();
    let mut world = world_with(far);
    let spawn = CommandKind::Spawn { class: PassClass::of(0), at: centre, count: 1, radius: cm(50), speed: m(6), turn_rate: None };
    world.step(&[cmd(0, spawn)]);
    let builder = world.units().next().unwrap().id;
    let house = SquareSpec { x: centre.x, z: centre.z, w: m(8), h: m(6), degrees: m(20) };
    let report = world.step(&[cmd(1, CommandKind::PlaceBuilding { class: land, square: house, builder: Some(builder) })]);
    assert!(report.events.contains(&Event::ObstructionPlaced { id: ObstructionId(2) }), "{:?}", report.events);
    assert!(report.events.contains(&Event::Dispersed { unit: builder }), "{:?}", report.events);
    let order =
        GoalSpec::Range { target: Target::Obstruction(ObstructionId(2)), min: Fixed::ZERO, max: Fixed::ZERO, kind: RangeKind::Build };
    assert_eq!(world.unit(builder).unwrap().orders.first(), Some(&order));
    let mut arrived = false;
    for _ in 2..60 {
        arrived |= world.step(&[]).events.contains(&Event::Arrived { unit: builder });
    }
    assert!(arrived);
    let square = world.nav().obstructions()[&ObstructionId(2)].square;
    let end = world.unit(builder).unwrap().pos;
    assert!(!in_dispersal_zone(&square, end), "the builder stands clear of the zone at ({}, {})", end.x, end.z);
    let r = effective_radius(&square);
    assert!(Goal::square(grown(&square, Fixed::ONE + r + RANGE_EPSILON)).contains_point(end), "beside it at ({}, {})", end.x, end.z);
    // The build order is done and was its only order.
    assert!(world.unit(builder).unwrap().orders.is_empty());
}

/// Clearance and radius are tied (docs/pathfinding-rules.md, "Clearance"): a spawn whose radius is
/// above the class's clearance in whole navcells is refused, naming both; at the clearance it is
/// accepted.
#[test]
fn a_unit_wider_than_its_class_clearance_is_refused_at_spawn() {
    let far = oriented_square(WorldPos::from_int(4, 4), Fixed::ONE, Fixed::ONE, Fixed::ZERO).unwrap();
    let mut world = world_with(far);
    let at = WorldPos::from_int(SIDE / 2, SIDE / 2);
    let spawn =
        |class: u8, radius: Fixed| CommandKind::Spawn { class: PassClass::of(class), at, count: 1, radius, speed: m(6), turn_rate: None };
    // Class 0 (`default`) has clearance 1 m, class 1 (`large`) 3 m.
    let report = world.step(&[
        Command { turn: 0, player: PlayerId(1), seq: 0, kind: spawn(0, cm(150)) },
        Command { turn: 0, player: PlayerId(1), seq: 1, kind: spawn(0, m(1)) },
        Command { turn: 0, player: PlayerId(1), seq: 2, kind: spawn(1, cm(301)) },
        Command { turn: 0, player: PlayerId(1), seq: 3, kind: spawn(1, m(3)) },
    ]);
    let rejected: Vec<_> = report
        .events
        .iter()
        .filter_map(|e| if let Event::Rejected { command, reason } = e { Some((command.2, reason.clone())) } else { None })
        .collect();
    assert_eq!(
        rejected,
        vec![
            (0, RejectReason::RadiusAboveClearance { radius: cm(150), clearance: m(1) }),
            (2, RejectReason::RadiusAboveClearance { radius: cm(301), clearance: m(3) }),
        ]
    );
    assert_eq!(world.units().count(), 2);
}

/// The clearance compared with is the whole-navcell one: a class of clearance 0.25 m on 0.5 m
/// navcells takes units up to 0.5 m.
#[test]
fn the_radius_is_compared_with_the_clearance_in_whole_navcells() {
    use pathing::classes::{ClassDef, ObstructionMode};
    let walker = ClassDef { clearance: cm(25), ..ClassDef::unbounded("walker", ObstructionMode::Pathfinding) };
    let classes = ClassSet::new(vec![walker]).unwrap();
    let terrain = Terrain::flat(4, 4, m(4), m(1), Fixed::ZERO).unwrap();
    let desc = WorldDesc::new(GridSpec { width: 32, height: 32, cell_size: cm(50) }, classes, terrain);
    let mut world = World::new(desc, Vec::new(), Settings { seed: 5, players: 1, ..Settings::default() }).unwrap();
    let at = WorldPos::from_int(8, 8);
    let spawn = |seq: u32, radius: Fixed| Command {
        turn: 0,
        player: PlayerId(1),
        seq,
        kind: CommandKind::Spawn { class: PassClass::of(0), at, count: 1, radius, speed: m(2), turn_rate: None },
    };
    let report = world.step(&[spawn(0, cm(50)), spawn(1, cm(51))]);
    assert_eq!(report.events.iter().filter(|e| matches!(e, Event::Spawned { .. })).count(), 1, "{:?}", report.events);
    assert!(report.events.contains(&Event::Rejected {
        command: (0, PlayerId(1), 1),
        reason: RejectReason::RadiusAboveClearance { radius: cm(51), clearance: cm(50) }
    }));
}

/// `a · b` for unsigned 128-bit numbers, as a 256-bit `(hi, lo)` (compared lexicographically).
fn wide_mul(a: u128, b: u128) -> (u128, u128) {
    let m64 = u128::from(u64::MAX);
    let (a1, a0, b1, b0) = (a >> 64, a & m64, b >> 64, b & m64);
    let (p00, p01, p10, p11) = (a0 * b0, a0 * b1, a1 * b0, a1 * b1);
    let mid = (p00 >> 64) + (p01 & m64) + (p10 & m64);
    ((p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64)), (p00 & m64) | (mid << 64))
}

/// Whether `p` is within `reach` of the closed square (its corners `c ± hw·u ± hh·v`), exactly:
/// inside it, or within `reach` of one of its four edges (point-to-segment distances in wide
/// integers, 32 fractional bits).
fn within_reach(p: WorldPos, sq: &Square, reach: Fixed) -> bool {
    let r = |v: Fixed| i128::from(v.to_bits());
    let (u, v, c) = (sq.u(), sq.v(), sq.center());
    let corner = |a: i128, b: i128| {
        (
            (r(c.x) << 16) + a * r(sq.hw()) * r(u.x) + b * r(sq.hh()) * r(v.x),
            (r(c.z) << 16) + a * r(sq.hw()) * r(u.z) + b * r(sq.hh()) * r(v.z),
        )
    };
    let ring = [corner(-1, -1), corner(1, -1), corner(1, 1), corner(-1, 1)];
    let (px, pz) = (r(p.x) << 16, r(p.z) << 16);
    // Inside: on the same side of every edge (the corners go round one way).
    let sides: Vec<i128> = (0..4)
        .map(|k| {
            let (a, b) = (ring[k], ring[(k + 1) % 4]);
            ((b.0 - a.0) * (pz - a.1) - (b.1 - a.1) * (px - a.0)).signum()
        })
        .collect();
    if sides.iter().all(|&s| s >= 0) || sides.iter().all(|&s| s <= 0) {
        return true;
    }
    let d = r(reach) << 16;
    (0..4).any(|k| {
        let (a, b) = (ring[k], ring[(k + 1) % 4]);
        let (ex, ez) = (b.0 - a.0, b.1 - a.1);
        let (qx, qz) = (px - a.0, pz - a.1);
        let t = ex * qx + ez * qz;
        let l2 = ex * ex + ez * ez;
        let end = |x: i128, z: i128| x * x + z * z <= d * d;
        if t <= 0 {
            end(qx, qz)
        } else if t >= l2 {
            end(px - b.0, pz - b.1)
        } else {
            // cross² ≤ d² · l², both sides past 2^128.
            let cross = (ex * qz - ez * qx).unsigned_abs();
            wide_mul(cross, cross) <= wide_mul((d * d) as u128, l2 as u128)
        }
    })
}

/// A ranged unit in range of any part of its target stays where it is; out of range, it walks to
/// about the nearest point from which the target is in range (docs/motion-rules.md, "Range
/// orders"): against walls of several lengths and angles and a building, from starts inside and
/// outside the range along the wall and beyond its ends, for several unit radii and classes. The
/// oracle is the exact distance from the unit to the turned square, computed here.
#[test]
fn ranged_units_in_range_of_any_part_stay_and_others_walk_to_the_nearest_point_in_range() {
    let side = 112;
    let world = |square: Square| {
        let terrain = Terrain::flat(side / 4, side / 4, m(4), m(12), Fixed::ZERO).unwrap();
        let spec = GridSpec { width: side, height: side, cell_size: Fixed::ONE };
        let desc = WorldDesc::new(spec, ClassSet::zero_ad_defaults(), terrain);
        let obstruction = Obstruction { square, flags: ObstructionFlags::STATIC };
        World::new(desc, vec![(ObstructionId(1), obstruction)], Settings { seed: 5, players: 1, ..Settings::default() }).unwrap()
    };
    let mid = i32::try_from(side / 2).unwrap();
    let mut failures = Vec::new();
    let mut cases = 0;
    let mut kinds = [0; 2];
    for (len, thick, deg) in [(40, 1, 0), (40, 1, 30), (24, 1, 63), (10, 1, 135), (8, 6, 20)] {
        let square = oriented_square(WorldPos::from_int(mid, mid), m(len) / 2, m(thick) / 2, m(deg)).unwrap();
        // (class, clearance, radius, range)
        for (class, clearance, radius, range) in [(0u8, 1, cm(50), m(4)), (0, 1, m(1), m(7)), (1, 3, m(2), m(4))] {
            let rr = Fixed::from_bits(((effective_radius_raw32(&square, m(clearance), Fixed::ONE) + 0xffff) >> 16) as i64);
            let reach = range + rr + RANGE_EPSILON;
            let (hw, hh) = (square.hw(), square.hh());
            // Starts in the square's frame (along u, along v): in range beside the wall (two
            // thirds of the reach out, at several places along it), out of range beside it, and
            // beyond one end, where the nearest point in range is on the rounded corner.
            let in_range = reach * 2 / 3;
            let starts = [
                (hw * 4 / 10, -(hh + in_range), true),
                (-hw * 9 / 10, hh + in_range, true),
                (Fixed::ZERO, -(hh + in_range), true),
                (hw * 2 / 10, -(hh + reach + m(3)), false),
                (-hw * 6 / 10, hh + reach + m(9), false),
                (hw + reach * 8 / 10, -(hh + reach * 8 / 10), false),
                (-(hw + reach + m(6)), hh + m(2), false),
            ];
            for (a, b, meant_inside) in starts {
                let (u, v, c) = (square.u(), square.v(), square.center());
                let start = WorldPos::new(c.x + a * u.x + b * v.x, c.z + a * u.z + b * v.z);
                let order = GoalSpec::Range {
                    target: Target::Obstruction(ObstructionId(1)),
                    min: Fixed::ZERO,
                    max: range,
                    kind: RangeKind::Ranged,
                };
                let mut w = world(square);
                let spawn = CommandKind::Spawn { class: PassClass::of(class), at: start, count: 1, radius, speed: m(9), turn_rate: None };
                w.step(&[cmd(0, spawn)]);
                let unit = w.units().next().unwrap().id;
                let start = w.unit(unit).unwrap().pos;
                // The spawn may move a start off a blocked navcell: judge where the unit is.
                let inside = within_reach(start, &square, reach);
                kinds[usize::from(inside)] += 1;
                let _ = meant_inside;
                let (mut arrived, mut walked, mut last) = (false, 0i128, start);
                for turn in 1..160 {
                    let commands = if turn == 1 {
                        vec![cmd(1, CommandKind::Move { units: vec![unit], goal: order, queue: false })]
                    } else {
                        Vec::new()
                    };
                    let report = w.step(&commands);
                    arrived |= report.events.contains(&Event::Arrived { unit });
                    let pos = w.unit(unit).unwrap().pos;
                    walked += dist2(last, pos).isqrt();
                    last = pos;
                    if arrived {
                        break;
                    }
                }
                cases += 1;
                let end = w.unit(unit).unwrap().pos;
                // How far the start is beyond the reach: the least any walk into range can be,
                // found by bisection on the exact test along the line towards the nearest point.
                let beyond = beyond(start, &square, reach);
                let ok = if inside {
                    arrived && walked == 0 && end == start
                } else {
                    arrived
                        && within_reach(end, &square, reach)
                        && !within_reach(end, &square, reach - m(3) / 2)
                        && walked <= i128::from((beyond + m(3) / 2).to_bits())
                };
                if !ok {
                    failures.push(format!(
                        "{len} × {thick} m at {deg}°, class {class} radius {radius} range {range}: from {start:?} (in range {inside}, {beyond} m beyond) arrived {arrived}, walked {} m to {end:?}",
                        Fixed::from_bits(walked as i64)
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {cases} cases:\n{}", failures.len(), failures.join("\n"));
    assert!(kinds[0] >= 40 && kinds[1] >= 30, "starts out of and in range: {kinds:?}");
}
