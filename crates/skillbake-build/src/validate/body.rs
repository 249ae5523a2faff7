//! The body after the frontmatter: Jinja2 syntax DB-GPT would choke on, emptiness, length.
//!
//! DB-GPT turns every body into a Jinja2 prompt template when it loads it (parse, then the
//! variable scan, which compiles it), so `{#anchor}` (an unclosed comment), an unclosed `{{`, a
//! filter Jinja2 does not have or `${{ github.event.x | fromJSON }}` makes its `load_skill`
//! throw. The template is checked with [`crate::parse::jinja`], which reproduces Jinja2's
//! verdicts (measured by the conformance corpus); the body is parsed once per pack
//! ([`PackCtx::jinja`]).

use super::PackCtx;
use crate::diagnostic::{Code, Diagnostic, Position};
use crate::parse::frontmatter::SkillMd;
use crate::source::LineIndex;
use skillbake_format::python::is_space as is_python_space;

/// Longest body, in lines, before `body-too-long`.
pub const MAX_LINES: usize = 500;

/// Checks the body of a pack.
pub fn check(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) {
    let md = ctx.md;
    let file = &ctx.file;
    if md.frontmatter.is_none() && md.body_offset >= md.text.len() {
        return;
    }
    let idx = md.index();
    if md.body.is_empty() {
        diags.push(
            Diagnostic::new(
                Code::BodyEmpty,
                file,
                "the body after the frontmatter is empty",
            )
            .at(Some(closing_line(md, &idx)))
            .help("write the instructions an agent should follow when it loads this skill"),
        );
        return;
    }
    let lines = line_count(&md.body);
    if lines > MAX_LINES {
        let raw = md.raw_body();
        let lead = raw.len()
            - raw
                .trim_start_matches(skillbake_format::python::is_space)
                .len();
        let first = idx.position(md.body_offset + lead, 0).line;
        diags.push(
            Diagnostic::new(
                Code::BodyTooLong,
                file,
                format!("the body is {lines} lines long; keep it to {MAX_LINES} lines at most"),
            )
            .at(Some(Position::point(first + u32::try_from(MAX_LINES).unwrap_or(0), 1)))
            .help("move reference material into `references/*.md` and point to it from the body; agents load files on demand"),
        );
    }
    if let Err(e) = ctx.jinja {
        let start = body_to_file(md, e.start);
        let end = body_to_file(md, e.end.max(e.start + 1).min(md.body.len()));
        diags.push(
            Diagnostic::new(
                Code::BodyJinja,
                file,
                format!(
                    "the body is not a valid Jinja2 template: {}; DB-GPT parses every body with Jinja2 and its `load_skill` fails on this one",
                    e.message
                ),
            )
            .at(Some(idx.range(start, end.max(start))))
            .help("if the braces are meant literally (code, another template language, `{#anchor}`), wrap the passage in `{% raw %}` … `{% endraw %}` or write the delimiter as `{{ '{{' }}`; otherwise fix the template syntax"),
        );
    }
}

/// The number of lines of `text`, as `str::lines` counts them (a last line without a line break
/// counts; an empty text has none), from its line breaks alone.
fn line_count(text: &str) -> usize {
    let breaks = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    breaks + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

/// The byte offset in `SKILL.md` of byte `offset` of the served body (which is the text after
/// the frontmatter with `\r\n` and `\r` turned into `\n` and surrounding whitespace stripped).
pub fn body_to_file(md: &SkillMd, offset: usize) -> usize {
    let raw = md.raw_body();
    let lead = raw.len() - raw.trim_start_matches(is_python_space).len();
    let bytes = raw.as_bytes();
    let (mut r, mut n) = (lead, 0usize);
    while n < offset && r < bytes.len() {
        if bytes[r] == b'\r' && bytes.get(r + 1) == Some(&b'\n') {
            r += 2;
        } else {
            r += 1;
        }
        n += 1;
    }
    md.body_offset + r
}

/// The closing `---` line of the frontmatter (the line just before the body).
fn closing_line(md: &crate::parse::frontmatter::SkillMd, idx: &LineIndex<'_>) -> Position {
    let before = &md.text[..md.body_offset.min(md.text.len())];
    let content_end = before.trim_end_matches(['\n', '\r']).len();
    let start = before[..content_end]
        .rfind(['\n', '\r'])
        .map_or(0, |i| i + 1);
    idx.position(start, content_end - start)
}

#[cfg(test)]
mod tests {
    use super::line_count;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn lines_are_counted_as_str_lines_counts_them(text in "([a \r\n]|é){0,64}") {
            prop_assert_eq!(line_count(&text), text.lines().count());
        }
    }
}
