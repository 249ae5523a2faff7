//! The arguments that several commands share or that the command table names: formats,
//! colour, and the arguments of `check` and `diff`.

use clap::ValueEnum;
use std::path::PathBuf;

/// Output format of `diff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiffFormat {
    /// For the terminal: per pack, the verdict and every change.
    Human,
    /// One JSON object (schema_version 1): summary and every pack with its changes.
    Json,
    /// Markdown for a pull-request comment.
    Markdown,
}

/// Arguments of `skillbake diff`.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// OLD and NEW: each a skills folder, a git revision (`main`, `v1.2.0`, `HEAD~1`: the
    /// `skills` folder at that revision) or `REV:PATH`. With --baseline, at most the folder to
    /// compare (default `skills`).
    pub(super) sides: Vec<String>,
    /// Compare the folder with itself at this git revision, read through git without a checkout.
    #[arg(long, value_name = "REV")]
    pub(super) baseline: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DiffFormat::Human)]
    pub(super) format: DiffFormat,
    /// Rule set both sides are checked with, overriding their config files' `profile`.
    #[arg(long, value_parser = skillbake_build::Profile::NAMES)]
    pub(super) profile: Option<String>,
    /// Colour the human output.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    pub(super) color: Color,
}

/// Output format of `list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    /// One line per skill: name and description.
    Text,
    /// A JSON array with every field of every skill.
    Json,
}

/// When to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Color {
    /// When stdout is a terminal and NO_COLOR is unset.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Arguments of `skillbake check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Skills roots or single packs [default: skills].
    pub(super) paths: Vec<PathBuf>,
    /// Output format: human (rustc-style), json (the machine contract), github (workflow
    /// annotations), sarif (SARIF 2.1.0).
    #[arg(long, value_parser = skillbake_build::report::Format::NAMES, default_value = skillbake_build::report::Format::Human.name())]
    pub(super) format: String,
    /// Use this skillbake.toml instead of the one at each skills root.
    #[arg(long, value_name = "PATH")]
    pub(super) config: Option<PathBuf>,
    /// Rule set, overriding the config file's `profile`.
    #[arg(long, value_parser = skillbake_build::Profile::NAMES)]
    pub(super) profile: Option<String>,
    /// Report CODE (or every code of a group: `security`) as an error; `--deny warnings` turns
    /// every warning into an error.
    #[arg(short = 'D', long = "deny", value_name = "CODE|GROUP|warnings")]
    pub(super) deny: Vec<String>,
    /// Report CODE (or every code of a group) as a warning.
    #[arg(short = 'W', long = "warn", value_name = "CODE|GROUP")]
    pub(super) warn: Vec<String>,
    /// Do not report CODE or a group's codes (hard errors cannot be allowed).
    #[arg(short = 'A', long = "allow", value_name = "CODE|GROUP")]
    pub(super) allow: Vec<String>,
    /// Print only the summary line (human format), without the catalog's cost.
    #[arg(short, long)]
    pub(super) quiet: bool,
    /// Colour the human output.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    pub(super) color: Color,
    /// Also compare every pack with its state at this git revision (read through git, no
    /// checkout): `version-not-bumped` and `permission-escalation`.
    #[arg(long, value_name = "REV")]
    pub(super) baseline: Option<String>,
    /// Fail when a vendored pack's files no longer match the skills.lock at its skills root
    /// (`lock-mismatch`), or the lock is missing or malformed (`lock-invalid`).
    #[arg(long)]
    pub(super) locked: bool,
    /// Apply the mechanical fixes (quote a value YAML cannot read, rename a misspelt key,
    /// lowercase a name), then check again and report what remains.
    #[arg(long, conflicts_with_all = ["baseline", "diff"])]
    pub(super) fix: bool,
    /// Print the fixes `--fix` would make as a unified diff, writing nothing (exit 1 when there
    /// is any).
    #[arg(long, conflicts_with = "baseline")]
    pub(super) diff: bool,
    /// With --fix or --diff, also rename a pack's folder when its fix needs it (a name
    /// lowercased, a folder whose name differs from `name` in letter case only).
    #[arg(long)]
    pub(super) rename_dirs: bool,
    /// Check, then check again on every save: only the packs whose files changed are reported
    /// (and the cross-pack rules when their results change); Ctrl-C stops.
    #[arg(long, conflicts_with_all = ["diff", "baseline"])]
    pub(super) watch: bool,
}
