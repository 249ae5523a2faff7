//! A skill run in process: `Executor::execute` on the bundled `read-file` pack (parameters
//! checked, the materialised copy verified, the script run in its own process group, its output
//! read) against the floor of starting the same script directly with the same interpreter and
//! reading its output. `first` removes the cache before every call (untimed), so the copy is
//! written again each time. Run with `cargo bench --bench exec`; `cargo xtask bench exec` runs
//! it and copies the figures into BENCHMARKS.md.
//!
//! `SKILLBAKE_BENCH_PYTHON` names the interpreter (default: `python3` on `PATH`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use divan::Bencher;
use serde_json::{json, Value};
use skillbake_exec::{Executor, Interpreter, Policy};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn main() {
    divan::main();
}

struct Setup {
    _tmp: tempfile::TempDir,
    cache: PathBuf,
    python: PathBuf,
    params: Value,
    executor: Executor<'static>,
}

fn setup() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let cache = tmp.path().join("cache");
        let python = std::env::var_os("SKILLBAKE_BENCH_PYTHON")
            .map_or_else(|| PathBuf::from("python3"), PathBuf::from);
        let python = if python.is_absolute() {
            python
        } else {
            which(&python).expect("python3 on PATH")
        };
        let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
        let params = json!({"path": readme.display().to_string(), "max_length": 200});
        let policy = Policy::new()
            .allow("filesystem:read")
            .unwrap()
            .cache_dir(&cache)
            .interpreter(Interpreter::Python, &python);
        let executor = Executor::new(&skillbake_cli::BUNDLED, policy);
        assert!(executor.execute("read-file", params.clone()).ok());
        Setup {
            _tmp: tmp,
            cache,
            python,
            params,
            executor,
        }
    })
}

fn which(program: &Path) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Removes a cache whose folders are read-only.
fn remove_cache(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        if d.is_dir() && !d.is_symlink() {
            let _ = std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700));
            if let Ok(entries) = std::fs::read_dir(&d) {
                stack.extend(entries.flatten().map(|e| e.path()));
            }
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// The floor: the same script, started directly, its output read.
#[divan::bench(sample_count = 30, sample_size = 1)]
fn direct(bencher: Bencher) {
    let s = setup();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("skills/read-file/scripts/read_file.py");
    let params = s.params.to_string();
    bencher.bench(|| {
        let out = Command::new(&s.python)
            .arg(&script)
            .arg(&params)
            .output()
            .unwrap();
        assert!(out.status.success());
        out
    });
}

/// `Executor::execute` with the copy already in the cache.
#[divan::bench(sample_count = 30, sample_size = 1)]
fn warm(bencher: Bencher) {
    let s = setup();
    bencher.bench(|| {
        let o = s.executor.execute("read-file", s.params.clone());
        assert!(o.ok());
        o
    });
}

/// `Executor::execute` writing the copy first (the cache is removed before each call, untimed).
#[divan::bench(sample_count = 30, sample_size = 1)]
fn first(bencher: Bencher) {
    let s = setup();
    bencher
        .with_inputs(|| remove_cache(&s.cache))
        .bench_values(|()| {
            let o = s.executor.execute("read-file", s.params.clone());
            assert!(o.ok());
            o
        });
}
