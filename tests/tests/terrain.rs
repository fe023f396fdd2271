//! Terrain to passability, end to end: snapshots of borders and of clearance expansion on a small
//! map with a hill and a lake, and a floating-point oracle for the interpolated depth and slope.
//! Legend of the renderings: `#` impassable for the class, `.` passable; the top line is the
//! northmost row (`j = height - 1`).

use pathing::classes::{ClassDef, ClassSet, ClearanceShape, ObstructionMode};
use pathing::terrain::{GridSpec, MapBorder, Terrain, TerrainPass};
use pathing::{CellRect, Fixed, NavGrid, Navcell};
use proptest::prelude::*;

fn metres(value: i32) -> Fixed {
    Fixed::from_num(value)
}

/// A class with only the given clearance and shape, on top of `base` bounds.
fn class(name: &str, clearance: i32, shape: ClearanceShape, base: &ClassDef) -> ClassDef {
    ClassDef { name: name.to_string(), clearance: metres(clearance), clearance_shape: shape, ..base.clone() }
}

fn unbounded() -> ClassDef {
    ClassDef::unbounded("", ObstructionMode::Pathfinding)
}

fn render(grid: &NavGrid, k: u8) -> String {
    let class = pathing::PassClass::new(k).expect("fewer than 16 classes");
    let mut out = String::new();
    for j in (0..grid.height() as u16).rev() {
        for i in 0..grid.width() as u16 {
            out.push(if grid.is_passable(Navcell::new(i, j), class) { '.' } else { '#' });
        }
        out.push('\n');
    }
    out
}

/// Builds the expanded terrain grid and renders every class under a heading; the only caller of
/// the terrain API in the snapshot tests.
#[track_caller]
fn check(terrain: &Terrain, spec: GridSpec, classes: &ClassSet, border: MapBorder) -> String {
    let pass = TerrainPass::new(terrain, spec).expect("valid grid");
    let grid = pass.terrain_grid(classes, border).expect("consistent sizes");
    grid.check_invariants().expect("grid invariants");
    // The windowed build gives the same grid, whatever the window.
    let mut base = vec![0u16; (spec.width * spec.height) as usize];
    pass.base_masks(classes, border, CellRect::full(spec.width, spec.height), &mut base).expect("full window");
    let mut windowed = NavGrid::new(spec.width, spec.height, classes.len(), spec.cell_size).expect("valid grid");
    let half = spec.width / 2;
    for rect in [CellRect::new(0, 0, half, spec.height), CellRect::new(half, 0, spec.width, spec.height)] {
        pathing::terrain::expand_clearance(&base, spec.width, spec.height, classes, spec.cell_size, rect, &mut windowed).expect("window");
    }
    assert_eq!(windowed, grid, "two half windows equal the whole");

    let mut out = format!("{}x{} navcells of {} m, border {border:?}\n", spec.width, spec.height, spec.cell_size);
    for (class, def) in classes.iter() {
        let blocked = grid.blocked_masks().iter().filter(|&&m| m & class.bit() != 0).count();
        out.push_str(&format!(
            "\n{} (clearance {} {:?}): {blocked} impassable\n",
            def.name,
            def.clearance_cells(spec.cell_size),
            def.clearance_shape
        ));
        out.push_str(&render(&grid, class.index()));
    }
    out
}

/// 10 × 8 tiles of 4 m, 1 m above the water at 0 m, with a hill peaking at 14 m around vertex
/// (3, 5) and a lake 4 m deep around vertex (7, 2).
fn hill_and_lake() -> Terrain {
    Terrain::from_fn(10, 8, metres(4), Fixed::ZERO, |vx, vz| {
        let (vx, vz) = (vx as i32, vz as i32);
        let hill = (vx - 3).pow(2) + (vz - 5).pow(2);
        let lake = (vx - 7).pow(2) + (vz - 2).pow(2);
        let height = match (hill, lake) {
            (0, _) => 14,
            (1..=2, _) => 8,
            (_, 0) => -4,
            (_, 1..=2) => -2,
            (3..=5, _) => 3,
            _ => 1,
        };
        metres(height)
    })
    .expect("valid terrain")
}

