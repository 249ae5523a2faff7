//! The API around the attacks: errors before anything starts, the report on this kernel, the
//! programs a child may start by default, and commands spawned more than once.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use skillbake_sandbox::{confine, probe, Error, Guard, Identity, Mode, Spec, State};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;
use support::*;

/// The bound of every run that must finish on its own: no loaded machine takes this long, so no
/// outcome depends on its speed.
const DEADLINE: Duration = Duration::from_secs(120);

#[test]
fn the_probe_is_consistent_and_cached() {
    let p = probe();
    eprintln!("{p:?}");
    assert_eq!(p, probe());
    if let Some(abi) = p.landlock_abi {
        assert!(abi >= 1);
        assert!(p.landlock_fs());
        assert_eq!(p.landlock_tcp(), abi >= 4);
        assert_eq!(p.landlock_scope(), abi >= 6);
    }
    assert_eq!(p.root, rustix::process::geteuid().is_root());
}

#[test]
fn the_report_names_every_guard_and_every_gap() {
    let s = Scene::new();
    let mut cmd = Command::new(PYTHON);
    let applied = confine(&mut cmd, &s.spec()).unwrap();
    println!("{applied}");
    let guards: Vec<Guard> = applied.controls.iter().map(|c| c.guard).collect();
    assert_eq!(guards, Guard::ALL);
    let p = probe();
    let complete = p.landlock_scope() && p.seccomp && p.user_namespace;
    if complete {
        assert_eq!(applied.mode, Mode::Confined);
        assert_eq!(applied.gaps().count(), 0, "{applied}");
    } else {
        assert_ne!(applied.mode, Mode::Confined);
        for gap in applied.gaps() {
            assert!(!gap.detail.is_empty());
        }
    }
    assert_eq!(applied.state(Guard::AddressSpace), State::Unlimited);
    assert_eq!(applied.landlock_abi, p.landlock_abi);
}

#[test]
fn a_missing_path_or_program_is_an_error_and_nothing_changes() {
    let s = Scene::new();
    let missing = s.out().join("no-such-folder");
    let mut cmd = Command::new(PYTHON);
    cmd.env("KEEP", "1");
    let e = confine(&mut cmd, &s.spec().read_only(&missing)).unwrap_err();
    assert!(
        matches!(&e, Error::Path { path, .. } if path == &missing),
        "{e}"
    );
    assert!(e.to_string().contains("no-such-folder"), "{e}");
    // The command keeps its environment: confine changed nothing.
    assert!(cmd.get_envs().any(|(k, _)| k == "KEEP"));

    let mut cmd = Command::new("no-such-program-anywhere");
    let e = confine(&mut cmd, &s.spec()).unwrap_err();
    assert!(matches!(e, Error::ProgramNotFound { .. }), "{e}");
    assert!(e.to_string().contains("PATH"), "{e}");
}

#[test]
fn a_root_parent_never_hands_out_root_or_unreachable_folders() {
    if !probe().root {
        return;
    }
    let s = Scene::new();
    let mut cmd = Command::new(PYTHON);
    let e = confine(&mut cmd, &s.spec().run_as(Identity { uid: 0, gid: 0 })).unwrap_err();
    assert!(
        matches!(e, Error::PrivilegedIdentity { uid: 0, gid: 0 }),
        "{e}"
    );

    // A folder inside a 0700 directory of root: nobody cannot reach it.
    let private = tempfile::tempdir().unwrap();
    std::fs::set_permissions(private.path(), PermissionsExt::from_mode(0o700)).unwrap();
    let pack = private.path().join("pack");
    std::fs::create_dir(&pack).unwrap();
    let e = confine(&mut cmd, &s.spec().read_only(&pack)).unwrap_err();
    match &e {
        Error::Inaccessible {
            denied_at, need, ..
        } => {
            assert_eq!(denied_at, private.path());
            assert_eq!(*need, "read");
        }
        other => panic!("{other}"),
    }
    assert!(e.to_string().contains("65534:65534"), "{e}");

    // An output folder it cannot write.
    std::fs::set_permissions(private.path(), PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&pack, PermissionsExt::from_mode(0o755)).unwrap();
    let e = confine(&mut cmd, &Spec::new().system_runtime().read_write(&pack)).unwrap_err();
    assert!(
        matches!(e, Error::Inaccessible { need: "write", .. }),
        "{e}"
    );
}

