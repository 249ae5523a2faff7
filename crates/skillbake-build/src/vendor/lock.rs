//! `skills.lock`: what `skillbake add` copied into the skills folder, and the check that the
//! copies still hold those bytes (`skillbake check --locked`).
//!
//! ```toml
//! # Packs vendored by `skillbake add`; `skillbake check --locked` compares their files with it.
//! version = 1
//!
//! [packs.pdf]
//! source = "https://github.com/example/skills"
//! rev = "main"
//! commit = "9c1d…"
//! path = "skills/pdf"
//! license = "Apache-2.0"
//!
//! [packs.pdf.files]
//! "SKILL.md" = "sha256:3b4f…"
//! "scripts/fill.py" = "sha256:a0c1…"
//! ```
//!
//! The file is written by skillbake alone, in one order whatever the history: packs by name,
//! keys in the order above, files by path. A pack's folder is `<skills root>/<name>`.
//!
//! Rules that live here: `lock-mismatch`, `lock-invalid`.

use crate::diagnostic::{Code, Diagnostic};
use crate::source::LineIndex;
use serde::Deserialize;
use sha2::Digest as _;
use std::collections::BTreeMap;
use std::path::Path;

/// The lock's file name, at the skills root.
pub const LOCK_FILE: &str = "skills.lock";

/// The format version this build reads and writes.
pub const VERSION: i64 = 1;

/// Every vendored pack, by name (its folder under the skills root).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lock {
    /// The packs, by name.
    pub packs: BTreeMap<String, Locked>,
}

/// One vendored pack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locked {
    /// The repository it was copied from: a URL or a local path, as given to `skillbake add`.
    pub source: String,
    /// The revision asked for (`--rev`), which `skillbake update` follows; `None`: the
    /// repository's `HEAD`.
    pub rev: Option<String>,
    /// The commit the revision resolved to.
    pub commit: String,
    /// The pack's folder inside the repository (`/`-separated, `""` for the top).
    pub path: String,
    /// The licence: an SPDX expression, or `unknown`.
    pub license: String,
    /// SHA-256 of every file, by `/`-separated path inside the pack.
    pub files: BTreeMap<String, [u8; 32]>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLock {
    version: toml::Spanned<i64>,
    #[serde(default)]
    packs: BTreeMap<toml::Spanned<String>, RawPack>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPack {
    source: String,
    rev: Option<String>,
    commit: String,
    path: String,
    license: String,
    #[serde(default)]
    files: BTreeMap<toml::Spanned<String>, toml::Spanned<String>>,
}

/// A name `skillbake add` accepts for a vendored pack's folder: ASCII letters, digits, `.`, `_`
/// and `-`, starting with a letter or digit, at most 64 characters.
pub fn valid_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphanumeric())
        && name.len() <= 64
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// A `/`-separated relative path with no empty, `.` or `..` part.
pub(crate) fn safe_path(path: &str) -> bool {
    !path.is_empty()
        && !path.contains('\\')
        && path
            .split('/')
            .all(|p| !p.is_empty() && p != "." && p != "..")
}

fn invalid(file: &str, message: String, pos: Option<crate::Position>) -> Diagnostic {
    Diagnostic::new(Code::LockInvalid, file, message)
        .at(pos)
        .help("skills.lock is written by `skillbake add` and `skillbake update`: restore it from version control, or delete the broken entry and add the pack again")
}

