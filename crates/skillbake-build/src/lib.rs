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
//! The public API is small, as prost-build's is: [`Config`] for `build.rs`; [`check()`] with
//! [`CheckOptions`] for tools that only validate (the `skillbake check` command); the
//! diagnostics ([`Code`], [`Diagnostic`], [`Related`], [`Severity`], [`Level`], [`Profile`]);
//! [`report`], the [`Report`] with one [`report::Emitter`] per output format; [`diff`], what changed between two checked trees and the version bump it needs; [`vendor`], packs copied from other git repositories and their `skills.lock`; [`fix`], the fixes diagnostics carry applied (`check --fix`); and [`scaffold`], new packs that pass the check. [`check_overlay`] checks a tree with some files replaced by unsaved text (an editor's buffers), [`check_files`] a pack that exists only in memory.
//!
//! Inside, the layers run in order: discover → parse → validate → generate, with diagnostics
//! carrying problems from where they are found to the report (see `ARCHITECTURE.md`). The
//! modules of those layers are private; the few items skillbake's own fuzz targets and tools
//! reach are in a `#[doc(hidden)]` module that is not public API.

#![forbid(unsafe_code)]

mod cache;
mod check;
mod checked;
mod config;
mod diagnostic;
pub mod diff;
mod discover;
pub mod fix;
mod generate;
mod glob;
mod model;
mod parallel;
mod parse;
pub mod report;
pub mod scaffold;
pub mod sign;
mod source;
mod validate;
pub mod vendor;

#[cfg(test)]
mod tests;

pub use cache::Stats;
pub use check::{check, check_files, check_overlay, Baseline, CheckOptions};
pub use checked::Checked;
pub use config::{Level, Profile};
pub use diagnostic::{Code, Diagnostic, Edit, Fix, Position, Related, Severity, SECURITY};
pub use generate::TooLarge;
pub use model::{Pack, PackFile};
pub use validate::fields::{Field, KNOWN_FIELDS};

/// The compiler's internal layers, for skillbake's own fuzz targets (`fuzz/`: the `SKILL.md`
/// parser and code generation on arbitrary input) and workspace tools (`cargo xtask route-eval`
/// tunes the routing weights on the index builder; `cargo xtask bench` writes a generated
/// registry as a benchmark fixture). Not public API: anything here may change in any release.
#[doc(hidden)]
pub mod __internal {
    pub use crate::discover::is_ignored;
    pub use crate::generate::route::{build_fields_with, FieldTexts, Weights};
    pub use crate::generate::{
        generate, text_file, GenOptions, Generated, BYTES_FILE, REGISTRY_RS, ROUTE_FILE, TEXT_FILE,
    };
    pub use crate::model::Skill;
    pub use crate::parse::frontmatter;

    /// The packs of a check as the generator takes them.
    pub fn skills(checked: &crate::Checked) -> &[Skill] {
        &checked.skills
    }
}

