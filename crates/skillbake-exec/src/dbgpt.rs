//! DB-GPT's `execute_skill_script_file(skill_name, script_file_name, args)` reply, byte for byte
//! where DB-GPT answers (its skill manager in `dbgpt` 0.8.2, `dbgpt.agent.skill.manage`):
//!
//! * unknown script: `Script file '<name>' not found` (after stripping leading `/` and `\` and
//!   one leading `scripts/`, as DB-GPT does). An unknown skill gets the same answer: DB-GPT's
//!   `Skill '<name>' not found` branch cannot be reached, because its skill folder falls back to
//!   `SKILLS_DIR/<name>`. Unlike DB-GPT, a name with `..` never leaves the pack's `scripts/`
//!   (DB-GPT runs `../SKILL.md` as Python);
//! * stdout that is a JSON object with a `chunks` key: those chunks as they are; other stdout: one
//!   text chunk with it stripped (Python's `str.strip()`);
//! * a non-zero exit: `[ERROR] <stderr stripped>` (when stderr is not empty) and
//!   `Exit code: <n>` (negative for a signal, as Python's `returncode`);
//! * nothing at all: `Script executed successfully (no output)`;
//! * new image files in the output folder: `image` chunks with their absolute paths (sorted;
//!   DB-GPT lists them in directory order);
//! * timeout: `Script execution timed out (<n>s limit)`, with the limit that applied (DB-GPT's is
//!   always 120 s and does not stop the script; skillbake's is the policy's and kills the group);
//! * a failure to start: `Script execution failed: <message>`.
//!
//! Two differences are deliberate: every script runs with its own interpreter (DB-GPT runs every
//! file as Python, so a `.sh` script fails there with a `SyntaxError`), and the arguments are
//! passed as given (DB-GPT may first reshape them to the parameters of the script's `main`
//! function, read from its syntax tree). DB-GPT also inherits its own stdin; skillbake writes
//! the arguments there too.
//!
//! All as `json.dumps({"chunks": [...]}, ensure_ascii=False)`. Where DB-GPT has no answer
//! (parameters that fail `schema.json`, a permission not granted, output above the limits),
//! the reply is one text chunk with the executor's message.

use crate::outcome::RawRun;
use crate::outcome::{ErrorCode, Outcome};
use crate::pyjson::Value;
use skillbake_format::python::{float_repr, strip};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The extensions DB-GPT reports as images (compared in lower case).
pub const IMAGE_EXTENSIONS: [&str; 6] = ["png", "jpg", "jpeg", "gif", "svg", "webp"];

/// Entries looked at when listing the output folder's images, at most.
const MAX_LISTED: usize = 10_000;

fn text_chunk(content: &str) -> Value {
    Value::Dict(vec![
        ("output_type".into(), Value::Str("text".into())),
        ("content".into(), Value::Str(content.into())),
    ])
}

fn reply(chunks: Value) -> String {
    Value::Dict(vec![("chunks".into(), chunks)]).dumps(false)
}

/// One text chunk: `{"chunks": [{"output_type": "text", "content": "<text>"}]}`.
pub fn text_reply(text: &str) -> String {
    reply(Value::List(vec![text_chunk(text)]))
}

/// `120`, `0.5`: the limit as DB-GPT's f-string would print the number of seconds.
fn limit(timeout: Duration) -> String {
    if timeout.subsec_nanos() == 0 {
        timeout.as_secs().to_string()
    } else {
        float_repr(timeout.as_secs_f64())
    }
}

/// The chunks a script's JSON stdout gave, or the list DB-GPT builds.
enum Chunks {
    List(Vec<Value>),
    /// `parsed_output["chunks"]` that is not a list: DB-GPT keeps it and fails on `append`.
    Other(Value),
}

impl Chunks {
    fn append(&mut self, item: Value) -> Result<(), String> {
        match self {
            Chunks::List(items) => {
                items.push(item);
                Ok(())
            }
            Chunks::Other(v) => Err(format!(
                "'{}' object has no attribute 'append'",
                v.type_name()
            )),
        }
    }

    fn truthy(&self) -> bool {
        match self {
            Chunks::List(items) => !items.is_empty(),
            Chunks::Other(v) => v.truthy(),
        }
    }
}

