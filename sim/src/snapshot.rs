//! Snapshots: the whole simulation state as canonical bytes, and back.
//!
//! Layout (all integers little-endian):
//!
//! | offset | bytes | what |
//! | ---: | ---: | --- |
//! | 0 | 8 | magic `PHXSNAP\0` |
//! | 8 | 4 | format version ([`SNAPSHOT_VERSION`]) |
//! | 12 | 8 | payload length `n` (at most [`MAX_PAYLOAD`]) |
//! | 20 | `n` | payload: [`SnapshotData`] in the canonical bincode encoding (fixed-width integers) |
//! | 20 + n | 32 | blake3 of the payload |
//!
//! The payload holds what the simulation *is*: settings, turn, the geometry the passability is
//! computed from (grid, classes as their JSON text, terrain, border, areas, obstacle polygons,
//! paddings, the painted navcells, obstruction squares), entity ids, units, pending path requests, the random
//! generator, the formations with their path requests and next id, the waypoint networks and
//! priority tables, and the waiting building spawn orders. Everything derived (grids, hierarchies, digests, the formations' flow fields,
//! the waypoint graphs) is rebuilt on load; the derived
//! structures equal their incrementally maintained forms (tested in `pathing`), so a loaded world
//! continues with exactly the hashes of one that never stopped.
//!
//! Reading never panics: a wrong magic, version or length, a checksum mismatch, bytes bincode
//! cannot decode, or values the constructors refuse each give a [`SnapshotError`] that says where
//! and what was expected. Decoding allocates a bounded multiple of the payload's size, whatever
//! the lengths in the input say (see [`MAX_PAYLOAD`]),
//! and the grids rebuilt on load are limited to [`MAX_GRID_CELLS`] navcells (jump tables to
//! [`MAX_JUMP_TABLE_CELLS`], landmark tables to [`MAX_LANDMARK_CELLS`]); a painted layer must have
//! exactly one byte per navcell of that grid.
//!
//! Version 3 added the painted navcells ([`SnapshotData::cells`]), version 4 the formations
//! ([`SnapshotData::formations`]), version 5 the waypoint networks and priority tables
//! ([`SnapshotData::waypoint_nets`]), version 6 the classes with landmark tables
//! ([`SnapshotData::landmark_classes`]), version 7 the units' facing, turn rate, last
//! displacement and searches round held passages, the motion setting `turn_rate`, the waiting building spawn orders
//! ([`SnapshotData::spawn_orders`]) and the units following waypoint routes
//! ([`SnapshotData::waypoint_routes`]), version 8 the game's state ([`SnapshotData::games`]),
//! version 9 the game's objects ([`GameSnapshot::objects`]), version 10 the setting
//! `long_search_budget` ([`Settings::long_search_budget`]), version 11 the units' order groups
//! ([`crate::Unit::order_group`]), version 12 one game section per rule module
//! ([`SnapshotData::games`]), version 13 the formations' held and yield counters
//! ([`crate::formation::Formation`]); a reader accepts only its own version.

use pathing::classes::ClassSet;
use pathing::passability::{NavArea, NavWorld, Obstruction, ObstructionFlags, ObstructionId, WorldDesc};
use pathing::polygon::Polygon;
use pathing::terrain::{CellKind, GridSpec, MapBorder, Terrain};
use pathing::{Fixed, PassClass, Square, Vec2, WorldPos};
use serde::{Deserialize, Serialize};

use crate::formation::{Formation, FormationId};
use crate::ids::{EntityAllocator, EntityId, PlayerId};
use crate::rng::SimRng;
use crate::settings::Settings;
use crate::spawn_order::SpawnOrder;
use crate::unit::{PathRequest, Unit};

/// The first bytes of every snapshot.
pub const MAGIC: [u8; 8] = *b"PHXSNAP\0";

/// Version of the snapshot format; a reader accepts only its own.
pub const SNAPSHOT_VERSION: u32 = 13;

