//! cargo-fuzz entry point for `phalanx_fuzz::jps_vs_astar`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| phalanx_fuzz::jps_vs_astar(data));
