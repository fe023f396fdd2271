//! The simulation core end to end: determinism (two runs, thread counts), a golden hash sequence,
//! arrivals, rejections, and random command streams that must never panic.

use pathing::refworld::{RefWorldParams, generate};
use pathing::{Fixed, PassClass, WorldPos};
use proptest::prelude::*;
use sim::{Command, CommandKind, EntityId, Event, GoalSpec, PlayerId, RejectReason, Settings, SquareSpec, Target, World, state_hash};

/// A 256 × 256 navcell world (64 tiles) with its buildings and trees.
fn world(threads: usize) -> World {
    let (desc, obstructions) = generate(&RefWorldParams::scaled(64, 7));
    let mut w = World::new(desc, obstructions, Settings { seed: 11, ..Settings::default() }).unwrap();
    w.set_threads(threads).unwrap();
    w
}

fn cmd(turn: u32, player: u8, seq: u32, kind: CommandKind) -> Command {
    Command { turn, player: PlayerId(player), seq, kind }
}

fn at(x: i32, z: i32) -> WorldPos {
    WorldPos::from_int(x, z)
}

/// The scripted scenario: two players spawn 24 units each on opposite sides and send each unit
/// across to its own point, a building goes down in the middle of their way; later a player stops a
/// third of his and re-orders two of those (square and circle goals, one with a queued order), and
/// sends a third to keep 4 to 8 m from one of player 2's units. Player 1's units all go to one
/// point (they crowd round it); player 2's each to its own point of a block.
fn script(turn: u32, units: &[EntityId]) -> Vec<Command> {
    let m = |n: i32| Fixed::from_num(n);
    match turn {
        0 => vec![
            cmd(
                0,
                1,
                0,
                CommandKind::Spawn { class: PassClass::of(0), at: at(40, 60), count: 24, radius: m(1) / 2, speed: m(15), turn_rate: None },
            ),
            cmd(
                0,
                2,
                0,
                CommandKind::Spawn {
                    class: PassClass::of(1),
                    at: at(210, 190),
                    count: 24,
                    radius: m(3) / 2,
                    speed: m(12),
                    turn_rate: None,
                },
            ),
        ],
        1 => (0..48usize)
            .map(|n| {
                let (player, base) = if n < 24 { (1, at(170, 200)) } else { (2, at(30, 40)) };
                let k = (n % 24) as i32;
                let goal = if player == 1 { base } else { WorldPos::new(base.x + m(5 * (k % 6)), base.z + m(5 * (k / 6))) };
                cmd(1, player, 1 + n as u32, CommandKind::Move { units: vec![units[n]], goal: GoalSpec::Point(goal), queue: false })
            })
            .collect(),
        6 => vec![cmd(
            6,
            0,
            0,
            CommandKind::PlaceObstruction { square: SquareSpec { x: m(128), z: m(128), w: m(30), h: m(12), degrees: m(45) }, flags: 3 },
        )],
        120 => vec![cmd(120, 1, 200, CommandKind::Stop { units: units[..8].to_vec() })],
        121 => vec![
            cmd(
                121,
                1,
                100,
                CommandKind::Move { units: units[..1].to_vec(), goal: GoalSpec::Square { center: at(60, 200), half: m(6) }, queue: false },
            ),
            cmd(
                121,
                1,
                101,
                CommandKind::Move {
                    units: units[1..2].to_vec(),
                    goal: GoalSpec::Circle { center: at(90, 220), radius: m(4) },
                    queue: false,
                },
            ),
            cmd(121, 1, 102, CommandKind::Move { units: units[1..2].to_vec(), goal: GoalSpec::Point(at(20, 20)), queue: true }),
            cmd(
                121,
                1,
                103,
                CommandKind::Move {
                    units: units[2..3].to_vec(),
                    goal: GoalSpec::Range { target: Target::Unit(units[30]), min: m(4), max: m(8), kind: sim::RangeKind::Melee },
                    queue: false,
                },
            ),
        ],
        _ => Vec::new(),
    }
}

/// Runs the script for `turns` turns; returns the per-turn hashes and every event.
fn run(threads: usize, turns: u32) -> (Vec<[u8; 32]>, Vec<Event>) {
    run_world(world(threads), turns)
}

/// [`run`] on a given world.
fn run_world(mut w: World, turns: u32) -> (Vec<[u8; 32]>, Vec<Event>) {
    let mut units = Vec::new();
    let mut hashes = Vec::new();
    let mut events = Vec::new();
    for turn in 0..turns {
        let report = w.step(&script(turn, &units));
        for e in &report.events {
            if let Event::Spawned { unit } = e {
                units.push(*unit);
            }
        }
        w.check_invariants().unwrap_or_else(|e| panic!("turn {turn}: {e}"));
        assert_eq!(report.digest, w.state_digest_from_scratch(), "turn {turn}: incremental digests differ from a recomputation");
        hashes.push(report.hash);
        events.extend(report.events);
    }
    (hashes, events)
}

