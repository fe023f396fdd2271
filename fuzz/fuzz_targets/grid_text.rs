//! cargo-fuzz entry point for `phalanx_fuzz::grid_text`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| phalanx_fuzz::grid_text(data));
