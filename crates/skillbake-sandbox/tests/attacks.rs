//! Attacks by real child processes (python3, sh) on this machine's kernel. Each is denied
//! without the grant and works with it where that makes sense; each run is bounded in time,
//! its whole process group is killed, and the helpers check that no process of it is left.
//! Where the kernel lacks the mechanism an attack relies on, the test checks instead that the
//! report names the gap.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use skillbake_sandbox::{probe, Guard, Limits, Mechanism, Mode, Network, Spec, State};
use std::io::ErrorKind;
use std::net::{TcpListener, UdpSocket};
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;
use support::*;

/// The bound of every run that must finish on its own: no loaded machine takes this long, so no
/// outcome depends on its speed. Attacks that never end are stopped on an event they print
/// ([`run_until`]), not after a guessed time.
const DEADLINE: Duration = Duration::from_secs(120);

fn path(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

const READ: &str = "\
import sys
try:
    print(open(sys.argv[1]).read(), end='')
except OSError as e:
    print('denied', e.errno)
    sys.exit(3)
";

#[test]
fn reading_a_canary_outside_the_granted_trees() {
    let s = Scene::new();
    let o = run(python(READ, &[path(&s.canary)]), s.spec(), DEADLINE);
    show("read outside", &o);
    // Outside a mount view the file exists and Landlock refuses it; in the view it does not
    // exist.
    let view = o
        .applied
        .control(Guard::FileRead)
        .unwrap()
        .by
        .contains(&Mechanism::MountNamespace);
    let denied = if view { "denied 2\n" } else { "denied 13\n" };
    if landlock() {
        assert_eq!(o.status.code(), Some(3));
        assert_eq!(o.stdout, denied);
        assert_eq!(o.applied.state(Guard::FileRead), State::Enforced);
    } else {
        assert_eq!(o.applied.state(Guard::FileRead), State::NotEnforced);
    }

    // Listing the folder is denied too.
    let list = "import os, sys\ntry:\n    print(os.listdir(sys.argv[1]))\nexcept OSError as e:\n    print('denied', e.errno)\n";
    let o = run(python(list, &[path(s.outside.path())]), s.spec(), DEADLINE);
    if landlock() {
        assert_eq!(o.stdout, denied);
    }

    // Granted: the same script reads it.
    let mut spec = s.spec();
    spec.read_anywhere = true;
    let o = run(python(READ, &[path(&s.canary)]), spec, DEADLINE);
    assert!(o.ok(), "{}", o.stderr);
    assert_eq!(o.stdout, CANARY_TEXT);
    assert_eq!(o.applied.state(Guard::FileRead), State::Allowed);

    // A granted read-only tree is readable.
    let spec = s.spec().read_only(s.outside.path());
    let o = run(python(READ, &[path(&s.canary)]), spec, DEADLINE);
    assert_eq!(o.stdout, CANARY_TEXT);
    s.assert_canary_intact();
}

const WRITE: &str = "\
import os, sys
target, new = sys.argv[1], sys.argv[2]
attempts = [
    ('overwrite', lambda: open(target, 'w').write('pwned')),
    ('append', lambda: open(target, 'a').write('pwned')),
    ('truncate', lambda: os.truncate(target, 0)),
    ('create', lambda: open(new, 'w').write('pwned')),
    ('mkdir', lambda: os.mkdir(new + '.d')),
    ('rename', lambda: (os.rename(target, new + '.moved'), os.rename(new + '.moved', target))),
    ('remove', lambda: os.remove(target)),
]
for what, attempt in attempts:
    try:
        attempt()
        print(what, 'done')
    except OSError as e:
        print(what, 'denied', e.errno)
";

#[test]
fn writing_outside_the_output_folder() {
    let s = Scene::new();
    let new = s.outside.path().join("planted.txt");
    let o = run(
        python(WRITE, &[path(&s.canary), path(&new)]),
        s.spec(),
        DEADLINE,
    );
    show("write outside", &o);
    if landlock() {
        assert!(o.ok(), "{}", o.stderr);
        assert!(!o.stdout.contains("done"), "{}", o.stdout);
        assert_eq!(o.stdout.lines().count(), 7, "{}", o.stdout);
        s.assert_canary_intact();
        assert_eq!(o.applied.state(Guard::FileWrite), State::Enforced);
    } else {
        assert!(o.applied.state(Guard::FileWrite).is_gap());
    }

    // The output folder itself is writable: the same attempts succeed there.
    let inside = s.out().join("mine.txt");
    std::fs::write(&inside, "mine").unwrap();
    std::fs::set_permissions(&inside, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
    let o = run(
        python(WRITE, &[path(&inside), path(&s.out().join("new.txt"))]),
        s.spec(),
        DEADLINE,
    );
    assert!(!o.stdout.contains("denied"), "{}", o.stdout);

    // Granted: writing anywhere works (on a copy, so the canary stays intact).
    let victim = s.outside.path().join("victim.txt");
    std::fs::write(&victim, "x").unwrap();
    std::fs::set_permissions(&victim, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
    let mut spec = s.spec();
    spec.write_anywhere = true;
    let o = run(
        python(
            "import sys; open(sys.argv[1], 'w').write('granted')",
            &[path(&victim)],
        ),
        spec,
        DEADLINE,
    );
    assert!(o.ok(), "{}", o.stderr);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "granted");
    std::fs::remove_file(&victim).unwrap();
    s.assert_canary_intact();
}

const CONNECT: &str = "\
import socket, sys
try:
    s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=3)
    s.sendall(b'exfiltrated')
    s.close()
    print('connected')
except OSError as e:
    print('denied', e.errno)
    sys.exit(3)
";

fn listener() -> (TcpListener, u16) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    let port = l.local_addr().unwrap().port();
    (l, port)
}

