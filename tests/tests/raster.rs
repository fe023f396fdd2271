//! Rasterization of obstruction squares: ASCII snapshots of 0 A.D.'s design figures, and properties
//! (monotone in clearance, translation by whole navcells, narrow fences never leak).

use pathing::raster::{count_blocked_in_square, oriented_square, rasterize_square};
use pathing::{CellRect, Fixed, WorldPos};
use proptest::prelude::*;

/// Decimal text to fixed point (test inputs are literals).
fn fx(text: &str) -> Fixed {
    pathing::decimal::parse_fixed(text).unwrap()
}

/// Blocked navcells of the given squares `(x, z, hw, hh, degrees)` for `clearance` on a `w × h`
/// grid of 1 m navcells, as a row-major bitmap.
fn raster(w: u32, h: u32, clearance: &str, squares: &[(&str, &str, &str, &str, &str)]) -> Vec<bool> {
    let mut cells = vec![false; (w * h) as usize];
    for &(x, z, hw, hh, deg) in squares {
        let sq = oriented_square(WorldPos::new(fx(x), fx(z)), fx(hw), fx(hh), fx(deg)).unwrap();
        rasterize_square(&sq, fx(clearance), Fixed::ONE, CellRect::full(w, h), |j, a, b| {
            for i in a..b {
                cells[(j * w + i) as usize] = true;
            }
        });
    }
    cells
}

fn render(cells: &[bool], w: u32, h: u32) -> String {
    let mut s = String::new();
    for j in (0..h).rev() {
        for i in 0..w {
            s.push(if cells[(j * w + i) as usize] { '#' } else { '.' });
        }
        s.push('\n');
    }
    s
}

fn snapshot(w: u32, h: u32, clearance: &str, squares: &[(&str, &str, &str, &str, &str)]) -> String {
    render(&raster(w, h, clearance, squares), w, h)
}

#[test]
fn rectangles_at_the_seed_angles() {
    for deg in ["0", "30", "45", "63.43"] {
        for c in ["0", "1", "2"] {
            let name = format!("rect_7x3_deg{}_c{c}", deg.replace('.', "_"));
            insta::assert_snapshot!(name, snapshot(20, 16, c, &[("10", "8", "3.5", "1.5", deg)]));
        }
    }
}

#[test]
fn narrow_fences() {
    // Fences 0.2 m thick (and one of zero thickness) at several angles: the narrow-obstruction rule
    // rasterizes each as if three navcells wide, so every one is a closed line of navcells.
    let fences = [
        ("6", "14", "5", "0.1", "0"),
        ("18", "14", "5", "0.1", "45"),
        ("30", "14", "5", "0", "63.43"),
        ("6", "4", "5", "0.1", "90"),
        ("18", "4", "5", "0.1", "30"),
        ("30", "4", "5", "0.1", "-20"),
    ];
    insta::assert_snapshot!("narrow_fences_c0", snapshot(36, 19, "0", &fences));
    insta::assert_snapshot!("narrow_fences_c1", snapshot(36, 19, "1", &fences));
}

/// A wall of fences across the whole grid at `deg`, thickness `t`: no walk from one side to the
/// other (octile moves without cutting corners) gets through.
fn fence_blocks(deg: i32, thickness_thousandths: i32, clearance: &str) -> bool {
    let (w, h) = (41u32, 41u32);
    let t = Fixed::from_num(thickness_thousandths) / 2000;
    let sq = oriented_square(WorldPos::from_int(20, 20), Fixed::from_num(60), t, Fixed::from_num(deg)).unwrap();
    let mut blocked = vec![false; (w * h) as usize];
    rasterize_square(&sq, fx(clearance), Fixed::ONE, CellRect::full(w, h), |j, a, b| {
        for i in a..b {
            blocked[(j * w + i) as usize] = true;
        }
    });
    // Flood from every passable cell on one side of the line through the centre along u.
    let u = pathing::trig::unit_vector_degrees(Fixed::from_num(deg));
    let side = |i: i32, j: i32| {
        let (dx, dz) = (
            Fixed::from_num(i) + Fixed::from_num(1) / 2 - Fixed::from_num(20),
            Fixed::from_num(j) + Fixed::from_num(1) / 2 - Fixed::from_num(20),
        );
        (dx * u.z - dz * u.x).signum()
    };
    let idx = |i: i32, j: i32| (j as u32 * w + i as u32) as usize;
    let mut seen = vec![false; blocked.len()];
    let mut stack = Vec::new();
    for j in 0..h as i32 {
        for i in 0..w as i32 {
            if !blocked[idx(i, j)] && side(i, j) > Fixed::ZERO {
                seen[idx(i, j)] = true;
                stack.push((i, j));
            }
        }
    }
    let pass = |i: i32, j: i32| i >= 0 && j >= 0 && i < w as i32 && j < h as i32 && !blocked[idx(i, j)];
    while let Some((i, j)) = stack.pop() {
        for (di, dj) in [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)] {
            let (ni, nj) = (i + di, j + dj);
            let legal = pass(ni, nj) && (di == 0 || dj == 0 || (pass(i + di, j) && pass(i, j + dj)));
            if legal && !seen[idx(ni, nj)] {
                if side(ni, nj) < Fixed::ZERO {
                    return false;
                }
                seen[idx(ni, nj)] = true;
                stack.push((ni, nj));
            }
        }
    }
    true
}

