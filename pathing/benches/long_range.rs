//! Long-range search benchmarks (placeholder until written).
fn main() {}
