//! ARCHITECTURE.md is the code map, and this test keeps it true: every source file of every crate
//! is named in its crate's section, and every path the map names exists.
//!
//! The map's convention: a crate's section is headed `` ## `crate` `` and names its files relative
//! to that crate's source folder (`src/` for the library crates, the crate root for `tests` and
//! `fuzz` where files sit outside `src/`), in backticks (`world.rs`, `search/jps.rs`, `world/`).
//! A name that contains a `/` and exists from the repository root (`docs/decisions.md`) is fine in
//! any section. A folder's `mod.rs` and any `tests.rs` (unit tests split out of a big module) are
//! covered by the folder or module they belong to, so they need no line of their own.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Where each crate's map section resolves file names, and which folders hold files the map must
/// name (relative to the repository root).
const CRATES: &[(&str, &str, &[&str])] = &[
    ("pathing", "pathing/src", &["pathing/src"]),
    ("sim", "sim/src", &["sim/src"]),
    ("replay", "replay/src", &["replay/src"]),
    ("fuzz", "fuzz", &["fuzz/src"]),
    ("examples", "examples", &["examples/src", "examples/tests"]),
    ("tests", "tests", &["tests/src", "tests/tests"]),
];

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("readable entry").path();
        if path.is_dir() {
            files_under(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The map's sections: crate name → the backticked names in that section.
fn sections(map: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current = String::new();
    for line in map.lines() {
        if let Some(head) = line.strip_prefix("## ") {
            current = head.trim().trim_matches('`').to_string();
            continue;
        }
        let mut rest = line;
        while let Some(start) = rest.find('`') {
            let after = &rest[start + 1..];
            let Some(end) = after.find('`') else { break };
            out.entry(current.clone()).or_default().push(after[..end].to_string());
            rest = &after[end + 1..];
        }
    }
    out
}

/// Whether a backticked name is meant as a file or folder path (not a type or a command).
fn is_path(name: &str) -> bool {
    !name.contains(' ')
        && !name.contains("::")
        && (name.ends_with(".rs") || name.ends_with(".md") || name.ends_with(".html") || name.ends_with('/') || name.ends_with(".json"))
}

fn resolve(root: &Path, base: &str, name: &str) -> Option<PathBuf> {
    [root.join(base).join(name), root.join(name)].into_iter().find(|p| p.exists())
}

#[test]
fn every_path_the_map_names_exists() {
    let root = repo_root();
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md is readable");
    let sections = sections(&map);
    let mut missing = Vec::new();
    for (section, names) in &sections {
        let base = CRATES.iter().find(|(name, _, _)| name == section).map_or("", |(_, base, _)| *base);
        for name in names.iter().filter(|n| is_path(n)) {
            if resolve(&root, base, name).is_none() {
                missing.push(format!("section `{section}`: `{name}`"));
            }
        }
    }
    assert!(missing.is_empty(), "ARCHITECTURE.md names paths that do not exist:\n{}", missing.join("\n"));
}

#[test]
fn every_source_file_is_named_in_the_map() {
    let root = repo_root();
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md is readable");
    let sections = sections(&map);
    let mut unnamed = Vec::new();
    for (krate, base, folders) in CRATES {
        let names = sections.get(*krate).unwrap_or_else(|| panic!("ARCHITECTURE.md has no section for `{krate}`"));
        let named: Vec<PathBuf> = names.iter().filter(|n| is_path(n)).filter_map(|n| resolve(&root, base, n)).collect();
        let mut files = Vec::new();
        for folder in *folders {
            files_under(&root.join(folder), &mut files);
        }
        for file in files {
            let covered_by_parent = matches!(file.file_name().and_then(|n| n.to_str()), Some("mod.rs" | "tests.rs" | "lib.rs" | "main.rs"));
            let is_named = named.iter().any(|n| *n == file || (n.is_dir() && covered_by_parent && file.parent() == Some(n.as_path())));
            // `tests.rs` beside `module.rs` (a module whose tests live in `module/tests.rs`) is covered by `module.rs`.
            let covered_by_module =
                covered_by_parent && file.parent().is_some_and(|dir| named.iter().any(|n| *n == dir.with_extension("rs") || n == dir));
            // A crate root (`lib.rs`, `main.rs` directly in a listed folder) is the crate's own section.
            let crate_root = file.file_name().is_some_and(|n| n == "lib.rs" || n == "main.rs")
                && folders.iter().any(|folder| file.parent() == Some(root.join(folder).as_path()));
            if !is_named && !covered_by_module && !crate_root {
                unnamed.push(file.strip_prefix(&root).unwrap_or(&file).display().to_string());
            }
        }
    }
    assert!(unnamed.is_empty(), "source files ARCHITECTURE.md does not name (add a line to the crate's section):\n{}", unnamed.join("\n"));
}

#[test]
fn the_map_stays_short() {
    let size = std::fs::metadata(repo_root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md exists").len();
    assert!(
        size <= 12 * 1024,
        "ARCHITECTURE.md is {size} bytes; it is a map, to be read in ten minutes (limit 12 KiB): move detail to docs/"
    );
}
