//! The library half of the `skillbake` command: the packs under `skills/` (or
//! `$SKILLBAKE_SKILLS_DIR` at build time), compiled into [`BUNDLED`] by this package's
//! `build.rs` through `skillbake-build`, exactly as a downstream crate compiles its own.
//!
//! ```
//! let reply = skillbake_cli::BUNDLED.load_skill("CSV-Data-Analysis", "skills/csv-data-analysis/SKILL.md");
//! assert!(reply.starts_with(r#"{"chunks": [{"output_type": "text", "content": "Skill: csv-data-analysis"}"#));
//! ```
//!
//! To embed skills in your own program depend on the runtime, `skillbake`, and compile your
//! packs with `skillbake-build` (see the `skillbake` crate's documentation).

#![forbid(unsafe_code)]

mod bundled {
    skillbake::include_skills!();
}

/// The skill packs shipped with skillbake, compiled in.
pub use bundled::REGISTRY as BUNDLED;

/// [`skillbake::Registry::load_skill`] on [`BUNDLED`].
pub fn load_skill(skill_name: &str, file_path: &str) -> String {
    BUNDLED.load_skill(skill_name, file_path)
}
