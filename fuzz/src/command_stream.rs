//! The `command_stream` target: a small world and up to 40 turns of commands of every kind, decoded
//! from bytes, run three times (one thread; two threads; one thread saved and loaded mid-run). Every
//! run must give the same events and state hashes every turn, keep the world's invariants, and never
//! panic. The commands cover every `CommandKind`: units (spawn, move, stop, remove), obstructions
//! (place, remove, flags as gates), buildings, spawns from buildings and their cancelling, areas,
//! terrain edits, formations and waypoint networks (set, priorities, moves by waypoints), and the
//! commands of a small game ruleset ([`crate::fuzz_rules`]) with every kind of game action, plus
//! game payloads that are no command.
//!
//! # Layout
//!
//! A header describes the world (kind: open, three navigation areas, or painted from rectangles;
//! size 16 to 80 navcells a side; navcell size; border; jump tables; landmark tables; initial
//! obstructions with ids that may be near `u32::MAX`; settings), then turns follow while bytes
//! remain: a count (at most [`MAX_COMMANDS`]) and that many commands. Ids in commands are mostly
//! ones the world reported earlier (spawned units, formations, placed obstructions) and sometimes
//! ids that never existed; coordinates are mostly on the map and sometimes on its edge, just beyond
//! it, at the input limits or anywhere in the `Fixed` range. The commands are decoded during the
//! first run (so they can name what it created) and replayed unchanged by the other two.
//!
//! # Oracles
//!
//! - Every turn: `check_invariants`, and the incremental digest equals `state_digest_from_scratch`.
//! - The two-thread run and the saved-and-loaded run have the first run's events and hashes, and a
//!   loaded world has the saved world's hash.
//! - A command for another turn is rejected as `WrongTurn`, one from a player who is not in the game
//!   as `UnknownPlayer`.
//! - Obstruction ids handed out by the world are never `u32::MAX` (it marks that the ids are
//!   exhausted) and never an id that was in use before.

use pathing::classes::ClassSet;
use pathing::decimal::WORLD_LIMIT;
use pathing::passability::{NavArea, Obstruction, ObstructionFlags, ObstructionId, WorldDesc};
use pathing::polygon::Polygon;
use pathing::terrain::{CellKind, GridSpec, MapBorder, Terrain};
use pathing::waypoints::WaypointPriority;
use pathing::{COORD_LIMIT, Fixed, PassClass, WorldPos};
use sim::formation::{FormationId, Layout};
use sim::waypoint::{PriorityEntry, WaypointNet};
use sim::{Command, CommandKind, EntityId, Event, GoalSpec, PlayerId, RangeKind, RejectReason, Settings, SquareSpec, Target, World};

use crate::bytes::Bytes;
use crate::fuzz_rules::{FuzzCommand, FuzzRules};

/// Most turns in one input.
pub const MAX_TURNS: u32 = 40;

/// Most commands in one turn.
pub const MAX_COMMANDS: u32 = 32;

/// What the world has handed out so far, for picking ids that exist.
#[derive(Default)]
struct Known {
    units: Vec<EntityId>,
    formations: Vec<FormationId>,
    obstructions: Vec<ObstructionId>,
}

/// A world decoded from the header, with its map size in raw units and its initial obstruction ids.
struct Setup {
    desc: WorldDesc,
    obstructions: Vec<(ObstructionId, Obstruction)>,
    settings: Settings,
    /// Map width and height. `[Units: 2^-16 m]`
    size: (i64, i64),
    /// Terrain vertices per side.
    vertices: (u32, u32),
}

fn fx(bits: i64) -> Fixed {
    Fixed::from_bits(bits)
}

fn metres(n: i32) -> Fixed {
    Fixed::from_num(n)
}

/// An axis-aligned rectangle polygon `[x0, x1] × [z0, z1]` (metres).
fn rect(x0: Fixed, z0: Fixed, x1: Fixed, z1: Fixed) -> Option<Polygon> {
    Polygon::new(vec![WorldPos::new(x0, z0), WorldPos::new(x1, z0), WorldPos::new(x1, z1), WorldPos::new(x0, z1)]).ok()
}

