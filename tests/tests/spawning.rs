//! Spawning (docs/motion-rules.md, "Spawning"): units placed round a building's footprint in the
//! spawn-ring order, orders that wait for room and try again every turn, and big spawns at a point
//! that place as many units as fit.

use pathing::placement::{SPAWN_RINGS, SpawnCursor, UnitShape};
use pathing::{Fixed, ObstructionId, PassClass, WorldPos};
use sim::test_support::world_from;
use sim::{Command, CommandKind, EntityId, Event, PlayerId, RejectReason, SpawnOrder, SquareSpec, TurnReport, World};

fn m(n: i32) -> Fixed {
    Fixed::from_num(n)
}

fn cmd(turn: u32, player: u8, seq: u32, kind: CommandKind) -> Command {
    Command { turn, player: PlayerId(player), seq, kind }
}

fn half() -> Fixed {
    Fixed::ONE / 2
}

/// An open `size` × `size` m world (1 m navcells) with no obstructions.
fn open(size: usize) -> World {
    let row = ".".repeat(size);
    let rows: Vec<&str> = (0..size).map(|_| row.as_str()).collect();
    world_from(&rows, 1)
}

/// Places a 4 × 4 m building centred on (16, 16) in an open 32 × 32 m world (turn 0): it gets id 1.
fn with_building(threads: usize) -> World {
    let mut w = open(32);
    w.set_threads(threads).unwrap();
    let square = SquareSpec { x: m(16), z: m(16), w: m(4), h: m(4), degrees: Fixed::ZERO };
    let r = w.step(&[cmd(0, 0, 0, CommandKind::PlaceObstruction { square, flags: 3 })]);
    assert_eq!(r.events, vec![Event::ObstructionPlaced { id: ObstructionId(1) }]);
    w
}

fn from_building(count: u16) -> CommandKind {
    CommandKind::SpawnFromBuilding {
        building: ObstructionId(1),
        class: PassClass::of(0),
        count,
        radius: half(),
        speed: m(8),
        turn_rate: None,
    }
}

/// The positions the placement rules give, one unit after another, for `count` units of
/// half-size 0.5 round the world's obstruction 1 among its units (the oracle: pathing's ring
/// search, which its own tests pin, then the simulation's one-raw-unit move off navcell borders).
fn oracle_positions(w: &World, count: usize) -> Vec<WorldPos> {
    let class = PassClass::new(0).unwrap();
    let footprint = w.nav().obstructions()[&ObstructionId(1)].square;
    let mut shapes: Vec<UnitShape> = w.units().map(|u| UnitShape { pos: u.pos, radius: u.radius }).collect();
    let mut cursor = SpawnCursor::default();
    let mut out = Vec::new();
    while out.len() < count {
        let Some(p) = w.nav().next_spawn_point(class, &footprint, half(), &shapes, SPAWN_RINGS, &mut cursor) else { break };
        let p = sim::off_grid_lines(p, w.nav().grid().cell_size());
        shapes.push(UnitShape { pos: p, radius: half() });
        out.push(p);
    }
    out
}

fn spawned(r: &TurnReport) -> Vec<EntityId> {
    r.events
        .iter()
        .filter_map(|e| match e {
            Event::Spawned { unit } | Event::SpawnedFromQueue { unit, .. } => Some(*unit),
            _ => None,
        })
        .collect()
}

