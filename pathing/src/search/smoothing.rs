//! String pulling (docs/pathfinding-rules.md, "Turning a path into waypoints"): a grid path reduced
//! to the points where a unit really has to turn, pulled over every navcell of the path, not only
//! its turning points, then tightened round the walls' corners from a small inset.
//!
//! The input is a list of points, usually a search's turning points (navcell centres). Between two
//! consecutive points whose difference is a whole number of navcells on both axes, the grid path
//! walks diagonally first and then straight, as [`crate::Path::cells`] does; the centres it passes
//! become *stretch points*, candidates as good as the input's own points. Other pairs (a unit's
//! exact position, an exact goal point) have no stretch points.
//!
//! From an anchor (the first point) the walk goes forward over the input points while the anchor
//! still sees the next one: the straight segment between them touches only passable navcells
//! ([`crate::grid::collide::segment_clear`], closed navcells, so the result never cuts a corner the
//! grid forbids). Then it refines inside the stretch after the last input point it saw, which ends
//! at an input point it does not see: it probes the stretch points 1, 2, 4, … steps past the last
//! seen point until one is not seen, then bisects between the last seen and the first unseen probe.
//! The point found is seen and the next stretch point is not; it becomes the new anchor, until
//! the last point. When the anchor sees neither the next input point nor the next stretch point (an
//! input whose own segments are not clear), the next point is kept as it is, so the walk always
//! advances.
//!
//! The grid pathfinder this comes from samples every half navcell and looks at every navcell of
//! the path; here every test is exact, so a smoothed path is legal by construction, and probing
//! instead of testing every stretch point one by one bounds the cost: at most `2n + 2·k·⌈log₂ L⌉`
//! exact segment tests for `n` input points, `k` output segments and stretches of at most `L`
//! navcells, each test as long as the segment it checks. (Searching the whole rest of the path for
//! the farthest visible point costs a quadratic number of long tests; docs/decisions.md.)
//!
//! Every point the centre-based pull keeps is an input point or a stretch point, in path order, and
//! the first and last are always kept; each of its segments is clear whenever the input's grid
//! path was.
//!
//! # Cutting corners from an inset
//!
//! Centre to centre, a path cannot cut the corners of a corridor one navcell wide, where the
//! any-angle optimum bends round the walls' corners. So the centre-based pull is then tightened:
//!
//! - The *channel* is the sequence of navcells its segments pass through, edge to edge (a segment
//!   through a grid vertex goes by the navcell on its x side first); every one is passable, since
//!   the segments are clear.
//! - Between consecutive channel navcells the *portal* is their shared edge. An end of it that is a
//!   grid vertex touching a blocked navcell is pulled a sixteenth of a navcell (`INSET_SHIFT`)
//!   along the edge; an end whose four navcells are all passable stays on the vertex.
//! - The funnel walk finds the shortest path from the first point to the last through every portal
//!   in order, exactly (`i128` cross products; a collinear end narrows the funnel, crossing needs a
//!   strict sign). Its corners are portal ends.
//! - A greedy pull over those corners (probing 1, 2, 4, … corners ahead, then bisecting) lets open
//!   ground keep straight lines that leave the channel; a corner is seen only when the segment is
//!   clear with a margin of 1/256 navcell (`MARGIN_SHIFT`): its four copies shifted by `(±d, ±d)`
//!   are clear, which is exactly the segment grown by a `2d` square touching only passable navcells.
//!
//! The result is that path when it is strictly shorter (integer lengths: floor square roots of raw
//! squared lengths) and every segment has the margin, else the centre-based pull. A unit walking a
//! segment stands at positions rounded to 2^-16 m, a few raw units off the segment; the margin,
//! hundreds of raw units, keeps every such position and every step between them clear, and the
//! inset, 16 times the margin, keeps the corners themselves far from the walls.
//!
//! # Tightening round the corners a turn wraps
//!
//! The channel is that of the grid path the search picked among equal-cost ones, which round a
//! lone obstruction on open ground can keep a few navcells off its corner. Last, each turning point
//! is replaced by the taut chain round the convex blocked corners near it, when that chain is clear
//! with the margin and shorter ([`tighten`]).

use crate::geometry::{Fixed, WorldPos};
use crate::grid::collide::segment_clear;
use crate::grid::navcell::Navcell;
use crate::grid::pass_map::PassMap;

/// The points of `points` with every stretch point between them (see the module documentation),
/// and for each expanded point whether it is an input point.
fn expand(points: &[WorldPos], cell: i128) -> Vec<(WorldPos, bool)> {
    let mut out = Vec::with_capacity(points.len());
    for pair in points.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        out.push((a, true));
        let (dx, dz) = (i128::from(b.x.to_bits()) - i128::from(a.x.to_bits()), i128::from(b.z.to_bits()) - i128::from(a.z.to_bits()));
        if cell <= 0 || dx % cell != 0 || dz % cell != 0 {
            continue;
        }
        let (ni, nj) = (dx / cell, dz / cell);
        let (mut i, mut j) = (0i128, 0i128);
        loop {
            i += (ni - i).signum();
            j += (nj - j).signum();
            if (i, j) == (ni, nj) {
                break;
            }
            // Between two world points, so within their bounding box: the sums fit in `i64`.
            let at = |base: Fixed, k: i128| Fixed::from_bits((i128::from(base.to_bits()) + k * cell) as i64);
            out.push((WorldPos::new(at(a.x, i), at(a.z, j)), false));
        }
    }
    if let Some(&last) = points.last() {
        out.push((last, true));
    }
    out
}

/// The centre-based pull of `points` on `map` (see the module documentation). Paths of fewer than
/// three points, counting stretch points, are returned unchanged.
fn pull_centres(map: &PassMap, points: &[WorldPos]) -> Vec<WorldPos> {
    let Some(&first) = points.first() else { return Vec::new() };
    let all = expand(points, i128::from(map.cell_size().to_bits()));
    if all.len() < 3 {
        return points.to_vec();
    }
    let last = all.len() - 1;
    let sees = |from: usize, to: usize| segment_clear(map, all[from].0, all[to].0);
    let mut out = vec![first];
    let mut anchor = 0;
    while anchor < last {
        // The first input point after the anchor, and the input points the anchor sees from there.
        let mut next_input = anchor + 1;
        while !all[next_input].1 {
            next_input += 1;
        }
        let mut seen = anchor;
        let mut unseen = None;
        let mut at = next_input;
        loop {
            if !sees(anchor, at) {
                unseen = Some(at);
                break;
            }
            seen = at;
            if at == last {
                break;
            }
            at += 1;
            while !all[at].1 {
                at += 1;
            }
        }
        // Refine inside the stretch between the last seen input point and the first unseen one:
        // probe 1, 2, 4, … stretch points past it, then bisect.
        if let Some(mut hi) = unseen {
            let base = seen;
            let mut step = 1;
            while base + step < hi {
                if sees(anchor, base + step) {
                    seen = base + step;
                    step *= 2;
                } else {
                    hi = base + step;
                    break;
                }
            }
            while hi - seen > 1 {
                let mid = seen + (hi - seen) / 2;
                if sees(anchor, mid) { seen = mid } else { hi = mid }
            }
        }
        // An anchor that sees nothing ahead keeps the next point, so the walk always advances.
        let next = seen.max(anchor + 1);
        out.push(all[next].0);
        anchor = next;
    }
    out
}

