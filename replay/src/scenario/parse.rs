//! Reading a scenario text: serde reads the file model ([`super::file`]), then the top-level
//! fields, settings, classes, obstructions and spawns are checked and turned into the scenario.

use serde_json::Value;

use super::file::{EntryIn, Head, MotionIn, NetIn, ObstructionIn, Root, SettingsIn, TextRefIn, UnitIn};
use super::*;

pub(super) fn parse_text(
    text: &str,
    origin: &str,
    resolve: &mut dyn FnMut(&str) -> Result<String, String>,
    rulesets: &crate::rules::Rulesets,
) -> Res<Scenario> {
    // The format and version first, before the keys are checked: a newer version may have keys
    // this one does not know, and its error should be about the version.
    let Object(head): Object<Head> = from_text(text, origin)?;
    let cx = Cx { origin, text, version: SCENARIO_VERSION, rulesets, rules: None };
    if head.format.0 != FORMAT_NAME {
        return Err(cx.err("format", format!("expected \"{FORMAT_NAME}\", found {:?}", head.format.0)));
    }
    let version = head.version.0;
    if !(u64::from(OLDEST_SCENARIO_VERSION)..=u64::from(SCENARIO_VERSION)).contains(&version) {
        return Err(cx.err(
            "version",
            format!(
                "expected version {OLDEST_SCENARIO_VERSION} to {SCENARIO_VERSION}, found version {version} (this program reads versions {OLDEST_SCENARIO_VERSION} to {SCENARIO_VERSION})"
            ),
        ));
    }
    // From here on, keys and commands of later versions are refused (`Cx::since`).
    let mut cx = Cx { version: head.version.get(), ..cx };
    let Object(root): Object<Root> = from_text(text, origin)?;
    if let Some(name) = &root.rules {
        cx.since("rules", "rules")?;
        let ruleset = cx.rulesets.find(&name.0).ok_or_else(|| {
            cx.err("rules", format!("expected a ruleset this program knows ({}), found {:?}", cx.rulesets.known(), name.0))
        })?;
        cx.rules = Some(ruleset);
    }
    parse_root(&cx, root, resolve)
}

