//! Worlds for tests and benchmarks, compiled with the `test-support` feature: flat maps walled by
//! rectangles, maps drawn as text, and worlds drawn back as text for snapshot tests. Nothing in the
//! simulation calls them.

use pathing::classes::ClassSet;
use pathing::passability::{Obstruction, ObstructionFlags, WorldDesc};
use pathing::raster::oriented_square;
use pathing::terrain::{GridSpec, Terrain};
use pathing::{Fixed, WorldPos};

use crate::EntityId;
use crate::world::{Settings, World};

/// A wall rectangle `(x0, z0, x1, z1)` in whole metres, west-south corner first.
pub type Wall = (i32, i32, i32, i32);

/// A flat world of `width × depth` metres (whole 4 m terrain tiles) with 1 m navcells and the
/// 0 A.D. default classes, each wall a static obstruction numbered from 1 in order, computing path
/// requests on `threads` threads.
///
/// # Panics
/// When the size is not whole tiles, a wall is empty or out of range, or the settings or thread
/// count are refused: a test's or benchmark's own mistake.
pub fn flat_world(width: u32, depth: u32, walls: &[Wall], settings: Settings, threads: usize) -> World {
    let (desc, obstructions) = flat_geometry(width, depth, walls);
    let mut world = World::new(desc, obstructions, settings).expect("a test world");
    world.set_threads(threads).expect("a thread pool");
    world
}

/// The geometry of [`flat_world`], for a world made another way (with a game's rules).
///
/// # Panics
/// As [`flat_world`].
pub fn flat_geometry(width: u32, depth: u32, walls: &[Wall]) -> (WorldDesc, Vec<(pathing::ObstructionId, Obstruction)>) {
    assert!(width.is_multiple_of(4) && depth.is_multiple_of(4), "maps are whole 4 m tiles");
    let m = |n: i32| Fixed::from_num(n);
    let terrain = Terrain::flat(width / 4, depth / 4, m(4), m(12), Fixed::ZERO).expect("a flat terrain");
    let desc = WorldDesc::new(GridSpec { width, height: depth, cell_size: Fixed::ONE }, ClassSet::zero_ad_defaults(), terrain);
    let obstructions = walls
        .iter()
        .enumerate()
        .map(|(n, &(x0, z0, x1, z1))| {
            let centre = WorldPos::new(m(x0 + x1) / 2, m(z0 + z1) / 2);
            let square = oriented_square(centre, m(x1 - x0) / 2, m(z1 - z0) / 2, Fixed::ZERO).expect("a wall");
            (pathing::ObstructionId(n as u32 + 1), Obstruction { square, flags: ObstructionFlags::STATIC })
        })
        .collect();
    (desc, obstructions)
}

/// The walls of a map drawn as text (first row north, one character a metre): each horizontal run
/// of `#` is one wall a metre deep.
pub fn walls_from(rows: &[&str]) -> Vec<Wall> {
    let h = rows.len() as i32;
    let mut walls = Vec::new();
    for (k, row) in rows.iter().enumerate() {
        let z = h - 1 - k as i32;
        let bytes = row.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] != b'#' {
                i += 1;
                continue;
            }
            let start = i;
            while i < bytes.len() && bytes[i] == b'#' {
                i += 1;
            }
            walls.push((start as i32, z, i as i32, z + 1));
        }
    }
    walls
}

/// A flat world drawn as text (see [`walls_from`]), with seed 3 and two players.
///
/// # Panics
/// As [`flat_world`].
pub fn world_from(rows: &[&str], threads: usize) -> World {
    let (w, h) = (rows[0].len() as u32, rows.len() as u32);
    flat_world(w, h, &walls_from(rows), Settings { seed: 3, players: 2, ..Settings::default() }, threads)
}

/// A 48 × 16 m field walled round (a metre-thick wall on every side), for [`world_from`]: the
/// open ground of the local-movement and game-rules tests.
pub const FIELD: &[&str] = &[
    "################################################",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "#..............................................#",
    "################################################",
];

/// A unit's letter in [`picture`]: `a`–`z` for indices 0–25, `A`–`Z` for 26–51, `?` beyond.
pub fn glyph(id: EntityId) -> char {
    let n = id.index as u8;
    match n {
        0..=25 => (b'a' + n) as char,
        26..=51 => (b'A' + n - 26) as char,
        _ => '?',
    }
}

/// The world as text, north row first: `.` passable and `#` impassable for class 0; each
/// formation's path `o`, an active formation's slots `+` and position `@`; each unit's [`glyph`]
/// on its navcell, `*` where two or more units share one.
pub fn picture(world: &World) -> String {
    let grid = world.nav().grid();
    let pass = world.nav().class_nav(pathing::PassClass::of(0)).expect("class 0 moves").pass_map();
    let (w, h) = (grid.width(), grid.height());
    let mut cells: Vec<Vec<char>> = (0..h)
        .map(|j| (0..w).map(|i| if pass.is_passable(pathing::Navcell::new(i as u16, j as u16)) { '.' } else { '#' }).collect())
        .collect();
    let mut put = |p: WorldPos, c: char| {
        let cell = world.navcell_of(p);
        cells[usize::from(cell.j)][usize::from(cell.i)] = c;
    };
    for f in world.formations() {
        for &p in f.path() {
            put(p, 'o');
        }
        if f.is_active() {
            for slot in world.formation_slots(f.id) {
                put(slot, '+');
            }
            put(f.pos, '@');
        }
    }
    let mut taken = vec![vec![false; w as usize]; h as usize];
    for unit in world.units() {
        let cell = world.navcell_of(unit.pos);
        let (i, j) = (usize::from(cell.i), usize::from(cell.j));
        cells[j][i] = if taken[j][i] { '*' } else { glyph(unit.id) };
        taken[j][i] = true;
    }
    let mut out = String::new();
    for row in cells.iter().rev() {
        out.extend(row.iter());
        out.push('\n');
    }
    out
}

/// Metres with two decimals (truncated toward zero), from the raw bits, for test output.
pub fn metres(v: Fixed) -> String {
    let bits = v.to_bits();
    let sign = if bits < 0 { "-" } else { "" };
    let a = bits.unsigned_abs();
    format!("{sign}{}.{:02}", a >> 16, ((a & 0xFFFF) * 100) >> 16)
}
