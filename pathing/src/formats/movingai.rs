//! Reading and writing the Moving AI Lab grid benchmark formats: `.map` grids and `.map.scen` problem lists.
//!
//! A `.map` file is four header lines (`type octile`, `height H`, `width W`, `map`) followed by `H`
//! rows of exactly `W` characters. Moving AI puts `(x, y) = (0, 0)` at the top-left cell, with `y`
//! growing down the file; navcells have `j` growing north, so the top file row becomes `j = H - 1`
//! and file `(x, y)` is navcell `(x, H - 1 - y)`.
//!
//! Terrain characters map onto two passability classes, as Moving AI's own code decides step
//! legality: [`LAND`] (`.`, `G`, `S`) and [`WATER`] (`W`); `T`, `@` and `O` block both.
//!
//! Parsing never panics and never allocates more than a small multiple of the input length; every
//! error is a [`ParseError`] that names the 1-based line and what was expected there.

use crate::geometry::Fixed;
use crate::grid::cell_kind::CellKind;
use crate::grid::nav_grid::{NavGrid, PassClass};
use crate::grid::navcell::Navcell;

/// A class known to be below the class limit, for the constants below.
const fn known_class(index: u8) -> PassClass {
    match PassClass::new(index) {
        Some(class) => class,
        // Only reachable during constant evaluation with an index of 16 or more: a compile error.
        None => panic!("class index out of range"),
    }
}

/// The land class (index 0): passable on `.`, `G` and `S` cells.
pub const LAND: PassClass = known_class(0);

/// The water class (index 1): passable on `W` cells.
pub const WATER: PassClass = known_class(1);

/// Number of passability classes in a grid built from a `.map` file.
const N_CLASSES: u8 = 2;

/// How many characters of the offending text a [`ParseError`] keeps.
const FOUND_MAX_CHARS: usize = 40;

/// The `found` text of an error at the end of the input; shown unquoted.
pub(crate) const END_OF_INPUT: &str = "<end of input>";

/// Why a text file could not be parsed: where, what was expected and what was there instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line number in the input.
    pub line: u32,
    /// What the parser expected on that line.
    pub expected: String,
    /// The offending text, cut to about 40 characters; `<end of input>` when the input ran out.
    pub found: String,
}

impl ParseError {
    /// An error at a 1-based line; `found` is cut to about 40 characters.
    pub fn new(line: u32, expected: impl Into<String>, found: &str) -> Self {
        Self { line, expected: expected.into(), found: clip(found) }
    }

    /// An error for input that ended where `expected` was still due, at the 1-based line after the last.
    pub(crate) fn end_of_input(line: u32, expected: impl Into<String>) -> Self {
        Self { line, expected: expected.into(), found: END_OF_INPUT.to_string() }
    }
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.found == END_OF_INPUT {
            write!(f, "line {}: expected {}, found {}", self.line, self.expected, END_OF_INPUT)
        } else {
            write!(f, "line {}: expected {}, found {:?}", self.line, self.expected, clip(&self.found))
        }
    }
}

impl std::error::Error for ParseError {}

/// The first [`FOUND_MAX_CHARS`] characters of `text`, with `...` appended when it was longer.
fn clip(text: &str) -> String {
    match text.char_indices().nth(FOUND_MAX_CHARS) {
        Some((cut, _)) => {
            let mut out = String::with_capacity(cut + 3);
            out.push_str(&text[..cut]);
            out.push_str("...");
            out
        }
        None => text.to_string(),
    }
}

/// A 0-based line index as a 1-based line number, saturating at `u32::MAX`.
pub(crate) fn line_number(index: usize) -> u32 {
    u32::try_from(index).map_or(u32::MAX, |i| i.saturating_add(1))
}

/// The lines of `text` split at `\n`, each with one trailing `\r` removed (CRLF files).
pub(crate) fn lines(text: &str) -> impl Iterator<Item = &str> + Clone {
    text.split('\n').map(|line| line.strip_suffix('\r').unwrap_or(line))
}

