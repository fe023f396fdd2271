//! An any-angle oracle: the exact shortest path between two points of a navcell grid, by A\* over the
//! visibility graph of the blocked navcells' convex corners, to measure string pulling against.
//!
//! A path may touch blocked navcells but never enter one: it stays out of every blocked navcell's
//! open interior, never runs along a grid line with blocked navcells on both sides, and never
//! slips through the corner where two blocked navcells meet diagonally. That is the limit of what
//! the simulation's closed-navcell segment test allows (docs/pathfinding-rules.md), so every path
//! the simulation walks is a path here too and the oracle's length is a lower bound for ours.
//! A shortest path among polygons turns only at obstacle corners whose free angle exceeds 180°,
//! which on a grid are the corners with exactly one blocked navcell of four; those and the two
//! ends are the graph's vertices.
//!
//! Visibility is decided exactly, in integers, in half-navcell units (navcell `(i, j)` covers
//! `[2i, 2i + 2] × [2j, 2j + 2]`); only lengths are floats. Vertices farther than a given bound
//! by way of both ends (outside the ellipse `|v − s| + |v − g| ≤ bound`) cannot be on a path no
//! longer than the bound, so a caller that knows a path's length passes it to prune the graph.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A grid of blocked and free navcells, `blocked[j * width + i]`; everything off the grid is blocked.
#[derive(Clone, Debug)]
pub struct Grid {
    /// Navcells per row.
    pub width: i64,
    /// Rows.
    pub height: i64,
    /// Whether each navcell is blocked, row by row.
    pub blocked: Vec<bool>,
}

impl Grid {
    /// Whether navcell `(i, j)` is blocked (off the grid counts as blocked).
    pub fn is_blocked(&self, i: i64, j: i64) -> bool {
        !(0..self.width).contains(&i) || !(0..self.height).contains(&j) || self.blocked[(j * self.width + i) as usize]
    }

    /// Whether the navcell containing the doubled-coordinate corner's quadrant `(di, dj)` (each 0 or
    /// −1) around corner `(cx, cz)` (even coordinates) is free.
    fn quadrant_free(&self, cx: i64, cz: i64, di: i64, dj: i64) -> bool {
        !self.is_blocked(cx / 2 + di, cz / 2 + dj)
    }

