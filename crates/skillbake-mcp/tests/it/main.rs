//! The MCP server's integration tests, one binary: tool calls in process on the executor's
//! fixture packs (`calls`), the skills extension on them (`skills`), and a downstream crate that embeds two versions of a pack and serves
//! them with `skillbake_mcp::serve_stdio`, driven by rmcp's client (`versions`). The `skillbake serve` command is tested with the command (`tests/it/` at the
//! workspace root).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod calls;
#[path = "../../../skillbake-build/tests/it/common.rs"]
mod common;
mod skills;
mod versions;
