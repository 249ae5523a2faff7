//! The report: `BENCHMARKS.md`'s generated section.

use super::args::Options;
use super::build_cost::ScriptCost;
use super::builds::{Built, Tree};
use super::divan::DivanRow;
use super::measure::{Agreement, Breakdown, CheckRow, Cold, Inside};
use super::packs::PackSet;
use super::peers::Peers;
use super::timing::Stat;
use super::{PROBE, PROBE_PATH};
use std::fmt::Write as _;
use std::path::PathBuf;

/// One line of the plot: label, colour, dashed, (packs, wall time) points.
pub(super) type Series<'a> = (&'a str, &'a str, bool, Vec<(usize, Stat)>);

pub(super) struct Report<'a> {
    pub(super) opts: &'a Options,
    pub(super) machine: Vec<(String, String)>,
    pub(super) sets: &'a [PackSet],
    pub(super) binaries: &'a [PathBuf],
    pub(super) builds: &'a [Built],
    pub(super) before_builds: &'a [Built],
    pub(super) scripts: &'a [(ScriptCost, Option<ScriptCost>)],
    pub(super) trees: (&'a Tree, Option<&'a Tree>),
    pub(super) agreement: Vec<Agreement>,
    pub(super) cold: Vec<Cold>,
    pub(super) inside: Vec<Inside>,
    pub(super) checks: Vec<CheckRow>,
    pub(super) inproc: Option<Vec<DivanRow>>,
    /// `cargo bench --bench load` of the `--before` revision, in the same run, or why it could
    /// not be run.
    pub(super) before_inproc: Option<Result<Vec<DivanRow>, String>>,
    pub(super) peers: &'a Peers,
}

pub(super) fn t(sec: f64) -> String {
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
pub(super) fn ts(st: &Stat) -> String {
    format!("{} ({}–{})", t(st.median), t(st.min), t(st.max))
}

/// The same for nanoseconds.
pub(super) fn tns(st: &Stat) -> String {
    ts(&Stat {
        median: st.median * 1e-9,
        min: st.min * 1e-9,
        max: st.max * 1e-9,
        runs: st.runs,
    })
}

pub(super) fn mib(kib: Option<&Stat>) -> String {
    kib.map_or("–".into(), |k| format!("{:.1} MiB", k.median / 1024.0))
}

pub(super) fn x(r: f64) -> String {
    if r >= 100.0 {
        format!("{r:.0}×")
    } else if r >= 10.0 {
        format!("{r:.1}×")
    } else {
        format!("{r:.2}×")
    }
}

pub(super) fn thousands(n: usize) -> String {
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

pub(super) fn size(bytes: f64) -> String {
    if bytes >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", bytes / 1024.0 / 1024.0)
    } else if bytes >= 1024.0 {
        format!("{:.1} KiB", bytes / 1024.0)
    } else {
        format!("{bytes:.0} B")
    }
}

pub(super) fn verdict(met: bool) -> &'static str {
    if met {
        "**met**"
    } else {
        "**missed**"
    }
}

