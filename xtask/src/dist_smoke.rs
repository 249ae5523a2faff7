//! The smoke tests of `cargo xtask dist` ([`crate::dist`]), each on what a user installs:
//!
//! * the wheel, `pip install`ed into a fresh venv (no index);
//! * the npm tarballs, installed into a fresh project with `npm install --offline` (so nothing
//!   is fetched) and run through `npx skillbake`;
//!
//! both then answer `--version`, pass `check` on the bundled packs, fail a broken pack with
//! exit 1 and the rendered diagnostic, and answer an MCP `initialize` from `serve` over stdio;
//!
//! * the pre-commit hook, run by `pre-commit try-repo` on this repository in a scratch git
//!   repository: passes a good pack, fails a broken one with the diagnostic (the hook's
//!   environment installs the shim and the wheel from `target/dist`, no index);
//! * actionlint over every workflow under `.github/workflows` (one of which uses the action of
//!   this repository, `uses: ./`, so actionlint checks it against `action.yml`'s inputs).

use crate::dist::{shown, Built, Tools};
use crate::mcp_check::{npm, npx};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The bound on one command's run (generous: a busy machine, a cold pip cache).
const TIMEOUT: Duration = Duration::from_secs(300);

/// A pack with a YAML mistake users make: an unquoted `: ` in a value.
const BROKEN_SKILL: &str =
    "---\nname: broken-pack\ndescription: Summarise a file: the first lines\n---\n\nRead the file.\n";
/// What the diagnostic for [`BROKEN_SKILL`] must show.
const BROKEN_DIAGNOSTIC: [&str; 3] = [
    "error[yaml-syntax]",
    "broken-pack/SKILL.md:3:30",
    "must be quoted",
];
/// A pack that checks clean.
const GOOD_SKILL: &str = "---\nname: good-pack\ndescription: Summarise a text file in three lines. Use when asked for the gist of a file.\n---\n\n# Good pack\n\nRead the file and write three lines: what it is, what it says, what to do next.\n";

/// Runs every smoke test; the scratch folders are under `target/dist-smoke`.
pub(crate) fn run(root: &Path, target: &Path, tools: &Tools, built: &Built) -> Result<(), String> {
    let smoke = target.join("dist-smoke");
    if smoke.exists() {
        std::fs::remove_dir_all(&smoke).map_err(|e| format!("{}: {e}", smoke.display()))?;
    }
    let broken = smoke.join("broken");
    write(&broken.join("broken-pack/SKILL.md"), BROKEN_SKILL)?;
    let skills = root.join("skills");

    eprintln!("\n==> smoke test: the wheel in a fresh venv");
    let venv = smoke.join("venv");
    run_ok(
        Command::new(tools.exe("python"))
            .args(["-m", "venv"])
            .arg(&venv),
    )?;
    let bin = venv.join(if cfg!(windows) { "Scripts" } else { "bin" });
    let start = Instant::now();
    run_ok(
        Command::new(bin.join(format!("pip{}", std::env::consts::EXE_SUFFIX)))
            .args([
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-index",
            ])
            .arg(&built.wheel),
    )?;
    eprintln!(
        "pip install of the wheel: {:.1} s",
        start.elapsed().as_secs_f64()
    );
    let exe = bin.join(format!("skillbake{}", std::env::consts::EXE_SUFFIX));
    check_command(&|| Command::new(&exe), &built.version, &skills, &broken)?;

    eprintln!("\n==> smoke test: the npm tarballs through npx");
    let project = smoke.join("npm-project");
    let mut dependencies = serde_json::Map::new();
    for tarball in [&built.launcher, &built.platform] {
        let name = package_name(tarball, &built.version)?;
        dependencies.insert(name, format!("file:{}", tarball.display()).into());
    }
    let manifest = json!({
        "name": "skillbake-dist-smoke",
        "private": true,
        "dependencies": dependencies,
    });
    write(&project.join("package.json"), &format!("{manifest:#}\n"))?;
    let start = Instant::now();
    run_ok(Command::new(npm()).current_dir(&project).args([
        "install",
        "--offline",
        "--no-audit",
        "--no-fund",
    ]))?;
    eprintln!(
        "npm install of the tarballs: {:.1} s",
        start.elapsed().as_secs_f64()
    );
    let npx_cmd = || {
        let mut c = Command::new(npx());
        c.current_dir(&project)
            .args(["--offline", "--no", "--", "skillbake"]);
        c
    };
    check_command(&npx_cmd, &built.version, &skills, &broken)?;

    pre_commit(root, &smoke, tools, built)?;
    actionlint(root, &smoke, tools)
}

