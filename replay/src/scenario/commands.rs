//! The command script: group, formation and obstruction names, goals, and one entry per command.

use serde_json::Value;

use super::file::{EntryIn, GoalIn};
use super::*;

/// A new group, spawned on `turn`.
pub(super) fn define_group(cx: &Cx, name: &Name, path: &str, turn: u32, names: &mut Names) -> Res<usize> {
    let name = name.0.as_str();
    if names.groups.contains_key(name) {
        return Err(cx.err(path, format!("expected a new group name, found {name:?} a second time")));
    }
    if names.group_names.len() >= MAX_GROUPS {
        return Err(cx.err(path, format!("expected at most {MAX_GROUPS} groups")));
    }
    let index = names.group_names.len();
    names.groups.insert(name.to_string(), index);
    names.group_names.push(name.to_string());
    names.group_spawn.push((turn, 0));
    Ok(index)
}

/// A group name usable on `turn` (spawned on an earlier turn).
fn group_ref(cx: &Cx, name: &Name, path: &str, turn: u32, names: &Names) -> Res<usize> {
    let name = name.0.as_str();
    let Some(&group) = names.groups.get(name) else {
        return Err(cx.err(path, format!("unknown group {name:?} (groups are named by `units` entries and spawns with a `group`)")));
    };
    let spawned = names.group_spawn[group].0;
    if spawned >= turn {
        return Err(cx.err(
            path,
            format!("group {name:?} is spawned on turn {spawned}; its units can be named from turn {} on", spawned.saturating_add(1)),
        ));
    }
    Ok(group)
}

/// A new formation name, usable from the turn after `turn`.
fn define_formation(cx: &Cx, name: &Name, path: &str, turn: u32, names: &mut Names) -> Res<usize> {
    let name = name.0.as_str();
    if names.formations.contains_key(name) {
        return Err(cx.err(path, format!("expected a new formation name, found {name:?} a second time")));
    }
    if names.formation_names.len() >= MAX_GROUPS {
        return Err(cx.err(path, format!("expected at most {MAX_GROUPS} formations")));
    }
    let index = names.formation_names.len();
    names.formations.insert(name.to_string(), index);
    names.formation_names.push(name.to_string());
    names.formation_ready.push(turn.saturating_add(1));
    Ok(index)
}

/// A formation named by an earlier `form_group`.
fn formation_ref(cx: &Cx, name: &Name, path: &str, turn: u32, names: &Names) -> Res<usize> {
    let name = name.0.as_str();
    let Some(&k) = names.formations.get(name) else {
        return Err(cx.err(path, format!("unknown formation {name:?} (formations are named by `form_group`)")));
    };
    let ready = names.formation_ready[k];
    if ready > turn {
        return Err(cx.err(path, format!("formation {name:?} is formed on turn {}; it can be named from turn {ready} on", ready - 1)));
    }
    Ok(k)
}

/// A layout by name.
fn parse_layout(cx: &Cx, name: &Name, path: &str) -> Res<Layout> {
    let name = name.0.as_str();
    LAYOUTS.iter().find(|(n, _)| *n == name).map(|(_, l)| *l).ok_or_else(|| {
        let list = LAYOUTS.iter().map(|(n, _)| format!("{n:?}")).collect::<Vec<_>>().join(", ");
        cx.err(path, format!("expected a layout, one of {list}, found {name:?}"))
    })
}

pub(super) fn layout_name(layout: Layout) -> &'static str {
    LAYOUTS.iter().find(|(_, l)| *l == layout).map_or("box", |(n, _)| n)
}

