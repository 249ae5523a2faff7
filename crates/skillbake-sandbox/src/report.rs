//! [`Applied`]: what [`crate::confine()`] installed, guard by guard, and why a guard is not
//! enforced when the kernel lacks the mechanism.

use std::fmt;

/// A kernel or process mechanism that enforces a guard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Mechanism {
    /// Landlock (file-system rules, TCP port rules, signal and abstract-socket scoping).
    Landlock,
    /// A seccomp-bpf system-call filter.
    Seccomp,
    /// A new, empty network namespace.
    NetworkNamespace,
    /// A new user namespace (which makes the process count the run's own).
    UserNamespace,
    /// A new mount namespace: a private, read-only view of the file system.
    MountNamespace,
    /// A new IPC namespace: System V IPC and POSIX message queues of the run's own.
    IpcNamespace,
    /// `setrlimit`.
    Rlimit,
    /// `setgroups`/`setresgid`/`setresuid` from root to an unprivileged user.
    DropRoot,
    /// The environment is cleared and rebuilt from the spec.
    ClearEnv,
    /// `setsid`: the child leads a new session and process group.
    NewSession,
    /// File descriptors other than 0, 1 and 2 are closed when the program starts.
    CloseFds,
}

impl Mechanism {
    /// The mechanism's name as it appears in reports and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Mechanism::Landlock => "landlock",
            Mechanism::Seccomp => "seccomp",
            Mechanism::NetworkNamespace => "network_namespace",
            Mechanism::UserNamespace => "user_namespace",
            Mechanism::MountNamespace => "mount_namespace",
            Mechanism::IpcNamespace => "ipc_namespace",
            Mechanism::Rlimit => "rlimit",
            Mechanism::DropRoot => "drop_root",
            Mechanism::ClearEnv => "clear_env",
            Mechanism::NewSession => "new_session",
            Mechanism::CloseFds => "close_fds",
        }
    }
}

impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One thing the sandbox guards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Guard {
    /// Reading files outside the granted trees.
    FileRead,
    /// Writing, creating, truncating or removing files outside the read-write trees.
    FileWrite,
    /// Changing the mode, owner, times or extended attributes of files outside the read-write
    /// trees, and setting set-user-id or set-group-id bits anywhere.
    FileMetadata,
    /// Executing programs other than the granted ones.
    Execute,
    /// Opening network connections.
    Network,
    /// Sending UDP datagrams: part of `Network`, but open to any address when name resolution is
    /// granted and the kernel's Landlock cannot filter UDP ports (before ABI 10).
    Udp,
    /// Signalling, tracing, connecting to abstract sockets of, or sharing System V IPC with
    /// processes outside the run.
    OtherProcesses,
    /// Seeing or changing another run's folders or processes (every run is the same user).
    OtherRuns,
    /// Privileged or kernel-attack-surface system calls (namespaces, mounts, BPF, keyrings,
    /// `io_uring`, `ptrace`, terminal injection, the mount list, file watches).
    Syscalls,
    /// Leaving the process group (so that killing the group kills everything the run started).
    ProcessGroup,
    /// Running as root.
    Root,
    /// Seeing the parent's environment.
    Environment,
    /// Inheriting the parent's open files.
    FileDescriptors,
    /// CPU time of each process.
    CpuTime,
    /// Address space of each process.
    AddressSpace,
    /// Size of each file written.
    FileSize,
    /// Open files of each process.
    OpenFiles,
    /// Processes and threads of the run.
    Processes,
}

impl Guard {
    /// Every guard, in report order.
    pub const ALL: &'static [Guard] = &[
        Guard::FileRead,
        Guard::FileWrite,
        Guard::FileMetadata,
        Guard::Execute,
        Guard::Network,
        Guard::Udp,
        Guard::OtherProcesses,
        Guard::OtherRuns,
        Guard::Syscalls,
        Guard::ProcessGroup,
        Guard::Root,
        Guard::Environment,
        Guard::FileDescriptors,
        Guard::CpuTime,
        Guard::AddressSpace,
        Guard::FileSize,
        Guard::OpenFiles,
        Guard::Processes,
    ];

    /// The guard's name as it appears in reports and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Guard::FileRead => "file_read",
            Guard::FileWrite => "file_write",
            Guard::FileMetadata => "file_metadata",
            Guard::Execute => "execute",
            Guard::Network => "network",
            Guard::Udp => "udp",
            Guard::OtherProcesses => "other_processes",
            Guard::OtherRuns => "other_runs",
            Guard::Syscalls => "syscalls",
            Guard::ProcessGroup => "process_group",
            Guard::Root => "root",
            Guard::Environment => "environment",
            Guard::FileDescriptors => "file_descriptors",
            Guard::CpuTime => "cpu_time",
            Guard::AddressSpace => "address_space",
            Guard::FileSize => "file_size",
            Guard::OpenFiles => "open_files",
            Guard::Processes => "processes",
        }
    }
}