/// Largest payload a snapshot may have. `[Units: bytes]`
///
/// Decoding allocates about as much as the payload (at most about three times it: every
/// collection in the format holds elements whose memory size is at most three times their encoded
/// size; there is no `Option` list whose `None`s would cost one byte each).
pub const MAX_PAYLOAD: usize = 1 << 26;

/// Most navcells a loaded world's grid may have (2048 × 2048): the grids, bit planes and
/// hierarchies rebuilt on load then stay under about 200 MiB whatever the class count.
pub const MAX_GRID_CELLS: u64 = 1 << 22;

/// Most navcells times classes with jump tables (16 bytes per navcell each) in a loaded world.
pub const MAX_JUMP_TABLE_CELLS: u64 = 1 << 22;

/// Most navcells times classes with landmark tables (32 bytes per navcell each) in a loaded world.
pub const MAX_LANDMARK_CELLS: u64 = 1 << 22;

const HEADER: usize = 20;

/// Why bytes are not a usable snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SnapshotError {
    /// Fewer bytes than the header or the stated payload and checksum.
    Truncated {
        /// Bytes needed.
        expected: u64,
        /// Bytes present.
        found: u64,
    },
    /// The first 8 bytes are not [`MAGIC`].
    BadMagic,
    /// A format version this reader does not know.
    UnsupportedVersion {
        /// The version found at offset 8.
        found: u32,
    },
    /// The payload length at offset 12 is above [`MAX_PAYLOAD`].
    TooLarge {
        /// The length found.
        length: u64,
    },
    /// Bytes follow the checksum.
    TrailingBytes {
        /// Offset of the first extra byte.
        offset: u64,
    },
    /// The payload does not match its checksum (the file is damaged).
    ChecksumMismatch,
    /// The payload could not be decoded.
    Decode {
        /// What the decoder said.
        message: String,
    },
    /// The payload decoded but a value in it is refused.
    Invalid {
        /// Which value and why.
        message: String,
    },
    /// The snapshot is of another ruleset (or version), or has game state where none is expected,
    /// or none where it is.
    Rules {
        /// The rule modules and versions the snapshot holds, in step order (none for a world
        /// without a game).
        found: Vec<(String, u32)>,
        /// The rule modules and versions it was to be loaded as.
        expected: Vec<(String, u32)>,
    },
}

/// `rules combat 1, economy 2`, or `no game rules`.
pub fn rules_text(rules: &[(String, u32)]) -> String {
    if rules.is_empty() {
        return "no game rules".to_owned();
    }
    let list: Vec<String> = rules.iter().map(|(name, version)| format!("{name} {version}")).collect();
    format!("rules {}", list.join(", "))
}

impl std::fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SnapshotError::Truncated { expected, found } => write!(f, "snapshot truncated: expected {expected} bytes, found {found}"),
            SnapshotError::BadMagic => write!(f, "offset 0: expected the snapshot magic PHXSNAP"),
            SnapshotError::UnsupportedVersion { found } => {
                write!(f, "offset 8: expected snapshot format version {SNAPSHOT_VERSION}, found {found}")
            }
            SnapshotError::TooLarge { length } => write!(f, "offset 12: payload length {length} above the limit {MAX_PAYLOAD}"),
            SnapshotError::TrailingBytes { offset } => write!(f, "offset {offset}: expected the end of the snapshot, found more bytes"),
            SnapshotError::ChecksumMismatch => write!(f, "the payload does not match its checksum: the snapshot is damaged"),
            SnapshotError::Decode { message } => write!(f, "offset {HEADER}: payload cannot be decoded: {message}"),
            SnapshotError::Invalid { message } => write!(f, "snapshot payload: {message}"),
            SnapshotError::Rules { found, expected } => {
                write!(f, "the snapshot holds a world with {}, expected {}", rules_text(found), rules_text(expected))
            }
        }
    }
}

