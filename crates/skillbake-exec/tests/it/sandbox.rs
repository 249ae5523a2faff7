//! The attacks of `tests/fixtures/sandbox` through the real executor, on this machine's kernel:
//! each pack is denied without the permission (it does not declare it, the kernel stops it) and
//! its twin that declares the permission works when the policy grants it. Each test checks that
//! nothing of the attack escaped: the canary file unchanged, no connection accepted, no process
//! of the run left. Where the kernel lacks a mechanism, the test checks that the result's
//! metadata names the gap instead.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use serde_json::{json, Value};
use skillbake_exec::{AuditLog, ErrorCode, Executor, Outcome, Policy, ResourceLimits};
use skillbake_sandbox::probe;
use skillbake_sandbox_fixtures::REGISTRY;
use std::io::{ErrorKind, Read};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const CANARY: &str = "canary: a secret of the user\n";

/// The limit of every run that must finish (the packs' own `timeout` is for the attacks that
/// must be stopped): no loaded machine takes this long, so no outcome depends on its speed.
const FINISH_WITHIN: Duration = Duration::from_secs(120);

/// How long a wait for something that must happen may take before the test fails; a wait ends
/// as soon as the thing happens.
const EVENT_WITHIN: Duration = Duration::from_secs(60);

/// A private cache, an outside folder with a canary that the script's user could read and write
/// by its permission bits (only the sandbox stands in the way), and run folders.
struct Env {
    tmp: tempfile::TempDir,
    canary: PathBuf,
}

impl Env {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::set_permissions(tmp.path(), PermissionsExt::from_mode(0o755)).unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::set_permissions(&outside, PermissionsExt::from_mode(0o777)).unwrap();
        let canary = outside.join("canary.txt");
        std::fs::write(&canary, CANARY).unwrap();
        std::fs::set_permissions(&canary, PermissionsExt::from_mode(0o666)).unwrap();
        Env { tmp, canary }
    }

    fn out(&self) -> PathBuf {
        self.tmp.path().join("out")
    }

    fn policy(&self) -> Policy {
        Policy::new()
            .cache_dir(self.tmp.path().join("cache"))
            .output_dir(self.out())
            .timeout(FINISH_WITHIN)
    }

    fn executor(&self) -> Executor<'static> {
        Executor::new(&REGISTRY, self.policy())
    }

    fn canary_intact(&self) {
        assert_eq!(std::fs::read_to_string(&self.canary).unwrap(), CANARY);
        let names: Vec<String> = std::fs::read_dir(self.canary.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            ["canary.txt"],
            "files appeared outside the output folder"
        );
    }
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn script_error(o: &Outcome) -> String {
    o.error()
        .map_or(String::new(), |e| format!("{} {}", e.code, e.message))
}

/// The state of a guard in the result's metadata.
fn guard(o: &Outcome, name: &str) -> String {
    let applied = o.meta().confinement.applied.as_ref();
    applied
        .and_then(|a| a.controls.iter().find(|c| c.guard.as_str() == name))
        .map_or_else(String::new, |c| c.state.as_str().to_string())
}

/// Live processes whose environment holds `OUTPUT_DIR=<out>`: the run's processes.
fn processes_of(out: &Path, zombies: bool) -> Vec<u32> {
    let needle = format!("OUTPUT_DIR={}\0", out.display());
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let state = stat.rsplit_once(") ").and_then(|(_, r)| r.chars().next());
        if !zombies && matches!(state, Some('Z') | Some('X')) {
            continue;
        }
        let env = std::fs::read(e.path().join("environ")).unwrap_or_default();
        if env.windows(needle.len()).any(|w| w == needle.as_bytes()) {
            found.push(pid);
        }
    }
    found
}