#[test]
fn narrow_fences_never_leak_at_any_whole_degree() {
    for deg in 0..180 {
        for t in [0, 100, 500, 999] {
            assert!(fence_blocks(deg, t, "0"), "a fence {t}/1000 m thick at {deg}° leaks with clearance 0");
        }
    }
}

#[test]
fn rotated_counts_match_a_per_cell_check() {
    // count_blocked_in_square against a direct centre-inside test over a blocked checkerboard.
    let sq = oriented_square(WorldPos::new(fx("5.3"), fx("4.1")), fx("3.2"), fx("1.7"), fx("33")).unwrap();
    let blocked = |i: u32, j: u32| (i + j).is_multiple_of(3);
    let got = count_blocked_in_square(&sq, Fixed::ONE, 8, 6, blocked);
    let (u, v) = (sq.u(), sq.v());
    let mut want = 0;
    for j in -10i32..20 {
        for i in -10i32..20 {
            let (dx, dz) = (Fixed::from_num(i) + fx("0.5") - fx("5.3"), Fixed::from_num(j) + fx("0.5") - fx("4.1"));
            let a = (i128::from(dx.to_bits()) * i128::from(u.x.to_bits()) + i128::from(dz.to_bits()) * i128::from(u.z.to_bits())).abs();
            let b = (i128::from(dx.to_bits()) * i128::from(v.x.to_bits()) + i128::from(dz.to_bits()) * i128::from(v.z.to_bits())).abs();
            let inside = a <= i128::from(sq.hw().to_bits()) << 16 && b <= i128::from(sq.hh().to_bits()) << 16;
            let on_grid = (0..8).contains(&i) && (0..6).contains(&j);
            if inside && (!on_grid || blocked(i as u32, j as u32)) {
                want += 1;
            }
        }
    }
    assert!(got > 0);
    assert_eq!(got, want);
}

fn arb_square() -> impl Strategy<Value = (i64, i64, i64, i64, i64)> {
    // Centre in [16, 40) m (well inside the 64 × 64 grid after any shift), half-sizes up to 6 m, any angle; raw 2^-8 m steps.
    (16 * 256..40 * 256i64, 16 * 256..40 * 256i64, 0..6 * 256i64, 0..6 * 256i64, 0..360 * 16i64)
}

fn blocked_set(sq: (i64, i64, i64, i64, i64), dx: i64, dz: i64, clearance: Fixed) -> Vec<(u32, u32)> {
    let (x, z, hw, hh, deg) = sq;
    let square = oriented_square(
        WorldPos::new(Fixed::from_bits((x << 8) + (dx << 16)), Fixed::from_bits((z << 8) + (dz << 16))),
        Fixed::from_bits(hw << 8),
        Fixed::from_bits(hh << 8),
        Fixed::from_bits(deg << 12),
    )
    .unwrap();
    let mut out = Vec::new();
    rasterize_square(&square, clearance, Fixed::ONE, CellRect::full(64, 64), |j, a, b| out.extend((a..b).map(|i| (i, j))));
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// A larger clearance never unblocks a navcell.
    #[test]
    fn rasterization_is_monotone_in_clearance(sq in arb_square(), c in 0..3 * 256i64, extra in 0..2 * 256i64) {
        let small = blocked_set(sq, 0, 0, Fixed::from_bits(c << 8));
        let large = blocked_set(sq, 0, 0, Fixed::from_bits((c + extra) << 8));
        for cell in &small {
            prop_assert!(large.contains(cell), "{cell:?} blocked at clearance {c}/256 but not at {}/256", c + extra);
        }
    }

    /// Moving a square by whole navcells moves its raster by the same navcells.
    #[test]
    fn translating_by_whole_navcells_translates_the_raster(sq in arb_square(), dx in -6..7i64, dz in -6..7i64, c in 0..3 * 256i64) {
        let c = Fixed::from_bits(c << 8);
        let here: Vec<(i64, i64)> = blocked_set(sq, 0, 0, c).into_iter().map(|(i, j)| (i64::from(i) + dx, i64::from(j) + dz)).collect();
        let there: Vec<(i64, i64)> = blocked_set(sq, dx, dz, c).into_iter().map(|(i, j)| (i64::from(i), i64::from(j))).collect();
        prop_assert_eq!(here, there);
    }

    /// The exact rule against a floating-point evaluation, away from the threshold: a navcell is
    /// blocked when all four corners are within R of the rectangle.
    #[test]
    fn rasterization_matches_a_float_oracle(sq in arb_square(), c in 0..3 * 256i64) {
        let (x, z, hw, hh, deg) = sq;
        let cf = c as f64 / 256.0;
        let got = blocked_set(sq, 0, 0, Fixed::from_bits(c << 8));
        let (xf, zf, hwf, hhf) = (x as f64 / 256.0, z as f64 / 256.0, hw as f64 / 256.0, hh as f64 / 256.0);
        let th = (deg as f64 / 16.0).to_radians();
        let r = cf.max((3.0 - 2.0 * hwf.min(hhf)) / 2.0);
        let dist = |px: f64, pz: f64| {
            let (dx, dz) = (px - xf, pz - zf);
            let a = (dx * th.cos() + dz * th.sin()).abs();
            let b = (-dx * th.sin() + dz * th.cos()).abs();
            ((a - hwf).max(0.0).powi(2) + (b - hhf).max(0.0).powi(2)).sqrt()
        };
        for j in 0..64u32 {
            for i in 0..64u32 {
                let corners = [(i, j), (i + 1, j), (i, j + 1), (i + 1, j + 1)].map(|(a, b)| dist(f64::from(a), f64::from(b)));
                let worst = corners.iter().cloned().fold(0.0, f64::max);
                if (worst - r).abs() < 1e-3 {
                    continue;
                }
                prop_assert_eq!(got.contains(&(i, j)), worst <= r, "navcell ({}, {})", i, j);
            }
        }
    }
}

