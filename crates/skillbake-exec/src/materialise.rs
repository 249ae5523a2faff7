//! Materialisation without trusting the disk: a pack's embedded files are written to a private
//! cache folder the first time the pack runs, and checked against the embedded bytes before
//! every run.
//!
//! * **Where**: `<cache>/packs/<name>-<hash>/`, where `<hash>` is a SHA-256 over the pack's
//!   name and every file's path and bytes, so two binaries embedding the same pack share one
//!   copy, and a changed pack never meets an old copy. `<cache>` is
//!   [`Policy::cache_dir`](super::Policy::cache_dir), else `$SKILLBAKE_CACHE_DIR`, else
//!   `$XDG_CACHE_HOME/skillbake`, else `~/.cache/skillbake`, else
//!   `<temp>/skillbake-cache-<uid>`. It must belong to the current user and not be writable by
//!   group or others; `packs/` is created with mode 0700.
//! * **How**: into a temporary sibling folder (mode 0700), files created exclusively (never
//!   through an existing name or link) and made read-only (0400; 0500 for files starting with
//!   `#!`), folders made 0500, then renamed into place in one step. A concurrent writer's copy
//!   wins the rename and ours is discarded.
//! * **Verification** before each run: the folder holds exactly the pack's files and folders —
//!   regular files (no links), with the expected modes and exactly the embedded bytes, and
//!   nothing else. A copy that differs in any way is moved aside and removed, and a fresh copy is
//!   written; the modified one is never executed.
//! * **The copy another user reads**: a root parent runs the script as an unprivileged user
//!   (`nobody`), who cannot read root's cache. It reads a second copy, made and verified the
//!   same way: `<temp>/skillbake-runs-0/views/<name>-<hash>-g<gid>/`, owned by root with that
//!   user's group `gid`, folders 0750 and files 0440 (0550 for `#!` files), below folders it
//!   may pass through but not list (0711). The runs of one pack share it: none of them may
//!   write it, each run's view of the file system holds only its own pack's copy, and a
//!   modified copy is replaced before the next run as the cache is.
//! * Removing the cache (or a copy for another user) is always safe: the next run writes it
//!   again. Nothing is written before the first run (a dry run writes nothing).

use crate::outcome::{ErrorCode, Failure};
use sha2::{Digest, Sha256};
use skillbake::Skill;
use std::path::{Path, PathBuf};

/// Where the cache lives when no policy says.
pub(crate) fn default_root() -> PathBuf {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = env("SKILLBAKE_CACHE_DIR") {
        return dir;
    }
    if let Some(dir) = env("XDG_CACHE_HOME").filter(|d| d.is_absolute()) {
        return dir.join("skillbake");
    }
    if let Some(home) = env("HOME").filter(|d| d.is_absolute()) {
        return home.join(".cache").join("skillbake");
    }
    std::env::temp_dir().join(format!("skillbake-cache-{}", uid()))
}

#[cfg(unix)]
fn uid() -> u32 {
    rustix::process::getuid().as_raw()
}

#[cfg(not(unix))]
fn uid() -> u32 {
    0
}

/// The folder name of a pack's copy: `<name>-<32 hex digits of SHA-256>`.
pub(crate) fn key(skill: &Skill<'_>) -> String {
    let mut h = Sha256::new();
    h.update(b"skillbake-pack-v1\0");
    h.update(skill.name().as_bytes());
    h.update(b"\0");
    for f in skill.files() {
        h.update(f.path().as_bytes());
        h.update(b"\0");
        h.update((f.bytes().len() as u64).to_le_bytes());
        h.update(f.bytes());
    }
    let digest = h.finalize();
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("{}-{hex}", skill.name())
}

/// The folder a pack's copy has (or will have) under `root`.
pub(crate) fn pack_dir(root: &Path, key: &str) -> PathBuf {
    root.join("packs").join(key)
}

