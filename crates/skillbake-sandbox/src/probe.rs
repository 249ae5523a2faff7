//! [`probe`]: which confinement mechanisms this kernel and process support, tested once and
//! cached.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// What the kernel and this process support, as measured by [`probe`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct Probe {
    /// The kernel's Landlock ABI version (`None`: not built in, or not enabled at boot).
    pub landlock_abi: Option<u32>,
    /// A seccomp filter can be installed.
    pub seccomp: bool,
    /// The child can get a new, empty network namespace (as root directly, otherwise inside
    /// a new user namespace).
    pub network_namespace: bool,
    /// The child can get a new user namespace (after dropping root when the parent is root).
    pub user_namespace: bool,
    /// The child can get a new mount namespace with every mount made read-only (as root
    /// directly, otherwise inside a new user namespace).
    pub mount_namespace: bool,
    /// seccomp user notifications work, so that the parent can refuse every program start after
    /// the first (Linux 5.5; 5.8 to learn that the run's processes are gone).
    pub exec_guard: bool,
    /// The child can get a new IPC namespace (as root directly, otherwise inside a new user
    /// namespace).
    pub ipc_namespace: bool,
    /// The parent runs as root (any of its user ids is 0): the child is switched to
    /// [`crate::Spec::run_as`].
    pub root: bool,
    /// The parent's user id (the child's when the parent is not root).
    pub uid: u32,
    /// The parent's group id.
    pub gid: u32,
}

impl Probe {
    /// Landlock restricts the file system (ABI 1, Linux 5.13).
    pub fn landlock_fs(&self) -> bool {
        self.abi_at_least(1)
    }

    /// Landlock restricts truncation (ABI 3, Linux 6.2).
    pub fn landlock_truncate(&self) -> bool {
        self.abi_at_least(3)
    }

    /// Landlock restricts TCP connect and bind by port (ABI 4, Linux 6.7).
    pub fn landlock_tcp(&self) -> bool {
        self.abi_at_least(4)
    }

    /// Landlock scopes signals and abstract UNIX sockets to the sandbox (ABI 6, Linux 6.12).
    pub fn landlock_scope(&self) -> bool {
        self.abi_at_least(6)
    }

    fn abi_at_least(&self, v: u32) -> bool {
        self.landlock_abi.is_some_and(|abi| abi >= v)
    }
}

/// The variable that switches mechanisms off (see [`probe`]).
pub const DISABLE_VAR: &str = "SKILLBAKE_SANDBOX_DISABLE";

/// The mechanisms [`DISABLE_VAR`] switches off in this process, in the order named (`landlock`,
/// `seccomp`, `namespaces`; unknown names are ignored); empty when it is not set. Every gap they
/// open says so in its report, and a caller should announce them on every run they affect.
pub fn switched_off() -> Vec<&'static str> {
    let Some(list) = std::env::var_os(DISABLE_VAR) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for name in list.to_string_lossy().split(',').map(str::trim) {
        let known = match name {
            "landlock" => "landlock",
            "seccomp" => "seccomp",
            "namespaces" => "namespaces",
            _ => continue,
        };
        if !out.contains(&known) {
            out.push(known);
        }
    }
    out
}

/// Measures what this kernel and process support. The first call starts one short-lived child
/// (a fork that never executes anything) to try the namespaces and seccomp for real, unless a
/// record kept by an earlier process ([`keep_probe_in`]) says they all work; the result is
/// cached for the life of the process.
///
/// The environment variable `SKILLBAKE_SANDBOX_DISABLE` (a comma-separated list of `landlock`,
/// `seccomp`, `namespaces`) makes the probe report those mechanisms missing, so that what a
/// weaker kernel would do can be tried (and tested) on a strong one. It can only weaken the
/// sandbox; every report then names the gaps and says they were switched off
/// ([`switched_off`]).
pub fn probe() -> Probe {
    static PROBE: OnceLock<Probe> = OnceLock::new();
    *PROBE.get_or_init(|| {
        let mut p = measure();
        {
            for name in switched_off() {
                match name {
                    "landlock" => p.landlock_abi = None,
                    "seccomp" => {
                        p.seccomp = false;
                        p.exec_guard = false;
                    }
                    "namespaces" => {
                        p.network_namespace = false;
                        p.user_namespace = false;
                        p.mount_namespace = false;
                        p.ipc_namespace = false;
                    }
                    _ => {}
                }
            }
        }
        p
    })
}

