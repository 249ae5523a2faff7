//! What a run may do and how long it may take: [`Policy`].
//!
//! | setting | default | |
//! |---|---|---|
//! | timeout | the pack's `timeout:`, else 10 s | [`Policy::timeout`] overrides both |
//! | granted permissions | none | [`Policy::allow`]; see `skillbake_format::permission` |
//! | output cap | 1 MiB | stdout above it goes to a file in the output folder; `data` gets its path and a preview |
//! | output limit | 64 MiB | stdout above it stops the script with `OUTPUT_TOO_LARGE` |
//! | output folder | a new private folder under the system's temporary folder, removed again when the run leaves it empty | [`Policy::output_dir`] |
//! | working folder | the output folder | [`Policy::work_dir`] |
//! | retries | 0 | only for packs with `idempotent: true`, on `TIMEOUT` and `EXEC_FAILED` |
//! | cache | `$SKILLBAKE_CACHE_DIR`, else `$XDG_CACHE_HOME/skillbake`, else `~/.cache/skillbake` | [`Policy::cache_dir`] |
//! | interpreters | `python3`, `bash`, `sh`, `node` from `PATH` | [`Policy::interpreter`] |

use crate::audit::AuditLog;
use skillbake_format::interpreter::Interpreter;
use skillbake_format::permission::{self, Set};
use skillbake_format::suggest::{closest, did_you_mean};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// The timeout when neither the policy nor the pack sets one.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest timeout a pack or a policy may set: one day.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(86_400);
/// Default [`Policy::output_cap`]: 1 MiB.
pub const DEFAULT_OUTPUT_CAP: usize = 1 << 20;
/// Default [`Policy::output_limit`]: 64 MiB.
pub const DEFAULT_OUTPUT_LIMIT: u64 = 64 << 20;
/// Characters of a cut output shown in `data.preview`.
pub const PREVIEW_CHARS: usize = 2000;

/// CPU time of each process defaults to the run's timeout, rounded up.
/// Default address space of each process: 2 GiB.
pub const DEFAULT_MEMORY: u64 = 2 << 30;
/// Default size of any one file a script writes: 256 MiB.
pub const DEFAULT_FILE_SIZE: u64 = 256 << 20;
/// Default open files of each process.
pub const DEFAULT_OPEN_FILES: u64 = 1024;
/// Default processes and threads of a run without `subprocess`.
pub const DEFAULT_PROCESSES: u64 = 64;
/// Default processes and threads of a run with `subprocess`.
pub const DEFAULT_PROCESSES_SUBPROCESS: u64 = 512;

/// The permissions whose packs are refused where the sandbox has a gap.
pub const HIGH_RISK: Set = Set::NETWORK
    .union(Set::SMTP)
    .union(Set::FILESYSTEM_WRITE)
    .union(Set::SUBPROCESS);

/// A permission name outside the vocabulary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownPermission {
    /// The name given.
    pub name: String,
    /// The closest known name, if any is close.
    pub suggestion: Option<&'static str>,
}

impl fmt::Display for UnknownPermission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown permission `{}`", self.name)?;
        if let Some(s) = self.suggestion {
            write!(f, "; {}", did_you_mean(s))?;
        }
        let names: Vec<&str> = permission::names().collect();
        write!(f, " The permissions are: {}", names.join(", "))
    }
}

impl std::error::Error for UnknownPermission {}

/// The resource limits of each run (`setrlimit`, through the sandbox); `None` takes the
/// default. Set with [`Policy::limits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ResourceLimits {
    /// CPU seconds of each process (default: the run's timeout, rounded up).
    pub cpu_seconds: Option<u64>,
    /// Address space of each process in bytes (default [`DEFAULT_MEMORY`]).
    pub memory: Option<u64>,
    /// Size of any one file written, in bytes (default [`DEFAULT_FILE_SIZE`]).
    pub file_size: Option<u64>,
    /// Open files of each process (default [`DEFAULT_OPEN_FILES`]).
    pub open_files: Option<u64>,
    /// Processes and threads of the run (default [`DEFAULT_PROCESSES`], or
    /// [`DEFAULT_PROCESSES_SUBPROCESS`] for a pack declaring `subprocess`).
    pub processes: Option<u64>,
}

impl ResourceLimits {
    /// No override: every default.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the CPU limit.
    pub fn cpu_seconds(mut self, v: u64) -> Self {
        self.cpu_seconds = Some(v);
        self
    }

