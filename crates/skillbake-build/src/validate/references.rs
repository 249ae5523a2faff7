//! `reference-missing`: a body that points at a file of its own pack that is not there. An
//! agent that follows `[the guide](references/GUIDE.md)` or runs `scripts/fill.py` from a code
//! span then reads or runs nothing.
//!
//! Checked, outside fenced code blocks: Markdown link and image targets that are relative paths
//! (`guide.md`, `./references/a.md`, `scripts/`), and code spans whose words start with one of the
//! pack's folders (`references/`, `scripts/`, `assets/`). URLs, anchors, absolute paths, paths
//! that climb out of the pack (`../x`), hidden files, `...`, and words with placeholders or globs
//! (`<name>`, `*`, `{x}`, `$VAR`, `script_name.py`, `your-file.md`) are left alone, and so are code
//! spans on headings and on lines that give examples or suppose (`Example:`, `e.g.`, `would`):
//! they describe packs rather than point into this one.
//! A `./` in a code span is the agent's working folder, not the pack's, and is not checked. A
//! path names a file of the pack (as embedded, after `skillbake.toml`'s ignores) or a folder
//! that holds one.

use super::PackCtx;
use crate::diagnostic::{Code, Diagnostic};

/// The pack folders a code-span path must start with to be checked.
pub const PACK_FOLDERS: &[&str] = &["references/", "scripts/", "assets/"];

/// Checks every reference of the body.
pub fn check(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) {
    let md = ctx.md;
    let body = md.raw_body();
    let mut seen: Vec<String> = Vec::new();
    for r in references(body) {
        let Some(path) = normalise(&r.path) else {
            continue;
        };
        if path.is_empty() || names_something(ctx, &path) || seen.contains(&path) {
            continue;
        }
        seen.push(path.clone());
        let what = if r.link { "links to" } else { "names" };
        diags.push(
            Diagnostic::new(
                Code::ReferenceMissing,
                &ctx.file,
                format!("the body {what} `{}`, which is not a file of this pack", r.path),
            )
            .at(Some(md.index().position(md.body_offset + r.at, r.path.chars().count())))
            .help(format!(
                "add `{path}` to the pack, or fix the path (it is relative to the pack's folder, where `SKILL.md` is)"
            )),
        );
    }
}

