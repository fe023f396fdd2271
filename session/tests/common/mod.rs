//! Helpers the session's test files share: a small generated scenario for any number of players,
//! and a brain that plants a desync.

// Each test file is a crate of its own and uses only some of these.
#![allow(dead_code)]

use replay::scenario::Scenario;
use session::Mover;
use session::{Brain, Order};
use sim::{TurnReport, World};

/// Where each player's units start on the 96 m map.
pub const BASES: [(i32, i32); 8] = [(20, 20), (76, 76), (76, 20), (20, 76), (48, 20), (48, 76), (20, 48), (76, 48)];

/// A small generated map named `name` with three units per player.
pub fn scenario(name: &str, players: u8, seed: u64, turns: u32) -> Scenario {
    let units: Vec<String> = (1..=players)
        .map(|p| {
            let (x, z) = BASES[usize::from(p - 1)];
            format!(r#"{{"name": "p{p}", "player": {p}, "class": "default", "at": [{x}, {z}], "count": 3, "radius": 0.5, "speed": 8}}"#)
        })
        .collect();
    let text = format!(
        r#"{{"format": "phalanx-scenario", "version": 3, "name": "{name}", "turns": {turns},
  "settings": {{"players": {players}, "seed": {seed}}},
  "map": {{"generated": {{"tiles": 24, "seed": {}}}}}, "units": [{}]}}"#,
        seed % 4,
        units.join(", ")
    );
    Scenario::parse(&text, name, &mut |f| Err(format!("no file {f}"))).expect("the test scenario parses")
}

/// A mover whose world gets a one-bit flip in its first unit's x just before turn `at`.
pub struct Planter {
    /// Who plays the seat.
    pub mover: Mover,
    /// The turn the flip comes before.
    pub at: u32,
}

impl Brain for Planter {
    fn think(&mut self, world: &World, report: &TurnReport) -> Vec<Order> {
        self.mover.think(world, report)
    }

    fn before_step(&mut self, world: &mut World, turn: u32) {
        if turn == self.at {
            let first = world.units().next().map(|u| u.id).expect("units on the map");
            assert!(world.plant_desync(first));
        }
    }
}
