//! The compiled index: its byte layout, the writer the compiler uses and the reader the runtime
//! uses, in one place so that they cannot disagree.
//!
//! The index is one little-endian byte string (`skillbake_route.bin` in the generated registry):
//!
//! ```text
//! header      magic "SBRI", FORMAT u32, docs u32, terms u32, buckets u32, scale f32,
//!             then 6 section offsets u32 (blocks, dictionary, postings, doc buckets,
//!             bucket ends, bucket bytes) and the end of the data
//! blocks      one u32 per block of 16 terms: offset of the block in the dictionary
//! dictionary  per block: postings offset u32 of its first term, then per term (sorted by
//!             bytes): shared prefix length p (0 for a block's first term) and suffix length s
//!             as one byte p × 16 + s when both are below 16, else 0, p u8, s u8; the suffix
//!             bytes; postings length varint
//! postings    per term: its scale u16, count n varint, common fields u8 (the most frequent
//!             fields byte of its postings); when n > BLOCK_POSTINGS its highest impact u8 and
//!             a skip directory (its byte length varint, then per block of BLOCK_POSTINGS
//!             postings: last document − previous block's last varint, the block's byte length
//!             varint, the block's highest impact u8); then per posting in document order:
//!             varint((document − previous document) × 2 + 1 when its fields differ from the
//!             common ones), impact u8, fields u8 (only when flagged)
//! doc buckets docs × u32: bucket number of each document
//! bucket ends buckets × u32: end of each bucket name in `bucket bytes` (bucket 0 is "")
//! bucket bytes bucket names, UTF-8, concatenated, sorted
//! ```
//!
//! A posting's weight is `impact × term scale × scale`: the term's BM25F weight in that
//! document relative to the term's highest weight (1–255), the term's highest weight relative to
//! the index's highest (1–65535), and the score of one unit; its fields byte says where the term
//! occurs
//! ([`Fields`]). A posting whose only field is [`Fields::WHEN_NOT_TO_USE`] is evidence
//! *against* the document: its impact is subtracted. Front-coded blocks keep the dictionary
//! near the size of the terms' distinct suffixes; a lookup is a binary search over blocks and
//! a scan of at most 16 terms. The maxima (per term and per block of postings) are what the
//! dynamic pruning of [`search`] needs: they bound what a term can still add to a document.

use crate::tokenize::Tokenizer;

/// Version of the layout and of the tokenizer; the generated registry checks it at compile time.
pub const FORMAT: u32 = 2;

const MAGIC: &[u8; 4] = b"SBRI";
const SECTIONS: usize = 6;
const HEADER: usize = 24 + (SECTIONS + 1) * 4;
/// Terms per dictionary block.
pub const BLOCK: usize = 16;
/// Postings per skip block: longer lists get a directory of their blocks' last documents and
/// maxima, so that a search can step over a block without decoding it.
pub const BLOCK_POSTINGS: usize = 64;
/// Longest term the index stores, in bytes.
pub const MAX_TERM: usize = 64;

/// The fields of a pack that a term matched, as a bit set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Fields(pub u8);

impl Fields {
    /// `name`.
    pub const NAME: Fields = Fields(1);
    /// `description`.
    pub const DESCRIPTION: Fields = Fields(1 << 1);
    /// `when_to_use`.
    pub const WHEN_TO_USE: Fields = Fields(1 << 2);
    /// `tags`.
    pub const TAGS: Fields = Fields(1 << 3);
    /// Markdown headings of the body.
    pub const HEADINGS: Fields = Fields(1 << 4);
    /// The rest of the body.
    pub const BODY: Fields = Fields(1 << 5);
    /// Property names, titles and descriptions of `schema.json`.
    pub const SCHEMA: Fields = Fields(1 << 6);
    /// `when_not_to_use` (evidence against the pack).
    pub const WHEN_NOT_TO_USE: Fields = Fields(1 << 7);

    /// Every field with its name, in bit order.
    pub const ALL: [(Fields, &'static str); 8] = [
        (Fields::NAME, "name"),
        (Fields::DESCRIPTION, "description"),
        (Fields::WHEN_TO_USE, "when_to_use"),
        (Fields::TAGS, "tags"),
        (Fields::HEADINGS, "headings"),
        (Fields::BODY, "body"),
        (Fields::SCHEMA, "schema"),
        (Fields::WHEN_NOT_TO_USE, "when_not_to_use"),
    ];

    /// True when every bit of `other` is set.
    pub fn contains(self, other: Fields) -> bool {
        self.0 & other.0 == other.0
    }

    /// True when no bit is set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The names of the fields set, in bit order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        Fields::ALL
            .into_iter()
            .filter(move |(f, _)| self.contains(*f))
            .map(|(_, n)| n)
    }

    /// A posting with only this bit counts against its document.
    pub fn is_negative(self) -> bool {
        self == Fields::WHEN_NOT_TO_USE
    }
}

impl std::ops::BitOr for Fields {
    type Output = Fields;
    fn bitor(self, rhs: Fields) -> Fields {
        Fields(self.0 | rhs.0)
    }
}

impl std::ops::BitOrAssign for Fields {
    fn bitor_assign(&mut self, rhs: Fields) {
        self.0 |= rhs.0;
    }
}

/// One posting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Posting {
    /// Document number (the skill's position in name order).
    pub doc: u32,
    /// Quantized impact, 1–255.
    pub impact: u8,
    /// Where the term occurs.
    pub fields: Fields,
}

/// The index is larger than its 32-bit offsets allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge;

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the routing index is larger than 4 GiB")
    }
}

impl std::error::Error for TooLarge {}

fn u32_of(n: usize) -> Result<u32, TooLarge> {
    u32::try_from(n).map_err(|_| TooLarge)
}

/// Serializes an index. Terms must be given in increasing byte order, each with its postings in
/// increasing document order.
#[derive(Debug, Default)]
pub struct Writer {
    docs: u32,
    scale: f32,
    terms: u32,
    blocks: Vec<u32>,
    dict: Vec<u8>,
    postings: Vec<u8>,
    last_term: Vec<u8>,
    buckets: Vec<String>,
    doc_buckets: Vec<u32>,
    scratch: Scratch,
}

/// What encoding a term's postings needs besides its output, kept from term to term: most terms
/// have a posting or two, and a fresh 1 KB table and two vectors per term were most of the cost
/// of writing an index.
#[derive(Debug)]
struct Scratch {
    /// How many postings have each fields byte: zero between terms.
    counts: Box<[u32; 256]>,
    /// A long list's blocks and their directory, before they are appended.
    blocks: Vec<u8>,
    dir: Vec<u8>,
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch {
            counts: Box::new([0; 256]),
            blocks: Vec::new(),
            dir: Vec::new(),
        }
    }
}

impl Writer {
    /// A writer for `docs` documents; `scale` is the score of one impact unit.
    pub fn new(docs: u32, scale: f32) -> Self {
        Writer {
            docs,
            scale,
            ..Writer::default()
        }
    }

    /// Adds a term, its scale (what one impact unit of its postings weighs, in units of the
    /// index's `scale`) and its postings. Empty or over-long terms, terms out of order, and
    /// postings out of document order or beyond the document count are skipped (the compiler
    /// never produces them).
    pub fn term(
        &mut self,
        term: &str,
        term_scale: u16,
        postings: &[Posting],
    ) -> Result<(), TooLarge> {
        let bytes = term.as_bytes();
        let in_order = self.terms == 0 || self.last_term.as_slice() < bytes;
        let sorted = postings.windows(2).all(|w| w[0].doc < w[1].doc);
        if bytes.is_empty()
            || bytes.len() > MAX_TERM
            || !in_order
            || postings.is_empty()
            || !sorted
            || postings.iter().any(|p| p.doc >= self.docs)
        {
            return Ok(());
        }
        if self.docs > MAX_DOCS {
            return Err(TooLarge);
        }
        let start = self.postings.len();
        encode_postings(&mut self.postings, &mut self.scratch, term_scale, postings)?;
        let prefix = if (self.terms as usize).is_multiple_of(BLOCK) {
            self.blocks.push(u32_of(self.dict.len())?);
            self.dict.extend_from_slice(&u32_of(start)?.to_le_bytes());
            0
        } else {
            self.last_term
                .iter()
                .zip(bytes)
                .take_while(|(a, b)| a == b)
                .count()
        };
        write_lengths(&mut self.dict, prefix, bytes.len() - prefix);
        self.dict.extend_from_slice(&bytes[prefix..]);
        write_varint(&mut self.dict, u32_of(self.postings.len() - start)?);
        self.last_term.clear();
        self.last_term.extend_from_slice(bytes);
        self.terms += 1;
        Ok(())
    }

