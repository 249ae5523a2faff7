//! A skills folder as it was at a git revision, read through git without a checkout: `git
//! ls-tree` lists the blobs under the folder and one `git cat-file --batch` process streams
//! them into a private temporary folder (mode 0700 on Unix), which the normal check then reads
//! like any folder and which is removed when the [`Tree`] is dropped. The working tree, the index
//! and `HEAD` are never touched; nothing but `git` itself is needed.
//!
//! Executable files (mode `100755`) stay executable and symbolic links (mode `120000`) become
//! links again on Unix (discovery then applies its usual
//! containment rules); submodules are skipped; paths with `..` or a leading `/` are refused.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};

/// Why a revision could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum GitError {
    /// `git` could not be started.
    NoGit(std::io::Error),
    /// The folder is not inside a git work tree.
    NotARepository(String),
    /// The revision names no commit or tree.
    UnknownRevision {
        /// The revision as given.
        rev: String,
        /// What git said.
        message: String,
    },
    /// Git failed or answered unexpectedly.
    Git(String),
    /// Writing the temporary copy failed.
    Io(std::io::Error),
}

impl std::fmt::Display for GitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GitError::NoGit(e) => write!(f, "cannot run git: {e}"),
            GitError::NotARepository(m) => write!(f, "not inside a git repository: {m}"),
            GitError::UnknownRevision { rev, message } => {
                write!(f, "`{rev}` is not a revision of this repository: {message}")
            }
            GitError::Git(m) => write!(f, "git failed: {m}"),
            GitError::Io(e) => write!(f, "cannot write the revision's files: {e}"),
        }
    }
}

impl std::error::Error for GitError {}

/// A skills folder read from a revision into a temporary folder, removed on drop.
#[derive(Debug)]
pub struct Tree {
    temp: PathBuf,
    root: PathBuf,
    label: String,
    files: usize,
}

impl Tree {
    /// The skills folder as it was (inside the temporary folder).
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// `REV:PATH`, for reports.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// How many files the revision has under the folder (0 when it did not exist there).
    pub fn files(&self) -> usize {
        self.files
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.temp);
    }
}

pub(crate) fn git(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE");
    c
}

pub(crate) fn output(mut cmd: Command) -> Result<Vec<u8>, (bool, String)> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| (false, format!("cannot run git: {e}")))?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err((
            true,
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ))
    }
}

/// The work tree's top folder holding `dir`, and `dir` relative to it (`/`-separated, `""` at
/// the top).
pub fn locate(dir: &Path) -> Result<(PathBuf, String), GitError> {
    let mut cmd = git(dir);
    cmd.args(["rev-parse", "--show-toplevel"]);
    let top = match output(cmd) {
        Ok(out) => PathBuf::from(String::from_utf8_lossy(&out).trim_end_matches(['\n', '\r'])),
        Err((false, m)) => return Err(GitError::NoGit(std::io::Error::other(m))),
        Err((true, m)) => return Err(GitError::NotARepository(m)),
    };
    let canon_top = std::fs::canonicalize(&top).map_err(GitError::Io)?;
    let canon_dir = std::fs::canonicalize(dir).map_err(GitError::Io)?;
    let rel = canon_dir.strip_prefix(&canon_top).map_err(|_| {
        GitError::NotARepository(format!("{} is outside {}", dir.display(), top.display()))
    })?;
    let rel = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    Ok((canon_top, rel))
}

/// A fresh private temporary folder.
pub(crate) fn temp_dir() -> Result<PathBuf, GitError> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let base = std::env::temp_dir();
    for _ in 0..100 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = base.join(format!(
            "skillbake-baseline-{}-{nanos:x}-{n}",
            std::process::id()
        ));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        match builder.create(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(GitError::Io(e)),
        }
    }
    Err(GitError::Io(std::io::Error::other(
        "no free name for a temporary folder",
    )))
}

/// A path from a git tree as a relative path, or `None` when it could escape.
fn safe_relative(raw: &[u8]) -> Option<PathBuf> {
    #[cfg(unix)]
    let path = {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(std::ffi::OsStr::from_bytes(raw))
    };
    #[cfg(not(unix))]
    let path = PathBuf::from(std::str::from_utf8(raw).ok()?);
    path.components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then_some(path)
}

/// One blob to write.
struct Entry {
    mode: String,
    oid: String,
    path: PathBuf,
}

