//! Modules are layered one way: within each product crate, no module depends on a module that
//! depends back on it, however long the way round.
//!
//! The check reads every `.rs` file of a crate from its root (`mod x;`, `#[path]`, inline
//! `mod x { … }`; `#[cfg(test)]` modules are left out: tests may use what they test) and draws
//! an edge from a module to every module whose items it names: `use` declarations (`crate::…`,
//! `super::…`, `self::…`, a child module's name) and qualified paths in its code (`crate::x::y`,
//! `super::y`, `child::y`, `Imported::y`). A path names the module that *defines* the item: a
//! re-export (`pub use outcome::Exit;` in the crate root) is followed to `outcome`. So a parent
//! that only declares `mod child;` has no edge to it; a parent that re-exports or uses a child
//! depends on it; a child that uses `super::Item` depends on the module defining `Item`. A
//! strongly connected component of more than one module is a cycle, reported with the paths
//! that make it.

use super::lexer::{lex, matching_brace, Tok, Token};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// A module path from the crate root (`[]` is the root, `["generate", "pack"]`).
type ModPath = Vec<String>;

/// A path as written, and the line it is written on.
type Written = (Vec<String>, usize);

/// One module: where its tokens are, its children and what its `use` declarations bind.
#[derive(Debug)]
struct Module {
    file: PathBuf,
    toks: Rc<Vec<Token>>,
    /// The tokens of the module's body.
    range: (usize, usize),
    /// Token ranges inside `range` that are other modules (inline children, `#[cfg(test)]`).
    holes: Vec<(usize, usize)>,
    children: BTreeSet<String>,
    /// Each name a `use` brings in scope → the path it stands for, as written.
    uses: BTreeMap<String, Written>,
    /// `use …::*` globs, as written.
    globs: Vec<Written>,
}

/// A child module met in a body: its name, its inline body (a token range) or its `#[path]`.
type Child = (String, Option<(usize, usize)>, Option<String>);

/// The modules of one crate.
#[derive(Debug, Default)]
pub struct Crate {
    modules: BTreeMap<ModPath, Module>,
}

/// Module `from` depends on module `to`: it names `path` at `at` (`file:line`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub at: String,
    pub path: String,
}

impl Crate {
    /// Reads the crate whose root file is `root` (`src/lib.rs`, `src/main.rs`).
    pub fn read(root: &Path) -> Crate {
        let mut krate = Crate::default();
        let dir = root.parent().unwrap_or(Path::new(".")).to_path_buf();
        krate.add_file(Vec::new(), root, dir);
        krate
    }

    /// The number of modules read.
    pub fn len(&self) -> usize {
        self.modules.len()
    }

    fn add_file(&mut self, path: ModPath, file: &Path, dir: PathBuf) {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let toks = Rc::new(lex(&text));
        let range = (0, toks.len());
        self.add(path, file.to_path_buf(), toks, range, dir);
    }

    /// Adds module `path` (the tokens `range` of `toks`, in `file`) and its children; `dir` is
    /// where the files of its `mod child;` declarations are.
    fn add(
        &mut self,
        path: ModPath,
        file: PathBuf,
        toks: Rc<Vec<Token>>,
        range: (usize, usize),
        dir: PathBuf,
    ) {
        let mut module = Module {
            file: file.clone(),
            toks: Rc::clone(&toks),
            range,
            holes: Vec::new(),
            children: BTreeSet::new(),
            uses: BTreeMap::new(),
            globs: Vec::new(),
        };
        let mut children: Vec<Child> = Vec::new();
        let mut i = range.0;
        while i < range.1 {
            let t = &toks[i];
            let name = toks.get(i + 1).and_then(Token::ident).map(str::to_string);
            if let (true, Some(name)) = (t.is("mod"), name) {
                let attrs = attributes_before(&toks, i);
                let test_only = attrs.iter().any(|a| a.contains("cfg(test)"));
                let explicit = attrs
                    .iter()
                    .find_map(|a| a.strip_prefix("path=").map(str::to_string));
                if toks.get(i + 2).is_some_and(|t| t.is_punct(';')) {
                    if !test_only {
                        children.push((name, None, explicit));
                    }
                    i += 3;
                    continue;
                }
                if toks.get(i + 2).is_some_and(|t| t.is_punct('{')) {
                    let close = matching_brace(&toks, i + 2);
                    module.holes.push((i, close));
                    if !test_only {
                        children.push((name, Some((i + 3, close)), None));
                    }
                    i = close + 1;
                    continue;
                }
            }
            if t.is("use") && !follows(&toks, i, |p| p.is_punct('$')) {
                let end = (i..range.1)
                    .find(|&k| toks[k].is_punct(';'))
                    .unwrap_or(range.1);
                for (bound, target) in use_tree(&toks[i + 1..end]) {
                    match bound {
                        Some(n) => {
                            module.uses.insert(n, (target, t.line));
                        }
                        None => module.globs.push((target, t.line)),
                    }
                }
                i = end + 1;
                continue;
            }
            i += 1;
        }
        for (name, inline, explicit) in children {
            module.children.insert(name.clone());
            let mut child = path.clone();
            child.push(name.clone());
            if let Some(body) = inline {
                self.add(child, file.clone(), Rc::clone(&toks), body, dir.join(&name));
                continue;
            }
            let here = file.parent().unwrap_or(Path::new("."));
            let candidates = match explicit {
                Some(p) => vec![here.join(p)],
                None => vec![
                    dir.join(format!("{name}.rs")),
                    dir.join(&name).join("mod.rs"),
                ],
            };
            let f = candidates.into_iter().find(|f| f.is_file());
            let f = f.unwrap_or_else(|| panic!("{}: `mod {name};` has no file", file.display()));
            let child_dir = if f.ends_with("mod.rs") {
                f.parent().unwrap_or(Path::new(".")).to_path_buf()
            } else {
                dir.join(&name)
            };
            self.add_file(child, &f, child_dir);
        }
        self.modules.insert(path, module);
    }

