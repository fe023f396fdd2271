//! The hierarchical reachability layer: chunks, their connected regions, the region graph and global
//! component ids, for one passability class.
//!
//! The grid is cut into chunks of [`CHUNK_SIZE`] × [`CHUNK_SIZE`] navcells (the last row and column
//! of chunks may be smaller). Inside a chunk, passable navcells are grouped into *regions*: the
//! 4-connected components of the chunk (octile moves without corner cutting connect exactly the
//! navcells that 4-connected moves do, so this is the reachability that matters). Regions are
//! numbered 1, 2, ... within their chunk in the order their first navcell appears in the chunk's
//! raster order (rows south to north, each west to east).
//!
//! Two regions of neighbouring chunks are joined by an edge when a passable navcell of one faces a
//! passable navcell of the other across the chunk border. The connected components of that region
//! graph are the grid's components; they are numbered 0, 1, ... in the order of their first region,
//! regions ordered by (chunk index `cy * chunks_x + cx`, local id). Every number here depends only
//! on the passability, never on the order of updates, so an incrementally updated hierarchy equals
//! a rebuilt one.
//!
//! Queries answer in time that grows with the chunks they touch: reachability is two look-ups, and
//! nearest-navcell queries visit rings of chunks around their target until no closer navcell can
//! exist.

use crate::grid::navcell::{CellRect, Navcell};
use crate::grid::pass_map::PassMap;

/// The root of `x` in a union-find forest, halving paths on the way.
fn find16(parent: &mut [u16], mut x: u16) -> u16 {
    while parent[usize::from(x)] != x {
        parent[usize::from(x)] = parent[usize::from(parent[usize::from(x)])];
        x = parent[usize::from(x)];
    }
    x
}

/// Side of a chunk. `[Units: navcells]`
///
/// 64 keeps a chunk's labels in 8 KiB (cache-resident while one chunk is relabelled) and makes a
/// 1024 × 1024 grid 256 chunks, so the region graph stays small enough to renumber whole on every
/// update; 0 A.D. uses 96 with the same reasoning.
pub const CHUNK_SIZE: u32 = 64;

/// A region: its chunk's index (`cy * chunks_x + cx`) and its local id (from 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RegionId {
    /// Chunk index, `cy * chunks_x + cx`.
    pub chunk: u32,
    /// Local id within the chunk, from 1.
    pub local: u16,
}

/// The regions of one chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Chunk {
    /// Local region id per navcell of the chunk (row-major, chunk width wide); 0 = impassable.
    labels: Vec<u16>,
    n_regions: u16,
    /// Region pairs `(here, east neighbour)` joined across the east border, sorted, unique.
    east_edges: Vec<(u16, u16)>,
    /// Region pairs `(here, north neighbour)` joined across the north border, sorted, unique.
    north_edges: Vec<(u16, u16)>,
}

/// Connected regions and components of one class of a grid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hierarchy {
    /// `[Units: navcells]`
    width: u32,
    /// `[Units: navcells]`
    height: u32,
    /// Chunks across and down.
    chunks_x: u32,
    chunks_y: u32,
    chunks: Vec<Chunk>,
    /// Dense index of each chunk's first region; `offsets[chunks.len()]` is the region count.
    offsets: Vec<u32>,
    /// Component id per region, dense order.
    components: Vec<u32>,
    n_components: u32,
}

impl Hierarchy {
    /// Builds the hierarchy of a map from scratch.
    pub fn build(map: &PassMap) -> Self {
        let chunks_x = map.width().div_ceil(CHUNK_SIZE);
        let chunks_y = map.height().div_ceil(CHUNK_SIZE);
        let empty = Chunk { labels: Vec::new(), n_regions: 0, east_edges: Vec::new(), north_edges: Vec::new() };
        let mut hierarchy = Self {
            width: map.width(),
            height: map.height(),
            chunks_x,
            chunks_y,
            chunks: vec![empty; (chunks_x * chunks_y) as usize],
            offsets: Vec::new(),
            components: Vec::new(),
            n_components: 0,
        };
        hierarchy.update_rect(map, CellRect::full(map.width(), map.height()));
        hierarchy
    }

