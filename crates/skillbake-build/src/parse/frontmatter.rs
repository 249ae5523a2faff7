//! `SKILL.md` parsing: UTF-8 check, line-based frontmatter split, YAML parse, body extraction.
//! Where each key sits is `parse/keys.rs`; how a YAML error becomes a diagnostic is
//! `parse/yaml_error.rs` (`yaml-syntax`, `yaml-limit`, `duplicate-key`).
//!
//! Rules that live here: `invalid-utf8`, `frontmatter-missing`, `frontmatter-unterminated`,
//! `frontmatter-empty`, `frontmatter-not-mapping`, `yaml-merge-key`, `frontmatter-dashes` (where
//! DB-GPT's substring split disagrees with the line-based one), `byte-order-mark`.
//!
//! The split is line based and never looks for the substring `---`: after an optional UTF-8 BOM,
//! the first line (trailing whitespace trimmed) must be exactly `---`, and the frontmatter ends at
//! the first later line that is exactly `---`. Lines end at `\n`, `\r\n` or a lone `\r`.

pub(crate) use super::keys::strip_comment;
use super::keys::{find_token, scan_keys};
use super::lines::lines;
use super::yaml_error::yaml_error;
use crate::diagnostic::{Code, Diagnostic, Position};
use crate::source::LineIndex;

pub use super::keys::KeyLoc;
use yaml_serde::{Mapping, Value};

const BOM: &str = "\u{feff}";

/// The parsed frontmatter of one `SKILL.md`.
#[derive(Debug, Clone)]
pub struct Frontmatter {
    /// The top-level mapping, in source order.
    pub mapping: Mapping,
    /// Where each top-level key sits in the file.
    pub keys: Vec<KeyLoc>,
    /// The byte range of the YAML in the file: the lines between the two `---` lines.
    pub span: std::ops::Range<usize>,
}

/// A `SKILL.md` split into frontmatter and body.
#[derive(Debug, Clone)]
pub struct SkillMd {
    /// The file's text (BOM included, if any).
    pub text: String,
    /// The frontmatter, when it parsed.
    pub frontmatter: Option<Frontmatter>,
    /// Byte offset of the body (the text after the closing `---` line).
    pub body_offset: usize,
    /// The body as DB-GPT serves it: universal newlines, leading/trailing whitespace stripped.
    pub body: String,
    /// Byte offsets of the line starts of `text` (see [`SkillMd::index`]).
    line_starts: Vec<usize>,
}

impl SkillMd {
    /// The line index of the file's text, built once at parse time.
    pub fn index(&self) -> LineIndex<'_> {
        LineIndex::with_starts(&self.text, &self.line_starts)
    }

    /// Text of the body as written in the file.
    pub fn raw_body(&self) -> &str {
        &self.text[self.body_offset.min(self.text.len())..]
    }

    /// Location of a top-level key.
    pub fn key(&self, key: &str) -> Option<&KeyLoc> {
        self.frontmatter
            .as_ref()
            .and_then(|fm| fm.keys.iter().find(|k| k.key == key))
    }

    /// Position of a top-level key (underlining the key).
    pub fn key_pos(&self, key: &str) -> Option<Position> {
        let loc = self.key(key)?;
        Some(self.index().position(loc.offset, key.chars().count()))
    }

    /// Position of a top-level key's value: the text after `key:` on its line, else the key.
    pub fn value_pos(&self, key: &str) -> Option<Position> {
        let loc = self.key(key)?;
        let idx = self.index();
        let rest = &self.text[loc.value_offset..loc.end];
        let line = rest.split(['\n', '\r']).next().unwrap_or("");
        let trimmed = strip_comment(line).trim_end();
        if trimmed.is_empty() {
            // Block value on the following lines: point at its first non-blank text.
            let after = &self.text[loc.value_offset..loc.end];
            if let Some(rel) = after
                .char_indices()
                .find(|&(_, c)| !c.is_whitespace())
                .map(|(i, _)| i)
            {
                let start = loc.value_offset + rel;
                let len = self.text[start..loc.end]
                    .split(['\n', '\r'])
                    .next()
                    .unwrap_or("")
                    .trim_end()
                    .chars()
                    .count();
                return Some(idx.position(start, len));
            }
            return Some(idx.position(loc.offset, key.chars().count()));
        }
        Some(idx.position(loc.value_offset, trimmed.chars().count()))
    }

    /// Position of the first occurrence of `needle` within the lines of top-level key `key`
    /// (after the key itself), falling back to the value's position.
    pub fn find_in_value(&self, key: &str, needle: &str) -> Option<Position> {
        let loc = self.key(key)?;
        let region = &self.text[loc.value_offset..loc.end];
        match find_token(region, needle) {
            Some(rel) => Some(
                self.index()
                    .position(loc.value_offset + rel, needle.chars().count()),
            ),
            None => self.value_pos(key),
        }
    }
}

