//! The plain-text walkable-grid format: a `key value` header, then rows of `1` (walkable) / `0` (blocked).
//!
//! ```text
//! cellSize 0.4
//! minX -5.0
//! minZ -5.0
//! gridWidth 4
//! gridDepth 2
//! 1111
//! 1001
//! ```
//!
//! Header keys may come in any order and unknown keys are kept. The header ends at the first line
//! made only of `0`/`1` characters. Row `k` of the grid (0-based, counted after the header) is
//! `z` index `k`, i.e. navcell row `j = k`; character `i` of a row is navcell column `i`. Numbers are
//! read exactly into [`Fixed`] (nearest value, ties to even): no floating point anywhere.
//!
//! Parsing never panics and never allocates more than a small multiple of the input length.

use std::collections::BTreeSet;

use crate::formats::movingai::{ParseError, line_number, lines, parse_decimal, parse_u32_digits};
use crate::geometry::Fixed;
use crate::grid::cell_kind::CellKind;
use crate::grid::nav_grid::{MAX_CELL_SIZE, MAX_SIDE, NavGrid, PassClass};
use crate::grid::navcell::Navcell;

/// Navcell size when the header has no `cellSize`. `[Units: metres]`
const DEFAULT_CELL_SIZE: Fixed = Fixed::lit("0.4");

/// The one class of a parsed grid: walkable.
pub const WALKABLE: PassClass = match PassClass::new(0) {
    Some(class) => class,
    // Only reachable during constant evaluation: a compile error, never a run-time panic.
    None => panic!("class 0 exists"),
};

/// Header keys whose values must be decimal numbers.
const DECIMAL_KEYS: [&str; 7] = ["cellSize", "agentRadius", "objectPadding", "boundaryPadding", "floorY", "minX", "minZ"];

/// A parsed grid file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GridText {
    /// Every header line as `(key, value)`, in file order, value without surrounding whitespace.
    pub header: Vec<(String, String)>,
    /// `cellSize`, 0.4 when absent. `[Units: metres] [Limit: > 0]`
    pub cell_size: Fixed,
    /// `minX`, the west edge of column 0; 0 when absent. `[Units: metres]`
    pub min_x: Fixed,
    /// `minZ`, the south edge of row 0; 0 when absent. `[Units: metres]`
    pub min_z: Fixed,
    /// The grid: one class, class 0 = walkable, navcell size [`Self::cell_size`].
    pub grid: NavGrid,
}

impl GridText {
    /// The grid as painted navcells, in navcell order (row `j = 0` first, `i` fastest; the file's
    /// row `k` is `j = k`), for [`WorldDesc::from_cells`](crate::build::passability::WorldDesc::from_cells):
    /// [`CellKind::Ground`] where [`WALKABLE`] may walk (`1`), [`CellKind::Blocked`] elsewhere
    /// (`0`). The format has no water. That world puts the grid's south-west corner at the origin:
    /// its world point `(x, z)` is the file's `(minX + x, minZ + z)`.
    pub fn cell_kinds(&self) -> Vec<CellKind> {
        self.grid
            .blocked_masks()
            .iter()
            .map(|&mask| if mask & WALKABLE.bit() == 0 { CellKind::Ground } else { CellKind::Blocked })
            .collect()
    }
}

/// Whether a line is a grid row: non-empty, only `0` and `1`.
fn is_row(line: &str) -> bool {
    !line.is_empty() && line.bytes().all(|b| b == b'0' || b == b'1')
}

