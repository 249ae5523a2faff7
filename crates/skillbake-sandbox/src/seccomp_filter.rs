//! The seccomp-bpf filters of a spec, compiled in the parent (with `seccompiler`) so that the
//! child only has to install them.
//!
//! Two filters, both allowing every system call they do not name:
//!
//! * the **deny filter** (`EPERM`) — system calls a skill never needs and that widen the
//!   kernel's attack surface or undo the sandbox: new namespaces (`unshare`, `setns`, `clone`
//!   with a `CLONE_NEW*` flag), mounts, `ptrace` and `process_vm_*`, BPF, perf events,
//!   `userfaultfd`, keyrings, kernel modules, `kexec`, `reboot`, swap, `io_uring` (whose
//!   operations bypass seccomp), file handles, `setsid`/`setpgid` (leaving the process group
//!   that the parent kills at a timeout), the terminal-injection `ioctl`s `TIOCSTI` and
//!   `TIOCLINUX`, and, unless the network is unrestricted, sockets the spec does not grant and
//!   `listen`; watching files (`inotify_add_watch`, `fanotify_mark`) unless reading anywhere is
//!   granted; set-user-id and set-group-id bits (`chmod` family, and files created with them
//!   by `open`, `creat` and `mknod`); and, where no read-only mount view keeps the rest of the
//!   file system unchanged, every change of mode, owner, times and extended attributes
//!   ([`Metadata::Denied`]). Its architecture check kills a process that makes system calls of another
//!   architecture (32-bit `int 0x80` on x86-64).
//! * the **ABI filter** (`ENOSYS`) — `statmount` and `listmount` (the host's mount list),
//!   `clone3`, whose flags live in memory a filter cannot read
//!   (C libraries fall back to `clone` on `ENOSYS`, which the deny filter checks), `openat2`,
//!   whose mode also lives in memory (C libraries fall back to `openat`), and on x86-64
//!   every x32 system call (numbers with bit 30 set), which would otherwise slip past the
//!   deny filter's numbers.

use crate::{Error, Network};
use seccompiler::{
    sock_filter, BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op,
    SeccompCondition as Cond, SeccompFilter, SeccompRule, TargetArch,
};
use std::collections::BTreeMap;

/// The architecture seccompiler compiles for, if it supports this one.
pub(crate) fn target_arch() -> Option<TargetArch> {
    TargetArch::try_from(std::env::consts::ARCH).ok()
}

fn audit_arch() -> Option<u32> {
    match std::env::consts::ARCH {
        "x86_64" => Some(0xC000_003E),
        "aarch64" => Some(0xC000_00B7),
        "riscv64" => Some(0xC000_00F3),
        _ => None,
    }
}

fn serr(e: impl std::fmt::Display) -> Error {
    Error::Seccomp(e.to_string())
}

/// Which changes of file metadata the deny filter stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Metadata {
    /// Only set-user-id and set-group-id bits (a read-only mount view, or a grant to write
    /// anywhere, covers the rest).
    SetIdBits,
    /// Every `chmod`, `chown`, `utime` and extended-attribute change, anywhere.
    Denied,
}

/// `fchmodat2` (Linux 6.6), `setxattrat` and `removexattrat` (6.13): the same number on every
/// architecture of the unified system-call table (not every target of `libc` names them).
const SYS_FCHMODAT2: libc::c_long = 452;
const SYS_SETXATTRAT: libc::c_long = 463;
const SYS_REMOVEXATTRAT: libc::c_long = 466;

