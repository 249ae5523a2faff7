//! The MCP server of one registry, apart from any transport: its tools, resources and calls in
//! this crate's own types (`crate::handler` adapts them to rmcp's, `crate::stdio` and
//! `crate::http` carry them).

use crate::error::Error;
use crate::skills::{self, file_uri, served_kind, DirEntry, SkillEntry, SkillsPage, Target};
use crate::uri::{resource_uri, skill_root, URI_PREFIX};
use serde_json::{json, Map, Value};
use skillbake::{CatalogFormat, File, FileKind, Registry, RouteOptions, Skill, ToolsFormat};
use skillbake_exec::{Executor, Meta, Outcome, ParamCheck, Policy};
use skillbake_format::file_type::mime_type;
use skillbake_format::suggest::{closest, did_you_mean};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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

/// The arguments of a tool call: a JSON object.
pub type Arguments = Map<String, Value>;

/// What a tool call answered: its text contents, and whether it is an error result
/// (`isError: true`, which the model reads and can correct).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolReply {
    /// The text contents, in order.
    pub texts: Vec<String>,
    /// Whether the call failed (bad arguments, not found, a run that did not succeed).
    pub is_error: bool,
}

impl ToolReply {
    fn success(texts: Vec<String>) -> Self {
        ToolReply {
            texts,
            is_error: false,
        }
    }

    fn error(text: String) -> Self {
        ToolReply {
            texts: vec![text],
            is_error: true,
        }
    }
}

/// Why a tool call got no reply: a protocol error rather than an error result.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallError {
    /// No tool has this name (a JSON-RPC `invalid params` error); the message lists the tools.
    UnknownTool(String),
    /// The run could not be carried out or awaited (an internal error).
    Failed(String),
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::UnknownTool(m) | CallError::Failed(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for CallError {}

/// An embedded file as an MCP resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceInfo {
    /// `skill://{name}/{path}` (`skill://v{version}/{name}/{path}` for a version agents do not
    /// get by name).
    pub uri: String,
    /// The skill's name for its `SKILL.md`; `{name}/{path}` (`v{version}/{name}/{path}`) for
    /// the other files.
    pub name: String,
    /// The MIME type, from the file's extension and whether it is text.
    pub mime_type: &'static str,
    /// The size in bytes.
    pub size: u64,
    /// The skill's description, on its `SKILL.md`.
    pub description: Option<&'static str>,
}

/// The contents of a resource: text for UTF-8 files that are not binary, else bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Contents {
    /// A text file.
    Text {
        /// The URI asked for.
        uri: String,
        /// The MIME type.
        mime_type: &'static str,
        /// The file, exactly as embedded.
        text: &'static str,
    },
    /// A binary file (sent base64-encoded).
    Blob {
        /// The URI asked for.
        uri: String,
        /// The MIME type.
        mime_type: &'static str,
        /// The file, exactly as embedded.
        bytes: &'static [u8],
    },
}

