//! Scenarios, replays, verification and the `phalanx` command-line program of the Phalanx
//! lockstep core.
//!
//! This is the only crate that touches the file system and the command line.
//!
//! - [`scenario`]: the scenario file (`docs/scenario.md`): the map, classes, settings, initial
//!   units and a script of commands by turn; [`scenario::Scenario::canonical_text`] is the
//!   self-contained form a replay embeds.
//! - [`format`]: the replay file (`docs/replay-format.md`): header, one record per turn (its
//!   commands and the state digest's component roots), keyframe snapshots, footer; written
//!   append-only, read as a stream that survives a crash-truncated file and rejects damage with the
//!   byte offset and section.
//! - [`record`]: runs a scenario and records its replay.
//! - [`verify`]: re-simulates a replay and compares every turn and keyframe; on a divergence,
//!   reports the turn, the components, the entities and fields ([`diff`]) and the turn's commands.
//! - [`cli`]: the `phalanx` command line (`scen`, `path`, `reach`, `raster`, `run`, `verify`,
//!   `diff`, `seek`).
//!
//! Record a game in memory and verify it:
//!
//! ```
//! use replay::record::{RunOptions, run};
//! use replay::scenario::Scenario;
//! use replay::verify::{Outcome, VerifyOptions, verify};
//!
//! let text = r#"{
//!   "format": "phalanx-scenario", "version": 1, "name": "duel", "turns": 20,
//!   "map": {"generated": {"tiles": 16, "seed": 3}},
//!   "units": [{"name": "reds", "player": 1, "at": [20, 20], "count": 4}],
//!   "script": [{"turn": 1, "player": 1, "move": {"units": ["reds"], "goal": {"point": [44, 40]}}}]
//! }"#;
//! let scenario = Scenario::parse(text, "duel.json", &mut |f| Err(format!("no file {f}"))).unwrap();
//! let options = RunOptions { turns: scenario.turns(), threads: 1, keyframe_every: 5 };
//! let (world, bytes) = run(&scenario, &options, Some(Vec::new()), &mut |_, _| {}).unwrap();
//! assert_eq!(world.turn(), 20);
//!
//! let report = verify(&bytes.unwrap()[..], "duel", &VerifyOptions::default(), None, &|| {});
//! assert_eq!(report.outcome, Outcome::Identical);
//! assert_eq!((report.turns_verified, report.keyframes_checked), (20, 4));
//! ```
//!
//! The command line is driven the same way in tests, without a process:
//!
//! ```
//! let mut out = Vec::new();
//! let mut err = Vec::new();
//! let code = replay::cli::run(["phalanx", "--version"], &mut out, &mut err);
//! assert_eq!(code, 0);
//! assert!(String::from_utf8(out).unwrap().starts_with("phalanx"));
//! ```

#![forbid(unsafe_code)]

pub mod cli;
pub mod demo;
pub mod diff;
pub mod format;
pub mod picture;
pub mod record;
pub mod scenario;
pub mod seek;
pub mod verify;
pub mod viewer;
