//! Terrain to per-class passability: a heightmap and a water level become, for every navcell, the
//! mask of classes whose terrain bounds it fails ([`TerrainPass::base_masks`]), the map border is
//! blocked for every class, and each class's impassable navcells grow by its clearance
//! ([`expand_clearance`]).
//!
//! # Terrain values of a navcell
//!
//! The heightmap gives a height at every tile vertex; inside a tile the ground is the bilinear
//! interpolation of its four corners. Each navcell is sampled at its centre `((i + ½)·s, (j + ½)·s)`
//! (`s` the navcell size), clamped to the heightmap's extent (so navcells beyond the terrain take
//! the values at the nearest point of its edge). A centre on a tile edge belongs to the tile east or
//! north of it. Then, exactly:
//!
//! - **water depth** = water level − ground height at the centre (negative on dry land);
//! - **slope** = the magnitude of the gradient of the tile's bilinear surface at the centre, as rise
//!   over run; a class passes when `gx² + gz² < maxSlope²` (strict, as 0 A.D.);
//! - **shore distance** = the Euclidean distance in metres from the navcell's centre to the centre of
//!   the nearest *water navcell* (depth `> 0`) of the grid: 0 on water, `s·√(di² + dj²)` on land, and
//!   infinite when the grid holds no water (a minimum bound then passes, a maximum bound fails).
//!
//! 0 A.D. differs: its slope is per terrain tile ((highest − lowest corner) / tile size), and its
//! shore distance is a Manhattan distance in whole tiles (×4 m) from the tiles next to water. Ours
//! vary smoothly across a tile and are round; a class file tuned on 0 A.D. numbers gives similar,
//! not identical, grids.
//!
//! Every comparison is exact: heights are interpolated with integer weights, depth and slope are
//! exact integers scaled by a common denominator ([`TerrainPass`]), and each class bound is scaled
//! the same way once (`i128`, with a 256-bit product where needed). Shore distances come from an
//! exact Euclidean distance transform in squared navcells (the separable lower-envelope algorithm
//! of Meijster et al. and of Felzenszwalb and Huttenlocher, with its breakpoints kept as fractions).
//!
//! # Painted navcells
//!
//! A grid may carry a painted layer, one [`CellKind`] per navcell in navcell order (row `j = 0`
//! first, `i` fastest), given to [`TerrainPass::with_cells`]: a Moving AI `.map` or a grid-text
//! file made into a world. On a painted grid the painting replaces the heightmap's water, navcell
//! by navcell, and the class bounds are then compared exactly as above:
//!
//! - **water depth** is [`PAINTED_WATER_DEPTH`] (16 m) on [`CellKind::Water`] and
//!   [`PAINTED_GROUND_DEPTH`] (−16 m: ground 16 m above the water) on [`CellKind::Ground`] and
//!   [`CellKind::Blocked`], whatever the heightmap and the water level say there;
//! - **shore distance** is the Euclidean distance between centres to the nearest
//!   [`CellKind::Water`] navcell, by the same exact transform: 0 on painted water,
//!   `s·√(di² + dj²)` elsewhere, infinite when no navcell is painted water. Painted water is the
//!   only water of a painted grid: blocked navcells are not water, and neither is a navcell the
//!   heightmap would put under water;
//! - **slope** still comes from the heightmap (0 on the flat terrain of
//!   [`WorldDesc::from_cells`](crate::build::passability::WorldDesc::from_cells));
//! - [`CellKind::Blocked`] is impassable for every class, as the border is.
//!
//! So a land class whose `maxWaterDepth` is below 16 m is blocked on painted water, a ship class
//! whose `minWaterDepth` is above −16 m is blocked on painted ground, and with one such class of
//! each (clearance 0) a Moving AI map's world is exactly the map's own two-class grid.
//!
//! # Border and clearance
//!
//! [`MapBorder`] blocks a square frame or the outside of an ellipse for every class.
//! [`expand_clearance`] then blocks, for each class, every navcell near an impassable one: within
//! Chebyshev distance `c` for [`ClearanceShape::Square`], within Euclidean distance `c` between
//! centres for [`ClearanceShape::Round`], `c` = [`ClassDef::clearance_cells`]. Navcells off the grid
//! count as passable (the border is what keeps units off the edge). The expansion works on bit
//! rows: a horizontal dilation by shift-or doubling, then an OR over row offsets.
//!
//! [`ClassDef::clearance_cells`]: crate::build::classes::ClassDef::clearance_cells
//!
//! # Example
//!
//! ```
//! use pathing::classes::ClassSet;
//! use pathing::terrain::{GridSpec, MapBorder, Terrain, TerrainPass};
//! use pathing::{Fixed, Navcell};
//!
//! // 4 × 4 tiles of 4 m at 1 m above the water, with one vertex 3 m below it: a small lake.
//! let mut terrain = Terrain::flat(4, 4, Fixed::from_num(4), Fixed::ONE, Fixed::ZERO).unwrap();
//! terrain.set_vertex_height(2, 2, Fixed::from_num(-3)).unwrap();
//! let spec = GridSpec::covering(&terrain, Fixed::ONE).unwrap();
//! assert_eq!((spec.width, spec.height), (16, 16));
//!
//! let pass = TerrainPass::new(&terrain, spec).unwrap();
//! assert!(pass.is_water(7, 7) && !pass.is_water(2, 2));
//!
//! let classes = ClassSet::zero_ad_defaults();
//! let default = classes.by_name("default").unwrap();
//! let grid = pass.terrain_grid(&classes, MapBorder::Square { width: 1 }).unwrap();
//! assert!(grid.is_passable(Navcell::new(2, 2), default));
//! assert!(!grid.is_passable(Navcell::new(1, 1), default), "within clearance 1 of the border");
//! assert!(!grid.is_passable(Navcell::new(7, 7), default), "in the lake, too steep");
//! ```

use crate::build::classes::{ClassSet, ClearanceShape};
use crate::geometry::decimal::WORLD_LIMIT;
use crate::geometry::{Fixed, div_ceil, div_floor, raw};
use crate::grid::nav_grid::{MAX_CELL_SIZE, NavGrid};
use crate::grid::navcell::{CellRect, Navcell};
use std::ops::{Add, Mul, Sub};

/// Most terrain tiles on either side of a heightmap.
pub const MAX_TILES: u32 = 16384;

/// Largest terrain tile side. `[Units: metres]`
pub const MAX_TILE_SIZE: Fixed = Fixed::const_from_int(256);

/// Largest width or height of a grid sampled from terrain: squared shore distances of every
/// navcell pair then fit a `u32`. `[Units: navcells]`
pub const MAX_TERRAIN_GRID_SIDE: u32 = 46340;

pub use crate::grid::cell_kind::{CellKind, PAINTED_GROUND_DEPTH, PAINTED_WATER_DEPTH};

