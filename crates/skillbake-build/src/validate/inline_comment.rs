//! `yaml-inline-comment`: a `#` after whitespace inside what reads as one plain value
//! (`description: Use for C# and F# #dotnet`). YAML starts a comment there, so every loader
//! (the YAML library, PyYAML, the JavaScript ones) ends the value before it: the description
//! above is `Use for C# and F#`, and the rest is gone without a word. Only values that read as
//! text are looked at (`timeout: 30  # seconds` is a number with a comment).
//!
//! The rule cannot know whether the author meant a comment, so it warns either way, and the
//! fix (the whole line's value in double quotes, `#` and all) is offered only where the `#`
//! does not look like a comment: one space before it and none after (`#dotnet`, `#42`, `##`),
//! and no such comment further on the line. A comment written as comments usually are
//! (`# text`, or two spaces before the `#`) gets no fix: the help says to move it to a line of
//! its own, or to quote the value if it is text.

use super::PackCtx;
use crate::diagnostic::{Code, Diagnostic, Fix};
use crate::parse::quote::quote_value;
use crate::parse::tokens::{tokens, Kind, Token};
use yaml_serde::Value;

/// How many characters of a value or comment a message shows at most.
const SHOWN: usize = 40;

/// Reports every comment that ends a plain text value on its line.
pub fn check(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) {
    let Some(fm) = ctx.md.frontmatter.as_ref() else {
        return;
    };
    let text = ctx.md.text.as_str();
    if !text.get(fm.span.clone()).is_some_and(|t| t.contains('#')) {
        return;
    }
    let toks = tokens(text, fm.span.clone());
    for k in 0..toks.len() {
        let Some(f) = finding(text, fm.span.end, &toks, k) else {
            continue;
        };
        let Some((value, comment)) = toks.get(k - 1).zip(toks.get(k)) else {
            continue;
        };
        let hash = text.get(comment.span.clone()).unwrap_or("#");
        let key = ctx.key_at(value.span.start).unwrap_or("the frontmatter");
        let help = if f.fix.is_some() {
            "quote the whole value, so that the `#` and what follows are part of it; `check --fix` does it"
        } else if f.looks_like_text {
            "quote the whole value, so that the `#` and what follows are part of it"
        } else {
            "if this is a comment, move it to a line of its own; if it is part of the value, quote the whole value"
        };
        let d = Diagnostic::new(
            Code::YamlInlineComment,
            &ctx.file,
            format!(
                "`{key}` ends at `{}`: YAML reads `{}` as a comment, not as part of the value",
                tail(&f.read),
                head(hash)
            ),
        )
        .at(Some(
            ctx.md
                .index()
                .position(comment.span.start, hash.chars().count()),
        ))
        .help(help);
        diags.push(match f.fix {
            Some(fix) => d.with_fix(fix),
            None => d,
        });
    }
}

/// What the rule makes of a comment that ends a plain text value on its line.
pub(crate) struct Finding {
    /// The value as YAML reads it (its lines joined by spaces).
    pub read: String,
    /// Whether the `#` looks like text rather than a comment.
    pub looks_like_text: bool,
    /// The fix: the line's value, `#` and all, in double quotes.
    pub fix: Option<Fix>,
}

/// The finding of the token `k` of `toks` (of `text`, whose frontmatter ends at `fm_end`):
/// `None` unless it is a comment right after a plain value, on its line, that reads as text.
pub(crate) fn finding(text: &str, fm_end: usize, toks: &[Token], k: usize) -> Option<Finding> {
    let comment = toks.get(k).filter(|t| t.kind == Kind::Comment)?;
    let value = toks.get(k.checked_sub(1)?)?;
    let Kind::Plain { first } = value.kind else {
        return None;
    };
    let gap = text
        .get(value.span.end..comment.span.start)
        .filter(|g| !g.contains(['\n', '\r']))?;
    let parts: Vec<&str> = toks
        .iter()
        .filter(|t| t.kind == Kind::Plain { first })
        .filter_map(|t| text.get(t.span.clone()))
        .collect();
    let read = parts.join(" ");
    if !matches!(
        yaml_serde::from_str::<Value>(&read),
        Ok(Value::String(_)) | Err(_)
    ) {
        return None;
    }
    let hash = text.get(comment.span.clone()).unwrap_or("#");
    let looks_like_text = !looks_like_a_comment(gap, hash);
    let fix = (looks_like_text && parts.len() == 1)
        .then(|| quote_value(text, value.span.start, fm_end))
        .flatten();
    Some(Finding {
        read,
        looks_like_text,
        fix,
    })
}

/// Whether `hash`, a comment after the whitespace `gap`, is written as comments usually are:
/// a space (or nothing) after the `#`, or more than one space before it; or holds such a comment
/// further on (`#42 # note`), which quoting the line would turn into text as well.
fn looks_like_a_comment(gap: &str, hash: &str) -> bool {
    let after = hash.get(1..).unwrap_or("");
    gap != " "
        || after.is_empty()
        || after.starts_with(char::is_whitespace)
        || after.contains(" # ")
        || after.ends_with(" #")
        || after.contains("  #")
        || after.contains("\t#")
}

/// The last [`SHOWN`] characters of `s`, with `…` before when cut.
fn tail(s: &str) -> String {
    let n = s.chars().count();
    if n <= SHOWN {
        return s.to_string();
    }
    let cut: String = s.chars().skip(n - SHOWN).collect();
    format!("…{cut}")
}

/// The first [`SHOWN`] characters of `s`, with `…` after when cut.
fn head(s: &str) -> String {
    if s.chars().count() <= SHOWN {
        return s.to_string();
    }
    let cut: String = s.chars().take(SHOWN).collect();
    format!("{cut}…")
}