#[test]
fn a_building_spawn_puts_each_unit_on_the_first_free_spawn_point_from_the_front_middle() {
    let mut w = with_building(1);
    let want = oracle_positions(&w, 5);
    let r = w.step(&[cmd(1, 1, 0, from_building(5))]);
    let ids = spawned(&r);
    assert_eq!(ids.len(), 5, "{:?}", r.events);
    let got: Vec<WorldPos> = ids.iter().map(|&id| w.unit(id).unwrap().pos).collect();
    assert_eq!(got, want);
    // Ring 0 runs max(r, R) + ε = 1.125 m outside the footprint (R = 1 m, the clearance the
    // building's rasterization blocks for the default class), so the first unit stands at the
    // front middle, (16, 12.875), moved one raw unit off the navcell line x = 16.
    let front = WorldPos::new(m(16), m(12) + Fixed::from_bits(7 << 13));
    assert!((got[0].x - front.x).abs() <= Fixed::from_bits(1) && got[0].z == front.z, "{:?}", got[0]);
    assert!(w.spawn_orders().is_empty());
    assert_eq!(r.digest, w.state_digest_from_scratch());
}

/// Fills the perimeter of the building (eight rings) and more: returns the world, the report and
/// how many fitted.
fn full_perimeter(threads: usize) -> (World, TurnReport, usize) {
    let mut w = with_building(threads);
    let fit = oracle_positions(&w, 4096).len();
    let r = w.step(&[cmd(1, 1, 0, from_building(fit as u16 + 7))]);
    (w, r, fit)
}

#[test]
fn a_full_perimeter_reports_the_waiting_units_and_keeps_the_order() {
    let (mut w, r, fit) = full_perimeter(1);
    assert_eq!(spawned(&r).len(), fit);
    assert!(fit > 100, "eight rings round a 4 m building hold {fit} units");
    assert_eq!(
        r.events.last(),
        Some(&Event::SpawnWaiting { command: (1, PlayerId(1), 0), order: 0, building: ObstructionId(1), waiting: 7 })
    );
    let order = SpawnOrder {
        id: 0,
        player: PlayerId(1),
        building: ObstructionId(1),
        class: PassClass::of(0),
        remaining: 7,
        radius: half(),
        speed: m(8),
        turn_rate: sim::MotionSettings::default().turn_rate,
    };
    assert_eq!(w.spawn_orders(), std::slice::from_ref(&order));
    // Nothing frees up: the order waits, quietly, turn after turn.
    for turn in 2..6 {
        let r = w.step(&[]);
        assert!(r.events.is_empty(), "turn {turn}: {:?}", r.events);
        assert_eq!(w.spawn_orders(), std::slice::from_ref(&order));
    }
}

#[test]
fn a_waiting_order_takes_a_freed_spot_in_the_turn_it_frees() {
    let (mut w, r, _) = full_perimeter(1);
    let ids = spawned(&r);
    // Removing the first unit frees the front middle; the order's retry (after the turn's
    // commands) puts its next unit exactly there, and the rest keep waiting.
    let freed = w.unit(ids[0]).unwrap().pos;
    let r = w.step(&[cmd(2, 1, 0, CommandKind::Remove { units: vec![ids[0]] })]);
    let new = spawned(&r);
    assert_eq!(r.events, vec![Event::SpawnedFromQueue { order: 0, unit: new[0] }]);
    assert_eq!(w.unit(new[0]).unwrap().pos, freed);
    assert_eq!(w.spawn_orders()[0].remaining, 6);
    assert_eq!(r.digest, w.state_digest_from_scratch());
    // Removing seven more units lets the order finish (six of them) and drop out of the queue.
    let r = w.step(&[cmd(3, 1, 0, CommandKind::Remove { units: ids[1..8].to_vec() })]);
    assert_eq!(spawned(&r).len(), 6);
    assert!(w.spawn_orders().is_empty());
    let r = w.step(&[]);
    assert!(r.events.is_empty());
}

