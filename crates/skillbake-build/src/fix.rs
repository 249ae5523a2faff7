//! `check --fix` and `check --diff`: the fixes that diagnostics carry ([`Fix`]), applied.
//!
//! A plan is made in memory: check, apply every fix that does not overlap another to the text
//! that was checked, check the result again (with [`check_overlay`]: nothing is written), until
//! no fix is left or a bound on the passes is reached — a fix can uncover another (a quoted
//! value lets the frontmatter parse, and its misspelt key is then reported). A file whose bytes
//! on disk are no longer those checked is left alone. A fix that needs its pack's folder
//! renamed is applied only when renames are asked for ([`FixOptions::rename_dirs`]), and a
//! rename never replaces anything. What no fix resolves stays in the final check.

use crate::check::{check, check_overlay, CheckOptions};
use crate::checked::Checked;
use crate::diagnostic::{Diagnostic, Edit, Fix};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Most rounds of check-and-fix a plan makes.
const MAX_PASSES: usize = 8;

/// What a plan may do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FixOptions {
    /// Apply fixes that rename a pack's folder (`--rename-dirs`).
    pub rename_dirs: bool,
}

/// One file's change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// `/`-separated path relative to the checked root.
    pub path: String,
    /// The text as it is.
    pub before: String,
    /// The text with the fixes applied.
    pub after: String,
    /// What each applied fix did, in the order applied.
    pub fixes: Vec<String>,
}

/// A folder to rename.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rename {
    /// The folder, `/`-separated and relative to the checked root (`""`: the root itself).
    pub from: String,
    /// Its new name (the last component only).
    pub to: String,
    /// Why.
    pub message: String,
}

/// What [`plan`] would change, and the check of the state after it.
#[derive(Debug)]
pub struct Plan {
    /// Changed files, by path.
    pub files: Vec<FileChange>,
    /// Folders to rename, applied after the files.
    pub renames: Vec<Rename>,
    /// Fixes left out, with why (a rename not asked for, a file changed meanwhile, ...).
    pub skipped: Vec<String>,
    /// The check of the files as the plan leaves them (renames not applied).
    pub after: Checked,
}

/// Applies `edits` to `text`: sorted by position, an edit that overlaps one before it, or that
/// does not fall on character boundaries, is left out. Returns the text and the edits used.
pub fn apply_edits(text: &str, edits: &[Edit]) -> (String, Vec<Edit>) {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort();
    sorted.dedup();
    let mut out = String::with_capacity(text.len());
    let mut used = Vec::new();
    let mut at = 0;
    for e in sorted {
        let ok = e.start >= at
            && e.start <= e.end
            && text.is_char_boundary(e.start)
            && text.is_char_boundary(e.end);
        let Some(kept) = text.get(at..e.start).filter(|_| ok) else {
            continue;
        };
        out.push_str(kept);
        out.push_str(&e.text);
        at = e.end;
        used.push(e.clone());
    }
    out.push_str(text.get(at..).unwrap_or_default());
    (out, used)
}

/// The folder holding `file` (`pack/SKILL.md` → `pack`).
fn folder_of(file: &str) -> &str {
    file.rsplit_once('/').map_or("", |(d, _)| d)
}

/// The state of a plan while it is made.
struct Planner<'a> {
    root: &'a Path,
    fix: FixOptions,
    /// The text of every file changed so far, as the plan leaves it.
    texts: BTreeMap<String, String>,
    /// The text of every file changed so far, as it was.
    originals: BTreeMap<String, String>,
    messages: BTreeMap<String, Vec<String>>,
    renames: BTreeMap<String, Rename>,
    skipped: Vec<String>,
}

impl Planner<'_> {
    /// The current text of `file`, when it is what the check read (`source`).
    fn text(&mut self, file: &str, source: Option<&String>) -> Option<String> {
        if let Some(t) = self.texts.get(file) {
            return Some(t.clone());
        }
        let disk = std::fs::read_to_string(self.root.join(file)).ok()?;
        if source.is_some_and(|s| *s != disk) {
            self.skipped
                .push(format!("{file}: changed while it was checked; not fixed"));
            return None;
        }
        self.originals.insert(file.to_string(), disk.clone());
        Some(disk)
    }

    /// Applies this round's fixes; whether any edit was made.
    fn round(&mut self, checked: &Checked) -> bool {
        let mut by_file: BTreeMap<&str, Vec<&Diagnostic>> = BTreeMap::new();
        for d in &checked.report.diagnostics {
            if d.fix.is_some() {
                by_file.entry(d.file.as_str()).or_default().push(d);
            }
        }
        let mut changed = false;
        for (file, diags) in by_file {
            let mut edits: Vec<Edit> = Vec::new();
            let mut what: Vec<(Vec<Edit>, String)> = Vec::new();
            for d in diags {
                let Some(fix) = d.fix.as_deref() else {
                    continue;
                };
                if !self.accept(file, d, fix) {
                    continue;
                }
                edits.extend(fix.edits.iter().cloned());
                what.push((fix.edits.clone(), fix.message.clone()));
            }
            if edits.is_empty() {
                continue;
            }
            let Some(text) = self.text(file, checked.report.sources.get(file)) else {
                continue;
            };
            let (after, used) = apply_edits(&text, &edits);
            if used.is_empty() || after == text {
                continue;
            }
            let messages = self.messages.entry(file.to_string()).or_default();
            for (fix_edits, message) in what {
                if fix_edits.iter().all(|e| used.contains(e)) && !messages.contains(&message) {
                    messages.push(message);
                }
            }
            self.texts.insert(file.to_string(), after);
            changed = true;
        }
        changed
    }

    /// Whether the fix of `d` may be applied; records its rename when it has one.
    fn accept(&mut self, file: &str, d: &Diagnostic, fix: &Fix) -> bool {
        let Some(to) = &fix.rename_dir else {
            return true;
        };
        let from = folder_of(file).to_string();
        if !self.fix.rename_dirs {
            let note = format!(
                "{file}:{}: {} (needs `--rename-dirs`)",
                d.line.unwrap_or(1),
                fix.message
            );
            if !self.skipped.contains(&note) {
                self.skipped.push(note);
            }
            return false;
        }
        let target = self.dir(&from).with_file_name(to);
        if target.symlink_metadata().is_ok() {
            self.skipped.push(format!(
                "{file}: {} (`{}` exists already)",
                fix.message,
                target.display()
            ));
            return false;
        }
        self.renames.entry(from.clone()).or_insert(Rename {
            from,
            to: to.clone(),
            message: fix.message.clone(),
        });
        true
    }

    /// The folder `rel` of the root on disk.
    fn dir(&self, rel: &str) -> PathBuf {
        if rel.is_empty() {
            std::fs::canonicalize(self.root).unwrap_or_else(|_| self.root.to_path_buf())
        } else {
            self.root.join(rel)
        }
    }
}