/// A non-empty string of ASCII digits as a `u32`; no sign, no spaces.
pub(crate) fn parse_u32_digits(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// A plain decimal `[+-]digits[.digits]` (at least one digit, no exponent, no underscores), rounded
/// to the nearest [`Fixed`] (ties to even) by the `fixed` crate's exact parser. `None` when the text
/// is not of that form or does not fit.
pub(crate) fn parse_decimal(text: &str) -> Option<Fixed> {
    let body = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (int_part, frac_part) = body.split_once('.').unwrap_or((body, ""));
    let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int_part.len() + frac_part.len() == 0 || !digits_only(int_part) || !digits_only(frac_part) {
        return None;
    }
    text.parse::<Fixed>().ok()
}

/// A Moving AI `.map` grid: two classes ([`LAND`], [`WATER`]), navcell size 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MovingAiMap {
    /// The grid; file `(x, y)` is navcell `(x, height - 1 - y)`.
    pub grid: NavGrid,
}

impl MovingAiMap {
    /// The navcell of Moving AI cell `(x, y)` (`y = 0` is the top file row), or `None` off the map.
    pub fn to_navcell(&self, x: u32, y: u32) -> Option<Navcell> {
        let (width, height) = (self.grid.width(), self.grid.height());
        if x >= width || y >= height {
            return None;
        }
        let i = u16::try_from(x).ok()?;
        let j = u16::try_from(height - 1 - y).ok()?;
        Some(Navcell::new(i, j))
    }

    /// The Moving AI `(x, y)` of a navcell; inverse of [`Self::to_navcell`] on the map. A navcell
    /// north of the map gives `y = 0`.
    pub fn from_navcell(&self, c: Navcell) -> (u32, u32) {
        let top = self.grid.height().saturating_sub(1);
        (u32::from(c.i), top.saturating_sub(u32::from(c.j)))
    }

    /// The map as painted navcells, in navcell order (row `j = 0`, the bottom file row, first; `i`
    /// fastest; navcell `(i, j)` is [`Self::to_navcell`]`(i, height − 1 − j)`), for
    /// [`WorldDesc::from_cells`](crate::build::passability::WorldDesc::from_cells):
    /// [`CellKind::Ground`] where [`LAND`] may go (`.`, `G`, `S`), [`CellKind::Water`] where only
    /// [`WATER`] may (`W`), [`CellKind::Blocked`] where neither may (`T`, `@`, `O`).
    pub fn cell_kinds(&self) -> Vec<CellKind> {
        // A grid built elsewhere with a single class has no water class: nothing is water there.
        let water_bit = if self.grid.n_classes() > WATER.index() { WATER.bit() } else { 0 };
        self.grid
            .blocked_masks()
            .iter()
            .map(|&mask| {
                if mask & LAND.bit() == 0 {
                    CellKind::Ground
                } else if water_bit != 0 && mask & water_bit == 0 {
                    CellKind::Water
                } else {
                    CellKind::Blocked
                }
            })
            .collect()
    }

    /// The class a Moving AI agent starting on `(x, y)` uses: [`LAND`] on `.`, `G` or `S`,
    /// [`WATER`] on `W`, `None` on a blocked cell or off the map.
    pub fn class_at(&self, x: u32, y: u32) -> Option<PassClass> {
        let cell = self.to_navcell(x, y)?;
        if self.grid.is_passable(cell, LAND) {
            Some(LAND)
        } else if self.grid.is_passable(cell, WATER) {
            Some(WATER)
        } else {
            None
        }
    }
}

/// The impassable-class mask of a Moving AI terrain character, or `None` for any other character.
fn char_mask(c: char) -> Option<u16> {
    match c {
        '.' | 'G' | 'S' => Some(WATER.bit()),
        'W' => Some(LAND.bit()),
        'T' | '@' | 'O' => Some(LAND.bit() | WATER.bit()),
        _ => None,
    }
}

/// Parses a header line `name N` with `1 ≤ N ≤ 65535`.
fn header_size(line_no: u32, line: Option<&str>, name: &str) -> Result<u32, ParseError> {
    let expected = format!("`{name} N` with N in 1..={}", crate::grid::nav_grid::MAX_SIDE);
    let Some(line) = line else {
        return Err(ParseError::end_of_input(line_no, expected));
    };
    let mut words = line.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some(key), Some(value), None) if key == name => match parse_u32_digits(value) {
            Some(n) if (1..=crate::grid::nav_grid::MAX_SIDE).contains(&n) => Ok(n),
            _ => Err(ParseError::new(line_no, expected, line)),
        },
        _ => Err(ParseError::new(line_no, expected, line)),
    }
}

