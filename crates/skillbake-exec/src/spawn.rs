//! The loop that runs a confined process (confinement itself is `crate::confine`, which every
//! command goes through first).
//!
//! `run` starts the command in its own process group (on Linux, the sandbox's new session),
//! feeds the parameters on stdin, reads
//! stdout and stderr with `poll` (no threads), and enforces the limits the executor owns:
//!
//! * **Timeout**: at the deadline the whole process group gets `SIGKILL`, so children it forked
//!   die with it; so does a set cancel flag ([`Policy::cancel_on`](crate::Policy::cancel_on)).
//! * **Strays**: when the script exits, whatever it left running in its process group is
//!   killed too (a process that leaves the group escapes this; the sandbox closes that door).
//! * **Output**: stdout up to the output cap is kept in memory; above it the whole stdout is
//!   streamed to a file in the output folder (created exclusively, never through an existing
//!   name or link); above the output limit the group is killed. Of stderr only the last
//!   [`STDERR_KEPT`] bytes are kept. Memory stays bounded whatever the script prints.

use crate::outcome::{Exit, RawRun, STDERR_KEPT};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The limits [`run`] enforces itself (the kernel's are the sandbox's, see
/// [`crate::ResourceLimits`]).
#[derive(Debug, Clone)]
pub(crate) struct RunLimits {
    pub timeout: Duration,
    pub output_cap: usize,
    pub output_limit: u64,
    pub output_dir: PathBuf,
    /// The output folder, opened once: the overflow file is made in it through this, whatever
    /// the path has been replaced with since.
    pub output_fd: Option<DirFd>,
    pub cancel: Vec<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// Creates `name` in the output folder: through its descriptor when there is one (a new file,
/// never through a link), else by path.
fn create_in(dir: &Path, fd: Option<&DirFd>, name: &str) -> std::io::Result<std::fs::File> {
    #[cfg(unix)]
    if let Some(fd) = fd {
        use rustix::fs::{Mode, OFlags};
        let f = rustix::fs::openat(
            fd.as_ref(),
            name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )
        .map_err(std::io::Error::from)?;
        return Ok(std::fs::File::from(f));
    }
    #[cfg(not(unix))]
    let _ = fd;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dir.join(name))
}

/// A shared descriptor of a folder.
#[cfg(unix)]
pub(crate) type DirFd = std::sync::Arc<std::os::fd::OwnedFd>;
/// No descriptors here: paths only.
#[cfg(not(unix))]
pub(crate) type DirFd = ();

/// Where the whole stdout goes once it passes the cap.
fn overflow_file(dir: &Path, fd: Option<&DirFd>) -> std::io::Result<(PathBuf, std::fs::File)> {
    let mut last = None;
    for i in 0..100u32 {
        let name = if i == 0 {
            "skillbake-stdout.txt".to_string()
        } else {
            format!("skillbake-stdout-{i}.txt")
        };
        let path = dir.join(&name);
        match create_in(dir, fd, &name) {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free name")))
}

struct Stdout {
    kept: Vec<u8>,
    total: u64,
    file: Option<(PathBuf, std::fs::File)>,
    cap: usize,
    limit: u64,
    dir: PathBuf,
    dir_fd: Option<DirFd>,
}

impl Stdout {
    /// Takes `bytes`; false once the limit is passed (the rest is dropped).
    fn push(&mut self, bytes: &[u8]) -> Result<bool, String> {
        use std::io::Write;
        let room = self.limit.saturating_sub(self.total);
        let take = bytes.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let all = take == bytes.len();
        let bytes = bytes.get(..take).unwrap_or(bytes);
        self.total += bytes.len() as u64;
        if self.file.is_none() && self.kept.len() + bytes.len() > self.cap {
            let (path, mut f) = overflow_file(&self.dir, self.dir_fd.as_ref()).map_err(|e| {
                format!(
                    "cannot write the output to the output folder {}: {e}",
                    self.dir.display()
                )
            })?;
            f.write_all(&self.kept)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            self.file = Some((path, f));
        }
        if let Some((path, f)) = &mut self.file {
            f.write_all(bytes)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        let keep = self.cap.saturating_sub(self.kept.len()).min(bytes.len());
        self.kept
            .extend_from_slice(bytes.get(..keep).unwrap_or(&[]));
        Ok(all)
    }
}

fn push_tail(tail: &mut Vec<u8>, bytes: &[u8]) {
    tail.extend_from_slice(bytes);
    if tail.len() > 2 * STDERR_KEPT {
        let cut = tail.len() - STDERR_KEPT;
        tail.drain(..cut);
    }
}

#[cfg(not(unix))]
pub(crate) fn run(_command: Command, _stdin: Vec<u8>, _limits: &RunLimits) -> RawRun {
    RawRun {
        error: Some("running skills needs a Unix system (Linux, macOS or a BSD)".into()),
        ..RawRun::default()
    }
}

/// Starts `command` in its own process group and runs it to the end under `limits`: feed
/// stdin, read stdout and stderr, and stop the group at the deadline, on a cancel, at the
/// output limit or once the script has exited (and its pipes are closed, or a grace period
/// has passed).
#[cfg(unix)]
pub(crate) fn run(command: Command, stdin: Vec<u8>, limits: &RunLimits) -> RawRun {
    let start = Instant::now();
    let mut r = match Running::start(command, stdin, limits) {
        Ok(r) => r,
        Err(error) => {
            return RawRun {
                error: Some(error),
                duration: start.elapsed(),
                ..RawRun::default()
            }
        }
    };
    loop {
        let wait = match r.watch() {
            Watch::Again => continue,
            Watch::Done => break,
            Watch::Poll(wait) => wait,
        };
        let ready = match r.poll(wait) {
            Ok(ready) => ready,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => {
                r.error = Some(format!("cannot watch the script's output: {e}"));
                r.kill_group();
                r.status = r.child.wait().ok();
                break;
            }
        };
        if ready.input {
            r.feed_stdin();
        }
        if ready.stdout {
            r.read_stdout();
        }
        if ready.stderr {
            r.read_stderr();
        }
        if r.input.is_none() && r.written < r.stdin.len() {
            r.written = r.stdin.len();
        }
    }
    r.finish(start)
}

/// How long a run's pipes stay watched after the script exited (a process that left the group
/// may hold them open).
#[cfg(unix)]
const GRACE: Duration = Duration::from_millis(500);

/// A started process and everything [`run`] tracks about it.
#[cfg(unix)]
struct Running<'l> {
    child: std::process::Child,
    pid: rustix::process::Pid,
    limits: &'l RunLimits,
    deadline: Instant,
    stdin: Vec<u8>,
    written: usize,
    input: Option<std::process::ChildStdin>,
    out: Option<std::process::ChildStdout>,
    err: Option<std::process::ChildStderr>,
    pidfd: Option<std::os::fd::OwnedFd>,
    stdout: Stdout,
    stderr_tail: Vec<u8>,
    stderr_total: u64,
    status: Option<std::process::ExitStatus>,
    exited_at: Option<Instant>,
    timed_out: bool,
    too_large: bool,
    cancelled: bool,
    error: Option<String>,
    buf: Vec<u8>,
}

/// What the loop does next.
#[cfg(unix)]
enum Watch {
    /// Look again at once (the process was just stopped).
    Again,
    /// The run is over.
    Done,
    /// Wait for the pipes or the process for at most this long.
    Poll(Duration),
}

/// Which of the watched descriptors are ready.
#[cfg(unix)]
struct Ready {
    input: bool,
    stdout: bool,
    stderr: bool,
}

#[cfg(unix)]
impl<'l> Running<'l> {
    /// Spawns `command` in a new process group with piped stdio; `Err` says why it could not
    /// start.
    fn start(mut command: Command, stdin: Vec<u8>, limits: &'l RunLimits) -> Result<Self, String> {
        let start = Instant::now();
        use std::process::Stdio;
        // On Linux the sandbox makes the script the leader of a new session (and so of a new
        // process group, without the caller's controlling terminal); a group made here first
        // would keep it in the caller's session.
        #[cfg(not(target_os = "linux"))]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(|e| {
            // A start the kernel refused may come from a kept probe record that no longer fits
            // the system: drop it so that the next process measures live (a missing program
            // says nothing about the record).
            if e.kind() != std::io::ErrorKind::NotFound {
                skillbake_sandbox::forget_kept_probe();
            }
            let program = command.get_program().to_string_lossy().into_owned();
            format!("cannot start {program}: {e}")
        })?;
        let pid = rustix::process::Pid::from_child(&child);
        let mut input = child.stdin.take();
        if let Some(i) = &input {
            if rustix::io::ioctl_fionbio(i, true).is_err() {
                input = None;
            }
        }
        #[cfg(target_os = "linux")]
        let pidfd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok();
        #[cfg(not(target_os = "linux"))]
        let pidfd: Option<std::os::fd::OwnedFd> = None;
        Ok(Running {
            out: child.stdout.take(),
            err: child.stderr.take(),
            child,
            pid,
            limits,
            deadline: start + limits.timeout,
            stdin,
            written: 0,
            input,
            pidfd,
            stdout: Stdout {
                kept: Vec::new(),
                total: 0,
                file: None,
                cap: limits.output_cap,
                limit: limits.output_limit.max(limits.output_cap as u64),
                dir: limits.output_dir.clone(),
                dir_fd: limits.output_fd.clone(),
            },
            stderr_tail: Vec::new(),
            stderr_total: 0,
            status: None,
            exited_at: None,
            timed_out: false,
            too_large: false,
            cancelled: false,
            error: None,
            buf: vec![0u8; 64 << 10],
        })
    }

    fn kill_group(&self) {
        let _ = rustix::process::kill_process_group(self.pid, rustix::process::Signal::KILL);
    }

    /// Kills the group and reaps the script.
    fn stop(&mut self) {
        self.kill_group();
        self.status = self.child.wait().ok();
        self.exited_at = Some(Instant::now());
        self.input = None;
    }

    fn cancel_requested(&self) -> bool {
        crate::policy::any_set(&self.limits.cancel)
    }

    /// Looks at the process: reaps it when it exited (killing what it left in its
    /// group first, so the group id cannot have been reused), stops it on a cancel or at the
    /// deadline, and says how long to wait for the pipes.
    fn watch(&mut self) -> Watch {
        if self.status.is_none() && leader_exited(&mut self.child) {
            self.stop();
        }
        if self.status.is_none() && self.cancel_requested() {
            self.cancelled = true;
            self.stop();
            return Watch::Again;
        }
        let now = Instant::now();
        if self.status.is_none() && now >= self.deadline {
            self.timed_out = true;
            self.stop();
            return Watch::Again;
        }
        if self.out.is_none() && self.err.is_none() && self.status.is_some() {
            return Watch::Done;
        }
        // Pipes held open by a process that left the group: stop waiting for them.
        if self
            .exited_at
            .is_some_and(|t| now.duration_since(t) > GRACE)
        {
            return Watch::Done;
        }
        let wait = match self.exited_at {
            Some(t) => GRACE.saturating_sub(now.duration_since(t)),
            None => self.deadline.saturating_duration_since(now),
        };
        // Without a pidfd, look at the process every 10 ms; at a cancel flag every 50 ms.
        Watch::Poll(if self.pidfd.is_none() && self.status.is_none() {
            wait.min(Duration::from_millis(10))
        } else if !self.limits.cancel.is_empty() && self.status.is_none() {
            wait.min(Duration::from_millis(50))
        } else {
            wait
        })
    }

    /// Waits up to `wait` for stdin to take more, stdout or stderr to have data, or the process
    /// to exit (its pidfd).
    fn poll(&self, wait: Duration) -> Result<Ready, rustix::io::Errno> {
        use rustix::event::{poll, PollFd, PollFlags};
        let timeout = rustix::event::Timespec::try_from(wait).ok();
        let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(4);
        let mut slots = [None; 3];
        if let Some(i) = &self.input {
            slots[0] = Some(fds.len());
            fds.push(PollFd::new(i, PollFlags::OUT));
        }
        if let Some(o) = &self.out {
            slots[1] = Some(fds.len());
            fds.push(PollFd::new(o, PollFlags::IN));
        }
        if let Some(e) = &self.err {
            slots[2] = Some(fds.len());
            fds.push(PollFd::new(e, PollFlags::IN));
        }
        if let (Some(p), None) = (&self.pidfd, self.status) {
            fds.push(PollFd::new(p, PollFlags::IN));
        }
        poll(&mut fds, timeout.as_ref())?;
        let ready = |slot: Option<usize>| {
            slot.and_then(|i| fds.get(i))
                .is_some_and(|f| !f.revents().is_empty())
        };
        Ok(Ready {
            input: ready(slots[0]),
            stdout: ready(slots[1]),
            stderr: ready(slots[2]),
        })
    }

    /// Writes what the pipe takes of the parameters; closes stdin once all are written (or the
    /// script closed its end: it does not want the rest).
    fn feed_stdin(&mut self) {
        use std::io::{ErrorKind, Write};
        if let Some(i) = &mut self.input {
            match i.write(self.stdin.get(self.written..).unwrap_or(&[])) {
                Ok(n) => self.written += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(_) => self.written = self.stdin.len(),
            }
        }
        if self.written >= self.stdin.len() {
            self.input = None;
        }
    }

    /// Reads stdout into the kept bytes (and the overflow file); past the output limit, or
    /// when the output cannot be stored, the group is stopped.
    fn read_stdout(&mut self) {
        use std::io::{ErrorKind, Read};
        let Some(o) = &mut self.out else {
            return;
        };
        match o.read(&mut self.buf) {
            Ok(0) => self.out = None,
            Ok(n) => match self.stdout.push(self.buf.get(..n).unwrap_or(&[])) {
                Ok(true) => {}
                Ok(false) => {
                    self.too_large = true;
                    self.kill_group();
                    self.out = None;
                }
                Err(e) => {
                    self.error = Some(e);
                    self.kill_group();
                    self.out = None;
                }
            },
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => self.out = None,
        }
    }

    /// Reads stderr, keeping its tail.
    fn read_stderr(&mut self) {
        use std::io::{ErrorKind, Read};
        let Some(e) = &mut self.err else {
            return;
        };
        match e.read(&mut self.buf) {
            Ok(0) => self.err = None,
            Ok(n) => {
                self.stderr_total += n as u64;
                push_tail(&mut self.stderr_tail, self.buf.get(..n).unwrap_or(&[]));
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => self.err = None,
        }
    }

    /// The run's result, the script reaped (and its group killed) if it was still running.
    fn finish(mut self, start: Instant) -> RawRun {
        use std::os::unix::process::ExitStatusExt;
        if self.status.is_none() {
            self.kill_group();
            self.status = self.child.wait().ok();
        }
        if self.stderr_tail.len() > STDERR_KEPT {
            let cut = self.stderr_tail.len() - STDERR_KEPT;
            self.stderr_tail.drain(..cut);
        }
        let exit = self.status.map(|s| match (s.code(), s.signal()) {
            (Some(c), _) => Exit::Code(c),
            (None, Some(sig)) => Exit::Signal(sig),
            (None, None) => Exit::Code(-1),
        });
        RawRun {
            stdout: self.stdout.kept,
            stdout_total: self.stdout.total,
            stdout_file: self.stdout.file.map(|(p, _)| p),
            stderr: self.stderr_tail,
            stderr_total: self.stderr_total,
            exit,
            timed_out: self.timed_out,
            cancelled: self.cancelled,
            too_large: self.too_large,
            error: self.error,
            duration: start.elapsed(),
            images: Vec::new(),
        }
    }
}

/// Whether the process has exited, without reaping it where the system allows (so its process
/// group id stays reserved until the group is killed).
#[cfg(unix)]
fn leader_exited(child: &mut std::process::Child) -> bool {
    #[cfg(any(
        target_os = "linux",
        target_os = "android",
        target_os = "macos",
        target_os = "freebsd",
        target_os = "netbsd",
        target_os = "dragonfly",
        target_os = "illumos",
        target_os = "solaris"
    ))]
    {
        use rustix::process::{waitid, Pid, WaitId, WaitIdOptions};
        let pid = Pid::from_child(child);
        match waitid(
            WaitId::Pid(pid),
            WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT,
        ) {
            Ok(Some(_)) => true,
            Ok(None) => false,
            Err(_) => child.try_wait().map_or(true, |s| s.is_some()),
        }
    }
    #[cfg(not(any(
        target_os = "linux",
        target_os = "android",
        target_os = "macos",
        target_os = "freebsd",
        target_os = "netbsd",
        target_os = "dragonfly",
        target_os = "illumos",
        target_os = "solaris"
    )))]
    {
        child.try_wait().map_or(true, |s| s.is_some())
    }
}
