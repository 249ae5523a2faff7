//! Precompiled Jinja2 templates: the instruction table the compiler writes for a body and the
//! interpreter that renders it at run time, with Jinja2's semantics as DB-GPT renders prompt
//! templates (`SandboxedEnvironment().from_string(body).render(**vars)`: undefined variables are
//! empty, attributes of undefined ones raise). Variables are strings.
//!
//! The table is bytes: one opcode byte per instruction, operands as LEB128 integers and
//! length-prefixed UTF-8; the template's text is referenced by offsets into the source (the
//! body the registry serves anyway), so a body's table costs a few bytes per tag. The runtime never sees template syntax; it decodes the table
//! ([`Program::decode`]) and runs it ([`render`]). Constructs the table cannot express are
//! refused by the compiler, which then records why the body is not renderable.
//!
//! Supported: text, `{{ … }}`, `{% if %}`/`elif`/`else`, `{% for x in … %}` with `else` and
//! `loop.index`/`index0`/`revindex`/`revindex0`/`first`/`last`/`length`, `{% set x = … %}`,
//! `{% with %}`, comments, raw blocks, whitespace control; string, integer, float, boolean and
//! `none` literals, lists, `range()`; attributes and items (`x[0]`, slices); `~ + - * / // % **`,
//! comparisons, `in`, `and`/`or`/`not`, inline `if`; the filters in [`FILTERS`], the tests in
//! [`TESTS`] and the string methods in [`METHODS`].

use std::fmt::Write as _;

/// Filters the interpreter implements, by id (the index in this table).
pub const FILTERS: &[&str] = &[
    "upper",
    "lower",
    "title",
    "capitalize",
    "trim",
    "default",
    "d",
    "length",
    "count",
    "string",
    "join",
    "first",
    "last",
    "reverse",
    "replace",
    "list",
    "wordcount",
    "int",
    "abs",
    "center",
];

/// Tests the interpreter implements, by id.
pub const TESTS: &[&str] = &[
    "defined",
    "undefined",
    "none",
    "string",
    "number",
    "integer",
    "float",
    "boolean",
    "true",
    "false",
    "odd",
    "even",
    "divisibleby",
    "eq",
    "equalto",
    "==",
    "ne",
    "!=",
    "lt",
    "<",
    "lessthan",
    "le",
    "<=",
    "gt",
    ">",
    "greaterthan",
    "ge",
    ">=",
    "in",
    "lower",
    "upper",
    "sequence",
    "iterable",
    "mapping",
];

/// String methods the interpreter implements (`{{ name.upper() }}`).
pub const METHODS: &[&str] = &[
    "upper",
    "lower",
    "strip",
    "lstrip",
    "rstrip",
    "title",
    "capitalize",
    "startswith",
    "endswith",
    "replace",
];

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `~`
    Concat,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `//`
    FloorDiv,
    /// `%`
    Rem,
    /// `**`
    Pow,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `in`
    In,
    /// `not in`
    NotIn,
}

const BINOPS: [BinOp; 16] = [
    BinOp::Concat,
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::FloorDiv,
    BinOp::Rem,
    BinOp::Pow,
    BinOp::Eq,
    BinOp::Ne,
    BinOp::Lt,
    BinOp::Le,
    BinOp::Gt,
    BinOp::Ge,
    BinOp::In,
    BinOp::NotIn,
];

/// One instruction of the stack machine.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Write literal text.
    Text(String),
    /// Write bytes `start..end` of the template's source (the served body), which the registry
    /// already holds: text costs no space in the table.
    Span(u32, u32),
    /// Pop a value and write it as Jinja2 prints it.
    Emit,
    /// Push a variable (locals first, then the render's variables; `loop` inside a loop).
    Var(String),
    /// Push a string.
    Str(String),
    /// Push an integer.
    Int(i64),
    /// Push a float.
    Float(f64),
    /// Push a boolean.
    Bool(bool),
    /// Push `none`.
    None,
    /// Pop `n` values and push them as a list.
    List(u32),
    /// Pop a value, push its attribute.
    Attr(String),
    /// Pop a key and a value, push the value's item.
    Item,
    /// Pop the present bounds (bit 0 start, 1 stop, 2 step) and a value, push the slice.
    Slice(u8),
    /// Pop `argc` arguments and a value, push the filter's result.
    Filter(u8, u8),
    /// Pop `argc` arguments and a value, push the test's result.
    Test(u8, u8),
    /// Pop `argc` arguments and a receiver, push the string method's result.
    Method(String, u8),
    /// Pop `argc` arguments, push `range(...)`.
    Range(u8),
    /// Pop a value, push `not value`.
    Not,
    /// Pop a number, push its negation.
    Neg,
    /// Pop two values, push the result.
    Bin(BinOp),
    /// Jump to an instruction.
    Jump(u32),
    /// Pop a value; jump when it is false.
    JumpIfFalse(u32),
    /// Jump when the top value is false (keeping it), else pop it (`and`).
    JumpIfFalseOrPop(u32),
    /// Jump when the top value is true (keeping it), else pop it (`or`).
    JumpIfTrueOrPop(u32),
    /// Pop a value and start a loop over it.
    IterStart,
    /// Push the loop's next item, or jump when it is exhausted.
    IterNext(u32),
    /// End the loop; jump when it ran at least once (past its `else` body).
    IterDone(u32),
    /// Pop a value into a local variable.
    Store(String),
    /// Open a scope for locals.
    PushScope,
    /// Close it.
    PopScope,
}

/// A decoded instruction table.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Program {
    /// The instructions.
    pub ops: Vec<Op>,
}

