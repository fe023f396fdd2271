//! The command script: group, formation and obstruction names, goals, and one entry per command.

use super::*;

/// A new group, spawned on `turn`.
pub(super) fn define_group(cx: &Cx, node: &Node, path: &str, turn: u32, names: &mut Names) -> Res<usize> {
    let name = cx.name(node, path)?;
    if names.groups.contains_key(name) {
        return Err(cx.err(node, path, format!("expected a new group name, found {name:?} a second time")));
    }
    if names.group_names.len() >= MAX_GROUPS {
        return Err(cx.err(node, path, format!("expected at most {MAX_GROUPS} groups")));
    }
    let index = names.group_names.len();
    names.groups.insert(name.to_string(), index);
    names.group_names.push(name.to_string());
    names.group_spawn.push((turn, 0));
    Ok(index)
}

/// A group name usable on `turn` (spawned on an earlier turn).
pub(super) fn group_ref(cx: &Cx, node: &Node, path: &str, turn: u32, names: &Names) -> Res<usize> {
    let name = cx.name(node, path)?;
    let Some(&group) = names.groups.get(name) else {
        return Err(cx.err(node, path, format!("unknown group {name:?} (groups are named by `units` entries and spawns with a `group`)")));
    };
    let spawned = names.group_spawn[group].0;
    if spawned >= turn {
        return Err(cx.err(
            node,
            path,
            format!("group {name:?} is spawned on turn {spawned}; its units can be named from turn {} on", spawned.saturating_add(1)),
        ));
    }
    Ok(group)
}

/// A new formation name, usable from the turn after `turn`.
pub(super) fn define_formation(cx: &Cx, node: &Node, path: &str, turn: u32, names: &mut Names) -> Res<usize> {
    let name = cx.name(node, path)?;
    if names.formations.contains_key(name) {
        return Err(cx.err(node, path, format!("expected a new formation name, found {name:?} a second time")));
    }
    if names.formation_names.len() >= MAX_GROUPS {
        return Err(cx.err(node, path, format!("expected at most {MAX_GROUPS} formations")));
    }
    let index = names.formation_names.len();
    names.formations.insert(name.to_string(), index);
    names.formation_names.push(name.to_string());
    names.formation_ready.push(turn.saturating_add(1));
    Ok(index)
}

/// A formation named by an earlier `form_group`.
pub(super) fn formation_ref(cx: &Cx, node: &Node, path: &str, turn: u32, names: &Names) -> Res<usize> {
    let name = cx.name(node, path)?;
    let Some(&k) = names.formations.get(name) else {
        return Err(cx.err(node, path, format!("unknown formation {name:?} (formations are named by `form_group`)")));
    };
    let ready = names.formation_ready[k];
    if ready > turn {
        return Err(cx.err(
            node,
            path,
            format!("formation {name:?} is formed on turn {}; it can be named from turn {ready} on", ready - 1),
        ));
    }
    Ok(k)
}

/// A layout by name.
pub(super) fn parse_layout(cx: &Cx, node: &Node, path: &str) -> Res<Layout> {
    let name = cx.name(node, path)?;
    LAYOUTS.iter().find(|(n, _)| *n == name).map(|(_, l)| *l).ok_or_else(|| {
        let list = LAYOUTS.iter().map(|(n, _)| format!("{n:?}")).collect::<Vec<_>>().join(", ");
        cx.err(node, path, format!("expected a layout, one of {list}, found {name:?}"))
    })
}

pub(super) fn layout_name(layout: Layout) -> &'static str {
    LAYOUTS.iter().find(|(_, l)| *l == layout).map_or("box", |(n, _)| n)
}

/// `units`: a non-empty list of distinct group names, at most [`MAX_UNITS_PER_COMMAND`] units.
pub(super) fn parse_units(cx: &Cx, o: &Obj, turn: u32, names: &Names) -> Res<Vec<usize>> {
    let (n, p) = o.req(cx, "units")?;
    let items = cx.array(n, &p, MAX_GROUPS)?;
    if items.is_empty() {
        return Err(cx.err(n, &p, "expected at least one group name"));
    }
    let mut groups = Vec::new();
    let mut total = 0u32;
    for (k, item) in items.iter().enumerate() {
        let ip = format!("{p}[{k}]");
        let group = group_ref(cx, item, &ip, turn, names)?;
        if groups.contains(&group) {
            return Err(cx.err(item, &ip, format!("group {:?} named twice", names.group_names[group])));
        }
        total = total.saturating_add(names.group_spawn[group].1);
        groups.push(group);
    }
    if total > MAX_UNITS_PER_COMMAND {
        return Err(cx.err(n, &p, format!("expected at most {MAX_UNITS_PER_COMMAND} units in one command, found {total}")));
    }
    Ok(groups)
}

