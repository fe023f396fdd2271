//! The navcell grid: one passability bit per class for every navcell.
//!
//! Storage is one `u16` per navcell, row-major with `j` (north) as the slow axis. Bit `k` set means
//! "impassable for class `k`", so a freshly made grid is passable everywhere and obstructions are
//! OR-ed in, as 0 A.D. does. 16 classes fit, and a whole 1024×1024 grid is 2 MiB.
//! Searches do not read this layout directly: they use a [`crate::PassMap`], the bit-plane form of
//! one class, built from it.

use crate::geometry::Fixed;
use crate::grid::navcell::Navcell;

/// Largest width or height of a grid. `[Units: navcells]`
pub const MAX_SIDE: u32 = 65535;

/// Largest navcell side, so that every world coordinate on a grid stays below 2^24 metres and the
/// exact goal predicates stay inside `i128`. `[Units: metres]`
pub const MAX_CELL_SIZE: Fixed = Fixed::const_from_int(256);

/// Most passability classes a grid can hold.
pub const MAX_CLASSES: u8 = 16;

/// A passability class: an index into the class bits of every navcell. `[Limit: < 16]`
///
/// It serializes as its `u8`; reading one at or above [`MAX_CLASSES`] is an error, so a command or
/// snapshot never holds a class no grid could have (a class the grid does not define is still
/// possible, and refused where it is used).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "u8", into = "u8")]
pub struct PassClass(u8);

impl PassClass {
    /// The class with this index, if it is below [`MAX_CLASSES`].
    pub const fn new(index: u8) -> Option<Self> {
        if index < MAX_CLASSES { Some(Self(index)) } else { None }
    }

    /// The class with this index, for constants and literals.
    ///
    /// # Panics
    /// When `index` is not below [`MAX_CLASSES`] (at compile time in a constant).
    pub const fn of(index: u8) -> Self {
        assert!(index < MAX_CLASSES, "a passability class index is below 16");
        Self(index)
    }

    /// The class index.
    pub const fn index(self) -> u8 {
        self.0
    }

    /// The class bit in a navcell's mask.
    pub const fn bit(self) -> u16 {
        1 << self.0
    }
}

impl TryFrom<u8> for PassClass {
    type Error = String;

    fn try_from(index: u8) -> Result<Self, String> {
        Self::new(index).ok_or_else(|| format!("expected a passability class below {MAX_CLASSES}, found {index}"))
    }
}

impl From<PassClass> for u8 {
    fn from(class: PassClass) -> u8 {
        class.0
    }
}

/// `3`: the class index, as every tool prints a class.
impl std::fmt::Display for PassClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Why a grid could not be made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GridError {
    /// Width or height was 0 or above [`MAX_SIDE`].
    BadSize {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
    },
    /// More classes than [`MAX_CLASSES`], or none.
    BadClassCount {
        /// Requested class count.
        n_classes: u8,
    },
    /// The navcell size was not in `(0, MAX_CELL_SIZE]`.
    BadCellSize {
        /// Requested size.
        cell_size: Fixed,
    },
}

impl std::fmt::Display for GridError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GridError::BadSize { width, height } => {
                write!(f, "grid size {width}x{height} is outside 1..={MAX_SIDE} on some axis")
            }
            GridError::BadClassCount { n_classes } => {
                write!(f, "{n_classes} passability classes requested, expected 1..={MAX_CLASSES}")
            }
            GridError::BadCellSize { cell_size } => {
                write!(f, "navcell size {cell_size} is outside (0, {MAX_CELL_SIZE}]")
            }
        }
    }
}

impl std::error::Error for GridError {}

/// A navcell grid with up to 16 passability classes.
#[derive(Clone, PartialEq, Eq)]
pub struct NavGrid {
    /// `[Units: navcells] [Limit: 1..=65535]`
    width: u16,
    /// `[Units: navcells] [Limit: 1..=65535]`
    height: u16,
    /// Side of one navcell. `[Units: metres] [Limit: > 0]`
    cell_size: Fixed,
    /// Number of classes in use; bits at or above it are always clear. `[Limit: 1..=16]`
    n_classes: u8,
    /// Impassable-class bits per navcell, index `j * width + i`.
    blocked: Vec<u16>,
}

impl NavGrid {
    /// A grid passable everywhere for every class.
    ///
    /// # Errors
    /// [`GridError`] when a size, the class count or the navcell size is out of range.
    pub fn new(width: u32, height: u32, n_classes: u8, cell_size: Fixed) -> Result<Self, GridError> {
        if width == 0 || height == 0 || width > MAX_SIDE || height > MAX_SIDE {
            return Err(GridError::BadSize { width, height });
        }
        if n_classes == 0 || n_classes > MAX_CLASSES {
            return Err(GridError::BadClassCount { n_classes });
        }
        if cell_size <= Fixed::ZERO || cell_size > MAX_CELL_SIZE {
            return Err(GridError::BadCellSize { cell_size });
        }
        let n_cells = width as usize * height as usize;
        Ok(Self { width: width as u16, height: height as u16, cell_size, n_classes, blocked: vec![0; n_cells] })
    }

    /// Width in navcells.
    pub fn width(&self) -> u32 {
        u32::from(self.width)
    }

    /// Height in navcells.
    pub fn height(&self) -> u32 {
        u32::from(self.height)
    }

    /// Side of one navcell in metres.
    pub fn cell_size(&self) -> Fixed {
        self.cell_size
    }

    /// Number of passability classes.
    pub fn n_classes(&self) -> u8 {
        self.n_classes
    }

    /// Number of navcells.
    pub fn n_cells(&self) -> usize {
        self.blocked.len()
    }

