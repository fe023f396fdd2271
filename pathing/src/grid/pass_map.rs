//! The passability of one class as bit planes: the form every grid search reads.
//!
//! A [`PassMap`] holds two copies of one class's passability, one bit per navcell (1 = passable):
//! a row-major plane for east/west scans and a column-major plane for north/south scans, so that
//! jump point search can scan 64 navcells per word in every straight direction ("block-based"
//! scanning, Harabor & Grastien 2014). Each plane has a one-cell impassable border on every side,
//! so scans stop at the map edge without bounds checks, and one zero word before and after each line,
//! so a 64-bit window can be read at any position.
//!
//! Each plane also keeps, per line and per scan direction, the positions where a straight jump
//! stops (an impassable navcell or a jump point): what a scan would otherwise compute from three
//! lines for every word it reads is computed once when the map is built or patched, so a scan reads
//! one word per 64 navcells and tests it.

use crate::geometry::Fixed;
use crate::grid::nav_grid::{NavGrid, PassClass};
use crate::grid::navcell::{CellRect, Navcell};

/// One orientation of a bit plane. Line `l` and position `p` are padded coordinates: the grid cell
/// `(a, b)` (position `a` along line `b`) is at line `b + 1`, position `a + 1`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BitPlane {
    /// Words per line, including the leading and trailing zero words.
    words_per_line: usize,
    /// `(n_lines + 2) * words_per_line` words.
    words: Vec<u64>,
    /// The stops of a forward scan, in the layout of `words`: bit set where a ray going towards
    /// higher positions stops (see [`Self::scan_fwd`]). Kept for lines `1..=n_lines`; the border
    /// lines are never scanned and stay zero.
    stops_fwd: Vec<u64>,
    /// The stops of a backward scan ([`Self::scan_bwd`]), likewise.
    stops_bwd: Vec<u64>,
}

impl BitPlane {
    fn new(line_len: usize, n_lines: usize) -> Self {
        let data_words = (line_len + 2).div_ceil(64);
        let words_per_line = data_words + 2;
        let len = (n_lines + 2) * words_per_line;
        Self { words_per_line, words: vec![0; len], stops_fwd: vec![0; len], stops_bwd: vec![0; len] }
    }

    /// Copies the words of padded lines `lines` (clamped to the plane) that hold padded positions
    /// `positions`, and one word on either side (as [`Self::refresh_stops_span`] refreshes), with
    /// their scan stops, from `other`, a plane of the same shape.
    fn copy_lines(&mut self, other: &BitPlane, lines: std::ops::RangeInclusive<usize>, positions: std::ops::RangeInclusive<usize>) {
        let wpl = self.words_per_line;
        let last = self.n_lines_padded().min(other.n_lines_padded()).saturating_sub(1);
        let (from, to) = (*lines.start(), (*lines.end()).min(last));
        if from > to || wpl != other.words_per_line {
            return;
        }
        let (w0, w1) = self.word_span(&positions);
        for line in from..=to {
            let span = line * wpl + w0..line * wpl + w1 + 1;
            self.words[span.clone()].copy_from_slice(&other.words[span.clone()]);
            self.stops_fwd[span.clone()].copy_from_slice(&other.stops_fwd[span.clone()]);
            self.stops_bwd[span.clone()].copy_from_slice(&other.stops_bwd[span]);
        }
    }

    /// The words of a line that hold padded positions `positions`, with one more on either side
    /// (clamped to the line): `(first, last)`, inclusive.
    fn word_span(&self, positions: &std::ops::RangeInclusive<usize>) -> (usize, usize) {
        let word = |pos: usize| pos.saturating_add(64) / 64;
        (word(*positions.start()).saturating_sub(1), word(*positions.end()).saturating_add(1).min(self.words_per_line - 1))
    }

    /// The lines a plane of `len` words holds, borders included.
    fn n_lines_padded(&self) -> usize {
        self.words.len() / self.words_per_line
    }

    /// Recomputes the scan stops of padded lines `lines` (clamped to the lines that are not
    /// borders) from the passability of each line and of the lines on both sides.
    ///
    /// A position stops a ray when it is impassable (`!c`) or when, on either side line, its
    /// neighbour is passable while the neighbour one step back along the ray is not: for a forward
    /// ray that is `a & !(a << 1)` (the bit below each bit, with the previous word's top bit carried
    /// in), for a backward ray `a & !(a >> 1)` (the bit above, with the next word's bottom bit).
    fn refresh_stops(&mut self, lines: std::ops::RangeInclusive<usize>) {
        self.refresh_stops_span(lines, 0..=usize::MAX);
    }

