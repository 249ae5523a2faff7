//! An MCP server for a [`Registry`](skillbake::Registry), built on the official Rust MCP SDK (`rmcp`).
//!
//! Everything is served from the registry's `'static` tables; nothing touches the file system.
//!
//! * **Instructions**: the Agent Skills `<available_skills>` catalog
//!   ([`Registry::catalog`](skillbake::Registry::catalog) in `CatalogFormat::Xml`).
//! * **Tools**: exactly [`Registry::tools_json`](skillbake::Registry::tools_json) in `ToolsFormat::Mcp` (`load_skill`,
//!   `find_skills`, and one tool per pack with a `schema.json`), plus `list_skills`.
//!   * `find_skills {query, top_k?, bucket?}` routes the request ([`Registry::route_json`](skillbake::Registry::route_json)):
//!     a JSON array of the top `top_k` (default 5, at most 50) candidates with their scores,
//!     matched fields, descriptions, `when_to_use`, `when_not_to_use` and parameters.
//!   * `load_skill {skill_name, file_path?}` answers the same bytes as [`Registry::load_skill`](skillbake::Registry::load_skill)
//!     as one text content; `file_path` defaults to the skill's `SKILL.md` path. `skill_name`
//!     may be `NAME@RANGE` for another embedded version (`send-email@1`, `send-email@=1.4.2`).
//!     The result is an error result (`isError: true`) when the skill or file is not found.
//!   * `list_skills {}` answers a JSON array of `{name, version, versions, description,
//!     location, uri}`: each skill once, at the version an agent gets by name.
//!   * A pack tool, on a server built with [`Server::with_policy`] (`skillbake serve --allow
//!     ...` or `--execute`), **runs** a runnable pack (one with an `entrypoint`) through
//!     [`Executor`](skillbake_exec::Executor): one text content with the unified result
//!     `{"ok", "data", "error"}`, and `isError: true` exactly when `ok` is false. A server built
//!     with [`Server::new`] (no policy) runs nothing: the tool checks its arguments exactly as
//!     a run checks them ([`ParamCheck`](skillbake_exec::ParamCheck): the schema's defaults
//!     applied, and a refusal is the executor's own `INVALID_PARAMS` result) and answers the
//!     pack's instructions (the `load_skill` reply) followed by a JSON text echoing the checked
//!     arguments with `"executed": false` and a note saying why; so does a pack without an
//!     `entrypoint` on any server. One call is accepted or refused alike with and without a
//!     policy, over any transport.
//!
//!   Bad arguments (missing or mistyped, unknown skill, schema violations) give error results
//!   the model can read and correct; an unknown tool is a JSON-RPC `invalid params` error.
//! * **Resources**: `skill://{name}/{path}` for every embedded file (`SKILL.md` included, exactly
//!   as written; the files of a version agents do not get by name under
//!   `skill://{name}@{version}/{path}`, the `@` percent-encoded), with a MIME type from the extension
//!   (`skillbake_format::file_type::mime_type`, the same table that decides how
//!   `load_skill` serves the file); UTF-8 files are served as text, binary files as
//!   base64 blobs. The version agents get by name is at `skill://{name}/{path}`, every version
//!   at `skill://v{version}/{name}/{path}` (canonical for the others; `skill://{name}%40{version}/{path}`
//!   still reads, as an alias). The templates `skill://{name}/{path}` and
//!   `skill://v{version}/{name}/{path}` are listed too. An unknown URI is a `resource not
//!   found` error.
//! * **The MCP Skills extension** (`io.modelcontextprotocol/skills`, with `directoryRead`):
//!   `skills/list` ([`Server::skills_page`]: [`SKILLS_PAGE`] entries a page, each with the
//!   frontmatter as a JSON object and the manifest of its files with `sha256:` digests and
//!   sizes), `skills/get` ([`Server::skill_entry`]) and `resources/directory/read`
//!   ([`Server::read_directory`]). The digests were computed by the compiler
//!   ([`File::sha256`](skillbake::File::sha256)) and a folder's children come from the pack's
//!   sorted file table: nothing is hashed or read from disk. A URI that names no skill or no
//!   folder, a cursor this server did not give, or parameters of the wrong shape are `invalid
//!   params` errors whose message says what is wrong. A pack whose name or `metadata` breaks
//!   the Agent Skills rules that hosts of the extension enforce is not listed
//!   ([`Server::skill_refusal`] says why). When the build signed the registry's manifest,
//!   every entry's `_meta` carries the signature under [`PROVENANCE_KEY`] ([`provenance`]).
//!
//! ```no_run
//! /// Serves `registry` (one that `skillbake::include_skills!()` defined) in a tokio runtime,
//! /// until the client closes stdin.
//! async fn run(registry: &'static skillbake::Registry) -> Result<(), skillbake_mcp::Error> {
//!     skillbake_mcp::serve_stdio(registry).await
//! }
//! ```
//!
//! ## The API, and rmcp
//!
//! [`Server`] answers in this crate's own types: [`Server::call`] gives a [`ToolReply`],
//! [`Server::tools`] the tool definitions as JSON, [`Server::resources`] and [`Server::read`]
//! [`ResourceInfo`] and [`Contents`]; [`serve`], [`serve_stdio`] and [`http`] carry it over a
//! transport. [`Server`] also implements `rmcp::ServerHandler`, for callers who serve it over
//! another of rmcp's transports: this crate re-exports [`rmcp`] for them, so that both sides
//! use the same version. That trait implementation and the re-export are the only places rmcp
//! shows in the API (and the `http` feature's [`http::router`] returns an axum `Router`); a
//! major release of rmcp is a major release of this crate, never of the `skillbake` runtime.

#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod agent;
mod calllog;
mod error;
mod handler;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;
pub mod profiles;
mod server;
mod skills;
mod stdio;
pub mod traces;
mod uri;

/// The official Rust MCP SDK this crate is built on, for serving [`Server`] (an
/// `rmcp::ServerHandler`) over a transport of your own with the same rmcp version.
pub use rmcp;

pub use agent::{Agent, ANONYMOUS};
pub use calllog::CallLog;
pub use error::Error;
pub use profiles::{Profiles, Rollout, SERVED_KEY};
pub use server::{
    Arguments, CallError, Contents, ResourceInfo, Served, Server, ToolReply, FIND_SKILLS,
    FIND_SKILLS_MAX, LIST_SKILLS, LOAD_SKILL,
};
pub use skills::{
    provenance, DirEntry, ManifestEntry, SkillEntry, SkillsPage, DIRECTORY_MIME_TYPE,
    PROVENANCE_KEY, SKILLS_PAGE, SKILLS_TTL_MS,
};
pub use stdio::{serve, serve_stdio};
pub use uri::{resource_uri, skill_root, RESOURCE_TEMPLATE, URI_PREFIX};
