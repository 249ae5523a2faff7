//! What every check of one pack reads: the pack, its parsed `SKILL.md` and the configuration.

use crate::config::ProjectConfig;
use crate::discover::PackSource;
use crate::parse::frontmatter::SkillMd;
use crate::parse::jinja::{Analysis, JinjaError};
use yaml_serde::Value;

/// Everything a per-pack rule may look at.
#[derive(Debug)]
pub struct PackCtx<'a> {
    /// The pack as found on disk.
    pub pack: &'a PackSource,
    /// Its parsed `SKILL.md`.
    pub md: &'a SkillMd,
    /// Path of `SKILL.md` in diagnostics.
    pub file: String,
    /// The project configuration.
    pub config: &'a ProjectConfig,
    /// What Jinja2 makes of the body (parsed once per pack: the body rule reports its verdict,
    /// the model keeps its variables).
    pub jinja: &'a Result<Analysis, JinjaError>,
}

impl PackCtx<'_> {
    /// The top-level frontmatter value for `key`, if the frontmatter parsed and has it.
    pub fn field(&self, key: &str) -> Option<&Value> {
        self.md.frontmatter.as_ref()?.mapping.get(key)
    }

    /// The top-level key whose lines hold byte `offset` of `SKILL.md`.
    pub fn key_at(&self, offset: usize) -> Option<&str> {
        let keys = &self.md.frontmatter.as_ref()?.keys;
        keys.iter()
            .find(|k| k.offset <= offset && offset < k.end)
            .map(|k| k.key.as_str())
    }
}
