//! The call log: one JSON line per tool call, in the executor's audit-log shape
//! ([`skillbake_exec::audit_record`]) with the caller's fields added, written through the
//! executor's own writer ([`AuditLog`]: atomic appends, size-bounded rotation).
//!
//! ```json
//! {"time":"2026-12-02T15:30:03.512Z","agent":"alice","client":"claude-code","session":"3f7c…","tool":"send-email","skill":"send-email","version":"2.0.0","via":"rollout","params_sha256":"…","granted":["smtp"],"used":["smtp"],"outcome":"OK","exit":{"code":0},"duration_ms":84.2,"bytes_in":61,"bytes_out":412,"sandbox":"partial","not_enforced":["udp: UDP to any address and port, for name resolution: …"],"dry_run":false,"attempts":1,"pid":4242}
//! ```
//!
//! | field | what |
//! |---|---|
//! | `agent` | the agent the bearer token names; `anonymous` without authentication (and over stdio) |
//! | `client` | the client's own name from `initialize` (`clientInfo.name`), as it declared it: never proof of who called |
//! | `session` | the first 32 hex digits of the SHA-256 of the `Mcp-Session-Id` (the id itself is a bearer capability, never logged); `null` over stdio |
//! | `tool` | the tool called |
//! | `skill`, `version`, `via` | the skill and version that served the call and why that version (`default`, `requirement`, `rollout`, `request`), as the reply's `_meta` says; `null` when no skill served it |
//! | `params_sha256` | SHA-256 of the arguments as canonical JSON: never the arguments themselves |
//! | `outcome` | `OK`, or the code: the run's (the executor's or the script's own), `INVALID_PARAMS`, `SKILL_NOT_FOUND`, `FILE_NOT_FOUND`, `RATE_LIMITED`, `UNKNOWN_TOOL` (a JSON-RPC error), `INTERNAL_ERROR` |
//! | `duration_ms` | wall time of the whole call, a wait for a run slot included |
//! | `bytes_in`, `bytes_out` | the arguments as compact JSON; the reply's text contents (UTF-8 bytes) |
//! | `granted` … `pid` | as in the audit log; for a call that ran nothing: `[]`, `null`, `none`, `0` |

use serde_json::{json, Map, Value};
use skillbake_exec::{audit_record, AuditLog, Meta};
use std::path::Path;
use std::time::Duration;

/// A call log (see the module documentation). Cheap to clone: clones share the open file.
#[derive(Debug, Clone)]
pub struct CallLog {
    log: AuditLog,
}

impl CallLog {
    /// A call log written to `log` (open it with [`AuditLog::open`], bound it with
    /// [`AuditLog::rotate`]).
    pub fn new(log: AuditLog) -> Self {
        CallLog { log }
    }

    /// Where the log is.
    pub fn path(&self) -> &Path {
        self.log.path()
    }

    /// Appends the record of `call`.
    pub(crate) fn write(&self, call: &CallEvent) -> std::io::Result<()> {
        self.log.append(&Value::Object(call.record()))
    }
}

/// Who made a tool call, as the transport knows it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Caller {
    /// `clientInfo.name` from `initialize`.
    pub client: Option<String>,
    /// The hashed session id ([`session_hash`]).
    pub session: Option<String>,
    /// Whether the call came over HTTP (else stdio or a caller of [`crate::Server::call`]).
    pub http: bool,
    /// The JSON-RPC request's id, as a string.
    pub request_id: Option<String>,
    /// The W3C trace context the request carried (`_meta`, else the HTTP headers).
    pub traceparent: Option<String>,
    /// The `tracestate` that came with [`Caller::traceparent`].
    pub tracestate: Option<String>,
}

/// The first 32 hex digits of the SHA-256 of a session id: a stable, non-reversible name for
/// it (the id itself lets whoever holds it use the session).
pub(crate) fn session_hash(id: &str) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(id.as_bytes())
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One finished tool call, as the call log and the telemetry exporter record it. Holds the
/// hash of the arguments, never the arguments.
#[derive(Debug, Clone)]
pub(crate) struct CallEvent {
    pub tool: String,
    pub agent: String,
    pub caller: Caller,
    pub skill: Option<String>,
    pub version: Option<String>,
    pub via: Option<&'static str>,
    pub params_sha256: String,
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// `OK` or the error code.
    pub outcome: String,
    /// What the run did, when a script ran.
    pub run: Option<Meta>,
    pub duration: Duration,
}

