//! The budgeted skill catalog (`skillbake_format::catalog::render` with a budget, what
//! `Registry::catalog` runs when the precomputed catalog is too long) over 1,000, 4,000 and
//! 16,000 generated entries, in the two ways a budget is met: descriptions shortened (`shorten`)
//! and entries dropped (`drop`). The baseline, measured in the same run, is the catalog without a
//! budget (`full`): one pass writing every entry. Time per call should grow with the number of
//! entries as the baseline does (linear, times the logarithm of the longest description for the
//! shortening search), and the only allocation is the returned text.
//!
//! Run with `cargo bench --bench catalog`.

use divan::black_box;
use skillbake_format::catalog::{render, Entry, Format};

#[global_allocator]
static ALLOC: divan::AllocProfiler = divan::AllocProfiler::system();

const SIZES: [usize; 3] = [1000, 4000, 16000];

/// (name, description, location) of `n` skills, descriptions about 100 characters.
fn skills(n: usize) -> Vec<(String, String, String)> {
    (0..n)
        .map(|i| {
            (
                format!("skill-{i:05}"),
                format!("Does task number {i} for the user when they ask about topic {i}; long enough to be shortened."),
                format!("skills/skill-{i:05}/SKILL.md"),
            )
        })
        .collect()
}

fn entries(s: &[(String, String, String)]) -> Vec<Entry<'_>> {
    s.iter()
        .map(|(name, description, location)| Entry {
            name,
            description,
            location,
            tags: &[],
        })
        .collect()
}

fn main() {
    divan::main();
}

fn bench(bencher: divan::Bencher, n: usize, budget: impl Fn(usize) -> Option<usize>) {
    let store = skills(n);
    let entries = entries(&store);
    let budget = budget(n);
    bencher.bench(|| {
        render(Format::Xml, black_box(&entries), black_box(budget))
            .text
            .len()
    });
}

/// No budget: every entry written once.
#[divan::bench(args = SIZES)]
fn full(bencher: divan::Bencher, n: usize) {
    bench(bencher, n, |_| None);
}

/// A budget met by shortening every description (180 characters per entry, of about 220).
#[divan::bench(args = SIZES)]
fn shorten(bencher: divan::Bencher, n: usize) {
    bench(bencher, n, |n| Some(n * 180));
}

/// A budget met by dropping entries (100 characters per entry: shortened entries need about
/// 150, so a third are left out).
#[divan::bench(args = SIZES)]
fn drop(bencher: divan::Bencher, n: usize) {
    bench(bencher, n, |n| Some(n * 100));
}
