//! Unit tests of a world's per-class grids: incremental updates against full rebuilds, refused
//! changes, and worlds from each kind of source.

use super::*;
use crate::build::raster::oriented_square;
use crate::build::refworld::{RefWorldParams, generate};
use proptest::prelude::*;

fn square(x: i32, z: i32, hw2: i32, hh2: i32, deg: i32) -> Square {
    oriented_square(WorldPos::from_int(x, z), Fixed::from_num(hw2) / 2, Fixed::from_num(hh2) / 2, Fixed::from_num(deg)).unwrap()
}

fn small_world(seed: u64) -> (WorldDesc, Vec<(ObstructionId, Obstruction)>) {
    let mut p = RefWorldParams::scaled(24, seed);
    p.circular = seed % 2 == 1;
    generate(&p)
}

/// Paints a world in blocks of `block × block` navcells (so that painted water has shores and
/// blocked patches have sides for the clearance to grow from): about half ground, a third
/// water, the rest blocked.
fn paint(desc: &mut WorldDesc, seed: u64, block: u32) {
    let mut state = seed ^ 0x0070_6169_6e74;
    let (w, h) = (desc.grid.width, desc.grid.height);
    let (bw, bh) = (w.div_ceil(block), h.div_ceil(block));
    let blocks: Vec<CellKind> = (0..bw * bh)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            match (state >> 33) % 6 {
                0 | 1 => CellKind::Water,
                2 => CellKind::Blocked,
                _ => CellKind::Ground,
            }
        })
        .collect();
    desc.cells = (0..h).flat_map(|j| (0..w).map(move |i| (i, j))).map(|(i, j)| blocks[((j / block) * bw + i / block) as usize]).collect();
}

/// Everything derived, compared with a world rebuilt from the same state.
fn assert_matches_rebuild(world: &NavWorld) {
    let rebuilt = NavWorld::build(world.desc().clone(), world.obstructions().iter().map(|(&id, &o)| (id, o))).unwrap();
    assert!(world.terrain_only() == rebuilt.terrain_only(), "terrain-only grid differs from a rebuild");
    assert!(world.grid() == rebuilt.grid(), "grid differs from a rebuild");
    for k in 0..world.classes().len() {
        let class = PassClass::new(k).unwrap();
        assert!(world.class_nav(class) == rebuilt.class_nav(class), "class {k} long-range data differs from a rebuild");
    }
}

