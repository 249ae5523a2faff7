//! `name`: required string, 1–64 characters of `a-z 0-9 - _`, no leading or trailing `-`/`_`,
//! equal to the pack's folder name; `_` and `--` are not portable to Agent Skills clients.

use super::PackCtx;
use crate::diagnostic::{Code, Diagnostic, Position};
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
    charset(name, file, value_pos, diags);
    folder(ctx, name, value_pos, diags);
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
