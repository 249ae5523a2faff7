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

/// What the tokenizer reads a text as: its characters, or, for ASCII text, its bytes (each
/// answering every question as its character does).
trait Unit: Copy {
    fn char(self) -> char;
    fn is_cjk(self) -> bool;
    fn is_word_char(self) -> bool;
    fn is_joiner(self) -> bool;
    fn is_numeric(self) -> bool;
    fn is_lowercase(self) -> bool;
    fn is_uppercase(self) -> bool;
    /// Appends its lower case to `out`.
    fn push_lower(self, out: &mut String);
}

impl Unit for char {
    fn char(self) -> char {
        self
    }
    fn is_cjk(self) -> bool {
        is_cjk(self)
    }
    fn is_word_char(self) -> bool {
        is_word_char(self)
    }
    fn is_joiner(self) -> bool {
        is_joiner(self)
    }
    fn is_numeric(self) -> bool {
        char::is_numeric(self)
    }
    fn is_lowercase(self) -> bool {
        char::is_lowercase(self)
    }
    fn is_uppercase(self) -> bool {
        char::is_uppercase(self)
    }
    fn push_lower(self, out: &mut String) {
        if self.is_ascii() {
            out.push(self.to_ascii_lowercase());
        } else {
            out.extend(self.to_lowercase());
        }
    }
}

/// A byte of ASCII text.
impl Unit for u8 {
    fn char(self) -> char {
        char::from(self)
    }
    fn is_cjk(self) -> bool {
        false
    }
    fn is_word_char(self) -> bool {
        self.is_ascii_alphanumeric()
    }
    fn is_joiner(self) -> bool {
        is_joiner(char::from(self))
    }
    fn is_numeric(self) -> bool {
        self.is_ascii_digit()
    }
    fn is_lowercase(self) -> bool {
        self.is_ascii_lowercase()
    }
    fn is_uppercase(self) -> bool {
        self.is_ascii_uppercase()
    }
    fn push_lower(self, out: &mut String) {
        out.push(char::from(self.to_ascii_lowercase()));
    }
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
    ///
    /// No term spans a line break (it is neither a letter, a digit nor a joiner), so the text
    /// is taken a line at a time: a line of ASCII (most of a pack's body) is read as its bytes,
    /// any other line as its characters, with the same rules.
    pub fn tokens(&mut self, text: &str, mut emit: impl FnMut(&str, Kind)) {
        if text.is_ascii() {
            return self.units(text.as_bytes(), &mut emit);
        }
        let mut chars = std::mem::take(&mut self.chars);
        for line in text.split_inclusive('\n') {
            if line.is_ascii() {
                self.units(line.as_bytes(), &mut emit);
            } else {
                chars.clear();
                chars.extend(line.chars().map(narrow));
                self.units(&chars, &mut emit);
            }
        }
        self.chars = chars;
    }

