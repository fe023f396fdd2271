//! Per-component digest trees: the incremental state hash and its top-down desync localisation.
//!
//! Every component of the state that can influence the future is summarised by a 32-byte *root*.
//! Large components are cut into *leaves* (grid chunks of [`GRID_CHUNK`]² navcells, entity ranges
//! of [`RANGE_SIZE`] consecutive indices) whose digests are kept between turns and recomputed only
//! where something changed; the root is then a hash over the leaf digests. The turn's hash
//! ([`StateDigest`]) is a hash over the component names and roots.
//!
//! Two peers (or a replay and its re-simulation) that disagree compare top-down: the turn hashes,
//! then the component roots ([`StateDigest::differing_components`]), then the leaves of the differing
//! components ([`locate`]), then only the entities or navcells of the differing leaves.
//!
//! # Conventions
//!
//! All digests are blake3 in derive-key mode; every context string names the format version
//! ([`FORMAT_VERSION`]) and, where there is one, the component, so equal bytes under different
//! components or roles never give equal digests. All integers are fed as fixed-width little endian.
//!
//! | digest | derive-key context | input |
//! | --- | --- | --- |
//! | tree root | `phalanx state v1 {component} tree` | leaf count (u32), then the leaves in order |
//! | grid chunk leaf | `phalanx state v1 {component} chunk` | the chunk's masks (u16) row by row, south row first, west to east; then `cx`, `cy`, `w`, `h` (u32) |
//! | entity range leaf ([`range_digest`]) | `phalanx state v1 {component} range` | range index (u32), then the canonical bytes of the range's state |
//! | turn hash | `phalanx state v1 turn` | turn (u32), component count (u32), then per component: name length in bytes (u32), UTF-8 name, root |
//!
//! Roots are *flat*: one hash over all leaves, so recomputing a root costs O(leaves), about
//! 32 bytes of hashing per leaf (a 1024×1024 grid has 256 chunks: 8 KiB). A binary tree would make
//! it O(log n) but costs more per update for the leaf counts of the reference world (≤ 4096), and a
//! peer localising a desync exchanges a whole leaf list (≤ 128 KiB) once, never per turn.
//!
//! Nothing here panics, whatever the input (except [`range_digest`] on a type bincode cannot encode, as
//! [`encode`](crate::state_hash::encode) does): out-of-range leaf indices are reported, not indexed, and sizes are bounded.

use std::borrow::Cow;
use std::sync::OnceLock;

use pathing::{CellRect, NavGrid};
use serde::{Deserialize, Serialize};

use crate::state_hash::FORMAT_VERSION;

/// A 32-byte blake3 digest.
pub type Digest = [u8; 32];

/// Most leaves a tree holds: every chunk of the largest grid (65535² navcells are 1024² chunks),
/// or the ranges of the first 2^26 entity indices. Larger requests are clamped or refused, so a
/// tree never allocates more than 32 MiB of leaves whatever it is asked.
pub const MAX_LEAVES: u32 = 1 << 20;

/// Side of a grid chunk, in navcells.
pub const GRID_CHUNK: u32 = 64;

/// Number of consecutive entity indices per range leaf.
pub const RANGE_SIZE: u32 = 64;

/// Component name of the digests [`GridDigests::build`] makes.
pub const PASSABILITY_COMPONENT: &str = "passability";

/// A blake3 hasher in derive-key mode with the context `phalanx state v{FORMAT_VERSION} {suffix}`.
fn hasher(suffix: std::fmt::Arguments<'_>) -> blake3::Hasher {
    blake3::Hasher::new_derive_key(&format!("phalanx state v{FORMAT_VERSION} {suffix}"))
}

/// A `usize` count or index as `u32`, saturating (counts here are bounded by [`MAX_LEAVES`]).
fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The leaf digests of one component and their cached root.
///
/// The root is recomputed lazily, on the first [`root`](Self::root) call after a leaf changed
/// (a leaf set to its current value does not count as a change). It is derived state: it is never
/// serialized, and two trees are equal when their components and leaves are.
#[derive(Clone, Debug)]
pub struct DigestTree {
    component: Cow<'static, str>,
    leaves: Vec<Digest>,
    /// The root of `leaves`, empty while dirty. A `OnceLock` rather than a `Cell` keeps the tree `Sync`.
    root: OnceLock<Digest>,
    /// The hasher of the root's context, made at the first root, so each root after it saves
    /// hashing the context again (a format and two blake3 compressions).
    root_hasher: OnceLock<blake3::Hasher>,
}

impl PartialEq for DigestTree {
    fn eq(&self, other: &Self) -> bool {
        self.component == other.component && self.leaves == other.leaves
    }
}

impl Eq for DigestTree {}

impl DigestTree {
    /// A tree of `n_leaves` all-zero leaves (clamped to [`MAX_LEAVES`]) for a component.
    pub fn new(component: impl Into<Cow<'static, str>>, n_leaves: u32) -> Self {
        let n = n_leaves.min(MAX_LEAVES) as usize;
        Self { component: component.into(), leaves: vec![[0; 32]; n], root: OnceLock::new(), root_hasher: OnceLock::new() }
    }

