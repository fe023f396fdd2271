//! How big the demo's viewer page is and how long headless Chromium takes to open it.
//!
//! Plays the demo (`phalanx demo`, its 500 turns; 60 in quick mode) into a temporary directory,
//! then opens `demo.html#bench` in headless Chromium `PHALANX_BENCH_REPS` times (default 5; 1 in
//! quick mode). The page logs `PHXREADY <ms> complete <ms>` to the console: when its data is
//! unpacked and its first picture drawn, and when its timeline and players' graphs are built too,
//! `performance.now()` from the start of loading, which Chromium prints on its standard error
//! (`--enable-logging=stderr`); the browser is then stopped. Prints the page's size and the median
//! and every run's time, for both.
//!
//! `PHALANX_BENCH_QUICK=1`, or no `--bench` argument (`cargo test --benches`): quick mode. Without
//! `/usr/bin/chromium` it says so and measures only the size; under `CI=true` that is a failure.

// A benchmark, not simulation code: it reads the browser's timings and reports floats.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Longest a single opening may take before the run counts as failed.
const DEADLINE: Duration = Duration::from_secs(60);

/// Opens `page` once; the page's own times in milliseconds: its first picture, and complete.
fn open_once(page: &std::path::Path, profile: &std::path::Path) -> Result<(f64, f64), String> {
    let mut child = Command::new("/usr/bin/chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-dev-shm-usage",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("file://{}#bench", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("chromium does not start: {e}"))?;
    let stderr = child.stderr.take().ok_or("no standard error")?;
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(at) = line.find("PHXREADY ") {
                let mut words = line[at + 9..].split_whitespace();
                let number = |word: Option<&str>| -> Result<f64, String> {
                    let word = word.unwrap_or("");
                    let digits: String = word.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
                    digits.parse::<f64>().map_err(|e| format!("{line}: {e}"))
                };
                let ready = number(words.next());
                let complete = match words.next() {
                    Some("complete") => number(words.next()),
                    _ => Err(format!("{line}: expected `complete <ms>` after the first time")),
                };
                let _ = send.send(ready.and_then(|r| complete.map(|c| (r, c))));
                return;
            }
        }
        let _ = send.send(Err("chromium ended without the page saying it was ready".to_owned()));
    });
    let result = receive.recv_timeout(DEADLINE).unwrap_or_else(|_| Err(format!("no answer within {DEADLINE:?}")));
    let _ = child.kill();
    let _ = child.wait();
    result
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = std::env::var("PHALANX_BENCH_QUICK").is_ok_and(|v| v == "1") || !args.iter().any(|a| a == "--bench");
    let reps: usize = std::env::var("PHALANX_BENCH_REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(if quick { 1 } else { 5 });
    let dir = std::env::temp_dir().join(format!("phalanx-viewer-open-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let out_dir = dir.join("demo");
    let mut demo = vec!["phalanx".to_owned(), "demo".to_owned(), "--out".to_owned(), out_dir.display().to_string()];
    if quick {
        demo.extend(["--turns".to_owned(), "60".to_owned()]);
    }
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = phalanx_cli::Program::new().run_with(demo, &mut out, &mut err);
    assert_eq!(code, 0, "phalanx demo: {}", String::from_utf8_lossy(&err));
    let page = out_dir.join("demo.html");
    let bytes = std::fs::metadata(&page).expect("the demo writes its page").len();
    println!(
        "Mode: {}; the demo's page: {bytes} bytes ({:.2} MB)",
        if quick { "quick (60 turns)" } else { "full (500 turns)" },
        bytes as f64 / 1e6
    );
    if !std::path::Path::new("/usr/bin/chromium").exists() {
        let ci = std::env::var_os("CI");
        match phalanx_tests::ci::when_missing("/usr/bin/chromium", "the viewer's opening benchmark", ci.as_deref()) {
            phalanx_tests::ci::WhenMissing::Skip(message) => println!("{message}"),
            phalanx_tests::ci::WhenMissing::Fail(message) => {
                eprintln!("{message}");
                std::process::exit(1);
            }
        }
        return;
    }
    let profile = dir.join("profile");
    let mut times = Vec::new();
    for _ in 0..reps.max(1) {
        match open_once(&page, &profile) {
            Ok(ms) => times.push(ms),
            Err(e) => {
                eprintln!("opening the page: {e}");
                std::process::exit(1);
            }
        }
    }
    let report = |what: &str, times: Vec<f64>| {
        let mut sorted = times.clone();
        sorted.sort_by(f64::total_cmp);
        let runs: Vec<String> = times.iter().map(|t| format!("{t:.0}")).collect();
        println!("{what} in {:.0} ms (median of {}; runs {} ms)", sorted[sorted.len() / 2], sorted.len(), runs.join(", "));
    };
    report("opened (first picture)", times.iter().map(|t| t.0).collect());
    report("complete (timeline and graphs)", times.iter().map(|t| t.1).collect());
    let _ = std::fs::remove_dir_all(&dir);
}
