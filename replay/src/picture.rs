//! Pictures of a world at one turn, as PNG: the navcell grid coloured by terrain and passability,
//! the obstruction squares, the units as dots coloured by player, their remaining paths and the
//! formations' slots (`phalanx render`, and the map under the replay viewer).
//!
//! One pixel per navcell at scale 1; [`auto_scale`] enlarges small maps to at least 512 pixels.
//! North (`+z`) is up. The colours are listed in [`LEGEND`], which `phalanx render --help`
//! prints; the viewer uses the same palette ([`PLAYER_COLOURS`], [`TerrainColour`]).
//!
//! Floats appear here only in presentation: world positions are converted to pixels once, never
//! fed back into the simulation.

use pathing::classes::{ClassSet, ObstructionMode};
use pathing::passability::{NavWorld, Obstruction, ObstructionFlags};
use pathing::terrain::TerrainPass;
use pathing::{Fixed, Navcell, PassClass, WorldPos};
use sim::{PlayerId, World};

/// The legend of the pictures (also printed by `phalanx render --help`).
pub const LEGEND: &str = "\
Legend (north up; one pixel per navcell at scale 1):
  light beige    ground passable for the land class (the class blocked by obstruction squares
                 with no minimum water depth and the smallest clearance: `default` in the
                 built-in set)
  sand           passable ground within 3 navcells of water (shore)
  pale blue      shallow water the land class can wade
  blue           water a ship class (a class with a minimum water depth) can sail
  steel blue     other water (too shallow for ships, too deep to wade)
  dark grey      impassable terrain for the land class: slopes, map border, outside every area,
                 obstacle polygons, blocked painted navcells
  grey-beige     terrain the land class could cross but an obstruction square (grown by the
                 class's clearance) blocks
  brown squares  obstruction squares (buildings, walls, closed gates), darker outline
  green squares  small obstruction squares with equal sides of at most 2 m (trees)
  brown outline  an obstruction that blocks no movement (an open gate)
  dots           units, coloured by player (0 grey, 1 blue, 2 red, 3 green, 4 yellow, 5 cyan,
                 6 purple, 7 orange, 8 brown), sized by their radius; units of a class other than
                 the land class have a black ring
  thin lines     each moving unit's remaining path, from the unit through its turning points
  small squares  formation slots (white, outlined in the player's colour); a diamond marks the
                 formation's position and a dashed line its remaining path
";

/// Colours of players 0 (the world) to 8; higher players reuse them from player 1 on.
pub const PLAYER_COLOURS: [[u8; 3]; 9] = [
    [128, 128, 128],
    [30, 90, 230],
    [220, 40, 40],
    [40, 170, 60],
    [230, 200, 30],
    [40, 200, 210],
    [160, 60, 200],
    [240, 130, 20],
    [140, 90, 50],
];

/// The colour of a player's units.
pub fn player_colour(owner: PlayerId) -> [u8; 3] {
    let k = usize::from(owner.0);
    if k < PLAYER_COLOURS.len() { PLAYER_COLOURS[k] } else { PLAYER_COLOURS[1 + (k - 1) % (PLAYER_COLOURS.len() - 1)] }
}

/// What a navcell is drawn as (see [`LEGEND`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TerrainColour {
    /// Passable ground.
    Ground,
    /// Passable ground near water.
    Shore,
    /// Water the land class can wade.
    Shallows,
    /// Water a ship class can sail.
    Water,
    /// Other water.
    OtherWater,
    /// Impassable terrain for the land class.
    Blocked,
    /// Passable terrain blocked by an obstruction (grown by the clearance).
    Obstructed,
}

impl TerrainColour {
    /// Every colour, in legend order.
    pub const ALL: [TerrainColour; 7] = [
        TerrainColour::Ground,
        TerrainColour::Shore,
        TerrainColour::Shallows,
        TerrainColour::Water,
        TerrainColour::OtherWater,
        TerrainColour::Blocked,
        TerrainColour::Obstructed,
    ];

    /// What the colour means, for legends.
    pub fn meaning(self) -> &'static str {
        match self {
            TerrainColour::Ground => "ground passable for the land class",
            TerrainColour::Shore => "passable ground within 3 navcells of water (shore)",
            TerrainColour::Shallows => "shallow water the land class can wade",
            TerrainColour::Water => "water a ship class can sail",
            TerrainColour::OtherWater => "other water",
            TerrainColour::Blocked => "impassable terrain (slope, border, outside the areas, obstacles)",
            TerrainColour::Obstructed => "blocked by an obstruction square and the class clearance",
        }
    }

    /// The RGB colour.
    pub fn rgb(self) -> [u8; 3] {
        match self {
            TerrainColour::Ground => [232, 226, 204],
            TerrainColour::Shore => [216, 200, 148],
            TerrainColour::Shallows => [160, 204, 222],
            TerrainColour::Water => [58, 104, 164],
            TerrainColour::OtherWater => [100, 146, 192],
            TerrainColour::Blocked => [66, 66, 66],
            TerrainColour::Obstructed => [190, 180, 158],
        }
    }
}

