//! The pack's permissions made the real limits of its process: the mapping from the permission
//! vocabulary to a [`skillbake_sandbox::Spec`], the run's environment allow-list, the default
//! resource limits, the refusal of high-risk packs where the kernel cannot enforce the limits,
//! and the preparation a root parent needs to hand the run to an unprivileged user.
//!
//! | declared permission | sandbox |
//! |---|---|
//! | (none) | reads: the pack, the output folder, the interpreter's runtime; writes: the output folder (regular files and folders only); no socket; only the interpreter may be executed; 64 processes and threads |
//! | `filesystem:read` | reading any file the run's user may read |
//! | `filesystem:write` | writing anywhere the run's user may write |
//! | `smtp` | TCP connections to ports 25, 465, 587 and 2525, and name resolution (UDP, TCP 53) |
//! | `network` | any connection |
//! | `subprocess` | executing any program of the readable trees; 512 processes and threads |
//!
//! The run gets what its pack **declares**, not everything the policy grants (the policy check
//! has already made sure the declared permissions are granted).
//!
//! **Environment**: cleared, then `PATH` (the parent's, without folders the run's user cannot
//! reach), `HOME` and `TMPDIR` (both a new private folder of the run, removed after it: nothing
//! one run leaves there reaches the next), `PYTHONNOUSERSITE=1`, the locale (`LANG`, `LANGUAGE`,
//! `LC_*`) and `TZ` from the parent, `OUTPUT_DIR` and what the executor and the policy set
//! ([`Policy::env`]), and the parent's variables the policy passes through
//! ([`Policy::pass_env`]). Nothing else of the parent's environment reaches the script.
//!
//! **Root**: when skillbake runs as root the script runs as `nobody` (65534:65534, or
//! [`Policy::run_as`]). The run's output folder, opened once without following another user's
//! symbolic link on the way (such a link is refused), is handed to that user's group when it cannot write there (root stays
//! its owner, so no run can rename or replace it); the file a large stdout goes to is created
//! through that descriptor; the script reads the pack from a verified read-only copy owned by
//! root with the user's group (root's cache is not readable by it), shared by the runs of the
//! pack and checked before each (see [`crate::materialise`]); the interpreter is the first one
//! on `PATH` that user can execute.
//!
//! **High-risk packs** (declaring `network`, `smtp`, `filesystem:write`, `filesystem` or
//! `subprocess`) are refused with `PERMISSION_DENIED` when any isolation guard of the sandbox
//! (files, network, other processes, system calls, the process group, root, environment,
//! descriptors) is not enforced on this system, unless the policy accepts running unconfined
//! ([`Policy::allow_unconfined`], `--unconfined`). Other packs run, and the result's metadata
//! (`meta.sandbox.not_enforced`) lists what is not enforced.

use crate::outcome::{Confinement, ErrorCode, Failure};
use crate::policy::{Policy, HIGH_RISK};
use skillbake::Skill;
use skillbake_format::permission::Set;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;
#[cfg(unix)]
use {
    crate::policy::{
        DEFAULT_FILE_SIZE, DEFAULT_MEMORY, DEFAULT_OPEN_FILES, DEFAULT_PROCESSES,
        DEFAULT_PROCESSES_SUBPROCESS,
    },
    skillbake_format::permission::{self, SMTP_PORTS},
    skillbake_sandbox as sandbox,
    std::ffi::{OsStr, OsString},
    std::path::Path,
};

/// The folders of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folders {
    /// The verified, read-only copy of the pack.
    pub pack: PathBuf,
    /// `OUTPUT_DIR`: the one folder the script may write to by default.
    pub output: PathBuf,
    /// The working folder.
    pub work: PathBuf,
}

/// The run's `PATH` (the parent's folders its user can reach) and its interpreter with that
/// interpreter's own prefix, and the system's runtime paths and devices that exist, found once
/// for every confinement of one call (its dry check before anything is written, then each
/// attempt): the parent's `PATH` is searched, and the system's paths tested, only once.
#[derive(Debug, Default)]
pub(crate) struct Found {
    #[cfg(unix)]
    slot: std::sync::OnceLock<(OsString, PathBuf, Option<PathBuf>)>,
    #[cfg(unix)]
    system: std::sync::OnceLock<(Vec<PathBuf>, Vec<PathBuf>)>,
}

/// Parent variables every run keeps (when set).
const KEPT_ENV: &[&str] = &["LANG", "LANGUAGE", "TZ"];

