//! Moving AI conformance: every problem's length must equal the published optimum, for JPS, JPS+,
//! both with the landmark heuristic, and A*.
//!
//! The plain `cargo test` runs a sample spread over each file (every `PHALANX_MOVINGAI_STRIDE`-th
//! problem, default 97); `.ci/run` sets `PHALANX_MOVINGAI_STRIDE=1` in release mode to run all 44,480.

use pathing::{Path, SearchScratch};
use phalanx_tests::{Algo, PAIRS, check_problem, load_pair};

fn stride() -> usize {
    std::env::var("PHALANX_MOVINGAI_STRIDE").ok().and_then(|s| s.parse().ok()).filter(|&s| s > 0).unwrap_or(97)
}

fn run(algo: Algo) {
    let stride = stride();
    // Two threads, each taking every other pair, keep the full run inside CI's budget.
    let failures: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|worker| {
                scope.spawn(move || {
                    let mut failures = Vec::new();
                    let mut scratch = SearchScratch::new();
                    let mut path = Path::new();
                    for name in PAIRS.iter().skip(worker).step_by(2) {
                        let pair = load_pair(name);
                        let mut checked = 0;
                        for problem in pair.problems.iter().step_by(stride) {
                            if let Err(e) = check_problem(&pair, problem, algo, &mut scratch, &mut path) {
                                failures.push(e);
                            }
                            checked += 1;
                        }
                        assert!(checked > 0, "{name}: no problem checked");
                    }
                    failures
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("worker panicked")).collect()
    });
    assert!(
        failures.is_empty(),
        "{} problems failed:\n{}",
        failures.len(),
        failures.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn jps_matches_every_optimal_length() {
    run(Algo::Jps);
}

#[test]
fn jps_plus_matches_every_optimal_length() {
    run(Algo::JpsPlus);
}

#[test]
fn jps_with_landmarks_matches_every_optimal_length() {
    run(Algo::JpsLm);
}

#[test]
fn jps_plus_with_landmarks_matches_every_optimal_length() {
    run(Algo::JpsPlusLm);
}

#[test]
fn astar_matches_every_optimal_length() {
    run(Algo::AStar);
}
