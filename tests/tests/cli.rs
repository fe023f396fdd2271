//! The `phalanx` command line as users and CI drive it: output formats, exit codes, error messages.

use std::path::PathBuf;

/// Runs the command line in-process; returns (exit code, stdout, stderr). The only caller of `run`.
#[track_caller]
fn phalanx(args: &[&str]) -> (i32, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut argv = vec!["phalanx"];
    argv.extend_from_slice(args);
    let code = replay::cli::run(argv, &mut out, &mut err);
    (code, String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
}

fn data(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/movingai").join(name).display().to_string()
}

fn temp_file(name: &str, contents: &str) -> String {
    let dir = std::env::temp_dir().join(format!("phalanx-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path.display().to_string()
}

#[test]
fn scen_prints_a_table_and_a_summary() {
    let (code, out, err) = phalanx(&["scen", &data("arena.map"), &data("arena.map.scen"), "--first", "5"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    let header: Vec<&str> = lines[0].split('\t').collect();
    for column in ["line", "length", "expanded", "micros"] {
        assert!(header.contains(&column), "missing column {column}: {header:?}");
    }
    assert_eq!(lines.len(), 1 + 5 + 1);
    let length_col = header.iter().position(|&c| c == "length").unwrap();
    for row in &lines[1..6] {
        let fields: Vec<&str> = row.split('\t').collect();
        assert_eq!(fields.len(), header.len());
        let decimals = fields[length_col].split_once('.').unwrap().1.len();
        assert!(decimals >= 8, "length needs at least 8 decimals: {}", fields[length_col]);
    }
    assert!(lines[6].starts_with("# summary: 5 problems, 5 solved, 5 optimal"), "{}", lines[6]);
    let (code, out, _) = phalanx(&["scen", &data("arena.map"), &data("arena.map.scen"), "--algo", "astar", "--first", "3"]);
    assert_eq!(code, 0);
    assert!(out.contains("3 optimal, algo Astar"));
}

#[test]
fn path_prints_turning_points_then_the_length() {
    let (code, out, err) = phalanx(&["path", &data("arena.map"), "19", "26", "19", "29"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "19 26\n19 29\nlength 3.00000000\n");
    let (code, out, _) = phalanx(&["path", &data("arena.map"), "19", "26", "40", "40", "--algo", "astar", "--render"]);
    assert_eq!(code, 0);
    assert!(out.contains("length 26.79898987"));
    assert!(out.contains('S') && out.contains('E'), "rendering shows start and end");
}

#[test]
fn unreachable_goal_exits_one_with_a_partial_path() {
    let map = temp_file("split.map", "type octile\nheight 3\nwidth 5\nmap\n..@..\n..@..\n..@..\n");
    let (code, out, _) = phalanx(&["path", &map, "0", "1", "4", "1"]);
    assert_eq!(code, 1);
    assert!(out.ends_with("status unreachable\n"), "{out}");
}

#[test]
fn grid_text_maps_work_too() {
    let map = temp_file("room.txt", "cellSize 0.4\nminX 0.0\nminZ 0.0\ngridWidth 4\ngridDepth 3\n1111\n1001\n1111\n");
    let (code, out, err) = phalanx(&["path", &map, "0", "1", "3", "1"]);
    assert_eq!(code, 0, "{err}");
    // Row 1 is walled in the middle and corners cannot be cut, so the path goes round row 0.
    assert_eq!(out, "0 1\n0 0\n3 0\n3 1\nlength 5.00000000\n");
}

#[test]
fn bad_input_exits_two_naming_file_and_line() {
    let map = temp_file("ragged.map", "type octile\nheight 2\nwidth 3\nmap\n...\n..\n");
    let (code, _, err) = phalanx(&["path", &map, "0", "0", "1", "1"]);
    assert_eq!(code, 2);
    assert!(err.contains("ragged.map:6:") && err.contains("expected"), "{err}");

    let scen = temp_file("bad.scen", "version 1\n0\tarena.map\t49\t49\t1\t1\tx\t2\t3.0\n");
    let (code, _, err) = phalanx(&["scen", &data("arena.map"), &scen]);
    assert_eq!(code, 2);
    assert!(err.contains("bad.scen:2:"), "{err}");

    let wrong_size = temp_file("size.scen", "version 1\n0\tarena.map\t50\t49\t1\t1\t2\t2\t1.0\n");
    let (code, _, err) = phalanx(&["scen", &data("arena.map"), &wrong_size]);
    assert_eq!(code, 2);
    assert!(err.contains("size.scen:2: expected map size 49x49"), "{err}");

    let (code, _, err) = phalanx(&["path", &data("arena.map"), "0", "0", "100", "1"]);
    assert_eq!(code, 2);
    assert!(err.contains("off the 49x49 map"), "{err}");

    let (code, _, err) = phalanx(&["path", "/nonexistent/x.map", "0", "0", "1", "1"]);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/x.map: cannot read"), "{err}");

    let (code, _, _) = phalanx(&["frobnicate"]);
    assert_eq!(code, 2);
}

#[test]
fn reach_answers_reachable_or_the_nearest_reachable_navcell() {
    let map = temp_file("halves.map", "type octile\nheight 3\nwidth 5\nmap\n..@..\n..@..\n..@..\n");
    let (code, out, _) = phalanx(&["reach", &map, "0", "1", "1", "2"]);
    assert_eq!((code, out.as_str()), (0, "reachable\n"));
    let (code, out, _) = phalanx(&["reach", &map, "0", "1", "4", "1"]);
    assert_eq!((code, out.as_str()), (0, "unreachable nearest 1 1\n"));
    let (code, out, _) = phalanx(&["reach", &map, "2", "1", "4", "1"]);
    assert_eq!((code, out.as_str()), (0, "start-impassable nearest 1 1\n"), "equally near: the lowest (j, i), so west");
    let (code, _, err) = phalanx(&["reach", &map, "9", "1", "4", "1"]);
    assert_eq!(code, 2);
    assert!(err.contains("off the 5x3 map"), "{err}");
}

#[test]
fn raster_draws_the_seed_rotated_rectangle() {
    // 0 A.D.'s 30° rasterization figure: centre (13.5, 5.5), half-sizes 3.5 × 1.5, clearance 1.
    let (code, out, err) = phalanx(&["raster", "--size", "20", "10", "--clearance", "1", "--square", "13.5", "5.5", "3.5", "1.5", "30"]);
    assert_eq!(code, 0, "{err}");
    let want = "\
....................
...............#....
.............####...
............#####...
..........#######...
..........#####.....
..........####......
...........#........
....................
....................
";
    assert_eq!(out, want);
    // Several squares, negative coordinates and angles, a fractional navcell size.
    let (code, out, err) = phalanx(&[
        "raster",
        "--size",
        "8",
        "4",
        "--cell-size",
        "0.5",
        "--square",
        "1",
        "1",
        "0.5",
        "0.25",
        "-45",
        "--square",
        "-1",
        "0",
        "1",
        "1",
        "0",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 4);
    assert!(out.lines().all(|l| l.len() == 8));
    assert!(out.contains('#'));
}

#[test]
fn raster_rejects_what_it_cannot_use() {
    for (args, needle) in [
        (&["raster", "--size", "0", "4"][..], "--size"),
        (&["raster", "--size", "4", "4", "--clearance", "-1"], "--clearance"),
        (&["raster", "--size", "4", "4", "--clearance", "abc"], "--clearance"),
        (&["raster", "--size", "4", "4", "--cell-size", "0"], "--cell-size"),
        (&["raster", "--size", "4", "4", "--square", "1", "1", "1", "1"], "5 values"),
        (&["raster", "--size", "4", "4", "--square", "1", "1", "-1", "1", "0"], "--square #1"),
        (&["raster", "--size", "4", "4", "--square", "99999", "1", "1", "1", "0"], "--square #1 X"),
        (&["raster", "--size", "70000", "70000"], "--size"),
    ] {
        let (code, out, err) = phalanx(args);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

fn scenario(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios").join(name).display().to_string()
}

fn temp_path(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("phalanx-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name).display().to_string()
}

/// A copy of a replay in which one turn was stepped with an extra command but kept the recorded
/// hashes and keyframes: the re-simulation follows the extra command and must diverge at that turn.
fn tamper(original: &str, tampered: &str, at_turn: u32) {
    use replay::format::{Replay, ReplayWriter};
    let rep = Replay::read(&std::fs::read(original).unwrap()[..]).unwrap();
    let mut out = Vec::new();
    let mut writer = ReplayWriter::new(&mut out, rep.header.clone()).unwrap();
    let mut honest = replay::verify::initial_world(&rep.header, 1).unwrap();
    for t in &rep.turns {
        if writer.keyframe_due(&honest) {
            writer.keyframe(&honest).unwrap();
        }
        let mut commands = t.commands.clone();
        if t.turn == at_turn {
            let unit = honest.units().find(|u| u.owner == 1).unwrap().id;
            let goal = sim::command::GoalSpec::Point(pathing::WorldPos::from_int(8, 8));
            let kind = sim::command::CommandKind::Move { units: vec![unit], goal, queue: false };
            commands.push(sim::command::Command { turn: at_turn, player: 1, seq: 9999, kind });
        }
        let report = honest.step(&t.commands);
        writer.turn(&commands, &report).unwrap();
    }
    writer.finish().unwrap();
    std::fs::write(tampered, out).unwrap();
}

#[test]
fn run_record_verify_seek_and_diff_work_together() {
    let rec = temp_path("skirmish.replay");
    let (code, out, err) =
        phalanx(&["run", &scenario("skirmish.json"), "--turns", "30", "--record", &rec, "--hashes", "--keyframe-every", "10"]);
    assert_eq!(code, 0, "{err}");
    let hash_lines: Vec<&str> = out.lines().filter(|l| l.contains('\t')).collect();
    assert_eq!(hash_lines.len(), 30);
    assert!(hash_lines[29].starts_with("29\t") && hash_lines[29].len() == 3 + 64, "{}", hash_lines[29]);
    assert!(out.contains("scenario skirmish: 30 turns"), "{out}");

    let (code, out, _) = phalanx(&["verify", &rec]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("identical: 30 turns, 3 keyframes"), "{out}");
    assert!(out.contains(&hash_lines[29][3..19]), "the final hash is printed: {out}");

    // The same game recorded with two threads is the same file.
    let rec2 = temp_path("skirmish2.replay");
    let (code, _, err) =
        phalanx(&["run", &scenario("skirmish.json"), "--turns", "30", "--record", &rec2, "--threads", "2", "--keyframe-every", "10"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&rec).unwrap(), std::fs::read(&rec2).unwrap());
    let (code, out, _) = phalanx(&["diff", &rec, &rec2]);
    assert_eq!((code, out.trim()), (0, "identical: 30 turns"));

    let (code, out, err) = phalanx(&["seek", &rec, "17"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("restored from keyframe of turn 10, then 7 turns re-simulated"), "{out}");
    assert!(out.contains("turn 17\n"), "{out}");
    assert!(out.contains(&format!("state hash {}", &hash_lines[16][3..])), "seek reaches the recorded state of turn 17: {out}");
    let (code, _, err) = phalanx(&["seek", &rec, "31"]);
    assert_eq!(code, 2);
    assert!(err.contains("turn 31 is beyond the replay, which records 30 turns"), "{err}");

    // A replay whose turn 12 was stepped with a command it does not record.
    let bad = temp_path("tampered.replay");
    tamper(&rec, &bad, 12);
    let (code, out, _) = phalanx(&["verify", &bad]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("DIVERGED") && out.contains("first diverging turn: 12"), "{out}");
    assert!(out.contains("diverging components: units"), "{out}");
    assert!(out.contains("state at the start of turn 20"), "{out}");
    let (code, json, _) = phalanx(&["verify", &bad, &rec, "--json", "--jobs", "2"]);
    assert_eq!(code, 1);
    let reports: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(reports[0]["outcome"], "diverged");
    assert_eq!(reports[0]["divergence"]["turn"], 12);
    assert_eq!(reports[0]["divergence"]["components"][0], "units");
    assert_eq!(reports[1]["outcome"], "identical");

    // diff of the two: the turn, the commands that differ, the fields at the next common keyframe.
    let (code, out, _) = phalanx(&["diff", &rec, &bad]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("first diverging turn: 12") && out.contains("the commands of turn 12 differ"), "{out}");

    // Damage: exit 2 naming the offset and section; a snapshot and a replay do not compare.
    let mut bytes = std::fs::read(&rec).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x10;
    let damaged = temp_path("damaged.replay");
    std::fs::write(&damaged, &bytes).unwrap();
    let (code, out, _) = phalanx(&["verify", &damaged]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("unreadable: offset ") && out.contains("record"), "{out}");
    let garbage = temp_file("garbage.replay", "not a replay at all");
    let (code, out, _) = phalanx(&["verify", &garbage, &rec]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("offset 0 (header): the magic PHXRPLY"), "{out}");
    let (code, _, err) = phalanx(&["diff", &rec, &garbage]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = phalanx(&["verify", &rec, "--shard", "3/2"]);
    assert_eq!(code, 2);
    assert!(err.contains("--shard 3/2: expected I/N"), "{err}");
}

#[test]
fn run_rejects_a_bad_scenario_naming_file_and_place() {
    let bad = temp_file("bad.json", "{\"format\": \"phalanx-scenario\", \"version\": 1,\n  \"name\": 5 oops }");
    let (code, _, err) = phalanx(&["run", &bad]);
    assert_eq!(code, 2);
    assert!(err.contains("bad.json:2:"), "{err}");
}

/// `phalanx demo` (shortened to 12 turns): the summary's lines, a replay that verifies from the
/// command line too, a PNG and a self-contained viewer page; a second run with two threads gives
/// the same final hash.
#[test]
fn demo_records_verifies_and_draws_its_game() {
    let dir = temp_path("demo");
    let (code, out, err) = phalanx(&["demo", "--out", &dir, "--turns", "12"]);
    assert_eq!(code, 0, "{out}{err}");
    for line in
        ["phalanx demo: demo (1024x1024 navcells), 12 turns", "units: 1000 (", "paths computed: ", "final hash: ", "time per turn: "]
    {
        assert!(out.contains(line), "missing {line:?} in\n{out}");
    }
    assert!(out.contains("verified identical: 12 turns re-simulated"), "{out}");
    let replay = format!("{dir}/demo.replay");
    let (code, verify_out, _) = phalanx(&["verify", &replay]);
    assert_eq!(code, 0, "{verify_out}");
    let png = std::fs::read(format!("{dir}/demo.png")).unwrap();
    let decoder = png::Decoder::new(std::io::Cursor::new(png));
    let info = decoder.read_info().unwrap();
    assert_eq!((info.info().width, info.info().height), (1024, 1024));
    let html = std::fs::read_to_string(format!("{dir}/demo.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") || html.starts_with("<!doctype html>"), "{}", &html[..40.min(html.len())]);
    assert!(!html.contains("http://") && !html.contains("https://"), "the viewer must be self-contained");
    let hash = |out: &str| out.lines().find(|l| l.starts_with("final hash: ")).unwrap().to_owned();
    let (code, again, err) = phalanx(&["demo", "--out", &temp_path("demo2"), "--turns", "12", "--threads", "2"]);
    assert_eq!(code, 0, "{again}{err}");
    assert_eq!(hash(&out), hash(&again));
}
