//! # skillbake-build
//!
//! The build-time compiler of [skillbake](https://docs.rs/skillbake): it discovers agent skill
//! packs (folders with a `SKILL.md`), validates every one of them with compiler-grade
//! diagnostics, and generates a `phf` perfect-hash registry that the `skillbake` runtime serves
//! `load_skill` from, with no file-system access at run time.
//!
//! In `build.rs`:
//!
//! ```no_run
//! fn main() -> Result<(), skillbake_build::Error> {
//!     skillbake_build::Config::new().skills_dir("skills").compile()
//! }
//! ```
//!
//! and in the crate: `skillbake::include_skills!();` then `REGISTRY.load_skill(name, path)`.
//!
//! The public API is small, as prost-build's is: [`Config`] for `build.rs`; [`check`] with
//! [`CheckOptions`] for tools that only validate (the `skillbake check` command); the
//! diagnostics ([`Code`], [`Diagnostic`], [`Related`], [`Severity`], [`Level`], [`Profile`]);
//! and [`report`], the [`Report`] with one [`Emitter`] per output format.
//!
//! Inside, the layers run in order: discover → parse → validate → generate, with diagnostics
//! carrying problems from where they are found to the report (see `ARCHITECTURE.md`). The
//! modules of those layers are reachable for skillbake's own tests, benchmarks and tools but are
//! not public API (`#[doc(hidden)]`): they may change in any release.

#![forbid(unsafe_code)]

mod check;
#[doc(hidden)]
pub mod config;
#[doc(hidden)]
pub mod diagnostic;
pub mod diff;
#[doc(hidden)]
pub mod discover;
#[doc(hidden)]
pub mod generate;
mod glob;
#[doc(hidden)]
pub mod model;
#[doc(hidden)]
pub mod parse;
pub mod report;
#[doc(hidden)]
pub mod source;
#[doc(hidden)]
pub mod validate;

pub use check::{check, Baseline, CheckOptions, Checked};
pub use config::{Level, Profile};
pub use diagnostic::{Code, Diagnostic, Position, Related, Severity};
pub use report::{Emitter, Report};

use std::path::{Path, PathBuf};

/// Environment variable that overrides the skills folder at build time.
pub const SKILLS_DIR_ENV: &str = "SKILLBAKE_SKILLS_DIR";

/// Why [`Config::compile`] failed.
#[non_exhaustive]
pub enum Error {
    /// The packs have errors; the report holds every diagnostic.
    Invalid(Box<Report>),
    /// Writing the generated files failed.
    Io(std::io::Error),
    /// The skills tree is too large to embed.
    TooLarge(generate::TooLarge),
    /// `OUT_DIR` is not set and no output directory was given.
    NoOutDir,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Invalid(report) => {
                f.write_str(&report::human::render(report, false))?;
                write!(f, "skillbake: the skill packs have errors; fix them to build")
            }
            Error::Io(e) => write!(f, "skillbake: cannot write the generated registry: {e}"),
            Error::TooLarge(e) => write!(f, "skillbake: {e}"),
            Error::NoOutDir => f.write_str(
                "skillbake: OUT_DIR is not set; call compile() from build.rs or set Config::out_dir",
            ),
        }
    }
}

/// `Debug` prints the rendered diagnostics, so `fn main() -> Result<(), Error>` in `build.rs`
/// shows them readably.
impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "\n{self}")
    }
}

impl std::error::Error for Error {}

/// Configures and runs the compilation of a skills folder (prost-build style builder).
#[derive(Debug, Clone)]
pub struct Config {
    skills_dir: PathBuf,
    env_override: bool,
    options: CheckOptions,
    runtime_path: String,
    out_dir: Option<PathBuf>,
    location_prefix: Option<String>,
    cargo_output: bool,
    report_files: Vec<(report::Format, PathBuf)>,
}

impl Default for Config {
    fn default() -> Self {
        Self::new()
    }
}

impl Config {
    /// Defaults: skills in `skills/` (or `$SKILLBAKE_SKILLS_DIR`), runtime at `::skillbake`,
    /// output to `$OUT_DIR`, cargo directives printed.
    pub fn new() -> Self {
        Config {
            skills_dir: PathBuf::from("skills"),
            env_override: true,
            options: CheckOptions::default(),
            runtime_path: "::skillbake".into(),
            out_dir: None,
            location_prefix: None,
            cargo_output: true,
            report_files: Vec::new(),
        }
    }

