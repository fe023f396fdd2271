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
use pathing::passability::{NavArea, Obstruction, ObstructionFlags, WorldDesc};
use pathing::polygon::{ConfigError, PolygonConfig};
use pathing::refworld::{RefWorldParams, generate};
use pathing::terrain::{GridSpec, MapBorder, Terrain};
use pathing::waypoints::WaypointPriority;
use pathing::{Fixed, MAX_CELL_SIZE, PassClass, WorldPos};
use sim::EntityId;
use sim::command::{Command, CommandKind, Event, GoalSpec, PlayerId, SquareSpec, Target};
use sim::formation::{FormationId, Layout};
use sim::motion::MotionSettings;
use sim::waypoint::{PriorityEntry, WaypointNet};
use sim::world::{Settings, SetupError, TurnReport, World};

/// The version of the format this program writes and reads. Every change to the format bumps it.
pub const SCENARIO_VERSION: u32 = 4;

/// The oldest version this program reads. Version 2 added the formation commands (`form_group`,
/// `move_formation`, `set_layout`, `disband`), version 3 the waypoint networks (`waypoints`) and
/// commands (`set_waypoints`, `set_waypoint_priorities`, `move_by_waypoints`), version 4 the
/// landmark tables (`map.landmarks`) and the refusal of foundation classes in `map.jump_tables`
/// (older files' are dropped, as they were always ignored); an older file is a valid newer file,
/// so it is read as one (and its canonical text says version 4).
pub const OLDEST_SCENARIO_VERSION: u32 = 1;

/// The value of the `format` key.
pub const FORMAT_NAME: &str = "phalanx-scenario";

/// Largest scenario text [`Scenario::parse`] accepts, and largest canonical text it produces.
/// `[Units: bytes]`
pub const MAX_TEXT_BYTES: usize = 32 << 20;

/// Largest referenced file (map, class file, polygon config). `[Units: bytes]`
pub const MAX_FILE_BYTES: usize = 16 << 20;

/// Most JSON values (numbers, strings, arrays, objects, ...) in a scenario text.
pub const MAX_JSON_VALUES: usize = 1 << 22;

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

/// Why a scenario could not be read. `Display` gives one line: `origin:line:column: at path: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The text the error is in: the scenario's origin (a path, `<replay header>`), or a referenced
    /// file's name as written in the scenario.
    pub origin: String,
    /// 1-based line, when known.
    pub line: Option<u32>,
    /// 1-based column (in bytes), when known.
    pub column: Option<u32>,
    /// The JSON path of the offending value, such as `script[3].move.units`; empty for the whole
    /// text (a syntax error).
    pub path: String,
    /// What was expected, in lower case.
    pub message: String,
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.origin)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        f.write_str(": ")?;
        if !self.path.is_empty() {
            write!(f, "at {}: ", self.path)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ScenarioError {}

// ---------------------------------------------------------------------------------------------
// A JSON tree with positions.
// ---------------------------------------------------------------------------------------------

/// A JSON value and the byte offset where it starts. Numbers keep their text (as offsets into
/// the scenario text), so they become `Fixed` without a float.
#[derive(Debug)]
struct Node {
    at: u32,
    val: Val,
}

#[derive(Debug)]
enum Val {
    Null,
    Bool(bool),
    /// The number's text is `text[start..end]`.
    Num(u32, u32),
    Str(String),
    Arr(Vec<Node>),
    Obj(Vec<(String, Node)>),
}

impl Val {
    fn kind(&self) -> &'static str {
        match self {
            Val::Null => "null",
            Val::Bool(_) => "a boolean",
            Val::Num(..) => "a number",
            Val::Str(_) => "a string",
            Val::Arr(_) => "an array",
            Val::Obj(_) => "an object",
        }
    }
}

/// Builds the tree of a text that `serde_json` has already accepted (so every error here is a
/// defence, not an expected path); counts values against [`MAX_JSON_VALUES`].
struct Scanner<'t> {
    text: &'t str,
    i: usize,
    values: usize,
}

impl Scanner<'_> {
    fn byte(&self) -> Option<u8> {
        self.text.as_bytes().get(self.i).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.byte(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn expect(&mut self, b: u8) -> Result<(), String> {
        self.skip_ws();
        if self.byte() == Some(b) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected `{}`", b as char))
        }
    }

    fn value(&mut self, depth: u32) -> Result<Node, String> {
        if depth > 256 {
            return Err("JSON nested too deeply".into());
        }
        self.values += 1;
        if self.values > MAX_JSON_VALUES {
            return Err(format!("expected at most {MAX_JSON_VALUES} JSON values"));
        }
        self.skip_ws();
        let at = u32::try_from(self.i).map_err(|_| "text too long".to_string())?;
        let val = match self.byte() {
            Some(b'{') => {
                self.i += 1;
                let mut entries = Vec::new();
                self.skip_ws();
                if self.byte() == Some(b'}') {
                    self.i += 1;
                } else {
                    loop {
                        self.skip_ws();
                        let key = self.string()?;
                        self.expect(b':')?;
                        let value = self.value(depth + 1)?;
                        entries.push((key, value));
                        self.skip_ws();
                        match self.byte() {
                            Some(b',') => self.i += 1,
                            Some(b'}') => {
                                self.i += 1;
                                break;
                            }
                            _ => return Err("expected `,` or `}`".into()),
                        }
                    }
                }
                Val::Obj(entries)
            }
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.skip_ws();
                if self.byte() == Some(b']') {
                    self.i += 1;
                } else {
                    loop {
                        items.push(self.value(depth + 1)?);
                        self.skip_ws();
                        match self.byte() {
                            Some(b',') => self.i += 1,
                            Some(b']') => {
                                self.i += 1;
                                break;
                            }
                            _ => return Err("expected `,` or `]`".into()),
                        }
                    }
                }
                Val::Arr(items)
            }
            Some(b'"') => Val::Str(self.string()?),
            Some(b't') => self.literal("true", Val::Bool(true))?,
            Some(b'f') => self.literal("false", Val::Bool(false))?,
            Some(b'n') => self.literal("null", Val::Null)?,
            Some(b'-' | b'0'..=b'9') => {
                while matches!(self.byte(), Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')) {
                    self.i += 1;
                }
                let end = u32::try_from(self.i).map_err(|_| "text too long".to_string())?;
                Val::Num(at, end)
            }
            _ => return Err("expected a JSON value".into()),
        };
        Ok(Node { at, val })
    }

    fn literal(&mut self, word: &str, val: Val) -> Result<Val, String> {
        if self.text.get(self.i..).is_some_and(|rest| rest.starts_with(word)) {
            self.i += word.len();
            Ok(val)
        } else {
            Err(format!("expected `{word}`"))
        }
    }

    /// A string literal, unescaped by `serde_json`.
    fn string(&mut self) -> Result<String, String> {
        let start = self.i;
        if self.byte() != Some(b'"') {
            return Err("expected a string".into());
        }
        self.i += 1;
        loop {
            match self.byte() {
                Some(b'\\') => self.i += 2,
                Some(b'"') => {
                    self.i += 1;
                    break;
                }
                Some(_) => self.i += 1,
                None => return Err("unterminated string".into()),
            }
        }
        let literal = self.text.get(start..self.i).ok_or("unterminated string")?;
        serde_json::from_str::<String>(literal).map_err(|e| e.to_string())
    }
}

/// Line and column (1-based, column in bytes) of a byte offset.
fn line_column(text: &str, at: usize) -> (u32, u32) {
    let before = text.get(..at.min(text.len())).unwrap_or(text);
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |k| k + 1) + 1;
    (u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(column).unwrap_or(u32::MAX))
}

/// What errors refer to: the text's origin and the text (for line numbers).
struct Cx<'a> {
    origin: &'a str,
    text: &'a str,
}

type Res<T> = Result<T, ScenarioError>;

impl Cx<'_> {
    fn err(&self, node: &Node, path: &str, message: impl Into<String>) -> ScenarioError {
        let (line, column) = line_column(self.text, node.at as usize);
        ScenarioError {
            origin: self.origin.to_string(),
            line: Some(line),
            column: Some(column),
            path: path.to_string(),
            message: message.into(),
        }
    }

    fn num_text(&self, node: &Node) -> Option<&str> {
        match node.val {
            Val::Num(start, end) => self.text.get(start as usize..end as usize),
            _ => None,
        }
    }

    /// A number (or a string holding a decimal) as the nearest `Fixed`.
    fn fixed(&self, node: &Node, path: &str) -> Res<Fixed> {
        let text = match &node.val {
            Val::Num(..) => self.num_text(node).unwrap_or(""),
            Val::Str(s) => s.as_str(),
            other => return Err(self.err(node, path, format!("expected a decimal number, found {}", other.kind()))),
        };
        parse_fixed(text).map_err(|e| self.err(node, path, e))
    }

    /// A non-negative integer at most `max`.
    fn uint(&self, node: &Node, path: &str, max: u64) -> Res<u64> {
        let Some(text) = self.num_text(node) else {
            return Err(self.err(node, path, format!("expected an integer in 0..={max}, found {}", node.val.kind())));
        };
        match text.parse::<u64>() {
            Ok(n) if n <= max && text.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
            _ => Err(self.err(node, path, format!("expected an integer in 0..={max}, found {text}"))),
        }
    }

    fn u32_in(&self, node: &Node, path: &str, lo: u32, hi: u32) -> Res<u32> {
        let expected = || format!("expected an integer in {lo}..={hi}, found {}", self.num_text(node).unwrap_or(node.val.kind()));
        match self.uint(node, path, u64::from(hi)) {
            Ok(n) if n >= u64::from(lo) => Ok(n as u32),
            _ => Err(self.err(node, path, expected())),
        }
    }

    fn boolean(&self, node: &Node, path: &str) -> Res<bool> {
        match node.val {
            Val::Bool(b) => Ok(b),
            ref other => Err(self.err(node, path, format!("expected true or false, found {}", other.kind()))),
        }
    }

    fn string<'n>(&self, node: &'n Node, path: &str, max: usize) -> Res<&'n str> {
        match &node.val {
            Val::Str(s) if s.len() <= max => Ok(s),
            Val::Str(s) => Err(self.err(node, path, format!("expected a string of at most {max} bytes, found {} bytes", s.len()))),
            other => Err(self.err(node, path, format!("expected a string, found {}", other.kind()))),
        }
    }

    /// A non-empty name of at most [`MAX_NAME_BYTES`].
    fn name<'n>(&self, node: &'n Node, path: &str) -> Res<&'n str> {
        let s = self.string(node, path, MAX_NAME_BYTES)?;
        if s.is_empty() {
            return Err(self.err(node, path, "expected a non-empty name"));
        }
        Ok(s)
    }

    fn array<'n>(&self, node: &'n Node, path: &str, max: usize) -> Res<&'n [Node]> {
        match &node.val {
            Val::Arr(items) if items.len() <= max => Ok(items),
            Val::Arr(items) => Err(self.err(node, path, format!("expected at most {max} entries, found {}", items.len()))),
            other => Err(self.err(node, path, format!("expected an array, found {}", other.kind()))),
        }
    }

    /// A point `[x, z]`.
    fn pos(&self, node: &Node, path: &str) -> Res<WorldPos> {
        match &node.val {
            Val::Arr(items) if items.len() == 2 => {
                Ok(WorldPos::new(self.fixed(&items[0], &format!("{path}[0]"))?, self.fixed(&items[1], &format!("{path}[1]"))?))
            }
            other => Err(self.err(node, path, format!("expected a point [x, z], found {}", other.kind()))),
        }
    }

    /// An object whose keys are all in `known` (each once).
    fn obj<'n>(&self, node: &'n Node, path: &str, known: &[&str]) -> Res<Obj<'n>> {
        let Val::Obj(entries) = &node.val else {
            return Err(self.err(node, path, format!("expected an object, found {}", node.val.kind())));
        };
        for (k, (key, value)) in entries.iter().enumerate() {
            if !known.contains(&key.as_str()) {
                let list = known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
                return Err(self.err(value, &join(path, key), format!("unknown field `{key}`, expected one of {list}")));
            }
            if entries[..k].iter().any(|(other, _)| other == key) {
                return Err(self.err(value, &join(path, key), format!("field `{key}` given twice")));
            }
        }
        Ok(Obj { node, path: path.to_string(), entries })
    }
}

/// `path.key`, or `key` at the top.
fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

/// A checked object and its path.
struct Obj<'n> {
    node: &'n Node,
    path: String,
    entries: &'n [(String, Node)],
}

impl<'n> Obj<'n> {
    fn get(&self, key: &str) -> Option<(&'n Node, String)> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| (v, join(&self.path, key)))
    }

    fn req(&self, cx: &Cx, key: &str) -> Res<(&'n Node, String)> {
        self.get(key).ok_or_else(|| cx.err(self.node, &self.path, format!("missing field `{key}`")))
    }

    /// The one key of `kinds` present (exactly one must be).
    fn one_of(&self, cx: &Cx, kinds: &[&str]) -> Res<(&'n str, &'n Node, String)> {
        let present: Vec<&(String, Node)> = self.entries.iter().filter(|(k, _)| kinds.contains(&k.as_str())).collect();
        let list = kinds.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
        match present.as_slice() {
            [(key, value)] => Ok((key.as_str(), value, join(&self.path, key))),
            [] => Err(cx.err(self.node, &self.path, format!("expected one of {list}"))),
            _ => Err(cx.err(self.node, &self.path, format!("expected only one of {list}"))),
        }
    }

    fn fixed_or(&self, cx: &Cx, key: &str, default: Fixed) -> Res<Fixed> {
        self.get(key).map_or(Ok(default), |(n, p)| cx.fixed(n, &p))
    }
}

// ---------------------------------------------------------------------------------------------
// The parsed scenario.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum ClassesSpec {
    ZeroAd,
    Text(String),
}

#[derive(Clone, Debug)]
enum Heights {
    Flat(Fixed),
    List(Vec<Fixed>),
}

#[derive(Clone, Debug)]
struct AreaSpec {
    name: String,
    vertices: Vec<WorldPos>,
    available: bool,
}

#[derive(Clone, Debug)]
struct ObstacleSpec {
    name: Option<String>,
    vertices: Vec<WorldPos>,
}

#[derive(Clone, Debug)]
struct TerrainSpec {
    tiles_w: u32,
    tiles_h: u32,
    tile_size: Fixed,
    heights: Heights,
    water_level: Fixed,
    cell_size: Fixed,
    border: MapBorder,
    areas: Vec<AreaSpec>,
    obstacles: Vec<ObstacleSpec>,
    object_padding: Fixed,
    boundary_padding: Fixed,
}

#[derive(Clone, Debug)]
enum MapKind {
    Generated { tiles: u32, seed: u64, buildings: u32, trees: u32, circular: bool },
    MovingAi { text: String, cell_size: Fixed },
    Grid { text: String },
    Terrain(Box<TerrainSpec>),
    Polygons { text: String },
}

#[derive(Clone, Debug)]
struct InitialObstruction {
    name: Option<String>,
    square: SquareSpec,
    flags: u8,
    id: u32,
}

/// An obstruction as a script names it.
#[derive(Clone, Copy, Debug)]
enum ObsRef {
    /// By name: index into `obstruction_names`.
    Named(usize),
    /// By id.
    Id(u32),
}

#[derive(Clone, Debug)]
enum GoalIn {
    Point(WorldPos),
    Circle { center: WorldPos, radius: Fixed },
    Square { center: WorldPos, half: Fixed },
    RangeUnit { group: usize, min: Fixed, max: Fixed },
    RangeObstruction { target: ObsRef, min: Fixed, max: Fixed },
}

