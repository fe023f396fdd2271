//! The command queue: players' commands waiting for their turn, stamped `(turn, player, seq)`.

use std::collections::BTreeMap;

use bevy::prelude::Resource;
use sim::{Command, CommandKind, PlayerId};

/// When a due turn may be stepped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Readiness {
    /// Always: a local game (one machine, bots, a single player), where every command is queued
    /// before its turn by construction.
    Always,
    /// Only once the game has called [`CommandQueue::seal`] for the turn: a networked game seals a
    /// turn when every player's commands for it have arrived, so every peer steps the same list.
    Sealed,
}

/// A command that came too late: its turn has already been stepped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaleCommand {
    /// The command, returned to the caller.
    pub command: Command,
    /// The next turn the world will step.
    pub next_turn: u32,
}

impl std::fmt::Display for StaleCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a command for turn {} came after that turn was stepped (next turn {})", self.command.turn, self.next_turn)
    }
}

impl std::error::Error for StaleCommand {}

/// Commands waiting for their turn.
///
/// A game issues a player's command with [`CommandQueue::issue`], which stamps it for the turn
/// [`CommandQueue::input_delay`] turns after the next one (the time a command needs to reach
/// every peer) with the player's next `seq` for that turn; commands stamped elsewhere (received
/// from the network, a scenario script, bots) go in with [`CommandQueue::push`] as they are. The
/// plugin takes a turn's commands just before stepping it, in `(turn, player, seq)` order; the
/// order they were queued in never matters.
#[derive(Resource, Clone, Debug)]
pub struct CommandQueue {
    /// The next turn the world will step.
    next_turn: u32,
    /// Turns between the next turn and the turn [`CommandQueue::issue`] stamps.
    input_delay: u32,
    readiness: Readiness,
    /// Turns sealed as complete ([`Readiness::Sealed`]); every turn below `sealed_to` is sealed.
    sealed_to: u32,
    /// Commands by turn.
    pending: BTreeMap<u32, Vec<Command>>,
    /// The next `seq` [`CommandQueue::issue`] gives, per turn and player.
    next_seq: BTreeMap<(u32, PlayerId), u32>,
}

impl CommandQueue {
    /// An empty queue for a world whose next turn is `next_turn`, stamping issued commands
    /// `input_delay` turns ahead.
    pub fn new(next_turn: u32, input_delay: u32, readiness: Readiness) -> Self {
        Self { next_turn, input_delay, readiness, sealed_to: next_turn, pending: BTreeMap::new(), next_seq: BTreeMap::new() }
    }

    /// The next turn the world will step.
    pub fn next_turn(&self) -> u32 {
        self.next_turn
    }

    /// Turns between the next turn and the turn [`CommandQueue::issue`] stamps.
    pub fn input_delay(&self) -> u32 {
        self.input_delay
    }

    /// When a due turn may be stepped.
    pub fn readiness(&self) -> Readiness {
        self.readiness
    }

    /// Queues `kind` from `player` for turn `next_turn + input_delay`, with the player's next
    /// `seq` for that turn (0, 1, 2, … per turn and player); returns the stamped command.
    pub fn issue(&mut self, player: PlayerId, kind: CommandKind) -> Command {
        let turn = self.next_turn.saturating_add(self.input_delay);
        let seq = self.next_seq.entry((turn, player)).or_insert(0);
        let command = Command { turn, player, seq: *seq, kind };
        *seq = seq.saturating_add(1);
        self.pending.entry(turn).or_default().push(command.clone());
        command
    }

    /// Queues a command stamped elsewhere, as it is.
    ///
    /// # Errors
    /// [`StaleCommand`] when its turn has already been stepped.
    pub fn push(&mut self, command: Command) -> Result<(), StaleCommand> {
        if command.turn < self.next_turn {
            return Err(StaleCommand { command, next_turn: self.next_turn });
        }
        self.pending.entry(command.turn).or_default().push(command);
        Ok(())
    }

    /// Marks every turn up to and including `turn` as complete ([`Readiness::Sealed`]).
    pub fn seal(&mut self, turn: u32) {
        self.sealed_to = self.sealed_to.max(turn.saturating_add(1));
    }

    /// Whether the next turn may be stepped now.
    pub fn ready(&self) -> bool {
        match self.readiness {
            Readiness::Always => true,
            Readiness::Sealed => self.next_turn < self.sealed_to,
        }
    }

    /// The commands queued for the next turn so far.
    pub fn queued_for(&self, turn: u32) -> &[Command] {
        self.pending.get(&turn).map_or(&[], Vec::as_slice)
    }

    /// Takes the next turn's commands in `(turn, player, seq)` order and moves on to the turn
    /// after it. The plugin calls it just before stepping.
    pub fn take_next(&mut self) -> Vec<Command> {
        let turn = self.next_turn;
        let mut commands = self.pending.remove(&turn).unwrap_or_default();
        // Stable, and the world sorts the same way: two commands with one key keep queue order.
        commands.sort_by_key(Command::order_key);
        self.next_seq.retain(|&(t, _), _| t > turn);
        self.next_turn = turn.saturating_add(1);
        commands
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stop() -> CommandKind {
        CommandKind::Stop { units: Vec::new() }
    }

    #[test]
    fn issued_commands_are_stamped_ahead_with_seqs_per_player_and_turn() {
        let mut queue = CommandQueue::new(10, 2, Readiness::Always);
        let a = queue.issue(PlayerId(1), stop());
        let b = queue.issue(PlayerId(2), stop());
        let c = queue.issue(PlayerId(1), stop());
        assert_eq!([a.order_key(), b.order_key(), c.order_key()], [(12, PlayerId(1), 0), (12, PlayerId(2), 0), (12, PlayerId(1), 1)]);
        assert!(queue.take_next().is_empty());
        assert!(queue.take_next().is_empty());
        let keys: Vec<_> = queue.take_next().iter().map(Command::order_key).collect();
        assert_eq!(keys, [(12, PlayerId(1), 0), (12, PlayerId(1), 1), (12, PlayerId(2), 0)]);
        assert_eq!(queue.next_turn(), 13);
        assert_eq!(queue.issue(PlayerId(1), stop()).order_key(), (15, PlayerId(1), 0));
    }

    #[test]
    fn a_command_for_a_stepped_turn_is_refused() {
        let mut queue = CommandQueue::new(5, 0, Readiness::Always);
        let late = Command { turn: 4, player: PlayerId(1), seq: 0, kind: stop() };
        assert_eq!(queue.push(late.clone()), Err(StaleCommand { command: late, next_turn: 5 }));
    }

    #[test]
    fn a_sealed_queue_is_ready_only_for_sealed_turns() {
        let mut queue = CommandQueue::new(0, 1, Readiness::Sealed);
        assert!(!queue.ready());
        queue.seal(1);
        assert!(queue.ready());
        queue.take_next();
        assert!(queue.ready());
        queue.take_next();
        assert!(!queue.ready());
    }
}
