//! The mirror and the queue on a small world: new units get entities, removed units' entities
//! go, a sealed queue holds the clock, and interpolation never passes a turn's end.

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::{TimePlugin, TimeUpdateStrategy};
use bevy_phalanx::{CommandQueue, LastTurn, PhalanxPlugin, Readiness, SimUnit, SimWorld, TurnClock, UnitEntities, pose_at};
use pathing::refworld::{RefWorldParams, generate};
use pathing::{Fixed, PassClass, Vec2, WorldPos};
use sim::{CommandKind, EntityId, Event, GoalSpec, PlayerId, Settings, World};

fn small_world() -> World {
    let (desc, obstructions) = generate(&RefWorldParams::scaled(16, 1));
    World::new(desc, obstructions, Settings { players: 2, ..Settings::default() }).expect("a world")
}

/// An app of the small world advancing one turn length (200 ms) every `frames` frames.
fn app(readiness: Readiness, frames: u32) -> App {
    let mut app = App::new();
    app.add_plugins((
        TaskPoolPlugin::default(),
        TimePlugin,
        PhalanxPlugin::new(small_world()).with_readiness(readiness).with_input_delay(1),
    ));
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(200) / frames));
    app
}

fn spawn(at: WorldPos, count: u16) -> CommandKind {
    CommandKind::Spawn { class: PassClass::of(0), at, count, radius: Fixed::ONE / 2, speed: Fixed::from_num(8), turn_rate: None }
}

/// Updates until the world has stepped `turn`.
fn run_to(app: &mut App, turn: u32) {
    for _ in 0..10_000 {
        if app.world().resource::<SimWorld>().turn() > turn {
            return;
        }
        app.update();
    }
    panic!("turn {turn} was never stepped");
}

fn spawned(app: &App) -> Vec<EntityId> {
    let report = app.world().resource::<LastTurn>().0.as_ref().expect("a turn was stepped");
    report.events.iter().filter_map(|e| if let Event::Spawned { unit } = e { Some(*unit) } else { None }).collect()
}

fn mirrored(app: &mut App) -> usize {
    let world = app.world_mut();
    world.query::<&SimUnit>().iter(world).count()
}

#[test]
fn new_units_get_entities_and_removed_units_lose_them() {
    let mut app = app(Readiness::Always, 3);
    let command = app.world_mut().resource_mut::<CommandQueue>().issue(PlayerId(1), spawn(WorldPos::from_int(30, 30), 3));
    assert_eq!(command.turn, 1);
    run_to(&mut app, 1);
    let first = spawned(&app);
    assert_eq!(first.len(), 3);
    assert_eq!(mirrored(&mut app), 3);
    let gone = first[1];
    let gone_entity = app.world().resource::<UnitEntities>().get(gone).expect("mirrored");

    let mut queue = app.world_mut().resource_mut::<CommandQueue>();
    let remove = queue.issue(PlayerId(1), CommandKind::Remove { units: vec![gone] });
    queue.issue(PlayerId(2), spawn(WorldPos::from_int(40, 40), 2));
    run_to(&mut app, remove.turn);
    let second = spawned(&app);
    assert_eq!(second.len(), 2);
    assert!(app.world().resource::<SimWorld>().unit(gone).is_none());
    assert_eq!(app.world().resource::<UnitEntities>().get(gone), None);
    assert!(app.world().get_entity(gone_entity).is_err(), "the removed unit's entity is despawned");
    assert_eq!(mirrored(&mut app), 4);
    for id in first.iter().filter(|&&id| id != gone).chain(&second) {
        let entity = app.world().resource::<UnitEntities>().get(*id).expect("mirrored");
        assert_eq!(app.world().get::<SimUnit>(entity).map(|m| m.id), Some(*id));
    }
    assert_eq!(
        app.world().get::<SimUnit>(app.world().resource::<UnitEntities>().get(second[0]).unwrap()).map(|m| m.owner),
        Some(PlayerId(2))
    );
}

#[test]
fn a_sealed_queue_holds_the_clock_at_the_turns_end_until_the_turn_is_sealed() {
    let mut app = app(Readiness::Sealed, 4);
    for _ in 0..20 {
        app.update();
    }
    assert_eq!(app.world().resource::<SimWorld>().turn(), 0, "nothing sealed, nothing stepped");
    let clock = app.world().resource::<TurnClock>();
    assert!(clock.waiting());
    assert!(clock.alpha() == 1.0);
    app.world_mut().resource_mut::<CommandQueue>().seal(2);
    app.update();
    assert!(app.world().resource::<SimWorld>().turn() >= 1);
    for _ in 0..20 {
        app.update();
    }
    assert_eq!(app.world().resource::<SimWorld>().turn(), 3, "turns 0 to 2 sealed");
}

