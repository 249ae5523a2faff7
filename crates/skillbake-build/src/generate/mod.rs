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
pub use pack::{location, Cell, Facts, Fragment, Text, TooLarge};
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
    /// The manifest's signature: the public key and the signature, each `ed25519:` and
    /// hexadecimal (`Config::sign_with_key_file`); `None` leaves the registry unsigned.
    pub signature: Option<(String, String)>,
}

/// The generated files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// `skillbake_registry.rs`.
    pub code: String,
    /// `skillbake_text.txt`.
    pub text: TextBlob,
    /// `skillbake_data.bin`: the tables, then binary and compressed files and templates.
    pub bytes: Vec<u8>,
    /// `skillbake_route.bin`.
    pub route: Vec<u8>,
}

/// The registry's text, `skillbake_text.txt` and, past [`PIECE_SHIFT`]'s size,
/// `skillbake_text.1.txt` and on ([`text_file`]): the fragments' text segments and the tool
/// definitions one after the other, laid out in pieces of at most `1 << shift` bytes with no
/// segment crossing from one piece into the next (so that a text offset names its piece by its
/// high bits, see `skillbake::__private::Texts`), kept as those segments (a fragment reused from
/// the build cache shares its text with the cache's store) and written out segment by segment,
/// never copied into one string.
///
/// Why pieces: rustc holds an `include_str!` file several times while compiling it, and under
/// LTO LLVM's bitcode writer holds one constant many times over (at 10,000 packs, 177 MB of
/// text, rustc on the crate that includes the registry: 3.27 GiB as one constant, 1.39 GiB in
/// 8 MiB pieces).
#[derive(Debug, Clone)]
pub struct TextBlob {
    /// Each piece's segments, in order; never empty (a registry without text has one empty
    /// piece).
    pieces: Vec<Vec<Text>>,
    /// The length of the last piece.
    last_len: usize,
    /// The length of every piece together.
    len: usize,
    shift: u32,
}

/// log2 of the text a piece holds at least (8 MiB): a piece is larger only to hold a longer
/// segment.
pub const PIECE_SHIFT: u32 = 23;

/// The file name of the text's piece `piece`: `skillbake_text.txt` for the first (the only one
/// below 8 MiB of text), `skillbake_text.1.txt` and on for the others.
pub fn text_file(piece: usize) -> String {
    if piece == 0 {
        TEXT_FILE.to_string()
    } else {
        format!("skillbake_text.{piece}.txt")
    }
}

impl TextBlob {
    /// An empty text whose pieces span `1 << shift` offsets each: the smallest of
    /// [`PIECE_SHIFT`] and up that holds a segment of `longest` bytes (at most 31, so that every
    /// offset of the first piece fits a `u32` cell and the runtime's shift is defined).
    fn new(longest: usize) -> Result<TextBlob, TooLarge> {
        let mut shift = PIECE_SHIFT;
        while (1usize << shift) < longest {
            shift += 1;
            if shift > 31 {
                return Err(TooLarge);
            }
        }
        Ok(TextBlob {
            pieces: vec![Vec::new()],
            last_len: 0,
            len: 0,
            shift,
        })
    }

    /// Adds `text` at the end, in a new piece when the last one cannot hold it; its range of
    /// text offsets.
    fn push(&mut self, text: Text) -> Result<(u32, u32), TooLarge> {
        if self.last_len > 0 && self.last_len + text.len() > 1usize << self.shift {
            self.pieces.push(Vec::new());
            self.last_len = 0;
        }
        let at = ((self.pieces.len() - 1) << self.shift) + self.last_len;
        let range = (pack::u32_of(at)?, pack::u32_of(at + text.len())?);
        self.last_len += text.len();
        self.len += text.len();
        if let Some(piece) = self.pieces.last_mut() {
            piece.push(text);
        }
        Ok(range)
    }

    /// The length in bytes of every piece together.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// log2 of the text offsets each piece spans.
    pub fn shift(&self) -> u32 {
        self.shift
    }

    /// The pieces, each its segments in order.
    pub fn pieces(&self) -> &[Vec<Text>] {
        &self.pieces
    }

    /// Piece `piece`, read into memory (texts reused from the build cache are read from its
    /// store); empty when there is no such piece.
    pub fn read_piece(&self, piece: usize) -> std::io::Result<String> {
        read_texts(self.pieces.get(piece).into_iter().flatten())
    }

