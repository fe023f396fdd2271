//! The replay viewer: one self-contained HTML file (no network: its script, style and map are
//! inline) that plays a replay back turn by turn on a canvas (`phalanx view`).
//!
//! [`build_view`] re-simulates each replay from its embedded scenario, as `phalanx verify` does,
//! checking every turn against its recorded hash. A turn that does not reach its hash takes the
//! re-simulation off the recorded game; the next keyframe puts it back (the keyframe is loaded),
//! and the frames in between are marked as this engine's, not the recording's. A snapshot file
//! gives a single frame.
//!
//! What the page holds, as one JSON object, zlib-compressed and base64-encoded in a data block
//! that the page has the browser inflate ([`page_json`] reads it back; `viewer/page.html` is the
//! code that reads it in the browser):
//!
//! - the map: the terrain layer of [`crate::picture`] as a PNG at one pixel per navcell, base64,
//!   once for the start and again after every turn that changed the terrain or the areas (at most
//!   [`MAX_BACKGROUNDS`]);
//! - per unit (a track from its first frame to its last): id, owner, class, radius, and its
//!   positions in 1/16 navcell, the first absolute and then differences from frame to frame; its
//!   state, current order, facing (whole degrees) and path only where they change (a path that
//!   only lost its first waypoints as a count of waypoints dropped), and in a game with rules its
//!   game fields as the fields that changed; order and field texts are indices into one string
//!   table, since many units share them;
//! - per obstruction square: its corners, the frames it exists in and its flags as they change
//!   (gates);
//! - per formation and frame: its layout, state, position and slot positions; its path where it
//!   changes;
//! - per game, the timeline: every event the world reported (but the steps of local movement
//!   in [`QUIET_EVENTS`]) and every game event, grouped by kind as columns (frame and unit track
//!   as differences, player and text only where needed), and each player's whole-number game
//!   fields as the values where they change;
//! - per game, the navcell grid's blocked-class masks at frame 0 and the navcells whose mask
//!   changed at each later frame, for the full grid and the terrain alone ([`MaskStream`]), with
//!   only the bits of the land class and of the classes the units walk with;
//! - for two files, the first divergence, computed from the records as `phalanx diff` does: the
//!   first turn whose component roots or commands differ, the diverging components, both hashes, the
//!   commands, and the field differences at the first keyframe both replays hold after it.
//!
//! The demo's page (1058 unit tracks, 500 turns, four players' game fields, 37,042 events, a
//! 1024-navcell grid) is about 1.30 MB.

use std::collections::BTreeMap;

use pathing::passability::{Obstruction, ObstructionId};
use pathing::{Fixed, Navcell, WorldPos};
use serde::Serialize;
use sim::formation::{FormationState, Layout};
use sim::state_hash::hex;
use sim::{GoalSpec, Target, UnitState, World};

use crate::diff::{FieldDiff, ReplaySplit, common_keyframe, first_state_split, keyframe_diff, replay_split};
use crate::format::{Replay, is_replay};
use crate::picture;
use crate::verify::{command_lines, initial_world};

/// The page as written in the source, with `/*PHALANX_DATA*/` where the data goes.
const PAGE: &str = include_str!("viewer/page.html");

/// The page as a written page holds it: [`PAGE`] without its indentation and its whole-line
/// `//` comments (the script has no string that spans lines, so neither can change what it
/// does; a tenth of the page's script goes).
fn page_template() -> &'static str {
    static COMPACT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    COMPACT.get_or_init(|| {
        let mut out = String::with_capacity(PAGE.len());
        for line in PAGE.lines() {
            let line = line.trim_start();
            if !line.starts_with("//") {
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    })
}

/// Positions are stored in units of 1/`QUANTUM` navcell.
pub const QUANTUM: i64 = 16;

/// Most map pictures a page holds; terrain changes after the last are not shown (the page says
/// so).
pub const MAX_BACKGROUNDS: usize = 64;

/// How to build a page.
#[derive(Clone, Debug, Default)]
pub struct ViewOptions {
    /// Worker threads for each world's path requests (the result does not depend on it).
    pub threads: usize,
    /// Most field differences listed for a divergence.
    pub diff_limit: usize,
    /// The game rulesets the files may name.
    pub rulesets: crate::rules::Rulesets,
    /// Path queries to answer in the first file's game and show in the page (at most
    /// [`MAX_QUERIES`]; replays only).
    pub queries: Vec<QuerySpec>,
}

/// Most path queries a page holds: each is one long-range search, of at most
/// `sim::PATH_NODE_BUDGET` expanded navcells.
pub const MAX_QUERIES: usize = 16;

/// A path query for the page (docs/viewer.md, "Path queries"): the long-range search the
/// simulation would make at the start of turn `turn` (the state frame `turn` shows).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QuerySpec {
    /// For the live unit in slot `index` (and of `generation`, when given): its current order
    /// from where it stands (`World::query_unit_path`).
    Unit {
        /// The turn.
        turn: u32,
        /// The unit's slot index.
        index: u32,
        /// Its generation, when given.
        generation: Option<u32>,
    },
    /// For a unit of `class` standing at `from`, to the point `to` (`World::query_path`).
    Points {
        /// The turn.
        turn: u32,
        /// The class's index.
        class: u8,
        /// Where the unit would stand.
        from: WorldPos,
        /// The point to reach.
        to: WorldPos,
    },
}

impl QuerySpec {
    /// The query's turn.
    pub fn turn(&self) -> u32 {
        match *self {
            Self::Unit { turn, .. } | Self::Points { turn, .. } => turn,
        }
    }

    /// Reads `TURN:UNIT` (a unit's slot index, or `INDEX vGENERATION` as the page writes ids,
    /// `12v0`) or `TURN:X,Z:X,Z[:CLASS]` (two points in metres and a class index, 0 by default).
    ///
    /// # Errors
    /// A message saying which part is wrong and what was expected.
    pub fn parse(text: &str) -> Result<Self, String> {
        let parts: Vec<&str> = text.split(':').collect();
        let expected = "expected TURN:UNIT (a unit id such as 12 or 12v0) or TURN:X,Z:X,Z[:CLASS] (metres, a class index)";
        let turn = parts[0].parse::<u32>().map_err(|_| format!("`{}` is not a turn number; {expected}", parts[0]))?;
        match parts[1..] {
            [unit] => {
                let (index, generation) = match unit.split_once('v') {
                    Some((i, g)) => (i, Some(g)),
                    None => (unit, None),
                };
                let index = index.parse::<u32>().map_err(|_| format!("`{unit}` is not a unit id; {expected}"))?;
                let generation =
                    generation.map(|g| g.parse::<u32>().map_err(|_| format!("`{unit}` is not a unit id; {expected}"))).transpose()?;
                Ok(Self::Unit { turn, index, generation })
            }
            [from, to] | [from, to, _] => {
                let class = match parts.get(3) {
                    Some(c) => c
                        .parse::<u8>()
                        .ok()
                        .filter(|&k| pathing::PassClass::new(k).is_some())
                        .ok_or_else(|| format!("`{c}` is not a class index (0 to 15); {expected}"))?,
                    None => 0,
                };
                let point = |p: &str| -> Result<WorldPos, String> {
                    let (x, z) = p.split_once(',').ok_or_else(|| format!("`{p}` is not a point X,Z; {expected}"))?;
                    let metres = |v: &str| {
                        v.trim().parse::<Fixed>().map_err(|_| format!("`{v}` is not a number of metres in point `{p}`; {expected}"))
                    };
                    Ok(WorldPos::new(metres(x)?, metres(z)?))
                };
                Ok(Self::Points { turn, class, from: point(from)?, to: point(to)? })
            }
            _ => Err(format!("`{text}`: {expected}")),
        }
    }
}

impl std::fmt::Display for QuerySpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Self::Unit { turn, index, generation: Some(g) } => write!(f, "{turn}:{index}v{g}"),
            Self::Unit { turn, index, generation: None } => write!(f, "{turn}:{index}"),
            Self::Points { turn, class, from, to } => write!(f, "{turn}:{},{}:{},{}:{class}", from.x, from.z, to.x, to.z),
        }
    }
}

/// One input file: a replay or a snapshot, by its bytes.
#[derive(Clone, Copy, Debug)]
pub struct Source<'a> {
    /// The name shown in the page and in errors (usually the path).
    pub name: &'a str,
    /// The file's bytes.
    pub bytes: &'a [u8],
}

/// Why no page could be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ViewError {
    /// A file is not a usable replay or snapshot.
    Unreadable {
        /// The file.
        file: String,
        /// What is wrong, with the offset where the reader gives one.
        message: String,
    },
    /// One replay and one snapshot.
    Mixed {
        /// The first file.
        first: String,
        /// The second file.
        second: String,
    },
    /// Not one or two files.
    Count {
        /// How many were given.
        found: usize,
    },
    /// More than [`MAX_QUERIES`] path queries.
    Queries {
        /// How many were given.
        found: usize,
    },
}

impl std::fmt::Display for ViewError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ViewError::Unreadable { file, message } => write!(f, "{file}: {message}"),
            ViewError::Mixed { first, second } => {
                write!(f, "{first} and {second}: expected two replays or two snapshots, found one of each")
            }
            ViewError::Count { found } => write!(f, "expected one or two files to view, found {found}"),
            ViewError::Queries { found } => write!(f, "expected at most {MAX_QUERIES} path queries (--query), found {found}"),
        }
    }
}

