//! `skillbake lsp` driven over stdio by a real Language Server Protocol client, pygls's
//! (`tests/lsp/client.py`, pinned in `tests/lsp-requirements.txt`):
//! - a broken `SKILL.md` opened in the client's buffer gets the diagnostic of `check` at the
//!   right range (columns in UTF-16 units), its code action applied gives no diagnostic; a
//!   misspelt key and its rename; hover on a key; completion of keys and permission names;
//! - an unsaved `schema.json`: a trailing comma (`schema-json-syntax`), then a `type` its
//!   meta-schema refuses (`schema-invalid`), each at its range, then fixed: none left;
//! - an unsaved `skillbake.toml`: `unknown-key = "deny"` makes the open `SKILL.md`'s warning an
//!   error, an unknown level and a syntax error are `config-invalid` at their ranges (and the
//!   configuration no longer applies), fixed: none in the toml; closed unsaved: the file on
//!   disk applies again.
//!
//! In the last two, after every edit the client saves its buffers into a copy of the folder and
//! runs `skillbake check --format json` on it: what the server published must be what `check`
//! says once saved. Nothing is saved in the folder itself: its files are unchanged at the end.
//!
//! The Python to run it with is `$SKILLBAKE_LSP_PYTHON` (CI installs the requirements into
//! `target/lsp-venv`, see `.ci/run`). Without it the test says so and passes outside CI; under
//! CI (`CI` set) it fails.

use crate::python::output_within;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_skillbake");

/// The client's run, however busy the machine: each answer is awaited at most 60 s.
const FINISH_WITHIN: Duration = Duration::from_secs(300);

fn python() -> Option<PathBuf> {
    crate::python::python(
        "SKILLBAKE_LSP_PYTHON",
        "lsp-requirements.txt",
        "lsp-venv",
        "LSP client",
    )
}

/// Runs `tests/lsp/client.py` on `scenario` in `dir` to its end (killed past [`FINISH_WITHIN`]);
/// its transcript. The client stops the server it started (shutdown, exit, then waits for it).
fn client(python: &Path, scenario: &str, dir: &Path) -> String {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/lsp/client.py");
    let output = output_within(
        Command::new(python)
            .arg(&script)
            .arg(BIN)
            .arg(scenario)
            .arg(dir),
        FINISH_WITHIN,
    );
    let out = String::from_utf8_lossy(&output.stdout).to_string();
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the LSP client failed: {err}\n{out}"
    );
    out
}

/// The text of every file under `dir`, by path.
fn tree(dir: &Path) -> BTreeMap<PathBuf, String> {
    walk(dir)
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

const SKILL_MD: &str =
    "---\nname: report-digest\ndescription: \"Summarise reports.\"\n---\n\n# report-digest\n\nSummarise the report.\n";

/// A skills folder holding `report-digest` (its `SKILL.md` and `schema.json`, clean) and the
/// files of `extra`.
fn skills_folder(extra: &[(&str, &str)]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let pack = tmp.path().join("skills/report-digest");
    std::fs::create_dir_all(&pack).unwrap();
    std::fs::write(pack.join("SKILL.md"), SKILL_MD).unwrap();
    std::fs::write(
        pack.join("schema.json"),
        "{\n  \"type\": \"object\",\n  \"properties\": {\n    \"path\": {\"type\": \"string\"}\n  }\n}\n",
    )
    .unwrap();
    for (name, text) in extra {
        std::fs::write(tmp.path().join("skills").join(name), text).unwrap();
    }
    tmp
}

#[test]
fn an_editor_sees_the_diagnostic_applies_the_fix_and_sees_none() {
    let Some(python) = python() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let pack = tmp.path().join("skills/report-digest");
    std::fs::create_dir_all(&pack).unwrap();
    std::fs::write(pack.join("SKILL.md"), SKILL_MD).unwrap();
    let out = client(&python, "skill-md", &pack);
    insta::assert_snapshot!("lsp-session", out);
    // The buffer was never saved.
    assert_eq!(
        std::fs::read_to_string(pack.join("SKILL.md")).unwrap(),
        SKILL_MD
    );
}

#[test]
fn an_unsaved_schema_json_gets_checks_diagnostics_until_fixed() {
    let Some(python) = python() else {
        return;
    };
    let tmp = skills_folder(&[]);
    let before = tree(tmp.path());
    let out = client(&python, "schema-json", &tmp.path().join("skills"));
    insta::assert_snapshot!("lsp-schema-json", out);
    assert_eq!(tree(tmp.path()), before, "nothing is saved");
}

#[test]
fn an_unsaved_skillbake_toml_gets_its_diagnostics_and_applies_to_the_open_packs() {
    let Some(python) = python() else {
        return;
    };
    let tmp = skills_folder(&[("skillbake.toml", "profile = \"default\"\n")]);
    let before = tree(tmp.path());
    let out = client(&python, "skillbake-toml", &tmp.path().join("skills"));
    insta::assert_snapshot!("lsp-skillbake-toml", out);
    assert_eq!(tree(tmp.path()), before, "nothing is saved");
}
