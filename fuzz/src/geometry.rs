//! The `geometry` target: the exact geometric predicates against straightforward `i128` references.
//!
//! The first byte picks a check; the rest are its inputs.
//!
//! - Segments against a small grid ([`pathing::collide`]): `segment_clear`, `first_blocked` and
//!   `furthest_clear_point` against an enumeration of the navcells around the grid with a
//!   separating-axis test per navcell (closed navcells, closed segment), for navcell sizes from one
//!   raw unit to 256 m and end points anywhere in the `Fixed` range.
//! - Unit squares ([`pathing::collide::point_in_square`], `segment_hits_square`) against the
//!   0 A.D. rule evaluated with a separating-axis test.
//! - Goals ([`pathing::Goal`]): `contains_point` and `contains_navcell` against the square as a
//!   polygon of its four exact corners (point in a convex polygon by edge orientations; a box meets
//!   it when a corner of one is in the other or two edges cross), and the promises of
//!   `nearest_point` (inside the goal; near the exact nearest point for circles and axis-aligned
//!   squares).
//! - Navcell centres under a rotated rectangle ([`pathing::raster::square_centre_spans`],
//!   `count_blocked_in_square`) against every centre tested in the square's own frame (the raster
//!   module's definition, which treats the axes as unit vectors).

use std::cmp::Ordering;

use pathing::collide::{UnitSquare, first_blocked, furthest_clear_point, point_in_square, segment_clear, segment_hits_square};
use pathing::{CellRect, Fixed, Goal, GoalShape, NavGrid, Navcell, PassClass, PassMap, Square, Vec2, WorldPos};

use crate::bytes::Bytes;

fn raw(v: Fixed) -> i128 {
    i128::from(v.to_bits())
}

fn fx(bits: i64) -> Fixed {
    Fixed::from_bits(bits)
}

fn at(x: i128, z: i128) -> WorldPos {
    WorldPos::new(fx(x as i64), fx(z as i64))
}

fn cross(ax: i128, az: i128, bx: i128, bz: i128) -> i128 {
    ax * bz - az * bx
}

// ---- Segments against the grid. ----

/// Whether the closed segment meets the closed box `[x0, x1] × [z0, z1]` (separating axes: x, z and
/// the segment's normal).
fn segment_meets_box((x0, z0, x1, z1): (i128, i128, i128, i128), [bx0, bx1, bz0, bz1]: [i128; 4]) -> bool {
    if x0.max(x1) < bx0 || x0.min(x1) > bx1 || z0.max(z1) < bz0 || z0.min(z1) > bz1 {
        return false;
    }
    let (dx, dz) = (x1 - x0, z1 - z0);
    let sides = [(bx0, bz0), (bx1, bz0), (bx0, bz1), (bx1, bz1)].map(|(cx, cz)| cross(dx, dz, cx - x0, cz - z0).signum());
    !(sides.iter().all(|&s| s > 0) || sides.iter().all(|&s| s < 0))
}

/// The smallest parameter `num / den` at which the segment is in a box it meets.
fn entry((x0, z0, x1, z1): (i128, i128, i128, i128), [bx0, bx1, bz0, bz1]: [i128; 4]) -> (i128, i128) {
    let axis = |a: i128, b: i128, lo: i128, hi: i128| match (b - a).cmp(&0) {
        Ordering::Greater => ((lo - a).max(0), b - a),
        Ordering::Less => ((a - hi).max(0), a - b),
        Ordering::Equal => (0, 1),
    };
    let (nx, dx) = axis(x0, x1, bx0, bx1);
    let (nz, dz) = axis(z0, z1, bz0, bz1);
    if nx * dz >= nz * dx { (nx, dx) } else { (nz, dz) }
}

/// A coordinate for a segment end on a grid `n` navcells of `c` raw units long.
fn grid_coordinate(b: &mut Bytes, n: u32, c: i64) -> i64 {
    let extent = i64::from(n) * c;
    match b.below(16) {
        0..=7 => (i64::from(b.u16()) * extent) >> 16,
        // On a grid line, or a navcell centre.
        8 | 9 => i64::from(b.below(n + 1)) * c,
        10 => i64::from(b.below(n)) * c + c / 2,
        11 => b.pick(&[-1, 1, extent - 1, extent + 1]),
        12 => i64::from(b.u16() as i16) * c / 4,
        13 => i64::from(b.u32() as i32) << 8,
        _ => b.i64(),
    }
}

