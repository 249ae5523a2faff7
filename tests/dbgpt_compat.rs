//! Byte-compatibility with DB-GPT: the replies are compared with what Python's
//! `json.dumps(obj, ensure_ascii=False)` produces for the same skill, as DB-GPT's `load_skill`
//! does (body = text after the frontmatter, universal newlines, `str.strip()`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::io::Write;
use std::process::{Command, Stdio};

/// Reads `[[skill_name, file_path, skill_md_path], ...]` as JSON on stdin and prints DB-GPT's
/// reply for each on its own line (newlines inside replies are escaped by json.dumps).
const DBGPT_REPLY: &str = r#"
import json, sys
for name, file_path, path in json.load(sys.stdin):
    with open(path, encoding="utf-8") as f:  # universal newlines, as DB-GPT reads it
        text = f.read()
    body = text.split("---", 2)[2].strip()   # DB-GPT's frontmatter split
    reply = {"chunks": [
        {"output_type": "text", "content": f"Skill: {name}"},
        {"output_type": "text", "content": f"File path: {file_path}"},
        {"output_type": "text", "content": "---"},
        {"output_type": "markdown", "content": body},
    ]}
    print(json.dumps(reply, ensure_ascii=False))
"#;

fn python(script: &str, input: &str) -> String {
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 is required for the DB-GPT compatibility test");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn bundled_replies_match_python_json_dumps() {
    let tricky_paths = [
        "skills/x/SKILL.md",
        "quote\" back\\slash/SKILL.md",
        "ctrl\u{1}\u{8}\u{c}\t\r\n\u{1f}\u{7f}/SKILL.md",
        "unicode é 中文 \u{2028}\u{2029} 😀/SKILL.md",
        "",
    ];
    let mut requests = Vec::new();
    for skill in skillbake::BUNDLED.iter() {
        for fp in tricky_paths.iter().copied().chain([skill.skill_md_path()]) {
            let path = format!("skills/{}/SKILL.md", skill.name());
            requests.push((skill.name(), fp, path));
        }
    }
    let input = serde_json::to_string(&requests).unwrap();
    let expected = python(DBGPT_REPLY, &input);
    let expected: Vec<&str> = expected.lines().collect();
    assert_eq!(expected.len(), requests.len());
    for ((name, fp, _), want) in requests.iter().zip(expected) {
        assert_eq!(skillbake::load_skill(name, fp), want, "{name} {fp:?}");
    }
}

#[test]
fn not_found_matches_python_json_dumps() {
    let script = r#"
import json, sys
for name in json.load(sys.stdin):
    print(json.dumps({"chunks": [{"output_type": "text", "content": f"Skill '{name}' not found"}]}, ensure_ascii=False))
"#;
    let names = ["nope", "a\"b", "tab\there", "中文", "\u{0}\u{1b}"];
    let expected = python(script, &serde_json::to_string(&names).unwrap());
    for (name, want) in names.iter().zip(expected.lines()) {
        assert_eq!(skillbake::load_skill(name, "x"), want);
    }
}