/// Waits (bounded) until no process of the run is alive.
fn assert_nothing_left(out: &Path) {
    let start = Instant::now();
    loop {
        let left = processes_of(out, false);
        if left.is_empty() {
            return;
        }
        assert!(
            start.elapsed() < EVENT_WITHIN,
            "processes of the run outlived it: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn reading_a_canary_outside_the_pack() {
    let env = Env::new();
    let ex = env.executor();
    let o = ex.execute("steal-file", json!({"path": p(&env.canary)}));
    if probe().landlock_fs() {
        // Landlock's answer, or the view's, where the canary does not exist.
        assert!(
            [
                "READ_DENIED errno 13: Permission denied",
                "READ_DENIED errno 2: No such file or directory"
            ]
            .contains(&script_error(&o).as_str()),
            "{o}"
        );
        assert_eq!(guard(&o, "file_read"), "enforced");
    } else {
        assert_eq!(guard(&o, "file_read"), "not_enforced");
    }
    // The twin declares filesystem:read: refused until granted, then it reads.
    let o = ex.execute("read-granted", json!({"path": p(&env.canary)}));
    assert_eq!(o.error_code(), Some(ErrorCode::PermissionDenied), "{o}");
    assert!(script_error(&o).contains("--allow filesystem:read"), "{o}");
    let granted = env.policy().allow("filesystem:read").unwrap();
    let o = ex.execute_with("read-granted", json!({"path": p(&env.canary)}), &granted);
    assert_eq!(o.data(), Some(&json!(CANARY)), "{o}");
    assert_eq!(guard(&o, "file_read"), "allowed");
    // Granting it to the policy does not give it to a pack that does not declare it.
    let o = ex.execute_with("steal-file", json!({"path": p(&env.canary)}), &granted);
    if probe().landlock_fs() {
        assert!(script_error(&o).starts_with("READ_DENIED"), "{o}");
    }
    env.canary_intact();
}

#[test]
fn writing_outside_the_output_folder() {
    let env = Env::new();
    let ex = env.executor();
    let o = ex.execute("write-outside", json!({"path": p(&env.canary)}));
    if probe().landlock_fs() {
        // Landlock's answer, or the read-only view's (which the kernel checks first).
        assert!(
            [
                "WRITE_DENIED errno 13: Permission denied",
                "WRITE_DENIED errno 30: Read-only file system",
                "WRITE_DENIED errno 2: No such file or directory"
            ]
            .contains(&script_error(&o).as_str()),
            "{o}"
        );
        env.canary_intact();
    }
    let granted = env.policy().allow("filesystem:write").unwrap();
    let victim = env.canary.with_file_name("granted.txt");
    std::fs::write(&victim, "").unwrap();
    std::fs::set_permissions(&victim, PermissionsExt::from_mode(0o666)).unwrap();
    let o = ex.execute_with("write-granted", json!({"path": p(&victim)}), &granted);
    assert_eq!(o.data(), Some(&json!("written")), "{o}");
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "written by the skill\n"
    );
    std::fs::remove_file(&victim).unwrap();
    env.canary_intact();
}

fn listener() -> (TcpListener, u16) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    let port = l.local_addr().unwrap().port();
    (l, port)
}

/// What one connection left in the listener's queue (bounded wait).
fn accepted(l: &TcpListener) -> Option<Vec<u8>> {
    for _ in 0..20 {
        match l.accept() {
            Ok((mut c, _)) => {
                c.set_nonblocking(false).unwrap();
                c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
                let mut buf = Vec::new();
                let _ = c.read_to_end(&mut buf);
                return Some(buf);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(25))
            }
            Err(e) => panic!("accept: {e}"),
        }
    }
    None
}

#[test]
fn connecting_to_a_listener_on_loopback() {
    let env = Env::new();
    let ex = env.executor();
    let (l, port) = listener();
    let o = ex.execute("phone-home", json!({"port": port}));
    let pr = probe();
    if pr.seccomp || pr.network_namespace {
        assert!(script_error(&o).starts_with("CONNECT_DENIED"), "{o}");
        assert!(accepted(&l).is_none(), "a connection was accepted");
        assert_eq!(guard(&o, "network"), "enforced");
    }
    // smtp opens the mail ports only: this port stays closed.
    let smtp = env.policy().allow("smtp").unwrap();
    let o = ex.execute_with("mail-only", json!({"port": port}), &smtp);
    if pr.landlock_tcp() {
        assert_eq!(
            script_error(&o),
            "CONNECT_DENIED errno 13: Permission denied",
            "{o}"
        );
        assert!(accepted(&l).is_none(), "a connection was accepted");
    } else {
        assert_eq!(o.error_code(), Some(ErrorCode::PermissionDenied), "{o}");
        assert!(script_error(&o).contains("--unconfined"), "{o}");
    }
    // network opens everything.
    let network = env.policy().allow("network").unwrap();
    let o = ex.execute_with("phone-granted", json!({"port": port}), &network);
    assert_eq!(o.data(), Some(&json!("connected")), "{o}");
    assert_eq!(accepted(&l).as_deref(), Some(&b"exfiltrated"[..]));
}

