//! `skillbake.toml` and command-line levels: profiles, per-code levels, `--deny warnings`,
//! ignore globs, and the machine formats that carry them (SARIF).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use skillbake_build::{check, CheckOptions, Code, Level, Profile, Severity};
use std::path::Path;

fn pack(root: &Path, dir: &str, frontmatter: &str, body: &str) {
    let d = root.join(dir);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join("SKILL.md"),
        format!("---\n{frontmatter}---\n{body}\n"),
    )
    .unwrap();
}

fn codes(root: &Path, opts: &CheckOptions) -> Vec<(Code, Severity)> {
    check(root, opts)
        .report
        .diagnostics
        .iter()
        .map(|d| (d.code, d.severity))
        .collect()
}

fn fixture(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

#[test]
fn profiles_change_what_is_known_and_how_loud() {
    let tmp = tempfile::tempdir().unwrap();
    pack(
        tmp.path(),
        "my_skill",
        "name: my_skill\ndescription: d\nversion: \"1.0\"\nmodel: opus\n",
        "{#anchor}",
    );
    let default = codes(tmp.path(), &CheckOptions::default());
    assert_eq!(
        default,
        [
            (Code::NameNotPortable, Severity::Warning),
            (Code::VersionInvalid, Severity::Error),
            (Code::BodyJinja, Severity::Warning)
        ]
    );
    let spec = CheckOptions {
        profile: Some(Profile::AgentSkills),
        ..CheckOptions::default()
    };
    assert_eq!(
        codes(tmp.path(), &spec),
        [
            (Code::NameNotPortable, Severity::Error),
            (Code::UnknownKey, Severity::Error),
            (Code::VersionInvalid, Severity::Error),
            (Code::UnknownKey, Severity::Error),
            (Code::BodyJinja, Severity::Warning)
        ]
    );
    let dbgpt = CheckOptions {
        profile: Some(Profile::DbGpt),
        ..CheckOptions::default()
    };
    assert_eq!(
        codes(tmp.path(), &dbgpt),
        [
            (Code::UnknownKey, Severity::Warning),
            (Code::BodyJinja, Severity::Error)
        ]
    );
}

#[test]
fn config_file_levels_ignore_and_command_line_overrides() {
    let tmp = tempfile::tempdir().unwrap();
    pack(
        tmp.path(),
        "a",
        "name: a\ndescription: d\nrequried_tools: []\n",
        "Body.",
    );
    pack(tmp.path(), "drafts/broken", "name: nope\n", "");
    std::fs::write(
        tmp.path().join("skillbake.toml"),
        "ignore = [\"drafts/**\"]\n[lints]\nunknown-key = \"deny\"\n",
    )
    .unwrap();
    let checked = check(tmp.path(), &CheckOptions::default());
    assert_eq!(checked.report.packs, 1, "drafts/ is ignored");
    assert_eq!(
        codes(tmp.path(), &CheckOptions::default()),
        [(Code::UnknownKey, Severity::Error)]
    );
    let allow = CheckOptions {
        lints: vec![(Code::UnknownKey, Level::Allow)],
        ..CheckOptions::default()
    };
    assert!(codes(tmp.path(), &allow).is_empty());
    let hard = CheckOptions {
        lints: vec![(Code::YamlSyntax, Level::Allow)],
        ..CheckOptions::default()
    };
    pack(tmp.path(), "b", "name: b\ndescription: a: b\n", "Body.");
    assert!(codes(tmp.path(), &hard).contains(&(Code::YamlSyntax, Severity::Error)));
}

#[test]
fn deny_warnings_makes_every_warning_an_error() {
    let root = fixture("rules/name-not-portable/fail");
    let opts = CheckOptions {
        deny_warnings: true,
        ..CheckOptions::default()
    };
    assert_eq!(
        codes(&root, &opts),
        [(Code::NameNotPortable, Severity::Error)]
    );
}

/// `Config::report_file`: a build script writes the whole report in the format it picks, on a
/// build that fails as on one that succeeds.
#[test]
fn a_build_script_writes_json_and_sarif_reports() {
    use skillbake_build::report::Format;
    let tmp = tempfile::tempdir().unwrap();
    let skills = tmp.path().join("skills");
    pack(
        &skills,
        "my-skill",
        "name: my-skill\ndescription: Does things. Use when asked.\ncolour: red\n",
        "Body.",
    );
    let out = tmp.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let (json, sarif) = (out.join("report.json"), out.join("report.sarif"));
    let compile = || {
        skillbake_build::Config::new()
            .skills_dir(&skills)
            .ignore_env()
            .out_dir(&out)
            .no_cargo_output()
            .report_file(Format::Json, &json)
            .report_file(Format::Sarif, &sarif)
            .compile()
    };
    compile().unwrap();
    assert!(out.join("skillbake_registry.rs").exists());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["warnings"], 1);
    assert_eq!(v["diagnostics"][0]["code"], "unknown-key");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    assert_eq!(s["runs"][0]["results"][0]["ruleId"], "unknown-key");

    // Break the pack: the build fails and the report says why.
    pack(
        &skills,
        "my-skill",
        "name: other\ndescription: x\n",
        "Body.",
    );
    assert!(compile().is_err());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["errors"], 1);
    assert_eq!(v["diagnostics"][0]["code"], "name-dir-mismatch");
}

