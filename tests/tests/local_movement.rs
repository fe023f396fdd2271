//! Local movement end to end: short-range detours, nudging, the push-apart, range goals and
//! spawning, as ASCII scenario snapshots and as properties over random crowds.
//!
//! The scenario maps are drawn in text: `#` is a wall (merged into obstruction rectangles per
//! row run), `.` open ground. Pictures show the navcells of the walking class (`default`, clearance
//! 1 m) as `#` (impassable) or `.` (passable), and each unit as a letter by entity index (`a` is the
//! first unit; `*` where two share a navcell). Re-bless an intentional behaviour change with
//! `INSTA_UPDATE=always cargo test -p phalanx-tests --test local_movement` and review the diff.

use std::fmt::Write as _;

use pathing::passability::ObstructionFlags;
use pathing::{Fixed, PassClass, WorldPos};
use proptest::prelude::*;
use sim::test_support::{FIELD, glyph, metres, picture, world_from};
use sim::{Command, CommandKind, EntityId, Event, FailReason, GoalSpec, OVERLAP_TOLERANCE, PlayerId, SquareSpec, Target, UnitState, World};

fn m(n: i32) -> Fixed {
    Fixed::from_num(n)
}

/// `n` tenths of a metre.
fn dm(n: i32) -> Fixed {
    Fixed::from_num(n) / 10
}

fn at(x: i32, z: i32) -> WorldPos {
    WorldPos::from_int(x, z)
}

/// A point at tenths of a metre.
fn at_dm(x: i32, z: i32) -> WorldPos {
    WorldPos::new(dm(x), dm(z))
}

fn cmd(turn: u32, player: u8, seq: u32, kind: CommandKind) -> Command {
    Command { turn, player: PlayerId(player), seq, kind }
}

/// A short description of every unit.
fn roster(world: &World) -> String {
    let mut out = String::new();
    for u in world.units() {
        let state = match u.state {
            UnitState::Idle => "idle".to_string(),
            UnitState::WaitingForPath => "waiting".to_string(),
            UnitState::Moving => "moving".to_string(),
            UnitState::Blocked(n) => format!("blocked {n}"),
        };
        writeln!(out, "{} at ({}, {}) {state}, {} orders", glyph(u.id), metres(u.pos.x), metres(u.pos.z), u.orders.len()).unwrap();
    }
    out
}

/// Runs a scenario: `script(turn)` gives each turn's commands; the picture is taken at each of
/// `frames`; the events that matter are tallied. Checks the properties of every turn on the way.
fn run(rows: &[&str], turns: u32, frames: &[u32], script: &dyn Fn(u32, &World) -> Vec<Command>) -> (String, World) {
    let mut world = world_from(rows, 1);
    let mut out = String::new();
    let mut tally: std::collections::BTreeMap<&'static str, Vec<char>> = std::collections::BTreeMap::new();
    for turn in 0..turns {
        let commands = script(turn, &world);
        let report = world.step(&commands);
        for e in &report.events {
            let (name, unit) = match e {
                Event::Arrived { unit } => ("arrived", unit),
                Event::Failed { unit, reason: FailReason::Blocked } => ("failed (blocked)", unit),
                Event::Failed { unit, reason: FailReason::PassageHeld } => ("failed (passage held)", unit),
                Event::Failed { unit, reason: FailReason::NoPath } => ("failed (no path)", unit),
                Event::Nudged { unit } => ("nudged", unit),
                Event::Detour { unit } => ("detour", unit),
                Event::PathPartial { unit } => ("partial", unit),
                Event::Unstuck { unit } => ("unstuck", unit),
                Event::Dispersed { unit } => ("dispersed", unit),
                Event::Rejected { reason, .. } => panic!("turn {turn}: command rejected: {reason:?}"),
                _ => continue,
            };
            tally.entry(name).or_default().push(glyph(*unit));
        }
        check_turn(&world).unwrap_or_else(|e| panic!("turn {turn}: {e}"));
        if frames.contains(&turn) {
            writeln!(out, "turn {turn}:\n{}", picture(&world)).unwrap();
        }
    }
    writeln!(out, "after {turns} turns:\n{}", roster(&world)).unwrap();
    for (name, units) in tally {
        writeln!(out, "{name}: {}", units.iter().collect::<String>()).unwrap();
    }
    (out, world)
}

