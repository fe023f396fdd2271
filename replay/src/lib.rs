//! Replays, verification and the `phalanx` command-line program of the Phalanx lockstep core.
//!
//! This is the only crate that touches the file system and the command line. Today it holds the
//! command line ([`cli::run`]): `phalanx scen` solves a Moving AI scenario file and `phalanx path`
//! finds one path, both with the long-range searches of `pathing`.
//!
//! ```
//! let mut out = Vec::new();
//! let mut err = Vec::new();
//! let code = replay::cli::run(["phalanx", "--version"], &mut out, &mut err);
//! assert_eq!(code, 0);
//! assert!(String::from_utf8(out).unwrap().starts_with("phalanx"));
//! ```

#![forbid(unsafe_code)]

pub mod cli;
