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

use crate::python::{output_within, python};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_skillbake");

/// The client's run, however busy the machine: each answer is awaited at most 60 s.
const FINISH_WITHIN: Duration = Duration::from_secs(300);

#[test]
fn an_editor_sees_the_diagnostic_applies_the_fix_and_sees_none() {
    let Some(python) = python(
        "SKILLBAKE_LSP_PYTHON",
        "lsp-requirements.txt",
        "lsp-venv",
        "LSP client",
    ) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let pack = tmp.path().join("skills/report-digest");
    std::fs::create_dir_all(&pack).unwrap();
    let on_disk = "---\nname: report-digest\ndescription: \"Summarise reports.\"\n---\n\n# report-digest\n\nSummarise the report.\n";
    std::fs::write(pack.join("SKILL.md"), on_disk).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/lsp/client.py");
    let output = output_within(
        Command::new(&python).arg(&script).arg(BIN).arg(&pack),
        FINISH_WITHIN,
    );
    let out = String::from_utf8_lossy(&output.stdout);
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the LSP client failed: {err}\n{out}"
    );
    insta::assert_snapshot!("lsp-session", out);
    // The buffer was never saved.
    assert_eq!(
        std::fs::read_to_string(pack.join("SKILL.md")).unwrap(),
        on_disk
    );
}
