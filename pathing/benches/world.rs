//! World-geometry benchmark on the reference world, `pathing::refworld` (1024 × 1024 navcells, the 8
//! built-in classes, 100 buildings, 1000 trees, hills, crags, lakes and a square border):
//!
//! - **Full build**: `NavWorld::build` from the description and every obstruction: terrain fields
//!   (depth, slope, shore distance), base masks, clearance expansion, rasterization of every square
//!   for every class, then each movement class's long-range structures (bit planes, jump tables,
//!   hierarchy). Reported whole and split: the grid part, and each structure's build time per
//!   class measured separately on the finished grid.
//! - **One building placed**: a building added where `check_building_placement` allows it, then
//!   `update` (grid rectangle reset and re-rasterized, then bit planes, jump tables and hierarchy
//!   of every class whose bits changed); then removed and updated again. Targets: full build under
//!   150 ms; one building under 1% of the full build. Every fifth placement is compared with a full
//!   rebuild, outside the timing.
//!
//! `cargo bench -p phalanx-pathing --bench world`; `PHALANX_BENCH_QUICK=1` (or no `--bench` argument) runs
//! a 256 × 256 variant with few samples; `PHALANX_BENCH_TABLES=1` gives the `default` class jump
//! tables, `PHALANX_BENCH_LANDMARKS=1` a landmark table. Exits with status 1 when a check fails.

// A benchmark, not simulation code: it needs the wall clock to time and floats to report.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use common::{median, ms, time};
use std::time::Duration;