impl std::error::Error for ViewError {}

/// A built page and what it shows.
#[derive(Clone, Debug)]
pub struct View {
    /// The page.
    pub html: String,
    /// Frames of the longest game (a replay of `n` turns has `n + 1`: the start of each turn and
    /// the end).
    pub frames: u32,
    /// Unit tracks in all games.
    pub units: usize,
    /// For two files, the first diverging turn (`None` when they agree or for one file).
    pub divergence: Option<u32>,
    /// Things worth knowing, one line each (also shown in the page): a replay that does not
    /// re-simulate to its hashes, terrain pictures left out.
    pub notes: Vec<String>,
}

/// Builds the viewer page of one file, or of two files of the same game (their first divergence
/// marked).
///
/// # Errors
/// [`ViewError`] naming the file that cannot be used and why.
pub fn build_html(sources: &[Source<'_>], options: &ViewOptions) -> Result<String, ViewError> {
    build_view(sources, options).map(|v| v.html)
}

/// As [`build_html`], with what the page shows.
///
/// # Errors
/// As [`build_html`].
pub fn build_view(sources: &[Source<'_>], options: &ViewOptions) -> Result<View, ViewError> {
    if sources.is_empty() || sources.len() > 2 {
        return Err(ViewError::Count { found: sources.len() });
    }
    if options.queries.len() > MAX_QUERIES {
        return Err(ViewError::Queries { found: options.queries.len() });
    }
    let replays: Vec<bool> = sources.iter().map(|s| is_replay(s.bytes)).collect();
    if replays.len() == 2 && replays[0] != replays[1] {
        return Err(ViewError::Mixed { first: sources[0].name.to_owned(), second: sources[1].name.to_owned() });
    }
    let unreadable = |s: &Source<'_>, message: String| ViewError::Unreadable { file: s.name.to_owned(), message };
    let mut notes = Vec::new();
    let mut games: Vec<Game> = Vec::new();
    let mut backgrounds = Vec::new();
    let mut geometry: Option<Geometry> = None;
    let divergence = if replays[0] {
        let mut read = Vec::new();
        for s in sources {
            read.push(Replay::read(s.bytes).map_err(|e| unreadable(s, e.to_string()))?);
        }
        for (k, (s, replay)) in sources.iter().zip(&read).enumerate() {
            let bgs = if k == 0 { Some(&mut backgrounds) } else { None };
            let queries = if k == 0 { &options.queries[..] } else { &[] };
            let (game, geo) = capture_replay(s.name, replay, options, bgs, queries, &mut notes).map_err(|e| unreadable(s, e))?;
            geometry.get_or_insert(geo);
            games.push(game);
        }
        match &read[..] {
            [a, b] => Some(replay_divergence(a, b, options.diff_limit, &options.rulesets).map_err(|e| unreadable(&sources[1], e))?),
            _ => None,
        }
    } else {
        let mut data = Vec::new();
        for s in sources {
            let world = options.rulesets.load(s.bytes).map_err(|e| unreadable(s, e.to_string()))?;
            let snapshot = sim::snapshot::unframe(s.bytes).map_err(|e| unreadable(s, e.to_string()))?;
            if backgrounds.is_empty() {
                backgrounds.push((0, png_data_url(&picture::terrain_png(world.nav()))));
            }
            let geo = Geometry::of(&world);
            let rules = options.rulesets.of_world(&world).cloned();
            let mut capture = Capture::new(s.name, "", world.turn(), geo.cell_bits, rules);
            if data.is_empty() {
                for query in &options.queries {
                    if query.turn() != world.turn() {
                        return Err(unreadable(s, format!("--query {query}: a snapshot holds turn {} only", world.turn())));
                    }
                    let answer = answer_query(&world, query, capture.cell_bits).map_err(|e| unreadable(s, e))?;
                    capture.game.qs.push(answer);
                }
            }
            capture.frame(&world);
            let classes = geo.classes.len();
            geometry.get_or_insert(geo);
            games.push(capture.finish(classes));
            data.push(snapshot);
        }
        match &data[..] {
            [a, b] => Some(snapshot_divergence(a, b, options.diff_limit, &options.rulesets)),
            _ => None,
        }
    };
    let Some(geometry) = geometry else { return Err(ViewError::Count { found: 0 }) };
    let frames = games.iter().map(|g| g.frames).max().unwrap_or(0);
    let units = games.iter().map(|g| g.units.len()).sum();
    let first_divergence = divergence.as_ref().and_then(|d| d.turn);
    // The page opens on the first frame where a unit stands (a scenario's units are often spawned
    // by the commands of turn 0, so frame 0 would show an empty map), or frame 0 when none ever does.
    let start = games.iter().flat_map(|g| g.units.iter().map(|t| t.f)).min().unwrap_or(0);
    let (strs, layouts) = intern_texts(&mut games);
    let data = Data {
        v: 2,
        start,
        w: geometry.width,
        h: geometry.height,
        cell: geometry.cell_metres,
        q: QUANTUM,
        chunk: pathing::CHUNK_SIZE,
        land: geometry.land,
        classes: geometry.classes,
        players: picture::PLAYER_COLOURS.to_vec(),
        legend: picture::TerrainColour::ALL.iter().map(|c| (c.meaning(), c.rgb())).collect(),
        turn_ms: geometry.turn_ms,
        bgs: backgrounds,
        games,
        div: divergence,
        notes: notes.clone(),
        strs,
        layouts,
    };
    let json = serde_json::to_vec(&data).map_err(|e| unreadable(&sources[0], format!("cannot encode the page data: {e}")))?;
    // Base64 holds no `<`, so nothing in a name or a field value can end the data block.
    let html = page_template().replacen(DATA_MARKER, &pack(&json), 1);
    Ok(View { html, frames, units, divergence: first_divergence, notes })
}

/// Where the packed data goes in the page: the inside of its data block
/// (`<script type="application/octet-stream" id="phx-data">`).
const DATA_MARKER: &str = "/*PHALANX_DATA*/";

/// What opens the page's data block.
const DATA_OPEN: &str = "<script type=\"application/octet-stream\" id=\"phx-data\">";

/// The page data as the page holds it: its JSON compressed with zlib (the browser's
/// `DecompressionStream("deflate")` reads it), in standard base64.
fn pack(json: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(miniz_oxide::deflate::compress_to_vec_zlib(json, 9))
}

/// The JSON data of a page [`build_html`] wrote, unpacked (for tests and tools that read pages).
///
/// # Errors
/// A message saying what is missing or malformed: the packed string, its base64 or its zlib
/// stream.
pub fn page_json(html: &str) -> Result<String, String> {
    use base64::Engine as _;
    let start = html.find(DATA_OPEN).ok_or_else(|| format!("no packed data in the page (`{DATA_OPEN}`)"))? + DATA_OPEN.len();
    let end = html[start..].find("</script>").ok_or("the packed data's block does not end")? + start;
    let zlib = base64::engine::general_purpose::STANDARD
        .decode(&html[start..end])
        .map_err(|e| format!("the packed data at byte {start} is not base64: {e}"))?;
    // A page of ours unpacks to tens of megabytes; more than 256 MiB is not one of ours.
    let json = miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(&zlib, 1 << 28)
        .map_err(|e| format!("the packed data at byte {start} is not a zlib stream: {e:?}"))?;
    String::from_utf8(json).map_err(|e| format!("the packed data is not UTF-8 text: {e}"))
}

/// The whole page data.
#[derive(Serialize)]
struct Data {
    /// Data layout version.
    v: u32,
    /// The frame the page opens on, unless its address names a turn (`#turn=N`).
    start: u32,
    /// Grid width and height. `[Units: navcells]`
    w: u32,
    h: u32,
    /// Navcell size. `[Units: metres]`
    cell: f64,
    /// Position units per navcell.
    q: i64,
    /// The hierarchy's chunk side ([`pathing::CHUNK_SIZE`]). `[Units: navcells]`
    chunk: u32,
    /// The land class (the one the terrain is coloured for).
    land: u8,
    classes: Vec<ClassOut>,
    /// Player colours, RGB, by player.
    players: Vec<[u8; 3]>,
    /// The terrain colours and what they mean.
    legend: Vec<(&'static str, [u8; 3])>,
    /// Turn length, for playback. `[Units: milliseconds]`
    turn_ms: u32,
    /// (first frame, PNG data URL) of each map picture.
    bgs: Vec<(u32, String)>,
    games: Vec<Game>,
    div: Option<DivergenceOut>,
    notes: Vec<String>,
    /// The texts the units' order and game-state changes index.
    strs: Vec<String>,
    /// The layouts of the units' game states: each module's name, with its fields' names when
    /// its state is a plain object (`null` for a value shown as one text).
    layouts: Vec<serde_json::Value>,
}

#[derive(Serialize)]
struct ClassOut {
    name: String,
    /// `[Units: metres]`
    clearance: f64,
    /// Which obstructions block it: `none`, `pathfinding` or `foundation`.
    obs: &'static str,
}

/// One game: a replay's frames, or a snapshot's one.
#[derive(Serialize)]
struct Game {
    name: String,
    scenario: String,
    /// The turn of frame 0.
    first: u32,
    frames: u32,
    /// Frame ranges `[from, to]` (inclusive) that are this engine's re-simulation, not the
    /// recording's.
    bad: Vec<[u32; 2]>,
    units: Vec<Track>,
    obs: Vec<Obs>,
    forms: Vec<Form>,
    /// The timeline, one entry per kind of event (in first-happened order), its events in the
    /// order they happened, as columns: `k` the kind (an index into the page's string table),
    /// `f` the frames (the end of the turn each happened in) as differences from the one before,
    /// `u` the unit's track in `units` plus one (0: none) as differences from the one before,
    /// `p` the players (left out when every event of the kind is its unit's owner's; 0 is
    /// none), `t` the texts as string indices (left out when none has one).
    ev: Vec<EventColumns>,
    #[serde(skip)]
    events: Vec<EventOut>,
    /// Per player and numeric field of its game state (`module.field`, an index into the string
    /// table): `[player, field, frame, value, frame, value, …]`, the value at each frame it
    /// changed.
    ps: Vec<Vec<i64>>,
    #[serde(skip)]
    series: BTreeMap<(u8, String), Vec<i64>>,
    /// The navcell grid's blocked-class masks (bit `c` set: impassable for class `c`), with the
    /// obstructions rasterized for each class's clearance ([`MaskStream`]), but that its first
    /// entry codes each mask XOR the terrain's (`tm`) at that frame.
    pm: MaskStream,
    /// The same for the terrain alone.
    tm: MaskStream,
    /// The path queries answered in this game ([`QuerySpec`]).
    qs: Vec<QueryOut>,
    /// The classes whose bits `pm` and `tm` hold (bit `c` for class `c`).
    pc: u16,
    /// The hierarchy (regions of [`pathing::CHUNK_SIZE`]-navcell chunks, and the components
    /// joining them) of every class with a navigation layer, one entry per class at frame 0 and
    /// another wherever its region counts or components change: the page labels the regions of a
    /// chunk from the class's grid by the hierarchy's own rule and checks the counts.
    hr: Vec<RegionsOut>,
}

/// A grid of per-navcell class masks through the frames: the first entry is
/// `[0, mask, count, mask, count, …]`, the grid at frame 0 run-length coded in row order; each
/// later one `[frame, step, mask, step, mask, …]`, the navcells whose mask changed at that frame,
/// each index the one before plus `step` (the first from 0), with its new mask.
#[derive(Serialize, Default)]
#[serde(transparent)]
struct MaskStream {
    entries: Vec<Vec<u32>>,
    #[serde(skip)]
    last: Vec<u16>,
}

/// `[frame, mask, count, mask, count, …]`: `masks` run-length coded.
fn run_coded(frame: u32, masks: impl Iterator<Item = u16>) -> Vec<u32> {
    let mut entry = vec![frame];
    let mut cells = masks.peekable();
    while let Some(mask) = cells.next() {
        let mut count = 1u32;
        while cells.next_if(|&m| m == mask).is_some() {
            count += 1;
        }
        entry.extend([u32::from(mask), count]);
    }
    entry
}

/// The grid of a [`run_coded`] entry.
fn run_decoded(entry: &[u32]) -> Vec<u16> {
    entry[1..].chunks(2).flat_map(|pair| std::iter::repeat_n(pair[0] as u16, pair.get(1).copied().unwrap_or(0) as usize)).collect()
}

impl MaskStream {
    /// Notes the grid `masks` as frame `frame`'s.
    fn record(&mut self, frame: u32, masks: impl ExactSizeIterator<Item = u16>) {
        if self.entries.is_empty() {
            self.last = masks.collect();
            self.entries.push(run_coded(frame, self.last.iter().copied()));
            return;
        }
        let mut entry = vec![frame];
        let mut at = 0usize;
        for (k, mask) in masks.enumerate() {
            if let Some(old) = self.last.get_mut(k)
                && *old != mask
            {
                *old = mask;
                entry.extend([(k - at) as u32, u32::from(mask)]);
                at = k;
            }
        }
        if entry.len() > 1 {
            self.entries.push(entry);
        }
    }
}

/// Every navcell's blocked-class mask of `grid`, in row order.
fn masks_of(grid: &pathing::NavGrid) -> impl ExactSizeIterator<Item = u16> + '_ {
    let w = grid.width();
    (0..grid.n_cells()).map(move |k| grid.blocked_mask(Navcell::new((k as u32 % w) as u16, (k as u32 / w) as u16)))
}

/// One event of the timeline, while capturing.
#[derive(Clone, Debug)]
struct EventOut {
    frame: u32,
    kind: String,
    player: u8,
    unit: Option<String>,
    text: String,
}

/// The events of one kind, as the page holds them (see [`Game::ev`]).
#[derive(Serialize, Default)]
struct EventColumns {
    k: i64,
    f: Vec<i64>,
    u: Vec<i64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    p: Vec<i64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    t: Vec<i64>,
}

/// Core events left off the timeline: each is a step of local movement, many per unit.
const QUIET_EVENTS: [&str; 3] = ["Blocked", "Nudged", "Detour"];

/// A unit from its first frame to its last.
#[derive(Serialize)]
struct Track {
    /// `index v generation`.
    id: String,
    /// Owner.
    o: u8,
    /// Class index.
    c: u8,
    /// Radius. `[Units: 1/16 navcell]`
    r: i64,
    /// First frame.
    f: u32,
    /// Positions: the first absolute, then differences. `[Units: 1/16 navcell]`
    x: Vec<i64>,
    z: Vec<i64>,
    /// State changes: frame, code (0 idle, 1 waiting for a path, 2 moving, 3 blocked), blocked
    /// turns; in the page flat, `[frame step, code, turns, …]` ([`steps`]).
    #[serde(serialize_with = "flat_steps")]
    st: Vec<[u32; 3]>,
    /// Order changes: frame, text (an index into the page's string table); in the page flat,
    /// `[frame step, text, …]` ([`steps`]).
    #[serde(serialize_with = "flat_order_steps")]
    ord: Vec<(u32, Text)>,
    /// Facing changes: frame, direction in whole degrees anticlockwise from east (0..=359); in
    /// the page flat, `[frame step, turn, …]`, each turn the degrees anticlockwise from the
    /// facing before (from 0 for the first), 0..=359 ([`steps`]).
    #[serde(serialize_with = "flat_facing_steps")]
    fa: Vec<[u32; 2]>,
    /// Changes of the unit's game state (a world with game rules), each `[frame, layout, text…]`
    /// (every field: the layout's index in the page's `layouts`, then each field's text) or
    /// `[frame, -1, field, text, …]` (the fields that changed since the entry before, by their
    /// place in its layout); texts are indices into the page's string table. In the page each
    /// frame is a step from the entry before's ([`steps`]).
    #[serde(serialize_with = "frame_steps")]
    gm: Vec<Vec<i64>>,
    #[serde(skip)]
    game: Vec<(u32, GameChange)>,
    /// Path changes: frame, then the turning points (x, z pairs) or how many of the previous
    /// path's first points were dropped. In the page each frame is a step from the entry
    /// before's ([`steps`]).
    #[serde(serialize_with = "path_steps")]
    p: Vec<(u32, PathOut)>,
    #[serde(skip)]
    last: TrackLast,
}

/// The frames of a unit's change lists as the page holds them: each the step from the entry
/// before's (the first from 0), which keeps the numbers short and repetitive for the page's
/// compression (about a fifth of the demo's page); the page adds them up again.
fn steps(frames: impl Iterator<Item = u32>) -> impl Iterator<Item = u32> {
    frames.scan(0u32, |last, frame| {
        let step = frame.wrapping_sub(*last);
        *last = frame;
        Some(step)
    })
}

fn flat_steps<S: serde::Serializer>(list: &[[u32; 3]], serializer: S) -> Result<S::Ok, S::Error> {
    let frames = steps(list.iter().map(|e| e[0]));
    serializer.collect_seq(frames.zip(list).flat_map(|(step, e)| [step, e[1], e[2]]))
}

fn flat_order_steps<S: serde::Serializer>(list: &[(u32, Text)], serializer: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    #[serde(untagged)]
    enum Item<'a> {
        Step(u32),
        Text(&'a Text),
    }
    let frames = steps(list.iter().map(|e| e.0));
    serializer.collect_seq(frames.zip(list).flat_map(|(step, e)| [Item::Step(step), Item::Text(&e.1)]))
}

fn flat_facing_steps<S: serde::Serializer>(list: &[[u32; 2]], serializer: S) -> Result<S::Ok, S::Error> {
    let frames = steps(list.iter().map(|e| e[0]));
    let turns = list.iter().scan(0u32, |last, e| {
        let turn = (e[1] + 360 - *last % 360) % 360;
        *last = e[1];
        Some(turn)
    });
    serializer.collect_seq(frames.zip(turns).flat_map(|(step, turn)| [step, turn]))
}

fn frame_steps<S: serde::Serializer>(list: &[Vec<i64>], serializer: S) -> Result<S::Ok, S::Error> {
    let frames = steps(list.iter().map(|e| e.first().map_or(0, |&f| f as u32)));
    serializer.collect_seq(
        frames.zip(list).map(|(step, e)| std::iter::once(i64::from(step)).chain(e.iter().skip(1).copied()).collect::<Vec<i64>>()),
    )
}

fn path_steps<S: serde::Serializer>(list: &[(u32, PathOut)], serializer: S) -> Result<S::Ok, S::Error> {
    let frames = steps(list.iter().map(|e| e.0));
    serializer.collect_seq(frames.zip(list).map(|(step, e)| (step, &e.1)))
}

/// Each module's name, with its fields' names when its state is a plain object.
type GameLayout = Vec<(String, Option<Vec<String>>)>;

/// A unit's game state as the page holds it: which fields it has (each module's name, with its
/// fields' names when its value is a plain object), and each field's text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct GameFields {
    layout: GameLayout,
    texts: Vec<String>,
}

impl GameFields {
    /// The fields of a unit's state in every module (an object by module name).
    fn of(game: &serde_json::Value) -> Self {
        let mut fields = GameFields::default();
        let Some(modules) = game.as_object() else {
            fields.layout.push((String::new(), None));
            fields.texts.push(crate::diff::value_text(game));
            return fields;
        };
        for (module, value) in modules {
            match crate::diff::plain_fields(value) {
                Some(object) => {
                    fields.layout.push((module.clone(), Some(object.keys().cloned().collect())));
                    fields.texts.extend(object.values().map(crate::diff::value_text));
                }
                None => {
                    fields.layout.push((module.clone(), None));
                    fields.texts.push(crate::diff::value_text(value));
                }
            }
        }
        fields
    }
}

/// A change of a unit's game state: all of it, or the texts of some fields of the same layout.
#[derive(Clone, Debug)]
enum GameChange {
    Full(GameFields),
    Part(Vec<(usize, String)>),
}

/// A text of the page: while capturing the text itself, in the page an index into its string
/// table (`strs`), since many units share an order or a game state.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Text {
    Own(String),
    Index(u32),
}

