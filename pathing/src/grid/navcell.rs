//! Navcell coordinates: the integer cells of the navigation grid.

use serde::{Deserialize, Serialize};

/// A navcell `(i, j)`: it covers `i × size ≤ x < (i+1) × size` and `j × size ≤ z < (j+1) × size`.
/// `i` grows east, `j` grows north. `[Limit: < 65535 on each axis]`
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Navcell {
    /// Column, east-growing.
    pub i: u16,
    /// Row, north-growing.
    pub j: u16,
}

impl Navcell {
    /// A navcell from its column and row.
    pub const fn new(i: u16, j: u16) -> Self {
        Self { i, j }
    }
}

impl std::fmt::Display for Navcell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({}, {})", self.i, self.j)
    }
}

/// A rectangle of navcells `i0 ≤ i < i1`, `j0 ≤ j < j1` (half-open; empty when `i0 ≥ i1` or
/// `j0 ≥ j1`). Dirty regions, clip windows and bounding boxes all use it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CellRect {
    /// First column.
    pub i0: u32,
    /// First row.
    pub j0: u32,
    /// One past the last column.
    pub i1: u32,
    /// One past the last row.
    pub j1: u32,
}

impl CellRect {
    /// The rectangle `i0 ≤ i < i1`, `j0 ≤ j < j1`.
    pub const fn new(i0: u32, j0: u32, i1: u32, j1: u32) -> Self {
        Self { i0, j0, i1, j1 }
    }

    /// The whole of a `width × height` grid.
    pub const fn full(width: u32, height: u32) -> Self {
        Self { i0: 0, j0: 0, i1: width, j1: height }
    }

    /// Whether it holds no navcell.
    pub const fn is_empty(&self) -> bool {
        self.i0 >= self.i1 || self.j0 >= self.j1
    }

    /// The smallest rectangle holding both (an empty one is ignored).
    pub fn union(&self, other: &CellRect) -> CellRect {
        if self.is_empty() {
            return *other;
        }
        if other.is_empty() {
            return *self;
        }
        CellRect::new(self.i0.min(other.i0), self.j0.min(other.j0), self.i1.max(other.i1), self.j1.max(other.j1))
    }

    /// The navcells in both (possibly empty).
    pub fn intersect(&self, other: &CellRect) -> CellRect {
        CellRect::new(self.i0.max(other.i0), self.j0.max(other.j0), self.i1.min(other.i1), self.j1.min(other.j1))
    }

    /// Grown by `margin` navcells on every side, then clipped to a `width × height` grid.
    pub fn grow_clipped(&self, margin: u32, width: u32, height: u32) -> CellRect {
        CellRect::new(
            self.i0.saturating_sub(margin),
            self.j0.saturating_sub(margin),
            self.i1.saturating_add(margin).min(width),
            self.j1.saturating_add(margin).min(height),
        )
    }

    /// Whether the navcell `(i, j)` is inside.
    pub const fn contains(&self, i: u32, j: u32) -> bool {
        i >= self.i0 && i < self.i1 && j >= self.j0 && j < self.j1
    }

    /// Number of navcells (0 when empty).
    pub fn area(&self) -> u64 {
        if self.is_empty() { 0 } else { u64::from(self.i1 - self.i0) * u64::from(self.j1 - self.j0) }
    }
}
