//! The `phalanx host` and `phalanx join` commands: `host` serves a scenario's game over TCP,
//! `join` plays a seat of it. Exit codes: 0 the game ended in sync, 1 a desync (after writing the
//! report), 2 unusable input, a port that cannot be bound or a host that cannot be reached, 3 a
//! host whose seats all left before the end.
//!
//! [`crate::Program`] flattens [`Command`] into its command list beside the file commands and runs
//! it with [`execute`], over the program's registry of games.

use std::cell::RefCell;
use std::io::{IsTerminal, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Subcommand;
use indicatif::{ProgressBar, ProgressStyle};
use replay::rules::Rulesets;
use replay::scenario::Scenario;
use serde_json::{Value, json};

use session::SeatBot;
use session::{Brain, ClientCore, ClientEvent, Idle};
use session::{Delay, HostConfig, HostCore, HostEvent, hex};
use session::{TOKEN_BYTES, Token, Waiting};
use session::{run_client, run_host_watched};

mod json;

/// The network commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Waits for every seat, plays the scenario's game to the end, prints a summary with the final
    /// hash. Prints the bound address first, then one token per seat unless given a token file.
    Host {
        /// The scenario file.
        scenario: PathBuf,
        /// The address to listen on (port 0 picks a free one).
        #[arg(long)]
        listen: String,
        /// The number of seats (at most the scenario's players).
        #[arg(long)]
        players: u8,
        /// Turns to play (default: the scenario's).
        #[arg(long)]
        turns: Option<u32>,
        /// Milliseconds per turn.
        #[arg(long, default_value_t = 100)]
        turn_ms: u32,
        /// The input delay: `auto` or a number of turns.
        #[arg(long, default_value = "auto")]
        delay: String,
        /// One token per seat, in hexadecimal, one a line.
        #[arg(long)]
        token_file: Option<PathBuf>,
        /// Writes the game's replay here.
        #[arg(long)]
        record: Option<PathBuf>,
        /// Where a desync report goes.
        #[arg(long, default_value = "desync-report")]
        report: PathBuf,
        /// Lets a bot play this seat inside the host's process (repeatable), as `join --bot` would:
        /// the host is then also a player, not only a dedicated server.
        #[arg(long, value_name = "P")]
        bot_seat: Vec<u8>,
        /// After a desync (reported as without it), the differing seats load the host's world and
        /// the game goes on; the exit code is still 1.
        #[arg(long)]
        resync: bool,
        /// Prints one JSON object a line instead of text: every event, progress about once a
        /// second, the result and summary, and last an `end` naming how the game ended
        /// (docs/protocol.md, "JSON event streams").
        #[arg(long)]
        json: bool,
    },
    /// Plays a seat of a hosted game; prints the same summary and final hash.
    Join {
        /// The host's address.
        addr: String,
        /// The seat (player number); run it again with the same token to rejoin the seat.
        #[arg(long, required_unless_present = "observe", conflicts_with = "observe")]
        seat: Option<u8>,
        /// The seat's token, in hexadecimal.
        #[arg(long, required_unless_present = "observe", conflicts_with = "observe")]
        token: Option<String>,
        /// Lets a bot play the seat: the game rules' own bot (the skirmish AI for a scenario of the
        /// skirmish rules), a scripted mover for a scenario without rules (without `--bot` the seat
        /// stays idle).
        #[arg(long, conflicts_with = "observe")]
        bot: bool,
        /// Watches the game without a seat (no token needed), from whatever turn it is at.
        #[arg(long)]
        observe: bool,
        /// Writes this client's own replay of the game here (a client that joins after the first
        /// turn, or loads the host's world, records none and says so).
        #[arg(long)]
        record: Option<PathBuf>,
        /// Gives up on a host that sends nothing for this many seconds (a host says something at
        /// least every second, so only a dead or cut-off host is this quiet).
        #[arg(long, default_value_t = 15)]
        host_timeout: u64,
        /// Prints one JSON object a line instead of text, as `host --json` does.
        #[arg(long)]
        json: bool,
    },
}

/// The largest token file read: 255 seats' tokens and their line ends fit many times over.
const MAX_TOKEN_FILE: u64 = 64 * 1024;

/// Turns between two keyframes of the replays the programs record, host's and clients' alike.
const KEYFRAME_EVERY: u32 = 50;