/// The properties every turn must keep: no unit on a navcell impassable for its class (unless it
/// is escaping one), the world's own invariants.
fn check_turn(world: &World) -> Result<(), String> {
    world.check_invariants().map_err(|e| e.to_string())?;
    for u in world.units() {
        let pass = world.nav().class_nav(u.class).unwrap().pass_map();
        if !pass.is_passable(world.navcell_of(u.pos)) && !u.escape {
            return Err(format!("unit {:?} stands on an impassable navcell at {:?}", u.id, u.pos));
        }
    }
    Ok(())
}

/// The largest overlap between two units, as the fraction (of 2^16) by which their distance falls
/// short of the sum of their radii.
fn worst_overlap(world: &World) -> i64 {
    let units: Vec<_> = world.units().collect();
    let mut worst = 0i64;
    for (k, a) in units.iter().enumerate() {
        for b in &units[k + 1..] {
            let (dx, dz) = (i128::from((a.pos.x - b.pos.x).to_bits()), i128::from((a.pos.z - b.pos.z).to_bits()));
            let reach = i128::from((a.radius + b.radius).to_bits());
            let d2 = dx * dx + dz * dz;
            if d2 < reach * reach {
                let d = d2.isqrt();
                worst = worst.max((((reach - d) << 16) / reach) as i64);
            }
        }
    }
    worst
}

fn spawn(turn: u32, player: u8, seq: u32, x: i32, z: i32, count: u16) -> Command {
    cmd(
        turn,
        player,
        seq,
        CommandKind::Spawn { class: PassClass::of(0), at: at(x, z), count, radius: Fixed::ONE / 2, speed: m(6), turn_rate: None },
    )
}

fn go(turn: u32, player: u8, seq: u32, units: Vec<EntityId>, goal: GoalSpec) -> Command {
    cmd(turn, player, seq, CommandKind::Move { units, goal, queue: false })
}

fn ids(world: &World, player: u8) -> Vec<EntityId> {
    world.units().filter(|u| u.owner == PlayerId(player)).map(|u| u.id).collect()
}

const CORRIDOR: &[&str] = &[
    "########################################",
    "########################################",
    "##................................######",
    "##................................######",
    "##......................................",
    "##................................######",
    "##................................######",
    "########################################",
];

/// A walker (unit `a`, spawned at `walker`) meets a unit of its own player standing at `standing`
/// on its way to `goal`: the scenario of both corridor tests.
fn walker_meets_standing_unit(rows: &[&str], frames: &[u32], walker: (i32, i32), standing: (i32, i32), goal: WorldPos) -> String {
    run(rows, 40, frames, &|turn, w| match turn {
        0 => vec![spawn(0, 1, 0, walker.0, walker.1, 1)],
        1 => vec![spawn(1, 1, 0, standing.0, standing.1, 1)],
        2 => vec![go(2, 1, 0, vec![ids(w, 1)[0]], GoalSpec::Point(goal))],
        _ => Vec::new(),
    })
    .0
}

#[test]
fn unit_blocked_in_a_corridor_by_a_standing_unit() {
    // The corridor is wide enough to go round the standing unit.
    insta::assert_snapshot!(walker_meets_standing_unit(CORRIDOR, &[1, 6, 12, 39], (4, 3), (20, 3), at_dm(305, 35)));
}

const NARROW: &[&str] = &[
    "########################################",
    "########################################",
    "########################################",
    "##.........................#############",
    "##......................................",
    "##.........................#############",
    "########################################",
    "########################################",
];

#[test]
fn unit_nudges_a_standing_unit_along_a_narrow_corridor() {
    // One navcell of passable width: the standing unit is nudged ahead of the walker.
    insta::assert_snapshot!(walker_meets_standing_unit(NARROW, &[2, 10, 39], (4, 4), (20, 4), at_dm(245, 35)));
}