fn decode_setup(b: &mut Bytes) -> Option<Setup> {
    let header = b.u8();
    let (w, h) = (16 * (1 + b.below(5)), 16 * (1 + b.below(5)));
    // Navcell sizes 1 m (mostly), 0.5 m and 2 m; terrain tiles are 4 navcells.
    let cell = b.pick(&[Fixed::ONE, Fixed::ONE, Fixed::ONE / 2, metres(2)]);
    let terrain = Terrain::flat(w / 4, h / 4, cell * 4, Fixed::ZERO, -Fixed::ONE).ok()?;
    let border = match (header >> 2) % 3 {
        0 => MapBorder::None,
        1 => MapBorder::Square { width: 1 + b.below(3) },
        _ => MapBorder::Circle { width: b.below(3) },
    };
    let (wm, hm) = (cell * Fixed::from_num(w), cell * Fixed::from_num(h));
    let mut areas = Vec::new();
    let mut cells = Vec::new();
    match header % 3 {
        0 => {}
        1 => {
            // Two halves and a door between them: closing the door cuts the map in two.
            let (mid, zmid, gap) = (wm / 2, hm / 2, cell * 3);
            let polygons = [
                ("west", rect(Fixed::ZERO, Fixed::ZERO, mid - gap, hm)),
                ("east", rect(mid + gap, Fixed::ZERO, wm, hm)),
                ("door", rect(mid - gap - cell, zmid - gap, mid + gap + cell, zmid + gap)),
            ];
            for (name, polygon) in polygons {
                areas.push(NavArea { name: name.into(), polygon: polygon?, available: b.u8() != 1 });
            }
        }
        _ => {
            cells = vec![CellKind::Ground; (w * h) as usize];
            for _ in 0..b.below(8) {
                let kind = b.pick(&[CellKind::Water, CellKind::Blocked, CellKind::Ground]);
                let (i0, j0) = (b.below(w), b.below(h));
                let (i1, j1) = ((i0 + 1 + b.below(w)).min(w), (j0 + 1 + b.below(h)).min(h));
                for j in j0..j1 {
                    for i in i0..i1 {
                        cells[(j * w + i) as usize] = kind;
                    }
                }
            }
        }
    }
    let desc = WorldDesc::new(GridSpec { width: w, height: h, cell_size: cell }, ClassSet::zero_ad_defaults(), terrain)
        .with_border(border)
        .with_areas(areas)
        .with_jump_table_classes(if header >> 4 & 1 == 1 { 0b11 } else { 0 })
        .with_landmark_classes(if header >> 5 & 1 == 1 { 0b11 } else { 0 })
        .with_cells(cells);
    let size = (wm.to_bits(), hm.to_bits());
    let mut obstructions = Vec::new();
    let mut next_id = 1u32;
    for _ in 0..b.below(4) {
        next_id = match b.below(8) {
            0 => u32::MAX,
            1 => u32::MAX - 1,
            2 => u32::MAX - 2,
            _ => next_id.saturating_add(1),
        };
        let x = fx((i64::from(b.u16()) * size.0) >> 16);
        let z = fx((i64::from(b.u16()) * size.1) >> 16);
        let square = pathing::raster::editor_square(
            x,
            z,
            metres(1 + b.below(12) as i32),
            metres(1 + b.below(12) as i32),
            metres(b.below(180) as i32),
        );
        obstructions.push((ObstructionId(next_id), Obstruction { square: square.ok()?, flags: ObstructionFlags(1 + b.below(3) as u8) }));
    }
    let turn_ms = b.pick(&[200, 200, 100, 1000, 1, 10_000]);
    let players = 1 + b.below(3) as u8;
    let seed = u64::from(b.u8());
    let settings = Settings {
        turn_ms,
        players,
        seed,
        max_paths_per_turn: b.pick(&[64, 64, 1, 2, 65_535]),
        // From the seed rather than a byte of its own, so the stored inputs keep their meaning:
        // the default, the least (one search a turn), budgets that cut a turn's searches
        // mid-chunk, and the largest.
        long_search_budget: [sim::DEFAULT_LONG_SEARCH_BUDGET, 1, 200, 2_000, sim::MAX_LONG_SEARCH_BUDGET][(seed % 5) as usize],
        ..Settings::default()
    };
    Some(Setup { desc, obstructions, settings, size, vertices: (w / 4 + 1, h / 4 + 1) })
}