impl Program {
    /// The table as bytes (what the registry embeds).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for op in &self.ops {
            let (tag, rest): (u8, Vec<u8>) = match op {
                Op::Text(s) => (0, str_bytes(s)),
                Op::Emit => (1, vec![]),
                Op::Var(s) => (2, str_bytes(s)),
                Op::Str(s) => (3, str_bytes(s)),
                Op::Int(i) => (4, uleb(((*i << 1) ^ (*i >> 63)) as u64)),
                Op::Float(f) => (5, f.to_bits().to_le_bytes().to_vec()),
                Op::Bool(b) => (6, vec![u8::from(*b)]),
                Op::None => (7, vec![]),
                Op::List(n) => (8, uleb(u64::from(*n))),
                Op::Attr(s) => (9, str_bytes(s)),
                Op::Item => (10, vec![]),
                Op::Slice(m) => (11, vec![*m]),
                Op::Filter(id, argc) => (12, vec![*id, *argc]),
                Op::Test(id, argc) => (13, vec![*id, *argc]),
                Op::Method(s, argc) => {
                    let mut v = str_bytes(s);
                    v.push(*argc);
                    (14, v)
                }
                Op::Range(argc) => (15, vec![*argc]),
                Op::Not => (16, vec![]),
                Op::Neg => (17, vec![]),
                Op::Bin(b) => (
                    18,
                    vec![BINOPS.iter().position(|x| x == b).unwrap_or(0) as u8],
                ),
                Op::Jump(t) => (19, uleb(u64::from(*t))),
                Op::JumpIfFalse(t) => (20, uleb(u64::from(*t))),
                Op::JumpIfFalseOrPop(t) => (21, uleb(u64::from(*t))),
                Op::JumpIfTrueOrPop(t) => (22, uleb(u64::from(*t))),
                Op::IterStart => (23, vec![]),
                Op::IterNext(t) => (24, uleb(u64::from(*t))),
                Op::IterDone(t) => (25, uleb(u64::from(*t))),
                Op::Store(s) => (26, str_bytes(s)),
                Op::PushScope => (27, vec![]),
                Op::PopScope => (28, vec![]),
                Op::Span(a, b) => {
                    let mut v = uleb(u64::from(*a));
                    v.extend(uleb(u64::from(*b)));
                    (29, v)
                }
            };
            out.push(tag);
            out.extend(rest);
        }
        out
    }

    /// Reads a table written by [`Program::encode`]; `None` when the bytes are not one.
    pub fn decode(bytes: &[u8]) -> Option<Program> {
        let mut r = Reader { b: bytes, i: 0 };
        let mut ops = Vec::new();
        while r.i < bytes.len() {
            let tag = r.byte()?;
            let op = match tag {
                0 => Op::Text(r.string()?),
                1 => Op::Emit,
                2 => Op::Var(r.string()?),
                3 => Op::Str(r.string()?),
                4 => {
                    let z = r.uleb()?;
                    Op::Int(((z >> 1) as i64) ^ -((z & 1) as i64))
                }
                5 => {
                    let raw: [u8; 8] = r.take(8)?.try_into().ok()?;
                    Op::Float(f64::from_bits(u64::from_le_bytes(raw)))
                }
                6 => Op::Bool(r.byte()? != 0),
                7 => Op::None,
                8 => Op::List(r.u32()?),
                9 => Op::Attr(r.string()?),
                10 => Op::Item,
                11 => Op::Slice(r.byte()?),
                12 => Op::Filter(r.byte()?, r.byte()?),
                13 => Op::Test(r.byte()?, r.byte()?),
                14 => Op::Method(r.string()?, r.byte()?),
                15 => Op::Range(r.byte()?),
                16 => Op::Not,
                17 => Op::Neg,
                18 => Op::Bin(*BINOPS.get(usize::from(r.byte()?))?),
                19 => Op::Jump(r.u32()?),
                20 => Op::JumpIfFalse(r.u32()?),
                21 => Op::JumpIfFalseOrPop(r.u32()?),
                22 => Op::JumpIfTrueOrPop(r.u32()?),
                23 => Op::IterStart,
                24 => Op::IterNext(r.u32()?),
                25 => Op::IterDone(r.u32()?),
                26 => Op::Store(r.string()?),
                27 => Op::PushScope,
                28 => Op::PopScope,
                29 => Op::Span(r.u32()?, r.u32()?),
                _ => return None,
            };
            ops.push(op);
        }
        Some(Program { ops })
    }
}

fn uleb(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

fn str_bytes(s: &str) -> Vec<u8> {
    let mut v = uleb(s.len() as u64);
    v.extend_from_slice(s.as_bytes());
    v
}

struct Reader<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.b.get(self.i)?;
        self.i += 1;
        Some(b)
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.i..self.i.checked_add(n)?)?;
        self.i += n;
        Some(s)
    }

    fn uleb(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    fn u32(&mut self) -> Option<u32> {
        u32::try_from(self.uleb()?).ok()
    }

    fn string(&mut self) -> Option<String> {
        let n = usize::try_from(self.uleb()?).ok()?;
        std::str::from_utf8(self.take(n)?).ok().map(str::to_string)
    }
}

// ---------------------------------------------------------------------------------------------
// Interpreter

/// Why rendering failed (where Jinja2 raises).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenderError {
    /// An attribute or item of an undefined value, or arithmetic on one (Jinja2's
    /// `UndefinedError`).
    Undefined(String),
    /// An operation on values of the wrong type (Python's `TypeError`, `ValueError`).
    Type(String),
    /// The value is one Jinja2 would print as a Python object (a method, a loop object).
    Unsupported(String),
    /// The instruction table is damaged.
    Corrupt,
}

impl std::fmt::Display for RenderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RenderError::Undefined(m) | RenderError::Type(m) => f.write_str(m),
            RenderError::Unsupported(m) => write!(f, "cannot render {m}"),
            RenderError::Corrupt => f.write_str("the precompiled template is damaged"),
        }
    }
}

impl std::error::Error for RenderError {}

#[derive(Debug, Clone, PartialEq)]
enum Value {
    Undefined(String),
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Value>),
    /// `range(start, stop, step)`: prints as Python's range object.
    Range(i64, i64, i64),
    Loop {
        index0: usize,
        length: usize,
    },
    Method(String),
}

impl Value {
    fn truthy(&self) -> bool {
        match self {
            Value::Undefined(_) | Value::None => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Range(..) => range_items(self).is_some_and(|v| !v.is_empty()),
            Value::Loop { .. } | Value::Method(_) => true,
        }
    }

    /// Python's `str()` as Jinja2 prints a value (undefined prints nothing).
    fn to_str(&self) -> Result<String, RenderError> {
        Ok(match self {
            Value::Undefined(_) => String::new(),
            Value::Str(s) => s.clone(),
            other => other.repr()?,
        })
    }

    /// Python's `repr()`.
    fn repr(&self) -> Result<String, RenderError> {
        Ok(match self {
            Value::Undefined(_) => String::new(),
            Value::None => "None".into(),
            Value::Bool(true) => "True".into(),
            Value::Bool(false) => "False".into(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => py_float(*f),
            Value::Str(s) => py_repr_str(s),
            Value::List(items) => {
                let mut out = String::from("[");
                for (i, it) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&it.repr()?);
                }
                out.push(']');
                out
            }
            Value::Range(a, b, 1) => format!("range({a}, {b})"),
            Value::Range(a, b, s) => format!("range({a}, {b}, {s})"),
            Value::Loop { .. } => return Err(RenderError::Unsupported("the `loop` object".into())),
            Value::Method(m) => {
                return Err(RenderError::Unsupported(format!(
                    "the method `{m}` without calling it"
                )))
            }
        })
    }

    fn type_name(&self) -> &'static str {
        match self {
            Value::Undefined(_) => "Undefined",
            Value::None => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::List(_) => "list",
            Value::Range(..) => "range",
            Value::Loop { .. } => "LoopContext",
            Value::Method(_) => "builtin_function_or_method",
        }
    }

    fn undefined_error(&self) -> Option<RenderError> {
        match self {
            Value::Undefined(name) => {
                Some(RenderError::Undefined(format!("'{name}' is undefined")))
            }
            _ => None,
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            _ => None,
        }
    }

    fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(i64::from(*b)),
            _ => None,
        }
    }

    /// Items when iterated (strings by character; undefined as empty).
    fn items(&self) -> Result<Vec<Value>, RenderError> {
        match self {
            Value::Undefined(_) => Ok(Vec::new()),
            Value::Str(s) => Ok(s.chars().map(|c| Value::Str(c.to_string())).collect()),
            Value::List(l) => Ok(l.clone()),
            Value::Range(..) => range_items(self).ok_or_else(|| {
                RenderError::Type(
                    "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000)."
                        .into(),
                )
            }),
            other => Err(RenderError::Type(format!(
                "'{}' object is not iterable",
                other.type_name()
            ))),
        }
    }
}

