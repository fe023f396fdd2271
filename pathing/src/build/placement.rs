//! The placement questions a simulation asks of the world's passability: may a building go here,
//! may a unit stand here, where does a trained unit appear, which units must step off a new
//! foundation and where to, and how obstructed is a rectangle.
//!
//! Rules (docs/motion-rules.md; after 0 A.D.'s "Unit spawning", "Foundation unit dispersal", "Building placement"
//! and "Summary of constraints", with the choices it leaves open made here):
//!
//! - **Building placement** is an over-estimate of the footprint: the footprint grown by
//!   [`BUILDING_SPACING_CELLS`] navcell on every side must lie on the grid, every navcell it meets
//!   (closed shapes; touching counts) must be passable for the building's class, and it must not
//!   meet any obstruction flagged [`ObstructionFlags::BLOCK_FOUNDATION`]. The class (a
//!   `foundation` class such as `building-land`) brings the terrain limits; the spacing keeps
//!   buildings at least one navcell apart so units are not trapped between them and trained units
//!   have somewhere to appear.
//! - **Unit placement**: the unit's navcell is passable for its class, and the unit does not
//!   collide with any other unit's square grown by its radius plus [`SPAWN_EPSILON`]: invalid when
//!   `|dx| ≤ r₁ + r₂ + ε` and `|dz| ≤ r₁ + r₂ + ε`.
//! - **Spawn points** are tried on rings around the footprint, nearest ring first (ring `k` at
//!   `max(r, R) + ε + k·(2r + 2ε)` from the footprint, at least a navcell apart, where `R` is the
//!   distance the rasterization blocks round the footprint for the class, 0 for a class that sees
//!   no obstructions and for a footprint of size zero, a point; see
//!   [`NavWorld::first_spawn_ring`]); on each ring, from the
//!   middle of the footprint's front side (the `−v` side) outwards, every `2r + 2ε` (at least half a
//!   navcell), alternately anticlockwise and clockwise along the ring; the first valid position
//!   wins.
//! - **Foundation dispersal**: a unit (other than the builder) is in the way when it is inside the
//!   footprint grown by `R` plus half a navcell, where `R` is the distance the rasterization blocks
//!   for the unit's class (its clearance, or more under the narrow-obstruction rule): a
//!   non-rounded, conservative cover of what the rasterization can block. It is sent straight out
//!   through the nearest side to the footprint grown by `R` plus one navcell.
//!
//! All of it is exact integer arithmetic on fixed-point values; the answers are the same on every
//! machine.

use crate::build::passability::{NavWorld, ObstructionFlags, ObstructionId};
use crate::build::raster::count_blocked_in_square;
use crate::geometry::{Fixed, WorldPos, raw};
use crate::grid::nav_grid::PassClass;
use crate::grid::navcell::Navcell;
use crate::search::goal::Square;

/// The ε for spawning (0 A.D.'s 1/8 m): units are placed at least this far beyond another unit's square
/// grown by their radius. `[Units: metres]`
pub const SPAWN_EPSILON: Fixed = Fixed::from_bits(1 << 13);

/// A building's footprint is grown by this many navcells before it is checked.
pub const BUILDING_SPACING_CELLS: u32 = 1;

/// Most spawn rings tried around a footprint (eight rings around a point hold about 120 units of
/// one size).
pub const SPAWN_RINGS: u32 = 8;

/// Most positions tried on one spawn ring.
pub const SPAWN_POSITIONS_PER_RING: u32 = 512;

/// Where a search for spawn points stands: the ring and the candidate on it
/// ([`NavWorld::next_spawn_point`]). The default starts at the first candidate of the nearest ring.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpawnCursor {
    /// The ring, nearest first.
    pub ring: u32,
    /// The candidate on the ring, in the ring's order.
    pub k: u32,
}

/// A unit as placement sees it: an axis-aligned square of half-size `radius` centred on `pos`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnitShape {
    /// Centre.
    pub pos: WorldPos,
    /// Half-size of its obstruction square. `[Units: metres]`
    pub radius: Fixed,
}

/// Why a building may not be placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlacementError {
    /// Part of the footprint (with its spacing) is off the map.
    OffMap,
    /// This navcell under the footprint (with its spacing) is impassable for the building's class.
    Blocked(Navcell),
    /// The footprint (with its spacing) meets the obstruction with this id.
    Overlaps(ObstructionId),
}