use report::{Emitter as _, Report};
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
    /// The signing key could not be read.
    Signing(String),
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
            Error::Signing(m) => write!(f, "skillbake: cannot sign the manifest: {m}"),
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
    signing_key_file: Option<PathBuf>,
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
            signing_key_file: None,
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

    /// Sign the registry's manifest with the Ed25519 secret key in `path` (a PKCS#8 PEM file,
    /// as `skillbake keygen` writes, or 64 hexadecimal digits): the binary then answers
    /// `skillbake manifest --signed` and `skillbake verify --key` checks it. Without a key
    /// file, a build signs with the key in `$SKILLBAKE_SIGNING_KEY` when that is set (the key
    /// itself, for a CI secret). A key that cannot be read fails the build.
    pub fn sign_with_key_file(&mut self, path: impl Into<PathBuf>) -> &mut Self {
        self.signing_key_file = Some(path.into());
        self
    }

    /// Fail the build when a vendored pack's files no longer match the `skills.lock` at the
    /// skills root (`lock-mismatch`), as `skillbake check --locked` does.
    pub fn locked(&mut self) -> &mut Self {
        self.options.locked = true;
        self
    }

    /// The key the build signs with: the key file, else `$SKILLBAKE_SIGNING_KEY`, else none.
    fn signing_key(&self) -> Result<Option<sign::SecretKey>, Error> {
        if self.cargo_output {
            println!("cargo:rerun-if-env-changed={}", sign::SIGNING_KEY_ENV);
        }
        let (text, from) = match &self.signing_key_file {
            Some(path) => {
                if self.cargo_output {
                    println!("cargo:rerun-if-changed={}", path.display());
                }
                let text = std::fs::read_to_string(path).map_err(|e| {
                    Error::Signing(format!(
                        "cannot read the signing key {}: {e}",
                        path.display()
                    ))
                })?;
                (text, path.display().to_string())
            }
            None => match std::env::var(sign::SIGNING_KEY_ENV) {
                Ok(text) if !text.trim().is_empty() => {
                    (text, format!("${}", sign::SIGNING_KEY_ENV))
                }
                _ => return Ok(None),
            },
        };
        sign::SecretKey::parse(&text)
            .map(Some)
            .map_err(|e| Error::Signing(format!("{from}: {e}")))
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
    ///
    /// Incremental: the output directory keeps a cache of every pack's generated part, keyed by
    /// its files' content (see `cache`), so a rebuild after editing one pack checks and
    /// generates that pack only; the output is byte for byte what a clean build writes.
    pub fn compile(&self) -> Result<(), Error> {
        self.compile_stats().map(|_| ())
    }

    /// [`Config::compile`], returning what the build reused and did (see [`cache::Stats`]).
    #[doc(hidden)]
    pub fn compile_stats(&self) -> Result<cache::Stats, Error> {
        let dir = self.effective_skills_dir();
        if self.cargo_output {
            println!("cargo:rerun-if-env-changed={SKILLS_DIR_ENV}");
            // Cargo scans a folder named here recursively, folders included, by modification
            // time: an edit, an addition, a rename or a deletion anywhere below it reruns the
            // build script, so the skills root is the whole set (plus a configuration file
            // given from elsewhere). See `tests/rebuild.rs`.
            println!("cargo:rerun-if-changed={}", dir.display());
            if let Some(config) = &self.options.config_file {
                if config.exists() {
                    println!("cargo:rerun-if-changed={}", config.display());
                }
            }
        }
        let prefix = self
            .location_prefix
            .clone()
            .unwrap_or_else(|| generate::default_prefix(&dir));
        let out = match &self.out_dir {
            Some(d) => Some(d.clone()),
            None => std::env::var_os("OUT_DIR").map(PathBuf::from),
        };
        let Some(out) = out else {
            let checked = check(&dir, &self.options);
            self.report(&checked.report)?;
            if checked.report.has_errors() {
                return Err(Error::Invalid(Box::new(checked.report)));
            }
            return Err(Error::NoOutDir);
        };
        match self.build_into(&dir, &prefix, &out) {
            Err(Failed::Store(_)) => {
                // The texts the cache keeps on disk could not be read back (the store was
                // damaged after it was read): built again without the cache.
                let _ = std::fs::remove_file(out.join(cache::CACHE_FILE));
                self.build_into(&dir, &prefix, &out)
                    .map_err(Failed::into_error)
            }
            done => done.map_err(Failed::into_error),
        }
    }

    /// Checks and generates into `out` (see [`Config::compile_stats`]); the report is printed
    /// once the registry is written, or when it has errors.
    fn build_into(&self, dir: &Path, prefix: &str, out: &Path) -> Result<cache::Stats, Failed> {
        let started = std::time::Instant::now();
        let built = cache::build(dir, &self.options, prefix, out).map_err(Error::TooLarge)?;
        if built.report.has_errors() {
            self.report(&built.report)?;
            return Err(Error::Invalid(Box::new(built.report)).into());
        }
        let signature = self.signing_key()?.map(|key| {
            let signature = key.sign(&built.manifest());
            (
                key.public().to_string(),
                format!(
                    "{}{}",
                    skillbake_format::manifest::ED25519,
                    skillbake_format::manifest::hex(&signature)
                ),
            )
        });
        let opts = generate::GenOptions {
            runtime_path: self.runtime_path.clone(),
            location_prefix: prefix.to_string(),
            signature,
        };
        let t = std::time::Instant::now();
        let skills = built.defaults.iter().filter(|&&d| d).count();
        let route = match &built.route {
            Some(r) if r.stats.docs == skills => r.bytes.clone(),
            _ => Vec::new(),
        };
        let generated = generate::assemble(&built.fragments, &built.defaults, route, &opts)
            .map_err(Error::TooLarge)?;
        let assemble = t.elapsed();
        let t = std::time::Instant::now();
        // (The cache for the next build was written while the cross-pack rules ran.)
        write_if_changed(&out.join(generate::REGISTRY_RS), generated.code.as_bytes())?;
        write_text(out, &generated.text)?;
        write_if_changed(&out.join(generate::BYTES_FILE), &generated.bytes)?;
        write_if_changed(&out.join(generate::ROUTE_FILE), &generated.route)?;
        let write = t.elapsed();
        if let Some(path) = std::env::var_os(STATS_ENV).filter(|p| !p.is_empty()) {
            let s = &built.stats;
            let line = serde_json::json!({
                "packs": s.packs,
                "reused_by_stamp": s.reused_by_stamp,
                "reused_by_hash": s.reused_by_hash,
                "generated": s.generated,
                "cache_hit": s.cache_hit,
                "walk_s": s.walk.as_secs_f64(),
                "packs_s": s.packs_time.as_secs_f64(),
                "cross_s": s.cross.as_secs_f64(),
                "assemble_s": assemble.as_secs_f64(),
                "write_s": write.as_secs_f64(),
                "total_s": started.elapsed().as_secs_f64(),
                "peak_rss_kib": peak_rss_kib(),
                "text_bytes": generated.text.len(),
                "data_bytes": generated.bytes.len(),
                "code_bytes": generated.code.len(),
            });
            let _ = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|mut f| {
                    std::io::Write::write_all(&mut f, format!("{line}\n").as_bytes())
                });
        }
        self.report(&built.report)?;
        Ok(built.stats)
    }

    /// Prints the report's warnings as `cargo:warning` lines (when printing cargo directives)
    /// and writes the files of [`Config::report_file`].
    fn report(&self, report: &Report) -> Result<(), Error> {
        if self.cargo_output {
            print!("{}", report::cargo::Cargo.render(report));
        }
        for (format, path) in &self.report_files {
            let text = format.emitter(false, false).render(report);
            write_if_changed(path, text.as_bytes())?;
        }
        Ok(())
    }
}

