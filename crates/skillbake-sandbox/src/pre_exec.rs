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
use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

/// Everything the child does to itself before `exec`, in this order.
pub(crate) struct Plan {
    /// `setrlimit` calls made first (while still root, when the parent is root).
    pub(crate) rlimits: Vec<(Resource, Rlimit)>,
    /// `unshare(CLONE_NEWNET)` while still root.
    pub(crate) netns_as_root: bool,
    /// A private, read-only view of the file system (see [`MountView`]): made as root before
    /// the switch, or inside the new user namespace when the parent is not root.
    pub(crate) mount_view: Option<MountView>,
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

/// A new mount namespace in which every mount is read-only and `nosuid`, except bind mounts
/// of the read-write trees (which stay writable, and `nosuid`): whatever Landlock does not
/// cover (mode, owner, times, extended attributes) cannot change outside them.
pub(crate) struct MountView {
    /// The read-write trees (resolved), each bound onto itself.
    pub(crate) writable: Vec<CString>,
    /// The working folder to enter again once the view exists (the command's `chdir` happened
    /// before, on the mount underneath).
    pub(crate) cwd: Option<CString>,
}

/// `struct mount_attr` of `<linux/mount.h>`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const AT_RECURSIVE: libc::c_uint = 0x8000;

fn last_errno() -> io::Error {
    io::Error::last_os_error()
}

/// `mount_setattr(path, flags, set, clear)`.
fn mount_setattr(path: &CStr, flags: libc::c_uint, set: u64, clear: u64) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: set,
        attr_clr: clear,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: the path is a NUL-terminated string and `attr` a live `struct mount_attr` whose
    // size is passed along; the kernel only reads both.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(last_errno())
    }
}

/// `mount(source, target, NULL, flags, NULL)`.
fn mount(source: Option<&CStr>, target: &CStr, flags: libc::c_ulong) -> io::Result<()> {
    // SAFETY: NUL-terminated strings (or NULL) that the kernel only reads.
    let r = unsafe {
        libc::mount(
            source.map_or(std::ptr::null(), CStr::as_ptr),
            target.as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(last_errno())
    }
}

impl MountView {
    /// Makes the view in the current (new, single-process) mount namespace.
    fn apply(&self) -> io::Result<()> {
        let root = c"/";
        // Nothing done here reaches the parent's namespace.
        mount(None, root, libc::MS_REC | libc::MS_PRIVATE)?;
        for dir in &self.writable {
            mount(Some(dir), dir, libc::MS_BIND | libc::MS_REC)?;
        }
        mount_setattr(root, AT_RECURSIVE, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0)?;
        for dir in &self.writable {
            mount_setattr(dir, 0, 0, MOUNT_ATTR_RDONLY)?;
        }
        if let Some(cwd) = &self.cwd {
            // SAFETY: a NUL-terminated string the kernel only reads.
            if unsafe { libc::chdir(cwd.as_ptr()) } != 0 {
                return Err(last_errno());
            }
        }
        Ok(())
    }
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
        let view_as_root = self.drop_to.is_some() || !self.userns;
        if let Some(view) = self.mount_view.as_ref().filter(|_| view_as_root) {
            // SAFETY: CLONE_NEWNS gives this single-threaded, just-forked process its own copy
            // of the mount table; CLONE_FS is not shared with anyone.
            unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWNS) }.map_err(errno)?;
            view.apply()?;
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
            let view = self.mount_view.as_ref().filter(|_| !view_as_root);
            if view.is_some() {
                flags |= UnshareFlags::NEWNS;
            }
            // SAFETY: as above: new user (network, mount) namespaces for this single-threaded
            // process; CLONE_FILES is not involved.
            unsafe { rustix::thread::unshare_unsafe(flags) }.map_err(errno)?;
            if let Some(view) = view {
                view.apply()?;
            }
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
const MOUNTNS: i32 = 8;

/// What the probe child found.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Found {
    pub(crate) network_namespace: bool,
    pub(crate) user_namespace: bool,
    pub(crate) seccomp: bool,
    pub(crate) mount_namespace: bool,
}

/// Forks a child that tries what [`Plan::enforce`] would do (network namespace, a read-only
/// mount view, dropping to `nobody`, user namespace, a seccomp filter) and reports which worked in its exit status. The
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
        // What `MountView::apply` does first: a private, read-only copy of the mount table.
        let view = || {
            let view = MountView {
                writable: Vec::new(),
                cwd: None,
            };
            unshare(UnshareFlags::NEWNS) && view.apply().is_ok()
        };
        if root {
            if unshare(UnshareFlags::NEWNET) {
                found |= NETNS;
            }
            if view() {
                found |= MOUNTNS;
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
        if !root && found & USERNS != 0 && view() {
            found |= MOUNTNS;
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
        mount_namespace: code & MOUNTNS != 0,
    }
}
