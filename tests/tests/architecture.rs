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
    ("skirmish", "skirmish", &["skirmish/src", "skirmish/tests"]),
    ("replay", "replay/src", &["replay/src"]),
    ("session", "session", &["session/src", "session/tests"]),
    ("phalanx", "phalanx", &["phalanx/src", "phalanx/tests"]),
    ("fuzz", "fuzz", &["fuzz/src"]),
    ("cross", "cross", &["cross/src"]),
    ("examples", "examples", &["examples/src", "examples/tests", "examples/aura/src", "examples/aura/tests"]),
    ("tests", "tests", &["tests/src", "tests/tests"]),
    ("bevy_phalanx", "bevy_phalanx", &["bevy_phalanx/src", "bevy_phalanx/tests", "bevy_phalanx/benches", "bevy_phalanx/examples"]),
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
    // 12 KiB for three crates of code; 14 KiB once the game rules and the reference game joined;
    // 16 KiB once the networked session and the top crate of the command line joined; 20 KiB once
    // the program crate took the command line from the libraries, and a studio's own game
    // (`examples/aura`) and the Bevy adapter joined.
    assert!(
        size <= 20 * 1024,
        "ARCHITECTURE.md is {size} bytes; it is a map, to be read in ten minutes (limit 20 KiB): move detail to docs/"
    );
}

// ---------------------------------------------------------------------------------------------
// The module graphs of `sim` and `pathing`, at the top and inside every folder: their top-level modules (a folder such as `world/` counts as its
// module, `world`) may not import one another in a cycle, so each can be read, tested and changed
// with only the modules below it in mind. An edge is any `crate::module` path in code (comments
// do not count: a doc link is not a dependency), including the grouped `crate::{a::X, b}` form
// and the crate root's re-exports (`crate::EntityId` is an edge to `ids`).
// ---------------------------------------------------------------------------------------------

/// The code of a line: the text before a `//` comment, with the contents of string and character
/// literals left out (a path in a string is not a dependency).
fn code_of(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut k = 0;
    let mut in_string = false;
    while k < chars.len() {
        let c = chars[k];
        match c {
            '\\' if in_string => k += 1,
            '"' => in_string = !in_string,
            _ if in_string => {}
            '/' if chars.get(k + 1) == Some(&'/') => break,
            // A character literal (`'"'`, `'\''`); a lifetime (`'a`) has no closing quote two on.
            '\'' if chars.get(k + 2) == Some(&'\'') => k += 2,
            '\'' if chars.get(k + 1) == Some(&'\\') && chars.get(k + 3) == Some(&'\'') => k += 3,
            _ => out.push(c),
        }
        k += 1;
    }
    out
}

/// The leading identifier of `s` (letters, digits, `_`).
fn ident(s: &str) -> &str {
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(s.len());
    &s[..end]
}

/// The first path segments named after each `crate::` in `code`: `crate::a::X` gives `a`, and
/// `crate::{a::X, b, c::{D, E}}` gives `a`, `b` and `c`.
fn crate_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        // `pub(crate)` and `$crate` are not paths into the crate.
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            // Split the group's top level at commas.
            let mut depth = 0usize;
            let mut start = 0;
            for (k, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        out.push(ident(group[start..k].trim()).to_string());
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.push(ident(group[start..k].trim()).to_string());
                        start = k + 1;
                    }
                    _ => {}
                }
            }
        } else {
            out.push(ident(rest).to_string());
        }
    }
    out.retain(|name| !name.is_empty());
    out
}