/// Runs one parsed network command, writing to `out` and `err`; returns the exit code.
pub fn execute(command: Command, rulesets: &Rulesets, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let json = match &command {
        Command::Host { json, .. } | Command::Join { json, .. } => *json,
    };
    let mut lines = Lines::new(out, json);
    let result = match command {
        Command::Host { scenario, listen, players, turns, turn_ms, delay, token_file, record, report, bot_seat, resync, json: _ } => {
            let files = Files { token_file: token_file.as_deref(), record: record.as_deref(), report: &report };
            host(&scenario, &listen, players, turns, turn_ms, &delay, &files, &bot_seat, resync, rulesets, &mut lines)
        }
        Command::Join { addr, seat, token, bot, observe, record, host_timeout, json: _ } => {
            let timeout_ms = host_timeout.saturating_mul(1000);
            match (seat, token, observe) {
                (Some(seat), Some(token), false) => join(&addr, seat, &token, bot, record.as_deref(), timeout_ms, rulesets, &mut lines),
                _ => {
                    let observer = ClientCore::observer().with_rulesets(rulesets.clone()).with_host_timeout(timeout_ms);
                    play(&addr, observer, &mut Idle, record.as_deref(), rulesets, &mut lines)
                }
            }
        }
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            let _ = writeln!(err, "phalanx: {message}");
            lines.event(json!({"event": "end", "how": "error", "exit": 2, "reason": message}));
            2
        }
    }
}

/// Where a network command's lines go: text for a person, or with `--json` one JSON object a
/// line for a program; the progress bar on a terminal's stderr either way, suspended while a
/// line is written.
struct Lines<'a> {
    out: &'a mut dyn Write,
    json: bool,
    /// The command's start: every JSON event's `ms` counts from it.
    start: Instant,
    bar: ProgressBar,
    /// When the last `progress` event went out, and the turn it gave.
    last_progress: Option<(u64, u32)>,
    /// The last waiting status written, and when.
    last_waiting: Option<(Waiting, u64)>,
}

/// A `progress` event, or a growing wait's figures, at most this often. `[Units: milliseconds]`
const PROGRESS_EVERY_MS: u64 = 1_000;

impl<'a> Lines<'a> {
    fn new(out: &'a mut dyn Write, json: bool) -> Self {
        Self { out, json, start: Instant::now(), bar: ProgressBar::hidden(), last_progress: None, last_waiting: None }
    }

    fn ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Writes a text line, unless the stream is JSON.
    fn text(&mut self, line: &str) {
        if !self.json {
            let out = &mut self.out;
            self.bar.suspend(|| {
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            });
        }
    }

    /// Writes a JSON event, with its time, if the stream is JSON.
    fn event(&mut self, mut value: Value) {
        if self.json {
            value["ms"] = Value::from(self.ms());
            let out = &mut self.out;
            self.bar.suspend(|| {
                let _ = writeln!(out, "{value}");
                let _ = out.flush();
            });
        }
    }

    /// A line of text or its event.
    fn say(&mut self, text: &str, value: Value) {
        if self.json { self.event(value) } else { self.text(text) }
    }

    /// A waiting status as it is logged (at once when it changes).
    fn waiting(&mut self, status: &Waiting) {
        self.last_waiting = Some((status.clone(), self.ms()));
    }

    /// The host's wait as it goes on: in JSON, its figures again once a second while they grow
    /// (a late seat's lag), so a program sees how far behind a seat is before it is dropped.
    fn waiting_update(&mut self, status: Option<&Waiting>) {
        let now = self.ms();
        // Only the wait last logged is told again: a new one is the log's (it comes after the
        // host's loop watches, from the same pass).
        let due = match (status, &self.last_waiting) {
            (Some(s @ Waiting::Seat { seat, .. }), Some((last @ Waiting::Seat { seat: logged, .. }, at))) => {
                seat == logged && s != last && now.saturating_sub(*at) >= PROGRESS_EVERY_MS
            }
            _ => false,
        };
        if let Some(s) = status.filter(|_| due) {
            self.waiting(s);
            self.event(json::waiting(s));
        }
    }

    /// The turns played: the bar's position; in JSON a `progress` event at most once a second.
    fn progress(&mut self, turn: u32, fields: impl FnOnce() -> Value) {
        self.bar.set_position(u64::from(turn));
        let now = self.ms();
        // The first call starts the count: the first event comes a second into the game, after
        // the events of its start.
        let (at, last) = *self.last_progress.get_or_insert((now, turn));
        let due = turn != last && now.saturating_sub(at) >= PROGRESS_EVERY_MS;
        if self.json && due {
            self.last_progress = Some((now, turn));
            let mut value = fields();
            value["event"] = Value::from("progress");
            value["turn"] = Value::from(turn);
            self.event(value);
        }
    }
}

