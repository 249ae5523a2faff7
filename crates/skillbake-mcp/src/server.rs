//! The MCP server of one registry, apart from any transport: its tools, resources and calls in
//! this crate's own types (`crate::handler` adapts them to rmcp's, `crate::stdio` and
//! `crate::http` carry them).

use crate::agent::Agent;
use crate::calllog::{Answer, CallEvent, CallLog, Caller};
use crate::error::Error;
use crate::profiles::{Origin, Profiles, View};
use crate::skills::{self, file_uri, served_kind, DirEntry, SkillEntry, SkillsPage, Target};
use crate::uri::{resource_uri, URI_PREFIX};
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
    /// The skill and version that served the call, for the reply's `_meta` (under
    /// [`SERVED_KEY`](crate::SERVED_KEY)) and a call log; `None` for calls no skill served.
    pub served: Option<Served>,
    /// `OK`, or the error code the call log records: a run's code (the executor's or the
    /// script's own), `INVALID_PARAMS` (arguments a tool refused), `SKILL_NOT_FOUND`,
    /// `FILE_NOT_FOUND`, `RATE_LIMITED`, `INTERNAL_ERROR`.
    pub outcome: String,
}

/// Who a tool call served, and from which version: for the reply's `_meta` and a call log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    /// The agent that called ([`ANONYMOUS`](crate::ANONYMOUS) without authentication).
    pub agent: String,
    /// The skill.
    pub skill: String,
    /// The version that served the call, when the pack has one.
    pub version: Option<String>,
    /// Why this version: `default` (the build's), `requirement` (the agent's profile), `rollout`
    /// or `request` (the call named a version range).
    pub via: &'static str,
}

impl Served {
    /// The `_meta` value: `{agent, skill, version, via}`.
    pub fn to_json(&self) -> Value {
        json!({"agent": self.agent, "skill": self.skill, "version": self.version, "via": self.via})
    }
}

impl ToolReply {
    fn success(texts: Vec<String>) -> Self {
        ToolReply {
            texts,
            is_error: false,
            served: None,
            outcome: "OK".to_string(),
        }
    }

    fn error(code: &str, text: String) -> Self {
        ToolReply {
            texts: vec![text],
            is_error: true,
            served: None,
            outcome: code.to_string(),
        }
    }
}

/// The outcome code of arguments a tool refused.
const INVALID_PARAMS: &str = "INVALID_PARAMS";

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
    /// The agents' profiles and the rollouts, when the server has them.
    profiles: Option<Arc<Profiles>>,
    /// The caller this clone answers, and what it sees.
    agent: Agent,
    pub(crate) view: Arc<View>,
    /// Where finished tool calls are recorded: the call log, the exporter.
    observers: Option<Arc<Observers>>,
}

/// What records finished tool calls.
#[derive(Debug, Default)]
struct Observers {
    log: Option<CallLog>,
    traces: Option<crate::traces::Exporter>,
}

impl Observers {
    /// Records one call: a line of the call log (a write that fails is reported on stderr, the
    /// call still answers).
    fn record(&self, event: CallEvent) {
        if let Some(log) = &self.log {
            if let Err(e) = log.write(&event) {
                eprintln!(
                    "skillbake: the call log record could not be appended to {}: {e}",
                    log.path().display()
                );
            }
        }
        if let Some(traces) = &self.traces {
            traces.record(event);
        }
    }
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
            profiles: None,
            agent: Agent::anonymous(),
            view: Arc::new(View::everything()),
            observers: None,
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

    /// Serves every agent what its profile says ([`Profiles`]): the skills it sees, the
    /// version it gets by name (its requirements and the rollouts), its permissions, run
    /// limit and call rate. This server answers as the anonymous caller; [`Server::for_agent`]
    /// gives the clone that answers another agent.
    pub fn with_profiles(mut self, profiles: Profiles) -> Self {
        self.view = profiles.view(crate::ANONYMOUS);
        self.profiles = Some(Arc::new(profiles));
        self
    }

    /// Appends one line per tool call to `log` ([`CallLog`]), from this server and its clones
    /// (every session, every agent).
    pub fn with_call_log(mut self, log: CallLog) -> Self {
        let mut observers = self.take_observers();
        observers.log = Some(log);
        self.observers = Some(Arc::new(observers));
        self
    }

