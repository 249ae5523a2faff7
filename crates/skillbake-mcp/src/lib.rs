//! An MCP server for a [`Registry`], built on the official Rust MCP SDK (`rmcp`).
//!
//! Everything is served from the registry's `'static` tables; nothing touches the file system.
//!
//! * **Instructions**: the Agent Skills `<available_skills>` catalog
//!   ([`Registry::catalog`] in [`CatalogFormat::Xml`]).
//! * **Tools**: exactly [`Registry::tools_json`] in [`ToolsFormat::Mcp`] (`load_skill`,
//!   `find_skills`, and one tool per pack with a `schema.json`), plus `list_skills`.
//!   * `find_skills {query, top_k?, bucket?}` routes the request ([`Registry::route_json`]):
//!     a JSON array of the top `top_k` (default 5, at most 50) candidates with their scores,
//!     matched fields, descriptions, `when_to_use`, `when_not_to_use` and parameters.
//!   * `load_skill {skill_name, file_path?}` answers the same bytes as [`Registry::load_skill`]
//!     as one text content; `file_path` defaults to the skill's `SKILL.md` path. `skill_name`
//!     may be `NAME@RANGE` for another embedded version (`send-email@1`, `send-email@=1.4.2`).
//!     The result is an error result (`isError: true`) when the skill or file is not found.
//!   * `list_skills {}` answers a JSON array of `{name, version, versions, description,
//!     location, uri}`: each skill once, at the version an agent gets by name.
//!   * A pack tool, on a server built with [`Server::with_policy`] (`skillbake serve --allow
//!     ...` or `--execute`), **runs** a runnable pack (one with an `entrypoint`) through
//!     [`Executor`]: one text content with the unified result
//!     `{"ok", "data", "error"}`, and `isError: true` exactly when `ok` is false. A server built
//!     with [`Server::new`] (no policy) runs nothing: the tool validates its arguments against
//!     the pack's `schema.json` and answers the pack's instructions (the `load_skill` reply)
//!     followed by a JSON text echoing the validated arguments with `"executed": false` and a
//!     note saying why; so does a pack without an `entrypoint` on any server.
//!
//!   Bad arguments (missing or mistyped, unknown skill, schema violations) give error results
//!   the model can read and correct; an unknown tool is a JSON-RPC `invalid params` error.
//! * **Resources**: `skill://{name}/{path}` for every embedded file (`SKILL.md` included, exactly
//!   as written; the files of a version agents do not get by name under
//!   `skill://{name}@{version}/{path}`, the `@` percent-encoded), with a MIME type from the extension
//!   (`skillbake_format::file_type::mime_type`, the same table that decides how
//!   `load_skill` serves the file); UTF-8 files are served as text, binary files as
//!   base64 blobs. The template `skill://{name}/{path}` is listed too. An unknown URI is a
//!   `resource not found` error.
//!
//! ```no_run
//! /// Serves `registry` (one that `skillbake::include_skills!()` defined) in a tokio runtime,
//! /// until the client closes stdin.
//! async fn run(registry: &'static skillbake::Registry) -> Result<(), skillbake_mcp::Error> {
//!     skillbake_mcp::serve_stdio(registry).await
//! }
//! ```
//!
//! [`Server`] implements `rmcp::ServerHandler`, for other transports.

#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;
mod uri;

pub use uri::{resource_uri, RESOURCE_TEMPLATE, URI_PREFIX};

