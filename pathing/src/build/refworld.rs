//! The *reference world* that benchmarks, tests and the demo share, generated from a seed:
//! terrain tiles of 4 m with hills, steep crags and lakes, a square or circular map border, the
//! built-in passability classes, buildings and trees. Benchmarks, the demo and tests all build
//! their worlds here, so they measure and show the same thing.
//!
//! The default ([`RefWorldParams::reference`]) is the full scale: 256 × 256 tiles (a 1024 ×
//! 1024 navcell grid at 1 m), the 8 built-in classes, 100 buildings and 1000 trees. Smaller
//! variants keep the same densities.
//!
//! Everything is integer arithmetic driven by a SplitMix64 stream, so a seed gives the same world on
//! every machine.

use crate::build::classes::ClassSet;
use crate::build::passability::{Obstruction, ObstructionFlags, ObstructionId, WorldDesc};
use crate::build::raster::oriented_square;
use crate::build::terrain::{GridSpec, MapBorder, Terrain};
use crate::geometry::{Fixed, WorldPos};

/// Parameters of a generated world.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RefWorldParams {
    /// Terrain tiles per side (4 m each, 4 navcells each). `[Limit: 16..=4096]`
    pub tiles: u32,
    /// Generator seed.
    pub seed: u64,
    /// Buildings to place.
    pub buildings: u32,
    /// Trees to place.
    pub trees: u32,
    /// Circular (true) or square map border.
    pub circular: bool,
}

impl RefWorldParams {
    /// The full reference world: 256 × 256 tiles, 100 buildings, 1000 trees.
    pub const fn reference(seed: u64) -> Self {
        Self { tiles: 256, seed, buildings: 100, trees: 1000, circular: false }
    }

    /// A smaller world with the reference world's densities (per map area).
    pub fn scaled(tiles: u32, seed: u64) -> Self {
        let area = u64::from(tiles) * u64::from(tiles);
        let per = |n: u64| (n * area / (256 * 256)).max(1) as u32;
        Self { tiles, seed, buildings: per(100), trees: per(1000), circular: false }
    }
}