    /// Sets the buckets: `names` sorted, `""` first; `doc_buckets[d]` is document `d`'s bucket.
    pub fn buckets(&mut self, names: Vec<String>, doc_buckets: Vec<u32>) {
        self.buckets = names;
        self.doc_buckets = doc_buckets;
    }

    /// The index bytes.
    pub fn finish(self) -> Result<Vec<u8>, TooLarge> {
        let mut bucket_ends = Vec::new();
        let mut bucket_bytes = Vec::new();
        for b in &self.buckets {
            bucket_bytes.extend_from_slice(b.as_bytes());
            bucket_ends.push(u32_of(bucket_bytes.len())?);
        }
        let mut doc_buckets: Vec<u32> = self.doc_buckets.clone();
        doc_buckets.resize(self.docs as usize, 0);
        let sections: [Vec<u8>; SECTIONS] = [
            le(&self.blocks),
            self.dict,
            self.postings,
            le(&doc_buckets),
            le(&bucket_ends),
            bucket_bytes,
        ];
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT.to_le_bytes());
        out.extend_from_slice(&self.docs.to_le_bytes());
        out.extend_from_slice(&self.terms.to_le_bytes());
        out.extend_from_slice(&u32_of(self.buckets.len())?.to_le_bytes());
        out.extend_from_slice(&self.scale.to_le_bytes());
        let mut offset = HEADER;
        for s in &sections {
            out.extend_from_slice(&u32_of(offset)?.to_le_bytes());
            offset += s.len();
        }
        out.extend_from_slice(&u32_of(offset)?.to_le_bytes());
        for s in sections {
            out.extend_from_slice(&s);
        }
        Ok(out)
    }
}

/// A dictionary entry's shared prefix and suffix lengths: one byte `prefix × 16 + suffix` when
/// both are below 16 (a suffix is never empty: terms are distinct and sorted), else 0 and the
/// two lengths as bytes.
fn write_lengths(out: &mut Vec<u8>, prefix: usize, suffix: usize) {
    if prefix < 16 && (1..16).contains(&suffix) {
        out.push(((prefix << 4) | suffix) as u8);
    } else {
        out.extend_from_slice(&[0, prefix as u8, suffix as u8]);
    }
}

/// Reads what [`write_lengths`] wrote at `*pos`, advancing it.
fn read_lengths(data: &[u8], pos: &mut usize) -> Option<(usize, usize)> {
    let c = *data.get(*pos)?;
    if c & 0x0F != 0 {
        *pos += 1;
        return Some((usize::from(c >> 4), usize::from(c & 0x0F)));
    }
    let prefix = *data.get(*pos + 1)?;
    let suffix = *data.get(*pos + 2)?;
    *pos += 3;
    Some((usize::from(prefix), usize::from(suffix)))
}

/// The most documents an index holds (document deltas are stored doubled, with a flag bit).
const MAX_DOCS: u32 = u32::MAX >> 1;

/// Appends one term's postings (non-empty, in increasing document order) in the layout above.
fn encode_postings(
    out: &mut Vec<u8>,
    scratch: &mut Scratch,
    term_scale: u16,
    postings: &[Posting],
) -> Result<(), TooLarge> {
    out.extend_from_slice(&term_scale.to_le_bytes());
    write_varint(out, u32_of(postings.len())?);
    let common = most_common_fields(&mut scratch.counts, postings);
    out.push(common);
    if postings.len() <= BLOCK_POSTINGS {
        // One block and no directory: written in place.
        let mut prev = 0u32;
        encode_block(out, postings, common, &mut prev);
        return Ok(());
    }
    let Scratch { blocks, dir, .. } = scratch;
    blocks.clear();
    dir.clear();
    let mut prev = 0u32;
    for chunk in postings.chunks(BLOCK_POSTINGS) {
        let begin = blocks.len();
        let block_prev = prev;
        encode_block(blocks, chunk, common, &mut prev);
        write_varint(dir, prev - block_prev);
        write_varint(dir, u32_of(blocks.len() - begin)?);
        dir.push(chunk.iter().map(|p| p.impact).max().unwrap_or(0));
    }
    out.push(postings.iter().map(|p| p.impact).max().unwrap_or(0));
    write_varint(out, u32_of(dir.len())?);
    out.extend_from_slice(dir);
    out.extend_from_slice(blocks);
    Ok(())
}

/// The most frequent fields byte of `postings`, the smallest among equals; `counts` is zero on
/// entry and left zero.
fn most_common_fields(counts: &mut [u32; 256], postings: &[Posting]) -> u8 {
    for p in postings {
        counts[usize::from(p.fields.0)] += 1;
    }
    let mut best = (0u32, 0u8);
    for p in postings {
        let f = p.fields.0;
        let c = counts[usize::from(f)];
        if c > best.0 || (c == best.0 && f < best.1) {
            best = (c, f);
        }
    }
    for p in postings {
        counts[usize::from(p.fields.0)] = 0;
    }
    best.1
}

/// Appends one block of postings: each document as its delta from the one before (`*prev`,
/// advanced), doubled, with a flag for a fields byte other than `common`, then its impact and
/// that fields byte.
fn encode_block(out: &mut Vec<u8>, chunk: &[Posting], common: u8, prev: &mut u32) {
    for p in chunk {
        let flag = u32::from(p.fields.0 != common);
        write_varint(out, ((p.doc - *prev) << 1) | flag);
        out.push(p.impact);
        if flag == 1 {
            out.push(p.fields.0);
        }
        *prev = p.doc;
    }
}

fn le(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|n| n.to_le_bytes()).collect()
}

