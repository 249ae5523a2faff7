//! A small Rust lexer for the tidy checks: identifiers, punctuation and braces with their line
//! numbers, comments, strings and character literals skipped (so braces and paths inside them do
//! not count). Enough to find module declarations, paths and function bodies; not a parser.

/// One token: an identifier or keyword, `::`, or one punctuation character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    /// An identifier, keyword or number.
    Ident(String),
    /// `::`.
    PathSep,
    /// Any other character outside comments and literals (`{`, `}`, `;`, `#`, `[`, …).
    Punct(char),
    /// A string, character or byte literal: the text between the quotes of a plain string
    /// (escapes not undone), empty for the others.
    Literal(String),
}

/// A token and the 1-based line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub line: usize,
}

impl Token {
    /// Whether this is the identifier `s`.
    pub fn is(&self, s: &str) -> bool {
        matches!(&self.tok, Tok::Ident(i) if i == s)
    }

    /// Whether this is the punctuation `c`.
    pub fn is_punct(&self, c: char) -> bool {
        self.tok == Tok::Punct(c)
    }

    /// The identifier, if this is one.
    pub fn ident(&self) -> Option<&str> {
        match &self.tok {
            Tok::Ident(i) => Some(i),
            _ => None,
        }
    }
}

/// The tokens of `src`.
pub fn lex(src: &str) -> Vec<Token> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(c[i] == '\n');
                    i += 1;
                }
            }
        } else if let Some(end) = raw_string_end(&c, i) {
            line += c[i..end].iter().filter(|&&x| x == '\n').count();
            out.push(Token {
                tok: Tok::Literal(String::new()),
                line,
            });
            i = end;
        } else if ch == '"' || (ch == 'b' && at(i + 1) == '"') {
            let start_line = line;
            i += if ch == 'b' { 2 } else { 1 };
            let start = i;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    i += 1;
                }
                line += usize::from(at(i) == '\n');
                i += 1;
            }
            let text: String = c[start..i.min(c.len())].iter().collect();
            i += 1;
            out.push(Token {
                tok: Tok::Literal(text),
                line: start_line,
            });
        } else if ch == '\'' || (ch == 'b' && at(i + 1) == '\'') {
            // A character literal (`'a'`, `'\n'`, `'\u{1F600}'`, `b'x'`) or a lifetime (`'a`).
            let q = if ch == 'b' { i + 1 } else { i };
            let close = if at(q + 1) == '\\' {
                (q + 2..c.len().min(q + 12)).find(|&j| c[j] == '\'')
            } else if at(q + 2) == '\'' {
                Some(q + 2)
            } else {
                None
            };
            match close {
                Some(end) => {
                    out.push(Token {
                        tok: Tok::Literal(String::new()),
                        line,
                    });
                    i = end + 1;
                }
                None => i = q + 1, // a lifetime: its name is lexed next, as an identifier
            }
        } else if ch.is_alphanumeric() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Ident(c[start..i].iter().collect()),
                line,
            });
        } else if ch == ':' && at(i + 1) == ':' {
            out.push(Token {
                tok: Tok::PathSep,
                line,
            });
            i += 2;
        } else {
            out.push(Token {
                tok: Tok::Punct(ch),
                line,
            });
            i += 1;
        }
    }
    out
}

/// The end of a raw string literal (`r"…"`, `r#"…"#`, `br##"…"##`) starting at `i`.
fn raw_string_end(c: &[char], i: usize) -> Option<usize> {
    let mut j = i;
    if c.get(j) == Some(&'b') {
        j += 1;
    }
    if c.get(j) != Some(&'r') {
        return None;
    }
    // `r` must start a token: not the end of an identifier such as `for`.
    if i > 0
        && c.get(i - 1)
            .is_some_and(|p| p.is_alphanumeric() || *p == '_')
    {
        return None;
    }
    j += 1;
    let hashes = c[j..].iter().take_while(|&&x| x == '#').count();
    j += hashes;
    if c.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < c.len() {
        if c[j] == '"'
            && c[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&x| x == '#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(c.len())
}

/// The index of the `}` that closes the `{` at `open`, or the last token.
pub fn matching_brace(toks: &[Token], open: usize) -> usize {
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().skip(open) {
        if t.is_punct('{') {
            depth += 1;
        } else if t.is_punct('}') {
            depth -= 1;
            if depth == 0 {
                return k;
            }
        }
    }
    toks.len().saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idents(src: &str) -> Vec<String> {
        lex(src)
            .into_iter()
            .filter_map(|t| t.ident().map(str::to_string))
            .collect()
    }

    #[test]
    fn literals_and_comments_hide_their_contents() {
        let src = "a // crate::x\n/* { /* nested */ } */ \"crate::y {\" r#\"super::z\"# '{' b'}' 'a: loop {} c";
        assert_eq!(idents(src), ["a", "a", "loop", "c"]);
        let braces = lex(src).iter().filter(|t| t.is_punct('{')).count();
        assert_eq!(braces, 1);
    }

    #[test]
    fn lines_are_counted_through_literals_and_comments() {
        let toks = lex("a\n\"x\ny\"\n/*\n*/ b");
        assert_eq!(toks.last().map(|t| t.line), Some(5));
    }
}