/// The game's result by its rules (winner, scores, each player's record), as `phalanx run`
/// prints it: a text line each, or one `result` event; nothing for a world without rules.
fn result(lines: &mut Lines<'_>, world: &sim::World, rulesets: &Rulesets) {
    let Some(rules) = rulesets.of_world(world) else { return };
    let summary = rules.summary(world);
    if summary.is_empty() {
        return;
    }
    if lines.json {
        lines.event(json!({"event": "result", "rules": rules.name(), "lines": summary}));
    } else {
        lines.text("result:");
        for line in &summary {
            lines.text(&format!("  {line}"));
        }
    }
}

/// The traffic as JSON fields.
fn traffic_json(traffic: session::Traffic) -> Value {
    json!({"sent": traffic.sent, "received": traffic.received})
}

fn parse_token(text: &str) -> Result<Token, String> {
    let text = text.trim();
    let bytes: Option<Vec<u8>> =
        (0..text.len()).step_by(2).map(|k| text.get(k..k + 2).and_then(|h| u8::from_str_radix(h, 16).ok())).collect();
    bytes.and_then(|b| b.try_into().ok()).ok_or_else(|| format!("a token is {} hexadecimal digits, found {text:?}", TOKEN_BYTES * 2))
}

/// The files a host reads and writes besides the scenario.
struct Files<'a> {
    token_file: Option<&'a Path>,
    record: Option<&'a Path>,
    report: &'a Path,
}

#[allow(clippy::too_many_arguments)]
fn host(
    path: &Path,
    listen: &str,
    players: u8,
    turns: Option<u32>,
    turn_ms: u32,
    delay: &str,
    files: &Files<'_>,
    bot_seats: &[u8],
    resync: bool,
    rulesets: &Rulesets,
    lines: &mut Lines<'_>,
) -> Result<i32, String> {
    let (token_file, record, report_dir) = (files.token_file, files.record, files.report);
    let scenario = Scenario::load_with(path, rulesets).map_err(|e| e.to_string())?;
    if let Some(seat) = bot_seats.iter().find(|&&s| s == 0 || s > players) {
        return Err(format!("--bot-seat {seat}: the seats are 1 to {players}"));
    }
    let delay = match delay {
        "auto" => Delay::Auto,
        n => Delay::Fixed(n.parse().map_err(|_| format!("--delay: expected auto or a number of turns, found {n:?}"))?),
    };
    let tokens = match token_file {
        Some(f) => {
            let size = std::fs::metadata(f).map_err(|e| format!("{}: {e}", f.display()))?.len();
            if size > MAX_TOKEN_FILE {
                return Err(format!(
                    "{}: {size} bytes; a token file holds one 32-digit token a line, at most {MAX_TOKEN_FILE} bytes",
                    f.display()
                ));
            }
            let text = std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
            let tokens = text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
                .map(|(k, l)| parse_token(l).map_err(|e| format!("{}:{}: {e}", f.display(), k + 1)))
                .collect::<Result<Vec<_>, _>>()?;
            if tokens.len() != usize::from(players) {
                return Err(format!("{}: {} tokens for {players} seats", f.display(), tokens.len()));
            }
            tokens
        }
        None => session::random_tokens(players).map_err(|e| e.to_string())?,
    };
    let config = HostConfig {
        tokens: tokens.clone(),
        turns: turns.unwrap_or(scenario.turns()),
        turn_ms,
        delay,
        drop_after_ms: 10_000,
        max_lead: 32,
        keyframe_every: KEYFRAME_EVERY,
    };
    let total = config.turns;
    let mut host = HostCore::new(&scenario, config).map_err(|e| e.to_string())?;
    host.set_resync(resync);
    if let Some(path) = record {
        // Streamed as turns close, each record flushed, so a host killed mid-game leaves a replay
        // that reads to its last whole turn, as `phalanx run --record` does.
        let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        host.stream_replay(Box::new(std::io::BufWriter::new(file))).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let listener = TcpListener::bind(listen).map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    lines.text(&format!("listening on {addr}"));
    let given: Option<Vec<String>> = token_file.is_none().then(|| tokens.iter().map(|t| hex(t)).collect());
    lines.event(json!({"event": "listening", "addr": addr.to_string(), "seats": players, "turns": total, "tokens": given}));
    if token_file.is_none() {
        for (k, t) in tokens.iter().enumerate() {
            lines.text(&format!("seat {} token {}", k + 1, hex(t)));
        }
    }
    let start = Instant::now();
    let clock = move || u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    // A seat the host plays is a client of its own, over loopback: it then goes through the same
    // protocol, checks and hash exchange as every other seat.
    let target = if addr.ip().is_unspecified() { SocketAddr::new(Ipv4Addr::LOCALHOST.into(), addr.port()) } else { addr };
    let bots: Vec<_> = bot_seats
        .iter()
        .map(|&seat| {
            let token = tokens[usize::from(seat - 1)];
            let rulesets = rulesets.clone();
            std::thread::spawn(move || {
                let socket = TcpStream::connect(target).map_err(|e| format!("bot seat {seat}: cannot reach {target}: {e}"))?;
                let mut client = ClientCore::new(seat, token).with_rulesets(rulesets.clone());
                let mut bot = SeatBot::new(rulesets.clone(), client.player(), u64::from(seat));
                run_client(socket, &mut client, &mut bot, &clock, &mut |_| {}).map_err(|e| format!("bot seat {seat}: {e}"))
            })
        })
        .collect();
    lines.bar = progress(Some(total));
    let shared = RefCell::new(&mut *lines);
    let mut log = |e: &HostEvent| {
        let mut lines = shared.borrow_mut();
        if let HostEvent::Waiting(status) = e {
            lines.waiting(status);
        }
        lines.say(&e.to_string(), json::host_event(e));
    };
    let mut watch = |h: &HostCore<'_>| {
        let mut lines = shared.borrow_mut();
        lines.waiting_update(h.waiting());
        lines.progress(h.turns_closed(), || json!({"turns": h.turns(), "delay": h.delay()}));
    };
    run_host_watched(&listener, &mut host, &clock, &mut log, &mut watch).map_err(|e| e.to_string())?;
    lines.bar.finish_and_clear();
    for bot in bots {
        bot.join().map_err(|_| "a bot seat's thread panicked".to_owned())??;
    }
    let final_hash = host.hashes().last().copied().unwrap_or_default();
    let turns = u32::try_from(host.hashes().len()).unwrap_or(u32::MAX);
    result(lines, host.world(), rulesets);
    let traffic = host.traffic();
    lines.text(&traffic.line(turns));
    lines.text(&format!("turns {} final hash {}", host.hashes().len(), hex(&final_hash)));
    lines.event(json!({"event": "summary", "turns": turns, "final_hash": hex(&final_hash), "traffic": traffic_json(traffic)}));
    if let Some(report) = host.report() {
        report.write_to(report_dir).map_err(|e| format!("{}: {e}", report_dir.display()))?;
        for line in report.text().lines() {
            lines.text(line);
        }
        lines.text(&format!("desync report written to {}", report_dir.display()));
        let cases: Vec<Value> = report.cases.iter().map(|(seat, case)| json!({"seat": seat, "case": case_name(*case)})).collect();
        lines.event(json!({"event": "desync_report", "dir": report_dir.display().to_string(), "turn": report.turn, "cases": cases}));
    }
    let (how, code) = if host.deserted() {
        lines.text(&format!("every seat left: the game ended after {turns} turns (exit 3)"));
        ("deserted", 3)
    } else if host.in_sync() {
        ("in_sync", 0)
    } else {
        ("desync", 1)
    };
    lines.event(json!({"event": "end", "how": how, "exit": code, "turns": turns, "final_hash": hex(&final_hash)}));
    Ok(code)
}

