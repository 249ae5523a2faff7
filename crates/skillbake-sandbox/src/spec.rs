//! [`Spec`]: what a confined child may do. Pure data; [`crate::confine()`] turns it into kernel
//! rules.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Everything a confined child may do. The default allows nothing beyond running its own
/// program: no file outside the granted trees, no network, an empty environment, no limits set
/// (set [`Spec::limits`]), and, when the parent is root, the user `nobody`.
///
/// Paths are resolved (symbolic links followed) when [`crate::confine()`] is called; a granted tree
/// covers everything beneath it, whatever the name it is reached by.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Spec {
    /// Trees (directories or single files) the child may read, list and map, but not modify:
    /// the materialised pack, the interpreter's runtime (see [`system_runtime_paths`]).
    pub read_only: Vec<PathBuf>,
    /// Trees the child may read and modify: the run's output folder. Inside them the child may
    /// create, write, truncate, rename and remove regular files and directories; it may not
    /// create symbolic links, named pipes, sockets or device nodes.
    pub read_write: Vec<PathBuf>,
    /// Programs the child may execute besides the command's own program (which is always
    /// allowed, together with its ELF interpreter and, for a `#!` script, the interpreter named
    /// on its first line). Ignored when [`Spec::exec_anywhere`] is set.
    pub executables: Vec<PathBuf>,
    /// Folders the child's view of the file system replaces by empty, private ones (where a
    /// mount namespace makes the view): the granted trees inside them are bound back, nothing
    /// else of them is visible, even with [`Spec::read_anywhere`]. Name the folder where runs
    /// keep their own folders, so that no run sees another's. The view of a child that may not
    /// read anywhere has only the granted trees anyway, and a private `/tmp` and `/dev/shm`.
    pub private: Vec<PathBuf>,
    /// Read (and list) any file the child's user may read, not only the granted trees.
    pub read_anywhere: bool,
    /// Write anywhere the child's user may write, not only the [`Spec::read_write`] trees.
    pub write_anywhere: bool,
    /// Execute any program in the trees the child may read (start other programs), instead of
    /// only the command's own program and [`Spec::executables`].
    pub exec_anywhere: bool,
    /// Which connections the child may make.
    pub network: Network,
    /// Resource limits (none by default).
    pub limits: Limits,
    /// The exact environment of the child; everything else in the parent's environment is
    /// cleared. The caller builds the allow-list.
    pub env: Vec<(OsString, OsString)>,
    /// The unprivileged user and group the child runs as when the parent is root. Ignored when
    /// the parent is not root (the child then keeps the parent's user, which is not root).
    pub run_as: Identity,
}

impl Spec {
    /// A spec that allows nothing: see [`Spec`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Grants reading the tree at `path`.
    pub fn read_only(mut self, path: impl Into<PathBuf>) -> Self {
        self.read_only.push(path.into());
        self
    }

    /// Grants reading and modifying the tree at `path`.
    pub fn read_write(mut self, path: impl Into<PathBuf>) -> Self {
        self.read_write.push(path.into());
        self
    }

    /// Grants executing the program at `path`.
    pub fn executable(mut self, path: impl Into<PathBuf>) -> Self {
        self.executables.push(path.into());
        self
    }

    /// Grants reading what an interpreter (python3, sh, node, …) needs from the system:
    /// every path of [`system_runtime_paths`] that exists, read-only, and the harmless devices
    /// of [`system_devices`] read-write.
    pub fn system_runtime(mut self) -> Self {
        self.read_only.extend(system_runtime_paths());
        self.read_write.extend(system_devices());
        self
    }

    /// Sets the network access.
    pub fn network(mut self, network: Network) -> Self {
        self.network = network;
        self
    }

    /// Sets the resource limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Adds one variable to the child's environment.
    pub fn env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Adds a folder the child's view replaces by an empty, private one (see [`Spec::private`]).
    pub fn private(mut self, path: impl Into<PathBuf>) -> Self {
        self.private.push(path.into());
        self
    }

    /// Sets the user the child runs as when the parent is root.
    pub fn run_as(mut self, identity: Identity) -> Self {
        self.run_as = identity;
        self
    }
}

