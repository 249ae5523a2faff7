//! `cargo xtask dist [--release]`: builds what installs `skillbake` without cargo, into
//! `target/dist/`, and checks it the way a user meets it:
//!
//! * the PyPI wheel (maturin's binary-only mode, `packaging/pypi/pyproject.toml`);
//! * the npm packages: the `skillbake` launcher (`packaging/npm/skillbake`) and the package of
//!   this platform's binary (`@skillbake/cli-<os>-<arch>[-libc]`, written by
//!   `packaging/npm/platform-package.js` from the binary inside the wheel, as the release
//!   workflow does), as `npm pack` tarballs;
//! * `SHA256SUMS` over all of them;
//!
//! then runs the smoke tests of [`crate::dist_smoke`]: the wheel in a fresh venv, the tarballs
//! through `npx`, the pre-commit hook through `pre-commit try-repo`, and actionlint over
//! `action.yml`'s use and every shipped workflow.
//!
//! Without `--release` the binary is the `dev` profile's, stripped (`maturin --profile dev
//! --strip`): the same build as `cargo build --bin skillbake`, so in CI, after `cargo xtask
//! mcp-check` built it, the wheel costs a link and a zip, where a `release` build costs many
//! minutes; the release workflow builds the optimised binary with `--release`. The tools (maturin, pre-commit, actionlint) are installed
//! from PyPI into `target/dist-tools` at the versions `packaging/dist-tools.txt` pins, once.

use crate::dist_smoke;
use crate::mcp_check::target_dir;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The build backend the pre-commit shim (`pyproject.toml` at the root) needs, put next to the
/// wheel so that the hook's environment installs with no package index.
const SHIM_BACKEND: &str = "setuptools==84.2.1";

/// The Python virtual environment of the packaging tools.
pub(crate) struct Tools {
    pub(crate) bin: PathBuf,
    /// Wheels the smoke tests install from, besides `target/dist` (no index).
    pub(crate) wheelhouse: PathBuf,
}

impl Tools {
    pub(crate) fn exe(&self, name: &str) -> PathBuf {
        self.bin
            .join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
    }
}

/// What `dist` built.
pub(crate) struct Built {
    pub(crate) version: String,
    pub(crate) wheel: PathBuf,
    pub(crate) launcher: PathBuf,
    pub(crate) platform: PathBuf,
}

/// Runs `dist`; `args` are the arguments after `dist`.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let release = match args {
        [] => false,
        [flag] if flag == "--release" => true,
        _ => return Err("usage: cargo xtask dist [--release]".into()),
    };
    let root = super::root();
    let target = target_dir(&root);
    let version = workspace_version(&root)?;
    check_pinned_versions(&root, &version)?;
    let tools = install_tools(&root, &target)?;
    let out = target.join("dist");
    if out.exists() {
        std::fs::remove_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let wheel = build_wheel(&root, &tools, release, &out)?;
    let (launcher, platform) = npm_packages(&root, &tools, &version, &wheel, &target, &out)?;
    write_checksums(&out)?;
    let built = Built {
        version,
        wheel,
        launcher,
        platform,
    };
    for file in [&built.wheel, &built.launcher, &built.platform] {
        let size = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
        eprintln!("dist: {} ({} kB)", shown(file), size.div_ceil(1000));
    }
    dist_smoke::run(&root, &target, &tools, &built)?;
    eprintln!(
        "\ndist: every package built and checked, in {}",
        shown(&out)
    );
    Ok(())
}

/// `[workspace.package] version` of the root `Cargo.toml`.
fn workspace_version(root: &Path) -> Result<String, String> {
    let path = root.join("Cargo.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut in_section = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_section = line == "[workspace.package]";
        } else if in_section {
            if let Some(v) = line.strip_prefix("version") {
                let v = v.trim_start().trim_start_matches('=').trim();
                return Ok(v.trim_matches('"').to_string());
            }
        }
    }
    Err(format!(
        "{}: no [workspace.package] version",
        path.display()
    ))
}

