//! `skillbake check` throughput on generated skills trees (1,000 and 10,000 packs, each with a
//! 1–8 KB body, a script and a reference).
//!
//! Run with `cargo bench -p skillbake-build --bench check`. Figures are relative: compare
//! `check` per pack across sizes (it should stay flat: the work is linear and uses every core).
//! `load_skill` against the floor of a bare `phf` lookup is the runtime's
//! `crates/skillbake/benches/load.rs`; the whole-process comparison with run-time loaders is
//! `cargo xtask bench` (BENCHMARKS.md). The trees are those of `benches/common`.

mod common;

fn main() {
    divan::main();
}

#[divan::bench(args = common::sizes(), sample_count = 5, sample_size = 1)]
fn check(bencher: divan::Bencher, n: usize) {
    let root = common::tree(n);
    bencher
        .counter(divan::counter::ItemsCount::new(n))
        .bench(|| {
            let checked = skillbake_build::check(root, &skillbake_build::CheckOptions::default());
            assert_eq!(checked.report.packs, n);
            assert!(!checked.report.has_errors());
            checked.report.diagnostics.len()
        });
}
