//! The `phalanx` command line: argument parsing, file loading and the output formats of the stable
//! command-line contract (the command table of README.md).
//!
//! [`execute`] runs one parsed command over the program's registry of games and returns the exit
//! code. Exit codes: 0 success, 1 a query found no complete path (for `verify` and `diff`: a
//! divergence), 2 unusable input (the message names the file, the line or byte offset and what was
//! expected). The game commands (`run`, `verify`, `diff`, `seek`, `demo`) are in `files/game.rs`,
//! the pictures (`render`, `view`) in `files/picture.rs`.

use std::io::Write;
use std::time::Instant;

mod game;
mod picture;

use clap::{Subcommand, ValueEnum};
use pathing::grid_text::{self, GridText};
use pathing::movingai::{self, MovingAiMap, ScenProblem};
use pathing::{
    Accelerators, ClassNav, Goal, GoalReach, JumpTable, Landmarks, Layers, Navcell, PassClass, PassMap, Path, PathStatus, SearchLimits,
    SearchOutcome, SearchScratch, render_ascii,
};

/// The one-line description `phalanx --help` starts with (the `phalanx` crate's program uses it too).
pub const ABOUT: &str = "Phalanx, a deterministic lockstep RTS core: run and record scenarios, verify and diff replays, host and join networked games, and pathfinding tools over Moving AI and grid text maps";

