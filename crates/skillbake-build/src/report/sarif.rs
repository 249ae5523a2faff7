//! SARIF 2.1.0 rendering, for GitHub code scanning (`github/codeql-action/upload-sarif`) and
//! other SARIF consumers. One run, the tool's rules (every code, with its summary, default level
//! and help text), one result per diagnostic with a physical location relative to
//! `%SRCROOT%` (its path percent-encoded into a URI reference) and every related place as a
//! `relatedLocations` entry; the note and the help follow the message text.

use super::data::{Emitter, Report};
use crate::diagnostic::{Code, Severity};
use serde_json::{json, Value};
use skillbake_format::percent::{self, Keep};

/// The SARIF emitter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sarif;

impl Emitter for Sarif {
    fn render(&self, report: &Report) -> String {
        render(report)
    }
}

/// A physical location: the file relative to `%SRCROOT%`, and the region at `line`:`column`
/// spanning `len` characters. A finding about a whole file or folder is anchored at its first
/// line, so code scanning shows it (SARIF consumers expect a region).
fn physical(file: &str, line: Option<u32>, column: Option<u32>, len: u32) -> Value {
    let line = line.unwrap_or(1);
    let mut region = json!({"startLine": line, "endLine": line});
    if let Some(col) = column {
        region["startColumn"] = json!(col);
        region["endColumn"] = json!(col + len.max(1));
    }
    json!({
        "artifactLocation": {"uri": percent::encode(file, Keep::Path), "uriBaseId": "%SRCROOT%"},
        "region": region
    })
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// `name-dir-mismatch` → `NameDirMismatch` (SARIF wants a readable `name` distinct from `id`).
/// A rule's SARIF properties: its tags and, for the `security` group, the
/// `security-severity` GitHub code scanning ranks alerts by (0.0–10.0; 9.0 and above is
/// critical, 7.0 high, 4.0 medium).
fn properties(c: Code) -> Value {
    match c.group() {
        Some(group) => json!({
            "tags": ["skillbake", group],
            "security-severity": security_severity(c),
        }),
        None => json!({"tags": ["skillbake"]}),
    }
}

/// The `security-severity` of a security rule, as a string (as GitHub expects it).
pub fn security_severity(c: Code) -> &'static str {
    match c {
        Code::CredentialHarvest | Code::DownloadExec | Code::ObfuscatedExec => "9.0",
        Code::AgentHijack | Code::HiddenText => "8.0",
        Code::Persistence => "7.5",
        Code::BinaryPayload => "6.0",
        _ => "5.0",
    }
}

fn pascal_case(code: &str) -> String {
    code.split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// A rule's SARIF `name`: the code in PascalCase, which SARIF wants to differ from the `id`
/// (a one-word code such as `persistence` gets `PersistenceRule`).
fn rule_name(code: &str) -> String {
    let name = pascal_case(code);
    if name.eq_ignore_ascii_case(code) {
        format!("{name}Rule")
    } else {
        name
    }
}

/// Renders the report as a SARIF 2.1.0 log (pretty JSON with a trailing newline).
pub fn render(report: &Report) -> String {
    let rules: Vec<Value> = Code::ALL
        .iter()
        .map(|c| {
            json!({
                "id": c.as_str(),
                "name": rule_name(c.as_str()),
                "shortDescription": {"text": c.summary()},
                "fullDescription": {"text": c.summary()},
                "help": {"text": format!("Run `skillbake explain {}` for what the rule checks, why, examples and how to fix or silence it.", c.as_str())},
                "defaultConfiguration": {"level": level(c.default_severity())},
                "properties": properties(*c)
            })
        })
        .collect();
    let results: Vec<Value> = report
        .diagnostics
        .iter()
        .map(|d| {
            let rule_index = Code::ALL.iter().position(|c| *c == d.code).unwrap_or(0);
            let mut text = d.message.clone();
            if let Some(n) = &d.note {
                text.push_str("\nnote: ");
                text.push_str(n);
            }
            if let Some(h) = &d.help {
                text.push_str("\nhelp: ");
                text.push_str(h);
            }
            let mut result = json!({
                "ruleId": d.code.as_str(),
                "ruleIndex": rule_index,
                "level": level(d.severity),
                "message": {"text": text},
                "locations": [{"physicalLocation": physical(&d.file, d.line, d.column, d.len)}]
            });
            if !d.related.is_empty() {
                let related: Vec<Value> = d
                    .related
                    .iter()
                    .enumerate()
                    .map(|(id, r)| {
                        json!({
                            "id": id,
                            "physicalLocation": physical(&r.file, r.line, r.column, r.len),
                            "message": {"text": r.message}
                        })
                    })
                    .collect();
                result["relatedLocations"] = Value::Array(related);
            }
            result
        })
        .collect();
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "skillbake",
                "informationUri": "https://github.com/skillbake/skillbake",
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "The folder skillbake check was run from."}}},
            "columnKind": "unicodeCodePoints",
            "results": results
        }]
    });
    let mut s = serde_json::to_string_pretty(&log).unwrap_or_default();
    s.push('\n');
    s
}
