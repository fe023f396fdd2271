//! Replays end to end: record, read back, verify, and the reader against damage — a replay cut at
//! every byte offset, bytes flipped all over it — and a planted nondeterminism localised to its
//! component, entity and field.

use std::path::PathBuf;

use replay::format::{End, Record, Replay, ReplayReader};
use replay::record::{RunOptions, run};
use replay::scenario::Scenario;
use replay::verify::{DivergenceKind, Outcome, VerifyOptions, verify};

fn example(name: &str) -> Scenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios").join(name);
    Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// A recorded replay of the skirmish example, with its per-turn hashes.
fn record(turns: u32, keyframe_every: u32) -> (Vec<u8>, Vec<[u8; 32]>) {
    let scenario = example("skirmish.json");
    let mut hashes = Vec::new();
    let options = RunOptions { turns, threads: 1, keyframe_every };
    let (_, out) = run(&scenario, &options, Some(Vec::new()), &mut |_, report| hashes.push(report.hash)).unwrap();
    (out.unwrap(), hashes)
}

fn quiet() {}

#[test]
fn a_recorded_replay_reads_back_and_verifies_identical() {
    let (bytes, hashes) = record(40, 10);
    let replay = Replay::read(&bytes[..]).unwrap();
    assert_eq!(replay.turns.len(), 40);
    assert_eq!(replay.keyframes.iter().map(|k| k.0).collect::<Vec<_>>(), [10, 20, 30, 40]);
    for (t, h) in replay.turns.iter().zip(&hashes) {
        assert_eq!(t.digest(&replay.header.components).hash, *h, "turn {}", t.turn);
    }
    assert_eq!(replay.end, End::Footer(replay::format::Footer { turns: 40, final_hash: hashes[39] }));

    let report = verify(&bytes[..], "skirmish", &VerifyOptions::default(), None, &quiet);
    assert_eq!(report.outcome, Outcome::Identical, "{}", report.to_text());
    assert_eq!((report.turns_verified, report.keyframes_checked, report.complete), (40, 4, true));

    // The same with two path threads, and in sync-test mode (save, load, re-step every turn).
    let threads = VerifyOptions { threads: 2, sync_test: true, ..VerifyOptions::default() };
    let report = verify(&bytes[..], "skirmish", &threads, None, &quiet);
    assert_eq!(report.outcome, Outcome::Identical, "{}", report.to_text());
    assert!(report.sync_test);
}

#[test]
fn recording_is_deterministic_byte_for_byte() {
    assert_eq!(record(25, 5).0, record(25, 5).0);
}

/// The end offset of every record, in order, and the number of turns read up to each.
fn record_ends(bytes: &[u8]) -> (u64, Vec<(u64, usize)>) {
    let mut reader = ReplayReader::new(bytes).unwrap();
    let header_end = reader.offset();
    let mut ends = Vec::new();
    let mut turns = 0;
    while let Some(r) = reader.next_record().unwrap() {
        if let Record::Turn(_) = r {
            turns += 1;
        }
        ends.push((reader.offset(), turns));
    }
    (header_end, ends)
}

#[test]
fn a_replay_cut_at_every_byte_offset_reads_its_whole_turns_or_fails_cleanly() {
    let (bytes, _) = record(12, 4);
    let (header_end, ends) = record_ends(&bytes);
    for cut in 0..bytes.len() {
        let result = Replay::read(&bytes[..cut]);
        if (cut as u64) < header_end {
            let e = result.expect_err("a cut header is an error");
            assert!(e.to_string().contains("header"), "cut at {cut}: {e}");
            continue;
        }
        let replay = result.unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        let expected = ends.iter().rev().find(|(end, _)| *end <= cut as u64).map_or(0, |&(_, turns)| turns);
        assert_eq!(replay.turns.len(), expected, "cut at {cut}");
        let whole = ends.iter().rev().find(|(end, _)| *end <= cut as u64).map_or(header_end, |&(end, _)| end);
        assert_eq!(replay.end, End::Truncated { offset: whole }, "cut at {cut}");
    }
    // A cut file still verifies the turns it has.
    let cut = ends[5].0 as usize + 3;
    let report = verify(&bytes[..cut], "cut", &VerifyOptions::default(), None, &quiet);
    assert_eq!(report.outcome, Outcome::Identical, "{}", report.to_text());
    assert!(!report.complete);
    assert_eq!(report.truncated_at, Some(ends[5].0));
}

