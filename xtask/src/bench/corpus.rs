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
//!
//! The same packs are also copied into one folder (a name taken twice gets `-2`, `-3`, …) and
//! checked as one skills root, as a CI job runs `skillbake check skills/`: then the cross-pack
//! rules (near-duplicate descriptions over the routing index of every pack, names, versions)
//! run over all of them, which a folder per pack never asks for.
//!
//! The floor is measured in the same rounds: `benches/floor`'s `tree read`, a process that walks
//! every pack folder as discovery does and reads every file, checking nothing. No `check` that
//! reads what it checks can cost less, so the report says what share of the goal's budget
//! (the fastest peer's CPU divided by the goal) the file system alone takes.
//!
//! The same rounds measure what the `security` group costs, as `check` minus `check -A security`
//! (which skips the scan): over the whole corpus in one process, and on packs checked alone, as
//! a pre-commit hook checks one pack: `--lone N` packs (100 by default, 0 for none) taken at
//! even steps through the sorted corpus, each in a process of its own (through `xargs`), so
//! that the fixed cost a process pays is counted as often as a hook pays it.

use super::builds::build_aux;
use super::process::{copy_tree, display, mkdir, s, write, write_section};
use super::timing::Stat;
use crate::{root, run as run_step};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const START: &str = "<!-- bench-check:start -->\n";
const END: &str = "<!-- bench-check:end -->";
const USAGE: &str = "usage: cargo xtask bench check [--corpus LIST|DIR] [--runs N] [--lone N] [--bin PATH] [--before-bin PATH]";
/// The npm validator, as pinned.
const NPM_PEER: (&str, &str) = ("skills-ref", "0.1.5");
/// The PyPI reference validator, as pinned.
const PYPI_PEER: &str = "skills-ref==0.1.1";
/// The goal: our CPU time at most a tenth of each peer's.
const GOAL: f64 = 10.0;
/// The goal for the `security` group: at most this share of `check`'s CPU time.
const SECURITY_GOAL: f64 = 0.05;
/// The name of the floor's row.
const FLOOR: &str = "floor: every file of every pack read, nothing checked";
/// Packs checked alone, by default.
const LONE: usize = 100;

struct Options {
    corpus: Option<PathBuf>,
    runs: usize,
    lone: usize,
    bin: Option<PathBuf>,
    before_bin: Option<PathBuf>,
}

