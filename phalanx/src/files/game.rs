//! The game commands of the command line: `run`, `verify`, `diff` and `seek`.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sim::state_hash::hex;

use replay::rules::{Rulesets, command_text, reason_text};

use super::CliError;
use replay::format::{Replay, is_replay};
use replay::record::{RunOptions, run_observed};
use replay::scenario::Scenario;
use replay::verify::{Outcome, VerifyOptions, shard, verify_files};

/// Largest replay or snapshot `phalanx diff` reads into memory. `[Units: bytes]`
const MAX_DIFF_FILE: u64 = 1 << 30;

fn io_error(file: &Path, source: std::io::Error) -> CliError {
    CliError::Io { file: file.display().to_string(), source }
}

fn write_error(file: &Path, source: std::io::Error) -> CliError {
    CliError::Write { file: file.display().to_string(), source }
}

fn bad(message: String) -> CliError {
    CliError::BadArgument { message }
}

/// A progress bar on stderr when it is a terminal, hidden otherwise.
fn progress_bar(len: u64, what: &str) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    let style = indicatif::ProgressStyle::with_template(&format!("{{elapsed_precise}} [{{bar:40}}] {{pos}}/{{len}} {what} {{msg}}"))
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}

/// `phalanx demo`.
pub(super) fn cmd_demo(dir: &Path, turns: Option<u32>, threads: usize, out: &mut dyn Write) -> Result<i32, CliError> {
    use crate::demo::{DemoError, DemoOptions, run_demo};
    let scenario = crate::demo::scenario().map_err(bad)?;
    let turns = turns.unwrap_or(scenario.turns());
    let options = DemoOptions { dir: dir.to_path_buf(), turns: Some(turns), threads };
    let bar = progress_bar(u64::from(turns) * 2, "turns");
    let phase = std::sync::Mutex::new(String::new());
    let progress = |name: &str| {
        if let Ok(mut p) = phase.lock()
            && *p != name
        {
            *p = name.to_owned();
            bar.set_message(if name == "run" { "simulated and recorded" } else { "verified" });
        }
        bar.inc(1);
    };
    let report = run_demo(&options, &progress).map_err(|e| match e {
        DemoError::Io { file, source } => write_error(&file, source),
        DemoError::Setup(message) => bad(message),
    })?;
    bar.finish_and_clear();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    let grid = report.grid;
    let turn_ms = scenario.settings().turn_ms;
    let _ = writeln!(
        out,
        "phalanx demo: {} ({}x{} navcells), {} turns of {turn_ms} ms, {} bots of the skirmish rules",
        scenario.name(),
        grid.0,
        grid.1,
        report.turns,
        report.bots
    );
    let kinds: Vec<String> = report.units_by_kind.iter().map(|(kind, n)| format!("{n} {}", kind_name(*kind))).collect();
    let _ = writeln!(
        out,
        "units: {} at the start, {} at the peak (turn {}), {} at the end ({})",
        report.first_units,
        report.peak_units.0,
        report.peak_units.1,
        report.units,
        kinds.join(", ")
    );
    let _ = writeln!(out, "paths computed: {} long-range, {} short-range", report.long_paths, report.short_paths);
    let _ = writeln!(
        out,
        "events: {} arrivals, {} obstructions placed, {} buildings razed, {} trees felled, {} commands rejected",
        report.arrivals, report.placed, report.razed, report.felled, report.rejected
    );
    for p in &report.outcome.players {
        let _ = writeln!(out, "{}", skirmish::tools::player_line(p));
    }
    let outcome = &report.outcome;
    let result = match outcome.winner {
        Some(winner) if outcome.decisive => format!("result: player {winner} wins, every other player destroyed by turn {}", outcome.turns),
        winner => {
            let mut players: Vec<&skirmish::PlayerSummary> = outcome.players.iter().collect();
            players.sort_by_key(|p| (std::cmp::Reverse(p.score), p.player));
            let best = players.first().map_or(0, |p| p.score);
            let scores: Vec<String> = players
                .iter()
                .map(|p| match (p.score == best, winner) {
                    (true, Some(_)) => format!("player {} {} (ahead)", p.player, p.score),
                    (true, None) => format!("player {} {} (tied)", p.player, p.score),
                    (false, _) => format!("player {} {}", p.player, p.score),
                })
                .collect();
            format!("result: no winner by turn {} (the turn limit); score: {}", outcome.turns, scores.join(", "))
        }
    };
    let _ = writeln!(out, "{result}");
    let _ = writeln!(out, "final hash: {}", hex(&report.final_hash));
    let median = ms(report.median_turn());
    let speed = if median > 0.0 { f64::from(turn_ms) / median } else { 0.0 };
    let (slowest_turn, slowest) = report.max_turn();
    let _ = writeln!(
        out,
        "time per turn: median {median:.2} ms, slowest {:.2} ms (turn {slowest_turn}); {speed:.0}x faster than real time",
        ms(slowest)
    );
    let size = std::fs::metadata(&report.replay).map(|m| m.len()).unwrap_or(0);
    let verdict = match &report.verify.divergence {
        None if report.verified() => format!(
            "verified identical: {} turns re-simulated in {:.2} s, {} keyframes compared",
            report.verify.turns_verified,
            report.verify_time.as_secs_f64(),
            report.verify.keyframes_checked
        ),
        _ => format!("VERIFICATION FAILED:\n{}", report.verify.to_text()),
    };
    let _ = writeln!(out, "replay: {} ({size} bytes), {verdict}", report.replay.display());
    let _ = writeln!(out, "picture: {}", report.picture.display());
    let _ = writeln!(out, "viewer: {}", report.viewer.display());
    let _ = writeln!(out, "all in {:.2} s", report.total_time.as_secs_f64());
    Ok(if report.verified() { 0 } else { 1 })
}

