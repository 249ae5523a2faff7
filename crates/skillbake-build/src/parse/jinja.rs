//! Bodies as Jinja2 templates, the way DB-GPT treats them: `PromptTemplate.from_template(body,
//! template_format="jinja2")` parses the body with a default `jinja2.Environment()` and lists its
//! variables with `jinja2.meta.find_undeclared_variables`, which compiles the template; either
//! step raising makes DB-GPT's `load_skill` fail.
//!
//! The grammar is MiniJinja's parser (the Rust port by Jinja's author) with Jinja2's defaults:
//! `{{ }}`, `{% %}`, `{# #}` delimiters, no line statements or line comments, no extensions.
//! On top of it, this module reproduces what Jinja2 does differently, each measured against
//! Jinja2 itself by the conformance corpus (`tests/fixtures/jinja/`):
//!
//! * lexical differences: unary `+` (Jinja2 has it, MiniJinja does not), `+}}` (a whitespace
//!   marker in MiniJinja, a dangling `+` in Jinja2), floats written `1.` or `1.e5`, a trailing
//!   comma in `{% from … import a, %}`;
//! * Jinja2's compile-time checks: unknown filters and tests (outside `{% if %}` and inline
//!   `if` expressions, where Jinja2 defers them to run time), `{% do %}` (an extension),
//!   assigning to `loop` in a `for` target, `{% extends %}` below the top level, a macro's
//!   `caller` parameter without a default;
//! * the variable list: Jinja2's scoping rules (`idtracking`), frame by frame, so that
//!   [`Analysis::vars`] is exactly what DB-GPT records as the template's `input_variables`.

use minijinja::machinery::{ast, parse as mj_parse, tokenize, Token};
use skillbake_format::suggest::{closest, did_you_mean};
use std::collections::{BTreeSet, HashMap, HashSet};

/// Filters of a default `jinja2.Environment()` (Jinja2 3.1).
pub const JINJA2_FILTERS: &[&str] = &[
    "abs",
    "attr",
    "batch",
    "capitalize",
    "center",
    "count",
    "d",
    "default",
    "dictsort",
    "e",
    "escape",
    "filesizeformat",
    "first",
    "float",
    "forceescape",
    "format",
    "groupby",
    "indent",
    "int",
    "items",
    "join",
    "last",
    "length",
    "list",
    "lower",
    "map",
    "max",
    "min",
    "pprint",
    "random",
    "reject",
    "rejectattr",
    "replace",
    "reverse",
    "round",
    "safe",
    "select",
    "selectattr",
    "slice",
    "sort",
    "string",
    "striptags",
    "sum",
    "title",
    "tojson",
    "trim",
    "truncate",
    "unique",
    "upper",
    "urlencode",
    "urlize",
    "wordcount",
    "wordwrap",
    "xmlattr",
];

/// Tests of a default `jinja2.Environment()` (Jinja2 3.1).
pub const JINJA2_TESTS: &[&str] = &[
    "!=",
    "<",
    "<=",
    "==",
    ">",
    ">=",
    "boolean",
    "callable",
    "defined",
    "divisibleby",
    "eq",
    "equalto",
    "escaped",
    "even",
    "false",
    "filter",
    "float",
    "ge",
    "greaterthan",
    "gt",
    "in",
    "integer",
    "iterable",
    "le",
    "lessthan",
    "lower",
    "lt",
    "mapping",
    "ne",
    "none",
    "number",
    "odd",
    "sameas",
    "sequence",
    "string",
    "test",
    "true",
    "undefined",
    "upper",
];

/// Globals of a default `jinja2.Environment()`: never listed as variables.
pub const JINJA2_GLOBALS: &[&str] = &["cycler", "dict", "joiner", "lipsum", "namespace", "range"];

/// Why Jinja2 would refuse a template, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JinjaError {
    /// Byte offset of the offending text in the template.
    pub start: usize,
    /// Byte offset just past it (at least `start`).
    pub end: usize,
    /// What Jinja2 objects to.
    pub message: String,
}

/// What DB-GPT learns from a template that parses.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Analysis {
    /// The variables the template reads from its context, sorted (DB-GPT's `input_variables`).
    pub vars: Vec<String>,
}

/// Parses `src` as DB-GPT's Jinja2 would, or says why Jinja2 would raise.
#[cfg(test)]
pub fn analyse(src: &str) -> Result<Analysis, JinjaError> {
    with_tree(src, |body, _| Analysis {
        vars: undeclared(body),
    })
}