/// How far a portal's end is pulled in from a grid vertex that touches a blocked navcell, as a
/// shift of the navcell size: `c >> 4` is a sixteenth of a navcell. (docs/decisions.md, "Segments
/// may not touch blocked navcells, so corners are cut from an inset".)
const INSET_SHIFT: u32 = 4;

/// The margin every segment of a corner-cutting path keeps from blocked navcells, as a shift of the
/// navcell size: `c >> 8`, 256 raw units for 1 m navcells. A walking unit's rounded positions stray
/// a few raw units from its segment; the margin is far above that and far below the inset.
const MARGIN_SHIFT: u32 = 8;

/// The string-pulled form of `points` on `map` (see the module documentation): the shorter of the
/// path through inset corners and the centre-based pull, the centre-based one on a tie or when the
/// inset path is not clear with the margin everywhere. Paths of fewer than three points, counting
/// stretch points, come back unchanged.
pub fn string_pull(map: &PassMap, points: &[WorldPos]) -> Vec<WorldPos> {
    let centred = pull_centres(map, points);
    if centred.len() < 3 {
        return centred;
    }
    let best = match pull_corners(map, &centred) {
        Some(cut) if length(&cut) < length(&centred) => cut,
        _ => centred,
    };
    // A path that differs from the centre-based pull keeps the margin on every segment, also the
    // ones tightening left as they were (a start a few raw units from a wall has none).
    let margin = (i128::from(map.cell_size().to_bits()).max(1) >> MARGIN_SHIFT).max(1);
    let tight = tighten(map, best.clone());
    let best = if tight != best && tight.windows(2).all(|w| clear_with_margin(map, w[0], w[1], margin)) { tight } else { best };
    shortest_over_corners(map, &best).unwrap_or(best)
}

/// Most navcells the rectangle round [`shortest_over_corners`]'s ellipse may cover; a path whose
/// ellipse is larger keeps what tightening gave it.
const TAUT_AREA: i128 = 4096;

/// Most corners [`shortest_over_corners`] searches over.
const TAUT_CORNERS: usize = 96;

/// Most segments [`shortest_over_corners`] tests for clearance before it gives up.
const TAUT_TESTS: usize = 1024;

/// The shortest path from `path`'s first point to its last over the inset convex corners of
/// blocked navcells that could lie on a shorter path, when one strictly shorter than `path` exists
/// within bounded work (docs/pathfinding-rules.md, "Turning a path into waypoints").
///
/// A point on a path no longer than `path`'s length `L` lies in the ellipse of points whose
/// distances to the two ends add up to at most `L`. The candidates are the convex corners of
/// blocked navcells (one blocked navcell of the four round a grid vertex) in that ellipse's
/// bounding rectangle, each moved an inset (a sixteenth of a navcell) diagonally away from its
/// navcell, whose two distances add up to less than `L`: a shortest path among the blocked navcells bends only at such corners,
/// and the inset keeps a unit off the walls as the funnel's corners do. A\* over them from the
/// first point, with the straight distance to the last as its estimate, takes edges lazily: an
/// entry is a vertex reached from a settled one, and only when it is taken is its segment tested
/// (clear with the margin); entries that could not make a path shorter than `L` are not kept. The
/// result is the shortest such path within a raw unit per segment (lengths are floor square roots),
/// and every segment of it has the margin.
///
/// Bounded work: `None` when the rectangle covers more than [`TAUT_AREA`] navcells, holds more than
/// [`TAUT_CORNERS`] corners, or the search would test more than [`TAUT_TESTS`] segments. Exact
/// integer arithmetic; ties broken by estimate, then distance travelled, then vertex and parent
/// index (corners in row order), so the answer is one whatever the platform.
fn shortest_over_corners(map: &PassMap, path: &[WorldPos]) -> Option<Vec<WorldPos>> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let (&s, &g) = (path.first()?, path.last()?);
    let c = i128::from(map.cell_size().to_bits()).max(1);
    let (inset, margin) = ((c >> INSET_SHIFT).max(1), (c >> MARGIN_SHIFT).max(1));
    let dist = |p: WorldPos, q: WorldPos| length(&[p, q]);
    let (limit, d) = (length(path), dist(s, g));
    if path.len() < 3 || d < c as u128 || limit <= d {
        return None;
    }
    // The ellipse's bounding rectangle, grown by a navcell: centre ± half-axes along s → g and
    // across it.
    let (l, d) = (limit as i128, d as i128);
    let (dx, dz) = (raw_of(g.x) - raw_of(s.x), raw_of(g.z) - raw_of(s.z));
    let (half_major, half_minor) = (l / 2 + c, ((l * l - d * d) as u128).isqrt() as i128 / 2 + c);
    if half_major.saturating_mul(half_minor) > TAUT_AREA * c * c / 4 {
        return None;
    }
    let (mx, mz) = ((raw_of(s.x) + raw_of(g.x)) / 2, (raw_of(s.z) + raw_of(g.z)) / 2);
    let (ax, az) = (dx * half_major / d, dz * half_major / d);
    let (bx, bz) = (-dz * half_minor / d, dx * half_minor / d);
    let rect = [(mx - ax - bx, mz - az - bz), (mx + ax - bx, mz + az - bz), (mx + ax + bx, mz + az + bz), (mx - ax + bx, mz - az + bz)];
    let within = |_: WorldPos, p: WorldPos| dist(p, s) + dist(p, g) < limit;
    let corners = corners_in(map, c, inset, &rect, (TAUT_AREA, TAUT_CORNERS), within)?;
    let mut points = vec![s, g];
    points.extend(corners);
    let to_end: Vec<u128> = points.iter().map(|&p| dist(p, g)).collect();
    // Entries (estimate, travelled, vertex, parent); vertex 0 is the start, 1 the end.
    let mut settled: Vec<Option<(u128, usize)>> = vec![None; points.len()];
    let mut open = BinaryHeap::new();
    open.push(Reverse((to_end[0], 0u128, 0usize, 0usize)));
    let mut tests = 0;
    while let Some(Reverse((_, travelled, v, parent))) = open.pop() {
        if settled[v].is_some() {
            continue;
        }
        if v != parent {
            tests += 1;
            if tests > TAUT_TESTS {
                return None;
            }
            if !clear_with_margin(map, points[parent], points[v], margin) {
                continue;
            }
        }
        settled[v] = Some((travelled, parent));
        if v == 1 {
            break;
        }
        for w in 1..points.len() {
            if settled[w].is_some() {
                continue;
            }
            // Nothing through `w` can beat the limit when even the straight way cannot.
            if travelled + to_end[w] >= limit {
                continue;
            }
            let far = travelled + dist(points[v], points[w]);
            let estimate = far + to_end[w];
            if estimate < limit {
                open.push(Reverse((estimate, far, w, v)));
            }
        }
    }
    settled[1]?;
    let mut out = vec![g];
    let mut at = 1;
    while at != 0 {
        at = settled[at]?.1;
        out.push(points[at]);
    }
    out.reverse();
    (length(&out) < limit).then_some(out)
}