#[test]
fn reading_a_canary_environment_variable() {
    let env = Env::new();
    // A variable only the policy knows, and what the executor sets.
    let ex = env.executor();
    let o = ex.execute("env-dump", json!({}));
    assert!(o.ok(), "{o}");
    let names: Vec<&str> = o.data().unwrap()["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let allowed = |name: &str| {
        [
            "HOME",
            "LANG",
            "LANGUAGE",
            "OUTPUT_DIR",
            "PATH",
            "PYTHONDONTWRITEBYTECODE",
            "PYTHONNOUSERSITE",
            "TMPDIR",
            "TZ",
        ]
        .contains(&name)
            || name.starts_with("LC_")
    };
    for name in &names {
        assert!(
            allowed(name),
            "{name} leaked into the script's environment: {names:?}"
        );
    }
    // So every other variable of this test process (CARGO_*, the user's own) stayed hidden.
    assert!(std::env::vars().any(|(k, _)| !allowed(&k)));
    assert_eq!(o.data().unwrap()["canary"], Value::Null);
    assert_eq!(guard(&o, "environment"), "enforced");

    // Granted explicitly: a value set by the policy reaches the script.
    let policy = env.policy().env("SKILLBAKE_TEST_CANARY", "sk-canary-0000");
    let o = ex.execute_with("env-dump", json!({}), &policy);
    assert_eq!(o.data().unwrap()["canary"], json!("sk-canary-0000"), "{o}");
    // And the parent's own variable passes only when named: PATH is passed anyway, so use a
    // variable every test process has and the allow-list does not keep.
    let (name, _) = std::env::vars()
        .find(|(k, _)| k == "CARGO_PKG_NAME" || k == "CARGO_MANIFEST_DIR")
        .unwrap();
    assert!(!names.contains(&name.as_str()));
    let policy = env.policy().pass_env(&name);
    let o = ex.execute_with("env-dump", json!({}), &policy);
    let names = o.data().unwrap()["names"].clone();
    assert!(names.as_array().unwrap().contains(&json!(name)), "{o}");
}

#[test]
fn a_fork_bomb_is_bounded_and_nothing_is_left() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let env = Env::new();
    let limit = 16;
    let stop = Arc::new(AtomicBool::new(false));
    // The bomb forks until the kernel refuses, writes `forked.txt`, and keeps every process
    // alive: the test samples them until that file appears (or, where nothing bounds the bomb,
    // until more than the limit are seen), then cancels the run.
    let policy = env
        .policy()
        .limits(ResourceLimits::new().processes(limit))
        .cancel_on(Arc::clone(&stop));
    let ex = Executor::new(&REGISTRY, policy);
    let out = env.out();
    let forked = out.join("forked.txt");
    let (o, most) = std::thread::scope(|s| {
        let run = s.spawn(|| ex.execute("fork-bomb", json!({})));
        let start = Instant::now();
        let mut most = 0;
        loop {
            most = most.max(processes_of(&out, true).len());
            let unbounded = most as u64 > limit;
            if forked.exists() || unbounded || start.elapsed() > EVENT_WITHIN || run.is_finished() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // Every process the bomb made sleeps 60 s: one more look sees all of them.
        most = most.max(processes_of(&out, true).len());
        stop.store(true, Ordering::Relaxed);
        (run.join().unwrap(), most)
    });
    assert_eq!(o.error_code(), Some(ErrorCode::ExecFailed), "{o}");
    assert!(o.to_json().contains("was cancelled"), "{o}");
    let forked = std::fs::read_to_string(&forked).unwrap_or_default();
    let pr = probe();
    if pr.user_namespace {
        assert_eq!(forked, format!("forked {}, then errno 11\n", limit - 1));
        assert_eq!(guard(&o, "processes"), "enforced");
    }
    if pr.user_namespace || pr.root {
        assert!(most as u64 <= limit, "{most} processes at once");
        assert!(most >= 8, "the bomb did not run: {most}");
    }
    assert_nothing_left(&out);

    // The classic shell bomb, stopped by the pack's own 3 s timeout, whatever it reached by
    // then.
    let ex = Executor::new(
        &REGISTRY,
        env.policy()
            .limits(ResourceLimits::new().processes(limit))
            .timeout(Duration::from_secs(3)),
    );
    let o = ex.execute("shell-bomb", json!({}));
    assert!(o.meta().exit.is_some(), "{o}");
    assert_nothing_left(&out);
}

