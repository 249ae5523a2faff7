//! Release builds of `skillbake` with a pack set compiled in — of this tree and, with
//! `--before REV`, of an earlier revision exported next to it — measured as they build: cargo's
//! wall time and peak memory, rustc's peak memory per crate (through a `RUSTC_WRAPPER` that runs
//! each rustc under `/usr/bin/time`), the build script's own account (`SKILLBAKE_BUILD_STATS`),
//! the binary's size; and the bench crates under `benches/`.

use super::packs::PackSet;
use super::process::{capture, mkdir, s, write};
use crate::{cargo, run as run_step};
use std::path::{Path, PathBuf};
use std::process::Command;

pub(super) fn build_dir(root: &Path, what: &str) -> PathBuf {
    root.join("target/bench-build").join(what)
}

/// A source tree whose `skillbake` is built: this checkout, or an exported revision.
pub(super) struct Tree {
    /// `after` (this checkout) or `before`.
    pub(super) label: &'static str,
    /// The revision, for the report.
    pub(super) rev: String,
    pub(super) src: PathBuf,
    pub(super) target: PathBuf,
}

impl Tree {
    pub(super) fn current(root: &Path) -> Tree {
        Tree {
            label: "after",
            rev: capture(&[
                "git".into(),
                "-C".into(),
                s(root),
                "rev-parse".into(),
                "--short".into(),
                "HEAD".into(),
            ])
            .map_or_else(
                |_| "working tree".into(),
                |r| format!("{} + working tree", r.trim()),
            ),
            src: root.to_path_buf(),
            target: build_dir(root, "skillbake"),
        }
    }

    /// Exports `rev` (`git archive`) into `target/bench-build/before-src`.
    pub(super) fn export(root: &Path, rev: &str) -> Result<Tree, String> {
        let src = build_dir(root, "before-src");
        let marker = build_dir(root, "before-src.rev");
        let full = capture(&[
            "git".into(),
            "-C".into(),
            s(root),
            "rev-parse".into(),
            rev.into(),
        ])?
        .trim()
        .to_string();
        if std::fs::read_to_string(&marker).ok().as_deref() != Some(full.as_str()) {
            if src.exists() {
                std::fs::remove_dir_all(&src).map_err(|e| format!("`{}`: {e}", src.display()))?;
            }
            mkdir(&src)?;
            let archive = build_dir(root, "before-src.tar");
            run_step(
                &format!("git archive {rev}"),
                Command::new("git")
                    .arg("-C")
                    .arg(root)
                    .args(["archive", "--output"])
                    .arg(&archive)
                    .arg(&full),
            )?;
            run_step(
                "tar -x",
                Command::new("tar")
                    .arg("-xf")
                    .arg(&archive)
                    .arg("-C")
                    .arg(&src),
            )?;
            let _ = std::fs::remove_file(&archive);
            write(&marker, full.as_bytes())?;
        }
        Ok(Tree {
            label: "before",
            rev: full.chars().take(7).collect(),
            src,
            target: build_dir(root, "before"),
        })
    }
}

/// One measured build of `skillbake` with a pack set.
pub(super) struct Built {
    pub(super) bin: PathBuf,
    pub(super) bytes: u64,
    /// Wall time of the whole `cargo build` (dependencies already built).
    pub(super) cargo_s: f64,
    /// Peak RSS of the largest process of the build (cargo, build script or rustc), KiB.
    pub(super) peak_kib: Option<u64>,
    /// (crate name and type, peak RSS KiB, seconds) of every rustc run.
    pub(super) rustc: Vec<(String, u64, f64)>,
    /// The build script's own report, when it writes one.
    pub(super) stats: Option<serde_json::Value>,
}

impl Built {
    /// Peak RSS of the rustc runs of `what` (`<crate name>:<crate type>`).
    pub(super) fn rustc_kib(&self, what: &str) -> Option<u64> {
        self.rustc
            .iter()
            .filter(|(n, _, _)| n == what)
            .map(|r| r.1)
            .max()
    }

    /// Peak RSS of rustc compiling the library that embeds the registry: `skillbake-cli`'s
    /// (whose build script generates it), or the `skillbake` runtime crate's in revisions
    /// that embedded it there; the larger of the two, so that either layout is measured.
    pub(super) fn library_kib(&self) -> Option<u64> {
        self.rustc_kib("skillbake_cli:lib")
            .max(self.rustc_kib("skillbake:lib"))
    }
}