impl fmt::Display for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How well a guard holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum State {
    /// The kernel enforces it completely.
    Enforced,
    /// The kernel enforces part of it; the detail says which part is open.
    Partial,
    /// Nothing enforces it on this kernel; the detail says why.
    NotEnforced,
    /// The spec grants it, so there is nothing to enforce (e.g. `read_anywhere`, network
    /// unrestricted).
    Allowed,
    /// A resource limit the spec leaves unset.
    Unlimited,
}

impl State {
    /// The state's name as it appears in reports and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Enforced => "enforced",
            State::Partial => "partial",
            State::NotEnforced => "not_enforced",
            State::Allowed => "allowed",
            State::Unlimited => "unlimited",
        }
    }

    /// True for [`State::Partial`] and [`State::NotEnforced`]: something the spec denies can
    /// still happen.
    pub fn is_gap(self) -> bool {
        matches!(self, State::Partial | State::NotEnforced)
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One line of [`Applied`]: a guard, how well it holds, by which mechanisms, in words.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Control {
    /// What is guarded.
    pub guard: Guard,
    /// How well it holds.
    pub state: State,
    /// The mechanisms that enforce it (empty unless enforced or partial).
    pub by: Vec<Mechanism>,
    /// A sentence: the limit's value, what is allowed, or what is open and why.
    pub detail: String,
}

/// Overall sandbox mode of a run, for logs and result metadata.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Mode {
    /// Every guard the spec asks for is enforced.
    Confined,
    /// Some guards are enforced, some are not (see [`Applied::gaps`]).
    Partial,
    /// Neither Landlock nor seccomp nor a namespace could be used: only limits, the
    /// environment and the user hold.
    Unconfined,
}

impl Mode {
    /// The mode's name as it appears in reports and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Confined => "confined",
            Mode::Partial => "partial",
            Mode::Unconfined => "unconfined",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What [`crate::confine()`] installed on a command, one [`Control`] per [`Guard`] in
/// [`Guard::ALL`] order. It describes the child before it runs; if the kernel refuses a step it
/// promised, the spawn fails instead (the sandbox fails closed).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Applied {
    /// The overall mode.
    pub mode: Mode,
    /// The Landlock ABI version used, if any.
    pub landlock_abi: Option<u32>,
    /// The user and group the child runs as.
    pub uid: u32,
    /// The group the child runs as.
    pub gid: u32,
    /// Every guard, in [`Guard::ALL`] order.
    pub controls: Vec<Control>,
}

impl Applied {
    /// The control of one guard.
    pub fn control(&self, guard: Guard) -> Option<&Control> {
        self.controls.iter().find(|c| c.guard == guard)
    }

    /// The state of one guard ([`State::NotEnforced`] if it is missing, which does not happen
    /// for an `Applied` built by [`crate::confine()`]).
    pub fn state(&self, guard: Guard) -> State {
        self.control(guard).map_or(State::NotEnforced, |c| c.state)
    }

    /// The controls that are partial or not enforced.
    pub fn gaps(&self) -> impl Iterator<Item = &Control> {
        self.controls.iter().filter(|c| c.state.is_gap())
    }

    /// Every mechanism in use, sorted, without repetition.
    pub fn mechanisms(&self) -> Vec<Mechanism> {
        let mut all: Vec<Mechanism> = self.controls.iter().flat_map(|c| c.by.clone()).collect();
        all.sort();
        all.dedup();
        all
    }
}

impl fmt::Display for Applied {
    /// A table: one line per guard with its state, mechanisms and detail.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "sandbox: {} (uid {}, gid {}, Landlock ABI {})",
            self.mode,
            self.uid,
            self.gid,
            self.landlock_abi
                .map_or_else(|| "none".to_string(), |v| v.to_string())
        )?;
        for c in &self.controls {
            let by: Vec<&str> = c.by.iter().map(|m| m.as_str()).collect();
            writeln!(
                f,
                "  {:<16} {:<12} {:<40} {}",
                c.guard.as_str(),
                c.state.as_str(),
                by.join("+"),
                c.detail
            )?;
        }
        Ok(())
    }
}