    /// The component name, part of every context of this tree.
    pub fn component(&self) -> &str {
        &self.component
    }

    /// Number of leaves.
    pub fn n_leaves(&self) -> u32 {
        to_u32(self.leaves.len())
    }

    /// Sets leaf `k`. Returns `false`, changing nothing, when `k` is not below [`n_leaves`](Self::n_leaves).
    pub fn set_leaf(&mut self, k: u32, digest: Digest) -> bool {
        match self.leaves.get_mut(k as usize) {
            Some(leaf) => {
                if *leaf != digest {
                    *leaf = digest;
                    self.root.take();
                }
                true
            }
            None => false,
        }
    }

    /// Leaf `k`, if there is one.
    pub fn leaf(&self, k: u32) -> Option<Digest> {
        self.leaves.get(k as usize).copied()
    }

    /// All leaves, in order.
    pub fn leaves(&self) -> &[Digest] {
        &self.leaves
    }

    /// Changes the leaf count to `n` (clamped to [`MAX_LEAVES`]): new leaves are all-zero, extra
    /// leaves are dropped. The leaf count is part of the root.
    pub fn resize(&mut self, n: u32) {
        let n = n.min(MAX_LEAVES) as usize;
        if n != self.leaves.len() {
            self.leaves.resize(n, [0; 32]);
            self.root.take();
        }
    }

    /// The root: blake3 with context `phalanx state v1 {component} tree` over the leaf count (u32 LE)
    /// and the leaves in order. Cached until a leaf changes.
    pub fn root(&self) -> Digest {
        *self.root.get_or_init(|| {
            let mut h = self.root_hasher.get_or_init(|| hasher(format_args!("{} tree", self.component))).clone();
            h.update(&self.n_leaves().to_le_bytes());
            // One update over all leaves lets blake3 hash whole 1 KiB chunks in parallel lanes.
            h.update(self.leaves.as_flattened());
            *h.finalize().as_bytes()
        })
    }

    /// Whether the cached root is stale, so the next [`root`](Self::root) call rehashes the leaves.
    pub fn is_dirty(&self) -> bool {
        self.root.get().is_none()
    }

    /// The component name and a copy of its leaves, for [`locate`].
    pub fn report(&self) -> DigestReport {
        DigestReport { component: self.component.to_string(), leaves: self.leaves.clone() }
    }
}

/// Digests of a [`NavGrid`]'s passability masks in chunks of [`GRID_CHUNK`]×[`GRID_CHUNK`] navcells.
///
/// Chunk `(cx, cy)` covers columns `cx·64 ≤ i < min(cx·64 + 64, width)` and rows
/// `cy·64 ≤ j < min(cy·64 + 64, height)`; it is leaf `cy · chunks_x + cx` of the tree. Its digest
/// covers its masks and its `(cx, cy, w, h)`, so grids of different shapes never share a root.
/// The grid's class count and navcell size are not covered: they belong to the grid's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GridDigests {
    tree: DigestTree,
    width: u32,
    height: u32,
    chunks_x: u32,
    chunks_y: u32,
}

impl GridDigests {
    /// The digests of every chunk of a grid, under the component [`PASSABILITY_COMPONENT`].
    pub fn build(grid: &NavGrid) -> Self {
        Self::build_as(PASSABILITY_COMPONENT, grid)
    }

    /// The digests of every chunk of a grid under another component name (for a second grid).
    pub fn build_as(component: impl Into<Cow<'static, str>>, grid: &NavGrid) -> Self {
        let (width, height) = (grid.width(), grid.height());
        let chunks_x = width.div_ceil(GRID_CHUNK);
        let chunks_y = height.div_ceil(GRID_CHUNK);
        let mut this = Self { tree: DigestTree::new(component, chunks_x.saturating_mul(chunks_y)), width, height, chunks_x, chunks_y };
        let mut buf = Vec::new();
        for cy in 0..chunks_y {
            for cx in 0..chunks_x {
                this.refresh_chunk(grid, cx, cy, &mut buf);
            }
        }
        this
    }

    /// Recomputes the chunks that any of `rects` touches (rectangles are clipped to the grid; empty
    /// ones touch nothing) and returns how many chunks were recomputed. Each chunk is recomputed at
    /// most once. When the grid's size differs from the one built, everything is rebuilt.
    pub fn update(&mut self, grid: &NavGrid, rects: &[CellRect]) -> u32 {
        if grid.width() != self.width || grid.height() != self.height {
            *self = Self::build_as(self.tree.component.clone(), grid);
            return self.tree.n_leaves();
        }
        let whole = CellRect::full(self.width, self.height);
        let mut chunks: Vec<u32> = Vec::new();
        for rect in rects {
            let r = rect.intersect(&whole);
            if r.is_empty() {
                continue;
            }
            for cy in r.j0 / GRID_CHUNK..=(r.j1 - 1) / GRID_CHUNK {
                for cx in r.i0 / GRID_CHUNK..=(r.i1 - 1) / GRID_CHUNK {
                    chunks.push(cy * self.chunks_x + cx);
                }
            }
        }
        chunks.sort_unstable();
        chunks.dedup();
        let mut buf = Vec::new();
        for &k in &chunks {
            self.refresh_chunk(grid, k % self.chunks_x, k / self.chunks_x, &mut buf);
        }
        to_u32(chunks.len())
    }

