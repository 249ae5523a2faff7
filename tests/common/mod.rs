//! Helpers shared by the integration tests (`mod common;` in each test that needs them).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

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