/// A coordinate along an axis of `size` raw units: mostly on the map, sometimes on or just off its
/// edge, at the input limits, or anything at all.
fn coordinate(b: &mut Bytes, size: i64) -> Fixed {
    match b.below(16) {
        0..=10 => fx((i64::from(b.u16()) * size) >> 16),
        11 => fx(b.pick(&[0, -1, 1, size, size - 1, size + 1])),
        12 => fx(b.pick(&[-(1 << 16), size + (1 << 16), size * 2])),
        13 => b.pick(&[WORLD_LIMIT, -WORLD_LIMIT, WORLD_LIMIT + fx(1), -WORLD_LIMIT - fx(1)]),
        14 => b.pick(&[COORD_LIMIT, -COORD_LIMIT, COORD_LIMIT + fx(1), Fixed::MAX, Fixed::MIN]),
        _ => fx(b.i64()),
    }
}

fn position(b: &mut Bytes, size: (i64, i64)) -> WorldPos {
    WorldPos::new(coordinate(b, size.0), coordinate(b, size.1))
}

/// A length: mostly a few metres, sometimes zero, negative, at a limit or anything.
fn length(b: &mut Bytes, typical_metres: u32) -> Fixed {
    match b.below(16) {
        0..=11 => fx(i64::from(b.u16() % (typical_metres.max(1) as u16).saturating_mul(16)) << 12),
        12 => b.pick(&[Fixed::ZERO, fx(1), fx(-1), -Fixed::ONE]),
        13 => b.pick(&[metres(8), metres(8) + fx(1), metres(64), metres(64) + fx(1), metres(256), metres(256) + fx(1)]),
        14 => b.pick(&[WORLD_LIMIT, WORLD_LIMIT + fx(1), COORD_LIMIT, Fixed::MAX, Fixed::MIN]),
        _ => fx(b.i64()),
    }
}

fn unit_id(b: &mut Bytes, known: &Known) -> EntityId {
    let k = b.u8();
    match k {
        0..=219 if !known.units.is_empty() => known.units[usize::from(k) % known.units.len()],
        220..=239 => EntityId { index: u32::from(k % 8), generation: u32::from(k % 3) },
        240..=249 => EntityId { index: u32::MAX, generation: 0 },
        _ => EntityId { index: b.u32(), generation: b.u32() },
    }
}

fn unit_ids(b: &mut Bytes, known: &Known) -> Vec<EntityId> {
    let n = match b.below(16) {
        0 => 0,
        1 => known.units.len(),
        k => k.min(6) as usize,
    };
    if n == known.units.len() && n > 0 && b.bool() {
        return known.units.clone();
    }
    (0..n).map(|_| unit_id(b, known)).collect()
}

fn formation_id(b: &mut Bytes, known: &Known) -> FormationId {
    let k = b.u8();
    match k {
        0..=219 if !known.formations.is_empty() => known.formations[usize::from(k) % known.formations.len()],
        220..=249 => FormationId(u32::from(k % 8)),
        _ => FormationId(b.pick(&[u32::MAX, u32::MAX - 1, 1 << 31])),
    }
}

fn obstruction_id(b: &mut Bytes, known: &Known) -> ObstructionId {
    let k = b.u8();
    match k {
        0..=219 if !known.obstructions.is_empty() => known.obstructions[usize::from(k) % known.obstructions.len()],
        220..=249 => ObstructionId(u32::from(k % 8)),
        _ => ObstructionId(b.pick(&[u32::MAX, u32::MAX - 1, 1 << 31])),
    }
}

fn layout(b: &mut Bytes) -> Layout {
    b.pick(&[Layout::Line, Layout::Box, Layout::Column, Layout::Wedge, Layout::Loose])
}

fn goal(b: &mut Bytes, known: &Known, size: (i64, i64)) -> GoalSpec {
    match b.below(5) {
        0 | 1 => GoalSpec::Point(position(b, size)),
        2 => GoalSpec::Circle { center: position(b, size), radius: length(b, 12) },
        3 => GoalSpec::Square { center: position(b, size), half: length(b, 12) },
        _ => {
            let target = if b.bool() { Target::Unit(unit_id(b, known)) } else { Target::Obstruction(obstruction_id(b, known)) };
            let (min, max) = (length(b, 6), length(b, 24));
            GoalSpec::Range { target, min, max, kind: b.pick(&[RangeKind::Melee, RangeKind::Ranged, RangeKind::Build]) }
        }
    }
}

fn square(b: &mut Bytes, size: (i64, i64)) -> SquareSpec {
    let degrees = match b.below(4) {
        0 => metres(b.below(8) as i32 * 45),
        1 => fx(b.i64()),
        _ => fx(i64::from(b.u16()) << 8),
    };
    SquareSpec { x: coordinate(b, size.0), z: coordinate(b, size.1), w: length(b, 16), h: length(b, 16), degrees }
}