impl Lock {
    /// Parses the text of a lock file; `file` names it in diagnostics. Every problem is reported.
    pub fn parse(text: &str, file: &str) -> Result<Lock, Vec<Diagnostic>> {
        let idx = LineIndex::new(text);
        let at = |s: std::ops::Range<usize>| Some(idx.range(s.start, s.end));
        let raw = toml::from_str::<RawLock>(text).map_err(|e| {
            let pos = e.span().map(|s| idx.range(s.start, s.end));
            vec![invalid(
                file,
                format!("invalid {LOCK_FILE}: {}", e.message().trim()),
                pos,
            )]
        })?;
        let mut diags = Vec::new();
        if *raw.version.get_ref() != VERSION {
            diags.push(invalid(
                file,
                format!(
                    "{LOCK_FILE} has format version {}; this skillbake reads version {VERSION}",
                    raw.version.get_ref()
                ),
                at(raw.version.span()),
            ));
        }
        let mut lock = Lock::default();
        for (name, pack) in raw.packs {
            let span = name.span();
            let name = name.into_inner();
            if !valid_name(&name) {
                diags.push(invalid(
                    file,
                    format!(
                        "`{name}` is not a vendored pack name (letters, digits, `.`, `_`, `-`)"
                    ),
                    at(span),
                ));
                continue;
            }
            let mut files = BTreeMap::new();
            for (path, digest) in pack.files {
                let hex = digest.get_ref().strip_prefix("sha256:").unwrap_or("");
                match skillbake_format::manifest::unhex::<32>(hex) {
                    Some(d) if safe_path(path.get_ref()) => {
                        files.insert(path.into_inner(), d);
                    }
                    Some(_) => diags.push(invalid(
                        file,
                        format!(
                            "`{}` is not a relative path inside the pack",
                            path.get_ref()
                        ),
                        at(path.span()),
                    )),
                    None => diags.push(invalid(
                        file,
                        format!(
                            "the digest of `{}` is not `sha256:` and 64 hexadecimal digits",
                            path.get_ref()
                        ),
                        at(digest.span()),
                    )),
                }
            }
            lock.packs.insert(
                name,
                Locked {
                    source: pack.source,
                    rev: pack.rev,
                    commit: pack.commit,
                    path: pack.path,
                    license: pack.license,
                    files,
                },
            );
        }
        if diags.is_empty() {
            Ok(lock)
        } else {
            Err(diags)
        }
    }

    /// Reads `<root>/skills.lock`: `Ok(None)` when there is none; its text comes back with the
    /// diagnostics when it does not parse.
    pub fn read(root: &Path) -> Result<Option<Lock>, (Vec<Diagnostic>, Option<String>)> {
        let path = root.join(LOCK_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err((
                    vec![invalid(
                        LOCK_FILE,
                        format!("cannot read {LOCK_FILE}: {e}"),
                        None,
                    )],
                    None,
                ))
            }
        };
        Lock::parse(&text, LOCK_FILE)
            .map(Some)
            .map_err(|d| (d, Some(text)))
    }

    /// The lock as skillbake writes it: the same packs give the same bytes.
    pub fn render(&self) -> String {
        let mut out = String::from(
            "# Packs vendored by `skillbake add`; `skillbake check --locked` compares their files\n\
             # with this. Written by skillbake: change it with `skillbake add` and `skillbake update`.\n",
        );
        out.push_str(&format!("version = {VERSION}\n"));
        for (name, p) in &self.packs {
            let key = toml_key(name);
            out.push_str(&format!("\n[packs.{key}]\n"));
            out.push_str(&format!("source = {}\n", toml_string(&p.source)));
            if let Some(rev) = &p.rev {
                out.push_str(&format!("rev = {}\n", toml_string(rev)));
            }
            out.push_str(&format!("commit = {}\n", toml_string(&p.commit)));
            out.push_str(&format!("path = {}\n", toml_string(&p.path)));
            out.push_str(&format!("license = {}\n", toml_string(&p.license)));
            out.push_str(&format!("\n[packs.{key}.files]\n"));
            for (path, digest) in &p.files {
                out.push_str(&format!(
                    "{} = \"sha256:{}\"\n",
                    toml_string(path),
                    skillbake_format::manifest::hex(digest)
                ));
            }
        }
        out
    }

    /// Writes `<root>/skills.lock` (through a temporary file renamed over it, so a reader never
    /// sees half a lock).
    pub fn write(&self, root: &Path) -> std::io::Result<()> {
        let tmp = root.join(format!(".{LOCK_FILE}.{}.tmp", std::process::id()));
        std::fs::write(&tmp, self.render())?;
        std::fs::rename(&tmp, root.join(LOCK_FILE)).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }
}

