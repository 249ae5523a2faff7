//! Run a skill's script from the binary: parameters checked against the pack's `schema.json`,
//! the permissions it declares granted by a [`Policy`] and enforced by the kernel
//! (`skillbake-sandbox`), a timeout that kills the whole process group, capped output, and one
//! result shape, `{"ok", "data", "error"}`.
//!
//! ```
//! use skillbake_exec::{Executor, Policy, UnknownPermission};
//!
//! /// Runs the `read-file` pack of `registry` (one that `skillbake::include_skills!()` defined).
//! fn read_readme(registry: &skillbake::Registry) -> Result<String, UnknownPermission> {
//!     let policy = Policy::new().allow("filesystem:read")?;
//!     let executor = Executor::new(registry, policy);
//!     let outcome = executor.execute("read-file", serde_json::json!({"path": "README.md"}));
//!     Ok(outcome.to_string()) // {"ok":true,"data":{"path":"/…/README.md",…},"error":null}
//! }
//! ```
//!
//! ## How a pack runs
//!
//! A pack is runnable when its frontmatter names an `entrypoint` (a script of the pack, e.g.
//! `scripts/send_email.py`). The interpreter comes from the shebang or the extension
//! (`skillbake_format::interpreter`: `python3`, `bash`, `sh`, `node`). A call goes:
//!
//! 1. **find** the skill (exact name, then case-insensitive, in Unicode lower case) →
//!    `SKILL_NOT_FOUND`; it must have an entrypoint → `NOT_RUNNABLE`;
//! 2. **check the parameters**: a JSON object, schema defaults applied, valid against
//!    `schema.json` (compiled once per executor and skill) → `INVALID_PARAMS` ([`ParamCheck`]);
//! 3. **check the permissions**: every name in the pack's `permission` list must be granted by
//!    the policy → `PERMISSION_DENIED` (`skillbake_format::permission`);
//! 4. **materialise** the pack into a private cache, verified against the embedded bytes before
//!    every run (module `materialise`);
//! 5. **run** `<interpreter> [shebang args] <script> <params JSON>` in its own process group, the
//!    parameters also on stdin, `OUTPUT_DIR` set to the run's output folder, the working folder
//!    the output folder unless the policy names one; through [`confine()`], the seam where
//!    the sandbox applies; with the timeout (the policy's override, else the pack's `timeout:`,
//!    else 10 s) → `TIMEOUT`, and the output limits → `OUTPUT_TOO_LARGE` (module `spawn`);
//! 6. **read** stdout: a unified result passes through (shape-checked), DB-GPT chunks and other
//!    JSON or text become `data` → `BAD_OUTPUT`, `EXEC_FAILED` (module `output`);
//! 7. **retry** packs marked `idempotent: true` after `TIMEOUT` or `EXEC_FAILED`, as often as
//!    the policy allows; others never.
//!
//! The parameters reach the script as Python's `json.dumps(params)` writes them (ASCII, `", "`
//! and `": "`), the way DB-GPT's `execute_skill_script_file` passes them in `sys.argv[1]`. One
//! argument is limited to 128 KiB by the kernel; larger parameters are refused with
//! `INVALID_PARAMS` (pass a file path instead).
//!
//! A **dry run** ([`Executor::dry_run`]) does steps 1–3 and answers with what would run (command
//! line, folders, environment names, limits, confinement) under `data`, without running or
//! writing anything. [`Executor::execute_script_file`] is DB-GPT's form
//! (`execute_skill_script_file`), answered with [`dbgpt::reply_for`]. [`Executor::parse_call`]
//! reads a call out of a model's text reply ([`Call`]).
//!
//! An [`Executor`] is `Send + Sync`: share one across threads (every call gets its own process
//! and, unless the policy names one, its own output folder).

#![forbid(unsafe_code)]

mod audit;
mod call;
mod confine;
pub mod dbgpt;
mod exclusive;
mod materialise;
mod outcome;
mod output;
mod params;
mod paths;
mod policy;
mod pyjson;
mod spawn;

pub use audit::{audit_record, params_sha256, AuditLog, DEFAULT_LOG_KEEP};
pub use call::Call;
pub use confine::{confine, Folders};
pub use outcome::{Confinement, ErrorCode, Exit, Failure, Meta, Origin, Outcome, STDERR_KEPT};
pub use params::ParamCheck;
pub use policy::{
    Policy, ResourceLimits, UnknownPermission, DEFAULT_FILE_SIZE, DEFAULT_MEMORY,
    DEFAULT_OPEN_FILES, DEFAULT_OUTPUT_CAP, DEFAULT_OUTPUT_LIMIT, DEFAULT_PROCESSES,
    DEFAULT_PROCESSES_SUBPROCESS, DEFAULT_TIMEOUT, HIGH_RISK, MAX_TIMEOUT, PREVIEW_CHARS,
};
pub use skillbake_format::interpreter::Interpreter;