impl std::error::Error for SnapshotError {}

/// An obstruction as stored: id, square (centre, half-sizes, axes as raw bits) and flags.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredObstruction {
    /// Its id.
    pub id: ObstructionId,
    /// `x, z, hw, hh, u.x, u.z, v.x, v.z` as raw fixed-point bits.
    pub square: [i64; 8],
    /// Its flags.
    pub flags: u8,
}

/// A stored navigation area: name, vertices (raw x, z), available.
pub type StoredArea = (String, Vec<(i64, i64)>, bool);

/// The payload of a snapshot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotData {
    /// Game settings.
    pub settings: Settings,
    /// The next turn to step.
    pub turn: u32,
    /// Grid width, height and navcell size (raw bits).
    pub grid: (u32, u32, i64),
    /// The passability classes, as their class-file text.
    pub classes: String,
    /// Terrain tiles across and down, tile size (raw), vertex heights (raw), water level (raw).
    pub terrain: (u32, u32, i64, Vec<i64>, i64),
    /// Border: 0 none, 1 square, 2 circle; width in navcells.
    pub border: (u8, u32),
    /// Areas: name, vertices (raw x, z), available.
    pub areas: Vec<StoredArea>,
    /// Obstacle polygons: vertices (raw x, z).
    pub obstacles: Vec<Vec<(i64, i64)>>,
    /// Object padding, boundary padding (raw).
    pub paddings: (i64, i64),
    /// Classes with jump tables.
    pub jump_table_classes: u16,
    /// Classes whose searches use landmark tables ([`WorldDesc::landmark_classes`]).
    pub landmark_classes: u16,
    /// The painted navcells, one [`CellKind::to_byte`] per navcell in navcell order (0 ground,
    /// 1 water, 2 blocked); empty when the world is not painted. `[Limit: length 0 or width × height]`
    pub cells: Vec<u8>,
    /// Obstruction squares, by id.
    pub obstructions: Vec<StoredObstruction>,
    /// The next obstruction id.
    pub next_obstruction: u32,
    /// Entity ids.
    pub ids: EntityAllocator,
    /// The live units, in entity-index order (each goes back to the slot of its id).
    pub units: Vec<Unit>,
    /// Pending path requests.
    pub requests: Vec<PathRequest>,
    /// The random generator.
    pub rng: SimRng,
    /// The formations, in id order (their flow fields are rebuilt from what each stores).
    pub formations: Vec<Formation>,
    /// Pending formation path requests, oldest first.
    pub formation_requests: Vec<FormationId>,
    /// The id the next formation gets.
    pub next_formation: u32,
    /// The waypoint networks, by class (their graphs are rebuilt on load).
    pub waypoint_nets: Vec<crate::waypoint::WaypointNet>,
    /// The players' waypoint priority tables: player, class, one priority per waypoint of the
    /// class's net; by `(player, class)`.
    pub waypoint_tables: Vec<(PlayerId, PassClass, Vec<pathing::waypoints::WaypointPriority>)>,
    /// The units following a waypoint route: unit, goal, re-routed already; by unit id.
    pub waypoint_routes: Vec<(EntityId, WorldPos, bool)>,
    /// The building spawn orders waiting for room, oldest first.
    pub spawn_orders: Vec<SpawnOrder>,
    /// The id the next spawn order gets.
    pub next_spawn_order: u32,
    /// Each rule module's state, in step order ([`crate::rules`]; none without a game).
    pub games: Vec<GameSnapshot>,
}

fn bits(v: Fixed) -> i64 {
    v.to_bits()
}

fn fixed(v: i64) -> Fixed {
    Fixed::from_bits(v)
}

fn point(p: &(i64, i64)) -> WorldPos {
    WorldPos::new(fixed(p.0), fixed(p.1))
}

