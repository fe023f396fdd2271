//! Unit tests of goals: the navcell-inside-goal predicate against the goal raster's line spans, and
//! nearest points.

use super::*;
use proptest::prelude::*;

fn fx(bits: i64) -> Fixed {
    Fixed::from_bits(bits)
}

fn pos(x: i32, z: i32) -> WorldPos {
    WorldPos::from_int(x, z)
}

#[test]
fn point_goal_holds_only_its_navcell() {
    let goal = Goal::point(WorldPos::new(Fixed::from_num(3), fx(5 << 16 | 0x8000))).unwrap();
    assert!(goal.contains_navcell(3, 5, Fixed::ONE, 10, 10));
    assert!(!goal.contains_navcell(2, 5, Fixed::ONE, 10, 10), "a point on a navcell edge belongs to the east navcell");
}

#[test]
fn circle_touching_a_corner_counts() {
    // Disc of radius 1 centred on (0, 0): navcell (1, 1) only touches it... not at all (corner at distance √2).
    let goal = Goal::circle(pos(0, 0), Fixed::ONE).unwrap();
    assert!(!goal.contains_navcell(1, 1, Fixed::ONE, 10, 10));
    assert!(goal.contains_navcell(1, 0, Fixed::ONE, 10, 10), "edge at distance exactly 1 counts");
    let inv = Goal::inverted_circle(pos(5, 5), Fixed::from_num(2)).unwrap();
    assert!(!inv.contains_navcell(4, 4, Fixed::ONE, 10, 10), "corners at distance <= √2 < 2");
    assert!(inv.contains_navcell(5, 6, Fixed::ONE, 10, 10), "corner (6, 7) at distance √5 >= 2");
}

#[test]
fn rotated_square_uses_the_exact_shape_not_its_box() {
    // A thin square rotated 45°: axes (s, s) and (-s, s) with s ≈ 1/√2.
    let s = fx(46341);
    let sq = Square::new(pos(10, 10), Fixed::from_num(6), fx(1 << 14), Vec2::new(s, s), Vec2::new(-s, s)).unwrap();
    let goal = Goal::square(sq);
    assert!(goal.contains_navcell(10, 10, Fixed::ONE, 30, 30));
    assert!(goal.contains_navcell(13, 13, Fixed::ONE, 30, 30));
    assert!(!goal.contains_navcell(13, 7, Fixed::ONE, 30, 30), "inside the bounding box but far from the diagonal band");
    assert!(Square::new(pos(0, 0), Fixed::ONE, Fixed::ONE, Vec2::new(s, s), Vec2::new(s, s)).is_err());
}

fn arb_goal() -> impl Strategy<Value = Goal> {
    let coord = -4i64 << 16..24i64 << 16;
    let size = 0i64..10i64 << 16;
    let axis = (-(1i64 << 16)..=1i64 << 16, -(1i64 << 16)..=1i64 << 16);
    prop_oneof![
        (coord.clone(), coord.clone()).prop_map(|(x, z)| Goal::point(WorldPos::new(fx(x), fx(z))).unwrap()),
        (coord.clone(), coord.clone(), size.clone()).prop_map(|(x, z, r)| Goal::circle(WorldPos::new(fx(x), fx(z)), fx(r)).unwrap()),
        (coord.clone(), coord.clone(), size.clone())
            .prop_map(|(x, z, r)| Goal::inverted_circle(WorldPos::new(fx(x), fx(z)), fx(r)).unwrap()),
        (coord.clone(), coord.clone(), size.clone(), size.clone(), axis.clone(), any::<bool>()).prop_filter_map(
            "parallel axes",
            |(x, z, hw, hh, (ux, uz), inverted)| {
                let u = Vec2::new(fx(ux), fx(uz));
                let sq = Square::new(WorldPos::new(fx(x), fx(z)), fx(hw), fx(hh), u, u.perp()).ok()?;
                Some(if inverted { Goal::inverted_square(sq) } else { Goal::square(sq) })
            }
        ),
    ]
}