    /// The root of the chunk digests.
    pub fn root(&self) -> Digest {
        self.tree.root()
    }

    /// The tree of chunk digests.
    pub fn tree(&self) -> &DigestTree {
        &self.tree
    }

    /// Number of chunk columns and rows.
    pub fn chunks(&self) -> (u32, u32) {
        (self.chunks_x, self.chunks_y)
    }

    /// The navcells of leaf `k` (the chunk a diverging leaf points at), or `None` past the last chunk.
    pub fn chunk_rect(&self, k: u32) -> Option<CellRect> {
        if self.chunks_x == 0 || k >= self.tree.n_leaves() {
            return None;
        }
        let (i0, j0) = ((k % self.chunks_x) * GRID_CHUNK, (k / self.chunks_x) * GRID_CHUNK);
        Some(CellRect::new(i0, j0, (i0 + GRID_CHUNK).min(self.width), (j0 + GRID_CHUNK).min(self.height)))
    }

    /// Rehashes chunk `(cx, cy)` of a grid of this size into its leaf; `buf` is scratch space.
    fn refresh_chunk(&mut self, grid: &NavGrid, cx: u32, cy: u32, buf: &mut Vec<u8>) {
        let (i0, j0) = (cx * GRID_CHUNK, cy * GRID_CHUNK);
        let w = GRID_CHUNK.min(self.width.saturating_sub(i0));
        let h = GRID_CHUNK.min(self.height.saturating_sub(j0));
        let masks = grid.blocked_masks();
        let width = self.width as usize;
        let row_bytes = 2 * w as usize;
        buf.clear();
        buf.resize(row_bytes * h as usize, 0);
        for (j, out) in (j0..j0 + h).zip(buf.chunks_exact_mut(row_bytes)) {
            let start = j as usize * width + i0 as usize;
            let row = masks.get(start..start + w as usize).unwrap_or_default();
            for (pair, m) in out.chunks_exact_mut(2).zip(row) {
                pair.copy_from_slice(&m.to_le_bytes());
            }
        }
        for v in [cx, cy, w, h] {
            buf.extend_from_slice(&v.to_le_bytes());
        }
        let mut hasher = hasher(format_args!("{} chunk", self.tree.component));
        hasher.update(buf);
        self.tree.set_leaf(cy * self.chunks_x + cx, *hasher.finalize().as_bytes());
    }
}

/// The entity range (leaf index) of an entity index: `index / 64`.
pub fn range_of(index: u32) -> u32 {
    index / RANGE_SIZE
}

/// The entity indices of a range, or `None` for a range past the last `u32` index.
pub fn range_indices(range: u32) -> Option<std::ops::RangeInclusive<u32>> {
    let first = range.checked_mul(RANGE_SIZE)?;
    Some(first..=first + (RANGE_SIZE - 1))
}

/// The leaf digest of one entity range: blake3 with context `phalanx state v1 {component} range`
/// over the range index (u32 LE) and the canonical bytes ([`encode`](crate::state_hash::encode)) of `state`, which the world
/// makes from the range's entities in index order (for example a `Vec` of `(EntityId, Unit)`).
///
/// # Panics
/// Only as [`encode`](crate::state_hash::encode) does: never for the state types of this crate.
pub fn range_digest<T: Serialize>(component: &str, range: u32, state: &T) -> Digest {
    let mut h = hasher(format_args!("{component} range"));
    h.update(&range.to_le_bytes());
    crate::state_hash::encode_into(state, &mut h);
    *h.finalize().as_bytes()
}

/// [`range_digest`] over bytes the caller encoded itself (a hand-written canonical encoding for
/// hot state): the range index (u32 LE), then the bytes.
pub fn range_digest_bytes(component: &str, range: u32, bytes: &[u8]) -> Digest {
    let mut h = hasher(format_args!("{component} range"));
    h.update(&range.to_le_bytes());
    h.update(bytes);
    *h.finalize().as_bytes()
}

/// The hasher [`range_digest_bytes`] starts from for `component`, to clone for each range (the
/// derive-key context is hashed once, not per range).
pub fn range_hasher(component: &str) -> blake3::Hasher {
    hasher(format_args!("{component} range"))
}

/// [`range_digest_bytes`] from a [`range_hasher`] of the component.
pub fn range_digest_from(hasher: &blake3::Hasher, range: u32, bytes: &[u8]) -> Digest {
    let mut h = hasher.clone();
    h.update(&range.to_le_bytes());
    h.update(bytes);
    *h.finalize().as_bytes()
}

