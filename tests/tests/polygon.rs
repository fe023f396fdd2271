//! Polygon configs and polygons: ASCII snapshots of built grids (`#` blocked, `.` walkable, north row
//! first), every kind of bad input giving a positioned error rather than a panic, and the exact
//! predicates checked against `f64` oracles (floats are allowed here, as oracles only).

use pathing::grid_text::{GridText, WALKABLE, parse_grid_text, write_grid_text};
use pathing::polygon::{CellTest, ConfigError, Polygon, PolygonConfig, PolygonError, ShapeKind};
use pathing::{CellRect, Fixed, Navcell, WorldPos};
use proptest::prelude::*;

/// The grid as a picture, north row first.
fn picture(g: &GridText) -> String {
    let mut out = String::new();
    for j in (0..g.grid.height()).rev() {
        for i in 0..g.grid.width() {
            let walkable = g.grid.is_passable(Navcell::new(i as u16, j as u16), WALKABLE);
            out.push(if walkable { '.' } else { '#' });
        }
        out.push('\n');
    }
    out
}

/// Header lines, then the picture.
fn render(g: &GridText) -> String {
    let header: Vec<String> = g.header.iter().map(|(k, v)| format!("{k} {v}")).collect();
    format!("{}\n\n{}", header.join("\n"), picture(g))
}

/// Parses and builds a config, checks the grid-file round trip, and renders it; the only caller of
/// `parse_json` and `build_grid` for the snapshots.
#[track_caller]
fn check(json: &str) -> String {
    let config = PolygonConfig::parse_json(json).unwrap_or_else(|e| panic!("{e}"));
    build_and_render(&config)
}

#[track_caller]
fn build_and_render(config: &PolygonConfig) -> String {
    let g = config.build_grid().unwrap_or_else(|e| panic!("{e}"));
    g.grid.check_invariants().unwrap();
    let text = write_grid_text(&g);
    assert_eq!(parse_grid_text(&text).unwrap(), g, "grid file round trip");
    render(&g)
}

#[test]
fn l_shaped_area_with_a_padded_obstacle() {
    // A concave L; a 2 × 1.5 crate in its wide arm, kept 0.3 + 0.2 = 0.5 m clear.
    let json = r#"{
        "cellSize": 0.5, "agentRadius": 0.3, "objectPadding": 0.2,
        "areas": [ { "name": "yard", "polygon": [[0, 0], [12, 0], [12, 5], [5, 5], [5, 10], [0, 10]] } ],
        "obstacles": [ { "name": "crate", "polygon": [[7, 1.5], [9, 1.5], [9, 3], [7, 3]] } ]
    }"#;
    insta::assert_snapshot!(check(json));
}

#[test]
fn u_shaped_obstacle() {
    // A concave U opening north inside a room; its 4 m inner channel narrows by 0.5 m on each side.
    let json = r#"{
        "cellSize": 0.5, "agentRadius": 0.25, "objectPadding": 0.25,
        "areas": [ { "name": "room", "polygon": [[0, 0], [14, 0], [14, 10], [0, 10]] } ],
        "obstacles": [ { "name": "u", "polygon": [[3, 2], [11, 2], [11, 8], [9, 8], [9, 4], [5, 4], [5, 8], [3, 8]] } ]
    }"#;
    insta::assert_snapshot!(check(json));
}

#[test]
fn boundary_padding_shrinks_the_area() {
    // Only centres farther than 1 m from the triangle's edges are walkable, with the default radii.
    let json = r#"{
        "cellSize": 0.5, "boundaryPadding": 1.0,
        "areas": [ { "name": "tri", "polygon": [[0, 0], [12, 0], [4, 9]] } ]
    }"#;
    insta::assert_snapshot!(check(json));
}