impl std::fmt::Display for PlacementError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlacementError::OffMap => write!(f, "the footprint leaves the map"),
            PlacementError::Blocked(c) => write!(f, "navcell {c} under the footprint is not valid for the building's class"),
            PlacementError::Overlaps(id) => write!(f, "the footprint meets obstruction {id}"),
        }
    }
}

impl std::error::Error for PlacementError {}

/// `square` grown by `by` on each half-size.
fn grown(square: &Square, by: Fixed) -> Square {
    Square::new(square.center(), square.hw().saturating_add(by), square.hh().saturating_add(by), square.u(), square.v()).unwrap_or(*square)
}

/// A point's coordinates in a square's frame, `((p − c)·u, (p − c)·v)`, raw with 32 fractional bits.
fn local(square: &Square, p: WorldPos) -> (i128, i128) {
    let (dx, dz) = (raw(p.x) - raw(square.center().x), raw(p.z) - raw(square.center().z));
    let (u, v) = (square.u(), square.v());
    (dx * raw(u.x) + dz * raw(u.z), dx * raw(v.x) + dz * raw(v.z))
}

/// The world point `c + a·u + b·v` for local coordinates raw with 16 fractional bits (floored).
fn world(square: &Square, a: i128, b: i128) -> WorldPos {
    let (u, v, c) = (square.u(), square.v(), square.center());
    let x = raw(c.x) + (a * raw(u.x) + b * raw(v.x)).div_euclid(1 << 16);
    let z = raw(c.z) + (a * raw(u.z) + b * raw(v.z)).div_euclid(1 << 16);
    WorldPos::new(Fixed::from_bits(x as i64), Fixed::from_bits(z as i64))
}

/// Whether two closed squares meet: separating axes (the four edge normals), exact.
pub fn squares_intersect(a: &Square, b: &Square) -> bool {
    let (dx, dz) = (raw(b.center().x) - raw(a.center().x), raw(b.center().z) - raw(a.center().z));
    let axes = [a.u(), a.v(), b.u(), b.v()];
    axes.iter().all(|n| {
        let (nx, nz) = (raw(n.x), raw(n.z));
        // Everything in 32 fractional bits.
        let dist = (dx * nx + dz * nz).abs();
        let reach = |s: &Square| {
            let (u, v) = (s.u(), s.v());
            raw(s.hw()) * (raw(u.x) * nx + raw(u.z) * nz).abs() / (1 << 16)
                + raw(s.hh()) * (raw(v.x) * nx + raw(v.z) * nz).abs() / (1 << 16)
        };
        // The two reaches are rounded down; add one raw unit each so touching always counts.
        dist <= reach(a) + reach(b) + 2
    })
}

impl NavWorld {
    /// Whether a building of `class` may be placed with this footprint (see the module rules).
    ///
    /// # Errors
    /// The first reason found: off the map, an invalid navcell (lowest `(j, i)`), or the lowest
    /// overlapping obstruction id.
    pub fn check_building_placement(&self, class: PassClass, footprint: &Square) -> Result<(), PlacementError> {
        let grid = self.grid();
        let s = grid.cell_size();
        let spaced = grown(footprint, s * Fixed::from_num(BUILDING_SPACING_CELLS));
        let (x0, x1, z0, z1) = bounds(&spaced);
        let sr = raw(s);
        let (i0, i1) = (x0.div_euclid(sr), x1.div_euclid(sr));
        let (j0, j1) = (z0.div_euclid(sr), z1.div_euclid(sr));
        for j in j0..=j1 {
            for i in i0..=i1 {
                if !spaced.box_intersects(i * sr, (i + 1) * sr, j * sr, (j + 1) * sr) {
                    continue;
                }
                if i < 0 || j < 0 || i >= i128::from(grid.width()) || j >= i128::from(grid.height()) {
                    return Err(PlacementError::OffMap);
                }
                let cell = Navcell::new(i as u16, j as u16);
                if !grid.is_passable(cell, class) {
                    return Err(PlacementError::Blocked(cell));
                }
            }
        }
        for (&id, o) in self.obstructions() {
            if o.flags.0 & ObstructionFlags::BLOCK_FOUNDATION != 0 && squares_intersect(&spaced, &o.square) {
                return Err(PlacementError::Overlaps(id));
            }
        }
        Ok(())
    }