proptest! {
    /// The lazily computed spans of every row and column equal the per-navcell predicate.
    #[test]
    fn line_spans_match_the_navcell_predicate(goal in arb_goal(), w in 1u32..24, h in 1u32..24, half in any::<bool>()) {
        let cell = if half { fx(1 << 15) } else { Fixed::ONE };
        let mut raster = GoalRaster::default();
        raster.reset(&goal, w, h, cell);
        let mut any = false;
        for j in 0..h {
            let row = raster.row(j as i32);
            for i in 0..w {
                let expected = goal.contains_navcell(i, j, cell, w, h);
                any |= expected;
                prop_assert_eq!(row.contains(i as i32), expected, "row {} navcell {}", j, i);
                prop_assert_eq!(raster.col(i as i32).contains(j as i32), expected, "column {} navcell {}", i, j);
                prop_assert_eq!(raster.contains(i as i32, j as i32), expected);
                prop_assert_eq!(raster.row_first_after(j as i32, i as i32), raster.row(j as i32).first_after(i as i32));
                prop_assert_eq!(raster.row_last_before(j as i32, i as i32), raster.row(j as i32).last_before(i as i32));
                prop_assert_eq!(raster.col_first_after(i as i32, j as i32), raster.col(i as i32).first_after(j as i32));
                prop_assert_eq!(raster.col_last_before(i as i32, j as i32), raster.col(i as i32).last_before(j as i32));
                if expected && !goal.is_inverted() {
                    prop_assert_eq!(raster.heuristic(i as i32, j as i32), 0);
                }
            }
        }
        // The bounding box may hold navcells the shape misses, so `is_empty` is only a sufficient test.
        prop_assert!(!raster.is_empty() || !any);
    }
}

// ---- Nearest points. ----

fn raw_pos(x: i64, z: i64) -> WorldPos {
    WorldPos::new(fx(x), fx(z))
}

#[test]
fn nearest_point_examples() {
    const M: i128 = 1 << 16;
    let circle = Goal::circle(pos(10, 10), Fixed::from_num(2)).unwrap();
    assert_eq!(circle.nearest_point(pos(10, 11)), pos(10, 11), "inside: the point itself");
    assert_eq!(circle.nearest_point(pos(20, 10)), pos(12, 10), "on an axis the nearest point is exact");
    // 3-4-5: (13, 14) is 5 m from the centre; the nearest point is (11.2, 11.6), rounded inward.
    let q = circle.nearest_point(pos(13, 14));
    assert!(circle.contains_point(q));
    assert!((raw(q.x) - (11 * M + M / 5)).abs() <= 1 && (raw(q.z) - (11 * M + 3 * M / 5)).abs() <= 1, "{q:?}");

    let inverted = Goal::inverted_circle(pos(10, 10), Fixed::from_num(5)).unwrap();
    assert_eq!(inverted.nearest_point(pos(10, 10)), pos(15, 10), "from the centre: east");
    assert_eq!(inverted.nearest_point(pos(10, 8)), pos(10, 5), "straight out");
    assert_eq!(inverted.nearest_point(pos(10, 16)), pos(10, 16), "already out");
    let q = inverted.nearest_point(pos(11, 11));
    assert!(inverted.contains_point(q) && raw(q.x) == raw(q.z), "out along the diagonal: {q:?}");

    let point = Goal::point(pos(3, 4)).unwrap();
    assert_eq!(point.nearest_point(pos(-7, 9)), pos(3, 4));

    let s = fx(46341); // about 1/√2
    let rotated = Square::new(pos(0, 0), Fixed::from_num(2), Fixed::from_num(1), Vec2::new(s, s), Vec2::new(-s, s)).unwrap();
    let square = Goal::square(rotated);
    let q = square.nearest_point(pos(10, 10));
    assert!(square.contains_point(q));
    // The far end of the long axis is at about (√2, √2).
    assert!((raw(q.x) - 92682).abs() <= 2 && (raw(q.z) - 92682).abs() <= 2, "{q:?}");
    let q = Goal::inverted_square(rotated).nearest_point(pos(0, 0));
    // Out through the nearest side, the short half-size 1 along v = (-s, s).
    assert!((raw(q.x) + 46341).abs() <= 2 && (raw(q.z) - 46341).abs() <= 2, "{q:?}");

    let thin = Goal::square(
        Square::new(pos(0, 0), Fixed::from_num(3), Fixed::ZERO, Vec2::new(fx(40000), fx(51000)), Vec2::new(fx(-51000), fx(40000))).unwrap(),
    );
    assert!(thin.contains_point(thin.nearest_point(pos(5, -5))), "a zero-width square still gives a point it holds");
}

/// Whether `√a > √b + 2` (all non-negative).
fn farther_by_more_than_two(a: i128, b: i128) -> bool {
    let gap = a - b - 4;
    gap > 0 && gap * gap > 16 * b
}