/// The items of a range, or `None` past Jinja2's sandbox limit of 100,000.
fn range_items(v: &Value) -> Option<Vec<Value>> {
    let Value::Range(start, stop, step) = *v else {
        return Some(Vec::new());
    };
    let mut out = Vec::new();
    let mut i = start;
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        if out.len() >= 100_000 {
            return None;
        }
        out.push(Value::Int(i));
        i = i.checked_add(step)?;
    }
    Some(out)
}

fn py_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Undefined(_), Value::Undefined(_)) => true,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_equal(p, q))
        }
        (Value::None, Value::None) => true,
        (x, y) => match (x.as_f64(), y.as_f64()) {
            (Some(p), Some(q)) => p == q,
            _ => false,
        },
    }
}

/// Python's `repr(float)`: the shortest digits that round-trip, in Python's layout.
fn py_float(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let sci = format!("{f:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let sign = if neg { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let point = exp + 1;
        let mut s = String::new();
        if point <= 0 {
            s.push_str("0.");
            s.extend(std::iter::repeat_n('0', point.unsigned_abs() as usize));
            s.push_str(&digits);
        } else if point as usize >= digits.len() {
            s.push_str(&digits);
            s.extend(std::iter::repeat_n('0', point as usize - digits.len()));
            s.push_str(".0");
        } else {
            s.push_str(&digits[..point as usize]);
            s.push('.');
            s.push_str(&digits[point as usize..]);
        }
        format!("{sign}{s}")
    } else {
        let m = if digits.len() > 1 {
            format!("{}.{}", &digits[..1], &digits[1..])
        } else {
            digits.clone()
        };
        let es = if exp < 0 { "-" } else { "+" };
        format!("{sign}{m}e{es}{:02}", exp.abs())
    }
}

/// Python's `repr(str)`.
fn py_repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::new();
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (0x80..0xa0).contains(&(c as u32)) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python's `str.isspace()`.
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

struct LoopState {
    items: Vec<Value>,
    next: usize,
}

/// Renders `program`, compiled from `source`, with `vars` (name → string value); unknown names
/// are undefined.
pub fn render(
    program: &Program,
    source: &str,
    vars: &[(&str, &str)],
) -> Result<String, RenderError> {
    let mut m = Machine {
        source,
        vars,
        out: String::new(),
        stack: Vec::new(),
        scopes: vec![Vec::new()],
        loops: Vec::new(),
        pc: 0,
    };
    // Every loop's length is bounded by its input; jumps only go backwards at loop ends.
    let mut budget: u64 = 10_000_000;
    while let Some(op) = program.ops.get(m.pc) {
        budget = budget
            .checked_sub(1)
            .ok_or_else(|| RenderError::Unsupported("a template that runs this long".into()))?;
        m.pc += 1;
        m.step(op)?;
    }
    Ok(m.out)
}

/// The interpreter's state: the text so far, the value stack, the scopes of local names, the
/// loops being run and the next instruction.
struct Machine<'a> {
    source: &'a str,
    vars: &'a [(&'a str, &'a str)],
    out: String,
    stack: Vec<Value>,
    scopes: Vec<Vec<(String, Value)>>,
    loops: Vec<LoopState>,
    pc: usize,
}

