//! The errors of the replay tools that are not about one file's bytes ([`crate::format::ReplayError`])
//! or one scenario's text ([`crate::scenario::ScenarioError`]): the game a file names, the scenario a
//! replay embeds, the machine's threads, a keyframe that does not decode.

use sim::snapshot::SnapshotError;

/// Why a tool cannot use a replay, a snapshot or an argument.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file names game rules this program was not built with.
    #[error(
        "unknown ruleset {name:?} version {version} (this program knows: {known}); run it with a program that registers that game: `phalanx_cli::Program::new().rules::<ItsRules>().run()` (docs/game-rules.md)"
    )]
    UnknownRuleset {
        /// The ruleset named.
        name: String,
        /// Its version named.
        version: u32,
        /// The rulesets this program knows, for the message (`skirmish 3`, or `none`).
        known: String,
    },
    /// The file names a version of a known ruleset other than the program's.
    #[error("ruleset {name} version {version} is not known (this program has {name} version {known})")]
    RulesetVersion {
        /// The ruleset named.
        name: String,
        /// Its version named.
        version: u32,
        /// The version this program has.
        known: u32,
    },
    /// A snapshot holds rule modules no game this program knows is made of.
    #[error(
        "the snapshot holds {found}, which no game this program knows is made of (it knows: {known}); load it with a program that registers that game (docs/game-rules.md)"
    )]
    UnknownModules {
        /// The modules found, for the message (`rules combat 1, economy 2`).
        found: String,
        /// The rulesets this program knows, for the message.
        known: String,
    },
    /// A snapshot (or a keyframe) that does not load.
    #[error("{source}")]
    Snapshot {
        /// Why.
        #[from]
        source: SnapshotError,
    },
    /// A keyframe of a turn that does not decode.
    #[error("keyframe of turn {turn}: {source}")]
    Keyframe {
        /// The keyframe's turn.
        turn: u32,
        /// Why.
        source: SnapshotError,
    },
    /// The scenario a replay embeds does not parse.
    #[error("{source}")]
    Scenario {
        /// Why.
        #[from]
        source: crate::scenario::ScenarioError,
    },
    /// The replay's header and the scenario it embeds disagree.
    #[error("the header's {what} differ from its scenario's")]
    HeaderMismatch {
        /// What differs (`game rules`, `settings or seed`).
        what: &'static str,
    },
    /// The header names another scenario than it embeds.
    #[error("the header names scenario {header:?} but embeds {embedded:?}")]
    ScenarioName {
        /// The name in the header.
        header: String,
        /// The embedded scenario's name.
        embedded: String,
    },
    /// The embedded scenario's world cannot be built.
    #[error("the embedded scenario's world: {source}")]
    World {
        /// Why.
        source: sim::SetupError,
    },
    /// The header's digest components are not this engine's (a replay of another engine version).
    #[error("the header's state components {header:?} are not this engine's {engine:?}")]
    Components {
        /// The header's.
        header: Vec<String>,
        /// This engine's.
        engine: Vec<String>,
    },
    /// The path worker threads could not be started (a fault of this machine, not of any file).
    #[error("cannot start {threads} path worker threads: {message}")]
    Threads {
        /// Threads asked for.
        threads: usize,
        /// The pool's reason.
        message: String,
    },
    /// A picture layer name that is not one.
    #[error(
        "unknown layer {found:?}, expected a comma-separated list of terrain, clearance, obstructions, units, paths, formations or all"
    )]
    Layer {
        /// The name given.
        found: String,
    },
}
