//! `phalanx host --json` and `phalanx join --json` on 127.0.0.1: every line of stdout is one JSON
//! object, every kind is one docs/protocol.md lists, and the last names how the game ended.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::TOKENS;
use serde_json::Value;

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios").join(name)
}

/// A fresh folder for one test's files.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("phalanx-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// The event kinds docs/protocol.md's section "JSON event streams" lists in its tables.
fn documented_kinds() -> Vec<String> {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/protocol.md")).expect("docs/protocol.md");
    let section = doc.split("## JSON event streams").nth(1).and_then(|s| s.split("\n## ").next()).expect("the section");
    section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .flat_map(|l| l.split(" |").next().unwrap_or("").split(", ").map(|k| k.trim_matches('`').to_owned()).collect::<Vec<_>>())
        .collect()
}

/// Parses every line of a stream as one JSON object with a string `event` and a number `ms`, of
/// a documented kind.
#[track_caller]
fn parse(what: &str, text: &str) -> Vec<Value> {
    let kinds = documented_kinds();
    assert!(kinds.len() > 30, "{kinds:?}");
    let events: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {line}\n{text}")))
        .collect();
    assert!(!events.is_empty(), "{what}: no line");
    for e in &events {
        let kind = e["event"].as_str().unwrap_or_else(|| panic!("{what}: no event kind in {e}"));
        assert!(kinds.iter().any(|k| k == kind), "{what}: kind {kind} is not in docs/protocol.md: {e}");
        assert!(e["ms"].is_u64(), "{what}: no ms in {e}");
    }
    events
}

/// The events of one kind.
fn of<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["event"] == kind).collect()
}

/// Kills a child still running when a failed assertion unwinds past it.
struct Reaper(Option<Child>);

