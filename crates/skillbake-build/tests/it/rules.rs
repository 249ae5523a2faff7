//! Every rule has fixtures as data under `tests/fixtures/rules/<code>/`: `fail/` must raise the
//! code (its rendered diagnostics are snapshotted), `pass/` must raise nothing at all. Cases
//! that git cannot store (a FIFO, a non-UTF-8 file name) are built at run time from `pass/`, as
//! the `GENERATED` marker says. Rules that compare with a baseline (`check --baseline`) have a
//! third folder, `baseline/`, that both are checked against; rules of `skills.lock` are checked
//! with `--locked` (their `pass/` holds a lock). `tests/fixtures/accepted/*` are
//! inputs other loaders get wrong and that must pass cleanly.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use skillbake_build::report::human;
use skillbake_build::{check, Baseline, CheckOptions, Code};
use std::path::{Path, PathBuf};

use crate::common::{copy_tree, Order};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Builds the fail case of a code whose fixture git cannot store.
fn generated_fail(code: Code, pass: &Path, tmp: &Path) -> PathBuf {
    let root = tmp.join("fail");
    copy_tree(pass, &root, Order::Sorted);
    match code {
        Code::UnsupportedFileType => {
            let status = std::process::Command::new("mkfifo")
                .arg(root.join("my-skill/pipe"))
                .status()
                .unwrap();
            assert!(status.success());
        }
        Code::PathNotUtf8 => {
            use std::os::unix::ffi::OsStrExt;
            let name = std::ffi::OsStr::from_bytes(b"\xff.md");
            std::fs::write(root.join("my-skill").join(name), "x").unwrap();
        }
        Code::PackOverMcpLimits => {
            let data = root.join("my-skill/data");
            for i in 0..511 {
                std::fs::write(data.join(format!("part-{i:03}.csv")), "units\n1\n").unwrap();
            }
        }
        other => panic!("no generator for {other}"),
    }
    root
}

/// The options a rule's fixtures are checked with: against `baseline/` when the rule compares
/// with a baseline (`check --baseline`); with `--locked` when `pass/` has a `skills.lock`.
fn options(dir: &Path) -> CheckOptions {
    let baseline = dir.join("baseline");
    CheckOptions {
        baseline: baseline.is_dir().then(|| Baseline {
            dir: baseline,
            label: "baseline".into(),
        }),
        locked: dir.join("pass/skills.lock").is_file(),
        ..CheckOptions::default()
    }
}

/// A check that leaves the cost out (`check --quiet`, the editor; it skips the routing index of
/// a single pack without `route_tests`) reports exactly what the full check reports.
fn same_without_cost(dir: &Path, opts: &CheckOptions, full: &skillbake_build::report::Report) {
    let lean = check(
        dir,
        &CheckOptions {
            without_cost: true,
            ..opts.clone()
        },
    );
    assert_eq!(
        human::render(&lean.report, false),
        human::render(full, false),
        "{}",
        dir.display()
    );
    assert!(lean.report.cost.is_none(), "{}", dir.display());
}

#[test]
fn every_code_has_a_failing_and_a_passing_fixture() {
    let rules = fixtures().join("rules");
    let mut dirs: Vec<String> = std::fs::read_dir(&rules)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    let mut codes: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    codes.sort_unstable();
    assert_eq!(dirs, codes, "fixture folders and codes differ");

    for &code in Code::ALL {
        let dir = rules.join(code.as_str());
        let tmp = tempfile::tempdir().unwrap();
        let fail = if dir.join("GENERATED").exists() {
            generated_fail(code, &dir.join("pass"), tmp.path())
        } else {
            dir.join("fail")
        };
        let failed = check(&fail, &options(&dir));
        same_without_cost(&fail, &options(&dir), &failed.report);
        let seen: Vec<&str> = failed
            .report
            .diagnostics
            .iter()
            .map(|d| d.code.as_str())
            .collect();
        assert!(
            seen.contains(&code.as_str()),
            "{code}: tests/fixtures/rules/{code}/fail raised {seen:?}, not `{code}`: make the \
             fixture break the rule, or the rule raise it"
        );
        assert!(
            failed
                .report
                .diagnostics
                .iter()
                .all(|d| d.severity == d.code.default_severity()),
            "{code}"
        );
        let mut settings = insta::Settings::clone_current();
        settings.set_omit_expression(true);
        settings.set_description(format!("{code}: {}", code.summary()));
        settings.bind(|| {
            insta::assert_snapshot!(format!("rule-{code}"), human::render(&failed.report, false));
        });

        let passed = check(&dir.join("pass"), &options(&dir));
        same_without_cost(&dir.join("pass"), &options(&dir), &passed.report);
        assert!(
            passed.report.diagnostics.is_empty(),
            "{code}: pass/ raised:\n{}",
            human::render(&passed.report, false)
        );
    }
}