/// Plans the fixes of the skills root (or pack) at `root`, checked with `opts`.
pub fn plan(root: &Path, opts: &CheckOptions, fix: FixOptions) -> Plan {
    let mut planner = Planner {
        root,
        fix,
        texts: BTreeMap::new(),
        originals: BTreeMap::new(),
        messages: BTreeMap::new(),
        renames: BTreeMap::new(),
        skipped: Vec::new(),
    };
    let mut checked = check(root, opts);
    for _ in 0..MAX_PASSES {
        if !planner.round(&checked) {
            break;
        }
        let overlay: Vec<(String, Vec<u8>)> = planner
            .texts
            .iter()
            .map(|(p, t)| (p.clone(), t.clone().into_bytes()))
            .collect();
        checked = check_overlay(root, opts, &overlay);
    }
    let files = planner
        .texts
        .iter()
        .filter_map(|(path, after)| {
            let before = planner.originals.get(path)?;
            (before != after).then(|| FileChange {
                path: path.clone(),
                before: before.clone(),
                after: after.clone(),
                fixes: planner.messages.get(path).cloned().unwrap_or_default(),
            })
        })
        .collect();
    Plan {
        files,
        renames: planner.renames.into_values().collect(),
        skipped: planner.skipped,
        after: checked,
    }
}

impl Plan {
    /// Whether the plan changes nothing.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.renames.is_empty()
    }

    /// The plan as a unified diff, paths under `prefix` (`a/PREFIX/FILE`, `b/PREFIX/FILE`), and
    /// a `rename` line per folder.
    pub fn diff(&self, prefix: &str) -> String {
        let mut out = String::new();
        let under = |p: &str| crate::discover::join(prefix, p);
        for f in &self.files {
            let path = under(&f.path);
            out.push_str(&format!("--- a/{path}\n+++ b/{path}\n"));
            out.push_str(&crate::diff::text::unified(&f.before, &f.after, 3));
        }
        for r in &self.renames {
            let from = under(&r.from);
            let to = match from.rsplit_once('/') {
                Some((parent, _)) => format!("{parent}/{}", r.to),
                None => r.to.clone(),
            };
            out.push_str(&format!("rename from {from}\nrename to {to}\n"));
        }
        out
    }

    /// Writes the changed files under `root`, then renames the folders. Stops at the first
    /// failure, saying what it could not do; what was written before stays written.
    pub fn apply(&self, root: &Path) -> Result<(), String> {
        for f in &self.files {
            let path = root.join(&f.path);
            std::fs::write(&path, &f.after)
                .map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
        }
        for r in &self.renames {
            let from = if r.from.is_empty() {
                std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf())
            } else {
                root.join(&r.from)
            };
            let to = from.with_file_name(&r.to);
            if to.symlink_metadata().is_ok() {
                return Err(format!(
                    "cannot rename `{}`: `{}` exists",
                    from.display(),
                    to.display()
                ));
            }
            std::fs::rename(&from, &to).map_err(|e| {
                format!(
                    "cannot rename `{}` to `{}`: {e}",
                    from.display(),
                    to.display()
                )
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(start: usize, end: usize, text: &str) -> Edit {
        Edit {
            start,
            end,
            text: text.into(),
        }
    }

    #[test]
    fn edits_apply_in_order_and_overlaps_are_left_out() {
        let (out, used) = apply_edits(
            "abcdef",
            &[
                edit(4, 5, "E"),
                edit(0, 2, "AB"),
                edit(1, 3, "x"),
                edit(6, 6, "!"),
            ],
        );
        assert_eq!(out, "ABcdEf!");
        assert_eq!(used.len(), 3);
        // Not on a character boundary.
        let (out, used) = apply_edits("é", &[edit(1, 2, "e")]);
        assert_eq!(out, "é");
        assert!(used.is_empty());
    }
}
