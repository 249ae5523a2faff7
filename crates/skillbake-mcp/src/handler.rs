//! The server as an `rmcp::ServerHandler`: every request is answered by [`Server`]'s own
//! methods, and this module only turns their types into rmcp's (and back).

use crate::calllog::{session_hash, Caller};
use crate::server::{CallError, Contents, ResourceInfo, Server, ToolReply};
use crate::skills::{DirEntry, SkillEntry, SKILLS_TTL_MS};
use crate::traces::RequestEvent;
use crate::uri::{RESOURCE_TEMPLATE, VERSION_TEMPLATE};
use base64::Engine as _;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
    CustomRequest, CustomResult, GetSkillRequestParams, GetSkillResult, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig, Skill, SkillFrontmatter,
    SkillResource, SkillResources, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler};
use serde_json::json;
use std::time::Instant;

impl Server {
    /// This server as the caller of `context` sees it (its profile's skills and versions).
    fn scoped(&self, context: &RequestContext<RoleServer>) -> Server {
        match crate::Agent::of(context) {
            Some(agent) => self.for_agent(agent),
            None => self.clone(),
        }
    }
}

impl ServerHandler for Server {
    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        result.instructions = Some(self.scoped(&context).instructions().into_owned());
        Ok(result)
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_skills_with_directory_read()
                .build(),
        )
        .with_server_info(
            Implementation::new("skillbake", env!("CARGO_PKG_VERSION"))
                .with_description("Agent skill packs compiled into this binary"),
        )
        .with_instructions(self.instructions().into_owned())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(
            self.scoped(&context).agent_tools(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.unwrap_or_default();
        // `notifications/cancelled` for this request (sent by the client, or by the HTTP
        // transport when the client went away) stops its run.
        let ct = context.ct.clone();
        let cancelled = async move { ct.cancelled().await };
        match self
            .scoped(&context)
            .call_from(request.name.as_ref(), args, cancelled, || caller(&context))
            .await
        {
            Ok(reply) => Ok(tool_result(reply).into()),
            Err(CallError::UnknownTool(m)) => Err(McpError::invalid_params(m, None)),
            Err(CallError::Failed(m)) => Err(McpError::internal_error(m, None)),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(
            self.scoped(&context)
                .resources()
                .into_iter()
                .map(resource)
                .collect(),
        ))
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
            ResourceTemplate::new(VERSION_TEMPLATE, "skill-version-file")
                .with_title("A file of one embedded version of a skill")
                .with_description(
                    "{version} is one of the skill's embedded versions (skills/list names each), \
                     {name} the skill's name, {path} a file's path in its pack",
                ),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let clock = Instant::now();
        let scoped = self.scoped(&context);
        let result = match scoped.read(&request.uri) {
            Some(c) => Ok(ReadResourceResult::new(vec![resource_contents(c)]).into()),
            None => Err(McpError::resource_not_found(
                format!(
                    "no embedded file at `{}` (expected {RESOURCE_TEMPLATE}; skills: {})",
                    request.uri,
                    scoped
                        .agent_skills()
                        .iter()
                        .map(|s| s.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                Some(json!({ "uri": request.uri })),
            )),
        };
        scoped.traced(
            &context,
            "resources/read",
            Some(&request.uri),
            clock,
            &result,
        );
        result
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, McpError> {
        let clock = Instant::now();
        let scoped = self.scoped(&context);
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        let result = scoped
            .skills_page(cursor)
            .map_err(|m| McpError::invalid_params(m, None))
            .map(|page| {
                let mut result =
                    ListSkillsResult::with_all_items(page.skills.into_iter().map(skill).collect());
                result.next_cursor = page.next_cursor;
                result
                    .with_ttl_ms(SKILLS_TTL_MS)
                    .with_cache_scope(CacheScope::Public)
            });
        scoped.traced(&context, "skills/list", None, clock, &result);
        result
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, McpError> {
        let clock = Instant::now();
        let scoped = self.scoped(&context);
        let result = scoped
            .skill_entry(&request.uri)
            .map_err(|m| McpError::invalid_params(m, Some(json!({ "uri": request.uri }))))
            .map(|entry| {
                GetSkillResult::new(skill(entry))
                    .with_ttl_ms(SKILLS_TTL_MS)
                    .with_cache_scope(CacheScope::Public)
            });
        scoped.traced(&context, "skills/get", Some(&request.uri), clock, &result);
        result
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, McpError> {
        let clock = Instant::now();
        let scoped = self.scoped(&context);
        let result = scoped
            .read_directory(&request.uri, request.cursor.as_deref())
            .map_err(|m| McpError::invalid_params(m, Some(json!({ "uri": request.uri }))))
            .map(|children| {
                ReadResourceDirectoryResult::with_all_items(
                    children.into_iter().map(dir_resource).collect(),
                )
            });
        let method = "resources/directory/read";
        scoped.traced(&context, method, Some(&request.uri), clock, &result);
        result
    }

    /// A request of the extension whose parameters are not the method's (rmcp hands requests
    /// it cannot parse here): `invalid params`, saying what the method takes.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        let takes = match request.method.as_str() {
            "skills/list" => "an optional string `cursor`",
            "skills/get" => "a string `uri`, the URI of a skill's SKILL.md",
            "resources/directory/read" => {
                "a string `uri`, the URI of a folder, and an optional string `cursor`"
            }
            _ => {
                return Err(McpError::new(
                    rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                    request.method,
                    None,
                ))
            }
        };
        Err(McpError::invalid_params(
            format!(
                "invalid params for {}: it takes {takes}, got {}",
                request.method,
                request
                    .params
                    .map_or_else(|| "none".to_string(), |p| p.to_string())
            ),
            None,
        ))
    }
}

impl Server {
    /// Records the span of a request answered with `result` (not a tool call: those are
    /// recorded with the call log's event), when the server exports traces.
    fn traced<T>(
        &self,
        context: &RequestContext<RoleServer>,
        method: &'static str,
        uri: Option<&str>,
        clock: Instant,
        result: &Result<T, McpError>,
    ) {
        if let Some(traces) = self.traces() {
            traces.record_request(RequestEvent {
                method,
                uri: uri.map(str::to_string),
                agent: self.agent().name().to_string(),
                caller: caller(context),
                error: result.as_ref().err().map(|e| e.code.0),
                duration: clock.elapsed(),
            });
        }
    }
}

/// Who sent the request of `context`: the client's name from `initialize` and the session
/// (hashed).
fn caller(context: &RequestContext<RoleServer>) -> Caller {
    #[cfg(feature = "http")]
    let parts = context.extensions.get::<axum::http::request::Parts>();
    #[cfg(feature = "http")]
    let header = |name: &str| {
        parts
            .and_then(|p| p.headers.get(name))
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    #[cfg(not(feature = "http"))]
    let header = |_: &str| None::<String>;
    // The trace context of the message (`_meta`, as MCP carries it), else of the HTTP request.
    let (traceparent, tracestate) = match context.meta.get_traceparent() {
        Some(t) => (
            Some(t.to_string()),
            context.meta.get_tracestate().map(str::to_string),
        ),
        None => (header("traceparent"), header("tracestate")),
    };
    Caller {
        client: context.peer.peer_info().map(|i| i.client_info.name.clone()),
        session: header("mcp-session-id").as_deref().map(session_hash),
        #[cfg(feature = "http")]
        http: parts.is_some(),
        #[cfg(not(feature = "http"))]
        http: false,
        request_id: Some(match &context.id {
            rmcp::model::NumberOrString::Number(n) => n.to_string(),
            rmcp::model::NumberOrString::String(s) => s.to_string(),
        }),
        traceparent,
        tracestate,
    }
}

/// An entry in rmcp's types: `name` and `description` first, then every other field in the
/// author's order.
fn skill(entry: SkillEntry) -> Skill {
    let mut fields = entry.frontmatter;
    let text = |v: Option<serde_json::Value>| match v {
        Some(serde_json::Value::String(s)) => s,
        _ => String::new(),
    };
    let name = text(fields.shift_remove("name"));
    let description = text(fields.shift_remove("description"));
    let mut frontmatter = SkillFrontmatter::new(name, description);
    frontmatter.extra = fields;
    let files = entry
        .resources
        .into_iter()
        .map(|r| SkillResource::new(r.uri, r.digest, r.size))
        .collect();
    let out = Skill::new(entry.uri, frontmatter, SkillResources::Files(files));
    match entry.provenance {
        Some(p) => {
            let mut meta = serde_json::Map::new();
            meta.insert(
                crate::skills::PROVENANCE_KEY.to_string(),
                serde_json::Value::Object(p),
            );
            out.with_meta(rmcp::model::MetaObject(meta))
        }
        None => out,
    }
}

fn dir_resource(d: DirEntry) -> Resource {
    let out = Resource::new(d.uri, d.name).with_mime_type(d.mime_type);
    match d.size {
        Some(size) => out.with_size(size),
        None => out,
    }
}

fn tool_result(reply: ToolReply) -> CallToolResult {
    let content = reply.texts.into_iter().map(ContentBlock::text).collect();
    let result = if reply.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    match reply.served {
        Some(served) => {
            let mut meta = serde_json::Map::new();
            meta.insert(crate::SERVED_KEY.to_string(), served.to_json());
            result.with_meta(Some(rmcp::model::MetaObject(meta)))
        }
        None => result,
    }
}

fn resource(r: ResourceInfo) -> Resource {
    let out = Resource::new(r.uri, r.name)
        .with_mime_type(r.mime_type)
        .with_size(r.size);
    match r.description {
        Some(d) => out.with_description(d),
        None => out,
    }
}

/// Text as text, bytes as a base64 blob.
fn resource_contents(c: Contents) -> ResourceContents {
    match c {
        Contents::Text {
            uri,
            mime_type,
            text,
        } => ResourceContents::text(text, uri).with_mime_type(mime_type),
        Contents::Blob {
            uri,
            mime_type,
            bytes,
        } => ResourceContents::blob(base64::engine::general_purpose::STANDARD.encode(bytes), uri)
            .with_mime_type(mime_type),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_contents_are_base64_blobs() {
        let blob = Contents::Blob {
            uri: "skill://x/a.bin".into(),
            mime_type: "application/octet-stream",
            bytes: &[0u8, 159, 146, 150, b'\n'],
        };
        match resource_contents(blob) {
            ResourceContents::BlobResourceContents {
                blob, mime_type, ..
            } => {
                assert_eq!(blob, "AJ+Slgo=");
                assert_eq!(mime_type.as_deref(), Some("application/octet-stream"));
            }
            other => panic!("expected a blob, got {other:?}"),
        }
        let text = Contents::Text {
            uri: "skill://x/a.md".into(),
            mime_type: "text/markdown",
            text: "# hi\n",
        };
        match resource_contents(text) {
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