#[test]
fn waiting_orders_are_cancelled_by_their_player_or_with_their_building() {
    let (mut w, _, _) = full_perimeter(1);
    // Player 2 has no order there; player 1 cancels its own.
    let r = w.step(&[
        cmd(2, 2, 0, CommandKind::CancelSpawns { building: ObstructionId(1) }),
        cmd(2, 1, 0, CommandKind::CancelSpawns { building: ObstructionId(1) }),
    ]);
    assert_eq!(
        r.events,
        vec![
            Event::SpawnCancelled { order: 0, remaining: 7 },
            Event::Rejected { command: (2, PlayerId(2), 0), reason: RejectReason::NoSpawnOrder(ObstructionId(1)) },
        ]
    );
    assert!(w.spawn_orders().is_empty());
    // A new order waits; removing its building cancels it at the next retry (same turn).
    let r = w.step(&[cmd(3, 1, 0, from_building(3))]);
    assert!(matches!(r.events.last(), Some(Event::SpawnWaiting { order: 1, waiting: 3, .. })), "{:?}", r.events);
    let r = w.step(&[cmd(4, 0, 0, CommandKind::RemoveObstruction { id: ObstructionId(1) })]);
    assert_eq!(r.events, vec![Event::SpawnCancelled { order: 1, remaining: 3 }]);
    assert!(w.spawn_orders().is_empty());
}

#[test]
fn a_player_may_have_at_most_sixteen_waiting_spawn_orders() {
    let (mut w, _, _) = full_perimeter(1);
    let commands: Vec<Command> = (1..=16).map(|seq| cmd(2, 1, seq, from_building(1))).collect();
    let r = w.step(&commands);
    assert_eq!(w.spawn_orders().len(), 16);
    let reason = RejectReason::TooManySpawnOrders { waiting: 16, max: 16 };
    assert_eq!(r.events.last(), Some(&Event::Rejected { command: (2, PlayerId(1), 16), reason }));
    // Another player's orders are counted apart.
    let r = w.step(&[cmd(3, 2, 0, from_building(1))]);
    assert!(matches!(r.events[..], [Event::SpawnWaiting { order: 16, .. }]), "{:?}", r.events);
}

#[test]
fn building_spawns_are_refused_for_a_missing_building_or_out_of_range_values() {
    let mut w = with_building(1);
    let cases = [
        (
            CommandKind::SpawnFromBuilding {
                building: ObstructionId(9),
                class: PassClass::of(0),
                count: 1,
                radius: half(),
                speed: m(8),
                turn_rate: None,
            },
            "no obstruction",
        ),
        (
            CommandKind::SpawnFromBuilding {
                building: ObstructionId(1),
                class: PassClass::of(0),
                count: 0,
                radius: half(),
                speed: m(8),
                turn_rate: None,
            },
            "count 0",
        ),
        (
            CommandKind::SpawnFromBuilding {
                building: ObstructionId(1),
                class: PassClass::of(0),
                count: 4097,
                radius: half(),
                speed: m(8),
                turn_rate: None,
            },
            "count 4097",
        ),
        (
            CommandKind::SpawnFromBuilding {
                building: ObstructionId(1),
                class: PassClass::of(4),
                count: 1,
                radius: half(),
                speed: m(8),
                turn_rate: None,
            },
            "a foundation class",
        ),
        (CommandKind::CancelSpawns { building: ObstructionId(1) }, "no order"),
    ];
    for (seq, (kind, why)) in cases.into_iter().enumerate() {
        let r = w.step(&[cmd(w.turn(), 1, seq as u32, kind)]);
        assert!(matches!(r.events[..], [Event::Rejected { .. }]), "{why}: {:?}", r.events);
    }
    assert_eq!(w.units().count(), 0);
}

/// The full-perimeter game, a unit freed every third turn, run for 12 turns; the hashes per turn.
fn freeing_game(threads: usize, save_at: Option<u32>) -> Vec<[u8; 32]> {
    let (mut w, r, _) = full_perimeter(threads);
    let ids = spawned(&r);
    let mut hashes = vec![r.hash];
    for k in 0..12u32 {
        if save_at == Some(k) {
            w = World::load(&w.save()).unwrap();
            w.set_threads(threads).unwrap();
        }
        let turn = w.turn();
        let commands = if k % 3 == 0 { vec![cmd(turn, 1, 0, CommandKind::Remove { units: vec![ids[k as usize]] })] } else { Vec::new() };
        let r = w.step(&commands);
        assert_eq!(r.digest, w.state_digest_from_scratch(), "turn {turn}");
        hashes.push(r.hash);
    }
    assert_eq!(w.spawn_orders()[0].remaining, 3);
    hashes
}

