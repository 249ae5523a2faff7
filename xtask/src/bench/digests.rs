//! What the build-time digests of the MCP Skills extension cost, the second table of
//! `cargo xtask bench skills`: in build time, `cargo bench -p skillbake-build --bench digests`
//! on the same pack sets (a full build of the registry into an empty folder against the SHA-256
//! of every embedded file alone, spread over the cores alike; medians of its samples), and in
//! size, the 32 bytes of a SHA-256 in every file row of the registry's tables, against the real
//! generated data (the registry header of the release build: files, bytes of text and data) and
//! the binary.

use super::builds::{newest_build_file, Built, Tree};
use super::divan::{divan_bench, DivanRow};
use super::report::{size, t};
use crate::cargo;
use std::path::{Path, PathBuf};

/// A SHA-256: the bytes each file row holds for its digest.
const DIGEST_BYTES: u64 = 32;

/// What the registry compiled into one binary holds, from its generated header.
pub(super) struct Embedded {
    pub(super) files: u64,
    pub(super) text: u64,
    pub(super) data: u64,
    pub(super) binary: u64,
}

/// The newest generated registry of `tree`'s release build.
fn registry_rs(tree: &Tree) -> Option<PathBuf> {
    newest_build_file(tree, "out/skillbake_registry.rs")
}

/// `// N skills (P packs), F files, T bytes of text, D bytes of data (B of tables).` → (F, T, D).
fn header_sizes(code: &str) -> Option<(u64, u64, u64)> {
    let line = code.lines().find(|l| l.contains(" files, "))?;
    let number_before = |word: &str| -> Option<u64> {
        let end = line.find(word)?;
        line[..end].rsplit(' ').next()?.parse().ok()
    };
    Some((
        number_before(" files,")?,
        number_before(" bytes of text")?,
        number_before(" bytes of data")?,
    ))
}

/// Reads what the build just made of `tree` embeds (call right after building it).
pub(super) fn embedded(tree: &Tree, built: &Built) -> Result<Embedded, String> {
    let path = registry_rs(tree).ok_or("no generated registry in the release build")?;
    let code = std::fs::read_to_string(&path).map_err(|e| format!("`{}`: {e}", path.display()))?;
    let (files, text, data) = header_sizes(&code)
        .ok_or_else(|| format!("`{}`: no sizes in its header", path.display()))?;
    Ok(Embedded {
        files,
        text,
        data,
        binary: built.bytes,
    })
}

/// `cargo bench -p skillbake-build --bench digests` on the pack sets under `packs`.
pub(super) fn build_time(
    root: &Path,
    packs: &Path,
    sizes: &[usize],
) -> Result<Vec<DivanRow>, String> {
    let list = sizes
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let mut cmd = cargo();
    cmd.current_dir(root)
        .args([
            "bench",
            "-p",
            "skillbake-build",
            "--bench",
            "digests",
            "--",
            "--color",
            "never",
        ])
        .env("SKILLBAKE_BENCH_PACKS", packs)
        .env("SKILLBAKE_BENCH_SIZES", &list);
    divan_bench("cargo bench -p skillbake-build --bench digests", cmd)
}

/// The section's second table: one row per size.
pub(super) fn table(
    sizes: &[usize],
    rows: &[DivanRow],
    embedded: &[Embedded],
) -> Result<String, String> {
    let median = |what: &str, n: usize| -> Result<f64, String> {
        let name = format!("{what}/{n}");
        rows.iter()
            .find(|r| r.name == name)
            .map(|r| r.median_ns * 1e-9)
            .ok_or(format!("no `{name}` row in the digests bench"))
    };
    let mut m = String::new();
    m.push_str("### What the digests cost\n\n");
    m.push_str(&format!(
        "In build time, `cargo bench -p skillbake-build --bench digests` on the same packs (`SKILLBAKE_BENCH_PACKS=target/bench-packs SKILLBAKE_BENCH_SIZES={}`; run by the command above): `compile` is the registry compiler's full build into an empty folder, as the build script runs it on a clean build (walk, read, check, generate with the digests, assemble, write), `sha256` the SHA-256 of every embedded file's exact bytes alone, spread over the cores as the compiler spreads its packs; medians of 5 samples each. The build without the digests is the difference. In size, each file row of the registry's tables holds its 32-byte SHA-256 (eight 32-bit cells), counted over the files of the release build's generated registry (its header) and set against that registry's data (text and binary blobs, tables included) and the release binary.\n\n",
        sizes.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
    ));
    m.push_str("| packs | files | full build | SHA-256 of every file | digests' share of the build | build without them | digest bytes (32 × files) | registry data | share of the data | binary | share of the binary |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (&n, e) in sizes.iter().zip(embedded) {
        let compile = median("compile", n)?;
        let sha = median("sha256", n)?;
        let digest = (e.files * DIGEST_BYTES) as f64;
        let data = (e.text + e.data) as f64;
        m.push_str(&format!(
            "| {n} | {} | {} | {} | {:.1}% | {} | {} | {} | {:.2}% | {} | {:.2}% |\n",
            e.files,
            t(compile),
            t(sha),
            100.0 * sha / compile,
            t(compile - sha),
            size(digest),
            size(data),
            100.0 * digest / data,
            size(e.binary as f64),
            100.0 * digest / e.binary as f64,
        ));
    }
    m.push('\n');
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::header_sizes;

    #[test]
    fn reads_the_generated_header() {
        let code = "// @generated by skillbake-build 0.1.0. Do not edit.\n// 1000 skills (1000 packs), 3000 files, 123 bytes of text, 456 bytes of data (96 of tables).\n";
        assert_eq!(header_sizes(code), Some((3000, 123, 456)));
        assert_eq!(header_sizes("// nothing here\n"), None);
    }
}