    /// Sends a span per tool call to an OpenTelemetry collector ([`crate::traces`]), from
    /// this server and its clones; keep a clone of `exporter` to
    /// [`shutdown`](crate::traces::Exporter::shutdown) it when serving ends.
    pub fn with_traces(mut self, exporter: crate::traces::Exporter) -> Self {
        let mut observers = self.take_observers();
        observers.traces = Some(exporter);
        self.observers = Some(Arc::new(observers));
        self
    }

    /// The trace exporter, when the server has one.
    pub(crate) fn traces(&self) -> Option<&crate::traces::Exporter> {
        self.observers.as_ref().and_then(|o| o.traces.as_ref())
    }

    /// The observers so far, to add one (a server being built has the only reference).
    fn take_observers(&mut self) -> Observers {
        match self.observers.take().map(Arc::try_unwrap) {
            Some(Ok(o)) => o,
            Some(Err(shared)) => Observers {
                log: shared.log.clone(),
                traces: shared.traces.clone(),
            },
            None => Observers::default(),
        }
    }

    /// A clone of this server that answers `agent`: with profiles, only what its profile
    /// shows it; without, everything (the agent is named in [`Served`]).
    pub fn for_agent(&self, agent: &Agent) -> Server {
        let mut out = self.clone();
        if let Some(p) = &self.profiles {
            out.view = p.view(agent.name());
        }
        out.agent = agent.clone();
        out
    }

    /// The agent this server answers.
    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// The version of skill `name` the agent gets by name (see [`Server::for_agent`]); `None`
    /// when it does not see the skill or the pack has no version.
    pub fn served_version(&self, name: &str) -> Option<&'static str> {
        let skill = self.registry.get_exact(name)?;
        self.view.by_name(&skill)?.0.version()
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

    /// The permissions the server's runs are granted (`None` when it runs nothing): what a
    /// profile's `allow` may narrow.
    pub fn granted(&self) -> Option<&[&'static str]> {
        self.executor.as_ref().map(|e| e.policy().granted())
    }

    /// Whether pack tools run scripts.
    pub fn executes(&self) -> bool {
        self.executor.is_some()
    }

    /// The tools this server lists, as MCP tool definitions (`{name, description,
    /// inputSchema, …}`): the registry's MCP tool definitions, then `list_skills`.
    pub fn tools(&self) -> Vec<Value> {
        self.agent_tools()
            .iter()
            .map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
            .collect()
    }

    /// The tools' names, in [`Server::tools`] order.
    pub fn tool_names(&self) -> Vec<String> {
        self.agent_tools()
            .iter()
            .map(|t| t.name.to_string())
            .collect()
    }

    /// The tools the agent sees: `load_skill` naming its skills, `find_skills`, the pack tools
    /// of its skills (each at the version it gets by name), `list_skills`.
    pub(crate) fn agent_tools(&self) -> Vec<rmcp::model::Tool> {
        if self.profiles.is_none() {
            return self.tools.to_vec();
        }
        let names: Vec<&str> = self.agent_skills().iter().map(|s| s.name()).collect();
        let mut out = Vec::new();
        for tool in self.tools.iter() {
            let mut tool = tool.clone();
            match tool.name.as_ref() {
                LOAD_SKILL => {
                    let mut schema = (*tool.input_schema).clone();
                    if let Some(Value::Object(p)) = schema.get_mut("properties") {
                        if let Some(Value::Object(n)) = p.get_mut("skill_name") {
                            n.insert("enum".into(), json!(names));
                        }
                    }
                    tool.input_schema = Arc::new(schema);
                }
                FIND_SKILLS | LIST_SKILLS => {}
                name => {
                    let Some(skill) = self
                        .packs
                        .get(name)
                        .and_then(|s| self.registry.get_exact(s))
                    else {
                        continue;
                    };
                    let Some((chosen, _)) = self.view.by_name(&skill) else {
                        continue;
                    };
                    if !chosen.is_default() {
                        let schema = chosen
                            .schema_json()
                            .and_then(|t| serde_json::from_str::<Value>(t).ok());
                        if let Some(Value::Object(mut schema)) = schema {
                            schema.shift_remove("$schema");
                            schema.shift_remove("$id");
                            tool.input_schema = Arc::new(schema);
                        }
                        tool.description = Some(chosen.description().into());
                    }
                }
            }
            out.push(tool);
        }
        out
    }

