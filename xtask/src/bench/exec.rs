//! `cargo xtask bench exec [--runs N] [--no-peers] [--no-inproc] [--bin BIN] [--before BIN]`: what running a skill through
//! skillbake costs over running its script directly, written to `BENCHMARKS.md` between its
//! `bench-exec:start`/`bench-exec:end` markers.
//!
//! The pack is the bundled `read-file`, reading the first 200 characters of README.md; every
//! runner uses the same interpreter (the real `python3` binary, not a wrapper script on `PATH`)
//! and the same parameters. Measured side by side, in rounds that run every command in turn, so
//! a change in the machine's load hits them alike:
//!
//! * **direct**: `python3 skills/read-file/scripts/read_file.py '<params>'`;
//! * **`skillbake run`, warm**: the release binary with the bundled packs (`--bin`, else built
//!   into `target/bench-build/exec`), the pack's copy already in the cache (it is verified
//!   before the run);
//! * **`skillbake run`, first run**: the same with the cache removed before every run (untimed),
//!   so each run materialises the pack;
//! * **`skillbake run`, warm, before** (with `--before BIN`): another `skillbake` binary (an
//!   earlier revision's release build with the bundled packs), warm, with its own cache and its
//!   own `TMPDIR` (the sandbox keeps its probe's result in the runs folder there, one record for
//!   the binary that wrote it: two binaries sharing it would each probe again on every run), to
//!   measure a change against what it replaces in the same rounds;
//! * **DB-GPT**: its own `execute_skill_script_file` (`dbgpt` 0.8.2, from `target/dbgpt-venv` or
//!   `target/bench-venv`) on a copy of the same pack, timed inside one Python process that stays
//!   up for the whole measurement (the cost inside a running DB-GPT server; one call per round,
//!   in turn with the others), plus the time it took to import;
//! * **in process** (`cargo bench --bench exec`): `Executor::execute` warm and first against
//!   spawning the script from the same process.
//!
//! Figures are medians with min–max; ratios are ratios of medians.

use super::builds::build_dir;
use super::divan::{parse_divan, DivanRow};
use super::process::{capture, copy_tree, display, mkdir, s, write_section};
use super::report::t;
use super::timing::Stat;
use crate::{cargo, root};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const START: &str = "<!-- bench-exec:start -->\n";
const END: &str = "<!-- bench-exec:end -->";
const USAGE: &str =
    "usage: cargo xtask bench exec [--runs N] [--no-peers] [--no-inproc] [--bin BIN] [--before BIN]";

/// Times DB-GPT's `execute_skill_script_file` inside one process: prints JSON with the import
/// time and the per-call times in seconds.
const DBGPT_HARNESS: &str = r#"
import asyncio, json, sys, time
t0 = time.perf_counter()
import dbgpt.configs.model_config as model_config
from dbgpt.component import SystemApp
from dbgpt.agent.skill.manage import SkillManager
imported = time.perf_counter() - t0
skills, out, params = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
model_config.SKILLS_DIR = skills
manager = SkillManager(SystemApp())
loop = asyncio.new_event_loop()
call = lambda: loop.run_until_complete(manager.execute_skill_script_file("read-file", "read_file.py", params, output_dir=out))
reply = call()
assert '\\"ok\\": true' in reply, reply
print(json.dumps({"import": imported, "python": sys.version.split()[0]}), flush=True)
for line in sys.stdin:
    t = time.perf_counter()
    call()
    print(time.perf_counter() - t, flush=True)
"#;

struct Options {
    runs: usize,
    peers: bool,
    inproc: bool,
    /// Another `skillbake` binary to time warm in the same rounds.
    before: Option<PathBuf>,
    /// The binary to measure (with the bundled packs); built into `target/bench-build/exec`
    /// when not given.
    bin: Option<PathBuf>,
}

fn options(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        runs: 40,
        peers: true,
        inproc: true,
        before: None,
        bin: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => {
                o.runs = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|&n: &usize| n > 0)
                    .ok_or(format!("--runs needs a positive number ({USAGE})"))?
            }
            "--no-peers" => o.peers = false,
            "--no-inproc" => o.inproc = false,
            "--before" | "--bin" => {
                let bin = it
                    .next()
                    .map(|b| std::path::absolute(b).unwrap_or_else(|_| PathBuf::from(b)))
                    .ok_or(format!("{a} needs a skillbake binary ({USAGE})"))?;
                if !bin.is_file() {
                    return Err(format!("{a}: `{}` is not a file", bin.display()));
                }
                if a == "--bin" {
                    o.bin = Some(bin);
                } else {
                    o.before = Some(bin);
                }
            }
            other => return Err(format!("unexpected argument `{other}` ({USAGE})")),
        }
    }
    Ok(o)
}

