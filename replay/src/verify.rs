//! Verification: re-simulate a replay and compare every turn with what it recorded; on a
//! divergence, say where.
//!
//! [`verify`] rebuilds the world from the scenario embedded in the header, steps it with each turn's
//! recorded commands and compares the state digest with the recorded one. It also compares every
//! keyframe with the re-simulated world's own snapshot, byte for byte, which catches state the hash
//! would miss. At the first divergence it reports:
//!
//! 1. the turn, the expected and found hashes, and the commands of that turn;
//! 2. the components whose roots differ (from the digest tree: `units`, `passability`, ...);
//! 3. when a keyframe follows within the replay, the re-simulated world is stepped on to it and
//!    the two snapshots are compared field by field ([`crate::diff`]): the entities and fields that
//!    differ.
//!
//! With [`VerifyOptions::sync_test`] every turn is also stepped a second time from a snapshot of the
//! world taken just before it (saved, loaded, stepped), and any difference from the world that
//! never stopped is a divergence: 0 A.D.'s serialization test, GGRS's sync test.

use crate::rules::Rulesets;
use std::io::Read;

use serde::Serialize;
use sim::digest_tree::StateDigest;
use sim::state_hash::hex;
use sim::{Command, World};

use crate::Error;
use crate::diff::FieldDiff;
use crate::format::{ENGINE, End, Record, ReplayHeader, ReplayReader};
use crate::scenario::Scenario;

/// How to verify.
#[derive(Clone, Debug)]
pub struct VerifyOptions {
    /// Worker threads for each world's path requests.
    pub threads: usize,
    /// Also save, reload and re-step every turn.
    pub sync_test: bool,
    /// Most field differences listed in a report.
    pub diff_limit: usize,
    /// A replay cut short (no footer) fails as [`Outcome::CutShort`] instead of passing on the
    /// turns it holds: for CI, which must not accept a truncated file.
    pub strict: bool,
    /// The game rulesets replays may name.
    pub rulesets: Rulesets,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        Self { threads: 1, sync_test: false, diff_limit: 50, strict: false, rulesets: Rulesets::none() }
    }
}

/// The result of verifying one replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Every turn re-simulated to its recorded hash.
    Identical,
    /// A turn did not.
    Diverged,
    /// The file could not be read or is of another version.
    Unreadable,
    /// Every turn it holds re-simulated to its recorded hash, but it has no footer (it was cut
    /// short), and the verification was strict ([`VerifyOptions::strict`]).
    #[serde(rename = "cut-short")]
    CutShort,
}

impl Outcome {
    /// The exit code of `phalanx verify` for this outcome: 0, 1 or 2.
    pub fn exit_code(self) -> i32 {
        match self {
            Outcome::Identical => 0,
            Outcome::Diverged | Outcome::CutShort => 1,
            Outcome::Unreadable => 2,
        }
    }
}

/// What kind of check failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DivergenceKind {
    /// The turn's state hash differs from the recorded one.
    Hash,
    /// The hashes agree but a keyframe's snapshot differs from the re-simulated state.
    Keyframe,
    /// The world reloaded from a snapshot stepped differently from the one that never stopped.
    SyncTest,
}

/// Where and how a replay diverged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Divergence {
    /// What failed.
    pub kind: DivergenceKind,
    /// The first turn whose end state differs (for a keyframe divergence: the last turn before the
    /// keyframe; the state may have diverged as early as `since_turn`).
    pub turn: u32,
    /// For a keyframe divergence, the first turn after the last keyframe that matched (or 0): the
    /// divergence happened in `since_turn..=turn`, which the hashes do not narrow down.
    pub since_turn: Option<u32>,
    /// Why, when it is not a difference of states (a snapshot that does not load).
    pub reason: Option<String>,
    /// The recorded hash (or the uninterrupted world's, for the sync test), hex.
    pub expected_hash: String,
    /// The re-simulated hash, hex.
    pub found_hash: String,
    /// The components whose roots differ, in the digest's order.
    pub components: Vec<String>,
    /// The commands of that turn, one line each.
    pub commands: Vec<String>,
    /// The turn whose start state was compared field by field (a keyframe's), if any.
    pub state_turn: Option<u32>,
    /// The differing fields there, at most the limit.
    pub diffs: Vec<FieldDiff>,
    /// How many fields differ in all.
    pub diffs_total: usize,
}