fn parse_root(cx: &Cx, root: Root, resolve: &mut dyn FnMut(&str) -> Result<String, String>) -> Res<Scenario> {
    let name = root.name.0;
    let description = root.description.map(|d| d.0);
    let turns = root.turns.get();
    let settings = match &root.settings {
        Some(s) => parse_settings(cx, s, "settings")?,
        None => Settings::default(),
    };
    let (classes_spec, classes) = match &root.classes {
        Some(value) => parse_classes(cx, value, "classes", resolve)?,
        None => (ClassesSpec::ZeroAd, ClassSet::zero_ad_defaults()),
    };
    let map = parse_map_field(cx, root.map, "map", &classes, resolve)?;
    let mut names = Names::default();
    let first_id = map.obstructions.iter().map(|(id, _)| id.0.saturating_add(1)).max().unwrap_or(1);
    let obstructions = match root.obstructions {
        Some(list) => parse_obstructions(cx, list.0, "obstructions", first_id, &mut names)?,
        None => Vec::new(),
    };
    let mut waypoints: Vec<WaypointNet> = Vec::new();
    if let Some(list) = root.waypoints {
        cx.since("waypoints", "waypoints")?;
        for (k, item) in list.0.into_iter().enumerate() {
            let path = format!("waypoints[{k}]");
            let net = parse_waypoint_net(cx, item, &path, &classes, &map.desc, map.origin)?;
            if net.points.is_empty() {
                return Err(cx.err(&path, "expected at least one waypoint"));
            }
            if waypoints.iter().any(|w| w.class == net.class) {
                return Err(cx.err(&path, "expected one network per class, found a second for this class"));
            }
            waypoints.push(net);
        }
        waypoints.sort_by_key(|w| w.class);
    }
    let mut seqs: BTreeMap<PlayerId, u32> = BTreeMap::new();
    let mut entries = Vec::new();
    for (k, unit) in root.units.map(|u| u.0).unwrap_or_default().into_iter().enumerate() {
        let path = format!("units[{k}]");
        let UnitIn { name, player, class, at, count, radius, speed, turn_rate, comment } = unit;
        let player = parse_player(cx, player, &path, &settings)?;
        let group = define_group(cx, &name, &join(&path, "name"), 0, &mut names)?;
        let spawn = parse_spawn_fields(cx, &path, SpawnFields { class, at, count, radius, speed, turn_rate }, &classes, Some(group))?;
        names.group_spawn[group].1 = u32::from(spawn.count);
        let comment = comment.map(|c| c.0);
        entries.push(Entry { turn: 0, player, seq: next_seq(&mut seqs, player), comment, action: Action::Spawn(spawn) });
    }
    let n_unit_entries = entries.len();
    for (k, item) in root.script.map(|s| s.0).unwrap_or_default().into_iter().enumerate() {
        let path = format!("script[{k}]");
        let entry: EntryIn = item;
        let entry = parse_entry(cx, entry, &path, &settings, &classes, &map.desc, map.origin, &mut names, &mut seqs)?;
        entries.push(entry);
    }
    let mut schedule: Vec<usize> = (0..entries.len()).collect();
    schedule.sort_by_key(|&k| (entries[k].turn, entries[k].player, entries[k].seq));
    let mut desc = map.desc;
    desc.jump_table_classes = map.jump_tables;
    desc.landmark_classes = map.landmarks;
    let bots = parse_bots(cx, root.bots.map(|b| b.0).unwrap_or_default(), &settings)?;
    let mut scenario = Scenario {
        rules: cx.rules.cloned(),
        bots,
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

/// `bots`: distinct seats of the game, each one the scenario's rules have a bot for.
fn parse_bots(cx: &Cx, list: Vec<super::file::BotIn>, settings: &Settings) -> Res<Vec<(PlayerId, u64)>> {
    let mut bots: Vec<(PlayerId, u64)> = Vec::new();
    for (k, b) in list.into_iter().enumerate() {
        let path = format!("bots[{k}]");
        cx.since(&path, "bots")?;
        let player = PlayerId(b.player.get());
        if player.0 > settings.players {
            return Err(
                cx.err(&join(&path, "player"), format!("expected a player of the game (1 to {}), found {player}", settings.players))
            );
        }
        if bots.iter().any(|(p, _)| *p == player) {
            return Err(cx.err(&join(&path, "player"), format!("player {player} has a bot already")));
        }
        let seed = b.seed.map_or(u64::from(player.0), |s| s.0);
        match cx.rules {
            Some(rules) if rules.bot(player, seed).is_some() => bots.push((player, seed)),
            Some(rules) => return Err(cx.err(&path, format!("the {} rules have no bots", rules.name()))),
            None => return Err(cx.err(&path, "a bot, and the scenario names no game rules (add a top-level \"rules\")")),
        }
    }
    Ok(bots)
}

pub(super) fn next_seq(seqs: &mut BTreeMap<PlayerId, u32>, player: PlayerId) -> u32 {
    let seq = seqs.entry(player).or_insert(0);
    let out = *seq;
    *seq = seq.saturating_add(1);
    out
}

fn parse_settings(cx: &Cx, s: &SettingsIn, path: &str) -> Res<Settings> {
    let mut out = Settings::default();
    if let Some(v) = s.turn_ms {
        out.turn_ms = v.get();
    }
    if let Some(v) = s.players {
        out.players = v.get();
    }
    if let Some(v) = s.seed {
        out.seed = v.get();
    }
    if let Some(v) = s.max_paths_per_turn {
        out.max_paths_per_turn = v.get();
    }
    if let Some(v) = s.long_search_budget {
        cx.since(&join(path, "long_search_budget"), "settings.long_search_budget")?;
        out.long_search_budget = v.get();
    }
    if let Some(m) = &s.motion {
        out.motion = parse_motion(cx, m, &join(path, "motion"))?;
    }
    Ok(out)
}

fn parse_motion(cx: &Cx, o: &MotionIn, path: &str) -> Res<MotionSettings> {
    let mut m = MotionSettings::default();
    if o.turn_rate.is_some() {
        cx.since(&join(path, "turn_rate"), "settings.motion.turn_rate")?;
    }
    let fixed_fields: [(Option<Fixed>, &mut Fixed); 10] = [
        (o.short_range, &mut m.short_range),
        (o.short_range_step, &mut m.short_range_step),
        (o.short_range_max, &mut m.short_range_max),
        (o.rejoin_radius, &mut m.rejoin_radius),
        (o.core_fraction, &mut m.core_fraction),
        (o.influence, &mut m.influence),
        (o.nudge_distance, &mut m.nudge_distance),
        (o.replan_trigger, &mut m.replan_trigger),
        (o.moved_epsilon, &mut m.moved_epsilon),
        (o.turn_rate, &mut m.turn_rate),
    ];
    for (value, slot) in fixed_fields {
        if let Some(v) = value {
            *slot = v;
        }
    }
    if let Some(v) = o.short_node_budget {
        m.short_node_budget = v.get();
    }
    if let Some(v) = o.max_short_paths_per_turn {
        m.max_short_paths_per_turn = v.get();
    }
    if let Some(v) = o.long_replan_every {
        m.long_replan_every = v.get();
    }
    if let Some(v) = o.give_up_turns {
        m.give_up_turns = v.get();
    }
    if let Some(v) = o.push_iterations {
        m.push_iterations = v.get();
    }
    if let Some(v) = o.replan_cooldown_ms {
        m.replan_cooldown_ms = v.get();
    }
    m.check().map_err(|e| cx.err(path, format!("expected motion settings within their limits: {e}")))?;
    Ok(m)
}

/// `{"file": NAME}` or `{"text": TEXT}`, at most [`MAX_FILE_BYTES`]; `path` is the object's.
pub(super) fn parse_text_ref(cx: &Cx, r: TextRefIn, path: &str, resolve: &mut dyn FnMut(&str) -> Result<String, String>) -> Res<TextRef> {
    let kind = one_of(cx, path, &[("file", r.file.is_some()), ("text", r.text.is_some())])?;
    let p = join(path, kind);
    let (text, file) = match (r.file, r.text) {
        (Some(name), _) => {
            let text = resolve(&name.0).map_err(|e| cx.err(&p, format!("expected a readable file: {e}")))?;
            (text, Some(name.0))
        }
        (None, text) => (text.unwrap_or_default(), None),
    };
    if text.len() > MAX_FILE_BYTES {
        return Err(cx.err(&p, format!("expected at most {MAX_FILE_BYTES} bytes, found {}", text.len())));
    }
    Ok(TextRef { text, file })
}

/// An error inside a referenced text: in the file itself when it came from one, else at the
/// inline string (the value at `path`) with the line inside it.
/// `source` is the referenced text's own error.
pub(super) fn text_err(
    cx: &Cx,
    path: &str,
    src: &TextRef,
    (line, column): (Option<u32>, Option<u32>),
    message: String,
    source: Box<dyn std::error::Error + Send + Sync>,
) -> ScenarioError {
    let err = match &src.file {
        Some(file) => ScenarioError { origin: file.clone(), line, column, path: path.to_string(), message, source: None },
        None => match line {
            Some(line) => cx.err(path, format!("inline text line {line}: {message}")),
            None => cx.err(path, message),
        },
    };
    ScenarioError { source: Some(source), ..err }
}

fn parse_classes(
    cx: &Cx,
    value: &Value,
    path: &str,
    resolve: &mut dyn FnMut(&str) -> Result<String, String>,
) -> Res<(ClassesSpec, ClassSet)> {
    if let Value::String(s) = value {
        if s == "zero_ad" {
            return Ok((ClassesSpec::ZeroAd, ClassSet::zero_ad_defaults()));
        }
        return Err(cx.err(path, format!("expected \"zero_ad\" or {{\"file\"|\"text\": ...}}, found {s:?}")));
    }
    let r: TextRefIn = serde_path_to_error::deserialize(value).map_err(|e| {
        let inner = join(path, &e.path().to_string()).trim_end_matches('.').to_string();
        cx.err(&inner, e.into_inner().to_string())
    })?;
    let src = parse_text_ref(cx, r, path, resolve)?;
    match ClassSet::parse_json(&src.text) {
        Ok(set) => Ok((ClassesSpec::Text(src.text), set)),
        Err(e) => {
            let source = Box::new(e.clone());
            let (line, column, message) = match e {
                ClassFileError::Syntax(json) => (Some(json.line), Some(json.column), json.message),
                ClassFileError::Invalid { at, problem, .. } => (at.map(|p| p.line), at.map(|p| p.column), problem.to_string()),
                other => (None, None, other.to_string()),
            };
            let to_u32 = |v: Option<usize>| v.and_then(|v| u32::try_from(v).ok());
            Err(text_err(cx, path, &src, (to_u32(line), to_u32(column)), format!("class file: {message}"), source))
        }
    }
}

/// A class by name or index.
pub(super) fn parse_class(cx: &Cx, value: &Value, path: &str, classes: &ClassSet) -> Res<PassClass> {
    match value {
        Value::String(name) => classes.by_name(name).map_err(|_| {
            let list = classes.iter().map(|(_, d)| format!("{:?}", d.name)).collect::<Vec<_>>().join(", ");
            cx.err(path, format!("unknown class {name:?}, expected one of {list}"))
        }),
        Value::Number(_) => {
            let max = u64::from(classes.len().saturating_sub(1));
            let index = cx.uint(value, path, max)? as u8;
            PassClass::new(index).ok_or_else(|| cx.err(path, format!("expected a class index below {MAX_CLASSES}, found {index}")))
        }
        other => Err(cx.err(path, format!("expected a class name or index, found {}", kind(other)))),
    }
}

/// Obstruction flags: a name (`none`, `pathfinding`, `foundation`, `static`), a number 0..=3, or
/// a list of names.
pub(super) fn parse_flags(cx: &Cx, value: &Value, path: &str) -> Res<u8> {
    let by_name = |value: &Value, path: &str| {
        let Value::String(name) = value else { return Err(cx.err(path, format!("expected a string, found {}", kind(value)))) };
        match name.as_str() {
            "none" => Ok(0),
            "pathfinding" => Ok(ObstructionFlags::BLOCK_PATHFINDING),
            "foundation" => Ok(ObstructionFlags::BLOCK_FOUNDATION),
            "static" => Ok(ObstructionFlags::STATIC.0),
            other => Err(cx.err(path, format!("expected \"none\", \"pathfinding\", \"foundation\" or \"static\", found {other:?}"))),
        }
    };
    match value {
        Value::String(_) => by_name(value, path),
        Value::Number(_) => Ok(cx.uint(value, path, 3)? as u8),
        Value::Array(items) if items.len() <= 4 => {
            let mut flags = 0;
            for (k, item) in items.iter().enumerate() {
                flags |= by_name(item, &format!("{path}[{k}]"))?;
            }
            Ok(flags)
        }
        other => Err(cx.err(path, format!("expected obstruction flags (a name, a list of names or 0..=3), found {}", kind(other)))),
    }
}

/// The square fields `x`, `z`, `w`, `h`, `degrees` (0 by default) of the object at `path`.
pub(super) fn parse_square(cx: &Cx, path: &str, x: Fixed, z: Fixed, w: Fixed, h: Fixed, degrees: Option<Fixed>) -> Res<SquareSpec> {
    let square = SquareSpec { x, z, w, h, degrees: degrees.unwrap_or(Fixed::ZERO) };
    if let Err(e) = pathing::raster::editor_square(square.x, square.z, square.w, square.h, square.degrees) {
        return Err(cx.err(path, format!("expected a square with sizes ≥ 0 and coordinates in range: {e}")));
    }
    if square.w <= Fixed::ZERO && square.h <= Fixed::ZERO {
        return Err(cx.err(path, "expected a square with a positive width or height"));
    }
    Ok(square)
}

/// A new obstruction name usable from turn `ready`.
pub(super) fn define_obstruction(cx: &Cx, name: &Name, path: &str, ready: u32, initial: Option<u32>, names: &mut Names) -> Res<usize> {
    let name = name.0.as_str();
    if names.obstructions.contains_key(name) {
        return Err(cx.err(path, format!("expected a new obstruction name, found {name:?} a second time")));
    }
    let index = names.obstruction_names.len();
    names.obstructions.insert(name.to_string(), index);
    names.obstruction_names.push(name.to_string());
    names.obstruction_ready.push(ready);
    names.obstruction_initial.push(initial.map(ObstructionId));
    Ok(index)
}

fn parse_obstructions(cx: &Cx, list: Vec<ObstructionIn>, path: &str, first_id: u32, names: &mut Names) -> Res<Vec<InitialObstruction>> {
    let mut out = Vec::new();
    for (k, o) in list.into_iter().enumerate() {
        let p = format!("{path}[{k}]");
        let square = parse_square(cx, &p, o.x, o.z, o.w, o.h, o.degrees)?;
        let flags = match &o.flags {
            Some(v) => parse_flags(cx, v, &join(&p, "flags"))?,
            None => ObstructionFlags::STATIC.0,
        };
        let id = first_id.checked_add(k as u32).filter(|&id| id != u32::MAX).ok_or_else(|| cx.err(&p, "obstruction ids exhausted"))?;
        let name = match o.name {
            Some(n) => {
                define_obstruction(cx, &n, &join(&p, "name"), 0, Some(id), names)?;
                Some(n.0)
            }
            None => None,
        };
        out.push(InitialObstruction { name, square, flags, id });
    }
    Ok(out)
}

/// The `player` of the object at `path` (1 when not given), at most `settings.players`.
pub(super) fn parse_player(cx: &Cx, player: Option<Int<0, 255>>, path: &str, settings: &Settings) -> Res<PlayerId> {
    match player {
        Some(player) => {
            let max = settings.players;
            let player: u8 = player.get();
            if player > max {
                return Err(cx.err(&join(path, "player"), format!("expected a player in 0..={max} (settings.players), found {player}")));
            }
            Ok(PlayerId(player))
        }
        None if settings.players >= 1 => Ok(PlayerId(1)),
        None => Err(cx.err(path, "missing field `player` (settings.players is 0, so only player 0 exists)")),
    }
}

/// The spawn fields of a `units` entry or a `spawn` command.
pub(super) struct SpawnFields {
    pub(super) class: Option<Value>,
    pub(super) at: Point,
    pub(super) count: Option<Int<1, { sim::MAX_SPAWN_COUNT as u64 }>>,
    pub(super) radius: Option<Fixed>,
    pub(super) speed: Option<Fixed>,
    pub(super) turn_rate: Option<Fixed>,
}

/// The spawn fields `class`, `at`, `count`, `radius`, `speed`, `turn_rate` of the object at `path`.
pub(super) fn parse_spawn_fields(cx: &Cx, path: &str, f: SpawnFields, classes: &ClassSet, group: Option<usize>) -> Res<SpawnSpec> {
    let class = match &f.class {
        Some(v) => {
            let p = join(path, "class");
            let class = parse_class(cx, v, &p, classes)?;
            let movement = classes.get(class).is_some_and(|d| d.obstructions != ObstructionMode::Foundation);
            if !movement {
                return Err(cx.err(&p, "expected a movement class (a foundation class is for buildings)"));
            }
            class
        }
        None => PassClass::of(0),
    };
    let count = f.count.map_or(1, |c| c.get());
    let radius = f.radius.unwrap_or(DEFAULT_RADIUS);
    if radius <= Fixed::ZERO || radius > Fixed::from_num(8) {
        let p = if f.radius.is_some() { join(path, "radius") } else { path.to_string() };
        return Err(cx.err(&p, format!("expected a radius in (0, 8], found {radius}")));
    }
    let speed = f.speed.unwrap_or(DEFAULT_SPEED);
    if speed <= Fixed::ZERO || speed > Fixed::from_num(64) {
        let p = if f.speed.is_some() { join(path, "speed") } else { path.to_string() };
        return Err(cx.err(&p, format!("expected a speed in (0, 64], found {speed}")));
    }
    if let Some(rate) = f.turn_rate {
        let p = join(path, "turn_rate");
        cx.since(&p, "spawn turn_rate")?;
        if !sim::TURN_RATE_LIMITS.contains(&rate) {
            return Err(cx.err(&p, format!("expected a turn rate in 1..=3600 degrees per second, found {rate}")));
        }
    }
    Ok(SpawnSpec { group, class, at: f.at.0, count, radius, speed, turn_rate: f.turn_rate })
}

/// A waypoint network: `{"class", "range", "points"}` (points in scenario coordinates, each on the
/// map; an empty list removes the class's network in `set_waypoints`).
pub(super) fn parse_waypoint_net(
    cx: &Cx,
    net: NetIn,
    path: &str,
    classes: &ClassSet,
    desc: &WorldDesc,
    origin: WorldPos,
) -> Res<WaypointNet> {
    let class = parse_class(cx, &net.class, &join(path, "class"), classes)?;
    let range = net.range.get();
    let cell = i128::from(desc.grid.cell_size.to_bits());
    let (w, h) = (i128::from(desc.grid.width) * cell, i128::from(desc.grid.height) * cell);
    let mut points = Vec::new();
    for (k, at) in net.points.0.into_iter().enumerate() {
        let at = at.0;
        let (x, z) =
            (i128::from(at.x.to_bits()) - i128::from(origin.x.to_bits()), i128::from(at.z.to_bits()) - i128::from(origin.z.to_bits()));
        if x < 0 || z < 0 || x >= w || z >= h {
            return Err(cx.err(&format!("{path}.points[{k}]"), "expected a waypoint on the map"));
        }
        points.push(at);
    }
    Ok(WaypointNet { class, range, points })
}
