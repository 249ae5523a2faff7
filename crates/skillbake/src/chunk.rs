//! DB-GPT's chunk protocol: every `load_skill` reply is built here, byte-compatible with
//! Python's `json.dumps(obj, ensure_ascii=False)`:
//!
//! ```text
//! {"chunks": [{"output_type": "text", "content": "..."}, ...]}
//! ```
//!
//! The body reply is precomputed at build time, whole, for the pack's own `SKILL.md` path (one
//! copy); for any other path that names the body, its fixed parts (`head` and `tail`, sub-ranges
//! of the same text) are copied around the escaped `file_path`.

use skillbake_format::chunks::{CLOSE, CONTENT, OPEN, SEPARATOR};
use std::fmt::Write as _;

/// Appends `s` to `out` as the inside of a JSON string, escaped exactly as Python's
/// `json.dumps(..., ensure_ascii=False)` does (see `skillbake_format::escape::json_into`).
pub use skillbake_format::escape::json_into as escape_into;

/// The reply carrying the skill's body (the common case): `whole`, the reply precomputed for
/// the pack's own `SKILL.md` path, when `file_path` is that path (one copy); else the reply's
/// `head` and `tail` around the escaped `file_path`.
pub(crate) fn body_reply(
    out: &mut String,
    whole: Option<&str>,
    head: &str,
    tail: &str,
    file_path: &str,
) {
    if let Some(whole) = whole {
        out.push_str(whole);
        return;
    }
    out.reserve(head.len() + file_path.len() + tail.len());
    out.push_str(head);
    escape_into(out, file_path);
    out.push_str(tail);
}

/// What a file reply carries.
pub(crate) enum Content<'a> {
    /// A text file: its chunk's `output_type` and its text.
    Text { output_type: &'a str, text: &'a str },
    /// A binary file, named but not shown: its path in the pack and its size.
    Binary { path: &'a str, size: usize },
}

/// The reply carrying one embedded file of the skill instead of the body, after the skill's
/// reply `head`.
pub(crate) fn file_reply(out: &mut String, head: &str, file_path: &str, content: Content<'_>) {
    out.push_str(head);
    escape_into(out, file_path);
    out.push_str(SEPARATOR);
    match content {
        Content::Text { output_type, text } => {
            out.reserve(text.len() + 24);
            out.push_str(output_type);
            out.push_str(CONTENT);
            escape_into(out, text);
        }
        Content::Binary { path, size } => {
            out.push_str(r#"text", "content": "Binary file '"#);
            escape_into(out, path);
            out.push_str("' (");
            let _ = write!(out, "{size}");
            out.push_str(" bytes) is not shown as text");
        }
    }
    out.push_str(CLOSE);
}

/// `File '<file_path>' not found in skill '<name>'. Available files: ...`
pub(crate) fn file_not_found<'a>(
    out: &mut String,
    skill_name: &str,
    file_path: &str,
    files: impl Iterator<Item = &'a str>,
) {
    out.push_str(OPEN);
    out.push_str("File '");
    escape_into(out, file_path);
    out.push_str("' not found in skill '");
    escape_into(out, skill_name);
    out.push_str("'. Available files: ");
    for (i, f) in files.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        escape_into(out, f);
    }
    out.push_str(CLOSE);
}

/// DB-GPT's `Skill '<name>' not found`.
pub(crate) fn skill_not_found(out: &mut String, skill_name: &str) {
    // One allocation: the reply's length is known up to escapes.
    out.reserve(OPEN.len() + 19 + skill_name.len() + CLOSE.len());
    out.push_str(OPEN);
    out.push_str("Skill '");
    escape_into(out, skill_name);
    out.push_str("' not found");
    out.push_str(CLOSE);
}
