//! `skillbake exec-script` against DB-GPT's own `execute_skill_script_file` (the `dbgpt`
//! package, 0.8.2, `dbgpt.agent.skill.manage.SkillManager`) on the same packs, arguments and
//! output folder: the replies must be byte-identical, except where skillbake differs on purpose
//! (each such case asserts both replies).
//!
//! Needs a Python with `dbgpt` installed: `$SKILLBAKE_DBGPT_PYTHON`, `target/dbgpt-venv` (which
//! `.ci/run` installs from `tests/dbgpt-requirements.txt`) or `target/bench-venv`. Without one
//! the test says so and passes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common::{copy_tree, Order};
use serde_json::{json, Value};
use skillbake::Registry;
use skillbake_exec::{dbgpt, Executor, Interpreter, Policy};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The limit of every case that must finish: DB-GPT's own 120 s, in both runners, so a case's
/// outcome never depends on how busy the machine is.
const LIMIT_SECONDS: u64 = 120;

/// The limit of the one case that must time out, in both runners. Its script sleeps far longer
/// than this (see [`SLEEPER_SECONDS`]), so it times out however fast or slow the machine is.
const TIMEOUT_CASE_SECONDS: u64 = 1;

/// How long the timing-out case's script would sleep if nobody stopped it.
const SLEEPER_SECONDS: u64 = 600;

/// Runs DB-GPT's function for every case read from stdin and writes one reply per line to the
/// file named by its second argument. Anything DB-GPT itself prints (log lines, warnings) goes to
/// stderr, so it can never be mistaken for a reply.
const HARNESS: &str = r#"
import asyncio, json, os, shutil, signal, sys
replies = open(sys.argv[2], "w", encoding="utf-8")
sys.stdout = sys.stderr
import dbgpt.configs.model_config as model_config
from dbgpt.component import SystemApp
from dbgpt.agent.skill.manage import SkillManager

model_config.SKILLS_DIR = sys.argv[1]
limit = None
_wait_for = asyncio.wait_for

async def wait_for(aw, timeout=None):
    # DB-GPT waits a fixed 120 s; each case says its own limit.
    return await _wait_for(aw, limit if timeout == 120 else timeout)

asyncio.wait_for = wait_for

# DB-GPT leaves a timed-out script running; the test stops every script it started.
_spawn = asyncio.create_subprocess_exec
started = []

async def create_subprocess_exec(*args, **kwargs):
    proc = await _spawn(*args, **kwargs)
    started.append(proc)
    return proc

asyncio.create_subprocess_exec = create_subprocess_exec

def stop_started():
    while started:
        proc = started.pop()
        if proc.returncode is not None:
            continue
        try:
            os.kill(proc.pid, signal.SIGKILL)
            os.waitpid(proc.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass

manager = SkillManager(SystemApp())
cases = json.loads(sys.stdin.read())
for case in cases:
    limit = float(case["limit"])
    out = case["output_dir"]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    reply = asyncio.run(manager.execute_skill_script_file(
        case["skill"], case["script"], case["args"], output_dir=out))
    stop_started()
    replies.write(json.dumps(reply) + "\n")
    replies.flush()
replies.close()
"#;

fn dbgpt_python() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let candidates = std::env::var_os("SKILLBAKE_DBGPT_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain([
            root.join("target/dbgpt-venv/bin/python"),
            root.join("target/bench-venv/bin/python"),
        ]);
    for python in candidates {
        let ok = Command::new(&python)
            .args(["-c", "import dbgpt.agent.skill.manage"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return Some(python);
        }
    }
    None
}

/// How skillbake's reply must relate to DB-GPT's.
enum Expect {
    /// Byte for byte.
    Same,
    /// DB-GPT's reply with these replacements.
    Replaced(&'static str, &'static str),
    /// A deliberate difference: DB-GPT's reply contains the first text, skillbake's the second.
    Differs(&'static str, &'static str),
}

struct Case {
    registry: &'static Registry,
    skill: &'static str,
    script: &'static str,
    args: Value,
    expect: Expect,
}

impl Case {
    /// Seconds this case may run in both runners: short only for the case that must time out.
    fn limit(&self) -> u64 {
        if self.skill == "sleeper" {
            TIMEOUT_CASE_SECONDS
        } else {
            LIMIT_SECONDS
        }
    }
}

