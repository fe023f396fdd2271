//! The world's geometry turned into per-class navcell grids, and kept current as it changes.
//!
//! A [`NavWorld`] owns everything passability is computed from (passability classes, the
//! terrain heightmap and water level, the map border, the polygon navigation areas and obstacle
//! polygons of the grid-pathfinding design, and the obstruction squares of buildings, walls and
//! trees) and everything computed from it:
//!
//! 1. the *base* masks: per navcell, the classes whose terrain predicate fails (on the painted
//!    water depth and shore distance where the world has a painted layer, [`WorldDesc::cells`]), the
//!    border, the navcells painted [`CellKind::Blocked`], and the navcells outside every available
//!    navigation area;
//! 2. the *terrain-only* grid: the base expanded by each class's clearance ([`crate::build::terrain`]),
//!    then the obstacle polygons, each grown by the class's clearance plus the object padding;
//! 3. the *full* grid: the terrain-only grid plus every obstruction square rasterized per class
//!    ([`crate::build::raster`]);
//! 4. one [`ClassNav`] (bit planes, jump tables, hierarchy) per movement class.
//!
//! # Updates
//!
//! Changes are queued ([`NavWorld::add_obstruction`], [`NavWorld::remove_obstruction`],
//! [`NavWorld::set_area_available`], ...) and applied together by [`NavWorld::update`], which the
//! simulation calls once per turn, as 0 A.D.'s `UpdateGrid` does. An obstruction change dirties the
//! navcells its rasterization can reach (its bounding box grown by the largest distance any class
//! rasterizes it with); an area toggle dirties the area's bounding box grown by the largest
//! clearance. For each dirty rectangle, the full grid is reset to the terrain-only values and every
//! obstruction overlapping the rectangle is rasterized again, clipped to it; then each class whose
//! bits changed there gets [`ClassNav::update_rect`]. Terrain edits rebuild everything. The result
//! is exactly a full rebuild's (tested by property tests).
//!
//! # Which class sees what
//!
//! A class with obstruction mode `pathfinding` is blocked by squares flagged
//! [`ObstructionFlags::BLOCK_PATHFINDING`], one with mode `foundation` by squares flagged
//! [`ObstructionFlags::BLOCK_FOUNDATION`] (building placement uses those classes), one with mode
//! `none` by no square. Terrain, border, areas and obstacle polygons apply to every class.
//! Movement classes (modes `pathfinding` and `none`) get a [`ClassNav`]; foundation classes are
//! only read by placement queries.

use std::collections::BTreeMap;

use crate::build::classes::{ClassSet, ObstructionMode};
use crate::build::polygon::{CellTest, GridBounds, Polygon, PolygonConfig};
use crate::build::raster::{effective_radius_raw32, rasterize_square};
use crate::build::terrain::{CellKind, GridSpec, MAX_TILE_SIZE, MapBorder, Terrain, TerrainError, TerrainPass, expand_clearance};
use crate::geometry::decimal::WORLD_LIMIT;
use crate::geometry::{Fixed, WorldPos, raw};
use crate::grid::nav_grid::{NavGrid, PassClass};
use crate::grid::navcell::CellRect;
use crate::grid::pass_map::PassMap;
use crate::search::goal::Square;
use crate::search::landmarks::Landmarks;
use crate::search::long_range::ClassNav;

/// Landmarks of each class's table when [`WorldDesc::landmark_classes`] asks for one: where the
/// benchmark maps stop gaining much (docs/benchmark-history.md, "What made the difference").
pub const LANDMARKS_PER_CLASS: usize = 8;

/// Side of the buckets that index obstructions by position. `[Units: navcells]`
const BUCKET: u32 = 32;

/// Which classes an obstruction square blocks, by the classes' obstruction modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct ObstructionFlags(pub u8);

impl ObstructionFlags {
    /// Blocks classes whose obstruction mode is `pathfinding` (units walk around it).
    pub const BLOCK_PATHFINDING: u8 = 1;
    /// Blocks classes whose obstruction mode is `foundation` (nothing may be built on it).
    pub const BLOCK_FOUNDATION: u8 = 2;
    /// A building, wall or tree: both.
    pub const STATIC: ObstructionFlags = ObstructionFlags(Self::BLOCK_PATHFINDING | Self::BLOCK_FOUNDATION);
}

/// The id of a static obstruction, chosen by whoever adds it (the simulation counts them up). It
/// serializes as its `u32`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct ObstructionId(pub u32);

/// `7`: the number, as every tool prints an obstruction.
impl std::fmt::Display for ObstructionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A static obstruction: a square and what it blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Obstruction {
    /// The shape.
    pub square: Square,
    /// What it blocks.
    pub flags: ObstructionFlags,
}

/// A navigation area of the grid-pathfinding design: navcells are walkable only inside available
/// areas (when the world has any area at all).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NavArea {
    /// Unique name, used to toggle it.
    pub name: String,
    /// The outline.
    pub polygon: Polygon,
    /// Whether it is walkable now (doors, gates).
    pub available: bool,
}