/// Parses a grid file: `key value` header lines, then `gridDepth` rows of exactly `gridWidth`
/// characters `0`/`1`. `gridWidth` and `gridDepth` are required (1..=65535); `cellSize` defaults to
/// 0.4 and must lie in `(0, MAX_CELL_SIZE]`; `minX`/`minZ` default to 0. CRLF line endings, trailing whitespace on
/// header lines and empty lines after the rows are accepted.
///
/// # Errors
/// [`ParseError`] naming the first bad line: a malformed or repeated header line, a bad number, a
/// missing size, a row of the wrong length or with another character, too few rows, or text after
/// the rows.
pub fn parse_grid_text(text: &str) -> Result<GridText, ParseError> {
    let mut lines = lines(text).enumerate().peekable();
    let mut header: Vec<(String, String)> = Vec::new();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut cell_size = DEFAULT_CELL_SIZE;
    let (mut min_x, mut min_z) = (Fixed::ZERO, Fixed::ZERO);
    let (mut width, mut depth): (Option<u32>, Option<u32>) = (None, None);

    // The 1-based number of the line after the header.
    let mut rows_line: u32 = 1;
    while let Some(&(k, line)) = lines.peek() {
        rows_line = line_number(k);
        if is_row(line) || (line.is_empty() && lines.clone().all(|(_, rest)| rest.is_empty())) {
            break;
        }
        lines.next();
        let line_no = line_number(k);
        rows_line = line_no.saturating_add(1);
        let trimmed = line.trim_end();
        let Some((key, value)) = trimmed.split_once(char::is_whitespace).map(|(key, rest)| (key, rest.trim_start())) else {
            return Err(ParseError::new(line_no, "a header line `key value` or a grid row of 0/1 characters", line));
        };
        if key.is_empty() || value.is_empty() {
            return Err(ParseError::new(line_no, "a header line `key value` or a grid row of 0/1 characters", line));
        }
        if !seen.insert(key) {
            return Err(ParseError::new(line_no, format!("each header key once (`{key}` repeats)"), line));
        }
        if DECIMAL_KEYS.contains(&key) {
            let Some(number) = parse_decimal(value) else {
                return Err(ParseError::new(line_no, format!("a decimal number within the Fixed range for `{key}`"), value));
            };
            match key {
                "cellSize" if number <= Fixed::ZERO || number > MAX_CELL_SIZE => {
                    return Err(ParseError::new(line_no, format!("a `cellSize` in (0, {MAX_CELL_SIZE}]"), value));
                }
                "cellSize" => cell_size = number,
                "minX" => min_x = number,
                "minZ" => min_z = number,
                _ => {}
            }
        } else if key == "gridWidth" || key == "gridDepth" {
            let Some(n) = parse_u32_digits(value).filter(|n| (1..=MAX_SIDE).contains(n)) else {
                return Err(ParseError::new(line_no, format!("an integer in 1..={MAX_SIDE} for `{key}`"), value));
            };
            if key == "gridWidth" {
                width = Some(n);
            } else {
                depth = Some(n);
            }
        }
        header.push((key.to_string(), value.to_string()));
    }

    let after_header = lines.peek().map(|&(_, line)| line);
    let missing = |name: &str| match after_header {
        Some(line) if !line.is_empty() => ParseError::new(rows_line, format!("a `{name}` header line before the rows"), line),
        _ => ParseError::end_of_input(rows_line, format!("a `{name}` header line")),
    };
    let Some(width) = width else {
        return Err(missing("gridWidth"));
    };
    let Some(depth) = depth else {
        return Err(missing("gridDepth"));
    };

    // Collect and check the rows before allocating, so the grid never outgrows the input.
    let mut rows: Vec<&str> = Vec::new();
    let mut next_line = rows_line;
    for z in 0..depth {
        let expected = || format!("grid row {} of {depth} ({width} characters 0/1)", z + 1);
        let Some((k, row)) = lines.next() else {
            return Err(ParseError::end_of_input(next_line, expected()));
        };
        let line_no = line_number(k);
        next_line = line_no.saturating_add(1);
        if row.is_empty() {
            let ran_out = lines.clone().all(|(_, rest)| rest.is_empty());
            return Err(if ran_out { ParseError::end_of_input(line_no, expected()) } else { ParseError::new(line_no, expected(), row) });
        }
        check_row(line_no, row, width)?;
        rows.push(row);
    }
    for (k, rest) in lines {
        if !rest.is_empty() {
            return Err(ParseError::new(line_number(k), format!("end of input after the {depth} grid rows"), rest));
        }
    }

    let mut grid = NavGrid::new(width, depth, 1, cell_size)
        .map_err(|e| ParseError::new(rows_line, "a valid grid size and cell size", &e.to_string()))?;
    for (j, row) in (0u32..).zip(&rows) {
        for (i, c) in (0u32..).zip(row.bytes()) {
            if let (b'0', Ok(i), Ok(j)) = (c, u16::try_from(i), u16::try_from(j)) {
                grid.set_blocked_mask(Navcell::new(i, j), WALKABLE.bit());
            }
        }
    }
    Ok(GridText { header, cell_size, min_x, min_z, grid })
}