/// Which connections a confined child may make.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Network {
    /// No socket other than a `socketpair` and local (`AF_UNIX`) sockets; no network interface
    /// but a loopback device that is down.
    #[default]
    Denied,
    /// TCP connections to these remote ports only (any address); no listening. With
    /// `name_resolution`, UDP sockets (which the kernel cannot restrict by port) and TCP port
    /// 53 are allowed too, so that host names resolve.
    TcpConnect {
        /// The remote ports the child may connect to.
        ports: Vec<u16>,
        /// Allow DNS: UDP (to any port) and TCP to port 53.
        name_resolution: bool,
    },
    /// Any connection.
    Unrestricted,
}

/// Resource limits of a confined child (`setrlimit`). `None` leaves the parent's limit.
///
/// The CPU, address-space, file-size and open-file limits hold for each process of the child;
/// the process limit holds for all of them together (threads count as processes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct Limits {
    /// CPU time in seconds: `SIGXCPU` when it is used up, `SIGKILL` one second later.
    pub cpu_seconds: Option<u64>,
    /// Size of the address space (virtual memory) in bytes: allocations beyond it fail.
    pub address_space: Option<u64>,
    /// Size of any one file the child writes, in bytes: writes beyond it fail (`EFBIG`,
    /// `SIGXFSZ`).
    pub file_size: Option<u64>,
    /// Number of open file descriptors of each process.
    pub open_files: Option<u64>,
    /// Number of processes and threads of the run together, the child included.
    pub processes: Option<u64>,
}

impl Limits {
    /// No limit set.
    pub fn none() -> Self {
        Self::default()
    }

    /// Sets the CPU time limit.
    pub fn cpu_seconds(mut self, seconds: u64) -> Self {
        self.cpu_seconds = Some(seconds);
        self
    }

    /// Sets the address-space limit.
    pub fn address_space(mut self, bytes: u64) -> Self {
        self.address_space = Some(bytes);
        self
    }

    /// Sets the file-size limit.
    pub fn file_size(mut self, bytes: u64) -> Self {
        self.file_size = Some(bytes);
        self
    }

    /// Sets the open-files limit.
    pub fn open_files(mut self, count: u64) -> Self {
        self.open_files = Some(count);
        self
    }

    /// Sets the process limit.
    pub fn processes(mut self, count: u64) -> Self {
        self.processes = Some(count);
        self
    }
}

/// A numeric user and group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Identity {
    /// User id.
    pub uid: u32,
    /// Group id.
    pub gid: u32,
}

impl Identity {
    /// `nobody:nogroup` (65534:65534), the default.
    pub const NOBODY: Identity = Identity {
        uid: 65534,
        gid: 65534,
    };
}

impl Default for Identity {
    fn default() -> Self {
        Self::NOBODY
    }
}

/// Directories and files an interpreter usually reads: the system's programs and libraries
/// (`/usr`, `/lib*`, `/bin`, `/sbin`) and the few files of `/etc` that the dynamic loader, name
/// resolution, time zones and TLS certificates need. Only paths that exist are returned. Users'
/// homes, `/tmp`, `/var`, `/proc`, `/sys`, `/root` and the rest of `/etc` are not in it.
pub fn system_runtime_paths() -> Vec<PathBuf> {
    existing(SYSTEM_RUNTIME)
}

/// Every path [`system_runtime_paths`] returns where it exists.
pub(crate) const SYSTEM_RUNTIME: &[&str] = &[
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/bin",
    "/sbin",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/ld.so.preload",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/locale.alias",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
    "/etc/crypto-policies",
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/nsswitch.conf",
    "/etc/gai.conf",
    "/etc/services",
    "/etc/protocols",
    "/etc/passwd",
    "/etc/group",
    "/etc/mime.types",
    "/etc/magic",
    "/etc/os-release",
    "/etc/debian_version",
];

/// Device files that are harmless to read and write: `/dev/null`, `/dev/zero`, `/dev/full`,
/// `/dev/random`, `/dev/urandom` (only those that exist).
pub fn system_devices() -> Vec<PathBuf> {
    existing(SYSTEM_DEVICES)
}

/// Every device [`system_devices`] returns where it exists.
pub(crate) const SYSTEM_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

fn existing(paths: &[&str]) -> Vec<PathBuf> {
    paths
        .iter()
        .map(Path::new)
        .filter(|p| p.exists())
        .map(Path::to_path_buf)
        .collect()
}