/// The warning to show on every run while `SKILLBAKE_SANDBOX_DISABLE` switches sandbox
/// mechanisms off in this process (`None` when nothing is switched off): the guards that depend
/// on them are not enforced, and high-risk packs are refused unless running unconfined is
/// accepted.
#[cfg(unix)]
pub fn sandbox_switched_off() -> Option<String> {
    let off = skillbake_sandbox::switched_off();
    (!off.is_empty()).then(|| {
        format!(
            "{}={} switches off {} for every script this process runs: the guards that depend on them are not enforced, and high-risk packs are refused unless --unconfined",
            skillbake_sandbox::DISABLE_VAR,
            off.join(","),
            off.join(", ")
        )
    })
}

/// Without Unix there is no sandbox to switch off.
#[cfg(not(unix))]
pub fn sandbox_switched_off() -> Option<String> {
    None
}

use serde_json::{json, Value};
use skillbake::{LookupError, Registry, Skill};
use skillbake_format::permission::{self, Set};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The longest single argument the kernel passes (Linux's `MAX_ARG_STRLEN`, 128 KiB with its
/// terminating NUL).
pub const MAX_PARAMS_BYTES: usize = 128 * 1024 - 1;

/// Runs the skills of one registry under a default policy.
pub struct Executor<'r> {
    registry: &'r Registry,
    policy: Policy,
    schemas: ParamCheck,
    keys: Vec<OnceLock<String>>,
    /// One lock per skill, for `exclusive: true` packs.
    exclusive: exclusive::Locks,
}

impl std::fmt::Debug for Executor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("skills", &self.registry.len())
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// What a call asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target<'a> {
    /// The pack's entrypoint (`run`).
    Entrypoint,
    /// A script under `scripts/`, named as DB-GPT's `execute_skill_script_file` names it.
    Script(&'a str),
}

/// The frontmatter fields that say how a pack runs.
struct RunFields {
    entrypoint: Option<String>,
    declared: Vec<String>,
    timeout: Option<Duration>,
    idempotent: bool,
}

fn run_fields(skill: &Skill<'_>) -> RunFields {
    let field = |k: &str| {
        skill
            .field_json(k)
            .and_then(|j| serde_json::from_str::<Value>(j).ok())
    };
    let declared = match field("permission") {
        Some(Value::String(s)) => s
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        _ => Vec::new(),
    };
    let timeout = field("timeout")
        .and_then(|v| v.as_f64())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map(|s| Duration::from_secs_f64(s.min(policy::MAX_TIMEOUT.as_secs_f64())));
    RunFields {
        entrypoint: field("entrypoint").and_then(|v| v.as_str().map(str::to_string)),
        declared,
        timeout,
        idempotent: field("idempotent") == Some(Value::Bool(true)),
    }
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Everything a run needs, decided before anything is written.
struct Plan<'r> {
    skill: Skill<'r>,
    script: String,
    interpreter: Interpreter,
    program: PathBuf,
    shebang_args: Vec<String>,
    params: Value,
    params_json: String,
    declared: Set,
    timeout: Duration,
    idempotent: bool,
    key: String,
    cache_root: PathBuf,
    pack_dir: PathBuf,
    output_dir: PathBuf,
    output_given: bool,
    work_dir: PathBuf,
    /// The run's `PATH` and interpreter, found by the first confinement of the call.
    found: confine::Found,
}

impl Plan<'_> {
    fn script_path(&self) -> PathBuf {
        self.pack_dir.join(&self.script)
    }

    fn env(&self, policy: &Policy) -> Vec<(String, String)> {
        let mut env = vec![(
            "OUTPUT_DIR".to_string(),
            self.output_dir.display().to_string(),
        )];
        if self.interpreter == Interpreter::Python {
            // The pack's copy is read-only and verified: no `__pycache__` beside it.
            env.push(("PYTHONDONTWRITEBYTECODE".into(), "1".into()));
        }
        env.extend(policy.env.iter().cloned());
        env
    }

    fn command(&self, policy: &Policy) -> Command {
        let mut c = Command::new(&self.program);
        c.args(&self.shebang_args)
            .arg(self.script_path())
            .arg(&self.params_json)
            .current_dir(&self.work_dir);
        for (k, v) in self.env(policy) {
            c.env(k, v);
        }
        c
    }

    fn folders(&self) -> Folders {
        Folders {
            pack: self.pack_dir.clone(),
            output: self.output_dir.clone(),
            work: self.work_dir.clone(),
        }
    }
}

