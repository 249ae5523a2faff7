//! Where the frontmatter's plain scalars, quoted scalars, block scalars and comments lie: a light
//! YAML scanner for the rules about text that loaders read other than it looks (`yaml-tab`,
//! `yaml-inline-comment`).
//!
//! It runs on frontmatter the YAML library has already accepted, so it follows YAML's block and
//! flow structure only as far as those rules need: a plain scalar ends at `: `, at a `#` after
//! whitespace, at the end of its line (and goes on over the following lines indented more than
//! the key or `-` it belongs to), and inside a flow collection at `,`, `[`, `]`, `{` and `}`;
//! quoted scalars (escapes and `''` included) and block scalars (`|`, `>`: the lines indented
//! more than their key) may span lines. Nothing here decides what is acceptable.

use super::lines::lines;
use std::ops::Range;

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// One line's part of a plain (unquoted) scalar: from its first to its last character that
    /// is not whitespace.
    Plain {
        /// The index (in the token list) of the scalar's first part; its own index when it
        /// starts the scalar.
        first: usize,
    },
    /// A single- or double-quoted scalar, quotes included, over as many lines as it spans.
    Quoted,
    /// One line of a block scalar's content (the `|` or `>` header is an [`Kind::Indicator`]).
    Block,
    /// A comment, `#` to the end of its line.
    Comment,
    /// Anything else: `-`, `?`, `:`, `,`, brackets, block scalar headers, anchors, aliases, tags.
    Indicator,
}

/// One token: its kind and byte range in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token {
    /// What it is.
    pub kind: Kind,
    /// Byte range in the file.
    pub span: Range<usize>,
}

/// The tokens of the frontmatter at `range` of `text`, in order.
pub(crate) fn tokens(text: &str, range: Range<usize>) -> Vec<Token> {
    let mut s = Scanner {
        text,
        tokens: Vec::new(),
        flow: 0,
        block: None,
        quote: None,
        plain: None,
    };
    let end = range.end.min(text.len());
    if let Some(head) = text.get(..end) {
        for l in lines(head, range.start) {
            s.line(l.start, l.end);
        }
    }
    s.tokens
}

/// A scanner's state between lines.
struct Scanner<'a> {
    text: &'a str,
    tokens: Vec<Token>,
    /// Depth of flow collections (`[`, `{`) open.
    flow: usize,
    /// Inside a block scalar: its lines are those indented more than this column.
    block: Option<usize>,
    /// Inside a quoted scalar that goes on over the next line: its quote and token.
    quote: Option<(u8, usize)>,
    /// A plain scalar that may go on over the next line: its first token, and the column its
    /// continuation lines must be indented past (in block context).
    plain: Option<(usize, usize)>,
}

/// Whether the byte at `i` of `text` is a space or tab, or `i` is the end of the line `end`.
fn blank_at(text: &str, i: usize, end: usize) -> bool {
    i >= end || matches!(text.as_bytes().get(i), Some(b' ' | b'\t'))
}

