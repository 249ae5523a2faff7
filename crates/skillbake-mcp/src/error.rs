//! Why the MCP server could not start or stopped with a failure.

use std::fmt;

/// Why the MCP server could not start or stopped with a failure.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The registry's MCP tool definitions are not a JSON array of tools.
    ToolDefinitions(String),
    /// A pack's `schema.json` does not compile as a JSON Schema.
    Schema {
        /// The pack (and tool) name.
        skill: String,
        /// What the JSON Schema compiler reported.
        message: String,
    },
    /// The MCP session did not start: the transport failed or closed before `initialize`.
    Initialize(Box<dyn std::error::Error + Send + Sync>),
    /// The server task failed while serving.
    Serve(Box<dyn std::error::Error + Send + Sync>),
    /// The server's options are invalid (for instance an HTTP path without a leading `/`).
    Config(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::ToolDefinitions(m) => write!(f, "invalid MCP tool definitions: {m}"),
            Error::Config(m) => write!(f, "invalid server options: {m}"),
            Error::Schema { skill, message } => {
                write!(
                    f,
                    "schema.json of skill `{skill}` does not compile: {message}"
                )
            }
            // The cause is the error's `source()`.
            Error::Initialize(_) => f.write_str("the MCP session did not start"),
            Error::Serve(_) => f.write_str("the MCP server failed"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Initialize(e) | Error::Serve(e) => Some(e.as_ref()),
            Error::ToolDefinitions(_) | Error::Schema { .. } | Error::Config(_) => None,
        }
    }
}