    /// Whether a unit of `class` and half-size `radius` may appear at `pos` among `units`.
    pub fn check_unit_placement(&self, class: PassClass, pos: WorldPos, radius: Fixed, units: &[UnitShape]) -> bool {
        let grid = self.grid();
        let sr = raw(grid.cell_size());
        let (i, j) = (raw(pos.x).div_euclid(sr), raw(pos.z).div_euclid(sr));
        if i < 0 || j < 0 || i >= i128::from(grid.width()) || j >= i128::from(grid.height()) {
            return false;
        }
        if !grid.is_passable(Navcell::new(i as u16, j as u16), class) {
            return false;
        }
        units.iter().all(|u| {
            let reach = raw(u.radius) + raw(radius) + raw(SPAWN_EPSILON);
            (raw(u.pos.x) - raw(pos.x)).abs() > reach || (raw(u.pos.z) - raw(pos.z)).abs() > reach
        })
    }

    /// A position around `footprint` where a unit of `class` and half-size `radius` may appear
    /// among `units`, in the order of the module rules; `None` when every candidate is invalid.
    pub fn pick_spawn_point(&self, class: PassClass, footprint: &Square, radius: Fixed, units: &[UnitShape]) -> Option<WorldPos> {
        self.next_spawn_point(class, footprint, radius, units, SPAWN_RINGS, &mut SpawnCursor::default())
    }

    /// How far from `footprint` the nearest spawn ring runs for a unit of `class` and half-size
    /// `radius`: `max(r, R) + ε`, with `R` the distance within which the footprint's rasterization
    /// may block navcells for the class ([`crate::raster::effective_radius`] of the class's whole
    /// clearance), so that every point of the ring stands on a navcell the footprint leaves
    /// passable. `R` is 0 for a class that sees no obstructions and for a footprint with both
    /// half-sizes 0 (a spawn at a point, which is no obstruction).
    pub fn first_spawn_ring(&self, class: PassClass, footprint: &Square, radius: Fixed) -> Fixed {
        let cell = self.grid().cell_size();
        let blocked = match self.classes().get(class) {
            Some(def)
                if def.obstructions != crate::build::classes::ObstructionMode::None
                    && (footprint.hw() > Fixed::ZERO || footprint.hh() > Fixed::ZERO) =>
            {
                crate::build::raster::effective_radius(footprint, def.whole_clearance(cell), cell)
            }
            _ => Fixed::ZERO,
        };
        radius.max(Fixed::ZERO).max(blocked) + SPAWN_EPSILON
    }

    /// The first valid spawn point at or after `cursor` on the first `rings` rings round
    /// `footprint` (ring order of the module rules), leaving `cursor` on it; `None`, with `cursor`
    /// past the last ring, when no later candidate is valid.
    ///
    /// Placing units one after another only ever makes candidates invalid, so a caller that places
    /// several units among a growing `units` list, on a grid that does not change in between, may
    /// keep one cursor: each answer is then the one [`NavWorld::pick_spawn_point`] would give from
    /// the first candidate, but a batch of `n` units costs one pass over the rings instead of `n`.
    pub fn next_spawn_point(
        &self,
        class: PassClass,
        footprint: &Square,
        radius: Fixed,
        units: &[UnitShape],
        rings: u32,
        cursor: &mut SpawnCursor,
    ) -> Option<WorldPos> {
        let s = raw(self.grid().cell_size());
        let r = raw(radius).max(0);
        // Neighbouring candidates are 2r + 2ε apart, strictly more than the r + r + ε the
        // placement rule needs, so a ring can fill up with units of one size.
        let spacing = 2 * r + 2 * raw(SPAWN_EPSILON);
        let step = spacing.max(s / 2).max(1);
        let first = raw(self.first_spawn_ring(class, footprint, radius));
        while cursor.ring < rings {
            let ring = i128::from(cursor.ring);
            let d = first + ring * spacing.max(s);
            let (a, b) = (raw(footprint.hw()) + d, raw(footprint.hh()) + d);
            let perimeter = 4 * (a + b);
            let n = (perimeter / step).clamp(1, i128::from(SPAWN_POSITIONS_PER_RING));
            while i128::from(cursor.k) < n {
                let k = i128::from(cursor.k);
                // 0, +1, −1, +2, −2, ... steps from the front middle.
                let t = if k % 2 == 1 { (k / 2 + 1) * step } else { -(k / 2) * step };
                if k == 0 || 2 * t.abs() <= perimeter {
                    let (la, lb) = perimeter_point(a, b, t.rem_euclid(perimeter));
                    let pos = world(footprint, la, lb);
                    if self.check_unit_placement(class, pos, radius, units) {
                        return Some(pos);
                    }
                }
                cursor.k += 1;
            }
            cursor.ring += 1;
            cursor.k = 0;
        }
        None
    }