#[derive(Clone, Debug)]
struct SpawnSpec {
    group: Option<usize>,
    class: u8,
    at: WorldPos,
    count: u16,
    radius: Fixed,
    speed: Fixed,
}

#[derive(Clone, Debug)]
enum Action {
    Spawn(SpawnSpec),
    Move { units: Vec<usize>, goal: GoalIn, queue: bool },
    Stop { units: Vec<usize> },
    Remove { units: Vec<usize> },
    PlaceObstruction { name: Option<usize>, square: SquareSpec, flags: u8 },
    PlaceBuilding { name: Option<usize>, class: u8, square: SquareSpec, builder: Option<usize> },
    SetObstructionFlags { target: ObsRef, flags: u8 },
    RemoveObstruction { target: ObsRef },
    SetArea { name: String, available: bool },
    EditTerrain { vx: u32, vz: u32, width: u32, heights: Vec<Fixed> },
    FormGroup { name: usize, units: Vec<usize>, layout: Layout },
    MoveFormation { formation: usize, goal: GoalIn },
    SetLayout { formation: usize, layout: Layout },
    Disband { formation: usize },
    SetWaypoints(WaypointNet),
    SetWaypointPriorities { class: u8, reset: bool, entries: Vec<PriorityEntry> },
    MoveByWaypoints { units: Vec<usize>, goal: WorldPos, queue: bool },
}

#[derive(Clone, Debug)]
struct Entry {
    turn: u32,
    player: PlayerId,
    seq: u32,
    comment: Option<String>,
    action: Action,
}

/// A parsed, checked scenario. Two scenarios are equal when their canonical texts are.
#[derive(Clone, Debug)]
pub struct Scenario {
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
    map_obstructions: Vec<(u32, Obstruction)>,
    /// The waypoint networks of the map (scenario coordinates), by class.
    waypoints: Vec<WaypointNet>,
    /// Scenario coordinates are world coordinates plus this (the south-west corner of a grid-text
    /// or polygon-config map); zero for the other maps.
    origin: WorldPos,
    obstructions: Vec<InitialObstruction>,
    obstruction_names: Vec<String>,
    /// Per obstruction name, its id when it is an initial obstruction.
    obstruction_initial: Vec<Option<u32>>,
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

/// A referenced or inline text (`{"file": ...}` or `{"text": ...}`).
struct TextRef {
    text: String,
    /// The file name as written, when it came from a file.
    file: Option<String>,
}

/// Parse-time tables: names to indices, and when each is first usable.
#[derive(Default)]
struct Names {
    groups: BTreeMap<String, usize>,
    group_names: Vec<String>,
    /// Turn the group is spawned on, and its unit count.
    group_spawn: Vec<(u32, u32)>,
    obstructions: BTreeMap<String, usize>,
    obstruction_names: Vec<String>,
    /// Turn from which a name is usable (initial: 0; placed on turn t: t + 1).
    obstruction_ready: Vec<u32>,
    obstruction_initial: Vec<Option<u32>>,
    formations: BTreeMap<String, usize>,
    formation_names: Vec<String>,
    /// Turn from which a formation name is usable (formed on turn t: t + 1).
    formation_ready: Vec<u32>,
}

/// The layouts by their names in scenario files.
const LAYOUTS: &[(&str, Layout)] =
    &[("line", Layout::Line), ("box", Layout::Box), ("column", Layout::Column), ("wedge", Layout::Wedge), ("loose", Layout::Loose)];

const ROOT_FIELDS: &[&str] =
    &["format", "version", "name", "description", "turns", "settings", "classes", "map", "obstructions", "waypoints", "units", "script"];
const MAP_KINDS: &[&str] = &["generated", "movingai", "grid", "terrain", "polygons"];
const COMMAND_KINDS: &[&str] = &[
    "spawn",
    "move",
    "stop",
    "remove",
    "place_obstruction",
    "place_building",
    "set_obstruction_flags",
    "remove_obstruction",
    "set_area",
    "edit_terrain",
    "form_group",
    "move_formation",
    "set_layout",
    "disband",
    "set_waypoints",
    "set_waypoint_priorities",
    "move_by_waypoints",
];
const GOAL_KINDS: &[&str] = &["point", "circle", "square", "range"];

/// Default unit half-size. `[Units: metres]`
const DEFAULT_RADIUS: Fixed = Fixed::lit("0.5");
/// Default unit speed. `[Units: metres per second]`
const DEFAULT_SPEED: Fixed = Fixed::lit("8");

impl Scenario {
    /// Parses scenario text; `origin` names the text in errors (a path or `"<replay header>"`);
    /// `resolve` returns the contents of a referenced file (the name as written) or an error
    /// string.
    ///
    /// # Errors
    /// [`ScenarioError`] for malformed JSON (with serde_json's line and column), a wrong `format`
    /// or `version` (naming both versions), an unknown, missing or repeated field, a value of the
    /// wrong type or out of its limits, an unknown group, class, obstruction or area name, a
    /// referenced file that cannot be read or parsed, or a map that cannot become a world.
    pub fn parse(text: &str, origin: &str, resolve: &mut dyn FnMut(&str) -> Result<String, String>) -> Result<Scenario, ScenarioError> {
        let whole = |message: String| ScenarioError { origin: origin.to_string(), line: None, column: None, path: String::new(), message };
        if text.len() > MAX_TEXT_BYTES {
            return Err(whole(format!("expected a scenario of at most {MAX_TEXT_BYTES} bytes, found {} bytes", text.len())));
        }
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
            let (line, column) = (e.line(), e.column());
            let message = e.to_string();
            let suffix = format!(" at line {line} column {column}");
            let message = message.strip_suffix(&suffix).unwrap_or(&message).to_string();
            return Err(ScenarioError {
                origin: origin.to_string(),
                line: u32::try_from(line).ok(),
                column: u32::try_from(column).ok(),
                path: String::new(),
                message,
            });
        }
        let mut scanner = Scanner { text, i: 0, values: 0 };
        let root = scanner.value(0).map_err(whole)?;
        let cx = Cx { origin, text };
        parse_root(&cx, &root, resolve)
    }