    /// [`Self::refresh_stops`] for the words of padded lines `lines` that hold padded positions
    /// `positions` (and one word on either side, whose stops read a neighbour's edge bit): the
    /// stops elsewhere on those lines do not read the positions, so after a change inside
    /// `positions` this leaves the plane as a refresh of whole lines would.
    fn refresh_stops_span(&mut self, lines: std::ops::RangeInclusive<usize>, positions: std::ops::RangeInclusive<usize>) {
        let wpl = self.words_per_line;
        let last = self.n_lines_padded() - 2;
        let (w0, w1) = self.word_span(&positions);
        for line in (*lines.start()).max(1)..=(*lines.end()).min(last) {
            let (below, rest) = self.words[(line - 1) * wpl..(line + 2) * wpl].split_at(wpl);
            let (cur, above) = rest.split_at(wpl);
            let fwd = &mut self.stops_fwd[line * wpl..(line + 1) * wpl];
            for k in w0..=w1 {
                let (c, a, b) = (cur[k], above[k], below[k]);
                let (carry_above, carry_below) = if k > 0 { (above[k - 1] >> 63, below[k - 1] >> 63) } else { (0, 0) };
                fwd[k] = !c | (a & !((a << 1) | carry_above)) | (b & !((b << 1) | carry_below));
            }
            let bwd = &mut self.stops_bwd[line * wpl..(line + 1) * wpl];
            for k in w0..=w1 {
                let (c, a, b) = (cur[k], above[k], below[k]);
                let (carry_above, carry_below) = if k + 1 < wpl { (above[k + 1] << 63, below[k + 1] << 63) } else { (0, 0) };
                bwd[k] = !c | (a & !((a >> 1) | carry_above)) | (b & !((b >> 1) | carry_below));
            }
        }
    }

    #[inline]
    fn bit_index(&self, line: usize, pos: usize) -> (usize, u32) {
        let stored = pos + 64;
        (line * self.words_per_line + stored / 64, (stored % 64) as u32)
    }

    /// Whether every position `from..=to` of padded line `line` is set (`from <= to`, both padded
    /// positions of the line): whole words at a time.
    #[inline]
    pub(crate) fn all_set(&self, line: usize, from: usize, to: usize) -> bool {
        let (w0, b0) = self.bit_index(line, from);
        let (w1, b1) = self.bit_index(line, to);
        let from_b0 = !0u64 << b0;
        let to_b1 = !0u64 >> (63 - b1);
        if w0 == w1 {
            let mask = from_b0 & to_b1;
            return self.words[w0] & mask == mask;
        }
        self.words[w0] & from_b0 == from_b0 && self.words[w0 + 1..w1].iter().all(|&w| w == !0) && self.words[w1] & to_b1 == to_b1
    }

    #[inline]
    pub(crate) fn get(&self, line: usize, pos: usize) -> bool {
        let (w, b) = self.bit_index(line, pos);
        (self.words[w] >> b) & 1 == 1
    }

    #[inline]
    fn set(&mut self, line: usize, pos: usize, value: bool) {
        let (w, b) = self.bit_index(line, pos);
        if value {
            self.words[w] |= 1 << b;
        } else {
            self.words[w] &= !(1 << b);
        }
    }

    /// The words of padded line `line`, the leading and trailing zero words included: position
    /// `pos` is bit `(pos + 64) % 64` of word `(pos + 64) / 64` (the jump table's build reads whole
    /// lines).
    #[inline]
    pub(crate) fn line_words(&self, line: usize) -> &[u64] {
        &self.words[line * self.words_per_line..(line + 1) * self.words_per_line]
    }

    /// Bits `pos .. pos + 64` of a line; bit 0 of the result is position `pos`.
    pub(crate) fn window_fwd(&self, line: usize, pos: usize) -> u64 {
        let (w, b) = self.bit_index(line, pos);
        let lo = self.words[w] >> b;
        if b == 0 { lo } else { lo | (self.words[w + 1] << (64 - b)) }
    }

    /// Bits `pos - 63 ..= pos` of a line; bit 63 of the result is position `pos`.
    #[cfg(test)]
    pub(crate) fn window_bwd(&self, line: usize, pos: usize) -> u64 {
        // `pos + 1 - 64` in stored coordinates is `pos + 1` once the 64-bit lead pad is added.
        let (w, b) = self.bit_index(line, pos + 1);
        let w = w - 1;
        let lo = self.words[w] >> b;
        if b == 0 { lo } else { lo | (self.words[w + 1] << (64 - b)) }
    }