#[test]
fn building_spawns_are_deterministic_across_runs_threads_and_save_load() {
    let one = freeing_game(1, None);
    assert_eq!(one, freeing_game(1, None));
    assert_eq!(one, freeing_game(2, None));
    assert_eq!(one, freeing_game(1, Some(2)));
}

#[test]
fn a_waiting_order_is_saved_loaded_and_hashed() {
    let (w, _, _) = full_perimeter(1);
    let bytes = w.save();
    let loaded = World::load(&bytes).unwrap();
    assert_eq!(loaded.spawn_orders(), w.spawn_orders());
    assert_eq!(loaded.state_hash(), w.state_hash());
    // Changing the order (one unit fewer) changes the hash; a broken order is refused on load.
    let data = sim::snapshot::unframe(&bytes).unwrap();
    let reframe = |d: &sim::snapshot::SnapshotData| {
        let payload = sim::state_hash::encode(d);
        let mut out = bytes[..12].to_vec();
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&payload);
        out.extend_from_slice(blake3::hash(&payload).as_bytes());
        out
    };
    let mut fewer = data.clone();
    fewer.spawn_orders[0].remaining = 6;
    let changed = World::load(&reframe(&fewer)).unwrap();
    assert_ne!(changed.state_hash(), w.state_hash());
    for (what, bad) in [
        ("no units left", SpawnOrder { remaining: 0, ..data.spawn_orders[0].clone() }),
        ("id not below the next id", SpawnOrder { id: 5, ..data.spawn_orders[0].clone() }),
        ("not a player", SpawnOrder { player: PlayerId(9), ..data.spawn_orders[0].clone() }),
        ("radius too large", SpawnOrder { radius: m(9), ..data.spawn_orders[0].clone() }),
    ] {
        let mut d = data.clone();
        d.spawn_orders[0] = bad;
        assert!(matches!(World::load(&reframe(&d)), Err(sim::snapshot::SnapshotError::Invalid { .. })), "{what}");
    }
}

#[test]
fn a_spawn_of_250_at_one_point_places_all_of_them_apart() {
    let mut w = open(64);
    let r = w.step(&[cmd(
        0,
        1,
        0,
        CommandKind::Spawn {
            class: PassClass::of(0),
            at: WorldPos::from_int(32, 32),
            count: 250,
            radius: half(),
            speed: m(8),
            turn_rate: None,
        },
    )]);
    assert_eq!(spawned(&r).len(), 250, "{:?}", &r.events[r.events.len().saturating_sub(2)..]);
    assert!(!r.events.iter().any(|e| matches!(e, Event::SpawnShort { .. } | Event::Rejected { .. })));
    let units: Vec<_> = w.units().collect();
    let reach = (half() * 2).to_bits() + pathing::placement::SPAWN_EPSILON.to_bits();
    for (k, a) in units.iter().enumerate() {
        for b in &units[k + 1..] {
            let (dx, dz) = ((a.pos.x.to_bits() - b.pos.x.to_bits()).abs(), (a.pos.z.to_bits() - b.pos.z.to_bits()).abs());
            assert!(dx > reach || dz > reach, "{:?} and {:?} overlap", a.pos, b.pos);
        }
    }
}

#[test]
fn a_spawn_of_4096_at_one_point_places_all_of_them() {
    let mut w = open(128);
    let r = w.step(&[cmd(
        0,
        1,
        0,
        CommandKind::Spawn {
            class: PassClass::of(0),
            at: WorldPos::from_int(64, 64),
            count: 4096,
            radius: half(),
            speed: m(8),
            turn_rate: None,
        },
    )]);
    assert_eq!(spawned(&r).len(), 4096);
    assert_eq!(r.digest, w.state_digest_from_scratch());
}

