//! The canonical text: the scenario with every file inlined, every default written out and keys in
//! a fixed order, written by filling the file model the reader parses (`file`) from the parsed
//! scenario and serializing it, so that each key has one definition for reading and writing.
//!
//! The layout is fixed here: one top-level key per line, one obstruction, waypoint network, unit
//! group or script entry per line, and inside a line `{"key": value, "key": value}` with a space
//! after every colon and comma ([`LineFormatter`]), except a game command's own JSON, which is
//! written compactly, as `serde_json::to_string` writes it.

use serde_json::Value;

use super::file::{
    AreaIn, BorderIn, BotIn, BuildingIn, CancelSpawnsIn, CircleIn, DisbandIn, EditTerrainIn, EntryIn, FormGroupIn, GeneratedIn, GoalIn,
    MapIn, MotionIn, MoveByWaypointsIn, MoveFormationIn, MoveIn, NetIn, ObstacleIn, ObstructionIn, PrioritiesIn, PriorityIn, RangeIn,
    RemoveObstructionIn, SetAreaIn, SetFlagsIn, SetLayoutIn, SettingsIn, SpawnFromBuildingIn, SpawnIn, SquareGoalIn, TerrainIn, TextRefIn,
    UnitIn, UnitsIn,
};
use super::*;

/// A string as JSON (the tests write scenario text with it).
#[cfg(test)]
pub(super) fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

pub(super) fn write_canonical(sc: &Scenario) -> String {
    let w = Writer { sc };
    let mut out = String::new();
    let _ = writeln!(out, "{{");
    let _ = writeln!(out, "  \"format\": \"{FORMAT_NAME}\",");
    let _ = writeln!(out, "  \"version\": {SCENARIO_VERSION},");
    push_key(&mut out, "name", &sc.name);
    if let Some(d) = &sc.description {
        push_key(&mut out, "description", d);
    }
    push_key(&mut out, "turns", &sc.turns);
    if let Some(rules) = &sc.rules {
        push_key(&mut out, "rules", rules.name());
    }
    if !sc.bots.is_empty() {
        let bots: Vec<BotIn> = sc.bots.iter().map(|&(p, seed)| BotIn { player: Int(u64::from(p.0)), seed: Some(Int(seed)) }).collect();
        push_key(&mut out, "bots", &bots);
    }
    push_key(&mut out, "settings", &settings_in(&sc.settings));
    let classes = match &sc.classes_spec {
        ClassesSpec::ZeroAd => Value::String("zero_ad".to_owned()),
        ClassesSpec::Text(t) => serde_json::json!({"text": t}),
    };
    push_key(&mut out, "classes", &classes);
    push_key(&mut out, "map", &w.map_in());
    let obstructions: Vec<ObstructionIn> =
        sc.obstructions.iter().map(|o| obstruction_in(o.name.as_deref().map(name), &o.square, o.flags)).collect();
    push_list(&mut out, "obstructions", &obstructions, ",");
    let nets: Vec<NetIn> = sc.waypoints.iter().map(|net| w.net_in(net)).collect();
    push_list(&mut out, "waypoints", &nets, ",");
    let units: Vec<UnitIn> = sc.entries[..sc.n_unit_entries].iter().filter_map(|e| w.unit_in(e)).collect();
    push_list(&mut out, "units", &units, ",");
    let script: Vec<EntryIn> = sc.entries[sc.n_unit_entries..].iter().map(|e| w.entry_in(e)).collect();
    push_list(&mut out, "script", &script, "");
    let _ = writeln!(out, "}}");
    out
}

/// `value` on one line, as the canonical text writes it.
fn line<T: serde::Serialize + ?Sized>(value: &T) -> String {
    let mut bytes = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut bytes, LineFormatter::default());
    // The file model is plain data with string keys: serializing it cannot fail.
    let _ = value.serialize(&mut ser);
    String::from_utf8(bytes).unwrap_or_default()
}

/// A top-level key and its value on one line, with a comma (none is the last).
fn push_key<T: serde::Serialize + ?Sized>(out: &mut String, key: &str, value: &T) {
    let _ = writeln!(out, "  \"{key}\": {},", line(value));
}

