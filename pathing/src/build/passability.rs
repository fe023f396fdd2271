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
/// benchmark maps stop gaining much (BENCHMARKS.md, "What made the difference").
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
        let desc = WorldDesc {
            grid: GridSpec { width: bounds.width, height: bounds.depth, cell_size },
            classes,
            terrain,
            border: MapBorder::None,
            areas,
            obstacles,
            object_padding: config.object_padding(),
            boundary_padding: config.boundary_padding(),
            jump_table_classes: 0,
            landmark_classes: 0,
            cells: Vec::new(),
        };
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
        Ok(WorldDesc {
            grid: spec,
            classes,
            terrain,
            border: MapBorder::None,
            areas: Vec::new(),
            obstacles: Vec::new(),
            object_padding: Fixed::ZERO,
            boundary_padding: Fixed::ZERO,
            jump_table_classes: 0,
            landmark_classes: 0,
            cells,
        })
    }
}

/// Why a change to the world was refused. Refused changes change nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorldError {
    /// An obstruction id is already in use.
    DuplicateId(u32),
    /// No obstruction has this id.
    UnknownId(u32),
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
    obstructions: BTreeMap<u32, Obstruction>,
    /// Obstruction ids per bucket of `BUCKET × BUCKET` navcells, each id in every bucket its
    /// dirty rectangle meets. Unordered; queries sort.
    buckets: Vec<Vec<u32>>,
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
    pub fn build(desc: WorldDesc, obstructions: impl IntoIterator<Item = (u32, Obstruction)>) -> Result<Self, WorldError> {
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
            if flag != 0 {
                match groups.iter_mut().find(|g| g.flag == flag && g.clearance == def.clearance) {
                    Some(g) => g.mask |= class.bit(),
                    None => groups.push(RasterGroup { flag, clearance: def.clearance, mask: class.bit() }),
                }
            }
            let grow = def.clearance.saturating_add(desc.object_padding);
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
    pub fn obstructions(&self) -> &BTreeMap<u32, Obstruction> {
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
    pub fn add_obstruction(&mut self, id: u32, obstruction: Obstruction) -> Result<(), WorldError> {
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
    pub fn remove_obstruction(&mut self, id: u32) -> Result<Obstruction, WorldError> {
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
    pub fn move_obstruction(&mut self, id: u32, obstruction: Obstruction) -> Result<(), WorldError> {
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
                    nav.update_rect(&self.grid, r.i0, r.j0, r.i1, r.j1);
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
        let ids: Vec<u32> = self.obstructions.keys().copied().collect();
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
    fn rasterize(&mut self, id: u32, clip: CellRect) {
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
    fn ids_near(&self, rect: CellRect) -> Vec<u32> {
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

    fn index(&mut self, id: u32, rect: CellRect, add: bool) {
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
mod tests {
    use super::*;
    use crate::build::raster::oriented_square;
    use crate::build::refworld::{RefWorldParams, generate};
    use proptest::prelude::*;

    fn square(x: i32, z: i32, hw2: i32, hh2: i32, deg: i32) -> Square {
        oriented_square(WorldPos::from_int(x, z), Fixed::from_num(hw2) / 2, Fixed::from_num(hh2) / 2, Fixed::from_num(deg)).unwrap()
    }

    fn small_world(seed: u64) -> (WorldDesc, Vec<(u32, Obstruction)>) {
        let mut p = RefWorldParams::scaled(24, seed);
        p.circular = seed % 2 == 1;
        generate(&p)
    }

    /// Paints a world in blocks of `block × block` navcells (so that painted water has shores and
    /// blocked patches have sides for the clearance to grow from): about half ground, a third
    /// water, the rest blocked.
    fn paint(desc: &mut WorldDesc, seed: u64, block: u32) {
        let mut state = seed ^ 0x0070_6169_6e74;
        let (w, h) = (desc.grid.width, desc.grid.height);
        let (bw, bh) = (w.div_ceil(block), h.div_ceil(block));
        let blocks: Vec<CellKind> = (0..bw * bh)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                match (state >> 33) % 6 {
                    0 | 1 => CellKind::Water,
                    2 => CellKind::Blocked,
                    _ => CellKind::Ground,
                }
            })
            .collect();
        desc.cells =
            (0..h).flat_map(|j| (0..w).map(move |i| (i, j))).map(|(i, j)| blocks[((j / block) * bw + i / block) as usize]).collect();
    }

    /// Everything derived, compared with a world rebuilt from the same state.
    fn assert_matches_rebuild(world: &NavWorld) {
        let rebuilt = NavWorld::build(world.desc().clone(), world.obstructions().iter().map(|(&id, &o)| (id, o))).unwrap();
        assert!(world.terrain_only() == rebuilt.terrain_only(), "terrain-only grid differs from a rebuild");
        assert!(world.grid() == rebuilt.grid(), "grid differs from a rebuild");
        for k in 0..world.classes().len() {
            let class = PassClass::new(k).unwrap();
            assert!(world.class_nav(class) == rebuilt.class_nav(class), "class {k} long-range data differs from a rebuild");
        }
    }

    /// Every class with a landmark table finds paths of the cost a search without one finds
    /// (the octile JPS, itself checked against A* elsewhere), with the same outcome, between
    /// passable navcells spread over the grid: the table, built before obstructions came and went
    /// and doors opened or closed, is still an exact bound.
    fn assert_landmark_paths_optimal(world: &NavWorld, seed: u64) {
        use crate::{Goal, Navcell, Path, SearchLimits, SearchScratch, find_path};
        let (mut scratch, mut path) = (SearchScratch::new(), Path::new());
        let limits = SearchLimits::UNLIMITED;
        for k in 0..world.classes().len() {
            let class = PassClass::new(k).unwrap();
            let Some(nav) = world.class_nav(class).filter(|n| n.landmarks().is_some()) else { continue };
            let plain = ClassNav::build_with(world.grid(), class, false);
            let map = nav.pass_map();
            let passable: Vec<Navcell> = (0..map.height())
                .flat_map(|j| (0..map.width()).map(move |i| Navcell::new(i as u16, j as u16)))
                .filter(|&c| map.is_passable(c))
                .collect();
            if passable.is_empty() {
                continue;
            }
            let mut state = seed ^ 0x6c61_6e64;
            let mut pick = || {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                passable[(state >> 33) as usize % passable.len()]
            };
            for _ in 0..6 {
                let (start, end) = (pick(), pick());
                let goal = Goal::navcell_center(end.i, end.j, map.cell_size());
                let with = find_path(nav, start, &goal, &limits, &mut scratch, &mut path);
                let cost = path.cost();
                let without = find_path(&plain, start, &goal, &limits, &mut scratch, &mut path);
                assert_eq!(with.status, without.status, "class {k}: {start:?} to {end:?}");
                assert_eq!(cost, path.cost(), "class {k}: {start:?} to {end:?}: landmark path cost differs");
            }
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Add { x: i32, z: i32, hw2: i32, hh2: i32, deg: i32 },
        Remove(usize),
        Move { pick: usize, dx: i32, dz: i32, deg: i32 },
        Area(usize, bool),
        Terrain { vertex: usize, height: i32 },
        Update,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0..96i32, 0..96i32, 0..24i32, 0..24i32, 0..360i32).prop_map(|(x, z, hw2, hh2, deg)| Op::Add { x, z, hw2, hh2, deg }),
            any::<usize>().prop_map(Op::Remove),
            (any::<usize>(), -6..7i32, -6..7i32, 0..360i32).prop_map(|(pick, dx, dz, deg)| Op::Move { pick, dx, dz, deg }),
            (any::<usize>(), any::<bool>()).prop_map(|(pick, open)| Op::Area(pick, open)),
            (any::<usize>(), 0..40i32).prop_map(|(vertex, height)| Op::Terrain { vertex, height }),
            Just(Op::Update),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Adding, removing and moving obstructions, opening and closing areas and editing the
        /// terrain, updated in any grouping, gives exactly a full rebuild of the final state; with
        /// landmark tables, their paths keep the octile search's costs.
        #[test]
        fn incremental_updates_equal_a_full_rebuild(seed in 0..1000u64, ops in proptest::collection::vec(op(), 1..24)) {
            // One case in three runs on the rooms of a polygon config (areas, a door, obstacles), one
            // in three on a reference world; half of each is painted over (a painted layer with the
            // terrain, border, areas and obstacles still applying). The last third is a world made
            // only of painted navcells.
            let (mut desc, obstructions) = match seed % 3 {
                0 => {
                    // Half of these with a boundary padding and an annex overlapping the hall and
                    // the door, so that areas are tested each against its own edge.
                    let text = if seed / 4 % 2 == 1 { rooms_with_annex() } else { ROOMS.to_owned() };
                    let config = PolygonConfig::parse_json(&text).unwrap();
                    (WorldDesc::from_polygon_config(&config, one_class(Fixed::from_num(seed % 2))).unwrap().0, Vec::new())
                }
                1 => small_world(seed),
                _ => {
                    let (w, h) = (40 + (seed % 64) as u32, 96);
                    (WorldDesc::from_cells(w, h, Fixed::ONE, vec![CellKind::Ground; (w * h) as usize], ClassSet::zero_ad_defaults()).unwrap(), Vec::new())
                }
            };
            if seed % 3 == 2 || seed / 6 % 2 == 1 {
                // Fine paint on the rooms (0.5 m navcells), so the door itself holds every kind.
                let block = if seed % 3 == 0 { 1 + (seed / 12 % 2) as u32 } else { 4 };
                paint(&mut desc, seed, block);
            }
            // Half the cases give every movement class a landmark table.
            if seed / 2 % 2 == 0 {
                desc.landmark_classes = u16::MAX;
            }
            let mut world = NavWorld::build(desc, obstructions).unwrap();
            let mut next_id = 10_000u32;
            for op in ops {
                match op {
                    Op::Add { x, z, hw2, hh2, deg } => {
                        let o = Obstruction { square: square(x, z, hw2, hh2, deg), flags: ObstructionFlags(1 + (x % 3) as u8) };
                        match world.add_obstruction(next_id, o) {
                            Ok(()) => next_id += 1,
                            Err(e) => prop_assert!(matches!(e, WorldError::ZeroSize | WorldError::OffMap), "{e}"),
                        }
                    }
                    Op::Remove(pick) => {
                        let ids: Vec<u32> = world.obstructions().keys().copied().collect();
                        if !ids.is_empty() {
                            world.remove_obstruction(ids[pick % ids.len()]).unwrap();
                        }
                    }
                    Op::Move { pick, dx, dz, deg } => {
                        let ids: Vec<u32> = world.obstructions().keys().copied().collect();
                        if !ids.is_empty() {
                            let id = ids[pick % ids.len()];
                            let old = world.obstructions()[&id];
                            let c = old.square.center();
                            let moved = oriented_square(
                                WorldPos::new(c.x + Fixed::from_num(dx), c.z + Fixed::from_num(dz)), old.square.hw(), old.square.hh(), Fixed::from_num(deg)).unwrap();
                            let _ = world.move_obstruction(id, Obstruction { square: moved, flags: old.flags });
                        }
                    }
                    Op::Area(pick, open) => {
                        let names: Vec<String> = world.desc().areas.iter().map(|a| a.name.clone()).collect();
                        if !names.is_empty() {
                            world.set_area_available(&names[pick % names.len()], open).unwrap();
                        }
                    }
                    Op::Terrain { vertex, height } => {
                        let t = world.desc().terrain.clone();
                        let mut heights = t.heights().to_vec();
                        let n = heights.len();
                        heights[vertex % n] = Fixed::from_num(height);
                        let edited = Terrain::new(t.tiles_w(), t.tiles_h(), t.tile_size(), heights, t.water_level()).unwrap();
                        world.set_terrain(edited).unwrap();
                    }
                    Op::Update => {
                        world.update();
                    }
                }
            }
            world.update();
            assert_matches_rebuild(&world);
            assert_landmark_paths_optimal(&world, seed);
        }
    }

    #[test]
    fn refused_changes_say_why_and_change_nothing() {
        let (desc, obstructions) = small_world(7);
        let mut world = NavWorld::build(desc, obstructions).unwrap();
        let before = world.obstructions().len();
        let o = |sq| Obstruction { square: sq, flags: ObstructionFlags::STATIC };
        assert_eq!(world.add_obstruction(1, o(square(40, 40, 4, 4, 0))), Err(WorldError::DuplicateId(1)));
        assert_eq!(world.add_obstruction(99_999, o(square(40, 40, 0, 0, 0))), Err(WorldError::ZeroSize));
        assert_eq!(world.add_obstruction(99_999, o(square(-500, 40, 4, 4, 0))), Err(WorldError::OffMap));
        let far = Square::axis_aligned(WorldPos::from_int(1 << 20, 0), Fixed::ONE, Fixed::ONE).unwrap();
        assert_eq!(world.add_obstruction(99_999, o(far)), Err(WorldError::OutOfRange));
        assert_eq!(world.remove_obstruction(99_999), Err(WorldError::UnknownId(99_999)));
        assert_eq!(world.set_area_available("gate", true), Err(WorldError::UnknownArea("gate".into())));
        assert_eq!(world.obstructions().len(), before);
        assert!(!world.has_pending());
    }

    const ROOMS: &str = r#"{
        "cellSize": 0.5, "agentRadius": 0.45, "objectPadding": 0.25, "boundaryPadding": 0.0,
        "areas": [
            { "name": "hall", "polygon": [[0, 0], [12, 0], [12, 3], [5, 3], [5, 9], [0, 9]] },
            { "name": "door", "available": false, "polygon": [[12, 0.5], [14, 0.5], [14, 2.5], [12, 2.5]] },
            { "name": "vault", "polygon": [[14, -2], [22, -2], [22, 6], [14, 6]] }
        ],
        "obstacles": [
            { "name": "table", "polygon": [[1, 5], [3, 5], [3, 6], [1, 6]] },
            { "name": "u", "polygon": [[16, 0], [20, 0], [20, 4], [19, 4], [19, 1], [17, 1], [17, 4], [16, 4]] }
        ]
    }"#;

    /// [`ROOMS`] with a boundary padding of 0.5 m and an annex area overlapping the hall and the
    /// door.
    fn rooms_with_annex() -> String {
        ROOMS.replace("\"boundaryPadding\": 0.0", "\"boundaryPadding\": 0.5").replace(
            "{ \"name\": \"vault\"",
            "{ \"name\": \"annex\", \"polygon\": [[8, 0], [13, 0], [13, 5], [8, 5]] },\n            { \"name\": \"vault\"",
        )
    }

    fn one_class(clearance: Fixed) -> ClassSet {
        use crate::build::classes::ClassDef;
        ClassSet::new(vec![ClassDef { clearance, ..ClassDef::unbounded("walker", ObstructionMode::Pathfinding) }]).unwrap()
    }

    /// With a class of clearance 0 and the obstacle growth moved into the object padding, a world
    /// built from a polygon config is exactly the seed's own grid build of that config.
    #[test]
    fn a_polygon_config_world_matches_the_seed_grid_build() {
        let mut config = PolygonConfig::parse_json(ROOMS).unwrap();
        config.set_area_available("door", true).unwrap();
        let seed_grid = config.build_grid().unwrap();
        let (mut desc, bounds) = WorldDesc::from_polygon_config(&config, one_class(Fixed::ZERO)).unwrap();
        desc.object_padding = config.agent_radius() + config.object_padding();
        let world = NavWorld::new(desc).unwrap();
        assert_eq!((bounds.min_x, bounds.min_z), (seed_grid.min_x, seed_grid.min_z));
        assert!(
            world.grid().blocked_masks() == seed_grid.grid.blocked_masks(),
            "world:\n{}",
            crate::render_ascii(&crate::PassMap::build(world.grid(), crate::test_support::CLASS), &crate::Layers::default())
        );
    }

    /// A land class and a water class of clearance 0 with 0 A.D.'s depth bounds (land wades up to
    /// 2 m, ships need 1 m).
    fn land_and_water() -> ClassSet {
        use crate::build::classes::ClassDef;
        ClassSet::new(vec![
            ClassDef {
                max_slope: Some(Fixed::ONE),
                max_water_depth: Some(Fixed::from_num(2)),
                ..ClassDef::unbounded("land", ObstructionMode::Pathfinding)
            },
            ClassDef { min_water_depth: Some(Fixed::ONE), ..ClassDef::unbounded("water", ObstructionMode::Pathfinding) },
        ])
        .unwrap()
    }

    /// A Moving AI map made a world from its painted navcells is exactly the grid the Moving AI
    /// loader builds, class for class: every terrain character, a non-square map.
    #[test]
    fn a_moving_ai_map_world_is_the_loaders_grid() {
        let text = "type octile\nheight 5\nwidth 7\nmap\n.GS@WWW\n.T..WWO\n@..W.W.\nSSGWW..\n...T@WW\n";
        let map = crate::formats::movingai::parse_map(text).unwrap();
        let cells = map.cell_kinds();
        // File (x, y) is navcell (x, 4 − y): the top-left `.` is navcell (0, 4), the bottom-left (0, 0).
        assert_eq!(
            (cells[4 * 7], cells[4 * 7 + 3], cells[4 * 7 + 4], cells[3 * 7 + 1]),
            (CellKind::Ground, CellKind::Blocked, CellKind::Water, CellKind::Blocked)
        );
        let desc = WorldDesc::from_cells(7, 5, Fixed::ONE, cells, land_and_water()).unwrap();
        let world = NavWorld::new(desc).unwrap();
        assert_eq!(world.grid().blocked_masks(), map.grid.blocked_masks());
        assert_eq!(
            (crate::formats::movingai::LAND.bit(), crate::formats::movingai::WATER.bit()),
            (1, 2),
            "the class order of the comparison"
        );
    }

    /// A grid-text file made a world is the file's own walkable grid.
    #[test]
    fn a_grid_text_world_is_the_files_grid() {
        let text = "cellSize 0.4\ngridWidth 5\ngridDepth 3\n11101\n10111\n00110\n";
        let file = crate::formats::grid_text::parse_grid_text(text).unwrap();
        let desc = WorldDesc::from_cells(5, 3, file.cell_size, file.cell_kinds(), one_class(Fixed::ZERO)).unwrap();
        let world = NavWorld::new(desc).unwrap();
        assert_eq!(world.grid().blocked_masks(), file.grid.blocked_masks());
    }

    #[test]
    fn painted_layers_of_the_wrong_size_are_refused() {
        let classes = one_class(Fixed::ZERO);
        let cells = |n: usize| vec![CellKind::Ground; n];
        assert_eq!(
            WorldDesc::from_cells(4, 3, Fixed::ONE, cells(11), classes.clone()).unwrap_err(),
            WorldError::CellCount { expected: 12, found: 11 }
        );
        assert!(matches!(
            WorldDesc::from_cells(0, 3, Fixed::ONE, cells(0), classes.clone()),
            Err(WorldError::Terrain(TerrainError::BadGridSpec { width: 0, height: 3, .. }))
        ));
        assert!(matches!(
            WorldDesc::from_cells(4, 3, Fixed::ZERO, cells(12), classes.clone()),
            Err(WorldError::Terrain(TerrainError::BadGridSpec { .. }))
        ));
        // Large navcells get one navcell per tile, and still cover the grid.
        let desc = WorldDesc::from_cells(3, 2, Fixed::from_num(100), cells(6), classes.clone()).unwrap();
        assert_eq!((desc.terrain.tiles_w(), desc.terrain.tiles_h(), desc.terrain.tile_size()), (3, 2, Fixed::from_num(100)));
        let desc = WorldDesc::from_cells(9, 5, Fixed::ONE, cells(45), classes.clone()).unwrap();
        assert_eq!((desc.terrain.tiles_w(), desc.terrain.tiles_h(), desc.terrain.tile_size()), (3, 2, Fixed::from_num(4)));
        let mut desc = desc;
        desc.cells.pop();
        assert_eq!(NavWorld::new(desc.clone()).unwrap_err(), WorldError::CellCount { expected: 45, found: 44 });
        desc.cells.clear();
        assert!(NavWorld::new(desc).is_ok(), "an empty layer is no layer");
        let (mut refworld, _) = small_world(1);
        refworld.cells = cells(5);
        assert_eq!(NavWorld::new(refworld).unwrap_err(), WorldError::CellCount { expected: 96 * 96, found: 5 });
    }

    /// Opening and closing a door area updates the grid and the hierarchy as a rebuild would.
    #[test]
    fn toggling_an_area_updates_like_a_rebuild() {
        let config = PolygonConfig::parse_json(ROOMS).unwrap();
        let (desc, _) = WorldDesc::from_polygon_config(&config, one_class(Fixed::from_num(1) / 2)).unwrap();
        let mut world = NavWorld::new(desc).unwrap();
        let class = PassClass::new(0).unwrap();
        let cell = |x: i32, z: i32| crate::Navcell::new(x as u16, z as u16);
        // Hall (2, 1) m → navcell (4, 6) after the shift; vault (18, 5) m.
        let (min_x, min_z) = (config.grid_bounds().unwrap().min_x, config.grid_bounds().unwrap().min_z);
        let at = |x: i32, z: i32| {
            let s = config.cell_size();
            cell(((Fixed::from_num(x) - min_x) / s).to_num::<i32>(), ((Fixed::from_num(z) - min_z) / s).to_num::<i32>())
        };
        let (hall, vault) = (at(2, 1), at(21, 5));
        let reach = |w: &NavWorld| w.class_nav(class).unwrap().hierarchy().is_reachable(hall, vault);
        assert!(!reach(&world), "the door starts closed");
        assert_eq!(world.set_area_available("door", true), Ok(true));
        assert_eq!(world.set_area_available("door", true), Ok(false));
        let dirty = world.update();
        assert_eq!(dirty.len(), 1);
        assert!(reach(&world), "the open door joins hall and vault");
        assert_matches_rebuild(&world);
        world.set_area_available("door", false).unwrap();
        world.add_obstruction(5, Obstruction { square: square(8, 4, 2, 2, 10), flags: ObstructionFlags::STATIC }).unwrap();
        world.update();
        assert!(!reach(&world));
        assert_matches_rebuild(&world);
    }
}
