//! Can the unprivileged user the child runs as reach a granted path by its permission bits?
//! Checked in the parent before anything starts, so that a root parent handing a `0700` folder
//! to `nobody` gets a clear [`Error::Inaccessible`] instead of a script failing on `EACCES`.
//! POSIX ACLs are not consulted (the bits are what most systems use).

use crate::resolve::Resolver;
use crate::{Error, Identity};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// What [`check_access`](crate::check_access) checks a path for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read a file, or list and enter a directory.
    Read,
    /// Modify a file, or create and remove entries in a directory.
    Write,
    /// Execute a file.
    Execute,
}

/// What the child needs on the path itself (every parent directory needs search).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Need {
    Read,
    Write,
    Execute,
}

impl Need {
    fn name(self) -> &'static str {
        match self {
            Need::Read => "read",
            Need::Write => "write",
            Need::Execute => "execute",
        }
    }
}

const R: u32 = 4;
const W: u32 = 2;
const X: u32 = 1;

/// The permission bits (`rwx` as 4/2/1) `who` has on a file with this metadata.
fn bits(meta: &std::fs::Metadata, who: Identity) -> u32 {
    let mode = meta.mode();
    if meta.uid() == who.uid {
        (mode >> 6) & 7
    } else if meta.gid() == who.gid {
        (mode >> 3) & 7
    } else {
        mode & 7
    }
}

/// Checks that `who` can reach `given` (resolved by `paths`, which also remembers the folders on
/// the way) and use it as `need` says.
pub(crate) fn check(
    paths: &mut Resolver,
    given: &Path,
    who: Identity,
    need: Need,
) -> Result<(), Error> {
    let deny = |at: &Path| Error::Inaccessible {
        path: given.to_path_buf(),
        denied_at: at.to_path_buf(),
        uid: who.uid,
        gid: who.gid,
        need: need.name(),
    };
    let real = paths.real(given)?.clone();
    let mut ancestors: Vec<PathBuf> = real
        .path
        .ancestors()
        .skip(1)
        .map(Path::to_path_buf)
        .collect();
    ancestors.reverse();
    for dir in &ancestors {
        let Some(meta) = paths.folder(dir) else {
            continue;
        };
        if bits(meta, who) & X == 0 {
            return Err(deny(dir));
        }
    }
    let meta = &real.meta;
    let have = bits(meta, who);
    let want = match need {
        Need::Read if meta.is_dir() => R | X,
        Need::Read => R,
        Need::Write if meta.is_dir() => R | W | X,
        Need::Write => R | W,
        // The kernel also needs to read a script to run it; an ELF needs only `x`.
        Need::Execute => X,
    };
    if have & want != want {
        return Err(deny(&real.path));
    }
    Ok(())
}
