//! The code that runs in the child between `fork` and `exec`, and the two raw kernel queries of
//! [`crate::probe`]. This is the only module of the workspace that contains `unsafe`.
//!
//! After `fork` in a multi-threaded parent, only async-signal-safe work is allowed: no memory
//! allocation, no locks, no formatting. Everything that needs those (opening the granted paths,
//! creating the Landlock ruleset, compiling the seccomp filters, computing limits) is done by
//! [`crate::confine`] in the parent and moved into a [`Plan`]; in the child, [`Plan::enforce`]
//! only makes system calls with data it already has, and reports failure as a bare errno (which
//! makes `spawn` fail: the sandbox fails closed).

#![allow(unsafe_code)]

use landlock::{RestrictSelfError, RulesetCreated, RulesetError};
use rustix::process::{getpgrp, getpid, getuid, Resource, Rlimit};
use rustix::thread::UnshareFlags;
use seccompiler::BpfProgram;
use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

/// Everything the child does to itself before `exec`, in this order.
pub(crate) struct Plan {
    /// `setrlimit` calls made first (while still root, when the parent is root).
    pub(crate) rlimits: Vec<(Resource, Rlimit)>,
    /// `unshare(CLONE_NEWNET)` while still root.
    pub(crate) netns_as_root: bool,
    /// Switch to this user and group (clearing supplementary groups).
    pub(crate) drop_to: Option<(u32, u32)>,
    /// `unshare(CLONE_NEWUSER)` after the switch, so that the process count is the run's own.
    pub(crate) userns: bool,
    /// Add `CLONE_NEWNET` to that `unshare` (the parent is not root).
    pub(crate) netns_in_userns: bool,
    /// `RLIMIT_NPROC`, set after the new user namespace exists.
    pub(crate) nproc: Option<Rlimit>,
    /// The Landlock ruleset to enforce.
    pub(crate) landlock: Option<RulesetCreated>,
    /// The seccomp filters to install, last.
    pub(crate) seccomp: Vec<BpfProgram>,
}

/// Registers `plan` to run in the child of every `spawn` of `cmd`.
pub(crate) fn install(cmd: &mut Command, plan: Plan) {
    // SAFETY: `pre_exec` requires the closure to be safe to run between fork and exec of a
    // possibly multi-threaded parent. `Plan::enforce` only makes system calls (through rustix's
    // raw-syscall wrappers, `landlock` and `seccompiler`, which do the same) on data prepared
    // before the fork, allocates nothing, takes no lock and touches no other thread's state; its
    // errors are `io::Error`s built from a raw errno, which do not allocate.
    unsafe {
        cmd.pre_exec(move || plan.enforce());
    }
}

fn errno(e: rustix::io::Errno) -> io::Error {
    io::Error::from_raw_os_error(e.raw_os_error())
}

impl Plan {
    fn enforce(&self) -> io::Result<()> {
        // A new session and process group: the parent kills the whole group at a timeout, and
        // the child loses its controlling terminal. If the caller already made the child a
        // group leader (`process_group(0)`), setsid fails with EPERM; the group is what counts.
        if let Err(e) = rustix::process::setsid() {
            if getpgrp() != getpid() {
                return Err(errno(e));
            }
        }
        close_other_fds();
        for (resource, limit) in &self.rlimits {
            rustix::process::setrlimit(*resource, *limit).map_err(errno)?;
        }
        if self.netns_as_root {
            // SAFETY: CLONE_NEWNET only gives this (single-threaded, just forked) process a new
            // network namespace; no file-descriptor table or other thread is involved.
            unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWNET) }.map_err(errno)?;
        }
        if let Some((uid, gid)) = self.drop_to {
            use rustix::process::{Gid, Uid};
            let (uid, gid) = (Uid::from_raw(uid), Gid::from_raw(gid));
            rustix::thread::set_thread_groups(&[]).map_err(errno)?;
            rustix::thread::set_thread_res_gid(gid, gid, gid).map_err(errno)?;
            rustix::thread::set_thread_res_uid(uid, uid, uid).map_err(errno)?;
            if getuid().is_root() || rustix::process::geteuid().is_root() {
                return Err(io::Error::from_raw_os_error(libc::EPERM));
            }
        }
        if self.userns {
            let mut flags = UnshareFlags::NEWUSER;
            if self.netns_in_userns {
                flags |= UnshareFlags::NEWNET;
            }
            // SAFETY: as above: new user (and network) namespaces for this single-threaded
            // process; CLONE_FILES is not involved.
            unsafe { rustix::thread::unshare_unsafe(flags) }.map_err(errno)?;
        }
        if let Some(limit) = &self.nproc {
            rustix::process::setrlimit(Resource::Nproc, *limit).map_err(errno)?;
        }
        if let Some(ruleset) = &self.landlock {
            // A duplicate of the ruleset descriptor, so the command can be spawned again.
            let ruleset = ruleset.try_clone()?;
            ruleset.restrict_self().map_err(|e| match e {
                RulesetError::RestrictSelf(
                    RestrictSelfError::RestrictSelfCall { source, .. }
                    | RestrictSelfError::SetNoNewPrivsCall { source, .. },
                ) => source,
                _ => io::Error::from_raw_os_error(libc::EPERM),
            })?;
        }
        rustix::thread::set_no_new_privs(true).map_err(errno)?;
        for filter in &self.seccomp {
            seccompiler::apply_filter(filter).map_err(|e| match e {
                seccompiler::Error::Prctl(source) | seccompiler::Error::Seccomp(source) => source,
                _ => io::Error::from_raw_os_error(libc::EINVAL),
            })?;
        }
        Ok(())
    }
}

