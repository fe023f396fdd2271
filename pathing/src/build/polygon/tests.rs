//! Unit tests of polygons: validation, the containment and distance tests, and rasterization
//! against the per-point test.

use super::*;
use proptest::prelude::*;

/// A point from raw bits.
fn at(x: i64, z: i64) -> WorldPos {
    WorldPos::new(Fixed::from_bits(x), Fixed::from_bits(z))
}

/// A point from whole metres.
fn m(x: i32, z: i32) -> WorldPos {
    WorldPos::from_int(x, z)
}

fn poly(points: &[(i32, i32)]) -> Result<Polygon, PolygonError> {
    Polygon::new(points.iter().map(|&(x, z)| m(x, z)).collect())
}

const L_SHAPE: [(i32, i32); 6] = [(0, 0), (6, 0), (6, 2), (2, 2), (2, 5), (0, 5)];

#[test]
fn invalid_polygons_name_the_problem() {
    assert_eq!(poly(&[(0, 0), (1, 0)]), Err(PolygonError::TooFewPoints { n: 2 }));
    assert_eq!(poly(&[]), Err(PolygonError::TooFewPoints { n: 0 }));
    let far = Polygon::new(vec![m(0, 0), m(16385, 0), m(0, 1)]);
    assert_eq!(far, Err(PolygonError::OutOfRange { index: 1 }));
    let edge_of_world = Polygon::new(vec![m(-16384, -16384), m(16384, -16384), m(16384, 16384)]);
    assert!(edge_of_world.is_ok());
    assert_eq!(poly(&[(0, 0), (1, 0), (1, 0), (0, 1)]), Err(PolygonError::RepeatedPoint { index: 2 }));
    assert_eq!(poly(&[(0, 0), (1, 0), (0, 1), (0, 0)]), Err(PolygonError::RepeatedPoint { index: 3 }));
    assert_eq!(poly(&[(0, 0), (1, 1), (2, 2)]), Err(PolygonError::ZeroArea));
    assert_eq!(poly(&[(0, 0), (2, 0), (1, 0), (3, 0)]), Err(PolygonError::ZeroArea));
    // The bow-tie: edge 0 (0,0)-(2,2) crosses edge 2 (2,0)-(0,2).
    assert_eq!(poly(&[(0, 0), (2, 2), (2, 0), (0, 2)]), Err(PolygonError::SelfIntersecting { edge_a: 0, edge_b: 2 }));
    // A spike folding back along itself: edges 1 and 2 overlap.
    assert_eq!(poly(&[(0, 0), (4, 0), (4, 4), (4, 2), (0, 2)]), Err(PolygonError::SelfIntersecting { edge_a: 1, edge_b: 2 }));
    // A vertex touching a non-adjacent edge: vertex 4 (2,0) lies on edge 0.
    assert_eq!(poly(&[(0, 0), (4, 0), (4, 4), (2, 4), (2, 0), (0, 4)]), Err(PolygonError::SelfIntersecting { edge_a: 0, edge_b: 4 }));
    // Two non-adjacent vertices at the same place (a figure-eight pinched at one point).
    assert_eq!(poly(&[(0, 0), (2, 2), (4, 0), (4, 4), (2, 2), (0, 4)]), Err(PolygonError::SelfIntersecting { edge_a: 0, edge_b: 4 }));
    assert!(poly(&L_SHAPE).is_ok());
    for e in [PolygonError::TooFewPoints { n: 1 }, PolygonError::ZeroArea, PolygonError::SelfIntersecting { edge_a: 0, edge_b: 2 }] {
        assert!(e.to_string().contains("expected"), "{e}");
    }
}

/// A strictly convex chain `(k · 2^17, k² · 2^6)` raw, closed by one long edge.
fn parabola(n: usize) -> Vec<WorldPos> {
    (0..n as i64).map(|k| at(k << 17, (k * k) << 6)).collect()
}

