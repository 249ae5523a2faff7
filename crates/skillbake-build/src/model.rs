//! The validated model of a skills tree: what code generation embeds.

use crate::diagnostic::Position;
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
    /// `requires:` as (skill name, version range), in source order.
    pub requires: Vec<(String, String)>,
    /// Whether this is the version of its skill an agent gets by name (see
    /// [`crate::validate::requires`]); exactly one pack of each name is.
    pub default: bool,
    /// The variables the body reads as a Jinja2 template, sorted (DB-GPT's `input_variables`).
    pub template_vars: Vec<String>,
    /// The body's precompiled template ([`skillbake_format::template::Program::encode`]), or
    /// why it cannot be rendered.
    pub template: Result<Vec<u8>, String>,
    /// What routing indexes and checks (see `generate::route`, `validate::route`).
    pub route: Routing,
}

/// The routing side of a pack.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Routing {
    /// `bucket`, or the pack's parent folder under the skills root (`""` at the root).
    pub bucket: String,
    /// `when_to_use`: one string or a list.
    pub when_to_use: Vec<String>,
    /// `when_not_to_use`: one string or a list (evidence against the pack).
    pub when_not_to_use: Vec<String>,
    /// `route_tests`: requests that must, or must not, route to the pack.
    pub tests: Vec<RouteTest>,
    /// Path of `SKILL.md` in diagnostics.
    pub file: String,
    /// Position of the `description` value.
    pub description_pos: Option<Position>,
}

/// One declared routing test case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteTest {
    /// The request.
    pub query: String,
    /// `true` for `match` (must be in the top K), `false` for `no_match` (must not be).
    pub should_match: bool,
    /// Where the request is written.
    pub pos: Option<Position>,
}

/// The default bucket of a pack: the folder that holds it, relative to the skills root
/// (`support/refund` → `support`; a pack at the root has bucket `""`).
pub fn default_bucket(rel_dir: &str) -> String {
    rel_dir
        .rsplit_once('/')
        .map(|(parent, _)| parent.to_string())
        .unwrap_or_default()
}

/// What the cross-pack checks (`route-test-failed`, `description-near-duplicate`,
/// `catalog-over-budget`) and the routing index need of a pack: small, and kept by the
/// incremental build for the packs it does not check again.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RouteDoc {
    /// The name.
    pub name: String,
    /// The description.
    pub description: String,
    /// `/`-separated folder of the pack relative to the skills root.
    pub rel_dir: String,
    /// `tags`, split as DB-GPT does.
    pub tags: Vec<String>,
    /// The routing side of the pack.
    pub route: Routing,
    /// The pack's terms, as the index weighs them.
    pub terms: crate::generate::route::DocTerms,
}

/// Everything the cross-pack rules read of one pack — its name site (`duplicate-name`), its
/// `requires:` (which version is the default) and its routing facts — kept by the incremental
/// build for the packs it does not check again.
#[derive(Debug, Clone)]
pub struct CrossPack {
    /// Where the name (and version) is declared.
    pub site: crate::validate::duplicate::NameSite,
    /// `requires:` with its places.
    pub requires: Vec<crate::validate::requires::Requirement>,
    /// What routing indexes and checks.
    pub doc: RouteDoc,
}
