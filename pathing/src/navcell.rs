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