/// Every class with a landmark table finds paths of the cost a search without one finds
/// (the octile JPS, itself checked against A* elsewhere), with the same outcome, between
/// passable navcells spread over the grid: the table, built before obstructions came and went
/// and doors opened or closed, is still an exact bound.
fn assert_landmark_paths_optimal(world: &NavWorld, seed: u64) {
    use crate::{Goal, Navcell, Path, SearchLimits, SearchScratch, find_path};
    let (mut scratch, mut path) = (SearchScratch::new(), Path::new());
    let limits = SearchLimits::UNLIMITED;
    for k in 0..world.classes().len() {
        let class = PassClass::new(k).unwrap();
        let Some(nav) = world.class_nav(class).filter(|n| n.landmarks().is_some()) else { continue };
        let plain = ClassNav::build_with(world.grid(), class, false);
        let map = nav.pass_map();
        let passable: Vec<Navcell> = (0..map.height())
            .flat_map(|j| (0..map.width()).map(move |i| Navcell::new(i as u16, j as u16)))
            .filter(|&c| map.is_passable(c))
            .collect();
        if passable.is_empty() {
            continue;
        }
        let mut state = seed ^ 0x6c61_6e64;
        let mut pick = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            passable[(state >> 33) as usize % passable.len()]
        };
        for _ in 0..6 {
            let (start, end) = (pick(), pick());
            let goal = Goal::navcell_center(end.i, end.j, map.cell_size());
            let with = find_path(nav, start, &goal, &limits, &mut scratch, &mut path);
            let cost = path.cost();
            let without = find_path(&plain, start, &goal, &limits, &mut scratch, &mut path);
            assert_eq!(with.status, without.status, "class {k}: {start:?} to {end:?}");
            assert_eq!(cost, path.cost(), "class {k}: {start:?} to {end:?}: landmark path cost differs");
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    Add { x: i32, z: i32, hw2: i32, hh2: i32, deg: i32 },
    Remove(usize),
    Move { pick: usize, dx: i32, dz: i32, deg: i32 },
    Area(usize, bool),
    Terrain { vertex: usize, height: i32 },
    Update,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..96i32, 0..96i32, 0..24i32, 0..24i32, 0..360i32).prop_map(|(x, z, hw2, hh2, deg)| Op::Add { x, z, hw2, hh2, deg }),
        any::<usize>().prop_map(Op::Remove),
        (any::<usize>(), -6..7i32, -6..7i32, 0..360i32).prop_map(|(pick, dx, dz, deg)| Op::Move { pick, dx, dz, deg }),
        (any::<usize>(), any::<bool>()).prop_map(|(pick, open)| Op::Area(pick, open)),
        (any::<usize>(), 0..40i32).prop_map(|(vertex, height)| Op::Terrain { vertex, height }),
        Just(Op::Update),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Adding, removing and moving obstructions, opening and closing areas and editing the
    /// terrain, updated in any grouping, gives exactly a full rebuild of the final state; with
    /// landmark tables, their paths keep the octile search's costs.
    #[test]
    fn incremental_updates_equal_a_full_rebuild(seed in 0..1000u64, ops in proptest::collection::vec(op(), 1..24)) {
        // One case in three runs on the rooms of a polygon config (areas, a door, obstacles), one
        // in three on a reference world; half of each is painted over (a painted layer with the
        // terrain, border, areas and obstacles still applying). The last third is a world made
        // only of painted navcells.
        let (mut desc, obstructions) = match seed % 3 {
            0 => {
                // Half of these with a boundary padding and an annex overlapping the hall and
                // the door, so that areas are tested each against its own edge.
                let text = if seed / 4 % 2 == 1 { rooms_with_annex() } else { ROOMS.to_owned() };
                let config = PolygonConfig::parse_json(&text).unwrap();
                (WorldDesc::from_polygon_config(&config, one_class(Fixed::from_num(seed % 2))).unwrap().0, Vec::new())
            }
            1 => small_world(seed),
            _ => {
                let (w, h) = (40 + (seed % 64) as u32, 96);
                (WorldDesc::from_cells(w, h, Fixed::ONE, vec![CellKind::Ground; (w * h) as usize], ClassSet::zero_ad_defaults()).unwrap(), Vec::new())
            }
        };
        if seed % 3 == 2 || seed / 6 % 2 == 1 {
            // Fine paint on the rooms (0.5 m navcells), so the door itself holds every kind.
            let block = if seed % 3 == 0 { 1 + (seed / 12 % 2) as u32 } else { 4 };
            paint(&mut desc, seed, block);
        }
        // Half the cases give every movement class a landmark table.
        if seed / 2 % 2 == 0 {
            desc.landmark_classes = u16::MAX;
        }
        let mut world = NavWorld::build(desc, obstructions).unwrap();
        let mut next_id = 10_000u32;
        for op in ops {
            match op {
                Op::Add { x, z, hw2, hh2, deg } => {
                    let o = Obstruction { square: square(x, z, hw2, hh2, deg), flags: ObstructionFlags(1 + (x % 3) as u8) };
                    match world.add_obstruction(ObstructionId(next_id), o) {
                        Ok(()) => next_id += 1,
                        Err(e) => prop_assert!(matches!(e, WorldError::ZeroSize | WorldError::OffMap), "{e}"),
                    }
                }
                Op::Remove(pick) => {
                    let ids: Vec<ObstructionId> = world.obstructions().keys().copied().collect();
                    if !ids.is_empty() {
                        world.remove_obstruction(ids[pick % ids.len()]).unwrap();
                    }
                }
                Op::Move { pick, dx, dz, deg } => {
                    let ids: Vec<ObstructionId> = world.obstructions().keys().copied().collect();
                    if !ids.is_empty() {
                        let id = ids[pick % ids.len()];
                        let old = world.obstructions()[&id];
                        let c = old.square.center();
                        let moved = oriented_square(
                            WorldPos::new(c.x + Fixed::from_num(dx), c.z + Fixed::from_num(dz)), old.square.hw(), old.square.hh(), Fixed::from_num(deg)).unwrap();
                        let _ = world.move_obstruction(id, Obstruction { square: moved, flags: old.flags });
                    }
                }
                Op::Area(pick, open) => {
                    let names: Vec<String> = world.desc().areas.iter().map(|a| a.name.clone()).collect();
                    if !names.is_empty() {
                        world.set_area_available(&names[pick % names.len()], open).unwrap();
                    }
                }
                Op::Terrain { vertex, height } => {
                    let t = world.desc().terrain.clone();
                    let mut heights = t.heights().to_vec();
                    let n = heights.len();
                    heights[vertex % n] = Fixed::from_num(height);
                    let edited = Terrain::new(t.tiles_w(), t.tiles_h(), t.tile_size(), heights, t.water_level()).unwrap();
                    world.set_terrain(edited).unwrap();
                }
                Op::Update => {
                    world.update();
                }
            }
        }
        world.update();
        assert_matches_rebuild(&world);
        assert_landmark_paths_optimal(&world, seed);
    }
}

