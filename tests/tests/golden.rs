//! The golden replay corpus of `tests/golden/`: short, curated replays with a per-turn hash sidecar
//! each. Every replay must read back, verify identical (every turn's hash and every keyframe), and
//! agree with its sidecar; its embedded scenario must still be the scenario file's.
//!
//! After an intentional rule change (the hashes change), re-bless the corpus and commit the result:
//!
//! ```text
//! PHALANX_BLESS=1 cargo test -p phalanx-tests --test golden
//! ```
//!
//! which records every entry of `tests/golden/corpus.txt` again (`phalanx run SCENARIO --turns N
//! --keyframe-every K --record NAME.replay --hashes` does the same by hand). Under `CI=true` the
//! variable is refused: the test fails saying so, since CI must check the committed files.

use std::path::{Path, PathBuf};

use phalanx_tests::ci;
use replay::format::{End, Replay};
use replay::record::{RunOptions, run};
use replay::scenario::Scenario;
use replay::verify::{Outcome, VerifyOptions, verify};
use sim::state_hash::hex;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One line of `corpus.txt`: name, scenario path from the repository root, turns, keyframe interval.
struct Entry {
    name: String,
    scenario: PathBuf,
    turns: u32,
    keyframe_every: u32,
}

fn corpus() -> Vec<Entry> {
    let path = root().join("tests/golden/corpus.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut entries = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 4, "{}:{}: expected NAME SCENARIO TURNS KEYFRAME_EVERY", path.display(), n + 1);
        entries.push(Entry {
            name: f[0].to_owned(),
            scenario: root().join(f[1]),
            turns: f[2].parse().expect("turns"),
            keyframe_every: f[3].parse().expect("keyframe interval"),
        });
    }
    assert!(entries.len() >= 3, "the corpus holds at least three replays");
    entries
}

fn sidecar_text(hashes: &[[u8; 32]]) -> String {
    hashes.iter().enumerate().map(|(t, h)| format!("{t}\t{}\n", hex(h))).collect()
}

fn bless(entry: &Entry, dir: &Path) {
    let scenario = Scenario::load_with(&entry.scenario, &phalanx_cli::stock_rulesets()).unwrap_or_else(|e| panic!("{e}"));
    let mut hashes = Vec::new();
    let options = RunOptions { turns: entry.turns, threads: 1, keyframe_every: entry.keyframe_every };
    let (_, bytes) = run(&scenario, &options, Some(Vec::new()), &mut |_, r| hashes.push(r.hash)).unwrap();
    std::fs::write(dir.join(format!("{}.replay", entry.name)), bytes.unwrap()).unwrap();
    std::fs::write(dir.join(format!("{}.hashes", entry.name)), sidecar_text(&hashes)).unwrap();
}

#[test]
fn golden_replays_verify_and_match_their_sidecars() {
    let dir = root().join("tests/golden");
    let entries = corpus();
    let requested = ci::bless_requested(std::env::var_os("PHALANX_BLESS").as_deref(), std::env::var_os("CI").as_deref());
    if requested.unwrap_or_else(|refused| panic!("{refused}")) {
        for e in &entries {
            bless(e, &dir);
        }
    }
    for e in &entries {
        let replay_path = dir.join(format!("{}.replay", e.name));
        let bytes =
            std::fs::read(&replay_path).unwrap_or_else(|err| panic!("{}: {err} (re-bless: PHALANX_BLESS=1)", replay_path.display()));
        let replay = Replay::read(&bytes[..]).unwrap_or_else(|err| panic!("{}: {err}", replay_path.display()));
        assert!(matches!(replay.end, End::Footer(_)), "{}: no footer", e.name);
        assert_eq!(replay.turns.len(), e.turns as usize, "{}", e.name);

        let recorded: Vec<[u8; 32]> = replay.turns.iter().map(|t| t.digest(&replay.header.components).hash).collect();
        let sidecar = std::fs::read_to_string(dir.join(format!("{}.hashes", e.name))).unwrap();
        assert_eq!(sidecar_text(&recorded), sidecar, "{}: the replay's hashes are not its sidecar's", e.name);

        let scenario = Scenario::load_with(&e.scenario, &phalanx_cli::stock_rulesets()).unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(
            replay.header.scenario_digest,
            scenario.digest(),
            "{}: the scenario file changed since the replay was recorded (re-bless: PHALANX_BLESS=1)",
            e.name
        );

        // With the sync test: every turn is also saved, loaded and re-stepped, so derived data a
        // load rebuilds (grids, hierarchies, landmark tables, flow fields) must come out as the
        // played-through world's.
        let options = VerifyOptions { sync_test: true, rulesets: phalanx_cli::stock_rulesets(), ..VerifyOptions::default() };
        let report = verify(&bytes[..], &e.name, &options, None, &|| {});
        assert_eq!(report.outcome, Outcome::Identical, "{}", report.to_text());
        assert_eq!(report.turns_verified, e.turns);
        assert_eq!(report.keyframes_checked as usize, replay.keyframes.len());
        assert!(report.keyframes_checked > 0, "{}: a golden replay holds keyframes", e.name);
    }
}