/// The MCP server of one registry (an `rmcp::ServerHandler`). Cloning it is cheap and shares
/// everything (the tools, the compiled schemas, the executor): one per HTTP session.
#[derive(Clone)]
pub struct Server {
    registry: &'static Registry,
    pub(crate) tools: Arc<[rmcp::model::Tool]>,
    /// Tool name → the skill it belongs to.
    packs: Arc<HashMap<String, &'static str>>,
    /// The argument check every pack tool goes through, run or not.
    params: Arc<ParamCheck>,
    pub(crate) instructions: Arc<str>,
    executor: Option<Arc<Executor<'static>>>,
    /// At most this many runs at once, across every session; `None` is no limit.
    runs: Option<Arc<tokio::sync::Semaphore>>,
    /// Skills per `skills/list` page.
    pub(crate) skills_page: usize,
    /// Set by [`Server::stop_runs`]: every run of this server and its clones stops.
    stop: Arc<AtomicBool>,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("skills", &self.registry.len())
            .field("tools", &self.tool_names())
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Prepares the server: parses the registry's MCP tool definitions and compiles every pack's
    /// `schema.json`. Fails only when the registry's generated data is inconsistent.
    pub fn new(registry: &'static Registry) -> Result<Self, Error> {
        let mut tools = builtin_first(registry)?;
        let params = ParamCheck::new(registry);
        let mut packs = HashMap::new();
        for tool in &tools {
            let name = tool.name.as_ref();
            if name == LOAD_SKILL || name == FIND_SKILLS {
                continue;
            }
            let skill = registry.get_exact(name).ok_or_else(|| {
                Error::ToolDefinitions(format!("tool `{name}` names no embedded skill"))
            })?;
            params.compile(&skill).map_err(|message| Error::Schema {
                skill: name.to_string(),
                message,
            })?;
            packs.insert(name.to_string(), skill.name());
        }
        tools.push(rmcp::model::Tool::new(
            LIST_SKILLS,
            LIST_SKILLS_DESCRIPTION,
            match json!({"type": "object", "properties": {}, "additionalProperties": false}) {
                Value::Object(o) => o,
                _ => Map::new(),
            },
        ));
        Ok(Server {
            registry,
            tools: tools.into(),
            packs: Arc::new(packs),
            params: Arc::new(params),
            instructions: registry.catalog(CatalogFormat::Xml, None).text.into(),
            executor: None,
            runs: None,
            skills_page: crate::skills::SKILLS_PAGE,
            stop: Arc::new(AtomicBool::new(false)),
        })
    }

    /// A server whose pack tools run runnable packs under `policy` (see the crate docs).
    pub fn with_policy(registry: &'static Registry, policy: Policy) -> Result<Self, Error> {
        let mut server = Server::new(registry)?;
        let policy = policy.cancel_on(Arc::clone(&server.stop));
        server.executor = Some(Arc::new(Executor::new(registry, policy)));
        Ok(server)
    }

    /// Stops every script this server and its clones are running, with their process groups
    /// (their calls answer the executor's cancelled result), and every run asked for later: for
    /// a server that is shutting down.
    pub fn stop_runs(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Runs at most `n` scripts at once (at least 1), across every client of this server and its
    /// clones; further calls wait for a slot, and their timeout starts when they run.
    pub fn with_run_limit(mut self, n: usize) -> Self {
        self.runs = Some(Arc::new(tokio::sync::Semaphore::new(n.max(1))));
        self
    }

    /// Lists at most `n` skills (at least 1) per `skills/list` page instead of
    /// [`SKILLS_PAGE`](crate::SKILLS_PAGE), for hosts that want small pages.
    pub fn with_skills_page(mut self, n: usize) -> Self {
        self.skills_page = n.max(1);
        self
    }

    /// The registry served.
    pub fn registry(&self) -> &'static Registry {
        self.registry
    }

    /// Whether pack tools run scripts.
    pub fn executes(&self) -> bool {
        self.executor.is_some()
    }

    /// The tools this server lists, as MCP tool definitions (`{name, description,
    /// inputSchema, …}`): the registry's MCP tool definitions, then `list_skills`.
    pub fn tools(&self) -> Vec<Value> {
        self.tools
            .iter()
            .map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
            .collect()
    }

