//! The Python peers: DB-GPT's skill registry and `load_skill`, and `skills-ref`, installed into
//! a virtualenv; a peer that does not install or run is reported as such.

use super::packs::PackSet;
use super::process::{capture, s, write};
use super::{DBGPT_APP, PROBE, PROBE_PATH};
use crate::run as run_step;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;

pub(super) struct Peers {
    pub(super) python: Option<PathBuf>,
    pub(super) script: PathBuf,
    /// Versions of the peers, or why DB-GPT cannot be measured.
    pub(super) dbgpt: Result<serde_json::Value, String>,
    /// Why skills-ref cannot be measured, if so.
    pub(super) skills_ref: Result<(), String>,
}

pub(super) fn ensure_venv(root: &Path) -> Result<PathBuf, String> {
    let venv = root.join("target/bench-venv");
    let python = venv.join("bin/python");
    let req = root.join("benches/peers/requirements.txt");
    let pins = std::fs::read_to_string(&req).map_err(|e| format!("`{}`: {e}", req.display()))?;
    let wanted = format!("{pins}\n{DBGPT_APP}\n");
    let marker = venv.join("skillbake-bench-requirements.txt");
    if python.exists() && std::fs::read_to_string(&marker).is_ok_and(|m| m == wanted) {
        return Ok(python);
    }
    run_step(
        "python3 -m venv target/bench-venv",
        Command::new("python3")
            .args(["-m", "venv", "--clear"])
            .arg(&venv),
    )?;
    let pip = |what: &[&str]| {
        let mut c = Command::new(&python);
        c.args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(what);
        c
    };
    run_step(
        "pip install -r benches/peers/requirements.txt",
        &mut pip(&["-r", &s(&req)]),
    )?;
    run_step(
        &format!("pip install --no-deps {DBGPT_APP}"),
        &mut pip(&["--no-deps", DBGPT_APP]),
    )?;
    write(&marker, wanted.as_bytes())?;
    Ok(python)
}

impl Peers {
    pub(super) fn unavailable(why: &str) -> Peers {
        Peers {
            python: None,
            script: PathBuf::new(),
            dbgpt: Err(why.to_string()),
            skills_ref: Err(why.to_string()),
        }
    }

    /// Runs each peer once on the smallest pack set; a peer that fails is reported, not used.
    pub(super) fn probe(root: &Path, python: &Path, set: &PackSet) -> Peers {
        let mut peers = Peers {
            python: Some(python.to_path_buf()),
            script: root.join("benches/peers/dbgpt_bench.py"),
            ..Peers::unavailable("not probed")
        };
        peers.probe_all(set);
        peers
    }

    pub(super) fn probe_all(&mut self, set: &PackSet) {
        let versions = self
            .py(&["versions"])
            .and_then(|o| serde_json::from_str::<serde_json::Value>(&o).map_err(|e| e.to_string()));
        self.dbgpt = versions.and_then(|v| {
            self.py(&["load", &s(&set.dir), PROBE, PROBE_PATH])?;
            Ok(v)
        });
        self.skills_ref = self.py(&["skills-ref", &s(&set.dir)]).map(|_| ());
        if let Err(e) = &self.dbgpt {
            eprintln!("DB-GPT peer unavailable: {e}");
        }
        if let Err(e) = &self.skills_ref {
            eprintln!("skills-ref peer unavailable: {e}");
        }
    }

    pub(super) fn argv(&self, args: &[&str]) -> Vec<String> {
        let mut v = vec![
            self.python.as_deref().map(s).unwrap_or_default(),
            s(&self.script),
        ];
        v.extend(args.iter().map(|a| (*a).to_string()));
        v
    }

    pub(super) fn py(&self, args: &[&str]) -> Result<String, String> {
        capture(&self.argv(args))
    }
}
