//! The `phalanx` command line: every command of [`replay::cli`] (scenarios, replays, pictures,
//! pathfinding tools) and the network commands `host` and `join` of [`session::cli`].
//!
//! It is a crate of its own because the command line needs both: `session` depends on `replay`
//! (scenarios, replays, snapshot diffs), so neither can offer the other's commands.
//! [`run`] takes the arguments and two writers and returns the exit code, so tests drive it
//! without a process.
//!
//! ```
//! let (mut out, mut err) = (Vec::new(), Vec::new());
//! assert_eq!(phalanx::run(["phalanx", "--help"], &mut out, &mut err), 0);
//! let help = String::from_utf8(out).unwrap();
//! assert!(help.contains("verify") && help.contains("host") && help.contains("join"));
//! ```

#![forbid(unsafe_code)]

use std::io::Write;

use clap::{CommandFactory, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "phalanx", version, about = replay::cli::ABOUT)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The file commands first, as `replay` lists them, then the network commands.
#[derive(Debug, Subcommand)]
enum Command {
    #[command(flatten)]
    Files(replay::cli::Command),
    #[command(flatten)]
    Network(session::cli::Command),
}

/// Runs the command line with `args` (the program name first), writing to `out` and `err`;
/// returns the process exit code (each command's, and 2 for a usage error).
pub fn run<I, T>(args: I, out: &mut dyn Write, err: &mut dyn Write) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    match Cli::try_parse_from(args) {
        Ok(Cli { command: Command::Files(command) }) => replay::cli::execute(command, out, err),
        Ok(Cli { command: Command::Network(command) }) => session::cli::execute(command, out, err),
        Err(e) => replay::cli::parse_failure(&e, &Cli::command(), out, err),
    }
}
