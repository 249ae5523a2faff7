//! Renders a [`Diff`]: [`human()`] for the terminal, [`json()`] for scripts (the schema below) and
//! [`markdown()`] for a pull-request comment.
//!
//! JSON (`schema_version` 1; keys in this order, every pack of both sides listed):
//!
//! ```json
//! {"schema_version": 1, "old": "main:skills", "new": "skills",
//!  "summary": {"changed": 1, "added": 0, "removed": 0, "unchanged": 4,
//!              "not_bumped": 1, "permission_escalations": 1},
//!  "packs": [{"name": "send-email", "status": "changed",
//!             "old": {"version": "1.0.0", "path": "send-email/SKILL.md"},
//!             "new": {"version": "1.1.0", "path": "send-email/SKILL.md"},
//!             "needed_bump": "major", "made_bump": "minor", "bump_ok": false,
//!             "required_version": "2.0.0",
//!             "changes": [{"rule": "property-removed", "area": "schema", "bump": "major",
//!                          "file": "schema.json", "pointer": "/properties/cc",
//!                          "message": "property `cc` was removed: ...", "diff": null}]}]}
//! ```
//!
//! `status` is `added`, `removed`, `changed` or `unchanged`; bumps are `none`, `patch`, `minor`
//! or `major`; `made_bump` also `downgrade`, `prerelease` or `unversioned`; `bump_ok` is `null`
//! when a side has no semantic version (or for added and removed packs). `diff` holds the
//! unified diff of the instructions (`instructions-changed`), else `null`.

use super::{Bump, Change, Diff, Made, PackDiff, Rule, Status};
use serde_json::{json, Value};
use std::fmt::Write as _;

fn made_phrase(made: Made) -> &'static str {
    match made {
        Made::Unversioned => "has no semantic version to compare",
        Made::Same => "did not change",
        Made::Downgrade => "went down",
        Made::Prerelease => "moved only its pre-release",
        Made::Patch => "moved only the patch number",
        Made::Minor => "moved only the minor number",
        Made::Major => "moved the major number",
    }
}

fn verdict_text(p: &PackDiff) -> String {
    let v = &p.verdict;
    match (p.status, v.ok) {
        (Status::Added, _) => "new".to_string(),
        (Status::Removed, _) => "removed".to_string(),
        (_, _) if v.needed == Bump::None => "nothing that needs a version bump".to_string(),
        (_, None) => format!(
            "needs a {} bump; a side has no semantic version to compare",
            v.needed
        ),
        (_, Some(true)) => format!(
            "needs a {} bump: ok, the version {}",
            v.needed,
            made_phrase(v.made)
        ),
        (_, Some(false)) => format!(
            "needs a {} bump (at least {}), but the version {}",
            v.needed,
            v.required.as_deref().unwrap_or("a higher version"),
            made_phrase(v.made)
        ),
    }
}

fn location(c: &Change) -> String {
    match (&c.file, &c.pointer) {
        (Some(f), Some(p)) => format!("{f} {p}"),
        (Some(f), None) => f.clone(),
        (None, _) => String::new(),
    }
}

fn summary(d: &Diff) -> String {
    format!(
        "{} changed, {} added, {} removed, {} unchanged",
        d.count(Status::Changed),
        d.count(Status::Added),
        d.count(Status::Removed),
        d.count(Status::Unchanged)
    )
}

/// Terminal text, ANSI-coloured when `color`.
pub fn human(d: &Diff, color: bool) -> String {
    let paint = |code: &str, s: &str| {
        if color {
            format!("\u{1b}[{code}m{s}\u{1b}[0m")
        } else {
            s.to_string()
        }
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {} → {}: {}",
        paint("1", "skillbake diff"),
        d.old_label,
        d.new_label,
        summary(d)
    );
    for p in d.packs.iter().filter(|p| p.status != Status::Unchanged) {
        let path = p
            .new
            .as_ref()
            .or(p.old.as_ref())
            .map(|r| r.path.clone())
            .unwrap_or_default();
        let _ = writeln!(out, "\n{}  ({path})", paint("1", &p.title()));
        let verdict = verdict_text(p);
        let line = match p.verdict.ok {
            Some(false) => paint("1;31", &format!("  version: {verdict}")),
            Some(true) if p.verdict.needed != Bump::None => {
                paint("32", &format!("  version: {verdict}"))
            }
            _ => format!("  {verdict}"),
        };
        let _ = writeln!(out, "{line}");
        for esc in p.escalations() {
            let what = esc.subject.as_deref().unwrap_or("?");
            let _ = writeln!(
                out,
                "{}",
                paint(
                    "1;33",
                    &format!(
                        "  permission escalation: `{what}` is new; review the access it grants"
                    )
                )
            );
        }
        for c in &p.changes {
            let bump = c.rule.bump();
            let tag = format!("{:<5}", bump.as_str());
            let tag = match bump {
                Bump::Major => paint("31", &tag),
                Bump::Minor => paint("33", &tag),
                _ => paint("2", &tag),
            };
            let loc = location(c);
            let _ = writeln!(
                out,
                "  {tag}  {}{}{loc}",
                c.rule,
                if loc.is_empty() { "" } else { "  " }
            );
            let _ = writeln!(out, "         {}", c.message);
            if let Some(detail) = &c.detail {
                for l in detail.lines() {
                    let l = match l.chars().next() {
                        Some('+') => paint("32", l),
                        Some('-') => paint("31", l),
                        Some('@') => paint("36", l),
                        _ => l.to_string(),
                    };
                    let _ = writeln!(out, "           {l}");
                }
            }
        }
    }
    out
}

