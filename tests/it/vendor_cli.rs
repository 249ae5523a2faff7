//! `skillbake add`, `skillbake update` and `skillbake check --locked` through the real binary,
//! on git repositories made in a temporary folder (no network): commits are made with fixed
//! names and dates, so their ids, and the snapshots that show them, are the same on every run.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;
use std::process::{Command, Output};

use super::binary::{command, shown};

/// `git` with no user or system configuration, a fixed identity and a fixed clock.
fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Pack Author")
        .env("GIT_AUTHOR_EMAIL", "author@example.com")
        .env("GIT_COMMITTER_NAME", "Pack Author")
        .env("GIT_COMMITTER_EMAIL", "author@example.com")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn skillbake(dir: &Path, args: &[&str]) -> Output {
    command(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap()
}

const PDF: &str = "---\nname: pdf\ndescription: Fill PDF forms. Use when the user asks to fill in a PDF form.\nlicense: MIT\nversion: \"1.0.0\"\n---\n# PDF forms\n\nRun `scripts/fill.py` with the form.\n";

/// An upstream repository with two packs: `skills/pdf` (licence in its frontmatter, an
/// executable script) and `skills/notes` (licence from the repository's `LICENSE`).
fn upstream(dir: &Path) -> std::path::PathBuf {
    let repo = dir.join("upstream");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    write(&repo.join("skills/pdf/SKILL.md"), PDF);
    write(
        &repo.join("skills/pdf/scripts/fill.py"),
        "print('filled')\n",
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            repo.join("skills/pdf/scripts/fill.py"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }
    write(
        &repo.join("skills/notes/SKILL.md"),
        "---\nname: notes\ndescription: Keep meeting notes. Use when the user asks for notes.\n---\n# Notes\n\nWrite them down.\n",
    );
    write(
        &repo.join("LICENSE"),
        "                                 Apache License\n                           Version 2.0, January 2004\n",
    );
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    repo
}

#[test]
fn a_vendored_pack_is_locked_checked_and_updated() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let repo = upstream(dir);
    std::fs::create_dir_all(dir.join("skills")).unwrap();

    let add = skillbake(dir, &["add", "upstream", "--path", "skills/pdf"]);
    assert_eq!(add.status.code(), Some(0), "{}", shown(&add));
    let notes = skillbake(
        dir,
        &["add", "upstream", "--path", "skills/notes", "--rev", "main"],
    );
    assert_eq!(notes.status.code(), Some(0), "{}", shown(&notes));
    let lock = std::fs::read_to_string(dir.join("skills/skills.lock")).unwrap();
    insta::assert_snapshot!(
        "vendor_add",
        format!(
            "{}{}\n--- skills/skills.lock\n{lock}",
            shown(&add),
            shown(&notes)
        )
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("skills/pdf/scripts/fill.py"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111, "the script stays executable");
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("skills/pdf/SKILL.md")).unwrap(),
        PDF
    );

    let clean = skillbake(
        dir,
        &["check", "skills", "--locked", "--color", "never", "-q"],
    );
    assert_eq!(clean.status.code(), Some(0), "{}", shown(&clean));

    // One byte changed, a file added, a file removed: each is named, and the check fails.
    let md = dir.join("skills/pdf/SKILL.md");
    write(&md, &PDF.replace("the form.", "the form!"));
    let one = skillbake(dir, &["check", "skills", "--locked", "--color", "never"]);
    assert_eq!(one.status.code(), Some(1));
    write(&dir.join("skills/notes/extra.md"), "added by hand\n");
    std::fs::remove_file(dir.join("skills/pdf/scripts/fill.py")).unwrap();
    let three = skillbake(
        dir,
        &[
            "check", "skills", "--locked", "--color", "never", "--format", "json",
        ],
    );
    assert_eq!(three.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&three.stdout).unwrap();
    let codes: Vec<(&str, &str)> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["code"].as_str().unwrap(), d["file"].as_str().unwrap()))
        .filter(|(code, _)| *code != "reference-missing")
        .collect();
    assert_eq!(
        codes,
        [
            ("lock-mismatch", "notes/extra.md"),
            ("lock-mismatch", "pdf/SKILL.md"),
            ("lock-mismatch", "pdf/scripts/fill.py")
        ]
    );
    // Without --locked the lock is not consulted.
    let unlocked = skillbake(dir, &["check", "skills", "-q"]);
    assert_eq!(unlocked.status.code(), Some(0), "{}", shown(&unlocked));

    // `update` refuses to throw local edits away, unless told to.
    let refused = skillbake(dir, &["update", "pdf"]);
    assert_eq!(refused.status.code(), Some(2));
    insta::assert_snapshot!(
        "vendor_check_locked",
        format!("{}\n{}", shown(&one), shown(&refused))
    );

    // Upstream moves on; `update` takes the new commit and shows what changed.
    write(
        &repo.join("skills/pdf/SKILL.md"),
        &PDF.replace("1.0.0", "1.1.0")
            .replace("with the form.", "with the form and its data."),
    );
    write(&repo.join("skills/pdf/references/fields.md"), "# Fields\n");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "second"]);
    let updated = skillbake(dir, &["update", "pdf", "--force"]);
    assert_eq!(updated.status.code(), Some(0), "{}", shown(&updated));
    let again = skillbake(dir, &["update", "pdf"]);
    assert_eq!(again.status.code(), Some(0), "{}", shown(&again));
    let lock = std::fs::read_to_string(dir.join("skills/skills.lock")).unwrap();
    insta::assert_snapshot!(
        "vendor_update",
        format!(
            "{}{}\n--- skills/skills.lock\n{lock}",
            shown(&updated),
            shown(&again)
        )
    );
    std::fs::remove_file(dir.join("skills/notes/extra.md")).unwrap();
    let clean = skillbake(dir, &["check", "skills", "--locked", "-q"]);
    assert_eq!(clean.status.code(), Some(0), "{}", shown(&clean));
}