/// Who may read a copy, and so its modes.
#[cfg(unix)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    /// The group the copy is handed to, or `None` for the user's own copy (its group is left
    /// as created).
    group: Option<u32>,
    /// The mode of every folder.
    dir: u32,
    /// The mode of a file, and of a file that starts with `#!`.
    file: u32,
    script: u32,
}

#[cfg(unix)]
impl Layout {
    /// The user's own copy: folders 0500, files 0400 (0500 for `#!` files).
    pub(crate) const OWN: Layout = Layout {
        group: None,
        dir: 0o500,
        file: 0o400,
        script: 0o500,
    };

    /// A copy the group `gid` may read: folders 0750, files 0440 (0550 for `#!` files).
    pub(crate) const fn readable_by(gid: u32) -> Layout {
        Layout {
            group: Some(gid),
            dir: 0o750,
            file: 0o440,
            script: 0o550,
        }
    }

    fn file_mode(&self, bytes: &[u8]) -> u32 {
        if bytes.starts_with(b"#!") {
            self.script
        } else {
            self.file
        }
    }
}

/// The verified copy of a pack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Materialised {
    /// The folder.
    pub dir: PathBuf,
    /// Whether a modified copy was replaced.
    pub rewritten: bool,
}

fn io_failure(what: &str, path: &Path, e: &std::io::Error) -> Failure {
    Failure::new(
        ErrorCode::ExecFailed,
        format!(
            "The skill could not be prepared to run: cannot {what} {} ({e}). Check that the cache folder is writable, or choose another one (SKILLBAKE_CACHE_DIR or --cache-dir).",
            path.display()
        ),
    )
}

#[cfg(not(unix))]
pub(crate) fn ensure(
    _root: &Path,
    _skill: &Skill<'_>,
    _key: &str,
) -> Result<Materialised, Failure> {
    Err(Failure::new(
        ErrorCode::NotRunnable,
        "Running skills needs a Unix system (Linux, macOS or a BSD).",
    ))
}

/// Makes sure `root/packs/<key>` is an exact copy of `skill`'s files and returns it.
#[cfg(unix)]
pub(crate) fn ensure(root: &Path, skill: &Skill<'_>, key: &str) -> Result<Materialised, Failure> {
    let packs = private_dir(root)?;
    let packs = private_subdir(&packs, "packs", 0o700)?;
    ensure_in(&packs, key, skill, Layout::OWN)
}

/// The copy of `skill` that the group `gid` may read, for a root parent whose script runs as
/// another user (root's own cache is private to root): `<runs>/views/<key>-g<gid>/` (see
/// [`crate::paths::runs_dir`]), owned by root with the group `gid`, written the first time and
/// verified like the cache before every run, shared by the runs of that pack and group (none
/// of them may write it, and each run sees only its own pack's copy).
#[cfg(unix)]
pub(crate) fn readable_copy(
    skill: &Skill<'_>,
    key: &str,
    gid: u32,
) -> Result<Materialised, Failure> {
    let runs = crate::paths::make_runs_dir()
        .map_err(|e| io_failure("use", &crate::paths::runs_dir(), &e))?;
    // Passed through by the group, never listed.
    let views = private_subdir(&runs, "views", 0o711)?;
    ensure_in(
        &views,
        &format!("{key}-g{gid}"),
        skill,
        Layout::readable_by(gid),
    )
}

/// Makes sure `parent/name` is an exact copy of `skill`'s files in `layout` and returns it.
#[cfg(unix)]
fn ensure_in(
    parent: &Path,
    name: &str,
    skill: &Skill<'_>,
    layout: Layout,
) -> Result<Materialised, Failure> {
    let dir = parent.join(name);
    let mut rewritten = false;
    for _ in 0..3 {
        match std::fs::symlink_metadata(&dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                write_copy(parent, &dir, skill, layout)?;
            }
            Err(e) => return Err(io_failure("inspect", &dir, &e)),
            Ok(_) => {}
        }
        if verify(&dir, skill, layout) {
            return Ok(Materialised { dir, rewritten });
        }
        discard(parent, &dir)?;
        rewritten = true;
    }
    Err(Failure::new(
        ErrorCode::ExecFailed,
        format!(
            "The skill could not be prepared to run: its copy in {} keeps changing while it is written. Another process is modifying the cache.",
            dir.display()
        ),
    ))
}

