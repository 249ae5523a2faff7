//! Discovery: walks a skills root in sorted byte order and collects every pack with all of its
//! files, byte for byte.
//!
//! Rules that live here: `io-error`, `no-packs`, `misnamed-skill-md`, `nested-pack`,
//! `symlink-escape`, `symlink-cycle`, `unsupported-file-type`, `path-not-utf8`.
//!
//! A pack is a folder holding a regular file named exactly `SKILL.md`. Plain folders may group
//! packs. A `SKILL.md` below a pack's `assets/`, `references/`, `templates/` or `examples/` is
//! that pack's file (an example pack it ships); anywhere else inside a pack it is `nested-pack`. Dot-entries and tool noise ([`is_ignored`]) are skipped everywhere. Symbolic links are
//! followed only while they stay inside their pack (or, above packs, inside the skills root).

use crate::diagnostic::{Code, Diagnostic};
use crate::glob::GlobSet;
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

/// Name of the file that makes a folder a pack.
pub const SKILL_MD: &str = "SKILL.md";

/// One file of a pack, as read from disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// `/`-separated path relative to the pack folder.
    pub path: String,
    /// The exact bytes.
    pub bytes: Vec<u8>,
}

/// A pack as found on disk, before parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackSource {
    /// `/`-separated path of the pack folder relative to the skills root (`""` when the root is
    /// itself a pack).
    pub rel_dir: String,
    /// The pack folder's own name (what `name` must equal).
    pub dir_name: String,
    /// Every embedded file, `SKILL.md` included, sorted by path.
    pub files: Vec<SourceFile>,
}

impl PackSource {
    /// The path of `file` relative to the skills root, as used in diagnostics.
    pub fn display_path(&self, file: &str) -> String {
        join(&self.rel_dir, file)
    }

    /// The skill name the folder's name stands for: the folder's name, or its part before `@`
    /// for a folder of one version (`send-email@1.2.0` → `send-email`).
    pub fn dir_skill_name(&self) -> &str {
        split_versioned(&self.dir_name).0
    }

    /// The version a `NAME@VERSION` folder names (`send-email@1.2.0` → `1.2.0`).
    pub fn dir_version(&self) -> Option<&str> {
        split_versioned(&self.dir_name).1
    }

    /// The file at `path` relative to the pack, if any.
    pub fn file(&self, path: &str) -> Option<&SourceFile> {
        self.files
            .binary_search_by(|f| f.path.as_str().cmp(path))
            .ok()
            .map(|i| &self.files[i])
    }
}

/// What discovery found.
#[derive(Debug, Default)]
pub struct Discovered {
    /// Packs in sorted order of `rel_dir`.
    pub packs: Vec<PackSource>,
    /// Problems met while walking.
    pub diagnostics: Vec<Diagnostic>,
    /// Every folder and file visited (for `cargo:rerun-if-changed`), sorted.
    pub tracked: Vec<PathBuf>,
}

/// True for entries that are never packs nor embedded: dot-entries, VCS and tool folders, OS noise.
pub fn is_ignored(name: &str) -> bool {
    name.starts_with('.')
        || matches!(
            name,
            "node_modules" | "__pycache__" | "Thumbs.db" | "desktop.ini"
        )
}

/// Splits a pack folder's name into skill name and version when it is `NAME@VERSION`:
/// `send-email@1.2.0` → (`send-email`, `Some("1.2.0")`). The split is at the last `@`, and only
/// when what follows reads as a version (`1.2.0`, `1.2`, `v2`), so a folder named after a skill
/// whose name holds an `@` (possible where `name-charset` is lowered) stays whole.
pub fn split_versioned(dir_name: &str) -> (&str, Option<&str>) {
    match dir_name.rsplit_once('@') {
        Some((name, version))
            if !name.is_empty()
                && skillbake_format::semver::Version::parse_lenient(version).is_some() =>
        {
            (name, Some(version))
        }
        _ => (dir_name, None),
    }
}