fn write_varint(out: &mut Vec<u8>, mut n: u32) {
    while n >= 0x80 {
        out.push((n as u8 & 0x7F) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// Reads a varint at `*pos`, advancing it; `None` past the end.
#[inline]
fn read_varint(data: &[u8], pos: &mut usize) -> Option<u32> {
    let first = *data.get(*pos)?;
    if first < 0x80 {
        *pos += 1;
        return Some(u32::from(first));
    }
    read_varint_long(data, pos)
}

fn read_varint_long(data: &[u8], pos: &mut usize) -> Option<u32> {
    let mut n = 0u32;
    let mut shift = 0u32;
    loop {
        let b = *data.get(*pos)?;
        *pos += 1;
        if shift < 32 {
            n |= u32::from(b & 0x7F) << shift;
        }
        shift += 7;
        if b & 0x80 == 0 {
            return Some(n);
        }
    }
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// A term found in the index: where its postings are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Term {
    start: usize,
    end: usize,
}

/// A parsed, bounds-checked view of index bytes. Every read is checked: a corrupt index gives
/// fewer results, never a panic.
#[derive(Debug, Clone, Copy)]
pub struct Index<'a> {
    docs: u32,
    terms: u32,
    buckets: u32,
    scale: f32,
    size: usize,
    blocks: &'a [u8],
    dict: &'a [u8],
    postings: &'a [u8],
    doc_buckets: &'a [u8],
    bucket_ends: &'a [u8],
    bucket_bytes: &'a [u8],
}

impl<'a> Index<'a> {
    /// Reads the header. `None` when the bytes are not an index of this [`FORMAT`].
    pub fn new(bytes: &'a [u8]) -> Option<Index<'a>> {
        if bytes.get(..4)? != MAGIC || read_u32(bytes, 4)? != FORMAT {
            return None;
        }
        let mut off = [0usize; SECTIONS + 1];
        for (i, o) in off.iter_mut().enumerate() {
            *o = read_u32(bytes, 24 + 4 * i)? as usize;
        }
        if off.windows(2).any(|w| w[0] > w[1]) || off[SECTIONS] > bytes.len() || off[0] < HEADER {
            return None;
        }
        let s = |i: usize| bytes.get(off[i]..off[i + 1]);
        let index = Index {
            docs: read_u32(bytes, 8)?,
            terms: read_u32(bytes, 12)?,
            buckets: read_u32(bytes, 16)?,
            scale: f32::from_bits(read_u32(bytes, 20)?),
            size: bytes.len(),
            blocks: s(0)?,
            dict: s(1)?,
            postings: s(2)?,
            doc_buckets: s(3)?,
            bucket_ends: s(4)?,
            bucket_bytes: s(5)?,
        };
        let ok = index.doc_buckets.len() >= index.docs as usize * 4
            && index.bucket_ends.len() >= index.buckets as usize * 4
            && index.scale.is_finite();
        ok.then_some(index)
    }

    /// Number of documents.
    pub fn docs(&self) -> u32 {
        self.docs
    }

    /// Number of distinct terms.
    pub fn terms(&self) -> u32 {
        self.terms
    }

    /// Size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The score of one impact unit.
    pub fn scale(&self) -> f32 {
        self.scale
    }

    fn blocks(&self) -> usize {
        self.blocks.len() / 4
    }

    /// The first term of block `b` and where the block's entries start.
    fn block_head(&self, b: usize) -> Option<(&'a [u8], usize)> {
        let at = read_u32(self.blocks, b * 4)? as usize;
        // postings offset u32, lengths (prefix 0), suffix.
        let mut pos = at.checked_add(4)?;
        let (_, len) = read_lengths(self.dict, &mut pos)?;
        Some((self.dict.get(pos..pos.checked_add(len)?)?, at))
    }

    /// The term `t`, if the index holds it.
    pub fn find(&self, t: &str) -> Option<Term> {
        let t = t.as_bytes();
        if t.is_empty() || t.len() > MAX_TERM {
            return None;
        }
        // Last block whose first term is <= t.
        let (mut lo, mut hi) = (0usize, self.blocks());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.block_head(mid)?.0 <= t {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let b = lo.checked_sub(1)?;
        let (_, at) = self.block_head(b)?;
        let mut pos = at;
        let mut postings = read_u32(self.dict, pos)? as usize;
        pos += 4;
        let mut buf = [0u8; MAX_TERM];
        let mut len = 0usize;
        for _ in 0..BLOCK {
            let (prefix, suffix) = read_lengths(self.dict, &mut pos)?;
            if prefix > len || prefix + suffix > MAX_TERM {
                return None;
            }
            buf[prefix..prefix + suffix].copy_from_slice(self.dict.get(pos..pos + suffix)?);
            pos += suffix;
            len = prefix + suffix;
            let size = read_varint(self.dict, &mut pos)? as usize;
            match buf[..len].cmp(t) {
                std::cmp::Ordering::Equal => {
                    let end = postings.checked_add(size)?;
                    return (end <= self.postings.len()).then_some(Term {
                        start: postings,
                        end,
                    });
                }
                std::cmp::Ordering::Greater => return None,
                std::cmp::Ordering::Less => postings = postings.checked_add(size)?,
            }
            if pos >= self.dict.len() {
                return None;
            }
        }
        None
    }

    /// The postings of `term`.
    pub fn postings(&self, term: Term) -> Postings<'a> {
        Postings::new(self.postings.get(term.start..term.end).unwrap_or(&[]))
    }

    /// How many postings `term` has, read from the head of its list (nothing decoded); 0 when
    /// the bytes cannot be read.
    pub fn postings_len(&self, term: Term) -> u32 {
        let data = self.postings.get(term.start..term.end).unwrap_or(&[]);
        list_head(data).map_or(0, |(_, n, _)| n)
    }

    /// The bucket of document `doc` (`""` when it has none).
    pub fn bucket_of(&self, doc: u32) -> &'a str {
        read_u32(self.doc_buckets, doc as usize * 4)
            .and_then(|b| self.bucket(b))
            .unwrap_or("")
    }

    /// The `i`-th bucket name in sorted order (bucket 0 is `""`).
    pub fn bucket(&self, i: u32) -> Option<&'a str> {
        if i >= self.buckets {
            return None;
        }
        let i = i as usize;
        let start = match i {
            0 => 0,
            _ => read_u32(self.bucket_ends, (i - 1) * 4)? as usize,
        };
        let end = read_u32(self.bucket_ends, i * 4)? as usize;
        std::str::from_utf8(self.bucket_bytes.get(start..end)?).ok()
    }

    /// Every bucket name, sorted (the first is `""`, the bucket of packs at the root).
    pub fn bucket_names(&self) -> impl Iterator<Item = &'a str> + '_ {
        (0..self.buckets).filter_map(move |i| self.bucket(i))
    }
}

/// A cursor over one term's postings, in document order, that can step over whole blocks.
/// The default is an empty list (what unreadable bytes read as).
#[derive(Debug, Clone, Default)]
pub struct Postings<'a> {
    data: &'a [u8],
    scale: u16,
    common: u8,
    max: u8,
    /// Blocks in the skip directory (0 without one: all postings form one block).
    blocks: u32,
    /// Blocks entered so far.
    block: u32,
    /// Next unread directory entry.
    dir: usize,
    /// Where the next block's postings start, and where the current one's end.
    next_start: usize,
    block_end: usize,
    /// Last document of the current block (`u32::MAX` without a directory) and its maximum.
    block_last: u32,
    block_max: u8,
    pos: usize,
    doc: u32,
}