/// A unit kind's name in the demo's summary, plural.
fn kind_name(kind: skirmish::UnitKind) -> &'static str {
    match kind {
        skirmish::UnitKind::Worker => "workers",
        skirmish::UnitKind::Spearman => "spearmen",
        skirmish::UnitKind::Archer => "archers",
    }
}

/// `phalanx run SCENARIO`.
// One parameter per flag of `phalanx run`, as its command-line definition lists them.
#[allow(clippy::too_many_arguments)]
pub(super) fn cmd_run(
    scenario_path: &Path,
    turns: Option<u32>,
    record: Option<&Path>,
    threads: usize,
    hashes: bool,
    keyframe_every: u32,
    json: bool,
    rulesets: &Rulesets,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    // A file that cannot be opened is named once, as every unreadable input is (the scenario's
    // own error would name it as the text and again as the file).
    std::fs::File::open(scenario_path).map_err(|e| io_error(scenario_path, e))?;
    let scenario = Scenario::load_with(scenario_path, rulesets).map_err(|e| bad(e.to_string()))?;
    let rules = scenario.rules().map(|r| &**r);
    let turns = turns.unwrap_or(scenario.turns());
    let options = RunOptions { turns, threads, keyframe_every };
    let file = match record {
        Some(path) => Some(std::io::BufWriter::new(std::fs::File::create(path).map_err(|e| write_error(path, e))?)),
        None => None,
    };
    let bar = progress_bar(u64::from(turns), "turns");
    let mut lines = Vec::new();
    let mut events = [0u64; 5];
    let mut last_hash = [0u8; 32];
    let mut rejected: Vec<String> = Vec::new();
    let started = std::time::Instant::now();
    // Each turn's wall time, from the end of the turn before (the first from the start, which
    // includes building the world).
    let mut turn_times: Vec<std::time::Duration> = Vec::with_capacity(turns as usize);
    let mut last_end = std::time::Instant::now();
    // Each turn's time in each phase of the step ([`PHASES`]), from `World::step_observed`.
    let phases = std::cell::RefCell::new(PhaseTimes::default());
    let mut on_phase = |phase: Option<sim::Phase>| phases.borrow_mut().mark(phase);
    let mut on_turn = |commands: &[sim::Command], report: &sim::TurnReport| {
        let now = std::time::Instant::now();
        turn_times.push(now - last_end);
        phases.borrow_mut().end_turn(now - last_end);
        if hashes {
            lines.push(format!("{}\t{}", report.turn, hex(&report.hash)));
        }
        for e in &report.events {
            use sim::Event;
            match e {
                Event::Spawned { .. } => events[0] += 1,
                Event::Arrived { .. } => events[1] += 1,
                Event::Failed { .. } => events[2] += 1,
                Event::Rejected { command, reason } => {
                    events[3] += 1;
                    if rejected.len() < MAX_REJECTED_LINES {
                        // The command itself, as every tool prints it, then why.
                        let what = commands
                            .iter()
                            .find(|c| c.order_key() == *command)
                            .map_or_else(|| format!("player {} seq {}", command.1, command.2), |c| command_text(c, rules));
                        rejected.push(format!("# rejected: turn {}: {what}: {}", command.0, reason_text(reason, rules)));
                    }
                }
                Event::FormationArrived { .. } => events[4] += 1,
                _ => {}
            }
        }
        last_hash = report.hash;
        bar.inc(1);
        last_end = std::time::Instant::now();
    };
    let (world, _) = run_observed(&scenario, &options, file, &mut on_turn, &mut on_phase).map_err(|e| match e {
        replay::record::RunError::Io(source) => write_error(record.unwrap_or(Path::new("-")), source),
        replay::record::RunError::Setup(message) => bad(format!("{}: {message}", scenario_path.display())),
        replay::record::RunError::Threads(message) => bad(message),
    })?;
    bar.finish_and_clear();
    let elapsed = started.elapsed();
    let per_turn = if turns > 0 { elapsed.as_secs_f64() * 1000.0 / f64::from(turns) } else { 0.0 };
    // The first turn's time includes building the world, so the quantiles leave it out when
    // there are others.
    let mut sorted: Vec<f64> = turn_times.iter().skip(usize::from(turn_times.len() > 1)).map(|d| d.as_secs_f64() * 1000.0).collect();
    sorted.sort_by(f64::total_cmp);
    let quantile = |per_mille: usize| -> f64 {
        if sorted.is_empty() {
            return 0.0;
        }
        sorted[(sorted.len() * per_mille).div_ceil(1000).clamp(1, sorted.len()) - 1]
    };
    let (median, p99, max) = (quantile(500), quantile(990), quantile(1000));
    let phases = phases.into_inner().summary();
    let stats = world.scale_stats();
    let latency = |per_mille: u32| stats.latency_quantile(per_mille).map_or_else(|| "-".to_string(), |t| t.to_string());
    let answered = |per_mille: u32| stats.answered_quantile(per_mille).map_or_else(|| "-".to_string(), |t| t.to_string());
    if json {
        let latency_json = |per_mille: u32| stats.latency_quantile(per_mille).map_or(serde_json::Value::Null, serde_json::Value::from);
        let answered_json = |per_mille: u32| stats.answered_quantile(per_mille).map_or(serde_json::Value::Null, serde_json::Value::from);
        let value = serde_json::json!({
            "scenario": scenario.name(),
            "turns": turns,
            "units": world.units().count(),
            "spawned": events[0],
            "arrived": events[1],
            "gave_up": events[2],
            "formation_arrivals": events[4],
            "rejected": events[3],
            "final_hash": hex(&last_hash),
            "ms_per_turn": per_turn,
            "turn_ms": {"median": median, "p99": p99, "max": max},
            "phases": phases.iter().map(|p| serde_json::json!({"phase": p.name, "share": p.share, "median_ms": p.median_ms, "max_ms": p.max_ms})).collect::<Vec<_>>(),
            "order_latency_turns": {
                "ordered": stats.ordered(),
                "waiting": stats.waiting,
                "p50": latency_json(500),
                "p99": latency_json(990),
                "max": latency_json(1000),
            },
            "path_latency_turns": {"p50": answered_json(500), "p99": answered_json(990), "max": answered_json(1000)},
            "max_path_queue": stats.max_queue,
            "long_searches": stats.long_searches,
            "held_searches": stats.held_searches,
            "long_search_work": stats.long_work,
            "max_turn_search_work": stats.max_turn_work,
            "recorded": record.map(|p| p.display().to_string()),
        });
        let text = serde_json::to_string_pretty(&value).map_err(|e| bad(format!("cannot write the JSON summary: {e}")))?;
        let _ = writeln!(out, "{text}");
        return Ok(0);
    }
    for l in lines.iter().chain(&rejected) {
        let _ = writeln!(out, "{l}");
    }
    if events[3] > rejected.len() as u64 {
        let _ = writeln!(out, "# ... and {} more rejected commands", events[3] - rejected.len() as u64);
    }
    let _ = writeln!(
        out,
        "scenario {}: {turns} turns, {} units, {} spawned, {} arrived, {} gave up, {} formation arrivals, {} commands rejected; final hash {}; {per_turn:.2} ms per turn",
        scenario.name(),
        world.units().count(),
        events[0],
        events[1],
        events[2],
        events[4],
        events[3],
        hex(&last_hash)
    );
    let _ = writeln!(
        out,
        "  turn time: median {median:.2} ms, p99 {p99:.2} ms, max {max:.2} ms; order latency of {} ordered units ({} still waiting): p50 {}, p99 {}, max {} turns (first path p99 {}, max {}); path queue at most {}; {} long-range searches",
        stats.ordered(),
        stats.waiting,
        latency(500),
        latency(990),
        latency(1000),
        answered(990),
        answered(1000),
        stats.max_queue,
        stats.long_searches
    );
    let shares: Vec<String> =
        phases.iter().map(|p| format!("{} {:.1}% ({:.2} ms median, {:.2} ms slowest)", p.name, p.share, p.median_ms, p.max_ms)).collect();
    let _ = writeln!(out, "  phases of the turn: {}", shares.join(", "));
    if let Some(rules) = scenario.rules() {
        for line in rules.summary(&world) {
            let _ = writeln!(out, "  {line}");
        }
    }
    if let Some(path) = record {
        let _ = writeln!(out, "recorded {}", path.display());
    }
    Ok(0)
}