/// A class index: the eight built-in classes, mostly movement ones, and some that do not exist.
/// A class index: mostly defined ones, sometimes one the grid does not define (a class at or above
/// `MAX_CLASSES` cannot be written in a command at all: it fails to decode).
fn class(b: &mut Bytes) -> PassClass {
    PassClass::of(b.pick(&[0, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 14, 15]))
}

/// A spawn's turn rate: mostly the game's, sometimes its own, sometimes outside the limits.
fn turn_rate(b: &mut Bytes) -> Option<Fixed> {
    b.pick(&[None, None, None, Some(metres(90)), Some(Fixed::ONE), Some(metres(3600)), Some(Fixed::ZERO), Some(metres(3600) + fx(1))])
}

fn command_kind(b: &mut Bytes, known: &Known, setup: &Setup) -> CommandKind {
    let size = setup.size;
    match b.below(17) {
        0 => CommandKind::Spawn {
            class: class(b),
            at: position(b, size),
            count: match b.below(16) {
                0 => b.pick(&[0, 256, 257, 4097, u16::MAX]),
                k => k.min(8) as u16,
            },
            radius: b.pick(&[Fixed::ONE / 2, Fixed::ONE / 2, Fixed::ONE, metres(3) / 2, fx(1), metres(8), Fixed::ZERO, metres(8) + fx(1)]),
            speed: b.pick(&[metres(9), metres(9), metres(15), metres(64), fx(1), Fixed::ZERO, metres(64) + fx(1), -Fixed::ONE]),
            turn_rate: turn_rate(b),
        },
        1 | 2 => CommandKind::Move { units: unit_ids(b, known), goal: goal(b, known, size), queue: b.u8() < 64 },
        3 => CommandKind::Stop { units: unit_ids(b, known) },
        4 => CommandKind::Remove { units: unit_ids(b, known) },
        5 => CommandKind::PlaceObstruction { square: square(b, size), flags: b.pick(&[3, 3, 1, 2, 0, 4, 255]) },
        6 => CommandKind::PlaceBuilding { class: class(b), square: square(b, size), builder: b.bool().then(|| unit_id(b, known)) },
        7 => CommandKind::SetObstructionFlags { id: obstruction_id(b, known), flags: b.pick(&[0, 1, 2, 3, 4]) },
        8 => CommandKind::RemoveObstruction { id: obstruction_id(b, known) },
        9 => CommandKind::SetArea { name: b.pick(&["door", "door", "west", "east", "", "nowhere"]).into(), available: b.bool() },
        10 => {
            let (vw, vh) = setup.vertices;
            let vx = if b.u8() == 255 { u32::MAX } else { b.below(vw + 2) };
            let vz = if b.u8() == 255 { u32::MAX } else { b.below(vh + 2) };
            let width = b.pick(&[1, 1, 2, 3, 0, 257]);
            let heights = (0..b.below(10))
                .map(|_| match b.below(8) {
                    0 => fx(b.i64()),
                    1 => b.pick(&[WORLD_LIMIT, WORLD_LIMIT + fx(1), -WORLD_LIMIT]),
                    _ => metres(b.below(40) as i32 - 8),
                })
                .collect();
            CommandKind::EditTerrain { vx, vz, width, heights }
        }
        11 => CommandKind::FormGroup { units: unit_ids(b, known), layout: layout(b) },
        12 => CommandKind::MoveFormation { formation: formation_id(b, known), goal: goal(b, known, size) },
        14 => {
            let class = class(b);
            let range = b.pick(&[16, 16, 40, 1, 128, 0, 129]);
            let points = (0..b.below(12)).map(|_| position(b, size)).collect();
            CommandKind::SetWaypoints { net: WaypointNet { class, range, points } }
        }
        15 => CommandKind::SetWaypointPriorities {
            class: class(b),
            reset: b.bool(),
            entries: (0..b.below(6))
                .map(|_| PriorityEntry {
                    waypoint: if b.u8() == 255 { u32::MAX } else { b.below(14) },
                    priority: if b.bool() { WaypointPriority::Excluded } else { WaypointPriority::Open { extra_cost: b.u16() } },
                })
                .collect(),
        },
        16 => CommandKind::MoveByWaypoints { units: unit_ids(b, known), goal: position(b, size), queue: b.u8() < 64 },
        _ => match b.below(5) {
            4 => game_command(b, known, size),
            0 => CommandKind::SetLayout { formation: formation_id(b, known), layout: layout(b) },
            1 => CommandKind::Disband { formation: formation_id(b, known) },
            2 => CommandKind::SpawnFromBuilding {
                building: obstruction_id(b, known),
                class: class(b),
                count: match b.below(16) {
                    0 => b.pick(&[0, 4097, u16::MAX]),
                    k => (k * 4) as u16,
                },
                radius: b.pick(&[Fixed::ONE / 2, Fixed::ONE, metres(3) / 2, fx(1), Fixed::ZERO, metres(8) + fx(1)]),
                speed: b.pick(&[metres(9), metres(15), Fixed::ZERO, metres(64) + fx(1)]),
                turn_rate: turn_rate(b),
            },
            _ => CommandKind::CancelSpawns { building: obstruction_id(b, known) },
        },
    }
}

