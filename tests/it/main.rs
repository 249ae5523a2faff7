//! The `skillbake` command's integration tests, one binary: the real binary driven as users and
//! agents drive it (check, explain, diff, list, prompt, tools, load, cat, route, run,
//! exec-script, serve over stdio and HTTP, add/update of vendored packs, keygen and signed
//! manifests), the packs it ships (`skillbake_cli::BUNDLED`)
//! against DB-GPT and their snapshots, and the workspace's tidy checks (`tidy`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod agent_formats;
mod binary;
mod call_log;
mod check_cli;
mod check_corpus;
mod cli;
#[path = "../../crates/skillbake-build/tests/it/common.rs"]
mod common;
mod dbgpt_compat;
mod dbgpt_exec;
mod diff_cli;
mod fix_cli;
mod lsp;
mod mcp;
mod mcp_http;
mod mcp_http_hardened;
mod mcp_profiles;
mod mcp_skills_sdk;
mod new_cli;
mod python;
mod registry;
mod route;
mod run_cli;
mod sandbox_cli;
mod signing_cli;
mod skill_snapshots;
mod suggestions;
mod tidy;
mod traces;
mod vendor_cli;
mod watch_cli;
