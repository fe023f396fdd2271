//! A JSON tree with positions, and the checked accessors the parser reads it with.

use super::*;

/// A JSON value and the byte offset where it starts. Numbers keep their text (as offsets into
/// the scenario text), so they become `Fixed` without a float.
#[derive(Debug)]
pub(super) struct Node {
    pub(super) at: u32,
    pub(super) val: Val,
}

#[derive(Debug)]
pub(super) enum Val {
    Null,
    Bool(bool),
    /// The number's text is `text[start..end]`.
    Num(u32, u32),
    Str(String),
    Arr(Vec<Node>),
    Obj(Vec<(String, Node)>),
}

impl Val {
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Val::Null => "null",
            Val::Bool(_) => "a boolean",
            Val::Num(..) => "a number",
            Val::Str(_) => "a string",
            Val::Arr(_) => "an array",
            Val::Obj(_) => "an object",
        }
    }
}

/// Builds the tree of a text that `serde_json` has already accepted (so every error here is a
/// defence, not an expected path); counts values against [`MAX_JSON_VALUES`].
pub(super) struct Scanner<'t> {
    pub(super) text: &'t str,
    pub(super) i: usize,
    pub(super) values: usize,
}

impl Scanner<'_> {
    pub(super) fn byte(&self) -> Option<u8> {
        self.text.as_bytes().get(self.i).copied()
    }

    pub(super) fn skip_ws(&mut self) {
        while matches!(self.byte(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    pub(super) fn expect(&mut self, b: u8) -> Result<(), String> {
        self.skip_ws();
        if self.byte() == Some(b) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected `{}`", b as char))
        }
    }

    pub(super) fn value(&mut self, depth: u32) -> Result<Node, String> {
        if depth > 256 {
            return Err("JSON nested too deeply".into());
        }
        self.values += 1;
        if self.values > MAX_JSON_VALUES {
            return Err(format!("expected at most {MAX_JSON_VALUES} JSON values"));
        }
        self.skip_ws();
        let at = u32::try_from(self.i).map_err(|_| "text too long".to_string())?;
        let val = match self.byte() {
            Some(b'{') => {
                self.i += 1;
                let mut entries = Vec::new();
                self.skip_ws();
                if self.byte() == Some(b'}') {
                    self.i += 1;
                } else {
                    loop {
                        self.skip_ws();
                        let key = self.string()?;
                        self.expect(b':')?;
                        let value = self.value(depth + 1)?;
                        entries.push((key, value));
                        self.skip_ws();
                        match self.byte() {
                            Some(b',') => self.i += 1,
                            Some(b'}') => {
                                self.i += 1;
                                break;
                            }
                            _ => return Err("expected `,` or `}`".into()),
                        }
                    }
                }
                Val::Obj(entries)
            }
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.skip_ws();
                if self.byte() == Some(b']') {
                    self.i += 1;
                } else {
                    loop {
                        items.push(self.value(depth + 1)?);
                        self.skip_ws();
                        match self.byte() {
                            Some(b',') => self.i += 1,
                            Some(b']') => {
                                self.i += 1;
                                break;
                            }
                            _ => return Err("expected `,` or `]`".into()),
                        }
                    }
                }
                Val::Arr(items)
            }
            Some(b'"') => Val::Str(self.string()?),
            Some(b't') => self.literal("true", Val::Bool(true))?,
            Some(b'f') => self.literal("false", Val::Bool(false))?,
            Some(b'n') => self.literal("null", Val::Null)?,
            Some(b'-' | b'0'..=b'9') => {
                while matches!(self.byte(), Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')) {
                    self.i += 1;
                }
                let end = u32::try_from(self.i).map_err(|_| "text too long".to_string())?;
                Val::Num(at, end)
            }
            _ => return Err("expected a JSON value".into()),
        };
        Ok(Node { at, val })
    }

    pub(super) fn literal(&mut self, word: &str, val: Val) -> Result<Val, String> {
        if self.text.get(self.i..).is_some_and(|rest| rest.starts_with(word)) {
            self.i += word.len();
            Ok(val)
        } else {
            Err(format!("expected `{word}`"))
        }
    }

    /// A string literal, unescaped by `serde_json`.
    pub(super) fn string(&mut self) -> Result<String, String> {
        let start = self.i;
        if self.byte() != Some(b'"') {
            return Err("expected a string".into());
        }
        self.i += 1;
        loop {
            match self.byte() {
                Some(b'\\') => self.i += 2,
                Some(b'"') => {
                    self.i += 1;
                    break;
                }
                Some(_) => self.i += 1,
                None => return Err("unterminated string".into()),
            }
        }
        let literal = self.text.get(start..self.i).ok_or("unterminated string")?;
        serde_json::from_str::<String>(literal).map_err(|e| e.to_string())
    }
}

