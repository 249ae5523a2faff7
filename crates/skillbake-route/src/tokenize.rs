//! The tokenizer: one function that turns text into index terms, used on pack fields at build
//! time and on the request at run time, so both sides agree on every term.
//!
//! * **Latin text** (any alphabetic script but CJK) is lower-cased and split at whitespace and
//!   punctuation. Common English function words are dropped, then words are stemmed with the
//!   Snowball English (Porter2) stemmer: `reports`, `reporting` → `report`.
//! * **Identifiers** are split at `-`, `_`, `.`, `/`, `:`, case changes and letter/digit
//!   boundaries: `csv-data-analysis` → `csv`, `data`, `analysis`; `getUserById` → `get`,
//!   `user`, `id`; `ResNet50` → `resnet`, `res`, `net`, `50`. The joined forms are kept as
//!   [`Kind::Compound`] terms (`csvdataanalysis`, `resnet50`, `resnet`), so a request that names
//!   a skill or an API exactly matches it strongly.
//! * **CJK text** (Han, Kana, Hangul) needs no dictionary: every pair of adjacent characters is a
//!   [`Kind::Bigram`] and every character a [`Kind::Unigram`] (very common characters such as
//!   `的` and `了` are skipped as unigrams). Full-width ASCII (`ＡＢＣ１２３`) is read as ASCII.
//!
//! Terms longer than [`MAX_TERM_BYTES`] (hashes, base64, minified code) are dropped. The output
//! depends only on the input text: no locale, no global state.

use rust_stemmers::{Algorithm, Stemmer};
use std::collections::HashMap;

/// Longest term kept, in bytes.
pub const MAX_TERM_BYTES: usize = 48;

/// What a term is; the index builder weights them differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// A stemmed word, or a part of an identifier.
    Word,
    /// The joined form of an identifier (`csvdataanalysis`, `resnet50`).
    Compound,
    /// One CJK character.
    Unigram,
    /// Two adjacent CJK characters.
    Bigram,
}

/// Common English words that carry no routing signal (checked before stemming).
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at",
    "be", "been", "before", "being", "both", "but", "by", "can", "could", "did", "do", "does",
    "doing", "during", "each", "either", "etc", "for", "from", "further", "had", "has", "have",
    "having", "he", "her", "here", "hers", "him", "his", "how", "i", "if", "in", "into", "is",
    "it", "its", "itself", "just", "let", "may", "me", "might", "mine", "more", "most", "must",
    "my", "myself", "need", "needs", "no", "nor", "not", "now", "of", "off", "on", "once", "one",
    "only", "or", "other", "our", "ours", "out", "own", "please", "shall", "she", "should", "so",
    "some", "such", "than", "that", "the", "their", "theirs", "them", "then", "there", "these",
    "they", "this", "those", "through", "to", "too", "under", "until", "up", "us", "very", "via",
    "want", "wants", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom",
    "why", "will", "with", "would", "you", "your", "yours",
];

/// CJK characters too common to mean anything alone (still part of bigrams).
const CJK_STOP_CHARS: &[char] = &[
    '的', '了', '是', '我', '你', '他', '她', '它', '们', '在', '和', '有', '个', '这', '那', '把',
    '被', '就', '也', '都', '与', '及', '或', '为', '对', '从', '到', '让', '给', '吗', '呢', '吧',
    '啊', '之', '其', '并', '而', '以', '于', '请', '帮', '想', '要', '能', '可', '一', '些', '该',
    '将', '会', '着', '过', '地', '得', '所', '如', '何', '么', '啥', '哪', '您',
];

fn is_stop_word(w: &str) -> bool {
    STOP_WORDS.binary_search(&w).is_ok()
}

/// True for characters of scripts written without spaces between words.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x31F0..=0x31FF    // Katakana phonetic extensions
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0x1100..=0x11FF    // Hangul jamo
        | 0x3130..=0x318F    // Hangul compatibility jamo
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0x20000..=0x2FA1F) // CJK extensions B–F, compatibility supplement
}

