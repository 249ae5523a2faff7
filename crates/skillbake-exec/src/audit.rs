//! The audit log: one JSON line per call, appended atomically.
//!
//! ```json
//! {"time":"2026-12-01T09:30:03.512Z","skill":"send-email","version":"1.2.0","params_sha256":"…","granted":["smtp"],"used":["smtp"],"outcome":"OK","exit":{"code":0},"duration_ms":84.2,"sandbox":"confined","not_enforced":[],"dry_run":false,"attempts":1,"pid":4242}
//! ```
//!
//! | field | what |
//! |---|---|
//! | `time` | when the call ended, UTC, RFC 3339 with milliseconds |
//! | `skill`, `version` | the skill called (`null` when no skill has the name) |
//! | `params_sha256` | SHA-256 of the parameters as canonical JSON (keys sorted, no spaces), never the parameters themselves |
//! | `granted` | the permissions the policy grants |
//! | `used` | the permissions the pack declares, which are what the run was given |
//! | `outcome` | `OK`, or the error code of the result |
//! | `exit` | `{"code": N}`, `{"signal": N}`, or `null` when nothing ran |
//! | `duration_ms` | wall time of the call |
//! | `sandbox` | `confined`, `partial`, `unconfined`, or `none` when nothing was confined |
//! | `not_enforced` | the guards the sandbox could not enforce (`guard: why`) |
//! | `dry_run`, `attempts`, `pid` | a dry run; starts including retries; the executor's process id |
//!
//! **Atomic appends.** The file is opened with `O_APPEND`; each record is one `write` of one
//! line, made under an exclusive `flock` on the file (other processes appending with skillbake
//! take the same lock) and a mutex (threads of this process). Lines of concurrent calls, from
//! threads or from processes, never interleave.

use crate::outcome::{Exit, Outcome};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::fmt;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// An append-only JSON-lines audit log (see the module documentation). Cheap to clone: clones
/// share the open file.
#[derive(Clone)]
pub struct AuditLog {
    path: PathBuf,
    file: Arc<Mutex<File>>,
}

impl fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuditLog")
            .field("path", &self.path)
            .finish()
    }
}

impl PartialEq for AuditLog {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
    }
}

impl AuditLog {
    /// Opens (creating with mode 0600 when missing) the log at `path` for appending.
    pub fn open(path: impl Into<PathBuf>) -> std::io::Result<Self> {
        let path = path.into();
        let mut options = std::fs::OpenOptions::new();
        options.append(true).create(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let file = options.open(&path)?;
        Ok(AuditLog {
            path,
            file: Arc::new(Mutex::new(file)),
        })
    }

    /// Where the log is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends the record of one call.
    pub(crate) fn record(&self, outcome: &Outcome, params: &Value) -> std::io::Result<()> {
        let mut line = serde_json::to_string(&record(outcome, params, SystemTime::now()))
            .map_err(std::io::Error::other)?;
        line.push('\n');
        let file = self
            .file
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        #[cfg(unix)]
        let _locked = FileLock::exclusive(&file)?;
        // One write call: with O_APPEND the kernel places it at the end as a whole.
        (&*file).write_all(line.as_bytes())
    }
}

/// An exclusive `flock`, released when dropped.
#[cfg(unix)]
struct FileLock<'a>(&'a File);

#[cfg(unix)]
impl<'a> FileLock<'a> {
    fn exclusive(file: &'a File) -> std::io::Result<Self> {
        loop {
            match rustix::fs::flock(file, rustix::fs::FlockOperation::LockExclusive) {
                Ok(()) => return Ok(FileLock(file)),
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }
}

#[cfg(unix)]
impl Drop for FileLock<'_> {
    fn drop(&mut self) {
        let _ = rustix::fs::flock(self.0, rustix::fs::FlockOperation::Unlock);
    }
}

/// The record of one call.
pub(crate) fn record(outcome: &Outcome, params: &Value, time: SystemTime) -> Value {
    let meta = outcome.meta();
    let code = outcome.error().map_or("OK", |e| e.code.as_str());
    json!({
        "time": rfc3339(time),
        "skill": meta.skill,
        "version": meta.version,
        "params_sha256": params_sha256(params),
        "granted": meta.granted,
        "used": meta.declared,
        "outcome": code,
        "exit": match meta.exit {
            Some(Exit::Code(c)) => json!({"code": c}),
            Some(Exit::Signal(s)) => json!({"signal": s}),
            None => Value::Null,
        },
        "duration_ms": (meta.duration.as_secs_f64() * 10_000.0).round() / 10.0,
        "sandbox": meta.confinement.mode(),
        "not_enforced": meta.confinement.not_enforced(),
        "dry_run": meta.dry_run,
        "attempts": meta.attempts,
        "pid": std::process::id(),
    })
}

/// SHA-256 (hex) of `params` as canonical JSON: object keys sorted, no whitespace.
pub fn params_sha256(params: &Value) -> String {
    fn canonical(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                let mut out = Map::new();
                for k in keys {
                    if let Some(x) = m.get(k) {
                        out.insert(k.clone(), canonical(x));
                    }
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
            other => other.clone(),
        }
    }
    let text = serde_json::to_string(&canonical(params)).unwrap_or_default();
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// `2026-12-01T09:30:03.512Z`.
fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, day) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (Howard Hinnant's
/// algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates_and_hashes() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_millis(1_764_581_403_512);
        assert_eq!(rfc3339(t), "2025-12-01T09:30:03.512Z");
        assert_eq!(rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        assert_eq!(civil_from_days(59), (1970, 3, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        // Key order does not change the hash; values do.
        let a = params_sha256(&json!({"to": "a@example.com", "n": [1, {"y": 1, "x": 2}]}));
        let b = params_sha256(&json!({"n": [1, {"x": 2, "y": 1}], "to": "a@example.com"}));
        assert_eq!(a, b);
        assert_ne!(a, params_sha256(&json!({"to": "b@example.com"})));
        assert_eq!(a.len(), 64);
    }
}
