//! What a script's stdout means, for the unified result.
//!
//! In this order:
//!
//! 1. The script could not be started, or the call was cancelled → `EXEC_FAILED`; it ran out of
//!    time → `TIMEOUT`; it printed more than the output limit → `OUTPUT_TOO_LARGE`.
//! 2. It printed more than the output cap: the whole stdout is in a file of the output folder
//!    and `data` is `{"output_file", "bytes", "truncated": true, "preview"}` (the first
//!    [`PREVIEW_CHARS`] characters) — large results to disk, a summary to the model.
//! 3. Stdout (with surrounding whitespace removed) that is not UTF-8 → `BAD_OUTPUT`.
//! 4. A JSON object with a boolean `ok` is a **unified result** and is passed through after a
//!    shape check: only the keys `ok`, `data`, `error`; `error` null (or absent) when `ok` is
//!    true; `data` null (or absent) and `error` an object with a non-empty string `code` and a
//!    string `message` (nothing else) when `ok` is false. Anything else with a boolean `ok` →
//!    `BAD_OUTPUT` saying what is wrong (a failure is never mistaken for data).
//! 5. DB-GPT chunks (`{"chunks": [...]}`) and any other JSON become `data` as they are (JSON as
//!    Python's `json.loads` reads it); integers beyond 64 bits, `NaN` and infinities, which
//!    `serde_json` cannot hold, become strings with their JSON text. Other text becomes `data`
//!    as a string; no output at all is `data: null`.
//! 6. A non-zero exit (or a signal) turns everything but a unified failure into `EXEC_FAILED`,
//!    with the status and the end of stderr.

use crate::outcome::RawRun;
use crate::outcome::{ErrorCode, Exit, Failure, Origin};
use crate::policy::PREVIEW_CHARS;
use crate::pyjson;
use serde_json::{json, Value};
use std::time::Duration;

/// Characters of stderr quoted in an `EXEC_FAILED` message.
const STDERR_QUOTED: usize = 1500;

/// `10 seconds`, `1.5 seconds`, `1 second`.
pub(crate) fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    let text = if d.subsec_nanos() == 0 {
        d.as_secs().to_string()
    } else {
        let t = format!("{s:.3}");
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    format!("{text} second{}", if text == "1" { "" } else { "s" })
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        24 => "SIGXCPU",
        25 => "SIGXFSZ",
        _ => "a signal",
    }
}

/// The end of `text`, at most `max` characters, with `…` when cut.
fn tail(text: &str, max: usize) -> String {
    let n = text.chars().count();
    if n <= max {
        return text.to_string();
    }
    let skip = n - max;
    format!("…{}", text.chars().skip(skip).collect::<String>())
}

/// The `EXEC_FAILED` message for a process that ended badly.
pub(crate) fn exec_failed(skill: &str, exit: Option<Exit>, run: &RawRun) -> Failure {
    let how = match exit {
        Some(Exit::Code(c)) => format!("exited with status {c}"),
        Some(Exit::Signal(s)) => format!("was killed by signal {s} ({})", signal_name(s)),
        None => "ended without an exit status".to_string(),
    };
    let stderr = String::from_utf8_lossy(&run.stderr);
    let stderr = stderr.trim();
    let mut message = format!("The script of `{skill}` {how}");
    if stderr.is_empty() {
        let stdout = String::from_utf8_lossy(&run.stdout);
        let stdout = stdout.trim();
        if stdout.is_empty() {
            message.push_str(" and printed nothing.");
        } else {
            message.push_str(&format!(
                " and printed nothing on stderr. The end of its output: {}",
                tail(stdout, STDERR_QUOTED)
            ));
        }
    } else {
        let cut = if run.stderr_cut() { " (cut)" } else { "" };
        message.push_str(&format!(
            ". The end of its error output{cut}: {}",
            tail(stderr, STDERR_QUOTED)
        ));
    }
    Failure::new(ErrorCode::ExecFailed, message)
}

