//! `skillbake lsp` driven over stdio by a real Language Server Protocol client, pygls's
//! (`tests/lsp/client.py`, pinned in `tests/lsp-requirements.txt`): a broken `SKILL.md` opened
//! in the client's buffer gets the diagnostic of `check` at the right range (columns in UTF-16
//! units), its code action applied gives no diagnostic; a misspelt key and its rename; hover on
//! a key; completion of keys and permission names. Nothing is saved: the file on disk checks
//! clean all along.
//!
//! The Python to run it with is `$SKILLBAKE_LSP_PYTHON` (CI installs the requirements into
//! `target/lsp-venv`, see `.ci/run`). Without it the test says so and passes outside CI; under
//! CI (`CI` set) it fails.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_skillbake");

/// The client's run, however busy the machine: each answer is awaited at most 60 s.
const FINISH_WITHIN: Duration = Duration::from_secs(300);

fn python() -> Option<PathBuf> {
    match std::env::var_os("SKILLBAKE_LSP_PYTHON") {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must run the LSP client test: set SKILLBAKE_LSP_PYTHON to a Python with tests/lsp-requirements.txt installed"
            );
            eprintln!(
                "SKILLBAKE_LSP_PYTHON is not set: the LSP client test is skipped (python3 -m venv target/lsp-venv && target/lsp-venv/bin/pip install -r tests/lsp-requirements.txt, then export SKILLBAKE_LSP_PYTHON=$PWD/target/lsp-venv/bin/python)"
            );
            None
        }
    }
}

#[test]
fn an_editor_sees_the_diagnostic_applies_the_fix_and_sees_none() {
    let Some(python) = python() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let pack = tmp.path().join("skills/report-digest");
    std::fs::create_dir_all(&pack).unwrap();
    let on_disk = "---\nname: report-digest\ndescription: \"Summarise reports.\"\n---\n\n# report-digest\n\nSummarise the report.\n";
    std::fs::write(pack.join("SKILL.md"), on_disk).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/lsp/client.py");
    let mut child = Command::new(&python)
        .arg(&script)
        .arg(BIN)
        .arg(&pack)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > FINISH_WITHIN {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the LSP client did not finish within {FINISH_WITHIN:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (mut out, mut err) = (String::new(), String::new());
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "the LSP client failed: {err}\n{out}");
    insta::assert_snapshot!("lsp-session", out);
    // The buffer was never saved.
    assert_eq!(
        std::fs::read_to_string(pack.join("SKILL.md")).unwrap(),
        on_disk
    );
}
