//! `cargo xtask check-skills [DIR]...` — validates skills folders with the same compiler the
//! build uses (default: `skills/` and `examples/*/skills/`), printing rustc-style diagnostics;
//! fails on any error.
//!
//! `cargo xtask sarif-check` — renders the failing rule fixtures as one SARIF log and validates
//! it against the SARIF 2.1.0 JSON schema and Microsoft's SARIF multitool (installed from npm
//! into `target/sarif-tools` on first use).

use std::path::{Path, PathBuf};
use std::process::Command;

/// `cargo xtask check-skills`.
pub fn check_skills(root: &Path, args: &[String]) -> Result<(), String> {
    let dirs: Vec<PathBuf> = if args.is_empty() {
        let mut d = vec![root.join("skills")];
        if let Ok(rd) = std::fs::read_dir(root.join("examples")) {
            let mut ex: Vec<PathBuf> = rd
                .filter_map(Result::ok)
                .map(|e| e.path().join("skills"))
                .filter(|p| p.is_dir())
                .collect();
            ex.sort();
            d.extend(ex);
        }
        d
    } else {
        args.iter().map(PathBuf::from).collect()
    };
    let mut failed = false;
    for dir in &dirs {
        let checked = skillbake_build::check(dir, &skillbake_build::CheckOptions::default());
        eprintln!("==> {}", dir.strip_prefix(root).unwrap_or(dir).display());
        eprint!(
            "{}",
            skillbake_build::report::human::render(&checked.report, false)
        );
        failed |= checked.report.has_errors();
    }
    if failed {
        Err("skill packs have errors".into())
    } else {
        Ok(())
    }
}

/// `cargo xtask sarif-check`.
pub fn sarif_check(root: &Path) -> Result<(), String> {
    let tools = root.join("target/sarif-tools");
    let pkg = tools.join("node_modules/@microsoft/sarif-multitool-linux");
    if !pkg.exists() {
        eprintln!("==> npm install @microsoft/sarif-multitool (into target/sarif-tools)");
        std::fs::create_dir_all(&tools).map_err(|e| e.to_string())?;
        let status = Command::new("npm")
            .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
            .arg(&tools)
            .arg("@microsoft/sarif-multitool@5.7.0")
            .status()
            .map_err(|e| format!("cannot run npm: {e}"))?;
        if !status.success() {
            return Err("npm install @microsoft/sarif-multitool failed".into());
        }
    }
    // One log holding a result for every rule: the failing fixture of each code.
    let mut report = skillbake_build::report::Report::default();
    let rules = root.join("crates/skillbake-build/tests/fixtures/rules");
    let mut codes: Vec<PathBuf> = std::fs::read_dir(&rules)
        .map_err(|e| e.to_string())?
        .filter_map(Result::ok)
        .map(|e| e.path().join("fail"))
        .filter(|p| p.is_dir())
        .collect();
    codes.sort();
    for fail in &codes {
        let mut r = skillbake_build::check(fail, &skillbake_build::CheckOptions::default()).report;
        let rel = fail
            .strip_prefix(root)
            .unwrap_or(fail)
            .to_string_lossy()
            .replace('\\', "/");
        r.prefix_paths(&rel);
        report.merge(r);
    }
    let sarif = skillbake_build::report::sarif::render(&report);
    let out_dir = root.join("target/sarif-check");
    std::fs::create_dir_all(&out_dir).map_err(|e| e.to_string())?;
    let log_path = out_dir.join("rules.sarif");
    std::fs::write(&log_path, &sarif).map_err(|e| e.to_string())?;
    eprintln!(
        "==> {} results in {}",
        report.diagnostics.len(),
        log_path.display()
    );

    let schema_text = std::fs::read_to_string(pkg.join("sarif-2.1.0.json"))
        .map_err(|e| format!("cannot read the SARIF schema: {e}"))?;
    let schema: serde_json::Value =
        serde_json::from_str(&schema_text).map_err(|e| e.to_string())?;
    let log: serde_json::Value = serde_json::from_str(&sarif).map_err(|e| e.to_string())?;
    let validator = jsonschema::validator_for(&schema).map_err(|e| format!("schema: {e}"))?;
    let errors: Vec<String> = validator
        .iter_errors(&log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    if !errors.is_empty() {
        return Err(format!(
            "SARIF does not validate against the 2.1.0 schema:\n{}",
            errors.join("\n")
        ));
    }
    eprintln!("==> valid against the SARIF 2.1.0 JSON schema");

    let validation = out_dir.join("validation.sarif");
    let _ = std::fs::remove_file(&validation);
    let status = Command::new("node")
        .arg(pkg.join("bin.js"))
        .args(["validate", "--output"])
        .arg(&validation)
        .arg(&log_path)
        .status()
        .map_err(|e| format!("cannot run the SARIF multitool: {e}"))?;
    let findings = std::fs::read_to_string(&validation).unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(&findings).unwrap_or_default();
    let errors: Vec<String> = v["runs"][0]["results"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["level"] != "note")
        .map(|r| format!("{}: {}", r["ruleId"], r["message"]["text"]))
        .collect();
    if !status.success() || !errors.is_empty() {
        return Err(format!(
            "SARIF multitool validation failed ({status}):\n{}",
            errors.join("\n")
        ));
    }
    eprintln!("==> SARIF multitool validate: no errors, no warnings");
    Ok(())
}