fn fail(f: Failure, meta: &mut Meta) -> Outcome {
    Outcome::failure(f, std::mem::take(meta))
}

impl<'r> Executor<'r> {
    /// An executor for `registry` with `policy` as the default for every call. Nothing is
    /// compiled or written until a call needs it.
    ///
    /// The sandbox's probe keeps its result in the runs folder (hidden from every run by its
    /// view of the file system), so a process that finds a complete earlier record starts no
    /// probe child (see [`skillbake_sandbox::keep_probe_in`]).
    pub fn new(registry: &'r Registry, policy: Policy) -> Self {
        #[cfg(unix)]
        skillbake_sandbox::keep_probe_in(paths::runs_dir());
        Executor {
            registry,
            policy,
            schemas: ParamCheck::new(registry),
            keys: (0..registry.len()).map(|_| OnceLock::new()).collect(),
            exclusive: exclusive::Locks::new(registry.len()),
        }
    }

    /// The default policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The registry.
    pub fn registry(&self) -> &'r Registry {
        self.registry
    }

    /// Runs the entrypoint of the skill `name` with `params` under the default policy.
    pub fn execute(&self, name: &str, params: Value) -> Outcome {
        self.execute_with(name, params, &self.policy)
    }

    /// Runs the entrypoint of the skill `name` with `params` under `policy` (a per-call
    /// override of the default).
    pub fn execute_with(&self, name: &str, params: Value, policy: &Policy) -> Outcome {
        self.call(name, Target::Entrypoint, params, policy, false)
    }

    /// Checks a call and answers with what would run under `data`, without running or writing
    /// anything.
    pub fn dry_run(&self, name: &str, params: Value) -> Outcome {
        self.dry_run_with(name, params, &self.policy)
    }

    /// [`Executor::dry_run`] under `policy`.
    pub fn dry_run_with(&self, name: &str, params: Value, policy: &Policy) -> Outcome {
        self.call(name, Target::Entrypoint, params, policy, true)
    }

    /// DB-GPT's `execute_skill_script_file(skill_name, script_file_name, args)`: runs
    /// `scripts/<script_file_name>` of the skill with `args` (default `{}`), passed exactly as
    /// given (checked against `schema.json` when the script is the entrypoint). Render the
    /// outcome as DB-GPT's reply with [`dbgpt::reply_for`].
    pub fn execute_script_file(
        &self,
        skill_name: &str,
        script_file_name: &str,
        args: Option<Value>,
    ) -> Outcome {
        self.execute_script_file_with(skill_name, script_file_name, args, &self.policy)
    }

    /// [`Executor::execute_script_file`] under `policy`.
    pub fn execute_script_file_with(
        &self,
        skill_name: &str,
        script_file_name: &str,
        args: Option<Value>,
        policy: &Policy,
    ) -> Outcome {
        let args = args.unwrap_or_else(|| json!({}));
        self.call(
            skill_name,
            Target::Script(script_file_name),
            args,
            policy,
            false,
        )
    }

    /// Finds a `{"skill": ..., "params": {...}}` call in a model's text reply and checks it
    /// (see [`Call`]).
    pub fn parse_call(&self, text: &str) -> Result<Call, Outcome> {
        let invalid = |code: ErrorCode, message: String| {
            Outcome::failure(Failure::new(code, message), Meta::default())
        };
        let Some(found) = call::find(text) else {
            return Err(invalid(
                ErrorCode::InvalidCall,
                format!(
                    "No skill call was found in the reply. Answer with one JSON object such as {{\"skill\": \"<name>\", \"params\": {{...}}}}. The skills are: {}.",
                    self.names()
                ),
            ));
        };
        let Some(name) = found.get("skill").and_then(Value::as_str) else {
            return Err(invalid(
                ErrorCode::InvalidCall,
                format!(
                    "`skill` must be a string naming one of the skills: {}.",
                    self.names()
                ),
            ));
        };
        let params =
            match found.get("params") {
                None | Some(Value::Null) => json!({}),
                Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                    Ok(v @ Value::Object(_)) => v,
                    _ => return Err(invalid(
                        ErrorCode::InvalidParams,
                        "`params` must be a JSON object (it is a string that does not hold one)."
                            .into(),
                    )),
                },
                Some(v) => v.clone(),
            };
        let Some(skill) = self.registry.get(name) else {
            return Err(self.not_found(name, Meta::default()));
        };
        if run_fields(&skill).entrypoint.is_none() {
            return Err(invalid(ErrorCode::NotRunnable, not_runnable(&skill)));
        }
        match self.schemas.check(&skill, params) {
            Ok(params) => Ok(Call {
                skill: skill.name(),
                params,
            }),
            Err(f) => Err(Outcome::failure(f, Meta::default())),
        }
    }

    fn names(&self) -> String {
        self.registry.names().collect::<Vec<_>>().join(", ")
    }

    fn not_found(&self, name: &str, mut meta: Meta) -> Outcome {
        let close = skillbake_format::suggest::closest(name, self.registry.names())
            .map(|n| format!("; {}", skillbake_format::suggest::did_you_mean(n)))
            .unwrap_or_else(|| ".".to_string());
        meta.reply = Some(format!("Skill '{name}' not found"));
        let message = match self.registry.lookup(name) {
            Err(LookupError::NoMatchingVersion(skill)) => {
                let versions: Vec<&str> = skill
                    .versions()
                    .map(|v| v.version().unwrap_or("(none)"))
                    .collect();
                format!(
                    "No embedded version of `{}` matches `{name}`; the versions are {}. Ask for one of them (`{}@={}`), or for `{}` alone to get the version agents get by name.",
                    skill.name(),
                    versions.join(", "),
                    skill.name(),
                    versions.last().copied().unwrap_or("1.0.0"),
                    skill.name(),
                )
            }
            Err(LookupError::InvalidRange(e)) => format!(
                "`{name}` is not a skill name followed by a version range: the text after `@` does not parse ({e}). Write `name`, `name@1`, `name@^1.2` or `name@=1.2.0`."
            ),
            _ => format!(
                "No skill is named `{name}`{close} The skills are: {}.",
                self.names()
            ),
        };
        Outcome::failure(Failure::new(ErrorCode::SkillNotFound, message), meta)
    }

    fn key(&self, skill: &Skill<'_>) -> String {
        match self.keys.get(skill.index()) {
            Some(slot) => slot.get_or_init(|| materialise::key(skill)).clone(),
            None => materialise::key(skill),
        }
    }

    fn call(
        &self,
        name: &str,
        target: Target<'_>,
        params: Value,
        policy: &Policy,
        dry: bool,
    ) -> Outcome {
        let start = Instant::now();
        let mut meta = Meta {
            dry_run: dry,
            granted: policy.granted().iter().map(|s| s.to_string()).collect(),
            ..Meta::default()
        };
        // The audit log records a hash of the parameters as the caller gave them.
        let audited = policy.audit().map(|log| (log, params.clone()));
        let mut outcome = match self.plan(name, target, params, policy, &mut meta) {
            Err(outcome) => outcome,
            Ok(plan) => {
                let mut command = plan.command(policy);
                match confine::confine_found(
                    &mut command,
                    policy,
                    &plan.folders(),
                    plan.declared,
                    plan.timeout,
                    false,
                    &plan.found,
                    Some((&plan.skill, &plan.key)),
                ) {
                    Err(f) => Outcome::failure(f, meta),
                    Ok(confinement) => {
                        meta.confinement = confinement;
                        if dry {
                            let data = describe(&plan, policy, &meta);
                            Outcome::success(data, meta)
                        } else {
                            self.run_serialised(&plan, policy, meta)
                        }
                    }
                }
            }
        };
        outcome.meta_mut().duration = start.elapsed();
        if let Some((log, params)) = audited {
            if let Err(e) = log.record(&outcome, &params) {
                outcome.meta_mut().confinement.audit_error = Some(format!(
                    "the audit record could not be appended to {}: {e}",
                    log.path().display()
                ));
            }
        }
        outcome
    }

    /// [`run`], one at a time for a pack marked `exclusive: true` (see [`exclusive`]).
    fn run_serialised(&self, plan: &Plan<'_>, policy: &Policy, meta: Meta) -> Outcome {
        if !exclusive::is_exclusive(&plan.skill) {
            return run(plan, policy, meta);
        }
        let (_held, lock_error) =
            self.exclusive
                .acquire(plan.skill.index(), plan.skill.name(), &plan.cache_root);
        let mut outcome = run(plan, policy, meta);
        if let Some(e) = lock_error {
            outcome
                .meta_mut()
                .confinement
                .executor_gaps
                .push(format!("exclusive: {e}"));
        }
        outcome
    }

    /// Steps 1–3 and the folders: everything decided, nothing written.
    fn plan(
        &self,
        name: &str,
        target: Target<'_>,
        params: Value,
        policy: &Policy,
        meta: &mut Meta,
    ) -> Result<Plan<'r>, Outcome> {
        let registry: &'r Registry = self.registry;
        let Some(skill) = registry.get(name) else {
            return Err(self.skill_not_found(name, target, meta));
        };
        meta.skill = Some(skill.name());
        meta.version = skill.version();
        let fields = run_fields(&skill);
        meta.declared = fields.declared.clone();
        let (script, validate) =
            choose_script(&skill, &fields, target, meta).map_err(|f| fail(f, meta))?;
        meta.script = Some(script.clone());
        let launch = launcher(&skill, &script).map_err(|f| fail(f, meta))?;
        let (params, params_json) = self
            .checked_params(&skill, target, validate, params)
            .map_err(|f| fail(f, meta))?;
        let needed =
            check_permissions(&skill, &fields.declared, policy).map_err(|f| fail(f, meta))?;
        let program = program_for(policy, &launch, &skill, &script).map_err(|f| fail(f, meta))?;
        let timeout = policy
            .timeout
            .or(fields.timeout)
            .unwrap_or(policy::DEFAULT_TIMEOUT);
        meta.timeout = Some(timeout);
        let folders = self
            .run_folders(policy, &skill)
            .map_err(|f| fail(f, meta))?;
        let interpreter = launch.interpreter;
        let shebang_args = launch.args.iter().map(|s| s.to_string()).collect();
        Ok(Plan {
            skill,
            script,
            interpreter,
            program,
            shebang_args,
            params,
            params_json,
            declared: needed,
            timeout,
            idempotent: fields.idempotent,
            key: folders.key,
            cache_root: folders.cache_root,
            pack_dir: folders.pack_dir,
            output_dir: folders.output_dir,
            output_given: folders.output_given,
            work_dir: folders.work_dir,
            found: confine::Found::default(),
        })
    }

    /// `SKILL_NOT_FOUND` for `name`, with DB-GPT's words for a script call.
    fn skill_not_found(&self, name: &str, target: Target<'_>, meta: &mut Meta) -> Outcome {
        let mut outcome = self.not_found(name, std::mem::take(meta));
        if let Target::Script(requested) = target {
            // DB-GPT 0.8.2 never says `Skill '…' not found` here: its skill folder falls
            // back to SKILLS_DIR/<name>, where the script is then not found.
            outcome.meta_mut().reply = Some(format!(
                "Script file '{}' not found",
                strip_script(requested)
            ));
        }
        outcome
    }

    /// Step 2: the parameters a call of `skill` runs with (checked against the schema when
    /// `validate`: the entrypoint, or DB-GPT naming it), and their JSON as the script gets it.
    fn checked_params(
        &self,
        skill: &Skill<'_>,
        target: Target<'_>,
        validate: bool,
        params: Value,
    ) -> Result<(Value, String), Failure> {
        let params = match (validate, target) {
            (true, Target::Entrypoint) => self.schemas.check(skill, params)?,
            (true, Target::Script(_)) => {
                // DB-GPT passes the arguments as given; they are still checked.
                self.schemas.check(skill, params.clone())?;
                params
            }
            (false, _) if !params.is_object() => {
                return Err(Failure::new(
                    ErrorCode::InvalidParams,
                    format!(
                        "The arguments for `{}` must be a JSON object.",
                        skill.name()
                    ),
                ));
            }
            (false, _) => params,
        };
        let params_json = pyjson::Value::from_json(&params).dumps(true);
        if params_json.len() > MAX_PARAMS_BYTES {
            return Err(Failure::new(
                ErrorCode::InvalidParams,
                format!(
                    "The parameters for `{}` are {} bytes long; one argument may be at most {MAX_PARAMS_BYTES} bytes. Put large content in a file and pass its path.",
                    skill.name(),
                    params_json.len()
                ),
            ));
        }
        Ok((params, params_json))
    }

    /// The cache, the pack's copy in it, the output folder and the working folder of a run.
    fn run_folders(&self, policy: &Policy, skill: &Skill<'_>) -> Result<RunFolders, Failure> {
        let cache_root = absolute(
            &policy
                .cache_dir
                .clone()
                .unwrap_or_else(materialise::default_root),
        );
        let key = self.key(skill);
        let pack_dir = materialise::pack_dir(&cache_root, &key);
        let (output_dir, output_given) = match &policy.output_dir {
            Some(d) => (absolute(d), true),
            None => (
                paths::runs_dir().join(paths::unique(&format!("skillbake-run-{}", skill.name()))),
                false,
            ),
        };
        let work_dir = policy
            .work_dir
            .as_deref()
            .map_or_else(|| output_dir.clone(), absolute);
        if policy.work_dir.is_some() && !work_dir.is_dir() {
            return Err(Failure::new(
                ErrorCode::ExecFailed,
                format!(
                    "The working folder {} does not exist, so `{}` was not started.",
                    work_dir.display(),
                    skill.name()
                ),
            ));
        }
        Ok(RunFolders {
            key,
            cache_root,
            pack_dir,
            output_dir,
            output_given,
            work_dir,
        })
    }
}

