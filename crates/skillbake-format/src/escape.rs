//! Escaping exactly as the Python reference implementations do.

/// Where escaped text goes: a `String`, or a counter that measures text without building it
/// (the catalog's budget search measures thousands of entries without allocating).
pub(crate) trait Sink: core::fmt::Write {
    /// Appends `s`.
    fn put(&mut self, s: &str);
}

impl Sink for String {
    fn put(&mut self, s: &str) {
        self.push_str(s);
    }
}

/// Counts the characters and bytes of what would be written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Count {
    /// Unicode scalar values.
    pub(crate) chars: usize,
    /// UTF-8 bytes.
    pub(crate) bytes: usize,
}

impl Sink for Count {
    fn put(&mut self, s: &str) {
        self.chars += s.chars().count();
        self.bytes += s.len();
    }
}

impl core::fmt::Write for Count {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        self.put(s);
        Ok(())
    }
}

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
                out.push_str("\\u00");
                out.push(hex_digit(b >> 4));
                out.push(hex_digit(b & 0xf));
            }
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
}

/// The lower-case hex digit of `nibble` (0–15).
fn hex_digit(nibble: u8) -> char {
    char::from_digit(u32::from(nibble), 16).unwrap_or('0')
}

/// `s` escaped by [`json_into`].
pub fn json(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    json_into(&mut out, s);
    out
}

/// Appends `s` escaped as Python's `html.escape(s, quote=True)` does: `&`, `<`, `>`, `"`, `'`.
pub fn html_into(out: &mut String, s: &str) {
    html_to(out, s);
}

/// [`html_into`] into any sink.
pub(crate) fn html_to(out: &mut impl Sink, s: &str) {
    let mut start = 0;
    for (i, c) in s.char_indices() {
        let escaped = match c {
            '&' => "&amp;",
            '<' => "&lt;",
            '>' => "&gt;",
            '"' => "&quot;",
            '\'' => "&#x27;",
            _ => continue,
        };
        out.put(s.get(start..i).unwrap_or(""));
        out.put(escaped);
        start = i + c.len_utf8();
    }
    out.put(s.get(start..).unwrap_or(""));
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
