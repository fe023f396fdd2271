//! The JSON side of scenario reading: serde deserializers for exact decimals, bounded integers,
//! points and capped lists, the conversion of serde's errors (with their JSON path) into
//! [`ScenarioError`], and the context the checks after deserialization report errors through.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::*;

pub(super) type Res<T> = Result<T, ScenarioError>;

/// What a JSON value is, for messages ("found a string").
pub(super) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The decimal text of a number; `serde_json`'s `arbitrary_precision` keeps it as written, so it
/// becomes a `Fixed` without passing through a float.
fn decimal_of(value: &Value) -> Result<Fixed, String> {
    match value {
        Value::Number(n) => parse_fixed(n.as_str()),
        Value::String(s) => parse_fixed(s),
        other => Err(format!("expected a decimal number, found {}", kind(other))),
    }
}

/// A non-negative integer in `lo..=hi`, from its decimal text.
pub(super) fn uint_of(value: &Value, lo: u64, hi: u64) -> Result<u64, String> {
    let expected = |found: &str| format!("expected an integer in {lo}..={hi}, found {found}");
    let Value::Number(n) = value else { return Err(expected(kind(value))) };
    let text = n.as_str();
    match text.parse::<u64>() {
        Ok(v) if (lo..=hi).contains(&v) && text.bytes().all(|b| b.is_ascii_digit()) => Ok(v),
        _ => Err(expected(text)),
    }
}

/// An exact decimal (a JSON number, or a string holding one) as the nearest `Fixed`: the
/// `deserialize_with` of every decimal field.
pub(super) fn decimal<'de, D: Deserializer<'de>>(d: D) -> Result<Fixed, D::Error> {
    decimal_of(&Value::deserialize(d)?).map_err(de::Error::custom)
}

/// An optional exact decimal (with `#[serde(default)]`).
pub(super) fn some_decimal<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Fixed>, D::Error> {
    decimal(d).map(Some)
}

/// A decimal as the canonical text writes it: the shortest decimal that reads back to the same
/// `Fixed` (its `Display`), as a JSON number (`arbitrary_precision` writes the text as it is).
/// The `serialize_with` of every decimal field.
pub(super) fn write_decimal<S: serde::Serializer>(value: &Fixed, s: S) -> Result<S::Ok, S::Error> {
    let number: serde_json::Number = value.to_string().parse().map_err(serde::ser::Error::custom)?;
    serde::Serialize::serialize(&number, s)
}

/// An optional decimal (with `skip_serializing_if = "Option::is_none"`, so always `Some`).
pub(super) fn write_some_decimal<S: serde::Serializer>(value: &Option<Fixed>, s: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(value) => write_decimal(value, s),
        None => s.serialize_none(),
    }
}

/// An exact decimal inside a list or a point.
#[derive(Clone, Copy, Debug)]
pub(super) struct Dec(pub(super) Fixed);

impl serde::Serialize for Dec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        write_decimal(&self.0, s)
    }
}

impl<'de> Deserialize<'de> for Dec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        decimal(d).map(Dec)
    }
}

/// A non-negative integer in `LO..=HI` (the default, 0, only to build a file model to write).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Int<const LO: u64, const HI: u64>(pub(super) u64);

impl<const LO: u64, const HI: u64> serde::Serialize for Int<LO, HI> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl<'de, const LO: u64, const HI: u64> Deserialize<'de> for Int<LO, HI> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        uint_of(&Value::deserialize(d)?, LO, HI).map(Int).map_err(de::Error::custom)
    }
}

impl<const LO: u64, const HI: u64> Int<LO, HI> {
    /// The value; `HI` fits the field it is read into, so the cast keeps it.
    pub(super) fn get<T: TryFrom<u64>>(self) -> T {
        T::try_from(self.0).unwrap_or_else(|_| unreachable!("an Int's bound fits its field"))
    }
}

/// A point `[x, z]` of exact decimals.
#[derive(Clone, Copy, Debug)]
pub(super) struct Point(pub(super) WorldPos);

impl serde::Serialize for Point {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serde::Serialize::serialize(&[Dec(self.0.x), Dec(self.0.z)], s)
    }
}