/// The accepted inputs that come with warnings, and their codes: skillbake reads them, but
/// other hosts may not (`crlf`: line endings that hosts looking for `---\n` do not read).
const ACCEPTED_WITH_WARNINGS: &[(&str, &[&str])] = &[("crlf", &["line-endings"])];

#[test]
fn accepted_inputs_pass_cleanly() {
    let mut n = 0;
    for e in std::fs::read_dir(fixtures().join("accepted")).unwrap() {
        let path = e.unwrap().path();
        let checked = check(&path, &CheckOptions::default());
        let name = path.file_name().unwrap().to_string_lossy();
        let expected = ACCEPTED_WITH_WARNINGS
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(&[][..], |(_, codes)| *codes);
        let seen: Vec<&str> = checked
            .report
            .diagnostics
            .iter()
            .map(|d| d.code.as_str())
            .collect();
        assert!(
            seen == expected && !checked.report.has_errors(),
            "{}:\n{}",
            path.display(),
            human::render(&checked.report, false)
        );
        assert!(checked.report.packs > 0, "{}", path.display());
        n += 1;
    }
    assert!(n >= 9);
}

/// Frontmatter shapes measured on public packs (nested `requires`, `metadata` maps and lists,
/// OpenClaw metadata, Claude Code's and DB-GPT's fields, `allowed-tools` as a string and a
/// list): the default profile accepts every one, so a new field or rule cannot silently reject
/// them (`accepted_inputs_pass_cleanly` asserts no diagnostic at all).
#[test]
fn real_world_shapes_are_all_accepted() {
    let root = fixtures().join("accepted/real-world-shapes");
    let packs = std::fs::read_dir(&root)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().join("SKILL.md").is_file())
        .count();
    let checked = check(&root, &CheckOptions::default());
    assert!(!checked.report.has_errors());
    assert_eq!(checked.packs().count(), packs);
    assert!(packs >= 11);
    let release = checked
        .packs()
        .find(|p| p.name() == "release-notes")
        .unwrap();
    assert!(release.is_default());
}

/// A BOM (reported: `byte-order-mark`) and CRLF line endings (reported: `line-endings`) are
/// read, kept byte for byte in the file and normalised away in the values and the body.
#[test]
fn bom_and_crlf_are_kept_in_the_file_and_normalised_when_served() {
    for (dir, starts) in [
        ("rules/byte-order-mark/fail", &b"\xef\xbb\xbf---\n"[..]),
        ("accepted/crlf", b"---\r\nname: my-skill\r\n"),
    ] {
        let checked = check(&fixtures().join(dir), &CheckOptions::default());
        assert!(!checked.report.has_errors(), "{dir}");
        assert_eq!(checked.packs().count(), 1);
        for skill in checked.packs() {
            assert_eq!(
                skill.description(),
                "Summarise text files. Use when the user asks for a summary.",
                "{dir}"
            );
            assert!(!skill.body().contains('\r'));
            assert!(!skill.body().starts_with('\u{feff}'));
            assert_eq!(skill.body(), skill.body().trim());
            let md = skill.files().find(|f| f.path == "SKILL.md").unwrap();
            assert!(md.bytes.starts_with(starts), "{dir}: kept byte-exact");
        }
    }
}

/// A pack that ships example packs under `assets/` and `examples/` is one pack whose files
/// include the examples' `SKILL.md`s, byte for byte.
#[test]
fn example_packs_are_files_of_their_pack() {
    let root = fixtures().join("accepted/example-pack");
    let checked = check(&root, &CheckOptions::default());
    assert!(checked.report.diagnostics.is_empty());
    assert_eq!(checked.packs().len(), 1);
    let pack = checked.packs().next().unwrap();
    let paths: Vec<&str> = pack.files().map(|f| f.path).collect();
    assert_eq!(
        paths,
        [
            "SKILL.md",
            "assets/example-skill/SKILL.md",
            "examples/minimal/SKILL.md"
        ]
    );
    let inner = std::fs::read(root.join("skill-writer/assets/example-skill/SKILL.md")).unwrap();
    assert_eq!(pack.files().nth(1).unwrap().bytes, inner);
}