fn segments(b: &mut Bytes) {
    let (w, h) = (1 + b.below(12), 1 + b.below(12));
    let c = b.pick(&[1 << 16, 1 << 16, 1 << 15, 3 << 15, 1, 7, 256 << 16]);
    let class = PassClass::new(0).expect("class 0");
    let mut grid = NavGrid::new(w, h, 1, fx(c)).expect("small grids are valid");
    let density = b.u8();
    for j in 0..h {
        for i in 0..w {
            if b.u8() < density {
                grid.set_passable(Navcell::new(i as u16, j as u16), class, false);
            }
        }
    }
    let map = PassMap::build(&grid, class);
    let from = WorldPos::new(fx(grid_coordinate(b, w, c)), fx(grid_coordinate(b, h, c)));
    let to = WorldPos::new(fx(grid_coordinate(b, w, c)), fx(grid_coordinate(b, h, c)));
    let clear = segment_clear(&map, from, to);
    let blocked = first_blocked(&map, from, to);
    let stop = furthest_clear_point(&map, from, to);
    assert_eq!(clear, blocked.is_none(), "segment_clear and first_blocked disagree for {from:?} → {to:?}");
    if clear {
        assert_eq!(stop, to, "a clear step is taken whole");
    }
    let c = i128::from(c);
    let (wc, hc) = (i128::from(w) * c, i128::from(h) * c);
    let seg = (raw(from.x), raw(from.z), raw(to.x), raw(to.z));
    let report = |k: i128| u16::try_from(k).unwrap_or(u16::MAX);
    if !(0..=wc).contains(&seg.0) || !(0..=hc).contains(&seg.1) {
        // A start off the grid touches only navcells off the grid at t = 0; the first reported is
        // the lowest (i, j) of those holding the start.
        assert!(!clear, "a step from off the grid is never clear");
        let lows = |v: i128| {
            let k = v.div_euclid(c);
            if v.rem_euclid(c) == 0 { (k - 1, k) } else { (k, k) }
        };
        let (i, j) = (lows(seg.0).0, lows(seg.1).0);
        assert_eq!(blocked, Some(Navcell::new(report(i), report(j))), "first blocked navcell from off the grid at {from:?}");
        assert_eq!(stop, from, "a unit off the grid does not move");
        return;
    }
    // The start is on the closed grid rectangle: the first blocked navcell is on the grid or in the
    // ring of navcells just around it (the segment crosses the grid's edge there first).
    let mut first: Option<((i128, i128), i128, i128)> = None;
    let mut any_blocked = false;
    for j in -1..=i128::from(h) {
        for i in -1..=i128::from(w) {
            let cell = [i * c, (i + 1) * c, j * c, (j + 1) * c];
            if !segment_meets_box(seg, cell) {
                continue;
            }
            let on_grid = (0..i128::from(w)).contains(&i) && (0..i128::from(h)).contains(&j);
            if on_grid && map.is_passable(Navcell::new(i as u16, j as u16)) {
                continue;
            }
            any_blocked = true;
            let t = entry(seg, cell);
            let earlier = match first {
                None => true,
                Some(((n, d), fi, fj)) => (t.0 * d).cmp(&(n * t.1)).then((i, j).cmp(&(fi, fj))) == Ordering::Less,
            };
            if earlier {
                first = Some((t, i, j));
            }
        }
    }
    assert_eq!(clear, !any_blocked, "segment_clear({from:?} → {to:?}) disagrees with the navcell enumeration");
    let expected = first.map(|(_, i, j)| Navcell::new(report(i), report(j)));
    assert_eq!(blocked, expected, "first_blocked({from:?} → {to:?})");
    if let Some(((num, _), ..)) = first {
        if num == 0 {
            assert_eq!(stop, from, "a step blocked at its start does not move");
        } else {
            assert!(segment_clear(&map, from, stop), "furthest_clear_point({from:?} → {to:?}) = {stop:?} is not clear");
            let within = |v: i128, a: i128, b: i128| a.min(b) <= v && v <= a.max(b);
            assert!(within(raw(stop.x), seg.0, seg.2) && within(raw(stop.z), seg.1, seg.3), "{stop:?} is off the step {from:?} → {to:?}");
        }
    }
}

// ---- Unit squares. ----