#[test]
fn a_cpu_spin_is_stopped_by_the_cpu_limit() {
    let env = Env::new();
    // A timeout no loaded machine reaches: the CPU limit (1 s of CPU, however long that takes
    // in wall time) is what stops the spin, as the error code says.
    let policy = env
        .policy()
        .limits(ResourceLimits::new().cpu_seconds(1))
        .timeout(Duration::from_secs(600));
    let o = Executor::new(&REGISTRY, policy).execute("cpu-spin", json!({}));
    assert_eq!(o.error_code(), Some(ErrorCode::ExecFailed), "{o}");
    assert!(
        script_error(&o).contains("SIGXCPU") || script_error(&o).contains("SIGKILL"),
        "{o}"
    );
    assert_nothing_left(&env.out());
}

/// Set in the process that [`two_hundred_megabytes_of_stdout`] starts to measure itself alone.
const MEASURE_ALONE: &str = "SKILLBAKE_TEST_MEASURE_ALONE";

#[test]
fn two_hundred_megabytes_of_stdout() {
    // The peak memory of a process is the sum of all its threads: measured here, next to the
    // tests that run at the same time, it would be theirs too. So the test runs once more in a
    // process of its own, one test on one thread, and that run measures.
    if std::env::var_os(MEASURE_ALONE).is_none() {
        let o = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "sandbox::two_hundred_megabytes_of_stdout",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(MEASURE_ALONE, "1")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.success() && stdout.contains("1 passed"),
            "alone in its process, the test failed:\n{stdout}\n{stderr}"
        );
        return;
    }
    let env = Env::new();
    let before = peak_rss();
    let o = env.executor().execute("stdout-flood", json!({}));
    assert_eq!(o.error_code(), Some(ErrorCode::OutputTooLarge), "{o}");
    let kept = o.meta().stdout_bytes;
    assert!(kept <= 64 << 20, "{kept} bytes taken");
    let file = o.meta().output_file.clone().unwrap();
    assert!(std::fs::metadata(&file).unwrap().len() <= 64 << 20);
    // The executor streamed it: its peak memory did not grow by anything near 200 MB.
    let grown = peak_rss().saturating_sub(before);
    assert!(grown < 48 << 20, "peak memory grew by {grown} bytes");
    assert_nothing_left(&env.out());
}

/// This process's peak resident memory in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0)
        * 1024
}

