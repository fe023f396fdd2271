//! Crowds (docs/motion-rules.md, "Passages held by other players"): groups meeting a gap held by
//! another player's standing units, and units ordered into another player's idle crowd.

use pathing::{Fixed, PassClass, WorldPos};
use sim::test_support::{flat_world, walls_from};
use sim::{Command, CommandKind, EntityId, Event, FailReason, GoalSpec, PlayerId, Settings, UnitState, World};

fn m(n: i32) -> Fixed {
    Fixed::from_num(n)
}

/// `n` tenths of a metre.
fn dm(n: i32) -> Fixed {
    Fixed::from_num(n) / 10
}

fn cmd(player: u8, kind: CommandKind) -> Command {
    Command { turn: 0, player: PlayerId(player), seq: 0, kind }
}

/// A world drawn as text with `players` players, and what its units did.
struct Crowd {
    world: World,
    turn: u32,
    arrived: Vec<EntityId>,
    failed: Vec<(EntityId, FailReason)>,
}

impl Crowd {
    fn new(rows: &[String], players: u8) -> Self {
        let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
        let (w, h) = (rows[0].len() as u32, rows.len() as u32);
        let world = flat_world(w, h, &walls_from(&rows), Settings { seed: 3, players, ..Settings::default() }, 1);
        Self { world, turn: 0, arrived: Vec::new(), failed: Vec::new() }
    }

    /// Places one unit of `player` at `at` (or the nearest free point) and returns it.
    #[track_caller]
    fn unit(&mut self, player: u8, at: WorldPos, radius: Fixed) -> EntityId {
        let kind = CommandKind::Spawn { class: PassClass::of(0), at, count: 1, radius, speed: m(6), turn_rate: None };
        let before: Vec<EntityId> = self.world.units().map(|u| u.id).collect();
        self.step(vec![cmd(player, kind)]);
        self.world.units().map(|u| u.id).find(|id| !before.contains(id)).expect("the unit was placed")
    }

    fn go(&mut self, player: u8, units: Vec<EntityId>, goal: GoalSpec) {
        self.step(vec![cmd(player, CommandKind::Move { units, goal, queue: false })]);
    }

    /// One turn, its arrivals and failures noted.
    #[track_caller]
    fn step(&mut self, mut commands: Vec<Command>) {
        for c in &mut commands {
            c.turn = self.turn;
        }
        let report = self.world.step(&commands);
        for e in report.events {
            match e {
                Event::Arrived { unit } => self.arrived.push(unit),
                Event::Failed { unit, reason } => self.failed.push((unit, reason)),
                Event::Rejected { reason, .. } => panic!("turn {}: refused: {reason:?}", self.turn),
                _ => {}
            }
        }
        self.turn += 1;
    }

    /// Runs until every unit stands with no order, at most `turns` turns; panics otherwise.
    #[track_caller]
    fn settle(&mut self, turns: u32) {
        for _ in 0..turns {
            if self.world.units().all(|u| u.state == UnitState::Idle && u.orders.is_empty()) {
                return;
            }
            self.step(Vec::new());
        }
        let busy: Vec<_> = self.world.units().filter(|u| !u.orders.is_empty()).map(|u| (u.id, u.pos, u.state)).collect();
        panic!("after {turns} more turns, units still have orders: {busy:?}");
    }
}

/// A field `w × h` walled round, with a wall across it at x = `w/2` but for an opening of `gap`
/// metres whose south edge is at z = `at`.
fn wall_with_gap(w: i32, h: i32, gap: i32, at: i32) -> Vec<String> {
    (0..h)
        .rev()
        .map(|z| {
            (0..w)
                .map(|x| {
                    let border = x == 0 || z == 0 || x == w - 1 || z == h - 1;
                    let wall = x == w / 2 && !(at..at + gap).contains(&z);
                    if border || wall { '#' } else { '.' }
                })
                .collect()
        })
        .collect()
}

