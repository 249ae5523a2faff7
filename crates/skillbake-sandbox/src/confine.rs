//! [`confine()`]: turns a [`Spec`] into a prepared [`Command`] and an honest [`Applied`] report.
//!
//! The decisions are made here, in the parent, from [`probe()`]: which mechanisms to use for each
//! guard, and what stays open when the kernel lacks one. The child side lives in
//! `pre_exec.rs`.

use crate::access::{self, Need};
use crate::report::{Applied, Control, Guard, Mechanism, Mode, State};
use crate::resolve::Resolver;
use crate::{probe, Error, Identity, Limits, Network, Probe, Spec};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Prepares `cmd` to run confined as `spec` says, and reports what will be enforced.
///
/// What it does to `cmd`:
/// * clears the environment and sets exactly [`Spec::env`];
/// * registers a `pre_exec` step that, in the child before the program starts: makes it the
///   leader of a new session and process group (kill the group, `kill(-pid)`, to stop
///   everything it started), marks every file descriptor above 2 close-on-exec, sets the
///   limits, enters new network (no network granted) and IPC namespaces, makes a private mount
///   namespace in which everything but the read-write trees is a read-only, `nosuid` mount
///   (unless writing anywhere is granted) and, when the parent is root, switches to
///   [`Spec::run_as`], enters a new user namespace (so the process limit counts this run only),
///   enforces the Landlock ruleset, installs the seccomp filters and, unless other programs
///   are granted, the exec guard (a thread of this process then answers the child's program
///   starts: its own goes on, every later one fails).
///
/// Call it after setting the program, arguments and working directory, and before `spawn`.
/// Standard streams are left to the caller. If the kernel refuses a step that `confine`
/// planned, `spawn` fails with that step's error: nothing runs half-confined.
///
/// Errors (nothing is changed on `cmd` then): a granted path that does not exist, a program
/// that is not found, a path the unprivileged user could not reach, a root `run_as`.
pub fn confine(cmd: &mut Command, spec: &Spec) -> Result<Applied, Error> {
    let probe = probe();
    let identity = if probe.root {
        let id = spec.run_as;
        if id.uid == 0 || id.gid == 0 || id.uid == u32::MAX || id.gid == u32::MAX {
            return Err(Error::PrivilegedIdentity {
                uid: id.uid,
                gid: id.gid,
            });
        }
        id
    } else {
        Identity {
            uid: probe.uid,
            gid: probe.gid,
        }
    };

    let path_var = spec
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_os_str());
    let cwd = cmd.get_current_dir().map(Path::to_path_buf);
    let program =
        crate::program::resolve(cmd.get_program(), path_var, cwd.as_deref()).ok_or_else(|| {
            Error::ProgramNotFound {
                program: PathBuf::from(cmd.get_program()),
            }
        })?;
    let exec_calls = crate::program::exec_calls(&program, path_var);
    let mut executables = crate::program::exec_chain(&program, path_var);
    executables.extend(spec.executables.iter().cloned());

    // Every granted path must exist; for a dropped user, it must be reachable by its bits. Each
    // is resolved here once, and the view and the Landlock rules use that resolution.
    let mut paths = Resolver::new();
    let mut check = |granted: &[PathBuf], need: Need| -> Result<(), Error> {
        for p in granted {
            if probe.root {
                access::check(&mut paths, p, identity, need)?;
            } else {
                paths.real(p)?;
            }
        }
        Ok(())
    };
    check(&spec.read_only, Need::Read)?;
    check(&spec.read_write, Need::Write)?;
    check(&executables, Need::Execute)?;

    let plan = plan(
        spec,
        &probe,
        identity,
        &mut paths,
        &executables,
        cwd.as_deref(),
        exec_calls,
    )?;
    let applied = report(spec, &probe, identity, &plan.summary);

    cmd.env_clear();
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    #[cfg(target_os = "linux")]
    crate::pre_exec::install(cmd, plan.child);
    #[cfg(not(target_os = "linux"))]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
        if probe.root {
            cmd.uid(identity.uid).gid(identity.gid).groups(&[]);
        }
    }
    Ok(applied)
}