impl Serialize for Text {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Text::Own(text) => serializer.serialize_str(text),
            Text::Index(k) => serializer.serialize_u32(*k),
        }
    }
}

/// The page's string table and game-state layouts: every distinct order text, game field text
/// and layout once, in first-use order (games, then units, then frames); each [`Text`] of `games`
/// replaced by its index and each unit's game changes written as `gm`.
fn intern_texts(games: &mut [Game]) -> (Vec<String>, Vec<serde_json::Value>) {
    let mut table: Vec<String> = Vec::new();
    let mut index: BTreeMap<String, u32> = BTreeMap::new();
    let mut intern = |own: String| {
        i64::from(*index.entry(own).or_insert_with_key(|own| {
            table.push(own.clone());
            (table.len() - 1) as u32
        }))
    };
    let mut layouts: Vec<serde_json::Value> = Vec::new();
    let mut layout_index: BTreeMap<GameLayout, i64> = BTreeMap::new();
    for g in games.iter_mut() {
        // A unit's track at an event: the one of that id alive at its frame or the frame before
        // (a unit killed in a turn was last seen at its start; one spawned, at its end).
        let mut tracks: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (k, t) in g.units.iter().enumerate() {
            tracks.entry(t.id.as_str()).or_default().push(k);
        }
        let track_of = |id: &str, frame: u32| {
            let list = tracks.get(id)?;
            list.iter().copied().find(|&k| {
                let t = &g.units[k];
                t.f <= frame && t.f + t.x.len() as u32 >= frame
            })
        };
        let mut kinds: Vec<(String, EventColumns, bool)> = Vec::new();
        let mut last: Vec<(u32, i64)> = Vec::new();
        for e in &g.events {
            let at = match kinds.iter().position(|(kind, _, _)| *kind == e.kind) {
                Some(at) => at,
                None => {
                    kinds.push((e.kind.clone(), EventColumns::default(), false));
                    last.push((0, 0));
                    kinds.len() - 1
                }
            };
            let track = e.unit.as_deref().and_then(|id| track_of(id, e.frame));
            let (_, columns, own) = &mut kinds[at];
            let (last_frame, last_unit) = &mut last[at];
            columns.f.push(i64::from(e.frame - *last_frame));
            *last_frame = e.frame;
            let unit = track.map_or(0, |k| k as i64 + 1);
            columns.u.push(unit - *last_unit);
            *last_unit = unit;
            columns.p.push(i64::from(e.player));
            *own |= track.is_none_or(|k| g.units[k].o != e.player);
            columns.t.push(intern(e.text.clone()));
        }
        let empty = intern(String::new());
        for (kind, mut columns, needs_players) in kinds {
            columns.k = intern(kind);
            if !needs_players {
                columns.p.clear();
            }
            if columns.t.iter().all(|&t| t == empty) {
                columns.t.clear();
            }
            g.ev.push(columns);
        }
        g.events.clear();
        for ((player, field), changes) in std::mem::take(&mut g.series) {
            g.ps.push([vec![i64::from(player), intern(field)], changes].concat());
        }
    }
    for t in games.iter_mut().flat_map(|g| g.units.iter_mut()) {
        for (_, text) in t.ord.iter_mut() {
            if let Text::Own(own) = text {
                *text = Text::Index(intern(std::mem::take(own)) as u32);
            }
        }
        for (frame, change) in std::mem::take(&mut t.game) {
            let mut entry = vec![i64::from(frame)];
            match change {
                GameChange::Full(fields) => {
                    let k = *layout_index.entry(fields.layout.clone()).or_insert_with(|| {
                        layouts.push(serde_json::json!(fields.layout));
                        (layouts.len() - 1) as i64
                    });
                    entry.push(k);
                    entry.extend(fields.texts.into_iter().map(&mut intern));
                }
                GameChange::Part(changed) => {
                    entry.push(-1);
                    for (field, text) in changed {
                        entry.extend([field as i64, intern(text)]);
                    }
                }
            }
            t.gm.push(entry);
        }
    }
    (table, layouts)
}

