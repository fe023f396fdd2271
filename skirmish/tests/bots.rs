//! Bot games on a small reference world: the same hashes on 1, 2 and 8 threads and through a save
//! and load every turn, and a result within the turn limit.

use pathing::ObstructionId;
use pathing::refworld::{RefWorldParams, generate};
use sim::{PlayerId, Settings, World};
use skirmish::{Bot, SKIRMISH, play, setup, start_spot};

/// Wood of each tree. `[Units: wood]`
const TREE_WOOD: u32 = 200;

/// The 128 m reference world of seed 1 with the skirmish rules, started for two players in
/// opposite corners; its turn-0 commands.
fn reference(threads: usize) -> (World, Vec<sim::Command>) {
    let params = RefWorldParams::scaled(32, 1);
    let (desc, obstructions) = generate(&params);
    // The generator's trees follow its buildings and are the only squares of at most 1 m half-size.
    let trees: Vec<ObstructionId> = obstructions.iter().filter(|(_, o)| o.square.hw() <= pathing::Fixed::ONE).map(|(id, _)| *id).collect();
    let settings = Settings { seed: 11, players: 2, ..Settings::default() };
    let mut world = World::with_rules(desc, obstructions, settings, SKIRMISH).expect("a skirmish world");
    world.set_threads(threads).expect("threads");
    let a = start_spot(&world, (34, 34), 40).expect("room for player 1");
    let b = start_spot(&world, (94, 94), 40).expect("room for player 2");
    let setup = setup(trees[0], *trees.last().unwrap(), TREE_WOOD, &[(1, a), (2, b)]);
    (world, setup)
}

fn bots() -> Vec<Bot> {
    vec![Bot::new(PlayerId(1), 5), Bot::new(PlayerId(2), 6)]
}

#[test]
fn a_bot_game_reaches_a_result_within_its_turn_limit() {
    let (mut world, setup) = reference(1);
    world.step(&setup);
    let mut bots = bots();
    let outcome = play(&mut world, &mut bots, 6000);
    assert!(outcome.decisive && outcome.winner.is_some(), "{outcome:?}");
    assert!(outcome.turns < 6000);
    let (p1, p2) = (&outcome.players[0], &outcome.players[1]);
    assert_eq!((p1.kills, p2.kills), (p2.deaths, p1.deaths), "every death is someone's kill");
    for p in &outcome.players {
        assert!(p.trained > 0 && p.gathered > 0 && p.built > 0, "each bot trained, gathered and built: {p:?}");
    }
    let loser = outcome.players.iter().find(|p| Some(p.player) != outcome.winner).unwrap();
    assert!(loser.defeated && loser.units == 0 && loser.buildings == 0);
}

#[test]
fn a_bot_game_is_the_same_on_one_two_and_eight_threads_and_through_a_load_every_turn() {
    let (mut one, setup) = reference(1);
    let (mut two, _) = reference(2);
    let (mut eight, _) = reference(8);
    let mut reloaded = World::load_with_rules(&one.save(), SKIRMISH).expect("a fresh world's snapshot");
    let mut bots = bots();
    let mut commands = setup;
    let mut turn = 0;
    let outcome = loop {
        let a = one.step(&commands);
        let b = two.step(&commands);
        let c = eight.step(&commands);
        let d = reloaded.step(&commands);
        assert_eq!(a, b, "turn {turn}: one and two threads differ");
        assert_eq!(a, c, "turn {turn}: one and eight threads differ");
        assert_eq!(a.hash, d.hash, "turn {turn}: the reloaded world differs");
        reloaded = World::load_with_rules(&reloaded.save(), SKIRMISH).expect("every turn's snapshot loads");
        assert_eq!(reloaded.state_hash(), a.hash, "turn {turn}: the load changed the hash");
        if turn % 50 == 0 {
            assert_eq!(one.state_digest(), one.state_digest_from_scratch(), "turn {turn}: the incremental digest drifted");
        }
        turn += 1;
        let summary = skirmish::summary(&one);
        if let Some(winner) = skirmish::play::last_standing(&summary) {
            break (winner, turn);
        }
        assert!(turn < 4000, "no result within 4000 turns");
        // The bots read the reloaded world: what they see is the same world.
        commands = skirmish::play::bot_commands(&reloaded, &mut bots);
    };
    // The same bots on a fresh world give the same game.
    let (mut again, setup) = reference(1);
    again.step(&setup);
    let replayed = play(&mut again, &mut self::bots(), 6000);
    assert_eq!((replayed.winner, replayed.turns + 1), (Some(outcome.0), outcome.1));
    assert_eq!(again.state_hash(), one.state_hash());
}
