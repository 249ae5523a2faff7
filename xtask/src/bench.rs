//! `cargo xtask bench [--sizes 10,1000,10000] [--runs N] [--slow-runs N] [--no-peers]
//! [--no-inproc] [--fixture]`: skillbake's speed against the run-time loaders people use today,
//! every system measured side by side in one run on the same generated packs, written to
//! `BENCHMARKS.md` (between its `bench:start`/`bench:end` markers; the analysis after them is
//! kept) with a plot in `benches/cold-start.svg`.
//!
//! Steps, in order:
//!
//! 1. regenerates the in-process fixture `benches/fixture-registry/` (three packs whose bodies are
//!    1, 10 and 100 KB, compiled by `skillbake-build`), which `benches/load.rs` includes
//!    (`--fixture` stops here);
//! 2. generates 10 / 1,000 / 10,000 packs into `target/bench-packs/N` (bodies of 1–50 KB,
//!    log-uniform, a script and a reference each; deterministic, reused while the generator is
//!    unchanged);
//! 3. builds in release mode, each in its own target folder under `target/bench-build/`:
//!    `skillbake` with each pack set compiled in (`SKILLBAKE_SKILLS_DIR`), the floor
//!    (`benches/floor`: a binary printing a static string) and the Rust run-time loader
//!    (`benches/runtime-loader`);
//! 4. installs the Python peers into `target/bench-venv` (pinned in
//!    `benches/peers/requirements.txt`): DB-GPT's skill registry and `load_skill` tool, and the
//!    Agent Skills reference validator `skills-ref`; a peer that does not install or run is
//!    reported as such, never replaced;
//! 5. checks that every loader answers the same bytes, then measures cold start (wall time with
//!    hyperfine when it is installed, else its own loop; peak RSS with `/usr/bin/time -v`;
//!    instructions with callgrind when valgrind is installed), each loader's own breakdown (load,
//!    first answer, per lookup), `check` throughput, and `cargo bench --bench load`;
//! 6. writes `BENCHMARKS.md` and `benches/cold-start.svg`.

use crate::{cargo, root, run as run_step};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const USAGE: &str = "usage: cargo xtask bench [--sizes 10,1000,10000] [--runs N] [--slow-runs N] [--no-peers] [--no-inproc] [--fixture]";

/// The pack every loader answers in the cold-start runs (present in every pack set).
const PROBE: &str = "pack-00005";
/// The `file_path` every loader is asked for (echoed in the reply).
const PROBE_PATH: &str = "skills/pack-00005/SKILL.md";
/// DB-GPT's application package, holding the `load_skill` tool; installed without its
/// dependencies (a web server's worth), which the tool's module does not need.
const DBGPT_APP: &str = "dbgpt-app==0.8.2";
/// Changes whenever the generated packs change, so stale pack sets are regenerated.
const GENERATOR: &str = "skillbake-bench packs v1";
/// The in-process fixture: pack name and body size in bytes.
const FIXTURE: [(&str, usize); 3] = [
    ("body-1k", 1024),
    ("body-10k", 10 * 1024),
    ("body-100k", 100 * 1024),
];
const START: &str = "<!-- bench:start -->\n";
const END: &str = "<!-- bench:end -->";

struct Options {
    sizes: Vec<usize>,
    runs: usize,
    slow_runs: usize,
    peers: bool,
    inproc: bool,
    fixture_only: bool,
}

fn options(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        sizes: vec![10, 1000, 10000],
        runs: 30,
        slow_runs: 5,
        peers: true,
        inproc: true,
        fixture_only: false,
    };
    let number = |v: Option<&String>, what: &str| -> Result<usize, String> {
        v.and_then(|s| s.parse().ok())
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("{what} needs a positive number ({USAGE})"))
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--sizes" => {
                let list = it
                    .next()
                    .ok_or(format!("--sizes needs a value ({USAGE})"))?;
                o.sizes = list
                    .split(',')
                    .map(|s| s.trim().parse::<usize>().ok().filter(|&n| n > 5))
                    .collect::<Option<Vec<_>>>()
                    .ok_or("--sizes takes numbers above 5, comma-separated")?;
                o.sizes.sort_unstable();
                o.sizes.dedup();
            }
            "--runs" => o.runs = number(it.next(), "--runs")?,
            "--slow-runs" => o.slow_runs = number(it.next(), "--slow-runs")?,
            "--no-peers" => o.peers = false,
            "--no-inproc" => o.inproc = false,
            "--fixture" => o.fixture_only = true,
            s => return Err(format!("unexpected argument `{s}` ({USAGE})")),
        }
    }
    Ok(o)
}

pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let opts = options(args)?;
    let root = root();
    if fixture(&root)? {
        eprintln!(
            "benches/fixture-registry/ was regenerated: commit it with the code that changed it"
        );
    }
    if opts.fixture_only {
        return Ok(());
    }
    let scratch = root.join("target/bench-build/scratch");
    mkdir(&scratch)?;
    let timer = Timer::detect(&scratch);

    // Packs and binaries.
    let mut sets = Vec::new();
    for &n in &opts.sizes {
        eprintln!("\n==> packs: {n} into target/bench-packs/{n}");
        sets.push(generate_packs(&root.join("target/bench-packs"), n)?);
    }
    let floor = build_aux(&root, "floor", "floor")?;
    let loader = build_aux(&root, "runtime-loader", "runtime-loader")?;
    let mut binaries = Vec::new();
    for set in &sets {
        binaries.push(build_skillbake(&root, set)?);
    }

    // Peers.
    let peers = if opts.peers {
        match ensure_venv(&root) {
            Ok(python) => Peers::probe(&root, &python, &sets[0]),
            Err(e) => Peers::unavailable(&format!("the virtualenv could not be set up: {e}")),
        }
    } else {
        Peers::unavailable("skipped (`--no-peers`)")
    };

    // Same bytes from every loader.
    let mut agreement = Vec::new();
    for (set, bin) in sets.iter().zip(&binaries) {
        agreement.push(same_answers(set, bin, &loader, &peers)?);
    }

    // Cold start.
    let mut cold = Vec::new();
    for (set, bin) in sets.iter().zip(&binaries) {
        cold.push(measure_cold(
            &timer, &opts, set, bin, &floor, &loader, &peers,
        )?);
    }

    // Breakdowns inside each loader.
    let mut inside = Vec::new();
    for set in &sets {
        inside.push(measure_inside(&opts, set, &loader, &peers)?);
    }

    // check throughput.
    let mut checks = Vec::new();
    for (set, bin) in sets.iter().zip(&binaries) {
        if set.packs >= 1000 {
            checks.push(measure_check(&timer, &opts, set, bin, &peers)?);
        }
    }

    // In process.
    let inproc = if opts.inproc {
        Some(inproc_benches()?)
    } else {
        None
    };

    let machine = machine(&timer, &peers);
    let report = Report {
        opts: &opts,
        machine,
        sets: &sets,
        binaries: &binaries,
        agreement,
        cold,
        inside,
        checks,
        inproc,
        peers: &peers,
    };
    let svg = report.svg();
    write_if_changed(&root.join("benches/cold-start.svg"), svg.as_bytes())?;
    let path = root.join("BENCHMARKS.md");
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    let generated = report.markdown();
    let new = match (old.find(START), old.find(END)) {
        (Some(s), Some(e)) if s < e => format!("{}{START}{generated}{}", &old[..s], &old[e..]),
        _ => {
            format!("# Benchmarks\n\n{START}{generated}{END}\n\n## Analysis\n\nNot written yet.\n")
        }
    };
    write_if_changed(&path, new.as_bytes())?;
    eprintln!("\nwrote BENCHMARKS.md and benches/cold-start.svg");
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Files and processes

