//! `control-character`: frontmatter text reaches system prompts, tool definitions and terminals,
//! where a control character (a terminal escape sequence, BEL, NUL, a C1 control) rewrites what
//! a person or a model sees. Tab, line feed and carriage return are text; every other character
//! of Unicode's `Cc` category in any string of the frontmatter is an error, reported at its
//! position in `SKILL.md` (raw, or written as a YAML escape such as `\e` or `\x1b`).

use super::PackCtx;
use crate::diagnostic::{Code, Diagnostic};
use crate::parse::key_text;
use yaml_serde::Value;

/// Whether `c` is a control character that frontmatter text may not hold.
pub fn is_forbidden(c: char) -> bool {
    c.is_control() && !matches!(c, '\t' | '\n' | '\r')
}

/// Checks every string value (and key) of the frontmatter.
pub fn check(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) {
    let Some(fm) = ctx.md.frontmatter.as_ref() else {
        return;
    };
    for (k, v) in &fm.mapping {
        let key = key_text(k);
        let mut found: Vec<char> = Vec::new();
        collect(k, &mut found);
        collect(v, &mut found);
        found.dedup();
        let Some(&c) = found.first() else { continue };
        let pos = spellings(c)
            .iter()
            .filter_map(|s| {
                let loc = ctx.md.key(&key)?;
                let region = ctx.md.text.get(loc.offset..loc.end)?;
                region
                    .find(s.as_str())
                    .map(|i| (loc.offset + i, s.chars().count()))
            })
            .min()
            .map(|(offset, len)| ctx.md.index().position(offset, len))
            .or_else(|| ctx.md.key_pos(&key));
        diags.push(
            Diagnostic::new(
                Code::ControlCharacter,
                &ctx.file,
                format!(
                    "`{key}` holds the control character U+{:04X} ({}); it would reach prompts and terminals as is",
                    c as u32,
                    name(c)
                ),
            )
            .at(pos)
            .help("remove it; write line breaks as YAML line breaks, and no terminal escapes or bells in metadata"),
        );
    }
}

fn collect(v: &Value, out: &mut Vec<char>) {
    match v {
        Value::String(s) => out.extend(s.chars().filter(|c| is_forbidden(*c))),
        Value::Sequence(items) => items.iter().for_each(|i| collect(i, out)),
        Value::Mapping(m) => m.iter().for_each(|(k, v)| {
            collect(k, out);
            collect(v, out);
        }),
        Value::Tagged(t) => collect(&t.value, out),
        _ => {}
    }
}

/// The ways a YAML file can spell `c`: the character itself and its escapes.
fn spellings(c: char) -> Vec<String> {
    let n = c as u32;
    let mut v = vec![
        c.to_string(),
        format!("\\x{n:02x}"),
        format!("\\x{n:02X}"),
        format!("\\u{n:04x}"),
        format!("\\u{n:04X}"),
        format!("\\U{n:08x}"),
        format!("\\U{n:08X}"),
    ];
    let short = match c {
        '\0' => Some("\\0"),
        '\u{7}' => Some("\\a"),
        '\u{8}' => Some("\\b"),
        '\u{b}' => Some("\\v"),
        '\u{c}' => Some("\\f"),
        '\u{1b}' => Some("\\e"),
        '\u{85}' => Some("\\N"),
        _ => None,
    };
    v.extend(short.map(str::to_string));
    v
}

fn name(c: char) -> &'static str {
    match c {
        '\0' => "NUL",
        '\u{7}' => "BEL, the terminal bell",
        '\u{8}' => "BS, backspace",
        '\u{1b}' => "ESC, which starts terminal escape sequences",
        '\u{7f}' => "DEL",
        '\u{85}' => "NEL",
        '\u{9b}' => "CSI, a terminal escape sequence",
        c if (c as u32) < 0x20 => "a C0 control character",
        _ => "a C1 control character",
    }
}