fn toml_key(key: &str) -> String {
    if !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        key.to_string()
    } else {
        toml_string(key)
    }
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// What a pack's folder holds: every entry's `/`-separated path, with the SHA-256 of a regular
/// file or `None` for anything else (a symbolic link, a FIFO, a name that is not UTF-8).
pub fn folder_digests(dir: &Path) -> std::io::Result<BTreeMap<String, Option<[u8; 32]>>> {
    let mut out = BTreeMap::new();
    walk(dir, "", &mut out)?;
    Ok(out)
}

fn walk(
    dir: &Path,
    prefix: &str,
    out: &mut BTreeMap<String, Option<[u8; 32]>>,
) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let path = format!("{prefix}{}", name.to_string_lossy());
        let kind = entry.file_type()?;
        if name.to_str().is_none() {
            out.insert(path, None);
        } else if kind.is_dir() {
            walk(&entry.path(), &format!("{path}/"), out)?;
        } else if kind.is_file() {
            let bytes = std::fs::read(entry.path())?;
            out.insert(path, Some(sha2::Sha256::digest(&bytes).into()));
        } else {
            out.insert(path, None);
        }
    }
    Ok(())
}

/// How a vendored pack's folder differs from its lock entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mismatch {
    /// The whole folder is gone.
    FolderMissing,
    /// A locked file has other bytes.
    Changed {
        /// Path inside the pack.
        path: String,
        /// The locked digest.
        locked: [u8; 32],
        /// The digest on disk.
        found: [u8; 32],
    },
    /// A file the lock does not record.
    Added(String),
    /// A locked file that is not there.
    Removed(String),
    /// Something other than a regular file where the lock records one, or anywhere.
    NotAFile(String),
}

impl Mismatch {
    /// The path inside the pack (`""` for the whole folder).
    pub fn path(&self) -> &str {
        match self {
            Mismatch::FolderMissing => "",
            Mismatch::Changed { path, .. }
            | Mismatch::Added(path)
            | Mismatch::Removed(path)
            | Mismatch::NotAFile(path) => path,
        }
    }

    /// One line: what differs.
    pub fn describe(&self) -> String {
        match self {
            Mismatch::FolderMissing => "the pack's folder is missing".to_string(),
            Mismatch::Changed {
                path,
                locked,
                found,
            } => format!(
                "`{path}` changed (sha256:{}… locked, sha256:{}… now)",
                short(locked),
                short(found)
            ),
            Mismatch::Added(path) => format!("`{path}` was added"),
            Mismatch::Removed(path) => format!("`{path}` was removed"),
            Mismatch::NotAFile(path) => format!("`{path}` is not a regular file"),
        }
    }
}

/// Every difference between `<root>/<name>` and `locked`, in path order.
pub fn mismatches(root: &Path, name: &str, locked: &Locked) -> std::io::Result<Vec<Mismatch>> {
    let dir = root.join(name);
    if !dir.is_dir() {
        return Ok(vec![Mismatch::FolderMissing]);
    }
    let found = folder_digests(&dir)?;
    let mut out = Vec::new();
    for (path, digest) in &locked.files {
        match found.get(path) {
            None => out.push(Mismatch::Removed(path.clone())),
            Some(None) => out.push(Mismatch::NotAFile(path.clone())),
            Some(Some(d)) if d != digest => out.push(Mismatch::Changed {
                path: path.clone(),
                locked: *digest,
                found: *d,
            }),
            Some(Some(_)) => {}
        }
    }
    for (path, digest) in &found {
        if !locked.files.contains_key(path) {
            out.push(match digest {
                Some(_) => Mismatch::Added(path.clone()),
                None => Mismatch::NotAFile(path.clone()),
            });
        }
    }
    out.sort_by(|a, b| a.path().cmp(b.path()));
    Ok(out)
}

/// The first twelve hexadecimal digits of a digest.
fn short(d: &[u8; 32]) -> String {
    let mut h = skillbake_format::manifest::hex(d);
    h.truncate(12);
    h
}

