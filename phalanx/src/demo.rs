//! The embedded demo: a whole game of the reference rules between four bots on the reference
//! world, with no files needed.
//!
//! [`run_demo`] parses the embedded scenario ([`DEMO_SCENARIO`], the text of
//! `phalanx/demo.json`: the `skirmish` rules, four bots, 1020 units at the start),
//! plays it turn by turn until one player is left or the turn limit while recording its replay to
//! `DIR/demo.replay`, verifies that replay from the file (a second, independent re-simulation
//! compared turn by turn and keyframe by keyframe), and writes a picture of the last turn
//! (`DIR/demo.png`) and the HTML replay viewer (`DIR/demo.html`). `phalanx demo` prints the
//! [`DemoReport`]. [`scenario`] and [`decided`] are the whole game, so a benchmark plays exactly
//! the demo's.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sim::{Event, PlayerId, World};
use skirmish::{SkirmishEvent, UnitKind};

use replay::format::ReplayWriter;
use replay::record::{build_world, header_for};
use replay::scenario::Scenario;
use replay::verify::{Outcome, VerifyOptions, VerifyReport, verify_file};

/// The demo scenario: four bots of the reference rules from a town centre and an army each on
/// the reference world (see its `description`).
pub const DEMO_SCENARIO: &str = include_str!("../demo.json");

/// Keyframe interval of the demo's replay. `[Units: turns]`
pub const DEMO_KEYFRAME_EVERY: u32 = 50;

/// The demo scenario, parsed with the reference game's ruleset ([`crate::stock_rulesets`]), whose
/// `skirmish` it names.
///
/// # Errors
/// Text saying why it does not parse (only possible if the embedded file was broken).
pub fn scenario() -> Result<Scenario, String> {
    let mut refuse = |path: &str| Err(format!("the demo scenario refers to the file {path:?}; it must be self-contained"));
    Scenario::parse_with(DEMO_SCENARIO, "<embedded demo scenario>", &mut refuse, &crate::stock_rulesets()).map_err(|e| e.to_string())
}

/// The player left standing once every other started player has lost its town centre and its
/// units: the demo's game ends there (or at its turn limit).
pub fn decided(world: &World) -> Option<PlayerId> {
    skirmish::play::last_standing(&skirmish::summary(world))
}

/// How to run the demo.
#[derive(Clone, Debug)]
pub struct DemoOptions {
    /// Where the replay, the picture and the viewer go (created if missing).
    pub dir: PathBuf,
    /// The turn limit; `None` for the scenario's own. The game ends earlier when one player is
    /// left.
    pub turns: Option<u32>,
    /// Worker threads for path requests (the results do not depend on it).
    pub threads: usize,
}

