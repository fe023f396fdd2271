//! Reading a scenario text: the top-level fields, settings, classes, obstructions and spawns.

use super::*;

pub(super) fn parse_root(cx: &Cx, root: &Node, resolve: &mut dyn FnMut(&str) -> Result<String, String>) -> Res<Scenario> {
    let Val::Obj(entries) = &root.val else {
        return Err(cx.err(root, "", format!("expected a scenario object, found {}", root.val.kind())));
    };
    // The format and version first, before the keys are checked: a newer version may have keys
    // this one does not know, and its error should be about the version.
    let raw = Obj { node: root, path: String::new(), entries };
    let (format_node, format_path) = raw.req(cx, "format")?;
    let format = cx.string(format_node, &format_path, MAX_NAME_BYTES)?;
    if format != FORMAT_NAME {
        return Err(cx.err(format_node, &format_path, format!("expected \"{FORMAT_NAME}\", found {format:?}")));
    }
    let (version_node, version_path) = raw.req(cx, "version")?;
    let version = cx.uint(version_node, &version_path, u64::from(u32::MAX))?;
    if !(u64::from(OLDEST_SCENARIO_VERSION)..=u64::from(SCENARIO_VERSION)).contains(&version) {
        return Err(cx.err(
            version_node,
            &version_path,
            format!(
                "expected version {OLDEST_SCENARIO_VERSION} to {SCENARIO_VERSION}, found version {version} (this program reads versions {OLDEST_SCENARIO_VERSION} to {SCENARIO_VERSION})"
            ),
        ));
    }
    // From here on, keys and commands of later versions are refused (`Cx::since`).
    let cx = &Cx { version: version as u32, ..*cx };
    let top = cx.obj(root, "", ROOT_FIELDS)?;
    let (n, p) = top.req(cx, "name")?;
    let name = cx.string(n, &p, MAX_NAME_BYTES)?.to_string();
    let description = match top.get("description") {
        Some((n, p)) => Some(cx.string(n, &p, MAX_DESCRIPTION_BYTES)?.to_string()),
        None => None,
    };
    let (n, p) = top.req(cx, "turns")?;
    let turns = cx.u32_in(n, &p, 1, MAX_TURN)?;
    let settings = match top.get("settings") {
        Some((n, p)) => parse_settings(cx, n, &p)?,
        None => Settings::default(),
    };
    let (classes_spec, classes) = match top.get("classes") {
        Some((n, p)) => parse_classes(cx, n, &p, resolve)?,
        None => (ClassesSpec::ZeroAd, ClassSet::zero_ad_defaults()),
    };
    let (n, p) = top.req(cx, "map")?;
    let map = parse_map_field(cx, n, &p, &classes, version, resolve)?;
    let mut names = Names::default();
    let first_id = map.obstructions.iter().map(|(id, _)| id.saturating_add(1)).max().unwrap_or(1);
    let obstructions = match top.get("obstructions") {
        Some((n, p)) => parse_obstructions(cx, n, &p, first_id, &mut names)?,
        None => Vec::new(),
    };
    let mut waypoints: Vec<WaypointNet> = Vec::new();
    if let Some((n, p)) = top.get("waypoints") {
        cx.since(n, &p, "waypoints")?;
        for (k, item) in cx.array(n, &p, usize::from(pathing::MAX_CLASSES))?.iter().enumerate() {
            let path = format!("{p}[{k}]");
            let net = parse_waypoint_net(cx, item, &path, &classes, &map.desc, map.origin)?;
            if net.points.is_empty() {
                return Err(cx.err(item, &path, "expected at least one waypoint"));
            }
            if waypoints.iter().any(|w| w.class == net.class) {
                return Err(cx.err(item, &path, "expected one network per class, found a second for this class"));
            }
            waypoints.push(net);
        }
        waypoints.sort_by_key(|w| w.class);
    }
    let mut seqs: BTreeMap<PlayerId, u32> = BTreeMap::new();
    let mut entries = Vec::new();
    if let Some((n, p)) = top.get("units") {
        for (k, item) in cx.array(n, &p, MAX_GROUPS)?.iter().enumerate() {
            let path = format!("{p}[{k}]");
            let o = cx.obj(item, &path, &["name", "player", "class", "at", "count", "radius", "speed", "comment"])?;
            let player = parse_player(cx, &o, &settings)?;
            let (nn, np) = o.req(cx, "name")?;
            let group = define_group(cx, nn, &np, 0, &mut names)?;
            let spawn = parse_spawn_fields(cx, &o, &classes, Some(group))?;
            names.group_spawn[group].1 = u32::from(spawn.count);
            let comment = parse_comment(cx, &o)?;
            entries.push(Entry { turn: 0, player, seq: next_seq(&mut seqs, player), comment, action: Action::Spawn(spawn) });
        }
    }
    let n_unit_entries = entries.len();
    if let Some((n, p)) = top.get("script") {
        for (k, item) in cx.array(n, &p, MAX_SCRIPT_ENTRIES)?.iter().enumerate() {
            let path = format!("{p}[{k}]");
            let entry = parse_entry(cx, item, &path, &settings, &classes, &map.desc, map.origin, &mut names, &mut seqs)?;
            entries.push(entry);
        }
    }
    let mut schedule: Vec<usize> = (0..entries.len()).collect();
    schedule.sort_by_key(|&k| (entries[k].turn, entries[k].player, entries[k].seq));
    let mut desc = map.desc;
    desc.jump_table_classes = map.jump_tables;
    desc.landmark_classes = map.landmarks;
    let mut scenario = Scenario {
        name,
        description,
        turns,
        settings,
        classes_spec,
        classes,
        map: map.kind,
        jump_tables: map.jump_tables,
        landmarks: map.landmarks,
        desc,
        map_obstructions: map.obstructions,
        waypoints,
        origin: map.origin,
        obstructions,
        obstruction_names: names.obstruction_names,
        obstruction_initial: names.obstruction_initial,
        group_names: names.group_names,
        formation_names: names.formation_names,
        entries,
        n_unit_entries,
        schedule,
        canonical: String::new(),
        digest: [0; 32],
    };
    scenario.canonical = write_canonical(&scenario);
    if scenario.canonical.len() > MAX_TEXT_BYTES {
        return Err(cx.err(
            root,
            "",
            format!(
                "the self-contained text with every file inlined would be {} bytes, expected at most {MAX_TEXT_BYTES}",
                scenario.canonical.len()
            ),
        ));
    }
    scenario.digest = *blake3::hash(scenario.canonical.as_bytes()).as_bytes();
    Ok(scenario)
}

