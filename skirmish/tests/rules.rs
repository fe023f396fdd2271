//! The skirmish rules on a flat field: fights end with the expected side winning and the dead
//! removed, training costs wood and takes its documented time, gathering deposits wood and fells
//! trees (the grid opens where they stood), building raises a foundation, and every invalid
//! command is refused with its typed reason and changes nothing.

mod common;

use common::*;
use pathing::{Fixed, ObstructionId, WorldPos};
use sim::{PlayerId, SquareSpec, Target, World};
use skirmish::{
    BuildingKind, Combat, CombatCommand as K, Construction, ConstructionCommand as B, GameCommand, Gathering, GatheringCommand as G,
    Production, ProductionCommand as P, SKIRMISH, SkirmishEvent, SkirmishReject as R, UnitKind, turns,
};

/// Runs two armies at each other until one is gone (at most `limit` turns); the winner and the
/// turns it took. Checks the invariants and that every killed unit is gone with its game state.
fn battle(world: &mut World, limit: u32) -> (Option<u8>, u32) {
    let mut killed = 0;
    for _ in 0..limit {
        let turn = world.turn();
        let report = world.step(&[]);
        for e in game_events(&report.events) {
            if let SkirmishEvent::Killed { unit, .. } = e {
                killed += 1;
                assert!(world.unit(unit).is_none(), "killed unit {unit} still stands");
                assert!(world.game::<Combat>().unwrap().unit(unit).is_none(), "killed unit {unit} kept its state");
            }
        }
        check_invariants(world);
        let (a, b) = (units_of(world, 1).len(), units_of(world, 2).len());
        if a == 0 || b == 0 {
            let view = world.game::<Combat>().unwrap();
            let (p1, p2) = (view.player(PlayerId(1)).unwrap(), view.player(PlayerId(2)).unwrap());
            assert_eq!(p1.kills + p2.kills, killed);
            assert_eq!(p1.kills, p2.deaths);
            assert_eq!(p2.kills, p1.deaths);
            return (Some(if a == 0 { 2 } else { 1 }), turn);
        }
    }
    (None, limit)
}

#[test]
fn five_spearmen_beat_three_in_melee_and_the_dead_are_removed() {
    let mut world = field(1);
    world.step(&[spawn(0, 0, 1, UnitKind::Spearman, 16, 20, 5), spawn(0, 1, 2, UnitKind::Spearman, 48, 20, 3)]);
    let (a, b) = (units_of(&world, 1), units_of(&world, 2));
    assert_eq!((a.len(), b.len()), (5, 3));
    let to = |x| WorldPos::from_int(x, 20);
    world.step(&[game(1, 1, 0, K::AttackMove { units: a, to: to(48) }), game(1, 2, 0, K::AttackMove { units: b, to: to(16) })]);
    let (winner, turns) = battle(&mut world, 600);
    assert_eq!(winner, Some(1), "the larger army wins (after {turns} turns)");
    let view = world.game::<Combat>().unwrap();
    assert_eq!(view.player(PlayerId(1)).unwrap().kills, 3);
}

#[test]
fn six_archers_shoot_down_three_charging_spearmen() {
    let mut world = field(1);
    world.step(&[spawn(0, 0, 1, UnitKind::Archer, 16, 20, 6), spawn(0, 1, 2, UnitKind::Spearman, 48, 20, 3)]);
    let b = units_of(&world, 2);
    world.step(&[game(1, 2, 0, K::AttackMove { units: b, to: WorldPos::from_int(16, 20) })]);
    // The archers strike first, from their range, before the spearmen reach them.
    let hurt = |w: &World, kind: UnitKind| w.game::<Combat>().unwrap().units().any(|(_, s)| s.kind == kind && s.hp < kind.stats().hp);
    while !hurt(&world, UnitKind::Spearman) {
        assert!(!hurt(&world, UnitKind::Archer), "an archer was hit first");
        assert!(world.turn() < 200, "no one was hit");
        world.step(&[]);
    }
    assert!(!hurt(&world, UnitKind::Archer));
    let (winner, turns) = battle(&mut world, 600);
    assert_eq!(winner, Some(1), "the archers win (after {turns} turns)");
    assert!(!units_of(&world, 1).is_empty());
}