#[test]
fn two_crowds_crossing() {
    let (out, world) = run(FIELD, 40, &[1, 8, 14, 39], &|turn, w| match turn {
        0 => vec![spawn(0, 1, 0, 6, 8, 12), spawn(0, 2, 0, 41, 8, 12)],
        1 => {
            let (a, b) = (ids(w, 1), ids(w, 2));
            vec![
                go(1, 1, 0, a, GoalSpec::Circle { center: at(40, 8), radius: m(4) }),
                go(1, 2, 0, b, GoalSpec::Circle { center: at(7, 8), radius: m(4) }),
            ]
        }
        _ => Vec::new(),
    });
    // The overlap the push-apart leaves once everyone stands.
    let worst = worst_overlap(&world);
    assert!(worst <= OVERLAP_TOLERANCE.to_bits(), "overlap {worst} beyond the tolerance");
    insta::assert_snapshot!(out);
}

const BOX: &[&str] = &[
    "################################",
    "#..............................#",
    "#..............................#",
    "#..............................#",
    "#..............................#",
    "#..............................#",
    "#..............................#",
    "################################",
];

#[test]
fn unit_boxed_in_gives_up() {
    // Player 2's units stand all round player 1's unit; they are not its to nudge.
    let (out, _) = run(BOX, 40, &[2, 39], &|turn, w| match turn {
        0 => vec![spawn(0, 1, 0, 8, 4, 1)],
        1 => {
            let ring = [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)];
            ring.iter()
                .enumerate()
                .map(|(n, &(dx, dz))| {
                    cmd(
                        1,
                        2,
                        n as u32,
                        CommandKind::Spawn {
                            class: PassClass::of(0),
                            at: at_dm(85 + dx * 12, 45 + dz * 12),
                            count: 1,
                            radius: Fixed::ONE / 2,
                            speed: m(6),
                            turn_rate: None,
                        },
                    )
                })
                .collect()
        }
        2 => vec![go(2, 1, 0, vec![ids(w, 1)[0]], GoalSpec::Point(at(26, 4)))],
        _ => Vec::new(),
    });
    insta::assert_snapshot!(out);
}

#[test]
fn unit_spawned_inside_a_building_appears_outside_it() {
    let (out, _) = run(BOX, 4, &[0, 3], &|turn, _| match turn {
        0 => vec![cmd(
            0,
            0,
            0,
            CommandKind::PlaceObstruction {
                square: SquareSpec { x: m(16), z: m(4), w: m(6), h: m(4), degrees: Fixed::ZERO },
                flags: ObstructionFlags::BLOCK_PATHFINDING | ObstructionFlags::BLOCK_FOUNDATION,
            },
        )],
        1 => vec![spawn(1, 1, 0, 16, 4, 5)],
        _ => Vec::new(),
    });
    insta::assert_snapshot!(out);
}

#[test]
fn minimum_range_retreat() {
    // A ballista (unit a) 2 m from its target (unit b) must be 6 to 10 m from it.
    let (out, _) = run(FIELD, 20, &[1, 19], &|turn, w| match turn {
        0 => vec![spawn(0, 1, 0, 20, 8, 1), spawn(0, 2, 0, 22, 8, 1)],
        1 => {
            let (a, b) = (ids(w, 1)[0], ids(w, 2)[0]);
            vec![go(1, 1, 0, vec![a], GoalSpec::Range { target: Target::Unit(b), min: m(6), max: m(10), kind: sim::RangeKind::Melee })]
        }
        _ => Vec::new(),
    });
    insta::assert_snapshot!(out);
}

const GATE: &[&str] = &[
    "################################################",
    "#......................#.......................#",
    "#......................#.......................#",
    "#......................#.......................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#......................#.......................#",
    "#......................#.......................#",
    "#......................#.......................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#......................#.......................#",
    "################################################",
];

