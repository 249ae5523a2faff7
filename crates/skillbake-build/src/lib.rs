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
//! The layers, in order: [`discover`] → [`parse`] → [`validate`] → [`generate`], with
//! [`diagnostic`] and [`report`] carrying problems from where they are found to the user.

#![forbid(unsafe_code)]

pub mod check;
pub mod config;
pub mod diagnostic;
pub mod diff;
pub mod discover;
pub mod explain;
pub mod generate;
pub mod glob;
pub mod model;
pub mod parse;
pub mod report;
pub mod source;
pub mod validate;

pub use check::{check, Baseline, CheckOptions, Checked};
pub use diagnostic::{Code, Diagnostic, Severity};
pub use report::Report;

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
    /// printed as `cargo:warning`; errors fail with every diagnostic rendered.
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
            for d in &checked.report.diagnostics {
                if d.severity == Severity::Warning {
                    let text = report::human::render_one(d, None, false);
                    for line in text.lines() {
                        println!("cargo:warning={line}");
                    }
                }
            }
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
        let generated = generate::generate(&checked.skills, &opts).map_err(Error::TooLarge)?;
        let out = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or(Error::NoOutDir)?,
        };
        write_if_changed(&out.join(generate::REGISTRY_RS), generated.code.as_bytes())?;
        write_if_changed(&out.join(generate::TEXT_FILE), generated.text.as_bytes())?;
        write_if_changed(&out.join(generate::BYTES_FILE), &generated.bytes)?;
        Ok(())
    }
}

/// The default location prefix: the last normal component of the skills folder's path, or
/// `skills` when it has none (`.`, `/`).
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