impl<'de> Deserialize<'de> for Point {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Point;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a point [x, z]")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Point, A::Error> {
                let x = seq.next_element::<Dec>()?;
                let z = seq.next_element::<Dec>()?;
                match (x, z, seq.next_element::<IgnoredAny>()?) {
                    (Some(x), Some(z), None) => Ok(Point(WorldPos::new(x.0, z.0))),
                    _ => Err(de::Error::custom("expected a point [x, z] of two numbers")),
                }
            }
        }
        d.deserialize_seq(V)
    }
}

/// A list of at most `MAX` entries; a longer one is refused as soon as it passes the limit, so a
/// huge list never allocates more than the limit.
#[derive(Clone, Debug)]
pub(super) struct Capped<T, const MAX: usize>(pub(super) Vec<T>);

impl<T: serde::Serialize, const MAX: usize> serde::Serialize for Capped<T, MAX> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serde::Serialize::serialize(&self.0, s)
    }
}

impl<'de, T: Deserialize<'de>, const MAX: usize> Deserialize<'de> for Capped<T, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T, const MAX: usize>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>, const MAX: usize> Visitor<'de> for V<T, MAX> {
            type Value = Capped<T, MAX>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "an array of at most {MAX} entries")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    if items.len() == MAX {
                        return Err(de::Error::custom(format!("expected at most {MAX} entries, found more")));
                    }
                    items.push(item);
                }
                Ok(Capped(items))
            }
        }
        d.deserialize_seq(V(PhantomData))
    }
}

/// A non-empty string of at most [`MAX_NAME_BYTES`]: a group, obstruction, formation, area or
/// file name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Name(pub(super) String);

impl serde::Serialize for Name {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        check_name(&s).map_err(de::Error::custom)?;
        Ok(Name(s))
    }
}

fn check_name(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("expected a non-empty name".into());
    }
    if s.len() > MAX_NAME_BYTES {
        return Err(format!("expected a string of at most {MAX_NAME_BYTES} bytes, found {} bytes", s.len()));
    }
    Ok(())
}

/// A string of at most `MAX` bytes (a description or comment).
#[derive(Clone, Debug)]
pub(super) struct Text<const MAX: usize>(pub(super) String);

impl<const MAX: usize> serde::Serialize for Text<MAX> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de, const MAX: usize> Deserialize<'de> for Text<MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.len() > MAX {
            return Err(de::Error::custom(format!("expected a string of at most {MAX} bytes, found {} bytes", s.len())));
        }
        Ok(Text(s))
    }
}

/// Line and column of a value at a JSON path of `text` (which `serde_json` has accepted), as
/// `pathing::json::locate` finds it: just inside an object or array, just after any other value.
pub(super) fn locate(text: &str, path: &str) -> Option<(u32, u32)> {
    let (line, column) = pathing::json::locate(text, path)?;
    Some((u32::try_from(line).ok()?, u32::try_from(column).ok()?))
}

/// A `serde_json` error in `text` as a [`ScenarioError`] of `origin`: its line and column, and the
/// JSON path `serde_path_to_error` tracked (none for a syntax error, which is about the text).
/// serde finds a missing field at the end of its object; the error is put at the object's start.
/// A repeated key is at its second occurrence.
fn from_serde(text: &str, origin: &str, e: serde_path_to_error::Error<serde_json::Error>) -> ScenarioError {
    let path = e.path().to_string();
    let inner = e.into_inner();
    let (line, column) = (inner.line(), inner.column());
    let message = inner.to_string();
    let suffix = format!(" at line {line} column {column}");
    let message = message.strip_suffix(&suffix).unwrap_or(&message).to_string();
    let syntax = matches!(inner.classify(), serde_json::error::Category::Syntax | serde_json::error::Category::Eof);
    let mut path = if syntax || path == "." { String::new() } else { path };
    // serde names a repeated key in the message only; the path names it too, like an unknown one.
    if let Some(key) = message.strip_prefix("duplicate field `").and_then(|rest| rest.strip_suffix('`')) {
        path = join(&path, key);
    }
    let at = if message.starts_with("missing field") { locate(text, &path) } else { None };
    let (line, column) = at.unwrap_or((u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(column).unwrap_or(u32::MAX)));
    ScenarioError { origin: origin.to_string(), line: Some(line), column: Some(column), path, message, source: Some(Box::new(inner)) }
}

