//! Unit tests of terrain passability: clearance expansion and shore distances against brute force,
//! exact bounds, map borders and painted layers.

use super::*;
use crate::build::classes::{ClassDef, ObstructionMode};
use crate::grid::nav_grid::PassClass;
use proptest::prelude::*;

fn m(metres: i32) -> Fixed {
    Fixed::from_num(metres)
}

fn class(name: &str, clearance: i32, shape: ClearanceShape) -> ClassDef {
    ClassDef { clearance: m(clearance), clearance_shape: shape, ..ClassDef::unbounded(name, ObstructionMode::Pathfinding) }
}

/// A fixed LCG, so that a proptest case is reproducible from its seed.
fn lcg(state: &mut u64) -> u64 {
    *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *state >> 33
}

fn random_base(w: u32, h: u32, n_classes: u8, density: u64, seed: u64) -> Vec<u16> {
    let mut state = seed;
    (0..w * h).map(|_| (0..n_classes).fold(0, |mask, k| if lcg(&mut state) % 100 < density { mask | 1 << k } else { mask })).collect()
}

/// Expands `base` inside `rect` on a fresh grid; the only caller of [`expand_clearance`] here.
#[track_caller]
fn expand(base: &[u16], w: u32, h: u32, classes: &ClassSet, rect: CellRect) -> NavGrid {
    let mut grid = NavGrid::new(w, h, classes.len(), Fixed::ONE).unwrap();
    expand_clearance(base, w, h, classes, Fixed::ONE, rect, &mut grid).unwrap();
    grid.check_invariants().unwrap();
    grid
}

/// The expansion by definition: some base-blocked navcell within the class's neighbourhood.
fn brute_expand(base: &[u16], w: u32, h: u32, classes: &ClassSet) -> Vec<u16> {
    let mut out = vec![0; (w * h) as usize];
    for (class, def) in classes.iter() {
        let c = i64::from(def.clearance_cells(Fixed::ONE));
        for j in 0..i64::from(h) {
            for i in 0..i64::from(w) {
                let near = (j - c..=j + c).any(|jj| {
                    (i - c..=i + c).any(|ii| {
                        let inside = ii >= 0 && jj >= 0 && ii < i64::from(w) && jj < i64::from(h);
                        let within = match def.clearance_shape {
                            ClearanceShape::Square => true,
                            ClearanceShape::Round => (ii - i).pow(2) + (jj - j).pow(2) <= c * c,
                        };
                        inside && within && base[(jj * i64::from(w) + ii) as usize] & class.bit() != 0
                    })
                });
                if near {
                    out[(j * i64::from(w) + i) as usize] |= class.bit();
                }
            }
        }
    }
    out
}

fn blocked(grid: &NavGrid, class: PassClass) -> Vec<(u16, u16)> {
    let mut cells = Vec::new();
    for j in 0..grid.height() as u16 {
        for i in 0..grid.width() as u16 {
            if !grid.is_passable(Navcell::new(i, j), class) {
                cells.push((i, j));
            }
        }
    }
    cells
}

#[test]
fn transpose8_transposes() {
    let mut state = 7;
    for _ in 0..200 {
        let x = lcg(&mut state) << 31 ^ lcg(&mut state);
        let y = transpose8(x);
        for i in 0..8 {
            for j in 0..8 {
                assert_eq!(x >> (8 * i + j) & 1, y >> (8 * j + i) & 1);
            }
        }
    }
    assert_eq!(byte_at(&[0xff00_0000_0000_0000, 0x5], 60), 0x5f);
    assert_eq!(byte_at(&[0xff], 64), 0);
}

