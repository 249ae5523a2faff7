//! `cargo xtask bench skills [--sizes 1000,10000] [--requests N] [--rounds R]`: the MCP Skills
//! extension's methods served by `skillbake serve` (stdio) against a server built on the
//! official TypeScript MCP SDK (`@modelcontextprotocol/server`, its own `ext/skills` catalog
//! loaded from disk, `xtask/skills-bench/server.mjs`) serving the same generated packs, written
//! to `BENCHMARKS.md` between its `bench-skills:start`/`bench-skills:end` markers.
//!
//! For every size: the packs of the main bench (`target/bench-packs/N`), a release `skillbake`
//! with them compiled in, and one client, the official MCP client SDK
//! (`@modelcontextprotocol/client`, `xtask/skills-bench/bench.mjs`), that starts a server, lists
//! every skill once, then times `skills/list` (the pages in turn), `skills/get` and
//! `resources/read` one request at a time, and whole walks of the listing (every page in turn).
//! Rounds run both servers in turn, so a change in the machine's load hits them alike; reported
//! are the median and 99th percentile over every request of every round, and the start-up time
//! (spawn to the first page, median over the rounds). Then what the build-time digests cost in
//! build time and size ([`super::digests`]). Without Node.js and npm the bench says so and
//! changes nothing.

use super::builds::{build_skillbake, Tree};
use super::digests;
use super::machine::{load_average, load_note};
use super::packs::generate_packs;
use super::process::write_section;
use super::report::t;
use super::timing::Stat;
use crate::mcp_check::{npm_install, run_with_timeout, target_dir};
use crate::root;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const START: &str = "<!-- bench-skills:start -->\n";
const END: &str = "<!-- bench-skills:end -->";
const USAGE: &str =
    "usage: cargo xtask bench skills [--sizes 1000,10000] [--requests N] [--rounds R]";
/// The SDK release both npm packages are pinned to (the client of `mcp-check` too).
const SDK_VERSION: &str = "2.4.0";
const SERVER_PACKAGE: &str = "@modelcontextprotocol/server";
const CLIENT_PACKAGE: &str = "@modelcontextprotocol/client";
/// Longest one client run may take (the SDK server hashes every file of 10,000 packs first).
const RUN_TIMEOUT: Duration = Duration::from_secs(600);
/// The methods timed, in the order of the table (`skills/list walk`: every page in turn).
const METHODS: [&str; 4] = [
    "skills/list",
    "skills/list walk",
    "skills/get",
    "resources/read",
];

struct Options {
    sizes: Vec<usize>,
    requests: usize,
    rounds: usize,
}

fn options(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        sizes: vec![1000, 10000],
        requests: 500,
        rounds: 3,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let value = it.next().ok_or(format!("{a} needs a value ({USAGE})"))?;
        match a.as_str() {
            "--sizes" => {
                o.sizes = value
                    .split(',')
                    .map(|s| s.trim().parse::<usize>().ok().filter(|&n| n > 5))
                    .collect::<Option<Vec<_>>>()
                    .ok_or("--sizes takes numbers above 5, comma-separated")?;
                o.sizes.sort_unstable();
                o.sizes.dedup();
            }
            "--requests" | "--rounds" => {
                let n = value
                    .parse()
                    .ok()
                    .filter(|&n: &usize| n > 0)
                    .ok_or(format!("{a} needs a positive number ({USAGE})"))?;
                if a == "--requests" {
                    o.requests = n;
                } else {
                    o.rounds = n;
                }
            }
            other => return Err(format!("unexpected argument `{other}` ({USAGE})")),
        }
    }
    Ok(o)
}

/// What one client run measured.
struct Run {
    startup_us: f64,
    skills: usize,
    pages: usize,
    latencies: Vec<Vec<f64>>,
}

/// Every run of one server on one pack set.
#[derive(Default)]
struct Runs {
    startup_us: Vec<f64>,
    skills: usize,
    pages: usize,
    latencies: Vec<Vec<f64>>,
}

impl Runs {
    fn add(&mut self, run: Run) {
        self.startup_us.push(run.startup_us);
        self.skills = run.skills;
        self.pages = run.pages;
        self.latencies.resize(METHODS.len(), Vec::new());
        for (all, one) in self.latencies.iter_mut().zip(run.latencies) {
            all.extend(one);
        }
    }

