//! The canonical text: the scenario with every file inlined, every default written out and keys in a fixed order.

use super::*;

pub(super) fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

pub(super) fn pos_json(p: WorldPos) -> String {
    format!("[{}, {}]", p.x, p.z)
}

pub(super) fn square_json(s: &SquareSpec) -> String {
    format!("\"x\": {}, \"z\": {}, \"w\": {}, \"h\": {}, \"degrees\": {}", s.x, s.z, s.w, s.h, s.degrees)
}

pub(super) fn write_canonical(sc: &Scenario) -> String {
    let mut out = String::new();
    let class_name = |class: PassClass| sc.classes.get(class).map_or_else(String::new, |d| json_string(&d.name));
    let _ = writeln!(out, "{{");
    let _ = writeln!(out, "  \"format\": \"{FORMAT_NAME}\",");
    let _ = writeln!(out, "  \"version\": {SCENARIO_VERSION},");
    let _ = writeln!(out, "  \"name\": {},", json_string(&sc.name));
    if let Some(d) = &sc.description {
        let _ = writeln!(out, "  \"description\": {},", json_string(d));
    }
    let _ = writeln!(out, "  \"turns\": {},", sc.turns);
    if let Some(rules) = &sc.rules {
        let _ = writeln!(out, "  \"rules\": {},", json_string(rules.name()));
    }
    if !sc.bots.is_empty() {
        let bots: Vec<String> = sc.bots.iter().map(|(p, seed)| format!("{{\"player\": {p}, \"seed\": {seed}}}")).collect();
        let _ = writeln!(out, "  \"bots\": [{}],", bots.join(", "));
    }
    let s = &sc.settings;
    let m = &s.motion;
    let _ = writeln!(
        out,
        "  \"settings\": {{\"turn_ms\": {}, \"players\": {}, \"seed\": {}, \"max_paths_per_turn\": {}, \"long_search_budget\": {}, \"motion\": {{\"short_range\": {}, \"short_range_step\": {}, \"short_range_max\": {}, \"short_node_budget\": {}, \"max_short_paths_per_turn\": {}, \"rejoin_radius\": {}, \"long_replan_every\": {}, \"give_up_turns\": {}, \"core_fraction\": {}, \"influence\": {}, \"push_iterations\": {}, \"nudge_distance\": {}, \"replan_trigger\": {}, \"replan_cooldown_ms\": {}, \"moved_epsilon\": {}, \"turn_rate\": {}}}}},",
        s.turn_ms,
        s.players,
        s.seed,
        s.max_paths_per_turn,
        s.long_search_budget,
        m.short_range,
        m.short_range_step,
        m.short_range_max,
        m.short_node_budget,
        m.max_short_paths_per_turn,
        m.rejoin_radius,
        m.long_replan_every,
        m.give_up_turns,
        m.core_fraction,
        m.influence,
        m.push_iterations,
        m.nudge_distance,
        m.replan_trigger,
        m.replan_cooldown_ms,
        m.moved_epsilon,
        m.turn_rate,
    );
    match &sc.classes_spec {
        ClassesSpec::ZeroAd => {
            let _ = writeln!(out, "  \"classes\": \"zero_ad\",");
        }
        ClassesSpec::Text(t) => {
            let _ = writeln!(out, "  \"classes\": {{\"text\": {}}},", json_string(t));
        }
    }
    let kind = match &sc.map {
        MapKind::Generated { tiles, seed, buildings, trees, circular } => format!(
            "\"generated\": {{\"tiles\": {tiles}, \"seed\": {seed}, \"buildings\": {buildings}, \"trees\": {trees}, \"circular\": {circular}}}"
        ),
        MapKind::MovingAi { text, cell_size } => format!("\"movingai\": {{\"text\": {}}}, \"cell_size\": {cell_size}", json_string(text)),
        MapKind::Grid { text } => format!("\"grid\": {{\"text\": {}}}", json_string(text)),
        MapKind::Polygons { text } => format!("\"polygons\": {{\"text\": {}}}", json_string(text)),
        MapKind::Terrain(t) => terrain_json(t),
    };
    let names = |mask: u16| {
        (0..MAX_CLASSES).filter_map(PassClass::new).filter(|c| mask & c.bit() != 0).map(class_name).collect::<Vec<String>>().join(", ")
    };
    // Written only when there are any, so the canonical text of a scenario without them stays.
    let landmarks = if sc.landmarks == 0 { String::new() } else { format!(", \"landmarks\": [{}]", names(sc.landmarks)) };
    let _ = writeln!(out, "  \"map\": {{{kind}, \"jump_tables\": [{}]{landmarks}}},", names(sc.jump_tables));
    let obstructions: Vec<String> = sc
        .obstructions
        .iter()
        .map(|o| {
            let name = o.name.as_ref().map_or_else(String::new, |n| format!("\"name\": {}, ", json_string(n)));
            format!("{{{name}{}, \"flags\": \"{}\"}}", square_json(&o.square), flags_name(o.flags))
        })
        .collect();
    push_list(&mut out, "obstructions", &obstructions, ",");
    let nets: Vec<String> = sc.waypoints.iter().map(|net| net_json(net, &class_name(net.class))).collect();
    push_list(&mut out, "waypoints", &nets, ",");
    let units: Vec<String> = sc.entries[..sc.n_unit_entries]
        .iter()
        .filter_map(|e| {
            let Action::Spawn(s) = &e.action else { return None };
            let name = s.group.map_or_else(String::new, |g| json_string(&sc.group_names[g]));
            let comment = e.comment.as_ref().map_or_else(String::new, |c| format!(", \"comment\": {}", json_string(c)));
            Some(format!(
                "{{\"name\": {name}, \"player\": {}, \"class\": {}, \"at\": {}, \"count\": {}, \"radius\": {}, \"speed\": {}{}{comment}}}",
                e.player,
                class_name(s.class),
                pos_json(s.at),
                s.count,
                s.radius,
                s.speed,
                turn_rate_json(s.turn_rate)
            ))
        })
        .collect();
    push_list(&mut out, "units", &units, ",");
    let script: Vec<String> = sc.entries[sc.n_unit_entries..]
        .iter()
        .map(|e| {
            let comment = e.comment.as_ref().map_or_else(String::new, |c| format!(", \"comment\": {}", json_string(c)));
            format!("{{\"turn\": {}, \"player\": {}, {}{comment}}}", e.turn, e.player, action_json(sc, &e.action))
        })
        .collect();
    push_list(&mut out, "script", &script, "");
    let _ = writeln!(out, "}}");
    out
}

