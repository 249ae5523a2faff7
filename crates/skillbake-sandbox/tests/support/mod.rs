//! Helpers for the attack tests: folders an attacker would target, a bounded run of a confined
//! child that kills its whole process group, and the checks that nothing escaped.

#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)] // tests fail loudly by design

use skillbake_sandbox::{confine, probe, Applied, Limits, Spec};
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The system's Python (readable by `nobody`, unlike a per-user installation).
pub const PYTHON: &str = "/usr/bin/python3";
/// The system's shell.
pub const SH: &str = "/bin/sh";

/// An output folder the child may write, and an outside folder with a canary file that the
/// child's user could read and write by permission bits: only the sandbox stands between them.
pub struct Scene {
    pub out: tempfile::TempDir,
    pub outside: tempfile::TempDir,
    pub canary: PathBuf,
}

pub const CANARY_TEXT: &str = "canary: the secret a skill must not see\n";

impl Scene {
    pub fn new() -> Self {
        let out = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        // World-accessible, so that permission bits would allow every attack.
        std::fs::set_permissions(out.path(), PermissionsExt::from_mode(0o777)).unwrap();
        std::fs::set_permissions(outside.path(), PermissionsExt::from_mode(0o777)).unwrap();
        let canary = outside.path().join("canary.txt");
        std::fs::write(&canary, CANARY_TEXT).unwrap();
        std::fs::set_permissions(&canary, PermissionsExt::from_mode(0o666)).unwrap();
        Scene {
            out,
            outside,
            canary,
        }
    }

    pub fn out(&self) -> &Path {
        self.out.path()
    }

    /// The default spec of a run: the system runtime read-only, the output folder
    /// read-write, no network, a small environment and generous limits.
    pub fn spec(&self) -> Spec {
        Spec::new()
            .system_runtime()
            .read_write(self.out())
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", self.out())
            .env("LC_ALL", "C.UTF-8")
            .limits(Limits::none().cpu_seconds(20).processes(64))
    }

    /// The canary is exactly as the test wrote it.
    pub fn assert_canary_intact(&self) {
        assert_eq!(
            std::fs::read_to_string(&self.canary).unwrap(),
            CANARY_TEXT,
            "the canary file was modified"
        );
        let names: Vec<String> = std::fs::read_dir(self.outside.path())
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

/// What a bounded run produced.
pub struct Outcome {
    pub applied: Applied,
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// The test's deadline was reached and the group was killed.
    pub timed_out: bool,
    /// The condition of [`run_until`] held and the group was killed.
    pub stopped: bool,
    /// The most processes of the run seen at once (zombies not yet reaped included).
    pub max_processes: usize,
}

impl Outcome {
    pub fn ok(&self) -> bool {
        self.status.success()
    }
}

static RUN: AtomicU32 = AtomicU32::new(0);

/// How long a wait for something that must happen may take before the test fails; a wait ends
/// as soon as the thing happens, so the bound costs nothing when the machine is fast.
pub const EVENT_WITHIN: Duration = Duration::from_secs(60);

/// What a run has shown so far, for the condition of [`run_until`].
pub struct Seen<'a> {
    pub stdout: &'a str,
    pub stderr: &'a str,
    /// The most processes of the run seen at once so far.
    pub max_processes: usize,
}

/// Runs `cmd` confined by `spec` for at most `deadline`, then kills its process group, and
/// checks that no process of the run is left (every process of the run carries a marker in
/// its environment, found through /proc even if it left the group).
pub fn run(cmd: Command, spec: Spec, deadline: Duration) -> Outcome {
    run_until(cmd, spec, deadline, |_| false)
}

/// Collects a child's stream (at most 1 MiB) where the test can look at it while it runs.
fn collect(mut from: impl Read + Send + 'static) -> (Arc<Mutex<Vec<u8>>>, JoinHandle<()>) {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&buf);
    let reader = std::thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        let mut total = 0;
        while total < 1 << 20 {
            match from.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    total += n;
                    sink.lock().unwrap().extend_from_slice(&chunk[..n]);
                }
            }
        }
    });
    (buf, reader)
}

fn text(buf: &Mutex<Vec<u8>>) -> String {
    String::from_utf8_lossy(&buf.lock().unwrap()).into_owned()
}