/// Accepts what the child's connection left in the queue (bounded wait).
fn accepted(l: &TcpListener) -> Option<Vec<u8>> {
    use std::io::Read;
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
fn connecting_to_a_tcp_listener_on_loopback() {
    let s = Scene::new();
    let (l, port) = listener();
    let o = run(python(CONNECT, &[&port.to_string()]), s.spec(), DEADLINE);
    show("connect denied", &o);
    let p = probe();
    if p.seccomp || p.network_namespace {
        assert_eq!(o.status.code(), Some(3), "{}", o.stdout);
        assert!(accepted(&l).is_none(), "a connection was accepted");
        assert_eq!(o.applied.state(Guard::Network), State::Enforced);
    } else {
        assert!(o.applied.state(Guard::Network).is_gap());
    }

    // Granted this port only: connects; another port stays closed.
    let (other, other_port) = listener();
    let spec = s.spec().network(Network::TcpConnect {
        ports: vec![port],
        name_resolution: false,
    });
    let o = run(
        python(CONNECT, &[&port.to_string()]),
        spec.clone(),
        DEADLINE,
    );
    show("connect granted", &o);
    assert_eq!(o.stdout, "connected\n", "{}", o.stderr);
    assert_eq!(accepted(&l).as_deref(), Some(&b"exfiltrated"[..]));
    let o = run(python(CONNECT, &[&other_port.to_string()]), spec, DEADLINE);
    if p.landlock_tcp() {
        assert_eq!(o.stdout, "denied 13\n", "{}", o.stderr);
        assert!(accepted(&other).is_none(), "a connection was accepted");
        assert_eq!(o.applied.state(Guard::Network), State::Enforced);
    } else {
        assert_eq!(o.applied.state(Guard::Network), State::NotEnforced);
    }

    // Unrestricted: any port.
    let spec = s.spec().network(Network::Unrestricted);
    let o = run(python(CONNECT, &[&other_port.to_string()]), spec, DEADLINE);
    assert_eq!(o.stdout, "connected\n", "{}", o.stderr);
    assert!(accepted(&other).is_some());
}

const UDP: &str = "\
import socket, sys
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b'exfiltrated', ('127.0.0.1', int(sys.argv[1])))
    print('sent')
except OSError as e:
    print('denied', e.errno)
";

#[test]
fn udp_and_raw_sockets_when_only_tcp_ports_are_granted() {
    let s = Scene::new();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let port = udp.local_addr().unwrap().port().to_string();
    let tcp_only = s.spec().network(Network::TcpConnect {
        ports: vec![25],
        name_resolution: false,
    });
    let o = run(python(UDP, &[&port]), tcp_only.clone(), DEADLINE);
    show("udp denied", &o);
    let mut buf = [0u8; 64];
    if probe().seccomp {
        assert_eq!(o.stdout, "denied 1\n", "{}", o.stderr);
        assert!(udp.recv_from(&mut buf).is_err(), "a datagram arrived");
    }
    // Local sockets reach daemons: denied as well.
    let unix = "import socket\ntry:\n    socket.socket(socket.AF_UNIX)\n    print('created')\nexcept OSError as e:\n    print('denied', e.errno)\n";
    let o = run(python(unix, &[]), tcp_only.clone(), DEADLINE);
    if probe().seccomp {
        assert_eq!(o.stdout, "denied 1\n");
    }

    // With name resolution UDP is open (the kernel cannot filter UDP ports), and the report
    // says so.
    let dns = s.spec().network(Network::TcpConnect {
        ports: vec![25],
        name_resolution: true,
    });
    let o = run(python(UDP, &[&port]), dns, DEADLINE);
    let c = o.applied.control(Guard::Network).unwrap();
    assert!(c.detail.contains("DNS"), "{}", c.detail);
    let u = o.applied.control(Guard::Udp).unwrap();
    let udp_ports_filtered = probe().landlock_abi.is_some_and(|v| v >= 10);
    if !udp_ports_filtered && probe().seccomp {
        // The datagram arrives, and the report says so where gaps are listed: not enforced,
        // with why, and the run is only partly confined.
        assert_eq!(o.stdout, "sent\n", "{}", o.stderr);
        assert!(udp.recv_from(&mut buf).is_ok());
        assert_eq!(u.state, State::NotEnforced, "{}", u.detail);
        assert!(
            u.detail.contains("UDP to any address and port"),
            "{}",
            u.detail
        );
        assert!(o.applied.gaps().any(|g| g.guard == Guard::Udp));
        assert_eq!(o.applied.mode, Mode::Partial);
    }
    // Without name resolution no UDP socket is made, and the report says that is enforced.
    let o = run(python(UDP, &[&port]), tcp_only, DEADLINE);
    if probe().seccomp {
        let u = o.applied.control(Guard::Udp).unwrap();
        assert_eq!(u.state, State::Enforced, "{}", u.detail);
    }
}

#[test]
fn reading_a_canary_environment_variable() {
    let s = Scene::new();
    let dump = "import os, json; print(json.dumps(sorted(os.environ.items())))";
    // A secret the parent's environment would pass on to every child.
    let mut cmd = python(dump, &[]);
    cmd.env("SKILLBAKE_CANARY_TOKEN", "sk-canary-0000");
    let o = run(cmd, s.spec(), DEADLINE);
    show("environment", &o);
    assert!(o.ok(), "{}", o.stderr);
    assert!(!o.stdout.contains("sk-canary-0000"), "{}", o.stdout);
    let names: Vec<String> = serde_like_names(&o.stdout);
    assert_eq!(names, ["HOME", "LC_ALL", "PATH", "SANDBOX_TEST_RUN"]);
    assert_eq!(o.applied.state(Guard::Environment), State::Enforced);

    // Granted: passed through explicitly.
    let spec = s.spec().env("SKILLBAKE_CANARY_TOKEN", "sk-canary-0000");
    let o = run(python(dump, &[]), spec, DEADLINE);
    assert!(o.stdout.contains("sk-canary-0000"), "{}", o.stdout);
}