    /// Brings the hierarchy up to date after the navcells `rect` of the map
    /// changed: relabels the chunks that hold them, re-reads the borders of those chunks, and
    /// renumbers the components over the region graph (a pass over regions and edges, not over
    /// navcells).
    ///
    /// # Panics
    /// When the map's size differs from the hierarchy's.
    pub fn update_rect(&mut self, map: &PassMap, rect: CellRect) {
        let CellRect { i0, j0, i1, j1 } = rect;
        assert!(map.width() == self.width && map.height() == self.height, "map size changed under a Hierarchy");
        let (i1, j1) = (i1.min(self.width), j1.min(self.height));
        if i0 >= i1 || j0 >= j1 {
            return;
        }
        let (cx0, cy0) = (i0 / CHUNK_SIZE, j0 / CHUNK_SIZE);
        let (cx1, cy1) = ((i1 - 1) / CHUNK_SIZE, (j1 - 1) / CHUNK_SIZE);
        let chunks: Vec<(u32, u32)> = (cy0..=cy1).flat_map(|cy| (cx0..=cx1).map(move |cx| (cx, cy))).collect();
        self.update_chunks(map, &chunks);
    }

    /// Brings the hierarchy up to date after the listed navcells changed (each chunk holding one is
    /// relabelled once, and components renumbered once).
    ///
    /// # Panics
    /// When the map's size differs from the hierarchy's.
    pub fn update_cells(&mut self, map: &PassMap, cells: &[Navcell]) {
        assert!(map.width() == self.width && map.height() == self.height, "map size changed under a Hierarchy");
        let mut chunks: Vec<(u32, u32)> = cells
            .iter()
            .filter(|c| u32::from(c.i) < self.width && u32::from(c.j) < self.height)
            .map(|c| (u32::from(c.i) / CHUNK_SIZE, u32::from(c.j) / CHUNK_SIZE))
            .collect();
        chunks.sort_unstable();
        chunks.dedup();
        self.update_chunks(map, &chunks);
    }

    /// Relabels the given chunks, re-reads the borders they touch and renumbers the components.
    fn update_chunks(&mut self, map: &PassMap, chunks: &[(u32, u32)]) {
        if chunks.is_empty() {
            return;
        }
        let mut runs = Vec::new();
        for &(cx, cy) in chunks {
            self.label_chunk(map, cx, cy, &mut runs);
        }
        // Borders of the relabelled chunks: their own east/north borders and their west/south
        // neighbours' east/north borders.
        let mut borders: Vec<(u32, u32)> = chunks
            .iter()
            .flat_map(|&(cx, cy)| [(cx, cy), (cx.wrapping_sub(1), cy), (cx, cy.wrapping_sub(1))])
            .filter(|&(cx, cy)| cx < self.chunks_x && cy < self.chunks_y)
            .collect();
        borders.sort_unstable();
        borders.dedup();
        for (cx, cy) in borders {
            self.read_borders(cx, cy);
        }
        self.renumber_components();
    }

    /// The regions joined to `region` across chunk borders (its edges in the region graph), in
    /// ascending order.
    pub fn neighbors(&self, region: RegionId) -> Vec<RegionId> {
        let chunk = region.chunk;
        let (cx, cy) = (chunk % self.chunks_x, chunk / self.chunks_x);
        let mut out = Vec::new();
        let here = &self.chunks[chunk as usize];
        for &(a, b) in &here.east_edges {
            if a == region.local {
                out.push(RegionId { chunk: chunk + 1, local: b });
            }
        }
        for &(a, b) in &here.north_edges {
            if a == region.local {
                out.push(RegionId { chunk: chunk + self.chunks_x, local: b });
            }
        }
        if cx > 0 {
            for &(a, b) in &self.chunks[chunk as usize - 1].east_edges {
                if b == region.local {
                    out.push(RegionId { chunk: chunk - 1, local: a });
                }
            }
        }
        if cy > 0 {
            for &(a, b) in &self.chunks[(chunk - self.chunks_x) as usize].north_edges {
                if b == region.local {
                    out.push(RegionId { chunk: chunk - self.chunks_x, local: a });
                }
            }
        }
        out.sort_unstable();
        out
    }

