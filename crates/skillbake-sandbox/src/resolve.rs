//! Every path [`crate::confine()`] works with, resolved once per call: [`Resolver`] keeps each
//! granted path's real place and status, and the status of the folders on the way to it, so that
//! the access check, the view's plan and the Landlock rules all see the same resolution instead
//! of asking the file system again for each of them. Paths are resolved one component at a
//! time with the status of every place on the way remembered, so that the granted paths sharing
//! folders (`/etc/...`, `/usr/...`) ask the file system once for each shared folder, and a
//! resolved path's own status is the one read on the way (a `readlink` only where there is a
//! link, not for every component).

use crate::Error;
use std::collections::HashMap;
use std::fs::Metadata;
use std::path::{Component, Path, PathBuf};

/// The most symbolic links followed while resolving one path (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// What a place on the way is, read once without following a link there.
#[derive(Debug, Clone)]
enum Step {
    /// A symbolic link, and what it holds.
    Link(PathBuf),
    /// Anything else (a folder, a file, a device), with its status.
    Node(Metadata),
}

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

/// The paths of one [`crate::confine()`] call, each resolved at most once.
#[derive(Debug, Default)]
pub(crate) struct Resolver {
    granted: HashMap<PathBuf, Real>,
    /// The status of folders (links followed) met on the way to a granted path; `None`: it could
    /// not be read.
    folders: HashMap<PathBuf, Option<Metadata>>,
    /// Every place read on the way to a resolved path, not following a link there.
    steps: HashMap<PathBuf, Step>,
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
            let (path, meta) = self.walk(p).map_err(path_err)?;
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

    /// The status of the folder `dir` (links followed), read once (or taken from a place read
    /// on the way to a resolved path).
    pub(crate) fn folder(&mut self, dir: &Path) -> Option<&Metadata> {
        if !self.folders.contains_key(dir) {
            let meta = match self.steps.get(dir) {
                Some(Step::Node(m)) => Some(m.clone()),
                _ => std::fs::metadata(dir).ok(),
            };
            self.folders.insert(dir.to_path_buf(), meta);
        }
        self.folders.get(dir).and_then(Option::as_ref)
    }

    /// What the symbolic link `at` holds; `None` when `at` is not a link (or cannot be read).
    pub(crate) fn link(&mut self, at: &Path) -> Option<PathBuf> {
        match self.step(at) {
            Ok(Step::Link(target)) => Some(target),
            _ => None,
        }
    }

    /// Where `p` really is (links followed), from the places already read where it can.
    pub(crate) fn canonical(&mut self, p: &Path) -> Option<PathBuf> {
        match self.granted.get(p) {
            Some(r) => Some(r.path.clone()),
            None => self.walk(p).ok().map(|(path, _)| path),
        }
    }

    /// What `std::fs::canonicalize` answers for `p` (every symbolic link followed, `.` and `..`
    /// taken as the kernel takes them), with the resolved path's status, reading each place on
    /// the way once per resolver.
    fn walk(&mut self, p: &Path) -> std::io::Result<(PathBuf, Metadata)> {
        let start = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir()?.join(p)
        };
        // The components still to walk, the next one last.
        let mut pending: Vec<PathBuf> = Vec::new();
        push_components(&mut pending, &start);
        let mut out = PathBuf::from("/");
        let mut meta = self.step(&out)?;
        let mut links = 0usize;
        while let Some(part) = pending.pop() {
            if part.as_os_str() == "/" {
                out = PathBuf::from("/");
                meta = self.step(&out)?;
                continue;
            }
            // Only a folder has anything below it (or a `..`).
            if !matches!(&meta, Step::Node(m) if m.is_dir()) {
                return Err(std::io::Error::from(std::io::ErrorKind::NotADirectory));
            }
            if part.as_os_str() == ".." {
                out.pop();
                meta = self.step(&out)?;
                continue;
            }
            let next = out.join(&part);
            match self.step(&next)? {
                Step::Link(target) => {
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(std::io::Error::other(format!(
                            "more than {MAX_LINKS} symbolic links on the way"
                        )));
                    }
                    // A relative target continues from the link's folder (`out`).
                    push_components(&mut pending, &target);
                }
                node => {
                    out = next;
                    meta = node;
                }
            }
        }
        match meta {
            Step::Node(m) => Ok((out, m)),
            Step::Link(_) => Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
        }
    }

    /// The place `at` read once, without following a link there.
    fn step(&mut self, at: &Path) -> std::io::Result<Step> {
        if let Some(s) = self.steps.get(at) {
            return Ok(s.clone());
        }
        let meta = std::fs::symlink_metadata(at)?;
        let step = if meta.is_symlink() {
            Step::Link(std::fs::read_link(at)?)
        } else {
            Step::Node(meta)
        };
        self.steps.insert(at.to_path_buf(), step.clone());
        Ok(step)
    }
}

/// Pushes the components of `p` onto `pending` so that the first is popped first: `/` for the
/// root, `..` as it is, `.` left out.
fn push_components(pending: &mut Vec<PathBuf>, p: &Path) {
    let parts: Vec<PathBuf> = p
        .components()
        .filter_map(|c| match c {
            Component::RootDir | Component::Prefix(_) => Some(PathBuf::from("/")),
            Component::CurDir => None,
            Component::ParentDir => Some(PathBuf::from("..")),
            Component::Normal(n) => Some(PathBuf::from(n)),
        })
        .collect();
    pending.extend(parts.into_iter().rev());
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

    #[test]
    fn the_walk_answers_what_canonicalize_answers() {
        let t = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(t.path()).unwrap();
        let b = |p: &str| base.join(p);
        std::fs::create_dir_all(b("a/b/c")).unwrap();
        std::fs::write(b("a/b/file"), "x").unwrap();
        std::os::unix::fs::symlink("b/c", b("a/rel")).unwrap();
        std::os::unix::fs::symlink(b("a/b"), b("abs")).unwrap();
        std::os::unix::fs::symlink("../abs", b("a/up")).unwrap();
        std::os::unix::fs::symlink("abs/file", b("to-file")).unwrap();
        std::os::unix::fs::symlink("loop2", b("loop1")).unwrap();
        std::os::unix::fs::symlink("loop1", b("loop2")).unwrap();
        std::os::unix::fs::symlink("nowhere", b("dangling")).unwrap();
        let cases = [
            "a/rel",
            "a/rel/..",
            "a/rel/../..",
            "abs/c/../file",
            "a/up/c",
            "a/up/./c/",
            "to-file",
            "a/b/../../a/./b",
            "a/b/file/..",
            "a/b/file/x",
            "to-file/..",
            "loop1",
            "dangling",
            "missing/x",
            "../../../../../../../..",
        ];
        let mut r = Resolver::new();
        for case in cases {
            let p = b(case);
            let want = std::fs::canonicalize(&p).ok();
            let got = r.walk(&p).ok();
            assert_eq!(got.as_ref().map(|g| &g.0), want.as_ref(), "{case}");
            if let (Some((path, meta)), Some(_)) = (&got, &want) {
                let m = std::fs::metadata(path).unwrap();
                assert_eq!((meta.is_dir(), meta.len()), (m.is_dir(), m.len()), "{case}");
            }
        }
        // A relative path starts in the working folder.
        let here = std::env::current_dir().unwrap();
        assert_eq!(
            r.walk(Path::new(".")).unwrap().0,
            std::fs::canonicalize(&here).unwrap()
        );
        // The folders on the way are known without asking again.
        assert!(r.steps.contains_key(&b("a/b")));
        assert!(r.folder(&b("a/b")).is_some_and(Metadata::is_dir));
    }
}