/// Everything passability is computed from.
#[derive(Clone, Debug)]
pub struct WorldDesc {
    /// Grid size and navcell size.
    pub grid: GridSpec,
    /// The passability classes.
    pub classes: ClassSet,
    /// Heightmap and water.
    pub terrain: Terrain,
    /// The impassable map edge.
    pub border: MapBorder,
    /// Navigation areas; none means the whole map is walkable terrain.
    pub areas: Vec<NavArea>,
    /// Obstacle polygons (impassable zones inside the areas).
    pub obstacles: Vec<Polygon>,
    /// Extra distance around obstacle polygons, on top of each class's clearance. `[Units: metres]`
    pub object_padding: Fixed,
    /// A navcell is walkable only when some available area holds its centre at least this far
    /// inside that area's own edge (so where two available areas overlap, the shared stretch of
    /// one's edge inside the other does not block). `[Units: metres]`
    pub boundary_padding: Fixed,
    /// Movement classes (bit `k` for class `k`) whose long-range search runs over jump tables
    /// (JPS+) instead of block scans (JPS): the same paths, somewhat faster queries on open maps,
    /// but 16 bytes per navcell and most of the build time (about 90 ms per class on a 1024 × 1024
    /// grid, see BENCHMARKS.md). Bits of foundation classes are ignored.
    pub jump_table_classes: u16,
    /// Movement classes (bit `k` for class `k`) whose long-range searches use the landmark
    /// heuristic ([`Landmarks`], [`LANDMARKS_PER_CLASS`] landmarks): the same path costs with 2–7
    /// times fewer expansions on maps of rooms, corridors and dead ends, but paths of equal cost may
    /// differ, so this is game state (peers must agree on it). Each table costs 32 bytes per
    /// navcell and `LANDMARKS_PER_CLASS + 1` Dijkstra passes to build (about 200 ms on a
    /// 1024 × 1024 grid), and is built from the grid with every area available and no obstruction
    /// square, so obstruction changes and area toggles never touch it; terrain edits rebuild it.
    /// Bits of foundation classes are ignored.
    pub landmark_classes: u16,
    /// The painted layer: empty for none, else one [`CellKind`] per navcell in navcell order (row
    /// `j = 0` first, `i` fastest, as [`NavGrid::index`]). Painted kinds replace the heightmap's
    /// water depth and shore distance, and blocked navcells are impassable for every class; the
    /// heightmap's slope, the border, the areas and the obstacles still apply (module documentation
    /// of [`crate::build::terrain`], "Painted navcells"). `[Limit: length 0 or width × height]`
    pub cells: Vec<CellKind>,
}

impl WorldDesc {
    /// A world of `grid` navcells over `terrain` for `classes`, with nothing else: no border, no
    /// areas (the whole map is walkable terrain), no obstacles, zero object and boundary paddings, no
    /// jump or landmark tables, no painted layer.
    /// Each of these is one choice a caller states with the matching `with_*` method, so a literal
    /// of all eleven fields is never needed to say "none" ten times.
    pub fn new(grid: GridSpec, classes: ClassSet, terrain: Terrain) -> Self {
        WorldDesc {
            grid,
            classes,
            terrain,
            border: MapBorder::None,
            areas: Vec::new(),
            obstacles: Vec::new(),
            object_padding: Fixed::ZERO,
            boundary_padding: Fixed::ZERO,
            jump_table_classes: 0,
            landmark_classes: 0,
            cells: Vec::new(),
        }
    }

    /// The same world with the impassable map edge `border`.
    #[must_use]
    pub fn with_border(self, border: MapBorder) -> Self {
        WorldDesc { border, ..self }
    }

    /// The same world with the navigation areas `areas` (none means the whole map is walkable terrain).
    #[must_use]
    pub fn with_areas(self, areas: Vec<NavArea>) -> Self {
        WorldDesc { areas, ..self }
    }

    /// The same world with the obstacle polygons `obstacles`.
    #[must_use]
    pub fn with_obstacles(self, obstacles: Vec<Polygon>) -> Self {
        WorldDesc { obstacles, ..self }
    }

    /// The same world with the object padding and the boundary padding (see the fields). `[Units: metres]`
    #[must_use]
    pub fn with_paddings(self, object_padding: Fixed, boundary_padding: Fixed) -> Self {
        WorldDesc { object_padding, boundary_padding, ..self }
    }

    /// The same world with jump tables for the movement classes of the mask `jump_table_classes`
    /// (see the field).
    #[must_use]
    pub fn with_jump_table_classes(self, jump_table_classes: u16) -> Self {
        WorldDesc { jump_table_classes, ..self }
    }

    /// The same world with landmark tables for the movement classes of the mask `landmark_classes`
    /// (see the field; this is game state).
    #[must_use]
    pub fn with_landmark_classes(self, landmark_classes: u16) -> Self {
        WorldDesc { landmark_classes, ..self }
    }

