//! Landmark distances: a sharper, still exact, heuristic for the long-range searches.
//!
//! The octile distance ignores walls, so on maps of rooms, corridors and dead ends a search expands
//! whole regions that lie "towards" the goal but lead nowhere. A [`Landmarks`] table stores the
//! shortest-path distance from a few chosen navcells (the landmarks) to every navcell. For any
//! landmark `L`, the triangle inequality gives `d(n, g) ≥ |d(L, n) − d(L, g)|`, a lower bound on
//! the true remaining cost that sees the walls ("differential heuristic"). The search takes the
//! largest of these bounds and the octile distance.
//!
//! Exactness. The searches close every node once, so their heuristic must be consistent, not only
//! admissible: `h(n) ≤ c(n, m) + h(m)` for every step. Rounding exact distances down to a storage
//! unit would break that by up to one unit per step. So the table is built in a *coarser metric*
//! instead: a straight step costs `STRAIGHT >> shift` and a diagonal step `DIAGONAL >> shift`
//! (rounded down), and distances in that metric are stored exactly as `u32`. Each coarse step cost
//! times `2^shift` is at most the fine one, so every coarse distance times `2^shift` is at most the
//! fine distance, and `|D(n) − D(g)|` changes by at most the coarse step cost across a step. Both
//! bounds therefore hold exactly, with integer arithmetic only, and the maximum of consistent
//! heuristics is consistent. With `shift = 20` a straight step is 1024 units and a diagonal 1448,
//! 1.0e-4 below √2 × 1024, so the bound gives away almost nothing.
//!
//! Goals that are regions use, per landmark, the interval `[lo, hi]` of its distances over the
//! goal's navcells: `d(n, G) ≥ dist(D(n), [lo, hi])`, which is consistent for the same reason.
//!
//! The table describes the map it was built from. Blocking navcells later only lengthens true
//! distances, so the bound stays a consistent lower bound; *opening* navcells can shorten them, and
//! the table must then be rebuilt before it is used again (see [`Landmarks::build`]).
//!
//! Landmarks are chosen farthest-first, deterministically: the first is the navcell farthest from
//! the lowest-indexed navcell of the largest connected area, each next one the navcell whose
//! distance to the nearest landmark so far is largest (lowest index on ties). Smaller connected
//! areas get no landmark; searches there fall back to the octile distance.

use crate::grid::cost::{DIAGONAL, STRAIGHT};
use crate::grid::navcell::Navcell;
use crate::grid::pass_map::PassMap;
use crate::search::goal::GoalRaster;

/// Distance of a navcell no landmark path reaches (impassable, or in another connected area).
pub const UNREACHED: u32 = u32::MAX;

/// The most landmarks a table may hold.
pub const MAX_LANDMARKS: usize = 32;

/// Shortest-path distances from a few landmarks to every navcell of one [`PassMap`], for the
/// landmark heuristic of [`crate::find_path_jps`] and [`crate::find_path_astar`]. Built once per map
/// and class; read-only afterwards. Derived data: never hashed or serialized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Landmarks {
    /// `[Units: navcells]`
    width: u32,
    /// `[Units: navcells]`
    height: u32,
    /// Fine costs are coarse costs times `2^shift`.
    shift: u32,
    points: Vec<Navcell>,
    /// Navcell-major: the distances of navcell `j * width + i` are
    /// `dist[(j * width + i) * count ..][..count]`, in coarse units, [`UNREACHED`] when unreached.
    dist: Vec<u32>,
}

impl Landmarks {
    /// Chooses `count` landmarks (at most [`MAX_LANDMARKS`], fewer when the largest connected area
    /// has fewer navcells) on `map` and computes their distances to every navcell: `count + 1`
    /// Dijkstra searches over the map's connected area, each linear in its navcells.
    ///
    /// The table must be rebuilt after navcells of `map` become passable.
    pub fn build(map: &PassMap, count: usize) -> Self {
        let (width, height) = (map.width(), map.height());
        let cells = width as usize * height as usize;
        // The coarse step costs must keep the longest possible distance (every navcell visited
        // once, diagonally) below `UNREACHED`.
        let mut shift = 20;
        while (cells as u64 + 1) * (DIAGONAL >> shift) >= u64::from(UNREACHED) {
            shift += 1;
        }
        let mut grid = Dijkstra::new(map, (STRAIGHT >> shift) as u32, (DIAGONAL >> shift) as u32);
        let count = count.min(MAX_LANDMARKS);
        let mut points = Vec::with_capacity(count);
        let mut dist = vec![UNREACHED; cells * count];
        if let Some(seed) = grid.largest_area_seed() {
            // `nearest[c]`: distance from navcell c to the nearest landmark so far (the seed at first).
            let mut nearest = grid.run(seed).to_vec();
            for k in 0..count {
                let Some(far) = farthest(&nearest) else { break };
                if k > 0 && nearest[far] == 0 {
                    break; // every navcell of the area is a landmark already
                }
                let stride = width as usize + 2;
                let from = grid.run(far);
                for c in 0..cells {
                    let p = (c / width as usize + 1) * stride + c % width as usize + 1;
                    let d = from[p];
                    dist[c * count + k] = d;
                    nearest[p] = if k == 0 { d } else { nearest[p].min(d) };
                }
                let (i, j) = grid.unpad(far);
                points.push(Navcell::new(i as u16, j as u16));
            }
        }
        // Keep only the landmarks found (a tiny area may hold fewer than asked).
        let found = points.len();
        if found < count {
            let mut packed = vec![UNREACHED; cells * found];
            for c in 0..cells {
                packed[c * found..(c + 1) * found].copy_from_slice(&dist[c * count..c * count + found]);
            }
            dist = packed;
        }
        Self { width, height, shift, points, dist }
    }