    /// Whether the straight segment between two points in half-navcell units is a legal path
    /// segment (see the module documentation).
    pub fn visible(&self, p: (i64, i64), q: (i64, i64)) -> bool {
        let (dx, dz) = (q.0 - p.0, q.1 - p.1);
        if dx == 0 && dz == 0 {
            return true;
        }
        // Parameters t = num / den (den > 0) of every crossing of an even grid line strictly inside
        // the segment, per axis, in increasing order.
        let crossings = |from: i64, d: i64| -> Vec<(i64, i64)> {
            let (lo, hi) = (from.min(from + d), from.max(from + d));
            let mut lines: Vec<i64> = (lo.div_euclid(2) + 1..).map(|k| 2 * k).take_while(|&k| k < hi).collect();
            if d < 0 {
                lines.reverse();
            }
            lines.into_iter().map(|k| ((k - from).abs(), d.abs())).collect()
        };
        let (xs, zs) = (crossings(p.0, dx), crossings(p.1, dz));
        // Merge into one ordered list of (t, crosses x line, crosses z line).
        let mut events: Vec<((i64, i64), bool, bool)> = Vec::with_capacity(xs.len() + zs.len());
        let (mut a, mut b) = (0, 0);
        while a < xs.len() || b < zs.len() {
            let ord = match (xs.get(a), zs.get(b)) {
                (Some(x), Some(z)) => (i128::from(x.0) * i128::from(z.1)).cmp(&(i128::from(z.0) * i128::from(x.1))),
                (Some(_), None) => Ordering::Less,
                _ => Ordering::Greater,
            };
            match ord {
                Ordering::Less => {
                    // A segment along a horizontal grid line meets a corner at every vertical line.
                    events.push((xs[a], true, dz == 0 && p.1.rem_euclid(2) == 0));
                    a += 1;
                }
                Ordering::Greater => {
                    events.push((zs[b], dx == 0 && p.0.rem_euclid(2) == 0, true));
                    b += 1;
                }
                Ordering::Equal => {
                    events.push((xs[a], true, true));
                    a += 1;
                    b += 1;
                }
            }
        }
        // Every open piece between consecutive events: its midpoint tells the navcell it crosses,
        // or the grid line it runs along.
        let mut ts: Vec<(i64, i64)> = vec![(0, 1)];
        ts.extend(events.iter().map(|e| e.0));
        ts.push((1, 1));
        for w in ts.windows(2) {
            let ((na, da), (nb, db)) = (w[0], w[1]);
            // Midpoint coordinate times `2 · da · db`.
            let den = 2 * i128::from(da) * i128::from(db);
            let tnum = i128::from(na) * i128::from(db) + i128::from(nb) * i128::from(da);
            let mx = i128::from(p.0) * den + tnum * i128::from(dx);
            let mz = i128::from(p.1) * den + tnum * i128::from(dz);
            // Navcell index = floor(m / (2 · den)); on a line when m is a multiple of 2 · den.
            let cell = |m: i128| (m.div_euclid(2 * den) as i64, m.rem_euclid(2 * den) == 0);
            let ((ci, on_x), (cj, on_z)) = (cell(mx), cell(mz));
            let free = match (on_x, on_z) {
                (false, false) => !self.is_blocked(ci, cj),
                // Along a vertical line x = 2·ci: one side must be free.
                (true, false) => !self.is_blocked(ci - 1, cj) || !self.is_blocked(ci, cj),
                (false, true) => !self.is_blocked(ci, cj - 1) || !self.is_blocked(ci, cj),
                (true, true) => unreachable!("an open piece of a segment cannot stay on a corner"),
            };
            if !free {
                return false;
            }
        }
        // Corners passed through: the path must not slip between two diagonal blocked navcells.
        for &((n, d), on_x, on_z) in &events {
            if !(on_x && on_z) {
                continue;
            }
            let cx = p.0 + (i128::from(n) * i128::from(dx) / i128::from(d)) as i64;
            let cz = p.1 + (i128::from(n) * i128::from(dz) / i128::from(d)) as i64;
            let free = |di, dj| self.quadrant_free(cx, cz, di, dj);
            // Quadrant offsets: 0 is the navcell on the positive side, −1 the negative side.
            let ok = if dx != 0 && dz != 0 {
                let (sx, sz) = (i64::from(dx > 0) - 1, i64::from(dz > 0) - 1);
                // Entering (sx, sz) from the opposite quadrant: one side quadrant must be free.
                free(sx, -1 - sz) || free(-1 - sx, sz)
            } else if dx != 0 {
                (free(-1, 0) && free(0, 0)) || (free(-1, -1) && free(0, -1))
            } else {
                (free(0, -1) && free(0, 0)) || (free(-1, -1) && free(-1, 0))
            };
            if !ok {
                return false;
            }
        }
        true
    }

    /// The convex corners (exactly one of the four navcells around them blocked), in half-navcell
    /// units, inside the ellipse `|v − s| + |v − g| ≤ bound`.
    fn corners_within(&self, s: (i64, i64), g: (i64, i64), bound: f64) -> Vec<(i64, i64)> {
        let mut out = Vec::new();
        for cz in 0..=self.height {
            for cx in 0..=self.width {
                let blocked = [(-1, -1), (0, -1), (-1, 0), (0, 0)].iter().filter(|&&(di, dj)| self.is_blocked(cx + di, cz + dj)).count();
                let v = (2 * cx, 2 * cz);
                if blocked == 1 && dist(v, s) + dist(v, g) <= bound + 1e-6 {
                    out.push(v);
                }
            }
        }
        out
    }

    /// The length of the shortest any-angle path from `s` to `g` (half-navcell units in, navcells
    /// out), considering only vertices within `bound` navcells by way of both ends; `None` when
    /// there is no such path.
    pub fn shortest(&self, s: (i64, i64), g: (i64, i64), bound_cells: f64) -> Option<f64> {
        let bound = bound_cells * 2.0;
        let mut verts = vec![s, g];
        verts.extend(self.corners_within(s, g, bound));
        let n = verts.len();
        let mut best = vec![f64::INFINITY; n];
        let mut closed = vec![false; n];
        let mut open = BinaryHeap::new();
        best[0] = 0.0;
        open.push(Entry { f: dist(s, g), g: 0.0, v: 0 });
        while let Some(Entry { g: gu, v: u, .. }) = open.pop() {
            if closed[u] || gu > best[u] {
                continue;
            }
            if u == 1 {
                return Some(gu / 2.0);
            }
            closed[u] = true;
            for v in 0..n {
                if closed[v] {
                    continue;
                }
                let gv = gu + dist(verts[u], verts[v]);
                if gv < best[v] && gv + dist(verts[v], g) <= bound + 1e-6 && self.visible(verts[u], verts[v]) {
                    best[v] = gv;
                    open.push(Entry { f: gv + dist(verts[v], g), g: gv, v });
                }
            }
        }
        None
    }
}