/// What [`confine()`] would report for `spec`, without preparing a command or opening any path
/// (for a dry run: the granted paths need not exist yet). The program is not examined, so the
/// report does not depend on it.
pub fn preview(spec: &Spec) -> Applied {
    let probe = probe();
    let identity = if probe.root {
        spec.run_as
    } else {
        Identity {
            uid: probe.uid,
            gid: probe.gid,
        }
    };
    report(spec, &probe, identity, &summary(spec, &probe))
}

/// Checks that `who` can reach `path` by its permission bits (every parent directory
/// searchable, the path itself readable, writable or executable as `need` says). [`confine()`]
/// makes this check for every granted path when the parent is root; callers use it to choose,
/// say, an interpreter the unprivileged user can run.
pub fn check_access(path: &Path, who: Identity, need: crate::Access) -> Result<(), Error> {
    Reach::new().check(path, who, need)
}

/// [`check_access`] for many paths: the folders on the way, shared by the paths, are read once
/// (each path is resolved when it is first checked, and that resolution is kept).
#[derive(Debug, Default)]
pub struct Reach {
    paths: Resolver,
}

impl Reach {
    /// No path resolved yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// [`check_access`] of `path`.
    pub fn check(&mut self, path: &Path, who: Identity, need: crate::Access) -> Result<(), Error> {
        let need = match need {
            crate::Access::Read => Need::Read,
            crate::Access::Write => Need::Write,
            crate::Access::Execute => Need::Execute,
        };
        access::check(&mut self.paths, path, who, need)
    }
}

/// The mechanisms a spec gets on this kernel (what `plan` will install).
fn summary(spec: &Spec, probe: &Probe) -> Summary {
    #[cfg(target_os = "linux")]
    let seccomp = probe.seccomp && crate::seccomp_filter::target_arch().is_some();
    #[cfg(not(target_os = "linux"))]
    let seccomp = false;
    let linux = cfg!(target_os = "linux");
    let userns = linux && probe.user_namespace;
    let dropped = probe.root;
    // The view needs the mount namespace as root, or a user namespace to make it in.
    let mount_view = linux && probe.mount_namespace && (dropped || userns);
    // Counting program starts only works when no other program is granted.
    let exec_guard =
        linux && seccomp && probe.exec_guard && !spec.exec_anywhere && spec.executables.is_empty();
    Summary {
        mount_view,
        exec_guard,
        ipcns: linux && probe.ipc_namespace && (dropped || userns),
        landlock_abi: probe.landlock_abi.filter(|_| linux),
        seccomp,
        netns: linux && matches!(spec.network, Network::Denied) && probe.network_namespace,
        userns,
        dropped,
        nproc: linux && spec.limits.processes.is_some() && (userns || dropped),
    }
}

/// Which mechanisms the plan uses, for the report.
#[derive(Clone, Copy, Debug, Default)]
struct Summary {
    /// A private mount namespace, read-only but for the read-write trees.
    mount_view: bool,
    /// No program starts after the command's own (seccomp user notifications).
    exec_guard: bool,
    /// A private IPC namespace.
    ipcns: bool,
    landlock_abi: Option<u32>,
    seccomp: bool,
    netns: bool,
    userns: bool,
    dropped: bool,
    nproc: bool,
}

struct Planned {
    summary: Summary,
    #[cfg(target_os = "linux")]
    child: crate::pre_exec::Plan,
}