/// Why terrain or a grid built from it could not be made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TerrainError {
    /// A tile count was 0 or above [`MAX_TILES`].
    BadTileCount {
        /// Requested tiles along x.
        tiles_w: u32,
        /// Requested tiles along z.
        tiles_h: u32,
    },
    /// The tile size was not in `(0, MAX_TILE_SIZE]`.
    BadTileSize {
        /// Requested size.
        tile_size: Fixed,
    },
    /// The heightmap did not hold `(tiles_w + 1) × (tiles_h + 1)` heights.
    HeightCount {
        /// Heights needed.
        expected: usize,
        /// Heights given.
        found: usize,
    },
    /// A height was beyond ±[`WORLD_LIMIT`].
    HeightOutOfRange {
        /// Vertex column.
        vx: u32,
        /// Vertex row.
        vz: u32,
        /// The height.
        height: Fixed,
    },
    /// The water level was beyond ±[`WORLD_LIMIT`].
    WaterLevelOutOfRange {
        /// The level.
        water_level: Fixed,
    },
    /// A vertex is not on the heightmap.
    VertexOffMap {
        /// Vertex column.
        vx: u32,
        /// Vertex row.
        vz: u32,
    },
    /// A grid's width or height was outside `1..=MAX_TERRAIN_GRID_SIDE`, or its navcell size outside
    /// `(0, MAX_CELL_SIZE]`.
    BadGridSpec {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
        /// Requested navcell size.
        cell_size: Fixed,
    },
    /// A rectangle reaches past the grid.
    RectOffGrid {
        /// The rectangle.
        rect: CellRect,
        /// Grid width.
        width: u32,
        /// Grid height.
        height: u32,
    },
    /// A mask buffer had the wrong length.
    BufferLength {
        /// Masks needed.
        expected: usize,
        /// Masks given.
        found: usize,
    },
    /// The output grid's size or navcell size differs from the input's.
    GridMismatch {
        /// Expected grid.
        expected: GridSpec,
        /// The output grid.
        found: GridSpec,
    },
    /// The output grid has fewer classes than the class set.
    TooFewGridClasses {
        /// Classes in the set.
        needed: u8,
        /// Classes of the grid.
        found: u8,
    },
    /// A painted layer was neither empty nor one [`CellKind`] per navcell.
    CellCount {
        /// Navcells of the grid (`width × height`).
        expected: usize,
        /// Painted navcells given.
        found: usize,
    },
}

impl std::fmt::Display for TerrainError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TerrainError::BadTileCount { tiles_w, tiles_h } => {
                write!(f, "terrain of {tiles_w}x{tiles_h} tiles, expected 1..={MAX_TILES} on each side")
            }
            TerrainError::BadTileSize { tile_size } => write!(f, "tile size {tile_size}, expected (0, {MAX_TILE_SIZE}]"),
            TerrainError::HeightCount { expected, found } => write!(f, "{found} heights, expected {expected}"),
            TerrainError::HeightOutOfRange { vx, vz, height } => {
                write!(f, "height {height} at vertex ({vx}, {vz}), expected within ±{WORLD_LIMIT}")
            }
            TerrainError::WaterLevelOutOfRange { water_level } => {
                write!(f, "water level {water_level}, expected within ±{WORLD_LIMIT}")
            }
            TerrainError::VertexOffMap { vx, vz } => write!(f, "vertex ({vx}, {vz}) is off the heightmap"),
            TerrainError::BadGridSpec { width, height, cell_size } => write!(
                f,
                "grid {width}x{height} with navcell size {cell_size}, expected sides in 1..={MAX_TERRAIN_GRID_SIDE} and a size in (0, {MAX_CELL_SIZE}]"
            ),
            TerrainError::RectOffGrid { rect, width, height } => {
                write!(f, "rectangle [{}, {}) x [{}, {}) reaches past a {width}x{height} grid", rect.i0, rect.i1, rect.j0, rect.j1)
            }
            TerrainError::BufferLength { expected, found } => write!(f, "mask buffer of {found} navcells, expected {expected}"),
            TerrainError::GridMismatch { expected, found } => write!(
                f,
                "output grid {}x{} with navcell size {}, expected {}x{} with navcell size {}",
                found.width, found.height, found.cell_size, expected.width, expected.height, expected.cell_size
            ),
            TerrainError::TooFewGridClasses { needed, found } => {
                write!(f, "output grid has {found} classes, expected at least {needed}")
            }
            TerrainError::CellCount { expected, found } => {
                write!(f, "painted layer of {found} navcells, expected {expected} (width × height) or none")
            }
        }
    }
}

impl std::error::Error for TerrainError {}

/// A heightmap on tile vertices and a water level.
///
/// Vertex `(vx, vz)` is at world `(vx · tile_size, vz · tile_size)`, so vertex `(0, 0)` is the world
/// origin and the terrain covers `[0, tiles_w · tile_size] × [0, tiles_h · tile_size]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Terrain {
    /// `[Units: tiles] [Limit: 1..=MAX_TILES]`
    tiles_w: u32,
    /// `[Units: tiles] [Limit: 1..=MAX_TILES]`
    tiles_h: u32,
    /// `[Units: metres] [Limit: (0, MAX_TILE_SIZE]]`
    tile_size: Fixed,
    /// `[Units: metres] [Limit: ±WORLD_LIMIT]`
    water_level: Fixed,
    /// `(tiles_w + 1) × (tiles_h + 1)` heights, row-major, `vz` the slow axis.
    /// `[Units: metres] [Limit: ±WORLD_LIMIT]`
    heights: Vec<Fixed>,
}

fn in_world(value: Fixed) -> bool {
    value.abs() <= WORLD_LIMIT
}

impl Terrain {
    /// Terrain from its heights (row-major, `vz` the slow axis).
    ///
    /// # Errors
    /// [`TerrainError`] when a count, the tile size, a height or the water level is out of range.
    pub fn new(tiles_w: u32, tiles_h: u32, tile_size: Fixed, heights: Vec<Fixed>, water_level: Fixed) -> Result<Self, TerrainError> {
        if tiles_w == 0 || tiles_h == 0 || tiles_w > MAX_TILES || tiles_h > MAX_TILES {
            return Err(TerrainError::BadTileCount { tiles_w, tiles_h });
        }
        if tile_size <= Fixed::ZERO || tile_size > MAX_TILE_SIZE {
            return Err(TerrainError::BadTileSize { tile_size });
        }
        let expected = (tiles_w as usize + 1) * (tiles_h as usize + 1);
        if heights.len() != expected {
            return Err(TerrainError::HeightCount { expected, found: heights.len() });
        }
        if let Some(pos) = heights.iter().position(|&h| !in_world(h)) {
            let vx = (pos % (tiles_w as usize + 1)) as u32;
            let vz = (pos / (tiles_w as usize + 1)) as u32;
            return Err(TerrainError::HeightOutOfRange { vx, vz, height: heights[pos] });
        }
        if !in_world(water_level) {
            return Err(TerrainError::WaterLevelOutOfRange { water_level });
        }
        Ok(Self { tiles_w, tiles_h, tile_size, water_level, heights })
    }

    /// Flat terrain at `height`.
    ///
    /// # Errors
    /// As [`Terrain::new`].
    pub fn flat(tiles_w: u32, tiles_h: u32, tile_size: Fixed, height: Fixed, water_level: Fixed) -> Result<Self, TerrainError> {
        Self::from_fn(tiles_w, tiles_h, tile_size, water_level, |_, _| height)
    }

    /// Terrain whose vertex `(vx, vz)` has height `height(vx, vz)`.
    ///
    /// # Errors
    /// As [`Terrain::new`].
    pub fn from_fn(
        tiles_w: u32,
        tiles_h: u32,
        tile_size: Fixed,
        water_level: Fixed,
        mut height: impl FnMut(u32, u32) -> Fixed,
    ) -> Result<Self, TerrainError> {
        if tiles_w == 0 || tiles_h == 0 || tiles_w > MAX_TILES || tiles_h > MAX_TILES {
            return Err(TerrainError::BadTileCount { tiles_w, tiles_h });
        }
        let mut heights = Vec::with_capacity((tiles_w as usize + 1) * (tiles_h as usize + 1));
        for vz in 0..=tiles_h {
            for vx in 0..=tiles_w {
                heights.push(height(vx, vz));
            }
        }
        Self::new(tiles_w, tiles_h, tile_size, heights, water_level)
    }

    /// Tiles along x.
    pub fn tiles_w(&self) -> u32 {
        self.tiles_w
    }

    /// Tiles along z.
    pub fn tiles_h(&self) -> u32 {
        self.tiles_h
    }

    /// Side of a tile in metres.
    pub fn tile_size(&self) -> Fixed {
        self.tile_size
    }

    /// The water level in metres.
    pub fn water_level(&self) -> Fixed {
        self.water_level
    }

