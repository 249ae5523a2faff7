//! Which files the kernel opens for execution when a command starts: the program (found in
//! `PATH` the way `execvp` finds it), its ELF interpreter (`PT_INTERP`, the dynamic loader), and
//! for a `#!` script the interpreter named on its first line, recursively. Landlock must allow
//! executing each of them and nothing else (unless other programs are granted).

use std::ffi::OsStr;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The kernel follows at most this many nested `#!` interpreters (`BINPRM_MAX_RECURSION`).
const MAX_DEPTH: usize = 5;

/// `execvp`'s search path when the environment has no `PATH` (glibc's `confstr` default).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// Finds `program` as `execvp` would in a child whose `PATH` is `path_var` and whose working
/// directory is `cwd`: a name with a `/` is taken as is (relative to `cwd`), a bare name is
/// searched in `PATH`. Returns `None` when nothing executable is found.
pub(crate) fn resolve(
    program: &OsStr,
    path_var: Option<&OsStr>,
    cwd: Option<&Path>,
) -> Option<PathBuf> {
    let relative_to = |p: &Path| match cwd {
        Some(dir) if p.is_relative() => dir.join(p),
        _ => p.to_path_buf(),
    };
    if program.as_bytes().contains(&b'/') {
        let p = relative_to(Path::new(program));
        return is_executable_file(&p).then_some(p);
    }
    if program.is_empty() {
        return None;
    }
    let path_var = path_var.unwrap_or(OsStr::new(DEFAULT_PATH));
    for dir in path_var.as_bytes().split(|&b| b == b':') {
        // An empty entry is the working directory.
        let dir = if dir.is_empty() {
            Path::new(".")
        } else {
            Path::new(OsStr::from_bytes(dir))
        };
        let candidate = relative_to(&dir.join(program));
        if is_executable_file(&candidate) {
            return Some(candidate);
        }
    }
    None
}

fn is_executable_file(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The program and every interpreter the kernel opens to start it, in order, without
/// repetition. Files that cannot be read are still listed (the kernel will fail on them, not the
/// sandbox).
pub(crate) fn exec_chain(program: &Path, path_var: Option<&OsStr>) -> Vec<PathBuf> {
    walk(program, path_var).0
}

/// How many `execve` calls starting `program` takes: one, plus one for each `#!/usr/bin/env
/// NAME` on the way (env starts NAME itself; the kernel follows other `#!` lines within the one
/// call).
pub(crate) fn exec_calls(program: &Path, path_var: Option<&OsStr>) -> u32 {
    walk(program, path_var).1
}

/// The chain of [`exec_chain`] and the count of [`exec_calls`].
fn walk(program: &Path, path_var: Option<&OsStr>) -> (Vec<PathBuf>, u32) {
    let mut calls = 1u32;
    let mut chain: Vec<PathBuf> = Vec::new();
    let mut next = Some(program.to_path_buf());
    for _ in 0..MAX_DEPTH {
        let Some(file) = next.take() else { break };
        if chain.contains(&file) {
            break;
        }
        let head = read_head(&file);
        chain.push(file);
        match head {
            Some(Head::Elf(Some(loader))) => push_new(&mut chain, loader),
            Some(Head::Script { interpreter, arg }) => {
                // `#!/usr/bin/env NAME`: env runs NAME, found in PATH.
                let target = (interpreter.file_name() == Some(OsStr::new("env")))
                    .then(|| arg.as_deref().and_then(env_target))
                    .flatten()
                    .and_then(|name| resolve(OsStr::from_bytes(name), path_var, None));
                match target {
                    Some(target) => {
                        let loader = match read_head(&interpreter) {
                            Some(Head::Elf(loader)) => loader,
                            _ => None,
                        };
                        push_new(&mut chain, interpreter);
                        if let Some(loader) = loader {
                            push_new(&mut chain, loader);
                        }
                        calls += 1;
                        next = Some(target);
                    }
                    None => next = Some(interpreter),
                }
            }
            Some(Head::Elf(None)) | None => {}
        }
    }
    (chain, calls)
}

fn push_new(chain: &mut Vec<PathBuf>, p: PathBuf) {
    if !chain.contains(&p) {
        chain.push(p);
    }
}

/// The program `env`'s argument names: `NAME`, or the first word after `-S` (and options).
fn env_target(arg: &[u8]) -> Option<&[u8]> {
    arg.split(|b| *b == b' ' || *b == b'\t')
        .filter(|w| !w.is_empty())
        .find(|w| !w.starts_with(b"-") && !w.contains(&b'='))
}

enum Head {
    /// An ELF file, with its `PT_INTERP` when it has one.
    Elf(Option<PathBuf>),
    /// A `#!` script.
    Script {
        interpreter: PathBuf,
        arg: Option<Vec<u8>>,
    },
}

fn read_head(path: &Path) -> Option<Head> {
    let mut f = File::open(path).ok()?;
    let mut buf = [0u8; 256];
    let n = read_up_to(&mut f, &mut buf)?;
    let head = &buf[..n];
    if head.starts_with(b"#!") {
        return parse_shebang(head);
    }
    if head.starts_with(b"\x7fELF") {
        return Some(Head::Elf(elf_interp(&mut f, head)));
    }
    None
}

fn read_up_to(f: &mut File, buf: &mut [u8]) -> Option<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(n)
}