#[cfg(target_os = "linux")]
fn plan(
    spec: &Spec,
    probe: &Probe,
    identity: Identity,
    paths: &mut Resolver,
    executables: &[PathBuf],
    cwd: Option<&Path>,
    exec_calls: u32,
) -> Result<Planned, Error> {
    use rustix::process::{Resource, Rlimit};
    let s = summary(spec, probe);

    let landlock = match s.landlock_abi {
        Some(abi) => {
            let grants = crate::landlock_rules::FsGrants {
                read_only: &spec.read_only,
                read_write: &spec.read_write,
                executables,
                read_anywhere: spec.read_anywhere,
                write_anywhere: spec.write_anywhere,
                exec_anywhere: spec.exec_anywhere,
            };
            Some(crate::landlock_rules::build(
                abi,
                &grants,
                paths,
                &spec.network,
            )?)
        }
        None => None,
    };
    let seccomp = if s.seccomp {
        use crate::seccomp_filter::Metadata;
        let metadata = if s.mount_view || spec.write_anywhere {
            Metadata::SetIdBits
        } else {
            Metadata::Denied
        };
        crate::seccomp_filter::build(&spec.network, metadata, spec.read_anywhere)?
    } else {
        Vec::new()
    };
    let want_netns = s.netns;

    let limits = &spec.limits;
    // Never lower below what the caller asked, never above the current hard limit (which an
    // unprivileged parent cannot raise).
    let rlimit = |resource: Resource, soft: u64, hard: u64| {
        let cap = rustix::process::getrlimit(resource).maximum;
        let clamp = |v: u64| match cap {
            Some(c) if !probe.root => v.min(c),
            _ => v,
        };
        Rlimit {
            current: Some(clamp(soft)),
            maximum: Some(clamp(hard)),
        }
    };
    let mut rlimits = vec![(Resource::Core, rlimit(Resource::Core, 0, 0))];
    if let Some(cpu) = limits.cpu_seconds {
        // SIGXCPU at the soft limit, SIGKILL a second later.
        rlimits.push((
            Resource::Cpu,
            rlimit(Resource::Cpu, cpu, cpu.saturating_add(1)),
        ));
    }
    for (resource, value) in [
        (Resource::As, limits.address_space),
        (Resource::Fsize, limits.file_size),
    ] {
        if let Some(v) = value {
            rlimits.push((resource, rlimit(resource, v, v)));
        }
    }
    let nofile = limits.open_files.map(|v| rlimit(Resource::Nofile, v, v));
    // The process count is per user: meaningful for a run only in its own user namespace, or
    // for the dropped user (then shared with that user's other processes).
    let nproc = match limits.processes {
        Some(n) if s.nproc => Some(rlimit(Resource::Nproc, n, n)),
        _ => None,
    };

    Ok(Planned {
        summary: s,
        child: crate::pre_exec::Plan {
            rlimits,
            nofile,
            netns_as_root: want_netns && probe.root,
            private_ipc: s.ipcns,
            mount_view: s
                .mount_view
                .then(|| crate::view::plan(spec, paths, executables, cwd))
                .transpose()?,
            id_map: (s.mount_view && !probe.root)
                .then(|| crate::pre_exec::IdMap::of(probe.uid, probe.gid)),
            drop_to: probe.root.then_some((identity.uid, identity.gid)),
            userns: s.userns,
            netns_in_userns: want_netns && !probe.root,
            nproc,
            landlock,
            seccomp,
            exec_guard: if s.exec_guard {
                Some(exec_guard(exec_calls)?)
            } else {
                None
            },
        },
    })
}

/// The exec guard of a run whose program takes `exec_calls` calls to start: the filter, and a
/// socket pair whose other end a new thread of this process answers on.
#[cfg(target_os = "linux")]
fn exec_guard(exec_calls: u32) -> Result<crate::pre_exec::ExecGuard, Error> {
    let guard_err = |e: std::io::Error| Error::Seccomp(format!("the exec guard: {e}"));
    let (parent, child) = std::os::unix::net::UnixStream::pair().map_err(guard_err)?;
    crate::pre_exec::supervise_execs(parent.into(), exec_calls).map_err(guard_err)?;
    Ok(crate::pre_exec::ExecGuard {
        filter: crate::seccomp_filter::exec_notify_filter()?,
        socket: child.into(),
    })
}

#[cfg(not(target_os = "linux"))]
fn plan(
    spec: &Spec,
    probe: &Probe,
    _identity: Identity,
    _paths: &mut Resolver,
    _executables: &[PathBuf],
    _cwd: Option<&Path>,
    _exec_calls: u32,
) -> Result<Planned, Error> {
    Ok(Planned {
        summary: summary(spec, probe),
    })
}

fn control(guard: Guard, state: State, by: &[Mechanism], detail: impl Into<String>) -> Control {
    Control {
        guard,
        state,
        by: by.to_vec(),
        detail: detail.into(),
    }
}

/// The granted paths in words: the system runtime and harmless devices summarised, the rest
/// listed.
fn names(paths: &[PathBuf]) -> String {
    let listed = |list: &[&str], p: &Path| list.iter().any(|s| p == Path::new(s));
    let mut parts: Vec<String> = Vec::new();
    let mut saw_system = false;
    let mut saw_devices = false;
    for p in paths {
        if listed(crate::spec::SYSTEM_RUNTIME, p) {
            saw_system = true;
        } else if listed(crate::spec::SYSTEM_DEVICES, p) {
            saw_devices = true;
        } else {
            parts.push(p.display().to_string());
        }
    }
    if saw_system {
        parts.push("the system runtime (/usr, /lib*, /bin, /sbin, a few files of /etc)".into());
    }
    if saw_devices {
        parts.push("/dev/null and the other harmless devices".into());
    }
    match parts.len() {
        0 => "nothing".to_string(),
        1 => parts.remove(0),
        _ => {
            let last = parts.pop().unwrap_or_default();
            format!("{} and {last}", parts.join(", "))
        }
    }
}