fn small_or_wild(b: &mut Bytes) -> i64 {
    match b.below(8) {
        0..=4 => i64::from(b.u16() as i16) << 10,
        5 => i64::from(b.u32() as i32) << 12,
        6 => b.pick(&[0, 1, -1, 1 << 60, -(1 << 60), (1 << 60) + 1]),
        _ => b.i64(),
    }
}

fn unit_squares(b: &mut Bytes) {
    let mut v = || small_or_wild(b);
    let (p, from, to) = ((v(), v()), (v(), v()), (v(), v()));
    let (cx, cz, half, expand) = (v(), v(), v(), v());
    let square = UnitSquare { center: WorldPos::new(fx(cx), fx(cz)), half: fx(half) };
    let pos = |(x, z): (i64, i64)| WorldPos::new(fx(x), fx(z));
    let inside = point_in_square(pos(p), &square, fx(expand));
    let hits = segment_hits_square(pos(from), pos(to), &square, fx(expand));
    let limit = 1i128 << 60;
    let values = [p.0, p.1, from.0, from.1, to.0, to.1, cx, cz, half, expand];
    if values.iter().any(|&x| i128::from(x).abs() > limit) {
        return; // No panic is all that is checked this far out.
    }
    let r = i128::from(half) + i128::from(expand);
    let bx = [i128::from(cx) - r, i128::from(cx) + r, i128::from(cz) - r, i128::from(cz) + r];
    let in_box =
        |(x, z): (i64, i64)| r >= 0 && bx[0] <= i128::from(x) && i128::from(x) <= bx[1] && bx[2] <= i128::from(z) && i128::from(z) <= bx[3];
    assert_eq!(inside, in_box(p), "point_in_square({p:?}, {square:?}, {expand})");
    let expected = if r < 0 || in_box(from) {
        false
    } else {
        in_box(to) || segment_meets_box((i128::from(from.0), i128::from(from.1), i128::from(to.0), i128::from(to.1)), bx)
    };
    assert_eq!(hits, expected, "segment_hits_square({from:?} → {to:?}, {square:?}, {expand})");
}

// ---- Goals. ----

/// The square's corners with 32 fractional bits, in order round the parallelogram.
fn corners(sq: &Square) -> [(i128, i128); 4] {
    let (cx, cz) = (raw(sq.center().x) << 16, raw(sq.center().z) << 16);
    let (u, v) = (sq.u(), sq.v());
    let (hw, hh) = (raw(sq.hw()), raw(sq.hh()));
    let (ux, uz, vx, vz) = (hw * raw(u.x), hw * raw(u.z), hh * raw(v.x), hh * raw(v.z));
    [(cx + ux + vx, cz + uz + vz), (cx - ux + vx, cz - uz + vz), (cx - ux - vx, cz - uz - vz), (cx + ux - vx, cz + uz - vz)]
}

/// Whether the point (32 fractional bits) is in the closed convex polygon (`strict`: in its
/// interior). A polygon with no area (a segment or a point) has no interior, and holds a point
/// exactly when the point is on it: on every edge's line and inside the bounding box.
fn in_polygon(poly: &[(i128, i128); 4], (x, z): (i128, i128), strict: bool) -> bool {
    let sides: Vec<i128> = (0..4)
        .map(|k| {
            let (a, b) = (poly[k], poly[(k + 1) % 4]);
            cross(b.0 - a.0, b.1 - a.1, x - a.0, z - a.1).signum()
        })
        .collect();
    if strict {
        return sides.iter().all(|&s| s > 0) || sides.iter().all(|&s| s < 0);
    }
    let (x0, x1) = (poly.iter().map(|p| p.0).min().unwrap_or(0), poly.iter().map(|p| p.0).max().unwrap_or(0));
    let (z0, z1) = (poly.iter().map(|p| p.1).min().unwrap_or(0), poly.iter().map(|p| p.1).max().unwrap_or(0));
    (sides.iter().all(|&s| s >= 0) || sides.iter().all(|&s| s <= 0)) && (x0..=x1).contains(&x) && (z0..=z1).contains(&z)
}