#[derive(Default)]
struct TrackLast {
    x: i64,
    z: i64,
    state: Option<[u32; 2]>,
    order: Option<String>,
    facing: Option<u32>,
    game: Option<GameFields>,
    waypoints: Vec<WorldPos>,
    /// The frame it was last seen in.
    frame: u32,
}

#[derive(Serialize)]
#[serde(untagged)]
enum PathOut {
    Drop(usize),
    Points(Vec<i64>),
}

/// An obstruction square while its shape stays the same.
#[derive(Serialize)]
struct Obs {
    id: ObstructionId,
    /// First frame.
    f: u32,
    /// First frame it is gone in; `None` while it lasts.
    e: Option<u32>,
    /// Corners (x, z) anticlockwise. `[Units: 1/16 navcell]`
    pts: [i64; 8],
    /// Drawn as a tree.
    tree: bool,
    /// Flag changes: frame, flags (bit 0 blocks movement, bit 1 blocks building).
    fl: Vec<(u32, u8)>,
    #[serde(skip)]
    last: Obstruction,
}

/// A formation.
#[derive(Serialize)]
struct Form {
    id: u32,
    o: u8,
    /// Frame, layout (0 line, 1 box, 2 column, 3 wedge, 4 loose), state (0 idle, 1 waiting for a
    /// path, 2 following, 3 turning, 4 finalising, 5 arriving), position x, z, and the slots' x, z
    /// pairs. `[Units: 1/16 navcell]`
    fr: Vec<(u32, u8, u8, i64, i64, Vec<i64>)>,
    /// Path changes: frame, the generalised path ahead (x, z pairs).
    p: Vec<(u32, Vec<i64>)>,
    #[serde(skip)]
    last_path: Option<Vec<WorldPos>>,
    /// Flow-field changes ([`field_out`]): frame, the field's navcell rectangle `[i0, j0, i1, j1]`
    /// (`i0 ≤ i < i1`), and each navcell's step in row order, run-length coded `[code, count, …]`:
    /// 0 none (impassable or cut off), 5 a goal navcell, else `3·(dz + 1) + dx + 2` for the step
    /// `(dx, dz)` toward the goal. An empty rectangle: no field.
    ff: Vec<(u32, [u32; 4], Vec<u32>)>,
}

/// A formation's flow field as the page holds it ([`Form::ff`]): its rectangle and run-coded
/// steps; an empty rectangle when it has none.
fn field_out(field: Option<&pathing::flow_field::FlowField>) -> ([u32; 4], Vec<u32>) {
    let Some(field) = field else { return ([0; 4], Vec::new()) };
    let r = field.region();
    let codes = (r.j0..r.j1).flat_map(|j| (r.i0..r.i1).map(move |i| Navcell::new(i as u16, j as u16))).map(|cell| {
        match (field.distance(cell), field.next(cell)) {
            (None, _) => 0u16,
            (Some(_), None) => 5,
            (Some(_), Some(n)) => (3 * (i32::from(n.j) - i32::from(cell.j) + 1) + (i32::from(n.i) - i32::from(cell.i)) + 2) as u16,
        }
    });
    let mut coded = run_coded(0, codes);
    coded.remove(0);
    ([r.i0, r.j0, r.i1, r.j1], coded)
}