/// A started world: player 1's town centre at (14, 24), player 2's at (50, 24), the tree with
/// `wood`; the town centres' ids.
fn started(wood: u32) -> (World, ObstructionId, ObstructionId) {
    let mut world = field(1);
    let report = world.step(&[
        game(0, 0, 0, P::Start { player: 1, x: 14, z: 24 }),
        game(0, 0, 1, P::Start { player: 2, x: 50, z: 24 }),
        game(0, 0, 2, G::Resources { first: TREE, last: TREE, wood }),
    ]);
    let ids: Vec<ObstructionId> = game_events(&report.events)
        .into_iter()
        .filter_map(|e| match e {
            SkirmishEvent::Started { town_centre, .. } => Some(town_centre),
            _ => None,
        })
        .collect();
    assert_eq!(ids.len(), 2, "{:?}", report.events);
    assert_eq!(units_of(&world, 1).len(), usize::from(skirmish::START_WORKERS));
    check_invariants(&world);
    (world, ids[0], ids[1])
}

#[test]
fn training_costs_wood_takes_its_time_and_places_units_clear_of_everything() {
    let (mut world, tc, _) = started(50);
    let wood = |w: &World| skirmish::gathering::wood_of(w, PlayerId(1));
    assert_eq!(wood(&world), skirmish::START_WOOD);
    world.step(&[game(1, 1, 0, P::Train { building: tc, kind: UnitKind::Worker, count: 2 })]);
    assert_eq!(wood(&world), skirmish::START_WOOD - 2 * UnitKind::Worker.stats().cost);
    let each = turns(UnitKind::Worker.stats().train_ms, world.settings().turn_ms);
    assert_eq!(each, 40, "8 s at 200 ms a turn");
    let mut appeared = Vec::new();
    for _ in 0..2 * each + 5 {
        let turn = world.turn();
        let report = world.step(&[]);
        for e in game_events(&report.events) {
            if let SkirmishEvent::Trained { unit, kind, building } = e {
                assert_eq!((kind, building), (UnitKind::Worker, tc));
                assert!(world.unit(unit).is_some());
                appeared.push(turn);
            }
        }
        check_invariants(&world);
        // No two units overlap, and no unit overlaps an obstruction's blocked navcells.
        let units: Vec<&sim::Unit> = world.units().collect();
        for (i, a) in units.iter().enumerate() {
            for b in &units[i + 1..] {
                let reach = a.radius + b.radius;
                assert!((a.pos.x - b.pos.x).abs() >= reach || (a.pos.z - b.pos.z).abs() >= reach, "units {} and {} overlap", a.id, b.id);
            }
        }
    }
    // Queued at turn 1, the first is trained in the step of turn 1 + 39, the second 40 later.
    assert_eq!(appeared, [1 + each - 1, 1 + 2 * each - 1]);
    assert_eq!(world.game::<Production>().unwrap().player(PlayerId(1)).unwrap().trained, 2);
    assert_eq!(units_of(&world, 1).len(), 7);
}

#[test]
fn gathering_deposits_wood_and_a_felled_tree_opens_the_grid() {
    let (mut world, _, _) = started(24);
    let workers = units_of(&world, 1);
    let at = world.navcell_of(WorldPos::from_int(TREE_AT.0, TREE_AT.1));
    let pass = |w: &World| w.nav().class_nav(skirmish::UNIT_CLASS).unwrap().pass_map().is_passable(at);
    assert!(!pass(&world), "the tree blocks its navcell");
    world.step(&[game(1, 1, 0, G::Gather { units: workers[..2].to_vec(), tree: TREE })]);
    let mut felled = None;
    let mut deposited = 0;
    for _ in 0..1500 {
        let turn = world.turn();
        let report = world.step(&[]);
        for e in game_events(&report.events) {
            match e {
                SkirmishEvent::Felled { tree } => {
                    assert_eq!(tree, TREE);
                    felled = Some(turn);
                }
                SkirmishEvent::Deposited { wood, .. } => deposited += u32::from(wood),
                _ => {}
            }
        }
        check_invariants(&world);
        if deposited == 24 {
            break;
        }
    }
    assert!(felled.is_some(), "the tree was cut down");
    assert!(!world.nav().obstructions().contains_key(&TREE), "its obstruction is gone");
    assert!(pass(&world), "its navcell is passable again");
    let view = world.game::<Gathering>().unwrap();
    let p1 = view.player(PlayerId(1)).unwrap();
    assert_eq!((p1.gathered, p1.wood), (24, skirmish::START_WOOD + 24));
    assert_eq!(skirmish::gathering::trees(&view).count(), 0);
    assert!(view.units().all(|(_, s)| s.wood == 0));
}