/// Creates `dir` (and missing parents) and checks that it is the user's own and private.
#[cfg(unix)]
fn private_dir(dir: &Path) -> Result<PathBuf, Failure> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| io_failure("create", dir, &e))?;
    let meta = std::fs::metadata(dir).map_err(|e| io_failure("inspect", dir, &e))?;
    if !meta.is_dir() {
        return Err(io_failure(
            "use",
            dir,
            &std::io::Error::other("it is not a folder"),
        ));
    }
    if meta.uid() != uid() {
        return Err(Failure::new(
            ErrorCode::ExecFailed,
            format!(
                "The skill could not be prepared to run: the cache folder {} belongs to another user. Remove it, or choose another one (SKILLBAKE_CACHE_DIR or --cache-dir).",
                dir.display()
            ),
        ));
    }
    if meta.mode() & 0o022 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| io_failure("make private", dir, &e))?;
    }
    Ok(dir.to_path_buf())
}

/// `parent/name`, a real folder (not a link) of the user's own, `mode` (0700 or 0711).
#[cfg(unix)]
fn private_subdir(parent: &Path, name: &str, mode: u32) -> Result<PathBuf, Failure> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let dir = parent.join(name);
    match std::fs::DirBuilder::new().mode(mode).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io_failure("create", &dir, &e)),
    }
    let meta = std::fs::symlink_metadata(&dir).map_err(|e| io_failure("inspect", &dir, &e))?;
    if !meta.is_dir() || meta.uid() != uid() {
        return Err(Failure::new(
            ErrorCode::ExecFailed,
            format!(
                "The skill could not be prepared to run: {} is not a private folder of this user (a link, a file, or someone else's). Remove it; the cache is rebuilt on the next run.",
                dir.display()
            ),
        ));
    }
    if meta.mode() & 0o7777 != mode {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode))
            .map_err(|e| io_failure("make private", &dir, &e))?;
    }
    Ok(dir)
}

/// Writes a fresh copy in `layout` into a temporary sibling and renames it to `dir`.
#[cfg(unix)]
fn write_copy(packs: &Path, dir: &Path, skill: &Skill<'_>, layout: Layout) -> Result<(), Failure> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
    let tmp = packs.join(format!(".{}", crate::paths::unique("tmp")));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&tmp)
        .map_err(|e| io_failure("create", &tmp, &e))?;
    let result = (|| {
        let mut dirs: Vec<PathBuf> = Vec::new();
        for f in skill.files() {
            let path = tmp.join(f.path());
            if let Some(parent) = path.parent() {
                if parent != tmp && !parent.exists() {
                    std::fs::DirBuilder::new()
                        .recursive(true)
                        .mode(0o700)
                        .create(parent)
                        .map_err(|e| io_failure("create", parent, &e))?;
                }
                let mut p = parent;
                while p != tmp && p.starts_with(&tmp) {
                    if !dirs.iter().any(|d| d == p) {
                        dirs.push(p.to_path_buf());
                    }
                    p = match p.parent() {
                        Some(up) => up,
                        None => break,
                    };
                }
            }
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
                .map_err(|e| io_failure("write", &path, &e))?;
            // No fsync: a copy cut short by a crash fails verification and is written again.
            file.write_all(f.bytes())
                .map_err(|e| io_failure("write", &path, &e))?;
            if let Some(gid) = layout.group {
                std::os::unix::fs::fchown(&file, None, Some(gid))
                    .map_err(|e| io_failure("hand over", &path, &e))?;
            }
            let mode = layout.file_mode(f.bytes());
            file.set_permissions(std::fs::Permissions::from_mode(mode))
                .map_err(|e| io_failure("protect", &path, &e))?;
        }
        // Deepest first, so no folder loses its write bit before its content is in.
        dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
        for d in dirs.iter().chain(std::iter::once(&tmp)) {
            if let Some(gid) = layout.group {
                std::os::unix::fs::chown(d, None, Some(gid))
                    .map_err(|e| io_failure("hand over", d, &e))?;
            }
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(layout.dir))
                .map_err(|e| io_failure("protect", d, &e))?;
        }
        Ok(())
    })();
    if let Err(e) = result {
        remove_tree(&tmp);
        return Err(e);
    }
    match std::fs::rename(&tmp, dir) {
        Ok(()) => Ok(()),
        // Another process (or thread) put its copy in place first: use that one.
        Err(_) if std::fs::symlink_metadata(dir).is_ok() => {
            remove_tree(&tmp);
            Ok(())
        }
        Err(e) => {
            remove_tree(&tmp);
            Err(io_failure("install", dir, &e))
        }
    }
}