    /// The landmarks, in the order they were chosen.
    pub fn points(&self) -> &[Navcell] {
        &self.points
    }

    /// Width of the map the table was built for. `[Units: navcells]`
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height of the map the table was built for. `[Units: navcells]`
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Bytes held by the distances.
    pub fn memory_bytes(&self) -> usize {
        self.dist.len() * std::mem::size_of::<u32>()
    }

    /// The lower bound the table gives on the shortest-path cost from `landmark` to `cell`, in the
    /// fine units of [`crate::grid::cost`]; `None` when the landmark does not reach the navcell, and when
    /// there is no such landmark or navcell.
    pub fn distance_bound(&self, landmark: usize, cell: Navcell) -> Option<u64> {
        if landmark >= self.points.len() || u32::from(cell.i) >= self.width || u32::from(cell.j) >= self.height {
            return None;
        }
        let c = usize::from(cell.j) * self.width as usize + usize::from(cell.i);
        let d = self.dist[c * self.points.len() + landmark];
        (d != UNREACHED).then(|| u64::from(d) << self.shift)
    }

    #[inline(always)]
    fn row(&self, i: i32, j: i32) -> &[u32] {
        let n = self.points.len();
        let c = j as usize * self.width as usize + i as usize;
        &self.dist[c * n..c * n + n]
    }
}

/// The most navcells in the bounding box of a region goal whose distances a query reads to bound
/// it (a 64 × 64 box, a few microseconds); larger goals go without landmarks, where the octile
/// distance to a large goal is usually close anyway.
const MAX_GOAL_CELLS: u64 = 1 << 12;

/// One query's use of a [`Landmarks`] table: per landmark, the interval `[lo, hi]` of its
/// distances over the goal's navcells.
///
/// Every landmark lies in the same connected area (the largest), so a navcell's distances are
/// either all finite or all [`UNREACHED`], and so are a goal navcell's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LandmarkBound<'a> {
    table: &'a Landmarks,
    lo: [u32; MAX_LANDMARKS],
    hi: [u32; MAX_LANDMARKS],
}

impl<'a> LandmarkBound<'a> {
    /// The bound for the goal of `raster`, which must have been reset for this query; `None` when
    /// it would bound nothing: no landmarks, an inverted or very large goal, or a goal with no
    /// navcell in the landmarks' area.
    pub(crate) fn new(table: &'a Landmarks, raster: &mut GoalRaster) -> Option<Self> {
        let n = table.points.len();
        let (i0, j0, i1, j1) = raster.bbox();
        let (i0, j0) = (i0.max(0), j0.max(0));
        let (i1, j1) = (i1.min(table.width as i32 - 1), j1.min(table.height as i32 - 1));
        let small = i0 <= i1 && j0 <= j1 && (i1 - i0 + 1) as u64 * (j1 - j0 + 1) as u64 <= MAX_GOAL_CELLS;
        if n == 0 || raster.is_inverted() || raster.is_empty() || !small {
            return None;
        }
        let mut lo = [UNREACHED; MAX_LANDMARKS];
        let mut hi = [0u32; MAX_LANDMARKS];
        for j in j0..=j1 {
            let line = raster.row(j);
            for span in line.spans {
                for i in span.lo.max(i0)..=span.hi.min(i1) {
                    let row = table.row(i, j);
                    if row[0] == UNREACHED {
                        continue;
                    }
                    for (k, &d) in row.iter().enumerate() {
                        lo[k] = lo[k].min(d);
                        hi[k] = hi[k].max(d);
                    }
                }
            }
        }
        (lo[0] != UNREACHED).then_some(Self { table, lo, hi })
    }

    /// The lower bound on the cost from `(i, j)` (a navcell of the map) to the goal, in fine units.
    #[inline]
    pub(crate) fn bound(&self, i: i32, j: i32) -> u64 {
        let row = self.table.row(i, j);
        // Outside the landmarks' area the goal cannot be reached at all; the bound says nothing.
        if row[0] == UNREACHED {
            return 0;
        }
        let mut best = 0u32;
        for ((&d, &lo), &hi) in row.iter().zip(&self.lo).zip(&self.hi) {
            // `lo ≤ hi`, so at most one of the two differences is non-zero.
            best = best.max(lo.saturating_sub(d) | d.saturating_sub(hi));
        }
        u64::from(best) << self.table.shift
    }
}