    /// Every dependency between two different modules, once per module pair and path.
    pub fn edges(&self) -> Vec<Edge> {
        let mut out = BTreeSet::new();
        for (from, m) in &self.modules {
            for (path, line) in self.paths_in(m) {
                let Some(to) = self.resolve(from, &path, 0) else {
                    continue;
                };
                if &to != from {
                    out.insert(Edge {
                        from: show(from),
                        to: show(&to),
                        at: format!("{}:{line}", m.file.display()),
                        path: path.join("::"),
                    });
                }
            }
        }
        out.into_iter().collect()
    }

    /// The paths module `m` names that may lead into the crate: its `use` declarations, and the
    /// qualified paths of its own code (not that of its inline children or tests).
    fn paths_in(&self, m: &Module) -> Vec<Written> {
        let toks = &m.toks;
        let mut out: Vec<Written> = m.uses.values().chain(&m.globs).cloned().collect();
        let mut i = m.range.0;
        while i < m.range.1 {
            if let Some(&(_, end)) = m.holes.iter().find(|(s, e)| (*s..=*e).contains(&i)) {
                i = end + 1;
                continue;
            }
            if toks[i].is("use") {
                i = (i..m.range.1)
                    .find(|&k| toks[k].is_punct(';'))
                    .unwrap_or(m.range.1)
                    + 1;
                continue;
            }
            let starts_path = toks[i].ident().is_some()
                && toks.get(i + 1).is_some_and(|t| t.tok == Tok::PathSep)
                && !follows(toks, i, |p| p.tok == Tok::PathSep || p.is_punct('$'));
            if !starts_path {
                i += 1;
                continue;
            }
            let mut segs = vec![toks[i].ident().unwrap_or_default().to_string()];
            let mut k = i + 1;
            while toks.get(k).is_some_and(|t| t.tok == Tok::PathSep) {
                match toks.get(k + 1).and_then(Token::ident) {
                    Some(s) => segs.push(s.to_string()),
                    None => break,
                }
                k += 2;
            }
            let first = segs[0].as_str();
            let local = matches!(first, "crate" | "super" | "self")
                || m.children.contains(first)
                || m.uses.contains_key(first);
            if local {
                out.push((segs, toks[i].line));
            }
            i = k;
        }
        out
    }

    /// The module that defines what `path` names, written in module `at`; `None` for anything
    /// outside the crate.
    fn resolve(&self, at: &ModPath, path: &[String], depth: usize) -> Option<ModPath> {
        if depth > 32 || path.is_empty() {
            return None;
        }
        let (mut cur, rest) = self.start(at, path, depth)?;
        for (k, seg) in rest.iter().enumerate() {
            let m = self.modules.get(&cur)?;
            if m.children.contains(seg) {
                cur.push(seg.clone());
                continue;
            }
            if let Some((target, _)) = m.uses.get(seg) {
                let mut full = target.clone();
                full.extend(rest[k + 1..].iter().cloned());
                return self.resolve(&cur, &full, depth + 1);
            }
            for (glob, _) in &m.globs {
                let mut full = glob.clone();
                full.push(seg.clone());
                if let Some(found) = self.resolve(&cur, &full, depth + 1) {
                    if self.defines(&found, seg) {
                        return Some(found);
                    }
                }
            }
            // An item of `cur` (a function, type, variant or field follows).
            return Some(cur);
        }
        Some(cur)
    }

