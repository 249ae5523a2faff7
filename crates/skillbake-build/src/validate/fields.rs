//! Known frontmatter fields and their types; unknown keys get a did-you-mean.
//!
//! Fields come from the Agent Skills spec, DB-GPT, the agent-skills design, Claude Code and
//! skillbake's own execution fields (`entrypoint`, `timeout`, `idempotent`, `exclusive`).

use super::PackCtx;
use crate::diagnostic::{Code, Diagnostic, Position};
use crate::parse::{key_text, type_name};
use skillbake_format::suggest::{closest, did_you_mean};
use yaml_serde::Value;

/// The shape a known field must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A string.
    Str,
    /// A string or a number (kept as written).
    StrOrNum,
    /// A number.
    Number,
    /// `true` or `false`.
    Bool,
    /// A list of strings, or one comma-separated string (DB-GPT).
    List,
    /// A string or a list of strings.
    StrOrList,
    /// Any mapping.
    Mapping,
    /// A string, a list or a mapping.
    Structured,
}

impl Kind {
    fn expected(self) -> &'static str {
        match self {
            Kind::Str => "a string",
            Kind::StrOrNum => "a string (or a number)",
            Kind::Number => "a number",
            Kind::Bool => "`true` or `false`",
            Kind::List => "a list of strings or one comma-separated string",
            Kind::StrOrList => "a string or a list of strings",
            Kind::Mapping => "a mapping",
            Kind::Structured => "a string, a list or a mapping",
        }
    }

    fn example(self, key: &str) -> String {
        match self {
            Kind::Str | Kind::StrOrNum => format!("`{key}: \"...\"`"),
            Kind::Number => format!("`{key}: 30`"),
            Kind::Bool => format!("`{key}: true`"),
            Kind::List | Kind::StrOrList => format!("`{key}: [a, b]`"),
            Kind::Mapping => {
                format!("`{key}:` followed by indented `key: \"value\"` lines")
            }
            Kind::Structured => format!("`{key}: \"...\"`"),
        }
    }
}

/// Every known top-level field with its type, and where it comes from.
pub const KNOWN_FIELDS: &[(&str, Kind, &str)] = &[
    ("name", Kind::Str, "spec"),
    ("description", Kind::Str, "spec"),
    ("license", Kind::Str, "spec"),
    ("compatibility", Kind::Str, "spec"),
    ("metadata", Kind::Mapping, "spec"),
    ("allowed-tools", Kind::StrOrList, "spec, Claude Code"),
    ("version", Kind::StrOrNum, "DB-GPT"),
    ("author", Kind::Str, "DB-GPT"),
    ("skill_type", Kind::Str, "DB-GPT"),
    ("tags", Kind::List, "DB-GPT"),
    ("required_tools", Kind::List, "DB-GPT"),
    ("required_knowledge", Kind::List, "DB-GPT"),
    ("config", Kind::Mapping, "DB-GPT"),
    ("input", Kind::Structured, "agent-skills"),
    ("output", Kind::Structured, "agent-skills"),
    ("when_to_use", Kind::StrOrList, "agent-skills, Claude Code"),
    ("when_not_to_use", Kind::StrOrList, "agent-skills"),
    ("permission", Kind::List, "agent-skills"),
    ("argument-hint", Kind::Str, "Claude Code"),
    ("arguments", Kind::Structured, "Claude Code"),
    ("disable-model-invocation", Kind::Bool, "Claude Code"),
    ("user-invocable", Kind::Bool, "Claude Code"),
    ("model", Kind::Str, "Claude Code"),
    ("effort", Kind::Str, "Claude Code"),
    ("context", Kind::Str, "Claude Code"),
    ("agent", Kind::Str, "Claude Code"),
    ("hooks", Kind::Mapping, "Claude Code"),
    ("paths", Kind::StrOrList, "Claude Code"),
    ("shell", Kind::Str, "Claude Code"),
    ("requires", Kind::Mapping, "skillbake, Composio, OpenClaw"),
    ("bucket", Kind::Str, "skillbake"),
    ("route_tests", Kind::Mapping, "skillbake"),
    ("entrypoint", Kind::Str, "skillbake"),
    ("timeout", Kind::Number, "skillbake"),
    ("idempotent", Kind::Bool, "skillbake"),
    ("exclusive", Kind::Bool, "skillbake"),
];

/// `field-type`: `field` (a key, or `key.sub` inside a mapping) must be `expected` but is
/// `found`; `help` says how to write it. The one constructor of the code, whichever rule meets
/// the wrong type (`name` and `description` have modules of their own).
pub fn field_type(
    file: &str,
    field: &str,
    expected: &str,
    found: &str,
    pos: Option<Position>,
    help: impl Into<String>,
) -> Diagnostic {
    Diagnostic::new(
        Code::FieldType,
        file,
        format!("`{field}` must be {expected}, found {found}"),
    )
    .at(pos)
    .help(help)
}