#[test]
fn a_symlink_planted_in_the_output_folder_pointing_outside() {
    let env = Env::new();
    let out = env.out();
    std::fs::create_dir(&out).unwrap();
    std::fs::set_permissions(&out, PermissionsExt::from_mode(0o777)).unwrap();
    // A link left in the output folder (by an earlier run, say) to the canary.
    std::os::unix::fs::symlink(&env.canary, out.join("planted")).unwrap();
    let o = env
        .executor()
        .execute("plant-symlink", json!({"path": p(&env.canary)}));
    assert!(o.ok(), "{o}");
    let stdout = o.data().unwrap()["preview"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| o.data().unwrap().to_string());
    if probe().landlock_fs() {
        assert!(
            stdout.starts_with(r#"{"symlink": "denied 13", "hardlink": "denied"#),
            "{stdout}"
        );
        assert!(
            stdout.contains(r#""write-through-planted": "denied 13""#)
                || stdout.contains(r#""write-through-planted": "denied 30""#)
                || stdout.contains(r#""write-through-planted": "denied 2""#),
            "{stdout}"
        );
    }
    // The executor wrote the whole output to a fresh file of its own, not through a link.
    let file = o.meta().output_file.clone().unwrap();
    assert!(!std::fs::symlink_metadata(&file)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::metadata(&file).unwrap().len() > 2 << 20);
    env.canary_intact();
}

#[test]
fn leaving_the_process_group_leaves_nothing_behind() {
    let env = Env::new();
    let o = env.executor().execute("escape-group", json!({}));
    assert!(o.ok(), "{o}");
    if probe().seccomp {
        assert_eq!(o.data().unwrap()["setsid"], json!("denied 1"));
        assert_eq!(guard(&o, "process_group"), "enforced");
    }
    assert_nothing_left(&env.out());
}

#[test]
fn starting_other_programs_needs_subprocess() {
    let env = Env::new();
    let ex = env.executor();
    let o = ex.execute("run-program", json!({}));
    if probe().exec_guard && probe().seccomp {
        // The exec guard answers before Landlock looks at the file.
        assert_eq!(
            script_error(&o),
            "EXEC_DENIED errno 1: Operation not permitted",
            "{o}"
        );
    } else if probe().landlock_fs() {
        assert_eq!(
            script_error(&o),
            "EXEC_DENIED errno 13: Permission denied",
            "{o}"
        );
    }
    let granted = env.policy().allow("subprocess").unwrap();
    let o = ex.execute_with("run-granted", json!({}), &granted);
    assert_eq!(o.data(), Some(&json!("started")), "{o}");
}

#[test]
fn exclusive_packs_run_one_at_a_time() {
    let env = Env::new();
    let ex = env.executor();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let o = ex.execute("config-writer", json!({}));
                assert!(o.ok(), "{o}");
            });
        }
    });
    let log = std::fs::read_to_string(env.out().join("log.txt")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 8, "{log}");
    for pair in lines.chunks(2) {
        let (start, end) = (pair[0], pair[1]);
        assert!(
            start.starts_with("start ") && end.starts_with("end "),
            "{log}"
        );
        assert_eq!(start[6..], end[4..], "runs overlapped:\n{log}");
    }
}

#[test]
fn the_audit_log_has_one_line_per_call_from_many_threads() {
    let env = Env::new();
    let path = env.tmp.path().join("audit.jsonl");
    let policy = env.policy().audit_log(AuditLog::open(&path).unwrap());
    let ex = Executor::new(&REGISTRY, policy);
    // Folders an earlier, failed run of this test left.
    let mut old = Vec::new();
    while let Some(f) = run_folder_with("keep-secret", "secret.txt", &old) {
        old.push(f);
    }
    std::thread::scope(|s| {
        for i in 0..8 {
            let ex = &ex;
            s.spawn(move || {
                if i % 2 == 0 {
                    ex.execute("env-dump", json!({}));
                } else {
                    ex.execute("steal-file", json!({"path": format!("/nonexistent/{i}")}));
                }
            });
        }
    });
    ex.execute("no-such-skill", json!({"secret": "hunter2"}));
    ex.dry_run("env-dump", json!({}));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("hunter2"), "the parameters are not logged");
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 10);
    for r in &records {
        for key in [
            "time",
            "skill",
            "version",
            "params_sha256",
            "granted",
            "used",
            "outcome",
            "exit",
            "duration_ms",
            "sandbox",
        ] {
            assert!(r.get(key).is_some(), "{key} missing in {r}");
        }
        assert_eq!(r["params_sha256"].as_str().unwrap().len(), 64);
    }
    let last = &records[9];
    assert_eq!(last["dry_run"], json!(true));
    let missing = &records[8];
    assert_eq!(missing["outcome"], json!("SKILL_NOT_FOUND"));
    assert_eq!(missing["exit"], Value::Null);
    let ran = records
        .iter()
        .filter(|r| r["skill"] == "env-dump" && r["dry_run"] == false)
        .count();
    assert_eq!(ran, 4);
    if probe().landlock_scope() && probe().seccomp && probe().user_namespace {
        assert!(
            records[..8].iter().all(|r| r["sandbox"] == "confined"),
            "{text}"
        );
    }
}

