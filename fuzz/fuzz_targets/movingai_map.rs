//! cargo-fuzz entry point for `phalanx_fuzz::movingai_map`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| phalanx_fuzz::movingai_map(data));
