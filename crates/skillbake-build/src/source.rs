//! Byte offsets to 1-based line and column (columns count Unicode scalar values, lines end at
//! `\n`, `\r\n` or a lone `\r`, as in Python's universal newlines).

use crate::diagnostic::Position;
use std::borrow::Cow;

/// Maps byte offsets of one text to line/column positions.
#[derive(Debug, Clone)]
pub struct LineIndex<'a> {
    text: &'a str,
    /// Byte offset of the start of every line.
    starts: Cow<'a, [usize]>,
}

impl<'a> LineIndex<'a> {
    /// Indexes `text`.
    pub fn new(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        // A line starts after every `\n` and after every `\r` that no `\n` follows.
        for i in memchr::memchr2_iter(b'\n', b'\r', bytes) {
            if bytes[i] == b'\n' || bytes.get(i + 1) != Some(&b'\n') {
                starts.push(i + 1);
            }
        }
        LineIndex {
            text,
            starts: Cow::Owned(starts),
        }
    }

    /// An index over `text` from line starts computed earlier by [`LineIndex::new`] on the same
    /// text (see [`LineIndex::into_starts`]).
    pub fn with_starts(text: &'a str, starts: &'a [usize]) -> Self {
        LineIndex {
            text,
            starts: Cow::Borrowed(starts),
        }
    }

    /// The line starts, to keep beside the text and rebuild the index without rescanning.
    pub fn into_starts(self) -> Vec<usize> {
        self.starts.into_owned()
    }

    /// The position of byte `offset` (clamped to the text), highlighting `len` characters.
    pub fn position(&self, offset: usize, len: usize) -> Position {
        let offset = floor_char_boundary(self.text, offset.min(self.text.len()));
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts[line - 1];
        let column = self.text[start..offset].chars().count() + 1;
        Position::span(to_u32(line), to_u32(column), to_u32(len))
    }

    /// The position of the byte range `start..end`, underlining it up to the end of its first line.
    pub fn range(&self, start: usize, end: usize) -> Position {
        let start = floor_char_boundary(self.text, start.min(self.text.len()));
        let end = floor_char_boundary(self.text, end.clamp(start, self.text.len()));
        let slice = &self.text[start..end];
        let first_line = slice.split(['\n', '\r']).next().unwrap_or("");
        self.position(start, first_line.chars().count())
    }

    /// The text of 1-based line `line`, without its terminator.
    pub fn line_text(&self, line: u32) -> Option<&'a str> {
        let idx = usize::try_from(line).ok()?.checked_sub(1)?;
        let start = *self.starts.get(idx)?;
        let end = self.starts.get(idx + 1).copied().unwrap_or(self.text.len());
        Some(self.text[start..end].trim_end_matches(['\n', '\r']))
    }

    /// Number of lines.
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }
}

/// Largest char boundary at or below `i`.
pub fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Saturating conversion for positions.
pub fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_across_line_endings() {
        let idx = LineIndex::new("ab\r\ncé\rd\nxyz");
        assert_eq!(idx.position(0, 0), Position::point(1, 1));
        assert_eq!(idx.position(4, 0), Position::point(2, 1));
        assert_eq!(idx.position(7, 0), Position::point(2, 3));
        assert_eq!(idx.position(8, 0), Position::point(3, 1));
        assert_eq!(idx.position(10, 0), Position::point(4, 1));
        assert_eq!(idx.line_text(2), Some("cé"));
        assert_eq!(idx.line_text(4), Some("xyz"));
        assert_eq!(idx.line_text(5), None);
        assert_eq!(idx.line_count(), 4);
    }

    proptest::proptest! {
        /// The line starts are those of a byte-by-byte walk.
        #[test]
        fn line_starts_match_a_byte_by_byte_walk(text in "[ab\r\n]{0,40}") {
            let bytes = text.as_bytes();
            let mut want = vec![0];
            for (i, &b) in bytes.iter().enumerate() {
                if b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')) {
                    want.push(i + 1);
                }
            }
            proptest::prop_assert_eq!(LineIndex::new(&text).into_starts(), want);
        }
    }
}
