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
//! --keyframe-every K --record NAME.replay --hashes` does the same by hand).

use std::path::{Path, PathBuf};

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
    let scenario = Scenario::load(&entry.scenario).unwrap_or_else(|e| panic!("{e}"));
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
    if std::env::var_os("PHALANX_BLESS").is_some() {
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

        let scenario = Scenario::load(&e.scenario).unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(
            replay.header.scenario_digest,
            scenario.digest(),
            "{}: the scenario file changed since the replay was recorded (re-bless: PHALANX_BLESS=1)",
            e.name
        );

        let report = verify(&bytes[..], &e.name, &VerifyOptions::default(), None, &|| {});
        assert_eq!(report.outcome, Outcome::Identical, "{}", report.to_text());
        assert_eq!(report.turns_verified, e.turns);
        assert_eq!(report.keyframes_checked as usize, replay.keyframes.len());
        assert!(report.keyframes_checked > 0, "{}: a golden replay holds keyframes", e.name);
    }
}