impl Drop for Reaper {
    fn drop(&mut self) {
        if let Some(child) = self.0.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Reaper {
    fn child(&mut self) -> &mut Child {
        self.0.as_mut().expect("a child")
    }

    fn output(mut self) -> std::process::Output {
        self.0.take().expect("a child").wait_with_output().expect("the child's exit")
    }
}

/// Starts `phalanx host --json` for two seats with the test's tokens; returns it, its stdout
/// lines and the address of its first event.
fn start_host(
    scenario: &Path,
    tokens: &Path,
    args: &[&str],
) -> (Reaper, std::io::Lines<BufReader<std::process::ChildStdout>>, String, String) {
    let mut host = Reaper(Some(
        Command::new(env!("CARGO_BIN_EXE_phalanx"))
            .args(["host", scenario.to_str().expect("utf-8"), "--listen", "127.0.0.1:0", "--players", "2", "--json"])
            .args(["--token-file", tokens.to_str().expect("utf-8")])
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the host"),
    ));
    let mut lines = BufReader::new(host.child().stdout.take().expect("stdout")).lines();
    let first = lines.next().expect("a first line").expect("the host's first line");
    let listening: Value = serde_json::from_str(&first).unwrap_or_else(|e| panic!("not JSON ({e}): {first}"));
    assert_eq!(listening["event"], "listening", "{first}");
    assert_eq!(listening["tokens"], Value::Null, "a token file was given: {first}");
    let addr = listening["addr"].as_str().expect("the address").to_owned();
    (host, lines, addr, format!("{first}\n"))
}

fn join(addr: &str, seat: usize, token: &str) -> Reaper {
    Reaper(Some(
        Command::new(env!("CARGO_BIN_EXE_phalanx"))
            .args(["join", addr, "--seat", &seat.to_string(), "--token", token, "--bot", "--json"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start a client"),
    ))
}

/// Reads the host's lines until an event of `kind`, keeping them all.
fn read_until(lines: &mut impl Iterator<Item = std::io::Result<String>>, text: &mut String, kind: &str) {
    let needle = format!("\"event\":\"{kind}\"");
    for line in lines.by_ref() {
        let line = line.expect("a line of the host");
        text.push_str(&line);
        text.push('\n');
        if line.contains(&needle) {
            return;
        }
    }
    panic!("the host never wrote a {kind} event: {text}");
}

/// The skirmish AI example (a game of the skirmish rules) for two bot processes, every stream JSON: each ends with `end` of `how`
/// `in_sync`, the host's and the clients' final hashes agree, each has the game's result by its
/// rules (every player's record and the winner or best score) and a progress event at least.
#[test]
fn the_json_streams_of_a_skirmish_game_parse_and_end_in_sync_with_the_game_s_result() {
    let dir = folder("json-skirmish");
    let tokens = dir.join("tokens.txt");
    std::fs::write(&tokens, TOKENS.join("\n")).expect("token file");
    let (host, mut lines, addr, mut host_text) = start_host(&example("skirmish-ai.json"), &tokens, &["--turns", "60", "--turn-ms", "25"]);
    let joins: Vec<Reaper> = (1..=2).map(|seat| join(&addr, seat, TOKENS[seat - 1])).collect();
    for line in lines.by_ref() {
        host_text.push_str(&line.expect("a line of the host"));
        host_text.push('\n');
    }
    let exit = host.output();
    assert!(exit.status.success(), "{host_text}");
    let events = parse("host", &host_text);
    let last = events.last().expect("a last event");
    assert_eq!(
        (last["event"].as_str(), last["how"].as_str(), last["exit"].as_u64()),
        (Some("end"), Some("in_sync"), Some(0)),
        "{host_text}"
    );
    assert_eq!(last["turns"], 60, "{host_text}");
    let hash = last["final_hash"].as_str().expect("the final hash").to_owned();
    assert_eq!(hash.len(), 64);
    assert_eq!(of(&events, "joined").len(), 2, "{host_text}");
    assert_eq!(of(&events, "started").len(), 1, "{host_text}");
    assert!(!of(&events, "progress").is_empty(), "{host_text}");
    assert!(of(&events, "progress").iter().all(|p| p["turns"] == 60 && p["turn"].as_u64() <= Some(60)), "{host_text}");
    assert_eq!(of(&events, "ended")[0]["final_hash"], hash.as_str(), "{host_text}");
    assert_eq!(of(&events, "summary")[0]["final_hash"], hash.as_str(), "{host_text}");
    let host_result = check_result("host", &events);
    for (k, join) in joins.into_iter().enumerate() {
        let output = join.output();
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(output.status.success(), "seat {}: {text}", k + 1);
        let events = parse("join", &text);
        assert_eq!(events[0]["event"], "welcomed", "{text}");
        assert_eq!(events[0]["seat"], k + 1, "{text}");
        let last = events.last().expect("a last event");
        assert_eq!(
            (last["event"].as_str(), last["how"].as_str(), last["exit"].as_u64()),
            (Some("end"), Some("in_sync"), Some(0)),
            "{text}"
        );
        assert_eq!(last["final_hash"], hash.as_str(), "{text}");
        assert_eq!(last["reason"], Value::Null, "{text}");
        let summary = of(&events, "summary");
        assert!(summary[0]["order_latency"]["orders"].as_u64() > Some(0), "the bot ordered: {text}");
        assert!(summary[0]["traffic"]["received"].as_u64() > Some(0), "{text}");
        // Every peer reads the same result off the same world.
        assert_eq!(check_result("join", &events), host_result, "{text}");
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}

/// The one `result` event of a skirmish game: the rules' name, a line per player, then the
/// winner or the best score; returns its lines.
#[track_caller]
fn check_result(what: &str, events: &[Value]) -> Vec<String> {
    let results = of(events, "result");
    assert_eq!(results.len(), 1, "{what}: {events:?}");
    assert_eq!(results[0]["rules"], "skirmish", "{what}");
    let lines: Vec<String> =
        results[0]["lines"].as_array().expect("lines").iter().map(|l| l.as_str().expect("a line").to_owned()).collect();
    assert_eq!(lines.len(), 3, "{what}: {lines:?}");
    for (k, line) in lines[..2].iter().enumerate() {
        assert!(line.starts_with(&format!("player {}: ", k + 1)) && line.contains("; score "), "{what}: {line}");
    }
    assert!(lines[2].starts_with("winner: player ") || lines[2].starts_with("no winner yet; best score: player "), "{what}: {}", lines[2]);
    lines
}

/// A client refused, a seat that freezes (its process stopped) and one that plays on: the host's
/// stream says who it waits for and how far behind, its lag growing once a second toward the
/// drop, then `dropped`, and ends `in_sync`; the refused client's stream ends `refused` (exit 2),
/// and the frozen one, let go after its drop, ends `kicked` (exit 3) with the host's reason.
#[test]
fn the_json_streams_say_who_the_game_waits_for_and_how_each_client_ended() {
    let dir = folder("json-stall");
    let (scenario, tokens) = (dir.join("game.json"), dir.join("tokens.txt"));
    std::fs::write(&scenario, common::scenario("json-stall", 7, 400)).expect("scenario file");
    std::fs::write(&tokens, TOKENS.join("\n")).expect("token file");
    let (host, mut lines, addr, mut host_text) = start_host(&scenario, &tokens, &["--turn-ms", "20"]);
    let refused = join(&addr, 2, TOKENS[0]).output();
    let refused_text = String::from_utf8_lossy(&refused.stdout).into_owned();
    assert_eq!(refused.status.code(), Some(2), "{refused_text}");
    let refused_events = parse("refused join", &refused_text);
    let last = refused_events.last().expect("an end");
    assert_eq!((last["event"].as_str(), last["how"].as_str()), (Some("end"), Some("refused")), "{refused_text}");
    assert_eq!(last["reason"], "wrong token for seat 2", "{refused_text}");
    let mut frozen = join(&addr, 1, TOKENS[0]);
    let steady = join(&addr, 2, TOKENS[1]);
    read_until(&mut lines, &mut host_text, "started");
    std::thread::sleep(Duration::from_millis(500));
    let pid = frozen.child().id().to_string();
    assert!(Command::new("kill").args(["-STOP", &pid]).status().expect("kill -STOP").success());
    read_until(&mut lines, &mut host_text, "dropped");
    assert!(Command::new("kill").args(["-CONT", &pid]).status().expect("kill -CONT").success());
    for line in lines.by_ref() {
        host_text.push_str(&line.expect("a line of the host"));
        host_text.push('\n');
    }
    let exit = host.output();
    assert!(exit.status.success(), "{host_text}");
    let events = parse("host", &host_text);
    assert!(of(&events, "waiting_players").iter().any(|w| w["joined"] == 0 && w["seats"] == 2), "{host_text}");
    assert!(of(&events, "closed").iter().any(|c| c["reason"] == "wrong token for seat 2"), "{host_text}");
    let waits: Vec<&Value> = of(&events, "waiting_seat");
    assert!(waits.len() >= 5, "the wait is told again as the lag grows: {host_text}");
    assert!(waits.iter().all(|w| w["seat"] == 1 && w["drops_at_ms"] == 10_000), "{host_text}");
    let behind: Vec<u64> = waits.iter().map(|w| w["behind_ms"].as_u64().expect("behind_ms")).collect();
    assert!(behind.windows(2).all(|p| p[0] < p[1]) && behind[behind.len() - 1] >= 8_000, "{behind:?}");
    assert!(waits[0]["text"].as_str().is_some_and(|t| t.starts_with("waiting for seat 1: ")), "{host_text}");
    assert_eq!(of(&events, "dropped").len(), 1, "{host_text}");
    assert_eq!(of(&events, "dropped")[0]["seat"], 1, "{host_text}");
    let last = events.last().expect("an end");
    assert_eq!(
        (last["event"].as_str(), last["how"].as_str(), last["turns"].as_u64()),
        (Some("end"), Some("in_sync"), Some(400)),
        "{host_text}"
    );
    let output = steady.output();
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{text}");
    let steady_events = parse("steady join", &text);
    assert!(of(&steady_events, "waiting_seat").iter().any(|w| w["seat"] == 1), "the seat playing on is told too: {text}");
    assert!(of(&steady_events, "dropped").iter().any(|d| d["seat"] == 1), "{text}");
    assert_eq!(steady_events.last().map(|e| e["how"].clone()), Some(Value::from("in_sync")), "{text}");
    assert_eq!(steady_events.last().map(|e| e["final_hash"].clone()), Some(last["final_hash"].clone()), "{text}");
    let output = frozen.output();
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(3), "{text}");
    let frozen_events = parse("frozen join", &text);
    let end = frozen_events.last().expect("an end");
    assert_eq!((end["event"].as_str(), end["how"].as_str(), end["exit"].as_u64()), (Some("end"), Some("kicked"), Some(3)), "{text}");
    assert_eq!(end["reason"], "seat 1 dropped for lagging", "{text}");
    assert!(of(&frozen_events, "result").is_empty(), "a client that left early has no result: {text}");
    std::fs::remove_dir_all(&dir).expect("clean up");
}
