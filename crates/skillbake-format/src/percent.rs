//! Percent-coding (RFC 3986): one encoder and one strict decoder for every URI skillbake writes
//! or reads — `skill://` resource URIs, SARIF artifact locations, JSON pointers in `$ref`
//! fragments.

/// Which bytes stay as they are; every other byte is written `%XX` (upper-case hex).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// The unreserved characters `A-Z a-z 0-9 - . _ ~`: a single path segment or name.
    Unreserved,
    /// The unreserved characters and `/`: a relative path.
    Path,
}

impl Keep {
    fn keeps(self, b: u8) -> bool {
        b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~')
            || (self == Keep::Path && b == b'/')
    }
}

/// Appends `s` to `out`, percent-encoding every byte that `keep` does not keep.
pub fn encode_into(out: &mut String, s: &str, keep: Keep) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        if keep.keeps(b) {
            continue;
        }
        out.push_str(s.get(start..i).unwrap_or(""));
        out.push('%');
        for nibble in [b >> 4, b & 0xf] {
            if let Some(&h) = HEX.get(usize::from(nibble)) {
                out.push(char::from(h));
            }
        }
        start = i + 1;
    }
    out.push_str(s.get(start..).unwrap_or(""));
}

/// `s` encoded by [`encode_into`].
pub fn encode(s: &str, keep: Keep) -> String {
    let mut out = String::with_capacity(s.len());
    encode_into(&mut out, s, keep);
    out
}

/// Decodes `%XX` escapes (either hex case). `None` when an escape is incomplete or not hex, or
/// when the decoded bytes are not UTF-8: such text names nothing.
pub fn decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hi = hex_value(*bytes.get(i + 1)?)?;
            let lo = hex_value(*bytes.get(i + 2)?)?;
            out.push(hi << 4 | lo);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_everything_but_what_is_kept() {
        assert_eq!(
            encode("scripts/my file ü.py", Keep::Path),
            "scripts/my%20file%20%C3%BC.py"
        );
        assert_eq!(encode("a/b c", Keep::Unreserved), "a%2Fb%20c");
        assert_eq!(encode("A-z.0_~", Keep::Unreserved), "A-z.0_~");
        assert_eq!(encode("%", Keep::Path), "%25");
    }

    #[test]
    fn decodes_strictly() {
        assert_eq!(decode("a%20b%2fc%C3%BC").as_deref(), Some("a b/cü"));
        for bad in ["%", "%2", "%zz", "%g0", "%ff", "a%C3"] {
            assert_eq!(decode(bad), None, "{bad}");
        }
        assert_eq!(decode("").as_deref(), Some(""));
    }

    #[test]
    fn round_trips() {
        for s in ["", "x", "a b/c", "中文/ü ~", "%41", "100%"] {
            for keep in [Keep::Unreserved, Keep::Path] {
                assert_eq!(decode(&encode(s, keep)).as_deref(), Some(s), "{s}");
            }
        }
    }
}