    /// The whole text, every piece one after the other, read into memory.
    pub fn read(&self) -> std::io::Result<String> {
        read_texts(self.pieces.iter().flatten())
    }
}

/// `texts` one after the other, read into one string.
fn read_texts<'a>(texts: impl IntoIterator<Item = &'a Text>) -> std::io::Result<String> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    for t in texts {
        out.extend_from_slice(t.bytes(&mut buf)?);
    }
    String::from_utf8(out).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// Equal when they are laid out in the same pieces and the bytes of each are the same, however
/// each piece is split into segments (a text that cannot be read equals none).
impl PartialEq for TextBlob {
    fn eq(&self, other: &TextBlob) -> bool {
        self.shift == other.shift
            && self.pieces.len() == other.pieces.len()
            && (0..self.pieces.len()).all(
                |k| matches!((self.read_piece(k), other.read_piece(k)), (Ok(a), Ok(b)) if a == b),
            )
    }
}

impl Eq for TextBlob {}

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
    let index = NameIndex::of(fragments, defaults);
    let counts = Counts::of(fragments, &index);
    let (at, tables_len) = table_offsets(&counts);
    let tools = tool_texts(fragments, &index);
    let longest = fragments
        .iter()
        .map(|f| f.text.len())
        .chain(tools.iter().map(Text::len))
        .max()
        .unwrap_or(0);
    let mut text = TextBlob::new(longest)?;
    let (mut data, cells) = rebase(fragments, &index.groups, tables_len, &mut text)?;
    write_tables(&mut data, &at, &cells, &index);
    let tool_texts = tools
        .into_iter()
        .map(|t| text.push(t).map(|(start, end)| format!("({start}, {end})")))
        .collect::<Result<Vec<_>, _>>()?;
    pack::u32_of(data.len())?;
    let sizes = Sizes {
        text: text.len(),
        pieces: text.pieces().len(),
        shift: text.shift(),
        data: data.len(),
        tables: tables_len,
    };
    let code = registry_code(opts, &counts, &index, &at, &tool_texts, &sizes);
    Ok(Generated {
        code,
        text,
        bytes: data,
        route,
    })
}

/// The name index over the names in the form lookups compare (lower case,
/// `skillbake_format::name::fold`), with each skill's run of versions.
struct NameIndex {
    /// Per fragment, the run of its skill's versions and which of them is the default.
    groups: Vec<versions::Group>,
    /// The rows the index holds: the default row of each skill, first name of a form first.
    unique: Vec<usize>,
    /// The hash key, the displacements and the slots (`phf_generator`).
    key: u64,
    disps: Vec<(u32, u32)>,
    slots: Vec<u32>,
}

impl NameIndex {
    fn of(fragments: &[Fragment], defaults: &[bool]) -> NameIndex {
        // Validation rejects two names with the same form (`duplicate-name`); the first wins.
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
        let mut seen = std::collections::HashSet::new();
        let unique: Vec<usize> = (0..fragments.len())
            .filter(|&i| groups.get(i).is_some_and(|g| g.default == i))
            .filter(|&i| seen.insert(folded[i].as_ref()))
            .collect();
        let names: Vec<&str> = unique.iter().map(|&i| folded[i].as_ref()).collect();
        let (key, disps, slots) = if names.is_empty() {
            (0, Vec::new(), Vec::new())
        } else {
            let state = phf_generator::generate_hash(&names);
            let slots: Vec<u32> = state
                .map
                .iter()
                .map(|&k| unique.get(k).map_or(NONE, |&row| row as u32))
                .collect();
            (state.key, state.disps, slots)
        };
        NameIndex {
            groups,
            unique,
            key,
            disps,
            slots,
        }
    }

    /// Whether fragment `i` is the version of its skill an agent gets by name.
    fn is_default(&self, i: usize) -> bool {
        self.groups.get(i).is_some_and(|g| g.default == i)
    }
}

/// The rows of every table.
struct Counts {
    skills: usize,
    files: usize,
    fields: usize,
    lists: usize,
    byte_slots: usize,
    disps: usize,
    slots: usize,
}