/// The terrain-expansion figure of the 0 A.D. design: a 20×10 grid, clearance 2.
#[test]
fn the_design_figure_expands_as_drawn() {
    let (w, h) = (20, 10);
    let mut base = vec![0u16; 200];
    let mut base_cells: Vec<(u16, u16)> = vec![(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (0, 2)];
    base_cells.extend((6..=9).flat_map(|j| (12..=19).map(move |i| (i, j))));
    for &(i, j) in &base_cells {
        base[usize::from(j) * 20 + usize::from(i)] = 0b11;
    }
    let classes = ClassSet::new(vec![class("square", 2, ClearanceShape::Square), class("round", 2, ClearanceShape::Round)]).unwrap();
    let grid = expand(&base, w, h, &classes, CellRect::full(w, h));
    let (square, round) = (PassClass::new(0).unwrap(), PassClass::new(1).unwrap());

    let mut expected = base_cells.clone();
    let rows: [(u16, std::ops::RangeInclusive<u16>); 5] = [(0, 3..=4), (1, 2..=4), (2, 1..=4), (3, 0..=3), (4, 0..=2)];
    for (j, range) in rows {
        expected.extend(range.map(|i| (i, j)));
    }
    expected.extend((6..=9).flat_map(|j| (10..=11).map(move |i| (i, j))));
    expected.extend((4..=5).flat_map(|j| (10..=19).map(move |i| (i, j))));
    expected.sort_by_key(|&(i, j)| (j, i));
    assert_eq!(blocked(&grid, square), expected);

    // The round neighbourhood leaves out the corners of the square one: di² + dj² ≤ 4.
    let square_only = [(4, 1), (3, 2), (4, 2), (2, 3), (3, 3), (1, 4), (2, 4), (10, 4), (11, 4), (10, 5)];
    let mut expected_round: Vec<(u16, u16)> = expected.iter().copied().filter(|c| !square_only.contains(c)).collect();
    expected_round.sort_by_key(|&(i, j)| (j, i));
    assert_eq!(blocked(&grid, round), expected_round);
    assert_eq!(grid.blocked_masks(), brute_expand(&base, w, h, &classes).as_slice());
}

#[test]
fn off_grid_cells_are_passable_and_large_clearances_fill_the_grid() {
    let base = vec![0u16; 12];
    let classes = ClassSet::new(vec![class("big", 64, ClearanceShape::Round)]).unwrap();
    assert!(expand(&base, 4, 3, &classes, CellRect::full(4, 3)).blocked_masks().iter().all(|&m| m == 0));
    let mut base = base;
    base[5] = 1;
    assert!(expand(&base, 4, 3, &classes, CellRect::full(4, 3)).blocked_masks().iter().all(|&m| m == 1));
}

#[test]
fn bad_arguments_are_errors_not_panics() {
    let classes = ClassSet::new(vec![class("a", 1, ClearanceShape::Square), class("b", 1, ClearanceShape::Square)]).unwrap();
    let base = vec![0u16; 12];
    let mut grid = NavGrid::new(4, 3, 2, Fixed::ONE).unwrap();
    let full = CellRect::full(4, 3);
    assert!(matches!(expand_clearance(&base[..11], 4, 3, &classes, Fixed::ONE, full, &mut grid), Err(TerrainError::BufferLength { .. })));
    assert!(matches!(expand_clearance(&base, 3, 4, &classes, Fixed::ONE, full, &mut grid), Err(TerrainError::GridMismatch { .. })));
    assert!(matches!(expand_clearance(&base, 4, 3, &classes, m(2), full, &mut grid), Err(TerrainError::GridMismatch { .. })));
    let off = CellRect::new(0, 0, 5, 3);
    assert!(matches!(expand_clearance(&base, 4, 3, &classes, Fixed::ONE, off, &mut grid), Err(TerrainError::RectOffGrid { .. })));
    let mut small = NavGrid::new(4, 3, 1, Fixed::ONE).unwrap();
    let err = expand_clearance(&base, 4, 3, &classes, Fixed::ONE, full, &mut small).unwrap_err();
    assert_eq!(err, TerrainError::TooFewGridClasses { needed: 2, found: 1 });

    let terrain = Terrain::flat(1, 1, m(4), Fixed::ZERO, Fixed::ZERO).unwrap();
    let pass = TerrainPass::new(&terrain, GridSpec { width: 4, height: 4, cell_size: Fixed::ONE }).unwrap();
    let mut out = vec![0u16; 3];
    assert!(matches!(
        pass.base_masks(&classes, MapBorder::None, CellRect::new(0, 0, 2, 2), &mut out),
        Err(TerrainError::BufferLength { .. })
    ));
    assert!(matches!(
        pass.base_masks(&classes, MapBorder::None, CellRect::new(3, 0, 5, 1), &mut out[..2]),
        Err(TerrainError::RectOffGrid { .. })
    ));
    for (w, h, size) in
        [(0, 4, Fixed::ONE), (4, MAX_TERRAIN_GRID_SIDE + 1, Fixed::ONE), (4, 4, Fixed::ZERO), (4, 4, MAX_CELL_SIZE + Fixed::ONE)]
    {
        let spec = GridSpec { width: w, height: h, cell_size: size };
        assert_eq!(TerrainPass::new(&terrain, spec).unwrap_err(), TerrainError::BadGridSpec { width: w, height: h, cell_size: size });
    }
}

#[test]
fn terrain_is_validated() {
    let t = m(4);
    assert_eq!(Terrain::flat(0, 3, t, Fixed::ZERO, Fixed::ZERO), Err(TerrainError::BadTileCount { tiles_w: 0, tiles_h: 3 }));
    assert_eq!(
        Terrain::flat(3, MAX_TILES + 1, t, Fixed::ZERO, Fixed::ZERO).unwrap_err(),
        TerrainError::BadTileCount { tiles_w: 3, tiles_h: MAX_TILES + 1 }
    );
    assert_eq!(Terrain::flat(1, 1, Fixed::ZERO, Fixed::ZERO, Fixed::ZERO), Err(TerrainError::BadTileSize { tile_size: Fixed::ZERO }));
    assert!(Terrain::flat(1, 1, MAX_TILE_SIZE + Fixed::from_bits(1), Fixed::ZERO, Fixed::ZERO).is_err());
    assert_eq!(Terrain::new(1, 1, t, vec![Fixed::ZERO; 3], Fixed::ZERO), Err(TerrainError::HeightCount { expected: 4, found: 3 }));
    let high = WORLD_LIMIT + Fixed::from_bits(1);
    let err = Terrain::from_fn(2, 1, t, Fixed::ZERO, |vx, vz| if (vx, vz) == (1, 1) { high } else { Fixed::ZERO }).unwrap_err();
    assert_eq!(err, TerrainError::HeightOutOfRange { vx: 1, vz: 1, height: high });
    assert_eq!(Terrain::flat(1, 1, t, Fixed::ZERO, -high), Err(TerrainError::WaterLevelOutOfRange { water_level: -high }));

    let mut terrain = Terrain::flat(2, 1, t, m(3), Fixed::ZERO).unwrap();
    assert_eq!(terrain.set_vertex_height(3, 0, m(1)), Err(TerrainError::VertexOffMap { vx: 3, vz: 0 }));
    assert_eq!(terrain.set_vertex_height(2, 1, high), Err(TerrainError::HeightOutOfRange { vx: 2, vz: 1, height: high }));
    assert_eq!(terrain.set_water_level(high), Err(TerrainError::WaterLevelOutOfRange { water_level: high }));
    terrain.set_vertex_height(2, 1, m(-7)).unwrap();
    terrain.set_water_level(m(2)).unwrap();
    assert_eq!(terrain.vertex_height(2, 1), Some(m(-7)));
    assert_eq!(terrain.vertex_height(3, 1), None);
    assert_eq!(terrain.heights()[5], m(-7));
    assert_eq!((terrain.tiles_w(), terrain.tiles_h(), terrain.tile_size(), terrain.water_level()), (2, 1, t, m(2)));

    let spec = GridSpec::covering(&terrain, Fixed::from_num(3) / 2).unwrap();
    // ceil(8 / 1.5) = 6, ceil(4 / 1.5) = 3.
    assert_eq!((spec.width, spec.height), (6, 3));
    assert!(GridSpec::covering(&terrain, Fixed::ZERO).is_err());
    let huge = Terrain::flat(MAX_TILES, 1, MAX_TILE_SIZE, Fixed::ZERO, Fixed::ZERO).unwrap();
    assert!(matches!(GridSpec::covering(&huge, Fixed::ONE), Err(TerrainError::BadGridSpec { .. })));
}

/// A 1 m grid over a 4 m-tile ramp rising 1 m per metre east and ½ m per metre north.
#[test]
fn navcells_sample_the_bilinear_surface_at_their_centre() {
    let terrain = Terrain::from_fn(2, 2, m(4), m(3), |vx, vz| m(4 * vx as i32) + m(2 * vz as i32)).unwrap();
    // Two navcells past the terrain's east edge: they are clamped to it.
    let pass = TerrainPass::new(&terrain, GridSpec { width: 10, height: 8, cell_size: Fixed::ONE }).unwrap();
    let half = Fixed::from_num(1) / 2;
    // Ground at (i + ½, j + ½) is (i + ½) + (j + ½)/2.
    assert_eq!(pass.water_depth(0, 0), Some(m(3) - half - half / 2));
    assert_eq!(pass.water_depth(5, 3), Some(m(3) - (m(5) + half) - (m(3) + half) / 2));
    assert_eq!(pass.water_depth(9, 0), Some(m(3) - m(8) - half / 2), "clamped to x = 8");
    assert_eq!(pass.water_depth(10, 0), None);
    // Slope² = 1 + ¼ everywhere, also where clamped.
    assert_eq!(pass.slope_squared(3, 7), Some(m(1) + half / 2));
    assert_eq!(pass.slope_squared(9, 7), Some(m(1) + half / 2));
    assert!(pass.is_water(0, 0) && pass.is_water(1, 0) && !pass.is_water(2, 1) && !pass.is_water(0, 8));
    // Row 0 is under water up to i = 2 (ground 2.75 < 3), rows 1 and 2 up to i = 1.
    assert_eq!(pass.shore_distance_squared(2, 0), Some(0));
    assert_eq!(pass.shore_distance_squared(3, 0), Some(1));
    assert_eq!(pass.shore_distance_squared(4, 0), Some(4));
    assert_eq!(pass.shore_distance_squared(3, 2), Some(4));
    assert!(!pass.wide, "1 m navcells on 4 m tiles keep 64-bit keys");
}

fn bounds(name: &str) -> ClassDef {
    ClassDef::unbounded(name, ObstructionMode::Pathfinding)
}

/// The one-cell base mask of navcell `(i, j)`; the only caller of `base_masks` in these tests
/// apart from the window property.
#[track_caller]
fn base_at(pass: &TerrainPass, classes: &ClassSet, i: u32, j: u32) -> u16 {
    let mut out = [0u16];
    pass.base_masks(classes, MapBorder::None, CellRect::new(i, j, i + 1, j + 1), &mut out).unwrap();
    out[0]
}

#[test]
fn bounds_are_compared_exactly() {
    let eps = Fixed::from_bits(1);
    // Flat ground at -1.25 m under a 0.5 m water level: depth exactly 1.75.
    let terrain = Terrain::flat(2, 2, m(4), Fixed::from_num(-5) / 4, Fixed::from_num(1) / 2).unwrap();
    let pass = TerrainPass::new(&terrain, GridSpec { width: 8, height: 8, cell_size: Fixed::ONE }).unwrap();
    let depth = Fixed::from_num(7) / 4;
    let classes = ClassSet::new(vec![
        ClassDef { max_water_depth: Some(depth), min_water_depth: Some(depth), ..bounds("exact") },
        ClassDef { max_water_depth: Some(depth - eps), ..bounds("shallower") },
        ClassDef { min_water_depth: Some(depth + eps), ..bounds("deeper") },
        ClassDef { max_slope: Some(Fixed::ZERO), ..bounds("flat is not below 0") },
        ClassDef { max_slope: Some(eps), ..bounds("flat is below anything") },
    ])
    .unwrap();
    assert_eq!(base_at(&pass, &classes, 3, 5), 0b01110);

    // A plane of slope² = ½ (½ m per metre along both axes): the bound √½ lies between
    // 46340 and 46341 raw.
    let terrain = Terrain::from_fn(2, 2, m(4), m(-100), |vx, vz| m(2 * (vx + vz) as i32)).unwrap();
    let pass = TerrainPass::new(&terrain, GridSpec { width: 8, height: 8, cell_size: Fixed::ONE }).unwrap();
    let classes = ClassSet::new(vec![
        ClassDef { max_slope: Some(Fixed::from_bits(46340)), ..bounds("below") },
        ClassDef { max_slope: Some(Fixed::from_bits(46341)), ..bounds("above") },
    ])
    .unwrap();
    for (i, j) in [(0, 0), (7, 7), (3, 4)] {
        assert_eq!(base_at(&pass, &classes, i, j), 0b01);
    }
    // Slope exactly 1 is not below 1 (strict, as 0 A.D.).
    let terrain = Terrain::from_fn(2, 2, m(4), m(-100), |vx, _| m(4 * vx as i32)).unwrap();
    let pass = TerrainPass::new(&terrain, GridSpec { width: 8, height: 8, cell_size: Fixed::ONE }).unwrap();
    let classes =
        ClassSet::new(vec![ClassDef { max_slope: Some(m(1)), ..bounds("1") }, ClassDef { max_slope: Some(m(1) + eps), ..bounds("1+") }])
            .unwrap();
    assert_eq!(base_at(&pass, &classes, 4, 4), 0b01);
}

#[test]
fn shore_distances_are_euclidean_between_centres() {
    // One navcell under water, (1, 1), on 1 m tiles: its tile's corners are at -4 m, every other
    // vertex at 1 m, and the water at -2 m (the neighbours' ground is -1.5 m or higher).
    let terrain =
        Terrain::from_fn(10, 10, m(1), m(-2), |vx, vz| if (1..=2).contains(&vx) && (1..=2).contains(&vz) { m(-4) } else { m(1) }).unwrap();
    let spec = GridSpec { width: 10, height: 10, cell_size: Fixed::ONE };
    let pass = TerrainPass::new(&terrain, spec).unwrap();
    assert!(pass.is_water(1, 1) && !pass.is_water(2, 1) && !pass.is_water(0, 0));
    // (4, 5) is (3, 4) away: distance 5 exactly.
    assert_eq!(pass.shore_distance_squared(4, 5), Some(25));
    let eps = Fixed::from_bits(1);
    let classes = ClassSet::new(vec![
        ClassDef { min_shore_distance: Some(m(5)), max_shore_distance: Some(m(5)), ..bounds("exact") },
        ClassDef { min_shore_distance: Some(m(5) + eps), ..bounds("farther") },
        ClassDef { max_shore_distance: Some(m(5) - eps), ..bounds("nearer") },
        ClassDef { max_shore_distance: Some(Fixed::ZERO), ..bounds("on water") },
        ClassDef { max_shore_distance: Some(-eps), ..bounds("nowhere") },
        ClassDef { min_shore_distance: Some(-m(3)), ..bounds("anywhere") },
    ])
    .unwrap();
    assert_eq!(base_at(&pass, &classes, 4, 5), 0b11110);
    assert_eq!(base_at(&pass, &classes, 1, 1), 0b10011);

    // Without water, shore distances are infinite: minima pass, maxima fail.
    let dry = Terrain::flat(3, 3, m(4), m(1), Fixed::ZERO).unwrap();
    let pass = TerrainPass::new(&dry, GridSpec { width: 12, height: 12, cell_size: Fixed::ONE }).unwrap();
    assert_eq!(pass.shore_distance_squared(5, 5), None);
    let classes = ClassSet::new(vec![
        ClassDef { min_shore_distance: Some(WORLD_LIMIT), ..bounds("far") },
        ClassDef { max_shore_distance: Some(WORLD_LIMIT), ..bounds("near") },
    ])
    .unwrap();
    assert_eq!(base_at(&pass, &classes, 5, 5), 0b10);
}

#[test]
fn borders_follow_their_definitions() {
    let terrain = Terrain::flat(10, 10, m(4), m(1), Fixed::ZERO).unwrap();
    let classes = ClassSet::new(vec![bounds("a"), bounds("b")]).unwrap();
    for (w, h) in [(40, 40), (40, 30), (7, 9), (1, 1)] {
        let pass = TerrainPass::new(&terrain, GridSpec { width: w, height: h, cell_size: Fixed::ONE }).unwrap();
        for width in [0, 1, 3, 5, 20] {
            for border in [MapBorder::None, MapBorder::Square { width }, MapBorder::Circle { width }] {
                let mut out = vec![0u16; (w * h) as usize];
                pass.base_masks(&classes, border, CellRect::full(w, h), &mut out).unwrap();
                for j in 0..h {
                    for i in 0..w {
                        let expected = match border {
                            MapBorder::None => false,
                            MapBorder::Square { width } => i < width || j < width || i + width >= w || j + width >= h,
                            MapBorder::Circle { width } => {
                                // On a square grid, 0 A.D.'s circle with margin `width`.
                                let (dx, dz, a, b) = (
                                    2 * i64::from(i) + 1 - i64::from(w),
                                    2 * i64::from(j) + 1 - i64::from(h),
                                    i64::from(w) - 2 * i64::from(width),
                                    i64::from(h) - 2 * i64::from(width),
                                );
                                a <= 0 || b <= 0 || dx * dx * b * b + dz * dz * a * a >= a * a * b * b
                            }
                        };
                        assert_eq!(border.is_border(i, j, w, h), expected, "{border:?} {w}x{h} ({i}, {j})");
                        assert_eq!(out[(j * w + i) as usize], if expected { 0b11 } else { 0 }, "{border:?} {w}x{h} ({i}, {j})");
                        if w == h && width > 0 && a_positive(w, width) && matches!(border, MapBorder::Circle { .. }) {
                            let zero_ad = (2 * i64::from(i) + 1 - i64::from(w)).pow(2) + (2 * i64::from(j) + 1 - i64::from(h)).pow(2)
                                >= (i64::from(w) - 2 * i64::from(width)).pow(2);
                            assert_eq!(expected, zero_ad);
                        }
                    }
                }
            }
        }
    }
}

fn a_positive(w: u32, width: u32) -> bool {
    w > 2 * width
}

/// Random terrain: `tiles × tiles` tiles of side `tile_size`, heights in ±`amplitude` metres
/// (quarter-metre steps), water level 0.
fn random_terrain(tiles: u32, tile_size: Fixed, amplitude: i32, seed: u64) -> Terrain {
    let mut state = seed;
    let span = (8 * amplitude + 1) as u64;
    Terrain::from_fn(tiles, tiles, tile_size, Fixed::ZERO, |_, _| Fixed::from_num((lcg(&mut state) % span) as i32 - 4 * amplitude) / 4)
        .unwrap()
}

fn mixed_classes() -> ClassSet {
    let quarter = |q: i32| Fixed::from_num(q) / 4;
    ClassSet::new(vec![
        ClassDef { max_slope: Some(quarter(3)), max_water_depth: Some(Fixed::ZERO), ..bounds("land") },
        ClassDef { min_water_depth: Some(quarter(2)), ..bounds("water") },
        ClassDef { min_shore_distance: Some(quarter(7)), max_slope: Some(quarter(5)), ..bounds("inland") },
        ClassDef { max_shore_distance: Some(m(2)), min_water_depth: Some(-m(1)), ..bounds("shore") },
    ])
    .unwrap()
}

/// The squared distance to the nearest feature by trying them all.
fn brute_edt(feature: &[bool], w: usize, h: usize) -> Vec<u32> {
    (0..w * h)
        .map(|idx| {
            let (i, j) = ((idx % w) as i64, (idx / w) as i64);
            (0..w * h)
                .filter(|&f| feature[f])
                .map(|f| ((f % w) as i64 - i).pow(2) + ((f / w) as i64 - j).pow(2))
                .min()
                .map_or(NO_WATER, |d| d as u32)
        })
        .collect()
}

proptest! {
    #[test]
    fn edt_equals_the_brute_force_minimum(w in 1usize..24, h in 1usize..24, density in 0u64..30, seed in any::<u64>()) {
        let mut state = seed;
        let feature: Vec<bool> = (0..w * h).map(|_| lcg(&mut state) % 100 < density).collect();
        let mut out = Vec::new();
        squared_edt(&feature, w, h, &mut out);
        prop_assert_eq!(out, brute_edt(&feature, w, h));
    }

    #[test]
    fn expansion_equals_its_definition_and_windows_equal_the_whole(
        w in 1u32..40, h in 1u32..40, density in 0u64..20, seed in any::<u64>(),
        clearances in proptest::collection::vec((0i32..7, any::<bool>()), 1..4),
        window in (0u32..40, 0u32..40, 0u32..40, 0u32..40),
    ) {
        let defs: Vec<ClassDef> = clearances.iter().enumerate()
            .map(|(k, &(c, round))| class(&format!("c{k}"), c, if round { ClearanceShape::Round } else { ClearanceShape::Square }))
            .collect();
        let classes = ClassSet::new(defs).unwrap();
        let base = random_base(w, h, classes.len(), density, seed);
        let full = expand(&base, w, h, &classes, CellRect::full(w, h));
        let brute = brute_expand(&base, w, h, &classes);
        prop_assert_eq!(full.blocked_masks(), brute.as_slice());

        let (i0, i1) = (window.0.min(window.1) % (w + 1), window.0.max(window.1).min(w));
        let (j0, j1) = (window.2.min(window.3) % (h + 1), window.2.max(window.3).min(h));
        let rect = CellRect::new(i0, j0, i1, j1);
        // Start from garbage so that every navcell of the window must be written.
        let mut windowed = NavGrid::new(w, h, classes.len(), Fixed::ONE).unwrap();
        for idx in 0..(w * h) {
            windowed.set_blocked_mask(Navcell::new((idx % w) as u16, (idx / w) as u16), 0xffff);
        }
        expand_clearance(&base, w, h, &classes, Fixed::ONE, rect, &mut windowed).unwrap();
        for j in 0..h as u16 {
            for i in 0..w as u16 {
                let cell = Navcell::new(i, j);
                let expected = if rect.contains(u32::from(i), u32::from(j)) { full.blocked_mask(cell) } else { windowed.class_bits() };
                prop_assert_eq!(windowed.blocked_mask(cell), expected, "{:?} at {}", rect, cell);
            }
        }
    }

    #[test]
    fn round_is_inside_square_and_expansion_grows_with_clearance(
        w in 1u32..50, h in 1u32..50, density in 0u64..10, seed in any::<u64>(), c in 0i32..9,
    ) {
        let classes = ClassSet::new(vec![
            class("square", c, ClearanceShape::Square),
            class("round", c, ClearanceShape::Round),
            class("square+1", c + 1, ClearanceShape::Square),
            class("round+1", c + 1, ClearanceShape::Round),
        ]).unwrap();
        let base: Vec<u16> = random_base(w, h, 1, density, seed).into_iter().map(|m| m * 0b1111).collect();
        let grid = expand(&base, w, h, &classes, CellRect::full(w, h));
        for (&b, &m) in base.iter().zip(grid.blocked_masks()) {
            let bit = |k: u16| m >> k & 1;
            prop_assert!(bit(1) <= bit(0), "round within square");
            prop_assert!(bit(0) <= bit(2) && bit(1) <= bit(3), "monotone in clearance");
            prop_assert!(bit(1) <= bit(3) && bit(3) <= bit(2), "round c+1 between");
            prop_assert!(b & 1 <= bit(1), "base stays blocked");
        }
    }

    #[test]
    fn base_masks_of_a_window_equal_the_whole(
        tiles in 1u32..6, seed in any::<u64>(), cells_per_tile in 1u32..5, extra in 0u32..5,
        window in (0u32..30, 0u32..30, 0u32..30, 0u32..30), border_width in 0u32..4, circle in any::<bool>(),
    ) {
        let terrain = random_terrain(tiles, m(4), 3, seed);
        let cell_size = m(4) / i64::from(cells_per_tile);
        let side = tiles * cells_per_tile + extra;
        let pass = TerrainPass::new(&terrain, GridSpec { width: side, height: side, cell_size }).unwrap();
        let classes = mixed_classes();
        let border = if circle { MapBorder::Circle { width: border_width } } else { MapBorder::Square { width: border_width } };
        let mut full = vec![0u16; (side * side) as usize];
        pass.base_masks(&classes, border, CellRect::full(side, side), &mut full).unwrap();
        let (i0, i1) = (window.0.min(window.1).min(side), window.0.max(window.1).min(side));
        let (j0, j1) = (window.2.min(window.3).min(side), window.2.max(window.3).min(side));
        let rect = CellRect::new(i0, j0, i1, j1);
        let mut part = vec![0xffffu16; rect.area() as usize];
        pass.base_masks(&classes, border, rect, &mut part).unwrap();
        let mut k = 0;
        for j in j0..j1 {
            for i in i0..i1 {
                prop_assert_eq!(part[k], full[(j * side + i) as usize]);
                k += 1;
            }
        }
    }

    /// The i64 keys used for every real map give what the i128 keys give.
    #[test]
    fn narrow_and_wide_keys_agree(tiles in 1u32..5, seed in any::<u64>(), cells_per_tile in 1u32..9, odd_cells in any::<bool>()) {
        let terrain = random_terrain(tiles, m(4), 6, seed);
        // An odd raw navcell size makes the interpolation denominator large.
        let cell_size = m(4) / i64::from(cells_per_tile) + Fixed::from_bits(i64::from(odd_cells));
        let spec = GridSpec { width: tiles * cells_per_tile, height: tiles * cells_per_tile + 1, cell_size };
        let narrow = TerrainPass::build(&terrain, spec, &[], false).unwrap();
        let wide = TerrainPass::build(&terrain, spec, &[], true).unwrap();
        // Navcells of a power-of-two fraction of a tile keep the denominator small.
        let narrow_is_narrow = !narrow.wide;
        prop_assert_eq!(narrow_is_narrow, cells_per_tile.is_power_of_two() && !odd_cells);
        let wide_is_wide = wide.wide;
        prop_assert!(wide_is_wide);
        let classes = mixed_classes();
        let full = CellRect::full(spec.width, spec.height);
        let mut a = vec![0u16; full.area() as usize];
        let mut b = a.clone();
        narrow.base_masks(&classes, MapBorder::None, full, &mut a).unwrap();
        wide.base_masks(&classes, MapBorder::None, full, &mut b).unwrap();
        prop_assert_eq!(a, b);
        prop_assert_eq!(&narrow.shore, &wide.shore);
        // Whole rows of i64 keys (when they fit) and of i128 keys equal the keys of single navcells.
        let (mut row64, mut row128) = (RowKeys::<i64>::new(&narrow, 0, spec.width), RowKeys::<i128>::new(&wide, 0, spec.width));
        for j in 0..spec.height {
            row128.compute(&wide, j, true);
            if narrow_is_narrow {
                row64.compute(&narrow, j, true);
            }
            for i in 0..spec.width {
                let single = wide.cell_keys(i, j);
                prop_assert_eq!((row128.depth[i as usize], row128.slope[i as usize]), single);
                if narrow_is_narrow {
                    prop_assert_eq!((i128::from(row64.depth[i as usize]), i128::from(row64.slope[i as usize])), single);
                }
            }
        }
    }
}

/// Random painted kinds, `water` and `blocked` percent of them (the rest ground).
fn random_cells(n: usize, water: u64, blocked: u64, seed: u64) -> Vec<CellKind> {
    let mut state = seed ^ 0x0070_6169_6e74_6564;
    (0..n)
        .map(|_| match lcg(&mut state) % 100 {
            r if r < water => CellKind::Water,
            r if r < water + blocked => CellKind::Blocked,
            _ => CellKind::Ground,
        })
        .collect()
}

/// [`mixed_classes`] and bounds placed at the painted depths exactly and around them.
fn painted_classes() -> ClassSet {
    let eps = Fixed::from_bits(1);
    let mut defs = mixed_classes().defs().to_vec();
    defs.extend([
        ClassDef { min_water_depth: Some(PAINTED_WATER_DEPTH), max_water_depth: Some(PAINTED_WATER_DEPTH), ..bounds("painted water") },
        ClassDef { min_water_depth: Some(PAINTED_WATER_DEPTH + eps), ..bounds("deeper than painted") },
        ClassDef { max_water_depth: Some(PAINTED_GROUND_DEPTH), ..bounds("painted ground") },
        ClassDef {
            min_water_depth: Some(PAINTED_GROUND_DEPTH + eps),
            max_water_depth: Some(PAINTED_WATER_DEPTH - eps),
            ..bounds("between")
        },
        ClassDef { max_shore_distance: Some(-eps), ..bounds("nowhere") },
        ClassDef { min_shore_distance: Some(Fixed::ZERO), max_shore_distance: Some(m(3)), ..bounds("coast") },
        bounds("anything"),
    ]);
    ClassSet::new(defs).unwrap()
}

/// Whether a painted navcell fails a class's depth and shore bounds, by the module
/// documentation: the painted depth, and the squared distance `shore2` (navcells², [`NO_WATER`]
/// for none) to the nearest painted water, compared with the bounds in wide integers.
fn painted_fails(def: &ClassDef, kind: CellKind, shore2: u32, cell_size: Fixed) -> bool {
    let depth = kind.water_depth();
    let depth_fails = def.min_water_depth.is_some_and(|min| depth < min) || def.max_water_depth.is_some_and(|max| depth > max);
    let metres2 = raw(cell_size).pow(2) * i128::from(shore2);
    let shore_fails = def.min_shore_distance.is_some_and(|min| min > Fixed::ZERO && shore2 != NO_WATER && metres2 < raw(min).pow(2))
        || def.max_shore_distance.is_some_and(|max| max < Fixed::ZERO || shore2 == NO_WATER || metres2 > raw(max).pow(2));
    depth_fails || shore_fails
}

proptest! {
    /// The base masks of a painted grid follow the module documentation: blocked navcells fail
    /// every class; elsewhere a class fails when the painted depth, the exact distance to the
    /// nearest painted water (brute force), or the heightmap's slope (the unpainted masks of
    /// the class's slope bound alone) fails its bound. Windows equal the whole, and the
    /// narrow and wide keys agree.
    #[test]
    fn painted_masks_follow_their_definition(
        tiles in 1u32..5, seed in any::<u64>(), cells_per_tile in 1u32..5, extra in 0u32..4,
        water in 0u64..50, blocked in 0u64..20, window in (0u32..24, 0u32..24, 0u32..24, 0u32..24),
        border_width in 0u32..3,
    ) {
        let terrain = random_terrain(tiles, m(4), 3, seed);
        let cell_size = m(4) / i64::from(cells_per_tile);
        let side = tiles * cells_per_tile + extra;
        let spec = GridSpec { width: side, height: side, cell_size };
        let n = (side * side) as usize;
        let cells = random_cells(n, water, blocked, seed);
        let pass = TerrainPass::with_cells(&terrain, spec, &cells).unwrap();
        prop_assert_eq!(pass.painted(), cells.as_slice());
        let classes = painted_classes();
        let border = MapBorder::Square { width: border_width };
        let full_rect = CellRect::full(side, side);
        let mut full = vec![0u16; n];
        pass.base_masks(&classes, border, full_rect, &mut full).unwrap();

        let slope_only = ClassSet::new(classes.defs().iter().map(|d| ClassDef { max_slope: d.max_slope, ..bounds(&d.name) }).collect()).unwrap();
        let mut slope = vec![0u16; n];
        TerrainPass::new(&terrain, spec).unwrap().base_masks(&slope_only, border, full_rect, &mut slope).unwrap();
        let feature: Vec<bool> = cells.iter().map(|&k| k == CellKind::Water).collect();
        let shore = brute_edt(&feature, side as usize, side as usize);
        for idx in 0..n {
            let (i, j) = ((idx % side as usize) as u32, (idx / side as usize) as u32);
            let mut expected = slope[idx];
            for (class, def) in classes.iter() {
                if cells[idx] == CellKind::Blocked || painted_fails(def, cells[idx], shore[idx], cell_size) {
                    expected |= class.bit();
                }
            }
            prop_assert_eq!(full[idx], expected, "navcell ({}, {}) painted {:?}, shore² {}", i, j, cells[idx], shore[idx]);
            prop_assert_eq!(pass.water_depth(i, j), Some(cells[idx].water_depth()));
            prop_assert_eq!(pass.is_water(i, j), cells[idx] == CellKind::Water);
            prop_assert_eq!(pass.shore_distance_squared(i, j), Some(shore[idx]).filter(|&d| d != NO_WATER));
        }

        let (i0, i1) = (window.0.min(window.1).min(side), window.0.max(window.1).min(side));
        let (j0, j1) = (window.2.min(window.3).min(side), window.2.max(window.3).min(side));
        let rect = CellRect::new(i0, j0, i1, j1);
        let mut part = vec![0xffffu16; rect.area() as usize];
        pass.base_masks(&classes, border, rect, &mut part).unwrap();
        let mut k = 0;
        for j in j0..j1 {
            for i in i0..i1 {
                prop_assert_eq!(part[k], full[(j * side + i) as usize]);
                k += 1;
            }
        }

        let wide = TerrainPass::build(&terrain, spec, &cells, true).unwrap();
        prop_assert!(wide.wide);
        let mut from_wide = vec![0u16; n];
        wide.base_masks(&classes, border, full_rect, &mut from_wide).unwrap();
        prop_assert_eq!(from_wide, full);
    }
}

#[test]
fn painted_layers_of_the_wrong_length_are_refused_and_bytes_round_trip() {
    let terrain = Terrain::flat(1, 1, m(4), Fixed::ZERO, -Fixed::ONE).unwrap();
    let spec = GridSpec { width: 4, height: 3, cell_size: Fixed::ONE };
    for len in [1, 11, 13] {
        let err = TerrainPass::with_cells(&terrain, spec, &vec![CellKind::Ground; len]).unwrap_err();
        assert_eq!(err, TerrainError::CellCount { expected: 12, found: len });
    }
    assert_eq!(TerrainPass::with_cells(&terrain, spec, &[]).unwrap(), TerrainPass::new(&terrain, spec).unwrap());
    for kind in [CellKind::Ground, CellKind::Water, CellKind::Blocked] {
        assert_eq!(CellKind::from_byte(kind.to_byte()), Some(kind));
    }
    assert_eq!((CellKind::Ground.to_byte(), CellKind::Water.to_byte(), CellKind::Blocked.to_byte()), (0, 1, 2));
    assert!((3..=u8::MAX).all(|b| CellKind::from_byte(b).is_none()));
}

/// A painted grid ignores the heightmap's water: a lake under painted ground is dry land for
/// the depth and shore bounds, and painted water on a hill is water; the hill's slope counts.
#[test]
fn painting_replaces_the_heightmaps_water_but_not_its_slope() {
    // 2 × 1 tiles of 4 m: the west tile 5 m under the water, flat; the east tile a ramp of 1/2.
    let terrain = Terrain::from_fn(2, 1, m(4), Fixed::ZERO, |vx, _| if vx == 2 { m(-3) } else { m(-5) }).unwrap();
    let spec = GridSpec { width: 8, height: 4, cell_size: Fixed::ONE };
    let mut cells = vec![CellKind::Ground; 32];
    cells[8 * 2 + 6] = CellKind::Water; // (6, 2), on the ramp
    cells[8 + 1] = CellKind::Blocked; // (1, 1), in the lake
    let pass = TerrainPass::with_cells(&terrain, spec, &cells).unwrap();
    let classes = ClassSet::new(vec![
        ClassDef { max_water_depth: Some(m(2)), ..bounds("land") },
        ClassDef { min_water_depth: Some(m(1)), ..bounds("ship") },
        ClassDef { max_slope: Some(Fixed::ONE / 4), ..bounds("flat only") },
        ClassDef { max_shore_distance: Some(m(2)), ..bounds("near water") },
    ])
    .unwrap();
    assert_eq!(base_at(&pass, &classes, 0, 0), 0b1010, "lake painted ground: dry, flat, √40 m from the painted water");
    assert_eq!(base_at(&pass, &classes, 1, 1), 0b1111, "blocked");
    assert_eq!(base_at(&pass, &classes, 6, 2), 0b0101, "painted water on the ramp");
    assert_eq!(base_at(&pass, &classes, 4, 3), 0b1110, "ground on the ramp, √5 m from the water");
    assert_eq!(base_at(&pass, &classes, 5, 1), 0b0110, "ground on the ramp, √2 m from the water");
    assert_eq!(pass.water_depth(0, 0), Some(PAINTED_GROUND_DEPTH));
    assert!(!pass.is_water(0, 0) && pass.is_water(6, 2));
    assert_eq!(pass.shore_distance_squared(4, 3), Some(5));
}

#[test]
fn extreme_terrain_uses_wide_keys_and_stays_exact() {
    // A 16 km cliff on tiny tiles: the narrow bounds do not hold.
    let terrain =
        Terrain::from_fn(2, 1, Fixed::from_bits(3), Fixed::ZERO, |vx, _| if vx == 1 { WORLD_LIMIT } else { -WORLD_LIMIT }).unwrap();
    let pass = TerrainPass::new(&terrain, GridSpec { width: 3, height: 2, cell_size: Fixed::from_bits(2) }).unwrap();
    assert!(pass.wide);
    assert_eq!(pass.slope_squared(0, 0), Some(Fixed::MAX));
    let classes = ClassSet::new(vec![ClassDef { max_slope: Some(WORLD_LIMIT), ..bounds("steep") }, bounds("any")]).unwrap();
    assert_eq!(base_at(&pass, &classes, 0, 0), 0b01);
    // Depth at the centre of navcell 0: x = 1 raw of a 3-raw tile, so ground = -L + 2L/3.
    assert_eq!(pass.water_depth(0, 0), Some(Fixed::from_bits(div_floor(raw(WORLD_LIMIT), 3) as i64)));
}
