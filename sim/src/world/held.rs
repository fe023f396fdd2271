//! Passages held by other players (docs/motion-rules.md, "Passages held by other players"): the
//! long-range search of a unit blocked by standing units it may not nudge, over a copy of its
//! class's passability with those units stamped in as obstacles.
//!
//! Long-range planning otherwise ignores units, and nudging moves only the walker's own player's
//! units, so without this a corridor held by another player's idle units stops a unit until it
//! gives up. The shared grids never change: each search stamps a copy of its class's map kept in
//! its worker's workspace and restores the stamped navcells after, so the copy is made again only
//! when the grid changes (`Workspace::held_map`), not for every search.
//!
//! The stamps block whole navcells, so they can miss a band between two holders that the motion
//! allows; when the stamped search finds no way, the same job makes a short-range search round the
//! exact cores the motion checks (`HeldJob::fallback`), so every walker of a group sees the same
//! passage (docs/decisions.md, "A held passage has one outcome for every walker").

use pathing::{Accelerators, PassMap};

use super::jobs::{HeldJob, LongJob, ShortJob, Workspace, search_work};
use super::*;
use crate::motion::UnitIndex;

impl World {
    /// The held-passage search for `unit` (whose long-range request is `long`): every standing unit
    /// of another player within `short_range_max` of it (a bounded neighbourhood, which holds the
    /// units that stopped it) is stamped as the navcells its core, grown by the unit's radius,
    /// meets (the square that blocks the unit's movement, so a path round the stamps can be
    /// walked); the unit's own navcell is never stamped. A unit that is settling (its goal
    /// unreachable) aims for the end of its current path instead.
    pub(super) fn held_job(&self, unit: &Unit, mut long: LongJob, stationary: &UnitIndex, fallback: Option<ShortJob>) -> HeldJob {
        if unit.settle
            && let Some(goal) = unit.waypoints().last().and_then(|&end| Goal::point(end).ok())
        {
            long.goal = goal;
        }
        HeldJob { long, stamps: self.held_stamps(unit, stationary), grid_root: self.derived.grid_digests.root(), fallback }
    }

    /// The navcell rectangles `(i0, j0, i1, j1)` of a held-passage search for `unit`: for every
    /// standing unit of another player within `short_range_max` of it, the navcells its core,
    /// grown by the unit's radius, meets.
    pub(super) fn held_stamps(&self, unit: &Unit, stationary: &UnitIndex) -> Vec<(u32, u32, u32, u32)> {
        let grid = self.nav.grid();
        let s = i128::from(grid.cell_size().to_bits()).max(1);
        let last = |n: u32| i128::from(n) - 1;
        let mut stamps = Vec::new();
        let reach = self.settings.motion.short_range_max + stationary.max_radius();
        stationary.for_each_near(unit.pos, reach, |id, pos, core| {
            let Some(other) = self.unit(id) else { return };
            if other.owner == unit.owner || id == unit.id {
                return;
            }
            let half = i128::from(core.to_bits()) + i128::from(unit.radius.to_bits());
            let span = |c: Fixed, n: u32| {
                let c = i128::from(c.to_bits());
                ((c - half).div_euclid(s).clamp(0, last(n)) as u32, (c + half).div_euclid(s).clamp(0, last(n)) as u32)
            };
            let ((i0, i1), (j0, j1)) = (span(pos.x, grid.width()), span(pos.z, grid.height()));
            stamps.push((i0, j0, i1, j1));
        });
        stamps
    }
}

/// Node budget of a held-passage search. The way round other players' standing units is a local
/// detour: on the demo game and the ten-thousand run every complete one expanded at most 28 nodes.
/// A goal the stamps enclose (a unit ordered into the middle of an enemy crowd) has no way round,
/// and without a bound the search expanded every jump point it could reach on the whole map
/// (about 4,700 on the demo's 1024 × 1024 world, 6 to 30 ms) before saying so; the regular search
/// avoids that by first moving an unreachable goal to the nearest reachable navcell, which the
/// stamped copy has no hierarchy for. `[Units: nodes]`
pub const HELD_NODE_BUDGET: u32 = 1024;

/// Runs a held-passage search: a jump point search (no tables: they describe the unstamped map)
/// over the class's passability with the stamps blocked, within [`HELD_NODE_BUDGET`]; then the
/// turning points' centres (the exact goal point in the last one's place when it lies there),
/// string-pulled over the stamped map. Only a complete path is a way round.
pub(super) fn run_held(nav: &NavWorld, job: &HeldJob, ws: &mut Workspace) -> Option<(PathStatus, Vec<WorldPos>)> {
    let class = job.long.class;
    let original = nav.class_nav(class)?.pass_map();
    let (search, path, work, map) = ws.held_parts(class, job.grid_root, original);
    stamp(map, &job.stamps, job.long.cell);
    let limits = SearchLimits { node_budget: HELD_NODE_BUDGET };
    let none = Accelerators { jump_table: None, landmarks: None };
    let outcome = pathing::find_path_jps(map, &none, job.long.cell, &job.long.goal, &limits, search, path);
    let status = outcome.status;
    *work = search_work(&outcome, path) + stamped_navcells(&job.stamps);
    let result = (status == PathStatus::Complete).then(|| way_round(nav, job, map, path.waypoints()));
    for &rect in &job.stamps {
        map.restore_rect(original, rect);
    }
    Some(result.map_or_else(|| (status, Vec::new()), |points| (status, points)))
}

/// The navcells the stamps cover (counted once per stamp), a held-passage search's work besides
/// its nodes and path: stamping a navcell and restoring it cost about one node's expansion.
fn stamped_navcells(stamps: &[(u32, u32, u32, u32)]) -> u64 {
    stamps.iter().map(|&(i0, j0, i1, j1)| u64::from(i1.saturating_sub(i0) + 1) * u64::from(j1.saturating_sub(j0) + 1)).sum()
}

/// The way round of a complete held-passage search through `cells`: the turning points' centres
/// (the exact goal point in the last one's place when it lies there), string-pulled over the
/// stamped map.
fn way_round(nav: &NavWorld, job: &HeldJob, map: &PassMap, cells: &[Navcell]) -> Vec<WorldPos> {
    let cell_size = nav.grid().cell_size();
    let mut points = vec![job.long.pos];
    points.extend(cells.iter().skip(1).map(|c| centre(*c, cell_size)));
    if let Some(anchor) = job.long.anchor
        && cells.last() == Some(&grid_navcell(nav.grid(), anchor))
    {
        match points.len() {
            1 if job.long.pos != anchor => points.push(anchor),
            1 => {}
            n => points[n - 1] = anchor,
        }
    }
    if let (Some(&first), Some(&start)) = (points.get(1), cells.first())
        && !pathing::collide::segment_clear(map, job.long.pos, first)
    {
        points.insert(1, centre(start, cell_size));
    }
    pathing::smoothing::string_pull(map, &points).into_iter().skip(1).collect()
}

/// Blocks every navcell of `stamps` in `map` except `keep` (the unit's own navcell, so the search
/// starts): the same map a build from the grid with the stamps blocked would give.
fn stamp(map: &mut PassMap, stamps: &[(u32, u32, u32, u32)], keep: Navcell) {
    for &rect in stamps {
        map.block_rect(rect, Some(keep));
    }
}
