//! Short-range (points-of-visibility) search benchmark on the reference world (`pathing::refworld`).
//!
//! Each query is a unit of radius 0.5 m standing near a navcell centre of the `default` class,
//! asking for a point 8 to 16 m away (on a passable navcell) in a 24 m box (`range` 12 m), among
//! 0, 20 or 80 other units' squares (half-size 0.4 m, on passable navcells, scattered over the
//! box, none covering the start or the goal). Starts, goals and squares come from a fixed
//! SplitMix64 stream, so every run asks the same questions.
//!
//! Timed per query with [`Instant`]: each query runs `R` times with one warm [`ShortScratch`]
//! and a query's time is the median of its runs; the table reports the median, mean and 95th
//! percentile over the queries, with the mean vertex count and expansions and how the searches
//! ended. Every answer is checked, outside the timing: the runs of a query agree exactly, every
//! waypoint is in the box, every segment passes `segment_clear` and misses every expanded square,
//! and a complete path ends in the goal.
//!
//! Modes:
//!
//! - `cargo bench -p phalanx-pathing --bench short_range`: the 1024 × 1024 reference world, 300 queries
//!   per square count, 5 runs each (`PHALANX_BENCH_PROBLEMS=N`, `PHALANX_BENCH_REPS=R` change them).
//! - `PHALANX_BENCH_QUICK=1`, or no `--bench` argument (`cargo test --benches`): a 256 × 256
//!   variant, 20 queries per square count, one run each.
//!
//! Exits with status 1 when any check fails.

// A benchmark, not simulation code: it needs the wall clock to time and floats to report.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use common::{median, us};
use std::hint::black_box;
use std::time::{Duration, Instant};

use pathing::collide::{UnitSquare, segment_clear, segment_hits_square};
use pathing::passability::NavWorld;
use pathing::refworld::{RefWorldParams, generate};
use pathing::{Fixed, Goal, Navcell, PassMap, ShortPartial, ShortQuery, ShortScratch, ShortStatus, SplitMix64, WorldPos, find_short_path};

const M: i64 = 1 << 16;
/// Half the box side. `[Units: metres]`
const RANGE_M: i64 = 12;
/// The mover's radius. `[Units: raw units]`
const CLEARANCE: i64 = M / 2;
/// Other units' half-size. `[Units: raw units]`
const HALF: i64 = 2 * M / 5;
const SQUARE_COUNTS: [usize; 3] = [0, 20, 80];

struct Problem {
    start: WorldPos,
    goal: Goal,
    squares: Vec<UnitSquare>,
}

fn at(x: i64, z: i64) -> WorldPos {
    WorldPos::new(Fixed::from_bits(x), Fixed::from_bits(z))
}

fn passable_at(map: &PassMap, x: i64, z: i64) -> bool {
    let (i, j) = (x.div_euclid(M), z.div_euclid(M));
    (0..i64::from(map.width())).contains(&i)
        && (0..i64::from(map.height())).contains(&j)
        && map.is_passable(Navcell::new(i as u16, j as u16))
}

/// `n` problems with `n_squares` squares each, all from one stream seeded by the square count.
fn problems(map: &PassMap, n: usize, n_squares: usize) -> Vec<Problem> {
    let mut rng = SplitMix64::new(0x5348_4F52_5421 ^ n_squares as u64);
    let (w, h) = (i64::from(map.width()) * M, i64::from(map.height()) * M);
    let mut out = Vec::new();
    while out.len() < n {
        // Near a navcell centre, off the grid lines.
        let (sx, sz) = (rng.range(0, w / M) * M + M / 2 + M / 8, rng.range(0, h / M) * M + M / 2 - M / 8);
        if !passable_at(map, sx, sz) {
            continue;
        }
        let mut goal = None;
        for _ in 0..10 {
            let (dx, dz) = (rng.range(-16 * M, 16 * M), rng.range(-16 * M, 16 * M));
            let d2 = i128::from(dx) * i128::from(dx) + i128::from(dz) * i128::from(dz);
            let (gx, gz) = (sx + dx, sz + dz);
            if (64 * i128::from(M) * i128::from(M)..=256 * i128::from(M) * i128::from(M)).contains(&d2)
                && dx.abs() < RANGE_M * M - M / 8
                && dz.abs() < RANGE_M * M - M / 8
                && passable_at(map, gx, gz)
            {
                goal = Some((gx, gz));
                break;
            }
        }
        let Some((gx, gz)) = goal else { continue };
        let mut squares = Vec::new();
        let mut tries = 0;
        while squares.len() < n_squares && tries < 20 * n_squares {
            tries += 1;
            let (cx, cz) = (sx + rng.range(-RANGE_M * M, RANGE_M * M), sz + rng.range(-RANGE_M * M, RANGE_M * M));
            let reach = HALF + CLEARANCE;
            let covers = |x: i64, z: i64| (x - cx).abs() <= reach && (z - cz).abs() <= reach;
            if passable_at(map, cx, cz) && !covers(sx, sz) && !covers(gx, gz) {
                squares.push(UnitSquare { center: at(cx, cz), half: Fixed::from_bits(HALF) });
            }
        }
        out.push(Problem { start: at(sx, sz), goal: Goal::point(at(gx, gz)).expect("on the map"), squares });
    }
    out
}

