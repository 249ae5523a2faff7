//! The routing index, built at compile time: every pack's fields are tokenized (with the
//! tokenizer the runtime uses on requests, `skillbake_route::tokenize`), weighted per field
//! (BM25F), and each (term, pack) weight is precomputed and quantized, so that answering a
//! request only adds small integers from static tables (`skillbake_route::index::search`).
//!
//! Weights: a term's weight in a pack is
//! `idf(t) · t̃ / (K1 + t̃)` with `t̃ = Σ_fields w_f · kind · tf_f / (1 − b_f + b_f · len_f / avglen_f)`
//! and `idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))`, where [`FIELDS`] gives `w_f` and `b_f`,
//! and `kind` weights CJK unigrams below words and bigrams ([`Weights::kind`]). A term that occurs
//! in `when_not_to_use` but in none of the pack's other fields gets a posting of negative
//! weight: a request that uses it is evidence against the pack.
//!
//! The index is deterministic: terms in byte order, packs in name order, floating-point sums in
//! a fixed order.

use crate::model::{DocTerms, RouteDoc, Skill};
use skillbake_route::index::{Fields, Posting, TooLarge, Writer};
use skillbake_route::tokenize::{Kind, Tokenizer};
use std::collections::HashMap;

/// BM25 term-frequency saturation.
pub const K1: f64 = 1.2;

/// Per field: (field, weight `w_f`, length normalisation `b_f`). What a pack says about itself
/// in its frontmatter weighs more than its instructions; the spread is kept moderate because,
/// on the public sets of `cargo xtask route-eval`, sharper weights lift incidental words of
/// short fields (see BENCHMARKS.md).
pub const FIELDS: [(Fields, f64, f64); 8] = [
    (Fields::NAME, 1.5, 0.5),
    (Fields::DESCRIPTION, 1.5, 0.75),
    (Fields::WHEN_TO_USE, 1.5, 0.75),
    (Fields::TAGS, 1.2, 0.5),
    (Fields::HEADINGS, 1.0, 0.75),
    (Fields::BODY, 0.8, 0.75),
    (Fields::SCHEMA, 0.8, 0.75),
    (Fields::WHEN_NOT_TO_USE, 1.5, 0.75),
];

/// The parameters of the ranking function (the defaults are [`Weights::DEFAULT`]; other values
/// serve the evaluation's ablations).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    /// Per field, in `FIELDS` order: (`w_f`, `b_f`).
    pub fields: [(f64, f64); 8],
    /// BM25 saturation.
    pub k1: f64,
    /// Weight of a CJK unigram occurrence (words, compounds and bigrams count 1).
    pub unigram: f64,
    /// Whether `when_not_to_use` counts against a pack.
    pub negative: bool,
    /// The tokenizer's switches (the runtime tokenizes requests with the defaults).
    pub tokenizer: skillbake_route::tokenize::Options,
}

impl Weights {
    /// The weights the compiler uses.
    pub const DEFAULT: Weights = Weights {
        fields: [
            (FIELDS[0].1, FIELDS[0].2),
            (FIELDS[1].1, FIELDS[1].2),
            (FIELDS[2].1, FIELDS[2].2),
            (FIELDS[3].1, FIELDS[3].2),
            (FIELDS[4].1, FIELDS[4].2),
            (FIELDS[5].1, FIELDS[5].2),
            (FIELDS[6].1, FIELDS[6].2),
            (FIELDS[7].1, FIELDS[7].2),
        ],
        k1: K1,
        unigram: 0.3,
        negative: true,
        tokenizer: skillbake_route::tokenize::Options::DEFAULT,
    };

    /// How much one occurrence of a kind of term counts.
    pub fn kind(&self, kind: Kind) -> f64 {
        match kind {
            Kind::Word | Kind::Compound | Kind::Bigram => 1.0,
            Kind::Unigram => self.unigram,
        }
    }
}

/// The text of each field of one pack.
#[derive(Debug, Default, Clone)]
pub struct FieldTexts {
    /// Texts per field, in `FIELDS` order.
    pub texts: [Vec<String>; 8],
}

