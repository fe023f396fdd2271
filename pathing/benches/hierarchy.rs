//! Hierarchy and incremental-update benchmark, in one run on the same Moving AI maps:
//!
//! - **Unreachable queries** (the goal in another component): our `ClassNav::goal_reach` (the
//!   answer, and the navcell a unit would head for instead) and our full `find_path` (that answer
//!   plus the path to the substitute navcell), against plain A* exhausting the start's component
//!   (`find_path_astar` returning `Unreachable`) and against the `hierarchical_pathfinding` crate's
//!   `find_path` returning `None` (an HPA*-style cache over 4-connected tiles; its path metric is
//!   not ours, so only its no-path answer is compared). Target: ours under 1% of the A* time.
//! - **Updates**: a 10×10 block placed and then removed, our `ClassNav::update_rect` (bit planes,
//!   jump tables, hierarchy) against a full `ClassNav::build`, and the peer's `tiles_changed` for the
//!   same hundred tiles. Target: under 2% of a full rebuild. Every fifth update is checked against a
//!   rebuild, outside the timing.
//!
//! `cargo bench -p phalanx-pathing --bench hierarchy` runs orz900d, Berlin_0_1024, den520d,
//! AcrosstheCape, random512-40-0 and 8room_000 (maps with a single component get no unreachable
//! queries); `PHALANX_BENCH_QUICK=1` (or no `--bench` argument) runs den520d with few samples.
//! Exits with status 1 when a check fails.

// A benchmark, not simulation code: it needs the wall clock to time and floats to report.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use common::{Failures, median, time, us};
use std::time::Duration;

use hierarchical_pathfinding::prelude::{ManhattanNeighborhood, PathCache, PathCacheConfig};
use pathing::movingai::{self, LAND};
use pathing::{CellRect, ClassNav, Goal, GoalReach, NavGrid, Navcell, Path, PathStatus, SearchLimits, SearchScratch};