    /// The same world with the painted layer `cells` (see the field for its order and length).
    #[must_use]
    pub fn with_cells(self, cells: Vec<CellKind>) -> Self {
        WorldDesc { cells, ..self }
    }

    /// A world from a polygon config of the grid-pathfinding design: its navcell size, areas,
    /// obstacles, object and boundary paddings; flat dry terrain; no border; no jump tables.
    /// Coordinates are shifted so that the config's grid (see [`PolygonConfig::grid_bounds`]) starts
    /// at the world origin: a config point `(x, z)` is the world point `(x − min_x, z − min_z)`.
    /// The config's `agentRadius` is not a class: give the walking class that clearance in
    /// `classes` (obstacles are grown by each class's clearance plus the object padding).
    ///
    /// # Errors
    /// [`WorldError::Config`] when the config's grid is unusable or a shifted polygon leaves the
    /// coordinate range.
    pub fn from_polygon_config(config: &PolygonConfig, classes: ClassSet) -> Result<(Self, GridBounds), WorldError> {
        let bounds = config.grid_bounds().map_err(|e| WorldError::Config(e.to_string()))?;
        let shift = |p: &Polygon| {
            let moved = p.vertices().iter().map(|v| WorldPos::new(v.x - bounds.min_x, v.z - bounds.min_z)).collect();
            Polygon::new(moved).map_err(|e| WorldError::Config(e.to_string()))
        };
        let mut areas = Vec::new();
        for a in config.areas() {
            areas.push(NavArea { name: a.name().to_owned(), polygon: shift(a.polygon())?, available: a.available() });
        }
        let obstacles = config.obstacles().iter().map(|o| shift(o.polygon())).collect::<Result<Vec<_>, _>>()?;
        let cell_size = config.cell_size();
        let terrain = Terrain::flat(1, 1, MAX_TILE_SIZE, Fixed::ZERO, -Fixed::ONE).map_err(WorldError::Terrain)?;
        let desc = WorldDesc::new(GridSpec { width: bounds.width, height: bounds.depth, cell_size }, classes, terrain)
            .with_areas(areas)
            .with_obstacles(obstacles)
            .with_paddings(config.object_padding(), config.boundary_padding());
        Ok((desc, bounds))
    }

    /// A world painted navcell by navcell (a Moving AI map, [`crate::formats::movingai::MovingAiMap::cell_kinds`],
    /// or a grid-text file, [`crate::formats::grid_text::GridText::cell_kinds`]): a `width × height` grid of
    /// navcells of side `cell_size` with the origin at its south-west corner, `cells` in navcell
    /// order (row `j = 0` first, `i` fastest); flat dry terrain (height 0, water level −1 m) on
    /// tiles of 4 navcells (of 1 navcell when `4 · cell_size` is above [`MAX_TILE_SIZE`]) covering
    /// the grid, so terrain edits address the same vertices as on a sampled map; no border, no
    /// areas, no obstacles, no paddings, no jump tables.
    ///
    /// # Errors
    /// [`WorldError::Terrain`] ([`TerrainError::BadGridSpec`]) when a side is outside
    /// `1..=`[`MAX_TERRAIN_GRID_SIDE`](crate::build::terrain::MAX_TERRAIN_GRID_SIDE) or the navcell size
    /// outside `(0, MAX_CELL_SIZE]`, or ([`TerrainError::BadTileCount`]) when the covering
    /// terrain would need more than [`MAX_TILES`](crate::build::terrain::MAX_TILES) tiles on a side;
    /// [`WorldError::CellCount`] when `cells` does not hold `width × height` kinds.
    pub fn from_cells(width: u32, height: u32, cell_size: Fixed, cells: Vec<CellKind>, classes: ClassSet) -> Result<WorldDesc, WorldError> {
        let spec = GridSpec { width, height, cell_size };
        spec.check().map_err(WorldError::Terrain)?;
        if cells.len() != spec.n_cells() {
            return Err(WorldError::CellCount { expected: spec.n_cells(), found: cells.len() });
        }
        // 0 A.D.'s proportion (4 m tiles of 1 m navcells) keeps the interpolation denominator at 8.
        let (per_tile, tile_size) = if cell_size * 4 <= MAX_TILE_SIZE { (4, cell_size * 4) } else { (1, cell_size) };
        let terrain = Terrain::flat(width.div_ceil(per_tile), height.div_ceil(per_tile), tile_size, Fixed::ZERO, -Fixed::ONE)
            .map_err(WorldError::Terrain)?;
        Ok(WorldDesc::new(spec, classes, terrain).with_cells(cells))
    }
}

