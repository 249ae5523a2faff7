//! Project automation, run as `cargo xtask <command>` (alias in `.cargo/config.toml`):
//!
//! * `ci` — format check, generated text up to date (`codegen --check`), clippy with
//!   `-D warnings` on the workspace and on every published crate in each of its feature sets,
//!   the test suite (insta snapshots must match; nothing is written), the runtime alone with its
//!   default features, docs without warnings, and the bundled packs;
//! * `check-skills [DIR]...` and `sarif-check` — see [`skills`];
//! * `reproducible` and `bundle --skills DIR --out PATH` — see [`repro`] and [`bundle`];
//! * `dist [--release]` — the PyPI wheel and npm packages, smoke-tested: see [`dist`];
//! * `deploy-check` — the container recipe and the Kubernetes example, linted, validated and
//!   run as a pod would run them: see [`deploy_check`];
//! * `mcp-check` — see [`mcp_check`]; `bench`, `bench exec`, `bench http` and `bench skills` — see [`mod@bench`]; `route-eval` —
//!   see [`route_eval`];
//! * `new-skill NAME [--dir DIR] [--description TEXT] [--runnable python|bash|node]` —
//!   scaffolds a pack that passes `skillbake check` with no warnings (the scaffold of
//!   `skillbake new`, `skillbake_build::scaffold`);
//! * `new-rule CODE --module M --severity S` — see [`new_rule`]; `codegen [--check]` — see
//!   [`codegen`].

#![forbid(unsafe_code)]

mod bench;
mod bundle;
mod codegen;
mod deploy_check;
mod dist;
mod dist_smoke;
mod dry_run;
mod http1;
mod mcp_check;
mod new_rule;
mod repro;
mod route_eval;
mod skills;
mod skills_client;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("new-skill") => new_skill(&args[1..]),
        Some("new-rule") => new_rule::run(&args[1..]),
        Some("codegen") => codegen::run(&args[1..]),
        Some("reproducible") => repro::run(&args[1..]),
        Some("bundle") => bundle::run(&args[1..]),
        Some("bench") => bench::run(&args[1..]),
        Some("check-skills") => skills::check_skills(&root(), &args[1..]),
        Some("sarif-check") => skills::sarif_check(&root()),
        Some("mcp-check") => mcp_check::run(&args[1..]),
        Some("route-eval") => route_eval::run(&args[1..]),
        Some("dist") => dist::run(&args[1..]),
        Some("deploy-check") => deploy_check::run(&args[1..]),
        _ => {
            eprintln!("usage: cargo xtask <ci | new-skill NAME [--dir DIR] [--description TEXT] [--runnable python|bash|node] | new-rule CODE --module M --severity error|warning [--summary TEXT] | codegen [--check] | reproducible [--keep] | bundle --skills DIR --out PATH | check-skills [DIR]... | sarif-check | mcp-check | bench [exec|http|skills] | route-eval --data DIR | dist [--release] | deploy-check>");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// `cargo` arguments that build the release `skillbake` CLI.
pub(crate) const RELEASE_BUILD: [&str; 6] = [
    "build",
    "--release",
    "-p",
    "skillbake-cli",
    "--bin",
    "skillbake",
];

fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root());
    c
}

fn run(step: &str, cmd: &mut Command) -> Result<(), String> {
    eprintln!("\n==> {step}");
    let status = cmd
        .status()
        .map_err(|e| format!("{step}: cannot start: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{step} failed ({status})"))
    }
}

/// Builds the release `skillbake` CLI with the packs of `skills` compiled in
/// (`SKILLBAKE_SKILLS_DIR`), into `target_dir` or the workspace's target folder, and returns the
/// built binary's path. `what` names the build in the step line.
pub(crate) fn build_bundled_skillbake(
    skills: &Path,
    target_dir: Option<&Path>,
    what: &str,
) -> Result<PathBuf, String> {
    let mut cmd = cargo();
    cmd.args(RELEASE_BUILD)
        .env(skillbake_build::SKILLS_DIR_ENV, skills);
    if let Some(t) = target_dir {
        cmd.env("CARGO_TARGET_DIR", t);
    }
    run(
        &format!("cargo build --release -p skillbake-cli --bin skillbake ({what})"),
        &mut cmd,
    )?;
    let target = match target_dir {
        Some(t) => t.to_path_buf(),
        None => std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .map(|t| if t.is_absolute() { t } else { root().join(t) })
            .unwrap_or_else(|| root().join("target")),
    };
    Ok(target
        .join("release")
        .join(format!("skillbake{}", std::env::consts::EXE_SUFFIX)))
}