/// The report of one replay.
#[derive(Clone, Debug, Serialize)]
pub struct VerifyReport {
    /// The file, as named.
    pub file: String,
    /// The result.
    pub outcome: Outcome,
    /// The engine that recorded it.
    pub engine: Option<String>,
    /// The scenario's name.
    pub scenario: Option<String>,
    /// blake3 of the embedded scenario, hex.
    pub scenario_digest: Option<String>,
    /// Turns re-simulated and compared.
    pub turns_verified: u32,
    /// Keyframes compared with the re-simulated state.
    pub keyframes_checked: u32,
    /// Whether the footer was read (a file cut off has `truncated_at`; a verification that stopped
    /// at a divergence has neither).
    pub complete: bool,
    /// Where a cut-off file ends.
    pub truncated_at: Option<u64>,
    /// The final hash (the last verified turn's), hex.
    pub final_hash: Option<String>,
    /// Whether the sync test ran.
    pub sync_test: bool,
    /// Whether a replay cut short fails ([`VerifyOptions::strict`]).
    pub strict: bool,
    /// The first divergence.
    pub divergence: Option<Divergence>,
    /// Why the file could not be verified.
    pub error: Option<String>,
    /// Things worth knowing that are not failures (another engine version recorded it).
    pub notes: Vec<String>,
    /// Wall-clock time of the verification (not part of the JSON: it changes run to run).
    #[serde(skip)]
    pub elapsed: std::time::Duration,
}

impl VerifyReport {
    fn new(file: &str) -> Self {
        Self {
            file: file.to_owned(),
            outcome: Outcome::Identical,
            engine: None,
            scenario: None,
            scenario_digest: None,
            turns_verified: 0,
            keyframes_checked: 0,
            complete: false,
            truncated_at: None,
            final_hash: None,
            sync_test: false,
            strict: false,
            divergence: None,
            error: None,
            notes: Vec::new(),
            elapsed: std::time::Duration::ZERO,
        }
    }

    fn fail(mut self, error: impl std::fmt::Display) -> Self {
        self.outcome = Outcome::Unreadable;
        self.error = Some(error.to_string());
        self
    }