/// What the sandbox installs for `spec` on this system (`s`), one control per guard in
/// [`Guard::ALL`] order, and the overall mode.
fn report(spec: &Spec, probe: &Probe, identity: Identity, s: &Summary) -> Applied {
    let ll = s.landlock_abi;
    let who = format!("user {}", identity.uid);
    let mut c = file_controls(spec, ll, &who, s);
    c.insert(2, metadata_control(spec, s, &who));
    let network = network_control(&spec.network, s, ll.is_some_and(|a| a >= 4));
    let udp = udp_control(&spec.network, s, &network);
    c.push(network);
    c.push(udp);
    c.push(other_processes_control(ll, s.ipcns, &who));
    c.push(other_runs_control(spec, s, &who));
    c.extend(process_controls(s.seccomp));
    c.push(root_control(s.dropped, identity));
    c.extend(environment_controls(spec));
    c.extend(limit_controls(&spec.limits, s, probe, identity));
    // Gaps opened on purpose say so, instead of blaming the kernel.
    let off = crate::switched_off();
    if !off.is_empty() {
        let why = format!(
            "{} is switched off by {}={}",
            off.join(", "),
            crate::DISABLE_VAR,
            off.join(",")
        );
        for control in c.iter_mut().filter(|c| c.state.is_gap()) {
            control.detail = format!("{why}: {}", control.detail);
        }
    }
    let any_kernel = ll.is_some() || s.seccomp || s.netns || s.mount_view;
    let mode = if !any_kernel {
        Mode::Unconfined
    } else if c.iter().any(|c| c.state.is_gap()) {
        Mode::Partial
    } else {
        Mode::Confined
    };
    Applied {
        mode,
        landlock_abi: ll,
        uid: identity.uid,
        gid: identity.gid,
        controls: c,
    }
}

/// Why a Landlock guard does not hold where Landlock is missing.
const NO_LANDLOCK: &str = "Landlock is not available on this kernel (Linux 5.13 or later with \
                           `landlock` in the `lsm=` boot list)";

/// Reading, writing and executing files (Landlock, ABI `ll`).
fn file_controls(spec: &Spec, ll: Option<u32>, who: &str, s: &Summary) -> Vec<Control> {
    use Mechanism as M;
    use State::*;
    let no_landlock = NO_LANDLOCK;
    let abi_at_least = |v: u32| ll.is_some_and(|a| a >= v);
    let mut out = Vec::with_capacity(3);
    out.push(if spec.read_anywhere {
        control(
            Guard::FileRead,
            Allowed,
            &[],
            format!("any file {who} may read{}", but_private(spec, s)),
        )
    } else if ll.is_some() && s.mount_view {
        control(
            Guard::FileRead,
            Enforced,
            &[M::Landlock, M::MountNamespace],
            format!(
                "only {} and the read-write trees; no other path of the host exists in the \
                 run's view (none can be found by stat, watched or listed, /proc is not \
                 mounted)",
                names(&spec.read_only)
            ),
        )
    } else if ll.is_some() {
        control(
            Guard::FileRead,
            Partial,
            &[M::Landlock],
            format!(
                "only {} and the read-write trees, but stat and readlink of any other path \
                 answer (hiding them needs a mount namespace)",
                names(&spec.read_only)
            ),
        )
    } else {
        control(
            Guard::FileRead,
            NotEnforced,
            &[],
            format!("{no_landlock}: the child reads whatever {who} may read"),
        )
    });
    out.push(if spec.write_anywhere {
        control(
            Guard::FileWrite,
            Allowed,
            &[],
            format!("anywhere {who} may write{}", but_private(spec, s)),
        )
    } else if abi_at_least(3) {
        control(
            Guard::FileWrite,
            Enforced,
            &[M::Landlock],
            format!(
                "only regular files and directories in {}",
                names(&spec.read_write)
            ),
        )
    } else if ll.is_some() {
        control(
            Guard::FileWrite,
            Partial,
            &[M::Landlock],
            "writes are limited to the read-write trees, but truncating a file elsewhere is \
             not (needs Landlock ABI 3, Linux 6.2)",
        )
    } else {
        control(
            Guard::FileWrite,
            NotEnforced,
            &[],
            format!("{no_landlock}: the child writes wherever {who} may write"),
        )
    });
    out.push(execute_control(spec, ll, s.exec_guard));
    out
}

