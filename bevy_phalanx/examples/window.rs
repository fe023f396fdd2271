//! The demo's world in a window: you play player 1 against the demo's three bots.
//!
//! `cargo run --release -p bevy_phalanx --features window --example window`
//!
//! Left click selects your unit under the cursor, a left drag selects your units in the box, a
//! right click orders the selection to walk there (a core `Move`, stamped by the
//! `CommandQueue`). Units are gizmo circles coloured by player, the selection ringed in white,
//! buildings and trees drawn as their obstruction squares. `--screenshot FILE` saves a
//! screenshot at frame 200 (or `--at FRAME`) and exits.
//!
//! The world steps at the turn rate (200 ms) whatever the frame rate; a click becomes fixed-point
//! coordinates once, in the command this peer issues.

use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, save_to_disk};
use bevy::window::PrimaryWindow;
use bevy_phalanx::{CommandQueue, LastTurn, MapPlane, MapProjection, PhalanxPlugin, PhalanxSet, PhalanxTurn, SimUnit, SimWorld};
use pathing::{Fixed, WorldPos};
use replay::scenario::{Scenario, ScriptRunner};
use sim::{CommandKind, EntityId, GoalSpec, PlayerId};

/// The player the person at the window plays.
const ME: PlayerId = PlayerId(1);