/// The module graph of a crate's sources: `files` are `(path relative to the source folder, text)`;
/// `lib.rs` is the root, whose `pub use module::…` re-exports resolve `crate::Name` paths.
fn module_graph(files: &[(String, String)]) -> BTreeMap<String, std::collections::BTreeSet<String>> {
    let module_of = |path: &str| path.split('/').next().unwrap_or(path).trim_end_matches(".rs").to_string();
    let mut graph: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
    for (path, _) in files.iter().filter(|(p, _)| p != "lib.rs") {
        graph.entry(module_of(path)).or_default();
    }
    // Names the root re-exports, by the module that defines them.
    let mut reexported: BTreeMap<String, String> = BTreeMap::new();
    for (_, text) in files.iter().filter(|(p, _)| p == "lib.rs") {
        for line in text.lines().map(code_of) {
            let line = line.as_str();
            let Some(path) = line.trim().strip_prefix("pub use ") else { continue };
            let path = path.trim_start_matches("crate::");
            let module = ident(path).to_string();
            let names = path[module.len()..].trim_start_matches("::").trim_end_matches(';');
            let names = names.trim_start_matches('{').trim_end_matches('}');
            for name in names.split(',').map(|n| n.trim().rsplit(" as ").next().unwrap_or("").trim()) {
                reexported.insert(name.to_string(), module.clone());
            }
        }
    }
    for (path, text) in files.iter().filter(|(p, _)| p != "lib.rs") {
        let from = module_of(path);
        // The whole file's code at once, so a group that rustfmt spreads over lines is read whole.
        let code: Vec<String> = text.lines().map(code_of).collect();
        for name in crate_paths(&code.join("\n")) {
            let to = if graph.contains_key(&name) { Some(name) } else { reexported.get(&name).cloned() };
            if let Some(to) = to.filter(|to| *to != from) {
                graph.get_mut(&from).expect("every file's module is a node").insert(to);
            }
        }
    }
    graph
}

/// A cycle of the graph as its modules in order, the first repeated at the end; `None` when the
/// graph is acyclic. Depth-first in name order, so the cycle named is always the same.
fn find_cycle(graph: &BTreeMap<String, std::collections::BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit<'a>(
        node: &'a str,
        graph: &'a BTreeMap<String, std::collections::BTreeSet<String>>,
        done: &mut std::collections::BTreeSet<&'a str>,
        stack: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|n| *n == node) {
            let mut cycle: Vec<String> = stack[at..].iter().map(|n| n.to_string()).collect();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node);
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, done, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        done.insert(node);
        None
    }
    let mut done = std::collections::BTreeSet::new();
    graph.keys().find_map(|node| visit(node, graph, &mut done, &mut Vec::new()))
}

/// A crate's sources as `(path relative to its source folder, text)`.
fn sources(krate: &str) -> Vec<(String, String)> {
    let src = repo_root().join(krate).join("src");
    let mut paths = Vec::new();
    files_under(&src, &mut paths);
    paths
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(&src).expect("under src").to_string_lossy().replace('\\', "/");
            (rel, std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        })
        .collect()
}

/// The identifiers named after each occurrence of `prefix` in `code` (`super::plan::X` gives `plan`
/// for the prefix `super::`); a longer prefix ending in the same text (`super::super::`) is not
/// taken for a shorter one.
fn paths_after(code: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find(prefix) {
        let start = from + at;
        from = start + prefix.len();
        let before = &code[..start];
        if before.ends_with("super::") || before.chars().next_back().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let name = ident(&code[from..]);
        if !name.is_empty() {
            out.push(name.to_string());
        }
    }
    out
}

/// The module graph inside one folder of a crate (`folder`, relative to the source folder, such as
/// `world` or `search`): its nodes are the folder's modules (`world/plan.rs` and everything under
/// `world/plan/` count as `plan`), its edges the paths from one to another: `super::other` in a
/// file directly in the folder, `super::super::other` one level down, and `crate::…::folder::other`
/// anywhere. Split-out unit tests (`tests.rs`) are left out: a test may reach anything.
fn folder_graph(files: &[(String, String)], folder: &str) -> BTreeMap<String, std::collections::BTreeSet<String>> {
    let prefix = format!("{folder}/");
    let inside: Vec<(&str, &str)> = files
        .iter()
        .filter_map(|(path, text)| path.strip_prefix(&prefix).map(|rest| (rest, text.as_str())))
        .filter(|(rest, _)| !rest.ends_with("tests.rs") && *rest != "mod.rs")
        .collect();
    let node_of = |rest: &str| rest.split('/').next().unwrap_or(rest).trim_end_matches(".rs").to_string();
    let mut graph: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
    for (rest, _) in &inside {
        graph.entry(node_of(rest)).or_default();
    }
    let crate_prefix = format!("crate::{}::", folder.replace('/', "::"));
    for (rest, text) in &inside {
        let from = node_of(rest);
        let code: Vec<String> = text.lines().map(code_of).collect();
        let code = code.join("\n");
        let up = match rest.matches('/').count() {
            0 => "super::",
            1 => "super::super::",
            _ => "super::super::super::",
        };
        let mut names = paths_after(&code, up);
        names.extend(paths_after(&code, &crate_prefix));
        for name in names {
            if name != from && graph.contains_key(&name) {
                graph.get_mut(&from).expect("every file's module is a node").insert(name);
            }
        }
    }
    graph
}

