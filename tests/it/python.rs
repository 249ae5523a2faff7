//! What the tests driving a real Python client share: the Python to run it with (a variable
//! naming a virtual environment's interpreter, which CI sets and a developer may leave unset) and
//! a run of the client bounded in time.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The Python in `$var`, with `requirements` (a file under `tests/`) installed into a
/// `target/VENV` by `.ci/run`. Unset, the test `what` says so and is skipped outside CI; under
/// CI (`CI` set) it fails.
pub(crate) fn python(var: &str, requirements: &str, venv: &str, what: &str) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must run the {what} test: set {var} to a Python with tests/{requirements} installed"
            );
            eprintln!(
                "{var} is not set: the {what} test is skipped (python3 -m venv target/{venv} && target/{venv}/bin/pip install -r tests/{requirements}, then export {var}=$PWD/target/{venv}/bin/python)"
            );
            None
        }
    }
}

/// The Python with the official MCP Python SDK (`tests/mcp-requirements.txt`):
/// `$SKILLBAKE_MCP_PYTHON`.
pub(crate) fn mcp_python(what: &str) -> Option<PathBuf> {
    python(
        "SKILLBAKE_MCP_PYTHON",
        "mcp-requirements.txt",
        "mcp-venv",
        what,
    )
}

/// Runs `command` with its output captured (read while it runs, so a chatty client never
/// blocks on a full pipe); killed, and the test failed, if it has not ended within `limit`.
pub(crate) fn output_within(command: &mut Command, limit: Duration) -> Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |mut stream: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = stream.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}