/// DB-GPT's reply for a finished run.
pub(crate) fn run_reply(run: &RawRun, timeout: Duration) -> String {
    if let Some(e) = &run.error {
        return text_reply(&format!("Script execution failed: {e}"));
    }
    if run.cancelled {
        return text_reply("Script execution failed: the run was cancelled");
    }
    if run.timed_out {
        return text_reply(&format!(
            "Script execution timed out ({}s limit)",
            limit(timeout)
        ));
    }
    if run.too_large {
        let file = run
            .stdout_file
            .as_ref()
            .map(|p| {
                format!(
                    "; the first {} bytes are in {}",
                    run.stdout_total,
                    p.display()
                )
            })
            .unwrap_or_default();
        return text_reply(&format!(
            "Script output exceeded {} bytes and the script was stopped{file}",
            run.stdout_total
        ));
    }
    let output = String::from_utf8_lossy(&run.stdout);
    let errors = String::from_utf8_lossy(&run.stderr);
    let exit = run.exit.map_or(0, |e| e.returncode());
    let mut chunks = Chunks::List(Vec::new());
    let stripped = strip(&output);
    let mut result = Ok(());
    if !stripped.is_empty() {
        match crate::pyjson::parse(stripped) {
            Some(Value::Dict(items)) if items.iter().any(|(k, _)| k == "chunks") => {
                let v = items
                    .into_iter()
                    .find(|(k, _)| k == "chunks")
                    .map_or(Value::Null, |(_, v)| v);
                chunks = match v {
                    Value::List(items) => Chunks::List(items),
                    other => Chunks::Other(other),
                };
            }
            _ => {
                let _ = chunks.append(text_chunk(stripped));
            }
        }
        if let Some(file) = &run.stdout_file {
            result = chunks.append(text_chunk(&format!(
                "[Output cut at {} bytes: the whole output ({} bytes) is in {}]",
                run.stdout.len(),
                run.stdout_total,
                file.display()
            )));
        }
    }
    let stderr = strip(&errors);
    if result.is_ok() && exit != 0 && !stderr.is_empty() {
        let cut = if run.stderr_cut() { "…" } else { "" };
        result = chunks.append(text_chunk(&format!("[ERROR] {cut}{stderr}")));
    }
    if result.is_ok() && exit != 0 {
        result = chunks.append(text_chunk(&format!("Exit code: {exit}")));
    }
    if result.is_ok() && !chunks.truthy() {
        result = chunks.append(text_chunk("Script executed successfully (no output)"));
    }
    for image in &run.images {
        if result.is_err() {
            break;
        }
        result = chunks.append(Value::Dict(vec![
            ("output_type".into(), Value::Str("image".into())),
            ("content".into(), Value::Str(image.display().to_string())),
        ]));
    }
    if let Err(e) = result {
        return text_reply(&format!("Script execution failed: {e}"));
    }
    reply(match chunks {
        Chunks::List(items) => Value::List(items),
        Chunks::Other(v) => v,
    })
}

/// DB-GPT's reply for an outcome: the run's reply when a script ran, DB-GPT's own words for what
/// it answers before running, else the executor's message.
pub fn reply_for(outcome: &Outcome) -> String {
    let meta = outcome.meta();
    if let Some(run) = &meta.raw {
        return run_reply(run, meta.timeout.unwrap_or_default());
    }
    if let Some(text) = &meta.reply {
        return text_reply(text);
    }
    match (outcome.error(), outcome.data()) {
        (Some(e), _) => match e.error_code() {
            Some(ErrorCode::SkillNotFound | ErrorCode::NotRunnable) | None => {
                text_reply(&e.message)
            }
            Some(code) => text_reply(&format!("[{code}] {}", e.message)),
        },
        (None, Some(data)) => text_reply(&data.to_string()),
        (None, None) => text_reply("Script executed successfully (no output)"),
    }
}

/// Image files under `dir` (not following linked folders), as DB-GPT's `os.walk` finds them.
pub(crate) fn images(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > MAX_LISTED {
                found.sort();
                return found;
            }
            let path = e.path();
            let is_dir = std::fs::metadata(&path).is_ok_and(|m| m.is_dir());
            if is_dir {
                if e.file_type().is_ok_and(|t| !t.is_symlink()) {
                    stack.push(path);
                }
                continue;
            }
            let image = path
                .extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| IMAGE_EXTENSIONS.contains(&x.to_ascii_lowercase().as_str()));
            if image {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Exit;

    fn run(stdout: &str, stderr: &str, code: i32) -> RawRun {
        RawRun {
            stdout: stdout.as_bytes().to_vec(),
            stdout_total: stdout.len() as u64,
            stderr: stderr.as_bytes().to_vec(),
            stderr_total: stderr.len() as u64,
            exit: Some(Exit::Code(code)),
            ..RawRun::default()
        }
    }

    #[test]
    fn replies_match_dbgpts_shapes() {
        let t = Duration::from_secs(120);
        assert_eq!(
            run_reply(&run("", "", 0), t),
            r#"{"chunks": [{"output_type": "text", "content": "Script executed successfully (no output)"}]}"#
        );
        assert_eq!(
            run_reply(&run(" hi\n", "trace\n", 3), t),
            r#"{"chunks": [{"output_type": "text", "content": "hi"}, {"output_type": "text", "content": "[ERROR] trace"}, {"output_type": "text", "content": "Exit code: 3"}]}"#
        );
        assert_eq!(
            run_reply(
                &run(
                    r#"{"chunks": [{"output_type": "markdown", "content": "**é**", "x": 1.0}]}"#,
                    "",
                    0
                ),
                t
            ),
            r#"{"chunks": [{"output_type": "markdown", "content": "**é**", "x": 1.0}]}"#
        );
        assert_eq!(
            run_reply(&run(r#"{"chunks": "s"}"#, "", 1), t),
            r#"{"chunks": [{"output_type": "text", "content": "Script execution failed: 'str' object has no attribute 'append'"}]}"#
        );
        assert_eq!(
            run_reply(&run(r#"{"chunks": []}"#, "", 0), t),
            r#"{"chunks": [{"output_type": "text", "content": "Script executed successfully (no output)"}]}"#
        );
        let mut r = run("", "", 0);
        r.timed_out = true;
        assert_eq!(
            run_reply(&r, Duration::from_millis(500)),
            r#"{"chunks": [{"output_type": "text", "content": "Script execution timed out (0.5s limit)"}]}"#
        );
        let r = RawRun {
            exit: Some(Exit::Signal(9)),
            ..RawRun::default()
        };
        assert!(run_reply(&r, t).contains("Exit code: -9"));
    }
}