/// Environment variable naming a file to which [`Config::compile`] appends one JSON line per
/// run: packs reused from the cache and generated, time per phase, peak memory, output sizes.
pub const STATS_ENV: &str = "SKILLBAKE_BUILD_STATS";

/// This process's peak resident set size in KiB (Linux), for [`STATS_ENV`].
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Writes each piece of the registry's text to its file ([`generate::text_file`]) unless the
/// file holds it already, and removes the files of pieces an earlier build had beyond these.
fn write_text(out: &Path, text: &generate::TextBlob) -> Result<(), Failed> {
    for (k, segments) in text.pieces().iter().enumerate() {
        write_pieces_if_changed(&out.join(generate::text_file(k)), segments).map_err(
            |e| match e {
                WriteFailed::Piece(e) => Failed::Store(e),
                WriteFailed::File(e) => Failed::Error(Error::Io(e)),
            },
        )?;
    }
    for k in text.pieces().len().. {
        match std::fs::remove_file(out.join(generate::text_file(k))) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
            Err(e) => return Err(Failed::Error(Error::Io(e))),
        }
    }
    Ok(())
}

/// Writes `bytes` unless the file holds them already (see [`write_pieces_if_changed`]).
pub(crate) fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    write_pieces_if_changed(path, &[bytes]).map_err(|e| match e {
        WriteFailed::File(e) | WriteFailed::Piece(e) => Error::Io(e),
    })
}

/// Why [`write_pieces_if_changed`] failed.
#[derive(Debug)]
pub(crate) enum WriteFailed {
    /// Reading or writing the file.
    File(std::io::Error),
    /// Reading a piece kept on disk.
    Piece(std::io::Error),
}

