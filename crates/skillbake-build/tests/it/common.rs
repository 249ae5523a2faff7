//! Helpers shared by the integration tests of several crates (`mod common;`, by `#[path]`
//! outside the compiler's own tests).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design
#![allow(dead_code)] // each crate's tests use some of the helpers

use std::path::Path;

/// The order in which [`copy_tree`] creates the entries of each folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// By name.
    Sorted,
    /// By name, reversed: a file system that lists entries in creation order lists them the
    /// other way round than after a sorted copy.
    Reversed,
}

/// Copies the folder `from` to `to` (created), recursively, following symbolic links.
pub fn copy_tree(from: &Path, to: &Path, order: Order) {
    std::fs::create_dir_all(to).unwrap();
    let mut entries: Vec<_> = std::fs::read_dir(from)
        .unwrap()
        .map(|e| e.unwrap())
        .collect();
    entries.sort_by_key(|e| e.file_name());
    if order == Order::Reversed {
        entries.reverse();
    }
    for e in entries {
        let dest = to.join(e.file_name());
        if e.path().is_dir() {
            copy_tree(&e.path(), &dest, order);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// The workspace's root folder (the one holding `Cargo.lock`), whichever crate's tests ask.
pub fn workspace() -> std::path::PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .find(|d| d.join("Cargo.lock").is_file())
        .unwrap_or(here)
        .to_path_buf()
}

/// The target folder that tests building a downstream crate share (one per workspace, so the
/// compiler and the runtime are built once for all of them).
pub fn downstream_target() -> std::path::PathBuf {
    workspace().join("target/downstream-test")
}
