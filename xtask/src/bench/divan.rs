//! The in-process benchmarks: runs `cargo bench --bench load` (and other divan benches) and
//! reads divan's table.

use crate::cargo;
use std::process::Stdio;

/// One row of divan's output.
#[derive(Debug, Clone)]
pub(super) struct DivanRow {
    /// `group/arg`, e.g. `hit/10`.
    pub(super) name: String,
    pub(super) fastest_ns: f64,
    pub(super) median_ns: f64,
    pub(super) slowest_ns: f64,
    /// Median allocations per call, grows (reallocations) included.
    pub(super) allocs: Option<f64>,
    pub(super) alloc_bytes: Option<String>,
}

/// `cargo` arguments of the in-process `load_skill` bench, divan's own after the `--`.
pub(super) const LOAD_BENCH: [&str; 10] = [
    "bench",
    "-p",
    "skillbake",
    "--features",
    "compress",
    "--bench",
    "load",
    "--",
    "--color",
    "never",
];

pub(super) fn inproc_benches() -> Result<Vec<DivanRow>, String> {
    let mut cmd = cargo();
    cmd.args(LOAD_BENCH);
    divan_bench("cargo bench --bench load", cmd)
}

/// Runs `cmd` (a `cargo bench` of a divan bench, described as `what`) and reads its table.
pub(super) fn divan_bench(
    what: &str,
    mut cmd: std::process::Command,
) -> Result<Vec<DivanRow>, String> {
    eprintln!("\n==> {what}");
    let out = cmd
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("{what}: cannot start: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    eprint!("{text}");
    if !out.status.success() {
        return Err(format!("{what} failed ({})", out.status));
    }
    let rows = parse_divan(&text);
    if rows.is_empty() {
        return Err(format!("{what}: no benchmark rows in divan's output"));
    }
    Ok(rows)
}

/// `12.5 ns` → nanoseconds.
pub(super) fn parse_duration(cell: &str) -> Option<f64> {
    let cell = cell.trim();
    let split = cell.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (num, unit) = cell.split_at(split);
    let num: f64 = num.parse().ok()?;
    let scale = match unit.trim() {
        "ps" => 1e-3,
        "ns" => 1.0,
        "µs" | "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    };
    Some(num * scale)
}

/// Reads divan's tree table: timing rows, each followed by `alloc:` count and size rows. The
/// tree is drawn with the same `│` as the column separators, so columns are cut at the
/// separators' positions in the header line.
pub(super) fn parse_divan(text: &str) -> Vec<DivanRow> {
    let mut rows: Vec<DivanRow> = Vec::new();
    let mut seps: Vec<usize> = Vec::new();
    // Names along the current branch, by depth.
    let mut path: Vec<String> = Vec::new();
    let mut pending = 0u8;
    for line in text.lines() {
        let chars: Vec<char> = line.chars().collect();
        if seps.is_empty() {
            if line.contains("fastest") && line.contains("median") {
                seps = chars
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| **c == '│')
                    .map(|(i, _)| i)
                    .collect();
            }
            continue;
        }
        let cell = |k: usize| -> String {
            let from = if k == 0 { 0 } else { seps[k - 1] + 1 };
            let to = seps.get(k).copied().unwrap_or(chars.len()).min(chars.len());
            chars
                .get(from..to)
                .map_or(String::new(), |c| c.iter().collect())
        };
        let first = cell(0);
        let tree_end = first
            .find(|c: char| !matches!(c, '│' | '├' | '╰' | '─' | ' '))
            .unwrap_or(first.len());
        let (tree, rest) = first.split_at(tree_end);
        if tree.contains('├') || tree.contains('╰') {
            let depth = tree.chars().count() / 3 - 1;
            let mut words = rest.split_whitespace();
            let name = words.next().unwrap_or_default().to_string();
            path.truncate(depth);
            path.push(name);
            pending = 0;
            let fastest = words.collect::<Vec<_>>().join(" ");
            if let (Some(f), Some(sl), Some(m)) = (
                parse_duration(&fastest),
                parse_duration(&cell(1)),
                parse_duration(&cell(2)),
            ) {
                rows.push(DivanRow {
                    name: path.join("/"),
                    fastest_ns: f,
                    median_ns: m,
                    slowest_ns: sl,
                    allocs: None,
                    alloc_bytes: None,
                });
            }
            continue;
        }
        let label = rest.trim();
        if label.ends_with(':') {
            // 1: the count row of `alloc:` is next; 3: that of `grow:` (a realloc, which
            // allocates too).
            pending = match label {
                "alloc:" => 1,
                "grow:" => 3,
                _ => 0,
            };
            continue;
        }
        let median = cell(2).trim().to_string();
        match (pending, rows.last_mut()) {
            (1, Some(row)) => {
                row.allocs = Some(row.allocs.unwrap_or(0.0) + median.parse().unwrap_or(0.0));
                pending = 2;
            }
            (2, Some(row)) => {
                row.alloc_bytes = Some(median);
                pending = 0;
            }
            (3, Some(row)) => {
                row.allocs = Some(row.allocs.unwrap_or(0.0) + median.parse().unwrap_or(0.0));
                pending = 0;
            }
            _ => {}
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_divan_rows_and_allocations() {
        let text = "\
load                              fastest       │ slowest       │ median        │ mean          │ samples │ iters
├─ hit                                          │               │               │               │         │
│  ├─ 1                           50.1 ns       │ 80 ns         │ 52.3 ns       │ 53 ns         │ 100     │ 6400
│  │                              alloc:        │               │               │               │         │
│  │                                1           │ 1             │ 1             │ 1             │         │
│  │                                1.2 KB      │ 1.2 KB        │ 1.2 KB        │ 1.2 KB        │         │
│  │                              dealloc:      │               │               │               │         │
│  │                                1           │ 1             │ 1             │ 1             │         │
│  │                              grow:         │               │               │               │         │
│  │                                1           │ 1             │ 1             │ 1             │         │
│  │                                48 B        │ 48 B          │ 48 B          │ 48 B          │         │
│  ╰─ 100                         2.5 µs        │ 4 µs          │ 2.7 µs        │ 2.8 µs        │ 100     │ 200
╰─ miss                           20 ns         │ 30 ns         │ 21 ns         │ 22 ns         │ 100     │ 12800
";
        let rows = parse_divan(text);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].name, "hit/1");
        assert!((rows[0].median_ns - 52.3).abs() < 1e-9);
        assert_eq!(rows[0].allocs, Some(2.0));
        assert_eq!(rows[0].alloc_bytes.as_deref(), Some("1.2 KB"));
        assert_eq!(rows[1].name, "hit/100");
        assert!((rows[1].median_ns - 2700.0).abs() < 1e-6);
        assert_eq!(rows[1].allocs, None);
        assert_eq!(rows[2].name, "miss");
    }
}
