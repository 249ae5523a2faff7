//! The report itself, and the trait every output format implements.

use crate::diagnostic::{Diagnostic, Severity};
use std::collections::BTreeMap;

/// Writes a whole [`Report`] in one format.
pub trait Emitter {
    /// The report as text, ready to write.
    fn render(&self, report: &Report) -> String;

    /// Writes [`Emitter::render`]'s text to `out` and flushes it.
    fn emit(&self, report: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(self.render(report).as_bytes())?;
        out.flush()
    }
}

/// Everything a check found.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Number of packs found.
    pub packs: usize,
    /// Every diagnostic, sorted by file and position.
    pub diagnostics: Vec<Diagnostic>,
    /// Text of the files diagnostics point into (for source snippets), by diagnostic path.
    pub sources: BTreeMap<String, String>,
    /// What the catalog and the routing index cost, when any pack was indexed.
    pub cost: Option<crate::validate::route::Cost>,
}

impl Report {
    /// Number of errors.
    pub fn errors(&self) -> usize {
        self.count(Severity::Error)
    }

    /// Number of warnings.
    pub fn warnings(&self) -> usize {
        self.count(Severity::Warning)
    }

    /// True when any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.errors() > 0
    }

    fn count(&self, s: Severity) -> usize {
        self.diagnostics.iter().filter(|d| d.severity == s).count()
    }

    /// `checked 42 packs: 2 errors, 1 warning`.
    pub fn summary(&self) -> String {
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        format!(
            "checked {}: {}, {}",
            plural(self.packs, "pack"),
            plural(self.errors(), "error"),
            plural(self.warnings(), "warning")
        )
    }

    /// Prefixes every file path with `prefix/` (for reports over several roots).
    pub fn prefix_paths(&mut self, prefix: &str) {
        if prefix.is_empty() {
            return;
        }
        let join = |file: &mut String| {
            *file = crate::discover::join(
                prefix,
                file.trim_start_matches("./").trim_start_matches('.'),
            );
        };
        for d in &mut self.diagnostics {
            join(&mut d.file);
            for r in &mut d.related {
                join(&mut r.file);
            }
        }
        self.sources = std::mem::take(&mut self.sources)
            .into_iter()
            .map(|(k, v)| (crate::discover::join(prefix, &k), v))
            .collect();
    }

    /// Reports of several roots as one, in the order given: what [`Report::merge`] of each in
    /// turn gives, with the diagnostics sorted once at the end instead of after every root.
    pub fn merge_all(parts: impl IntoIterator<Item = Report>) -> Report {
        let mut all = Report::default();
        for other in parts {
            all.add(other);
        }
        crate::diagnostic::sort(&mut all.diagnostics);
        all
    }

    /// Appends another report, keeping the diagnostics sorted.
    pub fn merge(&mut self, other: Report) {
        self.add(other);
        crate::diagnostic::sort(&mut self.diagnostics);
    }

    fn add(&mut self, other: Report) {
        self.packs += other.packs;
        self.cost = match (self.cost, other.cost) {
            (Some(a), Some(b)) => Some(crate::validate::route::Cost {
                catalog_format: a.catalog_format,
                catalog_chars: a.catalog_chars + b.catalog_chars,
                catalog_tokens: a.catalog_tokens + b.catalog_tokens,
                index_bytes: a.index_bytes + b.index_bytes,
            }),
            (a, b) => a.or(b),
        };
        self.diagnostics.extend(other.diagnostics);
        self.sources.extend(other.sources);
    }
}
