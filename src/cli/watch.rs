//! `skillbake check --watch`: check once, then again on every save, reporting only the packs
//! whose files changed (and the cross-pack rules' results when those change).
//!
//! Changes are found by polling: every [`INTERVAL`] the skills folders are walked and each
//! file's size and modification time compared with the previous walk's. No file-system event
//! API is used: a skills folder is small (a walk of 1,500 packs is a few milliseconds of
//! `stat`), and polling sees the edits that event APIs miss — network and container-mounted
//! folders, editors that save by renaming a new file over the old one — on every platform the
//! same way, without another dependency. A changed file belongs to the outermost folder above it
//! (below the skills root) that holds a `SKILL.md`: that pack is checked again on its own, with
//! the skills root's `skillbake.toml`. When a `SKILL.md`, the configuration or the set of packs
//! changed, the whole folder is checked too (duplicate names, routing and requirements need
//! every pack) and its cross-pack diagnostics are printed when they differ from the last ones.
//! A bad edit is a diagnostic, never the end of the watch; Ctrl-C (or SIGTERM) ends it with
//! exit code 0.

use skillbake_build::report::{Format, Report};
use skillbake_build::{CheckOptions, Code, Diagnostic};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime};

/// How often the folders are walked.
const INTERVAL: Duration = Duration::from_millis(250);

/// Deepest folder a walk enters below a skills root.
const MAX_DEPTH: usize = 16;

/// Most files a walk records per skills root (a folder past it is not a skills folder).
const MAX_FILES: usize = 200_000;

/// The rules that look at several packs at once.
const CROSS_PACK: [Code; 8] = [
    Code::DuplicateName,
    Code::DuplicateVersion,
    Code::DescriptionNearDuplicate,
    Code::RouteTestFailed,
    Code::CatalogOverBudget,
    Code::RequiresUnsatisfied,
    Code::RequiresCycle,
    Code::AgentRequiresUnsatisfied,
];

/// What a file looked like at the last walk: size and modification time.
type Stamp = (u64, Option<SystemTime>);

/// Every file below a skills root, by path relative to it.
type Tree = BTreeMap<PathBuf, Stamp>;

/// How a watch prints.
pub struct Printer {
    /// The report format.
    pub format: Format,
    /// Colour the human output.
    pub color: bool,
    /// Only summaries.
    pub quiet: bool,
}

impl Printer {
    fn print(&self, report: &Report) {
        let out = self.format.emitter(self.color, self.quiet).render(report);
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(out.as_bytes());
        let _ = stdout.flush();
    }
}

/// Walks `root` into `tree`: dot-entries, `node_modules`, `__pycache__` and `target` are
/// skipped, links are not followed.
fn walk(root: &Path, rel: &Path, depth: usize, tree: &mut Tree) {
    let Ok(entries) = std::fs::read_dir(root.join(rel)) else {
        return;
    };
    for entry in entries.flatten() {
        if tree.len() >= MAX_FILES {
            return;
        }
        let name = entry.file_name();
        let skip = name.to_str().is_some_and(|n| {
            n.starts_with('.') || matches!(n, "node_modules" | "__pycache__" | "target")
        });
        if skip {
            continue;
        }
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        let path = rel.join(&name);
        if meta.is_dir() {
            if depth < MAX_DEPTH {
                walk(root, &path, depth + 1, tree);
            }
        } else {
            tree.insert(path, (meta.len(), meta.modified().ok()));
        }
    }
}

fn snapshot(root: &Path) -> Tree {
    let mut tree = Tree::new();
    walk(root, Path::new(""), 0, &mut tree);
    tree
}

/// The pack folder (relative to the root; empty for the root itself) a file belongs to: the
/// outermost folder above it that holds a `SKILL.md` in either walk.
fn pack_of(file: &Path, old: &Tree, new: &Tree) -> Option<PathBuf> {
    let has_skill = |dir: &Path| {
        let f = dir.join("SKILL.md");
        old.contains_key(&f) || new.contains_key(&f)
    };
    let mut found = None;
    for dir in file.ancestors().skip(1) {
        if has_skill(dir) {
            found = Some(dir.to_path_buf());
        }
    }
    found
}

/// What changed between two walks.
#[derive(Default)]
struct Changes {
    /// Packs to check again, relative to the root (existing ones only).
    packs: BTreeSet<PathBuf>,
    /// Packs that no longer exist.
    removed: BTreeSet<PathBuf>,
    /// Whether the cross-pack rules may say something else now.
    cross: bool,
}

fn changes(old: &Tree, new: &Tree) -> Changes {
    let mut c = Changes::default();
    let changed = old
        .iter()
        .filter(|(p, s)| new.get(*p) != Some(s))
        .map(|(p, _)| p)
        .chain(new.keys().filter(|p| !old.contains_key(*p)));
    for file in changed {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "SKILL.md" || name == "skillbake.toml" || name == "skills.lock" {
            c.cross = true;
        }
        match pack_of(file, old, new) {
            Some(pack) if new.contains_key(&pack.join("SKILL.md")) => {
                c.packs.insert(pack);
            }
            Some(pack) => {
                c.removed.insert(pack);
            }
            // A file outside every pack (the configuration, a new folder's first file).
            None => c.cross = true,
        }
    }
    c
}

/// The label of `rel` under `root` as `check` prints paths.
fn label(root: &Path, rel: &Path, prefix_root: bool) -> String {
    let p = if prefix_root {
        root.join(rel)
    } else {
        rel.to_path_buf()
    };
    p.to_string_lossy().replace('\\', "/")
}