    /// All heights, row-major with `vz` the slow axis.
    pub fn heights(&self) -> &[Fixed] {
        &self.heights
    }

    /// The height of a vertex, if it is on the heightmap.
    pub fn vertex_height(&self, vx: u32, vz: u32) -> Option<Fixed> {
        (vx <= self.tiles_w && vz <= self.tiles_h).then(|| self.heights[self.vertex_index(vx, vz)])
    }

    fn vertex_index(&self, vx: u32, vz: u32) -> usize {
        vz as usize * (self.tiles_w as usize + 1) + vx as usize
    }

    /// Sets the height of one vertex.
    ///
    /// # Errors
    /// [`TerrainError::VertexOffMap`] or [`TerrainError::HeightOutOfRange`]; the terrain is then unchanged.
    pub fn set_vertex_height(&mut self, vx: u32, vz: u32, height: Fixed) -> Result<(), TerrainError> {
        if vx > self.tiles_w || vz > self.tiles_h {
            return Err(TerrainError::VertexOffMap { vx, vz });
        }
        if !in_world(height) {
            return Err(TerrainError::HeightOutOfRange { vx, vz, height });
        }
        let idx = self.vertex_index(vx, vz);
        self.heights[idx] = height;
        Ok(())
    }

    /// Sets the water level.
    ///
    /// # Errors
    /// [`TerrainError::WaterLevelOutOfRange`]; the terrain is then unchanged.
    pub fn set_water_level(&mut self, water_level: Fixed) -> Result<(), TerrainError> {
        if !in_world(water_level) {
            return Err(TerrainError::WaterLevelOutOfRange { water_level });
        }
        self.water_level = water_level;
        Ok(())
    }
}

/// The navcell grid to sample terrain on: it covers `x ∈ [0, width · cell_size)`,
/// `z ∈ [0, height · cell_size)`, with the heightmap's vertex `(0, 0)` at the world origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridSpec {
    /// `[Units: navcells] [Limit: 1..=MAX_TERRAIN_GRID_SIDE for terrain]`
    pub width: u32,
    /// `[Units: navcells] [Limit: 1..=MAX_TERRAIN_GRID_SIDE for terrain]`
    pub height: u32,
    /// Side of a navcell. `[Units: metres] [Limit: (0, MAX_CELL_SIZE]]`
    pub cell_size: Fixed,
}

impl GridSpec {
    /// The size and navcell size of a grid.
    pub fn of_grid(grid: &NavGrid) -> Self {
        Self { width: grid.width(), height: grid.height(), cell_size: grid.cell_size() }
    }

    /// The smallest grid of navcells of side `cell_size` that covers the whole terrain:
    /// `ceil(tiles · tile_size / cell_size)` navcells on each side.
    ///
    /// # Errors
    /// [`TerrainError::BadGridSpec`] when the navcell size is out of range or the grid would be
    /// larger than [`MAX_TERRAIN_GRID_SIDE`].
    pub fn covering(terrain: &Terrain, cell_size: Fixed) -> Result<Self, TerrainError> {
        let bad = |width, height| TerrainError::BadGridSpec { width, height, cell_size };
        if cell_size <= Fixed::ZERO || cell_size > MAX_CELL_SIZE {
            return Err(bad(0, 0));
        }
        let side = |tiles: u32| {
            let cells = div_ceil(i128::from(tiles) * raw(terrain.tile_size), raw(cell_size));
            u32::try_from(cells).unwrap_or(u32::MAX)
        };
        let spec = Self { width: side(terrain.tiles_w), height: side(terrain.tiles_h), cell_size };
        spec.check()?;
        Ok(spec)
    }

    /// Checks the sides and the navcell size (see [`TerrainError::BadGridSpec`]).
    pub(crate) fn check(&self) -> Result<(), TerrainError> {
        let side_ok = |side: u32| (1..=MAX_TERRAIN_GRID_SIDE).contains(&side);
        if !side_ok(self.width) || !side_ok(self.height) || self.cell_size <= Fixed::ZERO || self.cell_size > MAX_CELL_SIZE {
            return Err(TerrainError::BadGridSpec { width: self.width, height: self.height, cell_size: self.cell_size });
        }
        Ok(())
    }

    /// `width × height`.
    pub(crate) fn n_cells(&self) -> usize {
        self.width as usize * self.height as usize
    }
}

/// The off-world frame, blocked for every class. Widths are in navcells (0 A.D. uses 3 tiles, that
/// is 12 navcells).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapBorder {
    /// No border.
    None,
    /// A frame `width` navcells thick on all four sides: `(i, j)` is border when `i < w`,
    /// `i ≥ W − w`, `j < w` or `j ≥ H − w`. Symmetric; 0 A.D.'s high sides are one navcell thinner
    /// than its low sides.
    Square {
        /// Frame thickness. `[Units: navcells]`
        width: u32,
    },
    /// Everything whose centre is not strictly inside the ellipse inscribed in the grid shrunk by
    /// `width` on each side: with `dx = 2i + 1 − W`, `dz = 2j + 1 − H`, `A = W − 2w`, `B = H − 2w`,
    /// `(i, j)` is border when `dx²·B² + dz²·A² ≥ A²·B²` (everything when `A ≤ 0` or `B ≤ 0`). On a
    /// square grid this is 0 A.D.'s circle test.
    Circle {
        /// Margin between the grid's edge and the ellipse. `[Units: navcells]`
        width: u32,
    },
}

impl MapBorder {
    /// Whether navcell `(i, j)` of a `width × height` grid is border.
    pub fn is_border(&self, i: u32, j: u32, width: u32, height: u32) -> bool {
        match *self {
            MapBorder::None => false,
            MapBorder::Square { width: w } => i < w || j < w || i >= width.saturating_sub(w) || j >= height.saturating_sub(w),
            MapBorder::Circle { width: w } => {
                let (a, b) = ellipse_axes(width, height, w);
                if a <= 0 || b <= 0 {
                    return true;
                }
                let dx = 2 * i128::from(i) + 1 - i128::from(width);
                let dz = 2 * i128::from(j) + 1 - i128::from(height);
                dx * dx * b * b + dz * dz * a * a >= a * a * b * b
            }
        }
    }
}

/// Marks the border navcells of a rectangle, row by row.
struct BorderMarker {
    border: MapBorder,
    /// Grid width and height.
    width: u32,
    height: u32,
    /// First column of the rectangle.
    i0: u32,
    /// For a circular border, `dx²·B²` of each column of the rectangle.
    column_terms: Vec<i128>,
}

impl BorderMarker {
    fn new(border: MapBorder, rect: CellRect, width: u32, height: u32) -> Self {
        let column_terms = match border {
            MapBorder::Circle { width: w } => {
                let (_, b) = ellipse_axes(width, height, w);
                (rect.i0..rect.i1)
                    .map(|i| {
                        let dx = 2 * i128::from(i) + 1 - i128::from(width);
                        dx * dx * b * b
                    })
                    .collect()
            }
            _ => Vec::new(),
        };
        Self { border, width, height, i0: rect.i0, column_terms }
    }

    /// ORs `bits` into the masks of the border navcells of row `j` (the rectangle's columns).
    fn mark_row(&self, j: u32, bits: u16, row: &mut [u16]) {
        let (width, height) = (self.width, self.height);
        match self.border {
            MapBorder::None => {}
            MapBorder::Square { width: w } => {
                if j < w || j >= height.saturating_sub(w) {
                    row.iter_mut().for_each(|m| *m |= bits);
                    return;
                }
                for (m, i) in row.iter_mut().zip(self.i0..) {
                    if i < w || i >= width.saturating_sub(w) {
                        *m |= bits;
                    }
                }
            }
            MapBorder::Circle { width: w } => {
                let (a, b) = ellipse_axes(width, height, w);
                if a <= 0 || b <= 0 {
                    row.iter_mut().for_each(|m| *m |= bits);
                    return;
                }
                // Border when dx²·B² ≥ A²·B² − dz²·A²; the left side is per column.
                let dz = 2 * i128::from(j) + 1 - i128::from(height);
                let rhs = a * a * (b * b - dz * dz);
                for (m, &term) in row.iter_mut().zip(&self.column_terms) {
                    if term >= rhs {
                        *m |= bits;
                    }
                }
            }
        }
    }
}