    fn chunk_index(&self, cx: u32, cy: u32) -> usize {
        (cy * self.chunks_x + cx) as usize
    }

    /// The navcell rectangle of a chunk: `(i0, j0, width, height)`.
    fn chunk_rect(&self, cx: u32, cy: u32) -> (u32, u32, u32, u32) {
        let (i0, j0) = (cx * CHUNK_SIZE, cy * CHUNK_SIZE);
        (i0, j0, CHUNK_SIZE.min(self.width - i0), CHUNK_SIZE.min(self.height - j0))
    }

    /// Labels the regions of one chunk, numbered in the raster order of their first navcell.
    ///
    /// Works on runs: each chunk row is one 64-bit window of the row bit plane, split into runs of
    /// passable navcells; runs of neighbouring rows that share a column are joined (union-find with
    /// the earlier run as root), and each run's region is its root's. The earliest run of a region
    /// holds its first navcell in raster order, so the numbering is the flood fill's.
    fn label_chunk(&mut self, map: &PassMap, cx: u32, cy: u32, runs: &mut Vec<(u16, u16, u16)>) {
        let (i0, j0, cw, ch) = self.chunk_rect(cx, cy);
        let keep = if cw >= 64 { u64::MAX } else { (1u64 << cw) - 1 };
        runs.clear();
        let mut parent: Vec<u16> = Vec::new();
        let mut prev = 0..0;
        for y in 0..ch {
            let mut bits = map.rows.window_fwd((j0 + y + 1) as usize, (i0 + 1) as usize) & keep;
            let start = runs.len();
            while bits != 0 {
                let x0 = bits.trailing_zeros();
                let len = (!(bits >> x0)).trailing_zeros();
                let x1 = x0 + len;
                bits &= if x1 >= 64 { 0 } else { u64::MAX << x1 };
                let me = runs.len() as u16;
                runs.push((y as u16, x0 as u16, x1 as u16));
                parent.push(me);
                for other in prev.clone() {
                    let (_, a0, a1) = runs[other];
                    if u32::from(a0) < x1 && x0 < u32::from(a1) {
                        let (ra, rb) = (find16(&mut parent, other as u16), find16(&mut parent, me));
                        let (lo, hi) = (ra.min(rb), ra.max(rb));
                        parent[usize::from(hi)] = lo;
                    }
                }
            }
            prev = start..runs.len();
        }
        let mut labels = vec![0u16; (cw * ch) as usize];
        let mut run_label = vec![0u16; runs.len()];
        let mut n_regions = 0u16;
        for r in 0..runs.len() {
            let root = usize::from(find16(&mut parent, r as u16));
            run_label[r] = if root == r {
                n_regions += 1;
                n_regions
            } else {
                run_label[root]
            };
            let (y, x0, x1) = runs[r];
            let at = u32::from(y) * cw;
            labels[(at + u32::from(x0)) as usize..(at + u32::from(x1)) as usize].fill(run_label[r]);
        }
        let idx = self.chunk_index(cx, cy);
        self.chunks[idx].labels = labels;
        self.chunks[idx].n_regions = n_regions;
    }

    /// Re-reads the edges across the east and north borders of one chunk.
    fn read_borders(&mut self, cx: u32, cy: u32) {
        let (_, _, cw, ch) = self.chunk_rect(cx, cy);
        let idx = self.chunk_index(cx, cy);
        let mut east = Vec::new();
        if cx + 1 < self.chunks_x {
            let other = &self.chunks[self.chunk_index(cx + 1, cy)];
            let (_, _, ow, _) = self.chunk_rect(cx + 1, cy);
            for y in 0..ch {
                let a = self.chunks[idx].labels[(y * cw + cw - 1) as usize];
                let b = other.labels[(y * ow) as usize];
                if a != 0 && b != 0 {
                    east.push((a, b));
                }
            }
        }
        let mut north = Vec::new();
        if cy + 1 < self.chunks_y {
            let other = &self.chunks[self.chunk_index(cx, cy + 1)];
            for x in 0..cw {
                let a = self.chunks[idx].labels[((ch - 1) * cw + x) as usize];
                let b = other.labels[x as usize];
                if a != 0 && b != 0 {
                    north.push((a, b));
                }
            }
        }
        east.sort_unstable();
        east.dedup();
        north.sort_unstable();
        north.dedup();
        self.chunks[idx].east_edges = east;
        self.chunks[idx].north_edges = north;
    }

