//! The error of a scenario that could not be read: where it is and what was expected.

/// Why a scenario could not be read. `Display` gives one line: `origin:line:column: at path: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
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
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.origin)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        f.write_str(": ")?;
        if !self.path.is_empty() {
            write!(f, "at {}: ", self.path)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ScenarioError {}