/// Marks every descriptor above 2 close-on-exec, so the program inherits only stdin, stdout and
/// stderr (an inherited descriptor would bypass the file-system rules).
fn close_other_fds() {
    // SAFETY: close_range takes plain integers; with CLOSE_RANGE_CLOEXEC it closes nothing now,
    // it only marks descriptors (std's own exec-error pipe is close-on-exec already).
    let r = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC as libc::c_uint,
        )
    };
    if r == 0 {
        return;
    }
    // Kernels before 5.11: mark them one by one, up to the descriptor limit.
    let max = rustix::process::getrlimit(Resource::Nofile)
        .current
        .unwrap_or(65536)
        .min(65536);
    for fd in 3..max {
        let Ok(fd) = libc::c_int::try_from(fd) else {
            break;
        };
        // SAFETY: fcntl(F_SETFD) on a number that may not be an open descriptor only fails
        // with EBADF; it does not touch memory.
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
}

/// The kernel's Landlock ABI version, or `None` when Landlock is not available.
pub(crate) fn landlock_abi() -> Option<u32> {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) reads no memory
    // and returns the ABI version (or -1 with errno ENOSYS/EOPNOTSUPP).
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        )
    };
    u32::try_from(v).ok().filter(|&v| v > 0)
}

const PROBED: i32 = 0x40;
const NETNS: i32 = 1;
const USERNS: i32 = 2;
const SECCOMP: i32 = 4;

/// What the probe child found.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Found {
    pub(crate) network_namespace: bool,
    pub(crate) user_namespace: bool,
    pub(crate) seccomp: bool,
}

/// Forks a child that tries what [`Plan::enforce`] would do (network namespace, dropping to
/// `nobody`, user namespace, a seccomp filter) and reports which worked in its exit status. The
/// child never executes a program.
pub(crate) fn probe_child(root: bool) -> Found {
    let allow_all: Option<BpfProgram> = crate::seccomp_filter::target_arch().and_then(|arch| {
        seccompiler::SeccompFilter::new(
            Default::default(),
            seccompiler::SeccompAction::Allow,
            seccompiler::SeccompAction::Errno(libc::EPERM as u32),
            arch,
        )
        .ok()
        .and_then(|f| BpfProgram::try_from(f).ok())
    });
    let nobody = crate::Identity::NOBODY;
    let test = move || -> i32 {
        let mut found = PROBED;
        let unshare = |flags| {
            // SAFETY: namespaces for this just-forked, single-threaded probe process, which
            // exits right after.
            unsafe { rustix::thread::unshare_unsafe(flags) }.is_ok()
        };
        if root {
            if unshare(UnshareFlags::NEWNET) {
                found |= NETNS;
            }
            use rustix::process::{Gid, Uid};
            let (uid, gid) = (Uid::from_raw(nobody.uid), Gid::from_raw(nobody.gid));
            let dropped = rustix::thread::set_thread_groups(&[]).is_ok()
                && rustix::thread::set_thread_res_gid(gid, gid, gid).is_ok()
                && rustix::thread::set_thread_res_uid(uid, uid, uid).is_ok();
            if dropped && unshare(UnshareFlags::NEWUSER) {
                found |= USERNS;
            }
        } else if unshare(UnshareFlags::NEWUSER | UnshareFlags::NEWNET) {
            found |= NETNS | USERNS;
        } else if unshare(UnshareFlags::NEWUSER) {
            found |= USERNS;
        }
        if let Some(filter) = &allow_all {
            if seccompiler::apply_filter(filter).is_ok() {
                found |= SECCOMP;
            }
        }
        found
    };
    // The program is never executed: the closure exits first.
    let mut cmd = Command::new("/");
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: the closure makes only system calls on data prepared before the fork (the
    // compiled filter) and then calls `_exit`, which is async-signal-safe and skips every
    // destructor and atexit handler of the parent's copy.
    unsafe {
        cmd.pre_exec(move || {
            let code = test();
            libc::_exit(code);
        });
    }
    let Ok(mut child) = cmd.spawn() else {
        return Found::default();
    };
    let code = child.wait().ok().and_then(|s| s.code()).unwrap_or(0);
    if code & PROBED == 0 {
        return Found::default();
    }
    Found {
        network_namespace: code & NETNS != 0,
        user_namespace: code & USERNS != 0,
        seccomp: code & SECCOMP != 0,
    }
}