/// Digests of entity state in ranges of [`RANGE_SIZE`] consecutive entity indices.
///
/// The caller (the world) marks the entities it changes ([`mark`](Self::mark)); before hashing a turn
/// it takes the dirty ranges ([`take_dirty`](Self::take_dirty), ascending), encodes each range's
/// entities and sets its digest ([`set_range`](Self::set_range), usually with [`range_digest`]).
/// Ranges never set keep the all-zero digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeDigests {
    tree: DigestTree,
    /// Whether each range is marked dirty; as long as the tree.
    dirty: Vec<bool>,
    /// The dirty ranges, in marking order, each once.
    dirty_list: Vec<u32>,
}

impl RangeDigests {
    /// No ranges yet, for a component.
    pub fn new(component: impl Into<Cow<'static, str>>) -> Self {
        Self { tree: DigestTree::new(component, 0), dirty: Vec::new(), dirty_list: Vec::new() }
    }

    /// Makes the tree hold at least `n` ranges (never shrinks; at most [`MAX_LEAVES`]).
    pub fn ensure_ranges(&mut self, n: u32) {
        let n = n.min(MAX_LEAVES);
        if n > self.tree.n_leaves() {
            self.tree.resize(n);
            self.dirty.resize(n as usize, false);
        }
    }

    /// Changes the number of ranges to exactly `n` (at most [`MAX_LEAVES`]); dropped ranges are no
    /// longer dirty.
    pub fn resize(&mut self, n: u32) {
        let n = n.min(MAX_LEAVES);
        self.tree.resize(n);
        self.dirty.resize(n as usize, false);
        self.dirty_list.retain(|&r| r < n);
    }

    /// Sets the digest of a range, growing the tree to hold it. Returns `false`, changing nothing,
    /// when `range` is not below [`MAX_LEAVES`].
    pub fn set_range(&mut self, range: u32, digest: Digest) -> bool {
        if range >= MAX_LEAVES {
            return false;
        }
        self.ensure_ranges(range + 1);
        self.tree.set_leaf(range, digest)
    }

    /// Marks the range of an entity index dirty, growing the tree to hold it. Returns `false`,
    /// changing nothing, when the range is not below [`MAX_LEAVES`] (an index of 2^26 or more,
    /// which the world must refuse to allocate).
    pub fn mark(&mut self, index: u32) -> bool {
        let range = range_of(index);
        if range >= MAX_LEAVES {
            return false;
        }
        self.ensure_ranges(range + 1);
        if let Some(d) = self.dirty.get_mut(range as usize)
            && !*d
        {
            *d = true;
            self.dirty_list.push(range);
        }
        true
    }

    /// The dirty ranges in ascending order; they are no longer dirty afterwards.
    pub fn take_dirty(&mut self) -> Vec<u32> {
        let mut list = std::mem::take(&mut self.dirty_list);
        list.sort_unstable();
        for &r in &list {
            if let Some(d) = self.dirty.get_mut(r as usize) {
                *d = false;
            }
        }
        list
    }

    /// The root of the range digests.
    pub fn root(&self) -> Digest {
        self.tree.root()
    }

    /// The tree of range digests.
    pub fn tree(&self) -> &DigestTree {
        &self.tree
    }
}

/// The state hash of one turn and the component roots it was made from; the replay stores it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateDigest {
    /// The turn whose end state this is.
    pub turn: u32,
    /// Component names and roots, in the world's fixed component order (the order is hashed).
    pub components: Vec<(String, Digest)>,
    /// [`StateDigest::hash_of`] the other two fields.
    pub hash: Digest,
}

impl StateDigest {
    /// The digest of a turn from its component roots, in the world's fixed order.
    pub fn new(turn: u32, components: Vec<(String, Digest)>) -> Self {
        let hash = Self::hash_of(turn, &components);
        Self { turn, components, hash }
    }

    /// The turn hash: blake3 with context `phalanx state v1 turn` over the turn (u32 LE), the
    /// component count (u32 LE) and, per component, its name's byte length (u32 LE), its UTF-8
    /// name and its root.
    pub fn hash_of(turn: u32, components: &[(String, Digest)]) -> Digest {
        let mut h = hasher(format_args!("turn"));
        h.update(&turn.to_le_bytes());
        h.update(&to_u32(components.len()).to_le_bytes());
        for (name, root) in components {
            h.update(&to_u32(name.len()).to_le_bytes());
            h.update(name.as_bytes());
            h.update(root);
        }
        *h.finalize().as_bytes()
    }

    /// Whether `hash` matches the turn and components (a check for digests read from a file).
    pub fn is_consistent(&self) -> bool {
        self.hash == Self::hash_of(self.turn, &self.components)
    }

    /// The root of a component (its first entry of that name).
    pub fn component(&self, name: &str) -> Option<Digest> {
        self.components.iter().find(|(n, _)| n == name).map(|(_, root)| *root)
    }

