//! The aura game's own program, run as a studio's CI would run it: a scenario of the game's rules
//! recorded, verified with the sync test, diffed against a diverging game (the game's fields by
//! name), sought, drawn, viewed and refused by the stock program with a message saying what to do.

use std::path::{Path, PathBuf};
use std::process::Command;

use aura::{Aura, AuraCommand};
use replay::format::{Replay, ReplayWriter};

/// Runs the aura program with `args`; returns its exit code, stdout and stderr.
fn aura(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_aura")).args(args).output().expect("the aura program runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (output.status.code().unwrap_or(-1), text(&output.stdout), text(&output.stderr))
}

fn scenario() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/aura.json").display().to_string()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("phalanx-aura-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

/// The game of `original` with one more strike, by player 1 on turn `turn`, recorded with its own
/// (honest) hashes and keyframes: another game of the same scenario, which diverges at that turn.
fn with_extra_strike(original: &Path, diverged: &Path, turn: u32) -> sim::EntityId {
    let rep = Replay::read(&std::fs::read(original).expect("the replay")[..]).expect("a whole replay");
    let rulesets = replay::rules::Rulesets::none().with(aura::ruleset());
    let mut world = replay::verify::initial_world(&rep.header, 1, &rulesets).expect("the replay's world");
    let mut out = Vec::new();
    let mut writer = ReplayWriter::new(&mut out, rep.header.clone()).expect("a writer");
    let mut victim = None;
    for t in &rep.turns {
        if writer.keyframe_due(&world) {
            writer.keyframe(&world).expect("a keyframe");
        }
        let mut commands = t.commands.clone();
        if t.turn == turn {
            let unit = world.units().find(|u| u.owner == sim::PlayerId(2)).expect("a blue unit").id;
            victim = Some(unit);
            let kind = sim::rules::command::<Aura>(&AuraCommand::Strike { unit, damage: 3 });
            commands.push(sim::Command { turn, player: sim::PlayerId(1), seq: 900, kind });
        }
        let report = world.step(&commands);
        writer.turn(&commands, &report).expect("a turn");
    }
    if writer.keyframe_due(&world) {
        writer.keyframe(&world).expect("a keyframe");
    }
    writer.finish().expect("the footer");
    std::fs::write(diverged, out).expect("the diverged replay");
    victim.expect("the strike's turn is in the replay")
}

