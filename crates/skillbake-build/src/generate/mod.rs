//! Generate layer: turns validated skills into Rust source plus two data files for `OUT_DIR`.
//!
//! * `skillbake_registry.rs` — record tables and a `phf` map from name to record, defining
//!   `pub static REGISTRY: <runtime>::Registry`;
//! * `skillbake_text.txt` — every string the records point into (names, bodies, precomputed
//!   `load_skill` chunks, frontmatter JSON), pulled in with `include_str!`;
//! * `skillbake_files.bin` — the exact bytes of every embedded file, pulled in with `include_bytes!`;
//! * `skillbake_route.bin` — the routing index ([`route`]), pulled in with `include_bytes!`.
//!
//! Output depends only on the skills' content and relative paths: no timestamps, no absolute
//! paths, sorted order, and `phf`'s fixed seed.

pub mod route;
pub mod template;
pub mod tools;
pub mod versions;

use crate::model::Skill;
use skillbake_format::file_type::classify;
use skillbake_format::{catalog, chunks, tools::Format as ToolsFormat};
use std::fmt::Write as _;

/// File names written to the output directory.
pub const REGISTRY_RS: &str = "skillbake_registry.rs";
/// See [`REGISTRY_RS`].
pub const TEXT_FILE: &str = "skillbake_text.txt";
/// See [`REGISTRY_RS`].
pub const BYTES_FILE: &str = "skillbake_files.bin";
/// See [`REGISTRY_RS`].
pub const ROUTE_FILE: &str = "skillbake_route.bin";

/// How generated code refers to the outside world.
#[derive(Debug, Clone)]
pub struct GenOptions {
    /// Path of the runtime crate in generated code (default `::skillbake`).
    pub runtime_path: String,
    /// Prefix of every pack's location in `File path:` (default: the skills folder's name).
    pub location_prefix: String,
}

/// The generated files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// `skillbake_registry.rs`.
    pub code: String,
    /// `skillbake_text.txt`.
    pub text: String,
    /// `skillbake_files.bin`.
    pub bytes: Vec<u8>,
    /// `skillbake_route.bin`.
    pub route: Vec<u8>,
}

/// The data does not fit the 32-bit offsets of the tables (4 GiB).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooLarge;

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the skills tree is larger than 4 GiB and cannot be embedded")
    }
}

impl std::error::Error for TooLarge {}

/// The location of a pack as `load_skill` echoes it: `<prefix>/<rel_dir>`.
pub fn location(prefix: &str, rel_dir: &str) -> String {
    crate::discover::join(prefix, rel_dir)
}

struct Builder {
    text: String,
    bytes: Vec<u8>,
}

impl Builder {
    fn str(&mut self, s: &str) -> Result<String, TooLarge> {
        let start = u32::try_from(self.text.len()).map_err(|_| TooLarge)?;
        self.text.push_str(s);
        let end = u32::try_from(self.text.len()).map_err(|_| TooLarge)?;
        Ok(format!("({start}, {end})"))
    }

    fn bytes(&mut self, b: &[u8]) -> Result<String, TooLarge> {
        let start = u32::try_from(self.bytes.len()).map_err(|_| TooLarge)?;
        self.bytes.extend_from_slice(b);
        let end = u32::try_from(self.bytes.len()).map_err(|_| TooLarge)?;
        Ok(format!("({start}, {end})"))
    }
}

fn range(start: usize, end: usize) -> Result<String, TooLarge> {
    let s = u32::try_from(start).map_err(|_| TooLarge)?;
    let e = u32::try_from(end).map_err(|_| TooLarge)?;
    Ok(format!("({s}, {e})"))
}

/// Generates the registry for `skills` (already sorted by name and validated).
pub fn generate(skills: &[Skill], opts: &GenOptions) -> Result<Generated, TooLarge> {
    generate_with(skills, opts, None)
}

