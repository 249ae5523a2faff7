//! The semver gate of `skillbake check --baseline REV`: the diff against the baseline turned
//! into diagnostics that live with all the others (every output format, lint levels, `explain`).
//!
//! Rules that live here: `version-not-bumped`, `permission-escalation`.
//!
//! * `version-not-bumped` (error): a pack changed in ways that need a bigger version than the
//!   one it has (see [`super::verdict`]); at the `version` value, naming the changes and the
//!   lowest version that would do. Packs without a semantic version on either side are not
//!   judged (`version-invalid` is the rule for those).
//! * `permission-escalation` (warning): a pack asks for a permission its baseline did not have;
//!   at the permission, so that a reviewer looks at it even when the version was bumped.

use super::{Diff, PackDiff};
use crate::diagnostic::{Code, Diagnostic, Position};
use crate::model::Skill;
use crate::parse::frontmatter::{self, SkillMd};

fn parsed(skill: &Skill, file: &str) -> Option<SkillMd> {
    let md = skill.files.iter().find(|f| f.path == "SKILL.md")?;
    let mut ignored = Vec::new();
    frontmatter::parse(&md.bytes, file, &mut ignored)
}

fn not_bumped(p: &PackDiff, md: Option<&SkillMd>, file: &str) -> Option<Diagnostic> {
    if p.verdict.ok != Some(false) {
        return None;
    }
    let needed = p.verdict.needed;
    let old = p.old.as_ref()?.version.as_deref()?;
    let new = p.new.as_ref()?.version.as_deref()?;
    let reasons: Vec<String> = p
        .changes
        .iter()
        .filter(|c| c.rule.bump() == needed)
        .map(|c| format!("{} ({})", c.message, c.rule))
        .collect();
    let shown: Vec<&str> = reasons.iter().take(3).map(String::as_str).collect();
    let more = match reasons.len().saturating_sub(3) {
        0 => String::new(),
        n => format!("; and {n} more"),
    };
    let moved = if old == new {
        format!("its version is still {new}")
    } else {
        format!("its version only goes from {old} to {new}")
    };
    let required = p.verdict.required.as_deref().unwrap_or("a higher version");
    let pos = md
        .and_then(|m| m.value_pos("version"))
        .or(Some(Position::span(1, 1, 3)));
    Some(
        Diagnostic::new(
            Code::VersionNotBumped,
            file,
            format!(
                "`{}` has changes that need a {needed} version, but {moved}",
                p.name
            ),
        )
        .at(pos)
        .note(format!("{}{more}", shown.join("; ")))
        .help(format!(
            "set `version: \"{required}\"` (or higher), or undo the changes; `skillbake diff --baseline REV` shows each one"
        )),
    )
}

fn escalations(p: &PackDiff, md: Option<&SkillMd>, file: &str, out: &mut Vec<Diagnostic>) {
    for c in p.escalations() {
        let permission = c.subject.clone().unwrap_or_default();
        let pos = md.and_then(|m| m.find_in_value("permission", &permission));
        let was = p
            .old
            .as_ref()
            .and_then(|o| o.version.as_deref())
            .map_or_else(
                || "its baseline".to_string(),
                |v| format!("its baseline ({v})"),
            );
        out.push(
            Diagnostic::new(
                Code::PermissionEscalation,
                file,
                format!(
                    "`{}` now asks for permission `{permission}`, which {was} did not have",
                    p.name
                ),
            )
            .at(pos)
            .help(format!(
                "review what the pack does with `{permission}`: agents must grant it to run the pack; allow `permission-escalation` for this check once reviewed"
            )),
        );
    }
}

/// The gate's diagnostics for the packs of `new` (the checked side, `Checked::skills`) in `diff`.
pub fn diagnostics(diff: &Diff, new: &[Skill]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for p in &diff.packs {
        let Some(side) = &p.new else { continue };
        if p.old.is_none() {
            continue;
        }
        let skill = new.iter().find(|s| {
            s.name == p.name
                && crate::discover::join(&s.rel_dir, crate::discover::SKILL_MD) == side.path
        });
        let md = skill.and_then(|s| parsed(s, &side.path));
        out.extend(not_bumped(p, md.as_ref(), &side.path));
        escalations(p, md.as_ref(), &side.path, &mut out);
    }
    out
}
