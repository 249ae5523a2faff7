//! Tidy checks run as tests: docs in sync with the code, every module documented, no stray
//! snapshot files, no ignored or should-panic tests.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

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

/// The rules table as README.md shows it.
pub fn rules_table() -> String {
    let mut s = String::from("| code | default | checks | rule lives in |\n|---|---|---|---|\n");
    for &c in Code::ALL {
        s.push_str(&format!(
            "| `{}` | {} | {} | `crates/skillbake-build/src/{}` |\n",
            c.as_str(),
            c.default_severity(),
            c.summary().replace('|', "\\|"),
            c.module()
        ));
    }
    s
}

#[test]
fn readme_rules_table_matches_the_code() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let start = readme
        .find("<!-- rules:start -->\n")
        .expect("rules:start marker")
        + 21;
    let end = readme.find("<!-- rules:end -->").expect("rules:end marker");
    let expected = rules_table();
    assert!(
        readme[start..end] == expected,
        "README.md's rules table is out of date; replace it with:\n{expected}"
    );
}

/// The change-rule table of `skillbake diff`, as README.md shows it.
pub fn change_rules_table() -> String {
    use skillbake_build::diff::Rule;
    let mut s = String::from("| rule | needs | area | recognises |\n|---|---|---|---|\n");
    for &r in Rule::ALL {
        s.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            r.as_str(),
            r.bump(),
            r.area().as_str(),
            r.summary().replace('|', "\\|")
        ));
    }
    s
}

#[test]
fn readme_change_rules_table_matches_the_code() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let marker = "<!-- change-rules:start -->\n";
    let start = readme.find(marker).expect("change-rules:start marker") + marker.len();
    let end = readme
        .find("<!-- change-rules:end -->")
        .expect("change-rules:end marker");
    let expected = change_rules_table();
    assert!(
        readme[start..end] == expected,
        "README.md's change rules table is out of date; replace it with:\n{expected}"
    );
}

#[test]
fn rule_modules_exist() {
    for &c in Code::ALL {
        let path = Path::new("crates/skillbake-build/src").join(c.module());
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains(c.as_str()) || text.contains("Code::"),
            "{} in {}",
            c,
            path.display()
        );
    }
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

#[test]
fn no_ignored_or_should_panic_tests_and_no_unsafe() {
    let (ignore, should_panic, unsafe_kw) = (
        ["#[", "ignore]"].concat(),
        ["#[", "should_panic"].concat(),
        ["unsafe", " {"].concat(),
    );
    for f in all_rust_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        for bad in [&ignore, &should_panic, &unsafe_kw] {
            assert!(
                !text.contains(bad.as_str()),
                "{} contains {bad}",
                f.display()
            );
        }
    }
}

#[test]
fn no_pending_snapshots() {
    let mut pending = Vec::new();
    for f in std::fs::read_dir("tests/snapshots").unwrap() {
        let name = f.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".snap.new") || name.ends_with(".pending-snap") {
            pending.push(name);
        }
    }
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
