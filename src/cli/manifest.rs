//! `skillbake manifest` and `skillbake verify`: the MCP Skills extension's manifest of every
//! embedded skill (what `skills/list` serves, digests computed when the binary was built), its
//! signature (`--signed`, when the build had a signing key), and the checks of a materialised
//! copy, a signed manifest file or another skillbake binary against it.
//!
//! A skill's files sit under its skill path, the URI without `skill://`: `send-email/SKILL.md`,
//! `v1.0.0/send-email/scripts/send_email.py`. The text manifest is `sha256sum`'s format, so
//! `sha256sum -c` checks a copy too (it skips the `#` lines of a signed one).
//!
//! The signed manifest lists every embedded file (`skillbake_format::manifest`); the signature
//! covers `skillbake signed manifest v1\n` followed by those lines (`skillbake_build::sign`).

use super::output::write_stdout;
use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use sha2::Digest as _;
use skillbake_build::sign::{PublicKey, SecretKey, SignError, SignedManifest};
use skillbake_cli::BUNDLED;
use skillbake_format::manifest as format;
use skillbake_mcp::{Server, SkillEntry, URI_PREFIX};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Every entry `skills/list` serves, every page.
fn entries() -> Result<Vec<SkillEntry>> {
    let server = Server::new(&BUNDLED).context("the embedded registry is inconsistent")?;
    let (mut all, mut cursor) = (Vec::new(), None::<String>);
    for _ in 0..=BUNDLED.all_versions().len() {
        let page = server
            .skills_page(cursor.as_deref())
            .map_err(anyhow::Error::msg)?;
        all.extend(page.skills);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(all),
        }
    }
    bail!("skills/list pages never end")
}

/// The path of a file's URI below the materialised folder: the URI without `skill://`,
/// percent-decoded.
fn relative(uri: &str) -> Result<String> {
    let rest = uri.strip_prefix(URI_PREFIX).unwrap_or(uri);
    skillbake_format::percent::decode(rest).with_context(|| format!("{uri} is not a URI"))
}

/// Every file of every entry: relative path → (digest hex, size).
fn files(entries: &[SkillEntry]) -> Result<BTreeMap<String, (String, u64)>> {
    let mut out = BTreeMap::new();
    for entry in entries {
        for r in &entry.resources {
            let hex = r.digest.strip_prefix("sha256:").unwrap_or(&r.digest);
            out.insert(relative(&r.uri)?, (hex.to_string(), r.size));
        }
    }
    Ok(out)
}

/// The signed manifest of this binary: every file of every embedded pack (all versions) with
/// the SHA-256 the build computed, and the signature the build embedded, if any.
fn embedded() -> Result<SignedManifest> {
    let mut files = Vec::new();
    let digests: Vec<(String, [u8; 32])> = BUNDLED
        .all_versions()
        .flat_map(|s| {
            s.files()
                .map(|f| {
                    let path = format::skill_path(s.name(), s.version(), s.is_default(), f.path());
                    (path, f.sha256())
                })
                .collect::<Vec<_>>()
        })
        .collect();
    files.extend(digests.iter().map(|(p, d)| (p.clone(), d)));
    let manifest = format::text(files);
    let Some(sig) = BUNDLED.signature() else {
        return Ok(SignedManifest {
            manifest,
            key: None,
            signature: None,
        });
    };
    let key = PublicKey::parse(sig.public_key).context("the embedded signing key is malformed")?;
    let signature = sig
        .signature
        .strip_prefix(format::ED25519)
        .and_then(format::unhex::<64>)
        .context("the embedded signature is malformed")?;
    Ok(SignedManifest {
        manifest,
        key: Some(key),
        signature: Some(signature),
    })
}