/// The head of a posting list: the term's scale (2 bytes), the count of its postings, and the
/// place of the byte after the count.
fn list_head(data: &[u8]) -> Option<(u16, u32, usize)> {
    let scale = u16::from_le_bytes([*data.first()?, *data.get(1)?]);
    let mut pos = 2;
    let n = read_varint(data, &mut pos)?;
    Some((scale, n, pos))
}
impl<'a> Postings<'a> {
    fn new(data: &'a [u8]) -> Postings<'a> {
        Postings::parse(data).unwrap_or_default()
    }

    fn parse(data: &'a [u8]) -> Option<Postings<'a>> {
        let (scale, n, mut pos) = list_head(data)?;
        let common = *data.get(pos)?;
        pos += 1;
        let mut q = Postings {
            data,
            scale,
            common,
            ..Postings::default()
        };
        if n as usize > BLOCK_POSTINGS {
            q.max = *data.get(pos)?;
            pos += 1;
            let len = read_varint(data, &mut pos)? as usize;
            q.dir = pos;
            q.next_start = pos.checked_add(len)?;
            q.blocks = n.div_ceil(BLOCK_POSTINGS as u32);
        } else {
            q.next_start = pos;
        }
        // Enter the first block (a list without a directory is one block).
        q.pos = q.next_start;
        q.block_end = q.next_start;
        q.enter(0)?;
        if q.blocks == 0 {
            // A short list: its maximum is found by reading it (at most BLOCK_POSTINGS).
            q.max = q.clone().map(|p| p.impact).max().unwrap_or(0);
            q.block_max = q.max;
        }
        Some(q)
    }

    /// Reads the next directory entry and makes its block current; `prev` is the last document
    /// before it. `None` past the last block or on corrupt bytes.
    #[cold]
    #[inline(never)]
    fn enter(&mut self, prev: u32) -> Option<()> {
        if self.blocks == 0 {
            if self.block > 0 {
                return None;
            }
            self.block = 1;
            self.block_last = u32::MAX;
            self.block_max = self.max;
            self.block_end = self.data.len();
            self.pos = self.next_start;
            self.doc = prev;
            return Some(());
        }
        if self.block >= self.blocks {
            return None;
        }
        let mut at = self.dir;
        let last = prev.checked_add(read_varint(self.data, &mut at)?)?;
        let len = read_varint(self.data, &mut at)? as usize;
        let max = *self.data.get(at)?;
        self.dir = at + 1;
        self.pos = self.next_start;
        self.block_end = self.next_start.checked_add(len)?;
        self.next_start = self.block_end;
        self.block_last = last;
        self.block_max = max;
        self.block += 1;
        self.doc = prev;
        Some(())
    }

    /// The term's scale: what one impact unit of this list weighs, in index units.
    pub fn scale(&self) -> u16 {
        self.scale
    }

    /// The highest impact of the list.
    pub fn max_impact(&self) -> u8 {
        self.max
    }

    /// The highest impact of the current block (bounds every posting left in it).
    pub fn block_max(&self) -> u8 {
        self.block_max
    }

    /// The highest impact of the current block and of the blocks after it that may hold
    /// documents below `end` (read from the skip directory, nothing decoded).
    pub fn max_before(&self, end: u32) -> u8 {
        let mut max = self.block_max;
        let (mut last, mut at, mut block) = (self.block_last, self.dir, self.block);
        while block < self.blocks && last.saturating_add(1) < end {
            let Some(delta) = read_varint(self.data, &mut at) else {
                break;
            };
            if read_varint(self.data, &mut at).is_none() {
                break;
            }
            let Some(&m) = self.data.get(at) else {
                break;
            };
            at += 1;
            last = last.saturating_add(delta);
            max = max.max(m);
            block += 1;
        }
        max
    }

    /// Steps over whole blocks whose last document is below `target`, without decoding them;
    /// `None` when no block is left.
    pub fn skip_to(&mut self, target: u32) -> Option<()> {
        while self.block_last < target {
            let prev = self.block_last;
            self.enter(prev)?;
        }
        Some(())
    }

    /// [`Postings::skip_to`] for a target many blocks ahead: the directory's entries are read
    /// in a tight loop and only the block that holds `target` is entered. (A search steps a
    /// block or two at a time, where the plain loop is faster.)
    fn seek(&mut self, target: u32) -> Option<()> {
        if self.block_last >= target {
            return Some(());
        }
        // Read the directory's entries in a tight loop and enter only the block that holds
        // `target` (a list without a directory is one block, its last document `u32::MAX`).
        let (mut last, mut at, mut start, mut block) =
            (self.block_last, self.dir, self.next_start, self.block);
        loop {
            if block >= self.blocks {
                return None;
            }
            let prev = last;
            last = prev.checked_add(read_varint(self.data, &mut at)?)?;
            let len = read_varint(self.data, &mut at)? as usize;
            let max = *self.data.get(at)?;
            at += 1;
            let end = start.checked_add(len)?;
            block += 1;
            if last >= target {
                self.dir = at;
                self.pos = start;
                self.block_end = end;
                self.next_start = end;
                self.block_last = last;
                self.block_max = max;
                self.block = block;
                self.doc = prev;
                return Some(());
            }
            start = end;
        }
    }

    /// The first posting at or after `target`.
    pub fn advance(&mut self, target: u32) -> Option<Posting> {
        self.skip_to(target)?;
        loop {
            let p = self.next()?;
            if p.doc >= target {
                return Some(p);
            }
        }
    }
}

impl Iterator for Postings<'_> {
    type Item = Posting;

    #[inline]
    fn next(&mut self) -> Option<Posting> {
        if self.pos >= self.block_end {
            let prev = self.block_last;
            self.enter(prev)?;
            if self.pos >= self.block_end {
                return None;
            }
        }
        let v = read_varint(self.data, &mut self.pos)?;
        let impact = *self.data.get(self.pos)?;
        self.pos += 1;
        let fields = if v & 1 == 1 {
            let f = *self.data.get(self.pos)?;
            self.pos += 1;
            f
        } else {
            self.common
        };
        self.doc = self.doc.saturating_add(v >> 1);
        Some(Posting {
            doc: self.doc,
            impact,
            fields: Fields(fields),
        })
    }
}

/// One ranked document.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// Document number (the skill's position in name order).
    pub doc: u32,
    /// The BM25F score (sum of the matched terms' weights, minus `when_not_to_use` evidence).
    pub score: f32,
    /// The fields the request's terms matched.
    pub fields: Fields,
}

/// The request's terms found in the index, each with its weight (repeats count, up to 3).
pub fn query_terms(index: &Index<'_>, tokenizer: &mut Tokenizer, query: &str) -> Vec<(Term, u32)> {
    let mut terms: Vec<(Term, u32)> = Vec::new();
    tokenizer.tokens(query, |t, _| {
        if let Some(id) = index.find(t) {
            match terms.iter_mut().find(|(i, _)| *i == id) {
                Some((_, n)) => *n += 1,
                None => terms.push((id, 1)),
            }
        }
    });
    for (_, n) in &mut terms {
        // Repeating a word in a request counts, with diminishing returns.
        *n = (*n).min(3);
    }
    terms
}

/// A top-K entry: higher score first, then lower document number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    score: i64,
    doc: u32,
    fields: Fields,
}

impl Entry {
    /// True when `self` ranks before `other`.
    fn better(&self, other: &Entry) -> bool {
        self.score > other.score || (self.score == other.score && self.doc < other.doc)
    }
}

/// Documents scored together by [`search_exhaustive`]: the accumulators of one window live on
/// the stack.
pub const WINDOW: usize = 2048;

/// Documents scored together by [`search`]: small, so that the first window, scored before any
/// threshold is known, is cheap.
pub const PRUNED_WINDOW: usize = 256;

/// The `k` best documents for `terms` (from [`query_terms`]) among those `keep` accepts, best
/// first (higher score, then lower document number); only documents with a positive score are
/// returned.
///
/// Dynamic pruning (MaxScore, Turtle & Flood 1995, in the windowed form of Lucene's
/// `MaxScoreBulkScorer`, with the block maxima of Ding & Suel 2011): every term's highest
/// impact times its weight bounds what it can add to a document. Once `k` documents are held,
/// the terms whose bounds together cannot lift a document past the `k`-th score are
/// *non-essential*. Windows of [`PRUNED_WINDOW`] documents are scored from the essential terms'
/// postings into fixed accumulators (a window starts at the next posting of a term that is
/// essential over the whole index: a document holding only the others cannot enter, so the
/// stretches between them are stepped over); each touched document, in document order, is then
/// completed from the non-essential lists (stepping over whole blocks, bounded first by their
/// block maxima) and dropped as soon as what its remaining terms could add cannot lift it past
/// the `k`-th score. Scores are exact integers and a later document never displaces an equal
/// earlier one, so the result is exactly that of [`search_exhaustive`], ties included.
///
/// A query whose terms hold few postings for the index's size ([`PRUNE_ABOVE`]) is answered by
/// [`search_exhaustive`] instead, which is then the faster of the two. Memory is fixed (about
/// 2.3 KiB of accumulators when pruning, 18 KiB when scoring every posting) plus what the terms
/// and `k` need, never proportional to the number of documents.
pub fn search(
    index: &Index<'_>,
    terms: &[(Term, u32)],
    k: usize,
    keep: impl FnMut(u32) -> bool,
) -> Vec<Hit> {
    if scoring_all_is_cheaper(index, terms) {
        return search_exhaustive(index, terms, k, keep);
    }
    search_above(index, terms, k, keep, 0)
}

/// Postings per window of [`PRUNED_WINDOW`] documents and per term below which [`search`]
/// scores every posting instead of pruning.
///
/// Scoring every posting costs about the postings; pruning costs about the windows times the
/// terms (each window bounds and sorts every term), whatever it then skips. Over the public
/// sets of `cargo xtask route-eval` (94 to 10,000 packs; English and Chinese requests), choosing
/// by this ratio came within 4% of the faster of the two on every set, where pruning alone was
/// up to 42% slower (requests of many CJK terms over 2,140 packs) and scoring every posting up to
/// 5.5 times slower (10,000 packs). Both give the same hits, so the choice changes only the time.
pub const PRUNE_ABOVE: u64 = 16;

/// Whether the query's postings are few enough, for its terms and the windows of the index,
/// that scoring them all is cheaper than pruning ([`PRUNE_ABOVE`]).
fn scoring_all_is_cheaper(index: &Index<'_>, terms: &[(Term, u32)]) -> bool {
    let postings: u64 = terms
        .iter()
        .map(|&(t, _)| u64::from(index.postings_len(t)))
        .sum();
    let windows = u64::from(index.docs()) / PRUNED_WINDOW as u64 + 1;
    postings <= PRUNE_ABOVE * windows * terms.len() as u64
}

