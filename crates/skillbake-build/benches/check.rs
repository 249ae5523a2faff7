//! `skillbake check` throughput on generated skills trees (1,000 and 10,000 packs, each with a
//! 1–8 KB body, a script and a reference).
//!
//! Run with `cargo bench -p skillbake-build --bench check`. Figures are relative: compare
//! `check` per pack across sizes (it should stay flat: the work is linear and uses every core).
//! `load_skill` against the floor of a bare `phf` lookup is the runtime's
//! `crates/skillbake/benches/load.rs`; the whole-process comparison with run-time loaders is
//! `cargo xtask bench` (BENCHMARKS.md).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn main() {
    divan::main();
}

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

fn tree(n: usize) -> &'static Path {
    static SMALL: OnceLock<PathBuf> = OnceLock::new();
    static LARGE: OnceLock<PathBuf> = OnceLock::new();
    let cell = if n <= 1000 { &SMALL } else { &LARGE };
    cell.get_or_init(|| generate(n)).as_path()
}

#[divan::bench(args = [1000, 10000], sample_count = 5, sample_size = 1)]
fn check(bencher: divan::Bencher, n: usize) {
    let root = tree(n);
    bencher
        .counter(divan::counter::ItemsCount::new(n))
        .bench(|| {
            let checked = skillbake_build::check(root, &skillbake_build::CheckOptions::default());
            assert_eq!(checked.report.packs, n);
            assert!(!checked.report.has_errors());
            checked.report.diagnostics.len()
        });
}
