//! Flow-field benchmark: [`FlowField::build`] over square regions of 64², 128² and 256² navcells,
//! on the reference world (1024 × 1024 navcells, class `default`) and on an open field of the same
//! size, against the `pathfinding` crate's `dijkstra_all` driven with the same successors (octile
//! moves, a diagonal needs both orthogonal neighbours passable, only navcells of the region) and
//! the same `u64` costs ([`pathing::cost::STRAIGHT`], [`pathing::cost::DIAGONAL`]), in one run.
//!
//! Regions sit on a stride over the map; each one's goal is the passable navcell of the region
//! nearest to a point 7/8 of the way across it (a waypoint ahead of a formation). Every build goes
//! into one reused field (warmed on the region first, so timed builds allocate nothing). Each
//! answer is checked outside the timing: every navcell's distance equals the peer's, and following
//! next steps from a stride of navcells costs exactly their distance and ends on the goal.
//! Target: a 128² region builds in under 0.5 ms.
//!
//! `cargo bench -p phalanx-pathing --bench flow_field` runs 8 regions per size with 11 builds each (the
//! peer 3); `PHALANX_BENCH_QUICK=1` (or no `--bench` argument) runs one region per size on a 256 ×
//! 256 variant of the world with few samples. Exits with status 1 when a check fails.

// A benchmark, not simulation code: it needs the wall clock to time and floats to report.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use common::{Failures, median, time, us};
use std::time::Duration;

use pathing::cost::{DIAGONAL, STRAIGHT};
use pathing::flow_field::{FlowField, FlowGoal};
use pathing::passability::NavWorld;
use pathing::refworld::{RefWorldParams, generate};
use pathing::{CellRect, Fixed, NavGrid, Navcell, PassClass, PassMap};

/// A padded byte grid of one region for `dijkstra_all`: node = `(j + 1) * (w + 2) + (i + 1)` in
/// region coordinates, with an impassable border so successors need no bounds checks.
struct PeerGrid {
    region: CellRect,
    padded_width: u32,
    passable: Vec<bool>,
    /// Index offsets (target, first orthogonal, second orthogonal) and costs of the eight moves.
    moves: [(isize, isize, isize, u64); 8],
}

impl PeerGrid {
    fn build(pass: &PassMap, region: CellRect) -> Self {
        let (w, h) = (region.i1 - region.i0, region.j1 - region.j0);
        let pw = w + 2;
        let mut passable = vec![false; pw as usize * (h as usize + 2)];
        for j in 0..h {
            for i in 0..w {
                passable[((j + 1) * pw + i + 1) as usize] = pass.is_passable(Navcell::new((region.i0 + i) as u16, (region.j0 + j) as u16));
            }
        }
        let row = pw as isize;
        let dirs: [(isize, isize); 8] = [(1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)];
        let moves = dirs.map(|(dx, dy)| {
            let target = dx + dy * row;
            if dx != 0 && dy != 0 { (target, dx, dy * row, DIAGONAL) } else { (target, target, target, STRAIGHT) }
        });
        Self { region, padded_width: pw, passable, moves }
    }

    fn node(&self, c: Navcell) -> u32 {
        (u32::from(c.j) - self.region.j0 + 1) * self.padded_width + u32::from(c.i) - self.region.i0 + 1
    }

    /// The legal moves from `node` (moves are symmetric, so distances from the goal are distances
    /// to it).
    #[inline]
    fn successors(&self, node: u32) -> impl Iterator<Item = (u32, u64)> + '_ {
        let n = node as isize;
        self.moves.iter().filter_map(move |&(t, a, b, cost)| {
            let ok = self.passable[(n + t) as usize] && self.passable[(n + a) as usize] && self.passable[(n + b) as usize];
            ok.then_some(((n + t) as u32, cost))
        })
    }
}

/// The passable navcell of `region` nearest to `(ci, cj)` (squared distance, then raster order).
fn goal_near(pass: &PassMap, region: CellRect, ci: u32, cj: u32) -> Option<Navcell> {
    let mut best: Option<(i64, Navcell)> = None;
    for j in region.j0..region.j1 {
        for i in region.i0..region.i1 {
            let cell = Navcell::new(i as u16, j as u16);
            let d2 = (i64::from(i) - i64::from(ci)).pow(2) + (i64::from(j) - i64::from(cj)).pow(2);
            if pass.is_passable(cell) && best.is_none_or(|(b, _)| d2 < b) {
                best = Some((d2, cell));
            }
        }
    }
    best.map(|(_, c)| c)
}

/// One size on one map: timings of ours and the peer, and how many navcells were reachable.
struct Row {
    ours: Duration,
    peer: Duration,
    reachable: u64,
    regions: usize,
}

