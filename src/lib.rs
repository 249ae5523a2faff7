//! # skillbake
//!
//! Agent skill packs (`SKILL.md` + `schema.json` + scripts and references), validated at build
//! time and compiled into your binary as a `phf` perfect-hash registry. `load_skill` then runs
//! with zero file-system I/O and answers byte for byte what DB-GPT's `load_skill` tool answers:
//!
//! ```text
//! {"chunks": [{"output_type": "text", "content": "Skill: csv-data-analysis"}, {"output_type": "text", "content": "File path: skills/csv-data-analysis/SKILL.md"}, {"output_type": "text", "content": "---"}, {"output_type": "markdown", "content": "<body>"}]}
//! ```
//!
//! ## Embedding your own skills
//!
//! `build.rs` (with `skillbake-build` as a build-dependency):
//!
//! ```no_run
//! fn main() -> Result<(), skillbake_build::Error> {
//!     skillbake_build::Config::new().skills_dir("skills").compile()
//! }
//! ```
//!
//! and in the crate (depend on `skillbake` with `default-features = false` for the runtime only),
//! `skillbake::include_skills!();` defines `pub static REGISTRY: skillbake::Registry`:
//!
//! ```text
//! skillbake::include_skills!();
//!
//! fn main() {
//!     println!("{}", REGISTRY.load_skill("my-skill", "skills/my-skill/SKILL.md"));
//! }
//! ```
//!
//! The packs shipped with skillbake are compiled in as [`BUNDLED`] (default features):
//!
//! ```
//! # #[cfg(feature = "bundled")] {
//! let reply = skillbake::BUNDLED.load_skill("CSV-Data-Analysis", "skills/csv-data-analysis/SKILL.md");
//! assert!(reply.starts_with(r#"{"chunks": [{"output_type": "text", "content": "Skill: csv-data-analysis"}"#));
//! # }
//! ```
//!
//! ## Layers
//!
//! The runtime is the last layer of parse → validate → generate → serve: [`Registry`] and
//! [`Skill`] read tables that `skillbake-build` generated; [`chunk`] writes DB-GPT's replies.
//! The runtime depends on `phf` alone: no YAML, no JSON Schema, no file system.

#![forbid(unsafe_code)]
// Nothing on the serving path panics: no unchecked indexing or slicing, no `panic!`.
#![deny(clippy::indexing_slicing, clippy::panic)]

extern crate self as skillbake;

pub mod chunk;
#[cfg(feature = "exec")]
pub mod exec;
/// An MCP server (tools, resources, the catalog as instructions) for a registry (feature `mcp`).
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod registry;
/// Routing a request to the right few skills (feature `route`).
#[cfg(feature = "route")]
pub mod route;
#[cfg(feature = "testing")]
pub mod testing;

pub use registry::{File, LookupError, Registry, RenderError, Resolution, Skill};
#[cfg(feature = "route")]
pub use route::{RouteOptions, Routed};
pub use skillbake_format::activation::Shape as Activation;
pub use skillbake_format::catalog::{Catalog, Format as CatalogFormat};
pub use skillbake_format::file_type::FileKind;
pub use skillbake_format::semver::{Req as VersionReq, Version};
pub use skillbake_format::tools::Format as ToolsFormat;

/// Defines `pub static REGISTRY: skillbake::Registry` from the registry that
/// `skillbake_build::Config::compile` wrote to `OUT_DIR` in this crate's `build.rs`.
#[macro_export]
macro_rules! include_skills {
    () => {
        include!(concat!(env!("OUT_DIR"), "/skillbake_registry.rs"));
    };
}

#[cfg(feature = "bundled")]
mod bundled {
    crate::include_skills!();
}

/// The skill packs shipped with skillbake (its `skills/` folder, or `$SKILLBAKE_SKILLS_DIR` at
/// build time), compiled in.
#[cfg(feature = "bundled")]
pub use bundled::REGISTRY as BUNDLED;

/// [`Registry::load_skill`] on [`BUNDLED`].
#[cfg(feature = "bundled")]
pub fn load_skill(skill_name: &str, file_path: &str) -> String {
    BUNDLED.load_skill(skill_name, file_path)
}

/// Support for generated code. Not public API: may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use phf;

    /// The layout version of the routing index this runtime reads; generated code asserts it.
    pub const ROUTE_FORMAT: u32 = 2;
    #[cfg(feature = "route")]
    const _: () = assert!(ROUTE_FORMAT == skillbake_route::FORMAT);

    /// A byte range `(start, end)` into the registry's text or data.
    pub type Str = (u32, u32);

    /// One skill's row.
    #[derive(Debug)]
    pub struct SkillRecord {
        pub name: Str,
        pub description: Str,
        pub location: Str,
        pub skill_md_path: Str,
        pub body: Str,
        pub head: Str,
        pub tail: Str,
        pub frontmatter: Str,
        pub version: Option<Str>,
        /// Range into the field table.
        pub fields: Str,
        /// Range into the list table.
        pub tags: Str,
        /// Range into the list table.
        pub required_tools: Str,
        /// Range into the file table.
        pub files: Str,
        /// Index of SKILL.md in the file table.
        pub skill_md: u32,
        /// Index of schema.json in the file table.
        pub schema: Option<u32>,
        /// Range into the list table: the body's template variables.
        pub template_vars: Str,
        /// Range into the byte blob: the body's precompiled template, when it has one.
        pub template: Option<Str>,
        /// Why the body cannot be rendered (empty when it can).
        pub template_note: Str,
        /// Range into the skill table: every version of this skill, oldest first.
        pub versions: Str,
        /// Whether this is the version an agent gets by name.
        pub default: bool,
        /// Range into the list table: `requires:` as name, range, name, range, ...
        pub requires: Str,
    }

    /// One embedded file's row.
    #[derive(Debug)]
    pub struct FileRecord {
        pub path: Str,
        /// Range into the byte blob.
        pub data: Str,
        pub kind: crate::FileKind,
    }

    /// One frontmatter field's row.
    #[derive(Debug)]
    pub struct FieldRecord {
        pub key: Str,
        pub json: Str,
    }

    /// The tables of a registry.
    #[derive(Debug, Clone, Copy)]
    pub struct Parts {
        pub text: &'static str,
        pub bytes: &'static [u8],
        pub skills: &'static [SkillRecord],
        pub files: &'static [FileRecord],
        pub fields: &'static [FieldRecord],
        pub lists: &'static [Str],
        pub index: &'static phf::Map<&'static str, u32>,
        /// The catalog in every `skillbake_format::catalog::Format`, in `Format::ALL` order.
        pub catalogs: [Str; crate::CatalogFormat::ALL.len()],
        /// Tool definitions as JSON, in `ToolsFormat::ALL` order.
        pub tools: [Str; crate::ToolsFormat::ALL.len()],
        /// The routing index (`skillbake_route::index` layout).
        pub route: &'static [u8],
    }
}
