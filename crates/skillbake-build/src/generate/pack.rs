//! One pack's contribution to the registry: its [`Fragment`] — a text segment, a data segment and
//! its table rows, with cells relative to the fragment — built independently of every other pack
//! (so packs are generated in parallel, and cached between builds by content).
//!
//! Each byte is stored once:
//!
//! * the `load_skill` reply for the pack's own `SKILL.md` path is precomputed whole; the body is
//!   stored only there, escaped, and its head and tail are sub-ranges of it;
//! * `SKILL.md` is stored *spliced*: the text before the body (frontmatter, blank lines) and after
//!   it (trailing whitespace), rebuilt around the unescaped body on first access; a `SKILL.md`
//!   whose body is not a substring of the file (universal newlines changed it) is stored as it is;
//! * short strings (name, description, paths, field values, tags…) are looked up in what the pack
//!   already stored (the reply's head, the frontmatter as written and as JSON) and stored only
//!   when absent;
//! * other UTF-8 files go to the text blob as they are, files that are not UTF-8 to the data blob,
//!   files that the configuration compresses to the data blob as raw DEFLATE.

use crate::model::Skill;
use skillbake_format::chunks;
use skillbake_format::escape::json_into;
use skillbake_format::file_type::{classify, FileKind};
use skillbake_format::layout::{self, body_form, encoding, kind, NONE};

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

/// A table cell before assembly: plain, or relative to something the assembler places.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    /// A value as it is.
    Plain(u32),
    /// An offset into this fragment's text segment.
    Text(u32),
    /// An offset into this fragment's data segment.
    Data(u32),
    /// A row of this fragment's files.
    File(u32),
    /// A row of this fragment's fields.
    Field(u32),
    /// A row of this fragment's list items.
    List(u32),
    /// One of this fragment's byte slots (compressed files).
    ByteSlot(u32),
}

/// What the registry-wide parts (name index, tool definitions) need to know about a pack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// The name.
    pub name: String,
    /// The description.
    pub description: String,
    /// `<location>/SKILL.md`.
    pub skill_md_path: String,
    /// The bytes of `schema.json`, when the pack has one.
    pub schema: Option<Vec<u8>>,
    /// The routing bucket.
    pub bucket: String,
    /// `version` as written.
    pub version: Option<String>,
    /// The pack's folder relative to the skills root.
    pub rel_dir: String,
}

/// One pack, generated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fragment {
    /// The pack's text segment.
    pub text: String,
    /// The pack's data segment.
    pub data: Vec<u8>,
    /// The skill row (`layout::skill::WIDTH` cells).
    pub skill: Vec<Cell>,
    /// File rows (`layout::file::WIDTH` cells each), sorted by path.
    pub files: Vec<Vec<Cell>>,
    /// Field rows.
    pub fields: Vec<[Cell; layout::field::WIDTH]>,
    /// List rows (`tags`, then `required_tools`).
    pub lists: Vec<[Cell; layout::list::WIDTH]>,
    /// Byte slots the pack's compressed files use.
    pub byte_slots: u32,
    /// For the name index and tool definitions.
    pub facts: Facts,
}

/// Where a string sits while the segment is built: the small strings, the reply, or the files.
#[derive(Debug, Clone, Copy)]
enum Region {
    Small,
    Reply,
    Files,
}

#[derive(Debug, Clone, Copy)]
struct Span {
    region: Region,
    start: usize,
    end: usize,
}

/// The text segment under construction: `small ‖ reply ‖ files`.
struct Segment {
    small: String,
    reply: String,
    /// The reply's searchable part (head and echoed path), not the body.
    reply_searchable: usize,
    files: String,
}

impl Segment {
    /// `s`, found in what is stored already (the small strings, the reply's head) or appended
    /// to the small strings.
    fn intern(&mut self, s: &str) -> Span {
        if let Some(i) = self.reply[..self.reply_searchable].find(s) {
            return Span {
                region: Region::Reply,
                start: i,
                end: i + s.len(),
            };
        }
        if let Some(i) = self.small.find(s) {
            return Span {
                region: Region::Small,
                start: i,
                end: i + s.len(),
            };
        }
        self.append(s)
    }

    /// `s` appended to the small strings (searchable by later [`Segment::intern`] calls).
    fn append(&mut self, s: &str) -> Span {
        let start = self.small.len();
        self.small.push_str(s);
        Span {
            region: Region::Small,
            start,
            end: self.small.len(),
        }
    }