    /// Reads a scenario file, resolving file references relative to its directory. The file and
    /// every referenced file are read with a size cap ([`MAX_TEXT_BYTES`], [`MAX_FILE_BYTES`]).
    ///
    /// # Errors
    /// [`ScenarioError`] when the file cannot be read, and as [`Scenario::parse`].
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let origin = path.display().to_string();
        let text = read_capped(path, MAX_TEXT_BYTES).map_err(|message| ScenarioError {
            origin: origin.clone(),
            line: None,
            column: None,
            path: String::new(),
            message,
        })?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Scenario::parse(&text, &origin, &mut |name| read_capped(&dir.join(name), MAX_FILE_BYTES))
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
    pub fn settings(&self) -> &sim::world::Settings {
        &self.settings
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
    pub fn world(&self) -> Result<sim::world::World, sim::world::SetupError> {
        let mut obstructions = self.map_obstructions.clone();
        for o in &self.obstructions {
            let square = self.world_square(&o.square);
            let square = pathing::raster::editor_square(square.x, square.z, square.w, square.h, square.degrees)
                .map_err(|e| SetupError::Settings(format!("obstruction {}: {e}", o.id)))?;
            obstructions.push((o.id, Obstruction { square, flags: ObstructionFlags(o.flags) }));
        }
        let mut world = World::new(self.desc.clone(), obstructions, self.settings)?;
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

    /// A runner producing each turn's commands.
    pub fn script(&self) -> ScriptRunner<'_> {
        ScriptRunner {
            scenario: self,
            cursor: 0,
            groups: vec![Vec::new(); self.group_names.len()],
            obstruction_ids: self.obstruction_initial.clone(),
            formation_ids: vec![None; self.formation_names.len()],
            issued: Vec::new(),
            issued_turn: None,
        }
    }

    fn world_pos(&self, p: WorldPos) -> WorldPos {
        WorldPos::new(p.x.saturating_sub(self.origin.x), p.z.saturating_sub(self.origin.z))
    }

    fn world_square(&self, s: &SquareSpec) -> SquareSpec {
        let p = self.world_pos(WorldPos::new(s.x, s.z));
        SquareSpec { x: p.x, z: p.z, ..*s }
    }
}

/// Reads a file of at most `cap` bytes as UTF-8 text.
fn read_capped(path: &Path, cap: usize) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(cap as u64 + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() > cap {
        return Err(format!("{} is larger than {cap} bytes", path.display()));
    }
    String::from_utf8(bytes).map_err(|e| format!("{} is not UTF-8 text: {e}", path.display()))
}

// ---------------------------------------------------------------------------------------------
// Parsing.
// ---------------------------------------------------------------------------------------------

fn parse_root(cx: &Cx, root: &Node, resolve: &mut dyn FnMut(&str) -> Result<String, String>) -> Res<Scenario> {
    let Val::Obj(entries) = &root.val else {
        return Err(cx.err(root, "", format!("expected a scenario object, found {}", root.val.kind())));
    };
    // The format and version first, before the keys are checked: a newer version may have keys
    // this one does not know, and its error should be about the version.
    let raw = Obj { node: root, path: String::new(), entries };
    let (format_node, format_path) = raw.req(cx, "format")?;
    let format = cx.string(format_node, &format_path, MAX_NAME_BYTES)?;
    if format != FORMAT_NAME {
        return Err(cx.err(format_node, &format_path, format!("expected \"{FORMAT_NAME}\", found {format:?}")));
    }
    let (version_node, version_path) = raw.req(cx, "version")?;
    let version = cx.uint(version_node, &version_path, u64::from(u32::MAX))?;
    if !(u64::from(OLDEST_SCENARIO_VERSION)..=u64::from(SCENARIO_VERSION)).contains(&version) {
        return Err(cx.err(
            version_node,
            &version_path,
            format!(
                "expected version {OLDEST_SCENARIO_VERSION} to {SCENARIO_VERSION}, found version {version} (this program reads versions {OLDEST_SCENARIO_VERSION} to {SCENARIO_VERSION})"
            ),
        ));
    }
    let top = cx.obj(root, "", ROOT_FIELDS)?;
    let (n, p) = top.req(cx, "name")?;
    let name = cx.string(n, &p, MAX_NAME_BYTES)?.to_string();
    let description = match top.get("description") {
        Some((n, p)) => Some(cx.string(n, &p, MAX_DESCRIPTION_BYTES)?.to_string()),
        None => None,
    };
    let (n, p) = top.req(cx, "turns")?;
    let turns = cx.u32_in(n, &p, 1, MAX_TURN)?;
    let settings = match top.get("settings") {
        Some((n, p)) => parse_settings(cx, n, &p)?,
        None => Settings::default(),
    };
    let (classes_spec, classes) = match top.get("classes") {
        Some((n, p)) => parse_classes(cx, n, &p, resolve)?,
        None => (ClassesSpec::ZeroAd, ClassSet::zero_ad_defaults()),
    };
    let (n, p) = top.req(cx, "map")?;
    let map = parse_map_field(cx, n, &p, &classes, version, resolve)?;
    let mut names = Names::default();
    let first_id = map.obstructions.iter().map(|(id, _)| id.saturating_add(1)).max().unwrap_or(1);
    let obstructions = match top.get("obstructions") {
        Some((n, p)) => parse_obstructions(cx, n, &p, first_id, &mut names)?,
        None => Vec::new(),
    };
    let mut waypoints: Vec<WaypointNet> = Vec::new();
    if let Some((n, p)) = top.get("waypoints") {
        for (k, item) in cx.array(n, &p, usize::from(pathing::MAX_CLASSES))?.iter().enumerate() {
            let path = format!("{p}[{k}]");
            let net = parse_waypoint_net(cx, item, &path, &classes, &map.desc, map.origin)?;
            if net.points.is_empty() {
                return Err(cx.err(item, &path, "expected at least one waypoint"));
            }
            if waypoints.iter().any(|w| w.class == net.class) {
                return Err(cx.err(item, &path, "expected one network per class, found a second for this class"));
            }
            waypoints.push(net);
        }
        waypoints.sort_by_key(|w| w.class);
    }
    let mut seqs: BTreeMap<PlayerId, u32> = BTreeMap::new();
    let mut entries = Vec::new();
    if let Some((n, p)) = top.get("units") {
        for (k, item) in cx.array(n, &p, MAX_GROUPS)?.iter().enumerate() {
            let path = format!("{p}[{k}]");
            let o = cx.obj(item, &path, &["name", "player", "class", "at", "count", "radius", "speed", "comment"])?;
            let player = parse_player(cx, &o, &settings)?;
            let (nn, np) = o.req(cx, "name")?;
            let group = define_group(cx, nn, &np, 0, &mut names)?;
            let spawn = parse_spawn_fields(cx, &o, &classes, Some(group))?;
            names.group_spawn[group].1 = u32::from(spawn.count);
            let comment = parse_comment(cx, &o)?;
            entries.push(Entry { turn: 0, player, seq: next_seq(&mut seqs, player), comment, action: Action::Spawn(spawn) });
        }
    }
    let n_unit_entries = entries.len();
    if let Some((n, p)) = top.get("script") {
        for (k, item) in cx.array(n, &p, MAX_SCRIPT_ENTRIES)?.iter().enumerate() {
            let path = format!("{p}[{k}]");
            let entry = parse_entry(cx, item, &path, &settings, &classes, &map.desc, map.origin, &mut names, &mut seqs)?;
            entries.push(entry);
        }
    }
    let mut schedule: Vec<usize> = (0..entries.len()).collect();
    schedule.sort_by_key(|&k| (entries[k].turn, entries[k].player, entries[k].seq));
    let mut desc = map.desc;
    desc.jump_table_classes = map.jump_tables;
    desc.landmark_classes = map.landmarks;
    let mut scenario = Scenario {
        name,
        description,
        turns,
        settings,
        classes_spec,
        classes,
        map: map.kind,
        jump_tables: map.jump_tables,
        landmarks: map.landmarks,
        desc,
        map_obstructions: map.obstructions,
        waypoints,
        origin: map.origin,
        obstructions,
        obstruction_names: names.obstruction_names,
        obstruction_initial: names.obstruction_initial,
        group_names: names.group_names,
        formation_names: names.formation_names,
        entries,
        n_unit_entries,
        schedule,
        canonical: String::new(),
        digest: [0; 32],
    };
    scenario.canonical = write_canonical(&scenario);
    if scenario.canonical.len() > MAX_TEXT_BYTES {
        return Err(cx.err(
            root,
            "",
            format!(
                "the self-contained text with every file inlined would be {} bytes, expected at most {MAX_TEXT_BYTES}",
                scenario.canonical.len()
            ),
        ));
    }
    scenario.digest = *blake3::hash(scenario.canonical.as_bytes()).as_bytes();
    Ok(scenario)
}

fn next_seq(seqs: &mut BTreeMap<PlayerId, u32>, player: PlayerId) -> u32 {
    let seq = seqs.entry(player).or_insert(0);
    let out = *seq;
    *seq = seq.saturating_add(1);
    out
}

fn parse_settings(cx: &Cx, node: &Node, path: &str) -> Res<Settings> {
    let o = cx.obj(node, path, &["turn_ms", "players", "seed", "max_paths_per_turn", "motion"])?;
    let mut s = Settings::default();
    if let Some((n, p)) = o.get("turn_ms") {
        s.turn_ms = cx.u32_in(n, &p, 1, 10_000)?;
    }
    if let Some((n, p)) = o.get("players") {
        s.players = cx.u32_in(n, &p, 0, 255)? as u8;
    }
    if let Some((n, p)) = o.get("seed") {
        s.seed = cx.uint(n, &p, u64::MAX)?;
    }
    if let Some((n, p)) = o.get("max_paths_per_turn") {
        s.max_paths_per_turn = cx.u32_in(n, &p, 1, 65_535)? as u16;
    }
    if let Some((n, p)) = o.get("motion") {
        s.motion = parse_motion(cx, n, &p)?;
    }
    Ok(s)
}

const MOTION_FIELDS: &[&str] = &[
    "short_range",
    "short_range_step",
    "short_range_max",
    "short_node_budget",
    "max_short_paths_per_turn",
    "rejoin_radius",
    "long_replan_every",
    "give_up_turns",
    "core_fraction",
    "influence",
    "push_iterations",
    "nudge_distance",
    "replan_trigger",
    "replan_cooldown_ms",
    "moved_epsilon",
];

fn parse_motion(cx: &Cx, node: &Node, path: &str) -> Res<MotionSettings> {
    let o = cx.obj(node, path, MOTION_FIELDS)?;
    let mut m = MotionSettings::default();
    let fixed_fields: [(&str, &mut Fixed); 9] = [
        ("short_range", &mut m.short_range),
        ("short_range_step", &mut m.short_range_step),
        ("short_range_max", &mut m.short_range_max),
        ("rejoin_radius", &mut m.rejoin_radius),
        ("core_fraction", &mut m.core_fraction),
        ("influence", &mut m.influence),
        ("nudge_distance", &mut m.nudge_distance),
        ("replan_trigger", &mut m.replan_trigger),
        ("moved_epsilon", &mut m.moved_epsilon),
    ];
    for (key, slot) in fixed_fields {
        if let Some((n, p)) = o.get(key) {
            *slot = cx.fixed(n, &p)?;
        }
    }
    if let Some((n, p)) = o.get("short_node_budget") {
        m.short_node_budget = cx.u32_in(n, &p, 1, 65_535)?;
    }
    if let Some((n, p)) = o.get("max_short_paths_per_turn") {
        m.max_short_paths_per_turn = cx.u32_in(n, &p, 1, 65_535)? as u16;
    }
    let byte_fields: [(&str, &mut u8, u32); 3] = [
        ("long_replan_every", &mut m.long_replan_every, 1),
        ("give_up_turns", &mut m.give_up_turns, 1),
        ("push_iterations", &mut m.push_iterations, 0),
    ];
    for (key, slot, lo) in byte_fields {
        if let Some((n, p)) = o.get(key) {
            *slot = cx.u32_in(n, &p, lo, 255)? as u8;
        }
    }
    if let Some((n, p)) = o.get("replan_cooldown_ms") {
        m.replan_cooldown_ms = cx.u32_in(n, &p, 0, 60_000)?;
    }
    m.check().map_err(|e| cx.err(node, path, format!("expected motion settings within their limits: {e}")))?;
    Ok(m)
}

/// `{"file": NAME}` or `{"text": TEXT}`, at most [`MAX_FILE_BYTES`].
fn parse_text_ref(cx: &Cx, node: &Node, path: &str, resolve: &mut dyn FnMut(&str) -> Result<String, String>) -> Res<TextRef> {
    let o = cx.obj(node, path, &["file", "text"])?;
    let (kind, n, p) = o.one_of(cx, &["file", "text"])?;
    let (text, file) = if kind == "file" {
        let name = cx.name(n, &p)?;
        let text = resolve(name).map_err(|e| cx.err(n, &p, format!("expected a readable file: {e}")))?;
        (text, Some(name.to_string()))
    } else {
        (cx.string(n, &p, MAX_FILE_BYTES)?.to_string(), None)
    };
    if text.len() > MAX_FILE_BYTES {
        return Err(cx.err(n, &p, format!("expected at most {MAX_FILE_BYTES} bytes, found {}", text.len())));
    }
    Ok(TextRef { text, file })
}

/// An error inside a referenced text: in the file itself when it came from one, else at the
/// inline string with the line inside it.
fn text_err(cx: &Cx, node: &Node, path: &str, src: &TextRef, line: Option<u32>, column: Option<u32>, message: String) -> ScenarioError {
    match &src.file {
        Some(file) => ScenarioError { origin: file.clone(), line, column, path: path.to_string(), message },
        None => match line {
            Some(line) => cx.err(node, path, format!("inline text line {line}: {message}")),
            None => cx.err(node, path, message),
        },
    }
}

fn parse_classes(
    cx: &Cx,
    node: &Node,
    path: &str,
    resolve: &mut dyn FnMut(&str) -> Result<String, String>,
) -> Res<(ClassesSpec, ClassSet)> {
    if let Val::Str(s) = &node.val {
        if s == "zero_ad" {
            return Ok((ClassesSpec::ZeroAd, ClassSet::zero_ad_defaults()));
        }
        return Err(cx.err(node, path, format!("expected \"zero_ad\" or {{\"file\"|\"text\": ...}}, found {s:?}")));
    }
    let src = parse_text_ref(cx, node, path, resolve)?;
    match ClassSet::parse_json(&src.text) {
        Ok(set) => Ok((ClassesSpec::Text(src.text), set)),
        Err(e) => {
            let (line, column, message) = match e {
                ClassFileError::Syntax { line, column, expected } => (Some(line), Some(column), expected),
                ClassFileError::Invalid { at, problem } => (at.map(|p| p.line), at.map(|p| p.column), problem.to_string()),
                other => (None, None, other.to_string()),
            };
            let to_u32 = |v: Option<usize>| v.and_then(|v| u32::try_from(v).ok());
            Err(text_err(cx, node, path, &src, to_u32(line), to_u32(column), format!("class file: {message}")))
        }
    }
}

/// A class by name or index.
fn parse_class(cx: &Cx, node: &Node, path: &str, classes: &ClassSet) -> Res<u8> {
    match &node.val {
        Val::Str(name) => classes.by_name(name).map(PassClass::index).map_err(|_| {
            let list = classes.iter().map(|(_, d)| format!("{:?}", d.name)).collect::<Vec<_>>().join(", ");
            cx.err(node, path, format!("unknown class {name:?}, expected one of {list}"))
        }),
        Val::Num(..) => {
            let max = u64::from(classes.len().saturating_sub(1));
            Ok(cx.uint(node, path, max)? as u8)
        }
        other => Err(cx.err(node, path, format!("expected a class name or index, found {}", other.kind()))),
    }
}

/// What a `map` field builds.
struct MapBuilt {
    kind: MapKind,
    desc: WorldDesc,
    obstructions: Vec<(u32, Obstruction)>,
    origin: WorldPos,
    jump_tables: u16,
    landmarks: u16,
}

fn check_cells(cx: &Cx, node: &Node, path: &str, width: u32, height: u32) -> Res<()> {
    let cells = u64::from(width) * u64::from(height);
    if cells > MAX_GRID_CELLS {
        return Err(cx.err(node, path, format!("expected a grid of at most {MAX_GRID_CELLS} navcells, found {width}x{height}")));
    }
    Ok(())
}

fn parse_map_field(
    cx: &Cx,
    node: &Node,
    path: &str,
    classes: &ClassSet,
    version: u64,
    resolve: &mut dyn FnMut(&str) -> Result<String, String>,
) -> Res<MapBuilt> {
    let o = cx.obj(node, path, &["generated", "movingai", "grid", "terrain", "polygons", "cell_size", "jump_tables", "landmarks"])?;
    let (kind, n, p) = o.one_of(cx, MAP_KINDS)?;
    if kind != "movingai"
        && let Some((cn, cp)) = o.get("cell_size")
    {
        return Err(cx.err(cn, &cp, "`cell_size` applies to `movingai` maps only (the other maps give their own)"));
    }
    let mut origin = WorldPos::new(Fixed::ZERO, Fixed::ZERO);
    let mut obstructions = Vec::new();
    let (kind, desc) = match kind {
        "generated" => {
            let g = cx.obj(n, &p, &["tiles", "seed", "buildings", "trees", "circular"])?;
            let (tn, tp) = g.req(cx, "tiles")?;
            let tiles = cx.u32_in(tn, &tp, 16, MAX_GENERATED_TILES)?;
            let seed = match g.get("seed") {
                Some((n, p)) => cx.uint(n, &p, u64::MAX)?,
                None => 0,
            };
            let mut params = RefWorldParams::scaled(tiles, seed);
            if let Some((n, p)) = g.get("buildings") {
                params.buildings = cx.u32_in(n, &p, 0, 10_000)?;
            }
            if let Some((n, p)) = g.get("trees") {
                params.trees = cx.u32_in(n, &p, 0, 100_000)?;
            }
            if let Some((n, p)) = g.get("circular") {
                params.circular = cx.boolean(n, &p)?;
            }
            let (mut desc, obs) = generate(&params);
            desc.classes = classes.clone();
            obstructions = obs;
            let kind = MapKind::Generated {
                tiles: params.tiles,
                seed: params.seed,
                buildings: params.buildings,
                trees: params.trees,
                circular: params.circular,
            };
            (kind, desc)
        }
        "movingai" => {
            let src = parse_text_ref(cx, n, &p, resolve)?;
            let cell_size = o.fixed_or(cx, "cell_size", Fixed::ONE)?;
            if cell_size <= Fixed::ZERO || cell_size > MAX_CELL_SIZE {
                let (cn, cp) = o.get("cell_size").unwrap_or((n, p.clone()));
                return Err(cx.err(cn, &cp, format!("expected a navcell size in (0, {MAX_CELL_SIZE}], found {cell_size}")));
            }
            let map = parse_map(&src.text).map_err(|e| parse_error(cx, n, &p, &src, "Moving AI map", &e))?;
            let (w, h) = (map.grid.width(), map.grid.height());
            check_cells(cx, n, &p, w, h)?;
            let desc = WorldDesc::from_cells(w, h, cell_size, map.cell_kinds(), classes.clone())
                .map_err(|e| cx.err(n, &p, format!("expected a map that can become a world: {e}")))?;
            (MapKind::MovingAi { text: src.text, cell_size }, desc)
        }
        "grid" => {
            let src = parse_text_ref(cx, n, &p, resolve)?;
            let grid = parse_grid_text(&src.text).map_err(|e| parse_error(cx, n, &p, &src, "grid text", &e))?;
            let (w, h) = (grid.grid.width(), grid.grid.height());
            check_cells(cx, n, &p, w, h)?;
            origin = WorldPos::new(grid.min_x, grid.min_z);
            let desc = WorldDesc::from_cells(w, h, grid.cell_size, grid.cell_kinds(), classes.clone())
                .map_err(|e| cx.err(n, &p, format!("expected a grid that can become a world: {e}")))?;
            (MapKind::Grid { text: src.text }, desc)
        }
        "polygons" => {
            let src = parse_text_ref(cx, n, &p, resolve)?;
            let config = PolygonConfig::parse_json(&src.text).map_err(|e| {
                let (line, column) = match &e {
                    ConfigError::Json { line, column, .. }
                    | ConfigError::BadPolygon { line, column, .. }
                    | ConfigError::DuplicateAreaName { line, column, .. } => (u32::try_from(*line).ok(), u32::try_from(*column).ok()),
                    _ => (None, None),
                };
                let message = match &e {
                    ConfigError::Json { message, .. } => message.clone(),
                    other => {
                        let text = other.to_string();
                        // Drop the position prefix that Display adds; it is in line and column.
                        match text.split_once(": ") {
                            Some((head, rest)) if head.starts_with("line ") => rest.to_string(),
                            _ => text,
                        }
                    }
                };
                text_err(cx, n, &p, &src, line, column, format!("polygon config: {message}"))
            })?;
            let bounds = config.grid_bounds().map_err(|e| cx.err(n, &p, format!("polygon config: {e}")))?;
            check_cells(cx, n, &p, bounds.width, bounds.depth)?;
            let (desc, bounds) = WorldDesc::from_polygon_config(&config, classes.clone())
                .map_err(|e| cx.err(n, &p, format!("expected a polygon config that can become a world: {e}")))?;
            origin = WorldPos::new(bounds.min_x, bounds.min_z);
            (MapKind::Polygons { text: src.text }, desc)
        }
        _ => {
            let spec = parse_terrain(cx, n, &p)?;
            let desc = terrain_desc(cx, n, &p, &spec, classes)?;
            (MapKind::Terrain(Box::new(spec)), desc)
        }
    };
    let cells = u64::from(desc.grid.width) * u64::from(desc.grid.height);
    let jump_tables = match o.get("jump_tables") {
        Some((n, p)) => class_mask(cx, n, &p, classes, cells, sim::snapshot::MAX_JUMP_TABLE_CELLS, "jump tables", version < 4)?,
        None => 0,
    };
    let landmarks = match o.get("landmarks") {
        Some((n, p)) => class_mask(cx, n, &p, classes, cells, sim::snapshot::MAX_LANDMARK_CELLS, "landmark tables", false)?,
        None => 0,
    };
    Ok(MapBuilt { kind, desc, obstructions, origin, jump_tables, landmarks })
}

/// A list of classes as a bit mask, limited as a snapshot limits the tables built for them
/// (`World::load` refuses more), counted as it counts them: `limit` navcells in all.
/// Foundation classes are refused, or dropped when `drop_foundation` (older files).
#[allow(clippy::too_many_arguments)] // the limit's two numbers and its name come on top of the key
fn class_mask(cx: &Cx, n: &Node, p: &str, classes: &ClassSet, cells: u64, limit: u64, what: &str, drop_foundation: bool) -> Res<u16> {
    let mut mask = 0u16;
    for (k, item) in cx.array(n, p, 16)?.iter().enumerate() {
        let item_path = format!("{p}[{k}]");
        let class = parse_class(cx, item, &item_path, classes)?;
        let def = PassClass::new(class).and_then(|c| classes.get(c));
        if def.is_some_and(|d| d.obstructions == ObstructionMode::Foundation) {
            if drop_foundation {
                continue; // what versions before 4 did with them: no table, so no bit
            }
            let name = def.map_or("", |d| d.name.as_str());
            return Err(cx.err(
                item,
                &item_path,
                format!("expected a movement class, found the foundation class {name:?} (only movement classes search)"),
            ));
        }
        mask |= 1 << class;
    }
    if cells * u64::from(mask.count_ones()) > limit {
        return Err(cx.err(
            n,
            p,
            format!(
                "{what} for at most {limit} navcells in all (so that every state can be saved), found {} classes on {cells} navcells",
                mask.count_ones()
            ),
        ));
    }
    Ok(mask)
}

fn parse_error(cx: &Cx, node: &Node, path: &str, src: &TextRef, what: &str, e: &ParseError) -> ScenarioError {
    let found = if e.found == "<end of input>" { e.found.clone() } else { format!("{:?}", e.found) };
    text_err(cx, node, path, src, Some(e.line), None, format!("{what}: expected {}, found {found}", e.expected))
}

fn parse_polygon_vertices(cx: &Cx, node: &Node, path: &str) -> Res<Vec<WorldPos>> {
    let items = cx.array(node, path, pathing::polygon::MAX_VERTICES)?;
    let vertices = items.iter().enumerate().map(|(k, v)| cx.pos(v, &format!("{path}[{k}]"))).collect::<Res<Vec<_>>>()?;
    pathing::polygon::Polygon::new(vertices.clone()).map_err(|e| cx.err(node, path, format!("expected a simple polygon: {e}")))?;
    Ok(vertices)
}

fn parse_terrain(cx: &Cx, node: &Node, path: &str) -> Res<TerrainSpec> {
    let o = cx.obj(
        node,
        path,
        &[
            "tiles",
            "tile_size",
            "heights",
            "flat",
            "water_level",
            "cell_size",
            "border",
            "areas",
            "obstacles",
            "object_padding",
            "boundary_padding",
        ],
    )?;
    let (tn, tp) = o.req(cx, "tiles")?;
    let (tiles_w, tiles_h) = match &tn.val {
        Val::Arr(items) if items.len() == 2 => {
            (cx.u32_in(&items[0], &format!("{tp}[0]"), 1, 16_384)?, cx.u32_in(&items[1], &format!("{tp}[1]"), 1, 16_384)?)
        }
        other => return Err(cx.err(tn, &tp, format!("expected [tiles across, tiles down], found {}", other.kind()))),
    };
    let vertices = (u64::from(tiles_w) + 1) * (u64::from(tiles_h) + 1);
    if vertices > MAX_TERRAIN_VERTICES {
        return Err(cx.err(tn, &tp, format!("expected at most {MAX_TERRAIN_VERTICES} terrain vertices, found {vertices}")));
    }
    let tile_size = o.fixed_or(cx, "tile_size", Fixed::from_num(4))?;
    let heights = match (o.get("heights"), o.get("flat")) {
        (Some(_), Some((n, p))) => return Err(cx.err(n, &p, "expected `heights` or `flat`, not both")),
        (Some((n, p)), None) => {
            let items = cx.array(n, &p, MAX_TERRAIN_VERTICES as usize)?;
            if items.len() as u64 != vertices {
                return Err(cx.err(
                    n,
                    &p,
                    format!("expected {vertices} heights ((tiles across + 1) × (tiles down + 1)), found {}", items.len()),
                ));
            }
            Heights::List(items.iter().enumerate().map(|(k, v)| cx.fixed(v, &format!("{p}[{k}]"))).collect::<Res<Vec<_>>>()?)
        }
        (None, Some((n, p))) => Heights::Flat(cx.fixed(n, &p)?),
        (None, None) => Heights::Flat(Fixed::ZERO),
    };
    let water_level = o.fixed_or(cx, "water_level", Fixed::ZERO)?;
    let cell_size = o.fixed_or(cx, "cell_size", Fixed::ONE)?;
    let border = match o.get("border") {
        None => MapBorder::None,
        Some((n, p)) => {
            let b = cx.obj(n, &p, &["shape", "width"])?;
            let (sn, sp) = b.req(cx, "shape")?;
            let width = match b.get("width") {
                Some((n, p)) => cx.u32_in(n, &p, 0, 65_535)?,
                None => 0,
            };
            match cx.string(sn, &sp, MAX_NAME_BYTES)? {
                "none" => MapBorder::None,
                "square" => MapBorder::Square { width },
                "circle" => MapBorder::Circle { width },
                other => return Err(cx.err(sn, &sp, format!("expected \"none\", \"square\" or \"circle\", found {other:?}"))),
            }
        }
    };
    let mut areas: Vec<AreaSpec> = Vec::new();
    if let Some((n, p)) = o.get("areas") {
        for (k, item) in cx.array(n, &p, 4096)?.iter().enumerate() {
            let path = format!("{p}[{k}]");
            let a = cx.obj(item, &path, &["name", "vertices", "available"])?;
            let (nn, np) = a.req(cx, "name")?;
            let name = cx.name(nn, &np)?.to_string();
            if areas.iter().any(|other| other.name == name) {
                return Err(cx.err(nn, &np, format!("expected a unique area name, found {name:?} a second time")));
            }
            let (vn, vp) = a.req(cx, "vertices")?;
            let vertices = parse_polygon_vertices(cx, vn, &vp)?;
            let available = match a.get("available") {
                Some((n, p)) => cx.boolean(n, &p)?,
                None => true,
            };
            areas.push(AreaSpec { name, vertices, available });
        }
    }
    let mut obstacles = Vec::new();
    if let Some((n, p)) = o.get("obstacles") {
        for (k, item) in cx.array(n, &p, 4096)?.iter().enumerate() {
            let path = format!("{p}[{k}]");
            let a = cx.obj(item, &path, &["name", "vertices"])?;
            let name = match a.get("name") {
                Some((n, p)) => Some(cx.name(n, &p)?.to_string()),
                None => None,
            };
            let (vn, vp) = a.req(cx, "vertices")?;
            obstacles.push(ObstacleSpec { name, vertices: parse_polygon_vertices(cx, vn, &vp)? });
        }
    }
    let object_padding = o.fixed_or(cx, "object_padding", Fixed::ZERO)?;
    let boundary_padding = o.fixed_or(cx, "boundary_padding", Fixed::ZERO)?;
    for (key, v) in [("object_padding", object_padding), ("boundary_padding", boundary_padding)] {
        if v < Fixed::ZERO {
            let (n, p) = o.get(key).unwrap_or((node, path.to_string()));
            return Err(cx.err(n, &p, format!("expected a padding ≥ 0, found {v}")));
        }
    }
    Ok(TerrainSpec {
        tiles_w,
        tiles_h,
        tile_size,
        heights,
        water_level,
        cell_size,
        border,
        areas,
        obstacles,
        object_padding,
        boundary_padding,
    })
}

fn terrain_desc(cx: &Cx, node: &Node, path: &str, spec: &TerrainSpec, classes: &ClassSet) -> Res<WorldDesc> {
    let terrain = match &spec.heights {
        Heights::Flat(h) => Terrain::flat(spec.tiles_w, spec.tiles_h, spec.tile_size, *h, spec.water_level),
        Heights::List(list) => Terrain::new(spec.tiles_w, spec.tiles_h, spec.tile_size, list.clone(), spec.water_level),
    }
    .map_err(|e| cx.err(node, path, format!("expected a valid heightmap: {e}")))?;
    let grid = GridSpec::covering(&terrain, spec.cell_size).map_err(|e| cx.err(node, path, format!("expected a valid grid: {e}")))?;
    check_cells(cx, node, path, grid.width, grid.height)?;
    let polygon = |vertices: &[WorldPos]| {
        pathing::polygon::Polygon::new(vertices.to_vec()).map_err(|e| cx.err(node, path, format!("expected a simple polygon: {e}")))
    };
    let areas = spec
        .areas
        .iter()
        .map(|a| Ok(NavArea { name: a.name.clone(), polygon: polygon(&a.vertices)?, available: a.available }))
        .collect::<Res<Vec<_>>>()?;
    let obstacles = spec.obstacles.iter().map(|o| polygon(&o.vertices)).collect::<Res<Vec<_>>>()?;
    Ok(WorldDesc {
        grid,
        classes: classes.clone(),
        terrain,
        border: spec.border,
        areas,
        obstacles,
        object_padding: spec.object_padding,
        boundary_padding: spec.boundary_padding,
        jump_table_classes: 0,
        landmark_classes: 0,
        cells: Vec::new(),
    })
}

/// Obstruction flags: a name (`none`, `pathfinding`, `foundation`, `static`), a number 0..=3, or
/// a list of names.
fn parse_flags(cx: &Cx, node: &Node, path: &str) -> Res<u8> {
    let by_name = |node: &Node, path: &str, name: &str| match name {
        "none" => Ok(0),
        "pathfinding" => Ok(ObstructionFlags::BLOCK_PATHFINDING),
        "foundation" => Ok(ObstructionFlags::BLOCK_FOUNDATION),
        "static" => Ok(ObstructionFlags::STATIC.0),
        other => Err(cx.err(node, path, format!("expected \"none\", \"pathfinding\", \"foundation\" or \"static\", found {other:?}"))),
    };
    match &node.val {
        Val::Str(s) => by_name(node, path, s),
        Val::Num(..) => Ok(cx.uint(node, path, 3)? as u8),
        Val::Arr(items) if items.len() <= 4 => {
            let mut flags = 0;
            for (k, item) in items.iter().enumerate() {
                let p = format!("{path}[{k}]");
                flags |= by_name(item, &p, cx.string(item, &p, MAX_NAME_BYTES)?)?;
            }
            Ok(flags)
        }
        other => Err(cx.err(node, path, format!("expected obstruction flags (a name, a list of names or 0..=3), found {}", other.kind()))),
    }
}

fn flags_name(flags: u8) -> &'static str {
    match flags {
        0 => "none",
        ObstructionFlags::BLOCK_PATHFINDING => "pathfinding",
        ObstructionFlags::BLOCK_FOUNDATION => "foundation",
        _ => "static",
    }
}