/// The variable names of `json.dumps(sorted(os.environ.items()))`.
fn serde_like_names(json: &str) -> Vec<String> {
    json.split("[\"")
        .skip(1)
        .filter_map(|part| part.split_once('"').map(|(name, _)| name.to_string()))
        .collect()
}

const FORKER: &str = "\
import os, sys, time
n = 0
while True:
    try:
        pid = os.fork()
    except OSError as e:
        print('forked', n, 'errno', e.errno, flush=True)
        break
    if pid == 0:
        time.sleep(float(sys.argv[1]))
        os._exit(0)
    n += 1
time.sleep(float(sys.argv[1]))
";

#[test]
fn a_fork_bomb_is_bounded_and_cleaned_up() {
    let s = Scene::new();
    let p = probe();
    let bounded = p.user_namespace || p.root;
    // Where nothing bounds a bomb, it only gets a moment: the test checks that the report names
    // the gap, and stops it before it fills the machine.
    let bound = if bounded {
        DEADLINE
    } else {
        Duration::from_secs(3)
    };
    // The classic shell bomb: every process starts two more, forever. Even with other
    // programs granted, the process limit holds it; the run is stopped once a fork has failed.
    let mut spec = s.spec().limits(Limits::none().processes(16).cpu_seconds(5));
    spec.exec_anywhere = true;
    let o = run_until(
        sh("bomb() { bomb | bomb & }; bomb; sleep 600"),
        spec,
        bound,
        |seen| seen.stderr.contains("Cannot fork"),
    );
    show("shell fork bomb", &o);
    if bounded {
        // Stopped once a fork failed, or ended by itself after one (the leader's own fork of
        // `sleep` can fail first, before the watcher looks again): bounded either way.
        assert!(
            o.stopped || (!o.timed_out && o.stderr.contains("Cannot fork")),
            "{}",
            o.stderr
        );
        assert!(o.max_processes <= 16, "{} processes", o.max_processes);
        assert!(o.max_processes >= 8, "{} processes", o.max_processes);
    } else {
        assert!(o.applied.state(Guard::Processes).is_gap());
    }

    // Exactly the limit: the run's first process plus 15 children, then EAGAIN; every process
    // then sleeps until the run is stopped.
    let spec = s.spec().limits(Limits::none().processes(16));
    let bound = if p.user_namespace {
        DEADLINE
    } else {
        Duration::from_secs(3)
    };
    let o = run_until(python(FORKER, &["600"]), spec, bound, |seen| {
        seen.stdout.contains("forked")
    });
    show("python forker", &o);
    if p.user_namespace {
        assert!(o.stopped, "{}", o.stderr);
        assert_eq!(o.stdout, "forked 15 errno 11\n");
        assert_eq!(o.applied.state(Guard::Processes), State::Enforced);
        assert_eq!(
            o.applied.control(Guard::Processes).unwrap().by,
            [Mechanism::Rlimit, Mechanism::UserNamespace]
        );
    }
}

#[test]
fn the_process_limit_counts_each_run_separately() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{mpsc, Arc};
    if !probe().user_namespace {
        return;
    }
    let s = Scene::new();
    let spec = s.spec().limits(Limits::none().processes(8));
    // One run holds its 8 processes while a second run of the same user starts: the first is
    // stopped only once the second is done.
    let release = Arc::new(AtomicBool::new(false));
    let (full, is_full) = mpsc::channel();
    let holder = {
        let spec = spec.clone();
        let release = Arc::clone(&release);
        std::thread::spawn(move || {
            run_until(python(FORKER, &["600"]), spec, DEADLINE, move |seen| {
                if seen.stdout.contains("forked") {
                    let _ = full.send(());
                }
                release.load(Ordering::SeqCst)
            })
        })
    };
    let held = is_full.recv_timeout(DEADLINE);
    let second = run(python(FORKER, &["0.1"]), spec, DEADLINE);
    release.store(true, Ordering::SeqCst);
    let first = holder.join().unwrap();
    assert!(
        held.is_ok(),
        "the first run never filled its limit: {}",
        first.stderr
    );
    assert_eq!(first.stdout, "forked 7 errno 11\n");
    assert_eq!(second.stdout, "forked 7 errno 11\n");
}

#[test]
fn a_cpu_spin_is_stopped_by_the_cpu_limit() {
    let s = Scene::new();
    let spec = s.spec().limits(Limits::none().cpu_seconds(1));
    let o = run(python("while True: pass", &[]), spec, DEADLINE);
    show("cpu spin", &o);
    assert!(
        !o.timed_out,
        "the test deadline stopped it, not the CPU limit"
    );
    assert!(
        matches!(o.status.signal(), Some(libc_sigxcpu) if libc_sigxcpu == 24 || libc_sigxcpu == 9),
        "{:?}",
        o.status
    );
    assert_eq!(o.applied.state(Guard::CpuTime), State::Enforced);

    // A shell loop too.
    let spec = s.spec().limits(Limits::none().cpu_seconds(1));
    let o = run(sh("while :; do :; done"), spec, DEADLINE);
    assert!(!o.timed_out);
    assert!(o.status.signal().is_some(), "{:?}", o.status);
}

const LINKS: &str = "\
import os, sys
out, canary = sys.argv[1], sys.argv[2]
def attempt(what, f):
    try:
        r = f()
        print(what, 'done', r if isinstance(r, str) else '')
    except OSError as e:
        print(what, 'denied', e.errno)