use pathing::classes::ObstructionMode;
use pathing::passability::{LANDMARKS_PER_CLASS, NavWorld, Obstruction, ObstructionFlags};
use pathing::raster::oriented_square;
use pathing::refworld::{RefWorldParams, generate};
use pathing::{Fixed, Hierarchy, JumpTable, Landmarks, PassMap, WorldPos};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = std::env::var("PHALANX_BENCH_QUICK").is_ok_and(|v| v == "1") || !args.iter().any(|a| a == "--bench");
    let params = if quick { RefWorldParams::scaled(64, 1) } else { RefWorldParams::reference(1) };
    let (reps, placements) = if quick { (1, 4) } else { (5, 20) };
    let mut failed = false;
    let (mut desc, obstructions) = generate(&params);
    // PHALANX_BENCH_TABLES=1: the `default` class also gets jump tables (JPS+).
    if std::env::var("PHALANX_BENCH_TABLES").is_ok_and(|v| v == "1") {
        desc.jump_table_classes = 1;
    }
    // PHALANX_BENCH_LANDMARKS=1: the `default` class also gets a landmark table.
    if std::env::var("PHALANX_BENCH_LANDMARKS").is_ok_and(|v| v == "1") {
        desc.landmark_classes = 1;
    }
    let side = params.tiles * 4;
    println!(
        "Mode: {}; world {side}×{side} navcells, {} classes, {} obstructions ({} buildings, {} trees requested); {reps} builds, {placements} placements (medians).",
        if quick { "quick" } else { "full" },
        desc.classes.len(),
        obstructions.len(),
        params.buildings,
        params.trees
    );

    let mut builds = Vec::new();
    let mut world = None;
    for _ in 0..reps {
        let (w, d) = time(|| NavWorld::build(desc.clone(), obstructions.iter().copied()).expect("reference world builds"));
        builds.push(d);
        world = Some(w);
    }
    let mut world = world.expect("at least one build");
    let full = median(builds);

    // The grid's stages, measured alone.
    let spec = desc.grid;
    let full_rect = pathing::CellRect::full(spec.width, spec.height);
    let (mut t_fields, mut t_base, mut t_expand) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps {
        let (tp, d) = time(|| pathing::terrain::TerrainPass::new(&desc.terrain, spec).expect("terrain covers the grid"));
        t_fields.push(d);
        let mut base = vec![0u16; (spec.width * spec.height) as usize];
        let (_, d) = time(|| tp.base_masks(&desc.classes, desc.border, full_rect, &mut base).expect("sizes match"));
        t_base.push(d);
        let mut out = pathing::NavGrid::new(spec.width, spec.height, desc.classes.len(), spec.cell_size).expect("valid grid");
        let (_, d) =
            time(|| pathing::terrain::expand_clearance(&base, spec.width, spec.height, &desc.classes, spec.cell_size, full_rect, &mut out));
        t_expand.push(d);
    }
    let (t_fields, t_base, t_expand) = (median(t_fields), median(t_base), median(t_expand));

    // Per-structure build times on the finished grid.
    let (mut t_pass, mut t_table, mut t_hier, mut t_marks) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let movement: Vec<_> = desc.classes.iter().filter(|(_, d)| d.obstructions != ObstructionMode::Foundation).map(|(c, _)| c).collect();
    for _ in 0..reps {
        let (mut p, mut t, mut h, mut l) = (Duration::ZERO, Duration::ZERO, Duration::ZERO, Duration::ZERO);
        for &class in &movement {
            if desc.landmark_classes & class.bit() != 0 {
                // As the world builds it: from the grid with every area open and no square (this
                // world has no areas, so that is the terrain-only grid).
                let (_, dl) = time(|| Landmarks::build(&PassMap::build(world.terrain_only(), class), LANDMARKS_PER_CLASS));
                l += dl;
            }
            let (pass, dp) = time(|| PassMap::build(world.grid(), class));
            let (_, dt) =
                if desc.jump_table_classes & class.bit() != 0 { time(|| Some(JumpTable::build(&pass))) } else { (None, Duration::ZERO) };
            let (_, dh) = time(|| Hierarchy::build(&pass));
            (p, t, h) = (p + dp, t + dt, h + dh);
        }
        t_marks.push(l);
        t_pass.push(p);
        t_table.push(t);
        t_hier.push(h);
    }
    let (t_pass, t_table, t_hier, t_marks) = (median(t_pass), median(t_table), median(t_hier), median(t_marks));
    let grid_part = full.saturating_sub(t_pass + t_table + t_hier + t_marks);

    // Placements: positions on a stride where a 12 × 10 m building at 30° is allowed.
    let land = desc.classes.by_name("building-land").expect("built-in class");
    let mut candidates = Vec::new();
    let step = (side / 9) as i32;
    'search: for gz in 1..9 {
        for gx in 1..9 {
            for (ox, oz) in [(0, 0), (step / 3, 0), (0, step / 3), (step / 3, step / 3)] {
                let at = WorldPos::from_int(gx * step + ox, gz * step + oz);
                let square = oriented_square(at, Fixed::from_num(6), Fixed::from_num(5), Fixed::from_num(30)).expect("in range");
                if world.check_building_placement(land, &square).is_ok() {
                    candidates.push(square);
                    if candidates.len() == placements {
                        break 'search;
                    }
                    break;
                }
            }
        }
    }
    let (mut place, mut remove) = (Vec::new(), Vec::new());
    for (n, square) in candidates.iter().enumerate() {
        let id = 1_000_000 + n as u32;
        let (_, d) = time(|| {
            world
                .add_obstruction(pathing::ObstructionId(id), Obstruction { square: *square, flags: ObstructionFlags::STATIC })
                .expect("placement allowed");
            world.update()
        });
        place.push(d);
        if n % 5 == 0 {
            let rebuilt = NavWorld::build(world.desc().clone(), world.obstructions().iter().map(|(&i, &o)| (i, o))).expect("rebuild");
            let same = rebuilt.grid() == world.grid() && desc.classes.iter().all(|(c, _)| rebuilt.class_nav(c) == world.class_nav(c));
            if !same {
                eprintln!("CHECK FAILED: placement {n}: incremental update differs from a rebuild");
                failed = true;
            }
        }
        let (_, d) = time(|| {
            world.remove_obstruction(pathing::ObstructionId(id)).expect("just added");
            world.update()
        });
        remove.push(d);
    }
    let (place, remove) = (median(place), median(remove));

    println!();
    println!("| measure | ms | share of full build | target | verdict |");
    println!("| --- | ---: | ---: | --- | --- |");
    println!(
        "| full build (grid + {} movement classes' long-range data, jump tables for {}, landmark tables for {}) | {:.1} | 100% | < 150 ms | {} |",
        movement.len(),
        desc.jump_table_classes.count_ones(),
        desc.landmark_classes.count_ones(),
        ms(full),
        verdict(ms(full) < 150.0)
    );
    println!("| of which the grid (terrain, expansion, rasterization) | {:.1} | {:.0}% | | |", ms(grid_part), pct(grid_part, full));
    println!("| … terrain fields (depth, slope, shore distance) | {:.1} | {:.0}% | | |", ms(t_fields), pct(t_fields, full));
    println!("| … base masks (8 classes, border) | {:.1} | {:.0}% | | |", ms(t_base), pct(t_base, full));
    println!("| … clearance expansion (8 classes) | {:.1} | {:.0}% | | |", ms(t_expand), pct(t_expand, full));
    println!(
        "| … rasterization and the rest (by difference) | {:.1} | {:.0}% | | |",
        ms(grid_part.saturating_sub(t_fields + t_base + t_expand)),
        pct(grid_part.saturating_sub(t_fields + t_base + t_expand), full)
    );
    println!("| of which bit planes | {:.1} | {:.0}% | | |", ms(t_pass), pct(t_pass, full));
    println!("| of which hierarchies | {:.1} | {:.0}% | | |", ms(t_hier), pct(t_hier, full));
    println!("| of which jump tables | {:.1} | {:.0}% | | |", ms(t_table), pct(t_table, full));
    println!(
        "| of which landmark tables (with their permissive grid's bit planes) | {:.1} | {:.0}% | | |",
        ms(t_marks),
        pct(t_marks, full)
    );
    println!(
        "| one building placed (add + update), {} placements | {:.3} | {:.2}% | < 1% | {} |",
        candidates.len(),
        ms(place),
        pct(place, full),
        verdict(pct(place, full) < 1.0)
    );
    println!(
        "| one building removed (remove + update) | {:.3} | {:.2}% | < 1% | {} |",
        ms(remove),
        pct(remove, full),
        verdict(pct(remove, full) < 1.0)
    );
    if candidates.is_empty() {
        eprintln!("CHECK FAILED: no allowed building position found");
        failed = true;
    }
    if failed {
        std::process::exit(1);
    }
}

fn pct(part: Duration, whole: Duration) -> f64 {
    100.0 * part.as_secs_f64() / whole.as_secs_f64().max(1e-12)
}

fn verdict(ok: bool) -> &'static str {
    if ok { "PASS" } else { "MISS" }
}
