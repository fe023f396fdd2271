//! cargo-fuzz entry point for `phalanx_fuzz::geometry`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| phalanx_fuzz::geometry(data));