/// A desync report's case as its JSON name.
fn case_name(case: session::Case) -> &'static str {
    use session::Case;
    match case {
        Case::FalseReport => "false_report",
        Case::Diverged => "diverged",
        Case::NoAnswer => "no_answer",
        Case::Unjudged => "unjudged",
    }
}

#[allow(clippy::too_many_arguments)]
fn join(
    addr: &str,
    seat: u8,
    token: &str,
    bot: bool,
    record: Option<&Path>,
    timeout_ms: u64,
    rulesets: &Rulesets,
    lines: &mut Lines<'_>,
) -> Result<i32, String> {
    let token = parse_token(token)?;
    let client = ClientCore::new(seat, token).with_rulesets(rulesets.clone()).with_host_timeout(timeout_ms);
    let mut brain: Box<dyn Brain> =
        if bot { Box::new(SeatBot::new(rulesets.clone(), client.player(), u64::from(seat))) } else { Box::new(Idle) };
    play(addr, client, brain.as_mut(), record, rulesets, lines)
}

/// Plays a hosted game as `client`, with `brain` (an observer's is idle): progress on a terminal,
/// one line per event, the client's own replay written to `record` if asked, then the summary.
fn play(
    addr: &str,
    client: ClientCore,
    brain: &mut dyn Brain,
    record: Option<&Path>,
    rulesets: &Rulesets,
    lines: &mut Lines<'_>,
) -> Result<i32, String> {
    let socket = TcpStream::connect(addr).map_err(|e| format!("cannot reach {addr}: {e}"))?;
    let mut client = if record.is_some() { client.with_record(KEYFRAME_EVERY) } else { client };
    let start = Instant::now();
    let clock = move || u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    lines.bar = progress(None);
    {
        // The brain's progress and the event log write to the same lines.
        let shared = RefCell::new(&mut *lines);
        let mut counted = Counted { brain, on_turn: |turns: u32| shared.borrow_mut().progress(turns, || json!({})) };
        let mut log = |e: &ClientEvent| shared.borrow_mut().say(&e.to_string(), json::client_event(e));
        run_client(socket, &mut client, &mut counted, &clock, &mut log).map_err(|e| e.to_string())?;
    }
    lines.bar.finish_and_clear();
    if let Some(path) = record {
        match client.finish_replay() {
            Some(bytes) => {
                std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
                lines.say(
                    &format!("replay written to {}", path.display()),
                    json!({"event": "replay_written", "path": path.display().to_string()}),
                );
            }
            None => lines.say(
                &format!("no replay written to {}: this client did not record the whole game", path.display()),
                json!({"event": "replay_not_written", "path": path.display().to_string()}),
            ),
        }
    }
    finish(&client, rulesets, lines)
}