    /// Sets the address-space limit.
    pub fn memory(mut self, bytes: u64) -> Self {
        self.memory = Some(bytes);
        self
    }

    /// Sets the file-size limit.
    pub fn file_size(mut self, bytes: u64) -> Self {
        self.file_size = Some(bytes);
        self
    }

    /// Sets the open-files limit.
    pub fn open_files(mut self, v: u64) -> Self {
        self.open_files = Some(v);
        self
    }

    /// Sets the process limit.
    pub fn processes(mut self, v: u64) -> Self {
        self.processes = Some(v);
        self
    }
}

/// The sandbox part of a [`Policy`].
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct SandboxPolicy {
    pub(crate) allow_unconfined: bool,
    pub(crate) limits: ResourceLimits,
    pub(crate) pass_env: Vec<String>,
    pub(crate) run_as: Option<(u32, u32)>,
    pub(crate) audit: Option<AuditLog>,
}

/// What runs may do. Build one with [`Policy::new`] and the setters; every setter returns the
/// policy, so calls chain.
#[derive(Debug, Clone)]
pub struct Policy {
    pub(crate) timeout: Option<Duration>,
    pub(crate) granted: Vec<&'static str>,
    pub(crate) output_cap: usize,
    pub(crate) output_limit: u64,
    pub(crate) output_dir: Option<PathBuf>,
    pub(crate) work_dir: Option<PathBuf>,
    pub(crate) cache_dir: Option<PathBuf>,
    pub(crate) retries: u32,
    pub(crate) interpreters: BTreeMap<Interpreter, PathBuf>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) cancel: Vec<Arc<AtomicBool>>,
    /// The sandbox's settings (`crate::confine` reads them).
    pub(crate) sandbox: SandboxPolicy,
}

impl Default for Policy {
    fn default() -> Self {
        Policy::new()
    }
}

impl Policy {
    /// The default policy: grants nothing, 10 s unless the pack says otherwise, 1 MiB in band,
    /// no retries.
    pub fn new() -> Self {
        Policy {
            timeout: None,
            granted: Vec::new(),
            output_cap: DEFAULT_OUTPUT_CAP,
            output_limit: DEFAULT_OUTPUT_LIMIT,
            output_dir: None,
            work_dir: None,
            cache_dir: None,
            retries: 0,
            interpreters: BTreeMap::new(),
            env: Vec::new(),
            cancel: Vec::new(),
            sandbox: Default::default(),
        }
    }

    /// Grants the permission `name` (see `skillbake_format::permission`).
    pub fn allow(mut self, name: &str) -> Result<Self, UnknownPermission> {
        let p = permission::lookup(name).ok_or_else(|| UnknownPermission {
            name: name.to_string(),
            suggestion: closest(name, permission::names()),
        })?;
        if !self.granted.contains(&p.name) {
            self.granted.push(p.name);
        }
        Ok(self)
    }

    /// Keeps only the granted permissions named in `keep` (names as [`Policy::granted`] gives
    /// them): a narrower policy for one caller, never a wider one.
    pub fn grant_only<S: AsRef<str>>(mut self, keep: &[S]) -> Self {
        self.granted
            .retain(|g| keep.iter().any(|k| k.as_ref() == *g));
        self
    }

    /// The granted permission names, in the order granted.
    pub fn granted(&self) -> &[&'static str] {
        &self.granted
    }

    pub(crate) fn granted_set(&self) -> Set {
        Set::granted_by(self.granted.iter().copied())
    }