pub(super) fn next_seq(seqs: &mut BTreeMap<PlayerId, u32>, player: PlayerId) -> u32 {
    let seq = seqs.entry(player).or_insert(0);
    let out = *seq;
    *seq = seq.saturating_add(1);
    out
}

pub(super) fn parse_settings(cx: &Cx, node: &Node, path: &str) -> Res<Settings> {
    let o = cx.obj(node, path, &["turn_ms", "players", "seed", "max_paths_per_turn", "motion"])?;
    let mut s = Settings::default();
    if let Some((n, p)) = o.get("turn_ms") {
        s.turn_ms = cx.u32_in(n, &p, 1, 10_000)?;
    }
    if let Some((n, p)) = o.get("players") {
        s.players = cx.u32_in(n, &p, 0, 255)? as u8;
    }
    if let Some((n, p)) = o.get("seed") {
        s.seed = cx.uint(n, &p, u64::MAX)?;
    }
    if let Some((n, p)) = o.get("max_paths_per_turn") {
        s.max_paths_per_turn = cx.u32_in(n, &p, 1, 65_535)? as u16;
    }
    if let Some((n, p)) = o.get("motion") {
        s.motion = parse_motion(cx, n, &p)?;
    }
    Ok(s)
}

pub(super) const MOTION_FIELDS: &[&str] = &[
    "short_range",
    "short_range_step",
    "short_range_max",
    "short_node_budget",
    "max_short_paths_per_turn",
    "rejoin_radius",
    "long_replan_every",
    "give_up_turns",
    "core_fraction",
    "influence",
    "push_iterations",
    "nudge_distance",
    "replan_trigger",
    "replan_cooldown_ms",
    "moved_epsilon",
];