/// A top-level list, one item per line (`[]` when empty), then `after` (a comma or nothing).
fn push_list<T: serde::Serialize>(out: &mut String, key: &str, items: &[T], after: &str) {
    if items.is_empty() {
        let _ = writeln!(out, "  \"{key}\": []{after}");
        return;
    }
    let _ = writeln!(out, "  \"{key}\": [");
    for (k, item) in items.iter().enumerate() {
        let _ = writeln!(out, "    {}{}", line(item), if k + 1 < items.len() { "," } else { "" });
    }
    let _ = writeln!(out, "  ]{after}");
}

/// Writes a value on one line with `": "` and `", "` between its parts, except the value of a
/// top-level `game` key (a game command as written), which is compact as `serde_json`'s own
/// compact writer makes it, so that the canonical text of a game command is the one it always was.
#[derive(Default)]
struct LineFormatter {
    /// Nesting depth of objects and arrays.
    depth: usize,
    /// The key being written, while it is.
    key: Option<String>,
    /// The value about to be written is a top-level `game` key's.
    game_next: bool,
    /// The depth of the object or array of a game command's JSON, while it is written.
    compact_at: Option<usize>,
}

impl LineFormatter {
    fn compact(&self) -> bool {
        self.compact_at.is_some()
    }

    fn enter(&mut self) {
        self.depth += 1;
        if std::mem::take(&mut self.game_next) {
            self.compact_at = Some(self.depth);
        }
    }

    fn leave(&mut self) {
        if self.compact_at == Some(self.depth) {
            self.compact_at = None;
        }
        self.depth -= 1;
    }

    fn separator(&self) -> &'static [u8] {
        if self.compact() { b"," } else { b", " }
    }
}

impl serde_json::ser::Formatter for LineFormatter {
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.enter();
        w.write_all(b"[")
    }

    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.leave();
        w.write_all(b"]")
    }

    fn begin_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        if first { Ok(()) } else { w.write_all(self.separator()) }
    }

    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.enter();
        w.write_all(b"{")
    }

    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.leave();
        w.write_all(b"}")
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        self.key = Some(String::new());
        if first { Ok(()) } else { w.write_all(self.separator()) }
    }

    fn write_string_fragment<W: ?Sized + std::io::Write>(&mut self, w: &mut W, fragment: &str) -> std::io::Result<()> {
        if let Some(key) = &mut self.key {
            key.push_str(fragment);
        }
        w.write_all(fragment.as_bytes())
    }

    fn end_object_key<W: ?Sized + std::io::Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        let key = self.key.take();
        self.game_next = self.depth == 1 && !self.compact() && key.as_deref() == Some("game");
        Ok(())
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(if self.compact() { b":" } else { b": " })
    }

    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        // A game command that is not an object or array leaves nothing to make compact.
        self.game_next = false;
        Ok(())
    }
}

fn name(s: &str) -> Name {
    Name(s.to_owned())
}

/// The name of obstruction flags, as `flags` keys take them.
pub(super) fn flags_name(flags: u8) -> &'static str {
    match flags {
        0 => "none",
        ObstructionFlags::BLOCK_PATHFINDING => "pathfinding",
        ObstructionFlags::BLOCK_FOUNDATION => "foundation",
        _ => "static",
    }
}

fn settings_in(s: &Settings) -> SettingsIn {
    let m = &s.motion;
    SettingsIn {
        turn_ms: Some(Int(u64::from(s.turn_ms))),
        players: Some(Int(u64::from(s.players))),
        seed: Some(Int(s.seed)),
        max_paths_per_turn: Some(Int(u64::from(s.max_paths_per_turn))),
        long_search_budget: Some(Int(u64::from(s.long_search_budget))),
        motion: Some(MotionIn {
            short_range: Some(m.short_range),
            short_range_step: Some(m.short_range_step),
            short_range_max: Some(m.short_range_max),
            short_node_budget: Some(Int(u64::from(m.short_node_budget))),
            max_short_paths_per_turn: Some(Int(u64::from(m.max_short_paths_per_turn))),
            rejoin_radius: Some(m.rejoin_radius),
            long_replan_every: Some(Int(u64::from(m.long_replan_every))),
            give_up_turns: Some(Int(u64::from(m.give_up_turns))),
            core_fraction: Some(m.core_fraction),
            influence: Some(m.influence),
            push_iterations: Some(Int(u64::from(m.push_iterations))),
            nudge_distance: Some(m.nudge_distance),
            replan_trigger: Some(m.replan_trigger),
            replan_cooldown_ms: Some(Int(u64::from(m.replan_cooldown_ms))),
            moved_epsilon: Some(m.moved_epsilon),
            turn_rate: Some(m.turn_rate),
        }),
    }
}