/// The commands of this crate, for a program that offers them beside its own (the `phalanx`
/// program flattens them into its command list and runs them with [`execute`]).
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Plays the embedded demo (four bots of the skirmish rules on the reference world: 1024 x 1024
    /// navcells, 1020 units to start with) until one player is left or the turn limit, records its
    /// replay, verifies it, and writes a picture of the last turn and the HTML replay viewer.
    Demo {
        /// Where `demo.replay`, `demo.png` and `demo.html` go (created if missing).
        #[arg(long, default_value = "phalanx-demo")]
        out: std::path::PathBuf,
        /// The turn limit (default: the scenario's 500); the game ends earlier when one player is
        /// left.
        #[arg(long)]
        turns: Option<u32>,
        /// Worker threads for path requests (the results do not depend on it).
        #[arg(long, default_value_t = 1, value_parser = workers())]
        threads: usize,
    },
    /// Solves every problem of a Moving AI scenario file and prints a tab-separated table, then a summary.
    Scen {
        /// The map: a Moving AI `.map` file or a grid text file.
        map: std::path::PathBuf,
        /// The `.map.scen` file.
        scen: std::path::PathBuf,
        /// Which search to run (`jps-plus` builds the jump tables first, the `-lm` searches the
        /// landmark tables, untimed).
        #[arg(long, value_enum, default_value_t = Algo::Jps)]
        algo: Algo,
        /// Solve only the first N problems.
        #[arg(long)]
        first: Option<usize>,
    },
    /// Says whether the goal navcell can be reached from the start: `reachable`, or `unreachable
    /// nearest X Y` (the reachable navcell a path would head for instead); for an impassable start,
    /// `start-impassable nearest X Y` (where its escape leads).
    Reach {
        /// The map, as for `path`.
        map: std::path::PathBuf,
        /// Start column.
        sx: u32,
        /// Start row.
        sy: u32,
        /// Goal column.
        gx: u32,
        /// Goal row.
        gy: u32,
    },
    /// Finds one path and prints its turning points as `x y` lines, then `length L`, as the
    /// simulation would: an unreachable goal gives a path to the reachable navcell nearest it
    /// (`status unreachable nearest X Y`), an impassable start a straight escape to the nearest
    /// passable navcell (`status start-impassable escape X Y`).
    Path {
        /// The map: a Moving AI `.map` file (coordinates `x y` with `y = 0` on the top row) or a
        /// grid text file (coordinates `i j`, `j = 0` on the first row).
        map: std::path::PathBuf,
        /// Start column.
        sx: u32,
        /// Start row.
        sy: u32,
        /// Goal column.
        gx: u32,
        /// Goal row.
        gy: u32,
        /// Which search to run.
        #[arg(long, value_enum, default_value_t = Algo::Jps)]
        algo: Algo,
        /// Also draw the map with the path and the expanded nodes (north up).
        #[arg(long)]
        render: bool,
    },
    /// Rasterizes obstruction squares for one clearance (the narrow-obstruction rule applied) and
    /// prints the navcell grid: `#` blocked, `.` passable, the top row is `j = H-1`.
    #[command(allow_negative_numbers = true)]
    Raster {
        /// Grid width and height in navcells.
        #[arg(long, num_args = 2, value_names = ["W", "H"], required = true)]
        size: Vec<u32>,
        /// The class clearance in metres (a decimal such as 1 or 0.5).
        #[arg(long, default_value = "0")]
        clearance: String,
        /// Navcell size in metres.
        #[arg(long, default_value = "1")]
        cell_size: String,
        /// An obstruction square: centre X Z, half-sizes HW HH (metres) and its angle in degrees,
        /// anticlockwise from the x axis. Repeat for more squares.
        #[arg(long, num_args = 5, value_names = ["X", "Z", "HW", "HH", "DEG"], action = clap::ArgAction::Append)]
        square: Vec<String>,
    },
    /// Runs a scenario file (docs/scenario.md) and prints a summary; `--hashes` prints
    /// `turn<TAB>hex` per turn first; `--record` writes the replay (docs/replay-format.md).
    Run {
        /// The scenario file.
        scenario: std::path::PathBuf,
        /// Turns to run (default: the scenario's `turns`).
        #[arg(long)]
        turns: Option<u32>,
        /// Write the replay to this file.
        #[arg(long)]
        record: Option<std::path::PathBuf>,
        /// Worker threads for path requests (the result does not depend on it).
        #[arg(long, default_value_t = 1, value_parser = workers())]
        threads: usize,
        /// Print each turn's state hash.
        #[arg(long)]
        hashes: bool,
        /// A keyframe snapshot in the replay every this many turns (0: none).
        #[arg(long, default_value_t = 50)]
        keyframe_every: u32,
        /// Print the summary as one JSON object (and nothing else).
        #[arg(long)]
        json: bool,
    },
    /// Re-simulates replays and compares every turn's state hash and every keyframe; on a
    /// divergence prints the first diverging turn, components, entities and fields and the turn's
    /// commands. Exit 0 identical, 1 diverged (or, with --strict, cut short), 2 unreadable, damaged
    /// or incompatible.
    Verify {
        /// The replay files.
        #[arg(required = true)]
        files: Vec<std::path::PathBuf>,
        /// Verify this many files at once (reports stay in input order).
        #[arg(long, default_value_t = 1, value_parser = workers())]
        jobs: usize,
        /// Print the reports as JSON.
        #[arg(long)]
        json: bool,
        /// Also snapshot, reload and re-step every turn, failing on any difference.
        #[arg(long)]
        sync_test: bool,
        /// Fail (exit 1) on a replay cut short, which otherwise passes on the turns it holds with
        /// a note: for CI, which must not accept a truncated file.
        #[arg(long)]
        strict: bool,
        /// Worker threads for each world's path requests.
        #[arg(long, default_value_t = 1, value_parser = workers())]
        threads: usize,
        /// Verify only shard I of N (1-based) of the files, sorted by path.
        #[arg(long, value_name = "I/N")]
        shard: Option<String>,
    },
    /// Compares two replays (or two snapshots) of the same game: first diverging turn, components,
    /// entities and fields. Exit 0 identical, 1 different, 2 unreadable.
    Diff {
        /// The first replay or snapshot.
        a: std::path::PathBuf,
        /// The second.
        b: std::path::PathBuf,
    },
    /// Restores a replay at the start of a turn from the nearest keyframe before it and prints a
    /// summary of the state.
    Seek {
        /// The replay.
        file: std::path::PathBuf,
        /// The turn.
        turn: u32,
        /// Worker threads for path requests.
        #[arg(long, default_value_t = 1, value_parser = workers())]
        threads: usize,
    },
    /// Draws the world at the start of a turn as a PNG (restored as `seek` does): terrain and
    /// passability, obstruction squares, units by player, their remaining paths, formation slots.
    #[command(after_help = replay::picture::LEGEND)]
    Render {
        /// The replay (or a snapshot, which holds one turn).
        file: std::path::PathBuf,
        /// The turn whose start state is drawn (default: the state after the last recorded turn;
        /// for a snapshot it must be the snapshot's turn).
        #[arg(long)]
        turn: Option<u32>,
        /// The PNG file to write.
        #[arg(long)]
        out: std::path::PathBuf,
        /// Pixels per navcell (default: enough for at least 512 pixels across).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
        scale: Option<u32>,
        /// Layers to draw: a comma-separated list of terrain, clearance, obstructions, units, paths,
        /// formations, or all.
        #[arg(long, default_value = "all")]
        layers: String,
        /// Worker threads for path requests.
        #[arg(long, default_value_t = 1, value_parser = workers())]
        threads: usize,
    },
    /// Writes a self-contained HTML replay viewer (no network): a turn slider, play and step
    /// buttons, layer toggles, unit details on hover; given two replays of the same game, their
    /// first divergence is marked and both games are drawn (the second in outline).
    View {
        /// One replay or snapshot, or two of the same game.
        #[arg(required = true, num_args = 1..=2)]
        files: Vec<std::path::PathBuf>,
        /// The HTML file to write.
        #[arg(long)]
        out: std::path::PathBuf,
        /// Worker threads for path requests.
        #[arg(long, default_value_t = 1, value_parser = workers())]
        threads: usize,
        /// A path query to show in the page (repeatable, at most 16): `TURN:UNIT` (the long-range
        /// search for a unit's current order, the unit as the page names it, `12v0`) or
        /// `TURN:X,Z:X,Z[:CLASS]` (between two points in metres for a class index, 0 by default);
        /// see docs/viewer.md, "Path queries".
        #[arg(long, value_parser = query_spec)]
        query: Vec<replay::viewer::QuerySpec>,
    },
}