/// The cross-pack diagnostics of a report, in order.
fn cross_of(report: &Report) -> Vec<Diagnostic> {
    report
        .diagnostics
        .iter()
        .filter(|d| CROSS_PACK.contains(&d.code))
        .cloned()
        .collect()
}

/// One skills root being watched.
struct Watched {
    root: PathBuf,
    tree: Tree,
    cross: Vec<Diagnostic>,
}

/// The options of a single pack's check: the skills root's configuration applies.
fn pack_options(root: &Path, opts: &CheckOptions) -> CheckOptions {
    let mut o = opts.clone();
    // A pack's cost is not printed (only the whole root's).
    o.without_cost = true;
    if o.config_file.is_none() {
        let cfg = root.join("skillbake.toml");
        if cfg.is_file() {
            o.config_file = Some(cfg);
        }
    }
    o
}

/// Checks the changed packs of one root and, when needed, the cross-pack rules; the report to
/// print, if there is anything to say.
fn recheck(w: &mut Watched, opts: &CheckOptions, prefix_root: bool) -> Option<(Report, String)> {
    let new = snapshot(&w.root);
    if new == w.tree {
        return None;
    }
    let c = changes(&w.tree, &new);
    w.tree = new;
    let mut names = Vec::new();
    let mut reports = Vec::new();
    let pack_opts = pack_options(&w.root, opts);
    for pack in &c.packs {
        let mut r = skillbake_build::check(&w.root.join(pack), &pack_opts).report;
        r.diagnostics.retain(|d| !CROSS_PACK.contains(&d.code));
        r.cost = None;
        let l = label(&w.root, pack, prefix_root);
        if !pack.as_os_str().is_empty() || prefix_root {
            r.prefix_paths(&l);
        }
        names.push(if l.is_empty() { ".".to_string() } else { l });
        reports.push(r);
    }
    for pack in &c.removed {
        names.push(format!("{} (removed)", label(&w.root, pack, prefix_root)));
    }
    if c.cross || !c.removed.is_empty() {
        let mut all = skillbake_build::check(&w.root, opts).report;
        if prefix_root {
            all.prefix_paths(&label(&w.root, Path::new(""), true));
        }
        let cross = cross_of(&all);
        if cross != w.cross {
            names.push("cross-pack rules".to_string());
            w.cross = cross.clone();
            reports.push(Report {
                sources: all.sources,
                diagnostics: cross,
                ..Report::default()
            });
        }
    }
    if names.is_empty() {
        return None;
    }
    Some((Report::merge_all(reports), names.join(", ")))
}

/// Watches `roots` (already checked once, with `first` the cross-pack diagnostics of each)
/// until a signal ends it.
pub fn run(
    roots: &[PathBuf],
    first: &[Report],
    opts: &CheckOptions,
    printer: &Printer,
) -> ExitCode {
    let stop = super::run::stop_on_signals();
    let prefix_root = roots.len() > 1 || printer.format.wants_root_prefix();
    let mut watched: Vec<Watched> = roots
        .iter()
        .zip(first)
        .map(|(root, report)| Watched {
            root: root.clone(),
            tree: snapshot(root),
            cross: cross_of(report),
        })
        .collect();
    eprintln!("skillbake: watching for changes (Ctrl-C to stop)");
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(INTERVAL);
        for w in &mut watched {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            if let Some((report, names)) = recheck(w, opts, prefix_root) {
                eprintln!("skillbake: re-checked {names}");
                printer.print(&report);
            }
        }
    }
    eprintln!("skillbake: stopped watching");
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, u64)]) -> Tree {
        files
            .iter()
            .map(|(p, n)| (PathBuf::from(p), (*n, None)))
            .collect()
    }

    #[test]
    fn a_change_belongs_to_the_outermost_pack_above_it() {
        let old = tree(&[
            ("a/SKILL.md", 1),
            ("a/assets/example/SKILL.md", 1),
            ("group/b/SKILL.md", 1),
            ("group/b/scripts/x.py", 1),
        ]);
        let mut new = old.clone();
        new.insert("a/assets/example/SKILL.md".into(), (2, None));
        new.insert("group/b/scripts/x.py".into(), (3, None));
        let c = changes(&old, &new);
        let packs: Vec<_> = c
            .packs
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        assert_eq!(packs, ["a", "group/b"]);
        assert!(c.cross, "a SKILL.md changed");
        assert!(c.removed.is_empty());
    }

    #[test]
    fn a_removed_pack_and_a_file_outside_packs_ask_for_the_cross_pack_rules() {
        let old = tree(&[("a/SKILL.md", 1), ("b/SKILL.md", 1), ("b/schema.json", 1)]);
        let new = tree(&[("a/SKILL.md", 1), ("notes.txt", 1)]);
        let c = changes(&old, &new);
        assert!(c.packs.is_empty());
        assert_eq!(c.removed.len(), 1);
        assert!(c.cross);
        // A script edit alone leaves the cross-pack rules alone.
        let old = tree(&[("a/SKILL.md", 1), ("a/scripts/run.py", 1)]);
        let new = tree(&[("a/SKILL.md", 1), ("a/scripts/run.py", 2)]);
        let c = changes(&old, &new);
        assert_eq!(c.packs.len(), 1);
        assert!(!c.cross);
    }
}