/// `field-type` for a known field whose value has the wrong shape, for rules that check the
/// inside of their own fields (`validate::route` for `route_tests` and `bucket`).
pub fn wrong_shape(file: &str, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(Code::FieldType, file, message)
}

/// `unknown-key` for a key inside a known field's mapping (`route_tests`).
pub fn unknown_sub_key(file: &str, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(Code::UnknownKey, file, message)
}

/// Longest allowed `compatibility`, in characters.
pub const COMPATIBILITY_MAX: usize = 500;

/// Whether `v` has the shape `kind` asks for (null is accepted as "not set").
fn matches(kind: Kind, v: &Value) -> bool {
    let is_str_list = |v: &Value| match v {
        Value::Sequence(items) => items.iter().all(|i| matches!(i, Value::String(_))),
        _ => false,
    };
    match (kind, v) {
        (_, Value::Null) => true,
        (_, Value::Tagged(_)) => false,
        (Kind::Str, Value::String(_)) => true,
        (Kind::StrOrNum, Value::String(_) | Value::Number(_)) => true,
        (Kind::Number, Value::Number(_)) => true,
        (Kind::Bool, Value::Bool(_)) => true,
        (Kind::List | Kind::StrOrList, Value::String(_)) => true,
        (Kind::List | Kind::StrOrList, v) => is_str_list(v),
        (Kind::Mapping, Value::Mapping(_)) => true,
        (Kind::Structured, Value::String(_) | Value::Sequence(_) | Value::Mapping(_)) => true,
        _ => false,
    }
}

/// Checks types of known fields (except `name` and `description`, see their modules), the
/// `compatibility` length, `metadata` values, and reports unknown keys.
pub fn check(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) {
    let Some(fm) = ctx.md.frontmatter.as_ref() else {
        return;
    };
    let file = &ctx.file;
    for (k, v) in &fm.mapping {
        let key = key_text(k);
        let profile = ctx.config.profile;
        let known_here = KNOWN_FIELDS
            .iter()
            .find(|(name, _, _)| *name == key && matches!(k, Value::String(_)));
        let Some(kind) = known_here
            .filter(|(_, _, source)| profile.knows(source))
            .map(|(_, kind, _)| *kind)
        else {
            let known = KNOWN_FIELDS
                .iter()
                .filter(|(_, _, source)| profile.knows(source))
                .map(|(k, _, _)| *k);
            let message = match known_here {
                Some((_, _, source)) => format!(
                    "`{key}` is a {source} field, not part of the `{}` profile; agents of that profile ignore it",
                    profile.name()
                ),
                None => format!("unknown frontmatter key `{key}`; agents will ignore it"),
            };
            let mut d = Diagnostic::new(Code::UnknownKey, file, message).at(ctx.md.key_pos(&key));
            d = match closest(&key, known).filter(|s| *s != key) {
                Some(s) => d.help(did_you_mean(s)),
                None => d.help(
                    "remove it, or move custom data under `metadata:` (string values) or `config:`",
                ),
            };
            diags.push(d);
            continue;
        };
        if key == "name" || key == "description" {
            continue;
        }
        if !matches(kind, v) {
            let found = match v {
                Value::Sequence(items) => items
                    .iter()
                    .find(|i| !matches!(i, Value::String(_)))
                    .map_or("a list", |i| match i {
                        Value::Number(_) => "a list with a number in it",
                        Value::Mapping(_) => "a list with a mapping in it",
                        Value::Sequence(_) => "a list with a nested list in it",
                        Value::Bool(_) => "a list with a boolean in it",
                        Value::Null => "a list with an empty item in it",
                        _ => "a list with a non-string item in it",
                    }),
                other => type_name(other),
            };
            diags.push(field_type(
                file,
                &key,
                kind.expected(),
                found,
                ctx.md.value_pos(&key),
                format!("write it as {}", kind.example(&key)),
            ));
            continue;
        }
        if key == "compatibility" {
            if let Value::String(s) = v {
                let len = s.chars().count();
                if s.trim().is_empty() || len > COMPATIBILITY_MAX {
                    diags.push(
                        Diagnostic::new(
                            Code::CompatibilityLength,
                            file,
                            format!("`compatibility` is {len} characters long; it must be 1 to {COMPATIBILITY_MAX}"),
                        )
                        .at(ctx.md.value_pos(&key))
                        .help("state the environment briefly (e.g. `Requires Python 3.10+ and network access`), or remove the field"),
                    );
                }
            }
        }
    }
}
