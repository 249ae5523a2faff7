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

use super::data::{Emitter, Report};
use crate::diagnostic::{Diagnostic, Related, Severity};
use crate::source::LineIndex;
use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};
use std::collections::BTreeMap;

/// The line index of every source file a report's diagnostics point into, by diagnostic path.
pub type Sources<'a> = BTreeMap<&'a str, LineIndex<'a>>;

/// Indexes every source of `report` once, however many diagnostics point into it.
pub fn sources(report: &Report) -> Sources<'_> {
    report
        .sources
        .iter()
        .map(|(file, text)| (file.as_str(), LineIndex::new(text)))
        .collect()
}

/// The rustc-style emitter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Human {
    /// ANSI colours.
    pub color: bool,
    /// The summary line only.
    pub quiet: bool,
}

impl Emitter for Human {
    fn render(&self, report: &Report) -> String {
        if self.quiet {
            summary(report, false)
        } else {
            render(report, self.color)
        }
    }
}

/// Renders every diagnostic followed by the summary line (`Human { color, quiet: false }`).
pub fn render(report: &Report, color: bool) -> String {
    let mut out = String::new();
    let sources = sources(report);
    for d in &report.diagnostics {
        out.push_str(&render_one(d, &sources, color));
        out.push('\n');
    }
    out.push_str(&summary(report, color));
    out
}

/// The summary line (coloured by the worst severity when asked), with its newline.
pub fn summary(report: &Report, color: bool) -> String {
    let summary = report.summary();
    if !color {
        return format!("{summary}\n");
    }
    let code = if report.has_errors() {
        "1;31"
    } else if report.warnings() > 0 {
        "1;33"
    } else {
        "1;32"
    };
    format!("\x1b[{code}m{summary}\x1b[0m\n")
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

/// A place to draw: file, line and its text, column, length.
struct Place<'a> {
    file: &'a str,
    line: u32,
    text: &'a str,
    column: u32,
    len: u32,
}

fn place<'a>(
    sources: &Sources<'a>,
    file: &'a str,
    line: Option<u32>,
    column: Option<u32>,
    len: u32,
) -> Option<Place<'a>> {
    let line = line?;
    let text = sources.get(file)?.line_text(line)?;
    Some(Place {
        file,
        line,
        text,
        column: column?,
        len,
    })
}

/// Where a related location is, in words (for when its source line cannot be shown).
fn located(r: &Related) -> String {
    match (r.line, r.column) {
        (Some(l), Some(c)) => format!("{}: {}:{l}:{c}", r.message, r.file),
        (Some(l), None) => format!("{}: {}:{l}", r.message, r.file),
        _ => format!("{}: {}", r.message, r.file),
    }
}

/// Renders one diagnostic: its primary span and every related location as a secondary label
/// (in the same snippet when on the same line of the same file). `sources` indexes the files'
/// texts, for the snippets; a place whose text is not there is named in a note instead.
pub fn render_one<'a>(d: &'a Diagnostic, sources: &Sources<'a>, color: bool) -> String {
    let level = match d.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
    };
    let title = level.primary_title(d.message.as_str()).id(d.code.as_str());
    let primary = place(sources, d.file.as_str(), d.line, d.column, d.len);
    let mut notes: Vec<String> = Vec::new();
    let mut group: Group<'_> = match &primary {
        Some(p) => {
            let mut snippet = Snippet::source(p.text)
                .line_start(p.line as usize)
                .path(p.file)
                .annotation(AnnotationKind::Primary.span(byte_span(p.text, p.column, p.len)));
            for r in &d.related {
                if r.file == p.file && r.line == Some(p.line) {
                    let span = byte_span(p.text, r.column.unwrap_or(1), r.len);
                    snippet = snippet
                        .annotation(AnnotationKind::Context.span(span).label(r.message.as_str()));
                }
            }
            title.element(snippet)
        }
        None => {
            let mut origin = Origin::path(d.file.as_str());
            if let Some(l) = d.line {
                origin = origin.line(l as usize);
                if let Some(c) = d.column {
                    origin = origin.char_column(c as usize);
                }
            }
            title.element(origin)
        }
    };
    for r in &d.related {
        let same_line = primary
            .as_ref()
            .is_some_and(|p| r.file == p.file && r.line == Some(p.line));
        if same_line {
            continue;
        }
        match place(sources, r.file.as_str(), r.line, r.column, r.len) {
            Some(p) => {
                group = group.element(
                    Snippet::source(p.text)
                        .line_start(p.line as usize)
                        .path(p.file)
                        .annotation(
                            AnnotationKind::Context
                                .span(byte_span(p.text, p.column, p.len))
                                .label(r.message.as_str()),
                        ),
                );
            }
            None => notes.push(located(r)),
        }
    }
    if let Some(note) = &d.note {
        group = group.element(Level::NOTE.message(note.as_str()));
    }
    for note in &notes {
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