/// The parser of `--query`.
fn query_spec(text: &str) -> Result<replay::viewer::QuerySpec, String> {
    replay::viewer::QuerySpec::parse(text)
}

/// Most worker threads (`--threads`) or parallel files (`--jobs`) a command takes: far more than
/// any machine has cores, and few enough that a typing slip cannot ask for billions of threads.
pub const MAX_WORKERS: usize = 256;

/// The parser of `--threads` and `--jobs`: 1 to [`MAX_WORKERS`], anything else is a usage error.
fn workers() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_WORKERS as u64)
}

/// The long-range search to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Algo {
    /// Jump point search.
    Jps,
    /// Jump point search over precomputed jump tables (JPS+); table build time is not counted.
    JpsPlus,
    /// Jump point search with the landmark heuristic (8 landmarks); table build time is not counted.
    JpsLm,
    /// JPS+ with the landmark heuristic: the fastest; table build times are not counted.
    JpsPlusLm,
    /// Plain A* (the oracle).
    Astar,
}

/// Landmarks per table for `--algo jps-lm` and `jps-plus-lm` (what the benchmark measures).
const LANDMARKS: usize = 8;

/// An input the command cannot use.
#[derive(Debug)]
pub enum CliError {
    /// A file could not be read.
    Io {
        /// The file.
        file: String,
        /// The reason.
        source: std::io::Error,
    },
    /// A file could not be written.
    Write {
        /// The file.
        file: String,
        /// The reason.
        source: std::io::Error,
    },
    /// A file's contents are malformed.
    Malformed {
        /// The file.
        file: String,
        /// 1-based line.
        line: u32,
        /// What was expected and found.
        message: String,
    },
    /// A command-line value is unusable.
    BadArgument {
        /// What is wrong.
        message: String,
    },
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::Io { file, source } => write!(f, "{file}: cannot read: {source}"),
            CliError::Write { file, source } => write!(f, "{file}: cannot write: {source}"),
            CliError::Malformed { file, line, message } => write!(f, "{file}:{line}: {message}"),
            CliError::BadArgument { message } => write!(f, "{message}"),
        }
    }
}

impl std::error::Error for CliError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CliError::Io { source, .. } | CliError::Write { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// What a program prints and returns when clap refused its arguments (`e`), `command` being the
/// whole command line's definition: `--help` and `--version` go to `out` with exit 0, a bare
/// program name lists the commands, and any other usage error is one line on `err` with exit 2.
pub fn parse_failure(e: &clap::Error, command: &clap::Command, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    if !e.use_stderr() {
        // `--help` and `--version`: their text is the output.
        let _ = write!(out, "{}", e.render());
        return 0;
    }
    if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        // A bare `phalanx`: clap would print the whole help on stderr.
        let names: Vec<&str> = command.get_subcommands().map(clap::Command::get_name).filter(|&n| n != "help").collect();
        let _ = writeln!(err, "phalanx: expected a command ({}), found none (see --help)", names.join(", "));
        return 2;
    }
    let _ = writeln!(err, "phalanx: {} (see --help)", usage_error_line(&e.render().to_string()));
    2
}

