//! `name`: required string, 1–64 characters of `a-z 0-9 - _`, no leading or trailing `-`/`_`,
//! equal to the pack's folder name; `_` and `--` are not portable to Agent Skills clients.

use super::PackCtx;
use crate::diagnostic::{Code, Diagnostic, Fix, Position};
use crate::parse::type_name;
use yaml_serde::Value;

/// Longest allowed name, in characters.
pub const MAX_LEN: usize = 64;

/// Checks the `name` field.
pub fn check(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) {
    let Some(name) = declared(ctx, diags) else {
        return;
    };
    let file = &ctx.file;
    let value_pos = ctx.md.value_pos("name");
    length(name, file, value_pos, diags);
    let before = diags.len();
    charset(name, file, value_pos, diags);
    if let Some(fix) = lowercase(ctx, name) {
        let raised = diags.get_mut(before..).unwrap_or_default();
        if let Some(d) = raised.iter_mut().find(|d| d.code == Code::NameCharset) {
            d.fix = Some(Box::new(fix));
        }
    }
    let before = diags.len();
    folder(ctx, name, value_pos, diags);
    if let Some(fix) = rename_folder(ctx, name) {
        let raised = diags.get_mut(before..).unwrap_or_default();
        if let Some(d) = raised.iter_mut().find(|d| d.code == Code::NameDirMismatch) {
            d.fix = Some(Box::new(fix));
        }
    }
}

/// Whether `name` passes `name-length` and `name-charset`.
fn valid(name: &str) -> bool {
    let mut probe = Vec::new();
    length(name, "", None, &mut probe);
    charset(name, "", None, &mut probe);
    probe.iter().all(|d| d.code == Code::NameNotPortable)
}

/// The folder name that goes with skill name `name` (`NAME@VERSION` keeps its version).
fn folder_for(ctx: &PackCtx<'_>, name: &str) -> String {
    match ctx.pack.dir_version() {
        Some(v) => format!("{name}@{v}"),
        None => name.to_string(),
    }
}

/// The fix of a name that only upper case makes invalid: the value as written, lowercased,
/// with the folder renamed too when it is not already the lowercase name.
fn lowercase(ctx: &PackCtx<'_>, name: &str) -> Option<Fix> {
    let lower = name.to_ascii_lowercase();
    if lower == name || !valid(&lower) {
        return None;
    }
    let loc = ctx.md.key("name")?;
    let line = ctx.md.text.get(loc.value_offset..loc.end)?;
    let line = line.split(['\n', '\r']).next().unwrap_or("");
    let written = crate::parse::frontmatter::strip_comment(line).trim_end();
    let unquoted = written
        .strip_prefix('"')
        .and_then(|w| w.strip_suffix('"'))
        .or_else(|| {
            written
                .strip_prefix('\'')
                .and_then(|w| w.strip_suffix('\''))
        })
        .unwrap_or(written);
    if unquoted != name {
        return None;
    }
    let mut fix = Fix::replace(
        format!("lowercase the name to `{lower}`"),
        loc.value_offset,
        loc.value_offset + written.len(),
        written.to_ascii_lowercase(),
    );
    if ctx.pack.dir_skill_name() != lower {
        fix.rename_dir = Some(folder_for(ctx, &lower));
        fix.message = format!("lowercase the name to `{lower}` and rename the folder to match");
    }
    Some(fix)
}

/// The fix of a folder whose name differs from a valid `name` in letter case only: rename the
/// folder (nothing in the file changes).
fn rename_folder(ctx: &PackCtx<'_>, name: &str) -> Option<Fix> {
    let dir = ctx.pack.dir_skill_name();
    if dir == name || dir.to_ascii_lowercase() != name || !valid(name) {
        return None;
    }
    let to = folder_for(ctx, name);
    Some(Fix {
        message: format!("rename the folder `{}` to `{to}`", ctx.pack.dir_name),
        edits: Vec::new(),
        rename_dir: Some(to),
    })
}

