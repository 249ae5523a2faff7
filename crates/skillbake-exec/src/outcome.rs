//! The one result shape of every call: [`Outcome`], serialised as exactly
//! `{"ok": true, "data": ..., "error": null}` or
//! `{"ok": false, "data": null, "error": {"code": "...", "message": "..."}}`, with the fixed set of
//! executor codes in [`ErrorCode`] and what happened on the way in [`Meta`]: the
//! [`Confinement`] that applied and, for replies that need it, the [`RawRun`] of the process.
//! The lowest layer of the executor: it names nothing of the others.

use serde::Serialize;
use serde_json::{json, Value};
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

macro_rules! error_codes {
    ($( $(#[$doc:meta])* $variant:ident = $code:literal, $summary:literal; )*) => {
        /// The codes the executor itself answers with. Stable: a code never changes meaning.
        ///
        /// A script that prints its own unified result keeps its own codes (`send-email`'s
        /// `SMTP_CONN_FAILED`, say); [`Failure::origin`] tells the two apart.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $( $(#[$doc])* $variant, )*
        }

        impl ErrorCode {
            /// Every code, in documentation order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),*];

            /// The code as written in results, e.g. `INVALID_PARAMS`.
            pub fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $code,)* }
            }

            /// When the executor answers with it, one sentence.
            pub fn summary(self) -> &'static str {
                match self { $(ErrorCode::$variant => $summary,)* }
            }

            /// Looks a code up by its name.
            pub fn from_name(name: &str) -> Option<ErrorCode> {
                match name { $($code => Some(ErrorCode::$variant),)* _ => None }
            }
        }
    };
}

error_codes! {
    /// No embedded skill has the name, even ignoring case (Unicode lower case).
    SkillNotFound = "SKILL_NOT_FOUND", "No embedded skill has this name (the message lists the skills).";
    /// The skill has no `entrypoint`, or the script named is not one of the pack's scripts.
    NotRunnable = "NOT_RUNNABLE", "The skill has no `entrypoint` (it only has instructions), its entrypoint cannot be run on this system, or the script asked for is not in the pack.";
    /// The parameters do not match `schema.json`.
    InvalidParams = "INVALID_PARAMS", "The parameters are not a JSON object or do not match the pack's `schema.json`; the message lists every violation with its JSON pointer.";
    /// A text-mode reply holds no usable `{"skill": ..., "params": {...}}` call.
    InvalidCall = "INVALID_CALL", "A text reply holds no `{\"skill\": ..., \"params\": {...}}` object (`parse_call`).";
    /// The pack declares a permission the policy does not grant.
    PermissionDenied = "PERMISSION_DENIED", "The pack declares a permission the policy does not grant; the message names it and how to grant it.";
    /// The script did not finish in time; its whole process group was killed.
    Timeout = "TIMEOUT", "The script did not finish within the timeout; its whole process group was killed.";
    /// The script printed more than the output limit; it was stopped.
    OutputTooLarge = "OUTPUT_TOO_LARGE", "The script printed more than the output limit and was stopped; what it printed up to the limit is in the output folder.";
    /// The script could not be started, or exited with a failure status.
    ExecFailed = "EXEC_FAILED", "The script could not be started, or exited with a failure status (the message has the status and the end of its error output).";
    /// The script's output is not UTF-8 text, or a malformed unified result.
    BadOutput = "BAD_OUTPUT", "The script printed bytes that are not UTF-8, or an object with `ok` that is not a well-formed unified result.";
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who produced a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    /// The executor (the code is an [`ErrorCode`]).
    Executor,
    /// The script's own unified result, passed through.
    Script,
}

/// The `error` of a failed outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// `INVALID_PARAMS`, `TIMEOUT`, ... or the script's own code.
    pub code: String,
    /// A sentence a model can repeat to a user.
    pub message: String,
    /// Who produced it.
    pub origin: Origin,
}

impl Failure {
    /// A failure of the executor.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Failure {
            code: code.as_str().to_string(),
            message: message.into(),
            origin: Origin::Executor,
        }
    }

    /// The executor code, when the executor produced this failure.
    pub fn error_code(&self) -> Option<ErrorCode> {
        match self.origin {
            Origin::Executor => ErrorCode::from_name(&self.code),
            Origin::Script => None,
        }
    }
}

/// How the script's process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Exit {
    /// It exited with this status.
    Code(i32),
    /// It was killed by this signal.
    Signal(i32),
}

impl Exit {
    /// Whether it exited with status 0.
    pub fn success(self) -> bool {
        self == Exit::Code(0)
    }

