//! `skillbake run` and `skillbake exec-script`: run a skill's script from the packs compiled into
//! this binary (see `skillbake_exec`). Stdout carries exactly one JSON object (the unified
//! result, or DB-GPT's chunks); exit 0 only when the result is `ok`.

use super::output::write_stdout;
use anyhow::{bail, Context, Result};
use serde_json::Value;
use skillbake_cli::BUNDLED;
use skillbake_exec::{dbgpt, AuditLog, ErrorCode, Executor, Failure, Meta, Outcome, Policy};
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// A flag that Ctrl-C, SIGTERM and SIGHUP set (instead of ending skillbake), so a running
/// script's process group is killed and the result still printed, or a watch ends cleanly.
pub(super) fn stop_on_signals() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    #[cfg(unix)]
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        // Without the handler the signal keeps its default action: skillbake ends.
        let _ = signal_hook::flag::register(signal, Arc::clone(&flag));
    }
    flag
}

/// Opens `what` (a log of calls) at `path` for appending, rotated at `max_bytes` keeping `keep`
/// rotated files when bounded.
pub(super) fn open_log(
    path: &std::path::Path,
    max_bytes: Option<u64>,
    keep: u32,
    what: &str,
) -> Result<AuditLog> {
    let log =
        AuditLog::open(path).with_context(|| format!("cannot open {what} {}", path.display()))?;
    Ok(match max_bytes {
        Some(0) => bail!("the size bound of {what} must be at least 1 byte"),
        Some(bytes) => log.rotate(bytes, keep),
        None => log,
    })
}

/// The policy flags shared by `run`, `exec-script` and `serve`.
#[derive(Debug, Clone, clap::Args)]
pub struct PolicyArgs {
    /// Grant a permission (repeatable): network, smtp, filesystem:read, filesystem:write,
    /// filesystem, subprocess. Nothing is granted by default.
    #[arg(long = "allow", value_name = "PERM")]
    allow: Vec<String>,
    /// Seconds a run may take, overriding the pack's `timeout` [default: the pack's, else 10].
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// The run's output folder (OUTPUT_DIR), created when missing [default: a new private folder
    /// under the system's temporary folder, removed again when the run leaves it empty].
    #[arg(long, value_name = "DIR")]
    output_dir: Option<PathBuf>,
    /// Retries for packs marked `idempotent: true`, after TIMEOUT or EXEC_FAILED.
    #[arg(long, value_name = "N", default_value_t = 0)]
    retries: u32,
    /// Bytes of stdout kept in the result; above it the whole output goes to a file in the
    /// output folder [default: 1 MiB].
    #[arg(long, value_name = "BYTES")]
    output_cap: Option<usize>,
    /// Bytes of stdout after which the script is stopped with OUTPUT_TOO_LARGE [default: 64 MiB].
    #[arg(long, value_name = "BYTES")]
    output_limit: Option<u64>,
    /// Where packs are materialised [default: $SKILLBAKE_CACHE_DIR, else $XDG_CACHE_HOME/skillbake,
    /// else ~/.cache/skillbake].
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Run high-risk packs (network, smtp, filesystem:write, subprocess) even where the sandbox
    /// cannot enforce every guard on this system; by default they are refused there. The
    /// result's metadata (`meta.sandbox.not_enforced`) still lists what is not enforced.
    #[arg(long)]
    unconfined: bool,
    /// Pass the variable NAME of this environment to the script (repeatable; `PREFIX*` passes
    /// every variable starting with PREFIX). Everything else is hidden from the script.
    #[arg(long = "pass-env", value_name = "NAME")]
    pass_env: Vec<String>,
    /// Set a variable in the script's environment (repeatable).
    #[arg(long = "env", value_name = "NAME=VALUE")]
    env: Vec<String>,
    /// Append one JSON line per call to FILE: time, skill, version, a hash of the parameters,
    /// granted and used permissions, outcome, exit status, duration, sandbox mode.
    #[arg(long = "log", value_name = "FILE")]
    log: Option<PathBuf>,
    /// With --log: rotate the log before it grows past BYTES (FILE.1 is the newest rotated
    /// file) [default: no bound].
    #[arg(long = "log-max-bytes", value_name = "BYTES", requires = "log")]
    log_max_bytes: Option<u64>,
    /// With --log-max-bytes: how many rotated files are kept.
    #[arg(long = "log-keep", value_name = "N", default_value_t = skillbake_exec::DEFAULT_LOG_KEEP, requires = "log_max_bytes")]
    log_keep: u32,
    /// The unprivileged user and group scripts run as when skillbake runs as root
    /// [default: 65534:65534, nobody].
    #[arg(long = "run-as", value_name = "UID:GID")]
    run_as: Option<String>,
}

