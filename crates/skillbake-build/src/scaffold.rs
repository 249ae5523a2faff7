//! New packs (`skillbake new`, `cargo xtask new-skill`): the files of a pack that passes
//! `skillbake check` with no diagnostic, checked in memory before anything is written.
//!
//! An instructions-only pack is a `SKILL.md`. A runnable one (`--runnable python|bash|node`)
//! adds `schema.json` (one required string parameter, `text`) and `scripts/run.*`, which reads
//! the parameters from its first argument and prints the unified result
//! `{"ok", "data", "error"}` (exit 0 exactly when `ok`), and its `SKILL.md` names the script as
//! `entrypoint`. The name is checked by the same rules as every pack's (`name-charset`,
//! `name-length`, ...): a scaffold whose check reports anything is refused with that report.

use crate::check::{check_files, CheckOptions};
use crate::report::Report;
use std::fmt;
use std::path::{Path, PathBuf};

/// The language of a runnable scaffold's script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runnable {
    /// `scripts/run.py`, run by `python3`.
    Python,
    /// `scripts/run.sh`, run by `bash`.
    Bash,
    /// `scripts/run.mjs`, run by `node`.
    Node,
}

impl Runnable {
    /// Every language, in the order of [`Runnable::NAMES`].
    pub const ALL: [Runnable; 3] = [Runnable::Python, Runnable::Bash, Runnable::Node];
    /// The names `--runnable` takes.
    pub const NAMES: [&'static str; 3] = ["python", "bash", "node"];

    /// The language a name stands for.
    pub fn from_name(name: &str) -> Option<Runnable> {
        Runnable::ALL.into_iter().find(|r| r.name() == name)
    }

    /// The name `--runnable` takes.
    pub fn name(self) -> &'static str {
        match self {
            Runnable::Python => "python",
            Runnable::Bash => "bash",
            Runnable::Node => "node",
        }
    }

    /// The script's path in the pack.
    pub fn script_path(self) -> &'static str {
        match self {
            Runnable::Python => "scripts/run.py",
            Runnable::Bash => "scripts/run.sh",
            Runnable::Node => "scripts/run.mjs",
        }
    }

    /// How to run the script by hand, from the pack's folder.
    fn by_hand(self) -> &'static str {
        match self {
            Runnable::Python => "python3 scripts/run.py",
            Runnable::Bash => "bash scripts/run.sh",
            Runnable::Node => "node scripts/run.mjs",
        }
    }

    /// The script's text.
    fn script(self, name: &str) -> String {
        let template = match self {
            Runnable::Python => PYTHON,
            Runnable::Bash => BASH,
            Runnable::Node => NODE,
        };
        template.replace("{name}", name)
    }
}

impl fmt::Display for Runnable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

const PYTHON: &str = r#"#!/usr/bin/env python3
"""{name}: reads its parameters (a JSON object, schema.json) from the first argument and
prints the unified result {"ok", "data", "error"}; exit 0 exactly when ok is true."""

import json
import sys


def failure(code, message):
    return {"ok": False, "data": None, "error": {"code": code, "message": message}}


def main(argv):
    try:
        params = json.loads(argv[1]) if len(argv) > 1 else {}
    except json.JSONDecodeError as e:
        return failure("INVALID_PARAMS", "the parameters are not JSON: %s" % e)
    if not isinstance(params, dict):
        return failure("INVALID_PARAMS", "the parameters must be a JSON object")
    text = params.get("text")
    if not isinstance(text, str) or not text:
        return failure("MISSING_TEXT", "`text` must be a non-empty string")
    # Replace this with what the skill does.
    return {"ok": True, "data": {"text": text, "length": len(text)}, "error": None}


if __name__ == "__main__":
    result = main(sys.argv)
    print(json.dumps(result, ensure_ascii=False))
    sys.exit(0 if result["ok"] else 1)
"#;

const BASH: &str = r#"#!/usr/bin/env bash
# {name}: reads its parameters (a JSON object, schema.json) from the first argument and prints
# the unified result {"ok", "data", "error"}; exit 0 exactly when ok is true. `skillbake run`
# checks the parameters against schema.json before the script starts, so "$1" is a JSON object.
set -euo pipefail