/// Where a run's files are (see [`Executor::run_folders`]).
struct RunFolders {
    key: String,
    cache_root: PathBuf,
    pack_dir: PathBuf,
    output_dir: PathBuf,
    output_given: bool,
    work_dir: PathBuf,
}

/// Step 1: the script a call runs, and whether its parameters are checked against the schema
/// (the entrypoint's are). A DB-GPT script call names a file under `scripts/`, never outside.
fn choose_script(
    skill: &Skill<'_>,
    fields: &RunFields,
    target: Target<'_>,
    meta: &mut Meta,
) -> Result<(String, bool), Failure> {
    let requested = match target {
        Target::Entrypoint => {
            return match &fields.entrypoint {
                Some(e) => Ok((e.clone(), true)),
                None => Err(Failure::new(ErrorCode::NotRunnable, not_runnable(skill))),
            }
        }
        Target::Script(requested) => requested,
    };
    let stripped = strip_script(requested);
    let path = format!("scripts/{}", stripped.replace('\\', "/"));
    let safe = !stripped.is_empty()
        && stripped
            .split(['/', '\\'])
            .all(|p| !p.is_empty() && p != "." && p != "..");
    if !safe || skill.file(&path).is_none() {
        let scripts: Vec<&str> = skill
            .files()
            .map(|f| f.path())
            .filter(|p| p.starts_with("scripts/"))
            .collect();
        meta.reply = Some(format!("Script file '{stripped}' not found"));
        let listed = if scripts.is_empty() {
            "none".to_string()
        } else {
            scripts.join(", ")
        };
        return Err(Failure::new(
            ErrorCode::NotRunnable,
            format!(
                "`{}` has no script `{stripped}`. Its scripts: {listed}.",
                skill.name()
            ),
        ));
    }
    let is_entry = fields.entrypoint.as_deref() == Some(path.as_str());
    Ok((path, is_entry))
}