/// Each class's hierarchy as the page holds it ([`Game::hr`]).
#[derive(Serialize)]
struct RegionsOut {
    /// The class.
    c: u8,
    /// The first frame it holds for.
    f: u32,
    /// Each chunk's region count, chunks in row order ([`pathing::Hierarchy::chunk_region_counts`]).
    n: Vec<u16>,
    /// Each region's component, regions in dense order ([`pathing::Hierarchy::region_components`]).
    k: Vec<u32>,
}

/// What two files' first divergence is, as `phalanx diff` reports it.
#[derive(Serialize)]
struct DivergenceOut {
    /// The first diverging turn, if any.
    turn: Option<u32>,
    /// One line: what was found.
    summary: String,
    /// Whether the turn's commands are the same in both.
    same_commands: bool,
    commands_a: Vec<String>,
    commands_b: Vec<String>,
    /// The first turn whose end state differs (the diverging turn, or a later one when only the
    /// commands differ there); the page's "first differing state" is the start of the next turn.
    state_after: Option<u32>,
    /// The diverging components of that state, in the digest's order.
    components: Vec<String>,
    hash_a: String,
    hash_b: String,
    /// The turn whose start state was compared field by field (a keyframe both hold).
    state_turn: Option<u32>,
    diffs: Vec<FieldDiff>,
    total: usize,
    notes: Vec<String>,
}

/// What the page needs of the world's geometry.
struct Geometry {
    width: u32,
    height: u32,
    cell_metres: f64,
    cell_bits: i128,
    land: u8,
    classes: Vec<ClassOut>,
    turn_ms: u32,
}

impl Geometry {
    fn of(world: &World) -> Self {
        let nav = world.nav();
        let grid = nav.grid();
        let cell = grid.cell_size();
        let classes = nav
            .classes()
            .iter()
            .map(|(_, d)| ClassOut { name: d.name.clone(), clearance: d.clearance.to_bits() as f64 / 65536.0, obs: d.obstructions.name() })
            .collect();
        Self {
            width: grid.width(),
            height: grid.height(),
            cell_metres: cell.to_bits() as f64 / 65536.0,
            cell_bits: i128::from(cell.to_bits()),
            land: picture::land_class(nav.classes()).index(),
            classes,
            turn_ms: world.settings().turn_ms,
        }
    }
}

/// A world coordinate in 1/16 navcell, rounded to nearest.
fn quantise(v: i128, cell_bits: i128) -> i64 {
    let num = v * i128::from(QUANTUM) * 2 + cell_bits;
    num.div_euclid(2 * cell_bits.max(1)) as i64
}

fn q(v: Fixed, cell_bits: i128) -> i64 {
    quantise(i128::from(v.to_bits()), cell_bits)
}

fn points(list: &[WorldPos], cell_bits: i128) -> Vec<i64> {
    list.iter().flat_map(|p| [q(p.x, cell_bits), q(p.z, cell_bits)]).collect()
}

/// Collects the frames of one game.
struct Capture {
    game: Game,
    cell_bits: i128,
    /// Live unit tracks by entity id.
    live_units: BTreeMap<(u32, u32), usize>,
    /// Live obstruction records by obstruction id.
    live_obs: BTreeMap<ObstructionId, usize>,
    /// Formation records by formation id.
    forms: BTreeMap<u32, usize>,
    next_frame: u32,
    /// The world's game rules, known to this program, for the units' game fields.
    rules: Option<std::sync::Arc<dyn crate::rules::Ruleset>>,
    /// The roots of the state the navcell grids are made from (terrain and areas, obstructions)
    /// for the next frame, when known ([`Capture::grid_roots`]), and those of the last frame
    /// whose grids were read.
    grid_key: Option<GridKey>,
    grid_key_at: Option<GridKey>,
}

/// The digest roots of the `geometry` and `obstructions` components.
type GridKey = (Option<[u8; 32]>, Option<[u8; 32]>);

fn grid_key(digest: &sim::digest_tree::StateDigest) -> GridKey {
    (geometry_root(digest), component_root(digest, "obstructions"))
}

/// The digest root of one component of the state.
fn component_root(digest: &sim::digest_tree::StateDigest, component: &str) -> Option<[u8; 32]> {
    digest.components.iter().find(|(name, _)| name == component).map(|(_, root)| *root)
}

impl Capture {
    fn new(name: &str, scenario: &str, first: u32, cell_bits: i128, rules: Option<std::sync::Arc<dyn crate::rules::Ruleset>>) -> Self {
        let game = Game {
            name: name.to_owned(),
            scenario: scenario.to_owned(),
            first,
            frames: 0,
            bad: Vec::new(),
            units: Vec::new(),
            obs: Vec::new(),
            forms: Vec::new(),
            ev: Vec::new(),
            events: Vec::new(),
            ps: Vec::new(),
            series: BTreeMap::new(),
            pm: MaskStream::default(),
            qs: Vec::new(),
            tm: MaskStream::default(),
            pc: u16::MAX,
            hr: Vec::new(),
        };
        Self {
            game,
            cell_bits,
            live_units: BTreeMap::new(),
            live_obs: BTreeMap::new(),
            forms: BTreeMap::new(),
            next_frame: 0,
            rules,
            grid_key: None,
            grid_key_at: None,
        }
    }

    /// Tells the next frame the digest of its state, so that it reads the navcell grids only
    /// when the state they are made from changed (reading them is a pass over every navcell).
    fn grid_roots(&mut self, digest: &sim::digest_tree::StateDigest) {
        self.grid_key = Some(grid_key(digest));
    }

    fn mark_bad(&mut self, frame: u32) {
        match self.game.bad.last_mut() {
            Some(range) if range[1] + 1 == frame => range[1] = frame,
            _ => self.game.bad.push([frame, frame]),
        }
    }

    /// Records the world as the next frame.
    fn frame(&mut self, world: &World) {
        let frame = self.next_frame;
        self.next_frame += 1;
        self.game.frames = self.next_frame;
        self.player_fields(frame, world);
        // The grids, unless the state roots they are made from are those of the frame before.
        let key = self.grid_key.take();
        if key.is_none() || key != self.grid_key_at {
            self.game.pm.record(frame, masks_of(world.nav().grid()));
            self.game.tm.record(frame, masks_of(world.nav().terrain_only()));
            self.hierarchies(frame, world);
            self.grid_key_at = key;
        }
        let cell = self.cell_bits;
        // Formation membership, for the units' order text.
        let mut member_of: BTreeMap<(u32, u32), String> = BTreeMap::new();
        for f in world.formations() {
            if f.is_active() {
                for m in f.members() {
                    member_of.insert((m.index, m.generation), format!("in formation {} ({})", f.id.0, layout_name(f.layout)));
                }
            }
        }
        for u in world.units() {
            let key = (u.id.index, u.id.generation);
            let (x, z) = (q(u.pos.x, cell), q(u.pos.z, cell));
            let k = match self.live_units.get(&key) {
                Some(&k) if self.game.units[k].last.frame + 1 == frame => k,
                _ => {
                    self.game.units.push(Track {
                        id: u.id.to_string(),
                        o: u.owner.0,
                        c: u.class.index(),
                        r: q(u.radius, cell),
                        f: frame,
                        x: vec![x],
                        z: vec![z],
                        st: Vec::new(),
                        ord: Vec::new(),
                        fa: Vec::new(),
                        gm: Vec::new(),
                        game: Vec::new(),
                        p: Vec::new(),
                        last: TrackLast { x, z, frame, ..TrackLast::default() },
                    });
                    let k = self.game.units.len() - 1;
                    self.live_units.insert(key, k);
                    let t = &mut self.game.units[k];
                    record_unit_details(
                        t,
                        u,
                        frame,
                        member_of.get(&key),
                        cell,
                        self.rules.as_ref().and_then(|r| unit_modules_json(&**r, world, u.id)),
                    );
                    continue;
                }
            };
            let t = &mut self.game.units[k];
            t.x.push(x - t.last.x);
            t.z.push(z - t.last.z);
            t.last.x = x;
            t.last.z = z;
            t.last.frame = frame;
            record_unit_details(
                t,
                u,
                frame,
                member_of.get(&key),
                cell,
                self.rules.as_ref().and_then(|r| unit_modules_json(&**r, world, u.id)),
            );
        }
        self.live_units.retain(|_, &mut k| self.game.units[k].last.frame == frame);
        // Obstructions: a record per shape; flags may change within it.
        let current = world.nav().obstructions();
        for (&id, o) in current {
            match self.live_obs.get(&id) {
                Some(&k) if self.game.obs[k].last.square == o.square => {
                    let rec = &mut self.game.obs[k];
                    if rec.last.flags != o.flags {
                        rec.fl.push((frame, o.flags.0));
                        rec.last = *o;
                    }
                }
                previous => {
                    if let Some(&k) = previous {
                        self.game.obs[k].e = Some(frame);
                    }
                    let c = picture::square_corners(o);
                    let pts = [c[0].0, c[0].1, c[1].0, c[1].1, c[2].0, c[2].1, c[3].0, c[3].1].map(|v| quantise(v, cell));
                    self.game.obs.push(Obs {
                        id,
                        f: frame,
                        e: None,
                        pts,
                        tree: picture::is_tree(o),
                        fl: vec![(frame, o.flags.0)],
                        last: *o,
                    });
                    self.live_obs.insert(id, self.game.obs.len() - 1);
                }
            }
        }
        let gone: Vec<ObstructionId> = self.live_obs.keys().copied().filter(|id| !current.contains_key(id)).collect();
        for id in gone {
            if let Some(k) = self.live_obs.remove(&id) {
                self.game.obs[k].e = Some(frame);
            }
        }
        // Formations.
        for f in world.formations() {
            let k = *self.forms.entry(f.id.0).or_insert_with(|| {
                self.game.forms.push(Form { id: f.id.0, o: f.owner.0, fr: Vec::new(), p: Vec::new(), last_path: None, ff: Vec::new() });
                self.game.forms.len() - 1
            });
            let slots = points(&world.formation_slots(f.id), cell);
            let rec = &mut self.game.forms[k];
            rec.fr.push((frame, layout_code(f.layout), state_code(f.state), q(f.pos.x, cell), q(f.pos.z, cell), slots));
            if rec.last_path.as_deref() != Some(f.path()) {
                rec.p.push((frame, points(f.path(), cell)));
                rec.last_path = Some(f.path().to_vec());
            }
            let (rect, steps) = field_out(world.formation_field(f.id));
            if rec.ff.last().is_none_or(|last| last.1 != rect || last.2 != steps) && (rect != [0; 4] || !rec.ff.is_empty()) {
                rec.ff.push((frame, rect, steps));
            }
        }
    }

