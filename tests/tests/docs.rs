//! The documentation's command outputs cannot drift: every `$ …` command of every ```` ```console ````
//! block in `README.md`, `docs/getting-started.md`, `docs/game-rules.md` and
//! `docs/desync-walkthrough.md` ([`PAGES`]) is run, and the hashes, counts and exit codes it
//! prints must be the ones the page shows; on the walkthrough, every word too.
//!
//! When the programs' output changes on purpose (a new hash, a renamed component), regenerate the
//! pages from what they print now:
//!
//! ```text
//! PHALANX_DOCS_PRINT=docs/desync-walkthrough.md cargo test -p phalanx-tests --test docs -- --nocapture every_console
//! ```
//!
//! `PHALANX_DOCS_PRINT=PAGE` runs only that page's commands (`all` runs every page) and prints each
//! command with its whole printed output as a console block, `matches` or `DIFFERS` above it, to
//! paste over the page's block (keep a `...` where the page elides lines). The test still fails on
//! every difference. `BENCHMARKS.md` is checked here too, by
//! `benchmarks_page_is_short_and_every_heading_cited_exists`.
//!
//! What a block may hold:
//! - `$ cargo run --release -p phalanx-cli -- ARGS`, `$ target/release/phalanx ARGS` and
//!   `$ phalanx ARGS` run the command line with ARGS, in-process through `phalanx_cli::Program`,
//!   as the binary's `main` does; `aura` (and `-p phalanx-example-aura`) the aura example's
//!   program, which `docs/game-rules.md` walks through; `cargo run --release -p phalanx-examples
//!   --example game_loop -- ARGS` the two-peer game's command line (`phalanx_examples::cli`), with
//!   `World::plant_desync` as its planted fault, as the example's `main` has it. Arguments are
//!   split at spaces; no quoting, pipes or redirections.
//! - `$ echo $?` prints the exit code of the command before it. Without it, a command must exit 0.
//! - `$ cargo test …` is not run (it would run this test again); its output is not checked.
//! - Output lines follow their command; a line `...` stands for any number of lines.
//!
//! How a shown line is compared with a printed one (line by line, stdout then stderr): only the
//! *checked values* of the two lines must be equal, in order, so wording may change freely.
//! The checked values are every hex string of 8 or more hex digits with at least one digit (a shown
//! hex string ending in `…` matches any printed one that starts with it) and every decimal number,
//! except the one rule for what varies by machine: a number followed by `ms`, `s`, `bytes`, `x`, `%` or
//! `turns/s` is a timing, a share of one or a size and is exempt, and so is the `(turn N)` that follows such a
//! number (the slowest turn). On a page compared by [`Compare::Lines`] the rest of the line (its
//! words, names and punctuation) must be equal too, so a renamed component or field shows.
//!
//! The commands run in a temporary folder, so files they write with relative paths land there; a
//! shown `/tmp/` path is moved into that folder, an argument naming a file of the repository is
//! made absolute, and both are mapped back in the output.

use std::path::PathBuf;

/// The pages whose console blocks are run, and how their lines are compared.
const PAGES: [(&str, Compare); 4] = [
    ("README.md", Compare::Values),
    ("docs/getting-started.md", Compare::Values),
    ("docs/game-rules.md", Compare::Values),
    // Its point is the names: which components, entities and fields differ.
    ("docs/desync-walkthrough.md", Compare::Lines),
];

/// How a shown output line is compared with a printed one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compare {
    /// Only the checked values (hashes, counts), in order: the wording may change freely.
    Values,
    /// The checked values and every other character, but for exempt timings and sizes.
    Lines,
}

/// The environment variable of the regeneration mode (module documentation).
const PRINT_VAR: &str = "PHALANX_DOCS_PRINT";

/// One checked value of an output line.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Value {
    /// A hex string, with whether the page abbreviated it with `…`.
    Hex(String, bool),
    /// A decimal number as written.
    Number(String),
}

impl Value {
    /// Whether a shown value accepts a printed one.
    fn accepts(&self, printed: &Value) -> bool {
        match (self, printed) {
            (Value::Hex(shown, true), Value::Hex(got, _)) => got.starts_with(shown.as_str()),
            (shown, got) => shown == got,
        }
    }
}

/// Units that mark a number as a timing or a size, which vary by machine and run.
const EXEMPT_UNITS: [&str; 6] = ["turns/s", "bytes", "ms", "s", "x", "%"];