    /// The names of the components whose roots differ from `other`'s or that only one side has,
    /// in this digest's order then `other`'s (entries are matched by name and occurrence).
    pub fn differing_components(&self, other: &StateDigest) -> Vec<String> {
        let a: Vec<(&str, &[Digest])> = self.components.iter().map(|(n, r)| (n.as_str(), std::slice::from_ref(r))).collect();
        let b: Vec<(&str, &[Digest])> = other.components.iter().map(|(n, r)| (n.as_str(), std::slice::from_ref(r))).collect();
        locate_pairs(&a, &b).into_iter().map(|d| d.component).collect()
    }
}

/// One component's leaves, as a peer sends them to localise a desync.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DigestReport {
    /// Component name.
    pub component: String,
    /// Its leaves, in order.
    pub leaves: Vec<Digest>,
}

impl From<DigestReport> for (String, Vec<Digest>) {
    fn from(report: DigestReport) -> Self {
        (report.component, report.leaves)
    }
}

/// Where one component of two states differs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Divergence {
    /// Component name.
    pub component: String,
    /// Differing leaf indices, ascending: leaves present on both sides with different digests, then
    /// every leaf present on one side only (past the shorter side's count, or all of them when the
    /// component is missing on one side).
    pub leaves: Vec<u32>,
    /// Number of leaves on side `a`, `None` when `a` lacks the component.
    pub a_leaves: Option<u32>,
    /// Number of leaves on side `b`, `None` when `b` lacks the component.
    pub b_leaves: Option<u32>,
}

/// Compares the leaves of two states' components and lists, per differing component, the differing
/// leaves. Components are matched by name (the k-th entry of a name in `a` with the k-th of that
/// name in `b`); the result lists `a`'s components in `a`'s order, then those only `b` has in
/// `b`'s order. Equal inputs give an empty list.
pub fn locate(a: &[(String, Vec<Digest>)], b: &[(String, Vec<Digest>)]) -> Vec<Divergence> {
    let a: Vec<(&str, &[Digest])> = a.iter().map(|(n, l)| (n.as_str(), l.as_slice())).collect();
    let b: Vec<(&str, &[Digest])> = b.iter().map(|(n, l)| (n.as_str(), l.as_slice())).collect();
    locate_pairs(&a, &b)
}

/// [`locate`] over reports.
pub fn locate_reports(a: &[DigestReport], b: &[DigestReport]) -> Vec<Divergence> {
    let a: Vec<(&str, &[Digest])> = a.iter().map(|r| (r.component.as_str(), r.leaves.as_slice())).collect();
    let b: Vec<(&str, &[Digest])> = b.iter().map(|r| (r.component.as_str(), r.leaves.as_slice())).collect();
    locate_pairs(&a, &b)
}

/// [`locate`] over borrowed names and leaves.
fn locate_pairs(a: &[(&str, &[Digest])], b: &[(&str, &[Digest])]) -> Vec<Divergence> {
    // The occurrence number of every entry among the entries of its name, so duplicates pair up.
    fn keyed<'s>(side: &[(&'s str, &'s [Digest])]) -> Vec<(&'s str, usize)> {
        let mut seen: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
        side.iter()
            .map(|&(name, _)| {
                let n = seen.entry(name).or_insert(0);
                *n += 1;
                (name, *n)
            })
            .collect()
    }
    let (ka, kb) = (keyed(a), keyed(b));
    let b_index: std::collections::BTreeMap<(&str, usize), usize> = kb.iter().enumerate().map(|(i, &k)| (k, i)).collect();
    let mut matched_b = vec![false; b.len()];
    let mut out = Vec::new();
    for (ia, key) in ka.iter().enumerate() {
        let (name, la) = a[ia];
        let lb = match b_index.get(key) {
            Some(&ib) => {
                matched_b[ib] = true;
                Some(b[ib].1)
            }
            None => None,
        };
        if let Some(d) = diverge(name, Some(la), lb) {
            out.push(d);
        }
    }
    for (ib, &(name, lb)) in b.iter().enumerate() {
        if !matched_b[ib]
            && let Some(d) = diverge(name, None, Some(lb))
        {
            out.push(d);
        }
    }
    out
}

