//! What a peer keeps so that it can show its state at a turn not yet agreed: a snapshot every
//! [`SNAPSHOT_EVERY`] turns and each turn's commands and hash since, from which the world after
//! any kept turn is simulated again when a desync asks for it.
//!
//! Keeping a snapshot and the digest leaves after every turn would cost a peer about as much as
//! the turn itself on the reference world (a save takes over a millisecond, the grid's leaves are
//! tens of kilobytes), and every turn pays it although almost no turn is ever asked about.
//! Here a turn costs a copy of its commands; a snapshot is taken once in [`SNAPSHOT_EVERY`] turns.
//! Simulating again from that snapshot gives the peer's own state only if the peer is
//! deterministic on its own, which is what the session already trusts; when the state simulated
//! again does not have the hash the peer reported at the time, [`Recorder::replay_to`] says so,
//! and that is itself a finding (the peer's simulation is not reproducible on its own machine).

use crate::Error;
use std::collections::VecDeque;

use sim::digest_tree::Digest;
use sim::{Command, World};

/// Turns between two kept snapshots. At about 1.5 ms a save on the reference world, every 256th
/// turn costs a peer under 6 µs a turn; simulating up to 256 turns again costs under a second, and
/// only after a desync.
pub const SNAPSHOT_EVERY: u32 = 256;

/// The most turns kept past the oldest snapshot; past it the oldest snapshot and its turns are
/// forgotten, so a host that stops agreeing cannot grow a peer's memory without bound.
pub const MAX_KEPT_TURNS: usize = 4 * SNAPSHOT_EVERY as usize;

/// A snapshot of the world before `next` was stepped.
#[derive(Debug)]
struct Base {
    next: u32,
    bytes: Vec<u8>,
}

/// A turn's commands, as stepped, and the hash after it.
#[derive(Debug)]
struct Kept {
    turn: u32,
    commands: Vec<Command>,
    hash: Digest,
}

/// The world after a kept turn, simulated again.
#[derive(Debug)]
pub struct Replayed {
    /// The world after the turn.
    pub world: World,
    /// Whether its hash is the one the peer had after that turn; if not, the peer's simulation
    /// did not reproduce its own state.
    pub reproduced: bool,
}

/// A peer's memory of the turns not yet agreed.
#[derive(Debug, Default)]
pub struct Recorder {
    bases: VecDeque<Base>,
    turns: VecDeque<Kept>,
}

impl Recorder {
    /// Starts from `world`, whose next turn is `next`: keeps its snapshot.
    pub fn start(&mut self, next: u32, world: &World) {
        self.bases.clear();
        self.turns.clear();
        self.bases.push_back(Base { next, bytes: world.save() });
    }

    /// Keeps turn `turn`'s commands and the hash after it; `world` is the world after it, saved
    /// when the next turn starts a new period.
    pub fn record(&mut self, turn: u32, commands: &[Command], hash: Digest, world: &World) {
        if self.bases.is_empty() {
            return;
        }
        self.turns.push_back(Kept { turn, commands: commands.to_vec(), hash });
        if (turn + 1).is_multiple_of(SNAPSHOT_EVERY) {
            self.bases.push_back(Base { next: turn + 1, bytes: world.save() });
        }
        if self.turns.len() > MAX_KEPT_TURNS && self.bases.len() > 1 {
            self.drop_oldest_base();
        }
    }

    /// Forgets what no question can need once every turn before `agreed` is agreed: the
    /// snapshots older than the newest one taken at or before `agreed`, and their turns.
    pub fn agreed(&mut self, agreed: u32) {
        while self.bases.get(1).is_some_and(|b| b.next <= agreed) {
            self.drop_oldest_base();
        }
    }

    fn drop_oldest_base(&mut self) {
        self.bases.pop_front();
        if let Some(first) = self.bases.front() {
            while self.turns.front().is_some_and(|k| k.turn < first.next) {
                self.turns.pop_front();
            }
        }
    }

    /// Whether the world after `turn` can be simulated again.
    pub fn holds(&self, turn: u32) -> bool {
        self.bases.front().is_some_and(|b| b.next <= turn) && self.turns.iter().any(|k| k.turn == turn)
    }

    /// The world after `turn`, simulated again from the newest snapshot before it with the kept
    /// commands; `like` lends its rules, and `hook` runs before each turn as the peer's brain ran
    /// before it (the test hook that plants a desync).
    ///
    /// # Errors
    /// When the turn is not kept or the snapshot does not load.
    pub fn replay_to(&self, turn: u32, like: &World, hook: &mut dyn FnMut(&mut World, u32)) -> Result<Replayed, Error> {
        if !self.holds(turn) {
            return Err(Error::NotKept { turn });
        }
        let base = self.bases.iter().rev().find(|b| b.next <= turn).ok_or(Error::NoSnapshot { turn })?;
        let mut world = like.load_like(&base.bytes).map_err(|source| Error::KeptSnapshot { turn: base.next, source })?;
        let mut hash = None;
        for kept in self.turns.iter().filter(|k| (base.next..=turn).contains(&k.turn)) {
            hook(&mut world, kept.turn);
            let report = world.step(&kept.commands);
            hash = Some((report.hash, kept.hash));
        }
        let reproduced = hash.is_some_and(|(now, then)| now == then);
        Ok(Replayed { world, reproduced })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use replay::scenario::Scenario;

    const SCENARIO: &str = r#"{"format": "phalanx-scenario", "version": 3, "name": "recorder", "turns": 10,
      "settings": {"players": 2, "seed": 5}, "map": {"generated": {"tiles": 16, "seed": 1}},
      "units": [{"name": "a", "player": 1, "class": "default", "at": [10, 10], "count": 3, "radius": 0.5, "speed": 8}]}"#;

