//! Tidy checks run as tests: every code raised by the module it names, every module documented,
//! no placeholder of `cargo xtask new-rule` left, no stray snapshot files, no ignored or
//! should-panic tests, modules layered one way (`layers`), no product function over 120 lines
//! (`fn_length`). (Text generated from the code is checked by `cargo xtask codegen --check`.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod deps;
mod fn_length;
mod layers;
mod lexer;

use skillbake_build::Code;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name == "target" || name.starts_with('.') || name == "fixtures" {
            continue;
        }
        if p.is_dir() {
            rust_files(&p, out);
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
}

fn all_rust_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["src", "crates", "xtask", "tests"] {
        rust_files(Path::new(dir), &mut files);
    }
    files.push(PathBuf::from("build.rs"));
    files
}

/// The source of `path` without its `#[cfg(test)]` module (tests name codes they expect, not
/// codes they raise).
fn non_test_source(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    match text.find("#[cfg(test)]") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// Places where `Diagnostic::new` is called with a code, as (variant, file).
fn constructions() -> Vec<(String, PathBuf)> {
    let mut files = Vec::new();
    rust_files(Path::new("crates/skillbake-build/src"), &mut files);
    let mut out = Vec::new();
    for f in files {
        let text = non_test_source(&f);
        let mut rest = text.as_str();
        while let Some(i) = rest.find("Diagnostic::new(") {
            rest = &rest[i + "Diagnostic::new(".len()..];
            let arg = rest.trim_start();
            if let Some(code) = arg.strip_prefix("Code::") {
                let variant: String = code
                    .chars()
                    .take_while(char::is_ascii_alphanumeric)
                    .collect();
                out.push((variant, f.clone()));
            }
        }
    }
    out
}

/// `Code::module()` is true: the module it names raises the code (mentions `Code::<Variant>`
/// outside its tests), and no other module builds a diagnostic of that code: a code raised from
/// several places has one typed constructor in its module, which the others call.
#[test]
fn every_code_is_raised_by_the_module_it_names() {
    let src = Path::new("crates/skillbake-build/src");
    let built = constructions();
    assert!(
        built.len() > Code::ALL.len() / 2,
        "the scan finds constructions"
    );
    for &c in Code::ALL {
        let variant = format!("{c:?}");
        let module = src.join(c.module());
        let text = non_test_source(&module);
        assert!(
            text.contains(&format!("Code::{variant}")),
            "`{c}`: {} does not raise Code::{variant}: raise it there (or fix the module in the codes! table)",
            module.display()
        );
        for (v, file) in &built {
            assert!(
                *v != variant || *file == module,
                "`{c}` is built in {} but its module is {}: give the code a constructor in its \
                 module and call it",
                file.display(),
                module.display()
            );
        }
    }
    // Every construction names a code that exists.
    let variants: Vec<String> = Code::ALL.iter().map(|c| format!("{c:?}")).collect();
    for (v, file) in &built {
        assert!(variants.contains(v), "{}: Code::{v}", file.display());
    }
}

/// `cargo xtask new-rule` leaves `TODO(new-rule)` where a human decides (the summary, the
/// documentation, the failing fixture, a new module); none may be left behind.
#[test]
fn no_new_rule_placeholder_is_left() {
    let marker = ["TODO", "(new-rule)"].concat();
    let mut files = vec![PathBuf::from("crates/skillbake-build/src/diagnostic.rs")];
    rust_files(Path::new("crates/skillbake-build/src"), &mut files);
    let mut stack = vec![
        PathBuf::from("crates/skillbake-build/rules"),
        PathBuf::from("crates/skillbake-build/tests/fixtures/rules"),
    ];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue; // binary fixtures
        };
        assert!(
            !text.contains(&marker),
            "{} still has a `{marker}` placeholder to fill in",
            f.display()
        );
    }
}

/// ARCHITECTURE.md is a code map that cannot go stale: every path it names in backticks exists
/// (up to a placeholder such as `<code>` or `{name}`), and it has its "Entry points".
#[test]
fn architecture_names_only_existing_paths() {
    let text = std::fs::read_to_string("ARCHITECTURE.md").unwrap();
    assert!(
        text.contains("\n## Entry points\n"),
        "ARCHITECTURE.md lacks `## Entry points`"
    );
    let mut checked = 0;
    for (i, span) in text.split('`').enumerate() {
        // Odd pieces are inside backticks.
        if i % 2 == 0 || !span.contains('/') || span.contains("://") || span.contains(' ') {
            continue;
        }
        // Up to a placeholder, the folder it sits in must exist.
        let path = match span.find(['<', '{', '*']) {
            Some(at) => span[..at].rfind('/').map_or("", |slash| &span[..=slash]),
            None => span,
        };
        assert!(
            Path::new(path).exists(),
            "ARCHITECTURE.md names `{span}`, but `{path}` does not exist: update the code map"
        );
        checked += 1;
    }
    assert!(
        checked > 40,
        "only {checked} paths found: the scan is broken"
    );
}

#[test]
fn every_module_has_a_doc_comment() {
    for f in all_rust_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(
            text.starts_with("//!"),
            "{} lacks a `//!` module doc",
            f.display()
        );
    }
}

/// The one module allowed to contain `unsafe`: the sandbox step between fork and exec.
const UNSAFE_MODULE: &str = "crates/skillbake-sandbox/src/pre_exec.rs";