    /// Notes each class's hierarchy at `frame` where it differs from the one noted last.
    fn hierarchies(&mut self, frame: u32, world: &World) {
        let nav = world.nav();
        for (class, _) in nav.classes().iter() {
            let Some(class_nav) = nav.class_nav(class) else { continue };
            let h = class_nav.hierarchy();
            let (n, k): (Vec<u16>, Vec<u32>) = (h.chunk_region_counts().collect(), h.region_components().to_vec());
            let last = self.game.hr.iter().rev().find(|r| r.c == class.index());
            if last.is_none_or(|r| r.n != n || r.k != k) {
                self.game.hr.push(RegionsOut { c: class.index(), f: frame, n, k });
            }
        }
    }

    /// The game captured, with `classes` the number of the grid's passability classes: its
    /// masks hold every one of them (`pc`).
    fn finish(mut self, classes: usize) -> Game {
        self.game.pc = u16::try_from((1u32 << classes.min(16)) - 1).unwrap_or(u16::MAX);
        // The full grid's first entry as its difference from the terrain's, which it mostly is.
        if let (Some(full), Some(terrain)) = (self.game.pm.entries.first_mut(), self.game.tm.entries.first()) {
            let (full_grid, terrain_grid) = (run_decoded(full), run_decoded(terrain));
            *full = run_coded(full[0], full_grid.iter().zip(&terrain_grid).map(|(a, b)| a ^ b));
        }
        self.game
    }

    /// Notes the events of the turn that ended at `frame` on the timeline (all but
    /// [`QUIET_EVENTS`]), each with its player (the command's, the one the event names, or its
    /// unit's owner) and unit.
    fn events(&mut self, frame: u32, events: &[sim::Event], world: &World) {
        for e in events {
            let (kind, player, unit, text) = match e {
                sim::Event::Game { rules, payload } => {
                    let json = self.rules.as_ref().and_then(|r| r.event_json(rules, payload));
                    let (variant, fields) = json.as_ref().map(variant_of).unwrap_or(("event", None));
                    let (player, unit, text) = event_fields(fields);
                    (format!("{rules}.{variant}"), player, unit, text)
                }
                sim::Event::Rejected { command, reason } => {
                    let text = format!("seq {}: {}", command.2, crate::rules::reason_text(reason, self.rules.as_deref()));
                    ("Rejected".to_owned(), Some(command.1.0), None, text)
                }
                other => {
                    let json = serde_json::to_value(other).unwrap_or(serde_json::Value::Null);
                    let (variant, fields) = variant_of(&json);
                    if QUIET_EVENTS.contains(&variant) {
                        continue;
                    }
                    let (player, unit, text) = event_fields(fields);
                    (variant.to_owned(), player, unit, text)
                }
            };
            // A unit's owner: from the world, or (a unit that is gone) its track.
            let owner = |&(index, generation): &(u32, u32)| {
                world
                    .unit(sim::EntityId { index, generation })
                    .map(|u| u.owner.0)
                    .or_else(|| self.live_units.get(&(index, generation)).and_then(|&k| self.game.units.get(k)).map(|t| t.o))
            };
            let player = player.or_else(|| unit.as_ref().and_then(owner)).unwrap_or(0);
            let unit = unit.map(|(index, generation)| format!("{index}v{generation}"));
            self.game.events.push(EventOut { frame, kind, player, unit, text });
        }
    }

    /// Notes each player's numeric game fields where they changed.
    fn player_fields(&mut self, frame: u32, world: &World) {
        let Some(rules) = &self.rules else { return };
        for p in 1..=world.settings().players {
            for (module, value) in rules.player_json(world, sim::PlayerId(p)) {
                let Some(fields) = crate::diff::plain_fields(&value) else { continue };
                for (field, v) in fields {
                    let Some(n) = v.as_i64().or_else(|| v.as_bool().map(i64::from)) else { continue };
                    let list = self.game.series.entry((p, format!("{module}.{field}"))).or_default();
                    if list.len() < 2 || list[list.len() - 1] != n {
                        list.extend([i64::from(frame), n]);
                    }
                }
            }
        }
    }
}

/// An externally tagged serde form's variant name and fields (`{"Killed": {…}}`, or a bare
/// variant name).
fn variant_of(json: &serde_json::Value) -> (&str, Option<&serde_json::Map<String, serde_json::Value>>) {
    match json {
        serde_json::Value::String(s) => (s, None),
        serde_json::Value::Object(m) if m.len() == 1 => {
            let (k, v) = m.iter().next().expect("one entry");
            (k, v.as_object())
        }
        _ => ("event", None),
    }
}

/// An entity id's serde form as `(index, generation)`.
fn entity_of(v: &serde_json::Value) -> Option<(u32, u32)> {
    let m = v.as_object()?;
    if m.len() != 2 {
        return None;
    }
    let part = |k: &str| m.get(k)?.as_u64().and_then(|n| u32::try_from(n).ok());
    Some((part("index")?, part("generation")?))
}

/// An entity id's serde form as the tools print it (`12v0`).
fn entity_text(v: &serde_json::Value) -> Option<String> {
    entity_of(v).map(|(index, generation)| format!("{index}v{generation}"))
}

/// An event's player (its `owner` or `player` field), unit (its `unit` field) and text (its
/// other fields).
fn event_fields(fields: Option<&serde_json::Map<String, serde_json::Value>>) -> (Option<u8>, Option<(u32, u32)>, String) {
    let Some(fields) = fields else { return (None, None, String::new()) };
    let player = ["owner", "player"].iter().find_map(|k| fields.get(*k)?.as_u64()).and_then(|p| u8::try_from(p).ok());
    let unit = fields.get("unit").and_then(entity_of);
    let text: Vec<String> = fields
        .iter()
        .filter(|(k, _)| k.as_str() != "unit")
        .map(|(k, v)| format!("{k} {}", entity_text(v).unwrap_or_else(|| crate::diff::value_text(v))))
        .collect();
    (player, unit, text.join(", "))
}

/// A facing (a unit vector) as whole degrees anticlockwise from east, 0..=359, for drawing only.
fn facing_degrees(facing: pathing::Vec2) -> u32 {
    let degrees = facing.z.to_num::<f64>().atan2(facing.x.to_num::<f64>()).to_degrees().round();
    // `round` of an angle in [-180, 180] is a whole number in that range, so the cast is exact.
    (degrees as i32).rem_euclid(360) as u32
}

/// A unit's state in every module of its game, as one JSON object by module name (`None` when
/// no module has it).
fn unit_modules_json(rules: &dyn crate::rules::Ruleset, world: &World, unit: sim::EntityId) -> Option<serde_json::Value> {
    let modules = rules.unit_json(world, unit);
    if modules.is_empty() {
        return None;
    }
    Some(serde_json::Value::Object(modules.into_iter().map(|(name, v)| (name.to_owned(), v)).collect()))
}

fn record_unit_details(t: &mut Track, u: &sim::Unit, frame: u32, formation: Option<&String>, cell: i128, game: Option<serde_json::Value>) {
    if let Some(game) = game {
        let fields = GameFields::of(&game);
        match &t.last.game {
            Some(last) if *last == fields => {}
            Some(last) if last.layout == fields.layout => {
                let changed = last.texts.iter().zip(&fields.texts).enumerate().filter(|(_, (a, b))| a != b);
                t.game.push((frame, GameChange::Part(changed.map(|(k, (_, b))| (k, b.clone())).collect())));
                t.last.game = Some(fields);
            }
            _ => {
                t.game.push((frame, GameChange::Full(fields.clone())));
                t.last.game = Some(fields);
            }
        }
    }
    let state = match u.state {
        UnitState::Idle => [0, 0],
        UnitState::WaitingForPath => [1, 0],
        UnitState::Moving => [2, 0],
        UnitState::Blocked(n) => [3, u32::from(n)],
    };
    if t.last.state != Some(state) {
        t.st.push([frame, state[0], state[1]]);
        t.last.state = Some(state);
    }
    let order = match (u.orders.first(), formation) {
        (Some(goal), _) => {
            let queued = u.orders.len() - 1;
            let mut text = goal_text(goal);
            if queued > 0 {
                text.push_str(&format!(" (+{queued} queued)"));
            }
            text
        }
        (None, Some(f)) => f.clone(),
        (None, None) => String::new(),
    };
    if t.last.order.as_ref() != Some(&order) {
        t.ord.push((frame, Text::Own(order.clone())));
        t.last.order = Some(order);
    }
    let facing = facing_degrees(u.facing);
    if t.last.facing != Some(facing) {
        t.fa.push([frame, facing]);
        t.last.facing = Some(facing);
    }
    let waypoints = u.waypoints();
    if t.last.waypoints != waypoints {
        let old = &t.last.waypoints;
        let dropped = old.len().checked_sub(waypoints.len()).filter(|&d| d > 0 && old[d..] == *waypoints);
        let entry = match dropped {
            Some(d) => PathOut::Drop(d),
            None => PathOut::Points(points(waypoints, cell)),
        };
        t.p.push((frame, entry));
        t.last.waypoints = waypoints.to_vec();
    }
}

