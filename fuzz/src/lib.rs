//! Fuzz target bodies. Each is an ordinary function over bytes: cargo-fuzz calls it from the
//! binaries in `fuzz_targets/` (`cargo fuzz run -s none --features libfuzzer TARGET`), and the stable
//! test `corpus_replays_cleanly` runs it over every file of `corpus/TARGET/`, so the corpus is
//! checked on every `cargo test`.
//!
//! A body panics only on a real bug: a parser that panics, a round trip that changes the data, or a
//! search whose cost differs from the A* oracle.

mod bytes;
mod command_stream;
mod fixed_math;
mod fuzz_rules;
mod geometry;
mod reachability;
#[cfg(test)]
mod regressions;
mod session_frames;

pub use command_stream::{command_stream, command_stream_turns};
pub use fixed_math::fixed_math;
pub use geometry::geometry;
pub use reachability::reachability;
pub use session_frames::session_frames;

use pathing::movingai;
use pathing::{Fixed, Goal, NavGrid, Navcell, PassClass, PassMap, Path, PathStatus, SearchLimits, SearchOutcome, SearchScratch};

/// A target body.
pub type Body = fn(&[u8]);

/// The target names, each with its body.
pub const TARGETS: [(&str, Body); 15] = [
    ("movingai_map", movingai_map),
    ("movingai_scen", movingai_scen),
    ("grid_text", grid_text),
    ("jps_vs_astar", jps_vs_astar),
    ("class_file", class_file),
    ("polygon_config", polygon_config),
    ("raster_square", raster_square),
    ("snapshot", snapshot),
    ("replay_file", replay_file),
    ("scenario", scenario),
    ("command_stream", command_stream),
    ("reachability", reachability),
    ("fixed_math", fixed_math),
    ("geometry", geometry),
    ("session_frames", session_frames),
];

/// Reads bytes as a replay; a replay that reads completely must, cut before its last byte, read
/// as the same turns without its footer (a crash-cut file), and its records must be in order.
pub fn replay_file(data: &[u8]) {
    use replay::format::{End, Replay};
    let Ok(replay) = Replay::read(data) else { return };
    for (k, t) in replay.turns.iter().enumerate() {
        assert_eq!(t.turn as usize, k, "turn records out of order");
        assert_eq!(t.roots.len(), replay.header.components.len(), "a turn without a root per component");
    }
    assert!(replay.keyframes.windows(2).all(|w| w[0].0 <= w[1].0), "keyframes out of order");
    if let End::Footer(footer) = replay.end {
        assert_eq!(footer.turns as usize, replay.turns.len(), "footer count");
        let cut = Replay::read(&data[..data.len() - 1]).expect("a replay cut inside its footer reads");
        assert_eq!(cut.turns, replay.turns, "cutting the footer lost turns");
        assert!(matches!(cut.end, End::Truncated { .. }), "a cut replay has no footer");
    }
}

/// Parses bytes as a scenario file (no file references allowed); a parsed scenario's canonical
/// text must parse to the same scenario and text.
pub fn scenario(data: &[u8]) {
    use replay::scenario::Scenario;
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut refuse = |path: &str| Err(format!("no file {path} while fuzzing"));
    if let Ok(parsed) = Scenario::parse(text, "fuzz", &mut refuse) {
        let again = Scenario::parse(parsed.canonical_text(), "canonical", &mut refuse).expect("canonical text parses");
        assert_eq!(again.canonical_text(), parsed.canonical_text(), "canonical text changed in a round trip");
        assert_eq!(again.digest(), parsed.digest());
    }
}

/// Loads bytes as a simulation snapshot; a world that loads must save to bytes that load to the
/// same state hash.
pub fn snapshot(data: &[u8]) {
    if let Ok(world) = sim::World::load(data) {
        let hash = world.state_hash();
        let again = sim::World::load(&world.save()).expect("saved worlds load");
        assert_eq!(again.state_hash(), hash, "state changed in a save/load round trip");
    }
}

/// Parses bytes as a passability class file; a parsed set must survive write → parse unchanged.
pub fn class_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(set) = pathing::classes::ClassSet::parse_json(text) {
        let again = pathing::classes::ClassSet::parse_json(&set.to_json()).expect("written class files parse");
        assert_eq!(again, set, "classes changed in a write/parse round trip");
    }
}

/// Parses bytes as a polygon config; a parsed config with a small enough grid must build, and its
/// grid must survive the grid text format.
pub fn polygon_config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(config) = pathing::polygon::PolygonConfig::parse_json(text) else { return };
    let Ok(bounds) = config.grid_bounds() else { return };
    if u64::from(bounds.width) * u64::from(bounds.depth) > 1 << 16 {
        return;
    }
    let built = config.build_grid().expect("a config with valid bounds builds");
    let again = pathing::grid_text::parse_grid_text(&pathing::grid_text::write_grid_text(&built)).expect("written grids parse");
    assert_eq!(again.grid, built.grid, "grid changed in a write/parse round trip");
}

