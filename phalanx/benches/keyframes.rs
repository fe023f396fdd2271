//! Keyframe benchmark: the demo's game (`phalanx_cli::demo::scenario()`) played and recorded as
//! `phalanx demo` records it (a keyframe every [`phalanx_cli::demo::DEMO_KEYFRAME_EVERY`] turns), then
//! every keyframe measured: its snapshot's bytes by component, its size as stored in the replay,
//! and the time to write it (`ReplayWriter::keyframe`: save and compress) and to load it (read
//! back from the record, then `World::load_like`). The snapshots are also compressed each alone,
//! with zstd at the replay's level and with deflate (`miniz_oxide`, level 6), the candidates the
//! replay format's codec was chosen from.
//!
//! `cargo bench -p phalanx-cli --bench keyframes`; `PHALANX_BENCH_QUICK=1` (or no `--bench` argument)
//! plays the first 100 turns only (CI smoke run), `PHALANX_BENCH_TURNS=N` sets the turn limit.
//! Every run checks that each loaded keyframe has the hash the game had at that turn, recomputed
//! from scratch (derived data included), and exits with status 1 when one does not.

// A benchmark, not simulation code: it needs the wall clock to time and floats to report.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::time::{Duration, Instant};

use replay::format::{Record, ReplayReader, ReplayWriter};
use sim::snapshot::SnapshotData;
use sim::state_hash::encode;

