//! The scenario file as serde reads it: one struct per JSON object, unknown keys refused, every
//! decimal exact. What serde cannot know (names defined elsewhere in the file, turn order, limits
//! that depend on other keys, which of several keys is given) is checked afterwards, by
//! `parse`, `map` and `commands`.

use serde::Deserialize;
use serde_json::Value;

use super::json::{Capped, Dec, Int, Name, Point, Text, decimal, some_decimal};
use super::{MAX_DESCRIPTION_BYTES, MAX_GENERATED_TILES, MAX_GROUPS, MAX_OBSTRUCTIONS, MAX_SCRIPT_ENTRIES, MAX_TURN};
use pathing::Fixed;

/// The largest `u64`, as an [`Int`] bound.
const ANY: u64 = u64::MAX;

/// The format and version, read first (every other key ignored): a newer version may have keys
/// this one does not know, and its error should be about the version.
#[derive(Deserialize)]
#[serde(expecting = "a scenario object")]
pub(super) struct Head {
    pub(super) format: Text<{ super::MAX_NAME_BYTES }>,
    pub(super) version: Int<0, { u32::MAX as u64 }>,
}

/// The whole file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a scenario object")]
pub(super) struct Root {
    #[serde(rename = "format")]
    pub(super) _format: serde::de::IgnoredAny,
    #[serde(rename = "version")]
    pub(super) _version: serde::de::IgnoredAny,
    pub(super) name: Text<{ super::MAX_NAME_BYTES }>,
    pub(super) description: Option<Text<MAX_DESCRIPTION_BYTES>>,
    pub(super) turns: Int<1, { MAX_TURN as u64 }>,
    pub(super) rules: Option<Text<32>>,
    pub(super) bots: Option<Capped<BotIn, 255>>,
    pub(super) settings: Option<SettingsIn>,
    pub(super) classes: Option<Value>,
    pub(super) map: MapIn,
    pub(super) obstructions: Option<Capped<ObstructionIn, MAX_OBSTRUCTIONS>>,
    pub(super) waypoints: Option<Capped<NetIn, { pathing::MAX_CLASSES as usize }>>,
    pub(super) units: Option<Capped<UnitIn, MAX_GROUPS>>,
    pub(super) script: Option<Capped<EntryIn, MAX_SCRIPT_ENTRIES>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SettingsIn {
    pub(super) turn_ms: Option<Int<1, 10_000>>,
    pub(super) players: Option<Int<0, 255>>,
    pub(super) seed: Option<Int<0, ANY>>,
    pub(super) max_paths_per_turn: Option<Int<1, 65_535>>,
    pub(super) long_search_budget: Option<Int<1, { sim::MAX_LONG_SEARCH_BUDGET as u64 }>>,
    pub(super) motion: Option<MotionIn>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MotionIn {
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) short_range: Option<Fixed>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) short_range_step: Option<Fixed>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) short_range_max: Option<Fixed>,
    pub(super) short_node_budget: Option<Int<1, 65_535>>,
    pub(super) max_short_paths_per_turn: Option<Int<1, 65_535>>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) rejoin_radius: Option<Fixed>,
    pub(super) long_replan_every: Option<Int<1, 255>>,
    pub(super) give_up_turns: Option<Int<1, 255>>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) core_fraction: Option<Fixed>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) influence: Option<Fixed>,
    pub(super) push_iterations: Option<Int<0, 255>>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) nudge_distance: Option<Fixed>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) replan_trigger: Option<Fixed>,
    pub(super) replan_cooldown_ms: Option<Int<0, 60_000>>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) moved_epsilon: Option<Fixed>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) turn_rate: Option<Fixed>,
}

