//! Command-line edge: argument parsing with clap, `anyhow`-style errors, exit codes.
//!
//! Exit codes: 0 success (warnings allowed); 1 errors in the packs, or a skill/file not found;
//! 2 usage error or unreadable path.

mod cat;
mod check;
mod explain;
pub mod fast;
mod list;
mod load;
mod output;
mod prompt;
mod serve;
mod tools;

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "skillbake",
    version,
    about = "Validate agent skill packs and serve the ones compiled into this binary",
    long_about = "Validate agent skill packs (SKILL.md + schema.json) with compiler-grade diagnostics, \
and serve the packs compiled into this binary with DB-GPT's load_skill protocol, without file-system access."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Output format of `check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    /// rustc-style diagnostics with source snippets.
    Human,
    /// One JSON object: {"packs", "errors", "warnings", "diagnostics": [...]}.
    Json,
    /// GitHub Actions workflow annotations.
    Github,
    /// SARIF 2.1.0, for GitHub code scanning.
    Sarif,
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
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CheckFormat::Human)]
    format: CheckFormat,
    /// Use this skillbake.toml instead of the one at each skills root.
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
    /// Rule set, overriding the config file's `profile`.
    #[arg(long, value_parser = ["default", "agentskills", "dbgpt"])]
    profile: Option<String>,
    /// Report CODE as an error; `--deny warnings` turns every warning into an error.
    #[arg(short = 'D', long = "deny", value_name = "CODE|warnings")]
    deny: Vec<String>,
    /// Report CODE as a warning.
    #[arg(short = 'W', long = "warn", value_name = "CODE")]
    warn: Vec<String>,
    /// Do not report CODE (hard errors cannot be allowed).
    #[arg(short = 'A', long = "allow", value_name = "CODE")]
    allow: Vec<String>,
    /// Print only the summary line (human format).
    #[arg(short, long)]
    quiet: bool,
    /// Colour the human output.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Validate skill packs on disk and report every problem.
    Check(CheckArgs),
    /// Explain a diagnostic code: what it checks, why, examples, how to fix or silence it.
    Explain {
        /// The code, e.g. `unknown-key` (omit to list every code).
        code: Option<String>,
    },
    /// List the skills compiled into this binary.
    List {
        /// Output format.
        #[arg(long, value_enum, default_value_t = ListFormat::Text)]
        format: ListFormat,
    },
    /// Print the skill catalog for a system prompt.
    Prompt {
        /// Catalog format.
        #[arg(long, value_parser = ["xml", "dbgpt", "codex", "markdown"], default_value = "xml")]
        format: String,
        /// Fit the catalog into this many characters (descriptions are shortened first, then
        /// entries dropped, as Codex does).
        #[arg(long, value_name = "CHARS")]
        budget: Option<usize>,
    },
    /// Print tool definitions: load_skill, and one tool per pack with a schema.json.
    Tools {
        /// API dialect.
        #[arg(long, value_parser = ["openai", "anthropic", "mcp", "json-schema"], default_value = "openai")]
        format: String,
    },
    /// Print DB-GPT's load_skill reply (or another activation shape) for an embedded skill.
    Load {
        /// Reply shape: DB-GPT chunks, learn-claude-code's <skill> tag, or the Agent Skills
        /// <skill_content> block.
        #[arg(long, value_parser = ["chunks", "skill-tag", "skill-content"], default_value = "chunks")]
        format: String,
        /// Skill name (exact, else ASCII case-insensitive).
        skill_name: String,
        /// File path to echo (and, when it names another file of the pack, to serve)
        /// [default: the pack's own SKILL.md path].
        file_path: Option<String>,
    },
    /// Serve the embedded skills as an MCP server on stdin/stdout.
    ///
    /// Tools: load_skill, list_skills, and one per pack with a schema.json. Resources:
    /// skill://{name}/{path} for every embedded file. Instructions: the skill catalog.
    Serve,
    /// Write the exact bytes of an embedded file to stdout.
    Cat {
        /// Skill name (exact, else ASCII case-insensitive).
        skill_name: String,
        /// Path of the file relative to the pack (e.g. SKILL.md, scripts/run.py).
        path: String,
    },
}

/// Parses arguments and runs the command.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(args) => check::run(args),
        Command::Explain { code } => explain::run(code.as_deref()),
        Command::List { format } => list::run(format),
        Command::Prompt { format, budget } => prompt::run(&format, budget),
        Command::Tools { format } => tools::run(&format),
        Command::Load {
            format,
            skill_name,
            file_path,
        } => load::run(&format, &skill_name, file_path.as_deref()),
        Command::Cat { skill_name, path } => cat::run(&skill_name, &path),
        Command::Serve => serve::run(),
    };
    finish(result)
}

/// A command's exit code; an error is printed and exits 2.
fn finish(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("skillbake: {e:#}");
            ExitCode::from(2)
        }
    }
}