/// `n` units of `player` in a block of columns of `rows` units, 1.3 m apart (2 m for units wider
/// than a metre), its south-west unit at `(x, z)` (tenths; a spawn that does not fit there takes
/// the nearest free point).
fn block(crowd: &mut Crowd, player: u8, n: usize, rows: usize, (x, z): (i32, i32), radius: Fixed) -> Vec<EntityId> {
    let gap = if radius > Fixed::ONE / 2 { 20 } else { 13 };
    (0..n).map(|k| crowd.unit(player, WorldPos::new(dm(x + gap * (k / rows) as i32), dm(z + gap * (k % rows) as i32)), radius)).collect()
}

/// Issue 38, case 3: a 4 m gap held by two idle units of another player, five walkers, no other
/// way: three shoved the holders aside and got through while two gave up (`PassageHeld`), as the
/// search round the holders blocked whole navcells and missed the band the motion allowed. Now
/// every walker of the group has the same outcome, over gap widths, holder counts, players and
/// the walkers' ids.
#[test]
fn a_held_gap_has_one_outcome_for_every_walker_of_a_group() {
    for gap in [3, 4, 5, 6] {
        for (holders, players) in [(2usize, (1u8, 2u8)), (1, (2, 1)), (3, (1, 3))] {
            for reversed in [false, true] {
                let mut crowd = Crowd::new(&wall_with_gap(48, 24, gap, 12 - gap / 2), players.0.max(players.1));
                let half = Fixed::ONE / 2;
                for k in 0..holders {
                    let z = dm(120 + (k as i32 * 2 - holders as i32 + 1) * 12);
                    crowd.unit(players.1, WorldPos::new(dm(245), z), half);
                }
                let mut walkers = block(&mut crowd, players.0, 5, 5, (80, 90), half);
                if reversed {
                    walkers.reverse();
                }
                crowd.go(players.0, walkers.clone(), GoalSpec::Point(WorldPos::from_int(40, 12)));
                crowd.settle(300);
                // Through: east of the wall; else stopped west of it, having given up or ended its
                // order as near as it could.
                let through = walkers.iter().filter(|w| crowd.world.unit(**w).unwrap().pos.x > m(25)).count();
                assert!(
                    through == walkers.len() || through == 0,
                    "gap {gap}, {holders} holders, players {players:?}, reversed {reversed}: {through} of 5 got through (arrived {:?}, failed {:?})",
                    crowd.arrived,
                    crowd.failed
                );
            }
        }
    }
}

/// Issue 38, case 9: a unit ordered into another player's idle crowd gave up after 23 blocked
/// turns (`PassageHeld`) where a unit of the crowd's own player arrived. Now it walks as near as
/// the standing units allow and ends its order there (`Arrived`), as the own-player unit does,
/// for crowds of several sizes, players and goal shapes.
#[test]
fn a_unit_ordered_into_another_players_idle_crowd_arrives_as_near_as_it_can() {
    let open: Vec<String> = wall_with_gap(48, 48, 46, 1);
    for (n, rows, players, goal) in [
        (16usize, 4usize, (1u8, 2u8), GoalSpec::Point(WorldPos::new(dm(300), dm(255)))),
        (25, 5, (2, 1), GoalSpec::Point(WorldPos::new(dm(305), dm(260)))),
        (9, 3, (1, 3), GoalSpec::Circle { center: WorldPos::new(dm(295), dm(245)), radius: Fixed::ONE / 2 }),
        (16, 4, (3, 2), GoalSpec::Square { center: WorldPos::new(dm(300), dm(255)), half: Fixed::ONE / 4 }),
        (16, 4, (1, 1), GoalSpec::Point(WorldPos::new(dm(300), dm(255)))),
    ] {
        let mut crowd = Crowd::new(&open, 3);
        block(&mut crowd, players.1, n, rows, (280, 235), Fixed::ONE / 2);
        let walker = crowd.unit(players.0, WorldPos::from_int(6, 25), Fixed::ONE / 2);
        crowd.go(players.0, vec![walker], goal);
        crowd.settle(200);
        assert_eq!(crowd.arrived, vec![walker], "{n} units of player {}, walker of {}: {:?}", players.1, players.0, crowd.failed);
    }
}