/// The state digest is current whenever the world is at rest, so it is read through `&self`: after
/// `new`, after each turn, after a load and after a change made outside a turn (a waypoint net), it
/// equals the from-scratch recomputation, and a loaded world reports the same leaves as its original.
#[test]
fn the_state_digest_is_current_and_read_through_a_shared_reference() {
    let check = |w: &World, when: &str| {
        assert_eq!(w.state_digest(), w.state_digest_from_scratch(), "{when}: the digest is stale");
        assert_eq!(w.state_hash(), w.state_digest().hash, "{when}");
    };
    let mut w = world(1);
    check(&w, "after new");
    let mut units = Vec::new();
    for turn in 0..6 {
        let report = w.step(&script(turn, &units));
        units.extend(report.events.iter().filter_map(|e| if let Event::Spawned { unit } = e { Some(*unit) } else { None }));
        assert_eq!(report.hash, w.state_hash(), "turn {turn}");
        check(&w, &format!("after turn {turn}"));
    }
    let loaded = World::load(&w.save()).unwrap();
    check(&loaded, "after a load");
    assert_eq!((loaded.state_hash(), loaded.digest_reports()), (w.state_hash(), w.digest_reports()));
    let before = w.state_hash();
    let net = sim::waypoint::WaypointNet { class: PassClass::of(0), range: 24, points: vec![at(40, 60), at(60, 60)] };
    w.set_waypoints(net).unwrap();
    check(&w, "after a waypoint net set outside a turn");
    assert_ne!(w.state_hash(), before, "a new waypoint net is state");
}

#[test]
fn two_runs_and_any_thread_count_give_the_same_hashes() {
    let (one, events) = run(1, 240);
    assert_eq!(run(1, 240).0, one, "two runs differ");
    assert_eq!(run(2, 240).0, one, "2 threads differ from 1");
    assert_eq!(run(8, 240).0, one, "8 threads differ from 1");
    // The scenario does things: units spawn, arrive, and one building is placed.
    assert_eq!(events.iter().filter(|e| matches!(e, Event::Spawned { .. })).count(), 48);
    assert_eq!(events.iter().filter(|e| matches!(e, Event::ObstructionPlaced { .. })).count(), 1);
    let arrived = events.iter().filter(|e| matches!(e, Event::Arrived { .. })).count();
    let failed = events.iter().filter(|e| matches!(e, Event::Failed { .. })).count();
    let detours = events.iter().filter(|e| matches!(e, Event::Detour { .. })).count();
    assert!(arrived >= 48, "only {arrived} arrivals in 240 turns ({failed} failures)");
    assert_eq!(failed, 0, "every unit finds its way round the others");
    assert!(detours > 0, "crowding at one point takes short-range detours");
    assert!(!events.iter().any(|e| matches!(e, Event::Rejected { .. })), "the script is valid: {events:?}");
}

/// A world computing its paths on a pool the caller owns (3 threads, also lent to a second world
/// that steps on it turn by turn in between) gives the hashes of one thread.
#[test]
fn a_callers_thread_pool_gives_the_one_thread_hashes() {
    let pool = std::sync::Arc::new(rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap());
    let (one, _) = run(1, 120);
    let mut lent = world(1);
    lent.set_pool(pool.clone());
    let mut other = world(1);
    other.set_pool(pool);
    let (mut hashes, mut units, mut other_units) = (Vec::new(), Vec::new(), Vec::new());
    for turn in 0..120 {
        for (w, units, hashes) in [(&mut lent, &mut units, Some(&mut hashes)), (&mut other, &mut other_units, None)] {
            let report = w.step(&script(turn, units));
            units.extend(report.events.iter().filter_map(|e| if let Event::Spawned { unit } = e { Some(*unit) } else { None }));
            if let Some(hashes) = hashes {
                hashes.push(report.hash);
            }
        }
    }
    assert_eq!(hashes, one, "a 3-thread pool of the caller's differs from 1 thread");
    assert_eq!(other.state_hash(), lent.state_hash(), "two worlds sharing a pool");
}

#[test]
fn the_hash_sequence_is_pinned() {
    let (hashes, _) = run(1, 40);
    let text: String = hashes.iter().enumerate().map(|(t, h)| format!("{t}\t{}\n", state_hash::hex(h))).collect();
    insta::assert_snapshot!("scripted_scenario_hashes", text);
}