fn one_metre(terrain: &Terrain) -> GridSpec {
    GridSpec::covering(terrain, Fixed::ONE).expect("valid grid")
}

#[test]
fn square_border() {
    let terrain = Terrain::flat(10, 8, metres(4), metres(1), Fixed::ZERO).expect("valid terrain");
    let spec = GridSpec { width: 40, height: 30, cell_size: Fixed::ONE };
    let classes = ClassSet::new(vec![class("any", 0, ClearanceShape::Square, &unbounded())]).expect("valid classes");
    insta::assert_snapshot!(check(&terrain, spec, &classes, MapBorder::Square { width: 3 }));
}

#[test]
fn circular_border() {
    let terrain = Terrain::flat(10, 8, metres(4), metres(1), Fixed::ZERO).expect("valid terrain");
    let spec = GridSpec { width: 40, height: 30, cell_size: Fixed::ONE };
    let classes = ClassSet::new(vec![
        class("any", 0, ClearanceShape::Square, &unbounded()),
        class("any, clearance 2 round", 2, ClearanceShape::Round, &unbounded()),
    ])
    .expect("valid classes");
    insta::assert_snapshot!(check(&terrain, spec, &classes, MapBorder::Circle { width: 3 }));
}

/// A land class (slope below 1, dry) with clearance 0, 1 and 2 of both shapes: the hill's steep
/// flanks and the lake block it, and grow with the clearance, with rounded corners when round.
#[test]
fn hill_and_lake_land_classes() {
    let terrain = hill_and_lake();
    let land = ClassDef { max_slope: Some(metres(1)), max_water_depth: Some(Fixed::ZERO), ..unbounded() };
    let classes = ClassSet::new(vec![
        class("land 0", 0, ClearanceShape::Square, &land),
        class("land 1 square", 1, ClearanceShape::Square, &land),
        class("land 1 round", 1, ClearanceShape::Round, &land),
        class("land 2 square", 2, ClearanceShape::Square, &land),
        class("land 2 round", 2, ClearanceShape::Round, &land),
    ])
    .expect("valid classes");
    insta::assert_snapshot!(check(&terrain, one_metre(&terrain), &classes, MapBorder::None));
}

/// Water-limited classes (at least 1 m deep, as ships) and shore-limited ones (the built-in
/// building classes' bounds), with a square border.
#[test]
fn hill_and_lake_water_and_shore_classes() {
    let terrain = hill_and_lake();
    let ship = ClassDef { min_water_depth: Some(metres(1)), ..unbounded() };
    let defaults = ClassSet::zero_ad_defaults();
    let by_name = |name: &str| defaults.defs().iter().find(|d| d.name == name).expect("built-in class").clone();
    let classes = ClassSet::new(vec![
        class("ship 0", 0, ClearanceShape::Square, &ship),
        class("ship 2 square", 2, ClearanceShape::Square, &ship),
        class("ship 2 round", 2, ClearanceShape::Round, &ship),
        by_name("building-land"),
        by_name("building-shore"),
    ])
    .expect("valid classes");
    insta::assert_snapshot!(check(&terrain, one_metre(&terrain), &classes, MapBorder::Square { width: 2 }));
}

/// The built-in classes on the same map with 0 A.D.'s border (3 tiles = 12 navcells would leave
/// nothing of this small map, so 2 navcells here).
#[test]
fn hill_and_lake_built_in_classes() {
    let terrain = hill_and_lake();
    insta::assert_snapshot!(check(&terrain, one_metre(&terrain), &ClassSet::zero_ad_defaults(), MapBorder::Circle { width: 2 }));
}

