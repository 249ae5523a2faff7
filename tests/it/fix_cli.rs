//! `skillbake check --diff` and `--fix` through the real binary, on copies of
//! `crates/skillbake-build/tests/fixtures/fix/skills` in a temporary folder: the diff of every
//! mechanical fix, nothing written by `--diff`, the files after `--fix`, what is left for a
//! human, and folder renames only with `--rename-dirs`.

use std::path::{Path, PathBuf};

use super::binary::{skillbake, text};
use crate::common::{copy_tree, Order};

/// A copy of the fixture packs as `skills/` in a new temporary folder.
fn fixture() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let from = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("crates/skillbake-build/tests/fixtures/fix/skills");
    copy_tree(&from, &tmp.path().join("skills"), Order::Sorted);
    tmp
}

/// Every file under `dir`, `/`-separated and sorted, with its text.
fn tree(dir: &Path) -> String {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<(String, String)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let rel = format!("{rel}{}", e.file_name().to_string_lossy());
            if e.file_type().unwrap().is_dir() {
                walk(&e.path(), &format!("{rel}/"), out);
            } else {
                out.push((rel, std::fs::read_to_string(e.path()).unwrap()));
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, "", &mut files);
    files.sort();
    files
        .into_iter()
        .map(|(p, t)| format!("==> {p}\n{t}"))
        .collect()
}

