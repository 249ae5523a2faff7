//! Vendored packs: `skillbake add` copies a pack from another git repository into the skills
//! folder and records where it came from and the digest of every file in `skills.lock`;
//! `skillbake update` moves it to another revision; `skillbake check --locked` fails when the
//! copy no longer holds the locked bytes ([`lock`]).
//!
//! A pack is written into a hidden staging folder of the skills root (discovery skips dot
//! folders) and renamed into place, then the lock is replaced whole: an interrupted `add`
//! leaves no half pack behind.

mod error;
pub mod fetch;
pub mod license;
pub mod lock;

pub use error::VendorError;

pub use fetch::{Fetched, FetchedFile};
pub use lock::{Lock, Locked, Mismatch, LOCK_FILE};

use sha2::Digest as _;
use std::path::Path;

fn io(what: &str, path: &Path) -> impl FnOnce(std::io::Error) -> VendorError {
    let (what, path) = (what.to_string(), path.display().to_string());
    move |e| VendorError::Io(format!("cannot {what} `{path}`: {e}"))
}

/// The lock of the skills folder `root` (empty when there is none).
pub fn read_lock(root: &Path) -> Result<Lock, VendorError> {
    match Lock::read(root) {
        Ok(lock) => Ok(lock.unwrap_or_default()),
        Err((diags, _)) => Err(VendorError::LockInvalid(
            diags.into_iter().map(|d| d.message).collect(),
        )),
    }
}

/// What `add` or `update` recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vendored {
    /// The pack's name (its folder under the skills root).
    pub name: String,
    /// The lock entry written.
    pub entry: Locked,
    /// The entry it replaced (`update`).
    pub previous: Option<Locked>,
}

/// The name a pack gets when `--name` is not given: the last folder of its path in the
/// repository, or the repository's own name.
pub fn default_name(source: &str, path: &str) -> String {
    let from = if path.trim_matches('/').is_empty() {
        source.trim_end_matches(['/', '\\'])
    } else {
        path.trim_end_matches('/')
    };
    let last = from.rsplit(['/', '\\', ':']).next().unwrap_or(from);
    last.strip_suffix(".git").unwrap_or(last).to_string()
}

/// `skillbake add`: copies the pack at `path` of `source` at `rev` into `root/<name>` and records
/// it in the lock.
pub fn add(
    root: &Path,
    source: &str,
    rev: Option<&str>,
    path: &str,
    name: Option<&str>,
) -> Result<Vendored, VendorError> {
    let path = fetch::repo_path(path)?;
    let name = name.map_or_else(|| default_name(source, &path), str::to_string);
    if !lock::valid_name(&name) {
        return Err(VendorError::InvalidName(name));
    }
    let mut lock = read_lock(root)?;
    if lock.packs.contains_key(&name) {
        return Err(VendorError::AlreadyVendored(name));
    }
    let dir = root.join(&name);
    if std::fs::symlink_metadata(&dir).is_ok() {
        return Err(VendorError::NotVendoredCollision { name, dir });
    }
    let fetched = fetch::fetch(source, rev, &path)?;
    std::fs::create_dir_all(root).map_err(io("create", root))?;
    install(root, &name, &fetched.files)?;
    let entry = entry(source, rev, &path, &fetched);
    lock.packs.insert(name.clone(), entry.clone());
    lock.write(root)
        .map_err(io("write", &root.join(LOCK_FILE)))?;
    Ok(Vendored {
        name,
        entry,
        previous: None,
    })
}

/// `skillbake update`: moves vendored pack `name` to `rev` (default: the revision it follows),
/// refusing when its files were changed unless `force`. Returns the entries before and after;
/// the folder's files before the update are written under `old_copy/<name>` for a diff.
pub fn update(
    root: &Path,
    name: &str,
    rev: Option<&str>,
    force: bool,
    old_copy: &Path,
) -> Result<Vendored, VendorError> {
    let mut lock = read_lock(root)?;
    let Some(previous) = lock.packs.get(name).cloned() else {
        return Err(VendorError::NotVendored {
            name: name.to_string(),
            known: lock.packs.keys().cloned().collect(),
        });
    };
    let found = lock::mismatches(root, name, &previous).map_err(io("read", &root.join(name)))?;
    if !found.is_empty() && !force {
        return Err(VendorError::Dirty {
            name: name.to_string(),
            mismatches: found,
        });
    }
    let rev = rev.map(str::to_string).or_else(|| previous.rev.clone());
    let fetched = fetch::fetch(&previous.source, rev.as_deref(), &previous.path)?;
    copy_folder(&root.join(name), &old_copy.join(name))?;
    install(root, name, &fetched.files)?;
    let entry = entry(&previous.source, rev.as_deref(), &previous.path, &fetched);
    lock.packs.insert(name.to_string(), entry.clone());
    lock.write(root)
        .map_err(io("write", &root.join(LOCK_FILE)))?;
    Ok(Vendored {
        name: name.to_string(),
        entry,
        previous: Some(previous),
    })
}

