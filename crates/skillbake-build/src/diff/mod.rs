//! `skillbake diff`: what changed between two states of a skills folder, per pack, how serious
//! each change is, and whether the version says so.
//!
//! Both sides are checked like any skills folder (a folder on disk, or a git revision of one read
//! through git without a checkout, see [`git`]); their validated packs are paired and compared:
//!
//! * packs pair by skill name. With one version on each side the two are compared whatever their
//!   versions. With several, a version compares with the same version on the other side (an edit
//!   in place) or else with the newest older one (its predecessor); an old version that neither
//!   pairs nor precedes anything is reported removed.
//! * every difference is a [`Change`] of one [`Rule`] of the table in [`rules`], each with the
//!   [`Bump`] it needs: `schema.json` ([`schema`]), permissions, `required_tools`, routing text,
//!   other frontmatter fields, the instructions (with a unified diff, [`text`]) and the files
//!   ([`pack`]).
//! * the bump a pack needs is the largest of its changes'; the bump made is read from the two
//!   versions ([`Verdict`]). SemVer's 0.x rule applies: below 1.0.0 a breaking change needs the
//!   minor number to move (0.2.3 → 0.3.0) and 0.0.x versions move for any change.
//!
//! Reports: [`report`] renders a [`Diff`] for the terminal, as JSON and as Markdown for a
//! pull-request comment; [`gate`] turns it into `check --baseline` diagnostics.

pub mod gate;
pub mod git;
pub mod pack;
pub mod report;
pub mod rules;
pub mod schema;
pub mod text;

pub use rules::{Area, Bump, Rule};

use crate::model::Skill;
use crate::validate::version;
use skillbake_format::semver::Version;
use std::collections::BTreeMap;

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

fn skill_md(s: &Skill) -> String {
    crate::discover::join(&s.rel_dir, crate::discover::SKILL_MD)
}

fn pack_ref(s: &Skill) -> PackRef {
    PackRef {
        version: s.version.clone(),
        path: skill_md(s),
    }
}

fn semver(s: &Skill) -> Option<Version<'_>> {
    version::effective(s.version.as_deref())
}

/// The lowest version `old` must move to for `need`.
pub fn required_version(old: &Version<'_>, need: Bump) -> Option<(u64, u64, u64)> {
    let (ma, mi, pa) = (old.major, old.minor, old.patch);
    let next = |n: u64| n.checked_add(1);
    Some(match need {
        Bump::None => return None,
        Bump::Major if ma > 0 => (next(ma)?, 0, 0),
        Bump::Major if mi > 0 => (0, next(mi)?, 0),
        Bump::Major => (0, 0, next(pa)?),
        Bump::Minor if ma > 0 => (ma, next(mi)?, 0),
        Bump::Minor | Bump::Patch => (ma, mi, next(pa)?),
    })
}

/// The verdict on moving from `old` to `new` with changes needing `needed`.
pub fn verdict(old: Option<&str>, new: Option<&str>, needed: Bump) -> Verdict {
    let (Some(a), Some(b)) = (
        old.and_then(|v| version::effective(Some(v))),
        new.and_then(|v| version::effective(Some(v))),
    ) else {
        return Verdict {
            needed,
            made: Made::Unversioned,
            ok: None,
            required: None,
        };
    };
    let (ta, tb) = ((a.major, a.minor, a.patch), (b.major, b.minor, b.patch));
    let made = match tb.cmp(&ta) {
        std::cmp::Ordering::Less => Made::Downgrade,
        std::cmp::Ordering::Equal => match b.precedence(&a) {
            std::cmp::Ordering::Equal => Made::Same,
            std::cmp::Ordering::Less => Made::Downgrade,
            std::cmp::Ordering::Greater => Made::Prerelease,
        },
        std::cmp::Ordering::Greater if tb.0 != ta.0 => Made::Major,
        std::cmp::Ordering::Greater if tb.1 != ta.1 => Made::Minor,
        std::cmp::Ordering::Greater => Made::Patch,
    };
    let required = required_version(&a, needed);
    // Pre-releases promise nothing: moving on from one (to a later pre-release or the
    // release of the same numbers) is enough for any change.
    let ok = if needed == Bump::None {
        true
    } else if a.is_prerelease() && ta == tb {
        b.precedence(&a).is_gt()
    } else {
        required.is_some_and(|r| tb >= r)
    };
    Verdict {
        needed,
        made,
        ok: Some(ok),
        required: (!ok)
            .then(|| required.map(|(x, y, z)| format!("{x}.{y}.{z}")))
            .flatten(),
    }
}

fn finish(
    name: &str,
    old: Option<&Skill>,
    new: Option<&Skill>,
    mut changes: Vec<Change>,
) -> PackDiff {
    changes.sort_by_key(|c| std::cmp::Reverse(c.rule.bump()));
    let needed = changes
        .iter()
        .map(|c| c.rule.bump())
        .max()
        .unwrap_or(Bump::None);
    let status = match (old, new) {
        (None, _) => Status::Added,
        (_, None) => Status::Removed,
        (Some(o), Some(n)) if o.files == n.files => Status::Unchanged,
        _ => Status::Changed,
    };
    let verdict = match (old, new) {
        (Some(o), Some(n)) => verdict(o.version.as_deref(), n.version.as_deref(), needed),
        _ => Verdict {
            needed,
            made: Made::Unversioned,
            ok: None,
            required: None,
        },
    };
    PackDiff {
        name: name.to_string(),
        status,
        old: old.map(pack_ref),
        new: new.map(pack_ref),
        changes,
        verdict,
    }
}

