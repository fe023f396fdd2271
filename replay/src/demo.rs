//! The embedded demo: the engine's main job on its reference world, with no files needed.
//!
//! [`run_demo`] parses the embedded scenario ([`DEMO_SCENARIO`], the text of
//! `examples/scenarios/demo.json`), runs it turn by turn while recording its replay to
//! `DIR/demo.replay`, verifies that replay from the file (a second, independent re-simulation
//! compared turn by turn and keyframe by keyframe), and writes a picture of the last turn
//! (`DIR/demo.png`) and the HTML replay viewer (`DIR/demo.html`). `phalanx demo` prints the
//! [`DemoReport`].

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sim::command::Event;
use sim::world::World;

use crate::format::ReplayWriter;
use crate::record::{build_world, header_for};
use crate::scenario::Scenario;
use crate::verify::{Outcome, VerifyOptions, VerifyReport, verify_file};

/// The demo scenario: the reference world with a wall and gate, a waypoint network, 1000 units
/// of three classes, two formations, buildings placed mid-game (see its `description`).
pub const DEMO_SCENARIO: &str = include_str!("../../examples/scenarios/demo.json");

/// Keyframe interval of the demo's replay. `[Units: turns]`
pub const DEMO_KEYFRAME_EVERY: u32 = 50;

/// The demo scenario, parsed.
///
/// # Errors
/// Text saying why it does not parse (only possible if the embedded file was broken).
pub fn scenario() -> Result<Scenario, String> {
    let mut refuse = |path: &str| Err(format!("the demo scenario refers to the file {path:?}; it must be self-contained"));
    Scenario::parse(DEMO_SCENARIO, "<embedded demo scenario>", &mut refuse).map_err(|e| e.to_string())
}

/// How to run the demo.
#[derive(Clone, Debug)]
pub struct DemoOptions {
    /// Where the replay, the picture and the viewer go (created if missing).
    pub dir: PathBuf,
    /// Turns to run; `None` for the scenario's own count.
    pub turns: Option<u32>,
    /// Worker threads for path requests (the results do not depend on it).
    pub threads: usize,
}

/// What the demo did.
#[derive(Clone, Debug)]
pub struct DemoReport {
    /// Turns run.
    pub turns: u32,
    /// Grid width and height. `[Units: navcells]`
    pub grid: (u32, u32),
    /// Units alive at the end.
    pub units: u32,
    /// Per passability class name, units alive at the end.
    pub units_by_class: Vec<(String, u32)>,
    /// Long-range and short-range searches computed, over all turns.
    pub long_paths: u64,
    /// Short-range searches.
    pub short_paths: u64,
    /// Unit arrivals (each order reached).
    pub arrivals: u64,
    /// Formations that arrived.
    pub formation_arrivals: u64,
    /// Units routed over the waypoint network.
    pub waypoint_routes: u64,
    /// Buildings and other obstructions placed during the game.
    pub placed: u64,
    /// Commands refused by the world.
    pub rejected: u64,
    /// The state hash after the last turn.
    pub final_hash: [u8; 32],
    /// Wall-clock time of each turn (presentation only; the simulation reads no clock).
    pub turn_times: Vec<Duration>,
    /// The verification of the recorded replay.
    pub verify: VerifyReport,
    /// How long the verification took.
    pub verify_time: Duration,
    /// The files written: replay, picture, viewer.
    pub replay: PathBuf,
    /// The picture of the last turn.
    pub picture: PathBuf,
    /// The HTML viewer.
    pub viewer: PathBuf,
}

impl DemoReport {
    /// The median turn time.
    pub fn median_turn(&self) -> Duration {
        let mut t = self.turn_times.clone();
        t.sort_unstable();
        t.get(t.len() / 2).copied().unwrap_or_default()
    }

    /// The slowest turn and its time.
    pub fn max_turn(&self) -> (u32, Duration) {
        self.turn_times
            .iter()
            .enumerate()
            .max_by_key(|(k, t)| (**t, std::cmp::Reverse(*k)))
            .map_or((0, Duration::ZERO), |(k, t)| (k as u32, *t))
    }

    /// Whether the replay verified identical.
    pub fn verified(&self) -> bool {
        self.verify.outcome == Outcome::Identical
    }
}

/// Why the demo could not run.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// A file could not be written.
    #[error("{}: {source}", file.display())]
    Io {
        /// Which.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The scenario, the world or the viewer could not be made.
    #[error("{0}")]
    Setup(String),
}