/// Checks a header line that must be exactly `words` (surrounding whitespace allowed).
fn header_words(line_no: u32, line: Option<&str>, words: &[&str]) -> Result<(), ParseError> {
    let expected = format!("`{}`", words.join(" "));
    let Some(line) = line else {
        return Err(ParseError::end_of_input(line_no, expected));
    };
    if line.split_whitespace().eq(words.iter().copied()) { Ok(()) } else { Err(ParseError::new(line_no, expected, line)) }
}

/// Parses a Moving AI `.map` file (`type octile`, `height H`, `width W`, `map`, then `H` rows of `W`
/// characters from `. G S W T @ O`). A trailing `\r` is stripped from every line; empty lines may
/// follow the rows, nothing else may.
///
/// # Errors
/// [`ParseError`] naming the first bad line: a bad header, a row of the wrong length, an unknown
/// character, too few rows or text after the rows.
pub fn parse_map(text: &str) -> Result<MovingAiMap, ParseError> {
    let mut lines = lines(text);
    header_words(1, lines.next(), &["type", "octile"])?;
    let height = header_size(2, lines.next(), "height")?;
    let width = header_size(3, lines.next(), "width")?;
    header_words(4, lines.next(), &["map"])?;

    // Collect and check the rows before allocating, so the grid never outgrows the input.
    let mut rows: Vec<&str> = Vec::new();
    for y in 0..height {
        let line_no = 5u32.saturating_add(y);
        let expected = || format!("map row {} of {height} ({width} characters)", y + 1);
        let Some(row) = lines.next() else {
            return Err(ParseError::end_of_input(line_no, expected()));
        };
        if row.is_empty() {
            // An empty line where a row is due: the rows ran out, or one is missing.
            let ran_out = lines.clone().all(str::is_empty);
            return Err(if ran_out { ParseError::end_of_input(line_no, expected()) } else { ParseError::new(line_no, expected(), row) });
        }
        check_map_row(line_no, row, width)?;
        rows.push(row);
    }
    for (k, rest) in lines.enumerate() {
        if !rest.is_empty() {
            let line_no = 5u32.saturating_add(height).saturating_add(line_number(k)).saturating_sub(1);
            return Err(ParseError::new(line_no, format!("end of input after the {height} map rows"), rest));
        }
    }

    let mut grid =
        NavGrid::new(width, height, N_CLASSES, Fixed::ONE).map_err(|e| ParseError::new(2, "a valid map size", &e.to_string()))?;
    for (y, row) in (0u32..).zip(&rows) {
        let j = height - 1 - y;
        for (x, c) in (0u32..).zip(row.chars()) {
            let (Ok(i), Ok(j), Some(mask)) = (u16::try_from(x), u16::try_from(j), char_mask(c)) else {
                continue; // unreachable: rows were checked above
            };
            grid.set_blocked_mask(Navcell::new(i, j), mask);
        }
    }
    Ok(MovingAiMap { grid })
}

/// Checks one `.map` row: exactly `width` terrain characters.
fn check_map_row(line_no: u32, row: &str, width: u32) -> Result<(), ParseError> {
    let mut count: u32 = 0;
    for c in row.chars() {
        if char_mask(c).is_none() {
            let expected = format!("a map character (one of . G S W T @ O) at column {}", count.saturating_add(1));
            return Err(ParseError::new(line_no, expected, c.encode_utf8(&mut [0; 4])));
        }
        count = count.saturating_add(1);
    }
    if count != width {
        return Err(ParseError::new(line_no, format!("a map row of {width} characters (this one has {count})"), row));
    }
    Ok(())
}

/// Writes a map as a `.map` file with LF line endings: `.` where land may go, `W` where only water
/// may go, `@` where neither may. Trees are written as `@` (both block every class), so
/// `parse_map(&write_map(m)) == m` for every map `parse_map` produced.
pub fn write_map(map: &MovingAiMap) -> String {
    let (width, height) = (map.grid.width(), map.grid.height());
    let mut out = String::with_capacity((width as usize + 1) * height as usize + 40);
    out.push_str(&format!("type octile\nheight {height}\nwidth {width}\nmap\n"));
    for y in 0..height {
        for x in 0..width {
            let c = match map.to_navcell(x, y) {
                Some(cell) if map.grid.is_passable(cell, LAND) => '.',
                Some(cell) if map.grid.is_passable(cell, WATER) => 'W',
                _ => '@',
            };
            out.push(c);
        }
        out.push('\n');
    }
    out
}