/// Runs one parsed command of this crate. Returns the process exit code.
pub fn execute(command: Command, rulesets: &replay::rules::Rulesets, demo: bool, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let result = match command {
        Command::Scen { map, scen, algo, first } => cmd_scen(&map, &scen, algo, first, out),
        Command::Path { map, sx, sy, gx, gy, algo, render } => cmd_path(&map, (sx, sy), (gx, gy), algo, render, out),
        Command::Reach { map, sx, sy, gx, gy } => cmd_reach(&map, (sx, sy), (gx, gy), out),
        Command::Raster { size, clearance, cell_size, square } => cmd_raster(&size, &clearance, &cell_size, &square, out),
        Command::Run { scenario, turns, record, threads, hashes, keyframe_every, json } => {
            game::cmd_run(&scenario, turns, record.as_deref(), threads, hashes, keyframe_every, json, rulesets, out)
        }
        Command::Verify { files, jobs, json, sync_test, strict, threads, shard } => {
            let options = replay::verify::VerifyOptions {
                threads,
                sync_test,
                strict,
                rulesets: rulesets.clone(),
                ..replay::verify::VerifyOptions::default()
            };
            game::cmd_verify(&files, jobs, json, &options, shard.as_deref(), out, err)
        }
        Command::Diff { a, b } => game::cmd_diff(&a, &b, rulesets, out),
        Command::Demo { out: dir, turns, threads } if demo => game::cmd_demo(&dir, turns, threads, out),
        Command::Demo { .. } => Err(CliError::BadArgument {
            message: "this program has no demo: it was built without the reference game (phalanx_cli::Program::bare); `phalanx demo` of the stock program plays it".to_owned(),
        }),
        Command::Seek { file, turn, threads } => game::cmd_seek(&file, turn, threads, rulesets, out),
        Command::Render { file, turn, out: png, scale, layers, threads } => {
            picture::cmd_render(&file, turn, &png, scale, &layers, threads, rulesets, out, err)
        }
        Command::View { files, out: html, threads, query } => picture::cmd_view(&files, &html, threads, &query, rulesets, out, err),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(err, "phalanx: {e}");
            2
        }
    }
}

/// A usage error of clap on one line, as every other error is: its first paragraph (the message
/// and any indented list under it) joined with spaces, without the `error: ` prefix; the usage
/// lines and the `--help` hint that follow are dropped.
fn usage_error_line(text: &str) -> String {
    let paragraph: Vec<&str> = text.lines().map(str::trim).take_while(|l| !l.is_empty()).collect();
    let line = paragraph.join(" ");
    line.strip_prefix("error: ").unwrap_or(&line).to_owned()
}

/// A map loaded from either text format, with its coordinate convention.
pub enum LoadedMap {
    /// A Moving AI map: `(x, y)` with `y = 0` on the top row; class by start cell.
    MovingAi(MovingAiMap),
    /// A grid text map: `(i, j)` navcells, one class.
    GridText(GridText),
}

impl LoadedMap {
    /// The navcell at user coordinates, if on the map.
    pub fn to_navcell(&self, x: u32, y: u32) -> Option<Navcell> {
        match self {
            LoadedMap::MovingAi(m) => m.to_navcell(x, y),
            LoadedMap::GridText(g) => (x < g.grid.width() && y < g.grid.height()).then(|| Navcell::new(x as u16, y as u16)),
        }
    }

    /// User coordinates of a navcell.
    pub fn from_navcell(&self, cell: Navcell) -> (u32, u32) {
        match self {
            LoadedMap::MovingAi(m) => m.from_navcell(cell),
            LoadedMap::GridText(_) => (u32::from(cell.i), u32::from(cell.j)),
        }
    }

    /// The class an agent starting at user coordinates uses (Moving AI: land or water by the start
    /// cell, land when the start is blocked; grid text: walkable).
    pub fn class_at(&self, x: u32, y: u32) -> PassClass {
        match self {
            LoadedMap::MovingAi(m) => m.class_at(x, y).unwrap_or(movingai::LAND),
            LoadedMap::GridText(_) => grid_text::WALKABLE,
        }
    }

    /// The navcell grid.
    pub fn grid(&self) -> &pathing::NavGrid {
        match self {
            LoadedMap::MovingAi(m) => &m.grid,
            LoadedMap::GridText(g) => &g.grid,
        }
    }
}