const OBSTRUCTION_FILL: [u8; 3] = [139, 90, 43];
const OBSTRUCTION_EDGE: [u8; 3] = [72, 42, 14];
const TREE_FILL: [u8; 3] = [46, 125, 50];
const TREE_EDGE: [u8; 3] = [18, 72, 24];
const RING: [u8; 3] = [0, 0, 0];
const SLOT_FILL: [u8; 3] = [255, 255, 255];

/// Obstruction squares with equal sides of at most this are drawn as trees (the generated
/// worlds' trees are 1 to 2 m squares). `[Units: metres]`
const TREE_SIZE: Fixed = Fixed::const_from_int(2);

/// Navcells within this squared distance of water are shore. `[Units: navcells²]`
const SHORE_DISTANCE_SQUARED: u32 = 9;

/// Which layers to draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layers {
    /// The navcell grid coloured by terrain (otherwise plain ground).
    pub terrain: bool,
    /// Navcells blocked for the land class by obstruction squares and their clearance.
    pub clearance: bool,
    /// The obstruction squares.
    pub obstructions: bool,
    /// The units.
    pub units: bool,
    /// The moving units' remaining paths (and formations' paths).
    pub paths: bool,
    /// The formations' slots and positions.
    pub formations: bool,
}

impl Layers {
    /// Every layer.
    pub const ALL: Layers = Layers { terrain: true, clearance: true, obstructions: true, units: true, paths: true, formations: true };
    /// The terrain alone: the static map under the viewer's own layers.
    pub const TERRAIN: Layers =
        Layers { terrain: true, clearance: false, obstructions: false, units: false, paths: false, formations: false };

    /// Layers from a comma-separated list of `terrain`, `clearance`, `obstructions`, `units`,
    /// `paths`, `formations` (or `all`).
    ///
    /// # Errors
    /// [`crate::Error::Layer`]: the first unknown name (the message lists the names expected).
    pub fn parse(text: &str) -> Result<Layers, crate::Error> {
        let mut layers = Layers { terrain: false, clearance: false, obstructions: false, units: false, paths: false, formations: false };
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match name {
                "all" => layers = Layers::ALL,
                "terrain" => layers.terrain = true,
                "clearance" => layers.clearance = true,
                "obstructions" => layers.obstructions = true,
                "units" => layers.units = true,
                "paths" => layers.paths = true,
                "formations" => layers.formations = true,
                other => return Err(crate::Error::Layer { found: other.to_owned() }),
            }
        }
        Ok(layers)
    }
}

/// How to draw a picture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Pixels per navcell; `None` for [`auto_scale`]. `[Limit: 1..=64]`
    pub scale: Option<u32>,
    /// What to draw.
    pub layers: Layers,
}

/// Largest pixels per navcell. Also bounds the picture: [`auto_scale`] never exceeds
/// [`MAX_PICTURE_SIDE`].
pub const MAX_SCALE: u32 = 64;

/// Largest side of a picture drawn with an explicit scale is capped so the picture stays
/// under this many pixels across. `[Units: pixels]`
pub const MAX_PICTURE_SIDE: u32 = 8192;

