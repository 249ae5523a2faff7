//! Who is calling: the [`Agent`] a request was authenticated as, for the request handling.

use rmcp::service::{RequestContext, RoleServer};
use std::fmt;
use std::sync::Arc;

/// The caller of a request: the agent its bearer token names (`skillbake serve --http
/// --token-file`), or the anonymous caller of a server without authentication (and of stdio).
///
/// The HTTP transport puts it in every request it hands to a session; [`Agent::of`] reads it
/// in an `rmcp::ServerHandler` method. A session belongs to the agent that opened it: another
/// agent's requests never reach it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Agent {
    name: Arc<str>,
    authenticated: bool,
}

/// The name of the caller of a server without authentication.
pub const ANONYMOUS: &str = "anonymous";

impl Agent {
    /// The caller of a server without authentication, named [`ANONYMOUS`].
    pub fn anonymous() -> Self {
        Agent {
            name: ANONYMOUS.into(),
            authenticated: false,
        }
    }

    /// An agent a token authenticated.
    #[cfg(feature = "http")]
    pub(crate) fn authenticated(name: Arc<str>) -> Self {
        Agent {
            name,
            authenticated: true,
        }
    }

    /// The agent's name, as its token line wrote it ([`ANONYMOUS`] without authentication).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether a token authenticated this agent.
    pub fn is_authenticated(&self) -> bool {
        self.authenticated
    }

    /// The caller of the request `context` belongs to: `None` over stdio and on a transport that
    /// does not authenticate.
    pub fn of(context: &RequestContext<RoleServer>) -> Option<&Agent> {
        if let Some(agent) = context.extensions.get::<Agent>() {
            return Some(agent);
        }
        #[cfg(feature = "http")]
        if let Some(parts) = context.extensions.get::<axum::http::request::Parts>() {
            return parts.extensions.get::<Agent>();
        }
        None
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}