/// The versions written by hand in the packaging files must be the workspace's: the launcher's
/// own and its platform packages', and the pre-commit shim's and its `skillbake` pin.
fn check_pinned_versions(root: &Path, version: &str) -> Result<(), String> {
    let mut wrong = Vec::new();
    let launcher = root.join("packaging/npm/skillbake/package.json");
    let text =
        std::fs::read_to_string(&launcher).map_err(|e| format!("{}: {e}", launcher.display()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", launcher.display()))?;
    if json["version"] != version {
        wrong.push(format!("{}: \"version\"", shown(&launcher)));
    }
    let optional = json["optionalDependencies"]
        .as_object()
        .ok_or_else(|| format!("{}: no optionalDependencies", shown(&launcher)))?;
    for (name, v) in optional {
        if v != version {
            wrong.push(format!("{}: optionalDependencies {name}", shown(&launcher)));
        }
    }
    let shim = root.join("pyproject.toml");
    let text = std::fs::read_to_string(&shim).map_err(|e| format!("{}: {e}", shim.display()))?;
    if !text.contains(&format!("\nversion = \"{version}\"\n")) {
        wrong.push(format!("{}: version", shown(&shim)));
    }
    if !text.contains(&format!("\"skillbake=={version}\"")) {
        wrong.push(format!(
            "{}: the skillbake=={version} dependency",
            shown(&shim)
        ));
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the workspace version is {version}, but these say otherwise (set them to {version}):\n  {}",
            wrong.join("\n  ")
        ))
    }
}

/// Creates `target/dist-tools` with the pinned tools unless it has them already.
fn install_tools(root: &Path, target: &Path) -> Result<Tools, String> {
    let pins = root.join("packaging/dist-tools.txt");
    pinned_venv(&target.join("dist-tools"), &pins, &|tools: &Tools| {
        let house = tools.wheelhouse.display().to_string();
        let download = ["download", "--only-binary=:all:", "--no-deps", "-d", &house];
        pip(
            tools,
            &format!("pip download {SHIM_BACKEND}"),
            &[&download[..], &[SHIM_BACKEND]].concat(),
        )
    })
}

/// A Python virtual environment at `dir` with the wheels `pins` (a requirements file) lists,
/// made unless `dir` holds exactly those already (a stamp of the file); `then` runs once a new
/// one is installed, before the stamp is written.
pub(crate) fn pinned_venv(
    dir: &Path,
    pins: &Path,
    then: &dyn Fn(&Tools) -> Result<(), String>,
) -> Result<Tools, String> {
    let bin = dir.join(if cfg!(windows) { "Scripts" } else { "bin" });
    let tools = Tools {
        bin,
        wheelhouse: dir.join("wheelhouse"),
    };
    let stamp = dir.join("installed.txt");
    let wanted = std::fs::read(pins).map_err(|e| format!("{}: {e}", pins.display()))?;
    let installed = std::fs::read(&stamp).ok();
    if installed.as_deref() == Some(wanted.as_slice()) && tools.bin.is_dir() {
        return Ok(tools);
    }
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let python = if cfg!(windows) { "python" } else { "python3" };
    super::run(
        &format!("python3 -m venv {}", dir.display()),
        Command::new(python).args(["-m", "venv"]).arg(dir),
    )?;
    std::fs::create_dir_all(&tools.wheelhouse)
        .map_err(|e| format!("{}: {e}", tools.wheelhouse.display()))?;
    let pins_arg = pins.display().to_string();
    pip(
        &tools,
        &format!("pip install -r {}", pins.display()),
        &["install", "--only-binary=:all:", "-r", &pins_arg],
    )?;
    then(&tools)?;
    std::fs::write(&stamp, &wanted).map_err(|e| format!("{}: {e}", stamp.display()))?;
    Ok(tools)
}

/// `python -m pip ARGS` in the environment of `tools`, quietly.
fn pip(tools: &Tools, step: &str, args: &[&str]) -> Result<(), String> {
    super::run(
        step,
        Command::new(tools.exe("python"))
            .args(["-m", "pip", "--disable-pip-version-check", "--quiet"])
            .args(args),
    )
}

/// `maturin build` of `packaging/pypi` into `out`; returns the wheel.
fn build_wheel(root: &Path, tools: &Tools, release: bool, out: &Path) -> Result<PathBuf, String> {
    let profile = if release { "release" } else { "dev" };
    let start = Instant::now();
    super::run(
        &format!("maturin build --profile {profile} --strip (packaging/pypi)"),
        Command::new(tools.exe("maturin"))
            .current_dir(root.join("packaging/pypi"))
            .args([
                "build",
                "--locked",
                "--strip",
                "--profile",
                profile,
                "--out",
            ])
            .arg(out),
    )?;
    eprintln!(
        "dist: wheel built in {:.0} s",
        start.elapsed().as_secs_f64()
    );
    let wheels: Vec<PathBuf> = files_in(out)?
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    match wheels.as_slice() {
        [wheel] => Ok(wheel.clone()),
        other => Err(format!("maturin wrote {} wheels, expected 1", other.len())),
    }
}