#[test]
fn a_flipped_byte_anywhere_is_an_error_naming_its_section_never_a_pass() {
    let (bytes, _) = record(12, 4);
    for at in 0..bytes.len() {
        for bit in [0x01u8, 0x80] {
            let mut damaged = bytes.clone();
            damaged[at] ^= bit;
            let e = Replay::read(&damaged[..]).expect_err("every byte is covered by a check");
            let text = e.to_string();
            assert!(text.contains("offset") || text.contains("incompatible"), "flip at {at}: {text}");
        }
    }
    // Verification of damaged files: unreadable or diverged, never identical, never a panic.
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..64 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let mut damaged = bytes.clone();
        let at = (rng % bytes.len() as u64) as usize;
        damaged[at] = damaged[at].wrapping_add(1 + (rng >> 32) as u8 % 255);
        let report = verify(&damaged[..], "flipped", &VerifyOptions::default(), None, &quiet);
        assert_ne!(report.outcome, Outcome::Identical, "flip at {at}");
    }
}

#[test]
fn a_planted_nondeterminism_is_found_at_its_turn_component_entity_and_field() {
    let (bytes, _) = record(30, 10);
    // The unit to perturb: one that is moving on turn 19.
    let scenario = example("skirmish.json");
    let (world, _) = run(&scenario, &RunOptions { turns: 19, threads: 1, keyframe_every: 0 }, None::<Vec<u8>>, &mut |_, _| {}).unwrap();
    let victim = world.units().find(|u| !u.waypoints().is_empty()).expect("a moving unit on turn 19").id;
    let mut hook = |w: &mut sim::World| {
        if w.turn() == 19 {
            assert!(w.plant_desync(victim));
        }
    };
    let report = verify(&bytes[..], "planted", &VerifyOptions::default(), Some(&mut hook), &quiet);
    assert_eq!(report.outcome, Outcome::Diverged, "{}", report.to_text());
    let d = report.divergence.as_ref().unwrap();
    assert_eq!((d.kind, d.turn), (DivergenceKind::Hash, 19), "{}", report.to_text());
    assert_eq!(d.components, ["units"], "{}", report.to_text());
    assert_eq!(d.state_turn, Some(20));
    let name = format!("{}v{}", victim.index, victim.generation);
    let planted: Vec<_> = d.diffs.iter().filter(|f| f.entity.as_deref().is_some_and(|e| e.ends_with(&name))).collect();
    // The flipped bit of x may be walked off by the end of the turn (the unit steps onto its
    // waypoint), but the unit does not end where it should, and it faces the way it really moved
    // and records how far it really moved.
    assert!(planted.iter().any(|f| f.field.starts_with("pos.")), "{}", report.to_text());
    let moved = |field: &str| ["pos.", "facing.", "displacement."].iter().any(|p| field.starts_with(p));
    assert!(planted.iter().all(|f| f.component == "units" && moved(&f.field)), "{}", report.to_text());
    assert_eq!(report.turns_verified, 19);
    assert!(report.to_text().contains("first diverging turn: 19"), "{}", report.to_text());
}

