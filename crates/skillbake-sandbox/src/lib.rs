//! # skillbake-sandbox
//!
//! Confines a child process on Linux with the kernel's own mechanisms, so that what a program
//! may do is what its caller granted and nothing more. It is mechanism, not policy: it knows
//! nothing about skill packs; its caller (skillbake's executor) decides what to grant.
//!
//! ```no_run
//! use skillbake_sandbox::{confine, Limits, Network, Spec};
//! use std::process::Command;
//!
//! let out = std::env::temp_dir().join("run-output");
//! std::fs::create_dir_all(&out)?;
//! let spec = Spec::new()
//!     .system_runtime()                 // what python3 needs from /usr, /etc, /dev
//!     .read_only("/opt/packs/read-file") // the materialised pack
//!     .read_write(&out)                 // the only writable place
//!     .network(Network::Denied)
//!     .limits(Limits::none().cpu_seconds(10).processes(32).file_size(64 << 20))
//!     .env("PATH", "/usr/bin:/bin")
//!     .env("OUTPUT_DIR", &out);
//! let mut cmd = Command::new("/usr/bin/python3");
//! cmd.arg("/opt/packs/read-file/scripts/read.py").current_dir(&out);
//! let applied = skillbake_sandbox::confine(&mut cmd, &spec)?;
//! for gap in applied.gaps() {
//!     eprintln!("not enforced: {} ({})", gap.guard, gap.detail);
//! }
//! let status = cmd.status()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! * [`Spec`] — what the child may do: read-only and read-write trees, programs it may
//!   execute, network ([`Network`]), resource [`Limits`], its exact environment, and the
//!   unprivileged user it runs as when the parent is root.
//! * [`probe()`] — which mechanisms this kernel and process support (Landlock ABI, seccomp, user,
//!   network and mount namespaces, root), measured once and cached; [`keep_probe_in`] keeps a
//!   complete result between processes, and [`forget_kept_probe`] drops it after a failed start.
//! * [`confine()`] — prepares a [`std::process::Command`] and returns [`Applied`]: per
//!   [`Guard`], whether it is enforced and by which [`Mechanism`], or what stays open and why.
//!
//! | guard | mechanism |
//! |---|---|
//! | files read, written, executed | Landlock (every file-system right of the kernel's ABI handled) |
//! | other programs | the exec guard: seccomp user notifications answered by a thread of the parent, which lets only the program's own start through |
//! | host paths outside the grant, other runs' folders | a new mount namespace: an empty root with only the granted trees bound in (or the host's tree with [`Spec::private`] folders emptied), a private `/tmp` and `/dev/shm`, no `/proc` |
//! | file mode, owner, times, extended attributes | that view, read-only but for the read-write trees; seccomp (never set-id bits; without the view, no change at all) |
//! | network denied | seccomp (no `socket`), empty network namespace, Landlock TCP rules |
//! | network to some TCP ports | Landlock TCP connect rules (ABI 4), seccomp (TCP sockets only) |
//! | other processes | Landlock scopes (ABI 6): signals and abstract sockets stay in the run; an IPC namespace for System V IPC |
//! | dangerous system calls | seccomp deny list (namespaces, mounts, ptrace, BPF, io_uring, …) |
//! | leaving the process group | `setsid` in the child, seccomp denies `setsid`/`setpgid` |
//! | root | `setgroups`/`setresgid`/`setresuid` to [`Spec::run_as`] |
//! | environment, descriptors | cleared environment; descriptors above 2 close on exec |
//! | CPU, memory, file size, open files | `setrlimit` |
//! | processes | `RLIMIT_NPROC` inside a new user namespace, so the count is the run's own |
//!
//! The only `unsafe` code of skillbake is in this crate's `pre_exec` module: the step that
//! runs between `fork` and `exec`, which performs only async-signal-safe system calls on data
//! prepared before the fork.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]
#![cfg(unix)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod access;
mod confine;
mod error;
#[cfg(target_os = "linux")]
mod kept;
#[cfg(target_os = "linux")]
mod landlock_rules;
#[cfg(target_os = "linux")]
mod pre_exec;
mod probe;
mod program;
mod report;
mod resolve;
#[cfg(target_os = "linux")]
mod seccomp_filter;
mod spec;
#[cfg(target_os = "linux")]
mod view;

pub use access::Access;
pub use confine::{check_access, confine, preview, Reach};
pub use error::Error;
pub use probe::{forget_kept_probe, keep_probe_in, probe, switched_off, Probe, DISABLE_VAR};
pub use report::{Applied, Control, Guard, Mechanism, Mode, State};
pub use spec::{system_devices, system_runtime_paths, Identity, Limits, Network, Spec};