#[test]
fn refused_changes_say_why_and_change_nothing() {
    let (desc, obstructions) = small_world(7);
    let mut world = NavWorld::build(desc, obstructions).unwrap();
    let before = world.obstructions().len();
    let o = |sq| Obstruction { square: sq, flags: ObstructionFlags::STATIC };
    assert_eq!(world.add_obstruction(ObstructionId(1), o(square(40, 40, 4, 4, 0))), Err(WorldError::DuplicateId(ObstructionId(1))));
    assert_eq!(world.add_obstruction(ObstructionId(99_999), o(square(40, 40, 0, 0, 0))), Err(WorldError::ZeroSize));
    assert_eq!(world.add_obstruction(ObstructionId(99_999), o(square(-500, 40, 4, 4, 0))), Err(WorldError::OffMap));
    let far = Square::axis_aligned(WorldPos::from_int(1 << 20, 0), Fixed::ONE, Fixed::ONE).unwrap();
    assert_eq!(world.add_obstruction(ObstructionId(99_999), o(far)), Err(WorldError::OutOfRange));
    assert_eq!(world.remove_obstruction(ObstructionId(99_999)), Err(WorldError::UnknownId(ObstructionId(99_999))));
    assert_eq!(world.set_area_available("gate", true), Err(WorldError::UnknownArea("gate".into())));
    assert_eq!(world.obstructions().len(), before);
    assert!(!world.has_pending());
}

const ROOMS: &str = r#"{
        "cellSize": 0.5, "agentRadius": 0.45, "objectPadding": 0.25, "boundaryPadding": 0.0,
        "areas": [
            { "name": "hall", "polygon": [[0, 0], [12, 0], [12, 3], [5, 3], [5, 9], [0, 9]] },
            { "name": "door", "available": false, "polygon": [[12, 0.5], [14, 0.5], [14, 2.5], [12, 2.5]] },
            { "name": "vault", "polygon": [[14, -2], [22, -2], [22, 6], [14, 6]] }
        ],
        "obstacles": [
            { "name": "table", "polygon": [[1, 5], [3, 5], [3, 6], [1, 6]] },
            { "name": "u", "polygon": [[16, 0], [20, 0], [20, 4], [19, 4], [19, 1], [17, 1], [17, 4], [16, 4]] }
        ]
    }"#;

/// [`ROOMS`] with a boundary padding of 0.5 m and an annex area overlapping the hall and the
/// door.
fn rooms_with_annex() -> String {
    ROOMS.replace("\"boundaryPadding\": 0.0", "\"boundaryPadding\": 0.5").replace(
        "{ \"name\": \"vault\"",
        "{ \"name\": \"annex\", \"polygon\": [[8, 0], [13, 0], [13, 5], [8, 5]] },\n            { \"name\": \"vault\"",
    )
}