#[test]
fn no_ignored_or_should_panic_tests_and_no_unsafe() {
    let (ignore, should_panic, unsafe_kw, allow_unsafe) = (
        ["#[", "ignore]"].concat(),
        ["#[", "should_panic"].concat(),
        ["unsafe", " {"].concat(),
        ["allow(", "unsafe_code)"].concat(),
    );
    let mut unsafe_seen = false;
    for f in all_rust_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        let is_unsafe_module = f == Path::new(UNSAFE_MODULE);
        for bad in [&ignore, &should_panic] {
            assert!(
                !text.contains(bad.as_str()),
                "{} contains {bad}",
                f.display()
            );
        }
        if !is_unsafe_module {
            for bad in [&unsafe_kw, &allow_unsafe] {
                assert!(
                    !text.contains(bad.as_str()),
                    "{} contains {bad}: `unsafe` belongs in {UNSAFE_MODULE} only",
                    f.display()
                );
            }
            continue;
        }
        // Every unsafe block of the module is preceded by a SAFETY comment.
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if !line.contains(unsafe_kw.as_str()) || line.trim_start().starts_with("//") {
                continue;
            }
            unsafe_seen = true;
            let comment_above = lines[..i]
                .iter()
                .rev()
                .take_while(|l| l.trim_start().starts_with("//") || l.contains(unsafe_kw.as_str()))
                .any(|l| l.contains("// SAFETY:"));
            assert!(
                comment_above,
                "{}:{}: `unsafe` block without a `// SAFETY:` comment",
                f.display(),
                i + 1
            );
        }
    }
    assert!(
        unsafe_seen,
        "{UNSAFE_MODULE} was expected to hold the unsafe blocks"
    );
}

/// Every crate forbids `unsafe` through the workspace lints, except the sandbox crate, which
/// denies it (so that its one module can allow it) and requires SAFETY comments.
#[test]
fn unsafe_is_forbidden_in_every_crate_but_the_sandbox() {
    let mut manifests = vec![
        PathBuf::from("Cargo.toml"),
        PathBuf::from("xtask/Cargo.toml"),
    ];
    for e in std::fs::read_dir("crates").unwrap() {
        manifests.push(e.unwrap().path().join("Cargo.toml"));
    }
    for m in manifests {
        let text = std::fs::read_to_string(&m).unwrap();
        if m == Path::new("crates/skillbake-sandbox/Cargo.toml") {
            assert!(text.contains("unsafe_code = \"deny\""), "{}", m.display());
            assert!(
                text.contains("undocumented_unsafe_blocks = \"deny\""),
                "{}",
                m.display()
            );
        } else {
            assert!(
                text.contains("[lints]\nworkspace = true"),
                "{} does not use the workspace lints (unsafe_code = \"forbid\")",
                m.display()
            );
        }
    }
    let root = std::fs::read_to_string("Cargo.toml").unwrap();
    assert!(root.contains("unsafe_code = \"forbid\""));
}

/// No snapshot waits for review anywhere in the workspace.
#[test]
fn no_pending_snapshots() {
    fn walk(dir: &Path, pending: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if name == "target" || name.starts_with('.') {
                continue;
            }
            if p.is_dir() {
                walk(&p, pending);
            } else if name.ends_with(".snap.new") || name.ends_with(".pending-snap") {
                pending.push(p.display().to_string());
            }
        }
    }
    let mut pending = Vec::new();
    walk(Path::new("."), &mut pending);
    assert!(
        pending.is_empty(),
        "unreviewed snapshots: {pending:?} (run `cargo insta review`)"
    );
}

/// Codes are a public contract: renaming or removing one shows up as a snapshot diff.
#[test]
fn codes_are_stable() {
    let list: String = Code::ALL
        .iter()
        .map(|c| {
            format!(
                "{:<26} {:<8} hard={}\n",
                c.as_str(),
                c.default_severity(),
                c.is_hard()
            )
        })
        .collect();
    insta::assert_snapshot!("codes", list);
}

/// README's table of result codes is the executor's `ErrorCode` table.
#[test]
fn readme_result_codes_match_the_executor() {
    use skillbake_exec::ErrorCode;
    let readme = std::fs::read_to_string("README.md").unwrap();
    let start = readme
        .find("<!-- exec-codes:start -->\n")
        .expect("exec-codes:start")
        + 26;
    let end = readme
        .find("<!-- exec-codes:end -->")
        .expect("exec-codes:end");
    let mut expected = String::from("| code | when |\n|---|---|\n");
    for &c in ErrorCode::ALL {
        expected.push_str(&format!(
            "| `{}` | {} |\n",
            c.as_str(),
            c.summary().replace('|', "\\|")
        ));
    }
    assert!(
        readme[start..end] == expected,
        "README.md's result codes are out of date; replace them with:\n{expected}"
    );
}

/// Every published crate carries complete metadata: description, license, repository,
/// keywords, categories, its README and the docs.rs settings (all features, `--cfg docsrs`).
#[test]
fn published_crates_have_complete_metadata() {
    let mut manifests = vec![PathBuf::from("Cargo.toml")];
    for e in std::fs::read_dir("crates").unwrap() {
        manifests.push(e.unwrap().path().join("Cargo.toml"));
    }
    for m in manifests {
        let text = std::fs::read_to_string(&m).unwrap();
        let package = &text[text.find("[package]").unwrap()..];
        for key in [
            "description = ",
            "license.workspace = true",
            "repository.workspace = true",
            "keywords = ",
            "categories = ",
            "readme = \"README.md\"",
            "[package.metadata.docs.rs]\nall-features = true\nrustdoc-args = [\"--cfg\", \"docsrs\"]",
        ] {
            assert!(package.contains(key), "{} lacks `{key}`", m.display());
        }
        let readme = m.with_file_name("README.md");
        assert!(readme.is_file(), "{} is missing", readme.display());
    }
}
