//! Passability classes as data: what terrain each class may stand on, how far it keeps from
//! obstacles, and which obstructions it sees; read from and written to a JSON file.
//!
//! A [`ClassSet`] holds 1 to 16 classes. Class `k` of the set is [`PassClass`] `k`, whose bit in a
//! navcell mask is `1 << k` (set = impassable), so the order of the classes in the file is the order
//! of the bits, as in 0 A.D.'s `pathfinder.xml`.
//!
//! A class passes a navcell's terrain when every bound it has holds (a missing bound is no bound):
//!
//! ```text
//! minWaterDepth ≤ depth ≤ maxWaterDepth  and  slope < maxSlope  and  minShoreDistance ≤ shore ≤ maxShoreDistance
//! ```
//!
//! The terrain values themselves (`depth`, `slope`, `shore`) are defined in [`crate::build::terrain`];
//! `docs/passability-classes.md` documents the file format, the built-in classes and the predicate.
//!
//! A set is checked when it is made ([`ClassSet::new`], [`ClassSet::parse_json`]), so every set in
//! the program is valid: names are unique and non-empty, the clearance is in
//! `0..=`[`MAX_CLEARANCE`], every bound is within ±[`WORLD_LIMIT`], the slope bound is not negative,
//! and no minimum is above its maximum.

use crate::formats::json::{JsonError, from_json, locate};
use crate::geometry::decimal::{JsonFixed, WORLD_LIMIT, deserialize_some_fixed};
use crate::geometry::{Fixed, div_ceil, raw};
use crate::grid::nav_grid::{MAX_CLASSES, PassClass};
use serde::{Deserialize, Serialize};

/// Largest clearance a class may have. Expansion by clearance `c` navcells costs time proportional
/// to `c` for round classes, and no unit keeps farther than this from walls. `[Units: metres]`
pub const MAX_CLEARANCE: Fixed = Fixed::const_from_int(64);

/// Which static obstructions a class treats as impassable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ObstructionMode {
    /// None: the class sees terrain only (0 A.D. uses such classes for AI and territory maps).
    None,
    /// The obstruction squares flagged "block pathfinding" (units).
    Pathfinding,
    /// The obstruction squares flagged "block foundation" (placing buildings).
    Foundation,
}

impl ObstructionMode {
    /// The name used in class files: `none`, `pathfinding` or `foundation`.
    pub fn name(self) -> &'static str {
        match self {
            ObstructionMode::None => "none",
            ObstructionMode::Pathfinding => "pathfinding",
            ObstructionMode::Foundation => "foundation",
        }
    }
}

/// The shape of the neighbourhood that a class's clearance blocks around an impassable navcell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClearanceShape {
    /// Every navcell within Chebyshev distance `c` (a `(2c+1)²` square), as 0 A.D. does. A unit
    /// anywhere on a passable navcell then keeps at least `c` navcell sides from impassable terrain.
    Square,
    /// Every navcell whose centre is within Euclidean distance `c` of the impassable navcell's
    /// centre (`di² + dj² ≤ c²`): rounded corners, as the 0 A.D. design wishes for. It blocks less
    /// than [`ClearanceShape::Square`], so near a corner a unit may come up to about 0.7 navcell
    /// closer than `c`.
    Round,
}

impl ClearanceShape {
    /// The name used in class files: `square` or `round`.
    pub fn name(self) -> &'static str {
        match self {
            ClearanceShape::Square => "square",
            ClearanceShape::Round => "round",
        }
    }
}