/// The checked values of one output line, by the rule of the module documentation.
fn checked_values(line: &str) -> Vec<Value> {
    scan(line).0
}

/// The checked values of one output line and its skeleton: the line with each checked value
/// replaced by `{}` and each exempt number by `#`, which [`Compare::Lines`] compares too.
fn scan(line: &str) -> (Vec<Value>, String) {
    let chars: Vec<char> = line.chars().collect();
    let is_word = |i: usize| chars.get(i).is_some_and(char::is_ascii_alphanumeric);
    let text_from = |i: usize| chars[i.min(chars.len())..].iter().collect::<String>();
    let mut values = Vec::new();
    let mut skeleton = String::new();
    // Set after an exempt number whose unit is followed by ` (turn `: the next number is exempt too.
    let mut slowest_turn_next = false;
    let mut i = 0;
    while i < chars.len() {
        let starts_word = i == 0 || !is_word(i - 1);
        let run_end = (i..chars.len()).find(|&j| !matches!(chars[j], '0'..='9' | 'a'..='f')).unwrap_or(chars.len());
        let run = &chars[i..run_end];
        let has_digit = run.iter().any(char::is_ascii_digit);
        let has_letter = run.iter().any(char::is_ascii_lowercase);
        let abbreviated = chars.get(run_end) == Some(&'…');
        if starts_word && run.len() >= 8 && !is_word(run_end) && has_digit && (has_letter || abbreviated) {
            values.push(Value::Hex(run.iter().collect(), abbreviated));
            skeleton.push_str("{}");
            i = run_end + usize::from(abbreviated);
            continue;
        }
        if !chars[i].is_ascii_digit() {
            skeleton.push(chars[i]);
            i += 1;
            continue;
        }
        let mut end = i;
        while is_digit(chars.get(end)) {
            end += 1;
        }
        if chars.get(end) == Some(&'.') && is_digit(chars.get(end + 1)) {
            end += 1;
            while is_digit(chars.get(end)) {
                end += 1;
            }
        }
        let rest = text_from(end);
        let after_space = rest.strip_prefix(' ').unwrap_or(&rest);
        let unit = EXEMPT_UNITS.iter().find(|unit| {
            after_space.strip_prefix(*unit).is_some_and(|tail| !tail.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '/'))
        });
        if let Some(unit) = unit {
            slowest_turn_next = after_space[unit.len()..].starts_with(" (turn ");
            skeleton.push('#');
        } else if slowest_turn_next && chars[..i].ends_with(&['(', 't', 'u', 'r', 'n', ' ']) {
            slowest_turn_next = false;
            skeleton.push('#');
        } else {
            slowest_turn_next = false;
            values.push(Value::Number(chars[i..end].iter().collect()));
            skeleton.push_str("{}");
        }
        i = end;
    }
    (values, skeleton.trim_end().to_owned())
}

fn is_digit(c: Option<&char>) -> bool {
    c.is_some_and(char::is_ascii_digit)
}

/// One `$` command of a console block and the output the page shows for it.
#[derive(Debug)]
struct Shown {
    /// The page and the 1-based line of the command, for messages.
    place: String,
    /// The command after `$ `.
    command: String,
    /// The shown output lines, `...` included.
    output: Vec<(usize, String)>,
}

/// The commands of every console block of a page, in order.
fn console_commands(page: &str, text: &str) -> Vec<Shown> {
    let mut commands = Vec::new();
    let mut in_block = false;
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_end();
        if !in_block {
            in_block = trimmed == "```console";
            continue;
        }
        if trimmed.starts_with("```") {
            in_block = false;
        } else if let Some(command) = trimmed.strip_prefix("$ ") {
            commands.push(Shown { place: format!("{page}:{}", n + 1), command: command.to_owned(), output: Vec::new() });
        } else {
            let last = commands.last_mut().unwrap_or_else(|| panic!("{page}:{}: a console block must start with a `$ ` command", n + 1));
            last.output.push((n + 1, trimmed.to_owned()));
        }
    }
    assert!(!in_block, "{page}: a console block is not closed");
    commands
}

/// How a shown command is run.
#[derive(Debug, PartialEq, Eq)]
enum Action {
    /// A program's command line with these arguments.
    Run(Program, Vec<String>),
    /// `echo $?`.
    ExitCode,
    /// `cargo test …`: not run.
    NotRun,
}