/// Most candidate corners [`tighten`] wraps round one turning point; with more it keeps the point.
const TIGHTEN_CORNERS: usize = 64;

/// How many times [`tighten`] goes over a path.
const TIGHTEN_PASSES: usize = 2;

/// Tightens a clear path round the corners it wraps (docs/pathfinding-rules.md, "Turning a path
/// into waypoints"): the funnel keeps to the channel of the grid path the search picked, which
/// round a lone obstruction on open ground can run a few navcells off its corner.
///
/// For each turning point `v` between its neighbours `a` (already tightened) and `b`, the blocked
/// navcells the triangle `a v b` meets give candidate corners: each convex corner of such a navcell
/// (the other three navcells round the grid vertex passable) inside the triangle, moved an inset
/// (a sixteenth of a navcell) diagonally away from it and strictly on `v`'s side of `a b`. With
/// `a` and `b` they have a convex hull whose chain from `a` to `b` on `v`'s side is the shortest
/// way from `a` to `b` that keeps them all on the side `v` keeps them (the taut string round them).
/// A `v` already on the inset point of a blocked corner is taut on its side and skips this. When
/// `a b` is blocked, the same is done on the other side of `a b` with the corners no farther from
/// it than `v` is (the grid path may have gone round an obstruction on the longer side). The
/// shorter chain that is clear with the margin (so no segment touches a blocked navcell, inside
/// the triangle or not) and strictly shorter than `a v b` replaces `v`; otherwise `v` stays.
/// Before that, two turning points on one side of the chord from `a` to the point after them are
/// tried together on its other side ([`wrap_two`]).
/// Bounded work: a triangle of more than [`TIGHTEN_AREA`] navcells or with more than
/// [`TIGHTEN_CORNERS`] corners is not used, and at most [`TIGHTEN_PASSES`] passes are made.
/// Exact integer arithmetic throughout.
fn tighten(map: &PassMap, path: Vec<WorldPos>) -> Vec<WorldPos> {
    let c = i128::from(map.cell_size().to_bits()).max(1);
    let (inset, margin) = ((c >> INSET_SHIFT).max(1), (c >> MARGIN_SHIFT).max(1));
    let mut path = path;
    for _ in 0..TIGHTEN_PASSES {
        if path.len() < 3 {
            break;
        }
        let mut out = vec![path[0]];
        let mut changed = false;
        let mut k = 1;
        while k < path.len() - 1 {
            let (a, v, b) = (*out.last().unwrap_or(&path[0]), path[k], path[k + 1]);
            k += 1;
            if let Some(&far) = path.get(k + 1)
                && let Some(chain) = wrap_two(map, a, (v, b), far, c, inset, margin)
            {
                out.extend(chain);
                changed = true;
                k += 1;
                continue;
            }
            match wrap(map, a, v, b, c, inset, margin) {
                Some(chain) => {
                    out.extend(chain);
                    changed = true;
                }
                None => out.push(v),
            }
        }
        out.push(path[path.len() - 1]);
        out.dedup();
        path = out;
        if !changed {
            break;
        }
    }
    path
}

/// The taut chain from `a` to `b` round the blocked navcells near `v` (see [`tighten`]), without
/// `a` and `b`, when it is clear with the margin and strictly shorter than `a v b`: on `v`'s side
/// of `a b`, or on the other side round the blocked navcells that cross `a b` when that is
/// shorter still.
fn wrap(map: &PassMap, a: WorldPos, v: WorldPos, b: WorldPos, c: i128, inset: i128, margin: i128) -> Option<Vec<WorldPos>> {
    let side = cross(a, b, v).signum();
    let whole = |chain: &[WorldPos]| {
        let mut whole = Vec::with_capacity(chain.len() + 2);
        whole.push(a);
        whole.extend_from_slice(chain);
        whole.push(b);
        whole
    };
    let mut best: Option<(u128, Vec<WorldPos>)> = None;
    let mut consider = |chain: Vec<WorldPos>| {
        let path = whole(&chain);
        let len = length(&path);
        if len < length(&[a, v, b])
            && best.as_ref().is_none_or(|(l, _)| len < *l)
            && path.windows(2).all(|w| clear_with_margin(map, w[0], w[1], margin))
        {
            best = Some((len, chain));
        }
    };
    if side == 0 {
        consider(Vec::new());
        return best.map(|(_, chain)| chain);
    }
    // On v's side: grid vertices inside the triangle a v b (closed), their moved points strictly
    // on v's side of a b (a moved point may lie an inset beyond a v or v b).
    let in_triangle = |vertex: WorldPos, p: WorldPos| {
        side * cross(a, b, p) > 0
            && cross(a, v, vertex).signum() * cross(a, v, b).signum() >= 0
            && cross(v, b, vertex).signum() * cross(v, b, a).signum() >= 0
    };
    let tri = |m: WorldPos| [(raw_of(a.x), raw_of(a.z)), (raw_of(b.x), raw_of(b.z)), (raw_of(m.x), raw_of(m.z))];
    // A turning point already on the inset point of a blocked corner is taut on its own side.
    let (gx, gz) = ((raw_of(v.x) + c / 2).div_euclid(c), (raw_of(v.z) + c / 2).div_euclid(c));
    let on_corner = (raw_of(v.x) - gx * c).abs() <= inset
        && (raw_of(v.z) - gz * c).abs() <= inset
        && [(gx - 1, gz - 1), (gx, gz - 1), (gx - 1, gz), (gx, gz)].into_iter().any(|cell| !open(map, cell));
    if !on_corner {
        let corners = convex_corners(map, c, inset, tri(v), in_triangle)?;
        consider(hull_chain(a, b, side, &corners));
    }
    if let Some(chain) = other_side(map, a, v, b, c, inset) {
        consider(chain);
    }
    best.map(|(_, chain)| chain)
}