/// `{"file": NAME}` or `{"text": TEXT}` (exactly one).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TextRefIn {
    pub(super) file: Option<Name>,
    pub(super) text: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MapIn {
    pub(super) generated: Option<GeneratedIn>,
    pub(super) movingai: Option<TextRefIn>,
    pub(super) grid: Option<TextRefIn>,
    pub(super) terrain: Option<Box<TerrainIn>>,
    pub(super) polygons: Option<TextRefIn>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) cell_size: Option<Fixed>,
    pub(super) jump_tables: Option<Capped<Value, 16>>,
    pub(super) landmarks: Option<Capped<Value, 16>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GeneratedIn {
    pub(super) tiles: Int<16, { MAX_GENERATED_TILES as u64 }>,
    pub(super) seed: Option<Int<0, ANY>>,
    pub(super) buildings: Option<Int<0, 10_000>>,
    pub(super) trees: Option<Int<0, 100_000>>,
    pub(super) circular: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TerrainIn {
    pub(super) tiles: [Int<1, 16_384>; 2],
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) tile_size: Option<Fixed>,
    pub(super) heights: Option<Capped<Dec, { super::MAX_TERRAIN_VERTICES as usize }>>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) flat: Option<Fixed>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) water_level: Option<Fixed>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) cell_size: Option<Fixed>,
    pub(super) border: Option<BorderIn>,
    pub(super) areas: Option<Capped<AreaIn, 4096>>,
    pub(super) obstacles: Option<Capped<ObstacleIn, 4096>>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) object_padding: Option<Fixed>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) boundary_padding: Option<Fixed>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BorderIn {
    pub(super) shape: Text<{ super::MAX_NAME_BYTES }>,
    pub(super) width: Option<Int<0, 65_535>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AreaIn {
    pub(super) name: Name,
    pub(super) vertices: Capped<Point, { pathing::polygon::MAX_VERTICES }>,
    pub(super) available: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ObstacleIn {
    pub(super) name: Option<Name>,
    pub(super) vertices: Capped<Point, { pathing::polygon::MAX_VERTICES }>,
}

/// An initial obstruction, or a `place_obstruction` command.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ObstructionIn {
    pub(super) name: Option<Name>,
    #[serde(deserialize_with = "decimal")]
    pub(super) x: Fixed,
    #[serde(deserialize_with = "decimal")]
    pub(super) z: Fixed,
    #[serde(deserialize_with = "decimal")]
    pub(super) w: Fixed,
    #[serde(deserialize_with = "decimal")]
    pub(super) h: Fixed,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) degrees: Option<Fixed>,
    pub(super) flags: Option<Value>,
}

/// A waypoint network (the `waypoints` entries and the `set_waypoints` command).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NetIn {
    pub(super) class: Value,
    pub(super) range: Int<1, { sim::waypoint::MAX_NET_RANGE as u64 }>,
    pub(super) points: Capped<Point, { sim::waypoint::MAX_NET_WAYPOINTS }>,
}

/// A seat the scenario's rules' bot plays.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BotIn {
    pub(super) player: Int<1, 255>,
    pub(super) seed: Option<Int<0, { u64::MAX }>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct UnitIn {
    pub(super) name: Name,
    pub(super) player: Option<Int<0, 255>>,
    pub(super) class: Option<Value>,
    pub(super) at: Point,
    pub(super) count: Option<Int<1, { sim::MAX_SPAWN_COUNT as u64 }>>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) radius: Option<Fixed>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) speed: Option<Fixed>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) turn_rate: Option<Fixed>,
    pub(super) comment: Option<Text<MAX_DESCRIPTION_BYTES>>,
}

/// A script entry: when, who, and exactly one command.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EntryIn {
    pub(super) turn: Int<0, { MAX_TURN as u64 }>,
    pub(super) player: Option<Int<0, 255>>,
    pub(super) comment: Option<Text<MAX_DESCRIPTION_BYTES>>,
    pub(super) spawn: Option<SpawnIn>,
    pub(super) r#move: Option<MoveIn>,
    pub(super) stop: Option<UnitsIn>,
    pub(super) remove: Option<UnitsIn>,
    pub(super) place_obstruction: Option<ObstructionIn>,
    pub(super) place_building: Option<BuildingIn>,
    pub(super) set_obstruction_flags: Option<SetFlagsIn>,
    pub(super) remove_obstruction: Option<RemoveObstructionIn>,
    pub(super) set_area: Option<SetAreaIn>,
    pub(super) edit_terrain: Option<EditTerrainIn>,
    pub(super) form_group: Option<FormGroupIn>,
    pub(super) move_formation: Option<MoveFormationIn>,
    pub(super) set_layout: Option<SetLayoutIn>,
    pub(super) disband: Option<DisbandIn>,
    pub(super) set_waypoints: Option<NetIn>,
    pub(super) set_waypoint_priorities: Option<PrioritiesIn>,
    pub(super) move_by_waypoints: Option<MoveByWaypointsIn>,
    pub(super) spawn_from_building: Option<SpawnFromBuildingIn>,
    pub(super) cancel_spawns: Option<CancelSpawnsIn>,
    pub(super) game: Option<Value>,
    /// With `game`: a new group of the units the command's rules create.
    pub(super) group: Option<Name>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SpawnIn {
    pub(super) group: Option<Name>,
    pub(super) class: Option<Value>,
    pub(super) at: Point,
    pub(super) count: Option<Int<1, { sim::MAX_SPAWN_COUNT as u64 }>>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) radius: Option<Fixed>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) speed: Option<Fixed>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) turn_rate: Option<Fixed>,
}