/// Tile side. `[Units: metres]`
const TILE: i64 = 4;
/// Navcells per tile side (navcell size 1 m).
const CELLS_PER_TILE: u32 = 4;
/// Border width: 3 tiles, as 0 A.D. `[Units: navcells]`
const BORDER: u32 = 12;

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014): a
/// tiny, well-known, seedable stream of 64-bit numbers, with integer arithmetic only.
/// The reference world, the benchmarks' queries and the tests' generated maps all draw from it, so
/// its output for a seed is fixed: changing it changes golden hashes and snapshots.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A stream starting from `seed` (every seed is fine, 0 included).
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 bits of the stream.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`, by the remainder of the next 64 bits (slightly biased, which none of
    /// the users mind). `[Limit: n > 0]`
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// A number in `lo..hi`, as `lo + below(hi − lo)`. `[Limit: hi > lo]`
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo) as u64) as i64
    }
}

/// A bump of the heightmap: `height · max(0, 1 − d²/r²)` around `(x, z)` (metres).
struct Bump {
    x: i64,
    z: i64,
    r: i64,
    height: i64,
}

/// The world description and its obstructions `(id, obstruction)`: buildings first (ids from
/// 1), then trees.
///
/// # Panics
/// When `tiles` is outside `16..=4096` (a programming error in the caller).
pub fn generate(params: &RefWorldParams) -> (WorldDesc, Vec<(ObstructionId, Obstruction)>) {
    assert!((16..=4096).contains(&params.tiles), "reference world tiles {} outside 16..=4096", params.tiles);
    let mut rng = SplitMix64::new(params.seed ^ 0x5048_414C_414E_5821);
    let side_m = i64::from(params.tiles) * TILE;
    let scale = |n: i64| (n * i64::from(params.tiles) / 256).max(1);
    // Hills, crags (steep: impassable for slope-limited classes) and lakes.
    let mut bumps = Vec::new();
    for _ in 0..scale(24) {
        bumps.push(Bump { x: rng.range(0, side_m), z: rng.range(0, side_m), r: rng.range(30, 90), height: rng.range(4, 14) });
    }
    for _ in 0..scale(8) {
        bumps.push(Bump { x: rng.range(0, side_m), z: rng.range(0, side_m), r: rng.range(12, 24), height: rng.range(14, 30) });
    }
    for _ in 0..scale(5) {
        bumps.push(Bump { x: rng.range(0, side_m), z: rng.range(0, side_m), r: rng.range(40, 110), height: -rng.range(8, 14) });
    }
    let verts = params.tiles as usize + 1;
    let mut heights = Vec::with_capacity(verts * verts);
    for vz in 0..verts as i64 {
        for vx in 0..verts as i64 {
            heights.push(height_at(&bumps, vx * TILE, vz * TILE));
        }
    }
    let water = Fixed::from_num(10);
    let terrain = Terrain::new(params.tiles, params.tiles, Fixed::from_num(TILE), heights, water).expect("generated terrain is in range");
    let n = params.tiles * CELLS_PER_TILE;
    let border = if params.circular { MapBorder::Circle { width: BORDER } } else { MapBorder::Square { width: BORDER } };
    let desc =
        WorldDesc::new(GridSpec { width: n, height: n, cell_size: Fixed::ONE }, ClassSet::zero_ad_defaults(), terrain).with_border(border);
    let mut obstructions: Vec<(ObstructionId, Obstruction)> = Vec::new();
    let margin = i64::from(BORDER) + 8;
    let dry = |x: i64, z: i64| height_at(&bumps, x, z) > water + Fixed::ONE;
    let mut id = 1u32;
    let mut attempts = 0u32;
    while (id as usize) <= params.buildings as usize && attempts < params.buildings * 50 {
        attempts += 1;
        let (x, z) = (rng.range(margin, side_m - margin), rng.range(margin, side_m - margin));
        let (hw, hh) = (rng.range(6, 20), rng.range(6, 20));
        let deg = rng.range(0, 360);
        if !dry(x, z) || !dry(x - hw, z - hh) || !dry(x + hw, z + hh) || !dry(x - hw, z + hh) || !dry(x + hw, z - hh) {
            continue;
        }
        let square =
            oriented_square(WorldPos::from_int(x as i32, z as i32), Fixed::from_num(hw) / 2, Fixed::from_num(hh) / 2, Fixed::from_num(deg))
                .expect("generated squares are in range");
        obstructions.push((ObstructionId(id), Obstruction { square, flags: ObstructionFlags::STATIC }));
        id += 1;
    }
    let first_tree = id;
    attempts = 0;
    let groves: Vec<(i64, i64)> =
        (0..scale(20)).map(|_| (rng.range(margin, side_m - margin), rng.range(margin, side_m - margin))).collect();
    while id - first_tree < params.trees && attempts < params.trees * 50 {
        attempts += 1;
        // Trees grow in groves around a few centres (four in five), and the rest stand alone.
        let (x, z) = if rng.range(0, 5) < 4 {
            let (gx, gz) = groves[rng.range(0, groves.len() as i64) as usize];
            (gx + rng.range(-18, 19), gz + rng.range(-18, 19))
        } else {
            (rng.range(margin, side_m - margin), rng.range(margin, side_m - margin))
        };
        if x < margin || z < margin || x >= side_m - margin || z >= side_m - margin || !dry(x, z) {
            continue;
        }
        let half = Fixed::from_bits(rng.range(32768, 65536)); // 0.5 to 1 m
        let square = oriented_square(
            WorldPos::new(Fixed::from_num(x) + Fixed::from_bits(rng.range(0, 65536)), Fixed::from_num(z)),
            half,
            half,
            Fixed::ZERO,
        )
        .expect("generated squares are in range");
        obstructions.push((ObstructionId(id), Obstruction { square, flags: ObstructionFlags::STATIC }));
        id += 1;
    }
    (desc, obstructions)
}

/// Ground height at `(x, z)` metres: 12 m plus every bump.
fn height_at(bumps: &[Bump], x: i64, z: i64) -> Fixed {
    let mut h = Fixed::from_num(12);
    for b in bumps {
        let d2 = (x - b.x) * (x - b.x) + (z - b.z) * (z - b.z);
        let r2 = b.r * b.r;
        if d2 < r2 {
            // height · (r² − d²) / r², exact to 2^-16 (floored).
            let num = (i128::from(b.height) * i128::from(r2 - d2)) << 16;
            h += Fixed::from_bits(num.div_euclid(i128::from(r2)) as i64);
        }
    }
    h
}