attempt('symlink', lambda: os.symlink(canary, os.path.join(out, 'link')))
attempt('hardlink', lambda: os.link(canary, os.path.join(out, 'hard')))
attempt('write-through-planted', lambda: open(os.path.join(out, 'planted'), 'w').write('pwned'))
attempt('read-through-planted', lambda: open(os.path.join(out, 'planted')).read())
attempt('write-through-planted-dir', lambda: open(os.path.join(out, 'planted-dir', 'new.txt'), 'w').write('pwned'))
";

#[test]
fn a_symlink_planted_in_the_output_folder_pointing_outside() {
    let s = Scene::new();
    std::os::unix::fs::symlink(&s.canary, s.out().join("planted")).unwrap();
    std::os::unix::fs::symlink(s.outside.path(), s.out().join("planted-dir")).unwrap();
    let o = run(
        python(LINKS, &[path(s.out()), path(&s.canary)]),
        s.spec(),
        DEADLINE,
    );
    show("symlinks", &o);
    assert!(o.ok(), "{}", o.stderr);
    if landlock() {
        for line in o.stdout.lines() {
            assert!(line.contains(" denied "), "{line}");
        }
        assert_eq!(o.stdout.lines().count(), 5);
        assert!(!s.out().join("link").exists() && !s.out().join("hard").exists());
    }
    s.assert_canary_intact();

    // Granted writing anywhere, the child may make links (the canary stays intact: only the
    // link is made, and reading through it works).
    let mut spec = s.spec();
    spec.write_anywhere = true;
    let o = run(
        python(
            "import os, sys; os.symlink(sys.argv[2], os.path.join(sys.argv[1], 'link')); print(open(os.path.join(sys.argv[1], 'link')).read(), end='')",
            &[path(s.out()), path(&s.canary)],
        ),
        spec,
        DEADLINE,
    );
    assert!(o.ok(), "{}", o.stderr);
    assert_eq!(o.stdout, CANARY_TEXT);
    s.assert_canary_intact();
}

#[test]
fn starting_other_programs_needs_the_grant() {
    let s = Scene::new();
    std::fs::write(s.out().join("note.txt"), "hello\n").unwrap();
    let script = "/bin/cat note.txt";
    let mut cmd = sh(script);
    cmd.current_dir(s.out());
    let o = run(cmd, s.spec(), DEADLINE);
    show("exec denied", &o);
    if landlock() {
        assert_eq!(o.status.code(), Some(126), "{}", o.stderr);
        assert!(o.stdout.is_empty());
    }
    // The shell's builtins still work.
    let mut cmd = sh("read line < note.txt; echo \"$line\"");
    cmd.current_dir(s.out());
    let o = run(cmd, s.spec(), DEADLINE);
    assert_eq!(o.stdout, "hello\n", "{}", o.stderr);

    let mut spec = s.spec();
    spec.exec_anywhere = true;
    let mut cmd = sh(script);
    cmd.current_dir(s.out());
    let o = run(cmd, spec, DEADLINE);
    assert_eq!(o.stdout, "hello\n", "{}", o.stderr);
}

#[test]
fn the_child_never_runs_as_root() {
    let s = Scene::new();
    let code = "\
import os
print(os.getuid(), os.geteuid(), os.getgid(), os.getgroups())
try:
    os.setuid(0)
    print('root again')
except OSError as e:
    print('setuid denied', e.errno)
";
    let o = run(python(code, &[]), s.spec(), DEADLINE);
    show("identity", &o);
    assert!(o.ok(), "{}", o.stderr);
    assert!(o.stdout.contains("setuid denied"), "{}", o.stdout);
    assert!(!o.stdout.contains("root again"), "{}", o.stdout);
    if probe().root {
        assert!(
            o.stdout.starts_with("65534 65534 65534 []\n"),
            "{}",
            o.stdout
        );
        assert_eq!(
            o.applied.control(Guard::Root).unwrap().by,
            [Mechanism::DropRoot]
        );
    } else {
        assert!(!o.stdout.starts_with("0 "), "{}", o.stdout);
    }
}

#[test]
fn leaving_the_process_group_and_new_namespaces_are_denied() {
    if !probe().seccomp {
        return;
    }
    let s = Scene::new();
    let code = "\
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
for what, f in [('setsid', os.setsid), ('setpgid', lambda: os.setpgid(0, 0))]:
    try:
        f()
        print(what, 'done')
    except OSError as e:
        print(what, 'denied', e.errno)
CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000
for what, flags in [('unshare-user', CLONE_NEWUSER), ('unshare-net', CLONE_NEWNET)]:
    r = libc.unshare(flags)
    print(what, 'done' if r == 0 else 'denied %d' % ctypes.get_errno())
# A child that tries to escape the group and outlive the run.
pid = os.fork()
if pid == 0:
    try:
        os.setsid()
    except OSError:
        pass
    import time
    time.sleep(60)
    os._exit(0)
print('forked')
";
    let o = run(python(code, &[]), s.spec(), DEADLINE);
    show("escape", &o);
    assert_eq!(
        o.stdout,
        "setsid denied 1\nsetpgid denied 1\nunshare-user denied 1\nunshare-net denied 1\nforked\n",
        "{}",
        o.stderr
    );
    // `run` checked that the sleeping child died with the group.
}