    /// Numbers the components of the region graph (union-find, then ids in region order).
    fn renumber_components(&mut self) {
        self.offsets.clear();
        let mut total = 0u32;
        for chunk in &self.chunks {
            self.offsets.push(total);
            total += u32::from(chunk.n_regions);
        }
        self.offsets.push(total);
        let mut parent: Vec<u32> = (0..total).collect();
        fn find(parent: &mut [u32], mut x: u32) -> u32 {
            while parent[x as usize] != x {
                parent[x as usize] = parent[parent[x as usize] as usize];
                x = parent[x as usize];
            }
            x
        }
        for cy in 0..self.chunks_y {
            for cx in 0..self.chunks_x {
                let idx = self.chunk_index(cx, cy);
                let here = self.offsets[idx];
                let pairs = [(1, &self.chunks[idx].east_edges), (self.chunks_x as usize, &self.chunks[idx].north_edges)];
                for (step, edges) in pairs {
                    for &(a, b) in edges {
                        let there = self.offsets[idx + step];
                        let (ra, rb) = (find(&mut parent, here + u32::from(a) - 1), find(&mut parent, there + u32::from(b) - 1));
                        if ra != rb {
                            let (lo, hi) = (ra.min(rb), ra.max(rb));
                            parent[hi as usize] = lo;
                        }
                    }
                }
            }
        }
        // Roots are the lowest dense index of their component, so numbering roots in dense order
        // numbers components by their first region.
        self.components.clear();
        self.components.resize(total as usize, 0);
        let mut next = 0u32;
        for r in 0..total {
            let root = find(&mut parent, r);
            self.components[r as usize] = if root == r {
                next += 1;
                next - 1
            } else {
                self.components[root as usize]
            };
        }
        self.n_components = next;
    }

    /// Width in navcells.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in navcells.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Number of components (connected areas of passable navcells).
    pub fn n_components(&self) -> u32 {
        self.n_components
    }

    /// Number of regions over all chunks.
    pub fn n_regions(&self) -> u32 {
        self.offsets.last().copied().unwrap_or(0)
    }

    /// Chunks across and down (each [`CHUNK_SIZE`] navcells square but the last row and column).
    pub fn chunks(&self) -> (u32, u32) {
        (self.chunks_x, self.chunks_y)
    }