/// What the demo did.
#[derive(Clone, Debug)]
pub struct DemoReport {
    /// Turns played.
    pub turns: u32,
    /// The turn limit.
    pub limit: u32,
    /// Bots playing.
    pub bots: usize,
    /// Grid width and height. `[Units: navcells]`
    pub grid: (u32, u32),
    /// Units alive at the start of the game (after its first turn).
    pub first_units: u32,
    /// Most units alive after any turn, and the first turn with that many.
    pub peak_units: (u32, u32),
    /// Units alive at the end.
    pub units: u32,
    /// Per unit kind, units alive at the end.
    pub units_by_kind: Vec<(UnitKind, u32)>,
    /// Long-range searches computed, over all turns.
    pub long_paths: u64,
    /// Short-range searches.
    pub short_paths: u64,
    /// Unit arrivals (each order reached).
    pub arrivals: u64,
    /// Obstructions placed during the game (foundations, town centres).
    pub placed: u64,
    /// Buildings destroyed.
    pub razed: u64,
    /// Trees felled (their obstructions removed).
    pub felled: u64,
    /// Commands refused by the world or the rules.
    pub rejected: u64,
    /// The outcome: winner, whether decisive, every player's record.
    pub outcome: skirmish::Outcome,
    /// The state hash after the last turn.
    pub final_hash: [u8; 32],
    /// Wall-clock time of each turn (presentation only; the simulation reads no clock).
    pub turn_times: Vec<Duration>,
    /// The verification of the recorded replay.
    pub verify: VerifyReport,
    /// How long the verification took.
    pub verify_time: Duration,
    /// The whole run, from parsing the scenario to the last file written.
    pub total_time: Duration,
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

/// Runs the demo (see the module documentation); `progress` is called once per turn played and
/// once per turn verified, with the phase's name.
///
/// # Errors
/// [`DemoError`] when a file cannot be written or the embedded scenario cannot become a world.
pub fn run_demo(options: &DemoOptions, progress: &(dyn Fn(&str) + Sync)) -> Result<DemoReport, DemoError> {
    let started = Instant::now();
    let scenario = scenario().map_err(DemoError::Setup)?;
    let limit = options.turns.unwrap_or(scenario.turns());
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
    let mut turn_times = Vec::with_capacity(limit as usize);
    let mut final_hash = world.state_hash();
    let mut turns = 0;
    while turns < limit {
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
        turns += 1;
        progress("run");
        if decided(&world).is_some() {
            break;
        }
    }
    if writer.keyframe_due(&world) {
        writer.keyframe(&world).map_err(io(&replay))?;
    }
    writer.finish().map_err(io(&replay))?.flush().map_err(io(&replay))?;

    // The verification and the viewer each simulate the game again from the file, apart: on two
    // threads, so the demo takes the time of the longer, not of both. Where no thread can be
    // started (wasm32-wasip1 has none), the verification runs after the viewer, on this thread.
    let rulesets = crate::stock_rulesets();
    let verify_options = VerifyOptions { threads: options.threads, rulesets: rulesets.clone(), ..VerifyOptions::default() };
    let view_options = replay::viewer::ViewOptions { threads: options.threads, diff_limit: 100, rulesets, queries: Vec::new() };
    let verifying = || {
        let started = Instant::now();
        let report = verify_file(&replay, &verify_options, &|| progress("verify"));
        (report, started.elapsed())
    };
    let (verified, html) = std::thread::scope(|scope| {
        let on_a_thread = std::thread::Builder::new().spawn_scoped(scope, verifying).ok();
        let html = std::fs::read(&replay).map_err(|e| DemoError::Setup(format!("{}: cannot read back: {e}", replay.display()))).and_then(
            |bytes| {
                replay::viewer::build_html(&[replay::viewer::Source { name: "demo", bytes: &bytes }], &view_options)
                    .map_err(|e| DemoError::Setup(e.to_string()))
            },
        );
        (on_a_thread.map_or_else(|| Ok(verifying()), |thread| thread.join()), html)
    });
    let (verify, verify_time) = verified.map_err(|_| DemoError::Setup("the verification stopped with a panic".to_owned()))?;
    std::fs::write(&viewer, html?).map_err(io(&viewer))?;
    let png = replay::picture::render_png(&world, &replay::picture::Options { scale: None, layers: replay::picture::Layers::ALL });
    std::fs::write(&picture, png).map_err(io(&picture))?;

    let game = world.game::<skirmish::Combat>();
    let units_by_kind = UnitKind::ALL
        .iter()
        .map(|&kind| (kind, game.as_ref().map_or(0, |g| g.units().filter(|(_, s)| s.kind == kind).count() as u32)))
        .collect();
    Ok(DemoReport {
        turns,
        limit,
        bots: scenario.bots().len(),
        grid: (world.nav().grid().width(), world.nav().grid().height()),
        first_units: counts.first_units,
        peak_units: counts.peak,
        units: world.units().count() as u32,
        units_by_kind,
        long_paths: counts.long,
        short_paths: counts.short,
        arrivals: counts.arrivals,
        placed: counts.placed,
        razed: counts.razed,
        felled: counts.felled,
        rejected: counts.rejected,
        outcome: skirmish::play::outcome(&world, turns),
        final_hash,
        turn_times,
        verify,
        verify_time,
        total_time: started.elapsed(),
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
    placed: u64,
    razed: u64,
    felled: u64,
    rejected: u64,
    /// Units after the first turn.
    first_units: u32,
    /// (units, turn) of the first turn with the most units.
    peak: (u32, u32),
}

impl Counts {
    fn add(&mut self, world: &World, events: &[Event]) {
        let stats = world.path_stats();
        self.long += u64::from(stats.long);
        self.short += u64::from(stats.short);
        let units = world.units().count() as u32;
        if world.turn() == 1 {
            self.first_units = units;
        }
        if units > self.peak.0 {
            self.peak = (units, world.turn().saturating_sub(1));
        }
        for e in events {
            match e {
                Event::Arrived { .. } => self.arrivals += 1,
                Event::ObstructionPlaced { .. } => self.placed += 1,
                Event::Rejected { .. } => self.rejected += 1,
                _ => {}
            }
        }
        for e in skirmish::events(events) {
            match e {
                SkirmishEvent::Razed { .. } => self.razed += 1,
                SkirmishEvent::Felled { .. } => self.felled += 1,
                _ => {}
            }
        }
    }
}
