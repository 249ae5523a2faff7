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
//! * every difference is a [`Change`] of one [`Rule`] of the change table, each with the
//!   [`Bump`] it needs: `schema.json`, permissions, `required_tools`, routing text, other
//!   frontmatter fields, the instructions (with a unified diff) and the files.
//! * the bump a pack needs is the largest of its changes'; the bump made is read from the two
//!   versions ([`Verdict`]). SemVer's 0.x rule applies: below 1.0.0 a breaking change needs the
//!   minor number to move (0.2.3 → 0.3.0) and 0.0.x versions move for any change.
//!
//! Reports: [`report`] renders a [`Diff`] for the terminal, as JSON and as Markdown for a
//! pull-request comment; `check --baseline` turns it into the gate's diagnostics
//! (`version-not-bumped`, `permission-escalation`).

pub(crate) mod gate;
pub mod git;
pub(crate) mod pack;
pub mod report;
pub(crate) mod rules;
pub(crate) mod schema;
pub(crate) mod text;

mod change;

pub use change::{Change, Diff, Made, PackDiff, PackRef, Status, Verdict};
pub use rules::{Area, Bump, Rule};

use crate::model::Skill;
use skillbake_format::semver::Version;
use std::collections::BTreeMap;

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
    crate::model::effective_version(s.version.as_deref())
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
        old.and_then(|v| crate::model::effective_version(Some(v))),
        new.and_then(|v| crate::model::effective_version(Some(v))),
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

/// Compares the packs of two checked skills folders (each side's [`check`](fn@crate::check)),
/// labelled `old_label` and `new_label` in the reports.
pub fn diff(old: &crate::Checked, new: &crate::Checked, old_label: &str, new_label: &str) -> Diff {
    diff_packs(&old.skills, &new.skills, old_label, new_label)
}

/// [`diff`] on the packs themselves.
pub(crate) fn diff_packs(old: &[Skill], new: &[Skill], old_label: &str, new_label: &str) -> Diff {
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