/// `(A, B) = (W − 2w, H − 2w)`, the ellipse's axes in half-navcells.
fn ellipse_axes(width: u32, height: u32, w: u32) -> (i128, i128) {
    (i128::from(width) - 2 * i128::from(w), i128::from(height) - 2 * i128::from(w))
}

/// The integer type of a grid's exact depth and slope keys: `i64` when the terrain's heights and
/// the grid's interpolation denominator are small enough (every real map), `i128` otherwise.
trait Key: Copy + Ord + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> {
    fn of(value: i64) -> Self;
    /// `value` clamped into the type's range. Comparisons of keys with a clamped bound are still
    /// exact: `i64` is only used when every key is strictly inside its range.
    fn clamp_from(value: i128) -> Self;
}

impl Key for i64 {
    #[inline]
    fn of(value: i64) -> Self {
        value
    }
    fn clamp_from(value: i128) -> Self {
        value.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    }
}

impl Key for i128 {
    #[inline]
    fn of(value: i64) -> Self {
        i128::from(value)
    }
    fn clamp_from(value: i128) -> Self {
        value
    }
}

/// Squared shore distance of a grid without water. `[Units: navcells²]`
const NO_WATER: u32 = u32::MAX;

/// The terrain of a grid, prepared once per terrain change and then read by
/// [`TerrainPass::base_masks`] for any class set and border.
///
/// It keeps a copy of the heightmap, where each navcell centre falls in it, and the squared shore
/// distance of every navcell (4 bytes per navcell, from an exact distance transform over the whole
/// grid). Depth and slope are not stored: [`TerrainPass::base_masks`] recomputes them a row at a
/// time, which takes a few multiplications per navcell and is cheaper than reading them back.
///
/// The values are exact integers. Navcell centres fall on multiples of `1/D` of a tile (`D = 8`
/// for 1 m navcells on 4 m tiles); the depth key is the water depth times `D²` (raw units of
/// 2^-16 m) and the slope key is the squared slope times `(D · tile size)²` (raw). They are
/// computed in `i64`, or in `i128` when the heights span more than about 4 km or `D` is large.
///
/// A painted grid ([`TerrainPass::with_cells`]) also keeps its painted layer (1 byte per navcell);
/// its shore distances are then measured to the painted water (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TerrainPass {
    spec: GridSpec,
    /// Tiles along x; a heightmap row holds one more height.
    tiles_w: u32,
    /// The heightmap, raw. `[Limit: ±2^30]`
    heights: Vec<i64>,
    /// The water level, raw. `[Limit: ±2^30]`
    water_level: i64,
    /// The interpolation denominator `D`. `[Limit: 1..=2^25]`
    denom: i64,
    /// `(D · raw tile size)²`, the scale of the slope keys. `[Limit: ≤ 2^98]`
    slope_scale: u128,
    /// Whether the keys need `i128`.
    wide: bool,
    /// Per column: the tile holding the navcell centres and their offset in it, in `1/D`.
    cols: Vec<(u32, i64)>,
    /// Per row: the same along z.
    rows: Vec<(u32, i64)>,
    /// Squared shore distance per navcell, [`NO_WATER`] when the grid holds no water.
    /// `[Units: navcells²]`
    shore: Vec<u32>,
    /// The painted layer, one kind per navcell in navcell order; empty when the grid is not
    /// painted.
    painted: Vec<CellKind>,
}

/// The depth and slope keys of the navcells `i0..i1` of a row, and the buffers to compute them.
///
/// Along a navcell row the tile row and the north weight are fixed, so the heights are first
/// interpolated along z at every vertex column (`along`, times `D`) and differenced (`rise`); each
/// navcell then needs only its east weight. The values equal the bilinear formula's exactly.
struct RowKeys<K> {
    /// First vertex column used.
    first: usize,
    /// Per navcell: its tile's west vertex column minus `first`, and the west and east weights.
    cols: Vec<(usize, K, K)>,
    along: Vec<K>,
    rise: Vec<K>,
    depth: Vec<K>,
    slope: Vec<K>,
}

impl<K: Key> RowKeys<K> {
    /// Buffers for the navcells `i0..i1` (non-empty, on the grid) of any row.
    fn new(pass: &TerrainPass, i0: u32, i1: u32) -> Self {
        let cols = &pass.cols[i0 as usize..i1 as usize];
        // Navcell centres move east with i, so the vertex columns needed are first..=last.
        let first = cols.first().map_or(0, |c| c.0 as usize);
        let last = cols.last().map_or(0, |c| c.0 as usize) + 1;
        let zero = K::of(0);
        Self {
            first,
            cols: cols.iter().map(|&(ti, nu)| (ti as usize - first, K::of(pass.denom - nu), K::of(nu))).collect(),
            along: vec![zero; last + 1 - first],
            rise: vec![zero; last + 1 - first],
            depth: vec![zero; cols.len()],
            slope: vec![zero; cols.len()],
        }
    }

    /// The depth keys of row `j`, and its slope keys when `with_slope`.
    fn compute(&mut self, pass: &TerrainPass, j: u32, with_slope: bool) {
        let (tj, nv) = pass.rows[j as usize];
        let stride = pass.tiles_w as usize + 1;
        let n = self.along.len();
        let south = &pass.heights[tj as usize * stride + self.first..][..n];
        let north = &pass.heights[(tj as usize + 1) * stride + self.first..][..n];
        let (wv0, wv1) = (K::of(pass.denom - nv), K::of(nv));
        for ((along, rise), (&s, &n)) in self.along.iter_mut().zip(&mut self.rise).zip(south.iter().zip(north)) {
            let (s, n) = (K::of(s), K::of(n));
            *along = s * wv0 + n * wv1;
            *rise = n - s;
        }
        let d = K::of(pass.denom);
        let water = K::of(pass.water_level) * d * d;
        for (depth, &(t, wu0, wu1)) in self.depth.iter_mut().zip(&self.cols) {
            *depth = water - (self.along[t] * wu0 + self.along[t + 1] * wu1);
        }
        if with_slope {
            for (slope, &(t, wu0, wu1)) in self.slope.iter_mut().zip(&self.cols) {
                let gx = self.along[t + 1] - self.along[t];
                let gz = self.rise[t] * wu0 + self.rise[t + 1] * wu1;
                *slope = gx * gx + gz * gz;
            }
        }
    }
}

/// One comparison of a navcell's terrain value with a class bound, in the units of the stored keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Test<K> {
    DepthAtLeast(K),
    DepthAtMost(K),
    SlopeBelow(K),
    ShoreAtLeast(u32),
    ShoreAtMost(u32),
}

/// The comparisons of a class set, each once (classes often share a bound), with the classes that
/// fail where the comparison does not hold; and the classes that fail everywhere.
struct Tests<K> {
    tests: Vec<(Test<K>, u16)>,
    always: u16,
}

impl<K: PartialEq> Tests<K> {
    fn add(&mut self, test: Test<K>, bit: u16) {
        match self.tests.iter_mut().find(|(t, _)| *t == test) {
            Some((_, bits)) => *bits |= bit,
            None => self.tests.push((test, bit)),
        }
    }
}

/// ORs `bits` into the masks of `row` whose value `fails`.
#[inline]
fn fail_where<T: Copy>(row: &mut [u16], values: &[T], bits: u16, fails: impl Fn(T) -> bool) {
    for (m, &v) in row.iter_mut().zip(values) {
        *m |= bits * u16::from(fails(v));
    }
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs()
}