/// A command of [`FuzzRules`], or sometimes bytes that are none.
fn game_command(b: &mut Bytes, known: &Known, size: (i64, i64)) -> CommandKind {
    let command = match b.below(8) {
        0 => {
            // Bytes for the fuzz rules, or a module the world does not have.
            let rules = b.pick(&[<FuzzRules as sim::rules::Rules>::NAME, <FuzzRules as sim::rules::Rules>::NAME, "absent", ""]).to_owned();
            return CommandKind::Game { rules, payload: (0..b.below(12)).map(|_| b.u8()).collect() };
        }
        1 | 2 => FuzzCommand::Hit { unit: unit_id(b, known), damage: b.pick(&[1, 3, 5, 12, 0, 100]) },
        3 => FuzzCommand::Wall { square: square(b, size) },
        4 => FuzzCommand::Unwall,
        5 => FuzzCommand::Spawn { at: position(b, size), count: b.pick(&[1, 2, 4, 0, 9]) },
        _ => FuzzCommand::Order { unit: unit_id(b, known), to: position(b, size) },
    };
    sim::rules::command::<FuzzRules>(&command)
}

fn command(b: &mut Bytes, known: &Known, setup: &Setup, turn: u32) -> Command {
    let players = setup.settings.players;
    let player = PlayerId(match b.below(16) {
        0 => players + 1,
        1 => u8::MAX,
        k => (k % (u32::from(players) + 1)) as u8,
    });
    let turn = match b.below(32) {
        0 => turn.wrapping_sub(1),
        1 => turn + 1,
        2 => u32::MAX,
        _ => turn,
    };
    Command { turn, player, seq: u32::from(b.u8()), kind: command_kind(b, known, setup) }
}

/// One turn's outcome, as compared between runs.
type TurnOutcome = (Vec<Event>, [u8; 32]);

fn new_world(setup: &Setup, threads: usize) -> Option<World> {
    let mut world = World::with_rules(setup.desc.clone(), setup.obstructions.clone(), setup.settings, FuzzRules).ok()?;
    world.set_threads(threads).expect("a two-thread pool starts");
    Some(world)
}

/// Checks what every turn of every run must satisfy.
fn check_turn(world: &World, report: &sim::TurnReport, commands: &[Command], players: u8) {
    let turn = report.turn;
    world.check_invariants().unwrap_or_else(|e| panic!("turn {turn}: {e}"));
    assert!(report.digest == world.state_digest_from_scratch(), "turn {turn}: the incremental digest differs from a recomputation");
    for c in commands {
        let expected = if c.turn != turn {
            RejectReason::WrongTurn
        } else if c.player.0 > players {
            RejectReason::UnknownPlayer
        } else {
            continue;
        };
        let event = Event::Rejected { command: c.order_key(), reason: expected };
        assert!(report.events.contains(&event), "turn {turn}: {c:?} was not rejected as expected: {:?}", report.events);
    }
}

/// The first run of an input: the world it describes, the commands decoded while stepping it on
/// one thread (checked every turn), each turn's outcome, and the snapshot saved before turn
/// `save_at` (if the run got that far).
struct FirstRun {
    setup: Setup,
    save_at: u32,
    turns: Vec<Vec<Command>>,
    outcomes: Vec<TurnOutcome>,
    saved: Option<Vec<u8>>,
}

