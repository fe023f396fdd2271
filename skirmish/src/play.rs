//! Play.