/// What a grant to read or write anywhere leaves out: the private folders of the view.
fn but_private(spec: &Spec, s: &Summary) -> String {
    if s.mount_view && !spec.private.is_empty() {
        format!(
            ", but in {}, which holds only the run's own folders",
            names(&spec.private)
        )
    } else {
        String::new()
    }
}

/// Starting programs (Landlock, the exec guard).
fn execute_control(spec: &Spec, ll: Option<u32>, exec_guard: bool) -> Control {
    use Mechanism as M;
    use State::*;
    const ONCE: &str = "only the program and its interpreters start, once: every later execve or \
                        execveat fails (the dynamic loader run as a program, a descriptor, a \
                        memfd)";
    const LOADER: &str = "but the dynamic loader, run as a program, loads any readable program";
    if spec.exec_anywhere {
        return control(
            Guard::Execute,
            Allowed,
            &[],
            "any program in the readable trees",
        );
    }
    match (ll.is_some(), exec_guard) {
        (true, true) => control(Guard::Execute, Enforced, &[M::Landlock, M::Seccomp], ONCE),
        (false, true) => control(Guard::Execute, Enforced, &[M::Seccomp], ONCE),
        (true, false) if !spec.executables.is_empty() => control(
            Guard::Execute,
            Partial,
            &[M::Landlock],
            format!(
                "only the program, its interpreters and the granted executables, {LOADER} \
                 (program starts are counted only when no executable is granted)"
            ),
        ),
        (true, false) => control(
            Guard::Execute,
            Partial,
            &[M::Landlock],
            format!(
                "only the program and its interpreters, {LOADER} (counting program starts \
                 needs seccomp user notifications, Linux 5.8)"
            ),
        ),
        (false, false) => control(
            Guard::Execute,
            NotEnforced,
            &[],
            format!("{NO_LANDLOCK}: the child may start any program"),
        ),
    }
}

/// Mode, owner, times and extended attributes of files (a read-only mount view, seccomp).
fn metadata_control(spec: &Spec, s: &Summary, who: &str) -> Control {
    use Mechanism as M;
    use State::*;
    const SET_ID: &str = "set-user-id and set-group-id bits are never set";
    if spec.write_anywhere {
        return if s.seccomp {
            control(
                Guard::FileMetadata,
                Allowed,
                &[M::Seccomp],
                format!("anywhere {who} may change them; {SET_ID}"),
            )
        } else {
            control(
                Guard::FileMetadata,
                Allowed,
                &[],
                format!(
                    "anywhere {who} may change them, set-id bits included (denying those \
                     needs seccomp)"
                ),
            )
        };
    }
    match (s.mount_view, s.seccomp) {
        (true, true) => control(
            Guard::FileMetadata,
            Enforced,
            &[M::MountNamespace, M::Seccomp],
            format!(
                "mode, owner, times and extended attributes change only in {} (everything \
                 else is a read-only, nosuid mount); {SET_ID}",
                names(&spec.read_write)
            ),
        ),
        (false, true) => control(
            Guard::FileMetadata,
            Enforced,
            &[M::Seccomp],
            "no mount namespace for a read-only view: chmod, chown, utime and extended \
             attributes are denied everywhere, the read-write trees included",
        ),
        (true, false) => control(
            Guard::FileMetadata,
            Partial,
            &[M::MountNamespace],
            format!(
                "mode, owner, times and extended attributes change only in {}, but set-id \
                 bits can be set there (needs seccomp)",
                names(&spec.read_write)
            ),
        ),
        (false, false) => control(
            Guard::FileMetadata,
            NotEnforced,
            &[],
            format!(
                "neither a mount namespace nor seccomp: the child may change the mode, owner, \
                 times and extended attributes of any file {who} owns (Landlock does not \
                 cover them)"
            ),
        ),
    }
}

