//! The `phalanx` binary under a pseudo-terminal, where its progress bars draw on stderr.
//!
//! Regression: `phalanx verify` hung forever when stderr was a terminal. The main thread held the
//! stderr lock for the whole run while the progress bar, updated from a rayon worker, waited for
//! that lock. Every command that draws a bar, or may, is run here with a terminal on stdout and
//! stderr and must finish with its normal exit code within a generous deadline.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

/// How long one command may take before the test kills it and fails (the slowest, the sync test
/// of a 30-turn replay and a 5-turn demo, take a few seconds).
const DEADLINE: Duration = Duration::from_secs(120);

fn dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("pty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios").join(name).display().to_string()
}

/// Runs `phalanx ARGS` on a new pseudo-terminal; returns its exit code and what it wrote there.
/// The terminal's output is drained on a thread while the child runs, so a full terminal buffer
/// cannot block it; past [`DEADLINE`] the child is killed and the test fails.
fn phalanx_on_a_terminal(args: &[&str]) -> (u32, String) {
    let pty = native_pty_system();
    let pair = pty.openpty(PtySize { rows: 24, cols: 100, pixel_width: 0, pixel_height: 0 }).expect("a pseudo-terminal");
    let mut command = CommandBuilder::new(env!("CARGO_BIN_EXE_phalanx"));
    command.args(args);
    let mut child = pair.slave.spawn_command(command).expect("phalanx starts");
    // Only the child holds the terminal's slave side now, so the reader sees its end.
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().expect("a reader of the terminal");
    let (sender, output) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let mut buf = [0u8; 4096];
        // Linux reports the end of a terminal whose other side closed as an error (EIO).
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            bytes.extend_from_slice(&buf[..n]);
        }
        let _ = sender.send(bytes);
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("the child's status") {
            break status;
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            panic!("phalanx {args:?} did not finish within {DEADLINE:?} on a terminal (killed)");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(pair.master);
    let bytes = output.recv_timeout(Duration::from_secs(10)).unwrap_or_default();
    (status.exit_code(), String::from_utf8_lossy(&bytes).into_owned())
}

#[test]
fn every_command_finishes_on_a_terminal() {
    let dir = dir();
    let replay = dir.join("skirmish.replay").display().to_string();
    let skirmish = example("skirmish.json");
    let demo_dir = dir.join("demo").display().to_string();
    let png = dir.join("skirmish.png").display().to_string();
    let html = dir.join("skirmish.html").display().to_string();
    let battle = example("battle.json");
    let cases: [(&[&str], &str); 11] = [
        (&["run", &skirmish, "--turns", "30", "--record", &replay, "--keyframe-every", "10"], "recorded "),
        (&["verify", &replay], "identical: 30 turns"),
        (&["verify", "--jobs", "2", &replay, &replay, &replay], "3 files: 3 identical"),
        (&["verify", "--sync-test", &replay], "sync test passed"),
        (&["verify", "--jobs", "2", "--threads", "2", "--sync-test", &replay, &replay], "2 files: 2 identical"),
        (&["run", &skirmish, "--turns", "20", "--threads", "2"], "scenario skirmish: 20 turns"),
        (&["demo", "--turns", "5", "--out", &demo_dir], "verified identical: 5 turns"),
        (&["seek", &replay, "17"], "restored from keyframe of turn 10"),
        (&["render", &replay, "--out", &png], "turn 30"),
        (&["view", &replay, "--out", &html], "31 frames"),
        // A host playing both seats itself: its progress bar and event lines share the terminal.
        (
            &[
                "host",
                &battle,
                "--listen",
                "127.0.0.1:0",
                "--players",
                "2",
                "--turns",
                "20",
                "--turn-ms",
                "10",
                "--bot-seat",
                "1",
                "--bot-seat",
                "2",
            ],
            "turns 20 final hash ",
        ),
    ];
    for (args, expected) in cases {
        let (code, output) = phalanx_on_a_terminal(args);
        assert_eq!(code, 0, "phalanx {args:?} on a terminal:\n{output}");
        assert!(output.contains(expected), "phalanx {args:?} on a terminal printed no {expected:?}:\n{output}");
    }
}
