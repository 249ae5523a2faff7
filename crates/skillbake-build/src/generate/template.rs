//! Precompiles a body's Jinja2 template into the instruction table of
//! [`skillbake_format::template`], which the runtime interprets (`Registry::render`): the runtime
//! never parses template syntax. A body using a construct the table does not express gets no
//! table, and the reason is kept for `render` to report.

use crate::parse::jinja::{self, JINJA2_GLOBALS};
use minijinja::machinery::ast;
use minijinja::value::ValueKind;
use skillbake_format::template::{BinOp, Op, Program, FILTERS, METHODS, TESTS};

/// The body's instruction table, or why there is none (a construct it cannot express, or a
/// template Jinja2 rejects).
#[cfg(test)]
pub fn compile(body: &str) -> Result<Program, String> {
    analyse_and_compile(body).1
}

/// `jinja::analyse` and `compile` (the tests' entry points) from one parse of the body:
/// Jinja2's verdict with the variables the template reads, and the instruction table or why
/// there is none.
pub fn analyse_and_compile(
    body: &str,
) -> (
    Result<jinja::Analysis, jinja::JinjaError>,
    Result<Program, String>,
) {
    match text_only(body) {
        Some(program) => (Ok(jinja::Analysis::default()), Ok(program)),
        None => parse_and_compile(body),
    }
}

/// The table of a body without `{{`, `{%` or `{#` (most bodies), without lexing or parsing it:
/// the text the parser would make one piece of raw text (Jinja2 drops one trailing line break),
/// written as `Lower` writes it; `None` for a body with an opener.
fn text_only(body: &str) -> Option<Program> {
    if jinja::has_opener(body) {
        return None;
    }
    let raw = body.strip_suffix('\n').unwrap_or(body);
    let raw = raw.strip_suffix('\r').unwrap_or(raw);
    let ops = if raw.is_empty() {
        Vec::new()
    } else if raw.contains('\r') {
        vec![Op::Text(lf(raw))]
    } else {
        vec![Op::Span(0, u32::try_from(raw.len()).ok()?)]
    };
    Some(Program { ops })
}

/// Raw text as Jinja2 writes it: every line break (`\r\n`, `\r`) as `\n`.
fn lf(raw: &str) -> String {
    raw.replace("\r\n", "\n").replace('\r', "\n")
}

/// [`analyse_and_compile`] by parsing the body, whatever it holds.
fn parse_and_compile(
    body: &str,
) -> (
    Result<jinja::Analysis, jinja::JinjaError>,
    Result<Program, String>,
) {
    let parsed = jinja::with_tree(body, |stmts, exact| {
        let vars = jinja::undeclared(stmts);
        if !exact {
            return (
                vars,
                Err(
                    "Jinja2-only syntax (unary `+`, a bare tuple, `x[]`, `1.e5` or a trailing `{#`)"
                        .to_string(),
                ),
            );
        }
        let mut l = Lower {
            ops: Vec::new(),
            source: body,
        };
        let lowered = l.stmts(stmts).map(|()| Program { ops: l.ops });
        (vars, lowered)
    });
    match parsed {
        Ok((vars, lowered)) => (
            Ok(jinja::Analysis { vars }),
            lowered
                .map_err(|what| format!("the template uses {what}, which skillbake cannot render")),
        ),
        Err(e) => {
            let why = format!("the template does not parse: {}", e.message);
            (Err(e), Err(why))
        }
    }
}

struct Lower<'s> {
    ops: Vec<Op>,
    /// The template's source, which the runtime holds too (`Op::Span` points into it).
    source: &'s str,
}

type R = Result<(), String>;

fn unsupported<T>(what: &str) -> Result<T, String> {
    Err(what.to_string())
}

