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

use crate::discover::SourceFile;
use crate::model::Skill;
use skillbake_format::chunks;
use skillbake_format::escape::json_into;
use skillbake_format::file_type::{classify, FileKind};
use skillbake_format::layout::{self, body_form, encoding, kind, NONE};
use std::ops::Range;
use std::sync::Arc;

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
    pub text: Text,
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

/// A fragment's text segment: made by this build, or a stretch of the text the build cache keeps
/// (`cache`), which every fragment reused from it shares instead of holding a copy, and which is
/// read from the cache's file only when the registry's text is written out.
#[derive(Clone)]
pub struct Text {
    src: Src,
    range: Range<usize>,
}

#[derive(Clone)]
enum Src {
    Own(Arc<String>),
    Stored(Arc<StoredText>),
}

/// Text kept in a file (the build cache's text store): `len` bytes from `offset`, read a stretch
/// at a time when asked. The file is the one opened when the cache was read, so a store written
/// anew under the same name meanwhile does not change what it reads.
pub struct StoredText {
    file: std::sync::Mutex<std::fs::File>,
    offset: u64,
    len: usize,
}

impl StoredText {
    /// The `len` bytes of `file` from `offset`.
    pub fn new(file: std::fs::File, offset: u64, len: usize) -> StoredText {
        StoredText {
            file: std::sync::Mutex::new(file),
            offset,
            len,
        }
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes `range` (within it), read into `buf`; an error unless they are UTF-8 (a store
    /// damaged on disk is found here, not written into the registry).
    fn read_into(&self, range: Range<usize>, buf: &mut Vec<u8>) -> std::io::Result<()> {
        use std::io::{Read, Seek, SeekFrom};
        let damaged = |what: &str| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("the build cache's text store {what}; delete the build's output folder (`cargo clean`) to start over"),
            )
        };
        if range.end > self.len {
            return Err(damaged("is shorter than its cache says"));
        }
        buf.clear();
        buf.resize(range.len(), 0);
        // A panic while the file was held leaves it usable: every read seeks first.
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        file.seek(SeekFrom::Start(self.offset + range.start as u64))?;
        file.read_exact(buf)?;
        if std::str::from_utf8(buf).is_err() {
            return Err(damaged("holds text that is not UTF-8"));
        }
        Ok(())
    }
}

/// The segment's text (not the store around it), or where it is in the store when it cannot
/// be read.
impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut buf = Vec::new();
        match self.bytes(&mut buf) {
            Ok(b) => std::fmt::Debug::fmt(&String::from_utf8_lossy(b), f),
            Err(e) => write!(f, "<stored text {:?}: {e}>", self.range),
        }
    }
}

