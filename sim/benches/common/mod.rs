//! What the simulation benchmarks share: the run mode read from the command line and environment,
//! and milliseconds for printing.
#![allow(dead_code)]

use std::time::Duration;

/// How a benchmark binary was asked to run.
pub struct Mode {
    /// The small smoke run: `PHALANX_BENCH_QUICK=1`, or any run without `--bench` (as `cargo test`
    /// runs bench targets), which checks every answer and times nothing worth reading.
    pub quick: bool,
    /// Worker threads for path requests, `PHALANX_BENCH_THREADS` (default 1); the results do not
    /// depend on it.
    pub threads: usize,
}

impl Mode {
    /// The mode of this process.
    pub fn from_env() -> Self {
        let bench = std::env::args().any(|a| a == "--bench");
        let quick = std::env::var("PHALANX_BENCH_QUICK").is_ok_and(|v| v == "1") || !bench;
        let threads =
            std::env::var("PHALANX_BENCH_THREADS").ok().and_then(|v| v.parse().ok()).filter(|&t| (1..=256).contains(&t)).unwrap_or(1);
        Self { quick, threads }
    }

    /// `quick` or `full`, for the header line.
    pub fn name(&self) -> &'static str {
        if self.quick { "quick" } else { "full" }
    }
}

/// Milliseconds, for printing.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