#[test]
fn unavailable_area_stays_blocked_until_opened() {
    // Two rooms joined by a door area that starts closed; opening it connects them.
    let json = r#"{
        "cellSize": 0.5, "agentRadius": 0.25, "objectPadding": 0.0,
        "areas": [
            { "name": "west", "polygon": [[0, 0], [6, 0], [6, 6], [0, 6]] },
            { "name": "door", "available": false, "polygon": [[6, 2.5], [8, 2.5], [8, 3.5], [6, 3.5]] },
            { "name": "east", "available": true, "polygon": [[8, 0], [14, 0], [14, 6], [8, 6]] }
        ],
        "obstacles": [ { "name": "pillar", "polygon": [[10, 2], [11, 3], [10, 4], [9, 3]] } ]
    }"#;
    let mut config = PolygonConfig::parse_json(json).unwrap();
    let closed = build_and_render(&config);
    let bounds_before = config.grid_bounds().unwrap();
    config.set_area_available("door", true).unwrap();
    assert!(config.areas()[1].available());
    let open = build_and_render(&config);
    // Toggling never moves the grid.
    assert_eq!(config.grid_bounds().unwrap(), bounds_before);
    assert_ne!(closed, open);
    assert_eq!(config.set_area_available("window", true), Err(ConfigError::UnknownArea { name: "window".to_string() }));
    insta::assert_snapshot!(format!("door closed:\n{closed}\ndoor open:\n{open}"));
}

#[test]
fn build_grid_round_trips_through_the_grid_file() {
    let json = r#"{ "cellSize": 0.3, "agentRadius": 0.2, "objectPadding": 0.1, "boundaryPadding": 0.35, "floorY": 1.25,
                    "areas": [ { "name": "a", "polygon": [[-3.3, -2], [5, -2.7], [4, 3.1], [0, 1], [-2, 4]] } ],
                    "obstacles": [ { "name": "o", "polygon": [[0, -1], [1.5, -0.5], [0.2, 0.4]] } ] }"#;
    let g = PolygonConfig::parse_json(json).unwrap().build_grid().unwrap();
    let text = write_grid_text(&g);
    let again = parse_grid_text(&text).unwrap();
    assert_eq!(again, g);
    assert_eq!(write_grid_text(&again), text);
    assert!(text.starts_with("cellSize 0.3\nagentRadius 0.2\nobjectPadding 0.1\nboundaryPadding 0.35\nfloorY 1.25\nminX "), "{text}");
    let walkable = text.lines().skip(9).map(|row| row.bytes().filter(|&b| b == b'1').count()).sum::<usize>();
    assert!(walkable > 100, "{text}");
}

#[test]
fn defaults_bounds_and_accessors() {
    let json = r#"{ "areas": [ { "name": "a", "polygon": [[-1, -2], [3, -2], [3, 1.3]] } ],
                    "obstacles": [ { "name": "o", "polygon": [[0, -1], [1, -1], [1, 0]] },
                                   { "name": "o", "polygon": [[2, -1], [2.5, -1], [2.5, 0]] } ] }"#;
    let config = PolygonConfig::parse_json(json).unwrap();
    assert_eq!(config.cell_size(), Fixed::lit("0.4"));
    assert_eq!(config.agent_radius(), Fixed::lit("0.45"));
    assert_eq!(config.object_padding(), Fixed::lit("0.25"));
    assert_eq!((config.boundary_padding(), config.floor_y()), (Fixed::ZERO, Fixed::ZERO));
    assert_eq!(config.areas().len(), 1);
    assert_eq!((config.areas()[0].name(), config.areas()[0].available()), ("a", true));
    // Obstacle names need not be unique.
    assert_eq!(config.obstacles().iter().map(|o| o.name()).collect::<Vec<_>>(), ["o", "o"]);
    assert_eq!(config.obstacles()[1].polygon().vertices().len(), 3);
    // Margin 2 · 0.4 + 0.45 + 0.25 = 1.5 (raw 98302: 0.4 and 0.45 are rounded to 2^-16).
    let b = config.grid_bounds().unwrap();
    let margin = Fixed::lit("0.4") * 2 + Fixed::lit("0.45") + Fixed::lit("0.25");
    assert_eq!((b.min_x, b.min_z), (Fixed::from_num(-1) - margin, Fixed::from_num(-2) - margin));
    // Extents 4 + 2 · margin and 3.3 + 2 · margin, divided by 0.4 and rounded up.
    let cells = |extent: Fixed| (extent / Fixed::lit("0.4")).ceil().to_num::<u32>();
    assert_eq!(b.width, cells(Fixed::from_num(4) + margin * 2));
    assert_eq!(b.depth, cells(Fixed::lit("3.3") + margin * 2));
    assert_eq!((b.width, b.depth), (18, 16));
}