    /// The report as text: one line for a pass, the divergence in detail otherwise.
    pub fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        let rate = if self.elapsed.as_micros() > 0 {
            format!(", {:.0} turns/s", f64::from(self.turns_verified) / self.elapsed.as_secs_f64())
        } else {
            String::new()
        };
        match self.outcome {
            Outcome::Identical => {
                let _ = write!(s, "{}: identical: {} turns", self.file, self.turns_verified);
                if self.keyframes_checked > 0 {
                    let _ = write!(s, ", {} keyframes", self.keyframes_checked);
                }
                if self.sync_test {
                    s.push_str(", sync test passed");
                }
                if let Some(h) = &self.final_hash {
                    let _ = write!(s, ", final hash {}", &h[..16.min(h.len())]);
                }
                s.push_str(&rate);
                s.push('\n');
            }
            Outcome::Unreadable => {
                let _ = writeln!(s, "{}: unreadable: {}", self.file, self.error.as_deref().unwrap_or("?"));
            }
            Outcome::CutShort => {
                let _ = writeln!(
                    s,
                    "{}: CUT SHORT: its {} whole turns re-simulated identically, but the file ends without its footer (--strict)",
                    self.file, self.turns_verified
                );
            }
            Outcome::Diverged => {
                let _ = writeln!(s, "{}: DIVERGED", self.file);
                if let Some(d) = &self.divergence {
                    let what = match d.kind {
                        DivergenceKind::Hash => "state hash differs from the recording",
                        DivergenceKind::Keyframe => "hashes agree but the keyframe snapshot differs (a state the hash does not cover)",
                        DivergenceKind::SyncTest => "the world reloaded from a snapshot stepped differently",
                    };
                    match d.since_turn {
                        Some(since) => {
                            let _ = writeln!(s, "  diverged between turns {since} and {} ({what})", d.turn);
                        }
                        None => {
                            let _ = writeln!(s, "  first diverging turn: {} ({what})", d.turn);
                        }
                    }
                    if let Some(reason) = &d.reason {
                        let _ = writeln!(s, "  reason: {reason}");
                    }
                    let _ = writeln!(s, "  expected hash {}", d.expected_hash);
                    let _ = writeln!(s, "  found hash    {}", d.found_hash);
                    let _ = writeln!(
                        s,
                        "  diverging components: {}",
                        if d.components.is_empty() { "(none)".into() } else { d.components.join(", ") }
                    );
                    if d.kind != DivergenceKind::Keyframe {
                        let _ = writeln!(s, "  commands of turn {} ({}):", d.turn, d.commands.len());
                        for c in &d.commands {
                            let _ = writeln!(s, "    {c}");
                        }
                    }
                    match d.state_turn {
                        Some(t) => {
                            let _ = writeln!(s, "  state at the start of turn {t}: {} differing fields (expected | found)", d.diffs_total);
                            for f in &d.diffs {
                                let entity = f.entity.as_deref().map(|e| format!(" {e}")).unwrap_or_default();
                                let _ = writeln!(s, "    {}{entity} {}: {} | {}", f.component, f.field, f.left, f.right);
                            }
                            if d.diffs_total > d.diffs.len() {
                                let _ = writeln!(s, "    ... {} more", d.diffs_total - d.diffs.len());
                            }
                        }
                        None if d.reason.is_none() => {
                            let _ = writeln!(s, "  no keyframe follows the divergence: record with keyframes for a field-level diff");
                        }
                        None => {}
                    }
                }
                let _ = writeln!(s, "  verified {} turns before it{rate}", self.turns_verified);
            }
        }
        if let Some(at) = self.truncated_at
            && self.outcome != Outcome::Unreadable
        {
            let _ = writeln!(
                s,
                "  note: the file has no footer (cut off at offset {at}); its {} whole turns were verified",
                self.turns_verified
            );
        }
        for n in &self.notes {
            let _ = writeln!(s, "  note: {n}");
        }
        s
    }
}

/// Called before each turn is stepped, with the world about to step it; tests plant
/// nondeterminism through it. `None` in real use.
pub type Hook<'a> = &'a mut dyn FnMut(&mut World);

/// The scenario a replay embeds (no file access: it is self-contained).
///
/// # Errors
/// [`Error::UnknownRuleset`] (or [`Error::RulesetVersion`]) for rules this program lacks,
/// [`Error::Scenario`] when the scenario does not parse, [`Error::HeaderMismatch`] when its rules
/// are not the header's.
pub fn embedded_scenario(header: &ReplayHeader, rulesets: &Rulesets) -> Result<Scenario, Error> {
    if let Some((name, version)) = &header.rules {
        rulesets.resolve(name, *version)?;
    }
    let mut refuse = |path: &str| Err(format!("the embedded scenario refers to the file {path:?}; it must be self-contained"));
    let scenario = Scenario::parse_with(&header.scenario, "<replay header scenario>", &mut refuse, rulesets)?;
    let named = scenario.rules().map(|r| (r.name().to_owned(), r.version()));
    if named != header.rules {
        return Err(Error::HeaderMismatch { what: "game rules" });
    }
    Ok(scenario)
}

/// The world at turn 0 of a replay, with `threads` path workers.
///
/// # Errors
/// As [`scenario_world`], or [`Error::Threads`] when the worker threads could not be started.
pub fn initial_world(header: &ReplayHeader, threads: usize, rulesets: &Rulesets) -> Result<World, Error> {
    let mut world = scenario_world(header, rulesets)?;
    start_threads(&mut world, threads)?;
    Ok(world)
}