fn text_in(text: &str) -> TextRefIn {
    TextRefIn { file: None, text: Some(text.to_owned()) }
}

fn terrain_in(t: &TerrainSpec) -> TerrainIn {
    let (heights, flat) = match &t.heights {
        Heights::Flat(h) => (None, Some(*h)),
        Heights::List(list) => (Some(Capped(list.iter().map(|&h| Dec(h)).collect())), None),
    };
    let border = match t.border {
        MapBorder::None => BorderIn { shape: Text("none".to_owned()), width: None },
        MapBorder::Square { width } => BorderIn { shape: Text("square".to_owned()), width: Some(Int(u64::from(width))) },
        MapBorder::Circle { width } => BorderIn { shape: Text("circle".to_owned()), width: Some(Int(u64::from(width))) },
    };
    let vertices = |v: &[WorldPos]| Capped(v.iter().map(|&p| Point(p)).collect());
    TerrainIn {
        tiles: [Int(u64::from(t.tiles_w)), Int(u64::from(t.tiles_h))],
        tile_size: Some(t.tile_size),
        heights,
        flat,
        water_level: Some(t.water_level),
        cell_size: Some(t.cell_size),
        border: Some(border),
        areas: Some(Capped(
            t.areas.iter().map(|a| AreaIn { name: name(&a.name), vertices: vertices(&a.vertices), available: Some(a.available) }).collect(),
        )),
        obstacles: Some(Capped(
            t.obstacles.iter().map(|o| ObstacleIn { name: o.name.as_deref().map(name), vertices: vertices(&o.vertices) }).collect(),
        )),
        object_padding: Some(t.object_padding),
        boundary_padding: Some(t.boundary_padding),
    }
}

/// An obstruction as an initial obstruction or a `place_obstruction` command writes it.
fn obstruction_in(name: Option<Name>, s: &SquareSpec, flags: u8) -> ObstructionIn {
    ObstructionIn {
        name,
        x: s.x,
        z: s.z,
        w: s.w,
        h: s.h,
        degrees: Some(s.degrees),
        flags: Some(Value::String(flags_name(flags).to_owned())),
    }
}

/// The scenario's names, for the file model of its parts.
struct Writer<'a> {
    sc: &'a Scenario,
}

