//! What the build-time digests of the MCP Skills extension cost the compiler: a full build of a
//! skills tree (check, generate, assemble and write the registry into an empty output folder, as
//! the build script does on a clean build) against the SHA-256 of every embedded file's exact
//! bytes alone, spread over the cores the way the compiler spreads its packs. The digests' share
//! of the build is the second over the first; the build without them is their difference.
//!
//! Run with `cargo bench -p skillbake-build --bench digests` (`cargo xtask bench skills` runs
//! it on the packs of the main bench and writes the figures to BENCHMARKS.md). The trees are
//! those of `benches/common`.

use sha2::Digest as _;

mod common;

fn main() {
    divan::main();
}

/// The bytes of every file the registry embeds (the compiler's own reading of the tree).
fn embedded_files(root: &std::path::Path) -> Vec<Vec<u8>> {
    let checked = skillbake_build::check(root, &skillbake_build::CheckOptions::default());
    assert!(!checked.report.has_errors(), "the bench tree has errors");
    checked
        .packs()
        .flat_map(|p| p.files().map(|f| f.bytes.to_vec()).collect::<Vec<_>>())
        .collect()
}

/// A full build into an empty output folder.
#[divan::bench(args = common::sizes(), sample_count = 5, sample_size = 1)]
fn compile(bencher: divan::Bencher, n: usize) {
    let root = common::tree(n);
    bencher
        .with_inputs(|| tempfile::tempdir().unwrap_or_else(|e| panic!("temporary folder: {e}")))
        .bench_values(|out| {
            let result = skillbake_build::Config::new()
                .skills_dir(root)
                .ignore_env()
                .out_dir(out.path())
                .no_cargo_output()
                .compile_stats();
            match result {
                Ok(stats) => assert_eq!(stats.generated, n),
                Err(e) => panic!("the build failed: {e}"),
            }
            out
        });
}

/// SHA-256 of every embedded file, on every core, in chunks as the compiler splits its packs.
#[divan::bench(args = common::sizes(), sample_count = 5, sample_size = 1)]
fn sha256(bencher: divan::Bencher, n: usize) {
    let files = embedded_files(common::tree(n));
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let chunk = files.len().div_ceil(cores.min(files.len() / 16).max(1));
    bencher
        .counter(divan::counter::BytesCount::new(
            files.iter().map(Vec::len).sum::<usize>(),
        ))
        .bench(|| {
            std::thread::scope(|scope| {
                let parts: Vec<_> = files
                    .chunks(chunk)
                    .map(|part| {
                        scope.spawn(move || {
                            part.iter()
                                .map(|f| sha2::Sha256::digest(f)[0])
                                .fold(0u8, |a, b| a ^ b)
                        })
                    })
                    .collect();
                parts
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                    .fold(0u8, |a, b| a ^ b)
            })
        });
}
