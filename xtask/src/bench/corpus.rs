//! `cargo xtask bench check [--corpus LIST|DIR] [--runs N] [--bin PATH] [--before-bin PATH]`:
//! `skillbake check` over a corpus of real packs against the two reference validators, in one
//! run, in CPU time (user + system, from `/usr/bin/time`) and wall time, written to
//! `BENCHMARKS.md` between its `bench-check:start`/`bench-check:end` markers.
//!
//! The corpus is a file naming one pack folder a line, or a folder whose packs (folders holding
//! a `SKILL.md`) are all taken; it comes from `--corpus` or `SKILLBAKE_BENCH_CORPUS`. Without
//! one (or without `/usr/bin/time`) the step says so and is skipped: nothing is written.
//!
//! The peers, each validating every pack of the list in one process (their own command lines
//! take one pack per process, which would be slower): the npm `skills-ref` 0.1.5
//! (`benches/peers/skills_ref_npm.mjs`, installed into `target/bench-npm`) and the PyPI
//! reference validator `skills-ref` 0.1.1 (`benches/peers/skills_ref_list.py`, in the
//! virtualenv `target/bench-skills-ref`). A peer that does not install or run is reported as
//! such, never replaced. Ours is `skillbake check --profile agentskills --quiet` (every rule on,
//! every file of every pack read) with every pack folder as a path, built in release mode unless
//! `--bin` names a binary; `--before-bin` adds an earlier build in the same rounds.

use super::process::{display, mkdir, s, write, write_section};
use super::timing::Stat;
use crate::{root, run as run_step};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const START: &str = "<!-- bench-check:start -->\n";
const END: &str = "<!-- bench-check:end -->";
const USAGE: &str = "usage: cargo xtask bench check [--corpus LIST|DIR] [--runs N] [--bin PATH] [--before-bin PATH]";
/// The npm validator, as pinned.
const NPM_PEER: (&str, &str) = ("skills-ref", "0.1.5");
/// The PyPI reference validator, as pinned.
const PYPI_PEER: &str = "skills-ref==0.1.1";
/// The goal: our CPU time at most a tenth of each peer's.
const GOAL: f64 = 10.0;

struct Options {
    corpus: Option<PathBuf>,
    runs: usize,
    bin: Option<PathBuf>,
    before_bin: Option<PathBuf>,
}

fn options(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        corpus: std::env::var_os("SKILLBAKE_BENCH_CORPUS")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
        runs: 5,
        bin: None,
        before_bin: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or(format!("{a} needs a value ({USAGE})"))
        };
        match a.as_str() {
            "--corpus" => o.corpus = Some(PathBuf::from(value()?)),
            "--bin" => o.bin = Some(PathBuf::from(value()?)),
            "--before-bin" => o.before_bin = Some(PathBuf::from(value()?)),
            "--runs" => {
                o.runs = value()?
                    .parse()
                    .ok()
                    .filter(|&n: &usize| n > 0)
                    .ok_or(format!("--runs needs a positive number ({USAGE})"))?
            }
            s => return Err(format!("unexpected argument `{s}` ({USAGE})")),
        }
    }
    Ok(o)
}

/// `cargo xtask bench check ...`.
pub(super) fn run(args: &[String]) -> Result<(), String> {
    let opts = options(args)?;
    let Some(corpus) = opts.corpus.clone() else {
        eprintln!("bench check: skipped, no corpus (give `--corpus LIST|DIR` or set SKILLBAKE_BENCH_CORPUS)");
        return Ok(());
    };
    measure(&root(), &corpus, &opts)
}

/// The corpus step of the whole `cargo xtask bench`, when `SKILLBAKE_BENCH_CORPUS` names one.
pub(super) fn run_from_env() -> Result<(), String> {
    run(&[])
}

