//! The `reachability` target: the hierarchy's answers (reachable? nearest passable navcell, nearest
//! navcell of a component, goal reach with its substitute navcell, the long-range query's status)
//! against a flood-fill oracle on a small two-class grid, and the incrementally updated
//! `ClassNav` (bit planes, jump tables, hierarchy) against a rebuild after every edit.
//!
//! # Layout
//!
//! `[flags, width, height]` (sides 1 to 72 navcells, or to 140 by `flags`, so up to three 64-navcell chunks a side;
//! navcell size 1 m or 0.5 m by `flags`), a count of painting operations (rectangles blocked,
//! cleared or noisy, lines, single navcells; each for class 0, class 1 or both), then steps while
//! bytes remain (at most [`MAX_STEPS`]): a query from a start to a target, or an edit of a
//! rectangle followed by an update through `update_rect` (the exact rectangle or a larger one) or
//! `update_cells` (for edits of at most 64 navcells).
//!
//! # The oracle
//!
//! A breadth-first search over the moves the long-range search makes: the eight neighbours, a
//! diagonal step only when both orthogonal navcells it passes are passable (no corner cutting).
//! The hierarchy claims 4-connected regions decide the same thing; the oracle does not assume it.
//! "Nearest" is the lowest `(d², j, i)` over navcell indices, within the query's bound.

use std::collections::VecDeque;

use pathing::{
    CellRect, ClassNav, Fixed, Goal, GoalReach, NavGrid, Navcell, PartialReason, PassClass, Path, PathStatus, SearchLimits, SearchScratch,
    Square, WorldPos,
};

use crate::bytes::Bytes;

/// Most queries and edits in one input.
pub const MAX_STEPS: u32 = 16;

/// The navcells reachable from `start` by octile moves without corner cutting.
fn flood(grid: &NavGrid, class: PassClass, start: Navcell) -> Vec<bool> {
    let (w, h) = (grid.width() as i32, grid.height() as i32);
    let passable = |i: i32, j: i32| i >= 0 && j >= 0 && i < w && j < h && grid.is_passable(Navcell::new(i as u16, j as u16), class);
    let mut seen = vec![false; (w * h) as usize];
    if !passable(i32::from(start.i), i32::from(start.j)) {
        return seen;
    }
    seen[(i32::from(start.j) * w + i32::from(start.i)) as usize] = true;
    let mut queue = VecDeque::from([(i32::from(start.i), i32::from(start.j))]);
    while let Some((i, j)) = queue.pop_front() {
        for (di, dj) in [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)] {
            let (ni, nj) = (i + di, j + dj);
            let diagonal_ok = di == 0 || dj == 0 || (passable(i + di, j) && passable(i, j + dj));
            if passable(ni, nj) && diagonal_ok && !seen[(nj * w + ni) as usize] {
                seen[(nj * w + ni) as usize] = true;
                queue.push_back((ni, nj));
            }
        }
    }
    seen
}

/// The lowest `(d², j, i)` navcell within `max_distance` of `target` that satisfies `ok`.
fn brute_nearest(w: u32, h: u32, target: Navcell, max_distance: u32, ok: impl Fn(u32, u32) -> bool) -> Option<Navcell> {
    let max = i64::from(max_distance.min(1 << 17));
    let mut best: Option<(i64, u32, u32)> = None;
    for j in 0..h {
        for i in 0..w {
            let d2 = (i64::from(i) - i64::from(target.i)).pow(2) + (i64::from(j) - i64::from(target.j)).pow(2);
            if d2 <= max * max && ok(i, j) && best.is_none_or(|b| (d2, j, i) < b) {
                best = Some((d2, j, i));
            }
        }
    }
    best.map(|(_, j, i)| Navcell::new(i as u16, j as u16))
}

