//! The scenario file as serde reads it: one struct per JSON object, unknown keys refused, every
//! decimal exact. What serde cannot know (names defined elsewhere in the file, turn order, limits
//! that depend on other keys, which of several keys is given) is checked afterwards, by
//! `parse`, `map` and `commands`.
//!
//! The same structs are what the canonical text is written from (`canonical` fills them from the
//! parsed scenario and serializes them), so a key is defined once for reading and writing: the
//! fields are in the order the canonical text writes them, and an absent optional key is not
//! written.

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

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SettingsIn {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) turn_ms: Option<Int<1, 10_000>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) players: Option<Int<0, 255>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) seed: Option<Int<0, ANY>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) max_paths_per_turn: Option<Int<1, 65_535>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) long_search_budget: Option<Int<1, { sim::MAX_LONG_SEARCH_BUDGET as u64 }>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) motion: Option<MotionIn>,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MotionIn {
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) short_range: Option<Fixed>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) short_range_step: Option<Fixed>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) short_range_max: Option<Fixed>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) short_node_budget: Option<Int<1, 65_535>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) max_short_paths_per_turn: Option<Int<1, 65_535>>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) rejoin_radius: Option<Fixed>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) long_replan_every: Option<Int<1, 255>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) give_up_turns: Option<Int<1, 255>>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) core_fraction: Option<Fixed>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) influence: Option<Fixed>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) push_iterations: Option<Int<0, 255>>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) nudge_distance: Option<Fixed>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) replan_trigger: Option<Fixed>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) replan_cooldown_ms: Option<Int<0, 60_000>>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) moved_epsilon: Option<Fixed>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) turn_rate: Option<Fixed>,
}

/// `{"file": NAME}` or `{"text": TEXT}` (exactly one).
#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TextRefIn {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) file: Option<Name>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) text: Option<String>,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MapIn {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) generated: Option<GeneratedIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) movingai: Option<TextRefIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) grid: Option<TextRefIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) terrain: Option<Box<TerrainIn>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) polygons: Option<TextRefIn>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) cell_size: Option<Fixed>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) jump_tables: Option<Capped<Value, 16>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) landmarks: Option<Capped<Value, 16>>,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GeneratedIn {
    pub(super) tiles: Int<16, { MAX_GENERATED_TILES as u64 }>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) seed: Option<Int<0, ANY>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) buildings: Option<Int<0, 10_000>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) trees: Option<Int<0, 100_000>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) circular: Option<bool>,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TerrainIn {
    pub(super) tiles: [Int<1, 16_384>; 2],
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) tile_size: Option<Fixed>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) heights: Option<Capped<Dec, { super::MAX_TERRAIN_VERTICES as usize }>>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) flat: Option<Fixed>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) water_level: Option<Fixed>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) cell_size: Option<Fixed>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) border: Option<BorderIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) areas: Option<Capped<AreaIn, 4096>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) obstacles: Option<Capped<ObstacleIn, 4096>>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) object_padding: Option<Fixed>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) boundary_padding: Option<Fixed>,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BorderIn {
    pub(super) shape: Text<{ super::MAX_NAME_BYTES }>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) width: Option<Int<0, 65_535>>,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AreaIn {
    pub(super) name: Name,
    pub(super) vertices: Capped<Point, { pathing::polygon::MAX_VERTICES }>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) available: Option<bool>,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ObstacleIn {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) name: Option<Name>,
    pub(super) vertices: Capped<Point, { pathing::polygon::MAX_VERTICES }>,
}

/// An initial obstruction, or a `place_obstruction` command.
#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ObstructionIn {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) name: Option<Name>,
    #[serde(deserialize_with = "decimal", serialize_with = "super::json::write_decimal")]
    pub(super) x: Fixed,
    #[serde(deserialize_with = "decimal", serialize_with = "super::json::write_decimal")]
    pub(super) z: Fixed,
    #[serde(deserialize_with = "decimal", serialize_with = "super::json::write_decimal")]
    pub(super) w: Fixed,
    #[serde(deserialize_with = "decimal", serialize_with = "super::json::write_decimal")]
    pub(super) h: Fixed,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) degrees: Option<Fixed>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) flags: Option<Value>,
}

/// A waypoint network (the `waypoints` entries and the `set_waypoints` command).
#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NetIn {
    pub(super) class: Value,
    pub(super) range: Int<1, { sim::waypoint::MAX_NET_RANGE as u64 }>,
    pub(super) points: Capped<Point, { sim::waypoint::MAX_NET_WAYPOINTS }>,
}

/// A seat the scenario's rules' bot plays.
#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BotIn {
    pub(super) player: Int<1, 255>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) seed: Option<Int<0, { u64::MAX }>>,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct UnitIn {
    pub(super) name: Name,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) player: Option<Int<0, 255>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) class: Option<Value>,
    pub(super) at: Point,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) count: Option<Int<1, { sim::MAX_SPAWN_COUNT as u64 }>>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) radius: Option<Fixed>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) speed: Option<Fixed>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) turn_rate: Option<Fixed>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) comment: Option<Text<MAX_DESCRIPTION_BYTES>>,
}