/// Signals, ptrace and abstract sockets to other processes (Landlock scopes, ABI 6).
fn other_processes_control(ll: Option<u32>, ipcns: bool, who: &str) -> Control {
    use Mechanism as M;
    use State::*;
    let no_landlock = NO_LANDLOCK;
    let abi_at_least = |v: u32| ll.is_some_and(|a| a >= v);
    let (ipc, ipc_gap) = if ipcns {
        (
            "; System V IPC and POSIX message queues are the run's own",
            "",
        )
    } else {
        (
            "",
            "; System V IPC reaches other processes (needs an IPC namespace)",
        )
    };
    let mut by = vec![M::Landlock];
    if ipcns {
        by.push(M::IpcNamespace);
    }
    if abi_at_least(6) {
        control(
            Guard::OtherProcesses,
            if ipcns { Enforced } else { Partial },
            &by,
            format!(
                "signals, ptrace and abstract UNIX sockets reach only the run's own \
                 processes{ipc}{ipc_gap}"
            ),
        )
    } else if ll.is_some() {
        control(
            Guard::OtherProcesses,
            Partial,
            &by,
            format!(
                "ptrace is limited to the run{ipc}, but signals and abstract UNIX sockets reach \
                 other processes of {who} (needs Landlock ABI 6, Linux 6.12){ipc_gap}"
            ),
        )
    } else {
        control(
            Guard::OtherProcesses,
            if ipcns { Partial } else { NotEnforced },
            if ipcns { &[M::IpcNamespace][..] } else { &[] },
            format!("{no_landlock}: the child may signal other processes of {who}{ipc}{ipc_gap}"),
        )
    }
}

/// Other runs of the same user: their folders and their processes (a mount view, Landlock).
fn other_runs_control(spec: &Spec, s: &Summary, who: &str) -> Control {
    use Mechanism as M;
    use State::*;
    let anywhere = spec.read_anywhere || spec.write_anywhere;
    let ll = s.landlock_abi.is_some();
    let mut by = Vec::new();
    if s.mount_view {
        by.push(M::MountNamespace);
    }
    if ll {
        by.push(M::Landlock);
    }
    let own = if spec.private.is_empty() {
        "no folder is private to the run".to_string()
    } else {
        format!(
            "{} (where runs keep their own folders) is private to each run",
            names(&spec.private)
        )
    };
    match (s.mount_view, anywhere, ll) {
        (true, false, _) => control(
            Guard::OtherRuns,
            Enforced,
            &by,
            "nothing of another run exists in the run's view (only the granted trees are \
             bound in; /tmp and /dev/shm are its own; /proc is not mounted)",
        ),
        (true, true, true) if !spec.private.is_empty() => control(
            Guard::OtherRuns,
            Enforced,
            &by,
            format!(
                "{own}; the /proc entries of other runs' processes (root, cwd, fd) are closed \
                 by Landlock; an output folder the caller names elsewhere is shared with \
                 runs granted to read or write anywhere"
            ),
        ),
        (true, true, true) => control(
            Guard::OtherRuns,
            Partial,
            &by,
            format!(
                "{own}: the run sees the host's tree, other runs' folders included; the /proc \
                 entries of their processes are closed by Landlock"
            ),
        ),
        (true, true, false) => control(
            Guard::OtherRuns,
            Partial,
            &by,
            format!(
                "{own}, but the /proc entries of other runs' processes (root, cwd, fd) of \
                 {who} are open ({NO_LANDLOCK})"
            ),
        ),
        (false, false, true) => control(
            Guard::OtherRuns,
            Partial,
            &by,
            "Landlock keeps other runs' files closed, but their names are found by stat (a \
             private view needs a mount namespace)",
        ),
        (false, _, _) => control(
            Guard::OtherRuns,
            NotEnforced,
            &by,
            format!(
                "every run is {who}: a concurrent run's folders and files can be read and \
                 changed (a private view needs a mount namespace)"
            ),
        ),
    }
}