/// Reads a whole file of at most `cap` bytes; reading stops one byte past the cap, so a huge file
/// or an endless one (`/dev/zero`) costs no more memory than the cap.
///
/// # Errors
/// [`CliError::Io`] when it cannot be read, [`CliError::BadArgument`] naming the file and the cap
/// when it is larger.
pub(crate) fn read_capped(path: &std::path::Path, cap: u64) -> Result<Vec<u8>, CliError> {
    use std::io::Read;
    let io = |source| CliError::Io { file: path.display().to_string(), source };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(cap + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > cap {
        return Err(CliError::BadArgument { message: format!("{}: larger than the limit of {cap} bytes", path.display()) });
    }
    Ok(bytes)
}

/// Reads a map or Moving AI scenario file as text, capped as the maps a scenario file references
/// are ([`replay::scenario::MAX_FILE_BYTES`]).
fn read(path: &std::path::Path) -> Result<String, CliError> {
    let bytes = read_capped(path, replay::scenario::MAX_FILE_BYTES as u64)?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        CliError::Malformed {
            file: path.display().to_string(),
            line: u32::try_from(line).unwrap_or(u32::MAX),
            message: format!("expected UTF-8 text, found a byte that is not (offset {at})"),
        }
    })
}

fn malformed(path: &std::path::Path, e: pathing::movingai::ParseError) -> CliError {
    CliError::Malformed { file: path.display().to_string(), line: e.line, message: format!("expected {}, found {}", e.expected, e.found) }
}

/// Loads a Moving AI map (a `.map` file, or any file whose first line is `type ...`) or else a
/// grid text file.
///
/// # Errors
/// [`CliError`] naming the file and line.
pub fn load_map(path: &std::path::Path) -> Result<LoadedMap, CliError> {
    let text = read(path)?;
    if text.starts_with("type ") || path.extension().is_some_and(|e| e.eq_ignore_ascii_case("map")) {
        if text.is_empty() {
            return Err(CliError::Malformed {
                file: path.display().to_string(),
                line: 1,
                message: "expected the Moving AI map header `type octile`, found an empty file".into(),
            });
        }
        movingai::parse_map(&text).map(LoadedMap::MovingAi).map_err(|e| malformed(path, e))
    } else {
        grid_text::parse_grid_text(&text).map(LoadedMap::GridText).map_err(|e| malformed(path, e))
    }
}

impl Algo {
    /// Whether the search reads a jump table.
    fn uses_jump_table(self) -> bool {
        matches!(self, Algo::JpsPlus | Algo::JpsPlusLm)
    }

    /// Whether the search uses the landmark heuristic.
    fn uses_landmarks(self) -> bool {
        matches!(self, Algo::JpsLm | Algo::JpsPlusLm)
    }
}

/// One class's searchable forms for one `--algo`: the bit planes, and exactly the tables that
/// search reads, so that [`search`] runs over all it finds and never falls back to a slower search.
struct ClassMaps {
    algo: Algo,
    pass: PassMap,
    table: Option<JumpTable>,
    landmarks: Option<Landmarks>,
}

impl ClassMaps {
    fn build(grid: &pathing::NavGrid, class: PassClass, algo: Algo) -> Self {
        let pass = PassMap::build(grid, class);
        let table = algo.uses_jump_table().then(|| JumpTable::build(&pass));
        let landmarks = algo.uses_landmarks().then(|| Landmarks::build(&pass, LANDMARKS));
        Self { algo, pass, table, landmarks }
    }
}

fn search(maps: &ClassMaps, start: Navcell, goal: &Goal, scratch: &mut SearchScratch, path: &mut Path) -> SearchOutcome {
    let (map, limits) = (&maps.pass, &SearchLimits::UNLIMITED);
    let accelerators = Accelerators { jump_table: maps.table.as_ref(), landmarks: maps.landmarks.as_ref() };
    match maps.algo {
        Algo::Astar => pathing::find_path_astar(map, accelerators.landmarks, start, goal, limits, scratch, path),
        Algo::Jps | Algo::JpsPlus | Algo::JpsLm | Algo::JpsPlusLm => {
            pathing::find_path_jps(map, &accelerators, start, goal, limits, scratch, path)
        }
    }
}

/// Length of a path in navcells, for printing.
pub fn path_length(path: &Path) -> f64 {
    let steps = path.steps();
    steps.straight as f64 + steps.diagonal as f64 * std::f64::consts::SQRT_2
}