/// For each navcell along one axis, the tile holding its centre and the centre's offset in the
/// tile in units of `1/denom` (clamped to the heightmap, so `denom` at the far edge).
fn axis_samples(n_cells: u32, n_tiles: u32, cell_step: i64, denom: i64) -> Vec<(u32, i64)> {
    let last = i64::from(n_tiles) - 1;
    (0..n_cells)
        .map(|i| {
            let pos = (2 * i64::from(i) + 1) * cell_step;
            let tile = pos.div_euclid(denom);
            if tile > last { (n_tiles - 1, denom) } else { (tile as u32, pos.rem_euclid(denom)) }
        })
        .collect()
}

impl TerrainPass {
    /// Samples the terrain at every navcell of `spec`.
    ///
    /// # Errors
    /// [`TerrainError::BadGridSpec`] when the grid is out of range.
    pub fn new(terrain: &Terrain, spec: GridSpec) -> Result<Self, TerrainError> {
        Self::build(terrain, spec, &[], false)
    }

    /// Samples the terrain at every navcell of `spec` under a painted layer: `cells` holds one
    /// [`CellKind`] per navcell in navcell order (row `j = 0` first, `i` fastest), or nothing for
    /// an unpainted grid (then this is [`TerrainPass::new`]). See the module documentation for what
    /// the painting changes.
    ///
    /// # Errors
    /// [`TerrainError::BadGridSpec`] when the grid is out of range, [`TerrainError::CellCount`] when
    /// `cells` is neither empty nor `width × height` long.
    pub fn with_cells(terrain: &Terrain, spec: GridSpec, cells: &[CellKind]) -> Result<Self, TerrainError> {
        Self::build(terrain, spec, cells, false)
    }

    fn build(terrain: &Terrain, spec: GridSpec, cells: &[CellKind], force_wide: bool) -> Result<Self, TerrainError> {
        spec.check()?;
        if !cells.is_empty() && cells.len() != spec.n_cells() {
            return Err(TerrainError::CellCount { expected: spec.n_cells(), found: cells.len() });
        }
        // Centre of navcell i in tiles: (2i + 1)·cs / (2·ts); reduce the fraction.
        let (cs, ts) = (raw(spec.cell_size), raw(terrain.tile_size));
        let g = gcd(cs, 2 * ts);
        let (step, denom) = ((cs / g) as i64, (2 * ts / g) as i64);
        let heights: Vec<i64> = terrain.heights.iter().map(|h| h.to_bits()).collect();
        let max_abs = heights.iter().map(|h| i128::from(h.abs())).max().unwrap_or(0);
        let lowest = heights.iter().copied().min().unwrap_or(0);
        let highest = heights.iter().copied().max().unwrap_or(0);
        let water_level = terrain.water_level.to_bits();
        let d = i128::from(denom);
        // i64 keys when |depth·D²| < 2^62 and every gradient numerator is below 2^31, so that no
        // intermediate value of the i64 computation overflows; painted depths are depths too.
        let painted_abs = if cells.is_empty() { 0 } else { raw(PAINTED_WATER_DEPTH).abs().max(raw(PAINTED_GROUND_DEPTH).abs()) };
        let narrow = !force_wide
            && (i128::from(water_level.abs()) + max_abs) * d * d < 1 << 62
            && painted_abs * d * d < 1 << 62
            && i128::from(highest - lowest) * d < 1 << 31;
        let mut pass = Self {
            spec,
            tiles_w: terrain.tiles_w,
            heights,
            water_level,
            denom,
            slope_scale: (d * ts).unsigned_abs().pow(2),
            wide: !narrow,
            cols: axis_samples(spec.width, terrain.tiles_w, step, denom),
            rows: axis_samples(spec.height, terrain.tiles_h, step, denom),
            shore: Vec::new(),
            painted: cells.to_vec(),
        };
        let mut shore = vec![0; spec.n_cells()];
        if !pass.painted.is_empty() {
            pass.painted_column_distances(&mut shore);
        } else if pass.wide {
            pass.column_distances::<i128>(&mut shore);
        } else {
            pass.column_distances::<i64>(&mut shore);
        }
        finish_edt(&mut shore, spec.width as usize, spec.height as usize);
        pass.shore = shore;
        Ok(pass)
    }

    /// The first pass of the shore distance transform: for each navcell, how many rows south the
    /// nearest water navcell of its column is (`u32::MAX` for none).
    fn column_distances<K: Key>(&self, out: &mut [u32]) {
        let width = self.spec.width as usize;
        let mut keys = RowKeys::<K>::new(self, 0, self.spec.width);
        let zero = K::of(0);
        for j in 0..self.spec.height {
            keys.compute(self, j, false);
            let (done, rest) = out.split_at_mut(j as usize * width);
            let south = done.get(done.len().saturating_sub(width)..).unwrap_or(&[]);
            for (k, (g, &depth)) in rest[..width].iter_mut().zip(&keys.depth).enumerate() {
                *g = if depth > zero { 0 } else { south.get(k).map_or(u32::MAX, |s| s.saturating_add(1)) };
            }
        }
    }

    /// The first pass of the shore distance transform of a painted grid: for each navcell, how
    /// many rows south the nearest painted water navcell of its column is (`u32::MAX` for none).
    fn painted_column_distances(&self, out: &mut [u32]) {
        let width = self.spec.width as usize;
        for (idx, kind) in self.painted.iter().enumerate() {
            out[idx] = match (kind, idx.checked_sub(width)) {
                (CellKind::Water, _) => 0,
                (_, Some(south)) => out[south].saturating_add(1),
                (_, None) => u32::MAX,
            };
        }
    }

    /// The painted layer (one kind per navcell in navcell order), empty when the grid is not
    /// painted.
    pub fn painted(&self) -> &[CellKind] {
        &self.painted
    }

    /// The grid sampled.
    pub fn spec(&self) -> GridSpec {
        self.spec
    }

    fn index(&self, i: u32, j: u32) -> Option<usize> {
        (i < self.spec.width && j < self.spec.height).then(|| j as usize * self.spec.width as usize + i as usize)
    }

    /// The exact depth and slope keys of one navcell on the grid.
    fn cell_keys(&self, i: u32, j: u32) -> (i128, i128) {
        let mut keys = RowKeys::<i128>::new(self, i, i + 1);
        keys.compute(self, j, true);
        (keys.depth[0], keys.slope[0])
    }

    /// The water depth at the centre of navcell `(i, j)`, rounded down to a multiple of 2^-16 m
    /// (the predicates use the exact value), if the navcell is on the grid; on a painted grid, the
    /// painted depth ([`CellKind::water_depth`]).
    pub fn water_depth(&self, i: u32, j: u32) -> Option<Fixed> {
        let idx = self.index(i, j)?;
        if let Some(kind) = self.painted.get(idx) {
            return Some(kind.water_depth());
        }
        let d = i128::from(self.denom);
        // |depth| ≤ 2^15 m, so the raw value fits an i64.
        Some(Fixed::from_bits(div_floor(self.cell_keys(i, j).0, d * d) as i64))
    }

    /// The squared slope at the centre of navcell `(i, j)`, rounded down to a multiple of 2^-16
    /// and saturating at [`Fixed::MAX`] (the predicates use the exact value), if the navcell is on
    /// the grid.
    pub fn slope_squared(&self, i: u32, j: u32) -> Option<Fixed> {
        self.index(i, j)?;
        let (key, scale) = (self.cell_keys(i, j).1 as u128, self.slope_scale);
        // floor(key · 2^16 / scale) by long division: the remainder times 2^16 stays below 2^114.
        let whole = key / scale;
        let frac = ((key % scale) << 16) / scale;
        if whole > (i64::MAX >> 16) as u128 {
            return Some(Fixed::MAX);
        }
        Some(Fixed::from_bits(((whole << 16) | frac) as i64))
    }

