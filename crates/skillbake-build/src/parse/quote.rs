//! Quoting a frontmatter value: the one fix of the rules about plain YAML values that read other
//! than written (`yaml-syntax` for a `: ` inside one, `yaml-tab`, `yaml-inline-comment`).

/// `value` as a YAML double-quoted scalar that reads back as exactly `value`: JSON's string
/// escapes are a subset of YAML's.
pub(crate) fn double_quoted(value: &str) -> Option<String> {
    serde_json::to_string(value).ok()
}

/// The fix of a `key: value` line (or `- key: value`) whose plain value YAML reads other than
/// written (`: ` inside it, a first character such as `@`, a ` #` that starts a comment): the
/// value, as written to the end of the line, in double quotes; `at` is any offset on the line,
/// `fm_end` where the frontmatter ends. `None` when the line is not one such pair, the value is not plain, or it goes on
/// over the next lines (quoting one line would change what the others mean).
pub(crate) fn quote_value(text: &str, at: usize, fm_end: usize) -> Option<crate::diagnostic::Fix> {
    let at = crate::source::floor_char_boundary(text, at.min(text.len()));
    let start = text.get(..at)?.rfind(['\n', '\r']).map_or(0, |i| i + 1);
    let end = text
        .get(at..)?
        .find(['\n', '\r'])
        .map_or(text.len(), |i| at + i);
    let line = text.get(start..end)?;
    let indent = line.len() - line.trim_start_matches(' ').len();
    let pair = line.get(indent..)?;
    let pair = pair.strip_prefix("- ").unwrap_or(pair);
    let colon = pair.find(": ")?;
    let key = pair.get(..colon)?;
    let key_ok = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '_' || c == '.');
    let after = pair.get(colon + 1..)?;
    let value = after.trim();
    let value_start = end - after.len() + (after.len() - after.trim_start().len());
    let plain = !value.is_empty()
        && !value.starts_with(['"', '\'', '|', '>', '[', '{', '&', '*', '!', '#']);
    if !key_ok || !plain {
        return None;
    }
    // A plain value may go on over more indented lines; then it is not this line's to quote.
    let next = text
        .get(end..fm_end)?
        .lines()
        .map(str::trim_end)
        .find(|l| !l.trim().is_empty());
    if let Some(next) = next {
        let next_indent = next.len() - next.trim_start_matches([' ', '\t']).len();
        if next_indent > indent && !next.trim_start().starts_with('#') {
            return None;
        }
    }
    let quoted = double_quoted(value)?;
    Some(crate::diagnostic::Fix::replace(
        format!("quote the value of `{key}`"),
        value_start,
        value_start + value.len(),
        quoted,
    ))
}
