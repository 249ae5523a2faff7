//! [`Error`]: why [`crate::confine()`] refused to prepare a command.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// Why a command could not be confined. Nothing has been started when this is returned.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A granted path could not be opened or resolved.
    Path {
        /// The path as given in the [`crate::Spec`].
        path: PathBuf,
        /// What the operating system said.
        source: io::Error,
    },
    /// The command's program was not found (searched in the `PATH` of [`crate::Spec::env`]
    /// when it has no `/`).
    ProgramNotFound {
        /// The program as the command names it.
        program: PathBuf,
    },
    /// The unprivileged user the child would run as cannot reach a granted path by the file's
    /// permission bits (a parent directory is not searchable, the file is not readable, the
    /// output folder is not writable). The child would fail on it; make the path accessible to
    /// that user (`chmod`/`chown`) or grant another path.
    Inaccessible {
        /// The path that the user cannot reach.
        path: PathBuf,
        /// The first component on the way that denies access (the path itself or a parent).
        denied_at: PathBuf,
        /// The user and group checked.
        uid: u32,
        /// The group checked.
        gid: u32,
        /// What is needed: `read`, `write` or `execute`.
        need: &'static str,
    },
    /// [`crate::Spec::run_as`] names root (uid or gid 0, or the invalid id `u32::MAX`); the
    /// child never runs as root.
    PrivilegedIdentity {
        /// The user id given.
        uid: u32,
        /// The group id given.
        gid: u32,
    },
    /// The kernel refused to build the Landlock ruleset although it reported support for it.
    Landlock(String),
    /// The seccomp filter could not be compiled.
    Seccomp(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Path { path, source } => {
                write!(
                    f,
                    "cannot open `{}` to grant access to it: {source}",
                    path.display()
                )
            }
            Error::ProgramNotFound { program } => write!(
                f,
                "program `{}` not found (a name without `/` is searched in the child's PATH)",
                program.display()
            ),
            Error::Inaccessible {
                path,
                denied_at,
                uid,
                gid,
                need,
            } => {
                if path == denied_at {
                    write!(
                        f,
                        "`{}` is not accessible ({need}) to the sandbox user {uid}:{gid}; change its \
                         permissions or owner",
                        path.display()
                    )
                } else {
                    write!(
                        f,
                        "`{}` is not accessible ({need}) to the sandbox user {uid}:{gid}: `{}` \
                         cannot be searched; change its permissions or owner",
                        path.display(),
                        denied_at.display()
                    )
                }
            }
            Error::PrivilegedIdentity { uid, gid } => write!(
                f,
                "the sandbox user {uid}:{gid} is root or invalid; choose an unprivileged user \
                 and group (the default is nobody, 65534:65534)"
            ),
            Error::Landlock(e) => write!(f, "cannot build the Landlock ruleset: {e}"),
            Error::Seccomp(e) => write!(f, "cannot build the seccomp filter: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Path { source, .. } => Some(source),
            _ => None,
        }
    }
}