/// The square fields `x`, `z`, `w`, `h`, `degrees` (0 by default) of an object.
fn parse_square(cx: &Cx, o: &Obj) -> Res<SquareSpec> {
    let get = |key: &str| -> Res<Fixed> {
        let (n, p) = o.req(cx, key)?;
        cx.fixed(n, &p)
    };
    let square = SquareSpec { x: get("x")?, z: get("z")?, w: get("w")?, h: get("h")?, degrees: o.fixed_or(cx, "degrees", Fixed::ZERO)? };
    if let Err(e) = pathing::raster::editor_square(square.x, square.z, square.w, square.h, square.degrees) {
        return Err(cx.err(o.node, &o.path, format!("expected a square with sizes ≥ 0 and coordinates in range: {e}")));
    }
    if square.w <= Fixed::ZERO && square.h <= Fixed::ZERO {
        return Err(cx.err(o.node, &o.path, "expected a square with a positive width or height"));
    }
    Ok(square)
}

/// A new obstruction name usable from turn `ready`.
fn define_obstruction(cx: &Cx, node: &Node, path: &str, ready: u32, initial: Option<u32>, names: &mut Names) -> Res<usize> {
    let name = cx.name(node, path)?;
    if names.obstructions.contains_key(name) {
        return Err(cx.err(node, path, format!("expected a new obstruction name, found {name:?} a second time")));
    }
    let index = names.obstruction_names.len();
    names.obstructions.insert(name.to_string(), index);
    names.obstruction_names.push(name.to_string());
    names.obstruction_ready.push(ready);
    names.obstruction_initial.push(initial);
    Ok(index)
}

fn parse_obstructions(cx: &Cx, node: &Node, path: &str, first_id: u32, names: &mut Names) -> Res<Vec<InitialObstruction>> {
    let mut out = Vec::new();
    for (k, item) in cx.array(node, path, MAX_OBSTRUCTIONS)?.iter().enumerate() {
        let p = format!("{path}[{k}]");
        let o = cx.obj(item, &p, &["name", "x", "z", "w", "h", "degrees", "flags"])?;
        let square = parse_square(cx, &o)?;
        let flags = match o.get("flags") {
            Some((n, p)) => parse_flags(cx, n, &p)?,
            None => ObstructionFlags::STATIC.0,
        };
        let id =
            first_id.checked_add(k as u32).filter(|&id| id != u32::MAX).ok_or_else(|| cx.err(item, &p, "obstruction ids exhausted"))?;
        let name = match o.get("name") {
            Some((n, np)) => {
                define_obstruction(cx, n, &np, 0, Some(id), names)?;
                Some(cx.name(n, &np)?.to_string())
            }
            None => None,
        };
        out.push(InitialObstruction { name, square, flags, id });
    }
    Ok(out)
}

fn parse_player(cx: &Cx, o: &Obj, settings: &Settings) -> Res<PlayerId> {
    match o.get("player") {
        Some((n, p)) => {
            let max = u32::from(settings.players);
            let player = cx.uint(n, &p, 255)?;
            if player > u64::from(max) {
                return Err(cx.err(n, &p, format!("expected a player in 0..={max} (settings.players), found {player}")));
            }
            Ok(player as u8)
        }
        None if settings.players >= 1 => Ok(1),
        None => Err(cx.err(o.node, &o.path, "missing field `player` (settings.players is 0, so only player 0 exists)")),
    }
}

fn parse_comment(cx: &Cx, o: &Obj) -> Res<Option<String>> {
    match o.get("comment") {
        Some((n, p)) => Ok(Some(cx.string(n, &p, MAX_DESCRIPTION_BYTES)?.to_string())),
        None => Ok(None),
    }
}

/// A new group, spawned on `turn`.
fn define_group(cx: &Cx, node: &Node, path: &str, turn: u32, names: &mut Names) -> Res<usize> {
    let name = cx.name(node, path)?;
    if names.groups.contains_key(name) {
        return Err(cx.err(node, path, format!("expected a new group name, found {name:?} a second time")));
    }
    if names.group_names.len() >= MAX_GROUPS {
        return Err(cx.err(node, path, format!("expected at most {MAX_GROUPS} groups")));
    }
    let index = names.group_names.len();
    names.groups.insert(name.to_string(), index);
    names.group_names.push(name.to_string());
    names.group_spawn.push((turn, 0));
    Ok(index)
}

/// The spawn fields `class`, `at`, `count`, `radius`, `speed` of a units entry or a spawn command.
fn parse_spawn_fields(cx: &Cx, o: &Obj, classes: &ClassSet, group: Option<usize>) -> Res<SpawnSpec> {
    let class = match o.get("class") {
        Some((n, p)) => {
            let class = parse_class(cx, n, &p, classes)?;
            let movement =
                PassClass::new(class).and_then(|c| classes.get(c)).is_some_and(|d| d.obstructions != ObstructionMode::Foundation);
            if !movement {
                return Err(cx.err(n, &p, "expected a movement class (a foundation class is for buildings)"));
            }
            class
        }
        None => 0,
    };
    let (an, ap) = o.req(cx, "at")?;
    let at = cx.pos(an, &ap)?;
    let count = match o.get("count") {
        Some((n, p)) => cx.u32_in(n, &p, 1, 256)? as u16,
        None => 1,
    };
    let radius = o.fixed_or(cx, "radius", DEFAULT_RADIUS)?;
    if radius <= Fixed::ZERO || radius > Fixed::from_num(8) {
        let (n, p) = o.get("radius").unwrap_or((o.node, o.path.clone()));
        return Err(cx.err(n, &p, format!("expected a radius in (0, 8], found {radius}")));
    }
    let speed = o.fixed_or(cx, "speed", DEFAULT_SPEED)?;
    if speed <= Fixed::ZERO || speed > Fixed::from_num(64) {
        let (n, p) = o.get("speed").unwrap_or((o.node, o.path.clone()));
        return Err(cx.err(n, &p, format!("expected a speed in (0, 64], found {speed}")));
    }
    Ok(SpawnSpec { group, class, at, count, radius, speed })
}

/// A group name usable on `turn` (spawned on an earlier turn).
fn group_ref(cx: &Cx, node: &Node, path: &str, turn: u32, names: &Names) -> Res<usize> {
    let name = cx.name(node, path)?;
    let Some(&group) = names.groups.get(name) else {
        return Err(cx.err(node, path, format!("unknown group {name:?} (groups are named by `units` entries and spawns with a `group`)")));
    };
    let spawned = names.group_spawn[group].0;
    if spawned >= turn {
        return Err(cx.err(
            node,
            path,
            format!("group {name:?} is spawned on turn {spawned}; its units can be named from turn {} on", spawned.saturating_add(1)),
        ));
    }
    Ok(group)
}

/// A new formation name, usable from the turn after `turn`.
fn define_formation(cx: &Cx, node: &Node, path: &str, turn: u32, names: &mut Names) -> Res<usize> {
    let name = cx.name(node, path)?;
    if names.formations.contains_key(name) {
        return Err(cx.err(node, path, format!("expected a new formation name, found {name:?} a second time")));
    }
    if names.formation_names.len() >= MAX_GROUPS {
        return Err(cx.err(node, path, format!("expected at most {MAX_GROUPS} formations")));
    }
    let index = names.formation_names.len();
    names.formations.insert(name.to_string(), index);
    names.formation_names.push(name.to_string());
    names.formation_ready.push(turn.saturating_add(1));
    Ok(index)
}

/// A formation named by an earlier `form_group`.
fn formation_ref(cx: &Cx, node: &Node, path: &str, turn: u32, names: &Names) -> Res<usize> {
    let name = cx.name(node, path)?;
    let Some(&k) = names.formations.get(name) else {
        return Err(cx.err(node, path, format!("unknown formation {name:?} (formations are named by `form_group`)")));
    };
    let ready = names.formation_ready[k];
    if ready > turn {
        return Err(cx.err(
            node,
            path,
            format!("formation {name:?} is formed on turn {}; it can be named from turn {ready} on", ready - 1),
        ));
    }
    Ok(k)
}

