//! The generated pack sets (deterministic bodies, a script and a reference per pack) and the
//! in-process fixture `benches/fixture-registry/`.

use super::process::{mkdir, write, write_if_changed};
use super::{COMPRESSED, FIXTURE, GENERATOR};
use std::fmt::Write as _;
use std::path::Path;
use std::path::PathBuf;

pub(super) fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A deterministic number in [0, 1) for pack `i`.
pub(super) fn unit(i: usize, salt: u64) -> f64 {
    let bits = splitmix64((i as u64) ^ salt.rotate_left(40)) >> 11;
    bits as f64 / (1u64 << 53) as f64
}

/// Body size of pack `i`: log-uniform between 1 KB and 50 KB (median about 7 KB).
pub(super) fn body_len(i: usize) -> usize {
    (1024.0 * 50f64.powf(unit(i, 1))).round() as usize
}

/// Markdown the way skill bodies are written: headings, lists, tables, code with quotes and
/// back-slashes, tabs, non-ASCII text; nothing Jinja would read as a template.
pub(super) const PARAGRAPHS: [&str; 10] = [
    "## When to use\n\nUse this skill when the user asks for a \"summary\" of a financial report, a spreadsheet, a log file or any other tabular source, or when a later step of the task needs figures taken from such a source. Keep the answer under 200 words unless the user asks for more detail, cite the file and the sheet every figure came from, and say plainly when a figure could not be computed because its inputs were missing or malformed; do not use it for free-form writing, translation or questions that need no data, where a plain answer is faster and cheaper for the user.\n\n",
    "## Steps\n\n1. Load the data with `scripts/run.py --input <file>` and check that the row count matches what the user described; stop and ask when it does not.\n2. Validate every row against the schema and report each `null` found in a required column, with its row number, before computing anything.\n3. Compute the figures the user asked for, render them as a Markdown table with one row per period, and attach the chart the script wrote.\n\n",
    "- Use `df.describe()` for numeric columns and `value_counts()` for categorical ones; never print more than twenty rows of raw data into the conversation.\n- 中文字段名保持原样，不要翻译；数值保留两位小数，百分比使用 % 符号并注明计算口径。Les en-têtes accentués restent tels quels.\n- Never write outside the working folder, and never overwrite the user's input file: write results to `out/` with a timestamped name.\n\n",
    "```python\nimport json, sys\nrows = json.load(sys.stdin)\ntotal = sum(float(r[\"amount\"]) for r in rows if r.get(\"amount\") not in (None, \"\"))\nprint(json.dumps({\"ok\": True, \"rows\": len(rows), \"total\": total, \"path\": \"C:\\\\data\\\\input.csv\"}))\n```\n\n",
    "| metric | formula | read it as |\n|---|---|---|\n| gross margin | (revenue - cost of goods sold) / revenue | share of each sale left after direct costs |\n| current ratio | current assets / current liabilities | ability to pay the next twelve months of obligations |\n\n",
    "> Note:\tquotes (\"like these\"), back\\slashes such as C:\\temp and tabs are escaped in the reply sent to the agent, while emoji 📈, symbols such as ≥ and ≤ and every other non-ASCII character are sent as they are, so the agent reads exactly what was written here, including the punctuation of tables, code and quotations that the user pasted from other documents.\n\n",
    "---\n\n### Output\n\nReturn a JSON object `{ok, data, error}`: `ok` is true when every step succeeded, `data` holds the computed figures keyed by metric name with one entry per period, and `error` is null or a one-sentence message naming the step that failed and the input that caused it, so that the calling agent can retry or explain the failure to the user. Do not wrap the object in prose, do not add keys that are not listed here, and keep numbers as numbers rather than strings so that the next tool can use them without parsing.\n\n",
    "## Background\n\nQuarterly and annual reports mix figures that were restated, figures that were estimated and figures that were audited, and the same line item is often named differently from one period to the next: revenue may appear as turnover, sales or operating income depending on the accounting standard and the translation. Before comparing periods, map every line item to one canonical name, keep a note of each mapping you made, and show those notes to the user at the end of the answer. When two sources disagree on a figure, prefer the audited one, say which one you used and why, and never average them. When a period is missing entirely, leave a gap in the table rather than interpolating, because an interpolated figure reads as a reported one.\n\n",
    "## Edge cases\n\nEmpty files, files with a header row but no data, files whose delimiter is a semicolon or a tab rather than a comma, files saved in a legacy encoding such as GBK or Windows-1252, and spreadsheets with merged cells or several header rows all occur in practice. Detect each of these before loading, tell the user which one you found, and convert the input into a clean copy in the working folder instead of changing the original. Dates written as text in several formats in one column must be parsed one format at a time, and the rows that match none of them must be listed for the user rather than dropped. Percentages stored as text with a trailing percent sign must be divided by one hundred after the sign is removed.\n\n",
    "## Explaining results\n\nLead with the answer to the question the user asked, in one or two sentences, before any table or method. Then give the table, then the method in a short paragraph that names the formulas used, the periods compared and every assumption that changed a figure by more than one percent. Round only at the end, state the unit in every column header, and keep the currency of the source unless the user asked for a conversion, in which case give the rate, its date and its source. If the user's question rests on a false premise, for example a figure that does not appear in the file, say so first and answer the closest question the data can answer, making the substitution explicit rather than silent.\n\n",
];

