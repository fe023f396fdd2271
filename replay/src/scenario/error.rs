//! The error of a scenario that could not be read: where it is and what was expected.

/// Why a scenario could not be read. `Display` gives one line: `origin:line:column: at path: message`.
#[derive(Debug, thiserror::Error)]
#[error("{origin}{}: {}{message}", position(*.line, *.column), at_path(.path))]
pub struct ScenarioError {
    /// The text the error is in: the scenario's origin (a path, `<replay header>`), or a referenced
    /// file's name as written in the scenario.
    pub origin: String,
    /// 1-based line, when known.
    pub line: Option<u32>,
    /// 1-based column (in bytes), when known.
    pub column: Option<u32>,
    /// The JSON path of the offending value, such as `script[3].move.units`; empty for the whole
    /// text (a syntax error).
    pub path: String,
    /// What was expected, in lower case.
    pub message: String,
    /// The error this one was made from, when there is one: serde_json's, or a referenced class
    /// file's, polygon config's or map's own error (its text is also in `message`).
    pub source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

/// `:line` and `:column` when known (a column without a line is not shown).
fn position(line: Option<u32>, column: Option<u32>) -> String {
    match (line, column) {
        (Some(line), Some(column)) => format!(":{line}:{column}"),
        (Some(line), None) => format!(":{line}"),
        (None, _) => String::new(),
    }
}

/// `at PATH: `, or nothing for the whole text.
fn at_path(path: &str) -> String {
    if path.is_empty() { String::new() } else { format!("at {path}: ") }
}
