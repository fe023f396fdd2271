//! Rules compose: a second game made of two of the reference game's modules (combat and
//! gathering) and one of this file's own (`camps`: a world command that pitches a camp, a
//! drop-site of the gathering module, and a player command that sends wood to another player).
//!
//! The promises: each module's state is its own digest components, in module order after the
//! core's; the modules step in that order, each seeing the events of the ones before it; a
//! module changes another's state only through `Ctx::with`, and a unit given a task by one
//! module drops its task in the others (`Ctx::interrupt`); the composed world saves, loads and
//! replays as one, and refuses a snapshot of another composition; the tools read its commands
//! from JSON and name its fields by module.

use pathing::{Fixed, ObstructionId, WorldPos};
use serde::{Deserialize, Serialize};
use sim::rules::{Ctx, Rules, View};
use sim::snapshot::SnapshotError;
use sim::{Command, CommandKind, Event, PlayerId, Settings, SquareSpec, Target, World};
use skirmish::combat::{Combat, CombatCommand, Fight};
use skirmish::gathering::{Gathering, GatheringCommand, Haul};
use skirmish::{SkirmishEvent, UnitKind};

/// The own module: camps (drop-sites pitched by the world) and tribute between players.
#[derive(Clone, Copy, Debug, Default)]
struct Camps;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum CampCommand {
    /// World only: a 4 × 4 m camp of `player` centred at whole metres, a drop-site.
    Pitch { player: u8, x: i32, z: i32 },
    /// Sends `wood` of the sender's store to player `to`.
    Tribute { to: u8, wood: u32 },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum CampEvent {
    Pitched { camp: ObstructionId },
    Tributed { from: PlayerId, to: PlayerId, wood: u32 },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum CampReject {
    WorldOnly,
    NotAPlayer,
    TooPoor { have: u32 },
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct CampPlayer {
    /// Wood sent to others.
    sent: u32,
}

impl Rules for Camps {
    const NAME: &'static str = "camps";
    const VERSION: u32 = 1;
    type Unit = ();
    type Object = PlayerId;
    type Player = CampPlayer;
    type State = ();
    type Command = CampCommand;
    type Event = CampEvent;
    type Reject = CampReject;

    fn new_unit(&self, _: &(), _: &sim::Unit) {}

    fn check(&self, view: &View<'_, Self>, player: PlayerId, command: &CampCommand) -> Result<(), CampReject> {
        match command {
            CampCommand::Pitch { .. } if player.0 != 0 => Err(CampReject::WorldOnly),
            CampCommand::Pitch { .. } => Ok(()),
            CampCommand::Tribute { .. } if player.0 == 0 => Err(CampReject::NotAPlayer),
            CampCommand::Tribute { to, wood } => {
                if *to == 0 || *to > view.world().settings().players {
                    return Err(CampReject::NotAPlayer);
                }
                // Another module's state, read through the world.
                let have = skirmish::gathering::wood_of(view.world(), player);
                if have < *wood { Err(CampReject::TooPoor { have }) } else { Ok(()) }
            }
        }
    }

    fn apply(&self, ctx: &mut Ctx<'_, Self>, player: PlayerId, command: &CampCommand) {
        match *command {
            CampCommand::Pitch { player: owner, x, z } => {
                let square = SquareSpec {
                    x: Fixed::from_num(x),
                    z: Fixed::from_num(z),
                    w: Fixed::from_num(4),
                    h: Fixed::from_num(4),
                    degrees: Fixed::ZERO,
                };
                let Ok(events) =
                    ctx.act(PlayerId(0), CommandKind::PlaceObstruction { square, flags: pathing::passability::ObstructionFlags::STATIC.0 })
                else {
                    return;
                };
                let Some(camp) = events.iter().find_map(|e| match e {
                    Event::ObstructionPlaced { id } => Some(*id),
                    _ => None,
                }) else {
                    return;
                };
                let _ = ctx.set_object(camp, PlayerId(owner));
                skirmish::gathering::add_drop_site(ctx, camp, PlayerId(owner));
                ctx.emit(&CampEvent::Pitched { camp });
            }
            CampCommand::Tribute { to, wood } => {
                skirmish::gathering::spend(ctx, player, wood);
                skirmish::gathering::grant(ctx, PlayerId(to), wood);
                if let Some(p) = ctx.player_mut(player) {
                    p.sent += wood;
                }
                ctx.emit(&CampEvent::Tributed { from: player, to: PlayerId(to), wood });
            }
        }
    }

    fn step(&self, _: &mut Ctx<'_, Self>, _: &[Event]) {}
}

/// The composed game: the two reference modules, then the own one.
type Game = (Combat, Gathering, Camps);

const TREE: ObstructionId = ObstructionId(5);

fn world(threads: usize) -> World {
    let walls = [(0, 0, 64, 1), (0, 47, 64, 48), (0, 1, 1, 47), (63, 1, 64, 47), (40, 35, 42, 37)];
    let (desc, obstructions) = sim::test_support::flat_geometry(64, 48, &walls);
    let settings = Settings { seed: 3, players: 2, ..Settings::default() };
    let mut world = World::with_rules(desc, obstructions, settings, (Combat, Gathering, Camps)).expect("a composed world");
    world.set_threads(threads).expect("threads");
    world
}

fn cmd(turn: u32, player: u8, seq: u32, kind: CommandKind) -> Command {
    Command { turn, player: PlayerId(player), seq, kind }
}

/// Turn 0: two workers of player 1 and one of player 2, the tree with 30 wood, player 1's camp.
fn set_up(world: &mut World) -> Vec<sim::EntityId> {
    let report = world.step(&[
        cmd(
            0,
            0,
            0,
            sim::rules::command::<Combat>(&CombatCommand::Spawn {
                player: 1,
                kind: UnitKind::Worker,
                at: WorldPos::from_int(30, 30),
                count: 2,
            }),
        ),
        cmd(
            0,
            0,
            1,
            sim::rules::command::<Combat>(&CombatCommand::Spawn {
                player: 2,
                kind: UnitKind::Spearman,
                at: WorldPos::from_int(8, 8),
                count: 1,
            }),
        ),
        cmd(0, 0, 2, sim::rules::command::<Gathering>(&GatheringCommand::Resources { first: TREE, last: TREE, wood: 30 })),
        cmd(0, 0, 3, sim::rules::command::<Camps>(&CampCommand::Pitch { player: 1, x: 30, z: 36 })),
    ]);
    assert!(sim::rules::events::<Camps>(&report.events).any(|e| matches!(e, CampEvent::Pitched { .. })), "{:?}", report.events);
    let mut workers: Vec<_> = world.units().filter(|u| u.owner == PlayerId(1)).map(|u| u.id).collect();
    workers.sort_unstable();
    assert_eq!(workers.len(), 2);
    workers
}

#[test]
fn each_module_is_its_own_digest_components_in_module_order_after_the_core_s() {
    let world = world(1);
    let digest = world.state_digest();
    let names: Vec<&str> = digest.components.iter().map(|(n, _)| n.as_str()).collect();
    let core = sim::test_support::world_from(sim::test_support::FIELD, 1).state_digest().components.len();
    let expected: Vec<String> = ["combat", "gathering", "camps"]
        .iter()
        .flat_map(|m| ["units", "objects", "players", "world"].map(|p| format!("{m}.{p}")))
        .collect();
    assert_eq!(names[core..], expected.iter().map(String::as_str).collect::<Vec<_>>()[..]);
    assert_eq!(world.rules_names(), [("combat", 1), ("gathering", 1), ("camps", 1)]);
}

#[test]
fn two_modules_of_the_same_name_are_refused() {
    let (desc, obstructions) = sim::test_support::flat_geometry(16, 16, &[]);
    let err = World::with_rules(desc, obstructions, Settings::default(), (Combat, Camps, Combat)).unwrap_err();
    assert!(err.to_string().contains("two rule modules are named \"combat\""), "{err}");
}

#[test]
fn workers_gather_into_another_module_s_camp_and_tribute_moves_the_wood() {
    let mut world = world(1);
    let workers = set_up(&mut world);
    world.step(&[cmd(1, 1, 0, sim::rules::command::<Gathering>(&GatheringCommand::Gather { units: workers.clone(), tree: TREE }))]);
    let mut deposited = 0;
    for _ in 0..1200 {
        let report = world.step(&[]);
        for e in skirmish::events(&report.events) {
            if let SkirmishEvent::Deposited { wood, .. } = e {
                deposited += u32::from(wood);
            }
        }
        assert_eq!(world.state_digest(), world.state_digest_from_scratch());
        if deposited == 30 {
            break;
        }
    }
    assert_eq!(deposited, 30, "the whole tree reached the camp");
    assert_eq!(skirmish::gathering::wood_of(&world, PlayerId(1)), 30);
    // Tribute: the own module spends the gathering module's wood, and reads it in its check.
    let t = world.turn();
    let report = world.step(&[
        cmd(t, 1, 0, sim::rules::command::<Camps>(&CampCommand::Tribute { to: 2, wood: 12 })),
        cmd(t, 1, 1, sim::rules::command::<Camps>(&CampCommand::Tribute { to: 2, wood: 19 })),
    ]);
    let refused: Vec<Option<CampReject>> = report
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Rejected { reason, .. } => Some(sim::rules::reject::<Camps>(reason)),
            _ => None,
        })
        .collect();
    assert_eq!(refused, [Some(CampReject::TooPoor { have: 18 })], "the second tribute finds 18 left");
    assert_eq!((skirmish::gathering::wood_of(&world, PlayerId(1)), skirmish::gathering::wood_of(&world, PlayerId(2))), (18, 12));
    assert_eq!(world.game::<Camps>().unwrap().player(PlayerId(1)).unwrap().sent, 12);
}

#[test]
fn a_worker_ordered_to_fight_drops_its_haul_in_the_other_module() {
    let mut world = world(1);
    let workers = set_up(&mut world);
    world.step(&[cmd(1, 1, 0, sim::rules::command::<Gathering>(&GatheringCommand::Gather { units: workers.clone(), tree: TREE }))]);
    let haul = |w: &World, u| w.game::<Gathering>().unwrap().unit(u).unwrap().task;
    assert_eq!(haul(&world, workers[0]), Haul::Gather(TREE));
    let enemy = world.units().find(|u| u.owner == PlayerId(2)).unwrap().id;
    world.step(&[cmd(
        2,
        1,
        0,
        sim::rules::command::<Combat>(&CombatCommand::Attack { units: vec![workers[0]], target: Target::Unit(enemy) }),
    )]);
    assert_eq!(haul(&world, workers[0]), Haul::Idle, "combat interrupted the haul");
    assert_eq!(haul(&world, workers[1]), Haul::Gather(TREE), "the other worker gathers on");
    assert_eq!(world.game::<Combat>().unwrap().unit(workers[0]).unwrap().task, Fight::Attack(Target::Unit(enemy)));
    // And back: gathering interrupts the fight.
    world.step(&[cmd(3, 1, 0, sim::rules::command::<Gathering>(&GatheringCommand::Gather { units: vec![workers[0]], tree: TREE }))]);
    assert_eq!(world.game::<Combat>().unwrap().unit(workers[0]).unwrap().task, Fight::Idle);
    assert_eq!(haul(&world, workers[0]), Haul::Gather(TREE));
}

#[test]
fn the_composed_world_is_the_same_on_one_and_two_threads_and_through_a_load_every_turn() {
    let run = |threads: usize, reload: bool| {
        let mut world = world(threads);
        let workers = set_up(&mut world);
        let mut hashes = Vec::new();
        for t in 1..200 {
            let commands = match t {
                1 => vec![cmd(t, 1, 0, sim::rules::command::<Gathering>(&GatheringCommand::Gather { units: workers.clone(), tree: TREE }))],
                120 => vec![cmd(t, 1, 0, sim::rules::command::<Camps>(&CampCommand::Tribute { to: 2, wood: 1 }))],
                _ => Vec::new(),
            };
            hashes.push(world.step(&commands).hash);
            if reload {
                world = World::load_with_rules(&world.save(), (Combat, Gathering, Camps)).expect("every turn's snapshot loads");
            }
        }
        hashes
    };
    let one = run(1, false);
    assert_eq!(one, run(2, false));
    assert_eq!(one, run(1, true));
}

#[test]
fn a_snapshot_of_one_composition_never_loads_as_another() {
    let mut world = world(1);
    set_up(&mut world);
    let bytes = world.save();
    let other = World::load_with_rules(&bytes, (Gathering, Combat, Camps)).unwrap_err();
    assert!(matches!(other, SnapshotError::Rules { .. }), "{other}");
    assert_eq!(
        other.to_string(),
        "the snapshot holds a world with rules combat 1, gathering 1, camps 1, expected rules gathering 1, combat 1, camps 1"
    );
    let fewer = World::load_with_rules(&bytes, (Combat, Gathering)).unwrap_err();
    assert!(matches!(fewer, SnapshotError::Rules { .. }), "{fewer}");
    let loaded = World::load_with_rules(&bytes, (Combat, Gathering, Camps)).unwrap();
    assert_eq!(loaded.state_hash(), world.state_hash());
    // A program that knows the composed game loads it by its modules.
    let rulesets = replay::rules::Rulesets::none().with(replay::rules::RulesOf::<Game>::named("camp-game", 1));
    assert_eq!(rulesets.load(&bytes).expect("known by its modules").state_hash(), world.state_hash());
    let err = replay::rules::Rulesets::none().with(skirmish::tools::ruleset()).load(&bytes).unwrap_err();
    assert!(err.to_string().contains("the snapshot holds rules combat 1, gathering 1, camps 1, which no game this program knows"), "{err}");
}

#[test]
fn the_tools_read_a_composed_game_s_commands_from_json_and_name_its_fields_by_module() {
    use replay::rules::Ruleset;
    let rules = replay::rules::RulesOf::<Game>::named("camp-game", 1);
    // The command alone, when one module reads it; `{"MODULE": …}` always.
    let (module, payload) = rules.command_from_json(&serde_json::json!({"Tribute": {"to": 2, "wood": 5}})).unwrap();
    assert_eq!((module.as_str(), payload), ("camps", sim::state_hash::encode(&CampCommand::Tribute { to: 2, wood: 5 })));
    let (module, _) = rules.command_from_json(&serde_json::json!({"combat": {"Stop": {"units": []}}})).unwrap();
    assert_eq!(module, "combat");
    let err = rules.command_from_json(&serde_json::json!({"Fly": {}})).unwrap_err();
    assert!(err.contains("not a combat command") && err.contains("not a camps command"), "{err}");
    // Field by field, per module.
    let mut a = world(1);
    set_up(&mut a);
    let mut b = World::load_with_rules(&a.save(), (Combat, Gathering, Camps)).unwrap();
    let unit = b.units().find(|u| u.owner == PlayerId(1)).unwrap().id;
    assert!(b.plant_game_desync::<Combat>(unit, |f| f.hp -= 1));
    let rulesets = replay::rules::Rulesets::none().with(rules);
    let (sa, sb) = (sim::snapshot::unframe(&a.save()).unwrap(), sim::snapshot::unframe(&b.save()).unwrap());
    let diff = replay::diff::diff_snapshots_with(&sa, &sb, 10, &rulesets);
    let text = format!("{diff:?}");
    assert!(text.contains("combat.units"), "{text}");
    assert!(text.contains("hp"), "{text}");
}