/// A script entry: when, who, and exactly one command. The fields are in the order the
/// canonical text writes them (the command, then the comment).
#[derive(Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EntryIn {
    pub(super) turn: Int<0, { MAX_TURN as u64 }>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) player: Option<Int<0, 255>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) spawn: Option<SpawnIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) r#move: Option<MoveIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) stop: Option<UnitsIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) remove: Option<UnitsIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) place_obstruction: Option<ObstructionIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) place_building: Option<BuildingIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) set_obstruction_flags: Option<SetFlagsIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) remove_obstruction: Option<RemoveObstructionIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) set_area: Option<SetAreaIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) edit_terrain: Option<EditTerrainIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) form_group: Option<FormGroupIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) move_formation: Option<MoveFormationIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) set_layout: Option<SetLayoutIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) disband: Option<DisbandIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) set_waypoints: Option<NetIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) set_waypoint_priorities: Option<PrioritiesIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) move_by_waypoints: Option<MoveByWaypointsIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) spawn_from_building: Option<SpawnFromBuildingIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) cancel_spawns: Option<CancelSpawnsIn>,
    /// With `game`: a new group of the units the command's rules create.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) group: Option<Name>,
    /// A command of the scenario's rules, as written; the canonical text writes it compactly
    /// (`serde_json::to_string`), whatever the rest of its line does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) game: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) comment: Option<Text<MAX_DESCRIPTION_BYTES>>,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SpawnIn {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) group: Option<Name>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) class: Option<Value>,
    pub(super) at: Point,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) count: Option<Int<1, { sim::MAX_SPAWN_COUNT as u64 }>>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) radius: Option<Fixed>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) speed: Option<Fixed>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) turn_rate: Option<Fixed>,
}

/// A `spawn_from_building` command: a spawn's fields with a building instead of a point.
#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SpawnFromBuildingIn {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) group: Option<Name>,
    pub(super) building: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) class: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) count: Option<Int<1, { sim::MAX_SPAWN_COUNT as u64 }>>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) radius: Option<Fixed>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) speed: Option<Fixed>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) turn_rate: Option<Fixed>,
}

/// A `cancel_spawns` command.
#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CancelSpawnsIn {
    pub(super) building: Value,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MoveIn {
    pub(super) units: Capped<Name, MAX_GROUPS>,
    pub(super) goal: GoalIn,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) queue: Option<bool>,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct UnitsIn {
    pub(super) units: Capped<Name, MAX_GROUPS>,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BuildingIn {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) name: Option<Name>,
    pub(super) class: Value,
    #[serde(deserialize_with = "decimal", serialize_with = "super::json::write_decimal")]
    pub(super) x: Fixed,
    #[serde(deserialize_with = "decimal", serialize_with = "super::json::write_decimal")]
    pub(super) z: Fixed,
    #[serde(deserialize_with = "decimal", serialize_with = "super::json::write_decimal")]
    pub(super) w: Fixed,
    #[serde(deserialize_with = "decimal", serialize_with = "super::json::write_decimal")]
    pub(super) h: Fixed,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) degrees: Option<Fixed>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) builder: Option<Name>,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SetFlagsIn {
    pub(super) obstruction: Value,
    pub(super) flags: Value,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RemoveObstructionIn {
    pub(super) obstruction: Value,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SetAreaIn {
    pub(super) name: Name,
    pub(super) available: bool,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EditTerrainIn {
    pub(super) vx: Int<0, 16_384>,
    pub(super) vz: Int<0, 16_384>,
    pub(super) width: Int<1, 256>,
    pub(super) heights: Capped<Dec, 65_536>,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FormGroupIn {
    pub(super) name: Name,
    pub(super) units: Capped<Name, MAX_GROUPS>,
    pub(super) layout: Name,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MoveFormationIn {
    pub(super) formation: Name,
    pub(super) goal: GoalIn,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SetLayoutIn {
    pub(super) formation: Name,
    pub(super) layout: Name,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DisbandIn {
    pub(super) formation: Name,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PrioritiesIn {
    pub(super) class: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) reset: Option<bool>,
    pub(super) entries: Capped<PriorityIn, { sim::waypoint::MAX_NET_WAYPOINTS }>,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PriorityIn {
    pub(super) waypoint: Int<0, { sim::waypoint::MAX_NET_WAYPOINTS as u64 - 1 }>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) extra_cost: Option<Int<0, 65_535>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) excluded: Option<bool>,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MoveByWaypointsIn {
    pub(super) units: Capped<Name, MAX_GROUPS>,
    pub(super) goal: Point,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) queue: Option<bool>,
}

/// A goal: exactly one of `point`, `circle`, `square`, `range`.
#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GoalIn {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) point: Option<Point>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) circle: Option<CircleIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) square: Option<SquareGoalIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) range: Option<RangeIn>,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CircleIn {
    pub(super) center: Point,
    #[serde(deserialize_with = "decimal", serialize_with = "super::json::write_decimal")]
    pub(super) radius: Fixed,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SquareGoalIn {
    pub(super) center: Point,
    #[serde(deserialize_with = "decimal", serialize_with = "super::json::write_decimal")]
    pub(super) half: Fixed,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RangeIn {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) unit: Option<Name>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) obstruction: Option<Value>,
    #[serde(
        default,
        deserialize_with = "some_decimal",
        serialize_with = "super::json::write_some_decimal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) min: Option<Fixed>,
    #[serde(deserialize_with = "decimal", serialize_with = "super::json::write_decimal")]
    pub(super) max: Fixed,
    /// `melee`, `ranged` or `build` (version 5); melee when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) kind: Option<Value>,
}
