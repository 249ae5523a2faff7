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
//!             bytes): shared prefix length u8 (0 for a block's first term), suffix length
//!             u8, suffix bytes, postings length varint
//! postings    per term: its scale u16, then per document in order:
//!             varint(document − previous document, the first one as is), impact u8, fields u8
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
//! a scan of at most 16 terms.

use crate::tokenize::Tokenizer;

/// Version of the layout and of the tokenizer; the generated registry checks it at compile time.
pub const FORMAT: u32 = 1;

const MAGIC: &[u8; 4] = b"SBRI";
const SECTIONS: usize = 6;
const HEADER: usize = 24 + (SECTIONS + 1) * 4;
/// Terms per dictionary block.
pub const BLOCK: usize = 16;
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
        let start = self.postings.len();
        self.postings.extend_from_slice(&term_scale.to_le_bytes());
        let mut prev = 0u32;
        for (i, p) in postings.iter().enumerate() {
            write_varint(
                &mut self.postings,
                if i == 0 { p.doc } else { p.doc - prev },
            );
            self.postings.push(p.impact);
            self.postings.push(p.fields.0);
            prev = p.doc;
        }
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
        self.dict.push(prefix as u8);
        self.dict.push((bytes.len() - prefix) as u8);
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
fn read_varint(data: &[u8], pos: &mut usize) -> Option<u32> {
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
        // postings offset u32, prefix 0, suffix length, suffix.
        let len = *self.dict.get(at + 5)? as usize;
        Some((self.dict.get(at + 6..at + 6 + len)?, at))
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
            let prefix = *self.dict.get(pos)? as usize;
            let suffix = *self.dict.get(pos + 1)? as usize;
            pos += 2;
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
        let data = self.postings.get(term.start..term.end).unwrap_or(&[]);
        let scale = match data {
            [a, b, ..] => u16::from_le_bytes([*a, *b]),
            _ => 0,
        };
        Postings {
            data,
            pos: 2,
            doc: 0,
            first: true,
            scale,
        }
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

/// A cursor over one term's postings, in document order.
#[derive(Debug, Clone)]
pub struct Postings<'a> {
    data: &'a [u8],
    pos: usize,
    doc: u32,
    first: bool,
    scale: u16,
}

impl Postings<'_> {
    /// The term's scale: what one impact unit of this list weighs, in index units.
    pub fn scale(&self) -> u16 {
        self.scale
    }
}

impl Iterator for Postings<'_> {
    type Item = Posting;

    fn next(&mut self) -> Option<Posting> {
        let delta = read_varint(self.data, &mut self.pos)?;
        let impact = *self.data.get(self.pos)?;
        let fields = *self.data.get(self.pos + 1)?;
        self.pos += 2;
        self.doc = if self.first {
            delta
        } else {
            self.doc.saturating_add(delta)
        };
        self.first = false;
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

/// Documents scored together: the accumulators of one window live on the stack.
pub const WINDOW: usize = 2048;

/// The `k` best documents for `terms` (from [`query_terms`]) among those `keep` accepts, best
/// first; only documents with a positive score are returned.
///
/// Scoring runs over windows of [`WINDOW`] consecutive document numbers (as Lucene's
/// `BooleanScorer` does): each term's postings that fall in the window add their impact to a
/// fixed-size accumulator, then the window's touched documents go through a size-`k` heap.
/// Memory is fixed (about 10 KiB of accumulators) plus what the terms and `k` need, never
/// proportional to the number of documents; time is linear in the terms' postings.
pub fn search(
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
                if heap.len() < k {
                    heap.push(entry);
                    sift_up(&mut heap);
                } else if entry.better(&heap[0]) {
                    heap[0] = entry;
                    sift_down(&mut heap);
                }
            }
            *bits = 0;
        }
        if end == u32::MAX {
            break;
        }
        base = end;
    }
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
                    let _ = ix.bucket_of(2);
                }
                flipped[i] ^= bit;
            }
        }
    }
}