/// A body of `len` bytes (cut at a line end), starting at paragraph `seed`.
pub(super) fn body(seed: usize, len: usize) -> String {
    let mut s = String::from("# Instructions\n\n");
    let mut i = seed;
    while s.len() < len + 1000 {
        s.push_str(PARAGRAPHS[i % PARAGRAPHS.len()]);
        i += 1;
    }
    let mut cut = len.min(s.len());
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
    if let Some(p) = s.rfind('\n') {
        s.truncate(p + 1);
    }
    s
}

/// `SKILL.md`: spec fields only (valid for every loader and validator), then the body.
pub(super) fn skill_md(name: &str, i: usize, body: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Generated pack {i} for the skillbake benchmarks. Use when the user asks about topic {i}, its reports or its tables.\nlicense: MIT\nmetadata:\n  version: \"1.0.{i}\"\n  author: skillbake-bench\n---\n\n{body}"
    )
}

/// The other files of pack `i`: a script and a reference.
pub(super) fn pack_files(i: usize) -> [(&'static str, String); 2] {
    let script_lines = 10 + (unit(i, 2) * 60.0) as usize;
    let mut script =
        String::from("\"\"\"Generated helper script.\"\"\"\nimport json\nimport sys\n\n");
    for k in 0..script_lines {
        let _ = writeln!(
            script,
            "STEP_{k} = {{\"name\": \"step {k}\", \"weight\": {k}}}"
        );
    }
    script.push_str("\nprint(json.dumps({\"ok\": True}))\n");
    let guide = body(i + 3, 1024 + (unit(i, 3) * 3072.0) as usize);
    [("scripts/run.py", script), ("references/guide.md", guide)]
}

/// The compressed fixture asset: a CSV table of about 64 KB, as skill packs ship them.
pub(super) fn asset_csv() -> String {
    let mut s = String::from("period,region,product,units,revenue,cost,margin\n");
    let mut i = 0usize;
    while s.len() < 64 * 1024 {
        let units = 100 + (unit(i, 4) * 900.0) as usize;
        let revenue = units as f64 * (9.5 + unit(i, 5) * 3.0);
        let cost = revenue * (0.55 + unit(i, 6) * 0.2);
        let _ = writeln!(
            s,
            "2024-Q{},{},{},{units},{revenue:.2},{cost:.2},{:.4}",
            1 + i % 4,
            ["north", "south", "east", "west"][i % 4],
            ["widget", "gadget", "gizmo"][i % 3],
            (revenue - cost) / revenue
        );
        i += 1;
    }
    s
}

/// A generated pack set.
pub(super) struct PackSet {
    pub(super) dir: PathBuf,
    pub(super) packs: usize,
    pub(super) files: usize,
    pub(super) bytes: u64,
    pub(super) body_bytes: u64,
    pub(super) largest_body: usize,
}

pub(super) fn generate_packs(base: &Path, n: usize) -> Result<PackSet, String> {
    let dir = base.join(n.to_string());
    let marker = base.join(format!("{n}.complete"));
    let fresh = std::fs::read_to_string(&marker).is_ok_and(|m| m == GENERATOR);
    if !fresh {
        if dir.exists() {
            std::fs::remove_dir_all(&dir)
                .map_err(|e| format!("cannot remove `{}`: {e}", dir.display()))?;
        }
        let _ = std::fs::remove_file(&marker);
    }
    let mut set = PackSet {
        dir: dir.clone(),
        packs: n,
        files: 0,
        bytes: 0,
        body_bytes: 0,
        largest_body: 0,
    };
    for i in 0..n {
        let name = format!("pack-{i:05}");
        let body = body(i, body_len(i));
        let md = skill_md(&name, i, &body);
        let files = pack_files(i);
        set.files += 1 + files.len();
        set.bytes += (md.len() + files.iter().map(|(_, c)| c.len()).sum::<usize>()) as u64;
        set.body_bytes += body.trim().len() as u64;
        set.largest_body = set.largest_body.max(body.trim().len());
        if fresh {
            continue;
        }
        let pack = dir.join(&name);
        mkdir(&pack.join("scripts"))?;
        mkdir(&pack.join("references"))?;
        write(&pack.join("SKILL.md"), md.as_bytes())?;
        for (path, content) in &files {
            write(&pack.join(path), content.as_bytes())?;
        }
    }
    if !fresh {
        write(&marker, GENERATOR.as_bytes())?;
    }
    let dir = std::fs::canonicalize(&dir).map_err(|e| format!("`{}`: {e}", dir.display()))?;
    Ok(PackSet { dir, ..set })
}

/// Regenerates `benches/fixture-registry/`; true when a file changed.
pub(super) fn fixture(root: &Path) -> Result<bool, String> {
    let out = root.join("crates/skillbake/benches/fixture-registry");
    mkdir(&out)?;
    let mut changed = false;
    for (name, bytes) in fixture_files(&root.join("target/bench-packs/fixture/skills"))? {
        changed |= write_if_changed(&out.join(name), &bytes)?;
    }
    Ok(changed)
}

/// The files of `benches/fixture-registry/` (name, bytes), compiled from the fixture packs
/// written into `src` (emptied first).
fn fixture_files(src: &Path) -> Result<Vec<(String, Vec<u8>)>, String> {
    if src.exists() {
        std::fs::remove_dir_all(src).map_err(|e| format!("`{}`: {e}", src.display()))?;
    }
    for (i, (name, len)) in FIXTURE.iter().enumerate() {
        let pack = src.join(name);
        mkdir(&pack)?;
        let md = skill_md(name, i, &body(i, *len));
        write(&pack.join("SKILL.md"), md.as_bytes())?;
    }
    // A pack with an asset stored compressed (`[embed] compress`), for the cost of inflating it.
    let pack = src.join(COMPRESSED.0);
    mkdir(&pack.join("assets"))?;
    let md = skill_md(COMPRESSED.0, FIXTURE.len(), &body(7, 2048));
    write(&pack.join("SKILL.md"), md.as_bytes())?;
    write(&pack.join(COMPRESSED.1), asset_csv().as_bytes())?;
    write(
        &src.join("skillbake.toml"),
        b"[embed]\ncompress = [\"**/assets/**\"]\n",
    )?;
    // Errors only: a 100 KB body is longer than `body-too-long` likes, on purpose.
    let checked = skillbake_build::check(src, &skillbake_build::CheckOptions::default());
    if checked.report.has_errors() {
        return Err(format!(
            "the fixture packs do not pass the check:\n{}",
            skillbake_build::report::human::render(&checked.report, false)
        ));
    }
    let opts = skillbake_build::__internal::GenOptions {
        runtime_path: "::skillbake".into(),
        location_prefix: "skills".into(),
        signature: None,
    };
    let generated =
        skillbake_build::__internal::generate(skillbake_build::__internal::skills(&checked), &opts)
            .map_err(|e| e.to_string())?;
    let mut files = vec![
        // `.rs.in`: included by benches/load.rs, not a module of its own.
        (
            format!("{}.in", skillbake_build::__internal::REGISTRY_RS),
            generated.code.into_bytes(),
        ),
        (
            skillbake_build::__internal::BYTES_FILE.to_string(),
            generated.bytes,
        ),
        (
            skillbake_build::__internal::ROUTE_FILE.to_string(),
            generated.route,
        ),
    ];
    for k in 0..generated.text.pieces().len() {
        let piece = generated.text.read_piece(k).map_err(|e| e.to_string())?;
        files.push((
            skillbake_build::__internal::text_file(k),
            piece.into_bytes(),
        ));
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed fixture is what the compiler makes of the fixture packs today: a change to
    /// the registry's layout that forgets `cargo xtask bench --fixture` fails here instead of
    /// panicking in the benchmark.
    #[test]
    fn the_committed_bench_fixture_is_current() {
        let root = crate::root();
        let tmp = root.join("target/bench-packs/fixture-test/skills");
        let files = fixture_files(&tmp).unwrap();
        let committed = root.join("crates/skillbake/benches/fixture-registry");
        let stale: Vec<&str> = files
            .iter()
            .filter(|(name, bytes)| {
                std::fs::read(committed.join(name)).ok().as_ref() != Some(bytes)
            })
            .map(|(name, _)| name.as_str())
            .collect();
        let _ = std::fs::remove_dir_all(tmp.parent().unwrap());
        assert!(
            stale.is_empty(),
            "crates/skillbake/benches/fixture-registry/ is stale ({stale:?}): run `cargo xtask bench --fixture` and commit it"
        );
    }

    #[test]
    fn bodies_have_the_asked_size_and_packs_are_deterministic() {
        for len in [1024, 10 * 1024, 100 * 1024] {
            let b = body(0, len);
            assert!(b.len() <= len && b.len() + 1000 > len, "{len}: {}", b.len());
        }
        // Lines long enough that a 50 KB body stays within `body-too-long`'s 500 lines.
        let b = body(0, 52 * 1024);
        assert!(b.lines().count() < 500, "{} lines", b.lines().count());
        assert_eq!(body_len(7), body_len(7));
        assert!((1000..=52000).contains(&body_len(3)));
    }
}