use base64::Engine as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Resource, ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{QuitReason, RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use skillbake::{CatalogFormat, File, FileKind, Registry, ToolsFormat};
use skillbake_exec::{Executor, Policy};
use skillbake_format::file_type::mime_type;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use uri::parse_uri;

/// Name of the `load_skill` tool.
pub const LOAD_SKILL: &str = "load_skill";

/// Name of the `list_skills` tool.
pub const LIST_SKILLS: &str = "list_skills";

/// Name of the `find_skills` tool.
pub const FIND_SKILLS: &str = "find_skills";

/// Most candidates `find_skills` returns.
pub const FIND_SKILLS_MAX: u64 = 50;

const LIST_SKILLS_DESCRIPTION: &str = "List the embedded skills: a JSON array of {name, version, versions, description, location, uri}. location is the file_path to pass to load_skill; uri is the skill's SKILL.md as an MCP resource; versions lists every embedded version (load one with skill_name NAME@=VERSION).";

const NOT_EXECUTED: &str = "This server was started without an execution policy, so it does not execute scripts (start it with `skillbake serve --execute`, or `--allow PERMISSION` to grant permissions, to run runnable skills). The arguments are valid against the skill's schema.json: carry out the call by following the instructions with them.";

const NOT_RUNNABLE: &str = "This skill has no entrypoint, so there is no script to execute. The arguments are valid against the skill's schema.json: carry out the call by following the instructions with them.";

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

/// Serves `registry` over stdin/stdout until the client closes the connection. Must run inside
/// a tokio runtime with I/O enabled. Nothing but MCP messages is written to stdout.
pub async fn serve_stdio(registry: &'static Registry) -> Result<(), Error> {
    serve(Server::new(registry)?).await
}

/// Serves `server` over stdin/stdout until the client closes the connection (see
/// [`serve_stdio`]); build it with [`Server::with_policy`] to run the packs' scripts.
pub async fn serve(server: Server) -> Result<(), Error> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| Error::Initialize(Box::new(e)))?;
    match running.waiting().await {
        Ok(QuitReason::JoinError(e)) | Err(e) => Err(Error::Serve(Box::new(e))),
        Ok(_) => Ok(()),
    }
}

/// A pack tool: the skill it belongs to and its compiled argument schema.
struct PackTool {
    skill: &'static str,
    validator: jsonschema::Validator,
}