/// Deserializes the whole of `text` as a `T`, refusing trailing characters.
pub(super) fn from_text<'t, T: Deserialize<'t>>(text: &'t str, origin: &str) -> Res<T> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| from_serde(text, origin, e))?;
    de.end().map_err(|inner| {
        let (line, column) = (inner.line(), inner.column());
        let message = inner.to_string();
        let suffix = format!(" at line {line} column {column}");
        ScenarioError {
            origin: origin.to_string(),
            line: u32::try_from(line).ok(),
            column: u32::try_from(column).ok(),
            path: String::new(),
            message: message.strip_suffix(&suffix).unwrap_or(&message).to_string(),
            source: Some(Box::new(inner)),
        }
    })?;
    Ok(value)
}

/// What the checks after deserialization refer to: the text's origin, the text (to find a
/// value's line and column from its path) and the version the file declares.
#[derive(Clone, Copy)]
pub(super) struct Cx<'a> {
    pub(super) origin: &'a str,
    pub(super) text: &'a str,
    /// The version the file declares (once read; [`SCENARIO_VERSION`] until then).
    pub(super) version: u32,
    /// The rulesets the program knows.
    pub(super) rulesets: &'a crate::rules::Rulesets,
    /// The scenario's game rules, once its `rules` key is read.
    pub(super) rules: Option<&'a std::sync::Arc<dyn crate::rules::Ruleset>>,
}

impl Cx<'_> {
    /// An error about the value at `path`.
    pub(super) fn err(&self, path: &str, message: impl Into<String>) -> ScenarioError {
        let at = locate(self.text, path);
        ScenarioError {
            origin: self.origin.to_string(),
            line: at.map(|(line, _)| line),
            column: at.map(|(_, column)| column),
            path: path.to_string(),
            message: message.into(),
            source: None,
        }
    }

    /// A non-negative integer at most `max`.
    pub(super) fn uint(&self, value: &Value, path: &str, max: u64) -> Res<u64> {
        uint_of(value, 0, max).map_err(|m| self.err(path, m))
    }

    /// A name (see [`Name`]) given as a JSON value.
    pub(super) fn name<'v>(&self, value: &'v Value, path: &str) -> Res<&'v str> {
        let Value::String(s) = value else { return Err(self.err(path, format!("expected a string, found {}", kind(value)))) };
        check_name(s).map_err(|m| self.err(path, m))?;
        Ok(s)
    }

    /// Refuses `key` (a row of [`INTRODUCED`]) at `path` when the file declares a version before
    /// the one that introduced it: an older file that uses a newer feature would otherwise be
    /// read as if it had declared the newer version.
    pub(super) fn since(&self, path: &str, key: &str) -> Res<()> {
        let introduced = introduced_in(key);
        if self.version < introduced {
            return Err(self.err(
                path,
                format!(
                    "`{key}` was introduced in version {introduced}, found version {} (declare version {introduced} or later)",
                    self.version
                ),
            ));
        }
        Ok(())
    }
}

/// `path.key`, or `key` at the top.
pub(super) fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

/// The one present of `kinds` (given as `(key, present)`), or the error at `path` when none or
/// more than one is.
pub(super) fn one_of<'k>(cx: &Cx, path: &str, kinds: &[(&'k str, bool)]) -> Res<&'k str> {
    let present: Vec<&str> = kinds.iter().filter(|(_, p)| *p).map(|(k, _)| *k).collect();
    let list = kinds.iter().map(|(k, _)| format!("`{k}`")).collect::<Vec<_>>().join(", ");
    match present.as_slice() {
        [key] => Ok(key),
        [] => Err(cx.err(path, format!("expected one of {list}"))),
        _ => Err(cx.err(path, format!("expected only one of {list}"))),
    }
}

/// A `T` that must be a JSON object: serde's derived structs also take an array of their fields
/// in order, which a scenario file never is.
pub(super) struct Object<T>(pub(super) T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Object<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a scenario object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Object<T>, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(Object)
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}
