//! The compiler's integration tests, one binary: what its public API promises (`check`,
//! `Config`, the reports, the diff API) on fixture packs, and what a downstream crate's
//! `cargo build` does with it. Tests of its internal layers are unit tests (`src/tests/`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod common;
mod config;
mod diff;
mod downstream;
mod plain_values;
mod rebuild;
mod requirements;
mod rules;
mod security;
