//! Byte-compatibility with DB-GPT, checked against DB-GPT itself: its own skill registry
//! (`dbgpt.agent.claude_skill`, filled with `load_skills_from_dir` as DB-GPT fills it) and its own
//! `load_skill` tool (`dbgpt_app.openapi.api_v1.tools.skill_tools.make_load_skill`). The bundled
//! packs' replies must be byte-identical, and on the inputs where DB-GPT's parser and skillbake's
//! differ (a `---` inside the frontmatter) skillbake must say so (`frontmatter-dashes`) rather
//! than serve other bytes silently.
//!
//! DB-GPT is found in the Python named by `SKILLBAKE_DBGPT_PYTHON` (default `python3`), e.g. the
//! environment `cargo xtask bench` installs (`SKILLBAKE_DBGPT_PYTHON=target/bench-venv/bin/python`).
//! Without it the test says so and checks nothing else.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use skillbake_build::{check, CheckOptions, Code};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Reads `{"dir": DIR, "requests": [[skill_name, file_path], ...], "files": [PATH, ...]}` and
/// prints one JSON line per request (DB-GPT's reply) and per file (what DB-GPT's parser makes of
/// that SKILL.md: its description and body, or the error it raises).
const DBGPT: &str = r#"
import json, sys, io, contextlib
from dbgpt.agent.claude_skill import FileBasedSkill, load_skills_from_dir
from dbgpt_app.openapi.api_v1.tools.skill_tools import make_load_skill
req = json.load(sys.stdin)
with contextlib.redirect_stdout(io.StringIO()):
    load_skills_from_dir(req["dir"])
load_skill = make_load_skill({})
for name, file_path in req["requests"]:
    print(json.dumps({"reply": load_skill(name, file_path)}))
for path in req["files"]:
    try:
        s = FileBasedSkill(path)
        print(json.dumps({"description": s.metadata.description, "body": s.instructions}))
    except Exception as e:
        print(json.dumps({"error": f"{type(e).__name__}: {e}".splitlines()[0]}))
"#;

fn dbgpt_python() -> Option<String> {
    let python = std::env::var("SKILLBAKE_DBGPT_PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = Command::new(&python)
        .args([
            "-c",
            "import dbgpt.agent.claude_skill, dbgpt_app.openapi.api_v1.tools.skill_tools",
        ])
        .output();
    match probe {
        Ok(o) if o.status.success() => Some(python),
        _ => {
            eprintln!(
                "skipped: DB-GPT is not installed for `{python}` (pip install dbgpt dbgpt-app, or set SKILLBAKE_DBGPT_PYTHON)"
            );
            None
        }
    }
}

/// Runs `script` with `python -c`, `input` as JSON on its stdin; its output (both streams).
fn python_script(
    python: &str,
    script: &str,
    input: &serde_json::Value,
) -> std::io::Result<std::process::Output> {
    let mut child = Command::new(python)
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input.to_string().as_bytes())?;
    }
    child.wait_with_output()
}

fn run(python: &str, input: &serde_json::Value) -> Vec<serde_json::Value> {
    let out = python_script(python, DBGPT, input).unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn replies_and_parses_match_dbgpt() {
    let Some(python) = dbgpt_python() else {
        return;
    };
    let tricky_paths = [
        "skills/x/SKILL.md",
        "quote\" back\\slash/SKILL.md",
        "ctrl\u{1}\u{8}\u{c}\t\r\n\u{1f}\u{7f}/SKILL.md",
        "unicode é 中文 \u{2028}\u{2029} 😀/SKILL.md",
        "",
    ];
    let mut requests: Vec<(String, String)> = Vec::new();
    for skill in skillbake_cli::BUNDLED.iter() {
        for fp in tricky_paths.iter().copied().chain([skill.skill_md_path()]) {
            requests.push((skill.name().to_string(), fp.to_string()));
        }
        // DB-GPT's case-insensitive fallback, with the registered name in the reply.
        requests.push((
            skill.name().to_uppercase(),
            skill.skill_md_path().to_string(),
        ));
    }
    for name in ["nope", "a\"b", "tab\there", "中文", "\u{0}\u{1b}"] {
        requests.push((name.to_string(), "x".to_string()));
    }
    // Packs where the parsers may differ: every accepted fixture, and the `---` case.
    let mut packs: Vec<std::path::PathBuf> = Vec::new();
    for dir in [
        "crates/skillbake-build/tests/fixtures/accepted",
        "crates/skillbake-build/tests/fixtures/rules/frontmatter-dashes",
    ] {
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            packs.push(e.unwrap().path());
        }
    }
    packs.sort();
    let mut files = Vec::new();
    let mut ours = Vec::new();
    for p in &packs {
        let checked = check(p, &CheckOptions::default());
        let dashes = checked
            .report
            .diagnostics
            .iter()
            .any(|d| d.code == Code::FrontmatterDashes);
        for s in checked.packs() {
            let md = p.join(s.folder()).join("SKILL.md");
            files.push(md.to_string_lossy().into_owned());
            ours.push((
                md,
                s.description().to_string(),
                s.body().to_string(),
                dashes,
            ));
        }
    }
    let input = serde_json::json!({
        "dir": root().join("skills"),
        "requests": requests,
        "files": files,
    });
    let results = run(&python, &input);
    assert_eq!(results.len(), requests.len() + files.len());
    for ((name, fp), want) in requests.iter().zip(&results) {
        assert_eq!(
            skillbake_cli::load_skill(name, fp),
            want["reply"].as_str().unwrap(),
            "{name} {fp:?}"
        );
    }
    let mut agree = 0;
    for ((md, description, body, dashes), theirs) in ours.iter().zip(&results[requests.len()..]) {
        let same = theirs["body"].as_str() == Some(body.as_str())
            && theirs["description"].as_str() == Some(description.as_str());
        if *dashes {
            // Where DB-GPT's substring split cuts the frontmatter it reads something else (or
            // fails); skillbake reports it instead of silently serving other bytes.
            assert!(
                !same,
                "{}: DB-GPT agrees, yet frontmatter-dashes fired",
                md.display()
            );
        } else if theirs.get("error").is_some() {
            // DB-GPT rejects a UTF-8 BOM before `---`, which skillbake accepts.
            let text = std::fs::read(md).unwrap();
            assert!(
                text.starts_with(b"\xef\xbb\xbf"),
                "{}: {}",
                md.display(),
                theirs["error"]
            );
        } else {
            assert!(same, "{}: DB-GPT reads {theirs}", md.display());
            agree += 1;
        }
    }
    assert!(agree >= 8, "only {agree} packs compared");
}

