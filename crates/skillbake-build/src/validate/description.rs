//! `description`: required (`description-missing`), a non-empty string (`description-empty`) of
//! at most 1024 characters (Unicode scalar values).

use super::PackCtx;
use crate::diagnostic::{Code, Diagnostic, Position};
use crate::parse::type_name;
use yaml_serde::Value;

/// Longest allowed description, in characters.
pub const MAX_LEN: usize = 1024;

/// Checks the `description` field.
pub fn check(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) {
    let file = &ctx.file;
    let help = "describe what the skill does and when an agent should use it, e.g. `description: Analyse CSV files. Use when the user shares a .csv`";
    match ctx.field("description") {
        None => diags.push(
            Diagnostic::new(
                Code::DescriptionMissing,
                file,
                "the required field `description` is missing",
            )
            .at(Some(Position::span(1, 1, 3)))
            .help(help),
        ),
        Some(Value::Null) => diags.push(
            Diagnostic::new(Code::DescriptionEmpty, file, "`description` has no value")
                .at(ctx.md.key_pos("description"))
                .help(help),
        ),
        Some(Value::String(s)) if s.trim().is_empty() => diags.push(
            Diagnostic::new(Code::DescriptionEmpty, file, "`description` is empty")
                .at(ctx.md.key_pos("description"))
                .help(help),
        ),
        Some(Value::String(s)) => {
            let len = s.chars().count();
            if len > MAX_LEN {
                diags.push(
                    Diagnostic::new(
                        Code::DescriptionLength,
                        file,
                        format!("`description` is {len} characters long; the limit is {MAX_LEN}"),
                    )
                    .at(ctx.md.value_pos("description"))
                    .help("keep the description to what the skill does and when to use it; move details into the body"),
                );
            }
        }
        Some(other) => diags.push(super::fields::field_type(
            file,
            "description",
            "a string",
            type_name(other),
            ctx.md.value_pos("description"),
            "write the description as text; quote it if it contains `: ` or `#`",
        )),
    }
}
