//! What the tests and the benchmark share: a scenario played through a headless app and through a
//! plain `World`.
#![allow(dead_code)]

use std::path::Path;
use std::time::Duration;

use bevy::prelude::*;
use bevy::time::{TimePlugin, TimeUpdateStrategy};
use bevy_phalanx::{CommandQueue, LastTurn, PhalanxPlugin, PhalanxSet, PhalanxTurn, SimWorld};
use replay::rules::Rulesets;
use replay::scenario::{Scenario, ScriptRunner};

/// A scenario from `examples/scenarios/`, parsed knowing the reference game, kept for the
/// process (its script runners borrow it).
pub fn scenario(name: &str) -> &'static Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios").join(name);
    let rulesets = Rulesets::none().with(skirmish::tools::ruleset());
    let scenario = Scenario::load_with(&path, &rulesets).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Box::leak(Box::new(scenario))
}

/// The scenario's script (and its bots) inside the app: a non-send resource, as bots are `Send`
/// only.
pub struct Script(pub ScriptRunner<'static>);

/// Every stepped turn's hash, in turn order.
#[derive(Resource, Default)]
pub struct Hashes(pub Vec<[u8; 32]>);

/// Queues the script's commands for the turn about to be stepped.
fn script_commands(mut script: NonSendMut<Script>, world: Res<SimWorld>, mut queue: ResMut<CommandQueue>) {
    for command in script.0.turn_commands(&world).into_iter().chain(removal(&world)) {
        queue.push(command).expect("the script stamps the turn about to be stepped");
    }
}

/// The `seq` of the removals below: above the script's, below its bots' (`BOT_SEQ_BASE`).
const REMOVAL_SEQ: u32 = 1 << 29;

/// Every 25th turn from turn 20, player 1 removes its newest unit (the one of highest entity
/// index): removals on a fixed schedule, decided from the world alone, so the app and the plain
/// loop issue the same ones.
pub fn removal(world: &sim::World) -> Option<sim::Command> {
    let turn = world.turn();
    if turn < 20 || turn % 25 != 20 {
        return None;
    }
    let newest = world.units().filter(|u| u.owner == sim::PlayerId(1)).last()?.id;
    Some(sim::Command { turn, player: sim::PlayerId(1), seq: REMOVAL_SEQ, kind: sim::CommandKind::Remove { units: vec![newest] } })
}

/// Lets the script learn the turn's ids, and keeps its hash.
fn script_observe(mut script: NonSendMut<Script>, last: Res<LastTurn>, mut hashes: ResMut<Hashes>) {
    let report = last.0.as_ref().expect("observed after a step");
    script.0.observe(report);
    hashes.0.push(report.hash);
}

/// A headless app playing `scenario`: the plugin, a manually advanced `Time<Virtual>` of
/// `frames_per_second` frames a second, and the script (with the [`removal`]s) in `PhalanxSet::Commands`.
pub fn app(scenario: &'static Scenario, frames_per_second: u32) -> App {
    let world = scenario.world().expect("the scenario makes a world");
    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), TimePlugin, PhalanxPlugin::new(world)));
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs(1) / frames_per_second));
    app.insert_non_send(Script(scenario.script()));
    app.init_resource::<Hashes>();
    app.add_systems(PhalanxTurn, script_commands.in_set(PhalanxSet::Commands));
    app.add_systems(PhalanxTurn, script_observe.in_set(PhalanxSet::Observe));
    app
}

/// Every turn's hash of `scenario` played for `turns` turns on a plain `World`, with the same
/// [`removal`]s.
pub fn plain_hashes(scenario: &Scenario, turns: u32) -> Vec<[u8; 32]> {
    let mut world = scenario.world().expect("the scenario makes a world");
    let mut hashes = Vec::new();
    let mut script = scenario.script();
    for _ in 0..turns {
        let mut commands = script.turn_commands(&world);
        commands.extend(removal(&world));
        let report = world.step(&commands);
        script.observe(&report);
        hashes.push(report.hash);
    }
    hashes
}
