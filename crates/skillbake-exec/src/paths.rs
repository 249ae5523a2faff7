//! Names and places on the file system that every step of a run shares: the one `PATH` lookup
//! ([`find_on`]), the one unique-name helper ([`unique`]), for run folders, the private
//! copies of packs and their temporary and discarded folders, and the folder that holds every
//! run's own folders ([`runs_dir`], private to each run in its view of the file system).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// A name no other folder of this process or of another one gets: `{prefix}-{pid}-{ns}-{n}`,
/// with a per-process counter `n` and the clock's nanoseconds.
pub(crate) fn unique(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{prefix}-{}-{nanos:09}-{n}", std::process::id())
}

/// The folder that holds the own folders of every run of this user (default output folders,
/// private homes, readable copies of packs): `<temporary folder>/skillbake-runs-<uid>`. Each
/// run's view of the file system replaces it by an empty folder with only that run's own
/// folders in it, so that no run sees another's.
pub(crate) fn runs_dir() -> PathBuf {
    #[cfg(unix)]
    let uid = rustix::process::geteuid().as_raw();
    #[cfg(not(unix))]
    let uid = 0;
    std::path::absolute(std::env::temp_dir())
        .unwrap_or_else(|_| std::env::temp_dir())
        .join(format!("skillbake-runs-{uid}"))
}

/// [`runs_dir`], made when missing (`0711` for root, whose runs' users must pass through it to
/// their own folders, else `0700`), and refused unless it is a folder of this user that no one
/// else may write (not a link another user planted in the shared temporary folder).
#[cfg(unix)]
pub(crate) fn make_runs_dir() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let dir = runs_dir();
    let euid = rustix::process::geteuid();
    let mode = if euid.is_root() { 0o711 } else { 0o700 };
    match std::fs::DirBuilder::new().mode(mode).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let m = std::fs::symlink_metadata(&dir)?;
    if !m.is_dir() || m.uid() != euid.as_raw() || m.mode() & 0o022 != 0 {
        return Err(std::io::Error::other(format!(
            "{} is not a folder of user {} that only it may write (owner {}, mode {:o}); remove it",
            dir.display(),
            euid.as_raw(),
            m.uid(),
            m.mode() & 0o7777
        )));
    }
    Ok(dir)
}

#[cfg(not(unix))]
pub(crate) fn make_runs_dir() -> std::io::Result<PathBuf> {
    let dir = runs_dir();
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// The first file named `name` in the absolute folders of the search path `path` (a `PATH`
/// value) that `accept` takes.
pub(crate) fn find_on(
    path: &OsStr,
    name: &OsStr,
    accept: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    std::env::split_paths(path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(name))
        .find(|p| p.is_file() && accept(p))
}

/// `program` on this process's `PATH`, executable, as an absolute path.
pub(crate) fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    find_on(&path, program.as_ref(), is_executable)
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(_: &Path) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_names_differ() {
        let (a, b) = (unique("run"), unique("run"));
        assert_ne!(a, b);
        assert!(a.starts_with(&format!("run-{}-", std::process::id())));
    }

    #[test]
    fn the_first_accepted_file_on_the_path_wins() {
        let tmp = tempfile::tempdir().unwrap();
        let (one, two) = (tmp.path().join("one"), tmp.path().join("two"));
        std::fs::create_dir_all(&one).unwrap();
        std::fs::create_dir_all(&two).unwrap();
        std::fs::write(two.join("tool"), "").unwrap();
        std::fs::write(one.join("tool"), "").unwrap();
        let path =
            std::env::join_paths(["relative".as_ref(), one.as_path(), two.as_path()]).unwrap();
        assert_eq!(
            find_on(&path, "tool".as_ref(), |_| true),
            Some(one.join("tool"))
        );
        assert_eq!(
            find_on(&path, "tool".as_ref(), |p| p.starts_with(&two)),
            Some(two.join("tool"))
        );
        assert_eq!(find_on(&path, "missing".as_ref(), |_| true), None);
    }
}
