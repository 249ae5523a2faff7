//! Several versions of one skill in the record table: records are ordered by name, then by
//! version (oldest first, a pack without a semantic version before the others), so the versions
//! of a skill are one contiguous run. Every record carries that run (`versions`) and whether it
//! is the version an agent gets by name (`default`); the `phf` index maps each name to its
//! default record only.

use crate::model::Skill;
use crate::validate::version;
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

fn by_version(a: &Skill, b: &Skill) -> Ordering {
    match (
        version::effective(a.version.as_deref()),
        version::effective(b.version.as_deref()),
    ) {
        (Some(x), Some(y)) => x
            .precedence(&y)
            .then_with(|| a.version.cmp(&b.version))
            .then_with(|| a.rel_dir.cmp(&b.rel_dir)),
        (x, y) => x
            .is_some()
            .cmp(&y.is_some())
            .then_with(|| a.rel_dir.cmp(&b.rel_dir)),
    }
}

/// The skills in record order: by name, then version.
pub fn order(skills: &[Skill]) -> Vec<&Skill> {
    let mut sorted: Vec<&Skill> = skills.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| by_version(a, b)));
    sorted
}

/// For every record of `sorted` (see [`order`]), its skill's [`Group`]. The default is the
/// record marked [`Skill::default`] when exactly one of the run is, else the newest release (the
/// newest record when there is none).
pub fn groups(sorted: &[&Skill]) -> Vec<Group> {
    let mut out = Vec::with_capacity(sorted.len());
    let mut start = 0;
    while start < sorted.len() {
        let name = &sorted[start].name;
        let end = start
            + sorted[start..]
                .iter()
                .take_while(|s| &s.name == name)
                .count();
        let run = &sorted[start..end];
        let marked: Vec<usize> = (start..end).filter(|&i| sorted[i].default).collect();
        let default = match marked.as_slice() {
            [one] => *one,
            _ => {
                let release = (start..end).rev().find(|&i| {
                    version::effective(sorted[i].version.as_deref())
                        .is_some_and(|v| !v.is_prerelease())
                });
                release.unwrap_or(start + run.len() - 1)
            }
        };
        out.extend(std::iter::repeat_n(
            Group {
                start,
                end,
                default,
            },
            run.len(),
        ));
        start = end;
    }
    out
}