    /// (p50, p99) in seconds of method `m`.
    fn percentiles(&mut self, m: usize) -> (f64, f64) {
        let v = &mut self.latencies[m];
        (percentile(v, 0.5) * 1e-6, percentile(v, 0.99) * 1e-6)
    }
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v.get(i).copied().unwrap_or(f64::NAN)
}

/// Whether `node` and `npm` answer; the reason when not.
fn node_missing() -> Option<String> {
    for tool in ["node", crate::mcp_check::npm()] {
        let ok = Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            return Some(format!("`{tool} --version` did not answer"));
        }
    }
    None
}

/// Installs both SDK packages and copies the scripts into `target/skills-bench`.
fn install(root: &Path) -> Result<PathBuf, String> {
    let dir = target_dir(root).join("skills-bench");
    let manifest =
        "{\"name\": \"skillbake-skills-bench\", \"private\": true, \"type\": \"module\"}\n";
    npm_install(&dir, SERVER_PACKAGE, SDK_VERSION, manifest)?;
    npm_install(&dir, CLIENT_PACKAGE, SDK_VERSION, manifest)?;
    for script in ["bench.mjs", "server.mjs"] {
        let source = root.join("xtask/skills-bench").join(script);
        std::fs::copy(&source, dir.join(script))
            .map_err(|e| format!("{}: {e}", source.display()))?;
    }
    Ok(dir)
}

/// One client run against the server started by `server`.
fn run_client(dir: &Path, requests: usize, server: &[String]) -> Result<Run, String> {
    let mut cmd = Command::new("node");
    cmd.current_dir(dir)
        .arg("bench.mjs")
        .arg(requests.to_string())
        .args(server);
    let what = format!("node bench.mjs {requests} {}", server.join(" "));
    let out = run_with_timeout(cmd, RUN_TIMEOUT).map_err(|e| format!("{what}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim_end()
        ));
    }
    let v: Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("{what}: {e}"))?;
    let number = |v: &Value| v.as_f64().ok_or(format!("{what}: not a number: {v}"));
    let latencies = METHODS
        .iter()
        .map(|m| {
            v["latencies"][m]
                .as_array()
                .ok_or(format!("{what}: no latencies of {m}"))?
                .iter()
                .map(number)
                .collect::<Result<Vec<f64>, String>>()
        })
        .collect::<Result<_, _>>()?;
    Ok(Run {
        startup_us: number(&v["startupUs"])?,
        skills: v["skills"].as_u64().unwrap_or(0) as usize,
        pages: v["pages"].as_u64().unwrap_or(0) as usize,
        latencies,
    })
}

/// Both servers on one pack set, `rounds` times in turn.
fn measure(
    dir: &Path,
    opts: &Options,
    packs: usize,
    servers: &[Vec<String>; 2],
) -> Result<[Runs; 2], String> {
    let mut runs: [Runs; 2] = Default::default();
    for r in 0..opts.rounds {
        for (runs, server) in runs.iter_mut().zip(servers) {
            let run = run_client(dir, opts.requests, server)?;
            if run.skills != packs {
                return Err(format!(
                    "`{}` listed {} skills, not the {packs} generated",
                    server.join(" "),
                    run.skills
                ));
            }
            eprintln!(
                "round {}: {} packs: `{}`: started in {}",
                r + 1,
                packs,
                server.join(" "),
                t(run.startup_us * 1e-6)
            );
            runs.add(run);
        }
    }
    Ok(runs)
}

pub(super) fn run(args: &[String]) -> Result<(), String> {
    let opts = options(args)?;
    if let Some(why) = node_missing() {
        eprintln!("skipped: the SDK peer needs Node.js and npm ({why}); BENCHMARKS.md unchanged");
        return Ok(());
    }
    let root = root();
    let load_start = load_average();
    let dir = install(&root)?;
    let tree = Tree::current(&root);
    let mut rows = Vec::new();
    let mut embedded = Vec::new();
    let packs = root.join("target/bench-packs");
    for &n in &opts.sizes {
        eprintln!("\n==> packs: {n} into target/bench-packs/{n}");
        let set = generate_packs(&packs, n)?;
        let built = build_skillbake(&root, &tree, &set)?;
        embedded.push(digests::embedded(&tree, &built)?);
        let servers = [
            vec![built.bin.display().to_string(), "serve".to_string()],
            vec![
                "node".to_string(),
                "server.mjs".to_string(),
                set.dir.display().to_string(),
            ],
        ];
        rows.push((n, measure(&dir, &opts, n, &servers)?));
    }
    let cost = digests::build_time(&root, &packs, &opts.sizes)?;
    let machine = load_note(load_start, load_average());
    let mut section = table(&opts, &tree, &machine, &mut rows)?;
    section.push_str(&digests::table(&opts.sizes, &cost, &embedded)?);
    write_section(
        &root.join("BENCHMARKS.md"),
        START,
        END,
        "<!-- bench-http:end -->",
        &section,
    )?;
    eprintln!("\nwrote the MCP Skills section of BENCHMARKS.md");
    Ok(())
}