/// Parses a config that must fail; the only caller of `parse_json` for bad input.
#[track_caller]
fn parse_err(json: &str) -> ConfigError {
    match PolygonConfig::parse_json(json) {
        Ok(config) => panic!("expected an error, got {config:?}"),
        Err(e) => e,
    }
}

/// Asserts a `Json` error at `line` whose message contains `expected`.
#[track_caller]
fn assert_json_error(json: &str, line: usize, expected: &str) {
    match parse_err(json) {
        ConfigError::Json { line: got, column, path, message } => {
            assert_eq!(got, line, "{message}");
            assert!(message.contains(expected), "{message:?} should mention {expected:?}");
            let at = if path.is_empty() { String::new() } else { format!("at {path}: ") };
            let shown = ConfigError::Json { line: got, column, path, message }.to_string();
            assert!(shown.starts_with(&format!("{line}:{column}: {at}")), "{shown}");
        }
        other => panic!("expected a JSON error, got {other:?}"),
    }
}

#[test]
fn malformed_json_and_bad_values_give_the_line_and_what_was_expected() {
    let area = r#"{ "name": "a", "polygon": [[0, 0], [4, 0], [0, 4]] }"#;
    assert_json_error("{\n  \"areas\": [\n    { \"name\": \"a\", \"polygon\": [[0, 0], [4, 0] [0, 4]] }\n  ]\n}", 3, "expected `,` or `]`");
    assert_json_error(&format!("{{\n \"areas\": [{area},]\n}}"), 2, "trailing comma");
    assert_json_error(&format!("{{\n \"areas\": [{area}]\n}}\nextra"), 4, "trailing characters");
    assert_json_error("", 1, "EOF");
    assert_json_error("[1, 2]", 1, "expected a polygon config object");
    assert_json_error(
        &format!("{{\n \"cellsize\": 0.4,\n \"areas\": [{area}]\n}}"),
        2,
        "unknown field `cellsize`, expected one of `cellSize`",
    );
    assert_json_error(
        "{\n \"areas\": [\n  { \"name\": \"a\", \"avaliable\": false, \"polygon\": [[0, 0], [4, 0], [0, 4]] }\n ]\n}",
        3,
        "unknown field `avaliable`, expected one of `name`, `available`, `polygon`",
    );
    assert_json_error(
        "{\n \"areas\": [],\n \"obstacles\": [\n  { \"name\": \"o\", \"available\": true, \"polygon\": [] }\n ]\n}",
        4,
        "unknown field `available`",
    );
    assert_json_error(&format!("{{\n \"areas\": [{area}],\n \"areas\": []\n}}"), 3, "duplicate field `areas`");
    assert_json_error("{\n \"cellSize\": 0.4\n}", 3, "missing field `areas`");
    assert_json_error("{ \"areas\": [] }", 1, "expected at least one entry in `areas`");
    assert_json_error("{ \"areas\": [ { \"polygon\": [[0, 0], [4, 0], [0, 4]] } ] }", 1, "missing field `name`");
    assert_json_error(&format!("{{\n \"cellSize\": 0,\n \"areas\": [{area}]\n}}"), 2, "expected `cellSize` in (0, 256]");
    assert_json_error(&format!("{{\n \"cellSize\": 300,\n \"areas\": [{area}]\n}}"), 2, "expected `cellSize` in (0, 256]");
    assert_json_error(&format!("{{\n \"objectPadding\": -0.1,\n \"areas\": [{area}]\n}}"), 2, "expected `objectPadding` ≥ 0");
    assert_json_error(&format!("{{\n \"agentRadius\": \"wide\",\n \"areas\": [{area}]\n}}"), 2, "invalid type: string");
    assert_json_error(&format!("{{\n \"floorY\": 1e3,\n \"areas\": [{area}]\n}}"), 2, "expected a decimal number");
    assert_json_error(
        "{\n \"areas\": [ { \"name\": \"a\",\n   \"polygon\": [[0, 0], [20000, 0], [0, 4]] } ]\n}",
        3,
        "expected a number within ±16384",
    );
    assert_json_error("{ \"areas\": [ { \"name\": \"a\", \"polygon\": [[0, 0, 1], [4, 0], [0, 4]] } ] }", 1, "trailing");
    assert_json_error("{ \"areas\": [ { \"name\": \"a\", \"polygon\": [[0], [4, 0], [0, 4]] } ] }", 1, "invalid length 1");
    assert_json_error(
        "{ \"areas\": [ { \"name\": \"a\", \"available\": \"yes\", \"polygon\": [] } ] }",
        1,
        "invalid type: string \"yes\", expected a boolean",
    );
}