/// One passability class. Checked only as part of a [`ClassSet`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassDef {
    /// Unique, non-empty name, used to look the class up ([`ClassSet::by_name`]).
    pub name: String,
    /// How far the class keeps from impassable terrain and obstructions; every layer rounds it up
    /// to `ceil(clearance / navcell size)` whole navcells ([`ClassDef::whole_clearance`]).
    /// `[Units: metres] [Limit: 0..=MAX_CLEARANCE]`
    pub clearance: Fixed,
    /// Shape of the clearance neighbourhood.
    pub clearance_shape: ClearanceShape,
    /// Terrain must be strictly less steep than this (rise over run); `None` is no limit.
    /// `[Limit: 0..=WORLD_LIMIT]`
    pub max_slope: Option<Fixed>,
    /// Water must be at least this deep (negative: the ground may be at most that far above the
    /// water); `None` is no limit. `[Units: metres] [Limit: ±WORLD_LIMIT]`
    pub min_water_depth: Option<Fixed>,
    /// Water must be at most this deep (0: dry land or exactly at the water line); `None` is no limit.
    /// `[Units: metres] [Limit: ±WORLD_LIMIT]`
    pub max_water_depth: Option<Fixed>,
    /// The navcell must be at least this far from the nearest water navcell; `None` is no limit.
    /// `[Units: metres] [Limit: ±WORLD_LIMIT]`
    pub min_shore_distance: Option<Fixed>,
    /// The navcell must be at most this far from the nearest water navcell (so a map without water
    /// fails it everywhere); `None` is no limit. `[Units: metres] [Limit: ±WORLD_LIMIT]`
    pub max_shore_distance: Option<Fixed>,
    /// Which obstructions the class sees.
    pub obstructions: ObstructionMode,
}

impl ClassDef {
    /// A class with no terrain bound, no clearance, square shape, seeing `obstructions`.
    pub fn unbounded(name: &str, obstructions: ObstructionMode) -> Self {
        Self {
            name: name.to_string(),
            clearance: Fixed::ZERO,
            clearance_shape: ClearanceShape::Square,
            max_slope: None,
            min_water_depth: None,
            max_water_depth: None,
            min_shore_distance: None,
            max_shore_distance: None,
            obstructions,
        }
    }

    /// The clearance every layer uses, in metres: [`ClassDef::clearance_cells`] whole navcells
    /// (docs/pathfinding-rules.md, "Clearance"). Terrain dilation counts navcells; obstruction
    /// squares, obstacle polygons, range goals and foundation dispersal use this length, so a
    /// clearance that is not a whole number of navcells is rounded up alike everywhere. Saturates at
    /// [`Fixed::MAX`].
    pub fn whole_clearance(&self, cell_size: Fixed) -> Fixed {
        let metres = i128::from(self.clearance_cells(cell_size)) * raw(cell_size).max(1);
        Fixed::from_bits(i64::try_from(metres).unwrap_or(i64::MAX))
    }

    /// The clearance in navcells, `ceil(clearance / cell_size)`, exactly. A `cell_size` below the
    /// smallest positive [`Fixed`] counts as that smallest value; the result saturates at `u32::MAX`.
    pub fn clearance_cells(&self, cell_size: Fixed) -> u32 {
        let size = raw(cell_size).max(1);
        let cells = div_ceil(raw(self.clearance).max(0), size);
        u32::try_from(cells).unwrap_or(u32::MAX)
    }
}

/// Line and column (both 1-based) of a position in a class file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextPos {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in bytes).
    pub column: usize,
}

/// A rule of a valid [`ClassSet`] that some class breaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClassProblem {
    /// The set holds no class.
    NoClasses,
    /// The class at `index` (0-based) is one more than [`MAX_CLASSES`].
    TooManyClasses {
        /// 0-based index of the first class over the limit (so always 16).
        index: usize,
    },
    /// The class at `index` has an empty name.
    EmptyName {
        /// 0-based index of the class.
        index: usize,
    },
    /// Two classes have the same name.
    DuplicateName {
        /// The repeated name.
        name: String,
    },
    /// A clearance is negative or above [`MAX_CLEARANCE`].
    BadClearance {
        /// The class.
        name: String,
        /// Its clearance.
        clearance: Fixed,
    },
    /// A slope bound is negative or above [`WORLD_LIMIT`].
    BadSlope {
        /// The class.
        name: String,
        /// Its slope bound.
        max_slope: Fixed,
    },
    /// A depth or shore-distance bound is beyond ±[`WORLD_LIMIT`].
    OutOfRange {
        /// The class.
        name: String,
        /// The field, as named in class files (`minWaterDepth`, ...).
        field: &'static str,
        /// Its value.
        value: Fixed,
    },
    /// A minimum is above its maximum, so no navcell could pass.
    EmptyRange {
        /// The class.
        name: String,
        /// The minimum's field, as named in class files (`minWaterDepth` or `minShoreDistance`).
        field: &'static str,
        /// The minimum.
        min: Fixed,
        /// The maximum.
        max: Fixed,
    },
}

