//! What a peer measures of its own game for its summary: the bytes it exchanged, and for a client
//! the latency from sending an order to stepping the turn that applies it. Measurement only: the
//! numbers come from the transport's clock and never reach the simulation.

use std::collections::BTreeMap;
use std::fmt;

/// Bytes a peer sent and received, counting each frame's 4-byte length as TCP carries it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Bytes sent.
    pub sent: u64,
    /// Bytes received.
    pub received: u64,
}

impl Traffic {
    /// Counts a frame of `payload` bytes sent.
    pub(crate) fn sent(&mut self, payload: usize) {
        self.sent = self.sent.saturating_add(payload as u64 + 4);
    }

    /// Counts a frame of `payload` bytes received.
    pub(crate) fn received(&mut self, payload: usize) {
        self.received = self.received.saturating_add(payload as u64 + 4);
    }

    /// `traffic: sent S bytes (s a turn), received R bytes (r a turn) over T turns`.
    pub fn line(&self, turns: u32) -> String {
        let per = |b: u64| b / u64::from(turns.max(1));
        format!(
            "traffic: sent {} bytes ({} a turn), received {} bytes ({} a turn) over {turns} turns",
            self.sent,
            per(self.sent),
            self.received,
            per(self.received)
        )
    }
}

/// A histogram of latencies in milliseconds: one count per distinct value, so a long game
/// holds as many entries as distinct latencies, not one per order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Latency {
    counts: BTreeMap<u64, u64>,
    total: u64,
}

impl Latency {
    /// Counts one latency.
    pub(crate) fn record(&mut self, ms: u64) {
        *self.counts.entry(ms).or_insert(0) += 1;
        self.total += 1;
    }

    /// How many latencies were counted.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The smallest latency at or above `percent` percent of the counted ones (nearest rank);
    /// `None` when none was counted.
    pub fn percentile(&self, percent: u64) -> Option<u64> {
        let rank = (self.total * percent.min(100)).div_ceil(100).max(1);
        let mut seen = 0;
        self.counts.iter().find_map(|(&ms, &n)| {
            seen += n;
            (seen >= rank).then_some(ms)
        })
    }
}

impl fmt::Display for Latency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.percentile(50), self.percentile(99), self.percentile(100)) {
            (Some(p50), Some(p99), Some(max)) => {
                write!(f, "order latency: median {p50} ms, p99 {p99} ms, max {max} ms over {} orders", self.total)
            }
            _ => write!(f, "order latency: no order sent"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank_over_the_counted_latencies() {
        let mut l = Latency::default();
        assert_eq!(l.percentile(50), None);
        for ms in [30, 10, 20, 40, 10, 100, 20, 20, 30, 10] {
            l.record(ms);
        }
        // Sorted: 10 10 10 20 20 20 30 30 40 100.
        assert_eq!(l.percentile(50), Some(20));
        assert_eq!(l.percentile(30), Some(10));
        assert_eq!(l.percentile(90), Some(40));
        assert_eq!(l.percentile(99), Some(100));
        assert_eq!(l.percentile(100), Some(100));
        assert_eq!(l.count(), 10);
        assert_eq!(l.to_string(), "order latency: median 20 ms, p99 100 ms, max 100 ms over 10 orders");
    }

    #[test]
    fn traffic_counts_each_frame_with_its_length_prefix() {
        let mut t = Traffic::default();
        t.sent(40);
        t.sent(0);
        t.received(100);
        assert_eq!(t, Traffic { sent: 48, received: 104 });
        assert_eq!(t.line(4), "traffic: sent 48 bytes (12 a turn), received 104 bytes (26 a turn) over 4 turns");
    }
}
