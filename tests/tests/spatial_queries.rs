//! The game rules' spatial queries (`View::units_within`, `View::nearest`) against the scan over
//! every unit they replaced (`units_within_scan`, `nearest_scan`, the oracle): the same answers in
//! the same order on random unit sets, radii (0, one raw unit, metres, larger than the map,
//! negative), centres on and off the map, asked while the rules act (spawn, remove, order, change
//! the game's state), in a game command's check and apply, from outside the game between turns
//! while the units walk, and after a save and load.

use pathing::{Fixed, WorldPos};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use sim::rules::{self, Ctx, Rules, View};
use sim::test_support::flat_geometry;
use sim::{Command, CommandKind, EntityId, Event, GoalSpec, PlayerId, Settings, Unit, World};

/// Side of the open test map. `[Units: metres]`
const SIDE: i32 = 128;

/// A query: a centre in whole metres, a radius in raw fixed-point units, and which units count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Query {
    x: i32,
    z: i32,
    radius: i64,
    /// 0: every unit; 1: player 1's; 2: those tagged 0; 3: none.
    filter: u8,
}

/// What the rules do in their turn, in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum Op {
    Ask(Query),
    Spawn {
        player: u8,
        x: i32,
        z: i32,
        count: u16,
    },
    /// Removes the `pick`-th live unit (modulo their number).
    Remove {
        pick: u16,
    },
    /// Orders the `pick`-th live unit to a point.
    Order {
        pick: u16,
        x: i32,
        z: i32,
    },
    /// Changes the `pick`-th live unit's tag, which the filter reads.
    Tag {
        pick: u16,
        tag: u8,
    },
}

/// A ruleset that only asks and acts: `script[turn % len]` is its turn.
#[derive(Clone, Debug)]
struct Probe {
    script: Vec<Vec<Op>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Tag(u8);

/// Both answers to one query: the index's, then the scan's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Answer {
    query: Query,
    within: (Vec<EntityId>, Vec<EntityId>),
    nearest: (Option<EntityId>, Option<EntityId>),
}

impl Rules for Probe {
    const NAME: &'static str = "probe";
    const VERSION: u32 = 1;
    type Unit = Tag;
    type Object = u32;
    type Player = ();
    type State = ();
    type Command = Query;
    type Event = Answer;
    type Reject = Answer;

    fn new_unit(&self, _state: &(), unit: &Unit) -> Tag {
        Tag((unit.id.index % 3) as u8)
    }

    /// A query whose two answers differ is refused with them.
    fn check(&self, view: &View<'_, Self>, _player: PlayerId, query: &Query) -> Result<(), Answer> {
        let answer = ask(view, *query);
        if answer.within.0 == answer.within.1 && answer.nearest.0 == answer.nearest.1 { Ok(()) } else { Err(answer) }
    }

    fn apply(&self, ctx: &mut Ctx<'_, Self>, _player: PlayerId, query: &Query) {
        let answer = ask(&ctx.view(), *query);
        ctx.emit(&answer);
    }

    fn step(&self, ctx: &mut Ctx<'_, Self>, _events: &[Event]) {
        let turn = ctx.world().turn() as usize;
        let Some(ops) = self.script.get(turn % self.script.len().max(1)) else { return };
        for op in ops {
            let live: Vec<EntityId> = ctx.world().units().map(|u| u.id).collect();
            let pick = |n: u16| (!live.is_empty()).then(|| live[usize::from(n) % live.len()]);
            match *op {
                Op::Ask(query) => {
                    let answer = ask(&ctx.view(), query);
                    ctx.emit(&answer);
                }
                Op::Spawn { player, x, z, count } => {
                    let _ = ctx.act(PlayerId(player), spawn(WorldPos::from_int(x, z), count));
                }
                Op::Remove { pick: n } => {
                    if let Some(id) = pick(n) {
                        let owner = ctx.world().unit(id).map_or(PlayerId(0), |u| u.owner);
                        let _ = ctx.act(owner, CommandKind::Remove { units: vec![id] });
                    }
                }
                Op::Order { pick: n, x, z } => {
                    if let Some(id) = pick(n) {
                        let owner = ctx.world().unit(id).map_or(PlayerId(0), |u| u.owner);
                        let goal = GoalSpec::Point(WorldPos::from_int(x, z));
                        let _ = ctx.act(owner, CommandKind::Move { units: vec![id], goal, queue: false });
                    }
                }
                Op::Tag { pick: n, tag } => {
                    if let Some(state) = pick(n).and_then(|id| ctx.unit_mut(id)) {
                        state.0 = tag;
                    }
                }
            }
        }
    }
}