    /// The squared shore distance of navcell `(i, j)` in navcells² (0 on water), if the navcell is
    /// on the grid and the grid holds water.
    pub fn shore_distance_squared(&self, i: u32, j: u32) -> Option<u32> {
        let idx = self.index(i, j)?;
        Some(self.shore[idx]).filter(|&k| k != NO_WATER)
    }

    /// Whether navcell `(i, j)` is under water (depth `> 0`); `false` off the grid.
    pub fn is_water(&self, i: u32, j: u32) -> bool {
        self.index(i, j).is_some_and(|idx| self.shore[idx] == 0)
    }

    /// The comparisons of a class set in key units.
    fn tests<K: Key>(&self, classes: &ClassSet) -> Tests<K> {
        let d2 = i128::from(self.denom).pow(2);
        // In squared navcells: k·cs² ≥ min² ⟺ k ≥ ceil(min²/cs²); k·cs² ≤ max² ⟺ k ≤ floor(max²/cs²).
        let cs2 = raw(self.spec.cell_size).pow(2);
        let mut tests = Tests { tests: Vec::new(), always: 0 };
        for (class, def) in classes.iter() {
            let bit = class.bit();
            if let Some(min) = def.min_water_depth {
                tests.add(Test::DepthAtLeast(K::clamp_from(raw(min) * d2)), bit);
            }
            if let Some(max) = def.max_water_depth {
                tests.add(Test::DepthAtMost(K::clamp_from(raw(max) * d2)), bit);
            }
            if let Some(max) = def.max_slope {
                tests.add(Test::SlopeBelow(K::clamp_from(slope_threshold(max, self.slope_scale))), bit);
            }
            // A minimum of 0 or less holds everywhere, even without water.
            if let Some(min) = def.min_shore_distance.filter(|m| *m > Fixed::ZERO) {
                tests.add(Test::ShoreAtLeast(u32::try_from(div_ceil(raw(min).pow(2), cs2)).unwrap_or(NO_WATER)), bit);
            }
            match def.max_shore_distance {
                Some(max) if max < Fixed::ZERO => tests.always |= bit,
                // A maximum always fails where there is no water.
                Some(max) => {
                    tests.add(Test::ShoreAtMost(u32::try_from(div_floor(raw(max).pow(2), cs2)).unwrap_or(u32::MAX).min(NO_WATER - 1)), bit)
                }
                None => {}
            }
        }
        tests
    }

    /// Writes, for each navcell of `rect` (row-major within `rect`), the mask with bit `k` set when
    /// class `k` fails its terrain bounds there (painted values on a painted grid), the navcell is
    /// border, or it is painted [`CellKind::Blocked`].
    ///
    /// # Errors
    /// [`TerrainError::RectOffGrid`] when `rect` reaches past the grid, [`TerrainError::BufferLength`]
    /// when `out` does not hold exactly `rect.area()` masks; `out` is then unchanged.
    pub fn base_masks(&self, classes: &ClassSet, border: MapBorder, rect: CellRect, out: &mut [u16]) -> Result<(), TerrainError> {
        check_rect(rect, self.spec.width, self.spec.height)?;
        let expected = rect.area() as usize;
        if out.len() != expected {
            return Err(TerrainError::BufferLength { expected, found: out.len() });
        }
        if expected == 0 {
            return Ok(());
        }
        if self.wide {
            self.masks_with::<i128>(classes, rect, out);
        } else {
            self.masks_with::<i64>(classes, rect, out);
        }
        let marker = BorderMarker::new(border, rect, self.spec.width, self.spec.height);
        let rect_w = (rect.i1 - rect.i0) as usize;
        for (row, j) in out.chunks_exact_mut(rect_w).zip(rect.j0..rect.j1) {
            marker.mark_row(j, classes.class_bits(), row);
        }
        Ok(())
    }

    fn masks_with<K: Key>(&self, classes: &ClassSet, rect: CellRect, out: &mut [u16]) {
        let tests = self.tests::<K>(classes);
        let need_depth = tests.tests.iter().any(|(t, _)| matches!(t, Test::DepthAtLeast(_) | Test::DepthAtMost(_)));
        let need_slope = tests.tests.iter().any(|(t, _)| matches!(t, Test::SlopeBelow(_)));
        let mut keys = RowKeys::<K>::new(self, rect.i0, rect.i1);
        let width = self.spec.width as usize;
        let rect_w = (rect.i1 - rect.i0) as usize;
        // Painted depths in key units (exact: the narrow keys are used only when they fit).
        let d2 = i128::from(self.denom).pow(2);
        let (water_key, ground_key) = (K::clamp_from(raw(PAINTED_WATER_DEPTH) * d2), K::clamp_from(raw(PAINTED_GROUND_DEPTH) * d2));
        let all = classes.class_bits();
        for (row, j) in out.chunks_exact_mut(rect_w).zip(rect.j0..) {
            let start = j as usize * width + rect.i0 as usize;
            let shore = &self.shore[start..start + rect_w];
            // `None` on an unpainted grid.
            let painted = self.painted.get(start..start + rect_w);
            if need_slope || (need_depth && painted.is_none()) {
                keys.compute(self, j, need_slope);
            }
            if let Some(kinds) = painted
                && need_depth
            {
                for (depth, kind) in keys.depth.iter_mut().zip(kinds) {
                    *depth = if *kind == CellKind::Water { water_key } else { ground_key };
                }
            }
            row.fill(tests.always);
            // Comparison by comparison over a row: each inner loop is a straight pass over an array.
            for &(test, bits) in &tests.tests {
                match test {
                    Test::DepthAtLeast(t) => fail_where(row, &keys.depth, bits, |v| v < t),
                    Test::DepthAtMost(t) => fail_where(row, &keys.depth, bits, |v| v > t),
                    Test::SlopeBelow(t) => fail_where(row, &keys.slope, bits, |v| v >= t),
                    Test::ShoreAtLeast(t) => fail_where(row, shore, bits, |v| v < t),
                    Test::ShoreAtMost(t) => fail_where(row, shore, bits, |v| v > t),
                }
            }
            if let Some(kinds) = painted {
                for (m, kind) in row.iter_mut().zip(kinds) {
                    if *kind == CellKind::Blocked {
                        *m |= all;
                    }
                }
            }
        }
    }

    /// The expanded terrain grid of the whole map: [`TerrainPass::base_masks`] over the whole grid,
    /// then [`expand_clearance`].
    ///
    /// # Errors
    /// None in practice (the sizes are consistent by construction); any [`TerrainError`] of the
    /// two steps is passed on.
    pub fn terrain_grid(&self, classes: &ClassSet, border: MapBorder) -> Result<NavGrid, TerrainError> {
        let GridSpec { width, height, cell_size } = self.spec;
        let full = CellRect::full(width, height);
        let mut base = vec![0; self.spec.n_cells()];
        self.base_masks(classes, border, full, &mut base)?;
        let mut grid =
            NavGrid::new(width, height, classes.len(), cell_size).map_err(|_| TerrainError::BadGridSpec { width, height, cell_size })?;
        expand_clearance(&base, width, height, classes, cell_size, full, &mut grid)?;
        Ok(grid)
    }
}

/// `ceil(s² · scale / 2^32)`: the slope key bound of a class with maximum slope `s` (a navcell
/// passes when its key is below it). `s` is at most [`WORLD_LIMIT`] (checked by [`ClassSet`];
/// larger values are clamped), so `s² ≤ 2^60`, `scale ≤ 2^98`, and the result is below 2^127.
fn slope_threshold(s: Fixed, scale: u128) -> i128 {
    let s = raw(s).clamp(0, raw(WORLD_LIMIT)) as u128;
    let s2 = s * s;
    let (hi, lo) = (scale >> 64, scale & u128::from(u64::MAX));
    let (p_hi, p_lo) = (s2 * hi, s2 * lo);
    // s²·scale = p_hi·2^64 + p_lo.
    let ceil_lo = (p_lo >> 32) + u128::from(p_lo & 0xffff_ffff != 0);
    ((p_hi << 32) + ceil_lo) as i128
}

