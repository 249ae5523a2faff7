//! The YAML error mapping: turns the YAML library's errors into `yaml-syntax`, `yaml-limit` and
//! `duplicate-key` diagnostics with file positions.

use super::keys::second_key_occurrence;
use crate::diagnostic::{Code, Diagnostic, Position};
use crate::source::{to_u32, LineIndex};

pub(super) fn yaml_error(
    err: &yaml_serde::Error,
    text: &str,
    fm_start: usize,
    fm_text: &str,
    line_shift: u32,
    idx: &LineIndex<'_>,
    file: &str,
) -> Diagnostic {
    let raw = err.to_string();
    // The library appends " at line L column C" with frontmatter-relative numbers: drop it, the
    // diagnostic carries file-relative ones.
    let message = match raw.find(" at line ") {
        Some(i) => raw[..i].to_string(),
        None => raw.clone(),
    };
    let loc = err.location();
    let pos = loc.as_ref().map(|l| {
        let offset = fm_start + l.index().min(fm_text.len());
        let p = idx.position(offset, 1);
        Position::span(to_u32(l.line()) + line_shift, p.column, 1)
    });
    if message.contains("recursion limit exceeded") {
        return Diagnostic::new(
            Code::YamlLimit,
            file,
            "the frontmatter nests deeper than 128 levels",
        )
        .at(pos)
        .help("flatten the structure; frontmatter holds metadata, not data");
    }
    if message.contains("repetition limit exceeded") {
        return Diagnostic::new(
            Code::YamlLimit,
            file,
            "the frontmatter expands too many YAML aliases (an alias bomb)",
        )
        .at(pos.or(Some(idx.position(fm_start, 0))))
        .help("write values out instead of repeating `*alias` references");
    }
    if let Some(key) = message
        .find("duplicate entry with key ")
        .map(|i| &message[i + "duplicate entry with key ".len()..])
    {
        let key = key.trim().trim_matches('"').to_string();
        let from = loc
            .as_ref()
            .map_or(fm_start, |l| fm_start + l.index().min(fm_text.len()));
        let second = second_key_occurrence(text, from, fm_start + fm_text.len(), &key);
        let pos = second.map(|o| idx.position(o, key.chars().count())).or(pos);
        return Diagnostic::new(
            Code::DuplicateKey,
            file,
            format!("key `{key}` appears more than once in the same mapping"),
        )
        .at(pos)
        .help("keep one of the entries; YAML loaders differ on which one wins");
    }
    if message.contains("more than one document") {
        return Diagnostic::new(
            Code::YamlSyntax,
            file,
            "the frontmatter holds more than one YAML document (a `...` or `---` marker inside it)",
        )
        .at(pos.or(Some(idx.position(fm_start, 0))))
        .help("remove the document marker; the frontmatter is a single mapping");
    }
    let help = if message.contains("mapping values are not allowed") {
        "a value containing `: ` must be quoted, e.g. `description: \"Use when: ...\"`"
    } else if message.contains("found character that cannot start any token") {
        "quote the value; characters such as `@` and `` ` `` cannot start a plain YAML value"
    } else if message.contains("tab") {
        "indent with spaces; YAML does not allow tabs for indentation"
    } else {
        "fix the YAML syntax; quote values that contain `:`, `#`, `[`, `{` or start with a symbol"
    };
    Diagnostic::new(
        Code::YamlSyntax,
        file,
        format!("invalid YAML in the frontmatter: {message}"),
    )
    .at(pos)
    .help(help)
}