/// Reads the folder `path` (relative to the top of the work tree holding `repo`, `/`-separated;
/// `""` for the whole tree) as it is at revision `rev`.
pub fn read(repo: &Path, rev: &str, path: &str) -> Result<Tree, GitError> {
    let (top, _) = locate(repo)?;
    let mut cmd = git(&top);
    cmd.args(["rev-parse", "--verify", "--end-of-options"])
        .arg(format!("{rev}^{{tree}}"));
    let tree = match output(cmd) {
        Ok(out) => String::from_utf8_lossy(&out).trim().to_string(),
        Err((false, m)) => return Err(GitError::NoGit(std::io::Error::other(m))),
        Err((true, m)) => {
            return Err(GitError::UnknownRevision {
                rev: rev.to_string(),
                message: if m.is_empty() {
                    "unknown revision".into()
                } else {
                    m
                },
            })
        }
    };
    let path = path.trim_matches('/');
    let mut cmd = git(&top);
    cmd.args(["ls-tree", "-r", "-z", "--full-tree", &tree]);
    if !path.is_empty() {
        cmd.arg("--").arg(path);
    }
    let listing = output(cmd).map_err(|(_, m)| GitError::Git(m))?;
    let prefix = if path.is_empty() {
        String::new()
    } else {
        format!("{path}/")
    };
    let mut entries = Vec::new();
    for record in listing.split(|&b| b == 0).filter(|r| !r.is_empty()) {
        // `<mode> SP <type> SP <object> TAB <path>`
        let Some(tab) = record.iter().position(|&b| b == b'\t') else {
            return Err(GitError::Git("unexpected `git ls-tree` output".into()));
        };
        let head = String::from_utf8_lossy(&record[..tab]).into_owned();
        let raw_path = &record[tab + 1..];
        let mut parts = head.split(' ');
        let (Some(mode), Some(kind), Some(oid)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(GitError::Git("unexpected `git ls-tree` output".into()));
        };
        if kind != "blob" {
            continue; // submodules
        }
        let Some(inside) = raw_path.strip_prefix(prefix.as_bytes()) else {
            continue;
        };
        let Some(rel) = safe_relative(inside) else {
            continue;
        };
        entries.push(Entry {
            mode: mode.to_string(),
            oid: oid.to_string(),
            path: rel,
        });
    }
    let temp = temp_dir()?;
    let root = if path.is_empty() {
        temp.join("tree")
    } else {
        temp.join(path.rsplit('/').next().unwrap_or("skills"))
    };
    let tree_obj = Tree {
        temp,
        root,
        label: format!("{rev}:{path}"),
        files: entries.len(),
    };
    std::fs::create_dir_all(&tree_obj.root).map_err(GitError::Io)?;
    write_blobs(&top, &tree_obj.root, &entries)?;
    Ok(tree_obj)
}

/// Streams every blob through one `git cat-file --batch` and writes it under `root`.
fn write_blobs(top: &Path, root: &Path, entries: &[Entry]) -> Result<(), GitError> {
    if entries.is_empty() {
        return Ok(());
    }
    let mut child = git(top)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(GitError::NoGit)?;
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| GitError::Git("no stdin for git cat-file".into()))?;
    let ids: String = entries.iter().map(|e| format!("{}\n", e.oid)).collect();
    // Write from another thread: git answers while it reads, and a full pipe would block both.
    let writer = std::thread::spawn(move || {
        let r = stdin.write_all(ids.as_bytes());
        drop(stdin);
        r
    });
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| GitError::Git("no stdout for git cat-file".into()))?;
    let mut reader = BufReader::new(stdout);
    let result = (|| {
        for e in entries {
            let mut header = String::new();
            reader.read_line(&mut header).map_err(GitError::Io)?;
            // `<oid> SP blob SP <size> LF`
            let size: usize = header
                .split_whitespace()
                .nth(2)
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| {
                    GitError::Git(format!(
                        "unexpected `git cat-file` output: {}",
                        header.trim()
                    ))
                })?;
            let mut bytes = vec![0u8; size];
            reader.read_exact(&mut bytes).map_err(GitError::Io)?;
            let mut newline = [0u8; 1];
            reader.read_exact(&mut newline).map_err(GitError::Io)?;
            let dest = root.join(&e.path);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent).map_err(GitError::Io)?;
            }
            if e.mode == "120000" {
                #[cfg(unix)]
                {
                    use std::os::unix::ffi::OsStrExt;
                    let target = std::ffi::OsStr::from_bytes(&bytes);
                    std::os::unix::fs::symlink(target, &dest).map_err(GitError::Io)?;
                }
                #[cfg(not(unix))]
                std::fs::write(&dest, &bytes).map_err(GitError::Io)?;
            } else {
                std::fs::write(&dest, &bytes).map_err(GitError::Io)?;
                #[cfg(unix)]
                if e.mode == "100755" {
                    use std::os::unix::fs::PermissionsExt;
                    std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(0o755))
                        .map_err(GitError::Io)?;
                }
            }
        }
        Ok(())
    })();
    let _ = writer.join();
    let status = child.wait().map_err(GitError::Io)?;
    result?;
    if !status.success() {
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        return Err(GitError::Git(err.trim().to_string()));
    }
    Ok(())
}
