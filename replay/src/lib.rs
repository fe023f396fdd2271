//! Scenarios, replays, verification, diffs, pictures and the replay viewer of the Phalanx lockstep
//! core: the library behind the `phalanx` program's file commands (the `phalanx-cli` crate).
//!
//! It knows no particular game: the tools that build a world of game rules take a
//! [`rules::Rulesets`] registry as a value, which the program fills. It reads and writes files
//! (scenarios, replays, pictures) but knows no command line and no terminal.
//!
//! - [`scenario`]: the scenario file (`docs/scenario.md`): the map, classes, settings, initial
//!   units and a script of commands by turn; [`scenario::Scenario::canonical_text`] is the
//!   self-contained form a replay embeds.
//! - [`format`](mod@format): the replay file (`docs/replay-format.md`): header, one record per
//!   turn (its commands and the state digest's component roots), keyframe snapshots, footer;
//!   written append-only, read as a stream that survives a crash-truncated file and rejects damage
//!   with the byte offset and section.
//! - [`record`]: runs a scenario and records its replay; [`record::header_for`] makes the header
//!   of a replay that a game writes itself (below).
//! - [`verify`]: re-simulates a replay and compares every turn and keyframe; on a divergence,
//!   reports the turn, the components, the entities and fields ([`diff`]) and the turn's commands.
//! - [`seek`]: the world at the start of any turn of a replay, from the nearest keyframe.
//! - [`picture`], [`viewer`]: a turn as a PNG, a whole replay as a self-contained HTML page.
//! - [`rules`]: game rulesets as the tools see them, by name at run time ([`rules::RulesOf`] wraps
//!   any `sim::rules::Rules`).
//!
//! # Quick start
//!
//! Record a scenario in memory and verify it:
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
//! A game that builds its [`sim::World`] itself records with [`format::ReplayWriter`]
//! directly. The replay still needs a scenario to rebuild the world from: the same map as a
//! scenario with no units and no script, whose world must hash like the game's; every command the
//! game gives is recorded. (`examples/src/lib.rs` does this for a two-peer game.)
//!
//! ```
//! use pathing::refworld::{RefWorldParams, generate};
//! use pathing::{Fixed, PassClass, WorldPos};
//! use replay::format::ReplayWriter;
//! use replay::record::header_for;
//! use replay::scenario::Scenario;
//! use replay::verify::{Outcome, VerifyOptions, verify};
//! use sim::{Command, CommandKind};
//! use sim::World;
//!
//! let (desc, obstructions) = generate(&RefWorldParams::scaled(16, 3));
//! let text = r#"{"format": "phalanx-scenario", "version": 3, "name": "mine", "turns": 12,
//!   "map": {"generated": {"tiles": 16, "seed": 3}}}"#;
//! let scenario = Scenario::parse(text, "mine", &mut |f| Err(format!("no file {f}"))).unwrap();
//! let mut world = World::new(desc, obstructions, *scenario.settings()).unwrap();
//! assert_eq!(world.state_hash(), scenario.world().unwrap().state_hash());
//!
//! let mut writer = ReplayWriter::new(Vec::new(), header_for(&scenario, &mut world, 5)).unwrap();
//! let spawn = CommandKind::Spawn { class: PassClass::of(0), at: WorldPos::from_int(30, 30), count: 3, radius: Fixed::ONE / 2, speed: Fixed::from_num(8), turn_rate: None };
//! for turn in 0..12 {
//!     if writer.keyframe_due(&world) {
//!         writer.keyframe(&world).unwrap();
//!     }
//!     let commands = if turn == 0 { vec![Command { turn, player: sim::PlayerId(1), seq: 0, kind: spawn.clone() }] } else { Vec::new() };
//!     let report = world.step(&commands);
//!     writer.turn(&commands, &report).unwrap();
//! }
//! let bytes = writer.finish().unwrap();
//! let report = verify(&bytes[..], "mine", &VerifyOptions::default(), None, &|| {});
//! assert_eq!(report.outcome, Outcome::Identical, "{}", report.to_text());
//! assert_eq!((report.turns_verified, report.keyframes_checked), (12, 2));
//! ```
//!
#![forbid(unsafe_code)]

pub use error::Error;

pub mod diff;
mod error;
pub mod format;
pub mod picture;
pub mod record;
pub mod rules;
pub mod scenario;
pub mod seek;
pub mod verify;
pub mod viewer;
