//! Waypoint-graph benchmark on the reference world (1024 × 1024 navcells, class `default`):
//!
//! - **Build**: [`WaypointGraph::build`] for about 200 waypoints spread over the passable land
//!   (seeded, at least 36 navcells apart) with a range of 200 m, one bounded search per candidate
//!   pair. Reported with the number of candidate pairs and edges.
//! - **Routes**: [`WaypointGraph::route`] between seeded pairs of waypoints, each checked against a
//!   plain Dijkstra over the graph's edges (same cost, consecutive waypoints joined).
//! - **Nearest waypoint**: [`WaypointGraph::nearest_waypoint`] from seeded passable points, each
//!   checked against an unlimited [`pathing::find_path`] to the waypoint it returns (same cost).
//! - **Update**: a building placed across an edge's path, [`NavWorld::update`], then
//!   [`WaypointGraph::update`] with the dirty rectangles; each compared with a full build outside
//!   the timing.
//!
//! `cargo bench -p phalanx-pathing --bench waypoints` runs the reference world; `PHALANX_BENCH_QUICK=1`
//! (or no `--bench` argument) runs a 256 × 256 variant with 40 waypoints, a range of 50 m and few
//! samples. Medians
//! are printed; exits with status 1 when a check fails.

// A benchmark, not simulation code: it needs the wall clock to time and floats to report.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use common::{median, time, us};

use pathing::passability::{NavWorld, Obstruction, ObstructionFlags};
use pathing::raster::oriented_square;
use pathing::refworld::{RefWorldParams, generate};
use pathing::waypoints::{GraphParams, MAX_PAIRS, WaypointGraph, WaypointId, WaypointScratch, range_of_metres};
use pathing::{Fixed, Goal, Navcell, Path, PathStatus, SearchLimits, SearchScratch, SplitMix64, WorldPos, find_path};

