//! One did-you-mean for the whole product (`skillbake_format::suggest`): a misspelt permission
//! gets the same suggestion from the compiler (`unknown-permission`, at build time) and from
//! the executor (`Policy::allow`, `skillbake run --allow`, at run time).

use skillbake_build::{check, CheckOptions, Code};
use skillbake_exec::Policy;
use skillbake_format::suggest::did_you_mean;

/// The help of the `unknown-permission` diagnostic for a pack declaring `permission`.
fn build_help(permission: &str) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let pack = tmp.path().join("my-skill");
    std::fs::create_dir_all(pack.join("scripts")).unwrap();
    std::fs::write(
        pack.join("SKILL.md"),
        format!(
            "---\nname: my-skill\ndescription: Summarise text files. Use when asked for a summary.\nentrypoint: scripts/run.py\npermission: [\"{permission}\"]\n---\n# My skill\n\nRun the script.\n"
        ),
    )
    .unwrap();
    std::fs::write(pack.join("scripts/run.py"), "print('{}')\n").unwrap();
    let checked = check(tmp.path(), &CheckOptions::default());
    let d = checked
        .report
        .diagnostics
        .iter()
        .find(|d| d.code == Code::UnknownPermission)
        .unwrap_or_else(|| panic!("`{permission}`: {:?}", checked.report.diagnostics));
    d.help.clone().unwrap_or_default()
}

#[test]
fn build_and_run_time_suggest_the_same_permission() {
    let mut suggested = 0;
    for typo in [
        "netwrok",
        "filesystem-read",
        "filesystem.wirte",
        "sub",
        "subproces",
        "fs",
        "colour",
    ] {
        let run_time = Policy::new().allow(typo).unwrap_err().suggestion;
        let help = build_help(typo);
        match run_time {
            Some(s) => {
                suggested += 1;
                assert!(help.starts_with(&did_you_mean(s)), "`{typo}`: {help}");
            }
            None => assert!(!help.contains("did you mean"), "`{typo}`: {help}"),
        }
    }
    assert_eq!(suggested, 5, "the typos with a close permission");
}