/// The taut chain from `a` to `b` on the other side of `a b` from `v`, round the convex blocked
/// corners no farther from `a b` than `v` and between `a` and `b` along it (in the triangle
/// `a m b`, `m = a + b − v`), when `a b` is blocked; not checked for clearance or length.
fn other_side(map: &PassMap, a: WorldPos, v: WorldPos, b: WorldPos, c: i128, inset: i128) -> Option<Vec<WorldPos>> {
    let side = cross(a, b, v).signum();
    if side == 0 || segment_clear(map, a, b) {
        return None;
    }
    let (ux, uz) = (raw_of(b.x) - raw_of(a.x), raw_of(b.z) - raw_of(a.z));
    let (l2, reach) = (ux * ux + uz * uz, cross(a, b, v).abs());
    let in_strip = |vertex: WorldPos, p: WorldPos| {
        let t = ux * (raw_of(vertex.x) - raw_of(a.x)) + uz * (raw_of(vertex.z) - raw_of(a.z));
        -side * cross(a, b, p) > 0 && cross(a, b, vertex).abs() <= reach && (0..=l2).contains(&t)
    };
    let m = (raw_of(a.x) + raw_of(b.x) - raw_of(v.x), raw_of(a.z) + raw_of(b.z) - raw_of(v.z));
    let tri = [(raw_of(a.x), raw_of(a.z)), (raw_of(b.x), raw_of(b.z)), m];
    convex_corners(map, c, inset, tri, in_strip).map(|corners| hull_chain(a, b, -side, &corners))
}

/// Two turning points `v1`, `v2` on one side of `a b` replaced by the taut chain on the other
/// side ([`other_side`], as far out as the farther of them), when it is clear with the margin and
/// strictly shorter than `a v1 v2 b`: a grid path that went round an obstruction on its longer
/// side.
fn wrap_two(
    map: &PassMap,
    a: WorldPos,
    (v1, v2): (WorldPos, WorldPos),
    b: WorldPos,
    c: i128,
    inset: i128,
    margin: i128,
) -> Option<Vec<WorldPos>> {
    let (s1, s2) = (cross(a, b, v1), cross(a, b, v2));
    if s1.signum() == 0 || s1.signum() != s2.signum() {
        return None;
    }
    let far = if s1.abs() >= s2.abs() { v1 } else { v2 };
    let chain = other_side(map, a, far, b, c, inset)?;
    let mut whole = vec![a];
    whole.extend_from_slice(&chain);
    whole.push(b);
    (length(&whole) < length(&[a, v1, v2, b]) && whole.windows(2).all(|w| clear_with_margin(map, w[0], w[1], margin))).then_some(chain)
}

/// Most navcells a triangle [`convex_corners`] scans may cover (its area in navcells); a larger
/// one is not scanned and its turning point stays.
const TIGHTEN_AREA: i128 = 512;

/// The convex corners of blocked navcells (a grid vertex whose other three navcells are
/// passable) on the navcells the triangle `tri` (raw points) meets, each moved an inset
/// diagonally away from its navcell, that `keep(vertex, moved)` accepts; `None` for a triangle of
/// more than [`TIGHTEN_AREA`] navcells or past [`TIGHTEN_CORNERS`] corners. Row by row, each row
/// from the triangle's extent in it (rounded outwards, plus a navcell either side).
fn convex_corners(
    map: &PassMap,
    c: i128,
    inset: i128,
    tri: [(i128, i128); 3],
    keep: impl Fn(WorldPos, WorldPos) -> bool,
) -> Option<Vec<WorldPos>> {
    corners_in(map, c, inset, &tri, (TIGHTEN_AREA, TIGHTEN_CORNERS), keep)
}

/// The convex corners of blocked navcells on the navcells the convex polygon `poly` (raw points,
/// in order round it) meets, moved an inset away from their navcell, that `keep(vertex, moved)`
/// accepts; `None` for a polygon of more than `limits.0` navcells or past `limits.1` corners.
fn corners_in(
    map: &PassMap,
    c: i128,
    inset: i128,
    poly: &[(i128, i128)],
    (max_area, max_corners): (i128, usize),
    keep: impl Fn(WorldPos, WorldPos) -> bool,
) -> Option<Vec<WorldPos>> {
    let n = poly.len();
    let twice_area: i128 = (0..n).map(|k| poly[k].0 * poly[(k + 1) % n].1 - poly[(k + 1) % n].0 * poly[k].1).sum();
    if n == 0 || twice_area.abs() > 2 * max_area * c * c {
        return None;
    }
    let (zlo, zhi) = (poly.iter().map(|p| p.1).min()?, poly.iter().map(|p| p.1).max()?);
    let (w, h) = (i128::from(map.width()), i128::from(map.height()));
    let mut corners = Vec::new();
    for j in zlo.div_euclid(c) - 1..=zhi.div_euclid(c) + 1 {
        // The polygon's x extent over the band z ∈ [j·c, (j + 1)·c], from its edges clipped
        // to the band.
        let (z0, z1) = (j * c, (j + 1) * c);
        let (mut xmin, mut xmax) = (i128::MAX, i128::MIN);
        for k in 0..n {
            let ((px, pz), (qx, qz)) = (poly[k], poly[(k + 1) % n]);
            if pz.max(qz) < z0 || pz.min(qz) > z1 {
                continue;
            }
            if pz == qz {
                (xmin, xmax) = (xmin.min(px.min(qx)), xmax.max(px.max(qx)));
                continue;
            }
            for z in [pz.min(qz).max(z0), pz.max(qz).min(z1)] {
                // Truncated, so within a raw unit: the scan adds a navcell either side.
                let x = px + (qx - px) * (z - pz) / (qz - pz);
                (xmin, xmax) = (xmin.min(x), xmax.max(x));
            }
        }
        if xmin > xmax {
            continue;
        }
        // A convex corner needs the navcell beside it along the row passable, so only the two
        // ends of each run of blocked navcells can have one: the runs of the row's span, found a
        // word of the pass map at a time. The span is clamped to the navcells the pass map reads
        // (one off the grid, blocked, on each side); off-grid navcells have no convex corner.
        if !(-1..=h).contains(&j) {
            continue;
        }
        let (lo, hi) = ((xmin.div_euclid(c) - 1).max(-1), (xmax.div_euclid(c) + 1).min(w));
        let mut from = lo;
        while from <= hi {
            let row = |f: fn(&PassMap, i64, i64, i64) -> Option<i64>, a: i128| f(map, j as i64, a as i64, hi as i64).map(i128::from);
            let Some(first) = row(PassMap::first_blocked_in_row, from) else { break };
            let last = row(PassMap::first_open_in_row, first).map_or(hi, |open| open - 1);
            from = last + 2;
            // West corners (ox = 0) on the run's first navcell, east ones (ox = 1) on its last, in
            // the order of a walk over every navcell (a lone navcell's south corners first).
            let ends = if first == last {
                [(first, 0i128, 0i128), (first, 1, 0), (first, 0, 1), (first, 1, 1)]
            } else {
                [(first, 0, 0), (first, 0, 1), (last, 1, 0), (last, 1, 1)]
            };
            for (i, ox, oz) in ends {
                let (di, dj) = (2 * ox - 1, 2 * oz - 1);
                if !(open(map, (i + di, j)) && open(map, (i, j + dj)) && open(map, (i + di, j + dj))) {
                    continue;
                }
                let vertex = pos((i + ox) * c, (j + oz) * c);
                let p = pos((i + ox) * c + di * inset, (j + oz) * c + dj * inset);
                if keep(vertex, p) {
                    corners.push(p);
                }
            }
        }
        if corners.len() > max_corners {
            return None;
        }
    }
    Some(corners)
}