#[test]
fn a_script_with_an_env_shebang_runs_and_its_subprocesses_do_not() {
    let s = Scene::new();
    let script = s.out().join("tool.py");
    std::fs::write(
        &script,
        "#!/usr/bin/env python3\nimport subprocess, sys\nprint('running', sys.version_info[0])\ntry:\n    subprocess.run(['/bin/ls', '/'])\nexcept OSError as e:\n    print('ls denied', e.errno)\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, PermissionsExt::from_mode(0o755)).unwrap();
    let o = run(Command::new(&script), s.spec(), DEADLINE);
    show("env shebang", &o);
    assert!(o.ok(), "{}", o.stderr);
    assert!(o.stdout.starts_with("running 3\n"), "{}", o.stdout);
    // The exec guard answers first (EPERM), else Landlock (EACCES).
    let by = &o.applied.control(Guard::Execute).unwrap().by;
    if by.contains(&skillbake_sandbox::Mechanism::Seccomp) {
        assert!(o.stdout.contains("ls denied 1\n"), "{}", o.stdout);
    } else if landlock() {
        assert!(o.stdout.contains("ls denied 13"), "{}", o.stdout);
    }
}

/// Two children of one confined command alive at once: the exec guard answers both (each may
/// start its program, no more), whichever of them calls first.
#[test]
fn children_of_one_command_alive_together_are_each_guarded() {
    let s = Scene::new();
    // Each child waits for a line on stdin, so both exist before either execs again.
    let mut cmd = python(
        "import subprocess, sys\nsys.stdin.readline()\ntry:\n    subprocess.run(['/bin/true'])\n    print('ran')\nexcept OSError as e:\n    print('denied', e.errno)\n",
        &[],
    );
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let applied = confine(&mut cmd, &s.spec()).unwrap();
    let guarded = applied
        .control(Guard::Execute)
        .is_some_and(|c| c.by.contains(&skillbake_sandbox::Mechanism::Seccomp));
    let mut first = cmd.spawn().unwrap();
    let mut second = cmd.spawn().unwrap();
    // The second is released first.
    for child in [&mut second, &mut first] {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"go\n").unwrap();
    }
    for (name, child) in [("first", first), ("second", second)] {
        let out = finish(child, DEADLINE);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        if guarded {
            assert_eq!(stdout, "denied 1\n", "{name}");
        } else if landlock() {
            assert_eq!(stdout, "denied 13\n", "{name}");
        }
    }
}

/// Waits for `child` at most `deadline` (then kills it) and collects what it printed.
fn finish(mut child: std::process::Child, deadline: Duration) -> std::process::Output {
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > deadline {
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_command_can_be_spawned_twice_and_may_lead_its_own_group() {
    let s = Scene::new();
    let mut cmd = python("import os; print(os.getpgrp() == os.getpid())", &[]);
    cmd.process_group(0);
    let spec = s.spec().env("SANDBOX_TEST_RUN", "twice");
    confine(&mut cmd, &spec).unwrap();
    for _ in 0..2 {
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "True\n");
    }
    // Confined both times: the canary stays out of reach.
    let mut cmd = python(
        "import sys\ntry:\n    open(sys.argv[1]).read()\n    print('read')\nexcept OSError:\n    print('denied')\n",
        &[s.canary.to_str().unwrap()],
    );
    confine(&mut cmd, &s.spec()).unwrap();
    for _ in 0..2 {
        let out = cmd.output().unwrap();
        let expect = if landlock() { "denied\n" } else { "read\n" };
        assert_eq!(String::from_utf8_lossy(&out.stdout), expect);
    }
}