/// A layout by name.
fn parse_layout(cx: &Cx, node: &Node, path: &str) -> Res<Layout> {
    let name = cx.name(node, path)?;
    LAYOUTS.iter().find(|(n, _)| *n == name).map(|(_, l)| *l).ok_or_else(|| {
        let list = LAYOUTS.iter().map(|(n, _)| format!("{n:?}")).collect::<Vec<_>>().join(", ");
        cx.err(node, path, format!("expected a layout, one of {list}, found {name:?}"))
    })
}

fn layout_name(layout: Layout) -> &'static str {
    LAYOUTS.iter().find(|(_, l)| *l == layout).map_or("box", |(n, _)| n)
}

/// `units`: a non-empty list of distinct group names, at most [`MAX_UNITS_PER_COMMAND`] units.
fn parse_units(cx: &Cx, o: &Obj, turn: u32, names: &Names) -> Res<Vec<usize>> {
    let (n, p) = o.req(cx, "units")?;
    let items = cx.array(n, &p, MAX_GROUPS)?;
    if items.is_empty() {
        return Err(cx.err(n, &p, "expected at least one group name"));
    }
    let mut groups = Vec::new();
    let mut total = 0u32;
    for (k, item) in items.iter().enumerate() {
        let ip = format!("{p}[{k}]");
        let group = group_ref(cx, item, &ip, turn, names)?;
        if groups.contains(&group) {
            return Err(cx.err(item, &ip, format!("group {:?} named twice", names.group_names[group])));
        }
        total = total.saturating_add(names.group_spawn[group].1);
        groups.push(group);
    }
    if total > MAX_UNITS_PER_COMMAND {
        return Err(cx.err(n, &p, format!("expected at most {MAX_UNITS_PER_COMMAND} units in one command, found {total}")));
    }
    Ok(groups)
}

/// An obstruction by name (usable on `turn`) or id.
fn obstruction_ref(cx: &Cx, node: &Node, path: &str, turn: u32, names: &Names) -> Res<ObsRef> {
    if let Val::Num(..) = node.val {
        return Ok(ObsRef::Id(cx.uint(node, path, u64::from(u32::MAX - 1))? as u32));
    }
    let name = cx.name(node, path)?;
    let Some(&index) = names.obstructions.get(name) else {
        return Err(cx.err(
            node,
            path,
            format!("unknown obstruction {name:?} (name it in `obstructions`, `place_obstruction` or `place_building`)"),
        ));
    };
    let ready = names.obstruction_ready[index];
    if ready > turn {
        return Err(cx.err(
            node,
            path,
            format!("obstruction {name:?} is placed on turn {}; it can be named from turn {ready} on", ready - 1),
        ));
    }
    Ok(ObsRef::Named(index))
}