#[test]
fn invalid_commands_are_rejected_and_change_nothing() {
    let mut w = world(1);
    let r = w.step(&[cmd(
        0,
        1,
        0,
        CommandKind::Spawn { class: PassClass::of(0), at: at(40, 60), count: 2, radius: Fixed::ONE, speed: Fixed::ONE, turn_rate: None },
    )]);
    let mine: Vec<EntityId> = r.events.iter().filter_map(|e| if let Event::Spawned { unit } = e { Some(*unit) } else { None }).collect();
    assert_eq!(mine.len(), 2);
    let before = w.state_hash();
    let ghost = EntityId { index: 99, generation: 0 };
    let bad = [
        (cmd(5, 1, 0, CommandKind::Stop { units: mine.clone() }), RejectReason::WrongTurn),
        (cmd(1, 9, 0, CommandKind::Stop { units: mine.clone() }), RejectReason::UnknownPlayer),
        (cmd(1, 2, 1, CommandKind::Stop { units: mine.clone() }), RejectReason::NotOwned(mine[0])),
        (cmd(1, 1, 2, CommandKind::Stop { units: vec![mine[0], ghost] }), RejectReason::UnknownEntity(ghost)),
        (
            cmd(
                1,
                1,
                3,
                CommandKind::Spawn {
                    class: PassClass::of(4),
                    at: at(40, 60),
                    count: 1,
                    radius: Fixed::ONE,
                    speed: Fixed::ONE,
                    turn_rate: None,
                },
            ),
            RejectReason::BadClass,
        ),
        (
            cmd(
                1,
                1,
                4,
                CommandKind::Spawn {
                    class: PassClass::of(0),
                    at: at(40, 60),
                    count: 0,
                    radius: Fixed::ONE,
                    speed: Fixed::ONE,
                    turn_rate: None,
                },
            ),
            RejectReason::OutOfRange,
        ),
        (
            cmd(1, 1, 5, CommandKind::RemoveObstruction { id: pathing::ObstructionId(123_456) }),
            RejectReason::UnknownObstruction(pathing::ObstructionId(123456)),
        ),
        (
            cmd(1, 1, 6, CommandKind::SetArea { name: "gate".into(), available: true }),
            RejectReason::World(sim::WorldRefusal::UnknownArea("gate".into())),
        ),
        (cmd(1, 1, 7, CommandKind::EditTerrain { vx: 0, vz: 0, width: 0, heights: vec![] }), RejectReason::OutOfRange),
        (cmd(1, 2, 2, CommandKind::Remove { units: vec![mine[1]] }), RejectReason::NotOwned(mine[1])),
    ];
    let commands: Vec<Command> = bad.iter().map(|(c, _)| c.clone()).collect();
    let report = w.step(&commands);
    let rejected: Vec<(u32, PlayerId, u32, RejectReason)> = report
        .events
        .iter()
        .filter_map(|e| {
            if let Event::Rejected { command, reason } = e { Some((command.0, command.1, command.2, reason.clone())) } else { None }
        })
        .collect();
    let mut want: Vec<(u32, PlayerId, u32, RejectReason)> = bad.iter().map(|(c, r)| (c.turn, c.player, c.seq, r.clone())).collect();
    want.sort_by_key(|w| (w.0, w.1, w.2));
    assert_eq!(rejected, want);
    // Nothing changed but the turn counter: the same world stepped with no commands hashes alike.
    let mut twin = world(1);
    twin.step(&[cmd(
        0,
        1,
        0,
        CommandKind::Spawn { class: PassClass::of(0), at: at(40, 60), count: 2, radius: Fixed::ONE, speed: Fixed::ONE, turn_rate: None },
    )]);
    assert_eq!(twin.state_hash(), before);
    twin.step(&[]);
    assert_eq!(twin.state_hash(), w.state_hash());
}

