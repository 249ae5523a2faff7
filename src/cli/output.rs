//! Writing to stdout: the commands' output, where a closed pipe (e.g. `| head`) is not an error
//! worth reporting.

use std::io::Write;

/// Writes `bytes` to stdout and flushes, ignoring a closed pipe.
pub(super) fn write_stdout(bytes: &[u8]) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(bytes);
    let _ = out.flush();
}