impl std::fmt::Display for ClassProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClassProblem::NoClasses => write!(f, "expected at least one class, found none"),
            ClassProblem::TooManyClasses { index } => {
                write!(f, "expected at most {MAX_CLASSES} classes, found a class number {}", index + 1)
            }
            ClassProblem::EmptyName { index } => write!(f, "expected a non-empty name for class number {}", index + 1),
            ClassProblem::DuplicateName { name } => {
                write!(f, "expected a class name not used before, found {name:?} a second time")
            }
            ClassProblem::BadClearance { name, clearance } => {
                write!(f, "expected a clearance in 0..={MAX_CLEARANCE} for class {name:?}, found {clearance}")
            }
            ClassProblem::BadSlope { name, max_slope } => {
                write!(f, "expected a maxSlope in 0..={WORLD_LIMIT} for class {name:?}, found {max_slope}")
            }
            ClassProblem::OutOfRange { name, field, value } => {
                write!(f, "expected {field} within ±{WORLD_LIMIT} for class {name:?}, found {value}")
            }
            ClassProblem::EmptyRange { name, field, min, max } => {
                let max_field = if *field == "minWaterDepth" { "maxWaterDepth" } else { "maxShoreDistance" };
                write!(f, "expected {field} ≤ {max_field} for class {name:?}, found {min} > {max}")
            }
        }
    }
}

/// Why a class file could not be read, or a class not found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClassFileError {
    /// The text is not JSON of the expected shape: a syntax error, an unknown field, a missing
    /// `name` or `obstructions`, a wrong type, an unknown shape or obstruction mode, or a number
    /// that is not a plain decimal within ±[`WORLD_LIMIT`].
    Syntax(JsonError),
    /// The file is well formed but a class breaks a rule of [`ClassSet`].
    Invalid {
        /// Where the offending class definition starts in the file (its `{`; for an empty list,
        /// the `]` that closes it); `None` when the classes did not come from a file ([`ClassSet::new`]).
        at: Option<TextPos>,
        /// The JSON path of the offending class (`classes[2]`, or `classes` for an empty list);
        /// empty when the classes did not come from a file.
        path: String,
        /// The rule broken.
        problem: ClassProblem,
    },
    /// No class has this name ([`ClassSet::by_name`]).
    UnknownClass {
        /// The name asked for.
        name: String,
    },
}

impl std::fmt::Display for ClassFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClassFileError::Syntax(error) => write!(f, "{error}"),
            ClassFileError::Invalid { at: Some(pos), path, problem } => write!(f, "{}:{}: at {path}: {problem}", pos.line, pos.column),
            ClassFileError::Invalid { at: None, problem, .. } => write!(f, "{problem}"),
            ClassFileError::UnknownClass { name } => write!(f, "expected the name of a passability class, found {name:?}"),
        }
    }
}

impl std::error::Error for ClassFileError {}

/// 1 to 16 valid passability classes; class `k` is [`PassClass`] `k`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassSet {
    /// `[Limit: 1..=16 entries]`, names unique and non-empty, every field in range (see the module
    /// documentation).
    classes: Vec<ClassDef>,
}

fn metres(int: i32) -> Fixed {
    Fixed::from_num(int)
}