/// Why a change to the world was refused. Refused changes change nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorldError {
    /// An obstruction id is already in use.
    DuplicateId(ObstructionId),
    /// No obstruction has this id.
    UnknownId(ObstructionId),
    /// No area has this name.
    UnknownArea(String),
    /// Two areas share a name.
    DuplicateArea(String),
    /// A coordinate or size is beyond [`WORLD_LIMIT`], or a half-size is negative.
    OutOfRange,
    /// Both half-sizes are zero: the obstruction has no extent at all.
    ZeroSize,
    /// The obstruction does not reach any navcell of the grid.
    OffMap,
    /// A padding is negative or beyond [`WORLD_LIMIT`].
    BadPadding,
    /// The terrain cannot cover the grid.
    Terrain(TerrainError),
    /// A polygon config cannot become a world.
    Config(String),
    /// The painted layer ([`WorldDesc::cells`]) is neither empty nor one kind per navcell.
    CellCount {
        /// Navcells of the grid (`width × height`).
        expected: usize,
        /// Painted navcells given.
        found: usize,
    },
}

impl std::fmt::Display for WorldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WorldError::DuplicateId(id) => write!(f, "obstruction id {id} is already in use"),
            WorldError::UnknownId(id) => write!(f, "no obstruction has id {id}"),
            WorldError::UnknownArea(name) => write!(f, "no navigation area is named {name:?}"),
            WorldError::DuplicateArea(name) => write!(f, "two navigation areas are named {name:?}"),
            WorldError::OutOfRange => write!(f, "obstruction coordinates and sizes must be within ±{WORLD_LIMIT} m, sizes ≥ 0"),
            WorldError::ZeroSize => write!(f, "obstruction has zero width and zero height"),
            WorldError::OffMap => write!(f, "obstruction does not touch the map"),
            WorldError::BadPadding => write!(f, "paddings must be within 0..={WORLD_LIMIT} m"),
            WorldError::Terrain(e) => write!(f, "terrain: {e}"),
            WorldError::Config(e) => write!(f, "polygon config: {e}"),
            WorldError::CellCount { expected, found } => {
                write!(f, "painted layer of {found} navcells, expected {expected} (width × height) or none")
            }
        }
    }
}

impl std::error::Error for WorldError {}

/// A set of classes that rasterize obstruction squares alike: same flag, same clearance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RasterGroup {
    flag: u8,
    clearance: Fixed,
    mask: u16,
}

/// The world's passability, built and kept current. See the module documentation.
#[derive(Clone, Debug)]
pub struct NavWorld {
    desc: WorldDesc,
    terrain_pass: TerrainPass,
    groups: Vec<RasterGroup>,
    /// Obstacle-polygon growth per class: (distance, class mask), distinct distances.
    obstacle_groups: Vec<(Fixed, u16)>,
    obstructions: BTreeMap<ObstructionId, Obstruction>,
    /// Obstruction ids per bucket of `BUCKET × BUCKET` navcells, each id in every bucket its
    /// dirty rectangle meets. Unordered; queries sort.
    buckets: Vec<Vec<ObstructionId>>,
    buckets_w: u32,
    base: Vec<u16>,
    terrain_only: NavGrid,
    grid: NavGrid,
    navs: Vec<Option<ClassNav>>,
    /// Rectangles whose obstructions changed since the last update.
    pending: Vec<CellRect>,
    /// Rectangles whose base (areas) changed since the last update.
    pending_base: Vec<CellRect>,
    /// The terrain changed: rebuild everything.
    pending_full: bool,
    /// Largest clearance expansion of any class. `[Units: navcells]`
    max_clearance_cells: u32,
}

impl NavWorld {
    /// Builds every grid and every class's long-range structures from a description, with no
    /// obstruction squares.
    ///
    /// # Errors
    /// [`WorldError`] when area names repeat, a padding is out of range, the painted layer has the
    /// wrong length ([`WorldError::CellCount`]) or the terrain cannot cover the grid.
    pub fn new(desc: WorldDesc) -> Result<Self, WorldError> {
        Self::build(desc, [])
    }

