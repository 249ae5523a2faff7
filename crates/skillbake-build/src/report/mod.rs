//! Report layer: the outcome of a check, and one [`Emitter`] per output format (typos' `Report`
//! pattern) — [`human::Human`] (rustc-style, with the source lines, the span underlined and
//! related places labelled), [`json::Json`] (the stable machine contract), [`github::Github`]
//! (workflow annotations), [`sarif::Sarif`] (SARIF 2.1.0 for code scanning) and
//! [`cargo::Cargo`] (`cargo:warning` lines for a build script). The CLI's `--format` and
//! [`crate::Config::report_file`] pick one by [`Format`]; nothing a format can hold is left out
//! of it (related places are JSON `related`, SARIF `relatedLocations`, notes in annotations).

pub mod cargo;
pub mod github;
pub mod human;
pub mod json;
pub mod sarif;

mod data;

pub use data::{Emitter, Report};

skillbake_format::named_enum! {
    /// The formats a report can be written in (the CLI's `--format` values).
    pub enum Format {
        /// rustc-style diagnostics with source snippets ([`human::Human`]).
        Human = "human",
        /// One JSON object: `{"packs", "errors", "warnings", "diagnostics": [...]}`
        /// ([`json::Json`]).
        Json = "json",
        /// GitHub Actions workflow annotations ([`github::Github`]).
        Github = "github",
        /// SARIF 2.1.0, for GitHub code scanning ([`sarif::Sarif`]).
        Sarif = "sarif",
    }
}

impl Format {
    /// The emitter of this format. `color` and `quiet` (summary line only) apply to
    /// [`Format::Human`].
    pub fn emitter(self, color: bool, quiet: bool) -> Box<dyn Emitter> {
        match self {
            Format::Human => Box::new(human::Human { color, quiet }),
            Format::Json => Box::new(json::Json),
            Format::Github => Box::new(github::Github),
            Format::Sarif => Box::new(sarif::Sarif),
        }
    }

    /// Whether file paths should carry the checked root in front (machine formats are read
    /// from the repository root, not from the checked folder).
    pub fn wants_root_prefix(self) -> bool {
        matches!(self, Format::Github | Format::Sarif)
    }
}