#[test]
fn a_polygon_config_error_names_the_json_path() {
    let area = r#"{ "name": "a", "polygon": [[0, 0], [4, 0], [0, 4]] }"#;
    let cases = [
        (
            format!("{{\n \"areas\": [{area}, {{ \"name\": \"b\", \"polygon\": [[0, 0], [4, 0], [0, \"x\"]] }}]\n}}"),
            "areas[1].polygon[2][1]",
        ),
        (format!("{{ \"areas\": [{area}], \"obstacles\": [{{ \"name\": \"o\", \"colour\": 1 }}] }}"), "obstacles[0].colour"),
        (format!("{{ \"cellSize\": 0, \"areas\": [{area}] }}"), "cellSize"),
        (format!("{{ \"boundaryPadding\": -1, \"areas\": [{area}] }}"), "boundaryPadding"),
        ("{ \"areas\": [] }".to_string(), "areas"),
        (format!("{{ \"areas\": [{area}] }} x"), ""),
    ];
    for (json, path) in cases {
        let err = parse_err(&json);
        let ConfigError::Json { path: found, line, column, .. } = &err else { panic!("{json}: {err:?}") };
        assert_eq!(found, path, "{json}: {err}");
        let at = if path.is_empty() { String::new() } else { format!("at {path}: ") };
        assert!(err.to_string().starts_with(&format!("{line}:{column}: {at}")), "{err}");
    }
}