/// Rasterizes one square from bytes and checks every navcell of a small grid against the rule
/// evaluated directly, corner by corner, in wide integers.
///
/// Layout: `[x, z, hw, hh, angle_lo, angle_hi, clearance, cell]` (metres in 1/16 units, angle in
/// 1/16 degrees, navcell size in 1/16 m plus 1/16).
pub fn raster_square(data: &[u8]) {
    let [x, z, hw, hh, a0, a1, c, cell, ..] = data else { return };
    let sixteenth = |v: u8| Fixed::from_bits(i64::from(v) << 12);
    let cell = Fixed::from_bits((i64::from(*cell % 64) + 1) << 12);
    let deg = Fixed::from_bits(i64::from(u16::from_le_bytes([*a0, *a1])) << 12);
    let Ok(square) =
        pathing::raster::oriented_square(pathing::WorldPos::new(sixteenth(*x), sixteenth(*z)), sixteenth(*hw), sixteenth(*hh), deg)
    else {
        return;
    };
    let clearance = sixteenth(*c);
    let (w, h) = (48u32, 48u32);
    let mut got = vec![false; (w * h) as usize];
    pathing::raster::rasterize_square(&square, clearance, cell, pathing::CellRect::full(w, h), |j, i0, i1| {
        assert!(i0 < i1 && i1 <= w && j < h, "span ({j}, {i0}..{i1}) off the grid");
        for i in i0..i1 {
            assert!(!got[(j * w + i) as usize], "navcell ({i}, {j}) reported twice");
            got[(j * w + i) as usize] = true;
        }
    });
    let r32 = pathing::raster::effective_radius_raw32(&square, clearance, cell);
    let raw = |v: Fixed| i128::from(v.to_bits());
    let (u, v, ctr) = (square.u(), square.v(), square.center());
    let inside = |px: i128, pz: i128| {
        // Everything with 32 fractional bits.
        let (dx, dz) = (px - raw(ctr.x), pz - raw(ctr.z));
        let a = (dx * raw(u.x) + dz * raw(u.z)).abs();
        let b = (dx * raw(v.x) + dz * raw(v.z)).abs();
        let ea = (a - (raw(square.hw()) << 16)).max(0);
        let eb = (b - (raw(square.hh()) << 16)).max(0);
        ea * ea + eb * eb <= r32 * r32
    };
    let s = raw(cell);
    for j in 0..h {
        for i in 0..w {
            let (x0, z0) = (i128::from(i) * s, i128::from(j) * s);
            let want = inside(x0, z0) && inside(x0 + s, z0) && inside(x0, z0 + s) && inside(x0 + s, z0 + s);
            assert_eq!(got[(j * w + i) as usize], want, "navcell ({i}, {j})");
        }
    }
}

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

/// The four searches of [`jps_vs_astar`] on one input: JPS, A*, JPS with landmarks and JPS+ with
/// landmarks, each with its path.
pub struct SearchAnswers {
    /// JPS without accelerators.
    pub jps: (SearchOutcome, Path),
    /// The A* oracle.
    pub astar: (SearchOutcome, Path),
    /// JPS with the landmark heuristic.
    pub landmarks: (SearchOutcome, Path),
    /// JPS+ (jump tables) with the landmark heuristic.
    pub plus_landmarks: (SearchOutcome, Path),
    /// The map searched, for legality checks.
    map: PassMap,
}

/// Builds the grid, start and goal of a [`jps_vs_astar`] input and runs its four searches; `None`
/// for an input too short to describe them.
///
/// Layout: `[width, height, start_i, start_j, goal kind, goal x, goal z, goal size, cells...]`,
/// width and height taken modulo 40 (plus 1), one bit per navcell from the remaining bytes; the
/// goal kind's low two bits pick the shape, the rest (modulo 9) the number of landmarks.
pub fn jps_vs_astar_searches(data: &[u8]) -> Option<SearchAnswers> {
    let [w, h, si, sj, kind, gx, gz, size, cells @ ..] = data else { return None };
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
    let mut search = |accelerators: &pathing::Accelerators<'_>, oracle: bool| {
        let mut path = Path::new();
        let outcome = if oracle {
            pathing::find_path_astar(&map, None, start, &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut path)
        } else {
            pathing::find_path_jps(&map, accelerators, start, &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut path)
        };
        (outcome, path)
    };
    let jps = search(&pathing::Accelerators::NONE, false);
    let astar = search(&pathing::Accelerators::NONE, true);
    // The landmark heuristic: 0 to 8 landmarks, from the goal kind's upper bits.
    let landmarks = pathing::Landmarks::build(&map, usize::from(kind / 4 % 9));
    let table = pathing::JumpTable::build(&map);
    let with_landmarks = search(&pathing::Accelerators { jump_table: None, landmarks: Some(&landmarks) }, false);
    let plus_landmarks = search(&pathing::Accelerators { jump_table: Some(&table), landmarks: Some(&landmarks) }, false);
    Some(SearchAnswers { jps, astar, landmarks: with_landmarks, plus_landmarks, map })
}

/// Builds a small grid, a start and a goal from bytes (see [`jps_vs_astar_searches`]) and checks
/// JPS, and JPS and JPS+ with the landmark heuristic, against the A* oracle.
pub fn jps_vs_astar(data: &[u8]) {
    let Some(answers) = jps_vs_astar_searches(data) else { return };
    let SearchAnswers { jps: (jps, a), astar: (astar, b), landmarks: (lm, c), plus_landmarks: (plus_lm, d), map } = &answers;
    assert_eq!(jps.status, astar.status, "JPS and A* disagree on reachability");
    if jps.status == PathStatus::Complete {
        assert_eq!(a.cost(), b.cost(), "JPS and A* disagree on the cost");
    }
    // The landmark heuristic must not change the cost, and JPS+ with it must return exactly what
    // JPS with it returns.
    assert_eq!(lm.status, astar.status, "JPS with landmarks and A* disagree on reachability");
    if lm.status == PathStatus::Complete {
        assert_eq!(c.cost(), b.cost(), "JPS with landmarks and A* disagree on the cost");
        assert!(c.check_legal(map).is_ok(), "JPS with landmarks returned an illegal path");
    }
    assert_eq!((lm, c), (plus_lm, d), "JPS+ with landmarks differs from JPS with landmarks");
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
