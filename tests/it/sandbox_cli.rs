//! The sandbox through the real `skillbake` binary and its bundled packs: the dry run's report,
//! the audit log from concurrent processes, the sandbox flags, and honest degradation (a weaker
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
    let o = skillbake(t.path())
        .args([
            "run",
            "read-file",
            "--dry-run",
            "--allow",
            "filesystem:read",
            "--params",
            r#"{"path": "notes.txt"}"#,
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json_out(&o);
    let sandbox = &v["data"]["sandbox"];
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
    assert_eq!(sandbox["permissions_used"], json!(["filesystem:read"]));
    assert!(sandbox["env"]
        .as_array()
        .unwrap()
        .contains(&json!("OUTPUT_DIR")));
    assert!(!t.path().join("cache").exists(), "a dry run writes nothing");
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
