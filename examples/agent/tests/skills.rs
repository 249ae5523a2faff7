//! The example agent's own packs, as compiled into `skillbake_example_agent::REGISTRY`: every
//! pack's `load_skill` output and file table is snapshotted, and replies follow DB-GPT's chunk
//! format.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use skillbake_example_agent::REGISTRY;

#[test]
fn skills_are_snapshotted() {
    skillbake::assert_skill_snapshots!(REGISTRY);
}

#[test]
fn the_two_packs_are_embedded() {
    assert_eq!(
        REGISTRY.names().collect::<Vec<_>>(),
        ["summarize-text", "unit-convert"]
    );
}

#[test]
fn load_skill_replies_with_dbgpt_chunks() {
    for skill in REGISTRY.iter() {
        let name = skill.name();
        let path = format!("skills/{name}/SKILL.md");
        assert_eq!(skill.skill_md_path(), path);
        let header = format!(
            r##"{{"chunks": [{{"output_type": "text", "content": "Skill: {name}"}}, {{"output_type": "text", "content": "File path: {path}"}}, {{"output_type": "text", "content": "---"}}, {{"output_type": "markdown", "content": "# {name}\n\n"##
        );
        let reply = REGISTRY.load_skill(name, &path);
        assert!(reply.starts_with(&header), "{reply}");
        assert!(reply.ends_with("\"}]}"), "{reply}");
        // The same reply for the upper-cased name, the default path and the relative path.
        assert_eq!(REGISTRY.load_skill(&name.to_uppercase(), &path), reply);
        assert_eq!(REGISTRY.load_skill(name, ""), reply.replace(&path, ""));
        assert!(skill.schema_json().is_some(), "{name} has a schema.json");
    }
}

#[test]
fn scripts_are_served_as_code() {
    for (name, script) in [
        ("summarize-text", "scripts/summarize.py"),
        ("unit-convert", "scripts/convert.py"),
    ] {
        let reply = REGISTRY.load_skill(name, script);
        let code_chunk = r##"{"output_type": "code", "content": "#!/usr/bin/env python3\n"##;
        assert!(reply.contains(code_chunk), "{reply}");
        assert!(reply.contains(&format!("File path: {script}")), "{reply}");
        let file = REGISTRY.get(name).and_then(|s| s.file(script)).unwrap();
        assert!(file
            .text()
            .unwrap()
            .contains("if __name__ == \"__main__\":"));
    }
    assert_eq!(
        REGISTRY.load_skill("nope", "x"),
        r#"{"chunks": [{"output_type": "text", "content": "Skill 'nope' not found"}]}"#
    );
}