#[test]
fn vertex_count_limit_is_enforced() {
    let big = Polygon::new(parabola(MAX_VERTICES)).unwrap();
    assert_eq!(big.vertices().len(), MAX_VERTICES);
    assert_eq!(Polygon::new(parabola(MAX_VERTICES + 1)), Err(PolygonError::TooManyPoints { n: MAX_VERTICES + 1 }));
}

#[test]
fn contains_counts_the_boundary_as_inside() {
    let l = poly(&L_SHAPE).unwrap();
    assert_eq!(l.bbox(), (m(0, 0), m(6, 5)));
    let inside = [m(1, 1), m(5, 1), m(1, 4), m(0, 0), m(6, 2), m(2, 2), m(2, 5), m(3, 0), m(4, 2), m(2, 3), m(1, 5)];
    for p in inside {
        assert!(l.contains(p), "{p:?}");
    }
    let outside = [m(3, 3), m(7, 1), m(-1, 1), m(1, 6), m(6, 5), m(5, 3), at(2 << 16, (5 << 16) + 1), at((2 << 16) + 1, (2 << 16) + 1)];
    for p in outside {
        assert!(!l.contains(p), "{p:?}");
    }
    // Points level with vertices, where the half-open crossing rule matters.
    assert!(l.contains(at(1 << 16, 2 << 16)) && !l.contains(at(-(1 << 16), 2 << 16)) && !l.contains(at(7 << 16, 2 << 16)));
    assert!(l.contains(at(1 << 16, 5 << 16)) && !l.contains(at(3 << 16, 5 << 16)));
    // Far-away points cannot overflow.
    assert!(!l.contains(WorldPos::new(Fixed::MAX, Fixed::MIN)) && !l.contains(WorldPos::new(Fixed::MIN, Fixed::from_num(1))));
}

#[test]
fn distance_threshold_is_exact() {
    let square = poly(&[(0, 0), (4, 0), (4, 4), (0, 4)]).unwrap();
    let half = Fixed::from_bits(1 << 15);
    // (5, 2) is exactly 1 from the right edge; (5, 5) is exactly √2 from the corner.
    assert!(square.distance_sq_within(m(5, 2), Fixed::ONE));
    assert!(!square.distance_sq_within(m(5, 2), Fixed::ONE - Fixed::DELTA));
    assert!(square.distance_sq_within(m(2, 2), Fixed::from_num(2)));
    assert!(!square.distance_sq_within(m(2, 2), Fixed::from_num(2) - Fixed::DELTA));
    // √2 · 2^16 = 92681.9: 92682 raw is just over √2, 92681 just under.
    assert!(square.distance_sq_within(m(5, 5), Fixed::from_bits(92682)));
    assert!(!square.distance_sq_within(m(5, 5), Fixed::from_bits(92681)));
    assert!(square.distance_sq_within(m(4, 1), Fixed::ZERO));
    assert!(!square.distance_sq_within(m(4, 1), -Fixed::DELTA));
    assert!(!square.distance_sq_within(at((4 << 16) + 1, 1 << 16), Fixed::ZERO));
    assert!(square.distance_sq_within(at((4 << 16) + (1 << 15), 1 << 16), half));
    // Far points and huge radii neither overflow nor panic.
    assert!(!square.distance_sq_within(WorldPos::new(Fixed::MAX, Fixed::MIN), Fixed::MAX));
    assert!(square.distance_sq_within(m(20000, 2), Fixed::MAX));
}

/// Every navcell of `clip` satisfying `test` by the per-point predicate, row-major.
fn brute_force(polygon: &Polygon, test: CellTest, origin: WorldPos, cell_size: Fixed, clip: CellRect) -> Vec<(u32, u32)> {
    let lattice = Lattice::new(origin, cell_size);
    let mode = Mode::of(test);
    let mut out = Vec::new();
    for j in clip.j0..clip.j1 {
        for i in clip.i0..clip.i1 {
            let (x, z) = (lattice.x0 + lattice.step * i128::from(i), lattice.z0 + lattice.step * i128::from(j));
            if polygon.matches_half(mode, x, z) {
                out.push((i, j));
            }
        }
    }
    out
}

