//! How close string pulling comes to the any-angle optimum on the Moving AI maps.
//!
//! For each map of `data/movingai/`, a sample of its scenario problems: those whose optimal grid
//! length is at most `PHALANX_BENCH_MAX_LENGTH` navcells (default 128; the oracle's cost grows
//! with the square of the corners near the path), `PHALANX_BENCH_PROBLEMS` of them (default 20)
//! spread evenly over the eligible ones in file order. Each is solved as the simulation solves a
//! unit's order from a navcell centre to a navcell centre ([`phalanx_tests::any_angle::smoothed`]:
//! `pathing::find_path`, then `string_pull`), and by the exact visibility-graph oracle of
//! [`phalanx_tests::any_angle`]. Reported per map and overall: the mean and worst ratio of our
//! length to the optimum, the same for the earlier rule that pulled over the turning points only,
//! and the mean time of the search, of the string pulling and of the earlier rule (one run each,
//! warm scratch).
//!
//! Checks, outside the timing: every smoothed segment is clear, no smoothed path is shorter than
//! the optimum, and the optimum is no longer than the grid path. Exits with status 1 when one fails.
//!
//! `PHALANX_BENCH_QUICK=1`, or no `--bench` argument (`cargo test --benches`): three maps, 3
//! problems each, of length at most 32.

// A benchmark, not simulation code: it needs the wall clock to time and floats to report.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::time::Instant;

use pathing::movingai;
use pathing::{ClassNav, Path, SearchScratch};
use phalanx_tests::any_angle::{centre, from_pass_map, length, point, pull_turning_points_only};

fn env_number(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

#[derive(Default)]
struct Stats {
    n: usize,
    sum: f64,
    worst: f64,
    sum_old: f64,
    worst_old: f64,
    search_us: f64,
    pull_us: f64,
    old_us: f64,
}

impl Stats {
    fn add(&mut self, other: &Stats) {
        self.n += other.n;
        self.sum += other.sum;
        self.worst = self.worst.max(other.worst);
        self.sum_old += other.sum_old;
        self.worst_old = self.worst_old.max(other.worst_old);
        self.search_us += other.search_us;
        self.pull_us += other.pull_us;
        self.old_us += other.old_us;
    }

    fn row(&self, name: &str) -> String {
        let n = self.n.max(1) as f64;
        format!(
            "| {name} | {} | {:.4} | {:.4} | {:.4} | {:.4} | {:.1} | {:.1} | {:.1} |",
            self.n,
            self.sum / n,
            self.worst,
            self.sum_old / n,
            self.worst_old,
            self.search_us / n,
            self.pull_us / n,
            self.old_us / n
        )
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = std::env::var("PHALANX_BENCH_QUICK").is_ok_and(|v| v == "1") || !args.iter().any(|a| a == "--bench");
    let per_map = env_number("PHALANX_BENCH_PROBLEMS").unwrap_or(if quick { 3 } else { 20 });
    let max_length = env_number("PHALANX_BENCH_MAX_LENGTH").unwrap_or(if quick { 32 } else { 128 }) as f64;
    let names: Vec<&str> = if quick { vec!["arena", "den520d", "random512-10-0"] } else { phalanx_tests::PAIRS.to_vec() };
    println!(
        "Mode: {}; {per_map} problems per map of optimal grid length at most {max_length}, spread evenly over the eligible ones.",
        if quick { "quick" } else { "full" }
    );
    println!();
    println!(
        "| map | problems | mean ratio | worst ratio | mean ratio, turning points only | worst, turning points only | search µs | string pulling µs | turning points only µs |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let dir = phalanx_tests::movingai_dir();
    let mut total = Stats::default();
    let mut failures = Vec::new();
    let mut scratch = SearchScratch::new();
    let mut path = Path::new();
    for name in names {
        let map_text = std::fs::read_to_string(dir.join(format!("{name}.map"))).expect("map file");
        let scen_text = std::fs::read_to_string(dir.join(format!("{name}.map.scen"))).expect("scenario file");
        let map = movingai::parse_map(&map_text).expect("map parses");
        let problems = movingai::parse_scen(&scen_text).expect("scenario parses");
        let eligible: Vec<_> =
            problems.iter().filter(|p| p.optimal_length.parse::<f64>().is_ok_and(|l| l > 0.0 && l <= max_length)).collect();
        let navs = [movingai::LAND, movingai::WATER].map(|class| ClassNav::build_with(&map.grid, class, true));
        let oracles = [from_pass_map(navs[0].pass_map()), from_pass_map(navs[1].pass_map())];
        let mut stats = Stats::default();
        let count = per_map.min(eligible.len());
        for k in 0..count {
            let p = eligible[k * eligible.len() / count];
            let (Some(start), Some(goal)) = (map.to_navcell(p.start.0, p.start.1), map.to_navcell(p.goal.0, p.goal.1)) else {
                failures.push(format!("{name} line {}: off the map", p.line));
                continue;
            };
            let class = map.class_at(p.start.0, p.start.1).unwrap_or(movingai::LAND);
            let which = usize::from(class == movingai::WATER);
            let nav = &navs[which];
            let started = Instant::now();
            let outcome = pathing::find_path(
                nav,
                start,
                &pathing::Goal::navcell_center(goal.i, goal.j, pathing::Fixed::ONE),
                &pathing::SearchLimits::UNLIMITED,
                &mut scratch,
                &mut path,
            );
            let search = started.elapsed();
            if outcome.status != pathing::PathStatus::Complete {
                failures.push(format!("{name} line {}: no complete path", p.line));
                continue;
            }
            let points: Vec<pathing::WorldPos> = path.waypoints().iter().map(|&c| centre(c)).collect();
            let started = Instant::now();
            let pulled = std::hint::black_box(pathing::smoothing::string_pull(nav.pass_map(), &points));
            let pull = started.elapsed();
            let started = Instant::now();
            let old = std::hint::black_box(pull_turning_points_only(nav.pass_map(), &points));
            let old_time = started.elapsed();
            if pulled.windows(2).any(|w| !pathing::collide::segment_clear(nav.pass_map(), w[0], w[1])) {
                failures.push(format!("{name} line {}: a smoothed segment is not clear", p.line));
            }
            let (ours, before) = (length(&pulled), length(&old));
            let grid_length = path.steps().straight as f64 + path.steps().diagonal as f64 * std::f64::consts::SQRT_2;
            let (Some(s), Some(g)) = (point(centre(start)), point(centre(goal))) else { unreachable!("centres are on the lattice") };
            let Some(optimum) = oracles[which].shortest(s, g, ours) else {
                failures.push(format!("{name} line {}: the oracle found no path within our length {ours}", p.line));
                continue;
            };
            if ours < optimum - 1e-9 || optimum > grid_length + 1e-9 {
                failures.push(format!("{name} line {}: ours {ours}, optimum {optimum}, grid {grid_length}", p.line));
            }
            let ratio = if optimum > 0.0 { ours / optimum } else { 1.0 };
            let ratio_old = if optimum > 0.0 { before / optimum } else { 1.0 };
            stats.n += 1;
            stats.sum += ratio;
            stats.worst = stats.worst.max(ratio);
            stats.sum_old += ratio_old;
            stats.worst_old = stats.worst_old.max(ratio_old);
            stats.search_us += search.as_secs_f64() * 1e6;
            stats.pull_us += pull.as_secs_f64() * 1e6;
            stats.old_us += old_time.as_secs_f64() * 1e6;
        }
        println!("{}", stats.row(name));
        total.add(&stats);
    }
    println!("{}", total.row("**all**"));
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("check failed: {f}");
        }
        std::process::exit(1);
    }
}
