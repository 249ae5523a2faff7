//! Why `skillbake add` or `skillbake update` refused or failed: one variant per refusal, each
//! rendered with what was wrong and how to go on.

use super::lock::{Mismatch, LOCK_FILE};
use std::path::PathBuf;

/// Why vendoring refused or failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum VendorError {
    /// `git` could not be run, or failed unexpectedly.
    Git(String),
    /// The source could not be cloned.
    Clone {
        /// The source as given.
        source: String,
        /// What git said.
        message: String,
    },
    /// The revision names no commit of the source.
    UnknownRevision {
        /// The revision as given.
        rev: String,
        /// What git said.
        message: String,
    },
    /// `--path` leaves the repository.
    PathEscapes(String),
    /// No `SKILL.md` at the path.
    NoSkillMd {
        /// The source.
        source: String,
        /// The path inside it.
        path: String,
        /// The commit read.
        commit: String,
    },
    /// A symbolic link of the pack points outside it (or at a folder).
    SymlinkEscape {
        /// The link, inside the pack.
        path: String,
        /// Where it points.
        target: String,
    },
    /// The pack holds a submodule.
    Submodule(String),
    /// The pack's name cannot be a folder name (or none could be derived).
    InvalidName(String),
    /// The pack is vendored already (`add`).
    AlreadyVendored(String),
    /// A folder that the lock does not record holds the name (`add`).
    NotVendoredCollision {
        /// The name.
        name: String,
        /// The folder.
        dir: PathBuf,
    },
    /// No vendored pack of that name (`update`).
    NotVendored {
        /// The name asked for.
        name: String,
        /// The names the lock records.
        known: Vec<String>,
    },
    /// The pack's files were changed since they were vendored (`update` without `force`).
    Dirty {
        /// The name.
        name: String,
        /// Every difference.
        mismatches: Vec<Mismatch>,
    },
    /// `skills.lock` does not parse.
    LockInvalid(Vec<String>),
    /// Reading or writing the skills folder failed.
    Io(String),
}

impl std::fmt::Display for VendorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VendorError::Git(m) => write!(f, "git failed: {m}"),
            VendorError::Clone { source, message } => {
                write!(f, "cannot clone `{source}`: {message}")
            }
            VendorError::UnknownRevision { rev, message } => write!(
                f,
                "`{rev}` is no branch, tag or commit of the source: {message}"
            ),
            VendorError::PathEscapes(p) => write!(
                f,
                "`{p}` is not a folder inside the repository: give a `/`-separated path from its top, without `..`, `.` or a leading `/`"
            ),
            VendorError::NoSkillMd { source, path, commit } => write!(
                f,
                "`{source}` has no SKILL.md at `{}` in commit {commit}: give the pack's folder with --path",
                if path.is_empty() { "the top" } else { path }
            ),
            VendorError::SymlinkEscape { path, target } => write!(
                f,
                "refusing to vendor: `{path}` is a symbolic link to `{target}`, which is not a file inside the pack (ask the pack's authors to copy the file in)"
            ),
            VendorError::Submodule(p) => write!(
                f,
                "refusing to vendor: `{p}` is a git submodule, whose files are not part of the pack's repository"
            ),
            VendorError::InvalidName(n) => write!(
                f,
                "`{n}` cannot name a vendored pack: use --name with ASCII letters, digits, `.`, `_` and `-` (at most 64, starting with a letter or digit)"
            ),
            VendorError::AlreadyVendored(n) => write!(
                f,
                "`{n}` is vendored already: `skillbake update {n} [--rev REV]` moves it to another revision"
            ),
            VendorError::NotVendoredCollision { name, dir } => write!(
                f,
                "`{}` already holds a pack that {LOCK_FILE} does not record: choose another name with --name, or move `{name}` away first",
                dir.display()
            ),
            VendorError::NotVendored { name, known } => {
                write!(f, "`{name}` is not a vendored pack")?;
                match skillbake_format::suggest::closest(name, known.iter().map(String::as_str)) {
                    Some(s) => write!(f, "; {}", skillbake_format::suggest::did_you_mean(s)),
                    None if known.is_empty() => write!(f, "; {LOCK_FILE} records none (vendor one with `skillbake add SOURCE`)"),
                    None => write!(f, "; {LOCK_FILE} records {}", known.join(", ")),
                }
            }
            VendorError::Dirty { name, mismatches } => {
                write!(f, "refusing to update `{name}`: its files changed since they were vendored (")?;
                let shown: Vec<String> = mismatches.iter().take(3).map(Mismatch::describe).collect();
                write!(f, "{}", shown.join("; "))?;
                if mismatches.len() > 3 {
                    write!(f, "; and {} more", mismatches.len() - 3)?;
                }
                write!(f, "); revert the changes, or pass --force to discard them")
            }
            VendorError::LockInvalid(m) => write!(
                f,
                "{LOCK_FILE} is invalid ({}); `skillbake check --locked` shows where",
                m.join("; ")
            ),
            VendorError::Io(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for VendorError {}
