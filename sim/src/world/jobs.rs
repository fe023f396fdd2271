//! The searches the path phase makes and the workspaces it makes them in: the floor under the
//! path phase (`world/plan.rs`), the held-passage searches (`world/held.rs`) and the formations'
//! paths (`world/formations.rs`), which all three import and which imports none of them.

use pathing::short_range::ShortScratch;
use pathing::{Fixed, Goal, Navcell, PassClass, Path, SearchScratch, WorldPos};

/// One search workspace for each of `threads` worker threads (at least one, which also serves the
/// calling thread), indexed by the worker's index in its pool.
pub(crate) fn workspaces(threads: usize) -> Vec<std::sync::Mutex<Workspace>> {
    (0..threads.max(1)).map(|_| std::sync::Mutex::new(Workspace::default())).collect()
}

/// One worker's search workspace, reused across queries and turns (never hashed or saved).
#[derive(Debug, Default)]
pub(crate) struct Workspace {
    pub(super) search: SearchScratch,
    pub(super) path: Path,
    pub(super) short: ShortScratch,
    pub(super) short_out: Vec<WorldPos>,
    /// The last long-range search's work besides [`crate::settings::SEARCH_BASE_WORK`] ([`search_work`]).
    pub(super) work: u64,
    /// A copy of one class's passability for the held-passage searches to stamp, with the class
    /// and the grid's passability digest root it was copied at: each search stamps it and restores
    /// it after (`world/held.rs`), so it is copied again only when the grid or the class changes.
    /// Whether a search finds it ready changes only how long it takes, never its outcome or work.
    pub(super) held_map: Option<(PassClass, crate::digest_tree::Digest, pathing::PassMap)>,
}

impl Workspace {
    /// The long-range scratch, path and work, and the copy of `class`'s map `original` (whose
    /// grid's passability digest root is `root`) for a held-passage search (`world/held.rs`) to stamp.
    pub(super) fn held_parts(
        &mut self,
        class: PassClass,
        root: crate::digest_tree::Digest,
        original: &pathing::PassMap,
    ) -> (&mut SearchScratch, &mut Path, &mut u64, &mut pathing::PassMap) {
        match &mut self.held_map {
            Some((c, r, map)) if *c == class && *r == root => {
                debug_assert!(map == original, "a held-passage copy went stale");
            }
            Some((c, r, map)) => {
                map.clone_from(original);
                (*c, *r) = (class, root);
            }
            None => self.held_map = Some((class, root, original.clone())),
        }
        let map = &mut self.held_map.as_mut().expect("just set").2;
        (&mut self.search, &mut self.path, &mut self.work, map)
    }
}

/// A long-range search to make.
#[derive(Clone)]
pub(super) struct LongJob {
    pub(super) class: PassClass,
    pub(super) pos: WorldPos,
    pub(super) cell: Navcell,
    pub(super) goal: Goal,
    /// The exact point of a point goal, off navcell borders.
    pub(super) anchor: Option<WorldPos>,
    /// The unit's [`crate::Unit::order_group`] when its current order is a point, else 0: a unit of a
    /// group that shares the search of an earlier unit of its group ends at its own point.
    pub(super) group: u64,
}

/// A long-range search round the standing units of other players.
#[derive(Clone)]
pub(super) struct HeldJob {
    pub(super) long: LongJob,
    /// Navcells to treat as blocked for this search: each a rectangle `(i0, j0, i1, j1)`, inclusive.
    pub(super) stamps: Vec<(u32, u32, u32, u32)>,
    /// The passability digest root of the grid the search runs on: which copy of the class's
    /// map a workspace may reuse ([`Workspace::held_map`]).
    pub(super) grid_root: crate::digest_tree::Digest,
    /// The short-range search round the exact cores to make when the stamped search finds no way.
    pub(super) fallback: Option<ShortJob>,
}

/// A formation path search to make: the long-range job from the members' position, and the
/// formation's size for the generalisation.
#[derive(Clone)]
pub(super) struct FormationJob {
    pub(super) long: LongJob,
    pub(super) size: Fixed,
}

/// Navcell steps of a path that count as one unit of its search's work ([`search_work`]).
pub const SEARCH_STEPS_PER_WORK: u64 = 8;

/// A long-range search's work besides [`crate::settings::SEARCH_BASE_WORK`]: the nodes it expanded plus one for
/// every [`SEARCH_STEPS_PER_WORK`] navcell steps of its path. Both are exact and the same on every
/// machine; the steps stand for what expansions miss, the jump scans between jump points and the
/// string pulling along the path, which grow with its length (on the ten-thousand workload this
/// sum follows a search's time with a correlation of 0.96, the expansions alone 0.88).
/// `[Units: work]`
pub(super) fn search_work(outcome: &pathing::SearchOutcome, path: &Path) -> u64 {
    let steps = path.steps();
    u64::from(outcome.expanded) + steps.straight.saturating_add(steps.diagonal) / SEARCH_STEPS_PER_WORK
}

/// A short-range search to make.
#[derive(Clone)]
pub(super) struct ShortJob {
    pub(super) class: PassClass,
    pub(super) pos: WorldPos,
    pub(super) radius: Fixed,
    pub(super) goal: Goal,
    pub(super) range: Fixed,
    pub(super) squares: Vec<pathing::collide::UnitSquare>,
    /// The goal is the order's: the path ends the order.
    pub(super) final_leg: bool,
    /// The goal is taken by a standing unit: no retry without the units.
    pub(super) occupied: bool,
    /// The fallback of a held-passage search: no retry without the units either, since the ones
    /// in the way may not be nudged.
    pub(super) held: bool,
    /// The long-range waypoints the detour leads back to.
    pub(super) keep: Vec<WorldPos>,
}