/// A prefix of what [`search`]`(index, terms, k, |_| true)` returns that holds at least every
/// hit scoring `ratio` times what document `doc` scores for the same terms, or more (scores as
/// [`Hit::score`] gives them): the hits below that may be left out.
///
/// What the near-duplicate check needs of a pack's own description (is the pack among the `k`
/// best, and does another come within `ratio` of it?), found faster than the whole top-`k`: the
/// document's own score, read from its postings, is where pruning starts instead of 0, so the
/// terms that cannot lift a document that far are never scored.
pub fn search_near(
    index: &Index<'_>,
    terms: &[(Term, u32)],
    doc: u32,
    ratio: f64,
    k: usize,
) -> Vec<Hit> {
    let own: i64 = terms
        .iter()
        .map(|&(t, w)| {
            let mut c = Cursor::new(index, t, w);
            if c.current.is_some_and(|p| p.doc < doc) {
                c.current = c.postings.seek(doc).and_then(|()| c.postings.advance(doc));
            }
            c.current.filter(|p| p.doc == doc).map_or(0, |p| c.value(p))
        })
        .sum();
    // A hit's score is its integer score times the index's scale, in `f32`, so a ratio of two
    // scores is the ratio of the integers within a few parts in 10^7: the cut leaves a margin
    // of one part in 10^6 and one unit below the exact product.
    let cut = (own as f64 * ratio.clamp(0.0, 1.0) * (1.0 - 1e-6)).floor() as i64 - 1;
    search_above(index, terms, k, |_| true, cut.max(0))
}

/// [`search`] of the documents scoring above `threshold` (at least 0).
fn search_above(
    index: &Index<'_>,
    terms: &[(Term, u32)],
    k: usize,
    mut keep: impl FnMut(u32) -> bool,
    mut threshold: i64,
) -> Vec<Hit> {
    if k == 0 || terms.is_empty() {
        return Vec::new();
    }
    let mut cursors: Vec<Cursor<'_>> = terms
        .iter()
        .map(|&(t, w)| Cursor::new(index, t, w))
        .collect();
    // below[i]: the sum of the window bounds of cursors 0..i (sorted by it).
    let mut below: Vec<i64> = Vec::with_capacity(cursors.len() + 1);
    let mut heap: Vec<Entry> = Vec::with_capacity(k.min(1024));
    let mut window = Window {
        score: [0; PRUNED_WINDOW],
        fields: [0; PRUNED_WINDOW],
        touched: [0; PRUNED_WINDOW / 64],
    };
    // Documents below `from` are done; no document is numbered `docs` or above (a corrupt index
    // may say otherwise: those are not scored).
    let mut from = 0u32;
    let docs = index.docs();
    // The terms ranked by the most each can add to any document, lowest first; `lifts[r]` is
    // what the `r` lowest can add together. A document holding none of the terms ranked
    // `rising` or above cannot enter, so the next window starts at one of theirs.
    cursors.sort_by_key(|c| c.ceiling);
    let mut lifts: Vec<i64> = Vec::with_capacity(cursors.len() + 1);
    lifts.push(0);
    for (r, c) in cursors.iter_mut().enumerate() {
        c.rank = r;
        lifts.push(lifts[r] + c.ceiling);
    }
    // The most any document can score: once the k-th score reaches it, nothing can enter.
    let total = lifts.last().copied().unwrap_or(0);
    // A document must score above `threshold` to enter: the floor given until `k` are held,
    // then the k-th score (an equal score loses: documents come in increasing order).
    let mut rising = 0usize;
    while total > threshold && from < docs {
        while lifts.get(rising + 1).is_some_and(|&l| l <= threshold) {
            rising += 1;
        }
        let Some(next) = cursors
            .iter()
            .filter(|c| c.rank >= rising)
            .filter_map(|c| c.current.map(|p| p.doc.max(from)))
            .min()
        else {
            break;
        };
        let base = next - next % PRUNED_WINDOW as u32;
        let end = base.saturating_add(PRUNED_WINDOW as u32);
        let essential = window_bounds(&mut cursors, &mut below, base, end, threshold);
        window.add(&mut cursors[essential..], base, end);
        // The window's candidates in document order, completed from the non-essential terms
        // while they can still enter.
        for w in 0..window.touched.len() {
            let mut bits = std::mem::take(&mut window.touched[w]);
            while bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let doc = base + i as u32;
                let (s, f) = window.take(i);
                if s + below[essential] <= threshold || !keep(doc) {
                    continue;
                }
                let non_essential = &mut cursors[..essential];
                let Some((s, f)) = complete(non_essential, &below, doc, s, f, threshold) else {
                    continue;
                };
                let entry = Entry {
                    score: s,
                    doc,
                    fields: Fields(f),
                };
                offer(&mut heap, k, entry);
                if heap.len() == k {
                    threshold = heap[0].score;
                }
            }
        }
        if end == u32::MAX {
            break;
        }
        from = end;
    }
    finish(index, heap)
}

/// One term of a pruned search: its postings, the posting it stands on, its weight, and the
/// most it can add to a document (of the index, then of the current window).
struct Cursor<'a> {
    postings: Postings<'a>,
    current: Option<Posting>,
    weight: i64,
    bound: i64,
    /// The most the term can add to any document.
    ceiling: i64,
    /// The term's place among the query's, by `ceiling`, lowest first.
    rank: usize,
}

impl<'a> Cursor<'a> {
    fn new(index: &Index<'a>, t: Term, w: u32) -> Self {
        let mut postings = index.postings(t);
        let current = postings.next();
        let weight = i64::from(w) * i64::from(postings.scale());
        let bound = weight * i64::from(postings.max_impact());
        Cursor {
            postings,
            current,
            weight,
            bound,
            ceiling: bound,
            rank: 0,
        }
    }

    /// What this posting adds to its document's score.
    fn value(&self, p: Posting) -> i64 {
        let v = i64::from(p.impact) * self.weight;
        if p.fields.is_negative() {
            -v
        } else {
            v
        }
    }
}

