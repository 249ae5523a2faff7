//! `skillbake check` and `skillbake explain` from the command line: levels (`-D warnings`,
//! `-A CODE`, a misspelt code), the SARIF log, and every rule's documentation. What the options
//! mean for the compiler is tested with it (`crates/skillbake-build/tests/it/config.rs`).

use skillbake_build::Code;
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_skillbake");

fn fixture(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/skillbake-build/tests/fixtures")
        .join(rel)
}

/// `check -D warnings` and `-A CODE` from the command line (the options `CheckOptions` carries).
#[test]
fn check_levels_from_the_command_line() {
    let root = fixture("rules/name-not-portable/fail");
    let o = Command::new(BIN)
        .args(["check", root.to_str().unwrap(), "-D", "warnings", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "checked 1 pack: 1 error, 0 warnings\n"
    );
    let o = Command::new(BIN)
        .args([
            "check",
            root.to_str().unwrap(),
            "-A",
            "name-not-portable",
            "--quiet",
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "checked 1 pack: 0 errors, 0 warnings\n"
    );
    let o = Command::new(BIN)
        .args(["check", root.to_str().unwrap(), "-A", "yaml-syntax"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = Command::new(BIN)
        .args(["check", root.to_str().unwrap(), "-A", "unknwon-key"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("did you mean `unknown-key`?"));
}

#[test]
fn sarif_log_has_rules_results_and_locations() {
    let root = fixture("rules/unknown-tool/fail");
    let o = Command::new(BIN)
        .args(["check", root.to_str().unwrap(), "--format", "sarif"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let log: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(log["version"], "2.1.0");
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), Code::ALL.len());
    let result = &run["results"][0];
    assert_eq!(result["ruleId"], "unknown-tool");
    assert_eq!(result["level"], "error");
    let index = result["ruleIndex"].as_u64().unwrap() as usize;
    assert_eq!(rules[index]["id"], "unknown-tool");
    let loc = &result["locations"][0]["physicalLocation"];
    let uri = loc["artifactLocation"]["uri"].as_str().unwrap();
    assert!(uri.ends_with("/my-skill/SKILL.md"), "{uri}");
    assert_eq!(loc["region"]["startLine"], 4);
    assert_eq!(loc["region"]["startColumn"], 18);
    assert_eq!(loc["region"]["endColumn"], 27);
}

#[test]
fn explain_prints_the_rule_documentation() {
    for code in Code::ALL {
        let o = Command::new(BIN)
            .args(["explain", code.as_str()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0));
        let text = String::from_utf8(o.stdout).unwrap();
        assert!(text.starts_with(&format!("# {code}\n")), "{code}");
        for heading in [
            "## Why",
            "## Failing example",
            "## Passing example",
            "## How to fix",
            "## How to silence",
        ] {
            assert!(
                text.contains(&format!("\n{heading}\n")),
                "{code}: {heading}"
            );
        }
        if code.is_hard() {
            assert!(
                text.contains("hard error"),
                "{code} must say it cannot be silenced"
            );
        } else {
            assert!(
                text.contains(&format!("{code} = \"allow\"")),
                "{code}: how to silence"
            );
        }
    }
    let o = Command::new(BIN)
        .args(["explain", "unknwon-key"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = Command::new(BIN).arg("explain").output().unwrap();
    assert_eq!(
        String::from_utf8(o.stdout).unwrap().lines().count(),
        Code::ALL.len()
    );
}