#[test]
fn signalling_a_process_outside_the_run() {
    if !probe().landlock_scope() {
        return;
    }
    let s = Scene::new();
    // A process of the same user, outside the sandbox.
    let mut victim = std::process::Command::new("/bin/sleep");
    victim.arg("30");
    if probe().root {
        use std::os::unix::process::CommandExt;
        victim.uid(65534).gid(65534);
    }
    let mut victim = victim.spawn().unwrap();
    let code = "import os, sys\ntry:\n    os.kill(int(sys.argv[1]), 15)\n    print('killed')\nexcept OSError as e:\n    print('denied', e.errno)\n";
    let o = run(
        python(code, &[&victim.id().to_string()]),
        s.spec(),
        DEADLINE,
    );
    show("signal", &o);
    let alive = victim.try_wait().unwrap().is_none();
    victim.kill().unwrap();
    victim.wait().unwrap();
    assert_eq!(o.stdout, "denied 1\n", "{}", o.stderr);
    assert!(alive, "the victim was killed");
}

#[test]
fn inherited_file_descriptors_are_closed() {
    let s = Scene::new();
    // A descriptor on the canary, inheritable (as a careless parent might leave one).
    let f = std::fs::File::open(&s.canary).unwrap();
    rustix::io::fcntl_setfd(&f, rustix::io::FdFlags::empty()).unwrap();
    let code = "\
import os
seen = []
for fd in range(3, 256):
    try:
        os.read(fd, 100)
        seen.append(fd)
    except OSError:
        pass
print('readable', seen)
";
    let o = run(python(code, &[]), s.spec(), DEADLINE);
    drop(f);
    show("fds", &o);
    assert_eq!(o.stdout, "readable []\n", "{}", o.stderr);
}

#[test]
fn file_size_open_files_and_memory_limits() {
    let s = Scene::new();
    let big = s.out().join("big.bin");
    let code = "\
import sys
try:
    with open(sys.argv[1], 'wb') as f:
        for _ in range(4):
            f.write(b'x' * (1 << 20))
    print('wrote')
except OSError as e:
    print('denied', e.errno)
";
    let spec = s.spec().limits(Limits::none().file_size(1 << 20));
    let o = run(python(code, &[path(&big)]), spec, DEADLINE);
    show("file size", &o);
    assert_eq!(o.stdout, "denied 27\n", "{}", o.stderr);
    assert!(std::fs::metadata(&big).unwrap().len() <= 1 << 20);

    let code = "\
import sys
files = []
try:
    for i in range(200):
        files.append(open(sys.argv[1]))
    print('opened', len(files))
except OSError as e:
    print('stopped', e.errno)
";
    let spec = s.spec().limits(Limits::none().open_files(32));
    let o = run(python(code, &["/dev/null"]), spec, DEADLINE);
    assert_eq!(o.stdout, "stopped 24\n", "{}", o.stderr);

    let code = "\
try:
    b = bytearray(1 << 30)
    print('allocated')
except MemoryError:
    print('refused')
";
    let spec = s.spec().limits(Limits::none().address_space(512 << 20));
    let o = run(python(code, &[]), spec, DEADLINE);
    assert_eq!(o.stdout, "refused\n", "{}", o.stderr);
    let spec = s.spec();
    let o = run(python(code, &[]), spec, DEADLINE);
    assert_eq!(o.stdout, "allocated\n", "{}", o.stderr);
}

const METADATA: &str = "\
import os, sys
victim, folder = sys.argv[1], sys.argv[2]
attempts = [
    ('chmod', lambda: os.chmod(victim, 0o777)),
    ('chmod-folder', lambda: os.chmod(folder, 0o777)),
    ('utime', lambda: os.utime(victim, (0, 0))),
    ('chown', lambda: os.chown(victim, os.getuid(), os.getgid())),
    ('setxattr', lambda: os.setxattr(victim, 'user.planted', b'x')),
    ('removexattr', lambda: os.removexattr(victim, 'user.kept')),
]
for what, attempt in attempts:
    try:
        attempt()
        print(what, 'done')
    except OSError as e:
        print(what, 'denied', e.errno)
";

/// A file and a folder outside the run that its user owns (say `~/.ssh/id_rsa` and `~/.ssh`),
/// with an extended attribute.
fn owned_victim(s: &Scene) -> (std::path::PathBuf, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let folder = s.outside.path().join("dot-ssh");
    std::fs::create_dir(&folder).unwrap();
    let victim = folder.join("id_rsa");
    std::fs::write(&victim, "-----BEGIN OPENSSH PRIVATE KEY-----\n").unwrap();
    rustix::fs::setxattr(&victim, "user.kept", b"1", rustix::fs::XattrFlags::empty()).unwrap();
    std::fs::set_permissions(&victim, PermissionsExt::from_mode(0o600)).unwrap();
    std::fs::set_permissions(&folder, PermissionsExt::from_mode(0o700)).unwrap();
    give_to_child(&victim);
    give_to_child(&folder);
    (victim, folder)
}

fn mode(p: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
}