/// Which program a command runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Program {
    /// The stock `phalanx` (`phalanx_cli::Program::new()`), what its `main` runs.
    Stock,
    /// The aura example's program (`examples/aura/src/main.rs`), what its `main` runs.
    Aura,
    /// The two-peer game's command line (`phalanx_examples::cli::game_loop`), as the
    /// `game_loop` example's `main` runs it.
    GameLoop,
}

/// Classifies a shown command; an error names what this test cannot run.
fn action(command: &str) -> Result<Action, String> {
    let words: Vec<&str> = command.split_whitespace().collect();
    if words.starts_with(&["cargo", "test"]) {
        return Ok(Action::NotRun);
    }
    if words == ["echo", "$?"] {
        return Ok(Action::ExitCode);
    }
    if let Some(bad) = command.chars().find(|c| "|;&<>'\"`$\\*?".contains(*c)) {
        return Err(format!("the docs test does not run shell syntax (`{bad}`)"));
    }
    let stock = words
        .strip_prefix(&["cargo", "run", "--release", "-p", "phalanx-cli", "--"][..])
        .or_else(|| words.strip_prefix(&["target/release/phalanx"][..]))
        .or_else(|| words.strip_prefix(&["phalanx"][..]));
    let aura = words
        .strip_prefix(&["cargo", "run", "--release", "-p", "phalanx-example-aura", "--"][..])
        .or_else(|| words.strip_prefix(&["target/release/aura"][..]))
        .or_else(|| words.strip_prefix(&["aura"][..]));
    let game_loop = words.strip_prefix(&["cargo", "run", "--release", "-p", "phalanx-examples", "--example", "game_loop", "--"][..]);
    let (program, args) = match (stock, aura, game_loop) {
        (Some(args), _, _) => (Program::Stock, args),
        (None, Some(args), _) => (Program::Aura, args),
        (None, None, Some(args)) => (Program::GameLoop, args),
        (None, None, None) => {
            return Err("the docs test runs only `phalanx`, `target/release/phalanx`, `cargo run --release -p phalanx-cli --`, \
                        the same of the aura example's program (`aura`, `-p phalanx-example-aura`), `cargo run --release -p \
                        phalanx-examples --example game_loop --`, `echo $?` and (without running it) `cargo test`"
                .to_owned());
        }
    };
    Ok(Action::Run(program, args.iter().map(|&a| a.to_owned()).collect()))
}

/// Where the commands run: shown `/tmp/` paths and relative output paths go into `dir`.
struct Sandbox {
    root: PathBuf,
    dir: PathBuf,
}

impl Sandbox {
    /// The argument as the command sees it.
    fn arg(&self, arg: &str) -> String {
        if let Some(rest) = arg.strip_prefix("/tmp/") {
            return self.dir.join(rest).display().to_string();
        }
        let in_repo = self.root.join(arg);
        if !arg.starts_with('-') && !arg.is_empty() && in_repo.exists() { in_repo.display().to_string() } else { arg.to_owned() }
    }

    /// The printed text with the sandbox's paths mapped back to the ones the page shows.
    fn unmap(&self, text: &str) -> String {
        text.replace(&format!("{}/", self.dir.display()), "/tmp/").replace(&format!("{}/", self.root.display()), "")
    }
}

/// Matches the shown lines (with `...`) against the printed ones; an error shows both.
fn compare(shown: &Shown, printed: &[String], mode: Compare) -> Result<(), String> {
    // Whether shown lines match printed lines exactly; `...` takes any number of lines.
    fn matches(shown: &[(usize, String)], printed: &[String], mode: Compare) -> bool {
        let Some(((_, first), rest)) = shown.split_first() else {
            return printed.is_empty();
        };
        if first == "..." {
            return (0..=printed.len()).any(|skip| matches(rest, &printed[skip..], mode));
        }
        let Some((got, printed_rest)) = printed.split_first() else {
            return false;
        };
        let (want, want_skeleton) = scan(first);
        let (have, have_skeleton) = scan(got);
        want.len() == have.len()
            && want.iter().zip(&have).all(|(w, h)| w.accepts(h))
            && (mode == Compare::Values || want_skeleton == have_skeleton)
            && matches(rest, printed_rest, mode)
    }
    if matches(&shown.output, printed, mode) {
        return Ok(());
    }
    let what = match mode {
        Compare::Values => "hashes, counts or lines differ",
        Compare::Lines => "hashes, counts, words or lines differ",
    };
    Err(format!(
        "{}: `{}`: the shown output does not match what the program printed ({what}):\n--- shown\n{}\n--- printed\n{}",
        shown.place,
        shown.command,
        shown.output.iter().map(|(_, l)| l.as_str()).collect::<Vec<_>>().join("\n"),
        printed.join("\n")
    ))
}