/// Whether two closed segments share a point (orientation tests, collinear overlaps included).
fn segments_meet(a: (i128, i128), b: (i128, i128), c: (i128, i128), d: (i128, i128)) -> bool {
    let orient = |p: (i128, i128), q: (i128, i128), r: (i128, i128)| cross(q.0 - p.0, q.1 - p.1, r.0 - p.0, r.1 - p.1).signum();
    let on = |p: (i128, i128), q: (i128, i128), r: (i128, i128)| {
        r.0 >= p.0.min(q.0) && r.0 <= p.0.max(q.0) && r.1 >= p.1.min(q.1) && r.1 <= p.1.max(q.1)
    };
    let (o1, o2, o3, o4) = (orient(a, b, c), orient(a, b, d), orient(c, d, a), orient(c, d, b));
    if o1 * o2 < 0 && o3 * o4 < 0 {
        return true;
    }
    (o1 == 0 && on(a, b, c)) || (o2 == 0 && on(a, b, d)) || (o3 == 0 && on(c, d, a)) || (o4 == 0 && on(c, d, b))
}

/// Whether the closed box (raw, 16 fractional bits) meets the closed parallelogram.
fn box_meets_square(sq: &Square, (x0, x1, z0, z1): (i128, i128, i128, i128)) -> bool {
    let poly = corners(sq);
    let bx = [(x0 << 16, z0 << 16), (x1 << 16, z0 << 16), (x1 << 16, z1 << 16), (x0 << 16, z1 << 16)];
    let in_box = |(x, z): (i128, i128)| (bx[0].0..=bx[2].0).contains(&x) && (bx[0].1..=bx[2].1).contains(&z);
    poly.iter().any(|&p| in_box(p))
        || bx.iter().any(|&p| in_polygon(&poly, p, false))
        || (0..4).any(|k| (0..4).any(|l| segments_meet(poly[k], poly[(k + 1) % 4], bx[l], bx[(l + 1) % 4])))
}

fn goal_coordinate(b: &mut Bytes) -> i64 {
    match b.below(8) {
        0..=5 => i64::from(b.u16() as i16) << 8,
        6 => i64::from(b.u32() as i32) << 4,
        _ => b.pick(&[1 << 40, -(1 << 40), (1 << 40) - 1]),
    }
}

fn goal_size(b: &mut Bytes) -> i64 {
    match b.below(8) {
        0..=5 => i64::from(b.u16()) << 4,
        6 => b.pick(&[0, 1, 2, 3]),
        _ => {
            let any = i64::from(b.u32());
            b.pick(&[1 << 40, any])
        }
    }
}

