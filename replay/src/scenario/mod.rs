//! Scenario files: the JSON description of a game to run (map, passability classes, settings,
//! players, initial units and obstructions, and a script of commands by turn), read exactly into
//! fixed point and written back as a self-contained canonical text.
//!
//! The format is documented field by field in `docs/scenario.md`; examples are under
//! `examples/scenarios/`. In short:
//!
//! ```json
//! {"format": "phalanx-scenario", "version": 1, "name": "tiny", "turns": 20,
//!  "map": {"generated": {"tiles": 16, "seed": 1}},
//!  "units": [{"name": "a", "player": 1, "at": [30, 30], "count": 2}],
//!  "script": [{"turn": 1, "player": 1, "move": {"units": ["a"], "goal": {"point": [40, 36]}}}]}
//! ```
//!
//! [`Scenario::parse`] reads a text (file references go through a caller-supplied resolver, so
//! parsing itself touches no file); [`Scenario::load`] reads a file and resolves references
//! relative to its directory. Every number is read from its decimal text into a `Fixed` (never
//! through a float), every count is capped, and every error names the text, the line and column
//! where it can, the JSON path of the offending value and what was expected.
//!
//! Reading is in two steps: serde reads the file model (`file`: one struct per JSON object,
//! unknown keys refused, decimals exact through `deserialize_with`, the path of a refused value
//! from `serde_path_to_error`), then `parse`, `map` and `commands` check what needs the rest of
//! the file (names, turns, limits, versions) and build the scenario; `canonical` writes it back
//! and `runner` turns its script into commands.
//!
//! [`Scenario::canonical_text`] is the scenario with every file reference replaced by the file's
//! contents inline, every default written out and keys in a fixed order; a replay embeds it with
//! its [`Scenario::digest`], and parsing it again (with no file access) gives the same world and
//! the same canonical text.
//!
//! Units are named by group: a group is made by an entry of `units` (spawned on turn 0) or by a
//! `spawn` of the script with a `group` name. The entity ids of a group are learned while the game
//! runs, from the [`Event::Spawned`] events of the turn the group was spawned in
//! ([`ScriptRunner::observe`]); ids are deterministic, so every run learns the same ids.
//! Obstructions are named likewise: initial obstructions get ids in file order after the map's
//! own, script-placed ones learn theirs from [`Event::ObstructionPlaced`].
//!
//! ```
//! use replay::scenario::Scenario;
//!
//! let text = r#"{"format": "phalanx-scenario", "version": 1, "name": "tiny", "turns": 20,
//!   "map": {"generated": {"tiles": 16, "seed": 1}},
//!   "units": [{"name": "a", "player": 1, "at": [30, 30], "count": 2}],
//!   "script": [{"turn": 1, "player": 1, "move": {"units": ["a"], "goal": {"point": [40, 36]}}}]}"#;
//! let scenario = Scenario::parse(text, "tiny.json", &mut |name| Err(format!("no files here ({name})"))).unwrap();
//! let mut world = scenario.world().unwrap();
//! let mut script = scenario.script();
//! for turn in 0..scenario.turns() {
//!     let report = world.step(&script.commands(turn));
//!     script.observe(&report);
//! }
//! assert_eq!(world.units().count(), 2);
//! // The canonical text reads back to the same scenario without any file.
//! let again = Scenario::parse(scenario.canonical_text(), "<replay header>", &mut |_| Err("no files".into())).unwrap();
//! assert_eq!(again.digest(), scenario.digest());
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::Path;

use pathing::classes::{ClassFileError, ClassSet, ObstructionMode};
use pathing::decimal::parse_fixed;
use pathing::grid_text::parse_grid_text;
use pathing::movingai::{ParseError, parse_map};
use pathing::passability::{NavArea, Obstruction, ObstructionFlags, ObstructionId, WorldDesc};
use pathing::polygon::{ConfigError, PolygonConfig};
use pathing::refworld::{RefWorldParams, generate};
use pathing::terrain::{GridSpec, MapBorder, Terrain};
use pathing::waypoints::WaypointPriority;
use pathing::{Fixed, MAX_CELL_SIZE, MAX_CLASSES, PassClass, WorldPos};
use sim::formation::{FormationId, Layout};
use sim::waypoint::{PriorityEntry, WaypointNet};
use sim::{
    Command, CommandKind, EntityId, Event, GoalSpec, MotionSettings, PlayerId, RangeKind, Settings, SetupError, SquareSpec, Target,
    TurnReport, World,
};

mod canonical;
mod commands;
mod error;
mod file;
mod json;
mod map;
mod model;
mod parse;
mod runner;
#[cfg(test)]
mod tests;

