//! The packs under `tests/fixtures/exec`, compiled in: the executor's tests run them as real
//! processes (one pack per result code and behaviour).

#![forbid(unsafe_code)]

skillbake::include_skills!();
