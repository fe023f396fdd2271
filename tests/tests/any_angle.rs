//! String pulling against the any-angle oracle (`phalanx_tests::any_angle`), and the oracle against
//! hand-computed optima (docs/pathfinding-rules.md, "Turning a path into waypoints").

use pathing::{ClassNav, Fixed, NavGrid, Navcell, Path, SearchScratch, WorldPos};
use phalanx_tests::any_angle::{Grid, centre, from_pass_map, length, point, smoothed};
use phalanx_tests::maps::{CLASS, Rng};

fn grid_with(w: u32, h: u32, blocked: &[(u16, u16)]) -> NavGrid {
    let mut grid = NavGrid::new(w, h, 1, Fixed::ONE).unwrap();
    for &(i, j) in blocked {
        grid.set_passable(Navcell::new(i, j), CLASS, false);
    }
    grid
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn oracle_is_the_straight_line_on_open_ground() {
    let oracle = from_pass_map(ClassNav::build(&grid_with(10, 10, &[]), CLASS).pass_map());
    let d = oracle.shortest((1, 1), (19, 9), 100.0).unwrap();
    assert!(close(d, (81.0f64 + 16.0).sqrt()), "{d}");
}

#[test]
fn oracle_wraps_round_convex_corners_and_refuses_diagonal_pinches() {
    // The 24 × 12 example: round the block's corner (11, 7).
    let block = [(11, 5), (12, 5), (11, 6), (12, 6)];
    let oracle = from_pass_map(ClassNav::build(&grid_with(24, 12, &block), CLASS).pass_map());
    let d = oracle.shortest((9, 7), (29, 15), 100.0).unwrap();
    assert!(close(d, (6.5f64 * 6.5 + 3.5 * 3.5).sqrt() + (3.5f64 * 3.5 + 0.5 * 0.5).sqrt()), "{d}");
    // Two blocked navcells touching at corner (2, 2): the straight line through it is refused,
    // the way round touches one of them.
    let pinch = Grid { width: 4, height: 4, blocked: (0..16).map(|k| k == 4 + 1 || k == 2 * 4 + 2).collect() };
    assert!(!pinch.visible((3, 5), (5, 3)), "through the pinch between (1, 1) and (2, 2)");
    assert!(!pinch.visible((4, 0), (4, 8)), "along x = 2, changing sides at the pinch");
    assert!(pinch.visible((6, 0), (6, 8)), "along x = 3, beside free navcells");
    let d = pinch.shortest((3, 5), (5, 3), 100.0).unwrap();
    assert!(d > 2f64.sqrt() + 1e-9, "{d}");
    // A grid line with blocked navcells on both sides is a wall.
    let wall = Grid { width: 2, height: 2, blocked: vec![true, false, true, false] };
    assert!(!wall.visible((0, 2), (2, 2)), "along j = 1 between (0, 0) and (0, 1)");
    assert!(wall.visible((2, 0), (2, 4)), "along x = 1 beside free navcells");
}

/// The 24 × 12 example with its exact expectation: ours bends at the block's corner (11, 7) pulled
/// a sixteenth of a navcell up its west edge, √(6.5² + 3.5625²) + √(3.5² + 0.4375²) ≈ 10.939 m
/// (the centre-based pull gave the issue's √65 + 3 ≈ 11.06 m, the turning points alone
/// 4√2 + 6 ≈ 11.66 m), 0.2% above the any-angle optimum.
#[test]
fn string_pulling_on_the_24_by_12_example_is_exact_and_near_the_optimum() {
    let block = [(11, 5), (12, 5), (11, 6), (12, 6)];
    let nav = ClassNav::build(&grid_with(24, 12, &block), CLASS);
    let (start, goal) = (Navcell::new(4, 3), Navcell::new(14, 7));
    let pulled = smoothed(&nav, start, goal, &mut SearchScratch::new(), &mut Path::new()).unwrap();
    let half = Fixed::ONE / 2;
    let at = |x: i32, z: i32| pathing::WorldPos::new(Fixed::from_num(x) + half, Fixed::from_num(z) + half);
    let inset = pathing::WorldPos::new(Fixed::from_num(11), Fixed::from_num(7) + Fixed::ONE / 16);
    assert_eq!(pulled, vec![at(4, 3), inset, at(14, 7)]);
    assert!(close(length(&pulled), (6.5f64 * 6.5 + 3.5625 * 3.5625).sqrt() + (3.5f64 * 3.5 + 0.4375 * 0.4375).sqrt()));
    let optimum = from_pass_map(nav.pass_map()).shortest(point(centre(start)).unwrap(), point(centre(goal)).unwrap(), 100.0).unwrap();
    let ratio = length(&pulled) / optimum;
    assert!(ratio > 1.001 && ratio < 1.003, "{ratio}");
}

/// A corridor one navcell wide climbing a staircase (four navcells east in each of eight rows,
/// each row starting above the last one's end): the exact optimum bends at the first and last
/// risers' inner corners, ours at the same corners pulled in a sixteenth of a navcell. Moving a
/// vertex by `e` changes each of its two segments by at most `e`, so ours is within two insets
/// per bend of the optimum; the path through navcell centres, which cannot cut a corner here, is
/// more than 10% longer.
#[test]
fn a_one_navcell_staircase_corridor_is_cut_within_two_insets_per_corner_of_the_optimum() {
    let mut blocked = Vec::new();
    for j in 0..10u16 {
        for i in 0..26u16 {
            let row = j.wrapping_sub(1);
            if !(1..=8).contains(&j) || !(3 * row + 1..=3 * row + 4).contains(&i) {
                blocked.push((i, j));
            }
        }
    }
    let nav = ClassNav::build(&grid_with(26, 10, &blocked), CLASS);
    let (start, goal) = (Navcell::new(1, 1), Navcell::new(25, 8));
    let pulled = smoothed(&nav, start, goal, &mut SearchScratch::new(), &mut Path::new()).unwrap();
    let optimum = from_pass_map(nav.pass_map()).shortest(point(centre(start)).unwrap(), point(centre(goal)).unwrap(), 100.0).unwrap();
    let bends = (pulled.len() - 2) as f64;
    let ours = length(&pulled);
    assert!(ours >= optimum - 1e-9 && ours <= optimum + bends * 2.0 / 16.0, "ours {ours}, optimum {optimum}, {pulled:?}");
    assert!(ours / optimum < 1.001, "{}", ours / optimum);
    let centres: Vec<pathing::WorldPos> =
        (0..8u16).flat_map(|k| (3 * k + 1..=3 * k + 4).map(move |i| centre(Navcell::new(i, k + 1)))).collect();
    assert!(length(&centres) / optimum > 1.1, "{}", length(&centres) / optimum);
}

/// On 400 seeded random 20 × 20 maps (0–34% of navcells blocked, random ends), the smoothed path
/// is never shorter than the any-angle optimum (the oracle's sanity: every segment we take is one
/// it allows), and at most `WORST` times as long. Where the grid path goes round an obstacle on the
/// other side from the optimum no string pulling can recover the difference, so the bound is the
/// measured worst case of this sample, rounded up; the mean is far lower (BENCHMARKS.md).
#[test]
fn smoothed_paths_are_never_shorter_than_the_any_angle_optimum_and_within_a_bound() {
    const WORST: f64 = 1.07;
    let (mut worst, mut sum, mut n) = (1.0f64, 0.0, 0);
    for seed in 0..400u64 {
        let mut rng = Rng::new(seed);
        let density = rng.below(35);
        let mut blocked = Vec::new();
        for j in 0..20u16 {
            for i in 0..20u16 {
                if rng.chance(density) {
                    blocked.push((i, j));
                }
            }
        }
        let (start, goal) =
            (Navcell::new(rng.below(20) as u16, rng.below(20) as u16), Navcell::new(rng.below(20) as u16, rng.below(20) as u16));
        blocked.retain(|&(i, j)| (i, j) != (start.i, start.j) && (i, j) != (goal.i, goal.j));
        let nav = ClassNav::build(&grid_with(20, 20, &blocked), CLASS);
        let Some(pulled) = smoothed(&nav, start, goal, &mut SearchScratch::new(), &mut Path::new()) else { continue };
        let ours = length(&pulled);
        let optimum = from_pass_map(nav.pass_map()).shortest(point(centre(start)).unwrap(), point(centre(goal)).unwrap(), ours);
        let optimum = optimum.unwrap_or_else(|| panic!("seed {seed}: the oracle does not find even our path"));
        assert!(ours >= optimum - 1e-9, "seed {seed}: ours {ours} below the optimum {optimum}");
        if optimum > 0.0 {
            worst = worst.max(ours / optimum);
            sum += ours / optimum;
            n += 1;
        }
    }
    println!("{n} paths, mean ratio {:.4}, worst {worst:.4}", sum / f64::from(n));
    assert!(n > 300, "most random problems have a path");
    assert!(worst <= WORST, "worst ratio {worst}");
}

/// The smoothed path's ratio to the any-angle optimum on a 64 × 64 map holding `count` convex
/// obstructions (squares one time in three, else rectangles, of random sizes, centres and angles,
/// rasterized for a clearance of one navcell as the simulation does), between random ends on
/// passable navcells whose straight line they block, with a description of the case; `None` when
/// the obstructions wall an end in.
fn round_convex_obstructions(seed: u64, count: u32) -> Result<Option<(f64, String)>, String> {
    let side = 64u32;
    let mut rng = Rng::new(1000 + seed);
    let quarter = |k: u32| Fixed::from_num(k as i32) / 4;
    let (mut blocked, mut shapes) = (Vec::new(), Vec::new());
    for _ in 0..count {
        let hw = quarter(4 + rng.below(40));
        let hh = if seed.is_multiple_of(3) { hw } else { quarter(2 + rng.below(24)) };
        // One obstruction near the middle; more anywhere with room round the map's edge.
        let (lo, span) = if count == 1 { (4 * 26, 48) } else { (4 * 8, 4 * 48) };
        let centre_at = WorldPos::new(quarter(lo + rng.below(span)), quarter(lo + rng.below(span)));
        let degrees = Fixed::from_num(rng.below(180) as i32);
        let square = pathing::raster::oriented_square(centre_at, hw, hh, degrees).unwrap();
        let clip = pathing::CellRect { i0: 0, j0: 0, i1: side, j1: side };
        pathing::raster::rasterize_square(&square, Fixed::ONE, Fixed::ONE, clip, |j, i0, i1| {
            for i in i0..i1 {
                blocked.push((i as u16, j as u16));
            }
        });
        shapes.push(format!("{hw} × {hh} at {degrees}° round ({}, {})", centre_at.x, centre_at.z));
    }
    let nav = ClassNav::build(&grid_with(side, side, &blocked), CLASS);
    let map = nav.pass_map();
    let mut tries = 0;
    let (start, goal) = loop {
        tries += 1;
        let pick = |rng: &mut Rng| Navcell::new(rng.below(side) as u16, rng.below(side) as u16);
        let (s, g) = (pick(&mut rng), pick(&mut rng));
        if map.is_passable(s) && map.is_passable(g) && !pathing::collide::segment_clear(map, centre(s), centre(g)) {
            break (s, g);
        }
        if tries > 10_000 {
            return Err(format!("seed {seed}: no blocked pair"));
        }
    };
    let Some(pulled) = smoothed(&nav, start, goal, &mut SearchScratch::new(), &mut Path::new()) else {
        return Ok(None);
    };
    let ours = length(&pulled);
    let optimum = from_pass_map(map).shortest(point(centre(start)).unwrap(), point(centre(goal)).unwrap(), ours).unwrap();
    if ours < optimum - 1e-9 {
        return Err(format!("seed {seed}: ours {ours} below the optimum {optimum}"));
    }
    let ratio = ours / optimum;
    let case = format!(
        "seed {seed}: {}, {start:?} → {goal:?}: ours {ours:.3}, optimum {optimum:.3}, ratio {ratio:.4}, {pulled:?}",
        shapes.join(", ")
    );
    Ok(Some((ratio, case)))
}

/// Round convex obstructions on open ground, the smoothed path between random ends whose straight
/// line they block is within 1% of the any-angle optimum (docs/pathfinding-rules.md, "Turning a
/// path into waypoints"): 240 maps with one obstruction near the middle, 120 with three anywhere
/// (they may overlap into one concave shape). The exception allowed is the inset's own cost on a
/// short path: at most `OVER` paths over 1%, none over `WORST`; the one there is today is 6 m long
/// and wraps three corners a sixteenth of a navcell off the wall (docs/decisions.md, "A last
/// search over corners"). Before the search over corners the first set had a worst of 1.036 and
/// 5 paths over 1% (without the tightening: 1.0521, 38 paths).
#[test]
fn paths_round_a_convex_obstruction_on_open_ground_are_within_one_percent_of_the_optimum() {
    const WORST: f64 = 1.017;
    const OVER: usize = 1;
    let (mut failures, mut over) = (Vec::new(), Vec::new());
    for (count, seeds) in [(1, 0..240u64), (3, 240..360)] {
        let (mut n, mut worst) = (0, 1.0f64);
        for seed in seeds {
            match round_convex_obstructions(seed, count) {
                Ok(None) => {}
                Ok(Some((ratio, case))) => {
                    n += 1;
                    worst = worst.max(ratio);
                    if ratio > WORST {
                        failures.push(case);
                    } else if ratio > 1.01 {
                        over.push(case);
                    }
                }
                Err(e) => failures.push(e),
            }
        }
        println!("{count} obstruction(s): {n} paths, worst ratio {worst:.4}");
    }
    println!("over 1%:\n{}", over.join("\n"));
    assert!(failures.is_empty(), "{} cases:\n{}", failures.len(), failures.join("\n"));
    assert!(over.len() <= OVER, "{} paths over 1%:\n{}", over.len(), over.join("\n"));
}