/// Parses `src` as `analyse` (the tests' entry point) does and hands the statements to `f`,
/// with whether the tree means exactly what Jinja2's does (false when a Jinja2-only construct
/// was rewritten into one MiniJinja parses with the same verdict: then it is good for verdicts
/// and variables only).
pub fn with_tree<R>(
    src: &str,
    f: impl FnOnce(&[ast::Stmt<'_>], bool) -> R,
) -> Result<R, JinjaError> {
    let Lexed {
        rewritten,
        dotted_exponent,
    } = lexical_pass(src)?;
    let text = rewritten.as_deref().unwrap_or(src);
    let tree = mj_parse(text, "SKILL.md", Default::default()).map_err(|e| {
        let range = e.range().unwrap_or(0..0);
        let detail = e
            .detail()
            .map_or_else(|| e.kind().to_string(), str::to_string);
        parse_error(
            text,
            range.start.min(src.len()),
            range.end.min(src.len()),
            &detail,
        )
    })?;
    let body = match &tree {
        ast::Stmt::Template(t) => &t.children[..],
        other => std::slice::from_ref(other),
    };
    Checker::default().stmts(body, Frame::Top)?;
    // The rewritten spots (unary `+`, tuples, `x[]`, a trailing `{#`) and `1.e5` (an attribute
    // of `1` in Jinja2, a float in MiniJinja) parse alike but do not render alike.
    let exact = rewritten.is_none() && !dotted_exponent;
    Ok(f(body, exact))
}

/// A parser error, pointed at the construct that is never closed when the parser only noticed at
/// the end of the text.
fn parse_error(src: &str, start: usize, end: usize, detail: &str) -> JinjaError {
    // Where the last token the lexer accepted ends: an unclosed comment or raw block starts after.
    let last_ok = tokenize(src, false, Default::default())
        .map_while(Result::ok)
        .last()
        .map_or(0, |(_, span)| span.end_offset as usize)
        .min(src.len());
    let opener = |open: &str| {
        src.get(last_ok..)
            .and_then(|rest| rest.find(open))
            .map(|i| (last_ok + i, last_ok + i + open.len()))
    };
    let (found, message) = match detail {
        "unexpected end of comment" => (
            opener("{#"),
            "`{#` opens a comment that is never closed with `#}`".to_string(),
        ),
        "unexpected end of raw block" => (
            opener("{%"),
            "`{% raw %}` is never closed with `{% endraw %}`".to_string(),
        ),
        other => (None, other.to_string()),
    };
    let (start, end) = found.unwrap_or((start, end.max(start)));
    JinjaError {
        start,
        end,
        message,
    }
}

// ---------------------------------------------------------------------------------------------
// Lexical differences

/// Checks what Jinja2's lexer and tuple grammar see differently, and returns the template
/// rewritten, byte for byte at the same offsets, into one MiniJinja parses with the same verdict:
/// unary `+` blanked, the commas of Jinja2's bare tuples (`{{ a, b }}`, `x[1, 2]`,
/// `{% if a, b %}`, `{% for x in a, b %}`) turned into `~`, an empty subscript `x[]` blanked,
/// and a trailing `{#` or `{% raw %}` (which Jinja2 reads as text) blanked.
fn lexical_pass(src: &str) -> Result<Lexed, JinjaError> {
    let tokens: Vec<(Token<'_>, usize, usize)> = tokenize(src, false, Default::default())
        // A lexing error is reported by the parser, with the same position.
        .map_while(Result::ok)
        .map(|(t, span)| (t, span.start_offset as usize, span.end_offset as usize))
        .filter(|(t, _, _)| !matches!(t, Token::TemplateData(_)))
        .collect();
    let mut pass = Lexical::default();
    for (i, (tok, start, end)) in tokens.iter().enumerate() {
        let at = At {
            tok,
            text: src.get(*start..*end).unwrap_or(""),
            start: *start,
            end: *end,
            prev: i.checked_sub(1).map(|p| &tokens[p].0),
            next: tokens.get(i + 1).map(|t| &t.0),
        };
        if let Some(e) = pass.refusal(&at) {
            return Err(e);
        }
        pass.track(&at);
        pass.rewrite(&at);
    }
    let dotted_exponent = tokens
        .iter()
        .any(|(t, start, end)| is_dotted_exponent(src, t, *start, *end));
    let mut edits = pass.edits;
    blank_trailing_opener(src, &mut edits);
    if edits.is_empty() {
        return Ok(Lexed {
            rewritten: None,
            dotted_exponent,
        });
    }
    let mut bytes = src.as_bytes().to_vec();
    for (i, b) in edits {
        if let Some(slot) = bytes.get_mut(i) {
            *slot = b;
        }
    }
    Ok(Lexed {
        rewritten: String::from_utf8(bytes).ok(),
        dotted_exponent,
    })
}

/// Whether `src` holds an opening delimiter, `{{`, `{%` or `{#` (with Jinja2's defaults and no
/// line statements, the only way out of text): without one, a template is its text.
pub fn has_opener(src: &str) -> bool {
    let b = src.as_bytes();
    memchr::memchr_iter(b'{', b).any(|i| matches!(b.get(i + 1), Some(b'{' | b'%' | b'#')))
}

/// What the lexical pass found.
struct Lexed {
    /// The text with its rewrites, when it made any.
    rewritten: Option<String>,
    /// Whether a float literal is written `1.e5` (see [`is_dotted_exponent`]).
    dotted_exponent: bool,
}

/// One token of the lexical pass, with its text, span and neighbours.
struct At<'t, 's> {
    tok: &'t Token<'s>,
    text: &'t str,
    start: usize,
    end: usize,
    prev: Option<&'t Token<'s>>,
    next: Option<&'t Token<'s>>,
}

/// What the lexical pass knows at a token, and the byte edits it makes.
#[derive(Default)]
struct Lexical<'s> {
    /// The first identifier of the current `{% ... %}` block.
    block_tag: Option<&'s str>,
    /// Whether `in` was seen in the current `{% for %}`.
    seen_in: bool,
    /// Inside `{{ ... }}`.
    in_print: bool,
    /// Open brackets: (kind, is a subscript).
    brackets: Vec<(u8, bool)>,
    /// (offset, replacement byte).
    edits: Vec<(usize, u8)>,
}

impl<'s> Lexical<'s> {
    /// What Jinja2 refuses at this token where MiniJinja would not.
    fn refusal(&self, at: &At<'_, 's>) -> Option<JinjaError> {
        let (start, end, text) = (at.start, at.end, at.text);
        let error = |start: usize, end: usize, message: String| {
            Some(JinjaError {
                start,
                end,
                message,
            })
        };
        match at.tok {
            Token::VariableEnd if text.starts_with('+') => error(
                start,
                start + 1,
                "unexpected 'end of print statement' after `+`".into(),
            ),
            Token::BlockEnd
                if self.block_tag == Some("from") && matches!(at.prev, Some(Token::Comma)) =>
            {
                error(start, end, "expected a name to import after `,`".into())
            }
            Token::Float(_) if text.ends_with('.') => error(
                start,
                end,
                format!(
                    "`{text}` is not a number Jinja2 reads: expected a name or a digit after `.`"
                ),
            ),
            Token::Int(_) | Token::Int128(_) | Token::Float(_)
                if text.contains("__") || text.ends_with('_') =>
            {
                error(
                    start,
                    end,
                    format!(
                        "`{text}` is not a number Jinja2 reads: `_` must stand between two digits"
                    ),
                )
            }
            Token::Comma
                if self.block_tag == Some("for")
                    && !self.seen_in
                    && matches!(at.next, Some(Token::Ident("in"))) =>
            {
                error(
                    start,
                    end,
                    "expected a name after `,` in the loop target".into(),
                )
            }
            Token::Ident("set")
                if matches!(at.prev, Some(Token::BlockStart))
                    && matches!(at.next, Some(Token::BlockEnd)) =>
            {
                error(
                    start,
                    end,
                    "Expected an expression, got 'end of statement block'".into(),
                )
            }
            _ => None,
        }
    }

    /// Follows blocks, prints, `for … in` and brackets.
    fn track(&mut self, at: &At<'_, 's>) {
        match at.tok {
            Token::BlockStart => {
                self.block_tag = match at.next {
                    Some(Token::Ident(name)) => Some(name),
                    _ => None,
                };
                self.seen_in = false;
                self.brackets.clear();
            }
            Token::VariableStart => {
                self.in_print = true;
                self.brackets.clear();
            }
            Token::VariableEnd => self.in_print = false,
            Token::BlockEnd => self.block_tag = None,
            Token::Ident("in") if self.block_tag == Some("for") && self.brackets.is_empty() => {
                self.seen_in = true;
            }
            Token::Ident("if" | "recursive")
                if self.block_tag == Some("for") && self.seen_in && self.brackets.is_empty() =>
            {
                self.seen_in = false;
            }
            _ => {}
        }
    }

    /// The edits that make MiniJinja read what Jinja2 reads: a unary `+` blanked, `x[]`
    /// blanked, and the commas of bare tuples turned into `~` (a trailing one blanked).
    fn rewrite(&mut self, at: &At<'_, 's>) {
        let start = at.start;
        match at.tok {
            Token::Plus if at.prev.is_none_or(starts_operand) => self.edits.push((start, b' ')),
            Token::BracketOpen => {
                let subscript = at.prev.is_some_and(ends_operand);
                if subscript && matches!(at.next, Some(Token::BracketClose)) {
                    // `x[]` is `x[()]` in Jinja2.
                    self.edits.push((start, b' '));
                    self.edits.push((start + 1, b' '));
                }
                self.brackets.push((b'[', subscript));
            }
            Token::ParenOpen => self.brackets.push((b'(', false)),
            Token::BraceOpen => self.brackets.push((b'{', false)),
            Token::BracketClose | Token::ParenClose | Token::BraceClose => {
                self.brackets.pop();
            }
            Token::Comma => self.comma(at),
            _ => {}
        }
    }

    /// A comma of a bare tuple (a print, an `if`, a loop's iterable, a subscript) becomes `~`;
    /// a trailing one makes a one-element tuple.
    fn comma(&mut self, at: &At<'_, 's>) {
        let bare_tuple = match self.brackets.last() {
            None => {
                self.in_print
                    || matches!(self.block_tag, Some("if" | "elif"))
                    || (self.block_tag == Some("for") && self.seen_in)
            }
            Some((b'[', true)) => true,
            Some(_) => false,
        };
        if !bare_tuple {
            return;
        }
        let closes = matches!(
            at.next,
            Some(Token::VariableEnd | Token::BlockEnd | Token::BracketClose) | None
        );
        match (closes, self.brackets.last()) {
            // `x[1,]` is an error in Jinja2 too: leave it to the parser.
            (true, Some(_)) => {}
            (true, None) => self.edits.push((at.start, b' ')),
            (false, _) => self.edits.push((at.start, b'~')),
        }
    }
}

/// Jinja2's lexer reads a template that ends in `{#` (or `{#-`, `{#+`) or in a `{% raw %}` tag
/// with nothing after it as text (unless the `{` belongs to a `{{` before it).
fn blank_trailing_opener(full: &str, edits: &mut Vec<(usize, u8)>) {
    // Jinja2 drops one trailing newline before lexing (`keep_trailing_newline=False`).
    let src = ["\r\n", "\n", "\r"]
        .iter()
        .find_map(|nl| full.strip_suffix(nl))
        .unwrap_or(full);
    let mut blank = |from: usize| {
        if !src[..from].ends_with('{') {
            edits.extend((from..full.len()).map(|i| (i, b' ')));
        }
    };
    for end in ["{#", "{#-", "{#+"] {
        if src.ends_with(end) {
            blank(src.len() - end.len());
            return;
        }
    }
    if let Some(inner) = src.strip_suffix("%}") {
        let Some(open) = inner.rfind("{%") else {
            return;
        };
        let tag = inner[open + 2..]
            .trim_start_matches(['-', '+'])
            .trim_end_matches(['-', '+'])
            .trim();
        if tag == "raw" {
            blank(open);
        }
    }
}

/// True when a token ends an operand (so a `[` after it is a subscript).
fn ends_operand(t: &Token<'_>) -> bool {
    match t {
        Token::Ident(k) => !matches!(
            *k,
            "and" | "or" | "not" | "in" | "if" | "else" | "is" | "elif" | "for" | "set"
        ),
        Token::Str(_)
        | Token::String(_)
        | Token::Int(_)
        | Token::Int128(_)
        | Token::Float(_)
        | Token::ParenClose
        | Token::BracketClose
        | Token::BraceClose => true,
        _ => false,
    }
}

/// Whether token `t` at `start..end` of `src` is a float literal of MiniJinja's written `1.e5`,
/// which Jinja2 reads as `1` and an attribute.
fn is_dotted_exponent(src: &str, t: &Token<'_>, start: usize, end: usize) -> bool {
    matches!(t, Token::Float(_))
        && src
            .get(start..end)
            .is_some_and(|t| t.contains(".e") || t.contains(".E"))
}

/// True when a token is followed by an operand (so a `+` after it is unary).
fn starts_operand(t: &Token<'_>) -> bool {
    match t {
        Token::Ident(k) => matches!(
            *k,
            "and" | "or" | "not" | "in" | "if" | "else" | "elif" | "for" | "set" | "do" | "with"
        ),
        Token::VariableStart
        | Token::BlockStart
        | Token::Plus
        | Token::Minus
        | Token::Mul
        | Token::Div
        | Token::FloorDiv
        | Token::Pow
        | Token::Mod
        | Token::Comma
        | Token::Colon
        | Token::Tilde
        | Token::Assign
        | Token::Eq
        | Token::Ne
        | Token::Gt
        | Token::Gte
        | Token::Lt
        | Token::Lte
        | Token::ParenOpen
        | Token::BracketOpen
        | Token::BraceOpen => true,
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------------
// Compile-time checks

/// Where a statement sits, for the checks that depend on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    /// The template's top level, or inside `{% if %}` there (Jinja2 keeps it top level).
    Top,
    /// Inside a loop, macro, block or other scope.
    Inner,
}

#[derive(Default)]
struct Checker {
    /// Depth of `{% if %}` / inline `if` frames (Jinja2's "soft" frames), reset by scopes.
    soft: Vec<bool>,
}

fn err(span: minijinja::machinery::Span, message: String) -> JinjaError {
    JinjaError {
        start: span.start_offset as usize,
        end: span.end_offset as usize,
        message,
    }
}

impl Checker {
    fn is_soft(&self) -> bool {
        self.soft.last().copied().unwrap_or(false)
    }

    fn scoped<T>(
        &mut self,
        soft: bool,
        f: impl FnOnce(&mut Self) -> Result<T, JinjaError>,
    ) -> Result<T, JinjaError> {
        self.soft.push(soft);
        let r = f(self);
        self.soft.pop();
        r
    }

    fn stmts(&mut self, stmts: &[ast::Stmt<'_>], frame: Frame) -> Result<(), JinjaError> {
        stmts.iter().try_for_each(|s| self.stmt(s, frame))
    }

    fn stmt(&mut self, stmt: &ast::Stmt<'_>, frame: Frame) -> Result<(), JinjaError> {
        use ast::Stmt as S;
        match stmt {
            S::Template(t) => self.stmts(&t.children, frame),
            S::EmitExpr(e) => self.expr(&e.expr),
            S::EmitRaw(_) => Ok(()),
            S::ForLoop(f) => {
                if let Some(span) = stores_loop(&f.target) {
                    return Err(err(
                        span,
                        "Can't assign to special loop variable in for-loop target".into(),
                    ));
                }
                self.expr(&f.iter)?;
                self.scoped(false, |c| {
                    if let Some(fe) = &f.filter_expr {
                        c.expr(fe)?;
                    }
                    c.stmts(&f.body, Frame::Inner)?;
                    c.stmts(&f.else_body, Frame::Inner)
                })
            }
            S::IfCond(i) => self.scoped(true, |c| {
                c.expr(&i.expr)?;
                c.stmts(&i.true_body, frame)?;
                c.stmts(&i.false_body, frame)
            }),
            S::WithBlock(w) => {
                for (_, value) in &w.assignments {
                    self.expr(value)?;
                }
                self.scoped(false, |c| c.stmts(&w.body, Frame::Inner))
            }
            S::Set(s) => self.expr(&s.expr),
            S::SetBlock(s) => self.scoped(false, |c| {
                if let Some(f) = &s.filter {
                    c.expr(f)?;
                }
                c.stmts(&s.body, Frame::Inner)
            }),
            S::AutoEscape(a) => {
                self.expr(&a.enabled)?;
                self.stmts(&a.body, frame)
            }
            S::FilterBlock(f) => self.scoped(false, |c| {
                c.expr(&f.filter)?;
                c.stmts(&f.body, Frame::Inner)
            }),
            S::Block(b) => self.scoped(false, |c| c.stmts(&b.body, Frame::Inner)),
            S::Import(i) => self.expr(&i.expr),
            S::FromImport(i) => {
                if i.names.is_empty() {
                    return Err(err(i.span(), "expected a name to import".into()));
                }
                self.expr(&i.expr)
            }
            S::Extends(e) => {
                if frame != Frame::Top {
                    return Err(err(
                        e.span(),
                        "cannot use extend from a non top-level scope".into(),
                    ));
                }
                self.expr(&e.name)
            }
            S::Include(i) => self.expr(&i.name),
            S::Macro(m) => self.macro_body(&m.args, &m.defaults, &m.body, m.span()),
            S::CallBlock(c) => {
                self.call(&c.call)?;
                let m = &c.macro_decl;
                self.macro_body(&m.args, &m.defaults, &m.body, m.span())
            }
            S::Do(d) => Err(err(
                d.span(),
                "Encountered unknown tag 'do' (it needs the `jinja2.ext.do` extension)".into(),
            )),
        }
    }

    fn macro_body(
        &mut self,
        args: &[ast::Expr<'_>],
        defaults: &[ast::Expr<'_>],
        body: &[ast::Stmt<'_>],
        span: minijinja::machinery::Span,
    ) -> Result<(), JinjaError> {
        let names: Vec<&str> = args.iter().filter_map(var_name).collect();
        if let Some(idx) = names.iter().position(|n| *n == "caller") {
            let without_default = idx < names.len().saturating_sub(defaults.len());
            if without_default && loads_before_store(body, "caller") {
                return Err(err(
                    span,
                    "When defining macros or call blocks the special \"caller\" argument must be omitted or be given a default.".into(),
                ));
            }
        }
        self.scoped(false, |c| {
            defaults.iter().try_for_each(|d| c.expr(d))?;
            c.stmts(body, Frame::Inner)
        })
    }

    fn call(&mut self, call: &ast::Call<'_>) -> Result<(), JinjaError> {
        self.expr(&call.expr)?;
        self.args(&call.args)
    }

    fn args(&mut self, args: &[ast::CallArg<'_>]) -> Result<(), JinjaError> {
        // Jinja2's order: positional, `*args` (once), keywords, `**kwargs` (once, last).
        let (mut star, mut star2, mut kw) = (false, false, false);
        for a in args {
            let ok = match a {
                ast::CallArg::Pos(_) => !(star || star2 || kw),
                ast::CallArg::PosSplat(_) => !(star || star2),
                ast::CallArg::Kwarg(..) => !star2,
                ast::CallArg::KwargSplat(_) => !star2,
            };
            if !ok {
                let e = match a {
                    ast::CallArg::Pos(e)
                    | ast::CallArg::Kwarg(_, e)
                    | ast::CallArg::PosSplat(e)
                    | ast::CallArg::KwargSplat(e) => e,
                };
                return Err(err(
                    e.span(),
                    "invalid syntax for function call expression".into(),
                ));
            }
            match a {
                ast::CallArg::Pos(_) => {}
                ast::CallArg::PosSplat(_) => star = true,
                ast::CallArg::Kwarg(..) => kw = true,
                ast::CallArg::KwargSplat(_) => star2 = true,
            }
        }
        for a in args {
            match a {
                ast::CallArg::Pos(e)
                | ast::CallArg::Kwarg(_, e)
                | ast::CallArg::PosSplat(e)
                | ast::CallArg::KwargSplat(e) => self.expr(e)?,
            }
        }
        Ok(())
    }

    fn expr(&mut self, expr: &ast::Expr<'_>) -> Result<(), JinjaError> {
        use ast::Expr as E;
        match expr {
            E::Var(_) | E::Const(_) => Ok(()),
            E::Slice(s) => {
                self.expr(&s.expr)?;
                for e in [&s.start, &s.stop, &s.step].into_iter().flatten() {
                    self.expr(e)?;
                }
                Ok(())
            }
            E::UnaryOp(u) => self.expr(&u.expr),
            E::BinOp(b) => {
                self.expr(&b.left)?;
                self.expr(&b.right)
            }
            E::Compare(c) => {
                self.expr(&c.expr)?;
                c.ops.iter().try_for_each(|op| self.expr(&op.expr))
            }
            E::IfExpr(i) => self.scoped(true, |c| {
                c.expr(&i.test_expr)?;
                c.expr(&i.true_expr)?;
                match &i.false_expr {
                    Some(f) => c.expr(f),
                    None => Ok(()),
                }
            }),
            E::Filter(f) => {
                if !self.is_soft() && !JINJA2_FILTERS.contains(&f.name) {
                    return Err(err(f.span(), unknown("filter", f.name, JINJA2_FILTERS)));
                }
                if let Some(e) = &f.expr {
                    self.expr(e)?;
                }
                self.args(&f.args)
            }
            E::Test(t) => {
                if !self.is_soft() && !JINJA2_TESTS.contains(&t.name) {
                    return Err(err(t.span(), unknown("test", t.name, JINJA2_TESTS)));
                }
                self.expr(&t.expr)?;
                self.args(&t.args)
            }
            E::GetAttr(g) => self.expr(&g.expr),
            E::GetItem(g) => {
                self.expr(&g.expr)?;
                self.expr(&g.subscript_expr)
            }
            E::Call(c) => self.call(c),
            E::List(l) => l.items.iter().try_for_each(|e| self.expr(e)),
            E::Tuple(t) => t.items.iter().try_for_each(|e| self.expr(e)),
            E::Map(m) => {
                m.keys.iter().try_for_each(|e| self.expr(e))?;
                m.values.iter().try_for_each(|e| self.expr(e))
            }
        }
    }
}

/// Jinja2's "No filter named 'x'", with a did-you-mean.
fn unknown(what: &str, name: &str, known: &[&str]) -> String {
    match closest(name, known.iter().copied()) {
        Some(s) => format!("Jinja2 has no {what} named `{name}` ({})", did_you_mean(s)),
        None => format!("Jinja2 has no {what} named `{name}`"),
    }
}

fn var_name<'a>(e: &ast::Expr<'a>) -> Option<&'a str> {
    match e {
        ast::Expr::Var(v) => Some(v.id),
        _ => None,
    }
}

/// The span of a `loop` stored by a for-loop target.
fn stores_loop(target: &ast::Expr<'_>) -> Option<minijinja::machinery::Span> {
    match target {
        ast::Expr::Var(v) if v.id == "loop" => Some(v.span()),
        ast::Expr::List(l) => l.items.iter().find_map(stores_loop),
        ast::Expr::Tuple(t) => t.items.iter().find_map(stores_loop),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Variables: Jinja2's `idtracking` and `find_undeclared_variables`

/// How a frame's name resolves (Jinja2's `VAR_LOAD_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Load {
    /// From the render context: an input variable.
    Resolve,
    /// Defined in this frame (assignment, parameter, alias of an outer name).
    Local,
}

/// One frame's symbol table (Jinja2's `Symbols`).
#[derive(Debug, Clone, Default)]
struct Symbols {
    /// name → whether it is known in this frame.
    refs: HashSet<String>,
    /// Loads per name in this frame; several branches may each define one.
    loads: HashMap<String, Load>,
    stores: HashSet<String>,
}

/// A chain of frames: the innermost last.
struct Scope<'p> {
    parents: Vec<&'p Symbols>,
}

impl Symbols {
    fn find(&self, name: &str, scope: &Scope<'_>) -> bool {
        self.refs.contains(name) || scope.parents.iter().any(|p| p.refs.contains(name))
    }

    fn load(&mut self, name: &str, scope: &Scope<'_>) {
        if !self.find(name, scope) {
            self.refs.insert(name.to_string());
            self.loads.insert(name.to_string(), Load::Resolve);
        }
    }

    fn store(&mut self, name: &str) {
        self.stores.insert(name.to_string());
        if !self.refs.contains(name) {
            self.refs.insert(name.to_string());
            self.loads.insert(name.to_string(), Load::Local);
        }
    }

    fn param(&mut self, name: &str) {
        self.stores.insert(name.to_string());
        self.refs.insert(name.to_string());
        self.loads.insert(name.to_string(), Load::Local);
    }

    /// Jinja2's `branch_update`: names stored in some branches only become context lookups.
    fn branch_update(&mut self, branches: Vec<Symbols>, scope: &Scope<'_>) {
        let mut counts: HashMap<String, usize> = HashMap::new();
        for b in &branches {
            for s in &b.stores {
                if !self.stores.contains(s) {
                    *counts.entry(s.clone()).or_default() += 1;
                }
            }
        }
        let n = branches.len();
        for b in branches {
            self.refs.extend(b.refs);
            self.loads.extend(b.loads);
            self.stores.extend(b.stores);
        }
        for (name, count) in counts {
            if count == n {
                continue;
            }
            let outer = scope.parents.iter().any(|p| p.refs.contains(&name));
            self.loads
                .insert(name, if outer { Load::Local } else { Load::Resolve });
        }
    }
}

/// A node whose own frame is analysed after the frame that holds it (Jinja2 creates inner frames
/// while generating code, once the outer frame's symbols are complete).
enum Pending<'t, 'a> {
    For(&'t ast::ForLoop<'a>),
    Macro(&'t ast::Macro<'a>),
    FilterBlock(&'t ast::FilterBlock<'a>),
    With(&'t ast::WithBlock<'a>),
    SetBlock(&'t ast::SetBlock<'a>),
}

/// The undeclared variables of a template body, as `jinja2.meta.find_undeclared_variables`.
pub(crate) fn undeclared(body: &[ast::Stmt<'_>]) -> Vec<String> {
    let mut out = BTreeSet::new();
    let mut blocks = Vec::new();
    let mut root = Symbols::default();
    if names_loaded(body, &["self"]).contains(&"self") {
        root.param("self");
    }
    frame(
        &mut root,
        &Scope { parents: vec![] },
        body,
        &mut out,
        &mut blocks,
    );
    // Blocks are separate top-level frames.
    let mut i = 0;
    while i < blocks.len() {
        let b: &ast::Block<'_> = blocks[i];
        let mut syms = Symbols::default();
        let special = names_loaded(&b.body, &["self", "super"]);
        for s in special {
            syms.param(s);
        }
        frame(
            &mut syms,
            &Scope { parents: vec![] },
            &b.body,
            &mut out,
            &mut blocks,
        );
        i += 1;
    }
    out.into_iter()
        .filter(|n| !JINJA2_GLOBALS.contains(&n.as_str()))
        .collect()
}

/// Analyses one frame: its own statements, then the frames nested in it.
fn frame<'t, 'a>(
    syms: &mut Symbols,
    scope: &Scope<'_>,
    body: &'t [ast::Stmt<'a>],
    out: &mut BTreeSet<String>,
    blocks: &mut Vec<&'t ast::Block<'a>>,
) {
    let mut pending = Vec::new();
    for s in body {
        visit_stmt(syms, scope, s, &mut pending, blocks);
    }
    finish(syms, scope, pending, out, blocks);
}

fn finish<'t, 'a>(
    syms: &Symbols,
    scope: &Scope<'_>,
    pending: Vec<Pending<'t, 'a>>,
    out: &mut BTreeSet<String>,
    blocks: &mut Vec<&'t ast::Block<'a>>,
) {
    for (name, load) in &syms.loads {
        if *load == Load::Resolve {
            out.insert(name.clone());
        }
    }
    let mut parents = scope.parents.clone();
    parents.push(syms);
    let inner = Scope { parents };
    for p in pending {
        match p {
            Pending::For(f) => {
                let body_uses_loop =
                    f.recursive || names_loaded(&f.body, &["loop"]).contains(&"loop");
                let mut loop_syms = Symbols::default();
                if body_uses_loop {
                    loop_syms.param("loop");
                }
                let mut pend = Vec::new();
                visit_target(&mut loop_syms, &inner, &f.target, true);
                for s in &f.body {
                    visit_stmt(&mut loop_syms, &inner, s, &mut pend, blocks);
                }
                finish(&loop_syms, &inner, pend, out, blocks);
                if !f.else_body.is_empty() {
                    let mut else_syms = Symbols::default();
                    frame(&mut else_syms, &inner, &f.else_body, out, blocks);
                }
                if let Some(test) = &f.filter_expr {
                    let mut test_syms = Symbols::default();
                    visit_target(&mut test_syms, &inner, &f.target, true);
                    visit_expr(&mut test_syms, &inner, test);
                    finish(&test_syms, &inner, Vec::new(), out, blocks);
                }
            }
            Pending::Macro(m) => {
                let mut msyms = Symbols::default();
                let mut pend = Vec::new();
                for a in &m.args {
                    if let Some(n) = var_name(a) {
                        msyms.param(n);
                    }
                }
                for d in &m.defaults {
                    visit_expr(&mut msyms, &inner, d);
                }
                for s in &m.body {
                    visit_stmt(&mut msyms, &inner, s, &mut pend, blocks);
                }
                for special in names_loaded(&m.body, &["caller", "kwargs", "varargs"]) {
                    msyms.param(special);
                }
                finish(&msyms, &inner, pend, out, blocks);
            }
            Pending::FilterBlock(f) => {
                let mut fsyms = Symbols::default();
                let mut pend = Vec::new();
                visit_expr(&mut fsyms, &inner, &f.filter);
                for s in &f.body {
                    visit_stmt(&mut fsyms, &inner, s, &mut pend, blocks);
                }
                finish(&fsyms, &inner, pend, out, blocks);
            }
            Pending::With(w) => {
                let mut wsyms = Symbols::default();
                for (target, _) in &w.assignments {
                    visit_target(&mut wsyms, &inner, target, false);
                }
                frame(&mut wsyms, &inner, &w.body, out, blocks);
            }
            Pending::SetBlock(s) => {
                let mut bsyms = Symbols::default();
                frame(&mut bsyms, &inner, &s.body, out, blocks);
            }
        }
    }
}

/// Jinja2's `FrameSymbolVisitor` over one statement of the current frame.
fn visit_stmt<'t, 'a>(
    syms: &mut Symbols,
    scope: &Scope<'_>,
    stmt: &'t ast::Stmt<'a>,
    pending: &mut Vec<Pending<'t, 'a>>,
    blocks: &mut Vec<&'t ast::Block<'a>>,
) {
    use ast::Stmt as S;
    match stmt {
        S::Template(t) => {
            for s in &t.children {
                visit_stmt(syms, scope, s, pending, blocks);
            }
        }
        S::EmitExpr(e) => visit_expr(syms, scope, &e.expr),
        S::EmitRaw(_) => {}
        S::ForLoop(f) => {
            visit_expr(syms, scope, &f.iter);
            pending.push(Pending::For(f));
        }
        S::IfCond(i) => {
            visit_expr(syms, scope, &i.expr);
            // Jinja2 branches: the body, the `elif`s, the `else` (one empty branch at least).
            let (elifs, else_body) = split_elif(&i.false_body);
            let mut branch = |stmts: &[&'t ast::Stmt<'a>], syms: &Symbols| {
                let mut b = syms.clone();
                for s in stmts {
                    visit_stmt(&mut b, scope, s, pending, blocks);
                }
                b
            };
            let body: Vec<&ast::Stmt<'_>> = i.true_body.iter().collect();
            let b1 = branch(&body, syms);
            let b2 = branch(&elifs, syms);
            let b3 = branch(&else_body, syms);
            syms.branch_update(vec![b1, b2, b3], scope);
        }
        S::WithBlock(w) => {
            for (_, value) in &w.assignments {
                visit_expr(syms, scope, value);
            }
            pending.push(Pending::With(w));
        }
        S::Set(s) => {
            visit_expr(syms, scope, &s.expr);
            visit_target(syms, scope, &s.target, false);
        }
        S::SetBlock(s) => {
            visit_target(syms, scope, &s.target, false);
            if let Some(f) = &s.filter {
                visit_expr(syms, scope, f);
            }
            pending.push(Pending::SetBlock(s));
        }
        S::AutoEscape(a) => {
            visit_expr(syms, scope, &a.enabled);
            for s in &a.body {
                visit_stmt(syms, scope, s, pending, blocks);
            }
        }
        S::FilterBlock(f) => pending.push(Pending::FilterBlock(f)),
        S::Block(b) => blocks.push(b),
        S::Import(i) => {
            visit_expr(syms, scope, &i.expr);
            visit_target(syms, scope, &i.name, false);
        }
        S::FromImport(i) => {
            visit_expr(syms, scope, &i.expr);
            for (name, alias) in &i.names {
                visit_target(syms, scope, alias.as_ref().unwrap_or(name), false);
            }
        }
        S::Extends(e) => visit_expr(syms, scope, &e.name),
        S::Include(i) => visit_expr(syms, scope, &i.name),
        S::Macro(m) => {
            syms.store(m.name);
            pending.push(Pending::Macro(m));
        }
        S::CallBlock(c) => {
            visit_expr(syms, scope, &c.call.expr);
            visit_args(syms, scope, &c.call.args);
            pending.push(Pending::Macro(&c.macro_decl));
        }
        S::Do(d) => {
            visit_expr(syms, scope, &d.call.expr);
            visit_args(syms, scope, &d.call.args);
        }
    }
}

/// MiniJinja nests `elif` as an `if` alone in the false branch; Jinja2 keeps `elif`s apart from
/// the `else` body. Returns (the `elif` chain as statements, the final `else` body).
fn split_elif<'t, 'a>(
    false_body: &'t [ast::Stmt<'a>],
) -> (Vec<&'t ast::Stmt<'a>>, Vec<&'t ast::Stmt<'a>>) {
    // An `elif` and an `else` holding only an `if` are the same tree; both are treated as
    // Jinja2 treats `elif` (the difference never changes the variable list: names stored in a
    // nested branch always end as context lookups).
    (Vec::new(), false_body.iter().collect())
}

fn visit_target(syms: &mut Symbols, scope: &Scope<'_>, target: &ast::Expr<'_>, param: bool) {
    match target {
        ast::Expr::Var(v) => {
            if param {
                syms.param(v.id);
            } else {
                syms.store(v.id);
            }
        }
        ast::Expr::List(l) => l
            .items
            .iter()
            .for_each(|e| visit_target(syms, scope, e, param)),
        ast::Expr::Tuple(t) => t
            .items
            .iter()
            .for_each(|e| visit_target(syms, scope, e, param)),
        // `{% set ns.attr = … %}` loads the namespace.
        ast::Expr::GetAttr(g) => visit_expr(syms, scope, &g.expr),
        other => visit_expr(syms, scope, other),
    }
}

fn visit_args(syms: &mut Symbols, scope: &Scope<'_>, args: &[ast::CallArg<'_>]) {
    for a in args {
        match a {
            ast::CallArg::Pos(e)
            | ast::CallArg::Kwarg(_, e)
            | ast::CallArg::PosSplat(e)
            | ast::CallArg::KwargSplat(e) => visit_expr(syms, scope, e),
        }
    }
}

fn visit_expr(syms: &mut Symbols, scope: &Scope<'_>, expr: &ast::Expr<'_>) {
    use ast::Expr as E;
    match expr {
        E::Var(v) => syms.load(v.id, scope),
        E::Const(_) => {}
        E::Slice(s) => {
            visit_expr(syms, scope, &s.expr);
            for e in [&s.start, &s.stop, &s.step].into_iter().flatten() {
                visit_expr(syms, scope, e);
            }
        }
        E::UnaryOp(u) => visit_expr(syms, scope, &u.expr),
        E::BinOp(b) => {
            visit_expr(syms, scope, &b.left);
            visit_expr(syms, scope, &b.right);
        }
        E::Compare(c) => {
            visit_expr(syms, scope, &c.expr);
            for op in &c.ops {
                visit_expr(syms, scope, &op.expr);
            }
        }
        E::IfExpr(i) => {
            visit_expr(syms, scope, &i.true_expr);
            visit_expr(syms, scope, &i.test_expr);
            if let Some(f) = &i.false_expr {
                visit_expr(syms, scope, f);
            }
        }
        E::Filter(f) => {
            if let Some(e) = &f.expr {
                visit_expr(syms, scope, e);
            }
            visit_args(syms, scope, &f.args);
        }
        E::Test(t) => {
            visit_expr(syms, scope, &t.expr);
            visit_args(syms, scope, &t.args);
        }
        E::GetAttr(g) => visit_expr(syms, scope, &g.expr),
        E::GetItem(g) => {
            visit_expr(syms, scope, &g.expr);
            visit_expr(syms, scope, &g.subscript_expr);
        }
        E::Call(c) => {
            visit_expr(syms, scope, &c.expr);
            visit_args(syms, scope, &c.args);
        }
        E::List(l) => l.items.iter().for_each(|e| visit_expr(syms, scope, e)),
        E::Tuple(t) => t.items.iter().for_each(|e| visit_expr(syms, scope, e)),
        E::Map(m) => {
            for (k, v) in m.keys.iter().zip(&m.values) {
                visit_expr(syms, scope, k);
                visit_expr(syms, scope, v);
            }
        }
    }
}

/// Jinja2's `find_undeclared(nodes, names)`: which of `names` are read before being assigned,
/// looking through every nested scope except blocks.
fn names_loaded<'n>(body: &[ast::Stmt<'_>], names: &[&'n str]) -> Vec<&'n str> {
    let mut v = NameWalk {
        wanted: names.to_vec(),
        found: Vec::new(),
    };
    for s in body {
        v.stmt(s);
    }
    v.found
}

/// Whether `name` is read in `body` before anything assigns it.
fn loads_before_store(body: &[ast::Stmt<'_>], name: &str) -> bool {
    !names_loaded(body, &[name]).is_empty()
}

struct NameWalk<'n> {
    wanted: Vec<&'n str>,
    found: Vec<&'n str>,
}

impl NameWalk<'_> {
    fn name(&mut self, id: &str, load: bool) {
        if let Some(i) = self.wanted.iter().position(|w| *w == id) {
            let w = self.wanted.remove(i);
            if load {
                self.found.push(w);
            }
        }
    }

    fn stmts(&mut self, s: &[ast::Stmt<'_>]) {
        s.iter().for_each(|s| self.stmt(s));
    }

    fn stmt(&mut self, stmt: &ast::Stmt<'_>) {
        use ast::Stmt as S;
        match stmt {
            S::Template(t) => self.stmts(&t.children),
            S::EmitExpr(e) => self.expr(&e.expr),
            S::EmitRaw(_) | S::Block(_) => {}
            S::ForLoop(f) => {
                self.target(&f.target);
                self.expr(&f.iter);
                if let Some(e) = &f.filter_expr {
                    self.expr(e);
                }
                self.stmts(&f.body);
                self.stmts(&f.else_body);
            }
            S::IfCond(i) => {
                self.expr(&i.expr);
                self.stmts(&i.true_body);
                self.stmts(&i.false_body);
            }
            S::WithBlock(w) => {
                w.assignments.iter().for_each(|(t, _)| self.target(t));
                w.assignments.iter().for_each(|(_, v)| self.expr(v));
                self.stmts(&w.body);
            }
            S::Set(s) => {
                self.target(&s.target);
                self.expr(&s.expr);
            }
            S::SetBlock(s) => {
                self.target(&s.target);
                if let Some(f) = &s.filter {
                    self.expr(f);
                }
                self.stmts(&s.body);
            }
            S::AutoEscape(a) => {
                self.expr(&a.enabled);
                self.stmts(&a.body);
            }
            S::FilterBlock(f) => {
                self.stmts(&f.body);
                self.expr(&f.filter);
            }
            S::Import(i) => {
                self.expr(&i.expr);
                self.target(&i.name);
            }
            S::FromImport(i) => {
                self.expr(&i.expr);
                for (n, a) in &i.names {
                    self.target(a.as_ref().unwrap_or(n));
                }
            }
            S::Extends(e) => self.expr(&e.name),
            S::Include(i) => self.expr(&i.name),
            S::Macro(m) => {
                m.args.iter().for_each(|a| self.target(a));
                m.defaults.iter().for_each(|d| self.expr(d));
                self.stmts(&m.body);
            }
            S::CallBlock(c) => {
                self.expr(&c.call.expr);
                self.args(&c.call.args);
                c.macro_decl.args.iter().for_each(|a| self.target(a));
                self.stmts(&c.macro_decl.body);
            }
            S::Do(d) => {
                self.expr(&d.call.expr);
                self.args(&d.call.args);
            }
        }
    }

    fn target(&mut self, t: &ast::Expr<'_>) {
        match t {
            ast::Expr::Var(v) => self.name(v.id, false),
            ast::Expr::List(l) => l.items.iter().for_each(|e| self.target(e)),
            ast::Expr::Tuple(l) => l.items.iter().for_each(|e| self.target(e)),
            other => self.expr(other),
        }
    }

    fn args(&mut self, args: &[ast::CallArg<'_>]) {
        for a in args {
            match a {
                ast::CallArg::Pos(e)
                | ast::CallArg::Kwarg(_, e)
                | ast::CallArg::PosSplat(e)
                | ast::CallArg::KwargSplat(e) => self.expr(e),
            }
        }
    }

    fn expr(&mut self, expr: &ast::Expr<'_>) {
        use ast::Expr as E;
        match expr {
            E::Var(v) => self.name(v.id, true),
            E::Const(_) => {}
            E::Slice(s) => {
                self.expr(&s.expr);
                for e in [&s.start, &s.stop, &s.step].into_iter().flatten() {
                    self.expr(e);
                }
            }
            E::UnaryOp(u) => self.expr(&u.expr),
            E::BinOp(b) => {
                self.expr(&b.left);
                self.expr(&b.right);
            }
            E::Compare(c) => {
                self.expr(&c.expr);
                c.ops.iter().for_each(|o| self.expr(&o.expr));
            }
            E::IfExpr(i) => {
                self.expr(&i.true_expr);
                self.expr(&i.test_expr);
                if let Some(f) = &i.false_expr {
                    self.expr(f);
                }
            }
            E::Filter(f) => {
                if let Some(e) = &f.expr {
                    self.expr(e);
                }
                self.args(&f.args);
            }
            E::Test(t) => {
                self.expr(&t.expr);
                self.args(&t.args);
            }
            E::GetAttr(g) => self.expr(&g.expr),
            E::GetItem(g) => {
                self.expr(&g.expr);
                self.expr(&g.subscript_expr);
            }
            E::Call(c) => {
                self.expr(&c.expr);
                self.args(&c.args);
            }
            E::List(l) => l.items.iter().for_each(|e| self.expr(e)),
            E::Tuple(t) => t.items.iter().for_each(|e| self.expr(e)),
            E::Map(m) => {
                for (k, v) in m.keys.iter().zip(&m.values) {
                    self.expr(k);
                    self.expr(v);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openers_are_the_three_delimiters() {
        for (src, has) in [
            ("{ {", false),
            ("}} %} #}", false),
            ("{x} {-", false),
            ("a {{ b", true),
            ("{%", true),
            ("text {#", true),
            ("{", false),
            ("", false),
        ] {
            assert_eq!(has_opener(src), has, "{src:?}");
        }
    }

    fn vars(s: &str) -> Vec<String> {
        analyse(s)
            .map(|a| a.vars)
            .unwrap_or_else(|e| panic!("{s}: {e:?}"))
    }

    #[test]
    fn verdicts_and_variables() {
        assert_eq!(vars("Hi {{ name }}, {{ x|upper }}"), ["name", "x"]);
        assert_eq!(
            vars("{% set y = 1 %}{{ y }}{{ range(3) }}"),
            Vec::<String>::new()
        );
        assert_eq!(
            vars("{% if a %}{% set y = 1 %}{% endif %}{{ y }}"),
            ["a", "y"]
        );
        assert!(analyse("see {#anchor}").is_err());
        assert!(analyse("{{ x | nosuch }}").is_err());
        assert!(analyse("{% if x %}{{ x | nosuch }}{% endif %}").is_ok());
        assert!(analyse("{{ +x }}").is_ok());
        assert!(analyse("{{ x +}}").is_err());
        assert!(analyse("{% do x %}").is_err());
        let e = analyse("ab {{ x").err().map(|e| e.start);
        assert!(e.is_some());
    }
}