/// Most rejected commands `phalanx run` lists before its summary.
const MAX_REJECTED_LINES: usize = 20;

/// `phalanx verify FILE...`.
pub(super) fn cmd_verify(
    files: &[PathBuf],
    jobs: usize,
    json: bool,
    options: &VerifyOptions,
    shard_arg: Option<&str>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, CliError> {
    let files = match shard_arg {
        None => files.to_vec(),
        Some(text) => {
            let parsed = text.split_once('/').and_then(|(i, n)| Some((i.parse::<u32>().ok()?, n.parse::<u32>().ok()?)));
            match parsed {
                Some((i, n)) if n >= 1 && (1..=n).contains(&i) => shard(files, i, n),
                _ => return Err(bad(format!("--shard {text}: expected I/N with 1 <= I <= N"))),
            }
        }
    };
    let bar = progress_bar(files.len() as u64, "files");
    let turns = AtomicU64::new(0);
    let tick = || {
        let n = turns.fetch_add(1, Ordering::Relaxed) + 1;
        if n.is_multiple_of(16) {
            bar.set_message(format!("{n} turns"));
        }
    };
    let started = std::time::Instant::now();
    let reports = verify_files(&files, options, jobs, &|| tick(), &|| bar.inc(1)).map_err(bad)?;
    let elapsed = started.elapsed();
    bar.finish_and_clear();
    let code = reports.iter().map(|r| r.outcome.exit_code()).max().unwrap_or(0);
    if json {
        let text = serde_json::to_string_pretty(&reports).map_err(|e| bad(format!("cannot write the JSON report: {e}")))?;
        let _ = writeln!(out, "{text}");
    } else {
        for r in &reports {
            let _ = write!(out, "{}", r.to_text());
        }
        let count = |o: Outcome| reports.iter().filter(|r| r.outcome == o).count();
        if reports.len() > 1 {
            let turns: u64 = reports.iter().map(|r| u64::from(r.turns_verified)).sum();
            let _ = writeln!(
                out,
                "{} files: {} identical, {} diverged, {} unreadable{}; {turns} turns in {:.2} s with {jobs} jobs ({:.0} turns/s)",
                reports.len(),
                count(Outcome::Identical),
                count(Outcome::Diverged),
                count(Outcome::Unreadable),
                if options.strict { format!(", {} cut short", count(Outcome::CutShort)) } else { String::new() },
                elapsed.as_secs_f64(),
                turns as f64 / elapsed.as_secs_f64().max(1e-9)
            );
        }
    }
    if files.is_empty() {
        let _ = writeln!(err, "phalanx: verify: no files in this shard");
    }
    Ok(code)
}

fn read_limited(path: &Path) -> Result<Vec<u8>, CliError> {
    super::read_capped(path, MAX_DIFF_FILE)
}

fn print_diffs(out: &mut dyn Write, diffs: &replay::diff::SnapshotDiff) {
    for f in &diffs.diffs {
        let entity = f.entity.as_deref().map(|e| format!(" {e}")).unwrap_or_default();
        let _ = writeln!(out, "  {}{entity} {}: {} | {}", f.component, f.field, f.left, f.right);
    }
    if diffs.total > diffs.diffs.len() {
        let _ = writeln!(out, "  ... {} more", diffs.total - diffs.diffs.len());
    }
}

/// The field differences of two replays' keyframes of turn `k` (A first).
fn keyframe_diff(k: u32, a: &[u8], b: &[u8], rulesets: &Rulesets) -> Result<replay::diff::SnapshotDiff, CliError> {
    replay::diff::keyframe_diff(k, a, b, 100, rulesets).map_err(|e| bad(e.to_string()))
}

/// `phalanx diff A B`: two replays or two snapshots of the same game.
pub(super) fn cmd_diff(a: &Path, b: &Path, rulesets: &Rulesets, out: &mut dyn Write) -> Result<i32, CliError> {
    let (bytes_a, bytes_b) = (read_limited(a)?, read_limited(b)?);
    match (is_replay(&bytes_a), is_replay(&bytes_b)) {
        (true, true) => diff_replays(a, &bytes_a, b, &bytes_b, rulesets, out),
        (false, false) => {
            let load = |path: &Path, bytes: &[u8]| sim::snapshot::unframe(bytes).map_err(|e| bad(format!("{}: {e}", path.display())));
            let (sa, sb) = (load(a, &bytes_a)?, load(b, &bytes_b)?);
            let diffs = replay::diff::diff_snapshots_with(&sa, &sb, 100, rulesets);
            if diffs.total == 0 {
                let _ = writeln!(out, "identical snapshots (turn {})", sa.turn);
                return Ok(0);
            }
            let _ = writeln!(out, "snapshots differ in {} fields (A | B):", diffs.total);
            print_diffs(out, &diffs);
            Ok(1)
        }
        _ => Err(bad(format!("{} and {}: expected two replays or two snapshots, found one of each", a.display(), b.display()))),
    }
}

fn diff_replays(a: &Path, bytes_a: &[u8], b: &Path, bytes_b: &[u8], rulesets: &Rulesets, out: &mut dyn Write) -> Result<i32, CliError> {
    let read = |path: &Path, bytes: &[u8]| Replay::read(bytes).map_err(|e| bad(format!("{}: {e}", path.display())));
    let (ra, rb) = (read(a, bytes_a)?, read(b, bytes_b)?);
    let rules = ra.header.rules.as_ref().and_then(|(name, version)| rulesets.resolve(name, *version).ok());
    if ra.header.scenario_digest != rb.header.scenario_digest {
        let _ = writeln!(
            out,
            "note: different scenarios ({} {} vs {} {})",
            ra.header.scenario_name,
            &hex(&ra.header.scenario_digest)[..16],
            rb.header.scenario_name,
            &hex(&rb.header.scenario_digest)[..16]
        );
    }
    if ra.header.settings != rb.header.settings {
        let _ = writeln!(out, "note: different settings");
    }
    let common = ra.turns.len().min(rb.turns.len());
    let t = match replay::diff::replay_split(&ra, &rb) {
        replay::diff::ReplaySplit::Turn(t) => t,
        replay::diff::ReplaySplit::Keyframe(k, sa, sb) => {
            let diffs = keyframe_diff(k, sa, sb, rulesets)?;
            let _ = writeln!(out, "every turn hash agrees, but the keyframes of turn {k} differ in {} fields (A | B):", diffs.total);
            print_diffs(out, &diffs);
            return Ok(1);
        }
        replay::diff::ReplaySplit::None => {
            if ra.turns.len() == rb.turns.len() {
                let _ = writeln!(out, "identical: {common} turns");
                return Ok(0);
            }
            let _ = writeln!(out, "identical for their {common} common turns; A has {} turns, B has {}", ra.turns.len(), rb.turns.len());
            return Ok(1);
        }
    };
    let (ta, tb) = (&ra.turns[t], &rb.turns[t]);
    let _ = writeln!(out, "first diverging turn: {}", ta.turn);
    if ta.commands != tb.commands {
        let _ = writeln!(out, "the commands of turn {} differ:", ta.turn);
        for (side, cmds) in [("A", &ta.commands), ("B", &tb.commands)] {
            for line in cmds.iter().map(|c| command_text(c, rules.as_deref())) {
                let _ = writeln!(out, "  {side} {line}");
            }
        }
    } else {
        let _ = writeln!(out, "same commands ({}):", ta.commands.len());
        for line in ta.commands.iter().map(|c| command_text(c, rules.as_deref())) {
            let _ = writeln!(out, "  {line}");
        }
    }
    // Where the states part: this turn, or, after a difference of commands alone, a later one.
    let state_split = replay::diff::first_state_split(&ra, &rb, t);
    if state_split != Some(t) {
        let _ = writeln!(out, "the states after turn {} are the same (the commands differ, the state does not yet)", ta.turn);
        match state_split {
            Some(s) => {
                let _ =
                    writeln!(out, "first differing state: after turn {} (the start of turn {})", ra.turns[s].turn, ra.turns[s].turn + 1);
            }
            None => {
                let _ = writeln!(out, "the states are the same for all {common} common turns");
                return Ok(1);
            }
        }
    }
    let s = state_split.unwrap_or(t);
    let (da, db) = (ra.turns[s].digest(&ra.header.components), rb.turns[s].digest(&rb.header.components));
    let components = da.differing_components(&db);
    let _ = writeln!(out, "diverging components: {}", if components.is_empty() { "(none)".into() } else { components.join(", ") });
    let _ = writeln!(out, "hash A {}\nhash B {}", hex(&da.hash), hex(&db.hash));
    // The first keyframe both replays hold at or after the state divergence.
    let keyframe = replay::diff::common_keyframe(&ra, &rb, ra.turns[s].turn.wrapping_add(1));
    match keyframe {
        Some((k, sa, sb)) => {
            let diffs = keyframe_diff(k, sa, sb, rulesets)?;
            let _ = writeln!(out, "state at the start of turn {k} (keyframe): {} differing fields (A | B):", diffs.total);
            print_diffs(out, &diffs);
        }
        None => {
            let _ = writeln!(out, "no keyframe in both replays after the divergence: no field-level diff");
        }
    }
    Ok(1)
}

/// `phalanx seek FILE TURN`: the state at the start of `turn` ([`replay::seek::restore`]).
pub(super) fn cmd_seek(path: &Path, turn: u32, threads: usize, rulesets: &Rulesets, out: &mut dyn Write) -> Result<i32, CliError> {
    let file = std::fs::File::open(path).map_err(|e| io_error(path, e))?;
    let name = path.display().to_string();
    let mut restored = replay::seek::restore(std::io::BufReader::new(file), &name, replay::seek::SeekTarget::Turn(turn), threads, rulesets)
        .map_err(bad)?;
    if let Some(d) = &restored.divergence {
        let _ = writeln!(
            out,
            "DIVERGED: turn {} re-simulates to {} but the replay recorded {} (diverging: {}); the state below is this engine's, not the recording's",
            d.turn,
            d.found,
            d.recorded,
            d.components.join(", ")
        );
    }
    let from = match restored.keyframe {
        Some(k) => format!("keyframe of turn {k}"),
        None => "the scenario (no keyframe before it)".to_owned(),
    };
    let _ = writeln!(out, "{name}: restored from {from}, then {} turns re-simulated", restored.resimulated);
    let _ = write!(out, "{}", replay::diff::summary(&mut restored.world));
    Ok(if restored.divergence.is_some() { 1 } else { 0 })
}

/// The phases `phalanx run` reports, in the order a turn runs them: the step's own
/// (`sim::Phase`, the game's hash counted with the core's), then the rest of the turn
/// (the scenario's script, bots, the replay writer, the progress bar).
const PHASES: [&str; 8] = ["commands", "grid and spawns", "paths", "motion", "formations", "rules", "hash", "other"];

/// Where a phase's time is counted in [`PHASES`].
fn phase_slot(phase: sim::Phase) -> usize {
    use sim::Phase;
    match phase {
        Phase::Commands => 0,
        Phase::Grid => 1,
        Phase::Paths => 2,
        Phase::Motion => 3,
        Phase::Formations => 4,
        Phase::Rules => 5,
        Phase::Hash | Phase::GameHash => 6,
    }
}

/// Each turn's time in each of [`PHASES`].
#[derive(Default)]
struct PhaseTimes {
    /// When the step began, or the last phase ended.
    mark: Option<std::time::Instant>,
    /// This turn's time so far, by phase. `[Units: seconds]`
    current: [f64; PHASES.len()],
    /// Every finished turn's. `[Units: seconds]`
    turns: Vec<[f64; PHASES.len()]>,
}

/// One phase's share of the run's turn time and its median and slowest turn.
struct PhaseLine {
    name: &'static str,
    /// Percent of every turn's time together.
    share: f64,
    median_ms: f64,
    max_ms: f64,
}

impl PhaseTimes {
    /// The step begins (`None`) or has finished `phase`.
    fn mark(&mut self, phase: Option<sim::Phase>) {
        let now = std::time::Instant::now();
        if let (Some(phase), Some(mark)) = (phase, self.mark) {
            self.current[phase_slot(phase)] += (now - mark).as_secs_f64();
        }
        self.mark = Some(now);
    }

    /// The turn took `total`: what its phases did not take is `other`.
    fn end_turn(&mut self, total: std::time::Duration) {
        let stepped: f64 = self.current.iter().sum();
        let mut turn = std::mem::take(&mut self.current);
        turn[PHASES.len() - 1] = (total.as_secs_f64() - stepped).max(0.0);
        self.turns.push(turn);
        self.mark = None;
    }

    /// Each phase's line; the first turn (which builds the world) is left out when there are others.
    fn summary(self) -> Vec<PhaseLine> {
        let turns = &self.turns[usize::from(self.turns.len() > 1)..];
        let total: f64 = turns.iter().flatten().sum();
        (0..PHASES.len())
            .map(|k| {
                let mut times: Vec<f64> = turns.iter().map(|t| t[k]).collect();
                times.sort_by(f64::total_cmp);
                let median = times.get(times.len() / 2).copied().unwrap_or(0.0);
                let max = times.last().copied().unwrap_or(0.0);
                let sum: f64 = times.iter().sum();
                let share = if total > 0.0 { 100.0 * sum / total } else { 0.0 };
                PhaseLine { name: PHASES[k], share, median_ms: median * 1e3, max_ms: max * 1e3 }
            })
            .collect()
    }
}