/// The interpreter (and its shebang arguments) that runs `script`, a file of the pack.
fn launcher<'a>(
    skill: &Skill<'_>,
    script: &'a str,
) -> Result<skillbake_format::interpreter::Launch<'a>, Failure> {
    let Some(file) = skill.file(script) else {
        return Err(Failure::new(
            ErrorCode::NotRunnable,
            format!(
                "`{}` names the entrypoint `{script}`, which is not a file of the pack. Rebuild the binary with a pack that passes `skillbake check`.",
                skill.name()
            ),
        ));
    };
    skillbake_format::interpreter::detect(script, file.bytes()).map_err(|_| {
        Failure::new(
            ErrorCode::NotRunnable,
            format!(
                "`{}` cannot be run: no known interpreter runs `{script}` (give it a `#!` line, or a .py, .sh or .js extension).",
                skill.name()
            ),
        )
    })
}

/// The program of `launch`'s interpreter: the policy's, else the one on `PATH`.
fn program_for(
    policy: &Policy,
    launch: &skillbake_format::interpreter::Launch<'_>,
    skill: &Skill<'_>,
    script: &str,
) -> Result<PathBuf, Failure> {
    if let Some(p) = policy.interpreters.get(&launch.interpreter) {
        return Ok(absolute(p));
    }
    paths::on_path(launch.interpreter.program()).ok_or_else(|| {
        Failure::new(
            ErrorCode::ExecFailed,
            format!(
                "`{}` needs `{}` to run `{script}`, and it is not on PATH. Install it, or name the program to use (`Policy::interpreter`).",
                skill.name(),
                launch.interpreter.program()
            ),
        )
    })
}

