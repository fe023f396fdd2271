//! Running a scenario and recording its replay.

use std::io::Write;

use sim::{Command, TurnReport, World};

use crate::format::{ENGINE, ReplayHeader, ReplayWriter};
use crate::scenario::Scenario;

/// How to run a scenario.
#[derive(Clone, Copy, Debug)]
pub struct RunOptions {
    /// Turns to step.
    pub turns: u32,
    /// Worker threads for path requests (the results do not depend on it).
    pub threads: usize,
    /// A keyframe every this many turns in the replay; 0 for none.
    pub keyframe_every: u32,
}

/// Why a scenario could not be run or recorded.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The world could not be built.
    #[error("{0}")]
    Setup(String),
    /// Writing the replay failed.
    #[error("writing the replay: {0}")]
    Io(#[source] std::io::Error),
    /// The path worker threads could not be started (a fault of the machine, not of the scenario).
    #[error("{0}")]
    Threads(String),
}

/// The header of a replay of `scenario`, for a world built from it.
pub fn header_for(scenario: &Scenario, world: &mut World, keyframe_every: u32) -> ReplayHeader {
    let settings = *world.settings();
    ReplayHeader {
        engine: ENGINE.to_owned(),
        snapshot_version: sim::snapshot::SNAPSHOT_VERSION,
        state_version: sim::state_hash::FORMAT_VERSION,
        settings,
        seed: settings.seed,
        keyframe_every,
        scenario_name: scenario.name().to_owned(),
        scenario: scenario.canonical_text().to_owned(),
        scenario_digest: scenario.digest(),
        components: world.state_digest().components.into_iter().map(|(name, _)| name).collect(),
        rules: scenario.rules().map(|r| (r.name().to_owned(), r.version())),
    }
}

/// A world built from a scenario, with its thread count set.
///
/// # Errors
/// [`RunError::Setup`] when the world cannot be made, [`RunError::Threads`] when its thread pool
/// cannot.
pub fn build_world(scenario: &Scenario, threads: usize) -> Result<World, RunError> {
    let mut world = scenario.world().map_err(|e| RunError::Setup(e.to_string()))?;
    crate::verify::start_threads(&mut world, threads).map_err(|e| RunError::Threads(e.to_string()))?;
    Ok(world)
}

/// Runs a scenario for `options.turns` turns, recording into `out` when given, and calls
/// `on_turn` with each turn's commands and report. Returns the world after the last turn and the
/// replay's writer.
///
/// # Errors
/// [`RunError`] when the world cannot be built or the replay cannot be written.
pub fn run<W: Write>(
    scenario: &Scenario,
    options: &RunOptions,
    out: Option<W>,
    on_turn: &mut dyn FnMut(&[Command], &TurnReport),
) -> Result<(World, Option<W>), RunError> {
    run_observed(scenario, options, out, on_turn, &mut |_| {})
}

/// [`run`], also calling `on_phase` with `None` just before the world steps each turn and with
/// each phase as the step finishes it (`World::step_observed`), so a caller can time the phases.
///
/// # Errors
/// As [`run`].
pub fn run_observed<W: Write>(
    scenario: &Scenario,
    options: &RunOptions,
    out: Option<W>,
    on_turn: &mut dyn FnMut(&[Command], &TurnReport),
    on_phase: &mut dyn FnMut(Option<sim::Phase>),
) -> Result<(World, Option<W>), RunError> {
    let mut world = build_world(scenario, options.threads)?;
    let mut writer = match out {
        Some(out) => {
            let header = header_for(scenario, &mut world, options.keyframe_every);
            Some(ReplayWriter::new(out, header).map_err(RunError::Io)?)
        }
        None => None,
    };
    let mut script = scenario.script();
    for _ in 0..options.turns {
        if let Some(w) = writer.as_mut()
            && w.keyframe_due(&world)
        {
            w.keyframe(&world).map_err(RunError::Io)?;
        }
        let commands = script.turn_commands(&world);
        on_phase(None);
        let report = world.step_observed(&commands, &mut |phase| on_phase(Some(phase)));
        script.observe(&report);
        if let Some(w) = writer.as_mut() {
            w.turn(&commands, &report).map_err(RunError::Io)?;
        }
        on_turn(&commands, &report);
    }
    let out = match writer {
        Some(mut w) => {
            if w.keyframe_due(&world) {
                w.keyframe(&world).map_err(RunError::Io)?;
            }
            Some(w.finish().map_err(RunError::Io)?)
        }
        None => None,
    };
    Ok((world, out))
}
