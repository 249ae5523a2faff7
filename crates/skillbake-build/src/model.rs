//! The validated model of a skills tree: what code generation embeds.

use crate::diagnostic::Position;
use crate::discover::SourceFile;
use skillbake_format::semver::{Req, Version};

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
    /// `validate::requires`); exactly one pack of each name is.
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
    pub terms: crate::model::DocTerms,
}

/// Everything the cross-pack rules read of one pack — its name site (`duplicate-name`), its
/// `requires:` (which version is the default) and its routing facts — kept by the incremental
/// build for the packs it does not check again.
#[derive(Debug, Clone)]
pub struct CrossPack {
    /// Where the name (and version) is declared.
    pub site: crate::model::NameSite,
    /// `requires:` with its places.
    pub requires: Vec<crate::model::Requirement>,
    /// What routing indexes and checks.
    pub doc: RouteDoc,
}

/// One requirement: a skill name and a version range, and where they are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// The skill required.
    pub skill: String,
    /// The version range, as written.
    pub range: String,
    /// The file the requirement is written in (a pack's `SKILL.md`, `skillbake.toml`, or
    /// `build.rs` for `Config::require`).
    pub file: String,
    /// Position of the skill's name.
    pub name_pos: Option<Position>,
    /// Position of the range.
    pub range_pos: Option<Position>,
}

impl Requirement {
    /// The range, when it parses.
    pub(crate) fn req(&self) -> Option<Req<'_>> {
        Req::parse(&self.range).ok()
    }
}

/// A pack's name and version, and where they are declared.
#[derive(Debug, Clone)]
pub struct NameSite {
    /// The declared name.
    pub name: String,
    /// Path of the pack's `SKILL.md` in diagnostics.
    pub file: String,
    /// Position of the `name` value.
    pub pos: Option<Position>,
    /// `version` as written.
    pub version: Option<String>,
    /// Position of the `version` value.
    pub version_pos: Option<Position>,
    /// Whether the pack's folder is `NAME@VERSION`.
    pub versioned_dir: bool,
}

/// One pack's share of the index: every distinct term with its occurrences per field (weighted
/// by kind), in byte order, and each field's weighted length. It depends on the pack alone, so it
/// is computed once per pack and kept by the incremental build; `generate::route::build_terms` combines them.
///
/// The terms' bytes are kept in one string, one after another, so that a pack's thousand terms
/// are two allocations, not a thousand: the incremental build reads every pack's terms from its
/// cache on every build.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DocTerms {
    /// Every term's bytes, in term order.
    text: String,
    /// For each term, in byte order: where it ends in `text`, and its occurrences per field in
    /// `generate::route::FIELDS` order.
    ends: Vec<(usize, [f32; 8])>,
    /// Weighted length of each field.
    pub len: [f64; 8],
}

impl DocTerms {
    /// No term yet; room for `terms` terms of `bytes` bytes in all.
    pub fn with_capacity(terms: usize, bytes: usize) -> DocTerms {
        DocTerms {
            text: String::with_capacity(bytes),
            ends: Vec::with_capacity(terms),
            len: [0.0; 8],
        }
    }

    /// Adds `term` after the others (terms are added in byte order, each once).
    pub fn push(&mut self, term: &str, tf: [f32; 8]) {
        self.text.push_str(term);
        self.ends.push((self.text.len(), tf));
    }

    /// How many terms.
    pub fn count(&self) -> usize {
        self.ends.len()
    }

    /// Every term's bytes, one after another.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// For each term: where it ends in [`DocTerms::text`], and its occurrences per field.
    pub fn ends(&self) -> &[(usize, [f32; 8])] {
        &self.ends
    }

    /// The terms of `text` that end at `ends` (as [`DocTerms::text`] and [`DocTerms::ends`]
    /// give them), with the fields' lengths `len`; `None` unless every end is a character
    /// boundary of `text`, none is before the one before it, and the last is the text's end.
    pub fn from_parts(
        text: String,
        ends: Vec<(usize, [f32; 8])>,
        len: [f64; 8],
    ) -> Option<DocTerms> {
        let mut start = 0;
        for &(end, _) in &ends {
            if end < start || !text.is_char_boundary(end) {
                return None;
            }
            start = end;
        }
        (start == text.len()).then_some(DocTerms { text, ends, len })
    }

    /// Every term with its occurrences per field, in byte order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[f32; 8])> + '_ {
        let mut start = 0usize;
        self.ends.iter().map(move |(end, tf)| {
            let end = *end;
            let term = self.text.get(start..end).unwrap_or("");
            start = end;
            (term, tf)
        })
    }
}

/// The version a pack is looked up by: its `version` when it is a semantic version, or reads
/// as one ([`Version::parse_lenient`]: `1.2` is 1.2.0 where `version-invalid` is allowed).
pub fn effective_version(version: Option<&str>) -> Option<Version<'_>> {
    Version::parse_lenient(version?)
}

/// A pack that checked, as it would be embedded: a read-only view for tools that validate
/// without generating (see [`Checked::packs`](crate::Checked::packs)).
#[derive(Debug, Clone, Copy)]
pub struct Pack<'a> {
    skill: &'a Skill,
}

impl<'a> Pack<'a> {
    pub(crate) fn new(skill: &'a Skill) -> Self {
        Pack { skill }
    }

    /// The declared name.
    pub fn name(&self) -> &'a str {
        &self.skill.name
    }

    /// `version`, as written.
    pub fn version(&self) -> Option<&'a str> {
        self.skill.version.as_deref()
    }

    /// Whether this is the version of its skill an agent gets by name (exactly one pack of each
    /// name is).
    pub fn is_default(&self) -> bool {
        self.skill.default
    }

    /// The description.
    pub fn description(&self) -> &'a str {
        &self.skill.description
    }

    /// The body as `load_skill` serves it (universal newlines, stripped).
    pub fn body(&self) -> &'a str {
        &self.skill.body
    }

    /// The pack's folder relative to the skills root, `/`-separated (`""` when the root is the
    /// pack).
    pub fn folder(&self) -> &'a str {
        &self.skill.rel_dir
    }

    /// Every file of the pack, `SKILL.md` included, sorted by path, with its exact bytes.
    pub fn files(&self) -> impl ExactSizeIterator<Item = PackFile<'a>> {
        self.skill.files.iter().map(|f| PackFile {
            path: &f.path,
            bytes: &f.bytes,
        })
    }
}

/// A file of a [`Pack`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackFile<'a> {
    /// `/`-separated path relative to the pack's folder.
    pub path: &'a str,
    /// The exact bytes.
    pub bytes: &'a [u8],
}