    fn offset(&self, region: Region, at: usize) -> usize {
        match region {
            Region::Small => at,
            Region::Reply => self.small.len() + at,
            Region::Files => self.small.len() + self.reply.len() + at,
        }
    }

    fn cells(&self, span: Span) -> Result<[Pre; 2], TooLarge> {
        Ok([
            Pre::At(span.region, span.start),
            Pre::At(span.region, span.end),
        ])
    }

    /// The final cell, once every region has its final size.
    fn finish(&self, pre: Pre) -> Result<Cell, TooLarge> {
        match pre {
            Pre::Done(c) => Ok(c),
            Pre::At(region, at) => Ok(Cell::Text(u32_of(self.offset(region, at))?)),
        }
    }

    fn finish_row<const N: usize>(&self, row: [Pre; N]) -> Result<[Cell; N], TooLarge> {
        let mut out = [Cell::Plain(NONE); N];
        for (o, p) in out.iter_mut().zip(row) {
            *o = self.finish(p)?;
        }
        Ok(out)
    }
}

/// A cell while the segment grows: final, or a position in a region whose offset in the
/// segment is known only at the end.
#[derive(Debug, Clone, Copy)]
enum Pre {
    Done(Cell),
    At(Region, usize),
}

impl From<Cell> for Pre {
    fn from(c: Cell) -> Pre {
        Pre::Done(c)
    }
}

pub(crate) fn u32_of(n: usize) -> Result<u32, TooLarge> {
    u32::try_from(n).ok().filter(|&v| v != NONE).ok_or(TooLarge)
}

fn kind_cell(path: &str, bytes: &[u8]) -> u32 {
    match classify(path, bytes) {
        FileKind::Markdown => kind::MARKDOWN,
        FileKind::Code => kind::CODE,
        FileKind::Text => kind::TEXT,
        FileKind::Binary => kind::BINARY,
    }
}

/// A file's bytes compressed as raw DEFLATE (level 9), when that makes them smaller.
pub fn deflate(bytes: &[u8]) -> Option<Vec<u8>> {
    let packed = miniz_oxide::deflate::compress_to_vec(bytes, 9);
    (packed.len() < bytes.len()).then_some(packed)
}

