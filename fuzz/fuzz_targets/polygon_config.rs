//! cargo-fuzz entry point for `phalanx_fuzz::polygon_config`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| phalanx_fuzz::polygon_config(data));