#[cfg(unix)]
/// What the run is allowed, from what its pack declares.
fn spec_for(declared: Set, policy: &Policy, timeout: Duration, found: &Found) -> sandbox::Spec {
    let l = policy.sandbox.limits;
    let subprocess = declared.covers(Set::SUBPROCESS);
    let cpu = l
        .cpu_seconds
        .unwrap_or_else(|| timeout.as_secs() + u64::from(timeout.subsec_nanos() > 0))
        .max(1);
    let (runtime, devices) = found
        .system
        .get_or_init(|| (sandbox::system_runtime_paths(), sandbox::system_devices()));
    let mut spec = sandbox::Spec::new();
    // What `Spec::system_runtime` adds, tested once per call.
    spec.read_only.extend(runtime.iter().cloned());
    spec.read_write.extend(devices.iter().cloned());
    let mut spec = spec.limits(
        sandbox::Limits::none()
            .cpu_seconds(cpu)
            .address_space(l.memory.unwrap_or(DEFAULT_MEMORY))
            .file_size(l.file_size.unwrap_or(DEFAULT_FILE_SIZE))
            .open_files(l.open_files.unwrap_or(DEFAULT_OPEN_FILES))
            .processes(l.processes.unwrap_or(if subprocess {
                DEFAULT_PROCESSES_SUBPROCESS
            } else {
                DEFAULT_PROCESSES
            })),
    );
    spec.network = if declared.covers(Set::NETWORK) {
        sandbox::Network::Unrestricted
    } else if declared.covers(Set::SMTP) {
        sandbox::Network::TcpConnect {
            ports: SMTP_PORTS.to_vec(),
            name_resolution: true,
        }
    } else {
        sandbox::Network::Denied
    };
    spec.read_anywhere = declared.covers(Set::FILESYSTEM_READ);
    spec.write_anywhere = declared.covers(Set::FILESYSTEM_WRITE);
    spec.exec_anywhere = subprocess;
    if let Some((uid, gid)) = policy.sandbox.run_as {
        spec.run_as = sandbox::Identity { uid, gid };
    }
    spec
}

#[cfg(unix)]
/// The user the script runs as.
fn identity(spec: &sandbox::Spec) -> sandbox::Identity {
    let p = sandbox::probe();
    if p.root {
        spec.run_as
    } else {
        sandbox::Identity {
            uid: p.uid,
            gid: p.gid,
        }
    }
}

#[cfg(unix)]
/// The parent's `PATH` without the folders `who` cannot search (when the script changes user).
fn child_path(who: sandbox::Identity, dropping: bool, reach: &mut sandbox::Reach) -> OsString {
    let path = std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/bin:/bin"));
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|d| d.is_absolute() && d.is_dir())
        .filter(|d| !dropping || reach.check(d, who, sandbox::Access::Read).is_ok())
        .collect();
    std::env::join_paths(kept).unwrap_or_else(|_| OsString::from("/usr/bin:/bin"))
}

#[cfg(unix)]
/// The run's environment: the allow-list, then what the command sets, then pass-through.
fn environment(
    command: &Command,
    policy: &Policy,
    home: &Path,
    path: OsString,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = vec![
        ("PATH".into(), path),
        ("HOME".into(), home.as_os_str().to_owned()),
        ("TMPDIR".into(), home.as_os_str().to_owned()),
        // No user site-packages: nothing a run leaves in a home is imported by the next.
        ("PYTHONNOUSERSITE".into(), "1".into()),
    ];
    for (k, v) in std::env::vars_os() {
        let keep = KEPT_ENV.iter().any(|n| k == *n) || k.to_string_lossy().starts_with("LC_");
        if keep {
            env.push((k, v));
        }
    }
    for (k, v) in command.get_envs() {
        if let Some(v) = v {
            env.push((k.to_owned(), v.to_owned()));
        }
    }
    for name in &policy.sandbox.pass_env {
        match name.strip_suffix('*') {
            Some(prefix) => env.extend(
                std::env::vars_os().filter(|(k, _)| k.to_string_lossy().starts_with(prefix)),
            ),
            None => {
                if let Some(v) = std::env::var_os(name) {
                    env.push((name.into(), v));
                }
            }
        }
    }
    // Later entries win, one entry per name, sorted.
    let mut out: Vec<(OsString, OsString)> = Vec::new();
    for (k, v) in env.into_iter().rev() {
        if !out.iter().any(|(n, _)| *n == k) {
            out.push((k, v));
        }
    }
    out.sort();
    out
}

#[cfg(unix)]
fn is_elf(p: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 4];
    std::fs::File::open(p)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && &head == b"\x7fELF"
}