/// The dbgpt profile rejects what DB-GPT cannot serve, and only that: what DB-GPT serves anyway
/// is a warning, a `name` that breaks its lookup stays an error.
#[test]
fn dbgpt_profile_warns_on_what_dbgpt_serves() {
    let tmp = tempfile::tempdir().unwrap();
    pack(
        tmp.path(),
        "pdf-tools",
        "name: PDF-Tools\ndescription: \"\"\ntags: [pdf, 5]\n",
        "Body.",
    );
    pack(
        tmp.path(),
        "numbered",
        "name: 123\ndescription: d\n",
        "Body.",
    );
    let opts = CheckOptions {
        profile: Some(Profile::DbGpt),
        ..CheckOptions::default()
    };
    let got = codes(tmp.path(), &opts);
    assert!(
        got.contains(&(Code::NameCharset, Severity::Warning)),
        "{got:?}"
    );
    assert!(
        got.contains(&(Code::NameDirMismatch, Severity::Warning)),
        "{got:?}"
    );
    assert!(
        got.contains(&(Code::DescriptionEmpty, Severity::Warning)),
        "{got:?}"
    );
    assert!(
        got.contains(&(Code::FieldType, Severity::Warning)),
        "{got:?}"
    );
    // `name: 123`: DB-GPT's lookup calls `.lower()` on it.
    assert!(got.contains(&(Code::FieldType, Severity::Error)), "{got:?}");
    let default = codes(tmp.path(), &CheckOptions::default());
    assert!(
        default.contains(&(Code::NameCharset, Severity::Error)),
        "{default:?}"
    );
}

#[test]
fn a_config_text_is_checked_in_place_of_the_file_on_disk() {
    let tmp = tempfile::tempdir().unwrap();
    pack(
        tmp.path(),
        "digest",
        "name: digest\ndescription: Digest reports.\nautor: me\n",
        "Digest the report.",
    );
    std::fs::write(tmp.path().join("skillbake.toml"), "profile = \"default\"\n").unwrap();
    let with = |text: &str| CheckOptions {
        config_text: Some(text.to_string()),
        ..CheckOptions::default()
    };
    assert_eq!(
        codes(tmp.path(), &CheckOptions::default()),
        [(Code::UnknownKey, Severity::Warning)]
    );
    // The text's levels apply, not the file's.
    assert_eq!(
        codes(tmp.path(), &with("[lints]\nunknown-key = \"deny\"\n")),
        [(Code::UnknownKey, Severity::Error)]
    );
    // A broken text: its own diagnostic, at its position under the file's name, with the text
    // as the source to render; the configuration does not apply.
    let checked = check(tmp.path(), &with("[lints]\nunknown-key = \"loud\"\n"));
    let d = &checked.report.diagnostics;
    let at: Vec<_> = d
        .iter()
        .map(|d| (d.code, d.file.as_str(), d.line, d.column))
        .collect();
    assert_eq!(
        at,
        [
            (Code::UnknownKey, "digest/SKILL.md", Some(4), Some(1)),
            (Code::ConfigInvalid, "skillbake.toml", Some(2), Some(15)),
        ]
    );
    assert_eq!(
        checked
            .report
            .sources
            .get("skillbake.toml")
            .map(String::as_str),
        Some("[lints]\nunknown-key = \"loud\"\n")
    );
    // A configuration file given that does not exist on disk yet (a new, unsaved buffer).
    let new = CheckOptions {
        config_file: Some(tmp.path().join("new/skillbake.toml")),
        ..with("[lints]\nunknown-key = \"allow\"\n")
    };
    assert_eq!(codes(tmp.path(), &new), Vec::new());
}
