//! A small game that embeds the Phalanx simulation, written as a guide: read it top to bottom.
//!
//! A lockstep RTS runs the same [`World`] on every peer. Peers never exchange state, only
//! commands: each player's commands are stamped for a turn a little in the future (the input
//! delay, [`INPUT_DELAY`] turns), sent to every peer, and applied by every peer on that turn in
//! `(turn, player, seq)` order. After each turn the peers exchange the 32-byte state hash of
//! [`TurnReport::hash`]; equal hashes mean equal worlds.
//!
//! [`run_game`] plays such a game in one process:
//!
//! - the world comes straight from the map generator ([`pathing::refworld::generate`]), with no
//!   scenario file; the world itself (player 0) sets a waypoint network on turn 0;
//! - two peers, A and B, each hold a [`World`] and one player's scripted AI ([`Ai`]), which reads
//!   its own peer's events and issues `Spawn`, `Move`, `MoveByWaypoints` and `PlaceBuilding`;
//! - peer A computes path requests on the calling thread, peer B on two worker threads: the
//!   thread count never changes a hash;
//! - after every turn the peers compare hashes; at the first mismatch they exchange the leaves of
//!   their digest trees ([`World::digest_reports`]), [`locate`] names the diverging components and
//!   entity ranges, both states are saved ([`World::save`]) and the game stops;
//! - each peer can record a replay that `phalanx verify` checks. A replay rebuilds its world from
//!   the scenario text in its header, so the game describes its map as a scenario with no units
//!   and no script ([`map_scenario`]); the commands recorded every turn do the rest.
//!
//! The `game_loop` example (`examples/game_loop.rs`) is the command line around it ([`cli`]): its
//! `--desync-at TURN` plants a one-bit divergence in peer B through the `fault` hook
//! (`World::plant_desync`, sim's `desync-hook` feature) to show how a desync is found
//! (`docs/desync-walkthrough.md`).

pub mod cli;

use std::collections::BTreeMap;
use std::error::Error;
use std::io::Write;

use pathing::refworld::{RefWorldParams, generate};
use pathing::{Fixed, PassClass, WorldPos};
use replay::format::ReplayWriter;
use replay::scenario::Scenario;
use sim::digest_tree::{Divergence, locate, range_indices};
use sim::waypoint::WaypointNet;
use sim::{Command, CommandKind, EntityId, Event, GoalSpec, PlayerId, Settings, SquareSpec, TurnReport, Unit, World};

/// Turns between issuing a command and the turn it applies in: the time it has to reach every
/// peer. Every command issued while turn `t` is current is stamped `t + INPUT_DELAY`.
pub const INPUT_DELAY: u32 = 2;
/// Tiles per side of the generated map (4 navcells of 1 m each: 128 × 128 navcells).
pub const MAP_TILES: u32 = 32;
/// Seed of the map generator.
pub const MAP_SEED: u64 = 1;
/// Seed of the simulation's random generator (part of the settings, so of every hash).
pub const GAME_SEED: u64 = 7;
/// A keyframe (a whole snapshot) in the replays every this many turns.
pub const KEYFRAME_EVERY: u32 = 10;
/// Class indices of `ClassSet::zero_ad_defaults`, the generator's classes.
const INFANTRY: PassClass = PassClass::of(0);
const BUILDING_LAND: PassClass = PassClass::of(4);

/// The game settings. Every peer must use the same ones: they are hashed.
pub fn settings() -> Settings {
    Settings { players: 2, seed: GAME_SEED, ..Settings::default() }
}

/// The world at turn 0, built directly from the generator's description and obstructions.
///
/// # Errors
/// When the world refuses the generated geometry (it does not).
pub fn new_world() -> Result<World, Box<dyn Error>> {
    let (desc, obstructions) = generate(&RefWorldParams::scaled(MAP_TILES, MAP_SEED));
    Ok(World::new(desc, obstructions, settings())?)
}

/// The same map as a scenario text (`docs/scenario.md`) with no units and no script: what a
/// replay header embeds so that `phalanx verify` can rebuild the world this game started from.
pub fn map_scenario(turns: u32) -> String {
    format!(
        r#"{{"format": "phalanx-scenario", "version": 3, "name": "game_loop", "turns": {turns},
  "settings": {{"players": 2, "seed": {GAME_SEED}}},
  "map": {{"generated": {{"tiles": {MAP_TILES}, "seed": {MAP_SEED}}}}}}}"#
    )
}

