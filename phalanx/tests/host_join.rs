//! `phalanx host` and `phalanx join --bot` processes on 127.0.0.1: the game ends in sync, every
//! process prints the same final hash, and the host's replay and each client's own verify.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{TOKENS, final_hash};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios").join(name)
}

/// A fresh folder for one test's files.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("phalanx-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Runs `phalanx host SCENARIO --players 2 ... HOST_ARGS` with the test's tokens, then one
/// `phalanx join --bot` process per seat of `seats`; checks that every process exits 0 after
/// `turns` turns with one final hash, and that the host's replay verifies. Returns the host's
/// output.
fn play(dir: &Path, scenario: &Path, turns: u32, host_args: &[&str], seats: &[usize]) -> String {
    let (tokens, replay) = (dir.join("tokens.txt"), dir.join("game.replay"));
    std::fs::write(&tokens, TOKENS.join("\n")).expect("token file");
    let exe = env!("CARGO_BIN_EXE_phalanx");
    let mut host = Command::new(exe)
        .args(["host", scenario.to_str().expect("utf-8"), "--listen", "127.0.0.1:0", "--players", "2", "--turn-ms", "20"])
        .args(["--turns", &turns.to_string()])
        .args(["--token-file", tokens.to_str().expect("utf-8"), "--record", replay.to_str().expect("utf-8")])
        .args(host_args)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the host");
    let mut host_out = BufReader::new(host.stdout.take().expect("stdout"));
    let mut first = String::new();
    host_out.read_line(&mut first).expect("the host's first line");
    let addr = first.trim().strip_prefix("listening on ").expect("the bound address").to_owned();
    let joins: Vec<_> = seats
        .iter()
        .map(|&seat| {
            let own = dir.join(format!("seat-{seat}.replay"));
            Command::new(exe)
                .args(["join", &addr, "--seat", &seat.to_string(), "--token", TOKENS[seat - 1], "--bot"])
                .args(["--record", own.to_str().expect("utf-8")])
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
    assert!(host_text.contains(&format!("turns {turns} final hash")), "{host_text}");
    for join in joins {
        let output = join.wait_with_output().expect("client exit");
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{text}");
        assert_eq!(final_hash(&text), hash, "{text}");
        assert!(text.contains(&format!("ended after {turns} turns, in sync")), "{text}");
    }
    let mut out = Vec::new();
    let code = phalanx_cli::run(["phalanx", "verify", replay.to_str().expect("utf-8")], &mut out, &mut Vec::new());
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&out));
    // Each client recorded the game too: its replay verifies and is identical to the host's.
    for &seat in seats {
        let own = dir.join(format!("seat-{seat}.replay"));
        for command in ["verify", "diff"] {
            let mut out = Vec::new();
            let args: Vec<&str> = match command {
                "verify" => vec!["phalanx", "verify", own.to_str().expect("utf-8")],
                _ => vec!["phalanx", "diff", replay.to_str().expect("utf-8"), own.to_str().expect("utf-8")],
            };
            let code = phalanx_cli::run(args, &mut out, &mut Vec::new());
            let text = String::from_utf8_lossy(&out);
            assert_eq!(code, 0, "seat {seat}, {command}: {text}");
            if command == "diff" {
                assert_eq!(text.trim(), format!("identical: {turns} turns"), "seat {seat}");
            }
        }
    }
    host_text
}

#[test]
fn a_host_and_two_bot_processes_end_with_one_final_hash() {
    let dir = folder("host-join");
    let scenario = dir.join("game.json");
    std::fs::write(&scenario, common::scenario("cli", 5, 30)).expect("scenario file");
    play(&dir, &scenario, 30, &[], &[1, 2]);
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn the_skirmish_example_hosted_for_two_bot_processes_ends_in_sync_and_its_replay_verifies() {
    let dir = folder("host-join-skirmish");
    play(&dir, &example("skirmish.json"), 40, &[], &[1, 2]);
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn a_host_playing_a_seat_of_a_game_with_rules_and_one_bot_process_end_in_sync() {
    let dir = folder("host-join-battle");
    let host_text = play(&dir, &example("battle.json"), 30, &["--bot-seat", "1"], &[2]);
    assert!(host_text.contains("plays seat 1") && host_text.contains("plays seat 2"), "{host_text}");
    // The game's result by its rules, as `phalanx run` prints it: each player's record, then the
    // winner or the best score.
    let result = host_text.split("\nresult:\n").nth(1).unwrap_or_else(|| panic!("no result: {host_text}"));
    let lines: Vec<&str> = result.lines().take(3).collect();
    assert!(lines[0].starts_with("  player 1: ") && lines[1].starts_with("  player 2: "), "{host_text}");
    assert!(lines.iter().all(|l| l.contains("; score ") || l.contains("winner")), "{host_text}");
    assert!(lines[2].starts_with("  winner: player ") || lines[2].starts_with("  no winner yet; best score: player "), "{host_text}");
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn a_bot_seat_out_of_range_is_unusable_input() {
    let output = Command::new(env!("CARGO_BIN_EXE_phalanx"))
        .args(["host", example("battle.json").to_str().expect("utf-8"), "--listen", "127.0.0.1:0", "--players", "2"])
        .args(["--bot-seat", "3"])
        .output()
        .expect("run the host");
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&output.stderr), "phalanx: --bot-seat 3: the seats are 1 to 2\n");
}

#[test]
fn a_bad_token_file_is_named_with_its_line() {
    let dir = folder("host-bad-tokens");
    let tokens = dir.join("tokens.txt");
    std::fs::write(&tokens, format!("{}\n\nnot-a-token\n", TOKENS[0])).expect("token file");
    let output = Command::new(env!("CARGO_BIN_EXE_phalanx"))
        .args(["host", example("battle.json").to_str().expect("utf-8"), "--listen", "127.0.0.1:0", "--players", "2"])
        .args(["--token-file", tokens.to_str().expect("utf-8")])
        .output()
        .expect("run the host");
    assert_eq!(output.status.code(), Some(2));
    let expected = format!("phalanx: {}:3: a token is 32 hexadecimal digits, found \"not-a-token\"\n", tokens.display());
    assert_eq!(String::from_utf8_lossy(&output.stderr), expected);
    std::fs::remove_dir_all(&dir).expect("clean up");
}