/// The MCP server of one registry (an `rmcp::ServerHandler`). Cloning it is cheap and shares
/// everything (the tools, the compiled schemas, the executor): one per HTTP session.
#[derive(Clone)]
pub struct Server {
    registry: &'static Registry,
    tools: Arc<[Tool]>,
    packs: Arc<HashMap<String, PackTool>>,
    instructions: Arc<str>,
    executor: Option<Arc<Executor<'static>>>,
    /// At most this many runs at once, across every session; `None` is no limit.
    runs: Option<Arc<tokio::sync::Semaphore>>,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("skills", &self.registry.len())
            .field(
                "tools",
                &self
                    .tools
                    .iter()
                    .map(|t| t.name.as_ref())
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Prepares the server: parses the registry's MCP tool definitions and compiles every pack's
    /// `schema.json`. Fails only when the registry's generated data is inconsistent.
    pub fn new(registry: &'static Registry) -> Result<Self, Error> {
        let mut tools: Vec<Tool> = serde_json::from_str(registry.tools_json(ToolsFormat::Mcp))
            .map_err(|e| Error::ToolDefinitions(e.to_string()))?;
        // The built-in tools win over a pack of the same name (tool names must be unique).
        let mut seen_load_skill = false;
        let mut seen_find_skills = false;
        tools.retain(|t| match t.name.as_ref() {
            LOAD_SKILL => !std::mem::replace(&mut seen_load_skill, true),
            FIND_SKILLS => !std::mem::replace(&mut seen_find_skills, true),
            LIST_SKILLS => false,
            _ => true,
        });
        if !seen_load_skill {
            return Err(Error::ToolDefinitions(format!("no `{LOAD_SKILL}` tool")));
        }
        let mut packs = HashMap::new();
        for tool in &tools {
            let name = tool.name.as_ref();
            if name == LOAD_SKILL || name == FIND_SKILLS {
                continue;
            }
            let skill = registry.get_exact(name).ok_or_else(|| {
                Error::ToolDefinitions(format!("tool `{name}` names no embedded skill"))
            })?;
            let schema: Value = match skill.schema_json() {
                Some(text) => serde_json::from_str(text).map_err(|e| Error::Schema {
                    skill: name.to_string(),
                    message: e.to_string(),
                })?,
                None => tool.schema_as_json_value(),
            };
            let validator = jsonschema::validator_for(&schema).map_err(|e| Error::Schema {
                skill: name.to_string(),
                message: e.to_string(),
            })?;
            packs.insert(
                name.to_string(),
                PackTool {
                    skill: skill.name(),
                    validator,
                },
            );
        }
        tools.push(Tool::new(
            LIST_SKILLS,
            LIST_SKILLS_DESCRIPTION,
            match json!({"type": "object", "properties": {}, "additionalProperties": false}) {
                Value::Object(o) => o,
                _ => JsonObject::new(),
            },
        ));
        Ok(Server {
            registry,
            tools: tools.into(),
            packs: Arc::new(packs),
            instructions: registry.catalog(CatalogFormat::Xml, None).text.into(),
            executor: None,
            runs: None,
        })
    }

    /// A server whose pack tools run runnable packs under `policy` (see the module docs).
    pub fn with_policy(registry: &'static Registry, policy: Policy) -> Result<Self, Error> {
        let mut server = Server::new(registry)?;
        server.executor = Some(Arc::new(Executor::new(registry, policy)));
        Ok(server)
    }

    /// Runs at most `n` scripts at once (at least 1), across every client of this server and its
    /// clones; further calls wait for a slot, and their timeout starts when they run.
    pub fn with_run_limit(mut self, n: usize) -> Self {
        self.runs = Some(Arc::new(tokio::sync::Semaphore::new(n.max(1))));
        self
    }

    /// Whether pack tools run scripts.
    pub fn executes(&self) -> bool {
        self.executor.is_some()
    }

    /// The tools this server lists: the registry's MCP tool definitions, then `list_skills`.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// Every resource: one per embedded file of every version of every skill, in name, version
    /// and path order.
    pub fn resources(&self) -> Vec<Resource> {
        let mut out = Vec::new();
        for skill in self.registry.all_versions() {
            let id = resource_name(&skill);
            for file in skill.files() {
                let mut r = Resource::new(
                    resource_uri(&id, file.path()),
                    format!("{id}/{}", file.path()),
                )
                .with_mime_type(mime_type(file.path(), served_kind(&file)))
                .with_size(file.bytes().len() as u64);
                if file.path() == "SKILL.md" {
                    r = r.with_description(skill.description());
                }
                out.push(r);
            }
        }
        out
    }

    /// Reads a `skill://{name}/{path}` resource; `None` when it names no embedded file. The
    /// name may carry a version: `name@1.4.2` is exactly that version, `name@^1` the newest in
    /// the range.
    pub fn read(&self, uri: &str) -> Option<ResourceContents> {
        let (name, path) = parse_uri(uri)?;
        let request = match name.rsplit_once('@') {
            Some((n, v)) if skillbake_format::semver::Version::parse(v).is_ok() => {
                format!("{n}@={v}")
            }
            _ => name,
        };
        let skill = self.registry.get(&request)?;
        let file = skill.file(&path)?;
        Some(contents(uri, file.path(), file.bytes(), served_kind(&file)))
    }

    fn load_skill(&self, args: &JsonObject) -> CallToolResult {
        if let Some(key) = args
            .keys()
            .find(|k| !matches!(k.as_str(), "skill_name" | "file_path"))
        {
            return error_text(format!(
                "Error: unknown argument `{key}`: {LOAD_SKILL} takes skill_name and file_path."
            ));
        }
        let skill_name = match args.get("skill_name") {
            Some(Value::String(s)) => s.as_str(),
            Some(other) => {
                return error_text(format!(
                    "Error: skill_name must be a string, not {}. Skills: {}.",
                    json_type(other),
                    self.names()
                ))
            }
            None => {
                return error_text(format!(
                    "Error: missing required argument `skill_name`. Skills: {}.",
                    self.names()
                ))
            }
        };
        let file_path = match args.get("file_path") {
            Some(Value::String(s)) => Some(s.as_str()),
            None | Some(Value::Null) => None,
            Some(other) => {
                return error_text(format!(
                    "Error: file_path must be a string, not {}.",
                    json_type(other)
                ))
            }
        };
        let file_path = file_path.unwrap_or_else(|| {
            self.registry
                .get(skill_name)
                .map_or("", |s| s.skill_md_path())
        });
        // What `Registry::load_skill` does, keeping the resolution to flag not-found replies.
        let resolution = self.registry.resolve(skill_name, file_path);
        let mut reply = String::new();
        resolution.write_reply(skill_name, file_path, &mut reply);
        if resolution.is_found() {
            CallToolResult::success(vec![ContentBlock::text(reply)])
        } else {
            CallToolResult::error(vec![ContentBlock::text(reply)])
        }
    }

    fn find_skills(&self, args: &JsonObject) -> CallToolResult {
        if let Some(key) = args
            .keys()
            .find(|k| !matches!(k.as_str(), "query" | "top_k" | "bucket"))
        {
            return error_text(format!(
                "Error: unknown argument `{key}`: {FIND_SKILLS} takes `query`, `top_k` and `bucket`."
            ));
        }
        let Some(query) = args.get("query").and_then(Value::as_str) else {
            return error_text(
                "Error: `query` is required: the user's request as a string, e.g. {\"query\": \"send the report to my team\"}.".to_string(),
            );
        };
        let top = match args.get("top_k") {
            None | Some(Value::Null) => 5,
            Some(v) => match v.as_u64() {
                Some(k @ 1..=FIND_SKILLS_MAX) => k as usize,
                _ => {
                    return error_text(format!(
                        "Error: `top_k` must be an integer from 1 to {FIND_SKILLS_MAX}, not {v}."
                    ))
                }
            },
        };
        let bucket = match args.get("bucket") {
            None | Some(Value::Null) => None,
            Some(Value::String(b)) => Some(b.as_str()),
            Some(v) => return error_text(format!("Error: `bucket` must be a string, not {v}.")),
        };
        let opts = skillbake::RouteOptions { top, bucket };
        CallToolResult::success(vec![ContentBlock::text(
            self.registry.route_json(query, opts),
        )])
    }

    fn list_skills(&self, args: &JsonObject) -> CallToolResult {
        if let Some(key) = args.keys().next() {
            return error_text(format!(
                "Error: unknown argument `{key}`: {LIST_SKILLS} takes no arguments."
            ));
        }
        let skills: Vec<Value> = self
            .registry
            .iter()
            .map(|s| {
                json!({
                    "name": s.name(),
                    "version": s.version(),
                    "versions": s.versions().map(|v| v.version()).collect::<Vec<_>>(),
                    "description": s.description(),
                    "location": s.skill_md_path(),
                    "uri": resource_uri(s.name(), "SKILL.md"),
                })
            })
            .collect();
        match serde_json::to_string_pretty(&skills) {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(e) => error_text(format!("Error: {e}")),
        }
    }

    fn pack_tool(&self, tool: &str, pack: &PackTool, args: JsonObject) -> CallToolResult {
        let args = Value::Object(args);
        let problems: Vec<String> = pack
            .validator
            .iter_errors(&args)
            .take(20)
            .map(|e| {
                let at = e.instance_path().as_str();
                let at = if at.is_empty() { "(arguments)" } else { at };
                format!("- {at}: {e}")
            })
            .collect();
        if !problems.is_empty() {
            return error_text(format!(
                "Error: invalid arguments for `{tool}` (see its inputSchema):\n{}",
                problems.join("\n")
            ));
        }
        let Some(skill) = self.registry.get_exact(pack.skill) else {
            return error_text(format!("Error: skill `{}` is not embedded.", pack.skill));
        };
        let instructions = self
            .registry
            .load_skill(skill.name(), skill.skill_md_path());
        let note = if self.executor.is_some() {
            NOT_RUNNABLE
        } else {
            NOT_EXECUTED
        };
        let echo = json!({
            "tool": tool,
            "arguments": args,
            "executed": false,
            "note": note,
            "files": format!("{}{}/", URI_PREFIX, skill.name()),
        });
        match serde_json::to_string_pretty(&echo) {
            Ok(echo) => CallToolResult::success(vec![
                ContentBlock::text(instructions),
                ContentBlock::text(echo),
            ]),
            Err(e) => error_text(format!("Error: {e}")),
        }
    }

    fn names(&self) -> String {
        self.registry.names().collect::<Vec<_>>().join(", ")
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(
            Implementation::new("skillbake", env!("CARGO_PKG_VERSION"))
                .with_description("Agent skill packs compiled into this binary"),
        )
        .with_instructions(self.instructions.to_string())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.unwrap_or_default();
        let result = match request.name.as_ref() {
            LOAD_SKILL => self.load_skill(&args),
            LIST_SKILLS => self.list_skills(&args),
            FIND_SKILLS => self.find_skills(&args),
            name => match self.packs.get(name) {
                Some(pack) => match (&self.executor, runnable(self.registry, pack.skill)) {
                    (Some(executor), true) => {
                        let executor = Arc::clone(executor);
                        let skill = pack.skill;
                        let slot = match &self.runs {
                            Some(runs) => {
                                Some(Arc::clone(runs).acquire_owned().await.map_err(|e| {
                                    McpError::internal_error(format!("the run failed: {e}"), None)
                                })?)
                            }
                            None => None,
                        };
                        // A run blocks for up to its timeout: keep it off the server's thread.
                        // The slot goes with it, so a run whose call was cancelled still
                        // counts until it has ended.
                        let outcome = tokio::task::spawn_blocking(move || {
                            let outcome = executor.execute(skill, Value::Object(args));
                            drop(slot);
                            outcome
                        })
                        .await
                        .map_err(|e| {
                            McpError::internal_error(format!("the run failed: {e}"), None)
                        })?;
                        let text = ContentBlock::text(outcome.to_json());
                        if outcome.ok() {
                            CallToolResult::success(vec![text])
                        } else {
                            CallToolResult::error(vec![text])
                        }
                    }
                    _ => self.pack_tool(name, pack, args),
                },
                None => {
                    let tools: Vec<&str> = self.tools.iter().map(|t| t.name.as_ref()).collect();
                    return Err(McpError::invalid_params(
                        format!("unknown tool `{name}`; tools: {}", tools.join(", ")),
                        None,
                    ));
                }
            },
        };
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(self.resources()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(RESOURCE_TEMPLATE, "skill-file")
                .with_title("A file of an embedded skill")
                .with_description(
                    "{name} is a skill's name, {path} a file's path in its pack: SKILL.md, \
                     scripts/..., references/..., assets/...",
                ),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        match self.read(&request.uri) {
            Some(contents) => Ok(ReadResourceResult::new(vec![contents]).into()),
            None => Err(McpError::resource_not_found(
                format!(
                    "no embedded file at `{}` (expected {RESOURCE_TEMPLATE}; skills: {})",
                    request.uri,
                    self.names()
                ),
                Some(json!({ "uri": request.uri })),
            )),
        }
    }
}

/// Whether the skill has an `entrypoint`.
fn runnable(registry: &Registry, skill: &str) -> bool {
    registry
        .get_exact(skill)
        .is_some_and(|s| s.field_json("entrypoint").is_some())
}

/// The name part of a pack's resource URIs: the skill's name for the version agents get by
/// name, `name@version` for the others.
fn resource_name(skill: &skillbake::Skill<'_>) -> String {
    match skill.version() {
        Some(v) if !skill.is_default() => format!("{}@{v}", skill.name()),
        _ => skill.name().to_string(),
    }
}

fn error_text(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// How a file is served: its kind, binary whenever its bytes are not UTF-8.
fn served_kind(file: &File) -> FileKind {
    match file.text() {
        Some(_) => file.kind(),
        None => FileKind::Binary,
    }
}

/// The contents of a resource: text unless `kind` is binary, else a base64 blob.
fn contents(uri: &str, path: &str, bytes: &[u8], kind: FileKind) -> ResourceContents {
    let mime = mime_type(path, kind);
    match std::str::from_utf8(bytes) {
        Ok(text) if kind != FileKind::Binary => {
            ResourceContents::text(text, uri).with_mime_type(mime)
        }
        _ => ResourceContents::blob(base64::engine::general_purpose::STANDARD.encode(bytes), uri)
            .with_mime_type(mime),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_contents_are_base64_blobs() {
        let bytes = [0u8, 159, 146, 150, b'\n'];
        match contents("skill://x/a.bin", "a.bin", &bytes, FileKind::Binary) {
            ResourceContents::BlobResourceContents {
                blob, mime_type, ..
            } => {
                assert_eq!(blob, "AJ+Slgo=");
                assert_eq!(mime_type.as_deref(), Some("application/octet-stream"));
            }
            other => panic!("expected a blob, got {other:?}"),
        }
        match contents("skill://x/a.md", "a.md", b"# hi\n", FileKind::Markdown) {
            ResourceContents::TextResourceContents {
                text, mime_type, ..
            } => {
                assert_eq!(text, "# hi\n");
                assert_eq!(mime_type.as_deref(), Some("text/markdown"));
            }
            other => panic!("expected text, got {other:?}"),
        }
    }
}
