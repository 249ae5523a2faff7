//! JSON rendering — the stable machine contract of `skillbake check --format json`:
//!
//! ```json
//! {"packs": 5, "errors": 1, "warnings": 0, "diagnostics": [{"code": "name-dir-mismatch",
//!  "severity": "error", "file": "x/SKILL.md", "line": 2, "column": 7, "message": "...",
//!  "help": "..."}]}
//! ```
//!
//! `file` is relative to the checked PATH and `/`-separated; `line`/`column` are 1-based or null.
//! A diagnostic that points at other places too has `"related": [{"file", "line", "column",
//! "message"}]`, and one with a note has `"note"`; both keys are left out otherwise.
//! When any pack was indexed, `"cost": {"catalog_format", "catalog_chars", "catalog_tokens",
//! "index_bytes"}` says what the full catalog costs in a prompt (tokens estimated by
//! `skillbake_format::tokens`) and how large the routing index is.

use super::data::{Emitter, Report};
use serde::Serialize;

/// The JSON emitter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Json;

impl Emitter for Json {
    fn render(&self, report: &Report) -> String {
        render(report)
    }
}

#[derive(Serialize)]
struct Out<'a> {
    packs: usize,
    errors: usize,
    warnings: usize,
    diagnostics: &'a [crate::diagnostic::Diagnostic],
    #[serde(skip_serializing_if = "Option::is_none")]
    cost: Option<crate::validate::route::Cost>,
}

/// Renders the report as one JSON object (pretty-printed, with a trailing newline).
pub fn render(report: &Report) -> String {
    let out = Out {
        packs: report.packs,
        errors: report.errors(),
        warnings: report.warnings(),
        diagnostics: &report.diagnostics,
        cost: report.cost,
    };
    let mut s =
        serde_json::to_string_pretty(&out).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}