fn one_class(clearance: Fixed) -> ClassSet {
    use crate::build::classes::ClassDef;
    ClassSet::new(vec![ClassDef { clearance, ..ClassDef::unbounded("walker", ObstructionMode::Pathfinding) }]).unwrap()
}

/// With a class of clearance 0 and the obstacle growth moved into the object padding, a world
/// built from a polygon config is exactly the standalone grid build of that config (docs/pathfinding-rules.md).
#[test]
fn a_polygon_config_world_matches_the_seed_grid_build() {
    let mut config = PolygonConfig::parse_json(ROOMS).unwrap();
    config.set_area_available("door", true).unwrap();
    let seed_grid = config.build_grid().unwrap();
    let (mut desc, bounds) = WorldDesc::from_polygon_config(&config, one_class(Fixed::ZERO)).unwrap();
    desc.object_padding = config.agent_radius() + config.object_padding();
    let world = NavWorld::new(desc).unwrap();
    assert_eq!((bounds.min_x, bounds.min_z), (seed_grid.min_x, seed_grid.min_z));
    assert!(
        world.grid().blocked_masks() == seed_grid.grid.blocked_masks(),
        "world:\n{}",
        crate::render_ascii(&crate::PassMap::build(world.grid(), crate::test_support::CLASS), &crate::Layers::default())
    );
}

/// A land class and a water class of clearance 0 with 0 A.D.'s depth bounds (land wades up to
/// 2 m, ships need 1 m).
fn land_and_water() -> ClassSet {
    use crate::build::classes::ClassDef;
    ClassSet::new(vec![
        ClassDef {
            max_slope: Some(Fixed::ONE),
            max_water_depth: Some(Fixed::from_num(2)),
            ..ClassDef::unbounded("land", ObstructionMode::Pathfinding)
        },
        ClassDef { min_water_depth: Some(Fixed::ONE), ..ClassDef::unbounded("water", ObstructionMode::Pathfinding) },
    ])
    .unwrap()
}

/// A Moving AI map made a world from its painted navcells is exactly the grid the Moving AI
/// loader builds, class for class: every terrain character, a non-square map.
#[test]
fn a_moving_ai_map_world_is_the_loaders_grid() {
    let text = "type octile\nheight 5\nwidth 7\nmap\n.GS@WWW\n.T..WWO\n@..W.W.\nSSGWW..\n...T@WW\n";
    let map = crate::formats::movingai::parse_map(text).unwrap();
    let cells = map.cell_kinds();
    // File (x, y) is navcell (x, 4 − y): the top-left `.` is navcell (0, 4), the bottom-left (0, 0).
    assert_eq!(
        (cells[4 * 7], cells[4 * 7 + 3], cells[4 * 7 + 4], cells[3 * 7 + 1]),
        (CellKind::Ground, CellKind::Blocked, CellKind::Water, CellKind::Blocked)
    );
    let desc = WorldDesc::from_cells(7, 5, Fixed::ONE, cells, land_and_water()).unwrap();
    let world = NavWorld::new(desc).unwrap();
    assert_eq!(world.grid().blocked_masks(), map.grid.blocked_masks());
    assert_eq!((crate::formats::movingai::LAND.bit(), crate::formats::movingai::WATER.bit()), (1, 2), "the class order of the comparison");
}

/// A grid-text file made a world is the file's own walkable grid.
#[test]
fn a_grid_text_world_is_the_files_grid() {
    let text = "cellSize 0.4\ngridWidth 5\ngridDepth 3\n11101\n10111\n00110\n";
    let file = crate::formats::grid_text::parse_grid_text(text).unwrap();
    let desc = WorldDesc::from_cells(5, 3, file.cell_size, file.cell_kinds(), one_class(Fixed::ZERO)).unwrap();
    let world = NavWorld::new(desc).unwrap();
    assert_eq!(world.grid().blocked_masks(), file.grid.blocked_masks());
}