/// Map data sent by the world itself on turn 0: a 5 × 5 lattice of waypoints 22 m apart for
/// infantry, joined where a path of at most 32 m joins them. A command rather than a call to
/// `World::set_waypoints`, so that the replay carries it.
fn waypoint_setup() -> Command {
    let steps = [20, 42, 64, 86, 108];
    let points = steps.iter().flat_map(|&z| steps.iter().map(move |&x| WorldPos::from_int(x, z))).collect();
    let net = WaypointNet { class: INFANTRY, range: 32, points };
    Command { turn: 0, player: PlayerId::WORLD, seq: 0, kind: CommandKind::SetWaypoints { net } }
}

/// What an [`Ai`] is waiting for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Nothing yet: spawn the army.
    Start,
    /// The spawn command is on its way; its units are reported by `Spawned` events.
    Spawning,
    /// Scouts are crossing the map by waypoints; the first to arrive orders a barracks.
    Scouting,
    /// Every scout arrived or gave up: they were called home.
    Home,
}

/// A scripted computer player. It runs on its own peer only, reads that peer's world and events,
/// and its commands reach every peer as inputs. Like all game logic that produces commands, it
/// keeps its state in `Vec`s and reads events in their order, never iterating a hash map, so the
/// same game always gives the same commands.
pub struct Ai {
    player: PlayerId,
    base: WorldPos,
    far: WorldPos,
    barracks: WorldPos,
    next_seq: u32,
    stage: Stage,
    /// Every unit it spawned, in the order the world reported them.
    units: Vec<EntityId>,
    /// Scouts still on their way.
    away: Vec<EntityId>,
    barracks_ordered: bool,
}

impl Ai {
    /// A player with its base, the far point its scouts go to and where it builds its barracks.
    /// `[Units: metres]`
    pub fn new(player: PlayerId, base: (i32, i32), far: (i32, i32), barracks: (i32, i32)) -> Self {
        let at = |(x, z)| WorldPos::from_int(x, z);
        let (base, far, barracks) = (at(base), at(far), at(barracks));
        Self { player, base, far, barracks, next_seq: 0, stage: Stage::Start, units: Vec::new(), away: Vec::new(), barracks_ordered: false }
    }

    /// Stamps a command with its turn, this player and the next sequence number.
    fn command(&mut self, turn: u32, kind: CommandKind) -> Command {
        self.next_seq += 1;
        Command { turn, player: self.player, seq: self.next_seq - 1, kind }
    }

    /// Reads the events of the turn its peer just stepped and returns its commands for `turn`.
    pub fn think(&mut self, world: &World, events: &[Event], turn: u32) -> Vec<Command> {
        let mut done = Vec::new();
        for event in events {
            match *event {
                Event::Spawned { unit } if world.unit(unit).is_some_and(|u| u.owner == self.player) => self.units.push(unit),
                // `Arrived` ends one order (a waypoint of a route is an order): a scout is done
                // when it has no order left, or when it gave up.
                Event::Arrived { unit } if world.unit(unit).is_none_or(|u| u.orders.is_empty()) => done.push(unit),
                Event::Failed { unit, .. } => done.push(unit),
                _ => {}
            }
        }
        let mut out = Vec::new();
        match self.stage {
            Stage::Start => {
                let spawn = CommandKind::Spawn {
                    class: INFANTRY,
                    at: self.base,
                    count: 12,
                    radius: Fixed::ONE / 2,
                    speed: Fixed::from_num(8),
                    turn_rate: None,
                };
                out.push(self.command(turn, spawn));
                self.stage = Stage::Spawning;
            }
            Stage::Spawning if !self.units.is_empty() => {
                // Half the army scouts the far side over the waypoint network; the rest guard a
                // point beside the base.
                let (scouts, guards) = self.units.split_at(self.units.len() / 2);
                let (scouts, guards) = (scouts.to_vec(), guards.to_vec());
                let post = GoalSpec::Circle { center: offset(self.base, 10, 0), radius: Fixed::from_num(3) };
                out.push(self.command(turn, CommandKind::MoveByWaypoints { units: scouts.clone(), goal: self.far, queue: false }));
                out.push(self.command(turn, CommandKind::Move { units: guards, goal: post, queue: false }));
                self.away = scouts;
                self.stage = Stage::Scouting;
            }
            Stage::Scouting => {
                done.retain(|unit| self.away.contains(unit));
                if !done.is_empty() && !self.barracks_ordered {
                    // The first scout is there: build a barracks. Units standing on its footprint
                    // are ordered out of the way (foundation dispersal).
                    let (x, z) = (self.barracks.x, self.barracks.z);
                    let square = SquareSpec { x, z, w: Fixed::from_num(8), h: Fixed::from_num(8), degrees: Fixed::ZERO };
                    out.push(self.command(turn, CommandKind::PlaceBuilding { class: BUILDING_LAND, square, builder: None }));
                    self.barracks_ordered = true;
                }
                self.away.retain(|unit| !done.contains(unit));
                if self.away.is_empty() {
                    let scouts = self.units[..self.units.len() / 2].to_vec();
                    out.push(self.command(turn, CommandKind::MoveByWaypoints { units: scouts, goal: self.base, queue: false }));
                    self.stage = Stage::Home;
                }
            }
            Stage::Spawning | Stage::Home => {}
        }
        out
    }
}

