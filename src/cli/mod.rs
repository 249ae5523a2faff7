//! Command-line edge: argument parsing with clap, `anyhow`-style errors, exit codes.
//!
//! Exit codes: 0 success (warnings allowed); 1 errors in the packs, or a skill/file not found;
//! 2 usage error or unreadable path.

mod args;
mod cat;
mod check;
mod diff;
mod explain;
pub mod fast;
mod fix;
mod list;
mod load;
mod lsp;
mod manifest;
mod new;
mod output;
mod prompt;
mod route;
mod run;
mod serve;
mod tools;
mod vendor;
mod watch;

use args::{CheckArgs, DiffArgs, ListFormat};
use clap::{Parser, Subcommand};
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

#[derive(Debug, Subcommand)]
enum Command {
    /// Validate skill packs on disk and report every problem.
    Check(CheckArgs),
    /// What changed between two states of a skills folder, per pack: every change classified,
    /// the version bump it needs against the bump made.
    Diff(DiffArgs),
    /// Create a skill pack that passes `check`: SKILL.md, and with --runnable a schema.json and
    /// a script returning the unified result.
    New(new::NewArgs),
    /// A Language Server over stdin/stdout for SKILL.md and schema.json: the diagnostics of
    /// `check` as you type, their fixes as code actions, hover on frontmatter keys, completion of
    /// keys and permission names.
    Lsp,
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
        #[arg(long, value_parser = skillbake::CatalogFormat::NAMES, default_value = skillbake::CatalogFormat::Xml.name())]
        format: String,
        /// Fit the catalog into this many characters (descriptions are shortened first, then
        /// entries dropped, as Codex does).
        #[arg(long, value_name = "CHARS", conflicts_with = "query")]
        budget: Option<usize>,
        /// Only the skills routed for this request: the top candidates with their full
        /// description, when_to_use, when_not_to_use and parameters.
        #[arg(long, value_name = "REQUEST")]
        query: Option<String>,
        /// How many candidates `--query` gives.
        #[arg(long, value_name = "K", default_value_t = 5, requires = "query", value_parser = clap::value_parser!(u32).range(1..))]
        top: u32,
        /// Route only among the skills of this bucket (and the buckets below it).
        #[arg(long, value_name = "BUCKET", requires = "query")]
        bucket: Option<String>,
    },
    /// Route a request: the skills most likely to serve it, best first, with their scores.
    Route {
        /// The request, in the user's words.
        request: String,
        /// How many skills to list.
        #[arg(long, value_name = "K", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
        top: u32,
        /// Route only among the skills of this bucket (and the buckets below it).
        #[arg(long, value_name = "BUCKET")]
        bucket: Option<String>,
        /// Output format.
        #[arg(long, value_parser = ["text", "json"], default_value = "text")]
        format: String,
    },
    /// Print tool definitions: load_skill, find_skills, and one tool per pack with a schema.json.
    Tools {
        /// API dialect.
        #[arg(long, value_parser = skillbake::ToolsFormat::NAMES, default_value = skillbake::ToolsFormat::OpenAi.name())]
        format: String,
    },
    /// Print DB-GPT's load_skill reply (or another activation shape) for an embedded skill.
    Load {
        /// Reply shape: DB-GPT chunks, learn-claude-code's <skill> tag, or the Agent Skills
        /// <skill_content> block.
        #[arg(long, value_parser = load::formats(), default_value = load::CHUNKS)]
        format: String,
        /// Skill name (letter case ignored, as in DB-GPT), or NAME@RANGE for another embedded
        /// version (`send-email@1`, `send-email@^1.2`, `send-email@=1.2.0`).
        skill_name: String,
        /// File path to echo (and, when it names another file of the pack, to serve)
        /// [default: the pack's own SKILL.md path].
        file_path: Option<String>,
        /// Render the body as a Jinja2 prompt template (as DB-GPT does) with variable KEY set
        /// to VALUE; repeatable. Variables not given are empty.
        #[arg(long = "var", value_name = "KEY=VALUE", value_parser = load::parse_var)]
        vars: Vec<(String, String)>,
    },
    /// Serve the embedded skills as an MCP server on stdin/stdout, or over HTTP with --http.
    ///
    /// Tools: load_skill, find_skills, list_skills, and one per pack with a schema.json. Resources:
    /// skill://{name}/{path} for every embedded file. Instructions: the skill catalog. With
    /// --execute (or any --allow), pack tools run runnable packs under that policy. With --http
    /// ADDR, one server answers many clients over MCP's Streamable HTTP transport at /mcp, with
    /// a health endpoint at /healthz.
    Serve(Box<serve::ServeArgs>),
    /// Run a skill's entrypoint with JSON parameters and print the unified result
    /// {"ok", "data", "error"} (exit 0 only when ok).
    Run(run::RunArgs),
    /// DB-GPT's execute_skill_script_file: run scripts/SCRIPT of a skill and print DB-GPT's
    /// chunks (exit 0 only when the script succeeded).
    ExecScript(run::ExecScriptArgs),
    /// Print the MCP Skills extension's manifest of every embedded skill: each file's SHA-256
    /// (computed when this binary was built) and path under its skill path
    /// (`send-email/SKILL.md`), as `sha256sum -c` reads it, or the skills/list entries as JSON.
    Manifest {
        /// Output format.
        #[arg(long, value_parser = ["text", "json"], default_value = "text")]
        format: String,
        /// Print the manifest of every embedded file with the Ed25519 signature the build made
        /// (`# key` and `# signature` lines first); fails when the build had no signing key.
        #[arg(long)]
        signed: bool,
    },
    /// Check a materialised copy of the embedded skills (what an MCP host wrote to its cache,
    /// one folder per skill path) against the manifest: name every file that differs, is
    /// missing or is extra (exit 1 when any does). With --key, check a signature first: of a
    /// signed manifest file, of another skillbake binary (run with `manifest --signed`), or of
    /// the manifest the folder is checked against.
    Verify {
        /// A folder holding a copy (`DIR/send-email/SKILL.md`, ...), a signed manifest file, or
        /// a skillbake binary.
        path: std::path::PathBuf,
        /// The public key the manifest must be signed with: a file (`skillbake keygen`'s
        /// `.pub`) or the key itself (`ed25519:HEX`).
        #[arg(long, value_name = "PUBKEY")]
        key: Option<String>,
        /// Check the folder against this signed manifest (a file, or a skillbake binary)
        /// instead of this binary's own.
        #[arg(long, value_name = "FILE")]
        manifest: Option<std::path::PathBuf>,
    },
    /// Write a new Ed25519 key pair for signing manifests: the secret key to PREFIX.key
    /// (PKCS#8 PEM, readable by its owner only) and the public key to PREFIX.pub.
    Keygen {
        /// Where to write the pair (without extension).
        #[arg(long, value_name = "PREFIX", default_value = "skillbake-signing")]
        out: std::path::PathBuf,
    },
    /// Vendor a pack: copy it from a git repository (a URL or a local path) at a revision into
    /// the skills folder, and record its source, commit, path, licence and the SHA-256 of every
    /// file in the folder's skills.lock (`check --locked` then holds the copy to it).
    Add(vendor::AddArgs),
    /// Move a vendored pack to another revision of its source (default: the one it follows),
    /// rewrite its skills.lock entry, and print `skillbake diff` of the change.
    Update(vendor::UpdateArgs),
    /// Write the exact bytes of an embedded file to stdout.
    Cat {
        /// Skill name (letter case ignored, as in DB-GPT), or NAME@RANGE.
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
        Command::Diff(args) => diff::run(args),
        Command::New(args) => new::run(args),
        Command::Lsp => lsp::run(),
        Command::Explain { code } => explain::run(code.as_deref()),
        Command::List { format } => list::run(format),
        Command::Prompt {
            format,
            budget,
            query: Some(query),
            top,
            bucket,
        } => {
            let _ = budget;
            route::prompt(&format, &query, top as usize, bucket.as_deref())
        }
        Command::Prompt { format, budget, .. } => prompt::run(&format, budget),
        Command::Route {
            request,
            top,
            bucket,
            format,
        } => route::run(&request, top as usize, bucket.as_deref(), &format),
        Command::Tools { format } => tools::run(&format),
        Command::Load {
            format,
            skill_name,
            file_path,
            vars,
        } => load::run(&format, &skill_name, file_path.as_deref(), &vars),
        Command::Cat { skill_name, path } => cat::run(&skill_name, &path),
        Command::Manifest { format, signed } => manifest::run(&format, signed),
        Command::Verify {
            path,
            key,
            manifest,
        } => manifest::verify_command(&path, key.as_deref(), manifest.as_deref()),
        Command::Keygen { out } => manifest::keygen(&out),
        Command::Add(args) => vendor::add(args),
        Command::Update(args) => vendor::update(args),
        Command::Serve(args) => serve::run(*args),
        Command::Run(args) => run::run(args),
        Command::ExecScript(args) => run::exec_script(args),
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
