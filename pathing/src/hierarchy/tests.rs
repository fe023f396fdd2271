//! Unit tests of the hierarchy: components against a flood fill, nearest navcells against brute
//! force, and updates against rebuilds.

use super::*;
use crate::{CellRect, Fixed, NavGrid, PassClass};
use proptest::prelude::*;

fn grid_map(w: u32, h: u32, blocked: &[(u32, u32)]) -> (NavGrid, PassMap) {
    let class = PassClass::new(0).unwrap();
    let mut grid = NavGrid::new(w, h, 1, Fixed::ONE).unwrap();
    for &(i, j) in blocked {
        grid.set_passable(Navcell::new(i as u16, j as u16), class, false);
    }
    let map = PassMap::build(&grid, class);
    (grid, map)
}

/// Reference: component of every navcell by a global flood fill.
fn flood_components(map: &PassMap) -> Vec<Option<u32>> {
    let (w, h) = (map.width() as usize, map.height() as usize);
    let mut comp = vec![None; w * h];
    let mut next = 0;
    for start in 0..w * h {
        let cell = Navcell::new((start % w) as u16, (start / w) as u16);
        if comp[start].is_some() || !map.is_passable(cell) {
            continue;
        }
        let mut stack = vec![start];
        comp[start] = Some(next);
        while let Some(k) = stack.pop() {
            let (x, y) = (k % w, k / w);
            let mut visit = |n: usize| {
                let c = Navcell::new((n % w) as u16, (n / w) as u16);
                if comp[n].is_none() && map.is_passable(c) {
                    comp[n] = Some(next);
                    stack.push(n);
                }
            };
            if x + 1 < w {
                visit(k + 1);
            }
            if x > 0 {
                visit(k - 1);
            }
            if y + 1 < h {
                visit(k + w);
            }
            if y > 0 {
                visit(k - w);
            }
        }
        next += 1;
    }
    comp
}

#[test]
fn a_wall_splits_the_grid_and_reopening_joins_it() {
    let wall: Vec<(u32, u32)> = (0..150).map(|j| (100, j)).collect();
    let (mut grid, mut map) = grid_map(200, 150, &wall);
    let mut hierarchy = Hierarchy::build(&map);
    assert_eq!(hierarchy.n_components(), 2);
    assert!(!hierarchy.is_reachable(Navcell::new(3, 3), Navcell::new(190, 140)));
    let class = PassClass::new(0).unwrap();
    grid.set_passable(Navcell::new(100, 77), class, true);
    map.update_rect(&grid, CellRect::new(100, 77, 101, 78));
    hierarchy.update_rect(&map, CellRect::new(100, 77, 101, 78));
    assert_eq!(hierarchy.n_components(), 1);
    assert!(hierarchy.is_reachable(Navcell::new(3, 3), Navcell::new(190, 140)));
    hierarchy.check_invariants(&map).unwrap();
}

/// Regression: `nearest` with `max_distance = u32::MAX` squared the bound in `i64`, which
/// overflowed (wrapping negative in release), so it found nothing and unreachable goals fell
/// back to the start navcell.
#[test]
fn nearest_with_an_unbounded_distance_finds_the_nearest() {
    let (_, map) = grid_map(27, 36, &[(26, 27)]);
    let hierarchy = Hierarchy::build(&map);
    assert_eq!(hierarchy.nearest(Navcell::new(26, 27), None, u32::MAX), Some(Navcell::new(26, 26)));
}

/// The region graph's edges are exactly the pairs of regions with facing passable navcells in
/// neighbouring chunks, seen from both ends.
#[test]
fn neighbors_are_the_facing_region_pairs() {
    let blocked: Vec<(u32, u32)> =
        (0..150u32).flat_map(|j| (0..150u32).map(move |i| (i, j))).filter(|&(i, j)| (i * 7 + j * 13) % 5 == 0).collect();
    let (_, map) = grid_map(150, 150, &blocked);
    let hierarchy = Hierarchy::build(&map);
    let mut expected: std::collections::BTreeSet<(RegionId, RegionId)> = std::collections::BTreeSet::new();
    for j in 0..150u16 {
        for i in 0..150u16 {
            let here = hierarchy.region(Navcell::new(i, j));
            for (ni, nj) in [(i + 1, j), (i, j + 1)] {
                if ni >= 150 || nj >= 150 {
                    continue;
                }
                let there = hierarchy.region(Navcell::new(ni, nj));
                if let (Some(a), Some(b)) = (here, there)
                    && a.chunk != b.chunk
                {
                    expected.insert((a, b));
                    expected.insert((b, a));
                }
            }
        }
    }
    let mut got = std::collections::BTreeSet::new();
    for chunk in 0..hierarchy.chunks.len() as u32 {
        for local in 1..=hierarchy.chunks[chunk as usize].n_regions {
            let region = RegionId { chunk, local };
            for n in hierarchy.neighbors(region) {
                got.insert((region, n));
            }
        }
    }
    assert!(!expected.is_empty());
    assert_eq!(got, expected);
}

#[test]
fn update_cells_equals_a_rebuild() {
    let class = PassClass::new(0).unwrap();
    let (mut grid, mut map) = grid_map(200, 140, &[]);
    let mut hierarchy = Hierarchy::build(&map);
    let cells: Vec<Navcell> = (0..140u16).map(|j| Navcell::new(100, j)).chain((0..200u16).map(|i| Navcell::new(i, 70))).collect();
    for &c in &cells {
        grid.set_passable(c, class, false);
        map.update_rect(&grid, CellRect::new(u32::from(c.i), u32::from(c.j), u32::from(c.i) + 1, u32::from(c.j) + 1));
    }
    hierarchy.update_cells(&map, &cells);
    assert_eq!(hierarchy, Hierarchy::build(&map));
    assert_eq!(hierarchy.n_components(), 4, "a cross of walls makes four quarters");
}