/// Node's names for this platform: `process.platform`, `process.arch`, the libc (`-`: none).
fn node_platform() -> Result<(&'static str, &'static str, &'static str), String> {
    let os = match std::env::consts::OS {
        "linux" => "linux",
        "macos" => "darwin",
        "windows" => "win32",
        other => return Err(format!("no npm package layout for the OS {other}")),
    };
    let cpu = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => return Err(format!("no npm package layout for the CPU {other}")),
    };
    let libc = match (os, cfg!(target_env = "musl")) {
        ("linux", true) => "musl",
        ("linux", false) => "gnu",
        _ => "-",
    };
    Ok((os, cpu, libc))
}

/// Writes the launcher's and this platform's npm tarballs into `out`, the platform package
/// holding the binary taken out of `wheel`; returns (launcher, platform).
fn npm_packages(
    root: &Path,
    tools: &Tools,
    version: &str,
    wheel: &Path,
    target: &Path,
    out: &Path,
) -> Result<(PathBuf, PathBuf), String> {
    let stage = target.join("dist-stage");
    if stage.exists() {
        std::fs::remove_dir_all(&stage).map_err(|e| format!("{}: {e}", stage.display()))?;
    }
    let unpacked = stage.join("wheel");
    super::run(
        "unpack the wheel",
        Command::new(tools.exe("python"))
            .args(["-m", "zipfile", "-e"])
            .arg(wheel)
            .arg(&unpacked),
    )?;
    let exe = format!("skillbake{}", std::env::consts::EXE_SUFFIX);
    let data = format!("skillbake-{version}.data");
    let binary = unpacked.join(data).join("scripts").join(&exe);
    if !binary.is_file() {
        return Err(format!("the wheel has no {}", shown(&binary)));
    }
    let (os, cpu, libc) = node_platform()?;
    let platform_dir = stage.join("platform");
    super::run(
        "node packaging/npm/platform-package.js",
        Command::new("node")
            .arg(root.join("packaging/npm/platform-package.js"))
            .arg(&binary)
            .args([os, cpu, libc, version])
            .arg(&platform_dir),
    )?;
    let platform = npm_pack(&platform_dir, out)?;
    let launcher = npm_pack(&root.join("packaging/npm/skillbake"), out)?;
    Ok((launcher, platform))
}

/// `npm pack DIR` into `out`; returns the tarball.
fn npm_pack(dir: &Path, out: &Path) -> Result<PathBuf, String> {
    let output = Command::new(crate::mcp_check::npm())
        .arg("pack")
        .arg(dir)
        .arg("--pack-destination")
        .arg(out)
        .output()
        .map_err(|e| format!("npm pack: cannot start npm: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "npm pack {} failed: {}",
            shown(dir),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let name = String::from_utf8_lossy(&output.stdout).trim().to_string();
    let tarball = out.join(name.lines().last().unwrap_or_default());
    if !tarball.is_file() {
        return Err(format!(
            "npm pack {} wrote no {}",
            shown(dir),
            shown(&tarball)
        ));
    }
    eprintln!("dist: npm pack {} -> {}", shown(dir), shown(&tarball));
    Ok(tarball)
}

/// `SHA256SUMS` in `out`: one `<hex>  <file>` line per file, sorted by name.
fn write_checksums(out: &Path) -> Result<(), String> {
    use sha2::{Digest, Sha256};
    let mut lines = String::new();
    for file in files_in(out)? {
        let bytes = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let hex: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        lines.push_str(&format!("{hex}  {name}\n"));
    }
    let path = out.join("SHA256SUMS");
    std::fs::write(&path, lines).map_err(|e| format!("{}: {e}", path.display()))
}

/// The files directly in `dir`, sorted.
fn files_in(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// `path` relative to the workspace root when it is under it.
pub(crate) fn shown(path: &Path) -> String {
    let root = super::root();
    path.strip_prefix(&root)
        .unwrap_or(path)
        .display()
        .to_string()
}