    /// Each chunk's number of regions, chunks in row order (`cy * chunks_x + cx`).
    pub fn chunk_region_counts(&self) -> impl ExactSizeIterator<Item = u16> + '_ {
        self.chunks.iter().map(|c| c.n_regions)
    }

    /// The component of every region, in dense order: chunk by chunk in row order, each chunk's
    /// regions by local id (from 1).
    pub fn region_components(&self) -> &[u32] {
        &self.components
    }

    /// The region of a navcell, `None` when it is impassable or off the grid.
    pub fn region(&self, cell: Navcell) -> Option<RegionId> {
        let (i, j) = (u32::from(cell.i), u32::from(cell.j));
        if i >= self.width || j >= self.height {
            return None;
        }
        let (cx, cy) = (i / CHUNK_SIZE, j / CHUNK_SIZE);
        let (i0, j0, cw, _) = self.chunk_rect(cx, cy);
        let chunk = self.chunk_index(cx, cy);
        let local = self.chunks[chunk].labels[((j - j0) * cw + (i - i0)) as usize];
        (local != 0).then_some(RegionId { chunk: chunk as u32, local })
    }

    /// The component of a navcell, `None` when it is impassable or off the grid.
    pub fn component(&self, cell: Navcell) -> Option<u32> {
        self.region(cell).map(|r| self.region_component(r))
    }

    fn region_component(&self, region: RegionId) -> u32 {
        self.components[(self.offsets[region.chunk as usize] + u32::from(region.local) - 1) as usize]
    }

    /// Whether `to` can be reached from `from` (both passable and in one component).
    pub fn is_reachable(&self, from: Navcell, to: Navcell) -> bool {
        matches!((self.component(from), self.component(to)), (Some(a), Some(b)) if a == b)
    }

    /// The chunks on the grid at Chebyshev distance `ring` from chunk `(tcx, tcy)`, row by row.
    fn ring_chunks(&self, tcx: i64, tcy: i64, ring: i64) -> impl Iterator<Item = (u32, u32)> + '_ {
        let (nx, ny) = (i64::from(self.chunks_x), i64::from(self.chunks_y));
        (tcy - ring..=tcy + ring)
            .flat_map(move |cy| (tcx - ring..=tcx + ring).map(move |cx| (cx, cy)))
            .filter(move |&(cx, cy)| ((cy - tcy).abs() == ring || (cx - tcx).abs() == ring) && cx >= 0 && cy >= 0 && cx < nx && cy < ny)
            .map(|(cx, cy)| (cx as u32, cy as u32))
    }

    /// Whether any region of a chunk belongs to the component (`None`: any passable region).
    fn chunk_has(&self, chunk: usize, component: Option<u32>) -> bool {
        let regions = &self.components[self.offsets[chunk] as usize..self.offsets[chunk + 1] as usize];
        match component {
            None => !regions.is_empty(),
            Some(c) => regions.contains(&c),
        }
    }

    /// The navcell nearest to `target` that is passable and, when `component` is given, in that
    /// component. Distance is the squared Euclidean distance between navcell indices; among equally
    /// near navcells the lowest `(j, i)` wins. `max_distance` bounds the search (navcells).
    ///
    /// Chunks are visited in rings around the target's chunk; the search stops when the next ring
    /// cannot hold anything nearer than the best found.
    pub fn nearest(&self, target: Navcell, component: Option<u32>, max_distance: u32) -> Option<Navcell> {
        let (ti, tj) = (i64::from(target.i), i64::from(target.j));
        let (tcx, tcy) = ((target.i as u32 / CHUNK_SIZE) as i64, (target.j as u32 / CHUNK_SIZE) as i64);
        // No two navcells are 2^17 apart, so larger bounds mean "anywhere" (and cannot overflow).
        let max_distance = i64::from(max_distance.min(1 << 17));
        let max_d2 = max_distance * max_distance;
        let mut best: Option<(i64, u16, u16)> = None;
        let max_ring = i64::from(self.chunks_x.max(self.chunks_y));
        for ring in 0..=max_ring {
            // Any navcell of a chunk in this ring is at least this far along some axis.
            let ring_bound = if ring == 0 { 0 } else { (ring - 1) * i64::from(CHUNK_SIZE) + 1 };
            let limit = best.map_or(max_d2, |b| b.0.min(max_d2));
            if ring_bound * ring_bound > limit {
                break;
            }
            for (cx, cy) in self.ring_chunks(tcx, tcy, ring) {
                let chunk = self.chunk_index(cx, cy);
                if !self.chunk_has(chunk, component) {
                    continue;
                }
                let (i0, j0, cw, ch) = self.chunk_rect(cx, cy);
                let (i0, j0, cw, ch) = (i64::from(i0), i64::from(j0), i64::from(cw), i64::from(ch));
                // Squared distance from the target to the chunk's rectangle.
                let dx = (i0 - ti).max(ti - (i0 + cw - 1)).max(0);
                let dy = (j0 - tj).max(tj - (j0 + ch - 1)).max(0);
                let limit = best.map_or(max_d2, |b| b.0.min(max_d2));
                if dx * dx + dy * dy > limit {
                    continue;
                }
                let labels = &self.chunks[chunk].labels;
                for y in 0..ch {
                    for x in 0..cw {
                        let local = labels[(y * cw + x) as usize];
                        if local == 0 {
                            continue;
                        }
                        if let Some(c) = component {
                            let region = RegionId { chunk: chunk as u32, local };
                            if self.region_component(region) != c {
                                continue;
                            }
                        }
                        let (i, j) = (i0 + x, j0 + y);
                        let d2 = (i - ti) * (i - ti) + (j - tj) * (j - tj);
                        let key = (d2, j as u16, i as u16);
                        if d2 <= max_d2 && best.is_none_or(|b| key < b) {
                            best = Some(key);
                        }
                    }
                }
            }
        }
        best.map(|(_, j, i)| Navcell::new(i, j))
    }

    /// Whether any navcell `(i, j)` with `lo ≤ i ≤ hi` is in the component.
    pub(crate) fn any_in_row(&self, j: u32, lo: u32, hi: u32, component: u32) -> bool {
        let hi = hi.min(self.width - 1);
        if j >= self.height || lo > hi {
            return false;
        }
        let cy = j / CHUNK_SIZE;
        for cx in lo / CHUNK_SIZE..=hi / CHUNK_SIZE {
            let chunk = self.chunk_index(cx, cy);
            if !self.chunk_has(chunk, Some(component)) {
                continue;
            }
            let (i0, j0, cw, _) = self.chunk_rect(cx, cy);
            let row = &self.chunks[chunk].labels[((j - j0) * cw) as usize..((j - j0 + 1) * cw) as usize];
            let (a, b) = (lo.max(i0) - i0, hi.min(i0 + cw - 1) - i0);
            for &local in &row[a as usize..=b as usize] {
                if local != 0 && self.region_component(RegionId { chunk: chunk as u32, local }) == component {
                    return true;
                }
            }
        }
        false
    }

    /// Whether any navcell of the component satisfies `wanted`, visiting chunks in rings around
    /// `near` so that a navcell close to it is found first.
    pub(crate) fn any_in_component(&self, near: Navcell, component: u32, mut wanted: impl FnMut(i32, i32) -> bool) -> bool {
        let (tcx, tcy) = (i64::from(near.i) / i64::from(CHUNK_SIZE), i64::from(near.j) / i64::from(CHUNK_SIZE));
        let max_ring = i64::from(self.chunks_x.max(self.chunks_y));
        for ring in 0..=max_ring {
            for (cx, cy) in self.ring_chunks(tcx, tcy, ring) {
                let chunk = self.chunk_index(cx, cy);
                if !self.chunk_has(chunk, Some(component)) {
                    continue;
                }
                let (i0, j0, cw, _) = self.chunk_rect(cx, cy);
                for (k, &local) in self.chunks[chunk].labels.iter().enumerate() {
                    if local != 0
                        && self.region_component(RegionId { chunk: chunk as u32, local }) == component
                        && wanted((i0 + k as u32 % cw) as i32, (j0 + k as u32 / cw) as i32)
                    {
                        return true;
                    }
                }
            }
        }
        false
    }

    /// An ASCII picture of the components, north row first: `#` impassable, otherwise the
    /// component id as a letter (`a` for 0, wrapping after `z`). For tests and debugging.
    pub fn render_components(&self) -> String {
        let mut out = String::with_capacity(((self.width + 1) * self.height) as usize);
        for j in (0..self.height).rev() {
            for i in 0..self.width {
                out.push(match self.component(Navcell::new(i as u16, j as u16)) {
                    Some(c) => char::from(b'a' + (c % 26) as u8),
                    None => '#',
                });
            }
            out.push('\n');
        }
        out
    }

    /// Checks the stored data against the map: labels are the 4-connected components of each chunk
    /// in raster order, and the edges are exactly the facing passable pairs.
    ///
    /// # Errors
    /// The first disagreement.
    pub fn check_invariants(&self, map: &PassMap) -> Result<(), String> {
        let rebuilt = Hierarchy::build(map);
        if &rebuilt != self { Err("hierarchy differs from a rebuild of its map".to_string()) } else { Ok(()) }
    }
}

#[cfg(test)]
mod tests;