/// Euclidean distance between two points.
pub fn dist(a: (i64, i64), b: (i64, i64)) -> f64 {
    let (dx, dz) = ((b.0 - a.0) as f64, (b.1 - a.1) as f64);
    (dx * dx + dz * dz).sqrt()
}

/// An open-list entry, lowest `f` first, ties to the lower vertex index.
#[derive(Clone, Copy, Debug)]
struct Entry {
    f: f64,
    g: f64,
    v: usize,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        other.f.total_cmp(&self.f).then_with(|| other.v.cmp(&self.v))
    }
}

/// The oracle's grid of one class of a pass map (navcell size 1 is assumed by [`point`]).
pub fn from_pass_map(map: &pathing::PassMap) -> Grid {
    let (width, height) = (i64::from(map.width()), i64::from(map.height()));
    let mut blocked = Vec::with_capacity((width * height) as usize);
    for j in 0..height {
        for i in 0..width {
            blocked.push(!map.is_passable(pathing::Navcell::new(i as u16, j as u16)));
        }
    }
    Grid { width, height, blocked }
}

/// A world point on a map with 1 m navcells in half-navcell units; `None` off the half-metre lattice.
pub fn point(p: pathing::WorldPos) -> Option<(i64, i64)> {
    let half = pathing::Fixed::ONE.to_bits() / 2;
    let (x, z) = (p.x.to_bits(), p.z.to_bits());
    (x % half == 0 && z % half == 0).then_some((x / half, z / half))
}

/// The length of a polyline in metres.
pub fn length(points: &[pathing::WorldPos]) -> f64 {
    points
        .windows(2)
        .map(|w| {
            let (dx, dz) = ((w[1].x - w[0].x).to_num::<f64>(), (w[1].z - w[0].z).to_num::<f64>());
            (dx * dx + dz * dz).sqrt()
        })
        .sum()
}

/// The centre of a navcell of a map with 1 m navcells.
pub fn centre(c: pathing::Navcell) -> pathing::WorldPos {
    let half = pathing::Fixed::ONE / 2;
    pathing::WorldPos::new(pathing::Fixed::from_num(c.i) + half, pathing::Fixed::from_num(c.j) + half)
}

/// The path the simulation gives a unit standing on `start`'s centre and ordered to `goal`'s
/// centre: [`pathing::find_path`], then [`pathing::smoothing::string_pull`] over the turning
/// points' centres. `None` unless the search completes.
pub fn smoothed(
    nav: &pathing::ClassNav,
    start: pathing::Navcell,
    goal: pathing::Navcell,
    scratch: &mut pathing::SearchScratch,
    path: &mut pathing::Path,
) -> Option<Vec<pathing::WorldPos>> {
    let target = pathing::Goal::navcell_center(goal.i, goal.j, pathing::Fixed::ONE);
    let outcome = pathing::find_path(nav, start, &target, &pathing::SearchLimits::UNLIMITED, scratch, path);
    if outcome.status != pathing::PathStatus::Complete {
        return None;
    }
    let points: Vec<pathing::WorldPos> = path.waypoints().iter().map(|&c| centre(c)).collect();
    Some(pathing::smoothing::string_pull(nav.pass_map(), &points))
}

/// The string pulling rule before stretch points: the forward walk over the turning points only,
/// kept to measure what the stretch points gain.
pub fn pull_turning_points_only(map: &pathing::PassMap, points: &[pathing::WorldPos]) -> Vec<pathing::WorldPos> {
    if points.len() < 3 {
        return points.to_vec();
    }
    let mut out = vec![points[0]];
    let mut anchor = 0;
    while anchor < points.len() - 1 {
        let mut next = anchor + 1;
        while next + 1 < points.len() && pathing::collide::segment_clear(map, points[anchor], points[next + 1]) {
            next += 1;
        }
        out.push(points[next]);
        anchor = next;
    }
    out
}