/// The index's and the scan's answers to a query.
fn ask(view: &View<'_, Probe>, q: Query) -> Answer {
    let (centre, radius) = (WorldPos::from_int(q.x, q.z), Fixed::from_bits(q.radius));
    let keep = |u: &Unit, s: &Tag| match q.filter {
        0 => true,
        1 => u.owner == PlayerId(1),
        2 => s.0 == 0,
        _ => false,
    };
    Answer {
        query: q,
        within: (view.units_within(centre, radius, keep), view.units_within_scan(centre, radius, keep)),
        nearest: (view.nearest(centre, radius, keep), view.nearest_scan(centre, radius, keep)),
    }
}

fn spawn(at: WorldPos, count: u16) -> CommandKind {
    CommandKind::Spawn { class: pathing::PassClass::of(0), at, count, radius: Fixed::ONE / 2, speed: Fixed::from_num(6), turn_rate: None }
}

fn probe_world(script: Vec<Vec<Op>>) -> World {
    let side = SIDE as u32;
    let (desc, obstructions) = flat_geometry(side, side, &[]);
    World::with_rules(desc, obstructions, Settings { seed: 5, players: 2, ..Settings::default() }, Probe { script })
        .expect("a world with the probe rules")
}

/// Every pair of answers in a turn's events, after checking none was refused.
fn answers(events: &[Event]) -> Vec<Answer> {
    for e in events {
        if let Event::Rejected { reason, .. } = e {
            assert!(rules::reject::<Probe>(reason).is_none(), "a check's answers differ: {reason:?}");
        }
    }
    rules::events::<Probe>(events).collect()
}

fn radius() -> impl Strategy<Value = i64> {
    let m = |metres: i64| metres << 16;
    prop_oneof![Just(0), Just(1), Just(-m(10)), (0..m(40)), (m(40)..m(400)), Just(m(1 << 24))]
}

fn query() -> impl Strategy<Value = Query> {
    // Centres mostly on the map, some far off it.
    let coordinate = prop_oneof![4 => -8..SIDE + 8, 1 => -100_000..100_000];
    (coordinate.clone(), coordinate, radius(), 0..4u8).prop_map(|(x, z, radius, filter)| Query { x, z, radius, filter })
}

fn op() -> impl Strategy<Value = Op> {
    let on_map = 4..SIDE - 4;
    prop_oneof![
        4 => query().prop_map(Op::Ask),
        1 => (1..3u8, on_map.clone(), on_map.clone(), 1..12u16).prop_map(|(player, x, z, count)| Op::Spawn { player, x, z, count }),
        1 => any::<u16>().prop_map(|pick| Op::Remove { pick }),
        1 => (any::<u16>(), on_map.clone(), on_map).prop_map(|(pick, x, z)| Op::Order { pick, x, z }),
        1 => (any::<u16>(), 0..3u8).prop_map(|(pick, tag)| Op::Tag { pick, tag }),
    ]
}

fn cmd(turn: u32, player: u8, seq: u32, kind: CommandKind) -> Command {
    Command { turn, player: PlayerId(player), seq, kind }
}