#[cfg(unix)]
/// The interpreter the script's user runs: the command's program when it is a real program
/// that user can execute, else the first program of that name on `PATH` that is (a version
/// manager's shim is a script that starts other programs, which the sandbox does not allow).
fn interpreter_for(
    program: &Path,
    who: sandbox::Identity,
    dropping: bool,
    path: &OsStr,
    reach: &mut sandbox::Reach,
) -> PathBuf {
    let reach = std::cell::RefCell::new(reach);
    let usable = |p: &Path| {
        is_elf(p)
            && (!dropping
                || reach
                    .borrow_mut()
                    .check(p, who, sandbox::Access::Execute)
                    .is_ok())
    };
    if usable(program) {
        return program.to_path_buf();
    }
    // By the name it was called (`python3`), then by the name of the file it leads to
    // (`python3.11`, for a virtual environment's link into a home folder).
    let mut names: Vec<OsString> = program
        .file_name()
        .map(OsStr::to_owned)
        .into_iter()
        .collect();
    if let Some(real) = std::fs::canonicalize(program)
        .ok()
        .and_then(|r| r.file_name().map(OsStr::to_owned))
    {
        if !names.contains(&real) {
            names.push(real);
        }
    }
    names
        .iter()
        .find_map(|name| crate::paths::find_on(path, name, usable))
        .unwrap_or_else(|| program.to_path_buf())
}

#[cfg(unix)]
/// Where an interpreter keeps its libraries: `<prefix>` of `<prefix>/bin/<name>`, when that is
/// not already a system folder.
fn interpreter_prefix(program: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(program).ok()?;
    let bin = real.parent()?;
    if bin.file_name() != Some(OsStr::new("bin")) {
        return None;
    }
    let prefix = bin.parent()?;
    let system = ["/", "/usr", "/usr/local"];
    (!system.iter().any(|s| prefix == Path::new(s))).then(|| prefix.to_path_buf())
}

#[cfg(unix)]
/// A copy of the verified folder `pack` that the script's user can read, for this run only:
/// folders 0750 and files 0440 (0550 when executable), owned by root with the user's group, in
/// a new private folder. (A pack whose embedded files the caller has gets the shared copy of
/// [`materialise::readable_copy`](crate::materialise::readable_copy) instead.)
fn pack_view(pack: &Path, gid: u32) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let root = crate::paths::make_runs_dir()?.join(crate::paths::unique("skillbake-pack"));
    std::fs::DirBuilder::new().mode(0o700).create(&root)?;
    match view_from_folder(pack, &root, gid) {
        Ok(()) => Ok(root),
        Err(e) => {
            let _ = remove_view(&root);
            Err(e)
        }
    }
}

#[cfg(unix)]
/// A new file `target` holding `bytes`, never through an existing name or link, owned by root
/// with the group `gid`, `0550` when `exec` else `0440`.
fn view_file(target: &Path, bytes: &[u8], exec: bool, gid: u32) -> std::io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .mode(0o600)
        .open(target)?;
    std::io::Write::write_all(&mut f, bytes)?;
    std::os::unix::fs::fchown(&f, Some(0), Some(gid))?;
    let mode = if exec { 0o550 } else { 0o440 };
    f.set_permissions(PermissionsExt::from_mode(mode))
}

#[cfg(unix)]
/// A view folder made readable by the group `gid` (its content is in).
fn close_view_folder(dir: &Path, gid: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::os::unix::fs::chown(dir, Some(0), Some(gid))?;
    std::fs::set_permissions(dir, PermissionsExt::from_mode(0o750))
}

#[cfg(unix)]
/// The pack view copied from the verified folder `pack` into the new folder `root`.
fn view_from_folder(pack: &Path, root: &Path, gid: u32) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let mut stack = vec![(pack.to_path_buf(), root.to_path_buf())];
    while let Some((from, to)) = stack.pop() {
        for entry in std::fs::read_dir(&from)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let target = to.join(entry.file_name());
            if kind.is_dir() {
                std::fs::DirBuilder::new().mode(0o700).create(&target)?;
                stack.push((entry.path(), target));
            } else if kind.is_file() {
                let bytes = std::fs::read(entry.path())?;
                let exec = entry.metadata()?.permissions().mode() & 0o111 != 0;
                view_file(&target, &bytes, exec, gid)?;
            }
            // The verified cache holds only files and folders.
        }
        close_view_folder(&to, gid)?;
    }
    Ok(())
}

#[cfg(unix)]
/// Removes a pack view (only made by a root parent, which may remove read-only folders).
fn remove_view(root: &Path) -> std::io::Result<()> {
    std::fs::remove_dir_all(root)
}