/// `units` (at `path`): a non-empty list of distinct group names, at most
/// [`MAX_UNITS_PER_COMMAND`] units.
fn parse_units(cx: &Cx, items: &[Name], path: &str, turn: u32, names: &Names) -> Res<Vec<usize>> {
    if items.is_empty() {
        return Err(cx.err(path, "expected at least one group name"));
    }
    let mut groups = Vec::new();
    let mut total = 0u32;
    for (k, item) in items.iter().enumerate() {
        let ip = format!("{path}[{k}]");
        let group = group_ref(cx, item, &ip, turn, names)?;
        if groups.contains(&group) {
            return Err(cx.err(&ip, format!("group {:?} named twice", names.group_names[group])));
        }
        total = total.saturating_add(names.group_spawn[group].1);
        groups.push(group);
    }
    if total > MAX_UNITS_PER_COMMAND {
        return Err(cx.err(path, format!("expected at most {MAX_UNITS_PER_COMMAND} units in one command, found {total}")));
    }
    Ok(groups)
}

/// An obstruction by name (usable on `turn`) or id.
fn obstruction_ref(cx: &Cx, value: &Value, path: &str, turn: u32, names: &Names) -> Res<ObsRef> {
    if let Value::Number(_) = value {
        return Ok(ObsRef::Id(cx.uint(value, path, u64::from(u32::MAX - 1))? as u32));
    }
    let name = cx.name(value, path)?;
    let Some(&index) = names.obstructions.get(name) else {
        return Err(
            cx.err(path, format!("unknown obstruction {name:?} (name it in `obstructions`, `place_obstruction` or `place_building`)"))
        );
    };
    let ready = names.obstruction_ready[index];
    if ready > turn {
        return Err(cx.err(path, format!("obstruction {name:?} is placed on turn {}; it can be named from turn {ready} on", ready - 1)));
    }
    Ok(ObsRef::Named(index))
}

fn parse_goal(cx: &Cx, goal: &GoalIn, path: &str, turn: u32, names: &Names) -> Res<Goal> {
    let kinds = [
        ("point", goal.point.is_some()),
        ("circle", goal.circle.is_some()),
        ("square", goal.square.is_some()),
        ("range", goal.range.is_some()),
    ];
    let kind = one_of(cx, path, &kinds)?;
    let p = join(path, kind);
    let check_size = |size: &str, value: Fixed| {
        if value < Fixed::ZERO {
            return Err(cx.err(&join(&p, size), format!("expected a {size} ≥ 0, found {value}")));
        }
        Ok(value)
    };
    if let Some(point) = goal.point {
        return Ok(Goal::Point(point.0));
    }
    if let Some(c) = &goal.circle {
        return Ok(Goal::Circle { center: c.center.0, radius: check_size("radius", c.radius)? });
    }
    if let Some(s) = &goal.square {
        return Ok(Goal::Square { center: s.center.0, half: check_size("half", s.half)? });
    }
    let r = goal.range.as_ref().unwrap_or_else(|| unreachable!("one_of found one of the four kinds"));
    let min = r.min.unwrap_or(Fixed::ZERO);
    let max = r.max;
    if min < Fixed::ZERO || min > max || max > sim::MAX_RANGE {
        return Err(cx.err(&join(&p, "max"), format!("expected 0 ≤ min ≤ max ≤ {}, found min {min}, max {max}", sim::MAX_RANGE)));
    }
    let kind = match &r.kind {
        None => RangeKind::Melee,
        Some(value) => {
            let kp = join(&p, "kind");
            cx.since(&kp, "range.kind")?;
            let kinds = [RangeKind::Melee, RangeKind::Ranged, RangeKind::Build];
            match value {
                Value::String(s) if let Some(k) = kinds.iter().find(|k| k.name() == s) => *k,
                _ => return Err(cx.err(&kp, format!("expected \"melee\", \"ranged\" or \"build\", found {value}"))),
            }
        }
    };
    let target = one_of(cx, &p, &[("unit", r.unit.is_some()), ("obstruction", r.obstruction.is_some())])?;
    let tp = join(&p, target);
    match (&r.unit, &r.obstruction) {
        (Some(unit), _) => Ok(Goal::RangeUnit { group: group_ref(cx, unit, &tp, turn, names)?, min, max, kind }),
        (None, Some(obstruction)) => {
            Ok(Goal::RangeObstruction { target: obstruction_ref(cx, obstruction, &tp, turn, names)?, min, max, kind })
        }
        (None, None) => unreachable!("one_of found one of the two targets"),
    }
}

