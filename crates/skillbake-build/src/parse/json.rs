//! Positions inside a JSON document: maps every JSON pointer (`/properties/to/type`) to the byte
//! range of its value. Run only on text that `serde_json` accepted.

use std::collections::HashMap;

/// Byte ranges of the values of a JSON document, by JSON pointer.
#[derive(Debug, Default)]
pub struct JsonIndex {
    values: HashMap<String, (usize, usize)>,
}

impl JsonIndex {
    /// Indexes `text` (must be valid JSON; on malformed input the index is partial).
    pub fn new(text: &str) -> Self {
        let mut idx = JsonIndex::default();
        let mut p = Parser {
            s: text.as_bytes(),
            i: 0,
        };
        p.value(&mut idx, String::new());
        idx
    }

    /// Byte range of the value at `pointer` (`""` is the whole document).
    pub fn value(&self, pointer: &str) -> Option<(usize, usize)> {
        self.values.get(pointer).copied()
    }
}

/// Escapes one reference token of a JSON pointer (`~` → `~0`, `/` → `~1`).
pub fn escape_token(t: &str) -> String {
    t.replace('~', "~0").replace('/', "~1")
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn value(&mut self, idx: &mut JsonIndex, ptr: String) {
        self.ws();
        let start = self.i;
        match self.s.get(self.i) {
            Some(b'{') => {
                self.i += 1;
                loop {
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b'}') => {
                            self.i += 1;
                            break;
                        }
                        Some(b',') => self.i += 1,
                        Some(b'"') => {
                            let key = self.string();
                            self.ws();
                            if self.s.get(self.i) == Some(&b':') {
                                self.i += 1;
                            }
                            let child = format!("{ptr}/{}", escape_token(&key));
                            self.value(idx, child);
                        }
                        _ => return,
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut n = 0usize;
                loop {
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b']') => {
                            self.i += 1;
                            break;
                        }
                        Some(b',') => self.i += 1,
                        Some(_) => {
                            let before = self.i;
                            self.value(idx, format!("{ptr}/{n}"));
                            n += 1;
                            if self.i == before {
                                return;
                            }
                        }
                        None => return,
                    }
                }
            }
            Some(b'"') => {
                self.string();
            }
            Some(_) => {
                while self.i < self.s.len()
                    && !matches!(
                        self.s[self.i],
                        b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'
                    )
                {
                    self.i += 1;
                }
            }
            None => return,
        }
        idx.values.insert(ptr, (start, self.i));
    }

    /// Reads a string token starting at the opening quote; returns its decoded text.
    fn string(&mut self) -> String {
        let start = self.i;
        self.i += 1;
        while self.i < self.s.len() {
            match self.s[self.i] {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    break;
                }
                _ => self.i += 1,
            }
        }
        let end = self.i.min(self.s.len());
        let raw = std::str::from_utf8(&self.s[start..end]).unwrap_or("\"\"");
        serde_json::from_str::<String>(raw).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_nested_values() {
        let text = r#"{"a": {"b/c": [1, "x\"y", {"d": null}]}, "e": true}"#;
        let idx = JsonIndex::new(text);
        let at = |p: &str| idx.value(p).map(|(s, e)| &text[s..e]);
        assert_eq!(at("/a/b~1c/0"), Some("1"));
        assert_eq!(at("/a/b~1c/1"), Some("\"x\\\"y\""));
        assert_eq!(at("/a/b~1c/2/d"), Some("null"));
        assert_eq!(at("/e"), Some("true"));
    }
}