/// The last line, `turns T final hash HEX`, and the exit code from the host's `End`; a client
/// the host refused prints only why (exit 2), one whose game ended otherwise than by the host's
/// `End` (kicked, host gone, host silent) prints why, then its summary (exit 3). In JSON the
/// last event is `end`, naming which of these it was.
fn finish(client: &ClientCore, rulesets: &Rulesets, lines: &mut Lines<'_>) -> Result<i32, String> {
    let (how, reason) = json::client_ending(client.ending());
    let final_hash = client.hashes().last().copied().unwrap_or_default();
    let turns = client.turns_stepped();
    if let Some(ending @ session::Ending::Refused { .. }) = client.ending() {
        lines.text(&ending.to_string());
        lines.event(json!({"event": "end", "how": how, "reason": reason, "exit": 2}));
        return Ok(2);
    }
    // The result of a game that ended; a client that left early has only a world part-way.
    if let Some(world) = client.world().filter(|_| client.ended().is_some()) {
        result(lines, world, rulesets);
    }
    let traffic = client.traffic();
    lines.text(&traffic.line(turns));
    let latency = client.order_latency();
    let player = client.seat() != session::OBSERVER_SEAT;
    if player {
        lines.text(&latency.to_string());
    }
    lines.text(&format!("turns {turns} final hash {}", hex(&final_hash)));
    let latency_json = (player && latency.count() > 0).then(|| {
        json!({"orders": latency.count(), "median_ms": latency.percentile(50), "p99_ms": latency.percentile(99), "max_ms": latency.percentile(100)})
    });
    lines.event(json!({
        "event": "summary", "turns": turns, "final_hash": hex(&final_hash), "traffic": traffic_json(traffic), "order_latency": latency_json,
    }));
    let code = match client.ended() {
        Some((_, true)) => 0,
        Some((_, false)) => 1,
        None => {
            let why = client.ending().map_or_else(|| "the game did not end".to_owned(), ToString::to_string);
            lines.text(&format!("the game did not end: {why}"));
            3
        }
    };
    lines.event(json!({"event": "end", "how": how, "reason": reason, "exit": code, "turns": turns, "final_hash": hex(&final_hash)}));
    Ok(code)
}

/// Progress on stderr when it is a terminal: a bar of the turns played for the host, a count for a
/// client (which is not told the game's length); hidden otherwise, where the event lines on stdout
/// and the summary are the whole report. Event lines are written with the bar suspended, so the
/// two never mix on one terminal.
fn progress(turns: Option<u32>) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let (bar, template) = match turns {
        Some(n) => (ProgressBar::new(u64::from(n)), "{elapsed_precise} [{bar:40}] {pos}/{len} turns"),
        None => (ProgressBar::new_spinner(), "{elapsed_precise} {spinner} {pos} turns"),
    };
    bar.set_style(ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()));
    bar
}

/// A seat's brain that also reports each turn played (for the progress count).
struct Counted<'a, F: FnMut(u32)> {
    brain: &'a mut dyn Brain,
    on_turn: F,
}

impl<F: FnMut(u32)> Brain for Counted<'_, F> {
    fn think(&mut self, world: &sim::World, report: &sim::TurnReport) -> Vec<session::Order> {
        (self.on_turn)(report.turn + 1);
        self.brain.think(world, report)
    }

    fn before_step(&mut self, world: &mut sim::World, turn: u32) {
        self.brain.before_step(world, turn);
    }
}