pub(super) fn parse_motion(cx: &Cx, node: &Node, path: &str) -> Res<MotionSettings> {
    let o = cx.obj(node, path, MOTION_FIELDS)?;
    let mut m = MotionSettings::default();
    let fixed_fields: [(&str, &mut Fixed); 9] = [
        ("short_range", &mut m.short_range),
        ("short_range_step", &mut m.short_range_step),
        ("short_range_max", &mut m.short_range_max),
        ("rejoin_radius", &mut m.rejoin_radius),
        ("core_fraction", &mut m.core_fraction),
        ("influence", &mut m.influence),
        ("nudge_distance", &mut m.nudge_distance),
        ("replan_trigger", &mut m.replan_trigger),
        ("moved_epsilon", &mut m.moved_epsilon),
    ];
    for (key, slot) in fixed_fields {
        if let Some((n, p)) = o.get(key) {
            *slot = cx.fixed(n, &p)?;
        }
    }
    if let Some((n, p)) = o.get("short_node_budget") {
        m.short_node_budget = cx.u32_in(n, &p, 1, 65_535)?;
    }
    if let Some((n, p)) = o.get("max_short_paths_per_turn") {
        m.max_short_paths_per_turn = cx.u32_in(n, &p, 1, 65_535)? as u16;
    }
    let byte_fields: [(&str, &mut u8, u32); 3] = [
        ("long_replan_every", &mut m.long_replan_every, 1),
        ("give_up_turns", &mut m.give_up_turns, 1),
        ("push_iterations", &mut m.push_iterations, 0),
    ];
    for (key, slot, lo) in byte_fields {
        if let Some((n, p)) = o.get(key) {
            *slot = cx.u32_in(n, &p, lo, 255)? as u8;
        }
    }
    if let Some((n, p)) = o.get("replan_cooldown_ms") {
        m.replan_cooldown_ms = cx.u32_in(n, &p, 0, 60_000)?;
    }
    m.check().map_err(|e| cx.err(node, path, format!("expected motion settings within their limits: {e}")))?;
    Ok(m)
}

/// `{"file": NAME}` or `{"text": TEXT}`, at most [`MAX_FILE_BYTES`].
pub(super) fn parse_text_ref(cx: &Cx, node: &Node, path: &str, resolve: &mut dyn FnMut(&str) -> Result<String, String>) -> Res<TextRef> {
    let o = cx.obj(node, path, &["file", "text"])?;
    let (kind, n, p) = o.one_of(cx, &["file", "text"])?;
    let (text, file) = if kind == "file" {
        let name = cx.name(n, &p)?;
        let text = resolve(name).map_err(|e| cx.err(n, &p, format!("expected a readable file: {e}")))?;
        (text, Some(name.to_string()))
    } else {
        (cx.string(n, &p, MAX_FILE_BYTES)?.to_string(), None)
    };
    if text.len() > MAX_FILE_BYTES {
        return Err(cx.err(n, &p, format!("expected at most {MAX_FILE_BYTES} bytes, found {}", text.len())));
    }
    Ok(TextRef { text, file })
}

/// An error inside a referenced text: in the file itself when it came from one, else at the
/// inline string with the line inside it.
pub(super) fn text_err(
    cx: &Cx,
    node: &Node,
    path: &str,
    src: &TextRef,
    line: Option<u32>,
    column: Option<u32>,
    message: String,
) -> ScenarioError {
    match &src.file {
        Some(file) => ScenarioError { origin: file.clone(), line, column, path: path.to_string(), message },
        None => match line {
            Some(line) => cx.err(node, path, format!("inline text line {line}: {message}")),
            None => cx.err(node, path, message),
        },
    }
}

pub(super) fn parse_classes(
    cx: &Cx,
    node: &Node,
    path: &str,
    resolve: &mut dyn FnMut(&str) -> Result<String, String>,
) -> Res<(ClassesSpec, ClassSet)> {
    if let Val::Str(s) = &node.val {
        if s == "zero_ad" {
            return Ok((ClassesSpec::ZeroAd, ClassSet::zero_ad_defaults()));
        }
        return Err(cx.err(node, path, format!("expected \"zero_ad\" or {{\"file\"|\"text\": ...}}, found {s:?}")));
    }
    let src = parse_text_ref(cx, node, path, resolve)?;
    match ClassSet::parse_json(&src.text) {
        Ok(set) => Ok((ClassesSpec::Text(src.text), set)),
        Err(e) => {
            let (line, column, message) = match e {
                ClassFileError::Syntax { line, column, expected } => (Some(line), Some(column), expected),
                ClassFileError::Invalid { at, problem } => (at.map(|p| p.line), at.map(|p| p.column), problem.to_string()),
                other => (None, None, other.to_string()),
            };
            let to_u32 = |v: Option<usize>| v.and_then(|v| u32::try_from(v).ok());
            Err(text_err(cx, node, path, &src, to_u32(line), to_u32(column), format!("class file: {message}")))
        }
    }
}

/// A class by name or index.
pub(super) fn parse_class(cx: &Cx, node: &Node, path: &str, classes: &ClassSet) -> Res<u8> {
    match &node.val {
        Val::Str(name) => classes.by_name(name).map(PassClass::index).map_err(|_| {
            let list = classes.iter().map(|(_, d)| format!("{:?}", d.name)).collect::<Vec<_>>().join(", ");
            cx.err(node, path, format!("unknown class {name:?}, expected one of {list}"))
        }),
        Val::Num(..) => {
            let max = u64::from(classes.len().saturating_sub(1));
            Ok(cx.uint(node, path, max)? as u8)
        }
        other => Err(cx.err(node, path, format!("expected a class name or index, found {}", other.kind()))),
    }
}