/// Whether `path` is a file of the pack, or a folder holding one.
fn names_something(ctx: &PackCtx<'_>, path: &str) -> bool {
    let folder = path.trim_end_matches('/');
    ctx.pack.files.iter().any(|f| {
        f.path == folder
            || f.path
                .strip_prefix(folder)
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// `a/./b/../c` → `a/c`, without a leading `./`; `None` when the path leaves the pack.
fn normalise(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    let dir = path.ends_with('/');
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    let mut out = parts.join("/");
    if dir && !out.is_empty() {
        out.push('/');
    }
    Some(out)
}

/// One path the body refers to.
#[derive(Debug, PartialEq, Eq)]
struct Reference {
    /// The path as written (without `#fragment` or `?query`).
    path: String,
    /// Byte offset in the body.
    at: usize,
    /// A link target (else a word of a code span).
    link: bool,
}

/// Every checked reference of `body`, in order.
fn references(body: &str) -> Vec<Reference> {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for (start, raw) in marked_lines(body) {
        let line = raw.trim_end_matches(['\n', '\r']);
        let trimmed = line.trim_start_matches(' ');
        let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        if let Some(m) = marker {
            let run = trimmed.len() - trimmed.trim_start_matches(m).len();
            if run >= 3 {
                match fence {
                    None => fence = Some((m, run)),
                    Some((f, n))
                        if f == m
                            && run >= n
                            && trimmed.trim_start_matches(m).trim().is_empty() =>
                    {
                        fence = None
                    }
                    Some(_) => {}
                }
                continue;
            }
        }
        if fence.is_some() {
            continue;
        }
        links(line, start, &mut out);
        if !trimmed.starts_with('#') && line.contains('`') && !describes(trimmed) {
            code_spans(line, start, &mut out);
        }
    }
    out
}

/// Whether a line gives an example or supposes (its code spans describe packs, not this one).
fn describes(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    ["example", "e.g.", " would "]
        .iter()
        .any(|w| lower.contains(w))
}

/// The lines of `body` (each with its line break) that hold a `` ` ``, `~` or `]`, with their
/// byte offsets: the only lines that can open or close a fence, hold a link target (`](`) or a
/// code span. A body is mostly other lines, which are skipped without being split off.
fn marked_lines(body: &str) -> impl Iterator<Item = (usize, &str)> {
    let bytes = body.as_bytes();
    let mut next = 0;
    memchr::memchr3_iter(b'`', b'~', b']', bytes).filter_map(move |hit| {
        if hit < next {
            return None;
        }
        let start = memchr::memrchr(b'\n', &bytes[..hit]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &bytes[hit..]).map_or(bytes.len(), |i| hit + i + 1);
        next = end;
        // Both ends are at a line break or an end of the text: character boundaries.
        body.get(start..end).map(|line| (start, line))
    })
}

/// Targets of `[text](target)` and `![alt](target)` on one line.
fn links(line: &str, start: usize, out: &mut Vec<Reference>) {
    let mut from = 0;
    while let Some(rel) = line.get(from..).and_then(|l| l.find("](")) {
        let open = from + rel + 2;
        from = open;
        let rest = line.get(open..).unwrap_or("");
        let (target, skip) = match rest.strip_prefix('<') {
            Some(r) => (r.split('>').next().unwrap_or(""), 1),
            None => (rest.split([')', ' ']).next().unwrap_or(""), 0),
        };
        let target = target.split(['#', '?']).next().unwrap_or("");
        if is_pack_path(target, false) {
            out.push(Reference {
                path: target.replace("%20", " "),
                at: start + open + skip,
                link: true,
            });
        }
    }
}

/// Words of inline code spans (`` `scripts/fill.py --in x` ``) that are pack paths.
fn code_spans(line: &str, start: usize, out: &mut Vec<Reference>) {
    let mut rest = line;
    let mut base = 0;
    while let Some(open) = rest.find('`') {
        let ticks = rest[open..].len() - rest[open..].trim_start_matches('`').len();
        let inner_from = open + ticks;
        let delim = &rest[open..inner_from];
        let Some(close) = rest[inner_from..].find(delim) else {
            return;
        };
        let inner = &rest[inner_from..inner_from + close];
        let mut word_at = 0;
        for word in inner.split(' ') {
            let w = word.trim_matches(|c| matches!(c, '"' | '\'' | ',' | ';' | ':' | '(' | ')'));
            if is_pack_path(w, true) {
                let lead = word.find(w).unwrap_or(0);
                out.push(Reference {
                    path: w.to_string(),
                    at: start + base + inner_from + word_at + lead,
                    link: false,
                });
            }
            word_at += word.len() + 1;
        }
        let next = inner_from + close + ticks;
        base += next;
        rest = &rest[next..];
    }
}

/// Whether `p` is a path into the pack worth checking: relative, no URL, no placeholder or
/// glob; a code-span word must also start with one of [`PACK_FOLDERS`].
fn is_pack_path(p: &str, code: bool) -> bool {
    if p.is_empty() || p.contains("://") || p.starts_with(['/', '#', '~', '\\']) || p.contains(':')
    {
        return false;
    }
    if p.contains("...")
        || p.split('/')
            .any(|c| c.starts_with('.') && c != "." && c != "..")
    {
        return false;
    }
    if p.contains([
        '*', '?', '<', '>', '{', '}', '$', '[', ']', '|', '%', '=', '`',
    ]) && !p.contains("%20")
    {
        return false;
    }
    if p.split('/').any(is_placeholder) {
        return false;
    }
    if code {
        return PACK_FOLDERS.iter().any(|f| p.starts_with(f)) && p.len() > 2;
    }
    true
}

/// A path component that stands for a name to fill in: `script_name.py`, `name.md`,
/// `your-file.md`, `my_script.py`, `example.txt`.
fn is_placeholder(component: &str) -> bool {
    let stem = component
        .split('.')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    stem == "name"
        || stem.ends_with("_name")
        || stem.ends_with("-name")
        || ["your", "my_", "my-", "example"]
            .iter()
            .any(|p| stem.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::{marked_lines, normalise, references};
    use proptest::prelude::*;

    proptest! {
        /// The marked lines are the lines holding one of the three characters, whole, at
        /// their offsets, in order.
        #[test]
        fn marked_lines_are_the_lines_holding_a_mark(body in "([a-z `~\\]\\[()\r\n]|é|用){0,200}") {
            let mut want = Vec::new();
            let mut offset = 0;
            for line in body.split_inclusive('\n') {
                if line.contains(['`', '~', ']']) {
                    want.push((offset, line));
                }
                offset += line.len();
            }
            prop_assert_eq!(marked_lines(&body).collect::<Vec<_>>(), want);
        }
    }

    fn paths(body: &str) -> Vec<(String, bool)> {
        references(body)
            .into_iter()
            .map(|r| (r.path, r.link))
            .collect()
    }

    #[test]
    fn links_and_code_span_paths_are_found_and_nothing_else() {
        let body = "See [guide](references/GUIDE.md#setup) and ![logo](<assets/my logo.png>).\n\
                    Run `python scripts/fill.py --in x` then `./run.sh` and `go test ./...`.\n\
                    ## Scripts (`scripts/`)\nExample: `scripts/rotate.py` [hidden](assets/.env) `assets/.env`\n\
                    A `scripts/rotate.py` script would help. Run `scripts/script_name.py --help`.\n\
                    [site](https://example.com) [top](#top) [up](../other/SKILL.md) `references/*.md` `scripts/<name>.py`\n\
                    ```bash\npython scripts/in_fence.py\n[x](in-fence.md)\n```\n\
                    `assets/` [forms](FORMS.md) `config/settings.json`\n";
        assert_eq!(
            paths(body),
            [
                ("references/GUIDE.md".to_string(), true),
                ("assets/my logo.png".to_string(), true),
                ("scripts/fill.py".to_string(), false),
                ("../other/SKILL.md".to_string(), true),
                ("FORMS.md".to_string(), true),
                ("assets/".to_string(), false),
            ]
        );
        let at = references(body)[2].at;
        assert_eq!(&body[at..at + 15], "scripts/fill.py");
    }

    #[test]
    fn paths_are_normalised_within_the_pack() {
        assert_eq!(
            normalise("./references/./a.md").as_deref(),
            Some("references/a.md")
        );
        assert_eq!(normalise("scripts/../assets/").as_deref(), Some("assets/"));
        assert_eq!(normalise("../other/SKILL.md"), None);
    }
}