#[test]
fn diff_shows_every_fix_and_writes_nothing() {
    let tmp = fixture();
    let before = tree(&tmp.path().join("skills"));
    let o = skillbake(tmp.path(), &["check", "skills", "--diff"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    insta::assert_snapshot!("fix-diff", text(&o.stdout));
    insta::assert_snapshot!("fix-diff-stderr", text(&o.stderr));
    assert_eq!(
        tree(&tmp.path().join("skills")),
        before,
        "--diff writes nothing"
    );
    // With renames: the names lowercased, the folders renamed.
    let o = skillbake(tmp.path(), &["check", "skills", "--diff", "--rename-dirs"]);
    assert_eq!(o.status.code(), Some(1));
    insta::assert_snapshot!("fix-diff-rename-dirs", text(&o.stdout));
    assert_eq!(tree(&tmp.path().join("skills")), before);
}

#[test]
fn fix_applies_the_diff_and_reports_what_remains() {
    let tmp = fixture();
    let o = skillbake(tmp.path(), &["check", "skills", "--fix"]);
    // Left: the folder renames not asked for, and a name no fix can choose.
    assert_eq!(o.status.code(), Some(1));
    insta::assert_snapshot!("fix-stderr", text(&o.stderr));
    insta::assert_snapshot!("fix-recheck", text(&o.stdout));
    insta::assert_snapshot!("fix-after", tree(&tmp.path().join("skills")));
    // Nothing more to do without renames: the diff is empty.
    let o = skillbake(tmp.path(), &["check", "skills", "--diff"]);
    assert_eq!(text(&o.stdout), "");
    assert_eq!(o.status.code(), Some(0));

    let o = skillbake(tmp.path(), &["check", "skills", "--fix", "--rename-dirs"]);
    assert_eq!(o.status.code(), Some(1));
    insta::assert_snapshot!("fix-rename-dirs-stderr", text(&o.stderr));
    let recheck = text(&o.stdout);
    assert!(recheck.contains("error[name-dir-mismatch]"), "{recheck}");
    assert!(
        recheck.contains("checked 5 packs: 1 error, 0 warnings"),
        "{recheck}"
    );
    let mut dirs: Vec<String> = std::fs::read_dir(tmp.path().join("skills"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    assert_eq!(
        dirs,
        [
            "case-folder",
            "colon-in-value",
            "misspelt-keys",
            "unfixable",
            "upper-name"
        ]
    );
}

#[test]
fn a_pack_given_alone_is_renamed_and_checked_under_its_new_name() {
    let tmp = fixture();
    let o = skillbake(
        tmp.path(),
        &["check", "skills/Upper-Name", "--fix", "--rename-dirs"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("checked 1 pack: 0 errors, 0 warnings"));
    assert!(tmp.path().join("skills/upper-name/SKILL.md").is_file());
    assert!(!tmp.path().join("skills/Upper-Name").exists());
}

#[test]
fn rename_dirs_needs_fix_or_diff_and_fix_excludes_baseline() {
    let tmp = fixture();
    let o = skillbake(tmp.path(), &["check", "skills", "--rename-dirs"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--rename-dirs goes with --fix or --diff"));
    let o = skillbake(
        tmp.path(),
        &["check", "skills", "--fix", "--baseline", "main"],
    );
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn fix_removes_a_byte_order_mark_and_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    let pack = tmp.path().join("skills/with-bom");
    std::fs::create_dir_all(&pack).unwrap();
    let content = "---\nname: with-bom\ndescription: \"Keep the rest.\"  \n---\n\nBody.\n";
    std::fs::write(pack.join("SKILL.md"), format!("\u{feff}{content}")).unwrap();
    let o = skillbake(tmp.path(), &["check", "skills", "--fix"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert_eq!(
        text(&o.stderr),
        "fixed skills/with-bom/SKILL.md: remove the byte order mark\n"
    );
    assert!(text(&o.stdout).starts_with("checked 1 pack: 0 errors, 0 warnings"));
    assert_eq!(
        std::fs::read_to_string(pack.join("SKILL.md")).unwrap(),
        content
    );
}

/// CRLF, lone CR and mixed endings, and CRLF behind a BOM: `--diff` shows each line break
/// changed and writes nothing; `--fix` leaves every file as it was with each CRLF and lone CR
/// made LF (no other byte changed), and the check after it is clean.
#[test]
fn fix_makes_every_line_end_with_lf_and_changes_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (
            "crlf",
            "---\r\nname: crlf\r\ndescription: \"Tabs\tand spaces  \"  \r\n---\r\n\r\nBody.  \r\n",
        ),
        (
            "mixed",
            "---\nname: mixed\r\ndescription: d\n---\n\nBody \u{e9}.\r\nEnd",
        ),
        (
            "lone-cr",
            "---\rname: lone-cr\rdescription: d\r---\r\rBody.\r",
        ),
        (
            "bom-crlf",
            "\u{feff}---\r\nname: bom-crlf\r\ndescription: d\r\n---\r\n\r\nBody.\r\n",
        ),
    ];
    for (name, content) in cases {
        let pack = tmp.path().join("skills").join(name);
        std::fs::create_dir_all(&pack).unwrap();
        std::fs::write(pack.join("SKILL.md"), content).unwrap();
    }
    let o = skillbake(tmp.path(), &["check", "skills", "--diff"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let diff = text(&o.stdout);
    assert!(
        diff.contains(
            "--- a/skills/crlf/SKILL.md\n+++ b/skills/crlf/SKILL.md\n@@ -1,6 +1,6 @@\n\
             ----\r\n-name: crlf\r\n-description: \"Tabs\tand spaces  \"  \r\n----\r\n-\r\n-Body.  \r\n\
             +---\n+name: crlf\n+description: \"Tabs\tand spaces  \"  \n+---\n+\n+Body.  \n"
        ),
        "{diff}"
    );
    for (name, content) in cases {
        let on_disk =
            std::fs::read_to_string(tmp.path().join("skills").join(name).join("SKILL.md"));
        assert_eq!(on_disk.unwrap(), content, "--diff writes nothing");
    }

    let o = skillbake(tmp.path(), &["check", "skills", "--fix"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert_eq!(
        text(&o.stderr),
        "fixed skills/bom-crlf/SKILL.md: remove the byte order mark; end every line with LF\n\
         fixed skills/crlf/SKILL.md: end every line with LF\n\
         fixed skills/lone-cr/SKILL.md: end every line with LF\n\
         fixed skills/mixed/SKILL.md: end every line with LF\n"
    );
    assert!(text(&o.stdout).starts_with("checked 4 packs: 0 errors, 0 warnings"));
    for (name, content) in cases {
        let want = content
            .trim_start_matches('\u{feff}')
            .replace("\r\n", "\n")
            .replace('\r', "\n");
        let after = std::fs::read(tmp.path().join("skills").join(name).join("SKILL.md")).unwrap();
        assert_eq!(String::from_utf8(after).unwrap(), want, "{name}");
    }
}

/// Files whose last line has no line feed: `--diff` marks it as `diff -u` does
/// (`\ No newline at end of file`), and `git apply` of that diff writes what `--fix` writes.
#[test]
fn the_diff_marks_a_missing_final_line_feed_and_applies_as_the_fix() {
    let cases = [
        (
            "mixed",
            "---\nname: mixed\r\ndescription: d\n---\n\nBody \u{e9}.\r\nEnd",
        ),
        (
            "noeol",
            "---\r\nname: noeol\r\ndescription: d\r\n---\r\n\r\nBody.",
        ),
    ];
    let make = || {
        let tmp = tempfile::tempdir().unwrap();
        for (name, content) in cases {
            let pack = tmp.path().join("skills").join(name);
            std::fs::create_dir_all(&pack).unwrap();
            std::fs::write(pack.join("SKILL.md"), content).unwrap();
        }
        tmp
    };
    let (by_diff, by_fix) = (make(), make());
    let o = skillbake(by_diff.path(), &["check", "skills", "--diff"]);
    let diff = text(&o.stdout);
    assert!(
        diff.contains("-Body \u{e9}.\r\n+Body \u{e9}.\n End\n\\ No newline at end of file\n"),
        "{diff}"
    );
    assert!(
        diff.contains("+\n Body.\n\\ No newline at end of file\n"),
        "{diff}"
    );
    let patch = by_diff.path().join("fix.patch");
    std::fs::write(&patch, &diff).unwrap();
    let applied = std::process::Command::new("git")
        .args(["apply", "--whitespace=nowarn", "fix.patch"])
        .current_dir(by_diff.path())
        .output()
        .unwrap();
    assert!(applied.status.success(), "{}", text(&applied.stderr));
    let o = skillbake(by_fix.path(), &["check", "skills", "--fix"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    for (name, _) in cases {
        let read = |d: &tempfile::TempDir| {
            std::fs::read(d.path().join("skills").join(name).join("SKILL.md")).unwrap()
        };
        assert_eq!(read(&by_diff), read(&by_fix), "{name}");
    }
}

/// A shell script with CRLF endings (`shell-line-endings`): `--fix` makes its lines end with LF
/// and changes nothing else, and leaves a Python script with CRLF endings (which Python reads)
/// and the pack's `SKILL.md` as they were.
#[test]
fn fix_makes_a_shell_script_end_its_lines_with_lf() {
    let tmp = tempfile::tempdir().unwrap();
    let pack = tmp.path().join("skills/setup");
    std::fs::create_dir_all(pack.join("scripts")).unwrap();
    let md = "---\nname: setup\ndescription: Check the tools. Use before a summary.\n---\n\nRun `scripts/setup.sh`.\n";
    let sh = "#!/bin/sh\r\nset -e\r\necho \"r\u{e9}ady\"  \r\nexit 0";
    let py = "import sys\r\nprint(sys.argv)\r\n";
    std::fs::write(pack.join("SKILL.md"), md).unwrap();
    std::fs::write(pack.join("scripts/setup.sh"), sh).unwrap();
    std::fs::write(pack.join("scripts/count.py"), py).unwrap();

    let o = skillbake(tmp.path(), &["check", "skills"]);
    let out = text(&o.stdout);
    assert!(
        out.contains("warning[shell-line-endings]: `scripts/setup.sh` ends its lines with CRLF")
            && out.contains(" --> setup/scripts/setup.sh:1:10"),
        "{out}"
    );
    assert!(!out.contains("count.py"), "{out}");

    let o = skillbake(tmp.path(), &["check", "skills", "--fix"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert_eq!(
        text(&o.stderr),
        "fixed skills/setup/scripts/setup.sh: end every line with LF\n"
    );
    assert!(text(&o.stdout).starts_with("checked 1 pack: 0 errors, 0 warnings"));
    let read = |f: &str| String::from_utf8(std::fs::read(pack.join(f)).unwrap()).unwrap();
    assert_eq!(read("scripts/setup.sh"), sh.replace("\r\n", "\n"));
    assert_eq!(read("scripts/count.py"), py);
    assert_eq!(read("SKILL.md"), md);
}

/// A tab outside quotes (`yaml-tab`) and a ` #` that reads as a comment (`yaml-inline-comment`):
/// `--diff` shows the quoting and respacing, `--fix` writes it, and what looks like a real
/// comment, or a tab in a value over several lines, is left and reported.
#[test]
fn fix_quotes_tabs_and_hashes_and_leaves_what_may_be_a_comment() {
    let tmp = tempfile::tempdir().unwrap();
    let pack = tmp.path().join("skills/plain-values");
    std::fs::create_dir_all(&pack).unwrap();
    let md = pack.join("SKILL.md");
    std::fs::write(
        &md,
        "---\nname: plain-values\ndescription: Review C# and F# projects.\tUse for build failures #dotnet\nwhen_to_use: a failing CI run  # the usual case\nversion:\t\"1.0.0\"\nmetadata:\n  layout: two\tcolumns\n  summary: one\n    two\tthree\n---\n\nReview the project.\n",
    )
    .unwrap();
    let o = skillbake(tmp.path(), &["check", "skills", "--diff"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    insta::assert_snapshot!("fix-plain-values-diff", text(&o.stdout));
    let o = skillbake(tmp.path(), &["check", "skills", "--fix"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    insta::assert_snapshot!("fix-plain-values-recheck", text(&o.stdout));
    insta::assert_snapshot!(
        "fix-plain-values-after",
        std::fs::read_to_string(&md).unwrap()
    );
}