    /// Scans forward along `line` from `pos` (exclusive) for the first position that is impassable
    /// or a jump point: a passable cell whose neighbour on either side line is passable while the
    /// neighbour one step back on that side line is impassable (an obstacle just ended).
    /// Returns the position and whether it is a jump point (`false`: it is the blocking cell).
    ///
    /// Reads the precomputed stops of the line one aligned word at a time (the first one masked to
    /// the positions after `pos`), then the passability bit of the stop. The border guarantees a stop.
    #[inline]
    pub(crate) fn scan_fwd(&self, line: usize, pos: usize) -> (usize, bool) {
        let base = line * self.words_per_line;
        let stored = pos + 64;
        let first = base + stored / 64;
        // Only positions strictly after `pos` count.
        let mut mask = (!0u64 << (stored % 64)) << 1;
        for (k, &stops) in self.stops_fwd[first..base + self.words_per_line].iter().enumerate() {
            let stop = stops & mask;
            if stop != 0 {
                let t = stop.trailing_zeros() as usize;
                let word = first + k;
                return ((word - base) * 64 + t - 64, (self.words[word] >> t) & 1 == 1);
            }
            mask = !0;
        }
        unreachable!("the impassable border stops every forward scan")
    }

    /// [`Self::scan_fwd`] towards lower positions.
    #[inline]
    pub(crate) fn scan_bwd(&self, line: usize, pos: usize) -> (usize, bool) {
        let base = line * self.words_per_line;
        let stored = pos + 64;
        let last = base + stored / 64;
        // Only positions strictly before `pos` count.
        let mut mask = (1u64 << (stored % 64)) - 1;
        for (k, &stops) in self.stops_bwd[base..=last].iter().enumerate().rev() {
            let stop = stops & mask;
            if stop != 0 {
                let t = 63 - stop.leading_zeros() as usize;
                return (k * 64 + t - 64, (self.words[base + k] >> t) & 1 == 1);
            }
            mask = !0;
        }
        unreachable!("the impassable border stops every backward scan")
    }

    /// Reference forward scan on unaligned 64-bit windows, kept to test the aligned one against.
    #[cfg(test)]
    fn scan_fwd_windows(&self, line: usize, mut pos: usize) -> (usize, bool) {
        loop {
            let cur = self.window_fwd(line, pos);
            let above = self.window_fwd(line + 1, pos);
            let below = self.window_fwd(line - 1, pos);
            let forced = (above & !(above << 1)) | (below & !(below << 1));
            let stop = (!cur | forced) & !1;
            if stop != 0 {
                let t = stop.trailing_zeros() as usize;
                return (pos + t, (cur >> t) & 1 == 1);
            }
            pos += 63;
        }
    }

    /// Reference backward scan on unaligned windows.
    #[cfg(test)]
    fn scan_bwd_windows(&self, line: usize, mut pos: usize) -> (usize, bool) {
        loop {
            let cur = self.window_bwd(line, pos);
            let above = self.window_bwd(line + 1, pos);
            let below = self.window_bwd(line - 1, pos);
            let forced = (above & !(above >> 1)) | (below & !(below >> 1));
            let stop = (!cur | forced) & !(1 << 63);
            if stop != 0 {
                let t = stop.leading_zeros() as usize;
                return (pos - t, (cur << t) >> 63 == 1);
            }
            pos -= 63;
        }
    }
}

/// One passability class of a [`NavGrid`] in bit-plane form, ready for searching.
///
/// Build it with [`PassMap::build`] and keep it current with [`PassMap::update_rect`] when the grid
/// changes. It never changes by itself; searches only read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassMap {
    /// `[Units: navcells]`
    width: u32,
    /// `[Units: navcells]`
    height: u32,
    /// `[Units: metres]`
    cell_size: Fixed,
    class: PassClass,
    /// Lines are rows (`j`), positions are columns (`i`).
    pub(crate) rows: BitPlane,
    /// Lines are columns (`i`), positions are rows (`j`).
    pub(crate) cols: BitPlane,
    /// One bit per block of [`BLOCK`] × [`BLOCK`] navcells (block `(bi, bj)` holds navcells
    /// `BLOCK·bi ..` and `BLOCK·bj ..`), at `bj · blocks_wide + bi`: set when every navcell of the
    /// block is on the grid and passable. Long segment tests skip the lines of open blocks.
    open_blocks: Vec<u64>,
}

