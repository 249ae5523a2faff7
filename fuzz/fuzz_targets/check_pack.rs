//! Fuzzes the whole pipeline on one pack: the input is split at its first NUL byte into
//! `SKILL.md` and (when there is a NUL) `schema.json`, written to `<tmp>/my-skill/`, then
//! `skillbake_build::check` runs on `<tmp>`.
//!
//! Invariants: no panic; every diagnostic names a file and has 1-based positions; the human,
//! JSON and GitHub renderers do not panic; an error-free check always generates a registry.

#![no_main]

use libfuzzer_sys::fuzz_target;
use skillbake_build::__internal::{generate, skills, GenOptions};
use skillbake_build::report::{github, human, json};

fuzz_target!(|data: &[u8]| {
    let (skill_md, schema) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], Some(&data[i + 1..])),
        None => (data, None),
    };
    // A fresh root per input: nothing carries over between inputs, and nothing is left behind
    // when the fuzzer exits.
    let dir = tempfile::Builder::new()
        .prefix("skillbake-fuzz-")
        .tempdir()
        .expect("temporary folder");
    let pack = dir.path().join("my-skill");
    std::fs::create_dir(&pack).expect("pack folder");
    std::fs::write(pack.join("SKILL.md"), skill_md).expect("write SKILL.md");
    if let Some(s) = schema {
        std::fs::write(pack.join("schema.json"), s).expect("write schema.json");
    }

    let checked = skillbake_build::check(dir.path(), &Default::default());
    for d in &checked.report.diagnostics {
        assert!(!d.file.is_empty(), "diagnostic without a file: {d:?}");
        assert!(d.line.is_none_or(|l| l >= 1), "line 0 in {d:?}");
        assert!(d.column.is_none_or(|c| c >= 1), "column 0 in {d:?}");
    }
    let _ = human::render(&checked.report, false);
    let _ = human::render(&checked.report, true);
    let _ = json::render(&checked.report);
    let _ = github::render(&checked.report);

    if !checked.report.has_errors() {
        let opts = GenOptions {
            runtime_path: "::skillbake".into(),
            location_prefix: "skills".into(),
            signature: None,
        };
        if let Err(e) = generate(skills(&checked), &opts) {
            panic!("an error-free check failed to generate: {e}");
        }
    }
});