/// One problem of a `.map.scen` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenProblem {
    /// 1-based line of the problem in the file.
    pub line: u32,
    /// Length bucket (roughly `floor(optimal_length / 4)`).
    pub bucket: u32,
    /// Map name as written (older files include a directory).
    pub map_name: String,
    /// Map width the problem was made for. `[Units: cells]`
    pub width: u32,
    /// Map height the problem was made for. `[Units: cells]`
    pub height: u32,
    /// Start `(x, y)`, Moving AI coordinates (`y = 0` is the top row).
    pub start: (u32, u32),
    /// Goal `(x, y)`, Moving AI coordinates.
    pub goal: (u32, u32),
    /// The optimal length exactly as written in the file.
    pub optimal_length: String,
    /// The optimal length rounded to the nearest [`Fixed`] (ties to even).
    pub optimal_fixed: Fixed,
}

/// The nine fields of a scenario line, for error messages.
const SCEN_FIELDS: &str = "bucket map width height start_x start_y goal_x goal_y optimal_length";

/// Parses a Moving AI `.map.scen` file: a first line `version 1` (or `1.0`, `1.00`), then one problem
/// per non-empty line with nine fields separated by tabs or spaces. A trailing `\r` is stripped from
/// every line.
///
/// # Errors
/// [`ParseError`] naming the first bad line and field.
pub fn parse_scen(text: &str) -> Result<Vec<ScenProblem>, ParseError> {
    let mut lines = lines(text);
    let version_expected = "`version 1`, `version 1.0` or `version 1.00`";
    let Some(first) = lines.next() else {
        return Err(ParseError::end_of_input(1, version_expected));
    };
    let mut words = first.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some("version"), Some("1" | "1.0" | "1.00"), None) => {}
        _ => return Err(ParseError::new(1, version_expected, first)),
    }

    let mut problems = Vec::new();
    for (k, line) in lines.enumerate() {
        let line_no = line_number(k).saturating_add(1);
        let mut fields = line.split([' ', '\t']).filter(|f| !f.is_empty());
        let mut field = [""; 9];
        let mut n = 0usize;
        for f in fields.by_ref() {
            if n == field.len() {
                n += 1;
                break;
            }
            field[n] = f;
            n += 1;
        }
        if n == 0 {
            continue;
        }
        if n != field.len() {
            return Err(ParseError::new(line_no, format!("9 fields ({SCEN_FIELDS})"), line));
        }
        let number = |index: usize, name: &str| {
            parse_u32_digits(field[index])
                .ok_or_else(|| ParseError::new(line_no, format!("{name} (field {}) as an unsigned integer", index + 1), field[index]))
        };
        let bucket = number(0, "bucket")?;
        let width = number(2, "width")?;
        let height = number(3, "height")?;
        let start = (number(4, "start_x")?, number(5, "start_y")?);
        let goal = (number(6, "goal_x")?, number(7, "goal_y")?);
        let optimal_fixed = parse_decimal(field[8])
            .ok_or_else(|| ParseError::new(line_no, "optimal_length (field 9) as a decimal number within the Fixed range", field[8]))?;
        problems.push(ScenProblem {
            line: line_no,
            bucket,
            map_name: field[1].to_string(),
            width,
            height,
            start,
            goal,
            optimal_length: field[8].to_string(),
            optimal_fixed,
        });
    }
    Ok(problems)
}