/// Reads a finished run as the unified result's `data` or `error`.
pub(crate) fn interpret(
    skill: &str,
    run: &RawRun,
    timeout: Duration,
    limit: u64,
) -> Result<Value, Failure> {
    if let Some(e) = &run.error {
        return Err(Failure::new(
            ErrorCode::ExecFailed,
            format!("The script of `{skill}` could not be run: {e}."),
        ));
    }
    if run.cancelled {
        return Err(Failure::new(
            ErrorCode::ExecFailed,
            format!(
                "The run of `{skill}` was cancelled before it finished, and its whole process group was killed."
            ),
        ));
    }
    if run.timed_out {
        return Err(Failure::new(
            ErrorCode::Timeout,
            format!(
                "`{skill}` did not finish within {} and was stopped (its whole process group was killed). Try a smaller task, or allow more time (the `timeout` of the call or of the pack).",
                seconds(timeout)
            ),
        ));
    }
    if run.too_large {
        let file = run
            .stdout_file
            .as_ref()
            .map(|p| format!(" The first {limit} bytes are in {}.", p.display()))
            .unwrap_or_default();
        return Err(Failure::new(
            ErrorCode::OutputTooLarge,
            format!(
                "`{skill}` printed more than {limit} bytes and was stopped.{file} Ask for less output, or have the script write large results to files in OUTPUT_DIR."
            ),
        ));
    }
    let exit = run.exit.unwrap_or(Exit::Code(-1));
    if let Some(file) = &run.stdout_file {
        if !exit.success() {
            let mut f = exec_failed(skill, Some(exit), run);
            f.message
                .push_str(&format!(" Its whole output is in {}.", file.display()));
            return Err(f);
        }
        let preview: String = String::from_utf8_lossy(&run.stdout)
            .chars()
            .take(PREVIEW_CHARS)
            .collect();
        return Ok(json!({
            "output_file": file.display().to_string(),
            "bytes": run.stdout_total,
            "truncated": true,
            "preview": preview,
        }));
    }
    let Ok(text) = std::str::from_utf8(&run.stdout) else {
        if !exit.success() {
            return Err(exec_failed(skill, Some(exit), run));
        }
        return Err(Failure::new(
            ErrorCode::BadOutput,
            format!(
                "`{skill}` printed bytes that are not UTF-8 text. A script must print text or JSON; binary results belong in files in OUTPUT_DIR."
            ),
        ));
    };
    let text = text.trim();
    let parsed = pyjson::parse(text);
    if let Some(v) = &parsed {
        if let Some(pyjson::Value::Bool(ok)) = v.get("ok") {
            let result = unified(skill, v, *ok);
            return match result {
                Err(f) if f.origin == Origin::Script => Err(f),
                Ok(_) if !exit.success() => Err(exec_failed(skill, Some(exit), run)),
                other => other,
            };
        }
        if let Some(ok) = v.get("ok") {
            if !exit.success() {
                return Err(exec_failed(skill, Some(exit), run));
            }
            return Err(bad_output(
                skill,
                &format!("`ok` must be true or false, not {}", describe(ok)),
            ));
        }
    }
    if !exit.success() {
        return Err(exec_failed(skill, Some(exit), run));
    }
    if text.is_empty() {
        return Ok(Value::Null);
    }
    Ok(parsed.map_or_else(|| Value::String(text.to_string()), |v| v.to_json()))
}

fn describe(v: &pyjson::Value) -> String {
    let mut text = v.dumps(false);
    if text.chars().count() > 60 {
        text = text.chars().take(60).collect::<String>() + "…";
    }
    text
}

fn bad_output(skill: &str, what: &str) -> Failure {
    Failure::new(
        ErrorCode::BadOutput,
        format!(
            "`{skill}` printed an object with `ok` that is not a unified result: {what}. A unified result is {{\"ok\": true, \"data\": ..., \"error\": null}} or {{\"ok\": false, \"data\": null, \"error\": {{\"code\": \"...\", \"message\": \"...\"}}}}."
        ),
    )
}