#[test]
fn painted_layers_of_the_wrong_size_are_refused() {
    let classes = one_class(Fixed::ZERO);
    let cells = |n: usize| vec![CellKind::Ground; n];
    assert_eq!(
        WorldDesc::from_cells(4, 3, Fixed::ONE, cells(11), classes.clone()).unwrap_err(),
        WorldError::CellCount { expected: 12, found: 11 }
    );
    assert!(matches!(
        WorldDesc::from_cells(0, 3, Fixed::ONE, cells(0), classes.clone()),
        Err(WorldError::Terrain(TerrainError::BadGridSpec { width: 0, height: 3, .. }))
    ));
    assert!(matches!(
        WorldDesc::from_cells(4, 3, Fixed::ZERO, cells(12), classes.clone()),
        Err(WorldError::Terrain(TerrainError::BadGridSpec { .. }))
    ));
    // Large navcells get one navcell per tile, and still cover the grid.
    let desc = WorldDesc::from_cells(3, 2, Fixed::from_num(100), cells(6), classes.clone()).unwrap();
    assert_eq!((desc.terrain.tiles_w(), desc.terrain.tiles_h(), desc.terrain.tile_size()), (3, 2, Fixed::from_num(100)));
    let desc = WorldDesc::from_cells(9, 5, Fixed::ONE, cells(45), classes.clone()).unwrap();
    assert_eq!((desc.terrain.tiles_w(), desc.terrain.tiles_h(), desc.terrain.tile_size()), (3, 2, Fixed::from_num(4)));
    let mut desc = desc;
    desc.cells.pop();
    assert_eq!(NavWorld::new(desc.clone()).unwrap_err(), WorldError::CellCount { expected: 45, found: 44 });
    desc.cells.clear();
    assert!(NavWorld::new(desc).is_ok(), "an empty layer is no layer");
    let (mut refworld, _) = small_world(1);
    refworld.cells = cells(5);
    assert_eq!(NavWorld::new(refworld).unwrap_err(), WorldError::CellCount { expected: 96 * 96, found: 5 });
}

/// Opening and closing a door area updates the grid and the hierarchy as a rebuild would.
#[test]
fn toggling_an_area_updates_like_a_rebuild() {
    let config = PolygonConfig::parse_json(ROOMS).unwrap();
    let (desc, _) = WorldDesc::from_polygon_config(&config, one_class(Fixed::from_num(1) / 2)).unwrap();
    let mut world = NavWorld::new(desc).unwrap();
    let class = PassClass::new(0).unwrap();
    let cell = |x: i32, z: i32| crate::Navcell::new(x as u16, z as u16);
    // Hall (2, 1) m → navcell (4, 6) after the shift; vault (18, 5) m.
    let (min_x, min_z) = (config.grid_bounds().unwrap().min_x, config.grid_bounds().unwrap().min_z);
    let at = |x: i32, z: i32| {
        let s = config.cell_size();
        cell(((Fixed::from_num(x) - min_x) / s).to_num::<i32>(), ((Fixed::from_num(z) - min_z) / s).to_num::<i32>())
    };
    let (hall, vault) = (at(2, 1), at(21, 5));
    let reach = |w: &NavWorld| w.class_nav(class).unwrap().hierarchy().is_reachable(hall, vault);
    assert!(!reach(&world), "the door starts closed");
    assert_eq!(world.set_area_available("door", true), Ok(true));
    assert_eq!(world.set_area_available("door", true), Ok(false));
    let dirty = world.update();
    assert_eq!(dirty.len(), 1);
    assert!(reach(&world), "the open door joins hall and vault");
    assert_matches_rebuild(&world);
    world.set_area_available("door", false).unwrap();
    world.add_obstruction(ObstructionId(5), Obstruction { square: square(8, 4, 2, 2, 10), flags: ObstructionFlags::STATIC }).unwrap();
    world.update();
    assert!(!reach(&world));
    assert_matches_rebuild(&world);
}