const MOVINGAI_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/movingai/");

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = std::env::var("PHALANX_BENCH_QUICK").is_ok_and(|v| v == "1") || !args.iter().any(|a| a == "--bench");
    let maps: &[&str] =
        if quick { &["den520d"] } else { &["orz900d", "Berlin_0_1024", "den520d", "AcrosstheCape", "random512-40-0", "8room_000"] };
    let (n_updates, n_queries, reps) = if quick { (4, 3, 1) } else { (20, 20, 3) };
    let mut failures = Failures(Vec::new());
    println!(
        "Mode: {}; {n_updates} block positions, {n_queries} unreachable queries per map, {reps} runs each (medians).",
        if quick { "quick" } else { "full" }
    );
    println!();
    println!(
        "| map | size | full rebuild µs | place 10×10 µs | remove µs | update / rebuild | target ≤2% | peer tiles_changed µs | peer build ms |"
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |");
    let mut query_rows = Vec::new();
    for name in maps {
        let text = std::fs::read_to_string(format!("{MOVINGAI_DIR}{name}.map")).expect("map file");
        let parsed = movingai::parse_map(&text).expect("valid map");
        let mut grid: NavGrid = parsed.grid.clone();
        let (w, h) = (grid.width(), grid.height());

        let rebuilds: Vec<Duration> = (0..reps).map(|_| time(|| ClassNav::build(&grid, LAND)).1).collect();
        let rebuild = median(rebuilds);
        let mut nav = ClassNav::build(&grid, LAND);

        // The peer: 4-connected tiles, cost 1 passable, -1 blocked, chunks of 16.
        let peer_cost = |g: &NavGrid| {
            let g = g.clone();
            move |(x, y): (usize, usize)| {
                if g.is_passable(Navcell::new(x as u16, y as u16), LAND) { 1 } else { -1 }
            }
        };
        let (mut peer, peer_build) = time(|| {
            PathCache::new(
                (w as usize, h as usize),
                peer_cost(&grid),
                ManhattanNeighborhood::new(w as usize, h as usize),
                PathCacheConfig::with_chunk_size(16),
            )
        });

        // Block positions: a fixed stride over the map, keeping those where the block is all passable.
        let mut positions = Vec::new();
        let mut k = 0u64;
        while positions.len() < n_updates && k < 100_000 {
            k += 1;
            let i0 = ((k * 7919) % u64::from(w.saturating_sub(10).max(1))) as u32;
            let j0 = ((k * 104_729) % u64::from(h.saturating_sub(10).max(1))) as u32;
            let free = (j0..j0 + 10).all(|j| (i0..i0 + 10).all(|i| grid.is_passable(Navcell::new(i as u16, j as u16), LAND)));
            if free && i0 + 10 <= w && j0 + 10 <= h {
                positions.push((i0, j0));
            }
        }
        let (mut place, mut remove, mut peer_update) = (Vec::new(), Vec::new(), Vec::new());
        for (n, &(i0, j0)) in positions.iter().enumerate() {
            let tiles: Vec<(usize, usize)> = (j0..j0 + 10).flat_map(|j| (i0..i0 + 10).map(move |i| (i as usize, j as usize))).collect();
            for passable in [false, true] {
                for j in j0..j0 + 10 {
                    for i in i0..i0 + 10 {
                        grid.set_passable(Navcell::new(i as u16, j as u16), LAND, passable);
                    }
                }
                let ((), t) = time(|| nav.update_rect(&grid, CellRect::new(i0, j0, i0 + 10, j0 + 10)));
                if passable {
                    remove.push(t)
                } else {
                    place.push(t)
                }
                let ((), t) = time(|| peer.tiles_changed(&tiles, peer_cost(&grid)));
                peer_update.push(t);
                if n % 5 == 0 {
                    let rebuilt = ClassNav::build(&grid, LAND);
                    failures.check(nav == rebuilt, || format!("{name}: update at ({i0}, {j0}) differs from a rebuild"));
                }
            }
        }
        let (place, remove) = (median(place), median(remove));
        let ratio = us(place.max(remove)) / us(rebuild) * 100.0;
        if positions.is_empty() {
            println!(
                "| {name} | {w}×{h} | {:.0} | – | – | – | no passable 10×10 area | – | {:.0} |",
                us(rebuild),
                peer_build.as_secs_f64() * 1e3
            );
        } else {
            println!(
                "| {name} | {w}×{h} | {:.0} | {:.1} | {:.1} | {:.2}% | {} | {:.0} | {:.0} |",
                us(rebuild),
                us(place),
                us(remove),
                ratio,
                if ratio <= 2.0 { "PASS" } else { "MISS" },
                us(median(peer_update)),
                peer_build.as_secs_f64() * 1e3
            );
        }

        // Unreachable queries: starts in the largest component, goals in other components.
        let hierarchy = nav.hierarchy();
        let mut sizes: Vec<(u32, Navcell)> = vec![(0, Navcell::new(0, 0)); hierarchy.n_components() as usize];
        for j in 0..h as u16 {
            for i in 0..w as u16 {
                if let Some(c) = hierarchy.component(Navcell::new(i, j)) {
                    let entry = &mut sizes[c as usize];
                    if entry.0 == 0 {
                        entry.1 = Navcell::new(i, j);
                    }
                    entry.0 += 1;
                }
            }
        }
        let largest = (0..sizes.len()).max_by_key(|&c| (sizes[c].0, std::cmp::Reverse(c))).unwrap_or(0) as u32;
        let starts: Vec<Navcell> = (0..h as u16)
            .flat_map(|j| (0..w as u16).map(move |i| Navcell::new(i, j)))
            .filter(|&c| hierarchy.component(c) == Some(largest))
            .step_by((sizes.get(largest as usize).map_or(1, |s| s.0 as usize) / n_queries).max(1))
            .take(n_queries)
            .collect();
        let others: Vec<Navcell> = (0..sizes.len() as u32).filter(|&c| c != largest).map(|c| sizes[c as usize].1).take(n_queries).collect();
        if others.is_empty() || starts.is_empty() {
            query_rows.push(format!("| {name} | – | – | – | – | – | – | one component only |"));
            continue;
        }
        let mut scratch = SearchScratch::new();
        scratch.reserve(nav.pass_map());
        let mut path = Path::new();
        let (mut reach_t, mut find_t, mut astar_t, mut peer_t) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut astar_expanded = 0u64;
        let peer_get = peer_cost(&grid);
        for (q, &start) in starts.iter().enumerate() {
            let goal_cell = others[q % others.len()];
            let goal = Goal::navcell_center(goal_cell.i, goal_cell.j, grid.cell_size());
            for _ in 0..reps {
                let (reach, t) = time(|| nav.goal_reach(start, &goal, &mut scratch));
                reach_t.push(t);
                failures.check(matches!(reach, Some(GoalReach::Unreachable { .. })), || {
                    format!("{name}: {goal_cell} reported reachable from {start}")
                });
                let (outcome, t) = time(|| pathing::find_path(&nav, start, &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut path));
                find_t.push(t);
                failures.check(outcome.status == PathStatus::Partial(pathing::PartialReason::Unreachable), || {
                    format!("{name}: find_path {outcome:?}")
                });
                let (outcome, t) = time(|| {
                    pathing::find_path_astar(nav.pass_map(), None, start, &goal, &SearchLimits::UNLIMITED, &mut scratch, &mut path)
                });
                astar_t.push(t);
                astar_expanded += u64::from(outcome.expanded);
                failures.check(outcome.status == PathStatus::Partial(pathing::PartialReason::Unreachable), || {
                    format!("{name}: A* {outcome:?}")
                });
                let start_p = (usize::from(start.i), usize::from(start.j));
                let goal_p = (usize::from(goal_cell.i), usize::from(goal_cell.j));
                let (found, t) = time(|| peer.find_path(start_p, goal_p, &peer_get).is_some());
                peer_t.push(t);
                failures.check(!found, || format!("{name}: the peer found a path to another component"));
            }
        }
        let (reach, find, astar, peer) = (median(reach_t), median(find_t), median(astar_t), median(peer_t));
        let share = us(reach) / us(astar) * 100.0;
        query_rows.push(format!(
            "| {name} | {} | {:.1} | {:.0} | {:.0} | {:.0} | {:.3}% {} | {:.0} |",
            starts.len(),
            us(reach),
            us(find),
            us(astar),
            us(peer),
            share,
            if share < 1.0 { "PASS" } else { "MISS" },
            astar_expanded as f64 / (starts.len() * reps) as f64
        ));
    }
    println!();
    println!(
        "| map | queries | ours goal_reach µs | ours find_path µs (answer + path to the substitute) | A* exhausting µs | hierarchical_pathfinding µs (4-connected, no path) | goal_reach / A* (target <1%) | A* expansions |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |");
    for row in query_rows {
        println!("{row}");
    }
    if failures.0.is_empty() {
        println!("\nEvery check passed: updates equal rebuilds, unreachable goals are reported unreachable by all.");
    } else {
        println!("\n{} checks failed", failures.0.len());
        std::process::exit(1);
    }
}
