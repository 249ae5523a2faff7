//! A downstream crate with an invalid `skills/` folder (`tests/fixtures/crates/invalid-skills`)
//! fails `cargo build`, and the one failed build reports every problem of every pack with its
//! code, location and fix — not only the first one.
//!
//! The fixture is copied to a temporary folder (its relative path dependencies rewritten to the
//! repository's absolute path, the repository's `Cargo.lock` beside it), so nothing is written
//! inside the repository except under `target/`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common::{copy_tree, Order};
use std::process::Command;

#[test]
fn invalid_skills_fail_the_downstream_build_with_every_diagnostic() {
    let repo = &crate::common::workspace();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("invalid-skills");
    copy_tree(
        &repo.join("crates/skillbake-build/tests/fixtures/crates/invalid-skills"),
        &dir,
        Order::Sorted,
    );

    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let (runtime, build) = ("\"../../../../../skillbake\"", "\"../../../..\"");
    assert!(manifest.contains(runtime) && manifest.contains(build));
    let manifest = manifest
        .replace(runtime, &format!("{:?}", repo.join("crates/skillbake")))
        .replace(build, &format!("{:?}", repo.join("crates/skillbake-build")));
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(repo.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();

    let o = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--offline"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", crate::common::downstream_target())
        .env_remove("SKILLBAKE_SKILLS_DIR")
        .env_remove("RUSTFLAGS")
        .env("CARGO_TERM_COLOR", "never")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "the build must fail:\n{stderr}");

    let expected: [&[&str]; 3] = [
        &[
            "error[yaml-syntax]: invalid YAML in the frontmatter: mapping values are not allowed in this context",
            "--> meeting-notes/SKILL.md:3:47",
            "= help: a value containing `: ` must be quoted, e.g. `description: \"Use when: ...\"`",
        ],
        &[
            "error[name-dir-mismatch]: `name` is `report-writter` but the pack's folder is `report-writer`",
            "--> report-writer/SKILL.md:2:7",
            "= help: set `name: report-writer`, or rename the folder to `report-writter`",
        ],
        &[
            "error[unknown-tool]: `required_tools` names `sql_qeury`, which is not a known tool",
            "--> sql-helper/SKILL.md:6:5",
            "= help: did you mean `sql_query`?",
        ],
    ];
    let mut last = 0;
    for lines in expected {
        for line in lines {
            let at = stderr[last..]
                .find(line)
                .unwrap_or_else(|| panic!("missing, or out of order: {line}\n{stderr}"));
            last += at + line.len();
        }
    }
    assert!(
        stderr.contains("checked 3 packs: 3 errors, 0 warnings"),
        "{stderr}"
    );
    assert!(
        stderr.contains("skillbake: the skill packs have errors; fix them to build"),
        "{stderr}"
    );
}