/// Squared Euclidean distance (navcells²) from every navcell to the nearest feature navcell, into
/// `out`; [`NO_WATER`] everywhere when there is no feature. (The terrain builds the first pass
/// from depths directly; this form is for tests.)
#[cfg(test)]
fn squared_edt(feature: &[bool], width: usize, height: usize, out: &mut Vec<u32>) {
    out.clear();
    out.resize(width * height, 0);
    for j in 0..height {
        for i in 0..width {
            let idx = j * width + i;
            out[idx] = if feature[idx] {
                0
            } else if j == 0 {
                u32::MAX
            } else {
                out[idx - width].saturating_add(1)
            };
        }
    }
    finish_edt(out, width, height);
}

/// Turns the distances to the nearest feature south in the same column (`u32::MAX` for none) into
/// squared Euclidean distances (navcells²) to the nearest feature anywhere, in place;
/// [`NO_WATER`] everywhere when there is no feature.
///
/// Separable, as Meijster et al. and Felzenszwalb and Huttenlocher: a north-to-south sweep
/// completes the column distances `g`, then each row takes the lower envelope of the parabolas
/// `(x − i)² + g(i)²`. The envelope's breakpoints are kept as exact fractions and compared by
/// cross-multiplication, so there is no division and no rounding. Columns without a feature are
/// left out of the envelope: any column with one is nearer.
fn finish_edt(g: &mut [u32], width: usize, height: usize) {
    const NONE: u32 = u32::MAX;
    if !g.contains(&0) {
        g.fill(NO_WATER);
        return;
    }
    for j in (0..height.saturating_sub(1)).rev() {
        let (here, north) = g.split_at_mut((j + 1) * width);
        for (g, &n) in here[j * width..].iter_mut().zip(&north[..width]) {
            *g = (*g).min(n.saturating_add(1));
        }
    }
    // The envelope: parabola apexes `v`, their `g² + v²`, and the fractions `z_num / z_den`
    // (z_den > 0) where each starts to be lowest; the first starts at -∞.
    let mut v = vec![0usize; width];
    let mut lift = vec![0i64; width];
    let mut z_num = vec![0i64; width];
    let mut z_den = vec![1i64; width];
    for row in g.chunks_exact_mut(width) {
        let mut len = 0usize;
        for (q, &gq) in row.iter().enumerate() {
            if gq == NONE {
                continue;
            }
            // g, q < 2^16 on terrain grids.
            let lift_q = i64::from(gq).pow(2) + (q as i64).pow(2);
            let (mut num, mut den) = (0, 1);
            while len > 0 {
                let top = len - 1;
                // Where q's parabola meets top's: (lift_q − lift_top) / (2(q − v_top)).
                num = lift_q - lift[top];
                den = 2 * (q - v[top]) as i64;
                // q hides top when they meet before top starts to be lowest.
                if top > 0 && num * z_den[top] <= z_num[top] * den {
                    len = top;
                } else {
                    break;
                }
            }
            v[len] = q;
            lift[len] = lift_q;
            (z_num[len], z_den[len]) = (num, den);
            len += 1;
        }
        // The envelope no longer needs the row: overwrite it with the distances.
        let mut k = 0;
        for (x, d) in row.iter_mut().enumerate() {
            while k + 1 < len && z_num[k + 1] < x as i64 * z_den[k + 1] {
                k += 1;
            }
            // (x − v)² + g(v)², below 2·MAX_TERRAIN_GRID_SIDE² < 2^32.
            *d = ((x as i64 - v[k] as i64).pow(2) + lift[k] - (v[k] as i64).pow(2)) as u32;
        }
    }
}

fn check_rect(rect: CellRect, width: u32, height: u32) -> Result<(), TerrainError> {
    if rect.i1 > width || rect.j1 > height {
        return Err(TerrainError::RectOffGrid { rect, width, height });
    }
    Ok(())
}

/// Writes into `out`, for every navcell of `rect`, the mask of the classes blocked there after
/// clearance expansion: class `k` is blocked when some navcell blocked for `k` in `base` lies within
/// its clearance `c` = [`ClassDef::clearance_cells`](crate::build::classes::ClassDef::clearance_cells)`(cell_size)`: Chebyshev distance `≤ c` for
/// square classes, `di² + dj² ≤ c²` for round ones. `base` holds the masks of the whole
/// `width × height` grid, row-major; it is read over `rect` grown by each class's `c`, and navcells
/// off the grid count as passable. Bits of classes beyond the set are cleared inside `rect`; nothing
/// outside `rect` is written. Expanding a window gives exactly what expanding the whole grid gives
/// inside the window.
///
/// Cost: per class, the rows within `c` of `rect` as 64-navcell words, `O(log c)` passes for a
/// square class and `O(c)` row ORs per output row for a round one.
///
/// # Errors
/// [`TerrainError`] when `base` does not hold `width × height` masks, `out` differs in size or
/// navcell size or has fewer classes than the set, or `rect` reaches past the grid; `out` is then
/// unchanged.
pub fn expand_clearance(
    base: &[u16],
    width: u32,
    height: u32,
    classes: &ClassSet,
    cell_size: Fixed,
    rect: CellRect,
    out: &mut NavGrid,
) -> Result<(), TerrainError> {
    let expected = GridSpec { width, height, cell_size };
    let found = GridSpec::of_grid(out);
    if found != expected {
        return Err(TerrainError::GridMismatch { expected, found });
    }
    if base.len() != width as usize * height as usize {
        return Err(TerrainError::BufferLength { expected: width as usize * height as usize, found: base.len() });
    }
    if out.n_classes() < classes.len() {
        return Err(TerrainError::TooFewGridClasses { needed: classes.len(), found: out.n_classes() });
    }
    check_rect(rect, width, height)?;
    if rect.is_empty() {
        return Ok(());
    }
    // Beyond the grid's extent a larger clearance blocks nothing more.
    let reach = width.saturating_add(height);
    let clearances: Vec<u32> = classes.defs().iter().map(|def| def.clearance_cells(cell_size).min(reach)).collect();
    let max_c = clearances.iter().copied().max().unwrap_or(0);
    let region = rect.grow_clipped(max_c, width, height);
    let planes = BitPlanes::build(base, width, region, classes.len());
    let rect_w = (rect.i1 - rect.i0) as usize;
    let mut scratch = Scratch::default();
    let mut dilated: Vec<Vec<u64>> = Vec::with_capacity(usize::from(classes.len()));
    for ((class, def), &c) in classes.iter().zip(&clearances) {
        dilated.push(scratch.dilate(&planes, usize::from(class.index()), def.clearance_shape, c, rect, height).to_vec());
    }
    // Back from one bit plane per class to one mask per navcell, eight navcells and eight classes
    // at a time.
    let first_col = (rect.i0 - region.i0) as usize;
    let words = planes.words;
    let mut masks = vec![0u16; rect_w];
    for (r, j) in (rect.j0..rect.j1).enumerate() {
        masks.fill(0);
        for (g, chunk) in masks.chunks_mut(8).enumerate() {
            let col = first_col + 8 * g;
            for (half, classes) in dilated.chunks(8).enumerate() {
                let x = classes.iter().enumerate().fold(0, |x, (k, plane)| x | byte_at(&plane[r * words..(r + 1) * words], col) << (8 * k));
                if x == 0 {
                    continue;
                }
                let shift = 8 * half;
                for (m, byte) in chunk.iter_mut().zip(transpose8(x).to_le_bytes()) {
                    *m |= u16::from(byte) << shift;
                }
            }
        }
        for (&mask, i) in masks.iter().zip(rect.i0..rect.i1) {
            // Sides are at most 65535 (they match `out`).
            out.set_blocked_mask(Navcell::new(i as u16, j as u16), mask);
        }
    }
    Ok(())
}

