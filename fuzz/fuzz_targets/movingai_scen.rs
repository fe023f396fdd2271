//! cargo-fuzz entry point for `phalanx_fuzz::movingai_scen`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| phalanx_fuzz::movingai_scen(data));