    /// Builds every grid and every class's long-range structures from a description and a set of
    /// obstruction squares (a map being loaded): one full build, no incremental updates.
    ///
    /// # Errors
    /// [`WorldError`] when area names repeat, a padding is out of range, the painted layer has the
    /// wrong length ([`WorldError::CellCount`]), the terrain cannot cover the grid, or an
    /// obstruction is refused as by [`NavWorld::add_obstruction`].
    pub fn build(desc: WorldDesc, obstructions: impl IntoIterator<Item = (ObstructionId, Obstruction)>) -> Result<Self, WorldError> {
        for (k, a) in desc.areas.iter().enumerate() {
            if desc.areas[..k].iter().any(|b| b.name == a.name) {
                return Err(WorldError::DuplicateArea(a.name.clone()));
            }
        }
        for p in [desc.object_padding, desc.boundary_padding] {
            if p < Fixed::ZERO || p > WORLD_LIMIT {
                return Err(WorldError::BadPadding);
            }
        }
        let spec = desc.grid;
        let n_classes = desc.classes.len();
        let grid = NavGrid::new(spec.width, spec.height, n_classes, spec.cell_size).map_err(|_| WorldError::OutOfRange)?;
        if !desc.cells.is_empty() && desc.cells.len() != grid.n_cells() {
            return Err(WorldError::CellCount { expected: grid.n_cells(), found: desc.cells.len() });
        }
        let terrain_pass = TerrainPass::with_cells(&desc.terrain, spec, &desc.cells).map_err(WorldError::Terrain)?;
        let mut groups: Vec<RasterGroup> = Vec::new();
        let mut obstacle_groups: Vec<(Fixed, u16)> = Vec::new();
        let mut max_clearance_cells = 0;
        for (class, def) in desc.classes.iter() {
            max_clearance_cells = max_clearance_cells.max(def.clearance_cells(spec.cell_size));
            let flag = match def.obstructions {
                ObstructionMode::Pathfinding => ObstructionFlags::BLOCK_PATHFINDING,
                ObstructionMode::Foundation => ObstructionFlags::BLOCK_FOUNDATION,
                ObstructionMode::None => 0,
            };
            // Squares and polygons use the clearance the terrain dilation uses: whole navcells.
            let clearance = def.whole_clearance(spec.cell_size);
            if flag != 0 {
                match groups.iter_mut().find(|g| g.flag == flag && g.clearance == clearance) {
                    Some(g) => g.mask |= class.bit(),
                    None => groups.push(RasterGroup { flag, clearance, mask: class.bit() }),
                }
            }
            let grow = clearance.saturating_add(desc.object_padding);
            match obstacle_groups.iter_mut().find(|g| g.0 == grow) {
                Some(g) => g.1 |= class.bit(),
                None => obstacle_groups.push((grow, class.bit())),
            }
        }
        let buckets_w = spec.width.div_ceil(BUCKET);
        let buckets_h = spec.height.div_ceil(BUCKET);
        let mut world = Self {
            terrain_only: grid.clone(),
            base: vec![0; grid.n_cells()],
            grid,
            desc,
            terrain_pass,
            groups,
            obstacle_groups,
            obstructions: BTreeMap::new(),
            buckets: vec![Vec::new(); (buckets_w * buckets_h) as usize],
            buckets_w,
            navs: Vec::new(),
            pending: Vec::new(),
            pending_base: Vec::new(),
            pending_full: false,
            max_clearance_cells,
        };
        for (id, o) in obstructions {
            world.add_obstruction(id, o)?;
        }
        world.rebuild();
        Ok(world)
    }

    /// The description the world was built from, as it is now (areas toggled, terrain edited).
    pub fn desc(&self) -> &WorldDesc {
        &self.desc
    }

    /// The classes.
    pub fn classes(&self) -> &ClassSet {
        &self.desc.classes
    }

    /// The full grid, as of the last [`NavWorld::update`].
    pub fn grid(&self) -> &NavGrid {
        &self.grid
    }

    /// The terrain-only grid (terrain, border, areas, obstacle polygons; no squares).
    pub fn terrain_only(&self) -> &NavGrid {
        &self.terrain_only
    }

    /// The long-range structures of a movement class, as of the last update; `None` for
    /// foundation classes.
    pub fn class_nav(&self, class: PassClass) -> Option<&ClassNav> {
        self.navs.get(usize::from(class.index())).and_then(Option::as_ref)
    }

    /// The obstruction squares, by id.
    pub fn obstructions(&self) -> &BTreeMap<ObstructionId, Obstruction> {
        &self.obstructions
    }

    /// Whether changes are waiting for [`NavWorld::update`].
    pub fn has_pending(&self) -> bool {
        self.pending_full || !self.pending.is_empty() || !self.pending_base.is_empty()
    }

    /// Adds an obstruction square under a caller-chosen id (an entity id, say).
    ///
    /// # Errors
    /// [`WorldError::DuplicateId`], [`WorldError::OutOfRange`] (a coordinate beyond
    /// [`WORLD_LIMIT`]), [`WorldError::ZeroSize`], [`WorldError::OffMap`].
    pub fn add_obstruction(&mut self, id: ObstructionId, obstruction: Obstruction) -> Result<(), WorldError> {
        if self.obstructions.contains_key(&id) {
            return Err(WorldError::DuplicateId(id));
        }
        let rect = self.validate(&obstruction.square)?;
        self.obstructions.insert(id, obstruction);
        self.index(id, rect, true);
        self.pending.push(rect);
        Ok(())
    }

    /// Removes an obstruction, returning it.
    ///
    /// # Errors
    /// [`WorldError::UnknownId`].
    pub fn remove_obstruction(&mut self, id: ObstructionId) -> Result<Obstruction, WorldError> {
        let obstruction = self.obstructions.remove(&id).ok_or(WorldError::UnknownId(id))?;
        let rect = self.reach(&obstruction.square);
        self.index(id, rect, false);
        self.pending.push(rect);
        Ok(obstruction)
    }