fn measure(root: &Path, corpus: &Path, opts: &Options) -> Result<(), String> {
    if !corpus.exists() {
        eprintln!(
            "bench check: skipped, the corpus `{}` does not exist",
            corpus.display()
        );
        return Ok(());
    }
    if !Path::new("/usr/bin/time").exists() {
        eprintln!("bench check: skipped, /usr/bin/time is missing (`apt-get install time`)");
        return Ok(());
    }
    let scratch = root.join("target/bench-build/corpus");
    mkdir(&scratch)?;
    let packs = corpus_packs(corpus)?;
    if packs.is_empty() {
        eprintln!("bench check: skipped, `{}` names no pack", corpus.display());
        return Ok(());
    }
    let list = scratch.join("packs.txt");
    let text: String = packs.iter().map(|p| format!("{}\n", s(p))).collect();
    write(&list, text.as_bytes())?;
    let bin = match &opts.bin {
        Some(b) => b.clone(),
        None => {
            run_step(
                "cargo build --release -p skillbake-cli --bin skillbake",
                Command::new(env!("CARGO")).current_dir(root).args([
                    "build",
                    "--release",
                    "-p",
                    "skillbake-cli",
                    "--bin",
                    "skillbake",
                ]),
            )?;
            root.join("target/release/skillbake")
        }
    };
    let ours = |b: &Path| {
        let mut v = vec![
            s(b),
            "check".into(),
            "--profile".into(),
            "agentskills".into(),
            "--quiet".into(),
        ];
        v.extend(packs.iter().map(|p| s(p)));
        v
    };
    let mut systems: Vec<System> = vec![System::new("skillbake check", Ok(ours(&bin)))];
    if let Some(b) = &opts.before_bin {
        systems.push(System::new("skillbake check (before)", Ok(ours(b))));
    }
    systems.push(System::new(
        "skills-ref 0.1.5 (npm), one process",
        npm_peer(root, &list),
    ));
    systems.push(System::new(
        "skills-ref 0.1.1 (PyPI), one process",
        pypi_peer(root, &list),
    ));
    for sys in &mut systems {
        sys.probe(&scratch);
    }
    for round in 1..=opts.runs {
        eprintln!("\n==> bench check, round {round}/{}", opts.runs);
        for sys in &mut systems {
            sys.once(&scratch);
        }
    }
    let section = report(corpus, packs.len(), opts.runs, &systems);
    eprintln!("\n{section}");
    write_section(
        &root.join("BENCHMARKS.md"),
        START,
        END,
        "<!-- bench:end -->",
        &section,
    )?;
    eprintln!("wrote the check section of BENCHMARKS.md");
    Ok(())
}

/// The pack folders of the corpus: the lines of a list file (blank lines skipped), or every
/// folder under a folder that holds a `SKILL.md`, sorted.
fn corpus_packs(corpus: &Path) -> Result<Vec<PathBuf>, String> {
    if corpus.is_file() {
        let text = std::fs::read_to_string(corpus)
            .map_err(|e| format!("cannot read `{}`: {e}", corpus.display()))?;
        let base = corpus.parent().unwrap_or(Path::new("."));
        return Ok(text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| base.join(l))
            .filter(|p| p.join("SKILL.md").is_file())
            .collect());
    }
    let mut out = Vec::new();
    let mut stack = vec![corpus.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            if is_dir && e.file_name() != ".git" {
                stack.push(e.path());
            }
        }
        if dir.join("SKILL.md").is_file() {
            out.push(dir);
        }
    }
    out.sort();
    Ok(out)
}

fn npm_peer(root: &Path, list: &Path) -> Result<Vec<String>, String> {
    let dir = root.join("target/bench-npm");
    let (package, version) = NPM_PEER;
    crate::mcp_check::npm_install(
        &dir,
        package,
        version,
        "{\"name\": \"skillbake-bench-peers\", \"private\": true}\n",
    )?;
    Ok(vec![
        "node".into(),
        s(&root.join("benches/peers/skills_ref_npm.mjs")),
        s(&dir.join("node_modules").join(package)),
        s(list),
    ])
}

fn pypi_peer(root: &Path, list: &Path) -> Result<Vec<String>, String> {
    let venv = root.join("target/bench-skills-ref");
    let python = venv.join("bin/python");
    let marker = venv.join("skillbake-bench-requirements.txt");
    if !(python.exists() && std::fs::read_to_string(&marker).is_ok_and(|m| m == PYPI_PEER)) {
        run_step(
            "python3 -m venv target/bench-skills-ref",
            Command::new("python3")
                .args(["-m", "venv", "--clear"])
                .arg(&venv),
        )?;
        run_step(
            &format!("pip install {PYPI_PEER}"),
            Command::new(&python).args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                PYPI_PEER,
            ]),
        )?;
        write(&marker, PYPI_PEER.as_bytes())?;
    }
    Ok(vec![
        s(&python),
        s(&root.join("benches/peers/skills_ref_list.py")),
        s(list),
    ])
}

/// One measured command, or why it cannot be measured.
struct System {
    name: &'static str,
    argv: Result<Vec<String>, String>,
    cpu: Vec<f64>,
    wall: Vec<f64>,
}

impl System {
    fn new(name: &'static str, argv: Result<Vec<String>, String>) -> System {
        System {
            name,
            argv,
            cpu: Vec::new(),
            wall: Vec::new(),
        }
    }