/// `numerator / 4` metres, exactly (for the quarter-metre values of the built-in classes).
fn quarter_metres(numerator: i32) -> Fixed {
    Fixed::from_num(numerator) / 4
}

impl ClassSet {
    /// A set of classes, in bit order.
    ///
    /// # Errors
    /// [`ClassFileError::Invalid`] (with no position) naming the first rule broken.
    pub fn new(classes: Vec<ClassDef>) -> Result<Self, ClassFileError> {
        check_all(&classes).map_err(|(_, problem)| ClassFileError::Invalid { at: None, path: String::new(), problem })?;
        Ok(Self { classes })
    }

    /// The eight built-in classes, modelled on 0 A.D.'s `pathfinder.xml` (see
    /// `docs/passability-classes.md` for why each value differs where it does):
    ///
    /// | bit | name | clearance | terrain | obstructions |
    /// |---|---|---|---|---|
    /// | 0 | `default` | 1 | depth ≤ 2, slope < 1 | pathfinding |
    /// | 1 | `large` | 3 | depth ≤ 2, slope < 1 | pathfinding |
    /// | 2 | `ship` | 10 | depth ≥ 1 | pathfinding |
    /// | 3 | `ship-small` | 4 | depth ≥ 1 | pathfinding |
    /// | 4 | `building-land` | 0 | depth ≤ 0, shore ≥ 4, slope < 1 | foundation |
    /// | 5 | `building-shore` | 0 | shore ≤ 8, slope < 1.25 | foundation |
    /// | 6 | `default-terrain-only` | 1 | depth ≤ 2, slope < 1 | none |
    /// | 7 | `unrestricted` | 8 | none | none |
    ///
    /// All shapes are square, as in 0 A.D.
    pub fn zero_ad_defaults() -> Self {
        let land = |name: &str, clearance: i32| ClassDef {
            clearance: metres(clearance),
            max_slope: Some(metres(1)),
            max_water_depth: Some(metres(2)),
            ..ClassDef::unbounded(name, ObstructionMode::Pathfinding)
        };
        let ship = |name: &str, clearance: i32| ClassDef {
            clearance: metres(clearance),
            min_water_depth: Some(metres(1)),
            ..ClassDef::unbounded(name, ObstructionMode::Pathfinding)
        };
        let classes = vec![
            land("default", 1),
            land("large", 3),
            ship("ship", 10),
            ship("ship-small", 4),
            ClassDef {
                max_slope: Some(metres(1)),
                max_water_depth: Some(Fixed::ZERO),
                min_shore_distance: Some(metres(4)),
                ..ClassDef::unbounded("building-land", ObstructionMode::Foundation)
            },
            ClassDef {
                max_slope: Some(quarter_metres(5)),
                max_shore_distance: Some(metres(8)),
                ..ClassDef::unbounded("building-shore", ObstructionMode::Foundation)
            },
            // Units may not be wider than their class's clearance (docs/decisions.md, "A unit's
            // radius may not exceed its class's clearance"): `default-terrain-only` keeps
            // `default`'s 1 m, and `unrestricted` the 8 m of the widest unit a spawn accepts.
            ClassDef { obstructions: ObstructionMode::None, ..land("default-terrain-only", 1) },
            ClassDef { clearance: metres(8), ..ClassDef::unbounded("unrestricted", ObstructionMode::None) },
        ];
        Self { classes }
    }

    /// Reads a class file (format: `docs/passability-classes.md`).
    ///
    /// # Errors
    /// [`ClassFileError::Syntax`] for malformed text, [`ClassFileError::Invalid`] (with the position
    /// where the offending class starts, or of the `]` that closes the list when it is empty) when a
    /// class breaks a rule of the set. Both carry the 1-based line and column and the JSON path, and
    /// say what was expected.
    pub fn parse_json(text: &str) -> Result<Self, ClassFileError> {
        let file: RawFile = from_json(text).map_err(ClassFileError::Syntax)?;
        let classes: Vec<ClassDef> = file.classes.into_iter().map(RawClass::into_def).collect();
        check_all(&classes).map_err(|(index, problem)| {
            let path = index.map_or_else(|| "classes".to_string(), |k| format!("classes[{k}]"));
            let at = locate(text, &path).map(|(line, column)| TextPos { line, column });
            ClassFileError::Invalid { at, path, problem }
        })?;
        Ok(Self { classes })
    }