/// The command keys of a script entry, each with whether it is given.
fn command_kinds(e: &EntryIn) -> [(&'static str, bool); 20] {
    [
        ("spawn", e.spawn.is_some()),
        ("move", e.r#move.is_some()),
        ("stop", e.stop.is_some()),
        ("remove", e.remove.is_some()),
        ("place_obstruction", e.place_obstruction.is_some()),
        ("place_building", e.place_building.is_some()),
        ("set_obstruction_flags", e.set_obstruction_flags.is_some()),
        ("remove_obstruction", e.remove_obstruction.is_some()),
        ("set_area", e.set_area.is_some()),
        ("edit_terrain", e.edit_terrain.is_some()),
        ("form_group", e.form_group.is_some()),
        ("move_formation", e.move_formation.is_some()),
        ("set_layout", e.set_layout.is_some()),
        ("disband", e.disband.is_some()),
        ("set_waypoints", e.set_waypoints.is_some()),
        ("set_waypoint_priorities", e.set_waypoint_priorities.is_some()),
        ("move_by_waypoints", e.move_by_waypoints.is_some()),
        ("spawn_from_building", e.spawn_from_building.is_some()),
        ("cancel_spawns", e.cancel_spawns.is_some()),
        ("game", e.game.is_some()),
    ]
}

#[allow(clippy::too_many_arguments)]
pub(super) fn parse_entry(
    cx: &Cx,
    e: EntryIn,
    path: &str,
    settings: &Settings,
    classes: &ClassSet,
    desc: &WorldDesc,
    origin: WorldPos,
    names: &mut Names,
    seqs: &mut BTreeMap<PlayerId, u32>,
) -> Res<Entry> {
    let turn: u32 = e.turn.get();
    let player = parse_player(cx, e.player, path, settings)?;
    let kind = one_of(cx, path, &command_kinds(&e))?;
    let p = join(path, kind);
    cx.since(&p, kind)?;
    let comment = e.comment.map(|c| c.0);
    if e.group.is_some() && e.game.is_none() {
        return Err(
            cx.err(&join(path, "group"), "an entry's own `group` names the units of a `game` command (a spawn names its group inside)")
        );
    }
    let action = if let Some(value) = e.game {
        let action = parse_game(cx, value, &p, turn, names)?;
        match (&e.group, action) {
            (Some(g), Action::Game { value, .. }) => {
                Action::Game { value, group: Some(define_group(cx, g, &join(path, "group"), turn, names)?) }
            }
            (_, action) => action,
        }
    } else if let Some(c) = e.spawn {
        let group = match &c.group {
            Some(g) => Some(define_group(cx, g, &join(&p, "group"), turn, names)?),
            None => None,
        };
        let fields = SpawnFields { class: c.class, at: c.at, count: c.count, radius: c.radius, speed: c.speed, turn_rate: c.turn_rate };
        let spawn = parse_spawn_fields(cx, &p, fields, classes, group)?;
        if let Some(g) = group {
            names.group_spawn[g].1 = u32::from(spawn.count);
        }
        Action::Spawn(spawn)
    } else if let Some(c) = e.r#move {
        let units = parse_units(cx, &c.units.0, &join(&p, "units"), turn, names)?;
        let gp = join(&p, "goal");
        let goal = parse_goal(cx, &c.goal, &gp, turn, names)?;
        if let Goal::RangeUnit { group, .. } = goal
            && units.contains(&group)
        {
            return Err(cx.err(&gp, "expected a range target outside the moving groups"));
        }
        Action::Move { units, goal, queue: c.queue.unwrap_or(false) }
    } else if let Some(c) = e.stop {
        Action::Stop { units: parse_units(cx, &c.units.0, &join(&p, "units"), turn, names)? }
    } else if let Some(c) = e.remove {
        Action::Remove { units: parse_units(cx, &c.units.0, &join(&p, "units"), turn, names)? }
    } else if let Some(c) = e.place_obstruction {
        let square = parse_square(cx, &p, c.x, c.z, c.w, c.h, c.degrees)?;
        let flags = match &c.flags {
            Some(v) => parse_flags(cx, v, &join(&p, "flags"))?,
            None => ObstructionFlags::STATIC.0,
        };
        let name = match &c.name {
            Some(n) => Some(define_obstruction(cx, n, &join(&p, "name"), turn.saturating_add(1), None, names)?),
            None => None,
        };
        Action::PlaceObstruction { name, square, flags }
    } else if let Some(c) = e.place_building {
        let class = parse_class(cx, &c.class, &join(&p, "class"), classes)?;
        let square = parse_square(cx, &p, c.x, c.z, c.w, c.h, c.degrees)?;
        let builder = match &c.builder {
            Some(b) => Some(group_ref(cx, b, &join(&p, "builder"), turn, names)?),
            None => None,
        };
        let name = match &c.name {
            Some(n) => Some(define_obstruction(cx, n, &join(&p, "name"), turn.saturating_add(1), None, names)?),
            None => None,
        };
        Action::PlaceBuilding { name, class, square, builder }
    } else if let Some(c) = e.set_obstruction_flags {
        let target = obstruction_ref(cx, &c.obstruction, &join(&p, "obstruction"), turn, names)?;
        Action::SetObstructionFlags { target, flags: parse_flags(cx, &c.flags, &join(&p, "flags"))? }
    } else if let Some(c) = e.remove_obstruction {
        Action::RemoveObstruction { target: obstruction_ref(cx, &c.obstruction, &join(&p, "obstruction"), turn, names)? }
    } else if let Some(c) = e.form_group {
        let up = join(&p, "units");
        let units = parse_units(cx, &c.units.0, &up, turn, names)?;
        let total: u32 = units.iter().map(|&g| names.group_spawn[g].1).sum();
        if total as usize > sim::formation::MAX_MEMBERS {
            return Err(cx.err(&up, format!("expected at most {} units in a formation, found {total}", sim::formation::MAX_MEMBERS)));
        }
        let layout = parse_layout(cx, &c.layout, &join(&p, "layout"))?;
        let name = define_formation(cx, &c.name, &join(&p, "name"), turn, names)?;
        Action::FormGroup { name, units, layout }
    } else if let Some(c) = e.move_formation {
        let formation = formation_ref(cx, &c.formation, &join(&p, "formation"), turn, names)?;
        let gp = join(&p, "goal");
        let goal = parse_goal(cx, &c.goal, &gp, turn, names)?;
        if matches!(goal, Goal::RangeUnit { .. } | Goal::RangeObstruction { .. }) {
            return Err(cx.err(&gp, "expected a point, circle or square goal (a formation takes no range goal)"));
        }
        Action::MoveFormation { formation, goal }
    } else if let Some(c) = e.set_layout {
        let formation = formation_ref(cx, &c.formation, &join(&p, "formation"), turn, names)?;
        Action::SetLayout { formation, layout: parse_layout(cx, &c.layout, &join(&p, "layout"))? }
    } else if let Some(c) = e.disband {
        Action::Disband { formation: formation_ref(cx, &c.formation, &join(&p, "formation"), turn, names)? }
    } else if let Some(net) = e.set_waypoints {
        if player != PlayerId::WORLD {
            return Err(cx.err(path, "expected player 0: waypoint networks are map data, set by the world itself"));
        }
        Action::SetWaypoints(parse_waypoint_net(cx, net, &p, classes, desc, origin)?)
    } else if let Some(c) = e.set_waypoint_priorities {
        let class = parse_class(cx, &c.class, &join(&p, "class"), classes)?;
        let mut entries = Vec::new();
        for (k, item) in c.entries.0.iter().enumerate() {
            let waypoint: u32 = item.waypoint.get();
            let priority = match (item.extra_cost, item.excluded) {
                (Some(x), None) => WaypointPriority::Open { extra_cost: x.get() },
                (None, Some(true)) => WaypointPriority::Excluded,
                (None, Some(false)) => WaypointPriority::Open { extra_cost: 0 },
                _ => return Err(cx.err(&format!("{p}.entries[{k}]"), "expected exactly one of `extra_cost` and `excluded`")),
            };
            entries.push(PriorityEntry { waypoint, priority });
        }
        Action::SetWaypointPriorities { class, reset: c.reset.unwrap_or(false), entries }
    } else if let Some(c) = e.move_by_waypoints {
        let units = parse_units(cx, &c.units.0, &join(&p, "units"), turn, names)?;
        Action::MoveByWaypoints { units, goal: c.goal.0, queue: c.queue.unwrap_or(false) }
    } else if let Some(c) = e.spawn_from_building {
        let building = obstruction_ref(cx, &c.building, &join(&p, "building"), turn, names)?;
        let group = match &c.group {
            Some(g) => Some(define_group(cx, g, &join(&p, "group"), turn, names)?),
            None => None,
        };
        let fields =
            SpawnFields { class: c.class, at: Point(origin), count: c.count, radius: c.radius, speed: c.speed, turn_rate: c.turn_rate };
        let spawn = parse_spawn_fields(cx, &p, fields, classes, group)?;
        if let Some(g) = group {
            names.group_spawn[g].1 = u32::from(spawn.count);
        }
        Action::SpawnFromBuilding { spawn, building }
    } else if let Some(c) = e.cancel_spawns {
        Action::CancelSpawns { building: obstruction_ref(cx, &c.building, &join(&p, "building"), turn, names)? }
    } else if let Some(c) = e.set_area {
        let np = join(&p, "name");
        let name = c.name.0;
        if !desc.areas.iter().any(|a| a.name == name) {
            let list = desc.areas.iter().map(|a| format!("{:?}", a.name)).collect::<Vec<_>>().join(", ");
            let known = if list.is_empty() { "the map has no areas".to_string() } else { format!("expected one of {list}") };
            return Err(cx.err(&np, format!("unknown area {name:?}: {known}")));
        }
        Action::SetArea { name, available: c.available }
    } else {
        let c = e.edit_terrain.unwrap_or_else(|| unreachable!("one_of found one of the commands"));
        let (vx, vz, width): (u32, u32, u32) = (c.vx.get(), c.vz.get(), c.width.get());
        let heights: Vec<Fixed> = c.heights.0.into_iter().map(|d| d.0).collect();
        if heights.is_empty() || !heights.len().is_multiple_of(width as usize) {
            return Err(
                cx.err(&join(&p, "heights"), format!("expected a non-empty multiple of width ({width}) heights, found {}", heights.len()))
            );
        }
        let rows = (heights.len() / width as usize) as u32;
        let (tw, th) = (desc.terrain.tiles_w(), desc.terrain.tiles_h());
        if vx + width > tw + 1 || vz + rows > th + 1 {
            return Err(cx.err(
                &p,
                format!(
                    "expected vertices within the terrain's {}x{} vertices, found columns {vx}..{} and rows {vz}..{}",
                    tw + 1,
                    th + 1,
                    vx + width,
                    vz + rows
                ),
            ));
        }
        Action::EditTerrain { vx, vz, width, heights }
    };
    Ok(Entry { turn, player, seq: next_seq(seqs, player), comment, action })
}

/// A game command (`"game": …`): the scenario's rules must read it, with every `{"$group": …}`,
/// `{"$unit": …}` and `{"$obstruction": …}` naming a group spawned or an obstruction placed before
/// `turn` (they become ids when it is issued, [`game_ids`]).
fn parse_game(cx: &Cx, value: Value, path: &str, turn: u32, names: &Names) -> Res<Action> {
    let Some(rules) = &cx.rules else {
        return Err(cx.err(path, "a game command, and the scenario names no game rules (add a top-level \"rules\")"));
    };
    // The same shape as when it is issued, with placeholder ids, so the rules read it now.
    let placeholder = game_ids(&value, &mut |reference| match reference {
        GameRef::Group(name) | GameRef::Unit(name) => {
            let group = group_ref(cx, &Name(name.to_string()), path, turn, names)?;
            let count = names.group_spawn[group].1.max(1) as usize;
            let id = serde_json::json!({"index": 0, "generation": 0});
            Ok(match reference {
                GameRef::Group(_) => Value::Array(vec![id; count]),
                _ => id,
            })
        }
        GameRef::Obstruction(value) => {
            obstruction_ref(cx, value, path, turn, names)?;
            Ok(Value::from(0u32))
        }
        GameRef::Number(value) => game_number(value).map(|f| json_of(&f)).map_err(|e| cx.err(path, e)),
        GameRef::Point(value) => game_point(value).map(|p| json_of(&p)).map_err(|e| cx.err(path, e)),
    })?;
    rules.command_from_json(&placeholder).map_err(|e| cx.err(path, format!("expected a command of the {} rules: {e}", rules.name())))?;
    Ok(Action::Game { value, group: None })
}

/// A reference in a game command's JSON.
pub(super) enum GameRef<'v> {
    /// `{"$group": name}`: the group's ids, as a list.
    Group(&'v str),
    /// `{"$unit": name}`: the group's first id.
    Unit(&'v str),
    /// `{"$obstruction": name or id}`: the obstruction's id.
    Obstruction(&'v Value),
    /// `{"$number": 12.5}`: an exact decimal as the game's fixed-point number.
    Number(&'v Value),
    /// `{"$point": [x, z]}`: a point of the scenario's coordinates as the world's.
    Point(&'v Value),
}

/// The serde form of a value (plain data always has one).
pub(super) fn json_of<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// The decimal of `{"$number": …}`.
pub(super) fn game_number(value: &Value) -> Result<Fixed, String> {
    match value {
        Value::Number(n) => pathing::decimal::parse_fixed(&n.to_string()),
        other => Err(format!("expected a number after \"$number\", found {other}")),
    }
}

/// The scenario point of `{"$point": [x, z]}`.
pub(super) fn game_point(value: &Value) -> Result<WorldPos, String> {
    match value {
        Value::Array(xz) if xz.len() == 2 => Ok(WorldPos::new(game_number(&xz[0])?, game_number(&xz[1])?)),
        other => Err(format!("expected [x, z] after \"$point\", found {other}")),
    }
}

/// `value` with each reference object replaced by what `resolve` makes of it.
pub(super) fn game_ids<E>(value: &Value, resolve: &mut dyn FnMut(GameRef<'_>) -> Result<Value, E>) -> Result<Value, E> {
    Ok(match value {
        Value::Object(map) if map.len() == 1 => {
            let (key, inner) = map.iter().next().unwrap_or_else(|| unreachable!("one entry"));
            match (key.as_str(), inner) {
                ("$group", Value::String(name)) => resolve(GameRef::Group(name))?,
                ("$unit", Value::String(name)) => resolve(GameRef::Unit(name))?,
                ("$obstruction", v) => resolve(GameRef::Obstruction(v))?,
                ("$number", v) => resolve(GameRef::Number(v))?,
                ("$point", v) => resolve(GameRef::Point(v))?,
                _ => {
                    let mut out = serde_json::Map::new();
                    out.insert(key.clone(), game_ids(inner, resolve)?);
                    Value::Object(out)
                }
            }
        }
        Value::Object(map) => {
            let mut out = serde_json::Map::new();
            for (k, v) in map {
                out.insert(k.clone(), game_ids(v, resolve)?);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| game_ids(v, resolve)).collect::<Result<_, _>>()?),
        other => other.clone(),
    })
}
