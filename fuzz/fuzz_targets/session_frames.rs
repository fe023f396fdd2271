//! cargo-fuzz entry point for `phalanx_fuzz::session_frames`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| phalanx_fuzz::session_frames(data));