/// The world's state, borrowed, for the snapshot writer: the world hands over what it is made of,
/// so this format needs no access to the world itself.
pub(crate) struct StateParts<'a> {
    pub(crate) nav: &'a NavWorld,
    pub(crate) settings: Settings,
    pub(crate) turn: u32,
    pub(crate) ids: &'a EntityAllocator,
    pub(crate) units: &'a [Option<Unit>],
    pub(crate) requests: &'a [PathRequest],
    pub(crate) rng: &'a SimRng,
    pub(crate) next_obstruction: u32,
    pub(crate) formations: Vec<Formation>,
    pub(crate) formation_requests: &'a [FormationId],
    pub(crate) next_formation: u32,
    pub(crate) waypoint_nets: Vec<crate::waypoint::WaypointNet>,
    pub(crate) waypoint_tables: Vec<(PlayerId, PassClass, Vec<pathing::waypoints::WaypointPriority>)>,
    pub(crate) waypoint_routes: Vec<(EntityId, WorldPos, bool)>,
    pub(crate) spawn_orders: &'a [SpawnOrder],
    pub(crate) next_spawn_order: u32,
    pub(crate) games: Vec<GameSnapshot>,
}

/// The payload of a world.
pub(crate) fn data_of(parts: StateParts<'_>) -> SnapshotData {
    let desc = parts.nav.desc();
    let t = &desc.terrain;
    let polygon = |p: &Polygon| p.vertices().iter().map(|v| (bits(v.x), bits(v.z))).collect::<Vec<_>>();
    SnapshotData {
        settings: parts.settings,
        turn: parts.turn,
        grid: (desc.grid.width, desc.grid.height, bits(desc.grid.cell_size)),
        classes: desc.classes.to_json(),
        terrain: (t.tiles_w(), t.tiles_h(), bits(t.tile_size()), t.heights().iter().map(|h| bits(*h)).collect(), bits(t.water_level())),
        border: match desc.border {
            MapBorder::None => (0, 0),
            MapBorder::Square { width } => (1, width),
            MapBorder::Circle { width } => (2, width),
        },
        areas: desc.areas.iter().map(|a| (a.name.clone(), polygon(&a.polygon), a.available)).collect(),
        obstacles: desc.obstacles.iter().map(polygon).collect(),
        paddings: (bits(desc.object_padding), bits(desc.boundary_padding)),
        jump_table_classes: desc.jump_table_classes,
        landmark_classes: desc.landmark_classes,
        cells: desc.cells.iter().map(|kind| kind.to_byte()).collect(),
        obstructions: parts
            .nav
            .obstructions()
            .iter()
            .map(|(&id, o)| {
                let s = &o.square;
                let square = [s.center().x, s.center().z, s.hw(), s.hh(), s.u().x, s.u().z, s.v().x, s.v().z].map(bits);
                StoredObstruction { id, square, flags: o.flags.0 }
            })
            .collect(),
        next_obstruction: parts.next_obstruction,
        ids: parts.ids.clone(),
        units: parts.units.iter().flatten().cloned().collect(),
        requests: parts.requests.to_vec(),
        rng: parts.rng.clone(),
        formations: parts.formations,
        formation_requests: parts.formation_requests.to_vec(),
        next_formation: parts.next_formation,
        waypoint_nets: parts.waypoint_nets,
        waypoint_tables: parts.waypoint_tables,
        waypoint_routes: parts.waypoint_routes,
        spawn_orders: parts.spawn_orders.to_vec(),
        next_spawn_order: parts.next_spawn_order,
        games: parts.games,
    }
}