/// Gives a world `threads` path workers.
///
/// # Errors
/// [`Error::Threads`]: the threads could not be started (a fault of this machine, not of any file).
pub fn start_threads(world: &mut World, threads: usize) -> Result<(), Error> {
    world.set_threads(threads).map_err(|e| Error::Threads { threads, message: e.to_string() })
}

/// The world at turn 0 of a replay, on the calling thread alone.
///
/// # Errors
/// Why the embedded scenario cannot be used: as [`embedded_scenario`], or
/// [`Error::HeaderMismatch`], [`Error::ScenarioName`], [`Error::World`] or [`Error::Components`].
pub fn scenario_world(header: &ReplayHeader, rulesets: &Rulesets) -> Result<World, Error> {
    let scenario = embedded_scenario(header, rulesets)?;
    if *scenario.settings() != header.settings || header.seed != header.settings.seed {
        return Err(Error::HeaderMismatch { what: "settings or seed" });
    }
    if scenario.name() != header.scenario_name {
        return Err(Error::ScenarioName { header: header.scenario_name.clone(), embedded: scenario.name().to_owned() });
    }
    let world = scenario.world().map_err(|source| Error::World { source })?;
    let names: Vec<String> = world.state_digest().components.into_iter().map(|(n, _)| n).collect();
    if names != header.components {
        return Err(Error::Components { header: header.components.clone(), engine: names });
    }
    Ok(world)
}

/// Lines describing commands, as `sim` prints them (`player 1 seq 0: move 48v0 49v0 → (512.5, 300)`).
pub fn command_lines(commands: &[Command]) -> Vec<String> {
    commands.iter().map(Command::to_string).collect()
}

/// Field differences between two snapshots' bytes (`expected` first).
fn snapshot_diff(expected: &[u8], found: &[u8], limit: usize, rulesets: &Rulesets) -> Result<(Vec<FieldDiff>, usize), String> {
    let a = sim::snapshot::unframe(expected).map_err(|e| format!("recorded keyframe: {e}"))?;
    let b = sim::snapshot::unframe(found).map_err(|e| format!("re-simulated snapshot: {e}"))?;
    let d = crate::diff::diff_snapshots_with(&a, &b, limit, rulesets);
    Ok((d.diffs, d.total))
}

/// Re-simulates a replay and compares it with its recording. `progress` is called with each
/// verified turn. Never panics: damage, incompatibility and divergence are all in the report.
pub fn verify(
    input: impl Read,
    file: &str,
    options: &VerifyOptions,
    mut hook: Option<Hook<'_>>,
    progress: &(dyn Fn() + Sync),
) -> VerifyReport {
    let started = std::time::Instant::now();
    let mut report = verify_inner(input, file, options, &mut hook, progress);
    report.elapsed = started.elapsed();
    report
}