/// A top-level list, one item per line (`[]` when empty), then `after` (a comma or nothing).
pub(super) fn push_list(out: &mut String, key: &str, items: &[String], after: &str) {
    if items.is_empty() {
        let _ = writeln!(out, "  \"{key}\": []{after}");
        return;
    }
    let _ = writeln!(out, "  \"{key}\": [");
    for (k, item) in items.iter().enumerate() {
        let _ = writeln!(out, "    {item}{}", if k + 1 < items.len() { "," } else { "" });
    }
    let _ = writeln!(out, "  ]{after}");
}

pub(super) fn terrain_json(t: &TerrainSpec) -> String {
    let heights = match &t.heights {
        Heights::Flat(h) => format!("\"flat\": {h}"),
        Heights::List(list) => format!("\"heights\": [{}]", list.iter().map(|h| h.to_string()).collect::<Vec<_>>().join(", ")),
    };
    let border = match t.border {
        MapBorder::None => "{\"shape\": \"none\"}".to_string(),
        MapBorder::Square { width } => format!("{{\"shape\": \"square\", \"width\": {width}}}"),
        MapBorder::Circle { width } => format!("{{\"shape\": \"circle\", \"width\": {width}}}"),
    };
    let vertices = |v: &[WorldPos]| v.iter().map(|&p| pos_json(p)).collect::<Vec<_>>().join(", ");
    let areas = t
        .areas
        .iter()
        .map(|a| {
            format!("{{\"name\": {}, \"vertices\": [{}], \"available\": {}}}", json_string(&a.name), vertices(&a.vertices), a.available)
        })
        .collect::<Vec<_>>()
        .join(", ");
    let obstacles = t
        .obstacles
        .iter()
        .map(|o| {
            let name = o.name.as_ref().map_or_else(String::new, |n| format!("\"name\": {}, ", json_string(n)));
            format!("{{{name}\"vertices\": [{}]}}", vertices(&o.vertices))
        })
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "\"terrain\": {{\"tiles\": [{}, {}], \"tile_size\": {}, {heights}, \"water_level\": {}, \"cell_size\": {}, \"border\": {border}, \"areas\": [{areas}], \"obstacles\": [{obstacles}], \"object_padding\": {}, \"boundary_padding\": {}}}",
        t.tiles_w, t.tiles_h, t.tile_size, t.water_level, t.cell_size, t.object_padding, t.boundary_padding
    )
}

