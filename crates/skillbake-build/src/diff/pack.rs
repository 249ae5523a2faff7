//! Compares two versions of one pack: `schema.json` (through [`super::schema`]), the frontmatter
//! fields, the instructions and every embedded file.
//!
//! Permissions compare by what they grant: `filesystem` is `filesystem:read` and
//! `filesystem:write`, and `network` includes `smtp` (the vocabulary's own implications), so
//! `filesystem` → `filesystem:read` removes a permission and `smtp` → `network` adds one.

use super::rules::Rule;
use super::text;
use super::Change;
use crate::model::Skill;
use serde_json::Value;
use std::collections::BTreeSet;

const SKILL_MD: &str = "SKILL.md";
const SCHEMA: &str = "schema.json";

/// Fields compared by their own rules; every other field is `field-changed`.
const OWN_RULES: &[&str] = &[
    "name",
    "version",
    "description",
    "when_to_use",
    "when_not_to_use",
    "permission",
    "required_tools",
    "output",
    "entrypoint",
    "requires",
];

fn change(rule: Rule, file: Option<&str>, message: String) -> Change {
    Change {
        rule,
        file: file.map(str::to_string),
        pointer: None,
        message,
        detail: None,
        subject: None,
    }
}

fn about(mut c: Change, subject: &str) -> Change {
    c.subject = Some(subject.to_string());
    c
}

/// Everything a permission grants.
fn grants(permission: &str) -> Vec<&str> {
    match permission {
        "filesystem" => vec!["filesystem:read", "filesystem:write"],
        "network" => vec!["network", "smtp"],
        p => vec![p],
    }
}

fn field<'a>(s: &'a Skill, key: &str) -> Option<&'a str> {
    s.fields
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

fn value(s: &Skill, key: &str) -> Option<Value> {
    let v: Value = serde_json::from_str(field(s, key)?).ok()?;
    (!v.is_null()).then_some(v)
}

/// A field's value for a message: strings as they are (shortened), others as JSON.
fn show(v: &Option<Value>) -> String {
    let s = match v {
        None => return "(not set)".to_string(),
        Some(Value::String(s)) => s.split_whitespace().collect::<Vec<_>>().join(" "),
        Some(other) => serde_json::to_string(other).unwrap_or_default(),
    };
    if s.chars().count() > 160 {
        format!("{}...", s.chars().take(157).collect::<String>())
    } else {
        s
    }
}

