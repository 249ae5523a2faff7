//! Human rendering, in the style of rustc, drawn by `annotate-snippets`:
//!
//! ```text
//! error[name-dir-mismatch]: `name` is `foo` but the pack's folder is `bar`
//!  --> bar/SKILL.md:2:7
//!   |
//! 2 | name: foo
//!   |       ^^^
//!   |
//!   = help: set `name: bar`, or rename the folder to `foo`
//! ```
//!
//! Colours only when asked (the CLI asks on a terminal without `NO_COLOR`); `build.rs` failures
//! print the plain form.

use super::Report;
use crate::diagnostic::{Diagnostic, Severity};
use crate::source::LineIndex;
use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};

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
    let summary = report.summary();
    if color {
        let code = if report.has_errors() {
            "1;31"
        } else if report.warnings() > 0 {
            "1;33"
        } else {
            "1;32"
        };
        out.push_str(&format!("\x1b[{code}m{summary}\x1b[0m\n"));
    } else {
        out.push_str(&summary);
        out.push('\n');
    }
    out
}

/// Byte range within `line` of `len` characters from 1-based character column `col`.
fn byte_span(line: &str, col: u32, len: u32) -> std::ops::Range<usize> {
    let mut chars = line.char_indices().skip((col as usize).saturating_sub(1));
    let start = chars.next().map_or(line.len(), |(i, _)| i);
    let end = line[start..]
        .char_indices()
        .nth((len as usize).max(1))
        .map_or(line.len(), |(i, _)| start + i);
    start..end
}

/// Renders one diagnostic; `source` indexes the text of its file, for the snippet.
pub fn render_one(d: &Diagnostic, source: Option<&LineIndex<'_>>, color: bool) -> String {
    let level = match d.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
    };
    let title = level.primary_title(d.message.as_str()).id(d.code.as_str());
    let line_text = d
        .line
        .and_then(|l| source.and_then(|s| s.line_text(l)).map(|t| (l, t)));
    let mut group: Group<'_> = match (line_text, d.column) {
        (Some((l, text)), Some(col)) => title.element(
            Snippet::source(text)
                .line_start(l as usize)
                .path(d.file.as_str())
                .annotation(AnnotationKind::Primary.span(byte_span(text, col, d.len))),
        ),
        (_, col) => {
            let mut origin = Origin::path(d.file.as_str());
            if let Some(l) = d.line {
                origin = origin.line(l as usize);
                if let Some(c) = col {
                    origin = origin.char_column(c as usize);
                }
            }
            title.element(origin)
        }
    };
    if let Some(note) = &d.note {
        group = group.element(Level::NOTE.message(note.as_str()));
    }
    if let Some(help) = &d.help {
        group = group.element(Level::HELP.message(help.as_str()));
    }
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let mut s = renderer.render(&[group]);
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::byte_span;

    #[test]
    fn spans_count_characters() {
        assert_eq!(byte_span("name: foo", 7, 3), 6..9);
        assert_eq!(byte_span("a: 中文x", 4, 2), 3..9);
        assert_eq!(byte_span("ab", 5, 1), 2..2);
        assert_eq!(byte_span("ab", 1, 0), 0..1);
        assert_eq!(byte_span("abc", 2, 99), 1..3);
    }
}