/// Runs the demo (see the module documentation); `progress` is called once per turn run and once
/// per turn verified, with the phase's name.
///
/// # Errors
/// [`DemoError`] when a file cannot be written or the embedded scenario cannot become a world.
pub fn run_demo(options: &DemoOptions, progress: &(dyn Fn(&str) + Sync)) -> Result<DemoReport, DemoError> {
    let scenario = scenario().map_err(DemoError::Setup)?;
    let turns = options.turns.unwrap_or(scenario.turns());
    let io = |file: &Path| {
        let file = file.to_path_buf();
        move |source| DemoError::Io { file: file.clone(), source }
    };
    std::fs::create_dir_all(&options.dir).map_err(io(&options.dir))?;
    let replay = options.dir.join("demo.replay");
    let picture = options.dir.join("demo.png");
    let viewer = options.dir.join("demo.html");

    let mut world = build_world(&scenario, options.threads).map_err(|e| DemoError::Setup(e.to_string()))?;
    let file = std::io::BufWriter::new(std::fs::File::create(&replay).map_err(io(&replay))?);
    let header = header_for(&scenario, &mut world, DEMO_KEYFRAME_EVERY);
    let mut writer = ReplayWriter::new(file, header).map_err(io(&replay))?;
    let mut script = scenario.script();
    let mut counts = Counts::default();
    let mut turn_times = Vec::with_capacity(turns as usize);
    let mut final_hash = world.state_hash();
    for _ in 0..turns {
        if writer.keyframe_due(&world) {
            writer.keyframe(&world).map_err(io(&replay))?;
        }
        let commands = script.turn_commands(&world);
        let started = Instant::now();
        let report = world.step(&commands);
        turn_times.push(started.elapsed());
        script.observe(&report);
        writer.turn(&commands, &report).map_err(io(&replay))?;
        counts.add(&world, &report.events);
        final_hash = report.hash;
        progress("run");
    }
    if writer.keyframe_due(&world) {
        writer.keyframe(&world).map_err(io(&replay))?;
    }
    writer.finish().map_err(io(&replay))?.flush().map_err(io(&replay))?;

    let started = Instant::now();
    let verify = verify_file(&replay, &VerifyOptions { threads: options.threads, ..VerifyOptions::default() }, &|| progress("verify"));
    let verify_time = started.elapsed();

    let png = crate::picture::render_png(&world, &crate::picture::Options { scale: None, layers: crate::picture::Layers::ALL });
    std::fs::write(&picture, png).map_err(io(&picture))?;
    let bytes = std::fs::read(&replay).map_err(|e| DemoError::Setup(format!("{}: cannot read back: {e}", replay.display())))?;
    let html = crate::viewer::build_html(
        &[crate::viewer::Source { name: "demo", bytes: &bytes }],
        &crate::viewer::ViewOptions { threads: options.threads, diff_limit: 100, ..Default::default() },
    )
    .map_err(|e| DemoError::Setup(e.to_string()))?;
    std::fs::write(&viewer, html).map_err(io(&viewer))?;

    let classes = scenario.classes();
    let mut units_by_class: Vec<(String, u32)> = Vec::new();
    for unit in world.units() {
        let name = classes.get(unit.class).map_or_else(|| unit.class.to_string(), |d| d.name.clone());
        match units_by_class.iter_mut().find(|(n, _)| *n == name) {
            Some(entry) => entry.1 += 1,
            None => units_by_class.push((name, 1)),
        }
    }
    Ok(DemoReport {
        turns,
        grid: (world.nav().grid().width(), world.nav().grid().height()),
        units: world.units().count() as u32,
        units_by_class,
        long_paths: counts.long,
        short_paths: counts.short,
        arrivals: counts.arrivals,
        formation_arrivals: counts.formation_arrivals,
        waypoint_routes: counts.waypoint_routes,
        placed: counts.placed,
        rejected: counts.rejected,
        final_hash,
        turn_times,
        verify,
        verify_time,
        replay,
        picture,
        viewer,
    })
}

/// Running totals over the turns.
#[derive(Default)]
struct Counts {
    long: u64,
    short: u64,
    arrivals: u64,
    formation_arrivals: u64,
    waypoint_routes: u64,
    placed: u64,
    rejected: u64,
}

impl Counts {
    fn add(&mut self, world: &World, events: &[Event]) {
        let stats = world.path_stats();
        self.long += u64::from(stats.long);
        self.short += u64::from(stats.short);
        for e in events {
            match e {
                Event::Arrived { .. } => self.arrivals += 1,
                Event::FormationArrived { .. } => self.formation_arrivals += 1,
                Event::WaypointRoute { waypoints, .. } if *waypoints > 0 => self.waypoint_routes += 1,
                Event::ObstructionPlaced { .. } => self.placed += 1,
                Event::Rejected { .. } => self.rejected += 1,
                _ => {}
            }
        }
    }
}
