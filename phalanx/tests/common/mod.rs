//! Helpers the program's process tests share: two seats' tokens, a small two-player scenario, and
//! the final hash a program prints last.

// Each test file is a crate of its own and uses only some of these.
#![allow(dead_code)]

/// The tokens of seats 1 and 2, as a token file holds them.
pub const TOKENS: [&str; 2] = ["000102030405060708090a0b0c0d0e0f", "101112131415161718191a1b1c1d1e1f"];

/// A 64 m generated map with three units a player, for two players.
pub fn scenario(name: &str, seed: u64, turns: u32) -> String {
    format!(
        r#"{{"format": "phalanx-scenario", "version": 3, "name": "{name}", "turns": {turns},
  "settings": {{"players": 2, "seed": {seed}}}, "map": {{"generated": {{"tiles": 16, "seed": 1}}}},
  "units": [
    {{"name": "a", "player": 1, "class": "default", "at": [20, 20], "count": 3, "radius": 0.5, "speed": 8}},
    {{"name": "b", "player": 2, "class": "default", "at": [44, 44], "count": 3, "radius": 0.5, "speed": 8}}
  ]}}"#
    )
}

/// The hash of a program's last `... final hash HEX` line.
pub fn final_hash(stdout: &str) -> String {
    stdout.lines().rev().find_map(|l| l.split_once(" final hash ").map(|(_, h)| h.to_owned())).unwrap_or_default()
}
