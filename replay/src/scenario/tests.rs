//! Unit tests of scenario parsing, the canonical text and the script runner.

use super::*;

const EXAMPLES: [&str; 6] = ["skirmish.json", "reference.json", "maze.json", "gates.json", "grid.json", "formations.json"];

fn example_path(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios").join(name)
}

fn refuse_files(name: &str) -> Result<String, String> {
    Err(format!("no file access ({name})"))
}

/// A ruleset with one command, a number, for the `rules` and `game` keys.
#[derive(Clone, Debug, Default)]
struct Nop;

impl sim::rules::Rules for Nop {
    const NAME: &'static str = "nop";
    const VERSION: u32 = 1;
    type Unit = ();
    type Object = ();
    type Player = ();
    type State = ();
    type Command = u8;
    type Event = ();
    type Reject = ();
    fn new_unit(&self, (): &(), _: &sim::Unit) {}
    fn check(&self, _: &sim::rules::View<'_, Self>, _: PlayerId, _: &u8) -> Result<(), ()> {
        Ok(())
    }
    fn apply(&self, _: &mut sim::rules::Ctx<'_, Self>, _: PlayerId, _: &u8) {}
    fn step(&self, _: &mut sim::rules::Ctx<'_, Self>, _: &[Event]) {}
}

/// The bot of `nop`: it sends command 1 every turn.
struct NopBot;

impl crate::rules::Bot for NopBot {
    fn commands(&mut self, _: &World) -> Vec<CommandKind> {
        vec![sim::rules::command::<Nop>(&1)]
    }
}

/// Parses `text` with no file access, knowing the ruleset `nop` (with its bot).
fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    let rulesets = crate::rules::Rulesets::none().with(crate::rules::RulesOf::<Nop>::new().with_bots(|_, _| Box::new(NopBot)));
    Scenario::parse_with(text, "test.json", &mut refuse_files, &rulesets)
}

/// A minimal valid scenario with `extra` top-level fields appended (each starting with a comma).
fn minimal(extra: &str) -> String {
    format!(
        "{{\"format\": \"phalanx-scenario\", \"version\": 1, \"name\": \"t\", \"turns\": 10,\n\"settings\": {{\"players\": 2}},\n\"map\": {{\"generated\": {{\"tiles\": 16, \"seed\": 1}}}},\n\"units\": [{{\"name\": \"a\", \"player\": 1, \"at\": [30, 30], \"count\": 3}}, {{\"name\": \"b\", \"player\": 2, \"at\": [40, 40], \"count\": 2}}]{extra}}}"
    )
}

/// Steps a fresh world of `scenario` through `turns` turns; the hashes and the events.
fn run(scenario: &Scenario, turns: u32) -> (Vec<[u8; 32]>, Vec<Event>) {
    let mut world = scenario.world().unwrap();
    let (mut hashes, mut events) = (Vec::new(), Vec::new());
    run_turns(scenario, &mut world, turns, |report| {
        hashes.push(report.hash);
        events.extend(report.events.iter().cloned());
    });
    (hashes, events)
}

/// The one place the tests check an error: the message has `message` in it, the path is `path`,
/// and the position is `line` (when given).
#[track_caller]
fn check_error(text: &str, path: &str, line: Option<u32>, message: &str) {
    let err = parse(text).expect_err("the text must be refused");
    assert_eq!(err.path, path, "{err}");
    assert!(err.message.contains(message), "expected {message:?} in: {err}");
    if line.is_some() {
        assert_eq!(err.line, line, "{err}");
        assert!(err.column.is_some(), "{err}");
    }
    assert_eq!(err.origin, "test.json");
    let shown = err.to_string();
    assert!(shown.starts_with("test.json"), "{shown}");
    assert!(!shown.contains('\n'), "{shown}");
}

#[test]
fn every_example_parses_and_builds_its_world() {
    for name in EXAMPLES {
        let scenario = Scenario::load(&example_path(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(scenario.turns() >= 100, "{name}");
        assert!(!scenario.group_names().is_empty(), "{name}");
        let world = scenario.world().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(world.turn(), 0);
        assert_eq!(world.units().count(), 0, "{name}: units come from the turn-0 commands");
    }
    let skirmish = Scenario::load(&example_path("skirmish.json")).unwrap();
    let world = skirmish.world().unwrap();
    // The generated map's 16 obstructions, then the wall pieces and the gate as ids 17, 18, 19.
    let ids: Vec<u32> = world.nav().obstructions().keys().map(|id| id.0).collect();
    assert_eq!(ids.len(), 19, "{ids:?}");
    assert_eq!(ids[16..], [17, 18, 19]);
    assert_eq!(skirmish.settings().players, 2);
    assert_eq!(skirmish.settings().seed, 42);
}

#[test]
fn canonical_text_round_trips() {
    for name in EXAMPLES {
        let scenario = Scenario::load(&example_path(name)).unwrap();
        let again =
            Scenario::parse(scenario.canonical_text(), "<replay header>", &mut refuse_files).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(again.canonical_text(), scenario.canonical_text(), "{name}");
        assert_eq!(again.digest(), scenario.digest(), "{name}");
        assert_eq!(again.digest(), *blake3::hash(scenario.canonical_text().as_bytes()).as_bytes());
        assert_eq!(again, scenario);
        // The same world: equal state hashes before any turn.
        assert_eq!(again.world().unwrap().state_hash(), scenario.world().unwrap().state_hash(), "{name}");
        assert!(!scenario.canonical_text().contains("\"file\""), "{name}: every file is inlined");
    }
}

/// `map.landmarks` gives classes landmark tables: the world's description says so, the
/// canonical text keeps them (and names the key only then), the state hash tells the two worlds
/// apart, and more than the snapshot's limit is refused at the key.
#[test]
fn landmark_tables_are_part_of_the_map_and_of_the_state() {
    // Landmark tables came in version 4.
    let minimal = |extra: &str| minimal(extra).replace("\"version\": 1", "\"version\": 4");
    let plain = parse(&minimal("")).unwrap();
    let with = parse(&minimal("").replace("\"seed\": 1}}", "\"seed\": 1}, \"landmarks\": [\"default\", 1]}")).unwrap();
    let (plain_world, world) = (plain.world().unwrap(), with.world().unwrap());
    assert_eq!(plain_world.nav().desc().landmark_classes, 0);
    assert_eq!(world.nav().desc().landmark_classes, 0b11);
    for k in 0..8u8 {
        let nav = world.nav().class_nav(pathing::PassClass::new(k).unwrap());
        assert_eq!(nav.is_some_and(|n| n.landmarks().is_some()), k < 2, "class {k}");
    }
    assert!(!plain.canonical_text().contains("landmarks"));
    assert!(with.canonical_text().contains("\"jump_tables\": [], \"landmarks\": [\"default\", \"large\"]}"), "{}", with.canonical_text());
    let again = Scenario::parse(with.canonical_text(), "<replay header>", &mut refuse_files).unwrap();
    assert_eq!(again.canonical_text(), with.canonical_text());
    assert_ne!(plain_world.state_hash(), world.state_hash());
    let too_many = minimal("").replace("\"tiles\": 16, \"seed\": 1}}", "\"tiles\": 256, \"seed\": 1}, \"landmarks\": [0, 1, 2, 3, 6]}");
    check_error(&too_many, "map.landmarks", Some(3), "landmark tables for at most 4194304 navcells in all");
    let foundation = minimal("").replace("\"seed\": 1}}", "\"seed\": 1}, \"landmarks\": [\"default\", \"building-land\"]}");
    check_error(&foundation, "map.landmarks[1]", Some(3), "expected a movement class, found the foundation class \"building-land\"");
    let foundation = minimal("").replace("\"seed\": 1}}", "\"seed\": 1}, \"jump_tables\": [4]}");
    let old = parse(&foundation.replace("\"version\": 4", "\"version\": 3")).unwrap(); // ignored, as it always was
    assert!(old.canonical_text().contains("\"jump_tables\": []"), "{}", old.canonical_text());
    check_error(&foundation, "map.jump_tables[0]", Some(3), "expected a movement class");
}

/// A file declaring `version: 1` that used formation commands, waypoint networks or commands, or
/// landmark tables ran as if it had declared the version that introduced them, so the version
/// told nothing about what a file needs. Every row of `INTRODUCED` is now refused in a file of an
/// earlier version, naming the key and the version that introduced it, and read from that
/// version on.
#[test]
fn a_key_newer_than_the_files_version_was_accepted() {
    // A use of each row's key, as (key, JSON path of the use, the scenario using it). The uses of
    // a formation need one formed first; the refused versions go without it (the newer key is
    // refused before any name in it is looked up), so that the key refused is the row's.
    let with_script = |entries: &str| minimal(&format!(",\n\"script\": [\n{entries}]"));
    let form = "{\"turn\": 1, \"player\": 1, \"form_group\": {\"name\": \"f\", \"units\": [\"a\"], \"layout\": \"box\"}},\n";
    let uses: Vec<(&str, &str, String)> = vec![
        ("form_group", "script[0].form_group", with_script(form.trim_end_matches(",\n"))),
        (
            "move_formation",
            "script[1].move_formation",
            with_script(&format!(
                "{form}{{\"turn\": 2, \"player\": 1, \"move_formation\": {{\"formation\": \"f\", \"goal\": {{\"point\": [50, 50]}}}}}}"
            )),
        ),
        (
            "set_layout",
            "script[1].set_layout",
            with_script(&format!("{form}{{\"turn\": 2, \"player\": 1, \"set_layout\": {{\"formation\": \"f\", \"layout\": \"line\"}}}}")),
        ),
        (
            "disband",
            "script[1].disband",
            with_script(&format!("{form}{{\"turn\": 2, \"player\": 1, \"disband\": {{\"formation\": \"f\"}}}}")),
        ),
        ("waypoints", "waypoints", minimal(", \"waypoints\": [{\"class\": \"default\", \"range\": 8, \"points\": [[10, 10], [20, 20]]}]")),
        (
            "set_waypoints",
            "script[0].set_waypoints",
            with_script(
                "{\"turn\": 1, \"player\": 0, \"set_waypoints\": {\"class\": \"default\", \"range\": 8, \"points\": [[10, 10], [20, 20]]}}",
            ),
        ),
        (
            "set_waypoint_priorities",
            "script[0].set_waypoint_priorities",
            with_script(
                "{\"turn\": 1, \"player\": 1, \"set_waypoint_priorities\": {\"class\": \"default\", \"entries\": [{\"waypoint\": 0, \"extra_cost\": 3}]}}",
            ),
        ),
        (
            "move_by_waypoints",
            "script[0].move_by_waypoints",
            with_script("{\"turn\": 1, \"player\": 1, \"move_by_waypoints\": {\"units\": [\"a\"], \"goal\": [50, 50]}}"),
        ),
        ("map.landmarks", "map.landmarks", minimal("").replace("\"seed\": 1}}", "\"seed\": 1}, \"landmarks\": [\"default\"]}")),
        (
            "settings.motion.turn_rate",
            "settings.motion.turn_rate",
            minimal("").replace("\"players\": 2}", "\"players\": 2, \"motion\": {\"turn_rate\": 90}}"),
        ),
        (
            "range.kind",
            "script[0].move.goal.range.kind",
            with_script(
                "{\"turn\": 1, \"player\": 2, \"move\": {\"units\": [\"b\"], \"goal\": {\"range\": {\"unit\": \"a\", \"max\": 4, \"kind\": \"ranged\"}}}}",
            ),
        ),
        (
            "spawn_from_building",
            "script[0].spawn_from_building",
            with_script("{\"turn\": 1, \"player\": 1, \"spawn_from_building\": {\"building\": 1, \"count\": 2}}"),
        ),
        ("cancel_spawns", "script[0].cancel_spawns", with_script("{\"turn\": 1, \"player\": 1, \"cancel_spawns\": {\"building\": 1}}")),
        ("spawn turn_rate", "units[0].turn_rate", minimal("").replace("\"count\": 3}", "\"count\": 3, \"turn_rate\": 90}")),
        ("rules", "rules", minimal(", \"rules\": \"nop\"")),
        // A game command needs `rules`, which is refused first in an older file (see below).
        ("game", "script[0].game", minimal(",\n\"rules\": \"nop\",\n\"script\": [{\"turn\": 1, \"player\": 1, \"game\": 7}]")),
        ("bots", "bots[0]", minimal(",\n\"rules\": \"nop\",\n\"bots\": [{\"player\": 2, \"seed\": 9}]")),
        (
            "settings.long_search_budget",
            "settings.long_search_budget",
            minimal("").replace("\"players\": 2}", "\"players\": 2, \"long_search_budget\": 500}"),
        ),
    ];
    let keys: Vec<&str> = uses.iter().map(|(key, _, _)| *key).collect();
    let rows: Vec<&str> = INTRODUCED.iter().map(|(key, _)| *key).collect();
    assert_eq!(keys, rows, "one use per row of INTRODUCED");
    for (key, path, text) in &uses {
        let introduced = introduced_in(key);
        assert!(introduced > OLDEST_SCENARIO_VERSION, "{key}");
        for version in OLDEST_SCENARIO_VERSION..=SCENARIO_VERSION {
            let text = text.replace("\"version\": 1", &format!("\"version\": {version}"));
            if version < introduced {
                let (text, path) =
                    if *key == "form_group" { (text, path.to_string()) } else { (text.replace(form, ""), path.replace("[1]", "[0]")) };
                // The `rules` a game command needs is read (and refused) before the script.
                let (key, path) = if matches!(*key, "game" | "bots") { ("rules", "rules".to_owned()) } else { (*key, path) };
                let expected = format!("`{key}` was introduced in version {introduced}, found version {version}");
                let err = parse(&text).expect_err(key);
                assert_eq!(
                    (err.path.as_str(), err.message.contains(&expected)),
                    (path.as_str(), true),
                    "{key} in version {version}: {err}"
                );
                assert!(err.line.is_some(), "{err}");
            } else {
                parse(&text).unwrap_or_else(|e| panic!("{key} in version {version}: {e}"));
            }
        }
    }
}

#[test]
fn canonical_numbers_read_back_to_the_same_fixed() {
    // Decimals that are not multiples of 2^-16 are rounded once, then written so that they
    // read back to the same value.
    let text = minimal(
        ", \"script\": [{\"turn\": 1, \"player\": 1, \"move\": {\"units\": [\"a\"], \"goal\": {\"circle\": {\"center\": [30.1, 29.987654321], \"radius\": 0.45}}}}]",
    );
    let scenario = parse(&text).unwrap();
    let again = parse(scenario.canonical_text()).unwrap();
    assert_eq!(again.canonical_text(), scenario.canonical_text());
    let Action::Move { goal: Goal::Circle { center, radius }, .. } = &again.entries[2].action else { panic!("a move") };
    assert_eq!(radius.to_bits(), 29491);
    assert_eq!(*center, WorldPos::new(parse_fixed("30.1").unwrap(), parse_fixed("29.987654321").unwrap()));
}

#[test]
fn maze_inlines_its_map() {
    let scenario = Scenario::load(&example_path("maze.json")).unwrap();
    let canonical: serde_json::Value = serde_json::from_str(scenario.canonical_text()).unwrap();
    let inlined = canonical["map"]["movingai"]["text"].as_str().unwrap();
    let file = std::fs::read_to_string(example_path("arena.map")).unwrap();
    assert_eq!(inlined, file);
    assert_eq!(canonical["map"]["cell_size"].to_string(), "1");
}

#[test]
fn file_references_go_through_the_resolver() {
    let text =
        minimal("").replace("\"map\": {\"generated\": {\"tiles\": 16, \"seed\": 1}}", "\"map\": {\"grid\": {\"file\": \"rooms.txt\"}}");
    let mut asked = Vec::new();
    let grid = format!("gridWidth 64\ngridDepth 64\ncellSize 1\n{}", format!("{}\n", "1".repeat(64)).repeat(64));
    let scenario = Scenario::parse(&text, "t.json", &mut |name| {
        asked.push(name.to_string());
        Ok(grid.clone())
    })
    .unwrap();
    assert_eq!(asked, ["rooms.txt"]);
    assert!(scenario.canonical_text().contains("gridWidth 64\\ngridDepth 64"));
    // Refused, the error names the field.
    let err = parse(&text).unwrap_err();
    assert_eq!(err.path, "map.grid.file");
    assert!(err.message.contains("no file access (rooms.txt)"), "{err}");
}

#[test]
fn errors_in_referenced_files_name_the_file_and_line() {
    let text =
        minimal("").replace("\"map\": {\"generated\": {\"tiles\": 16, \"seed\": 1}}", "\"map\": {\"movingai\": {\"file\": \"bad.map\"}}");
    let err = Scenario::parse(&text, "t.json", &mut |_| Ok("type octile\nheight 2\nwidth 2\nmap\n..\n.x\n".to_string())).unwrap_err();
    assert_eq!((err.origin.as_str(), err.line, err.path.as_str()), ("bad.map", Some(6), "map.movingai"), "{err}");
    assert!(err.to_string().starts_with("bad.map:6: at map.movingai: Moving AI map: expected"), "{err}");
    // The map's own error is kept as the source, not only as text.
    let source = std::error::Error::source(&err).expect("a source");
    assert!(source.downcast_ref::<pathing::movingai::ParseError>().is_some(), "{source:?}");
    // Inline, the error is at the string, naming the line inside it.
    let inline = minimal("").replace(
        "\"map\": {\"generated\": {\"tiles\": 16, \"seed\": 1}}",
        "\"map\": {\"movingai\": {\"text\": \"type octile\\nheight 2\\nwidth 2\\nmap\\n..\\n.x\\n\"}}",
    );
    check_error(&inline, "map.movingai", Some(3), "inline text line 6: Moving AI map");
    let classes = minimal(", \"classes\": {\"text\": \"{\\\"classes\\\": []}\"}");
    check_error(&classes, "classes", Some(4), "inline text line 1: class file: expected at least one class");
}

#[test]
fn malformed_inputs_are_refused_with_a_position_or_a_path() {
    // JSON syntax: serde_json's line and column, no path.
    check_error("{\"format\": \"phalanx-scenario\",\n \"version\": 1,,}", "", Some(2), "key must be a string");
    check_error(&(minimal("") + " trailing"), "", Some(4), "trailing characters");
    check_error("", "", Some(1), "EOF");
    let syntax = parse("{,").unwrap_err();
    assert!(std::error::Error::source(&syntax).and_then(|s| s.downcast_ref::<serde_json::Error>()).is_some(), "{syntax:?}");
    // Format and version first, naming both versions.
    check_error(&minimal("").replace("\"version\": 1", "\"version\": 8"), "version", Some(1), "expected version 1 to 7, found version 8");
    check_error(&minimal("").replace("phalanx-scenario", "other"), "format", Some(1), "expected \"phalanx-scenario\"");
    check_error("[1, 2]", "", Some(1), "expected a scenario object");
    // Structure.
    check_error(&minimal("").replace("\"map\": {\"generated\": {\"tiles\": 16, \"seed\": 1}},", ""), "", Some(1), "missing field `map`");
    check_error(&minimal(", \"colour\": 3"), "colour", Some(4), "unknown field `colour`");
    check_error(&minimal(", \"turns\": 3"), "turns", Some(4), "duplicate field `turns`");
    check_error(&minimal("").replace("{\"generated\": {\"tiles\": 16, \"seed\": 1}}", "{}"), "map", Some(3), "expected one of `generated`");
    check_error(
        &minimal("").replace("\"seed\": 1}}", "\"seed\": 1}, \"terrain\": {\"tiles\": [1, 1]}}"),
        "map",
        Some(3),
        "expected only one of",
    );
    check_error(&minimal("").replace("\"tiles\": 16", "\"tiles\": 4096"), "map.generated.tiles", Some(3), "16..=512");
    // Numbers: exact decimals only.
    check_error(&minimal("").replace("[30, 30]", "[30, 1e3]"), "units[0].at[1]", Some(4), "expected a decimal number");
    check_error(&minimal("").replace("[30, 30]", "[30, 99999]"), "units[0].at[1]", Some(4), "within ±16384");
    check_error(&minimal("").replace("\"count\": 3", "\"count\": 5000"), "units[0].count", Some(4), "1..=4096");
    check_error(
        &minimal("").replace("\"version\": 1", "\"version\": 5").replace("\"count\": 3", "\"count\": 3, \"turn_rate\": 0.5"),
        "units[0].turn_rate",
        Some(4),
        "expected a turn rate in 1..=3600",
    );
    check_error(&minimal("").replace("\"count\": 3", "\"count\": 2.5"), "units[0].count", Some(4), "expected an integer");
    check_error(&minimal("").replace("\"count\": 3", "\"count\": -1"), "units[0].count", Some(4), "expected an integer");
    // Names.
    check_error(
        &minimal("").replace("\"count\": 3", "\"count\": 3, \"class\": \"dragon\""),
        "units[0].class",
        Some(4),
        "unknown class \"dragon\"",
    );
    check_error(&minimal("").replace("\"count\": 3", "\"count\": 3, \"class\": 12"), "units[0].class", Some(4), "0..=7");
    check_error(
        &minimal("").replace("\"count\": 3", "\"count\": 3, \"class\": \"building-land\""),
        "units[0].class",
        Some(4),
        "expected a movement class",
    );
    check_error(&minimal("").replace("\"name\": \"b\"", "\"name\": \"a\""), "units[1].name", Some(4), "a second time");
    check_error(&minimal("").replace("\"player\": 2", "\"player\": 3"), "units[1].player", Some(4), "0..=2");
    let script = |entry: &str| minimal(&format!(",\n\"script\": [\n{entry}]"));
    check_error(
        &script("{\"turn\": 1, \"player\": 1, \"move\": {\"units\": [\"c\"], \"goal\": {\"point\": [1, 1]}}}"),
        "script[0].move.units[0]",
        Some(6),
        "unknown group \"c\"",
    );
    check_error(
        &script("{\"turn\": 0, \"player\": 1, \"move\": {\"units\": [\"a\"], \"goal\": {\"point\": [1, 1]}}}"),
        "script[0].move.units[0]",
        Some(6),
        "from turn 1 on",
    );
    check_error(
        &script(
            "{\"turn\": 1, \"player\": 1, \"move\": {\"units\": [\"a\"], \"goal\": {\"range\": {\"obstruction\": \"keep\", \"max\": 3}}}}",
        ),
        "script[0].move.goal.range.obstruction",
        Some(6),
        "unknown obstruction \"keep\"",
    );
    check_error(
        &script("{\"turn\": 1, \"player\": 1, \"move\": {\"units\": [\"a\"], \"goal\": {\"range\": {\"unit\": \"a\", \"max\": 3}}}}"),
        "script[0].move.goal",
        Some(6),
        "outside the moving groups",
    );
    check_error(
        &script("{\"turn\": 1, \"player\": 1, \"set_area\": {\"name\": \"door\", \"available\": true}}"),
        "script[0].set_area.name",
        Some(6),
        "the map has no areas",
    );
    check_error(&script("{\"turn\": 1, \"player\": 1}"), "script[0]", Some(6), "expected one of `spawn`");
    check_error(
        &script("{\"turn\": 1, \"player\": 1, \"stop\": {\"units\": [\"a\"]}, \"remove\": {\"units\": [\"a\"]}}"),
        "script[0]",
        Some(6),
        "expected only one of",
    );
    check_error(
        &script("{\"turn\": 1, \"player\": 1, \"edit_terrain\": {\"vx\": 0, \"vz\": 0, \"width\": 2, \"heights\": [1, 2, 3]}}"),
        "script[0].edit_terrain.heights",
        Some(6),
        "multiple of width",
    );
    check_error(
        &script("{\"turn\": 1, \"player\": 1, \"place_obstruction\": {\"x\": 1, \"z\": 1, \"w\": 1, \"h\": 1, \"flags\": \"sticky\"}}"),
        "script[0].place_obstruction.flags",
        Some(6),
        "\"sticky\"",
    );
}

/// serde reads the file model: unknown and missing keys anywhere are named with their JSON path
/// and the line of their object, lists longer than their limit are refused at the list, and a
/// decimal may be given as a string.
#[test]
fn serde_errors_name_the_path_and_line() {
    let script = |entry: &str| minimal(&format!(",\n\"script\": [\n{entry}]"));
    check_error(
        &script("{\"turn\": 1, \"player\": 1, \"move\": {\"units\": [\"a\"], \"goal\": {\"point\": [1, 1]}, \"speed\": 3}}"),
        "script[0].move.speed",
        Some(6),
        "unknown field `speed`, expected one of `units`, `goal`, `queue`",
    );
    check_error(&minimal("").replace("\"at\": [40, 40], ", ""), "units[1]", Some(4), "missing field `at`");
    let seventeen = vec!["0"; 17].join(", ");
    check_error(
        &minimal("").replace("\"seed\": 1}}", &format!("\"seed\": 1}}, \"jump_tables\": [{seventeen}]}}")),
        "map.jump_tables",
        Some(3),
        "expected at most 16 entries",
    );
    check_error(&minimal("").replace("\"player\": 1,", "\"player\": true,"), "units[0].player", Some(4), "expected an integer in 0..=255");
    let quoted = parse(&minimal("").replace("[30, 30]", "[\"30.5\", 30]")).unwrap();
    assert!(quoted.canonical_text().contains("\"at\": [30.5, 30]"), "{}", quoted.canonical_text());
}

#[test]
fn a_group_with_no_live_unit_becomes_a_rejected_command() {
    let text = minimal(
        ",\n\"script\": [{\"turn\": 1, \"player\": 1, \"remove\": {\"units\": [\"a\"]}},\n{\"turn\": 2, \"player\": 1, \"move\": {\"units\": [\"a\"], \"goal\": {\"point\": [20, 20]}}},\n{\"turn\": 2, \"player\": 2, \"move\": {\"units\": [\"b\"], \"goal\": {\"range\": {\"unit\": \"a\", \"max\": 2}}}},\n{\"turn\": 2, \"player\": 2, \"set_obstruction_flags\": {\"obstruction\": 77, \"flags\": 1}}]",
    );
    let scenario = parse(&text).unwrap();
    let (_, events) = run(&scenario, 3);
    let rejected: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Rejected { command, reason } => Some((*command, reason.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(rejected.len(), 3, "{rejected:?}");
    assert_eq!(rejected[0], ((2, PlayerId(1), 2), sim::RejectReason::OutOfRange), "an empty unit list");
    assert!(matches!(rejected[1], ((2, PlayerId(2), 1), sim::RejectReason::UnknownEntity(_))), "{rejected:?}");
}

#[test]
fn polygon_config_maps_use_the_configs_coordinates() {
    let config = r#"{"cellSize": 0.5, "agentRadius": 0.5, "objectPadding": 0, "areas": [{"name": "room", "polygon": [[-20, -10], [0, -10], [0, 6], [-20, 6]]}]}"#;
    let text = format!(
        "{{\"format\": \"phalanx-scenario\", \"version\": 1, \"name\": \"p\", \"turns\": 60, \"map\": {{\"polygons\": {{\"text\": {}}}}},\n\"units\": [{{\"name\": \"a\", \"at\": [-15, -5], \"count\": 1}}],\n\"script\": [{{\"turn\": 1, \"move\": {{\"units\": [\"a\"], \"goal\": {{\"point\": [-5, 2]}}}}}}]}}",
        json_string(config)
    );
    let scenario = parse(&text).unwrap();
    // The grid starts 2 · 0.5 + 0.5 + 0 = 1.5 m beyond the areas' bounding box.
    let origin = WorldPos::new(Fixed::from_num(-43) / 2, Fixed::from_num(-23) / 2);
    assert_eq!(scenario.origin(), origin);
    let mut world = scenario.world().unwrap();
    let mut arrived = false;
    run_turns(&scenario, &mut world, 60, |report| arrived |= report.events.iter().any(|e| matches!(e, Event::Arrived { .. })));
    assert!(arrived);
    let unit = world.units().next().unwrap();
    let goal = WorldPos::new(Fixed::from_num(-5) - origin.x, Fixed::from_num(2) - origin.z);
    assert!((unit.pos.x - goal.x).abs() < Fixed::ONE && (unit.pos.z - goal.z).abs() < Fixed::ONE, "{:?} {goal:?}", unit.pos);
    let again = parse(scenario.canonical_text()).unwrap();
    assert_eq!(again.canonical_text(), scenario.canonical_text());
}

#[test]
fn seq_numbers_increase_per_player_in_file_order() {
    let text = minimal(
        ", \"script\": [{\"turn\": 3, \"player\": 1, \"stop\": {\"units\": [\"a\"]}}, {\"turn\": 1, \"player\": 1, \"stop\": {\"units\": [\"a\"]}}, {\"turn\": 1, \"player\": 2, \"stop\": {\"units\": [\"b\"]}}]",
    );
    let scenario = parse(&text).unwrap();
    let mut script = scenario.script();
    let keys = |cmds: Vec<Command>| cmds.iter().map(|c| (c.turn, c.player.0, c.seq)).collect::<Vec<_>>();
    assert_eq!(keys(script.commands(0)), [(0, 1, 0), (0, 2, 0)]);
    assert_eq!(keys(script.commands(1)), [(1, 1, 2), (1, 2, 1)]);
    assert_eq!(keys(script.commands(2)), []);
    assert_eq!(keys(script.commands(3)), [(3, 1, 1)]);
}

#[test]
fn skirmish_runs_deterministically_and_units_arrive() {
    let scenario = Scenario::load(&example_path("skirmish.json")).unwrap();
    let (hashes_a, events_a) = run(&scenario, 30);
    let (hashes_b, events_b) = run(&scenario, 30);
    assert_eq!(hashes_a, hashes_b);
    assert_eq!(events_a, events_b);
    let count = |f: fn(&Event) -> bool| events_a.iter().filter(|e| f(e)).count();
    assert_eq!(count(|e| matches!(e, Event::Spawned { .. })), 58);
    assert!(count(|e| matches!(e, Event::Arrived { .. })) > 0);
    assert_eq!(count(|e| matches!(e, Event::Rejected { .. })), 0, "{events_a:?}");
    assert_eq!(count(|e| matches!(e, Event::ObstructionPlaced { .. })), 1, "the barracks");
}

#[test]
fn reference_spawns_all_its_units() {
    let scenario = Scenario::load(&example_path("reference.json")).unwrap();
    assert_eq!(scenario.turns(), 150);
    let (_, events) = run(&scenario, 2);
    let spawned = events.iter().filter(|e| matches!(e, Event::Spawned { .. })).count();
    let rejected: Vec<_> = events.iter().filter(|e| matches!(e, Event::Rejected { .. })).collect();
    assert_eq!(spawned, 1000, "{rejected:?}");
    assert!(rejected.is_empty(), "{rejected:?}");
}

#[test]
fn damaged_texts_never_panic() {
    let text = std::fs::read_to_string(example_path("skirmish.json")).unwrap();
    for cut in (0..text.len()).step_by(13) {
        if let Some(prefix) = text.get(..cut) {
            assert!(parse(prefix).is_err());
        }
    }
    let bytes = text.as_bytes();
    for at in (0..bytes.len()).step_by(17) {
        for replacement in [b'}', b'"', b'9', b'-', b'[', b' '] {
            let mut damaged = bytes.to_vec();
            damaged[at] = replacement;
            if let Ok(damaged) = String::from_utf8(damaged) {
                let _ = parse(&damaged);
            }
        }
    }
}

/// A `spawn_from_building` group holds the units placed by the command and, as the building's
/// perimeter frees up, those of its waiting order; the canonical text reads back the same.
#[test]
fn a_building_spawn_group_learns_the_units_of_its_waiting_order() {
    let text = minimal(concat!(
        ",\n\"obstructions\": [{\"name\": \"barracks\", \"x\": 32, \"z\": 32, \"w\": 6, \"h\": 6}],",
        "\n\"script\": [{\"turn\": 1, \"spawn_from_building\": {\"group\": \"g\", \"building\": \"barracks\", \"count\": 4000}},",
        " {\"turn\": 3, \"remove\": {\"units\": [\"g\"]}}, {\"turn\": 5, \"cancel_spawns\": {\"building\": \"barracks\"}}]"
    ))
    .replace("\"version\": 1", "\"version\": 5")
    .replace("\"tiles\": 16, \"seed\": 1}}", "\"tiles\": 16, \"seed\": 1, \"buildings\": 0, \"trees\": 0}}");
    let scenario = parse(&text).unwrap_or_else(|e| panic!("{e}"));
    let again = Scenario::parse(scenario.canonical_text(), "<replay header>", &mut refuse_files).unwrap();
    assert_eq!(again.canonical_text(), scenario.canonical_text());
    let mut world = scenario.world().unwrap();
    let mut runner = scenario.script();
    let mut reports = Vec::new();
    for turn in 0..6 {
        let commands = runner.commands(turn);
        let report = world.step(&commands);
        runner.observe(&report);
        reports.push(report);
    }
    let count = |turn: usize, f: fn(&Event) -> bool| reports[turn].events.iter().filter(|e| f(e)).count();
    let placed = count(1, |e| matches!(e, Event::Spawned { .. }));
    assert!(placed > 0);
    assert_eq!(count(1, |e| matches!(e, Event::SpawnWaiting { .. })), 1);
    // The removal on turn 3 frees the perimeter: the order fills it again in the same turn.
    assert_eq!(count(3, |e| matches!(e, Event::SpawnedFromQueue { .. })), placed);
    assert_eq!(count(5, |e| matches!(e, Event::SpawnCancelled { .. })), 1);
    let group = runner.group("g");
    assert_eq!(group.len(), placed);
    assert!(group.iter().all(|&id| world.unit(id).is_some()));
    assert_eq!(world.units().count(), placed + 5, "the units of groups a and b stay");
}

#[test]
fn bots_play_their_seats_with_their_own_seqs_and_are_checked() {
    let text = minimal(",\n\"rules\": \"nop\",\n\"bots\": [{\"player\": 2, \"seed\": 9}]").replace("\"version\": 1", "\"version\": 6");
    let scenario = parse(&text).unwrap();
    assert!(scenario.canonical_text().contains(r#""bots": [{"player": 2, "seed": 9}]"#), "{}", scenario.canonical_text());
    let mut world = scenario.world().unwrap();
    let mut script = scenario.script();
    let mut keys = Vec::new();
    for _ in 0..3 {
        let commands = script.turn_commands(&world);
        keys.extend(commands.iter().filter(|c| c.player == PlayerId(2) && c.seq >= BOT_SEQ_BASE).map(|c| (c.turn, c.seq - BOT_SEQ_BASE)));
        let report = world.step(&commands);
        script.observe(&report);
    }
    assert_eq!(keys, [(0, 0), (1, 1), (2, 2)], "one bot command a turn, seqs counting up");
    assert_eq!(script.group("b").len(), 2, "the bot's commands did not confuse the groups");
    let three = text.replace("{\"player\": 2, \"seed\": 9}", "{\"player\": 3}");
    check_error(&three, "bots[0].player", None, "expected a player of the game (1 to 2), found 3");
    let twice = text.replace("{\"player\": 2, \"seed\": 9}", "{\"player\": 2}, {\"player\": 2}");
    check_error(&twice, "bots[1].player", None, "player 2 has a bot already");
    let no_rules = text.replace("\"rules\": \"nop\",", "");
    check_error(&no_rules, "bots[0]", None, "the scenario names no game rules");
}