/// The divergence of one component between two sides, `None` when both have it with equal leaves.
fn diverge(name: &str, a: Option<&[Digest]>, b: Option<&[Digest]>) -> Option<Divergence> {
    let (la, lb) = (a.unwrap_or_default(), b.unwrap_or_default());
    if a.is_some() && b.is_some() && la == lb {
        return None;
    }
    let longest = la.len().max(lb.len()).min(u32::MAX as usize);
    let leaves = (0..longest).filter(|&k| la.get(k) != lb.get(k)).map(to_u32).collect();
    Some(Divergence { component: name.to_string(), leaves, a_leaves: a.map(|l| to_u32(l.len())), b_leaves: b.map(|l| to_u32(l.len())) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state_hash::encode;
    use pathing::{Fixed, Navcell};
    use proptest::prelude::*;

    fn leaf(n: u8) -> Digest {
        [n; 32]
    }

    fn grid(width: u32, height: u32) -> NavGrid {
        NavGrid::new(width, height, 8, Fixed::ONE).expect("valid grid")
    }

    /// A grid with pseudo-random masks from a seed (an integer LCG; deterministic).
    fn noisy_grid(width: u32, height: u32, seed: u64) -> NavGrid {
        let mut g = grid(width, height);
        let mut s = seed;
        for j in 0..height {
            for i in 0..width {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                g.set_blocked_mask(Navcell::new(i as u16, j as u16), (s >> 48) as u16);
            }
        }
        g
    }

    #[test]
    fn root_follows_the_specified_encoding() {
        let mut t = DigestTree::new("units", 3);
        t.set_leaf(1, leaf(7));
        let mut h = blake3::Hasher::new_derive_key("phalanx state v1 units tree");
        h.update(&3u32.to_le_bytes());
        for l in [leaf(0), leaf(7), leaf(0)] {
            h.update(&l);
        }
        assert_eq!(t.root(), *h.finalize().as_bytes());
    }

    #[test]
    fn roots_are_deterministic_across_runs() {
        let make = || {
            let mut t = DigestTree::new("units", 4);
            for k in 0..4 {
                t.set_leaf(k, leaf(k as u8 + 1));
            }
            t
        };
        assert_eq!(make().root(), make().root());
        // Pinned so that any change of the format is noticed (and goes with a FORMAT_VERSION bump).
        let empty = DigestTree::new("units", 0).root();
        let mut h = blake3::Hasher::new_derive_key("phalanx state v1 units tree");
        h.update(&[0, 0, 0, 0]);
        assert_eq!(empty, *h.finalize().as_bytes());
        assert_eq!(crate::state_hash::hex(&make().root()), PINNED_ROOT);
    }

    /// Root of the four-leaf tree of `roots_are_deterministic_across_runs`.
    const PINNED_ROOT: &str = "e06b0ae1e3776fd21112b542b117995e95c3d53fbad3e95e0c57c857bfbbbc8f";

    #[test]
    fn root_changes_when_any_leaf_changes_and_is_cached_otherwise() {
        let mut t = DigestTree::new("units", 16);
        let base = t.root();
        assert!(!t.is_dirty());
        let mut roots = vec![base];
        for k in 0..16 {
            let mut u = t.clone();
            assert!(u.set_leaf(k, leaf(1)));
            assert!(u.is_dirty());
            roots.push(u.root());
            assert!(!u.is_dirty());
        }
        roots.sort_unstable();
        roots.dedup();
        assert_eq!(roots.len(), 17, "every single-leaf change gives a distinct root");
        // Setting a leaf to its value is not a change; setting it back restores the root.
        assert!(t.set_leaf(3, [0; 32]));
        assert!(!t.is_dirty());
        t.set_leaf(3, leaf(9));
        t.set_leaf(3, [0; 32]);
        assert_eq!(t.root(), base);
    }

    #[test]
    fn component_name_is_part_of_the_root() {
        let (a, b) = (DigestTree::new("units", 5), DigestTree::new("formations", 5));
        assert_eq!(a.leaves(), b.leaves());
        assert_ne!(a.root(), b.root());
        assert_ne!(a, b);
    }

    #[test]
    fn leaf_count_is_part_of_the_root_and_out_of_range_is_ignored() {
        let mut t = DigestTree::new("units", 2);
        let two = t.root();
        assert!(!t.set_leaf(2, leaf(1)));
        assert_eq!(t.leaf(2), None);
        assert_eq!(t.root(), two);
        t.resize(3);
        assert_eq!(t.n_leaves(), 3);
        assert_ne!(t.root(), two);
        t.resize(2);
        assert_eq!(t.root(), two);
        let mut huge = DigestTree::new("units", 0);
        huge.resize(u32::MAX);
        assert_eq!(huge.n_leaves(), MAX_LEAVES);
    }

    #[test]
    fn grid_chunks_cover_ragged_edges() {
        let g = noisy_grid(100, 70, 1);
        let d = GridDigests::build(&g);
        assert_eq!(d.chunks(), (2, 2));
        assert_eq!(d.tree().n_leaves(), 4);
        assert_eq!(d.chunk_rect(3), Some(CellRect::new(64, 64, 100, 70)));
        assert_eq!(d.chunk_rect(4), None);
        assert_eq!(d.tree().component(), PASSABILITY_COMPONENT);
        // Same masks, transposed shape: different roots.
        let (wide, tall) = (GridDigests::build(&grid(128, 64)), GridDigests::build(&grid(64, 128)));
        assert_eq!(wide.tree().leaves()[0], tall.tree().leaves()[0]);
        assert_ne!(wide.root(), tall.root());
        assert_ne!(GridDigests::build_as("terrain", &g).root(), d.root());
    }

    #[test]
    fn grid_leaf_follows_the_specified_encoding() {
        let g = noisy_grid(70, 3, 9);
        let d = GridDigests::build(&g);
        let mut h = blake3::Hasher::new_derive_key("phalanx state v1 passability chunk");
        for j in 0..3u16 {
            for i in 64..70u16 {
                h.update(&g.blocked_mask(Navcell::new(i, j)).to_le_bytes());
            }
        }
        for v in [1u32, 0, 6, 3] {
            h.update(&v.to_le_bytes());
        }
        assert_eq!(d.tree().leaf(1), Some(*h.finalize().as_bytes()));
    }

    #[test]
    fn a_single_changed_navcell_changes_exactly_one_leaf() {
        let g = noisy_grid(200, 130, 2);
        let before = GridDigests::build(&g);
        for (i, j) in [(0u16, 0u16), (63, 63), (64, 63), (199, 129), (130, 70)] {
            let mut h = g.clone();
            let cell = Navcell::new(i, j);
            h.set_blocked_mask(cell, g.blocked_mask(cell) ^ 1);
            let mut after = before.clone();
            assert_eq!(after.update(&h, &[CellRect::new(u32::from(i), u32::from(j), u32::from(i) + 1, u32::from(j) + 1)]), 1);
            let changed: Vec<u32> = (0..before.tree().n_leaves()).filter(|&k| before.tree().leaf(k) != after.tree().leaf(k)).collect();
            let expected = u32::from(j) / GRID_CHUNK * after.chunks().0 + u32::from(i) / GRID_CHUNK;
            assert_eq!(changed, vec![expected]);
            assert_eq!(after, GridDigests::build(&h));
            assert!(after.chunk_rect(expected).is_some_and(|r| r.contains(u32::from(i), u32::from(j))));
        }
    }

    #[test]
    fn update_ignores_empty_and_off_grid_rects_and_rebuilds_on_resize() {
        let g = noisy_grid(100, 100, 3);
        let mut d = GridDigests::build(&g);
        let rects =
            [CellRect::new(5, 5, 5, 9), CellRect::new(100, 0, 200, 50), CellRect::new(u32::MAX, u32::MAX, 0, 0), CellRect::new(0, 0, 1, 1)];
        assert_eq!(d.update(&g, &rects), 1);
        assert_eq!(d.update(&g, &[CellRect::new(0, 0, u32::MAX, u32::MAX), CellRect::new(60, 60, 70, 70)]), 4);
        assert_eq!(d, GridDigests::build(&g));
        let other = noisy_grid(30, 200, 4);
        assert_eq!(d.update(&other, &[]), 4);
        assert_eq!(d, GridDigests::build(&other));
    }

    proptest! {
        #[test]
        fn update_after_random_changes_equals_rebuild(
            seed in any::<u64>(),
            width in 1u32..260,
            height in 1u32..200,
            edits in proptest::collection::vec((any::<u32>(), any::<u32>(), 0u32..70, 0u32..70, any::<u16>()), 0..12),
        ) {
            let mut g = noisy_grid(width, height, seed);
            let mut d = GridDigests::build(&g);
            let mut rects = Vec::new();
            for (x, y, w, h, mask) in edits {
                let (i0, j0) = (x % width, y % height);
                let rect = CellRect::new(i0, j0, (i0 + w).min(width), (j0 + h).min(height));
                for j in rect.j0..rect.j1 {
                    for i in rect.i0..rect.i1 {
                        g.set_blocked_mask(Navcell::new(i as u16, j as u16), mask);
                    }
                }
                rects.push(rect);
            }
            d.update(&g, &rects);
            prop_assert_eq!(d.root(), GridDigests::build(&g).root());
            prop_assert_eq!(d, GridDigests::build(&g));
        }
    }

    #[test]
    fn entity_ranges() {
        assert_eq!((range_of(0), range_of(63), range_of(64), range_of(u32::MAX)), (0, 0, 1, (1 << 26) - 1));
        assert_eq!(range_indices(1), Some(64..=127));
        assert_eq!(range_indices((1 << 26) - 1), Some(u32::MAX - 63..=u32::MAX));
        assert_eq!(range_indices(1 << 26), None);

        let mut r = RangeDigests::new("units");
        let empty = r.root();
        for index in [130, 5, 130, 70] {
            assert!(r.mark(index));
        }
        assert_eq!(r.tree().n_leaves(), 3);
        assert_eq!(r.take_dirty(), vec![0, 1, 2]);
        assert!(r.take_dirty().is_empty());
        for range in 0..3 {
            assert!(r.set_range(range, range_digest("units", range, &Vec::<(u32, u32)>::new())));
        }
        assert_ne!(r.root(), empty);
        assert_ne!(r.tree().leaf(0), r.tree().leaf(1), "the range index is part of the leaf");
        assert!(r.set_range(9, leaf(1)));
        assert_eq!(r.tree().n_leaves(), 10);
        assert!(!r.set_range(MAX_LEAVES, leaf(1)));
        assert!(!r.mark(u32::MAX));
        assert!(!r.mark(MAX_LEAVES * RANGE_SIZE));
        assert!(r.mark(MAX_LEAVES * RANGE_SIZE - 1));
        assert_eq!(r.take_dirty(), vec![MAX_LEAVES - 1]);
        assert_eq!(r.tree().n_leaves(), MAX_LEAVES);
        assert!(r.mark(640));
        r.resize(5);
        assert!(r.take_dirty().is_empty());
        assert_eq!(r.tree().n_leaves(), 5);
        assert_ne!(range_digest("units", 0, &1u32), range_digest("formations", 0, &1u32));
    }

    #[test]
    fn turn_hash_covers_turn_names_roots_and_order() {
        let comps = vec![("rng".to_string(), leaf(1)), ("units".to_string(), leaf(2))];
        let d = StateDigest::new(7, comps.clone());
        assert!(d.is_consistent());
        assert_eq!(d, StateDigest::new(7, comps.clone()));
        assert_ne!(d.hash, StateDigest::new(8, comps.clone()).hash);
        assert_ne!(d.hash, StateDigest::new(7, vec![comps[1].clone(), comps[0].clone()]).hash);
        assert_ne!(d.hash, StateDigest::new(7, vec![("rn".to_string(), leaf(1)), ("gunits".to_string(), leaf(2))]).hash);
        assert_ne!(d.hash, StateDigest::new(7, vec![("rng".to_string(), leaf(1)), ("units".to_string(), leaf(3))]).hash);
        assert_ne!(d.hash, StateDigest::new(7, comps[..1].to_vec()).hash);
        let mut h = blake3::Hasher::new_derive_key("phalanx state v1 turn");
        h.update(&7u32.to_le_bytes());
        h.update(&2u32.to_le_bytes());
        for (name, root) in &comps {
            h.update(&(name.len() as u32).to_le_bytes());
            h.update(name.as_bytes());
            h.update(root);
        }
        assert_eq!(d.hash, *h.finalize().as_bytes());
        assert_eq!(d.component("units"), Some(leaf(2)));
        assert_eq!(d.component("grid"), None);

        let bytes = encode(&d);
        let (back, read): (StateDigest, usize) = bincode::serde::decode_from_slice(&bytes, crate::state_hash::CONFIG).expect("decodes");
        assert_eq!((back.clone(), read), (d.clone(), bytes.len()));
        let mut forged = back;
        forged.turn = 8;
        assert!(!forged.is_consistent());

        let other = StateDigest::new(7, vec![("rng".to_string(), leaf(1)), ("units".to_string(), leaf(9)), ("grid".to_string(), leaf(0))]);
        assert_eq!(d.differing_components(&other), vec!["units".to_string(), "grid".to_string()]);
        assert!(d.differing_components(&d).is_empty());
    }

    #[test]
    fn locate_finds_differing_leaves_counts_and_components() {
        let s = |n: &str, l: &[u8]| (n.to_string(), l.iter().map(|&x| leaf(x)).collect::<Vec<_>>());
        let a = vec![s("grid", &[1, 2, 3, 4]), s("units", &[1, 2]), s("rng", &[5]), s("only_a", &[1, 1])];
        assert!(locate(&a, &a).is_empty());
        let b = vec![s("rng", &[5]), s("units", &[1, 2, 7]), s("grid", &[1, 9, 3, 8]), s("only_b", &[3])];
        let d = locate(&a, &b);
        let div = |c: &str, leaves: Vec<u32>, a_leaves, b_leaves| Divergence { component: c.to_string(), leaves, a_leaves, b_leaves };
        assert_eq!(
            d,
            vec![
                div("grid", vec![1, 3], Some(4), Some(4)),
                div("units", vec![2], Some(2), Some(3)),
                div("only_a", vec![0, 1], Some(2), None),
                div("only_b", vec![0], None, Some(1)),
            ]
        );
        // Duplicate names pair up by occurrence; empty components still diverge when missing.
        let a = vec![s("x", &[1]), s("x", &[2]), s("e", &[])];
        let b = vec![s("x", &[1]), s("x", &[3])];
        assert_eq!(locate(&a, &b), vec![div("x", vec![0], Some(1), Some(1)), div("e", vec![], Some(0), None)]);
        // Reports are the same thing.
        let t = DigestTree::new("units", 2);
        let mut u = t.clone();
        u.set_leaf(1, leaf(4));
        assert_eq!(locate_reports(&[t.report()], &[u.report()]), vec![div("units", vec![1], Some(2), Some(2))]);
        let pair: (String, Vec<Digest>) = t.report().into();
        assert_eq!(pair, ("units".to_string(), t.leaves().to_vec()));
    }

    #[test]
    fn trees_are_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<DigestTree>();
        check::<GridDigests>();
        check::<RangeDigests>();
    }
}