fn marked(polygon: &Polygon, test: CellTest, origin: WorldPos, cell_size: Fixed, clip: CellRect) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    polygon.mark_cells(test, origin, cell_size, clip, |i, j| out.push((i, j)));
    out
}

/// Renders marked cells, north row first.
fn picture(cells: &[(u32, u32)], width: u32, height: u32) -> String {
    let mut out = String::new();
    for j in (0..height).rev() {
        for i in 0..width {
            out.push(if cells.contains(&(i, j)) { '#' } else { '.' });
        }
        out.push('\n');
    }
    out
}

#[test]
fn centre_rasterization_of_an_l_shape() {
    let l = poly(&L_SHAPE).unwrap();
    let clip = CellRect::full(9, 8);
    // One-metre cells from (-1, -1): centres at half metres, never on the boundary.
    let inside = marked(&l, CellTest::Inside, m(-1, -1), Fixed::ONE, clip);
    assert_eq!(picture(&inside, 9, 8), ".........\n.........\n.##......\n.##......\n.##......\n.######..\n.######..\n.........\n");
    // Grown by 1: centres 0.5 outside the edges are in, 1.5 outside are out; the corner (2.5, 5.5)
    // is √0.5 from (2, 5), so in.
    let grown = marked(&l, CellTest::InsideOrNear(Fixed::ONE), m(-1, -1), Fixed::ONE, clip);
    assert_eq!(picture(&grown, 9, 8), ".........\n####.....\n####.....\n####.....\n########.\n########.\n########.\n########.\n");
    // Shrunk by 0.5 (strictly farther): only (1.5, 1.5), √0.5 from the reflex corner (2, 2), survives.
    let shrunk = marked(&l, CellTest::InsideAwayFrom(Fixed::from_bits(1 << 15)), m(-1, -1), Fixed::ONE, clip);
    assert_eq!(shrunk, vec![(2, 2)]);
    let shrunk_less = marked(&l, CellTest::InsideAwayFrom(Fixed::from_bits((1 << 15) - 1)), m(-1, -1), Fixed::ONE, clip);
    assert_eq!(shrunk_less, inside);
    for test in [CellTest::Inside, CellTest::InsideOrNear(Fixed::ONE), CellTest::InsideAwayFrom(Fixed::from_bits(1 << 15))] {
        assert_eq!(marked(&l, test, m(-1, -1), Fixed::ONE, clip), brute_force(&l, test, m(-1, -1), Fixed::ONE, clip));
    }
}

/// The points sorted by angle around the origin (exactly), dropping the origin and points in the
/// same direction as the one before: a star-shaped ring when the origin is inside their hull.
fn star(points: &[(i64, i64)], scale: i64) -> Option<Polygon> {
    let half = |p: &(i128, i128)| if p.1 > 0 || (p.1 == 0 && p.0 > 0) { 0 } else { 1 };
    let mut pts: Vec<(i128, i128)> = points
        .iter()
        .map(|&(x, z)| (i128::from(x) * i128::from(scale), i128::from(z) * i128::from(scale)))
        .filter(|&p| p != (0, 0))
        .collect();
    pts.sort_by(|a, b| half(a).cmp(&half(b)).then_with(|| 0.cmp(&cross_raw(a.0, a.1, b.0, b.1))));
    pts.dedup_by(|b, a| half(a) == half(b) && cross_raw(a.0, a.1, b.0, b.1) == 0);
    let vertices = pts.iter().map(|&(x, z)| Some(at(i64::try_from(x).ok()?, i64::try_from(z).ok()?))).collect::<Option<Vec<_>>>()?;
    Polygon::new(vertices).ok()
}