/// The demo's script and the bots of the other players (`Send` only, so a non-send resource).
struct Script(ScriptRunner<'static>);

/// The person's selection and the drag in progress.
#[derive(Resource, Default)]
struct Selection {
    units: Vec<EntityId>,
    /// Where a left drag started, in map metres.
    drag_from: Option<Vec2>,
}

/// Where to write the screenshot, and the frame to take it at.
#[derive(Resource)]
struct ScreenshotAt(String, u32);

/// The map's side, in metres (for the camera).
#[derive(Resource)]
struct MapSize(Vec2);

fn main() {
    let scenario: &'static Scenario = Box::leak(Box::new(phalanx_cli::demo::scenario().expect("the demo scenario parses")));
    let mut world = scenario.world().expect("the demo makes a world");
    world.set_threads(2).expect("two path threads");
    let grid = world.nav().grid();
    let cell = grid.cell_size().to_num::<f32>();
    let size = Vec2::new(grid.width() as f32 * cell, grid.height() as f32 * cell);
    let projection = MapProjection { plane: MapPlane::Xy, scale: 1.0, offset: -size / 2.0 };

    let args: Vec<String> = std::env::args().collect();
    let screenshot = args.iter().position(|a| a == "--screenshot").and_then(|i| args.get(i + 1)).cloned();
    let at_frame = args.iter().position(|a| a == "--at").and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(200);

    let mut app = App::new();
    app.add_plugins(DefaultPlugins.set(WindowPlugin {
        primary_window: Some(Window { title: "Phalanx demo (bevy_phalanx)".into(), resolution: (1024, 800).into(), ..default() }),
        ..default()
    }))
    .add_plugins(PhalanxPlugin::new(world).with_projection(projection).with_input_delay(1))
    .insert_non_send(Script(scenario.script().without_bots_for(|p| p == ME)))
    .insert_resource(MapSize(size))
    .init_resource::<Selection>()
    .insert_resource(ClearColor(Color::srgb(0.12, 0.16, 0.1)))
    .add_systems(Startup, camera)
    .add_systems(PhalanxTurn, script_commands.in_set(PhalanxSet::Commands))
    .add_systems(PhalanxTurn, script_observe.in_set(PhalanxSet::Observe))
    .add_systems(Update, (select_and_order, draw).chain());
    if let Some(path) = screenshot {
        app.insert_resource(ScreenshotAt(path, at_frame)).add_systems(Update, take_screenshot);
    }
    app.run();
}

fn camera(mut commands: Commands, size: Res<MapSize>) {
    // The whole map in an 800-pixel-high window.
    let scale = size.0.y / 760.0;
    commands.spawn((Camera2d, Transform::from_scale(Vec3::new(scale, scale, 1.0))));
}

fn script_commands(mut script: NonSendMut<Script>, world: Res<SimWorld>, mut queue: ResMut<CommandQueue>) {
    for command in script.0.turn_commands(&world) {
        queue.push(command).expect("the script stamps the turn about to be stepped");
    }
}

fn script_observe(mut script: NonSendMut<Script>, last: Res<LastTurn>) {
    if let Some(report) = &last.0 {
        script.0.observe(report);
    }
}

/// The cursor in map metres (east, north), if it is over the window.
fn cursor_on_map(window: &Window, camera: (&Camera, &GlobalTransform), projection: &MapProjection) -> Option<Vec2> {
    let screen = window.cursor_position()?;
    let world = camera.0.viewport_to_world_2d(camera.1, screen).ok()?;
    Some((world - projection.offset) / projection.scale)
}

fn select_and_order(
    buttons: Res<ButtonInput<MouseButton>>,
    windows: Query<&Window, With<PrimaryWindow>>,
    cameras: Query<(&Camera, &GlobalTransform)>,
    projection: Res<MapProjection>,
    units: Query<&SimUnit>,
    mut selection: ResMut<Selection>,
    mut queue: ResMut<CommandQueue>,
) {
    let (Ok(window), Ok(camera)) = (windows.single(), cameras.single()) else { return };
    let Some(at) = cursor_on_map(window, camera, &projection) else { return };
    if buttons.just_pressed(MouseButton::Left) {
        selection.drag_from = Some(at);
    }
    if buttons.just_released(MouseButton::Left) {
        let from = selection.drag_from.take().unwrap_or(at);
        let (low, high) = (from.min(at), from.max(at));
        let mine = units.iter().filter(|u| u.owner == ME);
        let mut chosen: Vec<EntityId> = if (high - low).length() < 4.0 {
            // A click: the nearest of my units within 3 m.
            let nearest = mine
                .map(|u| (u.id, Vec2::new(u.pos.x.to_num(), u.pos.z.to_num()).distance(at)))
                .filter(|(_, d)| *d < 3.0)
                .min_by(|a, b| a.1.total_cmp(&b.1));
            nearest.map(|(id, _)| id).into_iter().collect()
        } else {
            mine.filter(|u| {
                let p = Vec2::new(u.pos.x.to_num(), u.pos.z.to_num());
                p.cmpge(low).all() && p.cmple(high).all()
            })
            .map(|u| u.id)
            .collect()
        };
        // The command lists units in id order, whatever order the query gave.
        chosen.sort();
        if !chosen.is_empty() {
            println!("{} units selected", chosen.len());
        }
        selection.units = chosen;
    }
    if buttons.just_pressed(MouseButton::Right) && !selection.units.is_empty() {
        // The click becomes fixed point here, once, on this peer; the command carries it.
        let goal = WorldPos::new(Fixed::from_num(at.x), Fixed::from_num(at.y));
        let command = queue.issue(ME, CommandKind::Move { units: selection.units.clone(), goal: GoalSpec::Point(goal), queue: false });
        println!("turn {}: {} units ordered to ({:.1}, {:.1})", command.turn, selection.units.len(), at.x, at.y);
    }
}

fn player_color(player: PlayerId) -> Color {
    match player.0 {
        1 => Color::srgb(0.2, 0.5, 1.0),
        2 => Color::srgb(0.9, 0.25, 0.2),
        3 => Color::srgb(0.95, 0.85, 0.2),
        4 => Color::srgb(0.7, 0.3, 0.9),
        _ => Color::srgb(0.8, 0.8, 0.8),
    }
}

fn draw(
    mut gizmos: Gizmos,
    world: Res<SimWorld>,
    projection: Res<MapProjection>,
    size: Res<MapSize>,
    units: Query<(&SimUnit, &Transform)>,
    selection: Res<Selection>,
    windows: Query<&Window, With<PrimaryWindow>>,
    cameras: Query<(&Camera, &GlobalTransform)>,
) {
    let to_screen = |x: f32, z: f32| Vec2::new(x, z) * projection.scale + projection.offset;
    gizmos.rect_2d(Isometry2d::IDENTITY, size.0 * projection.scale, Color::srgb(0.5, 0.5, 0.5));
    for obstruction in world.nav().obstructions().values() {
        let square = obstruction.square;
        let c = square.center();
        let (u, v) = (square.u(), square.v());
        let (hw, hh) = (square.hw().to_num::<f32>(), square.hh().to_num::<f32>());
        let (cx, cz) = (c.x.to_num::<f32>(), c.z.to_num::<f32>());
        let (ux, uz, vx, vz) = (u.x.to_num::<f32>(), u.z.to_num::<f32>(), v.x.to_num::<f32>(), v.z.to_num::<f32>());
        let corner = |a: f32, b: f32| to_screen(cx + ux * hw * a + vx * hh * b, cz + uz * hw * a + vz * hh * b);
        let corners = [corner(1.0, 1.0), corner(-1.0, 1.0), corner(-1.0, -1.0), corner(1.0, -1.0), corner(1.0, 1.0)];
        gizmos.linestrip_2d(corners, Color::srgb(0.45, 0.4, 0.3));
    }
    for (unit, transform) in &units {
        let at = transform.translation.truncate();
        let radius = unit.radius.to_num::<f32>().max(0.6) * projection.scale;
        gizmos.circle_2d(at, radius, player_color(unit.owner));
        if selection.units.binary_search(&unit.id).is_ok() {
            gizmos.circle_2d(at, radius + 1.5, Color::WHITE);
        }
    }
    if let (Some(from), Ok(window), Ok(camera)) = (selection.drag_from, windows.single(), cameras.single()) {
        if let Some(to) = cursor_on_map(window, camera, &projection) {
            let (a, b) = (to_screen(from.x, from.y), to_screen(to.x, to.y));
            gizmos.rect_2d(Isometry2d::from_translation((a + b) / 2.0), (b - a).abs(), Color::WHITE);
        }
    }
}

fn take_screenshot(mut commands: Commands, at: Res<ScreenshotAt>, mut frame: Local<u32>, mut exit: MessageWriter<AppExit>) {
    *frame += 1;
    if *frame == at.1 {
        commands.spawn(Screenshot::primary_window()).observe(save_to_disk(at.0.clone()));
    }
    if *frame == at.1 + 30 {
        exit.write(AppExit::Success);
    }
}
