//! Rebuild tracking, driven through cargo in a temporary crate that embeds its own `skills/`
//! exactly as a downstream user would: adding, editing, removing and renaming pack files shows up
//! in the next `cargo run` without `cargo clean`, and an invalid pack fails the build with the
//! rendered diagnostics.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SKILL: &str = "---\nname: alpha\ndescription: Test pack. Use when testing rebuilds.\n---\n# Alpha\n\nBody one.\n";

fn cargo(dir: &Path, args: &[&str]) -> Output {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(args)
        .arg("--offline")
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", crate::common::downstream_target())
        .env_remove("SKILLBAKE_SKILLS_DIR")
        .env_remove("RUSTFLAGS")
        .env("CARGO_TERM_COLOR", "never")
        .output()
        .unwrap()
}

fn run(dir: &Path) -> String {
    let o = cargo(dir, &["run", "--quiet"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

fn write(path: PathBuf, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    // Coarse file-system clocks: make sure the next build sees a newer modification time.
    std::thread::sleep(std::time::Duration::from_millis(1100));
}

#[test]
fn pack_changes_rebuild_and_bad_packs_fail_the_build() {
    let repo = &crate::common::workspace();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let manifest = format!(
        "[package]\nname = \"consumer\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[workspace]\n\n\
         [dependencies]\nskillbake = {{ path = {:?} }}\n\n\
         [build-dependencies]\nskillbake-build = {{ path = {:?} }}\n",
        repo.join("crates/skillbake").display().to_string(),
        repo.join("crates/skillbake-build").display().to_string()
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(repo.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::write(
        dir.join("build.rs"),
        "fn main() -> Result<(), skillbake_build::Error> {\n    skillbake_build::Config::new().skills_dir(\"skills\").compile()\n}\n",
    )
    .unwrap();
    write(
        dir.join("src/main.rs"),
        "skillbake::include_skills!();\n\nfn main() {\n    for s in REGISTRY.iter() {\n        for f in s.files() {\n            println!(\"{} {} {}\", s.name(), f.path(), f.bytes().len());\n        }\n    }\n}\n",
    );
    write(dir.join("skills/alpha/SKILL.md"), SKILL);
    let n = SKILL.len();
    assert_eq!(run(dir), format!("alpha SKILL.md {n}\n"));

    write(dir.join("skills/alpha/references/new.md"), "new file\n");
    assert_eq!(
        run(dir),
        format!("alpha SKILL.md {n}\nalpha references/new.md 9\n")
    );

    write(dir.join("skills/alpha/references/new.md"), "edited file\n");
    assert_eq!(
        run(dir),
        format!("alpha SKILL.md {n}\nalpha references/new.md 12\n")
    );

    std::fs::rename(
        dir.join("skills/alpha/references/new.md"),
        dir.join("skills/alpha/references/renamed.md"),
    )
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(
        run(dir),
        format!("alpha SKILL.md {n}\nalpha references/renamed.md 12\n")
    );

    std::fs::remove_file(dir.join("skills/alpha/references/renamed.md")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(run(dir), format!("alpha SKILL.md {n}\n"));

    let beta = SKILL.replace("alpha", "beta");
    write(dir.join("skills/beta/SKILL.md"), &beta);
    assert_eq!(
        run(dir),
        format!("alpha SKILL.md {n}\nbeta SKILL.md {}\n", beta.len())
    );

    // A broken pack fails the build and the rendered diagnostic says where and how to fix it.
    write(
        dir.join("skills/beta/SKILL.md"),
        &SKILL.replace("alpha", "betta"),
    );
    let o = cargo(dir, &["build", "--quiet"]);
    assert!(!o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(
            "error[name-dir-mismatch]: `name` is `betta` but the pack's folder is `beta`"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("--> beta/SKILL.md:2:7"), "{stderr}");
    assert!(stderr.contains("help: set `name: beta`"), "{stderr}");
}
