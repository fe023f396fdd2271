//! A scripted mover: a [`Brain`] that sends its player's units to seeded random points, for tests
//! and for a seat nobody plays.

use sim::{CommandKind, GoalSpec, PlayerId, TurnReport, World};

use crate::client::Brain;
use crate::protocol::Order;

/// Every `every` turns, sends about half of its player's units (chosen by its own seeded
/// generator) to a random point of the square `lo..hi` metres on both axes.
pub struct Mover {
    player: PlayerId,
    state: u64,
    every: u32,
    lo: i32,
    hi: i32,
}

impl Mover {
    /// A mover for `player`, seeded with `seed`, ordering every `every` turns (at least 1) into the
    /// square `lo..hi` (metres).
    pub fn new(player: PlayerId, seed: u64, every: u32, lo: i32, hi: i32) -> Self {
        Self { player, state: seed ^ (u64::from(player.0) << 56) ^ 0x9e37_79b9_7f4a_7c15, every: every.max(1), lo, hi: hi.max(lo + 1) }
    }

    /// A splitmix64 step: the mover's choices depend on its seed and nothing else.
    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn coordinate(&mut self) -> i32 {
        let span = (self.hi - self.lo) as u64;
        self.lo + (self.next() % span) as i32
    }
}

impl Brain for Mover {
    fn think(&mut self, world: &World, report: &TurnReport) -> Vec<Order> {
        if !(report.turn + u32::from(self.player.0)).is_multiple_of(self.every) {
            return Vec::new();
        }
        let mine: Vec<_> = world.units().filter(|u| u.owner == self.player).map(|u| u.id).collect();
        let mut units = Vec::new();
        for id in mine {
            if self.next().is_multiple_of(2) {
                units.push(id);
            }
        }
        if units.is_empty() {
            return Vec::new();
        }
        let (x, z) = (self.coordinate(), self.coordinate());
        let goal = GoalSpec::Point(pathing::WorldPos::from_int(x, z));
        vec![Order { player: self.player, kind: CommandKind::Move { units, goal, queue: false } }]
    }
}