/// Removes a cache whose folders are read-only.
fn remove_cache(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        if d.is_dir() && !d.is_symlink() {
            let _ = std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700));
            if let Ok(entries) = std::fs::read_dir(&d) {
                stack.extend(entries.flatten().map(|e| e.path()));
            }
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// One timed command: its arguments, environment, and what to do before each run (untimed).
struct Runner {
    name: &'static str,
    argv: Vec<String>,
    env: Vec<(String, String)>,
    before: Option<PathBuf>,
    times: Vec<f64>,
}

impl Runner {
    fn once(&mut self, cwd: &Path, timed: bool) -> Result<(), String> {
        if let Some(cache) = &self.before {
            remove_cache(cache);
        }
        let (program, args) = self.argv.split_first().ok_or("empty command")?;
        let mut c = Command::new(program);
        c.args(args)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in &self.env {
            c.env(k, v);
        }
        let start = Instant::now();
        let out = c
            .output()
            .map_err(|e| format!("`{}`: cannot start: {e}", display(&self.argv)))?;
        let dt = start.elapsed().as_secs_f64();
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || !text.contains("\"ok\"") {
            return Err(format!("`{}` failed: {text}", display(&self.argv)));
        }
        if timed {
            self.times.push(dt);
        }
        Ok(())
    }
}

/// DB-GPT's function in a process of its own that stays up: one timed call per line on stdin.
struct Dbgpt {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: std::io::BufReader<std::process::ChildStdout>,
    import: f64,
    python: String,
    times: Vec<f64>,
}