/// Bilinear height and gradient at a point of the heightmap, in floating point (the oracle).
fn bilinear(heights: &[Vec<f64>], tile: f64, x: f64, z: f64) -> (f64, f64, f64) {
    let (tiles_w, tiles_h) = (heights[0].len() - 1, heights.len() - 1);
    let (u, v) = ((x / tile).clamp(0.0, tiles_w as f64), (z / tile).clamp(0.0, tiles_h as f64));
    let (ti, tj) = ((u.floor() as usize).min(tiles_w - 1), (v.floor() as usize).min(tiles_h - 1));
    let (fu, fv) = (u - ti as f64, v - tj as f64);
    let (h00, h10, h01, h11) = (heights[tj][ti], heights[tj][ti + 1], heights[tj + 1][ti], heights[tj + 1][ti + 1]);
    let h = h00 * (1.0 - fu) * (1.0 - fv) + h10 * fu * (1.0 - fv) + h01 * (1.0 - fu) * fv + h11 * fu * fv;
    let gx = ((h10 - h00) * (1.0 - fv) + (h11 - h01) * fv) / tile;
    let gz = ((h01 - h00) * (1.0 - fu) + (h11 - h10) * fu) / tile;
    (h, gx, gz)
}

/// Heights in metres with a resolution of 2^-8 m, within ±`amplitude`.
fn heightmap(tiles: usize, amplitude: i32) -> impl Strategy<Value = Vec<Vec<i32>>> {
    proptest::collection::vec(proptest::collection::vec(-amplitude * 256..=amplitude * 256, tiles + 1), tiles + 1)
}

fn to_f64(value: Fixed) -> f64 {
    value.to_num::<f64>()
}