#[test]
fn a_pth_file_planted_in_a_shared_output_folder_never_runs_later() {
    let env = Env::new();
    let ex = env.executor();
    // Two runs share the output folder the policy names.
    let o = ex.execute("plant-usersite", json!({}));
    assert!(o.ok(), "{o}");
    let data = o.data().unwrap();
    // HOME is the run's own, not the output folder.
    assert_ne!(data["home"], data["output"], "{o}");
    assert!(!Path::new(data["home"].as_str().unwrap()).exists(), "{o}");
    for victim in ["env-dump", "plant-usersite"] {
        let o = ex.execute(victim, json!({}));
        assert!(o.ok(), "{o}");
    }
    let ran: Vec<String> = std::fs::read_dir(env.out())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("pth-ran-"))
        .collect();
    assert!(ran.is_empty(), "the planted .pth ran: {ran:?}");
    let o = ex.execute("env-dump", json!({}));
    let names = o.data().unwrap()["names"].clone();
    assert!(
        names
            .as_array()
            .unwrap()
            .contains(&json!("PYTHONNOUSERSITE")),
        "{o}"
    );
}

#[test]
fn a_root_caller_never_follows_another_users_symlink_to_the_output_folder() {
    if !probe().root {
        return;
    }
    use std::os::unix::fs::MetadataExt;
    let env = Env::new();
    // An empty root-only folder, and a link to it where the output folder should be (made by
    // a local user in a folder they can write).
    let victim = env.tmp.path().join("root-only");
    std::fs::create_dir(&victim).unwrap();
    std::fs::set_permissions(&victim, PermissionsExt::from_mode(0o700)).unwrap();
    std::os::unix::fs::symlink(&victim, env.out()).unwrap();
    std::os::unix::fs::lchown(env.out(), Some(65534), Some(65534)).unwrap();
    let o = env
        .executor()
        .execute("write-outside", json!({"path": "/dev/null"}));
    assert_eq!(o.error_code(), Some(ErrorCode::ExecFailed), "{o}");
    assert!(o.to_string().contains("symbolic link of user 65534"), "{o}");
    // A link on the way to a folder to be made there.
    let policy = env.policy().output_dir(env.out().join("new"));
    let o = env
        .executor()
        .execute_with("write-outside", json!({"path": "/dev/null"}), &policy);
    assert_eq!(o.error_code(), Some(ErrorCode::ExecFailed), "{o}");
    assert!(o.to_string().contains("symbolic link of user 65534"), "{o}");
    let m = std::fs::metadata(&victim).unwrap();
    assert_eq!((m.uid(), m.gid(), m.mode() & 0o7777), (0, 0, 0o700));
    assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0);
    // Root's own links are the system's, and are followed.
    let real = env.tmp.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = env.tmp.path().join("by-root");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let policy = env.policy().output_dir(link.join("out"));
    let o = env.executor().execute_with("env-dump", json!({}), &policy);
    assert!(o.ok(), "{o}");
    assert!(real.join("out").is_dir());
}

#[test]
fn a_run_that_replaces_its_output_folder_by_a_link_gets_no_file_written_there() {
    use std::os::unix::fs::MetadataExt;
    let env = Env::new();
    // The output folder in a folder everyone may write (not sticky), and a folder only its
    // owner may enter.
    let shared = env.tmp.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, PermissionsExt::from_mode(0o777)).unwrap();
    let out = shared.join("out");
    let victim = env.tmp.path().join("root-only");
    std::fs::create_dir(&victim).unwrap();
    std::fs::set_permissions(&victim, PermissionsExt::from_mode(0o700)).unwrap();
    let policy = env
        .policy()
        .output_dir(&out)
        .allow("filesystem:write")
        .unwrap();
    let o = env
        .executor()
        .execute_with("swap-output", json!({"path": p(&victim)}), &policy);
    assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0, "{o}");
    // The whole stdout went to the real (moved) output folder.
    let moved = shared.join("out.moved");
    let file = moved.join("skillbake-stdout.txt");
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .starts_with("attacker text\n"),
        "{o}"
    );
    if probe().root {
        // Root kept owning the folder (only its group was handed over).
        assert_eq!(std::fs::metadata(&moved).unwrap().uid(), 0, "{o}");
    }
}