/// Decodes and plays an input on one thread, checking every turn; `None` when the header
/// describes no world.
fn first_run(data: &[u8]) -> Option<FirstRun> {
    let mut b = Bytes::new(data);
    let setup = decode_setup(&mut b)?;
    let save_at = b.below(MAX_TURNS);
    let mut world = new_world(&setup, 1)?;
    let mut known = Known { obstructions: setup.obstructions.iter().map(|o| o.0).collect(), ..Known::default() };
    let mut used_obstruction_ids: std::collections::BTreeSet<ObstructionId> = known.obstructions.iter().copied().collect();
    let mut turns: Vec<Vec<Command>> = Vec::new();
    let mut outcomes: Vec<TurnOutcome> = Vec::new();
    let mut saved: Option<Vec<u8>> = None;
    for turn in 0..MAX_TURNS {
        if b.is_empty() {
            break;
        }
        if turn == save_at {
            saved = Some(world.save());
        }
        let commands: Vec<Command> = (0..b.below(MAX_COMMANDS + 1)).map(|_| command(&mut b, &known, &setup, turn)).collect();
        let report = world.step(&commands);
        check_turn(&world, &report, &commands, setup.settings.players);
        for event in &report.events {
            match *event {
                Event::Spawned { unit } | Event::SpawnedFromQueue { unit, .. } => known.units.push(unit),
                Event::FormationCreated { formation } => known.formations.push(formation),
                Event::ObstructionPlaced { id } => {
                    // Ids are never `u32::MAX` and never handed out twice (`PlaceBuilding` once
                    // skipped the exhaustion check: regression test
                    // `place_building_refuses_the_exhausted_obstruction_id`).
                    assert_ne!(id, ObstructionId(u32::MAX), "turn {turn}: obstruction id u32::MAX handed out ({commands:?})");
                    assert!(used_obstruction_ids.insert(id), "turn {turn}: obstruction id {id} handed out twice");
                    known.obstructions.push(id);
                }
                _ => {}
            }
        }
        turns.push(commands);
        outcomes.push((report.events, report.hash));
    }
    Some(FirstRun { setup, save_at, turns, outcomes, saved })
}

/// Replays a saved world from turn `save_at` on and checks it reaches the first run's outcomes.
fn check_loaded(run: &FirstRun) {
    let Some(bytes) = &run.saved else { return };
    let at = run.save_at as usize;
    let mut loaded = World::load_with_rules(bytes, FuzzRules).unwrap_or_else(|e| panic!("a saved world loads: {e}"));
    let before = if at == 0 { new_world(&run.setup, 1).expect("made once").state_hash() } else { run.outcomes[at - 1].1 };
    assert!(loaded.state_hash() == before, "the loaded world's hash differs from the saved world's");
    for (turn, (commands, expected)) in run.turns.iter().zip(&run.outcomes).enumerate().skip(at) {
        let report = loaded.step(commands);
        assert!(report.events == expected.0, "turn {turn}: events differ after save and load before turn {at}");
        assert!(report.hash == expected.1, "turn {turn}: hash differs after save and load before turn {at}");
    }
}

/// What an input gives on this machine, one thread only (so it runs where threads do not exist,
/// as on wasm32): each turn's state hash and a blake3 digest of its events (their `Debug` text,
/// which holds only explicit-width integers and names), after the checks of the body's first and
/// saved-and-loaded runs. Two machines that disagree on any line disagree on the simulation
/// (`phalanx-cross corpus`, run by `scripts/cross-check`).
pub fn command_stream_turns(data: &[u8]) -> Vec<([u8; 32], [u8; 32])> {
    let Some(run) = first_run(data) else { return Vec::new() };
    check_loaded(&run);
    run.outcomes.iter().map(|(events, hash)| (*hash, *blake3::hash(format!("{events:?}").as_bytes()).as_bytes())).collect()
}

/// The body: see the module documentation.
pub fn command_stream(data: &[u8]) {
    let Some(run) = first_run(data) else { return };
    let FirstRun { setup, turns, outcomes, .. } = &run;
    // The same commands on two threads.
    let mut two = new_world(setup, 2).expect("the world was made once");
    for (turn, (commands, expected)) in turns.iter().zip(outcomes).enumerate() {
        let report = two.step(commands);
        assert!(report.events == expected.0, "turn {turn}: events differ with two threads");
        assert!(report.hash == expected.1, "turn {turn}: hash differs with two threads");
    }

    // Saved before turn `save_at`, loaded, and continued.
    check_loaded(&run);
}