/// Region labels of one chunk by the plainest method: a flood fill seeded at each unlabelled
/// passable navcell in raster order.
fn flood_labels(map: &PassMap, i0: u32, j0: u32, cw: u32, ch: u32) -> Vec<u16> {
    let mut labels = vec![0u16; (cw * ch) as usize];
    let pass = |x: u32, y: u32| map.is_passable(Navcell::new((i0 + x) as u16, (j0 + y) as u16));
    let mut next = 0;
    for seed in 0..cw * ch {
        if labels[seed as usize] != 0 || !pass(seed % cw, seed / cw) {
            continue;
        }
        next += 1;
        labels[seed as usize] = next;
        let mut stack = vec![seed];
        while let Some(k) = stack.pop() {
            let (x, y) = (k % cw, k / cw);
            for (nx, ny) in [(x + 1, y), (x.wrapping_sub(1), y), (x, y + 1), (x, y.wrapping_sub(1))] {
                if nx < cw && ny < ch && labels[(ny * cw + nx) as usize] == 0 && pass(nx, ny) {
                    labels[(ny * cw + nx) as usize] = next;
                    stack.push(ny * cw + nx);
                }
            }
        }
    }
    labels
}

proptest! {
    /// Run-based chunk labelling numbers regions exactly as a raster-order flood fill does.
    #[test]
    fn chunk_labels_equal_a_flood_fill(w in 1u32..150, h in 1u32..150, seed in any::<u64>(), density in 0u64..100) {
        let grid = crate::test_support::random_grid(w, h, seed, density);
        let map = PassMap::build(&grid, crate::test_support::CLASS);
        let hierarchy = Hierarchy::build(&map);
        for cy in 0..hierarchy.chunks_y {
            for cx in 0..hierarchy.chunks_x {
                let (i0, j0, cw, ch) = hierarchy.chunk_rect(cx, cy);
                let chunk = &hierarchy.chunks[hierarchy.chunk_index(cx, cy)];
                prop_assert_eq!(&chunk.labels, &flood_labels(&map, i0, j0, cw, ch), "chunk ({}, {})", cx, cy);
            }
        }
    }

    /// After any sequence of rectangle edits, the incrementally updated hierarchy equals a
    /// rebuilt one, and its components agree with a global flood fill.
    #[test]
    fn incremental_updates_equal_a_rebuild(
        w in 1u32..200,
        h in 1u32..160,
        seed in any::<u64>(),
        edits in proptest::collection::vec((any::<u32>(), any::<u32>(), 1u32..30, 1u32..30, any::<bool>()), 1..10),
    ) {
        let mut grid = crate::test_support::random_grid(w, h, seed, 30);
        let update = |hierarchy: &mut Hierarchy, map: &PassMap, r: CellRect| hierarchy.update_rect(map, r);
        let (hierarchy, map) =
            crate::test_support::derived_edits_equal_a_rebuild(&mut grid, &edits, Hierarchy::build, update).map_err(TestCaseError::fail)?;
        // Components partition the passable navcells exactly like a flood fill (up to naming).
        let reference = flood_components(&map);
        let mut seen = std::collections::BTreeMap::new();
        for (k, r) in reference.iter().enumerate() {
            let cell = Navcell::new((k % w as usize) as u16, (k / w as usize) as u16);
            let ours = hierarchy.component(cell);
            prop_assert_eq!(ours.is_some(), r.is_some());
            if let (Some(o), Some(r)) = (ours, r) {
                let mapped = *seen.entry(*r).or_insert(o);
                prop_assert_eq!(mapped, o, "flood component {} split", r);
            }
        }
        prop_assert_eq!(seen.len() as u32, hierarchy.n_components());
    }

    /// `nearest` agrees with a brute-force scan.
    #[test]
    fn nearest_matches_brute_force(w in 1u32..180, h in 1u32..140, seed in any::<u64>(), density in 0u64..100, ti in any::<u16>(), tj in any::<u16>(), restrict in any::<bool>(), max in prop_oneof![1u32..300, Just(u32::MAX)]) {
        let class = crate::test_support::CLASS;
        let grid = crate::test_support::random_grid(w, h, seed, density);
        let map = PassMap::build(&grid, class);
        let hierarchy = Hierarchy::build(&map);
        let target = Navcell::new(ti % w as u16, tj % h as u16);
        // Restrict to the component of some passable navcell, when asked and one exists.
        let component = if restrict {
            (0..w * h).map(|k| Navcell::new((k % w) as u16, (k / w) as u16)).find_map(|c| hierarchy.component(c))
        } else {
            None
        };
        let mut expected: Option<(i64, u16, u16)> = None;
        for j in 0..h as u16 {
            for i in 0..w as u16 {
                let cell = Navcell::new(i, j);
                let ok = match component {
                    Some(c) => hierarchy.component(cell) == Some(c),
                    None => map.is_passable(cell),
                };
                let d2 = (i64::from(i) - i64::from(target.i)).pow(2) + (i64::from(j) - i64::from(target.j)).pow(2);
                if ok && d2 <= i64::from(max.min(1 << 17)).pow(2) && expected.is_none_or(|e| (d2, j, i) < e) {
                    expected = Some((d2, j, i));
                }
            }
        }
        prop_assert_eq!(hierarchy.nearest(target, component, max), expected.map(|(_, j, i)| Navcell::new(i, j)));
    }
}
