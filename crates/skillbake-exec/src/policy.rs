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

use skillbake_format::interpreter::Interpreter;
use skillbake_format::permission::{self, Set};
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
            write!(f, " (did you mean `{s}`?)")?;
        }
        let names: Vec<&str> = permission::names().collect();
        write!(f, "; the permissions are {}", names.join(", "))
    }
}

impl std::error::Error for UnknownPermission {}

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
    pub(crate) cancel: Option<Arc<AtomicBool>>,
    /// The sandbox's settings (`super::confine`).
    pub(crate) sandbox: super::confine::SandboxPolicy,
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
            cancel: None,
            sandbox: Default::default(),
        }
    }

    /// Grants the permission `name` (see `skillbake_format::permission`).
    pub fn allow(mut self, name: &str) -> Result<Self, UnknownPermission> {
        let p = permission::lookup(name).ok_or_else(|| UnknownPermission {
            name: name.to_string(),
            suggestion: suggest(name),
        })?;
        if !self.granted.contains(&p.name) {
            self.granted.push(p.name);
        }
        Ok(self)
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
    /// nothing starts while the flag is set. The flag is looked at every 50 ms.
    pub fn cancel_on(mut self, flag: Arc<AtomicBool>) -> Self {
        self.cancel = Some(flag);
        self
    }

    pub(crate) fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Sets an environment variable for every script.
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }
}

/// The known permission closest to `name`, for did-you-mean.
pub(crate) fn suggest(name: &str) -> Option<&'static str> {
    let norm = |s: &str| s.to_ascii_lowercase().replace(['-', '_', '.'], ":");
    let wanted = norm(name);
    permission::names()
        .map(|p| (edit_distance(&wanted, &norm(p)), p))
        .filter(|(d, p)| *d <= 2.max(p.len() / 4))
        .min()
        .map(|(_, p)| p)
        .or_else(|| {
            permission::names().find(|p| !wanted.is_empty() && p.starts_with(wanted.as_str()))
        })
}

/// Levenshtein distance, for did-you-mean.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev.get(j).copied().unwrap_or(0) + usize::from(ca != *cb);
            let del = prev.get(j + 1).copied().unwrap_or(0) + 1;
            let ins = cur.get(j).copied().unwrap_or(0) + 1;
            cur.push(sub.min(del).min(ins));
        }
        prev = cur;
    }
    prev.last().copied().unwrap_or(0)
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
        assert!(e
            .to_string()
            .starts_with("unknown permission `netwrok` (did you mean `network`?)"));
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