/// `byte-order-mark`: the file starts with U+FEFF, which skillbake skips and DB-GPT does not.
fn byte_order_mark(file: &str) -> Diagnostic {
    Diagnostic::new(
        Code::ByteOrderMark,
        file,
        "`SKILL.md` starts with a UTF-8 byte order mark",
    )
    .at(Some(Position::span(1, 1, 1)))
    .help("save the file as UTF-8 without a byte order mark: DB-GPT keeps the mark and refuses a file that does not start with `---`")
    .with_fix(crate::diagnostic::Fix::replace(
        "remove the byte order mark",
        0,
        BOM.len(),
        "",
    ))
}

/// The body as DB-GPT sees it: `\r\n` and lone `\r` become `\n` (Python's universal newlines),
/// then leading and trailing whitespace is stripped (Python's `str.strip()`).
pub fn normalize_body(raw: &str) -> String {
    if memchr::memchr(b'\r', raw.as_bytes()).is_none() {
        return skillbake_format::python::strip(raw).to_string();
    }
    let unified = raw.replace("\r\n", "\n").replace('\r', "\n");
    skillbake_format::python::strip(&unified).to_string()
}

/// Decodes and parses a `SKILL.md`. `file` is the path used in diagnostics. Every problem found is
/// appended to `diags`; `None` means the file is not UTF-8.
pub fn parse(bytes: &[u8], file: &str, diags: &mut Vec<Diagnostic>) -> Option<SkillMd> {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            diags.push(not_utf8(bytes, e, file));
            return None;
        }
    };
    let start = if text.starts_with(BOM) { BOM.len() } else { 0 };
    if start > 0 {
        diags.push(byte_order_mark(file));
    }
    let idx = LineIndex::new(text);
    let mut all = lines(text, start);
    let first = all.next();
    let opens = first.is_some_and(|l| text[l.start..l.end].trim_end() == "---");
    let Some(first) = first.filter(|_| opens) else {
        diags.push(missing(text, start, &idx, file));
        return Some(SkillMd {
            body: normalize_body(&text[start..]),
            body_offset: start,
            text: text.to_string(),
            frontmatter: None,
            line_starts: idx.into_starts(),
        });
    };
    let mut near_miss = None;
    let closing = all.find(|l| {
        let content = &text[l.start..l.end];
        if content != "---" && near_miss.is_none() && content.trim() == "---" {
            near_miss = Some(*l);
        }
        content == "---"
    });
    let Some(closing) = closing else {
        let mut d = Diagnostic::new(
            Code::FrontmatterUnterminated,
            file,
            "the frontmatter opened on line 1 is never closed",
        )
        .at(Some(idx.position(first.start, 3)));
        d = match near_miss {
            Some(l) => {
                let p = idx.position(l.start, text[l.start..l.end].chars().count());
                d.related(
                    file,
                    Some(p),
                    "this line is not a closing line: it must be exactly `---`, without spaces",
                )
                .help(format!(
                    "remove the whitespace around `---` on line {}",
                    p.line
                ))
            }
            None => d.help("add a line that is exactly `---` after the last frontmatter field"),
        };
        diags.push(d);
        return Some(SkillMd {
            body: String::new(),
            body_offset: text.len(),
            text: text.to_string(),
            frontmatter: None,
            line_starts: idx.into_starts(),
        });
    };
    let fm_start = first.next;
    let fm_text = &text[fm_start..closing.start];
    let body_offset = closing.next;
    let body = normalize_body(&text[body_offset..]);
    if let Some(at) = fm_text.find("---").map(|o| fm_start + o) {
        diags.push(dbgpt_split(text, at, closing.start, &idx, file));
    }
    let frontmatter = parse_yaml(text, fm_start, fm_text, &idx, file, diags);
    Some(SkillMd {
        text: text.to_string(),
        frontmatter,
        body_offset,
        body,
        line_starts: idx.into_starts(),
    })
}