#[test]
fn a_point_spawn_places_what_fits_and_counts_the_rest() {
    // A room in solid rock: clearance 1 m leaves its middle 3 × 3 navcells (11..14 m) passable.
    let mut rows = vec!["#".repeat(20); 20];
    for row in &mut rows[5..10] {
        *row = format!("{}.....{}", "#".repeat(10), "#".repeat(5));
    }
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let mut w = world_from(&rows, 1);
    let class = PassClass::new(0).unwrap();
    for j in 9..16u16 {
        for i in 9..16u16 {
            let inside = (11..14).contains(&i) && (11..14).contains(&j);
            assert_eq!(w.nav().grid().is_passable(pathing::Navcell::new(i, j), class), inside, "navcell ({i}, {j})");
        }
    }
    // Ring 0 (0.625 m out) has four points: the south one fits, its two neighbours touch it, the
    // north one is 1.25 m > 1.125 m from it; every later ring is at least 1.875 m out, in the rock.
    let at = WorldPos::new(m(12) + half(), m(12) + half());
    let r =
        w.step(&[cmd(0, 1, 0, CommandKind::Spawn { class: PassClass::of(0), at, count: 5, radius: half(), speed: m(8), turn_rate: None })]);
    let ids = spawned(&r);
    let pos: Vec<WorldPos> = ids.iter().map(|&id| w.unit(id).unwrap().pos).collect();
    let q = Fixed::from_bits(5 << 13);
    assert_eq!(pos, vec![WorldPos::new(at.x, at.z - q), WorldPos::new(at.x, at.z + q)]);
    assert_eq!(r.events.last(), Some(&Event::SpawnShort { command: (0, PlayerId(1), 0), missing: 3 }));
    // With the room full, the next spawn there is refused whole.
    let r =
        w.step(&[cmd(1, 1, 0, CommandKind::Spawn { class: PassClass::of(0), at, count: 5, radius: half(), speed: m(8), turn_rate: None })]);
    assert_eq!(r.events, vec![Event::Rejected { command: (1, PlayerId(1), 0), reason: RejectReason::NoRoom }]);
}

/// A flat 128 × 128 m world (1 m navcells, the built-in classes): dry ground 12 m up, or (for
/// `wet`) the sea floor 5 m under water, so that land and ship classes both have somewhere to be.
fn terrain_world(wet: bool) -> World {
    use pathing::classes::ClassSet;
    use pathing::passability::WorldDesc;
    use pathing::terrain::{GridSpec, Terrain};
    let (height, water) = if wet { (Fixed::ZERO, m(5)) } else { (m(12), Fixed::ZERO) };
    let terrain = Terrain::flat(32, 32, m(4), height, water).unwrap();
    let desc = WorldDesc::new(GridSpec { width: 128, height: 128, cell_size: Fixed::ONE }, ClassSet::zero_ad_defaults(), terrain);
    World::new(desc, Vec::new(), sim::Settings { seed: 9, players: 2, ..sim::Settings::default() }).unwrap()
}

