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

/// A file of a pack as the walk found it, before reading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    /// `/`-separated path relative to the pack folder.
    pub path: String,
    /// Where to read it (through the link when it is one).
    pub disk: PathBuf,
}

/// A pack as the walk found it: its files listed, not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackEntry {
    /// See [`PackSource::rel_dir`].
    pub rel_dir: String,
    /// See [`PackSource::dir_name`].
    pub dir_name: String,
    /// Every file to embed, sorted by path.
    pub files: Vec<FileEntry>,
}

impl PackEntry {
    /// Reads every file; a file that cannot be read is reported and left out.
    pub fn read(self, diagnostics: &mut Vec<Diagnostic>) -> PackSource {
        let mut files = Vec::with_capacity(self.files.len());
        for f in self.files {
            match fs::read(&f.disk) {
                Ok(bytes) => files.push(SourceFile {
                    path: f.path,
                    bytes,
                }),
                Err(e) => diagnostics.push(Diagnostic::new(
                    Code::IoError,
                    join(&self.rel_dir, &f.path),
                    format!("cannot read file: {e}"),
                )),
            }
        }
        PackSource {
            rel_dir: self.rel_dir,
            dir_name: self.dir_name,
            files,
        }
    }
}

/// What the walk found: packs with their files listed.
#[derive(Debug, Default)]
pub struct Walked {
    /// Packs in sorted order of `rel_dir`.
    pub packs: Vec<PackEntry>,
    /// Problems met while walking.
    pub diagnostics: Vec<Diagnostic>,
}

/// What discovery found.
#[derive(Debug, Default)]
pub struct Discovered {
    /// Packs in sorted order of `rel_dir`.
    pub packs: Vec<PackSource>,
    /// Problems met while walking.
    pub diagnostics: Vec<Diagnostic>,
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

/// Walks `root` and reads every file of every pack. `root` may be a skills root (packs below
/// it) or a single pack. Paths matching `ignore` (relative to `root`) are skipped like
/// dot-entries.
pub fn discover(root: &Path, ignore: &GlobSet) -> Discovered {
    let walked = walk(root, ignore);
    let mut diagnostics = walked.diagnostics;
    let packs = walked
        .packs
        .into_iter()
        .map(|p| p.read(&mut diagnostics))
        .collect();
    Discovered { packs, diagnostics }
}

/// Walks `root` like [`discover`] without reading the files: their paths are listed.
pub fn walk(root: &Path, ignore: &GlobSet) -> Walked {
    let mut walker = Walker {
        out: Walked::default(),
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
    let mut stack = vec![canon_root.clone()];
    let items = walker.entries(root, "");
    if lists_skill_md(&items) {
        let dir_name = canon_root
            .file_name()
            .and_then(OsStr::to_str)
            .unwrap_or_default()
            .to_string();
        walker.collect_pack(items, &canon_root, String::new(), dir_name, &mut stack);
    } else {
        walker.walk_group(items, &canon_root, "", &mut stack);
        if walker.out.packs.is_empty() && walker.out.diagnostics.is_empty() {
            walker.out.diagnostics.push(
                Diagnostic::new(Code::NoPacks, ".", "no skill pack found under this folder")
                    .help("a pack is a folder holding a file named exactly `SKILL.md`; create one with `skillbake new NAME`"),
            );
        }
    }
    walker.out
}

struct Walker<'g> {
    out: Walked,
    ignore: &'g GlobSet,
}

/// One directory entry, resolved.
enum Entry {
    /// A folder: its path, its canonical path, whether it was reached through a link.
    Dir(PathBuf, PathBuf, bool),
    File(PathBuf),
    Skip,
}

/// One entry of a folder listing.
struct DirItem {
    name: String,
    path: PathBuf,
    /// As the listing reports it (`None`: unknown, ask the file system).
    file_type: Option<fs::FileType>,
}

/// Whether a listed folder is a pack: it holds an entry `SKILL.md` that is a regular file, or a
/// link to one (`metadata` follows links).
fn lists_skill_md(items: &[DirItem]) -> bool {
    items
        .iter()
        .find(|i| i.name == SKILL_MD)
        .is_some_and(|i| match i.file_type {
            Some(ft) if ft.is_file() => true,
            Some(ft) if ft.is_dir() => false,
            _ => fs::metadata(&i.path).is_ok_and(|m| m.is_file()),
        })
}

impl Walker<'_> {
    fn error(&mut self, code: Code, file: &str, message: String) -> &mut Diagnostic {
        self.out
            .diagnostics
            .push(Diagnostic::new(code, file, message));
        let last = self.out.diagnostics.len() - 1;
        &mut self.out.diagnostics[last]
    }

