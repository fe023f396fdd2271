//! The documentation's command outputs cannot drift: every `$ …` command of every ```` ```console ````
//! block in `README.md`, `docs/getting-started.md` and `docs/game-rules.md` is run, and the hashes, counts and exit codes it
//! prints must be the ones the page shows.
//!
//! What a block may hold:
//! - `$ cargo run --release -p phalanx-cli -- ARGS`, `$ target/release/phalanx ARGS` and
//!   `$ phalanx ARGS` run the command line with ARGS, in-process through `phalanx_cli::Program`,
//!   as the binary's `main` does; `aura` (and `-p phalanx-example-aura`) the aura example's
//!   program, which `docs/game-rules.md` walks through. Arguments are split at spaces; no quoting, pipes or
//!   redirections.
//! - `$ echo $?` prints the exit code of the command before it. Without it, a command must exit 0.
//! - `$ cargo test …` is not run (it would run this test again); its output is not checked.
//! - Output lines follow their command; a line `...` stands for any number of lines.
//!
//! How a shown line is compared with a printed one (line by line, stdout then stderr): only the
//! *checked values* of the two lines must be equal, in order, so wording may change freely.
//! The checked values are every hex string of 8 or more hex digits with at least one digit (a shown
//! hex string ending in `…` matches any printed one that starts with it) and every decimal number,
//! except the one rule for what varies by machine: a number followed by `ms`, `s`, `bytes`, `x` or
//! `turns/s` is a timing or a size and is exempt, and so is the `(turn N)` that follows such a
//! number (the slowest turn).
//!
//! The commands run in a temporary folder, so files they write with relative paths land there; a
//! shown `/tmp/` path is moved into that folder, an argument naming a file of the repository is
//! made absolute, and both are mapped back in the output.

use std::path::PathBuf;

/// The pages whose console blocks are run.
const PAGES: [&str; 3] = ["README.md", "docs/getting-started.md", "docs/game-rules.md"];

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
const EXEMPT_UNITS: [&str; 5] = ["turns/s", "bytes", "ms", "s", "x"];

/// The checked values of one output line, by the rule of the module documentation.
fn checked_values(line: &str) -> Vec<Value> {
    let chars: Vec<char> = line.chars().collect();
    let is_word = |i: usize| chars.get(i).is_some_and(char::is_ascii_alphanumeric);
    let text_from = |i: usize| chars[i.min(chars.len())..].iter().collect::<String>();
    let mut values = Vec::new();
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
            i = run_end + usize::from(abbreviated);
            continue;
        }
        if !chars[i].is_ascii_digit() {
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
        } else if slowest_turn_next && chars[..i].ends_with(&['(', 't', 'u', 'r', 'n', ' ']) {
            slowest_turn_next = false;
        } else {
            slowest_turn_next = false;
            values.push(Value::Number(chars[i..end].iter().collect()));
        }
        i = end;
    }
    values
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
    let (program, args) = match (stock, aura) {
        (Some(args), _) => (Program::Stock, args),
        (None, Some(args)) => (Program::Aura, args),
        (None, None) => {
            return Err("the docs test runs only `phalanx`, `target/release/phalanx`, `cargo run --release -p phalanx-cli --`, \
                        the same of the aura example's program (`aura`, `-p phalanx-example-aura`), `echo $?` and (without \
                        running it) `cargo test`"
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
fn compare(shown: &Shown, printed: &[String]) -> Result<(), String> {
    // Whether shown lines match printed lines exactly; `...` takes any number of lines.
    fn matches(shown: &[(usize, String)], printed: &[String]) -> bool {
        let Some(((_, first), rest)) = shown.split_first() else {
            return printed.is_empty();
        };
        if first == "..." {
            return (0..=printed.len()).any(|skip| matches(rest, &printed[skip..]));
        }
        let Some((got, printed_rest)) = printed.split_first() else {
            return false;
        };
        let want = checked_values(first);
        let have = checked_values(got);
        want.len() == have.len() && want.iter().zip(&have).all(|(w, h)| w.accepts(h)) && matches(rest, printed_rest)
    }
    if matches(&shown.output, printed) {
        return Ok(());
    }
    Err(format!(
        "{}: `{}`: the shown output does not match what phalanx printed (hashes, counts or lines differ):\n--- shown\n{}\n--- printed\n{}",
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

    let mut failures = Vec::new();
    let mut ran = 0;
    for page in PAGES {
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
                    let (name, program) = match program {
                        Program::Stock => ("phalanx", phalanx_cli::Program::new()),
                        Program::Aura => ("aura", phalanx_cli::Program::new().named("aura").ruleset(aura::ruleset())),
                    };
                    let argv: Vec<String> = std::iter::once(name.to_owned()).chain(args.iter().map(|a| sandbox.arg(a))).collect();
                    let (mut out, mut err) = (Vec::new(), Vec::new());
                    let code = program.run_with(argv, &mut out, &mut err);
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
            if let Err(e) = compare(shown, &printed) {
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
}

#[test]
fn shown_output_with_an_ellipsis_matches_any_lines_in_between() {
    let shown = |lines: &[&str]| Shown {
        place: "page.md:1".to_owned(),
        command: "phalanx x".to_owned(),
        output: lines.iter().enumerate().map(|(k, l)| (k + 2, (*l).to_owned())).collect(),
    };
    let printed: Vec<String> = ["start 1", "noise 7", "noise 8", "end 2 in 0.5 s"].iter().map(|s| (*s).to_owned()).collect();
    assert!(compare(&shown(&["begin 1", "...", "finish 2 in 9.9 s"]), &printed).is_ok());
    assert!(compare(&shown(&["start 1", "...", "end 3"]), &printed).is_err());
    assert!(compare(&shown(&["start 1", "end 2"]), &printed).is_err());
    assert!(compare(&shown(&["start 1", "noise 7", "noise 8", "end 2"]), &printed).is_ok());
}