fn goals(b: &mut Bytes) {
    let centre = WorldPos::new(fx(goal_coordinate(b)), fx(goal_coordinate(b)));
    let (s1, s2) = (fx(goal_size(b)), fx(goal_size(b)));
    let (u, v) = match b.below(4) {
        0 => (Vec2::new(Fixed::ONE, Fixed::ZERO), Vec2::new(Fixed::ZERO, Fixed::ONE)),
        1 | 2 => {
            let u = pathing::trig::unit_vector_degrees(fx(i64::from(b.u32())));
            (u, u.perp())
        }
        _ => {
            let mut axis = || fx(i64::from(b.u32() as i32) >> 14);
            (Vec2::new(axis(), axis()), Vec2::new(axis(), axis()))
        }
    };
    let axis_aligned = u == Vec2::new(Fixed::ONE, Fixed::ZERO) && v == Vec2::new(Fixed::ZERO, Fixed::ONE);
    let Ok(square) = Square::new(centre, s1, s2, u, v) else { return };
    let goal = match b.below(5) {
        0 => Goal::point(centre),
        1 => Goal::circle(centre, s1),
        2 => Goal::inverted_circle(centre, s1),
        3 => Ok(Goal::square(square)),
        _ => Ok(Goal::inverted_square(square)),
    }
    .expect("coordinates within the goal limits");
    let poly = corners(&square);

    // Points: the goal's own test against the reference, and nearest_point's promises.
    for _ in 0..4 {
        let p = (raw(centre.x) + i128::from(goal_coordinate(b)), raw(centre.z) + i128::from(goal_coordinate(b)));
        let pos = at(p.0, p.1);
        let d2 = (p.0 - raw(centre.x)).pow(2) + (p.1 - raw(centre.z)).pow(2);
        let r2 = raw(s1) * raw(s1);
        let expected = match goal.shape() {
            GoalShape::Point(q) => q == pos,
            GoalShape::Circle { .. } => d2 <= r2,
            GoalShape::InvertedCircle { .. } => d2 >= r2,
            GoalShape::Square(_) => in_polygon(&poly, (p.0 << 16, p.1 << 16), false),
            GoalShape::InvertedSquare(_) => !in_polygon(&poly, (p.0 << 16, p.1 << 16), true),
            GoalShape::RoundedSquare { .. } => unreachable!("this target makes no rounded squares"),
        };
        assert_eq!(goal.contains_point(pos), expected, "{goal:?} contains_point({pos:?})");
        let near = goal.nearest_point(pos);
        assert!(goal.contains_point(near), "{goal:?}: nearest_point({pos:?}) = {near:?} is not in the goal");
        if expected {
            assert_eq!(near, pos, "{goal:?}: nearest_point of a point inside moved it");
        }
        let q2 = (raw(near.x) - p.0).pow(2) + (raw(near.z) - p.1).pow(2);
        if p.0.abs().max(p.1.abs()) > raw(pathing::COORD_LIMIT) {
            continue; // The distance promise is for points within the coordinate limit.
        }
        match goal.shape() {
            GoalShape::Circle { radius, .. } => {
                // Within two raw units of the exact nearest point, at distance |p − c| − r.
                let bound = (d2.isqrt() + 1 - raw(radius)).max(0) + 2;
                assert!(q2 <= bound * bound, "{goal:?}: nearest_point({pos:?}) = {near:?} is too far");
            }
            GoalShape::InvertedCircle { radius, .. } if !expected => {
                let bound = raw(radius) - d2.isqrt() + 2;
                assert!(q2 <= bound * bound, "{goal:?}: nearest_point({pos:?}) = {near:?} is too far");
            }
            GoalShape::Square(sq) if axis_aligned => {
                let (cx, cz, hw, hh) = (raw(sq.center().x), raw(sq.center().z), raw(sq.hw()), raw(sq.hh()));
                let clamped = at(p.0.clamp(cx - hw, cx + hw), p.1.clamp(cz - hh, cz + hh));
                assert_eq!(near, clamped, "{goal:?}: nearest_point({pos:?}) of an axis-aligned square is the clamp");
            }
            _ => {}
        }
    }

    // Navcells of a small grid near the goal.
    let cell = b.pick(&[1i128 << 16, 1 << 15, 3 << 16, 1 << 20]);
    let (w, h) = (1 + b.below(20), 1 + b.below(20));
    let origin = (raw(centre.x).div_euclid(cell) - i128::from(b.below(w)), raw(centre.z).div_euclid(cell) - i128::from(b.below(h)));
    if origin.0 < 0 || origin.1 < 0 || origin.0 + i128::from(w) > i128::from(u16::MAX) || origin.1 + i128::from(h) > i128::from(u16::MAX) {
        return;
    }
    let (gw, gh) = (origin.0 as u32 + w, origin.1 as u32 + h);
    for j in origin.1 as u32..gh {
        for i in origin.0 as u32..gw {
            let (x0, x1, z0, z1) = (i128::from(i) * cell, i128::from(i + 1) * cell, i128::from(j) * cell, i128::from(j + 1) * cell);
            let expected = match goal.shape() {
                GoalShape::Point(q) => {
                    let clamp = |v: i128, n: u32| v.div_euclid(cell).clamp(0, i128::from(n) - 1);
                    (clamp(raw(q.x), gw), clamp(raw(q.z), gh)) == (i128::from(i), i128::from(j))
                }
                GoalShape::Circle { center, radius } => {
                    let (dx, dz) = (raw(center.x) - raw(center.x).clamp(x0, x1), raw(center.z) - raw(center.z).clamp(z0, z1));
                    dx * dx + dz * dz <= raw(radius) * raw(radius)
                }
                GoalShape::InvertedCircle { center, radius } => {
                    let far = [(x0, z0), (x1, z0), (x0, z1), (x1, z1)]
                        .iter()
                        .map(|&(x, z)| (x - raw(center.x)).pow(2) + (z - raw(center.z)).pow(2))
                        .max()
                        .unwrap_or(0);
                    far >= raw(radius) * raw(radius)
                }
                GoalShape::Square(_) => box_meets_square(&square, (x0, x1, z0, z1)),
                GoalShape::InvertedSquare(_) => {
                    !([(x0, z0), (x1, z0), (x0, z1), (x1, z1)].iter().all(|&(x, z)| in_polygon(&poly, (x << 16, z << 16), true)))
                }
                GoalShape::RoundedSquare { .. } => unreachable!("this target makes no rounded squares"),
            };
            assert_eq!(
                goal.contains_navcell(i, j, fx(cell as i64), gw, gh),
                expected,
                "{goal:?} contains_navcell({i}, {j}) at navcell size {cell} raw"
            );
        }
    }
}