/// Side of the blocks of [`PassMap`]'s open-block bits. `[Units: navcells]`
pub(crate) const BLOCK: u32 = 8;

impl PassMap {
    /// The bit planes of one class of a grid.
    pub fn build(grid: &NavGrid, class: PassClass) -> Self {
        let width = grid.width();
        let height = grid.height();
        let mut map = Self {
            width,
            height,
            cell_size: grid.cell_size(),
            class,
            rows: BitPlane::new(width as usize, height as usize),
            cols: BitPlane::new(height as usize, width as usize),
            open_blocks: vec![0; (width.div_ceil(BLOCK) as usize * height.div_ceil(BLOCK) as usize).div_ceil(64)],
        };
        map.update_rect(grid, CellRect::full(width, height));
        map
    }

    /// Re-reads the navcells `rect` from the grid after it changed there.
    ///
    /// # Panics
    /// When the grid's size differs from the map's.
    pub fn update_rect(&mut self, grid: &NavGrid, rect: CellRect) {
        let CellRect { i0, j0, i1, j1 } = rect;
        assert!(grid.width() == self.width && grid.height() == self.height, "grid size changed under a PassMap");
        let i1 = i1.min(self.width);
        let j1 = j1.min(self.height);
        let masks = grid.blocked_masks();
        let bit = self.class.bit();
        for j in j0..j1 {
            let row = j as usize * self.width as usize;
            for i in i0..i1 {
                let passable = masks[row + i as usize] & bit == 0;
                self.rows.set(j as usize + 1, i as usize + 1, passable);
                self.cols.set(i as usize + 1, j as usize + 1, passable);
            }
        }
        if i0 < i1 && j0 < j1 {
            // The rect's lines are padded lines `j0 + 1 ..= j1` (columns likewise); a line's stops
            // also depend on the lines on both sides.
            self.rows.refresh_stops(j0 as usize..=j1 as usize + 1);
            self.cols.refresh_stops(i0 as usize..=i1 as usize + 1);
            self.refresh_blocks(i0..i1, j0..j1);
        }
    }

    /// Blocks across: the open-block bits' row length.
    fn blocks_wide(&self) -> u32 {
        self.width.div_ceil(BLOCK)
    }

    /// Recomputes the open-block bits of the blocks that hold navcells `is × js`.
    fn refresh_blocks(&mut self, is: std::ops::Range<u32>, js: std::ops::Range<u32>) {
        let wide = self.blocks_wide();
        for bj in js.start / BLOCK..js.end.div_ceil(BLOCK) {
            for bi in is.start / BLOCK..is.end.div_ceil(BLOCK) {
                let (i0, j0) = (bi * BLOCK, bj * BLOCK);
                let inside = i0 + BLOCK <= self.width && j0 + BLOCK <= self.height;
                let open = inside && (j0..j0 + BLOCK).all(|j| self.rows.all_set(j as usize + 1, i0 as usize + 1, (i0 + BLOCK) as usize));
                let k = (bj * wide + bi) as usize;
                if open {
                    self.open_blocks[k / 64] |= 1 << (k % 64);
                } else {
                    self.open_blocks[k / 64] &= !(1 << (k % 64));
                }
            }
        }
    }

    /// Whether block `(bi, bj)` is open (see `open_blocks`); `false` off the grid.
    #[inline]
    pub(crate) fn block_open(&self, bi: u32, bj: u32) -> bool {
        if bi >= self.blocks_wide() || bj >= self.height.div_ceil(BLOCK) {
            return false;
        }
        let k = (bj * self.blocks_wide() + bi) as usize;
        (self.open_blocks[k / 64] >> (k % 64)) & 1 == 1
    }

    /// Marks `cell` impassable in this map alone (a search's private copy with obstacles of its
    /// own stamped in); the grid it was built from is not changed.
    ///
    /// # Panics
    /// When `cell` lies outside the map.
    pub fn block(&mut self, cell: Navcell) {
        let (i, j) = (u32::from(cell.i), u32::from(cell.j));
        assert!(i < self.width && j < self.height, "navcell {cell:?} outside a {} x {} map", self.width, self.height);
        self.block_rect((i, j, i, j), None);
    }