/// The lattice point of the goal nearest to `p`, searched coarse to fine over `[lo, hi]²` (raw).
/// `seed` is a point of the goal (the answer under test), so tiny goals that the coarse
/// lattice misses are still found.
fn lattice_nearest(
    goal: &Goal,
    p: (i128, i128),
    seed: (i128, i128),
    (lo_x, hi_x, lo_z, hi_z): (i128, i128, i128, i128),
) -> Option<(i128, i128)> {
    let dist = |x: i128, z: i128| (x - p.0).pow(2) + (z - p.1).pow(2);
    let mut best: Option<(i128, i128)> = Some(seed);
    let consider = |x: i128, z: i128, best: &mut Option<(i128, i128)>| {
        if goal.contains_point(pos_raw(x, z)) && best.is_none_or(|(bx, bz)| dist(x, z) < dist(bx, bz)) {
            *best = Some((x, z));
        }
    };
    let mut step = ((hi_x - lo_x).max(hi_z - lo_z) / 48).max(1);
    for x in (lo_x..=hi_x).step_by(step as usize) {
        for z in (lo_z..=hi_z).step_by(step as usize) {
            consider(x, z, &mut best);
        }
    }
    loop {
        let (cx, cz) = best?;
        let window = 3 * step;
        step = (step / 4).max(1);
        for x in (cx - window..=cx + window).step_by(step as usize) {
            for z in (cz - window..=cz + window).step_by(step as usize) {
                consider(x, z, &mut best);
            }
        }
        if step == 1 && window <= 12 {
            return best;
        }
        if step == 1 {
            // One more pass at full resolution around the refined point.
            let (cx, cz) = best?;
            for x in cx - 12..=cx + 12 {
                for z in cz - 12..=cz + 12 {
                    consider(x, z, &mut best);
                }
            }
            return best;
        }
    }
}

fn well_formed_goal() -> impl Strategy<Value = Goal> {
    const M: i64 = 1 << 16;
    let coord = -8 * M..8 * M;
    let size = prop_oneof![(0i64..24).prop_map(|q| q * M / 4), 8i64..8 * M];
    let axis = prop_oneof![
        (0i64..360 * M).prop_map(|d| crate::geometry::trig::unit_vector_degrees(fx(d))),
        // Perpendicular axes that are not unit vectors, but not short either.
        (M / 2..=M, -M..=M, any::<bool>()).prop_map(|(a, b, swap)| if swap { Vec2::new(fx(b), fx(a)) } else { Vec2::new(fx(a), fx(b)) }),
    ];
    prop_oneof![
        (coord.clone(), coord.clone()).prop_map(|(x, z)| Goal::point(raw_pos(x, z)).unwrap()),
        (coord.clone(), coord.clone(), size.clone()).prop_map(|(x, z, r)| Goal::circle(raw_pos(x, z), fx(r)).unwrap()),
        (coord.clone(), coord.clone(), size.clone()).prop_map(|(x, z, r)| Goal::inverted_circle(raw_pos(x, z), fx(r)).unwrap()),
        (coord.clone(), coord.clone(), size.clone(), size.clone(), axis, any::<bool>()).prop_map(|(x, z, hw, hh, u, inverted)| {
            let sq = Square::new(raw_pos(x, z), fx(hw), fx(hh), u, u.perp()).unwrap();
            if inverted { Goal::inverted_square(sq) } else { Goal::square(sq) }
        }),
    ]
}