fn cell_test() -> impl Strategy<Value = CellTest> {
    prop_oneof![
        Just(CellTest::Inside),
        (-(1i64 << 15)..(3 << 16)).prop_map(|r| CellTest::InsideOrNear(Fixed::from_bits(r))),
        (-(1i64 << 15)..(3 << 16)).prop_map(|r| CellTest::InsideAwayFrom(Fixed::from_bits(r))),
        prop::sample::select(vec![0i64, 1 << 15, 1 << 16, 3 << 15]).prop_map(|r| CellTest::InsideOrNear(Fixed::from_bits(r))),
        prop::sample::select(vec![0i64, 1 << 15, 1 << 16, 3 << 15]).prop_map(|r| CellTest::InsideAwayFrom(Fixed::from_bits(r))),
    ]
}

proptest! {
    /// Vertices on the half-metre lattice with one-metre cells: centres land exactly on edges,
    /// on vertices and on horizontal edges, and distances equal the radius exactly.
    #[test]
    fn aligned_rasterization_matches_the_per_point_test(
        points in prop::collection::vec((-10i64..=10, -10i64..=10), 3..12),
        test in cell_test(),
        shift in (-2i64..=2, -2i64..=2),
        clip in (0u32..6, 0u32..6, 20u32..30, 20u32..30),
    ) {
        let Some(polygon) = star(&points, 1 << 15) else { return Ok(()); };
        let origin = at((-12 << 16) + (shift.0 << 15), (-12 << 16) + (shift.1 << 15));
        let clip = CellRect::new(clip.0, clip.1, clip.2, clip.3);
        let got = marked(&polygon, test, origin, Fixed::ONE, clip);
        prop_assert_eq!(&got, &brute_force(&polygon, test, origin, Fixed::ONE, clip));
        let bounds = polygon.cell_bounds(Fixed::from_num(3), origin, Fixed::ONE, clip);
        prop_assert!(got.iter().all(|&(i, j)| bounds.contains(i, j)));
    }

    /// Arbitrary raw coordinates, odd cell sizes (centres between two Fixed values) and origins.
    #[test]
    fn raw_rasterization_matches_the_per_point_test(
        points in prop::collection::vec((-(12i64 << 16)..(12 << 16), -(12i64 << 16)..(12 << 16)), 3..10),
        test in cell_test(),
        cell_bits in (1i64 << 15)..(1 << 17),
        origin in (-(14i64 << 16)..-(10 << 16), -(14i64 << 16)..-(10 << 16)),
    ) {
        let Some(polygon) = star(&points, 1) else { return Ok(()); };
        let (origin, cell_size) = (at(origin.0, origin.1), Fixed::from_bits(cell_bits));
        let clip = CellRect::full(60, 60);
        prop_assert_eq!(marked(&polygon, test, origin, cell_size, clip), brute_force(&polygon, test, origin, cell_size, clip));
    }

    /// The closed-polygon rule: a point is inside exactly when it is inside or on the boundary,
    /// and on the boundary exactly when its distance is zero.
    #[test]
    fn boundary_points_are_inside(points in prop::collection::vec((-10i64..=10, -10i64..=10), 3..12), k in 0usize..12, t in 0i64..=4) {
        let Some(polygon) = star(&points, 1 << 16) else { return Ok(()); };
        let v = polygon.vertices();
        let (a, b) = (v[k % v.len()], v[(k + 1) % v.len()]);
        // A quarter point of an edge between integer vertices is a multiple of 2^-2 m: exact.
        let p = WorldPos::new(a.x + (b.x - a.x) * Fixed::from_num(t) / 4, a.z + (b.z - a.z) * Fixed::from_num(t) / 4);
        prop_assert!(polygon.contains(p));
        prop_assert!(polygon.distance_sq_within(p, Fixed::ZERO));
        prop_assert!(polygon.matches(CellTest::Inside, p));
        prop_assert!(!polygon.matches(CellTest::InsideAwayFrom(Fixed::ZERO), p));
    }
}
