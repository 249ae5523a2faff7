//! The `skillbake-example-agent` binary end to end: `list` and `load` answer from the embedded
//! registry, from a working directory far from the crate's `skills/` folder.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::process::{Command, Output};

fn agent(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skillbake-example-agent"))
        .args(args)
        // Nothing is read from disk at run time: run where no `skills/` folder exists.
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn list_prints_names_and_descriptions() {
    let o = agent(&["list"]);
    assert!(o.status.success());
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with("summarize-text  Summarise a plain-text document"));
    assert!(lines[1].starts_with("unit-convert    Convert a quantity between units"));
}

#[test]
fn load_prints_the_load_skill_reply() {
    let o = agent(&["load", "unit-convert"]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert_eq!(
        out,
        format!(
            "{}\n",
            skillbake_example_agent::REGISTRY
                .load_skill("unit-convert", "skills/unit-convert/SKILL.md")
        )
    );
    assert!(out.starts_with(
        r#"{"chunks": [{"output_type": "text", "content": "Skill: unit-convert"}, {"output_type": "text", "content": "File path: skills/unit-convert/SKILL.md"}"#
    ));

    let o = agent(&[
        "load",
        "Summarize-Text",
        "skills/summarize-text/schema.json",
    ]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(
        out.contains(r#"{"output_type": "text", "content": "{\n  \"$schema\""#),
        "{out}"
    );
}

#[test]
fn not_found_and_usage_errors_exit_non_zero() {
    let o = agent(&["load", "nope"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "{\"chunks\": [{\"output_type\": \"text\", \"content\": \"Skill 'nope' not found\"}]}\n"
    );

    let o = agent(&["load", "unit-convert", "../secret.txt"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("File '../secret.txt' not found in skill 'unit-convert'"));

    for args in [
        &[][..],
        &["load"][..],
        &["frobnicate"][..],
        &["load", "a", "b", "c"][..],
    ] {
        let o = agent(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&o.stderr).starts_with("usage:"));
    }
}