fn status_text(status: PathStatus) -> &'static str {
    match status {
        PathStatus::Complete => "complete",
        PathStatus::Partial(pathing::PartialReason::NodeBudget) => "partial-budget",
        PathStatus::Partial(pathing::PartialReason::Unreachable) => "unreachable",
        PathStatus::Partial(pathing::PartialReason::StartImpassable) => "start-impassable",
    }
}

/// The start and goal navcells of user coordinates on a map, or an error naming the map.
fn endpoints(map: &LoadedMap, map_path: &std::path::Path, start: (u32, u32), goal: (u32, u32)) -> Result<(Navcell, Navcell), CliError> {
    let grid = map.grid();
    let off = |what: &str, (x, y): (u32, u32)| CliError::BadArgument {
        message: format!("{what} ({x}, {y}) is off the {}x{} map {}", grid.width(), grid.height(), map_path.display()),
    };
    let start_cell = map.to_navcell(start.0, start.1).ok_or_else(|| off("start", start))?;
    let goal_cell = map.to_navcell(goal.0, goal.1).ok_or_else(|| off("goal", goal))?;
    Ok((start_cell, goal_cell))
}

fn cmd_path(
    map_path: &std::path::Path,
    start: (u32, u32),
    goal: (u32, u32),
    algo: Algo,
    render: bool,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    let map = load_map(map_path)?;
    let (start_cell, goal_cell) = endpoints(&map, map_path, start, goal)?;
    let grid = map.grid();
    let maps = ClassMaps::build(grid, map.class_at(start.0, start.1), algo);
    let hierarchy = pathing::Hierarchy::build(&maps.pass);
    let goal_shape = Goal::navcell_center(goal_cell.i, goal_cell.j, grid.cell_size());
    let mut scratch = SearchScratch::new();
    let mut path = Path::new();
    // The simulation's rules (an impassable start escapes, an unreachable goal gives way to the
    // nearest reachable navcell), shared with `pathing::find_path`; only the search is `--algo`'s.
    let (outcome, plan) = pathing::find_path_with(&maps.pass, &hierarchy, start_cell, &goal_shape, &mut scratch, &mut path, |g, s, p| {
        search(&maps, start_cell, g, s, p)
    });
    let io = |e: std::io::Error| CliError::BadArgument { message: format!("cannot write output: {e}") };
    for &cell in path.waypoints() {
        let (x, y) = map.from_navcell(cell);
        writeln!(out, "{x} {y}").map_err(io)?;
    }
    writeln!(out, "length {:.8}", path_length(&path)).map_err(io)?;
    if outcome.status != PathStatus::Complete {
        let towards = match plan {
            pathing::QueryPlan::Goal => String::new(),
            pathing::QueryPlan::Nearest(cell) => {
                let (x, y) = map.from_navcell(cell);
                format!(" nearest {x} {y}")
            }
            pathing::QueryPlan::Escape(cell) => {
                let (x, y) = map.from_navcell(cell);
                format!(" escape {x} {y}")
            }
        };
        writeln!(out, "status {}{towards}", status_text(outcome.status)).map_err(io)?;
    }
    if render {
        let expanded = scratch.closed_cells();
        let layers = Layers { path: Some(&path), expanded: &expanded, goal: None };
        write!(out, "{}", render_ascii(&maps.pass, &layers)).map_err(io)?;
    }
    Ok(if outcome.status == PathStatus::Complete { 0 } else { 1 })
}

fn cmd_reach(map_path: &std::path::Path, start: (u32, u32), goal: (u32, u32), out: &mut dyn Write) -> Result<i32, CliError> {
    let map = load_map(map_path)?;
    let (start_cell, goal_cell) = endpoints(&map, map_path, start, goal)?;
    let grid = map.grid();
    let nav = ClassNav::build(grid, map.class_at(start.0, start.1));
    let goal_shape = Goal::navcell_center(goal_cell.i, goal_cell.j, grid.cell_size());
    let mut scratch = SearchScratch::new();
    let io = |e: std::io::Error| CliError::BadArgument { message: format!("cannot write output: {e}") };
    match nav.goal_reach(start_cell, &goal_shape, &mut scratch) {
        Some(GoalReach::Reachable) => writeln!(out, "reachable").map_err(io)?,
        Some(GoalReach::Unreachable { nearest }) => {
            let (x, y) = map.from_navcell(nearest);
            writeln!(out, "unreachable nearest {x} {y}").map_err(io)?;
        }
        None => match nav.snap(start_cell, u32::MAX) {
            Some(escape) => {
                let (x, y) = map.from_navcell(escape);
                writeln!(out, "start-impassable nearest {x} {y}").map_err(io)?;
            }
            None => writeln!(out, "start-impassable").map_err(io)?,
        },
    }
    Ok(0)
}