fn offset(p: WorldPos, dx: i32, dz: i32) -> WorldPos {
    WorldPos::new(p.x + Fixed::from_num(dx), p.z + Fixed::from_num(dz))
}

/// One peer: its world, its player's AI, the events its AI reads next and its replay.
struct Peer<W: Write> {
    world: World,
    ai: Ai,
    events: Vec<Event>,
    replay: Option<ReplayWriter<W>>,
}

/// Where two peers' states first differed.
#[derive(Debug)]
pub struct Desync {
    /// The turn after which the hashes differ.
    pub turn: u32,
    /// Both peers' hashes after it (A, B).
    pub hashes: [[u8; 32]; 2],
    /// The components whose roots differ (`units`, `passability`, `rng`, ...).
    pub components: Vec<String>,
    /// The differing leaves of the tree components: unit ranges of 64 entity indices, grid
    /// chunks of 64 × 64 navcells.
    pub leaves: Vec<Divergence>,
    /// The units of the differing unit ranges that differ between the peers (A's, B's); what the
    /// peers would exchange next, the entities of those ranges only.
    pub units: Vec<(Option<Unit>, Option<Unit>)>,
    /// Both states after the turn ([`World::save`]), for `phalanx diff`.
    pub snapshots: [Vec<u8>; 2],
}

/// Counts of some of the events a game reported.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Units spawned.
    pub spawned: u32,
    /// Orders completed (each waypoint of a route is one).
    pub arrived: u32,
    /// Units given a route over the waypoint network with at least one waypoint.
    pub routes: u32,
    /// Obstructions placed (the barracks).
    pub placed: u32,
    /// Commands rejected.
    pub rejected: u32,
}

impl Counts {
    fn add(&mut self, event: &Event) {
        match event {
            Event::Spawned { .. } => self.spawned += 1,
            Event::Arrived { .. } => self.arrived += 1,
            Event::WaypointRoute { waypoints, .. } if *waypoints > 0 => self.routes += 1,
            Event::ObstructionPlaced { .. } => self.placed += 1,
            Event::Rejected { .. } => self.rejected += 1,
            _ => {}
        }
    }
}

/// What a game did.
pub struct GameOutcome<W> {
    /// Turns stepped by both peers.
    pub turns: u32,
    /// Peer A's hash after the last turn.
    pub final_hash: [u8; 32],
    /// What happened on peer A over the game.
    pub counts: Counts,
    /// The first turn the peers disagreed on, if any; the game stopped after it.
    pub desync: Option<Desync>,
    /// The finished replays of peers A and B, when asked for.
    pub replays: Option<[W; 2]>,
}

