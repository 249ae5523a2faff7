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

/// Makes `dir` a crate named `name` that embeds its own `skills/` as a downstream user's does
/// (the repository's runtime and build crates by path, its `Cargo.lock`, a `build.rs` calling
/// `Config::compile`); the test writes `src/main.rs` and the packs.
fn consumer(dir: &Path, name: &str) {
    let repo = &crate::common::workspace();
    let manifest = format!(
        "[package]\nname = {name:?}\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[workspace]\n\n\
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
}

#[test]
fn pack_changes_rebuild_and_bad_packs_fail_the_build() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    consumer(dir, "consumer");
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

/// `n` bytes of text for pack `seed`: words with accented letters, so that a piece boundary
/// inside a character would show, and different for every seed.
fn filler(seed: u64, n: usize) -> String {
    let words = [
        "alpha", "béta", "gamma", "délta", "epsilon", "zêta", "eta", "théta",
    ];
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut out = String::with_capacity(n + 16);
    while out.len() + 8 < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.push_str(words[(x % 8) as usize]);
        out.push(if x.is_multiple_of(11) { '\n' } else { ' ' });
    }
    while out.len() < n {
        out.push('.');
    }
    out
}

/// FNV-1a, 64 bits: the consumer and the test hash served and written bytes the same way.
const FNV: &str = "fn fnv(b: &[u8]) -> u64 { b.iter().fold(0xcbf29ce484222325u64, |h, &x| (h ^ x as u64).wrapping_mul(0x100000001b3)) }";

fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A pack of the test below: its name, its body and its files (path, text).
type Pack = (&'static str, String, Vec<(String, String)>);

/// A registry with more than one piece of text (past 8 MiB) serves every file byte for byte
/// from whichever piece holds it, and shrinking it below one piece removes the other piece's
/// file from the build's output.
#[test]
fn a_registry_of_several_text_pieces_serves_every_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    consumer(dir, "pieces-consumer");
    // Every file's hash as served, and the body's: what the test compares with the packs.
    write(
        dir.join("src/main.rs"),
        &format!(
            "skillbake::include_skills!();\n\n{FNV}\n\nfn main() {{\n    println!(\"{{}}\", env!(\"OUT_DIR\"));\n    for s in REGISTRY.iter() {{\n        println!(\"{{}} body {{:x}}\", s.name(), fnv(s.body().as_bytes()));\n        for f in s.files() {{\n            println!(\"{{}} {{}} {{:x}}\", s.name(), f.path(), fnv(f.bytes()));\n        }}\n    }}\n}}\n"
        ),
    );
    // Three packs of three 0.95 MB references each: 8.6 MB of files, so the third pack's text
    // starts a second piece.
    let names = ["one", "three", "two"];
    let mut packs = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let body = format!("# {name}\n\n{}\n", filler(i as u64, 2000));
        let skill = format!("---\nname: {name}\ndescription: Filler pack {name}. Use when testing large registries.\n---\n{body}");
        let mut files = vec![("SKILL.md".to_string(), skill)];
        for r in 0..3 {
            let text = filler(100 * i as u64 + r, 950_000);
            files.push((format!("references/part-{r}.md"), text));
        }
        for (path, text) in &files {
            let p = dir.join("skills").join(name).join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        packs.push((*name, body, files));
    }
    let expected = |packs: &[Pack]| -> String {
        let mut out = String::new();
        for (name, body, files) in packs {
            // As served: leading and trailing whitespace stripped.
            out.push_str(&format!("{name} body {:x}\n", fnv(body.trim().as_bytes())));
            for (path, text) in files {
                out.push_str(&format!("{name} {path} {:x}\n", fnv(text.as_bytes())));
            }
        }
        out
    };
    let served = run(dir);
    let (out_dir, lines) = served.split_once('\n').unwrap();
    let out_dir = Path::new(out_dir);
    assert_eq!(lines, expected(&packs));
    let piece = |k: usize| {
        out_dir.join(if k == 0 {
            "skillbake_text.txt".to_string()
        } else {
            format!("skillbake_text.{k}.txt")
        })
    };
    assert!(piece(1).exists() && !piece(2).exists());
    let code = std::fs::read_to_string(out_dir.join("skillbake_registry.rs")).unwrap();
    assert!(
        code.contains("include_str!(\"skillbake_text.1.txt\")"),
        "{code}"
    );

    // Down to one pack: one piece, and the second piece's file is gone.
    for name in ["three", "two"] {
        std::fs::remove_dir_all(dir.join("skills").join(name)).unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(1100));
    packs.truncate(1);
    let served = run(dir);
    let (again, lines) = served.split_once('\n').unwrap();
    assert_eq!(Path::new(again), out_dir);
    assert_eq!(lines, expected(&packs));
    assert!(piece(0).exists() && !piece(1).exists());
}