/// One solved scenario problem.
#[derive(Clone, Debug)]
pub struct ScenRow {
    /// The problem.
    pub problem: ScenProblem,
    /// The search outcome.
    pub outcome: SearchOutcome,
    /// The path length, `None` when no complete path was found.
    pub length: Option<f64>,
    /// Time of the search alone. `[Units: microseconds]`
    pub micros: f64,
}

/// Solves scenario problems in file order.
///
/// # Errors
/// [`CliError`] when a problem does not fit the map.
pub fn solve_scen(map: &LoadedMap, problems: &[ScenProblem], algo: Algo, scen_file: &str) -> Result<Vec<ScenRow>, CliError> {
    let grid = map.grid();
    let classes: Vec<ClassMaps> = (0..grid.n_classes()).filter_map(PassClass::new).map(|c| ClassMaps::build(grid, c, algo)).collect();
    let mut scratch = SearchScratch::new();
    // Grow the scratch before timing, so the first row times the search alone.
    for maps in &classes {
        scratch.reserve(&maps.pass);
    }
    let mut path = Path::new();
    let mut rows = Vec::with_capacity(problems.len());
    for problem in problems {
        let off = || CliError::Malformed {
            file: scen_file.to_string(),
            line: problem.line,
            message: format!("expected start and goal on the {}x{} map", grid.width(), grid.height()),
        };
        let start = map.to_navcell(problem.start.0, problem.start.1).ok_or_else(off)?;
        let goal_cell = map.to_navcell(problem.goal.0, problem.goal.1).ok_or_else(off)?;
        let class = map.class_at(problem.start.0, problem.start.1);
        let maps = &classes[usize::from(class.index())];
        let goal = Goal::navcell_center(goal_cell.i, goal_cell.j, grid.cell_size());
        let started = Instant::now();
        let outcome = search(maps, start, &goal, &mut scratch, &mut path);
        let micros = started.elapsed().as_secs_f64() * 1e6;
        let length = (outcome.status == PathStatus::Complete).then(|| path_length(&path));
        rows.push(ScenRow { problem: problem.clone(), outcome, length, micros });
    }
    Ok(rows)
}