    /// Replaces an obstruction's square and flags (a moved or rotated building, a gate opened by
    /// changing its flags).
    ///
    /// # Errors
    /// As [`NavWorld::remove_obstruction`] and [`NavWorld::add_obstruction`]; on error nothing
    /// changes.
    pub fn move_obstruction(&mut self, id: ObstructionId, obstruction: Obstruction) -> Result<(), WorldError> {
        if !self.obstructions.contains_key(&id) {
            return Err(WorldError::UnknownId(id));
        }
        self.validate(&obstruction.square)?;
        self.remove_obstruction(id)?;
        self.add_obstruction(id, obstruction)
    }

    /// Opens or closes a navigation area. Returns whether anything changed.
    ///
    /// # Errors
    /// [`WorldError::UnknownArea`].
    pub fn set_area_available(&mut self, name: &str, available: bool) -> Result<bool, WorldError> {
        let spec = self.desc.grid;
        let area = self.desc.areas.iter_mut().find(|a| a.name == name).ok_or_else(|| WorldError::UnknownArea(name.to_owned()))?;
        if area.available == available {
            return Ok(false);
        }
        area.available = available;
        let (lo, hi) = area.polygon.bbox();
        let rect = world_box_cells(lo, hi, Fixed::ZERO, spec);
        self.pending_base.push(rect);
        Ok(true)
    }

    /// Replaces the terrain (heights or water level edited). Everything is rebuilt at the next
    /// update, as in 0 A.D. On a painted world only the heightmap's slopes matter (the painting
    /// decides where water is).
    ///
    /// # Errors
    /// [`WorldError::Terrain`] when the terrain cannot cover the grid; nothing changes then.
    pub fn set_terrain(&mut self, terrain: Terrain) -> Result<(), WorldError> {
        self.terrain_pass = TerrainPass::with_cells(&terrain, self.desc.grid, &self.desc.cells).map_err(WorldError::Terrain)?;
        self.desc.terrain = terrain;
        self.pending_full = true;
        Ok(())
    }

    /// Applies every queued change. Returns the navcell rectangles whose passability may have
    /// changed (merged, sorted by `(j0, i0)`; the whole grid after a terrain edit), for the
    /// simulation's state digest and for AI copies of the grid.
    pub fn update(&mut self) -> Vec<CellRect> {
        let spec = self.desc.grid;
        if self.pending_full {
            self.rebuild();
            return vec![CellRect::full(spec.width, spec.height)];
        }
        let base_rects = merge_rects(std::mem::take(&mut self.pending_base));
        let mut rects = std::mem::take(&mut self.pending);
        for r in &base_rects {
            let expanded = r.grow_clipped(self.max_clearance_cells, spec.width, spec.height);
            self.rebuild_terrain_only(*r, expanded);
            rects.push(expanded);
        }
        let rects = merge_rects(rects);
        for r in &rects {
            let changed = self.refresh_rect(*r);
            for (k, nav) in self.navs.iter_mut().enumerate() {
                if let Some(nav) = nav
                    && changed & (1 << k) != 0
                {
                    nav.update_rect(&self.grid, *r);
                }
            }
        }
        rects
    }

    /// Rebuilds every layer from scratch (what incremental updates must equal).
    fn rebuild(&mut self) {
        let spec = self.desc.grid;
        let full = CellRect::full(spec.width, spec.height);
        self.pending.clear();
        self.pending_base.clear();
        self.pending_full = false;
        self.rebuild_terrain_only(full, full);
        self.grid = self.terrain_only.clone();
        let ids: Vec<ObstructionId> = self.obstructions.keys().copied().collect();
        for id in ids {
            self.rasterize(id, full);
        }
        let grid = &self.grid;
        let tables = self.desc.jump_table_classes;
        self.navs = self
            .desc
            .classes
            .iter()
            .map(|(class, def)| match def.obstructions {
                ObstructionMode::Foundation => None,
                _ => Some(ClassNav::build_with(grid, class, tables & class.bit() != 0)),
            })
            .collect();
        let landmark_classes = self.desc.landmark_classes;
        if self.navs.iter().enumerate().any(|(k, nav)| nav.is_some() && landmark_classes & (1 << k) != 0) {
            let open = self.permissive_grid();
            for (k, nav) in self.navs.iter_mut().enumerate() {
                if let Some(nav) = nav
                    && landmark_classes & (1 << k) != 0
                {
                    let class = PassClass::new(k as u8).expect("one ClassNav per class");
                    nav.set_landmarks(Some(Landmarks::build(&PassMap::build(&open, class), LANDMARKS_PER_CLASS)));
                }
            }
        }
    }