/// The scale that makes the longer side of a `width × height` navcell grid at least 512 pixels
/// (1 for grids of 512 navcells or more).
pub fn auto_scale(width: u32, height: u32) -> u32 {
    let side = width.max(height).max(1);
    512u32.div_ceil(side).clamp(1, MAX_SCALE)
}

/// The scale actually used for a grid: the asked or automatic one, reduced until the picture fits
/// [`MAX_PICTURE_SIDE`] (never below 1).
pub fn effective_scale(width: u32, height: u32, scale: Option<u32>) -> u32 {
    let side = width.max(height).max(1);
    let asked = scale.unwrap_or_else(|| auto_scale(width, height)).clamp(1, MAX_SCALE);
    asked.min((MAX_PICTURE_SIDE / side).max(1))
}

/// An RGB picture, rows from the top.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Canvas {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
}

impl Canvas {
    /// A canvas filled with one colour.
    pub fn new(width: u32, height: u32, fill: [u8; 3]) -> Self {
        let n = width as usize * height as usize;
        let mut rgb = Vec::with_capacity(n * 3);
        for _ in 0..n {
            rgb.extend_from_slice(&fill);
        }
        Self { width, height, rgb }
    }

    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The pixels, RGB, rows from the top.
    pub fn pixels(&self) -> &[u8] {
        &self.rgb
    }

    /// The colour at a pixel, if on the canvas.
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 3]> {
        (x < self.width && y < self.height).then(|| {
            let k = (y as usize * self.width as usize + x as usize) * 3;
            [self.rgb[k], self.rgb[k + 1], self.rgb[k + 2]]
        })
    }

    fn put(&mut self, x: i64, y: i64, c: [u8; 3]) {
        if x >= 0 && y >= 0 && x < i64::from(self.width) && y < i64::from(self.height) {
            let k = (y as usize * self.width as usize + x as usize) * 3;
            self.rgb[k..k + 3].copy_from_slice(&c);
        }
    }

    /// Fills the pixels whose centres lie within `r` of `(cx, cy)` (at least the pixel holding the
    /// centre).
    fn fill_circle(&mut self, cx: f64, cy: f64, r: f64, c: [u8; 3]) {
        let (x0, x1) = ((cx - r).floor() as i64, (cx + r).ceil() as i64);
        let (y0, y1) = ((cy - r).floor() as i64, (cy + r).ceil() as i64);
        for y in y0..=y1 {
            for x in x0..=x1 {
                let (dx, dy) = (x as f64 + 0.5 - cx, y as f64 + 0.5 - cy);
                if dx * dx + dy * dy <= r * r {
                    self.put(x, y, c);
                }
            }
        }
        self.put(cx.floor() as i64, cy.floor() as i64, c);
    }

    /// A ring: pixels whose centres lie between `r - width` and `r` from the centre.
    fn ring(&mut self, cx: f64, cy: f64, r: f64, width: f64, c: [u8; 3]) {
        let (x0, x1) = ((cx - r).floor() as i64, (cx + r).ceil() as i64);
        let (y0, y1) = ((cy - r).floor() as i64, (cy + r).ceil() as i64);
        let inner = (r - width).max(0.0);
        for y in y0..=y1 {
            for x in x0..=x1 {
                let (dx, dy) = (x as f64 + 0.5 - cx, y as f64 + 0.5 - cy);
                let d2 = dx * dx + dy * dy;
                if d2 <= r * r && d2 >= inner * inner {
                    self.put(x, y, c);
                }
            }
        }
    }

    /// A line of about `width` pixels, sampled every half pixel; `dash` draws only every other
    /// stretch of that many pixels.
    fn line(&mut self, (x0, y0): (f64, f64), (x1, y1): (f64, f64), width: f64, dash: Option<f64>, c: [u8; 3]) {
        let length = ((x1 - x0).powi(2) + (y1 - y0).powi(2)).sqrt();
        let steps = (length * 2.0).ceil().max(1.0) as usize;
        for k in 0..=steps {
            let t = k as f64 / steps as f64;
            if let Some(d) = dash
                && ((t * length / d) as u64) % 2 == 1
            {
                continue;
            }
            let (x, y) = (x0 + (x1 - x0) * t, y0 + (y1 - y0) * t);
            if width <= 1.0 {
                self.put(x.floor() as i64, y.floor() as i64, c);
            } else {
                self.fill_circle(x, y, width / 2.0, c);
            }
        }
    }

    /// Fills a polygon (pixel centres inside it, even-odd rule).
    fn fill_polygon(&mut self, points: &[(f64, f64)], c: [u8; 3]) {
        if points.len() < 3 {
            return;
        }
        let y0 = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min).floor() as i64;
        let y1 = points.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max).ceil() as i64;
        let mut xs = Vec::new();
        for y in y0.max(0)..=y1.min(i64::from(self.height)) {
            let yc = y as f64 + 0.5;
            xs.clear();
            for k in 0..points.len() {
                let (a, b) = (points[k], points[(k + 1) % points.len()]);
                if (a.1 <= yc) != (b.1 <= yc) {
                    xs.push(a.0 + (yc - a.1) / (b.1 - a.1) * (b.0 - a.0));
                }
            }
            xs.sort_by(f64::total_cmp);
            for pair in xs.chunks_exact(2) {
                let from = (pair[0] - 0.5).ceil() as i64;
                let to = (pair[1] - 0.5).floor() as i64;
                for x in from.max(0)..=to.min(i64::from(self.width) - 1) {
                    self.put(x, y, c);
                }
            }
        }
    }

    /// The polygon's outline.
    fn stroke_polygon(&mut self, points: &[(f64, f64)], width: f64, c: [u8; 3]) {
        for k in 0..points.len() {
            self.line(points[k], points[(k + 1) % points.len()], width, None, c);
        }
    }

    /// The canvas as a PNG file.
    pub fn to_png(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, self.width, self.height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::Balanced);
        // Writing into a `Vec` cannot fail, and the canvas always has at least one pixel and
        // exactly width × height × 3 bytes, so the encoder has nothing to refuse.
        let mut writer = encoder.write_header().expect("a PNG header into memory");
        writer.write_image_data(&self.rgb).expect("PNG data into memory");
        writer.finish().expect("the PNG end into memory");
        out
    }
}

