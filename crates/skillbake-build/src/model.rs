//! The validated model of a skills tree: what code generation embeds.

use crate::discover::SourceFile;

/// One validated pack, ready to embed.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    /// The declared (and validated) name.
    pub name: String,
    /// The description.
    pub description: String,
    /// `/`-separated folder of the pack relative to the skills root (`""` for a single pack).
    pub rel_dir: String,
    /// The body as `load_skill` serves it (universal newlines, stripped).
    pub body: String,
    /// Every top-level frontmatter field as (key, compact JSON), in source order.
    pub fields: Vec<(String, String)>,
    /// The whole frontmatter as compact JSON.
    pub frontmatter_json: String,
    /// `tags`, split as DB-GPT does.
    pub tags: Vec<String>,
    /// `required_tools`, split as DB-GPT does.
    pub required_tools: Vec<String>,
    /// `version` as written.
    pub version: Option<String>,
    /// Every file of the pack, `SKILL.md` included, sorted by path.
    pub files: Vec<SourceFile>,
    /// Paths of the files to store compressed (`[embed] compress` in `skillbake.toml`), sorted.
    pub compress: Vec<String>,
}
