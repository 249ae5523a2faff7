//! JSON as Python's `json` module reads and writes it, without losing anything on the way.
//!
//! DB-GPT decodes a script's stdout with `json.loads` and writes its reply with
//! `json.dumps(..., ensure_ascii=False)`; it passes a script's arguments as `json.dumps(args)`.
//! To answer byte for byte what DB-GPT answers, skillbake reads and writes JSON the same way:
//!
//! * [`parse`] accepts exactly what `json.loads` accepts (`NaN`, `Infinity`, `-Infinity`
//!   included; control characters inside strings and trailing data rejected), keeps integers of
//!   any size exactly, keeps the first position and the last value of a repeated key, and
//!   rejects integers of more than 4300 digits as Python 3.11 does. Lone surrogate escapes
//!   (`"\ud800"`), which Python keeps in a `str` but Rust cannot, are rejected too.
//! * [`Value::dumps`] writes `json.dumps`'s bytes: `", "` and `": "` separators, floats as
//!   `repr(float)`, strings escaped as `ensure_ascii` asks.

use serde_json::{Map, Number, Value as Json};
use skillbake_format::python::float_repr;
use std::collections::HashMap;

/// A JSON value as Python holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `None`.
    Null,
    /// `True` / `False`.
    Bool(bool),
    /// An `int`, as its decimal digits (with a leading `-` when negative; never `-0`).
    Int(String),
    /// A `float`.
    Float(f64),
    /// A `str`.
    Str(String),
    /// A `list`.
    List(Vec<Value>),
    /// A `dict`, in insertion order.
    Dict(Vec<(String, Value)>),
}

/// Deepest nesting accepted (Python's recursion limit stops `json.loads` near 1000).
const MAX_DEPTH: usize = 900;
/// Python 3.11's `sys.get_int_max_str_digits()` default.
const MAX_INT_DIGITS: usize = 4300;

impl Value {
    /// Python's truthiness (`if not value`).
    pub fn truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Int(i) => i != "0",
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Dict(d) => !d.is_empty(),
        }
    }

    /// Python's `type(value).__name__`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::List(_) => "list",
            Value::Dict(_) => "dict",
        }
    }

    /// The value of `key` when this is a dict holding it.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Dict(items) => items.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// `json.dumps(value, ensure_ascii=ascii)`.
    pub fn dumps(&self, ascii: bool) -> String {
        let mut out = String::new();
        self.write(&mut out, ascii);
        out
    }

    /// Appends `json.dumps(value, ensure_ascii=ascii)` to `out`.
    pub fn write(&self, out: &mut String, ascii: bool) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(true) => out.push_str("true"),
            Value::Bool(false) => out.push_str("false"),
            Value::Int(digits) => out.push_str(digits),
            Value::Float(f) => out.push_str(&float_repr(*f)),
            Value::Str(s) => write_str(out, s, ascii),
            Value::List(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.write(out, ascii);
                }
                out.push(']');
            }
            Value::Dict(items) => {
                out.push('{');
                for (i, (k, v)) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_str(out, k, ascii);
                    out.push_str(": ");
                    v.write(out, ascii);
                }
                out.push('}');
            }
        }
    }

    /// The same value as `serde_json` holds it. What `serde_json` cannot hold exactly becomes a
    /// string with its JSON text: integers outside 64 bits (`"123456789012345678901234567890"`),
    /// `"NaN"`, `"Infinity"`, `"-Infinity"`.
    pub fn to_json(&self) -> Json {
        match self {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(digits) => match (digits.parse::<i64>(), digits.parse::<u64>()) {
                (Ok(i), _) => Json::Number(i.into()),
                (_, Ok(u)) => Json::Number(u.into()),
                _ => Json::String(digits.clone()),
            },
            Value::Float(f) => {
                Number::from_f64(*f).map_or_else(|| Json::String(float_repr(*f)), Json::Number)
            }
            Value::Str(s) => Json::String(s.clone()),
            Value::List(items) => Json::Array(items.iter().map(Value::to_json).collect()),
            Value::Dict(items) => {
                let mut map = Map::new();
                for (k, v) in items {
                    map.insert(k.clone(), v.to_json());
                }
                Json::Object(map)
            }
        }
    }

    /// A `serde_json` value as Python would hold it after `json.loads`.
    pub fn from_json(v: &Json) -> Value {
        match v {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => Value::Int(i.to_string()),
                (None, Some(u)) => Value::Int(u.to_string()),
                _ => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Json::String(s) => Value::Str(s.clone()),
            Json::Array(items) => Value::List(items.iter().map(Value::from_json).collect()),
            Json::Object(map) => Value::Dict(
                map.iter()
                    .map(|(k, v)| (k.clone(), Value::from_json(v)))
                    .collect(),
            ),
        }
    }
}