/// Full-width ASCII forms (U+FF01–U+FF5E) as ASCII; other characters unchanged.
fn narrow(c: char) -> char {
    match c as u32 {
        0xFF01..=0xFF5E => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        0x3000 => ' ',
        _ => c,
    }
}

/// Characters that join the parts of one identifier when they stand between two letters or
/// digits (`a-b`, `a_b`, `a.b`, `a/b`, `a:b`).
fn is_joiner(c: char) -> bool {
    matches!(c, '-' | '_' | '.' | '/' | ':')
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() && !is_cjk(c)
}

/// Switches for the evaluation's ablations; the index and the runtime always use
/// [`Options::DEFAULT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Split identifiers at case changes and letter/digit boundaries, and keep joined forms.
    pub identifiers: bool,
    /// Stem Latin words.
    pub stem: bool,
    /// Drop common English words.
    pub stop_words: bool,
}

impl Options {
    /// What skillbake uses.
    pub const DEFAULT: Options = Options {
        identifiers: true,
        stem: true,
        stop_words: true,
    };
}

/// Distinct words a [`Tokenizer::with_word_cache`] remembers (about 4 MiB at most); words seen
/// after it is full are stemmed every time.
pub const WORD_CACHE_ENTRIES: usize = 1 << 16;

/// The tokenizer, holding its stemmer. Cheap to create; reuse one for many texts.
pub struct Tokenizer {
    stemmer: Stemmer,
    options: Options,
    lower: String,
    part: String,
    /// The case changes of the current run (reused: one allocation per tokenizer, not per word).
    camel: Vec<(usize, usize)>,
    /// The characters of the text being tokenized, and the segments of its current group
    /// (reused like `camel`: pack bodies are tokenized a line at a time).
    chars: Vec<char>,
    group: Vec<(usize, usize)>,
    /// Lower-cased word → its term, or `None` for a stop word; only with
    /// [`Tokenizer::with_word_cache`].
    words: Option<HashMap<Box<str>, Option<Box<str>>, foldhash::fast::FixedState>>,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tokenizer")
    }
}

impl Default for Tokenizer {
    fn default() -> Self {
        Self::new()
    }
}

impl Tokenizer {
    /// A tokenizer with the English stemmer.
    pub fn new() -> Self {
        Self::with_options(Options::DEFAULT)
    }

    /// A tokenizer with other [`Options`] (for ablations).
    pub fn with_options(options: Options) -> Self {
        Tokenizer {
            stemmer: Stemmer::create(Algorithm::English),
            options,
            lower: String::new(),
            part: String::new(),
            camel: Vec::new(),
            chars: Vec::new(),
            group: Vec::new(),
            words: None,
        }
    }

    /// Remembers the term of each distinct word (up to [`WORD_CACHE_ENTRIES`]), so that a word
    /// is stemmed once however often it occurs. For tokenizing many or long texts (pack
    /// bodies at build time); a request is too short to repay the cache. The terms are the same
    /// with or without it.
    pub fn with_word_cache(mut self) -> Self {
        self.words = Some(HashMap::default());
        self
    }

