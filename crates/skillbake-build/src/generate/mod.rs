//! Generate layer: turns validated skills into a small Rust file plus two blobs for `OUT_DIR`.
//!
//! * `skillbake_registry.rs` — the same dozen lines however many packs: where each table starts
//!   in the data blob, the name index's hash key, and `pub static REGISTRY: <runtime>::Registry`;
//! * `skillbake_text.txt` — every string and every UTF-8 file (`include_str!`), pack by pack: the
//!   precomputed `load_skill` reply, `SKILL.md` around its body, names, JSON, files; then the
//!   tool definitions;
//! * `skillbake_data.bin` — the tables of `skillbake_format::layout` (rows of `u32` offsets, no
//!   pointers), then the bytes of binary and compressed files and the precompiled templates
//!   (`include_bytes!`);
//! * `skillbake_route.bin` — the routing index ([`route`]), pulled in with `include_bytes!`.
//!
//! [`pack`] builds one pack's [`Fragment`] (in parallel, cacheable by content); [`assemble`] lays
//! the fragments out and adds the registry-wide parts (the name index, a `phf_generator` perfect
//! hash over the names in lower case, the [`tools`] and the routing index). Output depends only
//! on the skills' content and relative paths: no timestamps, no absolute paths, sorted order, and
//! `phf`'s fixed seed.

pub mod pack;
pub mod route;
pub mod template;
pub mod tools;
pub mod versions;

use crate::model::Skill;
pub use pack::{location, Cell, Facts, Fragment, TooLarge};
use skillbake_format::layout::{self, NONE};
use skillbake_format::tools::Format as ToolsFormat;
use std::fmt::Write as _;

/// File names written to the output directory.
pub const REGISTRY_RS: &str = "skillbake_registry.rs";
/// See [`REGISTRY_RS`].
pub const TEXT_FILE: &str = "skillbake_text.txt";
/// See [`REGISTRY_RS`].
pub const BYTES_FILE: &str = "skillbake_data.bin";
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
    /// `skillbake_data.bin`: the tables, then binary and compressed files and templates.
    pub bytes: Vec<u8>,
    /// `skillbake_route.bin`.
    pub route: Vec<u8>,
}

/// Generates the registry for `skills` (already validated; sorted by name here).
pub fn generate(skills: &[Skill], opts: &GenOptions) -> Result<Generated, TooLarge> {
    generate_with(skills, opts, None)
}

/// [`generate`] with the routing index already built (by `check`) for the same skills.
pub fn generate_with(
    skills: &[Skill],
    opts: &GenOptions,
    route_index: Option<&route::Built>,
) -> Result<Generated, TooLarge> {
    let sorted = versions::order(skills);
    let prefix = opts.location_prefix.as_str();
    let fragments = crate::parallel::par_map(&sorted, |s| pack::fragment(s, prefix))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let defaults: Vec<bool> = sorted.iter().map(|s| s.default).collect();
    // Routing chooses among skills, each at the version an agent gets by name.
    let groups = versions::groups(&sorted);
    let routed: Vec<&Skill> = sorted
        .iter()
        .enumerate()
        .filter(|(i, _)| groups.get(*i).is_some_and(|g| g.default == *i))
        .map(|(_, s)| *s)
        .collect();
    let route_bytes = match route_index {
        Some(built) if built.stats.docs == routed.len() => built.bytes.clone(),
        _ => route::build(&routed).map_err(|_| TooLarge)?.bytes,
    };
    assemble(&fragments, &defaults, route_bytes, opts)
}

