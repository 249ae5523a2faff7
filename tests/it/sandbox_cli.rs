//! The sandbox through the real `skillbake` binary and its bundled packs: the dry run's report,
//! the audit log from concurrent processes, the sandbox flags, the kept probe record (private,
//! rewritten when bad, dropped after a failed start), and honest degradation (a weaker
//! kernel simulated with `SKILLBAKE_SANDBOX_DISABLE`): high-risk packs refused unless
//! `--unconfined`, other packs run with the gaps listed.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Output};

/// The `--timeout` of every run that must finish: no loaded machine takes this long to start
/// and run a bundled pack's script, so no outcome depends on its speed.
const FINISH_WITHIN: &str = "120";

fn skillbake(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_skillbake"));
    c.current_dir(dir)
        .env("SKILLBAKE_CACHE_DIR", dir.join("cache"))
        .env_remove("SKILLBAKE_SANDBOX_DISABLE");
    c
}

fn json_out(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not one JSON object ({e}): {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// The sandbox part of the report of `skillbake run SKILL --dry-run ARGS...` in `dir`, which must
/// succeed.
fn dry_run_sandbox(dir: &Path, skill: &str, args: &[&str]) -> Value {
    let o = skillbake(dir)
        .args(["run", skill, "--dry-run"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    json_out(&o)["data"]["sandbox"].clone()
}

fn tmp() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        t.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    t
}

#[test]
fn the_dry_run_prints_the_limits_and_what_is_enforced_and_writes_nothing() {
    let t = tmp();
    let sandbox = &dry_run_sandbox(
        t.path(),
        "read-file",
        &[
            "--allow",
            "filesystem:read",
            "--params",
            r#"{"path": "notes.txt"}"#,
        ],
    );
    let guards: Vec<&str> = sandbox["guards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["guard"].as_str().unwrap())
        .collect();
    assert_eq!(
        guards,
        [
            "file_read",
            "file_write",
            "file_metadata",
            "execute",
            "network",
            "udp",
            "other_processes",
            "other_runs",
            "syscalls",
            "process_group",
            "root",
            "environment",
            "file_descriptors",
            "cpu_time",
            "address_space",
            "file_size",
            "open_files",
            "processes"
        ]
    );
    let state = |g: &str| {
        sandbox["guards"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["guard"] == g)
            .unwrap()["state"]
            .clone()
    };
    assert_eq!(state("file_read"), json!("allowed"));
    if sandbox["mechanisms"]
        .as_array()
        .is_some_and(|m| m.contains(&json!("seccomp")))
    {
        // No network permission: no UDP socket either.
        assert_eq!(state("udp"), json!("enforced"));
    }
    assert_eq!(sandbox["permissions_used"], json!(["filesystem:read"]));
    assert!(sandbox["env"]
        .as_array()
        .unwrap()
        .contains(&json!("OUTPUT_DIR")));
    assert!(!t.path().join("cache").exists(), "a dry run writes nothing");
}

/// `smtp` grants name resolution; where Landlock cannot filter UDP ports (before ABI 10) UDP is
/// open to any address, and the dry run lists that under `not_enforced` (the `udp` guard) and
/// calls the run `partial`, without refusing the pack for it.
#[test]
fn udp_under_smtp_is_listed_as_not_enforced_and_the_pack_is_not_refused() {
    let t = tmp();
    let sandbox = &dry_run_sandbox(
        t.path(),
        "send-email",
        &[
            "--allow",
            "smtp",
            "--allow",
            "filesystem:read",
            "--params",
            r#"{"to": "a@example.com", "subject": "s", "body": "b"}"#,
        ],
    );
    let abi = sandbox["landlock_abi"].as_u64().unwrap_or(0);
    let seccomp = sandbox["mechanisms"]
        .as_array()
        .is_some_and(|m| m.contains(&json!("seccomp")));
    let udp_gap = sandbox["not_enforced"].as_array().unwrap().iter().any(|l| {
        l.as_str()
            .unwrap_or("")
            .starts_with("udp: UDP to any address and port")
    });
    if seccomp && abi < 10 {
        assert!(udp_gap, "{sandbox}");
        assert_eq!(sandbox["mode"], json!("partial"), "{sandbox}");
    } else if seccomp {
        assert!(!udp_gap, "{sandbox}");
    }
}

#[test]
fn the_audit_log_gets_one_line_per_call_from_concurrent_processes() {
    let t = tmp();
    std::fs::write(t.path().join("notes.txt"), "hello\n").unwrap();
    std::fs::set_permissions(
        t.path().join("notes.txt"),
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    let log = t.path().join("audit.jsonl");
    let children: Vec<_> = (0..4)
        .map(|i| {
            skillbake(t.path())
                .args(["run", "read-file", "--allow", "filesystem:read"])
                .args(["--timeout", FINISH_WITHIN, "--log"])
                .arg(&log)
                .args([
                    "--params",
                    &format!(r#"{{"path": "notes.txt", "offset": {i}}}"#),
                ])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // All four run at once, appending to the same log.
    for c in children {
        let c = c.wait_with_output().unwrap();
        assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stdout));
    }
    let missing = skillbake(t.path())
        .args(["run", "no-such-skill", "--log"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(!missing.status.success());
    let text = std::fs::read_to_string(&log).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 5, "{text}");
    let hashes: std::collections::BTreeSet<&str> = records[..4]
        .iter()
        .map(|r| r["params_sha256"].as_str().unwrap())
        .collect();
    assert_eq!(hashes.len(), 4, "different parameters, different hashes");
    for r in &records[..4] {
        assert_eq!(r["skill"], json!("read-file"));
        assert_eq!(r["outcome"], json!("OK"));
        assert_eq!(r["exit"], json!({"code": 0}));
        assert_eq!(r["granted"], json!(["filesystem:read"]));
        assert_eq!(r["used"], json!(["filesystem:read"]));
        assert!(r["sandbox"].is_string());
    }
    assert_eq!(records[4]["outcome"], json!("SKILL_NOT_FOUND"));
}

#[test]
fn sandbox_flags_are_checked() {
    let t = tmp();
    for (args, says) in [
        (vec!["--env", "NOEQUALS"], "--env takes NAME=VALUE"),
        (vec!["--run-as", "0:0"], "never run as root"),
        (vec!["--run-as", "nobody"], "--run-as takes UID:GID"),
    ] {
        let o = skillbake(t.path())
            .args(["run", "read-file", "--dry-run"])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let o = skillbake(t.path())
        .args([
            "run",
            "read-file",
            "--dry-run",
            "--log",
            "/nonexistent/dir/audit.jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot open the audit log"));
}

#[test]
fn on_a_weaker_kernel_high_risk_packs_are_refused_unless_unconfined() {
    let t = tmp();
    let weak = |args: &[&str]| {
        skillbake(t.path())
            .env("SKILLBAKE_SANDBOX_DISABLE", "landlock,seccomp,namespaces")
            .args(args)
            .output()
            .unwrap()
    };
    let send = [
        "run",
        "send-email",
        "--dry-run",
        "--allow",
        "smtp",
        "--allow",
        "filesystem:read",
        "--params",
        r#"{"to": "a@example.com", "subject": "Hi", "body": "Hello"}"#,
    ];
    let o = weak(&send);
    assert!(!o.status.success());
    let v = json_out(&o);
    assert_eq!(v["error"]["code"], json!("PERMISSION_DENIED"), "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("`smtp`"), "{message}");
    assert!(message.contains("--unconfined"), "{message}");
    assert!(message.contains("network ("), "{message}");
    // The gaps say who opened them, and every run announces it.
    assert!(
        message.contains("switched off by SKILLBAKE_SANDBOX_DISABLE=landlock,seccomp,namespaces"),
        "{message}"
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).starts_with(
            "warning: SKILLBAKE_SANDBOX_DISABLE=landlock,seccomp,namespaces switches off"
        ),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    let mut unconfined = send.to_vec();
    unconfined.push("--unconfined");
    let o = weak(&unconfined);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let sandbox = &json_out(&o)["data"]["sandbox"];
    assert_eq!(sandbox["mode"], json!("unconfined"));
    let gaps = sandbox["not_enforced"].as_array().unwrap();
    assert!(gaps
        .iter()
        .any(|g| g.as_str().unwrap().starts_with("network:")));
    assert!(gaps
        .iter()
        .any(|g| g.as_str().unwrap().starts_with("file_write:")));

    // A pack that only reads is not high-risk: it runs, and says what held.
    std::fs::write(t.path().join("notes.txt"), "hello\n").unwrap();
    let o = weak(&[
        "run",
        "read-file",
        "--allow",
        "filesystem:read",
        "--params",
        r#"{"path": "notes.txt"}"#,
        "--timeout",
        FINISH_WITHIN,
        "--verbose",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(json_out(&o)["data"]["content"], json!("hello\n"));
    let stderr = String::from_utf8_lossy(&o.stderr);
    let (warning, meta) = stderr.trim_end().split_once('\n').unwrap();
    assert!(
        warning.starts_with("warning: SKILLBAKE_SANDBOX_DISABLE="),
        "{stderr}"
    );
    let meta: Value = serde_json::from_str(meta).unwrap();
    let gaps = meta["sandbox"]["not_enforced"].as_array().unwrap();
    assert!(!gaps.is_empty(), "{meta}");
    for gap in gaps {
        assert!(
            gap.as_str()
                .unwrap()
                .contains("switched off by SKILLBAKE_SANDBOX_DISABLE"),
            "{gap}"
        );
    }
}

/// A copy of `/bin/true` whose ELF interpreter (`PT_INTERP`) names the root folder (`/` written
/// as many times as the original path is long): a real program whose `execve` the kernel
/// refuses (`EACCES`), as it refuses a confinement step planned from a record that no longer
/// fits. `None` when `/bin/true` is not a dynamically linked 64-bit ELF file.
fn program_the_kernel_refuses() -> Option<Vec<u8>> {
    let mut elf = std::fs::read("/bin/true").ok()?;
    if elf.get(..5)? != b"\x7fELF\x02" {
        return None;
    }
    let u16_at = |e: &[u8], at: usize| -> Option<usize> {
        Some(u16::from_le_bytes(e.get(at..at + 2)?.try_into().ok()?).into())
    };
    let u64_at = |e: &[u8], at: usize| -> Option<usize> {
        usize::try_from(u64::from_le_bytes(e.get(at..at + 8)?.try_into().ok()?)).ok()
    };
    let (phoff, size, count) = (
        u64_at(&elf, 0x20)?,
        u16_at(&elf, 0x36)?,
        u16_at(&elf, 0x38)?,
    );
    for i in 0..count {
        let ph = phoff + i * size;
        if elf.get(ph..ph + 4)? == 3u32.to_le_bytes() {
            let (at, len) = (u64_at(&elf, ph + 8)?, u64_at(&elf, ph + 32)?);
            // The path and its final NUL: every byte but the NUL becomes `/`.
            elf.get_mut(at..at + len.checked_sub(1)?)?.fill(b'/');
            return Some(elf);
        }
    }
    None
}

#[test]
fn the_kept_probe_record_is_private_rewritten_when_bad_and_dropped_after_a_failed_start() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let t = tmp();
    let temp = t.path().join("temp");
    std::fs::create_dir(&temp).unwrap();
    std::fs::set_permissions(&temp, PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(t.path().join("notes.txt"), "hello\n").unwrap();
    std::fs::set_permissions(t.path().join("notes.txt"), PermissionsExt::from_mode(0o644)).unwrap();
    let uid = std::fs::metadata(t.path()).unwrap().uid(); // made by this process
    let record = temp
        .join(format!("skillbake-runs-{uid}"))
        .join("sandbox-probe");
    let run = |path: Option<&std::ffi::OsStr>| {
        let mut c = skillbake(t.path());
        c.env("TMPDIR", &temp)
            .args(["run", "read-file", "--allow", "filesystem:read"])
            .args(["--timeout", FINISH_WITHIN])
            .args(["--params", r#"{"path": "notes.txt"}"#]);
        if let Some(p) = path {
            c.env("PATH", p);
        }
        c.output().unwrap()
    };
    let ok = |o: &Output| {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
        assert_eq!(
            json_out(o)["data"]["content"],
            json!("hello\n"),
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
    };
    // The runs folder is made by the first run; the record is written by the first probe that
    // finds it.
    ok(&run(None));
    ok(&run(None));
    let Ok(first) = std::fs::symlink_metadata(&record) else {
        eprintln!("skipped: no probe record was kept (the probe found a mechanism missing)");
        return;
    };
    assert!(first.is_file());
    assert_eq!(first.mode() & 0o777, 0o600);
    assert_eq!(first.uid(), uid);
    let text = std::fs::read(&record).unwrap();

    // A run that uses the record leaves it as it is.
    ok(&run(None));
    let again = std::fs::symlink_metadata(&record).unwrap();
    assert_eq!(
        (again.ino(), again.mtime(), again.mtime_nsec()),
        (first.ino(), first.mtime(), first.mtime_nsec())
    );

    // A record that is not private, not the runner's, not a file, cut short or changed is
    // ignored: the probe runs live and keeps a new, private record.
    let elsewhere = t.path().join("planted");
    std::fs::write(&elsewhere, &text).unwrap();
    type Spoil<'a> = (&'a str, Box<dyn Fn() + 'a>);
    let spoil: Vec<Spoil<'_>> = vec![
        (
            "readable by others",
            Box::new(|| {
                std::fs::set_permissions(&record, PermissionsExt::from_mode(0o644)).unwrap()
            }),
        ),
        (
            "a symbolic link",
            Box::new(|| {
                std::fs::remove_file(&record).unwrap();
                std::os::unix::fs::symlink(&elsewhere, &record).unwrap();
            }),
        ),
        (
            "cut short",
            Box::new(|| std::fs::write(&record, &text[..text.len() / 2]).unwrap()),
        ),
        (
            "changed",
            Box::new(|| {
                let mut changed = text.clone();
                let last = changed.len() - 2;
                changed[last] ^= 1;
                std::fs::write(&record, changed).unwrap();
            }),
        ),
    ];
    for (what, spoil) in spoil {
        spoil();
        // Taken after spoiling: a file removed to plant a link frees its inode number, which
        // the file system may hand to the rewritten record. The record is written to a new file
        // while the spoiled one still exists, so its number differs from the spoiled one's.
        let before = std::fs::symlink_metadata(&record).unwrap().ino();
        ok(&run(None));
        let now = std::fs::symlink_metadata(&record).unwrap();
        assert!(now.is_file(), "{what}");
        assert_ne!(now.ino(), before, "{what}: rewritten, not reused");
        assert_eq!(now.mode() & 0o777, 0o600, "{what}");
        assert_eq!(std::fs::read(&record).unwrap(), text, "{what}");
    }
    if uid == 0 {
        std::os::unix::fs::chown(&record, Some(65534), Some(65534)).unwrap();
        let before = std::fs::symlink_metadata(&record).unwrap().ino();
        ok(&run(None));
        let now = std::fs::symlink_metadata(&record).unwrap();
        assert_eq!(
            (now.uid(), now.mode() & 0o777),
            (0, 0o600),
            "another user's record"
        );
        assert_ne!(now.ino(), before, "another user's record is rewritten");
    }

    // A start the kernel refuses removes the record this process used, so the next process
    // measures live instead of failing the same way.
    let Some(refused) = program_the_kernel_refuses() else {
        eprintln!("skipped the failed start: /bin/true is not a dynamic 64-bit ELF program");
        return;
    };
    let bin = t.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::set_permissions(&bin, PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(bin.join("python3"), refused).unwrap();
    std::fs::set_permissions(bin.join("python3"), PermissionsExt::from_mode(0o755)).unwrap();
    let mut path = std::ffi::OsString::from(&bin);
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    let failed = run(Some(&path));
    assert!(
        !failed.status.success(),
        "{}",
        String::from_utf8_lossy(&failed.stdout)
    );
    let v = json_out(&failed);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("cannot start"),
        "{v}"
    );
    assert!(
        !record.exists(),
        "the record is removed after a failed start"
    );
    ok(&run(None));
    assert_eq!(
        std::fs::read(&record).unwrap(),
        text,
        "kept again by the next live probe"
    );
}