fn arb_command(turn: u32) -> impl Strategy<Value = Command> {
    let pos = (-20..300i32, -20..300i32).prop_map(|(x, z)| at(x, z));
    let ids = proptest::collection::vec((0..40u32, 0..3u32).prop_map(|(index, generation)| EntityId { index, generation }), 0..6);
    let kind = prop_oneof![
        (0..9u8, pos.clone(), 0..40u16, 0..5i32, 0..20i32).prop_map(|(class, at, count, r, s)| CommandKind::Spawn {
            class: PassClass::of(class),
            at,
            count,
            radius: Fixed::from_num(r) / 2,
            speed: Fixed::from_num(s),
            turn_rate: None,
        }),
        (ids.clone(), pos.clone(), any::<bool>(), 0..3u8).prop_map(|(units, p, queue, k)| CommandKind::Move {
            units,
            goal: match k {
                0 => GoalSpec::Point(p),
                1 => GoalSpec::Circle { center: p, radius: Fixed::from_num(5) },
                _ => GoalSpec::Square { center: p, half: Fixed::from_num(3) },
            },
            queue
        }),
        ids.clone().prop_map(|units| CommandKind::Stop { units }),
        ids.prop_map(|units| CommandKind::Remove { units }),
        (pos, 0..40i32, 0..40i32, -400..400i32, 0..5u8).prop_map(|(p, w, h, d, flags)| CommandKind::PlaceObstruction {
            square: SquareSpec { x: p.x, z: p.z, w: Fixed::from_num(w), h: Fixed::from_num(h), degrees: Fixed::from_num(d) },
            flags
        }),
        (0..1200u32).prop_map(|id| CommandKind::RemoveObstruction { id: pathing::ObstructionId(id) }),
        (0..1200u32, 0..4u8).prop_map(|(id, flags)| CommandKind::SetObstructionFlags { id: pathing::ObstructionId(id), flags }),
        (0..9u8, 0..300i32, 0..300i32, 0..30i32, 0..30i32, proptest::option::of((0..40u32, 0..2u32))).prop_map(|(class, x, z, w, h, b)| {
            CommandKind::PlaceBuilding {
                class: PassClass::of(class),
                square: SquareSpec {
                    x: Fixed::from_num(x),
                    z: Fixed::from_num(z),
                    w: Fixed::from_num(w),
                    h: Fixed::from_num(h),
                    degrees: Fixed::from_num(x % 90),
                },
                builder: b.map(|(index, generation)| EntityId { index, generation }),
            }
        }),
        (0..80u32, 0..80u32, 1..4u32, proptest::collection::vec(-5..40i32, 0..9)).prop_map(|(vx, vz, width, hs)| {
            CommandKind::EditTerrain { vx, vz, width, heights: hs.into_iter().map(Fixed::from_num).collect() }
        }),
    ];
    (turn.saturating_sub(1)..turn + 2, 0..4u8, 0..8u32, kind).prop_map(|(turn, player, seq, kind)| Command {
        turn,
        player: PlayerId(player),
        seq,
        kind,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Random command streams, including invalid and late ones, never panic, keep the invariants,
    /// and replay to the same hashes.
    #[test]
    fn random_command_streams_never_panic(turns in proptest::collection::vec(proptest::collection::vec(arb_command(0), 0..5), 1..12)) {
        let play = || {
            let mut w = world(1);
            let mut hashes = Vec::new();
            for (t, commands) in turns.iter().enumerate() {
                let commands: Vec<Command> = commands.iter().cloned().map(|mut c| { c.turn = (c.turn + t as u32).saturating_sub(1); c }).collect();
                let report = w.step(&commands);
                w.check_invariants().unwrap();
                assert_eq!(report.digest, w.state_digest_from_scratch());
                hashes.push(report.hash);
            }
            hashes
        };
        prop_assert_eq!(play(), play());
    }
}

#[test]
fn a_divergence_is_located_to_its_component_and_entity_range() {
    let mut a = world(1);
    let mut b = world(1);
    let spawn = |n| {
        cmd(
            0,
            1,
            n,
            CommandKind::Spawn {
                class: PassClass::of(0),
                at: at(40 + 30 * n as i32, 60),
                count: 100,
                radius: Fixed::ONE / 2,
                speed: Fixed::ONE,
                turn_rate: None,
            },
        )
    };
    let commands = [spawn(0), spawn(1)];
    a.step(&commands);
    b.step(&commands);
    assert_eq!(a.state_hash(), b.state_hash());
    // Peer b's unit 150 takes a slightly different step: the kind of bug a desync is.
    let odd = b.units().nth(150).unwrap().id;
    let mv =
        |w: &mut World, x| w.step(&[cmd(1, 1, 0, CommandKind::Move { units: vec![odd], goal: GoalSpec::Point(at(x, 120)), queue: false })]);
    let (ra, rb) = (mv(&mut a, 100), mv(&mut b, 101));
    assert_ne!(ra.hash, rb.hash);
    assert_eq!(ra.digest.differing_components(&rb.digest), vec!["units".to_string()]);
    let located = sim::digest_tree::locate_reports(&a.digest_reports(), &b.digest_reports());
    assert_eq!(located.len(), 1);
    assert_eq!(located[0].component, "units");
    assert_eq!(located[0].leaves, vec![odd.index / 64], "the range of 64 entity indices holding unit {}", odd.index);
}

/// Save at turn `t`, load, and continue: the hashes are those of the run that never stopped, for
/// every `t` (a serialization test mode).
#[test]
fn save_load_continue_gives_the_uninterrupted_hashes_at_every_turn() {
    const TURNS: u32 = 40;
    let (reference, _) = run(1, TURNS);
    let mut w = world(1);
    let mut units = Vec::new();
    for turn in 0..TURNS {
        let bytes = w.save();
        let mut loaded = World::load(&bytes).unwrap_or_else(|e| panic!("turn {turn}: {e}"));
        assert_eq!(loaded.save(), bytes, "turn {turn}: save → load → save changed the bytes");
        assert_eq!(loaded.state_hash(), w.state_hash(), "turn {turn}: the loaded world hashes differently");
        // Continue the loaded copy for a few turns alongside the original.
        let mut copy_units = units.clone();
        for ahead in turn..(turn + 3).min(TURNS) {
            let r = loaded.step(&script(ahead, &copy_units));
            for e in &r.events {
                if let Event::Spawned { unit } = e {
                    copy_units.push(*unit);
                }
            }
            assert_eq!(r.hash, reference[ahead as usize], "loaded at turn {turn}, diverged at turn {ahead}");
        }
        let report = w.step(&script(turn, &units));
        for e in &report.events {
            if let Event::Spawned { unit } = e {
                units.push(*unit);
            }
        }
    }
}

#[test]
fn damaged_snapshots_give_errors_never_panics() {
    use sim::snapshot::SnapshotError;
    let mut w = world(1);
    w.step(&script(0, &[]));
    let bytes = w.save();
    assert!(matches!(World::load(&[]), Err(SnapshotError::Truncated { .. })));
    assert_eq!(World::load(&[b'X'; 64]).err(), Some(SnapshotError::BadMagic));
    let mut v = bytes.clone();
    let other = sim::snapshot::SNAPSHOT_VERSION + 1;
    v[8..12].copy_from_slice(&other.to_le_bytes());
    assert_eq!(World::load(&v).err(), Some(SnapshotError::UnsupportedVersion { found: other }));
    let mut v = bytes.clone();
    v[19] = 0x7f;
    assert!(matches!(World::load(&v), Err(SnapshotError::TooLarge { .. })));
    let mut v = bytes.clone();
    v.push(0);
    assert!(matches!(World::load(&v), Err(SnapshotError::TrailingBytes { .. })));
    // Every truncation and a flipped bit at every 97th byte: an error, never a panic.
    for cut in (0..bytes.len()).step_by(37) {
        assert!(World::load(&bytes[..cut]).is_err(), "truncated at {cut}");
    }
    for at in (0..bytes.len()).step_by(97) {
        let mut v = bytes.clone();
        v[at] ^= 0x10;
        assert!(World::load(&v).is_err(), "bit flipped at {at}");
    }
    // A payload that checksums but does not decode, and one that decodes to refused values.
    let reframe = |payload: &[u8]| {
        let mut out = bytes[..12].to_vec();
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(payload);
        out.extend_from_slice(blake3::hash(payload).as_bytes());
        out
    };
    assert!(matches!(World::load(&reframe(&[0xff; 40])), Err(SnapshotError::Decode { .. })));
    let mut data = sim::snapshot::unframe(&bytes).unwrap();
    data.terrain.3.pop();
    let bad = reframe(&sim::state_hash::encode(&data));
    assert!(matches!(World::load(&bad), Err(SnapshotError::Invalid { .. })), "{:?}", World::load(&bad).err());
}

proptest! {
    /// Arbitrary bytes behind a valid header and checksum never panic the loader.
    #[test]
    fn arbitrary_payloads_never_panic(payload in proptest::collection::vec(any::<u8>(), 0..512)) {
        let mut bytes = sim::snapshot::MAGIC.to_vec();
        bytes.extend_from_slice(&sim::snapshot::SNAPSHOT_VERSION.to_le_bytes());
        bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&payload);
        bytes.extend_from_slice(blake3::hash(&payload).as_bytes());
        prop_assert!(World::load(&bytes).is_err());
    }
}

/// The map of the painted fuzz seed: ground, water, trees and out-of-bounds cells.
const PAINTED_SEED_MAP: &str = "type octile\nheight 8\nwidth 12\nmap\n............\n..T....WWW..\n.......WWW..\n..@@...WWW..\n.......WWWW.\n..T.....WW..\n............\n.....O......\n";

/// Writes the snapshot fuzz seeds (a small world at a few turns, and a small painted world made
/// from a Moving AI map with water) when PHALANX_WRITE_FUZZ_SEEDS is set; otherwise checks that the
/// committed seeds still load (the format has not drifted) and that the painted one is painted.
#[test]
fn snapshot_fuzz_seeds_load() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/snapshot");
    if std::env::var("PHALANX_WRITE_FUZZ_SEEDS").is_ok() {
        let (desc, obstructions) = generate(&RefWorldParams { tiles: 16, seed: 3, buildings: 2, trees: 6, circular: true });
        let mut w = World::new(desc, obstructions, Settings::default()).unwrap();
        let mut units = Vec::new();
        for turn in 0..6 {
            let commands = match turn {
                0 => vec![cmd(
                    0,
                    1,
                    0,
                    CommandKind::Spawn {
                        class: PassClass::of(0),
                        at: at(30, 30),
                        count: 3,
                        radius: Fixed::ONE / 2,
                        speed: Fixed::from_num(5),
                        turn_rate: None,
                    },
                )],
                1 => vec![cmd(1, 1, 0, CommandKind::Move { units: units.clone(), goal: GoalSpec::Point(at(40, 35)), queue: false })],
                _ => Vec::new(),
            };
            for e in w.step(&commands).events {
                if let Event::Spawned { unit } = e {
                    units.push(unit);
                }
            }
            std::fs::write(dir.join(format!("turn{turn}.bin")), w.save()).unwrap();
        }
        let map = pathing::movingai::parse_map(PAINTED_SEED_MAP).unwrap();
        let desc = pathing::passability::WorldDesc::from_cells(
            12,
            8,
            Fixed::ONE,
            map.cell_kinds(),
            pathing::classes::ClassSet::zero_ad_defaults(),
        )
        .unwrap();
        let mut w = World::new(desc, Vec::new(), Settings::default()).unwrap();
        w.step(&[cmd(
            0,
            1,
            0,
            CommandKind::Spawn {
                class: PassClass::of(0),
                at: at(2, 2),
                count: 2,
                radius: Fixed::ONE / 2,
                speed: Fixed::from_num(5),
                turn_rate: None,
            },
        )]);
        std::fs::write(dir.join("painted0.bin"), w.save()).unwrap();
    }
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let painted = name.starts_with("painted");
        if name.starts_with("turn") || painted {
            let w = World::load(&std::fs::read(&path).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(w.nav().desc().cells.is_empty(), !painted, "{}: painted layer", path.display());
            n += 1;
        }
    }
    assert!(n >= 7, "the snapshot fuzz seeds are missing");
}