    /// The navcells of `(i0, j0, i1, j1)` (inclusive) that lie on the map, or `None` when none do.
    fn clamp_rect(&self, (i0, j0, i1, j1): (u32, u32, u32, u32)) -> Option<(u32, u32, u32, u32)> {
        let (i1, j1) = (i1.min(self.width.checked_sub(1)?), j1.min(self.height.checked_sub(1)?));
        (i0 <= i1 && j0 <= j1).then_some((i0, j0, i1, j1))
    }

    /// Undoes [`PassMap::block`] over the navcells `i0..=i1 × j0..=j1` (clamped to the map):
    /// their bits, the scan stops that read them and the open-block bits are copied back from
    /// `original`, the map this one was copied from. A search's private copy is stamped and
    /// restored this way, so it is copied once rather than for every search.
    ///
    /// # Panics
    /// When `original`'s size differs from this map's.
    pub fn restore_rect(&mut self, original: &PassMap, rect: (u32, u32, u32, u32)) {
        assert!(original.width == self.width && original.height == self.height, "restore from a map of another size");
        let Some((i0, j0, i1, j1)) = self.clamp_rect(rect) else { return };
        // A navcell's padded row is j + 1 (column i + 1); the stops of the lines on both sides read it.
        self.rows.copy_lines(&original.rows, j0 as usize..=j1 as usize + 2, i0 as usize + 1..=i1 as usize + 1);
        self.cols.copy_lines(&original.cols, i0 as usize..=i1 as usize + 2, j0 as usize + 1..=j1 as usize + 1);
        self.refresh_blocks(i0..i1 + 1, j0..j1 + 1);
    }

    /// Marks every navcell of `i0..=i1 × j0..=j1` (clamped to the map) but `keep` impassable in
    /// this map alone, as [`PassMap::block`] on each would, with the scan stops refreshed once for
    /// the rectangle's span of the lines it touches rather than for whole lines per navcell.
    pub fn block_rect(&mut self, rect: (u32, u32, u32, u32), keep: Option<Navcell>) {
        let Some((i0, j0, i1, j1)) = self.clamp_rect(rect) else { return };
        for j in j0..=j1 {
            for i in i0..=i1 {
                if keep != Some(Navcell::new(i as u16, j as u16)) {
                    self.rows.set(j as usize + 1, i as usize + 1, false);
                    self.cols.set(i as usize + 1, j as usize + 1, false);
                }
            }
        }
        // The rectangle's padded rows are j0 + 1 ..= j1 + 1 (columns likewise); the stops of the
        // lines on both sides read them too.
        self.rows.refresh_stops_span(j0 as usize..=j1 as usize + 2, i0 as usize + 1..=i1 as usize + 1);
        self.cols.refresh_stops_span(i0 as usize..=i1 as usize + 2, j0 as usize + 1..=j1 as usize + 1);
        self.refresh_blocks(i0..i1 + 1, j0..j1 + 1);
    }

    /// Whether navcells `from..=to` of a row (`along_rows`: row `line`, columns `from..=to`) or of a
    /// column (column `line`, rows `from..=to`) are all passable; `from <= to`, all on the grid.
    pub(crate) fn span_passable(&self, along_rows: bool, line: u32, from: u32, to: u32) -> bool {
        let plane = if along_rows { &self.rows } else { &self.cols };
        plane.all_set(line as usize + 1, from as usize + 1, to as usize + 1)
    }

    /// Whether every navcell of the box `i0..=i1` × `j0..=j1` is passable, for signed bounds that
    /// may reach one navcell off the grid on each side (those navcells are impassable); `None`
    /// when the box reaches further off, or is empty. A row of the box at a time.
    #[inline]
    pub(crate) fn box_passable_padded(&self, (i0, i1): (i64, i64), (j0, j1): (i64, i64)) -> Option<bool> {
        let on = |lo: i64, hi: i64, n: u32| lo >= -1 && lo <= hi && hi <= i64::from(n);
        if !on(i0, i1, self.width) || !on(j0, j1, self.height) {
            return None;
        }
        // The border makes every coordinate in -1..=width (and -1..=height) readable.
        // A plain loop: an inclusive range's iterator costs more than the row checks here.
        let (from, to) = ((i0 + 1) as usize, (i1 + 1) as usize);
        let mut line = (j0 + 1) as usize;
        while line <= (j1 + 1) as usize {
            if !self.rows.all_set(line, from, to) {
                return Some(false);
            }
            line += 1;
        }
        Some(true)
    }

    /// Width in navcells.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in navcells.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Side of one navcell in metres.
    pub fn cell_size(&self) -> Fixed {
        self.cell_size
    }

