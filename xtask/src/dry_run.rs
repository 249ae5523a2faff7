//! README's dry-run sample, generated from a real `skillbake run --dry-run` (for `cargo xtask
//! codegen`): the debug binary runs the bundled `read-file` pack in a cleared environment with
//! a scratch cache, and what depends on this machine is written the same way everywhere — the
//! scratch folders as `~/.cache/skillbake`, `/home/me` and
//! `/tmp/skillbake-runs-1000/skillbake-run-read-file-…`,
//! the interpreter as `/usr/bin/python3`, and the sandbox's report (which depends on the kernel,
//! see README's "Security model") as its keys with `…` values, its `env` kept.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The command line the sample shows (the binary's own arguments).
const ARGS: [&str; 7] = [
    "run",
    "read-file",
    "--dry-run",
    "--params",
    r#"{"path": "README.md"}"#,
    "--allow",
    "filesystem:read",
];

/// Where an elided value goes; written as a bare `…` in the sample.
const ELIDED: &str = "\u{2026}elided\u{2026}";

/// The sample: the command and its result, pretty-printed, as a fenced `text` block.
pub(crate) fn sample(root: &Path) -> Result<String, String> {
    crate::run(
        "cargo build --bin skillbake",
        crate::cargo().args(["build", "--quiet", "--bin", "skillbake"]),
    )?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .map(|t| if t.is_absolute() { t } else { root.join(t) })
        .unwrap_or_else(|| root.join("target"));
    let binary = target
        .join("debug")
        .join(format!("skillbake{}", std::env::consts::EXE_SUFFIX));
    let scratch = target.join("dry-run-sample");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).map_err(|e| format!("`{}`: {e}", scratch.display()))?;
    let cache = scratch.join("cache");
    let out = Command::new(&binary)
        .args(ARGS)
        .arg("--cache-dir")
        .arg(&cache)
        .current_dir(&scratch)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("TMPDIR", "/tmp")
        .env("HOME", &scratch)
        .output()
        .map_err(|e| format!("cannot run `{}`: {e}", binary.display()))?;
    let _ = std::fs::remove_dir_all(&scratch);
    let mut v: Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "the dry run printed no JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    let program = v["data"]["command"][0].as_str().unwrap_or("").to_string();
    elide_sandbox(&mut v["data"]["sandbox"]);
    let text = serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?;
    let text = normalise(&text, &cache, &scratch, &program);
    let command: Vec<String> = ARGS
        .iter()
        .map(|a| {
            if a.contains(' ') {
                format!("'{a}'")
            } else {
                a.to_string()
            }
        })
        .collect();
    Ok(format!(
        "```text\n$ skillbake {}\n{text}\n```\n",
        command.join(" ")
    ))
}

/// Every value of the sandbox's report but its `env` replaced by [`ELIDED`].
fn elide_sandbox(sandbox: &mut Value) {
    if let Value::Object(map) = sandbox {
        for (k, v) in map.iter_mut() {
            if k != "env" {
                *v = Value::String(ELIDED.into());
            }
        }
    }
}

/// The sample's text with this machine's paths written the same way on every machine.
fn normalise(text: &str, cache: &Path, scratch: &Path, program: &str) -> String {
    let mut t = text.replace(&format!("\"{ELIDED}\""), "…");
    t = t.replace(&cache.display().to_string(), "~/.cache/skillbake");
    t = t.replace(&scratch.display().to_string(), "/home/me");
    if !program.is_empty() {
        t = t.replace(&format!("\"{program}\""), "\"/usr/bin/python3\"");
    }
    // `/tmp/skillbake-runs-<uid>/skillbake-run-read-file-<pid>-<nanoseconds>-<n>`, and the
    // run's home beside it: the folder of user 1000's runs, the unique part elided.
    t = replace_digits_after(&t, "/tmp/skillbake-runs-", "1000");
    for marker in ["/skillbake-run-read-file-", "/skillbake-home-"] {
        t = replace_digits_after(&t, marker, "…");
    }
    t
}

/// `text` with the digits and dashes after every `marker` replaced by `with`.
fn replace_digits_after(text: &str, marker: &str, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(marker) {
        out.push_str(&rest[..at + marker.len()]);
        out.push_str(with);
        rest =
            rest[at + marker.len()..].trim_start_matches(|c: char| c.is_ascii_digit() || c == '-');
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_paths_are_written_the_same_way() {
        let text = "\"/x/c/packs/a\" \"/x\" \"/opt/py/bin/python3\" /tmp/skillbake-runs-0/skillbake-run-read-file-42-000123-7/b /tmp/skillbake-runs-0/skillbake-home-42-000124-8 \"\u{2026}elided\u{2026}\"";
        assert_eq!(
            normalise(text, Path::new("/x/c"), Path::new("/x"), "/opt/py/bin/python3"),
            "\"~/.cache/skillbake/packs/a\" \"/home/me\" \"/usr/bin/python3\" /tmp/skillbake-runs-1000/skillbake-run-read-file-…/b /tmp/skillbake-runs-1000/skillbake-home-… …"
        );
    }
}
