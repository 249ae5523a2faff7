//! `version`: a semantic version (`MAJOR.MINOR.PATCH[-pre][+build]`, see
//! [`skillbake_format::semver`]), and, in a `NAME@VERSION` folder (one version of a skill kept
//! side by side with others), the version the folder names.
//!
//! Rules that live here: `version-invalid`, `version-dir-mismatch`.

use super::PackCtx;
use crate::diagnostic::{Code, Diagnostic, Position};
use crate::parse::frontmatter::SkillMd;
use skillbake_format::semver::Version;
use yaml_serde::Value;

/// `version` as written in the file: a string's text, or a number's spelling (`1.10` stays
/// `1.10`, where YAML reads the number 1.1). `None` when absent, null or another type.
pub fn written(md: &SkillMd) -> Option<String> {
    let fm = md.frontmatter.as_ref()?;
    match fm.mapping.get("version")? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(
            md.value_pos("version")
                .and_then(|p| {
                    // `value_pos` spans the value as written, comment and trailing blanks excluded.
                    let line = md.index().line_text(p.line)?;
                    let skip = (p.column as usize).saturating_sub(1);
                    Some(
                        line.chars()
                            .skip(skip)
                            .take(p.len as usize)
                            .collect::<String>(),
                    )
                })
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| n.to_string()),
        ),
        _ => None,
    }
}

/// Checks `version` and the `NAME@VERSION` folder.
pub fn check(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) {
    let file = &ctx.file;
    let pos = ctx.md.value_pos("version");
    let value = ctx.field("version");
    let text = written(ctx.md);
    if let Some(text) = &text {
        if let Err(why) = Version::parse(text) {
            let is_number = matches!(value, Some(Value::Number(_)));
            let what = if is_number {
                format!("`version` is the number `{text}`, not a semantic version")
            } else {
                format!("`version` `{text}` is not a semantic version: {why}")
            };
            let fix = match Version::parse_lenient(text.trim()) {
                Some(v) => format!("write `version: \"{v}\"`"),
                None => "write it in quotes, e.g. `version: \"1.0.0\"`".to_string(),
            };
            diags.push(
                Diagnostic::new(Code::VersionInvalid, file, what)
                    .at(pos)
                    .help(format!("{fix}: MAJOR.MINOR.PATCH, as in semver.org")),
            );
        }
    }
    let Some(dir_version) = ctx.pack.dir_version() else {
        return;
    };
    let folder = &ctx.pack.dir_name;
    match &text {
        Some(v) if v == dir_version => {}
        Some(v) => diags.push(
            Diagnostic::new(
                Code::VersionDirMismatch,
                file,
                format!("`version` is `{v}` but the pack's folder `{folder}` names version `{dir_version}`"),
            )
            .at(pos)
            .help(format!(
                "set `version: \"{dir_version}\"`, or rename the folder to `{}@{v}`",
                ctx.pack.dir_skill_name()
            )),
        ),
        None => diags.push(
            Diagnostic::new(
                Code::VersionDirMismatch,
                file,
                format!("the pack's folder `{folder}` names version `{dir_version}`, but `SKILL.md` declares no `version`"),
            )
            .at(ctx.md.key_pos("version").or(Some(Position::span(1, 1, 3))))
            .help(format!("add `version: \"{dir_version}\"` to the frontmatter")),
        ),
    }
}
