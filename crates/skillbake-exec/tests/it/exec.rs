//! The executor on real processes: every result code comes from a real pack of
//! `tests/fixtures/exec` (compiled into `skillbake_exec_fixtures::REGISTRY`). Each test uses its
//! own cache and output folders under a temporary folder, and checks that what it started is
//! gone.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use serde_json::{json, Value};
use skillbake_exec::{dbgpt, ErrorCode, Executor, Origin, Outcome, Policy};
use skillbake_exec_fixtures::REGISTRY;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The limit of every run that must finish: no loaded machine takes this long to start and run
/// a fixture's script, so no outcome depends on how fast the machine is.
const FINISH_WITHIN: Duration = Duration::from_secs(120);

/// How long a wait for something that must happen may take before the test fails; a wait ends
/// as soon as the thing happens.
const EVENT_WITHIN: Duration = Duration::from_secs(60);

struct Env {
    tmp: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        Env {
            tmp: tempfile::tempdir().unwrap(),
        }
    }

    fn cache(&self) -> PathBuf {
        self.tmp.path().join("cache")
    }

    fn out(&self) -> PathBuf {
        self.tmp.path().join("out")
    }

    /// The default policy with this test's private cache and a limit no loaded machine reaches
    /// ([`FINISH_WITHIN`]), for runs that must finish.
    fn policy(&self) -> Policy {
        self.pack_timeouts().timeout(FINISH_WITHIN)
    }

    /// The default policy with this test's private cache, each pack's own `timeout` in force:
    /// for the tests of timeouts, whose scripts run far longer than their limit.
    fn pack_timeouts(&self) -> Policy {
        Policy::new().cache_dir(self.cache())
    }

    fn executor(&self) -> Executor<'static> {
        Executor::new(&REGISTRY, self.policy())
    }

    /// Replaces this test's temporary paths, and the unique part of run folder names, in `text`.
    fn redact(&self, text: &str) -> String {
        let s = text.replace(&self.tmp.path().display().to_string(), "[TMP]");
        let temp = std::env::temp_dir().display().to_string();
        let s = s.replace(&format!("{}/", temp.trim_end_matches('/')), "[TEMP]/");
        // The folder of this user's runs.
        let uid = rustix::process::geteuid().as_raw();
        let s = s.replace(&format!("skillbake-runs-{uid}/"), "skillbake-runs-[UID]/");
        // skillbake-run-<skill>-<pid>-<nanos>-<n>
        let mut out = String::new();
        let mut rest = s.as_str();
        while let Some(i) = rest.find("skillbake-run-") {
            out.push_str(&rest[..i + 14]);
            rest = &rest[i + 14..];
            let name_end = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(0);
            out.push_str(&rest[..name_end]);
            rest = &rest[name_end..];
            let id_end = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '-'))
                .unwrap_or(rest.len());
            out.push_str("[ID]");
            rest = &rest[id_end..];
        }
        out.push_str(rest);
        out
    }
}

fn code(o: &Outcome) -> Option<&str> {
    o.error().map(|e| e.code.as_str())
}

fn message(o: &Outcome) -> &str {
    o.error().map_or("", |e| e.message.as_str())
}

/// Whether a process exists and is not a zombie.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

