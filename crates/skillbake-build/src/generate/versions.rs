//! Several versions of one skill in the record table: records are ordered by name, then by
//! version (oldest first, a pack without a semantic version before the others), so the versions
//! of a skill are one contiguous run. Every record carries that run (`versions`) and whether it
//! is the version an agent gets by name (`default`); the `phf` index maps each name to its
//! default record only.

use crate::model::Skill;
use std::cmp::Ordering;

/// The run of records holding one skill's versions, and its default record (indices into the
/// ordered table).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Group {
    /// First record of the skill.
    pub start: usize,
    /// One past its last record.
    pub end: usize,
    /// The record an agent gets by name.
    pub default: usize,
}

/// What orders a record among the versions of its skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key<'a> {
    /// The skill's name.
    pub name: &'a str,
    /// `version` as written.
    pub version: Option<&'a str>,
    /// The pack's folder (the last tie-breaker).
    pub rel_dir: &'a str,
    /// [`Skill::default`].
    pub default: bool,
}

impl<'a> Key<'a> {
    /// The key of a validated pack.
    pub fn of(s: &'a Skill) -> Key<'a> {
        Key {
            name: &s.name,
            version: s.version.as_deref(),
            rel_dir: &s.rel_dir,
            default: s.default,
        }
    }
}

fn by_version(a: &Key<'_>, b: &Key<'_>) -> Ordering {
    match (
        crate::model::effective_version(a.version),
        crate::model::effective_version(b.version),
    ) {
        (Some(x), Some(y)) => x
            .precedence(&y)
            .then_with(|| a.version.cmp(&b.version))
            .then_with(|| a.rel_dir.cmp(b.rel_dir)),
        (x, y) => x
            .is_some()
            .cmp(&y.is_some())
            .then_with(|| a.rel_dir.cmp(b.rel_dir)),
    }
}

/// Record order: by name, then version.
pub fn cmp(a: &Key<'_>, b: &Key<'_>) -> Ordering {
    a.name.cmp(b.name).then_with(|| by_version(a, b))
}

/// The skills in record order: by name, then version.
pub fn order(skills: &[Skill]) -> Vec<&Skill> {
    let mut sorted: Vec<&Skill> = skills.iter().collect();
    sorted.sort_by(|a, b| cmp(&Key::of(a), &Key::of(b)));
    sorted
}

/// For every record of `sorted` (see [`order`]), its skill's [`Group`].
pub fn groups(sorted: &[&Skill]) -> Vec<Group> {
    let keys: Vec<Key<'_>> = sorted.iter().map(|s| Key::of(s)).collect();
    groups_of(&keys)
}

/// For every key of `sorted` (in record order, see [`cmp`]), its skill's [`Group`]. The default
/// is the record marked default when exactly one of the run is, else the newest release (the
/// newest record when there is none).
pub fn groups_of(sorted: &[Key<'_>]) -> Vec<Group> {
    let mut out = Vec::with_capacity(sorted.len());
    let mut start = 0;
    while let Some(first) = sorted.get(start) {
        let name = first.name;
        let len = sorted
            .get(start..)
            .unwrap_or_default()
            .iter()
            .take_while(|s| s.name == name)
            .count();
        let end = start + len;
        let marked: Vec<usize> = (start..end)
            .filter(|&i| sorted.get(i).is_some_and(|k| k.default))
            .collect();
        let default = match marked.as_slice() {
            [one] => *one,
            _ => {
                let release = (start..end).rev().find(|&i| {
                    sorted.get(i).is_some_and(|k| {
                        crate::model::effective_version(k.version)
                            .is_some_and(|v| !v.is_prerelease())
                    })
                });
                release.unwrap_or(end - 1)
            }
        };
        out.extend(std::iter::repeat_n(
            Group {
                start,
                end,
                default,
            },
            len,
        ));
        start = end;
    }
    out
}