fn parse_goal(cx: &Cx, node: &Node, path: &str, turn: u32, names: &Names) -> Res<GoalIn> {
    let o = cx.obj(node, path, GOAL_KINDS)?;
    let (kind, n, p) = o.one_of(cx, GOAL_KINDS)?;
    match kind {
        "point" => Ok(GoalIn::Point(cx.pos(n, &p)?)),
        "circle" | "square" => {
            let size = if kind == "circle" { "radius" } else { "half" };
            let g = cx.obj(n, &p, &["center", size])?;
            let (cn, cp) = g.req(cx, "center")?;
            let center = cx.pos(cn, &cp)?;
            let (sn, sp) = g.req(cx, size)?;
            let value = cx.fixed(sn, &sp)?;
            if value < Fixed::ZERO {
                return Err(cx.err(sn, &sp, format!("expected a {size} ≥ 0, found {value}")));
            }
            Ok(if kind == "circle" { GoalIn::Circle { center, radius: value } } else { GoalIn::Square { center, half: value } })
        }
        _ => {
            let g = cx.obj(n, &p, &["unit", "obstruction", "min", "max"])?;
            let min = g.fixed_or(cx, "min", Fixed::ZERO)?;
            let (mn, mp) = g.req(cx, "max")?;
            let max = cx.fixed(mn, &mp)?;
            if min < Fixed::ZERO || min > max || max > sim::world::MAX_RANGE {
                return Err(cx.err(mn, &mp, format!("expected 0 ≤ min ≤ max ≤ {}, found min {min}, max {max}", sim::world::MAX_RANGE)));
            }
            let (target_kind, tn, tp) = g.one_of(cx, &["unit", "obstruction"])?;
            if target_kind == "unit" {
                Ok(GoalIn::RangeUnit { group: group_ref(cx, tn, &tp, turn, names)?, min, max })
            } else {
                Ok(GoalIn::RangeObstruction { target: obstruction_ref(cx, tn, &tp, turn, names)?, min, max })
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
/// A waypoint network: `{"class", "range", "points"}` (points in scenario coordinates, each on the
/// map; an empty list removes the class's network in `set_waypoints`).
fn parse_waypoint_net(cx: &Cx, node: &Node, path: &str, classes: &ClassSet, desc: &WorldDesc, origin: WorldPos) -> Res<WaypointNet> {
    let o = cx.obj(node, path, &["class", "range", "points"])?;
    let (cn, cp) = o.req(cx, "class")?;
    let class = parse_class(cx, cn, &cp, classes)?;
    let (rn, rp) = o.req(cx, "range")?;
    let range = cx.u32_in(rn, &rp, 1, sim::waypoint::MAX_NET_RANGE)?;
    let (pn, pp) = o.req(cx, "points")?;
    let cell = i128::from(desc.grid.cell_size.to_bits());
    let (w, h) = (i128::from(desc.grid.width) * cell, i128::from(desc.grid.height) * cell);
    let mut points = Vec::new();
    for (k, item) in cx.array(pn, &pp, sim::waypoint::MAX_NET_WAYPOINTS)?.iter().enumerate() {
        let ip = format!("{pp}[{k}]");
        let at = cx.pos(item, &ip)?;
        let (x, z) =
            (i128::from(at.x.to_bits()) - i128::from(origin.x.to_bits()), i128::from(at.z.to_bits()) - i128::from(origin.z.to_bits()));
        if x < 0 || z < 0 || x >= w || z >= h {
            return Err(cx.err(item, &ip, "expected a waypoint on the map"));
        }
        points.push(at);
    }
    Ok(WaypointNet { class, range, points })
}

#[allow(clippy::too_many_arguments)]
fn parse_entry(
    cx: &Cx,
    node: &Node,
    path: &str,
    settings: &Settings,
    classes: &ClassSet,
    desc: &WorldDesc,
    origin: WorldPos,
    names: &mut Names,
    seqs: &mut BTreeMap<PlayerId, u32>,
) -> Res<Entry> {
    let mut known = vec!["turn", "player", "comment"];
    known.extend_from_slice(COMMAND_KINDS);
    let o = cx.obj(node, path, &known)?;
    let (tn, tp) = o.req(cx, "turn")?;
    let turn = cx.u32_in(tn, &tp, 0, MAX_TURN)?;
    let player = parse_player(cx, &o, settings)?;
    let comment = parse_comment(cx, &o)?;
    let (kind, n, p) = o.one_of(cx, COMMAND_KINDS)?;
    let action = match kind {
        "spawn" => {
            let c = cx.obj(n, &p, &["group", "class", "at", "count", "radius", "speed"])?;
            let group = match c.get("group") {
                Some((gn, gp)) => Some(define_group(cx, gn, &gp, turn, names)?),
                None => None,
            };
            let spawn = parse_spawn_fields(cx, &c, classes, group)?;
            if let Some(g) = group {
                names.group_spawn[g].1 = u32::from(spawn.count);
            }
            Action::Spawn(spawn)
        }
        "move" => {
            let c = cx.obj(n, &p, &["units", "goal", "queue"])?;
            let units = parse_units(cx, &c, turn, names)?;
            let (gn, gp) = c.req(cx, "goal")?;
            let goal = parse_goal(cx, gn, &gp, turn, names)?;
            if let GoalIn::RangeUnit { group, .. } = goal
                && units.contains(&group)
            {
                return Err(cx.err(gn, &gp, "expected a range target outside the moving groups"));
            }
            let queue = match c.get("queue") {
                Some((qn, qp)) => cx.boolean(qn, &qp)?,
                None => false,
            };
            Action::Move { units, goal, queue }
        }
        "stop" | "remove" => {
            let c = cx.obj(n, &p, &["units"])?;
            let units = parse_units(cx, &c, turn, names)?;
            if kind == "stop" { Action::Stop { units } } else { Action::Remove { units } }
        }
        "place_obstruction" => {
            let c = cx.obj(n, &p, &["name", "x", "z", "w", "h", "degrees", "flags"])?;
            let square = parse_square(cx, &c)?;
            let flags = match c.get("flags") {
                Some((fn_, fp)) => parse_flags(cx, fn_, &fp)?,
                None => ObstructionFlags::STATIC.0,
            };
            let name = match c.get("name") {
                Some((nn, np)) => Some(define_obstruction(cx, nn, &np, turn.saturating_add(1), None, names)?),
                None => None,
            };
            Action::PlaceObstruction { name, square, flags }
        }
        "place_building" => {
            let c = cx.obj(n, &p, &["name", "class", "x", "z", "w", "h", "degrees", "builder"])?;
            let (cn, cp) = c.req(cx, "class")?;
            let class = parse_class(cx, cn, &cp, classes)?;
            let square = parse_square(cx, &c)?;
            let builder = match c.get("builder") {
                Some((bn, bp)) => Some(group_ref(cx, bn, &bp, turn, names)?),
                None => None,
            };
            let name = match c.get("name") {
                Some((nn, np)) => Some(define_obstruction(cx, nn, &np, turn.saturating_add(1), None, names)?),
                None => None,
            };
            Action::PlaceBuilding { name, class, square, builder }
        }
        "set_obstruction_flags" => {
            let c = cx.obj(n, &p, &["obstruction", "flags"])?;
            let (on, op) = c.req(cx, "obstruction")?;
            let target = obstruction_ref(cx, on, &op, turn, names)?;
            let (fn_, fp) = c.req(cx, "flags")?;
            Action::SetObstructionFlags { target, flags: parse_flags(cx, fn_, &fp)? }
        }
        "remove_obstruction" => {
            let c = cx.obj(n, &p, &["obstruction"])?;
            let (on, op) = c.req(cx, "obstruction")?;
            Action::RemoveObstruction { target: obstruction_ref(cx, on, &op, turn, names)? }
        }
        "form_group" => {
            let c = cx.obj(n, &p, &["name", "units", "layout"])?;
            let units = parse_units(cx, &c, turn, names)?;
            let total: u32 = units.iter().map(|&g| names.group_spawn[g].1).sum();
            if total as usize > sim::formation::MAX_MEMBERS {
                let (un, up) = c.req(cx, "units")?;
                return Err(cx.err(
                    un,
                    &up,
                    format!("expected at most {} units in a formation, found {total}", sim::formation::MAX_MEMBERS),
                ));
            }
            let (ln, lp) = c.req(cx, "layout")?;
            let layout = parse_layout(cx, ln, &lp)?;
            let (nn, np) = c.req(cx, "name")?;
            let name = define_formation(cx, nn, &np, turn, names)?;
            Action::FormGroup { name, units, layout }
        }
        "move_formation" => {
            let c = cx.obj(n, &p, &["formation", "goal"])?;
            let (fn_, fp) = c.req(cx, "formation")?;
            let formation = formation_ref(cx, fn_, &fp, turn, names)?;
            let (gn, gp) = c.req(cx, "goal")?;
            let goal = parse_goal(cx, gn, &gp, turn, names)?;
            if matches!(goal, GoalIn::RangeUnit { .. } | GoalIn::RangeObstruction { .. }) {
                return Err(cx.err(gn, &gp, "expected a point, circle or square goal (a formation takes no range goal)"));
            }
            Action::MoveFormation { formation, goal }
        }
        "set_layout" => {
            let c = cx.obj(n, &p, &["formation", "layout"])?;
            let (fn_, fp) = c.req(cx, "formation")?;
            let formation = formation_ref(cx, fn_, &fp, turn, names)?;
            let (ln, lp) = c.req(cx, "layout")?;
            Action::SetLayout { formation, layout: parse_layout(cx, ln, &lp)? }
        }
        "disband" => {
            let c = cx.obj(n, &p, &["formation"])?;
            let (fn_, fp) = c.req(cx, "formation")?;
            Action::Disband { formation: formation_ref(cx, fn_, &fp, turn, names)? }
        }
        "set_waypoints" => {
            if player != 0 {
                return Err(cx.err(node, path, "expected player 0: waypoint networks are map data, set by the world itself"));
            }
            Action::SetWaypoints(parse_waypoint_net(cx, n, &p, classes, desc, origin)?)
        }
        "set_waypoint_priorities" => {
            let c = cx.obj(n, &p, &["class", "reset", "entries"])?;
            let (cn, cp) = c.req(cx, "class")?;
            let class = parse_class(cx, cn, &cp, classes)?;
            let reset = match c.get("reset") {
                Some((rn, rp)) => cx.boolean(rn, &rp)?,
                None => false,
            };
            let (en, ep) = c.req(cx, "entries")?;
            let mut entries = Vec::new();
            for (k, item) in cx.array(en, &ep, sim::waypoint::MAX_NET_WAYPOINTS)?.iter().enumerate() {
                let ip = format!("{ep}[{k}]");
                let e = cx.obj(item, &ip, &["waypoint", "extra_cost", "excluded"])?;
                let (wn, wp) = e.req(cx, "waypoint")?;
                let waypoint = cx.uint(wn, &wp, sim::waypoint::MAX_NET_WAYPOINTS as u64 - 1)? as u32;
                let priority = match (e.get("extra_cost"), e.get("excluded")) {
                    (Some((xn, xp)), None) => WaypointPriority::Open { extra_cost: cx.uint(xn, &xp, u64::from(u16::MAX))? as u16 },
                    (None, Some((xn, xp))) => {
                        if cx.boolean(xn, &xp)? {
                            WaypointPriority::Excluded
                        } else {
                            WaypointPriority::Open { extra_cost: 0 }
                        }
                    }
                    _ => return Err(cx.err(item, &ip, "expected exactly one of `extra_cost` and `excluded`")),
                };
                entries.push(PriorityEntry { waypoint, priority });
            }
            Action::SetWaypointPriorities { class, reset, entries }
        }
        "move_by_waypoints" => {
            let c = cx.obj(n, &p, &["units", "goal", "queue"])?;
            let units = parse_units(cx, &c, turn, names)?;
            let (gn, gp) = c.req(cx, "goal")?;
            let goal = cx.pos(gn, &gp)?;
            let queue = match c.get("queue") {
                Some((qn, qp)) => cx.boolean(qn, &qp)?,
                None => false,
            };
            Action::MoveByWaypoints { units, goal, queue }
        }
        "set_area" => {
            let c = cx.obj(n, &p, &["name", "available"])?;
            let (nn, np) = c.req(cx, "name")?;
            let name = cx.name(nn, &np)?.to_string();
            if !desc.areas.iter().any(|a| a.name == name) {
                let list = desc.areas.iter().map(|a| format!("{:?}", a.name)).collect::<Vec<_>>().join(", ");
                let known = if list.is_empty() { "the map has no areas".to_string() } else { format!("expected one of {list}") };
                return Err(cx.err(nn, &np, format!("unknown area {name:?}: {known}")));
            }
            let (an, ap) = c.req(cx, "available")?;
            Action::SetArea { name, available: cx.boolean(an, &ap)? }
        }
        _ => {
            let c = cx.obj(n, &p, &["vx", "vz", "width", "heights"])?;
            let (xn, xp) = c.req(cx, "vx")?;
            let (zn, zp) = c.req(cx, "vz")?;
            let (wn, wp) = c.req(cx, "width")?;
            let (vx, vz) = (cx.u32_in(xn, &xp, 0, 16_384)?, cx.u32_in(zn, &zp, 0, 16_384)?);
            let width = cx.u32_in(wn, &wp, 1, 256)?;
            let (hn, hp) = c.req(cx, "heights")?;
            let items = cx.array(hn, &hp, 65_536)?;
            if items.is_empty() || !items.len().is_multiple_of(width as usize) {
                return Err(cx.err(hn, &hp, format!("expected a non-empty multiple of width ({width}) heights, found {}", items.len())));
            }
            let heights = items.iter().enumerate().map(|(k, v)| cx.fixed(v, &format!("{hp}[{k}]"))).collect::<Res<Vec<_>>>()?;
            let rows = (items.len() / width as usize) as u32;
            let (tw, th) = (desc.terrain.tiles_w(), desc.terrain.tiles_h());
            if vx + width > tw + 1 || vz + rows > th + 1 {
                return Err(cx.err(
                    n,
                    &p,
                    format!(
                        "expected vertices within the terrain's {}x{} vertices, found columns {vx}..{} and rows {vz}..{}",
                        tw + 1,
                        th + 1,
                        vx + width,
                        vz + rows
                    ),
                ));
            }
            Action::EditTerrain { vx, vz, width, heights }
        }
    };
    Ok(Entry { turn, player, seq: next_seq(seqs, player), comment, action })
}

// ---------------------------------------------------------------------------------------------
// The canonical text.
// ---------------------------------------------------------------------------------------------

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

fn pos_json(p: WorldPos) -> String {
    format!("[{}, {}]", p.x, p.z)
}

fn square_json(s: &SquareSpec) -> String {
    format!("\"x\": {}, \"z\": {}, \"w\": {}, \"h\": {}, \"degrees\": {}", s.x, s.z, s.w, s.h, s.degrees)
}

fn write_canonical(sc: &Scenario) -> String {
    let mut out = String::new();
    let class_name = |class: u8| PassClass::new(class).and_then(|c| sc.classes.get(c)).map_or_else(String::new, |d| json_string(&d.name));
    let _ = writeln!(out, "{{");
    let _ = writeln!(out, "  \"format\": \"{FORMAT_NAME}\",");
    let _ = writeln!(out, "  \"version\": {SCENARIO_VERSION},");
    let _ = writeln!(out, "  \"name\": {},", json_string(&sc.name));
    if let Some(d) = &sc.description {
        let _ = writeln!(out, "  \"description\": {},", json_string(d));
    }
    let _ = writeln!(out, "  \"turns\": {},", sc.turns);
    let s = &sc.settings;
    let m = &s.motion;
    let _ = writeln!(
        out,
        "  \"settings\": {{\"turn_ms\": {}, \"players\": {}, \"seed\": {}, \"max_paths_per_turn\": {}, \"motion\": {{\"short_range\": {}, \"short_range_step\": {}, \"short_range_max\": {}, \"short_node_budget\": {}, \"max_short_paths_per_turn\": {}, \"rejoin_radius\": {}, \"long_replan_every\": {}, \"give_up_turns\": {}, \"core_fraction\": {}, \"influence\": {}, \"push_iterations\": {}, \"nudge_distance\": {}, \"replan_trigger\": {}, \"replan_cooldown_ms\": {}, \"moved_epsilon\": {}}}}},",
        s.turn_ms,
        s.players,
        s.seed,
        s.max_paths_per_turn,
        m.short_range,
        m.short_range_step,
        m.short_range_max,
        m.short_node_budget,
        m.max_short_paths_per_turn,
        m.rejoin_radius,
        m.long_replan_every,
        m.give_up_turns,
        m.core_fraction,
        m.influence,
        m.push_iterations,
        m.nudge_distance,
        m.replan_trigger,
        m.replan_cooldown_ms,
        m.moved_epsilon,
    );
    match &sc.classes_spec {
        ClassesSpec::ZeroAd => {
            let _ = writeln!(out, "  \"classes\": \"zero_ad\",");
        }
        ClassesSpec::Text(t) => {
            let _ = writeln!(out, "  \"classes\": {{\"text\": {}}},", json_string(t));
        }
    }
    let kind = match &sc.map {
        MapKind::Generated { tiles, seed, buildings, trees, circular } => format!(
            "\"generated\": {{\"tiles\": {tiles}, \"seed\": {seed}, \"buildings\": {buildings}, \"trees\": {trees}, \"circular\": {circular}}}"
        ),
        MapKind::MovingAi { text, cell_size } => format!("\"movingai\": {{\"text\": {}}}, \"cell_size\": {cell_size}", json_string(text)),
        MapKind::Grid { text } => format!("\"grid\": {{\"text\": {}}}", json_string(text)),
        MapKind::Polygons { text } => format!("\"polygons\": {{\"text\": {}}}", json_string(text)),
        MapKind::Terrain(t) => terrain_json(t),
    };
    let names = |mask: u16| (0..16u8).filter(|k| mask & (1 << k) != 0).map(class_name).collect::<Vec<String>>().join(", ");
    // Written only when there are any, so the canonical text of a scenario without them stays.
    let landmarks = if sc.landmarks == 0 { String::new() } else { format!(", \"landmarks\": [{}]", names(sc.landmarks)) };
    let _ = writeln!(out, "  \"map\": {{{kind}, \"jump_tables\": [{}]{landmarks}}},", names(sc.jump_tables));
    let obstructions: Vec<String> = sc
        .obstructions
        .iter()
        .map(|o| {
            let name = o.name.as_ref().map_or_else(String::new, |n| format!("\"name\": {}, ", json_string(n)));
            format!("{{{name}{}, \"flags\": \"{}\"}}", square_json(&o.square), flags_name(o.flags))
        })
        .collect();
    push_list(&mut out, "obstructions", &obstructions, ",");
    let nets: Vec<String> = sc.waypoints.iter().map(|net| net_json(net, &class_name(net.class))).collect();
    push_list(&mut out, "waypoints", &nets, ",");
    let units: Vec<String> = sc.entries[..sc.n_unit_entries]
        .iter()
        .filter_map(|e| {
            let Action::Spawn(s) = &e.action else { return None };
            let name = s.group.map_or_else(String::new, |g| json_string(&sc.group_names[g]));
            let comment = e.comment.as_ref().map_or_else(String::new, |c| format!(", \"comment\": {}", json_string(c)));
            Some(format!(
                "{{\"name\": {name}, \"player\": {}, \"class\": {}, \"at\": {}, \"count\": {}, \"radius\": {}, \"speed\": {}{comment}}}",
                e.player,
                class_name(s.class),
                pos_json(s.at),
                s.count,
                s.radius,
                s.speed
            ))
        })
        .collect();
    push_list(&mut out, "units", &units, ",");
    let script: Vec<String> = sc.entries[sc.n_unit_entries..]
        .iter()
        .map(|e| {
            let comment = e.comment.as_ref().map_or_else(String::new, |c| format!(", \"comment\": {}", json_string(c)));
            format!("{{\"turn\": {}, \"player\": {}, {}{comment}}}", e.turn, e.player, action_json(sc, &e.action))
        })
        .collect();
    push_list(&mut out, "script", &script, "");
    let _ = writeln!(out, "}}");
    out
}

/// A top-level list, one item per line (`[]` when empty), then `after` (a comma or nothing).
fn push_list(out: &mut String, key: &str, items: &[String], after: &str) {
    if items.is_empty() {
        let _ = writeln!(out, "  \"{key}\": []{after}");
        return;
    }
    let _ = writeln!(out, "  \"{key}\": [");
    for (k, item) in items.iter().enumerate() {
        let _ = writeln!(out, "    {item}{}", if k + 1 < items.len() { "," } else { "" });
    }
    let _ = writeln!(out, "  ]{after}");
}

fn terrain_json(t: &TerrainSpec) -> String {
    let heights = match &t.heights {
        Heights::Flat(h) => format!("\"flat\": {h}"),
        Heights::List(list) => format!("\"heights\": [{}]", list.iter().map(|h| h.to_string()).collect::<Vec<_>>().join(", ")),
    };
    let border = match t.border {
        MapBorder::None => "{\"shape\": \"none\"}".to_string(),
        MapBorder::Square { width } => format!("{{\"shape\": \"square\", \"width\": {width}}}"),
        MapBorder::Circle { width } => format!("{{\"shape\": \"circle\", \"width\": {width}}}"),
    };
    let vertices = |v: &[WorldPos]| v.iter().map(|&p| pos_json(p)).collect::<Vec<_>>().join(", ");
    let areas = t
        .areas
        .iter()
        .map(|a| {
            format!("{{\"name\": {}, \"vertices\": [{}], \"available\": {}}}", json_string(&a.name), vertices(&a.vertices), a.available)
        })
        .collect::<Vec<_>>()
        .join(", ");
    let obstacles = t
        .obstacles
        .iter()
        .map(|o| {
            let name = o.name.as_ref().map_or_else(String::new, |n| format!("\"name\": {}, ", json_string(n)));
            format!("{{{name}\"vertices\": [{}]}}", vertices(&o.vertices))
        })
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "\"terrain\": {{\"tiles\": [{}, {}], \"tile_size\": {}, {heights}, \"water_level\": {}, \"cell_size\": {}, \"border\": {border}, \"areas\": [{areas}], \"obstacles\": [{obstacles}], \"object_padding\": {}, \"boundary_padding\": {}}}",
        t.tiles_w, t.tiles_h, t.tile_size, t.water_level, t.cell_size, t.object_padding, t.boundary_padding
    )
}

/// A waypoint network as scenario JSON.
fn net_json(net: &WaypointNet, class: &str) -> String {
    let points = net.points.iter().map(|&p| pos_json(p)).collect::<Vec<_>>().join(", ");
    format!("{{\"class\": {class}, \"range\": {}, \"points\": [{points}]}}", net.range)
}

/// A goal as scenario JSON.
fn goal_json(sc: &Scenario, goal: &GoalIn) -> String {
    let obs = |r: ObsRef| match r {
        ObsRef::Named(k) => json_string(&sc.obstruction_names[k]),
        ObsRef::Id(id) => id.to_string(),
    };
    match goal {
        GoalIn::Point(p) => format!("{{\"point\": {}}}", pos_json(*p)),
        GoalIn::Circle { center, radius } => format!("{{\"circle\": {{\"center\": {}, \"radius\": {radius}}}}}", pos_json(*center)),
        GoalIn::Square { center, half } => format!("{{\"square\": {{\"center\": {}, \"half\": {half}}}}}", pos_json(*center)),
        GoalIn::RangeUnit { group, min, max } => {
            format!("{{\"range\": {{\"unit\": {}, \"min\": {min}, \"max\": {max}}}}}", json_string(&sc.group_names[*group]))
        }
        GoalIn::RangeObstruction { target, min, max } => {
            format!("{{\"range\": {{\"obstruction\": {}, \"min\": {min}, \"max\": {max}}}}}", obs(*target))
        }
    }
}

fn action_json(sc: &Scenario, action: &Action) -> String {
    let class_name = |class: u8| PassClass::new(class).and_then(|c| sc.classes.get(c)).map_or_else(String::new, |d| json_string(&d.name));
    let groups = |units: &[usize]| units.iter().map(|&g| json_string(&sc.group_names[g])).collect::<Vec<_>>().join(", ");
    let obs = |r: ObsRef| match r {
        ObsRef::Named(k) => json_string(&sc.obstruction_names[k]),
        ObsRef::Id(id) => id.to_string(),
    };
    let named = |name: Option<usize>| name.map_or_else(String::new, |k| format!("\"name\": {}, ", json_string(&sc.obstruction_names[k])));
    match action {
        Action::Spawn(s) => {
            let group = s.group.map_or_else(String::new, |g| format!("\"group\": {}, ", json_string(&sc.group_names[g])));
            format!(
                "\"spawn\": {{{group}\"class\": {}, \"at\": {}, \"count\": {}, \"radius\": {}, \"speed\": {}}}",
                class_name(s.class),
                pos_json(s.at),
                s.count,
                s.radius,
                s.speed
            )
        }
        Action::Move { units, goal, queue } => {
            let goal = goal_json(sc, goal);
            format!("\"move\": {{\"units\": [{}], \"goal\": {goal}, \"queue\": {queue}}}", groups(units))
        }
        Action::FormGroup { name, units, layout } => format!(
            "\"form_group\": {{\"name\": {}, \"units\": [{}], \"layout\": \"{}\"}}",
            json_string(&sc.formation_names[*name]),
            groups(units),
            layout_name(*layout)
        ),
        Action::MoveFormation { formation, goal } => format!(
            "\"move_formation\": {{\"formation\": {}, \"goal\": {}}}",
            json_string(&sc.formation_names[*formation]),
            goal_json(sc, goal)
        ),
        Action::SetLayout { formation, layout } => format!(
            "\"set_layout\": {{\"formation\": {}, \"layout\": \"{}\"}}",
            json_string(&sc.formation_names[*formation]),
            layout_name(*layout)
        ),
        Action::Disband { formation } => format!("\"disband\": {{\"formation\": {}}}", json_string(&sc.formation_names[*formation])),
        Action::SetWaypoints(net) => format!("\"set_waypoints\": {}", net_json(net, &class_name(net.class))),
        Action::SetWaypointPriorities { class, reset, entries } => {
            let entries: Vec<String> = entries
                .iter()
                .map(|e| match e.priority {
                    WaypointPriority::Open { extra_cost } => format!("{{\"waypoint\": {}, \"extra_cost\": {extra_cost}}}", e.waypoint),
                    WaypointPriority::Excluded => format!("{{\"waypoint\": {}, \"excluded\": true}}", e.waypoint),
                })
                .collect();
            format!(
                "\"set_waypoint_priorities\": {{\"class\": {}, \"reset\": {reset}, \"entries\": [{}]}}",
                class_name(*class),
                entries.join(", ")
            )
        }
        Action::MoveByWaypoints { units, goal, queue } => {
            format!("\"move_by_waypoints\": {{\"units\": [{}], \"goal\": {}, \"queue\": {queue}}}", groups(units), pos_json(*goal))
        }
        Action::Stop { units } => format!("\"stop\": {{\"units\": [{}]}}", groups(units)),
        Action::Remove { units } => format!("\"remove\": {{\"units\": [{}]}}", groups(units)),
        Action::PlaceObstruction { name, square, flags } => {
            format!("\"place_obstruction\": {{{}{}, \"flags\": \"{}\"}}", named(*name), square_json(square), flags_name(*flags))
        }
        Action::PlaceBuilding { name, class, square, builder } => {
            let builder = builder.map_or_else(String::new, |g| format!(", \"builder\": {}", json_string(&sc.group_names[g])));
            format!("\"place_building\": {{{}\"class\": {}, {}{builder}}}", named(*name), class_name(*class), square_json(square))
        }
        Action::SetObstructionFlags { target, flags } => {
            format!("\"set_obstruction_flags\": {{\"obstruction\": {}, \"flags\": \"{}\"}}", obs(*target), flags_name(*flags))
        }
        Action::RemoveObstruction { target } => format!("\"remove_obstruction\": {{\"obstruction\": {}}}", obs(*target)),
        Action::SetArea { name, available } => format!("\"set_area\": {{\"name\": {}, \"available\": {available}}}", json_string(name)),
        Action::EditTerrain { vx, vz, width, heights } => format!(
            "\"edit_terrain\": {{\"vx\": {vx}, \"vz\": {vz}, \"width\": {width}, \"heights\": [{}]}}",
            heights.iter().map(|h| h.to_string()).collect::<Vec<_>>().join(", ")
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// Running the script.
// ---------------------------------------------------------------------------------------------

/// Produces a scenario's commands turn by turn and learns, from each turn's report, the entity
/// ids of the groups spawned and the ids of the obstructions placed.
///
/// Call [`ScriptRunner::commands`] once per turn, in turn order, step the world with exactly those
/// commands, then [`ScriptRunner::observe`] the report. The mapping from events to groups relies
/// on the world reporting the `Spawned` and `ObstructionPlaced` events of a turn's commands in
/// `(turn, player, seq)` order, which it does; commands of other sources mixed into the same turn
/// would confuse it.
#[derive(Debug, Clone)]
pub struct ScriptRunner<'a> {
    scenario: &'a Scenario,
    /// Next position in the scenario's schedule.
    cursor: usize,
    /// Entity ids per group, learned from `Spawned` events; removed units are dropped.
    groups: Vec<Vec<EntityId>>,
    /// Id per obstruction name, once known.
    obstruction_ids: Vec<Option<u32>>,
    /// Id per formation name, once formed.
    formation_ids: Vec<Option<FormationId>>,
    /// Entries issued for `issued_turn`, in application order, awaiting `observe`.
    issued: Vec<usize>,
    issued_turn: Option<u32>,
}

/// An id no entity has (the world rejects it as unknown): what a name with no live unit becomes.
const NO_ENTITY: EntityId = EntityId { index: u32::MAX, generation: u32::MAX };

impl ScriptRunner<'_> {
    /// The commands of `turn` (call once per turn in order), with their `(turn, player, seq)`.
    /// Entries of turns before `turn` that were never asked for are skipped.
    pub fn commands(&mut self, turn: u32) -> Vec<sim::command::Command> {
        let sc = self.scenario;
        while self.cursor < sc.schedule.len() && sc.entries[sc.schedule[self.cursor]].turn < turn {
            self.cursor += 1;
        }
        let start = self.cursor;
        while self.cursor < sc.schedule.len() && sc.entries[sc.schedule[self.cursor]].turn == turn {
            self.cursor += 1;
        }
        self.issued = sc.schedule[start..self.cursor].to_vec();
        self.issued_turn = Some(turn);
        self.issued.iter().map(|&k| self.command(&sc.entries[k])).collect()
    }

    /// Learns spawned ids and placed obstruction ids from the turn's report; call after each step.
    pub fn observe(&mut self, report: &sim::world::TurnReport) {
        if self.issued_turn != Some(report.turn) {
            return;
        }
        let sc = self.scenario;
        let mut rejected = std::collections::BTreeSet::new();
        let mut spawned = Vec::new();
        let mut placed = Vec::new();
        let mut formed = Vec::new();
        for event in &report.events {
            match event {
                Event::Rejected { command, .. } => {
                    rejected.insert(*command);
                }
                Event::Spawned { unit } => spawned.push(*unit),
                Event::ObstructionPlaced { id } => placed.push(*id),
                Event::FormationCreated { formation } => formed.push(*formation),
                _ => {}
            }
        }
        let (mut spawned, mut placed, mut formed) = (spawned.into_iter(), placed.into_iter(), formed.into_iter());
        for k in std::mem::take(&mut self.issued) {
            let entry = &sc.entries[k];
            if rejected.contains(&(entry.turn, entry.player, entry.seq)) {
                continue;
            }
            match &entry.action {
                Action::Spawn(s) => {
                    let ids: Vec<EntityId> = spawned.by_ref().take(usize::from(s.count)).collect();
                    if let Some(g) = s.group {
                        self.groups[g].extend(ids);
                    }
                }
                Action::PlaceObstruction { name, .. } | Action::PlaceBuilding { name, .. } => {
                    let id = placed.next();
                    if let (Some(k), Some(id)) = (name, id) {
                        self.obstruction_ids[*k] = Some(id);
                    }
                }
                Action::FormGroup { name, .. } => {
                    if let Some(id) = formed.next() {
                        self.formation_ids[*name] = Some(id);
                    }
                }
                Action::Remove { units } => {
                    let gone: Vec<EntityId> = units.iter().flat_map(|&g| self.groups[g].clone()).collect();
                    for ids in &mut self.groups {
                        ids.retain(|id| !gone.contains(id));
                    }
                }
                _ => {}
            }
        }
        self.issued_turn = None;
    }

    /// The entity ids known for a group (empty before it is spawned, or when it was refused).
    pub fn group(&self, name: &str) -> &[EntityId] {
        self.scenario.group_names.iter().position(|n| n == name).map_or(&[], |g| &self.groups[g])
    }

    fn units(&self, groups: &[usize]) -> Vec<EntityId> {
        let mut out: Vec<EntityId> = Vec::new();
        for &g in groups {
            for &id in &self.groups[g] {
                if !out.contains(&id) {
                    out.push(id);
                }
            }
        }
        out
    }

    /// A goal in world coordinates, with its target's id as known now.
    fn goal(&self, goal: &GoalIn) -> GoalSpec {
        let sc = self.scenario;
        match *goal {
            GoalIn::Point(p) => GoalSpec::Point(sc.world_pos(p)),
            GoalIn::Circle { center, radius } => GoalSpec::Circle { center: sc.world_pos(center), radius },
            GoalIn::Square { center, half } => GoalSpec::Square { center: sc.world_pos(center), half },
            GoalIn::RangeUnit { group, min, max } => {
                let target = self.groups[group].first().copied().unwrap_or(NO_ENTITY);
                GoalSpec::Range { target: Target::Unit(target), min, max }
            }
            GoalIn::RangeObstruction { target, min, max } => {
                GoalSpec::Range { target: Target::Obstruction(self.obstruction(target)), min, max }
            }
        }
    }

    /// A formation's id, or one no formation has (the world rejects it) when it was not formed.
    fn formation(&self, k: usize) -> FormationId {
        self.formation_ids[k].unwrap_or(FormationId(u32::MAX))
    }

    fn obstruction(&self, r: ObsRef) -> u32 {
        match r {
            ObsRef::Id(id) => id,
            // Never handed out by the world, so a name whose placement was refused is rejected.
            ObsRef::Named(k) => self.obstruction_ids[k].unwrap_or(u32::MAX),
        }
    }

    fn command(&self, entry: &Entry) -> Command {
        let sc = self.scenario;
        let kind = match &entry.action {
            Action::Spawn(s) => {
                CommandKind::Spawn { class: s.class, at: sc.world_pos(s.at), count: s.count, radius: s.radius, speed: s.speed }
            }
            Action::Move { units, goal, queue } => CommandKind::Move { units: self.units(units), goal: self.goal(goal), queue: *queue },
            Action::FormGroup { units, layout, .. } => CommandKind::FormGroup { units: self.units(units), layout: *layout },
            Action::MoveFormation { formation, goal } => {
                CommandKind::MoveFormation { formation: self.formation(*formation), goal: self.goal(goal) }
            }
            Action::SetLayout { formation, layout } => CommandKind::SetLayout { formation: self.formation(*formation), layout: *layout },
            Action::Disband { formation } => CommandKind::Disband { formation: self.formation(*formation) },
            Action::SetWaypoints(net) => CommandKind::SetWaypoints { net: sc.world_net(net) },
            Action::SetWaypointPriorities { class, reset, entries } => {
                CommandKind::SetWaypointPriorities { class: *class, reset: *reset, entries: entries.clone() }
            }
            Action::MoveByWaypoints { units, goal, queue } => {
                CommandKind::MoveByWaypoints { units: self.units(units), goal: sc.world_pos(*goal), queue: *queue }
            }
            Action::Stop { units } => CommandKind::Stop { units: self.units(units) },
            Action::Remove { units } => CommandKind::Remove { units: self.units(units) },
            Action::PlaceObstruction { square, flags, .. } => {
                CommandKind::PlaceObstruction { square: sc.world_square(square), flags: *flags }
            }
            Action::PlaceBuilding { class, square, builder, .. } => CommandKind::PlaceBuilding {
                class: *class,
                square: sc.world_square(square),
                builder: builder.map(|g| self.groups[g].first().copied().unwrap_or(NO_ENTITY)),
            },
            Action::SetObstructionFlags { target, flags } => {
                CommandKind::SetObstructionFlags { id: self.obstruction(*target), flags: *flags }
            }
            Action::RemoveObstruction { target } => CommandKind::RemoveObstruction { id: self.obstruction(*target) },
            Action::SetArea { name, available } => CommandKind::SetArea { name: name.clone(), available: *available },
            Action::EditTerrain { vx, vz, width, heights } => {
                CommandKind::EditTerrain { vx: *vx, vz: *vz, width: *width, heights: heights.clone() }
            }
        };
        Command { turn: entry.turn, player: entry.player, seq: entry.seq, kind }
    }
}

/// Steps a fresh `world` of `scenario` (at turn 0, from [`Scenario::world`]) through `turns`
/// turns of its script, calling `each` with every report: the loop every driver of a scenario
/// runs, for tests and tools.
pub fn run_turns(scenario: &Scenario, world: &mut World, turns: u32, mut each: impl FnMut(&TurnReport)) {
    let mut script = scenario.script();
    for turn in 0..turns {
        let report = world.step(&script.commands(turn));
        script.observe(&report);
        each(&report);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLES: [&str; 6] = ["skirmish.json", "reference.json", "maze.json", "gates.json", "grid.json", "formations.json"];

    fn example_path(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios").join(name)
    }

    fn refuse_files(name: &str) -> Result<String, String> {
        Err(format!("no file access ({name})"))
    }

    /// Parses `text` with no file access.
    fn parse(text: &str) -> Result<Scenario, ScenarioError> {
        Scenario::parse(text, "test.json", &mut refuse_files)
    }

    /// A minimal valid scenario with `extra` top-level fields appended (each starting with a comma).
    fn minimal(extra: &str) -> String {
        format!(
            "{{\"format\": \"phalanx-scenario\", \"version\": 1, \"name\": \"t\", \"turns\": 10,\n\"settings\": {{\"players\": 2}},\n\"map\": {{\"generated\": {{\"tiles\": 16, \"seed\": 1}}}},\n\"units\": [{{\"name\": \"a\", \"player\": 1, \"at\": [30, 30], \"count\": 3}}, {{\"name\": \"b\", \"player\": 2, \"at\": [40, 40], \"count\": 2}}]{extra}}}"
        )
    }

    /// Steps a fresh world of `scenario` through `turns` turns; the hashes and the events.
    fn run(scenario: &Scenario, turns: u32) -> (Vec<[u8; 32]>, Vec<Event>) {
        let mut world = scenario.world().unwrap();
        let (mut hashes, mut events) = (Vec::new(), Vec::new());
        run_turns(scenario, &mut world, turns, |report| {
            hashes.push(report.hash);
            events.extend(report.events.iter().cloned());
        });
        (hashes, events)
    }

    /// The one place the tests check an error: the message has `message` in it, the path is `path`,
    /// and the position is `line` (when given).
    #[track_caller]
    fn check_error(text: &str, path: &str, line: Option<u32>, message: &str) {
        let err = parse(text).expect_err("the text must be refused");
        assert_eq!(err.path, path, "{err}");
        assert!(err.message.contains(message), "expected {message:?} in: {err}");
        if line.is_some() {
            assert_eq!(err.line, line, "{err}");
            assert!(err.column.is_some(), "{err}");
        }
        assert_eq!(err.origin, "test.json");
        let shown = err.to_string();
        assert!(shown.starts_with("test.json"), "{shown}");
        assert!(!shown.contains('\n'), "{shown}");
    }

    #[test]
    fn every_example_parses_and_builds_its_world() {
        for name in EXAMPLES {
            let scenario = Scenario::load(&example_path(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(scenario.turns() >= 100, "{name}");
            assert!(!scenario.group_names().is_empty(), "{name}");
            let world = scenario.world().unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(world.turn(), 0);
            assert_eq!(world.units().count(), 0, "{name}: units come from the turn-0 commands");
        }
        let skirmish = Scenario::load(&example_path("skirmish.json")).unwrap();
        let world = skirmish.world().unwrap();
        // The generated map's 16 obstructions, then the wall pieces and the gate as ids 17, 18, 19.
        let ids: Vec<u32> = world.nav().obstructions().keys().copied().collect();
        assert_eq!(ids.len(), 19, "{ids:?}");
        assert_eq!(ids[16..], [17, 18, 19]);
        assert_eq!(skirmish.settings().players, 2);
        assert_eq!(skirmish.settings().seed, 42);
    }

    #[test]
    fn canonical_text_round_trips() {
        for name in EXAMPLES {
            let scenario = Scenario::load(&example_path(name)).unwrap();
            let again =
                Scenario::parse(scenario.canonical_text(), "<replay header>", &mut refuse_files).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(again.canonical_text(), scenario.canonical_text(), "{name}");
            assert_eq!(again.digest(), scenario.digest(), "{name}");
            assert_eq!(again.digest(), *blake3::hash(scenario.canonical_text().as_bytes()).as_bytes());
            assert_eq!(again, scenario);
            // The same world: equal state hashes before any turn.
            assert_eq!(again.world().unwrap().state_hash(), scenario.world().unwrap().state_hash(), "{name}");
            assert!(!scenario.canonical_text().contains("\"file\""), "{name}: every file is inlined");
        }
    }

    /// `map.landmarks` gives classes landmark tables: the world's description says so, the
    /// canonical text keeps them (and names the key only then), the state hash tells the two worlds
    /// apart, and more than the snapshot's limit is refused at the key.
    #[test]
    fn landmark_tables_are_part_of_the_map_and_of_the_state() {
        let plain = parse(&minimal("")).unwrap();
        let with = parse(&minimal("").replace("\"seed\": 1}}", "\"seed\": 1}, \"landmarks\": [\"default\", 1]}")).unwrap();
        let (mut plain_world, mut world) = (plain.world().unwrap(), with.world().unwrap());
        assert_eq!(plain_world.nav().desc().landmark_classes, 0);
        assert_eq!(world.nav().desc().landmark_classes, 0b11);
        for k in 0..8u8 {
            let nav = world.nav().class_nav(pathing::PassClass::new(k).unwrap());
            assert_eq!(nav.is_some_and(|n| n.landmarks().is_some()), k < 2, "class {k}");
        }
        assert!(!plain.canonical_text().contains("landmarks"));
        assert!(
            with.canonical_text().contains("\"jump_tables\": [], \"landmarks\": [\"default\", \"large\"]}"),
            "{}",
            with.canonical_text()
        );
        let again = Scenario::parse(with.canonical_text(), "<replay header>", &mut refuse_files).unwrap();
        assert_eq!(again.canonical_text(), with.canonical_text());
        assert_ne!(plain_world.state_hash(), world.state_hash());
        let too_many = minimal("").replace("\"tiles\": 16, \"seed\": 1}}", "\"tiles\": 256, \"seed\": 1}, \"landmarks\": [0, 1, 2, 3, 6]}");
        check_error(&too_many, "map.landmarks", Some(3), "landmark tables for at most 4194304 navcells in all");
        let foundation = minimal("").replace("\"seed\": 1}}", "\"seed\": 1}, \"landmarks\": [\"default\", \"building-land\"]}");
        check_error(&foundation, "map.landmarks[1]", Some(3), "expected a movement class, found the foundation class \"building-land\"");
        let foundation = minimal("").replace("\"seed\": 1}}", "\"seed\": 1}, \"jump_tables\": [4]}");
        let old = parse(&foundation).unwrap(); // version 1: ignored, as it always was
        assert!(old.canonical_text().contains("\"jump_tables\": []"), "{}", old.canonical_text());
        check_error(&foundation.replace("\"version\": 1", "\"version\": 4"), "map.jump_tables[0]", Some(3), "expected a movement class");
    }

    #[test]
    fn canonical_numbers_read_back_to_the_same_fixed() {
        // Decimals that are not multiples of 2^-16 are rounded once, then written so that they
        // read back to the same value.
        let text = minimal(
            ", \"script\": [{\"turn\": 1, \"player\": 1, \"move\": {\"units\": [\"a\"], \"goal\": {\"circle\": {\"center\": [30.1, 29.987654321], \"radius\": 0.45}}}}]",
        );
        let scenario = parse(&text).unwrap();
        let again = parse(scenario.canonical_text()).unwrap();
        assert_eq!(again.canonical_text(), scenario.canonical_text());
        let Action::Move { goal: GoalIn::Circle { center, radius }, .. } = &again.entries[2].action else { panic!("a move") };
        assert_eq!(radius.to_bits(), 29491);
        assert_eq!(*center, WorldPos::new(parse_fixed("30.1").unwrap(), parse_fixed("29.987654321").unwrap()));
    }

    #[test]
    fn maze_inlines_its_map() {
        let scenario = Scenario::load(&example_path("maze.json")).unwrap();
        let canonical: serde_json::Value = serde_json::from_str(scenario.canonical_text()).unwrap();
        let inlined = canonical["map"]["movingai"]["text"].as_str().unwrap();
        let file = std::fs::read_to_string(example_path("arena.map")).unwrap();
        assert_eq!(inlined, file);
        assert_eq!(canonical["map"]["cell_size"].to_string(), "1");
    }

    #[test]
    fn file_references_go_through_the_resolver() {
        let text =
            minimal("").replace("\"map\": {\"generated\": {\"tiles\": 16, \"seed\": 1}}", "\"map\": {\"grid\": {\"file\": \"rooms.txt\"}}");
        let mut asked = Vec::new();
        let grid = format!("gridWidth 64\ngridDepth 64\ncellSize 1\n{}", format!("{}\n", "1".repeat(64)).repeat(64));
        let scenario = Scenario::parse(&text, "t.json", &mut |name| {
            asked.push(name.to_string());
            Ok(grid.clone())
        })
        .unwrap();
        assert_eq!(asked, ["rooms.txt"]);
        assert!(scenario.canonical_text().contains("gridWidth 64\\ngridDepth 64"));
        // Refused, the error names the field.
        let err = parse(&text).unwrap_err();
        assert_eq!(err.path, "map.grid.file");
        assert!(err.message.contains("no file access (rooms.txt)"), "{err}");
    }

    #[test]
    fn errors_in_referenced_files_name_the_file_and_line() {
        let text = minimal("")
            .replace("\"map\": {\"generated\": {\"tiles\": 16, \"seed\": 1}}", "\"map\": {\"movingai\": {\"file\": \"bad.map\"}}");
        let err = Scenario::parse(&text, "t.json", &mut |_| Ok("type octile\nheight 2\nwidth 2\nmap\n..\n.x\n".to_string())).unwrap_err();
        assert_eq!((err.origin.as_str(), err.line, err.path.as_str()), ("bad.map", Some(6), "map.movingai"), "{err}");
        assert!(err.to_string().starts_with("bad.map:6: at map.movingai: Moving AI map: expected"), "{err}");
        // Inline, the error is at the string, naming the line inside it.
        let inline = minimal("").replace(
            "\"map\": {\"generated\": {\"tiles\": 16, \"seed\": 1}}",
            "\"map\": {\"movingai\": {\"text\": \"type octile\\nheight 2\\nwidth 2\\nmap\\n..\\n.x\\n\"}}",
        );
        check_error(&inline, "map.movingai", Some(3), "inline text line 6: Moving AI map");
        let classes = minimal(", \"classes\": {\"text\": \"{\\\"classes\\\": []}\"}");
        check_error(&classes, "classes", Some(4), "inline text line 1: class file: expected at least one class");
    }

    #[test]
    fn malformed_inputs_are_refused_with_a_position_or_a_path() {
        // JSON syntax: serde_json's line and column, no path.
        check_error("{\"format\": \"phalanx-scenario\",\n \"version\": 1,,}", "", Some(2), "key must be a string");
        check_error(&(minimal("") + " trailing"), "", Some(4), "trailing characters");
        check_error("", "", Some(1), "EOF");
        // Format and version first, naming both versions.
        check_error(
            &minimal("").replace("\"version\": 1", "\"version\": 5"),
            "version",
            Some(1),
            "expected version 1 to 4, found version 5",
        );
        check_error(&minimal("").replace("phalanx-scenario", "other"), "format", Some(1), "expected \"phalanx-scenario\"");
        check_error("[1, 2]", "", Some(1), "expected a scenario object");
        // Structure.
        check_error(
            &minimal("").replace("\"map\": {\"generated\": {\"tiles\": 16, \"seed\": 1}},", ""),
            "",
            Some(1),
            "missing field `map`",
        );
        check_error(&minimal(", \"colour\": 3"), "colour", Some(4), "unknown field `colour`");
        check_error(&minimal(", \"turns\": 3"), "turns", Some(4), "given twice");
        check_error(
            &minimal("").replace("{\"generated\": {\"tiles\": 16, \"seed\": 1}}", "{}"),
            "map",
            Some(3),
            "expected one of `generated`",
        );
        check_error(
            &minimal("").replace("\"seed\": 1}}", "\"seed\": 1}, \"terrain\": {\"tiles\": [1, 1]}}"),
            "map",
            Some(3),
            "expected only one of",
        );
        check_error(&minimal("").replace("\"tiles\": 16", "\"tiles\": 4096"), "map.generated.tiles", Some(3), "16..=512");
        // Numbers: exact decimals only.
        check_error(&minimal("").replace("[30, 30]", "[30, 1e3]"), "units[0].at[1]", Some(4), "expected a decimal number");
        check_error(&minimal("").replace("[30, 30]", "[30, 99999]"), "units[0].at[1]", Some(4), "within ±16384");
        check_error(&minimal("").replace("\"count\": 3", "\"count\": 300"), "units[0].count", Some(4), "1..=256");
        check_error(&minimal("").replace("\"count\": 3", "\"count\": 2.5"), "units[0].count", Some(4), "expected an integer");
        check_error(&minimal("").replace("\"count\": 3", "\"count\": -1"), "units[0].count", Some(4), "expected an integer");
        // Names.
        check_error(
            &minimal("").replace("\"count\": 3", "\"count\": 3, \"class\": \"dragon\""),
            "units[0].class",
            Some(4),
            "unknown class \"dragon\"",
        );
        check_error(&minimal("").replace("\"count\": 3", "\"count\": 3, \"class\": 12"), "units[0].class", Some(4), "0..=7");
        check_error(
            &minimal("").replace("\"count\": 3", "\"count\": 3, \"class\": \"building-land\""),
            "units[0].class",
            Some(4),
            "expected a movement class",
        );
        check_error(&minimal("").replace("\"name\": \"b\"", "\"name\": \"a\""), "units[1].name", Some(4), "a second time");
        check_error(&minimal("").replace("\"player\": 2", "\"player\": 3"), "units[1].player", Some(4), "0..=2");
        let script = |entry: &str| minimal(&format!(",\n\"script\": [\n{entry}]"));
        check_error(
            &script("{\"turn\": 1, \"player\": 1, \"move\": {\"units\": [\"c\"], \"goal\": {\"point\": [1, 1]}}}"),
            "script[0].move.units[0]",
            Some(6),
            "unknown group \"c\"",
        );
        check_error(
            &script("{\"turn\": 0, \"player\": 1, \"move\": {\"units\": [\"a\"], \"goal\": {\"point\": [1, 1]}}}"),
            "script[0].move.units[0]",
            Some(6),
            "from turn 1 on",
        );
        check_error(
            &script(
                "{\"turn\": 1, \"player\": 1, \"move\": {\"units\": [\"a\"], \"goal\": {\"range\": {\"obstruction\": \"keep\", \"max\": 3}}}}",
            ),
            "script[0].move.goal.range.obstruction",
            Some(6),
            "unknown obstruction \"keep\"",
        );
        check_error(
            &script("{\"turn\": 1, \"player\": 1, \"move\": {\"units\": [\"a\"], \"goal\": {\"range\": {\"unit\": \"a\", \"max\": 3}}}}"),
            "script[0].move.goal",
            Some(6),
            "outside the moving groups",
        );
        check_error(
            &script("{\"turn\": 1, \"player\": 1, \"set_area\": {\"name\": \"door\", \"available\": true}}"),
            "script[0].set_area.name",
            Some(6),
            "the map has no areas",
        );
        check_error(&script("{\"turn\": 1, \"player\": 1}"), "script[0]", Some(6), "expected one of `spawn`");
        check_error(
            &script("{\"turn\": 1, \"player\": 1, \"stop\": {\"units\": [\"a\"]}, \"remove\": {\"units\": [\"a\"]}}"),
            "script[0]",
            Some(6),
            "expected only one of",
        );
        check_error(
            &script("{\"turn\": 1, \"player\": 1, \"edit_terrain\": {\"vx\": 0, \"vz\": 0, \"width\": 2, \"heights\": [1, 2, 3]}}"),
            "script[0].edit_terrain.heights",
            Some(6),
            "multiple of width",
        );
        check_error(
            &script("{\"turn\": 1, \"player\": 1, \"place_obstruction\": {\"x\": 1, \"z\": 1, \"w\": 1, \"h\": 1, \"flags\": \"sticky\"}}"),
            "script[0].place_obstruction.flags",
            Some(6),
            "\"sticky\"",
        );
    }

    #[test]
    fn a_group_with_no_live_unit_becomes_a_rejected_command() {
        let text = minimal(
            ",\n\"script\": [{\"turn\": 1, \"player\": 1, \"remove\": {\"units\": [\"a\"]}},\n{\"turn\": 2, \"player\": 1, \"move\": {\"units\": [\"a\"], \"goal\": {\"point\": [20, 20]}}},\n{\"turn\": 2, \"player\": 2, \"move\": {\"units\": [\"b\"], \"goal\": {\"range\": {\"unit\": \"a\", \"max\": 2}}}},\n{\"turn\": 2, \"player\": 2, \"set_obstruction_flags\": {\"obstruction\": 77, \"flags\": 1}}]",
        );
        let scenario = parse(&text).unwrap();
        let (_, events) = run(&scenario, 3);
        let rejected: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                Event::Rejected { command, reason } => Some((*command, reason.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(rejected.len(), 3, "{rejected:?}");
        assert_eq!(rejected[0], ((2, 1, 2), sim::command::RejectReason::OutOfRange), "an empty unit list");
        assert!(matches!(rejected[1], ((2, 2, 1), sim::command::RejectReason::UnknownEntity(_))), "{rejected:?}");
    }

    #[test]
    fn polygon_config_maps_use_the_configs_coordinates() {
        let config = r#"{"cellSize": 0.5, "agentRadius": 0.5, "objectPadding": 0, "areas": [{"name": "room", "polygon": [[-20, -10], [0, -10], [0, 6], [-20, 6]]}]}"#;
        let text = format!(
            "{{\"format\": \"phalanx-scenario\", \"version\": 1, \"name\": \"p\", \"turns\": 60, \"map\": {{\"polygons\": {{\"text\": {}}}}},\n\"units\": [{{\"name\": \"a\", \"at\": [-15, -5], \"count\": 1}}],\n\"script\": [{{\"turn\": 1, \"move\": {{\"units\": [\"a\"], \"goal\": {{\"point\": [-5, 2]}}}}}}]}}",
            json_string(config)
        );
        let scenario = parse(&text).unwrap();
        // The grid starts 2 · 0.5 + 0.5 + 0 = 1.5 m beyond the areas' bounding box.
        let origin = WorldPos::new(Fixed::from_num(-43) / 2, Fixed::from_num(-23) / 2);
        assert_eq!(scenario.origin(), origin);
        let mut world = scenario.world().unwrap();
        let mut arrived = false;
        run_turns(&scenario, &mut world, 60, |report| arrived |= report.events.iter().any(|e| matches!(e, Event::Arrived { .. })));
        assert!(arrived);
        let unit = world.units().next().unwrap();
        let goal = WorldPos::new(Fixed::from_num(-5) - origin.x, Fixed::from_num(2) - origin.z);
        assert!((unit.pos.x - goal.x).abs() < Fixed::ONE && (unit.pos.z - goal.z).abs() < Fixed::ONE, "{:?} {goal:?}", unit.pos);
        let again = parse(scenario.canonical_text()).unwrap();
        assert_eq!(again.canonical_text(), scenario.canonical_text());
    }

    #[test]
    fn seq_numbers_increase_per_player_in_file_order() {
        let text = minimal(
            ", \"script\": [{\"turn\": 3, \"player\": 1, \"stop\": {\"units\": [\"a\"]}}, {\"turn\": 1, \"player\": 1, \"stop\": {\"units\": [\"a\"]}}, {\"turn\": 1, \"player\": 2, \"stop\": {\"units\": [\"b\"]}}]",
        );
        let scenario = parse(&text).unwrap();
        let mut script = scenario.script();
        let keys = |cmds: Vec<Command>| cmds.iter().map(Command::order_key).collect::<Vec<_>>();
        assert_eq!(keys(script.commands(0)), [(0, 1, 0), (0, 2, 0)]);
        assert_eq!(keys(script.commands(1)), [(1, 1, 2), (1, 2, 1)]);
        assert_eq!(keys(script.commands(2)), []);
        assert_eq!(keys(script.commands(3)), [(3, 1, 1)]);
    }

    #[test]
    fn skirmish_runs_deterministically_and_units_arrive() {
        let scenario = Scenario::load(&example_path("skirmish.json")).unwrap();
        let (hashes_a, events_a) = run(&scenario, 30);
        let (hashes_b, events_b) = run(&scenario, 30);
        assert_eq!(hashes_a, hashes_b);
        assert_eq!(events_a, events_b);
        let count = |f: fn(&Event) -> bool| events_a.iter().filter(|e| f(e)).count();
        assert_eq!(count(|e| matches!(e, Event::Spawned { .. })), 58);
        assert!(count(|e| matches!(e, Event::Arrived { .. })) > 0);
        assert_eq!(count(|e| matches!(e, Event::Rejected { .. })), 0, "{events_a:?}");
        assert_eq!(count(|e| matches!(e, Event::ObstructionPlaced { .. })), 1, "the barracks");
    }

    #[test]
    fn reference_spawns_all_its_units() {
        let scenario = Scenario::load(&example_path("reference.json")).unwrap();
        assert_eq!(scenario.turns(), 150);
        let (_, events) = run(&scenario, 2);
        let spawned = events.iter().filter(|e| matches!(e, Event::Spawned { .. })).count();
        let rejected: Vec<_> = events.iter().filter(|e| matches!(e, Event::Rejected { .. })).collect();
        assert_eq!(spawned, 1000, "{rejected:?}");
        assert!(rejected.is_empty(), "{rejected:?}");
    }

    #[test]
    fn damaged_texts_never_panic() {
        let text = std::fs::read_to_string(example_path("skirmish.json")).unwrap();
        for cut in (0..text.len()).step_by(13) {
            if let Some(prefix) = text.get(..cut) {
                assert!(parse(prefix).is_err());
            }
        }
        let bytes = text.as_bytes();
        for at in (0..bytes.len()).step_by(17) {
            for replacement in [b'}', b'"', b'9', b'-', b'[', b' '] {
                let mut damaged = bytes.to_vec();
                damaged[at] = replacement;
                if let Ok(damaged) = String::from_utf8(damaged) {
                    let _ = parse(&damaged);
                }
            }
        }
    }
}