const WRAPPER: &str = r#"#!/bin/sh
# RUSTC_WRAPPER of `cargo xtask bench`: runs rustc under /usr/bin/time, logging
# "<crate-name>:<crate-type> <max RSS KiB> <seconds>" to $SKILLBAKE_RUSTC_LOG.
name=unknown; kind=; prev=
for a in "$@"; do
    case "$prev" in
        --crate-name) name=$a ;;
        --crate-type) kind=$a ;;
    esac
    prev=$a
done
if [ -z "$SKILLBAKE_RUSTC_LOG" ]; then
    exec "$@"
fi
exec /usr/bin/time -f "$name:$kind %M %e" -a -o "$SKILLBAKE_RUSTC_LOG" "$@"
"#;

/// A `cargo` command in `tree` (its manifest, its target folder) with the packs of `skills`
/// compiled in, through the `RUSTC_WRAPPER` that logs each rustc's peak memory when
/// `SKILLBAKE_RUSTC_LOG` is set (every build of a tree goes through it, so that switching between
/// them never looks like a new compiler to cargo).
fn cargo_in(root: &Path, tree: &Tree, skills: &Path, args: &[&str]) -> Result<Command, String> {
    let scratch = build_dir(root, "scratch");
    mkdir(&scratch)?;
    let wrapper = scratch.join("rustc-wrapper.sh");
    write(&wrapper, WRAPPER.as_bytes())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| e.to_string())?;
    }
    // cargo's own options before a `--`; what follows it is the program's.
    let split = args.iter().position(|a| *a == "--").unwrap_or(args.len());
    let (own, program) = args.split_at(split);
    let mut c = cargo();
    c.args(own)
        .arg("--manifest-path")
        .arg(tree.src.join("Cargo.toml"))
        .args(program)
        .env("CARGO_TARGET_DIR", &tree.target)
        .env("RUSTC_WRAPPER", &wrapper)
        .env_remove("SKILLBAKE_RUSTC_LOG")
        .env(skillbake_build::SKILLS_DIR_ENV, skills);
    Ok(c)
}

/// `skillbake` of `tree` with its own bundled packs (`skills/`), as a user builds it: the binary
/// that `check` on the real corpus and `run` are timed with, copied to
/// `target/bench-build/bin/skillbake-<label>-bundled`.
pub(super) fn build_bundled(root: &Path, tree: &Tree) -> Result<PathBuf, String> {
    run_step(
        &format!(
            "cargo build --release -p skillbake-cli ({}, its bundled packs)",
            tree.label
        ),
        &mut cargo_in(root, tree, &tree.src.join("skills"), &crate::RELEASE_BUILD)?,
    )?;
    let built = tree.target.join("release/skillbake");
    let bins = build_dir(root, "bin");
    mkdir(&bins)?;
    let bin = bins.join(format!("skillbake-{}-bundled", tree.label));
    std::fs::copy(&built, &bin).map_err(|e| format!("`{}`: {e}", built.display()))?;
    Ok(bin)
}

/// `cargo bench --bench load` (the in-process `load_skill` figures) of `tree`, in its target
/// folder, its bench fixture regenerated first by the tree's own `cargo xtask bench --fixture`
/// (a revision may have committed it stale; this tree's is checked by CI).
pub(super) fn load_bench(root: &Path, tree: &Tree) -> Result<Command, String> {
    let skills = tree.src.join("skills");
    run_step(
        &format!("cargo xtask bench --fixture ({})", tree.label),
        &mut cargo_in(
            root,
            tree,
            &skills,
            &["run", "-q", "-p", "xtask", "--", "bench", "--fixture"],
        )?,
    )?;
    cargo_in(root, tree, &skills, &super::divan::LOAD_BENCH)
}

