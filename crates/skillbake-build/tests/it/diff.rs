//! The diff API behind `skillbake diff` and `check --baseline`. Every rule of the change table
//! has a fixture pair as data under `tests/fixtures/diff/<rule>/{old,new}` (skills folders); the
//! pair must raise the rule, and its report is snapshotted in all three formats
//! (`it__diff__change-<rule>.snap`). Every fixture is checked in one run and every difference is
//! reported at the end. The command on a real git repository is tested with the command
//! (`tests/it/diff_cli.rs` at the workspace root).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use skillbake_build::diff::{self, report, Rule};
use skillbake_build::{check, CheckOptions};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/diff")
}

fn compare(dir: &Path) -> diff::Diff {
    let side = |s: &str| {
        let checked = check(&dir.join(s), &CheckOptions::default());
        assert_eq!(
            checked.report.errors(),
            0,
            "{}/{s}:\n{}",
            dir.display(),
            skillbake_build::report::human::render(&checked.report, false)
        );
        checked
    };
    diff::diff(&side("old"), &side("new"), "old", "new")
}

fn rendered(d: &diff::Diff) -> String {
    format!(
        "{}\n==== markdown\n{}\n==== json\n{}",
        report::human(d, false),
        report::markdown(d),
        report::json(d)
    )
}

#[test]
fn every_change_rule_has_a_fixture_that_raises_it() {
    let mut dirs: Vec<String> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    let mut rules: Vec<&str> = Rule::ALL.iter().map(|r| r.as_str()).collect();
    rules.sort_unstable();
    assert_eq!(dirs, rules, "fixture folders and rules differ");

    let mut failures = Vec::new();
    for &rule in Rule::ALL {
        let outcome = std::panic::catch_unwind(|| {
            let d = compare(&fixtures().join(rule.as_str()));
            let seen: Vec<&str> = d
                .packs
                .iter()
                .flat_map(|p| &p.changes)
                .map(|c| c.rule.as_str())
                .collect();
            assert!(seen.contains(&rule.as_str()), "{rule}: raised {seen:?}");
            let mut settings = insta::Settings::clone_current();
            settings.set_omit_expression(true);
            settings.set_description(format!(
                "{rule} ({}, {}): {}",
                rule.bump(),
                rule.area().as_str(),
                rule.summary()
            ));
            settings.bind(|| insta::assert_snapshot!(format!("change-{rule}"), rendered(&d)));
        });
        if outcome.is_err() {
            failures.push(rule.as_str());
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} change rules failed (each is reported above): {}",
        failures.len(),
        Rule::ALL.len(),
        failures.join(", ")
    );
}