impl Counts {
    fn of(fragments: &[Fragment], index: &NameIndex) -> Counts {
        Counts {
            skills: fragments.len(),
            files: fragments.iter().map(|f| f.files.len()).sum(),
            fields: fragments.iter().map(|f| f.fields.len()).sum(),
            lists: fragments.iter().map(|f| f.lists.len()).sum(),
            byte_slots: fragments.iter().map(|f| f.byte_slots as usize).sum(),
            disps: index.disps.len(),
            slots: index.slots.len(),
        }
    }
}

/// Where each table starts in the data blob (skill, file, field, list, disps, slots), and the
/// length of them all.
fn table_offsets(c: &Counts) -> (Vec<usize>, usize) {
    use layout::{field, file, index, list, skill};
    let tables = [
        (c.skills, skill::WIDTH),
        (c.files, file::WIDTH),
        (c.fields, field::WIDTH),
        (c.lists, list::WIDTH),
        (c.disps, index::disps::WIDTH),
        (c.slots, index::slots::WIDTH),
    ];
    let mut at = Vec::with_capacity(tables.len());
    let mut len = 0usize;
    for (rows, width) in tables {
        at.push(len);
        len += rows * width * 4;
    }
    (at, len)
}

/// The cells of the skill, file, field and list tables, in that order.
type TableCells = [Vec<u32>; 4];

/// The fragments' text (appended to `text`) and data one after the other (the data after
/// `tables_len` bytes left for the tables), and their cells rebased onto the whole registry;
/// each skill row gets the run of its versions and its default flag.
fn rebase(
    fragments: &[Fragment],
    groups: &[versions::Group],
    tables_len: usize,
    text: &mut TextBlob,
) -> Result<(Vec<u8>, TableCells), TooLarge> {
    use layout::skill;
    let data_len = tables_len + fragments.iter().map(|f| f.data.len()).sum::<usize>();
    let mut data = Vec::with_capacity(data_len);
    data.resize(tables_len, 0u8);
    let mut cells: TableCells = Default::default();
    cells[0].reserve(fragments.len() * skill::WIDTH);
    let mut base = Bases::default();
    for f in fragments {
        base.text = text.push(f.text.clone())?.0;
        base.data = pack::u32_of(data.len())?;
        let row = cells[0].len() / skill::WIDTH;
        for c in &f.skill {
            cells[0].push(base.rebase(c)?);
        }
        let group = groups.get(row).copied().unwrap_or_default();
        mark_versions(&mut cells[0], row, group)?;
        for c in rows_of(&f.files) {
            cells[1].push(base.rebase(c)?);
        }
        for c in rows_of(&f.fields) {
            cells[2].push(base.rebase(c)?);
        }
        for c in rows_of(&f.lists) {
            cells[3].push(base.rebase(c)?);
        }
        data.extend_from_slice(&f.data);
        base.file += pack::u32_of(f.files.len())?;
        base.field += pack::u32_of(f.fields.len())?;
        base.list += pack::u32_of(f.lists.len())?;
        base.slot += f.byte_slots;
    }
    Ok((data, cells))
}

/// Every cell of a fragment's rows, in order.
fn rows_of<R: AsRef<[Cell]>>(rows: &[R]) -> impl Iterator<Item = &Cell> {
    rows.iter().flat_map(|r| r.as_ref().iter())
}

/// Where the current fragment's text, data and rows start in the registry's.
#[derive(Default)]
struct Bases {
    text: u32,
    data: u32,
    file: u32,
    field: u32,
    list: u32,
    slot: u32,
}

impl Bases {
    /// A fragment's cell as a cell of the registry.
    fn rebase(&self, c: &Cell) -> Result<u32, TooLarge> {
        let (base, v) = match *c {
            Cell::Plain(v) => return Ok(v),
            Cell::Text(v) => (self.text, v),
            Cell::Data(v) => (self.data, v),
            Cell::File(v) => (self.file, v),
            Cell::Field(v) => (self.field, v),
            Cell::List(v) => (self.list, v),
            Cell::ByteSlot(v) => (self.slot, v),
        };
        base.checked_add(v).filter(|&x| x != NONE).ok_or(TooLarge)
    }
}

/// Sets skill row `row`'s run of versions and, on the default one, the default flag.
fn mark_versions(skills: &mut [u32], row: usize, group: versions::Group) -> Result<(), TooLarge> {
    use layout::skill;
    let Some(cell) = skills.get_mut(row * skill::WIDTH..(row + 1) * skill::WIDTH) else {
        return Ok(());
    };
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
    Ok(())
}