/// Checks one grid row: exactly `width` characters, each `0` or `1`.
fn check_row(line_no: u32, row: &str, width: u32) -> Result<(), ParseError> {
    let mut count: u32 = 0;
    for c in row.chars() {
        if c != '0' && c != '1' {
            let expected = format!("`0` or `1` at column {}", count.saturating_add(1));
            return Err(ParseError::new(line_no, expected, c.encode_utf8(&mut [0; 4])));
        }
        count = count.saturating_add(1);
    }
    if count != width {
        return Err(ParseError::new(line_no, format!("a grid row of {width} characters (this one has {count})"), row));
    }
    Ok(())
}

/// Writes a grid file with LF line endings: the header pairs in stored order as `key value`, then
/// one row per `z` from 0 up, `1` where class 0 may walk and `0` elsewhere. The rows follow
/// [`GridText::grid`]; keeping `gridWidth`/`gridDepth` in the header consistent with it is up to the
/// caller ([`grid_text_from_grid`] and [`parse_grid_text`] always do). A canonical file (LF, one
/// space between key and value, no trailing whitespace or empty lines) is written back byte for byte.
pub fn write_grid_text(g: &GridText) -> String {
    let (width, height) = (g.grid.width(), g.grid.height());
    let header_len: usize = g.header.iter().map(|(k, v)| k.len() + v.len() + 2).sum();
    let mut out = String::with_capacity(header_len + (width as usize + 1) * height as usize);
    for (key, value) in &g.header {
        out.push_str(key);
        out.push(' ');
        out.push_str(value);
        out.push('\n');
    }
    for j in 0..g.grid.height() {
        for i in 0..g.grid.width() {
            let cell = Navcell::new(u16::try_from(i).unwrap_or(u16::MAX), u16::try_from(j).unwrap_or(u16::MAX));
            out.push(if g.grid.is_passable(cell, WALKABLE) { '1' } else { '0' });
        }
        out.push('\n');
    }
    out
}

/// A grid file for one class of a grid: walkable where `class` may go. The header is `cellSize`
/// (the grid's navcell size), `minX`, `minZ`, `gridWidth`, `gridDepth`, numbers written by
/// [`format_fixed`]. A class the grid does not use is walkable everywhere.
pub fn grid_text_from_grid(grid: &NavGrid, class: PassClass, min_x: Fixed, min_z: Fixed) -> GridText {
    let (width, height) = (grid.width(), grid.height());
    let header = vec![
        ("cellSize".to_string(), format_fixed(grid.cell_size())),
        ("minX".to_string(), format_fixed(min_x)),
        ("minZ".to_string(), format_fixed(min_z)),
        ("gridWidth".to_string(), width.to_string()),
        ("gridDepth".to_string(), height.to_string()),
    ];
    let out = match NavGrid::new(width, height, 1, grid.cell_size()) {
        Ok(mut out) => {
            for j in 0..grid.height() {
                for i in 0..grid.width() {
                    let (Ok(i), Ok(j)) = (u16::try_from(i), u16::try_from(j)) else {
                        continue;
                    };
                    let cell = Navcell::new(i, j);
                    if !grid.is_passable(cell, class) {
                        out.set_blocked_mask(cell, WALKABLE.bit());
                    }
                }
            }
            out
        }
        // Unreachable: an existing grid's size and navcell size always pass `NavGrid::new`.
        Err(_) => grid.clone(),
    };
    GridText { header, cell_size: grid.cell_size(), min_x, min_z, grid: out }
}