#[test]
fn builders_raise_a_barracks_which_then_trains_soldiers() {
    let (mut world, _, _) = started(10);
    let workers = units_of(&world, 1);
    let square = skirmish::footprint(BuildingKind::Barracks, Fixed::from_num(20), Fixed::from_num(10), Fixed::ZERO);
    let report = world.step(&[game(1, 1, 0, B::Build { kind: BuildingKind::Barracks, square, builders: workers[..3].to_vec() })]);
    let barracks = game_events(&report.events)
        .into_iter()
        .find_map(|e| match e {
            SkirmishEvent::Placed { building, .. } => Some(building),
            _ => None,
        })
        .expect("the foundation is laid");
    let spent = BuildingKind::Barracks.stats().cost;
    assert_eq!(skirmish::gathering::wood_of(&world, PlayerId(1)), skirmish::START_WOOD - spent);
    let mut done = None;
    let mut last_hp = 1;
    for _ in 0..400 {
        let turn = world.turn();
        let report = world.step(&[]);
        let b = world.game::<Construction>().unwrap().object(barracks).unwrap().clone();
        let hull = world.game::<Combat>().unwrap().object(barracks).unwrap().clone();
        assert!(hull.hp >= last_hp, "a foundation's hit points only rise");
        last_hp = hull.hp;
        check_invariants(&world);
        if game_events(&report.events).contains(&SkirmishEvent::Built {
            building: barracks,
            kind: BuildingKind::Barracks,
            owner: PlayerId(1),
        }) {
            assert!(b.finished && hull.hp == hull.max_hp);
            done = Some(turn);
            break;
        }
    }
    // Three builders share 20 s of one builder's work (100 turns at 200 ms): 34 turns at least,
    // counting turn 1 (3 × 33 = 99 < 100), when they stand in build range already (the first
    // workers appear at the town centre's front, towards the barracks).
    let done = done.expect("the barracks is finished");
    assert!(done >= 34, "finished at turn {done}");
    assert_eq!(world.game::<Construction>().unwrap().player(PlayerId(1)).unwrap().built, 1);
    let t = world.turn();
    let report = world.step(&[game(t, 1, 0, P::Train { building: barracks, kind: UnitKind::Spearman, count: 1 })]);
    assert_eq!(rejections(&report.events), []);
}