/// Generates one pack. `prefix` is the location prefix (see `GenOptions`).
pub fn fragment(s: &Skill, prefix: &str) -> Result<Fragment, TooLarge> {
    use layout::skill as col;
    let location = location(prefix, &s.rel_dir);
    let skill_md_path = format!("{location}/SKILL.md");

    // The reply for the pack's own SKILL.md path, whole.
    let mut reply = chunks::head(&s.name);
    let head_end = reply.len();
    json_into(&mut reply, &skill_md_path);
    let reply_searchable = reply.len();
    let tail_start = reply.len();
    reply.push_str(&chunks::tail(&s.body));
    let body_start =
        tail_start + chunks::SEPARATOR.len() + "markdown".len() + chunks::CONTENT.len();
    let body_end = reply.len() - chunks::CLOSE.len();
    let mut seg = Segment {
        small: String::new(),
        reply,
        reply_searchable,
        files: String::new(),
    };
    let reply_span = |start, end| Span {
        region: Region::Reply,
        start,
        end,
    };

    // SKILL.md: spliced around the body when the body is a substring of it.
    let raw_md = s
        .files
        .iter()
        .find(|f| f.path == "SKILL.md")
        .and_then(|f| std::str::from_utf8(&f.bytes).ok());
    let splice = raw_md.and_then(|raw| {
        let at = raw.rfind(s.body.as_str())?;
        let prefix = seg.append(&raw[..at]);
        let suffix = seg.intern(&raw[at + s.body.len()..]);
        Some((at, prefix, suffix))
    });
    let frontmatter = seg.append(&s.frontmatter_json);

    let mut row = [Pre::Done(Cell::Plain(NONE)); col::WIDTH];
    fn put(row: &mut [Pre], at: usize, cells: [Pre; 2]) {
        row[at] = cells[0];
        row[at + 1] = cells[1];
    }
    let name = seg.intern(&s.name);
    put(&mut row, col::NAME, seg.cells(name)?);
    let key = seg.intern(&skillbake_format::name::fold(&s.name));
    put(&mut row, col::KEY, seg.cells(key)?);
    let description = seg.intern(&s.description);
    put(&mut row, col::DESCRIPTION, seg.cells(description)?);
    let md_path = seg.intern(&skill_md_path);
    put(&mut row, col::SKILL_MD_PATH, seg.cells(md_path)?);
    let loc = seg.intern(&location);
    put(&mut row, col::LOCATION, seg.cells(loc)?);
    let reply_len = seg.reply.len();
    put(&mut row, col::REPLY, seg.cells(reply_span(0, reply_len))?);
    row[col::HEAD_END] = seg.cells(reply_span(head_end, head_end))?[0];
    row[col::TAIL_START] = seg.cells(reply_span(tail_start, tail_start))?[0];
    put(
        &mut row,
        col::ESCAPED_BODY,
        seg.cells(reply_span(body_start, body_end))?,
    );
    match splice {
        Some((at, prefix, suffix)) => {
            row[col::BODY] = Pre::Done(Cell::Plain(u32_of(at)?));
            row[col::BODY + 1] = Pre::Done(Cell::Plain(u32_of(at + s.body.len())?));
            row[col::BODY_FORM] = Pre::Done(Cell::Plain(body_form::IN_SKILL_MD));
            put(&mut row, col::SKILL_MD_PREFIX, seg.cells(prefix)?);
            put(&mut row, col::SKILL_MD_SUFFIX, seg.cells(suffix)?);
        }
        None => row[col::BODY_FORM] = Pre::Done(Cell::Plain(body_form::UNESCAPE)),
    }
    put(&mut row, col::FRONTMATTER, seg.cells(frontmatter)?);
    if let Some(v) = &s.version {
        let v = seg.intern(v);
        put(&mut row, col::VERSION, seg.cells(v)?);
    }

    let mut fields = Vec::with_capacity(s.fields.len());
    for (k, json) in &s.fields {
        let k = seg.intern(k);
        let v = seg.intern(json);
        let (k, v) = (seg.cells(k)?, seg.cells(v)?);
        fields.push([k[0], k[1], v[0], v[1]]);
    }
    row[col::FIELDS] = Pre::Done(Cell::Field(0));
    row[col::FIELDS + 1] = Pre::Done(Cell::Field(u32_of(fields.len())?));

    let requires: Vec<String> = s
        .requires
        .iter()
        .flat_map(|(k, v)| [k.clone(), v.clone()])
        .collect();
    let mut lists = Vec::new();
    for (at, items) in [
        (col::TAGS, &s.tags),
        (col::REQUIRED_TOOLS, &s.required_tools),
        (col::TEMPLATE_VARS, &s.template_vars),
        (col::REQUIRES, &requires),
    ] {
        row[at] = Pre::Done(Cell::List(u32_of(lists.len())?));
        for item in items {
            let span = seg.intern(item);
            lists.push(seg.cells(span)?);
        }
        row[at + 1] = Pre::Done(Cell::List(u32_of(lists.len())?));
    }

    // The precompiled template (data), or why there is none (text).
    let mut data = Vec::new();
    let note = match &s.template {
        Ok(program) => {
            row[col::TEMPLATE] = Pre::Done(Cell::Data(u32_of(data.len())?));
            data.extend_from_slice(program);
            row[col::TEMPLATE + 1] = Pre::Done(Cell::Data(u32_of(data.len())?));
            ""
        }
        Err(why) => why.as_str(),
    };
    let note = seg.intern(note);
    put(&mut row, col::TEMPLATE_NOTE, seg.cells(note)?);

    // Files: paths first (small strings), then contents.
    let mut files = Vec::with_capacity(s.files.len());
    let mut byte_slots = 0u32;
    let mut contents = Vec::new();
    for (i, f) in s.files.iter().enumerate() {
        let path = seg.intern(&f.path);
        let mut frow = [Pre::Done(Cell::Plain(NONE)); layout::file::WIDTH];
        let path = seg.cells(path)?;
        frow[layout::file::PATH] = path[0];
        frow[layout::file::PATH + 1] = path[1];
        frow[layout::file::KIND] = Pre::Done(Cell::Plain(kind_cell(&f.path, &f.bytes)));
        frow[layout::file::LEN] = Pre::Done(Cell::Plain(u32_of(f.bytes.len())?));
        if f.path == "SKILL.md" {
            row[col::SKILL_MD] = Pre::Done(Cell::File(u32_of(i)?));
        }
        if f.path == "schema.json" {
            row[col::SCHEMA] = Pre::Done(Cell::File(u32_of(i)?));
        }
        files.push(frow);
        contents.push(i);
    }
    for i in contents {
        let f = &s.files[i];
        let frow = &mut files[i];
        let compressed = s.compress.binary_search(&f.path).is_ok() && f.path != "SKILL.md";
        let packed = if compressed { deflate(&f.bytes) } else { None };
        let text = std::str::from_utf8(&f.bytes).ok();
        if f.path == "SKILL.md" && splice.is_some() {
            frow[layout::file::ENCODING] = Pre::Done(Cell::Plain(encoding::SPLICED));
        } else if let Some(packed) = packed {
            frow[layout::file::ENCODING] = Pre::Done(Cell::Plain(encoding::DEFLATE));
            frow[layout::file::DATA] = Pre::Done(Cell::Data(u32_of(data.len())?));
            data.extend_from_slice(&packed);
            frow[layout::file::DATA + 1] = Pre::Done(Cell::Data(u32_of(data.len())?));
            frow[layout::file::SLOT] = Pre::Done(Cell::ByteSlot(byte_slots));
            byte_slots += 1;
        } else if let Some(text) = text {
            let start = seg.files.len();
            seg.files.push_str(text);
            let span = Span {
                region: Region::Files,
                start,
                end: seg.files.len(),
            };
            let cells = seg.cells(span)?;
            frow[layout::file::ENCODING] = Pre::Done(Cell::Plain(encoding::TEXT));
            frow[layout::file::DATA] = cells[0];
            frow[layout::file::DATA + 1] = cells[1];
        } else {
            frow[layout::file::ENCODING] = Pre::Done(Cell::Plain(encoding::BYTES));
            frow[layout::file::DATA] = Pre::Done(Cell::Data(u32_of(data.len())?));
            data.extend_from_slice(&f.bytes);
            frow[layout::file::DATA + 1] = Pre::Done(Cell::Data(u32_of(data.len())?));
        }
    }
    row[col::FILES] = Pre::Done(Cell::File(0));
    row[col::FILES + 1] = Pre::Done(Cell::File(u32_of(files.len())?));

    // The precomputed reply answers a request for exactly the pack's own `SKILL.md` path when
    // the runtime would resolve that path to the body: it is canonical (not absolute, no `\\`,
    // no empty, `.` or `..` part) and no file of the pack has it as its path.
    let canonical = !skill_md_path.starts_with('/')
        && !skill_md_path.contains('\\')
        && !skill_md_path.contains("://")
        && skill_md_path.as_bytes().get(1) != Some(&b':')
        && skill_md_path.trim() == skill_md_path
        && skill_md_path
            .split('/')
            .all(|p| !matches!(p, "" | "." | ".."));
    let own_is_body = canonical && !s.files.iter().any(|f| f.path == skill_md_path);
    let flags = if own_is_body {
        layout::flags::OWN_PATH_IS_BODY
    } else {
        0
    };
    row[col::FLAGS] = Pre::Done(Cell::Plain(flags));

    let skill = seg.finish_row(row)?.to_vec();
    let files = files
        .into_iter()
        .map(|r| seg.finish_row(r).map(|r| r.to_vec()))
        .collect::<Result<Vec<_>, _>>()?;
    let fields = fields
        .into_iter()
        .map(|r| seg.finish_row(r))
        .collect::<Result<Vec<_>, _>>()?;
    let lists = lists
        .into_iter()
        .map(|r| seg.finish_row(r))
        .collect::<Result<Vec<_>, _>>()?;
    let mut text = seg.small;
    text.push_str(&seg.reply);
    text.push_str(&seg.files);
    u32_of(text.len())?;
    u32_of(data.len())?;
    Ok(Fragment {
        text,
        data,
        skill,
        files,
        fields,
        lists,
        byte_slots,
        facts: Facts {
            name: s.name.clone(),
            description: s.description.clone(),
            skill_md_path,
            schema: s
                .files
                .iter()
                .find(|f| f.path == "schema.json")
                .map(|f| f.bytes.clone()),
            bucket: s.route.bucket.clone(),
            version: s.version.clone(),
            rel_dir: s.rel_dir.clone(),
        },
    })
}