    /// The terrain-only grid as it would be with every navigation area available: what the
    /// landmark tables are built from. An area's availability only ever adds blocked navcells (a
    /// navcell is walkable when *some* available area holds it away from that area's edge), and
    /// obstruction squares only ever block, so every grid this world can reach until its terrain
    /// changes is passable at most where this one is.
    fn permissive_grid(&mut self) -> NavGrid {
        let closed: Vec<usize> = (0..self.desc.areas.len()).filter(|&k| !self.desc.areas[k].available).collect();
        if closed.is_empty() {
            return self.terrain_only.clone();
        }
        let full = CellRect::full(self.desc.grid.width, self.desc.grid.height);
        let (base, terrain_only) = (self.base.clone(), self.terrain_only.clone());
        for &k in &closed {
            self.desc.areas[k].available = true;
        }
        self.rebuild_terrain_only(full, full);
        for &k in &closed {
            self.desc.areas[k].available = false;
        }
        self.base = base;
        std::mem::replace(&mut self.terrain_only, terrain_only)
    }

    /// Recomputes the base masks inside `base_rect` and the terrain-only grid inside `out_rect`
    /// (which must hold `base_rect` grown by the largest clearance).
    fn rebuild_terrain_only(&mut self, base_rect: CellRect, out_rect: CellRect) {
        let spec = self.desc.grid;
        let w = spec.width as usize;
        let mut row = vec![0u16; base_rect.area() as usize];
        self.terrain_pass.base_masks(&self.desc.classes, self.desc.border, base_rect, &mut row).expect("the rectangle is on the grid");
        let rw = (base_rect.i1 - base_rect.i0) as usize;
        for (n, j) in (base_rect.j0..base_rect.j1).enumerate() {
            let dst = j as usize * w + base_rect.i0 as usize;
            self.base[dst..dst + rw].copy_from_slice(&row[n * rw..(n + 1) * rw]);
        }
        if !self.desc.areas.is_empty() {
            self.apply_areas(base_rect);
        }
        expand_clearance(&self.base, spec.width, spec.height, &self.desc.classes, spec.cell_size, out_rect, &mut self.terrain_only)
            .expect("the base masks and the terrain-only grid have the grid's size");
        for p in &self.desc.obstacles {
            for &(grow, mask) in &self.obstacle_groups {
                let grid = &mut self.terrain_only;
                p.mark_cells(CellTest::InsideOrNear(grow), WorldPos::new(Fixed::ZERO, Fixed::ZERO), spec.cell_size, out_rect, |i, j| {
                    grid.block_span(j, i, i + 1, mask)
                });
            }
        }
    }

    /// Blocks, in the base masks, every navcell of `rect` outside all available areas.
    fn apply_areas(&mut self, rect: CellRect) {
        let spec = self.desc.grid;
        let w = spec.width as usize;
        let rw = (rect.i1 - rect.i0) as usize;
        let mut inside = vec![false; rect.area() as usize];
        let test =
            if self.desc.boundary_padding > Fixed::ZERO { CellTest::InsideAwayFrom(self.desc.boundary_padding) } else { CellTest::Inside };
        for area in self.desc.areas.iter().filter(|a| a.available) {
            area.polygon.mark_cells(test, WorldPos::new(Fixed::ZERO, Fixed::ZERO), spec.cell_size, rect, |i, j| {
                inside[(j - rect.j0) as usize * rw + (i - rect.i0) as usize] = true;
            });
        }
        let all = self.grid.class_bits();
        for (n, j) in (rect.j0..rect.j1).enumerate() {
            for (m, i) in (rect.i0..rect.i1).enumerate() {
                if !inside[n * rw + m] {
                    self.base[j as usize * w + i as usize] |= all;
                }
            }
        }
    }

    /// Resets `rect` of the full grid to the terrain-only values and rasterizes every obstruction
    /// that reaches it, clipped to it. Returns the class bits that changed anywhere in `rect`.
    fn refresh_rect(&mut self, rect: CellRect) -> u16 {
        let w = self.desc.grid.width as usize;
        let rw = (rect.i1 - rect.i0) as usize;
        let mut before = Vec::with_capacity(rect.area() as usize);
        for j in rect.j0..rect.j1 {
            let at = j as usize * w + rect.i0 as usize;
            before.extend_from_slice(&self.grid.blocked_masks()[at..at + rw]);
            self.grid.blocked_masks_mut()[at..at + rw].copy_from_slice(&self.terrain_only.blocked_masks()[at..at + rw]);
        }
        for id in self.ids_near(rect) {
            self.rasterize(id, rect);
        }
        let mut changed = 0u16;
        for (n, j) in (rect.j0..rect.j1).enumerate() {
            let at = j as usize * w + rect.i0 as usize;
            for (a, b) in before[n * rw..(n + 1) * rw].iter().zip(&self.grid.blocked_masks()[at..at + rw]) {
                changed |= a ^ b;
            }
        }
        changed
    }

    /// Rasterizes one obstruction into the full grid for every class group, clipped to `clip`.
    fn rasterize(&mut self, id: ObstructionId, clip: CellRect) {
        let Some(obstruction) = self.obstructions.get(&id) else { return };
        let cell_size = self.desc.grid.cell_size;
        for g in &self.groups {
            if obstruction.flags.0 & g.flag == 0 {
                continue;
            }
            let grid = &mut self.grid;
            rasterize_square(&obstruction.square, g.clearance, cell_size, clip, |j, i0, i1| grid.block_span(j, i0, i1, g.mask));
        }
    }

