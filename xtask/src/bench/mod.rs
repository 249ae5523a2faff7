//! `cargo xtask bench [--sizes 10,1000,10000] [--runs N] [--slow-runs N] [--no-peers]
//! [--no-inproc] [--fixture] [--before REV]`: skillbake's speed and build cost against the
//! run-time loaders people use today (and, with `--before`, against an earlier revision of
//! skillbake), every system measured side by side in one run on the same generated packs, written
//! to `BENCHMARKS.md` (between its `bench:start`/`bench:end` markers; the analysis after them is
//! kept) with a plot in `benches/cold-start.svg`.
//!
//! Steps, in order:
//!
//! 1. regenerates the in-process fixture `crates/skillbake/benches/fixture-registry/` (three packs whose bodies are
//!    1, 10 and 100 KB, compiled by `skillbake-build`), which `benches/load.rs` includes
//!    (`--fixture` stops here);
//! 2. generates 10 / 1,000 / 10,000 packs into `target/bench-packs/N` (bodies of 1–50 KB,
//!    log-uniform, a script and a reference each; deterministic, reused while the generator is
//!    unchanged);
//! 3. builds in release mode under `target/bench-build/`: `skillbake` with each pack set compiled
//!    in (`SKILLBAKE_SKILLS_DIR`; one target folder per source tree, rebuilt from the build script
//!    on for every set and measured: rustc's and the build script's peak memory, binary size),
//!    the floors (`benches/floor`: a binary printing a static string, and `tree`, a walk that
//!    reads or stamps every file of a pack set and does nothing else) and the Rust run-time loader
//!    (`benches/runtime-loader`); then runs the build script alone, full, with nothing changed and
//!    after editing one pack (the incremental build), comparing its output with a full build,
//!    with the floor under the incremental build (`tree stat`) in the same rounds;
//! 4. installs the Python peers into `target/bench-venv` (pinned in
//!    `benches/peers/requirements.txt`): DB-GPT's skill registry and `load_skill` tool, and the
//!    Agent Skills reference validator `skills-ref`; a peer that does not install or run is
//!    reported as such, never replaced;
//! 5. checks that every loader answers the same bytes, then measures cold start (wall time with
//!    hyperfine when it is installed, else its own loop; peak RSS with `/usr/bin/time -v`;
//!    instructions with callgrind when valgrind is installed), each loader's own breakdown (load,
//!    first answer, per lookup), `check` throughput, and `cargo bench --bench load`;
//! 6. writes `BENCHMARKS.md` and `benches/cold-start.svg`;
//! 7. builds `skillbake` with its bundled packs (of this tree and of the `--before` revision, in
//!    their target folders) and times what users wait on with them: with
//!    `SKILLBAKE_BENCH_CORPUS` naming a corpus of real packs, `check` on it against the
//!    reference validators ([`corpus`]; `cargo xtask bench check --corpus ...` runs that step
//!    alone), then `skillbake run` against the script alone ([`exec`]); each writes its own
//!    section, with the `--before` build in the same rounds.
//!
//! With `--before`, the in-process `load_skill` figures of step 5 are taken from both trees too.
//!
//! `cargo xtask bench packs 1000,10000` generates pack sets only (step 2), for measuring by hand.
//! `cargo xtask bench exec` measures running a skill instead (see [`exec`]).
//! `cargo xtask bench http` measures serving many agents over HTTP (see [`http`]).
//! `cargo xtask bench skills` measures the MCP Skills extension's methods against the
//! TypeScript SDK's server (see [`skills`]).

mod args;
mod build_cost;
mod builds;
mod corpus;
mod digests;
mod divan;
mod exec;
mod http;
mod machine;
mod measure;
mod packs;
mod peers;
mod process;
mod report;
mod report_build;
mod skills;
mod svg;
mod timing;

use crate::root;
use args::options;
use build_cost::{measure_script, ScriptCost};
use builds::{build_aux, build_bundled, build_skillbake, load_bench, Built, Tree};
use divan::{divan_bench, inproc_benches};
use machine::machine;
use measure::{measure_check, measure_cold, measure_inside, same_answers};
use packs::{fixture, generate_packs};
use peers::{ensure_venv, Peers};
use process::{mkdir, s, write_if_changed};
use report::Report;
use timing::Timer;

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
/// The fixture pack with an asset stored compressed, and the asset's path.
const COMPRESSED: (&str, &str) = ("with-assets", "assets/table.csv");
const START: &str = "<!-- bench:start -->\n";
const END: &str = "<!-- bench:end -->";