params="${1:-}"
if [ -z "$params" ]; then
  printf '%s\n' '{"ok": false, "data": null, "error": {"code": "INVALID_PARAMS", "message": "no parameters given"}}'
  exit 1
fi
# Replace this with what the skill does; it echoes the parameters back.
printf '{"ok": true, "data": {"params": %s}, "error": null}\n' "$params"
"#;

const NODE: &str = r#"#!/usr/bin/env node
// {name}: reads its parameters (a JSON object, schema.json) from the first argument and prints
// the unified result {"ok", "data", "error"}; exit 0 exactly when ok is true.

function failure(code, message) {
  return { ok: false, data: null, error: { code, message } };
}

function main(arg) {
  let params;
  try {
    params = arg === undefined ? {} : JSON.parse(arg);
  } catch (e) {
    return failure("INVALID_PARAMS", `the parameters are not JSON: ${e.message}`);
  }
  if (params === null || typeof params !== "object" || Array.isArray(params)) {
    return failure("INVALID_PARAMS", "the parameters must be a JSON object");
  }
  const { text } = params;
  if (typeof text !== "string" || text.length === 0) {
    return failure("MISSING_TEXT", "`text` must be a non-empty string");
  }
  // Replace this with what the skill does.
  return { ok: true, data: { text, length: [...text].length }, error: null };
}

const result = main(process.argv[2]);
console.log(JSON.stringify(result));
process.exitCode = result.ok ? 0 : 1;
"#;

/// A pack to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scaffold {
    /// The skill's name, which is also its folder's.
    pub name: String,
    /// The `description`; a placeholder sentence when `None`.
    pub description: Option<String>,
    /// The script's language, for a runnable pack.
    pub runnable: Option<Runnable>,
}

/// Why [`Scaffold::write`] created nothing.
#[derive(Debug)]
#[non_exhaustive]
pub enum ScaffoldError {
    /// The pack would not pass the check (an invalid name, a description too long, ...); the
    /// report holds every diagnostic, with paths under the folder it would have had.
    Invalid(Box<Report>),
    /// Something is already at the pack's path.
    Exists(PathBuf),
    /// A folder or file could not be created (whatever was created is removed again).
    Io(PathBuf, std::io::Error),
}

impl fmt::Display for ScaffoldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScaffoldError::Invalid(report) => {
                f.write_str(&crate::report::human::render(report, false))?;
                f.write_str("the new pack would not pass `skillbake check`; nothing was created")
            }
            ScaffoldError::Exists(p) => write!(
                f,
                "`{}` already exists; choose another name or remove it first",
                p.display()
            ),
            ScaffoldError::Io(p, e) => write!(f, "cannot create `{}`: {e}", p.display()),
        }
    }
}

impl std::error::Error for ScaffoldError {}

/// A YAML double-quoted scalar (JSON's string escapes are valid YAML).
fn yaml_quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| String::from("\"\""))
}

/// The name as a YAML value: plain when it is a valid name, else quoted, so that whatever it
/// holds is read back as written and reported by the name rules rather than by YAML's.
fn yaml_name(name: &str) -> String {
    let plain = name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if plain {
        name.to_string()
    } else {
        yaml_quote(name)
    }
}

impl Scaffold {
    /// An instructions-only pack named `name` with the placeholder description.
    pub fn new(name: impl Into<String>) -> Scaffold {
        Scaffold {
            name: name.into(),
            description: None,
            runnable: None,
        }
    }

