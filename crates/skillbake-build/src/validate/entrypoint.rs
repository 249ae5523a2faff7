//! How a pack says it can run: `entrypoint` names a script of the pack that an interpreter
//! skillbake knows can start (`skillbake_format::interpreter`), `timeout` is a sane number of
//! seconds, and a runnable pack ships the `schema.json` its calls are checked against.
//!
//! | code | checks |
//! |---|---|
//! | `entrypoint-not-found` | the path is relative, `/`-separated, without `..`, and names a file of the pack |
//! | `entrypoint-binary` | the file is text (UTF-8 without NUL bytes) |
//! | `unknown-interpreter` | its `#!` line or its extension selects python3, bash, sh or node |
//! | `schema-missing` | a pack with an `entrypoint` has a `schema.json` |
//! | `timeout-invalid` | `timeout` is above 0 and at most 86400 seconds |

use super::schema::SCHEMA_JSON;
use super::PackCtx;
use crate::diagnostic::{Code, Diagnostic, Position};
use skillbake_format::interpreter::{self, Interpreter, Unknown};
use skillbake_format::suggest::{closest, did_you_mean};
use yaml_serde::Value;

/// The longest `timeout`, in seconds (one day).
pub const TIMEOUT_MAX: f64 = 86_400.0;

/// Checks `entrypoint` and `timeout`.
pub fn check(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) {
    check_timeout(ctx, diags);
    let Some(Value::String(entry)) = ctx.field("entrypoint") else {
        return;
    };
    let at = ctx.md.value_pos("entrypoint");
    let file = &ctx.file;
    if ctx.pack.file(SCHEMA_JSON).is_none() {
        diags.push(
            Diagnostic::new(
                Code::SchemaMissing,
                file,
                format!("`{}` is runnable (`entrypoint: {entry}`) but has no `schema.json`, so calls cannot be checked before they run", ctx.pack.dir_name),
            )
            .at(at)
            .help("add a `schema.json` next to SKILL.md describing the parameters, e.g. `{\"type\": \"object\", \"properties\": {...}, \"required\": [...]}`"),
        );
    }
    let path = entry.trim();
    if !inside_pack(path, entry, file, at, diags) {
        return;
    }
    match ctx.pack.file(path) {
        Some(script) => check_script(path, &script.bytes, file, at, diags),
        None => not_found(ctx, path, at, diags),
    }
}

/// Whether `path` is a relative path inside the pack (`entrypoint-not-found` when it is not).
fn inside_pack(
    path: &str,
    entry: &str,
    file: &str,
    at: Option<Position>,
    diags: &mut Vec<Diagnostic>,
) -> bool {
    let relative = !path.is_empty()
        && !path.starts_with('/')
        && !path.contains('\\')
        && path.as_bytes().get(1) != Some(&b':')
        && path
            .split('/')
            .all(|p| !p.is_empty() && p != "." && p != "..");
    if !relative {
        let what = if path.is_empty() {
            "`entrypoint` is empty".to_string()
        } else {
            format!("`entrypoint: {entry}` is not a path inside the pack")
        };
        diags.push(
            Diagnostic::new(Code::EntrypointNotFound, file, what)
                .at(at)
                .help("write the script's path relative to the pack folder, with `/` and no `..`, e.g. `entrypoint: scripts/run.py`"),
        );
        return false;
    }
    true
}

/// `entrypoint-not-found` for a path no file of the pack has, with the closest file or the
/// pack's scripts.
fn not_found(ctx: &PackCtx<'_>, path: &str, at: Option<Position>, diags: &mut Vec<Diagnostic>) {
    let file = &ctx.file;
    let is_dir = ctx
        .pack
        .files
        .iter()
        .any(|f| f.path.starts_with(&format!("{path}/")));
    let scripts: Vec<&str> = ctx
        .pack
        .files
        .iter()
        .map(|f| f.path.as_str())
        .filter(|p| interpreter::detect(p, b"").is_ok() || p.starts_with("scripts/"))
        .collect();
    let close = ctx
        .pack
        .files
        .iter()
        .find(|f| f.path.eq_ignore_ascii_case(path))
        .map(|f| f.path.as_str())
        .or_else(|| closest(path, ctx.pack.files.iter().map(|f| f.path.as_str())));
    let message = if is_dir {
        format!("`entrypoint: {path}` names a folder, not a script")
    } else {
        format!("`entrypoint: {path}` names no file of the pack")
    };
    let help = match (close, scripts.is_empty()) {
        (Some(c), _) => did_you_mean(c),
        (None, false) => format!(
            "the pack's scripts: {}",
            scripts
                .iter()
                .take(8)
                .copied()
                .collect::<Vec<_>>()
                .join(", ")
        ),
        (None, true) => {
            "add the script to the pack (e.g. `scripts/run.py`) and name it here".into()
        }
    };
    diags.push(
        Diagnostic::new(Code::EntrypointNotFound, file, message)
            .at(at)
            .help(help),
    );
}

/// The script itself: text (`entrypoint-binary`), run by a known interpreter
/// (`unknown-interpreter`).
fn check_script(
    path: &str,
    bytes: &[u8],
    file: &str,
    at: Option<Position>,
    diags: &mut Vec<Diagnostic>,
) {
    if std::str::from_utf8(bytes).is_err() || bytes.contains(&0) {
        diags.push(
            Diagnostic::new(
                Code::EntrypointBinary,
                file,
                format!(
                    "`entrypoint: {path}` is a binary file ({} bytes), not a script",
                    bytes.len()
                ),
            )
            .at(at)
            .help("name a script run by python3, bash, sh or node; a compiled program can be started from a small wrapper script"),
        );
        return;
    }
    if let Err(unknown) = interpreter::detect(path, bytes) {
        let why = match unknown {
            Unknown::Shebang(program) => {
                format!("the `#!` line of `{path}` runs `{program}`, which skillbake cannot start")
            }
            Unknown::Extension(Some(ext)) => {
                format!("`{path}` has no `#!` line and skillbake runs no `.{ext}` files")
            }
            Unknown::Extension(None) => {
                format!("`{path}` has neither a `#!` line nor an extension")
            }
        };
        let known: Vec<&str> = Interpreter::ALL.iter().map(|i| i.program()).collect();
        diags.push(
            Diagnostic::new(Code::UnknownInterpreter, file, why)
                .at(at)
                .help(format!(
                    "skillbake runs {}: start the script with a line such as `#!/usr/bin/env python3`, or give it a .py, .sh or .js extension",
                    known.join(", ")
                )),
        );
    }
}

fn check_timeout(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) {
    let Some(Value::Number(n)) = ctx.field("timeout") else {
        return;
    };
    let secs = n.as_f64().unwrap_or(f64::NAN);
    if secs > 0.0 && secs <= TIMEOUT_MAX {
        return;
    }
    diags.push(
        Diagnostic::new(
            Code::TimeoutInvalid,
            &ctx.file,
            format!("`timeout: {n}` is not a number of seconds above 0 and at most {TIMEOUT_MAX} (one day)"),
        )
        .at(ctx.md.value_pos("timeout"))
        .help("give the seconds a run may take, e.g. `timeout: 30`; leave it out for the default of 10 seconds"),
    );
}
