//! What a diff is made of: each classified change, each pack's verdict, the whole diff.

use super::rules::{Bump, Rule};

/// One classified difference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// What kind of change (and so the bump it needs).
    pub rule: Rule,
    /// The pack file it concerns, relative to the pack (`schema.json`, `scripts/run.py`).
    pub file: Option<String>,
    /// Where in that file: a JSON pointer into `schema.json`.
    pub pointer: Option<String>,
    /// One sentence for a reviewer.
    pub message: String,
    /// Longer evidence: the unified diff of the instructions.
    pub detail: Option<String>,
    /// The name the change is about, where it is one name (the permission, the tool).
    pub subject: Option<String>,
}

/// What happened to a pack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    /// Only on the new side.
    Added,
    /// Only on the old side.
    Removed,
    /// On both, different.
    Changed,
    /// On both, byte for byte the same.
    Unchanged,
}

impl Status {
    /// Lower-case name, as in the JSON report.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Added => "added",
            Status::Removed => "removed",
            Status::Changed => "changed",
            Status::Unchanged => "unchanged",
        }
    }
}

/// One side of a compared pack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackRef {
    /// `version` as written.
    pub version: Option<String>,
    /// Its `SKILL.md`, relative to the skills folder.
    pub path: String,
}

/// Which number moved between two versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Made {
    /// A side has no version, or one that is not a semantic version.
    Unversioned,
    /// The same version.
    Same,
    /// The new version is lower.
    Downgrade,
    /// Same numbers, another pre-release.
    Prerelease,
    /// The patch number.
    Patch,
    /// The minor number.
    Minor,
    /// The major number.
    Major,
}

impl Made {
    /// Lower-case name, as in the JSON report.
    pub fn as_str(self) -> &'static str {
        match self {
            Made::Unversioned => "unversioned",
            Made::Same => "none",
            Made::Downgrade => "downgrade",
            Made::Prerelease => "prerelease",
            Made::Patch => "patch",
            Made::Minor => "minor",
            Made::Major => "major",
        }
    }
}

/// The bump needed against the bump made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The largest bump the changes need.
    pub needed: Bump,
    /// The bump the versions show.
    pub made: Made,
    /// Whether the new version is enough; `None` when a side has no semantic version.
    pub ok: Option<bool>,
    /// The lowest version that would be enough (when `ok` is `Some(false)`).
    pub required: Option<String>,
}

/// The comparison of one pack (one version of one skill).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackDiff {
    /// The skill's name.
    pub name: String,
    /// What happened to it.
    pub status: Status,
    /// The old side.
    pub old: Option<PackRef>,
    /// The new side.
    pub new: Option<PackRef>,
    /// Every change, most serious first.
    pub changes: Vec<Change>,
    /// The bump needed and made.
    pub verdict: Verdict,
}

impl PackDiff {
    /// `send-email 1.0.0 → 2.0.0`, `send-email 1.0.0` (one side only), `send-email`.
    pub fn title(&self) -> String {
        let v = |r: &Option<PackRef>| r.as_ref().and_then(|r| r.version.clone());
        match (v(&self.old), v(&self.new)) {
            (Some(a), Some(b)) => format!("{} {a} → {b}", self.name),
            (None, Some(b)) => format!("{} {b}", self.name),
            (Some(a), None) => format!("{} {a}", self.name),
            (None, None) => self.name.clone(),
        }
    }

    /// Changes that add permissions.
    pub fn escalations(&self) -> impl Iterator<Item = &Change> {
        self.changes
            .iter()
            .filter(|c| c.rule == Rule::PermissionAdded)
    }
}

/// The comparison of two skills folders.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Diff {
    /// What the old side is (a folder, or `REV:PATH`).
    pub old_label: String,
    /// What the new side is.
    pub new_label: String,
    /// Every pack, by name then version.
    pub packs: Vec<PackDiff>,
}

impl Diff {
    /// Packs whose version is lower than their changes need.
    pub fn not_bumped(&self) -> impl Iterator<Item = &PackDiff> {
        self.packs.iter().filter(|p| p.verdict.ok == Some(false))
    }

    /// How many packs have `status`.
    pub fn count(&self, status: Status) -> usize {
        self.packs.iter().filter(|p| p.status == status).count()
    }
}