#[test]
fn the_games_own_program_runs_verifies_diffs_seeks_draws_and_views_its_replays() {
    let dir = temp_dir("program");
    let rec = dir.join("aura.replay");
    let rec_text = rec.display().to_string();
    let (code, out, err) = aura(&["run", &scenario(), "--record", &rec_text, "--keyframe-every", "10"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("scenario aura: 60 turns"), "{out}");
    // The game's summary and its refusal, in the game's own words.
    assert!(out.contains("player 1: ") && out.contains(" healed, "), "{out}");
    assert!(out.contains(r#"refused by the aura rules: "NotYours""#), "{out}");

    let (code, out, err) = aura(&["verify", &rec_text, "--sync-test", "--strict"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("identical: 60 turns, 6 keyframes, sync test passed"), "{out}");

    // Another game of the same scenario: `diff` names the game's component, unit and field.
    let other = dir.join("other.replay");
    let victim = with_extra_strike(&rec, &other, 25);
    let (code, out, err) = aura(&["diff", &rec_text, &other.display().to_string()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("first diverging turn: 25"), "{out}");
    assert!(out.contains(r#"aura command {"Strike":"#), "the extra command, in the game's JSON form: {out}");
    let unit = format!("unit {}v{}", victim.index, victim.generation);
    let field_line =
        out.lines().find(|l| l.contains("aura.units") && l.contains(&unit) && l.contains("hp")).unwrap_or_else(|| panic!("{out}"));
    assert!(field_line.trim_start().starts_with(&format!("aura.units {unit} hp: ")) && field_line.contains(" | "), "{field_line}");

    let (code, out, err) = aura(&["seek", &rec_text, "33"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("turn 33"), "{out}");

    let png = dir.join("aura.png");
    let (code, out, err) = aura(&["render", &rec_text, "--turn", "30", "--out", &png.display().to_string()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(std::fs::read(&png).expect("the picture").starts_with(b"\x89PNG"));

    let html = dir.join("aura.html");
    let (code, out, err) = aura(&["view", &rec_text, &other.display().to_string(), "--out", &html.display().to_string()]);
    assert_eq!(code, 0, "{out}{err}");
    let page = replay::viewer::page_json(&std::fs::read_to_string(&html).expect("the page")).expect("the page's data");
    assert!(page.contains("aura.units") && page.contains("\"hp\""), "the viewer names the game's component and field");

    // The stock program does not know the game, and says what to do in one line.
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = phalanx_cli::run(["phalanx", "verify", rec_text.as_str()], &mut out, &mut err);
    let text = String::from_utf8_lossy(&out);
    assert_eq!(code, 2, "{text}");
    let line = text.lines().find(|l| l.contains("unknown ruleset")).unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains(r#"unknown ruleset "aura" version 1 (this program knows: skirmish 4)"#) && line.contains("Program::new().rules::<"),
        "{line}"
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn the_games_own_program_also_knows_the_reference_game() {
    let (code, out, err) = aura(&["--help"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Phalanx") && out.contains("Usage: aura"), "{out}");
    for command in ["run", "verify", "diff", "seek", "render", "view", "host", "join", "demo"] {
        assert!(out.contains(&format!("  {command} ")), "{command} missing from: {out}");
    }
    let skirmish = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/skirmish.json");
    let (code, out, err) = aura(&["run", &skirmish.display().to_string(), "--turns", "5"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("scenario skirmish: 5 turns"), "{out}");
}

#[test]
fn a_hosted_game_of_the_games_rules_plays_over_loopback_in_sync() {
    use std::io::BufRead;
    let dir = temp_dir("host");
    let host_replay = dir.join("host.replay");
    let mut host = Command::new(env!("CARGO_BIN_EXE_aura"))
        .args(["host", &scenario(), "--listen", "127.0.0.1:0", "--players", "2", "--turns", "40", "--turn-ms", "20"])
        .args(["--record", &host_replay.display().to_string()])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the host starts");
    let mut lines = std::io::BufReader::new(host.stdout.take().expect("the host's output")).lines();
    let mut next = || lines.next().expect("a line").expect("text");
    let addr = next().strip_prefix("listening on ").expect("the address first").to_owned();
    let tokens: Vec<String> = (0..2).map(|_| next().rsplit(' ').next().expect("a token").to_owned()).collect();
    let joins: Vec<_> = (1..=2)
        .map(|seat: usize| {
            Command::new(env!("CARGO_BIN_EXE_aura"))
                .args(["join", &addr, "--seat", &seat.to_string(), "--token", &tokens[seat - 1]])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .expect("a seat starts")
        })
        .collect();
    let status = host.wait().expect("the host ends");
    let rest: Vec<String> = std::iter::from_fn(|| lines.next().and_then(Result::ok)).collect();
    assert!(status.success(), "{rest:?}");
    let final_line = rest.iter().find(|l| l.contains("final hash")).unwrap_or_else(|| panic!("{rest:?}")).clone();
    let hash = final_line.rsplit(' ').next().expect("the hash").to_owned();
    for join in joins {
        let join = join.wait_with_output().expect("a seat ran");
        let text = String::from_utf8_lossy(&join.stdout);
        assert!(join.status.success(), "{text}");
        assert!(text.contains(&hash), "the seat ends with the host's hash {hash}: {text}");
    }
    let (code, out, err) = aura(&["verify", &host_replay.display().to_string()]);
    assert_eq!(code, 0, "{out}{err}");
    std::fs::remove_dir_all(&dir).expect("clean up");
}