    /// The class these planes describe.
    pub fn class(&self) -> PassClass {
        self.class
    }

    /// Whether a navcell is passable. Cells off the grid are not.
    #[inline]
    pub fn is_passable(&self, cell: Navcell) -> bool {
        u32::from(cell.i) < self.width && u32::from(cell.j) < self.height && self.rows.get(cell.j as usize + 1, cell.i as usize + 1)
    }

    /// The first blocked navcell of row `j` among columns `from..=to`, a word at a time; columns
    /// and the row may reach one navcell off the grid (blocked there), and `None` when every navcell
    /// of the span is passable or the span is empty or further off.
    pub(crate) fn first_blocked_in_row(&self, j: i64, from: i64, to: i64) -> Option<i64> {
        self.first_in_row(j, from, to, true)
    }

    /// As [`Self::first_blocked_in_row`], the first passable navcell.
    pub(crate) fn first_open_in_row(&self, j: i64, from: i64, to: i64) -> Option<i64> {
        self.first_in_row(j, from, to, false)
    }

    fn first_in_row(&self, j: i64, from: i64, to: i64, blocked: bool) -> Option<i64> {
        let (w, h) = (i64::from(self.width), i64::from(self.height));
        if from > to || !(-1..=h).contains(&j) || from < -1 || to > w {
            return None;
        }
        let plane = &self.rows;
        let line = (j + 1) as usize;
        // Stored bit of column i: i + 1 (the border) + 64 (the lead pad word).
        let (first, last) = ((from + 65) as usize, (to + 65) as usize);
        let base = line * plane.words_per_line;
        for word in first / 64..=last / 64 {
            let mut found = if blocked { !plane.words[base + word] } else { plane.words[base + word] };
            if word == first / 64 {
                found &= !0u64 << (first % 64);
            }
            if word == last / 64 {
                found &= !0u64 >> (63 - last % 64);
            }
            if found != 0 {
                return Some((word * 64 + found.trailing_zeros() as usize) as i64 - 65);
            }
        }
        None
    }

    /// Whether `(i, j)` is passable, for signed coordinates that may lie one cell off the grid.
    #[inline]
    pub(crate) fn passable_padded(&self, i: i64, j: i64) -> bool {
        // The border makes every coordinate in -1..=width (and -1..=height) readable.
        self.rows.get((j + 1) as usize, (i + 1) as usize)
    }

    /// Whether the diagonal step from `(i, j)` to `(i + dx, j + dy)` is legal: the target and both
    /// navcells beside the step passable ([`Self::diagonal_ahead`], all three).
    #[inline(always)]
    pub(crate) fn diagonal_step_legal(&self, i: i32, j: i32, dx: i32, dy: i32) -> bool {
        let (beside_x, beside_y, target) = self.diagonal_ahead(i, j, dx, dy);
        beside_x & beside_y & target
    }

    /// The three navcells ahead of `(i, j)` in diagonal direction `(dx, dy)`: whether `(i + dx, j)`,
    /// `(i, j + dy)` and `(i + dx, j + dy)` are passable. The step is legal when all three are; a
    /// straight ray from `(i, j)` finds nothing when its first navcell is impassable. Coordinates
    /// may lie one cell off the grid, as for [`Self::passable_padded`]; the two rows are cut from
    /// one slice and the two columns' word and bit computed once for the three reads, which leaves
    /// fewer bounds checks than three reads apart.
    #[inline(always)]
    pub(crate) fn diagonal_ahead(&self, i: i32, j: i32, dx: i32, dy: i32) -> (bool, bool, bool) {
        let wpl = self.rows.words_per_line;
        let low = (j + 1).min(j + dy + 1) as usize * wpl;
        let (lower, upper) = self.rows.words[low..low + 2 * wpl].split_at(wpl);
        let (row, next_row) = if dy > 0 { (lower, upper) } else { (upper, lower) };
        let (pos, next_pos) = ((i + 1) as usize + 64, (i + dx + 1) as usize + 64);
        let (w, b, nw, nb) = (pos / 64, pos % 64, next_pos / 64, next_pos % 64);
        ((row[nw] >> nb) & 1 == 1, (next_row[w] >> b) & 1 == 1, (next_row[nw] >> nb) & 1 == 1)
    }