/// Line and column (1-based, column in bytes) of a byte offset.
pub(super) fn line_column(text: &str, at: usize) -> (u32, u32) {
    let before = text.get(..at.min(text.len())).unwrap_or(text);
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |k| k + 1) + 1;
    (u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(column).unwrap_or(u32::MAX))
}

/// What errors refer to: the text's origin and the text (for line numbers).
pub(super) struct Cx<'a> {
    pub(super) origin: &'a str,
    pub(super) text: &'a str,
    /// The version the file declares (once read; [`SCENARIO_VERSION`] until then).
    pub(super) version: u32,
}

pub(super) type Res<T> = Result<T, ScenarioError>;

impl Cx<'_> {
    pub(super) fn err(&self, node: &Node, path: &str, message: impl Into<String>) -> ScenarioError {
        let (line, column) = line_column(self.text, node.at as usize);
        ScenarioError {
            origin: self.origin.to_string(),
            line: Some(line),
            column: Some(column),
            path: path.to_string(),
            message: message.into(),
        }
    }

    pub(super) fn num_text(&self, node: &Node) -> Option<&str> {
        match node.val {
            Val::Num(start, end) => self.text.get(start as usize..end as usize),
            _ => None,
        }
    }

    /// A number (or a string holding a decimal) as the nearest `Fixed`.
    pub(super) fn fixed(&self, node: &Node, path: &str) -> Res<Fixed> {
        let text = match &node.val {
            Val::Num(..) => self.num_text(node).unwrap_or(""),
            Val::Str(s) => s.as_str(),
            other => return Err(self.err(node, path, format!("expected a decimal number, found {}", other.kind()))),
        };
        parse_fixed(text).map_err(|e| self.err(node, path, e))
    }

    /// A non-negative integer at most `max`.
    pub(super) fn uint(&self, node: &Node, path: &str, max: u64) -> Res<u64> {
        let Some(text) = self.num_text(node) else {
            return Err(self.err(node, path, format!("expected an integer in 0..={max}, found {}", node.val.kind())));
        };
        match text.parse::<u64>() {
            Ok(n) if n <= max && text.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
            _ => Err(self.err(node, path, format!("expected an integer in 0..={max}, found {text}"))),
        }
    }

    pub(super) fn u32_in(&self, node: &Node, path: &str, lo: u32, hi: u32) -> Res<u32> {
        let expected = || format!("expected an integer in {lo}..={hi}, found {}", self.num_text(node).unwrap_or(node.val.kind()));
        match self.uint(node, path, u64::from(hi)) {
            Ok(n) if n >= u64::from(lo) => Ok(n as u32),
            _ => Err(self.err(node, path, expected())),
        }
    }

    pub(super) fn boolean(&self, node: &Node, path: &str) -> Res<bool> {
        match node.val {
            Val::Bool(b) => Ok(b),
            ref other => Err(self.err(node, path, format!("expected true or false, found {}", other.kind()))),
        }
    }

    pub(super) fn string<'n>(&self, node: &'n Node, path: &str, max: usize) -> Res<&'n str> {
        match &node.val {
            Val::Str(s) if s.len() <= max => Ok(s),
            Val::Str(s) => Err(self.err(node, path, format!("expected a string of at most {max} bytes, found {} bytes", s.len()))),
            other => Err(self.err(node, path, format!("expected a string, found {}", other.kind()))),
        }
    }

    /// A non-empty name of at most [`MAX_NAME_BYTES`].
    pub(super) fn name<'n>(&self, node: &'n Node, path: &str) -> Res<&'n str> {
        let s = self.string(node, path, MAX_NAME_BYTES)?;
        if s.is_empty() {
            return Err(self.err(node, path, "expected a non-empty name"));
        }
        Ok(s)
    }

    pub(super) fn array<'n>(&self, node: &'n Node, path: &str, max: usize) -> Res<&'n [Node]> {
        match &node.val {
            Val::Arr(items) if items.len() <= max => Ok(items),
            Val::Arr(items) => Err(self.err(node, path, format!("expected at most {max} entries, found {}", items.len()))),
            other => Err(self.err(node, path, format!("expected an array, found {}", other.kind()))),
        }
    }

    /// A point `[x, z]`.
    pub(super) fn pos(&self, node: &Node, path: &str) -> Res<WorldPos> {
        match &node.val {
            Val::Arr(items) if items.len() == 2 => {
                Ok(WorldPos::new(self.fixed(&items[0], &format!("{path}[0]"))?, self.fixed(&items[1], &format!("{path}[1]"))?))
            }
            other => Err(self.err(node, path, format!("expected a point [x, z], found {}", other.kind()))),
        }
    }

    /// Refuses `key` (a row of [`INTRODUCED`]) at `node` when the file declares a version before
    /// the one that introduced it: an older file that uses a newer feature would otherwise be
    /// read as if it had declared the newer version.
    pub(super) fn since(&self, node: &Node, path: &str, key: &str) -> Res<()> {
        let introduced = introduced_in(key);
        if self.version < introduced {
            return Err(self.err(
                node,
                path,
                format!(
                    "`{key}` was introduced in version {introduced}, found version {} (declare version {introduced} or later)",
                    self.version
                ),
            ));
        }
        Ok(())
    }

    /// An object whose keys are all in `known` (each once).
    pub(super) fn obj<'n>(&self, node: &'n Node, path: &str, known: &[&str]) -> Res<Obj<'n>> {
        let Val::Obj(entries) = &node.val else {
            return Err(self.err(node, path, format!("expected an object, found {}", node.val.kind())));
        };
        for (k, (key, value)) in entries.iter().enumerate() {
            if !known.contains(&key.as_str()) {
                let list = known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
                return Err(self.err(value, &join(path, key), format!("unknown field `{key}`, expected one of {list}")));
            }
            if entries[..k].iter().any(|(other, _)| other == key) {
                return Err(self.err(value, &join(path, key), format!("field `{key}` given twice")));
            }
        }
        Ok(Obj { node, path: path.to_string(), entries })
    }
}