/// The feature sets of every published crate that `ci` lints on their own.
const FEATURE_SETS: &[(&str, &[&str])] = &[
    ("skillbake", &["", "route", "compress", "testing"]),
    ("skillbake-exec", &[""]),
    ("skillbake-mcp", &["", "http"]),
    ("skillbake-sandbox", &["", "serde"]),
    ("skillbake-format", &[""]),
    ("skillbake-route", &[""]),
    ("skillbake-build", &[""]),
];

fn ci() -> Result<(), String> {
    run(
        "cargo fmt --check",
        cargo().args(["fmt", "--all", "--", "--check"]),
    )?;
    eprintln!("\n==> cargo xtask codegen --check");
    codegen::run(&["--check".to_string()])?;
    run(
        "cargo clippy -D warnings",
        cargo().args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--all-features",
            "--",
            "-D",
            "warnings",
        ]),
    )?;
    run(
        "cargo test",
        cargo()
            .args(["test", "--workspace", "--all-features"])
            .env("INSTA_UPDATE", "no")
            .env_remove("INSTA_FORCE_PASS"),
    )?;
    // Each published crate alone in each of its feature sets, so code that only one feature
    // uses is gated by it (dead code in one feature set is a warning nothing else would show).
    for (krate, features) in FEATURE_SETS {
        for set in *features {
            run(
                &format!("cargo clippy -p {krate} --no-default-features --features '{set}'"),
                cargo().args([
                    "clippy",
                    "-p",
                    krate,
                    "--lib",
                    "--no-default-features",
                    "--features",
                    set,
                    "--",
                    "-D",
                    "warnings",
                ]),
            )?;
        }
    }
    // The runtime as `cargo add skillbake` gets it: default features, nothing else in the build.
    run(
        "runtime only (cargo test -p skillbake)",
        cargo().args(["test", "-p", "skillbake"]),
    )?;
    run(
        "cargo doc -D warnings",
        cargo()
            .args(["doc", "--workspace", "--no-deps", "--all-features"])
            .env("RUSTDOCFLAGS", "-D warnings"),
    )?;
    // The module docs that say where things live link to private items: checked too.
    run(
        "cargo doc --document-private-items -D warnings",
        cargo()
            .args([
                "doc",
                "--workspace",
                "--no-deps",
                "--all-features",
                "--document-private-items",
            ])
            .env("RUSTDOCFLAGS", "-D warnings"),
    )?;
    run(
        "skillbake check skills (bundled packs)",
        cargo().args(["run", "--quiet", "--", "check", "skills"]),
    )?;
    eprintln!("\nci: all checks passed");
    Ok(())
}

fn new_skill(args: &[String]) -> Result<(), String> {
    let mut name: Option<&str> = None;
    let mut dir = root().join("skills");
    let mut description: Option<String> = None;
    let mut runnable = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--dir" => dir = PathBuf::from(it.next().ok_or("--dir needs a value")?),
            "--description" => {
                description = Some(it.next().ok_or("--description needs a value")?.clone())
            }
            "--runnable" => {
                let v = it.next().ok_or("--runnable needs a value")?;
                runnable = Some(
                    skillbake_build::scaffold::Runnable::from_name(v)
                        .ok_or(format!("--runnable takes python, bash or node, not `{v}`"))?,
                );
            }
            s if s.starts_with('-') => return Err(format!("unknown option `{s}`")),
            s if name.is_none() => name = Some(s),
            s => return Err(format!("unexpected argument `{s}`")),
        }
    }
    let name = name.ok_or(NEW_SKILL_USAGE)?;
    // The same scaffold as `skillbake new`.
    let scaffold = skillbake_build::scaffold::Scaffold {
        name: name.to_string(),
        description,
        runnable,
    };
    let pack = scaffold.write(&dir).map_err(|e| e.to_string())?;
    eprintln!(
        "created {} (passes `skillbake check`)",
        pack.join("SKILL.md").display()
    );
    Ok(())
}

const NEW_SKILL_USAGE: &str =
    "usage: cargo xtask new-skill NAME [--dir DIR] [--description TEXT] [--runnable python|bash|node]";
