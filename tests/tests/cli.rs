//! The `phalanx` command line as users and CI drive it: output formats, exit codes, error messages.

use std::path::PathBuf;

/// Runs the command line in-process; returns (exit code, stdout, stderr). The only caller of `run`.
#[track_caller]
fn phalanx(args: &[&str]) -> (i32, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut argv = vec!["phalanx"];
    argv.extend_from_slice(args);
    let code = phalanx_cli::run(argv, &mut out, &mut err);
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

/// `path` answers like the simulation (docs/pathfinding-rules.md, "Start and goal off the walkable
/// grid"): an unreachable goal gives a path to the reachable navcell nearest it, the one `reach`
/// names, and an impassable start a straight escape; the status line says which, and the exit is 1.
#[test]
fn path_heads_for_the_nearest_reachable_navcell_or_escapes_like_the_simulation() {
    let map = temp_file("split.map", "type octile\nheight 3\nwidth 5\nmap\n..@..\n..@..\n..@..\n");
    for algo in ["jps", "jps-plus", "jps-lm", "jps-plus-lm", "astar"] {
        let (code, out, _) = phalanx(&["path", &map, "0", "0", "4", "1", "--algo", algo]);
        assert_eq!((code, out.as_str()), (1, "0 0\n1 1\nlength 1.41421356\nstatus unreachable nearest 1 1\n"), "{algo}");
        let (_, reach, _) = phalanx(&["reach", &map, "0", "0", "4", "1"]);
        assert_eq!(reach, "unreachable nearest 1 1\n");
        let (code, out, _) = phalanx(&["path", &map, "2", "1", "4", "1", "--algo", algo]);
        assert_eq!((code, out.as_str()), (1, "2 1\n1 1\nlength 1.00000000\nstatus start-impassable escape 1 1\n"), "{algo}");
    }
    // A goal walled off in a pocket: the nearest reachable navcell is beside the wall, not the
    // navcell a search exhausting the component would end on.
    let pocket = temp_file("pocket.map", "type octile\nheight 5\nwidth 7\nmap\n.......\n....@@@\n....@.@\n....@@@\n.......\n");
    let (_, reach, _) = phalanx(&["reach", &pocket, "0", "2", "5", "2"]);
    let (code, out, _) = phalanx(&["path", &pocket, "0", "2", "5", "2"]);
    assert_eq!(code, 1);
    let nearest = reach.trim_end().strip_prefix("unreachable nearest ").expect("the goal is walled off");
    assert!(out.ends_with(&format!("status unreachable nearest {nearest}\n")), "{out}");
    let last_point = out.lines().rev().nth(2).unwrap();
    assert_eq!(last_point, nearest, "the path ends where `reach` says: {out}");
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
    let mut honest = replay::verify::initial_world(&rep.header, 1, &replay::rules::Rulesets::none()).unwrap();
    for t in &rep.turns {
        if writer.keyframe_due(&honest) {
            writer.keyframe(&honest).unwrap();
        }
        let mut commands = t.commands.clone();
        if t.turn == at_turn {
            let unit = honest.units().find(|u| u.owner == sim::PlayerId(1)).unwrap().id;
            let goal = sim::GoalSpec::Point(pathing::WorldPos::from_int(8, 8));
            let kind = sim::CommandKind::Move { units: vec![unit], goal, queue: false };
            commands.push(sim::Command { turn: at_turn, player: sim::PlayerId(1), seq: 9999, kind });
        }
        let report = honest.step(&t.commands);
        writer.turn(&commands, &report).unwrap();
    }
    if writer.keyframe_due(&honest) {
        writer.keyframe(&honest).unwrap();
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

/// `phalanx demo` (shortened to 12 turns): the summary's lines (four bots, 1020 units to start
/// with, every player's record, no winner at the limit), a replay that verifies from the command
/// line too, a PNG and a self-contained viewer page; a second run with two threads gives the same
/// final hash.
#[test]
fn demo_records_verifies_and_draws_its_game() {
    let dir = temp_path("demo");
    let (code, out, err) = phalanx(&["demo", "--out", &dir, "--turns", "12"]);
    assert_eq!(code, 0, "{out}{err}");
    for line in [
        "phalanx demo: demo (1024x1024 navcells), 12 turns of 200 ms, 4 bots of the skirmish rules",
        "units: 1020 at the start, ",
        "paths computed: ",
        "\nplayer 1: ",
        "\nplayer 4: ",
        "result: no winner by turn 12 (the turn limit); score: ",
        "final hash: ",
        "time per turn: ",
    ] {
        assert!(out.contains(line), "missing {line:?} in\n{out}");
    }
    let bots = phalanx_cli::demo::scenario().map(|s| s.bots().len()).unwrap();
    assert_eq!(bots, 4, "the demo's four seats are bots");
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

/// Records the skirmish scenario for 30 turns with a keyframe every 10 turns; returns its path.
fn skirmish_replay(name: &str) -> String {
    let rec = temp_path(name);
    let (code, _, err) = phalanx(&["run", &scenario("skirmish.json"), "--turns", "30", "--record", &rec, "--keyframe-every", "10"]);
    assert_eq!(code, 0, "{err}");
    rec
}

/// The records of a replay after its header: (offset, whole length, tag).
fn records(bytes: &[u8]) -> Vec<(usize, usize, u8)> {
    let header_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let mut at = 16 + header_len + 32;
    let mut out = Vec::new();
    while at + 8 <= bytes.len() {
        let len = u32::from_le_bytes(bytes[at + 1..at + 5].try_into().unwrap()) as usize;
        out.push((at, 8 + len + 32, bytes[at]));
        at += 8 + len + 32;
    }
    out
}

/// The replay with its header's `keyframe_every` replaced (the header checksum made right again,
/// as a forger would).
fn forge_keyframe_every(bytes: &[u8], every: u32) -> Vec<u8> {
    let mut header = replay::format::ReplayReader::new(bytes).unwrap().header().clone();
    header.keyframe_every = every;
    let header_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let mut out = replay::format::header_bytes(&header);
    out.extend_from_slice(&bytes[16 + header_len + 32..]);
    out
}

#[test]
fn threads_and_jobs_out_of_range_are_usage_errors() {
    // `--threads 4294967296` aborted on a 3 TB allocation, `--threads 18446744073709551615`
    // panicked and `--jobs 4294967296` ran for minutes: the counts were not bounded.
    let rec = skirmish_replay("bounded.replay");
    for args in [
        &["verify", &rec, "--threads", "4294967296"][..],
        &["verify", &rec, "--threads", "18446744073709551615"],
        &["verify", &rec, "--jobs", "4294967296"],
        &["verify", &rec, "--jobs", "0"],
        &["verify", &rec, "--threads", "257"],
        &["seek", &rec, "3", "--threads", "0"],
        &["render", &rec, "--out", "/dev/null", "--threads", "1000"],
        &["view", &rec, "--out", "/dev/null", "--threads", "1000"],
        &["run", &scenario("skirmish.json"), "--threads", "4294967296"],
        &["demo", "--threads", "300"],
    ] {
        let (code, out, err) = phalanx(args);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.contains("1..=256"), "{args:?}: {err}");
    }
    let (code, out, err) = phalanx(&["verify", &rec, "--threads", "256", "--jobs", "256"]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn map_and_scen_reads_are_capped() {
    // `phalanx path /dev/zero 0 0 1 1` read without limit, growing past 2 GB.
    let (code, _, err) = phalanx(&["path", "/dev/zero", "0", "0", "1", "1"]);
    assert_eq!(code, 2);
    assert_eq!(err, format!("phalanx: /dev/zero: larger than the limit of {} bytes\n", replay::scenario::MAX_FILE_BYTES));
    let (code, _, err) = phalanx(&["scen", &data("arena.map"), "/dev/zero"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("phalanx: /dev/zero: larger than the limit of "), "{err}");
}

#[test]
fn messages_name_what_failed_once_and_on_one_line() {
    // Write errors said "cannot read", a missing scenario's path was printed twice, a non-replay
    // file did not say what it was, a damaged version field had no offset, clap's usage errors
    // took several lines, and an empty `.map` was diagnosed as grid text.
    let rec = skirmish_replay("messages.replay");
    let (code, _, err) = phalanx(&["render", &rec, "--out", "/nonexistent/x.png"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("phalanx: /nonexistent/x.png: cannot write: "), "{err}");
    let (code, _, err) = phalanx(&["run", &scenario("skirmish.json"), "--turns", "2", "--record", "/dev/full"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("phalanx: /dev/full: cannot write: "), "{err}");

    let (code, _, err) = phalanx(&["run", "/nonexistent/s.json"]);
    assert_eq!(code, 2);
    assert_eq!(err.matches("/nonexistent/s.json").count(), 1, "{err}");
    assert!(err.starts_with("phalanx: /nonexistent/s.json: cannot read: "), "{err}");

    let png = temp_file("picture.replay", "\u{89}PNG\r\n\u{1a}\n and more");
    let (code, out, _) = phalanx(&["verify", &png]);
    assert_eq!(code, 2);
    assert!(out.contains("offset 0 (header): the magic PHXRPLY of a replay file, found the bytes "), "{out}");
    let empty = temp_file("empty.replay", "");
    let (_, out, _) = phalanx(&["verify", &empty]);
    assert!(out.contains("found an empty file"), "{out}");

    let mut bytes = std::fs::read(&rec).unwrap();
    bytes[8] = 10;
    let version = temp_path("version.replay");
    std::fs::write(&version, &bytes).unwrap();
    let (code, out, _) = phalanx(&["verify", &version]);
    assert_eq!(code, 2);
    assert!(out.contains("offset 8 (header): replay format version 10"), "{out}");

    for args in [&["render", &rec][..], &["verify"], &["path", "x.map", "1"], &["frobnicate"], &[], &["verify", &rec, "--bogus"]] {
        let (code, _, err) = phalanx(args);
        assert_eq!(code, 2, "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.starts_with("phalanx: ") && !err.contains("Usage"), "{args:?}: {err}");
    }

    let map = temp_file("empty.map", "");
    let (code, _, err) = phalanx(&["path", &map, "0", "0", "1", "1"]);
    assert_eq!(code, 2);
    assert!(err.contains("empty.map:1: expected the Moving AI map header `type octile`, found an empty file"), "{err}");
}

#[test]
fn verify_strict_fails_a_replay_cut_short() {
    // A replay cut short passed `verify` on the turns it holds, exit 0; CI needs a way to refuse it.
    let rec = skirmish_replay("strict.replay");
    let bytes = std::fs::read(&rec).unwrap();
    let cut = temp_path("cut.replay");
    std::fs::write(&cut, &bytes[..bytes.len() - 50]).unwrap();
    let (code, out, _) = phalanx(&["verify", &cut]);
    assert_eq!(code, 0, "without --strict a cut replay passes on its whole turns: {out}");
    assert!(out.contains("note: the file has no footer"), "{out}");
    let (code, out, _) = phalanx(&["verify", "--strict", &cut, &rec]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("cut.replay: CUT SHORT: its 30 whole turns") && out.contains("note: the file has no footer"), "{out}");
    assert!(out.contains("strict.replay: identical"), "{out}");
    let (code, json, _) = phalanx(&["verify", "--strict", "--json", &cut]);
    assert_eq!(code, 1);
    let reports: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!((reports[0]["outcome"].as_str(), reports[0]["strict"].as_bool()), (Some("cut-short"), Some(true)));
    let (_, json, _) = phalanx(&["verify", "--json", &rec]);
    let reports: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(reports[0]["strict"], false);
}

#[test]
fn commands_print_as_text_not_rust_debug() {
    // `verify`, `diff` and `run` printed commands as Rust `Debug` (`Move { units: [EntityId {
    // index: 48, generation: 0 }], ... }`), unlike everything else (`48v0`).
    let rec = skirmish_replay("commands.replay");
    let bad = temp_path("commands-tampered.replay");
    tamper(&rec, &bad, 12);
    let (code, verify_out, _) = phalanx(&["verify", &bad]);
    assert_eq!(code, 1);
    let (code, diff_out, _) = phalanx(&["diff", &rec, &bad]);
    assert_eq!(code, 1);
    for out in [&verify_out, &diff_out] {
        assert!(out.contains("player 1 seq 9999: move ") && out.contains(" → (8, 8)"), "{out}");
        assert!(!out.contains("EntityId") && !out.contains("Move {") && !out.contains("Point("), "{out}");
    }
    // A refused command in `run`: player 2 orders player 1's infantry (units 0v0 to 19v0).
    let mut json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(scenario("skirmish.json")).unwrap()).unwrap();
    let order = serde_json::json!({"turn": 2, "player": 2, "move": {"units": ["p1_infantry"], "goal": {"point": [25, 100]}}});
    json["script"].as_array_mut().unwrap().push(order);
    let refused = temp_file("refused.json", &json.to_string());
    let (code, out, err) = phalanx(&["run", &refused, "--turns", "3"]);
    assert_eq!(code, 0, "{err}");
    let line = out.lines().find(|l| l.starts_with("# rejected: ")).unwrap_or_else(|| panic!("{out}"));
    assert_eq!(line, "# rejected: turn 2: player 2 seq 8: move 0v0..=19v0 → (25, 100): 0v0 belongs to another player");
}

#[test]
fn keyframes_must_come_at_the_declared_cadence() {
    // A deleted or duplicated keyframe record, or a forged `keyframe_every`, verified as
    // `identical` with exit 0: nothing checked that keyframes come where the header says.
    let rec = skirmish_replay("cadence.replay");
    let bytes = std::fs::read(&rec).unwrap();
    let keyframes: Vec<(usize, usize)> = records(&bytes).into_iter().filter(|r| r.2 == b'K').map(|r| (r.0, r.1)).collect();
    assert_eq!(keyframes.len(), 3, "turns 10, 20 and 30");
    let check = |name: &str, bytes: &[u8], needle: &str| {
        let path = temp_path(name);
        std::fs::write(&path, bytes).unwrap();
        let (code, out, _) = phalanx(&["verify", &path]);
        assert_eq!(code, 2, "{name}: {out}");
        assert!(out.contains("unreadable: offset ") && out.contains(needle), "{name}: {out}");
    };
    let (at, len) = keyframes[1];
    let deleted = [&bytes[..at], &bytes[at + len..]].concat();
    check("deleted.replay", &deleted, "the keyframe of turn 20 first (the header declares one every 10 turns), found the turn record");
    let (at, len) = keyframes[2];
    let last_deleted = [&bytes[..at], &bytes[at + len..]].concat();
    check("last-deleted.replay", &last_deleted, "the keyframe of turn 30 first (the header declares one every 10 turns), found the footer");
    let (at, len) = keyframes[0];
    let duplicated = [&bytes[..at + len], &bytes[at..]].concat();
    check("duplicated.replay", &duplicated, "one keyframe of turn 10, found a second");
    check("every-0.replay", &forge_keyframe_every(&bytes, 0), "it declares no keyframes");
    check("every-5.replay", &forge_keyframe_every(&bytes, 5), "the keyframe of turn 5 first");
    check("every-20.replay", &forge_keyframe_every(&bytes, 20), "it declares one every 20 turns");
    // The untouched file still verifies.
    let (code, out, _) = phalanx(&["verify", &rec]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn seek_and_render_refuse_a_keyframe_that_does_not_match_the_recorded_hash() {
    // `seek` and `render` loaded the nearest keyframe and trusted it: a keyframe whose state
    // differs from the game's (every turn hash right) gave a picture of a state that never was.
    let rec = skirmish_replay("forged-source.replay");
    let rep = replay::format::Replay::read(&std::fs::read(&rec).unwrap()[..]).unwrap();
    let mut out = Vec::new();
    let mut writer = replay::format::ReplayWriter::new(&mut out, rep.header.clone()).unwrap();
    let mut world = replay::verify::initial_world(&rep.header, 1, &replay::rules::Rulesets::none()).unwrap();
    for t in &rep.turns {
        if writer.keyframe_due(&world) {
            if world.turn() == 20 {
                let mut copy = sim::World::load(&world.save()).unwrap();
                let unit = copy.units().next().unwrap().id;
                assert!(copy.plant_desync(unit));
                writer.keyframe(&copy).unwrap();
            } else {
                writer.keyframe(&world).unwrap();
            }
        }
        let report = world.step(&t.commands);
        writer.turn(&t.commands, &report).unwrap();
    }
    writer.keyframe(&world).unwrap();
    writer.finish().unwrap();
    let forged = temp_path("forged-keyframe.replay");
    std::fs::write(&forged, &out).unwrap();
    let (code, _, err) = phalanx(&["seek", &forged, "25"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("the keyframe of turn 20 holds a state of hash") && err.contains("recorded"), "{err}");
    let png = temp_path("forged.png");
    let (code, _, err) = phalanx(&["render", &forged, "--turn", "25", "--out", &png]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("the keyframe of turn 20 holds a state of hash"), "{err}");
    // Before the forged keyframe, the honest one of turn 10 is used.
    let (code, out, err) = phalanx(&["seek", &forged, "15"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("restored from keyframe of turn 10"), "{out}");
}

#[test]
fn a_game_of_the_reference_rules_runs_verifies_and_prints_its_winner() {
    let scenario = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios/battle.json").display().to_string();
    let dir = std::env::temp_dir().join(format!("phalanx-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let replay = dir.join("battle.replay").display().to_string();
    let (code, out, err) = phalanx(&["run", &scenario, "--turns", "300", "--record", &replay]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("  player 2: ") && out.contains("winner: player 2"), "{out}");
    let (code, out, err) = phalanx(&["verify", &replay, "--sync-test"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("identical: 300 turns"), "{out}");
}

#[test]
fn a_replay_of_rules_this_program_does_not_know_is_unusable_and_named() {
    // A skirmish replay whose header names another version of the rules.
    let scenario = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios/battle.json").display().to_string();
    let dir = std::env::temp_dir().join(format!("phalanx-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("battle-v9.replay");
    let (code, _, err) = phalanx(&["run", &scenario, "--turns", "5", "--record", &path.display().to_string()]);
    assert_eq!(code, 0, "{err}");
    let mut replay = replay::format::Replay::read(&std::fs::read(&path).unwrap()[..]).unwrap();
    assert_eq!(replay.header.rules, Some(("skirmish".to_owned(), skirmish::VERSION)));
    replay.header.rules = Some(("skirmish".to_owned(), 9));
    // The header alone is enough: it is checked before any turn.
    let writer = replay::format::ReplayWriter::new(Vec::new(), replay.header.clone()).unwrap();
    std::fs::write(&path, writer.finish().unwrap()).unwrap();
    let (code, out, err) = phalanx(&["verify", &path.display().to_string()]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        (out.clone() + &err)
            .contains(&format!("ruleset skirmish version 9 is not known (this program has skirmish version {})", skirmish::VERSION)),
        "{out}{err}"
    );
}

/// The battle scenario recorded for 60 turns with a keyframe every 10, with `plant` applied to the
/// world before turn 25 (a planted desync: no command changes the state).
fn battle_with(name: &str, plant: &dyn Fn(&mut sim::World)) -> String {
    use replay::format::ReplayWriter;
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios/battle.json");
    let scenario = replay::scenario::Scenario::load_with(&path, &phalanx_cli::stock_rulesets()).unwrap();
    let mut world = scenario.world().unwrap();
    let header = replay::record::header_for(&scenario, &mut world, 10);
    let mut writer = ReplayWriter::new(Vec::new(), header).unwrap();
    let mut script = scenario.script();
    for _ in 0..60 {
        if writer.keyframe_due(&world) {
            writer.keyframe(&world).unwrap();
        }
        if world.turn() == 25 {
            plant(&mut world);
        }
        let commands = script.turn_commands(&world);
        let report = world.step(&commands);
        script.observe(&report);
        writer.turn(&commands, &report).unwrap();
    }
    if writer.keyframe_due(&world) {
        writer.keyframe(&world).unwrap();
    }
    let dir = std::env::temp_dir().join(format!("phalanx-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(name);
    std::fs::write(&file, writer.finish().unwrap()).unwrap();
    file.display().to_string()
}

#[test]
fn a_planted_hit_point_or_wood_divergence_is_named_to_the_game_field_by_diff_and_verify() {
    let honest = battle_with("battle-honest.replay", &|_| {});
    // The first of player 2's units loses one hit point.
    let victim = std::cell::Cell::new(None);
    let hp = battle_with("battle-hp.replay", &|w| {
        let unit = w.units().find(|u| u.owner == sim::PlayerId(2)).unwrap().id;
        victim.set(Some(unit));
        assert!(w.plant_game_desync::<skirmish::Combat>(unit, |u| u.hp -= 1));
    });
    let victim = victim.get().unwrap();
    let (code, out, err) = phalanx(&["diff", &honest, &hp]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("first diverging turn: 25"), "{out}");
    let line = format!("combat.units unit {}v{} hp: ", victim.index, victim.generation);
    assert!(out.contains(&line), "no `{line}` in:\n{out}");
    // Verify names the same field, re-simulating the planted replay's recorded commands.
    let (code, out, _) = phalanx(&["verify", &hp]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("combat.units"), "{out}");
    // A player's wood likewise.
    let wood = battle_with("battle-wood.replay", &|w| {
        assert!(w.plant_player_desync::<skirmish::Gathering>(sim::PlayerId(1), |p| p.wood += 7));
    });
    let (code, out, err) = phalanx(&["diff", &honest, &wood]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("gathering.players player 1 wood: 0 | 7"), "{out}");
    assert!(
        out.contains("state at the start of turn 30 (keyframe): 1 differing fields"),
        "the game's field once, not again as raw bytes:\n{out}"
    );
}