proptest! {
    /// Depth and slope of every navcell against the same formulas in `f64`, and the class
    /// predicates against the `f64` values wherever these are not within 1e-6 of a bound.
    #[test]
    fn interpolated_depth_and_slope_match_a_floating_point_oracle(
        tiles in 1usize..5,
        raw_heights in heightmap(4, 20),
        water_256 in -2560i32..2560,
        tile_pick in 0usize..2,
        cell_pick in 0usize..6,
        bounds in (0i32..8, -1000i32..1000, 0i32..1000, 0i32..12),
    ) {
        let tile = [4, 2][tile_pick];
        // Navcell sides in raw units: 1, 0.5, 2, 4/3 (rounded), 0.75 and 0.3 (rounded) metres.
        let cell_raw = [65536i64, 32768, 131072, 87381, 49152, 19661][cell_pick];
        let cell = Fixed::from_bits(cell_raw);
        let heights: Vec<Vec<f64>> = raw_heights[..=tiles].iter().map(|row| row[..=tiles].iter().map(|&h| f64::from(h) / 256.0).collect()).collect();
        let terrain = Terrain::from_fn(tiles as u32, tiles as u32, metres(tile), Fixed::from_num(water_256) / 256, |vx, vz| {
            Fixed::from_num(raw_heights[vz as usize][vx as usize]) / 256
        }).expect("valid terrain");
        let water = f64::from(water_256) / 256.0;
        // Two navcells more than the terrain covers: they sample its edge.
        let covering = GridSpec::covering(&terrain, cell).expect("valid grid");
        let spec = GridSpec { width: covering.width + 2, height: covering.height + 1, cell_size: cell };
        let pass = TerrainPass::new(&terrain, spec).expect("valid grid");

        let (slope_8, min_depth_100, max_depth_100, shore) = bounds;
        let max_slope = f64::from(slope_8) / 8.0 + 0.0625;
        let (min_depth, max_depth) = (f64::from(min_depth_100) / 100.0, f64::from(min_depth_100) / 100.0 + f64::from(max_depth_100) / 100.0);
        let classes = ClassSet::new(vec![
            ClassDef { name: "slope".into(), max_slope: Some(Fixed::from_num(max_slope)), ..unbounded() },
            ClassDef { name: "depth".into(), min_water_depth: Some(Fixed::from_num(min_depth)), max_water_depth: Some(Fixed::from_num(max_depth)), ..unbounded() },
            ClassDef { name: "shore".into(), min_shore_distance: Some(metres(shore)), ..unbounded() },
        ]).expect("valid classes");
        // The bounds as the classes hold them (decimals become the nearest fixed value).
        let held = |value: Option<Fixed>| to_f64(value.expect("bound set"));
        let (s_bound, d_min, d_max) = (held(classes.defs()[0].max_slope), held(classes.defs()[1].min_water_depth), held(classes.defs()[1].max_water_depth));
        let mut masks = vec![0u16; (spec.width * spec.height) as usize];
        pass.base_masks(&classes, MapBorder::None, CellRect::full(spec.width, spec.height), &mut masks).expect("full window");

        let cs = to_f64(cell);
        let mut water_cells = Vec::new();
        for j in 0..spec.height {
            for i in 0..spec.width {
                let (x, z) = ((f64::from(i) + 0.5) * cs, (f64::from(j) + 0.5) * cs);
                let (h, gx, gz) = bilinear(&heights, f64::from(tile), x, z);
                let depth = water - h;
                let slope2 = gx * gx + gz * gz;
                let got_depth = to_f64(pass.water_depth(i, j).expect("on the grid"));
                prop_assert!(got_depth <= depth + 1e-9 && got_depth > depth - 1.0 / 65536.0 - 1e-9, "depth at ({}, {}): {} vs {}", i, j, got_depth, depth);
                let got_slope2 = to_f64(pass.slope_squared(i, j).expect("on the grid"));
                prop_assert!((got_slope2 - slope2).abs() <= 1.0 / 65536.0 + 1e-9 * slope2.max(1.0), "slope² at ({}, {}): {} vs {}", i, j, got_slope2, slope2);
                if depth > 1e-9 {
                    water_cells.push((i, j));
                }
                if depth.abs() > 1e-9 {
                    prop_assert_eq!(pass.is_water(i, j), depth > 0.0);
                }
                let mask = masks[(j * spec.width + i) as usize];
                if (slope2.sqrt() - s_bound).abs() > 1e-6 {
                    prop_assert_eq!(mask & 1 != 0, slope2.sqrt() >= s_bound, "slope class at ({}, {})", i, j);
                }
                if (depth - d_min).abs() > 1e-6 && (depth - d_max).abs() > 1e-6 {
                    prop_assert_eq!(mask & 2 != 0, !(d_min <= depth && depth <= d_max), "depth class at ({}, {})", i, j);
                }
            }
        }
        // Shore distances against the water navcells found in floating point (away from the water line).
        let near_line = (0..spec.height).any(|j| (0..spec.width).any(|i| {
            let (x, z) = ((f64::from(i) + 0.5) * cs, (f64::from(j) + 0.5) * cs);
            (water - bilinear(&heights, f64::from(tile), x, z).0).abs() <= 1e-9
        }));
        if !near_line {
            for j in 0..spec.height {
                for i in 0..spec.width {
                    let nearest = water_cells.iter().map(|&(wi, wj)| (i64::from(wi) - i64::from(i)).pow(2) + (i64::from(wj) - i64::from(j)).pow(2)).min();
                    let got = pass.shore_distance_squared(i, j);
                    prop_assert_eq!(got.map(i64::from), nearest);
                    let metres_away = nearest.map_or(f64::INFINITY, |d2| (d2 as f64).sqrt() * cs);
                    if (metres_away - f64::from(shore)).abs() > 1e-6 {
                        let mask = masks[(j * spec.width + i) as usize];
                        prop_assert_eq!(mask & 4 != 0, metres_away < f64::from(shore), "shore class at ({}, {})", i, j);
                    }
                }
            }
        }
    }
}

/// The same terrain and classes build the same grid twice, bit for bit.
#[test]
fn terrain_build_is_deterministic() {
    let terrain = hill_and_lake();
    let spec = one_metre(&terrain);
    let build =
        || TerrainPass::new(&terrain, spec).and_then(|p| p.terrain_grid(&ClassSet::zero_ad_defaults(), MapBorder::Square { width: 3 }));
    let (a, b) = (build().expect("valid"), build().expect("valid"));
    assert_eq!(a, b);
    let masks = a.blocked_masks();
    assert!(masks.iter().any(|&m| m != masks[0]), "the map is not uniform");
}
