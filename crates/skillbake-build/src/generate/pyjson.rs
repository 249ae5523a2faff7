//! JSON string escaping exactly as Python's `json.dumps(..., ensure_ascii=False)` writes it:
//! `"` `\` and control characters escaped (`\n`, `\r`, `\t`, `\b`, `\f`, else `\u00xx` in lower
//! case), everything else (non-ASCII included) written raw.

use std::fmt::Write as _;

/// Appends `s`, escaped, to `out` (without surrounding quotes).
pub fn escape_into(out: &mut String, s: &str) {
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let esc: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
}

/// `s` escaped.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    escape_into(&mut out, s);
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn matches_python() {
        // json.dumps("a\"b\\c\n\r\t\b\f\x01\x1f\x7f é 中", ensure_ascii=False)
        assert_eq!(
            escape("a\"b\\c\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f} é 中"),
            "a\\\"b\\\\c\\n\\r\\t\\b\\f\\u0001\\u001f\u{7f} é 中"
        );
    }
}