fn layout_code(layout: Layout) -> u8 {
    match layout {
        Layout::Line => 0,
        Layout::Box => 1,
        Layout::Column => 2,
        Layout::Wedge => 3,
        Layout::Loose => 4,
    }
}

fn layout_name(layout: Layout) -> &'static str {
    ["line", "box", "column", "wedge", "loose"][usize::from(layout_code(layout))]
}

fn state_code(state: FormationState) -> u8 {
    match state {
        FormationState::Idle => 0,
        FormationState::WaitingForPath => 1,
        FormationState::Following => 2,
        FormationState::Turning => 3,
        FormationState::Finalising => 4,
        FormationState::Arriving => 5,
    }
}

/// A fixed-point number with at most three decimals (presentation only).
fn short(v: Fixed) -> String {
    let text = format!("{:.3}", v.to_bits() as f64 / 65536.0);
    let text = text.trim_end_matches('0');
    text.strip_suffix('.').unwrap_or(text).to_owned()
}

fn point_text(p: WorldPos) -> String {
    format!("({}, {})", short(p.x), short(p.z))
}

/// An order as text, as `phalanx diff` names it.
fn goal_text(goal: &GoalSpec) -> String {
    match *goal {
        GoalSpec::Point(p) => format!("point {}", point_text(p)),
        GoalSpec::Circle { center, radius } => format!("circle {} radius {}", point_text(center), short(radius)),
        GoalSpec::Square { center, half } => format!("square {} half {}", point_text(center), short(half)),
        GoalSpec::Range { target, min, max, kind } => {
            let target = match target {
                Target::Unit(id) => format!("unit {id}"),
                Target::Obstruction(id) => format!("obstruction {id}"),
            };
            format!("{} range {}..{} of {target}", kind.name(), short(min), short(max))
        }
    }
}

fn png_data_url(png: &[u8]) -> String {
    use base64::Engine as _;
    format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(png))
}

/// The digest root of the `geometry` component (terrain and areas), which changes exactly when
/// the terrain-only grid may.
fn geometry_root(digest: &sim::digest_tree::StateDigest) -> Option<[u8; 32]> {
    component_root(digest, "geometry")
}

/// Re-simulates a replay frame by frame (see the module documentation). With `backgrounds`, the
/// map pictures are collected there.
fn capture_replay(
    name: &str,
    replay: &Replay,
    options: &ViewOptions,
    mut backgrounds: Option<&mut Vec<(u32, String)>>,
    queries: &[QuerySpec],
    notes: &mut Vec<String>,
) -> Result<(Game, Geometry), String> {
    let header = &replay.header;
    let threads = options.threads;
    let mut world = initial_world(header, threads, &options.rulesets).map_err(|e| e.to_string())?;
    let geometry = Geometry::of(&world);
    let rules = header.rules.as_ref().and_then(|(name, version)| options.rulesets.resolve(name, *version).ok());
    let mut capture = Capture::new(name, &header.scenario_name, 0, geometry.cell_bits, rules);
    let keyframes: BTreeMap<u32, &[u8]> = replay.keyframes.iter().map(|(k, s)| (*k, &s[..])).collect();
    let mut off_track = false;
    let mut geometry_at = geometry_root(&world.state_digest());
    let mut dropped_backgrounds = false;
    if let Some(b) = backgrounds.as_deref_mut() {
        b.push((0, png_data_url(&picture::terrain_png(world.nav()))));
    }
    let n = replay.turns.len() as u32;
    for turn in 0..=n {
        if off_track && let Some(snapshot) = keyframes.get(&turn) {
            let mut loaded = world.load_like(snapshot).map_err(|e| format!("keyframe of turn {turn}: {e}"))?;
            // A keyframe is trusted only when its state has the hash recorded for the turn before it.
            let recorded = turn.checked_sub(1).and_then(|t| replay.digest(t)).map(|d| d.hash);
            if recorded != Some(loaded.state_hash()) {
                return Err(format!(
                    "{name}: the keyframe of turn {turn} does not hold the state recorded for turn {}: the keyframe is damaged or forged",
                    turn.wrapping_sub(1)
                ));
            }
            crate::verify::start_threads(&mut loaded, threads).map_err(|e| e.to_string())?;
            world = loaded;
            off_track = false;
            notes.push(format!("{name}: frames from turn {turn} follow the recording again (its keyframe was loaded)"));
            capture.grid_roots(&world.state_digest());
            let root = geometry_root(&world.state_digest());
            if root != geometry_at {
                geometry_at = root;
                push_background(backgrounds.as_deref_mut(), turn, &world, &mut dropped_backgrounds);
            }
        }
        if off_track {
            capture.mark_bad(turn);
        }
        for query in queries.iter().filter(|q| q.turn() == turn) {
            let answer = answer_query(&world, query, capture.cell_bits)?;
            capture.game.qs.push(answer);
        }
        capture.frame(&world);
        let Some(record) = replay.turns.get(turn as usize) else { break };
        let report = world.step(&record.commands);
        capture.events(turn + 1, &report.events, &world);
        capture.grid_roots(&report.digest);
        let expected = record.digest(&header.components);
        if report.hash != expected.hash && !off_track {
            off_track = true;
            notes.push(format!(
                "{name}: turn {turn} re-simulates to {} but the replay recorded {} (diverging: {}); the frames after it are this engine's until the next keyframe",
                &hex(&report.hash)[..16],
                &hex(&expected.hash)[..16],
                expected.differing_components(&report.digest).join(", ")
            ));
        }
        let root = geometry_root(&report.digest);
        if root != geometry_at {
            geometry_at = root;
            push_background(backgrounds.as_deref_mut(), turn + 1, &world, &mut dropped_backgrounds);
        }
    }
    if dropped_backgrounds {
        notes.push(format!("{name}: the terrain changed more than {MAX_BACKGROUNDS} times; later changes are not drawn"));
    }
    if let Some(query) = queries.iter().find(|q| q.turn() > n) {
        return Err(format!("--query {query}: the replay ends at turn {n}"));
    }
    let classes = geometry.classes.len();
    Ok((capture.finish(classes), geometry))
}

/// One answered path query as the page holds it.
#[derive(Serialize)]
struct QueryOut {
    /// The frame it was asked at.
    f: u32,
    /// The query as the command line gives it.
    ask: String,
    /// The unit's id, for a unit's query.
    id: Option<String>,
    /// The class searched.
    c: u8,
    /// How the search ended (`complete`, or why it is partial).
    st: String,
    /// The closed navcells, as `j × width + i`, ascending, each as its difference from the one
    /// before.
    x: Vec<u32>,
    /// The grid path's navcells' centres, `x, z, …` in position units.
    g: Vec<i64>,
    /// The smoothed path from the start, `x, z, …` in position units.
    p: Vec<i64>,
    /// The smoothed path's length. `[Units: metres]`
    len: f64,
}

/// Answers `query` on `world` (the state at the start of its turn).
fn answer_query(world: &World, query: &QuerySpec, cell_bits: i128) -> Result<QueryOut, String> {
    let (answer, id) = match *query {
        QuerySpec::Unit { index, generation, .. } => {
            let unit = world.units().find(|u| u.id.index == index && generation.is_none_or(|g| u.id.generation == g)).ok_or_else(|| {
                let unit = generation.map_or_else(|| index.to_string(), |g| format!("{index}v{g}"));
                format!("--query {query}: no live unit {unit} at turn {}", query.turn())
            })?;
            (world.query_unit_path(unit.id), Some(unit.id.to_string()))
        }
        QuerySpec::Points { class, from, to, .. } => {
            let class = pathing::PassClass::new(class).ok_or_else(|| format!("--query {query}: class {class} is not one of 0 to 15"))?;
            (world.query_path(class, from, to), None)
        }
    };
    let answer = answer.map_err(|e| format!("--query {query} at turn {}: {e}", query.turn()))?;
    let width = world.nav().grid().width();
    let mut closed: Vec<u32> = answer.expanded.iter().map(|c| u32::from(c.j) * width + u32::from(c.i)).collect();
    closed.sort_unstable();
    let mut last = 0;
    let x = closed
        .into_iter()
        .map(|k| {
            let d = k - last;
            last = k;
            d
        })
        .collect();
    let cell_size = world.nav().grid().cell_size();
    let centres: Vec<WorldPos> = answer.cells.iter().map(|&c| sim::off_grid_lines(sim::navcell_centre(c, cell_size), cell_size)).collect();
    let mut walk = vec![answer.from];
    walk.extend(&answer.waypoints);
    let len = walk
        .windows(2)
        .map(|w| {
            let (dx, dz) = ((w[1].x - w[0].x).to_num::<f64>(), (w[1].z - w[0].z).to_num::<f64>());
            (dx * dx + dz * dz).sqrt()
        })
        .sum();
    Ok(QueryOut {
        f: query.turn(),
        ask: query.to_string(),
        id,
        c: answer.class.index(),
        st: status_words(answer.status),
        x,
        g: points(&centres, cell_bits),
        p: points(&walk, cell_bits),
        len,
    })
}