/// Declared ⊆ granted, or `PERMISSION_DENIED` naming what is missing and how to grant it.
fn check_permissions(
    skill: &Skill<'_>,
    declared: &[String],
    policy: &Policy,
) -> Result<Set, Failure> {
    let mut needed = Set::NONE;
    for name in declared {
        let Some(p) = permission::lookup(name) else {
            return Err(Failure::new(
                ErrorCode::PermissionDenied,
                format!(
                    "`{}` declares the permission `{name}`, which skillbake does not know, so no policy can grant it. The permissions are {}.",
                    skill.name(),
                    permission::names().collect::<Vec<_>>().join(", ")
                ),
            ));
        };
        needed = needed.union(p.needs);
    }
    let granted = policy.granted_set();
    if granted.covers(needed) {
        return Ok(needed);
    }
    let missing = permission::names_for(granted.missing(needed));
    let list = missing
        .iter()
        .map(|m| format!("`{m}`"))
        .collect::<Vec<_>>()
        .join(" and ");
    let flags = missing
        .iter()
        .map(|m| format!("--allow {m}"))
        .collect::<Vec<_>>()
        .join(" ");
    Err(Failure::new(
        ErrorCode::PermissionDenied,
        format!(
            "`{}` needs the permission {list}, which this run does not grant, so it was not started. Grant it explicitly to allow it: `{flags}` on the command line, or `Policy::allow` in the library.",
            skill.name()
        ),
    ))
}