fn wait_gone(pid: u32) -> bool {
    let until = Instant::now() + EVENT_WITHIN;
    while Instant::now() < until {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn read_pid(dir: &Path, name: &str) -> u32 {
    std::fs::read_to_string(dir.join(name))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn the_script_gets_params_in_argv_and_stdin_and_an_output_dir() {
    let env = Env::new();
    let o = env
        .executor()
        .execute("echo", json!({"n": 2, "nested": {}}));
    assert!(o.ok(), "{o}");
    let data = o.data().unwrap();
    // Defaults are applied (top level and nested), in schema order after the given keys, and the
    // JSON is Python's json.dumps of it, as DB-GPT passes it.
    let expected = r#"{"n": 2, "nested": {"flag": false}, "text": "hello"}"#;
    assert_eq!(data["argv"], json!([expected]));
    assert_eq!(data["stdin"], json!(expected));
    assert_eq!(
        data["params"],
        json!({"n": 2, "nested": {"flag": false}, "text": "hello"})
    );
    let out = o.meta().output_dir.clone().unwrap();
    assert_eq!(data["output_dir"], json!(out.display().to_string()));
    assert_eq!(
        data["cwd"], data["output_dir"],
        "the working folder defaults to the output folder"
    );
    assert!(out.join("ran.txt").is_file());
    assert_eq!(o.meta().attempts, 1);
    // Confined by the sandbox (`tests/sandbox.rs` covers what that means).
    assert_ne!(o.meta().confinement.mode(), "none");
    std::fs::remove_dir_all(out).unwrap();
}

#[test]
fn working_and_output_folders_come_from_the_policy() {
    let env = Env::new();
    let work = env.tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let policy = env.policy().output_dir(env.out()).work_dir(&work);
    let o = env.executor().execute_with("echo", json!({}), &policy);
    assert!(o.ok(), "{o}");
    assert_eq!(o.data().unwrap()["cwd"], json!(work.display().to_string()));
    assert!(env.out().join("ran.txt").is_file());
    let missing = env.policy().work_dir(env.tmp.path().join("nope"));
    let o = env.executor().execute_with("echo", json!({}), &missing);
    assert_eq!(code(&o), Some("EXEC_FAILED"));
    assert!(message(&o).contains("does not exist"), "{o}");
}

#[test]
fn invalid_params_list_every_violation_with_its_pointer() {
    let env = Env::new();
    let ex = env.executor();
    let o = ex.execute(
        "echo",
        json!({"text": "", "n": -1, "extra": true, "nested": {"flag": 3}}),
    );
    assert_eq!(o.error_code(), Some(ErrorCode::InvalidParams));
    insta::assert_snapshot!("invalid-params", o.to_json());
    let o = ex.execute("echo", json!(["not", "an", "object"]));
    assert_eq!(
        message(&o),
        "The parameters for `echo` must be a JSON object, not an array."
    );
    let big = "x".repeat(200_000);
    let o = ex.execute("echo", json!({ "text": big }));
    assert_eq!(code(&o), Some("INVALID_PARAMS"));
    assert!(message(&o).contains("at most 131071 bytes"), "{o}");
    assert!(
        !env.cache().exists(),
        "nothing is written for a refused call"
    );
}

#[test]
fn unknown_and_instruction_only_skills() {
    let env = Env::new();
    let ex = env.executor();
    let o = ex.execute("ecoh", json!({}));
    assert_eq!(code(&o), Some("SKILL_NOT_FOUND"));
    assert!(
        message(&o).starts_with("No skill is named `ecoh`; did you mean `echo`?"),
        "{o}"
    );
    assert_eq!(
        dbgpt::reply_for(&o),
        r#"{"chunks": [{"output_type": "text", "content": "Skill 'ecoh' not found"}]}"#
    );
    let o = ex.execute("ECHO", json!({}));
    assert!(o.ok(), "case-insensitive lookup, as load_skill: {o}");
    let o = ex.execute("instructions-only", json!({}));
    assert_eq!(code(&o), Some("NOT_RUNNABLE"));
    assert!(message(&o).contains("has no entrypoint"), "{o}");
}

#[test]
fn declared_permissions_must_be_granted() {
    let env = Env::new();
    let ex = env.executor();
    let o = ex.execute("needs-network", json!({}));
    assert_eq!(o.error_code(), Some(ErrorCode::PermissionDenied));
    assert_eq!(
        message(&o),
        "`needs-network` needs the permission `network`, which this run does not grant, so it was not started. Grant it explicitly to allow it: `--allow network` on the command line, or `Policy::allow` in the library."
    );
    assert!(
        o.meta().attempts == 0 && o.meta().exit.is_none(),
        "nothing ran"
    );
    let smtp = env.policy().allow("smtp").unwrap();
    assert_eq!(
        code(&ex.execute_with("needs-network", json!({}), &smtp)),
        Some("PERMISSION_DENIED")
    );
    let granted = env.policy().allow("network").unwrap();
    let o = ex.execute_with("needs-network", json!({}), &granted);
    assert_eq!(o.data(), Some(&json!("granted")), "{o}");
}

/// Runs `sleeper` (a script that forks a background `sleep` and sleeps itself, both far longer
/// than any limit here) under `policy` with timeouts of 1 s, then 4 s, 16 s and 64 s, until a run
/// was slow enough to start both processes before its timeout: on a busy machine a 1 s run may
/// be stopped before its script has even forked. Returns the outcome, its timeout and the pids.
fn sleeper_timed_out(policy: &Policy, out: &Path) -> (Outcome, u64, u32, u32) {
    let ex = Executor::new(&REGISTRY, Policy::new());
    for seconds in [1, 4, 16, 64] {
        let _ = std::fs::remove_dir_all(out);
        let policy = policy
            .clone()
            .output_dir(out)
            .timeout(Duration::from_secs(seconds));
        let start = Instant::now();
        let o = ex.execute_with("sleeper", json!({"seconds": 600}), &policy);
        let took = start.elapsed();
        assert_eq!(o.error_code(), Some(ErrorCode::Timeout), "{o}");
        // The script sleeps 600 s: the timeout stopped it, not its end.
        assert!(took < Duration::from_secs(600), "{took:?}");
        let pids = std::fs::read_to_string(out.join("parent.pid"))
            .ok()
            .zip(std::fs::read_to_string(out.join("child.pid")).ok());
        if let Some((parent, child)) = pids {
            return (
                o,
                seconds,
                parent.trim().parse().unwrap(),
                child.trim().parse().unwrap(),
            );
        }
    }
    panic!("`sleeper` never started its background sleep, even with 64 s");
}

#[test]
fn a_timeout_kills_the_whole_process_group() {
    let env = Env::new();
    // `sleeper` starts `sleep` and `sed`: it declares `subprocess`.
    let policy = env.pack_timeouts().allow("subprocess").unwrap();
    let (o, seconds, parent, child) = sleeper_timed_out(&policy, &env.out());
    let unit = if seconds == 1 { "second" } else { "seconds" };
    assert_eq!(
        message(&o),
        format!("`sleeper` did not finish within {seconds} {unit} and was stopped (its whole process group was killed). Try a smaller task, or allow more time (the `timeout` of the call or of the pack).")
    );
    assert!(
        wait_gone(parent),
        "the script {parent} outlived its timeout"
    );
    assert!(
        wait_gone(child),
        "the sleeper {child} it forked outlived the timeout"
    );
}

#[test]
fn the_pack_timeout_applies_and_the_policy_timeout_overrides_it() {
    let env = Env::new();
    let ex = Executor::new(&REGISTRY, env.pack_timeouts());
    // The pack's `timeout: 1`; its script sleeps 600 s, so it times out however busy the
    // machine is.
    let pack = env
        .pack_timeouts()
        .allow("subprocess")
        .unwrap()
        .output_dir(env.out());
    let o = ex.execute_with("sleeper", json!({"seconds": 600}), &pack);
    assert!(message(&o).contains("within 1 second "), "{o}");
    // The policy's timeout overrides the pack's.
    let quick = pack
        .clone()
        .output_dir(env.tmp.path().join("quick"))
        .timeout(Duration::from_millis(300));
    let o = ex.execute_with("sleeper", json!({"seconds": 600}), &quick);
    assert!(message(&o).contains("within 0.3 seconds"), "{o}");
    // Whatever the script had started when it was stopped is gone.
    for dir in [env.out(), env.tmp.path().join("quick")] {
        for name in ["parent.pid", "child.pid"] {
            if let Ok(pid) = std::fs::read_to_string(dir.join(name)) {
                assert!(
                    wait_gone(pid.trim().parse().unwrap()),
                    "{name} outlived the run"
                );
            }
        }
    }
}

#[test]
fn strays_left_behind_are_killed_when_the_script_exits() {
    let env = Env::new();
    let policy = env
        .policy()
        .allow("subprocess")
        .unwrap()
        .output_dir(env.out());
    let o = Executor::new(&REGISTRY, policy).execute("sleeper", json!({"seconds": 0.2}));
    assert_eq!(o.data(), Some(&json!("done")), "{o}");
    // The background sleeper still held stdout open; it was killed with the group.
    assert!(wait_gone(read_pid(&env.out(), "child.pid")));
}

#[test]
fn big_output_goes_to_a_file_and_the_limit_stops_the_script() {
    let env = Env::new();
    let policy = env.policy().output_cap(1000).output_limit(100_000);
    let ex = Executor::new(&REGISTRY, policy);
    let o = ex.execute("flood", json!({"bytes": 10_000}));
    assert!(o.ok(), "{o}");
    let data = o.data().unwrap();
    let file = PathBuf::from(data["output_file"].as_str().unwrap());
    assert_eq!(std::fs::read(&file).unwrap().len(), 10_000);
    assert_eq!(data["bytes"], json!(10_000));
    assert_eq!(data["truncated"], json!(true));
    assert_eq!(data["preview"].as_str().unwrap().len(), 1000);
    assert_eq!(o.meta().output_file.as_deref(), Some(file.as_path()));
    std::fs::remove_dir_all(file.parent().unwrap()).unwrap();

    let o = ex.execute("flood", json!({"bytes": 50_000_000}));
    assert_eq!(o.error_code(), Some(ErrorCode::OutputTooLarge), "{o}");
    let file = o.meta().output_file.clone().unwrap();
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 100_000);
    assert!(message(&o).starts_with("`flood` printed more than 100000 bytes and was stopped."));
    std::fs::remove_dir_all(file.parent().unwrap()).unwrap();
}

#[test]
fn failures_say_how_the_script_ended() {
    let env = Env::new();
    let ex = env.executor();
    let o = ex.execute("fails", json!({}));
    assert_eq!(o.error_code(), Some(ErrorCode::ExecFailed));
    assert_eq!(
        message(&o),
        "The script of `fails` exited with status 3. The end of its error output: Traceback (most recent call last):\n  File \"fail.py\", line 4\nValueError: the input is broken"
    );
    let o = ex.execute("silent", json!({"status": 4}));
    assert_eq!(
        message(&o),
        "The script of `silent` exited with status 4 and printed nothing."
    );
    let o = ex.execute("script-error", json!({}));
    let e = o.error().unwrap();
    assert_eq!(
        (e.code.as_str(), e.origin),
        ("NOTHING_TO_DO", Origin::Script)
    );
    assert_eq!(e.message, "There is nothing to do for this input.");
    for (kind, text) in [
        ("binary", "printed bytes that are not UTF-8 text"),
        ("shape", "`ok` must be true or false, not \"yes\""),
        ("extra", "it has keys besides ok, data and error (rows)"),
    ] {
        let o = ex.execute("bad-output", json!({ "kind": kind }));
        assert_eq!(o.error_code(), Some(ErrorCode::BadOutput), "{kind}");
        assert!(message(&o).contains(text), "{kind}: {o}");
    }
}

#[test]
fn text_json_chunks_and_nothing_become_data() {
    let env = Env::new();
    let ex = env.executor();
    let o = ex.execute("text-out", json!({"q": "é"}));
    assert_eq!(
        o.data(),
        Some(&json!(
            "got: {\"q\": \"\\u00e9\"}\nstdin: {\"q\": \"\\u00e9\"}"
        )),
        "bash gets $1 and stdin: {o}"
    );
    let o = ex.execute("chunks-out", json!({}));
    let chunks = &o.data().unwrap()["chunks"];
    assert_eq!(chunks[0]["output_type"], json!("markdown"));
    assert_eq!(
        chunks[1]["big"],
        json!("123456789012345678901234567890"),
        "no digit is lost: {o}"
    );
    assert_eq!(ex.execute("silent", json!({})).data(), Some(&Value::Null));
    if which("node") {
        let o = ex.execute("node-out", json!({"n": 5}));
        assert_eq!(o.data(), Some(&json!([5, 6, 7])), "{o}");
    } else {
        eprintln!("node is not on PATH: the node fixture is not run");
    }
}

fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

#[test]
fn only_idempotent_packs_are_retried() {
    let env = Env::new();
    let policy = env.policy().retries(2);
    let ex = Executor::new(&REGISTRY, policy);
    let o = ex.execute("flaky", json!({"succeed_on": 2}));
    assert_eq!(o.data(), Some(&json!("succeeded on attempt 2")), "{o}");
    assert_eq!(o.meta().attempts, 2);
    let o = ex.execute("flaky", json!({"succeed_on": 9}));
    assert_eq!((code(&o), o.meta().attempts), (Some("EXEC_FAILED"), 3));
    let o = ex.execute("flaky-unsafe", json!({"succeed_on": 2}));
    assert_eq!(
        (code(&o), o.meta().attempts),
        (Some("EXEC_FAILED"), 1),
        "{o}"
    );
}

#[test]
fn a_dry_run_shows_what_would_run_and_runs_and_writes_nothing() {
    let env = Env::new();
    let marker = env.tmp.path().join("marker");
    let policy = env.pack_timeouts().output_dir(env.out());
    let ex = Executor::new(&REGISTRY, policy);
    let o = ex.dry_run("echo", json!({"marker": marker.display().to_string()}));
    assert!(o.ok(), "{o}");
    let data = o.data().unwrap();
    assert_eq!(data["dry_run"], json!(true));
    let command: Vec<&str> = data["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(command[0].ends_with("python3"), "{command:?}");
    assert!(command[1].starts_with(&env.cache().join("packs/echo-").display().to_string()));
    assert!(command[1].ends_with("/scripts/echo.py"));
    assert_eq!(
        command[2],
        format!(
            r#"{{"marker": "{}", "text": "hello", "n": 1}}"#,
            marker.display()
        )
    );
    assert_eq!(data["stdin"], json!(command[2]));
    assert_eq!(data["working_dir"], json!(env.out().display().to_string()));
    assert_eq!(data["pack_materialised"], json!(false));
    let names: Vec<&str> = data["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"OUTPUT_DIR") && names.contains(&"PATH"),
        "{names:?}"
    );
    assert_eq!(data["limits"]["timeout_seconds"], json!(10.0));
    let totals: Vec<&str> = data["limits"]["not_enforced"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().split(':').next().unwrap())
        .collect();
    assert_eq!(totals, ["memory_total", "disk_total"]);
    assert_ne!(data["sandbox"]["mode"], json!("none"));
    assert!(!marker.exists(), "the script ran");
    assert!(!env.cache().exists(), "the cache was written");
    assert!(!env.out().exists(), "the output folder was made");
    // A dry run checks like a run.
    assert_eq!(
        code(&ex.dry_run("echo", json!({"n": "x"}))),
        Some("INVALID_PARAMS")
    );
    assert_eq!(
        code(&ex.dry_run("needs-network", json!({}))),
        Some("PERMISSION_DENIED")
    );
    assert!(!env.cache().exists());
}

#[test]
fn a_tampered_cache_is_rewritten_never_executed() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let pwned = env.tmp.path().join("pwned");
    let ex = Executor::new(&REGISTRY, env.policy().output_dir(env.out()));
    let o = ex.execute("echo", json!({}));
    assert!(o.ok() && !o.meta().cache_rewritten, "{o}");
    let pack = o.meta().pack_dir.clone().unwrap();
    let script = pack.join("scripts/echo.py");
    let original = std::fs::read(&script).unwrap();
    assert_eq!(
        std::fs::metadata(&script).unwrap().permissions().mode() & 0o777,
        0o400
    );
    assert_eq!(
        std::fs::metadata(&pack).unwrap().permissions().mode() & 0o777,
        0o500
    );

    let writable = set_mode;
    let evil = evil_script(&pwned);
    let attacks: Vec<Attack<'_>> = vec![
        (
            "modified script",
            Box::new(|| {
                writable(&script, 0o600);
                std::fs::write(&script, &evil).unwrap();
                writable(&script, 0o400);
            }),
        ),
        (
            "planted module",
            Box::new(|| {
                writable(&pack.join("scripts"), 0o700);
                std::fs::write(pack.join("scripts/json.py"), &evil).unwrap();
                writable(&pack.join("scripts"), 0o500);
            }),
        ),
        (
            "script replaced by a link",
            Box::new(|| {
                let elsewhere = env.tmp.path().join("evil.py");
                std::fs::write(&elsewhere, &evil).unwrap();
                writable(&pack.join("scripts"), 0o700);
                std::fs::remove_file(&script).unwrap();
                std::os::unix::fs::symlink(&elsewhere, &script).unwrap();
                writable(&pack.join("scripts"), 0o500);
            }),
        ),
        ("mode changed", Box::new(|| writable(&script, 0o700))),
    ];
    each_attack_is_undone(&ex, attacks, &pwned, &script, &original);
    let o = ex.execute("echo", json!({}));
    assert!(
        o.ok() && !o.meta().cache_rewritten,
        "a verified copy is kept: {o}"
    );
    // Removing the cache is always safe.
    let ex2 = Executor::new(&REGISTRY, env.policy());
    skillbake_rm(&env.cache());
    let o = ex2.execute("echo", json!({}));
    assert!(o.ok(), "{o}");
    std::fs::remove_dir_all(o.meta().output_dir.clone().unwrap()).unwrap();
}

#[test]
fn as_root_the_copy_the_script_reads_is_checked_before_every_run_and_never_executed_modified() {
    use std::os::unix::fs::MetadataExt;
    if !rustix::process::geteuid().is_root() {
        return;
    }
    let env = Env::new();
    let pwned = env.tmp.path().join("pwned");
    // A user and group of this test's own, so that no other test's run reads its copy.
    let (uid, gid) = (65529, 65529);
    let ex = Executor::new(
        &REGISTRY,
        env.policy().output_dir(env.out()).run_as(uid, gid),
    );
    let o = ex.execute("echo", json!({}));
    assert!(o.ok(), "{o}");
    let key = o.meta().pack_dir.clone().unwrap();
    let key = key.file_name().unwrap().to_str().unwrap();
    let uid_dir = format!("skillbake-runs-{}", rustix::process::geteuid().as_raw());
    let views = std::env::temp_dir().join(uid_dir).join("views");
    let view = views.join(format!("{key}-g{gid}"));
    let script = view.join("scripts/echo.py");
    let original = std::fs::read(&script).unwrap();
    let m = std::fs::metadata(&script).unwrap();
    assert_eq!((m.uid(), m.gid(), m.mode() & 0o7777), (0, gid, 0o440));
    let m = std::fs::metadata(&view).unwrap();
    assert_eq!((m.uid(), m.gid(), m.mode() & 0o7777), (0, gid, 0o750));
    // Passed through, never listed, by the script's user.
    assert_eq!(std::fs::metadata(&views).unwrap().mode() & 0o7777, 0o711);
    // Kept for the next run, which finds it as it was.
    let o = ex.execute("echo", json!({}));
    assert!(o.ok() && !o.meta().cache_rewritten, "{o}");

    let evil = evil_script(&pwned);
    let set = set_mode;
    let attacks: Vec<Attack<'_>> = vec![
        (
            "modified script",
            Box::new(|| {
                set(&script, 0o640);
                std::fs::write(&script, &evil).unwrap();
                set(&script, 0o440);
            }),
        ),
        (
            "planted module",
            Box::new(|| std::fs::write(view.join("scripts/json.py"), &evil).unwrap()),
        ),
        (
            "script made writable by the group",
            Box::new(|| set(&script, 0o660)),
        ),
        (
            "script given to the script's user",
            Box::new(|| std::os::unix::fs::chown(&script, Some(uid), None).unwrap()),
        ),
    ];
    each_attack_is_undone(&ex, attacks, &pwned, &script, &original);
    // Removing it is always safe.
    skillbake_rm(&view);
    let o = ex.execute("echo", json!({}));
    assert!(o.ok() && !o.meta().cache_rewritten, "{o}");
    assert_eq!(std::fs::read(&script).unwrap(), original);
    skillbake_rm(&view);
}