/// A search's status in words: `complete`, or `partial (start impassable)` and the like.
fn status_words(status: pathing::PathStatus) -> String {
    let mut words = String::new();
    for c in format!("{status:?}").chars() {
        match c {
            '(' => words.push_str(" ("),
            c if c.is_ascii_uppercase() => {
                if !words.is_empty() && !words.ends_with('(') {
                    words.push(' ');
                }
                words.push(c.to_ascii_lowercase());
            }
            c => words.push(c),
        }
    }
    words
}

fn push_background(backgrounds: Option<&mut Vec<(u32, String)>>, frame: u32, world: &World, dropped: &mut bool) {
    if let Some(b) = backgrounds {
        if b.len() < MAX_BACKGROUNDS {
            b.push((frame, png_data_url(&picture::terrain_png(world.nav()))));
        } else {
            *dropped = true;
        }
    }
}

fn empty_divergence(summary: String) -> DivergenceOut {
    DivergenceOut {
        turn: None,
        summary,
        same_commands: true,
        commands_a: Vec::new(),
        commands_b: Vec::new(),
        state_after: None,
        components: Vec::new(),
        hash_a: String::new(),
        hash_b: String::new(),
        state_turn: None,
        diffs: Vec::new(),
        total: 0,
        notes: Vec::new(),
    }
}

/// The first divergence of two replays, from their records alone, as `phalanx diff` finds it.
fn replay_divergence(ra: &Replay, rb: &Replay, limit: usize, rulesets: &crate::rules::Rulesets) -> Result<DivergenceOut, String> {
    let mut notes = Vec::new();
    if ra.header.scenario_digest != rb.header.scenario_digest {
        notes.push(format!("different scenarios ({} vs {})", ra.header.scenario_name, rb.header.scenario_name));
    }
    if ra.header.settings != rb.header.settings {
        notes.push("different settings".to_owned());
    }
    let common = ra.turns.len().min(rb.turns.len());
    let t = match replay_split(ra, rb) {
        ReplaySplit::Turn(t) => t,
        ReplaySplit::Keyframe(k, sa, sb) => {
            let diffs = keyframe_diff(k, sa, sb, limit, rulesets).map_err(|e| e.to_string())?;
            let mut d = empty_divergence(format!(
                "every turn hash agrees, but the keyframes of turn {k} differ in {} fields (a state the hash does not cover)",
                diffs.total
            ));
            d.turn = Some(k.saturating_sub(1));
            d.state_after = d.turn;
            d.state_turn = Some(k);
            d.components = diffs.diffs.iter().fold(Vec::new(), |mut v, f| {
                if !v.contains(&f.component) {
                    v.push(f.component.clone());
                }
                v
            });
            d.diffs = diffs.diffs;
            d.total = diffs.total;
            d.notes = notes;
            return Ok(d);
        }
        ReplaySplit::None => {
            let summary = if ra.turns.len() == rb.turns.len() {
                format!("identical: {common} turns")
            } else {
                format!("identical for their {common} common turns; A has {} turns, B has {}", ra.turns.len(), rb.turns.len())
            };
            let mut d = empty_divergence(summary);
            d.notes = notes;
            return Ok(d);
        }
    };
    let (ta, tb) = (&ra.turns[t], &rb.turns[t]);
    let mut d = empty_divergence(format!("first diverging turn: {}", ta.turn));
    d.turn = Some(ta.turn);
    d.same_commands = ta.commands == tb.commands;
    d.commands_a = command_lines(&ta.commands);
    d.commands_b = command_lines(&tb.commands);
    // Where the states part: this turn, or, after a difference of commands alone, a later one
    // (as `phalanx diff` reports it).
    let Some(s) = first_state_split(ra, rb, t) else {
        d.summary = format!("the commands of turn {} differ, but the states are the same for all {common} common turns", ta.turn);
        d.notes = notes;
        return Ok(d);
    };
    let (da, db) = (ra.turns[s].digest(&ra.header.components), rb.turns[s].digest(&rb.header.components));
    d.state_after = Some(ra.turns[s].turn);
    if s != t {
        d.summary =
            format!("first diverging turn: {} (its commands differ); first differing state: after turn {}", ta.turn, ra.turns[s].turn);
    }
    d.components = da.differing_components(&db);
    d.hash_a = hex(&da.hash);
    d.hash_b = hex(&db.hash);
    let keyframe = common_keyframe(ra, rb, ra.turns[s].turn.wrapping_add(1));
    match keyframe {
        Some((k, sa, sb)) => {
            let diffs = keyframe_diff(k, sa, sb, limit, rulesets).map_err(|e| e.to_string())?;
            d.state_turn = Some(k);
            d.diffs = diffs.diffs;
            d.total = diffs.total;
        }
        None => notes.push("no keyframe in both replays after the divergence: no field-level diff".to_owned()),
    }
    d.notes = notes;
    Ok(d)
}

/// The differences of two snapshots.
fn snapshot_divergence(
    a: &sim::snapshot::SnapshotData,
    b: &sim::snapshot::SnapshotData,
    limit: usize,
    rulesets: &crate::rules::Rulesets,
) -> DivergenceOut {
    let diffs = crate::diff::diff_snapshots_with(a, b, limit, rulesets);
    if diffs.total == 0 {
        return empty_divergence(format!("identical snapshots (turn {})", a.turn));
    }
    let mut d = empty_divergence(format!("snapshots differ in {} fields", diffs.total));
    d.turn = Some(a.turn.min(b.turn));
    d.state_turn = Some(a.turn);
    d.components = diffs.diffs.iter().fold(Vec::new(), |mut v, f| {
        if !v.contains(&f.component) {
            v.push(f.component.clone());
        }
        v
    });
    d.diffs = diffs.diffs;
    d.total = diffs.total;
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facing_degrees_count_anticlockwise_from_east() {
        let (one, zero, half) = (Fixed::ONE, Fixed::ZERO, Fixed::ONE / 2);
        let cases =
            [((one, zero), 0), ((zero, one), 90), ((-one, zero), 180), ((zero, -one), 270), ((half, -half), 315), ((-half, -half), 225)];
        for ((x, z), degrees) in cases {
            assert_eq!(facing_degrees(pathing::Vec2::new(x, z)), degrees, "({x}, {z})");
        }
    }

    /// The packed data reads back exactly, and a page whose block is missing, cut, not base64 or
    /// not zlib is an error saying which, never a panic.
    #[test]
    fn page_json_reads_back_what_pack_wrote_and_refuses_damaged_blocks() {
        let json = br#"{"v":2,"games":[],"strs":["a \u003c/script> b"]}"#;
        let page = |inner: &str| PAGE.replacen(DATA_MARKER, inner, 1);
        assert_eq!(page_json(&page(&pack(json))).unwrap().as_bytes(), json);
        let packed = pack(json);
        assert!(page_json("<html></html>").unwrap_err().contains("no packed data"));
        let cut = format!("{DATA_OPEN}{packed}");
        assert!(page_json(&cut).unwrap_err().contains("does not end"));
        assert!(page_json(&page("not base64 at all!")).unwrap_err().contains("is not base64"));
        assert!(page_json(&page(&packed[..packed.len() / 2 / 4 * 4])).unwrap_err().contains("is not a zlib stream"));
        use base64::Engine as _;
        let garbage = base64::engine::general_purpose::STANDARD.encode([7u8; 64]);
        assert!(page_json(&page(&garbage)).unwrap_err().contains("is not a zlib stream"));
    }

    #[test]
    fn png_data_url_is_standard_padded_base64() {
        // RFC 4648's test vectors: the viewer's images must decode in every browser.
        let cases =
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy")];
        for (plain, encoded) in cases {
            assert_eq!(png_data_url(plain.as_bytes()), format!("data:image/png;base64,{encoded}"), "{plain:?}");
        }
    }

    #[test]
    fn quantise_rounds_to_the_nearest_sixteenth_navcell() {
        let one_metre = 1i128 << 16;
        // Navcells of 1 m: 1/32 m rounds up to 1/16 navcell, just below rounds to 0.
        assert_eq!(quantise(one_metre / 32, one_metre), 1);
        assert_eq!(quantise(one_metre / 32 - 1, one_metre), 0);
        assert_eq!(quantise(-one_metre, one_metre), -16);
        // Navcells of 4 m: 1 m is a quarter navcell.
        assert_eq!(quantise(one_metre, 4 * one_metre), 4);
    }
}