/// Index of the largest finite entry (lowest index on ties), `None` when all are unreached.
fn farthest(dist: &[u32]) -> Option<usize> {
    let mut best: Option<(u32, usize)> = None;
    for (c, &d) in dist.iter().enumerate() {
        if d != UNREACHED && best.is_none_or(|(b, _)| d > b) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// The eight moves, in the bit order of [`Dijkstra::moves`]: straight ones first.
const MOVES: [(i64, i64); 8] = [(1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)];

/// Whole-map Dijkstra in the coarse metric over a padded copy of the map (a border of impassable
/// navcells, so neighbours never need bounds checks). Two step costs only, so one FIFO queue per
/// cost stays sorted and replaces the heap.
struct Dijkstra {
    stride: usize,
    straight: u32,
    diagonal: u32,
    passable: Vec<bool>,
    /// Per padded navcell: bit `k` set when move `k` of [`MOVES`] is legal from it.
    moves: Vec<u8>,
    dist: Vec<u32>,
    /// `(distance, padded position)`; positions are `usize` because a 65535 × 65535 map's padded
    /// positions pass `u32::MAX`.
    straight_queue: Vec<(u32, usize)>,
    diagonal_queue: Vec<(u32, usize)>,
}

impl Dijkstra {
    fn new(map: &PassMap, straight: u32, diagonal: u32) -> Self {
        let stride = map.width() as usize + 2;
        let rows = map.height() as usize + 2;
        let mut moves = vec![0u8; stride * rows];
        let mut passable = vec![false; stride * rows];
        for j in 0..i64::from(map.height()) {
            for i in 0..i64::from(map.width()) {
                if !map.passable_padded(i, j) {
                    continue;
                }
                let mut m = 0u8;
                for (k, &(dx, dy)) in MOVES.iter().enumerate() {
                    let legal = map.passable_padded(i + dx, j + dy)
                        && (dx == 0 || dy == 0 || (map.passable_padded(i + dx, j) && map.passable_padded(i, j + dy)));
                    m |= u8::from(legal) << k;
                }
                let p = (j as usize + 1) * stride + i as usize + 1;
                moves[p] = m;
                passable[p] = true;
            }
        }
        Self {
            stride,
            straight,
            diagonal,
            passable,
            moves,
            dist: vec![UNREACHED; stride * rows],
            straight_queue: Vec::new(),
            diagonal_queue: Vec::new(),
        }
    }

    fn unpad(&self, p: usize) -> (usize, usize) {
        (p % self.stride - 1, p / self.stride - 1)
    }

    /// The padded offset of move `k`.
    fn offset(&self, k: usize) -> isize {
        let (dx, dy) = MOVES[k];
        dy as isize * self.stride as isize + dx as isize
    }

    /// The lowest padded index of the largest connected area (lowest index on equal sizes), by
    /// flood fills from every not yet labelled passable navcell in index order.
    fn largest_area_seed(&mut self) -> Option<usize> {
        let mut seen = vec![false; self.passable.len()];
        let mut stack = Vec::new();
        let mut best: Option<(usize, usize)> = None;
        for p in 0..self.passable.len() {
            if !self.passable[p] || seen[p] {
                continue;
            }
            seen[p] = true;
            stack.push(p);
            let mut size = 0;
            while let Some(c) = stack.pop() {
                size += 1;
                for k in 0..8 {
                    if self.moves[c] >> k & 1 != 0 {
                        let n = c.wrapping_add_signed(self.offset(k));
                        if !seen[n] {
                            seen[n] = true;
                            stack.push(n);
                        }
                    }
                }
            }
            if best.is_none_or(|(b, _)| size > b) {
                best = Some((size, p));
            }
        }
        best.map(|(_, p)| p)
    }

    /// Distances from padded navcell `source` to every padded navcell ([`UNREACHED`] where none).
    fn run(&mut self, source: usize) -> &[u32] {
        self.dist.fill(UNREACHED);
        self.straight_queue.clear();
        self.diagonal_queue.clear();
        self.dist[source] = 0;
        self.straight_queue.push((0, source));
        let offsets: [isize; 8] = std::array::from_fn(|k| self.offset(k));
        let (mut sh, mut dh) = (0, 0);
        loop {
            let s = self.straight_queue.get(sh).copied();
            let d = self.diagonal_queue.get(dh).copied();
            let (cost, at) = match (s, d) {
                (Some(s), Some(d)) if s.0 <= d.0 => {
                    sh += 1;
                    s
                }
                (Some(s), None) => {
                    sh += 1;
                    s
                }
                (_, Some(d)) => {
                    dh += 1;
                    d
                }
                (None, None) => break,
            };
            if self.dist[at] != cost {
                continue; // stale: a cheaper entry settled this navcell already
            }
            let m = self.moves[at];
            for (k, &off) in offsets.iter().enumerate() {
                if m >> k & 1 == 0 {
                    continue;
                }
                let n = at.wrapping_add_signed(off);
                let c = cost + if k < 4 { self.straight } else { self.diagonal };
                if c < self.dist[n] {
                    self.dist[n] = c;
                    if k < 4 {
                        self.straight_queue.push((c, n));
                    } else {
                        self.diagonal_queue.push((c, n));
                    }
                }
            }
        }
        &self.dist
    }
}