#[test]
fn every_console_command_of_the_docs_prints_what_the_docs_show() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().unwrap();
    let dir = std::env::temp_dir().join(format!("phalanx-docs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // `phalanx demo` writes `phalanx-demo/` relative to the working directory; this is the only
    // test of this binary that runs commands, so changing the directory affects nothing else.
    std::env::set_current_dir(&dir).unwrap();
    let sandbox = Sandbox { root: root.clone(), dir: dir.clone() };

    // The regeneration mode: one page (or `all`), each command printed with its whole output.
    let print = std::env::var(PRINT_VAR).ok().filter(|v| !v.is_empty());
    if let Some(page) = print.as_deref().filter(|&p| p != "all") {
        assert!(PAGES.iter().any(|(p, _)| *p == page), "{PRINT_VAR}={page}: not one of the pages {PAGES:?} (or `all`)");
    }
    let mut failures = Vec::new();
    let mut ran = 0;
    for (page, mode) in PAGES {
        if print.as_deref().is_some_and(|p| p != "all" && p != page) {
            continue;
        }
        let text = std::fs::read_to_string(root.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        let commands = console_commands(page, &text);
        let mut last_exit: Option<(i32, String)> = None;
        for (k, shown) in commands.iter().enumerate() {
            let action = match action(&shown.command) {
                Ok(action) => action,
                Err(e) => {
                    failures.push(format!("{}: `{}`: {e}", shown.place, shown.command));
                    continue;
                }
            };
            let printed = match action {
                Action::NotRun => continue,
                Action::ExitCode => {
                    let Some((code, _)) = last_exit.take() else {
                        failures.push(format!("{}: `echo $?` does not follow a command", shown.place));
                        continue;
                    };
                    vec![code.to_string()]
                }
                Action::Run(program, args) => {
                    let args: Vec<String> = args.iter().map(|a| sandbox.arg(a)).collect();
                    let (mut out, mut err) = (Vec::new(), Vec::new());
                    let code = match program {
                        Program::Stock => {
                            phalanx_cli::Program::new().run_with(std::iter::once("phalanx".to_owned()).chain(args), &mut out, &mut err)
                        }
                        Program::Aura => phalanx_cli::Program::new().named("aura").ruleset(aura::ruleset()).run_with(
                            std::iter::once("aura".to_owned()).chain(args),
                            &mut out,
                            &mut err,
                        ),
                        Program::GameLoop => i32::from(phalanx_examples::cli::game_loop(&args, &mut out, &mut err, &mut |world, unit| {
                            world.plant_desync(unit)
                        })),
                    };
                    ran += 1;
                    let text = sandbox.unmap(&(String::from_utf8_lossy(&out).into_owned() + &String::from_utf8_lossy(&err)));
                    let shows_exit = commands.get(k + 1).is_some_and(|next| next.command == "echo $?");
                    if !shows_exit && code != 0 {
                        failures.push(format!(
                            "{}: `{}` exited with {code}, and the page shows no `echo $?`:\n{text}",
                            shown.place, shown.command
                        ));
                    }
                    last_exit = Some((code, text.clone()));
                    text.lines().map(str::to_owned).collect()
                }
            };
            let result = compare(shown, &printed, mode);
            if print.is_some() {
                let verdict = if result.is_ok() { "matches" } else { "DIFFERS" };
                eprintln!("{}: {verdict}\n```console\n$ {}\n{}\n```\n", shown.place, shown.command, printed.join("\n"));
            }
            if let Err(e) = result {
                failures.push(e);
            }
        }
    }
    let _ = std::env::set_current_dir(&root);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(ran >= 5, "the pages show at least the demo, run, verify, render and view commands; ran {ran}");
}

#[test]
fn checked_values_follow_the_documented_rule() {
    let values = |line: &str| checked_values(line);
    let n = |s: &str| Value::Number(s.to_owned());
    let h = |s: &str, short: bool| Value::Hex(s.to_owned(), short);
    // Counts and hashes are checked; a 16-digit abbreviation is a hex string like any other.
    assert_eq!(
        values("scenario skirmish: 150 turns, 58 units; final hash fd26f15dc0c17a77"),
        [n("150"), n("58"), h("fd26f15dc0c17a77", false)]
    );
    // Timings, sizes and ratios are exempt, and so is the slowest turn after a timing.
    assert_eq!(values("time per turn: median 1.49 ms, slowest 108.98 ms (turn 6); 134x faster than real time"), []);
    assert_eq!(values("phases of the turn: paths 41.5% (0.20 ms median, 3.10 ms slowest)"), []);
    assert_eq!(
        values("replay: phalanx-demo/demo.replay (4762473 bytes), 300 turns re-simulated in 1.12 s, 6 keyframes"),
        [n("300"), n("6")]
    );
    assert_eq!(values("final hash d958b94dd9fb3042, 6160 turns/s"), [h("d958b94dd9fb3042", false)]);
    // Dimensions are not ratios: `x` followed by a digit keeps both numbers.
    assert_eq!(values("turn 60, 64 units, 128x128 navcells at 4 px each"), [n("60"), n("64"), n("128"), n("128"), n("4")]);
    // A shown `…` abbreviates a hex string; words made of hex letters alone are not hex strings.
    assert_eq!(values("final hash: 909e50bb… (deadbeefcafe)"), [h("909e50bb", true)]);
    assert!(h("909e50bb", true).accepts(&h("909e50bba1e91f8a", false)));
    assert!(!h("909e50bb", false).accepts(&h("909e50bba1e91f8a", false)));
    // Entity ids and decimals keep their digits.
    assert_eq!(values("move 48v0 → (512.5, 300)"), [n("48"), n("0"), n("512.5"), n("300")]);
}

#[test]
fn console_blocks_are_parsed_into_commands_and_output() {
    let text = "intro\n```console\n$ phalanx verify /tmp/s.replay\nline one\n...\n$ echo $?\n0\n```\n```sh\n$ not console\n```\n";
    let commands = console_commands("page.md", text);
    assert_eq!(commands.len(), 2);
    assert_eq!(commands[0].place, "page.md:3");
    assert_eq!(commands[0].output, [(4, "line one".to_owned()), (5, "...".to_owned())]);
    assert_eq!(action(&commands[0].command), Ok(Action::Run(Program::Stock, vec!["verify".to_owned(), "/tmp/s.replay".to_owned()])));
    assert_eq!(action(&commands[1].command), Ok(Action::ExitCode));
    assert_eq!(action("cargo test --workspace"), Ok(Action::NotRun));
    assert_eq!(action("cargo run --release -p phalanx-cli -- demo"), Ok(Action::Run(Program::Stock, vec!["demo".to_owned()])));
    assert!(action("phalanx verify a.replay | tail -n 1").is_err());
    assert!(action("ls /tmp").is_err());
    assert_eq!(action("aura run x.json"), Ok(Action::Run(Program::Aura, vec!["run".to_owned(), "x.json".to_owned()])));
    assert_eq!(
        action("cargo run --release -p phalanx-examples --example game_loop -- --desync-at 30"),
        Ok(Action::Run(Program::GameLoop, vec!["--desync-at".to_owned(), "30".to_owned()]))
    );
}

#[test]
fn shown_output_with_an_ellipsis_matches_any_lines_in_between() {
    let shown = |lines: &[&str]| Shown {
        place: "page.md:1".to_owned(),
        command: "phalanx x".to_owned(),
        output: lines.iter().enumerate().map(|(k, l)| (k + 2, (*l).to_owned())).collect(),
    };
    let printed: Vec<String> = ["start 1", "noise 7", "noise 8", "end 2 in 0.5 s"].iter().map(|s| (*s).to_owned()).collect();
    assert!(compare(&shown(&["begin 1", "...", "finish 2 in 9.9 s"]), &printed, Compare::Values).is_ok());
    assert!(compare(&shown(&["start 1", "...", "end 3"]), &printed, Compare::Values).is_err());
    assert!(compare(&shown(&["start 1", "end 2"]), &printed, Compare::Values).is_err());
    assert!(compare(&shown(&["start 1", "noise 7", "noise 8", "end 2"]), &printed, Compare::Values).is_ok());
    // Compared by lines, the words count too, but timings and the `...` still vary freely.
    assert!(compare(&shown(&["begin 1", "...", "finish 2 in 9.9 s"]), &printed, Compare::Lines).is_err());
    assert!(compare(&shown(&["start 1", "...", "end 2 in 7.25 s"]), &printed, Compare::Lines).is_ok());
}

#[test]
fn a_page_compared_by_lines_sees_renamed_components_but_not_timings() {
    let shown = |line: &str| Shown { place: "page.md:1".to_owned(), command: "phalanx x".to_owned(), output: vec![(2, line.to_owned())] };
    let printed = ["    skirmish.units unit 0v0 pos.x: 58.96 | 58.97, 6160 turns/s, hash d958b94dd9fb3042".to_owned()];
    let renamed = shown("    units unit 0v0 pos.x: 58.96 | 58.97, 6160 turns/s, hash d958b94dd9fb3042");
    assert!(compare(&renamed, &printed, Compare::Values).is_ok());
    assert!(compare(&renamed, &printed, Compare::Lines).is_err());
    let same = shown("    skirmish.units unit 0v0 pos.x: 58.96 | 58.97, 15361 turns/s, hash d958b94d…");
    assert!(compare(&same, &printed, Compare::Lines).is_ok());
    let other_hash = shown("    skirmish.units unit 0v0 pos.x: 58.96 | 58.97, 6160 turns/s, hash a11202ee…");
    assert!(compare(&other_hash, &printed, Compare::Lines).is_err());
    assert_eq!(scan("median 1.49 ms (turn 6), 3 units").1, "median # ms (turn #), {} units");
}

/// Most bytes `BENCHMARKS.md` may hold: one page of today's figures (STYLE.md, "BENCHMARKS.md
/// holds today's figures, not their history"); earlier figures go to `docs/benchmark-history.md`.
const BENCHMARKS_MAX_BYTES: usize = 24 * 1024;

/// The benchmark pages other files cite by heading, and the name a citation uses for each.
const BENCHMARK_PAGES: [(&str, &str); 2] = [("BENCHMARKS.md", "BENCHMARKS.md"), ("docs/benchmark-history.md", "benchmark-history.md")];

/// How a file names a heading of a benchmark page.
#[derive(Debug, PartialEq, Eq)]
enum Citation {
    /// A link to an anchor, `BENCHMARKS.md#replays-keyframes`.
    Anchor(String),
    /// A heading in quotes after the file name, `BENCHMARKS.md, "Bot game"` (also with the name in
    /// backquotes and without the comma); the heading starts with the quoted text.
    Title(String),
}

/// Every citation of a heading of the page called `name` in `text`. A quote may start on the
/// next line of a comment (`//! "Bot game"`).
fn citations(name: &str, text: &str) -> Vec<Citation> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices(name) {
        // `docs/benchmark-history.md` is not a citation of `BENCHMARKS.md` and the reverse.
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            continue;
        }
        let rest = &text[at + name.len()..];
        if let Some(anchor) = rest.strip_prefix('#') {
            let end = anchor.find(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_')).unwrap_or(anchor.len());
            found.push(Citation::Anchor(anchor[..end].to_owned()));
            continue;
        }
        let rest = rest.strip_prefix('`').unwrap_or(rest);
        let rest = rest.strip_prefix(',').unwrap_or(rest);
        let rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '/' || c == '!');
        // A heading is one line starting with a letter or digit; anything else after a quote is
        // code (`"BENCHMARKS.md")`), not a citation.
        if let Some(quoted) = rest.strip_prefix('"')
            && let Some(end) = quoted.find('"')
            && quoted.starts_with(char::is_alphanumeric)
            && !quoted[..end].contains('\n')
        {
            found.push(Citation::Title(quoted[..end].to_owned()));
        }
    }
    found
}

