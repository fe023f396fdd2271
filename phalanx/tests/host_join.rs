//! `phalanx host` and two `phalanx join --bot` processes on 127.0.0.1: the game ends in
//! sync, every process prints the same final hash, and the host's replay verifies.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

const SCENARIO: &str = r#"{"format": "phalanx-scenario", "version": 3, "name": "cli", "turns": 30,
  "settings": {"players": 2, "seed": 5}, "map": {"generated": {"tiles": 16, "seed": 1}},
  "units": [
    {"name": "a", "player": 1, "class": "default", "at": [20, 20], "count": 3, "radius": 0.5, "speed": 8},
    {"name": "b", "player": 2, "class": "default", "at": [44, 44], "count": 3, "radius": 0.5, "speed": 8}
  ]}"#;

const TOKENS: [&str; 2] = ["000102030405060708090a0b0c0d0e0f", "101112131415161718191a1b1c1d1e1f"];

fn final_hash(stdout: &str) -> String {
    stdout.lines().rev().find_map(|l| l.split_once(" final hash ").map(|(_, h)| h.to_owned())).unwrap_or_default()
}

#[test]
fn a_host_and_two_bot_processes_end_with_one_final_hash() {
    let dir = std::env::temp_dir().join(format!("phalanx-host-join-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (scenario, tokens, replay) = (dir.join("game.json"), dir.join("tokens.txt"), dir.join("game.replay"));
    std::fs::write(&scenario, SCENARIO).expect("scenario file");
    std::fs::write(&tokens, TOKENS.join("\n")).expect("token file");
    let exe = env!("CARGO_BIN_EXE_phalanx");
    let mut host = Command::new(exe)
        .args(["host", scenario.to_str().expect("utf-8"), "--listen", "127.0.0.1:0", "--players", "2", "--turn-ms", "20"])
        .args(["--token-file", tokens.to_str().expect("utf-8"), "--record", replay.to_str().expect("utf-8")])
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the host");
    let mut host_out = BufReader::new(host.stdout.take().expect("stdout"));
    let mut first = String::new();
    host_out.read_line(&mut first).expect("the host's first line");
    let addr = first.trim().strip_prefix("listening on ").expect("the bound address").to_owned();
    let joins: Vec<_> = (1..=2)
        .map(|seat| {
            Command::new(exe)
                .args(["join", &addr, "--seat", &seat.to_string(), "--token", TOKENS[seat - 1], "--bot"])
                .stdout(Stdio::piped())
                .spawn()
                .expect("start a client")
        })
        .collect();
    let mut host_text = first;
    host_out.read_to_string(&mut host_text).expect("the host's output");
    assert!(host.wait().expect("host exit").success(), "{host_text}");
    let hash = final_hash(&host_text);
    assert_eq!(hash.len(), 64, "{host_text}");
    assert!(host_text.contains("turns 30 final hash"), "{host_text}");
    for join in joins {
        let output = join.wait_with_output().expect("client exit");
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{text}");
        assert_eq!(final_hash(&text), hash, "{text}");
        assert!(text.contains("ended after 30 turns, in sync"), "{text}");
    }
    let mut out = Vec::new();
    let code = phalanx::run(["phalanx", "verify", replay.to_str().expect("utf-8")], &mut out, &mut Vec::new());
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&out));
    std::fs::remove_dir_all(&dir).expect("clean up");
}