#[test]
fn changing_metadata_of_the_users_files_outside_the_run() {
    again_as_ordinary_user("changing_metadata_of_the_users_files_outside_the_run");
    let s = Scene::new();
    let (victim, folder) = owned_victim(&s);
    let mtime = std::fs::metadata(&victim).unwrap().modified().unwrap();
    let o = run(
        python(METADATA, &[path(&victim), path(&folder)]),
        s.spec(),
        DEADLINE,
    );
    show("metadata outside", &o);
    let c = o.applied.control(Guard::FileMetadata).unwrap().clone();
    if probe().seccomp || probe().mount_namespace {
        assert_eq!(c.state, State::Enforced, "{}", c.detail);
        assert_eq!(o.stdout.lines().count(), 6, "{}", o.stderr);
        for line in o.stdout.lines() {
            // Read-only mount, seccomp, or (in the view) no such file.
            assert!(
                line.ends_with(" denied 30")
                    || line.ends_with(" denied 1")
                    || line.ends_with(" denied 2"),
                "{line}"
            );
        }
        assert_eq!(mode(&victim), 0o600);
        assert_eq!(mode(&folder), 0o700);
        assert_eq!(
            std::fs::metadata(&victim).unwrap().modified().unwrap(),
            mtime
        );
        let mut buf = [0u8; 8];
        assert!(rustix::fs::getxattr(&victim, "user.kept", &mut buf).is_ok());
        assert!(rustix::fs::getxattr(&victim, "user.planted", &mut buf).is_err());
    } else {
        assert_eq!(c.state, State::NotEnforced);
    }

    // A world-writable file of root's (the canary): no attribute planted on it either.
    let plant = "import os, sys\ntry:\n    os.setxattr(sys.argv[1], 'user.planted', b'x')\n    print('done')\nexcept OSError as e:\n    print('denied', e.errno)\n";
    let o = run(python(plant, &[path(&s.canary)]), s.spec(), DEADLINE);
    if c.state == State::Enforced {
        assert!(o.stdout.starts_with("denied "), "{}", o.stdout);
        let mut buf = [0u8; 8];
        assert!(rustix::fs::getxattr(&s.canary, "user.planted", &mut buf).is_err());
    }

    // In the run's own folder the same changes work (where a read-only view keeps the rest
    // unchanged; without it they are denied there too, and the report says so).
    let mine = s.out().join("mine");
    let mine_folder = s.out().join("mine.d");
    std::fs::write(&mine, "x").unwrap();
    rustix::fs::setxattr(&mine, "user.kept", b"1", rustix::fs::XattrFlags::empty()).unwrap();
    std::fs::create_dir(&mine_folder).unwrap();
    give_to_child(&mine);
    give_to_child(&mine_folder);
    let o = run(
        python(METADATA, &[path(&mine), path(&mine_folder)]),
        s.spec(),
        DEADLINE,
    );
    show("metadata inside", &o);
    if c.by.contains(&Mechanism::MountNamespace) {
        // (chown to one's own ids: the run's user namespace maps no id, so EINVAL there.)
        let changed: Vec<&str> = o
            .stdout
            .lines()
            .filter(|l| !l.starts_with("chown "))
            .collect();
        assert_eq!(
            changed,
            [
                "chmod done",
                "chmod-folder done",
                "utime done",
                "setxattr done",
                "removexattr done"
            ],
            "{}",
            o.stdout
        );
        assert_eq!(mode(&mine), 0o777);
    } else if probe().seccomp {
        assert!(c.detail.contains("denied everywhere"), "{}", c.detail);
        assert!(!o.stdout.contains("done"), "{}", o.stdout);
    }

    // Granted writing anywhere: allowed, and reported so.
    let mut spec = s.spec();
    spec.write_anywhere = true;
    let o = run(
        python(METADATA, &[path(&victim), path(&folder)]),
        spec,
        DEADLINE,
    );
    assert_eq!(o.applied.state(Guard::FileMetadata), State::Allowed);
    assert!(o.stdout.starts_with("chmod done\n"), "{}", o.stdout);
}

const SET_ID: &str = "\
import os, shutil, stat, sys
out = sys.argv[1]
copy = os.path.join(out, 'python')
shutil.copyfile(sys.executable, copy)
fd = os.open(copy, os.O_RDONLY)
def attempt(what, f):
    try:
        f()
        print(what, 'done')
    except OSError as e:
        print(what, 'denied', e.errno)
attempt('chmod-4755', lambda: os.chmod(copy, 0o4755))
attempt('chmod-2755', lambda: os.chmod(copy, 0o2755))
attempt('fchmod-6755', lambda: os.fchmod(fd, 0o6755))
attempt('open-4755', lambda: os.close(os.open(os.path.join(out, 'new'), os.O_CREAT | os.O_WRONLY, 0o4755)))
attempt('mknod-4755', lambda: os.mknod(os.path.join(out, 'node'), stat.S_IFREG | 0o4755))
attempt('chmod-755', lambda: os.chmod(copy, 0o755))
attempt('chmod-folder', lambda: os.chmod(out, 0o755))
";

#[test]
fn a_set_user_id_copy_of_the_interpreter_in_the_output_folder() {
    again_as_ordinary_user("a_set_user_id_copy_of_the_interpreter_in_the_output_folder");
    let s = Scene::new();
    give_to_child(s.out());
    let o = run(python(SET_ID, &[path(s.out())]), s.spec(), DEADLINE);
    show("set-id", &o);
    assert!(o.ok(), "{}", o.stderr);
    if !probe().seccomp {
        assert!(o.applied.state(Guard::FileMetadata).is_gap());
        return;
    }
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(
        lines[..5],
        [
            "chmod-4755 denied 1",
            "chmod-2755 denied 1",
            "fchmod-6755 denied 1",
            "open-4755 denied 1",
            "mknod-4755 denied 1"
        ],
        "{}",
        o.stdout
    );
    let c = o.applied.control(Guard::FileMetadata).unwrap();
    if c.by.contains(&Mechanism::MountNamespace) {
        // Ordinary modes in the run's own folder still change.
        assert_eq!(lines[5..], ["chmod-755 done", "chmod-folder done"]);
    }
    for e in std::fs::read_dir(s.out()).unwrap() {
        let p = e.unwrap().path();
        assert_eq!(mode(&p) & 0o6000, 0, "{} has a set-id bit", p.display());
    }
    // Granted writing anywhere, set-id bits stay denied.
    let mut spec = s.spec();
    spec.write_anywhere = true;
    let o = run(python(SET_ID, &[path(s.out())]), spec, DEADLINE);
    assert!(
        o.stdout.starts_with("chmod-4755 denied 1\n"),
        "{}",
        o.stdout
    );
}

const OTHER_PROGRAMS: &str = "\
import ctypes, os, shutil, sys
out = sys.argv[1]
ldso = next(p for p in ['/lib64/ld-linux-x86-64.so.2', '/lib/ld-linux-aarch64.so.1',
                        '/lib/ld-linux-riscv64-lp64d.so.1'] if os.path.exists(p))