/// Whether `dir` holds exactly the pack's files, read-only, byte for byte, and nothing else,
/// owned by this user (and by `layout`'s group) with `layout`'s modes.
#[cfg(unix)]
fn verify(dir: &Path, skill: &Skill<'_>, layout: Layout) -> bool {
    use std::collections::BTreeMap;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let mut expected: BTreeMap<String, Option<skillbake::File>> = BTreeMap::new();
    for f in skill.files() {
        let mut path = f.path();
        expected.insert(path.to_string(), Some(f));
        while let Some((parent, _)) = path.rsplit_once('/') {
            expected.entry(parent.to_string()).or_insert(None);
            path = parent;
        }
    }
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return false;
    };
    let owned =
        |m: &std::fs::Metadata| m.uid() == uid() && layout.group.is_none_or(|gid| m.gid() == gid);
    if !meta.is_dir() || !owned(&meta) || meta.permissions().mode() & 0o7777 != layout.dir {
        return false;
    }
    let mut seen = 0usize;
    let mut stack: Vec<(PathBuf, String)> = vec![(dir.to_path_buf(), String::new())];
    while let Some((path, rel)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&path) else {
            return false;
        };
        for entry in entries {
            let Ok(entry) = entry else { return false };
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                return false;
            };
            let rel = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            let Some(want) = expected.get(&rel) else {
                return false;
            };
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
                return false;
            };
            if !owned(&meta) {
                return false;
            }
            let mode = meta.permissions().mode() & 0o7777;
            match want {
                None if meta.is_dir() && mode == layout.dir => {
                    stack.push((entry.path(), rel));
                }
                Some(f) if meta.is_file() && mode == layout.file_mode(f.bytes()) => {
                    if meta.len() != f.bytes().len() as u64 {
                        return false;
                    }
                    match std::fs::read(entry.path()) {
                        Ok(bytes) if bytes == f.bytes() => {}
                        _ => return false,
                    }
                }
                _ => return false,
            }
            seen += 1;
        }
    }
    seen == expected.len()
}

/// Moves a modified copy aside, then removes it.
#[cfg(unix)]
fn discard(packs: &Path, dir: &Path) -> Result<(), Failure> {
    let trash = packs.join(format!(".{}", crate::paths::unique("trash")));
    std::fs::rename(dir, &trash).map_err(|e| io_failure("replace the modified copy", dir, &e))?;
    remove_tree(&trash);
    Ok(())
}

/// Removes a tree whose folders may be read-only (best effort).
#[cfg(unix)]
pub(crate) fn remove_tree(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        if let Ok(meta) = std::fs::symlink_metadata(&d) {
            if meta.is_dir() {
                let _ = std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700));
                if let Ok(entries) = std::fs::read_dir(&d) {
                    stack.extend(entries.flatten().map(|e| e.path()));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}