/// From world positions to pixels.
#[derive(Clone, Copy, Debug)]
struct Mapping {
    /// Pixels per metre.
    per_metre: f64,
    /// The picture's height in pixels (north up).
    height: f64,
}

impl Mapping {
    fn px(&self, p: WorldPos) -> (f64, f64) {
        (metres(p.x) * self.per_metre, self.height - metres(p.z) * self.per_metre)
    }

    fn raw(&self, x: i128, z: i128) -> (f64, f64) {
        (x as f64 / 65536.0 * self.per_metre, self.height - z as f64 / 65536.0 * self.per_metre)
    }
}

fn metres(v: Fixed) -> f64 {
    v.to_bits() as f64 / 65536.0
}

/// The class the terrain is coloured for: the class units walk with, that is the class blocked
/// by obstruction squares (obstruction mode `pathfinding`) with no minimum water depth and the
/// smallest clearance (ties: the lowest index); failing that any such class of mode `none`; class
/// 0 when there is none.
pub fn land_class(classes: &ClassSet) -> PassClass {
    pick_class(classes, false, ObstructionMode::Pathfinding)
        .or_else(|| pick_class(classes, false, ObstructionMode::None))
        .unwrap_or(CLASS_ZERO)
}

/// The ship class: the class of mode `pathfinding` (else `none`) with a minimum water depth and the
/// smallest clearance, if any.
pub fn ship_class(classes: &ClassSet) -> Option<PassClass> {
    pick_class(classes, true, ObstructionMode::Pathfinding).or_else(|| pick_class(classes, true, ObstructionMode::None))
}

/// Class 0 (checked at compile time).
const CLASS_ZERO: PassClass = match PassClass::new(0) {
    Some(c) => c,
    None => panic!("class 0 exists"),
};

fn pick_class(classes: &ClassSet, ship: bool, mode: ObstructionMode) -> Option<PassClass> {
    classes
        .iter()
        .filter(|(_, d)| d.obstructions == mode && d.min_water_depth.is_some() == ship)
        .min_by_key(|(c, d)| (d.clearance, c.index()))
        .map(|(c, _)| c)
}