/// Asks `queries` of a world from outside and of its loaded copy; every answer pair must agree.
#[track_caller]
fn ask_outside(world: &World, queries: &[Query]) -> usize {
    let loaded = World::load_with_rules(&world.save(), Probe { script: Vec::new() }).expect("the snapshot loads");
    for &q in queries {
        let here = ask(&world.game::<Probe>().expect("probe rules"), q);
        let there = ask(&loaded.game::<Probe>().expect("probe rules"), q);
        assert_eq!(here.within.0, here.within.1, "units_within from outside, {q:?}");
        assert_eq!(here.nearest.0, here.nearest.1, "nearest from outside, {q:?}");
        assert_eq!((&there.within, there.nearest), (&here.within, here.nearest), "a loaded world answers the same, {q:?}");
    }
    queries.len()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn index_answers_as_the_scan(
        groups in prop::collection::vec((1..3u8, 4..SIDE - 4, 4..SIDE - 4, 1..16u16), 1..6),
        script in prop::collection::vec(prop::collection::vec(op(), 0..10), 1..4),
        orders in prop::collection::vec((any::<u16>(), 4..SIDE - 4, 4..SIDE - 4), 0..6),
        commands in prop::collection::vec(query(), 1..4),
        outside in prop::collection::vec(query(), 1..6),
    ) {
        let mut world = probe_world(script);
        let first: Vec<Command> =
            groups.iter().enumerate().map(|(n, &(p, x, z, count))| cmd(0, p, n as u32, spawn(WorldPos::from_int(x, z), count))).collect();
        let mut compared = answers(&world.step(&first).events).len();
        for turn in 1..8u32 {
            // Units walk between the rules' turns, so an index of an earlier turn would be stale.
            let live: Vec<&Unit> = world.units().collect();
            let mut send: Vec<Command> = Vec::new();
            if !live.is_empty() {
                for (n, &(pick, x, z)) in orders.iter().enumerate() {
                    let u = live[usize::from(pick) % live.len()];
                    let goal = GoalSpec::Point(WorldPos::from_int(x, z));
                    send.push(cmd(turn, u.owner.0, n as u32, CommandKind::Move { units: vec![u.id], goal, queue: false }));
                }
            }
            for (n, q) in commands.iter().enumerate() {
                send.push(cmd(turn, 1, 100 + n as u32, rules::command::<Probe>(q)));
            }
            for a in answers(&world.step(&send).events) {
                prop_assert_eq!(&a.within.0, &a.within.1, "units_within, {:?}", a.query);
                prop_assert_eq!(a.nearest.0, a.nearest.1, "nearest, {:?}", a.query);
                compared += 1;
            }
            compared += ask_outside(&world, &outside);
        }
        prop_assert!(compared > 0);
    }
}

/// The same queries answered on a world of a few hundred units walking about, where the index
/// has many cells, and where the rules kill and spawn while they ask.
#[test]
fn many_units_answer_as_the_scan() {
    let mut script = Vec::new();
    for n in 0..40i32 {
        let q = Query { x: (n * 37) % SIDE, z: (n * 53) % SIDE, radius: i64::from(n % 20 + 2) << 16, filter: (n % 4) as u8 };
        script.push(Op::Ask(q));
        if n % 5 == 0 {
            script.push(Op::Remove { pick: (n * 7) as u16 });
            script.push(Op::Spawn { player: 2, x: (n * 11) % 120 + 4, z: (n * 13) % 120 + 4, count: 3 });
        }
    }
    let mut world = probe_world(vec![script]);
    let mut first = Vec::new();
    for n in 0..36u32 {
        let (x, z) = (8 + (n % 6) as i32 * 20, 8 + (n / 6) as i32 * 20);
        first.push(cmd(0, 1 + (n % 2) as u8, n, spawn(WorldPos::from_int(x, z), 10)));
    }
    let mut compared = 0;
    let mut found = 0;
    let mut check = |events: &[Event]| {
        for a in answers(events) {
            assert_eq!(a.within.0, a.within.1, "units_within, {:?}", a.query);
            assert_eq!(a.nearest.0, a.nearest.1, "nearest, {:?}", a.query);
            compared += 1;
            found += usize::from(!a.within.1.is_empty());
        }
    };
    check(&world.step(&first).events);
    assert!(world.units().count() > 300, "{} units", world.units().count());
    for turn in 1..6u32 {
        let live: Vec<&Unit> = world.units().collect();
        let send: Vec<Command> = live
            .iter()
            .step_by(3)
            .enumerate()
            .map(|(n, u)| {
                let goal = GoalSpec::Point(WorldPos::from_int(SIDE - 8 - (n as i32 % 100), 8 + (n as i32 * 7) % 100));
                cmd(turn, u.owner.0, n as u32, CommandKind::Move { units: vec![u.id], goal, queue: false })
            })
            .collect();
        check(&world.step(&send).events);
    }
    assert_eq!(compared, 6 * 40);
    // Queries that find nothing would prove little.
    assert!(found > compared / 3, "{found} of {compared} queries found units");
}