fn mkdir(p: &Path) -> Result<(), String> {
    std::fs::create_dir_all(p).map_err(|e| format!("cannot create `{}`: {e}", p.display()))
}

fn write(p: &Path, bytes: &[u8]) -> Result<(), String> {
    std::fs::write(p, bytes).map_err(|e| format!("cannot write `{}`: {e}", p.display()))
}

/// Writes `bytes` unless the file already holds them; true when it wrote.
fn write_if_changed(p: &Path, bytes: &[u8]) -> Result<bool, String> {
    if std::fs::read(p).is_ok_and(|old| old == bytes) {
        return Ok(false);
    }
    write(p, bytes)?;
    Ok(true)
}

fn display(argv: &[String]) -> String {
    argv.iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// POSIX shell quoting (hyperfine splits its command lines the same way).
fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

fn command(argv: &[String]) -> Result<Command, String> {
    let (first, rest) = argv.split_first().ok_or("empty command")?;
    let mut c = Command::new(first);
    c.args(rest);
    Ok(c)
}

/// Runs `argv` to completion; its stdout when it exits 0.
fn capture(argv: &[String]) -> Result<String, String> {
    let out = command(argv)?
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("`{}`: cannot start: {e}", display(argv)))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(12).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(format!(
            "`{}` failed ({}):\n{}",
            display(argv),
            out.status,
            tail.join("\n")
        ));
    }
    String::from_utf8(out.stdout).map_err(|_| format!("`{}` printed non-UTF-8", display(argv)))
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

// ---------------------------------------------------------------------------------------------
// Statistics and timing

/// Median, min and max of repeated measurements.
#[derive(Debug, Clone, Copy)]
struct Stat {
    median: f64,
    min: f64,
    max: f64,
    runs: usize,
}

impl Stat {
    fn of(mut v: Vec<f64>) -> Option<Stat> {
        v.retain(|x| x.is_finite());
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Some(Stat {
            median,
            min: v[0],
            max: v[n - 1],
            runs: n,
        })
    }
}

/// How processes are timed: hyperfine when installed, else a loop of our own.
struct Timer {
    hyperfine: Option<String>,
    time_v: bool,
    valgrind: Option<String>,
    scratch: PathBuf,
}

impl Timer {
    fn detect(scratch: &Path) -> Timer {
        let version = |argv: &[&str]| {
            let argv: Vec<String> = argv.iter().map(|a| (*a).to_string()).collect();
            capture(&argv)
                .ok()
                .and_then(|o| o.lines().next().map(str::to_string))
        };
        let timer = Timer {
            hyperfine: version(&["hyperfine", "--version"]),
            time_v: Path::new("/usr/bin/time").exists(),
            valgrind: version(&["valgrind", "--version"]),
            scratch: scratch.to_path_buf(),
        };
        if timer.hyperfine.is_none() {
            eprintln!("note: hyperfine is not installed (`apt-get install hyperfine`); timing with a loop of our own");
        }
        if !timer.time_v {
            eprintln!(
                "note: /usr/bin/time is missing (`apt-get install time`); peak RSS is not measured"
            );
        }
        timer
    }

    /// Wall time of whole runs of `argv`, in seconds (`warmup` runs first, not counted).
    fn wall(&self, argv: &[String], runs: usize, warmup: usize) -> Result<Stat, String> {
        let mut all = self.wall_many(&[argv.to_vec()], runs, warmup, 1)?;
        all.pop()
            .ok_or_else(|| format!("no timing for `{}`", display(argv)))
    }