/// Why [`Config::build_into`] failed.
enum Failed {
    Error(Error),
    /// A text the build cache keeps could not be read back.
    Store(std::io::Error),
}

impl From<Error> for Failed {
    fn from(e: Error) -> Failed {
        Failed::Error(e)
    }
}

impl Failed {
    fn into_error(self) -> Error {
        match self {
            Failed::Error(e) => e,
            Failed::Store(e) => Error::Io(e),
        }
    }
}

/// Writes `pieces`, one after the other, unless the file holds them already (its modification
/// time then stays, and rustc does not rebuild). The file is compared a chunk at a time and
/// written in place from the first chunk that differs, then cut to length: a file of the
/// registry's size rewritten in place costs about a third of truncating it and writing it
/// again, as the page cache keeps its pages, and neither the file nor the new bytes are ever
/// held in memory whole.
pub(crate) fn write_pieces_if_changed<P: Piece>(
    path: &Path,
    pieces: &[P],
) -> Result<(), WriteFailed> {
    use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
    const CHUNK: usize = 1 << 20;
    let io = WriteFailed::File;
    let piece_io = WriteFailed::Piece;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(io)?;
    let old_len = file.metadata().map_err(io)?.len();
    let new_len: u64 = pieces.iter().map(|p| p.len() as u64).sum();
    let mut buf = vec![0u8; CHUNK.min(usize::try_from(old_len).unwrap_or(CHUNK))];
    // Where a piece kept on disk is read to.
    let mut scratch = Vec::new();
    // How many bytes at the start the file holds already, and where the first difference is
    // (the piece, and the offset in it of the chunk that holds it).
    let mut same = 0u64;
    let mut differs = None;
    'pieces: for (i, piece) in pieces.iter().enumerate() {
        let piece = piece.bytes(&mut scratch).map_err(piece_io)?;
        let mut at = 0;
        while at < piece.len() {
            let left = usize::try_from(old_len - same).unwrap_or(usize::MAX);
            let want = CHUNK.min(piece.len() - at).min(left);
            let equal = want > 0
                && buf.get_mut(..want).is_some_and(|old| {
                    file.read_exact(old).is_ok() && piece.get(at..at + want) == Some(&old[..])
                });
            if !equal {
                differs = Some((i, at));
                break 'pieces;
            }
            at += want;
            same += want as u64;
        }
    }
    // Without a difference the new bytes are the file's, or the start of it.
    if let Some((i, at)) = differs {
        file.seek(SeekFrom::Start(same)).map_err(io)?;
        let mut w = BufWriter::with_capacity(1 << 18, &mut file);
        for (j, piece) in pieces.iter().enumerate().skip(i) {
            let piece = piece.bytes(&mut scratch).map_err(piece_io)?;
            let from = if j == i { at } else { 0 };
            w.write_all(piece.get(from..).unwrap_or_default())
                .map_err(io)?;
        }
        w.flush().map_err(io)?;
    }
    if old_len != new_len {
        file.set_len(new_len).map_err(io)?;
    }
    Ok(())
}

/// A piece of what [`write_pieces_if_changed`] writes: bytes in memory, or a text the build
/// cache keeps on disk, read when it is reached.
pub(crate) trait Piece {
    /// Its length in bytes.
    fn len(&self) -> usize;
    /// Its bytes, read into `buf` if they are not in memory.
    fn bytes<'a>(&'a self, buf: &'a mut Vec<u8>) -> std::io::Result<&'a [u8]>;
}

impl Piece for &[u8] {
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }
    fn bytes<'a>(&'a self, _: &'a mut Vec<u8>) -> std::io::Result<&'a [u8]> {
        Ok(self)
    }
}

impl Piece for generate::pack::Text {
    fn len(&self) -> usize {
        generate::pack::Text::len(self)
    }
    fn bytes<'a>(&'a self, buf: &'a mut Vec<u8>) -> std::io::Result<&'a [u8]> {
        generate::pack::Text::bytes(self, buf)
    }
}
