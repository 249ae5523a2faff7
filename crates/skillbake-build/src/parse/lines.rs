//! Lines of a text as YAML and Python read them: `\n`, `\r\n` and a lone `\r` each end one.

/// One line of a text: byte range of its content and the offset just past its terminator.
#[derive(Debug, Clone, Copy)]
pub(super) struct Line {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) next: usize,
}

pub(super) fn lines(text: &str, from: usize) -> impl Iterator<Item = Line> + '_ {
    let bytes = text.as_bytes();
    let mut pos = from;
    std::iter::from_fn(move || {
        if pos >= bytes.len() {
            return None;
        }
        let start = pos;
        let mut i = pos;
        while i < bytes.len() && bytes[i] != b'\n' && bytes[i] != b'\r' {
            i += 1;
        }
        let end = i;
        if i < bytes.len() {
            i += if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
                2
            } else {
                1
            };
        }
        pos = i;
        Some(Line {
            start,
            end,
            next: i,
        })
    })
}