#[test]
fn every_invalid_command_is_refused_with_its_reason_and_changes_nothing() {
    let (mut world, tc, enemy_tc) = started(10);
    let mine = units_of(&world, 1);
    let theirs = units_of(&world, 2);
    // A dead unit: player 2's first worker, killed by three spearmen.
    world.step(&[spawn(1, 0, 1, UnitKind::Spearman, 40, 24, 3)]);
    let spears: Vec<_> = units_of(&world, 1).into_iter().filter(|u| !mine.contains(u)).collect();
    let victim = theirs[0];
    let t = world.turn();
    world.step(&[game(t, 1, 0, K::Attack { units: spears.clone(), target: Target::Unit(victim) })]);
    for _ in 0..300 {
        if world.unit(victim).is_none() {
            break;
        }
        world.step(&[]);
    }
    assert!(world.unit(victim).is_none(), "the victim died");
    let t = world.turn();
    let mut twin = World::load_with_rules(&world.save(), SKIRMISH).unwrap();
    let ghost = sim::EntityId { index: 900, generation: 0 };
    let at = WorldPos::from_int(20, 20);
    let off = WorldPos::from_int(500, 20);
    let barracks = |x: i32| skirmish::footprint(BuildingKind::Barracks, Fixed::from_num(x), Fixed::from_num(24), Fixed::ZERO);
    let odd = SquareSpec { w: Fixed::from_num(3), ..barracks(30) };
    let cases: Vec<(u8, GameCommand, R)> = vec![
        (1, P::Start { player: 1, x: 30, z: 10 }.into(), R::WorldOnly),
        (0, P::Start { player: 1, x: 30, z: 10 }.into(), R::AlreadyStarted),
        (0, P::Start { player: 3, x: 30, z: 10 }.into(), R::UnknownPlayer),
        (0, G::Resources { first: ObstructionId(9), last: ObstructionId(3), wood: 5 }.into(), R::BadRange),
        (0, G::Resources { first: TREE, last: TREE, wood: 0 }.into(), R::BadAmount),
        (0, K::Spawn { player: 1, kind: UnitKind::Archer, at: off, count: 1 }.into(), R::OffMap),
        (0, K::Spawn { player: 1, kind: UnitKind::Archer, at, count: 0 }.into(), R::BadCount),
        (0, K::Attack { units: mine.clone(), target: Target::Unit(theirs[1]) }.into(), R::NotAPlayer),
        (1, K::Attack { units: vec![], target: Target::Unit(theirs[1]) }.into(), R::BadUnitCount),
        (1, K::Attack { units: vec![mine[0], mine[0]], target: Target::Unit(theirs[1]) }.into(), R::Duplicate(mine[0])),
        (1, K::Attack { units: vec![ghost], target: Target::Unit(theirs[1]) }.into(), R::UnknownUnit(ghost)),
        (2, K::Attack { units: vec![victim], target: Target::Unit(mine[0]) }.into(), R::Dead(victim)),
        (1, K::Attack { units: vec![theirs[1]], target: Target::Unit(mine[0]) }.into(), R::NotOwned(theirs[1])),
        (1, K::Attack { units: vec![mine[0]], target: Target::Unit(mine[1]) }.into(), R::OwnTarget),
        (1, K::Attack { units: vec![mine[0]], target: Target::Obstruction(tc) }.into(), R::OwnTarget),
        (1, K::Attack { units: vec![mine[0]], target: Target::Obstruction(TREE) }.into(), R::NotABuilding(TREE)),
        (1, K::Attack { units: vec![mine[0]], target: Target::Unit(victim) }.into(), R::Dead(victim)),
        (1, K::AttackMove { units: vec![mine[0]], to: off }.into(), R::OffMap),
        (1, K::Stop { units: vec![theirs[1]] }.into(), R::NotOwned(theirs[1])),
        (1, P::Train { building: enemy_tc, kind: UnitKind::Worker, count: 1 }.into(), R::NotYourBuilding(enemy_tc)),
        (1, P::Train { building: TREE, kind: UnitKind::Worker, count: 1 }.into(), R::NotABuilding(TREE)),
        (1, P::Train { building: tc, kind: UnitKind::Archer, count: 1 }.into(), R::CannotTrain),
        (1, P::Train { building: tc, kind: UnitKind::Worker, count: 0 }.into(), R::BadCount),
        (1, P::Train { building: tc, kind: UnitKind::Worker, count: 6 }.into(), R::BadCount),
        (1, G::Gather { units: vec![mine[0]], tree: tc }.into(), R::NotATree(tc)),
        (1, G::Gather { units: vec![spears[0]], tree: TREE }.into(), R::NotAWorker(spears[0])),
        (1, B::Build { kind: BuildingKind::Barracks, square: odd, builders: vec![mine[0]] }.into(), R::BadFootprint),
        (
            1,
            B::Build { kind: BuildingKind::Barracks, square: barracks(16), builders: vec![mine[0]] }.into(),
            R::CannotPlace(sim::PlacementRefusal::Blocked(pathing::Navcell::new(10, 18))),
        ),
        (
            1,
            B::Build {
                kind: BuildingKind::TownCentre,
                square: skirmish::footprint(BuildingKind::TownCentre, Fixed::from_num(30), Fixed::from_num(12), Fixed::ZERO),
                builders: vec![mine[0]],
            }
            .into(),
            R::NotEnoughResources { need: 400, have: 300 },
        ),
    ];
    let commands: Vec<_> = cases.iter().enumerate().map(|(n, (p, c, _))| game(t, *p, n as u32, c.clone())).collect();
    let report = world.step(&commands);
    let quiet = twin.step(&[]);
    // Commands are applied in (player, seq) order.
    let mut expected: Vec<(u8, Option<R>)> = cases.iter().map(|(p, _, r)| (*p, Some(r.clone()))).collect();
    expected.sort_by_key(|(p, _)| *p);
    let expected: Vec<Option<R>> = expected.into_iter().map(|(_, r)| r).collect();
    assert_eq!(rejections(&report.events), expected);
    assert_eq!(report.hash, quiet.hash, "refused commands changed the world");
}