impl Machine<'_> {
    fn pop(&mut self) -> Result<Value, RenderError> {
        self.stack.pop().ok_or(RenderError::Corrupt)
    }

    /// The top `n` values, in push order.
    fn args(&mut self, n: usize) -> Result<Vec<Value>, RenderError> {
        let at = self
            .stack
            .len()
            .checked_sub(n)
            .ok_or(RenderError::Corrupt)?;
        Ok(self.stack.split_off(at))
    }

    /// Runs one instruction.
    fn step(&mut self, op: &Op) -> Result<(), RenderError> {
        match op {
            Op::Text(_) | Op::Span(..) | Op::Emit => self.output(op),
            Op::Var(name) => {
                let v = self.lookup(name)?;
                self.stack.push(v);
                Ok(())
            }
            Op::Str(_) | Op::Int(_) | Op::Float(_) | Op::Bool(_) | Op::None | Op::List(_) => {
                self.literal(op)
            }
            Op::Attr(_) | Op::Item | Op::Slice(_) => self.access(op),
            Op::Filter(..) | Op::Test(..) | Op::Method(..) | Op::Range(_) => self.call(op),
            Op::Not | Op::Neg | Op::Bin(_) => self.operator(op),
            Op::Jump(_) | Op::JumpIfFalse(_) | Op::JumpIfFalseOrPop(_) | Op::JumpIfTrueOrPop(_) => {
                self.jump(op)
            }
            Op::IterStart | Op::IterNext(_) | Op::IterDone(_) => self.iterate(op),
            Op::Store(_) | Op::PushScope | Op::PopScope => self.scope(op),
        }
    }

    /// Text of the template, or a value printed.
    fn output(&mut self, op: &Op) -> Result<(), RenderError> {
        match op {
            Op::Text(s) => self.out.push_str(s),
            Op::Span(a, b) => {
                let text = self
                    .source
                    .get(*a as usize..*b as usize)
                    .ok_or(RenderError::Corrupt)?;
                self.out.push_str(text);
            }
            _ => {
                let v = self.pop()?;
                self.out.push_str(&v.to_str()?);
            }
        }
        Ok(())
    }

    /// A name: a local (innermost scope first), `loop` inside a loop, else a variable given.
    fn lookup(&self, name: &str) -> Result<Value, RenderError> {
        let local = self
            .scopes
            .iter()
            .rev()
            .find_map(|s| s.iter().rev().find(|(n, _)| n == name))
            .map(|(_, v)| v.clone());
        Ok(match local {
            Some(v) => v,
            None if name == "loop" && !self.loops.is_empty() => {
                let l = self.loops.last().ok_or(RenderError::Corrupt)?;
                Value::Loop {
                    index0: l.next.saturating_sub(1),
                    length: l.items.len(),
                }
            }
            None => self
                .vars
                .iter()
                .rev()
                .find(|(n, _)| *n == name)
                .map_or_else(
                    || Value::Undefined(name.to_string()),
                    |(_, v)| Value::Str((*v).to_string()),
                ),
        })
    }

    fn literal(&mut self, op: &Op) -> Result<(), RenderError> {
        let v = match op {
            Op::Str(s) => Value::Str(s.clone()),
            Op::Int(i) => Value::Int(*i),
            Op::Float(f) => Value::Float(*f),
            Op::Bool(b) => Value::Bool(*b),
            Op::List(n) => Value::List(self.args(*n as usize)?),
            _ => Value::None,
        };
        self.stack.push(v);
        Ok(())
    }

    /// `x.name`, `x[key]`, `x[start:stop:step]`.
    fn access(&mut self, op: &Op) -> Result<(), RenderError> {
        let v = match op {
            Op::Attr(name) => {
                let v = self.pop()?;
                attr(v, name)?
            }
            Op::Item => {
                let key = self.pop()?;
                let v = self.pop()?;
                item(v, &key)?
            }
            Op::Slice(mask) => {
                let step = if mask & 4 != 0 {
                    Some(self.pop()?)
                } else {
                    None
                };
                let stop = if mask & 2 != 0 {
                    Some(self.pop()?)
                } else {
                    None
                };
                let start = if mask & 1 != 0 {
                    Some(self.pop()?)
                } else {
                    None
                };
                let v = self.pop()?;
                slice(v, start, stop, step)?
            }
            _ => return Err(RenderError::Corrupt),
        };
        self.stack.push(v);
        Ok(())
    }

    /// Filters, tests, methods and `range`.
    fn call(&mut self, op: &Op) -> Result<(), RenderError> {
        let v = match op {
            Op::Filter(id, argc) => {
                let args = self.args(usize::from(*argc))?;
                let v = self.pop()?;
                let name = FILTERS.get(usize::from(*id)).ok_or(RenderError::Corrupt)?;
                filter(name, v, args)?
            }
            Op::Test(id, argc) => {
                let args = self.args(usize::from(*argc))?;
                let v = self.pop()?;
                let name = TESTS.get(usize::from(*id)).ok_or(RenderError::Corrupt)?;
                Value::Bool(test(name, &v, &args)?)
            }
            Op::Method(name, argc) => {
                let args = self.args(usize::from(*argc))?;
                let v = self.pop()?;
                method(v, name, args)?
            }
            Op::Range(argc) => {
                let args = self.args(usize::from(*argc))?;
                range(&args)?
            }
            _ => return Err(RenderError::Corrupt),
        };
        self.stack.push(v);
        Ok(())
    }

    /// `not`, unary `-`, binary operators.
    fn operator(&mut self, op: &Op) -> Result<(), RenderError> {
        let v = match op {
            Op::Not => Value::Bool(!self.pop()?.truthy()),
            Op::Neg => negate(self.pop()?)?,
            Op::Bin(b) => {
                let r = self.pop()?;
                let l = self.pop()?;
                binop(*b, l, r)?
            }
            _ => return Err(RenderError::Corrupt),
        };
        self.stack.push(v);
        Ok(())
    }

    fn jump(&mut self, op: &Op) -> Result<(), RenderError> {
        match op {
            Op::Jump(t) => self.pc = *t as usize,
            Op::JumpIfFalse(t) => {
                if !self.pop()?.truthy() {
                    self.pc = *t as usize;
                }
            }
            Op::JumpIfFalseOrPop(t) => {
                if self.stack.last().is_some_and(|v| !v.truthy()) {
                    self.pc = *t as usize;
                } else {
                    self.pop()?;
                }
            }
            Op::JumpIfTrueOrPop(t) => {
                if self.stack.last().is_some_and(Value::truthy) {
                    self.pc = *t as usize;
                } else {
                    self.pop()?;
                }
            }
            _ => return Err(RenderError::Corrupt),
        }
        Ok(())
    }

    /// `for` loops: start over a value's items, take the next item (each iteration starts
    /// with the loop's own locals cleared), end (jumping past `else` when there were items).
    fn iterate(&mut self, op: &Op) -> Result<(), RenderError> {
        match op {
            Op::IterStart => {
                let v = self.pop()?;
                self.loops.push(LoopState {
                    items: v.items()?,
                    next: 0,
                });
                self.scopes.push(Vec::new());
            }
            Op::IterNext(t) => {
                let l = self.loops.last_mut().ok_or(RenderError::Corrupt)?;
                match l.items.get(l.next) {
                    Some(v) => {
                        self.stack.push(v.clone());
                        l.next += 1;
                        if let Some(s) = self.scopes.last_mut() {
                            s.clear();
                        }
                    }
                    None => self.pc = *t as usize,
                }
            }
            Op::IterDone(t) => {
                let l = self.loops.pop().ok_or(RenderError::Corrupt)?;
                self.scopes.pop();
                if !l.items.is_empty() {
                    self.pc = *t as usize;
                }
            }
            _ => return Err(RenderError::Corrupt),
        }
        Ok(())
    }

    fn scope(&mut self, op: &Op) -> Result<(), RenderError> {
        match op {
            Op::Store(name) => {
                let v = self.pop()?;
                let scope = self.scopes.last_mut().ok_or(RenderError::Corrupt)?;
                scope.push((name.clone(), v));
            }
            Op::PushScope => self.scopes.push(Vec::new()),
            _ => {
                self.scopes.pop();
            }
        }
        Ok(())
    }
}

/// Unary `-`.
fn negate(v: Value) -> Result<Value, RenderError> {
    if let Some(e) = v.undefined_error() {
        return Err(e);
    }
    Ok(match v {
        Value::Int(i) => Value::Int(i.checked_neg().ok_or_else(overflow)?),
        Value::Float(f) => Value::Float(-f),
        Value::Bool(b) => Value::Int(-i64::from(b)),
        other => {
            return Err(RenderError::Type(format!(
                "bad operand type for unary -: '{}'",
                other.type_name()
            )))
        }
    })
}

fn overflow() -> RenderError {
    RenderError::Unsupported("integers beyond 64 bits".into())
}