#[test]
fn verify_reports_in_input_order_and_shards_split_every_file_once() {
    let dir = std::env::temp_dir().join(format!("phalanx-replay-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (bytes, _) = record(8, 4);
    let mut files = Vec::new();
    for k in 0..5 {
        let path = dir.join(format!("r{k}.replay"));
        let mut b = bytes.clone();
        if k == 3 {
            b.truncate(10); // unreadable
        }
        std::fs::write(&path, &b).unwrap();
        files.push(path);
    }
    files.reverse();
    let reports = replay::verify::verify_files(&files, &VerifyOptions::default(), 2, &quiet, &quiet).unwrap();
    let names: Vec<String> = reports.iter().map(|r| r.file.clone()).collect();
    assert_eq!(names, files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>());
    let outcomes: Vec<Outcome> = reports.iter().map(|r| r.outcome).collect();
    assert_eq!(outcomes, [Outcome::Identical, Outcome::Unreadable, Outcome::Identical, Outcome::Identical, Outcome::Identical]);

    let mut seen: Vec<PathBuf> = (1..=3).flat_map(|i| replay::verify::shard(&files, i, 3)).collect();
    seen.sort();
    let mut all = files.clone();
    all.sort();
    assert_eq!(seen, all);
    // The share does not depend on the order the files are given in, and keeps that order.
    let (mut given, sorted) = (replay::verify::shard(&files, 1, 3), replay::verify::shard(&all, 1, 3));
    assert!(given.windows(2).all(|w| w[0] > w[1]), "input order (reversed) kept: {given:?}");
    given.sort();
    assert_eq!(given, sorted);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_keyframe_that_disagrees_with_an_equal_hash_is_reported() {
    // A keyframe whose state differs from the game's while every turn hash is right: the state a
    // hash coverage gap would hide. The byte comparison of keyframes catches it.
    let (bytes, _) = record(12, 4);
    let replay = Replay::read(&bytes[..]).unwrap();
    let mut out = Vec::new();
    let mut writer = replay::format::ReplayWriter::new(&mut out, replay.header.clone()).unwrap();
    let mut world = replay::record::build_world(&example("skirmish.json"), 1).unwrap();
    let mut victim = None;
    for t in &replay.turns {
        if writer.keyframe_due(&world) {
            if world.turn() == 8 {
                let mut copy = sim::World::load(&world.save()).unwrap();
                let unit = copy.units().next().unwrap().id;
                assert!(copy.plant_desync(unit));
                victim = Some(unit);
                writer.keyframe(&copy).unwrap();
            } else {
                writer.keyframe(&world).unwrap();
            }
        }
        let report = world.step(&t.commands);
        writer.turn(&t.commands, &report).unwrap();
    }
    writer.finish().unwrap();
    let report = verify(&out[..], "spliced", &VerifyOptions::default(), None, &quiet);
    assert_eq!(report.outcome, Outcome::Diverged, "{}", report.to_text());
    let d = report.divergence.unwrap();
    assert_eq!((d.kind, d.turn, d.state_turn, d.components.clone()), (DivergenceKind::Keyframe, 7, Some(8), vec!["units".to_owned()]));
    let victim = victim.unwrap();
    let name = format!("{}v{}", victim.index, victim.generation);
    assert!(d.diffs.iter().any(|f| f.field == "pos.x" && f.entity.as_deref().is_some_and(|e| e.ends_with(&name))), "{:?}", d.diffs);
}

#[test]
fn the_replay_layout_is_pinned_to_its_format_version() {
    // The replay stores settings and commands in their canonical encoding. Any change to that
    // encoding changes this digest: bump `replay::format::REPLAY_VERSION`, say what changed in
    // docs/replay-format.md, then update the pair below (and re-bless the golden corpus).
    use pathing::{Fixed, WorldPos};
    use sim::formation::{FormationId, Layout};
    use sim::{Command, CommandKind, GoalSpec, SquareSpec, Target};
    let id = sim::EntityId { index: 7, generation: 2 };
    let square = SquareSpec { x: Fixed::from_num(3), z: Fixed::from_num(4), w: Fixed::ONE, h: Fixed::ONE, degrees: Fixed::from_num(30) };
    let kinds = vec![
        CommandKind::Spawn {
            class: pathing::PassClass::of(1),
            at: WorldPos::from_int(5, 6),
            count: 3,
            radius: Fixed::ONE / 2,
            speed: Fixed::from_num(8),
            turn_rate: None,
        },
        CommandKind::Move { units: vec![id], goal: GoalSpec::Point(WorldPos::from_int(1, 2)), queue: true },
        CommandKind::Move {
            units: vec![id],
            goal: GoalSpec::Circle { center: WorldPos::from_int(1, 2), radius: Fixed::ONE },
            queue: false,
        },
        CommandKind::Move { units: vec![], goal: GoalSpec::Square { center: WorldPos::from_int(1, 2), half: Fixed::ONE }, queue: false },
        CommandKind::Move {
            units: vec![id],
            goal: GoalSpec::Range { target: Target::Unit(id), min: Fixed::ZERO, max: Fixed::ONE, kind: sim::RangeKind::Melee },
            queue: false,
        },
        CommandKind::Move {
            units: vec![id],
            goal: GoalSpec::Range {
                target: Target::Obstruction(pathing::ObstructionId(9)),
                min: Fixed::ONE,
                max: Fixed::from_num(2),
                kind: sim::RangeKind::Melee,
            },
            queue: false,
        },
        CommandKind::Remove { units: vec![id] },
        CommandKind::Stop { units: vec![id] },
        CommandKind::PlaceObstruction { square, flags: 3 },
        CommandKind::PlaceBuilding { class: pathing::PassClass::of(2), square, builder: Some(id) },
        CommandKind::SetObstructionFlags { id: pathing::ObstructionId(4), flags: 1 },
        CommandKind::RemoveObstruction { id: pathing::ObstructionId(4) },
        CommandKind::SetArea { name: "gate".into(), available: false },
        CommandKind::EditTerrain { vx: 1, vz: 2, width: 1, heights: vec![Fixed::ONE] },
        CommandKind::FormGroup { units: vec![id], layout: Layout::Wedge },
        CommandKind::MoveFormation { formation: FormationId(3), goal: GoalSpec::Point(WorldPos::from_int(9, 9)) },
        CommandKind::SetLayout { formation: FormationId(3), layout: Layout::Loose },
        CommandKind::Disband { formation: FormationId(3) },
        CommandKind::SetWaypoints {
            net: sim::waypoint::WaypointNet {
                class: pathing::PassClass::of(0),
                range: 48,
                points: vec![WorldPos::from_int(1, 2), WorldPos::from_int(60, 2)],
            },
        },
        CommandKind::SetWaypointPriorities {
            class: pathing::PassClass::of(0),
            reset: true,
            entries: vec![
                sim::waypoint::PriorityEntry { waypoint: 1, priority: pathing::waypoints::WaypointPriority::Open { extra_cost: 5 } },
                sim::waypoint::PriorityEntry { waypoint: 0, priority: pathing::waypoints::WaypointPriority::Excluded },
            ],
        },
        CommandKind::MoveByWaypoints { units: vec![id], goal: WorldPos::from_int(70, 3), queue: true },
        CommandKind::Move {
            units: vec![id],
            goal: GoalSpec::Range {
                target: Target::Obstruction(pathing::ObstructionId(9)),
                min: Fixed::ZERO,
                max: Fixed::from_num(12),
                kind: sim::RangeKind::Ranged,
            },
            queue: false,
        },
        CommandKind::Move {
            units: vec![id],
            goal: GoalSpec::Range {
                target: Target::Obstruction(pathing::ObstructionId(9)),
                min: Fixed::ONE / 2,
                max: Fixed::ONE,
                kind: sim::RangeKind::Build,
            },
            queue: true,
        },
        CommandKind::SpawnFromBuilding {
            building: pathing::ObstructionId(9),
            class: pathing::PassClass::of(0),
            count: 300,
            radius: Fixed::ONE / 2,
            speed: Fixed::from_num(6),
            turn_rate: Some(Fixed::from_num(90)),
        },
        CommandKind::CancelSpawns { building: pathing::ObstructionId(9) },
        CommandKind::Game { rules: "combat".into(), payload: vec![1, 2, 3, 255] },
    ];
    let commands: Vec<Command> =
        kinds.into_iter().enumerate().map(|(k, kind)| Command { turn: 3, player: sim::PlayerId(1), seq: k as u32, kind }).collect();
    let bytes = sim::state_hash::encode(&(sim::Settings::default(), commands));
    let digest = sim::state_hash::hex(blake3::hash(&bytes).as_bytes());
    assert_eq!((replay::format::REPLAY_VERSION, digest.as_str()), (9, "e46caeeb3d99e9877566dbdca92e91674d142337e851d45bc60d0fb8c84f4955"));
}

#[test]
fn bytes_missing_inside_the_file_are_damage_not_a_crash() {
    let (bytes, _) = record(12, 4);
    let (_, ends) = record_ends(&bytes);
    // Cut 200 bytes out of the record before the last two: the footer is still there.
    let from = ends[ends.len() - 3].0 as usize + 50;
    let mut holed = bytes[..from].to_vec();
    holed.extend_from_slice(&bytes[from + 200..]);
    let e = Replay::read(&holed[..]).expect_err("a hole is damage");
    assert!(e.to_string().contains("bytes are missing inside the file"), "{e}");
}

/// A record with a valid prefix check and checksum around any payload: what a hostile file holds,
/// since the checksums only catch accidents.
fn forged_record(tag: u8, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut out = vec![tag];
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&blake3::hash(&out.clone()).as_bytes()[..3]);
    out.extend_from_slice(payload);
    let mut h = blake3::Hasher::new();
    h.update(&out[..5]);
    h.update(payload);
    out.extend_from_slice(h.finalize().as_bytes());
    out
}

#[test]
fn a_hostile_keyframe_is_an_error_naming_its_offset_never_a_large_allocation() {
    use replay::format::MAX_KEYFRAME_SNAPSHOT;
    let (bytes, _) = record(12, 4);
    let (_, ends) = record_ends(&bytes);
    // Records: turns 0-3, then the keyframe of turn 4 (the fifth record).
    let keyframe_at = ends[3].0;
    let replay = Replay::read(&bytes[..]).unwrap();
    let (turn, first) = &replay.keyframes[0];
    assert_eq!(*turn, 4);
    let hostile = |size: u32, frame: &[u8]| {
        let mut payload = turn.to_le_bytes().to_vec();
        payload.extend_from_slice(&size.to_le_bytes());
        payload.extend_from_slice(frame);
        let mut file = bytes[..keyframe_at as usize].to_vec();
        file.extend_from_slice(&forged_record(b'K', &payload));
        Replay::read(&file[..]).expect_err("a hostile keyframe is damage").to_string()
    };
    let payload_at = keyframe_at + 8;
    let zstd = |data: &[u8], dictionary: &[u8]| zstd::bulk::Compressor::with_dictionary(3, dictionary).unwrap().compress(data).unwrap();
    let size = first.len() as u32;

    // A stated length above the cap is refused before anything is decompressed.
    let e = hostile(MAX_KEYFRAME_SNAPSHOT + 1, &zstd(first, &[]));
    assert_eq!(
        e,
        format!(
            "offset {} (keyframe record): a snapshot length of at most {MAX_KEYFRAME_SNAPSHOT}, found {}",
            payload_at + 4,
            MAX_KEYFRAME_SNAPSHOT + 1
        )
    );
    // A frame that holds more or fewer bytes than stated, or says nothing of its size.
    let e = hostile(size - 1, &zstd(first, &[]));
    assert_eq!(
        e,
        format!("offset {} (keyframe record): a zstd frame of the stated {} bytes, found one of {size} bytes", payload_at + 8, size - 1)
    );
    let e = hostile(size + 1, &zstd(first, &[]));
    assert!(e.starts_with(&format!("offset {} (keyframe record): a zstd frame of the stated", payload_at + 8)), "{e}");
    let e = hostile(size, first);
    assert_eq!(e, format!("offset {} (keyframe record): a zstd frame that states its size ({size} bytes), found none", payload_at + 8));
    // A frame that claims a huge size while the stated length is small: refused from the frame
    // header, not by decompressing into a buffer of its size.
    let e = hostile(5, &raw_frame(MAX_KEYFRAME_SNAPSHOT - 1, b"hello"));
    assert_eq!(
        e,
        format!(
            "offset {} (keyframe record): a zstd frame of the stated 5 bytes, found one of {} bytes",
            payload_at + 8,
            MAX_KEYFRAME_SNAPSHOT - 1
        )
    );
    // A frame compressed against another dictionary than the previous keyframe (none, here), or
    // followed by more bytes.
    let e = hostile(size, &zstd(first, &replay.keyframes[1].1));
    assert!(e.starts_with(&format!("offset {} (keyframe record): a zstd frame of {size} bytes: ", payload_at + 8)), "{e}");
    let mut trailing = zstd(first, &[]);
    trailing.extend_from_slice(b"more");
    let e = hostile(size, &trailing);
    assert!(e.starts_with(&format!("offset {} (keyframe record): a zstd frame of {size} bytes: ", payload_at + 8)), "{e}");
    // A whole frame of bytes that are not a snapshot.
    for frame in [zstd(b"hello", &[]), raw_frame(5, b"hello")] {
        let e = hostile(5, &frame);
        assert_eq!(
            e,
            format!(
                "offset {} (keyframe record): a snapshot (offsets from its start, once decompressed): snapshot truncated: expected 20 bytes, found 5",
                payload_at + 8
            )
        );
    }
    // Too short to hold the stated length.
    let e = hostile_short(&bytes, keyframe_at, *turn);
    assert_eq!(e, format!("offset {payload_at} (keyframe record): a turn number, a snapshot length and a compressed snapshot"));
}

/// A zstd frame by hand: single segment, a 4-byte content size of `claimed`, one raw block of
/// `content` (RFC 8878, sections 3.1.1.1 and 3.1.1.2).
fn raw_frame(claimed: u32, content: &[u8]) -> Vec<u8> {
    let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0b1010_0000];
    frame.extend_from_slice(&claimed.to_le_bytes());
    let block = ((content.len() as u32) << 3) | 1;
    frame.extend_from_slice(&block.to_le_bytes()[..3]);
    frame.extend_from_slice(content);
    frame
}

fn hostile_short(bytes: &[u8], keyframe_at: u64, turn: u32) -> String {
    let mut file = bytes[..keyframe_at as usize].to_vec();
    file.extend_from_slice(&forged_record(b'K', &[&turn.to_le_bytes()[..], &[1, 0]].concat()));
    Replay::read(&file[..]).expect_err("a short keyframe is damage").to_string()
}

/// A whole replay in memory holds at most a given number of bytes of keyframes (compressed
/// keyframes could otherwise make a small file hold gigabytes): past it, the keyframe record that
/// goes over is named.
#[test]
fn a_whole_replay_in_memory_holds_keyframes_up_to_its_limit() {
    let (bytes, _) = record(12, 4);
    let (_, ends) = record_ends(&bytes);
    let all = Replay::read(&bytes[..]).unwrap();
    let sizes: Vec<u64> = all.keyframes.iter().map(|(_, s)| s.len() as u64).collect();
    assert_eq!(sizes.len(), 3);
    let held = Replay::read_holding(&bytes[..], sizes.iter().sum()).unwrap();
    assert_eq!(held, all);
    // Room for the first two keyframes only: the third (turn 12, the record after turn 11's) is refused.
    let e = Replay::read_holding(&bytes[..], sizes[0] + sizes[1] + sizes[2] - 1).expect_err("over the limit");
    let third_at = ends[ends.len() - 3].0;
    assert_eq!(
        e.to_string(),
        format!(
            "offset {third_at} (keyframe record): keyframes of at most {} bytes in all, decompressed, for a whole replay in memory, found more",
            sizes[0] + sizes[1] + sizes[2] - 1
        )
    );
}

#[test]
fn a_replay_of_the_previous_format_version_is_refused_naming_both() {
    let (mut bytes, _) = record(4, 0);
    let previous = replay::format::REPLAY_VERSION - 1;
    bytes[8..12].copy_from_slice(&previous.to_le_bytes());
    let e = Replay::read(&bytes[..]).expect_err("another version is refused");
    assert_eq!(
        e.to_string(),
        format!(
            "incompatible replay: offset 8 (header): replay format version {previous}, this reader reads version {} only",
            replay::format::REPLAY_VERSION
        )
    );
}

/// The demo's game, recorded as `phalanx demo` records it, for its first 100 turns (keyframes of
/// turns 50 and 100): each keyframe is stored compressed, the second against the first, and loads
/// to the hash the game had, recomputed from scratch with its rebuilt derived data.
#[test]
fn the_demos_keyframes_are_compressed_and_load_to_the_hashes_recorded_before_them() {
    use replay::format::ReplayWriter;
    let scenario = phalanx_cli::demo::scenario().unwrap();
    let mut world = replay::record::build_world(&scenario, 1).unwrap();
    let header = replay::record::header_for(&scenario, &mut world, phalanx_cli::demo::DEMO_KEYFRAME_EVERY);
    let mut writer = ReplayWriter::new(Vec::new(), header).unwrap();
    let mut script = scenario.script();
    for _ in 0..100 {
        if writer.keyframe_due(&world) {
            writer.keyframe(&world).unwrap();
        }
        let commands = script.turn_commands(&world);
        let report = world.step(&commands);
        script.observe(&report);
        writer.turn(&commands, &report).unwrap();
    }
    assert!(writer.keyframe_due(&world));
    writer.keyframe(&world).unwrap();
    let bytes = writer.finish().unwrap();

    let mut reader = ReplayReader::new(&bytes[..]).unwrap();
    let mut sizes = Vec::new();
    loop {
        let at = reader.offset();
        let Some(record) = reader.next_record().unwrap() else { break };
        if let Record::Keyframe { snapshot, .. } = record {
            sizes.push((reader.offset() - at, snapshot.len() as u64));
        }
    }
    assert_eq!(sizes.len(), 2);
    assert!(sizes[0].0 * 5 < sizes[0].1, "the first keyframe stored in {} bytes, its snapshot {}", sizes[0].0, sizes[0].1);
    assert!(sizes[1].0 * 15 < sizes[1].1, "the second keyframe stored in {} bytes, its snapshot {}", sizes[1].0, sizes[1].1);

    let replay = Replay::read(&bytes[..]).unwrap();
    assert_eq!(phalanx_tests::check_keyframes_load_to_recorded_hashes(&replay, &world), Ok(2));
}

/// The ten-thousand-unit scenario in a cheap form (its first 5 turns: spawning, the order of all
/// 200 groups, and the turns that serve it) gives the same hashes and the same order latency
/// counts on 1, 2 and 8 threads, and through a save and load after turn 2.
#[test]
fn ten_thousand_units_give_the_same_hashes_on_1_2_and_8_threads_and_through_save_and_load() {
    let scenario = example("ten-thousand.json");
    let turns = 5;
    let play = |threads: usize, reload_after: Option<u32>| {
        let mut world = replay::record::build_world(&scenario, threads).unwrap();
        let mut script = scenario.script();
        let mut hashes = Vec::new();
        for turn in 0..turns {
            let commands = script.turn_commands(&world);
            let report = world.step(&commands);
            script.observe(&report);
            hashes.push(report.hash);
            if reload_after == Some(turn) {
                world = world.load_like(&world.save()).unwrap();
                replay::verify::start_threads(&mut world, threads).unwrap();
            }
        }
        (hashes, world.scale_stats(), world.units().count())
    };
    let (one, stats, units) = play(1, None);
    assert_eq!(units, 10_000);
    // 228 searches serve all 200 groups' orders, as many a turn as the search budget holds (about
    // a third of them), so the last units start 2 turns after the order; the rest of the 10,000
    // requests share those searches.
    assert_eq!((stats.long_searches, stats.waiting, stats.latency_quantile(1000)), (228, 0, Some(2)));
    // One of the 10,000 orders ends before its unit takes a step, so it is not counted.
    assert_eq!(stats.ordered(), 9_999);
    for threads in [2, 8] {
        let (hashes, other, _) = play(threads, None);
        assert_eq!(hashes, one, "{threads} threads differ from 1");
        assert_eq!(other, stats, "{threads} threads count differently");
    }
    assert_eq!(play(1, Some(2)).0, one, "save and load after turn 2 changes the hashes");
}

/// Every example scenario (the reference game's, and the aura example's with its own rules) reads
/// back from its canonical text, with no file access, to the same canonical text, digest and world:
/// the canonical writer serializes the file model the reader parses, so a key it wrote differently
/// from the reader's shape would fail here.
#[test]
fn every_example_scenario_round_trips_through_its_canonical_text() {
    let rulesets = phalanx_cli::stock_rulesets().with(aura::ruleset());
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut paths: Vec<PathBuf> = ["examples/scenarios", "examples/aura/scenarios"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(root.join(dir)).unwrap_or_else(|e| panic!("{dir}: {e}")))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 11, "{paths:?}");
    for path in &paths {
        let scenario = Scenario::load_with(path, &rulesets).unwrap_or_else(|e| panic!("{e}"));
        let text = scenario.canonical_text();
        let again = Scenario::parse_with(text, "<replay header>", &mut |name| Err(format!("no file access ({name})")), &rulesets)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(again.canonical_text(), text, "{}", path.display());
        assert_eq!(again.digest(), scenario.digest(), "{}", path.display());
        assert!(!text.contains("\"file\""), "{}: every file is inlined", path.display());
        assert_eq!(again.world().unwrap().state_hash(), scenario.world().unwrap().state_hash(), "{}", path.display());
    }
}