/// Transposes an 8×8 bit matrix: bit `j` of byte `i` goes to bit `i` of byte `j`.
fn transpose8(mut x: u64) -> u64 {
    let mut t = (x ^ (x >> 7)) & 0x00aa_00aa_00aa_00aa;
    x ^= t ^ (t << 7);
    t = (x ^ (x >> 14)) & 0x0000_cccc_0000_cccc;
    x ^= t ^ (t << 14);
    t = (x ^ (x >> 28)) & 0x0000_0000_f0f0_f0f0;
    x ^= t ^ (t << 28);
    x
}

/// The eight bits of a bit row from column `col` (bits past the row's end read as 0).
fn byte_at(row: &[u64], col: usize) -> u64 {
    let (w, s) = (col / 64, col % 64);
    let low = row.get(w).map_or(0, |&word| word >> s);
    let high = if s > 56 { row.get(w + 1).map_or(0, |&word| word << (64 - s)) } else { 0 };
    (low | high) & 0xff
}

/// One bit plane per class over a region of the grid: bit `i − region.i0` of row `j − region.j0`
/// is set when navcell `(i, j)` is blocked for the class in `base`.
struct BitPlanes {
    region: CellRect,
    /// Words per row. `[Limit: ≥ 1]`
    words: usize,
    rows: usize,
    /// `planes[k]` holds `rows × words` words.
    planes: Vec<Vec<u64>>,
}

impl BitPlanes {
    fn build(base: &[u16], width: u32, region: CellRect, n_classes: u8) -> Self {
        let region_w = (region.i1 - region.i0) as usize;
        let words = region_w.div_ceil(64).max(1);
        let rows = (region.j1 - region.j0) as usize;
        let n_classes = usize::from(n_classes);
        let mut planes = vec![vec![0u64; rows * words]; n_classes];
        for r in 0..rows {
            let start = (region.j0 as usize + r) * width as usize + region.i0 as usize;
            // Eight navcells and eight classes at a time: one byte per navcell, transposed to one
            // byte per class.
            for (g, chunk) in base[start..start + region_w].chunks(8).enumerate() {
                let (word, shift) = (r * words + g / 8, 8 * (g % 8));
                for half in 0..n_classes.div_ceil(8) {
                    let x = chunk.iter().enumerate().fold(0u64, |x, (c, &m)| x | u64::from((m >> (8 * half)) as u8) << (8 * c));
                    if x == 0 {
                        continue;
                    }
                    let y = transpose8(x);
                    for (k, plane) in planes.iter_mut().enumerate().skip(8 * half).take(8) {
                        plane[word] |= ((y >> (8 * (k - 8 * half))) & 0xff) << shift;
                    }
                }
            }
        }
        Self { region, words, rows, planes }
    }
}

/// Buffers reused from class to class.
#[derive(Default)]
struct Scratch {
    work: Vec<u64>,
    acc: Vec<u64>,
    tmp: Vec<u64>,
}

impl Scratch {
    /// The class's plane dilated by its clearance, for the rows of `rect` (over the region's columns).
    fn dilate(&mut self, planes: &BitPlanes, k: usize, shape: ClearanceShape, c: u32, rect: CellRect, height: u32) -> &[u64] {
        let words = planes.words;
        let region = planes.region;
        // Rows of the region within c of rect, relative to the region.
        let lo = (rect.j0.saturating_sub(c) - region.j0) as usize;
        let hi = (rect.j1.saturating_add(c).min(height) - region.j0) as usize;
        debug_assert!(hi <= planes.rows);
        self.work.clear();
        self.work.extend_from_slice(&planes.planes[k][lo * words..hi * words]);
        self.tmp.resize(words, 0);
        let out_lo = (rect.j0 - region.j0) as usize - lo;
        let out_rows = (rect.j1 - rect.j0) as usize;
        let n_rows = hi - lo;
        let c = c as usize;
        match shape {
            ClearanceShape::Square => {
                for row in self.work.chunks_exact_mut(words) {
                    dilate_row(row, &mut self.tmp, c);
                }
                dilate_columns(&mut self.work, words, n_rows, c);
                &self.work[out_lo * words..(out_lo + out_rows) * words]
            }
            ClearanceShape::Round => {
                // Offsets dy from c down to 0 need horizontal radii r(dy) = floor(√(c² − dy²)),
                // which only grow, so one buffer is dilated step by step.
                self.acc.clear();
                self.acc.resize(out_rows * words, 0);
                let mut radius = 0;
                for dy in (0..=c).rev() {
                    let r = ((c * c - dy * dy) as u64).isqrt() as usize;
                    if r > radius {
                        for row in self.work.chunks_exact_mut(words) {
                            dilate_row(row, &mut self.tmp, r - radius);
                        }
                        radius = r;
                    }
                    for out_row in 0..out_rows {
                        let centre = out_lo + out_row;
                        let acc_row = &mut self.acc[out_row * words..(out_row + 1) * words];
                        let mut or_row = |src: usize| {
                            for (a, &b) in acc_row.iter_mut().zip(&self.work[src * words..(src + 1) * words]) {
                                *a |= b;
                            }
                        };
                        if centre + dy < n_rows {
                            or_row(centre + dy);
                        }
                        if dy > 0 && centre >= dy {
                            or_row(centre - dy);
                        }
                    }
                }
                &self.acc
            }
        }
    }
}

/// ORs into `dst` the bit row `src` shifted by `s` columns both ways.
fn or_shifted(dst: &mut [u64], src: &[u64], s: usize) {
    let (q, r) = (s / 64, (s % 64) as u32);
    let n = src.len();
    for (w, d) in dst.iter_mut().enumerate() {
        let mut bits = 0;
        if w >= q {
            bits |= src[w - q] << r;
            if r != 0 && w > q {
                bits |= src[w - q - 1] >> (64 - r);
            }
        }
        if w + q < n {
            bits |= src[w + q] >> r;
            if r != 0 && w + q + 1 < n {
                bits |= src[w + q + 1] << (64 - r);
            }
        }
        *d |= bits;
    }
}

/// Dilates a bit row by `radius` columns in place: steps of 1, 2, 4, ... (each at most one more
/// than the radius covered so far, so the covered runs stay contiguous).
fn dilate_row(row: &mut [u64], tmp: &mut [u64], radius: usize) {
    if row.iter().all(|&w| w == 0) {
        return;
    }
    let mut covered = 0;
    while covered < radius {
        let step = (covered + 1).min(radius - covered);
        tmp.copy_from_slice(row);
        or_shifted(row, tmp, step);
        covered += step;
    }
}

/// Dilates `n_rows` bit rows by `radius` rows in place, by the same doubling steps: an upward sweep
/// `row[j] |= row[j + s]` (ascending, so it reads unchanged rows) then a downward one
/// `row[j] |= row[j − s]` (descending), which together OR rows `j − s`, `j` and `j + s`.
fn dilate_columns(rows: &mut [u64], words: usize, n_rows: usize, radius: usize) {
    let mut covered = 0;
    while covered < radius {
        if covered + 1 >= n_rows {
            // Every row already holds every other row.
            return;
        }
        let step = (covered + 1).min(radius - covered);
        for j in 0..n_rows - step {
            let (head, tail) = rows.split_at_mut((j + step) * words);
            head[j * words..(j + 1) * words].iter_mut().zip(&tail[..words]).for_each(|(a, &b)| *a |= b);
        }
        for j in (step..n_rows).rev() {
            let (head, tail) = rows.split_at_mut(j * words);
            tail[..words].iter_mut().zip(&head[(j - step) * words..(j - step + 1) * words]).for_each(|(a, &b)| *a |= b);
        }
        covered += step;
    }
}

#[cfg(test)]
mod tests;