    /// Checks that both planes agree with each other and that the border is impassable.
    ///
    /// # Errors
    /// A description of the first disagreement.
    pub fn check_invariants(&self) -> Result<(), String> {
        let (w, h) = (self.width as usize, self.height as usize);
        for j in 0..h + 2 {
            for i in 0..w + 2 {
                let a = self.rows.get(j, i);
                let b = self.cols.get(i, j);
                if a != b {
                    return Err(format!("row and column planes disagree at padded ({i}, {j})"));
                }
                let border = i == 0 || j == 0 || i == w + 1 || j == h + 1;
                if border && a {
                    return Err(format!("border cell at padded ({i}, {j}) is passable"));
                }
            }
        }
        let mut fresh = self.clone();
        fresh.refresh_blocks(0..self.width, 0..self.height);
        if fresh.open_blocks != self.open_blocks {
            return Err("the open-block bits disagree with the passability".to_string());
        }
        for (name, plane) in [("row", &self.rows), ("column", &self.cols)] {
            let mut fresh = plane.clone();
            fresh.refresh_stops(0..=plane.n_lines_padded());
            if fresh.stops_fwd != plane.stops_fwd || fresh.stops_bwd != plane.stops_bwd {
                return Err(format!("the {name} plane's scan stops disagree with its passability"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{edits_equal_a_rebuild, grid_from};

    #[test]
    fn blocking_cells_of_a_copy_equals_a_build_with_them_blocked() {
        let rows: Vec<String> = (0..70).map(|j| (0..130).map(|i| if (i * 7 + j * 3) % 11 == 0 { '#' } else { '.' }).collect()).collect();
        let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
        let mut grid = grid_from(&rows);
        let class = PassClass::new(0).unwrap();
        let mut map = PassMap::build(&grid, class);
        // Word edges, map edges and cells already blocked.
        for (i, j) in [(0, 0), (63, 5), (64, 5), (65, 69), (129, 0), (129, 69), (7, 0), (100, 33)] {
            let cell = Navcell::new(i, j);
            map.block(cell);
            grid.set_passable(cell, class, false);
        }
        map.check_invariants().unwrap();
        assert_eq!(map, PassMap::build(&grid, class));
    }

    #[test]
    fn windows_read_across_word_boundaries() {
        let mut row = String::new();
        for i in 0..200 {
            row.push(if i % 3 == 0 { '#' } else { '.' });
        }
        let grid = grid_from(&[&row]);
        let map = PassMap::build(&grid, PassClass::new(0).unwrap());
        map.check_invariants().unwrap();
        for pos in 0..=201usize {
            let fwd = map.rows.window_fwd(1, pos);
            for b in 0..64 {
                let expected = pos + b <= 201 && map.rows.get(1, pos + b);
                assert_eq!((fwd >> b) & 1 == 1, expected, "fwd pos {pos} bit {b}");
            }
            if pos >= 1 {
                let bwd = map.rows.window_bwd(1, pos);
                for b in 0..64usize {
                    let expected = pos + b >= 63 && map.rows.get(1, pos + b - 63);
                    assert_eq!((bwd >> b) & 1 == 1, expected, "bwd pos {pos} bit {b}");
                }
            }
        }
    }

    #[test]
    fn scans_find_obstacle_ends_and_walls() {
        // Row 1 (the middle) is scanned; the row above has an obstacle ending at column 5.
        let grid = grid_from(&[
            "#####...............................................................................",
            "....................................................................................",
            "....................................................................................",
        ]);
        let map = PassMap::build(&grid, PassClass::new(0).unwrap());
        // Middle row is j = 1, padded line 2; column 0 is padded position 1.
        assert_eq!(map.rows.scan_fwd(2, 1), (6, true), "forced at column 5 (padded 6)");
        let end = grid.width() as usize + 1;
        assert_eq!(map.rows.scan_fwd(2, 7), (end, false), "runs into the east border");
        assert_eq!(map.rows.scan_bwd(2, 60), (0, false), "no obstacle end going west");
    }

    proptest::proptest! {
        /// The first blocked (and the first passable) navcell of a row span, read a word at a time, is the one a walk over
        /// the navcells finds (off the grid counts as blocked), on random maps of widths round the
        /// word size, for every row and random spans.
        #[test]
        fn first_blocked_in_row_matches_a_walk(width in 1u32..200, height in 1u32..6, seed in proptest::prelude::any::<u64>(), density in 0u64..30, a in -3i64..205, b in -3i64..205) {
            let class = crate::test_support::CLASS;
            let map = PassMap::build(&crate::test_support::random_grid(width, height, seed, density), class);
            let (from, to) = (a.min(b), a.max(b));
            let (w, h) = (i64::from(width), i64::from(height));
            for j in -2..=h + 1 {
                let readable = (-1..=h).contains(&j) && from >= -1 && to <= w;
                let open = |i: i64| match (u16::try_from(i), u16::try_from(j)) {
                    (Ok(i), Ok(j)) => map.is_passable(Navcell::new(i, j)),
                    _ => false,
                };
                let walk = (from..=to).find(|&i| !open(i));
                proptest::prop_assert_eq!(map.first_blocked_in_row(j, from, to), walk.filter(|_| readable), "row {}, {}..={}", j, from, to);
                let walk_open = (from..=to).find(|&i| open(i));
                proptest::prop_assert_eq!(map.first_open_in_row(j, from, to), walk_open.filter(|_| readable), "row {}, {}..={}", j, from, to);
            }
        }
    }

    proptest::proptest! {
        /// The aligned scans agree with the window scans at every position of random planes.
        #[test]
        fn aligned_scans_match_window_scans(width in 1u32..300, seed in proptest::prelude::any::<u64>(), density in 0u64..100) {
            let class = crate::test_support::CLASS;
            let grid = crate::test_support::random_grid(width, 3, seed, density);
            let map = PassMap::build(&grid, class);
            for pos in 1..=width as usize {
                proptest::prop_assert_eq!(map.rows.scan_fwd(2, pos), map.rows.scan_fwd_windows(2, pos), "fwd at {}", pos);
                proptest::prop_assert_eq!(map.rows.scan_bwd(2, pos), map.rows.scan_bwd_windows(2, pos), "bwd at {}", pos);
            }
        }
    }

    proptest::proptest! {
        /// Stamped rectangles, restored one by one in any order, give back exactly the map they
        /// were stamped on; while stamped, the map is a build with them blocked.
        #[test]
        fn restoring_stamped_rects_gives_back_the_original(
            w in 1u32..140,
            h in 1u32..40,
            seed in proptest::prelude::any::<u64>(),
            stamps in proptest::collection::vec((0u32..140, 0u32..40, 0u32..6, 0u32..6), 1..8),
        ) {
            let class = crate::test_support::CLASS;
            let mut grid = crate::test_support::random_grid(w, h, seed, 20);
            let original = PassMap::build(&grid, class);
            let mut map = original.clone();
            let rects: Vec<(u32, u32, u32, u32)> = stamps.iter().map(|&(i, j, dw, dh)| (i % w, j % h, (i % w + dw).min(w - 1), (j % h + dh).min(h - 1))).collect();
            for (k, &(i0, j0, i1, j1)) in rects.iter().enumerate() {
                // Every other rect navcell by navcell, the others at once.
                if k % 2 == 1 {
                    map.block_rect((i0, j0, i1, j1), None);
                }
                for j in j0..=j1 {
                    for i in i0..=i1 {
                        if k % 2 == 0 {
                            map.block(Navcell::new(i as u16, j as u16));
                        }
                        grid.set_passable(Navcell::new(i as u16, j as u16), class, false);
                    }
                }
            }
            proptest::prop_assert_eq!(&map, &PassMap::build(&grid, class));
            for &rect in rects.iter().rev() {
                map.restore_rect(&original, rect);
            }
            // Overlapping rects restore each other's navcells too: the whole map comes back.
            proptest::prop_assert_eq!(&map, &original);
            map.check_invariants().map_err(proptest::test_runner::TestCaseError::fail)?;
        }
    }

    proptest::proptest! {
        /// Patching the planes after each edit gives exactly the planes of a fresh build.
        #[test]
        fn update_rect_equals_a_rebuild(
            w in 1u32..100,
            h in 1u32..40,
            edits in proptest::collection::vec((0u32..100, 0u32..40, 1u32..12, 1u32..12, proptest::prelude::any::<bool>()), 1..12),
        ) {
            let class = PassClass::new(0).unwrap();
            let mut grid = NavGrid::new(w, h, 1, Fixed::ONE).unwrap();
            let mut map = PassMap::build(&grid, class);
            edits_equal_a_rebuild(&mut grid, class, &mut map, &edits, |g| PassMap::build(g, class), |map, g, r, _| map.update_rect(g, r), |_, _, _| Ok(()))
                .map_err(proptest::test_runner::TestCaseError::fail)?;
            map.check_invariants().map_err(proptest::test_runner::TestCaseError::fail)?;
        }
    }
}