fn verify_inner(
    input: impl Read,
    file: &str,
    options: &VerifyOptions,
    hook: &mut Option<Hook<'_>>,
    progress: &(dyn Fn() + Sync),
) -> VerifyReport {
    let mut report = VerifyReport::new(file);
    report.sync_test = options.sync_test;
    report.strict = options.strict;
    let mut reader = match ReplayReader::new(input) {
        Ok(r) => r,
        Err(e) => return report.fail(e),
    };
    let header = reader.header().clone();
    report.engine = Some(header.engine.clone());
    report.scenario = Some(header.scenario_name.clone());
    report.scenario_digest = Some(hex(&header.scenario_digest));
    if header.engine != ENGINE {
        report
            .notes
            .push(format!("recorded by {}, verified with {ENGINE}: a rule change between them shows as a divergence", header.engine));
    }
    let mut world = match scenario_world(&header, &options.rulesets) {
        Ok(w) => w,
        Err(e) => return report.fail(format!("offset 16 (header): {e}")),
    };
    if let Err(e) = start_threads(&mut world, options.threads) {
        return report.fail(e);
    }
    // After a divergence: the turn, and the world is stepped on to the next keyframe for a diff.
    let mut diverged: Option<Divergence> = None;
    // The turn of the last keyframe that matched the re-simulated state (0: the scenario's start).
    let mut last_keyframe = 0u32;
    loop {
        let record = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                if diverged.is_some() {
                    // The divergence is the finding; the damage after it is a note.
                    report.notes.push(format!("reading stopped after the divergence: {e}"));
                    break;
                }
                return report.fail(e);
            }
        };
        match record {
            Record::Turn(turn) => {
                if let Some(h) = hook.as_mut() {
                    h(&mut world);
                }
                let twin = if options.sync_test && diverged.is_none() {
                    match world.load_like(&world.save()) {
                        Ok(t) => Some(t),
                        Err(e) => {
                            report.outcome = Outcome::Diverged;
                            report.divergence =
                                Some(sync_divergence(turn.turn, &turn.commands, None, None, format!("the snapshot does not load: {e}")));
                            return report;
                        }
                    }
                } else {
                    None
                };
                let stepped = world.step(&turn.commands);
                if diverged.is_some() {
                    continue;
                }
                let expected = turn.digest(&header.components);
                if stepped.hash != expected.hash {
                    diverged = Some(hash_divergence(&expected, &stepped.digest, &turn.commands));
                    continue;
                }
                if let Some(mut twin) = twin {
                    let again = twin.step(&turn.commands);
                    let (mine, theirs) = (world.save(), twin.save());
                    if again.hash != stepped.hash || theirs != mine {
                        let (diffs, total) = snapshot_diff(&mine, &theirs, options.diff_limit, &options.rulesets).unwrap_or_default();
                        let mut d = sync_divergence(turn.turn, &turn.commands, Some(&stepped.digest), Some(&again.digest), String::new());
                        d.state_turn = Some(world.turn());
                        d.diffs = diffs;
                        d.diffs_total = total;
                        report.outcome = Outcome::Diverged;
                        report.divergence = Some(d);
                        return report;
                    }
                }
                report.turns_verified += 1;
                report.final_hash = Some(hex(&stepped.hash));
                progress();
            }
            Record::Keyframe { turn, snapshot } => {
                let mine = world.save();
                if let Some(d) = diverged.as_mut() {
                    match snapshot_diff(&snapshot, &mine, options.diff_limit, &options.rulesets) {
                        Ok((diffs, total)) => {
                            d.state_turn = Some(turn);
                            d.diffs = diffs;
                            d.diffs_total = total;
                        }
                        Err(e) => report.notes.push(format!("no field diff: {e}")),
                    }
                    break;
                }
                report.keyframes_checked += 1;
                if snapshot == mine {
                    last_keyframe = turn;
                } else {
                    let (diffs, total) = match snapshot_diff(&snapshot, &mine, options.diff_limit, &options.rulesets) {
                        Ok(d) => d,
                        Err(e) => return report.fail(format!("keyframe of turn {turn}: {e}")),
                    };
                    let hash = report.final_hash.clone().unwrap_or_default();
                    report.outcome = Outcome::Diverged;
                    report.divergence = Some(Divergence {
                        kind: DivergenceKind::Keyframe,
                        turn: turn.saturating_sub(1),
                        since_turn: Some(last_keyframe),
                        reason: None,
                        expected_hash: hash.clone(),
                        found_hash: hash,
                        components: diffs.iter().map(|f| f.component.clone()).fold(Vec::new(), |mut v, c| {
                            if !v.contains(&c) {
                                v.push(c);
                            }
                            v
                        }),
                        commands: Vec::new(),
                        state_turn: Some(turn),
                        diffs,
                        diffs_total: total,
                    });
                    return report;
                }
            }
            Record::Footer(_) => {}
        }
    }
    match reader.end() {
        Some(End::Footer(_)) => report.complete = true,
        Some(End::Truncated { offset }) => report.truncated_at = Some(offset),
        Some(End::Damaged { .. }) | None => {}
    }
    if let Some(d) = diverged {
        report.outcome = Outcome::Diverged;
        report.divergence = Some(d);
    } else if options.strict && report.truncated_at.is_some() {
        report.outcome = Outcome::CutShort;
    }
    report
}