    /// Wall times of several commands measured side by side: `rounds` rounds, each running
    /// every command in turn (`warmup` uncounted runs, then its share of `runs`), so that a
    /// change in the machine's load during the measurement hits every command alike.
    fn wall_many(
        &self,
        argvs: &[Vec<String>],
        runs: usize,
        warmup: usize,
        rounds: usize,
    ) -> Result<Vec<Stat>, String> {
        let rounds = rounds.clamp(1, runs.max(1));
        let per = runs.div_ceil(rounds);
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); argvs.len()];
        for round in 1..=rounds {
            eprintln!(
                "\n==> time, round {round}/{rounds} ({per} runs each): {}",
                argvs
                    .iter()
                    .map(|a| display(a))
                    .collect::<Vec<_>>()
                    .join(" | ")
            );
            match &self.hyperfine {
                Some(_) => {
                    let json = self.scratch.join("hyperfine.json");
                    let status = Command::new("hyperfine")
                        .args(["-N", "--style", "basic", "--warmup"])
                        .arg(warmup.to_string())
                        .arg("--runs")
                        .arg(per.to_string())
                        .arg("--export-json")
                        .arg(&json)
                        .args(argvs.iter().map(|a| display(a)))
                        .stdin(Stdio::null())
                        .status()
                        .map_err(|e| format!("cannot run hyperfine: {e}"))?;
                    if !status.success() {
                        return Err("hyperfine failed".into());
                    }
                    let text = std::fs::read_to_string(&json).map_err(|e| e.to_string())?;
                    let v: serde_json::Value = serde_json::from_str(&text)
                        .map_err(|e| format!("hyperfine's JSON: {e}"))?;
                    for (i, t) in times.iter_mut().enumerate() {
                        let got = v["results"][i]["times"]
                            .as_array()
                            .ok_or("hyperfine's JSON has no times")?;
                        t.extend(got.iter().filter_map(serde_json::Value::as_f64));
                    }
                }
                None => {
                    for run in 0..warmup + per {
                        for (argv, t) in argvs.iter().zip(times.iter_mut()) {
                            let start = Instant::now();
                            let status = command(argv)?
                                .stdin(Stdio::null())
                                .stdout(Stdio::null())
                                .stderr(Stdio::null())
                                .status()
                                .map_err(|e| format!("`{}`: cannot start: {e}", display(argv)))?;
                            let dt = start.elapsed().as_secs_f64();
                            if !status.success() {
                                return Err(format!("`{}` failed ({status})", display(argv)));
                            }
                            if run >= warmup {
                                t.push(dt);
                            }
                        }
                    }
                }
            }
        }
        times
            .into_iter()
            .zip(argvs)
            .map(|(t, argv)| {
                Stat::of(t).ok_or_else(|| format!("no timing for `{}`", display(argv)))
            })
            .collect()
    }

    /// Peak resident set size (KiB) and minor page faults of `argv` over `runs` runs (None
    /// without /usr/bin/time).
    fn rss(&self, argv: &[String], runs: usize) -> Result<Option<(Stat, Stat)>, String> {
        if !self.time_v {
            return Ok(None);
        }
        let (mut kib, mut faults) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            let out = Command::new("/usr/bin/time")
                .arg("-v")
                .args(argv)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .output()
                .map_err(|e| format!("cannot run /usr/bin/time: {e}"))?;
            if !out.status.success() {
                return Err(format!("`{}` failed under /usr/bin/time", display(argv)));
            }
            let err = String::from_utf8_lossy(&out.stderr);
            let field = |name: &str| {
                err.lines()
                    .find_map(|l| l.trim().strip_prefix(name))
                    .and_then(|v| v.trim().parse::<f64>().ok())
                    .ok_or(format!("/usr/bin/time -v printed no `{name}`"))
            };
            kib.push(field("Maximum resident set size (kbytes):")?);
            faults.push(field("Minor (reclaiming a frame) page faults:")?);
        }
        Ok(Stat::of(kib).zip(Stat::of(faults)))
    }

    /// Instructions executed by one run of `argv` (callgrind), when valgrind is installed.
    fn instructions(&self, argv: &[String]) -> Option<u64> {
        self.valgrind.as_ref()?;
        let out = Command::new("valgrind")
            .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
            .args(argv)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .output()
            .ok()?;
        let err = String::from_utf8_lossy(&out.stderr);
        err.lines().find_map(|l| {
            let (_, v) = l.split_once("Collected :")?;
            v.trim().parse().ok()
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Generated packs

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A deterministic number in [0, 1) for pack `i`.
fn unit(i: usize, salt: u64) -> f64 {
    let bits = splitmix64((i as u64) ^ salt.rotate_left(40)) >> 11;
    bits as f64 / (1u64 << 53) as f64
}

/// Body size of pack `i`: log-uniform between 1 KB and 50 KB (median about 7 KB).
fn body_len(i: usize) -> usize {
    (1024.0 * 50f64.powf(unit(i, 1))).round() as usize
}

/// Markdown the way skill bodies are written: headings, lists, tables, code with quotes and
/// back-slashes, tabs, non-ASCII text; nothing Jinja would read as a template.
const PARAGRAPHS: [&str; 10] = [
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
fn body(seed: usize, len: usize) -> String {
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
fn skill_md(name: &str, i: usize, body: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Generated pack {i} for the skillbake benchmarks. Use when the user asks about topic {i}, its reports or its tables.\nlicense: MIT\nmetadata:\n  version: \"1.0.{i}\"\n  author: skillbake-bench\n---\n\n{body}"
    )
}

/// The other files of pack `i`: a script and a reference.
fn pack_files(i: usize) -> [(&'static str, String); 2] {
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

/// A generated pack set.
struct PackSet {
    dir: PathBuf,
    packs: usize,
    files: usize,
    bytes: u64,
    body_bytes: u64,
    largest_body: usize,
}

fn generate_packs(base: &Path, n: usize) -> Result<PackSet, String> {
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
fn fixture(root: &Path) -> Result<bool, String> {
    let src = root.join("target/bench-packs/fixture/skills");
    if src.exists() {
        std::fs::remove_dir_all(&src).map_err(|e| format!("`{}`: {e}", src.display()))?;
    }
    for (i, (name, len)) in FIXTURE.iter().enumerate() {
        let pack = src.join(name);
        mkdir(&pack)?;
        let md = skill_md(name, i, &body(i, *len));
        write(&pack.join("SKILL.md"), md.as_bytes())?;
    }
    // Errors only: a 100 KB body is longer than `body-too-long` likes, on purpose.
    let checked = skillbake_build::check(&src, &skillbake_build::CheckOptions::default());
    if checked.report.has_errors() {
        return Err(format!(
            "the fixture packs do not pass the check:\n{}",
            skillbake_build::report::human::render(&checked.report, false)
        ));
    }
    let opts = skillbake_build::generate::GenOptions {
        runtime_path: "::skillbake".into(),
        location_prefix: "skills".into(),
    };
    let generated =
        skillbake_build::generate::generate(&checked.skills, &opts).map_err(|e| e.to_string())?;
    let out = root.join("benches/fixture-registry");
    mkdir(&out)?;
    let mut changed = false;
    // `.rs.in`: included by benches/load.rs, not a module of its own.
    let rs = format!("{}.in", skillbake_build::generate::REGISTRY_RS);
    changed |= write_if_changed(&out.join(rs), generated.code.as_bytes())?;
    changed |= write_if_changed(
        &out.join(skillbake_build::generate::TEXT_FILE),
        generated.text.as_bytes(),
    )?;
    changed |= write_if_changed(
        &out.join(skillbake_build::generate::BYTES_FILE),
        &generated.bytes,
    )?;
    Ok(changed)
}

// ---------------------------------------------------------------------------------------------
// Builds

fn build_dir(root: &Path, what: &str) -> PathBuf {
    root.join("target/bench-build").join(what)
}

/// `skillbake` with `set` compiled in, in its own target folder.
fn build_skillbake(root: &Path, set: &PackSet) -> Result<PathBuf, String> {
    let target = build_dir(root, &format!("skillbake-{}", set.packs));
    let bin = crate::build_bundled_skillbake(
        &set.dir,
        Some(&target),
        &format!("{} packs compiled in", set.packs),
    )?;
    let listed = capture(&[s(&bin), "list".into()])?.lines().count();
    if listed != set.packs {
        return Err(format!(
            "`{}` embeds {listed} skills, expected {}",
            bin.display(),
            set.packs
        ));
    }
    Ok(bin)
}

/// A bench crate under `benches/` (not a workspace member), in its own target folder.
fn build_aux(root: &Path, name: &str, bin: &str) -> Result<PathBuf, String> {
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

// ---------------------------------------------------------------------------------------------
// Python peers

struct Peers {
    python: Option<PathBuf>,
    script: PathBuf,
    /// Versions of the peers, or why DB-GPT cannot be measured.
    dbgpt: Result<serde_json::Value, String>,
    /// Why skills-ref cannot be measured, if so.
    skills_ref: Result<(), String>,
}

fn ensure_venv(root: &Path) -> Result<PathBuf, String> {
    let venv = root.join("target/bench-venv");
    let python = venv.join("bin/python");
    let req = root.join("benches/peers/requirements.txt");
    let pins = std::fs::read_to_string(&req).map_err(|e| format!("`{}`: {e}", req.display()))?;
    let wanted = format!("{pins}\n{DBGPT_APP}\n");
    let marker = venv.join("skillbake-bench-requirements.txt");
    if python.exists() && std::fs::read_to_string(&marker).is_ok_and(|m| m == wanted) {
        return Ok(python);
    }
    run_step(
        "python3 -m venv target/bench-venv",
        Command::new("python3")
            .args(["-m", "venv", "--clear"])
            .arg(&venv),
    )?;
    let pip = |what: &[&str]| {
        let mut c = Command::new(&python);
        c.args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(what);
        c
    };
    run_step(
        "pip install -r benches/peers/requirements.txt",
        &mut pip(&["-r", &s(&req)]),
    )?;
    run_step(
        &format!("pip install --no-deps {DBGPT_APP}"),
        &mut pip(&["--no-deps", DBGPT_APP]),
    )?;
    write(&marker, wanted.as_bytes())?;
    Ok(python)
}

impl Peers {
    fn unavailable(why: &str) -> Peers {
        Peers {
            python: None,
            script: PathBuf::new(),
            dbgpt: Err(why.to_string()),
            skills_ref: Err(why.to_string()),
        }
    }

    /// Runs each peer once on the smallest pack set; a peer that fails is reported, not used.
    fn probe(root: &Path, python: &Path, set: &PackSet) -> Peers {
        let mut peers = Peers {
            python: Some(python.to_path_buf()),
            script: root.join("benches/peers/dbgpt_bench.py"),
            ..Peers::unavailable("not probed")
        };
        peers.probe_all(set);
        peers
    }

    fn probe_all(&mut self, set: &PackSet) {
        let versions = self
            .py(&["versions"])
            .and_then(|o| serde_json::from_str::<serde_json::Value>(&o).map_err(|e| e.to_string()));
        self.dbgpt = versions.and_then(|v| {
            self.py(&["load", &s(&set.dir), PROBE, PROBE_PATH])?;
            Ok(v)
        });
        self.skills_ref = self.py(&["skills-ref", &s(&set.dir)]).map(|_| ());
        if let Err(e) = &self.dbgpt {
            eprintln!("DB-GPT peer unavailable: {e}");
        }
        if let Err(e) = &self.skills_ref {
            eprintln!("skills-ref peer unavailable: {e}");
        }
    }

    fn argv(&self, args: &[&str]) -> Vec<String> {
        let mut v = vec![
            self.python.as_deref().map(s).unwrap_or_default(),
            s(&self.script),
        ];
        v.extend(args.iter().map(|a| (*a).to_string()));
        v
    }

    fn py(&self, args: &[&str]) -> Result<String, String> {
        capture(&self.argv(args))
    }
}

// ---------------------------------------------------------------------------------------------
// Measurements

/// Whether the peers' replies equal skillbake's, byte for byte.
struct Agreement {
    reply_bytes: usize,
    loader: bool,
    dbgpt: Option<bool>,
}

fn same_answers(
    set: &PackSet,
    bin: &Path,
    loader: &Path,
    peers: &Peers,
) -> Result<Agreement, String> {
    let ours = capture(&[s(bin), "load".into(), PROBE.into(), PROBE_PATH.into()])?;
    let theirs = capture(&[s(loader), s(&set.dir), PROBE.into(), PROBE_PATH.into()])?;
    if ours != theirs {
        return Err(format!(
            "the Rust run-time loader answers differently from skillbake on {} packs",
            set.packs
        ));
    }
    let dbgpt = match peers.dbgpt {
        Ok(_) => Some(peers.py(&["load", &s(&set.dir), PROBE, PROBE_PATH])? == ours),
        Err(_) => None,
    };
    Ok(Agreement {
        reply_bytes: ours.trim_end().len(),
        loader: true,
        dbgpt,
    })
}

/// One system's whole-process figures.
struct Proc {
    wall: Stat,
    /// Peak RSS in KiB.
    rss: Option<Stat>,
    /// Minor page faults.
    faults: Option<Stat>,
    /// Instructions of one run (callgrind).
    ir: Option<u64>,
}

struct Cold {
    packs: usize,
    floor: Proc,
    ours: Proc,
    loader: Proc,
    dbgpt: Option<Proc>,
}

fn measure_cold(
    timer: &Timer,
    opts: &Options,
    set: &PackSet,
    bin: &Path,
    floor: &Path,
    loader: &Path,
    peers: &Peers,
) -> Result<Cold, String> {
    let floor_argv = vec![s(floor)];
    let ours_argv = vec![s(bin), "load".into(), PROBE.into(), PROBE_PATH.into()];
    let loader_argv = vec![s(loader), s(&set.dir), PROBE.into(), PROBE_PATH.into()];
    let rust = [floor_argv, ours_argv, loader_argv];
    let walls = timer.wall_many(&rust, opts.runs, 2, 5)?;
    let mut procs = Vec::new();
    for (argv, wall) in rust.iter().zip(walls) {
        let measured = timer.rss(argv, 5.min(opts.runs))?;
        procs.push(Proc {
            wall,
            rss: measured.map(|m| m.0),
            faults: measured.map(|m| m.1),
            ir: timer.instructions(argv),
        });
    }
    let dbgpt = match peers.dbgpt {
        Ok(_) => {
            let argv = peers.argv(&["load", &s(&set.dir), PROBE, PROBE_PATH]);
            let measured = timer.rss(&argv, 3.min(opts.slow_runs))?;
            Some(Proc {
                wall: timer.wall(&argv, opts.slow_runs, 1)?,
                rss: measured.map(|m| m.0),
                faults: measured.map(|m| m.1),
                ir: None,
            })
        }
        Err(_) => None,
    };
    let mut procs = procs.into_iter();
    let (Some(floor), Some(ours), Some(loader)) = (procs.next(), procs.next(), procs.next()) else {
        return Err("missing cold-start measurements".into());
    };
    Ok(Cold {
        packs: set.packs,
        floor,
        ours,
        loader,
        dbgpt,
    })
}

/// A loader's own account of where its time goes (median of several runs per field).
struct Breakdown {
    import_s: Option<Stat>,
    load_s: Stat,
    first_s: Stat,
    hit_ns: Stat,
    ci_ns: Stat,
    miss_ns: Stat,
}

fn breakdown(argv: &[String], runs: usize) -> Result<Breakdown, String> {
    eprintln!("\n==> breakdown ({runs} runs): {}", display(argv));
    let mut rows = Vec::new();
    for _ in 0..runs {
        let out = capture(argv)?;
        let v: serde_json::Value = serde_json::from_str(out.trim())
            .map_err(|e| format!("`{}` printed no JSON: {e}", display(argv)))?;
        rows.push(v);
    }
    let field =
        |k: &str| -> Option<Stat> { Stat::of(rows.iter().filter_map(|r| r[k].as_f64()).collect()) };
    let need = |k: &str| field(k).ok_or_else(|| format!("`{}` reported no `{k}`", display(argv)));
    Ok(Breakdown {
        import_s: field("import_s"),
        load_s: need("load_s")?,
        first_s: need("first_answer_s")?,
        hit_ns: need("hit_ns")?,
        ci_ns: need("case_insensitive_ns")?,
        miss_ns: need("miss_ns")?,
    })
}

struct Inside {
    loader: Breakdown,
    dbgpt: Option<Breakdown>,
}

fn measure_inside(
    opts: &Options,
    set: &PackSet,
    loader: &Path,
    peers: &Peers,
) -> Result<Inside, String> {
    let argv = vec![
        s(loader),
        "--report".into(),
        s(&set.dir),
        PROBE.into(),
        PROBE_PATH.into(),
    ];
    let loader = breakdown(&argv, opts.slow_runs)?;
    let dbgpt = match peers.dbgpt {
        Ok(_) => Some(breakdown(
            &peers.argv(&["report", &s(&set.dir), PROBE, PROBE_PATH]),
            3.min(opts.slow_runs),
        )?),
        Err(_) => None,
    };
    Ok(Inside { loader, dbgpt })
}

struct CheckRow {
    packs: usize,
    ours: Stat,
    skills_ref: Option<Stat>,
    /// skills-ref's validation alone, without the interpreter's start and imports.
    skills_ref_inside: Option<Stat>,
}

fn measure_check(
    timer: &Timer,
    opts: &Options,
    set: &PackSet,
    bin: &Path,
    peers: &Peers,
) -> Result<CheckRow, String> {
    let ours = timer.wall(
        &[s(bin), "check".into(), s(&set.dir), "--quiet".into()],
        opts.slow_runs.max(5),
        1,
    )?;
    let (skills_ref, inside) = match peers.skills_ref {
        Ok(()) => {
            let whole = timer.wall(
                &peers.argv(&["skills-ref", &s(&set.dir)]),
                opts.slow_runs,
                1,
            )?;
            let mut v = Vec::new();
            for _ in 0..3.min(opts.slow_runs) {
                let out = peers.py(&["skills-ref-report", &s(&set.dir)])?;
                let j: serde_json::Value =
                    serde_json::from_str(out.trim()).map_err(|e| e.to_string())?;
                v.extend(j["validate_s"].as_f64());
            }
            (Some(whole), Stat::of(v))
        }
        Err(_) => (None, None),
    };
    Ok(CheckRow {
        packs: set.packs,
        ours,
        skills_ref,
        skills_ref_inside: inside,
    })
}

/// One row of divan's output.
#[derive(Debug, Clone)]
struct DivanRow {
    /// `group/arg`, e.g. `hit/10`.
    name: String,
    fastest_ns: f64,
    median_ns: f64,
    slowest_ns: f64,
    /// Median allocations per call, grows (reallocations) included.
    allocs: Option<f64>,
    alloc_bytes: Option<String>,
}

fn inproc_benches() -> Result<Vec<DivanRow>, String> {
    eprintln!("\n==> cargo bench --bench load");
    let out = cargo()
        .args(["bench", "--bench", "load", "--", "--color", "never"])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cargo bench: cannot start: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    eprint!("{text}");
    if !out.status.success() {
        return Err(format!("cargo bench --bench load failed ({})", out.status));
    }
    let rows = parse_divan(&text);
    if rows.is_empty() {
        return Err("no benchmark rows in divan's output".into());
    }
    Ok(rows)
}

/// `12.5 ns` → nanoseconds.
fn parse_duration(cell: &str) -> Option<f64> {
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
fn parse_divan(text: &str) -> Vec<DivanRow> {
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

// ---------------------------------------------------------------------------------------------
// The machine

fn machine(timer: &Timer, peers: &Peers) -> Vec<(String, String)> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name")?.split_once(':').map(|x| x.1))
        .map_or("unknown", str::trim)
        .to_string();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or("unknown".into(), |kib| {
            format!("{:.1} GiB", kib / 1024.0 / 1024.0)
        });
    let nproc = std::thread::available_parallelism().map_or(0, usize::from);
    let one = |argv: &[&str]| {
        let argv: Vec<String> = argv.iter().map(|a| (*a).to_string()).collect();
        capture(&argv)
            .ok()
            .and_then(|o| o.lines().next().map(str::to_string))
            .unwrap_or_else(|| "not installed".into())
    };
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map_or("unknown".into(), |k| k.trim().to_string());
    let mut m = vec![
        ("CPU".into(), model),
        ("cores (nproc)".into(), nproc.to_string()),
        ("memory".into(), mem),
        ("kernel".into(), format!("Linux {kernel}")),
        ("rustc".into(), one(&["rustc", "--version"])),
        (
            "timing".into(),
            timer.hyperfine.clone().map_or(
                "own loop (hyperfine not installed), wall clock".into(),
                |v| format!("{v} (`-N`, no shell)"),
            ),
        ),
        (
            "peak RSS".into(),
            if timer.time_v {
                "`/usr/bin/time -v` (GNU time), maximum resident set size".into()
            } else {
                "not measured (/usr/bin/time missing)".into()
            },
        ),
        (
            "instructions".into(),
            timer.valgrind.clone().map_or("not measured".into(), |v| {
                format!("{v} `--tool=callgrind` (whole process)")
            }),
        ),
    ];
    if let Ok(v) = &peers.dbgpt {
        let get = |k: &str| v[k].as_str().unwrap_or("?").to_string();
        m.push((
            "Python peers".into(),
            format!(
                "Python {}, dbgpt {}, dbgpt-app {}, PyYAML {} (libyaml {}), skills-ref {}",
                get("python"),
                get("dbgpt"),
                get("dbgpt-app"),
                get("PyYAML"),
                if v["libyaml"].as_bool() == Some(true) {
                    "present"
                } else {
                    "absent"
                },
                get("skills-ref")
            ),
        ));
    }
    m
}

// ---------------------------------------------------------------------------------------------
// The report

/// One line of the plot: label, colour, dashed, (packs, wall time) points.
type Series<'a> = (&'a str, &'a str, bool, Vec<(usize, Stat)>);

struct Report<'a> {
    opts: &'a Options,
    machine: Vec<(String, String)>,
    sets: &'a [PackSet],
    binaries: &'a [PathBuf],
    agreement: Vec<Agreement>,
    cold: Vec<Cold>,
    inside: Vec<Inside>,
    checks: Vec<CheckRow>,
    inproc: Option<Vec<DivanRow>>,
    peers: &'a Peers,
}

fn t(sec: f64) -> String {
    let a = sec.abs();
    if a >= 1.0 {
        format!("{sec:.2} s")
    } else if a >= 1e-3 {
        format!("{:.2} ms", sec * 1e3)
    } else if a >= 1e-6 {
        format!("{:.1} µs", sec * 1e6)
    } else {
        format!("{:.1} ns", sec * 1e9)
    }
}

/// `median (min–max)` of a time in seconds.
fn ts(st: &Stat) -> String {
    format!("{} ({}–{})", t(st.median), t(st.min), t(st.max))
}

/// The same for nanoseconds.
fn tns(st: &Stat) -> String {
    ts(&Stat {
        median: st.median * 1e-9,
        min: st.min * 1e-9,
        max: st.max * 1e-9,
        runs: st.runs,
    })
}

fn mib(kib: Option<&Stat>) -> String {
    kib.map_or("–".into(), |k| format!("{:.1} MiB", k.median / 1024.0))
}

fn x(r: f64) -> String {
    if r >= 100.0 {
        format!("{r:.0}×")
    } else if r >= 10.0 {
        format!("{r:.1}×")
    } else {
        format!("{r:.2}×")
    }
}

fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn size(bytes: f64) -> String {
    if bytes >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", bytes / 1024.0 / 1024.0)
    } else if bytes >= 1024.0 {
        format!("{:.1} KiB", bytes / 1024.0)
    } else {
        format!("{bytes:.0} B")
    }
}

fn verdict(met: bool) -> &'static str {
    if met {
        "**met**"
    } else {
        "**missed**"
    }
}

impl Report<'_> {
    fn divan(&self, name: &str) -> Option<&DivanRow> {
        self.inproc.as_ref()?.iter().find(|r| r.name == name)
    }

    fn markdown(&self) -> String {
        let mut m = String::new();
        let sizes: Vec<String> = self.opts.sizes.iter().map(|n| n.to_string()).collect();
        let _ = writeln!(
            m,
            "Measured by `cargo xtask bench` (every figure down to the Analysis comes from one run \
             of it; medians of several runs with min–max beside them; ratios are ratios of medians).\n"
        );
        let _ = writeln!(m, "## Reproduce\n");
        let _ = writeln!(
            m,
            "```sh\napt-get install hyperfine time valgrind   # optional: better timing, peak RSS, instruction counts\ncargo xtask bench --sizes {} --runs {} --slow-runs {}\n```\n",
            sizes.join(","),
            self.opts.runs,
            self.opts.slow_runs
        );
        let _ = writeln!(
            m,
            "It needs `python3` with `venv` for the Python peers (installed into `target/bench-venv` \
             from `benches/peers/requirements.txt`) and builds everything in release mode under \
             `target/bench-build/`.\n"
        );
        let _ = writeln!(m, "## Machine\n\n| | |\n|---|---|");
        for (k, v) in &self.machine {
            let _ = writeln!(m, "| {k} | {v} |");
        }
        let _ = writeln!(m);

        self.targets(&mut m);
        self.cold_tables(&mut m);
        self.inside_tables(&mut m);
        self.check_table(&mut m);
        self.inproc_table(&mut m);
        self.method(&mut m);
        m
    }

    fn targets(&self, m: &mut String) {
        let _ = writeln!(
            m,
            "## Targets\n\n| target | figures | verdict |\n|---|---|---|"
        );
        // Allocations and the in-process floor.
        if self.inproc.is_some() {
            for kb in [1, 10, 100] {
                let hit = self.divan(&format!("hit/{kb}"));
                let into = self.divan(&format!("hit_into_reused_buffer/{kb}"));
                let floor = self.divan(&format!("floor_lookup_and_copy/{kb}"));
                let floor_into = self.divan(&format!("floor_lookup_and_copy_into/{kb}"));
                if let (Some(h), Some(i)) = (hit, into) {
                    let ha = h.allocs.unwrap_or(0.0);
                    let ia = i.allocs.unwrap_or(0.0);
                    let _ = writeln!(
                        m,
                        "| `load_skill` hit, {kb} KB body: ≤ 1 allocation (0 with `load_skill_into`) | {ha} and {ia} allocations per call | {} |",
                        verdict(ha <= 1.0 && ia == 0.0)
                    );
                }
                if let (Some(h), Some(f), Some(i), Some(fi)) = (hit, floor, into, floor_into) {
                    let r = h.median_ns / f.median_ns;
                    let ri = i.median_ns / fi.median_ns;
                    let _ = writeln!(
                        m,
                        "| `load_skill` hit, {kb} KB body: within 2× of lookup + copy | {} vs {} ({}); into a reused buffer {} vs {} ({}) | {} |",
                        t(h.median_ns * 1e-9),
                        t(f.median_ns * 1e-9),
                        x(r),
                        t(i.median_ns * 1e-9),
                        t(fi.median_ns * 1e-9),
                        x(ri),
                        verdict(r <= 2.0 && ri <= 2.0)
                    );
                }
            }
        }
        let largest = self.cold.last();
        let smallest = self.cold.first();
        if let Some(c) = largest {
            let r = c.ours.wall.median / c.floor.wall.median;
            let ir = match (c.ours.ir, c.floor.ir) {
                (Some(o), Some(f)) => format!(
                    "; instructions {} vs {} ({})",
                    thousands(o as usize),
                    thousands(f as usize),
                    x(o as f64 / f as f64)
                ),
                _ => String::new(),
            };
            let _ = writeln!(
                m,
                "| cold start, {} packs: within 1.5× of the trivial binary | {} vs {} ({}){ir} | {} |",
                thousands(c.packs),
                t(c.ours.wall.median),
                t(c.floor.wall.median),
                x(r),
                verdict(r <= 1.5)
            );
        }
        if let (Some(a), Some(b)) = (smallest, largest) {
            if a.packs != b.packs {
                let r = b.ours.wall.median / a.ours.wall.median;
                // Flat means no work proportional to the packs: the wall time within 1.25× (the
                // noise of this machine) and the instructions, which are exact, within 5%.
                let (ir, ir_flat) = match (a.ours.ir, b.ours.ir) {
                    (Some(ia), Some(ib)) => {
                        let growth = ib as f64 / ia as f64 - 1.0;
                        let per_pack = (ib as f64 - ia as f64) / (b.packs - a.packs) as f64;
                        (
                            format!(
                                "; instructions {} → {} ({:+.1}%, {per_pack:.1} per added pack)",
                                thousands(ia as usize),
                                thousands(ib as usize),
                                growth * 100.0
                            ),
                            growth <= 0.05,
                        )
                    }
                    _ => (String::new(), true),
                };
                let faults = match (a.ours.faults, b.ours.faults) {
                    (Some(fa), Some(fb)) => {
                        format!("; minor page faults {:.0} → {:.0}", fa.median, fb.median)
                    }
                    _ => String::new(),
                };
                let _ = writeln!(
                    m,
                    "| cold start flat from {} to {} packs (wall within 1.25×, instructions within 5%) | {} → {} ({}){ir}{faults} | {} |",
                    thousands(a.packs),
                    thousands(b.packs),
                    t(a.ours.wall.median),
                    t(b.ours.wall.median),
                    x(r),
                    verdict(r <= 1.25 && ir_flat)
                );
            }
        }
        if let Some((c, i)) = self
            .cold
            .iter()
            .zip(&self.inside)
            .find(|(c, _)| c.packs == 1000)
        {
            match (&c.dbgpt, &i.dbgpt) {
                (Some(d), Some(b)) => {
                    let inside = b.load_s.median + b.first_s.median;
                    let r_in = inside / c.ours.wall.median;
                    let r_whole = d.wall.median / c.ours.wall.median;
                    let _ = writeln!(
                        m,
                        "| ≥ 100× faster than DB-GPT to first answer, 1,000 packs | DB-GPT's registry load + first answer alone {} vs skillbake's whole process {} ({}); whole processes {} vs {} ({}) | {} |",
                        t(inside),
                        t(c.ours.wall.median),
                        x(r_in),
                        t(d.wall.median),
                        t(c.ours.wall.median),
                        x(r_whole),
                        verdict(r_in >= 100.0)
                    );
                }
                _ => {
                    let why = self.peers.dbgpt.as_ref().err().cloned().unwrap_or_default();
                    let _ = writeln!(
                        m,
                        "| ≥ 100× faster than DB-GPT to first answer, 1,000 packs | DB-GPT not measured: {} | not measured |",
                        why.lines().next().unwrap_or_default()
                    );
                }
            }
        }
        if !self.cold.is_empty() {
            let figures: Vec<String> = self
                .cold
                .iter()
                .map(|c| {
                    format!(
                        "{}: {}",
                        thousands(c.packs),
                        x(c.loader.wall.median / c.ours.wall.median)
                    )
                })
                .collect();
            let ahead = self
                .cold
                .iter()
                .all(|c| c.loader.wall.median > c.ours.wall.median);
            let irs: Vec<String> = self
                .cold
                .iter()
                .filter_map(|c| {
                    Some(format!(
                        "{}: {}",
                        thousands(c.packs),
                        x(c.loader.ir? as f64 / c.ours.ir? as f64)
                    ))
                })
                .collect();
            let irs = if irs.is_empty() {
                String::new()
            } else {
                format!("; instructions: {}", irs.join(", "))
            };
            let _ = writeln!(
                m,
                "| ahead of the Rust run-time loader at every size (cold start) | loader / skillbake, wall: {}{irs} | {} |",
                figures.join(", "),
                verdict(ahead)
            );
        }
        for c in &self.checks {
            let ours = c.packs as f64 / c.ours.median;
            match c.skills_ref {
                Some(sr) => {
                    let theirs = c.packs as f64 / sr.median;
                    let _ = writeln!(
                        m,
                        "| `check` ≥ 10× skills-ref's packs/s, {} packs | {:.0} vs {:.0} packs/s ({}) | {} |",
                        thousands(c.packs),
                        ours,
                        theirs,
                        x(ours / theirs),
                        verdict(ours / theirs >= 10.0)
                    );
                }
                None => {
                    let why = self
                        .peers
                        .skills_ref
                        .as_ref()
                        .err()
                        .cloned()
                        .unwrap_or_default();
                    let _ = writeln!(
                        m,
                        "| `check` ≥ 10× skills-ref's packs/s, {} packs | skills-ref not measured: {} | not measured |",
                        thousands(c.packs),
                        why.lines().next().unwrap_or_default()
                    );
                }
            }
        }
        let _ = writeln!(m);
    }

    fn cold_tables(&self, m: &mut String) {
        let _ = writeln!(
            m,
            "## Cold start: a fresh process answers one `load_skill`\n\n\
             Each system starts, loads its skills however it does, answers \
             `load_skill(\"{PROBE}\", \"{PROBE_PATH}\")` on stdout and exits. The replies are \
             compared first: byte-identical unless marked.\n\n\
             ![cold start against number of packs](benches/cold-start.svg)\n"
        );
        let _ = writeln!(
            m,
            "| packs | system | wall time, median (min–max) | ratio to skillbake | peak RSS | minor page faults | instructions |\n|---:|---|---|---:|---:|---:|---:|"
        );
        for (c, a) in self.cold.iter().zip(&self.agreement) {
            let n = thousands(c.packs);
            let base = c.ours.wall.median;
            let differs = |same: Option<bool>| {
                if same == Some(false) {
                    " (reply differs)"
                } else {
                    ""
                }
            };
            let mut rows = vec![
                ("**skillbake** `load`", "", Some(&c.ours)),
                (
                    "Rust run-time loader",
                    differs(Some(a.loader)),
                    Some(&c.loader),
                ),
                (
                    "DB-GPT `load_skill` (Python)",
                    differs(a.dbgpt),
                    c.dbgpt.as_ref(),
                ),
            ];
            rows.push(("floor: trivial Rust binary", "", Some(&c.floor)));
            for (name, note, p) in rows {
                let Some(p) = p else {
                    let _ = writeln!(m, "| {n} | {name} | not measured | – | – | – | – |");
                    continue;
                };
                let _ = writeln!(
                    m,
                    "| {n} | {name}{note} | {} | {} | {} | {} | {} |",
                    ts(&p.wall),
                    x(p.wall.median / base),
                    mib(p.rss.as_ref()),
                    p.faults.map_or("–".into(), |f| format!("{:.0}", f.median)),
                    p.ir.map_or("–".into(), |v| thousands(v as usize))
                );
            }
        }
        let _ = writeln!(m, "\nPack sets (`target/bench-packs/N`, generated):\n");
        let _ = writeln!(
            m,
            "| packs | files | bytes on disk | body bytes (largest) | reply served | `skillbake` binary |\n|---:|---:|---:|---:|---:|---:|"
        );
        for ((set, bin), a) in self.sets.iter().zip(self.binaries).zip(&self.agreement) {
            let bin_size = std::fs::metadata(bin).map_or(0, |md| md.len());
            let _ = writeln!(
                m,
                "| {} | {} | {} | {} ({}) | {} | {} |",
                thousands(set.packs),
                thousands(set.files),
                size(set.bytes as f64),
                size(set.body_bytes as f64),
                size(set.largest_body as f64),
                size(a.reply_bytes as f64),
                size(bin_size as f64)
            );
        }
        let _ = writeln!(m);
    }

    fn inside_tables(&self, m: &mut String) {
        let _ = writeln!(
            m,
            "## Inside each process\n\n\
             What the run-time loaders report about themselves (`runtime-loader --report`, \
             `dbgpt_bench.py report`): loading the folder, the first answer, then the cost of one \
             more `load_skill` once loaded (median of five batches of ≥ 20 ms). skillbake has no \
             load step; its per-call figures are the in-process benches below.\n"
        );
        let _ = writeln!(
            m,
            "| packs | system | imports | load all packs | first answer | hit | case-insensitive hit | miss |\n|---:|---|---|---|---|---|---|---|"
        );
        for (c, i) in self.cold.iter().zip(&self.inside) {
            let n = thousands(c.packs);
            let row = |name: &str, b: &Breakdown| {
                format!(
                    "| {n} | {name} | {} | {} | {} | {} | {} | {} |",
                    b.import_s.as_ref().map_or("–".into(), ts),
                    ts(&b.load_s),
                    ts(&b.first_s),
                    tns(&b.hit_ns),
                    tns(&b.ci_ns),
                    tns(&b.miss_ns)
                )
            };
            let _ = writeln!(m, "{}", row("Rust run-time loader", &i.loader));
            if let Some(d) = &i.dbgpt {
                let _ = writeln!(m, "{}", row("DB-GPT (Python)", d));
            }
        }
        let _ = writeln!(m);
    }

    fn check_table(&self, m: &mut String) {
        if self.checks.is_empty() {
            return;
        }
        let _ = writeln!(
            m,
            "## `check` throughput\n\n\
             `skillbake check DIR --quiet` (every rule, every file of every pack, all cores) \
             against the Agent Skills reference validator, `skills_ref.validate()` on every pack \
             in one Python process (its own CLI takes one pack per process, which would be \
             slower). Whole processes; the last column is skills-ref's validation loop alone.\n"
        );
        let _ = writeln!(
            m,
            "| packs | skillbake check | packs/s | skills-ref | packs/s | ratio | skills-ref loop alone |\n|---:|---|---:|---|---:|---:|---|"
        );
        for c in &self.checks {
            let ours = c.packs as f64 / c.ours.median;
            let (sr, sr_rate, ratio) = match c.skills_ref {
                Some(sr) => {
                    let rate = c.packs as f64 / sr.median;
                    (ts(&sr), format!("{rate:.0}"), x(ours / rate))
                }
                None => ("not measured".into(), "–".into(), "–".into()),
            };
            let _ = writeln!(
                m,
                "| {} | {} | {ours:.0} | {sr} | {sr_rate} | {ratio} | {} |",
                thousands(c.packs),
                ts(&c.ours),
                c.skills_ref_inside.as_ref().map_or("–".into(), ts)
            );
        }
        let _ = writeln!(m);
    }

    fn inproc_table(&self, m: &mut String) {
        let Some(rows) = &self.inproc else {
            let _ = writeln!(m, "## In process\n\nNot run (`--no-inproc`).\n");
            return;
        };
        let _ = writeln!(
            m,
            "## In process: `cargo bench --bench load`\n\n\
             divan, on a registry compiled from three packs whose bodies are 1, 10 and 100 KB \
             (`benches/fixture-registry/`). `hit_into_reused_buffer` is \
             `Registry::load_skill_into` appending to one `String` cleared between calls; the \
             floor is a bare `phf` lookup plus a copy of the same reply (`clone`, or `push_str` \
             into a reused buffer). Allocations are counted by divan's `AllocProfiler`, the \
             bench's global allocator.\n"
        );
        let _ = writeln!(
            m,
            "| bench | body | median | fastest – slowest | allocations per call | bytes allocated |\n|---|---:|---:|---|---:|---:|"
        );
        for r in rows {
            let (group, arg) = r.name.rsplit_once('/').unwrap_or((r.name.as_str(), ""));
            let (group, arg) = if arg.chars().all(|c| c.is_ascii_digit()) && !arg.is_empty() {
                (group, format!("{arg} KB"))
            } else {
                (r.name.as_str(), "–".into())
            };
            let _ = writeln!(
                m,
                "| `{group}` | {arg} | {} | {} – {} | {} | {} |",
                t(r.median_ns * 1e-9),
                t(r.fastest_ns * 1e-9),
                t(r.slowest_ns * 1e-9),
                r.allocs.map_or("0".into(), |a| format!("{a}")),
                r.alloc_bytes.clone().unwrap_or_else(|| "–".into())
            );
        }
        let _ = writeln!(m);
    }

    fn method(&self, m: &mut String) {
        let dbgpt = match &self.peers.dbgpt {
            Ok(_) => {
                "DB-GPT: its own registry, `dbgpt.agent.claude_skill` (`load_skills_from_dir`, \
                      as DB-GPT fills it), and its own `load_skill` tool, \
                      `dbgpt_app.openapi.api_v1.tools.skill_tools.make_load_skill`, called as the \
                      agent calls it; the whole process includes the interpreter's start and \
                      DB-GPT's imports, the breakdown separates them."
                    .to_string()
            }
            Err(e) => format!("DB-GPT: not measured. {e}"),
        };
        let skills_ref = match &self.peers.skills_ref {
            Ok(()) => {
                "skills-ref: `skills_ref.validate(pack)` for every folder holding a SKILL.md."
                    .to_string()
            }
            Err(e) => format!("skills-ref: not measured. {e}"),
        };
        let _ = writeln!(
            m,
            "## Method\n\n\
             * Packs: `pack-00000`… with spec-only frontmatter (`name`, `description`, `license`, \
             `metadata`), a Markdown body of 1–50 KB (log-uniform) with quotes, back-slashes, tabs \
             and non-ASCII text, `scripts/run.py` and `references/guide.md`. Every validator \
             accepts them with no diagnostic.\n\
             * skillbake: `skillbake load` built in release mode with the pack set compiled in \
             (`SKILLBAKE_SKILLS_DIR`), one binary and target folder per size.\n\
             * Rust run-time loader (`benches/runtime-loader`): walks the folder, reads every \
             SKILL.md, parses the frontmatter with `yaml_serde` into a struct, keeps a `HashMap`, \
             answers in DB-GPT's format; same release profile as skillbake.\n\
             * {dbgpt}\n\
             * {skills_ref}\n\
             * Floor (`benches/floor`): a Rust binary writing a static string, same profile.\n\
             * Wall times: {} runs per Rust process, taken in 5 interleaved rounds (floor, \
             skillbake, loader, floor, …) so that the load of this shared machine hits them alike, \
             and {} per Python process; warm-up runs first (files in the page cache: what a server \
             restart sees). Instructions: one run under callgrind, dynamic loading included; they \
             do not vary with the machine's load.\n",
            self.opts.runs, self.opts.slow_runs
        );
    }

    /// Cold start against number of packs, log–log, one line per system.
    fn svg(&self) -> String {
        let (w, h) = (760.0, 440.0);
        let (left, right, top, bottom) = (80.0, 230.0, 50.0, 60.0);
        let pw = w - left - right;
        let ph = h - top - bottom;
        let mut series: Vec<Series> = vec![
            (
                "skillbake load",
                "#d9480f",
                false,
                self.cold.iter().map(|c| (c.packs, c.ours.wall)).collect(),
            ),
            (
                "Rust run-time loader",
                "#1c7ed6",
                false,
                self.cold.iter().map(|c| (c.packs, c.loader.wall)).collect(),
            ),
        ];
        let dbgpt: Vec<(usize, Stat)> = self
            .cold
            .iter()
            .filter_map(|c| Some((c.packs, c.dbgpt.as_ref()?.wall)))
            .collect();
        if !dbgpt.is_empty() {
            series.push(("DB-GPT, whole process", "#2b8a3e", false, dbgpt));
            let inside: Vec<(usize, Stat)> = self
                .cold
                .iter()
                .zip(&self.inside)
                .filter_map(|(c, i)| {
                    let b = i.dbgpt.as_ref()?;
                    let v = b.load_s.median + b.first_s.median;
                    Some((
                        c.packs,
                        Stat {
                            median: v,
                            min: b.load_s.min + b.first_s.min,
                            max: b.load_s.max + b.first_s.max,
                            runs: b.load_s.runs,
                        },
                    ))
                })
                .collect();
            series.push(("DB-GPT, load + first answer", "#2b8a3e", true, inside));
        }
        series.push((
            "floor: trivial binary",
            "#868e96",
            true,
            self.cold.iter().map(|c| (c.packs, c.floor.wall)).collect(),
        ));

        let values: Vec<f64> = series
            .iter()
            .flat_map(|s| s.3.iter().flat_map(|(_, st)| [st.min, st.max]))
            .filter(|v| *v > 0.0)
            .collect();
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(0.0, f64::max);
        let (ylo, yhi) = if lo.is_finite() && hi > 0.0 {
            (
                lo.log10().floor(),
                hi.log10().ceil().max(lo.log10().floor() + 1.0),
            )
        } else {
            (-4.0, 1.0)
        };
        let xs: Vec<usize> = self.opts.sizes.clone();
        let (xlo, xhi) = (
            (*xs.first().unwrap_or(&10) as f64).log10().floor(),
            (*xs.last().unwrap_or(&10000) as f64).log10().ceil(),
        );
        let xhi = if xhi <= xlo { xlo + 1.0 } else { xhi };
        let px = |n: usize| left + ((n as f64).log10() - xlo) / (xhi - xlo) * pw;
        let py = |v: f64| top + (yhi - v.max(1e-12).log10()) / (yhi - ylo) * ph;

        let mut o = String::new();
        let _ = writeln!(
            o,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(o, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
        let _ = writeln!(
            o,
            r#"<text x="{}" y="24" font-size="15" font-weight="bold">Cold start: a fresh process answers one load_skill</text>"#,
            left
        );
        // Grid and axes.
        let mut d = ylo as i32;
        while d <= yhi as i32 {
            let y = py(10f64.powi(d));
            let _ = writeln!(
                o,
                r##"<line x1="{left}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e9ecef"/>"##,
                left + pw
            );
            let _ = writeln!(
                o,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                left - 6.0,
                y + 4.0,
                t(10f64.powi(d)).replace(".00", "").replace(".0 ", " ")
            );
            d += 1;
        }
        let mut e = xlo as i32;
        while e <= xhi as i32 {
            let n = 10usize.pow(e.max(0) as u32);
            let xv = px(n);
            let _ = writeln!(
                o,
                r##"<line x1="{xv:.1}" y1="{top}" x2="{xv:.1}" y2="{:.1}" stroke="#e9ecef"/>"##,
                top + ph
            );
            let _ = writeln!(
                o,
                r#"<text x="{xv:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                top + ph + 18.0,
                thousands(n)
            );
            e += 1;
        }
        let _ = writeln!(
            o,
            r##"<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#495057"/>"##
        );
        let _ = writeln!(
            o,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">skill packs (log scale)</text>"#,
            left + pw / 2.0,
            h - 18.0
        );
        let _ = writeln!(
            o,
            r#"<text transform="translate(20 {:.1}) rotate(-90)" text-anchor="middle">wall time, median; bars: min–max (log scale)</text>"#,
            top + ph / 2.0
        );
        // Series.
        for (i, (label, color, dashed, points)) in series.iter().enumerate() {
            let dash = if *dashed {
                r#" stroke-dasharray="6 4""#
            } else {
                ""
            };
            let pts: Vec<String> = points
                .iter()
                .map(|(n, st)| format!("{:.1},{:.1}", px(*n), py(st.median)))
                .collect();
            let _ = writeln!(
                o,
                r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"{dash}/>"#,
                pts.join(" ")
            );
            for (n, st) in points {
                let xv = px(*n);
                let _ = writeln!(
                    o,
                    r#"<line x1="{xv:.1}" y1="{:.1}" x2="{xv:.1}" y2="{:.1}" stroke="{color}"/>"#,
                    py(st.min),
                    py(st.max)
                );
                let _ = writeln!(
                    o,
                    r#"<circle cx="{xv:.1}" cy="{:.1}" r="3.5" fill="{color}"><title>{label}, {} packs: {}</title></circle>"#,
                    py(st.median),
                    thousands(*n),
                    ts(st)
                );
            }
            let ly = top + 10.0 + 22.0 * i as f64;
            let lx = left + pw + 16.0;
            let _ = writeln!(
                o,
                r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{color}" stroke-width="2"{dash}/>"#,
                lx + 24.0
            );
            let _ = writeln!(
                o,
                r#"<text x="{:.1}" y="{:.1}">{label}</text>"#,
                lx + 30.0,
                ly + 4.0
            );
        }
        let _ = writeln!(o, "</svg>");
        o
    }
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
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("/x/y-1"), "/x/y-1");
    }
}
