//! `skillbake new` through the real binary: every kind of pack it creates checks clean with
//! `skillbake check`; a runnable one returns the unified result when run; an invalid name is
//! refused with the diagnostic `check` gives; an existing folder is never touched.
//!
//! The runs: `skillbake run` executes packs compiled into its binary, so the test runs the same
//! scaffolds compiled into `skillbake_scaffold_fixtures::REGISTRY` (its build script writes them
//! with `skillbake_build::scaffold`, the code behind `skillbake new`) through
//! `skillbake_exec::Executor::execute`, which is what `skillbake run` calls; the files the
//! binary writes are compared byte for byte with the ones that registry embeds.

use serde_json::json;
use skillbake_exec::{Executor, Policy};
use std::path::Path;

use std::time::Duration;

use super::binary::{skillbake, text};

fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

/// The files under `pack`, `/`-separated and sorted, with their bytes.
fn files(pack: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            let rel = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if e.file_type().unwrap().is_dir() {
                walk(&e.path(), &rel, out);
            } else {
                out.push((rel, std::fs::read(e.path()).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(pack, "", &mut out);
    out.sort();
    out
}

#[test]
fn every_kind_of_new_pack_checks_clean() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, runnable) in [
        ("new-plain", None),
        ("new-python", Some("python")),
        ("new-bash", Some("bash")),
        ("new-node", Some("node")),
    ] {
        let mut args = vec!["new", name];
        if let Some(r) = runnable {
            args.extend(["--runnable", r]);
        }
        let o = skillbake(tmp.path(), &args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        assert!(
            text(&o.stdout).starts_with(&format!("created skills/{name}\n")),
            "{}",
            text(&o.stdout)
        );
        // The pack alone, and the skills folder holding every pack made so far.
        for target in [format!("skills/{name}"), "skills".to_string()] {
            let o = skillbake(tmp.path(), &["check", &target, "-D", "warnings"]);
            assert_eq!(o.status.code(), Some(0), "{target}: {}", text(&o.stdout));
            assert!(
                text(&o.stdout).contains(": 0 errors, 0 warnings"),
                "{target}: {}",
                text(&o.stdout)
            );
        }
        // What the binary wrote is what the fixture registry embeds and runs.
        let written = files(&tmp.path().join("skills").join(name));
        let skill = skillbake_scaffold_fixtures::REGISTRY.get(name).unwrap();
        let embedded: Vec<(String, Vec<u8>)> = skill
            .files()
            .map(|f| (f.path().to_string(), f.bytes().to_vec()))
            .collect();
        assert_eq!(written, embedded, "{name}");
        let has_schema = written.iter().any(|(p, _)| p == "schema.json");
        assert_eq!(has_schema, runnable.is_some(), "{name}");
        #[cfg(unix)]
        if let Some((script, _)) = written.iter().find(|(p, _)| p.starts_with("scripts/")) {
            use std::os::unix::fs::PermissionsExt;
            let path = tmp.path().join("skills").join(name).join(script);
            let mode = std::fs::metadata(path).unwrap().permissions().mode();
            assert_eq!(mode & 0o100, 0o100, "{script} is executable");
        }
    }
    let skill_md = std::fs::read_to_string(tmp.path().join("skills/new-python/SKILL.md")).unwrap();
    insta::assert_snapshot!("new-python-skill-md", skill_md);
}

#[test]
fn runnable_new_packs_return_the_unified_result() {
    let tmp = tempfile::tempdir().unwrap();
    let policy = Policy::new()
        .cache_dir(tmp.path().join("cache"))
        .output_dir(tmp.path().join("out"))
        .timeout(Duration::from_secs(120));
    let ex = Executor::new(&skillbake_scaffold_fixtures::REGISTRY, policy);
    for name in ["new-python", "new-bash", "new-node"] {
        if name == "new-node" && !which("node") {
            eprintln!("node is not on PATH: the Node.js scaffold is not run");
            continue;
        }
        let o = ex.execute(name, json!({"text": "héllo"}));
        assert!(o.ok(), "{name}: {o}");
        let data = o.data().unwrap();
        match name {
            "new-bash" => assert_eq!(data, &json!({"params": {"text": "héllo"}}), "{name}"),
            _ => assert_eq!(data, &json!({"text": "héllo", "length": 5}), "{name}"),
        }
        // The schema is checked before anything runs.
        let o = ex.execute(name, json!({"txt": "x"}));
        assert!(!o.ok());
        assert_eq!(o.to_value()["error"]["code"], "INVALID_PARAMS", "{name}");
    }
    // Instructions only: nothing to run.
    let o = ex.execute("new-plain", json!({}));
    assert!(!o.ok());
}

#[test]
fn invalid_names_are_refused_with_the_check_diagnostic() {
    let tmp = tempfile::tempdir().unwrap();
    let o = skillbake(tmp.path(), &["new", "My_Skill"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(text(&o.stdout), "");
    insta::assert_snapshot!("new-invalid-name", text(&o.stderr));
    for name in ["../escape", "a/b", "-lead", &"x".repeat(65), "a: b"] {
        let o = skillbake(tmp.path(), &["new", "--runnable", "python", "--", name]);
        assert_eq!(o.status.code(), Some(1), "{name}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains("error[name-"),
            "{name}: {}",
            text(&o.stderr)
        );
    }
    assert!(!tmp.path().join("skills").exists(), "nothing was created");
    assert!(!tmp.path().join("escape").exists());
}

#[test]
fn an_existing_folder_is_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("packs/taken")).unwrap();
    std::fs::write(tmp.path().join("packs/taken/notes.txt"), "mine").unwrap();
    let o = skillbake(tmp.path(), &["new", "taken", "--dir", "packs"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "skillbake: `packs/taken` already exists; choose another name or remove it first\n"
    );
    assert_eq!(files(&tmp.path().join("packs/taken")).len(), 1);
    // A file where the skills folder should be.
    std::fs::write(tmp.path().join("flat"), "").unwrap();
    let o = skillbake(tmp.path(), &["new", "fresh", "--dir", "flat"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).starts_with("skillbake: cannot create `flat"),
        "{}",
        text(&o.stderr)
    );
}