#[test]
fn gate_closing_in_front_of_a_walker() {
    // A gate (an obstruction that stops blocking when open) fills the upper opening; it closes
    // while the unit walks to it, and the unit turns to the lower opening.
    // (Rows are numbered from the south: the gate spans z 9 to 12, the lower opening z 2 to 6.)
    let (out, _) = run(GATE, 40, &[3, 8, 20, 39], &|turn, w| match turn {
        0 => vec![
            cmd(
                0,
                0,
                0,
                CommandKind::PlaceObstruction {
                    square: SquareSpec { x: dm(235), z: dm(105), w: m(1), h: m(3), degrees: Fixed::ZERO },
                    flags: 0,
                },
            ),
            spawn(0, 1, 0, 5, 10, 1),
        ],
        1 => vec![go(1, 1, 0, vec![ids(w, 1)[0]], GoalSpec::Point(at(42, 10)))],
        4 => {
            let gate = w.nav().obstructions().keys().copied().max().unwrap();
            vec![cmd(4, 0, 0, CommandKind::SetObstructionFlags { id: gate, flags: ObstructionFlags::BLOCK_PATHFINDING })]
        }
        _ => Vec::new(),
    });
    insta::assert_snapshot!(out);
}

/// A random crowd: spawn points and goals in the field, some units left standing.
fn crowd_commands(seed: &[(u8, u8, u8, u8)], turn: u32, world: &World) -> Vec<Command> {
    match turn {
        0 => seed
            .iter()
            .enumerate()
            .map(|(n, &(x, z, _, _))| {
                spawn(0, 1 + (n % 2) as u8, n as u32, 3 + i32::from(x % 42), 2 + i32::from(z % 12), 1 + u16::from(x % 3))
            })
            .collect(),
        1 => {
            let mut out = Vec::new();
            for player in 1..=2u8 {
                for (n, id) in ids(world, player).into_iter().enumerate() {
                    let &(_, _, gx, gz) = &seed[n % seed.len()];
                    if gx % 5 == 0 {
                        continue; // stays standing
                    }
                    out.push(go(1, player, n as u32, vec![id], GoalSpec::Point(at(3 + i32::from(gx % 42), 2 + i32::from(gz % 12)))));
                }
            }
            out
        }
        _ => Vec::new(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Random crowds in the walled field: every turn, no unit on an impassable navcell and the
    /// world's invariants hold; once every unit stands, no two overlap beyond the tolerance; and
    /// the hashes are the same in a second run with two worker threads.
    #[test]
    fn crowds_keep_the_rules(seed in proptest::collection::vec(any::<(u8, u8, u8, u8)>(), 2..16)) {
        let mut one = world_from(FIELD, 1);
        let mut two = world_from(FIELD, 2);
        for turn in 0..30 {
            let commands = crowd_commands(&seed, turn, &one);
            let a = one.step(&commands);
            let b = two.step(&commands);
            prop_assert_eq!(a.hash, b.hash, "turn {}", turn);
            if let Err(e) = check_turn(&one) {
                return Err(TestCaseError::fail(format!("turn {turn}: {e}")));
            }
        }
        // Once everyone stands (and the push-apart has had two more turns), nobody overlaps.
        let mut turn = 30;
        while turn < 200 && one.units().any(|u| !u.orders.is_empty() || !u.waypoints().is_empty()) {
            let (a, b) = (one.step(&[]), two.step(&[]));
            prop_assert_eq!(a.hash, b.hash, "turn {}", turn);
            turn += 1;
        }
        prop_assert!(turn < 200, "units still walking after 200 turns");
        one.step(&[]);
        one.step(&[]);
        let worst = worst_overlap(&one);
        prop_assert!(worst <= OVERLAP_TOLERANCE.to_bits(), "overlap {} beyond the tolerance", worst);
    }
}

/// A pen too small to get out of the minimum range: the order ends (review finding: it used to be
/// asked again every turn, for ever).
#[test]
fn a_retreat_with_no_way_out_gives_up() {
    const PEN: &[&str] = &[
        "################",
        "################",
        "################",
        "####.......#####",
        "####.......#####",
        "####.......#####",
        "################",
        "################",
    ];
    let mut world = world_from(PEN, 1);
    world.step(&[spawn(0, 1, 0, 6, 4, 1), spawn(0, 2, 0, 8, 4, 1)]);
    let (a, b) = (ids(&world, 1)[0], ids(&world, 2)[0]);
    let order = GoalSpec::Range { target: Target::Unit(b), min: m(6), max: m(10), kind: sim::RangeKind::Melee };
    let mut failed = false;
    for turn in 1..80 {
        let commands = if turn == 1 { vec![go(1, 1, 0, vec![a], order)] } else { Vec::new() };
        let report = world.step(&commands);
        check_turn(&world).unwrap_or_else(|e| panic!("turn {turn}: {e}"));
        failed |= report.events.iter().any(|e| matches!(e, Event::Failed { unit, .. } if *unit == a));
    }
    assert!(failed, "the retreat gave up");
    assert!(world.unit(a).unwrap().orders.is_empty());
}

/// Range orders against units approached from every direction end in range (review finding: a
/// path to a shape used to end on a navcell centre outside it, and the unit asked again for ever).
#[test]
fn range_orders_end_in_range_from_every_direction() {
    for (x, z) in [(4, 3), (4, 12), (40, 3), (40, 12), (22, 3), (22, 12), (5, 8), (42, 8)] {
        let mut world = world_from(FIELD, 1);
        world.step(&[spawn(0, 1, 0, x, z, 1), spawn(0, 2, 0, 22, 8, 1)]);
        let (a, b) = (ids(&world, 1)[0], ids(&world, 2)[0]);
        let order = GoalSpec::Range { target: Target::Unit(b), min: Fixed::ZERO, max: m(2), kind: sim::RangeKind::Melee };
        let mut arrived = false;
        for turn in 1..60 {
            let commands = if turn == 1 { vec![go(1, 1, 0, vec![a], order)] } else { Vec::new() };
            arrived |= world.step(&commands).events.contains(&Event::Arrived { unit: a });
        }
        assert!(arrived, "from ({x}, {z})");
        let (ua, ub) = (world.unit(a).unwrap(), world.unit(b).unwrap());
        let reach = i128::from((m(2) + ua.radius + ub.radius + sim::RANGE_EPSILON).to_bits());
        let (dx, dz) = (i128::from((ua.pos.x - ub.pos.x).to_bits()), i128::from((ua.pos.z - ub.pos.z).to_bits()));
        assert!(dx * dx + dz * dz <= reach * reach, "from ({x}, {z}) it stopped out of range");
    }
}

/// The crowd CI found (stop 27): a unit stepping aside from a nudge ran into another standing unit
/// and nudged it, which then ran back into the first and nudged it, for ever (the two were still
/// "walking" after 200 turns). A unit on no order nudges no one; the crowd stands within 60 turns.
#[test]
fn two_standing_units_do_not_nudge_each_other_for_ever() {
    let seed = [
        (65, 148, 65, 0),
        (183, 66, 181, 194),
        (41, 161, 137, 9),
        (124, 140, 137, 207),
        (146, 148, 33, 29),
        (232, 128, 4, 77),
        (136, 156, 143, 184),
        (42, 0, 1, 66),
    ];
    let mut world = world_from(FIELD, 1);
    let mut last_nudge = 0;
    for turn in 0..200 {
        let report = world.step(&crowd_commands(&seed, turn, &world));
        check_turn(&world).unwrap_or_else(|e| panic!("turn {turn}: {e}"));
        if report.events.iter().any(|e| matches!(e, Event::Nudged { .. })) {
            last_nudge = turn;
        }
    }
    assert!(last_nudge < 60, "a unit was still nudged in turn {last_nudge}");
    assert!(world.units().all(|u| u.orders.is_empty() && u.waypoints().is_empty() && u.state == UnitState::Idle), "{}", roster(&world));
}
