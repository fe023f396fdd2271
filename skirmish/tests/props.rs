//! Property tests: random streams of the game's commands (valid and invalid, from both players,
//! naming live, foreign and dead units) keep the game's invariants every turn: hit points within
//! the maximum, carried wood within the capacity, no unit on an impassable navcell except while it
//! walks out from under a new foundation (for a bounded time), wood spent only by its own
//! player's accepted command, and a dead unit's commands refused as `Dead`.

mod common;

use common::*;
use pathing::{Fixed, ObstructionId, WorldPos};
use proptest::prelude::*;
use sim::{EntityId, Event, PlayerId, Target, World};
use skirmish::{
    BuildingKind, CombatCommand as K, Construction, ConstructionCommand as B, GameCommand, GatheringCommand as G, ProductionCommand as P,
    SkirmishEvent, SkirmishReject, UnitKind,
};

/// One random step of a stream: wait some turns, then one player sends one command.
#[derive(Clone, Debug)]
struct Op {
    wait: u8,
    player: u8,
    action: u8,
    a: u16,
    b: u16,
    x: i32,
    z: i32,
}

fn op() -> impl Strategy<Value = Op> {
    (0u8..8, 1u8..=2, 0u8..8, any::<u16>(), any::<u16>(), -4i32..70, -4i32..52).prop_map(|(wait, player, action, a, b, x, z)| Op {
        wait,
        player,
        action,
        a,
        b,
        x,
        z,
    })
}

/// The command an op stands for in this world; `dead` is the unit it names if that one died.
fn command(world: &World, fallen: &[EntityId], op: &Op) -> (GameCommand, Option<EntityId>) {
    let view = world.game::<Construction>().unwrap();
    let own = units_of(world, op.player);
    let other = units_of(world, 3 - op.player);
    fn pick<T: Copy>(list: &[T], k: u16) -> Option<T> {
        list.get(usize::from(k) % list.len().max(1)).copied()
    }
    // One in four ops that name units names a dead one, when there is one.
    let dead = (op.b.is_multiple_of(4) && op.action != 4).then(|| pick(fallen, op.a)).flatten();
    let unit = dead.or_else(|| pick(&own, op.a)).unwrap_or(EntityId { index: 999, generation: 0 });
    let buildings: Vec<ObstructionId> = skirmish::construction::buildings(&view).map(|(id, _)| id).collect();
    let building = pick(&buildings, op.b).unwrap_or(ObstructionId(77));
    let at = WorldPos::from_int(op.x, op.z);
    let kind = UnitKind::ALL[usize::from(op.b % 3)];
    let c: GameCommand = match op.action {
        0 => K::Attack { units: vec![unit], target: pick(&other, op.b).map_or(Target::Obstruction(building), Target::Unit) }.into(),
        1 => K::Attack { units: vec![unit], target: Target::Obstruction(building) }.into(),
        2 => K::AttackMove { units: vec![unit], to: at }.into(),
        3 => K::Stop { units: vec![unit] }.into(),
        4 => P::Train { building, kind, count: op.a % 7 }.into(),
        5 => G::Gather { units: vec![unit], tree: if op.a.is_multiple_of(2) { TREE } else { building } }.into(),
        6 => {
            let kind = if op.a.is_multiple_of(3) { BuildingKind::TownCentre } else { BuildingKind::Barracks };
            B::Build {
                kind,
                square: skirmish::footprint(kind, Fixed::from_num(op.x), Fixed::from_num(op.z), Fixed::ZERO),
                builders: vec![unit],
            }
            .into()
        }
        _ => K::AttackMove { units: own.clone().into_iter().take(8).collect::<Vec<_>>().into_iter().chain(dead).collect(), to: at }.into(),
    };
    (c, dead)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn random_command_streams_keep_the_game_invariants(ops in prop::collection::vec(op(), 10..40)) {
        let mut world = field(1);
        world.step(&[
            game(0, 0, 0, P::Start { player: 1, x: 14, z: 24 }),
            game(0, 0, 1, P::Start { player: 2, x: 50, z: 24 }),
            game(0, 0, 2, G::Resources { first: TREE, last: TREE, wood: 40 }),
            spawn(0, 3, 1, UnitKind::Spearman, 24, 12, 3),
            spawn(0, 4, 2, UnitKind::Archer, 34, 12, 3),
            spawn(0, 5, 2, UnitKind::Spearman, 40, 36, 2),
        ]);
        // The spearmen and archers stand within each other's aggro radius, so they fight on their
        // own and dead units appear early in every stream.
        let mut fallen: Vec<EntityId> = Vec::new();
        let mut stranded = Stranded::default();
        for (seq, op) in ops.iter().enumerate() {
            for _ in 0..op.wait {
                let report = world.step(&[]);
                note_deaths(&report.events, &mut fallen);
                check_invariants(&world);
                stranded.check(&world);
            }
            let (c, dead) = command(&world, &fallen, op);
            let before: Vec<u32> = [1u8, 2].iter().map(|&p| skirmish::gathering::wood_of(&world, PlayerId(p))).collect();
            let turn = world.turn();
            let report = world.step(&[game(turn, op.player, seq as u32, c.clone())]);
            note_deaths(&report.events, &mut fallen);
            check_invariants(&world);
            stranded.check(&world);
            let refused = rejections(&report.events);
            if let Some(d) = dead {
                prop_assert_eq!(&refused, &vec![Some(SkirmishReject::Dead(d))], "a dead unit's command {:?}", c);
                prop_assert!(world.unit(d).is_none());
            }
            for (k, &p) in [1u8, 2].iter().enumerate() {
                // Wood only goes down by a command the player gave and could pay for.
                if skirmish::gathering::wood_of(&world, PlayerId(p)) < before[k] {
                    prop_assert_eq!(op.player, p);
                    prop_assert!(refused.is_empty());
                }
            }
            if !refused.is_empty() {
                let placed = game_events(&report.events).iter().any(|e| matches!(e, SkirmishEvent::Placed { .. }));
                prop_assert!(!placed, "a refused command laid a foundation");
            }
        }
        // Then the world runs on with no commands: every stranded unit walks off in time.
        for _ in 0..MAX_STRANDED_TURNS + 10 {
            let report = world.step(&[]);
            note_deaths(&report.events, &mut fallen);
            check_invariants(&world);
            stranded.check(&world);
        }
    }
}

fn note_deaths(events: &[Event], fallen: &mut Vec<EntityId>) {
    for e in game_events(events) {
        if let SkirmishEvent::Killed { unit, .. } = e {
            fallen.push(unit);
        }
    }
}
