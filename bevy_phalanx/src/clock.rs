//! The turn clock: an accumulator of presentation time that says when the next turn is due.
//!
//! # Why an own accumulator, not `FixedUpdate`
//!
//! Bevy's `FixedUpdate` with `Time<Fixed>` is the obvious place for a fixed-rate simulation, and
//! its accumulator is exact (it adds `Duration`s, integer nanoseconds). The plugin keeps its own
//! all the same, for three reasons:
//!
//! - `Time<Fixed>` has one timestep for the whole app. A game that runs physics, particles or
//!   networking at 60 Hz in `FixedUpdate` would have to slow all of them to the turn rate (5 Hz for
//!   the default 200 ms turn), or run the world at the wrong rate.
//! - A lockstep turn may only be stepped when every player's commands for it have arrived
//!   ([`crate::Readiness::Sealed`]). `FixedUpdate` runs whenever time has accumulated and cannot
//!   wait; this clock holds at the end of the turn (alpha 1) until the turn is ready, then steps.
//! - Interpolation needs "time since the last step", which must stop at one turn length while the
//!   clock waits, so that transforms never run past the end of a turn.
//!
//! The clock never touches what the world computes: it only decides how many turns to step in a
//! frame. Every turn is stepped with the commands queued for it, whatever the frame rate.

use std::time::Duration;

use bevy::prelude::Resource;

/// Most turns stepped in one frame by default: a frame that took longer than this many turns
/// (a hitch, a debugger pause) drops the rest of its time instead of freezing the game while the
/// world catches up (the "spiral of death").
pub const DEFAULT_MAX_TURNS_PER_FRAME: u32 = 4;

/// When the next turn is due, from the presentation time that has passed.
///
/// Time enters as `Duration`s (integer nanoseconds), so the number of turns stepped after a
/// given total of time does not depend on how that time was cut into frames.
#[derive(Resource, Clone, Debug, PartialEq, Eq)]
pub struct TurnClock {
    /// The turn length, from the world's `Settings::turn_ms`. Never zero.
    turn_length: Duration,
    /// Time since the last step, less any turn that is due and not yet stepped.
    /// `[Limit: ≤ turn_length · max_turns_per_frame]`
    since_step: Duration,
    /// Most turns stepped in one frame. `[Limit: ≥ 1]`
    max_turns_per_frame: u32,
    /// Turns stepped since the clock was made.
    stepped: u64,
    /// The last frame found a turn due that was not ready.
    waiting: bool,
}

impl TurnClock {
    /// A clock for turns of `turn_ms` milliseconds (a world's `Settings::turn_ms`, at least 1).
    pub fn new(turn_ms: u32) -> Self {
        Self {
            turn_length: Duration::from_millis(u64::from(turn_ms.max(1))),
            since_step: Duration::ZERO,
            max_turns_per_frame: DEFAULT_MAX_TURNS_PER_FRAME,
            stepped: 0,
            waiting: false,
        }
    }

    /// The same clock stepping at most `max` turns a frame (at least 1).
    #[must_use]
    pub fn with_max_turns_per_frame(mut self, max: u32) -> Self {
        self.max_turns_per_frame = max.max(1);
        self
    }

    /// The turn length.
    pub fn turn_length(&self) -> Duration {
        self.turn_length
    }

    /// Most turns stepped in one frame.
    pub fn max_turns_per_frame(&self) -> u32 {
        self.max_turns_per_frame
    }

    /// Turns stepped since the clock was made.
    pub fn stepped(&self) -> u64 {
        self.stepped
    }

    /// The last frame had a turn due that was not ready (its commands had not all arrived).
    pub fn waiting(&self) -> bool {
        self.waiting
    }

    /// Adds a frame's time and returns how many turns are due now (at most
    /// [`TurnClock::max_turns_per_frame`]); time beyond that is dropped.
    pub fn advance(&mut self, delta: Duration) -> u32 {
        let cap = self.turn_length.saturating_mul(self.max_turns_per_frame);
        self.since_step = self.since_step.saturating_add(delta).min(cap);
        let due = self.since_step.as_nanos() / self.turn_length.as_nanos();
        u32::try_from(due).unwrap_or(u32::MAX).min(self.max_turns_per_frame)
    }

    /// Notes that a due turn was stepped: one turn length less to go.
    pub fn stepped_one(&mut self) {
        self.since_step = self.since_step.saturating_sub(self.turn_length);
        self.stepped += 1;
        self.waiting = false;
    }

    /// Notes that a due turn was not ready: the clock holds at the end of the last stepped turn
    /// (alpha 1) until it is.
    pub fn hold(&mut self) {
        self.since_step = self.since_step.min(self.turn_length);
        self.waiting = true;
    }

    /// How far presentation time is into the turn after the last step, as a fraction of the turn
    /// length, clamped to `[0, 1]`: 0 just after a step, 1 at the end of the turn (and while
    /// waiting for a turn that is not ready). Presentation only: never feed it to the world.
    pub fn alpha(&self) -> f32 {
        let fraction = self.since_step.as_secs_f64() / self.turn_length.as_secs_f64();
        (fraction as f32).clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_turns_due_depend_on_the_total_time_not_on_the_frames() {
        let mut coarse = TurnClock::new(200);
        let mut fine = TurnClock::new(200);
        let mut coarse_turns = 0;
        let mut fine_turns = 0;
        for _ in 0..30 {
            for _ in 0..coarse.advance(Duration::from_millis(100)) {
                coarse.stepped_one();
                coarse_turns += 1;
            }
            for _ in 0..10 {
                for _ in 0..fine.advance(Duration::from_millis(10)) {
                    fine.stepped_one();
                    fine_turns += 1;
                }
            }
        }
        assert_eq!(coarse_turns, 15);
        assert_eq!(fine_turns, 15);
    }

    #[test]
    fn a_long_frame_steps_at_most_the_cap_and_drops_the_rest() {
        let mut clock = TurnClock::new(200).with_max_turns_per_frame(3);
        assert_eq!(clock.advance(Duration::from_secs(10)), 3);
        for _ in 0..3 {
            clock.stepped_one();
        }
        assert_eq!(clock.advance(Duration::ZERO), 0);
        assert!(clock.alpha() == 0.0);
    }

    #[test]
    fn a_held_clock_stays_at_the_end_of_the_turn() {
        let mut clock = TurnClock::new(200);
        assert_eq!(clock.advance(Duration::from_millis(450)), 2);
        clock.hold();
        assert!(clock.waiting());
        assert!(clock.alpha() == 1.0);
        assert_eq!(clock.advance(Duration::from_millis(50)), 1);
        clock.hold();
        assert!(clock.alpha() == 1.0);
        clock.stepped_one();
        assert!(clock.alpha() == 0.0);
        assert!(!clock.waiting());
    }
}
