//! Positions in a document as the Language Server Protocol counts them: 0-based lines ending at
//! `\n`, `\r\n` or a lone `\r`, and 0-based columns in UTF-16 code units; and the conversions
//! from the compiler's byte offsets and 1-based character columns.

use lsp_types::{Position, Range};

/// Line starts of one text.
pub struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    /// Indexes `text`.
    pub fn new(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        for (i, &b) in bytes.iter().enumerate() {
            match b {
                b'\n' => starts.push(i + 1),
                b'\r' if bytes.get(i + 1) != Some(&b'\n') => starts.push(i + 1),
                _ => {}
            }
        }
        Lines { text, starts }
    }

    /// The text of 0-based line `line`, without its terminator (empty past the end).
    pub fn line(&self, line: usize) -> &'a str {
        let Some(&start) = self.starts.get(line) else {
            return "";
        };
        let end = self
            .starts
            .get(line + 1)
            .copied()
            .unwrap_or(self.text.len());
        self.text
            .get(start..end)
            .unwrap_or_default()
            .trim_end_matches(['\n', '\r'])
    }

    /// Number of lines.
    pub fn count(&self) -> usize {
        self.starts.len()
    }

    /// The position of byte `offset` (clamped to the text, and down to a character boundary).
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset).max(1) - 1;
        let start = self.starts.get(line).copied().unwrap_or(0);
        let before = self.text.get(start..offset).unwrap_or_default();
        Position::new(to_u32(line), to_u32(utf16_len(before)))
    }

    /// The range of `len` characters from 1-based `line`:`column` (characters, as the
    /// compiler's diagnostics count them), kept within the line.
    pub fn span(&self, line: u32, column: u32, len: u32) -> Range {
        let l = (line.max(1) - 1) as usize;
        let text = self.line(l);
        let skip = column.max(1) as usize - 1;
        let start: usize = text.chars().take(skip).map(char::len_utf16).sum();
        let width: usize = text
            .chars()
            .skip(skip)
            .take(len as usize)
            .map(char::len_utf16)
            .sum();
        let l = to_u32(l);
        Range::new(
            Position::new(l, to_u32(start)),
            Position::new(l, to_u32(start + width)),
        )
    }

    /// The byte offset of an LSP position (a column past the line's end is its end).
    pub fn offset(&self, pos: Position) -> usize {
        let line = pos.line as usize;
        let Some(&start) = self.starts.get(line) else {
            return self.text.len();
        };
        let text = self.line(line);
        let mut units = 0usize;
        for (i, c) in text.char_indices() {
            if units >= pos.character as usize {
                return start + i;
            }
            units += c.len_utf16();
        }
        start + text.len()
    }
}

/// Length in UTF-16 code units.
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_utf16_units_and_lines_end_three_ways() {
        // `é` is one unit, `𝄞` two; the three line endings each end a line.
        let text = "a\r\nés𝄞x: y\rz\nlast";
        let lines = Lines::new(text);
        assert_eq!(lines.count(), 4);
        assert_eq!(lines.line(1), "és𝄞x: y");
        let x = text.find('x').unwrap();
        assert_eq!(lines.position(x), Position::new(1, 4));
        assert_eq!(lines.offset(Position::new(1, 4)), x);
        // Characters 3..5 of line 2 (1-based column 3, two characters): `𝄞x`.
        assert_eq!(
            lines.span(2, 3, 2),
            Range::new(Position::new(1, 2), Position::new(1, 5))
        );
        assert_eq!(lines.position(text.find('z').unwrap()), Position::new(2, 0));
        // Past the end of a line, and past the last line.
        assert_eq!(lines.offset(Position::new(0, 99)), 1);
        assert_eq!(lines.offset(Position::new(9, 0)), text.len());
        // Inside a character: down to its start.
        let clef = text.find('𝄞').unwrap();
        assert_eq!(lines.position(clef + 1), lines.position(clef));
    }
}