use canonical::*;
use commands::*;
pub use error::ScenarioError;
use json::*;
use map::*;
use model::*;
use parse::*;
pub use runner::{BOT_SEQ_BASE, ScriptRunner, run_turns};

/// The version of the format this program writes and reads. Every change to the format bumps it.
pub const SCENARIO_VERSION: u32 = 7;

/// The oldest version this program reads. Version 2 added the formation commands (`form_group`,
/// `move_formation`, `set_layout`, `disband`), version 3 the waypoint networks (`waypoints`) and
/// commands (`set_waypoints`, `set_waypoint_priorities`, `move_by_waypoints`), version 4 the
/// landmark tables (`map.landmarks`) and the refusal of foundation classes in `map.jump_tables`
/// (older files' are dropped, as they were always ignored), version 5 the motion setting
/// `turn_rate` and a spawn's own `turn_rate`, the kind of a range goal (`range.kind`) and the
/// spawns from buildings (`spawn_from_building`, `cancel_spawns`), version 6 the game rules
/// (`rules`) and game commands (`game`), version 7 the long-range search budget
/// (`settings.long_search_budget`) and the default of `settings.max_paths_per_turn` raised from 64
/// to 1024; an older file is a valid newer file, so it is read as one (and its canonical text says
/// version 7).
pub const OLDEST_SCENARIO_VERSION: u32 = 1;

/// The keys and commands added after version 1, each with the version that introduced it; a file
/// declaring an earlier version that uses one is refused ([`introduced_in`]). `docs/scenario.md`
/// has the same table.
pub const INTRODUCED: &[(&str, u32)] = &[
    ("form_group", 2),
    ("move_formation", 2),
    ("set_layout", 2),
    ("disband", 2),
    ("waypoints", 3),
    ("set_waypoints", 3),
    ("set_waypoint_priorities", 3),
    ("move_by_waypoints", 3),
    ("map.landmarks", 4),
    ("settings.motion.turn_rate", 5),
    ("range.kind", 5),
    ("spawn_from_building", 5),
    ("cancel_spawns", 5),
    ("spawn turn_rate", 5),
    ("rules", 6),
    ("game", 6),
    ("bots", 6),
    ("settings.long_search_budget", 7),
];

/// The version that introduced a key or command of [`INTRODUCED`] (named as there), or 1.
pub fn introduced_in(key: &str) -> u32 {
    INTRODUCED.iter().find(|(k, _)| *k == key).map_or(1, |&(_, v)| v)
}

/// The value of the `format` key.
pub const FORMAT_NAME: &str = "phalanx-scenario";

/// Largest scenario text [`Scenario::parse`] accepts, and largest canonical text it produces.
/// `[Units: bytes]`
pub const MAX_TEXT_BYTES: usize = 32 << 20;

/// Largest referenced file (map, class file, polygon config). `[Units: bytes]`
pub const MAX_FILE_BYTES: usize = 16 << 20;

/// Most groups (entries of `units` plus named spawns).
pub const MAX_GROUPS: usize = 4096;

/// Most initial obstructions.
pub const MAX_OBSTRUCTIONS: usize = 65_536;

/// Most script entries.
pub const MAX_SCRIPT_ENTRIES: usize = 65_536;

/// Most units one command may name (the world's own limit).
pub const MAX_UNITS_PER_COMMAND: u32 = 4096;

/// Most navcells of a scenario's grid: what a snapshot may hold ([`sim::snapshot::MAX_GRID_CELLS`]),
/// so every scenario's world can be saved and loaded.
pub const MAX_GRID_CELLS: u64 = sim::snapshot::MAX_GRID_CELLS;

/// Largest `turns`, and latest turn of a script entry.
pub const MAX_TURN: u32 = 1_000_000;

/// Longest name (scenario, group, obstruction, area) and comment. `[Units: bytes]`
pub const MAX_NAME_BYTES: usize = 256;

/// Longest description. `[Units: bytes]`
pub const MAX_DESCRIPTION_BYTES: usize = 65_536;

/// Largest `tiles` of a generated map: `(4 · 512)²` navcells is [`MAX_GRID_CELLS`].
pub const MAX_GENERATED_TILES: u32 = 512;

/// Most terrain vertices of a `terrain` map.
pub const MAX_TERRAIN_VERTICES: u64 = 1 << 21;

