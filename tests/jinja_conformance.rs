//! Agreement with Jinja2 itself, measured: every template of `tests/fixtures/jinja/corpus.txt`
//! is given to Python's `jinja2` exactly as DB-GPT gives it a body (`Environment().parse` then
//! `meta.find_undeclared_variables`, which compiles it), and to skillbake's parser
//! (`skillbake_build::parse::jinja`). Both must agree on every verdict (parses or raises) and
//! on every variable list. Without Python 3 and `jinja2` the test says so and checks nothing
//! else (CI installs `jinja2`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use skillbake_build::parse::jinja;
use std::io::Write;
use std::process::{Command, Stdio};

/// DB-GPT's `_get_jinja2_template_vars`, one JSON result per template.
const JINJA2: &str = r#"
import json, sys
from jinja2 import Environment, meta
for src in json.load(sys.stdin):
    try:
        env = Environment()
        ast = env.parse(src)
        print(json.dumps({"ok": True, "vars": sorted(meta.find_undeclared_variables(ast))}))
    except Exception as e:
        print(json.dumps({"ok": False, "error": f"{type(e).__name__}: {e}".splitlines()[0]}))
"#;

/// The corpus: `### NAME` lines, each followed by one template (its last newline excluded).
fn corpus() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/jinja/corpus.txt"
    ))
    .unwrap();
    let mut cases: Vec<(String, String)> = Vec::new();
    for line in text.split_inclusive('\n') {
        if let Some(name) = line.strip_prefix("### ") {
            cases.push((name.trim_end().to_string(), String::new()));
        } else if let Some((_, body)) = cases.last_mut() {
            body.push_str(line);
        }
    }
    for (_, body) in &mut cases {
        if body.ends_with('\n') {
            body.pop();
        }
    }
    cases
}

/// Runs `script` with `input` on stdin, or `None` when Python or jinja2 is missing.
fn python(script: &str, input: &str) -> Option<String> {
    let probe = Command::new("python3")
        .args(["-c", "import jinja2"])
        .output();
    match probe {
        Ok(o) if o.status.success() => {}
        _ => {
            eprintln!("skipped: Python 3 with `jinja2` is not installed (pip install jinja2)");
            return None;
        }
    }
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

#[test]
fn corpus_agrees_with_jinja2() {
    let cases = corpus();
    assert!(
        cases.len() >= 300,
        "the corpus is {} templates",
        cases.len()
    );
    let sources: Vec<&str> = cases.iter().map(|(_, s)| s.as_str()).collect();
    let Some(out) = python(JINJA2, &serde_json::to_string(&sources).unwrap()) else {
        return;
    };
    let results: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(results.len(), cases.len());
    let mut disagreements = Vec::new();
    let (mut rejected, mut vars_compared) = (0, 0);
    for ((name, src), want) in cases.iter().zip(&results) {
        let ours = jinja::analyse(src);
        let ok = want["ok"].as_bool().unwrap();
        rejected += usize::from(!ok);
        match (&ours, ok) {
            (Ok(a), true) => {
                vars_compared += 1;
                let theirs: Vec<String> = serde_json::from_value(want["vars"].clone()).unwrap();
                if a.vars != theirs {
                    disagreements.push(format!(
                        "{name}: variables {:?}, Jinja2 {theirs:?}\n  {src:?}",
                        a.vars
                    ));
                }
            }
            (Err(_), false) => {}
            (Ok(_), false) => disagreements.push(format!(
                "{name}: accepted, Jinja2 raises {}\n  {src:?}",
                want["error"]
            )),
            (Err(e), true) => disagreements.push(format!(
                "{name}: rejected ({}), Jinja2 accepts\n  {src:?}",
                e.message
            )),
        }
    }
    eprintln!(
        "jinja2 conformance: {} templates ({rejected} rejected by Jinja2, {vars_compared} variable lists), {} disagreements",
        cases.len(),
        disagreements.len()
    );
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}