#[test]
fn walking_units_are_drawn_between_their_turns_start_and_end_every_frame() {
    let mut app = app(Readiness::Always, 7);
    app.world_mut().resource_mut::<CommandQueue>().issue(PlayerId(1), spawn(WorldPos::from_int(20, 20), 5));
    run_to(&mut app, 1);
    let units = spawned(&app);
    let go = CommandKind::Move { units: units.clone(), goal: GoalSpec::Point(WorldPos::from_int(44, 40)), queue: false };
    app.world_mut().resource_mut::<CommandQueue>().issue(PlayerId(1), go);
    let mut moved = 0;
    for _ in 0..7 * 40 {
        app.update();
        let world = app.world_mut();
        let mut query = world.query::<(&SimUnit, &Transform)>();
        for (unit, transform) in query.iter(world) {
            let end = Vec2::new(unit.pos.x, unit.pos.z);
            let start = Vec2::new(unit.pos.x - unit.displacement.x, unit.pos.z - unit.displacement.z);
            let (x, y) = (transform.translation.x, transform.translation.y);
            let within = |v: f32, a: Fixed, b: Fixed| {
                let (a, b) = (a.to_num::<f32>(), b.to_num::<f32>());
                v >= a.min(b) - 1e-3 && v <= a.max(b) + 1e-3
            };
            assert!(within(x, start.x, end.x) && within(y, start.z, end.z), "{:?} at ({x}, {y})", unit.id);
            if unit.displacement != Vec2::new(Fixed::ZERO, Fixed::ZERO) {
                moved += 1;
            }
        }
    }
    assert!(moved > 0, "the units walked");
}

/// A small deterministic generator for the property below.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn fixed(&mut self, range: i64) -> Fixed {
        Fixed::from_bits((self.next() as i64 % (range << 16)) - (range << 15))
    }
}

#[test]
fn interpolation_never_passes_the_turns_end_at_any_alpha() {
    let mut rng = Lcg(35);
    for case in 0..2_000 {
        let pos = WorldPos::new(rng.fixed(2_000).abs(), rng.fixed(2_000).abs());
        let displacement = Vec2::new(rng.fixed(8), rng.fixed(8));
        let previous = Vec2::new(rng.fixed(2), rng.fixed(2));
        let facing = Vec2::new(rng.fixed(2), rng.fixed(2));
        let (end_x, end_z) = (pos.x.to_num::<f32>(), pos.z.to_num::<f32>());
        let (start_x, start_z) = (end_x - displacement.x.to_num::<f32>(), end_z - displacement.z.to_num::<f32>());
        let to_yaw = facing.z.to_num::<f32>().atan2(facing.x.to_num::<f32>());
        let mut previous_distance = f32::INFINITY;
        for step in -20..=140 {
            let alpha = step as f32 / 100.0;
            let pose = pose_at(pos, displacement, previous, facing, alpha);
            let slack = 1e-3 * (1.0 + end_x.abs().max(end_z.abs()));
            assert!(
                pose.x >= start_x.min(end_x) - slack
                    && pose.x <= start_x.max(end_x) + slack
                    && pose.z >= start_z.min(end_z) - slack
                    && pose.z <= start_z.max(end_z) + slack,
                "case {case}, alpha {alpha}: ({}, {}) outside ({start_x}, {start_z})..({end_x}, {end_z})",
                pose.x,
                pose.z
            );
            // Moving toward the end, never away from it: the distance left shrinks with alpha.
            let distance = (pose.x - end_x).hypot(pose.z - end_z);
            assert!(distance <= previous_distance + slack, "case {case}, alpha {alpha}: went back");
            previous_distance = distance;
            if alpha >= 1.0 {
                assert_eq!((pose.x, pose.z, pose.yaw), (end_x, end_z, to_yaw), "case {case}: at or past alpha 1, exactly the turn's end");
            }
        }
        let nan = pose_at(pos, displacement, previous, facing, f32::NAN);
        assert_eq!((nan.x, nan.z), (end_x, end_z), "a NaN alpha draws the turn's end");
    }
}
