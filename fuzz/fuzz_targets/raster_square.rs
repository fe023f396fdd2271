//! cargo-fuzz entry point for `phalanx_fuzz::raster_square`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| phalanx_fuzz::raster_square(data));
