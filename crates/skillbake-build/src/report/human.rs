//! Human rendering, in the style of rustc:
//!
//! ```text
//! error[name-dir-mismatch]: `name` is `foo` but the pack's folder is `bar`
//!   --> bar/SKILL.md:2:7
//!    |
//!  2 | name: foo
//!    |       ^^^
//!    = help: set `name: bar`, or rename the folder to `foo`
//! ```

use super::Report;
use crate::diagnostic::{Diagnostic, Severity};
use crate::source::LineIndex;
use std::fmt::Write as _;

/// ANSI colours, or none.
#[derive(Debug, Clone, Copy)]
struct Style {
    on: bool,
}

impl Style {
    fn paint(self, code: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
}

/// Characters of a source line shown before it is cut.
const MAX_SHOWN: usize = 100;

/// Renders every diagnostic followed by the summary line.
pub fn render(report: &Report, color: bool) -> String {
    let mut out = String::new();
    // One line index per source file, however many diagnostics point into it.
    let indexes: std::collections::BTreeMap<&str, LineIndex<'_>> = report
        .sources
        .iter()
        .map(|(file, text)| (file.as_str(), LineIndex::new(text)))
        .collect();
    for d in &report.diagnostics {
        out.push_str(&render_one(d, indexes.get(d.file.as_str()), color));
        out.push('\n');
    }
    let style = Style { on: color };
    let summary = report.summary();
    let painted = if report.has_errors() {
        style.paint("1;31", &summary)
    } else if report.warnings() > 0 {
        style.paint("1;33", &summary)
    } else {
        style.paint("1;32", &summary)
    };
    out.push_str(&painted);
    out.push('\n');
    out
}

/// Renders one diagnostic; `source` indexes the text of its file, for the snippet.
pub fn render_one(d: &Diagnostic, source: Option<&LineIndex<'_>>, color: bool) -> String {
    let style = Style { on: color };
    let mut out = String::new();
    let (label, code) = match d.severity {
        Severity::Error => (style.paint("1;31", "error"), "1;31"),
        Severity::Warning => (style.paint("1;33", "warning"), "1;33"),
    };
    let _ = writeln!(
        out,
        "{label}{}: {}",
        style.paint(code, &format!("[{}]", d.code)),
        style.paint("1", &d.message)
    );
    let location = match (d.line, d.column) {
        (Some(l), Some(c)) => format!("{}:{l}:{c}", d.file),
        (Some(l), None) => format!("{}:{l}", d.file),
        _ => d.file.clone(),
    };
    let line_text = d
        .line
        .and_then(|l| source.and_then(|s| s.line_text(l)).map(|t| (l, t)));
    let width = line_text.map_or(1, |(l, _)| l.to_string().len());
    let pad = " ".repeat(width);
    let bar = style.paint("1;34", "|");
    let _ = writeln!(out, "{pad}{} {location}", style.paint("1;34", "-->"));
    if let Some((l, text)) = line_text {
        let text = text.trim_start_matches('\u{feff}');
        let col = d.column.map(|c| (c as usize).max(1));
        // Long lines are cut after the highlighted span (or the first MAX_SHOWN characters).
        let total = text.chars().count();
        let keep = col.map_or(MAX_SHOWN, |c| {
            (c - 1 + (d.len as usize).clamp(1, 40)).max(MAX_SHOWN)
        });
        let mut shown: String = text
            .chars()
            .take(keep)
            .collect::<String>()
            .replace('\t', "    ");
        if total > keep {
            shown.push('…');
        }
        let _ = writeln!(out, "{pad} {bar}");
        let _ = writeln!(out, "{} {bar} {shown}", style.paint("1;34", &l.to_string()));
        if let Some(col) = col {
            let before: usize = text
                .chars()
                .take(col - 1)
                .map(|c| if c == '\t' { 4 } else { 1 })
                .sum();
            let avail = total.min(keep).saturating_sub(col - 1).max(1);
            let len = (d.len as usize).clamp(1, avail);
            let marks = style.paint(code, &"^".repeat(len));
            let _ = writeln!(out, "{pad} {bar} {}{marks}", " ".repeat(before));
        }
    }
    if let Some(note) = &d.note {
        let _ = writeln!(
            out,
            "{pad} {} {}: {note}",
            style.paint("1;34", "="),
            style.paint("1", "note")
        );
    }
    if let Some(help) = &d.help {
        let _ = writeln!(
            out,
            "{pad} {} {}: {help}",
            style.paint("1;34", "="),
            style.paint("1", "help")
        );
    }
    out
}