/// `skillbake manifest [--format text|json] [--signed]`.
pub fn run(format: &str, signed: bool) -> Result<ExitCode> {
    if signed {
        if format == "json" {
            bail!("--signed prints the text manifest with its signature; drop --format json");
        }
        let m = embedded()?;
        if m.signature.is_none() {
            bail!("this binary was built without a signing key, so its manifest is not signed: build it with SKILLBAKE_SIGNING_KEY set (or `Config::sign_with_key_file` in build.rs)");
        }
        write_stdout(m.render().as_bytes());
        return Ok(ExitCode::SUCCESS);
    }
    let entries = entries()?;
    let out = if format == "json" {
        let all: Vec<Value> = entries
            .iter()
            .map(|e| {
                json!({
                    "uri": e.uri,
                    "frontmatter": e.frontmatter,
                    "resources": e.resources.iter().map(|r| json!({
                        "uri": r.uri, "digest": r.digest, "size": r.size,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        let mut s = serde_json::to_string_pretty(&all)?;
        s.push('\n');
        s
    } else {
        let mut s = String::new();
        for (path, (hex, _)) in files(&entries)? {
            s.push_str(&format!("{hex}  {path}\n"));
        }
        s
    };
    write_stdout(out.as_bytes());
    Ok(ExitCode::SUCCESS)
}

/// Every regular file under `dir`, relative and `/`-separated, in sorted order; symbolic links
/// and other entries are named as they are (they are never a file of a skill).
fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Option<Vec<u8>>>) -> Result<()> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("cannot read {}", dir.display()))?;
    names.sort_by_key(|e| e.file_name());
    for entry in names {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            out.insert(format!("{prefix}{}", name.to_string_lossy()), None);
            continue;
        };
        let path = format!("{prefix}{name}");
        let kind = entry
            .file_type()
            .with_context(|| format!("cannot read {}", entry.path().display()))?;
        if kind.is_dir() {
            walk(&entry.path(), &format!("{path}/"), out)?;
        } else if kind.is_file() {
            let bytes = std::fs::read(entry.path())
                .with_context(|| format!("cannot read {}", entry.path().display()))?;
            out.insert(path, Some(bytes));
        } else {
            out.insert(path, None);
        }
    }
    Ok(())
}

/// A public key given on the command line: a file holding one, or the key itself.
fn public_key(arg: &str) -> Result<PublicKey> {
    let path = Path::new(arg);
    let text = if path.is_file() {
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?
    } else {
        arg.to_string()
    };
    PublicKey::parse(&text).with_context(|| format!("--key {arg}"))
}

/// How long another binary may take to print its manifest.
const OTHER_BINARY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// The signed manifest `file` holds, or that it prints with `manifest --signed` when it is an
/// executable (a skillbake binary).
fn signed_manifest_of(file: &Path) -> Result<SignedManifest> {
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let text = std::str::from_utf8(&bytes).ok();
    let looks_signed = text.is_some_and(|t| t.starts_with(format::HEADER));
    if let (true, Some(text)) = (looks_signed, text) {
        return SignedManifest::parse(text)
            .with_context(|| format!("{} is not a signed manifest", file.display()));
    }
    if !is_executable(file) {
        bail!(
            "{} is neither a signed manifest (`skillbake manifest --signed` writes one) nor an executable",
            file.display()
        );
    }
    let out = run_other(file)?;
    let text = String::from_utf8(out)
        .with_context(|| format!("`{} manifest --signed` printed no text", file.display()))?;
    SignedManifest::parse(&text).with_context(|| {
        format!(
            "`{} manifest --signed` printed no signed manifest",
            file.display()
        )
    })
}

#[cfg(unix)]
fn is_executable(file: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(file).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(file: &Path) -> bool {
    file.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("exe"))
}

/// Runs `binary manifest --signed` (stdin closed, at most [`OTHER_BINARY_TIMEOUT`]) and returns
/// what it printed; it must exit 0.
fn run_other(binary: &Path) -> Result<Vec<u8>> {
    use std::io::Read as _;
    use std::process::{Command, Stdio};
    // A bare file name would be looked up on `PATH`: run the file that was named.
    let program = std::fs::canonicalize(binary)
        .with_context(|| format!("cannot run {}", binary.display()))?;
    let mut child = Command::new(program)
        .args(["manifest", "--signed"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {}", binary.display()))?;
    let mut stdout = child.stdout.take().context("no stdout")?;
    let mut stderr = child.stderr.take().context("no stderr")?;
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.read_to_end(&mut out);
        out
    });
    let errors = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stderr.read_to_end(&mut out);
        out
    });
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() > OTHER_BINARY_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "`{} manifest --signed` did not finish within {} s",
                binary.display(),
                OTHER_BINARY_TIMEOUT.as_secs()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let out = reader.join().unwrap_or_default();
    let err = errors.join().unwrap_or_default();
    if !status.success() {
        bail!(
            "`{} manifest --signed` failed ({status}): {}",
            binary.display(),
            String::from_utf8_lossy(&err).trim()
        );
    }
    Ok(out)
}

/// `skillbake verify [--key KEY] [--manifest FILE] PATH`.
pub fn verify_command(path: &Path, key: Option<&str>, manifest: Option<&Path>) -> Result<ExitCode> {
    let key = key.map(public_key).transpose()?;
    if path.is_dir() {
        let signed = match manifest {
            Some(file) => Some(signed_manifest_of(file)?),
            None if key.is_some() => Some(embedded()?),
            None => None,
        };
        if let (Some(m), Some(k)) = (&signed, &key) {
            if let Err(e) = m.verify(k) {
                return refuse(manifest.unwrap_or(Path::new("this binary's manifest")), &e);
            }
        }
        let expected = match (manifest, &signed) {
            (Some(_), Some(m)) => lines(&m.manifest),
            _ => files(&entries()?)?
                .into_iter()
                .map(|(p, (h, s))| (p, (h, Some(s))))
                .collect(),
        };
        return verify(path, &expected);
    }
    if manifest.is_some() {
        bail!(
            "--manifest goes with a folder to check; {} is not one",
            path.display()
        );
    }
    if !path.exists() {
        bail!("{} is not a folder", path.display());
    }
    let Some(key) = key else {
        bail!("{} is not a folder; to check the signature of a manifest or a binary, give the public key with --key KEY (the `.pub` file `skillbake keygen` wrote, or `ed25519:HEX`)", path.display());
    };
    let m = signed_manifest_of(path)?;
    match m.verify(&key) {
        Ok(()) => {
            let n = m.manifest.lines().count();
            write_stdout(
                format!(
                    "{}: signature good: {n} files signed by {key}\n",
                    path.display()
                )
                .as_bytes(),
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => refuse(path, &e),
    }
}

/// Says why `what` was refused; exit 1.
fn refuse(what: &Path, e: &SignError) -> Result<ExitCode> {
    write_stdout(format!("{}: refused: {e}\n", what.display()).as_bytes());
    Ok(ExitCode::from(1))
}

/// The lines of a manifest: path → (digest hex, no size).
fn lines(manifest: &str) -> BTreeMap<String, (String, Option<u64>)> {
    manifest
        .lines()
        .filter_map(|l| l.split_once("  "))
        .map(|(h, p)| (p.to_string(), (h.to_string(), None)))
        .collect()
}

/// `skillbake keygen`: a new key pair, the secret in `PREFIX.key` (PKCS#8 PEM, owner-only), the
/// public key in `PREFIX.pub`. Refuses to overwrite either.
pub fn keygen(prefix: &Path) -> Result<ExitCode> {
    let secret_path = PathBuf::from(format!("{}.key", prefix.display()));
    let public_path = PathBuf::from(format!("{}.pub", prefix.display()));
    for p in [&secret_path, &public_path] {
        if p.exists() {
            bail!("{} exists already: keygen never overwrites a key (move it away, or give another --out)", p.display());
        }
    }
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed)
        .map_err(|e| anyhow::anyhow!("no randomness from the system: {e}"))?;
    let key = SecretKey::from_seed(seed);
    seed.fill(0);
    let pem = key.to_pem()?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    {
        use std::io::Write as _;
        let mut f = options
            .open(&secret_path)
            .with_context(|| format!("cannot create {}", secret_path.display()))?;
        f.write_all(pem.as_bytes())
            .with_context(|| format!("cannot write {}", secret_path.display()))?;
    }
    let public = key.public();
    std::fs::write(&public_path, format!("{public}\n"))
        .with_context(|| format!("cannot write {}", public_path.display()))?;
    write_stdout(
        format!(
            "wrote {} (the secret key: keep it out of the repository; in CI, store its text in the {} secret)\nwrote {} (the public key, to publish): {public}\n",
            secret_path.display(),
            skillbake_build::sign::SIGNING_KEY_ENV,
            public_path.display()
        )
        .as_bytes(),
    );
    Ok(ExitCode::SUCCESS)
}

/// `skillbake verify DIR`: every file of `expected` must be in `DIR` with its digest (and size,
/// when known), and nothing else may be; every difference is named. Exit 0 when the copy is
/// exact, 1 otherwise.
fn verify(dir: &Path, expected: &BTreeMap<String, (String, Option<u64>)>) -> Result<ExitCode> {
    let mut found = BTreeMap::new();
    walk(dir, "", &mut found)?;
    let mut problems = Vec::new();
    for (path, (hex, size)) in expected {
        match found.get(path) {
            None => problems.push(format!("missing: {path}")),
            Some(None) => problems.push(format!("not a regular file: {path}")),
            Some(Some(bytes)) if size.is_some_and(|s| bytes.len() as u64 != s) => {
                problems.push(format!(
                    "differs: {path} ({} bytes, the manifest says {})",
                    bytes.len(),
                    size.unwrap_or_default()
                ))
            }
            Some(Some(bytes)) => {
                let got: String = sha2::Sha256::digest(bytes)
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                if &got != hex {
                    problems.push(format!(
                        "differs: {path} (sha256:{got}, the manifest says sha256:{hex})"
                    ));
                }
            }
        }
    }
    for path in found.keys().filter(|p| !expected.contains_key(*p)) {
        problems.push(format!("extra: {path}"));
    }
    problems.sort_by(|a, b| {
        a.split_once(": ")
            .map(|x| x.1)
            .cmp(&b.split_once(": ").map(|x| x.1))
    });
    let mut out = String::new();
    for p in &problems {
        out.push_str(p);
        out.push('\n');
    }
    if problems.is_empty() {
        out.push_str(&format!(
            "{}: all {} files of the manifest, nothing else\n",
            dir.display(),
            expected.len()
        ));
    } else {
        out.push_str(&format!(
            "{}: {} problems against the {} files of the manifest\n",
            dir.display(),
            problems.len(),
            expected.len()
        ));
    }
    write_stdout(out.as_bytes());
    Ok(if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
