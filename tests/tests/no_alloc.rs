//! A warm query allocates nothing: once a `SearchScratch` and a `Path` have grown to a map, JPS,
//! JPS+, both with landmarks, and A* run without touching the allocator. Counted with a wrapping global allocator (this test binary
//! only), on the test's own thread only: the test harness's other threads may allocate at any time.
// A global allocator is an unsafe trait; this test binary is the one place that needs it.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use pathing::{Fixed, Goal, Navcell, PassMap, Path, PathStatus, SearchLimits, SearchScratch, WorldPos};
use phalanx_tests::maps::{self, CLASS, Kind};

struct Counting;

thread_local! {
    /// Whether this thread's allocations are counted (const-initialized: reading it never allocates).
    static COUNTED: Cell<bool> = const { Cell::new(false) };
    /// This thread's counted allocations. Per thread, so that tests counting at the same time on
    /// the harness's threads never see each other's allocations.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    if COUNTED.with(Cell::get) {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
    }
}

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn warm_queries_do_not_allocate() {
    let grid = maps::grid(Kind::Noise(15), 120, 90, 11);
    let map = PassMap::build(&grid, CLASS);
    let queries = [
        (Navcell::new(1, 1), Goal::point(WorldPos::from_int(110, 80)).unwrap()),
        (Navcell::new(1, 1), Goal::circle(WorldPos::from_int(60, 45), Fixed::from_num(7)).unwrap()),
        (Navcell::new(100, 5), Goal::inverted_circle(WorldPos::from_int(100, 5), Fixed::from_num(9)).unwrap()),
    ];
    let mut scratch = SearchScratch::new();
    let mut path = Path::new();
    let table = pathing::JumpTable::build(&map);
    let landmarks = pathing::Landmarks::build(&map, 8);
    let plus = pathing::Accelerators { jump_table: Some(&table), landmarks: None };
    let with_landmarks = pathing::Accelerators { jump_table: None, landmarks: Some(&landmarks) };
    let plus_with_landmarks = pathing::Accelerators { jump_table: Some(&table), landmarks: Some(&landmarks) };
    let run_all = |scratch: &mut SearchScratch, path: &mut Path| {
        let mut complete = 0;
        for (start, goal) in &queries {
            let lim = &SearchLimits::UNLIMITED;
            let outcomes = [
                pathing::find_path_jps(&map, &pathing::Accelerators::NONE, *start, goal, lim, scratch, path),
                pathing::find_path_astar(&map, None, *start, goal, lim, scratch, path),
                pathing::find_path_jps(&map, &plus, *start, goal, lim, scratch, path),
                pathing::find_path_jps(&map, &with_landmarks, *start, goal, lim, scratch, path),
                pathing::find_path_jps(&map, &plus_with_landmarks, *start, goal, lim, scratch, path),
            ];
            complete += outcomes.iter().filter(|o| o.status == PathStatus::Complete).count();
        }
        complete
    };
    // The first round grows the scratch and the path.
    let cold = run_all(&mut scratch, &mut path);
    COUNTED.with(|c| c.set(true));
    let probe = allocations();
    drop(std::hint::black_box(vec![1u8; 16]));
    assert!(allocations() > probe, "the counter must see this thread's allocations");
    let before = allocations();
    let warm = run_all(&mut scratch, &mut path);
    let after = allocations();
    COUNTED.with(|c| c.set(false));
    assert_eq!(cold, warm);
    assert!(warm > 0, "the queries must find paths for the test to mean anything");
    assert_eq!(after - before, 0, "warm queries allocated {} times", after - before);
}

/// The short-range search with a warm `ShortScratch` and an `out` with capacity reserved: edges,
/// squares, vertices and the open list all reuse their buffers.
#[test]
fn warm_short_range_queries_do_not_allocate() {
    use pathing::collide::UnitSquare;
    use pathing::{ShortQuery, ShortScratch, ShortStatus, find_short_path};

    let grid = maps::grid(Kind::Noise(12), 80, 60, 5);
    let map = PassMap::build(&grid, CLASS);
    let at = |x: i32, z: i32| WorldPos::new(Fixed::from_num(x) + Fixed::from_bits(1 << 14), Fixed::from_num(z) + Fixed::from_bits(3 << 13));
    let squares: Vec<UnitSquare> =
        (0..40).map(|k| UnitSquare { center: at(20 + (k * 7) % 40, 15 + (k * 11) % 30), half: Fixed::from_bits(1 << 15) }).collect();
    let goals = [
        Goal::point(at(45, 40)).unwrap(),
        Goal::circle(at(30, 20), Fixed::from_num(3)).unwrap(),
        Goal::inverted_circle(at(40, 30), Fixed::from_num(6)).unwrap(),
        Goal::point(at(70, 50)).unwrap(),
    ];
    let starts = [at(25, 25), at(40, 30), at(38, 28), at(50, 45)];
    let mut scratch = ShortScratch::new();
    let mut out = Vec::new();
    let run_all = |scratch: &mut ShortScratch, out: &mut Vec<WorldPos>| {
        let mut complete = 0;
        for (start, goal) in starts.iter().zip(&goals) {
            let q = ShortQuery {
                start: *start,
                goal,
                range: Fixed::from_num(12),
                clearance: Fixed::from_bits(1 << 14),
                squares: &squares,
                node_budget: 10_000,
            };
            let outcome = find_short_path(&map, &q, scratch, out);
            complete += usize::from(outcome.status == ShortStatus::Complete);
        }
        complete
    };
    // The first round grows the scratch; `out` gets room for any path up to the vertex limit.
    let cold = run_all(&mut scratch, &mut out);
    out.reserve(pathing::short_range::MAX_VERTICES as usize);
    COUNTED.with(|c| c.set(true));
    let probe = allocations();
    drop(std::hint::black_box(vec![1u8; 16]));
    assert!(allocations() > probe, "the counter must see this thread's allocations");
    let before = allocations();
    let warm = run_all(&mut scratch, &mut out);
    let after = allocations();
    COUNTED.with(|c| c.set(false));
    assert_eq!(cold, warm);
    assert!(warm > 0, "the queries must find paths for the test to mean anything");
    assert_eq!(after - before, 0, "warm short-range queries allocated {} times", after - before);
}
