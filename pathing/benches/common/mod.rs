//! Helpers shared by the pathing benchmarks: medians, unit conversions for printing, timing one
//! call, and the list of failed answer checks that makes a benchmark exit with status 1.
#![allow(dead_code)]

use std::hint::black_box;
use std::time::{Duration, Instant};

/// The median of timing samples (the upper one of an even count).
pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// Microseconds, for printing.
pub fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Milliseconds, for printing.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Runs `f` once and returns its value and how long it took.
pub fn time<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let started = Instant::now();
    let value = black_box(f());
    (value, started.elapsed())
}

/// Failed answer checks; a benchmark exits with status 1 when there are any.
pub struct Failures(pub Vec<String>);

impl Failures {
    /// Records a failure (and prints it at once) unless `ok`.
    pub fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            let message = what();
            eprintln!("CHECK FAILED: {message}");
            self.0.push(message);
        }
    }
}