/// Whether a world of `width × height` navcells with these table classes can be loaded again: the
/// limits [`World::load`](crate::World::load) holds every snapshot to ([`MAX_GRID_CELLS`],
/// [`MAX_JUMP_TABLE_CELLS`], [`MAX_LANDMARK_CELLS`]), so [`World::new`](crate::World::new)
/// refuses a world that could be saved but not loaded.
///
/// # Errors
/// The part over its limit and what was expected.
pub(crate) fn check_limits(width: u32, height: u32, jump_table_classes: u16, landmark_classes: u16) -> Result<(), (&'static str, String)> {
    let cells = u64::from(width) * u64::from(height);
    if cells > MAX_GRID_CELLS {
        return Err(("grid", format!("{width}x{height} navcells, expected at most {MAX_GRID_CELLS}")));
    }
    let tables = |classes: u16, limit: u64| {
        let n = classes.count_ones();
        (cells * u64::from(n) > limit).then(|| format!("{n} classes on {cells} navcells, expected at most {limit} in all"))
    };
    if let Some(e) = tables(jump_table_classes, MAX_JUMP_TABLE_CELLS) {
        return Err(("jump tables", e));
    }
    if let Some(e) = tables(landmark_classes, MAX_LANDMARK_CELLS) {
        return Err(("landmark tables", e));
    }
    Ok(())
}

/// The world description and obstructions a payload describes, checked by their constructors.
pub(crate) fn geometry_of(data: &SnapshotData) -> Result<(WorldDesc, Vec<(ObstructionId, Obstruction)>), SnapshotError> {
    let invalid = |what: &str, e: &dyn std::fmt::Display| SnapshotError::Invalid { message: format!("{what}: {e}") };
    // The grids built on load are derived, not read: bound them so a small file cannot ask for
    // gigabytes.
    check_limits(data.grid.0, data.grid.1, data.jump_table_classes, data.landmark_classes).map_err(|(what, e)| invalid(what, &e))?;
    let cells = u64::from(data.grid.0) * u64::from(data.grid.1);
    // The painted layer is one byte per navcell of the grid just bounded, so it adds at most
    // MAX_GRID_CELLS bytes (and the decoder already held them).
    if !data.cells.is_empty() && data.cells.len() as u64 != cells {
        return Err(invalid("painted navcells", &format!("{} bytes, expected 0 or {cells} (width × height)", data.cells.len())));
    }
    let mut painted = Vec::with_capacity(data.cells.len());
    for (k, &byte) in data.cells.iter().enumerate() {
        let kind = CellKind::from_byte(byte).ok_or_else(|| {
            invalid("painted navcells", &format!("byte {byte} at navcell {k}, expected 0 (ground), 1 (water) or 2 (blocked)"))
        })?;
        painted.push(kind);
    }
    let classes = ClassSet::parse_json(&data.classes).map_err(|e| invalid("classes", &e))?;
    let (tw, th, ts, heights, water) = &data.terrain;
    let terrain = Terrain::new(*tw, *th, fixed(*ts), heights.iter().map(|h| fixed(*h)).collect(), fixed(*water))
        .map_err(|e| invalid("terrain", &e))?;
    let border = match data.border {
        (0, _) => MapBorder::None,
        (1, width) => MapBorder::Square { width },
        (2, width) => MapBorder::Circle { width },
        (kind, _) => return Err(invalid("border", &format!("kind {kind}, expected 0, 1 or 2"))),
    };
    let polygon = |what: &str, v: &[(i64, i64)]| Polygon::new(v.iter().map(point).collect()).map_err(|e| invalid(what, &e));
    let mut areas = Vec::new();
    for (name, vertices, available) in &data.areas {
        areas.push(NavArea { name: name.clone(), polygon: polygon(&format!("area {name:?}"), vertices)?, available: *available });
    }
    let obstacles = data.obstacles.iter().enumerate().map(|(k, v)| polygon(&format!("obstacle {k}"), v)).collect::<Result<Vec<_>, _>>()?;
    let desc = WorldDesc::new(GridSpec { width: data.grid.0, height: data.grid.1, cell_size: fixed(data.grid.2) }, classes, terrain)
        .with_border(border)
        .with_areas(areas)
        .with_obstacles(obstacles)
        .with_paddings(fixed(data.paddings.0), fixed(data.paddings.1))
        .with_jump_table_classes(data.jump_table_classes)
        .with_landmark_classes(data.landmark_classes)
        .with_cells(painted);
    let mut obstructions = Vec::with_capacity(data.obstructions.len());
    for o in &data.obstructions {
        let [x, z, hw, hh, ux, uz, vx, vz] = o.square.map(fixed);
        let square = Square::new(WorldPos::new(x, z), hw, hh, Vec2::new(ux, uz), Vec2::new(vx, vz))
            .map_err(|e| invalid(&format!("obstruction {}", o.id), &e))?;
        obstructions.push((o.id, Obstruction { square, flags: ObstructionFlags(o.flags) }));
    }
    Ok((desc, obstructions))
}

