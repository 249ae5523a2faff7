//! GitHub Actions workflow commands: one `::error file=…,line=…,col=…,title=…::message` line per
//! diagnostic (`::warning` for warnings), escaped as the runner expects, then the summary. The
//! message carries the note, every related place (`note: first declared here: FILE:L:C`) and the
//! help, each on its own line.

use super::data::{Emitter, Report};
use crate::diagnostic::Severity;
use std::fmt::Write as _;

/// The GitHub Actions emitter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Github;

impl Emitter for Github {
    fn render(&self, report: &Report) -> String {
        render(report)
    }
}

fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// Renders annotations followed by the summary line.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for d in &report.diagnostics {
        let cmd = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut props = format!("file={}", escape_property(&d.file));
        if let Some(l) = d.line {
            let _ = write!(props, ",line={l}");
        }
        if let Some(c) = d.column {
            let _ = write!(props, ",col={c}");
        }
        let _ = write!(
            props,
            ",title={}",
            escape_property(&format!("skillbake {}", d.code))
        );
        let mut msg = format!("[{}] {}", d.code, d.message);
        if let Some(n) = &d.note {
            let _ = write!(msg, "\nnote: {n}");
        }
        for r in &d.related {
            let _ = write!(msg, "\nnote: {}: {}", r.message, r.file);
            if let Some(l) = r.line {
                let _ = write!(msg, ":{l}");
                if let Some(c) = r.column {
                    let _ = write!(msg, ":{c}");
                }
            }
        }
        if let Some(h) = &d.help {
            let _ = write!(msg, "\nhelp: {h}");
        }
        let _ = writeln!(out, "::{cmd} {props}::{}", escape_data(&msg));
    }
    let _ = writeln!(out, "{}", report.summary());
    out
}