/// [`generate`] with the routing index already built (by `check`) for the same skills.
pub fn generate_with(
    skills: &[Skill],
    opts: &GenOptions,
    route_index: Option<&route::Built>,
) -> Result<Generated, TooLarge> {
    let rt = opts.runtime_path.trim_end_matches("::");
    let mut b = Builder {
        text: String::new(),
        bytes: Vec::new(),
    };
    let sorted = versions::order(skills);
    let groups = versions::groups(&sorted);

    let mut skill_rows = String::new();
    let mut file_rows = String::new();
    let mut field_rows = String::new();
    let mut list_rows = String::new();
    let (mut n_files, mut n_fields, mut n_lists) = (0usize, 0usize, 0usize);
    let phf_path = format!("{rt}::__private::phf");
    let mut index = phf_codegen::Map::<&str>::new();
    index.phf_path(&phf_path);
    // The index holds every name in the form lookups compare (lower case); names are unique in
    // that form (`duplicate-name`).
    let folded: Vec<String> = sorted
        .iter()
        .map(|s| skillbake_format::name::fold(&s.name).into_owned())
        .collect();

    for (i, s) in sorted.iter().enumerate() {
        let location = location(&opts.location_prefix, &s.rel_dir);
        let skill_md_path = format!("{location}/SKILL.md");
        let name = b.str(&s.name)?;
        let description = b.str(&s.description)?;
        let loc = b.str(&location)?;
        let md_path = b.str(&skill_md_path)?;
        let body = b.str(&s.body)?;
        let head = b.str(&chunks::head(&s.name))?;
        let tail = b.str(&chunks::tail(&s.body))?;
        let frontmatter = b.str(&s.frontmatter_json)?;
        let version = match &s.version {
            Some(v) => format!("Some({})", b.str(v)?),
            None => "None".into(),
        };

        let fields_start = n_fields;
        for (k, json) in &s.fields {
            let k = b.str(k)?;
            let v = b.str(json)?;
            let _ = writeln!(
                field_rows,
                "    {rt}::__private::FieldRecord {{ key: {k}, json: {v} }},"
            );
            n_fields += 1;
        }
        let mut list = |items: &[String], b: &mut Builder| -> Result<String, TooLarge> {
            let start = n_lists;
            for it in items {
                let r = b.str(it)?;
                let _ = writeln!(list_rows, "    {r},");
                n_lists += 1;
            }
            range(start, n_lists)
        };
        let tags = list(&s.tags, &mut b)?;
        let tools = list(&s.required_tools, &mut b)?;
        let pairs: Vec<String> = s
            .requires
            .iter()
            .flat_map(|(k, v)| [k.clone(), v.clone()])
            .collect();
        let requires = list(&pairs, &mut b)?;
        let group = groups.get(i).copied().unwrap_or_default();
        let template_vars = list(&s.template_vars, &mut b)?;
        let (template, template_note) = template::record(&s.template, &mut b)?;

        let files_start = n_files;
        let mut skill_md = 0usize;
        let mut schema = "None".to_string();
        for f in &s.files {
            if f.path == "SKILL.md" {
                skill_md = n_files;
            }
            if f.path == "schema.json" {
                schema = format!("Some({n_files})");
            }
            let path = b.str(&f.path)?;
            let data = b.bytes(&f.bytes)?;
            let kind = classify(&f.path, &f.bytes);
            let _ = writeln!(
                file_rows,
                "    {rt}::__private::FileRecord {{ path: {path}, data: {data}, kind: {rt}::FileKind::{kind:?} }},"
            );
            n_files += 1;
        }
        let _ = writeln!(
            skill_rows,
            "    {rt}::__private::SkillRecord {{ name: {name}, description: {description}, location: {loc}, skill_md_path: {md_path}, body: {body}, head: {head}, tail: {tail}, frontmatter: {frontmatter}, version: {version}, fields: {}, tags: {tags}, required_tools: {tools}, files: {}, skill_md: {skill_md}, schema: {schema}, template_vars: {template_vars}, template: {template}, template_note: {template_note}, versions: {}, default: {}, requires: {requires} }},",
            range(fields_start, n_fields)?,
            range(files_start, n_files)?,
            range(group.start, group.end)?,
            group.default == i,
        );
        if group.default == i {
            index.entry(folded[i].as_str(), format!("{i}u32"));
        }
    }
    // Catalogs and tools list each skill once, at the version an agent gets by name.
    let n_packs = sorted.len();
    let sorted: Vec<&Skill> = sorted
        .iter()
        .enumerate()
        .filter(|(i, _)| groups.get(*i).is_some_and(|g| g.default == *i))
        .map(|(_, s)| *s)
        .collect();

    // Registry-wide texts: the catalog in every format (no budget) and the tool definitions.
    let locations: Vec<String> = sorted
        .iter()
        .map(|s| format!("{}/SKILL.md", location(&opts.location_prefix, &s.rel_dir)))
        .collect();
    let tag_lists: Vec<Vec<&str>> = sorted
        .iter()
        .map(|s| s.tags.iter().map(String::as_str).collect())
        .collect();
    let entries: Vec<catalog::Entry<'_>> = sorted
        .iter()
        .zip(&locations)
        .zip(&tag_lists)
        .map(|((s, loc), tags)| catalog::Entry {
            name: &s.name,
            description: &s.description,
            location: loc,
            tags,
        })
        .collect();
    let mut catalogs = Vec::new();
    for format in catalog::Format::ALL {
        catalogs.push(b.str(&catalog::render(format, &entries, None).text)?);
    }
    let location_of =
        |s: &Skill| format!("{}/SKILL.md", location(&opts.location_prefix, &s.rel_dir));
    let tool_list = tools::tools(&sorted, &location_of);
    let mut tool_texts = Vec::new();
    for format in ToolsFormat::ALL {
        tool_texts.push(b.str(&tools::render(format, &tool_list))?);
    }

    let route_bytes = match route_index {
        Some(built) if built.stats.docs == sorted.len() => built.bytes.clone(),
        _ => route::build(&sorted).map_err(|_| TooLarge)?.bytes,
    };

    let mut code = String::new();
    let _ = writeln!(
        code,
        "// @generated by skillbake-build {}. Do not edit.",
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(
        code,
        "// {} skills ({} packs), {} files, {} bytes of text, {} bytes of file data.",
        sorted.len(),
        n_packs,
        n_files,
        b.text.len(),
        b.bytes.len()
    );
    let _ = writeln!(
        code,
        "const __SKILLBAKE_TEXT: &str = include_str!(\"{TEXT_FILE}\");"
    );
    let _ = writeln!(
        code,
        "const __SKILLBAKE_BYTES: &[u8] = include_bytes!(\"{BYTES_FILE}\");"
    );
    let _ = writeln!(
        code,
        "const __SKILLBAKE_ROUTE: &[u8] = include_bytes!(\"{ROUTE_FILE}\");"
    );
    let _ = writeln!(
        code,
        "const _: () = assert!({rt}::__private::ROUTE_FORMAT == {}, \"this registry was generated by a skillbake-build whose routing index the skillbake runtime cannot read; use matching versions\");",
        skillbake_route::FORMAT
    );
    let _ = writeln!(
        code,
        "static __SKILLBAKE_SKILLS: [{rt}::__private::SkillRecord; {n_packs}] = [\n{skill_rows}];"
    );
    let _ = writeln!(
        code,
        "static __SKILLBAKE_FILES: [{rt}::__private::FileRecord; {n_files}] = [\n{file_rows}];"
    );
    let _ = writeln!(
        code,
        "static __SKILLBAKE_FIELDS: [{rt}::__private::FieldRecord; {n_fields}] = [\n{field_rows}];"
    );
    let _ = writeln!(
        code,
        "static __SKILLBAKE_LISTS: [{rt}::__private::Str; {n_lists}] = [\n{list_rows}];"
    );
    let _ = writeln!(
        code,
        "static __SKILLBAKE_INDEX: {rt}::__private::phf::Map<&'static str, u32> = {};",
        index.build()
    );
    let _ = writeln!(
        code,
        "/// The skills compiled into this binary by skillbake."
    );
    let _ = writeln!(
        code,
        "pub static REGISTRY: {rt}::Registry = {rt}::Registry::__from_parts({rt}::__private::Parts {{ text: __SKILLBAKE_TEXT, bytes: __SKILLBAKE_BYTES, skills: &__SKILLBAKE_SKILLS, files: &__SKILLBAKE_FILES, fields: &__SKILLBAKE_FIELDS, lists: &__SKILLBAKE_LISTS, index: &__SKILLBAKE_INDEX, catalogs: [{}], tools: [{}], route: __SKILLBAKE_ROUTE }});",
        catalogs.join(", "),
        tool_texts.join(", ")
    );
    Ok(Generated {
        code,
        text: b.text,
        bytes: b.bytes,
        route: route_bytes,
    })
}