/// What answered a call: the skill and version that served it (and why), the outcome code and
/// the bytes of the reply's text.
#[derive(Debug, Clone, Default)]
pub(crate) struct Answer {
    pub skill: Option<String>,
    pub version: Option<String>,
    pub via: Option<&'static str>,
    /// `OK` or the error code.
    pub outcome: String,
    pub bytes_out: u64,
}

impl CallEvent {
    /// The event of a call of `tool` with `args` by `agent` that `answer` answered.
    pub(crate) fn new(
        tool: &str,
        agent: &str,
        caller: Caller,
        args: &Value,
        answer: Answer,
        run: Option<Meta>,
        duration: Duration,
    ) -> Self {
        CallEvent {
            tool: tool.to_string(),
            agent: agent.to_string(),
            caller,
            skill: answer.skill,
            version: answer.version,
            via: answer.via,
            params_sha256: skillbake_exec::params_sha256(args),
            bytes_in: serde_json::to_string(args).map_or(0, |t| t.len() as u64),
            bytes_out: answer.bytes_out,
            outcome: answer.outcome,
            run,
            duration,
        }
    }

    /// The call log's record: the audit record's fields, the caller's after `time`, `via`
    /// after `version`, the sizes after `duration_ms`.
    pub(crate) fn record(&self) -> Map<String, Value> {
        let mut meta = self.run.clone().unwrap_or_default();
        meta.duration = self.duration;
        let audit = audit_record(&self.outcome, &meta, &self.params_sha256);
        let mut out = Map::new();
        for (key, value) in audit {
            match key.as_str() {
                "skill" => {
                    out.insert("agent".into(), json!(self.agent));
                    out.insert("client".into(), json!(self.caller.client));
                    out.insert("session".into(), json!(self.caller.session));
                    out.insert("tool".into(), json!(self.tool));
                    out.insert(key, json!(self.skill));
                }
                "version" => {
                    out.insert(key, json!(self.version));
                    out.insert("via".into(), json!(self.via));
                }
                "duration_ms" => {
                    out.insert(key, value);
                    out.insert("bytes_in".into(), json!(self.bytes_in));
                    out.insert("bytes_out".into(), json!(self.bytes_out));
                }
                _ => {
                    out.insert(key, value);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_has_the_audit_fields_and_the_callers() {
        let answer = Answer {
            outcome: "SKILL_NOT_FOUND".into(),
            bytes_out: 5,
            ..Answer::default()
        };
        let args = json!({"skill_name": "nope", "secret": "hunter2"});
        let caller = Caller {
            client: Some("inspector".into()),
            session: Some(session_hash("abc")),
            ..Caller::default()
        };
        let event = CallEvent::new(
            "load_skill",
            "alice",
            caller,
            &args,
            answer,
            None,
            Duration::from_micros(1234),
        );
        let record = event.record();
        let keys: Vec<&str> = record.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "time",
                "agent",
                "client",
                "session",
                "tool",
                "skill",
                "version",
                "via",
                "params_sha256",
                "granted",
                "used",
                "outcome",
                "exit",
                "duration_ms",
                "bytes_in",
                "bytes_out",
                "sandbox",
                "not_enforced",
                "dry_run",
                "attempts",
                "pid"
            ]
        );
        assert_eq!(record["outcome"], "SKILL_NOT_FOUND");
        assert_eq!(record["bytes_out"], 5);
        assert_eq!(record["bytes_in"], args.to_string().len());
        assert_eq!(record["duration_ms"], 1.2);
        assert_eq!(record["sandbox"], "none");
        assert_eq!(record["session"].as_str().map(str::len), Some(32));
        assert!(!Value::Object(record).to_string().contains("hunter2"));
    }
}
