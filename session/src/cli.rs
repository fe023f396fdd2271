//! The `phalanx-net` command line: `host` serves a scenario's game over TCP, `join` plays a seat
//! of it. Exit codes: 0 the game ended in sync, 1 a desync (after writing the report), 2 unusable
//! input, a port that cannot be bound or a host that cannot be reached.
//!
//! It is a program of its own, not a `phalanx` subcommand, because `phalanx` lives in `replay`,
//! which this crate depends on.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Parser, Subcommand};
use replay::scenario::Scenario;

use crate::client::{Brain, ClientCore, Idle};
use crate::host::{Delay, HostConfig, HostCore, hex};
use crate::mover::Mover;
use crate::protocol::{TOKEN_BYTES, Token};
use crate::tcp::{run_client, run_host};

/// Networked lockstep games of the Phalanx core.
#[derive(Debug, Parser)]
#[command(name = "phalanx-net", version, about = "Host or join a networked lockstep game of a Phalanx scenario")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
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
        /// After a desync (reported as without it), the differing seats load the host's world and
        /// the game goes on; the exit code is still 1.
        #[arg(long)]
        resync: bool,
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
        /// Lets a scripted mover play the seat (without it the seat stays idle).
        #[arg(long, conflicts_with = "observe")]
        bot: bool,
        /// Watches the game without a seat (no token needed), from whatever turn it is at.
        #[arg(long)]
        observe: bool,
    },
}

/// Runs the command line with `args` (the program name first), writing to `out` and `err`;
/// returns the exit code.
pub fn run<I, T>(args: I, out: &mut dyn Write, err: &mut dyn Write) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = write!(err, "{e}");
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let result = match cli.command {
        Command::Host { scenario, listen, players, turns, turn_ms, delay, token_file, record, report, resync } => {
            let files = Files { token_file: token_file.as_deref(), record: record.as_deref(), report: &report };
            host(&scenario, &listen, players, turns, turn_ms, &delay, &files, resync, out)
        }
        Command::Join { addr, seat, token, bot, observe } => match (seat, token, observe) {
            (Some(seat), Some(token), false) => join(&addr, seat, &token, bot, out),
            _ => observe_game(&addr, out),
        },
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            2
        }
    }
}

fn parse_token(text: &str) -> Result<Token, String> {
    let text = text.trim();
    let bytes: Option<Vec<u8>> =
        (0..text.len()).step_by(2).map(|k| text.get(k..k + 2).and_then(|h| u8::from_str_radix(h, 16).ok())).collect();
    bytes.and_then(|b| b.try_into().ok()).ok_or_else(|| format!("a token is {} hexadecimal digits, found {text:?}", TOKEN_BYTES * 2))
}

/// Fresh tokens from the operating system's random source.
fn random_tokens(n: u8) -> Result<Vec<Token>, String> {
    let mut bytes = vec![0u8; usize::from(n) * TOKEN_BYTES];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .map_err(|e| format!("/dev/urandom: {e}"))?;
    Ok(bytes.chunks(TOKEN_BYTES).map(|c| c.try_into().unwrap_or([0; TOKEN_BYTES])).collect())
}

/// The host's files: tokens in, replay and desync report out.
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
    resync: bool,
    out: &mut dyn Write,
) -> Result<i32, String> {
    let (token_file, record, report_dir) = (files.token_file, files.record, files.report);
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let scenario =
        Scenario::parse(&text, &path.display().to_string(), &mut |f| std::fs::read_to_string(dir.join(f)).map_err(|e| e.to_string()))
            .map_err(|e| e.to_string())?;
    let delay = match delay {
        "auto" => Delay::Auto,
        n => Delay::Fixed(n.parse().map_err(|_| format!("--delay: expected auto or a number of turns, found {n:?}"))?),
    };
    let tokens = match token_file {
        Some(f) => {
            let text = std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
            let tokens = text.lines().filter(|l| !l.trim().is_empty()).map(parse_token).collect::<Result<Vec<_>, _>>()?;
            if tokens.len() != usize::from(players) {
                return Err(format!("{}: {} tokens for {players} seats", f.display(), tokens.len()));
            }
            tokens
        }
        None => random_tokens(players)?,
    };
    let config = HostConfig {
        tokens: tokens.clone(),
        turns: turns.unwrap_or(scenario.turns()),
        turn_ms,
        delay,
        drop_after_ms: 10_000,
        max_lead: 32,
        keyframe_every: 50,
    };
    let mut host = HostCore::new(&scenario, config)?;
    host.set_resync(resync);
    let listener = TcpListener::bind(listen).map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let _ = writeln!(out, "listening on {addr}");
    if token_file.is_none() {
        for (k, t) in tokens.iter().enumerate() {
            let _ = writeln!(out, "seat {} token {}", k + 1, hex(t));
        }
    }
    let _ = out.flush();
    let start = Instant::now();
    let clock = move || u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    run_host(&listener, &mut host, &clock, &mut |e| {
        let _ = writeln!(out, "{e}");
        let _ = out.flush();
    })
    .map_err(|e| e.to_string())?;
    if let (Some(path), Some(bytes)) = (record, host.replay_bytes()) {
        std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let final_hash = host.hashes().last().copied().unwrap_or_default();
    let _ = writeln!(out, "turns {} final hash {}", host.hashes().len(), hex(&final_hash));
    if let Some(report) = host.report() {
        report.write_to(report_dir).map_err(|e| format!("{}: {e}", report_dir.display()))?;
        let _ = write!(out, "{}", report.text());
        let _ = writeln!(out, "desync report written to {}", report_dir.display());
        return Ok(1);
    }
    Ok(if host.in_sync() { 0 } else { 1 })
}

fn join(addr: &str, seat: u8, token: &str, bot: bool, out: &mut dyn Write) -> Result<i32, String> {
    let token = parse_token(token)?;
    let socket = TcpStream::connect(addr).map_err(|e| format!("cannot reach {addr}: {e}"))?;
    let mut client = ClientCore::new(seat, token);
    let mut brain: Box<dyn Brain> = if bot { Box::new(Mover::new(client.player(), u64::from(seat), 5, 16, 112)) } else { Box::new(Idle) };
    let start = Instant::now();
    let clock = move || u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    run_client(socket, &mut client, brain.as_mut(), &clock, &mut |e| {
        let _ = writeln!(out, "{e}");
        let _ = out.flush();
    })
    .map_err(|e| e.to_string())?;
    finish(&client, out)
}

/// Watches a hosted game as an observer; prints the same summary and final hash as a player.
fn observe_game(addr: &str, out: &mut dyn Write) -> Result<i32, String> {
    let socket = TcpStream::connect(addr).map_err(|e| format!("cannot reach {addr}: {e}"))?;
    let mut client = ClientCore::observer();
    let start = Instant::now();
    let clock = move || u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    run_client(socket, &mut client, &mut Idle, &clock, &mut |e| {
        let _ = writeln!(out, "{e}");
        let _ = out.flush();
    })
    .map_err(|e| e.to_string())?;
    finish(&client, out)
}

/// The last line, `turns T final hash HEX`, and the exit code from the host's `End`.
fn finish(client: &ClientCore, out: &mut dyn Write) -> Result<i32, String> {
    let final_hash = client.hashes().last().copied().unwrap_or_default();
    let _ = writeln!(out, "turns {} final hash {}", client.turns_stepped(), hex(&final_hash));
    match client.ended() {
        Some((_, true)) => Ok(0),
        Some((_, false)) => Ok(1),
        None => Err("the game did not end".to_owned()),
    }
}
