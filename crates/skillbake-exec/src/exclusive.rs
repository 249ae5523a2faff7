//! Serialised runs for packs that must not run concurrently (`exclusive: true` in the
//! frontmatter, e.g. a pack that rewrites a configuration file): one run at a time per pack,
//! across the threads sharing an executor (a mutex per skill) and across processes using the
//! same cache folder (an exclusive `flock` on `<cache>/locks/<skill>.lock`). Other packs run
//! concurrently without any lock.

use std::fs::File;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

/// One mutex per skill of a registry.
#[derive(Debug)]
pub(crate) struct Locks {
    slots: Vec<Mutex<()>>,
}

/// Held while an exclusive pack runs.
pub(crate) struct Held<'a> {
    _thread: Option<MutexGuard<'a, ()>>,
    _file: Option<FileGuard>,
}

impl Locks {
    pub(crate) fn new(skills: usize) -> Self {
        Locks {
            slots: (0..skills).map(|_| Mutex::new(())).collect(),
        }
    }

    /// Waits until no other run of skill `ordinal` (named `name`) is going on, in this process
    /// or another using `cache_root`, and holds that until the guard is dropped. A lock file that
    /// cannot be made leaves the in-process lock alone in force, and the error is returned with
    /// the guard.
    pub(crate) fn acquire(
        &self,
        ordinal: usize,
        name: &str,
        cache_root: &Path,
    ) -> (Held<'_>, Option<String>) {
        let thread = self
            .slots
            .get(ordinal)
            .map(|m| m.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
        let (file, error) = match FileGuard::acquire(&cache_root.join("locks"), name) {
            Ok(f) => (Some(f), None),
            Err(e) => (
                None,
                Some(format!(
                    "the lock file under {} could not be used ({e}); other processes may run this pack at the same time",
                    cache_root.display()
                )),
            ),
        };
        (
            Held {
                _thread: thread,
                _file: file,
            },
            error,
        )
    }
}

/// Whether the skill's frontmatter says `exclusive: true`.
pub(crate) fn is_exclusive(skill: &skillbake::Skill<'_>) -> bool {
    skill.field_json("exclusive") == Some("true")
}

/// An exclusive `flock` on a lock file, released when dropped.
pub(crate) struct FileGuard {
    #[cfg(unix)]
    file: File,
}

impl FileGuard {
    #[cfg(unix)]
    fn acquire(dir: &Path, name: &str) -> std::io::Result<FileGuard> {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(dir.join(format!("{name}.lock")))?;
        loop {
            match rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive) {
                Ok(()) => return Ok(FileGuard { file }),
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    #[cfg(not(unix))]
    fn acquire(_dir: &Path, _name: &str) -> std::io::Result<FileGuard> {
        Err(std::io::Error::other("file locks need a Unix system"))
    }
}

#[cfg(unix)]
impl Drop for FileGuard {
    fn drop(&mut self) {
        let _ = rustix::fs::flock(&self.file, rustix::fs::FlockOperation::Unlock);
    }
}
