//! `cargo:warning` lines for a build script: every warning of the report, rendered as the human
//! format does without source snippets, one `cargo:warning=` line per rendered line. Errors are
//! not printed here: they fail the build and come back in [`crate::Error`].

use super::data::{Emitter, Report};
use super::human;
use crate::diagnostic::Severity;

/// The build-script emitter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cargo;

impl Emitter for Cargo {
    fn render(&self, report: &Report) -> String {
        let mut out = String::new();
        let no_sources = human::Sources::new();
        for d in &report.diagnostics {
            if d.severity != Severity::Warning {
                continue;
            }
            for line in human::render_one(d, &no_sources, false).lines() {
                out.push_str("cargo:warning=");
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }
}
