//! Formations end to end: ASCII scenario snapshots (a gap narrower than the formation, a U-turn
//! corner, finalising at the goal), determinism (two runs, one and two threads, save and load at
//! every turn), the rules every turn must keep, and random command streams with formations.
//!
//! The scenario maps are drawn in text: `#` is a wall (merged into obstruction rectangles per
//! row run), `.` open ground. Pictures show the navcells of the walking class (`default`, clearance
//! 1 m) as `#` (impassable) or `.` (passable), the formation's remaining generalised path as `o`
//! (its waypoints) , its position as `@`, its slots as `+` where no unit stands, and each unit as a
//! letter by entity index (`a` is the first unit; `*` where two share a navcell). Re-bless an
//! intentional behaviour change with `INSTA_UPDATE=always cargo test -p phalanx-tests --test
//! formations` and review the diff.

use std::fmt::Write as _;

use pathing::classes::ClassSet;
use pathing::passability::{ObstructionFlags, WorldDesc};
use pathing::terrain::{GridSpec, Terrain};
use pathing::{Fixed, PassClass, WorldPos};
use proptest::prelude::*;
use sim::formation::{FormationId, FormationState, Layout};
use sim::test_support::{metres, picture, world_from};
use sim::{Command, CommandKind, EntityId, Event, GoalSpec, PlayerId, RejectReason, Settings, UnitState, World};

fn m(n: i32) -> Fixed {
    Fixed::from_num(n)
}

fn at(x: i32, z: i32) -> WorldPos {
    WorldPos::from_int(x, z)
}

fn cmd(turn: u32, player: u8, seq: u32, kind: CommandKind) -> Command {
    Command { turn, player: PlayerId(player), seq, kind }
}

/// The properties every turn must keep: no unit on a navcell impassable for its class (unless it
/// is escaping one), the world's own invariants, and the incremental digest equal to one
/// computed from scratch.
fn check_turn(world: &World, report: &sim::TurnReport) -> Result<(), String> {
    check_turn_since(world, report, &[])
}

/// [`check_turn`], where a unit whose position before the turn (in `before`) is now on an
/// impassable navcell (a wall was placed on it) may still stand on one: it never *walks* onto one.
fn check_turn_since(world: &World, report: &sim::TurnReport, before: &[(EntityId, WorldPos)]) -> Result<(), String> {
    world.check_invariants().map_err(|e| e.to_string())?;
    for u in world.units() {
        let pass = world.nav().class_nav(u.class).unwrap().pass_map();
        let built_over = before.iter().any(|&(id, p)| id == u.id && !pass.is_passable(world.navcell_of(p)));
        if !pass.is_passable(world.navcell_of(u.pos)) && !u.escape && !built_over {
            return Err(format!("unit {:?} stands on an impassable navcell at {:?}", u.id, u.pos));
        }
    }
    // A moving formation's position never lies on a navcell its class cannot use.
    for f in world.formations() {
        let moving = matches!(f.state, FormationState::Following | FormationState::Turning | FormationState::Finalising);
        let class = world.unit(f.members()[0]).unwrap().class;
        let pass = world.nav().class_nav(class).unwrap().pass_map();
        if moving && !pass.is_passable(world.navcell_of(f.pos)) {
            return Err(format!("formation {} ({:?}) stands on an impassable navcell at {:?}", f.id.0, f.state, f.pos));
        }
    }
    if report.digest != world.state_digest_from_scratch() {
        return Err("the incremental digest differs from one computed from scratch".into());
    }
    // A formation's flow field is derived data: it must be exactly the field built afresh from
    // what the formation saves, on today's grid (what a loaded world builds).
    for f in world.formations() {
        let (Some(inputs), Some(field)) = (f.field_inputs(), world.formation_field(f.id)) else { continue };
        // The class of the member with the largest clearance, ties to the lowest index.
        let clearance = |c: PassClass| world.nav().classes().get(c).unwrap().clearance;
        let class =
            f.members().iter().map(|&m| world.unit(m).unwrap().class).min_by_key(|&c| (std::cmp::Reverse(clearance(c)), c)).unwrap();
        let map = world.nav().class_nav(class).unwrap().pass_map();
        let mut fresh = pathing::flow_field::FlowField::new();
        fresh.build(map, inputs.region, &pathing::flow_field::FlowGoal::Cell(inputs.goal));
        if (fresh.stats(), fresh.render_ascii()) != (field.stats(), field.render_ascii()) {
            return Err(format!("formation {}: its flow field is not the one its saved inputs give", f.id.0));
        }
    }
    Ok(())
}

/// A scenario: the commands of each turn, given the world as it is.
type Script<'a> = &'a dyn Fn(u32, &World) -> Vec<Command>;

/// Runs a scenario for `turns` turns with `threads` path threads: the pictures at `frames`, the
/// formation events, and a summary; checks every turn on the way. Returns the text, the per-turn
/// hashes and the world.
fn run(rows: &[&str], turns: u32, frames: &[u32], threads: usize, script: Script<'_>) -> (String, Vec<[u8; 32]>, World) {
    let mut world = world_from(rows, threads);
    let mut out = String::new();
    let mut hashes = Vec::new();
    let mut states: Vec<(FormationId, FormationState)> = Vec::new();
    for turn in 0..turns {
        let commands = script(turn, &world);
        let report = world.step(&commands);
        for e in &report.events {
            match e {
                Event::FormationCreated { formation } => writeln!(out, "turn {turn}: formation {} created", formation.0).unwrap(),
                Event::FormationArrived { formation } => writeln!(out, "turn {turn}: formation {} arrived", formation.0).unwrap(),
                Event::FormationDisbanded { formation } => writeln!(out, "turn {turn}: formation {} disbanded", formation.0).unwrap(),
                Event::Rejected { reason, .. } => panic!("turn {turn}: command rejected: {reason:?}"),
                _ => {}
            }
        }
        // State changes, but not back to idle (that is the arrival).
        for f in world.formations().filter(|f| f.state != FormationState::Idle) {
            let before = states.iter().find(|s| s.0 == f.id).map(|s| s.1);
            if before != Some(f.state) {
                writeln!(out, "turn {turn}: formation {} {}", f.id.0, format!("{:?}", f.state).to_lowercase()).unwrap();
            }
        }
        states = world.formations().map(|f| (f.id, f.state)).collect();
        check_turn(&world, &report).unwrap_or_else(|e| panic!("turn {turn}: {e}"));
        hashes.push(report.hash);
        if frames.contains(&turn) {
            let states: Vec<String> = world.formations().map(|f| format!("{:?}", f.state)).collect();
            writeln!(out, "turn {turn} ({}):\n{}", states.join(", "), picture(&world)).unwrap();
        }
    }
    for f in world.formations() {
        writeln!(out, "formation {}: {:?} at ({}, {})", f.id.0, f.state, metres(f.pos.x), metres(f.pos.z)).unwrap();
    }
    (out, hashes, world)
}