/// Plays `turns` turns on two peers, or up to the first turn their hashes differ, recording a
/// replay per peer into `record` when given. `fault` is called with peer B's world just before it
/// steps each turn (a test hook: it may perturb it), `on_turn` with each turn's commands and peer
/// A's report.
///
/// # Errors
/// When the world cannot be built or a replay cannot be written.
pub fn run_game<W: Write>(
    turns: u32,
    record: Option<[W; 2]>,
    fault: &mut dyn FnMut(&mut World),
    on_turn: &mut dyn FnMut(&[Command], &TurnReport),
) -> Result<GameOutcome<W>, Box<dyn Error>> {
    // Player 1 lives on peer A, player 2 on peer B: base, where the scouts go, the barracks.
    let ais = [Ai::new(PlayerId(1), (25, 25), (100, 45), (25, 43)), Ai::new(PlayerId(2), (105, 100), (30, 95), (105, 82))];
    let mut peers = Vec::new();
    let mut outs = record.map(|o| o.map(Some));
    for (k, ai) in ais.into_iter().enumerate() {
        let mut world = new_world()?;
        world.set_threads(k + 1)?;
        let replay = match outs.as_mut().and_then(|o| o[k].take()) {
            Some(out) => {
                let scenario = Scenario::parse(&map_scenario(turns), "game_loop", &mut |f| Err(format!("no file {f}")))?;
                // The replay is only good if its scenario rebuilds exactly this world.
                if scenario.world()?.state_hash() != world.state_hash() {
                    return Err("the map scenario does not describe the game's world".into());
                }
                let header = replay::record::header_for(&scenario, &mut world, KEYFRAME_EVERY);
                Some(ReplayWriter::new(out, header)?)
            }
            None => None,
        };
        peers.push(Peer { world, ai, events: Vec::new(), replay });
    }

    // Commands by the turn they apply in; here one queue stands for the network, which delivers
    // every command to every peer before its turn.
    let mut inbox: BTreeMap<u32, Vec<Command>> = BTreeMap::from([(0, vec![waypoint_setup()])]);
    let mut outcome = GameOutcome { turns: 0, final_hash: [0; 32], counts: Counts::default(), desync: None, replays: None };
    for turn in 0..turns {
        // 1. Each AI reads what its peer saw last turn and sends commands for a later turn.
        for peer in &mut peers {
            let commands = peer.ai.think(&peer.world, &peer.events, turn + INPUT_DELAY);
            inbox.entry(turn + INPUT_DELAY).or_default().extend(commands);
        }
        // 2. Every peer steps this turn with the same commands. (A real peer waits here until
        // it holds every player's commands for the turn.) The world sorts them by
        // `(turn, player, seq)` itself; sorting here makes the recorded list canonical too.
        let mut commands = inbox.remove(&turn).unwrap_or_default();
        commands.sort_by_key(Command::order_key);
        let mut reports = Vec::new();
        for (k, peer) in peers.iter_mut().enumerate() {
            if let Some(w) = peer.replay.as_mut().filter(|w| w.keyframe_due(&peer.world)) {
                w.keyframe(&peer.world)?;
            }
            if k == 1 {
                fault(&mut peer.world);
            }
            let report = peer.world.step(&commands);
            if let Some(w) = peer.replay.as_mut() {
                w.turn(&commands, &report)?;
            }
            peer.events.clone_from(&report.events);
            reports.push(report);
        }
        on_turn(&commands, &reports[0]);
        reports[0].events.iter().for_each(|e| outcome.counts.add(e));
        outcome.turns = turn + 1;
        outcome.final_hash = reports[0].hash;
        // 3. The peers exchange hashes. On a mismatch, find where and stop.
        if reports[0].hash != reports[1].hash {
            outcome.desync = Some(locate_desync(turn, &reports, &mut peers));
            break;
        }
    }
    // A keyframe after the last turn (always after a desync: it is the state to diff), then the
    // footer.
    let mut finished = Vec::new();
    for peer in peers {
        if let Some(mut w) = peer.replay {
            if outcome.desync.is_some() || w.keyframe_due(&peer.world) {
                w.keyframe(&peer.world)?;
            }
            finished.push(w.finish()?);
        }
    }
    outcome.replays = finished.try_into().ok();
    Ok(outcome)
}

/// Compares two peers top-down after their hashes differed on `turn`: component roots, then the
/// leaves of the tree components, then the units of the differing unit ranges.
fn locate_desync<W: Write>(turn: u32, reports: &[TurnReport], peers: &mut [Peer<W>]) -> Desync {
    let components = reports[0].digest.differing_components(&reports[1].digest);
    // The leaves are plain data (`DigestReport` is serde): what two remote peers would exchange.
    let leaves_of = |peer: &mut Peer<W>| peer.world.digest_reports().into_iter().map(Into::into).collect::<Vec<_>>();
    let (a, b) = (leaves_of(&mut peers[0]), leaves_of(&mut peers[1]));
    let leaves = locate(&a, &b);
    let mut units = Vec::new();
    for range in leaves.iter().filter(|d| d.component == "units").flat_map(|d| d.leaves.iter()) {
        for index in range_indices(*range).into_iter().flatten() {
            let find = |peer: &Peer<W>| peer.world.units().find(|u| u.id.index == index).cloned();
            let (ua, ub) = (find(&peers[0]), find(&peers[1]));
            if ua != ub {
                units.push((ua, ub));
            }
        }
    }
    let snapshots = [peers[0].world.save(), peers[1].world.save()];
    Desync { turn, hashes: [reports[0].hash, reports[1].hash], components, leaves, units, snapshots }
}