impl Scanner<'_> {
    fn push(&mut self, kind: Kind, span: Range<usize>) {
        self.tokens.push(Token { kind, span });
    }

    /// The column (in characters) of byte `at` on the line starting at `start`.
    fn column(&self, start: usize, at: usize) -> usize {
        self.text.get(start..at).map_or(0, |s| s.chars().count())
    }

    /// Scans the line `start..end` (without its terminator).
    fn line(&mut self, start: usize, end: usize) {
        let bytes = self.text.as_bytes();
        let content = self.text.get(start..end).unwrap_or("");
        let indent = content.len() - content.trim_start_matches(' ').len();
        if let Some(n) = self.block {
            if content.bytes().all(|b| b == b' ') || indent > n {
                self.push(Kind::Block, start..end);
                return;
            }
            self.block = None;
        }
        let mut i = start;
        if let Some((q, at)) = self.quote {
            let close = close_quote(bytes, start, end, q);
            if let Some(t) = self.tokens.get_mut(at) {
                t.span.end = close.unwrap_or(end);
            }
            match close {
                Some(c) => {
                    self.quote = None;
                    i = c;
                }
                None => return,
            }
        }
        if let Some((first, parent)) = self.plain.take() {
            let body = content.trim_start_matches([' ', '\t']);
            if body.is_empty() {
                self.plain = Some((first, parent));
                return;
            }
            let at = end - body.len();
            if !body.starts_with('#') && (self.flow > 0 || indent > parent) {
                i = self.plain_scalar(at, end, Some(first), parent);
            }
        }
        self.rest(start, i, end, indent);
    }

    /// Scans the tokens of the line `line_start..end` from `i`; `indent` is the line's.
    fn rest(&mut self, line_start: usize, mut i: usize, end: usize, indent: usize) {
        let bytes = self.text.as_bytes();
        // The column of the innermost `-` or key on the line: what a block scalar's lines, or
        // a plain scalar's continuation lines, are indented past.
        let mut parent = indent;
        let mut last_start = i;
        let mut after_quote = false;
        while i < end {
            let b = bytes.get(i).copied().unwrap_or(b' ');
            let ws_before = i == line_start || matches!(bytes.get(i - 1), Some(b' ' | b'\t'));
            match b {
                b' ' | b'\t' => {
                    i += 1;
                    continue;
                }
                b'#' if ws_before => {
                    self.push(Kind::Comment, i..end);
                    return;
                }
                b'"' | b'\'' => {
                    let at = self.tokens.len();
                    self.push(Kind::Quoted, i..end);
                    last_start = i;
                    match close_quote(bytes, i + 1, end, b) {
                        Some(c) => {
                            if let Some(t) = self.tokens.get_mut(at) {
                                t.span.end = c;
                            }
                            i = c;
                            after_quote = true;
                            continue;
                        }
                        None => {
                            self.quote = Some((b, at));
                            return;
                        }
                    }
                }
                b'|' | b'>' if self.flow == 0 => {
                    let mut j = i + 1;
                    while j < end && matches!(bytes.get(j), Some(b'-' | b'+' | b'0'..=b'9')) {
                        j += 1;
                    }
                    self.push(Kind::Indicator, i..j);
                    self.block = Some(parent);
                    i = j;
                }
                b'[' | b'{' => {
                    self.flow += 1;
                    self.push(Kind::Indicator, i..i + 1);
                    i += 1;
                }
                b']' | b'}' => {
                    self.flow = self.flow.saturating_sub(1);
                    self.push(Kind::Indicator, i..i + 1);
                    i += 1;
                }
                b',' if self.flow > 0 => {
                    self.push(Kind::Indicator, i..i + 1);
                    i += 1;
                }
                b':' if blank_at(self.text, i + 1, end)
                    || (self.flow > 0
                        && (after_quote
                            || matches!(
                                bytes.get(i + 1),
                                Some(b',' | b'[' | b']' | b'{' | b'}')
                            ))) =>
                {
                    parent = self.column(line_start, last_start);
                    self.push(Kind::Indicator, i..i + 1);
                    i += 1;
                }
                b'-' | b'?' if blank_at(self.text, i + 1, end) => {
                    parent = self.column(line_start, i);
                    self.push(Kind::Indicator, i..i + 1);
                    i += 1;
                }
                b'&' | b'*' | b'!' => {
                    let mut j = i + 1;
                    while j < end
                        && !blank_at(self.text, j, end)
                        && !(self.flow > 0 && matches!(bytes.get(j), Some(b',' | b']' | b'}')))
                    {
                        j += 1;
                    }
                    self.push(Kind::Indicator, i..j);
                    i = j;
                }
                _ => {
                    last_start = i;
                    let next = self.plain_scalar(i, end, None, parent);
                    // Always step forward, whatever the text.
                    i = next.max(i + 1);
                }
            }
            after_quote = false;
        }
    }

    /// Scans one line's part of a plain scalar starting at `i` (a continuation of the scalar
    /// whose first token is `first`, or a new one); returns where it stops.
    fn plain_scalar(&mut self, i: usize, end: usize, first: Option<usize>, parent: usize) -> usize {
        let bytes = self.text.as_bytes();
        let mut j = i;
        let mut last = i;
        let stop = loop {
            let Some(&b) = bytes.get(j).filter(|_| j < end) else {
                break None;
            };
            match b {
                b' ' | b'\t' => {
                    let mut k = j;
                    while k < end && matches!(bytes.get(k), Some(b' ' | b'\t')) {
                        k += 1;
                    }
                    if bytes.get(k) == Some(&b'#') && k < end {
                        break Some(j);
                    }
                    j = k;
                    continue;
                }
                b':' if blank_at(self.text, j + 1, end)
                    || (self.flow > 0
                        && matches!(bytes.get(j + 1), Some(b',' | b'[' | b']' | b'{' | b'}'))) =>
                {
                    break Some(j)
                }
                b',' | b'[' | b']' | b'{' | b'}' if self.flow > 0 => break Some(j),
                _ => {}
            }
            // Step over one character.
            j += self
                .text
                .get(j..)
                .and_then(|s| s.chars().next())
                .map_or(1, char::len_utf8);
            last = j;
        };
        let own = self.tokens.len();
        let first = first.unwrap_or(own);
        self.push(Kind::Plain { first }, i..last);
        match stop {
            Some(at) => at,
            None => {
                self.plain = Some((first, parent));
                end
            }
        }
    }
}