/// Every keyframe of every golden replay, loaded, has the hash recorded for the turn before it,
/// kept and recomputed from scratch: what a keyframe does not store (grids, hierarchies, tables,
/// graphs, flow fields, digests) comes back on load as the played-through world had it.
#[test]
fn every_golden_keyframe_loads_to_the_hash_recorded_before_it() {
    let dir = root().join("tests/golden");
    let mut checked = 0;
    for e in &corpus() {
        let bytes = std::fs::read(dir.join(format!("{}.replay", e.name))).unwrap();
        let replay = Replay::read(&bytes[..]).unwrap_or_else(|err| panic!("{}: {err} (re-bless: PHALANX_BLESS=1)", e.name));
        let scenario = Scenario::load_with(&e.scenario, &phalanx_cli::stock_rulesets()).unwrap_or_else(|err| panic!("{err}"));
        let base = scenario.world().unwrap();
        checked += phalanx_tests::check_keyframes_load_to_recorded_hashes(&replay, &base).unwrap_or_else(|err| panic!("{}: {err}", e.name));
    }
    assert!(checked >= corpus().len(), "every golden replay holds keyframes; {checked} in all");
}

/// A world loaded from a snapshot at any turn of a corpus scenario rebuilds exactly the
/// navigation data of the world that played through: the grids, and per class the bit planes,
/// jump tables, hierarchy and landmark tables. The state hash does not cover derived data, and two
/// tables can give the same paths for a while, so this compares them directly (the gates scenario
/// toggles an area and edits the terrain under landmark tables; skirmish and formations move
/// obstructions).
#[test]
fn a_loaded_world_rebuilds_the_played_through_navigation_data() {
    let mut with_landmarks = 0;
    for e in &corpus() {
        let scenario = Scenario::load_with(&e.scenario, &phalanx_cli::stock_rulesets()).unwrap_or_else(|err| panic!("{err}"));
        let mut world = scenario.world().unwrap();
        let mut script = scenario.script();
        for turn in 0..e.turns {
            let report = world.step(&script.commands(turn));
            script.observe(&report);
            if turn % 3 != 0 && turn + 1 != e.turns {
                continue; // every third turn and the last keep the test short
            }
            let loaded = world.load_like(&world.save()).unwrap_or_else(|err| panic!("{} turn {turn}: {err}", e.name));
            let (played, rebuilt) = (world.nav(), loaded.nav());
            assert!(played.grid() == rebuilt.grid(), "{} turn {turn}: grid", e.name);
            for k in 0..played.classes().len() {
                let class = pathing::PassClass::new(k).unwrap();
                assert!(played.class_nav(class) == rebuilt.class_nav(class), "{} turn {turn}: class {k}", e.name);
                with_landmarks += usize::from(played.class_nav(class).is_some_and(|n| n.landmarks().is_some()));
            }
        }
    }
    assert!(with_landmarks > 0, "some corpus scenario uses landmark tables");
}