/// `#!interpreter [one argument]`, as the kernel reads it from the first 256 bytes.
fn parse_shebang(head: &[u8]) -> Option<Head> {
    let line = head.get(2..)?;
    let line = match line.iter().position(|&b| b == b'\n') {
        Some(end) => &line[..end],
        None => line,
    };
    let is_blank = |b: &u8| *b == b' ' || *b == b'\t';
    let start = line.iter().position(|b| !is_blank(b))?;
    let line = &line[start..];
    let end = line.iter().position(is_blank).unwrap_or(line.len());
    let interpreter = PathBuf::from(OsStr::from_bytes(&line[..end]));
    let rest = &line[end..];
    let arg = rest
        .iter()
        .position(|b| !is_blank(b))
        .map(|s| {
            let a = &rest[s..];
            let e = a.iter().rposition(|b| !is_blank(b)).map_or(0, |e| e + 1);
            a[..e].to_vec()
        })
        .filter(|a| !a.is_empty());
    if interpreter.as_os_str().is_empty() {
        return None;
    }
    Some(Head::Script { interpreter, arg })
}

/// The `PT_INTERP` path of an ELF file (32- or 64-bit, either byte order).
fn elf_interp(f: &mut File, head: &[u8]) -> Option<PathBuf> {
    let class64 = match head.get(4)? {
        1 => false,
        2 => true,
        _ => return None,
    };
    let little = match head.get(5)? {
        1 => true,
        2 => false,
        _ => return None,
    };
    let u16_at = |o: usize| -> Option<u64> {
        let b: [u8; 2] = head.get(o..o + 2)?.try_into().ok()?;
        Some(u64::from(if little {
            u16::from_le_bytes(b)
        } else {
            u16::from_be_bytes(b)
        }))
    };
    let word = |bytes: &[u8], o: usize, wide: bool| -> Option<u64> {
        if wide {
            let b: [u8; 8] = bytes.get(o..o + 8)?.try_into().ok()?;
            Some(if little {
                u64::from_le_bytes(b)
            } else {
                u64::from_be_bytes(b)
            })
        } else {
            let b: [u8; 4] = bytes.get(o..o + 4)?.try_into().ok()?;
            Some(u64::from(if little {
                u32::from_le_bytes(b)
            } else {
                u32::from_be_bytes(b)
            }))
        }
    };
    let (phoff, phentsize, phnum) = if class64 {
        (word(head, 32, true)?, u16_at(54)?, u16_at(56)?)
    } else {
        (word(head, 28, false)?, u16_at(42)?, u16_at(44)?)
    };
    if phentsize == 0 || phnum > 512 || phentsize > 256 {
        return None;
    }
    let mut ph = vec![0u8; usize::try_from(phentsize * phnum).ok()?];
    f.seek(SeekFrom::Start(phoff)).ok()?;
    f.read_exact(&mut ph).ok()?;
    for entry in ph.chunks_exact(usize::try_from(phentsize).ok()?) {
        const PT_INTERP: u64 = 3;
        if word(entry, 0, false)? != PT_INTERP {
            continue;
        }
        let (offset, size) = if class64 {
            (word(entry, 8, true)?, word(entry, 32, true)?)
        } else {
            (word(entry, 4, false)?, word(entry, 16, false)?)
        };
        if size == 0 || size > 4096 {
            return None;
        }
        let mut name = vec![0u8; usize::try_from(size).ok()?];
        f.seek(SeekFrom::Start(offset)).ok()?;
        f.read_exact(&mut name).ok()?;
        let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        name.truncate(end);
        if name.is_empty() {
            return None;
        }
        return Some(PathBuf::from(OsStr::from_bytes(&name)));
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn shebang_with_and_without_argument() {
        match parse_shebang(b"#! /usr/bin/env  python3 \nprint()").unwrap() {
            Head::Script { interpreter, arg } => {
                assert_eq!(interpreter, Path::new("/usr/bin/env"));
                assert_eq!(arg.as_deref(), Some(&b"python3"[..]));
            }
            Head::Elf(_) => panic!("not a script"),
        }
        match parse_shebang(b"#!/bin/sh\n").unwrap() {
            Head::Script { interpreter, arg } => {
                assert_eq!(interpreter, Path::new("/bin/sh"));
                assert!(arg.is_none());
            }
            Head::Elf(_) => panic!("not a script"),
        }
        assert!(parse_shebang(b"#!   \n").is_none());
    }

    #[test]
    fn env_split_string_target() {
        assert_eq!(env_target(b"-S python3 -u"), Some(&b"python3"[..]));
        assert_eq!(env_target(b"A=1 node"), Some(&b"node"[..]));
        assert_eq!(env_target(b"-i"), None);
    }

    #[test]
    fn sh_has_an_elf_interpreter() {
        let sh = resolve(OsStr::new("sh"), Some(OsStr::new("/usr/bin:/bin")), None).unwrap();
        let chain = exec_chain(&sh, None);
        assert_eq!(chain[0], sh);
        // A dynamically linked shell names its loader; a static one has none.
        if let Some(Head::Elf(Some(interp))) = read_head(&sh) {
            assert!(chain.contains(&interp), "{chain:?}");
        }
    }

    #[test]
    fn bare_names_not_found_and_empty() {
        assert!(resolve(OsStr::new(""), None, None).is_none());
        assert!(resolve(
            OsStr::new("no-such-program-anywhere"),
            Some(OsStr::new("/usr/bin")),
            None
        )
        .is_none());
    }
}