/// What each navcell is drawn as, in navcell order (row `j = 0` first, `i` fastest).
/// `clearance` marks the navcells that obstruction squares block for the land class.
pub fn terrain_colours(nav: &NavWorld, clearance: bool) -> Vec<TerrainColour> {
    let desc = nav.desc();
    let (w, h) = (desc.grid.width, desc.grid.height);
    let land = land_class(&desc.classes);
    let ship = ship_class(&desc.classes);
    // Water and shore come from the terrain sampled as the world samples it; a world whose
    // terrain cannot be sampled (it always can once built) is drawn without water.
    let pass = TerrainPass::with_cells(&desc.terrain, desc.grid, &desc.cells).ok();
    let terrain = nav.terrain_only();
    let full = nav.grid();
    let mut out = Vec::with_capacity(w as usize * h as usize);
    for j in 0..h {
        for i in 0..w {
            let cell = Navcell::new(i as u16, j as u16);
            let land_ok = terrain.is_passable(cell, land);
            let water = pass.as_ref().is_some_and(|p| p.is_water(i, j));
            let colour = if water {
                if land_ok {
                    TerrainColour::Shallows
                } else if ship.is_some_and(|s| terrain.is_passable(cell, s)) {
                    TerrainColour::Water
                } else {
                    TerrainColour::OtherWater
                }
            } else if !land_ok {
                TerrainColour::Blocked
            } else if clearance && !full.is_passable(cell, land) {
                TerrainColour::Obstructed
            } else if pass.as_ref().and_then(|p| p.shore_distance_squared(i, j)).is_some_and(|d| d <= SHORE_DISTANCE_SQUARED) {
                TerrainColour::Shore
            } else {
                TerrainColour::Ground
            };
            out.push(colour);
        }
    }
    out
}

/// The terrain layer alone at `scale` pixels per navcell (no scaling checks: the caller picks a
/// scale with [`effective_scale`]).
fn terrain_canvas(nav: &NavWorld, scale: u32, layers: &Layers) -> Canvas {
    let grid = nav.grid();
    let (w, h) = (grid.width(), grid.height());
    let mut canvas = Canvas::new(w * scale, h * scale, TerrainColour::Ground.rgb());
    if !layers.terrain && !layers.clearance {
        return canvas;
    }
    let colours = terrain_colours(nav, layers.clearance);
    let row_bytes = (w * scale * 3) as usize;
    for j in 0..h {
        // Navcell row j is drawn `scale` pixel rows high, north up.
        let top = ((h - 1 - j) * scale) as usize;
        let row = &mut canvas.rgb[top * row_bytes..(top + 1) * row_bytes];
        for i in 0..w {
            let mut c = colours[(j * w + i) as usize];
            if !layers.terrain && c != TerrainColour::Obstructed {
                c = TerrainColour::Ground;
            }
            let rgb = c.rgb();
            for s in 0..scale {
                let k = ((i * scale + s) * 3) as usize;
                row[k..k + 3].copy_from_slice(&rgb);
            }
        }
        for s in 1..scale as usize {
            canvas.rgb.copy_within(top * row_bytes..(top + 1) * row_bytes, (top + s) * row_bytes);
        }
    }
    canvas
}

/// The four corners of an obstruction square, anticlockwise, as raw world coordinates
/// (16 fractional bits).
pub fn square_corners(o: &Obstruction) -> [(i128, i128); 4] {
    let s = &o.square;
    let (cx, cz) = (i128::from(s.center().x.to_bits()), i128::from(s.center().z.to_bits()));
    let (hw, hh) = (i128::from(s.hw().to_bits()), i128::from(s.hh().to_bits()));
    let (ux, uz) = (i128::from(s.u().x.to_bits()), i128::from(s.u().z.to_bits()));
    let (vx, vz) = (i128::from(s.v().x.to_bits()), i128::from(s.v().z.to_bits()));
    // Axes are unit vectors in 16 fractional bits: a half-size times an axis has 32.
    let corner = |a: i128, b: i128| (cx + (a * hw * ux + b * hh * vx) / 65536, cz + (a * hw * uz + b * hh * vz) / 65536);
    [corner(-1, -1), corner(1, -1), corner(1, 1), corner(-1, 1)]
}