    /// [`Self::tokens`] over one text's units: its bytes when it is ASCII, else its characters
    /// (full-width forms made ASCII).
    fn units<U: Unit>(&mut self, chars: &[U], emit: &mut impl FnMut(&str, Kind)) {
        let mut group = std::mem::take(&mut self.group);
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c.is_cjk() {
                let start = i;
                while i < chars.len() && chars[i].is_cjk() {
                    i += 1;
                }
                self.cjk(&chars[start..i], emit);
            } else if c.is_word_char() {
                // A group: alphanumeric segments separated by single joiners.
                group.clear();
                loop {
                    let start = i;
                    while i < chars.len() && chars[i].is_word_char() {
                        i += 1;
                    }
                    group.push((start, i));
                    let joined =
                        i + 1 < chars.len() && chars[i].is_joiner() && chars[i + 1].is_word_char();
                    if !joined {
                        break;
                    }
                    i += 1;
                }
                self.group(chars, &group, emit);
            } else {
                i += 1;
            }
        }
        self.group = group;
    }

    /// Every term of `text` as owned strings (for tests and tools; the index uses [`Self::tokens`]).
    pub fn collect(&mut self, text: &str) -> Vec<(String, Kind)> {
        let mut out = Vec::new();
        self.tokens(text, |t, k| out.push((t.to_string(), k)));
        out
    }

    fn cjk<U: Unit>(&mut self, run: &[U], emit: &mut impl FnMut(&str, Kind)) {
        let mut buf = [0u8; 8];
        for (j, c) in run.iter().map(|u| u.char()).enumerate() {
            if !CJK_STOP_CHARS.contains(&c) {
                emit(c.encode_utf8(&mut buf), Kind::Unigram);
            }
            if let Some(d) = run.get(j + 1) {
                self.part.clear();
                self.part.push(c);
                self.part.push(d.char());
                emit(&self.part, Kind::Bigram);
            }
        }
    }

    fn group<U: Unit>(
        &mut self,
        chars: &[U],
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

    fn compound<U: Unit>(
        &mut self,
        chars: impl Iterator<Item = U>,
        emit: &mut impl FnMut(&str, Kind),
    ) {
        self.part.clear();
        for c in chars {
            c.push_lower(&mut self.part);
        }
        if self.part.len() <= MAX_TERM_BYTES {
            emit(&self.part, Kind::Compound);
        }
    }

    fn word<U: Unit>(&mut self, run: &[U], emit: &mut impl FnMut(&str, Kind)) {
        self.lower.clear();
        for &c in run {
            c.push_lower(&mut self.lower);
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
fn camel_parts<U: Unit>(run: &[U], out: &mut Vec<(usize, usize)>) {
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

    /// What [`Tokenizer::tokens`] gave before it read ASCII lines as bytes: the whole text
    /// as characters.
    fn by_chars(tok: &mut Tokenizer, text: &str) -> Vec<(String, Kind)> {
        let chars: Vec<char> = text.chars().map(narrow).collect();
        let mut out = Vec::new();
        tok.units(&chars, &mut |t: &str, k| out.push((t.to_string(), k)));
        out
    }

    proptest::proptest! {
        /// Lines of ASCII read as bytes give the terms their characters give, in mixed text
        /// (accents, special cases of lower-casing, Roman numerals, CJK, full-width forms,
        /// joiners at line ends) and in ASCII alone, with and without the word cache.
        #[test]
        fn ascii_lines_as_bytes_give_the_terms_of_their_characters(
            mixed in "[a-zA-Z09 \\-_./:,\n\réİßⅫ½分析的ＣＳ１\u{3000}😀]{0,60}",
            ascii in "[a-zA-Z09 \\-_./:,\n]{0,60}",
        ) {
            for text in [&mixed, &ascii] {
                let want = by_chars(&mut Tokenizer::new(), text);
                proptest::prop_assert_eq!(&Tokenizer::new().collect(text), &want);
                let mut cached = Tokenizer::new().with_word_cache();
                proptest::prop_assert_eq!(&cached.collect(text), &want);
                proptest::prop_assert_eq!(&cached.collect(text), &want);
            }
        }
    }

    /// Identifiers, camel case and compounds read the same from bytes as from characters, on
    /// lines long enough to hold many groups.
    #[test]
    fn identifiers_read_as_bytes_as_they_read_as_characters() {
        let text = "csv-data-analysis getUserById ResNet50 HTTPServer read_file. a/b:c x_1.y2 \
                    ABCdef-ghi_JKL 12ab34 --a-- a--b _x_ TheQuickBrownFOX2000Jumps\n\
                    line two: MixedCase_snake-kebab.dot/slash:colon end.";
        assert!(text.is_ascii());
        let want = by_chars(&mut Tokenizer::new(), text);
        assert!(want.len() > 40, "{}", want.len());
        assert_eq!(Tokenizer::new().collect(text), want);
    }

    #[test]
    fn drops_long_terms_and_single_letters() {
        let long = "x".repeat(60);
        assert!(terms(&long).is_empty());
        assert_eq!(terms("a b c 7"), ["7"]);
    }
}
