//! A warm query allocates nothing: once a `SearchScratch` and a `Path` have grown to a map, JPS and
//! A* run without touching the allocator. Counted with a wrapping global allocator (this test binary
//! only), on the test's own thread only: the test harness's other threads may allocate at any time.
// A global allocator is an unsafe trait; this test binary is the one place that needs it.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use pathing::{Fixed, Goal, Navcell, PassMap, Path, PathStatus, SearchLimits, SearchScratch, WorldPos};
use phalanx_tests::maps::{self, CLASS, Kind};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Whether this thread's allocations are counted (const-initialized: reading it never allocates).
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

fn count() {
    if COUNTED.with(Cell::get) {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
    }
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
    let run_all = |scratch: &mut SearchScratch, path: &mut Path| {
        let mut complete = 0;
        for (start, goal) in &queries {
            for search in [pathing::find_path_jps, pathing::find_path_astar] {
                let outcome = search(&map, *start, goal, &SearchLimits::UNLIMITED, scratch, path);
                complete += usize::from(outcome.status == PathStatus::Complete);
            }
        }
        complete
    };
    // The first round grows the scratch and the path.
    let cold = run_all(&mut scratch, &mut path);
    COUNTED.with(|c| c.set(true));
    let probe = ALLOCATIONS.load(Ordering::SeqCst);
    drop(std::hint::black_box(vec![1u8; 16]));
    assert!(ALLOCATIONS.load(Ordering::SeqCst) > probe, "the counter must see this thread's allocations");
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    let warm = run_all(&mut scratch, &mut path);
    let after = ALLOCATIONS.load(Ordering::SeqCst);
    COUNTED.with(|c| c.set(false));
    assert_eq!(cold, warm);
    assert!(warm > 0, "the queries must find paths for the test to mean anything");
    assert_eq!(after - before, 0, "warm queries allocated {} times", after - before);
}