#[test]
fn a_unit_that_waits_for_room_gets_its_kind_when_it_appears() {
    // Player 1 alone, its town centre in the north-west; a barracks in the south-east.
    let mut world = field(1);
    world.step(&[game(0, 0, 0, P::Start { player: 1, x: 14, z: 36 })]);
    let workers = units_of(&world, 1);
    let square = skirmish::footprint(BuildingKind::Barracks, Fixed::from_num(40), Fixed::from_num(10), Fixed::ZERO);
    let report = world.step(&[game(1, 1, 0, B::Build { kind: BuildingKind::Barracks, square, builders: workers[..3].to_vec() })]);
    let barracks = game_events(&report.events)
        .into_iter()
        .find_map(|e| match e {
            SkirmishEvent::Placed { building, .. } => Some(building),
            _ => None,
        })
        .expect("the foundation is laid");
    while !world.game::<Construction>().unwrap().object(barracks).unwrap().finished {
        assert!(world.turn() < 600, "the barracks was not finished");
        world.step(&[]);
    }
    // The builders walk away, then the world walls the barracks (x 35..45, z 5..15) in, 1 m from
    // its footprint and 9 m thick or to the map's edge: every spawn point round it (8 rings, up to
    // 9.4 m out) is then blocked.
    let t = world.turn();
    let away = sim::CommandKind::Move { units: workers.clone(), goal: sim::GoalSpec::Point(WorldPos::from_int(32, 34)), queue: false };
    world.step(&[sim::Command { turn: t, player: PlayerId(1), seq: 0, kind: away }]);
    for _ in 0..40 {
        world.step(&[]);
    }
    let half = |n: i32| Fixed::from_num(n) / 2;
    let wall = |x2: i32, z2: i32, w: i32, h: i32| sim::CommandKind::PlaceObstruction {
        square: SquareSpec { x: half(x2), z: half(z2), w: Fixed::from_num(w), h: Fixed::from_num(h), degrees: Fixed::ZERO },
        flags: pathing::passability::ObstructionFlags::STATIC.0,
    };
    // South z 1..4, north z 16..26 (both x 24..56), west x 24..34 and east x 46..56 (z 4..16).
    let walls = [wall(80, 5, 32, 3), wall(80, 42, 32, 10), wall(58, 20, 10, 12), wall(102, 20, 10, 12)];
    let t = world.turn();
    let commands: Vec<sim::Command> =
        walls.into_iter().enumerate().map(|(n, kind)| sim::Command { turn: t, player: PlayerId(0), seq: n as u32, kind }).collect();
    let report = world.step(&commands);
    let placed: Vec<ObstructionId> = report
        .events
        .iter()
        .filter_map(|e| match e {
            sim::Event::ObstructionPlaced { id } => Some(*id),
            _ => None,
        })
        .collect();
    assert_eq!(placed.len(), 4, "{:?}", report.events);
    let t = world.turn();
    world.step(&[game(t, 1, 0, P::Train { building: barracks, kind: UnitKind::Spearman, count: 1 })]);
    let each = turns(UnitKind::Spearman.stats().train_ms, world.settings().turn_ms);
    let mut waited = false;
    for _ in 0..each + 2 {
        let report = world.step(&[]);
        waited |= report.events.iter().any(|e| matches!(e, sim::Event::SpawnWaiting { .. }));
        assert!(!game_events(&report.events).iter().any(|e| matches!(e, SkirmishEvent::Trained { .. })), "no room, no unit");
    }
    assert!(waited, "the spawn waits for room");
    let view = world.game::<Production>().unwrap();
    assert_eq!(
        view.state().pending.values().map(|p| (p.kind, p.building, p.left, p.trained)).collect::<Vec<_>>(),
        [(UnitKind::Spearman, barracks, 1, true)]
    );
    assert_eq!(view.player(PlayerId(1)).unwrap().trained, 0);
    // The world opens the north wall: the spearman appears, a spearman.
    let t = world.turn();
    let open = sim::CommandKind::RemoveObstruction { id: placed[1] };
    let mut trained = Vec::new();
    for n in 0..5 {
        let commands = if n == 0 { vec![sim::Command { turn: t, player: PlayerId(0), seq: 0, kind: open.clone() }] } else { vec![] };
        let report = world.step(&commands);
        trained.extend(game_events(&report.events).into_iter().filter(|e| matches!(e, SkirmishEvent::Trained { .. })));
        check_invariants(&world);
    }
    let [SkirmishEvent::Trained { unit, kind, building }] = trained[..] else { panic!("one unit trained: {trained:?}") };
    assert_eq!((kind, building), (UnitKind::Spearman, barracks));
    let combat = world.game::<Combat>().unwrap();
    assert_eq!(combat.unit(unit).map(|s| (s.kind, s.hp)), Some((UnitKind::Spearman, UnitKind::Spearman.stats().hp)));
    let view = world.game::<Production>().unwrap();
    assert!(view.state().pending.is_empty());
    assert_eq!(view.player(PlayerId(1)).unwrap().trained, 1);
}