#[test]
fn bad_polygons_name_the_shape_and_the_problem() {
    let few = parse_err("{\n \"areas\": [\n  { \"name\": \"hall\", \"polygon\": [[0, 0], [4, 0]] }\n ]\n}");
    let ConfigError::BadPolygon { line, column, ref path, shape, index, ref name, error } = few else { panic!("{few:?}") };
    assert_eq!((line, shape, index, name.as_str(), error), (3, ShapeKind::Area, 0, "hall", PolygonError::TooFewPoints { n: 2 }));
    assert_eq!(path, "areas[0]");
    assert!(column > 1);
    assert_eq!(few.to_string(), format!("3:{column}: at areas[0]: area 0 (\"hall\"): polygon has 2 points, expected at least 3"));
    assert!(std::error::Error::source(&few).is_some());

    let bow_tie = parse_err(
        "{\n \"areas\": [ { \"name\": \"a\", \"polygon\": [[0, 0], [9, 0], [0, 9]] } ],\n \"obstacles\": [\n  { \"name\": \"ok\", \"polygon\": [[1, 1], [2, 1], [1, 2]] },\n  { \"name\": \"tie\", \"polygon\": [[1, 1], [3, 3], [3, 1], [1, 3]] }\n ]\n}",
    );
    assert!(
        matches!(
            &bow_tie,
            ConfigError::BadPolygon { line: 5, path, shape: ShapeKind::Obstacle, index: 1, name, error: PolygonError::SelfIntersecting { edge_a: 0, edge_b: 2 }, .. } if name == "tie" && path == "obstacles[1]"
        ),
        "{bow_tie:?}"
    );
    assert!(bow_tie.to_string().contains("obstacle 1 (\"tie\"): edges 0 and 2 cross or touch"), "{bow_tie}");

    let closed_ring = parse_err("{ \"areas\": [ { \"name\": \"a\", \"polygon\": [[0, 0], [4, 0], [0, 4], [0, 0]] } ] }");
    assert!(matches!(closed_ring, ConfigError::BadPolygon { error: PolygonError::RepeatedPoint { index: 3 }, .. }), "{closed_ring:?}");
    let line = parse_err("{ \"areas\": [ { \"name\": \"a\", \"polygon\": [[0, 0], [4, 0], [8, 0]] } ] }");
    assert!(matches!(line, ConfigError::BadPolygon { error: PolygonError::ZeroArea, .. }), "{line:?}");

    let duplicate = parse_err(
        "{\n \"areas\": [\n  { \"name\": \"a\", \"polygon\": [[0, 0], [4, 0], [0, 4]] },\n  { \"name\": \"b\", \"polygon\": [[0, 0], [4, 0], [0, 4]] },\n  { \"name\": \"a\", \"polygon\": [[0, 0], [4, 0], [0, 4]] }\n ]\n}",
    );
    assert!(
        matches!(&duplicate, ConfigError::DuplicateAreaName { line: 5, path, index: 2, first_index: 0, name, .. } if name == "a" && path == "areas[2]"),
        "{duplicate:?}"
    );
    assert!(duplicate.to_string().contains("area 2 repeats the name \"a\" of area 0"), "{duplicate}");
}

#[test]
fn a_grid_too_large_for_the_cell_size_is_an_error() {
    let config =
        PolygonConfig::parse_json("{ \"cellSize\": 0.001, \"areas\": [ { \"name\": \"a\", \"polygon\": [[0, 0], [100, 0], [0, 100]] } ] }")
            .unwrap();
    let err = config.build_grid().unwrap_err();
    assert!(matches!(err, ConfigError::GridTooLarge { width, depth } if width > 65535 && depth > 65535), "{err:?}");
    assert!(err.to_string().contains("use a larger cellSize"), "{err}");
}

#[test]
fn a_1024_navcell_square_grid_builds_exactly() {
    // A 409.6 m concave area at 0.4 m navcells with three obstacles: a million navcells. Compared
    // cell by cell with the per-point predicates.
    let json = r#"{
        "areas": [ { "name": "big", "polygon": [[0, 0], [409.6, 0], [409.6, 409.6], [200, 409.6], [200, 150], [150, 409.6], [0, 409.6]] } ],
        "obstacles": [
            { "name": "a", "polygon": [[20, 20], [60, 25], [55, 70], [30, 60], [40, 40]] },
            { "name": "b", "polygon": [[300, 300], [320, 300], [320, 380], [260, 380], [260, 360], [300, 360]] },
            { "name": "c", "polygon": [[100, 300], [101, 300], [101, 301]] }
        ]
    }"#;
    let config = PolygonConfig::parse_json(json).unwrap();
    let g = config.build_grid().unwrap();
    // (409.6 + 2 · 1.5) / 0.4 = 1031.5, rounded up.
    assert_eq!((g.grid.width(), g.grid.height()), (1032, 1032));
    let (s, origin) = (config.cell_size(), WorldPos::new(g.min_x, g.min_z));
    let clearance = config.agent_radius() + config.object_padding();
    let area = config.areas()[0].polygon();
    let mut walkable_cells = 0;
    for j in 0..g.grid.height() {
        for i in 0..g.grid.width() {
            // 0.4 m is 26214 raw, even, so every centre is a Fixed value.
            let centre = WorldPos::new(origin.x + s * Fixed::from_num(i) + s / 2, origin.z + s * Fixed::from_num(j) + s / 2);
            let expected =
                area.contains(centre) && !config.obstacles().iter().any(|o| o.polygon().matches(CellTest::InsideOrNear(clearance), centre));
            assert_eq!(g.grid.is_passable(Navcell::new(i as u16, j as u16), WALKABLE), expected, "navcell ({i}, {j})");
            walkable_cells += usize::from(expected);
        }
    }
    assert!(walkable_cells > 700_000, "{walkable_cells}");
}