fn strings(v: Option<Value>) -> Vec<String> {
    match v {
        Some(Value::Array(items)) => items
            .into_iter()
            .filter_map(|i| i.as_str().map(|s| s.trim().to_string()))
            .filter(|s| !s.is_empty())
            .collect(),
        Some(Value::String(s)) => s
            .split(',')
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

/// Every change from `old` to `new` (two versions of one skill).
pub fn compare(old: &Skill, new: &Skill) -> Vec<Change> {
    let mut out = Vec::new();
    schema(old, new, &mut out);
    permissions(old, new, &mut out);
    tools(old, new, &mut out);
    routing(old, new, &mut out);
    frontmatter(old, new, &mut out);
    let body_changed = instructions(old, new, &mut out);
    files(old, new, body_changed, &mut out);
    out
}

fn schema(old: &Skill, new: &Skill, out: &mut Vec<Change>) {
    let file = |s: &Skill| {
        s.files
            .iter()
            .find(|f| f.path == SCHEMA)
            .map(|f| f.bytes.clone())
    };
    match (file(old), file(new)) {
        (None, None) => {}
        (None, Some(_)) => out.push(change(
            Rule::SchemaAdded,
            Some(SCHEMA),
            "`schema.json` was added: the pack declares its parameters and becomes a tool".into(),
        )),
        (Some(_), None) => out.push(change(
            Rule::SchemaRemoved,
            Some(SCHEMA),
            "`schema.json` was removed: its tool disappears and calls are no longer validated"
                .into(),
        )),
        (Some(a), Some(b)) if a == b => {}
        (Some(a), Some(b)) => {
            let parsed = (
                serde_json::from_slice::<Value>(&a),
                serde_json::from_slice::<Value>(&b),
            );
            let found = match parsed {
                (Ok(x), Ok(y)) => super::schema::compare(&x, &y, SCHEMA),
                _ => Vec::new(),
            };
            if found.is_empty() {
                out.push(change(
                    Rule::FileChanged,
                    Some(SCHEMA),
                    "`schema.json` changed without changing the parameters (formatting or key order)".into(),
                ));
            }
            out.extend(found);
        }
    }
}

fn permissions(old: &Skill, new: &Skill, out: &mut Vec<Change>) {
    let (a, b) = (
        strings(value(old, "permission")),
        strings(value(new, "permission")),
    );
    let atoms = |list: &[String]| -> BTreeSet<String> {
        list.iter()
            .flat_map(|p| grants(p).into_iter().map(str::to_string))
            .collect()
    };
    let (ga, gb) = (atoms(&a), atoms(&b));
    for p in &b {
        let gained: Vec<&str> = grants(p).into_iter().filter(|g| !ga.contains(*g)).collect();
        if gained.is_empty() {
            continue;
        }
        let through = if gained == [p.as_str()] {
            String::new()
        } else {
            format!(" (grants `{}`)", gained.join("`, `"))
        };
        out.push(about(
            change(
                Rule::PermissionAdded,
                Some(SKILL_MD),
                format!("permission `{p}` added{through}: an escalation to review"),
            ),
            p,
        ));
    }
    let lost: Vec<&String> = ga.iter().filter(|g| !gb.contains(*g)).collect();
    if !lost.is_empty() {
        out.push(change(
            Rule::PermissionRemoved,
            Some(SKILL_MD),
            format!(
                "the pack no longer needs `{}`",
                lost.iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("`, `")
            ),
        ));
    }
}

fn tools(old: &Skill, new: &Skill, out: &mut Vec<Change>) {
    for t in &new.required_tools {
        if !old.required_tools.contains(t) {
            out.push(about(
                change(
                    Rule::RequiredToolAdded,
                    Some(SKILL_MD),
                    format!(
                        "`required_tools` adds `{t}`: agents without it cannot follow the pack"
                    ),
                ),
                t,
            ));
        }
    }
    for t in &old.required_tools {
        if !new.required_tools.contains(t) {
            out.push(change(
                Rule::RequiredToolRemoved,
                Some(SKILL_MD),
                format!("`required_tools` no longer lists `{t}`"),
            ));
        }
    }
}

fn routing(old: &Skill, new: &Skill, out: &mut Vec<Change>) {
    if old.description != new.description {
        out.push(change(
            Rule::DescriptionChanged,
            Some(SKILL_MD),
            format!(
                "`description` changed (routing: which requests select the skill): \"{}\" → \"{}\"",
                show(&Some(Value::String(old.description.clone()))),
                show(&Some(Value::String(new.description.clone())))
            ),
        ));
    }
    for key in ["when_to_use", "when_not_to_use"] {
        let (a, b) = (value(old, key), value(new, key));
        if a != b {
            out.push(change(
                Rule::WhenToUseChanged,
                Some(SKILL_MD),
                format!(
                    "`{key}` changed (routing): \"{}\" → \"{}\"",
                    show(&a),
                    show(&b)
                ),
            ));
        }
    }
}

fn frontmatter(old: &Skill, new: &Skill, out: &mut Vec<Change>) {
    let (a, b) = (value(old, "output"), value(new, "output"));
    if a != b {
        out.push(change(
            Rule::OutputChanged,
            Some(SKILL_MD),
            format!(
                "`output` changed: \"{}\" → \"{}\"; if the result's structure changed, that is breaking",
                show(&a),
                show(&b)
            ),
        ));
    }
    let entry = |s: &Skill| value(s, "entrypoint").and_then(|v| v.as_str().map(str::to_string));
    match (entry(old), entry(new)) {
        (None, Some(e)) => out.push(change(
            Rule::EntrypointAdded,
            Some(SKILL_MD),
            format!("`entrypoint` added: `{e}` runs with the pack's parameters"),
        )),
        (Some(e), None) => out.push(change(
            Rule::EntrypointRemoved,
            Some(SKILL_MD),
            format!("`entrypoint` `{e}` removed: the pack can no longer be run"),
        )),
        (Some(x), Some(y)) if x != y => out.push(change(
            Rule::EntrypointChanged,
            Some(SKILL_MD),
            format!(
                "`entrypoint` changed from `{x}` to `{y}`: another script takes the parameters"
            ),
        )),
        _ => {}
    }
    for (skill, range) in &new.requires {
        match old.requires.iter().find(|(s, _)| s == skill) {
            None => out.push(change(
                Rule::RequirementAdded,
                Some(SKILL_MD),
                format!("`requires` adds `{skill}` {range}: agents must embed a matching version"),
            )),
            Some((_, r)) if r != range => out.push(change(
                Rule::RequirementAdded,
                Some(SKILL_MD),
                format!("`requires` changes `{skill}` from {r} to {range}"),
            )),
            _ => {}
        }
    }
    for (skill, range) in &old.requires {
        if !new.requires.iter().any(|(s, _)| s == skill) {
            out.push(change(
                Rule::RequirementRemoved,
                Some(SKILL_MD),
                format!("`requires` no longer lists `{skill}` (was {range})"),
            ));
        }
    }
    let mut keys: Vec<&str> = old
        .fields
        .iter()
        .chain(&new.fields)
        .map(|(k, _)| k.as_str())
        .filter(|k| !OWN_RULES.contains(k))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    for key in keys {
        let (a, b) = (value(old, key), value(new, key));
        if a != b {
            out.push(change(
                Rule::FieldChanged,
                Some(SKILL_MD),
                format!("`{key}` changed: {} → {}", show(&a), show(&b)),
            ));
        }
    }
}

/// Reports the instructions' change; true when the body changed.
fn instructions(old: &Skill, new: &Skill, out: &mut Vec<Change>) -> bool {
    if old.body == new.body {
        return false;
    }
    let stat = text::stat(&old.body, &new.body);
    let mut c = change(
        Rule::InstructionsChanged,
        Some(SKILL_MD),
        format!(
            "the instructions changed: {} line(s) added, {} removed",
            stat.added, stat.removed
        ),
    );
    // A body is served without its final line feed; its lines are compared as whole lines (no
    // "No newline at end of file" marker for what no file holds).
    c.detail = Some(text::unified(
        &format!("{}\n", old.body),
        &format!("{}\n", new.body),
        3,
    ));
    out.push(c);
    true
}

fn files(old: &Skill, new: &Skill, body_changed: bool, out: &mut Vec<Change>) {
    for f in &old.files {
        if f.path == SCHEMA {
            continue;
        }
        match new.files.iter().find(|n| n.path == f.path) {
            None => out.push(change(
                Rule::FileRemoved,
                Some(&f.path),
                format!(
                    "`{}` was removed ({} bytes): anything that loads it by path breaks",
                    f.path,
                    f.bytes.len()
                ),
            )),
            Some(n) if n.bytes != f.bytes => {
                if f.path == SKILL_MD {
                    // Changes to fields and the body are reported by their own rules.
                    let other = out.iter().any(|c| c.file.as_deref() == Some(SKILL_MD));
                    if !other && !body_changed {
                        out.push(change(
                            Rule::FileChanged,
                            Some(SKILL_MD),
                            "`SKILL.md` changed without changing a field or the instructions (comments, quoting or whitespace)".into(),
                        ));
                    }
                    continue;
                }
                let lines = match (std::str::from_utf8(&f.bytes), std::str::from_utf8(&n.bytes)) {
                    (Ok(a), Ok(b)) => {
                        let s = text::stat(a, b);
                        format!(", {} line(s) added, {} removed", s.added, s.removed)
                    }
                    _ => String::new(),
                };
                out.push(change(
                    Rule::FileChanged,
                    Some(&f.path),
                    format!(
                        "`{}` changed ({} → {} bytes{lines})",
                        f.path,
                        f.bytes.len(),
                        n.bytes.len()
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    for n in &new.files {
        if n.path != SCHEMA && !old.files.iter().any(|f| f.path == n.path) {
            out.push(change(
                Rule::FileAdded,
                Some(&n.path),
                format!("`{}` was added ({} bytes)", n.path, n.bytes.len()),
            ));
        }
    }
}