/// The folders of a crate's sources that hold modules (`world`, `search`, `local/collide` …).
fn folders(files: &[(String, String)]) -> std::collections::BTreeSet<String> {
    files.iter().filter_map(|(path, _)| path.rsplit_once('/').map(|(dir, _)| dir.to_string())).collect()
}

/// Panics naming the first cycle among a crate's top-level modules or among the modules of any of
/// its folders.
fn check_floors(krate: &str) {
    let files = sources(krate);
    let mut graph = module_graph(&files);
    // The test helpers (feature `test-support`) serve the modules' unit tests, which may reach
    // anything; they are not a floor of the code.
    graph.remove("test_support");
    for edges in graph.values_mut() {
        edges.remove("test_support");
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!("the modules of {krate} import one another in a cycle: {}", cycle.join(" → "));
    }
    for folder in folders(&files) {
        if let Some(cycle) = find_cycle(&folder_graph(&files, &folder)) {
            panic!("the modules of {krate}/src/{folder}/ import one another in a cycle: {}", cycle.join(" → "));
        }
    }
}

#[test]
fn sim_modules_import_one_another_without_a_cycle() {
    let files = sources("sim");
    let graph = module_graph(&files);
    // The graph is read from the sources, not empty by mistake: the world uses motion and units.
    assert!(graph.get("world").is_some_and(|edges| edges.contains("motion") && edges.contains("unit")), "graph: {graph:?}");
    // The same inside a folder: the path phase uses the jobs and the held searches.
    let world = folder_graph(&files, "world");
    assert!(world.get("plan").is_some_and(|edges| edges.contains("jobs") && edges.contains("held")), "world/: {world:?}");
    check_floors("sim");
}

#[test]
fn pathing_modules_import_one_another_without_a_cycle() {
    let files = sources("pathing");
    let graph = module_graph(&files);
    assert!(graph.get("search").is_some_and(|edges| edges.contains("grid") && edges.contains("geometry")), "graph: {graph:?}");
    let build = folder_graph(&files, "build");
    assert!(build.get("terrain").is_some_and(|edges| edges.contains("classes")), "build/: {build:?}");
    check_floors("pathing");
}

#[test]
fn the_folder_graph_sees_super_paths_and_a_planted_cycle() {
    let file = |path: &str, text: &str| (path.to_string(), text.to_string());
    let mut files = vec![
        file("lib.rs", "mod world;\n"),
        file("world.rs", "mod plan;\nmod held;\nmod jobs;\n"),
        file("world/plan.rs", "use super::held::run;\nuse super::*;\nfn f(j: super::jobs::Job) {}\n"),
        file("world/held.rs", "use crate::world::jobs::Job;\n"),
        // A submodule of `held` reaches its folder's siblings two `super`s up.
        file("world/held/deep.rs", "fn g() -> super::super::jobs::Job { todo!() }\n"),
        file("world/jobs.rs", "// super::plan::f\npub struct Job;\n"),
        file("world/plan/tests.rs", "use super::super::held::run;\n"),
    ];
    let graph = folder_graph(&files, "world");
    assert_eq!(graph["plan"].iter().collect::<Vec<_>>(), ["held", "jobs"]);
    assert_eq!(graph["held"].iter().collect::<Vec<_>>(), ["jobs"]);
    assert_eq!(find_cycle(&graph), None, "graph: {graph:?}");
    files.push(file("world/jobs/back.rs", "use super::super::plan::f;\n"));
    let graph = folder_graph(&files, "world");
    assert_eq!(find_cycle(&graph), Some(vec!["held".to_string(), "jobs".into(), "plan".into(), "held".into()]));
}

#[test]
fn the_cycle_finder_names_a_planted_cycle() {
    let file = |path: &str, text: &str| (path.to_string(), text.to_string());
    let files = vec![
        file("lib.rs", "pub mod a;\npub mod b;\npub mod c;\npub use c::{Thing, Other as Renamed};\n"),
        file("a.rs", "//! Uses b.\nuse crate::b::B;\npub(crate) fn f() {}\n"),
        // A grouped path, and a folder module whose files all count as `b`.
        file("b.rs", "use crate::{c::{C, D}, lookup_free};\n"),
        file("b/inner.rs", "fn g() -> crate::Thing { todo!() }\n"),
        // Only a comment and a string name `a`: no edge.
        file("c.rs", "// crate::a::f\nconst S: &str = \"crate::a::f\";\n"),
    ];
    let graph = module_graph(&files);
    assert_eq!(find_cycle(&graph), None, "graph: {graph:?}");
    assert_eq!(graph["b"].iter().collect::<Vec<_>>(), ["c"]);
    // One edge back closes the cycle a → b → c → a, and the finder names it.
    let mut files = files;
    files.push(file("c/deep.rs", "use crate::{\n    // crate::b::B\n    a::f,\n};\n"));
    let graph = module_graph(&files);
    assert_eq!(find_cycle(&graph), Some(vec!["a".to_string(), "b".into(), "c".into(), "a".into()]));
}

