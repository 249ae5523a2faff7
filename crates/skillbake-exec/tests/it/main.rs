//! The executor's integration tests, one binary: every result code and behaviour on the packs
//! of `tests/fixtures/exec` (`exec`), and every attack of `tests/fixtures/sandbox` on this
//! machine's kernel (`sandbox`), each pack run as a real process.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod exec;
mod sandbox;