/// Checks a unified result and returns its `data`, or the script's failure.
fn unified(skill: &str, v: &pyjson::Value, ok: bool) -> Result<Value, Failure> {
    let pyjson::Value::Dict(items) = v else {
        return Err(bad_output(skill, "it is not an object"));
    };
    let extra: Vec<&str> = items
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| !matches!(*k, "ok" | "data" | "error"))
        .collect();
    if !extra.is_empty() {
        return Err(bad_output(
            skill,
            &format!(
                "it has keys besides ok, data and error ({}); put the payload under `data`",
                extra.join(", ")
            ),
        ));
    }
    let data = v.get("data").unwrap_or(&pyjson::Value::Null);
    let error = v.get("error").unwrap_or(&pyjson::Value::Null);
    if ok {
        if *error != pyjson::Value::Null {
            return Err(bad_output(skill, "`error` must be null when `ok` is true"));
        }
        return Ok(data.to_json());
    }
    if *data != pyjson::Value::Null {
        return Err(bad_output(skill, "`data` must be null when `ok` is false"));
    }
    let pyjson::Value::Dict(fields) = error else {
        return Err(bad_output(
            skill,
            "`error` must be an object with `code` and `message` when `ok` is false",
        ));
    };
    let unknown: Vec<&str> = fields
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| !matches!(*k, "code" | "message"))
        .collect();
    if !unknown.is_empty() {
        return Err(bad_output(
            skill,
            &format!(
                "`error` may only hold `code` and `message`, not {}",
                unknown.join(", ")
            ),
        ));
    }
    let (Some(pyjson::Value::Str(code)), Some(pyjson::Value::Str(message))) =
        (error.get("code"), error.get("message"))
    else {
        return Err(bad_output(
            skill,
            "`error.code` and `error.message` must both be strings",
        ));
    };
    if code.trim().is_empty() {
        return Err(bad_output(skill, "`error.code` must not be empty"));
    }
    Err(Failure {
        code: code.clone(),
        message: message.clone(),
        origin: Origin::Script,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(stdout: &str, code: i32) -> RawRun {
        RawRun {
            stdout: stdout.as_bytes().to_vec(),
            stdout_total: stdout.len() as u64,
            exit: Some(Exit::Code(code)),
            ..RawRun::default()
        }
    }

    fn read(stdout: &str, code: i32) -> Result<Value, (String, Origin)> {
        interpret("x", &run(stdout, code), Duration::from_secs(1), 10)
            .map_err(|f| (f.code, f.origin))
    }

    #[test]
    fn stdout_becomes_data() {
        assert_eq!(read("  hello\n", 0), Ok(json!("hello")));
        assert_eq!(read("[1, 2]\n", 0), Ok(json!([1, 2])));
        assert_eq!(read("", 0), Ok(Value::Null));
        assert_eq!(read("42", 0), Ok(json!(42)));
        assert_eq!(
            read("123456789012345678901234567890", 0),
            Ok(json!("123456789012345678901234567890"))
        );
        assert_eq!(read("[NaN, 1e999]", 0), Ok(json!(["NaN", "Infinity"])));
        assert_eq!(
            read(r#"{"ok": true, "data": 1e999}"#, 0),
            Ok(json!("Infinity"))
        );
        assert_eq!(
            read(
                r#"{"chunks": [{"output_type": "text", "content": "a"}]}"#,
                0
            ),
            Ok(json!({"chunks": [{"output_type": "text", "content": "a"}]}))
        );
    }

    #[test]
    fn unified_results_pass_through_after_a_shape_check() {
        assert_eq!(
            read(r#"{"ok": true, "data": {"a": 1}, "error": null}"#, 0),
            Ok(json!({"a": 1}))
        );
        assert_eq!(read(r#"{"ok": true}"#, 0), Ok(Value::Null));
        assert_eq!(
            read(
                r#"{"ok": false, "error": {"code": "NOPE", "message": "m"}}"#,
                1
            ),
            Err(("NOPE".into(), Origin::Script))
        );
        let bad = Err(("BAD_OUTPUT".into(), Origin::Executor));
        for s in [
            r#"{"ok": true, "data": 1, "error": {"code": "X", "message": "m"}}"#,
            r#"{"ok": false, "data": 1, "error": {"code": "X", "message": "m"}}"#,
            r#"{"ok": false, "error": "boom"}"#,
            r#"{"ok": false, "error": {"code": "", "message": "m"}}"#,
            r#"{"ok": false, "error": {"code": "X", "message": "m", "hint": 1}}"#,
            r#"{"ok": false, "error": {"code": 1, "message": "m"}}"#,
            r#"{"ok": true, "rows": 40}"#,
            r#"{"ok": "yes"}"#,
        ] {
            assert_eq!(read(s, 0), bad, "{s}");
        }
    }

    #[test]
    fn failures_exit_status_and_timeouts() {
        assert_eq!(read("oops", 2).map_err(|e| e.0), Err("EXEC_FAILED".into()));
        assert_eq!(
            read(r#"{"ok": true, "data": 1}"#, 1).map_err(|e| e.0),
            Err("EXEC_FAILED".into())
        );
        let mut r = run("", 0);
        r.stdout = vec![0xff, 0xfe];
        assert_eq!(
            interpret("x", &r, Duration::from_secs(1), 10).map_err(|f| f.code),
            Err("BAD_OUTPUT".into())
        );
        r.timed_out = true;
        let f = interpret("x", &r, Duration::from_millis(1500), 10).unwrap_err();
        assert_eq!(f.code, "TIMEOUT");
        assert!(f.message.contains("within 1.5 seconds"), "{}", f.message);
        let r = RawRun {
            exit: Some(Exit::Signal(9)),
            stderr: b"Killed\n".to_vec(),
            stderr_total: 7,
            ..RawRun::default()
        };
        let f = interpret("x", &r, Duration::from_secs(1), 10).unwrap_err();
        assert_eq!(
            f.message,
            "The script of `x` was killed by signal 9 (SIGKILL). The end of its error output: Killed"
        );
    }

    #[test]
    fn durations_read_as_words() {
        assert_eq!(seconds(Duration::from_secs(10)), "10 seconds");
        assert_eq!(seconds(Duration::from_secs(1)), "1 second");
        assert_eq!(seconds(Duration::from_millis(250)), "0.25 seconds");
    }
}