/// Texts are equal when their bytes are, wherever they are kept (a text that cannot be read
/// equals none).
impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        match (self.bytes(&mut a), other.bytes(&mut b)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Text {}

impl Text {
    /// A segment of its own.
    pub fn new(text: String) -> Text {
        let range = 0..text.len();
        Text {
            src: Src::Own(Arc::new(text)),
            range,
        }
    }

    /// The stretch `range` of `store`; `None` unless it lies within it. (Whether it is UTF-8
    /// is checked when it is read.)
    pub fn stored(store: &Arc<StoredText>, range: Range<usize>) -> Option<Text> {
        (range.start <= range.end && range.end <= store.len).then(|| Text {
            src: Src::Stored(Arc::clone(store)),
            range,
        })
    }

    /// The segment's bytes: its own, or read from the store into `buf`.
    pub fn bytes<'a>(&'a self, buf: &'a mut Vec<u8>) -> std::io::Result<&'a [u8]> {
        match &self.src {
            Src::Own(s) => Ok(s.as_bytes().get(self.range.clone()).unwrap_or_default()),
            Src::Stored(store) => {
                store.read_into(self.range.clone(), buf)?;
                Ok(buf.as_slice())
            }
        }
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.range.len()
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.range.is_empty()
    }

    /// Where it is in `store`, when it is a stretch of that very store.
    pub fn within(&self, store: &Arc<StoredText>) -> Option<Range<usize>> {
        match &self.src {
            Src::Stored(s) if Arc::ptr_eq(s, store) => Some(self.range.clone()),
            _ => None,
        }
    }
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

/// The SHA-256 of `bytes` as the eight cells of `layout::file::SHA256`.
fn sha256_cells(bytes: &[u8]) -> [u32; 8] {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(bytes);
    let mut cells = [0u32; 8];
    for (cell, word) in cells.iter_mut().zip(digest.chunks_exact(4)) {
        *cell = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
    }
    cells
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
    let (mut seg, marks) = reply_segment(s, &skill_md_path);
    let splice = splice_skill_md(s, &mut seg);
    let frontmatter = seg.append(&s.frontmatter_json);
    let mut row = [Pre::Done(Cell::Plain(NONE)); col::WIDTH];
    let mut data = Vec::new();
    strings(s, &mut seg, &mut row, &location, &skill_md_path, &marks)?;
    body_cells(s, &mut seg, &mut row, splice.as_ref())?;
    put(&mut row, col::FRONTMATTER, seg.cells(frontmatter)?);
    if let Some(v) = &s.version {
        let v = seg.intern(v);
        put(&mut row, col::VERSION, seg.cells(v)?);
    }
    let fields = field_rows(s, &mut seg, &mut row)?;
    let lists = list_rows(s, &mut seg, &mut row)?;
    template_cells(s, &mut seg, &mut row, &mut data)?;
    let (files, byte_slots) = file_rows(s, &mut seg, &mut row, &mut data, splice.is_some())?;
    row[col::FLAGS] = Pre::Done(Cell::Plain(own_path_flags(s, &skill_md_path)));
    finish(
        s,
        seg,
        row,
        Rows {
            files,
            fields,
            lists,
        },
        data,
        byte_slots,
        skill_md_path,
    )
}

/// Where the parts of the precomputed reply are: the end of its head (`… File path: `), the
/// start of its tail (after the echoed path), and the escaped body inside the tail.
struct ReplyMarks {
    head_end: usize,
    tail_start: usize,
    body_start: usize,
    body_end: usize,
}

/// The segment of one pack, its reply region holding the `load_skill` reply for the pack's own
/// `SKILL.md` path, whole.
fn reply_segment(s: &Skill, skill_md_path: &str) -> (Segment, ReplyMarks) {
    let mut reply = chunks::head(&s.name);
    let head_end = reply.len();
    json_into(&mut reply, skill_md_path);
    let reply_searchable = reply.len();
    let tail_start = reply.len();
    reply.push_str(&chunks::tail(&s.body));
    let body_start =
        tail_start + chunks::SEPARATOR.len() + "markdown".len() + chunks::CONTENT.len();
    let body_end = reply.len() - chunks::CLOSE.len();
    let seg = Segment {
        small: String::new(),
        reply,
        reply_searchable,
        files: String::new(),
    };
    let marks = ReplyMarks {
        head_end,
        tail_start,
        body_start,
        body_end,
    };
    (seg, marks)
}

/// `SKILL.md` stored spliced around the body when the body is a substring of it: the body's
/// offset in the file, and the text before and after it.
fn splice_skill_md(s: &Skill, seg: &mut Segment) -> Option<(usize, Span, Span)> {
    let raw = s
        .files
        .iter()
        .find(|f| f.path == "SKILL.md")
        .and_then(|f| std::str::from_utf8(&f.bytes).ok())?;
    let at = raw.rfind(s.body.as_str())?;
    let prefix = seg.append(&raw[..at]);
    let suffix = seg.intern(&raw[at + s.body.len()..]);
    Some((at, prefix, suffix))
}

/// Sets the two cells of a range at `at`.
fn put(row: &mut [Pre], at: usize, cells: [Pre; 2]) {
    row[at] = cells[0];
    row[at + 1] = cells[1];
}

/// A range of the reply region.
fn reply_span(start: usize, end: usize) -> Span {
    Span {
        region: Region::Reply,
        start,
        end,
    }
}

/// The skill's short strings and the ranges of its reply.
fn strings(
    s: &Skill,
    seg: &mut Segment,
    row: &mut [Pre],
    location: &str,
    skill_md_path: &str,
    marks: &ReplyMarks,
) -> Result<(), TooLarge> {
    use layout::skill as col;
    let name = seg.intern(&s.name);
    put(row, col::NAME, seg.cells(name)?);
    let key = seg.intern(&skillbake_format::name::fold(&s.name));
    put(row, col::KEY, seg.cells(key)?);
    let description = seg.intern(&s.description);
    put(row, col::DESCRIPTION, seg.cells(description)?);
    let md_path = seg.intern(skill_md_path);
    put(row, col::SKILL_MD_PATH, seg.cells(md_path)?);
    let loc = seg.intern(location);
    put(row, col::LOCATION, seg.cells(loc)?);
    let reply_len = seg.reply.len();
    put(row, col::REPLY, seg.cells(reply_span(0, reply_len))?);
    row[col::HEAD_END] = seg.cells(reply_span(marks.head_end, marks.head_end))?[0];
    row[col::TAIL_START] = seg.cells(reply_span(marks.tail_start, marks.tail_start))?[0];
    put(
        row,
        col::ESCAPED_BODY,
        seg.cells(reply_span(marks.body_start, marks.body_end))?,
    );
    Ok(())
}

/// How the body is read: from `SKILL.md` spliced around it, or unescaped from the reply.
fn body_cells(
    s: &Skill,
    seg: &mut Segment,
    row: &mut [Pre],
    splice: Option<&(usize, Span, Span)>,
) -> Result<(), TooLarge> {
    use layout::skill as col;
    match splice {
        Some(&(at, prefix, suffix)) => {
            row[col::BODY] = Pre::Done(Cell::Plain(u32_of(at)?));
            row[col::BODY + 1] = Pre::Done(Cell::Plain(u32_of(at + s.body.len())?));
            row[col::BODY_FORM] = Pre::Done(Cell::Plain(body_form::IN_SKILL_MD));
            put(row, col::SKILL_MD_PREFIX, seg.cells(prefix)?);
            put(row, col::SKILL_MD_SUFFIX, seg.cells(suffix)?);
        }
        None => row[col::BODY_FORM] = Pre::Done(Cell::Plain(body_form::UNESCAPE)),
    }
    Ok(())
}

/// The `field` rows: each top-level frontmatter key and its compact JSON value.
fn field_rows(s: &Skill, seg: &mut Segment, row: &mut [Pre]) -> Result<Vec<[Pre; 4]>, TooLarge> {
    use layout::skill as col;
    let mut fields = Vec::with_capacity(s.fields.len());
    for (k, json) in &s.fields {
        let k = seg.intern(k);
        let v = seg.intern(json);
        let (k, v) = (seg.cells(k)?, seg.cells(v)?);
        fields.push([k[0], k[1], v[0], v[1]]);
    }
    row[col::FIELDS] = Pre::Done(Cell::Field(0));
    row[col::FIELDS + 1] = Pre::Done(Cell::Field(u32_of(fields.len())?));
    Ok(fields)
}

/// The `list` rows: `tags`, `required_tools`, the template's variables and `requires:` (name,
/// range pairs), each a row range of the skill.
fn list_rows(s: &Skill, seg: &mut Segment, row: &mut [Pre]) -> Result<Vec<[Pre; 2]>, TooLarge> {
    use layout::skill as col;
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
    Ok(lists)
}

/// The precompiled template (data), or why there is none (text).
fn template_cells(
    s: &Skill,
    seg: &mut Segment,
    row: &mut [Pre],
    data: &mut Vec<u8>,
) -> Result<(), TooLarge> {
    use layout::skill as col;
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
    put(row, col::TEMPLATE_NOTE, seg.cells(note)?);
    Ok(())
}

/// A `file` row while the segment grows.
type FileRow = [Pre; layout::file::WIDTH];

/// The `file` rows, paths first (small strings) then contents, and the number of decode slots
/// the pack's compressed files take.
fn file_rows(
    s: &Skill,
    seg: &mut Segment,
    row: &mut [Pre],
    data: &mut Vec<u8>,
    spliced: bool,
) -> Result<(Vec<FileRow>, u32), TooLarge> {
    use layout::skill as col;
    let mut files = Vec::with_capacity(s.files.len());
    for (i, f) in s.files.iter().enumerate() {
        let path = seg.intern(&f.path);
        let mut frow = [Pre::Done(Cell::Plain(NONE)); layout::file::WIDTH];
        put(&mut frow, layout::file::PATH, seg.cells(path)?);
        frow[layout::file::KIND] = Pre::Done(Cell::Plain(kind_cell(&f.path, &f.bytes)));
        frow[layout::file::LEN] = Pre::Done(Cell::Plain(u32_of(f.bytes.len())?));
        for (i, cell) in sha256_cells(&f.bytes).into_iter().enumerate() {
            frow[layout::file::SHA256 + i] = Pre::Done(Cell::Plain(cell));
        }
        if f.path == "SKILL.md" {
            row[col::SKILL_MD] = Pre::Done(Cell::File(u32_of(i)?));
        }
        if f.path == "schema.json" {
            row[col::SCHEMA] = Pre::Done(Cell::File(u32_of(i)?));
        }
        files.push(frow);
    }
    let mut byte_slots = 0u32;
    for (f, frow) in s.files.iter().zip(files.iter_mut()) {
        let spliced = spliced && f.path == "SKILL.md";
        file_contents(s, f, frow, seg, data, spliced, &mut byte_slots)?;
    }
    row[col::FILES] = Pre::Done(Cell::File(0));
    row[col::FILES + 1] = Pre::Done(Cell::File(u32_of(files.len())?));
    Ok((files, byte_slots))
}

/// Where one file's bytes go: nowhere for a spliced `SKILL.md`, the data as raw DEFLATE when
/// `[embed] compress` selects it and that is smaller, the text when it is UTF-8, else the data.
fn file_contents(
    s: &Skill,
    f: &SourceFile,
    frow: &mut FileRow,
    seg: &mut Segment,
    data: &mut Vec<u8>,
    spliced: bool,
    byte_slots: &mut u32,
) -> Result<(), TooLarge> {
    use layout::file as col;
    let compressed = s.compress.binary_search(&f.path).is_ok() && f.path != "SKILL.md";
    let packed = if compressed { deflate(&f.bytes) } else { None };
    let text = std::str::from_utf8(&f.bytes).ok();
    let mut in_data = |frow: &mut FileRow, bytes: &[u8]| -> Result<(), TooLarge> {
        frow[col::DATA] = Pre::Done(Cell::Data(u32_of(data.len())?));
        data.extend_from_slice(bytes);
        frow[col::DATA + 1] = Pre::Done(Cell::Data(u32_of(data.len())?));
        Ok(())
    };
    if spliced {
        frow[col::ENCODING] = Pre::Done(Cell::Plain(encoding::SPLICED));
    } else if let Some(packed) = packed {
        frow[col::ENCODING] = Pre::Done(Cell::Plain(encoding::DEFLATE));
        in_data(frow, &packed)?;
        frow[col::SLOT] = Pre::Done(Cell::ByteSlot(*byte_slots));
        *byte_slots += 1;
    } else if let Some(text) = text {
        let start = seg.files.len();
        seg.files.push_str(text);
        let span = Span {
            region: Region::Files,
            start,
            end: seg.files.len(),
        };
        frow[col::ENCODING] = Pre::Done(Cell::Plain(encoding::TEXT));
        put(frow, col::DATA, seg.cells(span)?);
    } else {
        frow[col::ENCODING] = Pre::Done(Cell::Plain(encoding::BYTES));
        in_data(frow, &f.bytes)?;
    }
    Ok(())
}

/// The skill's flags: whether the precomputed reply answers a request for exactly the pack's
/// own `SKILL.md` path, which holds when the runtime would resolve that path to the body: it is
/// canonical (not absolute, no `\\`, no empty, `.` or `..` part) and no file of the pack has it
/// as its path.
fn own_path_flags(s: &Skill, skill_md_path: &str) -> u32 {
    let canonical = !skill_md_path.starts_with('/')
        && !skill_md_path.contains('\\')
        && !skill_md_path.contains("://")
        && skill_md_path.as_bytes().get(1) != Some(&b':')
        && skill_md_path.trim() == skill_md_path
        && skill_md_path
            .split('/')
            .all(|p| !matches!(p, "" | "." | ".."));
    let own_is_body = canonical && !s.files.iter().any(|f| f.path == skill_md_path);
    if own_is_body {
        layout::flags::OWN_PATH_IS_BODY
    } else {
        0
    }
}

/// The pack's other rows, before their cells are final.
struct Rows {
    files: Vec<FileRow>,
    fields: Vec<[Pre; 4]>,
    lists: Vec<[Pre; 2]>,
}

/// The fragment: every cell final once the regions have their sizes, the text regions joined.
fn finish(
    s: &Skill,
    seg: Segment,
    row: [Pre; layout::skill::WIDTH],
    rows: Rows,
    data: Vec<u8>,
    byte_slots: u32,
    skill_md_path: String,
) -> Result<Fragment, TooLarge> {
    let skill = seg.finish_row(row)?.to_vec();
    let files = rows
        .files
        .into_iter()
        .map(|r| seg.finish_row(r).map(|r| r.to_vec()))
        .collect::<Result<Vec<_>, _>>()?;
    let fields = rows
        .fields
        .into_iter()
        .map(|r| seg.finish_row(r))
        .collect::<Result<Vec<_>, _>>()?;
    let lists = rows
        .lists
        .into_iter()
        .map(|r| seg.finish_row(r))
        .collect::<Result<Vec<_>, _>>()?;
    let mut text = seg.small;
    text.push_str(&seg.reply);
    text.push_str(&seg.files);
    u32_of(text.len())?;
    u32_of(data.len())?;
    Ok(Fragment {
        text: Text::new(text),
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
