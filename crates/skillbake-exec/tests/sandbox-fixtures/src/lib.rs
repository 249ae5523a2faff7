//! The packs under `tests/fixtures/sandbox`, compiled in: one pack per attack on the sandbox
//! (and its granted twin), run as real processes by `tests/sandbox.rs`.

#![forbid(unsafe_code)]

skillbake::include_skills!();