/// The offset just past the quote `q` that closes a quoted scalar, searching `from..end`
/// (`\` escapes in double quotes, `''` in single quotes).
fn close_quote(bytes: &[u8], from: usize, end: usize, q: u8) -> Option<usize> {
    let mut i = from;
    while i < end {
        match bytes.get(i)? {
            b'\\' if q == b'"' => i += 2,
            &c if c == q => {
                if q == b'\'' && bytes.get(i + 1) == Some(&b'\'') && i + 1 < end {
                    i += 2;
                } else {
                    return Some(i + 1);
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// The tabs of `text` at `range` that YAML reads outside any scalar's text or inside a plain
/// scalar (where PyYAML refuses them): not in a quoted scalar, a block scalar's lines or a
/// comment. With each, whether it lies inside a plain scalar (the index of that token).
pub(crate) fn loose_tabs(
    text: &str,
    range: Range<usize>,
    tokens: &[Token],
) -> Vec<(usize, Option<usize>)> {
    let mut out = Vec::new();
    let Some(region) = text.get(range.clone()) else {
        return out;
    };
    let mut t = 0;
    for (rel, _) in region.match_indices('\t') {
        let at = range.start + rel;
        while tokens.get(t).is_some_and(|tok| tok.span.end <= at) {
            t += 1;
        }
        match tokens.get(t) {
            Some(tok) if tok.span.start <= at => match tok.kind {
                Kind::Plain { .. } => out.push((at, Some(t))),
                Kind::Indicator => out.push((at, None)),
                Kind::Quoted | Kind::Block | Kind::Comment => {}
            },
            _ => out.push((at, None)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(char, &str)> {
        tokens(src, 0..src.len())
            .into_iter()
            .map(|t| {
                let k = match t.kind {
                    Kind::Plain { .. } => 'p',
                    Kind::Quoted => 'q',
                    Kind::Block => 'b',
                    Kind::Comment => 'c',
                    Kind::Indicator => 'i',
                };
                (k, &src[t.span])
            })
            .collect()
    }

    #[test]
    fn plain_scalars_stop_at_comments_and_keys() {
        assert_eq!(
            kinds("description: Use for C# and F# #dotnet\n"),
            [
                ('p', "description"),
                ('i', ":"),
                ('p', "Use for C# and F#"),
                ('c', "#dotnet")
            ]
        );
        assert_eq!(
            kinds("a: x\ty \t\n"),
            [('p', "a"), ('i', ":"), ('p', "x\ty")]
        );
        assert_eq!(
            kinds("url: http://x/#y\n"),
            [('p', "url"), ('i', ":"), ('p', "http://x/#y")]
        );
    }

    #[test]
    fn quoted_block_and_flow_text_is_not_plain() {
        assert_eq!(
            kinds("a: \"x # y\" # c\n"),
            [('p', "a"), ('i', ":"), ('q', "\"x # y\""), ('c', "# c")]
        );
        assert_eq!(
            kinds("a: 'it''s\n  two' # c\n"),
            [
                ('p', "a"),
                ('i', ":"),
                ('q', "'it''s\n  two'"),
                ('c', "# c")
            ]
        );
        assert_eq!(
            kinds("a: |\n  x # y\n\n  z\nb: c\n"),
            [
                ('p', "a"),
                ('i', ":"),
                ('i', "|"),
                ('b', "  x # y"),
                ('b', ""),
                ('b', "  z"),
                ('p', "b"),
                ('i', ":"),
                ('p', "c")
            ]
        );
        assert_eq!(
            kinds("a: [x y, {k: v}] # c\n"),
            [
                ('p', "a"),
                ('i', ":"),
                ('i', "["),
                ('p', "x y"),
                ('i', ","),
                ('i', "{"),
                ('p', "k"),
                ('i', ":"),
                ('p', "v"),
                ('i', "}"),
                ('i', "]"),
                ('c', "# c")
            ]
        );
    }

    #[test]
    fn block_scalars_end_at_their_keys_indentation() {
        let src = "items:\n  - text: |\n      x\n    other: y #z\n";
        let k = kinds(src);
        assert!(k.contains(&('b', "      x")), "{k:?}");
        assert!(k.contains(&('p', "other")), "{k:?}");
        assert!(k.contains(&('c', "#z")), "{k:?}");
    }

    #[test]
    fn plain_scalars_go_on_over_more_indented_lines() {
        let src = "a: one\n  two #x\nb: c\n";
        let t = tokens(src, 0..src.len());
        let parts: Vec<_> = t
            .iter()
            .filter(|t| matches!(t.kind, Kind::Plain { first } if first == 2))
            .map(|t| &src[t.span.clone()])
            .collect();
        assert_eq!(parts, ["one", "two"]);
        assert_eq!(kinds("a: one\n# c\n  b\n").last(), Some(&('p', "b")));
    }

    #[test]
    fn loose_tabs_are_those_outside_quotes_blocks_and_comments() {
        let src = "a:\tx\ty\t# c\td\nb: \"\t\"\nc: |\n  \tz\n";
        let t = tokens(src, 0..src.len());
        let tabs: Vec<_> = loose_tabs(src, 0..src.len(), &t)
            .into_iter()
            .map(|(at, inside)| (at, inside.is_some()))
            .collect();
        assert_eq!(tabs, [(2, false), (4, true), (6, false)]);
    }
}
