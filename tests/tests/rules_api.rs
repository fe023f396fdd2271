//! The game-rules API (`sim::rules`) checked on its own, with a tiny ruleset of this file's: one
//! unit field (`hp`), one object (the turn a wall was built), one player field (`score`), one
//! world field (`hits`), three commands (`Hit`, `Wall`, `Mark`) and a step that heals and builds. Independent of the reference game, so a change there cannot
//! hide a broken promise here.
//!
//! The promises: a game command is checked before it is applied and a refused one changes
//! nothing; its actions are core commands with the core's validation; the game's state is in the
//! hash (four components after the core's), in snapshots (refused by another ruleset or version),
//! and located to the entity by the digest trees; the whole is the same across thread counts and
//! through a save and load every turn.

use pathing::{Fixed, WorldPos};
use serde::{Deserialize, Serialize};
use sim::digest_tree::locate_reports;
use sim::rules::{self, Ctx, Rules, View};
use sim::snapshot::SnapshotError;
use sim::test_support::{FIELD, flat_geometry};
use sim::{Command, CommandKind, EntityId, Event, GoalSpec, PlayerId, RejectReason, Settings, SquareSpec, Target, Unit, World};

#[derive(Clone, Debug, Default)]
struct Tiny;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct TinyUnit {
    hp: u16,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct TinyPlayer {
    score: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct TinyWorld {
    hits: u32,
    /// A wall to build at the next step, from a `Wall` command.
    wall: Option<(i32, i32)>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum TinyCommand {
    /// Takes `damage` hit points from another player's unit; at 0 it is removed.
    Hit { unit: EntityId, damage: u16 },
    /// Builds a 2 × 2 m wall centred at whole metres in the next step (an action of the world);
    /// the wall's object is the turn it was built.
    Wall { x: i32, z: i32 },
    /// Sets an obstruction's object to `value` (refused by the world when there is no such
    /// obstruction: then `MarkRefused`).
    Mark { obstruction: pathing::ObstructionId, value: u32 },
    /// Drops an obstruction's object, if it has one.
    Unmark { obstruction: pathing::ObstructionId },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum TinyEvent {
    Died { unit: EntityId },
    Healed { unit: EntityId },
    MarkRefused { reason: String },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum TinyReject {
    NoSuchUnit,
    OwnUnit,
    Damage,
    /// Players may not remove units: only the rules do.
    NoRemoving,
}

const MAX_HP: u16 = 10;

impl Rules for Tiny {
    const NAME: &'static str = "tiny";
    const VERSION: u32 = 1;
    type Unit = TinyUnit;
    type Object = u32;
    type Player = TinyPlayer;
    type State = TinyWorld;
    type Command = TinyCommand;
    type Event = TinyEvent;
    type Reject = TinyReject;

    fn new_unit(&self, _state: &TinyWorld, _unit: &Unit) -> TinyUnit {
        TinyUnit { hp: MAX_HP }
    }

    fn check(&self, view: &View<'_, Self>, player: PlayerId, command: &TinyCommand) -> Result<(), TinyReject> {
        match *command {
            TinyCommand::Hit { unit, damage } => {
                let target = view.world().unit(unit).ok_or(TinyReject::NoSuchUnit)?;
                if target.owner == player {
                    return Err(TinyReject::OwnUnit);
                }
                if !(1..=MAX_HP).contains(&damage) {
                    return Err(TinyReject::Damage);
                }
                Ok(())
            }
            TinyCommand::Wall { .. } | TinyCommand::Mark { .. } | TinyCommand::Unmark { .. } => Ok(()),
        }
    }

    fn allow(&self, _view: &View<'_, Self>, player: PlayerId, command: &CommandKind) -> Result<(), TinyReject> {
        if player != PlayerId(0) && matches!(command, CommandKind::Remove { .. }) { Err(TinyReject::NoRemoving) } else { Ok(()) }
    }

    fn apply(&self, ctx: &mut Ctx<'_, Self>, player: PlayerId, command: &TinyCommand) {
        match *command {
            TinyCommand::Hit { unit, damage } => {
                let owner = ctx.world().unit(unit).expect("checked").owner;
                let hp = {
                    let state = ctx.unit_mut(unit).expect("every unit has game state");
                    state.hp = state.hp.saturating_sub(damage);
                    state.hp
                };
                ctx.player_mut(player).expect("a player").score += u32::from(damage);
                ctx.state_mut().hits += 1;
                if hp == 0 {
                    ctx.act(owner, CommandKind::Remove { units: vec![unit] }).expect("a live unit of its owner");
                    ctx.emit(&TinyEvent::Died { unit });
                }
            }
            TinyCommand::Wall { x, z } => ctx.state_mut().wall = Some((x, z)),
            TinyCommand::Mark { obstruction, value } => {
                if let Err(refusal) = ctx.set_object(obstruction, value) {
                    ctx.emit(&TinyEvent::MarkRefused { reason: refusal.to_string() });
                }
            }
            TinyCommand::Unmark { obstruction } => {
                ctx.remove_object(obstruction);
            }
        }
    }

    fn step(&self, ctx: &mut Ctx<'_, Self>, events: &[Event]) {
        // Every 5th turn each wounded unit heals one point, nearest to the map's centre first.
        if ctx.world().turn() % 5 == 0 {
            let wounded = ctx.view().units_within(WorldPos::from_int(24, 8), Fixed::from_num(100), |_, s| s.hp < MAX_HP);
            for unit in wounded {
                ctx.unit_mut(unit).expect("listed").hp += 1;
                ctx.emit(&TinyEvent::Healed { unit });
            }
        }
        // A unit that arrived this turn scores for its owner.
        for e in events {
            if let Event::Arrived { unit } = e
                && let Some(owner) = ctx.world().unit(*unit).map(|u| u.owner)
            {
                ctx.player_mut(owner).expect("a player").score += 100;
            }
        }
        if let Some((x, z)) = ctx.state_mut().wall.take() {
            let square = SquareSpec {
                x: Fixed::from_num(x),
                z: Fixed::from_num(z),
                w: Fixed::from_num(2),
                h: Fixed::from_num(2),
                degrees: Fixed::ZERO,
            };
            let placed = ctx.act(PlayerId(0), CommandKind::PlaceObstruction { square, flags: 1 }).unwrap_or_default();
            for e in placed {
                if let Event::ObstructionPlaced { id } = e {
                    let turn = ctx.world().turn();
                    ctx.set_object(id, turn).expect("the obstruction was just placed");
                }
            }
        }
    }
}

fn settings() -> Settings {
    Settings { seed: 3, players: 2, ..Settings::default() }
}

fn tiny_world(threads: usize) -> World {
    let (w, h) = (FIELD[0].len() as u32, FIELD.len() as u32);
    let (desc, obstructions) = flat_geometry(w, h, &sim::test_support::walls_from(FIELD));
    let mut world = World::with_rules(desc, obstructions, settings(), Tiny).expect("a world with the tiny rules");
    world.set_threads(threads).expect("threads");
    world
}

fn cmd(turn: u32, player: u8, seq: u32, kind: CommandKind) -> Command {
    Command { turn, player: PlayerId(player), seq, kind }
}

fn hit(turn: u32, player: u8, seq: u32, unit: EntityId, damage: u16) -> Command {
    cmd(turn, player, seq, rules::command::<Tiny>(&TinyCommand::Hit { unit, damage }))
}

fn spawn(turn: u32, player: u8, x: i32, z: i32, count: u16) -> Command {
    let kind = CommandKind::Spawn {
        class: pathing::PassClass::of(0),
        at: WorldPos::from_int(x, z),
        count,
        radius: Fixed::ONE / 2,
        speed: Fixed::from_num(6),
        turn_rate: None,
    };
    cmd(turn, player, 0, kind)
}

fn units_of(world: &World, player: u8) -> Vec<EntityId> {
    world.units().filter(|u| u.owner == PlayerId(player)).map(|u| u.id).collect()
}

fn hp(world: &World, unit: EntityId) -> Option<u16> {
    world.game::<Tiny>().expect("tiny rules").unit(unit).map(|u| u.hp)
}

/// A scripted game: two groups, hits both ways, walls, moves; the commands of each turn.
fn script(turn: u32, world: &World) -> Vec<Command> {
    let (a, b) = (units_of(world, 1), units_of(world, 2));
    match turn {
        0 => vec![spawn(0, 1, 8, 8, 6), spawn(0, 2, 40, 8, 6)],
        1 => vec![
            cmd(1, 1, 1, CommandKind::Move { units: a.clone(), goal: GoalSpec::Point(WorldPos::from_int(30, 8)), queue: false }),
            cmd(1, 2, 1, CommandKind::Move { units: b.clone(), goal: GoalSpec::Point(WorldPos::from_int(18, 8)), queue: false }),
        ],
        3 => vec![cmd(3, 1, 2, rules::command::<Tiny>(&TinyCommand::Wall { x: 24, z: 12 }))],
        t if t % 3 == 0 && !a.is_empty() && !b.is_empty() => {
            let k = t as usize;
            vec![hit(t, 1, 3, b[k % b.len()], 3 + (t % 4) as u16), hit(t, 2, 3, a[k % a.len()], 2 + (t % 5) as u16)]
        }
        _ => Vec::new(),
    }
}

#[test]
fn a_game_command_changes_the_game_state_and_the_hash() {
    let mut world = tiny_world(1);
    world.step(&[spawn(0, 1, 8, 8, 1), spawn(0, 2, 40, 8, 1)]);
    let (a, b) = (units_of(&world, 1)[0], units_of(&world, 2)[0]);
    assert_eq!(hp(&world, b), Some(MAX_HP), "a new unit gets its game state from new_unit");
    let mut twin = World::load_with_rules(&world.save(), Tiny).expect("a snapshot of the tiny game");
    let report = world.step(&[hit(1, 1, 0, b, 4)]);
    let quiet = twin.step(&[]);
    assert_eq!(hp(&world, b), Some(MAX_HP - 4));
    assert_eq!(hp(&world, a), Some(MAX_HP));
    let view = world.game::<Tiny>().expect("tiny");
    assert_eq!(view.player(PlayerId(1)).map(|p| p.score), Some(4));
    assert_eq!(view.state().hits, 1);
    assert_ne!(report.hash, quiet.hash);
    let differs = report.digest.differing_components(&quiet.digest);
    assert_eq!(differs, ["tiny.units", "tiny.players", "tiny.world"], "only the game's components changed");
    assert!(world.game::<Tiny>().unwrap().objects().next().is_none(), "no object yet");
}

#[test]
fn the_game_components_follow_the_core_ones_in_the_digest() {
    let world = tiny_world(1);
    let digest = world.state_digest();
    let names: Vec<&str> = digest.components.iter().map(|(n, _)| n.as_str()).collect();
    let plain = sim::test_support::world_from(FIELD, 1);
    let plain_digest = plain.state_digest();
    let core: Vec<&str> = plain_digest.components.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names[..core.len()], core[..]);
    assert_eq!(names[core.len()..], ["tiny.units", "tiny.objects", "tiny.players", "tiny.world"]);
    assert_eq!(world.rules_names(), [("tiny", 1)]);
    assert!(world.digest_reports().iter().any(|r| r.component == "tiny.units"));
}

#[test]
fn a_refused_game_command_changes_nothing_and_says_why() {
    let mut world = tiny_world(1);
    world.step(&[spawn(0, 1, 8, 8, 1), spawn(0, 2, 40, 8, 1)]);
    let (a, b) = (units_of(&world, 1)[0], units_of(&world, 2)[0]);
    let mut twin = World::load_with_rules(&world.save(), Tiny).expect("a snapshot");
    let ghost = EntityId { index: 77, generation: 0 };
    let oversized = vec![0u8; rules::MAX_GAME_COMMAND + 1];
    let commands = [
        hit(1, 1, 0, a, 3),     // its own unit
        hit(1, 1, 1, b, 0),     // no damage
        hit(1, 1, 2, b, 11),    // more than the maximum
        hit(1, 1, 3, ghost, 1), // no such unit
        cmd(1, 1, 4, CommandKind::Game { rules: "tiny".into(), payload: vec![9, 9, 9] }),
        cmd(1, 1, 5, CommandKind::Game { rules: "tiny".into(), payload: oversized }),
    ];
    let report = world.step(&commands);
    let quiet = twin.step(&[]);
    assert_eq!(report.hash, quiet.hash, "refused commands changed the state");
    let reasons: Vec<RejectReason> = report
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Rejected { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect();
    let game: Vec<Option<TinyReject>> = reasons.iter().map(rules::reject::<Tiny>).collect();
    assert_eq!(
        game,
        [Some(TinyReject::OwnUnit), Some(TinyReject::Damage), Some(TinyReject::Damage), Some(TinyReject::NoSuchUnit), None, None]
    );
    assert_eq!(reasons[4..], [RejectReason::GameMalformed, RejectReason::GameMalformed]);
}

#[test]
fn the_rules_may_refuse_a_player_a_core_command_but_not_their_own_actions() {
    let mut world = tiny_world(1);
    world.step(&[spawn(0, 1, 8, 8, 1), spawn(0, 2, 40, 8, 1)]);
    let (a, b) = (units_of(&world, 1)[0], units_of(&world, 2)[0]);
    let mut twin = World::load_with_rules(&world.save(), Tiny).unwrap();
    let report = world.step(&[cmd(1, 1, 0, CommandKind::Remove { units: vec![a] })]);
    assert_eq!(report.hash, twin.step(&[]).hash, "the refused removal changed nothing");
    let reasons: Vec<Option<TinyReject>> = report
        .events
        .iter()
        .filter_map(|e| if let Event::Rejected { reason, .. } = e { Some(rules::reject::<Tiny>(reason)) } else { None })
        .collect();
    assert_eq!(reasons, [Some(TinyReject::NoRemoving)]);
    // The rules' own Remove (a kill) is an action, never asked.
    world.step(&[hit(2, 1, 0, b, 10)]);
    assert!(world.unit(b).is_none());
    // The world (player 0) is allowed by the rules; the core then refuses it (not its unit).
    let report = world.step(&[cmd(3, 0, 0, CommandKind::Remove { units: vec![a] })]);
    assert!(report.events.iter().any(|e| matches!(e, Event::Rejected { reason: RejectReason::NotOwned(u), .. } if *u == a)));
}

#[test]
fn a_world_without_rules_refuses_game_commands() {
    let mut world = sim::test_support::world_from(FIELD, 1);
    let report = world.step(&[cmd(0, 1, 0, rules::command::<Tiny>(&TinyCommand::Wall { x: 3, z: 3 }))]);
    assert!(report.events.iter().any(|e| matches!(e, Event::Rejected { reason: RejectReason::NoRules, .. })));
    assert!(world.game::<Tiny>().is_none());
}

#[test]
fn a_unit_killed_by_the_rules_is_removed_with_its_game_state() {
    let mut world = tiny_world(1);
    world.step(&[spawn(0, 1, 8, 8, 1), spawn(0, 2, 40, 8, 2)]);
    let b = units_of(&world, 2)[0];
    let report = world.step(&[hit(1, 1, 0, b, 6), hit(1, 1, 1, b, 6)]);
    assert!(world.unit(b).is_none(), "the unit was removed by the rules' action");
    assert_eq!(hp(&world, b), None, "its game state went with it");
    let died: Vec<TinyEvent> = rules::events::<Tiny>(&report.events).collect();
    assert_eq!(died, [TinyEvent::Died { unit: b }]);
    world.check_invariants().unwrap();
    assert_eq!(world.state_digest(), world.state_digest_from_scratch());
}

#[test]
fn actions_are_validated_like_commands() {
    #[derive(Clone, Debug, Default)]
    struct Sneaky;
    impl Rules for Sneaky {
        const NAME: &'static str = "sneaky";
        const VERSION: u32 = 1;
        type Unit = u8;
        type Object = u32;
        type Player = u8;
        type State = Vec<String>;
        type Command = u8;
        type Event = u8;
        type Reject = u8;
        fn new_unit(&self, _: &Vec<String>, _: &Unit) -> u8 {
            0
        }
        fn check(&self, _: &View<'_, Self>, _: PlayerId, _: &u8) -> Result<(), u8> {
            Ok(())
        }
        fn apply(&self, _: &mut Ctx<'_, Self>, _: PlayerId, _: &u8) {}
        fn step(&self, ctx: &mut Ctx<'_, Self>, _: &[Event]) {
            if ctx.world().turn() != 1 {
                return;
            }
            let foreign = ctx.world().units().find(|u| u.owner == PlayerId(2)).map(|u| u.id).expect("player 2's unit");
            let tries = [
                ctx.act(PlayerId(1), CommandKind::Remove { units: vec![foreign] }),
                ctx.act(PlayerId(9), CommandKind::Stop { units: vec![] }),
                ctx.act(PlayerId(1), CommandKind::Game { rules: "tiny".into(), payload: vec![0] }),
                ctx.act(
                    PlayerId(2),
                    CommandKind::Move {
                        units: vec![foreign],
                        goal: GoalSpec::Range {
                            target: Target::Unit(foreign),
                            min: Fixed::ZERO,
                            max: Fixed::ONE,
                            kind: sim::RangeKind::Melee,
                        },
                        queue: false,
                    },
                ),
            ];
            let words: Vec<String> = tries.into_iter().map(|r| format!("{:?}", r.err())).collect();
            ctx.state_mut().extend(words);
        }
    }
    let (w, h) = (FIELD[0].len() as u32, FIELD.len() as u32);
    let (desc, obstructions) = flat_geometry(w, h, &sim::test_support::walls_from(FIELD));
    let mut world = World::with_rules(desc, obstructions, settings(), Sneaky).unwrap();
    world.step(&[spawn(0, 1, 8, 8, 1), spawn(0, 2, 40, 8, 1)]);
    world.step(&[]);
    let said = world.game::<Sneaky>().unwrap().state().clone();
    let foreign = units_of(&world, 2)[0];
    assert_eq!(
        said,
        [
            format!("{:?}", Some(RejectReason::NotOwned(foreign))),
            format!("{:?}", Some(RejectReason::UnknownPlayer)),
            format!("{:?}", Some(RejectReason::NotAnAction)),
            format!("{:?}", Some(RejectReason::OutOfRange)),
        ]
    );
    assert_eq!(units_of(&world, 2), [foreign], "the refused removal changed nothing");
}

#[test]
fn a_wall_built_by_the_rules_is_in_the_grid_and_the_hash_in_the_same_turn() {
    let mut world = tiny_world(1);
    world.step(&[]);
    let before = world.state_digest();
    let wall_at = world.navcell_of(WorldPos::from_int(24, 12));
    world.step(&[cmd(1, 1, 0, rules::command::<Tiny>(&TinyCommand::Wall { x: 24, z: 12 }))]);
    let after = world.state_digest();
    let pass = world.nav().class_nav(pathing::PassClass::of(0)).unwrap().pass_map();
    assert!(!pass.is_passable(wall_at), "the wall blocks the grid once the turn ends");
    let differs = after.differing_components(&before);
    for component in ["obstructions", "passability", "tiny.objects"] {
        assert!(differs.iter().any(|c| c == component), "{component} did not change: {differs:?}");
    }
    assert_eq!(after, world.state_digest_from_scratch());
    let wall = *world.nav().obstructions().keys().last().expect("the wall");
    assert_eq!(world.game::<Tiny>().unwrap().objects().collect::<Vec<_>>(), [(wall, &1)], "the wall's object is the turn it was built");
}

#[test]
fn objects_are_hashed_saved_and_refused_for_obstructions_that_do_not_exist() {
    let mut world = tiny_world(1);
    world.step(&[cmd(0, 1, 0, rules::command::<Tiny>(&TinyCommand::Wall { x: 24, z: 12 }))]);
    let wall = *world.nav().obstructions().keys().last().expect("the wall");
    let mark = |turn, obstruction, value| cmd(turn, 1, 1, rules::command::<Tiny>(&TinyCommand::Mark { obstruction, value }));
    // A mark of the wall changes only the objects' component, and survives a save and load.
    let mut twin = World::load_with_rules(&world.save(), Tiny).expect("a snapshot");
    let marked = world.step(&[mark(1, wall, 42)]);
    let quiet = twin.step(&[]);
    assert_eq!(marked.digest.differing_components(&quiet.digest), ["tiny.objects"]);
    assert_eq!(world.state_digest(), world.state_digest_from_scratch());
    let loaded = World::load_with_rules(&world.save(), Tiny).expect("a snapshot with an object");
    assert_eq!(loaded.game::<Tiny>().unwrap().object(wall), Some(&42));
    assert_eq!(loaded.state_hash(), world.state_hash());
    // The objects' tree locates a diverging object to its range of 64 ids.
    let located = locate_reports(&world.digest_reports(), &twin.digest_reports());
    assert!(located.iter().any(|d| d.component == "tiny.objects"), "{located:?}");
    // No such obstruction, or an id past the largest: refused, nothing changes.
    let mut quiet = World::load_with_rules(&world.save(), Tiny).expect("a snapshot");
    let mut events = Vec::new();
    for (k, id) in [pathing::ObstructionId(9999), pathing::ObstructionId(rules::MAX_OBJECT_ID + 1)].into_iter().enumerate() {
        let report = world.step(&[mark(2 + k as u32, id, 7)]);
        events.extend(rules::events::<Tiny>(&report.events));
        quiet.step(&[]);
    }
    assert_eq!(
        events,
        [
            TinyEvent::MarkRefused { reason: "no obstruction 9999".into() },
            TinyEvent::MarkRefused {
                reason: format!("obstruction {} is above the largest object id {}", rules::MAX_OBJECT_ID + 1, rules::MAX_OBJECT_ID)
            },
        ]
    );
    assert_eq!(world.state_hash(), quiet.state_hash(), "refused marks changed the state");
}

/// Objects in the first two ranges of 64 ids, dropped in turn: after each turn the incremental
/// digest is the one a rebuild from the state gives and a loaded copy's, whichever ranges were
/// left empty and whether the highest was (a skirmish stream found the objects' tree keeping an
/// emptied range the rebuild does not have).
#[test]
fn objects_dropped_leave_the_digest_a_rebuild_gives() {
    let mut world = tiny_world(1);
    let posts: Vec<Command> = (0..70)
        .map(|k| {
            let square = SquareSpec {
                x: Fixed::from_num(3 + (k % 20) * 2),
                z: Fixed::from_num(3 + (k / 20) * 3),
                w: Fixed::ONE,
                h: Fixed::ONE,
                degrees: Fixed::ZERO,
            };
            cmd(0, 0, k as u32, CommandKind::PlaceObstruction { square, flags: 1 })
        })
        .collect();
    world.step(&posts);
    let ids: Vec<pathing::ObstructionId> = world.nav().obstructions().keys().copied().collect();
    assert!(ids.len() >= 70 && ids.iter().any(|id| id.0 >= 64) && ids.iter().any(|id| id.0 < 64), "{ids:?}");
    let (low, high) = (ids[3], *ids.last().unwrap());
    let tiny = |turn, seq, c: TinyCommand| cmd(turn, 1, seq, rules::command::<Tiny>(&c));
    let steps = [
        vec![TinyCommand::Mark { obstruction: low, value: 1 }, TinyCommand::Mark { obstruction: high, value: 2 }],
        vec![TinyCommand::Unmark { obstruction: low }],
        vec![TinyCommand::Mark { obstruction: low, value: 3 }],
        vec![TinyCommand::Unmark { obstruction: high }],
        vec![TinyCommand::Unmark { obstruction: low }],
    ];
    let mut hashes = Vec::new();
    for commands in steps {
        let turn = world.turn();
        let commands: Vec<Command> = commands.into_iter().enumerate().map(|(k, c)| tiny(turn, k as u32, c)).collect();
        world.step(&commands);
        assert_eq!(world.state_digest(), world.state_digest_from_scratch(), "turn {turn}");
        let loaded = World::load_with_rules(&world.save(), Tiny).expect("a snapshot");
        assert_eq!(loaded.state_hash(), world.state_hash(), "turn {turn}: a loaded copy");
        hashes.push(world.state_digest().components.iter().find(|(n, _)| n == "tiny.objects").map(|c| c.1));
    }
    // With no object left, the component is the one of a game that never had any.
    let fresh = tiny_world(1);
    let never = fresh.state_digest().components.iter().find(|(n, _)| n == "tiny.objects").map(|c| c.1);
    assert_eq!(hashes.last(), Some(&never));
}

#[test]
fn the_tiny_game_is_the_same_on_one_and_two_threads_and_through_a_load_every_turn() {
    let mut one = tiny_world(1);
    let mut two = tiny_world(2);
    let mut reloaded = tiny_world(1);
    let mut died = 0;
    for turn in 0..60 {
        let commands = script(turn, &one);
        let a = one.step(&commands);
        let b = two.step(&commands);
        let c = reloaded.step(&commands);
        assert_eq!(a, b, "turn {turn}: one and two threads differ");
        assert_eq!(a.hash, c.hash, "turn {turn}: the reloaded world differs");
        assert_eq!(one.state_digest(), one.state_digest_from_scratch(), "turn {turn}: the incremental digest drifted");
        reloaded = reloaded.load_like(&reloaded.save()).expect("every turn's snapshot loads with the same rules");
        assert_eq!(reloaded.state_hash(), a.hash, "turn {turn}: the load changed the hash");
        died += rules::events::<Tiny>(&a.events).filter(|e| matches!(e, TinyEvent::Died { .. })).count();
        one.check_invariants().unwrap();
    }
    assert!(died > 0, "the script kills units, so removal by the rules is exercised");
    let game = one.game::<Tiny>().unwrap();
    assert!(game.units().all(|(_, s)| s.hp <= MAX_HP));
    assert!(game.state().hits > 10);
}

#[test]
fn a_snapshot_loads_only_into_its_own_ruleset_and_version() {
    #[derive(Clone, Debug, Default)]
    struct TinyTwo;
    impl Rules for TinyTwo {
        const NAME: &'static str = "tiny";
        const VERSION: u32 = 2;
        type Unit = TinyUnit;
        type Object = u32;
        type Player = TinyPlayer;
        type State = TinyWorld;
        type Command = TinyCommand;
        type Event = TinyEvent;
        type Reject = TinyReject;
        fn new_unit(&self, state: &TinyWorld, unit: &Unit) -> TinyUnit {
            Tiny.new_unit(state, unit)
        }
        fn check(&self, _: &View<'_, Self>, _: PlayerId, _: &TinyCommand) -> Result<(), TinyReject> {
            Ok(())
        }
        fn apply(&self, _: &mut Ctx<'_, Self>, _: PlayerId, _: &TinyCommand) {}
        fn step(&self, _: &mut Ctx<'_, Self>, _: &[Event]) {}
    }
    let mut world = tiny_world(1);
    world.step(&[spawn(0, 1, 8, 8, 2)]);
    let bytes = world.save();
    let refused = World::load_with_rules(&bytes, TinyTwo).unwrap_err();
    assert_eq!(refused, SnapshotError::Rules { found: vec![("tiny".into(), 1)], expected: vec![("tiny".into(), 2)] });
    assert_eq!(refused.to_string(), "the snapshot holds a world with rules tiny 1, expected rules tiny 2");
    let plain = World::load(&bytes).unwrap_err();
    assert!(plain.to_string().contains("rules tiny 1, expected no game rules"), "{plain}");
    let core = sim::test_support::world_from(FIELD, 1).save();
    let missing = World::load_with_rules(&core, Tiny).unwrap_err();
    assert_eq!(missing, SnapshotError::Rules { found: Vec::new(), expected: vec![("tiny".into(), 1)] });
    assert_eq!(World::load_with_rules(&bytes, Tiny).unwrap().state_hash(), world.state_hash());
}

#[test]
fn a_planted_hit_point_divergence_is_located_to_the_game_component_and_the_unit() {
    let mut a = tiny_world(1);
    a.step(&[spawn(0, 1, 8, 8, 3), spawn(0, 2, 40, 8, 3)]);
    let mut b = World::load_with_rules(&a.save(), Tiny).unwrap();
    let victim = units_of(&a, 2)[1];
    assert!(b.plant_game_desync::<Tiny>(victim, |u| u.hp -= 1));
    let differs = a.state_digest().differing_components(&b.state_digest());
    assert_eq!(differs, ["tiny.units"]);
    let places = locate_reports(&a.digest_reports(), &b.digest_reports());
    assert_eq!(places.len(), 1);
    assert_eq!(places[0].component, "tiny.units");
    assert_eq!(places[0].leaves, [victim.index / 64]);
    // A player's field likewise.
    let mut c = World::load_with_rules(&a.save(), Tiny).unwrap();
    assert!(c.plant_player_desync::<Tiny>(PlayerId(2), |p| p.score += 1));
    assert_eq!(a.state_digest().differing_components(&c.state_digest()), ["tiny.players"]);
}

// ---------------------------------------------------------------------------------------------
// The tiny rules through the replay tools: a scenario naming them, recorded, verified (with the
// sync test), refused by a program that does not know them, and a planted hit-point divergence
// named down to the field.
// ---------------------------------------------------------------------------------------------

use replay::rules::{RulesOf, Rulesets};
use replay::scenario::Scenario;
use replay::verify::{Outcome, VerifyOptions, verify};

fn tiny_rulesets() -> Rulesets {
    Rulesets::none().with(RulesOf::<Tiny>::new())
}

const TINY_SCENARIO: &str = r#"{
  "format": "phalanx-scenario", "version": 6, "name": "tiny duel", "turns": 30, "rules": "tiny",
  "settings": {"players": 2, "seed": 5},
  "map": {"generated": {"tiles": 16, "seed": 2}},
  "script": [
    {"turn": 0, "player": 1, "spawn": {"group": "red", "class": "default", "at": [20, 20], "count": 3}},
    {"turn": 0, "player": 2, "spawn": {"group": "blue", "class": "default", "at": [40, 40], "count": 3}},
    {"turn": 1, "player": 1, "game": {"Hit": {"unit": {"$unit": "blue"}, "damage": 4}}},
    {"turn": 2, "player": 2, "game": {"Hit": {"unit": {"$unit": "red"}, "damage": 7}}},
    {"turn": 3, "player": 1, "game": {"Wall": {"x": 30, "z": 30}}},
    {"turn": 4, "player": 1, "game": {"Hit": {"unit": {"$unit": "blue"}, "damage": 9}}}
  ]
}"#;

fn tiny_scenario(rulesets: &Rulesets) -> Result<Scenario, String> {
    Scenario::parse_with(TINY_SCENARIO, "tiny.json", &mut |f| Err(format!("no file {f}")), rulesets).map_err(|e| e.to_string())
}

fn record_tiny() -> Vec<u8> {
    let scenario = tiny_scenario(&tiny_rulesets()).expect("the tiny scenario parses");
    let options = replay::record::RunOptions { turns: 30, threads: 1, keyframe_every: 10 };
    let (world, out) = replay::record::run(&scenario, &options, Some(Vec::new()), &mut |_, _| {}).expect("it runs");
    let game = world.game::<Tiny>().expect("the scenario's world has the tiny rules");
    assert_eq!(game.state().hits, 3, "the three hits landed");
    assert_eq!(units_of(&world, 2).len(), 2, "the third hit (4 + 9 > 10) killed the first blue unit");
    out.expect("recorded")
}

#[test]
fn a_scenario_with_game_rules_records_and_verifies_with_the_sync_test() {
    let bytes = record_tiny();
    let replay = replay::format::Replay::read(&bytes[..]).unwrap();
    assert_eq!(replay.header.rules, Some(("tiny".to_owned(), 1)));
    let options = VerifyOptions { sync_test: true, threads: 2, rulesets: tiny_rulesets(), ..VerifyOptions::default() };
    let report = verify(&bytes[..], "tiny", &options, None, &|| {});
    assert_eq!(report.outcome, Outcome::Identical, "{}", report.to_text());
    // The canonical text keeps the rules and the game commands as written.
    let scenario = tiny_scenario(&tiny_rulesets()).unwrap();
    let again = Scenario::parse_with(scenario.canonical_text(), "canonical", &mut |f| Err(f.to_owned()), &tiny_rulesets()).unwrap();
    assert_eq!(again, scenario);
    assert!(scenario.canonical_text().contains(r#""rules": "tiny""#));
}

#[test]
fn a_replay_of_unknown_rules_is_unusable_and_names_them() {
    let bytes = record_tiny();
    let report = verify(&bytes[..], "tiny", &VerifyOptions::default(), None, &|| {});
    assert_eq!(report.outcome, Outcome::Unreadable);
    assert_eq!(report.outcome.exit_code(), 2);
    let text = report.to_text();
    assert!(
        text.contains("unknown ruleset \"tiny\" version 1 (this program knows: none); run it with a program that registers that game"),
        "{text}"
    );
}

#[test]
fn a_scenario_naming_unknown_rules_or_a_bad_game_command_is_refused_where_it_says_so() {
    let err = tiny_scenario(&Rulesets::none()).unwrap_err();
    assert!(err.contains("rules") && err.contains("expected a ruleset this program knows (none), found \"tiny\""), "{err}");
    let bad = TINY_SCENARIO.replace(r#""damage": 7"#, r#""damage": "seven""#);
    let err = Scenario::parse_with(&bad, "tiny.json", &mut |f| Err(f.to_owned()), &tiny_rulesets()).unwrap_err().to_string();
    assert!(err.contains("script[3].game") && err.contains("expected a command of the tiny rules"), "{err}");
    let early = TINY_SCENARIO.replace(r#""turn": 1, "player": 1, "game""#, r#""turn": 0, "player": 1, "game""#);
    let err = Scenario::parse_with(&early, "tiny.json", &mut |f| Err(f.to_owned()), &tiny_rulesets()).unwrap_err().to_string();
    assert!(err.contains("group \"blue\" is spawned on turn 0"), "{err}");
    let none = TINY_SCENARIO.replace(r#""rules": "tiny","#, "");
    let err = Scenario::parse_with(&none, "tiny.json", &mut |f| Err(f.to_owned()), &tiny_rulesets()).unwrap_err().to_string();
    assert!(err.contains("the scenario names no game rules"), "{err}");
}

#[test]
fn a_planted_hit_point_divergence_is_named_down_to_the_field_by_verify() {
    let bytes = record_tiny();
    let replay = replay::format::Replay::read(&bytes[..]).unwrap();
    let keyframe = tiny_rulesets().load(&replay.keyframes[0].1).unwrap();
    let victim = units_of(&keyframe, 2)[0];
    // Turn 16: the rules heal on turns divisible by 5, so the planted point survives to the
    // keyframe of turn 20, where the fields are compared.
    let mut planted = false;
    let mut hook = |w: &mut World| {
        if w.turn() == 16 && !planted {
            planted = w.plant_game_desync::<Tiny>(victim, |u| u.hp -= 1);
        }
    };
    let options = VerifyOptions { rulesets: tiny_rulesets(), ..VerifyOptions::default() };
    let report = verify(&bytes[..], "tiny", &options, Some(&mut hook), &|| {});
    assert_eq!(report.outcome, Outcome::Diverged, "{}", report.to_text());
    let d = report.divergence.as_ref().unwrap();
    assert_eq!(d.turn, 16);
    assert_eq!(d.components, ["tiny.units"]);
    let field = d
        .diffs
        .iter()
        .find(|f| f.component == "tiny.units")
        .unwrap_or_else(|| panic!("no tiny.units field difference: {}", report.to_text()));
    assert_eq!(field.entity.as_deref(), Some(format!("unit {}v{}", victim.index, victim.generation).as_str()));
    assert_eq!(field.field, "hp");
    assert_eq!(field.left.parse::<u16>().unwrap(), field.right.parse::<u16>().unwrap() + 1, "{field:?}");
}
