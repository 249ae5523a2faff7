//! `skillbake.toml`, the optional project file at the skills root (or `--config PATH`).
//!
//! ```toml
//! # The rule set: "default", "agentskills" (exactly the Agent Skills spec) or "dbgpt".
//! profile = "default"
//! # Paths (relative to the skills root) never treated as packs or embedded.
//! ignore = ["drafts/**", "**/*.tmp"]
//!
//! [lints]
//! # Per-code levels, like clippy: "allow", "warn" or "deny".
//! unknown-key = "deny"
//! body-too-long = "allow"
//!
//! [tools]
//! # Tools your agent provides in addition to DB-GPT's built-ins, for `required_tools`.
//! known = ["web_search", "send_slack_message"]
//!
//! [limits]
//! # Warn above these sizes, in bytes.
//! max-file-size = 1048576
//! max-pack-size = 10485760
//!
//! [embed]
//! # Files (globs relative to the skills root) stored DEFLATE-compressed in the binary and
//! # inflated on first access; `SKILL.md` is never compressed (its reply is precomputed).
//! compress = ["**/assets/**", "*.pdf"]
//! ```
//!
//! Rule that lives here: `config-invalid`.

use crate::diagnostic::{did_you_mean, Code, Diagnostic, Severity};
use crate::source::LineIndex;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// File name of the project configuration, looked up at the skills root.
pub const CONFIG_FILE: &str = "skillbake.toml";

/// Default per-file size above which `file-too-large` warns (1 MiB).
pub const DEFAULT_MAX_FILE_SIZE: u64 = 1024 * 1024;
/// Default per-pack size above which `pack-too-large` warns (10 MiB).
pub const DEFAULT_MAX_PACK_SIZE: u64 = 10 * 1024 * 1024;

/// A lint level, as in clippy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    /// Not reported.
    Allow,
    /// Reported as a warning.
    Warn,
    /// Reported as an error.
    Deny,
}

impl Level {
    /// Parses `allow`, `warn` or `deny`.
    pub fn from_name(s: &str) -> Option<Level> {
        match s {
            "allow" => Some(Level::Allow),
            "warn" => Some(Level::Warn),
            "deny" => Some(Level::Deny),
            _ => None,
        }
    }
}

/// A named rule set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Profile {
    /// The core rules.
    #[default]
    Default,
    /// Exactly the Agent Skills spec: only its six fields, names `^[a-z0-9]+(-[a-z0-9]+)*$`.
    AgentSkills,
    /// DB-GPT first: its fields, `_` in names allowed, Jinja problems are errors.
    DbGpt,
}

impl Profile {
    /// Every profile name.
    pub const NAMES: &'static [&'static str] = &["default", "agentskills", "dbgpt"];

    /// Parses a profile name.
    pub fn from_name(s: &str) -> Option<Profile> {
        match s {
            "default" => Some(Profile::Default),
            "agentskills" => Some(Profile::AgentSkills),
            "dbgpt" => Some(Profile::DbGpt),
            _ => None,
        }
    }

    /// The profile's name.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Default => "default",
            Profile::AgentSkills => "agentskills",
            Profile::DbGpt => "dbgpt",
        }
    }

    /// The level this profile gives `code`, when it differs from the code's default.
    pub fn level(self, code: Code) -> Option<Level> {
        match (self, code) {
            (Profile::AgentSkills, Code::UnknownKey | Code::NameNotPortable) => Some(Level::Deny),
            (Profile::DbGpt, Code::NameNotPortable) => Some(Level::Allow),
            (Profile::DbGpt, Code::BodyJinja) => Some(Level::Deny),
            _ => None,
        }
    }

    /// Whether the profile knows the frontmatter field `source` group (see
    /// [`crate::validate::fields::KNOWN_FIELDS`]).
    pub fn knows(self, source: &str) -> bool {
        match self {
            Profile::Default => true,
            Profile::AgentSkills => source == "spec",
            Profile::DbGpt => source == "spec" || source.contains("DB-GPT"),
        }
    }
}

/// The project configuration after parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectConfig {
    /// The rule set.
    pub profile: Profile,
    /// Per-code levels set in `[lints]` (or on the command line).
    pub lints: BTreeMap<Code, Level>,
    /// Tool names a pack's `required_tools` may name, besides the DB-GPT built-ins.
    pub known_tools: Vec<String>,
    /// Glob patterns of paths (relative to the skills root) to skip.
    pub ignore: Vec<String>,
    /// `file-too-large` threshold in bytes.
    pub max_file_size: u64,
    /// `pack-too-large` threshold in bytes.
    pub max_pack_size: u64,
    /// Glob patterns of files (relative to the skills root) to store compressed.
    pub compress: Vec<String>,
}