    /// The number DB-GPT prints after `Exit code:` (Python's `returncode`: negative signal
    /// numbers for killed processes).
    pub fn returncode(self) -> i32 {
        match self {
            Exit::Code(c) => c,
            Exit::Signal(s) => -s,
        }
    }
}

/// What happened on the way to an outcome. Not part of the result shape: the CLI prints it on
/// stderr with `--verbose`, an audit log records it.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Meta {
    /// The registered name of the skill, once found.
    pub skill: Option<&'static str>,
    /// Its `version`.
    pub version: Option<&'static str>,
    /// The script run, relative to the pack.
    pub script: Option<String>,
    /// Whether this was a dry run (nothing was run or written).
    pub dry_run: bool,
    /// How many times the script was started (retries included).
    pub attempts: u32,
    /// Wall time of the call.
    pub duration: Duration,
    /// The timeout that applied.
    pub timeout: Option<Duration>,
    /// How the (last) process ended.
    pub exit: Option<Exit>,
    /// Bytes the script printed on stdout and stderr.
    pub stdout_bytes: u64,
    /// See [`Meta::stdout_bytes`].
    pub stderr_bytes: u64,
    /// The run's output folder (`OUTPUT_DIR`), when one was made or given.
    pub output_dir: Option<PathBuf>,
    /// Where the full stdout went when it was larger than the output cap.
    pub output_file: Option<PathBuf>,
    /// The materialised copy of the pack that ran.
    pub pack_dir: Option<PathBuf>,
    /// Whether the materialised copy (or, as root, the copy the script's user reads) was found
    /// modified and written again before the run.
    pub cache_rewritten: bool,
    /// Permissions the pack declares.
    pub declared: Vec<String>,
    /// Permissions the policy grants.
    pub granted: Vec<String>,
    /// The confinement that applied (or would apply, for a dry run).
    pub confinement: Confinement,
    /// What the script printed, for replies that need it (DB-GPT's chunks).
    pub(crate) raw: Option<RawRun>,
    /// DB-GPT's own words for a failure before anything ran, where DB-GPT has them.
    pub(crate) reply: Option<String>,
}

impl Meta {
    /// The metadata as a JSON object (for logs and `--verbose`).
    pub fn to_json(&self) -> Value {
        let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
        json!({
            "skill": self.skill,
            "version": self.version,
            "script": self.script,
            "dry_run": self.dry_run,
            "attempts": self.attempts,
            "duration_ms": self.duration.as_secs_f64() * 1000.0,
            "timeout_seconds": self.timeout.map(|t| t.as_secs_f64()),
            "exit": match self.exit {
                Some(Exit::Code(c)) => json!({"code": c}),
                Some(Exit::Signal(s)) => json!({"signal": s}),
                None => Value::Null,
            },
            "stdout_bytes": self.stdout_bytes,
            "stderr_bytes": self.stderr_bytes,
            "output_dir": path(&self.output_dir),
            "output_file": path(&self.output_file),
            "pack_dir": path(&self.pack_dir),
            "cache_rewritten": self.cache_rewritten,
            "permissions": {"declared": self.declared, "granted": self.granted},
            "sandbox": self.confinement.to_json(),
        })
    }
}

/// Bytes of stderr a run keeps (the end of it).
pub const STDERR_KEPT: usize = 64 << 10;

/// What a process did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct RawRun {
    /// The first `output_cap` bytes of stdout.
    pub stdout: Vec<u8>,
    pub stdout_total: u64,
    /// The whole stdout, when it was larger than the cap.
    pub stdout_file: Option<PathBuf>,
    /// The last [`STDERR_KEPT`] bytes of stderr.
    pub stderr: Vec<u8>,
    pub stderr_total: u64,
    pub exit: Option<Exit>,
    pub timed_out: bool,
    /// Stopped because the policy's cancel flag was set.
    pub cancelled: bool,
    pub too_large: bool,
    /// Why the process could not be started (or its output not be stored).
    pub error: Option<String>,
    pub duration: Duration,
    /// Image files the run added to the output folder (DB-GPT's `image` chunks).
    pub images: Vec<PathBuf>,
}

impl RawRun {
    pub(crate) fn stderr_cut(&self) -> bool {
        self.stderr_total > self.stderr.len() as u64
    }
}

/// The limits the executor enforces itself, whatever the sandbox does.
const EXECUTOR_GUARDS: [&str; 2] = [
    "timeout: the process group is killed",
    "output: capped, then stopped",
];

