//! The audit log: one JSON line per call, appended atomically.
//!
//! ```json
//! {"time":"2026-12-01T09:30:03.512Z","skill":"send-email","version":"1.2.0","params_sha256":"…","granted":["smtp"],"used":["smtp"],"outcome":"OK","exit":{"code":0},"duration_ms":84.2,"sandbox":"partial","not_enforced":["udp: UDP to any address and port, for name resolution: …"],"dry_run":false,"attempts":1,"pid":4242}
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
//!
//! **Rotation.** With [`AuditLog::rotate`], a line that would take the file past its size bound
//! first moves the file to `FILE.1` (`FILE.1` to `FILE.2`, and so on; the oldest past the count
//! kept is removed) and starts a new `FILE`: no file grows past the bound (unless one line alone
//! is larger), and at most `keep + 1` files are ever on disk. The rotation is made under the
//! same lock; a process that finds its open file moved aside by another process's rotation
//! reopens `FILE` before it writes, so every line lands in the current file.
//!
//! The writer is shared: the MCP server's call log (`skillbake serve --call-log`) writes its
//! records, [`audit_record`]'s shape with the caller's fields added, through the same type.

use crate::outcome::{Exit, Meta, Outcome};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::fmt;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// An append-only JSON-lines log (see the module documentation), optionally size-bounded with
/// rotation. Cheap to clone: clones share the open file.
#[derive(Clone)]
pub struct AuditLog {
    path: PathBuf,
    file: Arc<Mutex<File>>,
    rotation: Option<Rotation>,
}

/// When a log is rotated: at `max_bytes`, keeping `keep` rotated files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rotation {
    max_bytes: u64,
    keep: u32,
}

impl fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuditLog")
            .field("path", &self.path)
            .field("rotation", &self.rotation)
            .finish()
    }
}

impl PartialEq for AuditLog {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path && self.rotation == other.rotation
    }
}

/// How many rotated files a size-bounded log keeps unless told otherwise.
pub const DEFAULT_LOG_KEEP: u32 = 5;

impl AuditLog {
    /// Opens (creating with mode 0600 when missing) the log at `path` for appending.
    pub fn open(path: impl Into<PathBuf>) -> std::io::Result<Self> {
        let path = path.into();
        let file = open_append(&path)?;
        Ok(AuditLog {
            path,
            file: Arc::new(Mutex::new(file)),
            rotation: None,
        })
    }

    /// Keeps the file under `max_bytes` (at least 1): a line that would take it past the bound
    /// first rotates it, keeping the `keep` most recent rotated files (`FILE.1` the newest;
    /// 0 keeps none). See the module documentation.
    pub fn rotate(mut self, max_bytes: u64, keep: u32) -> Self {
        self.rotation = Some(Rotation {
            max_bytes: max_bytes.max(1),
            keep,
        });
        self
    }

    /// Where the log is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of the `n`th rotated file (`FILE.1` is the newest).
    pub fn rotated_path(&self, n: u32) -> PathBuf {
        rotated(&self.path, n)
    }

    /// Appends the record of one call.
    pub(crate) fn record(&self, outcome: &Outcome, params: &Value) -> std::io::Result<()> {
        let code = outcome.error().map_or("OK", |e| e.code.as_str());
        let hash = params_sha256(params);
        self.append(&Value::Object(audit_record(code, outcome.meta(), &hash)))
    }

    /// Appends `record` as one line (atomically, rotating first when the line would take the
    /// file past its bound).
    pub fn append(&self, record: &Value) -> std::io::Result<()> {
        let mut line = serde_json::to_string(record).map_err(std::io::Error::other)?;
        line.push('\n');
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // Each pass either writes or moves to a newer file; a few passes are only needed when
        // other processes rotate at the same moment, so the bound only guards against a loop.
        for _ in 0..8 {
            #[cfg(unix)]
            let locked = FileLock::exclusive(&file)?;
            if moved_aside(&self.path, &file)? {
                #[cfg(unix)]
                drop(locked);
                *file = open_append(&self.path)?;
                continue;
            }
            if let Some(r) = self.rotation {
                let size = file.metadata()?.len();
                if size > 0 && size + line.len() as u64 > r.max_bytes {
                    shift(&self.path, r.keep)?;
                    #[cfg(unix)]
                    drop(locked);
                    *file = open_append(&self.path)?;
                    continue;
                }
            }
            // One write call: with O_APPEND the kernel places it at the end as a whole.
            return (&*file).write_all(line.as_bytes());
        }
        (&*file).write_all(line.as_bytes())
    }
}