    /// Overrides every pack's timeout (clamped to 1 ms ..= [`MAX_TIMEOUT`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout.clamp(Duration::from_millis(1), MAX_TIMEOUT));
        self
    }

    /// The timeout override, if set.
    pub fn timeout_override(&self) -> Option<Duration> {
        self.timeout
    }

    /// Bytes of stdout kept in the result (at least 1); above it the full output is written to
    /// the output folder and `data` says where.
    pub fn output_cap(mut self, bytes: usize) -> Self {
        self.output_cap = bytes.max(1);
        self
    }

    /// Bytes of stdout after which the script is stopped with `OUTPUT_TOO_LARGE` (at least the
    /// output cap).
    pub fn output_limit(mut self, bytes: u64) -> Self {
        self.output_limit = bytes.max(1);
        self
    }

    /// The folder scripts see as `OUTPUT_DIR`, created when missing (default: a new private
    /// folder per run under the system's temporary folder).
    pub fn output_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.output_dir = Some(dir.into());
        self
    }

    /// The working folder of the script (default: the output folder).
    pub fn work_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.work_dir = Some(dir.into());
        self
    }

    /// Where packs are materialised (default: `$SKILLBAKE_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/skillbake`, else `~/.cache/skillbake`, else a private folder under the
    /// temporary folder).
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// How often a pack marked `idempotent: true` is started again after `TIMEOUT` or
    /// `EXEC_FAILED`. Other packs are never retried.
    pub fn retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }

    /// Runs scripts of `interpreter` with the program at `path` instead of the one on `PATH`.
    pub fn interpreter(mut self, interpreter: Interpreter, path: impl Into<PathBuf>) -> Self {
        self.interpreters.insert(interpreter, path.into());
        self
    }

    /// Stops a running script, with its whole process group, once `flag` is true (set it from a
    /// signal handler, or when the caller goes away); the call then answers `EXEC_FAILED`, and
    /// nothing starts while the flag is set. The flag is looked at every 50 ms. Calling it again
    /// adds a flag: the run stops when any of them is set (one for the whole server, one for
    /// the call whose caller went away).
    pub fn cancel_on(mut self, flag: Arc<AtomicBool>) -> Self {
        self.cancel.push(flag);
        self
    }

    pub(crate) fn cancelled(&self) -> bool {
        any_set(&self.cancel)
    }

    /// Sets an environment variable for every script.
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Accepts running high-risk packs where the sandbox cannot enforce every guard (default:
    /// refused with `PERMISSION_DENIED`). The result's metadata still lists the gaps.
    pub fn allow_unconfined(mut self, yes: bool) -> Self {
        self.sandbox.allow_unconfined = yes;
        self
    }

    /// Overrides the resource limits of runs.
    pub fn limits(mut self, limits: ResourceLimits) -> Self {
        self.sandbox.limits = limits;
        self
    }

    /// Passes the parent's variable `name` (when set) to every script; `PREFIX*` passes every
    /// variable starting with `PREFIX`. Everything not passed through or set with
    /// [`Policy::env`] stays hidden.
    pub fn pass_env(mut self, name: impl Into<String>) -> Self {
        let name = name.into();
        if !self.sandbox.pass_env.contains(&name) {
            self.sandbox.pass_env.push(name);
        }
        self
    }

    /// The unprivileged user and group scripts run as when skillbake runs as root (default
    /// `nobody`, 65534:65534). Root (0) is refused when the run starts.
    pub fn run_as(mut self, uid: u32, gid: u32) -> Self {
        self.sandbox.run_as = Some((uid, gid));
        self
    }

    /// Appends one JSON line per call to `log` (see [`AuditLog`]).
    pub fn audit_log(mut self, log: AuditLog) -> Self {
        self.sandbox.audit = Some(log);
        self
    }

    /// The audit log, if any.
    pub fn audit(&self) -> Option<&AuditLog> {
        self.sandbox.audit.as_ref()
    }

    /// Whether high-risk packs may run where the sandbox has gaps.
    pub fn unconfined_allowed(&self) -> bool {
        self.sandbox.allow_unconfined
    }
}

/// Whether any of the cancel flags is set.
pub(crate) fn any_set(flags: &[Arc<AtomicBool>]) -> bool {
    flags
        .iter()
        .any(|f| f.load(std::sync::atomic::Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_checks_the_vocabulary() {
        let p = Policy::new().allow("smtp").and_then(|p| p.allow("smtp"));
        assert_eq!(p.map(|p| p.granted().to_vec()), Ok(vec!["smtp"]));
        let e = Policy::new().allow("netwrok").unwrap_err();
        assert_eq!(e.suggestion, Some("network"));
        assert!(e.to_string().starts_with(
            "unknown permission `netwrok`; did you mean `network`? The permissions are: "
        ));
        let suggest = |name| Policy::new().allow(name).unwrap_err().suggestion;
        assert_eq!(suggest("filesystem-read"), Some("filesystem:read"));
        assert_eq!(suggest("fs"), None);
        assert_eq!(suggest("sub"), Some("subprocess"));
    }

    #[test]
    fn limits_are_clamped() {
        let p = Policy::new()
            .timeout(Duration::ZERO)
            .output_cap(0)
            .output_limit(0);
        assert_eq!(p.timeout_override(), Some(Duration::from_millis(1)));
        assert_eq!((p.output_cap, p.output_limit), (1, 1));
        let p = Policy::new().timeout(Duration::from_secs(1 << 40));
        assert_eq!(p.timeout_override(), Some(MAX_TIMEOUT));
    }
}
