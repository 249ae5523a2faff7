//! The floor of `cargo xtask bench`: a process that starts, writes a static string and exits.
//! Whatever `skillbake load` costs above this is the price of answering.

use std::io::Write;

const REPLY: &str = r#"{"chunks": [{"output_type": "text", "content": "floor"}]}
"#;

fn main() {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(REPLY.as_bytes());
    let _ = out.flush();
}