/// A parsed, checked scenario. Two scenarios are equal when their canonical texts are.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The game rules the world is made with, when the scenario names some.
    rules: Option<std::sync::Arc<dyn crate::rules::Ruleset>>,
    /// The seats the rules' bots play, by player, with their seeds.
    bots: Vec<(PlayerId, u64)>,
    name: String,
    description: Option<String>,
    turns: u32,
    settings: Settings,
    classes_spec: ClassesSpec,
    classes: ClassSet,
    map: MapKind,
    jump_tables: u16,
    landmarks: u16,
    /// The world's geometry, built at parse time; [`Scenario::world`] clones it.
    desc: WorldDesc,
    /// The map's own obstructions (a generated map's buildings and trees).
    map_obstructions: Vec<(ObstructionId, Obstruction)>,
    /// The waypoint networks of the map (scenario coordinates), by class.
    waypoints: Vec<WaypointNet>,
    /// Scenario coordinates are world coordinates plus this (the south-west corner of a grid-text
    /// or polygon-config map); zero for the other maps.
    origin: WorldPos,
    obstructions: Vec<InitialObstruction>,
    obstruction_names: Vec<String>,
    /// Per obstruction name, its id when it is an initial obstruction.
    obstruction_initial: Vec<Option<ObstructionId>>,
    group_names: Vec<String>,
    /// Formation names, in the order their `form_group` entries appear.
    formation_names: Vec<String>,
    /// The `units` entries (first `n_unit_entries`), then the script entries, in file order.
    entries: Vec<Entry>,
    n_unit_entries: usize,
    /// Entry indices in the order commands are issued: by turn, then file order.
    schedule: Vec<usize>,
    canonical: String,
    digest: [u8; 32],
}

impl PartialEq for Scenario {
    fn eq(&self, other: &Self) -> bool {
        self.canonical == other.canonical
    }
}

impl Eq for Scenario {}

impl Scenario {
    /// Parses scenario text; `origin` names the text in errors (a path or `"<replay header>"`);
    /// `resolve` returns the contents of a referenced file (the name as written) or an error
    /// string.
    ///
    /// # Errors
    /// [`ScenarioError`] for malformed JSON (with serde_json's line and column), a wrong `format`
    /// or `version` (naming both versions), an unknown, missing or repeated field, a value of the
    /// wrong type or out of its limits, a key or command of a later version than the file
    /// declares ([`INTRODUCED`]), an unknown group, class, obstruction or area name, a
    /// referenced file that cannot be read or parsed, or a map that cannot become a world.
    pub fn parse(text: &str, origin: &str, resolve: &mut dyn FnMut(&str) -> Result<String, String>) -> Result<Scenario, ScenarioError> {
        Self::parse_with(text, origin, resolve, &crate::rules::Rulesets::none())
    }

    /// [`Scenario::parse`], knowing `rulesets`: a scenario's `rules` must name one of them.
    ///
    /// # Errors
    /// As [`Scenario::parse`], and a `rules` naming a ruleset not in `rulesets`, or a `game`
    /// command its rules cannot read.
    pub fn parse_with(
        text: &str,
        origin: &str,
        resolve: &mut dyn FnMut(&str) -> Result<String, String>,
        rulesets: &crate::rules::Rulesets,
    ) -> Result<Scenario, ScenarioError> {
        let whole = |message: String| ScenarioError {
            origin: origin.to_string(),
            line: None,
            column: None,
            path: String::new(),
            message,
            source: None,
        };
        if text.len() > MAX_TEXT_BYTES {
            return Err(whole(format!("expected a scenario of at most {MAX_TEXT_BYTES} bytes, found {} bytes", text.len())));
        }
        parse_text(text, origin, resolve, rulesets)
    }

