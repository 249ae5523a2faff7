//! `skillbake diff` and `check --baseline` through the real binary on a real git repository: a
//! baseline revision read through git, and the gate's diagnostics in every `check` format.

use crate::common::{copy_tree, Order};
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_skillbake");

fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .args(["-c", "user.name=test", "-c", "user.email=test@example.com"])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A repository whose `main` has the bundled `send-email` and `read-file` packs, and a work
/// tree with a breaking change to `send-email` (a parameter renamed, an enum value removed, a
/// permission added) released as a minor version.
fn repository() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for pack in ["send-email", "read-file"] {
        copy_tree(
            &repo.join("skills").join(pack),
            &tmp.path().join("skills").join(pack),
            Order::Sorted,
        );
    }
    git(tmp.path(), &["init", "-q"]);
    git(tmp.path(), &["add", "-A"]);
    git(tmp.path(), &["commit", "-q", "-m", "base"]);
    let pack = tmp.path().join("skills/send-email");
    let schema = std::fs::read_to_string(pack.join("schema.json")).unwrap();
    let schema = schema
        .replacen("\"to\": {", "\"recipients\": {", 1)
        .replace("\"required\": [\"to\",", "\"required\": [\"recipients\",")
        .replace("\"enum\": [\"plain\", \"html\"]", "\"enum\": [\"plain\"]");
    std::fs::write(pack.join("schema.json"), schema).unwrap();
    let md = std::fs::read_to_string(pack.join("SKILL.md")).unwrap();
    // A minor bump of whatever version the bundled pack has.
    let line = md.lines().find(|l| l.starts_with("version:")).unwrap();
    let v = skillbake::Version::parse(line["version:".len()..].trim().trim_matches('"')).unwrap();
    let bumped = format!("version: \"{}.{}.0\"", v.major, v.minor + 1);
    let md = md.replacen(line, &bumped, 1);
    let md = if md.contains("permission:\n") {
        md.replacen("permission:\n", "permission:\n  - subprocess\n", 1)
    } else {
        md.replacen("permission: [", "permission: [subprocess, ", 1)
    };
    let md = md.replacen(
        "| `to` | string or string[] | yes |",
        "| `recipients` | string or string[] | yes |",
        1,
    );
    std::fs::write(pack.join("SKILL.md"), md).unwrap();
    tmp
}

fn run(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    )
}

#[test]
fn diff_against_a_git_revision_in_every_format() {
    let tmp = repository();
    let mut snapshots = String::new();
    for format in ["human", "json", "markdown"] {
        let (code, out, err) = run(
            tmp.path(),
            &["diff", "--baseline", "main", "--format", format],
        );
        assert_eq!(code, Some(1), "a version not bumped enough exits 1: {err}");
        snapshots.push_str(&format!(
            "==== diff --baseline main --format {format}\n{out}\n"
        ));
    }
    // Both sides as revisions and `REV:PATH` agree with the baseline form.
    git(tmp.path(), &["stash", "-q"]);
    let (code, out, _) = run(tmp.path(), &["diff", "main", "main:skills"]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("0 changed, 0 added, 0 removed, 2 unchanged"),
        "{out}"
    );
    git(tmp.path(), &["stash", "pop", "-q"]);
    insta::assert_snapshot!("git-baseline-diff", snapshots);
    // The work tree and the index are untouched by reading the revision.
    let status = Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(status.stdout).unwrap(),
        " M skills/send-email/SKILL.md\n M skills/send-email/schema.json\n"
    );
}

#[test]
fn check_baseline_adds_the_gate_to_every_format() {
    let tmp = repository();
    let mut snapshots = String::new();
    for format in ["human", "json", "github", "sarif"] {
        let (code, out, err) = run(
            tmp.path(),
            &[
                "check",
                "skills",
                "--baseline",
                "main",
                "--format",
                format,
                "--color",
                "never",
            ],
        );
        assert_eq!(code, Some(1), "{err}");
        assert!(
            out.contains("version-not-bumped") && out.contains("permission-escalation"),
            "{format}: {out}"
        );
        // SARIF lists every rule of skillbake: keep only its results, without the index into
        // that list (which moves whenever a rule is added).
        let out = if format == "sarif" {
            let mut log: serde_json::Value = serde_json::from_str(&out).unwrap();
            let results = log["runs"][0]["results"].as_array_mut().unwrap();
            for r in results.iter_mut() {
                r.as_object_mut().unwrap().remove("ruleIndex").unwrap();
            }
            serde_json::to_string_pretty(&results).unwrap() + "\n"
        } else {
            out
        };
        snapshots.push_str(&format!(
            "==== check skills --baseline main --format {format}\n{out}\n"
        ));
    }
    insta::assert_snapshot!("git-baseline-check", snapshots);
    // Lint levels apply: a reviewed escalation can be allowed, the bump cannot be skipped.
    let (code, out, _) = run(
        tmp.path(),
        &[
            "check",
            "skills",
            "--baseline",
            "main",
            "-A",
            "permission-escalation",
            "--quiet",
        ],
    );
    assert_eq!(
        (code, out.as_str()),
        (Some(1), "checked 2 packs: 1 error, 0 warnings\n")
    );
    // An unknown revision is a usage error.
    let (code, _, err) = run(
        tmp.path(),
        &["check", "skills", "--baseline", "no-such-branch"],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no-such-branch"), "{err}");
}