/// Joins two `/`-separated relative paths, either of which may be empty.
pub fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}/{b}"),
    }
}

/// `io-error`: `file` of the skills tree could not be read (`message` says what and why). The
/// walk raises it for what it reads; other readers of the tree (`skillbake.toml`) use this.
pub fn io_error(file: &str, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(Code::IoError, file, message)
}

/// Walks `root`. `root` may be a skills root (packs below it) or a single pack. Paths matching
/// `ignore` (relative to `root`) are skipped like dot-entries.
pub fn discover(root: &Path, ignore: &GlobSet) -> Discovered {
    let mut walker = Walker {
        out: Discovered::default(),
        ignore,
    };
    let canon_root = match fs::canonicalize(root) {
        Ok(p) => p,
        Err(e) => {
            walker.out.diagnostics.push(Diagnostic::new(
                Code::IoError,
                ".",
                format!("cannot read the skills root: {e}"),
            ));
            return walker.out;
        }
    };
    walker.out.tracked.push(root.to_path_buf());
    let mut stack = vec![canon_root.clone()];
    if is_pack_dir(root) {
        let dir_name = canon_root
            .file_name()
            .and_then(OsStr::to_str)
            .unwrap_or_default()
            .to_string();
        walker.collect_pack(root, &canon_root, String::new(), dir_name, &mut stack);
    } else {
        walker.walk_group(root, "", &mut stack);
        if walker.out.packs.is_empty() && walker.out.diagnostics.is_empty() {
            walker.out.diagnostics.push(
                Diagnostic::new(Code::NoPacks, ".", "no skill pack found under this folder")
                    .help("a pack is a folder holding a file named exactly `SKILL.md`; create one with `cargo xtask new-skill NAME`"),
            );
        }
    }
    walker.out.tracked.sort();
    walker.out.tracked.dedup();
    walker.out
}

fn is_pack_dir(dir: &Path) -> bool {
    // `metadata` follows symbolic links: a SKILL.md link to a regular file inside the pack counts.
    fs::metadata(dir.join(SKILL_MD)).is_ok_and(|m| m.is_file())
}

struct Walker<'g> {
    out: Discovered,
    ignore: &'g GlobSet,
}

/// One directory entry, resolved.
enum Entry {
    Dir(PathBuf, PathBuf),
    File(PathBuf),
    Skip,
}