    /// Ids of the obstructions whose reach meets `rect`, ascending.
    fn ids_near(&self, rect: CellRect) -> Vec<ObstructionId> {
        let mut ids = Vec::new();
        if rect.is_empty() {
            return ids;
        }
        for by in rect.j0 / BUCKET..=(rect.j1 - 1) / BUCKET {
            for bx in rect.i0 / BUCKET..=(rect.i1 - 1) / BUCKET {
                ids.extend_from_slice(&self.buckets[(by * self.buckets_w + bx) as usize]);
            }
        }
        ids.sort_unstable();
        ids.dedup();
        ids.retain(|id| self.obstructions.get(id).is_some_and(|o| !self.reach(&o.square).intersect(&rect).is_empty()));
        ids
    }

    fn index(&mut self, id: ObstructionId, rect: CellRect, add: bool) {
        if rect.is_empty() {
            return;
        }
        for by in rect.j0 / BUCKET..=(rect.j1 - 1) / BUCKET {
            for bx in rect.i0 / BUCKET..=(rect.i1 - 1) / BUCKET {
                let bucket = &mut self.buckets[(by * self.buckets_w + bx) as usize];
                if add {
                    bucket.push(id);
                } else if let Some(at) = bucket.iter().position(|&x| x == id) {
                    bucket.swap_remove(at);
                }
            }
        }
    }

    /// Checks a square's ranges and returns its reach on the grid.
    fn validate(&self, square: &Square) -> Result<CellRect, WorldError> {
        let c = square.center();
        if c.x.abs() > WORLD_LIMIT || c.z.abs() > WORLD_LIMIT || square.hw() > WORLD_LIMIT || square.hh() > WORLD_LIMIT {
            return Err(WorldError::OutOfRange);
        }
        if square.hw() == Fixed::ZERO && square.hh() == Fixed::ZERO {
            return Err(WorldError::ZeroSize);
        }
        let rect = self.reach(square);
        if rect.is_empty() {
            return Err(WorldError::OffMap);
        }
        Ok(rect)
    }

    /// The navcells any class's rasterization of `square` can touch, clipped to the grid.
    fn reach(&self, square: &Square) -> CellRect {
        let spec = self.desc.grid;
        let r32 = self.groups.iter().map(|g| effective_radius_raw32(square, g.clearance, spec.cell_size)).max().unwrap_or(0);
        // Round R up to 16 fractional bits.
        let r = Fixed::from_bits(((r32 + 0xffff) >> 16) as i64);
        let (ux, uz, vx, vz) = (raw(square.u().x), raw(square.u().z), raw(square.v().x), raw(square.v().z));
        let (hw, hh) = (raw(square.hw()), raw(square.hh()));
        let ex = Fixed::from_bits(((hw * ux.abs() + hh * vx.abs() + 0xffff) >> 16) as i64);
        let ez = Fixed::from_bits(((hw * uz.abs() + hh * vz.abs() + 0xffff) >> 16) as i64);
        let c = square.center();
        let lo = WorldPos::new(c.x - ex, c.z - ez);
        let hi = WorldPos::new(c.x + ex, c.z + ez);
        world_box_cells(lo, hi, r, spec)
    }
}

/// The navcells meeting the box `[lo, hi]` grown by `margin` (plus one navcell of slack), clipped
/// to the grid.
fn world_box_cells(lo: WorldPos, hi: WorldPos, margin: Fixed, spec: GridSpec) -> CellRect {
    let s = raw(spec.cell_size);
    let m = raw(margin);
    let cell_lo = |v: Fixed| (raw(v) - m).div_euclid(s) - 1;
    let cell_hi = |v: Fixed| (raw(v) + m).div_euclid(s) + 2;
    let clamp = |v: i128, n: u32| v.clamp(0, i128::from(n)) as u32;
    CellRect::new(
        clamp(cell_lo(lo.x), spec.width),
        clamp(cell_lo(lo.z), spec.height),
        clamp(cell_hi(hi.x), spec.width),
        clamp(cell_hi(hi.z), spec.height),
    )
}

/// Merges overlapping rectangles until none overlap; sorted by `(j0, i0, j1, i1)`.
fn merge_rects(mut rects: Vec<CellRect>) -> Vec<CellRect> {
    rects.retain(|r| !r.is_empty());
    loop {
        let mut merged = false;
        'outer: for a in 0..rects.len() {
            for b in a + 1..rects.len() {
                if !rects[a].intersect(&rects[b]).is_empty() {
                    rects[a] = rects[a].union(&rects[b]);
                    rects.swap_remove(b);
                    merged = true;
                    break 'outer;
                }
            }
        }
        if !merged {
            break;
        }
    }
    rects.sort_unstable_by_key(|r| (r.j0, r.i0, r.j1, r.i1));
    rects
}

#[cfg(test)]
mod tests;