fn change_json(c: &Change) -> Value {
    json!({
        "rule": c.rule.as_str(),
        "area": c.rule.area().as_str(),
        "bump": c.rule.bump().as_str(),
        "file": c.file,
        "pointer": c.pointer,
        "message": c.message,
        "diff": c.detail,
    })
}

/// The JSON report (see the module docs), pretty-printed, ending in a newline.
pub fn json(d: &Diff) -> String {
    let side = |r: &Option<super::PackRef>| match r {
        Some(r) => json!({"version": r.version, "path": r.path}),
        None => Value::Null,
    };
    let packs: Vec<Value> = d
        .packs
        .iter()
        .map(|p| {
            json!({
                "name": p.name,
                "status": p.status.as_str(),
                "old": side(&p.old),
                "new": side(&p.new),
                "needed_bump": p.verdict.needed.as_str(),
                "made_bump": p.verdict.made.as_str(),
                "bump_ok": p.verdict.ok,
                "required_version": p.verdict.required,
                "changes": p.changes.iter().map(change_json).collect::<Vec<_>>(),
            })
        })
        .collect();
    let escalations: usize = d.packs.iter().map(|p| p.escalations().count()).sum();
    let v = json!({
        "schema_version": 1,
        "old": d.old_label,
        "new": d.new_label,
        "summary": {
            "changed": d.count(Status::Changed),
            "added": d.count(Status::Added),
            "removed": d.count(Status::Removed),
            "unchanged": d.count(Status::Unchanged),
            "not_bumped": d.not_bumped().count(),
            "permission_escalations": escalations,
        },
        "packs": packs,
    });
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

/// Text for a Markdown table cell: one line, `|` escaped.
fn cell(s: &str) -> String {
    s.replace('\n', " ").replace('|', "\\|")
}

/// Markdown for a pull-request comment: a summary table of the changed packs, then one section
/// per pack with its changes and the instructions' diff.
pub fn markdown(d: &Diff) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### skillbake diff: `{}` → `{}`\n",
        cell(&d.old_label),
        cell(&d.new_label)
    );
    let _ = writeln!(out, "{}.\n", summary(d));
    let shown: Vec<&PackDiff> = d
        .packs
        .iter()
        .filter(|p| p.status != Status::Unchanged)
        .collect();
    if shown.is_empty() {
        return out;
    }
    out.push_str("| | pack | version | needs | verdict |\n|---|---|---|---|---|\n");
    for p in &shown {
        let mark = match (p.status, p.verdict.ok) {
            (Status::Added, _) => "🆕",
            (Status::Removed, _) => "🗑️",
            (_, Some(false)) => "❌",
            _ if p.escalations().next().is_some() => "⚠️",
            (_, Some(true)) => "✅",
            _ => "❔",
        };
        let versions = match (
            p.old.as_ref().and_then(|r| r.version.as_deref()),
            p.new.as_ref().and_then(|r| r.version.as_deref()),
        ) {
            (Some(a), Some(b)) => format!("{a} → {b}"),
            (None, Some(b)) => b.to_string(),
            (Some(a), None) => a.to_string(),
            (None, None) => "–".to_string(),
        };
        let needs = match p.verdict.needed {
            Bump::Major => "**major**".to_string(),
            b => b.as_str().to_string(),
        };
        let _ = writeln!(
            out,
            "| {mark} | `{}` | {} | {needs} | {} |",
            cell(&p.name),
            cell(&versions),
            cell(&verdict_text(p))
        );
    }
    for p in &shown {
        let _ = writeln!(
            out,
            "\n<details{}><summary><b>{}</b>: {}</summary>\n",
            if p.verdict.ok == Some(false) || p.escalations().next().is_some() {
                " open"
            } else {
                ""
            },
            html_escape(&p.title()),
            html_escape(&verdict_text(p))
        );
        for esc in p.escalations() {
            let _ = writeln!(
                out,
                "> [!WARNING]\n> Permission escalation: `{}` is new; review the access it grants.\n",
                cell(esc.subject.as_deref().unwrap_or("?"))
            );
        }
        out.push_str("| bump | rule | where | change |\n|---|---|---|---|\n");
        for c in &p.changes {
            let bump = match c.rule.bump() {
                Bump::Major => "**major**".to_string(),
                b => b.as_str().to_string(),
            };
            let loc = match (&c.file, &c.pointer) {
                (Some(f), Some(ptr)) => format!("`{}` `{}`", cell(f), cell(ptr)),
                (Some(f), None) => format!("`{}`", cell(f)),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "| {bump} | `{}` | {loc} | {} |",
                c.rule,
                cell(&c.message)
            );
        }
        for c in p
            .changes
            .iter()
            .filter(|c| c.rule == Rule::InstructionsChanged)
        {
            if let Some(detail) = &c.detail {
                let fence = if detail.contains("```") {
                    "~~~~"
                } else {
                    "```"
                };
                let _ = writeln!(
                    out,
                    "\nInstructions (`SKILL.md` body):\n\n{fence}diff\n{detail}{fence}"
                );
            }
        }
        out.push_str("\n</details>\n");
    }
    let unchanged: Vec<String> = d
        .packs
        .iter()
        .filter(|p| p.status == Status::Unchanged)
        .map(
            |p| match p.new.as_ref().and_then(|r| r.version.as_deref()) {
                Some(v) => format!("`{}` {v}", p.name),
                None => format!("`{}`", p.name),
            },
        )
        .collect();
    if !unchanged.is_empty() {
        let _ = writeln!(out, "\nUnchanged: {}.", unchanged.join(", "));
    }
    out
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