/// System calls that change a file's mode, owner, times or extended attributes.
fn metadata_calls() -> Vec<libc::c_long> {
    let mut v = vec![
        libc::SYS_fchmod,
        libc::SYS_fchmodat,
        SYS_FCHMODAT2,
        libc::SYS_fchown,
        libc::SYS_fchownat,
        libc::SYS_utimensat,
        libc::SYS_setxattr,
        libc::SYS_lsetxattr,
        libc::SYS_fsetxattr,
        SYS_SETXATTRAT,
        libc::SYS_removexattr,
        libc::SYS_lremovexattr,
        libc::SYS_fremovexattr,
        SYS_REMOVEXATTRAT,
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([
        libc::SYS_chmod,
        libc::SYS_chown,
        libc::SYS_lchown,
        libc::SYS_utime,
        libc::SYS_utimes,
        libc::SYS_futimesat,
    ]);
    v
}

const SET_ID_BITS: [u64; 2] = [libc::S_ISUID as u64, libc::S_ISGID as u64];

/// Rules matching a mode argument `arg` with a set-id bit, under `extra` conditions.
fn set_id_rules(arg: u8, extra: &[Cond]) -> Result<Vec<SeccompRule>, Error> {
    SET_ID_BITS
        .iter()
        .map(|&bit| {
            let mut conds = extra.to_vec();
            conds.push(cond(arg, Op::MaskedEq(bit), bit)?);
            rule(conds)
        })
        .collect()
}

/// The rules that deny set-id bits: `(syscall, rules)`.
fn set_id_denials() -> Result<Vec<(libc::c_long, Vec<SeccompRule>)>, Error> {
    // open flags that create a file: O_CREAT, and O_TMPFILE (which includes O_DIRECTORY).
    let creating = |flags_arg: u8| -> Result<Vec<Vec<Cond>>, Error> {
        let creat = libc::O_CREAT as u64;
        let tmpfile = libc::O_TMPFILE as u64;
        Ok(vec![
            vec![cond(flags_arg, Op::MaskedEq(creat), creat)?],
            vec![cond(flags_arg, Op::MaskedEq(tmpfile), tmpfile)?],
        ])
    };
    let with = |flags_arg: u8, mode_arg: u8| -> Result<Vec<SeccompRule>, Error> {
        let mut out = Vec::new();
        for extra in creating(flags_arg)? {
            out.extend(set_id_rules(mode_arg, &extra)?);
        }
        Ok(out)
    };
    let mut v = vec![
        (libc::SYS_fchmod, set_id_rules(1, &[])?),
        (libc::SYS_fchmodat, set_id_rules(2, &[])?),
        (SYS_FCHMODAT2, set_id_rules(2, &[])?),
        (libc::SYS_mknodat, set_id_rules(2, &[])?),
        (libc::SYS_openat, with(2, 3)?),
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([
        (libc::SYS_chmod, set_id_rules(1, &[])?),
        (libc::SYS_mknod, set_id_rules(1, &[])?),
        (libc::SYS_creat, set_id_rules(1, &[])?),
        (libc::SYS_open, with(1, 2)?),
    ]);
    Ok(v)
}

/// System calls denied whatever the spec says.
fn always_denied() -> Vec<libc::c_long> {
    let mut v = vec![
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_acct,
        libc::SYS_quotactl,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_setsid,
        libc::SYS_setpgid,
        libc::SYS_syslog,
        libc::SYS_vhangup,
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([libc::SYS_iopl, libc::SYS_ioperm, libc::SYS_uselib]);
    v
}

const AF_INET: u64 = libc::AF_INET as u64;
const AF_INET6: u64 = libc::AF_INET6 as u64;
const AF_NETLINK: u64 = libc::AF_NETLINK as u64;
const SOCK_STREAM: u64 = libc::SOCK_STREAM as u64;
const SOCK_DGRAM: u64 = libc::SOCK_DGRAM as u64;
/// The socket type without `SOCK_NONBLOCK`/`SOCK_CLOEXEC`.
const SOCK_TYPE_MASK: u64 = 0xf;

fn cond(arg: u8, op: Op, value: u64) -> Result<Cond, Error> {
    Cond::new(arg, Len::Dword, op, value).map_err(serr)
}

fn rule(conds: Vec<Cond>) -> Result<SeccompRule, Error> {
    SeccompRule::new(conds).map_err(serr)
}

/// Rules that match (and so deny) the sockets a `TcpConnect` spec does not grant: anything but
/// TCP over IPv4/IPv6, plus UDP and route netlink with name resolution.
fn socket_deny_rules(name_resolution: bool) -> Result<Vec<SeccompRule>, Error> {
    let mut rules = Vec::new();
    // Other families (AF_UNIX included: local sockets reach daemons).
    let mut other = vec![cond(0, Op::Ne, AF_INET)?, cond(0, Op::Ne, AF_INET6)?];
    if name_resolution {
        other.push(cond(0, Op::Ne, AF_NETLINK)?);
        // Netlink other than NETLINK_ROUTE (0), which name resolution reads interfaces from.
        rules.push(rule(vec![
            cond(0, Op::Eq, AF_NETLINK)?,
            cond(2, Op::Ne, 0)?,
        ])?);
    }
    rules.push(rule(other)?);
    for family in [AF_INET, AF_INET6] {
        for ty in 0..=SOCK_TYPE_MASK {
            let allowed = ty == SOCK_STREAM || (name_resolution && ty == SOCK_DGRAM);
            if !allowed {
                rules.push(rule(vec![
                    cond(0, Op::Eq, family)?,
                    cond(1, Op::MaskedEq(SOCK_TYPE_MASK), ty)?,
                ])?);
            }
        }
        // TCP only: not SCTP or MPTCP over SOCK_STREAM (Landlock's port rules are for TCP).
        rules.push(rule(vec![
            cond(0, Op::Eq, family)?,
            cond(1, Op::MaskedEq(SOCK_TYPE_MASK), SOCK_STREAM)?,
            cond(2, Op::Ne, 0)?,
            cond(2, Op::Ne, libc::IPPROTO_TCP as u64)?,
        ])?);
        if name_resolution {
            // UDP only: not ICMP echo sockets or UDP-Lite.
            rules.push(rule(vec![
                cond(0, Op::Eq, family)?,
                cond(1, Op::MaskedEq(SOCK_TYPE_MASK), SOCK_DGRAM)?,
                cond(2, Op::Ne, 0)?,
                cond(2, Op::Ne, libc::IPPROTO_UDP as u64)?,
            ])?);
        }
    }
    Ok(rules)
}

/// The deny filter and the ABI filter for `network` and `metadata`, in the order to install
/// them.
pub(crate) fn build(
    network: &Network,
    metadata: Metadata,
    read_anywhere: bool,
) -> Result<Vec<BpfProgram>, Error> {
    let arch = target_arch().ok_or_else(|| serr("unsupported architecture"))?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in always_denied() {
        rules.insert(nr, Vec::new());
    }
    // clone with a namespace flag (arg 0 holds the flags on every supported architecture).
    let ns_flags = [
        libc::CLONE_NEWNS,
        libc::CLONE_NEWCGROUP,
        libc::CLONE_NEWUTS,
        libc::CLONE_NEWIPC,
        libc::CLONE_NEWUSER,
        libc::CLONE_NEWPID,
        libc::CLONE_NEWNET,
    ];
    let clone_rules = ns_flags
        .iter()
        .map(|&f| {
            let f = f as u32 as u64;
            rule(vec![cond(0, Op::MaskedEq(f), f)?])
        })
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_clone, clone_rules);
    rules.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![cond(1, Op::Eq, libc::TIOCSTI)?])?,
            rule(vec![cond(1, Op::Eq, libc::TIOCLINUX)?])?,
        ],
    );
    if !read_anywhere {
        // Watching names being created and opened in folders the run may not list.
        rules.insert(libc::SYS_inotify_add_watch, Vec::new());
        rules.insert(libc::SYS_fanotify_mark, Vec::new());
    }
    match metadata {
        Metadata::SetIdBits => {
            for (nr, r) in set_id_denials()? {
                rules.insert(nr, r);
            }
        }
        Metadata::Denied => {
            for (nr, r) in set_id_denials()? {
                rules.insert(nr, r);
            }
            for nr in metadata_calls() {
                rules.insert(nr, Vec::new());
            }
        }
    }
    match network {
        Network::Unrestricted => {}
        Network::Denied => {
            rules.insert(libc::SYS_socket, Vec::new());
            rules.insert(libc::SYS_listen, Vec::new());
        }
        Network::TcpConnect {
            name_resolution, ..
        } => {
            rules.insert(libc::SYS_socket, socket_deny_rules(*name_resolution)?);
            rules.insert(libc::SYS_listen, Vec::new());
        }
    }
    let deny = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(serr)?;
    let deny: BpfProgram = deny.try_into().map_err(serr)?;
    Ok(vec![deny, abi_filter()?])
}

