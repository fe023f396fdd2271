//! The parsed form of a scenario file: maps, obstructions, spawns, goals and script entries.

use super::*;

#[derive(Clone, Debug)]
pub(super) enum ClassesSpec {
    ZeroAd,
    Text(String),
}

#[derive(Clone, Debug)]
pub(super) enum Heights {
    Flat(Fixed),
    List(Vec<Fixed>),
}

#[derive(Clone, Debug)]
pub(super) struct AreaSpec {
    pub(super) name: String,
    pub(super) vertices: Vec<WorldPos>,
    pub(super) available: bool,
}

#[derive(Clone, Debug)]
pub(super) struct ObstacleSpec {
    pub(super) name: Option<String>,
    pub(super) vertices: Vec<WorldPos>,
}

#[derive(Clone, Debug)]
pub(super) struct TerrainSpec {
    pub(super) tiles_w: u32,
    pub(super) tiles_h: u32,
    pub(super) tile_size: Fixed,
    pub(super) heights: Heights,
    pub(super) water_level: Fixed,
    pub(super) cell_size: Fixed,
    pub(super) border: MapBorder,
    pub(super) areas: Vec<AreaSpec>,
    pub(super) obstacles: Vec<ObstacleSpec>,
    pub(super) object_padding: Fixed,
    pub(super) boundary_padding: Fixed,
}

#[derive(Clone, Debug)]
pub(super) enum MapKind {
    Generated { tiles: u32, seed: u64, buildings: u32, trees: u32, circular: bool },
    MovingAi { text: String, cell_size: Fixed },
    Grid { text: String },
    Terrain(Box<TerrainSpec>),
    Polygons { text: String },
}

#[derive(Clone, Debug)]
pub(super) struct InitialObstruction {
    pub(super) name: Option<String>,
    pub(super) square: SquareSpec,
    pub(super) flags: u8,
    pub(super) id: u32,
}

/// An obstruction as a script names it.
#[derive(Clone, Copy, Debug)]
pub(super) enum ObsRef {
    /// By name: index into `obstruction_names`.
    Named(usize),
    /// By id.
    Id(u32),
}

#[derive(Clone, Debug)]
pub(super) enum Goal {
    Point(WorldPos),
    Circle { center: WorldPos, radius: Fixed },
    Square { center: WorldPos, half: Fixed },
    RangeUnit { group: usize, min: Fixed, max: Fixed, kind: RangeKind },
    RangeObstruction { target: ObsRef, min: Fixed, max: Fixed, kind: RangeKind },
}

#[derive(Clone, Debug)]
pub(super) struct SpawnSpec {
    pub(super) group: Option<usize>,
    pub(super) class: PassClass,
    pub(super) at: WorldPos,
    pub(super) count: u16,
    pub(super) radius: Fixed,
    pub(super) speed: Fixed,
    /// The spawn's own turn rate; `None` for the game's.
    pub(super) turn_rate: Option<Fixed>,
}

#[derive(Clone, Debug)]
pub(super) enum Action {
    Spawn(SpawnSpec),
    Move {
        units: Vec<usize>,
        goal: Goal,
        queue: bool,
    },
    Stop {
        units: Vec<usize>,
    },
    Remove {
        units: Vec<usize>,
    },
    PlaceObstruction {
        name: Option<usize>,
        square: SquareSpec,
        flags: u8,
    },
    PlaceBuilding {
        name: Option<usize>,
        class: PassClass,
        square: SquareSpec,
        builder: Option<usize>,
    },
    SetObstructionFlags {
        target: ObsRef,
        flags: u8,
    },
    RemoveObstruction {
        target: ObsRef,
    },
    SetArea {
        name: String,
        available: bool,
    },
    EditTerrain {
        vx: u32,
        vz: u32,
        width: u32,
        heights: Vec<Fixed>,
    },
    FormGroup {
        name: usize,
        units: Vec<usize>,
        layout: Layout,
    },
    MoveFormation {
        formation: usize,
        goal: Goal,
    },
    SetLayout {
        formation: usize,
        layout: Layout,
    },
    Disband {
        formation: usize,
    },
    SetWaypoints(WaypointNet),
    SetWaypointPriorities {
        class: PassClass,
        reset: bool,
        entries: Vec<PriorityEntry>,
    },
    MoveByWaypoints {
        units: Vec<usize>,
        goal: WorldPos,
        queue: bool,
    },
    /// A spawn round a building (the spec's `at` is unused).
    SpawnFromBuilding {
        spawn: SpawnSpec,
        building: ObsRef,
    },
    CancelSpawns {
        building: ObsRef,
    },
    /// A command of the scenario's game rules, as written: its `{"$group": name}`,
    /// `{"$unit": name}` and `{"$obstruction": name or id}` objects become ids when it is issued.
    Game {
        value: serde_json::Value,
        /// A new group of the units the command creates.
        group: Option<usize>,
    },
}

#[derive(Clone, Debug)]
pub(super) struct Entry {
    pub(super) turn: u32,
    pub(super) player: PlayerId,
    pub(super) seq: u32,
    pub(super) comment: Option<String>,
    pub(super) action: Action,
}

/// A referenced or inline text (`{"file": ...}` or `{"text": ...}`).
pub(super) struct TextRef {
    pub(super) text: String,
    /// The file name as written, when it came from a file.
    pub(super) file: Option<String>,
}

/// Parse-time tables: names to indices, and when each is first usable.
#[derive(Default)]
pub(super) struct Names {
    pub(super) groups: BTreeMap<String, usize>,
    pub(super) group_names: Vec<String>,
    /// Turn the group is spawned on, and its unit count.
    pub(super) group_spawn: Vec<(u32, u32)>,
    pub(super) obstructions: BTreeMap<String, usize>,
    pub(super) obstruction_names: Vec<String>,
    /// Turn from which a name is usable (initial: 0; placed on turn t: t + 1).
    pub(super) obstruction_ready: Vec<u32>,
    pub(super) obstruction_initial: Vec<Option<ObstructionId>>,
    pub(super) formations: BTreeMap<String, usize>,
    pub(super) formation_names: Vec<String>,
    /// Turn from which a formation name is usable (formed on turn t: t + 1).
    pub(super) formation_ready: Vec<u32>,
}

/// The layouts by their names in scenario files.
pub(super) const LAYOUTS: &[(&str, Layout)] =
    &[("line", Layout::Line), ("box", Layout::Box), ("column", Layout::Column), ("wedge", Layout::Wedge), ("loose", Layout::Loose)];

/// Default unit half-size. `[Units: metres]`
pub(super) const DEFAULT_RADIUS: Fixed = Fixed::lit("0.5");
/// Default unit speed. `[Units: metres per second]`
pub(super) const DEFAULT_SPEED: Fixed = Fixed::lit("8");
