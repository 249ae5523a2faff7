//! A pack as it is in another git repository at a revision: cloned without a checkout into a
//! private temporary folder, the revision resolved to a commit, the pack's folder read through
//! `git ls-tree`/`cat-file` (the same reader `skillbake diff` uses), then taken apart into files
//! with their bytes. Nothing runs but `git`; no hook or filter of the other repository runs,
//! since nothing is checked out.
//!
//! Refused: a path that leaves the repository, a folder without `SKILL.md`, a symbolic link
//! that points outside the pack (or at a folder), a submodule.

use super::error::VendorError;
use super::license;
use crate::diff::git::{self, GitError};
use std::path::{Path, PathBuf};

/// One file of a fetched pack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchedFile {
    /// `/`-separated path inside the pack.
    pub path: String,
    /// The exact bytes (a symbolic link inside the pack: its target's).
    pub bytes: Vec<u8>,
    /// Whether git records it as executable.
    pub executable: bool,
}

/// A pack read from a repository at one commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The commit the revision resolved to.
    pub commit: String,
    /// Every file, sorted by path.
    pub files: Vec<FetchedFile>,
    /// An SPDX expression, or `unknown`.
    pub license: String,
}

/// A temporary clone, removed on drop.
struct Clone {
    temp: PathBuf,
    repo: PathBuf,
}

impl Drop for Clone {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.temp);
    }
}

fn git_error(e: GitError) -> VendorError {
    VendorError::Git(e.to_string())
}

/// `path` as a `/`-separated path inside a repository (`""`: its top), or why it is not one.
pub fn repo_path(path: &str) -> Result<String, VendorError> {
    let trimmed = path.trim_matches('/');
    let escapes = path.starts_with('/')
        || path.contains('\\')
        || trimmed.split('/').any(|p| p == ".." || p == ".")
        || path.contains(':');
    if escapes {
        return Err(VendorError::PathEscapes(path.to_string()));
    }
    Ok(trimmed
        .split('/')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("/"))
}

fn clone(source: &str) -> Result<Clone, VendorError> {
    let temp = git::temp_dir().map_err(git_error)?;
    let repo = temp.join("repo");
    let clone = Clone { temp, repo };
    // A local path is relative to where skillbake runs, not to the temporary folder.
    let local = Path::new(source);
    let from = match local.exists().then(|| std::fs::canonicalize(local)) {
        Some(Ok(p)) => p.into_os_string(),
        _ => source.into(),
    };
    let mut cmd = git::git(&clone.temp);
    cmd.args(["clone", "--quiet", "--no-checkout", "--"])
        .arg(from)
        .arg(&clone.repo);
    match git::output(cmd) {
        Ok(_) => Ok(clone),
        Err((false, m)) => Err(VendorError::Git(m)),
        Err((true, m)) => Err(VendorError::Clone {
            source: source.to_string(),
            message: m,
        }),
    }
}

/// The commit `rev` names in the clone: a commit, a tag, or a branch of the source (`origin/`);
/// `None` asks for the source's `HEAD`.
fn resolve(repo: &Path, rev: Option<&str>) -> Result<String, VendorError> {
    let candidates: Vec<String> = match rev {
        None => vec!["HEAD".into()],
        Some(r) => vec![r.to_string(), format!("origin/{r}")],
    };
    let mut last = String::new();
    for c in &candidates {
        let mut cmd = git::git(repo);
        cmd.args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
            .arg(format!("{c}^{{commit}}"));
        match git::output(cmd) {
            Ok(out) => return Ok(String::from_utf8_lossy(&out).trim().to_string()),
            Err((false, m)) => return Err(VendorError::Git(m)),
            Err((true, m)) => last = m,
        }
    }
    Err(VendorError::UnknownRevision {
        rev: rev.unwrap_or("HEAD").to_string(),
        message: if last.is_empty() {
            "no such branch, tag or commit".into()
        } else {
            last
        },
    })
}

/// The bytes of `path` at `commit`, when it is a file there.
fn blob(repo: &Path, commit: &str, path: &str) -> Option<Vec<u8>> {
    let mut cmd = git::git(repo);
    cmd.args(["cat-file", "blob", &format!("{commit}:{path}")]);
    git::output(cmd).ok()
}