    /// The set as a class file that [`ClassSet::parse_json`] reads back to an equal set: one class
    /// per line, every class's `name`, `clearance`, `shape` and `obstructions`, and its bounds that
    /// are set, in the order of the format description. Numbers are written exactly.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\n  \"classes\": [\n");
        for (k, def) in self.classes.iter().enumerate() {
            out.push_str("    {\"name\": ");
            push_json_string(&mut out, &def.name);
            out.push_str(&format!(", \"clearance\": {}, \"shape\": \"{}\"", def.clearance, def.clearance_shape.name()));
            let bounds = [
                ("maxSlope", def.max_slope),
                ("minWaterDepth", def.min_water_depth),
                ("maxWaterDepth", def.max_water_depth),
                ("minShoreDistance", def.min_shore_distance),
                ("maxShoreDistance", def.max_shore_distance),
            ];
            for (field, value) in bounds {
                if let Some(value) = value {
                    out.push_str(&format!(", \"{field}\": {value}"));
                }
            }
            out.push_str(&format!(", \"obstructions\": \"{}\"}}", def.obstructions.name()));
            out.push_str(if k + 1 < self.classes.len() { ",\n" } else { "\n" });
        }
        out.push_str("  ]\n}\n");
        out
    }

    /// The class definition of `class`, if the set has that many classes.
    pub fn get(&self, class: PassClass) -> Option<&ClassDef> {
        self.classes.get(usize::from(class.index()))
    }

    /// The class with this name.
    ///
    /// # Errors
    /// [`ClassFileError::UnknownClass`] when no class has the name.
    pub fn by_name(&self, name: &str) -> Result<PassClass, ClassFileError> {
        self.iter()
            .find(|(_, def)| def.name == name)
            .map(|(class, _)| class)
            .ok_or_else(|| ClassFileError::UnknownClass { name: name.to_string() })
    }

    /// Number of classes. `[Limit: 1..=16]`
    pub fn len(&self) -> u8 {
        // At most 16 by construction.
        self.classes.len() as u8
    }

    /// Always `false`: a set holds at least one class.
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }

    /// The classes in bit order, with their [`PassClass`].
    pub fn iter(&self) -> impl Iterator<Item = (PassClass, &ClassDef)> + '_ {
        self.classes.iter().enumerate().filter_map(|(k, def)| PassClass::new(k as u8).map(|class| (class, def)))
    }

    /// The class definitions in bit order.
    pub fn defs(&self) -> &[ClassDef] {
        &self.classes
    }

    /// The largest clearance of any class. `[Units: metres]`
    pub fn max_clearance(&self) -> Fixed {
        self.classes.iter().map(|def| def.clearance).max().unwrap_or(Fixed::ZERO)
    }

    /// The clearance of `class` in navcells of side `cell_size` ([`ClassDef::clearance_cells`]),
    /// if the set has that class.
    pub fn clearance_cells(&self, class: PassClass, cell_size: Fixed) -> Option<u32> {
        self.get(class).map(|def| def.clearance_cells(cell_size))
    }

    /// The bits of all classes of the set.
    pub fn class_bits(&self) -> u16 {
        self.classes.iter().enumerate().fold(0, |bits, (k, _)| bits | (1 << k))
    }

    /// The bits of the classes that see `mode` obstructions.
    pub fn obstruction_bits(&self, mode: ObstructionMode) -> u16 {
        self.classes.iter().enumerate().filter(|(_, def)| def.obstructions == mode).fold(0, |bits, (k, _)| bits | (1 << k))
    }
}