/// `path.key`, or `key` at the top.
pub(super) fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

/// A checked object and its path.
pub(super) struct Obj<'n> {
    pub(super) node: &'n Node,
    pub(super) path: String,
    pub(super) entries: &'n [(String, Node)],
}

impl<'n> Obj<'n> {
    pub(super) fn get(&self, key: &str) -> Option<(&'n Node, String)> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| (v, join(&self.path, key)))
    }

    pub(super) fn req(&self, cx: &Cx, key: &str) -> Res<(&'n Node, String)> {
        self.get(key).ok_or_else(|| cx.err(self.node, &self.path, format!("missing field `{key}`")))
    }

    /// The one key of `kinds` present (exactly one must be).
    pub(super) fn one_of(&self, cx: &Cx, kinds: &[&str]) -> Res<(&'n str, &'n Node, String)> {
        let present: Vec<&(String, Node)> = self.entries.iter().filter(|(k, _)| kinds.contains(&k.as_str())).collect();
        let list = kinds.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
        match present.as_slice() {
            [(key, value)] => Ok((key.as_str(), value, join(&self.path, key))),
            [] => Err(cx.err(self.node, &self.path, format!("expected one of {list}"))),
            _ => Err(cx.err(self.node, &self.path, format!("expected only one of {list}"))),
        }
    }

    pub(super) fn fixed_or(&self, cx: &Cx, key: &str, default: Fixed) -> Res<Fixed> {
        self.get(key).map_or(Ok(default), |(n, p)| cx.fixed(n, &p))
    }
}