/// The chain of the convex hull of `points` with `a` and `b` from `a` to `b` on the side `side`
/// (the sign of `cross(a, b, ·)`) of `a b`, without `a` and `b`: gift wrapping from `a`, each step
/// to the point with every other on the chord's side of the step (the farther one of collinear
/// points). Every point is strictly on that side of `a b` and within the triangle the caller took
/// them from, so `a` and `b` are hull vertices and the walk ends at `b`.
fn hull_chain(a: WorldPos, b: WorldPos, side: i128, points: &[WorldPos]) -> Vec<WorldPos> {
    let dist2 = |p: WorldPos, q: WorldPos| {
        let (dx, dz) = (raw_of(q.x) - raw_of(p.x), raw_of(q.z) - raw_of(p.z));
        dx * dx + dz * dz
    };
    let dot = |p: WorldPos, q: WorldPos, r: WorldPos| {
        (raw_of(q.x) - raw_of(p.x)) * (raw_of(r.x) - raw_of(p.x)) + (raw_of(q.z) - raw_of(p.z)) * (raw_of(r.z) - raw_of(p.z))
    };
    let mut chain = Vec::new();
    let mut at = a;
    for _ in 0..=points.len() {
        let mut next = b;
        for &p in points {
            if p == at {
                continue;
            }
            let turn = side * cross(at, next, p);
            if turn > 0 || (turn == 0 && dot(at, next, p) > 0 && dist2(at, p) > dist2(at, next)) {
                next = p;
            }
        }
        if next == b {
            break;
        }
        chain.push(next);
        at = next;
    }
    chain
}

/// The length of a polyline as the sum of its segments' floor square roots of raw squared
/// lengths: exact, integer only, and what both candidates are compared by.
fn length(points: &[WorldPos]) -> u128 {
    points
        .windows(2)
        .map(|w| {
            let (dx, dz) = (raw_of(w[1].x) - raw_of(w[0].x), raw_of(w[1].z) - raw_of(w[0].z));
            ((dx * dx + dz * dz) as u128).isqrt()
        })
        .sum()
}

fn raw_of(v: Fixed) -> i128 {
    i128::from(v.to_bits())
}

fn pos(x: i128, z: i128) -> WorldPos {
    // Every coordinate built here lies on or between grid lines of a passable navcell, or is one
    // of the input points, so it fits in `i64`.
    WorldPos::new(Fixed::from_bits(x as i64), Fixed::from_bits(z as i64))
}

/// Whether the signed navcell `(i, j)` is on the grid and passable.
fn open(map: &PassMap, (i, j): (i128, i128)) -> bool {
    match (u16::try_from(i), u16::try_from(j)) {
        (Ok(i), Ok(j)) => map.is_passable(Navcell::new(i, j)),
        _ => false,
    }
}

/// Whether the segment grown by a square of half-side `d` (its Minkowski sum with
/// `[-d, d]²`) touches only passable navcells. A closed navcell of side `c ≥ 2d` meets the grown
/// segment exactly when it meets one of the four copies of the segment shifted by `(±d, ±d)`
/// (the navcell grown by `d` is the union of its four shifts by `(±d, ±d)`), so four exact
/// [`segment_clear`] tests decide it.
pub(crate) fn clear_with_margin(map: &PassMap, a: WorldPos, b: WorldPos, d: i128) -> bool {
    [(-d, -d), (-d, d), (d, -d), (d, d)]
        .iter()
        .all(|&(sx, sz)| segment_clear(map, pos(raw_of(a.x) + sx, raw_of(a.z) + sz), pos(raw_of(b.x) + sx, raw_of(b.z) + sz)))
}

/// The navcell holding `p` (floor on both axes; a point on a grid line counts in the navcell above).
fn cell_of(p: WorldPos, c: i128) -> (i128, i128) {
    (raw_of(p.x).div_euclid(c), raw_of(p.z).div_euclid(c))
}

/// Appends to `cells` the navcells the segment `a → b` passes through after `a`'s own, edge to
/// edge, up to `b`'s (grid traversal: the next grid line the segment crosses, compared exactly by
/// cross multiplication; through a grid vertex the navcell on the x side comes first). An axis
/// steps only while its index differs from `b`'s, so the walk ends in `b`'s navcell. `false` when
/// a navcell on the way is blocked: the segment was not clear.
fn traverse(map: &PassMap, a: WorldPos, b: WorldPos, c: i128, cells: &mut Vec<(i128, i128)>) -> bool {
    let (mut i, mut j) = cell_of(a, c);
    let (ti, tj) = cell_of(b, c);
    let (dx, dz) = (raw_of(b.x) - raw_of(a.x), raw_of(b.z) - raw_of(a.z));
    let (x0, z0) = (raw_of(a.x), raw_of(a.z));
    while (i, j) != (ti, tj) {
        // Distance to the next grid line towards `b` on each axis, over that axis' extent.
        let gap = |k: i128, start: i128, d: i128| if d > 0 { (k + 1) * c - start } else { start - k * c };
        let step_x = if i == ti {
            false
        } else if j == tj {
            true
        } else {
            gap(i, x0, dx) * dz.abs() <= gap(j, z0, dz) * dx.abs()
        };
        if step_x {
            i += dx.signum()
        } else {
            j += dz.signum()
        }
        if !open(map, (i, j)) {
            return false;
        }
        cells.push((i, j));
    }
    true
}