impl FieldTexts {
    /// The fields of a validated pack.
    pub fn of(skill: &Skill) -> FieldTexts {
        let mut f = FieldTexts::default();
        f.texts[0].push(skill.name.clone());
        f.texts[1].push(skill.description.clone());
        f.texts[2].clone_from(&skill.route.when_to_use);
        f.texts[3].clone_from(&skill.tags);
        let (headings, body) = split_body(&skill.body);
        f.texts[4] = headings;
        f.texts[5] = body;
        if let Some(schema) = skill.files.iter().find(|x| x.path == "schema.json") {
            f.texts[6] = schema_texts(&schema.bytes);
        }
        f.texts[7].clone_from(&skill.route.when_not_to_use);
        f
    }
}

/// The body's markdown headings (ATX `#` lines outside fenced code) and the rest.
pub fn split_body(body: &str) -> (Vec<String>, Vec<String>) {
    let mut headings = Vec::new();
    let mut rest = Vec::new();
    let mut fence: Option<&str> = None;
    for line in body.lines() {
        let t = line.trim_start();
        if let Some(f) = fence {
            if t.starts_with(f) {
                fence = None;
            }
            rest.push(line.to_string());
            continue;
        }
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = Some(&t[..3]);
            rest.push(line.to_string());
            continue;
        }
        let hashes = t.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && t[hashes..].starts_with([' ', '\t']) {
            headings.push(
                t[hashes..]
                    .trim()
                    .trim_end_matches('#')
                    .trim_end()
                    .to_string(),
            );
        } else {
            rest.push(line.to_string());
        }
    }
    (headings, vec![rest.join("\n")])
}

/// Property names, titles, descriptions and string `enum` values of a `schema.json`.
pub fn schema_texts(bytes: &[u8]) -> Vec<String> {
    fn walk(v: &serde_json::Value, out: &mut Vec<String>, depth: usize) {
        if depth > 32 {
            return;
        }
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    match (k.as_str(), v) {
                        ("title" | "description", serde_json::Value::String(s)) => {
                            out.push(s.clone())
                        }
                        ("properties", serde_json::Value::Object(props)) => {
                            for (name, sub) in props {
                                out.push(name.clone());
                                walk(sub, out, depth + 1);
                            }
                        }
                        ("enum", serde_json::Value::Array(items)) => {
                            out.extend(items.iter().filter_map(|i| i.as_str().map(str::to_string)))
                        }
                        _ => walk(v, out, depth + 1),
                    }
                }
            }
            serde_json::Value::Array(items) => {
                for i in items {
                    walk(i, out, depth + 1);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(bytes) {
        walk(&v, &mut out, 0);
    }
    out
}

/// Sizes of a built index, for `check` and the benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    /// Packs indexed.
    pub docs: usize,
    /// Distinct terms.
    pub terms: usize,
    /// (term, pack) pairs.
    pub postings: usize,
    /// Bytes of the serialized index.
    pub bytes: usize,
}

/// A built index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    /// The bytes (`skillbake_route.bin`), read by `skillbake_route::index::Index`.
    pub bytes: Vec<u8>,
    /// Its sizes.
    pub stats: Stats,
}

/// The terms of one pack's fields, tokenized with `tok` (built with `weights.tokenizer`).
pub fn doc_terms(doc: &FieldTexts, weights: &Weights, tok: &mut Tokenizer) -> DocTerms {
    // Each distinct term is allocated once, as its key here; its weights are in `weights_of`.
    let mut slot: HashMap<String, usize, foldhash::fast::FixedState> = HashMap::default();
    let mut weights_of: Vec<[f32; 8]> = Vec::new();
    let mut len = [0f64; 8];
    for (f, texts) in doc.texts.iter().enumerate() {
        for text in texts {
            tok.tokens(text, |t, kind| {
                let i = match slot.get(t) {
                    Some(&i) => i,
                    None => {
                        slot.insert(t.to_string(), weights_of.len());
                        weights_of.push([0.0; 8]);
                        weights_of.len() - 1
                    }
                };
                let w = weights.kind(kind);
                if let Some(term) = weights_of.get_mut(i) {
                    term[f] += w as f32;
                }
                len[f] += w;
            });
        }
    }
    let mut terms: Vec<(String, [f32; 8])> = slot
        .into_iter()
        .map(|(t, i)| (t, weights_of.get(i).copied().unwrap_or_default()))
        .collect();
    // Distinct keys: the order is total, whatever order the map gave them in.
    terms.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let bytes = terms.iter().map(|(t, _)| t.len()).sum();
    let mut out = DocTerms::with_capacity(terms.len(), bytes);
    for (term, tf) in &terms {
        out.push(term, *tf);
    }
    out.len = len;
    out
}

