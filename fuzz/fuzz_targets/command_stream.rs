//! cargo-fuzz entry point for `phalanx_fuzz::command_stream`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| phalanx_fuzz::command_stream(data));
