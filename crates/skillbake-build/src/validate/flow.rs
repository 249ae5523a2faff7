//! `flow-style`: a list or mapping written in YAML's flow style (`[a, b]`, `{k: v}`) anywhere
//! in the frontmatter. YAML allows it and every loader but one reads it; the Agent Skills
//! reference validator parses frontmatter with a strict YAML subset that rejects it
//! ("JSONesque flow mapping"), so the `agentskills` profile reports it as an error and the
//! other profiles allow it.
//!
//! The frontmatter's lines are scanned, outside block scalars (`|`, `>`) and comments, for a
//! value (after `key:` or `- `) that opens with `[` or `{`; quoted values are text.

use super::PackCtx;
use crate::diagnostic::{Code, Diagnostic};

/// Reports every flow-style value of the frontmatter.
pub fn check(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) {
    let Some(fm) = ctx.md.frontmatter.as_ref() else {
        return;
    };
    for loc in &fm.keys {
        let Some(region) = ctx.md.text.get(loc.value_offset..loc.end) else {
            continue;
        };
        for (at, open) in flow_values(region) {
            let what = if open == '[' { "list" } else { "mapping" };
            diags.push(
                Diagnostic::new(
                    Code::FlowStyle,
                    &ctx.file,
                    format!(
                        "`{}` holds a {what} in YAML flow style (`{open}…`), which the Agent Skills reference validator rejects",
                        loc.key
                    ),
                )
                .at(Some(ctx.md.index().position(loc.value_offset + at, 1)))
                .help(if open == '[' {
                    "write the list in block style, one `- item` per line"
                } else {
                    "write the mapping in block style, one indented `key: value` per line"
                }),
            );
        }
    }
}

/// Byte offsets (in `region`, the text after a top-level `key:`) and opening characters of the
/// values written in flow style. The first line of `region` is the top-level value itself.
fn flow_values(region: &str) -> Vec<(usize, char)> {
    let mut out = Vec::new();
    // Inside a block scalar: lines indented more than this belong to it.
    let mut block: Option<usize> = None;
    let mut offset = 0;
    for (n, raw) in region.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += raw.len();
        let line = raw.trim_end_matches(['\n', '\r']);
        let body = line.trim_start_matches(' ');
        let indent = if n == 0 { 0 } else { line.len() - body.len() };
        if let Some(b) = block {
            if body.is_empty() || indent > b {
                continue;
            }
            block = None;
        }
        if body.starts_with('#') {
            continue;
        }
        let (at, value) = value_of(if n == 0 { line } else { body });
        let at = start + if n == 0 { 0 } else { indent } + at;
        let skip = value.len() - value.trim_start_matches([' ', '\t']).len();
        let value = &value[skip..];
        match value.chars().next() {
            Some(c @ ('[' | '{')) => out.push((at + skip, c)),
            Some('|' | '>') => block = Some(indent),
            _ => {}
        }
    }
    out
}

/// The value part of one line's content: after any `- ` sequence markers and a `key:`.
/// Returns its byte offset in `line` and the text.
fn value_of(line: &str) -> (usize, &str) {
    let mut at = 0;
    loop {
        let rest = &line[at..];
        let trimmed = rest.trim_start_matches(' ');
        let lead = rest.len() - trimmed.len();
        if trimmed == "-" {
            return (line.len(), "");
        }
        if let Some(after) = trimmed.strip_prefix("- ") {
            at += lead + (trimmed.len() - after.len());
            continue;
        }
        if let Some(v) = key_end(trimmed) {
            return (at + lead + v, &trimmed[v..]);
        }
        return (at, rest);
    }
}

/// The byte offset just past `key:` when `text` starts with a mapping key (plain or quoted).
fn key_end(text: &str) -> Option<usize> {
    let first = text.chars().next()?;
    let colon = if first == '"' || first == '\'' {
        let close = text.get(1..)?.find(first)? + 1;
        let after = text.get(close + 1..)?;
        if !after.starts_with(':') {
            return None;
        }
        close + 1
    } else {
        if matches!(first, '[' | '{' | '|' | '>' | '#' | '&' | '*' | '!') {
            return None;
        }
        text.match_indices(':')
            .map(|(i, _)| i)
            .find(|&i| text[i + 1..].is_empty() || text[i + 1..].starts_with([' ', '\t']))?
    };
    Some(colon + 1)
}

#[cfg(test)]
mod tests {
    use super::flow_values;

    #[test]
    fn finds_flow_values_and_nothing_else() {
        assert_eq!(flow_values(" [a, b]\n"), [(1, '[')]);
        assert_eq!(flow_values(" {\"a\": 1}\n"), [(1, '{')]);
        let nested = "\n  openclaw:\n    bins: [curl]\n  list:\n    - {a: b}\n";
        assert_eq!(
            flow_values(nested),
            [
                (nested.find("[curl]").unwrap_or(0), '['),
                (nested.find("{a: b}").unwrap_or(0), '{')
            ]
        );
        // Quoted text, block scalars, comments and plain text with brackets are not flow.
        assert!(flow_values(" \"[a]\"\n").is_empty());
        assert!(flow_values(" |\n  [not, a, list]\n  {x}\n").is_empty());
        assert!(flow_values(" text [x]\n  # [y]\n").is_empty());
        assert!(flow_values("\n  url: http://x/[y]\n").is_empty());
    }
}
