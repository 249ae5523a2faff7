//! The body after the frontmatter: Jinja2 syntax DB-GPT would choke on, emptiness, length.
//!
//! DB-GPT renders every body as a Jinja2 template when it loads it, so `{#anchor}` (an unclosed
//! comment), an unclosed `{{` or an unbalanced `{% if %}` makes its `load_skill` throw.

use super::PackCtx;
use crate::diagnostic::{Code, Diagnostic, Position};
use crate::source::LineIndex;

/// Longest body, in lines, before `body-too-long`.
pub const MAX_LINES: usize = 500;

/// Block tags that need an `end…` tag.
const BLOCK_TAGS: &[&str] = &[
    "if",
    "for",
    "block",
    "macro",
    "call",
    "filter",
    "with",
    "autoescape",
    "trans",
    "raw",
];
/// Tags that stand alone or continue a block.
const INLINE_TAGS: &[&str] = &[
    "elif",
    "else",
    "set",
    "include",
    "import",
    "from",
    "extends",
    "break",
    "continue",
    "do",
    "pluralize",
];

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
    let lines = md.body.lines().count();
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
    if let Some((offset, len, message, help)) = jinja_problem(md.raw_body()) {
        diags.push(
            Diagnostic::new(Code::BodyJinja, file, message)
                .at(Some(idx.position(md.body_offset + offset, len)))
                .help(help),
        );
    }
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

/// The first construct of `body` that Jinja2 would refuse: (byte offset, length, message, help).
pub fn jinja_problem(body: &str) -> Option<(usize, usize, String, String)> {
    let escape_help = |open: &str| {
        format!("DB-GPT renders the body with Jinja2; write `{open}` as `{{{{ '{open}' }}}}` or wrap the passage in `{{% raw %}}...{{% endraw %}}`")
    };
    let mut stack: Vec<(&str, usize)> = Vec::new();
    let mut i = 0;
    while let Some(rel) = body[i..].find('{') {
        let at = i + rel;
        let rest = &body[at..];
        let (open, close) = if rest.starts_with("{{") {
            ("{{", "}}")
        } else if rest.starts_with("{%") {
            ("{%", "%}")
        } else if rest.starts_with("{#") {
            ("{#", "#}")
        } else {
            i = at + 1;
            continue;
        };
        let inner_start = at + 2;
        let Some(close_rel) = body[inner_start..].find(close) else {
            let what = match open {
                "{{" => "an expression `{{` that is never closed with `}}`",
                "{%" => "a statement `{%` that is never closed with `%}`",
                _ => "a comment `{#` that is never closed with `#}`",
            };
            return Some((
                at,
                2,
                format!("the body has {what}; DB-GPT's Jinja2 rendering fails on it"),
                escape_help(open),
            ));
        };
        let inner = body[inner_start..inner_start + close_rel]
            .trim_start_matches(['-', '+'])
            .trim_end_matches(['-', '+'])
            .trim();
        let end = inner_start + close_rel + 2;
        match open {
            "{{" if inner.is_empty() => {
                return Some((
                    at,
                    end - at,
                    "the body has an empty Jinja2 expression `{{ }}`".into(),
                    escape_help(open),
                ));
            }
            "{%" => {
                let tag = inner.split_whitespace().next().unwrap_or("");
                if tag == "raw" {
                    // Everything up to `{% endraw %}` is literal.
                    match find_endraw(&body[end..]) {
                        Some(skip) => {
                            i = end + skip;
                            continue;
                        }
                        None => {
                            return Some((
                                at,
                                end - at,
                                "`{% raw %}` is never closed with `{% endraw %}`".into(),
                                "add `{% endraw %}` after the literal passage".into(),
                            ));
                        }
                    }
                }
                let is_block_set = tag == "set" && !inner.contains('=');
                if BLOCK_TAGS.contains(&tag) || is_block_set {
                    stack.push((tag, at));
                } else if let Some(name) = tag.strip_prefix("end") {
                    match stack.pop() {
                        Some((open_tag, _)) if open_tag == name => {}
                        Some((open_tag, _)) => {
                            return Some((
                                at,
                                end - at,
                                format!("`{{% {tag} %}}` closes `{{% {open_tag} %}}`"),
                                format!("close `{open_tag}` with `{{% end{open_tag} %}}` first"),
                            ));
                        }
                        None => {
                            return Some((
                                at,
                                end - at,
                                format!("`{{% {tag} %}}` closes nothing"),
                                "remove it, or escape the `{%` if it is meant literally".into(),
                            ));
                        }
                    }
                } else if !INLINE_TAGS.contains(&tag) {
                    return Some((at, end - at, format!("`{{% {tag} %}}` is not a Jinja2 statement; DB-GPT's rendering fails on it"), escape_help(open)));
                }
            }
            _ => {}
        }
        i = end;
    }
    stack.pop().map(|(tag, at)| {
        (
            at,
            2,
            format!("`{{% {tag} %}}` is never closed with `{{% end{tag} %}}`"),
            format!("add `{{% end{tag} %}}`, or escape the `{{%` if it is meant literally"),
        )
    })
}

fn find_endraw(s: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(rel) = s[from..].find("{%") {
        let at = from + rel;
        let close = s[at + 2..].find("%}")? + at + 2;
        let inner = s[at + 2..close].trim_matches(['-', '+']).trim();
        if inner == "endraw" {
            return Some(close + 2);
        }
        from = at + 2;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::jinja_problem;

    fn bad(s: &str) -> bool {
        jinja_problem(s).is_some()
    }

    #[test]
    fn jinja_rules() {
        assert!(!bad("plain { json: 1 } and {x}"));
        assert!(!bad(
            "{{ name }} {% if a %}x{% elif b %}y{% else %}z{% endif %} {# c #}"
        ));
        assert!(!bad("{% raw %}{{ not closed {#{% endraw %}"));
        assert!(!bad("{%- for x in y -%}{{- x -}}{%- endfor %}"));
        assert!(bad("see {#anchor}"));
        assert!(bad("{{ x"));
        assert!(bad("{{ }}"));
        assert!(bad("{% if x %} never closed"));
        assert!(bad("{% endif %}"));
        assert!(bad("{% foo %}"));
        assert!(bad("{% raw %} forever"));
        assert_eq!(jinja_problem("ab {#x").map(|p| p.0), Some(3));
        assert!(bad("{%}"));
        assert!(bad("{% raw %}{%}"));
        assert!(!bad("{% raw %}{%}{% endraw %}"));
    }
}