// ---- Navcell centres under a rotated rectangle. ----

fn centres(b: &mut Bytes) {
    let cell = b.pick(&[1i64 << 16, 1 << 15, 3 << 15, 1 << 17]);
    let (w, h) = (1 + b.below(24), 1 + b.below(24));
    let centre = WorldPos::new(fx((i64::from(b.u16()) * i64::from(w) * cell) >> 16), fx((i64::from(b.u16()) * i64::from(h) * cell) >> 16));
    let (hw, hh) = (fx(i64::from(b.u16()) << 4), fx(i64::from(b.u16()) << 4));
    let degrees = if b.bool() { fx(i64::from(b.u8()) * (45 << 16) / 2) } else { fx(i64::from(b.u32()) & 0x7F_FFFF) };
    let Ok(square) = pathing::raster::oriented_square(centre, hw, hh, degrees) else { return };
    let poly = corners(&square);
    // The raster module measures in the square's own frame with dot products, `|(p − c)·u| ≤ hw`
    // and `|(p − c)·v| ≤ hh` (its documentation: exact for unit axes, and the trigonometry's axes
    // are unit only to about 2^-16), not in the exact parallelogram a goal square is.
    let (ux, uz, vx, vz) = (raw(square.u().x), raw(square.u().z), raw(square.v().x), raw(square.v().z));
    let (cx2, cz2) = (2 * raw(square.center().x), 2 * raw(square.center().z));
    let (hw17, hh17) = (raw(square.hw()) << 17, raw(square.hh()) << 17);
    let holds_centre = |i: i128, j: i128| {
        // Doubled coordinates (17 fractional bits) so that half navcells are whole.
        let (dx, dz) = ((2 * i + 1) * i128::from(cell) - cx2, (2 * j + 1) * i128::from(cell) - cz2);
        (dx * ux + dz * uz).abs() <= hw17 && (dx * vx + dz * vz).abs() <= hh17
    };
    let clip = CellRect::new(b.below(w), b.below(h), w - b.below(w / 2 + 1), h - b.below(h / 2 + 1));
    let mut got = Vec::new();
    pathing::raster::square_centre_spans(&square, fx(cell), clip, |j, i0, i1| {
        assert!(i0 < i1 && clip.contains(i0, j) && clip.contains(i1 - 1, j), "span ({j}, {i0}..{i1}) outside {clip:?}");
        got.extend((i0..i1).map(|i| (i, j)));
    });
    let mut expected = Vec::new();
    for j in clip.j0..clip.j1 {
        for i in clip.i0..clip.i1 {
            if holds_centre(i128::from(i), i128::from(j)) {
                expected.push((i, j));
            }
        }
    }
    assert_eq!(got, expected, "centres of {clip:?} under {square:?}");

    let pattern = b.u64();
    let blocked = |i: u32, j: u32| pattern >> ((i * 7 + j * 3) % 64) & 1 == 1;
    let count = pathing::raster::count_blocked_in_square(&square, fx(cell), w, h, blocked);
    // Every centre the rectangle can hold is within its bounding box (which is a few navcells at most
    // 512 navcells wide here).
    let c = i128::from(cell) << 16;
    let (xs, zs) = (poly.map(|p| p.0), poly.map(|p| p.1));
    let lo_i = xs.iter().min().map_or(0, |&x| x.div_euclid(c)) - 1;
    let hi_i = xs.iter().max().map_or(0, |&x| x.div_euclid(c)) + 1;
    let lo_j = zs.iter().min().map_or(0, |&z| z.div_euclid(c)) - 1;
    let hi_j = zs.iter().max().map_or(0, |&z| z.div_euclid(c)) + 1;
    let mut expected_count = 0u64;
    for j in lo_j..=hi_j {
        for i in lo_i..=hi_i {
            let on_grid = (0..i128::from(w)).contains(&i) && (0..i128::from(h)).contains(&j);
            if holds_centre(i, j) && (!on_grid || blocked(i as u32, j as u32)) {
                expected_count += 1;
            }
        }
    }
    assert_eq!(count, expected_count, "count_blocked_in_square of {square:?} on {w} × {h}");
}

/// The body: see the module documentation.
pub fn geometry(data: &[u8]) {
    let mut b = Bytes::new(data);
    match b.below(4) {
        0 => segments(&mut b),
        1 => unit_squares(&mut b),
        2 => goals(&mut b),
        _ => centres(&mut b),
    }
}
