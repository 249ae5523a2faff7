//! Every path [`crate::confine`] works with, resolved once per call: [`Resolver`] keeps each
//! granted path's real place and status, and the status of the folders on the way to it, so that
//! the access check, the view's plan and the Landlock rules all see the same resolution instead
//! of asking the file system again for each of them.

use crate::Error;
use std::collections::HashMap;
use std::fs::Metadata;
use std::path::{Path, PathBuf};

/// A granted path resolved: where it really is (symbolic links followed), and its status there.
#[derive(Debug, Clone)]
pub(crate) struct Real {
    pub(crate) path: PathBuf,
    pub(crate) meta: Metadata,
}

impl Real {
    pub(crate) fn is_dir(&self) -> bool {
        self.meta.is_dir()
    }
}

/// The paths of one [`crate::confine`] call, each resolved at most once.
#[derive(Debug, Default)]
pub(crate) struct Resolver {
    granted: HashMap<PathBuf, Real>,
    /// The status of folders (links followed) met on the way to a granted path; `None`: it could
    /// not be read.
    folders: HashMap<PathBuf, Option<Metadata>>,
}

impl Resolver {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Where `p` really is and its status there; an error when it does not exist or cannot be
    /// resolved.
    pub(crate) fn real(&mut self, p: &Path) -> Result<&Real, Error> {
        if !self.granted.contains_key(p) {
            let path_err = |source| Error::Path {
                path: p.to_path_buf(),
                source,
            };
            let path = std::fs::canonicalize(p).map_err(path_err)?;
            let meta = std::fs::metadata(&path).map_err(path_err)?;
            self.granted.insert(p.to_path_buf(), Real { path, meta });
        }
        self.granted.get(p).ok_or_else(|| Error::Path {
            path: p.to_path_buf(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        })
    }

    /// `p` resolved by an earlier [`Resolver::real`].
    pub(crate) fn known(&self, p: &Path) -> Option<&Real> {
        self.granted.get(p)
    }

    /// The status of the folder `dir` (links followed), read once.
    pub(crate) fn folder(&mut self, dir: &Path) -> Option<&Metadata> {
        self.folders
            .entry(dir.to_path_buf())
            .or_insert_with(|| std::fs::metadata(dir).ok())
            .as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_resolved_through_its_links_and_remembered() {
        let t = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(t.path()).unwrap();
        std::fs::create_dir(base.join("real")).unwrap();
        std::os::unix::fs::symlink("real", base.join("link")).unwrap();
        let mut r = Resolver::new();
        let real = r.real(&base.join("link")).unwrap().clone();
        assert_eq!(real.path, base.join("real"));
        assert!(real.is_dir());
        // The answer stays the one of the first resolution.
        std::fs::remove_file(base.join("link")).unwrap();
        assert_eq!(r.real(&base.join("link")).unwrap().path, base.join("real"));
        assert!(r.known(&base.join("link")).is_some());
        // A path that does not exist is an error naming it.
        let missing = base.join("missing");
        match r.real(&missing) {
            Err(Error::Path { path, .. }) => assert_eq!(path, missing),
            other => panic!("{other:?}"),
        }
        assert!(r.folder(&base).is_some_and(Metadata::is_dir));
        assert!(r.folder(&missing).is_none());
    }
}