/// Obstruction flags: a name (`none`, `pathfinding`, `foundation`, `static`), a number 0..=3, or
/// a list of names.
pub(super) fn parse_flags(cx: &Cx, node: &Node, path: &str) -> Res<u8> {
    let by_name = |node: &Node, path: &str, name: &str| match name {
        "none" => Ok(0),
        "pathfinding" => Ok(ObstructionFlags::BLOCK_PATHFINDING),
        "foundation" => Ok(ObstructionFlags::BLOCK_FOUNDATION),
        "static" => Ok(ObstructionFlags::STATIC.0),
        other => Err(cx.err(node, path, format!("expected \"none\", \"pathfinding\", \"foundation\" or \"static\", found {other:?}"))),
    };
    match &node.val {
        Val::Str(s) => by_name(node, path, s),
        Val::Num(..) => Ok(cx.uint(node, path, 3)? as u8),
        Val::Arr(items) if items.len() <= 4 => {
            let mut flags = 0;
            for (k, item) in items.iter().enumerate() {
                let p = format!("{path}[{k}]");
                flags |= by_name(item, &p, cx.string(item, &p, MAX_NAME_BYTES)?)?;
            }
            Ok(flags)
        }
        other => Err(cx.err(node, path, format!("expected obstruction flags (a name, a list of names or 0..=3), found {}", other.kind()))),
    }
}

pub(super) fn flags_name(flags: u8) -> &'static str {
    match flags {
        0 => "none",
        ObstructionFlags::BLOCK_PATHFINDING => "pathfinding",
        ObstructionFlags::BLOCK_FOUNDATION => "foundation",
        _ => "static",
    }
}

/// The square fields `x`, `z`, `w`, `h`, `degrees` (0 by default) of an object.
pub(super) fn parse_square(cx: &Cx, o: &Obj) -> Res<SquareSpec> {
    let get = |key: &str| -> Res<Fixed> {
        let (n, p) = o.req(cx, key)?;
        cx.fixed(n, &p)
    };
    let square = SquareSpec { x: get("x")?, z: get("z")?, w: get("w")?, h: get("h")?, degrees: o.fixed_or(cx, "degrees", Fixed::ZERO)? };
    if let Err(e) = pathing::raster::editor_square(square.x, square.z, square.w, square.h, square.degrees) {
        return Err(cx.err(o.node, &o.path, format!("expected a square with sizes ≥ 0 and coordinates in range: {e}")));
    }
    if square.w <= Fixed::ZERO && square.h <= Fixed::ZERO {
        return Err(cx.err(o.node, &o.path, "expected a square with a positive width or height"));
    }
    Ok(square)
}

/// A new obstruction name usable from turn `ready`.
pub(super) fn define_obstruction(cx: &Cx, node: &Node, path: &str, ready: u32, initial: Option<u32>, names: &mut Names) -> Res<usize> {
    let name = cx.name(node, path)?;
    if names.obstructions.contains_key(name) {
        return Err(cx.err(node, path, format!("expected a new obstruction name, found {name:?} a second time")));
    }
    let index = names.obstruction_names.len();
    names.obstructions.insert(name.to_string(), index);
    names.obstruction_names.push(name.to_string());
    names.obstruction_ready.push(ready);
    names.obstruction_initial.push(initial);
    Ok(index)
}

pub(super) fn parse_obstructions(cx: &Cx, node: &Node, path: &str, first_id: u32, names: &mut Names) -> Res<Vec<InitialObstruction>> {
    let mut out = Vec::new();
    for (k, item) in cx.array(node, path, MAX_OBSTRUCTIONS)?.iter().enumerate() {
        let p = format!("{path}[{k}]");
        let o = cx.obj(item, &p, &["name", "x", "z", "w", "h", "degrees", "flags"])?;
        let square = parse_square(cx, &o)?;
        let flags = match o.get("flags") {
            Some((n, p)) => parse_flags(cx, n, &p)?,
            None => ObstructionFlags::STATIC.0,
        };
        let id =
            first_id.checked_add(k as u32).filter(|&id| id != u32::MAX).ok_or_else(|| cx.err(item, &p, "obstruction ids exhausted"))?;
        let name = match o.get("name") {
            Some((n, np)) => {
                define_obstruction(cx, n, &np, 0, Some(id), names)?;
                Some(cx.name(n, &np)?.to_string())
            }
            None => None,
        };
        out.push(InitialObstruction { name, square, flags, id });
    }
    Ok(out)
}