fn attr(v: Value, name: &str) -> Result<Value, RenderError> {
    match v {
        Value::Undefined(n) => Err(RenderError::Undefined(format!("'{n}' is undefined"))),
        Value::Loop { index0, length } => Ok(match name {
            "index" => Value::Int((index0 + 1) as i64),
            "index0" => Value::Int(index0 as i64),
            "revindex" => Value::Int((length - index0) as i64),
            "revindex0" => Value::Int((length - index0 - 1) as i64),
            "first" => Value::Bool(index0 == 0),
            "last" => Value::Bool(index0 + 1 == length),
            "length" => Value::Int(length as i64),
            "depth" => Value::Int(1),
            "depth0" => Value::Int(0),
            other => {
                return Err(RenderError::Unsupported(format!("`loop.{other}`")));
            }
        }),
        // Jinja2's sandbox makes every `_…` attribute undefined.
        _ if name.starts_with('_') => Ok(Value::Undefined(format!("unsafe attribute {name}"))),
        Value::Str(_) if is_str_method(name) => Ok(Value::Method(name.to_string())),
        Value::List(_) if is_list_method(name) => Ok(Value::Method(name.to_string())),
        other => Ok(Value::Undefined(format!(
            "{} object has no attribute {name}",
            other.type_name()
        ))),
    }
}

/// Names of `str` attributes (methods) in Python: Jinja2 returns the bound method for them.
fn is_str_method(name: &str) -> bool {
    const STR: &[&str] = &[
        "capitalize",
        "casefold",
        "center",
        "count",
        "encode",
        "endswith",
        "expandtabs",
        "find",
        "format",
        "format_map",
        "index",
        "isalnum",
        "isalpha",
        "isascii",
        "isdecimal",
        "isdigit",
        "isidentifier",
        "islower",
        "isnumeric",
        "isprintable",
        "isspace",
        "istitle",
        "isupper",
        "join",
        "ljust",
        "lower",
        "lstrip",
        "maketrans",
        "partition",
        "removeprefix",
        "removesuffix",
        "replace",
        "rfind",
        "rindex",
        "rjust",
        "rpartition",
        "rsplit",
        "rstrip",
        "split",
        "splitlines",
        "startswith",
        "strip",
        "swapcase",
        "title",
        "translate",
        "upper",
        "zfill",
    ];
    STR.contains(&name)
}

fn is_list_method(name: &str) -> bool {
    const LIST: &[&str] = &[
        "append", "clear", "copy", "count", "extend", "index", "insert", "pop", "remove",
        "reverse", "sort",
    ];
    LIST.contains(&name)
}

fn char_index(len: usize, i: i64) -> Option<usize> {
    let len = i64::try_from(len).ok()?;
    let i = if i < 0 { i + len } else { i };
    (0..len).contains(&i).then_some(i as usize)
}

fn item(v: Value, key: &Value) -> Result<Value, RenderError> {
    if let Some(e) = v.undefined_error() {
        return Err(e);
    }
    let Some(i) = key.as_int() else {
        return Ok(Value::Undefined("no such item".into()));
    };
    Ok(match v {
        Value::Str(s) => {
            let chars: Vec<char> = s.chars().collect();
            char_index(chars.len(), i)
                .and_then(|i| chars.get(i))
                .map_or_else(
                    || Value::Undefined("index out of range".into()),
                    |c| Value::Str(c.to_string()),
                )
        }
        Value::List(l) => char_index(l.len(), i).and_then(|i| l.get(i)).map_or_else(
            || Value::Undefined("index out of range".into()),
            Value::clone,
        ),
        _ => Value::Undefined("no such item".into()),
    })
}

/// Python's slice indices for a sequence of `len` items.
fn slice_indices(len: usize, start: Option<i64>, stop: Option<i64>, step: i64) -> Vec<usize> {
    let len = len as i64;
    let clamp = |v: i64, lo: i64, hi: i64| v.max(lo).min(hi);
    let norm = |v: i64| if v < 0 { v + len } else { v };
    let mut out = Vec::new();
    if step > 0 {
        let s = start.map_or(0, |v| clamp(norm(v), 0, len));
        let e = stop.map_or(len, |v| clamp(norm(v), 0, len));
        let mut i = s;
        while i < e {
            out.push(i as usize);
            i += step;
        }
    } else {
        let s = start.map_or(len - 1, |v| clamp(norm(v), -1, len - 1));
        let e = stop.map_or(-1, |v| clamp(norm(v), -1, len - 1));
        let mut i = s;
        while i > e {
            out.push(i as usize);
            i += step;
        }
    }
    out
}

fn slice(
    v: Value,
    start: Option<Value>,
    stop: Option<Value>,
    step: Option<Value>,
) -> Result<Value, RenderError> {
    if let Some(e) = v.undefined_error() {
        return Err(e);
    }
    let bound = |b: Option<Value>| -> Result<Option<i64>, RenderError> {
        match b {
            None | Some(Value::None) => Ok(None),
            Some(v) => v
                .as_int()
                .map(Some)
                .ok_or_else(|| RenderError::Type("slice indices must be integers or None".into())),
        }
    };
    let (start, stop) = (bound(start)?, bound(stop)?);
    let step = bound(step)?.unwrap_or(1);
    if step == 0 {
        return Err(RenderError::Type("slice step cannot be zero".into()));
    }
    Ok(match v {
        Value::Str(s) => {
            let chars: Vec<char> = s.chars().collect();
            Value::Str(
                slice_indices(chars.len(), start, stop, step)
                    .into_iter()
                    .filter_map(|i| chars.get(i).copied())
                    .collect(),
            )
        }
        Value::List(l) => Value::List(
            slice_indices(l.len(), start, stop, step)
                .into_iter()
                .filter_map(|i| l.get(i).cloned())
                .collect(),
        ),
        Value::Range(..) => return Err(RenderError::Unsupported("a slice of a range".into())),
        other => {
            return Err(RenderError::Type(format!(
                "'{}' object is not subscriptable",
                other.type_name()
            )))
        }
    })
}

fn py_upper(s: &str) -> String {
    s.to_uppercase()
}

fn py_capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first
            .to_uppercase()
            .chain(chars.as_str().to_lowercase().chars())
            .collect(),
        None => String::new(),
    }
}