#[test]
fn buildings_disperse_the_units_in_their_way_and_gates_open() {
    let mut w = world(1);
    let m = |n: i32| Fixed::from_num(n);
    let land = PassClass::of(4); // building-land
    // The first spot on a stride where the footprint is valid.
    let land_class = land;
    let (cx, cz) = (20..230)
        .step_by(10)
        .flat_map(|z| (20..230).step_by(10).map(move |x| (x, z)))
        .find(|&(x, z)| {
            let sq = pathing::raster::editor_square(m(x), m(z), m(8), m(6), m(10)).unwrap();
            w.nav().check_building_placement(land_class, &sq).is_ok()
        })
        .expect("some spot allows a building");
    let r = w.step(&[cmd(
        0,
        1,
        0,
        CommandKind::Spawn {
            class: PassClass::of(0),
            at: at(cx, cz),
            count: 12,
            radius: Fixed::ONE / 2,
            speed: Fixed::from_num(6),
            turn_rate: None,
        },
    )]);
    let units: Vec<EntityId> = r.events.iter().filter_map(|e| if let Event::Spawned { unit } = e { Some(*unit) } else { None }).collect();
    assert_eq!(units.len(), 12);
    let house = SquareSpec { x: m(cx), z: m(cz), w: m(8), h: m(6), degrees: m(10) };
    // (A builder standing where the building would block it walks to build range:
    // tests/tests/ranges.rs.) With a builder beside it, the units in the way are dispersed.
    let r = w.step(&[cmd(
        1,
        1,
        0,
        CommandKind::Spawn {
            class: PassClass::of(0),
            at: at(cx + 14, cz),
            count: 1,
            radius: Fixed::ONE / 2,
            speed: Fixed::from_num(6),
            turn_rate: None,
        },
    )]);
    let Event::Spawned { unit: builder } = r.events[0] else { panic!("{:?}", r.events) };
    let r = w.step(&[cmd(2, 1, 0, CommandKind::PlaceBuilding { class: land, square: house, builder: Some(builder) })]);
    let dispersed: Vec<EntityId> =
        r.events.iter().filter_map(|e| if let Event::Dispersed { unit } = e { Some(*unit) } else { None }).collect();
    assert!(dispersed.len() >= 6, "the units around the spawn point are in the way: {:?}", r.events);
    assert!(!dispersed.contains(&builder), "the builder never moves");
    // A second building on top of the first is refused.
    let r = w.step(&[cmd(3, 1, 0, CommandKind::PlaceBuilding { class: land, square: house, builder: None })]);
    assert!(
        matches!(&r.events[0], Event::Rejected { reason: RejectReason::Placement(sim::PlacementRefusal::Blocked(_)), .. }),
        "{:?}",
        r.events
    );
    // After a few turns every dispersed unit stands on a navcell its class may use.
    for turn in 4..25 {
        w.step(&[cmd(turn, 0, 0, CommandKind::Stop { units: vec![] })]);
    }
    let class0 = pathing::PassClass::new(0).unwrap();
    for id in &dispersed {
        let u = w.unit(*id).unwrap();
        assert!(w.nav().grid().is_passable(w.navcell_of(u.pos), class0), "unit {id:?} still on the building at {:?}", u.pos);
    }
    // A gate: an obstruction that stops blocking pathfinding opens the way.
    let id = w.nav().obstructions().keys().copied().max().unwrap();
    let centre = w.navcell_of(at(cx, cz));
    assert!(!w.nav().grid().is_passable(centre, class0));
    w.step(&[cmd(25, 0, 0, CommandKind::SetObstructionFlags { id, flags: 2 })]);
    assert!(w.nav().grid().is_passable(centre, class0), "the open gate no longer blocks units");
    assert!(!w.nav().grid().is_passable(centre, land), "but still blocks foundations");
}