fn not_utf8(bytes: &[u8], e: std::str::Utf8Error, file: &str) -> Diagnostic {
    let offset = e.valid_up_to();
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Diagnostic::new(
            Code::InvalidUtf8,
            file,
            "SKILL.md is encoded as UTF-16; it must be UTF-8",
        )
        .at(Some(Position::point(1, 1)))
        .help("re-save the file as UTF-8");
    }
    let valid = std::str::from_utf8(&bytes[..offset]).unwrap_or_default();
    let pos = LineIndex::new(valid).position(offset, 1);
    Diagnostic::new(
        Code::InvalidUtf8,
        file,
        format!(
            "SKILL.md is not valid UTF-8: byte 0x{:02X} at byte offset {offset} starts no UTF-8 character",
            bytes.get(offset).copied().unwrap_or(0)
        ),
    )
    .at(Some(pos))
    .help("re-save the file as UTF-8 (not Latin-1, GBK or another legacy encoding)")
}

fn missing(text: &str, start: usize, idx: &LineIndex<'_>, file: &str) -> Diagnostic {
    let d = Diagnostic::new(
        Code::FrontmatterMissing,
        file,
        "SKILL.md has no YAML frontmatter: its first line is not `---`",
    )
    .at(Some(idx.position(start, 0)));
    let opener = lines(text, start)
        .enumerate()
        .find(|(_, l)| text[l.start..l.end].trim_end() == "---");
    match opener {
        Some((n, _)) if text[start..].trim_start().starts_with("---") => d.help(format!(
            "remove the {n} blank line(s) before the opening `---`: it must be the very first line"
        )),
        _ => d.help(
            "start the file with `---`, then `name: ...` and `description: ...`, then a line `---`",
        ),
    }
}

