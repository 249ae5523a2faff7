//! Validate layer: one module per group of rules. Every check appends to a shared list of
//! diagnostics and never stops at the first problem.
//!
//! <!-- codes:start -->
//! | module | codes |
//! |---|---|
//! | [`name`] | `name-missing`, `name-length`, `name-charset`, `name-dir-mismatch`, `name-not-portable` |
//! | [`duplicate`] | `duplicate-name`, `duplicate-version` |
//! | [`description`] | `description-missing`, `description-empty`, `description-length` |
//! | [`fields`] | `compatibility-length`, `field-type`, `unknown-key` |
//! | [`text`] | `control-character` |
//! | [`tools`] | `unknown-tool` |
//! | [`schema`] | `schema-json-syntax`, `schema-invalid`, `schema-remote-ref`, `schema-unresolved-ref`, `schema-ref-cycle`, `schema-unknown-format` |
//! | [`body`] | `body-jinja`, `body-empty`, `body-too-long` |
//! | [`size`] | `file-too-large`, `pack-too-large`, `pack-over-mcp-limits` |
//! | [`version`] | `version-invalid`, `version-dir-mismatch` |
//! | [`requires`] | `requires-invalid`, `requires-unsatisfied`, `requires-cycle`, `agent-requires-unsatisfied`, `requires-deprecated` |
//! | [`route`] | `route-test-failed`, `description-near-duplicate`, `catalog-over-budget` |
//! | [`entrypoint`] | `entrypoint-not-found`, `entrypoint-binary`, `unknown-interpreter`, `schema-missing`, `timeout-invalid` |
//! | [`permission`] | `unknown-permission` |
//! | [`flow`] | `flow-style` |
//! | [`yaml_tab`] | `yaml-tab` |
//! | [`inline_comment`] | `yaml-inline-comment` |
//! | [`references`] | `reference-missing` |
//! | [`allowed_tools`] | `allowed-tools-unknown` |
//! | [`security::hidden`] | `hidden-text` |
//! | [`security::hijack`] | `agent-hijack` |
//! | [`security::harvest`] | `credential-harvest` |
//! | [`security::fetch_exec`] | `download-exec` |
//! | [`security::obfuscation`] | `obfuscated-exec` |
//! | [`security::persistence`] | `persistence` |
//! | [`security::capabilities`] | `undeclared-capability` |
//! | [`security::binary`] | `binary-payload` |
//! | [`line_endings`] | `line-endings`, `shell-line-endings` |
//! <!-- codes:end -->

pub mod allowed_tools;
pub mod body;
pub mod description;
pub mod duplicate;
pub mod entrypoint;
pub mod fields;
pub mod flow;
pub mod inline_comment;
pub mod line_endings;
pub mod name;
pub mod permission;
pub mod references;
pub mod requires;
pub mod route;
pub mod schema;
pub mod security;
pub mod size;
pub mod text;
pub mod tools;
pub mod version;
pub mod yaml_tab;

mod ctx;

pub use ctx::PackCtx;

use crate::diagnostic::Diagnostic;
use crate::discover::{PackSource, SKILL_MD};

/// Runs every per-pack rule on a pack whose `SKILL.md` parsed.
pub fn check_pack(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) {
    if ctx.md.frontmatter.is_some() {
        name::check(ctx, diags);
        description::check(ctx, diags);
        fields::check(ctx, diags);
        tools::check(ctx, diags);
        version::check(ctx, diags);
        route::check(ctx, diags);
        entrypoint::check(ctx, diags);
        permission::check(ctx, diags);
        text::check(ctx, diags);
        flow::check(ctx, diags);
        yaml_tab::check(ctx, diags);
        inline_comment::check(ctx, diags);
        references::check(ctx, diags);
        allowed_tools::check(ctx, diags);
    }
    line_endings::check(ctx, diags);
    body::check(ctx, diags);
    size::check(ctx, diags);
    security::check(ctx, diags);
    if let Some(schema) = ctx.pack.file(schema::SCHEMA_JSON) {
        schema::check(
            &schema.bytes,
            &ctx.pack.display_path(schema::SCHEMA_JSON),
            diags,
        );
    }
}

/// The path of a pack's `SKILL.md` in diagnostics.
pub fn skill_md_path(pack: &PackSource) -> String {
    pack.display_path(SKILL_MD)
}
