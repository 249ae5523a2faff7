//! Tests of the compiler's layers that reach below its public API: generated code byte for
//! byte (`determinism`), the incremental cache (`incremental`), the Jinja2 front end against
//! Jinja2 itself (`jinja_conformance`), property tests of the parser and the generator
//! (`properties`) and how the registry's files are written (`write`). The tests of what the
//! public API promises are in `tests/it/`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

#[path = "../../tests/it/common.rs"]
mod common;
mod determinism;
mod incremental;
mod jinja_conformance;
mod properties;
mod signing;
mod write;

use std::path::PathBuf;

/// The packs shipped with skillbake (the workspace's `skills/`), a real tree to build.
fn skills() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../skills")
}