    /// Where a path starts: `crate`, `self`, `super`s, a child of `at`, or a name a `use` of
    /// `at` binds (followed); `None` for another crate.
    fn start(&self, at: &ModPath, path: &[String], depth: usize) -> Option<(ModPath, Vec<String>)> {
        let mut cur = at.clone();
        let first = path.first()?.as_str();
        let skip = match first {
            "crate" => {
                cur.clear();
                1
            }
            "self" => 1,
            "super" => {
                let supers = path.iter().take_while(|s| *s == "super").count();
                for _ in 0..supers {
                    cur.pop()?;
                }
                supers
            }
            _ => {
                let m = self.modules.get(at)?;
                if !m.children.contains(first) {
                    let (target, _) = m.uses.get(first)?;
                    if target.first().map(String::as_str) == Some(first) && target.len() == 1 {
                        return None; // `use other_crate;`
                    }
                    let mut full = target.clone();
                    full.extend(path[1..].iter().cloned());
                    let found = self.resolve(at, &full, depth + 1)?;
                    return Some((found, Vec::new()));
                }
                0
            }
        };
        Some((cur, path[skip..].to_vec()))
    }

    /// Whether module `m` defines `name` (a child, a binding or an item), for glob imports.
    fn defines(&self, m: &ModPath, name: &str) -> bool {
        let Some(module) = self.modules.get(m) else {
            return false;
        };
        if module.children.contains(name) || module.uses.contains_key(name) {
            return true;
        }
        const ITEMS: [&str; 9] = [
            "fn",
            "struct",
            "enum",
            "const",
            "static",
            "type",
            "trait",
            "union",
            "macro_rules",
        ];
        let toks = &module.toks;
        (module.range.0..module.range.1)
            .any(|k| toks[k].is(name) && follows(toks, k, |p| ITEMS.iter().any(|kw| p.is(kw))))
    }

    /// The cycles: each strongly connected component of more than one module, as its edges.
    pub fn cycles(&self) -> Vec<Vec<Edge>> {
        cycles(&self.edges())
    }
}

/// Whether the token before `i` satisfies `f`.
fn follows(toks: &[Token], i: usize, f: impl Fn(&Token) -> bool) -> bool {
    i > 0 && toks.get(i - 1).is_some_and(f)
}

fn show(p: &ModPath) -> String {
    if p.is_empty() {
        "crate".into()
    } else {
        format!("crate::{}", p.join("::"))
    }
}

/// The attributes right before the item at token `i` (past its visibility), as text without
/// `#[` and `]`: `cfg(test)`, `path=tests/it/common.rs`.
pub(super) fn attributes_before(toks: &[Token], i: usize) -> Vec<String> {
    let mut k = i;
    if follows(toks, k, |t| t.is_punct(')')) {
        // `pub(crate)`, `pub(super)`, `pub(in path)`.
        while k > 0 && !toks[k - 1].is_punct('(') {
            k -= 1;
        }
        k = k.saturating_sub(1);
    }
    if follows(toks, k, |t| t.is("pub")) {
        k -= 1;
    }
    let mut out = Vec::new();
    while follows(toks, k, |t| t.is_punct(']')) {
        let close = k - 1;
        let mut depth = 0usize;
        let mut open = None;
        for j in (0..=close).rev() {
            if toks[j].is_punct(']') {
                depth += 1;
            } else if toks[j].is_punct('[') {
                depth -= 1;
                if depth == 0 {
                    open = Some(j);
                    break;
                }
            }
        }
        let Some(open) = open.filter(|&o| follows(toks, o, |t| t.is_punct('#'))) else {
            break;
        };
        let text: String = toks[open + 1..close]
            .iter()
            .map(|t| match &t.tok {
                Tok::Ident(s) => s.clone(),
                Tok::PathSep => "::".into(),
                Tok::Punct(c) => c.to_string(),
                Tok::Literal(s) => s.clone(),
            })
            .collect();
        out.push(text);
        k = open - 1;
    }
    out
}