#[test]
fn a_player_may_not_send_the_core_commands_that_make_units_or_change_the_map() {
    let (mut world, tc, _) = started(10);
    let mine = units_of(&world, 1);
    let t = world.turn();
    let mut twin = World::load_with_rules(&world.save(), SKIRMISH).unwrap();
    let core = |seq: u32, kind: sim::CommandKind| sim::Command { turn: t, player: sim::PlayerId(1), seq, kind };
    let square = skirmish::footprint(BuildingKind::Barracks, Fixed::from_num(40), Fixed::from_num(24), Fixed::ZERO);
    let commands = [
        core(
            0,
            sim::CommandKind::Spawn {
                class: skirmish::UNIT_CLASS,
                at: WorldPos::from_int(20, 20),
                count: 3,
                radius: Fixed::ONE / 2,
                speed: Fixed::from_num(6),
                turn_rate: None,
            },
        ),
        core(
            1,
            sim::CommandKind::SpawnFromBuilding {
                building: tc,
                class: skirmish::UNIT_CLASS,
                count: 1,
                radius: Fixed::ONE / 2,
                speed: Fixed::from_num(6),
                turn_rate: None,
            },
        ),
        core(2, sim::CommandKind::PlaceBuilding { class: skirmish::BUILDING_CLASS, square, builder: None }),
        core(3, sim::CommandKind::RemoveObstruction { id: tc }),
    ];
    let report = world.step(&commands);
    assert_eq!(rejections(&report.events), vec![Some(R::CoreCommandRefused); 4]);
    assert_eq!(report.hash, twin.step(&[]).hash, "the refused core commands changed nothing");
    // Moving its own units is a player's to do.
    let t = world.turn();
    let go = sim::Command {
        turn: t,
        player: sim::PlayerId(1),
        seq: 9,
        kind: sim::CommandKind::Move { units: vec![mine[0]], goal: sim::GoalSpec::Point(WorldPos::from_int(30, 30)), queue: false },
    };
    assert_eq!(rejections(&world.step(&[go]).events), Vec::<Option<R>>::new());
}
