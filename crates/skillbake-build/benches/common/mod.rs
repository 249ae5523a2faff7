//! Skills trees shared by the benches: `n` generated valid packs (a 1–8 KB body, a script and a
//! reference each), or the packs of `cargo xtask bench` when `SKILLBAKE_BENCH_PACKS` names its
//! folder of pack sets (`<folder>/<n>/`).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The environment variable naming a folder of pack sets, one sub-folder per size.
pub const PACKS_ENV: &str = "SKILLBAKE_BENCH_PACKS";

/// Writes `n` valid packs under a fresh temporary folder (kept for the whole run).
fn generate(n: usize) -> PathBuf {
    let root = std::env::temp_dir().join(format!("skillbake-bench-{}-{n}", std::process::id()));
    if root.exists() {
        return root;
    }
    for i in 0..n {
        let name = format!("pack-{i:05}");
        let dir = root.join(format!("group-{:02}", i % 50)).join(&name);
        std::fs::create_dir_all(dir.join("scripts")).unwrap_or_default();
        std::fs::create_dir_all(dir.join("references")).unwrap_or_default();
        let body =
            "Follow these steps carefully and report the result.\n".repeat(20 + (i * 7) % 140);
        let md = format!(
            "---\nname: {name}\ndescription: Generated pack {i}. Use when benchmarking.\nversion: \"1.0.{i}\"\ntags: [bench, generated]\nrequired_tools: [code_interpreter]\n---\n# {name}\n\n{body}"
        );
        std::fs::write(dir.join("SKILL.md"), md).unwrap_or_default();
        std::fs::write(dir.join("scripts/run.py"), "print('hello')\n".repeat(10))
            .unwrap_or_default();
        std::fs::write(
            dir.join("references/guide.md"),
            "# Guide\n\nDetails.\n".repeat(30),
        )
        .unwrap_or_default();
    }
    root
}

/// The tree of `n` packs: `$SKILLBAKE_BENCH_PACKS/<n>` when set, else generated once per run.
pub fn tree(n: usize) -> &'static Path {
    static TREES: OnceLock<Mutex<Vec<(usize, &'static Path)>>> = OnceLock::new();
    let trees = TREES.get_or_init(Mutex::default);
    let mut trees = trees.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = trees.iter().find(|(k, _)| *k == n) {
        return p;
    }
    let dir = match std::env::var_os(PACKS_ENV) {
        Some(base) => PathBuf::from(base).join(n.to_string()),
        None => generate(n),
    };
    let dir: &'static Path = Box::leak(dir.into_boxed_path());
    trees.push((n, dir));
    dir
}

/// The sizes to measure: `SKILLBAKE_BENCH_SIZES` (comma-separated), else 1,000 and 10,000.
pub fn sizes() -> Vec<usize> {
    std::env::var("SKILLBAKE_BENCH_SIZES")
        .ok()
        .and_then(|s| s.split(',').map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1000, 10000])
}