/// Frames a payload: magic, version, length, payload, checksum.
pub(crate) fn frame(data: &SnapshotData) -> Vec<u8> {
    let payload = crate::state_hash::encode(data);
    let mut out = Vec::with_capacity(HEADER + payload.len() + 32);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&SNAPSHOT_VERSION.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&payload);
    out.extend_from_slice(blake3::hash(&payload).as_bytes());
    out
}

/// Reads a framed payload (see the module documentation for every check).
///
/// # Errors
/// [`SnapshotError`] saying where and what was expected.
pub fn unframe(bytes: &[u8]) -> Result<SnapshotData, SnapshotError> {
    let payload = check_frame(bytes)?;
    let config = crate::state_hash::CONFIG.with_limit::<MAX_PAYLOAD>();
    let (data, used): (SnapshotData, usize) =
        bincode::serde::decode_from_slice(payload, config).map_err(|e| SnapshotError::Decode { message: e.to_string() })?;
    if used != payload.len() {
        return Err(SnapshotError::Invalid { message: format!("payload has {} bytes after its data", payload.len() - used) });
    }
    Ok(data)
}

/// Checks a snapshot's framing (magic, version, length, checksum) without decoding it, and
/// returns its payload: what a container of snapshots (a replay's keyframes) checks on reading.
///
/// # Errors
/// The framing errors of [`unframe`].
pub fn check_frame(bytes: &[u8]) -> Result<&[u8], SnapshotError> {
    let found = bytes.len() as u64;
    if bytes.len() < HEADER {
        return Err(SnapshotError::Truncated { expected: HEADER as u64, found });
    }
    if bytes[..8] != MAGIC {
        return Err(SnapshotError::BadMagic);
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if version != SNAPSHOT_VERSION {
        return Err(SnapshotError::UnsupportedVersion { found: version });
    }
    let length = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
    if length > MAX_PAYLOAD as u64 {
        return Err(SnapshotError::TooLarge { length });
    }
    let end = HEADER as u64 + length + 32;
    if found < end {
        return Err(SnapshotError::Truncated { expected: end, found });
    }
    if found > end {
        return Err(SnapshotError::TrailingBytes { offset: end });
    }
    let payload = &bytes[HEADER..HEADER + length as usize];
    if blake3::hash(payload).as_bytes()[..] != bytes[HEADER + length as usize..] {
        return Err(SnapshotError::ChecksumMismatch);
    }
    Ok(payload)
}

/// The game's section of a snapshot: each value in the canonical encoding of its type, which only
/// the ruleset knows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameSnapshot {
    /// [`crate::rules::Rules::NAME`].
    pub rules: String,
    /// [`crate::rules::Rules::VERSION`].
    pub version: u32,
    /// Every live unit's state, by id.
    pub units: Vec<(EntityId, Vec<u8>)>,
    /// Every object's state (the game's state of an obstruction), by ascending obstruction id.
    pub objects: Vec<(pathing::ObstructionId, Vec<u8>)>,
    /// Every player's state, player 0 first.
    pub players: Vec<Vec<u8>>,
    /// The world state.
    pub state: Vec<u8>,
}