/// The npm name of a tarball `npm pack` named (`skillbake-0.1.0.tgz`: `skillbake`;
/// `skillbake-cli-linux-x64-gnu-0.1.0.tgz`: `@skillbake/cli-linux-x64-gnu`).
fn package_name(tarball: &Path, version: &str) -> Result<String, String> {
    let file = tarball.file_name().unwrap_or_default().to_string_lossy();
    let stem = file
        .strip_suffix(&format!("-{version}.tgz"))
        .ok_or_else(|| format!("unexpected npm tarball name {file}"))?;
    Ok(match stem.strip_prefix("skillbake-") {
        Some(scoped) => format!("@skillbake/{scoped}"),
        None => stem.to_string(),
    })
}

/// `--version`, `check` on the bundled packs and on a broken one, `serve` over stdio: the
/// command that `cmd` starts must answer each as the binary does.
fn check_command(
    cmd: &dyn Fn() -> Command,
    version: &str,
    skills: &Path,
    broken: &Path,
) -> Result<(), String> {
    let out = output(cmd().arg("--version"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || stdout.trim() != format!("skillbake {version}") {
        return Err(format!(
            "skillbake --version answered {stdout:?} ({})",
            out.status
        ));
    }
    eprintln!("skillbake --version: {}", stdout.trim());

    let out = output(cmd().args(["check", "--color", "never"]).arg(skills))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.code() != Some(0) {
        return Err(format!("skillbake check skills: {}\n{text}", out.status));
    }
    eprintln!("skillbake check skills: exit 0: {}", last_line(&text));

    let out = output(cmd().args(["check", "--color", "never"]).arg(broken))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.code() != Some(1) || BROKEN_DIAGNOSTIC.iter().any(|s| !text.contains(s)) {
        return Err(format!(
            "skillbake check on a broken pack: {} (expected exit 1 and {BROKEN_DIAGNOSTIC:?}):\n{text}",
            out.status
        ));
    }
    eprintln!("skillbake check broken: exit 1:\n{}", indent(&text));

    let answer = serve_initialize(cmd)?;
    eprintln!("skillbake serve: initialize answered by {answer}");
    Ok(())
}

/// Sends MCP `initialize` to `serve` over stdio and returns the server's name and version.
fn serve_initialize(cmd: &dyn Fn() -> Command) -> Result<String, String> {
    let mut child = cmd()
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("skillbake serve: cannot start: {e}"))?;
    let request = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "skillbake-dist-smoke", "version": "1"}
        }
    });
    let stdout = child.stdout.take().ok_or("skillbake serve: no stdout")?;
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let sent = child
        .stdin
        .as_mut()
        .ok_or("skillbake serve: no stdin")
        .and_then(|stdin| writeln!(stdin, "{request}").map_err(|_| "skillbake serve: write"));
    let line = sent.map_err(str::to_string).and_then(|()| {
        rx.recv_timeout(TIMEOUT)
            .map_err(|_| format!("skillbake serve: no answer within {}s", TIMEOUT.as_secs()))
    });
    // Closing stdin ends the session; the server exits.
    drop(child.stdin.take());
    let exited = wait_bounded(&mut child);
    let _ = reader.join();
    let line = line?;
    exited?;
    let answer: Value = serde_json::from_str(&line)
        .map_err(|e| format!("skillbake serve answered {line:?}: {e}"))?;
    let info = &answer["result"]["serverInfo"];
    match (
        info["name"].as_str(),
        answer["result"]["protocolVersion"].as_str(),
    ) {
        (Some(name), Some(protocol)) if answer["id"] == 1 => Ok(format!(
            "{name} {} (protocol {protocol})",
            info["version"].as_str().unwrap_or("?")
        )),
        _ => Err(format!("skillbake serve: not an initialize result: {line}")),
    }
}