/// System calls and the process group (seccomp, a new session).
fn process_controls(seccomp: bool) -> Vec<Control> {
    use Mechanism as M;
    use State::*;
    let mut out = Vec::with_capacity(2);
    out.push(if seccomp {
        control(
            Guard::Syscalls,
            Enforced,
            &[M::Seccomp],
            "namespaces, mounts, the mount list, ptrace, BPF, perf, userfaultfd, keyrings, \
             modules, io_uring, file handles, file watches (without reading anywhere) and \
             terminal injection are denied",
        )
    } else {
        control(
            Guard::Syscalls,
            NotEnforced,
            &[],
            "seccomp is not available: every system call the user may make is allowed",
        )
    });

    out.push(if seccomp {
        control(
            Guard::ProcessGroup,
            Enforced,
            &[M::NewSession, M::Seccomp],
            "the child leads a new session and process group; setsid and setpgid are denied",
        )
    } else {
        control(
            Guard::ProcessGroup,
            Partial,
            &[M::NewSession],
            "the child leads a new process group, but a process may leave it with setsid \
             (needs seccomp)",
        )
    });

    out
}

/// Root: the user the child runs as.
fn root_control(dropped: bool, identity: Identity) -> Control {
    use Mechanism as M;
    use State::*;
    if dropped {
        control(
            Guard::Root,
            Enforced,
            &[M::DropRoot],
            format!(
                "runs as {}:{} without supplementary groups",
                identity.uid, identity.gid
            ),
        )
    } else {
        control(
            Guard::Root,
            Enforced,
            &[],
            format!(
                "the parent is not root; the child keeps its user {}",
                identity.uid
            ),
        )
    }
}

/// The environment and the inherited file descriptors.
fn environment_controls(spec: &Spec) -> Vec<Control> {
    use Mechanism as M;
    use State::*;
    let mut out = Vec::with_capacity(2);
    let env_names: Vec<String> = spec
        .env
        .iter()
        .map(|(k, _)| k.to_string_lossy().into_owned())
        .collect();
    out.push(control(
        Guard::Environment,
        Enforced,
        &[M::ClearEnv],
        if env_names.is_empty() {
            "empty".to_string()
        } else {
            format!("only {}", env_names.join(", "))
        },
    ));
    out.push(if cfg!(target_os = "linux") {
        control(
            Guard::FileDescriptors,
            Enforced,
            &[M::CloseFds],
            "only stdin, stdout and stderr",
        )
    } else {
        control(
            Guard::FileDescriptors,
            NotEnforced,
            &[],
            "inherited descriptors are not closed on this system",
        )
    });

    out
}