/// The portal between edge-neighbours `a` and `b`, as its left and right ends seen walking from `a`
/// to `b` (x east, z north, left counter-clockwise). Each end that is a grid vertex touching a
/// blocked navcell is pulled `inset` towards the other end; an end whose four navcells are all
/// passable stays on the vertex, where a segment may pass.
fn portal(map: &PassMap, a: (i128, i128), b: (i128, i128), c: i128, inset: i128) -> (WorldPos, WorldPos) {
    let (di, dj) = (b.0 - a.0, b.1 - a.1);
    // The shared edge's two grid vertices, as vertex indices, left one first.
    let (left, right) = match (di, dj) {
        (1, _) => ((a.0 + 1, a.1 + 1), (a.0 + 1, a.1)),
        (-1, _) => ((a.0, a.1), (a.0, a.1 + 1)),
        (_, 1) => ((a.0, a.1 + 1), (a.0 + 1, a.1 + 1)),
        _ => ((a.0 + 1, a.1), (a.0, a.1)),
    };
    // The four navcells round a vertex, two rows of two read a word at a time; navcells off the
    // grid are impassable (a vertex beyond the padded border touches no passable one).
    let touches_blocked = |(vi, vj): (i128, i128)| match (i64::try_from(vi), i64::try_from(vj)) {
        (Ok(vi), Ok(vj)) => map.box_passable_padded((vi - 1, vi), (vj - 1, vj)) != Some(true),
        _ => true,
    };
    let end = |v: (i128, i128), other: (i128, i128)| {
        let k = if touches_blocked(v) { inset } else { 0 };
        pos(v.0 * c + (other.0 - v.0) * k, v.1 * c + (other.1 - v.1) * k)
    };
    (end(left, right), end(right, left))
}

/// `(b − a) × (p − a)`: positive when `p` lies left of the ray from `a` through `b`.
fn cross(a: WorldPos, b: WorldPos, p: WorldPos) -> i128 {
    let (ux, uz) = (raw_of(b.x) - raw_of(a.x), raw_of(b.z) - raw_of(a.z));
    let (vx, vz) = (raw_of(p.x) - raw_of(a.x), raw_of(p.z) - raw_of(a.z));
    ux * vz - uz * vx
}

/// The shortest path from `start` through every portal in order to `end` (the funnel), appended to
/// `out` without `start`. The funnel's apex sees the path so far; its two sides are the rays through
/// the left and right ends that narrow it. A new end that narrows a side replaces it, unless it
/// crosses the other side: then that side's end is a corner of the path, and the walk restarts from
/// it with the portals after it. Collinear ends count as narrowing, and crossing needs a strict
/// sign, so every case has one outcome.
fn funnel(start: WorldPos, portals: &[(WorldPos, WorldPos)], end: WorldPos, out: &mut Vec<WorldPos>) {
    // The gates: the portals, then the end as a gate of zero width.
    let gate = |k: usize| portals.get(k).copied().unwrap_or((end, end));
    let (mut apex, mut left, mut right) = (start, start, start);
    let (mut left_at, mut right_at) = (0usize, 0usize);
    let mut k = 0;
    while k <= portals.len() {
        let (pl, pr) = gate(k);
        k += 1;
        // The right side narrows when the new right end is on or left of it.
        if cross(apex, right, pr) >= 0 {
            if apex == right || cross(apex, left, pr) < 0 {
                (right, right_at) = (pr, k);
            } else {
                // It crosses the left side: the left end is a corner.
                apex = left;
                out.push(apex);
                (right, right_at, k) = (apex, left_at, left_at);
                continue;
            }
        }
        if cross(apex, left, pl) <= 0 {
            if apex == left || cross(apex, right, pl) > 0 {
                (left, left_at) = (pl, k);
            } else {
                apex = right;
                out.push(apex);
                (left, left_at, k) = (apex, right_at, right_at);
                continue;
            }
        }
    }
    if out.last() != Some(&end) {
        out.push(end);
    }
}