impl PolicyArgs {
    /// The policy these flags ask for, with `work_dir` as the script's working folder.
    pub fn policy(&self, work_dir: Option<PathBuf>) -> Result<Policy> {
        let mut p = Policy::new();
        for name in &self.allow {
            p = p.allow(name).map_err(anyhow::Error::msg)?;
        }
        if let Some(t) = self.timeout {
            if !(t > 0.0 && t <= 86_400.0) {
                bail!("--timeout must be a number of seconds above 0 and at most 86400, not {t}");
            }
            p = p.timeout(Duration::from_secs_f64(t));
        }
        if let Some(d) = &self.output_dir {
            p = p.output_dir(d);
        }
        if let Some(w) = work_dir {
            p = p.work_dir(w);
        }
        if let Some(c) = self.output_cap {
            p = p.output_cap(c);
        }
        if let Some(l) = self.output_limit {
            p = p.output_limit(l);
        }
        if let Some(c) = &self.cache_dir {
            p = p.cache_dir(c);
        }
        p = self.sandbox(p)?;
        Ok(p.retries(self.retries))
    }

    /// The sandbox flags: `--unconfined`, `--pass-env`, `--env`, `--log`, `--run-as`.
    fn sandbox(&self, mut p: Policy) -> Result<Policy> {
        p = p.allow_unconfined(self.unconfined);
        for name in &self.pass_env {
            p = p.pass_env(name);
        }
        for pair in &self.env {
            let Some((name, value)) = pair.split_once('=').filter(|(n, _)| !n.is_empty()) else {
                bail!("--env takes NAME=VALUE, not `{pair}`");
            };
            p = p.env(name, value);
        }
        if let Some(path) = &self.log {
            p = p.audit_log(open_log(
                path,
                self.log_max_bytes,
                self.log_keep,
                "the audit log",
            )?);
        }
        if let Some(id) = &self.run_as {
            let parsed = id
                .split_once(':')
                .and_then(|(u, g)| Some((u.parse::<u32>().ok()?, g.parse::<u32>().ok()?)));
            let Some((uid, gid)) = parsed else {
                bail!("--run-as takes UID:GID as numbers, e.g. 65534:65534, not `{id}`");
            };
            if uid == 0 || gid == 0 {
                bail!("--run-as {id}: scripts never run as root; choose an unprivileged user");
            }
            p = p.run_as(uid, gid);
        }
        Ok(p)
    }

    /// Whether any permission was granted.
    pub fn grants(&self) -> bool {
        !self.allow.is_empty()
    }
}

/// Output of `run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RunFormat {
    /// The unified result: {"ok", "data", "error"}.
    Result,
    /// DB-GPT's chunks, as `execute_skill_script_file` answers.
    Chunks,
}

/// Arguments of `skillbake run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Skill name (exact, else case-insensitive: Unicode lower case, as DB-GPT compares).
    skill_name: String,
    /// The parameters: a JSON object, `@FILE` to read it from a file, or `-` for stdin
    /// [default: {}].
    #[arg(long, value_name = "JSON|@FILE|-")]
    params: Option<String>,
    /// Check the call and print what would run, without running or writing anything.
    #[arg(long)]
    dry_run: bool,
    /// Output shape.
    #[arg(long, value_enum, default_value_t = RunFormat::Result)]
    format: RunFormat,
    /// The script's working folder [default: the current folder].
    #[arg(long, value_name = "DIR")]
    workdir: Option<PathBuf>,
    /// Also print what happened (attempts, exit status, folders, sandbox) as JSON on stderr.
    #[arg(short, long)]
    verbose: bool,
    #[command(flatten)]
    policy: PolicyArgs,
}