/// Every built-in class that is meant for units holds them: units of the largest radius the
/// class allows and of a small one are spawned at a point and from a building with the commands a
/// game uses, and walk 30 m to a point (docs/passability-classes.md, "The built-in classes";
/// docs/decisions.md, "A unit's radius may not exceed its class's clearance"). The two building
/// classes, of clearance 0, hold no unit.
#[test]
fn units_of_every_built_in_unit_class_spawn_and_walk() {
    let classes = pathing::classes::ClassSet::zero_ad_defaults();
    let mut checked = Vec::new();
    for (class, def) in classes.iter() {
        let clearance = def.whole_clearance(Fixed::ONE);
        // Ships live on water, the land classes (and `unrestricted`, which goes anywhere) on land.
        let worlds: &[bool] = match def.name.as_str() {
            "ship" | "ship-small" => &[true],
            "unrestricted" => &[false, true],
            _ => &[false],
        };
        for &wet in worlds {
            let mut w = terrain_world(wet);
            let square = SquareSpec { x: m(64), z: m(64), w: m(8), h: m(8), degrees: m(20) };
            let r = w.step(&[cmd(0, 0, 0, CommandKind::PlaceObstruction { square, flags: 3 })]);
            assert_eq!(r.events, vec![Event::ObstructionPlaced { id: ObstructionId(1) }]);
            if clearance == Fixed::ZERO {
                let spawn =
                    CommandKind::Spawn { class, at: WorldPos::from_int(30, 30), count: 1, radius: half(), speed: m(8), turn_rate: None };
                let r = w.step(&[cmd(1, 1, 0, spawn)]);
                let refused = Event::Rejected {
                    command: (1, PlayerId(1), 0),
                    // The world keeps no navigation grid for the building classes.
                    reason: RejectReason::BadClass,
                };
                assert_eq!(r.events, vec![refused], "{}", def.name);
                checked.push(def.name.clone());
                continue;
            }
            // The widest unit the spawn limits and the class allow, and a half-metre one, each
            // alone in a fresh world, from a point spawn and from a building spawn.
            let wide = clearance.min(m(8));
            for radius in [wide, half()] {
                for from_building in [false, true] {
                    let mut w = terrain_world(wet);
                    w.step(&[cmd(0, 0, 0, CommandKind::PlaceObstruction { square, flags: 3 })]);
                    let spawn = if from_building {
                        CommandKind::SpawnFromBuilding { building: ObstructionId(1), class, count: 1, radius, speed: m(8), turn_rate: None }
                    } else {
                        CommandKind::Spawn { class, at: WorldPos::from_int(30, 80), count: 1, radius, speed: m(8), turn_rate: None }
                    };
                    let r = w.step(&[cmd(1, 1, 0, spawn)]);
                    let ids = spawned(&r);
                    assert_eq!(ids.len(), 1, "{} (wet {wet}): {:?}", def.name, r.events);
                    let id = ids[0];
                    // 30 m away from the building, south-east.
                    let from = w.unit(id).unwrap().pos;
                    let dest = WorldPos::new(from.x + m(18), from.z - m(24));
                    let mv = CommandKind::Move { units: vec![id], goal: sim::GoalSpec::Point(dest), queue: false };
                    let mut arrived = false;
                    for t in 0..80u32 {
                        let commands = if t == 0 { vec![cmd(2, 1, 0, mv.clone())] } else { Vec::new() };
                        let r = w.step(&commands);
                        assert!(!r.events.iter().any(|e| matches!(e, Event::Rejected { .. })), "{}: {:?}", def.name, r.events);
                        arrived |= r.events.contains(&Event::Arrived { unit: id });
                        if arrived {
                            break;
                        }
                    }
                    let at = w.unit(id).unwrap().pos;
                    let off = (at.x - dest.x).abs().max((at.z - dest.z).abs());
                    assert!(
                        arrived && off <= m(1),
                        "{} (wet {wet}, from building {from_building}) unit of radius {radius} ended at {at:?}, {off} from {dest:?}",
                        def.name
                    );
                }
            }
            checked.push(def.name.clone());
        }
    }
    assert_eq!(checked.len(), 9, "{checked:?}");
}