/// A waypoint network as scenario JSON.
pub(super) fn net_json(net: &WaypointNet, class: &str) -> String {
    let points = net.points.iter().map(|&p| pos_json(p)).collect::<Vec<_>>().join(", ");
    format!("{{\"class\": {class}, \"range\": {}, \"points\": [{points}]}}", net.range)
}

/// A goal as scenario JSON.
pub(super) fn goal_json(sc: &Scenario, goal: &Goal) -> String {
    let obs = |r: ObsRef| match r {
        ObsRef::Named(k) => json_string(&sc.obstruction_names[k]),
        ObsRef::Id(id) => id.to_string(),
    };
    match goal {
        Goal::Point(p) => format!("{{\"point\": {}}}", pos_json(*p)),
        Goal::Circle { center, radius } => format!("{{\"circle\": {{\"center\": {}, \"radius\": {radius}}}}}", pos_json(*center)),
        Goal::Square { center, half } => format!("{{\"square\": {{\"center\": {}, \"half\": {half}}}}}", pos_json(*center)),
        Goal::RangeUnit { group, min, max, kind } => format!(
            "{{\"range\": {{\"unit\": {}, \"min\": {min}, \"max\": {max}{}}}}}",
            json_string(&sc.group_names[*group]),
            kind_json(*kind)
        ),
        Goal::RangeObstruction { target, min, max, kind } => {
            format!("{{\"range\": {{\"obstruction\": {}, \"min\": {min}, \"max\": {max}{}}}}}", obs(*target), kind_json(*kind))
        }
    }
}

/// A range goal's `kind` key, written only when it is not the default (melee), so that the
/// canonical text of a file without kinds keeps its range goals as they were.
fn kind_json(kind: RangeKind) -> String {
    if kind == RangeKind::Melee { String::new() } else { format!(", \"kind\": \"{}\"", kind.name()) }
}