#[test]
fn unsafe_or_ambiguous_input_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let repo = upstream(dir);
    write(&dir.join("secret.txt"), "not for packs\n");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("../../../secret.txt", repo.join("skills/notes/leak.txt"))
            .unwrap();
        std::os::unix::fs::symlink("SKILL.md", repo.join("skills/notes/same.md")).unwrap();
    }
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "links"]);
    write(
        &dir.join("skills/mine/SKILL.md"),
        PDF.replace("pdf", "mine").as_str(),
    );

    let mut out = String::new();
    for args in [
        &["add", "upstream", "--path", "../outside"][..],
        &["add", "upstream", "--path", "/etc"],
        &["add", "upstream", "--path", "skills/notes"],
        &["add", "upstream", "--path", "skills"],
        &[
            "add",
            "upstream",
            "--path",
            "skills/pdf",
            "--rev",
            "no-such-branch",
        ],
        &["add", "upstream", "--path", "skills/pdf", "--name", "mine"],
        &["add", "upstream", "--path", "skills/pdf", "--name", "../up"],
        &["add", "no-such-repo", "--path", "skills/pdf"],
        &["update", "pfd"],
    ] {
        let o = skillbake(dir, args);
        out.push_str(&format!("$ skillbake {}\n{}\n", args.join(" "), shown(&o)));
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
    // Nothing was written by the refusals.
    assert!(!dir.join("skills/skills.lock").exists());
    assert!(!dir.join("skills/notes").exists());
    let added = skillbake(dir, &["add", "upstream", "--path", "skills/pdf"]);
    assert_eq!(added.status.code(), Some(0), "{}", shown(&added));
    let twice = skillbake(dir, &["add", "upstream", "--path", "skills/pdf"]);
    out.push_str(&format!(
        "$ skillbake add upstream --path skills/pdf (again)\n{}",
        shown(&twice)
    ));
    assert_eq!(twice.status.code(), Some(2));
    let missing = skillbake(dir, &["update", "pfd"]);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("did you mean `pdf`?"));
    insta::assert_snapshot!("vendor_refusals", out);
}