/// Clearance is one whole number of navcells everywhere (docs/pathfinding-rules.md, "Clearance"):
/// a square border three navcells thick dilated by each class's clearance blocks exactly what the
/// same frame blocks when it is four obstruction squares rasterized with that class's clearance.
/// The oracle is the terrain dilation (`ceil(c / s)` navcells); the clearances include values that
/// are not whole navcells, which the rasterization used to take as they are (1.3 m blocked one
/// navcell beside a square and two beside the border).
#[test]
fn clearance_rounds_up_to_whole_navcells_alike_for_terrain_and_squares() {
    use pathing::classes::{ClassDef, ClassSet, ClearanceShape, ObstructionMode};
    use pathing::passability::{NavWorld, Obstruction, ObstructionFlags, WorldDesc};
    use pathing::terrain::{GridSpec, MapBorder, Terrain};
    use pathing::{Navcell, PassClass};
    let clearances = ["0", "0.3", "0.5", "1", "1.3", "2.5", "3"];
    let mut defs = Vec::new();
    for (k, c) in clearances.iter().enumerate() {
        for shape in [ClearanceShape::Square, ClearanceShape::Round] {
            let name = format!("c{k}-{}", shape.name());
            defs.push(ClassDef { clearance: fx(c), clearance_shape: shape, ..ClassDef::unbounded(&name, ObstructionMode::Pathfinding) });
        }
    }
    let classes = ClassSet::new(defs).unwrap();
    for (cell, n) in [("1", 32u32), ("0.5", 32), ("0.4", 40)] {
        let s = fx(cell);
        let side = s * i64::from(n);
        let terrain = Terrain::flat(4, 4, side / 4, Fixed::ONE, Fixed::ZERO).unwrap();
        let desc = WorldDesc::new(GridSpec { width: n, height: n, cell_size: s }, classes.clone(), terrain);
        let bordered = NavWorld::build(desc.clone().with_border(MapBorder::Square { width: 3 }), []).unwrap();
        // The same frame as four squares, each three navcells thick.
        let t = s * 3;
        let half = |v: Fixed| Fixed::from_bits(v.to_bits() / 2);
        let strips = [
            (half(t), half(side), half(t), half(side)),
            (side - half(t), half(side), half(t), half(side)),
            (half(side), half(t), half(side), half(t)),
            (half(side), side - half(t), half(side), half(t)),
        ];
        let squares = strips.iter().enumerate().map(|(k, &(x, z, hw, hh))| {
            let square = oriented_square(WorldPos::new(x, z), hw, hh, Fixed::ZERO).unwrap();
            (pathing::ObstructionId(k as u32 + 1), Obstruction { square, flags: ObstructionFlags::STATIC })
        });
        let squared = NavWorld::build(desc, squares).unwrap();
        for k in 0..classes.len() {
            let class = PassClass::new(k).unwrap();
            let name = &classes.get(class).unwrap().name;
            for j in 0..n as u16 {
                for i in 0..n as u16 {
                    let cell_at = Navcell::new(i, j);
                    assert_eq!(
                        bordered.grid().is_passable(cell_at, class),
                        squared.grid().is_passable(cell_at, class),
                        "navcell size {cell}, class {name}, navcell ({i}, {j})"
                    );
                }
            }
        }
    }
}