impl Default for ProjectConfig {
    fn default() -> Self {
        ProjectConfig {
            profile: Profile::Default,
            lints: BTreeMap::new(),
            known_tools: Vec::new(),
            ignore: Vec::new(),
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            max_pack_size: DEFAULT_MAX_PACK_SIZE,
            compress: Vec::new(),
        }
    }
}

impl ProjectConfig {
    /// The severity `code` is reported with, or `None` when it is allowed. Hard errors always
    /// stay errors.
    pub fn severity(&self, code: Code) -> Option<Severity> {
        if code.is_hard() {
            return Some(Severity::Error);
        }
        let level = self
            .lints
            .get(&code)
            .copied()
            .or_else(|| self.profile.level(code));
        match level {
            None => Some(code.default_severity()),
            Some(Level::Allow) => None,
            Some(Level::Warn) => Some(Severity::Warning),
            Some(Level::Deny) => Some(Severity::Error),
        }
    }

    /// Applies levels to `diags`: drops allowed ones, sets the severity of the rest.
    pub fn apply_levels(&self, diags: &mut Vec<Diagnostic>) {
        diags.retain_mut(|d| match self.severity(d.code) {
            Some(s) => {
                d.severity = s;
                true
            }
            None => false,
        });
    }
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    profile: Option<toml::Spanned<String>>,
    #[serde(default)]
    ignore: Vec<toml::Spanned<String>>,
    #[serde(default)]
    lints: BTreeMap<String, toml::Spanned<String>>,
    #[serde(default)]
    tools: RawTools,
    #[serde(default)]
    limits: RawLimits,
    #[serde(default)]
    embed: RawEmbed,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawEmbed {
    #[serde(default)]
    compress: Vec<toml::Spanned<String>>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawTools {
    #[serde(default)]
    known: Vec<String>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawLimits {
    max_file_size: Option<u64>,
    max_pack_size: Option<u64>,
}

const HELP: &str = "supported: `profile = \"default\"|\"agentskills\"|\"dbgpt\"`, `ignore = [\"glob\", ...]`, `[lints] code = \"allow\"|\"warn\"|\"deny\"`, `[tools] known = [...]`, `[limits] max-file-size = BYTES, max-pack-size = BYTES`, `[embed] compress = [\"glob\", ...]`";

/// Parses the text of a configuration file. `file` is the name used in diagnostics. Every problem
/// is reported.
pub fn parse(text: &str, file: &str) -> Result<ProjectConfig, Vec<Diagnostic>> {
    let idx = LineIndex::new(text);
    let raw = match toml::from_str::<RawConfig>(text) {
        Ok(raw) => raw,
        Err(err) => {
            let pos = err.span().map(|span| idx.range(span.start, span.end));
            let message = err.message().trim().to_string();
            return Err(vec![Diagnostic::new(
                Code::ConfigInvalid,
                file,
                format!("invalid {CONFIG_FILE}: {message}"),
            )
            .at(pos)
            .help(HELP)]);
        }
    };
    let mut diags = Vec::new();
    let mut cfg = ProjectConfig::default();
    let at = |s: &std::ops::Range<usize>| Some(idx.range(s.start, s.end));
    if let Some(p) = &raw.profile {
        match Profile::from_name(p.get_ref()) {
            Some(profile) => cfg.profile = profile,
            None => diags.push(
                Diagnostic::new(
                    Code::ConfigInvalid,
                    file,
                    format!("unknown profile `{}`", p.get_ref()),
                )
                .at(at(&p.span()))
                .help(format!("use one of: {}", Profile::NAMES.join(", "))),
            ),
        }
    }
    for (name, level) in &raw.lints {
        let key_pos = text
            .find(&format!("\n{name}"))
            .map(|i| idx.range(i + 1, i + 1 + name.len()))
            .or(at(&level.span()));
        let Some(code) = Code::from_name(name) else {
            let mut d = Diagnostic::new(
                Code::ConfigInvalid,
                file,
                format!("`[lints]` names `{name}`, which is not a skillbake code"),
            )
            .at(key_pos);
            d = match did_you_mean(name, Code::ALL.iter().map(|c| c.as_str())) {
                Some(s) => d.help(format!("did you mean `{s}`?")),
                None => d.help("`skillbake explain CODE` documents every code; README lists them"),
            };
            diags.push(d);
            continue;
        };
        let Some(lvl) = Level::from_name(level.get_ref()) else {
            diags.push(
                Diagnostic::new(
                    Code::ConfigInvalid,
                    file,
                    format!("`{name}` has level `{}`", level.get_ref()),
                )
                .at(at(&level.span()))
                .help("use \"allow\", \"warn\" or \"deny\""),
            );
            continue;
        };
        if code.is_hard() && lvl != Level::Deny {
            diags.push(
                Diagnostic::new(
                    Code::ConfigInvalid,
                    file,
                    format!(
                        "`{name}` is a hard error and cannot be set to `{}`",
                        level.get_ref()
                    ),
                )
                .at(at(&level.span()))
                .help(
                    "fix the packs instead: a pack with this problem cannot be embedded correctly",
                ),
            );
            continue;
        }
        cfg.lints.insert(code, lvl);
    }
    for (what, patterns, into) in [
        ("ignore", &raw.ignore, &mut cfg.ignore),
        ("compress", &raw.embed.compress, &mut cfg.compress),
    ] {
        for pattern in patterns {
            if let Err(why) = crate::glob::Glob::new(pattern.get_ref()) {
                diags.push(
                    Diagnostic::new(
                        Code::ConfigInvalid,
                        file,
                        format!("invalid {what} pattern `{}`: {why}", pattern.get_ref()),
                    )
                    .at(at(&pattern.span()))
                    .help("use `*` (within a name), `**` (any folders) and `?`, `/`-separated, relative to the skills root"),
                );
            } else {
                into.push(pattern.get_ref().clone());
            }
        }
    }
    cfg.known_tools = raw.tools.known;
    if let Some(n) = raw.limits.max_file_size {
        cfg.max_file_size = n;
    }
    if let Some(n) = raw.limits.max_pack_size {
        cfg.max_pack_size = n;
    }
    if diags.is_empty() {
        Ok(cfg)
    } else {
        Err(diags)
    }
}

/// Reads `path` if it exists. A missing file is the default configuration.
pub fn load(path: &Path, file: &str) -> Result<ProjectConfig, Vec<Diagnostic>> {
    match std::fs::read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => parse(&text, file),
            Err(e) => Err(vec![Diagnostic::new(
                Code::ConfigInvalid,
                file,
                format!(
                    "invalid {CONFIG_FILE}: not UTF-8 (byte offset {})",
                    e.utf8_error().valid_up_to()
                ),
            )
            .help("save the file as UTF-8")]),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ProjectConfig::default()),
        Err(e) => Err(vec![Diagnostic::new(
            Code::IoError,
            file,
            format!("cannot read {CONFIG_FILE}: {e}"),
        )]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_section() {
        let cfg = parse(
            "profile = \"dbgpt\"\nignore = [\"drafts/**\"]\n[lints]\nunknown-key = \"deny\"\n[tools]\nknown = [\"a\"]\n[limits]\nmax-file-size = 10\n[embed]\ncompress = [\"*.png\"]\n",
            "skillbake.toml",
        )
        .unwrap();
        assert_eq!(cfg.profile, Profile::DbGpt);
        assert_eq!(cfg.ignore, ["drafts/**"]);
        assert_eq!(cfg.known_tools, ["a"]);
        assert_eq!(cfg.max_file_size, 10);
        assert_eq!(cfg.compress, ["*.png"]);
        assert_eq!(cfg.severity(Code::UnknownKey), Some(Severity::Error));
        assert_eq!(cfg.severity(Code::NameNotPortable), None);
        assert_eq!(cfg.severity(Code::BodyJinja), Some(Severity::Error));
    }

    #[test]
    fn reports_every_problem_with_positions() {
        let d = parse(
            "profile = \"strict\"\n[lints]\nunknwon-key = \"deny\"\nbody-empty = \"loud\"\nyaml-syntax = \"allow\"\n",
            "skillbake.toml",
        )
        .unwrap_err();
        let lines: Vec<Option<u32>> = d.iter().map(|d| d.line).collect();
        assert_eq!(lines, [Some(1), Some(4), Some(3), Some(5)]);
        assert!(d[2].help.as_deref().unwrap_or("").contains("unknown-key"));
        let d = parse("[tools]\nknwon = []\n", "skillbake.toml").unwrap_err();
        assert_eq!(d[0].line, Some(2));
    }
}