/// The checks of the module documentation; `None` when the answer is legal.
fn check(map: &PassMap, q: &ShortQuery, status: ShortStatus, path: &[WorldPos]) -> Option<String> {
    if status == ShortStatus::Complete && !path.last().is_some_and(|&p| q.goal.contains_point(p)) {
        return Some(format!("complete path {path:?} does not end in the goal"));
    }
    let range = q.range.to_bits();
    let (sx, sz) = (q.start.x.to_bits(), q.start.z.to_bits());
    let mut from = q.start;
    for &p in path {
        let (x, z) = (p.x.to_bits(), p.z.to_bits());
        if (x - sx).abs() > range || (z - sz).abs() > range {
            return Some(format!("waypoint {p:?} outside the box"));
        }
        if !segment_clear(map, from, p) {
            return Some(format!("segment {from:?} -> {p:?} not clear"));
        }
        if let Some(s) = q.squares.iter().find(|s| segment_hits_square(from, p, s, q.clearance)) {
            return Some(format!("segment {from:?} -> {p:?} hits {s:?}"));
        }
        from = p;
    }
    None
}

fn env_number(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = std::env::var("PHALANX_BENCH_QUICK").is_ok_and(|v| v == "1") || !args.iter().any(|a| a == "--bench");
    let params = if quick { RefWorldParams::scaled(64, 1) } else { RefWorldParams::reference(1) };
    let n = env_number("PHALANX_BENCH_PROBLEMS").unwrap_or(if quick { 20 } else { 300 });
    let reps = env_number("PHALANX_BENCH_REPS").unwrap_or(if quick { 1 } else { 5 }).max(1);
    let (desc, obstructions) = generate(&params);
    let class = desc.classes.by_name("default").expect("built-in class");
    let world = NavWorld::build(desc, obstructions).expect("reference world builds");
    let map = world.class_nav(class).expect("movement class").pass_map();
    println!(
        "Mode: {}; world {}×{} navcells, class `default`; {n} queries per square count, {reps} runs each (medians); box {} m, mover radius {} m.",
        if quick { "quick" } else { "full" },
        map.width(),
        map.height(),
        2 * RANGE_M,
        Fixed::from_bits(CLEARANCE)
    );
    println!();
    println!("| squares | median µs | mean µs | p95 µs | vertices | expansions | complete | unreachable | out of box | budget |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let mut failures = 0;
    let mut scratch = ShortScratch::new();
    let mut out = Vec::new();
    for n_squares in SQUARE_COUNTS {
        let problems = problems(map, n, n_squares);
        let mut times = Vec::new();
        let (mut vertices, mut expanded) = (0u64, 0u64);
        let mut ends = [0usize; 4];
        for problem in &problems {
            let q = ShortQuery {
                start: problem.start,
                goal: &problem.goal,
                range: Fixed::from_num(RANGE_M),
                clearance: Fixed::from_bits(CLEARANCE),
                squares: &problem.squares,
                node_budget: 10_000,
            };
            let mut runs = Vec::new();
            let mut answer = None;
            for _ in 0..reps {
                let started = Instant::now();
                let outcome = black_box(find_short_path(map, &q, &mut scratch, &mut out));
                runs.push(started.elapsed());
                let this = (outcome, out.clone());
                if answer.as_ref().is_some_and(|a| *a != this) {
                    eprintln!("CHECK FAILED: query from {:?}: runs disagree", q.start);
                    failures += 1;
                }
                answer = Some(this);
            }
            let (outcome, path) = answer.expect("at least one run");
            if let Some(problem) = check(map, &q, outcome.status, &path) {
                eprintln!("CHECK FAILED: query from {:?}: {problem}", q.start);
                failures += 1;
            }
            times.push(median(runs));
            vertices += u64::from(outcome.vertices);
            expanded += u64::from(outcome.expanded);
            ends[match outcome.status {
                ShortStatus::Complete => 0,
                ShortStatus::Partial(ShortPartial::Unreachable) => 1,
                ShortStatus::Partial(ShortPartial::OutOfBox) => 2,
                ShortStatus::Partial(ShortPartial::NodeBudget) => 3,
            }] += 1;
        }
        times.sort();
        let mean = times.iter().sum::<Duration>() / times.len().max(1) as u32;
        let p95 = times.get((times.len() * 95 / 100).min(times.len().saturating_sub(1))).copied().unwrap_or_default();
        let per = |total: u64| total as f64 / problems.len().max(1) as f64;
        println!(
            "| {n_squares} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {} | {} | {} | {} |",
            us(median(times.clone())),
            us(mean),
            us(p95),
            per(vertices),
            per(expanded),
            ends[0],
            ends[1],
            ends[2],
            ends[3]
        );
    }
    if failures > 0 {
        eprintln!("{failures} checks failed");
        std::process::exit(1);
    }
}