    /// The skills folder, relative to the crate root. `$SKILLBAKE_SKILLS_DIR` still wins unless
    /// [`Config::ignore_env`] is called.
    pub fn skills_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.skills_dir = dir.into();
        self
    }

    /// Ignore `$SKILLBAKE_SKILLS_DIR`.
    pub fn ignore_env(&mut self) -> &mut Self {
        self.env_override = false;
        self
    }

    /// Use this `skillbake.toml` instead of the one at the skills root.
    pub fn config_file(&mut self, path: impl Into<PathBuf>) -> &mut Self {
        self.options.config_file = Some(path.into());
        self
    }

    /// Accept `name` in `required_tools` in addition to DB-GPT's built-ins and the config file.
    pub fn extra_tool(&mut self, name: impl Into<String>) -> &mut Self {
        self.options.extra_tools.push(name.into());
        self
    }

    /// The agent relies on skill `name` in the version range `range` (Cargo syntax: `"^1"`,
    /// `"~1.2"`, `"=1.2.0"`, `">=1, <3"`), like a `[requires]` entry of `skillbake.toml`: the
    /// agent gets the newest embedded version in range by name, and the build fails
    /// (`agent-requires-unsatisfied`) when no embedded version is in range.
    pub fn require(&mut self, name: impl Into<String>, range: impl Into<String>) -> &mut Self {
        self.options.requires.push((name.into(), range.into()));
        self
    }

    /// Path of the runtime crate in generated code (default `::skillbake`; set it when you
    /// re-export or rename the dependency).
    pub fn runtime_path(&mut self, path: impl Into<String>) -> &mut Self {
        self.runtime_path = path.into();
        self
    }

    /// Write the generated files here instead of `$OUT_DIR`.
    pub fn out_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// The folder name `load_skill` echoes in front of each pack (default: the skills folder's
    /// own name, e.g. `skills` → `skills/csv-data-analysis/SKILL.md`).
    pub fn location_prefix(&mut self, prefix: impl Into<String>) -> &mut Self {
        self.location_prefix = Some(prefix.into());
        self
    }

    /// Do not print `cargo:` directives (for use outside build scripts).
    pub fn no_cargo_output(&mut self) -> &mut Self {
        self.cargo_output = false;
        self
    }

    /// Also write the whole report (every error and warning, related places included) to `path`
    /// in `format` — for example SARIF for code scanning, or JSON for another tool — on every
    /// build, whether or not the packs have errors. Call it once per file.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), skillbake_build::Error> {
    /// use skillbake_build::report::Format;
    /// let out = std::env::var("OUT_DIR").unwrap_or_default();
    /// skillbake_build::Config::new()
    ///     .report_file(Format::Sarif, format!("{out}/skills.sarif"))
    ///     .compile()
    /// # }
    /// ```
    pub fn report_file(&mut self, format: report::Format, path: impl Into<PathBuf>) -> &mut Self {
        self.report_files.push((format, path.into()));
        self
    }

    /// The skills folder in effect (after `$SKILLBAKE_SKILLS_DIR`).
    pub fn effective_skills_dir(&self) -> PathBuf {
        if self.env_override {
            if let Some(dir) = std::env::var_os(SKILLS_DIR_ENV).filter(|d| !d.is_empty()) {
                return PathBuf::from(dir);
            }
        }
        self.skills_dir.clone()
    }

    /// Validates the skills and, when there is no error, writes the registry. Warnings are
    /// printed as `cargo:warning` ([`report::cargo::Cargo`]); errors fail with every diagnostic
    /// rendered; the files of [`Config::report_file`] get the whole report in their format.
    pub fn compile(&self) -> Result<(), Error> {
        let dir = self.effective_skills_dir();
        if self.cargo_output {
            println!("cargo:rerun-if-env-changed={SKILLS_DIR_ENV}");
        }
        let checked = check(&dir, &self.options);
        if self.cargo_output {
            for p in &checked.tracked {
                println!("cargo:rerun-if-changed={}", p.display());
            }
            print!("{}", report::cargo::Cargo.render(&checked.report));
        }
        for (format, path) in &self.report_files {
            let text = format.emitter(false, false).render(&checked.report);
            write_if_changed(path, text.as_bytes())?;
        }
        if checked.report.has_errors() {
            return Err(Error::Invalid(Box::new(checked.report)));
        }
        let opts = generate::GenOptions {
            runtime_path: self.runtime_path.clone(),
            location_prefix: self
                .location_prefix
                .clone()
                .unwrap_or_else(|| default_prefix(&dir)),
        };
        let generated = generate::generate_with(&checked.skills, &opts, checked.route.as_ref())
            .map_err(Error::TooLarge)?;
        let out = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or(Error::NoOutDir)?,
        };
        write_if_changed(&out.join(generate::REGISTRY_RS), generated.code.as_bytes())?;
        write_if_changed(&out.join(generate::TEXT_FILE), generated.text.as_bytes())?;
        write_if_changed(&out.join(generate::BYTES_FILE), &generated.bytes)?;
        write_if_changed(&out.join(generate::ROUTE_FILE), &generated.route)?;
        Ok(())
    }
}

/// The default location prefix: the last normal component of the skills folder's path, or
/// `skills` when it has none (`.`, `/`).
#[doc(hidden)]
pub fn default_prefix(dir: &Path) -> String {
    use std::path::Component;
    let mut parts: Vec<String> = Vec::new();
    for c in dir.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop();
            }
            _ => {}
        }
    }
    parts.pop().unwrap_or_else(|| "skills".into())
}

fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    std::fs::write(path, bytes).map_err(Error::Io)
}