fn options(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        corpus: std::env::var_os("SKILLBAKE_BENCH_CORPUS")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
        runs: 5,
        lone: LONE,
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
            "--lone" => {
                o.lone = value()?
                    .parse()
                    .map_err(|_| format!("--lone needs a number ({USAGE})"))?
            }
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

/// The corpus step of the whole `cargo xtask bench`, when `SKILLBAKE_BENCH_CORPUS` names one:
/// `bin` checks it, against `before` in the same rounds when there is one.
pub(super) fn run_from_env(bin: &Path, before: Option<&Path>) -> Result<(), String> {
    let mut args = vec!["--bin".to_string(), s(bin)];
    if let Some(b) = before {
        args.extend(["--before-bin".to_string(), s(b)]);
    }
    run(&args)
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
    let check = |b: &Path, scan: bool| {
        let mut v = vec![
            s(b),
            "check".into(),
            "--profile".into(),
            "agentskills".into(),
            "--quiet".into(),
        ];
        if !scan {
            v.extend(["-A".into(), "security".into()]);
        }
        v
    };
    let ours = |b: &Path, scan: bool| {
        let mut v = check(b, scan);
        v.extend(packs.iter().map(|p| s(p)));
        v
    };
    let lone = lone_packs(&packs, opts.lone);
    let lone_list = scratch.join("lone.txt");
    let text: String = lone.iter().map(|p| format!("{}\n", s(p))).collect();
    write(&lone_list, text.as_bytes())?;
    // Each pack alone, one process each: `xargs` exits 123 when a `check` exits 1 (a pack with
    // errors), so each pack is first checked alone here, where any other exit is an error.
    let alone = |b: &Path, scan: bool| -> Result<Vec<String>, String> {
        for p in &lone {
            let status = Command::new(b)
                .args(check(b, scan).get(1..).unwrap_or_default())
                .arg(p)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .map_err(|e| format!("cannot run {}: {e}", b.display()))?;
            if !matches!(status.code(), Some(0 | 1)) {
                return Err(format!("`check {}` failed ({status})", p.display()));
            }
        }
        let mut v: Vec<String> = ["xargs", "-d", "\n", "-n", "1", "-a"]
            .map(String::from)
            .to_vec();
        v.push(s(&lone_list));
        v.extend(check(b, scan));
        Ok(v)
    };
    let mut builds = vec![("", bin.clone())];
    if let Some(b) = &opts.before_bin {
        builds.push((" (before)", b.clone()));
    }
    let mut systems: Vec<System> = Vec::new();
    for (label, b) in &builds {
        systems.push(System::new(
            format!("skillbake check{label}"),
            Ok(ours(b, true)),
        ));
    }
    systems.push(System::new(
        "skills-ref 0.1.5 (npm), one process".into(),
        npm_peer(root, &list),
    ));
    systems.push(System::new(
        "skills-ref 0.1.1 (PyPI), one process".into(),
        pypi_peer(root, &list),
    ));
    let one = scratch.join("one-folder");
    one_folder(&packs, &one)?;
    for (label, b) in &builds {
        let mut argv = check(b, true);
        argv.push(s(&one));
        systems.push(System::new(
            format!("skillbake check, one folder{label}"),
            Ok(argv),
        ));
    }
    systems.push(System::new(
        FLOOR.into(),
        build_aux(root, "floor", "tree")
            .map(|tree| vec![s(&tree), "read".into(), "--list".into(), s(&list)]),
    ));
    let peers = systems.len();
    // The security group's cost: every build without the scan, and the lone packs with and
    // without it.
    let mut groups = Vec::new();
    // Build `i`'s `check` over the corpus is system `i` (pushed first, in the builds' order).
    for (i, (label, b)) in builds.iter().enumerate() {
        let at = systems.len();
        systems.push(System::new(
            format!("skillbake check -A security{label}"),
            Ok(ours(b, false)),
        ));
        let lone_at = (!lone.is_empty()).then(|| {
            systems.push(System::lone(
                format!("each pack alone{label}"),
                alone(b, true),
            ));
            systems.push(System::lone(
                format!("each pack alone, -A security{label}"),
                alone(b, false),
            ));
            systems.len() - 2
        });
        groups.push(Group {
            label,
            with: i,
            without: at,
            lone: lone_at,
        });
    }
    for sys in &mut systems {
        sys.probe(&scratch);
    }
    for round in 1..=opts.runs {
        eprintln!("\n==> bench check, round {round}/{}", opts.runs);
        for sys in &mut systems {
            sys.once(&scratch);
        }
    }
    let mut section = report(corpus, packs.len(), opts.runs, &systems[..peers]);
    section.push_str(&report_security(lone.len(), &systems, &groups));
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

/// Copies every pack of `packs` into `dir` (emptied first), each as a folder named as its own
/// (`-2`, `-3`, … after a name already taken), for a check of them all as one skills root.
fn one_folder(packs: &[PathBuf], dir: &Path) -> Result<(), String> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("cannot empty {}: {e}", dir.display()))?;
    }
    mkdir(dir)?;
    let mut taken = std::collections::BTreeSet::new();
    for pack in packs {
        let base = pack
            .file_name()
            .map_or_else(|| "pack".to_string(), |n| n.to_string_lossy().into_owned());
        let name = (1..)
            .map(|k| {
                if k == 1 {
                    base.clone()
                } else {
                    format!("{base}-{k}")
                }
            })
            .find(|n| !taken.contains(n))
            .unwrap_or_default();
        taken.insert(name.clone());
        copy_tree(pack, &dir.join(name))?;
    }
    Ok(())
}

/// `n` of `packs` at even steps (all of them when there are fewer).
fn lone_packs(packs: &[PathBuf], n: usize) -> Vec<PathBuf> {
    if n >= packs.len() {
        return packs.to_vec();
    }
    (0..n).map(|i| packs[i * packs.len() / n].clone()).collect()
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
    name: String,
    argv: Result<Vec<String>, String>,
    /// The exit codes of a run that counts (`check` exits 1 on a corpus with errors).
    codes: &'static [i32],
    cpu: Vec<f64>,
    wall: Vec<f64>,
}