/// [`run`] that also stops the run as soon as `stop` holds of what it has shown: a test waits
/// on the event it needs (a line printed, a count reached) instead of guessing how long it
/// takes, with `deadline` as the generous upper bound.
pub fn run_until(
    mut cmd: Command,
    spec: Spec,
    deadline: Duration,
    mut stop: impl FnMut(&Seen) -> bool,
) -> Outcome {
    let marker = format!(
        "{}-{}-{}",
        std::process::id(),
        RUN.fetch_add(1, Ordering::SeqCst),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    let spec = spec.env("SANDBOX_TEST_RUN", &marker);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let applied = confine(&mut cmd, &spec).unwrap();
    let mut child = cmd.spawn().unwrap();
    let pid = child.id();
    let group = Group(pid);
    let (out, read_out) = collect(child.stdout.take().unwrap());
    let (err, read_err) = collect(child.stderr.take().unwrap());
    let start = Instant::now();
    let mut timed_out = false;
    let mut stopped = false;
    let mut max_processes = 0;
    let status = loop {
        max_processes = max_processes.max(tasks_of(pid, &marker, true).len());
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if !timed_out && !stopped {
            let (stdout, stderr) = (text(&out), text(&err));
            let seen = Seen {
                stdout: &stdout,
                stderr: &stderr,
                max_processes,
            };
            if stop(&seen) {
                stopped = true;
                group.kill();
            } else if start.elapsed() > deadline {
                timed_out = true;
                group.kill();
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // Whatever the leader left behind dies with the group.
    group.kill();
    drop(group);
    read_out.join().unwrap();
    read_err.join().unwrap();
    let (stdout, stderr) = (text(&out), text(&err));
    assert_no_process_left(pid, &marker);
    Outcome {
        applied,
        status,
        stdout,
        stderr,
        timed_out,
        stopped,
        max_processes,
    }
}

/// Kills the process group when dropped (also when a test fails midway).
struct Group(u32);

impl Group {
    fn kill(&self) {
        if let Some(pid) = rustix::process::Pid::from_raw(self.0 as i32) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Live (not zombie) processes of a run: those in the process group or session of its first
/// process `leader`, and those whose environment holds `SANDBOX_TEST_RUN=marker` (which finds a
/// process that left the group). A process that is still dying counts as live.
pub fn processes_of(leader: u32, marker: &str) -> Vec<u32> {
    tasks_of(leader, marker, false)
}

/// Like [`processes_of`], zombies included when `zombies` (a zombie still holds its slot in the
/// process limit until it is reaped).
pub fn tasks_of(leader: u32, marker: &str, zombies: bool) -> Vec<u32> {
    let needle = format!("SANDBOX_TEST_RUN={marker}\0");
    let mut found = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return found;
    };
    for e in dir.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // After the command name in parentheses: state, ppid, pgrp, session.
        let Some((_, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let fields: Vec<&str> = rest.split(' ').collect();
        if !zombies && matches!(fields.first(), Some(&"Z") | Some(&"X")) {
            continue;
        }
        let leader = leader.to_string();
        let in_group =
            fields.get(2) == Some(&leader.as_str()) || fields.get(3) == Some(&leader.as_str());
        let marked = std::fs::read(e.path().join("environ"))
            .is_ok_and(|env| env.windows(needle.len()).any(|w| w == needle.as_bytes()));
        if in_group || marked {
            found.push(pid);
        }
    }
    found
}

/// Waits (bounded) until no process of the run is alive; fails the test otherwise.
pub fn assert_no_process_left(leader: u32, marker: &str) {
    let start = Instant::now();
    loop {
        let left = processes_of(leader, marker);
        if left.is_empty() {
            return;
        }
        if start.elapsed() > EVENT_WITHIN {
            for pid in &left {
                if let Some(p) = rustix::process::Pid::from_raw(*pid as i32) {
                    let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
                }
            }
            panic!("processes of the run outlived it: {left:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A Python child running `code` with `args`.
pub fn python(code: &str, args: &[&str]) -> Command {
    let mut c = Command::new(PYTHON);
    c.arg("-I").arg("-c").arg(code).args(args);
    c
}

/// A shell child running `script`.
pub fn sh(script: &str) -> Command {
    let mut c = Command::new(SH);
    c.arg("-c").arg(script);
    c
}

/// True when the kernel has what the containment tests rely on; otherwise the tests check
/// that the report names the gap.
pub fn landlock() -> bool {
    probe().landlock_fs()
}

/// Prints what the run reported, for the test log.
pub fn show(name: &str, o: &Outcome) {
    eprintln!(
        "--- {name}: {:?} timed_out={} max_processes={}\nstdout: {}\nstderr: {}\n{}",
        o.status, o.timed_out, o.max_processes, o.stdout, o.stderr, o.applied
    );
}

/// Set in the environment of a test re-run as an ordinary user.
const AS_USER: &str = "SANDBOX_TEST_AS_ORDINARY_USER";

/// The user the child runs as: `nobody` under a root parent, else this process's user.
pub fn child_user() -> (u32, u32) {
    let p = probe();
    if p.root {
        (65534, 65534)
    } else {
        (p.uid, p.gid)
    }
}

/// Gives `path` to the child's user (when this process is root), so that only the sandbox, not
/// the permission bits, stands between the child and it.
pub fn give_to_child(path: &Path) {
    if probe().root {
        let (uid, gid) = child_user();
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
    }
}

/// When this process is root, runs the test `name` of this test binary once more as an ordinary
/// user (65534), so that the attack also meets the sandbox of an unprivileged caller, and fails
/// if it fails there. Does nothing when not root (the test is that run already).
pub fn again_as_ordinary_user(name: &str) {
    use std::os::unix::process::CommandExt;
    if !probe().root || std::env::var_os(AS_USER).is_some() {
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let o = Command::new(exe)
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(AS_USER, "1")
        .env("TMPDIR", "/tmp")
        .current_dir("/")
        .uid(65534)
        .gid(65534)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success() && stdout.contains("1 passed"),
        "as an ordinary user, {name} failed:\n{stdout}\n{stderr}"
    );
}

/// In the re-run of [`again_as_ordinary_user`] (a process running one test), waits (bounded)
/// until no thread of the exec guard is left: each one ends with its run.
pub fn assert_exec_guard_threads_end() {
    if std::env::var_os(AS_USER).is_none() {
        return;
    }
    let guards = || {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|t| std::fs::read_to_string(t.unwrap().path().join("comm")).ok())
            .filter(|c| c.starts_with("skillbake-exec"))
            .count()
    };
    let start = Instant::now();
    while guards() > 0 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{} exec-guard threads outlived their runs",
            guards()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