    fn scenario() -> Scenario {
        Scenario::parse(SCENARIO, "recorder", &mut |f| Err(format!("no file {f}"))).expect("scenario")
    }

    fn walk(turn: u32, world: &World) -> Vec<Command> {
        let ids: Vec<_> = world.units().map(|u| u.id).collect();
        let x = 12 + i32::try_from(turn % 20).expect("small");
        let kind = sim::CommandKind::Move { units: ids, goal: sim::GoalSpec::Point(pathing::WorldPos::from_int(x, 14)), queue: false };
        vec![Command { turn, player: sim::PlayerId(1), seq: 1 << 20, kind }]
    }

    /// Steps `turns` turns, recording each; returns every hash and snapshot after each turn, the
    /// oracle the recorder's replays are compared with.
    fn play(turns: u32, recorder: &mut Recorder) -> (World, Vec<(Digest, Vec<u8>)>) {
        let scenario = scenario();
        let mut script = scenario.script();
        let mut w = scenario.world().expect("world");
        recorder.start(0, &w);
        let mut truth = Vec::new();
        for turn in 0..turns {
            // The script spawns the units on turn 0; from turn 1 they are walked about.
            let mut commands = script.turn_commands(&w);
            if turn % 7 == 1 {
                commands.extend(walk(turn, &w));
            }
            let report = w.step(&commands);
            assert!(!report.events.iter().any(|e| matches!(e, sim::Event::Rejected { .. })), "turn {turn}: {:?}", report.events);
            recorder.record(turn, &commands, report.hash, &w);
            truth.push((report.hash, w.save()));
        }
        (w, truth)
    }

    #[test]
    fn every_kept_turn_replays_to_the_snapshot_taken_after_it() {
        let mut recorder = Recorder::default();
        let turns = SNAPSHOT_EVERY + 40;
        let (w, truth) = play(turns, &mut recorder);
        for turn in [0, 1, 6, 7, SNAPSHOT_EVERY - 1, SNAPSHOT_EVERY, SNAPSHOT_EVERY + 39] {
            let replayed = recorder.replay_to(turn, &w, &mut |_, _| {}).expect("kept");
            assert!(replayed.reproduced, "turn {turn}");
            assert_eq!(replayed.world.state_hash(), truth[turn as usize].0, "turn {turn}");
            assert_eq!(replayed.world.save(), truth[turn as usize].1, "turn {turn}");
        }
    }

    #[test]
    fn agreed_turns_forget_old_snapshots_but_keep_every_turn_after_the_agreement() {
        let mut recorder = Recorder::default();
        let turns = 2 * SNAPSHOT_EVERY + 10;
        let (w, truth) = play(turns, &mut recorder);
        recorder.agreed(2 * SNAPSHOT_EVERY + 3);
        assert_eq!(recorder.bases.len(), 1, "only the snapshot at or before the agreement is needed");
        assert!(!recorder.holds(2 * SNAPSHOT_EVERY - 1));
        for turn in 2 * SNAPSHOT_EVERY + 3..turns {
            let replayed = recorder.replay_to(turn, &w, &mut |_, _| {}).expect("kept");
            assert_eq!(replayed.world.state_hash(), truth[turn as usize].0, "turn {turn}");
        }
        assert!(recorder.replay_to(turns, &w, &mut |_, _| {}).is_err(), "a turn not yet stepped is not kept");
    }

    #[test]
    fn a_peer_that_does_not_reproduce_its_own_state_is_told_so() {
        let mut recorder = Recorder::default();
        let (w, _) = play(20, &mut recorder);
        let first = w.units().next().map(|u| u.id).expect("a unit");
        let mut planted = |world: &mut World, turn: u32| {
            if turn == 12 {
                assert!(world.plant_desync(first));
            }
        };
        // Here the flipped bit is gone from the state a turn later, so the turn asked about is
        // the hook's own.
        let replayed = recorder.replay_to(12, &w, &mut planted).expect("kept");
        assert!(!replayed.reproduced, "the hook changed the state the peer had");
        assert!(recorder.replay_to(11, &w, &mut planted).expect("kept").reproduced, "before the hook's turn");
    }

    #[test]
    fn a_host_that_never_agrees_cannot_grow_the_memory_past_its_bound() {
        let mut recorder = Recorder::default();
        let _ = play(MAX_KEPT_TURNS as u32 + 2 * SNAPSHOT_EVERY, &mut recorder);
        assert!(recorder.turns.len() <= MAX_KEPT_TURNS, "{} turns kept", recorder.turns.len());
        assert!(recorder.bases.len() <= MAX_KEPT_TURNS / SNAPSHOT_EVERY as usize + 1);
    }
}
