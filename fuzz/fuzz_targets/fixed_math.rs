//! cargo-fuzz entry point for `phalanx_fuzz::fixed_math`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| phalanx_fuzz::fixed_math(data));