    /// The tools' names, in [`Server::tools`] order.
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name.as_ref()).collect()
    }

    /// The catalog the server sends as its instructions.
    pub fn instructions(&self) -> &str {
        &self.instructions
    }

    /// Every resource: one per embedded file of every version of every skill, in name, version
    /// and path order.
    pub fn resources(&self) -> Vec<ResourceInfo> {
        let mut out = Vec::new();
        for skill in self.registry.all_versions() {
            let root = skill_root(&skill);
            let id = root.get(URI_PREFIX.len()..).unwrap_or_default();
            for file in skill.files() {
                let skill_md = file.path() == "SKILL.md";
                out.push(ResourceInfo {
                    uri: file_uri(&root, file.path()),
                    name: match skill_md {
                        true => skill.name().to_string(),
                        false => format!("{id}/{}", file.path()),
                    },
                    mime_type: mime_type(file.path(), served_kind(&file)),
                    size: file.size() as u64,
                    description: skill_md.then(|| skill.description()),
                });
            }
        }
        out
    }

    /// Reads a resource; `None` when it names no embedded file. `skill://{name}/{path}` is the
    /// version agents get by name, `skill://v{version}/{name}/{path}` exactly that version; the
    /// name ignores letter case and may carry a version (`name@1.4.2`, exactly that version, an
    /// alias kept from earlier releases) or a range (`name@^1`, the newest in it).
    pub fn read(&self, uri: &str) -> Option<Contents> {
        match skills::target(self.registry, uri)? {
            Target::InSkill { skill, path } => Some(contents(uri, &skill.file(&path)?)),
            Target::Version(_) => None,
        }
    }

    /// A page of `skills/list`: the skills the MCP Skills extension serves (every version of
    /// every skill that [`Server::skill_refusal`] does not refuse), [`SKILLS_PAGE`](crate::SKILLS_PAGE)
    /// at a time (see [`Server::with_skills_page`]), from `cursor` (the previous page's
    /// `next_cursor`). A cursor this server did not give is an error message.
    pub fn skills_page(&self, cursor: Option<&str>) -> Result<SkillsPage, String> {
        skills::page(self.registry, self.skills_page, cursor)
    }

    /// `skills/get`: the entry of the skill whose `SKILL.md` is at `uri` (exactly the URI
    /// `skills/list` gives), or why there is none.
    pub fn skill_entry(&self, uri: &str) -> Result<SkillEntry, String> {
        skills::skill_entry(self.registry, uri)
    }

    /// Why the skills extension does not serve `skill` (its tools and resources stay): its
    /// `name` or `metadata` breaks a rule of the Agent Skills specification that hosts of the
    /// extension enforce.
    pub fn skill_refusal(&self, skill: &Skill<'_>) -> Option<String> {
        skills::refusal(skill)
    }

    /// `resources/directory/read`: the direct children of the folder at `uri`, or why it is
    /// not one. A folder is listed in one page, so any cursor is an error.
    pub fn read_directory(&self, uri: &str, cursor: Option<&str>) -> Result<Vec<DirEntry>, String> {
        skills::read_directory(self.registry, uri, cursor)
    }

    /// Calls the tool `name` with `args`, as a `tools/call` request does over any transport. A
    /// pack tool's arguments go through [`ParamCheck`] (the executor's own check: defaults
    /// applied, one message format) whether the server runs it or not.
    pub async fn call(&self, name: &str, args: Arguments) -> Result<ToolReply, CallError> {
        self.call_until(name, args, std::future::pending()).await
    }

    /// [`Server::call`], cancelled when `cancelled` completes (the caller sent
    /// `notifications/cancelled` or went away) or when this future is dropped: a running script
    /// is stopped with its whole process group, its run slot freed, and the call answers the
    /// executor's cancelled result. `find_skills` and `list_skills` run on tokio's blocking
    /// pool, so a long query or a big catalog never holds up the async workers.
    pub async fn call_until(
        &self,
        name: &str,
        args: Arguments,
        cancelled: impl std::future::Future<Output = ()>,
    ) -> Result<ToolReply, CallError> {
        Ok(match name {
            LOAD_SKILL => self.load_skill(&args),
            LIST_SKILLS => self.blocking(move |s| s.list_skills(&args)).await?,
            FIND_SKILLS => self.blocking(move |s| s.find_skills(&args)).await?,
            name => match self.packs.get(name) {
                Some(&skill) => match (&self.executor, self.runnable(skill)) {
                    (Some(executor), true) => {
                        self.run(Arc::clone(executor), skill, args, cancelled)
                            .await?
                    }
                    _ => self.pack_tool(name, skill, args),
                },
                None => return Err(CallError::UnknownTool(self.unknown_tool(name))),
            },
        })
    }

    /// Runs `f` on tokio's blocking pool.
    async fn blocking(
        &self,
        f: impl FnOnce(&Server) -> ToolReply + Send + 'static,
    ) -> Result<ToolReply, CallError> {
        let server = self.clone();
        tokio::task::spawn_blocking(move || f(&server))
            .await
            .map_err(|e| CallError::Failed(format!("the call failed: {e}")))
    }

    /// `name` is no tool: the message lists the tools, with a suggestion when one is close.
    fn unknown_tool(&self, name: &str) -> String {
        let tools = self.tool_names();
        match closest(name, tools.iter().copied()) {
            Some(s) => format!(
                "unknown tool `{name}`; {} Tools: {}",
                did_you_mean(s),
                tools.join(", ")
            ),
            None => format!("unknown tool `{name}`; tools: {}", tools.join(", ")),
        }
    }

    /// Runs a runnable pack off the server's thread (a run blocks for up to its timeout), in a
    /// run slot when the server has a limit. The slot goes with the run, so a cancelled run
    /// still counts until its process group is dead (within 50 ms of the cancel).
    async fn run(
        &self,
        executor: Arc<Executor<'static>>,
        skill: &'static str,
        args: Arguments,
        cancelled: impl std::future::Future<Output = ()>,
    ) -> Result<ToolReply, CallError> {
        // Set when the call is cancelled or its future dropped: the run stops either way.
        let flag = Arc::new(AtomicBool::new(false));
        let _cancel_on_drop = SetOnDrop(Arc::clone(&flag));
        let policy = executor.policy().clone().cancel_on(Arc::clone(&flag));
        let failed = |e: &dyn fmt::Display| CallError::Failed(format!("the run failed: {e}"));
        let slot = match &self.runs {
            Some(runs) => Some(
                Arc::clone(runs)
                    .acquire_owned()
                    .await
                    .map_err(|e| failed(&e))?,
            ),
            None => None,
        };
        let mut handle = tokio::task::spawn_blocking(move || {
            let outcome = executor.execute_with(skill, Value::Object(args), &policy);
            drop(slot);
            outcome
        });
        let cancelled = std::pin::pin!(cancelled);
        let outcome = tokio::select! {
            outcome = &mut handle => outcome,
            () = cancelled => {
                flag.store(true, Ordering::Relaxed);
                handle.await
            }
        }
        .map_err(|e| failed(&e))?;
        Ok(ToolReply {
            texts: vec![outcome.to_json()],
            is_error: !outcome.ok(),
        })
    }

    fn load_skill(&self, args: &Arguments) -> ToolReply {
        if let Some(key) = args
            .keys()
            .find(|k| !matches!(k.as_str(), "skill_name" | "file_path"))
        {
            return ToolReply::error(format!(
                "Error: unknown argument `{key}`: {LOAD_SKILL} takes skill_name and file_path."
            ));
        }
        let skill_name = match args.get("skill_name") {
            Some(Value::String(s)) => s.as_str(),
            Some(other) => {
                return ToolReply::error(format!(
                    "Error: skill_name must be a string, not {}. Skills: {}.",
                    json_type(other),
                    self.names()
                ))
            }
            None => {
                return ToolReply::error(format!(
                    "Error: missing required argument `skill_name`. Skills: {}.",
                    self.names()
                ))
            }
        };
        let file_path = match args.get("file_path") {
            Some(Value::String(s)) => Some(s.as_str()),
            None | Some(Value::Null) => None,
            Some(other) => {
                return ToolReply::error(format!(
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
        ToolReply {
            texts: vec![reply],
            is_error: !resolution.is_found(),
        }
    }

    fn find_skills(&self, args: &Arguments) -> ToolReply {
        if let Some(key) = args
            .keys()
            .find(|k| !matches!(k.as_str(), "query" | "top_k" | "bucket"))
        {
            return ToolReply::error(format!(
                "Error: unknown argument `{key}`: {FIND_SKILLS} takes `query`, `top_k` and `bucket`."
            ));
        }
        let Some(query) = args.get("query").and_then(Value::as_str) else {
            return ToolReply::error(
                "Error: `query` is required: the user's request as a string, e.g. {\"query\": \"send the report to my team\"}.".to_string(),
            );
        };
        let top = match args.get("top_k") {
            None | Some(Value::Null) => 5,
            Some(v) => match v.as_u64() {
                Some(k @ 1..=FIND_SKILLS_MAX) => k as usize,
                _ => {
                    return ToolReply::error(format!(
                        "Error: `top_k` must be an integer from 1 to {FIND_SKILLS_MAX}, not {v}."
                    ))
                }
            },
        };
        let bucket = match args.get("bucket") {
            None | Some(Value::Null) => None,
            Some(Value::String(b)) => Some(b.as_str()),
            Some(v) => {
                return ToolReply::error(format!("Error: `bucket` must be a string, not {v}."))
            }
        };
        let opts = RouteOptions { top, bucket };
        ToolReply::success(vec![self.registry.route_json(query, opts)])
    }

    fn list_skills(&self, args: &Arguments) -> ToolReply {
        if let Some(key) = args.keys().next() {
            return ToolReply::error(format!(
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
            Ok(text) => ToolReply::success(vec![text]),
            Err(e) => ToolReply::error(format!("Error: {e}")),
        }
    }

    /// A pack tool that does not run: its arguments checked as a run would check them (refused
    /// with the executor's own result), then the pack's instructions and the arguments, defaults
    /// applied, for the model to carry out.
    fn pack_tool(&self, tool: &str, skill: &'static str, args: Arguments) -> ToolReply {
        let Some(skill) = self.registry.get_exact(skill) else {
            return ToolReply::error(format!("Error: skill `{skill}` is not embedded."));
        };
        let args = match self.params.check(&skill, Value::Object(args)) {
            Ok(args) => args,
            Err(failure) => {
                return ToolReply::error(Outcome::failure(failure, Meta::default()).to_json())
            }
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
            Ok(echo) => ToolReply::success(vec![instructions, echo]),
            Err(e) => ToolReply::error(format!("Error: {e}")),
        }
    }

    fn names(&self) -> String {
        self.registry.names().collect::<Vec<_>>().join(", ")
    }

    /// Whether the skill has an `entrypoint`.
    fn runnable(&self, skill: &str) -> bool {
        self.registry
            .get_exact(skill)
            .is_some_and(|s| s.field_json("entrypoint").is_some())
    }
}

/// The registry's MCP tool definitions with the built-in tools first among equals: a pack named
/// like a built-in tool loses its tool (tool names must be unique), and `list_skills` is added
/// by the server.
/// Sets its flag when dropped.
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

fn builtin_first(registry: &Registry) -> Result<Vec<rmcp::model::Tool>, Error> {
    let mut tools: Vec<rmcp::model::Tool> =
        serde_json::from_str(registry.tools_json(ToolsFormat::Mcp))
            .map_err(|e| Error::ToolDefinitions(e.to_string()))?;
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
    Ok(tools)
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

/// The contents of a resource: text unless the file is served as binary.
fn contents(uri: &str, file: &File) -> Contents {
    let kind = served_kind(file);
    let mime_type = mime_type(file.path(), kind);
    match file.text() {
        Some(text) if kind != FileKind::Binary => Contents::Text {
            uri: uri.to_string(),
            mime_type,
            text,
        },
        _ => Contents::Blob {
            uri: uri.to_string(),
            mime_type,
            bytes: file.bytes(),
        },
    }
}