// ---------------------------------------------------------------------------------------------
// One public path per item (docs/decisions.md, "One public path per item"). In `sim`, `replay` and
// `session` an item is public at exactly one path: either re-exported flat from a private module
// (`sim::World`, from the private `world.rs`) or inside a public module that is a namespace
// (`sim::snapshot::SnapshotData`), never both. The check reads each public module's source
// (the crate root first): every `pub use` in it must take its item from a private child module
// (`mod world;`), since a `pub use` from a public module, from `crate::`, `super::` or another
// crate names an item that already has a public path; and where a `pub use` makes a private
// child's submodule public (`pub use world::rules;`), no other `pub use` may reach into it.

/// The `pub use` paths of a statement's tree (`a::{b, c::{D, E}}` gives `a::b`, `a::c::D`,
/// `a::c::E`), each as its segments; `X as Y` counts as `X`.
fn use_paths(tree: &str) -> Vec<Vec<String>> {
    fn expand(prefix: &[String], tree: &str, out: &mut Vec<Vec<String>>) {
        let tree = tree.trim();
        if tree.is_empty() {
            return;
        }
        if let Some(open) = tree.find('{') {
            let head: Vec<String> = tree[..open].split("::").map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect();
            let inner = &tree[open + 1..tree.rfind('}').expect("a use tree's braces close")];
            let mut prefix = prefix.to_vec();
            prefix.extend(head);
            let (mut depth, mut start) = (0, 0);
            for (k, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(&prefix, &inner[start..k], out);
                        start = k + 1;
                    }
                    _ => {}
                }
            }
            expand(&prefix, &inner[start..], out);
        } else {
            let name = tree.split(" as ").next().unwrap_or(tree);
            let mut path = prefix.to_vec();
            path.extend(name.split("::").map(str::trim).filter(|s| !s.is_empty()).map(String::from));
            out.push(path);
        }
    }
    let mut out = Vec::new();
    expand(&[], tree, &mut out);
    out
}

/// A module's code without comments, as one string.
fn module_code(text: &str) -> String {
    text.lines().map(code_of).collect::<Vec<_>>().join("\n")
}

/// The statements `pub use …;` (not `pub(crate) use`) of a module's code, and the names of its
/// file modules: `mod x;` (private, whatever its attributes) and `pub mod x;`.
fn module_items(code: &str) -> (Vec<String>, Vec<String>, Vec<String>) {
    let (mut uses, mut private, mut public) = (Vec::new(), Vec::new(), Vec::new());
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    for keyword in ["use", "mod"] {
        for (k, _) in code.match_indices(keyword) {
            let before = &code[..k];
            let rest = &code[k + keyword.len()..];
            // Whole words only: not `reuse`, not `module`.
            if before.chars().next_back().is_some_and(is_word) || !rest.starts_with(char::is_whitespace) {
                continue;
            }
            let before = before.trim_end();
            let directly_pub = before.strip_suffix("pub").is_some_and(|b| !b.chars().next_back().is_some_and(is_word));
            let Some(end) = rest.find(';') else { continue };
            let statement = rest[..end].trim();
            if keyword == "use" {
                if directly_pub {
                    uses.push(statement.to_owned());
                }
            } else if !statement.is_empty() && statement.chars().all(is_word) {
                // `mod tests { … }` has a body, not `;`, and is test code, not API.
                if directly_pub { public.push(statement.to_owned()) } else { private.push(statement.to_owned()) }
            }
        }
    }
    (uses, private, public)
}

/// Where the source of module `path` of a crate is, relative to its `src/` (`world/rules.rs` or
/// `world/rules/mod.rs`), among the files `read` knows.
fn module_file(path: &[String], read: &dyn Fn(&str) -> Option<String>) -> Option<(String, String)> {
    if path.is_empty() {
        return read("lib.rs").map(|t| ("lib.rs".to_owned(), t));
    }
    let base = path.join("/");
    [format!("{base}.rs"), format!("{base}/mod.rs")].into_iter().find_map(|f| read(&f).map(|t| (f, t)))
}