/// Lays the fragments (in record order: by name, then version, see [`versions::cmp`]) out into
/// the blobs, rebases their cells, and adds the registry-wide parts: each skill's run of
/// versions and its default (`defaults[i]` marks fragment `i` as the version an agent gets by
/// name, see [`versions::groups_of`]), the name index over the defaults, the tool definitions
/// and `route`, the routing index of the same skills.
pub fn assemble(
    fragments: &[Fragment],
    defaults: &[bool],
    route: Vec<u8>,
    opts: &GenOptions,
) -> Result<Generated, TooLarge> {
    use layout::{field, file, index, list, skill};
    let rt = opts.runtime_path.trim_end_matches("::");
    let n_skills = fragments.len();
    let n_files: usize = fragments.iter().map(|f| f.files.len()).sum();
    let n_fields: usize = fragments.iter().map(|f| f.fields.len()).sum();
    let n_lists: usize = fragments.iter().map(|f| f.lists.len()).sum();
    let n_slots: usize = fragments.iter().map(|f| f.byte_slots as usize).sum();

    // The name index over the names in the form lookups compare (lower case,
    // `skillbake_format::name::fold`); validation rejects two names with the same form
    // (`duplicate-name`), and the first one wins.
    let folded: Vec<std::borrow::Cow<'_, str>> = fragments
        .iter()
        .map(|f| skillbake_format::name::fold(&f.facts.name))
        .collect();
    let keys: Vec<versions::Key<'_>> = fragments
        .iter()
        .enumerate()
        .map(|(i, f)| versions::Key {
            name: &f.facts.name,
            version: f.facts.version.as_deref(),
            rel_dir: &f.facts.rel_dir,
            default: defaults.get(i).copied().unwrap_or(true),
        })
        .collect();
    let groups = versions::groups_of(&keys);
    let is_default = |i: usize| groups.get(i).is_some_and(|g| g.default == i);
    let mut seen = std::collections::HashSet::new();
    let unique: Vec<usize> = (0..n_skills)
        .filter(|&i| is_default(i) && seen.insert(folded[i].as_ref()))
        .collect();
    let keys: Vec<&str> = unique.iter().map(|&i| folded[i].as_ref()).collect();
    let (index_key, disps, slots) = if keys.is_empty() {
        (0, Vec::new(), Vec::new())
    } else {
        let state = phf_generator::generate_hash(&keys);
        let slots: Vec<u32> = state
            .map
            .iter()
            .map(|&k| unique.get(k).map_or(NONE, |&row| row as u32))
            .collect();
        (state.key, state.disps, slots)
    };

    // The data blob: the tables, then the file bytes.
    let tables = [
        (n_skills, skill::WIDTH),
        (n_files, file::WIDTH),
        (n_fields, field::WIDTH),
        (n_lists, list::WIDTH),
        (disps.len(), index::disps::WIDTH),
        (slots.len(), index::slots::WIDTH),
    ];
    let mut at = Vec::with_capacity(tables.len());
    let mut tables_len = 0usize;
    for (rows, width) in tables {
        at.push(tables_len);
        tables_len += rows * width * 4;
    }
    let data_len = tables_len + fragments.iter().map(|f| f.data.len()).sum::<usize>();
    let text_len: usize = fragments.iter().map(|f| f.text.len()).sum();
    let mut text = String::with_capacity(text_len + 64 * n_skills + 4096);
    let mut data = Vec::with_capacity(data_len);
    data.resize(tables_len, 0u8);
    let mut cells: [Vec<u32>; 4] = Default::default();
    cells[0].reserve(n_skills * skill::WIDTH);
    cells[1].reserve(n_files * file::WIDTH);
    let (mut file_base, mut field_base, mut list_base, mut slot_base) = (0u32, 0u32, 0u32, 0u32);
    for f in fragments {
        let text_base = pack::u32_of(text.len())?;
        let data_base = pack::u32_of(data.len())?;
        let rebase = |c: &Cell| -> Result<u32, TooLarge> {
            let (base, v) = match *c {
                Cell::Plain(v) => return Ok(v),
                Cell::Text(v) => (text_base, v),
                Cell::Data(v) => (data_base, v),
                Cell::File(v) => (file_base, v),
                Cell::Field(v) => (field_base, v),
                Cell::List(v) => (list_base, v),
                Cell::ByteSlot(v) => (slot_base, v),
            };
            base.checked_add(v).filter(|&x| x != NONE).ok_or(TooLarge)
        };
        let row = cells[0].len() / skill::WIDTH;
        for c in &f.skill {
            cells[0].push(rebase(c)?);
        }
        // The run of this skill's versions, and whether this row is the default.
        if let Some(cell) = cells[0].get_mut(row * skill::WIDTH..(row + 1) * skill::WIDTH) {
            let group = groups.get(row).copied().unwrap_or_default();
            if let Some(v) = cell.get_mut(skill::VERSIONS) {
                *v = pack::u32_of(group.start)?;
            }
            if let Some(v) = cell.get_mut(skill::VERSIONS + 1) {
                *v = pack::u32_of(group.end)?;
            }
            if let Some(v) = cell.get_mut(skill::FLAGS) {
                if group.default == row {
                    *v |= layout::flags::DEFAULT;
                }
            }
        }
        for row in &f.files {
            for c in row {
                cells[1].push(rebase(c)?);
            }
        }
        for row in &f.fields {
            for c in row {
                cells[2].push(rebase(c)?);
            }
        }
        for row in &f.lists {
            for c in row {
                cells[3].push(rebase(c)?);
            }
        }
        text.push_str(&f.text);
        data.extend_from_slice(&f.data);
        file_base += pack::u32_of(f.files.len())?;
        field_base += pack::u32_of(f.fields.len())?;
        list_base += pack::u32_of(f.lists.len())?;
        slot_base += f.byte_slots;
    }
    let mut put_table = |table: usize, values: &[u32]| {
        for (i, v) in values.iter().enumerate() {
            let o = at[table] + i * 4;
            data[o..o + 4].copy_from_slice(&v.to_le_bytes());
        }
    };
    for (table, values) in cells.iter().enumerate() {
        put_table(table, values);
    }
    let flat: Vec<u32> = disps.iter().flat_map(|&(d1, d2)| [d1, d2]).collect();
    put_table(4, &flat);
    put_table(5, &slots);

    // Registry-wide texts: the tool definitions (the catalogs are rendered at run time).
    let mut push = |s: &str| -> Result<String, TooLarge> {
        let start = pack::u32_of(text.len())?;
        text.push_str(s);
        let end = pack::u32_of(text.len())?;
        Ok(format!("({start}, {end})"))
    };
    // Tools list each skill once, at the version an agent gets by name.
    let sources: Vec<tools::ToolSource<'_>> = fragments
        .iter()
        .enumerate()
        .filter(|(i, _)| is_default(*i))
        .map(|(_, f)| tools::ToolSource {
            name: &f.facts.name,
            description: &f.facts.description,
            skill_md_path: &f.facts.skill_md_path,
            schema: f.facts.schema.as_deref(),
            bucket: &f.facts.bucket,
        })
        .collect();
    let tool_list = tools::tools(&sources);
    let mut tool_texts = Vec::new();
    for format in ToolsFormat::ALL {
        tool_texts.push(push(&tools::render(format, &tool_list))?);
    }
    pack::u32_of(text.len())?;
    pack::u32_of(data.len())?;

    let p = format!("{rt}::__private");
    let table = |i: usize, rows: usize| format!("{p}::Table {{ at: {}, rows: {rows} }}", at[i]);
    let mut code = String::new();
    let _ = writeln!(
        code,
        "// @generated by skillbake-build {}. Do not edit.",
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(
        code,
        "// {} skills ({n_skills} packs), {n_files} files, {} bytes of text, {} bytes of data ({tables_len} of tables).",
        unique.len(),
        text.len(),
        data.len()
    );
    let _ = writeln!(
        code,
        "const _: () = assert!({p}::ROUTE_FORMAT == {}, \"this registry was generated by a skillbake-build whose routing index the skillbake runtime cannot read; use matching versions\");",
        skillbake_route::FORMAT
    );
    if n_slots > 0 {
        let _ = writeln!(
            code,
            "const _: () = assert!({p}::COMPRESS, \"skillbake.toml compresses files: enable the `compress` feature of skillbake\");"
        );
    }
    // Slots for text and bytes decoded on first access (zero-initialised: they cost no file
    // space and no start-up work).
    for (name, ty, n) in [
        ("__SKILLBAKE_TEXT_SLOTS", "TextSlot", n_skills),
        ("__SKILLBAKE_BYTE_SLOTS", "ByteSlot", n_slots),
    ] {
        let init = if n == 0 {
            "[]".to_string()
        } else {
            format!("[const {{ {p}::{ty}::new() }}; {n}]")
        };
        let _ = writeln!(code, "static {name}: [{p}::{ty}; {n}] = {init};");
    }
    let _ = writeln!(code, "static __SKILLBAKE_PARTS: {p}::Parts = {p}::Parts {{");
    let _ = writeln!(code, "    text: include_str!(\"{TEXT_FILE}\"),");
    let _ = writeln!(code, "    data: include_bytes!(\"{BYTES_FILE}\"),");
    let _ = writeln!(code, "    skills: {},", table(0, n_skills));
    let _ = writeln!(code, "    files: {},", table(1, n_files));
    let _ = writeln!(code, "    fields: {},", table(2, n_fields));
    let _ = writeln!(code, "    lists: {},", table(3, n_lists));
    let _ = writeln!(code, "    index_key: {index_key:#x},");
    let _ = writeln!(code, "    index_disps: {},", table(4, disps.len()));
    let _ = writeln!(code, "    index_slots: {},", table(5, slots.len()));
    let _ = writeln!(code, "    tools: [{}],", tool_texts.join(", "));
    let _ = writeln!(code, "    text_slots: &__SKILLBAKE_TEXT_SLOTS,");
    let _ = writeln!(code, "    byte_slots: &__SKILLBAKE_BYTE_SLOTS,");
    let _ = writeln!(code, "    route: include_bytes!(\"{ROUTE_FILE}\"),");
    let _ = writeln!(code, "}};");
    let _ = writeln!(
        code,
        "/// The skills compiled into this binary by skillbake."
    );
    let _ = writeln!(
        code,
        "pub static REGISTRY: {rt}::Registry = {rt}::Registry::__from_parts(&__SKILLBAKE_PARTS);"
    );
    Ok(Generated {
        code,
        text,
        bytes: data,
        route,
    })
}

/// The default location prefix: the last normal component of the skills folder's path, or
/// `skills` when it has none (`.`, `/`).
pub(crate) fn default_prefix(dir: &std::path::Path) -> String {
    use std::path::Component;
    let mut parts: Vec<String> = Vec::new();
    for c in dir.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop();
            }
            _ => {}
        }
    }
    parts.pop().unwrap_or_else(|| "skills".into())
}
