//! The build script on its own: the binary cargo compiled, run directly with the environment
//! cargo gives it (`OUT_DIR`, `CARGO_MANIFEST_DIR`, `SKILLBAKE_SKILLS_DIR`) under
//! `/usr/bin/time`, so that its wall time and peak memory are its own. Three situations:
//! a full run into an empty output folder, a run with nothing changed, and a run after one pack
//! was edited (the incremental build); the output of the last is compared byte for byte with a
//! full run on the same edited tree. In the same rounds as the edit, the floor under any
//! incremental build: `benches/floor`'s `tree stat`, a process that walks the pack set and
//! stamps every file (what finding the one edit needs at least), building nothing.

use super::builds::{build_script, Tree};
use super::packs::PackSet;
use super::process::{display, mkdir, s};
use super::timing::Stat;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The pack edited for the incremental runs (not the cold-start probe).
pub(super) const EDITED: &str = "pack-00007";

pub(super) struct ScriptCost {
    pub(super) full_s: Stat,
    pub(super) full_kib: Stat,
    pub(super) nochange_s: Stat,
    pub(super) edit_s: Stat,
    pub(super) edit_kib: Stat,
    /// The floor: walking the pack set and stamping every file, nothing built (wall seconds).
    pub(super) walk_floor_s: Option<Stat>,
    /// The incremental output equals a full build of the same tree.
    pub(super) identical: bool,
    /// The build script's own account of a full run and of an incremental one, when it writes one.
    pub(super) full_stats: Option<serde_json::Value>,
    pub(super) edit_stats: Option<serde_json::Value>,
}

/// Runs `program` under `/usr/bin/time` (its arguments and environment set by `setup`, its
/// output to the null device), the times written to `time`: (wall seconds, peak RSS KiB).
/// `what` names it in errors.
fn timed(
    program: &Path,
    time: &Path,
    what: &str,
    setup: impl FnOnce(&mut Command),
) -> Result<(f64, f64), String> {
    let mut cmd = Command::new("/usr/bin/time");
    cmd.arg("-f").arg("%e %M").arg("-o").arg(time).arg(program);
    setup(&mut cmd);
    cmd.stdin(Stdio::null()).stdout(Stdio::null());
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    if !status.success() {
        return Err(format!(
            "{what} failed ({status}): {}",
            display(&[s(program)])
        ));
    }
    let text = std::fs::read_to_string(time).map_err(|e| e.to_string())?;
    let mut it = text.split_whitespace();
    let secs = it.next().and_then(|v| v.parse().ok()).ok_or("no time")?;
    let kib = it.next().and_then(|v| v.parse().ok()).ok_or("no RSS")?;
    Ok((secs, kib))
}

/// One run: (seconds, peak RSS KiB).
fn run_once(
    script: &Path,
    tree: &Tree,
    set: &PackSet,
    out: &Path,
    stats: &Path,
) -> Result<(f64, f64), String> {
    timed(
        script,
        &out.with_extension("time"),
        "the build script",
        |cmd| {
            cmd.current_dir(&tree.src)
                .env("OUT_DIR", out)
                .env("CARGO_MANIFEST_DIR", &tree.src)
                .env("CARGO_PKG_NAME", "skillbake-cli")
                .env(skillbake_build::SKILLS_DIR_ENV, &set.dir)
                .env(skillbake_build::STATS_ENV, stats);
        },
    )
}

fn fresh(dir: &Path) -> Result<(), String> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("`{}`: {e}", dir.display()))?;
    }
    mkdir(dir)
}

fn last_stats(path: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(text.lines().last()?).ok()
}