    /// Number of navcells whose centre is inside `square` and that are impassable for `class`
    /// (navcells off the grid count as impassable): the formation planner's candidate score.
    pub fn count_blocked(&self, class: PassClass, square: &Square) -> u64 {
        let grid = self.grid();
        count_blocked_in_square(square, grid.cell_size(), grid.width(), grid.height(), |i, j| {
            !grid.is_passable(Navcell::new(i as u16, j as u16), class)
        })
    }
}

/// A point `t` along the perimeter of the rectangle `|a| ≤ half_a, |b| ≤ half_b` (raw, 16
/// fractional bits), starting at the middle of the `b = −half_b` side and going anticlockwise.
fn perimeter_point(half_a: i128, half_b: i128, t: i128) -> (i128, i128) {
    let (a, b) = (half_a, half_b);
    let legs = [(a, (0, -b), (1, 0)), (2 * b, (a, -b), (0, 1)), (2 * a, (a, b), (-1, 0)), (2 * b, (-a, b), (0, -1)), (a, (-a, -b), (1, 0))];
    let mut t = t;
    for (len, (sa, sb), (da, db)) in legs {
        if t <= len {
            return (sa + da * t, sb + db * t);
        }
        t -= len;
    }
    (0, -b)
}

/// The axis-aligned bounds of a square, raw with 16 fractional bits, rounded outwards.
fn bounds(square: &Square) -> (i128, i128, i128, i128) {
    let (u, v, c) = (square.u(), square.v(), square.center());
    let ex = (raw(square.hw()) * raw(u.x).abs() + raw(square.hh()) * raw(v.x).abs() + 0xffff) >> 16;
    let ez = (raw(square.hw()) * raw(u.z).abs() + raw(square.hh()) * raw(v.z).abs() + 0xffff) >> 16;
    (raw(c.x) - ex, raw(c.x) + ex, raw(c.z) - ez, raw(c.z) + ez)
}

/// A unit that may have to step off a new foundation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DispersalUnit {
    /// Where it stands.
    pub pos: WorldPos,
    /// Its class's clearance. `[Units: metres]`
    pub clearance: Fixed,
}