    /// The pack's files: `/`-separated paths and their text, sorted by path.
    pub fn files(&self) -> Vec<(String, String)> {
        let name = &self.name;
        let description = self.description.clone().unwrap_or_else(|| match self.runnable {
            Some(_) => format!(
                "Describe what {name} does and when an agent should run it; it returns a unified {{ok, data, error}} result."
            ),
            None => format!(
                "Describe what {name} does and when an agent should use it (one or two sentences)."
            ),
        });
        let mut head = format!(
            "---\nname: {}\ndescription: {}\nversion: \"0.1.0\"\n",
            yaml_name(name),
            yaml_quote(&description)
        );
        let mut files = Vec::new();
        let body = match self.runnable {
            None => format!(
                "# {name}\n\n## When to use\n\nDescribe the requests this skill answers.\n\n## Steps\n\n1. First step the agent takes.\n2. Next step; reference files of this pack by relative path, e.g. `references/guide.md`.\n"
            ),
            Some(r) => {
                head.push_str(&format!("entrypoint: {}\n", r.script_path()));
                files.push((r.script_path().to_string(), r.script(name)));
                files.push(("schema.json".to_string(), schema(name)));
                format!(
                    "# {name}\n\n## When to use\n\nDescribe the requests this skill answers.\n\n## How to call\n\nThe parameters are defined in `schema.json`: `text` (required), the text to work on.\n\n```bash\nskillbake run {name} --params '{{\"text\": \"hello\"}}'\n{} '{{\"text\": \"hello\"}}'\n```\n\n## Result\n\nOne JSON object on stdout, exit code 0 when `ok` is true:\n\n```json\n{{\"ok\": true, \"data\": {{}}, \"error\": null}}\n```\n\nOn failure `data` is null and `error` is `{{\"code\": \"...\", \"message\": \"...\"}}`.\n",
                    r.by_hand()
                )
            }
        };
        head.push_str("---\n\n");
        head.push_str(&body);
        files.push(("SKILL.md".to_string(), head));
        files.sort();
        files
    }

    /// Checks the pack in memory, as it would be checked under the skills folder `dir` (whose
    /// `skillbake.toml` applies, when it has one); paths in the report are under `dir`'s name
    /// for it (`skills/NAME/SKILL.md`).
    pub fn check(&self, dir: &Path) -> Report {
        let files = self
            .files()
            .into_iter()
            .map(|(p, t)| (p, t.into_bytes()))
            .collect();
        let mut report = check_files(dir, &CheckOptions::default(), &self.name, files).report;
        let prefix = dir.join(&self.name).to_string_lossy().replace('\\', "/");
        report.prefix_paths(&prefix);
        report
    }

    /// Creates the pack in `dir/NAME` (and `dir` when missing) after checking it, and returns
    /// the pack's folder. Nothing is written when the check reports anything or the folder
    /// exists; a failure half-way removes what was created.
    pub fn write(&self, dir: &Path) -> Result<PathBuf, ScaffoldError> {
        if dir.exists() && !dir.is_dir() {
            let e = std::io::Error::new(std::io::ErrorKind::AlreadyExists, "it is not a folder");
            return Err(ScaffoldError::Io(dir.to_path_buf(), e));
        }
        let report = self.check(dir);
        if !report.diagnostics.is_empty() {
            return Err(ScaffoldError::Invalid(Box::new(report)));
        }
        let pack = dir.join(&self.name);
        if pack.symlink_metadata().is_ok() {
            return Err(ScaffoldError::Exists(pack));
        }
        std::fs::create_dir_all(dir).map_err(|e| ScaffoldError::Io(dir.to_path_buf(), e))?;
        // `create_dir`, not `create_dir_all`: a folder that appeared meanwhile is not reused.
        std::fs::create_dir(&pack).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => ScaffoldError::Exists(pack.clone()),
            _ => ScaffoldError::Io(pack.clone(), e),
        })?;
        if let Err(e) = self.write_files(&pack) {
            let _ = std::fs::remove_dir_all(&pack);
            return Err(e);
        }
        Ok(pack)
    }

    fn write_files(&self, pack: &Path) -> Result<(), ScaffoldError> {
        for (rel, text) in self.files() {
            let path = pack.join(&rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| ScaffoldError::Io(parent.to_path_buf(), e))?;
            }
            std::fs::write(&path, text).map_err(|e| ScaffoldError::Io(path.clone(), e))?;
            if rel.starts_with("scripts/") {
                make_executable(&path).map_err(|e| ScaffoldError::Io(path.clone(), e))?;
            }
        }
        Ok(())
    }
}

/// The parameters' schema: one required string, `text`.
fn schema(name: &str) -> String {
    let schema = serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": format!("{name} parameters"),
        "type": "object",
        "properties": {
            "text": {
                "type": "string",
                "minLength": 1,
                "description": "The text to work on."
            }
        },
        "required": ["text"],
        "additionalProperties": false
    });
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(unix)]
fn make_executable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut perms = std::fs::metadata(path)?.permissions();
    perms.set_mode(perms.mode() | 0o111);
    std::fs::set_permissions(path, perms)
}

#[cfg(not(unix))]
fn make_executable(_: &Path) -> std::io::Result<()> {
    Ok(())
}
