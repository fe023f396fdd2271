//! The `phalanx` program, and the library a studio builds the same program for its own game with.
//!
//! The program runs the file commands (`run`, `verify`, `diff`, `seek`, `render`, `view`, the
//! pathfinding tools, `demo`) and the network commands (`host`, `join`) over the games it knows.
//! Those are a [`Rulesets`] registry held by a [`Program`]: the stock `phalanx` knows the
//! reference game ([`skirmish`]); a game with rules of its own builds its own program in a main of
//! a few lines, and gets every command for its game, its fields named in every diff:
//!
//! ```no_run
//! # #[derive(Clone, Debug, Default)] struct MyGame;
//! # impl sim::rules::Rules for MyGame {
//! #     const NAME: &'static str = "mine"; const VERSION: u32 = 1;
//! #     type Unit = (); type Object = (); type Player = (); type State = (); type Command = (); type Event = (); type Reject = ();
//! #     fn new_unit(&self, _: &(), _: &sim::Unit) {}
//! #     fn check(&self, _: &sim::rules::View<'_, Self>, _: sim::PlayerId, _: &()) -> Result<(), ()> { Ok(()) }
//! #     fn apply(&self, _: &mut sim::rules::Ctx<'_, Self>, _: sim::PlayerId, _: &()) {}
//! #     fn step(&self, _: &mut sim::rules::Ctx<'_, Self>, _: &[sim::Event]) {}
//! # }
//! fn main() {
//!     phalanx_cli::Program::new().rules::<MyGame>().run()
//! }
//! ```
//!
//! `examples/aura` in the repository is such a program, with a tiny game of its own; its tests run
//! it as a user would. [`Program::run_with`] takes the arguments and two writers and returns the
//! exit code, so tests drive a program without a process:
//!
//! ```
//! let (mut out, mut err) = (Vec::new(), Vec::new());
//! assert_eq!(phalanx_cli::Program::new().run_with(["phalanx", "--help"], &mut out, &mut err), 0);
//! let help = String::from_utf8(out).unwrap();
//! assert!(help.contains("verify") && help.contains("host") && help.contains("join"));
//! ```
//!
//! This is the only crate that knows the command line, terminals (progress bars) and which games
//! exist; `replay` and `session` are libraries that take the registry as a value.

#![forbid(unsafe_code)]

use std::io::Write;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use replay::rules::{RulesOf, Ruleset, Rulesets};

pub mod demo;
pub mod files;
pub mod network;

#[derive(Debug, Parser)]
#[command(name = "phalanx", version, about = files::ABOUT)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The file commands first, then the network commands.
#[derive(Debug, Subcommand)]
enum Command {
    #[command(flatten)]
    Files(files::Command),
    #[command(flatten)]
    Network(network::Command),
}

/// The games the stock `phalanx` program knows: the reference game, with its bots and summary.
pub fn stock_rulesets() -> Rulesets {
    Rulesets::none().with(skirmish::tools::ruleset())
}

/// A `phalanx` program: the whole command line over the games it knows.
///
/// [`Program::new`] knows the reference game and plays the demo; [`Program::bare`] knows no game
/// (only worlds without game rules) and has no demo. Add a game with [`Program::rules`] (any
/// `sim::rules::Rules`) or [`Program::ruleset`] (a ruleset with bots or a summary); a later game of the
/// same name replaces an earlier one.
#[derive(Clone, Debug)]
pub struct Program {
    rulesets: Rulesets,
    demo: bool,
    name: &'static str,
}

impl Default for Program {
    fn default() -> Self {
        Self::new()
    }
}

impl Program {
    /// The stock program: the reference game and its demo.
    pub fn new() -> Self {
        Self { rulesets: stock_rulesets(), demo: true, name: "phalanx" }
    }

    /// A program that knows no game and has no demo.
    pub fn bare() -> Self {
        Self { rulesets: Rulesets::none(), demo: false, name: "phalanx" }
    }

    /// This program, also knowing the game `R` (built with `Default`, no bots, no summary).
    #[must_use]
    pub fn rules<R: sim::rules::Rules + Default>(self) -> Self {
        self.ruleset(RulesOf::<R>::new())
    }

    /// This program, also knowing `ruleset` (for example `RulesOf::<MyGame>::new().with_bots(..)`).
    #[must_use]
    pub fn ruleset(mut self, ruleset: impl Ruleset + 'static) -> Self {
        self.rulesets = self.rulesets.with(ruleset);
        self
    }

    /// This program, named `name` in its help and usage lines (its error lines still begin
    /// `phalanx:`, the command line's stable contract).
    #[must_use]
    pub fn named(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }

    /// The games this program knows.
    pub fn rulesets(&self) -> &Rulesets {
        &self.rulesets
    }

    /// Runs the program on the process's arguments, standard output and standard error, and exits
    /// with the command's exit code.
    pub fn run(&self) -> ! {
        // The handles lock per write, not for the whole run: a progress bar drawn on stderr from
        // another thread (indicatif, updated from the rayon workers of `verify`) must be able to
        // take the stderr lock while the command runs.
        let code = self.run_with(std::env::args_os(), &mut std::io::stdout(), &mut std::io::stderr());
        std::process::exit(code)
    }

    /// Runs the program with `args` (the program name first), writing to `out` and `err`; returns
    /// the process exit code (each command's, and 2 for a usage error).
    pub fn run_with<I, T>(&self, args: I, out: &mut dyn Write, err: &mut dyn Write) -> i32
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let mut command = Cli::command().name(self.name).bin_name(self.name);
        if !self.demo {
            command = command.mut_subcommand("demo", |c| c.hide(true));
        }
        let parsed = command.clone().try_get_matches_from(args).and_then(|m| Cli::from_arg_matches(&m));
        match parsed {
            Ok(Cli { command: Command::Files(c) }) => files::execute(c, &self.rulesets, self.demo, out, err),
            Ok(Cli { command: Command::Network(c) }) => network::execute(c, &self.rulesets, out, err),
            Err(e) => files::parse_failure(&e, &command, out, err),
        }
    }
}

/// Runs the stock program with `args`, writing to `out` and `err`; returns the exit code
/// (`Program::new().run_with(..)`).
pub fn run<I, T>(args: I, out: &mut dyn Write, err: &mut dyn Write) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    Program::new().run_with(args, out, err)
}
