//! The probe's result kept between processes ([`crate::keep_probe_in`]), so that a process
//! that confines one command does not first start a child to try every namespace again.
//!
//! Safe by construction rather than by trust in the file:
//! * **Only a complete result is kept or used**: one in which every mechanism the probe child
//!   tries worked. A record can therefore never make a later process plan less confinement than
//!   a live probe would; if it is wrong (forged, or the system changed), the kernel refuses the
//!   step that was planned and the command fails to start — nothing runs less confined. Any
//!   other result is measured live by every process, as without a record.
//! * **Keyed to the system and the process**: the boot, this binary (device, inode, size and
//!   modification time), the user and group ids, the process's own namespaces, its seccomp
//!   mode, `no_new_privs` and capability sets, its LSM label, and the kernel settings that
//!   switch namespaces off (`user.max_*_namespaces`, `kernel.unprivileged_userns_clone`,
//!   `kernel.apparmor_restrict_unprivileged_userns`). The record holds the whole key as text
//!   and is used only when it matches byte for byte.
//! * **Validated on read**: the folder and the file are opened without following a symbolic
//!   link at their place; the folder must belong to this process's user and be writable by no
//!   one else, the file must be a regular file of that user with no access for group or others
//!   (`0600`). Anything else is ignored (and measured live).
//! * Written to a new file and renamed into place, so a reader sees a whole record or none.
//! * **Removed when it failed**: a process whose confined start failed after it used the record
//!   removes it ([`crate::forget_kept_probe`]), so one that no longer fits the system costs one
//!   failed start, not every start until the next boot.
//!
//! The caller names the folder: one no confined command can write (skillbake's runs folder,
//! which every run's view of the file system replaces by a private one; as root, a folder of
//! root's that the unprivileged run user cannot write).

use crate::pre_exec::Found;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use std::os::fd::OwnedFd;
use std::path::Path;

/// The record's file name in the folder.
const FILE: &str = "sandbox-probe";
/// The longest record read.
const MAX_BYTES: usize = 16 << 10;

/// Every mechanism of the probe child found: the only result kept.
const COMPLETE: Found = Found {
    network_namespace: true,
    user_namespace: true,
    seccomp: true,
    mount_namespace: true,
    exec_guard: true,
    ipc_namespace: true,
};

/// Whether `f` is [`COMPLETE`].
pub(crate) fn complete(f: &Found) -> bool {
    *f == COMPLETE
}

/// The complete result, when `dir` holds a valid record for this system and process.
pub(crate) fn read(dir: &Path, key: &str) -> Option<Found> {
    let dir = open_dir(dir)?;
    let fd = rustix::fs::openat(
        &dir,
        FILE,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .ok()?;
    let st = rustix::fs::fstat(&fd).ok()?;
    let own = st.st_uid == rustix::process::geteuid().as_raw();
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile
        || !own
        || st.st_mode & 0o077 != 0
        || usize::try_from(st.st_size).map_or(true, |n| n > MAX_BYTES)
    {
        return None;
    }
    let mut file = std::fs::File::from(fd);
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut std::io::Read::take(&mut file, MAX_BYTES as u64),
        &mut text,
    )
    .ok()?;
    (text == record(key)).then_some(COMPLETE)
}

/// Keeps a complete result in `dir` (nothing is written for another, or where `dir` is not a
/// valid folder). Failures are ignored: the next process measures again.
pub(crate) fn write(dir: &Path, key: &str, found: &Found) {
    if !complete(found) {
        return;
    }
    let Some(dir) = open_dir(dir) else { return };
    let temp = format!("{FILE}.{}.tmp", std::process::id());
    let written = (|| -> std::io::Result<()> {
        let fd = rustix::fs::openat(
            &dir,
            temp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )?;
        let mut file = std::fs::File::from(fd);
        std::io::Write::write_all(&mut file, record(key).as_bytes())?;
        rustix::fs::renameat(&dir, temp.as_str(), &dir, FILE)?;
        Ok(())
    })();
    if written.is_err() {
        let _ = rustix::fs::unlinkat(&dir, temp.as_str(), AtFlags::empty());
    }
}

/// The text of a complete record for `key`.
/// Removes the record in `dir`, through the same validated folder open as [`read`]; returns
/// whether one was removed.
pub(crate) fn remove(dir: &Path) -> bool {
    open_dir(dir).is_some_and(|d| rustix::fs::unlinkat(&d, FILE, AtFlags::empty()).is_ok())
}