fn probe() -> impl Strategy<Value = WorldPos> {
    const M: i64 = 1 << 16;
    prop_oneof![
        (-16 * M..16 * M, -16 * M..16 * M).prop_map(|(x, z)| raw_pos(x, z)),
        (-64i64..64, -64i64..64).prop_map(|(x, z)| raw_pos(x * M / 4, z * M / 4)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Whatever the goal (degenerate squares and oblique or tiny axes included) and wherever
    /// the point, the goal holds the answer, and a point the goal holds is its own answer.
    #[test]
    fn nearest_point_is_always_in_the_goal(goal in arb_goal(), x in -(1i64 << 36)..1i64 << 36, z in -(1i64 << 36)..1i64 << 36, near in probe()) {
        for p in [raw_pos(x, z), near] {
            let q = goal.nearest_point(p);
            prop_assert!(goal.contains_point(q), "{:?} from {:?} gave {:?}", goal, p, q);
            prop_assert_eq!(goal.nearest_point(q), q);
            if goal.contains_point(p) {
                prop_assert_eq!(q, p);
            }
        }
    }

    /// On goals with perpendicular axes and sizes of at least a few raw units (every goal the
    /// crate makes), no lattice point of the goal is nearer to `p` than the answer by more than
    /// two raw units: the rounding costs at most one raw unit per axis.
    #[test]
    fn nearest_point_is_nearest_up_to_rounding(goal in well_formed_goal(), p in probe()) {
        const M: i128 = 1 << 16;
        let q = goal.nearest_point(p);
        prop_assert!(goal.contains_point(q));
        let (px, pz) = (raw(p.x), raw(p.z));
        let (qx, qz) = (raw(q.x), raw(q.z));
        let window = (px.min(qx) - 2 * M, px.max(qx) + 2 * M, pz.min(qz) - 2 * M, pz.max(qz) + 2 * M);
        let (bx, bz) = lattice_nearest(&goal, (px, pz), (qx, qz), window).expect("seeded with the answer");
        let a = (qx - px).pow(2) + (qz - pz).pow(2);
        let b = (bx - px).pow(2) + (bz - pz).pow(2);
        prop_assert!(!farther_by_more_than_two(a, b), "{:?} from {:?}: answer {:?}, lattice point ({}, {}) is nearer", goal, p, q, bx, bz);
    }
}

/// A rounded square (a square grown by a radius with round corners): for turned squares of
/// several sizes and radii, a navcell holding a point the shape holds (its corners, its centre,
/// its points nearest the square's centre and corners) is in the goal; the goal raster's spans
/// agree with the navcell test; and the nearest point of a far point is in the shape, on its
/// edge to within a few raw units (the exact distance to the square compared in floats here is
/// not allowed, so the check is the integer one: a point a few raw units farther out is outside).
#[test]
fn rounded_square_navcells_spans_and_nearest_points_agree() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for _ in 0..60 {
        let degrees = Fixed::from_num(next(360) as i32);
        let (hw, hh) = (fx((1 + next(8 << 16)) as i64), fx((1 + next(3 << 16)) as i64));
        let centre = WorldPos::new(fx((12 << 16) + next(1 << 16) as i64), fx((12 << 16) + next(1 << 16) as i64));
        let radius = fx(next(4 << 16) as i64);
        let u = crate::geometry::trig::unit_vector_degrees(degrees);
        let sq = Square::new(centre, hw, hh, u, u.perp()).unwrap();
        let goal = Goal::rounded_square(sq, radius).unwrap();
        let (w, h) = (24u32, 24u32);
        let mut raster = GoalRaster::default();
        raster.reset(&goal, w, h, Fixed::ONE);
        for j in 0..h {
            for i in 0..w {
                let inside = goal.contains_navcell(i, j, Fixed::ONE, w, h);
                assert_eq!(raster.contains(i as i32, j as i32), inside, "{goal:?} navcell ({i}, {j}) spans");
                let (x0, z0) = (i128::from(i) << 16, i128::from(j) << 16);
                let clamp = |p: WorldPos| (raw(p.x).clamp(x0, x0 + (1 << 16)), raw(p.z).clamp(z0, z0 + (1 << 16)));
                let mut probes = vec![(x0, z0), (x0 + (1 << 16), z0), (x0, z0 + (1 << 16)), (x0 + (1 << 16), z0 + (1 << 16))];
                probes.push(clamp(centre));
                for (x, z) in sq.corners32() {
                    probes.push(clamp(WorldPos::new(fx((x >> 16) as i64), fx((z >> 16) as i64))));
                }
                if probes.iter().any(|&(x, z)| sq.within(x, z, raw(radius))) {
                    assert!(inside, "{goal:?} navcell ({i}, {j}) holds a point of the shape");
                }
            }
        }
        for _ in 0..8 {
            let p = WorldPos::new(fx(next(24 << 16) as i64), fx(next(24 << 16) as i64));
            let near = goal.nearest_point(p);
            assert!(goal.contains_point(near));
            if goal.contains_point(p) {
                assert_eq!(near, p);
                continue;
            }
            // A few raw units farther from the square along the way from p is outside.
            let (dx, dz) = (raw(p.x) - raw(near.x), raw(p.z) - raw(near.z));
            let (ox, oz) = scale_to_length(dx, dz, 4, Rounding::Outward);
            assert!(!sq.within(raw(near.x) + ox, raw(near.z) + oz, raw(radius)), "{goal:?}: nearest to {p:?} is {near:?}, not on the edge");
        }
    }
    // Skew axes are refused.
    let skew =
        Square::new(pos(4, 4), Fixed::ONE, Fixed::ONE, Vec2::new(Fixed::ONE, Fixed::ZERO), Vec2::new(Fixed::ONE, Fixed::ONE)).unwrap();
    assert_eq!(Goal::rounded_square(skew, Fixed::ONE), Err(GoalError::SkewAxes));
}
