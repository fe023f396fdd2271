//! Games of scenarios with game rules (the skirmish rules of `examples/scenarios/skirmish-ai.json`),
//! their seats played by the skirmish AI (`SeatBot`), over the in-memory transport and over
//! loopback sockets: every peer's per-turn hashes equal a single-process run of the host's
//! command stream, built with the same rules.

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::Instant;

use replay::scenario::{BOT_SEQ_BASE, Scenario};
use session::SeatBot;
use session::{Brain, ClientCore};
use session::{CLIENT_SEQ_BASE, Delay, HostConfig, HostCore};
use session::{MemGame, MemNet, NetConfig, single_process_hashes};
use session::{run_client, run_host};
use sim::{Command, CommandKind, PlayerId, TurnReport, World};

const TURNS: u32 = 40;

/// `examples/scenarios/skirmish-ai.json` (a town centre and workers each, the skirmish rules, a
/// bot of its own for each player, which the host leaves out for the seated players).
fn skirmish_ai() -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios/skirmish-ai.json");
    let text = std::fs::read_to_string(&path).expect("skirmish-ai.json");
    Scenario::parse_with(
        &text,
        "skirmish-ai.json",
        &mut |f| Err(format!("no file {f}")),
        &replay::rules::Rulesets::none().with(skirmish::tools::ruleset()),
    )
    .expect("skirmish-ai.json parses with the program's rulesets")
}

fn config() -> HostConfig {
    HostConfig {
        tokens: vec![[1; 16], [2; 16]],
        turns: TURNS,
        turn_ms: 20,
        delay: Delay::Auto,
        drop_after_ms: 20_000,
        max_lead: 16,
        keyframe_every: 10,
    }
}

fn client(seat: u8) -> ClientCore {
    ClientCore::new(seat, [seat; 16]).with_rulesets(replay::rules::Rulesets::none().with(skirmish::tools::ruleset()))
}

/// A seat bot that also says, after the game, whether the rules' own bot played.
struct Checked(SeatBot, std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Brain for Checked {
    fn think(&mut self, world: &World, report: &TurnReport) -> Vec<session::Order> {
        let orders = self.0.think(world, report);
        self.1.store(self.0.plays_the_rules_bot(), std::sync::atomic::Ordering::Relaxed);
        orders
    }
}

/// Both seats gave game commands of their own (the skirmish AI's; the scripted mover gives only
/// moves), which the host relayed, and the scenario's own bots gave none for the seated players.
fn assert_the_seats_played(history: &[Vec<Command>]) {
    for player in [1, 2] {
        let from_scenario_bots = history.iter().flatten().filter(|c| c.player == PlayerId(player) && c.seq >= BOT_SEQ_BASE).count();
        assert_eq!(from_scenario_bots, 0, "the scenario's bot also played seat {player}");
        let kinds: Vec<&CommandKind> =
            history.iter().flatten().filter(|c| c.player == PlayerId(player) && c.seq >= CLIENT_SEQ_BASE).map(|c| &c.kind).collect();
        assert!(kinds.iter().any(|k| matches!(k, CommandKind::Game { .. })), "seat {player} sent no game command: {kinds:?}");
    }
}

#[test]
fn a_skirmish_game_over_the_in_memory_network_keeps_every_hash_of_one_process() {
    let scenario = skirmish_ai();
    assert!(scenario.rules().is_some() && scenario.bots().len() == 2, "the skirmish rules and a scenario bot for each seat");
    let host = HostCore::new(&scenario, config()).expect("host");
    let net = NetConfig { latency_ms: 30, jitter_ms: 20, loss_pct: 2, rto_ms: 60, reorder_pct: 5, dup_pct: 5 };
    let mut game = MemGame::new(host, MemNet::new(net, 9), 5);
    let flags: Vec<_> = (1..=2u8).map(|_| std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false))).collect();
    for seat in 1..=2u8 {
        let bot = SeatBot::new(replay::rules::Rulesets::none().with(skirmish::tools::ruleset()), PlayerId(seat), u64::from(seat));
        game.add_client(client(seat), Box::new(Checked(bot, flags[usize::from(seat - 1)].clone())), None);
    }
    assert!(game.run(600_000), "the game ended");
    assert!(flags.iter().all(|f| f.load(std::sync::atomic::Ordering::Relaxed)), "the skirmish AI played both seats");
    let oracle = single_process_hashes(&scenario, game.host.history()).expect("oracle");
    assert_eq!(oracle.len(), TURNS as usize);
    assert_eq!(game.host.hashes(), &oracle[..], "host");
    for (k, c) in game.clients.iter().enumerate() {
        assert_eq!(c.core.hashes(), &oracle[..], "client {k}");
        assert_eq!(c.core.ended(), Some((TURNS, true)), "client {k}");
    }
    assert_the_seats_played(game.host.history());
}

#[test]
fn a_skirmish_game_over_loopback_sockets_keeps_every_hash_of_one_process() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let addr = listener.local_addr().expect("its address");
    let start = Instant::now();
    let clock = move || start.elapsed().as_millis() as u64;
    let clients: Vec<_> = (1..=2u8)
        .map(|seat| {
            std::thread::spawn(move || {
                let socket = TcpStream::connect(addr).expect("connect");
                let mut client = client(seat);
                let mut bot =
                    SeatBot::new(replay::rules::Rulesets::none().with(skirmish::tools::ruleset()), PlayerId(seat), u64::from(seat));
                run_client(socket, &mut client, &mut bot, &clock, &mut |_| {}).expect("client loop");
                (client.hashes().to_vec(), client.ended(), bot.plays_the_rules_bot())
            })
        })
        .collect();
    let scenario = skirmish_ai();
    let mut host = HostCore::new(&scenario, config()).expect("host");
    run_host(&listener, &mut host, &clock, &mut |_| {}).expect("host loop");
    let oracle = single_process_hashes(&scenario, host.history()).expect("oracle");
    assert_eq!(oracle.len(), TURNS as usize);
    assert_eq!(host.hashes(), &oracle[..], "host");
    for (k, c) in clients.into_iter().enumerate() {
        let (hashes, ended, ai) = c.join().expect("client thread");
        assert_eq!(hashes, oracle, "client {k}");
        assert_eq!(ended, Some((TURNS, true)), "client {k}");
        assert!(ai, "client {k} played the skirmish AI");
    }
    assert_the_seats_played(host.history());
}

#[test]
fn a_client_without_the_rules_refuses_the_scenario() {
    let scenario = skirmish_ai();
    let host = HostCore::new(&scenario, config()).expect("host");
    let mut game = MemGame::new(host, MemNet::new(NetConfig::default(), 1), 5);
    game.add_client(ClientCore::new(1, [1; 16]), Box::new(session::Idle), None);
    game.run(2_000);
    let c = &game.clients[0].core;
    assert!(c.world().is_none() && c.is_closed(), "a client that knows no rulesets cannot build a skirmish world");
}