fn spawn(turn: u32, player: u8, seq: u32, x: i32, z: i32, count: u16) -> Command {
    cmd(
        turn,
        player,
        seq,
        CommandKind::Spawn { class: PassClass::of(0), at: at(x, z), count, radius: Fixed::ONE / 2, speed: m(6), turn_rate: None },
    )
}

fn ids(world: &World, player: u8) -> Vec<EntityId> {
    world.units().filter(|u| u.owner == PlayerId(player)).map(|u| u.id).collect()
}

fn first_formation(world: &World) -> FormationId {
    world.formations().next().expect("a formation").id
}

/// A wall across the field with a 6 m gap (4 m of it passable for the class): narrower than the
/// 15 m wide line that has to pass it.
const GAP: &[&str] = &[
    "################################################################################",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "#......................................#.......................................#",
    "################################################################################",
    "################################################################################",
    "################################################################################",
];

/// Forms `count` units of player 1 spawned at `spawn_at` into a formation with `layout` on turn
/// 1, and moves it to `goal` on turn 3.
fn march(layout: Layout, spawn_at: (i32, i32), count: u16, goal: GoalSpec) -> impl Fn(u32, &World) -> Vec<Command> {
    move |turn, w| match turn {
        0 => vec![spawn(0, 1, 0, spawn_at.0, spawn_at.1, count)],
        1 => vec![cmd(1, 1, 0, CommandKind::FormGroup { units: ids(w, 1), layout })],
        3 => vec![cmd(3, 1, 0, CommandKind::MoveFormation { formation: first_formation(w), goal })],
        _ => Vec::new(),
    }
}

#[test]
fn a_formation_passes_a_gap_narrower_than_itself() {
    let script = march(Layout::Line, (14, 18), 24, GoalSpec::Point(at(66, 18)));
    let (out, _, world) = run(GAP, 100, &[2, 12, 22, 24, 26, 30, 36, 99], 1, &script);
    assert!(out.contains("formation 0 arrived"), "{out}");
    assert!(world.formations().all(|f| f.state == FormationState::Idle));
    // The line is 10 files of 1.5 m: wider than the gap, which is 6 m and 4 m passable.
    let slots = world.formation_slots(first_formation(&world));
    assert!(slots.iter().map(|p| p.z).max().unwrap() - slots.iter().map(|p| p.z).min().unwrap() > m(6));
    // And it really went through: every member stands east of the wall, near its slot.
    let members = world.formation(first_formation(&world)).unwrap().members().to_vec();
    for (id, slot) in members.iter().zip(&slots) {
        let unit = world.unit(*id).unwrap();
        assert!(unit.pos.x > m(40), "member {id:?} at {:?} did not cross the wall", unit.pos);
        let (dx, dz) = (unit.pos.x - slot.x, unit.pos.z - slot.z);
        assert!(dx.abs() <= m(2) && dz.abs() <= m(2), "member {id:?} at {:?} is far from its slot {slot:?}", unit.pos);
    }
    insta::assert_snapshot!(out);
}

/// A long wall from the west edge: the way from below it to above it turns round its east end.
const U_TURN: &[&str] = &[
    "################################################################################",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#######################################################........................#",
    "#######################################################........................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "#..............................................................................#",
    "################################################################################",
];

#[test]
fn a_formation_takes_a_u_turn_round_the_end_of_a_wall() {
    let script = march(Layout::Box, (20, 14), 16, GoalSpec::Point(at(20, 30)));
    let (out, _, world) = run(U_TURN, 120, &[4, 36, 40, 44, 48, 55, 70, 119], 1, &script);
    assert!(out.contains("formation 0 arrived"), "{out}");
    assert!(world.formations().all(|f| f.state == FormationState::Idle));
    // It set off eastwards (see turn 4) and turned round the wall's end as a block: it ends
    // facing west.
    assert!(out.contains("formation 0 turning"), "{out}");
    assert!(world.formations().all(|f| f.facing.x < Fixed::ZERO), "{:?}", world.formations().next().unwrap().facing);
    insta::assert_snapshot!(out);
}

/// An open field with a pillar where the formation stops: some slots fall on it.
const PILLAR: &[&str] = &[
    "################################################################",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#.................................................###..........#",
    "#.................................................###..........#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "#..............................................................#",
    "################################################################",
];

#[test]
fn a_formation_finalises_at_its_goal() {
    let script = march(Layout::Wedge, (10, 10), 16, GoalSpec::Circle { center: at(50, 16), radius: m(2) });
    let (out, _, world) = run(PILLAR, 60, &[30, 32, 34, 35, 36, 59], 1, &script);
    assert!(out.contains("formation 0 arrived"), "{out}");
    assert!(world.formations().all(|f| f.state == FormationState::Idle));
    // It went straight to the goal at the end, then stopped there while the members closed up.
    assert!(out.contains("formation 0 finalising") && out.contains("formation 0 arriving"), "{out}");
    // Every member stands in its slot, except where the slot is on the pillar (then it stands at
    // the nearest navcell the formation's flow field reached).
    let id = first_formation(&world);
    let pass = world.nav().class_nav(PassClass::new(0).unwrap()).unwrap().pass_map();
    let f = world.formation(id).unwrap();
    let (mut in_slot, mut moved_off) = (0, 0);
    for (&member, slot) in f.members().iter().zip(world.formation_slots(id)) {
        let u = world.unit(member).unwrap();
        let (dx, dz) = (i128::from((u.pos.x - slot.x).to_bits()), i128::from((u.pos.z - slot.z).to_bits()));
        if dx * dx + dz * dz <= i128::from(sim::formation::ARRIVE_DISTANCE.to_bits()).pow(2) {
            in_slot += 1;
        } else {
            assert!(!pass.is_passable(world.navcell_of(slot)), "member {member:?} is not in its slot {slot:?}");
            moved_off += 1;
        }
    }
    assert!(in_slot > 0 && moved_off > 0, "{in_slot} in their slots, {moved_off} off the pillar");
    insta::assert_snapshot!(out);
}

