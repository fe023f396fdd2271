//! Bots.