/// A star-shaped polygon: vertices at sorted angles around a centre, rounded to `Fixed`.
/// Also returns whether every angular gap is below half a turn, which makes the centre an interior
/// point.
fn star_polygon() -> impl Strategy<Value = (Vec<(f64, f64)>, (f64, f64), bool)> {
    (3usize..16, (-100.0f64..100.0, -100.0f64..100.0)).prop_flat_map(|(n, centre)| {
        (prop::collection::vec((0.0f64..1.0, 1.0f64..40.0), n), Just(centre)).prop_map(|(mut spokes, centre)| {
            spokes.sort_by(|a, b| a.0.total_cmp(&b.0));
            let points = spokes
                .iter()
                .map(|&(turn, radius)| {
                    let angle = turn * std::f64::consts::TAU;
                    (centre.0 + radius * angle.cos(), centre.1 + radius * angle.sin())
                })
                .collect();
            let turns: Vec<f64> = spokes.iter().map(|s| s.0).collect();
            let wrap = turns[0] + 1.0 - turns[turns.len() - 1];
            let max_gap = turns.windows(2).map(|w| w[1] - w[0]).fold(wrap, f64::max);
            (points, centre, max_gap < 0.45)
        })
    })
}

/// The polygon and its exact vertex coordinates as `f64`, or `None` when rounding made it invalid.
fn to_polygon(points: &[(f64, f64)]) -> Option<(Polygon, Vec<(f64, f64)>)> {
    let vertices: Vec<WorldPos> = points.iter().map(|&(x, z)| WorldPos::new(Fixed::from_num(x), Fixed::from_num(z))).collect();
    let exact = vertices.iter().map(|v| (v.x.to_num::<f64>(), v.z.to_num::<f64>())).collect();
    Polygon::new(vertices).ok().map(|p| (p, exact))
}

fn segment_distance(p: (f64, f64), a: (f64, f64), b: (f64, f64)) -> f64 {
    let (dx, dz) = (b.0 - a.0, b.1 - a.1);
    let t = (((p.0 - a.0) * dx + (p.1 - a.1) * dz) / (dx * dx + dz * dz)).clamp(0.0, 1.0);
    ((p.0 - a.0 - t * dx).powi(2) + (p.1 - a.1 - t * dz).powi(2)).sqrt()
}

fn boundary_distance(p: (f64, f64), poly: &[(f64, f64)]) -> f64 {
    (0..poly.len()).map(|k| segment_distance(p, poly[k], poly[(k + 1) % poly.len()])).fold(f64::INFINITY, f64::min)
}

/// Crossing-number oracle (valid away from the boundary).
fn crossing_number_inside(p: (f64, f64), poly: &[(f64, f64)]) -> bool {
    let mut inside = false;
    for k in 0..poly.len() {
        let (a, b) = (poly[k], poly[(k + 1) % poly.len()]);
        if (a.1 > p.1) != (b.1 > p.1) && p.0 < a.0 + (p.1 - a.1) * (b.0 - a.0) / (b.1 - a.1) {
            inside = !inside;
        }
    }
    inside
}

fn fixed_point(x: f64, z: f64) -> (WorldPos, (f64, f64)) {
    let p = WorldPos::new(Fixed::from_num(x), Fixed::from_num(z));
    (p, (p.x.to_num::<f64>(), p.z.to_num::<f64>()))
}

