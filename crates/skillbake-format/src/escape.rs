//! Escaping exactly as the Python reference implementations do.

/// Appends `s` to `out` as the inside of a JSON string, escaped exactly as Python's
/// `json.dumps(..., ensure_ascii=False)` does: `"`, `\`, and control characters (`\n`, `\r`,
/// `\t`, `\b`, `\f`, else `\u00xx` in lower case); everything else (non-ASCII included) raw.
pub fn json_into(out: &mut String, s: &str) {
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

/// `s` escaped by [`json_into`].
pub fn json(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    json_into(&mut out, s);
    out
}

/// Appends `s` escaped as Python's `html.escape(s, quote=True)` does: `&`, `<`, `>`, `"`, `'`.
pub fn html_into(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
}

/// `s` escaped by [`html_into`].
pub fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    html_into(&mut out, s);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_matches_python() {
        assert_eq!(
            json("a\"b\\c\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f} é 中"),
            "a\\\"b\\\\c\\n\\r\\t\\b\\f\\u0001\\u001f\u{7f} é 中"
        );
    }

    #[test]
    fn html_matches_python() {
        assert_eq!(
            html("<a href=\"x\">Tom & 'Jerry'</a>"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#x27;Jerry&#x27;&lt;/a&gt;"
        );
    }
}