    /// Sorted entries of `dir` as (name, path, type), with unreadable ones reported. The type
    /// comes with the listing (no `stat` per entry where the file system reports it).
    fn entries(&mut self, dir: &Path, rel: &str) -> Vec<DirItem> {
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
                        Some(name) => names.push(DirItem {
                            name: name.to_string(),
                            path: entry.path(),
                            file_type: entry.file_type().ok(),
                        }),
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
        names.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        names
    }

    /// Resolves an entry of the folder whose canonical path is `parent`: follows symbolic links
    /// that stay inside `boundary`. Only links are canonicalised; any other entry's canonical
    /// path is its parent's joined with its name.
    fn resolve(
        &mut self,
        item: &DirItem,
        parent: &Path,
        rel: &str,
        boundary: &Path,
        what: &str,
    ) -> Entry {
        let path = item.path.as_path();
        let ft = match item.file_type {
            Some(ft) => ft,
            None => match fs::symlink_metadata(path) {
                Ok(m) => m.file_type(),
                Err(e) => {
                    self.error(Code::IoError, rel, format!("cannot read: {e}"));
                    return Entry::Skip;
                }
            },
        };
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
                Ok(m) if m.is_dir() => Entry::Dir(path.to_path_buf(), target, true),
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
            Entry::Dir(path.to_path_buf(), parent.join(&item.name), false)
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

    /// Walks a folder above packs, listed in `items`; `canon` is its canonical path.
    fn walk_group(
        &mut self,
        items: Vec<DirItem>,
        canon: &Path,
        rel: &str,
        stack: &mut Vec<PathBuf>,
    ) {
        let root = stack.first().cloned().unwrap_or_default();
        for item in items {
            let child_rel = join(rel, &item.name);
            if is_ignored(&item.name) || self.ignore.matches(&child_rel) {
                continue;
            }
            match self.resolve(&item, canon, &child_rel, &root, "the skills root") {
                // A linked folder inside the skills root is walked under its real path already;
                // following the link too would register its packs twice.
                Entry::Dir(_, _, true) => {}
                Entry::Dir(path, child_canon, false) => {
                    if stack.contains(&child_canon) {
                        self.cycle(&child_rel);
                        continue;
                    }
                    stack.push(child_canon.clone());
                    let children = self.entries(&path, &child_rel);
                    if lists_skill_md(&children) {
                        self.collect_pack(
                            children,
                            &child_canon,
                            child_rel,
                            item.name.clone(),
                            stack,
                        );
                    } else {
                        self.walk_group(children, &child_canon, &child_rel, stack);
                    }
                    stack.pop();
                }
                Entry::File(_) => {
                    if item.name.eq_ignore_ascii_case(SKILL_MD) {
                        self.misnamed(&child_rel, &item.name);
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

    /// Collects every file of the pack listed in `items`, whose canonical path is `canon`.
    fn collect_pack(
        &mut self,
        items: Vec<DirItem>,
        canon: &Path,
        rel_dir: String,
        dir_name: String,
        stack: &mut Vec<PathBuf>,
    ) {
        let mut files = Vec::new();
        self.collect_files(items, canon, canon, &rel_dir, "", &mut files, stack);
        files.sort_by(|a: &FileEntry, b| a.path.as_bytes().cmp(b.path.as_bytes()));
        self.out.packs.push(PackEntry {
            rel_dir,
            dir_name,
            files,
        });
    }

    #[allow(clippy::too_many_arguments)]
    fn collect_files(
        &mut self,
        items: Vec<DirItem>,
        canon: &Path,
        boundary: &Path,
        rel_dir: &str,
        sub: &str,
        files: &mut Vec<FileEntry>,
        stack: &mut Vec<PathBuf>,
    ) {
        for item in items {
            let name = item.name.as_str();
            let in_pack = join(sub, name);
            let display = join(rel_dir, &in_pack);
            if is_ignored(name) || self.ignore.matches(&display) {
                continue;
            }
            match self.resolve(&item, canon, &display, boundary, "its pack") {
                Entry::Dir(path, child_canon, _) => {
                    if stack.contains(&child_canon) {
                        self.cycle(&display);
                        continue;
                    }
                    stack.push(child_canon.clone());
                    let children = self.entries(&path, &display);
                    self.collect_files(
                        children,
                        &child_canon,
                        boundary,
                        rel_dir,
                        &in_pack,
                        files,
                        stack,
                    );
                    stack.pop();
                }
                Entry::File(path) => {
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
                    files.push(FileEntry {
                        path: in_pack,
                        disk: path,
                    });
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