#[test]
fn the_script_leads_a_session_of_its_own() {
    let env = Env::new();
    let o = env.executor().execute("own-session", json!({}));
    assert!(o.ok(), "{o}");
    let d = o.data().unwrap();
    // The leader of a new session and process group: the caller's controlling terminal is
    // not its own.
    assert_eq!(d["sid"], d["pid"], "{o}");
    assert_eq!(d["pgid"], d["pid"], "{o}");
    assert_ne!(d["sid"], json!(own_session()), "{o}");
}

/// The session of this process as the kernel reports it in `/proc/self/stat`: 0 when its
/// session leader lives outside this process's PID namespace (as in many containers).
fn own_session() -> i64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // After the command name in parentheses: state, parent, process group, session.
    let (_, rest) = stat.rsplit_once(')').unwrap();
    rest.split_whitespace().nth(3).unwrap().parse().unwrap()
}

/// A folder of the run's user outside the run (say `~/.ssh`) holding a key.
fn users_dot_ssh(env: &Env) -> PathBuf {
    use std::os::unix::fs::chown;
    let dir = env.tmp.path().join("dot-ssh");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("id_rsa"), "-----BEGIN OPENSSH PRIVATE KEY-----\n").unwrap();
    std::fs::set_permissions(dir.join("id_rsa"), PermissionsExt::from_mode(0o600)).unwrap();
    std::fs::set_permissions(&dir, PermissionsExt::from_mode(0o700)).unwrap();
    if probe().root {
        chown(dir.join("id_rsa"), Some(65534), Some(65534)).unwrap();
        chown(&dir, Some(65534), Some(65534)).unwrap();
    }
    dir
}

#[test]
fn finding_host_paths_watching_folders_and_listing_mounts() {
    let env = Env::new();
    let ssh = users_dot_ssh(&env);
    let outside = env.canary.parent().unwrap().to_path_buf();
    let key = ssh.join("id_rsa");
    let paths = [p(&outside), p(&env.canary), p(&ssh), p(&key), "/root"];
    let params = json!({"paths": paths, "plant": p(&env.canary)});
    let o = env.executor().execute("find-paths", params.clone());
    assert!(o.ok(), "{o}");
    let d = o.data().unwrap().clone();
    let view = o.meta().confinement.applied.as_ref().is_some_and(|a| {
        a.controls.iter().any(|c| {
            c.guard.as_str() == "file_read" && c.by.iter().any(|m| m.as_str() == "mount_namespace")
        })
    });
    if view {
        assert_eq!(guard(&o, "file_read"), "enforced", "{o}");
        for path in paths {
            // Not in the run's view: it does not exist there.
            assert_eq!(d[format!("stat {path}")], "denied 2", "{o}");
            let watch = d[format!("watch {path}")].as_str().unwrap().to_string();
            assert!(watch == "denied 1" || watch == "denied 2", "{o}");
        }
        assert_eq!(d["mountinfo"], "denied 2", "{o}");
        assert_eq!(d["listmount"], "denied 38", "{o}");
        assert_eq!(d["setxattr"], "denied 2", "{o}");
    } else {
        assert_ne!(guard(&o, "file_read"), "enforced", "{o}");
    }
    let mut buf = [0u8; 8];
    assert!(rustix::fs::getxattr(&env.canary, "user.planted", &mut buf).is_err());
    env.canary_intact();

    // Granted reading and writing anywhere, the same paths are found and watched.
    let policy = env
        .policy()
        .allow("filesystem:read")
        .unwrap()
        .allow("filesystem:write")
        .unwrap();
    let o = env.executor().execute_with("find-granted", params, &policy);
    if !view && o.error_code() == Some(ErrorCode::PermissionDenied) {
        // High-risk, and this kernel has a gap: refused, naming it.
        assert!(o.to_string().contains("not started"), "{o}");
        return;
    }
    assert!(o.ok(), "{o}");
    let d = o.data().unwrap().clone();
    for path in paths {
        assert_eq!(d[format!("stat {path}")], "done", "{o}");
    }
    assert_eq!(d[format!("watch {}", p(&outside))], "done", "{o}");
    assert_eq!(d["mountinfo"], "done", "{o}");
}