/// Opens `path` for appending, creating it with mode 0600 when missing.
fn open_append(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// `FILE.n`.
fn rotated(path: &Path, n: u32) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

/// Moves `FILE.k` to `FILE.k+1` for the kept ones (removing the oldest) and `FILE` to
/// `FILE.1`; with `keep` 0, removes `FILE`.
fn shift(path: &Path, keep: u32) -> std::io::Result<()> {
    let ignore_missing = |r: std::io::Result<()>| match r {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    };
    if keep == 0 {
        return ignore_missing(std::fs::remove_file(path));
    }
    ignore_missing(std::fs::remove_file(rotated(path, keep)))?;
    for n in (1..keep).rev() {
        ignore_missing(std::fs::rename(rotated(path, n), rotated(path, n + 1)))?;
    }
    ignore_missing(std::fs::rename(path, rotated(path, 1)))
}

/// Whether `file` is no longer the file at `path` (another process rotated it, or it was
/// removed).
#[cfg(unix)]
fn moved_aside(path: &Path, file: &File) -> std::io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let open = file.metadata()?;
    Ok(match std::fs::metadata(path) {
        Ok(now) => (now.dev(), now.ino()) != (open.dev(), open.ino()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Err(e) => return Err(e),
    })
}

#[cfg(not(unix))]
fn moved_aside(_path: &Path, _file: &File) -> std::io::Result<bool> {
    Ok(false)
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

/// The audit record of one call that ended with the outcome `code` (`OK`, or the error code)
/// and `meta`, with parameters hashing to `params_sha256` ([`params_sha256`]), stamped now: the
/// fields of the module documentation, in that order. Other logs of calls (the MCP server's
/// call log) start from it, so that every log of calls has one shape.
pub fn audit_record(code: &str, meta: &Meta, params_sha256: &str) -> Map<String, Value> {
    record(code, meta, params_sha256, SystemTime::now())
}

/// The record of one call, stamped `time`.
fn record(code: &str, meta: &Meta, params_sha256: &str, time: SystemTime) -> Map<String, Value> {
    let value = json!({
        "time": rfc3339(time),
        "skill": meta.skill,
        "version": meta.version,
        "params_sha256": params_sha256,
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
    });
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
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

    fn lines(path: &Path) -> Vec<String> {
        match std::fs::read_to_string(path) {
            Ok(text) => text.lines().map(str::to_string).collect(),
            Err(_) => Vec::new(),
        }
    }

    #[test]
    fn rotation_keeps_every_file_under_the_bound_and_the_newest_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("calls.jsonl");
        // Each line is `{"n":NN}` and a newline: 9 bytes; three fit in 30.
        let log = AuditLog::open(&path).unwrap().rotate(30, 2);
        for n in 10..20 {
            log.append(&json!({ "n": n })).unwrap();
        }
        let current = lines(&path);
        let one = lines(&log.rotated_path(1));
        let two = lines(&log.rotated_path(2));
        assert_eq!(current, [r#"{"n":19}"#]);
        assert_eq!(one, [r#"{"n":16}"#, r#"{"n":17}"#, r#"{"n":18}"#]);
        assert_eq!(two, [r#"{"n":13}"#, r#"{"n":14}"#, r#"{"n":15}"#]);
        assert!(
            !log.rotated_path(3).exists(),
            "only two rotated files are kept"
        );
        for p in [path.clone(), log.rotated_path(1), log.rotated_path(2)] {
            assert!(
                std::fs::metadata(&p).unwrap().len() <= 30,
                "{}",
                p.display()
            );
        }
        // A line larger than the bound still lands, alone in its file.
        let big = "x".repeat(40);
        log.append(&json!({ "big": big })).unwrap();
        assert_eq!(lines(&path).len(), 1);
        assert_eq!(lines(&log.rotated_path(1)), [r#"{"n":19}"#]);
    }

    #[test]
    fn a_log_rotated_by_another_writer_is_reopened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("calls.jsonl");
        // Two writers of one file, as two processes would have: one rotates, the other's open
        // file is then `FILE.1`, and its next line must still go to the new `FILE`.
        let a = AuditLog::open(&path).unwrap().rotate(25, 3);
        let b = AuditLog::open(&path).unwrap().rotate(25, 3);
        a.append(&json!({ "w": "a1" })).unwrap();
        b.append(&json!({ "w": "b1" })).unwrap();
        a.append(&json!({ "w": "a2" })).unwrap();
        b.append(&json!({ "w": "b2" })).unwrap();
        assert_eq!(
            lines(&a.rotated_path(1)),
            [r#"{"w":"a1"}"#, r#"{"w":"b1"}"#]
        );
        assert_eq!(lines(&path), [r#"{"w":"a2"}"#, r#"{"w":"b2"}"#]);
        // Removed from under a writer: the next line recreates it.
        std::fs::remove_file(&path).unwrap();
        a.append(&json!({ "w": "a3" })).unwrap();
        assert_eq!(lines(&path), [r#"{"w":"a3"}"#]);
    }
}