#[test]
fn removed_units_leave_stale_ids_that_are_rejected() {
    let mut w = world(1);
    let r = w.step(&[cmd(
        0,
        1,
        0,
        CommandKind::Spawn {
            class: PassClass::of(0),
            at: at(40, 60),
            count: 3,
            radius: Fixed::ONE / 2,
            speed: Fixed::ONE,
            turn_rate: None,
        },
    )]);
    let units: Vec<EntityId> = r.events.iter().filter_map(|e| if let Event::Spawned { unit } = e { Some(*unit) } else { None }).collect();
    let r = w.step(&[cmd(1, 1, 0, CommandKind::Remove { units: vec![units[1], units[1]] })]);
    assert!(r.events.is_empty(), "{:?}", r.events);
    assert!(w.unit(units[1]).is_none());
    assert_eq!(w.units().count(), 2);
    let r = w.step(&[cmd(2, 1, 0, CommandKind::Stop { units: vec![units[1]] })]);
    assert_eq!(r.events, vec![Event::Rejected { command: (2, PlayerId(1), 0), reason: RejectReason::UnknownEntity(units[1]) }]);
    // The slot is reused with a new generation; the stale id still names nothing.
    let r = w.step(&[cmd(
        3,
        1,
        0,
        CommandKind::Spawn {
            class: PassClass::of(0),
            at: at(40, 60),
            count: 1,
            radius: Fixed::ONE / 2,
            speed: Fixed::ONE,
            turn_rate: None,
        },
    )]);
    let Event::Spawned { unit } = r.events[0] else { panic!("{:?}", r.events) };
    assert_eq!(unit.index, units[1].index);
    assert_ne!(unit, units[1]);
    assert_eq!(r.digest, w.state_digest_from_scratch());
}