fn cmd_scen(
    map_path: &std::path::Path,
    scen_path: &std::path::Path,
    algo: Algo,
    first: Option<usize>,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    let map = load_map(map_path)?;
    let text = read(scen_path)?;
    let problems = movingai::parse_scen(&text).map_err(|e| malformed(scen_path, e))?;
    let grid = map.grid();
    if let Some(bad) = problems.iter().find(|p| p.width != grid.width() || p.height != grid.height()) {
        return Err(CliError::Malformed {
            file: scen_path.display().to_string(),
            line: bad.line,
            message: format!("expected map size {}x{}, found {}x{}", grid.width(), grid.height(), bad.width, bad.height),
        });
    }
    let problems = &problems[..first.unwrap_or(usize::MAX).min(problems.len())];
    let rows = solve_scen(&map, problems, algo, &scen_path.display().to_string())?;
    let io = |e: std::io::Error| CliError::BadArgument { message: format!("cannot write output: {e}") };
    writeln!(out, "line\tbucket\tstart_x\tstart_y\tgoal_x\tgoal_y\toptimal\tlength\tmatches\texpanded\tmicros").map_err(io)?;
    let mut matched = 0usize;
    let mut solved = 0usize;
    let mut times: Vec<f64> = Vec::with_capacity(rows.len());
    let mut expanded_total = 0u64;
    for row in &rows {
        let p = &row.problem;
        let length = row.length.map_or_else(|| "none".to_string(), |l| format!("{l:.8}"));
        let ok = row.length.is_some_and(|l| length_matches(&p.optimal_length, l));
        solved += usize::from(row.length.is_some());
        matched += usize::from(ok);
        times.push(row.micros);
        expanded_total += u64::from(row.outcome.expanded);
        writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.1}",
            p.line,
            p.bucket,
            p.start.0,
            p.start.1,
            p.goal.0,
            p.goal.1,
            p.optimal_length,
            length,
            if ok { "yes" } else { "no" },
            row.outcome.expanded,
            row.micros
        )
        .map_err(io)?;
    }
    times.sort_by(f64::total_cmp);
    let n = rows.len().max(1);
    let pct = |q: f64| times.get(((times.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or(0.0);
    let mean = times.iter().sum::<f64>() / n as f64;
    writeln!(
        out,
        "# summary: {} problems, {} solved, {} optimal, algo {:?}, mean {:.1} us, median {:.1} us, p99 {:.1} us, max {:.1} us, mean expanded {:.1}",
        rows.len(), solved, matched, algo, mean, pct(0.5), pct(0.99), pct(1.0), expanded_total as f64 / n as f64
    )
    .map_err(io)?;
    Ok(if matched == rows.len() { 0 } else { 1 })
}

/// Whether a length matches a scenario's printed optimum: relative 1e-5, or half a unit of the last
/// printed decimal for files that print fewer decimals (the two-decimal Baldur's Gate files).
pub fn length_matches(expected_text: &str, got: f64) -> bool {
    let Ok(expected) = expected_text.parse::<f64>() else { return false };
    let decimals = expected_text.split_once('.').map_or(0, |(_, frac)| frac.len());
    let print_tolerance = if decimals == 2 { 0.5 * 10f64.powi(-(decimals as i32)) + 1e-9 } else { 0.0 };
    (got - expected).abs() <= (1e-5 * expected.abs()).max(print_tolerance)
}

/// A decimal command-line value.
fn decimal_arg(what: &str, text: &str) -> Result<pathing::Fixed, CliError> {
    pathing::decimal::parse_fixed(text).map_err(|e| CliError::BadArgument { message: format!("{what}: {e}") })
}

fn cmd_raster(size: &[u32], clearance: &str, cell_size: &str, squares: &[String], out: &mut dyn Write) -> Result<i32, CliError> {
    let bad = |message: String| CliError::BadArgument { message };
    let (w, h) = (size[0], size[1]);
    if w == 0 || h == 0 || u64::from(w) * u64::from(h) > 1 << 24 {
        return Err(bad(format!("--size: expected W and H of at least 1 with W×H at most 16777216, found {w} {h}")));
    }
    let clearance = decimal_arg("--clearance", clearance)?;
    if clearance < pathing::Fixed::ZERO {
        return Err(bad(format!("--clearance: expected a clearance of at least 0, found {clearance}")));
    }
    let cell_size = decimal_arg("--cell-size", cell_size)?;
    if cell_size <= pathing::Fixed::ZERO || cell_size > pathing::MAX_CELL_SIZE {
        return Err(bad(format!("--cell-size: expected a size in (0, {}], found {cell_size}", pathing::MAX_CELL_SIZE)));
    }
    let mut grid = pathing::NavGrid::new(w, h, 1, cell_size).map_err(|e| bad(format!("--size: {e}")))?;
    for (n, sq) in squares.chunks(5).enumerate() {
        let what = |field: &str| format!("--square #{} {field}", n + 1);
        let x = decimal_arg(&what("X"), &sq[0])?;
        let z = decimal_arg(&what("Z"), &sq[1])?;
        let hw = decimal_arg(&what("HW"), &sq[2])?;
        let hh = decimal_arg(&what("HH"), &sq[3])?;
        let deg = decimal_arg(&what("DEG"), &sq[4])?;
        let square = pathing::raster::oriented_square(pathing::WorldPos::new(x, z), hw, hh, deg)
            .map_err(|e| bad(format!("--square #{}: {e}", n + 1)))?;
        pathing::raster::rasterize_square(&square, clearance, cell_size, pathing::CellRect::full(w, h), |j, i0, i1| {
            grid.block_span(j, i0, i1, 1)
        });
    }
    let mut text = String::with_capacity((w as usize + 1) * h as usize);
    for j in (0..h).rev() {
        for i in 0..w {
            text.push(if grid.blocked_mask(Navcell::new(i as u16, j as u16)) != 0 { '#' } else { '.' });
        }
        text.push('\n');
    }
    out.write_all(text.as_bytes()).map_err(|source| CliError::Io { file: "<stdout>".into(), source })?;
    Ok(0)
}
