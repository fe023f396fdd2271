//! Painted worlds: a Moving AI map (or any grid of ground, water and blocked navcells) as the
//! world of the simulation. The world's grid must be exactly the Moving AI loader's, and a painted
//! world must save, load and hash like any other.

use pathing::classes::{ClassDef, ClassSet, ObstructionMode};
use pathing::movingai::{self, MovingAiMap};
use pathing::passability::{NavWorld, WorldDesc};
use pathing::terrain::CellKind;
use pathing::{Fixed, WorldPos};
use phalanx_tests::{PAIRS, movingai_dir};
use sim::snapshot::SnapshotError;
use sim::{Command, CommandKind, Event, GoalSpec, Settings, World};

/// A land class and a water class of clearance 0, with 0 A.D.'s depth bounds (land wades up to
/// 2 m and climbs slopes below 1; ships need 1 m of water): the two classes of a Moving AI map.
fn land_and_water() -> ClassSet {
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

/// The world of a Moving AI map with 1 m navcells; the only caller of `from_cells` here.
#[track_caller]
fn map_world(map: &MovingAiMap, classes: ClassSet) -> WorldDesc {
    WorldDesc::from_cells(map.grid.width(), map.grid.height(), Fixed::ONE, map.cell_kinds(), classes).unwrap()
}

/// Checks that a map made a world has, class for class, the grid the Moving AI loader built.
#[track_caller]
fn check_same_grid(name: &str, map: &MovingAiMap) {
    assert_eq!((movingai::LAND.index(), movingai::WATER.index()), (0, 1), "the classes are compared by index");
    let world = NavWorld::new(map_world(map, land_and_water())).unwrap_or_else(|e| panic!("{name}: {e}"));
    let (ours, theirs) = (world.grid().blocked_masks(), map.grid.blocked_masks());
    if let Some(k) = (0..ours.len()).find(|&k| ours[k] != theirs[k]) {
        let w = map.grid.width() as usize;
        panic!("{name}: navcell ({}, {}) has mask {:#b} in the world, {:#b} in the map", k % w, k / w, ours[k], theirs[k]);
    }
}

/// Every map of the benchmark set, and a small one with every terrain character (water, swamp,
/// grass, trees, out of bounds), made a world from its painted navcells: exactly the loader's grid.
#[test]
fn moving_ai_maps_as_worlds_are_the_loaders_grids() {
    let every_char = "type octile\nheight 6\nwidth 9\nmap\n..GS@WWWW\n.T..WWOW.\n@..W.W..S\nSSGWW..TT\n...T@WWWG\nWWWW.....\n";
    let map = movingai::parse_map(every_char).unwrap();
    let kinds = map.cell_kinds();
    assert!([CellKind::Ground, CellKind::Water, CellKind::Blocked].iter().all(|k| kinds.contains(k)));
    check_same_grid("every character", &map);
    for name in PAIRS {
        let path = movingai_dir().join(format!("{name}.map"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let map = movingai::parse_map(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        check_same_grid(name, &map);
    }
}

/// A 64 × 64 painted world with the built-in classes: a river 24 navcells wide across the middle
/// (wide enough for the small ship, clearance 4), a ford across it, and rocks on both banks.
fn river_world() -> World {
    let (w, h) = (64u32, 64u32);
    let cells = (0..h)
        .flat_map(|j| (0..w).map(move |i| (i, j)))
        .map(|(i, j)| match (i, j) {
            (40..44, _) => CellKind::Ground,
            (_, 20..44) => CellKind::Water,
            _ if i % 16 == 8 && j % 12 < 4 => CellKind::Blocked,
            _ => CellKind::Ground,
        })
        .collect();
    let desc = WorldDesc::from_cells(w, h, Fixed::ONE, cells, ClassSet::zero_ad_defaults()).unwrap();
    World::new(desc, Vec::new(), Settings { seed: 5, ..Settings::default() }).unwrap()
}

fn at(x: i32, z: i32) -> WorldPos {
    WorldPos::from_int(x, z)
}

/// Land units spawn on the south bank and cross by the ford; small ships spawn in the river and
/// sail along it.
fn river_script(turn: u32, units: &[sim::EntityId]) -> Vec<Command> {
    let m = |n: i32| Fixed::from_num(n);
    let cmd = |seq: u32, kind: CommandKind| Command { turn, player: sim::PlayerId(1), seq, kind };
    match turn {
        0 => vec![
            cmd(
                0,
                CommandKind::Spawn {
                    class: pathing::PassClass::of(0),
                    at: at(12, 8),
                    count: 6,
                    radius: m(1) / 2,
                    speed: m(24),
                    turn_rate: None,
                },
            ),
            cmd(
                1,
                CommandKind::Spawn {
                    class: pathing::PassClass::of(3),
                    at: at(10, 32),
                    count: 2,
                    radius: m(2),
                    speed: m(6),
                    turn_rate: None,
                },
            ),
        ],
        1 => vec![
            cmd(0, CommandKind::Move { units: units[..6].to_vec(), goal: GoalSpec::Point(at(20, 56)), queue: false }),
            cmd(1, CommandKind::Move { units: units[6..].to_vec(), goal: GoalSpec::Point(at(30, 32)), queue: false }),
        ],
        _ => Vec::new(),
    }
}

/// Save at every turn, load, and continue: a painted world hashes and continues exactly as the
/// world that never stopped; the painted layer is in the snapshot and in the geometry digest.
#[test]
fn a_painted_world_survives_save_and_load_with_the_same_hashes() {
    const TURNS: u32 = 40;
    let spawned = |events: &[Event], units: &mut Vec<sim::EntityId>| {
        for e in events {
            if let Event::Spawned { unit } = e {
                units.push(*unit);
            }
        }
    };
    let mut reference = Vec::new();
    let mut w = river_world();
    let mut units = Vec::new();
    for turn in 0..TURNS {
        let report = w.step(&river_script(turn, &units));
        spawned(&report.events, &mut units);
        reference.push(report.hash);
    }
    assert_eq!(units.len(), 8, "every unit spawned");
    // The land units crossed the river by the ford; the ships sailed east along it, on water.
    let positions: Vec<(i32, i32)> =
        units.iter().filter_map(|&id| w.unit(id).map(|u| (u.pos.x.to_num::<i32>(), u.pos.z.to_num::<i32>()))).collect();
    assert_eq!(positions.len(), 8);
    assert!(positions[..6].iter().all(|&(_, z)| z >= 44), "a land unit is not on the north bank: {positions:?}");
    assert!(positions[6..].iter().all(|&(x, z)| x >= 24 && (20..44).contains(&z)), "a ship is not where it sailed: {positions:?}");

    let mut w = river_world();
    let mut units = Vec::new();
    for turn in 0..TURNS {
        let bytes = w.save();
        let mut loaded = World::load(&bytes).unwrap_or_else(|e| panic!("turn {turn}: {e}"));
        assert_eq!(loaded.nav().desc().cells, w.nav().desc().cells, "turn {turn}: the painted layer");
        assert_eq!(loaded.save(), bytes, "turn {turn}: save → load → save changed the bytes");
        assert_eq!(loaded.state_hash(), w.state_hash(), "turn {turn}: the loaded world hashes differently");
        let mut copy_units = units.clone();
        for ahead in turn..(turn + 3).min(TURNS) {
            let r = loaded.step(&river_script(ahead, &copy_units));
            spawned(&r.events, &mut copy_units);
            assert_eq!(r.hash, reference[ahead as usize], "loaded at turn {turn}, diverged at turn {ahead}");
        }
        let report = w.step(&river_script(turn, &units));
        spawned(&report.events, &mut units);
    }
}

/// Two worlds whose passability is the same but one is painted (all ground) and the other not:
/// they differ in the geometry component of the digest and nowhere else.
#[test]
fn the_geometry_digest_covers_the_painted_layer() {
    let painted = WorldDesc::from_cells(16, 12, Fixed::ONE, vec![CellKind::Ground; 16 * 12], land_and_water()).unwrap();
    let mut plain = painted.clone();
    plain.cells.clear();
    let a = World::new(painted, Vec::new(), Settings::default()).unwrap();
    let b = World::new(plain, Vec::new(), Settings::default()).unwrap();
    assert_eq!(a.nav().grid(), b.nav().grid(), "the same passability: the terrain is dry and flat, the paint all ground");
    assert_eq!(a.state_digest().differing_components(&b.state_digest()), vec!["geometry".to_string()]);
    assert_eq!(a.state_digest_from_scratch(), a.state_digest());
}

/// A snapshot's painted layer must be empty or one known byte per navcell.
#[test]
fn bad_painted_layers_in_snapshots_are_refused() {
    let w = river_world();
    let bytes = w.save();
    let reframe = |data: &sim::snapshot::SnapshotData| {
        let payload = sim::state_hash::encode(data);
        let mut out = bytes[..12].to_vec();
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&payload);
        out.extend_from_slice(blake3::hash(&payload).as_bytes());
        out
    };
    let data = sim::snapshot::unframe(&bytes).unwrap();
    assert_eq!(data.cells.len(), 64 * 64);
    assert_eq!(World::load(&reframe(&data)).unwrap().save(), bytes);
    let mut short = data.clone();
    short.cells.pop();
    let err = World::load(&reframe(&short)).err();
    assert!(matches!(&err, Some(SnapshotError::Invalid { message }) if message.contains("4095 bytes, expected 0 or 4096")), "{err:?}");
    let mut unknown = data.clone();
    unknown.cells[77] = 3;
    let err = World::load(&reframe(&unknown)).err();
    assert!(matches!(&err, Some(SnapshotError::Invalid { message }) if message.contains("byte 3 at navcell 77")), "{err:?}");
    let mut unpainted = data;
    unpainted.cells.clear();
    let loaded = World::load(&reframe(&unpainted)).unwrap();
    assert!(loaded.nav().desc().cells.is_empty(), "an empty layer loads as an unpainted world");
}