/// The path through inset corners inside the channel of navcells that `through` (a clear path,
/// the centre-based pull) passes through (see the module documentation), or `None` when the channel
/// is not passable or a segment is not clear with the margin.
fn pull_corners(map: &PassMap, through: &[WorldPos]) -> Option<Vec<WorldPos>> {
    let c = i128::from(map.cell_size().to_bits()).max(1);
    let (inset, margin) = ((c >> INSET_SHIFT).max(1), (c >> MARGIN_SHIFT).max(1));
    let (&first, &end) = (through.first()?, through.last()?);
    // The channel: the navcells the path's segments pass through, edge to edge.
    // Room for the channel: a segment passes through at most one navcell per grid line it crosses.
    let crossings: i128 =
        through.windows(2).map(|w| ((raw_of(w[1].x) - raw_of(w[0].x)).abs() + (raw_of(w[1].z) - raw_of(w[0].z)).abs()) / c + 2).sum();
    let mut cells = Vec::with_capacity(usize::try_from(crossings).unwrap_or(0).saturating_add(1).min(1 << 20));
    cells.push(cell_of(first, c));
    if !open(map, cells[0]) {
        return None;
    }
    for pair in through.windows(2) {
        if !traverse(map, pair[0], pair[1], c, &mut cells) {
            return None;
        }
    }
    let portals: Vec<(WorldPos, WorldPos)> = cells.windows(2).map(|w| portal(map, w[0], w[1], c, inset)).collect();
    let mut corners = vec![first];
    funnel(first, &portals, end, &mut corners);
    corners.dedup();
    // Greedy visibility over the corners, with the margin: from each anchor, probe 1, 2, 4, …
    // corners ahead until one is not seen, bisect, and go to the last one seen.
    let sees = |a: usize, b: usize| clear_with_margin(map, corners[a], corners[b], margin);
    let last = corners.len() - 1;
    let mut out = vec![corners[0]];
    let mut anchor = 0;
    while anchor < last {
        let (mut seen, mut unseen, mut step) = (anchor, last + 1, 1);
        loop {
            let probe = (anchor + step).min(last);
            if !sees(anchor, probe) {
                unseen = probe;
                break;
            }
            seen = probe;
            if probe == last {
                break;
            }
            step *= 2;
        }
        while seen + 1 < unseen {
            let mid = seen + (unseen - seen) / 2;
            if sees(anchor, mid) { seen = mid } else { unseen = mid }
        }
        if seen == anchor {
            // The next corner is not seen with the margin: this path is not safe to walk.
            return None;
        }
        out.push(corners[seen]);
        anchor = seen;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{CLASS, random_grid};
    use crate::{Accelerators, Goal, Navcell, Path, PathStatus, SearchLimits, SearchScratch, find_path_jps};
    use proptest::prelude::*;

    fn centre(c: Navcell) -> WorldPos {
        WorldPos::new(Fixed::from_num(c.i) + Fixed::ONE / 2, Fixed::from_num(c.j) + Fixed::ONE / 2)
    }

    #[test]
    fn a_staircase_on_open_ground_becomes_one_segment() {
        let grid = random_grid(20, 20, 1, 0);
        let map = PassMap::build(&grid, CLASS);
        let stairs: Vec<WorldPos> = (0..10).map(|k| centre(Navcell::new(k, k / 2))).collect();
        assert_eq!(string_pull(&map, &stairs), vec![stairs[0], stairs[9]]);
    }

    #[test]
    fn short_paths_are_unchanged() {
        let grid = random_grid(4, 4, 1, 0);
        let map = PassMap::build(&grid, CLASS);
        let two = [centre(Navcell::new(0, 0)), centre(Navcell::new(3, 3))];
        assert_eq!(string_pull(&map, &two), two.to_vec());
        assert!(string_pull(&map, &[]).is_empty());
    }

    fn at(x2: i64, z2: i64) -> WorldPos {
        WorldPos::new(Fixed::from_num(x2) / 2, Fixed::from_num(z2) / 2)
    }

    /// A path round the long end of a wall comes back round the short end: the search over
    /// corners is not held to the side the grid path took. The wall is column 20 from row 5 to
    /// row 30; from (10.5, 20.5) to (30.5, 20.5) the top end is 10.5 rows away, the bottom 15.5.
    #[test]
    fn the_search_over_corners_goes_round_the_short_end_of_a_wall() {
        let mut grid = random_grid(40, 40, 1, 0);
        for j in 5..=30 {
            grid.set_passable(Navcell::new(20, j), CLASS, false);
        }
        let map = PassMap::build(&grid, CLASS);
        let (s, g) = (at(21, 41), at(61, 41));
        let round_the_bottom = [s, at(39, 9), at(43, 9), g];
        for w in round_the_bottom.windows(2) {
            assert!(segment_clear(&map, w[0], w[1]));
        }
        let e = Fixed::ONE / 16;
        let (x20, x21, z31) = (Fixed::from_num(20), Fixed::from_num(21), Fixed::from_num(31));
        let over_the_top = vec![s, WorldPos::new(x20 - e, z31 + e), WorldPos::new(x21 + e, z31 + e), g];
        assert_eq!(shortest_over_corners(&map, &round_the_bottom), Some(over_the_top.clone()));
        assert_eq!(string_pull(&map, &round_the_bottom), over_the_top);
    }

    /// On open ground a bent path comes back straight while its ellipse is small, and is left to
    /// the other steps when its bounding rectangle covers more than `TAUT_AREA` navcells.
    #[test]
    fn the_search_over_corners_straightens_open_ground_within_its_area() {
        let map = PassMap::build(&random_grid(220, 80, 1, 0), CLASS);
        let small = [at(1, 1), at(21, 11), at(41, 1)];
        assert_eq!(shortest_over_corners(&map, &small), Some(vec![small[0], small[2]]));
        // Half-axes about 106 and 33 navcells: 4 × 106 × 33 navcells is far over the area.
        let large = [at(1, 1), at(201, 61), at(401, 1)];
        assert_eq!(shortest_over_corners(&map, &large), None);
        // A straight path has nothing to gain.
        assert_eq!(shortest_over_corners(&map, &[small[0], small[2]]), None);
    }

    /// The example of the rule (docs/pathfinding-rules.md, "Turning a path into waypoints"): on a
    /// 24 × 12 grid with a 2 × 2 block, the search's turning points are (4, 3), (8, 7), (14, 7); the
    /// turning points alone pull to 4√2 + 6 ≈ 11.657 m, the stretch point (11, 7) to √65 + 3 ≈ 11.062 m.
    #[test]
    fn string_pulling_uses_every_navcell_of_the_path_not_only_its_turning_points() {
        let mut grid = random_grid(24, 12, 1, 0);
        for (i, j) in [(11, 5), (12, 5), (11, 6), (12, 6)] {
            grid.set_passable(Navcell::new(i, j), CLASS, false);
        }
        let map = PassMap::build(&grid, CLASS);
        let mut scratch = SearchScratch::new();
        let mut path = Path::new();
        let goal = Goal::navcell_center(14, 7, Fixed::ONE);
        let outcome =
            find_path_jps(&map, &Accelerators::NONE, Navcell::new(4, 3), &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut path);
        assert_eq!(outcome.status, PathStatus::Complete);
        assert_eq!(path.waypoints(), [Navcell::new(4, 3), Navcell::new(8, 7), Navcell::new(14, 7)]);
        let points: Vec<WorldPos> = path.waypoints().iter().map(|&c| centre(c)).collect();
        assert_eq!(pull_centres(&map, &points), vec![at(9, 7), at(23, 15), at(29, 15)]);
        // Through the block's corner (11, 7), inset a sixteenth of a navcell up its west edge:
        // √(6.5² + 3.5625²) + √(3.5² + 0.4375²) ≈ 10.939 m, against the optimum's 10.92 m.
        let inset = WorldPos::new(Fixed::from_num(11), Fixed::from_num(7) + Fixed::ONE / 16);
        assert_eq!(string_pull(&map, &points), vec![at(9, 7), inset, at(29, 15)]);
    }

    /// Stretch points are found by probing and bisection: a long stretch whose far part the anchor
    /// cannot see still gives the last navcell it sees before the first one it does not.
    #[test]
    fn the_anchor_advances_to_the_last_stretch_point_it_sees() {
        // A wall at i = 5 for j ≤ 5; the path runs north along i = 0, then east along j = 6.
        let mut grid = random_grid(40, 8, 1, 0);
        for j in 0..=5 {
            grid.set_passable(Navcell::new(5, j), CLASS, false);
        }
        let map = PassMap::build(&grid, CLASS);
        // From (0.5, 0.5) up to (0.5, 6.5) is the input's first stretch, then east to (39.5, 6.5).
        let points = [at(1, 1), at(1, 13), at(79, 13)];
        let pulled = pull_centres(&map, &points);
        for w in pulled.windows(2) {
            assert!(segment_clear(&map, w[0], w[1]));
        }
        // (0.5, 0.5) sees (0.5, 6.5) but not the far end. Along the second stretch it sees
        // (1.5, 6.5) to (4.5, 6.5) (probes 1, 2 and 4 steps on), not (8.5, 6.5) (probe 8) nor, by
        // bisection, (6.5, 6.5) and (5.5, 6.5), whose segments touch the wall's top navcell (5, 5).
        assert_eq!(pulled, vec![at(1, 1), at(9, 13), at(79, 13)]);
        // Through inset corners, the path rounds the wall's top corner (5, 6) a sixteenth of a
        // navcell above it, on its west edge.
        let inset = WorldPos::new(Fixed::from_num(5), Fixed::from_num(6) + Fixed::ONE / 16);
        assert_eq!(string_pull(&map, &points), vec![at(1, 1), inset, at(79, 13)]);
    }

    /// A corridor one navcell wide climbing a staircase: four navcells east in each row, each row
    /// starting above the last one's end, eight rows. Centre to centre no corner can be cut;
    /// through inset corners the path is the taut string round the inner corners (compared with
    /// the exact optimum in `tests/tests/any_angle.rs`).
    #[test]
    fn a_one_wide_staircase_corridor_is_cut_at_its_inset_corners() {
        let (w, h) = (3 * 8 + 2, 8 + 2);
        let mut grid = random_grid(w, h, 1, 100);
        // The corridor's navcells: row k + 1 from column 3k + 1 to 3k + 4.
        let mut corridor = Vec::new();
        for k in 0..8u16 {
            for i in 3 * k + 1..=3 * k + 4 {
                corridor.push(Navcell::new(i, k + 1));
            }
        }
        for &cell in &corridor {
            grid.set_passable(cell, CLASS, true);
        }
        let map = PassMap::build(&grid, CLASS);
        let points: Vec<WorldPos> = corridor.iter().map(|&c| centre(c)).collect();
        let centred = pull_centres(&map, &points);
        let pulled = string_pull(&map, &points);
        assert!(length(&pulled) < length(&centred));
        let margin = i128::from(map.cell_size().to_bits()) >> MARGIN_SHIFT;
        for w in pulled.windows(2) {
            assert!(clear_with_margin(&map, w[0], w[1], margin));
        }
        // The taut string touches only the first riser's inner corner (4, 2) and the last one's
        // (23, 8), each pulled a sixteenth of a navcell along the portal it ends: every riser
        // between lies beside the straight line from one to the other.
        let e = Fixed::ONE / 16;
        let corner = |x: i32, z: Fixed| WorldPos::new(Fixed::from_num(x), z);
        let expected = vec![points[0], corner(4, Fixed::from_num(2) - e), corner(23, Fixed::from_num(8) + e), points[points.len() - 1]];
        assert_eq!(pulled, expected);
    }

    /// What every pull must be against the centre-based one: both ends kept, never longer, every
    /// segment clear, and clear with the margin when it differs.
    fn check_pull(map: &PassMap, points: &[WorldPos], centred: &[WorldPos], pulled: &[WorldPos]) -> Result<(), TestCaseError> {
        prop_assert_eq!(pulled.first(), points.first());
        prop_assert_eq!(pulled.last(), points.last());
        prop_assert!(length(pulled) <= length(centred));
        for w in pulled.windows(2) {
            prop_assert!(segment_clear(map, w[0], w[1]));
        }
        if pulled != centred {
            let margin = i128::from(map.cell_size().to_bits()) >> MARGIN_SHIFT;
            for w in pulled.windows(2) {
                prop_assert!(clear_with_margin(map, w[0], w[1], margin), "{:?} to {:?}", w[0], w[1]);
            }
        }
        Ok(())
    }

    proptest! {
        /// On random grids, the centre-based pull of a JPS path keeps its endpoints, uses only the
        /// centres of its navcells in order, has only clear segments, and is never longer; the
        /// pull through inset corners keeps the endpoints, is never longer than the centre-based
        /// one, and when it differs from it every segment is clear with the margin.
        #[test]
        fn smoothed_paths_keep_path_navcells_in_order_are_clear_and_no_longer(seed in any::<u64>(), density in 0u64..35, si in 0u16..40, sj in 0u16..40, gi in 0u16..40, gj in 0u16..40) {
            let grid = random_grid(40, 40, seed, density);
            let map = PassMap::build(&grid, CLASS);
            let (start, goal) = (Navcell::new(si, sj), Navcell::new(gi, gj));
            prop_assume!(map.is_passable(start) && map.is_passable(goal));
            let mut scratch = SearchScratch::new();
            let mut path = Path::new();
            let outcome = find_path_jps(&map, &Accelerators::NONE, start, &Goal::navcell_center(gi, gj, Fixed::ONE), &SearchLimits::UNLIMITED, &mut scratch, &mut path);
            prop_assume!(outcome.status == PathStatus::Complete);
            let points: Vec<WorldPos> = path.waypoints().iter().map(|&c| centre(c)).collect();
            let centred = pull_centres(&map, &points);
            prop_assert_eq!(centred.first(), points.first());
            prop_assert_eq!(centred.last(), points.last());
            // Every kept point is a navcell centre of the grid path, in path order.
            let cells: Vec<WorldPos> = path.cells().iter().map(|&c| centre(c)).collect();
            let mut k = 0;
            for p in &centred {
                let found = cells[k..].iter().position(|q| q == p);
                prop_assert!(found.is_some(), "smoothed point not on the path in order");
                k += found.unwrap_or(0);
            }
            for w in centred.windows(2) {
                prop_assert!(segment_clear(&map, w[0], w[1]));
            }
            prop_assert!(length(&centred) <= length(&points) + centred.len() as u128);
            let pulled = string_pull(&map, &points);
            check_pull(&map, &points, &centred, &pulled)?;
        }

        /// As the simulation plans: the first point is the unit's own position anywhere inside its
        /// navcell (then the path's turning points' centres after it); the pull keeps both ends,
        /// every segment is clear, it is never longer than the centre-based pull, and when it
        /// differs from it every segment is clear with the margin. The simulation keeps positions
        /// off grid lines (`sim::off_grid_lines`), so the offsets start at one raw unit: a start on
        /// a grid line beside a blocked navcell has no clear segment to pull from.
        #[test]
        fn pulls_from_a_point_off_the_centre_keep_their_ends_and_the_margin(seed in any::<u64>(), density in 0u64..35, si in 0u16..40, sj in 0u16..40, gi in 0u16..40, gj in 0u16..40, ox in 1i64..65536, oz in 1i64..65536) {
            let grid = random_grid(40, 40, seed, density);
            let map = PassMap::build(&grid, CLASS);
            let (start, goal) = (Navcell::new(si, sj), Navcell::new(gi, gj));
            prop_assume!(map.is_passable(start) && map.is_passable(goal));
            let mut scratch = SearchScratch::new();
            let mut path = Path::new();
            let outcome = find_path_jps(&map, &Accelerators::NONE, start, &Goal::navcell_center(gi, gj, Fixed::ONE), &SearchLimits::UNLIMITED, &mut scratch, &mut path);
            prop_assume!(outcome.status == PathStatus::Complete);
            let from = WorldPos::new(Fixed::from_num(si) + Fixed::from_bits(ox), Fixed::from_num(sj) + Fixed::from_bits(oz));
            let mut points = vec![from];
            points.extend(path.waypoints().iter().skip(1).map(|&c| centre(c)));
            // As `run_long`: by the own navcell's centre when the first segment is not clear.
            if points.len() > 1 && !segment_clear(&map, from, points[1]) {
                points.insert(1, centre(start));
            }
            let centred = pull_centres(&map, &points);
            let pulled = string_pull(&map, &points);
            check_pull(&map, &points, &centred, &pulled)?;
        }
    }
}