    /// Calls `emit(term, kind)` for every term of `text`, in text order.
    pub fn tokens(&mut self, text: &str, mut emit: impl FnMut(&str, Kind)) {
        let mut group = std::mem::take(&mut self.group);
        let mut chars = std::mem::take(&mut self.chars);
        chars.clear();
        chars.extend(text.chars().map(narrow));
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if is_cjk(c) {
                let start = i;
                while i < chars.len() && is_cjk(chars[i]) {
                    i += 1;
                }
                self.cjk(&chars[start..i], &mut emit);
            } else if is_word_char(c) {
                // A group: alphanumeric segments separated by single joiners.
                group.clear();
                loop {
                    let start = i;
                    while i < chars.len() && is_word_char(chars[i]) {
                        i += 1;
                    }
                    group.push((start, i));
                    let joined =
                        i + 1 < chars.len() && is_joiner(chars[i]) && is_word_char(chars[i + 1]);
                    if !joined {
                        break;
                    }
                    i += 1;
                }
                self.group(&chars, &group, &mut emit);
            } else {
                i += 1;
            }
        }
        self.chars = chars;
        self.group = group;
    }

    /// Every term of `text` as owned strings (for tests and tools; the index uses [`Self::tokens`]).
    pub fn collect(&mut self, text: &str) -> Vec<(String, Kind)> {
        let mut out = Vec::new();
        self.tokens(text, |t, k| out.push((t.to_string(), k)));
        out
    }

    fn cjk(&mut self, run: &[char], emit: &mut impl FnMut(&str, Kind)) {
        let mut buf = [0u8; 8];
        for (j, &c) in run.iter().enumerate() {
            if !CJK_STOP_CHARS.contains(&c) {
                emit(c.encode_utf8(&mut buf), Kind::Unigram);
            }
            if let Some(&d) = run.get(j + 1) {
                self.part.clear();
                self.part.push(c);
                self.part.push(d);
                emit(&self.part, Kind::Bigram);
            }
        }
    }

    fn group(
        &mut self,
        chars: &[char],
        group: &[(usize, usize)],
        emit: &mut impl FnMut(&str, Kind),
    ) {
        let mut parts = 0usize;
        for &(s, e) in group {
            let seg = &chars[s..e];
            // Runs of letters and runs of digits.
            let mut runs = 0usize;
            let mut j = 0;
            while j < seg.len() {
                let digit = seg[j].is_numeric();
                let start = j;
                while j < seg.len() && seg[j].is_numeric() == digit {
                    j += 1;
                }
                runs += 1;
                let run = &seg[start..j];
                if !self.options.identifiers {
                    continue;
                }
                self.word(run, emit);
                if !digit {
                    let mut camel = std::mem::take(&mut self.camel);
                    camel_parts(run, &mut camel);
                    if camel.len() > 1 {
                        for &(a, b) in &camel {
                            self.word(&run[a..b], emit);
                        }
                    }
                    self.camel = camel;
                }
            }
            parts += runs;
            if !self.options.identifiers {
                self.word(seg, emit);
                continue;
            }
            if runs > 1 {
                self.compound(seg.iter().copied(), emit);
            }
        }
        if self.options.identifiers && group.len() > 1 && parts > 1 {
            let all = group.iter().flat_map(|&(s, e)| chars[s..e].iter().copied());
            self.compound(all, emit);
        }
    }

    fn compound(&mut self, chars: impl Iterator<Item = char>, emit: &mut impl FnMut(&str, Kind)) {
        self.part.clear();
        for c in chars {
            self.part.extend(c.to_lowercase());
        }
        if self.part.len() <= MAX_TERM_BYTES {
            emit(&self.part, Kind::Compound);
        }
    }

    fn word(&mut self, run: &[char], emit: &mut impl FnMut(&str, Kind)) {
        self.lower.clear();
        for &c in run {
            if c.is_ascii() {
                self.lower.push(c.to_ascii_lowercase());
            } else {
                self.lower.extend(c.to_lowercase());
            }
        }
        let w = self.lower.as_str();
        if w.len() > MAX_TERM_BYTES {
            return;
        }
        // Numbers are kept whole (no stop word is a number).
        if run.iter().all(|c| c.is_numeric()) {
            emit(w, Kind::Word);
            return;
        }
        if run.len() < 2 {
            return;
        }
        if let Some(term) = self.words.as_ref().and_then(|words| words.get(w)) {
            if let Some(term) = term {
                emit(term, Kind::Word);
            }
            return;
        }
        let term: Option<Box<str>> = if self.options.stop_words && is_stop_word(w) {
            None
        } else if self.options.stem {
            Some(self.stemmer.stem(w).into())
        } else {
            Some(w.into())
        };
        if let Some(term) = &term {
            emit(term, Kind::Word);
        }
        if let Some(words) = self.words.as_mut().filter(|m| m.len() < WORD_CACHE_ENTRIES) {
            words.insert(w.into(), term);
        }
    }
}