/// A tampering with a copy of the `echo` pack, and what it is called.
type Attack<'a> = (&'a str, Box<dyn Fn() + 'a>);

/// A script that, if it ever runs, creates `pwned` and answers `"evil"`.
fn evil_script(pwned: &Path) -> String {
    format!(
        "open({:?}, 'w').write('x')\nprint('{{\"ok\": true, \"data\": \"evil\"}}')\n",
        pwned.display().to_string()
    )
}

fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
}

/// Runs `echo` after each attack on the copy holding `script` (whose bytes are `original`): the
/// run succeeds with the real script, reports the copy rewritten, and no planted code ran.
fn each_attack_is_undone(
    ex: &Executor<'_>,
    attacks: Vec<Attack<'_>>,
    pwned: &Path,
    script: &Path,
    original: &[u8],
) {
    let planted = script.with_file_name("json.py");
    for (what, attack) in attacks {
        attack();
        let o = ex.execute("echo", json!({}));
        assert!(o.ok(), "{what}: {o}");
        assert_ne!(o.data(), Some(&json!("evil")), "{what}");
        assert!(o.meta().cache_rewritten, "{what}");
        assert!(!pwned.exists(), "{what}: the modified copy was executed");
        assert_eq!(std::fs::read(script).unwrap(), original, "{what}");
        assert!(!planted.exists(), "{what}");
    }
}