/// Sets the navcells `[i0, i1) × [j0, j1)` of the classes in `mask` (bit 0: class 0, bit 1: class
/// 1) to blocked, or to `pattern`'s bits when given (bit set: blocked), or to passable.
fn paint(grid: &mut NavGrid, (i0, j0, i1, j1): (u32, u32, u32, u32), mask: u8, fill: Fill) {
    let mut n = 0u32;
    for j in j0..j1 {
        for i in i0..i1 {
            let blocked = match fill {
                Fill::Blocked => true,
                Fill::Clear => false,
                Fill::Pattern(bits) => bits >> (n % 64) & 1 == 1,
            };
            n += 1;
            for k in 0..2u8 {
                if mask >> k & 1 == 1 {
                    let class = PassClass::new(k).expect("two classes");
                    grid.set_passable(Navcell::new(i as u16, j as u16), class, !blocked);
                }
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Fill {
    Blocked,
    Clear,
    Pattern(u64),
}

fn fill(b: &mut Bytes) -> Fill {
    match b.below(4) {
        0 | 1 => Fill::Blocked,
        2 => Fill::Clear,
        _ => Fill::Pattern(b.u64()),
    }
}

/// A rectangle of the grid: mostly small, sometimes a whole row or column (a wall with or without a
/// gap), sometimes everything.
fn rectangle(b: &mut Bytes, w: u32, h: u32) -> (u32, u32, u32, u32) {
    let (i0, j0) = (b.below16(w), b.below16(h));
    match b.below(8) {
        0 => (i0, 0, i0 + 1, h),
        1 => (0, j0, w, j0 + 1),
        2 => (0, 0, w, h),
        _ => (i0, j0, (i0 + 1 + b.below(24)).min(w), (j0 + 1 + b.below(24)).min(h)),
    }
}

fn navcell(b: &mut Bytes, w: u32, h: u32) -> Navcell {
    Navcell::new(b.below16(w) as u16, b.below16(h) as u16)
}

fn check_query(b: &mut Bytes, grid: &NavGrid, navs: &[ClassNav; 2], scratch: &mut SearchScratch) {
    let (w, h) = (grid.width(), grid.height());
    let k = b.below(2) as usize;
    let class = PassClass::new(k as u8).expect("two classes");
    let nav = &navs[k];
    let hierarchy = nav.hierarchy();
    let (start, target) = (navcell(b, w, h), navcell(b, w, h));
    let max_distance = b.pick(&[u32::MAX, u32::MAX, 0, 1, 3, 10, 64, 65, 200]);
    let reached = flood(grid, class, start);
    let at = |i: u32, j: u32| (j * w + i) as usize;
    let passable = |i: u32, j: u32| grid.is_passable(Navcell::new(i as u16, j as u16), class);

    assert_eq!(hierarchy.component(target).is_some(), passable(u32::from(target.i), u32::from(target.j)), "component of a navcell");
    assert_eq!(
        hierarchy.is_reachable(start, target),
        reached[at(u32::from(target.i), u32::from(target.j))],
        "is_reachable({start:?}, {target:?}) disagrees with the flood fill"
    );
    assert_eq!(
        hierarchy.nearest(target, None, max_distance),
        brute_nearest(w, h, target, max_distance, passable),
        "nearest passable navcell to {target:?} within {max_distance}"
    );
    if let Some(component) = hierarchy.component(start) {
        assert_eq!(
            hierarchy.nearest(target, Some(component), max_distance),
            brute_nearest(w, h, target, max_distance, |i, j| reached[at(i, j)]),
            "nearest navcell reachable from {start:?} to {target:?} within {max_distance}"
        );
    }

    // A goal round the target: reachable exactly when one of its navcells is reached, otherwise the
    // substitute is the reached navcell nearest its centre.
    let cell = grid.cell_size();
    let centre = WorldPos::new(
        Fixed::from_bits(i64::from(target.i) * cell.to_bits() + i64::from(b.u16()) - (1 << 15)),
        Fixed::from_bits(i64::from(target.j) * cell.to_bits() + i64::from(b.u16()) - (1 << 15)),
    );
    let size = Fixed::from_bits(i64::from(b.u16()) << 4);
    let goal = match b.below(5) {
        0 => Goal::point(centre),
        1 => Goal::circle(centre, size),
        2 => Goal::inverted_circle(centre, size),
        3 => Square::axis_aligned(centre, size, size / 2).map(Goal::square),
        _ => Square::axis_aligned(centre, size, size / 3).map(Goal::inverted_square),
    }
    .expect("goals near the grid are in range");
    let reach = nav.goal_reach(start, &goal, scratch);
    let mut path = Path::new();
    let outcome = pathing::find_path(nav, start, &goal, &SearchLimits::UNLIMITED, scratch, &mut path);
    if !passable(u32::from(start.i), u32::from(start.j)) {
        assert_eq!(reach, None, "goal reach from an impassable start");
        assert_eq!(outcome.status, PathStatus::Partial(PartialReason::StartImpassable));
        return;
    }
    let goal_reached = (0..h).any(|j| (0..w).any(|i| reached[at(i, j)] && goal.contains_navcell(i, j, cell, w, h)));
    let (ci, cj) = {
        let c = match goal.shape() {
            pathing::GoalShape::Point(p)
            | pathing::GoalShape::Circle { center: p, .. }
            | pathing::GoalShape::InvertedCircle { center: p, .. } => p,
            pathing::GoalShape::Square(sq)
            | pathing::GoalShape::InvertedSquare(sq)
            | pathing::GoalShape::RoundedSquare { square: sq, .. } => sq.center(),
        };
        let s = cell.to_bits();
        (c.x.to_bits().div_euclid(s).clamp(0, i64::from(w) - 1), c.z.to_bits().div_euclid(s).clamp(0, i64::from(h) - 1))
    };
    if goal_reached {
        assert_eq!(reach, Some(GoalReach::Reachable), "{goal:?} from {start:?}");
        assert_eq!(outcome.status, PathStatus::Complete, "{goal:?} from {start:?}");
    } else {
        let centre_cell = Navcell::new(ci as u16, cj as u16);
        let nearest = brute_nearest(w, h, centre_cell, u32::MAX, |i, j| reached[at(i, j)]).expect("the start is reached");
        assert_eq!(reach, Some(GoalReach::Unreachable { nearest }), "{goal:?} from {start:?}");
        assert_eq!(outcome.status, PathStatus::Partial(PartialReason::Unreachable), "{goal:?} from {start:?}");
        assert_eq!(path.waypoints().last(), Some(&nearest), "the path ends at the substitute navcell");
    }
}

/// The body: see the module documentation.
pub fn reachability(data: &[u8]) {
    let mut b = Bytes::new(data);
    let flags = b.u8();
    // Mostly one or two chunks a side (cheap enough for thousands of runs a second); up to three
    // when flag bit 2 is set.
    let side = if flags >> 2 & 1 == 1 { 140 } else { 72 };
    let (w, h) = (1 + b.below(side), 1 + b.below(side));
    let cell = if flags & 1 == 1 { Fixed::ONE / 2 } else { Fixed::ONE };
    let mut grid = NavGrid::new(w, h, 2, cell).expect("small grids are valid");
    for _ in 0..b.below(12) {
        let r = rectangle(&mut b, w, h);
        let mask = 1 + b.below(3) as u8;
        let f = fill(&mut b);
        paint(&mut grid, r, mask, f);
    }
    let class = |k: u8| PassClass::new(k).expect("two classes");
    // Class 1 runs on jump tables when flag bit 1 is set, class 0 never: both forms get updated.
    let tables = flags >> 1 & 1 == 1;
    let mut navs = [ClassNav::build_with(&grid, class(0), false), ClassNav::build_with(&grid, class(1), tables)];
    let mut scratch = SearchScratch::new();
    for _ in 0..MAX_STEPS {
        if b.is_empty() {
            break;
        }
        if b.below(3) > 0 {
            check_query(&mut b, &grid, &navs, &mut scratch);
            continue;
        }
        let r @ (i0, j0, i1, j1) = rectangle(&mut b, w, h);
        let mask = 1 + b.below(3) as u8;
        let f = fill(&mut b);
        paint(&mut grid, r, mask, f);
        let how = b.below(3);
        let grow = b.below(70);
        for (k, nav) in navs.iter_mut().enumerate() {
            match how {
                0 => nav.update_rect(&grid, CellRect::new(i0, j0, i1, j1)),
                // A dirty rectangle larger than the change (clipped by the update itself).
                1 => nav.update_rect(&grid, CellRect::new(i0.saturating_sub(grow), j0.saturating_sub(grow), i1 + grow, j1 + grow)),
                // Scattered cells, for small edits only: it re-sweeps the jump tables per navcell.
                _ if (i1 - i0) * (j1 - j0) > 64 => nav.update_rect(&grid, CellRect::new(i0, j0, i1, j1)),
                _ => {
                    let cells: Vec<Navcell> = (j0..j1).flat_map(|j| (i0..i1).map(move |i| Navcell::new(i as u16, j as u16))).collect();
                    nav.update_cells(&grid, &cells);
                }
            }
            let rebuilt = ClassNav::build_with(&grid, class(k as u8), k == 1 && tables);
            assert!(*nav == rebuilt, "class {k}: incremental update of {r:?} (how {how}, grow {grow}) differs from a rebuild");
        }
    }
}