/// The units in the way of a new foundation and where each should go (see the module rules), in
/// the order of `units`; the unit at index `builder`, if any, never moves.
pub fn foundation_dispersal(
    footprint: &Square,
    cell_size: Fixed,
    units: &[DispersalUnit],
    builder: Option<usize>,
) -> Vec<(usize, WorldPos)> {
    let half = raw(cell_size) / 2;
    let mut out = Vec::new();
    for (n, unit) in units.iter().enumerate() {
        if Some(n) == builder {
            continue;
        }
        let (a, b) = local(footprint, unit.pos);
        // The distance the rasterization blocks around the footprint for this unit's class: its
        // clearance, or more under the narrow-obstruction rule (rounded up to 2^-16 m).
        let c = raw(crate::build::raster::effective_radius(footprint, unit.clearance, cell_size));
        // Inside the footprint grown by clearance + half a navcell (32 fractional bits)?
        let (ia, ib) = ((raw(footprint.hw()) + c + half) << 16, (raw(footprint.hh()) + c + half) << 16);
        if a.abs() > ia || b.abs() > ib {
            continue;
        }
        let (oa, ob) = (raw(footprint.hw()) + c + 2 * half, raw(footprint.hh()) + c + 2 * half);
        // Leave through the nearer side; ties go along u.
        let target = if (oa << 16) - a.abs() <= (ob << 16) - b.abs() {
            world(footprint, if a < 0 { -oa } else { oa }, b >> 16)
        } else {
            world(footprint, a >> 16, if b < 0 { -ob } else { ob })
        };
        out.push((n, target));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::classes::ClassSet;
    use crate::build::passability::{Obstruction, WorldDesc};
    use crate::build::raster::oriented_square;
    use crate::build::terrain::{GridSpec, MapBorder, Terrain};

    fn fx(n: i32, d: i32) -> Fixed {
        Fixed::from_num(n) / i64::from(d)
    }

    /// A flat dry 64 × 64 m world with one building (id 1) at (20, 20), 8 × 6 m, turned 20°, and a
    /// pond (ground below the water) in the north-east.
    fn world() -> NavWorld {
        let terrain = Terrain::from_fn(16, 16, Fixed::from_num(4), Fixed::ZERO, |vx, vz| {
            if vx >= 12 && vz >= 12 { Fixed::from_num(-3) } else { Fixed::from_num(1) }
        })
        .unwrap();
        let desc = WorldDesc::new(GridSpec { width: 64, height: 64, cell_size: Fixed::ONE }, ClassSet::zero_ad_defaults(), terrain)
            .with_border(MapBorder::Square { width: 2 });
        let building = oriented_square(WorldPos::from_int(20, 20), Fixed::from_num(4), Fixed::from_num(3), Fixed::from_num(20)).unwrap();
        NavWorld::build(desc, [(ObstructionId(1), Obstruction { square: building, flags: ObstructionFlags::STATIC })]).unwrap()
    }

    fn class(w: &NavWorld, name: &str) -> PassClass {
        w.classes().by_name(name).unwrap()
    }

    #[test]
    fn buildings_need_valid_spaced_ground() {
        let w = world();
        let land = class(&w, "building-land");
        let at = |x: i32, z: i32, deg: i32| {
            oriented_square(WorldPos::from_int(x, z), Fixed::from_num(3), Fixed::from_num(2), Fixed::from_num(deg)).unwrap()
        };
        assert_eq!(w.check_building_placement(land, &at(10, 40, 0)), Ok(()));
        assert_eq!(w.check_building_placement(land, &at(10, 40, 37)), Ok(()));
        // On top of the first building: its raster blocks the navcells, and the squares meet.
        assert!(matches!(w.check_building_placement(land, &at(21, 21, 0)), Err(PlacementError::Blocked(_))));
        // Touching it only at the spacing: no navcell blocked yet, but the squares meet.
        let near = oriented_square(WorldPos::from_int(20, 25), Fixed::from_num(3), Fixed::from_num(1), Fixed::from_num(20)).unwrap();
        assert!(w.check_building_placement(land, &near).is_err());
        // Off the map, in the border, in or near the pond.
        assert_eq!(w.check_building_placement(land, &at(1, 30, 0)), Err(PlacementError::OffMap));
        assert!(matches!(w.check_building_placement(land, &at(5, 30, 0)), Err(PlacementError::Blocked(_))));
        assert!(matches!(w.check_building_placement(land, &at(55, 55, 0)), Err(PlacementError::Blocked(_))));
    }

    #[test]
    fn unit_placement_uses_the_radius_plus_epsilon_rule_exactly() {
        let w = world();
        let inf = class(&w, "default");
        let other = UnitShape { pos: WorldPos::from_int(40, 10), radius: fx(1, 2) };
        let r = fx(1, 2);
        let gap = other.radius + r + SPAWN_EPSILON;
        let at = |dx: Fixed| WorldPos::new(other.pos.x + dx, other.pos.z + fx(1, 3));
        assert!(!w.check_unit_placement(inf, at(gap), r, &[other]), "exactly r₁ + r₂ + ε away still collides");
        assert!(w.check_unit_placement(inf, at(gap + Fixed::DELTA), r, &[other]));
        assert!(!w.check_unit_placement(inf, WorldPos::from_int(20, 20), r, &[]), "inside the building");
        assert!(!w.check_unit_placement(inf, WorldPos::from_int(-1, 20), r, &[]), "off the map");
    }

    #[test]
    fn spawn_points_start_at_the_front_and_never_overlap() {
        let w = world();
        let inf = class(&w, "default");
        let footprint = w.obstructions()[&ObstructionId(1)].square;
        let r = fx(1, 2);
        let mut units: Vec<UnitShape> = Vec::new();
        for n in 0..40 {
            let Some(p) = w.pick_spawn_point(inf, &footprint, r, &units) else { panic!("no spawn point for unit {n}") };
            assert!(w.check_unit_placement(inf, p, r, &units));
            if n == 0 {
                // The middle of the front (−v) side, max(r, R) + ε beyond it, R the default
                // class's clearance (1 m) or the narrow-obstruction term for a thin footprint.
                let (a, b) = local(&footprint, p);
                assert!(a.abs() < 1 << 20, "front middle, got a = {a}");
                let s = raw(w.grid().cell_size());
                let big_r = raw(Fixed::ONE).max((3 * s - 2 * raw(footprint.hw()).min(raw(footprint.hh())) + 1) / 2);
                let want = -((raw(footprint.hh()) + raw(r).max(big_r) + raw(SPAWN_EPSILON)) << 16);
                assert!((b - want).abs() < 1 << 20, "b = {b}, want {want}");
            }
            units.push(UnitShape { pos: p, radius: r });
        }
    }

    #[test]
    fn a_kept_spawn_cursor_gives_the_points_a_fresh_search_gives() {
        let w = world();
        let inf = class(&w, "default");
        let footprint = w.obstructions()[&ObstructionId(1)].square;
        let r = fx(1, 2);
        let (mut fresh, mut kept) = (Vec::new(), Vec::new());
        let mut cursor = SpawnCursor::default();
        for _ in 0..150 {
            let a = w.next_spawn_point(inf, &footprint, r, &fresh, 12, &mut SpawnCursor::default());
            let b = w.next_spawn_point(inf, &footprint, r, &kept, 12, &mut cursor);
            assert_eq!(a, b);
            let Some(p) = a else { break };
            fresh.push(UnitShape { pos: p, radius: r });
            kept.push(UnitShape { pos: p, radius: r });
        }
        assert_eq!(fresh.len(), 150, "twelve rings round the building hold 150 units of half-size 0.5");
        assert_eq!(w.pick_spawn_point(inf, &footprint, r, &[]), Some(fresh[0].pos));
    }

    #[test]
    fn dispersal_moves_units_in_the_way_except_the_builder() {
        let footprint = oriented_square(WorldPos::from_int(30, 30), Fixed::from_num(5), Fixed::from_num(3), Fixed::from_num(90)).unwrap();
        let c = Fixed::ONE;
        let units = [
            DispersalUnit { pos: WorldPos::from_int(30, 30), clearance: c }, // centre
            DispersalUnit { pos: WorldPos::from_int(34, 31), clearance: c }, // inside, near the +x side (v = −x)
            DispersalUnit { pos: WorldPos::from_int(30, 36), clearance: c }, // the builder, inside
            DispersalUnit { pos: WorldPos::from_int(30, 40), clearance: c }, // outside
        ];
        let moves = foundation_dispersal(&footprint, Fixed::ONE, &units, Some(2));
        assert_eq!(moves.iter().map(|m| m.0).collect::<Vec<_>>(), vec![0, 1]);
        for (n, target) in &moves {
            let (a, b) = local(&footprint, *target);
            let (oa, ob) = ((raw(footprint.hw()) + raw(c) + (1 << 16)) << 16, (raw(footprint.hh()) + raw(c) + (1 << 16)) << 16);
            assert!(a.abs() >= oa - (1 << 17) || b.abs() >= ob - (1 << 17), "unit {n} target {target:?} still inside");
        }
        // Unit 1 leaves through the nearer side: +x (the −v side, hh = 3 away).
        assert!(moves[1].1.x > Fixed::from_num(34));
    }

    #[test]
    fn counts_of_blocked_navcells_in_rectangles() {
        let w = world();
        let inf = class(&w, "default");
        let footprint = w.obstructions()[&ObstructionId(1)].square;
        let grown = Square::new(
            footprint.center(),
            footprint.hw() + Fixed::from_num(2),
            footprint.hh() + Fixed::from_num(2),
            footprint.u(),
            footprint.v(),
        )
        .unwrap();
        let mut want = 0;
        for j in 0..64u16 {
            for i in 0..64u16 {
                let (x, z) = ((i128::from(i) << 16) + (1 << 15), (i128::from(j) << 16) + (1 << 15));
                if grown.contains_point(x, z) && !w.grid().is_passable(Navcell::new(i, j), inf) {
                    want += 1;
                }
            }
        }
        assert!(want > 20);
        assert_eq!(w.count_blocked(inf, &grown), want);
        // Off the map counts as blocked: a 4 × 4 m square centred on the corner has 4 navcells on it.
        let corner = Square::axis_aligned(WorldPos::from_int(0, 0), Fixed::from_num(2), Fixed::from_num(2)).unwrap();
        assert_eq!(w.count_blocked(inf, &corner), 16);
    }
}