    /// Whether `(i, j)` lies on the grid.
    pub fn contains(&self, i: i64, j: i64) -> bool {
        i >= 0 && j >= 0 && i < i64::from(self.width) && j < i64::from(self.height)
    }

    /// Dense index of a navcell, `j * width + i`.
    ///
    /// # Panics
    /// Debug builds panic when the cell is off the grid.
    #[inline]
    pub fn index(&self, cell: Navcell) -> usize {
        debug_assert!(cell.i < self.width && cell.j < self.height, "navcell {cell} off a {}x{} grid", self.width, self.height);
        usize::from(cell.j) * usize::from(self.width) + usize::from(cell.i)
    }

    /// The impassable-class mask of a navcell.
    #[inline]
    pub fn blocked_mask(&self, cell: Navcell) -> u16 {
        self.blocked[self.index(cell)]
    }

    /// Whether a navcell is passable for a class. Off-grid cells are impassable.
    #[inline]
    pub fn is_passable(&self, cell: Navcell, class: PassClass) -> bool {
        cell.i < self.width && cell.j < self.height && self.blocked[self.index(cell)] & class.bit() == 0
    }

    /// Makes a navcell passable or impassable for one class.
    ///
    /// # Panics
    /// When the cell is off the grid or the class is not in use.
    pub fn set_passable(&mut self, cell: Navcell, class: PassClass, passable: bool) {
        assert!(class.index() < self.n_classes, "class {} not in use (grid has {})", class.index(), self.n_classes);
        let idx = self.index(cell);
        if passable {
            self.blocked[idx] &= !class.bit();
        } else {
            self.blocked[idx] |= class.bit();
        }
    }

    /// Replaces the whole impassable-class mask of a navcell; bits of classes not in use are dropped.
    pub fn set_blocked_mask(&mut self, cell: Navcell, mask: u16) {
        let idx = self.index(cell);
        self.blocked[idx] = mask & self.class_bits();
    }

    /// ORs `mask` (bits of classes not in use dropped) into the navcells `i0 ≤ i < i1` of row `j`.
    ///
    /// # Panics
    /// When the span is off the grid.
    #[inline]
    pub fn block_span(&mut self, j: u32, i0: u32, i1: u32, mask: u16) {
        let mask = mask & self.class_bits();
        let row = j as usize * usize::from(self.width);
        for m in &mut self.blocked[row + i0 as usize..row + i1 as usize] {
            *m |= mask;
        }
    }

    /// The raw masks, writable, for the crate's builders (which keep bits inside `class_bits`).
    pub(crate) fn blocked_masks_mut(&mut self) -> &mut [u16] {
        &mut self.blocked
    }

    /// The bits of the classes in use.
    pub fn class_bits(&self) -> u16 {
        if self.n_classes >= 16 { u16::MAX } else { (1u16 << self.n_classes) - 1 }
    }

    /// The raw masks, row-major from the south-west corner.
    pub fn blocked_masks(&self) -> &[u16] {
        &self.blocked
    }

    /// Checks every invariant of the grid; `Err` names the first one broken.
    ///
    /// # Errors
    /// A description of the broken invariant.
    pub fn check_invariants(&self) -> Result<(), String> {
        if self.width == 0 || self.height == 0 {
            return Err(format!("empty grid {}x{}", self.width, self.height));
        }
        if self.blocked.len() != usize::from(self.width) * usize::from(self.height) {
            return Err(format!("{} masks for a {}x{} grid", self.blocked.len(), self.width, self.height));
        }
        if self.n_classes == 0 || self.n_classes > MAX_CLASSES {
            return Err(format!("{} classes", self.n_classes));
        }
        if self.cell_size <= Fixed::ZERO || self.cell_size > MAX_CELL_SIZE {
            return Err(format!("navcell size {}", self.cell_size));
        }
        let unused = !self.class_bits();
        if let Some(pos) = self.blocked.iter().position(|&m| m & unused != 0) {
            return Err(format!("navcell index {pos} has bits of classes not in use: {:#06x}", self.blocked[pos]));
        }
        Ok(())
    }
}

impl std::fmt::Debug for NavGrid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "NavGrid {}x{} cell {} classes {}", self.width, self.height, self.cell_size, self.n_classes)?;
        for j in (0..self.height).rev() {
            for i in 0..self.width {
                let mask = self.blocked_mask(Navcell::new(i, j));
                let c = if mask == 0 {
                    '.'
                } else if mask == self.class_bits() {
                    '#'
                } else {
                    '+'
                };
                write!(f, "{c}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_outside_the_limits_are_rejected() {
        assert!(NavGrid::new(0, 5, 1, Fixed::ONE).is_err());
        assert!(NavGrid::new(65536, 5, 1, Fixed::ONE).is_err());
        assert!(NavGrid::new(5, 5, 17, Fixed::ONE).is_err());
        assert!(NavGrid::new(5, 5, 1, Fixed::ZERO).is_err());
        let grid = NavGrid::new(65535, 1, 16, Fixed::ONE).unwrap();
        grid.check_invariants().unwrap();
    }

    #[test]
    fn class_bits_are_independent() {
        let mut grid = NavGrid::new(3, 2, 2, Fixed::ONE).unwrap();
        let land = PassClass::new(0).unwrap();
        let water = PassClass::new(1).unwrap();
        let cell = Navcell::new(2, 1);
        grid.set_passable(cell, land, false);
        assert!(!grid.is_passable(cell, land));
        assert!(grid.is_passable(cell, water));
        assert!(!grid.is_passable(Navcell::new(3, 0), land), "off-grid cells are impassable");
        grid.set_blocked_mask(cell, 0xffff);
        assert_eq!(grid.blocked_mask(cell), 0b11);
        grid.check_invariants().unwrap();
    }
}
