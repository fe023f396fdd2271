//! A `phalanx join` process killed mid-game and started again rejoins its seat, and an observer
//! process joining mid-game ends with the host's final hash: the programs over 127.0.0.1.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{TOKENS, final_hash};

/// Reads the host's lines until one starts with `prefix`, keeping them all.
fn read_until(lines: &mut impl Iterator<Item = std::io::Result<String>>, text: &mut String, prefix: &str) {
    for line in lines.by_ref() {
        let line = line.expect("a line of the host");
        text.push_str(&line);
        text.push('\n');
        if line.starts_with(prefix) {
            return;
        }
    }
    panic!("the host never printed {prefix:?}: {text}");
}

#[test]
fn a_killed_and_restarted_join_process_and_an_observer_process_end_with_the_host_s_hash() {
    let dir = std::env::temp_dir().join(format!("phalanx-rejoin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (scenario, tokens) = (dir.join("game.json"), dir.join("tokens.txt"));
    std::fs::write(&scenario, common::scenario("rejoin", 21, 150)).expect("scenario file");
    std::fs::write(&tokens, TOKENS.join("\n")).expect("token file");
    let exe = env!("CARGO_BIN_EXE_phalanx");
    let mut host = Command::new(exe)
        .args(["host", scenario.to_str().expect("utf-8"), "--listen", "127.0.0.1:0", "--players", "2", "--turn-ms", "20"])
        .args(["--token-file", tokens.to_str().expect("utf-8")])
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the host");
    let mut lines = BufReader::new(host.stdout.take().expect("stdout")).lines();
    let mut host_text = String::new();
    read_until(&mut lines, &mut host_text, "listening on ");
    let addr = host_text.trim().strip_prefix("listening on ").expect("the bound address").to_owned();
    let own = dir.join("restarted.replay");
    let join = |seat: usize, record: bool| {
        let record: &[&str] = if record { &["--record", own.to_str().expect("utf-8")] } else { &[] };
        Command::new(exe)
            .args(["join", &addr, "--seat", &seat.to_string(), "--token", TOKENS[seat - 1], "--bot"])
            .args(record)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start a client")
    };
    let mut doomed = join(1, false);
    let steady = join(2, false);
    read_until(&mut lines, &mut host_text, "started");
    // 150 turns of 20 ms: the kill comes about a quarter into the game.
    std::thread::sleep(Duration::from_millis(700));
    doomed.kill().expect("kill the first client");
    let _ = doomed.wait();
    read_until(&mut lines, &mut host_text, "left: seat 1");
    let restarted = join(1, true);
    let observer = Command::new(exe).args(["join", &addr, "--observe"]).stdout(Stdio::piped()).spawn().expect("start an observer");
    let mut rest = String::new();
    for line in lines {
        rest.push_str(&line.expect("a line of the host"));
        rest.push('\n');
    }
    host_text.push_str(&rest);
    assert!(host.wait().expect("host exit").success(), "{host_text}");
    let hash = final_hash(&host_text);
    assert_eq!(hash.len(), 64, "{host_text}");
    assert!(host_text.contains("turns 150 final hash"), "{host_text}");
    assert!(host_text.contains("rejoined: connection"), "{host_text}");
    assert!(host_text.contains("observer: connection"), "{host_text}");
    for (what, child) in [("seat 2", steady), ("restarted seat 1", restarted), ("observer", observer)] {
        let output = child.wait_with_output().expect("client exit");
        let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
        let _ = output.stderr.as_slice().read_to_string(&mut text);
        assert!(output.status.success(), "{what}: {text}");
        assert_eq!(final_hash(&text), hash, "{what}: {text}");
        assert!(text.contains("turns 150 final hash"), "{what}: {text}");
        assert!(text.contains("ended after 150 turns, in sync"), "{what}: {text}");
        if what == "restarted seat 1" {
            // A client that did not step the game from its first turn records no replay of it.
            assert!(text.contains("not recording: this client joined at turn"), "{text}");
            assert!(text.contains("no replay written to") && !own.exists(), "{text}");
        }
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}