/// Arguments of `skillbake exec-script`.
#[derive(Debug, clap::Args)]
pub struct ExecScriptArgs {
    /// Skill name (exact, else case-insensitive: Unicode lower case, as DB-GPT compares).
    skill_name: String,
    /// The script, as DB-GPT names it: `run.py`, `scripts/run.py` or `/scripts/run.py`.
    script_file_name: String,
    /// The arguments: a JSON object, `@FILE` or `-` [default: {}].
    #[arg(long, value_name = "JSON|@FILE|-")]
    args: Option<String>,
    /// The script's working folder [default: the output folder, as DB-GPT].
    #[arg(long, value_name = "DIR")]
    workdir: Option<PathBuf>,
    /// Also print what happened as JSON on stderr.
    #[arg(short, long)]
    verbose: bool,
    #[command(flatten)]
    policy: PolicyArgs,
}

/// Reads `--params`: JSON text, `@FILE` or `-`. A problem is an `INVALID_PARAMS` outcome.
fn read_params(arg: Option<&str>) -> Result<Value, Outcome> {
    let invalid = |message: String| {
        Outcome::failure(
            Failure::new(ErrorCode::InvalidParams, message),
            Meta::default(),
        )
    };
    let (text, from) = match arg {
        None => return Ok(Value::Object(serde_json::Map::new())),
        Some("-") => {
            let mut s = String::new();
            std::io::stdin().read_to_string(&mut s).map_err(|e| {
                invalid(format!("The parameters could not be read from stdin: {e}."))
            })?;
            (s, "stdin".to_string())
        }
        Some(a) if a.starts_with('@') => {
            let path = a.get(1..).unwrap_or("");
            let s = std::fs::read_to_string(path).map_err(|e| {
                invalid(format!(
                    "The parameters could not be read from {path}: {e}."
                ))
            })?;
            (s, path.to_string())
        }
        Some(a) => (a.to_string(), "--params".to_string()),
    };
    serde_json::from_str(&text).map_err(|e| {
        invalid(format!(
            "The parameters in {from} are not valid JSON ({e}); give one JSON object such as {{\"path\": \"notes.txt\"}}."
        ))
    })
}

fn finish(outcome: &Outcome, chunks: bool, verbose: bool) -> ExitCode {
    let mut text = if chunks {
        dbgpt::reply_for(outcome)
    } else {
        outcome.to_json()
    };
    text.push('\n');
    write_stdout(text.as_bytes());
    if verbose {
        eprintln!("{}", outcome.meta().to_json());
    }
    if outcome.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn current_dir() -> Result<PathBuf> {
    std::env::current_dir().context("cannot read the current folder")
}

/// Announces on stderr a sandbox switched off by the environment (on every run it affects).
pub fn warn_switched_off() {
    if let Some(w) = skillbake_exec::sandbox_switched_off() {
        eprintln!("warning: {w}");
    }
}

/// `skillbake run`.
pub fn run(args: RunArgs) -> Result<ExitCode> {
    warn_switched_off();
    let work = match args.workdir {
        Some(w) => w,
        None => current_dir()?,
    };
    let policy = args.policy.policy(Some(work))?.cancel_on(stop_on_signals());
    let chunks = args.format == RunFormat::Chunks;
    let params = match read_params(args.params.as_deref()) {
        Ok(p) => p,
        Err(outcome) => return Ok(finish(&outcome, chunks, args.verbose)),
    };
    let executor = Executor::new(&BUNDLED, policy);
    let outcome = if args.dry_run {
        executor.dry_run(&args.skill_name, params)
    } else {
        executor.execute(&args.skill_name, params)
    };
    Ok(finish(&outcome, chunks, args.verbose))
}

/// `skillbake exec-script`.
pub fn exec_script(args: ExecScriptArgs) -> Result<ExitCode> {
    warn_switched_off();
    let policy = args
        .policy
        .policy(args.workdir)?
        .cancel_on(stop_on_signals());
    let params = match read_params(args.args.as_deref()) {
        Ok(p) => p,
        Err(outcome) => return Ok(finish(&outcome, true, args.verbose)),
    };
    let executor = Executor::new(&BUNDLED, policy);
    let outcome =
        executor.execute_script_file(&args.skill_name, &args.script_file_name, Some(params));
    Ok(finish(&outcome, true, args.verbose))
}
