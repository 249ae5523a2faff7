//! `cargo xtask reproducible [--keep]`: builds the example agent (`skillbake-example-agent`, which
//! embeds its own skills) in release mode from two copies of the repository at different absolute
//! paths, whose files were created in opposite orders, with separate target folders; then compares
//! the two binaries byte for byte and scans them for absolute build paths.
//!
//! The copy holds the files `git ls-files` reports (tracked, plus untracked files that are not
//! ignored, so uncommitted work is checked too). Fails when the binaries differ or when a binary
//! contains a build folder, the cargo home or the home folder.

use crate::root;
use std::path::{Path, PathBuf};
use std::process::Command;

const PACKAGE: &str = "skillbake-example-agent";

/// Removes its folder when dropped (unless `--keep`).
struct Scratch {
    path: PathBuf,
    keep: bool,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.keep {
            eprintln!("kept {}", self.path.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let mut keep = false;
    for a in args {
        match a.as_str() {
            "--keep" => keep = true,
            s => {
                return Err(format!(
                    "unknown argument `{s}` (usage: reproducible [--keep])"
                ))
            }
        }
    }
    let files = tracked_files()?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let scratch = Scratch {
        path: std::env::temp_dir().join(format!("skillbake-repro-{}-{nanos}", std::process::id())),
        keep,
    };
    // Two checkouts whose absolute paths differ in length and depth.
    let checkouts = [
        scratch.path.join("one"),
        scratch.path.join("two/a/much/deeper/checkout"),
    ];
    let mut binaries = Vec::new();
    for (i, dir) in checkouts.iter().enumerate() {
        copy_files(&files, dir, i == 1)?;
        binaries.push(build(dir)?);
    }

    let a = read(&binaries[0])?;
    let b = read(&binaries[1])?;
    println!("\n{PACKAGE} (release), built from {} files:", files.len());
    for (dir, bytes) in [(&checkouts[0], &a), (&checkouts[1], &b)] {
        println!(
            "  from {}: {} bytes, sha256 {}",
            dir.display(),
            bytes.len(),
            hex(&sha256(bytes))
        );
    }
    let identical = a == b;
    if identical {
        println!("binaries: identical");
    } else {
        let first = a.iter().zip(&b).position(|(x, y)| x != y);
        let differing = a.iter().zip(&b).filter(|(x, y)| x != y).count();
        println!(
            "binaries: differ ({} vs {} bytes; first difference at byte {}; {} differing bytes in the common length)",
            a.len(),
            b.len(),
            first.map_or_else(|| "end of the shorter file".into(), |p| p.to_string()),
            differing
        );
    }

    let mut needles: Vec<(String, String)> = checkouts
        .iter()
        .map(|d| ("build folder".to_string(), d.display().to_string()))
        .collect();
    needles.push(("repository".into(), root().display().to_string()));
    if let Some(home) = cargo_home() {
        needles.push(("cargo home".into(), home.display().to_string()));
    }
    if let Some(home) = std::env::var_os("HOME").filter(|h| h.len() > 1) {
        needles.push((
            "home folder".into(),
            PathBuf::from(home).display().to_string(),
        ));
    }
    let mut leaks = 0;
    for (bytes, name) in [(&a, "first"), (&b, "second")] {
        for (what, needle) in &needles {
            let hits = find_all(bytes, needle.as_bytes());
            if hits.is_empty() {
                continue;
            }
            leaks += hits.len();
            println!(
                "LEAK: the {name} binary contains the {what} `{needle}` {} time(s), e.g.:",
                hits.len()
            );
            for &at in hits.iter().take(3) {
                println!("    {}", printable_run(bytes, at));
            }
        }
    }
    if leaks == 0 {
        println!(
            "path scan: no absolute build path in either binary (checked {} paths: build folders, repository, cargo home, home folder)",
            needles.len()
        );
    }

    match (identical, leaks) {
        (true, 0) => {
            println!("reproducible: yes");
            Ok(())
        }
        (false, 0) => Err("the two release binaries differ".into()),
        (_, n) => Err(format!(
            "{n} absolute build path(s) found in the release binaries"
        )),
    }
}

/// Tracked files plus untracked, not ignored ones; files deleted in the working tree are skipped.
fn tracked_files() -> Result<Vec<PathBuf>, String> {
    let out = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root())
        .output()
        .map_err(|e| format!("cannot run git ls-files: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "git ls-files failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let mut files: Vec<PathBuf> = out
        .stdout
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
        .filter(|p| root().join(p).symlink_metadata().is_ok_and(|m| m.is_file()))
        .collect();
    files.sort();
    files.dedup();
    Ok(files)
}

/// Copies `files` from the repository to `to`, in sorted order or in reverse.
fn copy_files(files: &[PathBuf], to: &Path, reverse: bool) -> Result<(), String> {
    eprintln!(
        "==> copying {} files to {} ({} order)",
        files.len(),
        to.display(),
        if reverse { "reverse" } else { "sorted" }
    );
    let root = root();
    let order: Box<dyn Iterator<Item = &PathBuf>> = if reverse {
        Box::new(files.iter().rev())
    } else {
        Box::new(files.iter())
    };
    for f in order {
        let dest = to.join(f);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::copy(root.join(f), &dest)
            .map_err(|e| format!("cannot copy {}: {e}", f.display()))?;
    }
    Ok(())
}

fn cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
}

/// `cargo build --release -p skillbake-example-agent --offline` in `dir` with its own target
/// folder; returns the binary's path.
fn build(dir: &Path) -> Result<PathBuf, String> {
    // rustc writes source paths into the binary: panic locations (`file!()`, `#[track_caller]`)
    // of this workspace's crates and of the registry crates they depend on, and debug info.
    // Those are absolute paths under the checkout and under the cargo home, so two checkouts
    // would give two binaries, each naming the machine's folders. Remapping both prefixes to
    // fixed names makes the paths (and so the bytes) independent of where the build ran.
    // CARGO_ENCODED_RUSTFLAGS (0x1f-separated) keeps paths with spaces in one argument.
    let mut flags = vec![format!("--remap-path-prefix={}=/build", dir.display())];
    if let Some(home) = cargo_home() {
        flags.push(format!("--remap-path-prefix={}=/cargo", home.display()));
    }
    let target = dir.join("target");
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args(["build", "--release", "--offline", "-p", PACKAGE])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", &target)
        .env("CARGO_ENCODED_RUSTFLAGS", flags.join("\u{1f}"))
        .env_remove("RUSTFLAGS")
        .env_remove("SKILLBAKE_SKILLS_DIR")
        // No debug info in release (the default, made explicit: nothing else may turn it on).
        .env("CARGO_PROFILE_RELEASE_DEBUG", "0")
        .env("CARGO_INCREMENTAL", "0");
    crate::run(
        &format!("cargo build --release -p {PACKAGE} in {}", dir.display()),
        &mut cmd,
    )?;
    let bin = target
        .join("release")
        .join(format!("{PACKAGE}{}", std::env::consts::EXE_SUFFIX));
    if bin.is_file() {
        Ok(bin)
    } else {
        Err(format!("no binary at {}", bin.display()))
    }
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn find_all(haystack: &[u8], needle: &[u8]) -> Vec<usize> {
    if needle.is_empty() || needle.len() > haystack.len() {
        return Vec::new();
    }
    haystack
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect()
}

/// The run of printable ASCII around `at` (what `strings` would print), at most 160 bytes.
fn printable_run(bytes: &[u8], at: usize) -> String {
    let printable = |b: &u8| (0x20..0x7f).contains(b);
    let mut start = at;
    while start > 0 && at - start < 80 && bytes.get(start - 1).is_some_and(printable) {
        start -= 1;
    }
    let mut end = at;
    while end < bytes.len() && end - start < 160 && bytes.get(end).is_some_and(printable) {
        end += 1;
    }
    String::from_utf8_lossy(bytes.get(start..end).unwrap_or_default()).into_owned()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 (FIPS 180-4), to print a digest comparable with `sha256sum`.
fn sha256(data: &[u8]) -> [u8; 32] {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut msg = data.to_vec();
    let bit_len = (data.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bit_len.to_be_bytes());
    for block in msg.chunks_exact(64) {
        let mut w = [0u32; 64];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *x = x.wrapping_add(y);
        }
    }
    let mut out = [0u8; 32];
    for (chunk, word) in out.chunks_exact_mut(4).zip(h) {
        chunk.copy_from_slice(&word.to_be_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_scan_finds_paths_and_shows_their_string() {
        let bin =
            b"\x7fELF\0\0/cargo/phf.rs\0x/home/dev/.cargo/registry/src/phf-0.14.0/src/map.rs\0\x01";
        let hits = super::find_all(bin, b"/home/dev/.cargo");
        assert_eq!(hits, [21]);
        assert_eq!(
            super::printable_run(bin, hits[0]),
            "x/home/dev/.cargo/registry/src/phf-0.14.0/src/map.rs"
        );
        assert!(super::find_all(bin, b"/tmp/x").is_empty());
    }

    #[test]
    fn sha256_matches_known_digests() {
        assert_eq!(
            super::hex(&super::sha256(b"")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            super::hex(&super::sha256(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let long = vec![b'a'; 1000];
        assert_eq!(
            super::hex(&super::sha256(&long)),
            "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"
        );
    }
}