#[test]
fn two_runs_and_one_or_two_threads_give_the_same_hashes() {
    let gap = march(Layout::Line, (14, 18), 24, GoalSpec::Point(at(66, 18)));
    let u_turn = march(Layout::Box, (20, 14), 16, GoalSpec::Point(at(20, 30)));
    let cases: [(&[&str], Script<'_>); 2] = [(GAP, &gap), (U_TURN, &u_turn)];
    for (rows, script) in cases {
        // Long enough for both to turn, finalise and arrive (the U-turn arrives at about turn 90).
        let (_, one, _) = run(rows, 130, &[], 1, script);
        let (_, again, _) = run(rows, 130, &[], 1, script);
        let (_, two, _) = run(rows, 130, &[], 2, script);
        for turn in 0..one.len() {
            assert_eq!(one[turn], again[turn], "turn {turn}: two runs differ");
            assert_eq!(one[turn], two[turn], "turn {turn}: two threads differ from one");
        }
    }
}

/// Two players' formations in the gap map, with everything that changes a formation: a wall
/// placed across the first one's flow field while it walks (the field is rebuilt for the new
/// grid), a layout change on the way, a member ordered away on its own, a second formation made
/// of the first one's units, one disbanded.
fn busy_script(turn: u32, w: &World) -> Vec<Command> {
    let mine = |player: u8| ids(w, player);
    let formation_of = |player: u8| w.formations().filter(|f| f.owner == PlayerId(player)).map(|f| f.id).last();
    match turn {
        0 => vec![spawn(0, 1, 0, 12, 20, 14), spawn(0, 2, 0, 12, 8, 6)],
        1 => vec![
            cmd(1, 1, 0, CommandKind::FormGroup { units: mine(1), layout: Layout::Box }),
            cmd(1, 2, 0, CommandKind::FormGroup { units: mine(2), layout: Layout::Wedge }),
        ],
        2 => vec![
            cmd(2, 1, 0, CommandKind::MoveFormation { formation: formation_of(1).unwrap(), goal: GoalSpec::Point(at(64, 20)) }),
            cmd(
                2,
                2,
                0,
                CommandKind::MoveFormation {
                    formation: formation_of(2).unwrap(),
                    goal: GoalSpec::Square { center: at(60, 8), half: m(3) },
                },
            ),
        ],
        12 => vec![cmd(
            12,
            0,
            0,
            CommandKind::PlaceObstruction {
                square: sim::SquareSpec { x: m(52), z: m(26), w: m(2), h: m(6), degrees: m(30) },
                flags: ObstructionFlags::BLOCK_PATHFINDING | ObstructionFlags::BLOCK_FOUNDATION,
            },
        )],
        16 => vec![cmd(16, 1, 0, CommandKind::SetLayout { formation: formation_of(1).unwrap(), layout: Layout::Column })],
        20 => vec![cmd(20, 1, 0, CommandKind::Move { units: vec![mine(1)[0]], goal: GoalSpec::Point(at(30, 30)), queue: false })],
        24 => vec![cmd(24, 1, 0, CommandKind::FormGroup { units: mine(1)[1..4].to_vec(), layout: Layout::Loose })],
        30 => vec![cmd(
            30,
            1,
            0,
            CommandKind::MoveFormation { formation: formation_of(1).unwrap(), goal: GoalSpec::Circle { center: at(20, 28), radius: m(3) } },
        )],
        34 => vec![cmd(34, 2, 0, CommandKind::Disband { formation: formation_of(2).unwrap() })],
        _ => Vec::new(),
    }
}

/// Save at turn `t`, load, and continue: the hashes are those of the run that never stopped, for
/// every `t` (the flow fields are not saved: the loaded world rebuilds them from what each
/// formation stores, on its first turn).
#[test]
fn save_load_continue_gives_the_uninterrupted_hashes_at_every_turn() {
    const TURNS: u32 = 50;
    let (out, reference, _) = run(GAP, TURNS, &[], 1, &busy_script);
    assert!(out.contains("formation 2 created") && out.contains("formation 1 disbanded"), "{out}");
    let mut w = world_from(GAP, 1);
    for turn in 0..TURNS {
        let bytes = w.save();
        let mut loaded = World::load(&bytes).unwrap_or_else(|e| panic!("turn {turn}: {e}"));
        assert_eq!(loaded.save(), bytes, "turn {turn}: save → load → save changed the bytes");
        assert_eq!(loaded.state_hash(), w.state_hash(), "turn {turn}: the loaded world hashes differently");
        for ahead in turn..(turn + 3).min(TURNS) {
            let r = loaded.step(&busy_script(ahead, &loaded));
            assert_eq!(r.hash, reference[ahead as usize], "loaded at turn {turn}, diverged at turn {ahead}");
        }
        w.step(&busy_script(turn, &w));
    }
}

#[test]
fn the_busy_scenario_keeps_the_rules_and_rebuilds_fields_for_a_changed_grid() {
    let (out, _, world) = run(GAP, 120, &[], 1, &busy_script);
    // The first formation arrives at the end of its move (its forming up was cut short by it);
    // the one made of three of its units forms up and arrives again after its own move; the
    // second player's is disbanded on the way.
    assert!(out.contains("turn 1: formation 0 created") && out.contains("turn 1: formation 1 created"), "{out}");
    assert!(out.contains("formation 1 disbanded"), "{out}");
    assert_eq!(out.matches("formation 0 arrived").count(), 1, "{out}");
    assert_eq!(out.matches("formation 2 arrived").count(), 2, "{out}");
    // Member a left its formation when ordered alone; members of formation 2 left formation 0.
    let f0 = world.formation(FormationId(0)).unwrap();
    assert_eq!(f0.members().len(), 10);
    assert!(!f0.members().contains(&ids(&world, 1)[0]));
    assert_eq!(world.formation(FormationId(2)).unwrap().members().len(), 3);
    assert!(world.formation(FormationId(1)).is_none());
    assert!(world.units().all(|u| u.state == UnitState::Idle), "everyone stands at the end");
}

#[test]
fn invalid_formation_commands_are_rejected_and_change_nothing() {
    let setup = |w: &mut World| {
        // 264 units of player 1 (4, then 13 blocks of 20) and 2 of player 2.
        let mut spawns = vec![spawn(0, 1, 0, 12, 20, 4), spawn(0, 2, 0, 12, 8, 2)];
        for k in 0..13 {
            spawns.push(spawn(0, 1, 1 + k, 8 + 10 * (k as i32 % 7), if k < 7 { 10 } else { 38 }, 20));
        }
        w.step(&spawns);
        let mine = ids(w, 1);
        w.step(&[cmd(1, 1, 0, CommandKind::FormGroup { units: mine[..4].to_vec(), layout: Layout::Line })]);
        for _ in 2..4 {
            w.step(&[]);
        }
    };
    let mut w = world_from(U_TURN, 1);
    setup(&mut w);
    let (mine, theirs) = (ids(&w, 1), ids(&w, 2));
    assert_eq!(mine.len(), 264);
    let formation = first_formation(&w);
    let before = w.state_hash();
    let ghost = FormationId(7);
    let bad = [
        (CommandKind::MoveFormation { formation: ghost, goal: GoalSpec::Point(at(60, 20)) }, 1, RejectReason::UnknownFormation(ghost)),
        (CommandKind::MoveFormation { formation, goal: GoalSpec::Point(at(60, 20)) }, 2, RejectReason::FormationNotOwned(formation)),
        (CommandKind::SetLayout { formation, layout: Layout::Box }, 2, RejectReason::FormationNotOwned(formation)),
        (CommandKind::Disband { formation: ghost }, 1, RejectReason::UnknownFormation(ghost)),
        (CommandKind::Disband { formation }, 2, RejectReason::FormationNotOwned(formation)),
        (CommandKind::FormGroup { units: vec![mine[0], theirs[0]], layout: Layout::Box }, 1, RejectReason::NotOwned(theirs[0])),
        (CommandKind::FormGroup { units: vec![], layout: Layout::Box }, 1, RejectReason::OutOfRange),
        (
            CommandKind::FormGroup { units: mine[4..].to_vec(), layout: Layout::Box },
            1,
            RejectReason::TooManyMembers { count: 260, max: 256 },
        ),
        (
            CommandKind::MoveFormation {
                formation,
                goal: GoalSpec::Range { target: sim::Target::Unit(theirs[0]), min: Fixed::ZERO, max: m(4), kind: sim::RangeKind::Melee },
            },
            1,
            RejectReason::OutOfRange,
        ),
        (CommandKind::MoveFormation { formation, goal: GoalSpec::Point(at(500, 20)) }, 1, RejectReason::NoRoom),
    ];
    let commands: Vec<Command> = bad.iter().enumerate().map(|(n, (k, p, _))| cmd(4, *p, n as u32, k.clone())).collect();
    let report = w.step(&commands);
    let mut want: Vec<(u8, u32, RejectReason)> = bad.iter().enumerate().map(|(n, (_, p, r))| (*p, n as u32, r.clone())).collect();
    want.sort_by_key(|(p, n, _)| (*p, *n));
    let got: Vec<(u8, u32, RejectReason)> = report
        .events
        .iter()
        .filter_map(|e| if let Event::Rejected { command, reason } = e { Some((command.1.0, command.2, reason.clone())) } else { None })
        .collect();
    assert_eq!(got, want);
    // Nothing changed but the turn: the same world stepped with no commands hashes alike.
    let mut twin = world_from(U_TURN, 1);
    setup(&mut twin);
    assert_eq!(twin.state_hash(), before);
    twin.step(&[]);
    assert_eq!(twin.state_hash(), w.state_hash());
    // Exactly the cap is accepted, and repeats count once.
    let mut cap = mine[4..260].to_vec();
    cap.push(mine[4]);
    let r = w.step(&[cmd(5, 1, 0, CommandKind::FormGroup { units: cap, layout: Layout::Box })]);
    assert_eq!(r.events, vec![Event::FormationCreated { formation: FormationId(1) }]);
}

#[test]
fn the_last_member_to_leave_disbands_its_formation() {
    let mut w = world_from(GAP, 1);
    w.step(&[spawn(0, 1, 0, 12, 20, 3)]);
    let mine = ids(&w, 1);
    w.step(&[cmd(1, 1, 0, CommandKind::FormGroup { units: mine.clone(), layout: Layout::Box })]);
    let formation = first_formation(&w);
    let formation_events = |r: &sim::TurnReport| -> Vec<Event> {
        r.events.iter().filter(|e| matches!(e, Event::FormationCreated { .. } | Event::FormationDisbanded { .. })).cloned().collect()
    };
    let r = w.step(&[cmd(2, 1, 0, CommandKind::Stop { units: vec![mine[0]] })]);
    assert!(formation_events(&r).is_empty(), "{:?}", r.events);
    assert_eq!(w.formation(formation).unwrap().members().len(), 2);
    // It is an ordinary unit again: no orders (it may be nudged aside by its old formation).
    assert!(w.unit(mine[0]).unwrap().orders.is_empty());
    assert!(!w.formation(formation).unwrap().members().contains(&mine[0]));
    let r = w.step(&[cmd(3, 1, 0, CommandKind::Remove { units: vec![mine[1]] })]);
    assert!(formation_events(&r).is_empty(), "{:?}", r.events);
    // Forming a new formation takes the last member out of the old one, which is then empty.
    let r = w.step(&[cmd(4, 1, 0, CommandKind::FormGroup { units: vec![mine[2], mine[0]], layout: Layout::Line })]);
    assert_eq!(formation_events(&r), vec![Event::FormationDisbanded { formation }, Event::FormationCreated { formation: FormationId(1) }]);
    assert!(w.formation(formation).is_none());
    w.check_invariants().unwrap();
    assert_eq!(r.digest, w.state_digest_from_scratch());
}

fn arb_command() -> impl Strategy<Value = (u8, CommandKind)> {
    let unit = (0..24u32).prop_map(|index| EntityId { index, generation: 0 });
    let units = proptest::collection::vec(unit, 0..8);
    let formation = (0..6u32).prop_map(FormationId);
    let pos = (-4..84i32, -4..40i32).prop_map(|(x, z)| at(x, z));
    let layout = prop_oneof![Just(Layout::Line), Just(Layout::Box), Just(Layout::Column), Just(Layout::Wedge), Just(Layout::Loose)];
    let goal = (pos.clone(), 0..3u8).prop_map(|(p, k)| match k {
        0 => GoalSpec::Point(p),
        1 => GoalSpec::Circle { center: p, radius: m(3) },
        _ => GoalSpec::Square { center: p, half: m(2) },
    });
    let kind = prop_oneof![
        3 => (units.clone(), layout.clone()).prop_map(|(units, layout)| CommandKind::FormGroup { units, layout }),
        3 => (formation.clone(), goal.clone()).prop_map(|(formation, goal)| CommandKind::MoveFormation { formation, goal }),
        1 => (formation.clone(), layout).prop_map(|(formation, layout)| CommandKind::SetLayout { formation, layout }),
        1 => formation.prop_map(|formation| CommandKind::Disband { formation }),
        1 => (units.clone(), goal).prop_map(|(units, goal)| CommandKind::Move { units, goal, queue: false }),
        1 => units.clone().prop_map(|units| CommandKind::Stop { units }),
        1 => units.prop_map(|units| CommandKind::Remove { units }),
        1 => (pos, 1..6i32).prop_map(|(p, s)| CommandKind::PlaceObstruction {
            square: sim::SquareSpec { x: p.x, z: p.z, w: m(s), h: m(s), degrees: m(s * 10) },
            flags: ObstructionFlags::BLOCK_PATHFINDING,
        }),
    ];
    (1..3u8, kind)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random formation commands (valid and not) among unit orders and new walls never panic,
    /// keep every rule of `check_turn` each turn (invariants, no unit on an impassable navcell,
    /// the incremental digest equal to one from scratch), and replay to the same hashes with two
    /// threads.
    #[test]
    fn random_formation_commands_keep_the_rules(turns in proptest::collection::vec(proptest::collection::vec(arb_command(), 0..4), 1..30)) {
        let mut one = world_from(GAP, 1);
        let mut two = world_from(GAP, 2);
        let spawns = [spawn(0, 1, 0, 12, 20, 12), spawn(0, 2, 0, 20, 8, 12)];
        one.step(&spawns);
        two.step(&spawns);
        for (t, kinds) in turns.iter().enumerate() {
            let turn = t as u32 + 1;
            let commands: Vec<Command> = kinds.iter().enumerate().map(|(n, (p, k))| cmd(turn, *p, n as u32, k.clone())).collect();
            let before: Vec<(EntityId, WorldPos)> = one.units().map(|u| (u.id, u.pos)).collect();
            let a = one.step(&commands);
            let b = two.step(&commands);
            prop_assert_eq!(a.hash, b.hash, "turn {}", turn);
            if let Err(e) = check_turn_since(&one, &a, &before) {
                return Err(TestCaseError::fail(format!("turn {turn}: {e}")));
            }
        }
        // Then the formations finish what they were doing.
        for turn in 0..60 {
            let before: Vec<(EntityId, WorldPos)> = one.units().map(|u| (u.id, u.pos)).collect();
            let (a, b) = (one.step(&[]), two.step(&[]));
            prop_assert_eq!(a.hash, b.hash, "quiet turn {}", turn);
            if let Err(e) = check_turn_since(&one, &a, &before) {
                return Err(TestCaseError::fail(format!("quiet turn {turn}: {e}")));
            }
        }
    }
}

/// Writes the formation snapshot fuzz seeds (the busy scenario at a few turns: forming up,
/// walking with a flow field, turning) when PHALANX_WRITE_FUZZ_SEEDS is set; otherwise checks
/// that the committed ones still load and hold formations.
#[test]
fn formation_fuzz_seeds_load() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/snapshot");
    let turns = [1u32, 12, 30];
    if std::env::var("PHALANX_WRITE_FUZZ_SEEDS").is_ok() {
        let mut w = world_from(GAP, 1);
        for turn in 0..=turns[turns.len() - 1] {
            w.step(&busy_script(turn, &w));
            if turns.contains(&turn) {
                std::fs::write(dir.join(format!("formation{turn}.bin")), w.save()).unwrap();
            }
        }
    }
    for turn in turns {
        let path = dir.join(format!("formation{turn}.bin"));
        let mut w = World::load(&std::fs::read(&path).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(w.formations().count() >= 2, "{}: formations", path.display());
        // The fields are rebuilt on the first turn after the load.
        w.step(&[]);
        w.check_invariants().unwrap();
    }
}

/// A pillar beside the straight way: the line passes it by stepping aside (a candidate at 45°
/// scores fewer obstructed navcells than straight ahead), keeps facing along its path while it
/// does, never strays farther than its width from the path, and comes back to the path after.
#[test]
fn a_formation_steps_aside_for_a_pillar_beside_its_way_and_keeps_its_facing() {
    const SIDE: &[&str] = &[
        "################################################################",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................###.............................#",
        "#..............................###.............................#",
        "#..............................###.............................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "#..............................................................#",
        "################################################################",
    ];
    let script = march(Layout::Line, (10, 16), 12, GoalSpec::Point(at(54, 16)));
    let mut world = world_from(SIDE, 1);
    let (mut widest, mut stepped_aside, mut arrived) = (0i128, false, false);
    for turn in 0..80 {
        let report = world.step(&script(turn, &world));
        check_turn(&world, &report).unwrap_or_else(|e| panic!("turn {turn}: {e}"));
        arrived |= report.events.iter().any(|e| matches!(e, Event::FormationArrived { .. }) && turn > 3);
        let Some(f) = world.formations().next().filter(|f| f.state == FormationState::Following) else { continue };
        let (from, to) = (f.from(), f.path()[0]);
        let raw = |v: Fixed| i128::from(v.to_bits());
        let (dx, dz) = (raw(to.x) - raw(from.x), raw(to.z) - raw(from.z));
        let (px, pz) = (raw(f.pos.x) - raw(from.x), raw(f.pos.z) - raw(from.z));
        let length = (dx * dx + dz * dz).isqrt();
        let off = (dx * pz - dz * px).abs() / length;
        widest = widest.max(off);
        stepped_aside |= off > 1 << 16;
        // The facing is the path's direction (to within the rounding of a unit vector).
        let (fx, fz) = (raw(f.facing.x), raw(f.facing.z));
        assert!((fx - (dx << 16) / length).abs() <= 2 && (fz - (dz << 16) / length).abs() <= 2, "turn {turn}: facing {:?}", f.facing);
    }
    // The line is 7 files of 1.5 m: 10.5 m wide.
    assert!(stepped_aside, "the formation never stepped aside");
    assert!(widest <= 21 << 15, "it strayed {widest} raw from its path");
    assert!(arrived);
    let f = world.formations().next().unwrap();
    assert_eq!(f.pos, WorldPos::new(m(54) + Fixed::from_bits(1), m(16) + Fixed::from_bits(1)), "it came back to its path's end");
}

/// A formation on a map wider than the input formats' coordinate limit (16384 m) saves and loads,
/// and the loaded world continues with the same hashes (a review finding: the loader checked
/// formation positions against that limit instead of the map).
#[test]
fn a_formation_far_out_on_a_large_map_survives_save_and_load() {
    let (w, h, cell) = (2048u32, 64u32, 16);
    let terrain = Terrain::flat(w / 4, h / 4, Fixed::from_num(4 * cell), Fixed::from_num(12), Fixed::ZERO).unwrap();
    let desc = WorldDesc::new(GridSpec { width: w, height: h, cell_size: Fixed::from_num(cell) }, ClassSet::zero_ad_defaults(), terrain);
    let mut world = World::new(desc, Vec::new(), Settings { seed: 3, players: 2, ..Settings::default() }).unwrap();
    world.step(&[spawn(0, 1, 0, 20_000, 500, 4)]);
    world.step(&[cmd(1, 1, 0, CommandKind::FormGroup { units: ids(&world, 1), layout: Layout::Box })]);
    let formation = first_formation(&world);
    world.step(&[cmd(2, 1, 0, CommandKind::MoveFormation { formation, goal: GoalSpec::Point(at(20_100, 500)) })]);
    for _ in 3..6 {
        world.step(&[]);
    }
    assert!(world.formation(formation).unwrap().pos.x > m(16_384));
    let mut loaded = World::load(&world.save()).unwrap_or_else(|e| panic!("{e}"));
    for _ in 0..10 {
        assert_eq!(world.step(&[]).hash, loaded.step(&[]).hash);
    }
}

/// A goal inside the wall at the south edge: the formation's path is partial, which it reports
/// (`FormationPathPartial`), and it arrives at the nearest point it can reach instead.
#[test]
fn a_formation_sent_into_a_wall_reports_a_partial_path_and_stops_at_the_nearest_point() {
    let mut world = world_from(GAP, 1);
    let script = march(Layout::Box, (60, 20), 9, GoalSpec::Point(at(60, 1)));
    let (mut partial, mut arrived) = (None, None);
    for turn in 0..80 {
        let report = world.step(&script(turn, &world));
        for e in &report.events {
            match e {
                Event::FormationPathPartial { .. } => partial = partial.or(Some(turn)),
                Event::FormationArrived { .. } if turn > 3 => arrived = arrived.or(Some(turn)),
                _ => {}
            }
        }
    }
    let (Some(partial), Some(arrived)) = (partial, arrived) else { panic!("partial {partial:?}, arrived {arrived:?}") };
    assert!(partial < arrived, "the partial path is reported when it is planned, turn {partial}, before arriving, turn {arrived}");
    let f = world.formation(first_formation(&world)).unwrap();
    assert!(f.pos.z > m(2) && f.pos.z < m(8) && (f.pos.x - m(60)).abs() < m(4), "it stands by the wall below the goal: {:?}", f.pos);
}

/// A reachable goal gives no partial-path report.
#[test]
fn a_formation_with_a_reachable_goal_reports_no_partial_path() {
    let mut world = world_from(GAP, 1);
    let script = march(Layout::Box, (60, 20), 9, GoalSpec::Point(at(60, 10)));
    for turn in 0..40 {
        let report = world.step(&script(turn, &world));
        assert!(!report.events.iter().any(|e| matches!(e, Event::FormationPathPartial { .. })), "turn {turn}");
    }
}

/// An open field `w` × `h` metres with a wall round it.
fn open_field(w: usize, h: usize) -> Vec<String> {
    (0..h).map(|j| if j == 0 || j + 1 == h { "#".repeat(w) } else { format!("#{}#", ".".repeat(w - 2)) }).collect()
}

/// Runs two formations of players 1 and 2 (each `count` units spawned at its start, formed on turn
/// 1 and sent to its goal on turn 3) for `turns` turns. Checks every turn that no member of one
/// comes within the sum of the radii of a member of the other (exact squared distances); returns
/// the turn each arrived (from turn 4 on), the per-turn hashes and the world, and prints the
/// arrivals and the smallest clearance seen (with `--nocapture`).
fn two_formations(
    rows: &[String],
    a: ((i32, i32), (i32, i32), Layout),
    b: ((i32, i32), (i32, i32), Layout),
    count: u16,
    turns: u32,
) -> ([Option<u32>; 2], Vec<[u8; 32]>, World) {
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let mut world = world_from(&rows, 1);
    let mut arrived = [None, None];
    let mut hashes = Vec::new();
    let mut clearance = i128::MAX;
    let formation_of = |w: &World, player: u8| w.formations().find(|f| f.owner == PlayerId(player)).map(|f| f.id);
    for turn in 0..turns {
        let commands = match turn {
            0 => vec![spawn(0, 1, 0, a.0.0, a.0.1, count), spawn(0, 2, 0, b.0.0, b.0.1, count)],
            1 => vec![
                cmd(1, 1, 0, CommandKind::FormGroup { units: ids(&world, 1), layout: a.2 }),
                cmd(1, 2, 0, CommandKind::FormGroup { units: ids(&world, 2), layout: b.2 }),
            ],
            3 => vec![
                cmd(
                    3,
                    1,
                    0,
                    CommandKind::MoveFormation { formation: formation_of(&world, 1).unwrap(), goal: GoalSpec::Point(at(a.1.0, a.1.1)) },
                ),
                cmd(
                    3,
                    2,
                    0,
                    CommandKind::MoveFormation { formation: formation_of(&world, 2).unwrap(), goal: GoalSpec::Point(at(b.1.0, b.1.1)) },
                ),
            ],
            _ => Vec::new(),
        };
        let report = world.step(&commands);
        check_turn(&world, &report).unwrap_or_else(|e| panic!("turn {turn}: {e}"));
        hashes.push(report.hash);
        if std::env::var_os("PHALANX_FORMATION_TRACE").is_some() {
            for f in world.formations() {
                println!("turn {turn} formation {} of player {}: {:?} at {:?} facing {:?}", f.id.0, f.owner.0, f.state, f.pos, f.facing);
            }
        }
        for e in &report.events {
            match e {
                Event::Rejected { reason, .. } => panic!("turn {turn}: command rejected: {reason:?}"),
                Event::FormationArrived { formation } if turn > 3 => {
                    let owner = world.formation(*formation).unwrap().owner;
                    arrived[usize::from(owner.0 - 1)].get_or_insert(turn);
                }
                _ => {}
            }
        }
        let raw = |v: Fixed| i128::from(v.to_bits());
        for p in world.units().filter(|u| u.owner == PlayerId(1)) {
            for q in world.units().filter(|u| u.owner == PlayerId(2)) {
                let (dx, dz) = (raw(p.pos.x) - raw(q.pos.x), raw(p.pos.z) - raw(q.pos.z));
                let reach = raw(p.radius) + raw(q.radius);
                clearance = clearance.min((dx * dx + dz * dz).isqrt() - reach);
                assert!(
                    dx * dx + dz * dz >= reach * reach,
                    "turn {turn}: unit {:?} at {:?} and unit {:?} at {:?} are closer than their radii",
                    p.id,
                    p.pos,
                    q.id,
                    q.pos
                );
            }
        }
    }
    println!(
        "arrived at turns {arrived:?}; smallest clearance between the two players' units {} m",
        metres(Fixed::from_bits(clearance as i64))
    );
    (arrived, hashes, world)
}

/// Both formations arrived, each with its position on its goal's navcell.
fn assert_both_arrived(arrived: [Option<u32>; 2], world: &World, goals: [(i32, i32); 2]) {
    assert!(arrived.iter().all(Option::is_some), "arrivals {arrived:?}");
    for (player, goal) in [(1u8, goals[0]), (2, goals[1])] {
        let f = world.formations().find(|f| f.owner == PlayerId(player)).unwrap();
        assert_eq!(f.state, FormationState::Idle);
        assert_eq!(world.navcell_of(f.pos), world.navcell_of(at(goal.0, goal.1)), "formation of player {player}");
    }
}

#[test]
fn formations_meeting_head_on_pass_each_other_without_touching() {
    let field = open_field(96, 48);
    let a = ((16, 24), (80, 24), Layout::Box);
    let b = ((80, 24), (16, 24), Layout::Box);
    let (arrived, hashes, world) = two_formations(&field, a, b, 9, 160);
    assert_both_arrived(arrived, &world, [a.1, b.1]);
    let (again, rerun, _) = two_formations(&field, a, b, 9, 160);
    assert_eq!((arrived, hashes), (again, rerun), "a second run differs");
}

#[test]
fn formations_of_different_layouts_meeting_head_on_pass_each_other_without_touching() {
    let field = open_field(96, 48);
    let a = ((14, 22), (82, 26), Layout::Line);
    let b = ((82, 26), (14, 22), Layout::Column);
    let (arrived, _, world) = two_formations(&field, a, b, 12, 200);
    assert_both_arrived(arrived, &world, [a.1, b.1]);
}

#[test]
fn crossing_formations_do_not_walk_through_each_other() {
    let field = open_field(96, 80);
    // Each starts 32 m from the crossing: without giving way they would meet in it.
    let a = ((16, 40), (80, 40), Layout::Box);
    let b = ((48, 8), (48, 72), Layout::Box);
    let (arrived, hashes, world) = two_formations(&field, a, b, 9, 200);
    assert_both_arrived(arrived, &world, [a.1, b.1]);
    let (again, rerun, _) = two_formations(&field, a, b, 9, 200);
    assert_eq!((arrived, hashes), (again, rerun), "a second run differs");
}

#[test]
fn a_member_behind_its_slot_runs_and_one_ahead_of_it_walks() {
    let field = open_field(40, 52);
    let rows: Vec<&str> = field.iter().map(String::as_str).collect();
    let mut world = world_from(&rows, 1);
    // Two units on the two slots' lines, about 15 m south and 15 m north of the formation's
    // position (their average); a new formation faces north, and its slots are 0.75 m west and
    // east of its position (off the navcells' borders, so no waypoint is moved off one).
    let (quarter, half) = (Fixed::ONE / 4, Fixed::ONE / 2);
    let one = |seq, x, z| {
        cmd(
            0,
            1,
            seq,
            CommandKind::Spawn {
                class: pathing::PassClass::of(0),
                at: WorldPos::new(x, z),
                count: 1,
                radius: half,
                speed: m(6),
                turn_rate: None,
            },
        )
    };
    world.step(&[one(0, m(19) + quarter, m(10) + half), one(1, m(20) + m(3) * quarter, m(40) + half)]);
    let units = ids(&world, 1);
    let (south, north) = (world.unit(units[0]).unwrap().pos, world.unit(units[1]).unwrap().pos);
    world.step(&[cmd(1, 1, 0, CommandKind::FormGroup { units: units.clone(), layout: Layout::Box })]);
    let f = first_formation(&world);
    let slot_z = Fixed::from_bits((south.z.to_bits() + north.z.to_bits()) / 2);
    assert_eq!(world.formation_slots(f), vec![WorldPos::new(south.x, slot_z), WorldPos::new(north.x, slot_z)]);
    assert!(slot_z - south.z > m(14) && north.z - slot_z > m(14), "{south:?} {north:?}");
    // One turn's walk at 6 m/s in 200 ms, and the run at 3/2 of it, raw and rounded down.
    let walk = (6i128 << 16) * 200 / 1000;
    let run = (6i128 << 16) * 200 * 3 / (1000 * 2);
    let raw = |v: Fixed| i128::from(v.to_bits());
    let (mut ran, mut walked) = (0, 0);
    for turn in 2..40 {
        let before: Vec<WorldPos> = units.iter().map(|&u| world.unit(u).unwrap().pos).collect();
        world.step(&[]);
        for (k, &u) in units.iter().enumerate() {
            let pos = world.unit(u).unwrap().pos;
            let slot = slot_z;
            assert_eq!(pos.x, before[k].x, "turn {turn}: unit {k} left its slot's line");
            let (step, left) = ((raw(pos.z) - raw(before[k].z)).abs(), (raw(slot) - raw(before[k].z)).abs());
            // The unit south of its slot is behind it (the formation faces north): it runs.
            let speed = if k == 0 { run } else { walk };
            assert_eq!(step, speed.min(left), "turn {turn}: unit {k} moved {step} raw, {left} raw from its slot");
            if step == run {
                ran += 1;
            }
            if step == walk {
                walked += 1;
            }
        }
    }
    assert!(ran >= 8 && walked >= 12, "{ran} running turns, {walked} walking turns");
    assert!(world.formations().all(|f| f.state == FormationState::Idle), "the formation formed up");
}

#[test]
fn members_stay_inside_the_movement_corridor_while_marching_and_arriving() {
    let gap = march(Layout::Line, (14, 18), 24, GoalSpec::Point(at(66, 18)));
    let u_turn = march(Layout::Box, (20, 14), 16, GoalSpec::Point(at(20, 30)));
    let cases: [(&[&str], Script<'_>); 2] = [(GAP, &gap), (U_TURN, &u_turn)];
    for (rows, script) in cases {
        let mut world = world_from(rows, 1);
        let mut checked = 0;
        for turn in 0..130 {
            world.step(&script(turn, &world));
            for f in world.formations().filter(|f| f.is_active()) {
                let corridor = world.formation_corridor(f.id).unwrap();
                assert!(corridor.half_width() >= m(15));
                for &member in f.members() {
                    let pos = world.unit(member).unwrap().pos;
                    assert!(corridor.contains(pos), "turn {turn}: member {member:?} at {pos:?} is outside {corridor:?}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 1000, "only {checked} positions checked");
    }
}

/// An open field `w` × `h` metres walled round, split by a wall two metres thick at `x = wall`
/// (`x` from the west) with one gap `gap` metres wide whose south edge is at `z = from`.
fn field_with_gap(w: usize, h: usize, wall: usize, from: usize, gap: usize) -> Vec<String> {
    let mut rows = open_field(w, h);
    for (j, row) in rows.iter_mut().enumerate() {
        if j == 0 || j + 1 == h || (from..from + gap).contains(&j) {
            continue;
        }
        row.replace_range(wall..wall + 2, "##");
    }
    rows
}

/// Formations meeting head on in a gap narrower than both must both get through, whatever the
/// layouts, sizes, gap widths and which of them has the lower id (docs/formation-rules.md,
/// "Formations that meet": the held one with the higher id yields). Without yielding, the two stand
/// face to face in the gap until a new order comes (each refuses every step that takes the other
/// deeper into its keep-out zone).
#[test]
fn formations_meeting_head_on_in_a_gap_narrower_than_both_both_get_through() {
    let cases = [
        // (gap width, gap's south edge, west formation, east formation, members, turns)
        (6, 21, Layout::Box, Layout::Box, 9, 360),
        (8, 20, Layout::Box, Layout::Wedge, 9, 360),
        (7, 14, Layout::Line, Layout::Box, 12, 400),
        (10, 26, Layout::Wedge, Layout::Column, 12, 400),
    ];
    for (gap, from, west, east, count, turns) in cases {
        let field = field_with_gap(96, 48, 47, from, gap);
        let z = (from + gap / 2) as i32;
        // Both orders of ids: player 1's formation is made first and has the lower id.
        for swap in [false, true] {
            let (w, e) = (((14, z - 4), (84, z + 2), west), ((82, z + 3), (12, z - 3), east));
            let (a, b) = if swap { (e, w) } else { (w, e) };
            let (arrived, _, world) = two_formations(&field, a, b, count, turns);
            assert_both_arrived(arrived, &world, [a.1, b.1]);
            for f in world.formations() {
                assert!(
                    f.members().iter().all(|&id| {
                        let u = world.unit(id).unwrap();
                        (u.pos.x > m(48)) == (f.pos.x > m(48))
                    }),
                    "gap {gap}, swap {swap}: a member of formation {} did not get through with it",
                    f.id.0
                );
            }
        }
    }
}

/// Adds a dead-end pocket to `rows`: a rectangle of walls one metre thick round `w` × `h` metres of
/// open ground whose south-west inner corner is `(x, z)`, open to the south (or to the north when
/// `north`), so that a formation stepping aside beside it can walk into it.
fn with_pocket(mut rows: Vec<String>, x: usize, z: usize, w: usize, h: usize, north: bool) -> Vec<String> {
    let height = rows.len();
    // `rows[0]` is the top of the picture; the walls are symmetric round the field, so row `j`
    // stands for `z = height - 1 - j`.
    let mut wall = |zz: usize, x0: usize, x1: usize| {
        let row = &mut rows[height - 1 - zz];
        row.replace_range(x0..x1, &"#".repeat(x1 - x0));
    };
    for zz in z..z + h {
        wall(zz, x - 1, x);
        wall(zz, x + w, x + w + 1);
    }
    let closed = if north { z + h } else { z - 1 };
    wall(closed, x - 1, x + w + 1);
    rows
}

/// A formation that steps aside beside a dead-end pocket never puts its position on a navcell
/// its class cannot use, and none of its members is left stranded when it arrives: each stands
/// near its slot or walks there on a path of its own (docs/formation-rules.md, "Following a
/// straight line" and "Finalising and arriving").
#[test]
fn a_formation_stepping_aside_beside_a_pocket_strands_no_member() {
    // (pocket x, z, width, height, open to the north, members, layouts)
    let cases = [
        (40, 27, 10, 12, false, 9, Layout::Box, Layout::Box),
        (36, 26, 14, 10, false, 12, Layout::Line, Layout::Box),
        (44, 10, 12, 11, true, 9, Layout::Box, Layout::Wedge),
        (30, 27, 8, 14, false, 9, Layout::Wedge, Layout::Column),
    ];
    for (px, pz, pw, ph, north, count, la, lb) in cases {
        let rows = with_pocket(open_field(96, 48), px, pz, pw, ph, north);
        let a = ((12, 23), (84, 24), la);
        let b = ((84, 24), (12, 23), lb);
        let (arrived, _, mut world) = two_formations(&rows, a, b, count, 260);
        assert!(arrived.iter().all(Option::is_some), "pocket at ({px}, {pz}): arrivals {arrived:?}");
        // Members that were stranded walk to their slots on paths of their own: after a while
        // every member stands near its slot.
        for _ in 0..150 {
            world.step(&[]);
        }
        for f in world.formations() {
            let spacing = sim::formation::spacing(f.layout, m(1) / 2) * 2;
            for (&id, slot) in f.members().iter().zip(world.formation_slots(f.id)) {
                let u = world.unit(id).unwrap();
                let (dx, dz) = (u.pos.x - slot.x, u.pos.z - slot.z);
                assert!(
                    dx.abs() <= spacing && dz.abs() <= spacing,
                    "pocket at ({px}, {pz}): member {id:?} of formation {} stands at {:?}, {:?} from its slot {:?} ({:?})",
                    f.id.0,
                    u.pos,
                    (dx, dz),
                    slot,
                    u.state
                );
            }
        }
    }
}

/// Members that cannot reach their slots when the formation arrives (here, formed on the far side
/// of a long wall whose way round lies outside the formation's flow field and corridor) walk to
/// them on paths of their own, and get there (docs/formation-rules.md, "Finalising and arriving").
#[test]
fn members_stranded_behind_a_wall_rejoin_on_paths_of_their_own() {
    // (wall x, gap at the north or south end, near side count, far side count, goal, layout)
    let cases =
        [(48, true, 5, 4, (20, 12), Layout::Box), (40, false, 6, 3, (14, 40), Layout::Line), (56, true, 6, 3, (30, 20), Layout::Wedge)];
    for (wall, gap_north, near, far, goal, layout) in cases {
        let (w, h) = (96usize, 64usize);
        let mut rows = open_field(w, h);
        for (j, row) in rows.iter_mut().enumerate() {
            let z = h - 1 - j;
            let in_gap = if gap_north { z >= h - 9 } else { z <= 8 };
            if j != 0 && j + 1 != h && !in_gap {
                row.replace_range(wall..wall + 2, "##");
            }
        }
        let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
        let mut world = world_from(&rows, 1);
        let z0 = if gap_north { 12 } else { 50 };
        world.step(&[spawn(0, 1, 0, wall as i32 - 6, z0, near), spawn(0, 1, 1, wall as i32 + 8, z0, far)]);
        world.step(&[cmd(1, 1, 0, CommandKind::FormGroup { units: ids(&world, 1), layout })]);
        let id = first_formation(&world);
        world.step(&[]);
        world.step(&[cmd(3, 1, 0, CommandKind::MoveFormation { formation: id, goal: GoalSpec::Point(at(goal.0, goal.1)) })]);
        let mut arrived = None;
        let mut rejoining = 0;
        for turn in 4..600 {
            let report = world.step(&[]);
            check_turn(&world, &report).unwrap_or_else(|e| panic!("turn {turn}: {e}"));
            if report.events.iter().any(|e| matches!(e, Event::FormationArrived { .. })) && arrived.is_none() {
                arrived = Some(turn);
                rejoining = ids(&world, 1).iter().filter(|&&u| !world.unit(u).unwrap().orders.is_empty()).count();
            }
        }
        assert!(arrived.is_some(), "wall at {wall}: the formation never arrived");
        assert!(rejoining > 0, "wall at {wall}: no member was stranded, so the case tests nothing");
        // Not stranded any more: within the stranding distance of its slot (an inner slot of a
        // standing box can be closed by its neighbours' cores, where a rejoining member ends its
        // move as near as it can).
        let spacing = sim::formation::spacing(layout, m(1) / 2) * 2;
        for (&u, slot) in world.formation(id).unwrap().members().iter().zip(world.formation_slots(id)) {
            let unit = world.unit(u).unwrap();
            let (dx, dz) = (unit.pos.x - slot.x, unit.pos.z - slot.z);
            assert!(
                dx.abs() <= spacing && dz.abs() <= spacing && unit.state == UnitState::Idle,
                "wall at {wall}: member {u:?} ({:?}) stands at {:?}, {:?} from its slot",
                unit.state,
                unit.pos,
                (dx, dz)
            );
        }
    }
}
