//! The server as an `rmcp::ServerHandler`: every request is answered by [`Server`]'s own
//! methods, and this module only turns their types into rmcp's (and back).

use crate::server::{CallError, Contents, ResourceInfo, Server, ToolReply};
use crate::uri::RESOURCE_TEMPLATE;
use base64::Engine as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler};
use serde_json::json;

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
        .with_instructions(self.instructions().to_string())
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
        match self.call(request.name.as_ref(), args).await {
            Ok(reply) => Ok(tool_result(reply).into()),
            Err(CallError::UnknownTool(m)) => Err(McpError::invalid_params(m, None)),
            Err(CallError::Failed(m)) => Err(McpError::internal_error(m, None)),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(
            self.resources().into_iter().map(resource).collect(),
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
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        match self.read(&request.uri) {
            Some(c) => Ok(ReadResourceResult::new(vec![resource_contents(c)]).into()),
            None => Err(McpError::resource_not_found(
                format!(
                    "no embedded file at `{}` (expected {RESOURCE_TEMPLATE}; skills: {})",
                    request.uri,
                    self.registry().names().collect::<Vec<_>>().join(", ")
                ),
                Some(json!({ "uri": request.uri })),
            )),
        }
    }
}

fn tool_result(reply: ToolReply) -> CallToolResult {
    let content = reply.texts.into_iter().map(ContentBlock::text).collect();
    if reply.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
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