/// `skillbake` of `tree` with `set` compiled in, rebuilt from the build script on and measured;
/// the binary is copied to `target/bench-build/bin/<label>-<packs>`.
pub(super) fn build_skillbake(root: &Path, tree: &Tree, set: &PackSet) -> Result<Built, String> {
    let scratch = build_dir(root, "scratch");
    let cargo_in = |args: &[&str]| cargo_in(root, tree, &set.dir, args);
    // The dependencies once, then skillbake itself from its build script on, every time.
    run_step(
        &format!("{} dependencies", tree.label),
        &mut cargo_in(&crate::RELEASE_BUILD)?,
    )?;
    run_step(
        "cargo clean -p skillbake-cli",
        &mut cargo_in(&["clean", "--release", "-p", "skillbake-cli"])?,
    )?;
    let log = scratch.join(format!("rustc-{}-{}.log", tree.label, set.packs));
    let stats = scratch.join(format!("stats-{}-{}.jsonl", tree.label, set.packs));
    let time = scratch.join(format!("time-{}-{}.txt", tree.label, set.packs));
    for f in [&log, &stats, &time] {
        let _ = std::fs::remove_file(f);
    }
    let mut cmd = Command::new("/usr/bin/time");
    cmd.arg("-v").arg("-o").arg(&time);
    let inner = cargo_in(&crate::RELEASE_BUILD)?;
    cmd.arg(inner.get_program()).args(inner.get_args());
    for (k, v) in inner.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    cmd.current_dir(root)
        .env("SKILLBAKE_RUSTC_LOG", &log)
        .env(skillbake_build::STATS_ENV, &stats);
    let start = std::time::Instant::now();
    run_step(
        &format!(
            "cargo build --release -p skillbake-cli ({}, {} packs compiled in)",
            tree.label, set.packs
        ),
        &mut cmd,
    )?;
    let cargo_s = start.elapsed().as_secs_f64();
    let time_v = std::fs::read_to_string(&time).unwrap_or_default();
    let peak_kib = time_v.lines().find_map(|l| {
        l.trim()
            .strip_prefix("Maximum resident set size (kbytes):")?
            .trim()
            .parse()
            .ok()
    });
    let rustc = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let name = it.next()?.to_string();
            let kib = it.next()?.parse().ok()?;
            let secs = it.next()?.parse().ok()?;
            Some((name, kib, secs))
        })
        .collect();
    let stats = std::fs::read_to_string(&stats)
        .ok()
        .and_then(|t| t.lines().last().and_then(|l| serde_json::from_str(l).ok()));

    let built = tree.target.join("release/skillbake");
    let bins = build_dir(root, "bin");
    mkdir(&bins)?;
    let bin = bins.join(format!("skillbake-{}-{}", tree.label, set.packs));
    std::fs::copy(&built, &bin).map_err(|e| format!("`{}`: {e}", built.display()))?;
    let listed = capture(&[s(&bin), "list".into()])?.lines().count();
    if listed != set.packs {
        return Err(format!(
            "`{}` embeds {listed} skills, expected {}",
            bin.display(),
            set.packs
        ));
    }
    let bytes = std::fs::metadata(&bin).map_or(0, |m| m.len());
    Ok(Built {
        bin,
        bytes,
        cargo_s,
        peak_kib,
        rustc,
        stats,
    })
}

/// The build script binary cargo compiled last for `tree` (in its release target folder).
pub(super) fn build_script(tree: &Tree) -> Option<PathBuf> {
    newest_build_file(tree, "build-script-build")
}

/// `file` (a path inside a build folder of `skillbake-cli`, such as
/// `out/skillbake_registry.rs`) of the build cargo ran last for `tree`'s release build.
pub(super) fn newest_build_file(tree: &Tree, file: &str) -> Option<PathBuf> {
    let dir = tree.target.join("release/build");
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("skillbake-cli-")
        })
        .map(|e| e.path().join(file))
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .collect();
    found.sort();
    found.pop().map(|(_, p)| p)
}

/// A bench crate under `benches/` (not a workspace member), in its own target folder.
pub(super) fn build_aux(root: &Path, name: &str, bin: &str) -> Result<PathBuf, String> {
    let target = build_dir(root, name);
    let manifest = root.join("benches").join(name).join("Cargo.toml");
    run_step(
        &format!("cargo build --release --manifest-path benches/{name}/Cargo.toml"),
        cargo()
            .args(["build", "--release", "--manifest-path"])
            .arg(&manifest)
            .env("CARGO_TARGET_DIR", &target),
    )?;
    Ok(target.join("release").join(bin))
}