impl Walker<'_> {
    fn error(&mut self, code: Code, file: &str, message: String) -> &mut Diagnostic {
        self.out
            .diagnostics
            .push(Diagnostic::new(code, file, message));
        let last = self.out.diagnostics.len() - 1;
        &mut self.out.diagnostics[last]
    }

    /// Sorted entries of `dir` as (name, path), with unreadable ones reported.
    fn entries(&mut self, dir: &Path, rel: &str) -> Vec<(String, PathBuf)> {
        let read = match fs::read_dir(dir) {
            Ok(r) => r,
            Err(e) => {
                self.error(
                    Code::IoError,
                    display(rel),
                    format!("cannot read folder: {e}"),
                );
                return Vec::new();
            }
        };
        let mut names = Vec::new();
        for entry in read {
            match entry {
                Ok(entry) => {
                    let os_name = entry.file_name();
                    match os_name.to_str() {
                        Some(name) => names.push((name.to_string(), entry.path())),
                        None => {
                            let lossy = os_name.to_string_lossy().into_owned();
                            if !is_ignored(&lossy) {
                                self.error(
                                    Code::PathNotUtf8,
                                    &join(rel, &lossy),
                                    "name is not valid UTF-8; it cannot be embedded".into(),
                                )
                                .help = Some("rename the file using UTF-8 characters".into());
                            }
                        }
                    }
                }
                Err(e) => {
                    self.error(
                        Code::IoError,
                        display(rel),
                        format!("cannot read folder: {e}"),
                    );
                }
            }
        }
        names.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        names
    }

    /// Resolves an entry: follows symbolic links that stay inside `boundary`.
    fn resolve(&mut self, path: &Path, rel: &str, boundary: &Path, what: &str) -> Entry {
        let meta = match fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) => {
                self.error(Code::IoError, rel, format!("cannot read: {e}"));
                return Entry::Skip;
            }
        };
        let ft = meta.file_type();
        if ft.is_symlink() {
            let target = match fs::canonicalize(path) {
                Ok(t) => t,
                Err(e) => {
                    // ELOOP: 40 on Linux, 62 on macOS and the BSDs.
                    let (code, msg) = if matches!(e.raw_os_error(), Some(40 | 62)) {
                        (
                            Code::SymlinkCycle,
                            "symbolic link loops back on itself".to_string(),
                        )
                    } else {
                        (Code::IoError, format!("broken symbolic link: {e}"))
                    };
                    self.error(code, rel, msg).help = Some(
                        "point the link at an existing file inside the pack, or remove it".into(),
                    );
                    return Entry::Skip;
                }
            };
            if !target.starts_with(boundary) {
                let link = fs::read_link(path)
                    .map(|l| l.to_string_lossy().into_owned())
                    .unwrap_or_default();
                self.error(
                    Code::SymlinkEscape,
                    rel,
                    format!("symbolic link `{link}` points outside {what}; it is not embedded"),
                )
                .help = Some(format!(
                    "copy the target into {what} instead of linking to it"
                ));
                return Entry::Skip;
            }
            return match fs::metadata(&target) {
                Ok(m) if m.is_dir() => Entry::Dir(path.to_path_buf(), target),
                Ok(m) if m.is_file() => Entry::File(path.to_path_buf()),
                Ok(_) => {
                    self.unsupported(rel);
                    Entry::Skip
                }
                Err(e) => {
                    self.error(Code::IoError, rel, format!("cannot read: {e}"));
                    Entry::Skip
                }
            };
        }
        if ft.is_dir() {
            match fs::canonicalize(path) {
                Ok(canon) => Entry::Dir(path.to_path_buf(), canon),
                Err(e) => {
                    self.error(Code::IoError, rel, format!("cannot read folder: {e}"));
                    Entry::Skip
                }
            }
        } else if ft.is_file() {
            Entry::File(path.to_path_buf())
        } else {
            self.unsupported(rel);
            Entry::Skip
        }
    }

    fn unsupported(&mut self, rel: &str) {
        self.error(
            Code::UnsupportedFileType,
            rel,
            "not a regular file or folder (FIFO, socket or device); it cannot be embedded".into(),
        )
        .help = Some("remove it from the skills tree".into());
    }

    /// Walks a folder above packs.
    fn walk_group(&mut self, dir: &Path, rel: &str, stack: &mut Vec<PathBuf>) {
        let root = stack.first().cloned().unwrap_or_default();
        for (name, path) in self.entries(dir, rel) {
            let child_rel = join(rel, &name);
            if is_ignored(&name) || self.ignore.matches(&child_rel) {
                continue;
            }
            let via_link = fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
            match self.resolve(&path, &child_rel, &root, "the skills root") {
                // A linked folder inside the skills root is walked under its real path already;
                // following the link too would register its packs twice.
                Entry::Dir(..) if via_link => {}
                Entry::Dir(path, child_canon) => {
                    if stack.contains(&child_canon) {
                        self.cycle(&child_rel);
                        continue;
                    }
                    self.out.tracked.push(path.clone());
                    stack.push(child_canon.clone());
                    if is_pack_dir(&path) {
                        self.collect_pack(&path, &child_canon, child_rel, name, stack);
                    } else {
                        self.walk_group(&path, &child_rel, stack);
                    }
                    stack.pop();
                }
                Entry::File(path) => {
                    self.out.tracked.push(path);
                    if name.eq_ignore_ascii_case(SKILL_MD) {
                        self.misnamed(&child_rel, &name);
                    }
                }
                Entry::Skip => {}
            }
        }
    }

    fn misnamed(&mut self, rel: &str, name: &str) {
        self.error(
            Code::MisnamedSkillMd,
            rel,
            format!("`{name}` is not `{SKILL_MD}`, so this folder is not a pack and is ignored"),
        )
        .help = Some(format!(
            "rename the file to `{SKILL_MD}` (exactly, upper case)"
        ));
    }

    fn cycle(&mut self, rel: &str) {
        self.error(
            Code::SymlinkCycle,
            rel,
            "symbolic link leads back to one of its own parent folders".into(),
        )
        .help = Some("remove the link or point it elsewhere inside the pack".into());
    }

    /// Collects every file of the pack at `dir`.
    fn collect_pack(
        &mut self,
        dir: &Path,
        canon: &Path,
        rel_dir: String,
        dir_name: String,
        stack: &mut Vec<PathBuf>,
    ) {
        let mut files = Vec::new();
        let boundary = canon.to_path_buf();
        self.collect_files(dir, &boundary, &rel_dir, "", &mut files, stack);
        files.sort_by(|a: &SourceFile, b| a.path.as_bytes().cmp(b.path.as_bytes()));
        self.out.packs.push(PackSource {
            rel_dir,
            dir_name,
            files,
        });
    }

    fn collect_files(
        &mut self,
        dir: &Path,
        boundary: &Path,
        rel_dir: &str,
        sub: &str,
        files: &mut Vec<SourceFile>,
        stack: &mut Vec<PathBuf>,
    ) {
        for (name, path) in self.entries(dir, &join(rel_dir, sub)) {
            let in_pack = join(sub, &name);
            let display = join(rel_dir, &in_pack);
            if is_ignored(&name) || self.ignore.matches(&display) {
                continue;
            }
            match self.resolve(&path, &display, boundary, "its pack") {
                Entry::Dir(path, canon) => {
                    if stack.contains(&canon) {
                        self.cycle(&display);
                        continue;
                    }
                    self.out.tracked.push(path.clone());
                    stack.push(canon);
                    self.collect_files(&path, boundary, rel_dir, &in_pack, files, stack);
                    stack.pop();
                }
                Entry::File(path) => {
                    self.out.tracked.push(path.clone());
                    if !sub.is_empty() && name == SKILL_MD && !ships_example(&in_pack) {
                        let outer = join(rel_dir, SKILL_MD);
                        self.error(
                            Code::NestedPack,
                            &display,
                            format!("`{display}` would start a pack inside the pack of `{outer}`; packs do not nest"),
                        )
                        .help = Some(format!(
                            "move `{}` out of the pack; to ship it as an example of this pack, put it under `assets/`, `references/`, `templates/` or `examples/`",
                            parent(&display)
                        ));
                    }
                    match fs::read(&path) {
                        Ok(bytes) => files.push(SourceFile {
                            path: in_pack,
                            bytes,
                        }),
                        Err(e) => {
                            self.error(Code::IoError, &display, format!("cannot read file: {e}"));
                        }
                    }
                }
                Entry::Skip => {}
            }
        }
    }
}

/// Folders whose contents are a pack's own files even when they hold a `SKILL.md` (an example
/// or template pack shipped by a pack, as runtimes load them).
pub const EXAMPLE_DIRS: &[&str] = &["assets", "references", "templates", "examples"];

/// Whether `path` (relative to its pack) lies below one of [`EXAMPLE_DIRS`].
pub fn ships_example(path: &str) -> bool {
    path.split_once('/')
        .is_some_and(|(top, _)| EXAMPLE_DIRS.contains(&top))
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(p, _)| p)
}

fn display(rel: &str) -> &str {
    if rel.is_empty() {
        "."
    } else {
        rel
    }
}