/// The encoded size of each part of a snapshot's payload, in the payload's field order; the game's
/// section split into its parts.
fn breakdown(data: &SnapshotData) -> Vec<(&'static str, usize)> {
    let mut rows = vec![
        ("settings", encode(&data.settings).len()),
        ("turn, grid, border, paddings, class masks", encode(&(data.turn, data.grid, data.border, data.paddings)).len() + 4),
        ("classes (their JSON text)", encode(&data.classes).len()),
        ("terrain (vertex heights)", encode(&data.terrain).len()),
        ("areas and obstacle polygons", encode(&(&data.areas, &data.obstacles)).len()),
        ("painted navcells", encode(&data.cells).len()),
        ("obstruction squares", encode(&(&data.obstructions, data.next_obstruction)).len()),
        ("entity ids", encode(&data.ids).len()),
        ("units (core state)", encode(&data.units).len()),
        ("path requests, rng", encode(&(&data.requests, &data.rng)).len()),
        ("formations", encode(&(&data.formations, &data.formation_requests, data.next_formation)).len()),
        ("waypoints", encode(&(&data.waypoint_nets, &data.waypoint_tables, &data.waypoint_routes)).len()),
        ("spawn orders", encode(&(&data.spawn_orders, data.next_spawn_order)).len()),
    ];
    // Every module's sections together (the rows are labelled with static text).
    let sum = |f: &dyn Fn(&sim::snapshot::GameSnapshot) -> usize| data.games.iter().map(f).sum::<usize>();
    if data.games.is_empty() {
        rows.push(("game", 1));
    } else {
        rows.push(("game: units", sum(&|g| encode(&g.units).len())));
        rows.push(("game: objects", sum(&|g| encode(&g.objects).len())));
        rows.push(("game: players and world", sum(&|g| encode(&(&g.rules, g.version, &g.players, &g.state)).len()) + 1));
    }
    rows
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let quick = std::env::var("PHALANX_BENCH_QUICK").is_ok_and(|v| v == "1") || !bench;
    let scenario = phalanx_cli::demo::scenario().expect("the embedded demo scenario parses");
    let limit = match std::env::var("PHALANX_BENCH_TURNS").ok().and_then(|v| v.parse().ok()) {
        Some(n) => n,
        None if quick => 100,
        None => scenario.turns(),
    };
    println!(
        "Mode: {}; the demo's game up to {limit} turns, a keyframe every {} turns.",
        if quick { "quick" } else { "full" },
        phalanx_cli::demo::DEMO_KEYFRAME_EVERY
    );

    // Play and record as the demo does, timing each keyframe's write.
    let mut world = replay::record::build_world(&scenario, 1).expect("the demo's world");
    let header = replay::record::header_for(&scenario, &mut world, phalanx_cli::demo::DEMO_KEYFRAME_EVERY);
    let mut writer = ReplayWriter::new(Vec::new(), header).expect("writing to memory");
    let mut script = scenario.script();
    let mut writes = Vec::new();
    let mut hashes = Vec::new();
    let mut turn = 0;
    while turn < limit {
        if writer.keyframe_due(&world) {
            let started = Instant::now();
            writer.keyframe(&world).expect("writing to memory");
            writes.push(started.elapsed());
        }
        let commands = script.turn_commands(&world);
        let report = world.step(&commands);
        script.observe(&report);
        writer.turn(&commands, &report).expect("writing to memory");
        hashes.push(report.hash);
        turn += 1;
        if phalanx_cli::demo::decided(&world).is_some() {
            break;
        }
    }
    if writer.keyframe_due(&world) {
        let started = Instant::now();
        writer.keyframe(&world).expect("writing to memory");
        writes.push(started.elapsed());
    }
    let bytes = writer.finish().expect("writing to memory");

    // Read it back record by record: each keyframe's stored size, read time and load time.
    let mut reader = ReplayReader::new(&bytes[..]).expect("the replay just written reads");
    let mut failed = false;
    let mut rows = Vec::new();
    let mut stored_total = 0;
    let mut snapshots = Vec::new();
    loop {
        let at = reader.offset();
        let started = Instant::now();
        let Some(record) = reader.next_record().expect("the replay just written reads") else { break };
        let read = started.elapsed();
        let Record::Keyframe { turn, snapshot } = record else { continue };
        let stored = (reader.offset() - at) as usize;
        stored_total += stored;
        let started = Instant::now();
        let loaded = world.load_like(&snapshot).expect("a keyframe loads");
        let load = started.elapsed();
        let expected = hashes[turn as usize - 1];
        if loaded.state_digest_from_scratch().hash != expected || loaded.state_hash() != expected {
            eprintln!("CHECK FAILED: the keyframe of turn {turn}, loaded, has another hash than the game had");
            failed = true;
        }
        let data = sim::snapshot::unframe(&snapshot).expect("a keyframe's snapshot decodes");
        rows.push((turn, snapshot.len(), stored, read, load, breakdown(&data)));
        snapshots.push(snapshot);
    }

    let n = rows.len().max(1);
    println!();
    println!("| turn | snapshot bytes | stored bytes | write ms | read ms | load ms |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: |");
    for (k, (turn, raw, stored, read, load, _)) in rows.iter().enumerate() {
        let write = writes.get(k).map_or(f64::NAN, |d| ms(*d));
        println!("| {turn} | {raw} | {stored} | {write:.1} | {:.1} | {:.1} |", ms(*read), ms(*load));
    }
    println!();
    println!("Snapshot bytes by component, mean over the {n} keyframes:");
    println!();
    println!("| component | bytes | share |");
    println!("| --- | ---: | ---: |");
    let raw_total: usize = rows.iter().map(|r| r.1).sum();
    if let Some(first) = rows.first() {
        for (k, (name, _)) in first.5.iter().enumerate() {
            let sum: usize = rows.iter().map(|r| r.5[k].1).sum();
            println!("| {name} | {} | {:.1}% |", sum / n, 100.0 * sum as f64 / raw_total.max(1) as f64);
        }
        println!("| framing (magic, version, length, checksum) | 52 | |");
    }
    println!();
    println!(
        "Replay: {} bytes, {} turns, {} keyframes; keyframes {} bytes stored ({:.1}%), mean snapshot {} bytes, mean stored {} bytes.",
        bytes.len(),
        hashes.len(),
        rows.len(),
        stored_total,
        100.0 * stored_total as f64 / bytes.len().max(1) as f64,
        raw_total / n,
        stored_total / n
    );

    // The candidates, each keyframe compressed alone: size, and the time to compress and to
    // decompress (checked to give the snapshot back).
    println!();
    println!("| codec | keyframes stored | compress ms, mean | decompress ms, mean |");
    println!("| --- | ---: | ---: | ---: |");
    type Codec = (&'static str, Box<dyn Fn(&[u8]) -> Vec<u8>>, Box<dyn Fn(&[u8], usize) -> Option<Vec<u8>>>);
    let codecs: [Codec; 2] = [
        (
            "deflate (miniz_oxide, level 6), alone",
            Box::new(|s| miniz_oxide::deflate::compress_to_vec(s, 6)),
            Box::new(|c, n| miniz_oxide::inflate::decompress_to_vec_with_limit(c, n).ok()),
        ),
        (
            "zstd (level 3), alone",
            Box::new(|s| zstd::bulk::compress(s, replay::format::KEYFRAME_LEVEL).expect("zstd compresses")),
            Box::new(|c, n| zstd::bulk::decompress(c, n).ok()),
        ),
    ];
    for (name, compress, decompress) in &codecs {
        let (mut size, mut packing, mut unpacking) = (0, Duration::ZERO, Duration::ZERO);
        for snapshot in &snapshots {
            let started = Instant::now();
            let packed = compress(snapshot);
            packing += started.elapsed();
            let started = Instant::now();
            let unpacked = decompress(&packed, snapshot.len());
            unpacking += started.elapsed();
            if unpacked.as_ref() != Some(snapshot) {
                eprintln!("CHECK FAILED: {name} does not give a keyframe back");
                failed = true;
            }
            size += packed.len();
        }
        println!("| {name} | {size} | {:.1} | {:.2} |", ms(packing) / n as f64, ms(unpacking) / n as f64);
    }
    println!("| zstd (level 3), against the previous keyframe (the replay's) | {stored_total} | | |");
    if failed {
        std::process::exit(1);
    }
}
