//! The one way the JSON configs are read: serde derive with unknown keys refused, exact decimals
//! through `deserialize_with` (`crate::decimal`), and the JSON path of a refused value from
//! `serde_path_to_error`, so that every error reads `line:column: at PATH: what was expected`
//! (the caller, which knows the file, puts its name in front).

use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// Why JSON text could not be read: where, at which JSON path, and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in bytes.
    pub column: usize,
    /// The JSON path of the offending value, such as `areas[2].polygon`; empty for the text as a
    /// whole (a syntax error, trailing characters).
    pub path: String,
    /// What was expected, without the position.
    pub message: String,
}

impl JsonError {
    /// An error about the value at `path` of `text` (which `serde_json` has accepted), placed where
    /// [`locate`] finds that value (line 1, column 1 when it cannot).
    pub fn at(text: &str, path: impl Into<String>, message: impl Into<String>) -> Self {
        let path = path.into();
        let (line, column) = locate(text, &path).unwrap_or((1, 1));
        Self { line, column, path, message: message.into() }
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: ", self.line, self.column)?;
        if !self.path.is_empty() {
            write!(f, "at {}: ", self.path)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for JsonError {}

/// Deserializes the whole of `text` as a `T`, refusing trailing characters; an error carries the
/// JSON path `serde_path_to_error` tracked.
///
/// # Errors
/// The first thing serde refused, with its line, column and path.
pub fn from_json<'t, T: Deserialize<'t>>(text: &'t str) -> Result<T, JsonError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let syntax = matches!(inner.classify(), serde_json::error::Category::Syntax | serde_json::error::Category::Eof);
        let mut error = without_position(&inner);
        if !syntax && path != "." {
            error.path = path;
        }
        // serde names a repeated key in the message only; the path names it too, like an unknown one.
        if let Some(key) = error.message.strip_prefix("duplicate field `").and_then(|rest| rest.strip_suffix('`')) {
            error.path = if error.path.is_empty() { key.to_string() } else { format!("{}.{key}", error.path) };
        }
        error
    })?;
    de.end().map_err(|e| without_position(&e))?;
    Ok(value)
}

/// A `serde_json` error's position and message (without the position `serde_json` appends).
fn without_position(e: &serde_json::Error) -> JsonError {
    let (line, column) = (e.line(), e.column());
    let message = e.to_string();
    let suffix = format!(" at line {line} column {column}");
    let message = message.strip_suffix(&suffix).unwrap_or(&message).to_string();
    JsonError { line, column, path: String::new(), message }
}

/// Line and column of the value at a JSON path (`areas[2].name`) of `text`, which `serde_json` has
/// accepted: the text is read again up to that value, which is refused there, so `serde_json`
/// reports where it is. The position is just inside an object or array, and just after any other
/// value; `None` when the path is not in the text.
pub fn locate(text: &str, path: &str) -> Option<(usize, usize)> {
    let segments = split_path(path)?;
    let mut de = serde_json::Deserializer::from_str(text);
    let err = Seek { rest: &segments }.deserialize(&mut de).err()?;
    Some((err.line(), err.column()))
}

/// A step of a JSON path: an object's key or an array's index.
enum Step<'p> {
    Key(&'p str),
    Index(usize),
}

/// `a.b[3].c` as steps; `None` when it is not such a path.
fn split_path(path: &str) -> Option<Vec<Step<'_>>> {
    let mut steps = Vec::new();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (key, mut rest) = part.split_once('[').map_or((part, ""), |(k, r)| (k, r));
        if !key.is_empty() {
            steps.push(Step::Key(key));
        }
        while !rest.is_empty() {
            let (index, after) = rest.split_once(']')?;
            steps.push(Step::Index(index.parse().ok()?));
            rest = after.strip_prefix('[').unwrap_or(after);
        }
    }
    Some(steps)
}

/// Walks to the value at `rest` and fails there.
struct Seek<'s, 'p> {
    rest: &'s [Step<'p>],
}

const FOUND: &str = "found";

impl<'de> DeserializeSeed<'de> for Seek<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seek<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a value on the path")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Some((Step::Key(want), rest)) = self.rest.split_first() else { return Err(de::Error::custom(FOUND)) };
        while let Some(key) = map.next_key::<String>()? {
            if key == *want {
                return map.next_value_seed(Seek { rest });
            }
            map.next_value::<IgnoredAny>()?;
        }
        Err(de::Error::custom(FOUND))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Some((Step::Index(want), rest)) = self.rest.split_first() else { return Err(de::Error::custom(FOUND)) };
        for _ in 0..*want {
            if seq.next_element::<IgnoredAny>()?.is_none() {
                return Err(de::Error::custom(FOUND));
            }
        }
        seq.next_element_seed(Seek { rest })?;
        Err(de::Error::custom(FOUND))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Err(E::custom(FOUND))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Err(E::custom(FOUND))
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Err(E::custom(FOUND))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Err(E::custom(FOUND))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Err(E::custom(FOUND))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Doc {
        items: Vec<Item>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Item {
        name: String,
    }

    #[test]
    fn an_error_names_the_json_path_line_and_column() {
        let e = from_json::<Doc>("{\n \"items\": [\n  {\"name\": \"a\"},\n  {\"name\": 5}\n ]\n}").unwrap_err();
        assert_eq!((e.line, e.path.as_str()), (4, "items[1].name"), "{e}");
        assert!(e.to_string().starts_with(&format!("4:{}: at items[1].name: invalid type: integer `5`", e.column)), "{e}");
        let unknown = from_json::<Doc>("{\"items\": [{\"nmae\": \"a\"}]}").unwrap_err();
        assert_eq!(unknown.path, "items[0].nmae", "{unknown}");
        let twice = from_json::<Doc>("{\"items\": [],\n\"items\": []}").unwrap_err();
        assert_eq!((twice.line, twice.path.as_str()), (2, "items"), "{twice}");
    }

    #[test]
    fn a_syntax_error_has_no_path() {
        let e = from_json::<Doc>("{\"items\": [}").unwrap_err();
        assert_eq!((e.line, e.path.as_str()), (1, ""), "{e}");
        assert!(!e.to_string().contains(" at "), "{e}");
        let trailing = from_json::<Doc>("{\"items\": []}\nx").unwrap_err();
        assert_eq!((trailing.line, trailing.message.as_str()), (2, "trailing characters"), "{trailing}");
    }

    #[test]
    fn locate_finds_values_objects_and_array_entries() {
        let text = "{\n \"a\": [1,\n  {\"b\": true}]\n}";
        assert_eq!(locate(text, "a[1].b").map(|p| p.0), Some(3));
        assert_eq!(locate(text, "a[0]").map(|p| p.0), Some(2));
        assert_eq!(locate(text, "a[x]"), None);
        assert_eq!(JsonError::at(text, "a[1]", "no").to_string().split(':').next(), Some("3"));
    }
}