def child(what, f):
    pid = os.fork()
    if pid == 0:
        try:
            f()
        except OSError as e:
            print(what, 'denied', e.errno, flush=True)
        os._exit(0)
    os.waitpid(pid, 0)
child('ld.so-id', lambda: os.execv(ldso, [ldso, '/usr/bin/id']))
child('ld.so-sh', lambda: os.execv(ldso, [ldso, '/bin/sh', '-c', 'echo pwned-by-sh']))
dropped = os.path.join(out, 'dropped')
shutil.copyfile('/usr/bin/id', dropped)
child('ld.so-dropped', lambda: os.execv(ldso, [ldso, dropped]))
fd = os.open('/usr/bin/id', os.O_RDONLY)
child('fexecve', lambda: os.execve(fd, ['id'], {}))
libc = ctypes.CDLL(None, use_errno=True)
def execveat():
    argv = (ctypes.c_char_p * 2)(b'id', None)
    envp = (ctypes.c_char_p * 1)(None)
    nr = {'x86_64': 322, 'aarch64': 281, 'riscv64': 281}[os.uname().machine]
    libc.syscall(nr, fd, b'', argv, envp, 0x1000)
    raise OSError(ctypes.get_errno(), 'execveat')
child('execveat', execveat)
m = os.memfd_create('x', 0)
os.write(m, open('/usr/bin/id', 'rb').read())
child('memfd', lambda: os.execve(m, ['id'], {}))
";

#[test]
fn starting_programs_through_the_loader_a_descriptor_or_a_memfd() {
    again_as_ordinary_user("starting_programs_through_the_loader_a_descriptor_or_a_memfd");
    let s = Scene::new();
    give_to_child(s.out());
    let o = run(python(OTHER_PROGRAMS, &[path(s.out())]), s.spec(), DEADLINE);
    show("other programs", &o);
    assert!(o.ok(), "{}", o.stderr);
    let c = o.applied.control(Guard::Execute).unwrap().clone();
    if c.state == State::Enforced {
        assert_eq!(
            o.stdout,
            "ld.so-id denied 1\nld.so-sh denied 1\nld.so-dropped denied 1\nfexecve denied 1\n\
             execveat denied 1\nmemfd denied 1\n",
            "{}",
            o.stderr
        );
    } else {
        assert!(c.state.is_gap(), "{c:?}");
    }
    // Granted: the loader runs programs.
    let mut spec = s.spec();
    spec.exec_anywhere = true;
    let o = run(python(OTHER_PROGRAMS, &[path(s.out())]), spec, DEADLINE);
    assert!(o.stdout.starts_with("uid="), "{}", o.stdout);
    assert!(o.stdout.contains("pwned-by-sh"), "{}", o.stdout);
    assert_exec_guard_threads_end();
}

/// System V IPC through ctypes: `msgget(key, flags)`, printing the id or the errno.
const MSGGET: &str = "\
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
key, flags = int(sys.argv[1]), int(sys.argv[2], 8)
r = libc.msgget(key, flags)
print(r if r >= 0 else 'denied %d' % ctypes.get_errno())
";