    /// One uncounted run; a command that fails is not measured further.
    fn probe(&mut self, scratch: &Path) {
        if let Err(e) = self.timed(scratch) {
            eprintln!("{}: not measured: {e}", self.name);
            self.argv = Err(e);
        }
    }

    fn once(&mut self, scratch: &Path) {
        match self.timed(scratch) {
            Ok((cpu, wall)) => {
                self.cpu.push(cpu);
                self.wall.push(wall);
            }
            Err(e) => {
                eprintln!("{}: not measured: {e}", self.name);
                self.argv = Err(e);
            }
        }
    }

    /// CPU seconds (user + system) and wall seconds of one run.
    fn timed(&self, scratch: &Path) -> Result<(f64, f64), String> {
        let argv = self.argv.as_ref().map_err(Clone::clone)?;
        let out = scratch.join("time.txt");
        let status = Command::new("/usr/bin/time")
            .args(["-f", "%U %S %e", "-o"])
            .arg(&out)
            .args(argv)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| format!("cannot run /usr/bin/time: {e}"))?;
        // `check` exits 1 when the corpus has errors, which real packs do.
        if !matches!(status.code(), Some(0 | 1)) {
            return Err(format!("`{}` failed ({status})", display_short(argv)));
        }
        let text = std::fs::read_to_string(&out).map_err(|e| e.to_string())?;
        let last = text.lines().last().unwrap_or_default();
        let v: Vec<f64> = last
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        match v[..] {
            [user, sys, wall] => Ok((user + sys, wall)),
            _ => Err(format!("/usr/bin/time printed `{last}`")),
        }
    }
}

/// The command line without its list of packs.
fn display_short(argv: &[String]) -> String {
    let shown: Vec<String> = argv.iter().take(6).cloned().collect();
    let more = argv.len().saturating_sub(shown.len());
    if more > 0 {
        format!("{} … ({more} more arguments)", display(&shown))
    } else {
        display(&shown)
    }
}

fn report(corpus: &Path, packs: usize, runs: usize, systems: &[System]) -> String {
    let stats: Vec<Option<(Stat, Stat)>> = systems
        .iter()
        .map(|sys| Stat::of(sys.cpu.clone()).zip(Stat::of(sys.wall.clone())))
        .collect();
    let ours = stats.first().copied().flatten();
    let name = corpus
        .file_name()
        .map_or_else(|| s(corpus), |n| n.to_string_lossy().into_owned());
    let mut m = String::new();
    m.push_str(&format!(
        "### `check` on real packs against the reference validators\n\n`cargo xtask bench check --corpus {name}`: {packs} real pack folders, every one given to each system in one process; medians of {runs} rounds (each round runs every system in turn), CPU = user + system time from `/usr/bin/time`. Ours: `skillbake check --profile agentskills --quiet DIR...` (every rule on, every file of every pack read); the peers read `SKILL.md` alone.\n\n"
    ));
    m.push_str(
        "| system | CPU s | wall s | packs per CPU s | its CPU ÷ ours |\n|---|---|---|---|---|\n",
    );
    for (sys, st) in systems.iter().zip(&stats) {
        match (st, &sys.argv) {
            (Some((cpu, wall)), _) => {
                let ratio = match ours {
                    Some((o, _)) if o.median > 0.0 => format!("{:.1}×", cpu.median / o.median),
                    _ => "–".into(),
                };
                m.push_str(&format!(
                    "| {} | {:.3} ({:.3}–{:.3}) | {:.3} | {:.0} | {ratio} |\n",
                    sys.name,
                    cpu.median,
                    cpu.min,
                    cpu.max,
                    wall.median,
                    packs as f64 / cpu.median.max(1e-9),
                ));
            }
            (None, Err(e)) => {
                let first = e.lines().next().unwrap_or_default();
                m.push_str(&format!("| {} | not measured: {first} | | | |\n", sys.name));
            }
            (None, Ok(_)) => m.push_str(&format!("| {} | not measured | | | |\n", sys.name)),
        }
    }
    let verdicts: Vec<String> = systems
        .iter()
        .zip(&stats)
        .skip(1)
        .filter(|(sys, _)| sys.name.starts_with("skills-ref"))
        .map(|(sys, st)| match (st, ours) {
            (Some((cpu, _)), Some((o, _))) if o.median > 0.0 => {
                let r = cpu.median / o.median;
                let met = if r >= GOAL { "met" } else { "missed" };
                format!("{}: {r:.1}× ({met})", sys.name)
            }
            _ => format!("{}: not measured", sys.name),
        })
        .collect();
    m.push_str(&format!(
        "\nGoal: `check` ≥ {GOAL:.0}× less CPU than each reference validator. {}\n",
        verdicts.join("; ")
    ));
    m
}