fn hash_divergence(expected: &StateDigest, found: &StateDigest, commands: &[Command]) -> Divergence {
    Divergence {
        kind: DivergenceKind::Hash,
        turn: expected.turn.wrapping_sub(1),
        since_turn: None,
        reason: None,
        expected_hash: hex(&expected.hash),
        found_hash: hex(&found.hash),
        components: expected.differing_components(found),
        commands: command_lines(commands),
        state_turn: None,
        diffs: Vec::new(),
        diffs_total: 0,
    }
}

fn sync_divergence(turn: u32, commands: &[Command], a: Option<&StateDigest>, b: Option<&StateDigest>, why: String) -> Divergence {
    Divergence {
        kind: DivergenceKind::SyncTest,
        turn,
        since_turn: None,
        reason: (!why.is_empty()).then_some(why),
        expected_hash: a.map(|d| hex(&d.hash)).unwrap_or_default(),
        found_hash: b.map(|d| hex(&d.hash)).unwrap_or_default(),
        components: match (a, b) {
            (Some(a), Some(b)) => a.differing_components(b),
            _ => Vec::new(),
        },
        commands: command_lines(commands),
        state_turn: None,
        diffs: Vec::new(),
        diffs_total: 0,
    }
}

/// Verifies a replay file.
pub fn verify_file(path: &std::path::Path, options: &VerifyOptions, progress: &(dyn Fn() + Sync)) -> VerifyReport {
    let name = path.display().to_string();
    match std::fs::File::open(path) {
        Ok(f) => verify(std::io::BufReader::with_capacity(1 << 16, f), &name, options, None, progress),
        Err(e) => {
            let mut r = VerifyReport::new(&name);
            r.outcome = Outcome::Unreadable;
            r.error = Some(format!("cannot open: {e}"));
            r
        }
    }
}

/// The files of shard `index` (1-based) of `count`, in the order given: the `k`-th file of the
/// list sorted by path (from 0) belongs to shard `k mod count + 1`, so every file is in exactly one
/// shard and the split depends only on the set of paths, not on the order they were given in.
/// Paths are compared as given (`a/x` and `./a/x` are different paths).
pub fn shard<P: AsRef<std::path::Path> + Clone>(files: &[P], index: u32, count: u32) -> Vec<P> {
    // Rank of each file in path order (ties, the same path given twice, by position); the shard
    // keeps the files in the order given.
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by(|&a, &b| files[a].as_ref().cmp(files[b].as_ref()).then(a.cmp(&b)));
    let mut rank = vec![0usize; files.len()];
    for (r, &k) in order.iter().enumerate() {
        rank[k] = r;
    }
    let count = count.max(1) as usize;
    files.iter().zip(rank).filter(|(_, r)| r % count + 1 == index as usize).map(|(f, _)| f.clone()).collect()
}

/// Verifies files on `jobs` threads; the reports come back in the order of `files`.
/// `progress` is called per verified turn, `done` per finished file.
///
/// # Errors
/// Text saying that the `jobs` threads could not be started.
pub fn verify_files(
    files: &[std::path::PathBuf],
    options: &VerifyOptions,
    jobs: usize,
    progress: &(dyn Fn() + Sync),
    done: &(dyn Fn() + Sync),
) -> Result<Vec<VerifyReport>, String> {
    use rayon::prelude::*;
    let one = |f: &std::path::PathBuf| {
        let report = verify_file(f, options, progress);
        done();
        report
    };
    let work = || files.par_iter().map(one).collect::<Vec<_>>();
    if jobs <= 1 {
        return Ok(files.iter().map(one).collect());
    }
    match rayon::ThreadPoolBuilder::new().num_threads(jobs).build() {
        Ok(pool) => Ok(pool.install(work)),
        Err(e) => Err(format!("cannot start {jobs} verification threads: {e}")),
    }
}