fn record(key: &str) -> String {
    format!("{key}found all\n")
}

/// `dir`, when it is a folder (not a link at its place) of this user that no one else may write.
fn open_dir(dir: &Path) -> Option<OwnedFd> {
    let fd = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let st = rustix::fs::fstat(&fd).ok()?;
    (st.st_uid == rustix::process::geteuid().as_raw() && st.st_mode & 0o022 == 0).then_some(fd)
}

/// What the probe's result depends on besides the kernel's code, as text (see the module
/// documentation); `None` when the boot or this binary cannot be identified (nothing is kept).
pub(crate) fn key() -> Option<String> {
    use rustix::process::{getegid, geteuid, getgid, getuid};
    use std::fmt::Write;
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let boot = read("/proc/sys/kernel/random/boot_id")?;
    let exe = rustix::fs::stat("/proc/self/exe").ok()?;
    let mut k = format!(
        "skillbake-sandbox {} probe 1\nboot {}\nexe {}:{}:{}:{}.{}\nids {} {} {} {}\n",
        env!("CARGO_PKG_VERSION"),
        boot.trim(),
        exe.st_dev,
        exe.st_ino,
        exe.st_size,
        exe.st_mtime,
        exe.st_mtime_nsec,
        getuid().as_raw(),
        geteuid().as_raw(),
        getgid().as_raw(),
        getegid().as_raw(),
    );
    for ns in ["user", "mnt", "net", "ipc", "pid", "uts", "cgroup"] {
        let at = std::fs::read_link(format!("/proc/self/ns/{ns}")).ok();
        let _ = writeln!(
            k,
            "ns {}",
            at.as_deref().unwrap_or(Path::new("-")).display()
        );
    }
    let status = read("/proc/self/status")?;
    for line in status.lines() {
        let kept = [
            "Seccomp:",
            "NoNewPrivs:",
            "CapInh:",
            "CapPrm:",
            "CapEff:",
            "CapBnd:",
        ];
        if kept.iter().any(|p| line.starts_with(p)) {
            let _ = writeln!(
                k,
                "{}",
                line.split_whitespace().collect::<Vec<_>>().join(" ")
            );
        }
    }
    for p in [
        "/proc/self/attr/current",
        "/proc/sys/user/max_user_namespaces",
        "/proc/sys/user/max_mnt_namespaces",
        "/proc/sys/user/max_net_namespaces",
        "/proc/sys/user/max_ipc_namespaces",
        "/proc/sys/kernel/unprivileged_userns_clone",
        "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    ] {
        let v = read(p);
        let v = v.as_deref().map_or("-", |v| v.trim_matches(['\n', '\0']));
        let _ = writeln!(k, "{p} {v}");
    }
    Some(k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn only_a_complete_result_of_the_same_key_in_a_private_file_is_used() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path();
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let key = key().expect("a key on Linux");
        assert!(key.contains("\nboot ") && key.contains("\nns "), "{key}");
        // Nothing kept yet; a partial result is never written.
        assert!(read(dir, &key).is_none());
        let partial = Found {
            network_namespace: false,
            ..COMPLETE
        };
        write(dir, &key, &partial);
        assert!(!dir.join(FILE).exists());
        write(dir, &key, &COMPLETE);
        let got = read(dir, &key).expect("the complete record");
        assert!(complete(&got));
        // Another key (another boot, binary or process context) does not match.
        assert!(read(dir, &key.replace("boot ", "boot x")).is_none());
        // A file others may read or write is ignored.
        let file = dir.join(FILE);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(read(dir, &key).is_none());
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(read(dir, &key).is_some());
        // A symbolic link in the record's place is not followed.
        std::fs::rename(&file, dir.join("elsewhere")).unwrap();
        std::os::unix::fs::symlink("elsewhere", &file).unwrap();
        assert!(read(dir, &key).is_none());
        std::fs::remove_file(&file).unwrap();
        std::fs::rename(dir.join("elsewhere"), &file).unwrap();
        // A folder others may write is not used, nor a link to the folder.
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(read(dir, &key).is_none());
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let link = t.path().with_extension("link");
        std::os::unix::fs::symlink(dir, &link).unwrap();
        assert!(read(&link, &key).is_none());
        std::fs::remove_file(&link).unwrap();
        // A record that says less than everything is not a record.
        std::fs::write(&file, format!("{key}found none\n")).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(read(dir, &key).is_none());
    }
}