#[test]
fn review_cases_same_turn_grid_off_map_goals_id_exhaustion_and_checked_snapshots() {
    let m = |n: i32| Fixed::from_num(n);
    // A building placed earlier in a turn is seen by a spawn later in the same turn.
    let mut w = world(1);
    let r = w.step(&[
        cmd(
            0,
            0,
            0,
            CommandKind::PlaceObstruction { square: SquareSpec { x: m(40), z: m(60), w: m(10), h: m(10), degrees: m(0) }, flags: 3 },
        ),
        cmd(
            0,
            1,
            0,
            CommandKind::Spawn {
                class: PassClass::of(0),
                at: at(40, 60),
                count: 3,
                radius: Fixed::ONE / 2,
                speed: Fixed::ONE,
                turn_rate: None,
            },
        ),
    ]);
    let class0 = pathing::PassClass::new(0).unwrap();
    for u in w.units() {
        assert!(w.nav().grid().is_passable(w.navcell_of(u.pos), class0), "spawned on the new building at {:?}: {:?}", u.pos, r.events);
    }
    assert_eq!(r.digest, w.state_digest_from_scratch());
    // Goals off the map are refused.
    let id = w.units().next().unwrap().id;
    let r = w.step(&[cmd(1, 1, 0, CommandKind::Move { units: vec![id], goal: GoalSpec::Point(at(5000, 5000)), queue: false })]);
    assert_eq!(r.events, vec![Event::Rejected { command: (1, PlayerId(1), 0), reason: RejectReason::NoRoom }]);
    // Obstruction ids: an initial id of u32::MAX leaves none to hand out, and says so.
    let (desc, _) = generate(&RefWorldParams::scaled(16, 2));
    let sq = pathing::raster::editor_square(m(20), m(20), m(2), m(2), m(0)).unwrap();
    let last = (
        pathing::ObstructionId(u32::MAX),
        pathing::passability::Obstruction { square: sq, flags: pathing::passability::ObstructionFlags::STATIC },
    );
    let mut full = World::new(desc, vec![last], Settings::default()).unwrap();
    let r = full.step(&[cmd(
        0,
        0,
        0,
        CommandKind::PlaceObstruction { square: SquareSpec { x: m(40), z: m(40), w: m(2), h: m(2), degrees: m(0) }, flags: 3 },
    )]);
    assert_eq!(
        r.events,
        vec![Event::Rejected { command: (0, PlayerId(0), 0), reason: RejectReason::IdsExhausted(sim::IdKind::Obstruction) }]
    );
    // Snapshots whose units or ids break the rules are refused.
    let bytes = w.save();
    let data = sim::snapshot::unframe(&bytes).unwrap();
    let reframe = |d: &sim::snapshot::SnapshotData| {
        let payload = sim::state_hash::encode(d);
        let mut out = bytes[..12].to_vec();
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&payload);
        out.extend_from_slice(blake3::hash(&payload).as_bytes());
        out
    };
    let mut bad = data.clone();
    bad.units[0].radius = Fixed::MAX;
    assert!(matches!(World::load(&reframe(&bad)), Err(sim::snapshot::SnapshotError::Invalid { .. })));
    let mut bad = data.clone();
    bad.units[0].owner = PlayerId(200);
    assert!(matches!(World::load(&reframe(&bad)), Err(sim::snapshot::SnapshotError::Invalid { .. })));
    let mut bad = data.clone();
    bad.units.push(bad.units[0].clone());
    assert!(matches!(World::load(&reframe(&bad)), Err(sim::snapshot::SnapshotError::Invalid { .. })));
    let mut bad = data;
    bad.grid.0 = 1 << 15;
    bad.grid.1 = 1 << 15;
    assert!(matches!(World::load(&reframe(&bad)), Err(sim::snapshot::SnapshotError::Invalid { .. })));
}