/// Writes every table into the space left for them at the start of `data`.
fn write_tables(data: &mut [u8], at: &[usize], cells: &TableCells, index: &NameIndex) {
    let mut put_table = |table: usize, values: &[u32]| {
        for (i, v) in values.iter().enumerate() {
            let o = at[table] + i * 4;
            data[o..o + 4].copy_from_slice(&v.to_le_bytes());
        }
    };
    for (table, values) in cells.iter().enumerate() {
        put_table(table, values);
    }
    let flat: Vec<u32> = index.disps.iter().flat_map(|&(d1, d2)| [d1, d2]).collect();
    put_table(4, &flat);
    put_table(5, &slot_rows(&index.slots, &cells[0]));
}

/// The slot table: each slot's skill row, then a copy of that row's hit run
/// (`layout::index::slots`); all `NONE` for a slot that holds no row.
fn slot_rows(slots: &[u32], skills: &[u32]) -> Vec<u32> {
    use layout::{index, skill};
    let mut out = Vec::with_capacity(slots.len() * index::slots::WIDTH);
    for &row in slots {
        let start = row as usize * skill::WIDTH + skill::HIT;
        let run = skills.get(start..start + skill::HIT_CELLS);
        out.push(if run.is_some() { row } else { NONE });
        out.extend(run.unwrap_or(&[NONE; skill::HIT_CELLS]));
    }
    out
}

/// The registry-wide texts: the tool definitions, in every dialect, in `ToolsFormat::ALL`
/// order (the catalogs are rendered at run time). Tools list each skill once, at the version an
/// agent gets by name.
fn tool_texts(fragments: &[Fragment], index: &NameIndex) -> Vec<Text> {
    let sources: Vec<tools::ToolSource<'_>> = fragments
        .iter()
        .enumerate()
        .filter(|(i, _)| index.is_default(*i))
        .map(|(_, f)| tools::ToolSource {
            name: &f.facts.name,
            description: &f.facts.description,
            skill_md_path: &f.facts.skill_md_path,
            schema: f.facts.schema.as_deref(),
            bucket: &f.facts.bucket,
        })
        .collect();
    let tool_list = tools::tools(&sources);
    ToolsFormat::ALL
        .iter()
        .map(|&format| Text::new(tools::render(format, &tool_list)))
        .collect()
}

/// The final sizes of the blobs, for the generated file's header.
struct Sizes {
    text: usize,
    /// The text's pieces and the offsets each spans (log2).
    pieces: usize,
    shift: u32,
    data: usize,
    tables: usize,
}