impl Writer<'_> {
    /// A class by name (the canonical text writes names, whichever form the file used).
    fn class(&self, class: PassClass) -> Value {
        self.sc.classes.get(class).map_or(Value::Null, |d| Value::String(d.name.clone()))
    }

    fn classes(&self, mask: u16) -> Capped<Value, 16> {
        Capped((0..MAX_CLASSES).filter_map(PassClass::new).filter(|c| mask & c.bit() != 0).map(|c| self.class(c)).collect())
    }

    fn group(&self, group: usize) -> Name {
        name(&self.sc.group_names[group])
    }

    fn groups(&self, units: &[usize]) -> Capped<Name, MAX_GROUPS> {
        Capped(units.iter().map(|&g| self.group(g)).collect())
    }

    fn formation(&self, formation: usize) -> Name {
        name(&self.sc.formation_names[formation])
    }

    fn obstruction_name(&self, k: usize) -> Name {
        name(&self.sc.obstruction_names[k])
    }

    /// An obstruction as the script named it: by name or by id.
    fn obstruction(&self, r: ObsRef) -> Value {
        match r {
            ObsRef::Named(k) => Value::String(self.sc.obstruction_names[k].clone()),
            ObsRef::Id(id) => Value::from(id),
        }
    }

    fn map_in(&self) -> MapIn {
        let sc = self.sc;
        let mut map = MapIn {
            generated: None,
            movingai: None,
            grid: None,
            terrain: None,
            polygons: None,
            cell_size: None,
            jump_tables: Some(self.classes(sc.jump_tables)),
            // Written only when there are any, so the canonical text of a scenario without them stays.
            landmarks: (sc.landmarks != 0).then(|| self.classes(sc.landmarks)),
        };
        match &sc.map {
            &MapKind::Generated { tiles, seed, buildings, trees, circular } => {
                map.generated = Some(GeneratedIn {
                    tiles: Int(u64::from(tiles)),
                    seed: Some(Int(seed)),
                    buildings: Some(Int(u64::from(buildings))),
                    trees: Some(Int(u64::from(trees))),
                    circular: Some(circular),
                });
            }
            MapKind::MovingAi { text, cell_size } => (map.movingai, map.cell_size) = (Some(text_in(text)), Some(*cell_size)),
            MapKind::Grid { text } => map.grid = Some(text_in(text)),
            MapKind::Polygons { text } => map.polygons = Some(text_in(text)),
            MapKind::Terrain(t) => map.terrain = Some(Box::new(terrain_in(t))),
        }
        map
    }

    fn net_in(&self, net: &WaypointNet) -> NetIn {
        NetIn {
            class: self.class(net.class),
            range: Int(u64::from(net.range)),
            points: Capped(net.points.iter().map(|&p| Point(p)).collect()),
        }
    }

    fn goal_in(&self, goal: &Goal) -> GoalIn {
        let mut out = GoalIn { point: None, circle: None, square: None, range: None };
        // A range goal's `kind` is written only when it is not the default (melee), so that the
        // canonical text of a file without kinds keeps its range goals as they were.
        let kind = |kind: RangeKind| (kind != RangeKind::Melee).then(|| Value::String(kind.name().to_owned()));
        match *goal {
            Goal::Point(p) => out.point = Some(Point(p)),
            Goal::Circle { center, radius } => out.circle = Some(CircleIn { center: Point(center), radius }),
            Goal::Square { center, half } => out.square = Some(SquareGoalIn { center: Point(center), half }),
            Goal::RangeUnit { group, min, max, kind: k } => {
                out.range = Some(RangeIn { unit: Some(self.group(group)), obstruction: None, min: Some(min), max, kind: kind(k) });
            }
            Goal::RangeObstruction { target, min, max, kind: k } => {
                out.range = Some(RangeIn { unit: None, obstruction: Some(self.obstruction(target)), min: Some(min), max, kind: kind(k) });
            }
        }
        out
    }

    /// A `units` entry: a spawn with its group's name.
    fn unit_in(&self, e: &Entry) -> Option<UnitIn> {
        let Action::Spawn(s) = &e.action else { return None };
        Some(UnitIn {
            name: s.group.map_or_else(|| Name(String::new()), |g| self.group(g)),
            player: Some(Int(u64::from(e.player.0))),
            class: Some(self.class(s.class)),
            at: Point(s.at),
            count: Some(Int(u64::from(s.count))),
            radius: Some(s.radius),
            speed: Some(s.speed),
            turn_rate: s.turn_rate,
            comment: e.comment.clone().map(Text),
        })
    }

    /// A script entry: its turn, player, command and comment.
    fn entry_in(&self, e: &Entry) -> EntryIn {
        let mut out = EntryIn {
            turn: Int(u64::from(e.turn)),
            player: Some(Int(u64::from(e.player.0))),
            comment: e.comment.clone().map(Text),
            ..EntryIn::default()
        };
        let named = |k: Option<usize>| k.map(|k| self.obstruction_name(k));
        let flags = |flags: u8| Value::String(flags_name(flags).to_owned());
        match e.action.clone() {
            Action::Spawn(s) => {
                out.spawn = Some(SpawnIn {
                    group: s.group.map(|g| self.group(g)),
                    class: Some(self.class(s.class)),
                    at: Point(s.at),
                    count: Some(Int(u64::from(s.count))),
                    radius: Some(s.radius),
                    speed: Some(s.speed),
                    turn_rate: s.turn_rate,
                });
            }
            Action::Move { units, goal, queue } => {
                out.r#move = Some(MoveIn { units: self.groups(&units), goal: self.goal_in(&goal), queue: Some(queue) });
            }
            Action::Stop { units } => out.stop = Some(UnitsIn { units: self.groups(&units) }),
            Action::Remove { units } => out.remove = Some(UnitsIn { units: self.groups(&units) }),
            Action::PlaceObstruction { name, square, flags } => out.place_obstruction = Some(obstruction_in(named(name), &square, flags)),
            Action::PlaceBuilding { name, class, square: s, builder } => {
                out.place_building = Some(BuildingIn {
                    name: named(name),
                    class: self.class(class),
                    x: s.x,
                    z: s.z,
                    w: s.w,
                    h: s.h,
                    degrees: Some(s.degrees),
                    builder: builder.map(|g| self.group(g)),
                });
            }
            Action::SetObstructionFlags { target, flags: f } => {
                out.set_obstruction_flags = Some(SetFlagsIn { obstruction: self.obstruction(target), flags: flags(f) });
            }
            Action::RemoveObstruction { target } => {
                out.remove_obstruction = Some(RemoveObstructionIn { obstruction: self.obstruction(target) })
            }
            Action::SetArea { name: area, available } => out.set_area = Some(SetAreaIn { name: Name(area), available }),
            Action::EditTerrain { vx, vz, width, heights } => {
                out.edit_terrain = Some(EditTerrainIn {
                    vx: Int(u64::from(vx)),
                    vz: Int(u64::from(vz)),
                    width: Int(u64::from(width)),
                    heights: Capped(heights.into_iter().map(Dec).collect()),
                });
            }
            Action::FormGroup { name: formation, units, layout } => {
                out.form_group =
                    Some(FormGroupIn { name: self.formation(formation), units: self.groups(&units), layout: name(layout_name(layout)) });
            }
            Action::MoveFormation { formation, goal } => {
                out.move_formation = Some(MoveFormationIn { formation: self.formation(formation), goal: self.goal_in(&goal) });
            }
            Action::SetLayout { formation, layout } => {
                out.set_layout = Some(SetLayoutIn { formation: self.formation(formation), layout: name(layout_name(layout)) });
            }
            Action::Disband { formation } => out.disband = Some(DisbandIn { formation: self.formation(formation) }),
            Action::SetWaypoints(net) => out.set_waypoints = Some(self.net_in(&net)),
            Action::SetWaypointPriorities { class, reset, entries } => {
                let entries = entries
                    .iter()
                    .map(|e| {
                        let (extra_cost, excluded) = match e.priority {
                            WaypointPriority::Open { extra_cost } => (Some(Int(u64::from(extra_cost))), None),
                            WaypointPriority::Excluded => (None, Some(true)),
                        };
                        PriorityIn { waypoint: Int(u64::from(e.waypoint)), extra_cost, excluded }
                    })
                    .collect();
                out.set_waypoint_priorities = Some(PrioritiesIn { class: self.class(class), reset: Some(reset), entries: Capped(entries) });
            }
            Action::MoveByWaypoints { units, goal, queue } => {
                out.move_by_waypoints = Some(MoveByWaypointsIn { units: self.groups(&units), goal: Point(goal), queue: Some(queue) });
            }
            Action::SpawnFromBuilding { spawn: s, building } => {
                out.spawn_from_building = Some(SpawnFromBuildingIn {
                    group: s.group.map(|g| self.group(g)),
                    building: self.obstruction(building),
                    class: Some(self.class(s.class)),
                    count: Some(Int(u64::from(s.count))),
                    radius: Some(s.radius),
                    speed: Some(s.speed),
                    turn_rate: s.turn_rate,
                });
            }
            Action::CancelSpawns { building } => out.cancel_spawns = Some(CancelSpawnsIn { building: self.obstruction(building) }),
            Action::Game { value, group } => (out.group, out.game) = (group.map(|g| self.group(g)), Some(value)),
        }
        out
    }
}
