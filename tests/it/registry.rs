//! The typed runtime API and `load_skill` resolution, on the bundled packs.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use skillbake::{FileKind, Resolution};
use skillbake_cli::BUNDLED;

const NAMES: [&str; 5] = [
    "csv-data-analysis",
    "excel",
    "financial-report-analyzer",
    "read-file",
    "send-email",
];

#[test]
fn iterates_in_name_order() {
    assert_eq!(BUNDLED.names().collect::<Vec<_>>(), NAMES);
    assert_eq!(BUNDLED.len(), NAMES.len());
    assert!(!BUNDLED.is_empty());
}

#[test]
fn lookup_is_exact_then_ascii_case_insensitive() {
    assert_eq!(BUNDLED.get("excel").map(|s| s.name()), Some("excel"));
    assert_eq!(BUNDLED.get("EXCEL").map(|s| s.name()), Some("excel"));
    assert_eq!(
        BUNDLED.get("Send-Email").map(|s| s.name()),
        Some("send-email")
    );
    assert!(BUNDLED.get_exact("EXCEL").is_none());
    assert!(BUNDLED.get("excel ").is_none());
    assert!(BUNDLED.get("").is_none());
    assert!(BUNDLED.get(&"E".repeat(100)).is_none());
    assert!(BUNDLED.get("ÉXCEL").is_none());
}

#[test]
fn reply_uses_registered_name_and_echoes_file_path() {
    let reply = BUNDLED.load_skill("EXCEL", "whatever/SKILL.md");
    assert!(reply.starts_with(r##"{"chunks": [{"output_type": "text", "content": "Skill: excel"}, {"output_type": "text", "content": "File path: whatever/SKILL.md"}, {"output_type": "text", "content": "---"}, {"output_type": "markdown", "content": ""##));
    assert!(reply.ends_with(r##""}]}"##));
    let quoted = BUNDLED.load_skill("excel", "a\"b\\c\n.md/SKILL.md");
    assert!(quoted.contains(r##""File path: a\"b\\c\n.md/SKILL.md""##));
}

#[test]
fn unknown_skill_is_dbgpts_not_found_chunk() {
    assert_eq!(
        BUNDLED.load_skill("nope", "x"),
        r##"{"chunks": [{"output_type": "text", "content": "Skill 'nope' not found"}]}"##
    );
    assert_eq!(
        BUNDLED.load_skill("it's \"q\"", ""),
        r##"{"chunks": [{"output_type": "text", "content": "Skill 'it's \"q\"' not found"}]}"##
    );
}

#[test]
fn file_paths_resolve_relative_or_behind_the_location() {
    let s = BUNDLED.get("read-file").unwrap();
    assert_eq!(s.location(), "skills/read-file");
    assert_eq!(s.skill_md_path(), "skills/read-file/SKILL.md");
    for path in [
        "scripts/read_file.py",
        "./scripts/read_file.py",
        "skills/read-file/scripts/read_file.py",
        "read-file/scripts/read_file.py",
        "scripts\\read_file.py",
        "scripts//read_file.py",
        "skills\\read-file\\scripts\\read_file.py",
        "skills/read-file/./scripts/read_file.py",
    ] {
        match s.resolve(path) {
            Resolution::File(_, f) => assert_eq!(f.path(), "scripts/read_file.py", "{path}"),
            other => panic!("{path}: {other:?}"),
        }
    }
    for path in [
        "",
        "SKILL.md",
        "skills/read-file/SKILL.md",
        "/abs/elsewhere/SKILL.md",
    ] {
        assert!(matches!(s.resolve(path), Resolution::Body(_)), "{path}");
    }
    for path in [
        "../read-file/scripts/read_file.py",
        "scripts/../scripts/read_file.py",
        "/scripts/read_file.py",
        "C:\\skills\\read-file\\scripts\\read_file.py",
        "https://example.com/scripts/read_file.py",
        "scripts/missing.py",
        "scripts",
        ".",
    ] {
        assert!(
            matches!(s.resolve(path), Resolution::FileNotFound(_)),
            "{path}"
        );
    }
}

#[test]
fn file_replies_carry_the_file_with_its_chunk_type() {
    let reply = BUNDLED.load_skill("read-file", "scripts/read_file.py");
    assert!(reply.contains(r##"{"output_type": "code", "content": "#!/usr/bin/env python3\n"##));
    let reply = BUNDLED.load_skill("excel", "references/formulas.md");
    assert!(reply.contains(r##"{"output_type": "markdown", "content": ""##));
    let reply = BUNDLED.load_skill("read-file", "schema.json");
    assert!(reply.contains(r##"{"output_type": "text", "content": "{"##));
}

#[test]
fn missing_files_get_one_chunk_with_the_file_list() {
    assert_eq!(
        BUNDLED.load_skill("read-file", "../secrets.txt"),
        r##"{"chunks": [{"output_type": "text", "content": "File '../secrets.txt' not found in skill 'read-file'. Available files: SKILL.md, schema.json, scripts/read_file.py"}]}"##
    );
}

#[test]
fn typed_fields() {
    let s = BUNDLED.get("financial-report-analyzer").unwrap();
    assert!(s.description().starts_with("分析"));
    assert!(s.tags().count() > 0);
    assert!(s.required_tools().all(|t| !t.is_empty()));
    assert!(s.version().is_some());
    assert_eq!(s.field_json("name"), Some("\"financial-report-analyzer\""));
    let fm: serde_json::Value = serde_json::from_str(s.frontmatter_json()).unwrap();
    assert_eq!(fm["name"], "financial-report-analyzer");
    assert_eq!(s.fields().next().map(|(k, _)| k), Some("name"));
    let send = BUNDLED.get("send-email").unwrap();
    let schema: serde_json::Value = serde_json::from_str(send.schema_json().unwrap()).unwrap();
    assert_eq!(schema["type"], "object");
    let excel: serde_json::Value =
        serde_json::from_str(BUNDLED.get("excel").unwrap().schema_json().unwrap()).unwrap();
    assert_eq!(excel["required"], serde_json::json!(["path"]));
}

#[test]
fn files_are_byte_exact_and_sorted() {
    for skill in BUNDLED.iter() {
        let paths: Vec<&str> = skill.files().map(|f| f.path()).collect();
        let mut sorted = paths.clone();
        sorted.sort_unstable();
        assert_eq!(paths, sorted);
        for f in skill.files() {
            let on_disk = std::fs::read(format!("skills/{}/{}", skill.name(), f.path())).unwrap();
            assert_eq!(
                f.bytes(),
                on_disk.as_slice(),
                "{}/{}",
                skill.name(),
                f.path()
            );
            assert_eq!(skill.file(f.path()).map(|g| g.path()), Some(f.path()));
            if f.path() == "SKILL.md" {
                assert_eq!(f.kind(), FileKind::Markdown);
                assert_eq!(skill.skill_md().map(|m| m.bytes()), Some(f.bytes()));
            }
        }
    }
}
