//! `skillbake manifest` and `skillbake verify`: the MCP Skills extension's manifest of every
//! embedded skill (what `skills/list` serves, digests computed when the binary was built), and
//! the check of a materialised copy of it (what a host wrote to its cache) against it.
//!
//! A skill's files sit under its skill path, the URI without `skill://`: `send-email/SKILL.md`,
//! `v1.0.0/send-email/scripts/send_email.py`. The text manifest is `sha256sum`'s format, so
//! `sha256sum -c` checks a copy too.

use super::output::write_stdout;
use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use sha2::Digest as _;
use skillbake_cli::BUNDLED;
use skillbake_mcp::{Server, SkillEntry, URI_PREFIX};
use std::collections::BTreeMap;
use std::path::Path;
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

/// `skillbake manifest [--format text|json]`.
pub fn run(format: &str) -> Result<ExitCode> {
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

/// `skillbake verify DIR`: every file of the manifest must be in `DIR` with its size and
/// digest, and nothing else may be; every difference is named. Exit 0 when the copy is exact, 1
/// otherwise.
pub fn verify(dir: &Path) -> Result<ExitCode> {
    if !dir.is_dir() {
        bail!("{} is not a folder", dir.display());
    }
    let expected = files(&entries()?)?;
    let mut found = BTreeMap::new();
    walk(dir, "", &mut found)?;
    let mut problems = Vec::new();
    for (path, (hex, size)) in &expected {
        match found.get(path) {
            None => problems.push(format!("missing: {path}")),
            Some(None) => problems.push(format!("not a regular file: {path}")),
            Some(Some(bytes)) if bytes.len() as u64 != *size => problems.push(format!(
                "differs: {path} ({} bytes, the manifest says {size})",
                bytes.len()
            )),
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