/// `lock-mismatch` for one difference of vendored pack `name`.
fn mismatch(name: &str, locked: &Locked, m: &Mismatch) -> Diagnostic {
    let mut commit = locked.commit.clone();
    commit.truncate(12);
    let origin = format!("{} at {commit}", locked.source);
    let fix = format!(
        "a vendored pack changes upstream, not in place: revert the change (`git restore` the file), \
         or run `skillbake update {name} --force` to take the pack from {origin} again"
    );
    let file = crate::discover::join(name, m.path());
    let message = match m {
        Mismatch::FolderMissing => format!(
            "vendored pack `{name}` is recorded in {LOCK_FILE}, but its folder `{name}` is missing"
        ),
        Mismatch::Changed { locked, found, .. } => format!(
            "`{file}` of vendored pack `{name}` changed since {LOCK_FILE} recorded it (sha256:{}… locked, sha256:{}… now)",
            short(locked),
            short(found)
        ),
        Mismatch::Added(_) => format!(
            "`{file}` is in vendored pack `{name}`, but {LOCK_FILE} does not record it"
        ),
        Mismatch::Removed(_) => format!(
            "`{file}` of vendored pack `{name}` is recorded in {LOCK_FILE}, but missing"
        ),
        Mismatch::NotAFile(_) => format!(
            "`{file}` in vendored pack `{name}` is not a regular file, which {LOCK_FILE} cannot record"
        ),
    };
    let help = match m {
        Mismatch::FolderMissing => format!(
            "restore it with `skillbake update {name} --force`, or delete its `[packs.{name}]` tables from {LOCK_FILE} to stop vendoring it"
        ),
        _ => fix,
    };
    Diagnostic::new(Code::LockMismatch, file, message).help(help)
}

/// `check --locked`: every vendored pack under `root` against `skills.lock` (`lock-mismatch`),
/// and the lock itself (`lock-invalid`). The lock's text is kept for snippets when it is
/// quoted.
pub(crate) fn check(
    root: &Path,
    diags: &mut Vec<Diagnostic>,
    sources: &mut BTreeMap<String, String>,
) {
    let lock = match Lock::read(root) {
        Ok(Some(lock)) => lock,
        Ok(None) => {
            diags.push(
                Diagnostic::new(
                    Code::LockInvalid,
                    LOCK_FILE,
                    format!("`--locked` needs {LOCK_FILE} at the skills root, and there is none"),
                )
                .help("vendor packs with `skillbake add SOURCE` (it writes the lock), or check without `--locked`"),
            );
            return;
        }
        Err((d, text)) => {
            if let Some(text) = text {
                sources.insert(LOCK_FILE.to_string(), text);
            }
            diags.extend(d);
            return;
        }
    };
    for (name, locked) in &lock.packs {
        match mismatches(root, name, locked) {
            Ok(found) => diags.extend(found.iter().map(|m| mismatch(name, locked, m))),
            Err(e) => diags.push(crate::discover::io_error(
                name,
                format!("cannot read vendored pack `{name}`: {e}"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Lock {
        let mut files = BTreeMap::new();
        files.insert("SKILL.md".to_string(), [7u8; 32]);
        files.insert("scripts/a b.py".to_string(), [9u8; 32]);
        let mut lock = Lock::default();
        lock.packs.insert(
            "pdf.v2".into(),
            Locked {
                source: "C:\\repos\\\"skills\"".into(),
                rev: Some("main".into()),
                commit: "abc".into(),
                path: "skills/pdf".into(),
                license: "MIT".into(),
                files,
            },
        );
        lock
    }

    #[test]
    fn render_parses_back() {
        let lock = sample();
        let text = lock.render();
        assert_eq!(Lock::parse(&text, LOCK_FILE).ok(), Some(lock));
    }

    #[test]
    fn bad_entries_are_all_reported() {
        let text = "version = 2\n[packs.a]\nsource = \"s\"\ncommit = \"c\"\npath = \"\"\nlicense = \"MIT\"\n[packs.a.files]\n\"../x\" = \"sha256:00\"\n";
        let diags = Lock::parse(text, LOCK_FILE).err().unwrap_or_default();
        let messages: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(diags.len(), 2, "{messages:?}");
        assert!(diags
            .iter()
            .all(|d| d.code == Code::LockInvalid && d.line.is_some()));
    }
}
