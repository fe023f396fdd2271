//! Fuzz target bodies. Each is an ordinary function over bytes: cargo-fuzz calls it from the
//! binaries in `fuzz_targets/` (`cargo fuzz run -s none --features libfuzzer TARGET`), and the stable
//! test `corpus_replays_cleanly` runs it over every file of `corpus/TARGET/`, so the corpus is
//! checked on every `cargo test`.
//!
//! A body panics only on a real bug: a parser that panics, a round trip that changes the data, or a
//! search whose cost differs from the A* oracle.

use pathing::movingai;
use pathing::{Fixed, Goal, NavGrid, Navcell, PassClass, PassMap, Path, PathStatus, SearchLimits, SearchScratch};

/// A target body.
pub type Body = fn(&[u8]);

/// The target names, each with its body.
pub const TARGETS: [(&str, Body); 4] =
    [("movingai_map", movingai_map), ("movingai_scen", movingai_scen), ("grid_text", grid_text), ("jps_vs_astar", jps_vs_astar)];

/// Parses bytes as a Moving AI map; a parsed map must survive write → parse unchanged.
pub fn movingai_map(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(map) = movingai::parse_map(text) {
        map.grid.check_invariants().expect("parsed grids are valid");
        let again = movingai::parse_map(&movingai::write_map(&map)).expect("written maps parse");
        assert_eq!(again, map, "map changed in a write/parse round trip");
    }
}

/// Parses bytes as a Moving AI scenario file.
pub fn movingai_scen(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(problems) = movingai::parse_scen(text) {
        for p in &problems {
            assert!(p.line >= 2, "problems start after the version line");
        }
    }
}

/// Parses bytes as a grid text file; a parsed grid must survive write → parse unchanged.
pub fn grid_text(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(parsed) = pathing::grid_text::parse_grid_text(text) {
        let written = pathing::grid_text::write_grid_text(&parsed);
        let again = pathing::grid_text::parse_grid_text(&written).expect("written grids parse");
        assert_eq!(again.grid, parsed.grid, "grid changed in a write/parse round trip");
        assert_eq!(again.header, parsed.header, "header changed in a write/parse round trip");
    }
}

/// Builds a small grid, a start and a goal from bytes and checks JPS against the A* oracle.
///
/// Layout: `[width, height, start_i, start_j, goal kind, goal x, goal z, goal size, cells...]`,
/// width and height taken modulo 40 (plus 1), one bit per navcell from the remaining bytes.
pub fn jps_vs_astar(data: &[u8]) {
    let [w, h, si, sj, kind, gx, gz, size, cells @ ..] = data else { return };
    let (w, h) = (u32::from(*w) % 40 + 1, u32::from(*h) % 40 + 1);
    let class = PassClass::new(0).expect("class 0 exists");
    let mut grid = NavGrid::new(w, h, 1, Fixed::ONE).expect("small grids are valid");
    for j in 0..h {
        for i in 0..w {
            let bit = (j * w + i) as usize;
            let byte = cells.get(bit / 8).copied().unwrap_or(0);
            if byte >> (bit % 8) & 1 == 1 {
                grid.set_passable(Navcell::new(i as u16, j as u16), class, false);
            }
        }
    }
    let map = PassMap::build(&grid, class);
    let start = Navcell::new((u32::from(*si) % w) as u16, (u32::from(*sj) % h) as u16);
    let at = pathing::WorldPos::new(Fixed::from_bits(i64::from(*gx) << 10), Fixed::from_bits(i64::from(*gz) << 10));
    let radius = Fixed::from_bits(i64::from(*size) << 12);
    let goal = match kind % 4 {
        0 => Goal::point(at),
        1 => Goal::circle(at, radius),
        2 => Goal::inverted_circle(at, radius),
        _ => pathing::Square::axis_aligned(at, radius, radius / 2).map(Goal::square),
    }
    .expect("goal values are in range");
    let mut scratch = SearchScratch::new();
    let (mut a, mut b) = (Path::new(), Path::new());
    let jps = pathing::find_path_jps(&map, start, &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut a);
    let astar = pathing::find_path_astar(&map, start, &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut b);
    assert_eq!(jps.status, astar.status, "JPS and A* disagree on reachability");
    if jps.status == PathStatus::Complete {
        assert_eq!(a.cost(), b.cost(), "JPS and A* disagree on the cost");
    }
}

#[cfg(test)]
mod tests {
    use super::TARGETS;

    /// Runs every target over every file of its corpus.
    #[test]
    fn corpus_replays_cleanly() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
        for (name, body) in TARGETS {
            let dir = root.join(name);
            let mut n = 0;
            for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
                let path = entry.expect("readable corpus entry").path();
                let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                body(&data);
                n += 1;
            }
            assert!(n > 0, "corpus of {name} is empty");
        }
    }
}
