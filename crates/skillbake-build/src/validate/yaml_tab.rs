//! `yaml-tab`: a tab in the frontmatter outside quotes, block scalars and comments: inside a
//! plain value (`description: a<TAB>b`), after a `:`, or at the end of a line. The YAML library
//! reads it (a tab is whitespace there in YAML 1.2), but PyYAML does not: its scanner refuses a
//! tab wherever it looks for the next token ("found character '\t' that cannot start any
//! token"), so DB-GPT (`yaml.safe_load`) and the Agent Skills reference validator fail on the
//! file and skip the pack. Tabs used for indentation are `yaml-syntax` already.
//!
//! One diagnostic per line, at its first such tab. The fix, when there is a safe one: a tab
//! between tokens becomes a space (at the end of a line, it goes), and a one-line plain value
//! holding a tab is written in double quotes (the tab as `\t`). It is offered only when the
//! frontmatter with it applied reads as exactly the same data, and not for a value followed by
//! a `#` that `yaml-inline-comment` quotes with it (that fix puts the tab in quotes too).

use super::PackCtx;
use crate::diagnostic::{Code, Diagnostic, Edit, Fix};
use crate::parse::frontmatter::Frontmatter;
use crate::parse::quote::double_quoted;
use crate::parse::tokens::{loose_tabs, tokens, Kind, Token};
use yaml_serde::Value;

/// Reports every line of the frontmatter with a tab PyYAML refuses.
pub fn check(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) {
    let Some(fm) = ctx.md.frontmatter.as_ref() else {
        return;
    };
    let text = ctx.md.text.as_str();
    if !text.get(fm.span.clone()).is_some_and(|t| t.contains('\t')) {
        return;
    }
    let toks = tokens(text, fm.span.clone());
    let tabs = loose_tabs(text, fm.span.clone(), &toks);
    let mut rest = tabs.as_slice();
    while let Some(&(at, inside)) = rest.first() {
        let (start, end) = line_of(text, at);
        let n = rest.iter().take_while(|(t, _)| *t < end).count();
        let (on_line, after) = rest.split_at(n);
        rest = after;
        let key = ctx.key_at(at).unwrap_or("the frontmatter");
        let message = match inside {
            Some(_) => format!(
                "a tab inside a plain value of `{key}`: PyYAML refuses a tab outside quotes, so DB-GPT and the Agent Skills reference validator fail on this file and skip the pack"
            ),
            None => format!(
                "a tab outside quotes in `{key}`: PyYAML refuses it, so DB-GPT and the Agent Skills reference validator fail on this file and skip the pack"
            ),
        };
        let pos = ctx.md.index().position(at, 1);
        let fix = line_fix(text, fm, &toks, start, end, on_line, pos.line);
        let how = match inside {
            Some(_) => {
                "write the value in double quotes, where a tab is text (`\"a\\tb\"`), or use spaces"
            }
            None => "use a space instead of the tab (or nothing, at the end of a line)",
        };
        let help = if fix.is_some() {
            format!("{how}; `check --fix` does it")
        } else {
            how.to_string()
        };
        let d = Diagnostic::new(Code::YamlTab, &ctx.file, message)
            .at(Some(pos))
            .help(help);
        diags.push(match fix {
            Some(f) => d.with_fix(f),
            None => d,
        });
    }
}

/// The byte range of the line holding `at`, without its terminator.
fn line_of(text: &str, at: usize) -> (usize, usize) {
    let start = text
        .get(..at)
        .and_then(|t| t.rfind(['\n', '\r']))
        .map_or(0, |i| i + 1);
    let end = text
        .get(at..)
        .and_then(|t| t.find(['\n', '\r']))
        .map_or(text.len(), |i| at + i);
    (start, end)
}

/// The fix of the tabs `on_line` of the line `start..end`, when the frontmatter with it reads as
/// the same data; `None` when a tab is inside a plain value that spans lines, or the result
/// would read otherwise.
fn line_fix(
    text: &str,
    fm: &Frontmatter,
    toks: &[Token],
    start: usize,
    end: usize,
    on_line: &[(usize, Option<usize>)],
    line: u32,
) -> Option<Fix> {
    let bytes = text.as_bytes();
    let mut edits: Vec<Edit> = Vec::new();
    let mut quotes = false;
    for &(at, inside) in on_line {
        if edits.iter().any(|e| e.start <= at && at < e.end) {
            continue;
        }
        match inside {
            Some(t) => {
                let tok = toks.get(t)?;
                let one_line = toks
                    .iter()
                    .filter(|x| x.kind == Kind::Plain { first: t })
                    .count()
                    == 1;
                if tok.kind != (Kind::Plain { first: t }) || !one_line {
                    return None;
                }
                // A `#` after it that is text: quoting the line, `#` and all, is that rule's
                // fix, and resolves the tab too; quoting the value alone would keep it cut.
                let cut = super::inline_comment::finding(text, fm.span.end, toks, t + 1);
                if cut.is_some_and(|f| f.fix.is_some()) {
                    return None;
                }
                let value = text.get(tok.span.clone())?;
                edits.push(Edit {
                    start: tok.span.start,
                    end: tok.span.end,
                    text: double_quoted(value)?,
                });
                quotes = true;
            }
            None => {
                let mut s = at;
                while s > start && matches!(bytes.get(s - 1), Some(b' ' | b'\t')) {
                    s -= 1;
                }
                let mut e = at;
                while e < end && matches!(bytes.get(e), Some(b' ' | b'\t')) {
                    e += 1;
                }
                let run = text.get(s..e)?;
                let replacement = if e == end {
                    String::new()
                } else {
                    run.replace('\t', " ")
                };
                edits.push(Edit {
                    start: s,
                    end: e,
                    text: replacement,
                });
            }
        }
    }
    edits.sort();
    // The frontmatter with the fix must read as the same data.
    let mut after = String::new();
    let mut at = fm.span.start;
    for e in &edits {
        after.push_str(text.get(at..e.start)?);
        after.push_str(&e.text);
        at = e.end;
    }
    after.push_str(text.get(at..fm.span.end)?);
    let same = yaml_serde::from_str::<Value>(&after).ok()? == Value::Mapping(fm.mapping.clone());
    if !same {
        return None;
    }
    let message = if quotes {
        format!("quote the value holding a tab on line {line}")
    } else {
        format!("replace the tabs on line {line} with spaces")
    };
    Some(Fix {
        message,
        edits,
        rename_dir: None,
    })
}