/// Checks scenario problems against their map: same width and height, start and goal on the map.
///
/// # Errors
/// [`ParseError`] at the line of the first problem that does not fit.
pub fn check_against_map(problems: &[ScenProblem], map: &MovingAiMap) -> Result<(), ParseError> {
    let (width, height) = (map.grid.width(), map.grid.height());
    for p in problems {
        if (p.width, p.height) != (width, height) {
            let found = format!("{}x{}", p.width, p.height);
            return Err(ParseError::new(p.line, format!("the map size {width}x{height} (width x height)"), &found));
        }
        for (name, (x, y)) in [("start", p.start), ("goal", p.goal)] {
            if x >= width || y >= height {
                let found = format!("({x}, {y})");
                return Err(ParseError::new(p.line, format!("a {name} inside the {width}x{height} map"), &found));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ARENA_MAP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/movingai/arena.map");
    const ARENA_SCEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/movingai/arena.map.scen");

    fn err(result: Result<impl std::fmt::Debug, ParseError>) -> ParseError {
        match result {
            Ok(v) => panic!("expected an error, parsed {v:?}"),
            Err(e) => e,
        }
    }

    const SMALL: &str = "type octile\nheight 3\nwidth 4\nmap\n.GSW\nT@O.\n..W@\n";

    #[test]
    fn every_character_maps_to_its_classes() {
        let map = parse_map(SMALL).unwrap();
        map.grid.check_invariants().unwrap();
        assert_eq!(map.grid.n_classes(), 2);
        assert_eq!(map.grid.cell_size(), Fixed::ONE);
        let expect = [
            ((0, 0), Some(LAND)),
            ((1, 0), Some(LAND)),
            ((2, 0), Some(LAND)),
            ((3, 0), Some(WATER)),
            ((0, 1), None),
            ((1, 1), None),
            ((2, 1), None),
            ((3, 1), Some(LAND)),
            ((2, 2), Some(WATER)),
            ((3, 2), None),
        ];
        for ((x, y), class) in expect {
            assert_eq!(map.class_at(x, y), class, "cell ({x}, {y})");
            let cell = map.to_navcell(x, y).unwrap();
            assert_eq!(map.grid.is_passable(cell, LAND), class == Some(LAND));
            assert_eq!(map.grid.is_passable(cell, WATER), class == Some(WATER));
        }
        assert_eq!(map.class_at(4, 0), None);
        assert_eq!(map.class_at(0, 3), None);
        assert_eq!(LAND.index(), 0);
        assert_eq!(WATER.index(), 1);
    }

    #[test]
    fn the_top_file_row_is_the_north_row() {
        let map = parse_map(SMALL).unwrap();
        assert_eq!(map.to_navcell(0, 0), Some(Navcell::new(0, 2)));
        assert_eq!(map.to_navcell(3, 2), Some(Navcell::new(3, 0)));
        assert_eq!(map.to_navcell(4, 0), None);
        assert_eq!(map.to_navcell(0, 3), None);
        assert_eq!(map.from_navcell(Navcell::new(0, 2)), (0, 0));
        assert_eq!(map.from_navcell(Navcell::new(3, 0)), (3, 2));
        // Row "T@O." is y = 1, navcell j = 1; its '.' is passable for land.
        assert!(map.grid.is_passable(Navcell::new(3, 1), LAND));
        // Top row ".GSW": navcell (3, 2) is water.
        assert!(map.grid.is_passable(Navcell::new(3, 2), WATER));
        assert!(!map.grid.is_passable(Navcell::new(3, 2), LAND));
        for y in 0..3 {
            for x in 0..4 {
                assert_eq!(map.from_navcell(map.to_navcell(x, y).unwrap()), (x, y));
            }
        }
    }

    #[test]
    fn crlf_and_trailing_empty_lines_are_accepted() {
        let crlf = SMALL.replace('\n', "\r\n");
        assert_eq!(parse_map(&crlf).unwrap(), parse_map(SMALL).unwrap());
        let no_final_newline = SMALL.trim_end();
        assert_eq!(parse_map(no_final_newline).unwrap(), parse_map(SMALL).unwrap());
        let extra = format!("{SMALL}\n\r\n\n");
        assert_eq!(parse_map(&extra).unwrap(), parse_map(SMALL).unwrap());
    }

    #[test]
    fn write_is_canonical_and_round_trips() {
        let map = parse_map(SMALL).unwrap();
        let text = write_map(&map);
        assert_eq!(text, "type octile\nheight 3\nwidth 4\nmap\n...W\n@@@.\n..W@\n");
        assert_eq!(parse_map(&text).unwrap(), map);
        assert_eq!(write_map(&parse_map(&text).unwrap()), text, "canonical text is byte-exact");
    }

    #[test]
    fn errors_name_the_line_and_what_was_expected() {
        let bad_header = err(parse_map("type octile\nheight 3\nwidht 4\nmap\n"));
        assert_eq!(bad_header.line, 3);
        assert!(bad_header.expected.contains("width"), "{bad_header}");
        assert_eq!(err(parse_map("type grid\n")).line, 1);
        assert_eq!(err(parse_map("")).line, 1);
        assert_eq!(err(parse_map("type octile\nheight 0\nwidth 4\nmap\n")).line, 2);
        assert_eq!(err(parse_map("type octile\nheight 3\nwidth 4\nmapp\n")).line, 4);

        let short_row = err(parse_map("type octile\nheight 3\nwidth 4\nmap\n....\n...\n....\n"));
        assert_eq!(short_row.line, 6);
        assert!(short_row.expected.contains("4 characters"), "{short_row}");
        let long_row = err(parse_map("type octile\nheight 3\nwidth 4\nmap\n....\n....\n.....\n"));
        assert_eq!(long_row.line, 7);

        let bad_char = err(parse_map("type octile\nheight 3\nwidth 4\nmap\n....\n..x.\n....\n"));
        assert_eq!((bad_char.line, bad_char.found.as_str()), (6, "x"));
        assert!(bad_char.expected.contains("column 3"), "{bad_char}");

        let few_rows = err(parse_map("type octile\nheight 3\nwidth 4\nmap\n....\n....\n"));
        assert_eq!(few_rows.line, 7, "{few_rows}");
        let no_rows = err(parse_map("type octile\nheight 3\nwidth 4\nmap"));
        assert_eq!(no_rows.line, 5);
        assert_eq!(no_rows.to_string(), "line 5: expected map row 1 of 3 (4 characters), found <end of input>");

        let junk = err(parse_map("type octile\nheight 3\nwidth 4\nmap\n....\n....\n....\n\njunk\n"));
        assert_eq!((junk.line, junk.found.as_str()), (9, "junk"));
        let junk_crlf = err(parse_map(&"type octile\nheight 1\nwidth 1\nmap\n.\n.\n".replace('\n', "\r\n")));
        assert_eq!(junk_crlf.line, 6);
    }

    #[test]
    fn display_quotes_and_truncates_found() {
        let long = "x".repeat(100);
        let e = ParseError::new(7, "something", &long);
        assert_eq!(e.to_string(), format!("line 7: expected something, found \"{}...\"", "x".repeat(40)));
        let e = ParseError { line: 2, expected: "a".into(), found: "é".repeat(50) };
        assert_eq!(e.to_string(), format!("line 2: expected a, found \"{}...\"", "é".repeat(40)));
    }

    #[test]
    fn oversized_headers_do_not_allocate() {
        let e = err(parse_map("type octile\nheight 65535\nwidth 65535\nmap\n"));
        assert_eq!(e.line, 5);
        assert_eq!(err(parse_map("type octile\nheight 65536\nwidth 1\nmap\n")).line, 2);
    }

    const SCEN: &str = "version 1\n0\tarena.map\t49\t49\t19\t26\t19\t29\t3.00000000\n\n0 maps/a.map  49 49 1 2 3 4   2.41421356\r\n";

    #[test]
    fn scenarios_keep_every_field() {
        let problems = parse_scen(SCEN).unwrap();
        assert_eq!(problems.len(), 2);
        let p = &problems[0];
        assert_eq!((p.line, p.bucket, p.map_name.as_str()), (2, 0, "arena.map"));
        assert_eq!((p.width, p.height, p.start, p.goal), (49, 49, (19, 26), (19, 29)));
        assert_eq!(p.optimal_length, "3.00000000");
        assert_eq!(p.optimal_fixed, Fixed::from_num(3));
        let q = &problems[1];
        assert_eq!((q.line, q.map_name.as_str(), q.optimal_length.as_str()), (4, "maps/a.map", "2.41421356"));
        assert_eq!(q.optimal_fixed, "2.41421356".parse::<Fixed>().unwrap());
        for version in ["version 1.0\n", "version 1.00\r\n", "version 1"] {
            assert_eq!(parse_scen(version).unwrap(), Vec::new());
        }
    }

    #[test]
    fn bad_scenario_fields_are_reported() {
        assert_eq!(err(parse_scen("version 2\n")).line, 1);
        assert_eq!(err(parse_scen("")).line, 1);
        let few = err(parse_scen("version 1\n0 a.map 49 49 1 2 3 4\n"));
        assert_eq!(few.line, 2);
        let many = err(parse_scen("version 1\n\n0 a.map 49 49 1 2 3 4 5.0 6\n"));
        assert_eq!(many.line, 3);
        let bad_x = err(parse_scen("version 1\n0 a.map 49 49 1 2 3 4 5.0\n0 a.map 49 49 -1 2 3 4 5.0\n"));
        assert_eq!((bad_x.line, bad_x.found.as_str()), (3, "-1"));
        assert!(bad_x.expected.contains("start_x"), "{bad_x}");
        let bad_width = err(parse_scen("version 1\n0 a.map 4x9 49 1 2 3 4 5.0\n"));
        assert!(bad_width.expected.contains("width"), "{bad_width}");
        let bad_len = err(parse_scen("version 1\n0 a.map 49 49 1 2 3 4 1e5\n"));
        assert!(bad_len.expected.contains("optimal_length"), "{bad_len}");
    }

    #[test]
    fn problems_are_checked_against_the_map() {
        let map = parse_map(SMALL).unwrap();
        let ok = parse_scen("version 1\n0 m 4 3 0 0 3 2 3\n").unwrap();
        check_against_map(&ok, &map).unwrap();
        let wrong_size = parse_scen("version 1\n0 m 4 3 0 0 3 2 3\n0 m 3 4 0 0 1 1 1\n").unwrap();
        let e = check_against_map(&wrong_size, &map).unwrap_err();
        assert_eq!((e.line, e.found.as_str()), (3, "3x4"));
        let off = parse_scen("version 1\n\n0 m 4 3 0 0 4 2 3\n").unwrap();
        let e = check_against_map(&off, &map).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.expected.contains("goal"), "{e}");
    }

    #[test]
    fn the_arena_benchmark_parses() {
        let map = parse_map(&std::fs::read_to_string(ARENA_MAP).unwrap()).unwrap();
        assert_eq!((map.grid.width(), map.grid.height()), (49, 49));
        map.grid.check_invariants().unwrap();
        let problems = parse_scen(&std::fs::read_to_string(ARENA_SCEN).unwrap()).unwrap();
        assert_eq!(problems.len(), 130);
        check_against_map(&problems, &map).unwrap();
        for p in &problems {
            assert_eq!(map.class_at(p.start.0, p.start.1), Some(LAND), "line {}", p.line);
            assert_eq!(map.class_at(p.goal.0, p.goal.1), Some(LAND), "line {}", p.line);
        }
        assert_eq!(problems[0].start, (19, 26));
        assert_eq!(parse_map(&write_map(&map)).unwrap(), map);
    }

    /// A cell as the parser can produce it: land, water or blocked.
    fn cell_char() -> impl Strategy<Value = char> {
        prop::sample::select(vec!['.', 'G', 'S', 'W', 'T', '@', 'O'])
    }

    proptest! {
        #[test]
        fn random_maps_round_trip(
            width in 1usize..8,
            height in 1usize..8,
            cells in prop::collection::vec(cell_char(), 49),
            crlf in any::<bool>(),
        ) {
            let mut text = format!("type octile\nheight {height}\nwidth {width}\nmap\n");
            for y in 0..height {
                text.extend(&cells[y * width..(y + 1) * width]);
                text.push('\n');
            }
            if crlf {
                text = text.replace('\n', "\r\n");
            }
            let map = parse_map(&text).unwrap();
            for y in 0..height {
                for x in 0..width {
                    let expect = match cells[y * width + x] {
                        '.' | 'G' | 'S' => Some(LAND),
                        'W' => Some(WATER),
                        _ => None,
                    };
                    prop_assert_eq!(map.class_at(x as u32, y as u32), expect);
                }
            }
            let written = write_map(&map);
            let again = parse_map(&written).unwrap();
            prop_assert_eq!(&again, &map);
            prop_assert_eq!(write_map(&again), written);
        }

        #[test]
        fn parse_never_panics(text in ".{0,200}") {
            let _ = parse_map(&text);
            let _ = parse_scen(&text);
        }

        #[test]
        fn parse_never_panics_on_near_misses(body in "[.GSWT@Ox\r\n 0-9]{0,80}", h in 0u32..5, w in 0u32..5) {
            let _ = parse_map(&format!("type octile\nheight {h}\nwidth {w}\nmap\n{body}"));
            let _ = parse_scen(&format!("version 1\n{body}"));
        }
    }
}