fn write_str(out: &mut String, s: &str, ascii: bool) {
    out.push('"');
    if ascii {
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                ' '..='~' => out.push(c),
                c => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
            }
        }
    } else {
        skillbake_format::escape::json_into(out, s);
    }
    out.push('"');
}

/// Parses `text` as `json.loads(text)` does; `None` where Python raises (or where the result
/// would hold a lone surrogate).
pub fn parse(text: &str) -> Option<Value> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    p.ws();
    let v = p.value(0)?;
    p.ws();
    (p.i == p.s.len()).then_some(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, lit: &[u8]) -> bool {
        if self.s.get(self.i..self.i + lit.len()) == Some(lit) {
            self.i += lit.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'{' => self.dict(depth),
            b'[' => self.list(depth),
            b'"' => self.string().map(Value::Str),
            b'n' if self.eat(b"null") => Some(Value::Null),
            b't' if self.eat(b"true") => Some(Value::Bool(true)),
            b'f' if self.eat(b"false") => Some(Value::Bool(false)),
            b'N' if self.eat(b"NaN") => Some(Value::Float(f64::NAN)),
            b'I' if self.eat(b"Infinity") => Some(Value::Float(f64::INFINITY)),
            b'-' if self.eat(b"-Infinity") => Some(Value::Float(f64::NEG_INFINITY)),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn dict(&mut self, depth: usize) -> Option<Value> {
        self.i += 1;
        let mut items: Vec<(String, Value)> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        self.ws();
        if self.eat(b"}") {
            return Some(Value::Dict(items));
        }
        loop {
            self.ws();
            if self.peek()? != b'"' {
                return None;
            }
            let key = self.string()?;
            self.ws();
            if !self.eat(b":") {
                return None;
            }
            self.ws();
            let v = self.value(depth + 1)?;
            match index.get(&key) {
                Some(&at) => items.get_mut(at)?.1 = v,
                None => {
                    index.insert(key.clone(), items.len());
                    items.push((key, v));
                }
            }
            self.ws();
            if self.eat(b"}") {
                return Some(Value::Dict(items));
            }
            if !self.eat(b",") {
                return None;
            }
        }
    }

    fn list(&mut self, depth: usize) -> Option<Value> {
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.eat(b"]") {
            return Some(Value::List(items));
        }
        loop {
            self.ws();
            items.push(self.value(depth + 1)?);
            self.ws();
            if self.eat(b"]") {
                return Some(Value::List(items));
            }
            if !self.eat(b",") {
                return None;
            }
        }
    }

    /// `(-?(?:0|[1-9]\d*))(\.\d+)?([eE][-+]?\d+)?`, as Python's scanner matches it.
    fn number(&mut self) -> Option<Value> {
        let start = self.i;
        self.eat(b"-");
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        let int_end = self.i;
        let mut float = false;
        if self.peek() == Some(b'.') && matches!(self.s.get(self.i + 1), Some(b'0'..=b'9')) {
            self.i += 1;
            self.digits();
            float = true;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            let save = self.i;
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if matches!(self.peek(), Some(b'0'..=b'9')) {
                self.digits();
                float = true;
            } else {
                self.i = save;
            }
        }
        let text = std::str::from_utf8(self.s.get(start..self.i)?).ok()?;
        if float {
            return text.parse::<f64>().ok().map(Value::Float);
        }
        let digits = int_end - start - usize::from(text.starts_with('-'));
        if digits > MAX_INT_DIGITS {
            return None;
        }
        Some(Value::Int(if text == "-0" {
            "0".into()
        } else {
            text.into()
        }))
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let h = std::str::from_utf8(self.s.get(self.i..self.i + 4)?).ok()?;
        if !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.i += 4;
        u32::from_str_radix(h, 16).ok()
    }

    fn string(&mut self) -> Option<String> {
        self.i += 1;
        let mut out = String::new();
        loop {
            let start = self.i;
            while matches!(self.peek(), Some(b) if b != b'"' && b != b'\\' && b >= 0x20) {
                self.i += 1;
            }
            out.push_str(std::str::from_utf8(self.s.get(start..self.i)?).ok()?);
            match self.peek()? {
                b'"' => {
                    self.i += 1;
                    return Some(out);
                }
                b'\\' => {
                    self.i += 1;
                    let esc = self.peek()?;
                    self.i += 1;
                    match esc {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let c = if (0xd800..0xdc00).contains(&hi) && self.eat(b"\\u") {
                                let lo = self.hex4()?;
                                if !(0xdc00..0xe000).contains(&lo) {
                                    return None;
                                }
                                0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                            } else {
                                hi
                            };
                            out.push(char::from_u32(c)?);
                        }
                        _ => return None,
                    }
                }
                // A control character: Python's strict mode rejects it.
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(text: &str) -> Option<String> {
        parse(text).map(|v| v.dumps(false))
    }

    #[test]
    fn dumps_like_python() {
        assert_eq!(
            round(r#" {"b": [1, 2.50, -0, 1E2, true, null], "a": "é\u00e9\n", "b": {}} "#)
                .as_deref(),
            Some(r#"{"b": {}, "a": "éé\n"}"#)
        );
        assert_eq!(
            round("[12345678901234567890123, -0.0, 1e400, NaN, -Infinity, 0.1]").as_deref(),
            Some("[12345678901234567890123, -0.0, Infinity, NaN, -Infinity, 0.1]")
        );
        let v = parse(r#"{"k": "中\u2028\u007f😀\"/"}"#).unwrap();
        assert_eq!(
            v.dumps(true),
            r#"{"k": "\u4e2d\u2028\u007f\ud83d\ude00\"/"}"#
        );
        assert_eq!(v.dumps(false), "{\"k\": \"中\u{2028}\u{7f}😀\\\"/\"}");
    }

    #[test]
    fn rejects_what_python_rejects() {
        for bad in [
            "",
            "01",
            "1.",
            ".5",
            "-",
            "1e",
            "[1,]",
            "{\"a\":1,}",
            "{'a': 1}",
            "\"a\tb\"",
            "\"\\x\"",
            "\"\\ud800\"",
            "[1] x",
            "nan",
            "+1",
            "\"\\u12\"",
            "{\"a\" 1}",
            "tru",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
        assert!(parse(&"9".repeat(4300)).is_some());
        assert!(parse(&"9".repeat(4301)).is_none());
        assert!(parse(&"[".repeat(2000)).is_none());
        // `1e` is an int followed by extra data, `1.5e+` likewise.
        assert_eq!(parse("1.5e+"), None);
    }

    #[test]
    fn converts_without_losing_digits() {
        assert_eq!(
            parse(r#"{"a": [1, 2.5, "x", null, false]}"#)
                .unwrap()
                .to_json(),
            serde_json::json!({"a": [1, 2.5, "x", null, false]})
        );
        assert_eq!(
            parse("18446744073709551615").unwrap().to_json(),
            serde_json::json!(u64::MAX)
        );
        assert_eq!(
            parse("[18446744073709551616, NaN, -Infinity]")
                .unwrap()
                .to_json(),
            serde_json::json!(["18446744073709551616", "NaN", "-Infinity"])
        );
        let j = serde_json::json!({"z": 1, "a": [1.5, -3, "é"]});
        assert_eq!(
            Value::from_json(&j).dumps(true),
            r#"{"z": 1, "a": [1.5, -3, "\u00e9"]}"#
        );
    }

    #[test]
    fn truthiness_and_type_names() {
        assert!(!parse("[]").unwrap().truthy());
        assert!(!parse("0").unwrap().truthy());
        assert!(!parse("0.0").unwrap().truthy());
        assert!(parse("\"x\"").unwrap().truthy());
        assert_eq!(parse("null").unwrap().type_name(), "NoneType");
        assert_eq!(parse("{}").unwrap().type_name(), "dict");
    }
}
