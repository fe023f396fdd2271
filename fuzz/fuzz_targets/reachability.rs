//! cargo-fuzz entry point for `phalanx_fuzz::reachability`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| phalanx_fuzz::reachability(data));
