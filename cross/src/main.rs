//! `phalanx-cross corpus DIR`: prints what the fuzz corpora's simulation and search inputs give on
//! this machine, one line per turn or search, so that `scripts/cross-check` can compare a build for
//! another target with the x86_64 build line for line.
//!
//! For each file of `DIR/command_stream/` (in name order) one line per turn: the file, the turn,
//! the state hash and a digest of the turn's events ([`phalanx_fuzz::command_stream_turns`], one
//! thread, so it runs on wasm32 too); for each file of `DIR/jps_vs_astar/` one line per search
//! (JPS, A*, JPS with landmarks, JPS+ with landmarks): status, nodes expanded and pushed, cost and
//! turning points ([`phalanx_fuzz::jps_vs_astar_searches`]). Every body's own checks run as well,
//! so an input that breaks an oracle on this target fails here (exit 101, the panic's message).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sim::state_hash::hex;

fn files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(format!("{}: no corpus files", dir.display()));
    }
    Ok(files)
}

fn name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
}

fn search_line(out: &mut String, file: &str, which: &str, answer: &(pathing::SearchOutcome, pathing::Path)) {
    let (outcome, path) = answer;
    let _ = write!(
        out,
        "jps_vs_astar/{file}\t{which}\t{:?}\texpanded {}\tpushed {}\tcost {}\t",
        outcome.status,
        outcome.expanded,
        outcome.pushed,
        path.cost()
    );
    for (k, cell) in path.waypoints().iter().enumerate() {
        let _ = write!(out, "{}{},{}", if k == 0 { "" } else { " " }, cell.i, cell.j);
    }
    out.push('\n');
}

fn corpus(dir: &Path) -> Result<(), String> {
    let mut stdout = std::io::stdout().lock();
    for path in files(&dir.join("command_stream"))? {
        let data = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let file = name(&path);
        let mut out = String::new();
        for (turn, (hash, events)) in phalanx_fuzz::command_stream_turns(&data).iter().enumerate() {
            let _ = writeln!(out, "command_stream/{file}\tturn {turn}\thash {}\tevents {}", hex(hash), hex(events));
        }
        stdout.write_all(out.as_bytes()).map_err(|e| format!("stdout: {e}"))?;
    }
    for path in files(&dir.join("jps_vs_astar"))? {
        let data = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let file = name(&path);
        let mut out = String::new();
        match phalanx_fuzz::jps_vs_astar_searches(&data) {
            None => {
                let _ = writeln!(out, "jps_vs_astar/{file}\tno search");
            }
            Some(answers) => {
                // The body's own checks against the A* oracle.
                phalanx_fuzz::jps_vs_astar(&data);
                search_line(&mut out, &file, "jps", &answers.jps);
                search_line(&mut out, &file, "astar", &answers.astar);
                search_line(&mut out, &file, "jps-lm", &answers.landmarks);
                search_line(&mut out, &file, "jps-plus-lm", &answers.plus_landmarks);
            }
        }
        stdout.write_all(out.as_bytes()).map_err(|e| format!("stdout: {e}"))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [command, dir] if command == "corpus" => match corpus(Path::new(dir)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("phalanx-cross: {e}");
                ExitCode::from(1)
            }
        },
        _ => {
            eprintln!("usage: phalanx-cross corpus DIR (DIR: the fuzz corpora, fuzz/corpus)");
            ExitCode::from(2)
        }
    }
}
