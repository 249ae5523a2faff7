//! DB-GPT's chunk protocol: every `load_skill` reply is built here, byte-compatible with
//! Python's `json.dumps(obj, ensure_ascii=False)`:
//!
//! ```text
//! {"chunks": [{"output_type": "text", "content": "..."}, ...]}
//! ```
//!
//! The body reply's fixed parts are precomputed at build time (`head` and `tail` of the skill
//! record); only the echoed `file_path` is escaped per call.

use crate::registry::{File, FileKind, Skill};

const OPEN: &str = r#"{"chunks": [{"output_type": "text", "content": ""#;
const CLOSE: &str = r#""}]}"#;
const SEPARATOR: &str = r#""}, {"output_type": "text", "content": "---"}, {"output_type": ""#;

/// Appends `s` to `out` as the inside of a JSON string, escaped exactly as Python's
/// `json.dumps(..., ensure_ascii=False)` does: `"`, `\`, and control characters (`\n`, `\r`,
/// `\t`, `\b`, `\f`, else `\u00xx`); everything else raw.
pub fn escape_into(out: &mut String, s: &str) {
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b >= 0x20 && b != b'"' && b != b'\\' {
            continue;
        }
        out.push_str(&s[start..i]);
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 0xf)]));
            }
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
}

/// The reply carrying the skill's body (the common case): three copies.
pub(crate) fn body_reply(out: &mut String, skill: &Skill<'_>, file_path: &str) {
    let (head, tail) = skill.chunk_parts();
    out.reserve(head.len() + file_path.len() + tail.len());
    out.push_str(head);
    escape_into(out, file_path);
    out.push_str(tail);
}

/// The reply carrying one embedded file of the skill instead of the body.
pub(crate) fn file_reply(out: &mut String, skill: &Skill<'_>, file_path: &str, file: &File) {
    let (head, _) = skill.chunk_parts();
    out.push_str(head);
    escape_into(out, file_path);
    out.push_str(SEPARATOR);
    match file.text() {
        Some(text) if file.kind() != FileKind::Binary => {
            out.reserve(text.len() + 24);
            out.push_str(file.kind().output_type());
            out.push_str(r#"", "content": ""#);
            escape_into(out, text);
        }
        _ => {
            out.push_str(r#"text", "content": "Binary file '"#);
            escape_into(out, file.path());
            out.push_str("' (");
            out.push_str(&file.bytes().len().to_string());
            out.push_str(" bytes) is not shown as text");
        }
    }
    out.push_str(CLOSE);
}

/// `File '<file_path>' not found in skill '<name>'. Available files: ...`
pub(crate) fn file_not_found(out: &mut String, skill: &Skill<'_>, file_path: &str) {
    out.push_str(OPEN);
    out.push_str("File '");
    escape_into(out, file_path);
    out.push_str("' not found in skill '");
    escape_into(out, skill.name());
    out.push_str("'. Available files: ");
    for (i, f) in skill.files().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        escape_into(out, f.path());
    }
    out.push_str(CLOSE);
}

/// DB-GPT's `Skill '<name>' not found`.
pub(crate) fn skill_not_found(out: &mut String, skill_name: &str) {
    out.push_str(OPEN);
    out.push_str("Skill '");
    escape_into(out, skill_name);
    out.push_str("' not found");
    out.push_str(CLOSE);
}

#[cfg(test)]
mod tests {
    use super::escape_into;

    #[test]
    fn escapes_like_python() {
        let mut s = String::new();
        escape_into(&mut s, "a\"b\\c\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f} é 中");
        assert_eq!(s, "a\\\"b\\\\c\\n\\r\\t\\b\\f\\u0001\\u001f\u{7f} é 中");
    }
}