/// Whether the pack's folder holds a submodule (which cannot be copied).
fn submodule(repo: &Path, commit: &str, path: &str) -> Result<Option<String>, VendorError> {
    let mut cmd = git::git(repo);
    cmd.args(["ls-tree", "-r", "-z", "--full-tree", commit]);
    if !path.is_empty() {
        cmd.arg("--").arg(path);
    }
    let out = git::output(cmd).map_err(|(_, m)| VendorError::Git(m))?;
    Ok(out
        .split(|&b| b == 0)
        .filter_map(|r| {
            let text = String::from_utf8_lossy(r);
            let (head, name) = text.split_once('\t')?;
            (head.split(' ').nth(1) == Some("commit")).then(|| name.to_string())
        })
        .next())
}

/// Reads the pack at `path` of `source` at `rev`.
pub fn fetch(source: &str, rev: Option<&str>, path: &str) -> Result<Fetched, VendorError> {
    let path = repo_path(path)?;
    let clone = clone(source)?;
    let commit = resolve(&clone.repo, rev)?;
    if let Some(sub) = submodule(&clone.repo, &commit, &path)? {
        return Err(VendorError::Submodule(sub));
    }
    let tree = git::read(&clone.repo, &commit, &path).map_err(git_error)?;
    let root = tree.path();
    let files = read_pack(root)?;
    if !files.iter().any(|f| f.path == crate::discover::SKILL_MD) {
        return Err(VendorError::NoSkillMd {
            source: source.to_string(),
            path: path.clone(),
            commit,
        });
    }
    let license = find_license(&clone.repo, &commit, &path, &files);
    Ok(Fetched {
        commit,
        files,
        license,
    })
}

/// Every file under `root` with its bytes; symbolic links inside the pack become copies of what
/// they point at, others are refused.
fn read_pack(root: &Path) -> Result<Vec<FetchedFile>, VendorError> {
    let io = |e: std::io::Error| VendorError::Io(e.to_string());
    let canon_root = std::fs::canonicalize(root).map_err(io)?;
    let mut out = Vec::new();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        for entry in std::fs::read_dir(&dir).map_err(io)? {
            let entry = entry.map_err(io)?;
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                return Err(VendorError::Io(format!(
                    "`{prefix}{}` is not a UTF-8 name",
                    entry.file_name().to_string_lossy()
                )));
            };
            let rel = format!("{prefix}{name}");
            let kind = entry.file_type().map_err(io)?;
            if kind.is_dir() {
                stack.push((entry.path(), format!("{rel}/")));
                continue;
            }
            let mut real = entry.path();
            if kind.is_symlink() {
                let target = std::fs::read_link(entry.path())
                    .map(|t| t.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let resolved = std::fs::canonicalize(entry.path())
                    .ok()
                    .filter(|r| r.starts_with(&canon_root) && r.is_file());
                match resolved {
                    Some(r) => real = r,
                    None => return Err(VendorError::SymlinkEscape { path: rel, target }),
                }
            }
            let bytes = std::fs::read(&real).map_err(io)?;
            out.push(FetchedFile {
                path: rel,
                bytes,
                executable: executable(&real),
            });
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

#[cfg(unix)]
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn executable(_: &Path) -> bool {
    false
}

/// The pack's frontmatter `license` when it is an SPDX expression, else a licence file in the
/// pack or a folder above it, else `unknown`.
fn find_license(repo: &Path, commit: &str, path: &str, files: &[FetchedFile]) -> String {
    let declared = files
        .iter()
        .find(|f| f.path == crate::discover::SKILL_MD)
        .and_then(|md| {
            let mut ignored = Vec::new();
            let parsed = crate::parse::frontmatter::parse(&md.bytes, "SKILL.md", &mut ignored)?;
            match parsed.frontmatter?.mapping.get("license")? {
                yaml_serde::Value::String(s) => Some(s.trim().to_string()),
                _ => None,
            }
        });
    if let Some(d) = declared.filter(|d| license::is_spdx_expression(d)) {
        return d;
    }
    for name in license::FILE_NAMES {
        let found = files
            .iter()
            .find(|f| f.path == *name)
            .and_then(|f| std::str::from_utf8(&f.bytes).ok())
            .and_then(license::from_text);
        if let Some(id) = found {
            return id;
        }
    }
    let mut dir = path.to_string();
    while !dir.is_empty() {
        dir = dir
            .rsplit_once('/')
            .map_or(String::new(), |(d, _)| d.to_string());
        for name in license::FILE_NAMES {
            let file = crate::discover::join(&dir, name);
            let found = blob(repo, commit, &file)
                .and_then(|b| String::from_utf8(b).ok())
                .and_then(|t| license::from_text(&t));
            if let Some(id) = found {
                return id;
            }
        }
    }
    license::UNKNOWN.to_string()
}