/// The exec guard's filter: `execve` and `execveat` wait for the parent's answer (a user
/// notification), everything else is left to the other filters.
pub(crate) fn exec_notify_filter() -> Result<BpfProgram, Error> {
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const RET_K: u16 = 0x06;
    const RET_ALLOW: u32 = 0x7fff_0000;
    let ins = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    let arch = audit_arch().ok_or_else(|| serr("unsupported architecture"))?;
    let execve = u32::try_from(libc::SYS_execve).map_err(serr)?;
    let execveat = u32::try_from(libc::SYS_execveat).map_err(serr)?;
    // 0 load arch, 1 native? (else ALLOW: the deny filter kills), 2 load nr, 3 execve?,
    // 4 execveat?, 5 ALLOW, 6 NOTIFY.
    Ok(vec![
        ins(LD_W_ABS, 0, 0, 4),
        ins(JEQ_K, 0, 3, arch),
        ins(LD_W_ABS, 0, 0, 0),
        ins(JEQ_K, 2, 0, execve),
        ins(JEQ_K, 1, 0, execveat),
        ins(RET_K, 0, 0, RET_ALLOW),
        ins(RET_K, 0, 0, libc::SECCOMP_RET_USER_NOTIF),
    ])
}

/// `statmount` and `listmount` (Linux 6.8; the same number on every architecture).
const SYS_STATMOUNT: u32 = 457;
const SYS_LISTMOUNT: u32 = 458;