/// Shortest-route costs from `from` by a plain O(n²) Dijkstra over the edges: the check.
fn reference_costs(graph: &WaypointGraph, from: WaypointId) -> Vec<Option<u64>> {
    let n = graph.n_waypoints() as usize;
    let mut dist: Vec<Option<u64>> = vec![None; n];
    let mut done = vec![false; n];
    dist[from.index()] = Some(0);
    loop {
        let next = (0..n).filter(|&k| !done[k] && dist[k].is_some()).min_by_key(|&k| dist[k]);
        let Some(v) = next else { break };
        done[v] = true;
        let dv = dist[v].unwrap_or(0);
        for reach in graph.neighbors(WaypointId(v as u32)) {
            let k = reach.waypoint.index();
            if dist[k].is_none_or(|d| dv + reach.cost < d) {
                dist[k] = Some(dv + reach.cost);
            }
        }
    }
    dist
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = std::env::var("PHALANX_BENCH_QUICK").is_ok_and(|v| v == "1") || !args.iter().any(|a| a == "--bench");
    let params = if quick { RefWorldParams::scaled(64, 1) } else { RefWorldParams::reference(1) };
    let (n_target, reps, n_routes, n_points, n_updates) = if quick { (40, 1, 10, 10, 2) } else { (200, 5, 200, 200, 10) };
    let mut failed = false;
    let mut fail = |message: String| {
        eprintln!("CHECK FAILED: {message}");
        failed = true;
    };

    let (desc, obstructions) = generate(&params);
    let class = desc.classes.by_name("default").expect("built-in class");
    let land = desc.classes.by_name("building-land").expect("built-in class");
    let mut world = NavWorld::build(desc, obstructions).expect("reference world builds");
    let side = params.tiles * 4;
    let cell_size = world.grid().cell_size();
    // The quick world is a quarter of the size, so its range is too (a graph with multi-hop routes).
    let range_m = if quick { 50 } else { 200 };
    let range = range_of_metres(range_m, cell_size);

    // Waypoints: seeded passable navcells, at least `spacing` navcells apart (Chebyshev).
    let spacing = (side / 28).max(4) as i64;
    let mut rng = SplitMix64::new(0x5741_5950_4F49_4E54);
    let mut cells: Vec<Navcell> = Vec::new();
    {
        let nav = world.class_nav(class).expect("movement class");
        let mut attempts = 0;
        while cells.len() < n_target && attempts < 200_000 {
            attempts += 1;
            let cell = Navcell::new(rng.below(u64::from(side)) as u16, rng.below(u64::from(side)) as u16);
            let apart =
                cells.iter().all(|c| (i64::from(c.i) - i64::from(cell.i)).abs().max((i64::from(c.j) - i64::from(cell.j)).abs()) >= spacing);
            if apart && nav.pass_map().is_passable(cell) {
                cells.push(cell);
            }
        }
    }
    let graph_params = GraphParams { range, max_pairs: MAX_PAIRS };
    println!(
        "Mode: {}; world {side}×{side} navcells, class default, {} waypoints at least {spacing} navcells apart, range {range_m} m; {reps} builds (medians).",
        if quick { "quick" } else { "full" },
        cells.len()
    );

    // Build.
    let mut scratch = WaypointScratch::new();
    let mut builds = Vec::new();
    let mut graph = None;
    for _ in 0..reps {
        let nav = world.class_nav(class).expect("movement class");
        let (g, d) = time(|| WaypointGraph::build(nav, cells.clone(), &graph_params, &mut scratch).expect("graph builds"));
        builds.push(d);
        graph = Some(g);
    }
    let mut graph = graph.expect("at least one build");
    let build = median(builds);
    let (pairs, edges) = (graph.n_candidate_pairs(), graph.n_edges());

    // Routes.
    let n = graph.n_waypoints();
    let mut route_times = Vec::new();
    let (mut found, mut hops) = (0u32, 0u32);
    for _ in 0..n_routes {
        let (from, to) = (WaypointId(rng.below(u64::from(n)) as u32), WaypointId(rng.below(u64::from(n)) as u32));
        let mut samples = Vec::new();
        let mut route = None;
        for _ in 0..reps {
            let (r, d) = time(|| graph.route(from, to, None, &mut scratch));
            samples.push(d);
            route = r;
        }
        route_times.push(median(samples));
        let expected = reference_costs(&graph, from)[to.index()];
        if route.as_ref().map(|r| r.cost()) != expected {
            fail(format!("route {from} -> {to}: cost {:?}, reference {expected:?}", route.as_ref().map(|r| r.cost())));
        }
        if let Some(route) = &route {
            found += 1;
            hops += route.hops();
            let sum: Option<u64> = route.waypoints().windows(2).map(|p| graph.edge_cost(p[0], p[1])).sum();
            if sum != Some(route.path_cost()) || route.waypoints().first() != Some(&from) || route.waypoints().last() != Some(&to) {
                fail(format!("route {from} -> {to} is not a walk of edges summing to its cost"));
            }
        }
    }
    let route_time = median(route_times);

    // Nearest waypoint from passable points.
    let mut nearest_times = Vec::new();
    let mut none_in_range = 0;
    let mut search = SearchScratch::new();
    let mut path = Path::new();
    {
        let nav = world.class_nav(class).expect("movement class");
        let mut points = 0;
        while points < n_points {
            let cell = Navcell::new(rng.below(u64::from(side)) as u16, rng.below(u64::from(side)) as u16);
            if !nav.pass_map().is_passable(cell) {
                continue;
            }
            points += 1;
            let at =
                WorldPos::new(Fixed::from_num(cell.i) + Fixed::from_bits(1 << 15), Fixed::from_num(cell.j) + Fixed::from_bits(1 << 15));
            let mut samples = Vec::new();
            let mut nearest = None;
            for _ in 0..reps {
                let (r, d) = time(|| graph.nearest_waypoint(nav, at, &mut scratch));
                samples.push(d);
                nearest = r;
            }
            nearest_times.push(median(samples));
            match nearest {
                None => none_in_range += 1,
                Some(reach) => {
                    let target = graph.cell(reach.waypoint);
                    let goal = Goal::navcell_center(target.i, target.j, cell_size);
                    let outcome = find_path(nav, cell, &goal, &SearchLimits::UNLIMITED, &mut search, &mut path);
                    if outcome.status != PathStatus::Complete || path.cost() != reach.cost || reach.cost > range {
                        fail(format!("nearest waypoint from {cell}: {reach:?}, but find_path costs {}", path.cost()));
                    }
                }
            }
        }
    }
    let nearest_time = median(nearest_times);

    // Updates: a building across the path of an edge.
    let edge_list: Vec<_> = graph.edges().collect();
    let (mut update_times, mut searched, mut changed) = (Vec::new(), 0u32, 0u32);
    let mut k = 0usize;
    let mut placed = 0usize;
    while placed < n_updates && k < edge_list.len() * 4 {
        let edge = edge_list[(k * 7919) % edge_list.len().max(1)];
        k += 1;
        let (a, b) = (graph.cell(edge.a), graph.cell(edge.b));
        let mid = WorldPos::from_int((i32::from(a.i) + i32::from(b.i)) / 2, (i32::from(a.j) + i32::from(b.j)) / 2);
        let square = oriented_square(mid, Fixed::from_num(6), Fixed::from_num(5), Fixed::from_num(30)).expect("in range");
        if world.check_building_placement(land, &square).is_err() {
            continue;
        }
        world
            .add_obstruction(pathing::ObstructionId(2_000_000 + placed as u32), Obstruction { square, flags: ObstructionFlags::STATIC })
            .expect("allowed");
        placed += 1;
        let dirty = world.update();
        let before: Vec<_> = graph.edges().collect();
        let nav = world.class_nav(class).expect("movement class");
        let (count, d) = time(|| graph.update(nav, &dirty, &mut scratch));
        update_times.push(d);
        searched += count;
        changed += u32::from(graph.edges().collect::<Vec<_>>() != before);
        let rebuilt = WaypointGraph::build(nav, cells.clone(), &graph_params, &mut WaypointScratch::new()).expect("graph builds");
        if rebuilt != graph {
            fail(format!("update {placed}: the updated graph differs from a rebuild"));
        }
    }
    if placed == 0 {
        fail("no building could be placed across an edge".to_string());
    }
    let update_time = median(update_times);

    println!();
    println!("| measure | value |");
    println!("| --- | ---: |");
    println!("| waypoints | {n} |");
    println!("| candidate pairs (octile ≤ range) | {pairs} |");
    println!("| edges (path ≤ range) | {edges} |");
    println!("| build, ms | {:.2} |", us(build) / 1e3);
    println!("| build per candidate pair, µs | {:.1} |", us(build) / f64::from(pairs.max(1)));
    println!(
        "| route, median µs ({n_routes} pairs; {found} joined, mean {:.1} hops) | {:.2} |",
        f64::from(hops) / f64::from(found.max(1)),
        us(route_time)
    );
    println!("| nearest waypoint, median µs ({n_points} points; {none_in_range} with none in range) | {:.1} |", us(nearest_time));
    println!(
        "| update after one building, median µs ({placed} buildings; {searched} pairs searched in all; {changed} changed the edges) | {:.1} |",
        us(update_time)
    );
    if failed {
        std::process::exit(1);
    }
}