pub(super) fn action_json(sc: &Scenario, action: &Action) -> String {
    let class_name = |class: PassClass| sc.classes.get(class).map_or_else(String::new, |d| json_string(&d.name));
    let groups = |units: &[usize]| units.iter().map(|&g| json_string(&sc.group_names[g])).collect::<Vec<_>>().join(", ");
    let obs = |r: ObsRef| match r {
        ObsRef::Named(k) => json_string(&sc.obstruction_names[k]),
        ObsRef::Id(id) => id.to_string(),
    };
    let named = |name: Option<usize>| name.map_or_else(String::new, |k| format!("\"name\": {}, ", json_string(&sc.obstruction_names[k])));
    match action {
        Action::Spawn(s) => {
            let group = s.group.map_or_else(String::new, |g| format!("\"group\": {}, ", json_string(&sc.group_names[g])));
            format!(
                "\"spawn\": {{{group}\"class\": {}, \"at\": {}, \"count\": {}, \"radius\": {}, \"speed\": {}{}}}",
                class_name(s.class),
                pos_json(s.at),
                s.count,
                s.radius,
                s.speed,
                turn_rate_json(s.turn_rate)
            )
        }
        Action::Move { units, goal, queue } => {
            let goal = goal_json(sc, goal);
            format!("\"move\": {{\"units\": [{}], \"goal\": {goal}, \"queue\": {queue}}}", groups(units))
        }
        Action::FormGroup { name, units, layout } => format!(
            "\"form_group\": {{\"name\": {}, \"units\": [{}], \"layout\": \"{}\"}}",
            json_string(&sc.formation_names[*name]),
            groups(units),
            layout_name(*layout)
        ),
        Action::MoveFormation { formation, goal } => format!(
            "\"move_formation\": {{\"formation\": {}, \"goal\": {}}}",
            json_string(&sc.formation_names[*formation]),
            goal_json(sc, goal)
        ),
        Action::SetLayout { formation, layout } => format!(
            "\"set_layout\": {{\"formation\": {}, \"layout\": \"{}\"}}",
            json_string(&sc.formation_names[*formation]),
            layout_name(*layout)
        ),
        Action::Disband { formation } => format!("\"disband\": {{\"formation\": {}}}", json_string(&sc.formation_names[*formation])),
        Action::SetWaypoints(net) => format!("\"set_waypoints\": {}", net_json(net, &class_name(net.class))),
        Action::SetWaypointPriorities { class, reset, entries } => {
            let entries: Vec<String> = entries
                .iter()
                .map(|e| match e.priority {
                    WaypointPriority::Open { extra_cost } => format!("{{\"waypoint\": {}, \"extra_cost\": {extra_cost}}}", e.waypoint),
                    WaypointPriority::Excluded => format!("{{\"waypoint\": {}, \"excluded\": true}}", e.waypoint),
                })
                .collect();
            format!(
                "\"set_waypoint_priorities\": {{\"class\": {}, \"reset\": {reset}, \"entries\": [{}]}}",
                class_name(*class),
                entries.join(", ")
            )
        }
        Action::MoveByWaypoints { units, goal, queue } => {
            format!("\"move_by_waypoints\": {{\"units\": [{}], \"goal\": {}, \"queue\": {queue}}}", groups(units), pos_json(*goal))
        }
        Action::SpawnFromBuilding { spawn: s, building } => {
            let group = s.group.map_or_else(String::new, |g| format!("\"group\": {}, ", json_string(&sc.group_names[g])));
            format!(
                "\"spawn_from_building\": {{{group}\"building\": {}, \"class\": {}, \"count\": {}, \"radius\": {}, \"speed\": {}{}}}",
                obs(*building),
                class_name(s.class),
                s.count,
                s.radius,
                s.speed,
                turn_rate_json(s.turn_rate)
            )
        }
        Action::CancelSpawns { building } => format!("\"cancel_spawns\": {{\"building\": {}}}", obs(*building)),
        Action::Game { value, group } => {
            let group = group.map_or_else(String::new, |g| format!("\"group\": {}, ", json_string(&sc.group_names[g])));
            format!("{group}\"game\": {}", serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned()))
        }
        Action::Stop { units } => format!("\"stop\": {{\"units\": [{}]}}", groups(units)),
        Action::Remove { units } => format!("\"remove\": {{\"units\": [{}]}}", groups(units)),
        Action::PlaceObstruction { name, square, flags } => {
            format!("\"place_obstruction\": {{{}{}, \"flags\": \"{}\"}}", named(*name), square_json(square), flags_name(*flags))
        }
        Action::PlaceBuilding { name, class, square, builder } => {
            let builder = builder.map_or_else(String::new, |g| format!(", \"builder\": {}", json_string(&sc.group_names[g])));
            format!("\"place_building\": {{{}\"class\": {}, {}{builder}}}", named(*name), class_name(*class), square_json(square))
        }
        Action::SetObstructionFlags { target, flags } => {
            format!("\"set_obstruction_flags\": {{\"obstruction\": {}, \"flags\": \"{}\"}}", obs(*target), flags_name(*flags))
        }
        Action::RemoveObstruction { target } => format!("\"remove_obstruction\": {{\"obstruction\": {}}}", obs(*target)),
        Action::SetArea { name, available } => format!("\"set_area\": {{\"name\": {}, \"available\": {available}}}", json_string(name)),
        Action::EditTerrain { vx, vz, width, heights } => format!(
            "\"edit_terrain\": {{\"vx\": {vx}, \"vz\": {vz}, \"width\": {width}, \"heights\": [{}]}}",
            heights.iter().map(|h| h.to_string()).collect::<Vec<_>>().join(", ")
        ),
    }
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

/// A spawn's own turn rate as `, "turn_rate": R`; nothing for the game's default.
fn turn_rate_json(rate: Option<pathing::Fixed>) -> String {
    rate.map_or_else(String::new, |r| format!(", \"turn_rate\": {r}"))
}