/// The output folder of a run of `pack` (in the temporary folder, or one level below it) that
/// holds `file`, other than those in `old`.
fn run_folder_with(pack: &str, file: &str, old: &[PathBuf]) -> Option<PathBuf> {
    let prefix = format!("skillbake-run-{pack}-");
    let mut folders = vec![std::env::temp_dir()];
    let mut level = 0;
    while level < 2 {
        let mut next = Vec::new();
        for f in &folders {
            for e in std::fs::read_dir(f).into_iter().flatten().flatten() {
                let path = e.path();
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with(&prefix) && path.join(file).is_file() && !old.contains(&path) {
                    return Some(path);
                }
                if name.starts_with("skillbake-") && path.is_dir() {
                    next.push(path);
                }
            }
        }
        folders = next;
        level += 1;
    }
    None
}

#[test]
fn a_run_granted_everything_on_files_cannot_reach_a_concurrent_run() {
    let env = Env::new();
    // Runs in their own, default output folders.
    let policy = Policy::new()
        .cache_dir(env.tmp.path().join("cache"))
        .timeout(FINISH_WITHIN)
        .allow("filesystem:read")
        .unwrap()
        .allow("filesystem:write")
        .unwrap();
    let ex = Executor::new(&REGISTRY, policy);
    // Folders an earlier, failed run of this test left.
    let mut old = Vec::new();
    while let Some(f) = run_folder_with("keep-secret", "secret.txt", &old) {
        old.push(f);
    }
    std::thread::scope(|s| {
        let victim = s.spawn(|| ex.execute("keep-secret", json!({})));
        let start = Instant::now();
        let folder = loop {
            if let Some(f) = run_folder_with("keep-secret", "secret.txt", &old) {
                break f;
            }
            assert!(
                start.elapsed() < EVENT_WITHIN,
                "the victim never wrote its secret"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let tmp = std::env::temp_dir();
        let params = json!({
            "tmp": p(&tmp),
            "victim": "keep-secret",
            "process": "keep.py",
            "control": p(&env.canary)
        });
        let o = ex.execute("spy-runs", params);
        std::fs::write(folder.join("go"), "").unwrap();
        let v = victim.join().unwrap();
        assert!(v.ok(), "{v}");
        if o.error_code() == Some(ErrorCode::PermissionDenied) {
            // A kernel without the view: the high-risk pack is refused, naming the gap.
            assert!(o.to_string().contains("other_runs"), "{o}");
            let _ = std::fs::remove_dir_all(&folder);
            return;
        }
        assert!(o.ok(), "{o}");
        assert_eq!(guard(&o, "other_runs"), "enforced", "{o}");
        let d = o.data().unwrap().clone();
        // The victim's process is found (its command line is public).
        assert_eq!(d["pids"], 1, "{o}");
        let got = d["got"].as_object().unwrap();
        // The run still reads what it was granted.
        assert_eq!(got["control"], CANARY, "{o}");
        for (what, value) in got {
            if what != "control" {
                let v = value.as_str().unwrap_or("");
                assert!(v.starts_with("denied "), "{what}: {value} ({o})");
            }
        }
        assert!(!folder.join("planted.txt").exists(), "{o}");
        assert_eq!(
            std::fs::read_to_string(folder.join("secret.txt")).unwrap(),
            "the secret of another run\n"
        );
        // Not even found.
        assert_eq!(d["found"], 0, "{o}");
        let _ = std::fs::remove_dir_all(&folder);
    });
}