/// An obstruction by name (usable on `turn`) or id.
pub(super) fn obstruction_ref(cx: &Cx, node: &Node, path: &str, turn: u32, names: &Names) -> Res<ObsRef> {
    if let Val::Num(..) = node.val {
        return Ok(ObsRef::Id(cx.uint(node, path, u64::from(u32::MAX - 1))? as u32));
    }
    let name = cx.name(node, path)?;
    let Some(&index) = names.obstructions.get(name) else {
        return Err(cx.err(
            node,
            path,
            format!("unknown obstruction {name:?} (name it in `obstructions`, `place_obstruction` or `place_building`)"),
        ));
    };
    let ready = names.obstruction_ready[index];
    if ready > turn {
        return Err(cx.err(
            node,
            path,
            format!("obstruction {name:?} is placed on turn {}; it can be named from turn {ready} on", ready - 1),
        ));
    }
    Ok(ObsRef::Named(index))
}

pub(super) fn parse_goal(cx: &Cx, node: &Node, path: &str, turn: u32, names: &Names) -> Res<GoalIn> {
    let o = cx.obj(node, path, GOAL_KINDS)?;
    let (kind, n, p) = o.one_of(cx, GOAL_KINDS)?;
    match kind {
        "point" => Ok(GoalIn::Point(cx.pos(n, &p)?)),
        "circle" | "square" => {
            let size = if kind == "circle" { "radius" } else { "half" };
            let g = cx.obj(n, &p, &["center", size])?;
            let (cn, cp) = g.req(cx, "center")?;
            let center = cx.pos(cn, &cp)?;
            let (sn, sp) = g.req(cx, size)?;
            let value = cx.fixed(sn, &sp)?;
            if value < Fixed::ZERO {
                return Err(cx.err(sn, &sp, format!("expected a {size} ≥ 0, found {value}")));
            }
            Ok(if kind == "circle" { GoalIn::Circle { center, radius: value } } else { GoalIn::Square { center, half: value } })
        }
        _ => {
            let g = cx.obj(n, &p, &["unit", "obstruction", "min", "max"])?;
            let min = g.fixed_or(cx, "min", Fixed::ZERO)?;
            let (mn, mp) = g.req(cx, "max")?;
            let max = cx.fixed(mn, &mp)?;
            if min < Fixed::ZERO || min > max || max > sim::world::MAX_RANGE {
                return Err(cx.err(mn, &mp, format!("expected 0 ≤ min ≤ max ≤ {}, found min {min}, max {max}", sim::world::MAX_RANGE)));
            }
            let (target_kind, tn, tp) = g.one_of(cx, &["unit", "obstruction"])?;
            if target_kind == "unit" {
                Ok(GoalIn::RangeUnit { group: group_ref(cx, tn, &tp, turn, names)?, min, max })
            } else {
                Ok(GoalIn::RangeObstruction { target: obstruction_ref(cx, tn, &tp, turn, names)?, min, max })
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn parse_entry(
    cx: &Cx,
    node: &Node,
    path: &str,
    settings: &Settings,
    classes: &ClassSet,
    desc: &WorldDesc,
    origin: WorldPos,
    names: &mut Names,
    seqs: &mut BTreeMap<PlayerId, u32>,
) -> Res<Entry> {
    let mut known = vec!["turn", "player", "comment"];
    known.extend_from_slice(COMMAND_KINDS);
    let o = cx.obj(node, path, &known)?;
    let (tn, tp) = o.req(cx, "turn")?;
    let turn = cx.u32_in(tn, &tp, 0, MAX_TURN)?;
    let player = parse_player(cx, &o, settings)?;
    let comment = parse_comment(cx, &o)?;
    let (kind, n, p) = o.one_of(cx, COMMAND_KINDS)?;
    cx.since(n, &p, kind)?;
    let action = match kind {
        "spawn" => {
            let c = cx.obj(n, &p, &["group", "class", "at", "count", "radius", "speed"])?;
            let group = match c.get("group") {
                Some((gn, gp)) => Some(define_group(cx, gn, &gp, turn, names)?),
                None => None,
            };
            let spawn = parse_spawn_fields(cx, &c, classes, group)?;
            if let Some(g) = group {
                names.group_spawn[g].1 = u32::from(spawn.count);
            }
            Action::Spawn(spawn)
        }
        "move" => {
            let c = cx.obj(n, &p, &["units", "goal", "queue"])?;
            let units = parse_units(cx, &c, turn, names)?;
            let (gn, gp) = c.req(cx, "goal")?;
            let goal = parse_goal(cx, gn, &gp, turn, names)?;
            if let GoalIn::RangeUnit { group, .. } = goal
                && units.contains(&group)
            {
                return Err(cx.err(gn, &gp, "expected a range target outside the moving groups"));
            }
            let queue = match c.get("queue") {
                Some((qn, qp)) => cx.boolean(qn, &qp)?,
                None => false,
            };
            Action::Move { units, goal, queue }
        }
        "stop" | "remove" => {
            let c = cx.obj(n, &p, &["units"])?;
            let units = parse_units(cx, &c, turn, names)?;
            if kind == "stop" { Action::Stop { units } } else { Action::Remove { units } }
        }
        "place_obstruction" => {
            let c = cx.obj(n, &p, &["name", "x", "z", "w", "h", "degrees", "flags"])?;
            let square = parse_square(cx, &c)?;
            let flags = match c.get("flags") {
                Some((fn_, fp)) => parse_flags(cx, fn_, &fp)?,
                None => ObstructionFlags::STATIC.0,
            };
            let name = match c.get("name") {
                Some((nn, np)) => Some(define_obstruction(cx, nn, &np, turn.saturating_add(1), None, names)?),
                None => None,
            };
            Action::PlaceObstruction { name, square, flags }
        }
        "place_building" => {
            let c = cx.obj(n, &p, &["name", "class", "x", "z", "w", "h", "degrees", "builder"])?;
            let (cn, cp) = c.req(cx, "class")?;
            let class = parse_class(cx, cn, &cp, classes)?;
            let square = parse_square(cx, &c)?;
            let builder = match c.get("builder") {
                Some((bn, bp)) => Some(group_ref(cx, bn, &bp, turn, names)?),
                None => None,
            };
            let name = match c.get("name") {
                Some((nn, np)) => Some(define_obstruction(cx, nn, &np, turn.saturating_add(1), None, names)?),
                None => None,
            };
            Action::PlaceBuilding { name, class, square, builder }
        }
        "set_obstruction_flags" => {
            let c = cx.obj(n, &p, &["obstruction", "flags"])?;
            let (on, op) = c.req(cx, "obstruction")?;
            let target = obstruction_ref(cx, on, &op, turn, names)?;
            let (fn_, fp) = c.req(cx, "flags")?;
            Action::SetObstructionFlags { target, flags: parse_flags(cx, fn_, &fp)? }
        }
        "remove_obstruction" => {
            let c = cx.obj(n, &p, &["obstruction"])?;
            let (on, op) = c.req(cx, "obstruction")?;
            Action::RemoveObstruction { target: obstruction_ref(cx, on, &op, turn, names)? }
        }
        "form_group" => {
            let c = cx.obj(n, &p, &["name", "units", "layout"])?;
            let units = parse_units(cx, &c, turn, names)?;
            let total: u32 = units.iter().map(|&g| names.group_spawn[g].1).sum();
            if total as usize > sim::formation::MAX_MEMBERS {
                let (un, up) = c.req(cx, "units")?;
                return Err(cx.err(
                    un,
                    &up,
                    format!("expected at most {} units in a formation, found {total}", sim::formation::MAX_MEMBERS),
                ));
            }
            let (ln, lp) = c.req(cx, "layout")?;
            let layout = parse_layout(cx, ln, &lp)?;
            let (nn, np) = c.req(cx, "name")?;
            let name = define_formation(cx, nn, &np, turn, names)?;
            Action::FormGroup { name, units, layout }
        }
        "move_formation" => {
            let c = cx.obj(n, &p, &["formation", "goal"])?;
            let (fn_, fp) = c.req(cx, "formation")?;
            let formation = formation_ref(cx, fn_, &fp, turn, names)?;
            let (gn, gp) = c.req(cx, "goal")?;
            let goal = parse_goal(cx, gn, &gp, turn, names)?;
            if matches!(goal, GoalIn::RangeUnit { .. } | GoalIn::RangeObstruction { .. }) {
                return Err(cx.err(gn, &gp, "expected a point, circle or square goal (a formation takes no range goal)"));
            }
            Action::MoveFormation { formation, goal }
        }
        "set_layout" => {
            let c = cx.obj(n, &p, &["formation", "layout"])?;
            let (fn_, fp) = c.req(cx, "formation")?;
            let formation = formation_ref(cx, fn_, &fp, turn, names)?;
            let (ln, lp) = c.req(cx, "layout")?;
            Action::SetLayout { formation, layout: parse_layout(cx, ln, &lp)? }
        }
        "disband" => {
            let c = cx.obj(n, &p, &["formation"])?;
            let (fn_, fp) = c.req(cx, "formation")?;
            Action::Disband { formation: formation_ref(cx, fn_, &fp, turn, names)? }
        }
        "set_waypoints" => {
            if player != 0 {
                return Err(cx.err(node, path, "expected player 0: waypoint networks are map data, set by the world itself"));
            }
            Action::SetWaypoints(parse_waypoint_net(cx, n, &p, classes, desc, origin)?)
        }
        "set_waypoint_priorities" => {
            let c = cx.obj(n, &p, &["class", "reset", "entries"])?;
            let (cn, cp) = c.req(cx, "class")?;
            let class = parse_class(cx, cn, &cp, classes)?;
            let reset = match c.get("reset") {
                Some((rn, rp)) => cx.boolean(rn, &rp)?,
                None => false,
            };
            let (en, ep) = c.req(cx, "entries")?;
            let mut entries = Vec::new();
            for (k, item) in cx.array(en, &ep, sim::waypoint::MAX_NET_WAYPOINTS)?.iter().enumerate() {
                let ip = format!("{ep}[{k}]");
                let e = cx.obj(item, &ip, &["waypoint", "extra_cost", "excluded"])?;
                let (wn, wp) = e.req(cx, "waypoint")?;
                let waypoint = cx.uint(wn, &wp, sim::waypoint::MAX_NET_WAYPOINTS as u64 - 1)? as u32;
                let priority = match (e.get("extra_cost"), e.get("excluded")) {
                    (Some((xn, xp)), None) => WaypointPriority::Open { extra_cost: cx.uint(xn, &xp, u64::from(u16::MAX))? as u16 },
                    (None, Some((xn, xp))) => {
                        if cx.boolean(xn, &xp)? {
                            WaypointPriority::Excluded
                        } else {
                            WaypointPriority::Open { extra_cost: 0 }
                        }
                    }
                    _ => return Err(cx.err(item, &ip, "expected exactly one of `extra_cost` and `excluded`")),
                };
                entries.push(PriorityEntry { waypoint, priority });
            }
            Action::SetWaypointPriorities { class, reset, entries }
        }
        "move_by_waypoints" => {
            let c = cx.obj(n, &p, &["units", "goal", "queue"])?;
            let units = parse_units(cx, &c, turn, names)?;
            let (gn, gp) = c.req(cx, "goal")?;
            let goal = cx.pos(gn, &gp)?;
            let queue = match c.get("queue") {
                Some((qn, qp)) => cx.boolean(qn, &qp)?,
                None => false,
            };
            Action::MoveByWaypoints { units, goal, queue }
        }
        "set_area" => {
            let c = cx.obj(n, &p, &["name", "available"])?;
            let (nn, np) = c.req(cx, "name")?;
            let name = cx.name(nn, &np)?.to_string();
            if !desc.areas.iter().any(|a| a.name == name) {
                let list = desc.areas.iter().map(|a| format!("{:?}", a.name)).collect::<Vec<_>>().join(", ");
                let known = if list.is_empty() { "the map has no areas".to_string() } else { format!("expected one of {list}") };
                return Err(cx.err(nn, &np, format!("unknown area {name:?}: {known}")));
            }
            let (an, ap) = c.req(cx, "available")?;
            Action::SetArea { name, available: cx.boolean(an, &ap)? }
        }
        _ => {
            let c = cx.obj(n, &p, &["vx", "vz", "width", "heights"])?;
            let (xn, xp) = c.req(cx, "vx")?;
            let (zn, zp) = c.req(cx, "vz")?;
            let (wn, wp) = c.req(cx, "width")?;
            let (vx, vz) = (cx.u32_in(xn, &xp, 0, 16_384)?, cx.u32_in(zn, &zp, 0, 16_384)?);
            let width = cx.u32_in(wn, &wp, 1, 256)?;
            let (hn, hp) = c.req(cx, "heights")?;
            let items = cx.array(hn, &hp, 65_536)?;
            if items.is_empty() || !items.len().is_multiple_of(width as usize) {
                return Err(cx.err(hn, &hp, format!("expected a non-empty multiple of width ({width}) heights, found {}", items.len())));
            }
            let heights = items.iter().enumerate().map(|(k, v)| cx.fixed(v, &format!("{hp}[{k}]"))).collect::<Res<Vec<_>>>()?;
            let rows = (items.len() / width as usize) as u32;
            let (tw, th) = (desc.terrain.tiles_w(), desc.terrain.tiles_h());
            if vx + width > tw + 1 || vz + rows > th + 1 {
                return Err(cx.err(
                    n,
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
        }
    };
    Ok(Entry { turn, player, seq: next_seq(seqs, player), comment, action })
}