/// `clone3`, `openat2`, `statmount`, `listmount` and (x86-64) x32 system calls answer
/// `ENOSYS`.
fn abi_filter() -> Result<BpfProgram, Error> {
    // BPF_LD | BPF_W | BPF_ABS, BPF_JMP | BPF_JEQ | BPF_K, BPF_JMP | BPF_JGE | BPF_K,
    // BPF_RET | BPF_K (linux/bpf_common.h).
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const JGE_K: u16 = 0x35;
    const RET_K: u16 = 0x06;
    const RET_ALLOW: u32 = 0x7fff_0000;
    const RET_ENOSYS: u32 = 0x0005_0000 | (libc::ENOSYS as u32);
    const X32_BIT: u32 = 0x4000_0000;
    let ins = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    let arch = audit_arch().ok_or_else(|| serr("unsupported architecture"))?;
    let clone3 = u32::try_from(libc::SYS_clone3).map_err(serr)?;
    let openat2 = u32::try_from(libc::SYS_openat2).map_err(serr)?;
    let x32 = cfg!(target_arch = "x86_64");
    // Layout: 0 load arch, 1 native?, 2 load nr, 3 clone3?, 4 openat2?, 5 statmount?,
    // 6 listmount?, [7 x32?], ALLOW, ENOSYS.
    let allow_at: u8 = if x32 { 8 } else { 7 };
    let mut p = vec![
        ins(LD_W_ABS, 0, 0, 4),
        // Not the native architecture: leave it to the deny filter (which kills).
        ins(JEQ_K, 0, allow_at - 2, arch),
        ins(LD_W_ABS, 0, 0, 0),
        ins(JEQ_K, allow_at - 3, 0, clone3),
        ins(JEQ_K, allow_at - 4, 0, openat2),
        ins(JEQ_K, allow_at - 5, 0, SYS_STATMOUNT),
        ins(JEQ_K, allow_at - 6, 0, SYS_LISTMOUNT),
    ];
    if x32 {
        p.push(ins(JGE_K, 1, 0, X32_BIT));
    }
    p.push(ins(RET_K, 0, 0, RET_ALLOW));
    p.push(ins(RET_K, 0, 0, RET_ENOSYS));
    Ok(p)
}