impl Report<'_> {
    pub(super) fn divan(&self, name: &str) -> Option<&DivanRow> {
        self.inproc.as_ref()?.iter().find(|r| r.name == name)
    }

    /// The `--before` revision's hit of a `kb` KB body against its own floor, measured in the
    /// same run, as a clause of the target's row (empty without `--before`).
    fn before_hit(&self, kb: u32) -> String {
        let rows = match &self.before_inproc {
            None => return String::new(),
            Some(Err(e)) => return format!("; before: not measured ({e})"),
            Some(Ok(rows)) => rows,
        };
        let row = |name: String| rows.iter().find(|r| r.name == name);
        let ratio = |hit: &str, floor: &str| {
            let (h, f) = (row(format!("{hit}/{kb}"))?, row(format!("{floor}/{kb}"))?);
            Some(format!(
                "{} vs {} ({})",
                t(h.median_ns * 1e-9),
                t(f.median_ns * 1e-9),
                x(h.median_ns / f.median_ns)
            ))
        };
        match (
            ratio("hit", "floor_lookup_and_copy"),
            ratio("hit_into_reused_buffer", "floor_lookup_and_copy_into"),
        ) {
            (Some(a), Some(b)) => format!("; before: {a}, into a reused buffer {b}"),
            _ => "; before: not in its bench".into(),
        }
    }

    pub(super) fn markdown(&self) -> String {
        let mut m = String::new();
        let sizes: Vec<String> = self.opts.sizes.iter().map(|n| n.to_string()).collect();
        let _ = writeln!(
            m,
            "Measured by `cargo xtask bench` (every figure down to the Analysis comes from one run \
             of it; medians of several runs with min–max beside them; ratios are ratios of medians).\n"
        );
        let _ = writeln!(m, "## Reproduce\n");
        // The command as this run was given, so that it can be run again as it was.
        let corpus = std::env::var_os("SKILLBAKE_BENCH_CORPUS")
            .filter(|v| !v.is_empty())
            .map_or(String::new(), |v| {
                let name = std::path::Path::new(&v)
                    .file_name()
                    .map_or_else(|| "CORPUS".into(), |n| n.to_string_lossy().into_owned());
                format!("SKILLBAKE_BENCH_CORPUS={name} ")
            });
        let mut flags = String::new();
        for (on, flag) in [
            (!self.opts.peers, " --no-peers"),
            (!self.opts.inproc, " --no-inproc"),
        ] {
            if on {
                flags.push_str(flag);
            }
        }
        if let Some(rev) = &self.opts.before {
            flags.push_str(&format!(" --before {rev}"));
        }
        let _ = writeln!(
            m,
            "```sh\napt-get install hyperfine time valgrind   # optional: better timing, peak RSS, instruction counts\n{corpus}cargo xtask bench --sizes {} --runs {} --slow-runs {}{flags}\n```\n",
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
        self.build_tables(&mut m);
        self.cold_tables(&mut m);
        self.inside_tables(&mut m);
        self.check_table(&mut m);
        self.inproc_table(&mut m);
        self.method(&mut m);
        m
    }

    pub(super) fn targets(&self, m: &mut String) {
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
                    let bound = if kb == 1 { 1.3 } else { 2.0 };
                    let _ = writeln!(
                        m,
                        "| `load_skill` hit, {kb} KB body: within {bound}× of lookup + copy | {} vs {} ({}); into a reused buffer {} vs {} ({}){} | {} |",
                        t(h.median_ns * 1e-9),
                        t(f.median_ns * 1e-9),
                        x(r),
                        t(i.median_ns * 1e-9),
                        t(fi.median_ns * 1e-9),
                        x(ri),
                        self.before_hit(kb),
                        verdict(r <= bound && ri <= bound)
                    );
                }
            }
        }
        self.size_targets(m);
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
                "| cold start, {} packs: within 1.2× of the trivial binary | {} vs {} ({}){ir} | {} |",
                thousands(c.packs),
                t(c.ours.wall.median),
                t(c.floor.wall.median),
                x(r),
                verdict(r <= 1.2)
            );
        }
        if let (Some(a), Some(b)) = (smallest, largest) {
            if a.packs != b.packs {
                let r = b.ours.wall.median / a.ours.wall.median;
                let (ir, ir_flat) = match (a.ours.ir, b.ours.ir) {
                    (Some(ia), Some(ib)) => {
                        let growth = ib as f64 / ia as f64 - 1.0;
                        let per_pack = (ib as f64 - ia as f64) / (b.packs - a.packs) as f64;
                        (
                            format!(
                                "instructions {} → {} ({:+.2}%, {per_pack:.2} per added pack)",
                                thousands(ia as usize),
                                thousands(ib as usize),
                                growth * 100.0
                            ),
                            growth.abs() <= 0.02,
                        )
                    }
                    _ => ("instructions not measured".into(), false),
                };
                let faults = match (a.ours.faults, b.ours.faults) {
                    (Some(fa), Some(fb)) => {
                        format!("; minor page faults {:.0} → {:.0}", fa.median, fb.median)
                    }
                    _ => String::new(),
                };
                let _ = writeln!(
                    m,
                    "| cold start flat from {} to {} packs: instructions within 2% | {ir}; wall {} → {} ({}){faults} | {} |",
                    thousands(a.packs),
                    thousands(b.packs),
                    t(a.ours.wall.median),
                    t(b.ours.wall.median),
                    x(r),
                    verdict(ir_flat)
                );
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
            let ahead_wall = self
                .cold
                .iter()
                .all(|c| c.loader.wall.median > c.ours.wall.median);
            let ahead_ir = self
                .cold
                .iter()
                .all(|c| matches!((c.loader.ir, c.ours.ir), (Some(l), Some(o)) if l > o));
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
            let _ = writeln!(
                m,
                "| ahead of the Rust run-time loader at every size, wall time and instructions (cold start) | loader / skillbake, wall: {}; instructions: {} | {} |",
                figures.join(", "),
                if irs.is_empty() { "not measured".into() } else { irs.join(", ") },
                verdict(ahead_wall && ahead_ir)
            );
        }
        self.build_targets(m);
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

    pub(super) fn cold_tables(&self, m: &mut String) {
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
                ("skillbake `cat` (the pack's script)", "", Some(&c.cat)),
            ];
            if c.before.is_some() {
                rows.push(("skillbake `load`, before", "", c.before.as_ref()));
            }
            rows.extend([
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
            ]);
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

    pub(super) fn inside_tables(&self, m: &mut String) {
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

    pub(super) fn check_table(&self, m: &mut String) {
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

    pub(super) fn inproc_table(&self, m: &mut String) {
        let Some(rows) = &self.inproc else {
            let _ = writeln!(m, "## In process\n\nNot run (`--no-inproc`).\n");
            return;
        };
        let _ = writeln!(
            m,
            "## In process: `cargo bench --bench load`\n\n\
             divan, on a registry compiled from three packs whose bodies are 1, 10 and 100 KB \
             (`crates/skillbake/benches/fixture-registry/`). `hit_into_reused_buffer` is \
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

    pub(super) fn method(&self, m: &mut String) {
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
}