/// Trained units appear at the front middle of the building, then alternately anticlockwise and
/// clockwise along the front side every 2r + 2ε, on the first ring, which runs max(r, R) + ε from
/// the footprint (docs/motion-rules.md, "Placement" and "Spawning"), for several building sizes
/// and angles, unit radii and classes. The oracle is the rule itself: the expected positions are
/// computed here from the building's square, with `R` from the narrow-obstruction formula
/// (docs/pathfinding-rules.md), and compared with the units' positions a few raw units apart.
#[test]
fn trained_units_appear_at_the_front_middle_then_alternate_outward() {
    let mut failures = Vec::new();
    // (class, clearance, radius)
    let kinds = [(0u8, 1, half()), (0, 1, m(1)), (1, 3, m(2)), (1, 3, m(3))];
    for (w_m, h_m) in [(4, 4), (8, 6), (12, 3), (2, 2), (16, 10)] {
        for degrees in [0, 20, 45, 90, 157] {
            for &(class, clearance, radius) in &kinds {
                let mut w = open(96);
                let square = SquareSpec { x: m(48) + Fixed::from_bits(9 << 12), z: m(47), w: m(w_m), h: m(h_m), degrees: m(degrees) };
                w.step(&[cmd(0, 0, 0, CommandKind::PlaceObstruction { square, flags: 3 })]);
                let sq = w.nav().obstructions()[&ObstructionId(1)].square;
                let raw = |v: Fixed| i128::from(v.to_bits());
                // R = max(c, (3s − min(w, h)) / 2), rounded up to a raw unit; the ring at R + ε.
                let narrow = (3 * raw(Fixed::ONE) - 2 * raw(sq.hw()).min(raw(sq.hh())) + 1) / 2;
                let big_r = raw(m(clearance)).max(narrow);
                let eps = raw(Fixed::from_bits(1 << 13));
                let d0 = big_r.max(raw(radius)) + eps;
                let step = (2 * raw(radius) + 2 * eps).max(raw(Fixed::ONE) / 2);
                // The candidates of the front side: 0, +step, −step, +2 step, ... while within the
                // side (|a| ≤ hw, so every one of them is on the straight part of the ring).
                let mut offsets = vec![0i128];
                for k in 1.. {
                    let a = k * step;
                    if a > raw(sq.hw()) {
                        break;
                    }
                    offsets.push(a);
                    offsets.push(-a);
                }
                // The first valid candidate wins: on open ground beyond R every candidate's
                // navcell is passable, so a candidate is valid unless it meets an earlier unit's
                // axis-aligned square grown by r + ε (along a turned side, every other one does).
                let (c, u, v) = (sq.center(), sq.u(), sq.v());
                let b = -(raw(sq.hh()) + d0);
                let at = |a: i128| {
                    let x = (raw(c.x) << 16) + a * raw(u.x) + b * raw(v.x);
                    let z = (raw(c.z) << 16) + a * raw(u.z) + b * raw(v.z);
                    ((x + (1 << 15)) >> 16, (z + (1 << 15)) >> 16)
                };
                let reach = 2 * raw(radius) + eps;
                let mut want: Vec<(i128, i128)> = Vec::new();
                for &a in &offsets {
                    let (x, z) = at(a);
                    if want.iter().all(|&(px, pz)| (px - x).abs() > reach || (pz - z).abs() > reach) && want.len() < 9 {
                        want.push((x, z));
                    }
                }
                let count = want.len();
                let kind = CommandKind::SpawnFromBuilding {
                    building: ObstructionId(1),
                    class: PassClass::of(class),
                    count: count as u16,
                    radius,
                    speed: m(8),
                    turn_rate: None,
                };
                let r = w.step(&[cmd(1, 1, 0, kind)]);
                let got: Vec<WorldPos> = spawned(&r).iter().map(|&id| w.unit(id).unwrap().pos).collect();
                let close =
                    got.len() == count && got.iter().zip(&want).all(|(p, &(x, z))| (raw(p.x) - x).abs() <= 3 && (raw(p.z) - z).abs() <= 3);
                if !close {
                    let want: Vec<WorldPos> =
                        want.iter().map(|&(x, z)| WorldPos::new(Fixed::from_bits(x as i64), Fixed::from_bits(z as i64))).collect();
                    failures.push(format!("{w_m} × {h_m} m at {degrees}°, class {class}, radius {radius}: got {got:?}, want {want:?}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} cases:\n{}", failures.len(), failures.join("\n"));
}