/// Where a run of letters splits at case changes: `getUserById` → `get|User|By|Id`,
/// `HTTPServer` → `HTTP|Server`. Ranges into `run`, written to `out`.
fn camel_parts(run: &[char], out: &mut Vec<(usize, usize)>) {
    out.clear();
    let mut start = 0;
    for j in 1..run.len() {
        let (p, c) = (run[j - 1], run[j]);
        let next_lower = run.get(j + 1).is_some_and(|n| n.is_lowercase());
        let boundary = (p.is_lowercase() && c.is_uppercase())
            || (p.is_uppercase() && c.is_uppercase() && next_lower);
        if boundary {
            out.push((start, j));
            start = j;
        }
    }
    out.push((start, run.len()));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> Vec<String> {
        Tokenizer::new()
            .collect(text)
            .into_iter()
            .map(|(t, k)| match k {
                Kind::Word => t,
                Kind::Compound => format!("+{t}"),
                Kind::Unigram => format!("1:{t}"),
                Kind::Bigram => format!("2:{t}"),
            })
            .collect()
    }

    #[test]
    fn stop_words_are_sorted() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn stems_and_drops_stop_words() {
        assert_eq!(
            terms("Analysing the quarterly reports"),
            ["analys", "quarter", "report"]
        );
    }

    #[test]
    fn splits_identifiers() {
        assert_eq!(
            terms("csv-data-analysis"),
            ["csv", "data", "analysi", "+csvdataanalysis"]
        );
        assert_eq!(terms("getUserById"), ["getuserbyid", "get", "user", "id"]);
        assert_eq!(
            terms("ResNet50"),
            ["resnet", "res", "net", "50", "+resnet50"]
        );
        assert_eq!(terms("HTTPServer"), ["httpserver", "http", "server"]);
        assert_eq!(terms("read_file."), ["read", "file", "+readfile"]);
    }

    #[test]
    fn cjk_bigrams_and_unigrams() {
        assert_eq!(
            terms("分析财报"),
            ["1:分", "2:分析", "1:析", "2:析财", "1:财", "2:财报", "1:报"]
        );
        assert_eq!(terms("的表"), ["2:的表", "1:表"]);
        assert_eq!(terms("Excel表格"), ["excel", "1:表", "2:表格", "1:格"]);
        assert_eq!(terms("ＣＳＶ"), ["csv"]);
    }

    #[test]
    fn the_word_cache_changes_no_term() {
        let texts = [
            "Analysing the quarterly reports; analysing THE Reports again",
            "csv-data-analysis getUserById ResNet50 HTTPServer read_file. a b c 7 Ⅻ ½",
            "Excel表格 分析财报 ＣＳＶ naïve İstanbul ß STRASSE",
            "reports reporting reported report the the the",
        ];
        let all = [
            Options::DEFAULT,
            Options {
                stem: false,
                ..Options::DEFAULT
            },
            Options {
                stop_words: false,
                ..Options::DEFAULT
            },
            Options {
                identifiers: false,
                ..Options::DEFAULT
            },
        ];
        for options in all {
            let mut plain = Tokenizer::with_options(options);
            let mut cached = Tokenizer::with_options(options).with_word_cache();
            // Twice through, so the second pass reads every word from the cache.
            for text in texts.iter().chain(&texts) {
                assert_eq!(
                    cached.collect(text),
                    plain.collect(text),
                    "{text} {options:?}"
                );
            }
            assert!(cached.words.as_ref().is_some_and(|w| w.len() > 10));
        }
    }

    #[test]
    fn drops_long_terms_and_single_letters() {
        let long = "x".repeat(60);
        assert!(terms(&long).is_empty());
        assert_eq!(terms("a b c 7"), ["7"]);
    }
}