/// The declared name, or the diagnostic of a missing, empty or mistyped one.
fn declared<'a>(ctx: &'a PackCtx<'_>, diags: &mut Vec<Diagnostic>) -> Option<&'a String> {
    let file = &ctx.file;
    let key_pos = ctx.md.key_pos("name");
    let value_pos = ctx.md.value_pos("name");
    match ctx.field("name") {
        None => {
            diags.push(
                Diagnostic::new(
                    Code::NameMissing,
                    file,
                    "the required field `name` is missing",
                )
                .at(Some(Position::span(1, 1, 3)))
                .help(format!(
                    "add `name: {}` (the folder's name)",
                    ctx.pack.dir_skill_name()
                )),
            );
            None
        }
        Some(Value::String(s)) if s.trim().is_empty() => {
            diags.push(
                Diagnostic::new(Code::NameMissing, file, "`name` is empty")
                    .at(key_pos)
                    .help(format!(
                        "set `name: {}` (the folder's name)",
                        ctx.pack.dir_skill_name()
                    )),
            );
            None
        }
        Some(Value::Null) => {
            diags.push(
                Diagnostic::new(Code::NameMissing, file, "`name` has no value")
                    .at(key_pos)
                    .help(format!(
                        "set `name: {}` (the folder's name)",
                        ctx.pack.dir_skill_name()
                    )),
            );
            None
        }
        Some(Value::String(s)) => Some(s),
        Some(other) => {
            diags.push(
                super::fields::field_type(
                    file,
                    "name",
                    "a string",
                    type_name(other),
                    value_pos,
                    format!(
                        "write the name as text, e.g. `name: {}`",
                        ctx.pack.dir_skill_name()
                    ),
                )
                // DB-GPT's case-insensitive lookup calls `.lower()` on every name: it fails too.
                .profile_exempt(),
            );
            None
        }
    }
}

/// `name-length`.
fn length(name: &str, file: &str, value_pos: Option<Position>, diags: &mut Vec<Diagnostic>) {
    let len = name.chars().count();
    if len > MAX_LEN {
        diags.push(
            Diagnostic::new(
                Code::NameLength,
                file,
                format!("`name` is {len} characters long; the limit is {MAX_LEN}"),
            )
            .at(value_pos)
            .help("shorten the name (and rename the folder to match)"),
        );
    }
}

/// `name-charset` and `name-not-portable`.
fn charset(name: &str, file: &str, value_pos: Option<Position>, diags: &mut Vec<Diagnostic>) {
    let bad: Vec<char> = name
        .chars()
        .filter(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-' || *c == '_'))
        .collect();
    if !bad.is_empty() {
        let mut shown: Vec<String> = Vec::new();
        for c in &bad {
            let s = format!("`{}`", c.escape_debug());
            if !shown.contains(&s) {
                shown.push(s);
            }
        }
        let suggestion = suggest(name);
        let mut d = Diagnostic::new(
            Code::NameCharset,
            file,
            format!(
                "`name` `{name}` contains {}; only lowercase ASCII letters, digits, `-` and `_` are allowed",
                shown.join(", ")
            ),
        )
        .at(value_pos);
        if !suggestion.is_empty() {
            d = d.help(format!(
                "use `name: {suggestion}` (and the same folder name)"
            ));
        }
        diags.push(d);
    } else if name.starts_with(['-', '_']) || name.ends_with(['-', '_']) {
        diags.push(
            Diagnostic::new(
                Code::NameCharset,
                file,
                format!("`name` `{name}` starts or ends with `-` or `_`"),
            )
            .at(value_pos)
            .help(format!("use `name: {}`", suggest(name))),
        );
    } else if name.contains('_') || name.contains("--") {
        diags.push(
            Diagnostic::new(
                Code::NameNotPortable,
                file,
                format!("`name` `{name}` contains `_` or `--`, which the Agent Skills spec (and its `skills-ref` validator) rejects"),
            )
            .at(value_pos)
            .help(format!("prefer `{}` (and the same folder name)", suggest(name))),
        );
    }
}

/// `name-dir-mismatch`: the name and the folder (a `NAME@VERSION` folder holds one version of a
/// skill kept side by side with others).
fn folder(ctx: &PackCtx<'_>, name: &str, value_pos: Option<Position>, diags: &mut Vec<Diagnostic>) {
    let file = &ctx.file;
    let dir_name = ctx.pack.dir_skill_name();
    if name != dir_name {
        let rename = match ctx.pack.dir_version() {
            Some(v) => format!("{name}@{v}"),
            None => name.to_string(),
        };
        diags.push(
            Diagnostic::new(
                Code::NameDirMismatch,
                file,
                format!(
                    "`name` is `{name}` but the pack's folder is `{}`",
                    ctx.pack.dir_name
                ),
            )
            .at(value_pos)
            .help(format!(
                "set `name: {dir_name}`, or rename the folder to `{rename}`"
            )),
        );
    }
}

/// A portable spelling of `name`: lowercase, runs of other characters turned into one `-`.
pub fn suggest(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-')
        .chars()
        .take(MAX_LEN)
        .collect::<String>()
        .trim_end_matches('-')
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::suggest;

    #[test]
    fn suggestions_are_portable() {
        assert_eq!(suggest("Send_Email"), "send-email");
        assert_eq!(suggest("__a--b__"), "a-b");
        assert_eq!(suggest("数据"), "");
    }
}
