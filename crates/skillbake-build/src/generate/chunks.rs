//! The fixed parts of DB-GPT's `load_skill` reply, precomputed per skill so that serving a
//! request is three copies: `head`, the escaped `file_path`, `tail`.
//!
//! ```text
//! {"chunks": [{"output_type": "text", "content": "Skill: <name>"}, {"output_type": "text", "content": "File path: <file_path>"}, {"output_type": "text", "content": "---"}, {"output_type": "markdown", "content": "<body>"}]}
//! ```

use super::pyjson::escape_into;

/// Everything before the echoed `file_path`.
pub fn head(name: &str) -> String {
    let mut s = String::from(r#"{"chunks": [{"output_type": "text", "content": "Skill: "#);
    escape_into(&mut s, name);
    s.push_str(r#""}, {"output_type": "text", "content": "File path: "#);
    s
}

/// Everything after the echoed `file_path` when the body is served.
pub fn tail(body: &str) -> String {
    let mut s = String::with_capacity(body.len() + 96);
    s.push_str(r#""}, {"output_type": "text", "content": "---"}, {"output_type": "markdown", "content": ""#);
    escape_into(&mut s, body);
    s.push_str(r#""}]}"#);
    s
}
