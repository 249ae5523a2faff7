//! The fixed parts of DB-GPT's `load_skill` reply (Python `json.dumps`, separators `", "` and
//! `": "`, keys in this order, no trailing newline):
//!
//! ```text
//! {"chunks": [{"output_type": "text", "content": "Skill: <name>"}, {"output_type": "text", "content": "File path: <file_path>"}, {"output_type": "text", "content": "---"}, {"output_type": "markdown", "content": "<body>"}]}
//! ```

use crate::escape::json_into;

/// Start of a reply whose first chunk is text: `{"chunks": [{"output_type": "text", "content": "`.
pub const OPEN: &str = r#"{"chunks": [{"output_type": "text", "content": ""#;
/// End of a reply: closes the last chunk's string, the chunk, the list and the object.
pub const CLOSE: &str = r#""}]}"#;
/// From the end of the `File path:` chunk to the `output_type` value of the last chunk.
pub const SEPARATOR: &str = r#""}, {"output_type": "text", "content": "---"}, {"output_type": ""#;
/// Between an `output_type` value and the `content` value.
pub const CONTENT: &str = r#"", "content": ""#;

/// Everything before the echoed `file_path`.
pub fn head(name: &str) -> String {
    let mut s = String::from(OPEN);
    s.push_str("Skill: ");
    json_into(&mut s, name);
    s.push_str(r#""}, {"output_type": "text", "content": "File path: "#);
    s
}

/// Everything after the echoed `file_path` when the body is served.
pub fn tail(body: &str) -> String {
    let mut s = String::with_capacity(body.len() + 96);
    s.push_str(SEPARATOR);
    s.push_str("markdown");
    s.push_str(CONTENT);
    json_into(&mut s, body);
    s.push_str(CLOSE);
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn full_reply() {
        let reply = format!("{}{}{}", super::head("x"), "p", super::tail("b\n"));
        assert_eq!(
            reply,
            r#"{"chunks": [{"output_type": "text", "content": "Skill: x"}, {"output_type": "text", "content": "File path: p"}, {"output_type": "text", "content": "---"}, {"output_type": "markdown", "content": "b\n"}]}"#
        );
    }
}