/// The items of a crate that have a second public path, one line each, reading the crate's
/// source through `read` (a path relative to `src/` → its text).
fn second_paths(krate: &str, read: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let mut found = Vec::new();
    // Public modules still to read: their path in the source tree and the public path they have.
    let mut pending: Vec<(Vec<String>, String)> = vec![(Vec::new(), krate.to_owned())];
    while let Some((source, public)) = pending.pop() {
        let Some((file, text)) = module_file(&source, read) else { continue };
        let (uses, private, public_mods) = module_items(&module_code(&text));
        for child in public_mods {
            let mut path = source.clone();
            path.push(child.clone());
            pending.push((path, format!("{public}::{child}")));
        }
        let paths: Vec<Vec<String>> = uses.iter().flat_map(|u| use_paths(u)).collect();
        // The private children's submodules this module makes public (`pub use world::rules;`).
        let mut opened: Vec<Vec<String>> = Vec::new();
        for path in &paths {
            let path: Vec<String> = path.iter().skip_while(|s| *s == "self").cloned().collect();
            let Some(first) = path.first() else { continue };
            if !private.contains(first) {
                found.push(format!(
                    "{file}: `pub use {}` takes an item from `{first}`, which is not a private module of `{public}`, so the item has another public path",
                    path.join("::")
                ));
                continue;
            }
            let mut inner = source.clone();
            inner.extend(path.iter().cloned());
            if path.len() > 1 && path.last().is_some_and(|l| l != "*") && module_file(&inner, read).is_some() {
                opened.push(path.clone());
                pending.push((inner, format!("{public}::{}", path.last().expect("a segment"))));
            }
        }
        for path in &paths {
            let path: Vec<String> = path.iter().skip_while(|s| *s == "self").cloned().collect();
            if let Some(module) = opened.iter().find(|m| path.len() > m.len() && path.starts_with(m)) {
                found.push(format!(
                    "{file}: `pub use {}` reaches into `{}`, a module `{public}` makes public, so the item has two public paths",
                    path.join("::"),
                    module.join("::")
                ));
            }
        }
    }
    found
}

#[test]
fn every_item_of_sim_replay_and_session_has_one_public_path() {
    let root = repo_root();
    let mut found = Vec::new();
    for krate in ["sim", "replay", "session"] {
        let src = root.join(krate).join("src");
        found.extend(
            second_paths(krate, &|file| std::fs::read_to_string(src.join(file)).ok()).into_iter().map(|f| format!("{krate}/src/{f}")),
        );
    }
    assert!(found.is_empty(), "items with two public paths (docs/decisions.md, \"One public path per item\"):\n{}", found.join("\n"));
}

#[test]
fn the_public_path_check_names_planted_second_paths() {
    let files: BTreeMap<&str, &str> = [
        (
            "lib.rs",
            "//! A crate.\npub mod command;\nmod world;\nmod ids;\n#[cfg(feature = \"x\")]\npub mod extra;\n\
             pub use command::Command; // a second path: `command` is public\n\
             pub use ids::{EntityId, PlayerId};\npub use world::{World, rules};\npub use world::rules::Rules;\n\
             pub use pathing::Fixed;\n",
        ),
        ("command.rs", "pub struct Command;\npub use crate::ids::PlayerId;\n"),
        ("world.rs", "pub mod rules;\npub struct World;\n"),
        ("world/rules.rs", "mod grid;\npub use grid::Grid;\npub trait Rules {}\n"),
        ("ids.rs", "pub struct EntityId;\npub struct PlayerId;\n"),
        ("extra.rs", "mod inner;\npub use inner::{Fine, deeper::{AlsoFine}};\npub use super::World;\n"),
    ]
    .into_iter()
    .collect();
    let found = second_paths("planted", &|file| files.get(file).map(|t| (*t).to_owned()));
    let mut named: Vec<&str> = found.iter().map(|f| f.split('`').nth(1).expect("a quoted use")).collect();
    named.sort_unstable();
    assert_eq!(
        named,
        [
            "pub use command::Command",
            "pub use crate::ids::PlayerId",
            "pub use pathing::Fixed",
            "pub use super::World",
            "pub use world::rules::Rules",
        ],
        "{found:#?}"
    );
}