/// Waits for `child` to exit, killing it after [`TIMEOUT`].
fn wait_bounded(child: &mut std::process::Child) -> Result<(), String> {
    let start = Instant::now();
    loop {
        if child.try_wait().map_err(|e| e.to_string())?.is_some() {
            return Ok(());
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err("skillbake serve did not exit when its stdin closed".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `pre-commit try-repo` of this repository's hook in a scratch git repository: a good pack
/// passes, then a broken one fails with its diagnostic.
fn pre_commit(root: &Path, smoke: &Path, tools: &Tools, built: &Built) -> Result<(), String> {
    eprintln!("\n==> smoke test: pre-commit try-repo (the skillbake-check hook)");
    let repo = smoke.join("pre-commit-repo");
    write(&repo.join("skills/good-pack/SKILL.md"), GOOD_SKILL)?;
    let git = |args: &[&str]| {
        run_ok(
            Command::new("git")
                .current_dir(&repo)
                .args([
                    "-c",
                    "user.name=dist",
                    "-c",
                    "user.email=dist@example.invalid",
                ])
                .args(args),
        )
    };
    git(&["init", "--quiet"])?;
    git(&["add", "."])?;
    git(&["commit", "--quiet", "-m", "good pack"])?;
    let dist = built.wheel.parent().unwrap_or(root);
    // pip reads a list from the environment separated by spaces.
    let links = format!("{} {}", dist.display(), tools.wheelhouse.display());
    let try_repo = || {
        let mut c = Command::new(tools.exe("pre-commit"));
        c.current_dir(&repo)
            .args(["try-repo", "--color", "never"])
            .arg(root)
            .args(["skillbake-check", "--all-files"])
            .env("PRE_COMMIT_HOME", smoke.join("pre-commit-home"))
            .env("PIP_NO_INDEX", "1")
            .env("PIP_FIND_LINKS", &links)
            .env_remove("PIP_INDEX_URL");
        c
    };
    let start = Instant::now();
    let out = output(&mut try_repo())?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    if !out.status.success() || !text.contains("skillbake check") || !text.contains("Passed") {
        return Err(format!(
            "pre-commit try-repo on a good pack: {}\n{text}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    eprintln!(
        "good pack: passed ({:.1} s with the hook's environment install)",
        start.elapsed().as_secs_f64()
    );
    write(&repo.join("skills/broken-pack/SKILL.md"), BROKEN_SKILL)?;
    git(&["add", "."])?;
    let out = output(&mut try_repo())?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    if out.status.code() != Some(1)
        || !text.contains("Failed")
        || BROKEN_DIAGNOSTIC.iter().any(|s| !text.contains(s))
    {
        return Err(format!(
            "pre-commit try-repo on a broken pack: {} (expected a failure with {BROKEN_DIAGNOSTIC:?})\n{text}",
            out.status
        ));
    }
    eprintln!("broken pack: failed as it should:\n{}", indent(&text));
    Ok(())
}

/// actionlint over every workflow this repository ships and every README workflow example
/// (a ```` ```yaml ```` block after a `<!-- actionlint -->` line).
fn actionlint(root: &Path, smoke: &Path, tools: &Tools) -> Result<(), String> {
    eprintln!(
        "\n==> actionlint (.github/workflows, action.yml through `uses: ./`, README examples)"
    );
    let dir = root.join(".github/workflows");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!("no workflows in {}", shown(&dir)));
    }
    let readme = root.join("README.md");
    let text =
        std::fs::read_to_string(&readme).map_err(|e| format!("{}: {e}", readme.display()))?;
    let examples = readme_examples(&text);
    if examples.is_empty() {
        return Err("README.md has no `<!-- actionlint -->` workflow example".into());
    }
    for (i, example) in examples.iter().enumerate() {
        let path = smoke.join(format!("readme-example-{}.yml", i + 1));
        write(&path, example)?;
        files.push(path);
    }
    let out = output(
        Command::new(tools.exe("actionlint"))
            .current_dir(root)
            .args(["-no-color"])
            .args(files.iter().map(|p| shown(p))),
    )?;
    if !out.status.success() {
        return Err(format!(
            "actionlint found problems:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    for f in &files {
        eprintln!("actionlint {}: clean", shown(f));
    }
    Ok(())
}

/// The ```` ```yaml ```` blocks that follow a `<!-- actionlint -->` line in `readme`.
fn readme_examples(readme: &str) -> Vec<String> {
    let mut examples = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "<!-- actionlint -->" {
            continue;
        }
        if lines.next().map(str::trim) != Some("```yaml") {
            continue;
        }
        let block: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
        examples.push(block.join("\n") + "\n");
    }
    examples
}

/// Runs `cmd` to completion within [`TIMEOUT`] with its output captured.
fn output(cmd: &mut Command) -> Result<Output, String> {
    let shown_cmd = format!("{cmd:?}");
    let owned = std::mem::replace(cmd, Command::new(""));
    crate::mcp_check::run_with_timeout(owned, TIMEOUT).map_err(|e| format!("{shown_cmd}: {e}"))
}

/// Runs `cmd`; any failure is an error with its output.
fn run_ok(cmd: &mut Command) -> Result<(), String> {
    let shown_cmd = format!("{cmd:?}");
    let out = output(cmd)?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{shown_cmd} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

fn last_line(text: &str) -> &str {
    text.trim_end().lines().last().unwrap_or_default()
}

fn indent(text: &str) -> String {
    text.trim_end()
        .lines()
        .map(|l| format!("    {l}\n"))
        .collect()
}
