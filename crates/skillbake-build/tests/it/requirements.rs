//! Resolution of versions and requirements at build time, on packs written for each case: which
//! version of each skill agents get by name, how the agent's and the packs' requirements narrow
//! it, and the diagnostics (with both locations) when they cannot be met.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use skillbake_build::report::human;
use skillbake_build::{check, CheckOptions, Code};
use std::path::Path;

fn pack(root: &Path, folder: &str, name: &str, version: &str, extra: &str) {
    let dir = root.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: Test pack {name}. Use when testing.\nversion: \"{version}\"\n{extra}---\n# {name}\n\nSteps.\n"),
    )
    .unwrap();
}

/// (name, version) of every pack agents get by name, and the errors raised.
fn resolve(root: &Path, opts: &CheckOptions) -> (Vec<(String, String)>, Vec<Code>, String) {
    let checked = check(root, opts);
    let mut defaults: Vec<(String, String)> = checked
        .packs()
        .filter(|s| s.is_default())
        .map(|s| {
            (
                s.name().to_string(),
                s.version().unwrap_or_default().to_string(),
            )
        })
        .collect();
    defaults.sort();
    // Errors only: these packs are alike on purpose, which routing warns about.
    let codes = checked
        .report
        .diagnostics
        .iter()
        .filter(|d| d.severity == skillbake_build::Severity::Error)
        .map(|d| d.code)
        .collect();
    (defaults, codes, human::render(&checked.report, false))
}