/// Compares the packs of two checked skills folders (`Checked::skills` of each side).
pub fn diff(old: &[Skill], new: &[Skill], old_label: &str, new_label: &str) -> Diff {
    let mut by_name: BTreeMap<&str, (Vec<&Skill>, Vec<&Skill>)> = BTreeMap::new();
    for s in old {
        by_name.entry(&s.name).or_default().0.push(s);
    }
    for s in new {
        by_name.entry(&s.name).or_default().1.push(s);
    }
    let mut packs = Vec::new();
    for (name, (mut olds, mut news)) in by_name {
        let by_version = |a: &&Skill, b: &&Skill| match (semver(a), semver(b)) {
            (Some(x), Some(y)) => x.precedence(&y),
            (x, y) => x.is_some().cmp(&y.is_some()),
        };
        olds.sort_by(by_version);
        news.sort_by(by_version);
        packs.extend(pair(name, &olds, &news));
    }
    Diff {
        old_label: old_label.to_string(),
        new_label: new_label.to_string(),
        packs,
    }
}

/// Pairs the versions of one skill (both lists oldest first) and compares each pair.
fn pair(name: &str, olds: &[&Skill], news: &[&Skill]) -> Vec<PackDiff> {
    let mut out = Vec::new();
    if olds.is_empty() {
        for n in news {
            let c = Change {
                rule: Rule::SkillAdded,
                file: None,
                pointer: None,
                message: format!("skill `{name}` is new"),
                detail: None,
                subject: None,
            };
            out.push(finish(name, None, Some(n), vec![c]));
        }
        return out;
    }
    if news.is_empty() {
        for o in olds {
            let c = Change {
                rule: Rule::SkillRemoved,
                file: None,
                pointer: None,
                message: format!("skill `{name}` is no longer embedded"),
                detail: None,
                subject: None,
            };
            out.push(finish(name, Some(o), None, vec![c]));
        }
        return out;
    }
    if let ([o], [n]) = (olds, news) {
        out.push(finish(name, Some(o), Some(n), pack::compare(o, n)));
        return out;
    }
    let mut used = vec![false; olds.len()];
    for n in news {
        let nv = semver(n);
        let same = olds.iter().position(
            |o| matches!((semver(o), nv), (Some(a), Some(b)) if a.precedence(&b).is_eq()),
        );
        let base = same.or_else(|| {
            olds.iter().rposition(
                |o| matches!((semver(o), nv), (Some(a), Some(b)) if a.precedence(&b).is_lt()),
            )
        });
        match base {
            Some(i) => {
                used[i] = true;
                out.push(finish(
                    name,
                    Some(olds[i]),
                    Some(n),
                    pack::compare(olds[i], n),
                ));
            }
            None => {
                let c = Change {
                    rule: Rule::VersionAdded,
                    file: None,
                    pointer: None,
                    message: format!(
                        "version {} of `{name}` is new, older than every earlier version",
                        n.version.as_deref().unwrap_or("(none)")
                    ),
                    detail: None,
                    subject: None,
                };
                out.push(finish(name, None, Some(n), vec![c]));
            }
        }
    }
    for (i, o) in olds.iter().enumerate() {
        if used[i] {
            continue;
        }
        let c = Change {
            rule: Rule::VersionRemoved,
            file: None,
            pointer: None,
            message: format!(
                "version {} of `{name}` is no longer embedded",
                o.version.as_deref().unwrap_or("(none)")
            ),
            detail: None,
            subject: None,
        };
        out.push(finish(name, Some(o), None, vec![c]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_versions_follow_semver_and_cargo_for_0_x() {
        let v = |s| Version::parse(s).unwrap_or(Version::new(0, 0, 0));
        assert_eq!(required_version(&v("1.2.3"), Bump::Major), Some((2, 0, 0)));
        assert_eq!(required_version(&v("1.2.3"), Bump::Minor), Some((1, 3, 0)));
        assert_eq!(required_version(&v("1.2.3"), Bump::Patch), Some((1, 2, 4)));
        assert_eq!(required_version(&v("0.2.3"), Bump::Major), Some((0, 3, 0)));
        assert_eq!(required_version(&v("0.2.3"), Bump::Minor), Some((0, 2, 4)));
        assert_eq!(required_version(&v("0.0.3"), Bump::Major), Some((0, 0, 4)));
    }

    #[test]
    fn verdicts() {
        let ok = |a, b, n| verdict(Some(a), Some(b), n).ok;
        assert_eq!(ok("1.0.0", "2.0.0", Bump::Major), Some(true));
        assert_eq!(ok("1.0.0", "1.1.0", Bump::Major), Some(false));
        assert_eq!(ok("1.0.0", "1.1.0", Bump::Minor), Some(true));
        assert_eq!(ok("1.0.0", "1.0.0", Bump::Patch), Some(false));
        assert_eq!(ok("1.0.0", "1.0.0", Bump::None), Some(true));
        assert_eq!(ok("1.0.0", "2.0.0-rc.1", Bump::Major), Some(true));
        assert_eq!(ok("2.0.0-rc.1", "2.0.0-rc.2", Bump::Major), Some(true));
        assert_eq!(ok("2.0.0-rc.1", "2.0.0", Bump::Major), Some(true));
        assert_eq!(ok("0.1.0", "0.2.0", Bump::Major), Some(true));
        assert_eq!(ok("0.1.0", "0.1.1", Bump::Major), Some(false));
        let v = verdict(Some("1.4.2"), Some("1.5.0"), Bump::Major);
        assert_eq!(
            (v.made, v.required.as_deref()),
            (Made::Minor, Some("2.0.0"))
        );
        assert_eq!(verdict(None, Some("1.0.0"), Bump::Major).ok, None);
    }
}