/// The folder [`keep_probe_in`] named.
static KEEP_IN: OnceLock<PathBuf> = OnceLock::new();

/// Keeps the probe's result in the folder `dir` between processes, so that a process needs no
/// probe child when an earlier one on the same boot, with the same binary and in the same
/// context, found every mechanism working. Call it before the first [`probe`] of the process;
/// returns false (and changes nothing) when a folder was already named.
///
/// Only a complete result is kept and used: a record can never make [`probe`] report less than
/// a live probe, and a wrong one makes the kernel refuse a planned step, so the command fails to
/// start instead of running less confined. The record is ignored unless the folder belongs to
/// this user and no one else may write it, and the file is a `0600` regular file of this user
/// (neither reached through a symbolic link at its place). Name a folder no confined command
/// can write (one that every [`Spec::private`](crate::Spec::private) view hides, or as root, a
/// folder of root's).
pub fn keep_probe_in(dir: impl Into<PathBuf>) -> bool {
    KEEP_IN.set(dir.into()).is_ok()
}

/// Whether this process's [`probe`] result came from the record [`keep_probe_in`] kept.
static FROM_KEPT: AtomicBool = AtomicBool::new(false);

/// Removes the record [`keep_probe_in`] kept, when this process's [`probe`] result came from
/// it; returns whether one was removed.
///
/// Call it when a confined command failed to start: a record that no longer fits the system
/// (changed in a way its key cannot see, or forged) makes the kernel refuse a planned step, and
/// without this every later process would fail the same way until the next boot. The next
/// process then measures live and keeps a fresh record. A result measured live by this process
/// is never removed, and the record is removed at most once.
pub fn forget_kept_probe() -> bool {
    if !FROM_KEPT.swap(false, Ordering::Relaxed) {
        return false;
    }
    #[cfg(target_os = "linux")]
    if let Some(dir) = KEEP_IN.get() {
        return crate::kept::remove(dir);
    }
    false
}

#[cfg(target_os = "linux")]
fn measure() -> Probe {
    use rustix::process::{getegid, geteuid, getuid};
    let root = geteuid().is_root() || getuid().is_root();
    let kept = KEEP_IN.get().zip(crate::kept::key());
    let found = match &kept {
        Some((dir, key)) => match crate::kept::read(dir, key) {
            Some(found) => {
                FROM_KEPT.store(true, Ordering::Relaxed);
                found
            }
            None => {
                let found = crate::pre_exec::probe_child(root);
                crate::kept::write(dir, key, &found);
                found
            }
        },
        None => crate::pre_exec::probe_child(root),
    };
    Probe {
        landlock_abi: crate::pre_exec::landlock_abi(),
        seccomp: found.seccomp,
        network_namespace: found.network_namespace,
        user_namespace: found.user_namespace,
        mount_namespace: found.mount_namespace,
        exec_guard: found.exec_guard,
        ipc_namespace: found.ipc_namespace,
        root,
        uid: geteuid().as_raw(),
        gid: getegid().as_raw(),
    }
}

#[cfg(all(unix, not(target_os = "linux")))]
fn measure() -> Probe {
    use rustix::process::{getegid, geteuid, getuid};
    Probe {
        landlock_abi: None,
        seccomp: false,
        network_namespace: false,
        user_namespace: false,
        mount_namespace: false,
        exec_guard: false,
        ipc_namespace: false,
        root: geteuid().is_root() || getuid().is_root(),
        uid: geteuid().as_raw(),
        gid: getegid().as_raw(),
    }
}