/// The generated Rust file: a header, the format and feature assertions, the decode slots, the
/// `Parts` literal and `REGISTRY`.
fn registry_code(
    opts: &GenOptions,
    counts: &Counts,
    index: &NameIndex,
    at: &[usize],
    tool_texts: &[String],
    sizes: &Sizes,
) -> String {
    let rt = opts.runtime_path.trim_end_matches("::");
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
        "// {} skills ({} packs), {} files, {} bytes of text, {} bytes of data ({} of tables).",
        index.unique.len(),
        counts.skills,
        counts.files,
        sizes.text,
        sizes.data,
        sizes.tables
    );
    let _ = writeln!(
        code,
        "const _: () = assert!({p}::ROUTE_FORMAT == {}, \"this registry was generated by a skillbake-build whose routing index the skillbake runtime cannot read; use matching versions\");",
        skillbake_route::FORMAT
    );
    let _ = writeln!(
        code,
        "const _: () = assert!({p}::LAYOUT_FORMAT == {}, \"this registry was generated by a skillbake-build whose tables the skillbake runtime cannot read; use matching versions\");",
        layout::FORMAT
    );
    if counts.byte_slots > 0 {
        let _ = writeln!(
            code,
            "const _: () = assert!({p}::COMPRESS, \"skillbake.toml compresses files: enable the `compress` feature of skillbake\");"
        );
    }
    // Slots for text and bytes decoded on first access (zero-initialised: they cost no file
    // space and no start-up work).
    for (name, ty, n) in [
        ("__SKILLBAKE_TEXT_SLOTS", "TextSlot", counts.skills),
        ("__SKILLBAKE_BYTE_SLOTS", "ByteSlot", counts.byte_slots),
    ] {
        let init = if n == 0 {
            "[]".to_string()
        } else {
            format!("[const {{ {p}::{ty}::new() }}; {n}]")
        };
        let _ = writeln!(code, "static {name}: [{p}::{ty}; {n}] = {init};");
    }
    let _ = writeln!(code, "static __SKILLBAKE_PARTS: {p}::Parts = {p}::Parts {{");
    let pieces: Vec<String> = (0..sizes.pieces)
        .map(|k| format!("include_str!({:?})", text_file(k)))
        .collect();
    let _ = writeln!(
        code,
        "    text: {p}::Texts {{ pieces: &[{}], shift: {} }},",
        pieces.join(", "),
        sizes.shift
    );
    let _ = writeln!(code, "    data: include_bytes!(\"{BYTES_FILE}\"),");
    let _ = writeln!(code, "    skills: {},", table(0, counts.skills));
    let _ = writeln!(code, "    files: {},", table(1, counts.files));
    let _ = writeln!(code, "    fields: {},", table(2, counts.fields));
    let _ = writeln!(code, "    lists: {},", table(3, counts.lists));
    let _ = writeln!(code, "    index_key: {:#x},", index.key);
    let _ = writeln!(code, "    index_disps: {},", table(4, counts.disps));
    let _ = writeln!(code, "    index_slots: {},", table(5, counts.slots));
    let _ = writeln!(code, "    tools: [{}],", tool_texts.join(", "));
    let _ = writeln!(code, "    text_slots: &__SKILLBAKE_TEXT_SLOTS,");
    let _ = writeln!(code, "    byte_slots: &__SKILLBAKE_BYTE_SLOTS,");
    let _ = writeln!(code, "    route: include_bytes!(\"{ROUTE_FILE}\"),");
    let (key, signature) = opts.signature.clone().unwrap_or_default();
    let _ = writeln!(code, "    signing_key: {key:?},");
    let _ = writeln!(code, "    signature: {signature:?},");
    let _ = writeln!(code, "}};");
    let _ = writeln!(
        code,
        "/// The skills compiled into this binary by skillbake."
    );
    let _ = writeln!(
        code,
        "pub static REGISTRY: {rt}::Registry = {rt}::Registry::__from_parts(&__SKILLBAKE_PARTS);"
    );
    code
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

#[cfg(test)]
mod tests {
    use super::{Text, TextBlob, PIECE_SHIFT};

    fn text(len: usize) -> Text {
        Text::new("x".repeat(len))
    }

    /// A segment goes into the last piece while it fits and starts a new one when it does not;
    /// its offsets name the piece in their high bits.
    #[test]
    fn segments_fill_a_piece_then_start_the_next() {
        let piece = 1usize << PIECE_SHIFT;
        let mut t = TextBlob::new(piece).unwrap();
        assert_eq!(t.shift(), PIECE_SHIFT);
        assert_eq!(t.push(text(piece - 10)).unwrap(), (0, (piece - 10) as u32));
        assert_eq!(
            t.push(text(10)).unwrap(),
            ((piece - 10) as u32, piece as u32)
        );
        assert_eq!(t.push(text(1)).unwrap(), (piece as u32, piece as u32 + 1));
        assert_eq!(
            t.push(text(piece)).unwrap(),
            (2 * piece as u32, 3 * piece as u32)
        );
        assert_eq!(t.pieces().len(), 3);
        assert_eq!(t.len(), 2 * piece + 1);
        assert_eq!(t.read_piece(1).unwrap(), "x");
        assert_eq!(t.read_piece(3).unwrap(), "");
    }

    /// A segment longer than a piece makes every piece as long as the next power of two; past
    /// 2 GiB no shift is left that both sides read.
    #[test]
    fn the_longest_segment_sets_the_piece_size() {
        assert_eq!(TextBlob::new(0).unwrap().shift(), PIECE_SHIFT);
        assert_eq!(
            TextBlob::new((1 << PIECE_SHIFT) + 1).unwrap().shift(),
            PIECE_SHIFT + 1
        );
        assert_eq!(TextBlob::new(1 << 31).unwrap().shift(), 31);
        assert!(TextBlob::new((1 << 31) + 1).is_err());
    }
}
