//! A headless app plays a real scenario through the plugin: every turn's hash equals a plain
//! `World`'s, whatever the frame rate; units and entities stay one to one; interpolated
//! transforms never pass a turn's end.

mod common;

use bevy::prelude::*;
use bevy_phalanx::{SimUnit, SimWorld, TurnClock, UnitEntities};
use common::{Hashes, app, plain_hashes, scenario};

/// The scenario: two skirmish bots on a 256 m world, which train units (spawns from buildings
/// in later turns), give orders, gather and build; the test's own script removes one of player
/// 1's units every 25 turns (`common::removal`).
const SCENARIO: &str = "skirmish-ai.json";
/// Turns played.
const TURNS: u32 = 300;

/// What one frame-rate run saw besides its hashes.
#[derive(Default, Debug)]
struct Seen {
    /// Units that appeared after turn 0 (entities spawned by the mirror for them).
    later_spawns: usize,
    /// Units that went (entities the mirror despawned).
    removals: usize,
    frames: u32,
}

/// Plays [`SCENARIO`] for [`TURNS`] turns at `fps` frames a second, checking after every frame
/// that the entities mirror the units one to one and that every transform lies between the
/// start and the end of the last stepped turn; returns every turn's hash.
fn play(fps: u32) -> (Vec<[u8; 32]>, Seen) {
    let mut app = app(scenario(SCENARIO), fps);
    let mut seen = Seen::default();
    let mut previous_ids: Vec<sim::EntityId> = Vec::new();
    let mut last_turn = 0;
    while app.world().resource::<SimWorld>().turn() < TURNS {
        app.update();
        seen.frames += 1;
        assert!(seen.frames < TURNS * fps, "the app stopped stepping at turn {}", app.world().resource::<SimWorld>().turn());
        let world = app.world_mut();
        let sim_world = world.resource::<SimWorld>();
        let turn = sim_world.turn();
        let ids: Vec<sim::EntityId> = sim_world.units().map(|u| u.id).collect();
        let entities = world.resource::<UnitEntities>();
        assert_eq!(entities.len(), ids.len(), "turn {turn}: one entity per unit");
        for &id in &ids {
            let entity = entities.get(id).unwrap_or_else(|| panic!("turn {turn}: unit {id:?} has no entity"));
            let mirror = world.get::<SimUnit>(entity).unwrap_or_else(|| panic!("turn {turn}: entity of {id:?} was not spawned"));
            assert_eq!(mirror.id, id);
            assert_eq!(mirror.pos, world.resource::<SimWorld>().unit(id).expect("live").pos, "turn {turn}: the mirror is current");
        }
        let mut mirrors = world.query::<&SimUnit>();
        assert_eq!(mirrors.iter(world).count(), ids.len(), "turn {turn}: gone units' entities are despawned");
        if turn != last_turn {
            if last_turn > 0 {
                seen.later_spawns += ids.iter().filter(|id| previous_ids.binary_search(id).is_err()).count();
            }
            seen.removals += previous_ids.iter().filter(|id| ids.binary_search(id).is_err()).count();
            previous_ids = ids;
            last_turn = turn;
        }
        check_transforms(world);
    }
    let hashes = std::mem::take(&mut app.world_mut().resource_mut::<Hashes>().0);
    (hashes, seen)
}

/// Every mirrored unit's transform lies on its last turn's segment, from `pos - displacement` to
/// `pos`, and its alpha is in `[0, 1]`.
fn check_transforms(world: &mut World) {
    let alpha = world.resource::<TurnClock>().alpha();
    assert!((0.0..=1.0).contains(&alpha), "alpha {alpha}");
    let mut units = world.query::<(&SimUnit, &Transform)>();
    for (unit, transform) in units.iter(world) {
        let (end_x, end_z) = (unit.pos.x.to_num::<f32>(), unit.pos.z.to_num::<f32>());
        let (start_x, start_z) = (end_x - unit.displacement.x.to_num::<f32>(), end_z - unit.displacement.z.to_num::<f32>());
        let (x, z) = (transform.translation.x, transform.translation.y);
        assert!(
            between(x, start_x, end_x) && between(z, start_z, end_z),
            "{:?} drawn at ({x}, {z}), outside ({start_x}, {start_z})..({end_x}, {end_z})",
            unit.id
        );
    }
}

fn between(v: f32, a: f32, b: f32) -> bool {
    let slack = 1e-3 * (1.0 + a.abs().max(b.abs()));
    v >= a.min(b) - slack && v <= a.max(b) + slack
}

#[test]
fn the_apps_hashes_equal_a_plain_worlds_every_turn_at_30_and_144_frames_a_second() {
    let plain = plain_hashes(scenario(SCENARIO), TURNS);
    assert_eq!(plain.len(), TURNS as usize);
    let (at_30, seen_30) = play(30);
    let (at_144, seen_144) = play(144);
    for (turn, ((p, a), b)) in plain.iter().zip(&at_30).zip(&at_144).enumerate() {
        assert_eq!(p, a, "turn {turn}: the app at 30 frames a second differs from the plain world");
        assert_eq!(p, b, "turn {turn}: the app at 144 frames a second differs from the plain world");
    }
    assert_eq!(at_30.len(), plain.len());
    assert_eq!(at_144.len(), plain.len());
    // 300 turns of 200 ms are 60 s: 1800 and 8640 frames, and up to two more (Bevy's first
    // update sees no time, and 1/30 s and 1/144 s round down to whole nanoseconds).
    assert!((1800..=1802).contains(&seen_30.frames), "{seen_30:?}");
    assert!((8640..=8642).contains(&seen_144.frames), "{seen_144:?}");
    // The workload exercised the mirror both ways.
    assert!(seen_30.later_spawns > 0 && seen_30.removals > 0, "{seen_30:?}");
    assert_eq!((seen_30.later_spawns, seen_30.removals), (seen_144.later_spawns, seen_144.removals));
}
