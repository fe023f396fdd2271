//! cargo-fuzz entry point for `phalanx_fuzz::replay_file`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| phalanx_fuzz::replay_file(data));