impl Dbgpt {
    fn start(root: &Path, scratch: &Path, params: &str) -> Result<Dbgpt, String> {
        use std::io::BufRead;
        let python = [
            root.join("target/dbgpt-venv/bin/python"),
            root.join("target/bench-venv/bin/python"),
        ]
        .into_iter()
        .find(|p| {
            Command::new(p)
                .args(["-c", "import dbgpt.agent.skill.manage"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .ok_or("no Python with `dbgpt` in target/dbgpt-venv or target/bench-venv (run `.ci/run`, or `cargo xtask bench` once)")?;
        let skills = scratch.join("dbgpt-skills");
        let _ = std::fs::remove_dir_all(&skills);
        copy_tree(&root.join("skills/read-file"), &skills.join("read-file"))?;
        let out = scratch.join("dbgpt-out");
        mkdir(&out)?;
        eprintln!(
            "\n==> DB-GPT's execute_skill_script_file in {}",
            python.display()
        );
        let mut child = Command::new(&python)
            .args(["-c", DBGPT_HARNESS])
            .arg(&skills)
            .arg(&out)
            .arg(params)
            .current_dir(&out)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", python.display()))?;
        let input = child.stdin.take().ok_or("no stdin")?;
        let mut output = std::io::BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut line = String::new();
        output
            .read_line(&mut line)
            .map_err(|e| format!("DB-GPT harness: {e}"))?;
        let v: serde_json::Value = serde_json::from_str(line.trim())
            .map_err(|e| format!("DB-GPT harness: {e}: {line}"))?;
        Ok(Dbgpt {
            child,
            input,
            output,
            import: v["import"].as_f64().unwrap_or(f64::NAN),
            python: v["python"].as_str().unwrap_or("?").to_string(),
            times: Vec::new(),
        })
    }

    fn once(&mut self, timed: bool) -> Result<(), String> {
        use std::io::{BufRead, Write};
        self.input
            .write_all(b"run\n")
            .and_then(|()| self.input.flush())
            .map_err(|e| format!("DB-GPT harness: {e}"))?;
        let mut line = String::new();
        self.output
            .read_line(&mut line)
            .map_err(|e| format!("DB-GPT harness: {e}"))?;
        let dt: f64 = line
            .trim()
            .parse()
            .map_err(|_| format!("DB-GPT harness said `{}`", line.trim()))?;
        if timed {
            self.times.push(dt);
        }
        Ok(())
    }
}

impl Drop for Dbgpt {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn inproc(python: &Path) -> Result<Vec<DivanRow>, String> {
    eprintln!("\n==> cargo bench --bench exec");
    let out = cargo()
        .args(["bench", "--bench", "exec", "--", "--color", "never"])
        .env("SKILLBAKE_BENCH_PYTHON", python)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cargo bench: cannot start: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    eprint!("{text}");
    if !out.status.success() {
        return Err(format!("cargo bench --bench exec failed ({})", out.status));
    }
    Ok(parse_divan(&text))
}

fn ts(st: &Stat) -> String {
    format!("{} ({}–{})", t(st.median), t(st.min), t(st.max))
}

pub(super) fn run(args: &[String]) -> Result<(), String> {
    let opts = options(args)?;
    let root = root();
    let scratch = build_dir(&root, "exec-scratch");
    mkdir(&scratch)?;
    let setup = Setup::new(&root, &scratch, opts.bin.clone())?;
    let (python, python_version, python_note) = setup.interpreter_run()?;
    let mut runners = setup.runners(&root, &scratch, &python);
    if let Some(bin) = &opts.before {
        let mut argv = setup.skillbake(&scratch.join("cache-before"));
        argv[0] = s(bin);
        // A temporary folder of its own, open to every user as /tmp is (a run as root hands the
        // script to `nobody`, who must reach the runs folder inside it).
        let tmp = scratch.join("tmp-before");
        mkdir(&tmp)?;
        std::fs::set_permissions(&tmp, std::os::unix::fs::PermissionsExt::from_mode(0o1777))
            .map_err(|e| format!("cannot open `{}` to every user: {e}", tmp.display()))?;
        let mut env = setup.env();
        env.push(("TMPDIR".to_string(), s(&tmp)));
        runners.push(Runner {
            name: "before",
            argv,
            env,
            before: None,
            times: Vec::new(),
        });
    }
    eprintln!(
        "\n==> time, {} rounds: {}",
        opts.runs,
        runners
            .iter()
            .map(|r| display(&r.argv))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let mut peer = if opts.peers {
        Some(Dbgpt::start(&root, &scratch, &setup.params))
    } else {
        None
    };
    measure(&mut runners, &mut peer, opts.runs, &setup.work)?;
    remove_cache(&scratch.join("cache-first"));
    let stats: Vec<Stat> = runners
        .iter()
        .map(|r| Stat::of(r.times.clone()).ok_or(format!("no timing for {}", r.name)))
        .collect::<Result<_, _>>()?;
    let peer = peer.map(|p| {
        p.and_then(|d| {
            let call = Stat::of(d.times.clone()).ok_or("no DB-GPT timing")?;
            Ok((call, d.import, d.python.clone()))
        })
    });
    let inproc_rows = if opts.inproc {
        Some(inproc(&python)?)
    } else {
        None
    };
    let python_desc = format!("{python_version}{python_note}");
    let m = report(
        opts.runs,
        &python_desc,
        &stats,
        &peer,
        inproc_rows.as_deref(),
    );
    write_section(
        &root.join("BENCHMARKS.md"),
        START,
        END,
        "<!-- bench:end -->",
        &m,
    )?;
    eprintln!("\nwrote the run section of BENCHMARKS.md");
    Ok(())
}

/// The built command, the `PATH` that finds the real `python3` first, the parameters and the
/// scratch folders of the runs.
struct Setup {
    bin: PathBuf,
    path: String,
    params: String,
    cache: PathBuf,
    work: PathBuf,
    python: PathBuf,
    python_version: String,
}

impl Setup {
    fn new(root: &Path, scratch: &Path, bin: Option<PathBuf>) -> Result<Setup, String> {
        let bin = match bin {
            Some(b) => b,
            None => crate::build_bundled_skillbake(
                &root.join("skills"),
                Some(&build_dir(root, "exec")),
                "the bundled packs",
            )?,
        };
        let python = PathBuf::from(
            capture(&[
                "python3".into(),
                "-c".into(),
                "import os, sys; print(os.path.realpath(sys.executable))".into(),
            ])?
            .trim(),
        );
        let python_version = capture(&[s(&python), "--version".into()])?
            .trim()
            .to_string();
        let python_dir = python.parent().ok_or("python3 has no folder")?;
        // `skillbake run` finds `python3` on PATH: put the real interpreter's folder first.
        let link_dir = scratch.join("bin");
        mkdir(&link_dir)?;
        let link = link_dir.join("python3");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&python, &link)
            .map_err(|e| format!("`{}`: {e}", link.display()))?;
        let path = format!(
            "{}:{}:{}",
            link_dir.display(),
            python_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let readme = root.join("README.md");
        let params = serde_json::json!({"path": s(&readme), "max_length": 200}).to_string();
        let work = scratch.join("work");
        mkdir(&work)?;
        Ok(Setup {
            bin,
            path,
            params,
            cache: scratch.join("cache"),
            work,
            python,
            python_version,
        })
    }

    /// `skillbake run read-file` with `cache` as its cache.
    fn skillbake(&self, cache: &Path) -> Vec<String> {
        vec![
            s(&self.bin),
            "run".into(),
            "read-file".into(),
            "--params".into(),
            self.params.clone(),
            "--allow".into(),
            "filesystem:read".into(),
            "--cache-dir".into(),
            s(cache),
        ]
    }

    fn env(&self) -> Vec<(String, String)> {
        vec![("PATH".to_string(), self.path.clone())]
    }

    /// The program `skillbake run` really starts, its version and a note on why when it is not
    /// the `python3` first on PATH: as root a run is handed to `nobody`, and the sandbox replaces
    /// an interpreter `nobody` cannot execute (one under a home folder) by the same version
    /// found on PATH. The script alone runs with that program too, so both runners start the
    /// same interpreter.
    fn interpreter_run(&self) -> Result<(PathBuf, String, String), String> {
        let (python, python_version, cache, path) = (
            self.python.clone(),
            self.python_version.clone(),
            &self.cache,
            &self.path,
        );
        let skillbake = |c: &Path| self.skillbake(c);
        Ok({
            let dry: Vec<String> = skillbake(cache)
                .into_iter()
                .chain(["--dry-run".to_string()])
                .collect();
            let out = Command::new(&dry[0])
                .args(&dry[1..])
                .env("PATH", path)
                .stdin(Stdio::null())
                .output()
                .map_err(|e| format!("`{}`: cannot start: {e}", display(&dry)))?;
            let v: serde_json::Value = serde_json::from_slice(&out.stdout)
                .map_err(|e| format!("`{}`: no JSON result: {e}", display(&dry)))?;
            let started = v["data"]["command"][0]
                .as_str()
                .map(PathBuf::from)
                .ok_or_else(|| format!("`{}`: the dry run names no command", display(&dry)))?;
            if started == python {
                (python, python_version, String::new())
            } else {
                let version = capture(&[s(&started), "--version".into()])?
                    .trim()
                    .to_string();
                // Only file names: the report must not name this machine's folders.
                let name = |p: &Path| {
                    p.file_name().map_or_else(
                        || p.display().to_string(),
                        |n| n.to_string_lossy().into_owned(),
                    )
                };
                let note = format!(
                    " (`{}`: the sandbox hands the run to `nobody`, who cannot execute the `{}` first on PATH, {python_version} under a home folder, so it starts the interpreter of that name found further on PATH; the script alone runs with it too)",
                    name(&started),
                    name(&python)
                );
                (started, version, note)
            }
        })
    }

    /// The runners timed: the script alone, `skillbake run` warm, and on a first run (its
    /// cache removed before every round).
    fn runners(&self, root: &Path, scratch: &Path, python: &Path) -> Vec<Runner> {
        let (params, env) = (&self.params, self.env());
        let cache = &self.cache;
        let skillbake = |c: &Path| self.skillbake(c);
        vec![
            Runner {
                name: "direct",
                argv: vec![
                    s(python),
                    s(&root.join("skills/read-file/scripts/read_file.py")),
                    params.clone(),
                ],
                env: env.clone(),
                before: None,
                times: Vec::new(),
            },
            Runner {
                name: "warm",
                argv: skillbake(cache),
                env: env.clone(),
                before: None,
                times: Vec::new(),
            },
            Runner {
                name: "first",
                argv: skillbake(&scratch.join("cache-first")),
                env,
                before: Some(scratch.join("cache-first")),
                times: Vec::new(),
            },
        ]
    }
}

/// Three warm-up rounds, then `runs` timed rounds, every runner (and DB-GPT's call) in turn.
/// Each round starts one runner later than the one before, so that every runner takes every
/// place in the order equally often: at a few milliseconds a run, a binary that always followed
/// the same runner measured 0.4 ms away from where rounds in random order put it.
fn measure(
    runners: &mut [Runner],
    peer: &mut Option<Result<Dbgpt, String>>,
    runs: usize,
    work: &Path,
) -> Result<(), String> {
    let n = runners.len();
    let rounds = std::iter::repeat_n(false, 3).chain(std::iter::repeat_n(true, runs));
    for (round, timed) in rounds.enumerate() {
        for k in 0..n {
            if let Some(r) = runners.get_mut((round + k) % n) {
                r.once(work, timed)?;
            }
        }
        if let Some(Ok(d)) = peer {
            d.once(timed)?;
        }
    }
    Ok(())
}

/// The section of BENCHMARKS.md.
fn report(
    runs: usize,
    python_desc: &str,
    stats: &[Stat],
    peer: &Option<Result<(Stat, f64, String), String>>,
    inproc_rows: Option<&[DivanRow]>,
) -> String {
    // The report.
    let (direct, warm, first) = (&stats[0], &stats[1], &stats[2]);
    let x = |a: f64, b: f64| format!("{:.2}×", a / b);
    let mut m = String::new();
    m.push_str("## Running a skill: `skillbake run` against the script alone and DB-GPT\n\n");
    let before = stats.get(3);
    m.push_str(&format!(
        "Measured by `cargo xtask bench exec --runs {}{}`: the bundled `read-file` pack reading the first 200 characters of README.md, {python_desc} for skillbake and the script alone, {} rounds each running every command in turn (DB-GPT's call included; each round starts one runner later, so that every runner takes every place in the order equally often). Medians with min–max; ratios of medians.\n\n",
        runs,
        if before.is_some() { " --before BIN" } else { "" },
        runs
    ));
    m.push_str("| runner | wall time per run | ratio to the script alone |\n|---|---|---:|\n");
    m.push_str(&format!(
        "| the script alone: `python3 scripts/read_file.py '<params>'` | {} | 1.00× |\n",
        ts(direct)
    ));
    m.push_str(&format!(
        "| `skillbake run read-file`, warm (copy verified, then run) | {} | {} |\n",
        ts(warm),
        x(warm.median, direct.median)
    ));
    m.push_str(&format!(
        "| `skillbake run read-file`, first run (materialises the pack) | {} | {} |\n",
        ts(first),
        x(first.median, direct.median)
    ));
    if let Some(b) = before {
        m.push_str(&format!(
            "| `skillbake run read-file`, warm, the `--before` binary (the revision this one changes) | {} | {} |\n",
            ts(b),
            x(b.median, direct.median)
        ));
    }
    match &peer {
        Some(Ok((call, import, python))) => {
            m.push_str(&format!(
                "| DB-GPT `execute_skill_script_file`, one call inside a running process (Python {python}) | {} | {} |\n",
                ts(call),
                x(call.median, direct.median)
            ));
            m.push_str(&format!(
                "\nskillbake's overhead over the script alone: {} warm, {} on a first run. A whole `skillbake run` process against one DB-GPT call inside an already running server: {}. DB-GPT first has to import its skill manager: {} in this run.\n",
                t(warm.median - direct.median),
                t(first.median - direct.median),
                x(warm.median, call.median),
                t(*import)
            ));
        }
        Some(Err(e)) => m.push_str(&format!(
            "\nDB-GPT was not measured: {e}.\n\nskillbake's overhead over the script alone: {} warm, {} on a first run.\n",
            t(warm.median - direct.median),
            t(first.median - direct.median)
        )),
        None => m.push_str(&format!(
            "\nDB-GPT was not measured (`--no-peers`).\n\nskillbake's overhead over the script alone: {} warm, {} on a first run.\n",
            t(warm.median - direct.median),
            t(first.median - direct.median)
        )),
    }
    if let Some(b) = before {
        m.push_str(&format!(
            "\nWarm, this revision against the `--before` binary: {} ({} less per run).\n",
            x(warm.median, b.median),
            t(b.median - warm.median)
        ));
    }
    if let Some(rows) = &inproc_rows {
        let find = |n: &str| rows.iter().find(|r| r.name == n);
        if let (Some(d), Some(w), Some(f)) = (find("direct"), find("warm"), find("first")) {
            m.push_str("\nIn process (`cargo bench --bench exec`, divan): `Executor::execute` against spawning the same script from the same process.\n\n| bench | median | fastest – slowest | ratio to spawning the script |\n|---|---:|---|---:|\n");
            for (label, r) in [
                ("spawn the script, read its output", d),
                ("`Executor::execute`, warm", w),
                ("`Executor::execute`, first run", f),
            ] {
                m.push_str(&format!(
                    "| {label} | {} | {} – {} | {} |\n",
                    t(r.median_ns / 1e9),
                    t(r.fastest_ns / 1e9),
                    t(r.slowest_ns / 1e9),
                    x(r.median_ns, d.median_ns)
                ));
            }
        }
    }
    m
}