fn host_msgget(key: i32, flags: &str) -> String {
    let o = std::process::Command::new(PYTHON)
        .args(["-c", MSGGET, &key.to_string(), flags])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn host_msgrm(id: &str) {
    let code = "import ctypes, sys; ctypes.CDLL(None).msgctl(int(sys.argv[1]), 0, None)";
    std::process::Command::new(PYTHON)
        .args(["-c", code, id])
        .status()
        .unwrap();
}

#[test]
fn system_v_ipc_with_host_processes() {
    again_as_ordinary_user("system_v_ipc_with_host_processes");
    let s = Scene::new();
    let key = 0x5b00_0000 | (std::process::id() as i32 & 0xffff);
    // A host process's queue that everyone may use.
    let id = host_msgget(key, "1666");
    assert!(!id.starts_with("denied"), "{id}");
    let o = run(python(MSGGET, &[&key.to_string(), "0"]), s.spec(), DEADLINE);
    show("sysv ipc", &o);
    // The child makes a queue of its own under another key; the host must not see it.
    let theirs = key + 1;
    let o2 = run(
        python(MSGGET, &[&theirs.to_string(), "1666"]),
        s.spec(),
        DEADLINE,
    );
    let leaked = host_msgget(theirs, "0");
    host_msgrm(&id);
    if !leaked.starts_with("denied") {
        host_msgrm(&leaked);
    }
    let c = o.applied.control(Guard::OtherProcesses).unwrap();
    if c.by.contains(&Mechanism::IpcNamespace) {
        assert_eq!(o.stdout, "denied 2\n", "{}", o.stderr);
        assert!(!o2.stdout.starts_with("denied"), "{}", o2.stdout);
        assert_eq!(leaked, "denied 2");
    } else {
        assert!(c.state.is_gap(), "{c:?}");
    }
}

const WATCH: &str = "\
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0)
for folder in sys.argv[1:]:
    r = libc.inotify_add_watch(fd, folder.encode(), 0x100 | 0x20)  # IN_CREATE | IN_OPEN
    print('watch', 'done' if r >= 0 else 'denied %d' % ctypes.get_errno())
nr = {'x86_64': 458, 'aarch64': 458, 'riscv64': 458}[os.uname().machine]
buf = (ctypes.c_uint64 * 64)()
req = (ctypes.c_uint64 * 4)(32, 0, 0xffffffff, 0)  # size, mnt_id, param (LSMT_ROOT), mnt_ns_id
r = libc.syscall(nr, req, buf, 64, 0)
print('listmount', 'done' if r >= 0 else 'denied %d' % ctypes.get_errno())
";

#[test]
fn watching_folders_it_may_not_list_and_listing_mounts() {
    let s = Scene::new();
    let o = run(
        python(WATCH, &[path(s.outside.path()), "/etc"]),
        s.spec(),
        DEADLINE,
    );
    show("watch", &o);
    if probe().seccomp {
        assert_eq!(
            o.stdout, "watch denied 1\nwatch denied 1\nlistmount denied 38\n",
            "{}",
            o.stderr
        );
    }
    // Granted reading anywhere, watching works.
    let mut spec = s.spec();
    spec.read_anywhere = true;
    let o = run(python(WATCH, &[path(s.outside.path())]), spec, DEADLINE);
    assert!(o.stdout.starts_with("watch done\n"), "{}", o.stdout);
}

const FIND: &str = "\
import os, sys
for p in sys.argv[1:]:
    try:
        os.stat(p)
        print('stat done')
    except OSError as e:
        print('stat denied', e.errno)
try:
    open('/proc/self/mountinfo').read()
    print('mountinfo done')
except OSError as e:
    print('mountinfo denied', e.errno)
";

#[test]
fn finding_host_paths_it_may_not_read() {
    again_as_ordinary_user("finding_host_paths_it_may_not_read");
    let s = Scene::new();
    let (victim, folder) = owned_victim(&s);
    let args = [path(&victim), path(&folder), path(&s.canary), "/root"];
    let o = run(python(FIND, &args), s.spec(), DEADLINE);
    show("find", &o);
    assert!(o.ok(), "{}", o.stderr);
    let c = o.applied.control(Guard::FileRead).unwrap().clone();
    if c.by.contains(&Mechanism::MountNamespace) {
        assert_eq!(c.state, State::Enforced, "{}", c.detail);
        assert_eq!(
            o.stdout,
            "stat denied 2\nstat denied 2\nstat denied 2\nstat denied 2\nmountinfo denied 2\n"
        );
    } else {
        // Landlock does not cover stat: the report says so.
        assert!(c.state.is_gap(), "{c:?}");
    }
    // Granted reading anywhere, they are found.
    let mut spec = s.spec();
    spec.read_anywhere = true;
    let o = run(python(FIND, &args), spec, DEADLINE);
    assert_eq!(
        o.stdout, "stat done\nstat done\nstat done\nstat done\nmountinfo done\n",
        "{}",
        o.stderr
    );
}

const KEEP: &str = "\
import os, sys
with open(os.path.join(sys.argv[1], 'secret.txt'), 'w') as f:
    f.write('secret of another run')
print('ready', flush=True)
sys.stdin.read()
";

const SPY: &str = "\
import os, sys
runs, victim, pid = sys.argv[1], sys.argv[2], sys.argv[3]
def attempt(what, f):
    try:
        print(what, f())
    except OSError as e:
        print(what, 'denied', e.errno)
attempt('list', lambda: sorted(os.listdir(runs)))
attempt('read', lambda: open(os.path.join(victim, 'secret.txt')).read())
attempt('plant', lambda: open(os.path.join(victim, 'planted'), 'w').close())
attempt('proc-root', lambda: open('/proc/%s/root%s/secret.txt' % (pid, victim)).read())
attempt('proc-cwd', lambda: open('/proc/%s/cwd/secret.txt' % pid).read())
attempt('proc-fd', lambda: os.readlink('/proc/%s/fd/0' % pid))
";

#[test]
fn a_concurrent_run_of_the_same_user_is_out_of_reach() {
    again_as_ordinary_user("a_concurrent_run_of_the_same_user_is_out_of_reach");
    use std::io::BufRead;
    // Both runs keep their folders in one folder, which each run's view makes private.
    let runs = tempfile::tempdir().unwrap();
    let (mine, theirs) = (runs.path().join("mine"), runs.path().join("theirs"));
    for d in [&mine, &theirs] {
        std::fs::create_dir(d).unwrap();
        give_to_child(d);
    }
    std::fs::set_permissions(
        runs.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let spec_in = |out: &std::path::Path| {
        Spec::new()
            .system_runtime()
            .read_write(out)
            .private(runs.path())
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", out)
            .limits(Limits::none().cpu_seconds(20).processes(64))
    };
    let mut victim = python(KEEP, &[path(&theirs)]);
    victim
        .current_dir(&theirs)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    skillbake_sandbox::confine(&mut victim, &spec_in(&theirs)).unwrap();
    let mut child = victim.spawn().unwrap();
    let mut ready = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut ready)
        .unwrap();
    assert_eq!(ready, "ready\n");
    let mut spec = spec_in(&mine);
    spec.read_anywhere = true;
    spec.write_anywhere = true;
    let pid = child.id().to_string();
    let o = run(
        python(SPY, &[path(runs.path()), path(&theirs), &pid]),
        spec,
        DEADLINE,
    );
    drop(child.stdin.take());
    let _ = child.wait();
    show("other run", &o);
    let c = o.applied.control(Guard::OtherRuns).unwrap().clone();
    if c.by.contains(&Mechanism::MountNamespace) && landlock() {
        assert_eq!(c.state, State::Enforced, "{}", c.detail);
        assert_eq!(
            o.stdout,
            "list ['mine']\nread denied 2\nplant denied 2\nproc-root denied 13\n\
             proc-cwd denied 13\nproc-fd denied 13\n",
            "{}",
            o.stderr
        );
        assert!(!theirs.join("planted").exists());
    } else {
        assert!(c.state.is_gap(), "{c:?}");
    }
    assert_eq!(
        std::fs::read_to_string(theirs.join("secret.txt")).unwrap(),
        "secret of another run"
    );
}