impl System {
    fn new(name: String, argv: Result<Vec<String>, String>) -> System {
        System {
            name,
            argv,
            codes: &[0, 1],
            cpu: Vec::new(),
            wall: Vec::new(),
        }
    }

    /// Packs checked alone through `xargs`, which exits 123 when a `check` exits 1 to 125
    /// (each pack's own exit was checked before the rounds).
    fn lone(name: String, argv: Result<Vec<String>, String>) -> System {
        System {
            codes: &[0, 123],
            ..System::new(name, argv)
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
        if !status.code().is_some_and(|c| self.codes.contains(&c)) {
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
        "### `check` on real packs against the reference validators\n\n`cargo xtask bench check --corpus {name}`: {packs} real pack folders, every one given to each system in one process; medians of {runs} rounds (each round runs every system in turn), CPU = user + system time from `/usr/bin/time`. Ours: `skillbake check --profile agentskills --quiet DIR...` (every rule on, every file of every pack read); the peers read `SKILL.md` alone. `one folder`: the same packs copied into one folder and checked as one skills root, as a CI job checks `skills/` (the cross-pack rules, the routing index and the near-duplicate search among them, then run over every pack; not in the goal, which compares the same work).\n\n"
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
    let cpu = |name: &dyn Fn(&str) -> bool| {
        systems
            .iter()
            .zip(&stats)
            .filter(|(sys, _)| name(&sys.name))
            .filter_map(|(_, st)| st.map(|(cpu, _)| cpu.median))
            .reduce(f64::min)
    };
    let fastest = cpu(&|n: &str| n.starts_with("skills-ref"));
    let floor = cpu(&|n: &str| n == FLOOR);
    if let Some(line) = floor_line(fastest, floor, ours.map(|(o, _)| o.median)) {
        m.push_str(&line);
    }
    m
}

/// What the floor leaves of the goal's budget: `fastest` is the fastest peer's CPU seconds,
/// `floor` the floor's, `ours` the `check` measured.
fn floor_line(fastest: Option<f64>, floor: Option<f64>, ours: Option<f64>) -> Option<String> {
    let (fastest, floor, ours) = (fastest?, floor?, ours?);
    let budget = fastest / GOAL;
    if budget <= 0.0 || ours <= 0.0 {
        return None;
    }
    let rest = budget - floor;
    let left = if rest > 0.0 {
        format!(
            "everything else `check` does (parsing, every rule, the scan of every byte, the report) would have to fit in the {:.0} ms left, against {:.0} ms now",
            rest * 1e3,
            (ours - floor).max(0.0) * 1e3
        )
    } else {
        "no `check` that reads every file can meet it".to_string()
    };
    Some(format!(
        "\nThe floor: walking the same folders and reading every file, with nothing checked, takes {:.0} ms of CPU, {:.0}% of the goal's budget ({:.0} ms: the fastest peer's CPU ÷ {GOAL:.0}) and {:.0}% of `check`; {left}.\n",
        floor * 1e3,
        floor / budget * 100.0,
        budget * 1e3,
        floor / ours * 100.0,
    ))
}

/// Where one build's rows are in the systems: `check` and `check -A security` over the corpus,
/// and the first of its two lone rows (with the scan, then without).
struct Group {
    label: &'static str,
    with: usize,
    without: usize,
    lone: Option<usize>,
}

/// The median CPU seconds of `systems[i]`.
fn median_cpu(systems: &[System], i: Option<usize>) -> Option<f64> {
    let sys = systems.get(i?)?;
    Stat::of(sys.cpu.clone()).map(|st| st.median)
}

/// The table of the `security` group's cost, over the corpus and on lone packs.
fn report_security(lone: usize, systems: &[System], groups: &[Group]) -> String {
    let mut m = String::new();
    m.push_str(&format!(
        "\nWhat the `security` group costs, in the same rounds: `check` minus `check -A security` (which skips the scan), over the corpus in one process and on {lone} of its packs taken at even steps, each checked alone in a process of its own (as a pre-commit hook checks a pack; CPU per pack: the round's total over the {lone} processes and `xargs`, divided by {lone}).\n\n"
    ));
    m.push_str("| build | corpus: `check` | corpus: `-A security` | the group | its share | alone: `check` a pack | alone: `-A security` | the group | its share |\n|---|---|---|---|---|---|---|---|---|\n");
    let mut shares = Vec::new();
    for g in groups {
        let with = median_cpu(systems, Some(g.with));
        let without = median_cpu(systems, Some(g.without));
        let per = |i: Option<usize>| median_cpu(systems, i).map(|x| x / lone.max(1) as f64);
        let alone_with = per(g.lone);
        let alone_without = per(g.lone.map(|i| i + 1));
        // `/usr/bin/time` counts in steps of 10 ms: a corpus figure to the millisecond, a lone
        // pack's (a hundredth of a round's total, or so) to a tenth of one.
        let ms = |x: Option<f64>, places: usize| {
            x.map_or("–".to_string(), |x| format!("{:.*} ms", places, x * 1e3))
        };
        let cols = |a: Option<f64>, b: Option<f64>, places: usize| match (a, b) {
            (Some(a), Some(b)) if a > 0.0 => (
                ms(Some(a - b), places),
                format!("{:.0}%", (a - b) / a * 100.0),
                Some((a - b) / a),
            ),
            _ => ("–".to_string(), "–".to_string(), None),
        };
        let (group, share, corpus_share) = cols(with, without, 0);
        let (lone_group, lone_share, lone_share_v) = cols(alone_with, alone_without, 1);
        if g.label.is_empty() {
            shares.push(("over the corpus", corpus_share));
            shares.push(("a pack alone", lone_share_v));
        }
        let name = if g.label.is_empty() { "this" } else { "before" };
        m.push_str(&format!(
            "| {name} | {} | {} | {group} | {share} | {} | {} | {lone_group} | {lone_share} |\n",
            ms(with, 0),
            ms(without, 0),
            ms(alone_with, 1),
            ms(alone_without, 1),
        ));
    }
    let verdicts: Vec<String> = shares
        .iter()
        .map(|(what, share)| match share {
            Some(x) => {
                let met = if *x <= SECURITY_GOAL { "met" } else { "missed" };
                format!("{what} {:.0}% ({met})", x * 100.0)
            }
            None => format!("{what}: not measured"),
        })
        .collect();
    m.push_str(&format!(
        "\nGoal: the `security` group at most {:.0}% of `check`'s CPU (the scan must not make `check` measurably slower): {}.\n",
        SECURITY_GOAL * 100.0,
        verdicts.join("; ")
    ));
    m
}

/// The floor's walk, compiled here for its test against discovery.
#[cfg(test)]
#[path = "../../../benches/floor/src/tree.rs"]
mod floor_tree;

#[cfg(test)]
mod tests {
    use super::*;

    /// The floor skips what discovery skips, follows links to files and not to folders, and
    /// reads every other file.
    #[test]
    fn the_floor_walks_as_discovery_does() {
        for name in [
            ".git",
            ".DS_Store",
            ".hidden.md",
            "node_modules",
            "__pycache__",
            "Thumbs.db",
            "desktop.ini",
            "SKILL.md",
            "scripts",
            "node_modules2",
            "a.b",
            "_x",
            "desktop.ini.md",
        ] {
            assert_eq!(
                floor_tree::is_ignored(name),
                skillbake_build::__internal::is_ignored(name),
                "{name}"
            );
        }
        let dir = std::env::temp_dir().join(format!("skillbake-floor-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let write = |rel: &str, text: &str| {
            let path = dir.join(rel);
            std::fs::create_dir_all(path.parent().unwrap_or(&dir)).map_err(|e| e.to_string())?;
            std::fs::write(path, text).map_err(|e| e.to_string())
        };
        let made = (|| -> Result<(), String> {
            write("pack/SKILL.md", "12345")?;
            write("pack/scripts/run.py", "123")?;
            write("pack/.git/HEAD", "ignored")?;
            write("pack/node_modules/x.js", "ignored")?;
            #[cfg(unix)]
            {
                let link = |to: &str, at: &str| {
                    std::os::unix::fs::symlink(to, dir.join(at)).map_err(|e| e.to_string())
                };
                link("SKILL.md", "pack/linked.md")?;
                link("scripts", "pack/linked-dir")?;
            }
            Ok(())
        })();
        let mut read = floor_tree::Seen::default();
        let mut stat = floor_tree::Seen::default();
        floor_tree::walk(&dir.join("pack"), floor_tree::Mode::Read, &mut read);
        floor_tree::walk(&dir.join("pack"), floor_tree::Mode::Stat, &mut stat);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(made, Ok(()));
        let (files, bytes) = if cfg!(unix) { (3, 13) } else { (2, 8) };
        let want = floor_tree::Seen {
            dirs: 2,
            files,
            bytes,
            errors: 0,
        };
        assert_eq!(read, want);
        assert_eq!(stat, want);
    }

    #[test]
    fn lone_packs_are_taken_at_even_steps() {
        let packs: Vec<PathBuf> = (0..10).map(|i| PathBuf::from(format!("p{i}"))).collect();
        let names = |v: Vec<PathBuf>| -> Vec<String> { v.iter().map(|p| s(p)).collect() };
        assert_eq!(names(lone_packs(&packs, 4)), ["p0", "p2", "p5", "p7"]);
        assert_eq!(lone_packs(&packs, 10), packs);
        assert_eq!(lone_packs(&packs, 20), packs);
        assert!(lone_packs(&packs, 0).is_empty());
    }

    /// The floor's share of the budget and what it leaves, or that nothing is left.
    #[test]
    fn the_floor_line_says_what_is_left_of_the_budget() {
        let line = floor_line(Some(0.71), Some(0.058), Some(0.21));
        assert_eq!(
            line.as_deref(),
            Some("\nThe floor: walking the same folders and reading every file, with nothing checked, takes 58 ms of CPU, 82% of the goal's budget (71 ms: the fastest peer's CPU ÷ 10) and 28% of `check`; everything else `check` does (parsing, every rule, the scan of every byte, the report) would have to fit in the 13 ms left, against 152 ms now.\n")
        );
        let none_left = floor_line(Some(0.5), Some(0.06), Some(0.2)).unwrap_or_default();
        assert!(
            none_left.ends_with("no `check` that reads every file can meet it.\n"),
            "{none_left}"
        );
        assert_eq!(floor_line(None, Some(0.06), Some(0.2)), None);
        assert_eq!(floor_line(Some(0.7), None, Some(0.2)), None);
    }

    fn measured(name: &str, cpu: &[f64]) -> System {
        System {
            cpu: cpu.to_vec(),
            wall: cpu.to_vec(),
            ..System::new(name.into(), Ok(Vec::new()))
        }
    }

    /// The group is `check` minus `check -A security`, its share of `check`, per lone pack the
    /// round's total divided by the packs, and the goal judged on this build's rows only.
    #[test]
    fn the_security_table_subtracts_and_judges() {
        let systems = vec![
            measured("skillbake check", &[0.20, 0.21, 0.19]),
            measured("skillbake check (before)", &[0.30]),
            measured("skillbake check -A security", &[0.192]),
            measured("each pack alone", &[0.40]),
            measured("each pack alone, -A security", &[0.20]),
            measured("skillbake check -A security (before)", &[0.20]),
        ];
        let groups = [
            Group {
                label: "",
                with: 0,
                without: 2,
                lone: Some(3),
            },
            Group {
                label: " (before)",
                with: 1,
                without: 5,
                lone: None,
            },
        ];
        let table = report_security(100, &systems, &groups);
        assert!(
            table.contains(
                "| this | 200 ms | 192 ms | 8 ms | 4% | 4.0 ms | 2.0 ms | 2.0 ms | 50% |"
            ),
            "{table}"
        );
        assert!(
            table.contains("| before | 300 ms | 200 ms | 100 ms | 33% | – | – | – | – |"),
            "{table}"
        );
        assert!(
            table.contains("over the corpus 4% (met); a pack alone 50% (missed)."),
            "{table}"
        );
    }
}