/// Builds the index of `skills`, which must be sorted by name (document `d` is `skills[d]`).
pub fn build(skills: &[&Skill]) -> Result<Built, TooLarge> {
    let fields: Vec<FieldTexts> = skills.iter().map(|s| FieldTexts::of(s)).collect();
    let buckets: Vec<&str> = skills.iter().map(|s| s.route.bucket.as_str()).collect();
    build_fields(&fields, &buckets)
}

/// The [`RouteDoc`] of a validated pack (its terms tokenized with `tok`, made with the default
/// options).
pub fn doc(skill: &Skill, tok: &mut Tokenizer) -> RouteDoc {
    RouteDoc {
        terms: doc_terms(&FieldTexts::of(skill), &Weights::DEFAULT, tok),
        ..doc_without_terms(skill)
    }
}

/// What [`doc`] gives without the terms (no tokenizing): for a check that builds no index.
pub fn doc_without_terms(skill: &Skill) -> RouteDoc {
    RouteDoc {
        name: skill.name.clone(),
        description: skill.description.clone(),
        rel_dir: skill.rel_dir.clone(),
        tags: skill.tags.clone(),
        route: skill.route.clone(),
        terms: crate::model::DocTerms::default(),
    }
}

/// Builds the index of `docs`, sorted by name (what [`build`] gives for the same packs).
pub fn build_docs(docs: &[&RouteDoc]) -> Result<Built, TooLarge> {
    let terms: Vec<&DocTerms> = docs.iter().map(|d| &d.terms).collect();
    let buckets: Vec<&str> = docs.iter().map(|d| d.route.bucket.as_str()).collect();
    build_terms(&terms, &buckets, &Weights::DEFAULT)
}

/// Builds the index from field texts and buckets, one per document.
pub fn build_fields(docs: &[FieldTexts], buckets: &[&str]) -> Result<Built, TooLarge> {
    build_fields_with(docs, buckets, &Weights::DEFAULT)
}

/// `build_fields` with other [`Weights`].
pub fn build_fields_with(
    docs: &[FieldTexts],
    buckets: &[&str],
    weights: &Weights,
) -> Result<Built, TooLarge> {
    let mut tok = Tokenizer::with_options(weights.tokenizer).with_word_cache();
    let terms: Vec<DocTerms> = docs
        .iter()
        .map(|d| doc_terms(d, weights, &mut tok))
        .collect();
    let refs: Vec<&DocTerms> = terms.iter().collect();
    build_terms(&refs, buckets, weights)
}

/// Builds the index from each document's [`DocTerms`] (made with the same `weights`) and bucket.
pub fn build_terms(
    docs: &[&DocTerms],
    buckets: &[&str],
    weights: &Weights,
) -> Result<Built, TooLarge> {
    let n = docs.len();
    let vocab = Vocabulary::of(docs)?;
    let lens: Vec<[f64; 8]> = docs.iter().map(|d| d.len).collect();
    let avg = average_lengths(&lens);
    let weighted = bm25f(docs, &vocab, &avg, weights);
    // (Places no posting took weigh 0.)
    let max = weighted
        .slots
        .iter()
        .map(|p| p.weight.abs())
        .fold(0f64, f64::max);
    // Global unit: the heaviest term's heaviest posting is 255 × 65535 units.
    let unit = if max > 0.0 {
        max / (255.0 * 65535.0)
    } else {
        1.0
    };
    // The terms in byte order (each once, so the order is total).
    let mut order: Vec<usize> = (0..vocab.names.len()).collect();
    order.sort_unstable_by(|&a, &b| vocab.names[a].cmp(vocab.names[b]));
    let mut w = Writer::new(u32::try_from(n).map_err(|_| TooLarge)?, unit as f32);
    let mut postings_total = 0usize;
    let mut list = Vec::new();
    for &i in &order {
        let scale = quantize(weighted.of(i), unit, &mut list);
        postings_total += list.len();
        w.term(vocab.names[i], scale, &list)?;
    }
    let (bucket_names, doc_buckets) = bucket_table(buckets);
    w.buckets(bucket_names, doc_buckets);
    let bytes = w.finish()?;
    Ok(Built {
        stats: Stats {
            docs: n,
            terms: order.len(),
            postings: postings_total,
            bytes: bytes.len(),
        },
        bytes,
    })
}

