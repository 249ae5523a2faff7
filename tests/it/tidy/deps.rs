//! The runtime's dependencies are what the docs say: ARCHITECTURE.md's "Runtime dependencies"
//! table is `cargo tree -e normal -p skillbake --features F` for each feature set, and the
//! direct dependencies README's embedding example names are `cargo tree --depth 1`'s.

use std::collections::BTreeSet;
use std::process::Command;

/// The packages `cargo tree -e normal -p skillbake` lists, the crate itself left out.
fn tree(features: &str, depth: Option<u32>) -> BTreeSet<String> {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args([
        "tree",
        "--offline",
        "-e",
        "normal",
        "-p",
        "skillbake",
        "--prefix",
        "none",
    ])
    .args(["--format", "{p}"]);
    if !features.is_empty() {
        cmd.args(["--features", features]);
    }
    if let Some(d) = depth {
        cmd.args(["--depth", &d.to_string()]);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|p| !p.is_empty() && *p != "skillbake")
        .map(str::to_string)
        .collect()
}

/// The names in backticks of `text`.
fn ticked(text: &str) -> BTreeSet<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn the_documented_runtime_dependencies_are_cargo_trees() {
    let arch = std::fs::read_to_string("ARCHITECTURE.md").unwrap();
    let start = arch
        .find("<!-- runtime-deps:start -->")
        .expect("runtime-deps:start");
    let end = arch
        .find("<!-- runtime-deps:end -->")
        .expect("runtime-deps:end");
    let mut rows = 0;
    for line in arch[start..end]
        .lines()
        .filter(|l| l.starts_with("| "))
        .skip(1)
    {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (features, packages) = (cells[1], cells[2]);
        let features = ticked(features).into_iter().collect::<Vec<_>>().join(",");
        assert_eq!(
            ticked(packages),
            tree(&features, None),
            "ARCHITECTURE.md's runtime dependencies with features `{features}` differ from `cargo tree`"
        );
        rows += 1;
    }
    assert_eq!(rows, 4, "one row per feature set and the default");

    // README: `skillbake = "0.1"  # the runtime: A and B, …`.
    let readme = std::fs::read_to_string("README.md").unwrap();
    let line = readme
        .lines()
        .find(|l| l.starts_with("skillbake = \"0.1\"") && l.contains("# the runtime: "))
        .expect("README's embedding example");
    let claimed = line.split("# the runtime: ").nth(1).unwrap();
    let claimed: BTreeSet<String> = claimed
        .split(',')
        .next()
        .unwrap()
        .split(" and ")
        .map(|s| s.trim().to_string())
        .collect();
    assert_eq!(
        claimed,
        tree("", Some(1)),
        "README says the runtime depends on {claimed:?}; `cargo tree --depth 1` disagrees"
    );
}