#[test]
fn exec_script_answers_what_dbgpt_answers() {
    let Some(python) = dbgpt_python() else {
        eprintln!(
            "skipped: no Python with DB-GPT's `dbgpt` package (set SKILLBAKE_DBGPT_PYTHON, or install tests/dbgpt-requirements.txt into target/dbgpt-venv)"
        );
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let skills = tmp.path().join("skills");
    copy_tree(
        &root.join("crates/skillbake-exec/tests/fixtures/exec"),
        &skills,
        Order::Sorted,
    );
    copy_tree(&root.join("skills"), &skills, Order::Sorted);
    let out = tmp.path().join("out");
    let text_file = tmp.path().join("notes.txt");
    std::fs::write(&text_file, "first line\nsecond line é\n").unwrap();
    let fixtures = &skillbake_exec_fixtures::REGISTRY;
    let bundled = &skillbake_cli::BUNDLED;
    let asset = |p: &str| root.join("skills").join(p).display().to_string();
    use Expect::*;
    let case = |registry, skill, script, args, expect| Case {
        registry,
        skill,
        script,
        args,
        expect,
    };
    let cases = vec![
        // The arguments reach the script exactly as DB-GPT passes them (json.dumps, ASCII).
        case(
            fixtures,
            "argv",
            "argv.py",
            json!({"text": "é 中 \"q\"", "x": 1.5, "big": 12345678901234567890u64, "tiny": 1e-7, "neg": -0.0, "nested": {"a": [true, null]}}),
            Same,
        ),
        case(fixtures, "argv", "scripts/argv.py", json!({}), Same),
        case(fixtures, "chunks-out", "chunks.py", json!({}), Same),
        case(fixtures, "fails", "/scripts/fail.py", json!({}), Same),
        case(fixtures, "fails", "scripts\\fail.py", json!({}), Same),
        case(fixtures, "silent", "silent.py", json!({}), Same),
        case(fixtures, "silent", "silent.py", json!({"status": 4}), Same),
        case(fixtures, "images", "chart.py", json!({}), Same),
        case(
            fixtures,
            "bad-output",
            "bad.py",
            json!({"kind": "binary"}),
            Same,
        ),
        case(
            fixtures,
            "bad-output",
            "bad.py",
            json!({"kind": "shape"}),
            Same,
        ),
        case(fixtures, "script-error", "err.py", json!({}), Same),
        case(fixtures, "flood", "flood.py", json!({"bytes": 5000}), Same),
        case(fixtures, "echo", "nope.py", json!({}), Same),
        case(fixtures, "no-such-skill", "x.py", json!({}), Same),
        case(
            fixtures,
            "sleeper",
            "slow.py",
            json!({"seconds": SLEEPER_SECONDS}),
            Replaced("(120s limit)", "(1s limit)"),
        ),
        // DB-GPT runs every script as Python; skillbake runs a .sh script with bash.
        case(
            fixtures,
            "text-out",
            "say.sh",
            json!({}),
            Differs("SyntaxError", "got: {}"),
        ),
        // DB-GPT follows `..` out of scripts/ and runs SKILL.md as Python; skillbake does not.
        case(
            fixtures,
            "fails",
            "../SKILL.md",
            json!({}),
            Differs("SyntaxError", "Script file '../SKILL.md' not found"),
        ),
        // The bundled packs.
        case(
            bundled,
            "read-file",
            "read_file.py",
            json!({"path": text_file.display().to_string(), "max_length": 15}),
            Same,
        ),
        case(
            bundled,
            "read-file",
            "read_file.py",
            json!({"path": "missing.txt"}),
            Same,
        ),
        case(
            bundled,
            "csv-data-analysis",
            "analyze_csv.py",
            json!({"path": asset("csv-data-analysis/assets/sample_sales.csv"), "group_by": "region", "agg": ["revenue"]}),
            Same,
        ),
        case(
            bundled,
            "csv-data-analysis",
            "analyze_csv.py",
            json!({"path": asset("csv-data-analysis/assets/sample_sales.csv"), "format": "markdown"}),
            Same,
        ),
        case(
            bundled,
            "excel",
            "inspect_xlsx.py",
            json!({"path": asset("csv-data-analysis/assets/sample_sales.csv")}),
            Same,
        ),
        case(
            bundled,
            "financial-report-analyzer",
            "calculate_ratios.py",
            json!({"input": asset("financial-report-analyzer/assets/sample_financials.csv")}),
            Same,
        ),
        case(
            bundled,
            "send-email",
            "send_email.py",
            json!({"to": "not-an-address", "subject": "Hi", "body": "Hello"}),
            Same,
        ),
    ];

    // DB-GPT's replies, all in one process (importing dbgpt takes seconds).
    let input: Vec<Value> = cases
        .iter()
        .map(|c| json!({"skill": c.skill, "script": c.script, "args": c.args, "limit": c.limit(), "output_dir": out.display().to_string()}))
        .collect();
    let replies = tmp.path().join("dbgpt-replies.jsonl");
    let mut child = Command::new(&python)
        .args(["-c", HARNESS])
        .arg(&skills)
        .arg(&replies)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(&input).unwrap().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let printed = format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success(),
        "the DB-GPT harness failed\n{printed}"
    );
    let theirs: Vec<String> = std::fs::read_to_string(&replies)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<String>(l)
                .unwrap_or_else(|e| panic!("not a DB-GPT reply ({e}): {l}\n{printed}"))
        })
        .collect();
    assert_eq!(theirs.len(), cases.len());

    let policy = Policy::new()
        .cache_dir(tmp.path().join("cache"))
        .output_dir(&out)
        .interpreter(Interpreter::Python, &python)
        .allow("filesystem:read")
        .unwrap()
        .allow("smtp")
        .unwrap()
        // `sleeper` starts `sleep`: DB-GPT runs everything with full rights.
        .allow("subprocess")
        .unwrap();
    for (c, theirs) in cases.iter().zip(&theirs) {
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out).unwrap();
        let policy = policy.clone().timeout(Duration::from_secs(c.limit()));
        let executor = Executor::new(c.registry, policy);
        let ours = dbgpt::reply_for(&executor.execute_script_file(
            c.skill,
            c.script,
            Some(c.args.clone()),
        ));
        let what = format!("{} {} {}", c.skill, c.script, c.args);
        match c.expect {
            Same => assert_eq!(&ours, theirs, "{what}"),
            Replaced(from, to) => assert_eq!(ours, theirs.replace(from, to), "{what}"),
            Differs(in_theirs, in_ours) => {
                assert!(theirs.contains(in_theirs), "{what}: DB-GPT said {theirs}");
                assert!(ours.contains(in_ours), "{what}: skillbake said {ours}");
            }
        }
    }
}