/// The section of `BENCHMARKS.md`.
fn table(
    opts: &Options,
    tree: &Tree,
    machine: &str,
    rows: &mut [(usize, [Runs; 2])],
) -> Result<String, String> {
    let sizes: Vec<String> = opts.sizes.iter().map(usize::to_string).collect();
    let mut m = String::new();
    m.push_str(
        "## The MCP Skills extension: `skillbake serve` against the TypeScript SDK's server\n\n",
    );
    m.push_str(&format!(
        "Measured by `cargo xtask bench skills --sizes {} --requests {} --rounds {}` ({}): the generated packs of the main bench, served over stdio by a release `skillbake serve` with them compiled in and by a server built on the official TypeScript MCP SDK (`{SERVER_PACKAGE}` {SDK_VERSION}: its own skills catalog, `loadSkills(DIR)` attached to an `McpServer`, `xtask/skills-bench/server.mjs`), which reads and hashes every file at start and reads each file from disk, checked against its digest, on every `resources/read`. One client, the official client SDK (`{CLIENT_PACKAGE}` {SDK_VERSION}, `xtask/skills-bench/bench.mjs`), sends the same requests in the same order to both, one at a time: {} of each method after 50 untimed, `skills/list` cycling through the pages (100 skills a page on both), `skills/get` and `resources/read` over the skills in a fixed scattered order (`resources/read` over each skill's files in turn), then whole walks of the listing (every page in turn, as a host builds its catalog; as many walks as that number of requests makes pages, at least 10). {} rounds run both servers in turn; latencies are the median and 99th percentile over every request of every round, as the client sees them (its own JSON parsing included, the same for both). Start-up is spawn to the first `skills/list` page, median over the rounds. Ratios are the SDK server's figure over skillbake's. The machine: {machine}; both servers ran in turn under the same load, so the ratios are the figures to compare.\n\n",
        sizes.join(","),
        opts.requests,
        opts.rounds,
        tree.rev,
        opts.requests,
        opts.rounds
    ));
    m.push_str("| packs | method | skillbake p50 | skillbake p99 | SDK server p50 | SDK server p99 | p50 ratio | p99 ratio |\n|---:|---|---:|---:|---:|---:|---:|---:|\n");
    for (n, [ours, sdk]) in rows.iter_mut() {
        for (i, method) in METHODS.iter().enumerate() {
            let (a50, a99) = ours.percentiles(i);
            let (b50, b99) = sdk.percentiles(i);
            let label = match method.strip_suffix(" walk") {
                Some(m) => format!("`{m}`, all {} pages", ours.pages),
                None => format!("`{method}`"),
            };
            m.push_str(&format!(
                "| {n} | {label} | {} | {} | {} | {} | {:.1}× | {:.1}× |\n",
                t(a50),
                t(a99),
                t(b50),
                t(b99),
                b50 / a50,
                b99 / a99
            ));
        }
        let a = Stat::of(ours.startup_us.clone()).ok_or("no start-up measured")?;
        let b = Stat::of(sdk.startup_us.clone()).ok_or("no start-up measured")?;
        m.push_str(&format!(
            "| {n} | start-up | {} | | {} | | {:.1}× | |\n",
            t(a.median * 1e-6),
            t(b.median * 1e-6),
            b.median / a.median
        ));
        if ours.pages != sdk.pages {
            return Err(format!(
                "{n} packs: skillbake lists {} pages, the SDK server {}",
                ours.pages, sdk.pages
            ));
        }
    }
    m.push('\n');
    Ok(m)
}