fn entry(source: &str, rev: Option<&str>, path: &str, fetched: &Fetched) -> Locked {
    Locked {
        source: source.to_string(),
        rev: rev.map(str::to_string),
        commit: fetched.commit.clone(),
        path: path.to_string(),
        license: fetched.license.clone(),
        files: fetched
            .files
            .iter()
            .map(|f| (f.path.clone(), sha2::Sha256::digest(&f.bytes).into()))
            .collect(),
    }
}

/// Writes `files` to `dir` (which must not exist).
pub fn write_files(dir: &Path, files: &[FetchedFile]) -> Result<(), VendorError> {
    std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    for f in files {
        let dest = dir.join(&f.path);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(io("create", parent))?;
        }
        std::fs::write(&dest, &f.bytes).map_err(io("write", &dest))?;
        #[cfg(unix)]
        if f.executable {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(0o755))
                .map_err(io("write", &dest))?;
        }
    }
    Ok(())
}

/// Copies the regular files of `from` (when it exists) to `to`.
fn copy_folder(from: &Path, to: &Path) -> Result<(), VendorError> {
    std::fs::create_dir_all(to).map_err(io("create", to))?;
    if !from.is_dir() {
        return Ok(());
    }
    for entry in std::fs::read_dir(from).map_err(io("read", from))? {
        let entry = entry.map_err(io("read", from))?;
        let kind = entry.file_type().map_err(io("read", &entry.path()))?;
        let dest = to.join(entry.file_name());
        if kind.is_dir() {
            copy_folder(&entry.path(), &dest)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &dest).map_err(io("copy", &entry.path()))?;
        }
    }
    Ok(())
}

/// Puts `files` at `root/<name>`: written to a hidden staging folder, the old folder (if any)
/// moved aside, the staging folder renamed into place, the old one removed.
fn install(root: &Path, name: &str, files: &[FetchedFile]) -> Result<(), VendorError> {
    let pid = std::process::id();
    let staging = root.join(format!(".skillbake-add-{name}-{pid}"));
    let aside = root.join(format!(".skillbake-old-{name}-{pid}"));
    let _ = std::fs::remove_dir_all(&staging);
    if let Err(e) = write_files(&staging, files) {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    let dir = root.join(name);
    let had = std::fs::symlink_metadata(&dir).is_ok();
    if had {
        std::fs::rename(&dir, &aside).map_err(io("move", &dir))?;
    }
    if let Err(e) = std::fs::rename(&staging, &dir) {
        if had {
            let _ = std::fs::rename(&aside, &dir);
        }
        let _ = std::fs::remove_dir_all(&staging);
        return Err(io("create", &dir)(e));
    }
    if had {
        let _ = std::fs::remove_dir_all(&aside);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names() {
        assert_eq!(
            default_name("https://example.com/org/skills.git", ""),
            "skills"
        );
        assert_eq!(default_name("/tmp/repo/", ""), "repo");
        assert_eq!(default_name("x", "skills/pdf"), "pdf");
        assert_eq!(default_name("git@host:org/tools.git", ""), "tools");
    }

    #[test]
    fn paths_that_leave_the_repository_are_refused() {
        for bad in ["../x", "/etc", "a/../../b", "a\\b", "./a", "HEAD:x"] {
            assert!(
                matches!(fetch::repo_path(bad), Err(VendorError::PathEscapes(_))),
                "{bad}"
            );
        }
        assert_eq!(fetch::repo_path("/").ok(), None);
        assert_eq!(
            fetch::repo_path("skills/pdf/").ok().as_deref(),
            Some("skills/pdf")
        );
        assert_eq!(fetch::repo_path("").ok().as_deref(), Some(""));
    }
}