/// Removes a cache folder whose folders are read-only.
fn skillbake_rm(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    for e in walk(dir) {
        if e.is_dir() {
            std::fs::set_permissions(&e, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
    }
    std::fs::remove_dir_all(dir).unwrap();
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut all = vec![dir.to_path_buf()];
    let mut i = 0;
    while let Some(d) = all.get(i).cloned() {
        i += 1;
        if d.is_dir() && !d.is_symlink() {
            all.extend(std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().path()));
        }
    }
    all
}

#[test]
fn text_mode_calls_are_found_and_checked() {
    let env = Env::new();
    let ex = env.executor();
    let call = ex
        .parse_call("I'll echo it.\n```json\n{\"skill\": \"echo\", \"params\": {\"n\": 3}}\n```")
        .unwrap();
    assert_eq!(
        (call.skill, call.params),
        ("echo", json!({"n": 3, "text": "hello"}))
    );
    let call = ex
        .parse_call(r#"Calling {"skill": "Echo", "params": "{\"n\": 0}"} now"#)
        .unwrap();
    assert_eq!(call.skill, "echo");
    for (text, want) in [
        ("no call at all", "INVALID_CALL"),
        (r#"{"skill": 3}"#, "INVALID_CALL"),
        (r#"{"skill": "nope", "params": {}}"#, "SKILL_NOT_FOUND"),
        (
            r#"{"skill": "echo", "params": {"n": -5}}"#,
            "INVALID_PARAMS",
        ),
        (
            r#"{"skill": "echo", "params": "not json"}"#,
            "INVALID_PARAMS",
        ),
        (r#"{"skill": "instructions-only"}"#, "NOT_RUNNABLE"),
    ] {
        let o = ex.parse_call(text).unwrap_err();
        assert_eq!(code(&o), Some(want), "{text}: {o}");
        assert!(
            !o.ok()
                && o.to_json()
                    .starts_with(r#"{"ok":false,"data":null,"error":{"code":""#)
        );
    }
    assert!(
        !env.cache().exists(),
        "nothing is written before the first run"
    );
}

#[test]
fn dbgpt_form_answers_dbgpts_chunks() {
    let env = Env::new();
    let policy = env.policy().allow("subprocess").unwrap();
    let ex = Executor::new(&REGISTRY, policy.output_dir(env.out()));
    let reply = |skill: &str, script: &str, args: Value| {
        env.redact(&dbgpt::reply_for(&ex.execute_script_file(
            skill,
            script,
            Some(args),
        )))
    };
    assert_eq!(
        reply("nope", "x.py", json!({})),
        r#"{"chunks": [{"output_type": "text", "content": "Script file 'x.py' not found"}]}"#
    );
    assert_eq!(
        reply("echo", "/scripts/missing.py", json!({})),
        r#"{"chunks": [{"output_type": "text", "content": "Script file 'missing.py' not found"}]}"#
    );
    assert_eq!(
        reply("echo", "../SKILL.md", json!({})),
        r#"{"chunks": [{"output_type": "text", "content": "Script file '../SKILL.md' not found"}]}"#
    );
    assert_eq!(
        reply("fails", "scripts/fail.py", json!({})),
        r#"{"chunks": [{"output_type": "text", "content": "partial output"}, {"output_type": "text", "content": "[ERROR] Traceback (most recent call last):\n  File \"fail.py\", line 4\nValueError: the input is broken"}, {"output_type": "text", "content": "Exit code: 3"}]}"#
    );
    assert_eq!(
        reply("images", "chart.py", json!({})),
        r#"{"chunks": [{"output_type": "text", "content": "chart written"}, {"output_type": "image", "content": "[TMP]/out/chart.png"}]}"#
    );
    assert_eq!(
        reply("silent", "silent.py", json!({})),
        r#"{"chunks": [{"output_type": "text", "content": "Script executed successfully (no output)"}]}"#
    );
    // The pack's own `timeout: 1` against a script that sleeps 600 s.
    let paced = Executor::new(
        &REGISTRY,
        env.pack_timeouts()
            .allow("subprocess")
            .unwrap()
            .output_dir(env.out()),
    );
    assert_eq!(
        env.redact(&dbgpt::reply_for(&paced.execute_script_file(
            "sleeper",
            "sleep.sh",
            Some(json!({"seconds": 600})),
        ))),
        r#"{"chunks": [{"output_type": "text", "content": "Script execution timed out (1s limit)"}]}"#
    );
    // DB-GPT passes the arguments as given: no defaults.
    let o = ex.execute_script_file("echo", "echo.py", Some(json!({"n": 7})));
    assert_eq!(o.data().unwrap()["argv"], json!([r#"{"n": 7}"#]));
    assert!(reply("echo", "echo.py", json!({"n": "x"})).contains("do not match its schema.json"));
}

#[test]
fn one_executor_serves_many_threads() {
    let env = Env::new();
    let ex = env.executor();
    let outs: Vec<Outcome> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..6)
            .map(|i| {
                let ex = &ex;
                s.spawn(move || ex.execute("echo", json!({ "n": i })))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut dirs: Vec<PathBuf> = outs
        .iter()
        .map(|o| {
            assert!(o.ok(), "{o}");
            o.meta().output_dir.clone().unwrap()
        })
        .collect();
    dirs.sort();
    dirs.dedup();
    assert_eq!(dirs.len(), 6, "every run has its own output folder");
    for d in dirs {
        std::fs::remove_dir_all(d).unwrap();
    }
}

/// Every executor code, produced by a real pack, in the exact result shape.
#[test]
fn every_code_comes_from_a_real_pack() {
    let env = Env::new();
    let policy = env
        .policy()
        .allow("subprocess")
        .unwrap()
        .output_cap(1000)
        .output_limit(5000);
    let ex = Executor::new(&REGISTRY, policy);
    // The pack's own `timeout: 1` against a script that sleeps 30 s.
    let paced = Executor::new(&REGISTRY, env.pack_timeouts().allow("subprocess").unwrap());
    let cases: Vec<(ErrorCode, Outcome)> = vec![
        (ErrorCode::SkillNotFound, ex.execute("nope", json!({}))),
        (
            ErrorCode::NotRunnable,
            ex.execute("instructions-only", json!({})),
        ),
        (
            ErrorCode::InvalidParams,
            ex.execute("node-out", json!({"n": 1.5})),
        ),
        (
            ErrorCode::InvalidCall,
            ex.parse_call("Let me think about it.").unwrap_err(),
        ),
        (
            ErrorCode::PermissionDenied,
            ex.execute("needs-network", json!({})),
        ),
        (ErrorCode::Timeout, paced.execute("sleeper", json!({}))),
        (
            ErrorCode::OutputTooLarge,
            ex.execute("flood", json!({"bytes": 1_000_000})),
        ),
        (ErrorCode::ExecFailed, ex.execute("fails", json!({}))),
        (
            ErrorCode::BadOutput,
            ex.execute("bad-output", json!({"kind": "shape"})),
        ),
    ];
    let covered: Vec<ErrorCode> = cases.iter().map(|(c, _)| *c).collect();
    assert_eq!(covered, ErrorCode::ALL, "a code without a fixture");
    let mut text = String::new();
    for (want, o) in &cases {
        assert_eq!(o.error_code(), Some(*want), "{o}");
        text.push_str(&env.redact(&o.to_json()));
        text.push('\n');
        if let Some(d) = &o.meta().output_dir {
            let _ = std::fs::remove_dir_all(d);
        }
    }
    insta::assert_snapshot!("every-code", text);
}

#[test]
fn a_cancel_flag_stops_the_run_and_its_process_group() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let env = Env::new();
    let flag = Arc::new(AtomicBool::new(false));
    // `sleeper` starts `sleep` and `sed`: it declares `subprocess`.
    let policy = env
        .policy()
        .allow("subprocess")
        .unwrap()
        .output_dir(env.out())
        .timeout(Duration::from_secs(600))
        .cancel_on(Arc::clone(&flag));
    let ex = Executor::new(&REGISTRY, policy);
    let start = Instant::now();
    let o = std::thread::scope(|s| {
        let run = s.spawn(|| ex.execute("sleeper", json!({"seconds": 600})));
        // The script writes `parent.pid` once its background sleep has started.
        while !env.out().join("parent.pid").exists() {
            assert!(start.elapsed() < EVENT_WITHIN, "the script never started");
            std::thread::sleep(Duration::from_millis(20));
        }
        flag.store(true, Ordering::Relaxed);
        run.join().unwrap()
    });
    assert_eq!(o.error_code(), Some(ErrorCode::ExecFailed), "{o}");
    assert!(message(&o).contains("was cancelled"), "{o}");
    // Neither the 600 s timeout nor the script's own end stopped it.
    assert!(start.elapsed() < Duration::from_secs(600), "{o}");
    assert!(wait_gone(read_pid(&env.out(), "child.pid")));
    assert!(wait_gone(read_pid(&env.out(), "parent.pid")));
    // While the flag is set nothing starts.
    let o = ex.execute("echo", json!({}));
    assert!(message(&o).contains("cancelled before it started"), "{o}");
}

/// Two versions of one skill side by side: a request names one pack, and the script that runs is
/// that pack's own, whatever the range.
#[test]
fn a_run_uses_the_script_of_the_version_it_names() {
    let env = Env::new();
    let ex = Executor::new(&REGISTRY, env.policy().output_dir(env.out()));
    for (request, script) in [
        ("versioned", "2.0.0"),
        ("versioned@2", "2.0.0"),
        ("versioned@1", "1.0.0"),
        ("versioned@=1.0.0", "1.0.0"),
        ("versioned@>=1, <2", "1.0.0"),
    ] {
        let o = ex.execute(request, json!({}));
        assert_eq!(o.data(), Some(&json!({"script": script})), "{request}: {o}");
        assert_eq!(o.meta().version, Some(script), "{request}: {o}");
    }
    let o = ex.execute("versioned@3", json!({}));
    assert_eq!(code(&o), Some("SKILL_NOT_FOUND"), "{o}");
    assert_eq!(
        message(&o),
        "No embedded version of `versioned` matches `versioned@3`; the versions are 1.0.0, 2.0.0. Ask for one of them (`versioned@=2.0.0`), or for `versioned` alone to get the version agents get by name."
    );
    let o = ex.execute("versioned@one", json!({}));
    assert_eq!(code(&o), Some("SKILL_NOT_FOUND"), "{o}");
    assert!(message(&o).starts_with("`versioned@one` is not a skill name followed by a version range: the text after `@` does not parse ("), "{o}");
}