/// Called by the executor after a run: removes what [`confine`] made for it.
pub(crate) fn release(confinement: &Confinement) {
    #[cfg(unix)]
    {
        if let Some(view) = &confinement.pack_view {
            let _ = remove_view(view);
        }
        if let Some(home) = &confinement.home {
            // Symbolic links inside are removed, never followed.
            let _ = std::fs::remove_dir_all(home);
        }
    }
    #[cfg(not(unix))]
    let _ = confinement;
}

#[cfg(unix)]
/// `command` rebuilt with every argument below `from` moved below `to`.
fn rebase(command: &Command, program: &Path, from: &Path, to: &Path) -> Command {
    let mut c = Command::new(program);
    for a in command.get_args() {
        let p = Path::new(a);
        match p.strip_prefix(from) {
            Ok(rest) if p.is_absolute() => c.arg(to.join(rest)),
            _ => c.arg(a),
        };
    }
    if let Some(dir) = command.get_current_dir() {
        c.current_dir(dir);
    }
    for (k, v) in command.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    c
}

#[cfg(unix)]
/// Opens the folder `dir` (absolute) one component at a time from `/`, without following a
/// symbolic link unless root owns it (the system's own links, such as `/var/run`): a link an
/// ordinary user made anywhere on the way, or in the folder's place, is refused, so that root
/// never acts on a place an attacker's link names. With `create`, missing folders are made
/// (mode `0700`) on the way.
pub(crate) fn open_folder(dir: &Path, create: bool) -> std::io::Result<std::os::fd::OwnedFd> {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags};
    use std::path::Component;
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut fd = rustix::fs::open("/", dir_flags, Mode::empty())?;
    let mut walked = PathBuf::from("/");
    for part in dir.components() {
        let name = match part {
            Component::RootDir | Component::CurDir | Component::Prefix(_) => continue,
            Component::ParentDir => std::ffi::OsStr::new(".."),
            Component::Normal(name) => name,
        };
        walked.push(name);
        let open = |fd: &std::os::fd::OwnedFd| {
            rustix::fs::openat(fd, name, dir_flags | OFlags::NOFOLLOW, Mode::empty())
        };
        let next = match open(&fd) {
            Err(rustix::io::Errno::NOENT) if create => {
                match rustix::fs::mkdirat(&fd, name, Mode::from_raw_mode(0o700)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => open(&fd),
                    Err(e) => Err(e),
                }
            }
            Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => {
                let st = rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW)?;
                if FileType::from_raw_mode(st.st_mode) != FileType::Symlink {
                    return Err(std::io::Error::other(format!(
                        "{} is not a folder",
                        walked.display()
                    )));
                }
                if st.st_uid != 0 {
                    return Err(std::io::Error::other(format!(
                        "{} is a symbolic link of user {}, which skillbake, running as root, does not follow",
                        walked.display(),
                        st.st_uid
                    )));
                }
                rustix::fs::openat(&fd, name, dir_flags, Mode::empty())
            }
            other => other,
        };
        fd = next?;
    }
    Ok(fd)
}

#[cfg(unix)]
/// The descriptor of the run's output folder through which the executor writes there (the
/// file that takes a large stdout), creating it when `given` names one that does not exist yet:
/// as root, opened by [`open_folder`] (no link of another user followed).
pub(crate) fn output_descriptor(dir: &Path, given: bool) -> std::io::Result<std::os::fd::OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    if sandbox::probe().root {
        return open_folder(dir, given);
    }
    rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(std::io::Error::from)
}

#[cfg(unix)]
/// `rwx` for `who` on a folder with this status, by its permission bits.
fn writable_by(st: &rustix::fs::Stat, who: sandbox::Identity) -> bool {
    let mode = st.st_mode;
    let bits = if st.st_uid == who.uid {
        mode >> 6
    } else if st.st_gid == who.gid {
        mode >> 3
    } else {
        mode
    };
    bits & 0o7 == 0o7
}