/// A dry run's `data`: what would run.
fn describe(plan: &Plan<'_>, policy: &Policy, meta: &Meta) -> Value {
    // The sandbox's allow-list when it applies, else the inherited environment.
    let mut env: Vec<String> = if meta.confinement.env.is_empty() {
        std::env::vars_os()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .chain(plan.env(policy).into_iter().map(|(k, _)| k))
            .collect()
    } else {
        meta.confinement.env.clone()
    };
    env.sort();
    env.dedup();
    // The sandbox may run another copy of the interpreter (one its user can execute).
    let program = meta
        .confinement
        .program
        .as_deref()
        .unwrap_or(&plan.program)
        .display()
        .to_string();
    let mut command: Vec<String> = vec![program];
    command.extend(plan.shebang_args.iter().cloned());
    command.push(plan.script_path().display().to_string());
    command.push(plan.params_json.clone());
    json!({
        "dry_run": true,
        "skill": plan.skill.name(),
        "version": plan.skill.version(),
        "script": plan.script,
        "interpreter": plan.interpreter.program(),
        "command": command,
        "stdin": plan.params_json,
        "params": plan.params,
        "working_dir": plan.work_dir.display().to_string(),
        "output_dir": plan.output_dir.display().to_string(),
        "output_dir_exists": plan.output_dir.is_dir(),
        "pack_dir": plan.pack_dir.display().to_string(),
        "pack_materialised": plan.pack_dir.is_dir(),
        "env": env,
        "permissions": {"declared": meta.declared, "granted": meta.granted},
        "limits": {
            "timeout_seconds": plan.timeout.as_secs_f64(),
            "output_cap_bytes": policy.output_cap,
            "output_limit_bytes": policy.output_limit.max(policy.output_cap as u64),
            "retries": if plan.idempotent { policy.retries } else { 0 },
            "idempotent": plan.idempotent,
            "not_enforced": RUN_TOTALS_NOT_ENFORCED,
        },
        "sandbox": meta.confinement.to_json(),
    })
}

/// What the limits do not bound, said in every dry run: the sandbox's limits are per
/// process and per file, and no memory or I/O cgroup is created for a run.
const RUN_TOTALS_NOT_ENFORCED: [&str; 2] = [
    "memory_total: the address space is bounded per process (the sandbox's address_space \
     guard), not for the run, which may start as many processes as its processes guard allows",
    "disk_total: the size of each file the run writes is bounded (file_size), not how many \
     files it writes",
];