#[allow(clippy::too_many_arguments)]
fn run_size(
    name: &str,
    pass: &PassMap,
    side: u32,
    n_regions: u32,
    reps: usize,
    peer_reps: usize,
    field: &mut FlowField,
    failures: &mut Failures,
) -> Row {
    let (w, h) = (pass.width(), pass.height());
    let (mut ours, mut peer) = (Vec::new(), Vec::new());
    let (mut reachable, mut regions) = (0u64, 0usize);
    for k in 0..n_regions {
        // Region corners on a stride (golden-ratio steps) over the map.
        let i0 = ((u64::from(k) * 40_503 + 977) % u64::from(w - side + 1)) as u32;
        let j0 = ((u64::from(k) * 24_593 + 331) % u64::from(h - side + 1)) as u32;
        let region = CellRect::new(i0, j0, i0 + side, j0 + side);
        let Some(goal_cell) = goal_near(pass, region, i0 + side * 7 / 8, j0 + side / 2) else { continue };
        let goal = FlowGoal::Cell(goal_cell);
        regions += 1;
        field.build(pass, region, &goal);
        for _ in 0..reps {
            let (_, d) = time(|| field.build(pass, region, &goal));
            ours.push(d);
        }
        reachable += u64::from(field.stats().reachable);

        let grid = PeerGrid::build(pass, region);
        let start = grid.node(goal_cell);
        let mut answer = None;
        for _ in 0..peer_reps {
            let (result, d) = time(|| pathfinding::directed::dijkstra::dijkstra_all(&start, |&n| grid.successors(n)));
            peer.push(d);
            answer = Some(result);
        }
        // Every navcell's distance against the peer, and next-step walks from a stride of navcells.
        let answer = answer.expect("at least one peer run");
        let mut n_checked = 0u32;
        for j in region.j0..region.j1 {
            for i in region.i0..region.i1 {
                let cell = Navcell::new(i as u16, j as u16);
                let expected = if cell == goal_cell { Some(0) } else { answer.get(&grid.node(cell)).map(|&(_, c)| c) };
                let got = field.distance(cell);
                failures.check(got == expected, || format!("{name} {side}²: distance at {cell} is {got:?}, peer {expected:?}"));
                if (i + 3 * j) % 97 == 0
                    && let Some(distance) = got
                {
                    let (mut at, mut walked) = (cell, 0u64);
                    while let Some(to) = field.next(at) {
                        walked += if to.i != at.i && to.j != at.j { DIAGONAL } else { STRAIGHT };
                        at = to;
                    }
                    failures.check(at == goal_cell && walked == distance, || {
                        format!("{name} {side}²: next steps from {cell} end at {at} after {walked}, distance {distance}")
                    });
                    n_checked += 1;
                }
            }
        }
        failures.check(n_checked > 0 || reachable == 0, || format!("{name} {side}²: no walk checked"));
    }
    failures.check(regions > 0, || format!("{name} {side}²: no region with a passable navcell"));
    Row { ours: median(ours), peer: median(peer), reachable: reachable / regions.max(1) as u64, regions }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = std::env::var("PHALANX_BENCH_QUICK").is_ok_and(|v| v == "1") || !args.iter().any(|a| a == "--bench");
    let params = if quick { RefWorldParams::scaled(64, 1) } else { RefWorldParams::reference(1) };
    let (n_regions, reps, peer_reps) = if quick { (1, 3, 1) } else { (8, 11, 3) };
    let mut failures = Failures(Vec::new());

    let (desc, obstructions) = generate(&params);
    let class = desc.classes.by_name("default").expect("built-in class");
    let world = NavWorld::build(desc, obstructions).expect("reference world builds");
    let reference = world.class_nav(class).expect("a movement class").pass_map().clone();
    let (w, h) = (reference.width(), reference.height());
    let open_class = PassClass::new(0).expect("class 0");
    let open = PassMap::build(&NavGrid::new(w, h, 1, Fixed::ONE).expect("valid grid"), open_class);
    println!(
        "Mode: {}; maps {w}×{h}; {n_regions} regions per size, {reps} builds each (peer {peer_reps}); medians over all builds.",
        if quick { "quick" } else { "full" }
    );
    println!();
    println!(
        "| map | region | regions | reachable navcells (mean) | ours build µs | ns / reachable navcell | peer dijkstra_all µs | peer / ours | target |"
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
    let mut field = FlowField::new();
    for (name, pass) in [("reference world", &reference), ("open field", &open)] {
        for side in [64u32, 128, 256] {
            let row = run_size(name, pass, side, n_regions, reps, peer_reps, &mut field, &mut failures);
            let target = if side == 128 { if us(row.ours) < 500.0 { "< 500 µs: PASS" } else { "< 500 µs: MISS" } } else { "" };
            println!(
                "| {name} | {side}² | {} | {} | {:.1} | {:.1} | {:.0} | {:.1}× | {target} |",
                row.regions,
                row.reachable,
                us(row.ours),
                row.ours.as_secs_f64() * 1e9 / row.reachable.max(1) as f64,
                us(row.peer),
                us(row.peer) / us(row.ours).max(1e-9),
            );
        }
    }
    if !failures.0.is_empty() {
        eprintln!("{} check(s) failed", failures.0.len());
        std::process::exit(1);
    }
}
