//! The options of the HTTP server: routing, the allowed hosts and origins, the tokens, and
//! the [`Limits`] on what clients may hold.

use super::tokens::Tokens;
use crate::error::Error;
use std::sync::Arc;
use std::time::Duration;

/// The path of the health endpoint.
pub const HEALTH_PATH: &str = "/healthz";

/// The default path of the MCP endpoint.
pub const MCP_PATH: &str = "/mcp";

/// How the HTTP server checks and routes requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The path of the MCP endpoint ([`MCP_PATH`] by default); must start with `/`.
    pub path: String,
    /// Hosts (`name` or `name:port`) the `Host` header may name. Empty means the loopback names
    /// only (`localhost`, `127.0.0.1`, `::1`); list the names clients use to reach a server
    /// bound to another address.
    pub allowed_hosts: Vec<String>,
    /// Browser origins (`scheme://host:port`, `:*` for any port) allowed to call the MCP
    /// endpoint, with CORS replies. Empty (the default) refuses every request that carries an
    /// `Origin` header.
    pub allowed_origins: Vec<String>,
    /// The bearer tokens of the agents allowed to call the MCP endpoint; `None` (the default)
    /// lets anyone who can reach it call it, as the anonymous agent.
    pub tokens: Option<Arc<Tokens>>,
    /// What a client may hold, and how long a stop waits.
    pub limits: Limits,
}

/// What clients may hold on the server, and how long a graceful stop waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Live sessions in all ([`Limits::DEFAULT_MAX_SESSIONS`]); at the cap a new session evicts
    /// the oldest idle one (no reply open), or gets 503 when all are busy.
    pub max_sessions: usize,
    /// Live sessions of one agent ([`Limits::DEFAULT_MAX_SESSIONS_PER_AGENT`]; without tokens
    /// every client is the one anonymous agent), evicted the same way.
    pub max_sessions_per_agent: usize,
    /// Time a client has to send a request's headers; the connection is closed after it.
    pub header_timeout: Duration,
    /// Time a client has to send a request's body once its headers are in (408 after it).
    pub body_timeout: Duration,
    /// The largest request body (413 above it, told by `Content-Length` before any is read).
    pub max_body_bytes: usize,
    /// How long a stop lets calls in progress finish; then their runs are stopped and they
    /// answer cancelled.
    pub shutdown_grace: Duration,
}

impl Limits {
    /// The default [`Limits::max_sessions`].
    pub const DEFAULT_MAX_SESSIONS: usize = 1024;
    /// The default [`Limits::max_sessions_per_agent`].
    pub const DEFAULT_MAX_SESSIONS_PER_AGENT: usize = 256;
    /// The default [`Limits::header_timeout`].
    pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
    /// The default [`Limits::body_timeout`].
    pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
    /// The default [`Limits::max_body_bytes`]: 4 MiB.
    pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
    /// The default [`Limits::shutdown_grace`].
    pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_sessions: Limits::DEFAULT_MAX_SESSIONS,
            max_sessions_per_agent: Limits::DEFAULT_MAX_SESSIONS_PER_AGENT,
            header_timeout: Limits::DEFAULT_HEADER_TIMEOUT,
            body_timeout: Limits::DEFAULT_BODY_TIMEOUT,
            max_body_bytes: Limits::DEFAULT_MAX_BODY_BYTES,
            shutdown_grace: Limits::DEFAULT_SHUTDOWN_GRACE,
        }
    }
}

impl Options {
    /// Checks the options [`router`](super::router) and [`serve`](super::serve) would refuse:
    /// a path that does not start with `/`, holds anything but letters, digits and `-._~/`
    /// (route syntax such as `{…}` or `*` included), has an empty segment, or is the health
    /// path; a limit of zero.
    pub fn check(&self) -> Result<(), Error> {
        let path = self.path.as_str();
        let plain = path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~/".contains(&b));
        if !path.starts_with('/') || !plain || path.contains("//") || path == HEALTH_PATH {
            return Err(Error::Config(format!(
                "the MCP path must start with `/`, hold only letters, digits and `-._~/` (no \
                 empty segment) and differ from `{HEALTH_PATH}`, not `{path}`"
            )));
        }
        let l = &self.limits;
        let zero = [
            ("the session cap", l.max_sessions == 0),
            ("the per-agent session cap", l.max_sessions_per_agent == 0),
            ("the header timeout", l.header_timeout.is_zero()),
            ("the body timeout", l.body_timeout.is_zero()),
            ("the body size limit", l.max_body_bytes == 0),
        ];
        if let Some((what, _)) = zero.iter().find(|(_, z)| *z) {
            return Err(Error::Config(format!("{what} must be more than 0")));
        }
        Ok(())
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            path: MCP_PATH.to_string(),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            tokens: None,
            limits: Limits::default(),
        }
    }
}