/// The shortest decimal string that [`Fixed`]'s exact parser reads back as `value`, with at least one
/// digit after the point: `0.4`, `-5.0`, `0.0000152587890625`. Deterministic and exact (integer
/// arithmetic only).
pub fn format_fixed(value: Fixed) -> String {
    let bits = value.to_bits();
    let sign = if bits < 0 { "-" } else { "" };
    let magnitude = u128::from(bits.unsigned_abs());
    let int_part = magnitude >> crate::geometry::FIXED_FRAC_BITS;
    let frac_bits = magnitude & 0xFFFF;
    let mut exact = String::new();
    // Every fraction of 2^-16 is a decimal of at most 16 digits, so the loop always returns by d = 16.
    for digits in 1..=16u32 {
        let scale = 10u128.pow(digits);
        let scaled = frac_bits * scale;
        let mut frac = scaled >> 16;
        if scaled & 0xFFFF >= 0x8000 {
            frac += 1;
        }
        let (int_part, frac) = if frac == scale { (int_part + 1, 0) } else { (int_part, frac) };
        let width = digits as usize;
        exact = format!("{sign}{int_part}.{frac:0width$}");
        if parse_decimal(&exact) == Some(value) {
            return exact;
        }
    }
    exact
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const CANONICAL: &str = "cellSize 0.4\nagentRadius 0.45\nfloorY 0.0\nminX -5.0\nminZ -5.0\ngridWidth 4\ngridDepth 3\n\
                             1111\n1001\n0110\n";

    fn err(result: Result<GridText, ParseError>) -> ParseError {
        match result {
            Ok(v) => panic!("expected an error, parsed {v:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn a_canonical_file_parses_and_writes_back_byte_for_byte() {
        let g = parse_grid_text(CANONICAL).unwrap();
        g.grid.check_invariants().unwrap();
        assert_eq!(g.cell_size, Fixed::lit("0.4"));
        assert_eq!(g.grid.cell_size(), Fixed::lit("0.4"));
        assert_eq!((g.min_x, g.min_z), (Fixed::from_num(-5), Fixed::from_num(-5)));
        assert_eq!((g.grid.width(), g.grid.height(), g.grid.n_classes()), (4, 3, 1));
        assert_eq!(g.header.len(), 7);
        assert_eq!(g.header[1], ("agentRadius".to_string(), "0.45".to_string()));
        // File row k is navcell row j = k.
        let walkable = |i, j| g.grid.is_passable(Navcell::new(i, j), WALKABLE);
        assert!((0..4).all(|i| walkable(i, 0)));
        assert!(walkable(0, 1) && !walkable(1, 1) && !walkable(2, 1) && walkable(3, 1));
        assert!(!walkable(0, 2) && walkable(1, 2) && walkable(2, 2) && !walkable(3, 2));
        assert_eq!(write_grid_text(&g), CANONICAL);
        assert_eq!(parse_grid_text(&write_grid_text(&g)).unwrap(), g);
    }

    #[test]
    fn crlf_trailing_whitespace_and_defaults_are_accepted() {
        let crlf = CANONICAL.replace('\n', "\r\n");
        assert_eq!(parse_grid_text(&crlf).unwrap(), parse_grid_text(CANONICAL).unwrap());
        let sloppy = "gridDepth 1 \t\ngridWidth\t\t2\r\nunknownKey some words here  \n10\n\n\r\n";
        let g = parse_grid_text(sloppy).unwrap();
        assert_eq!(g.cell_size, DEFAULT_CELL_SIZE);
        assert_eq!((g.min_x, g.min_z), (Fixed::ZERO, Fixed::ZERO));
        assert_eq!(g.header[1], ("gridWidth".to_string(), "2".to_string()));
        assert_eq!(g.header[2], ("unknownKey".to_string(), "some words here".to_string()));
        assert_eq!(write_grid_text(&g), "gridDepth 1\ngridWidth 2\nunknownKey some words here\n10\n");
    }

    #[test]
    fn errors_name_the_line_and_what_was_expected() {
        let short = err(parse_grid_text("gridWidth 3\ngridDepth 2\n111\n11\n"));
        assert_eq!(short.line, 4);
        assert!(short.expected.contains("3 characters"), "{short}");
        let few = err(parse_grid_text("gridWidth 3\ngridDepth 3\n111\n111\n"));
        assert_eq!(few.line, 5, "{few}");
        let few_no_newline = err(parse_grid_text("gridWidth 3\ngridDepth 3\n111\n111"));
        assert_eq!(few_no_newline.to_string(), "line 5: expected grid row 3 of 3 (3 characters 0/1), found <end of input>");
        let bad_char = err(parse_grid_text("gridWidth 3\ngridDepth 2\n111\n1x1\n"));
        assert_eq!((bad_char.line, bad_char.found.as_str()), (4, "x"));
        assert!(bad_char.expected.contains("column 2"), "{bad_char}");
        let bad_header = err(parse_grid_text("gridWidth 3\nnovalue\ngridDepth 2\n111\n111\n"));
        assert_eq!(bad_header.line, 2);
        let bad_number = err(parse_grid_text("cellSize 0,4\ngridWidth 3\ngridDepth 1\n111\n"));
        assert_eq!((bad_number.line, bad_number.found.as_str()), (1, "0,4"));
        let zero_cell = err(parse_grid_text("gridWidth 3\ncellSize 0.000001\ngridDepth 1\n111\n"));
        assert_eq!(zero_cell.line, 2, "{zero_cell}");
        let negative_cell = err(parse_grid_text("gridWidth 3\ngridDepth 1\ncellSize -1\n111\n"));
        assert_eq!(negative_cell.line, 3);
        let huge_cell = err(parse_grid_text("gridWidth 3\ngridDepth 1\ncellSize 300\n111\n"));
        assert_eq!((huge_cell.line, huge_cell.found.as_str()), (3, "300"));
        let zero_width = err(parse_grid_text("gridWidth 0\ngridDepth 1\n1\n"));
        assert_eq!(zero_width.line, 1);
        let repeated = err(parse_grid_text("gridWidth 1\ngridDepth 1\ngridWidth 1\n1\n"));
        assert_eq!(repeated.line, 3);
        let missing = err(parse_grid_text("gridWidth 3\n111\n"));
        assert_eq!(missing.line, 2);
        assert!(missing.expected.contains("gridDepth"), "{missing}");
        assert_eq!(err(parse_grid_text("")).line, 1);
        let junk = err(parse_grid_text("gridWidth 1\ngridDepth 1\n1\n\n1\n"));
        assert_eq!((junk.line, junk.found.as_str()), (5, "1"));
        let huge = err(parse_grid_text("gridWidth 65535\ngridDepth 65535\n1\n"));
        assert_eq!(huge.line, 3);
    }

    #[test]
    fn fixed_formatting_is_shortest_and_exact() {
        let cases = [("0.4", "0.4"), ("-5", "-5.0"), ("0", "0.0"), ("0.45", "0.45"), ("1.5", "1.5"), ("-0.25", "-0.25")];
        for (input, expect) in cases {
            assert_eq!(format_fixed(input.parse().unwrap()), expect, "{input}");
        }
        assert_eq!(format_fixed(Fixed::DELTA), "0.00002");
        assert_eq!(format_fixed(-Fixed::DELTA), "-0.00002");
        assert_eq!(format_fixed(Fixed::MAX).parse::<Fixed>().unwrap(), Fixed::MAX);
        assert_eq!(format_fixed(Fixed::MIN), "-140737488355328.0");
        assert_eq!(format_fixed(Fixed::from_bits(0xFFFF)), "0.99998");
    }

    #[test]
    fn a_grid_becomes_a_grid_file() {
        let mut grid = NavGrid::new(3, 2, 2, Fixed::lit("0.4")).unwrap();
        let water = PassClass::new(1).unwrap();
        grid.set_passable(Navcell::new(1, 0), water, false);
        grid.set_passable(Navcell::new(2, 1), WALKABLE, false);
        let g = grid_text_from_grid(&grid, water, Fixed::lit("-5"), Fixed::lit("2.5"));
        let text = write_grid_text(&g);
        assert_eq!(text, "cellSize 0.4\nminX -5.0\nminZ 2.5\ngridWidth 3\ngridDepth 2\n101\n111\n");
        assert_eq!(parse_grid_text(&text).unwrap(), g);
    }

    proptest! {
        #[test]
        fn random_grids_round_trip(
            width in 1u32..8,
            height in 1u32..8,
            walkable in prop::collection::vec(any::<bool>(), 49),
            cell_bits in 1i64..(1 << 24),
            min_x_bits in any::<i64>(),
            min_z_bits in -(1i64 << 30)..(1 << 30),
        ) {
            let mut grid = NavGrid::new(width, height, 1, Fixed::from_bits(cell_bits)).unwrap();
            for j in 0..height {
                for i in 0..width {
                    grid.set_passable(Navcell::new(i as u16, j as u16), WALKABLE, walkable[(j * width + i) as usize]);
                }
            }
            let (min_x, min_z) = (Fixed::from_bits(min_x_bits), Fixed::from_bits(min_z_bits));
            let g = grid_text_from_grid(&grid, WALKABLE, min_x, min_z);
            prop_assert_eq!(&g.grid, &grid);
            let text = write_grid_text(&g);
            let again = parse_grid_text(&text).unwrap();
            prop_assert_eq!(&again, &g);
            prop_assert_eq!(write_grid_text(&again), text);
        }

        #[test]
        fn formatting_round_trips_and_is_shortest(bits in any::<i64>()) {
            let value = Fixed::from_bits(bits);
            let text = format_fixed(value);
            prop_assert_eq!(text.parse::<Fixed>().unwrap(), value);
            // Dropping the last fractional digit (when more than one) must not read back the same value
            // under any rounding of that shorter length, checked at both neighbours.
            let (_, frac) = text.split_once('.').unwrap();
            if frac.len() > 1 {
                let shorter = frac.len() - 1;
                let scale = 10i128.pow(shorter as u32);
                let exact_num = i128::from(bits) * scale; // value * 10^shorter * 2^16
                let lo = exact_num.div_euclid(1 << 16);
                for n in [lo, lo + 1] {
                    let sign = if n < 0 { "-" } else { "" };
                    let m = n.unsigned_abs();
                    let candidate = format!("{sign}{}.{:0w$}", m / scale as u128, m % scale as u128, w = shorter);
                    prop_assert_ne!(candidate.parse::<Fixed>().ok(), Some(value), "{} is shorter than {}", candidate, text);
                }
            }
        }

        #[test]
        fn parse_never_panics(text in ".{0,200}") {
            let _ = parse_grid_text(&text);
        }

        #[test]
        fn parse_never_panics_on_near_misses(body in "[01x \r\n.]{0,60}", w in 0u32..5, d in 0u32..5, cell in "[-0-9.]{0,6}") {
            let _ = parse_grid_text(&format!("cellSize {cell}\ngridWidth {w}\ngridDepth {d}\n{body}"));
        }
    }
}
