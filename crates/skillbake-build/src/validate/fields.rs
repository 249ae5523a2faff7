//! Known frontmatter fields and their types; unknown keys get a did-you-mean.
//!
//! Fields come from the Agent Skills spec, DB-GPT, the agent-skills design, Claude Code and
//! skillbake's own execution fields (`entrypoint`, `timeout`, `idempotent`, `exclusive`).

use super::PackCtx;
use crate::diagnostic::{Code, Diagnostic, Fix, Position};
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

/// A known top-level frontmatter field: its name, type, where it comes from and what it means
/// (the text an editor shows on hover).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The key.
    pub name: &'static str,
    kind: Kind,
    /// The conventions that define it (`spec`, `DB-GPT`, `Claude Code`, ...).
    pub source: &'static str,
    /// What it means, one or two sentences.
    pub meaning: &'static str,
}

impl Field {
    /// The type its value must have, in words (`a string or a list of strings`).
    pub fn expects(&self) -> &'static str {
        self.kind.expected()
    }
}

/// Every known top-level field with its type, where it comes from, and what it means.
pub const KNOWN_FIELDS: &[Field] = &[
    Field {
        name: "name",
        kind: Kind::Str,
        source: "spec",
        meaning: "The skill's name: what agents call it by (`load_skill`, tool names). 1–64 characters of `a-z`, `0-9`, `-`; equal to the pack's folder name.",
    },
    Field {
        name: "description",
        kind: Kind::Str,
        source: "spec",
        meaning: "What the skill does and when to use it, in one or two sentences: agents choose skills by this text (at most 1024 characters).",
    },
    Field {
        name: "license",
        kind: Kind::Str,
        source: "spec",
        meaning: "The licence of the pack's content, a name or the file holding it.",
    },
    Field {
        name: "compatibility",
        kind: Kind::Str,
        source: "spec",
        meaning: "What the skill needs from its environment (a system, a network, a tool), 1–500 characters.",
    },
    Field {
        name: "metadata",
        kind: Kind::Mapping,
        source: "spec",
        meaning: "Extra data for other tools: a mapping of string keys to string values.",
    },
    Field {
        name: "allowed-tools",
        kind: Kind::StrOrList,
        source: "spec, Claude Code",
        meaning: "Tools the agent may use without asking while the skill is active, e.g. `Read Bash(git:*)`.",
    },
    Field {
        name: "version",
        kind: Kind::StrOrNum,
        source: "DB-GPT",
        meaning: "The pack's semantic version `MAJOR.MINOR.PATCH`, in quotes; `skillbake diff` and `--baseline` check that changes bump it.",
    },
    Field {
        name: "author",
        kind: Kind::Str,
        source: "DB-GPT",
        meaning: "Who wrote the pack.",
    },
    Field {
        name: "skill_type",
        kind: Kind::Str,
        source: "DB-GPT",
        meaning: "DB-GPT's kind of skill.",
    },
    Field {
        name: "tags",
        kind: Kind::List,
        source: "DB-GPT",
        meaning: "Keywords for catalogs and search, a list of strings.",
    },
    Field {
        name: "required_tools",
        kind: Kind::List,
        source: "DB-GPT",
        meaning: "Tools the skill needs (DB-GPT built-ins or `[tools] known` in `skillbake.toml`).",
    },
    Field {
        name: "required_knowledge",
        kind: Kind::List,
        source: "DB-GPT",
        meaning: "Knowledge bases the skill needs (DB-GPT).",
    },
    Field {
        name: "config",
        kind: Kind::Mapping,
        source: "DB-GPT",
        meaning: "Settings for the skill, a mapping.",
    },
    Field {
        name: "input",
        kind: Kind::Structured,
        source: "agent-skills",
        meaning: "What the skill takes: a sentence, or the parameters (for a runnable pack they are defined in `schema.json`).",
    },
    Field {
        name: "output",
        kind: Kind::Structured,
        source: "agent-skills",
        meaning: "What the skill returns.",
    },
    Field {
        name: "when_to_use",
        kind: Kind::StrOrList,
        source: "agent-skills, Claude Code",
        meaning: "Requests the skill serves; shown to agents with candidates and used for routing.",
    },
    Field {
        name: "when_not_to_use",
        kind: Kind::StrOrList,
        source: "agent-skills",
        meaning: "Requests the skill must not be used for; shown to agents with candidates.",
    },
    Field {
        name: "permission",
        kind: Kind::List,
        source: "agent-skills",
        meaning: "What the pack's script may do beyond the defaults: `network`, `smtp`, `filesystem:read`, `filesystem:write`, `filesystem`, `subprocess`. Runs are refused unless each is granted.",
    },
    Field {
        name: "argument-hint",
        kind: Kind::Str,
        source: "Claude Code",
        meaning: "The arguments a slash command takes, as shown to the user (Claude Code).",
    },
    Field {
        name: "arguments",
        kind: Kind::Structured,
        source: "Claude Code",
        meaning: "Named arguments of the skill as a command (Claude Code).",
    },
    Field {
        name: "disable-model-invocation",
        kind: Kind::Bool,
        source: "Claude Code",
        meaning: "`true`: only the user starts the skill, the model never loads it by itself (Claude Code).",
    },
    Field {
        name: "user-invocable",
        kind: Kind::Bool,
        source: "Claude Code",
        meaning: "`false`: the skill is hidden from the user's slash commands (Claude Code).",
    },
    Field {
        name: "model",
        kind: Kind::Str,
        source: "Claude Code",
        meaning: "The model to use while the skill runs (Claude Code).",
    },
    Field {
        name: "effort",
        kind: Kind::Str,
        source: "Claude Code",
        meaning: "The reasoning effort to use while the skill runs (Claude Code).",
    },
    Field {
        name: "context",
        kind: Kind::Str,
        source: "Claude Code",
        meaning: "How the skill runs, e.g. in a forked context (Claude Code).",
    },
    Field {
        name: "agent",
        kind: Kind::Str,
        source: "Claude Code",
        meaning: "The subagent the skill runs in (Claude Code).",
    },
    Field {
        name: "hooks",
        kind: Kind::Mapping,
        source: "Claude Code",
        meaning: "Hooks active while the skill runs (Claude Code).",
    },
    Field {
        name: "paths",
        kind: Kind::StrOrList,
        source: "Claude Code",
        meaning: "File globs the skill applies to (Claude Code).",
    },
    Field {
        name: "shell",
        kind: Kind::Str,
        source: "Claude Code",
        meaning: "The shell its commands run in (Claude Code).",
    },
    Field {
        name: "requires",
        kind: Kind::Mapping,
        source: "skillbake, Composio, OpenClaw",
        meaning: "Skills this pack relies on, with version ranges: `requires:` then `skills:` and `NAME: RANGE` lines.",
    },
    Field {
        name: "bucket",
        kind: Kind::Str,
        source: "skillbake",
        meaning: "Where the skill sits in the routing hierarchy (`finance/reports`); default: its folder's parent path.",
    },
    Field {
        name: "route_tests",
        kind: Kind::Mapping,
        source: "skillbake",
        meaning: "Requests that must (`match`) or must not (`no_match`) route to this skill; `skillbake check` runs them.",
    },
    Field {
        name: "entrypoint",
        kind: Kind::Str,
        source: "skillbake",
        meaning: "The script that runs the pack (`scripts/run.py`): it takes the parameters as JSON in its first argument and prints the unified result.",
    },
    Field {
        name: "timeout",
        kind: Kind::Number,
        source: "skillbake",
        meaning: "Seconds a run may take (above 0, at most 86400; default 10).",
    },
    Field {
        name: "idempotent",
        kind: Kind::Bool,
        source: "skillbake",
        meaning: "`true`: a run may be retried after a timeout or a failure to start (`--retries`).",
    },
    Field {
        name: "exclusive",
        kind: Kind::Bool,
        source: "skillbake",
        meaning: "`true`: at most one run of the pack at a time.",
    },
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

/// The fix of a misspelt key: `key` renamed to `known` where it is written plain, unless the
/// frontmatter has `known` already (the rename would make a duplicate key).
fn rename_key(ctx: &PackCtx<'_>, key: &str, known: &str) -> Option<Fix> {
    let fm = ctx.md.frontmatter.as_ref()?;
    if fm.keys.iter().any(|k| k.key == known) {
        return None;
    }
    let loc = ctx.md.key(key)?;
    let end = loc.offset + key.len();
    (ctx.md.text.get(loc.offset..end) == Some(key)).then(|| {
        Fix::replace(
            format!("rename `{key}` to `{known}`"),
            loc.offset,
            end,
            known,
        )
    })
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
            .find(|f| f.name == key && matches!(k, Value::String(_)));
        let Some(kind) = known_here
            .filter(|f| profile.knows(f.source))
            .map(|f| f.kind)
        else {
            let known = KNOWN_FIELDS
                .iter()
                .filter(|f| profile.knows(f.source))
                .map(|f| f.name);
            let message = match known_here {
                Some(Field { source, .. }) => format!(
                    "`{key}` is a {source} field, not part of the `{}` profile; agents of that profile ignore it",
                    profile.name()
                ),
                None => format!("unknown frontmatter key `{key}`; agents will ignore it"),
            };
            let mut d = Diagnostic::new(Code::UnknownKey, file, message).at(ctx.md.key_pos(&key));
            d = match closest(&key, known).filter(|s| *s != key) {
                Some(s) => match rename_key(ctx, &key, s) {
                    Some(fix) => d.help(did_you_mean(s)).with_fix(fix),
                    None => d.help(did_you_mean(s)),
                },
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