/// Bounds every term in the window `base..end` (its weight times the highest block maximum
/// among the blocks the window overlaps), sorts the terms lowest bound first and fills `below`;
/// returns how many are non-essential (a prefix: together they cannot lift a document past
/// `threshold`).
fn window_bounds(
    cursors: &mut [Cursor<'_>],
    below: &mut Vec<i64>,
    base: u32,
    end: u32,
    threshold: i64,
) -> usize {
    for c in cursors.iter_mut() {
        if c.current.is_some_and(|p| p.doc < base) && c.postings.skip_to(base).is_none() {
            c.current = None;
        }
        c.bound = match c.current {
            Some(p) if p.doc < end => c.weight * i64::from(c.postings.max_before(end)),
            _ => 0,
        };
    }
    cursors.sort_by_key(|c| c.bound);
    below.clear();
    below.push(0);
    let mut acc = 0i64;
    for c in cursors.iter() {
        acc += c.bound;
        below.push(acc);
    }
    let mut essential = 0usize;
    while essential < cursors.len() && below[essential + 1] <= threshold {
        essential += 1;
    }
    essential
}

/// The accumulators of one window of [`PRUNED_WINDOW`] documents.
struct Window {
    score: [i64; PRUNED_WINDOW],
    fields: [u8; PRUNED_WINDOW],
    touched: [u64; PRUNED_WINDOW / 64],
}

impl Window {
    /// Sums the postings of the essential terms that fall in `base..end`.
    fn add(&mut self, essential: &mut [Cursor<'_>], base: u32, end: u32) {
        for c in essential {
            if c.current.is_some_and(|p| p.doc < base) {
                c.current = c.postings.advance(base);
            }
            while let Some(p) = c.current {
                if p.doc >= end {
                    break;
                }
                if p.doc >= base {
                    let i = (p.doc - base) as usize;
                    self.score[i] += c.value(p);
                    self.fields[i] |= p.fields.0;
                    self.touched[i / 64] |= 1 << (i % 64);
                }
                c.current = c.postings.next();
            }
        }
    }

    /// Document `i`'s partial score and fields, its accumulators cleared for the next window.
    fn take(&mut self, i: usize) -> (i64, u8) {
        let out = (self.score[i], self.fields[i]);
        self.score[i] = 0;
        self.fields[i] = 0;
        out
    }
}

/// Completes document `doc` (partial score `s`, fields `f`) from the non-essential terms,
/// highest bound first, stepping over whole blocks and bounding by each block's maximum before
/// decoding it; `None` as soon as what its remaining terms could add cannot lift it past
/// `threshold`.
fn complete(
    non_essential: &mut [Cursor<'_>],
    below: &[i64],
    doc: u32,
    mut s: i64,
    mut f: u8,
    threshold: i64,
) -> Option<(i64, u8)> {
    for j in (0..non_essential.len()).rev() {
        if s + below[j + 1] <= threshold {
            return None;
        }
        let c = &mut non_essential[j];
        match c.current {
            Some(p) if p.doc >= doc => {}
            Some(_) => {
                if c.postings.skip_to(doc).is_none() {
                    c.current = None;
                    continue;
                }
                if s + below[j] + c.weight * i64::from(c.postings.block_max()) <= threshold {
                    return None;
                }
                c.current = c.postings.advance(doc);
            }
            None => continue,
        }
        if let Some(p) = c.current {
            if p.doc == doc {
                s += c.value(p);
                f |= p.fields.0;
                c.current = c.postings.next();
            }
        }
    }
    (s > threshold).then_some((s, f))
}

/// [`search`] without pruning: every posting of every term is scored. Scoring runs over
/// windows of [`WINDOW`] consecutive document numbers (as Lucene's `BooleanScorer` does): each
/// term's postings that fall in the window add their impact to a fixed-size accumulator, then
/// the window's touched documents go through a size-`k` heap. Time is linear in the terms'
/// postings; it is the reference the pruned search is tested against.
pub fn search_exhaustive(
    index: &Index<'_>,
    terms: &[(Term, u32)],
    k: usize,
    mut keep: impl FnMut(u32) -> bool,
) -> Vec<Hit> {
    if k == 0 || terms.is_empty() {
        return Vec::new();
    }
    let mut cursors: Vec<(Postings<'_>, Option<Posting>, i64)> = terms
        .iter()
        .map(|&(t, w)| {
            let mut p = index.postings(t);
            let first = p.next();
            let weight = i64::from(w) * i64::from(p.scale());
            (p, first, weight)
        })
        .collect();
    let mut score = [0i64; WINDOW];
    let mut fields = [0u8; WINDOW];
    let mut touched = [0u64; WINDOW / 64];
    let mut heap: Vec<Entry> = Vec::with_capacity(k.min(1024));
    let mut base = 0u32;
    // The next window starts at the lowest document any cursor is on.
    while let Some(next) = cursors.iter().filter_map(|c| c.1.map(|p| p.doc)).min() {
        if next >= base {
            base = next - next % WINDOW as u32;
        }
        let end = base.saturating_add(WINDOW as u32);
        for (postings, current, weight) in &mut cursors {
            while let Some(p) = *current {
                if p.doc >= end {
                    break;
                }
                if p.doc >= base {
                    let i = (p.doc - base) as usize;
                    let v = i64::from(p.impact) * *weight;
                    score[i] += if p.fields.is_negative() { -v } else { v };
                    fields[i] |= p.fields.0;
                    touched[i / 64] |= 1 << (i % 64);
                }
                *current = postings.next();
            }
        }
        for (w, bits) in touched.iter_mut().enumerate() {
            let mut b = *bits;
            while b != 0 {
                let i = w * 64 + b.trailing_zeros() as usize;
                b &= b - 1;
                let entry = Entry {
                    score: score[i],
                    doc: base + i as u32,
                    fields: Fields(fields[i]),
                };
                score[i] = 0;
                fields[i] = 0;
                if entry.score <= 0 || !keep(entry.doc) {
                    continue;
                }
                offer(&mut heap, k, entry);
            }
            *bits = 0;
        }
        if end == u32::MAX {
            break;
        }
        base = end;
    }
    finish(index, heap)
}

/// The heap's entries, best first, as hits.
fn finish(index: &Index<'_>, mut heap: Vec<Entry>) -> Vec<Hit> {
    heap.sort_by(|a, b| {
        if a.better(b) {
            std::cmp::Ordering::Less
        } else {
            std::cmp::Ordering::Greater
        }
    });
    heap.into_iter()
        .map(|e| Hit {
            doc: e.doc,
            score: e.score as f32 * index.scale(),
            fields: e.fields,
        })
        .collect()
}

fn worse(a: &Entry, b: &Entry) -> bool {
    b.better(a)
}

/// Keeps `entry` in `heap`, the `k` best seen so far with the worst at the root: pushed while
/// there is room, else in place of the root when it beats it.
#[inline]
fn offer(heap: &mut Vec<Entry>, k: usize, entry: Entry) {
    if heap.len() < k {
        heap.push(entry);
        sift_up(heap);
    } else if heap.first().is_some_and(|worst| entry.better(worst)) {
        heap[0] = entry;
        sift_down(heap);
    }
}

fn sift_up(heap: &mut [Entry]) {
    let mut i = heap.len() - 1;
    while i > 0 {
        let parent = (i - 1) / 2;
        if worse(&heap[i], &heap[parent]) {
            heap.swap(i, parent);
            i = parent;
        } else {
            break;
        }
    }
}

fn sift_down(heap: &mut [Entry]) {
    let mut i = 0;
    loop {
        let (l, r) = (2 * i + 1, 2 * i + 2);
        let mut m = i;
        if l < heap.len() && worse(&heap[l], &heap[m]) {
            m = l;
        }
        if r < heap.len() && worse(&heap[r], &heap[m]) {
            m = r;
        }
        if m == i {
            break;
        }
        heap.swap(i, m);
        i = m;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(doc: u32, impact: u8, fields: Fields) -> Posting {
        Posting {
            doc,
            impact,
            fields,
        }
    }

    proptest::proptest! {
        /// The fields byte stored once per term is the one the whole table would pick: the
        /// most frequent, the smallest among equals; the table is left zero for the next term.
        #[test]
        fn the_common_fields_byte_is_the_most_frequent_and_smallest(
            fields in proptest::collection::vec(proptest::sample::select(vec![0u8, 1, 2, 3, 5, 8, 64, 129, 255]), 1..200),
        ) {
            let postings: Vec<Posting> = fields
                .iter()
                .enumerate()
                .map(|(i, &f)| p(i as u32, 1, Fields(f)))
                .collect();
            let mut all = [0u32; 256];
            for q in &postings {
                all[usize::from(q.fields.0)] += 1;
            }
            let mut want = 0u8;
            for (f, &c) in all.iter().enumerate() {
                if c > all[usize::from(want)] {
                    want = f as u8;
                }
            }
            let mut counts = Box::new([0u32; 256]);
            proptest::prop_assert_eq!(most_common_fields(&mut counts, &postings), want);
            proptest::prop_assert!(counts.iter().all(|&c| c == 0));
        }
    }

    /// Postings are encoded to the same bytes whether the writer's scratch space is fresh or
    /// left over from longer and shorter lists before.
    #[test]
    fn a_term_encodes_alike_after_any_other() {
        let f = |i: u32| {
            Fields(if i.is_multiple_of(3) {
                1
            } else {
                2 + (i % 5) as u8
            })
        };
        let lists: Vec<Vec<Posting>> = [1usize, 200, 3, 64, 65, 1000, 2]
            .iter()
            .map(|&n| {
                (0..n as u32)
                    .map(|i| p(i * 2, 1 + (i % 250) as u8, f(i)))
                    .collect()
            })
            .collect();
        let alone = |list: &[Posting]| {
            let mut out = Vec::new();
            let ok = encode_postings(&mut out, &mut Scratch::default(), 7, list);
            assert!(ok.is_ok());
            out
        };
        let mut scratch = Scratch::default();
        for list in &lists {
            let mut out = Vec::new();
            assert!(encode_postings(&mut out, &mut scratch, 7, list).is_ok());
            assert_eq!(out, alone(list), "{} postings", list.len());
        }
    }

    fn sample() -> Vec<u8> {
        let mut w = Writer::new(4, 0.5);
        let d = Fields::DESCRIPTION;
        w.term("alpha", 1, &[p(0, 10, d), p(2, 200, d), p(3, 5, d)])
            .unwrap();
        w.term("beta", 1, &[p(1, 50, d), p(2, 1, Fields::WHEN_NOT_TO_USE)])
            .unwrap();
        w.term("gamma", 1, &[p(3, 255, Fields::NAME), p(300, 1, d)])
            .unwrap();
        w.buckets(vec!["".into(), "data".into()], vec![0, 1, 1, 0]);
        w.finish().unwrap()
    }

    #[test]
    fn round_trips() {
        let bytes = sample();
        let ix = Index::new(&bytes).unwrap();
        assert_eq!(ix.docs(), 4);
        // `gamma` had a posting beyond the document count: skipped whole.
        assert_eq!(ix.terms(), 2);
        assert!(ix.find("gamma").is_none());
        assert!(ix.find("alph").is_none());
        assert!(ix.find("zzz").is_none());
        let alpha = ix.find("alpha").unwrap();
        let docs: Vec<u32> = ix.postings(alpha).map(|p| p.doc).collect();
        assert_eq!(docs, [0, 2, 3]);
        assert_eq!(ix.postings(alpha).scale(), 1);
        assert_eq!(ix.bucket_of(1), "data");
        assert_eq!(ix.bucket_of(3), "");
        assert_eq!(ix.bucket_names().collect::<Vec<_>>(), ["", "data"]);
    }

    #[test]
    fn finds_every_term_across_blocks() {
        let words: Vec<String> = (0..200).map(|i| format!("term{i:04}x")).collect();
        let mut w = Writer::new(200, 1.0);
        for (i, t) in words.iter().enumerate() {
            w.term(t, 3, &[p(i as u32, 1 + (i % 200) as u8, Fields::BODY)])
                .unwrap();
        }
        let bytes = w.finish().unwrap();
        let ix = Index::new(&bytes).unwrap();
        for (i, t) in words.iter().enumerate() {
            let term = ix.find(t).unwrap();
            let got: Vec<u32> = ix.postings(term).map(|p| p.doc).collect();
            assert_eq!(got, [i as u32], "{t}");
        }
        assert!(ix.find("term0000").is_none());
        assert!(ix.find("a").is_none());
        assert!(ix.find("term9999x").is_none());
    }

    fn terms(ix: &Index<'_>, words: &[&str]) -> Vec<(Term, u32)> {
        words
            .iter()
            .filter_map(|w| ix.find(w))
            .map(|t| (t, 1))
            .collect()
    }

    #[test]
    fn ranks_with_negative_evidence_and_filter() {
        let bytes = sample();
        let ix = Index::new(&bytes).unwrap();
        let q = terms(&ix, &["alpha", "beta"]);
        let hits = search(&ix, &q, 10, |_| true);
        let docs: Vec<(u32, f32)> = hits.iter().map(|h| (h.doc, h.score)).collect();
        assert_eq!(docs, [(2, 99.5), (1, 25.0), (0, 5.0), (3, 2.5)]);
        assert!(hits[0].fields.contains(Fields::WHEN_NOT_TO_USE));
        let top1 = search(&ix, &q, 1, |_| true);
        assert_eq!(top1[0].doc, 2);
        let data = search(&ix, &q, 10, |d| ix.bucket_of(d) == "data");
        assert_eq!(data.iter().map(|h| h.doc).collect::<Vec<_>>(), [2, 1]);
    }

    /// splitmix64: deterministic test data.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// A random index: `docs` documents, `vocab` terms with document frequencies from a few to
    /// almost all (so that lists with and without skip directories are mixed), impacts from a
    /// tiny range (many equal scores), some `when_not_to_use` postings.
    fn random_index(
        rng: &mut Rng,
        docs: u32,
        vocab: usize,
        impacts: u64,
    ) -> (Vec<u8>, Vec<String>) {
        let words: Vec<String> = (0..vocab).map(|i| format!("w{i:03}")).collect();
        let mut w = Writer::new(docs, 0.25);
        for (i, t) in words.iter().enumerate() {
            // Density from 1 in 2 to 1 in 2^9 documents.
            let sparse = 1 + (i % 9) as u64;
            let mut list = Vec::new();
            for d in 0..docs {
                if rng.below(1 << sparse) == 0 {
                    let fields = match rng.below(10) {
                        0 => Fields::WHEN_NOT_TO_USE,
                        1 => Fields::NAME | Fields::BODY,
                        2 => Fields::DESCRIPTION,
                        _ => Fields::BODY,
                    };
                    list.push(p(d, 1 + rng.below(impacts) as u8, fields));
                }
            }
            if list.is_empty() {
                list.push(p(rng.below(u64::from(docs)) as u32, 1, Fields::BODY));
            }
            w.term(t, 1 + rng.below(3) as u16, &list).unwrap();
        }
        (w.finish().unwrap(), words)
    }

    /// One to seven of `words`, each weighing 1 to 3.
    fn random_query(rng: &mut Rng, ix: &Index<'_>, words: &[String]) -> Vec<(Term, u32)> {
        let n = 1 + rng.below(7) as usize;
        let mut q: Vec<(Term, u32)> = Vec::new();
        for _ in 0..n {
            let word = &words[rng.below(words.len() as u64) as usize];
            let weight = 1 + rng.below(3) as u32;
            q.extend(ix.find(word).map(|t| (t, weight)));
        }
        q
    }

    #[test]
    fn postings_decode_and_skip_across_blocks() {
        let mut rng = Rng(7);
        let list: Vec<Posting> = (0..1000u32)
            .filter(|_| rng.below(3) == 0)
            .map(|d| {
                let f = if d % 7 == 0 {
                    Fields::NAME
                } else {
                    Fields::BODY
                };
                p(d * 3, 1 + (d % 250) as u8, f)
            })
            .collect();
        assert!(list.len() > 3 * BLOCK_POSTINGS);
        let mut w = Writer::new(3000, 1.0);
        w.term("t", 9, &list).unwrap();
        w.term("u", 2, &[p(2999, 17, Fields::TAGS)]).unwrap();
        let bytes = w.finish().unwrap();
        let ix = Index::new(&bytes).unwrap();
        let t = ix.find("t").unwrap();
        assert_eq!(ix.postings(t).collect::<Vec<_>>(), list);
        assert_eq!(ix.postings(t).scale(), 9);
        assert_eq!(ix.postings_len(t), list.len() as u32);
        assert_eq!(ix.postings_len(ix.find("u").unwrap()), 1);
        let max = list.iter().map(|p| p.impact).max().unwrap();
        assert_eq!(ix.postings(t).max_impact(), max);
        for target in [0, 1, 500, 1501, 2000, 2997, 2998, 5000] {
            let mut c = ix.postings(t);
            let want = list.iter().find(|p| p.doc >= target).copied();
            let mut sought = ix.postings(t);
            let found = sought.seek(target).and_then(|()| sought.advance(target));
            assert_eq!(found, want, "seek({target})");
            assert_eq!(c.advance(target), want, "advance({target})");
            // The rest follows in order.
            let rest: Vec<Posting> = c.collect();
            let after: Vec<Posting> = list
                .iter()
                .filter(|p| p.doc > target.max(want.map_or(0, |w| w.doc)))
                .copied()
                .collect();
            if want.is_some() {
                assert_eq!(rest, after, "after advance({target})");
            }
        }
        let u: Vec<Posting> = ix.postings(ix.find("u").unwrap()).collect();
        assert_eq!(u, [p(2999, 17, Fields::TAGS)]);
    }

    /// The score of every document, the slow and obvious way.
    fn brute_force(
        ix: &Index<'_>,
        q: &[(Term, u32)],
        k: usize,
        keep: impl Fn(u32) -> bool,
    ) -> Vec<Hit> {
        let mut all: std::collections::BTreeMap<u32, (i64, u8)> = Default::default();
        for &(t, w) in q {
            let list = ix.postings(t);
            let weight = i64::from(w) * i64::from(list.scale());
            for p in list {
                let e = all.entry(p.doc).or_default();
                let v = i64::from(p.impact) * weight;
                e.0 += if p.fields.is_negative() { -v } else { v };
                e.1 |= p.fields.0;
            }
        }
        let mut v: Vec<(u32, i64, u8)> = all
            .into_iter()
            .filter(|(d, (s, _))| *s > 0 && keep(*d))
            .map(|(d, (s, f))| (d, s, f))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v.truncate(k);
        v.into_iter()
            .map(|(doc, s, f)| Hit {
                doc,
                score: s as f32 * ix.scale(),
                fields: Fields(f),
            })
            .collect()
    }

    #[test]
    fn pruned_search_returns_exactly_the_exhaustive_top_k() {
        let mut rng = Rng(2024);
        let mut queries = 0;
        let mut pruned_differs_from_all = 0;
        for round in 0..12 {
            let docs = [1, 2, 5, 60, 300, 1500, 5000][round % 7];
            // Few impact levels make many equal scores: the tie-break is exercised.
            let impacts = [1, 2, 4, 255][round % 4];
            let (bytes, words) = random_index(&mut rng, docs, 40, impacts);
            let ix = Index::new(&bytes).unwrap();
            for _ in 0..150 {
                let q = random_query(&mut rng, &ix, &words);
                let k = [1, 2, 3, 5, 10, 50][rng.below(6) as usize];
                let filter = rng.below(4) == 0;
                let keep = |d: u32| !filter || !d.is_multiple_of(3);
                // The pruned search itself, whatever `search` would choose for this query.
                let fast = search_above(&ix, &q, k, keep, 0);
                let slow = search_exhaustive(&ix, &q, k, keep);
                assert_eq!(
                    fast, slow,
                    "docs {docs}, impacts {impacts}, k {k}, filter {filter}"
                );
                assert_eq!(search(&ix, &q, k, keep), slow);
                assert_eq!(slow, brute_force(&ix, &q, k, keep));
                queries += 1;
                pruned_differs_from_all += usize::from(fast.len() == k);
            }
        }
        assert_eq!(queries, 12 * 150);
        // Most queries fill their top-K, so pruning had work to do.
        assert!(
            pruned_differs_from_all > queries / 2,
            "{pruned_differs_from_all}"
        );
    }

    /// `search` scores every posting of a query whose terms are rare for the index's size, and
    /// prunes one whose terms hold many postings a window.
    #[test]
    fn the_search_prunes_only_where_postings_are_many() {
        let mut rng = Rng(5);
        let (bytes, words) = random_index(&mut rng, 5000, 40, 255);
        let ix = Index::new(&bytes).unwrap();
        let by_len = |dense: bool| -> Vec<(Term, u32)> {
            let mut q: Vec<(Term, u32)> = words
                .iter()
                .filter_map(|w| ix.find(w))
                .map(|t| (t, 1))
                .collect();
            q.sort_by_key(|&(t, _)| ix.postings_len(t));
            if dense {
                q.split_off(q.len() - 3)
            } else {
                q.truncate(3);
                q
            }
        };
        let (rare, dense) = (by_len(false), by_len(true));
        // (Term densities run from 1 in 2 to 1 in 512 documents.)
        assert!(scoring_all_is_cheaper(&ix, &rare));
        assert!(!scoring_all_is_cheaper(&ix, &dense));
        for q in [rare, dense] {
            assert_eq!(
                search(&ix, &q, 10, |_| true),
                search_exhaustive(&ix, &q, 10, |_| true)
            );
        }
    }

    /// Document `doc`'s score for `q` (0 when it holds none of the terms), as a hit gives it.
    fn score_of(ix: &Index<'_>, q: &[(Term, u32)], doc: u32) -> f32 {
        let mut s = 0i64;
        for &(t, w) in q {
            let list = ix.postings(t);
            let weight = i64::from(w) * i64::from(list.scale());
            for p in list.filter(|p| p.doc == doc) {
                let v = i64::from(p.impact) * weight;
                s += if p.fields.is_negative() { -v } else { v };
            }
        }
        s as f32 * ix.scale()
    }

    #[test]
    fn a_near_search_is_a_prefix_of_the_top_k_with_every_hit_within_the_ratio() {
        let mut rng = Rng(31);
        let (mut queries, mut cut, mut within) = (0, 0, 0);
        for round in 0..10 {
            let docs = [2, 60, 300, 1500, 5000][round % 5];
            let impacts = [1, 4, 255][round % 3];
            let (bytes, words) = random_index(&mut rng, docs, 40, impacts);
            let ix = Index::new(&bytes).unwrap();
            for _ in 0..120 {
                let q = random_query(&mut rng, &ix, &words);
                // The document is often one the query scores well (as a pack's own description
                // scores its pack), sometimes any.
                let full_all = search(&ix, &q, 5, |_| true);
                let doc = match full_all.get(rng.below(4) as usize) {
                    Some(h) if rng.below(3) > 0 => h.doc,
                    _ => rng.below(u64::from(docs)) as u32,
                };
                let ratio = [0.0, 0.5, 0.9, 0.99, 1.0][rng.below(5) as usize];
                let k = [1, 3, 10][rng.below(3) as usize];
                let full = search(&ix, &q, k, |_| true);
                let near = search_near(&ix, &q, doc, ratio, k);
                let own = f64::from(score_of(&ix, &q, doc));
                let needed = full
                    .iter()
                    .take_while(|h| own <= 0.0 || f64::from(h.score) / own >= ratio)
                    .count();
                assert!(
                    full.starts_with(&near) && near.len() >= needed,
                    "docs {docs}, impacts {impacts}, k {k}, ratio {ratio}, doc {doc}: {near:?} of {full:?}"
                );
                queries += 1;
                cut += usize::from(near.len() < full.len());
                within += usize::from(needed > 0 && needed < full.len());
            }
        }
        assert_eq!(queries, 10 * 120);
        // The floor left hits out, and some queries kept a part of the top-k.
        assert!(cut > queries / 10, "{cut}");
        assert!(within > queries / 20, "{within}");
    }

    #[test]
    fn corrupt_skip_directories_never_panic() {
        let mut rng = Rng(99);
        let (bytes, words) = random_index(&mut rng, 400, 5, 255);
        let ix = Index::new(&bytes).unwrap();
        let q: Vec<(Term, u32)> = words
            .iter()
            .filter_map(|w| ix.find(w))
            .map(|t| (t, 1))
            .collect();
        assert!(q
            .iter()
            .any(|&(t, _)| ix.postings(t).count() > BLOCK_POSTINGS));
        let mut flipped = bytes.clone();
        for i in HEADER..flipped.len() {
            for bit in [0x01, 0x80] {
                flipped[i] ^= bit;
                if let Some(ix) = Index::new(&flipped) {
                    let q: Vec<(Term, u32)> = words
                        .iter()
                        .filter_map(|w| ix.find(w))
                        .map(|t| (t, 2))
                        .collect();
                    let _ = search(&ix, &q, 3, |_| true);
                    let _ = search_exhaustive(&ix, &q, 3, |_| true);
                    for doc in [0, 7, 250, 399, 400, u32::MAX] {
                        let _ = search_near(&ix, &q, doc, 0.9, 3);
                    }
                }
                flipped[i] ^= bit;
            }
        }
    }

    #[test]
    fn corrupt_bytes_never_panic() {
        let bytes = sample();
        for cut in 0..bytes.len() {
            if let Some(ix) = Index::new(&bytes[..cut]) {
                let q = terms(&ix, &["alpha", "beta"]);
                let _ = search(&ix, &q, 3, |_| true);
            }
        }
        let mut flipped = bytes.clone();
        for i in HEADER..flipped.len() {
            for bit in [0x01, 0x80, 0xFF] {
                flipped[i] ^= bit;
                if let Some(ix) = Index::new(&flipped) {
                    let q = terms(&ix, &["alpha", "beta", "gamma"]);
                    let _ = search(&ix, &q, 3, |_| true);
                    let _ = search_near(&ix, &q, 2, 0.9, 3);
                    let _ = ix.bucket_of(2);
                }
                flipped[i] ^= bit;
            }
        }
    }
}