fn d(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn the_newest_release_is_the_default() {
    let tmp = tempfile::tempdir().unwrap();
    pack(tmp.path(), "a", "a", "2.0.0-rc.1", "");
    pack(tmp.path(), "a@1.5.0", "a", "1.5.0", "");
    pack(tmp.path(), "a@1.0.0", "a", "1.0.0", "");
    pack(tmp.path(), "b", "b", "0.1.0-alpha", "");
    let (defaults, codes, report) = resolve(tmp.path(), &CheckOptions::default());
    assert!(codes.is_empty(), "{report}");
    // A release wins over a newer pre-release; a skill with only pre-releases gets the newest.
    assert_eq!(defaults, d(&[("a", "1.5.0"), ("b", "0.1.0-alpha")]));
}

#[test]
fn the_agent_and_the_packs_narrow_the_default() {
    let tmp = tempfile::tempdir().unwrap();
    pack(tmp.path(), "mail", "mail", "2.0.0", "");
    pack(tmp.path(), "mail@1.4.0", "mail", "1.4.0", "");
    pack(tmp.path(), "mail@1.2.0", "mail", "1.2.0", "");
    pack(
        tmp.path(),
        "report",
        "report",
        "3.0.0",
        "requires:\n  skills:\n    mail: \"~1.2\"\n",
    );
    // `report` (the default) requires mail ~1.2: agents get mail 1.2.0, not 2.0.0 nor 1.4.0.
    let (defaults, codes, report) = resolve(tmp.path(), &CheckOptions::default());
    assert!(codes.is_empty(), "{report}");
    assert_eq!(defaults, d(&[("mail", "1.2.0"), ("report", "3.0.0")]));

    // The agent's own requirement applies first and combines with the packs'.
    let tmp = tempfile::tempdir().unwrap();
    pack(tmp.path(), "mail", "mail", "2.0.0", "");
    pack(tmp.path(), "mail@1.4.0", "mail", "1.4.0", "");
    pack(
        tmp.path(),
        "report",
        "report",
        "3.0.0",
        "requires:\n  skills:\n    mail: \">=1.2\"\n",
    );
    let opts = CheckOptions {
        requires: vec![("mail".into(), "^1".into())],
        ..CheckOptions::default()
    };
    let (defaults, codes, report) = resolve(tmp.path(), &opts);
    assert!(codes.is_empty(), "{report}");
    assert_eq!(defaults, d(&[("mail", "1.4.0"), ("report", "3.0.0")]));
}

#[test]
fn conflicting_requirements_name_both_places() {
    let tmp = tempfile::tempdir().unwrap();
    pack(tmp.path(), "mail", "mail", "2.0.0", "");
    pack(tmp.path(), "mail@1.0.0", "mail", "1.0.0", "");
    pack(
        tmp.path(),
        "alerts",
        "alerts",
        "1.0.0",
        "requires:\n  skills:\n    mail: \"^1\"\n",
    );
    pack(
        tmp.path(),
        "report",
        "report",
        "1.0.0",
        "requires:\n  skills:\n    mail: \"^2\"\n",
    );
    let (_, codes, report) = resolve(tmp.path(), &CheckOptions::default());
    assert_eq!(codes, [Code::RequiresUnsatisfied], "{report}");
    assert!(
        report.contains("--> report/SKILL.md:7:12")
            && report.contains(
                "no embedded version of `mail` (1.0.0, 2.0.0) satisfies both this and `^1`"
            )
            && report.contains(" ::: alerts/SKILL.md:7:12")
            && report.contains("-- agents get `mail` 1.0.0 by name because of this requirement"),
        "{report}"
    );
}

#[test]
fn agent_requirements_are_reported_in_the_config_and_for_the_build_api() {
    let tmp = tempfile::tempdir().unwrap();
    pack(tmp.path(), "mail", "mail", "1.0.0", "");
    std::fs::write(
        tmp.path().join("skillbake.toml"),
        "[requires]\nmial = \"^1\"\nmail = \"^1, <1.0.0\"\n",
    )
    .unwrap();
    let opts = CheckOptions {
        requires: vec![("mail".into(), "~one".into())],
        ..CheckOptions::default()
    };
    let (_, codes, report) = resolve(tmp.path(), &opts);
    assert_eq!(
        codes,
        [
            Code::RequiresInvalid,
            Code::AgentRequiresUnsatisfied,
            Code::AgentRequiresUnsatisfied
        ],
        "{report}"
    );
    assert!(report.contains("did you mean `mail`?"), "{report}");
    assert!(
        report.contains("`Config::require` gives `mail` the range `~one`"),
        "{report}"
    );
}

#[test]
fn longer_cycles_and_self_requirements() {
    let tmp = tempfile::tempdir().unwrap();
    pack(
        tmp.path(),
        "a",
        "a",
        "1.0.0",
        "requires:\n  skills:\n    b: \"1\"\n",
    );
    pack(
        tmp.path(),
        "b",
        "b",
        "1.0.0",
        "requires:\n  skills:\n    c: \"1\"\n",
    );
    pack(
        tmp.path(),
        "c",
        "c",
        "1.0.0",
        "requires:\n  skills:\n    a: \"1\"\n",
    );
    pack(
        tmp.path(),
        "d",
        "d",
        "1.0.0",
        "requires:\n  skills:\n    d: \"1\"\n",
    );
    let (_, codes, report) = resolve(tmp.path(), &CheckOptions::default());
    assert_eq!(
        codes,
        [Code::RequiresCycle, Code::RequiresCycle],
        "{report}"
    );
    assert!(
        report.contains("requirements form a cycle: a 1.0.0 → b 1.0.0 → c 1.0.0 → a 1.0.0"),
        "{report}"
    );
    assert!(report.contains("`d` requires itself"), "{report}");

    // A requirement that only an older version meets is not a cycle of the newer one.
    let tmp = tempfile::tempdir().unwrap();
    pack(
        tmp.path(),
        "a",
        "a",
        "2.0.0",
        "requires:\n  skills:\n    b: \"1\"\n",
    );
    pack(tmp.path(), "a@1.0.0", "a", "1.0.0", "");
    pack(
        tmp.path(),
        "b",
        "b",
        "1.0.0",
        "requires:\n  skills:\n    a: \"1\"\n",
    );
    let (_, codes, report) = resolve(tmp.path(), &CheckOptions::default());
    assert!(codes.is_empty(), "{report}");
}

/// `requires:` holds kinds of requirement: `skills` are resolved (a list of names is any
/// version), the flat form still resolves with a warning, other tools' kinds are read for what
/// they are, and a wrong shape of a kind skillbake reads is reported at its place.
#[test]
fn requires_reads_every_kind_for_what_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    pack(tmp.path(), "mail", "mail", "1.4.0", "");
    pack(
        tmp.path(),
        "alerts",
        "alerts",
        "1.0.0",
        "requires:\n  skills: [mail]\n  mcp: [rube]\n  bins: curl\n  python: [\">=3.10\"]\n",
    );
    pack(
        tmp.path(),
        "digest",
        "digest",
        "1.0.0",
        "requires:\n  mail: \"^1\"\n",
    );
    let checked = check(tmp.path(), &CheckOptions::default());
    let report = human::render(&checked.report, false);
    let codes: Vec<(Code, u32)> = checked
        .report
        .diagnostics
        .iter()
        .map(|d| (d.code, d.line.unwrap_or(0)))
        .filter(|(c, _)| *c != Code::DescriptionNearDuplicate)
        .collect();
    assert_eq!(codes, [(Code::RequiresDeprecated, 6)], "{report}");
    assert!(report.contains("move it under `skills:`: `requires: {skills: {mail: \"^1\"}}`"));

    // A skill no pack provides is still unsatisfied, in either spelling.
    pack(
        tmp.path(),
        "alerts",
        "alerts",
        "1.0.0",
        "requires:\n  skills: [post]\n",
    );
    let (_, codes, report) = resolve(tmp.path(), &CheckOptions::default());
    assert_eq!(codes, [Code::RequiresUnsatisfied], "{report}");

    pack(
        tmp.path(),
        "alerts",
        "alerts",
        "1.0.0",
        "requires:\n  mcp: {rube: 1}\n  skills:\n    mail: 1.4\n  skill:\n    mail: \"^1\"\nmetadata:\n  openclaw:\n    requires:\n      env: {KEY: 1}\n",
    );
    let checked = check(tmp.path(), &CheckOptions::default());
    let report = human::render(&checked.report, false);
    let got: Vec<(Code, u32)> = checked
        .report
        .diagnostics
        .iter()
        .filter(|d| d.file == "alerts/SKILL.md")
        .map(|d| (d.code, d.line.unwrap_or(0)))
        .collect();
    assert_eq!(
        got,
        [
            (Code::FieldType, 6),
            (Code::FieldType, 8),
            (Code::UnknownKey, 9),
            (Code::FieldType, 14),
        ],
        "{report}"
    );
    assert!(
        report.contains("`requires.mcp` must be a list of names (MCP servers), found a mapping"),
        "{report}"
    );
    assert!(
        report.contains("`metadata.openclaw.requires.env` must be a list of names"),
        "{report}"
    );
    assert!(report.contains("did you mean `skills`?"), "{report}");
}