pub(super) fn parse_player(cx: &Cx, o: &Obj, settings: &Settings) -> Res<PlayerId> {
    match o.get("player") {
        Some((n, p)) => {
            let max = u32::from(settings.players);
            let player = cx.uint(n, &p, 255)?;
            if player > u64::from(max) {
                return Err(cx.err(n, &p, format!("expected a player in 0..={max} (settings.players), found {player}")));
            }
            Ok(player as u8)
        }
        None if settings.players >= 1 => Ok(1),
        None => Err(cx.err(o.node, &o.path, "missing field `player` (settings.players is 0, so only player 0 exists)")),
    }
}

pub(super) fn parse_comment(cx: &Cx, o: &Obj) -> Res<Option<String>> {
    match o.get("comment") {
        Some((n, p)) => Ok(Some(cx.string(n, &p, MAX_DESCRIPTION_BYTES)?.to_string())),
        None => Ok(None),
    }
}

/// The spawn fields `class`, `at`, `count`, `radius`, `speed` of a units entry or a spawn command.
pub(super) fn parse_spawn_fields(cx: &Cx, o: &Obj, classes: &ClassSet, group: Option<usize>) -> Res<SpawnSpec> {
    let class = match o.get("class") {
        Some((n, p)) => {
            let class = parse_class(cx, n, &p, classes)?;
            let movement =
                PassClass::new(class).and_then(|c| classes.get(c)).is_some_and(|d| d.obstructions != ObstructionMode::Foundation);
            if !movement {
                return Err(cx.err(n, &p, "expected a movement class (a foundation class is for buildings)"));
            }
            class
        }
        None => 0,
    };
    let (an, ap) = o.req(cx, "at")?;
    let at = cx.pos(an, &ap)?;
    let count = match o.get("count") {
        Some((n, p)) => cx.u32_in(n, &p, 1, 256)? as u16,
        None => 1,
    };
    let radius = o.fixed_or(cx, "radius", DEFAULT_RADIUS)?;
    if radius <= Fixed::ZERO || radius > Fixed::from_num(8) {
        let (n, p) = o.get("radius").unwrap_or((o.node, o.path.clone()));
        return Err(cx.err(n, &p, format!("expected a radius in (0, 8], found {radius}")));
    }
    let speed = o.fixed_or(cx, "speed", DEFAULT_SPEED)?;
    if speed <= Fixed::ZERO || speed > Fixed::from_num(64) {
        let (n, p) = o.get("speed").unwrap_or((o.node, o.path.clone()));
        return Err(cx.err(n, &p, format!("expected a speed in (0, 64], found {speed}")));
    }
    Ok(SpawnSpec { group, class, at, count, radius, speed })
}

#[allow(clippy::too_many_arguments)]
/// A waypoint network: `{"class", "range", "points"}` (points in scenario coordinates, each on the
/// map; an empty list removes the class's network in `set_waypoints`).
pub(super) fn parse_waypoint_net(
    cx: &Cx,
    node: &Node,
    path: &str,
    classes: &ClassSet,
    desc: &WorldDesc,
    origin: WorldPos,
) -> Res<WaypointNet> {
    let o = cx.obj(node, path, &["class", "range", "points"])?;
    let (cn, cp) = o.req(cx, "class")?;
    let class = parse_class(cx, cn, &cp, classes)?;
    let (rn, rp) = o.req(cx, "range")?;
    let range = cx.u32_in(rn, &rp, 1, sim::waypoint::MAX_NET_RANGE)?;
    let (pn, pp) = o.req(cx, "points")?;
    let cell = i128::from(desc.grid.cell_size.to_bits());
    let (w, h) = (i128::from(desc.grid.width) * cell, i128::from(desc.grid.height) * cell);
    let mut points = Vec::new();
    for (k, item) in cx.array(pn, &pp, sim::waypoint::MAX_NET_WAYPOINTS)?.iter().enumerate() {
        let ip = format!("{pp}[{k}]");
        let at = cx.pos(item, &ip)?;
        let (x, z) =
            (i128::from(at.x.to_bits()) - i128::from(origin.x.to_bits()), i128::from(at.z.to_bits()) - i128::from(origin.z.to_bits()));
        if x < 0 || z < 0 || x >= w || z >= h {
            return Err(cx.err(item, &ip, "expected a waypoint on the map"));
        }
        points.push(at);
    }
    Ok(WaypointNet { class, range, points })
}