/// The bindings of a `use` tree (the tokens between `use` and `;`): `(Some(name), path)` for
/// each name it brings in scope (`use a::b as c` binds `c`; `use a::{self}` binds `a`; `use
/// Trait as _` binds nothing but still depends), `(None, path)` for each glob.
fn use_tree(toks: &[Token]) -> Vec<(Option<String>, Vec<String>)> {
    let mut out = Vec::new();
    walk_tree(toks, &[], &mut out);
    out
}

fn walk_tree(toks: &[Token], prefix: &[String], out: &mut Vec<(Option<String>, Vec<String>)>) {
    let mut path = prefix.to_vec();
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].tok {
            Tok::Ident(s) if s == "as" => {
                let alias = toks.get(i + 1).and_then(Token::ident).unwrap_or("_");
                let name = if alias == "_" {
                    format!("_ as {}", path.join("::"))
                } else {
                    alias.to_string()
                };
                out.push((Some(name), std::mem::replace(&mut path, prefix.to_vec())));
                i += 2;
                continue;
            }
            Tok::Ident(s) => path.push(s.clone()),
            Tok::Punct('*') => out.push((None, std::mem::replace(&mut path, prefix.to_vec()))),
            Tok::Punct('{') => {
                let close = matching_brace(toks, i);
                walk_tree(&toks[i + 1..close], &path, out);
                path = prefix.to_vec();
                i = close + 1;
                continue;
            }
            Tok::Punct(',') => flush(std::mem::replace(&mut path, prefix.to_vec()), prefix, out),
            _ => {}
        }
        i += 1;
    }
    flush(path, prefix, out);
}

/// The binding of one finished path of a `use` tree.
fn flush(mut path: Vec<String>, prefix: &[String], out: &mut Vec<(Option<String>, Vec<String>)>) {
    if path.len() <= prefix.len() {
        return;
    }
    if path.last().is_some_and(|l| l == "self") {
        path.pop();
    }
    if let Some(name) = path.last().cloned() {
        out.push((Some(name), path));
    }
}

/// Each strongly connected component of more than one node (Tarjan's algorithm), as the edges
/// between its nodes.
pub fn cycles(edges: &[Edge]) -> Vec<Vec<Edge>> {
    let nodes: Vec<&str> = edges
        .iter()
        .flat_map(|e| [e.from.as_str(), e.to.as_str()])
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let index_of = |n: &str| nodes.binary_search(&n).unwrap_or(0);
    let mut adj = vec![Vec::new(); nodes.len()];
    for e in edges {
        adj[index_of(&e.from)].push(index_of(&e.to));
    }
    let mut t = Tarjan {
        adj: &adj,
        index: vec![usize::MAX; nodes.len()],
        low: vec![0; nodes.len()],
        on_stack: vec![false; nodes.len()],
        stack: Vec::new(),
        next: 0,
        components: Vec::new(),
    };
    for v in 0..nodes.len() {
        if t.index[v] == usize::MAX {
            t.visit(v);
        }
    }
    t.components
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let members: BTreeSet<&str> = c.iter().map(|&v| nodes[v]).collect();
            let inside =
                |e: &&Edge| members.contains(e.from.as_str()) && members.contains(e.to.as_str());
            edges.iter().filter(inside).cloned().collect()
        })
        .collect()
}

struct Tarjan<'a> {
    adj: &'a [Vec<usize>],
    index: Vec<usize>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    next: usize,
    components: Vec<Vec<usize>>,
}

impl Tarjan<'_> {
    fn visit(&mut self, v: usize) {
        self.index[v] = self.next;
        self.low[v] = self.next;
        self.next += 1;
        self.stack.push(v);
        self.on_stack[v] = true;
        for &w in &self.adj[v] {
            if self.index[w] == usize::MAX {
                self.visit(w);
                self.low[v] = self.low[v].min(self.low[w]);
            } else if self.on_stack[w] {
                self.low[v] = self.low[v].min(self.index[w]);
            }
        }
        if self.low[v] == self.index[v] {
            let mut component = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            self.components.push(component);
        }
    }
}

/// The crate roots of every product crate: the libraries under `crates/` and the command's
/// library and binary.
pub fn product_roots() -> Vec<PathBuf> {
    let mut roots = vec![PathBuf::from("src/lib.rs"), PathBuf::from("src/main.rs")];
    let mut crates: Vec<PathBuf> = std::fs::read_dir("crates")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path().join("src/lib.rs"))
                .collect()
        })
        .unwrap_or_default();
    crates.sort();
    roots.extend(crates.into_iter().filter(|p| p.is_file()));
    roots
}