    /// Reads a scenario file, resolving file references relative to its directory. The file and
    /// every referenced file are read with a size cap ([`MAX_TEXT_BYTES`], [`MAX_FILE_BYTES`]).
    ///
    /// # Errors
    /// [`ScenarioError`] when the file cannot be read, and as [`Scenario::parse`].
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        Self::load_with(path, &crate::rules::Rulesets::none())
    }

    /// [`Scenario::load`], knowing `rulesets` ([`Scenario::parse_with`]).
    ///
    /// # Errors
    /// As [`Scenario::load`] and [`Scenario::parse_with`].
    pub fn load_with(path: &Path, rulesets: &crate::rules::Rulesets) -> Result<Scenario, ScenarioError> {
        let origin = path.display().to_string();
        let text = read_capped(path, MAX_TEXT_BYTES).map_err(|(message, io)| ScenarioError {
            origin: origin.clone(),
            line: None,
            column: None,
            path: String::new(),
            message,
            source: io.map(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>),
        })?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Scenario::parse_with(
            &text,
            &origin,
            &mut |name| read_capped(&dir.join(name), MAX_FILE_BYTES).map_err(|(message, _)| message),
            rulesets,
        )
    }

    /// The scenario's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description, if any.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The default number of turns to run.
    pub fn turns(&self) -> u32 {
        self.turns
    }

    /// The game settings (defaults overridden by the scenario's `settings`).
    pub fn settings(&self) -> &sim::Settings {
        &self.settings
    }

    /// The seats the rules' bots play, with their seeds, by player.
    pub fn bots(&self) -> &[(PlayerId, u64)] {
        &self.bots
    }

    /// The passability classes.
    pub fn classes(&self) -> &ClassSet {
        &self.classes
    }

    /// The group names, in the order they were defined (`units` first, then named spawns).
    pub fn group_names(&self) -> &[String] {
        &self.group_names
    }

    /// Scenario coordinates minus world coordinates: the south-west corner of a grid-text or
    /// polygon-config map (its `minX`, `minZ`), zero for the other maps.
    pub fn origin(&self) -> WorldPos {
        self.origin
    }

    /// The self-contained canonical JSON text: every file reference replaced by its contents
    /// inline, every default written out, keys in a fixed order, numbers as the shortest decimal
    /// that reads back to the same value. `parse(canonical_text, _, refuse-all)` gives an equal
    /// scenario with the same canonical text.
    pub fn canonical_text(&self) -> &str {
        &self.canonical
    }

    /// blake3 of [`Scenario::canonical_text`].
    pub fn digest(&self) -> [u8; 32] {
        self.digest
    }

    /// A fresh world at turn 0: the map, its own obstructions and the initial obstructions in, no
    /// units yet (they come from the turn-0 commands of [`Scenario::script`]).
    ///
    /// # Errors
    /// [`SetupError`] when the world refuses the geometry (an initial obstruction off the map, say).
    pub fn world(&self) -> Result<sim::World, sim::SetupError> {
        let mut obstructions = self.map_obstructions.clone();
        for o in &self.obstructions {
            let square = self.world_square(&o.square);
            let square = pathing::raster::editor_square(square.x, square.z, square.w, square.h, square.degrees)
                .map_err(|e| SetupError::Settings(format!("obstruction {}: {e}", o.id)))?;
            obstructions.push((ObstructionId(o.id), Obstruction { square, flags: ObstructionFlags(o.flags) }));
        }
        let mut world = match &self.rules {
            Some(rules) => rules.new_world(self.desc.clone(), obstructions, self.settings)?,
            None => World::new(self.desc.clone(), obstructions, self.settings)?,
        };
        for net in &self.waypoints {
            world
                .set_waypoints(self.world_net(net))
                .map_err(|e| SetupError::Settings(format!("waypoints of class {}: {e:?}", net.class)))?;
        }
        Ok(world)
    }

    fn world_net(&self, net: &WaypointNet) -> WaypointNet {
        WaypointNet { points: net.points.iter().map(|&p| self.world_pos(p)).collect(), ..net.clone() }
    }

    /// The game rules the scenario names, if any.
    pub fn rules(&self) -> Option<&std::sync::Arc<dyn crate::rules::Ruleset>> {
        self.rules.as_ref()
    }

    /// A runner producing each turn's commands.
    pub fn script(&self) -> ScriptRunner<'_> {
        ScriptRunner::new(self)
    }

    fn world_pos(&self, p: WorldPos) -> WorldPos {
        WorldPos::new(p.x.saturating_sub(self.origin.x), p.z.saturating_sub(self.origin.z))
    }

    fn world_square(&self, s: &SquareSpec) -> SquareSpec {
        let p = self.world_pos(WorldPos::new(s.x, s.z));
        SquareSpec { x: p.x, z: p.z, ..*s }
    }
}

/// Reads a file of at most `cap` bytes as UTF-8 text; an error's message, with the I/O error
/// behind it when there is one.
fn read_capped(path: &Path, cap: usize) -> Result<String, (String, Option<std::io::Error>)> {
    let cannot = |e: std::io::Error| (format!("cannot read {}: {e}", path.display()), Some(e));
    let file = std::fs::File::open(path).map_err(cannot)?;
    let mut bytes = Vec::new();
    file.take(cap as u64 + 1).read_to_end(&mut bytes).map_err(cannot)?;
    if bytes.len() > cap {
        return Err((format!("{} is larger than {cap} bytes", path.display()), None));
    }
    String::from_utf8(bytes).map_err(|e| (format!("{} is not UTF-8 text: {e}", path.display()), None))
}