/// Jinja2's `title` filter: every word (split at `-`, whitespace and opening brackets)
/// capitalised.
fn jinja_title(s: &str) -> String {
    let is_sep =
        |c: char| c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || c.is_whitespace();
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if !word.is_empty() {
            let mut cs = word.chars();
            if let Some(f) = cs.next() {
                out.extend(f.to_uppercase());
                out.push_str(&cs.as_str().to_lowercase());
            }
            word.clear();
        }
    };
    for c in s.chars() {
        if is_sep(c) {
            flush(&mut word, &mut out);
            out.push(c);
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Python's `str.title()`.
fn py_title(s: &str) -> String {
    let mut out = String::new();
    let mut prev_cased = false;
    for c in s.chars() {
        if prev_cased {
            out.extend(c.to_lowercase());
        } else {
            out.extend(c.to_uppercase());
        }
        prev_cased = c.is_alphabetic();
    }
    out
}

fn soft_str(v: &Value) -> Result<String, RenderError> {
    v.to_str()
}

fn arg(args: &[Value], i: usize) -> Option<&Value> {
    args.get(i)
}

/// Jinja2's filter `name` applied to `v` with `args`.
fn filter(name: &str, v: Value, args: Vec<Value>) -> Result<Value, RenderError> {
    Ok(match name {
        "upper" => Value::Str(py_upper(&soft_str(&v)?)),
        "lower" => Value::Str(soft_str(&v)?.to_lowercase()),
        "title" => Value::Str(jinja_title(&soft_str(&v)?)),
        "capitalize" => Value::Str(py_capitalize(&soft_str(&v)?)),
        "trim" => filter_trim(v, &args)?,
        "default" | "d" => filter_default(v, &args)?,
        "length" | "count" => filter_length(v)?,
        "string" => Value::Str(soft_str(&v)?),
        "join" => filter_join(v, &args)?,
        "first" => v
            .items()?
            .into_iter()
            .next()
            .unwrap_or_else(|| Value::Undefined("No first item, sequence was empty.".into())),
        "last" => v
            .items()?
            .into_iter()
            .next_back()
            .unwrap_or_else(|| Value::Undefined("No last item, sequence was empty.".into())),
        "reverse" => filter_reverse(v)?,
        "replace" => filter_replace(v, &args)?,
        "list" => Value::List(v.items()?),
        "wordcount" => Value::Int(
            soft_str(&v)?
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .count() as i64,
        ),
        "int" => filter_int(v, &args)?,
        "abs" => filter_abs(v)?,
        "center" => filter_center(v, &args)?,
        other => return Err(RenderError::Unsupported(format!("the filter `{other}`"))),
    })
}

/// `trim`: Python's `str.strip`, of the characters given or of whitespace.
fn filter_trim(v: Value, args: &[Value]) -> Result<Value, RenderError> {
    let s = soft_str(&v)?;
    Ok(match arg(args, 0) {
        Some(Value::Str(chars)) => Value::Str(s.trim_matches(|c| chars.contains(c)).to_string()),
        None | Some(Value::None) => Value::Str(s.trim_matches(is_py_space).to_string()),
        Some(_) => return Err(RenderError::Type("strip arg must be None or str".into())),
    })
}

/// `default` (`d`): the fallback for an undefined value (or, with `true`, a false one).
fn filter_default(v: Value, args: &[Value]) -> Result<Value, RenderError> {
    let fallback = arg(args, 0).cloned().unwrap_or(Value::Str(String::new()));
    let boolean = arg(args, 1).is_some_and(Value::truthy);
    let missing = matches!(v, Value::Undefined(_)) || (boolean && !v.truthy());
    Ok(if missing { fallback } else { v })
}

/// `length` (`count`): the number of characters or items.
fn filter_length(v: Value) -> Result<Value, RenderError> {
    Ok(Value::Int(match &v {
        Value::Undefined(_) => 0,
        Value::Str(s) => s.chars().count() as i64,
        Value::List(l) => l.len() as i64,
        r @ Value::Range(..) => r.items()?.len() as i64,
        other => {
            return Err(RenderError::Type(format!(
                "object of type '{}' has no len()",
                other.type_name()
            )))
        }
    }))
}

/// `join`: the items as text, with the separator given between them.
fn filter_join(v: Value, args: &[Value]) -> Result<Value, RenderError> {
    let sep = match arg(args, 0) {
        Some(s) => s.to_str()?,
        None => String::new(),
    };
    let parts: Result<Vec<String>, RenderError> = v.items()?.iter().map(Value::to_str).collect();
    Ok(Value::Str(parts?.join(&sep)))
}

/// `reverse`: a string backwards, or the items in reverse order.
fn filter_reverse(v: Value) -> Result<Value, RenderError> {
    Ok(match v {
        Value::Str(s) => Value::Str(s.chars().rev().collect()),
        // Jinja2 returns a `reversed` iterator object here.
        Value::Undefined(_) | Value::Range(..) => {
            return Err(RenderError::Unsupported("`reverse` of this value".into()))
        }
        other => {
            let mut items = other.items()?;
            items.reverse();
            Value::List(items)
        }
    })
}

/// `replace`: Python's `str.replace(old, new[, count])`.
fn filter_replace(v: Value, args: &[Value]) -> Result<Value, RenderError> {
    let s = soft_str(&v)?;
    let old = arg(args, 0)
        .map(Value::to_str)
        .transpose()?
        .ok_or_else(|| RenderError::Type("replace() missing required argument 'old'".into()))?;
    let new = arg(args, 1)
        .map(Value::to_str)
        .transpose()?
        .ok_or_else(|| RenderError::Type("replace() missing required argument 'new'".into()))?;
    Ok(match arg(args, 2) {
        None | Some(Value::None) => Value::Str(s.replace(&old, &new)),
        Some(c) => {
            let n = c
                .as_int()
                .ok_or_else(|| RenderError::Type("'count' must be an integer".into()))?;
            if n < 0 {
                Value::Str(s.replace(&old, &new))
            } else {
                Value::Str(s.replacen(&old, &new, n as usize))
            }
        }
    })
}

/// `int`: an integer, or the default given when the value is none.
fn filter_int(v: Value, args: &[Value]) -> Result<Value, RenderError> {
    let default = arg(args, 0).cloned().unwrap_or(Value::Int(0));
    Ok(match &v {
        Value::Int(_) => v,
        Value::Bool(b) => Value::Int(i64::from(*b)),
        Value::Float(f) if f.is_finite() => Value::Int(f.trunc() as i64),
        Value::Str(s) => py_int(s).map_or(default, Value::Int),
        _ => default,
    })
}

/// `abs`: the absolute value.
fn filter_abs(v: Value) -> Result<Value, RenderError> {
    Ok(match v {
        Value::Int(i) => Value::Int(i.checked_abs().ok_or_else(overflow)?),
        Value::Float(f) => Value::Float(f.abs()),
        Value::Bool(b) => Value::Int(i64::from(b)),
        other => {
            return Err(RenderError::Type(format!(
                "bad operand type for abs(): '{}'",
                other.type_name()
            )))
        }
    })
}

/// `center`: Python's `str.center(width)`.
fn filter_center(v: Value, args: &[Value]) -> Result<Value, RenderError> {
    let s = soft_str(&v)?;
    let width = match arg(args, 0) {
        Some(w) => w
            .as_int()
            .ok_or_else(|| RenderError::Type("width must be an integer".into()))?,
        None => 80,
    };
    let len = s.chars().count() as i64;
    Ok(if width <= len {
        Value::Str(s)
    } else {
        // Python's str.center: the extra space goes right when the total is odd and
        // the width even, left otherwise.
        let marg = width - len;
        let left = marg / 2 + (marg & width & 1);
        let right = marg - left;
        Value::Str(format!(
            "{}{s}{}",
            " ".repeat(left as usize),
            " ".repeat(right as usize)
        ))
    })
}

/// Python's `int(str)` then `int(float(str))`, as Jinja2's `int` filter tries them.
fn py_int(s: &str) -> Option<i64> {
    let t = s.trim_matches(is_py_space);
    let digits_ok = |d: &str| {
        !d.is_empty()
            && d.chars().all(|c| c.is_ascii_digit() || c == '_')
            && !d.starts_with('_')
            && !d.ends_with('_')
            && !d.contains("__")
    };
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if digits_ok(body) {
        let n: i64 = body.replace('_', "").parse().ok()?;
        return Some(if neg { -n } else { n });
    }
    let f: f64 = t.replace('_', "").parse().ok()?;
    f.is_finite().then(|| f.trunc() as i64)
}

fn test(name: &str, v: &Value, args: &[Value]) -> Result<bool, RenderError> {
    let other = || {
        args.first()
            .cloned()
            .unwrap_or(Value::Undefined("value".into()))
    };
    Ok(match name {
        "defined" => !matches!(v, Value::Undefined(_)),
        "undefined" => matches!(v, Value::Undefined(_)),
        "none" => matches!(v, Value::None),
        "string" => matches!(v, Value::Str(_)),
        "number" => matches!(v, Value::Int(_) | Value::Float(_) | Value::Bool(_)),
        "integer" => matches!(v, Value::Int(_)),
        "float" => matches!(v, Value::Float(_)),
        "boolean" => matches!(v, Value::Bool(_)),
        "true" => matches!(v, Value::Bool(true)),
        "false" => matches!(v, Value::Bool(false)),
        "odd" | "even" => {
            let i = v.as_int().ok_or_else(|| {
                v.undefined_error().unwrap_or_else(|| {
                    RenderError::Type(format!(
                        "not all arguments converted during string formatting ({})",
                        v.type_name()
                    ))
                })
            })?;
            (i.rem_euclid(2) == 1) == (name == "odd")
        }
        "divisibleby" => {
            let (Some(a), Some(b)) = (v.as_int(), other().as_int()) else {
                return Err(RenderError::Type("divisibleby needs integers".into()));
            };
            if b == 0 {
                return Err(RenderError::Type(
                    "integer division or modulo by zero".into(),
                ));
            }
            a.rem_euclid(b) == 0
        }
        "eq" | "equalto" | "==" => py_equal(v, &other()),
        "ne" | "!=" => !py_equal(v, &other()),
        "lt" | "<" | "lessthan" => compare(v, &other())? == std::cmp::Ordering::Less,
        "le" | "<=" => compare(v, &other())? != std::cmp::Ordering::Greater,
        "gt" | ">" | "greaterthan" => compare(v, &other())? == std::cmp::Ordering::Greater,
        "ge" | ">=" => compare(v, &other())? != std::cmp::Ordering::Less,
        "in" => contains(&other(), v)?,
        "lower" => match v {
            Value::Str(s) => {
                s.chars().any(char::is_lowercase) && !s.chars().any(char::is_uppercase)
            }
            Value::Undefined(_) => false,
            _ => false,
        },
        "upper" => match v {
            Value::Str(s) => {
                s.chars().any(char::is_uppercase) && !s.chars().any(char::is_lowercase)
            }
            _ => false,
        },
        "sequence" | "iterable" => {
            matches!(v, Value::Str(_) | Value::List(_) | Value::Undefined(_))
        }
        "mapping" => false,
        other => return Err(RenderError::Unsupported(format!("the test `{other}`"))),
    })
}

fn compare(a: &Value, b: &Value) -> Result<std::cmp::Ordering, RenderError> {
    if let Some(e) = a.undefined_error().or_else(|| b.undefined_error()) {
        return Err(e);
    }
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => Ok(x.cmp(y)),
        (x, y) => match (x.as_f64(), y.as_f64()) {
            (Some(p), Some(q)) => p
                .partial_cmp(&q)
                .ok_or_else(|| RenderError::Unsupported("comparisons with NaN".into())),
            _ => Err(RenderError::Type(format!(
                "'<' not supported between instances of '{}' and '{}'",
                x.type_name(),
                y.type_name()
            ))),
        },
    }
}

fn contains(container: &Value, needle: &Value) -> Result<bool, RenderError> {
    match container {
        Value::Str(h) => match needle {
            Value::Str(n) => Ok(h.contains(n.as_str())),
            other => Err(RenderError::Type(format!(
                "'in <string>' requires string as left operand, not {}",
                other.type_name()
            ))),
        },
        Value::List(items) => Ok(items.iter().any(|i| py_equal(i, needle))),
        Value::Undefined(_) => Err(container.undefined_error().unwrap_or(RenderError::Corrupt)),
        other => Err(RenderError::Type(format!(
            "argument of type '{}' is not iterable",
            other.type_name()
        ))),
    }
}

fn binop(op: BinOp, l: Value, r: Value) -> Result<Value, RenderError> {
    use BinOp as B;
    match op {
        B::Concat => return Ok(Value::Str(format!("{}{}", l.to_str()?, r.to_str()?))),
        B::Eq => return Ok(Value::Bool(py_equal(&l, &r))),
        B::Ne => return Ok(Value::Bool(!py_equal(&l, &r))),
        B::Lt => return Ok(Value::Bool(compare(&l, &r)? == std::cmp::Ordering::Less)),
        B::Le => return Ok(Value::Bool(compare(&l, &r)? != std::cmp::Ordering::Greater)),
        B::Gt => return Ok(Value::Bool(compare(&l, &r)? == std::cmp::Ordering::Greater)),
        B::Ge => return Ok(Value::Bool(compare(&l, &r)? != std::cmp::Ordering::Less)),
        B::In => return Ok(Value::Bool(contains(&r, &l)?)),
        B::NotIn => return Ok(Value::Bool(!contains(&r, &l)?)),
        _ => {}
    }
    if let Some(e) = l.undefined_error().or_else(|| r.undefined_error()) {
        return Err(e);
    }
    let type_error = |l: &Value, r: &Value| {
        RenderError::Type(format!(
            "unsupported operand types: '{}' and '{}'",
            l.type_name(),
            r.type_name()
        ))
    };
    match (op, &l, &r) {
        (B::Add, Value::Str(a), Value::Str(b)) => return Ok(Value::Str(format!("{a}{b}"))),
        (B::Add, Value::List(a), Value::List(b)) => {
            return Ok(Value::List(a.iter().chain(b).cloned().collect()))
        }
        (B::Mul, Value::Str(s), n) | (B::Mul, n, Value::Str(s)) if n.as_int().is_some() => {
            let n = n.as_int().unwrap_or(0).max(0) as usize;
            if s.len().saturating_mul(n) > 1 << 24 {
                return Err(RenderError::Unsupported("strings this large".into()));
            }
            return Ok(Value::Str(s.repeat(n)));
        }
        (B::Rem, Value::Str(_), _) => {
            return Err(RenderError::Unsupported("`%` string formatting".into()))
        }
        _ => {}
    }
    if let (Some(a), Some(b)) = (l.as_int(), r.as_int()) {
        return Ok(match op {
            B::Add => Value::Int(a.checked_add(b).ok_or_else(overflow)?),
            B::Sub => Value::Int(a.checked_sub(b).ok_or_else(overflow)?),
            B::Mul => Value::Int(a.checked_mul(b).ok_or_else(overflow)?),
            B::Div => {
                if b == 0 {
                    return Err(RenderError::Type("division by zero".into()));
                }
                Value::Float(a as f64 / b as f64)
            }
            B::FloorDiv | B::Rem => {
                if b == 0 {
                    return Err(RenderError::Type(
                        "integer division or modulo by zero".into(),
                    ));
                }
                let q = a.div_euclid(b) - i64::from(b < 0 && a.rem_euclid(b) != 0);
                let m = a - q * b;
                Value::Int(if op == B::FloorDiv { q } else { m })
            }
            B::Pow => {
                if b < 0 {
                    Value::Float((a as f64).powf(b as f64))
                } else {
                    let e = u32::try_from(b).map_err(|_| overflow())?;
                    Value::Int(a.checked_pow(e).ok_or_else(overflow)?)
                }
            }
            _ => return Err(type_error(&l, &r)),
        });
    }
    let (Some(a), Some(b)) = (l.as_f64(), r.as_f64()) else {
        return Err(type_error(&l, &r));
    };
    Ok(Value::Float(match op {
        B::Add => a + b,
        B::Sub => a - b,
        B::Mul => a * b,
        B::Div | B::FloorDiv | B::Rem if b == 0.0 => {
            return Err(RenderError::Type("float division by zero".into()))
        }
        B::Div => a / b,
        B::FloorDiv => (a / b).floor(),
        B::Rem => a - b * (a / b).floor(),
        B::Pow => a.powf(b),
        _ => return Err(type_error(&l, &r)),
    }))
}

fn method(v: Value, name: &str, args: Vec<Value>) -> Result<Value, RenderError> {
    match &v {
        Value::Str(s) if is_str_method(name) => str_method(s, name, &args),
        Value::Undefined(n) => Err(RenderError::Undefined(format!("'{n}' is undefined"))),
        other => Err(RenderError::Unsupported(format!(
            "calling `{name}` on a {} value",
            other.type_name()
        ))),
    }
}

/// Applies a string method to its receiver (the compiler emits the receiver, then the args).
fn str_method(s: &str, name: &str, args: &[Value]) -> Result<Value, RenderError> {
    let str_arg = |i: usize| -> Result<Option<String>, RenderError> {
        match args.get(i) {
            None | Some(Value::None) => Ok(None),
            Some(Value::Str(s)) => Ok(Some(s.clone())),
            Some(other) => Err(RenderError::Type(format!(
                "must be str or None, not {}",
                other.type_name()
            ))),
        }
    };
    Ok(match name {
        "upper" => Value::Str(py_upper(s)),
        "lower" => Value::Str(s.to_lowercase()),
        "title" => Value::Str(py_title(s)),
        "capitalize" => Value::Str(py_capitalize(s)),
        "strip" | "lstrip" | "rstrip" => {
            let chars = str_arg(0)?;
            let pred = |c: char| match &chars {
                Some(cs) => cs.contains(c),
                None => is_py_space(c),
            };
            Value::Str(
                match name {
                    "strip" => s.trim_matches(pred),
                    "lstrip" => s.trim_start_matches(pred),
                    _ => s.trim_end_matches(pred),
                }
                .to_string(),
            )
        }
        "startswith" | "endswith" => {
            let p = str_arg(0)?
                .ok_or_else(|| RenderError::Type(format!("{name}() takes at least 1 argument")))?;
            Value::Bool(if name == "startswith" {
                s.starts_with(&p)
            } else {
                s.ends_with(&p)
            })
        }
        "replace" => {
            let (Some(old), Some(new)) = (str_arg(0)?, str_arg(1)?) else {
                return Err(RenderError::Type(
                    "replace expected at least 2 arguments".into(),
                ));
            };
            match args.get(2).and_then(Value::as_int) {
                Some(n) if n >= 0 => Value::Str(s.replacen(&old, &new, n as usize)),
                _ => Value::Str(s.replace(&old, &new)),
            }
        }
        other => return Err(RenderError::Unsupported(format!("the method `{other}`"))),
    })
}

fn range(args: &[Value]) -> Result<Value, RenderError> {
    let ints: Option<Vec<i64>> = args.iter().map(Value::as_int).collect();
    let ints = ints.ok_or_else(|| RenderError::Type("range() takes integers".into()))?;
    let (start, stop, step) = match ints.as_slice() {
        [e] => (0, *e, 1),
        [s, e] => (*s, *e, 1),
        [s, e, st] => (*s, *e, *st),
        _ => return Err(RenderError::Type("range expected 1 to 3 arguments".into())),
    };
    if step == 0 {
        return Err(RenderError::Type("range() arg 3 must not be zero".into()));
    }
    let r = Value::Range(start, stop, step);
    if range_items(&r).is_none() {
        return Err(RenderError::Type(
            "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).".into(),
        ));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_python() {
        assert_eq!(py_float(1.0), "1.0");
        assert_eq!(py_float(0.1), "0.1");
        assert_eq!(py_float(1e20), "1e+20");
        assert_eq!(py_float(1.5e-7), "1.5e-07");
        assert_eq!(py_float(123456.0), "123456.0");
        assert_eq!(py_float(-0.0001), "-0.0001");
    }

    #[test]
    fn round_trips_and_renders() {
        let p = Program {
            ops: vec![
                Op::Text("Hi ".into()),
                Op::Var("name".into()),
                Op::Filter(0, 0),
                Op::Emit,
                Op::Int(-7),
                Op::Float(2.5),
                Op::Bin(BinOp::Add),
                Op::Emit,
            ],
        };
        let bytes = p.encode();
        assert_eq!(Program::decode(&bytes), Some(p.clone()));
        assert_eq!(
            render(&p, "", &[("name", "ada")]).as_deref(),
            Ok("Hi ADA-4.5")
        );
        let spans = Program {
            ops: vec![Op::Span(0, 3)],
        };
        assert_eq!(render(&spans, "abcd", &[]).as_deref(), Ok("abc"));
        assert_eq!(render(&spans, "ab", &[]), Err(RenderError::Corrupt));
        assert_eq!(Program::decode(&[99]), None);
    }
}
