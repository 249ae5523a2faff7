//! `skillbake check --format json` over the whole fixture corpus (every rule's failing and
//! passing fixtures, the security specimens, the accepted packs), through the real binary: the
//! diagnostics are snapshotted byte for byte, so a change that makes `check` faster (threads,
//! one parse instead of several, a prefilter) cannot change what it reports.
//!
//! Two shapes of run: every fixture root given as its own path (how a CI job checks several
//! skills folders in one call, each with its own `skillbake.toml`), and the corpus as three
//! large roots (hundreds of packs checked together: the cross-pack rules, the routing index,
//! the near-duplicate search), with `--profile agentskills`.

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_skillbake");
/// The fixture corpus, relative to the workspace root (where the command runs, so that the
/// paths in the report do not depend on where the repository is).
const FIXTURES: &str = "crates/skillbake-build/tests/fixtures";

fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

/// Every root the fixtures are checked as: `rules/<code>/{fail,pass,baseline}`,
/// `specimens/<code>/<case>`, `accepted/<case>` and `golden`.
fn roots() -> Vec<String> {
    let mut roots = Vec::new();
    for rule in sorted_dirs(&Path::new(FIXTURES).join("rules")) {
        roots.extend(sorted_dirs(&rule));
    }
    for family in sorted_dirs(&Path::new(FIXTURES).join("specimens")) {
        roots.extend(sorted_dirs(&family));
    }
    roots.extend(sorted_dirs(&Path::new(FIXTURES).join("accepted")));
    roots.push(Path::new(FIXTURES).join("golden"));
    roots
        .iter()
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .collect()
}

fn check_json(args: &[String]) -> String {
    let o = Command::new(BIN)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("check")
        .args(["--format", "json"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "the corpus holds errors: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8(o.stdout).unwrap();
    // The report is JSON, and holds what the corpus is known to raise.
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["diagnostics"].as_array().unwrap().len() > 100, "{out}");
    out
}

#[test]
fn every_fixture_root_as_its_own_path() {
    let roots = roots();
    assert!(roots.len() > 200, "{roots:?}");
    insta::assert_snapshot!("corpus-roots", check_json(&roots));
}

#[test]
fn the_corpus_as_three_large_roots() {
    let args: Vec<String> = ["rules", "specimens", "accepted"]
        .iter()
        .map(|r| format!("{FIXTURES}/{r}"))
        .chain(["--profile".to_string(), "agentskills".to_string()])
        .collect();
    insta::assert_snapshot!("corpus-large-roots", check_json(&args));
}