/// What DB-GPT's own `SKILL.md` parser (`dbgpt.agent.claude_skill.FileBasedSkill`, PyYAML's
/// `safe_load`) reads of each file of `{"files": [PATH, ...]}`: one JSON line per file, its
/// description or the error it raises.
const DBGPT_PARSE: &str = r#"
import json, sys, io, contextlib
out = sys.stdout
results = []
with contextlib.redirect_stdout(io.StringIO()):
    from dbgpt.agent.claude_skill import FileBasedSkill
    for path in json.load(sys.stdin)["files"]:
        try:
            results.append({"description": FileBasedSkill(path).metadata.description})
        except Exception as e:
            results.append({"error": f"{type(e).__name__}: {e}".splitlines()[0]})
for r in results:
    out.write(json.dumps(r) + "\n")
"#;

/// What DB-GPT's parser reads of `files`, or `None` (said on stderr) when the Python named by
/// `SKILLBAKE_DBGPT_PYTHON` has no DB-GPT.
fn dbgpt_parse(files: &[std::path::PathBuf]) -> Option<Vec<serde_json::Value>> {
    let python = std::env::var("SKILLBAKE_DBGPT_PYTHON").unwrap_or_else(|_| "python3".into());
    let input = serde_json::json!({ "files": files });
    let out = python_script(&python, DBGPT_PARSE, &input).ok()?;
    if !out.status.success() {
        eprintln!(
            "skipped: DB-GPT is not installed for `{python}` (pip install dbgpt, or set SKILLBAKE_DBGPT_PYTHON): {}",
            String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("")
        );
        return None;
    }
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), files.len());
    Some(lines)
}

/// What DB-GPT makes of the failing fixtures of `yaml-tab` and `yaml-inline-comment`, before and
/// after `check --fix`: it refuses the file with a tab outside quotes and cuts the description
/// at ` #`; after the fix it reads the whole text, as skillbake does, and neither code is left.
#[test]
fn dbgpt_reads_tabs_and_hashes_as_written_once_fixed() {
    let tmp = tempfile::tempdir().unwrap();
    let rules = root().join("crates/skillbake-build/tests/fixtures/rules");
    let mut files = Vec::new();
    for code in ["yaml-tab", "yaml-inline-comment"] {
        crate::common::copy_tree(
            &rules.join(code).join("fail"),
            &tmp.path().join(code),
            crate::common::Order::Sorted,
        );
        files.push(tmp.path().join(code).join("my-skill/SKILL.md"));
    }
    let Some(before) = dbgpt_parse(&files) else {
        return;
    };
    let error = before[0]["error"].as_str().unwrap_or_default();
    assert!(error.contains("while scanning"), "{}", before[0]);
    assert_eq!(
        before[1]["description"],
        "Review C# and F# projects. Use for build failures"
    );

    let mut ours = Vec::new();
    for code in ["yaml-tab", "yaml-inline-comment"] {
        let dir = tmp.path().join(code);
        let opts = CheckOptions::default();
        let plan = skillbake_build::fix::plan(&dir, &opts, Default::default());
        plan.apply(&dir).unwrap();
        let checked = check(&dir, &opts);
        let left: Vec<_> = checked
            .report
            .diagnostics
            .iter()
            .map(|d| (d.code, d.line))
            .collect();
        // What looks like a real comment is left, and reported.
        let want = if code == "yaml-tab" {
            vec![]
        } else {
            vec![(Code::YamlInlineComment, Some(4))]
        };
        assert_eq!(left, want, "{code}");
        ours.push(checked.packs().next().unwrap().description().to_string());
    }
    assert_eq!(
        ours,
        [
            "Summarise text files.\tUse when the user asks for a summary.",
            "Review C# and F# projects. Use for build failures #dotnet"
        ]
    );
    let after = dbgpt_parse(&files).unwrap();
    for (theirs, ours) in after.iter().zip(&ours) {
        assert_eq!(
            theirs["description"].as_str(),
            Some(ours.as_str()),
            "{theirs}"
        );
    }
}