fn network_control(network: &Network, s: &Summary, landlock_tcp: bool) -> Control {
    use Mechanism as M;
    use State::*;
    match network {
        Network::Unrestricted => control(Guard::Network, Allowed, &[], "any connection"),
        Network::Denied => {
            let mut by = Vec::new();
            if s.netns {
                by.push(M::NetworkNamespace);
            }
            if landlock_tcp {
                by.push(M::Landlock);
            }
            if s.seccomp {
                by.push(M::Seccomp);
            }
            if s.seccomp || s.netns {
                control(
                    Guard::Network,
                    Enforced,
                    &by,
                    "no sockets and no network interface (socketpair only)",
                )
            } else if landlock_tcp {
                control(
                    Guard::Network,
                    Partial,
                    &by,
                    "TCP is denied, but UDP, raw and local sockets are not (needs seccomp or a \
                     network namespace)",
                )
            } else {
                control(
                    Guard::Network,
                    NotEnforced,
                    &by,
                    "no mechanism can deny sockets on this kernel",
                )
            }
        }
        Network::TcpConnect {
            ports,
            name_resolution,
        } => {
            let list = ports
                .iter()
                .map(u16::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            let udp_by_port = s.landlock_abi.is_some_and(handles_udp);
            let mut by = Vec::new();
            if landlock_tcp {
                by.push(M::Landlock);
            }
            if s.seccomp {
                by.push(M::Seccomp);
            }
            let dns = if !*name_resolution {
                String::new()
            } else if udp_by_port {
                "; DNS: TCP and UDP to port 53".to_string()
            } else {
                "; DNS: TCP to port 53, UDP (see `udp`)".to_string()
            };
            if !landlock_tcp {
                control(
                    Guard::Network,
                    NotEnforced,
                    &by,
                    format!(
                        "TCP to any port is possible: port rules need Landlock ABI 4 (Linux \
                         6.7); asked for ports {list}"
                    ),
                )
            } else if !s.seccomp {
                control(
                    Guard::Network,
                    Partial,
                    &by,
                    format!(
                        "TCP only to ports {list}{dns}, but other socket types (UDP, raw, \
                         local) are not denied (needs seccomp)"
                    ),
                )
            } else {
                control(
                    Guard::Network,
                    Enforced,
                    &by,
                    format!("TCP connect to ports {list} only, no listening{dns}"),
                )
            }
        }
    }
}

/// The `udp` control: what the network control says of datagrams, except where name resolution
/// opens UDP to any address because the kernel's Landlock cannot filter UDP ports (before ABI
/// 10): that gap is reported here, not enforced.
fn udp_control(network: &Network, s: &Summary, network_control: &Control) -> Control {
    use Mechanism as M;
    use State::*;
    match network {
        Network::TcpConnect {
            name_resolution: true,
            ..
        } if s.seccomp => {
            let abi = s.landlock_abi.unwrap_or(0);
            if handles_udp(abi) {
                control(
                    Guard::Udp,
                    Enforced,
                    &[M::Landlock, M::Seccomp],
                    "UDP only to port 53, for name resolution",
                )
            } else {
                control(
                    Guard::Udp,
                    NotEnforced,
                    &[M::Seccomp],
                    format!(
                        "UDP to any address and port, for name resolution: Landlock filters UDP \
                         ports only from ABI 10 (this kernel: {})",
                        if abi == 0 {
                            "none".to_string()
                        } else {
                            abi.to_string()
                        }
                    ),
                )
            }
        }
        Network::TcpConnect { .. } if s.seccomp => control(
            Guard::Udp,
            Enforced,
            &[M::Seccomp],
            "no UDP socket (TCP only)",
        ),
        _ => control(
            Guard::Udp,
            network_control.state,
            &network_control.by,
            format!("as the network guard: {}", network_control.detail),
        ),
    }
}

fn limit_controls(limits: &Limits, s: &Summary, probe: &Probe, identity: Identity) -> Vec<Control> {
    use Mechanism as M;
    use State::*;
    let linux = cfg!(target_os = "linux");
    let one = |guard: Guard, value: Option<u64>, what: &dyn Fn(u64) -> String| match value {
        None => control(guard, Unlimited, &[], "not set"),
        Some(v) if linux => control(guard, Enforced, &[M::Rlimit], what(v)),
        Some(_) => control(guard, NotEnforced, &[], "limits are set on Linux only"),
    };
    let mut c = vec![
        one(Guard::CpuTime, limits.cpu_seconds, &|v| {
            format!("{v} s of CPU per process")
        }),
        one(Guard::AddressSpace, limits.address_space, &|v| {
            format!("{} of address space per process", bytes(v))
        }),
        one(Guard::FileSize, limits.file_size, &|v| {
            format!("{} per file written", bytes(v))
        }),
        one(Guard::OpenFiles, limits.open_files, &|v| {
            format!("{v} open files per process")
        }),
    ];
    c.push(match limits.processes {
        None => control(Guard::Processes, Unlimited, &[], "not set"),
        Some(n) if s.nproc && s.userns => control(
            Guard::Processes,
            Enforced,
            &[M::Rlimit, M::UserNamespace],
            format!("{n} processes and threads for the run"),
        ),
        Some(n) if s.nproc => control(
            Guard::Processes,
            Partial,
            &[M::Rlimit],
            format!(
                "{n} processes and threads, shared with every process of user {} (no user \
                 namespace for a per-run count)",
                identity.uid
            ),
        ),
        Some(_) => control(
            Guard::Processes,
            NotEnforced,
            &[],
            if probe.root || !linux {
                "no mechanism bounds the number of processes here".to_string()
            } else {
                format!(
                    "the process limit counts every process of user {}; without a user \
                     namespace it cannot be set for one run",
                    identity.uid
                )
            },
        ),
    });
    c
}

/// `1.5 GiB`, `200 MiB`, `512 B`.
fn bytes(v: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if v >= size {
            let whole = v / size;
            let tenth = (v % size) * 10 / size;
            return if tenth == 0 {
                format!("{whole} {unit}")
            } else {
                format!("{whole}.{tenth} {unit}")
            };
        }
    }
    format!("{v} B")
}

#[cfg(target_os = "linux")]
fn handles_udp(abi: u32) -> bool {
    crate::landlock_rules::handles_udp(abi)
}

#[cfg(not(target_os = "linux"))]
fn handles_udp(_abi: u32) -> bool {
    false
}