/// `bench packs N,M,...`: step 2 alone, each set's folder printed.
fn packs_only(args: &[String]) -> Result<(), String> {
    let sizes = options(&["--sizes".to_string(), args.join(",")])?.sizes;
    let base = root().join("target/bench-packs");
    for n in sizes {
        let set = generate_packs(&base, n)?;
        println!("{}", set.dir.display());
    }
    Ok(())
}

pub(crate) fn run(args: &[String]) -> Result<(), String> {
    if args.first().map(String::as_str) == Some("exec") {
        return exec::run(args.get(1..).unwrap_or(&[]));
    }
    if args.first().map(String::as_str) == Some("check") {
        return corpus::run(args.get(1..).unwrap_or(&[]));
    }
    if args.first().map(String::as_str) == Some("http") {
        return http::run(args.get(1..).unwrap_or(&[]));
    }
    if args.first().map(String::as_str) == Some("skills") {
        return skills::run(args.get(1..).unwrap_or(&[]));
    }
    if args.first().map(String::as_str) == Some("packs") {
        return packs_only(args.get(1..).unwrap_or(&[]));
    }
    let opts = options(args)?;
    let root = root();
    if fixture(&root)? {
        eprintln!(
            "crates/skillbake/benches/fixture-registry/ was regenerated: commit it with the code that changed it"
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
    let walker = build_aux(&root, "floor", "tree")?;
    let loader = build_aux(&root, "runtime-loader", "runtime-loader")?;
    let after = Tree::current(&root);
    let before = match &opts.before {
        Some(rev) => Some(Tree::export(&root, rev)?),
        None => None,
    };
    let mut builds: Vec<Built> = Vec::new();
    let mut before_builds: Vec<Built> = Vec::new();
    let mut scripts: Vec<(ScriptCost, Option<ScriptCost>)> = Vec::new();
    for set in &sets {
        let runs = if set.packs >= 1000 { 3 } else { 5 };
        let built = build_skillbake(&root, &after, set)?;
        let script = measure_script(&scratch, &after, set, runs, Some(&walker))?;
        let old = match &before {
            Some(tree) => {
                before_builds.push(build_skillbake(&root, tree, set)?);
                Some(measure_script(&scratch, tree, set, runs, None)?)
            }
            None => None,
        };
        builds.push(built);
        scripts.push((script, old));
    }
    let binaries: Vec<std::path::PathBuf> = builds.iter().map(|b| b.bin.clone()).collect();

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
    for (i, (set, bin)) in sets.iter().zip(&binaries).enumerate() {
        let old = before_builds.get(i).map(|b| b.bin.as_path());
        cold.push(measure_cold(
            &timer, &opts, set, bin, old, &floor, &loader, &peers,
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
    // The earlier revision's figures are a comparison, not the run's subject: when they cannot
    // be taken, the report says why instead of losing the run.
    let before_inproc = match (&before, opts.inproc) {
        (Some(tree), true) => Some(load_bench(&root, tree).and_then(|cmd| {
            divan_bench(
                &format!("cargo bench --bench load (before, {})", tree.rev),
                cmd,
            )
        })),
        _ => None,
    };
    if let Some(Err(e)) = &before_inproc {
        eprintln!("xtask: the before revision's in-process figures were not taken: {e}");
    }

    let machine = machine(&timer, &peers);
    let report = Report {
        opts: &opts,
        machine,
        sets: &sets,
        binaries: &binaries,
        builds: &builds,
        before_builds: &before_builds,
        scripts: &scripts,
        trees: (&after, before.as_ref()),
        agreement,
        cold,
        inside,
        checks,
        inproc,
        before_inproc,
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

    // What users wait on with the bundled packs: `check` over the real corpus and `run`, this
    // tree against the `--before` revision in the same rounds.
    let ours = build_bundled(&root, &after)?;
    let theirs = match &before {
        Some(tree) => Some(build_bundled(&root, tree)?),
        None => None,
    };
    corpus::run_from_env(&ours, theirs.as_deref())?;
    let mut exec_args = vec!["--bin".to_string(), s(&ours)];
    if let Some(b) = &theirs {
        exec_args.extend(["--before".to_string(), s(b)]);
    }
    if !opts.peers {
        exec_args.push("--no-peers".into());
    }
    if !opts.inproc {
        exec_args.push("--no-inproc".into());
    }
    exec::run(&exec_args)
}
