//! Functions read as steps: no function of the product is longer than [`MAX_LINES`] lines, from
//! its `fn` to its closing brace (tests and `cargo xtask` are not the product). A longer one
//! mixes several steps; split it into functions named after them.

use super::layers::{attributes_before, product_roots};
use super::lexer::{lex, matching_brace, Token};
use std::path::{Path, PathBuf};

/// The longest a product function may be, in lines.
pub const MAX_LINES: usize = 120;

/// Functions allowed to be longer, as `path::name`, with the reason. None.
const EXEMPT: &[(&str, &str)] = &[];

/// A function: where it starts and how many lines it spans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    pub file: PathBuf,
    pub name: String,
    pub line: usize,
    pub lines: usize,
}

/// Every function with a body in `src`, outside `#[cfg(test)]` items.
pub fn functions(file: &Path, src: &str) -> Vec<Function> {
    let toks = lex(src);
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        // A test module (or test function) is skipped whole.
        if (t.is("mod") || t.is("fn"))
            && attributes_before(&toks, i)
                .iter()
                .any(|a| a.contains("cfg(test)") || a == "test")
        {
            match body_of(&toks, i) {
                Some(open) => {
                    i = matching_brace(&toks, open) + 1;
                    continue;
                }
                None => {
                    i += 1;
                    continue;
                }
            }
        }
        if t.is("fn") {
            if let (Some(name), Some(open)) =
                (toks.get(i + 1).and_then(Token::ident), body_of(&toks, i))
            {
                let close = matching_brace(&toks, open);
                out.push(Function {
                    file: file.to_path_buf(),
                    name: name.to_string(),
                    line: t.line,
                    lines: toks[close].line - t.line + 1,
                });
                // Functions nested in it are counted in it.
                i = close + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// The `{` that opens the body of the item at `i` (`fn …` or `mod …`), if it has one.
fn body_of(toks: &[Token], i: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (k, t) in toks.iter().enumerate().skip(i) {
        if t.is_punct('(') || t.is_punct('[') {
            depth += 1;
        } else if t.is_punct(')') || t.is_punct(']') {
            depth -= 1;
        } else if depth == 0 && t.is_punct(';') {
            return None;
        } else if depth == 0 && t.is_punct('{') {
            return Some(k);
        }
    }
    None
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every function of the product (the sources of every product crate), longest first.
pub fn product_functions() -> Vec<Function> {
    let mut dirs: Vec<PathBuf> = product_roots()
        .iter()
        .filter_map(|r| r.parent().map(Path::to_path_buf))
        .collect();
    dirs.sort();
    dirs.dedup();
    let mut files = Vec::new();
    for d in dirs {
        rust_files(&d, &mut files);
    }
    files.sort();
    files.dedup();
    let mut all: Vec<Function> = files
        .iter()
        // The compiler's own tests live in its `src/tests/`.
        .filter(|f| !f.components().any(|c| c.as_os_str() == "tests"))
        .flat_map(|f| functions(f, &std::fs::read_to_string(f).unwrap_or_default()))
        .collect();
    all.sort_by(|a, b| b.lines.cmp(&a.lines).then_with(|| a.file.cmp(&b.file)));
    all
}

#[test]
fn no_product_function_is_longer_than_the_limit() {
    let all = product_functions();
    assert!(
        all.len() > 500,
        "only {} functions found: the scan is broken",
        all.len()
    );
    let exempt = |f: &Function| {
        EXEMPT
            .iter()
            .any(|(id, _)| *id == format!("{}::{}", f.file.display(), f.name))
    };
    if let Some(f) = all.first() {
        // Shown with `--nocapture`: how close the product is to the limit.
        println!(
            "longest product function: {}:{} `{}`, {} lines",
            f.file.display(),
            f.line,
            f.name,
            f.lines
        );
    }
    let long: Vec<String> = all
        .iter()
        .filter(|f| f.lines > MAX_LINES && !exempt(f))
        .map(|f| {
            format!(
                "  {}:{} `{}`: {} lines",
                f.file.display(),
                f.line,
                f.name,
                f.lines
            )
        })
        .collect();
    assert!(
        long.is_empty(),
        "functions longer than {MAX_LINES} lines (split each into named steps):\n{}",
        long.join("\n")
    );
}

/// The scan measures what it must: a function's lines from `fn` to its brace, its nested
/// functions and closures inside it, signatures with braces in types or `where` clauses, and
/// test functions and modules left out.
#[test]
fn the_scan_measures_functions() {
    let src = "fn short() {}\n\
               fn long(a: [u8; 2]) -> impl Fn() where u8: Copy {\n\
                   let s = \"}\"; // }\n\
                   fn inner() {}\n\
                   let _ = || { 1 };\n\
               }\n\
               trait T { fn decl(&self); fn default(&self) {\n} }\n\
               #[cfg(test)]\nmod tests { fn helper() {\n\n\n} }\n\
               #[test]\nfn a_test() {\n}\n";
    let fs = functions(Path::new("x.rs"), src);
    let got: Vec<(&str, usize)> = fs.iter().map(|f| (f.name.as_str(), f.lines)).collect();
    assert_eq!(got, [("short", 1), ("long", 5), ("default", 2)]);
}