/// What confinement applied to a run (or would, for a dry run): the sandbox's own report,
/// typed, and what the executor adds to it. [`Confinement::to_json`] is the result metadata's
/// `sandbox` object.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Confinement {
    /// What the sandbox installed on the command (or would), as it reports it; `None` when no
    /// sandbox applied (nothing was started yet, or the call was refused before).
    #[cfg(unix)]
    pub applied: Option<skillbake_sandbox::Applied>,
    /// The program that runs: the interpreter, or the copy of it the script's user can execute.
    pub program: Option<PathBuf>,
    /// The names of the environment variables the script gets.
    pub env: Vec<String>,
    /// The permissions the run was given: the ones its pack declares.
    pub permissions_used: Vec<&'static str>,
    /// Whether the policy accepts running high-risk packs where the sandbox has gaps.
    pub unconfined_allowed: bool,
    /// Guards of the executor's own that did not hold, `guard: why` (an `exclusive: true`
    /// pack whose lock file could not be taken).
    pub executor_gaps: Vec<String>,
    /// Why the audit record of the call could not be written, if it could not.
    pub audit_error: Option<String>,
    /// The readable copy of the pack made for an unprivileged user for this run only, removed
    /// after it (a copy shared by the runs of the pack is not).
    pub(crate) pack_view: Option<PathBuf>,
    /// Whether the shared readable copy was found modified and written again before the run.
    pub(crate) view_rewritten: bool,
    /// The run's private home folder (`HOME`, `TMPDIR`), removed after the run.
    pub(crate) home: Option<PathBuf>,
}

/// [`Confinement::to_json`]'s object, serialised by derive (the field order is the key order);
/// the sandbox's fields are there when a sandbox applied.
#[derive(Serialize)]
struct ConfinementJson<'a> {
    mode: &'static str,
    enforced: Vec<String>,
    not_enforced: Vec<String>,
    env: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    program: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    uid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    gid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    landlock_abi: Option<Option<u32>>,
    #[cfg(unix)]
    #[serde(skip_serializing_if = "Option::is_none")]
    mechanisms: Option<Vec<skillbake_sandbox::Mechanism>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    permissions_used: Option<&'a [&'static str]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unconfined_allowed: Option<bool>,
    #[cfg(unix)]
    #[serde(skip_serializing_if = "Option::is_none")]
    guards: Option<&'a [skillbake_sandbox::Control]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    audit_error: Option<&'a str>,
}

impl Confinement {
    /// `"confined"` (every guard enforced), `"partial"` (see [`Confinement::not_enforced`]),
    /// `"unconfined"` (no kernel mechanism, or no sandbox on this system), or `"none"` when no
    /// sandbox applied.
    pub fn mode(&self) -> &'static str {
        #[cfg(unix)]
        return self.applied.as_ref().map_or("none", |a| a.mode.as_str());
        #[cfg(not(unix))]
        return if self.program.is_some() {
            "unconfined"
        } else {
            "none"
        };
    }

    /// Guards and limits that are enforced, `guard: what`: the sandbox's, then the executor's
    /// own (the timeout, the output limits).
    pub fn enforced(&self) -> Vec<String> {
        let mut out = self.lines(true);
        if self.mode() != "none" {
            out.extend(EXECUTOR_GUARDS.iter().map(|s| s.to_string()));
        }
        out
    }

    /// Guards the policy asks for that nothing enforces on this system, `guard: why`.
    pub fn not_enforced(&self) -> Vec<String> {
        #[cfg(not(unix))]
        let mut out = if self.mode() != "none" {
            vec!["everything: no sandbox on this system".to_string()]
        } else {
            Vec::new()
        };
        #[cfg(unix)]
        let mut out = self.lines(false);
        out.extend(self.executor_gaps.iter().cloned());
        out
    }

    /// The sandbox's controls that are enforced (or, with `enforced` false, partial or not
    /// enforced) as `guard: detail` lines.
    fn lines(&self, enforced: bool) -> Vec<String> {
        #[cfg(unix)]
        {
            use skillbake_sandbox::State;
            let Some(applied) = &self.applied else {
                return Vec::new();
            };
            applied
                .controls
                .iter()
                .filter(|c| match c.state {
                    State::Enforced => enforced,
                    State::Partial | State::NotEnforced => !enforced,
                    State::Allowed | State::Unlimited => false,
                })
                .map(|c| format!("{}: {}", c.guard, c.detail))
                .collect()
        }
        #[cfg(not(unix))]
        {
            let _ = enforced;
            Vec::new()
        }
    }

    /// As a JSON object: `{"mode", "enforced", "not_enforced", "env"}`, then the program, the
    /// sandbox user, the Landlock ABI, the mechanisms, the permissions used, whether running
    /// unconfined is allowed and every guard with its state, mechanisms and detail.
    pub fn to_json(&self) -> Value {
        #[cfg(unix)]
        let applied = self.applied.as_ref();
        #[cfg(not(unix))]
        let applied: Option<&()> = None;
        let ran = applied.is_some();
        let view = ConfinementJson {
            mode: self.mode(),
            enforced: self.enforced(),
            not_enforced: self.not_enforced(),
            env: &self.env,
            program: ran
                .then(|| self.program.as_ref().map(|p| p.display().to_string()))
                .flatten(),
            #[cfg(unix)]
            uid: applied.map(|a| a.uid),
            #[cfg(unix)]
            gid: applied.map(|a| a.gid),
            #[cfg(unix)]
            landlock_abi: applied.map(|a| a.landlock_abi),
            #[cfg(not(unix))]
            uid: None,
            #[cfg(not(unix))]
            gid: None,
            #[cfg(not(unix))]
            landlock_abi: None,
            #[cfg(unix)]
            mechanisms: applied.map(|a| a.mechanisms()),
            permissions_used: ran.then_some(self.permissions_used.as_slice()),
            unconfined_allowed: ran.then_some(self.unconfined_allowed),
            #[cfg(unix)]
            guards: applied.map(|a| a.controls.as_slice()),
            audit_error: self.audit_error.as_deref(),
        };
        serde_json::to_value(view).unwrap_or(Value::Null)
    }
}