/// Every distinct term of the packs, numbered in first-seen order; every pack's terms by
/// number, one pack after the other; and how many packs each term occurs in.
struct Vocabulary<'a> {
    names: Vec<&'a str>,
    /// Pack `d`'s terms are the next `docs[d].count()` numbers after the packs before it.
    ids: Vec<u32>,
    df: Vec<u32>,
}

impl<'a> Vocabulary<'a> {
    fn of(docs: &[&'a DocTerms]) -> Result<Vocabulary<'a>, TooLarge> {
        let mut numbers: HashMap<&str, u32, foldhash::fast::FixedState> = HashMap::default();
        let mut names: Vec<&str> = Vec::new();
        let mut df: Vec<u32> = Vec::new();
        let mut ids = Vec::with_capacity(docs.iter().map(|d| d.count()).sum());
        for doc in docs {
            for (t, tf) in doc.iter() {
                let id = match numbers.get(t) {
                    Some(&id) => id,
                    None => {
                        let id = u32::try_from(names.len()).map_err(|_| TooLarge)?;
                        numbers.insert(t, id);
                        names.push(t);
                        df.push(0);
                        id
                    }
                };
                if tf.iter().any(|&x| x > 0.0) {
                    df[id as usize] += 1;
                }
                ids.push(id);
            }
        }
        Ok(Vocabulary { names, ids, df })
    }
}

/// Each field's average length over the packs (at least 1).
fn average_lengths(lens: &[[f64; 8]]) -> [f64; 8] {
    let mut avg = [0f64; 8];
    for l in lens {
        for f in 0..8 {
            avg[f] += l[f];
        }
    }
    for a in &mut avg {
        *a = if lens.is_empty() {
            1.0
        } else {
            (*a / lens.len() as f64).max(1.0)
        };
    }
    avg
}

/// One pack's BM25F weight for a term, and the fields the term occurs in.
#[derive(Debug, Clone, Copy)]
struct Weighted {
    weight: f64,
    doc: u32,
    fields: Fields,
}

/// Every term's postings, in document order, one term's after the other's in one vector (a
/// vector per term cost an allocation each, and a third more bytes a posting).
struct WeightedLists {
    /// Each term's places, `df` of them (the packs it occurs in), the first `filled` taken.
    slots: Vec<Weighted>,
    /// Where each term's places start.
    starts: Vec<usize>,
    /// How many places each term took: one per pack where it has a weight.
    filled: Vec<u32>,
}

impl WeightedLists {
    /// Term `i`'s postings.
    fn of(&self, i: usize) -> &[Weighted] {
        match (self.starts.get(i), self.filled.get(i)) {
            (Some(&a), Some(&n)) => self.slots.get(a..a + n as usize).unwrap_or_default(),
            _ => &[],
        }
    }
}

/// Each term's (pack, BM25F weight, fields) postings; the weight is negative for a term that
/// only `when_not_to_use` holds (when `weights.negative`).
fn bm25f(
    docs: &[&DocTerms],
    vocab: &Vocabulary<'_>,
    avg: &[f64; 8],
    weights: &Weights,
) -> WeightedLists {
    let n = docs.len() as f64;
    // Once per term, not per posting (the same expression, so the same bits).
    let idfs: Vec<f64> = vocab
        .df
        .iter()
        .map(|&df| {
            let df = f64::from(df);
            (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        })
        .collect();
    // A term has at most one posting per pack it occurs in: `df` places are kept for it, and
    // `filled` counts those it takes.
    let mut starts = Vec::with_capacity(vocab.df.len());
    let mut at = 0usize;
    for &df in &vocab.df {
        starts.push(at);
        at += df as usize;
    }
    let mut slots = vec![
        Weighted {
            weight: 0.0,
            doc: 0,
            fields: Fields::default(),
        };
        at
    ];
    let mut filled = vec![0u32; vocab.df.len()];
    let mut ids = vocab.ids.iter();
    for (d, doc) in docs.iter().enumerate() {
        // Each field's length normalisation, once per pack.
        let lens = &doc.len;
        let denom: [f64; 8] = std::array::from_fn(|f| {
            let b = weights.fields[f].1;
            1.0 - b + b * lens[f] / avg[f]
        });
        for ((_, tf), id) in doc.ends().iter().zip(ids.by_ref()) {
            let id = *id as usize;
            let idf = idfs[id];
            let norm = |f: usize| -> f64 {
                let tf = f64::from(tf[f]);
                if tf == 0.0 {
                    return 0.0;
                }
                weights.fields[f].0 * tf / denom[f]
            };
            let mut mask = Fields::default();
            for (f, (bit, _, _)) in FIELDS.iter().enumerate().take(7) {
                if tf[f] > 0.0 {
                    mask |= *bit;
                }
            }
            let positive: f64 = (0..7).map(norm).sum();
            let k1 = weights.k1;
            let (weight, fields) = if positive > 0.0 {
                (idf * positive / (k1 + positive), mask)
            } else {
                let neg = norm(7);
                if neg == 0.0 || !weights.negative {
                    continue;
                }
                (-idf * neg / (k1 + neg), Fields::WHEN_NOT_TO_USE)
            };
            // A pack gives a term one posting at most, so it never takes more than its `df`
            // places (and the place is within `slots`).
            if filled[id] < vocab.df[id] {
                slots[starts[id] + filled[id] as usize] = Weighted {
                    weight,
                    doc: d as u32,
                    fields,
                };
                filled[id] += 1;
            }
        }
    }
    WeightedLists {
        slots,
        starts,
        filled,
    }
}

/// A term's postings as impact bytes, into `list` (emptied first); returns the term's scale
/// (its heaviest posting in units of 255).
fn quantize(postings: &[Weighted], unit: f64, list: &mut Vec<Posting>) -> u16 {
    let term_max = postings
        .iter()
        .map(|p| p.weight.abs())
        .fold(0.0f64, f64::max);
    let term_scale = (term_max / (255.0 * unit)).round().clamp(1.0, 65535.0);
    list.clear();
    list.extend(postings.iter().map(|p| {
        Posting {
            doc: p.doc,
            impact: (p.weight.abs() / (term_scale * unit))
                .round()
                .clamp(1.0, 255.0) as u8,
            fields: p.fields,
        }
    }));
    term_scale as u16
}

/// The sorted bucket names (the root, `""`, always among them) and each pack's bucket.
fn bucket_table(buckets: &[&str]) -> (Vec<String>, Vec<u32>) {
    let mut names: Vec<String> = buckets.iter().map(|b| b.to_string()).collect();
    names.push(String::new());
    names.sort();
    names.dedup();
    let per_doc = buckets
        .iter()
        .map(|b| names.binary_search_by(|x| x.as_str().cmp(b)).unwrap_or(0) as u32)
        .collect();
    (names, per_doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_are_split_from_the_body_outside_code() {
        let (h, b) = split_body("# Title\ntext\n```\n# not a heading\n```\n## Steps ##\n#nope");
        assert_eq!(h, ["Title", "Steps"]);
        assert_eq!(b, ["text\n```\n# not a heading\n```\n#nope"]);
    }

    #[test]
    fn schema_texts_walk_properties() {
        let t = schema_texts(
            br#"{"type":"object","description":"Send mail","properties":{"to":{"type":"string","description":"Recipient"},"mode":{"enum":["fast","slow"]}}}"#,
        );
        assert_eq!(t, ["Send mail", "to", "Recipient", "mode", "fast", "slow"]);
    }
}