/// The headings of a Markdown page, outside code blocks, without their `#`s.
fn headings(text: &str) -> Vec<String> {
    let mut in_code = false;
    let mut found = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        } else if !in_code && line.starts_with('#') {
            let title = line.trim_start_matches('#');
            if title.starts_with(' ') {
                found.push(title.trim().to_owned());
            }
        }
    }
    found
}

/// A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens.
fn anchor_of(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect::<String>()
        .to_lowercase()
}

/// Whether a citation names one of the headings: its anchor, or a heading that is the quoted text
/// or starts with it and goes on with `:` or ` (`.
fn names_a_heading(citation: &Citation, headings: &[String]) -> bool {
    match citation {
        Citation::Anchor(anchor) => headings.iter().any(|h| anchor_of(h) == *anchor),
        Citation::Title(title) => headings
            .iter()
            .any(|h| h.strip_prefix(title.as_str()).is_some_and(|tail| tail.is_empty() || tail.starts_with(':') || tail.starts_with(" ("))),
    }
}

/// The repository's text files that may cite a benchmark page: `.md`, `.rs`, `.toml` and `.sh`,
/// outside build output, version control and cloned peers.
fn cited_from(dir: &std::path::Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !(name.starts_with('.') || name == "target" || name.ends_with("-src")) {
                cited_from(&path, files);
            }
        } else if [".md", ".rs", ".toml", ".sh"].iter().any(|ext| name.ends_with(ext)) {
            files.push(path);
        }
    }
}