/// The result of a call: `ok` with `data`, or not `ok` with an `error`.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    result: Result<Value, Failure>,
    meta: Box<Meta>,
}

impl Outcome {
    /// A success.
    pub fn success(data: Value, meta: Meta) -> Self {
        Outcome {
            result: Ok(data),
            meta: Box::new(meta),
        }
    }

    /// A failure.
    pub fn failure(error: Failure, meta: Meta) -> Self {
        Outcome {
            result: Err(error),
            meta: Box::new(meta),
        }
    }

    /// `ok`.
    pub fn ok(&self) -> bool {
        self.result.is_ok()
    }

    /// `data` of a success.
    pub fn data(&self) -> Option<&Value> {
        self.result.as_ref().ok()
    }

    /// `error` of a failure.
    pub fn error(&self) -> Option<&Failure> {
        self.result.as_ref().err()
    }

    /// The executor's code of a failure it produced.
    pub fn error_code(&self) -> Option<ErrorCode> {
        self.error().and_then(Failure::error_code)
    }

    /// What happened on the way.
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    pub(crate) fn meta_mut(&mut self) -> &mut Meta {
        &mut self.meta
    }

    /// The result as a JSON value with the keys `ok`, `data`, `error` in this order.
    pub fn to_value(&self) -> Value {
        match &self.result {
            Ok(data) => json!({"ok": true, "data": data, "error": null}),
            Err(e) => json!({
                "ok": false,
                "data": null,
                "error": {"code": e.code, "message": e.message},
            }),
        }
    }

    /// The result as compact JSON on one line:
    /// `{"ok":true,"data":...,"error":null}` or
    /// `{"ok":false,"data":null,"error":{"code":"...","message":"..."}}`.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"ok\":");
        match &self.result {
            Ok(data) => {
                out.push_str("true,\"data\":");
                out.push_str(&data.to_string());
                out.push_str(",\"error\":null}");
            }
            Err(e) => {
                out.push_str("false,\"data\":null,\"error\":{\"code\":");
                out.push_str(&Value::from(e.code.as_str()).to_string());
                out.push_str(",\"message\":");
                out.push_str(&Value::from(e.message.as_str()).to_string());
                out.push_str("}}");
            }
        }
        out
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_to_exactly_the_unified_shape() {
        let ok = Outcome::success(json!({"b": 1, "a": [true]}), Meta::default());
        assert_eq!(
            ok.to_json(),
            r#"{"ok":true,"data":{"b":1,"a":[true]},"error":null}"#
        );
        assert_eq!(
            serde_json::to_string(&ok.to_value()).unwrap_or_default(),
            ok.to_json()
        );
        let bad = Outcome::failure(
            Failure::new(ErrorCode::Timeout, "it took \"long\""),
            Meta::default(),
        );
        assert_eq!(
            bad.to_json(),
            r#"{"ok":false,"data":null,"error":{"code":"TIMEOUT","message":"it took \"long\""}}"#
        );
        assert_eq!(bad.error_code(), Some(ErrorCode::Timeout));
        assert!(!bad.ok() && bad.data().is_none());
    }

    #[test]
    fn codes_are_unique_upper_snake_case_and_documented() {
        let mut seen = std::collections::BTreeSet::new();
        for &c in ErrorCode::ALL {
            assert!(seen.insert(c.as_str()));
            assert!(c
                .as_str()
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b == b'_'));
            assert_eq!(ErrorCode::from_name(c.as_str()), Some(c));
            assert!(c.summary().ends_with('.'));
        }
    }
}
