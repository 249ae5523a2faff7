//! The floor under any tool that looks at every file of a skills tree: walking its folders and
//! reading (or only stamping) every file, with nothing checked or built. `cargo xtask bench`
//! measures it in the same rounds as `skillbake check` and the incremental build, so that a goal
//! can be set against what the file system alone costs.
//!
//! The walk skips the names `skillbake-build`'s discovery ignores ([`is_ignored`], the same
//! list, kept equal by a test in the xtask) and follows links to files. It never follows a link
//! to a folder, which discovery does only inside a pack and only once per folder, so the floor
//! reads no more than `check` reads (unless a project's `ignore` globs leave files out, which
//! this walk does not know).

use std::path::Path;

/// What the walk does with every file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Reads its bytes, as `check` does.
    Read,
    /// Reads its metadata, as an incremental build does to find what changed.
    Stat,
}

/// What a walk saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Seen {
    /// Folders listed.
    pub dirs: u64,
    /// Files read or stamped.
    pub files: u64,
    /// Bytes read (in [`Mode::Stat`], the files' lengths).
    pub bytes: u64,
    /// Entries that could not be read.
    pub errors: u64,
}

/// Whether discovery skips an entry of this name.
pub fn is_ignored(name: &str) -> bool {
    name.starts_with('.')
        || matches!(
            name,
            "node_modules" | "__pycache__" | "Thumbs.db" | "desktop.ini"
        )
}

/// Walks `dir` and everything under it.
pub fn walk(dir: &Path, mode: Mode, seen: &mut Seen) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        seen.errors += 1;
        return;
    };
    seen.dirs += 1;
    for entry in entries {
        let Ok(entry) = entry else {
            seen.errors += 1;
            continue;
        };
        if entry.file_name().to_str().is_none_or(is_ignored) {
            continue;
        }
        let Ok(ft) = entry.file_type() else {
            seen.errors += 1;
            continue;
        };
        let path = entry.path();
        if ft.is_dir() {
            walk(&path, mode, seen);
            continue;
        }
        if ft.is_symlink() && !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            continue;
        }
        if !(ft.is_file() || ft.is_symlink()) {
            continue;
        }
        let len = match mode {
            Mode::Read => std::fs::read(&path).map(|b| b.len() as u64),
            Mode::Stat => std::fs::metadata(&path).map(|m| m.len()),
        };
        match len {
            Ok(n) => {
                seen.files += 1;
                seen.bytes += n;
            }
            Err(_) => seen.errors += 1,
        }
    }
}