#[test]
fn benchmarks_page_is_short_and_every_heading_cited_exists() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().unwrap();
    let size = std::fs::metadata(root.join("BENCHMARKS.md")).unwrap().len();
    assert!(
        size <= BENCHMARKS_MAX_BYTES as u64,
        "BENCHMARKS.md holds {size} bytes, more than {BENCHMARKS_MAX_BYTES}: it is one page of today's figures; move earlier \
         measurements and long tables to docs/benchmark-history.md"
    );
    let mut files = Vec::new();
    cited_from(&root, &mut files);
    files.sort();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (page, name) in BENCHMARK_PAGES {
        let page_headings = headings(&std::fs::read_to_string(root.join(page)).unwrap());
        for file in &files {
            let Ok(text) = std::fs::read_to_string(file) else { continue };
            for citation in citations(name, &text) {
                checked += 1;
                if !names_a_heading(&citation, &page_headings) {
                    let shown = file.strip_prefix(&root).unwrap_or(file).display();
                    failures.push(format!("{shown}: {citation:?} names no heading of {page}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The repository cites "Bot game", "Replays: keyframes", "Ten thousand units", "Networked
    // sessions", "Hash exchange" and more; finding none would mean the search is broken.
    assert!(checked >= 8, "found only {checked} citations of benchmark headings");
}

#[test]
fn benchmark_citations_are_found_and_checked_against_the_headings() {
    let text = "see BENCHMARKS.md, \"Bot game\" and (`BENCHMARKS.md`, \"Replays: keyframes\");\n\
                //! the (BENCHMARKS.md,\n//! \"Ten thousand units\") and [x](BENCHMARKS.md#networked-sessions-issue-23), \
                docs/benchmark-history.md, \"Old\", BENCHMARKS.md \"Gone\", BENCHMARKS.md alone, \
                join(\"BENCHMARKS.md\"), (\"BENCHMARKS.md\", \"x\")";
    let found = citations("BENCHMARKS.md", text);
    let title = |t: &str| Citation::Title(t.to_owned());
    assert_eq!(
        found,
        [
            title("Bot game"),
            title("Replays: keyframes"),
            title("Ten thousand units"),
            Citation::Anchor("networked-sessions-issue-23".to_owned()),
            title("Gone"),
        ]
    );
    assert_eq!(citations("benchmark-history.md", text), [title("Old")]);
    let page = "# Benchmarks\n## Bot game (1000 units, game rules)\n```sh\n# not a heading\n```\n\
                ## Replays: keyframes\n## Ten thousand units: order latency\n## Networked sessions (issue 23)\n### Hash exchange\n";
    let page_headings = headings(page);
    assert_eq!(page_headings.len(), 6);
    let missing: Vec<&Citation> = found.iter().filter(|c| !names_a_heading(c, &page_headings)).collect();
    assert_eq!(missing, [&title("Gone")]);
    assert!(!names_a_heading(&title("Bot"), &page_headings), "a word of a heading is not the heading");
    assert!(!names_a_heading(&Citation::Anchor("networked-sessions".to_owned()), &page_headings));
    assert_eq!(anchor_of("String pulling against the any-angle optimum"), "string-pulling-against-the-any-angle-optimum");
}
