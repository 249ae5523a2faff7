//! The key scanner: where each top-level key of the frontmatter and its value sit in `SKILL.md`.
//!
//! The YAML library gives values, not positions of keys; diagnostics about a field point at the
//! field, so the frontmatter's lines are scanned for `key:` at the start of a line.

use super::lines::lines;

/// The location of one top-level key of the frontmatter in `SKILL.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyLoc {
    /// The key as written (quotes removed).
    pub key: String,
    /// Byte offset of the key in the file.
    pub offset: usize,
    /// Byte offset of the first character of the value on the key's line (or of the line end).
    pub value_offset: usize,
    /// Byte offset where this key's lines end (the next top-level key or the closing `---`).
    pub end: usize,
}

/// Byte offset of the second line in `from..end` whose content starts with `key:` at the
/// indentation of the first such line.
pub(super) fn second_key_occurrence(
    text: &str,
    from: usize,
    end: usize,
    key: &str,
) -> Option<usize> {
    let line_start = text[..from].rfind(['\n', '\r']).map_or(0, |i| i + 1);
    let mut seen: Option<usize> = None;
    for l in lines(&text[..end], line_start) {
        let content = &text[l.start..l.end];
        let indent = content.len() - content.trim_start_matches([' ', '-']).len();
        let rest = &content[indent..];
        if key_of_line(rest).is_some_and(|(k, _)| k == key) {
            match seen {
                None => seen = Some(indent),
                Some(i) if i == indent => return Some(l.start + indent),
                Some(_) => {}
            }
        }
    }
    None
}

/// Parses `key: value` at the start of `line`: the key (unquoted) and the byte offset of the value.
fn key_of_line(line: &str) -> Option<(String, usize)> {
    let first = line.chars().next()?;
    if first == '"' || first == '\'' {
        let close = line[1..].find(first)? + 1;
        let after = &line[close + 1..];
        let colon = after.find(':')?;
        if !after[..colon].trim().is_empty() {
            return None;
        }
        let v = close + 1 + colon + 1;
        if !line[v..].is_empty() && !line[v..].starts_with([' ', '\t']) {
            return None;
        }
        return Some((line[1..close].to_string(), v));
    }
    let mut search = 0;
    while let Some(rel) = line[search..].find(':') {
        let colon = search + rel;
        let after = &line[colon + 1..];
        if after.is_empty() || after.starts_with([' ', '\t']) {
            let key = line[..colon].trim_end();
            if key.is_empty() || key.contains(" #") {
                return None;
            }
            return Some((key.to_string(), colon + 1));
        }
        search = colon + 1;
    }
    None
}

/// Finds every top-level `key:` line of the frontmatter (`start..end` of `text`).
pub(super) fn scan_keys(text: &str, start: usize, end: usize) -> Vec<KeyLoc> {
    let mut keys: Vec<KeyLoc> = Vec::new();
    for l in lines(&text[..end], start) {
        let content = &text[l.start..l.end];
        let Some(first) = content.chars().next() else {
            continue;
        };
        if matches!(first, ' ' | '\t' | '#' | '-' | '{' | '[' | '?' | ':' | '%') {
            continue;
        }
        if let Some((key, v)) = key_of_line(content) {
            if let Some(prev) = keys.last_mut() {
                prev.end = l.start;
            }
            let skip = content[v..].len() - content[v..].trim_start_matches([' ', '\t']).len();
            keys.push(KeyLoc {
                key,
                offset: l.start,
                value_offset: l.start + v + skip,
                end,
            });
        }
    }
    keys
}

/// Finds `needle` in `hay` as a whole token (not inside a longer word).
pub(super) fn find_token(hay: &str, needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    let mut from = 0;
    while let Some(rel) = hay[from..].find(needle) {
        let start = from + rel;
        let end = start + needle.len();
        let before_ok = hay[..start].chars().next_back().is_none_or(|c| !is_word(c));
        let after_ok = hay[end..].chars().next().is_none_or(|c| !is_word(c));
        if before_ok && after_ok {
            return Some(start);
        }
        from = start + needle.len().max(1);
        while !hay.is_char_boundary(from) {
            from += 1;
        }
    }
    None
}

/// Strips a YAML comment (` #...`) from a line, ignoring `#` inside quotes.
pub(crate) fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' && (prev == ' ' || prev == '\t' || i == 0) => return &line[..i],
            None => {}
        }
        prev = c;
    }
    line
}
