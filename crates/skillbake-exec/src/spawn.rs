//! The loop that runs a confined process (confinement itself is `crate::confine`, which every
//! command goes through first).
//!
//! `run` starts the command in its own process group, feeds the parameters on stdin, reads
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
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// Where the whole stdout goes once it passes the cap.
fn overflow_file(dir: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    let mut last = None;
    for i in 0..100u32 {
        let name = if i == 0 {
            "skillbake-stdout.txt".to_string()
        } else {
            format!("skillbake-stdout-{i}.txt")
        };
        let path = dir.join(name);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
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
            let (path, mut f) = overflow_file(&self.dir).map_err(|e| {
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

/// Starts `command` in its own process group and runs it to the end under `limits`.
#[cfg(unix)]
pub(crate) fn run(mut command: Command, stdin: Vec<u8>, limits: &RunLimits) -> RawRun {
    use rustix::event::{poll, PollFd, PollFlags};
    use rustix::process::{kill_process_group, Pid, Signal};
    use std::io::{ErrorKind, Read, Write};
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::process::Stdio;

    let start = Instant::now();
    command
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
            let program = command.get_program().to_string_lossy().into_owned();
            return RawRun {
                error: Some(format!("cannot start {program}: {e}")),
                duration: start.elapsed(),
                ..RawRun::default()
            };
        }
    };
    let pid = Pid::from_child(&child);
    let kill_group = || {
        let _ = kill_process_group(pid, Signal::KILL);
    };
    let deadline = start + limits.timeout;
    let mut input = child.stdin.take();
    if let Some(i) = &input {
        if rustix::io::ioctl_fionbio(i, true).is_err() {
            input = None;
        }
    }
    let mut written = 0usize;
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    #[cfg(target_os = "linux")]
    let pidfd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok();
    #[cfg(not(target_os = "linux"))]
    let pidfd: Option<std::os::fd::OwnedFd> = None;

    let mut stdout = Stdout {
        kept: Vec::new(),
        total: 0,
        file: None,
        cap: limits.output_cap,
        limit: limits.output_limit.max(limits.output_cap as u64),
        dir: limits.output_dir.clone(),
    };
    let mut stderr_tail: Vec<u8> = Vec::new();
    let mut stderr_total = 0u64;
    let mut status: Option<std::process::ExitStatus> = None;
    let mut exited_at: Option<Instant> = None;
    let (mut timed_out, mut too_large, mut cancelled) = (false, false, false);
    let cancel_requested = || {
        limits
            .cancel
            .as_ref()
            .is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
    };
    let mut error: Option<String> = None;
    let mut buf = vec![0u8; 64 << 10];
    const GRACE: Duration = Duration::from_millis(500);

    loop {
        if status.is_none() && leader_exited(&mut child) {
            // Kill what the script left behind in its group before reaping it, so the group id
            // cannot have been reused.
            kill_group();
            status = child.wait().ok();
            exited_at = Some(Instant::now());
            input = None;
        }
        if status.is_none() && cancel_requested() {
            cancelled = true;
            kill_group();
            status = child.wait().ok();
            exited_at = Some(Instant::now());
            input = None;
            continue;
        }
        let now = Instant::now();
        if status.is_none() && now >= deadline {
            timed_out = true;
            kill_group();
            status = child.wait().ok();
            exited_at = Some(Instant::now());
            input = None;
            continue;
        }
        if out.is_none() && err.is_none() && status.is_some() {
            break;
        }
        // Pipes held open by a process that left the group: stop waiting for them.
        if exited_at.is_some_and(|t| now.duration_since(t) > GRACE) {
            break;
        }
        let wait = match exited_at {
            Some(t) => GRACE.saturating_sub(now.duration_since(t)),
            None => deadline.saturating_duration_since(now),
        };
        // Without a pidfd, look at the process every 10 ms; at a cancel flag every 50 ms.
        let wait = if pidfd.is_none() && status.is_none() {
            wait.min(Duration::from_millis(10))
        } else if limits.cancel.is_some() && status.is_none() {
            wait.min(Duration::from_millis(50))
        } else {
            wait
        };
        let timeout = rustix::event::Timespec::try_from(wait).ok();
        let (in_ready, out_ready, err_ready) = {
            let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(4);
            let mut slots = [None; 4];
            if let Some(i) = &input {
                slots[0] = Some(fds.len());
                fds.push(PollFd::new(i, PollFlags::OUT));
            }
            if let Some(o) = &out {
                slots[1] = Some(fds.len());
                fds.push(PollFd::new(o, PollFlags::IN));
            }
            if let Some(e) = &err {
                slots[2] = Some(fds.len());
                fds.push(PollFd::new(e, PollFlags::IN));
            }
            if let (Some(p), None) = (&pidfd, status) {
                slots[3] = Some(fds.len());
                fds.push(PollFd::new(p, PollFlags::IN));
            }
            match poll(&mut fds, timeout.as_ref()) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => {
                    error = Some(format!("cannot watch the script's output: {e}"));
                    kill_group();
                    status = child.wait().ok();
                    break;
                }
            }
            let ready = |slot: Option<usize>| {
                slot.and_then(|i| fds.get(i))
                    .is_some_and(|f| !f.revents().is_empty())
            };
            (ready(slots[0]), ready(slots[1]), ready(slots[2]))
        };
        if in_ready {
            if let Some(i) = &mut input {
                match i.write(stdin.get(written..).unwrap_or(&[])) {
                    Ok(n) => written += n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    // The script closed its stdin (or exited): it does not want the rest.
                    Err(_) => written = stdin.len(),
                }
            }
            if written >= stdin.len() {
                input = None;
            }
        }
        if out_ready {
            if let Some(o) = &mut out {
                match o.read(&mut buf) {
                    Ok(0) => out = None,
                    Ok(n) => match stdout.push(buf.get(..n).unwrap_or(&[])) {
                        Ok(true) => {}
                        Ok(false) => {
                            too_large = true;
                            kill_group();
                            out = None;
                        }
                        Err(e) => {
                            error = Some(e);
                            kill_group();
                            out = None;
                        }
                    },
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(_) => out = None,
                }
            }
        }
        if err_ready {
            if let Some(e) = &mut err {
                match e.read(&mut buf) {
                    Ok(0) => err = None,
                    Ok(n) => {
                        stderr_total += n as u64;
                        push_tail(&mut stderr_tail, buf.get(..n).unwrap_or(&[]));
                    }
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(_) => err = None,
                }
            }
        }
        if input.is_none() && written < stdin.len() {
            written = stdin.len();
        }
    }
    if status.is_none() {
        kill_group();
        status = child.wait().ok();
    }
    if stderr_tail.len() > STDERR_KEPT {
        let cut = stderr_tail.len() - STDERR_KEPT;
        stderr_tail.drain(..cut);
    }
    let exit = status.map(|s| match (s.code(), s.signal()) {
        (Some(c), _) => Exit::Code(c),
        (None, Some(sig)) => Exit::Signal(sig),
        (None, None) => Exit::Code(-1),
    });
    RawRun {
        stdout: stdout.kept,
        stdout_total: stdout.total,
        stdout_file: stdout.file.map(|(p, _)| p),
        stderr: stderr_tail,
        stderr_total,
        exit,
        timed_out,
        cancelled,
        too_large,
        error,
        duration: start.elapsed(),
        images: Vec::new(),
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