fn same_outputs(a: &Path, b: &Path) -> bool {
    let names = |d: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(d)
            .map(|r| {
                r.filter_map(|e| e.ok())
                    .map(|e| e.path())
                    .filter(|p| {
                        p.file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.starts_with("skillbake_") && !n.contains("cache"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    let (na, nb) = (names(a), names(b));
    na.len() == nb.len()
        && !na.is_empty()
        && na.iter().zip(&nb).all(|(x, y)| {
            x.file_name() == y.file_name()
                && std::fs::read(x)
                    .ok()
                    .is_some_and(|bx| std::fs::read(y).ok() == Some(bx))
        })
}

/// The wall seconds of `tree stat` over `set` (`benches/floor`): the floor of a build that
/// finds one edit.
fn walk_floor(walker: &Path, set: &PackSet, out: &Path) -> Result<f64, String> {
    let time = out.with_extension("floor-time");
    timed(walker, &time, "the floor walk", |cmd| {
        cmd.arg("stat").arg(&set.dir).stderr(Stdio::null());
    })
    .map(|(secs, _)| secs)
}

/// Measures the build script of `tree` (built already) on `set`, `runs` times per situation;
/// `walker` is the floor's `tree` binary, when it was built.
pub(super) fn measure_script(
    scratch: &Path,
    tree: &Tree,
    set: &PackSet,
    runs: usize,
    walker: Option<&Path>,
) -> Result<ScriptCost, String> {
    let script = build_script(tree).ok_or("no build script binary was found")?;
    eprintln!(
        "\n==> build script alone ({}, {} packs, {runs} runs each): {}",
        tree.label,
        set.packs,
        script.display()
    );
    let base = scratch.join(format!("script-{}-{}", tree.label, set.packs));
    mkdir(&base)?;
    let stats = base.join("stats.jsonl");
    let a = base.join("a");
    let b = base.join("b");
    let (mut full_s, mut full_kib) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        fresh(&a)?;
        let _ = std::fs::remove_file(&stats);
        let (t, k) = run_once(&script, tree, set, &a, &stats)?;
        full_s.push(t);
        full_kib.push(k);
    }
    let full_stats = last_stats(&stats);
    let mut nochange_s = Vec::new();
    for _ in 0..runs {
        nochange_s.push(run_once(&script, tree, set, &a, &stats)?.0);
    }
    let md = set.dir.join(EDITED).join("SKILL.md");
    let original = std::fs::read(&md).map_err(|e| format!("`{}`: {e}", md.display()))?;
    let (mut edit_s, mut edit_kib) = (Vec::new(), Vec::new());
    let mut edit_stats = None;
    let mut floor_s = Vec::new();
    let result = (|| -> Result<bool, String> {
        for k in 0..runs {
            let mut edited = original.clone();
            edited.extend_from_slice(
                format!("\nEdited for the incremental build benchmark, run {k}.\n").as_bytes(),
            );
            std::fs::write(&md, &edited).map_err(|e| e.to_string())?;
            let _ = std::fs::remove_file(&stats);
            let (t, kib) = run_once(&script, tree, set, &a, &stats)?;
            edit_s.push(t);
            edit_kib.push(kib);
            edit_stats = last_stats(&stats);
            if let Some(w) = walker {
                match walk_floor(w, set, &a) {
                    Ok(t) => floor_s.push(t),
                    Err(e) => eprintln!("floor walk: not measured: {e}"),
                }
            }
        }
        fresh(&b)?;
        run_once(&script, tree, set, &b, &base.join("stats-b.jsonl"))?;
        Ok(same_outputs(&a, &b))
    })();
    std::fs::write(&md, &original).map_err(|e| e.to_string())?;
    let identical = result?;
    let _ = std::fs::remove_dir_all(&base);
    let stat = |v: Vec<f64>| Stat::of(v).ok_or("no measurement");
    Ok(ScriptCost {
        full_s: stat(full_s)?,
        full_kib: stat(full_kib)?,
        nochange_s: stat(nochange_s)?,
        edit_s: stat(edit_s)?,
        edit_kib: stat(edit_kib)?,
        walk_floor_s: Stat::of(floor_s),
        identical,
        full_stats,
        edit_stats,
    })
}