/// A world that could be saved but not loaded again is refused when it is made: a grid over
/// `MAX_GRID_CELLS`, or jump or landmark tables over their limits; at the limits it is accepted.
#[test]
fn worlds_a_snapshot_could_not_hold_are_refused_up_front() {
    use pathing::classes::ClassSet;
    use pathing::passability::WorldDesc;
    use pathing::terrain::CellKind;
    use sim::SetupError;
    let painted = |w: u32, h: u32| {
        WorldDesc::from_cells(w, h, Fixed::ONE, vec![CellKind::Blocked; (w * h) as usize], ClassSet::zero_ad_defaults()).unwrap()
    };
    let refused = |desc: WorldDesc, what: &str| match World::new(desc, Vec::new(), Settings::default()) {
        Err(SetupError::Limits(e)) => assert!(e.starts_with(what), "{e}"),
        Err(e) => panic!("expected a limit error on {what}, found {e}"),
        Ok(_) => panic!("expected a limit error on {what}"),
    };
    refused(painted(2049, 2048), "grid: 2049x2048 navcells, expected at most 4194304");
    let mut desc = painted(1024, 1024);
    desc.landmark_classes = 0b1_1111; // five classes of 2^20 navcells: over 2^22
    refused(desc, "landmark tables: 5 classes on 1048576 navcells");
    let mut desc = painted(1024, 1024);
    desc.jump_table_classes = 0b1_1111;
    refused(desc, "jump tables: 5 classes on 1048576 navcells");
    // Exactly at the limit: four classes of 2^20 navcells each. An all-blocked map keeps it quick.
    let mut desc = painted(1024, 1024);
    desc.landmark_classes = 0b1111;
    let world = World::new(desc, Vec::new(), Settings::default()).unwrap();
    World::load(&world.save()).unwrap();
}