/// Appends `text` as a JSON string literal.
fn push_json_string(out: &mut String, text: &str) {
    out.push('"');
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Checks one class against the rules and the classes before it.
fn check_class(index: usize, def: &ClassDef, before: &[ClassDef]) -> Result<(), ClassProblem> {
    if index >= usize::from(MAX_CLASSES) {
        return Err(ClassProblem::TooManyClasses { index });
    }
    let name = || def.name.clone();
    if def.name.is_empty() {
        return Err(ClassProblem::EmptyName { index });
    }
    if before.iter().any(|other| other.name == def.name) {
        return Err(ClassProblem::DuplicateName { name: name() });
    }
    if def.clearance < Fixed::ZERO || def.clearance > MAX_CLEARANCE {
        return Err(ClassProblem::BadClearance { name: name(), clearance: def.clearance });
    }
    if let Some(max_slope) = def.max_slope
        && (max_slope < Fixed::ZERO || max_slope > WORLD_LIMIT)
    {
        return Err(ClassProblem::BadSlope { name: name(), max_slope });
    }
    let bounds = [
        ("minWaterDepth", def.min_water_depth),
        ("maxWaterDepth", def.max_water_depth),
        ("minShoreDistance", def.min_shore_distance),
        ("maxShoreDistance", def.max_shore_distance),
    ];
    for (field, value) in bounds {
        if let Some(value) = value
            && value.abs() > WORLD_LIMIT
        {
            return Err(ClassProblem::OutOfRange { name: name(), field, value });
        }
    }
    let ranges =
        [("minWaterDepth", def.min_water_depth, def.max_water_depth), ("minShoreDistance", def.min_shore_distance, def.max_shore_distance)];
    for (field, min, max) in ranges {
        if let (Some(min), Some(max)) = (min, max)
            && min > max
        {
            return Err(ClassProblem::EmptyRange { name: name(), field, min, max });
        }
    }
    Ok(())
}

/// Checks a whole set, class by class in order; the error names the offending class's index
/// (`None` for an empty set).
fn check_all(classes: &[ClassDef]) -> Result<(), (Option<usize>, ClassProblem)> {
    for (index, def) in classes.iter().enumerate() {
        check_class(index, def, &classes[..index]).map_err(|problem| (Some(index), problem))?;
    }
    if classes.is_empty() {
        return Err((None, ClassProblem::NoClasses));
    }
    Ok(())
}

/// A class as written in a file; unchecked.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawClass {
    name: String,
    #[serde(default)]
    clearance: Option<JsonFixed>,
    #[serde(default)]
    shape: Option<ClearanceShape>,
    #[serde(default, deserialize_with = "deserialize_some_fixed")]
    max_slope: Option<Fixed>,
    #[serde(default, deserialize_with = "deserialize_some_fixed")]
    min_water_depth: Option<Fixed>,
    #[serde(default, deserialize_with = "deserialize_some_fixed")]
    max_water_depth: Option<Fixed>,
    #[serde(default, deserialize_with = "deserialize_some_fixed")]
    min_shore_distance: Option<Fixed>,
    #[serde(default, deserialize_with = "deserialize_some_fixed")]
    max_shore_distance: Option<Fixed>,
    obstructions: ObstructionMode,
}

impl RawClass {
    fn into_def(self) -> ClassDef {
        ClassDef {
            name: self.name,
            clearance: self.clearance.map_or(Fixed::ZERO, |c| c.0),
            clearance_shape: self.shape.unwrap_or(ClearanceShape::Square),
            max_slope: self.max_slope,
            min_water_depth: self.min_water_depth,
            max_water_depth: self.max_water_depth,
            min_shore_distance: self.min_shore_distance,
            max_shore_distance: self.max_shore_distance,
            obstructions: self.obstructions,
        }
    }
}

/// A class file, read without the set's rules.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    classes: Vec<RawClass>,
}

#[cfg(test)]
mod tests;