proptest! {
    #[test]
    fn contains_agrees_with_a_crossing_number_oracle(
        (points, centre, centre_inside) in star_polygon(),
        probes in prop::collection::vec((-45.0f64..45.0, -45.0f64..45.0), 32),
    ) {
        let Some((polygon, exact)) = to_polygon(&points) else { return Ok(()); };
        for (dx, dz) in probes {
            let (p, pf) = fixed_point(centre.0 + dx, centre.1 + dz);
            if boundary_distance(pf, &exact) > 1e-6 {
                prop_assert_eq!(polygon.contains(p), crossing_number_inside(pf, &exact), "{:?}", pf);
            }
        }
        // The centre of a star-shaped polygon is inside it.
        let (c, cf) = fixed_point(centre.0, centre.1);
        if centre_inside && boundary_distance(cf, &exact) > 1e-6 {
            prop_assert!(polygon.contains(c));
        }
    }

    #[test]
    fn distance_agrees_with_an_f64_oracle(
        (points, centre, _) in star_polygon(),
        probes in prop::collection::vec((-50.0f64..50.0, -50.0f64..50.0, 0.0f64..20.0), 32),
    ) {
        let Some((polygon, exact)) = to_polygon(&points) else { return Ok(()); };
        for (dx, dz, r) in probes {
            let (p, pf) = fixed_point(centre.0 + dx, centre.1 + dz);
            let r = Fixed::from_num(r);
            let distance = boundary_distance(pf, &exact);
            let rf = r.to_num::<f64>();
            if (distance - rf).abs() > 1e-6 {
                prop_assert_eq!(polygon.distance_sq_within(p, r), distance <= rf, "{:?} at {} vs r {}", pf, distance, rf);
                let near = CellTest::InsideOrNear(r);
                prop_assert_eq!(polygon.matches(near, p), distance <= rf || crossing_number_inside(pf, &exact));
            }
        }
    }

    #[test]
    fn rasterization_marks_exactly_the_centres_that_pass(
        (points, centre, _) in star_polygon(),
        cell_steps in 8i64..64,
        r in 0.0f64..4.0,
        which in 0usize..3,
    ) {
        let Some((polygon, _)) = to_polygon(&points) else { return Ok(()); };
        // Even raw cell sizes (multiples of 2^-13 m) keep every centre a Fixed value.
        let s = Fixed::from_bits(cell_steps << 13);
        let r = Fixed::from_num(r);
        let test = [CellTest::Inside, CellTest::InsideOrNear(r), CellTest::InsideAwayFrom(r)][which];
        let origin = WorldPos::new(Fixed::from_num(centre.0 - 50.0), Fixed::from_num(centre.1 - 50.0));
        let n = (Fixed::from_num(100) / s).to_num::<u32>();
        let mut got = Vec::new();
        polygon.mark_cells(test, origin, s, CellRect::full(n, n), |i, j| got.push((i, j)));
        let mut expected = Vec::new();
        for j in 0..n {
            for i in 0..n {
                let c = WorldPos::new(origin.x + s * Fixed::from_num(i) + s / 2, origin.z + s * Fixed::from_num(j) + s / 2);
                if polygon.matches(test, c) {
                    expected.push((i, j));
                }
            }
        }
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn parse_never_panics_on_edited_configs(
        cut in 0usize..400,
        len in 0usize..8,
        insert in "[\\[\\]{},:\"0-9a-z. -]{0,6}",
    ) {
        let valid = r#"{ "cellSize": 0.5, "agentRadius": 0.3, "areas": [ { "name": "a", "available": true, "polygon": [[0, 0], [12, 0], [12, 5], [5, 5]] } ], "obstacles": [ { "name": "o", "polygon": [[7, 1.5], [9, 1.5], [9, 3]] } ] }"#;
        let cut = cut.min(valid.len());
        let end = (cut + len).min(valid.len());
        let edited = format!("{}{}{}", &valid[..cut], insert, &valid[end..]);
        if let Ok(config) = PolygonConfig::parse_json(&edited) {
            // Whatever parses also builds or says why not.
            let _ = config.build_grid();
        }
    }
}
