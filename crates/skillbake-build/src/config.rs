//! `skillbake.toml`, the optional project file at the skills root.
//!
//! ```toml
//! [tools]
//! # Tools your agent provides in addition to DB-GPT's built-ins, for `required_tools`.
//! known = ["web_search", "send_slack_message"]
//! ```

use crate::diagnostic::{Code, Diagnostic};
use crate::source::LineIndex;
use serde::Deserialize;
use std::path::Path;

/// File name of the project configuration, looked up at the skills root.
pub const CONFIG_FILE: &str = "skillbake.toml";

/// The project configuration after parsing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectConfig {
    /// Tool names a pack's `required_tools` may name, besides the DB-GPT built-ins.
    pub known_tools: Vec<String>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    tools: RawTools,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawTools {
    #[serde(default)]
    known: Vec<String>,
}

/// Parses the text of a configuration file. `file` is the name used in diagnostics.
pub fn parse(text: &str, file: &str) -> Result<ProjectConfig, Diagnostic> {
    match toml::from_str::<RawConfig>(text) {
        Ok(raw) => Ok(ProjectConfig {
            known_tools: raw.tools.known,
        }),
        Err(err) => {
            let pos = err
                .span()
                .map(|span| LineIndex::new(text).range(span.start, span.end));
            let message = err.message().trim().to_string();
            Err(Diagnostic::new(
                Code::ConfigInvalid,
                file,
                format!("invalid {CONFIG_FILE}: {message}"),
            )
            .at(pos)
            .help("the file supports one table: `[tools]` with `known = [\"tool_name\", ...]`"))
        }
    }
}

/// Reads `path` if it exists. A missing file is the empty configuration.
pub fn load(path: &Path, file: &str) -> Result<ProjectConfig, Diagnostic> {
    match std::fs::read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => parse(&text, file),
            Err(e) => Err(Diagnostic::new(
                Code::ConfigInvalid,
                file,
                format!(
                    "invalid {CONFIG_FILE}: not UTF-8 (byte offset {})",
                    e.utf8_error().valid_up_to()
                ),
            )
            .help("save the file as UTF-8")),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ProjectConfig::default()),
        Err(e) => Err(Diagnostic::new(
            Code::IoError,
            file,
            format!("cannot read {CONFIG_FILE}: {e}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_known_tools() {
        let cfg = parse("[tools]\nknown = [\"a\", \"b\"]\n", "skillbake.toml");
        assert_eq!(
            cfg,
            Ok(ProjectConfig {
                known_tools: vec!["a".into(), "b".into()]
            })
        );
    }

    #[test]
    fn reports_unknown_keys_with_position() {
        let d = parse("[tools]\nknwon = []\n", "skillbake.toml").err();
        let d = d.as_ref();
        assert_eq!(d.map(|d| d.code), Some(Code::ConfigInvalid));
        assert_eq!(d.and_then(|d| d.line), Some(2));
    }
}