    /// The skills the agent sees, once each, at the version it gets by name, in name order.
    pub(crate) fn agent_skills(&self) -> Vec<Skill<'static>> {
        self.registry
            .iter()
            .filter_map(|s| self.view.by_name(&s).map(|(v, _)| v))
            .collect()
    }

    /// The catalog the server sends as its instructions (with profiles, of the agent's skills
    /// at its versions).
    pub fn instructions(&self) -> std::borrow::Cow<'_, str> {
        if self.profiles.is_none() {
            return std::borrow::Cow::Borrowed(&self.instructions);
        }
        let skills = self.agent_skills();
        std::borrow::Cow::Owned(
            skillbake_format::catalog::render(CatalogFormat::Xml, skills, None).text,
        )
    }

    /// Every resource: one per embedded file of every version of every skill, in name, version
    /// and path order.
    pub fn resources(&self) -> Vec<ResourceInfo> {
        let mut out = Vec::new();
        for skill in self.registry.all_versions() {
            if !self.view.sees(skill.name()) {
                continue;
            }
            let root = skills::root(&self.view, &skill);
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
        match skills::target(self.registry, &self.view, uri)? {
            Target::InSkill { skill, path } => Some(contents(uri, &skill.file(&path)?)),
            Target::Version(_) => None,
        }
    }

    /// A page of `skills/list`: the skills the MCP Skills extension serves (every version of
    /// every skill that [`Server::skill_refusal`] does not refuse), [`SKILLS_PAGE`](crate::SKILLS_PAGE)
    /// at a time (see [`Server::with_skills_page`]), from `cursor` (the previous page's
    /// `next_cursor`). A cursor this server did not give is an error message.
    pub fn skills_page(&self, cursor: Option<&str>) -> Result<SkillsPage, String> {
        skills::page(self.registry, &self.view, self.skills_page, cursor)
    }

    /// `skills/get`: the entry of the skill whose `SKILL.md` is at `uri` (exactly the URI
    /// `skills/list` gives), or why there is none.
    pub fn skill_entry(&self, uri: &str) -> Result<SkillEntry, String> {
        skills::skill_entry(self.registry, &self.view, uri)
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
        skills::read_directory(self.registry, &self.view, uri, cursor)
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
        self.call_from(name, args, cancelled, Caller::default).await
    }

    /// [`Server::call_until`] for the caller `caller` gives: the call log and the exporter,
    /// when the server has them, record the call once it has answered (`caller` is only asked
    /// then: it hashes the session id).
    pub(crate) async fn call_from(
        &self,
        name: &str,
        args: Arguments,
        cancelled: impl std::future::Future<Output = ()>,
        caller: impl FnOnce() -> Caller,
    ) -> Result<ToolReply, CallError> {
        let Some(observers) = self.observers.clone() else {
            return self.dispatch(name, args, cancelled).await.map(|(r, _)| r);
        };
        let caller = caller();
        let clock = std::time::Instant::now();
        let params = Value::Object(args.clone());
        let (result, run) = match self.dispatch(name, args, cancelled).await {
            Ok((reply, run)) => (Ok(reply), run),
            Err(e) => (Err(e), None),
        };
        let answer = match &result {
            Ok(reply) => Answer {
                skill: reply.served.as_ref().map(|s| s.skill.clone()),
                version: reply.served.as_ref().and_then(|s| s.version.clone()),
                via: reply.served.as_ref().map(|s| s.via),
                outcome: reply.outcome.clone(),
                bytes_out: reply.texts.iter().map(|t| t.len() as u64).sum(),
            },
            Err(e) => Answer {
                outcome: match e {
                    CallError::UnknownTool(_) => "UNKNOWN_TOOL",
                    CallError::Failed(_) => "INTERNAL_ERROR",
                }
                .to_string(),
                ..Answer::default()
            },
        };
        let event = CallEvent::new(
            name,
            self.agent.name(),
            caller,
            &params,
            answer,
            run,
            clock.elapsed(),
        );
        observers.record(event);
        result
    }

    /// Answers the call; a run also gives what it did.
    async fn dispatch(
        &self,
        name: &str,
        args: Arguments,
        cancelled: impl std::future::Future<Output = ()>,
    ) -> Result<(ToolReply, Option<Meta>), CallError> {
        if let Err((wait, rate)) = self.view.take_call() {
            let reply = ToolReply::error(
                "RATE_LIMITED",
                format!(
                    "Error: rate limit: agent `{}` may make {rate} tool calls; retry in {:.1} s.",
                    self.agent,
                    wait.max(0.1)
                ),
            );
            return Ok((reply, None));
        }
        let reply = match name {
            LOAD_SKILL => self.load_skill(&args),
            LIST_SKILLS => self.blocking(move |s| s.list_skills(&args)).await?,
            FIND_SKILLS => self.blocking(move |s| s.find_skills(&args)).await?,
            name => match self.packs.get(name).filter(|s| self.view.sees(s)) {
                Some(&skill) => match (&self.executor, self.runnable(skill)) {
                    (Some(executor), true) => {
                        let (reply, meta) = self
                            .run(Arc::clone(executor), skill, args, cancelled)
                            .await?;
                        return Ok((reply, Some(meta)));
                    }
                    _ => self.pack_tool(name, skill, args),
                },
                None => return Err(CallError::UnknownTool(self.unknown_tool(name))),
            },
        };
        Ok((reply, None))
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
        match closest(name, tools.iter().map(String::as_str)) {
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
    ) -> Result<(ToolReply, Meta), CallError> {
        // Set when the call is cancelled or its future dropped: the run stops either way.
        let flag = Arc::new(AtomicBool::new(false));
        let _cancel_on_drop = SetOnDrop(Arc::clone(&flag));
        let mut policy = executor.policy().clone().cancel_on(Arc::clone(&flag));
        if let Some(allow) = &self.view.allow {
            policy = policy.grant_only(allow);
        }
        let (request, served) = self.pick(skill);
        let failed = |e: &dyn fmt::Display| CallError::Failed(format!("the run failed: {e}"));
        // The agent's own run limit first, then the server's.
        let agent_slot = acquire(&self.view.runs).await.map_err(|e| failed(&e))?;
        let slot = acquire(&self.runs).await.map_err(|e| failed(&e))?;
        let mut handle = tokio::task::spawn_blocking(move || {
            let outcome = executor.execute_with(&request, Value::Object(args), &policy);
            drop(slot);
            drop(agent_slot);
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
        let reply = ToolReply {
            texts: vec![outcome.to_json()],
            is_error: !outcome.ok(),
            served: Some(served),
            outcome: outcome
                .error()
                .map_or("OK", |e| e.code.as_str())
                .to_string(),
        };
        Ok((reply, outcome.meta().clone()))
    }

    /// The request that names the version of `skill` the agent gets by name
    /// (`name@=VERSION` when it is not the registry's), and what served it.
    fn pick(&self, skill: &'static str) -> (String, Served) {
        let found = self.registry.get_exact(skill);
        let chosen = found.and_then(|s| self.view.by_name(&s));
        let (request, version, via) = match chosen {
            Some((v, Some(origin))) => (
                format!("{skill}@={}", v.version().unwrap_or_default()),
                v.version(),
                match origin {
                    Origin::Requirement => "requirement",
                    Origin::Rollout => "rollout",
                },
            ),
            Some((v, None)) => (skill.to_string(), v.version(), "default"),
            None => (skill.to_string(), None, "default"),
        };
        (request, self.served(skill, version, via))
    }

    fn served(&self, skill: &str, version: Option<&str>, via: &'static str) -> Served {
        Served {
            agent: self.agent.name().to_string(),
            skill: skill.to_string(),
            version: version.map(str::to_string),
            via,
        }
    }

    fn load_skill(&self, args: &Arguments) -> ToolReply {
        if let Some(key) = args
            .keys()
            .find(|k| !matches!(k.as_str(), "skill_name" | "file_path"))
        {
            return ToolReply::error(
                INVALID_PARAMS,
                format!(
                    "Error: unknown argument `{key}`: {LOAD_SKILL} takes skill_name and file_path."
                ),
            );
        }
        let skill_name = match args.get("skill_name") {
            Some(Value::String(s)) => s.as_str(),
            Some(other) => {
                return ToolReply::error(
                    INVALID_PARAMS,
                    format!(
                        "Error: skill_name must be a string, not {}. Skills: {}.",
                        json_type(other),
                        self.names()
                    ),
                )
            }
            None => {
                return ToolReply::error(
                    INVALID_PARAMS,
                    format!(
                        "Error: missing required argument `skill_name`. Skills: {}.",
                        self.names()
                    ),
                )
            }
        };
        let file_path = match args.get("file_path") {
            Some(Value::String(s)) => Some(s.as_str()),
            None | Some(Value::Null) => None,
            Some(other) => {
                return ToolReply::error(
                    INVALID_PARAMS,
                    format!(
                        "Error: file_path must be a string, not {}.",
                        json_type(other)
                    ),
                )
            }
        };
        let found = self.view.lookup(self.registry, skill_name);
        let file_path = file_path.unwrap_or_else(|| found.map_or("", |s| s.skill_md_path()));
        // What `Registry::load_skill` does, keeping the resolution to flag not-found replies;
        // a skill the agent does not see answers exactly as one that does not exist.
        let resolution = match found {
            Some(skill) => skill.resolve(file_path),
            None => skillbake::Resolution::SkillNotFound,
        };
        let mut reply = String::new();
        resolution.write_reply(skill_name, file_path, &mut reply);
        let served = found.map(|s| {
            let by_name = skill_name.eq_ignore_ascii_case(s.name());
            let via = match self.view.by_name(&s) {
                Some((_, Some(Origin::Rollout))) if by_name => "rollout",
                Some((_, Some(Origin::Requirement))) if by_name => "requirement",
                _ if by_name => "default",
                _ => "request",
            };
            self.served(s.name(), s.version(), via)
        });
        let outcome = match resolution {
            skillbake::Resolution::SkillNotFound => "SKILL_NOT_FOUND",
            skillbake::Resolution::FileNotFound(_) => "FILE_NOT_FOUND",
            _ => "OK",
        };
        ToolReply {
            texts: vec![reply],
            is_error: !resolution.is_found(),
            served,
            outcome: outcome.to_string(),
        }
    }

    fn find_skills(&self, args: &Arguments) -> ToolReply {
        if let Some(key) = args
            .keys()
            .find(|k| !matches!(k.as_str(), "query" | "top_k" | "bucket"))
        {
            return ToolReply::error(INVALID_PARAMS, format!(
                "Error: unknown argument `{key}`: {FIND_SKILLS} takes `query`, `top_k` and `bucket`."
            ));
        }
        let Some(query) = args.get("query").and_then(Value::as_str) else {
            return ToolReply::error(
                INVALID_PARAMS,
                "Error: `query` is required: the user's request as a string, e.g. {\"query\": \"send the report to my team\"}.".to_string(),
            );
        };
        let top = match args.get("top_k") {
            None | Some(Value::Null) => 5,
            Some(v) => match v.as_u64() {
                Some(k @ 1..=FIND_SKILLS_MAX) => k as usize,
                _ => {
                    return ToolReply::error(
                        INVALID_PARAMS,
                        format!(
                        "Error: `top_k` must be an integer from 1 to {FIND_SKILLS_MAX}, not {v}."
                    ),
                    )
                }
            },
        };
        let bucket = match args.get("bucket") {
            None | Some(Value::Null) => None,
            Some(Value::String(b)) => Some(b.as_str()),
            Some(v) => {
                return ToolReply::error(
                    INVALID_PARAMS,
                    format!("Error: `bucket` must be a string, not {v}."),
                )
            }
        };
        if self.profiles.is_none() {
            let opts = RouteOptions { top, bucket };
            return ToolReply::success(vec![self.registry.route_json(query, opts)]);
        }
        // Every routed skill, then those the agent sees (at its versions), the top of them.
        let all = RouteOptions {
            top: self.registry.len().max(1),
            bucket,
        };
        let routed: Vec<_> = self
            .registry
            .route_with(query, all)
            .into_iter()
            .filter_map(|r| Some((self.view.by_name(&r.skill)?.0, r)))
            .take(top)
            .collect();
        let matched: Vec<Vec<&'static str>> =
            routed.iter().map(|(_, r)| r.fields().collect()).collect();
        let candidates: Vec<skillbake_format::candidates::Candidate<'_>> = routed
            .iter()
            .zip(&matched)
            .map(|((s, r), m)| skillbake_format::candidates::Candidate {
                name: s.name(),
                description: s.description(),
                location: s.skill_md_path(),
                bucket: r.skill.bucket(),
                score: r.score,
                matched: m,
                when_to_use: s.field_json("when_to_use").filter(|v| *v != "null"),
                when_not_to_use: s.field_json("when_not_to_use").filter(|v| *v != "null"),
                schema: s.schema_json(),
            })
            .collect();
        ToolReply::success(vec![skillbake_format::candidates::json(&candidates)])
    }

    fn list_skills(&self, args: &Arguments) -> ToolReply {
        if let Some(key) = args.keys().next() {
            return ToolReply::error(
                INVALID_PARAMS,
                format!("Error: unknown argument `{key}`: {LIST_SKILLS} takes no arguments."),
            );
        }
        let skills: Vec<Value> = self
            .registry
            .iter()
            .filter_map(|d| {
                let (s, origin) = self.view.by_name(&d)?;
                let mut entry = json!({
                    "name": s.name(),
                    "version": s.version(),
                    "versions": s.versions().map(|v| v.version()).collect::<Vec<_>>(),
                    "description": s.description(),
                    "location": s.skill_md_path(),
                    "uri": resource_uri(s.name(), "SKILL.md"),
                });
                if self.profiles.is_some() {
                    entry["via"] = json!(match origin {
                        Some(Origin::Rollout) => "rollout",
                        Some(Origin::Requirement) => "requirement",
                        None => "default",
                    });
                }
                Some(entry)
            })
            .collect();
        match serde_json::to_string_pretty(&skills) {
            Ok(text) => ToolReply::success(vec![text]),
            Err(e) => ToolReply::error("INTERNAL_ERROR", format!("Error: {e}")),
        }
    }

    /// A pack tool that does not run: its arguments checked as a run would check them (refused
    /// with the executor's own result), then the pack's instructions and the arguments, defaults
    /// applied, for the model to carry out.
    fn pack_tool(&self, tool: &str, skill: &'static str, args: Arguments) -> ToolReply {
        let (request, served) = self.pick(skill);
        let Some(skill) = self.registry.get(&request) else {
            return ToolReply::error(
                "SKILL_NOT_FOUND",
                format!("Error: skill `{skill}` is not embedded."),
            );
        };
        let args = match self.params.check(&skill, Value::Object(args)) {
            Ok(args) => args,
            Err(failure) => {
                // Refused as a run would refuse it, and by the same version: say which.
                return ToolReply {
                    served: Some(served),
                    ..ToolReply::error(
                        &failure.code.clone(),
                        Outcome::failure(failure, Meta::default()).to_json(),
                    )
                };
            }
        };
        let instructions = skill.load(skill.skill_md_path());
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
            Ok(echo) => ToolReply {
                served: Some(served),
                ..ToolReply::success(vec![instructions, echo])
            },
            Err(e) => ToolReply::error("INTERNAL_ERROR", format!("Error: {e}")),
        }
    }

    fn names(&self) -> String {
        self.agent_skills()
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(", ")
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

/// A slot of the run limit `runs`, when there is one.
async fn acquire(
    runs: &Option<Arc<tokio::sync::Semaphore>>,
) -> Result<Option<tokio::sync::OwnedSemaphorePermit>, tokio::sync::AcquireError> {
    match runs {
        Some(runs) => Arc::clone(runs).acquire_owned().await.map(Some),
        None => Ok(None),
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