/// Renders the cycles for a failure message.
pub fn describe(root: &Path, cycles: &[Vec<Edge>]) -> String {
    let mut out = String::new();
    for c in cycles {
        let members: BTreeSet<&str> = c
            .iter()
            .flat_map(|e| [e.from.as_str(), e.to.as_str()])
            .collect();
        out.push_str(&format!(
            "\n{}: {} depend on each other:\n",
            root.display(),
            members.into_iter().collect::<Vec<_>>().join(", ")
        ));
        // One line per dependency: the first place that makes it, and how many more there are.
        let mut pairs: BTreeMap<(&str, &str), Vec<&Edge>> = BTreeMap::new();
        for e in c {
            pairs.entry((&e.from, &e.to)).or_default().push(e);
        }
        for ((from, to), es) in pairs {
            let more = match es.len() {
                1 => String::new(),
                n => format!(", and {} more", n - 1),
            };
            out.push_str(&format!(
                "  {from} → {to}: `{}` at {}{more}\n",
                es[0].path, es[0].at
            ));
        }
    }
    out
}

/// The product's modules are layered one way: no crate has an import cycle.
#[test]
fn no_module_depends_on_itself_through_others() {
    let mut report = String::new();
    let mut modules = 0;
    for root in product_roots() {
        let krate = Crate::read(&root);
        modules += krate.len();
        report.push_str(&describe(&root, &krate.cycles()));
    }
    assert!(
        modules > 80,
        "only {modules} modules read: the scan is broken"
    );
    assert!(
        report.is_empty(),
        "import cycles between modules (break each so that one side names nothing of the other):{report}"
    );
}

/// The checker finds what it must: a synthetic crate with a three-module circle through a
/// re-export and a `super::` path, beside a one-way parent and child, fails with exactly the
/// circle.
#[test]
fn the_checker_finds_a_cycle_through_re_exports_and_super() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path();
    let write = |rel: &str, text: &str| {
        let p = src.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(
        "lib.rs",
        "//! Root.\nmod a;\nmod b;\nmod c;\nmod layered;\npub use a::Alpha;\n#[cfg(test)]\nmod tests { use crate::b::*; }\n",
    );
    // a → b (a `use`), b → c (a qualified path in code), c → a (through the root's re-export).
    write("a.rs", "use crate::b::Beta;\npub struct Alpha(Beta);\n");
    write(
        "b.rs",
        "pub struct Beta;\nfn f() { let _ = crate::c::gamma(); }\n",
    );
    write(
        "c.rs",
        "pub fn gamma() -> crate::Alpha { todo!() }\n// crate::layered::x is a comment\n",
    );
    // A parent using its child, a child using its parent's item: no cycle, since the parent's
    // item is defined in the parent and the child names it only.
    write(
        "layered/mod.rs",
        "mod leaf;\npub struct Top;\nconst S: &str = \"super::leaf::Leaf\";\n",
    );
    write(
        "layered/leaf.rs",
        "use super::Top;\npub struct Leaf(Top);\n",
    );
    let krate = Crate::read(&src.join("lib.rs"));
    let cycles = krate.cycles();
    assert_eq!(cycles.len(), 1, "{}", describe(src, &cycles));
    let members: BTreeSet<&str> = cycles[0].iter().map(|e| e.from.as_str()).collect();
    assert_eq!(
        members,
        ["crate::a", "crate::b", "crate::c"].into_iter().collect(),
        "{}",
        describe(src, &cycles)
    );
    let via: Vec<&str> = cycles[0].iter().map(|e| e.path.as_str()).collect();
    assert!(via.contains(&"crate::Alpha"), "{via:?}");
    // Breaking the circle at one place makes the crate pass.
    write("c.rs", "pub fn gamma() {}\n");
    assert!(Crate::read(&src.join("lib.rs")).cycles().is_empty());
    // A parent that uses its child, and a child that names an item of the parent module that
    // is defined there, is still one way; the child naming an item the parent re-exports from
    // the child itself is a cycle no longer (the path resolves to the child).
    write(
        "layered/mod.rs",
        "mod leaf;\npub use leaf::Leaf;\npub struct Top(Leaf);\n",
    );
    write(
        "layered/leaf.rs",
        "pub struct Leaf;\nfn f() -> super::Leaf { Leaf }\n",
    );
    assert!(Crate::read(&src.join("lib.rs")).cycles().is_empty());
    // …but the child naming an item the parent defines, while the parent uses the child, is.
    write("layered/leaf.rs", "pub struct Leaf(super::Top);\n");
    let cycles = Crate::read(&src.join("lib.rs")).cycles();
    assert_eq!(cycles.len(), 1, "{}", describe(src, &cycles));
}