/// Parses the frontmatter YAML; positions are shifted to the lines of the whole file.
fn parse_yaml(
    text: &str,
    fm_start: usize,
    fm_text: &str,
    idx: &LineIndex<'_>,
    file: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<Frontmatter> {
    let fm_pos = idx.position(fm_start, 0);
    let line_shift = fm_pos.line - 1;
    let is_blank = lines(fm_text, 0).all(|l| {
        let t = fm_text[l.start..l.end].trim();
        t.is_empty() || t.starts_with('#')
    });
    if is_blank {
        diags.push(
            Diagnostic::new(Code::FrontmatterEmpty, file, "the frontmatter is empty")
                .at(Some(Position::span(1, 1, 3)))
                .help("add at least `name: <folder name>` and `description: <what the skill does and when to use it>`"),
        );
        return None;
    }
    let value = match yaml_serde::from_str::<Value>(fm_text) {
        Ok(v) => v,
        Err(err) => {
            diags.push(yaml_error(
                &err, text, fm_start, fm_text, line_shift, idx, file,
            ));
            return None;
        }
    };
    let mapping = match value {
        Value::Mapping(m) => m,
        Value::Null => {
            diags.push(
                Diagnostic::new(Code::FrontmatterEmpty, file, "the frontmatter is empty")
                    .at(Some(fm_pos))
                    .help("add at least `name:` and `description:`"),
            );
            return None;
        }
        other => {
            let kind = match other {
                Value::Sequence(_) => "a list",
                Value::String(_) => "a plain string",
                Value::Number(_) => "a number",
                Value::Bool(_) => "a boolean",
                _ => "not a mapping",
            };
            diags.push(
                Diagnostic::new(
                    Code::FrontmatterNotMapping,
                    file,
                    format!("the frontmatter is {kind}, not a mapping of keys to values"),
                )
                .at(Some(fm_pos))
                .help("write one `key: value` per line, e.g. `name: my-skill`"),
            );
            return None;
        }
    };
    if has_merge_key(&Value::Mapping(mapping.clone())) {
        let at = merge_key_offset(fm_text).map(|o| idx.position(fm_start + o, 2));
        diags.push(
            Diagnostic::new(
                Code::YamlMergeKey,
                file,
                "YAML merge keys (`<<: *anchor`) are not supported: the merged fields would be silently dropped",
            )
            .at(at.or(Some(fm_pos)))
            .help("write the fields out in this mapping instead of merging them from an anchor"),
        );
        return None;
    }
    let span = fm_start..fm_start + fm_text.len();
    let keys = scan_keys(text, span.start, span.end);
    Some(Frontmatter {
        mapping,
        keys,
        span,
    })
}

/// `frontmatter-dashes`: DB-GPT splits `SKILL.md` at the first `---` substring after the opening
/// one (`text.strip().split("---", 2)`), so a `---` inside the frontmatter (in a value, a key or a
/// comment) ends DB-GPT's frontmatter there and starts its body with the rest.
fn dbgpt_split(
    text: &str,
    at: usize,
    closing: usize,
    idx: &LineIndex<'_>,
    file: &str,
) -> Diagnostic {
    let pos = idx.position(at, 3);
    let closing_line = idx.position(closing, 3).line;
    Diagnostic::new(
        Code::FrontmatterDashes,
        file,
        format!(
            "`---` inside the frontmatter: DB-GPT splits SKILL.md at the first `---` anywhere, so it would end the frontmatter here (line {}, not line {closing_line}) and serve `{}` and what follows as the start of the body",
            pos.line,
            text[at + 3..].lines().next().unwrap_or("").trim()
        ),
    )
    .at(Some(pos))
    .help("write it without three dashes in a row (`—`, `--`, or `- - -`); quoting does not help, DB-GPT splits the raw text")
}

/// Whether a mapping anywhere in `v` has the merge key `<<`.
fn has_merge_key(v: &Value) -> bool {
    match v {
        Value::Mapping(m) => m
            .iter()
            .any(|(k, v)| matches!(k, Value::String(s) if s == "<<") || has_merge_key(v)),
        Value::Sequence(items) => items.iter().any(has_merge_key),
        Value::Tagged(t) => has_merge_key(&t.value),
        _ => false,
    }
}

/// Byte offset of the first `<<` used as a key (`<<:` or `<< :`) in the frontmatter text.
fn merge_key_offset(fm: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(rel) = fm[from..].find("<<") {
        let at = from + rel;
        if fm[at + 2..]
            .trim_start_matches([' ', '\t'])
            .starts_with(':')
        {
            return Some(at);
        }
        from = at + 2;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(src: &str) -> (Option<SkillMd>, Vec<Diagnostic>) {
        let mut d = Vec::new();
        let md = parse(src.as_bytes(), "SKILL.md", &mut d);
        (md, d)
    }

    fn codes(d: &[Diagnostic]) -> Vec<&'static str> {
        d.iter().map(|d| d.code.as_str()).collect()
    }

    #[test]
    fn splits_on_lines_never_on_substrings() {
        let (md, d) = run("---\nname: a\ndescription: a --- b\n---\n\n# Body ---\n");
        // Served as written; DB-GPT's substring split would differ, which is reported.
        assert_eq!(codes(&d), ["frontmatter-dashes"]);
        let md = md.unwrap_or_else(|| unreachable!());
        let fm = md.frontmatter.as_ref().map(|f| f.mapping.clone());
        let desc = fm.and_then(|m| m.get("description").cloned());
        assert_eq!(desc, Some(Value::String("a --- b".into())));
        assert_eq!(md.body, "# Body ---");
    }

    #[test]
    fn accepts_bom_and_crlf_and_normalizes_body() {
        let (md, d) = run("\u{feff}---\r\nname: a\r\ndescription: d\r\n---\r\n\r\n  line1\r\nline2\rline3 \u{1f}\n");
        assert_eq!(codes(&d), ["byte-order-mark"]);
        let fix = d[0].fix.as_deref().unwrap();
        assert_eq!((fix.edits[0].start, fix.edits[0].end), (0, 3));
        assert_eq!(md.map(|m| m.body), Some("line1\nline2\nline3".to_string()));
    }

    #[test]
    fn yaml_errors_use_file_lines() {
        let (_, d) = run("---\nname: a\ndescription: Use when: x\n---\nbody\n");
        assert_eq!(codes(&d), ["yaml-syntax"]);
        assert_eq!((d[0].line, d[0].column), (Some(3), Some(22)));
    }

    #[test]
    fn duplicate_keys_point_at_the_second() {
        let (_, d) = run("---\nname: a\ndescription: d\nname: b\n---\nbody\n");
        assert_eq!(codes(&d), ["duplicate-key"]);
        assert_eq!((d[0].line, d[0].column), (Some(4), Some(1)));
        let (_, d) = run("---\nname: a\nconfig:\n  x: 1\n  x: 2\n---\nbody\n");
        assert_eq!(codes(&d), ["duplicate-key"]);
        assert_eq!((d[0].line, d[0].column), (Some(5), Some(3)));
    }

    #[test]
    fn structural_errors() {
        assert_eq!(codes(&run("# title\n").1), ["frontmatter-missing"]);
        assert_eq!(
            codes(&run("---\nname: a\n").1),
            ["frontmatter-unterminated"]
        );
        let (_, d) = run("---\nname: a\n--- \nbody");
        assert_eq!(codes(&d), ["frontmatter-unterminated"]);
        assert_eq!(d[0].related.first().and_then(|r| r.line), Some(3));
        assert_eq!(
            codes(&run("---\n# nothing\n---\nbody").1),
            ["frontmatter-empty"]
        );
        assert_eq!(
            codes(&run("---\n- a\n---\nbody").1),
            ["frontmatter-not-mapping"]
        );
        let deep = format!("---\na: {}\n---\nb", "[".repeat(200));
        assert_eq!(codes(&run(&deep).1), ["yaml-limit"]);
        assert_eq!(
            codes(&run_bytes(b"---\nname: \xff\n---\n")),
            ["invalid-utf8"]
        );
    }

    fn run_bytes(b: &[u8]) -> Vec<Diagnostic> {
        let mut d = Vec::new();
        let _ = parse(b, "SKILL.md", &mut d);
        d
    }

    #[test]
    fn key_positions() {
        let (md, _) = run("---\nname: a\n\"description\": x # c\ntags:\n  - one\n  - two\n---\nb");
        let md = md.unwrap_or_else(|| unreachable!());
        assert_eq!(md.key_pos("description"), Some(Position::span(3, 1, 11)));
        assert_eq!(md.value_pos("description"), Some(Position::span(3, 16, 1)));
        assert_eq!(md.value_pos("tags"), Some(Position::span(5, 3, 5)));
        assert_eq!(
            md.find_in_value("tags", "two"),
            Some(Position::span(6, 5, 3))
        );
    }
}
