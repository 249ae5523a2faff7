//! Escaping exactly as the Python reference implementations do.

/// Bytes that `json_into` escapes: control characters, `"` and `\`.
#[inline]
fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Index of the first byte at or after `from` that needs escaping (`bytes.len()` when none):
/// eight bytes at a time, then byte by byte inside the word that holds a candidate.
#[inline]
fn next_escape(bytes: &[u8], from: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut i = from;
    while let Some(word) = bytes.get(i..i + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let w = u64::from_le_bytes(w);
        // A byte below 0x20, or equal to `"` or `\`, sets its high bit in at least one of these
        // (borrows can only add candidates above a real one, never hide one).
        let control = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
        let q = w ^ (ONES * u64::from(b'"'));
        let quote = q.wrapping_sub(ONES) & !q & HIGH;
        let s = w ^ (ONES * u64::from(b'\\'));
        let backslash = s.wrapping_sub(ONES) & !s & HIGH;
        if control | quote | backslash != 0 {
            break;
        }
        i += 8;
    }
    while bytes.get(i).is_some_and(|&b| !needs_escape(b)) {
        i += 1;
    }
    i
}

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
/// Runs with nothing to escape are copied whole (a string that needs no escaping is one copy).
pub fn json_into(out: &mut String, s: &str) {
    let bytes = s.as_bytes();
    let mut i = next_escape(bytes, 0);
    if i == bytes.len() {
        out.push_str(s);
        return;
    }
    let mut start = 0;
    while let Some(&b) = bytes.get(i) {
        // `start` and `i` sit next to ASCII bytes: both are character boundaries.
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
        i = next_escape(bytes, start);
    }
    out.push_str(&s[start..]);
}

/// True when [`json_into`] would copy `s` unchanged.
pub fn json_is_plain(s: &str) -> bool {
    next_escape(s.as_bytes(), 0) == s.len()
}

/// Appends the text that the inside of a JSON string `s` stands for (the inverse of
/// [`json_into`], and of any JSON escaping: `\/` and `\uXXXX` with surrogate pairs included).
/// Returns `false`, with `out` holding what was decoded so far, when `s` is not a valid string
/// body (a lone `\`, an unknown escape, a bad or unpaired `\u`, a raw `"` or control character).
pub fn json_unescape_into(out: &mut String, s: &str) -> bool {
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'"' || b < 0x20 {
            return false;
        }
        if b != b'\\' {
            i += 1;
            continue;
        }
        out.push_str(&s[start..i]);
        let Some(&e) = bytes.get(i + 1) else {
            return false;
        };
        i += 2;
        match e {
            b'"' => out.push('"'),
            b'\\' => out.push('\\'),
            b'/' => out.push('/'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{c}'),
            b'u' => {
                let Some(hi) = hex4(bytes, i) else {
                    return false;
                };
                i += 4;
                let code = if (0xd800..0xdc00).contains(&hi) {
                    let lo = match (bytes.get(i), bytes.get(i + 1)) {
                        (Some(b'\\'), Some(b'u')) => hex4(bytes, i + 2),
                        _ => None,
                    };
                    let Some(lo) = lo.filter(|lo| (0xdc00..0xe000).contains(lo)) else {
                        return false;
                    };
                    i += 6;
                    0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                } else {
                    hi
                };
                let Some(c) = char::from_u32(code) else {
                    return false;
                };
                out.push(c);
            }
            _ => return false,
        }
        start = i;
    }
    out.push_str(&s[start..]);
    true
}

/// The four hexadecimal digits at `bytes[at..at + 4]`.
fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = bytes.get(at..at + 4)?;
    let mut v = 0u32;
    for &d in digits {
        v = v * 16 + char::from(d).to_digit(16)?;
    }
    Some(v)
}

/// The text the inside of a JSON string `s` stands for (see [`json_unescape_into`]).
pub fn json_unescape(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    json_unescape_into(&mut out, s).then_some(out)
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
    fn fast_path_finds_every_escape_at_every_offset() {
        for special in ['"', '\\', '\n', '\u{0}', '\u{1f}'] {
            for len in 0..40 {
                for at in 0..len {
                    let mut s: String = "abcdefghij".repeat(4).chars().take(len).collect();
                    s.replace_range(at..at + 1, &special.to_string());
                    let mut slow = String::new();
                    for c in s.chars() {
                        match c {
                            '"' => slow.push_str("\\\""),
                            '\\' => slow.push_str("\\\\"),
                            '\n' => slow.push_str("\\n"),
                            c if (c as u32) < 0x20 => {
                                slow.push_str(&format!("\\u{:04x}", c as u32))
                            }
                            c => slow.push(c),
                        }
                    }
                    assert_eq!(json(&s), slow, "{s:?}");
                    assert!(!json_is_plain(&s));
                    assert_eq!(json_unescape(&json(&s)).as_deref(), Some(s.as_str()));
                }
            }
        }
        assert!(json_is_plain(
            "plain text, é 中 \u{7f} and more than eight bytes"
        ));
        assert!(json_is_plain(""));
    }

    #[test]
    fn unescape_inverts_json_and_rejects_what_is_not_a_string_body() {
        let s = "a\"b\\c\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f} é 中 😀";
        assert_eq!(json_unescape(&json(s)).as_deref(), Some(s));
        assert_eq!(json_unescape("\\ud83d\\ude00\\/").as_deref(), Some("😀/"));
        for bad in [
            "\\", "\\x", "\\u12", "\\ud83d", "\\ud83dx", "\\udc00", "a\"b", "\n",
        ] {
            assert_eq!(json_unescape(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn html_matches_python() {
        assert_eq!(
            html("<a href=\"x\">Tom & 'Jerry'</a>"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#x27;Jerry&#x27;&lt;/a&gt;"
        );
    }
}