/// A `spawn_from_building` command: a spawn's fields with a building instead of a point.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SpawnFromBuildingIn {
    pub(super) group: Option<Name>,
    pub(super) building: Value,
    pub(super) class: Option<Value>,
    pub(super) count: Option<Int<1, { sim::MAX_SPAWN_COUNT as u64 }>>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) radius: Option<Fixed>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) speed: Option<Fixed>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) turn_rate: Option<Fixed>,
}

/// A `cancel_spawns` command.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CancelSpawnsIn {
    pub(super) building: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MoveIn {
    pub(super) units: Capped<Name, MAX_GROUPS>,
    pub(super) goal: GoalIn,
    pub(super) queue: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct UnitsIn {
    pub(super) units: Capped<Name, MAX_GROUPS>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BuildingIn {
    pub(super) name: Option<Name>,
    pub(super) class: Value,
    #[serde(deserialize_with = "decimal")]
    pub(super) x: Fixed,
    #[serde(deserialize_with = "decimal")]
    pub(super) z: Fixed,
    #[serde(deserialize_with = "decimal")]
    pub(super) w: Fixed,
    #[serde(deserialize_with = "decimal")]
    pub(super) h: Fixed,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) degrees: Option<Fixed>,
    pub(super) builder: Option<Name>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SetFlagsIn {
    pub(super) obstruction: Value,
    pub(super) flags: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RemoveObstructionIn {
    pub(super) obstruction: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SetAreaIn {
    pub(super) name: Name,
    pub(super) available: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EditTerrainIn {
    pub(super) vx: Int<0, 16_384>,
    pub(super) vz: Int<0, 16_384>,
    pub(super) width: Int<1, 256>,
    pub(super) heights: Capped<Dec, 65_536>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FormGroupIn {
    pub(super) name: Name,
    pub(super) units: Capped<Name, MAX_GROUPS>,
    pub(super) layout: Name,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MoveFormationIn {
    pub(super) formation: Name,
    pub(super) goal: GoalIn,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SetLayoutIn {
    pub(super) formation: Name,
    pub(super) layout: Name,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DisbandIn {
    pub(super) formation: Name,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PrioritiesIn {
    pub(super) class: Value,
    pub(super) reset: Option<bool>,
    pub(super) entries: Capped<PriorityIn, { sim::waypoint::MAX_NET_WAYPOINTS }>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PriorityIn {
    pub(super) waypoint: Int<0, { sim::waypoint::MAX_NET_WAYPOINTS as u64 - 1 }>,
    pub(super) extra_cost: Option<Int<0, 65_535>>,
    pub(super) excluded: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MoveByWaypointsIn {
    pub(super) units: Capped<Name, MAX_GROUPS>,
    pub(super) goal: Point,
    pub(super) queue: Option<bool>,
}

/// A goal: exactly one of `point`, `circle`, `square`, `range`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GoalIn {
    pub(super) point: Option<Point>,
    pub(super) circle: Option<CircleIn>,
    pub(super) square: Option<SquareGoalIn>,
    pub(super) range: Option<RangeIn>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CircleIn {
    pub(super) center: Point,
    #[serde(deserialize_with = "decimal")]
    pub(super) radius: Fixed,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SquareGoalIn {
    pub(super) center: Point,
    #[serde(deserialize_with = "decimal")]
    pub(super) half: Fixed,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RangeIn {
    pub(super) unit: Option<Name>,
    pub(super) obstruction: Option<Value>,
    #[serde(default, deserialize_with = "some_decimal")]
    pub(super) min: Option<Fixed>,
    #[serde(deserialize_with = "decimal")]
    pub(super) max: Fixed,
    /// `melee`, `ranged` or `build` (version 5); melee when absent.
    pub(super) kind: Option<Value>,
}