/// Steps 4–7.
fn run(plan: &Plan<'_>, policy: &Policy, mut meta: Meta) -> Outcome {
    let name = plan.skill.name();
    let materialised = match materialise::ensure(&plan.cache_root, &plan.skill, &plan.key) {
        Ok(m) => m,
        Err(f) => return Outcome::failure(f, meta),
    };
    meta.pack_dir = Some(materialised.dir.clone());
    meta.cache_rewritten = materialised.rewritten;
    if let Err(e) = create_output_dir(&plan.output_dir, plan.output_given) {
        return Outcome::failure(
            Failure::new(
                ErrorCode::ExecFailed,
                format!(
                    "The output folder {} could not be created ({e}), so `{name}` was not started.",
                    plan.output_dir.display()
                ),
            ),
            meta,
        );
    }
    meta.output_dir = Some(plan.output_dir.clone());
    let output_fd = match output_descriptor(&plan.output_dir, plan.output_given, name) {
        Ok(fd) => fd,
        Err(f) => return Outcome::failure(f, meta),
    };
    let before = dbgpt::images(&plan.output_dir);
    let limits = spawn::RunLimits {
        timeout: plan.timeout,
        output_cap: policy.output_cap,
        output_limit: policy.output_limit.max(policy.output_cap as u64),
        output_dir: plan.output_dir.clone(),
        output_fd,
        cancel: policy.cancel.clone(),
    };
    let attempts = if plan.idempotent {
        policy.retries.saturating_add(1)
    } else {
        1
    };
    let mut result = Err(Failure::new(
        ErrorCode::ExecFailed,
        "The script was not run.",
    ));
    let mut raw = outcome::RawRun::default();
    // Whether a process was started (a refused confinement starts none).
    let mut ran = false;
    for attempt in 1..=attempts {
        if policy.cancelled() {
            result = Err(Failure::new(
                ErrorCode::ExecFailed,
                format!("The run of `{name}` was cancelled before it started."),
            ));
            break;
        }
        if attempt > 1 {
            // Check the copy again: the failed attempt may have been an attack on it.
            match materialise::ensure(&plan.cache_root, &plan.skill, &plan.key) {
                Ok(m) => meta.cache_rewritten |= m.rewritten,
                Err(f) => {
                    result = Err(f);
                    break;
                }
            }
        }
        let mut command = plan.command(policy);
        match confine::confine_found(
            &mut command,
            policy,
            &plan.folders(),
            plan.declared,
            plan.timeout,
            true,
            &plan.found,
            Some((&plan.skill, &plan.key)),
        ) {
            Ok(c) => {
                meta.cache_rewritten |= c.view_rewritten;
                meta.confinement = c;
            }
            Err(f) => {
                result = Err(f);
                break;
            }
        }
        raw = spawn::run(command, plan.params_json.clone().into_bytes(), &limits);
        ran = true;
        confine::release(&meta.confinement);
        meta.attempts = attempt;
        result = output::interpret(name, &raw, plan.timeout, limits.output_limit);
        let retry = matches!(
            result.as_ref().err().and_then(Failure::error_code),
            Some(ErrorCode::Timeout | ErrorCode::ExecFailed)
        );
        if !retry {
            break;
        }
    }
    raw.images = dbgpt::images(&plan.output_dir)
        .into_iter()
        .filter(|p| !before.contains(p))
        .collect();
    meta.exit = raw.exit;
    meta.stdout_bytes = raw.stdout_total;
    meta.stderr_bytes = raw.stderr_total;
    meta.output_file = raw.stdout_file.clone();
    meta.raw = ran.then_some(raw);
    if !plan.output_given && is_empty_dir(&plan.output_dir) {
        let _ = std::fs::remove_dir(&plan.output_dir);
        meta.output_dir = None;
    }
    match result {
        Ok(data) => Outcome::success(data, meta),
        Err(f) => Outcome::failure(f, meta),
    }
}

/// The output folder opened once, for what the executor writes there.
#[cfg(unix)]
fn output_descriptor(dir: &Path, given: bool, name: &str) -> Result<Option<spawn::DirFd>, Failure> {
    match confine::output_descriptor(dir, given) {
        Ok(fd) => Ok(Some(std::sync::Arc::new(fd))),
        Err(e) => Err(Failure::new(
            ErrorCode::ExecFailed,
            format!(
                "The output folder {} could not be opened ({e}), so `{name}` was not started. Name a real folder, reached without another user's symbolic link.",
                dir.display()
            ),
        )),
    }
}

#[cfg(not(unix))]
fn output_descriptor(
    _dir: &Path,
    _given: bool,
    _name: &str,
) -> Result<Option<spawn::DirFd>, Failure> {
    Ok(None)
}

/// A script name as DB-GPT's `execute_skill_script_file` reads it: leading `/` and `\` and
/// then one leading `scripts/` (or `scripts\`) removed.
fn strip_script(requested: &str) -> &str {
    let stripped = requested.trim_start_matches(['/', '\\']);
    stripped
        .strip_prefix("scripts/")
        .or_else(|| stripped.strip_prefix("scripts\\"))
        .unwrap_or(stripped)
}

fn not_runnable(skill: &Skill<'_>) -> String {
    format!(
        "`{}` has no entrypoint: it only gives instructions (read them with load_skill). A pack becomes runnable with `entrypoint: scripts/<file>` in its SKILL.md.",
        skill.name()
    )
}

#[cfg(unix)]
fn create_output_dir(dir: &Path, given: bool) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if given && skillbake_sandbox::probe().root {
        // Made on the way by `confine::open_folder`, which follows no other user's link.
        return Ok(());
    }
    if !given {
        crate::paths::make_runs_dir()?;
    }
    let mut b = std::fs::DirBuilder::new();
    b.mode(0o700).recursive(given);
    b.create(dir)
}

#[cfg(not(unix))]
fn create_output_dir(dir: &Path, given: bool) -> std::io::Result<()> {
    if given {
        std::fs::create_dir_all(dir)
    } else {
        crate::paths::make_runs_dir()?;
        std::fs::create_dir(dir)
    }
}

fn is_empty_dir(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn executors_are_shared_across_threads() {
        assert_send_sync::<Executor<'static>>();
        assert_send_sync::<Outcome>();
    }
}
