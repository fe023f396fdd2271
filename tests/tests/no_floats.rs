//! The determinism rule with teeth: no floating-point types in the simulation crates' sources.
//! (Clippy's `float_arithmetic` and `disallowed-types` lints enforce it too; this test needs no
//! clippy and also catches a float in a type that is never used in arithmetic.)

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("readable entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `f32`/`f64` tokens outside comments and string literals, as `file:line: text`.
fn float_tokens(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("readable source");
    let mut hits = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        // serde's `Serializer` trait makes every serializer name the float types in these two
        // signatures; the state encoder refuses the values (`sim`'s
        // `state_hash::encoder::tests::floats_are_refused`).
        if ["fn serialize_f32(self, _v: f32)", "fn serialize_f64(self, _v: f64)"].iter().any(|s| code.trim_start().starts_with(s)) {
            continue;
        }
        let mut in_string = false;
        let mut token = String::new();
        for ch in code.chars().chain(std::iter::once(' ')) {
            if ch == '"' {
                in_string = !in_string;
            }
            if !in_string && (ch.is_alphanumeric() || ch == '_') {
                token.push(ch);
            } else {
                if token == "f32" || token == "f64" || token.ends_with("_f32") || token.ends_with("_f64") {
                    hits.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                }
                token.clear();
            }
        }
    }
    hits
}

#[test]
fn simulation_crates_have_no_float_types() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for krate in ["pathing/src", "sim/src", "skirmish/src"] {
        rust_files(&root.join(krate), &mut files);
    }
    assert!(files.len() >= 10, "expected the simulation sources, found {} files", files.len());
    let hits: Vec<String> = files.iter().flat_map(|f| float_tokens(f)).collect();
    assert!(hits.is_empty(), "float types in simulation code:\n{}", hits.join("\n"));
}

#[test]
fn the_scanner_finds_floats() {
    let dir = std::env::temp_dir().join(format!("phalanx-float-scan-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("sample.rs");
    std::fs::write(&file, "let a: f64 = 1.0; // f32 in a comment\nlet s = \"f32 in a string\";\nlet b = 2u8;\nlet c = 1.5_f32;\n").unwrap();
    let hits = float_tokens(&file);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert!(hits[0].contains(":1:") && hits[1].contains(":4:"));
}