/// Whether an obstruction is drawn as a tree (a small square with equal sides).
pub fn is_tree(o: &Obstruction) -> bool {
    o.square.hw() == o.square.hh() && o.square.hw() * 2 <= TREE_SIZE
}

/// Whether an obstruction blocks movement (an open gate does not).
pub fn blocks_movement(o: &Obstruction) -> bool {
    o.flags.0 & ObstructionFlags::BLOCK_PATHFINDING != 0
}

/// Draws a world at its current turn.
pub fn draw(world: &World, options: &Options) -> Canvas {
    let nav = world.nav();
    let grid = nav.grid();
    let scale = effective_scale(grid.width(), grid.height(), options.scale);
    let layers = &options.layers;
    let mut canvas = terrain_canvas(nav, scale, layers);
    let map = Mapping { per_metre: f64::from(scale) / metres(grid.cell_size()), height: f64::from(canvas.height) };
    let line_width = if scale >= 4 { 2.0 } else { 1.0 };
    if layers.obstructions {
        for o in nav.obstructions().values() {
            let corners: Vec<(f64, f64)> = square_corners(o).iter().map(|&(x, z)| map.raw(x, z)).collect();
            let (fill, edge) = if is_tree(o) { (TREE_FILL, TREE_EDGE) } else { (OBSTRUCTION_FILL, OBSTRUCTION_EDGE) };
            if blocks_movement(o) {
                canvas.fill_polygon(&corners, fill);
                canvas.stroke_polygon(&corners, 1.0, edge);
            } else {
                canvas.stroke_polygon(&corners, line_width, fill);
            }
        }
    }
    let land = land_class(nav.classes());
    if layers.paths {
        for f in world.formations() {
            let mut from = map.px(f.pos);
            let c = darker(player_colour(f.owner));
            for &p in f.path() {
                let to = map.px(p);
                canvas.line(from, to, line_width, Some(4.0 * line_width), c);
                from = to;
            }
        }
        for u in world.units() {
            let mut from = map.px(u.pos);
            let c = darker(player_colour(u.owner));
            for &p in u.waypoints() {
                let to = map.px(p);
                canvas.line(from, to, 1.0, None, c);
                from = to;
            }
        }
    }
    if layers.formations {
        let half = (f64::from(scale) * 0.6).max(1.5);
        for f in world.formations() {
            let c = player_colour(f.owner);
            for slot in world.formation_slots(f.id) {
                let (x, y) = map.px(slot);
                let square = [(x - half, y - half), (x + half, y - half), (x + half, y + half), (x - half, y + half)];
                canvas.fill_polygon(&square, SLOT_FILL);
                canvas.stroke_polygon(&square, 1.0, c);
            }
            let (x, y) = map.px(f.pos);
            let d = half * 2.5;
            let diamond = [(x, y - d), (x + d, y), (x, y + d), (x - d, y)];
            canvas.fill_polygon(&diamond, c);
            canvas.stroke_polygon(&diamond, 1.0, RING);
        }
    }
    if layers.units {
        for u in world.units() {
            let (x, y) = map.px(u.pos);
            let r = (metres(u.radius) * map.per_metre).max(1.5);
            canvas.fill_circle(x, y, r, player_colour(u.owner));
            if u.class != land {
                canvas.ring(x, y, r + 1.0, 1.0, RING);
            } else if r >= 3.0 {
                canvas.ring(x, y, r, 1.0, darker(player_colour(u.owner)));
            }
        }
    }
    canvas
}

/// Draws a world at its current turn as a PNG file.
pub fn render_png(world: &World, options: &Options) -> Vec<u8> {
    draw(world, options).to_png()
}

/// The terrain layer of a world as a PNG at one pixel per navcell: the viewer's map.
pub fn terrain_png(nav: &NavWorld) -> Vec<u8> {
    terrain_canvas(nav, 1, &Layers::TERRAIN).to_png()
}

fn darker(c: [u8; 3]) -> [u8; 3] {
    c.map(|v| (u16::from(v) * 3 / 5) as u8)
}