impl Lower<'_> {
    fn here(&self) -> u32 {
        u32::try_from(self.ops.len()).unwrap_or(u32::MAX)
    }

    fn emit(&mut self, op: Op) -> usize {
        self.ops.push(op);
        self.ops.len() - 1
    }

    /// Points the jump at `at` to the next instruction.
    fn patch(&mut self, at: usize) {
        let here = self.here();
        if let Some(
            Op::Jump(t)
            | Op::JumpIfFalse(t)
            | Op::JumpIfFalseOrPop(t)
            | Op::JumpIfTrueOrPop(t)
            | Op::IterNext(t)
            | Op::IterDone(t),
        ) = self.ops.get_mut(at)
        {
            *t = here;
        }
    }

    fn stmts(&mut self, stmts: &[ast::Stmt<'_>]) -> R {
        stmts.iter().try_for_each(|s| self.stmt(s))
    }

    fn stmt(&mut self, stmt: &ast::Stmt<'_>) -> R {
        use ast::Stmt as S;
        match stmt {
            S::Template(t) => self.stmts(&t.children),
            S::EmitRaw(r) => {
                // The text is a slice of the source: point at it (the parser only borrows).
                let start = (r.raw.as_ptr() as usize).wrapping_sub(self.source.as_ptr() as usize);
                let end = start.wrapping_add(r.raw.len());
                let inside = self.source.get(start..end) == Some(r.raw);
                match (u32::try_from(start), u32::try_from(end)) {
                    (Ok(a), Ok(b)) if inside && !r.raw.contains('\r') => {
                        self.emit(Op::Span(a, b));
                    }
                    _ => {
                        self.emit(Op::Text(lf(r.raw)));
                    }
                }
                Ok(())
            }
            S::EmitExpr(e) => {
                self.expr(&e.expr)?;
                self.emit(Op::Emit);
                Ok(())
            }
            S::IfCond(i) => {
                self.expr(&i.expr)?;
                let to_else = self.emit(Op::JumpIfFalse(0));
                self.stmts(&i.true_body)?;
                let to_end = self.emit(Op::Jump(0));
                self.patch(to_else);
                self.stmts(&i.false_body)?;
                self.patch(to_end);
                Ok(())
            }
            S::ForLoop(f) => {
                if f.recursive {
                    return unsupported("a recursive loop");
                }
                if f.filter_expr.is_some() {
                    return unsupported("a loop filter (`for … if …`)");
                }
                let ast::Expr::Var(target) = &f.target else {
                    return unsupported("unpacking in a loop target");
                };
                self.expr(&f.iter)?;
                self.emit(Op::IterStart);
                let top = self.here();
                let next = self.emit(Op::IterNext(0));
                self.emit(Op::Store(target.id.to_string()));
                self.stmts(&f.body)?;
                self.emit(Op::Jump(top));
                self.patch(next);
                let done = self.emit(Op::IterDone(0));
                self.stmts(&f.else_body)?;
                self.patch(done);
                Ok(())
            }
            S::Set(s) => {
                let ast::Expr::Var(target) = &s.target else {
                    return unsupported("`{% set %}` of anything but one name");
                };
                self.expr(&s.expr)?;
                self.emit(Op::Store(target.id.to_string()));
                Ok(())
            }
            S::WithBlock(w) => {
                let mut names = Vec::new();
                for (target, value) in &w.assignments {
                    let ast::Expr::Var(t) = target else {
                        return unsupported("unpacking in `{% with %}`");
                    };
                    self.expr(value)?;
                    names.push(t.id.to_string());
                }
                self.emit(Op::PushScope);
                for n in names.into_iter().rev() {
                    self.emit(Op::Store(n));
                }
                self.stmts(&w.body)?;
                self.emit(Op::PopScope);
                Ok(())
            }
            S::SetBlock(_) => unsupported("`{% set %}…{% endset %}`"),
            S::AutoEscape(_) => unsupported("`{% autoescape %}`"),
            S::FilterBlock(_) => unsupported("`{% filter %}`"),
            S::Block(_) => unsupported("`{% block %}`"),
            S::Import(_) | S::FromImport(_) => unsupported("`{% import %}`"),
            S::Extends(_) => unsupported("`{% extends %}`"),
            S::Include(_) => unsupported("`{% include %}`"),
            S::Macro(_) => unsupported("`{% macro %}`"),
            S::CallBlock(_) => unsupported("`{% call %}`"),
            S::Do(_) => unsupported("`{% do %}`"),
        }
    }

    fn args(&mut self, args: &[ast::CallArg<'_>]) -> Result<u8, String> {
        for a in args {
            match a {
                ast::CallArg::Pos(e) => self.expr(e)?,
                _ => return unsupported("keyword or `*` arguments"),
            }
        }
        u8::try_from(args.len()).map_err(|_| "more than 255 arguments".to_string())
    }

    fn expr(&mut self, expr: &ast::Expr<'_>) -> R {
        use ast::Expr as E;
        match expr {
            E::Var(v) => self.var(v.id)?,
            E::Const(c) => self.constant(&c.value)?,
            E::Slice(s) => self.slice(s)?,
            E::UnaryOp(u) => {
                self.expr(&u.expr)?;
                self.emit(match u.op {
                    ast::UnaryOpKind::Not => Op::Not,
                    ast::UnaryOpKind::Neg => Op::Neg,
                });
            }
            E::BinOp(b) => self.bin_op(b)?,
            E::Compare(c) => self.compare(c)?,
            E::IfExpr(i) => self.if_expr(i)?,
            E::Filter(f) => self.filter(f)?,
            E::Test(t) => self.test(t)?,
            E::GetAttr(g) => {
                self.expr(&g.expr)?;
                self.emit(Op::Attr(g.name.to_string()));
            }
            E::GetItem(g) => {
                self.expr(&g.expr)?;
                self.expr(&g.subscript_expr)?;
                self.emit(Op::Item);
            }
            E::Call(c) => self.call(c)?,
            E::List(l) => {
                for e in &l.items {
                    self.expr(e)?;
                }
                self.emit(Op::List(u32::try_from(l.items.len()).unwrap_or(u32::MAX)));
            }
            E::Tuple(_) => return unsupported("a tuple"),
            E::Map(_) => return unsupported("a dict literal"),
        }
        Ok(())
    }

    /// A variable; Jinja2's globals and the names of macros and blocks are not values here.
    fn var(&mut self, id: &str) -> R {
        if JINJA2_GLOBALS.contains(&id) {
            return unsupported("a Jinja2 global as a value");
        }
        if matches!(id, "self" | "super" | "caller" | "varargs" | "kwargs") {
            return unsupported(&format!("`{}`", id));
        }
        self.emit(Op::Var(id.to_string()));
        Ok(())
    }

    /// `x[start:stop:step]`: the value, then the parts given (a mask says which).
    fn slice(&mut self, s: &ast::Slice<'_>) -> R {
        self.expr(&s.expr)?;
        let mut mask = 0u8;
        for (bit, part) in [(1u8, &s.start), (2, &s.stop), (4, &s.step)] {
            if let Some(e) = part {
                self.expr(e)?;
                mask |= bit;
            }
        }
        self.emit(Op::Slice(mask));
        Ok(())
    }

    /// A binary operator; `and` and `or` short-circuit with a jump.
    fn bin_op(&mut self, b: &ast::BinOp<'_>) -> R {
        use ast::BinOpKind as K;
        let op = match b.op {
            K::ScAnd | K::ScOr => {
                self.expr(&b.left)?;
                let j = self.emit(if matches!(b.op, K::ScAnd) {
                    Op::JumpIfFalseOrPop(0)
                } else {
                    Op::JumpIfTrueOrPop(0)
                });
                self.expr(&b.right)?;
                self.patch(j);
                return Ok(());
            }
            K::Eq => BinOp::Eq,
            K::Ne => BinOp::Ne,
            K::Lt => BinOp::Lt,
            K::Lte => BinOp::Le,
            K::Gt => BinOp::Gt,
            K::Gte => BinOp::Ge,
            K::Add => BinOp::Add,
            K::Sub => BinOp::Sub,
            K::Mul => BinOp::Mul,
            K::Div => BinOp::Div,
            K::FloorDiv => BinOp::FloorDiv,
            K::Rem => BinOp::Rem,
            K::Pow => BinOp::Pow,
            K::Concat => BinOp::Concat,
            K::In => BinOp::In,
        };
        self.expr(&b.left)?;
        self.expr(&b.right)?;
        self.emit(Op::Bin(op));
        Ok(())
    }

    /// `a < b < c` is `(a < b) and (b < c)`, each operand pure.
    fn compare(&mut self, c: &ast::Compare<'_>) -> R {
        let mut left = &c.expr;
        let mut jumps = Vec::new();
        for (i, op) in c.ops.iter().enumerate() {
            use ast::CompareOpKind as K;
            let kind = match op.op {
                K::Eq => BinOp::Eq,
                K::Ne => BinOp::Ne,
                K::Lt => BinOp::Lt,
                K::Lte => BinOp::Le,
                K::Gt => BinOp::Gt,
                K::Gte => BinOp::Ge,
                K::In => BinOp::In,
                K::NotIn => BinOp::NotIn,
            };
            self.expr(left)?;
            self.expr(&op.expr)?;
            self.emit(Op::Bin(kind));
            if i + 1 < c.ops.len() {
                jumps.push(self.emit(Op::JumpIfFalseOrPop(0)));
            }
            left = &op.expr;
        }
        for j in jumps {
            self.patch(j);
        }
        Ok(())
    }

    /// `a if test else b` (an undefined value without `else`).
    fn if_expr(&mut self, i: &ast::IfExpr<'_>) -> R {
        self.expr(&i.test_expr)?;
        let to_else = self.emit(Op::JumpIfFalse(0));
        self.expr(&i.true_expr)?;
        let to_end = self.emit(Op::Jump(0));
        self.patch(to_else);
        match &i.false_expr {
            Some(f) => self.expr(f)?,
            None => {
                self.emit(Op::Var(String::new()));
            }
        }
        self.patch(to_end);
        Ok(())
    }

    /// A filter of the table, with positional arguments.
    fn filter(&mut self, f: &ast::Filter<'_>) -> R {
        let Some(id) = FILTERS.iter().position(|n| *n == f.name) else {
            return unsupported(&format!("the filter `{}`", f.name));
        };
        let Some(e) = &f.expr else {
            return unsupported("a filter block");
        };
        self.expr(e)?;
        let argc = self.args(&f.args)?;
        self.emit(Op::Filter(u8::try_from(id).unwrap_or(u8::MAX), argc));
        Ok(())
    }

    /// A test of the table, with positional arguments.
    fn test(&mut self, t: &ast::Test<'_>) -> R {
        let Some(id) = TESTS.iter().position(|n| *n == t.name) else {
            return unsupported(&format!("the test `{}`", t.name));
        };
        self.expr(&t.expr)?;
        let argc = self.args(&t.args)?;
        self.emit(Op::Test(u8::try_from(id).unwrap_or(u8::MAX), argc));
        Ok(())
    }

    /// `range(…)` and the methods of the table; no other call.
    fn call(&mut self, c: &ast::Call<'_>) -> R {
        use ast::Expr as E;
        match &c.expr {
            E::Var(v) if v.id == "range" => {
                let argc = self.args(&c.args)?;
                self.emit(Op::Range(argc));
            }
            E::GetAttr(g) if METHODS.contains(&g.name) => {
                self.expr(&g.expr)?;
                let argc = self.args(&c.args)?;
                self.emit(Op::Method(g.name.to_string(), argc));
            }
            _ => return unsupported("a function or method call"),
        }
        Ok(())
    }

    fn constant(&mut self, v: &minijinja::Value) -> R {
        let op = match v.kind() {
            ValueKind::None => Op::None,
            ValueKind::Bool => Op::Bool(v.is_true()),
            ValueKind::String => Op::Str(v.as_str().unwrap_or_default().to_string()),
            ValueKind::Number if v.is_integer() => match v.as_i64() {
                Some(i) => Op::Int(i),
                None => return unsupported("integers beyond 64 bits"),
            },
            ValueKind::Number => match f64::try_from(v.clone()) {
                Ok(f) => Op::Float(f),
                Err(_) => return unsupported("this number"),
            },
            ValueKind::Seq if !v.is_tuple() => {
                let items: Vec<minijinja::Value> = match v.try_iter() {
                    Ok(it) => it.collect(),
                    Err(_) => return unsupported("this constant"),
                };
                for it in &items {
                    self.constant(it)?;
                }
                Op::List(u32::try_from(items.len()).unwrap_or(u32::MAX))
            }
            _ => return unsupported("this constant"),
        };
        self.emit(op);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// A body without an opener gets, without a parse, exactly what parsing it gives.
        #[test]
        fn a_text_only_body_compiles_as_parsing_it_does(body in "[{}%#+\\-a é\\n\\r]{0,40}") {
            let fast = text_only(&body);
            proptest::prop_assume!(fast.is_some());
            let (analysis, program) = parse_and_compile(&body);
            proptest::prop_assert_eq!(analysis.map_err(|e| e.message), Ok(jinja::Analysis::default()));
            proptest::prop_assert_eq!(Some(program), fast.map(Ok));
        }
    }

    #[test]
    fn text_only_bodies_keep_their_line_breaks_but_the_last() {
        for body in [
            "",
            "\n",
            "\r\n",
            "a",
            "a\n",
            "a\r\n",
            "a\r",
            "a\n\n",
            "a\r\nb\rc\n",
            "{x}",
        ] {
            let (analysis, program) = parse_and_compile(body);
            assert_eq!(
                analysis.map_err(|e| e.message),
                Ok(jinja::Analysis::default())
            );
            assert_eq!(Some(program), text_only(body).map(Ok), "{body:?}");
        }
        assert_eq!(text_only("a {{ b }}"), None);
    }
}