#[cfg(unix)]
/// True when the folder open at `dir` holds nothing.
fn is_empty(dir: &std::os::fd::OwnedFd) -> std::io::Result<bool> {
    let mut entries = rustix::fs::Dir::read_from(dir).map_err(std::io::Error::from)?;
    for entry in entries.by_ref() {
        let entry = entry.map_err(std::io::Error::from)?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Gives the script's group the run's output folder when its user cannot write there: only an
/// empty folder (the run's own, or a new one the policy named) is handed over, and only its group
/// and mode change, to the script's group and `0770` (root keeps owning it, so no run can rename,
/// replace or re-mode it; later runs may use it again); a folder that already holds something
/// must be made writable for that user by its owner. Everything goes through one descriptor of
/// the folder opened by [`open_folder`]: another user's symbolic link on the way is refused.
#[cfg(unix)]
fn hand_over(output: &Path, who: sandbox::Identity) -> Result<(), Failure> {
    let fail = |what: String| {
        failure(format!(
            "The output folder {} {what}, so the script was not started.",
            output.display()
        ))
    };
    let dir = open_folder(output, false).map_err(|e| fail(format!("could not be opened ({e})")))?;
    let st = rustix::fs::fstat(&dir).map_err(|e| fail(format!("could not be read ({e})")))?;
    if writable_by(&st, who) {
        return Ok(());
    }
    if !is_empty(&dir).map_err(|e| fail(format!("could not be listed ({e})")))? {
        return Err(failure(format!(
            "The output folder {} is not writable by the sandbox user {}:{} and already holds files, so the script was not started. Make it writable for that user, choose an empty or new folder, or run skillbake as an unprivileged user.",
            output.display(),
            who.uid,
            who.gid
        )));
    }
    rustix::fs::fchown(&dir, None, Some(rustix::fs::Gid::from_raw(who.gid)))
        .and_then(|()| rustix::fs::fchmod(&dir, rustix::fs::Mode::from_raw_mode(0o770)))
        .map_err(|e| {
            fail(format!(
                "could not be handed to the sandbox group {} ({e})",
                who.gid
            ))
        })
}

#[cfg(unix)]
/// A new private folder for the run's `HOME` and `TMPDIR` (nothing of an earlier run, or of the
/// output folder, is in it): `0700` for the caller, or root's with the script's group and mode
/// `0770` when root hands the run to another user.
fn private_home(who: sandbox::Identity, dropping: bool) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let home = crate::paths::make_runs_dir()?.join(crate::paths::unique("skillbake-home"));
    std::fs::DirBuilder::new().mode(0o700).create(&home)?;
    if dropping {
        let fix = || -> std::io::Result<()> {
            let dir = open_folder(&home, false)?;
            rustix::fs::fchown(&dir, None, Some(rustix::fs::Gid::from_raw(who.gid)))?;
            rustix::fs::fchmod(&dir, rustix::fs::Mode::from_raw_mode(0o770))?;
            Ok(())
        };
        if let Err(e) = fix() {
            let _ = std::fs::remove_dir(&home);
            return Err(e);
        }
    }
    Ok(home)
}

#[cfg(unix)]
fn failure(message: String) -> Failure {
    Failure::new(ErrorCode::ExecFailed, message)
}

#[cfg(unix)]
/// The confinement of a run: the sandbox's report as it is, and what the run was given.
fn confinement(
    applied: sandbox::Applied,
    env: &[(OsString, OsString)],
    program: &Path,
    declared: Set,
    policy: &Policy,
) -> Confinement {
    Confinement {
        applied: Some(applied),
        program: Some(program.to_path_buf()),
        env: env
            .iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect(),
        permissions_used: permission::names_for(declared),
        unconfined_allowed: policy.sandbox.allow_unconfined,
        ..Confinement::default()
    }
}

#[cfg(unix)]
/// Refuses a high-risk pack where the sandbox has gaps (unless the policy accepts it).
fn refuse_high_risk(
    applied: &sandbox::Applied,
    declared: Set,
    policy: &Policy,
) -> Result<(), Failure> {
    if policy.sandbox.allow_unconfined || !declared.intersects(HIGH_RISK) {
        return Ok(());
    }
    // Isolation gaps refuse; a resource limit the kernel cannot set is only reported, and so is
    // UDP to any address under name resolution (`smtp`), the permission's own documented gap
    // before Landlock ABI 10 (refusing it would refuse every `smtp` pack on those kernels).
    let limit = |g: sandbox::Guard| {
        matches!(
            g,
            sandbox::Guard::CpuTime
                | sandbox::Guard::AddressSpace
                | sandbox::Guard::FileSize
                | sandbox::Guard::OpenFiles
                | sandbox::Guard::Processes
                | sandbox::Guard::Udp
        )
    };
    let gaps: Vec<String> = applied
        .gaps()
        .filter(|g| !limit(g.guard))
        .map(|g| format!("{} ({})", g.guard, g.detail))
        .collect();
    if gaps.is_empty() {
        return Ok(());
    }
    let risky = permission::ALL
        .iter()
        .filter(|p| declared.covers(p.needs) && p.needs.intersects(HIGH_RISK))
        .map(|p| format!("`{}`", p.name))
        .collect::<Vec<_>>()
        .join(", ");
    Err(Failure::new(
        ErrorCode::PermissionDenied,
        format!(
            "This pack declares {risky}, a high-risk permission, and this system cannot enforce the sandbox's limits for it: {}. It was not started. To run it anyway, accept running it unconfined: `--unconfined` on the command line, or `Policy::allow_unconfined(true)` in the library.",
            gaps.join("; ")
        ),
    ))
}

/// Confines `command` for a pack declaring `declared` under `policy`, with the run's `folders`
/// and `timeout` (see the module documentation): the one seam where the sandbox applies, called
/// for every command the executor starts, right before it is spawned. With `apply` false
/// nothing is changed or written, and the report says what would apply (a dry run). A pack the
/// sandbox refuses (high-risk where it has gaps) is a `PERMISSION_DENIED` failure. Without
/// Unix there is no sandbox: nothing is confined, and high-risk packs are refused unless the
/// policy accepts running unconfined.
pub fn confine(
    command: &mut Command,
    policy: &Policy,
    folders: &Folders,
    declared: Set,
    timeout: Duration,
    apply: bool,
) -> Result<Confinement, Failure> {
    confine_found(
        command,
        policy,
        folders,
        declared,
        timeout,
        apply,
        &Found::default(),
        None,
    )
}

/// [`confine`], with the run's `PATH` and interpreter taken from `found` when an earlier
/// confinement of the same call found them (the command, policy and user are the same), and,
/// given `skill` (the pack whose verified copy `folders.pack` is, with its cache key), a root
/// parent's readable copy shared by the runs of that pack
/// ([`materialise::readable_copy`](crate::materialise::readable_copy)) instead of a copy of
/// `folders.pack` made for this run.
#[cfg(unix)]
// One seam with everything a confinement of a call takes, as `confine` with the call's state.
#[allow(clippy::too_many_arguments)]
pub(crate) fn confine_found(
    command: &mut Command,
    policy: &Policy,
    folders: &Folders,
    declared: Set,
    timeout: Duration,
    apply: bool,
    found: &Found,
    skill: Option<(&Skill<'_>, &str)>,
) -> Result<Confinement, Failure> {
    let mut spec = spec_for(declared, policy, timeout, found);
    // No run sees another's folders.
    spec.private.push(crate::paths::runs_dir());
    let who = identity(&spec);
    let dropping = sandbox::probe().root;
    if dropping && (who.uid == 0 || who.gid == 0) {
        return Err(Failure::new(
            ErrorCode::PermissionDenied,
            format!(
                "Scripts never run as root, and the policy names {}:{} as the sandbox user. Choose an unprivileged user (`Policy::run_as`); the default is nobody (65534:65534).",
                who.uid, who.gid
            ),
        ));
    }
    let (path, program, prefix) = found
        .slot
        .get_or_init(|| {
            // One resolution of the folders on the way for every check of the search.
            let mut reach = sandbox::Reach::new();
            let path = child_path(who, dropping, &mut reach);
            let program = interpreter_for(
                Path::new(command.get_program()),
                who,
                dropping,
                &path,
                &mut reach,
            );
            let prefix = interpreter_prefix(&program);
            (path, program, prefix)
        })
        .clone();
    if let Some(prefix) = prefix {
        spec.read_only.push(prefix);
    }
    if !apply {
        // Where the run's private home would be.
        let home = crate::paths::runs_dir().join(crate::paths::unique("skillbake-home"));
        spec.env = environment(command, policy, &home, path);
        spec.read_only.push(folders.pack.clone());
        spec.read_write.push(folders.output.clone());
        spec.read_write.push(home);
        let applied = sandbox::preview(&spec);
        refuse_high_risk(&applied, declared, policy)?;
        return Ok(confinement(applied, &spec.env, &program, declared, policy));
    }
    let mut made = Made::default();
    let run = Run {
        policy,
        program: &program,
        folders,
        who,
        dropping,
        skill,
    };
    let result = prepare(command, spec, &run, path, &mut made).and_then(|(applied, env)| {
        refuse_high_risk(&applied, declared, policy)?;
        Ok((applied, env))
    });
    match result {
        Ok((applied, env)) => {
            let mut c = confinement(applied, &env, &program, declared, policy);
            c.pack_view = made.view;
            c.home = made.home;
            c.view_rewritten = made.view_rewritten;
            Ok(c)
        }
        Err(f) => {
            let c = Confinement {
                pack_view: made.view,
                home: made.home,
                ..Confinement::default()
            };
            release(&c);
            Err(f)
        }
    }
}

/// Who and what a run is, for [`prepare`].
#[cfg(unix)]
#[derive(Clone, Copy)]
struct Run<'a> {
    policy: &'a Policy,
    program: &'a Path,
    folders: &'a Folders,
    who: sandbox::Identity,
    dropping: bool,
    /// The pack's embedded files and its cache key, when the caller has them.
    skill: Option<(&'a Skill<'a>, &'a str)>,
}

/// What [`prepare`] made for a run, undone by [`release`].
#[cfg(unix)]
#[derive(Default)]
struct Made {
    view: Option<PathBuf>,
    home: Option<PathBuf>,
    /// Whether the shared readable copy was found modified and written again.
    view_rewritten: bool,
}

/// The run's own folders and the sandbox on `command`: a private home, and when the parent is
/// root the output folder handed to the script's group and a readable copy of the pack. Returns
/// the sandbox's report and the run's environment.
#[cfg(unix)]
fn prepare(
    command: &mut Command,
    mut spec: sandbox::Spec,
    run: &Run<'_>,
    path: OsString,
    made: &mut Made,
) -> Result<(sandbox::Applied, Vec<(OsString, OsString)>), Failure> {
    let Run {
        policy,
        program,
        folders,
        who,
        dropping,
        ..
    } = *run;
    let home = private_home(who, dropping).map_err(|e| {
        failure(format!(
            "A private home folder for the run could not be made ({e}), so the script was not started."
        ))
    })?;
    made.home = Some(home.clone());
    spec.env = environment(command, policy, &home, path);
    let mut rebuilt = rebase(command, program, &folders.pack, &folders.pack);
    if dropping {
        hand_over(&folders.output, who)?;
        let v = match run.skill {
            Some((skill, key)) => {
                let copy = crate::materialise::readable_copy(skill, key, who.gid)?;
                made.view_rewritten = copy.rewritten;
                copy.dir
            }
            None => {
                let v = pack_view(&folders.pack, who.gid).map_err(|e| {
                    failure(format!(
                        "The pack could not be copied where the sandbox user {}:{} can read it ({e}), so the script was not started.",
                        who.uid, who.gid
                    ))
                })?;
                made.view = Some(v.clone());
                v
            }
        };
        rebuilt = rebase(command, program, &folders.pack, &v);
        spec.read_only.push(v);
    } else {
        spec.read_only.push(folders.pack.clone());
    }
    spec.read_write.push(folders.output.clone());
    spec.read_write.push(home);
    let applied = sandbox::confine(&mut rebuilt, &spec).map_err(|e| {
        failure(format!(
            "The script could not be confined, so it was not started: {e}."
        ))
    })?;
    *command = rebuilt;
    Ok((applied, spec.env))
}

/// [`confine`] (nothing is found on a system without a sandbox).
#[cfg(not(unix))]
// One seam with everything a confinement of a call takes, as `confine` with the call's state.
#[allow(clippy::too_many_arguments)]
pub(crate) fn confine_found(
    command: &mut Command,
    policy: &Policy,
    folders: &Folders,
    declared: Set,
    timeout: Duration,
    apply: bool,
    found: &Found,
    skill: Option<(&Skill<'_>, &str)>,
) -> Result<Confinement, Failure> {
    let _ = (folders, timeout, apply, found, skill);
    if declared.intersects(HIGH_RISK) && !policy.unconfined_allowed() {
        return Err(Failure::new(
            ErrorCode::PermissionDenied,
            "This pack declares a high-risk permission, and this system has no sandbox. It was not started. To run it anyway, accept running it unconfined: `--unconfined`, or `Policy::allow_unconfined(true)`.",
        ));
    }
    Ok(Confinement {
        program: Some(PathBuf::from(command.get_program())),
        ..Confinement::default()
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use sandbox::{Control, Guard, Mode, State};

    fn applied(gap: Option<Guard>) -> sandbox::Applied {
        let controls = Guard::ALL
            .iter()
            .map(|&g| Control {
                guard: g,
                state: if Some(g) == gap {
                    State::NotEnforced
                } else {
                    State::Enforced
                },
                by: Vec::new(),
                detail: format!("{g} detail"),
            })
            .collect();
        sandbox::Applied {
            mode: if gap.is_some() {
                Mode::Partial
            } else {
                Mode::Confined
            },
            landlock_abi: Some(7),
            uid: 65534,
            gid: 65534,
            controls,
        }
    }

    #[test]
    fn high_risk_packs_are_refused_only_where_a_guard_is_open() {
        let policy = Policy::new();
        let open = applied(Some(Guard::Network));
        // No declared permission, or only reading: runs, the gap is reported.
        assert!(refuse_high_risk(&open, Set::NONE, &policy).is_ok());
        assert!(refuse_high_risk(&open, Set::FILESYSTEM_READ, &policy).is_ok());
        // smtp with a gap: refused, with the gap and how to accept it.
        let e = refuse_high_risk(&open, Set::SMTP, &policy).unwrap_err();
        assert_eq!(e.error_code(), Some(ErrorCode::PermissionDenied));
        assert!(e.message.contains("`smtp`"), "{}", e.message);
        assert!(
            e.message.contains("network (network detail)"),
            "{}",
            e.message
        );
        assert!(e.message.contains("--unconfined"), "{}", e.message);
        // Accepted by the policy, or nothing open: runs.
        let accepting = Policy::new().allow_unconfined(true);
        assert!(refuse_high_risk(&open, Set::SMTP, &accepting).is_ok());
        assert!(refuse_high_risk(&applied(None), Set::SUBPROCESS, &policy).is_ok());
        // A resource limit the kernel cannot set is reported, not a reason to refuse; nor is
        // UDP open for name resolution.
        let no_count = applied(Some(Guard::Processes));
        assert!(refuse_high_risk(&no_count, Set::SMTP, &policy).is_ok());
        let udp = applied(Some(Guard::Udp));
        assert!(refuse_high_risk(&udp, Set::SMTP, &policy).is_ok());
    }

    #[test]
    fn permissions_map_to_the_sandbox() {
        let t = Duration::from_millis(2500);
        let none = spec_for(Set::NONE, &Policy::new(), t, &Found::default());
        assert_eq!(none.network, sandbox::Network::Denied);
        assert!(!none.read_anywhere && !none.write_anywhere && !none.exec_anywhere);
        assert_eq!(none.limits.cpu_seconds, Some(3));
        assert_eq!(none.limits.processes, Some(DEFAULT_PROCESSES));
        assert_eq!(none.limits.address_space, Some(DEFAULT_MEMORY));
        let smtp = spec_for(Set::SMTP, &Policy::new(), t, &Found::default());
        assert_eq!(
            smtp.network,
            sandbox::Network::TcpConnect {
                ports: vec![25, 465, 587, 2525],
                name_resolution: true
            }
        );
        let all = Set::NETWORK
            .union(Set::SMTP)
            .union(Set::FILESYSTEM_READ)
            .union(Set::FILESYSTEM_WRITE)
            .union(Set::SUBPROCESS);
        let all = spec_for(
            all,
            &Policy::new().limits(crate::ResourceLimits::new().processes(7)),
            t,
            &Found::default(),
        );
        assert_eq!(all.network, sandbox::Network::Unrestricted);
        assert!(all.read_anywhere && all.write_anywhere && all.exec_anywhere);
        assert_eq!(all.limits.processes, Some(7));
        let sub = spec_for(Set::SUBPROCESS, &Policy::new(), t, &Found::default());
        assert_eq!(sub.limits.processes, Some(DEFAULT_PROCESSES_SUBPROCESS));
    }

    /// Every entry of a view: its path below `root`, kind, owner, group, mode and bytes.
    #[allow(clippy::unwrap_used)]
    fn listing(root: &Path) -> Vec<(String, bool, u32, u32, u32, Vec<u8>)> {
        use std::os::unix::fs::MetadataExt;
        let mut out = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                let m = std::fs::symlink_metadata(&p).unwrap();
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                let bytes = if m.is_file() {
                    std::fs::read(&p).unwrap()
                } else {
                    stack.push(p.clone());
                    Vec::new()
                };
                out.push((rel, m.is_dir(), m.uid(), m.gid(), m.mode() & 0o7777, bytes));
            }
        }
        out.sort();
        out
    }

    #[test]
    fn the_shared_readable_copy_is_the_view_of_the_verified_copy() {
        if !rustix::process::geteuid().is_root() {
            return;
        }
        let cache = tempfile::tempdir().unwrap();
        // A group no other test's runs use, so that no run meets the copies made here.
        let gid = 65531;
        for name in ["echo", "images"] {
            let skill = skillbake_exec_fixtures::REGISTRY.get_exact(name).unwrap();
            let key = crate::materialise::key(&skill);
            let copy = crate::materialise::ensure(cache.path(), &skill, &key).unwrap();
            let shared = crate::materialise::readable_copy(&skill, &key, gid).unwrap();
            let from_folder = pack_view(&copy.dir, gid).unwrap();
            let (a, b) = (listing(&shared.dir), listing(&from_folder));
            remove_view(&from_folder).unwrap();
            assert_eq!(a, b, "{name}");
            assert!(
                a.iter().any(|e| e.1 && e.4 == 0o750 && e.3 == gid),
                "{name}: {a:?}"
            );
            assert!(
                a.iter().any(|e| !e.1 && e.4 == 0o440 && e.2 == 0),
                "{name}: {a:?}"
            );
        }
    }
}
