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
//! # A group: every `security` rule at once (codes named on their own win over the group).
//! security = "deny"
//!
//! [packs.vendored-pack.lints]
//! # Levels for one pack (by its folder's skill name), winning over `[lints]`.
//! download-exec = "allow"
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
//!
//! [requires]
//! # Skills the agent relies on, with Cargo-style version ranges, resolved at build time: the
//! # agent gets the newest embedded version in range (see `validate::requires`).
//! send-email = "^1"
//! ```
//!
//! Rule that lives here: `config-invalid`.

use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::source::LineIndex;
use serde::Deserialize;
use skillbake_format::suggest::{closest, did_you_mean};
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

skillbake_format::named_enum! {
    /// A named rule set.
    #[derive(Default)]
    pub enum Profile {
        /// The core rules.
        #[default]
        Default = "default",
        /// Exactly the Agent Skills spec: only its six fields, names `^[a-z0-9]+(-[a-z0-9]+)*$`.
        AgentSkills = "agentskills",
        /// DB-GPT first: its fields, `_` in names allowed, Jinja problems are errors, folder names
        /// and name characters (DB-GPT registers any name) only warnings.
        DbGpt = "dbgpt",
    }
}

impl Profile {
    /// The level this profile gives `code`, when it differs from the code's default.
    pub fn level(self, code: Code) -> Option<Level> {
        match (self, code) {
            (Profile::AgentSkills, Code::UnknownKey | Code::NameNotPortable) => Some(Level::Deny),
            // The reference validator's strict YAML rejects flow style; every other loader reads it.
            (Profile::Default | Profile::DbGpt, Code::FlowStyle) => Some(Level::Allow),
            (Profile::DbGpt, Code::NameNotPortable) => Some(Level::Allow),
            (Profile::DbGpt, Code::BodyJinja | Code::FrontmatterDashes | Code::ByteOrderMark) => {
                Some(Level::Deny)
            }
            // DB-GPT ignores folder names and registers any name, finding it case-insensitively,
            // and serves any description it finds, however long or empty.
            (
                Profile::DbGpt,
                Code::NameDirMismatch
                | Code::NameCharset
                | Code::NameLength
                | Code::DescriptionEmpty
                | Code::DescriptionLength
                // DB-GPT reads no field's type (only a non-string `name` breaks its lookup,
                // which stays an error).
                | Code::FieldType,
            ) => Some(Level::Warn),
            // DB-GPT reads `version` as any string or number.
            (Profile::DbGpt, Code::VersionInvalid) => Some(Level::Allow),
            // DB-GPT opens `SKILL.md` with Python's universal newlines: CRLF and CR read as LF.
            (Profile::DbGpt, Code::LineEndings) => Some(Level::Allow),
            _ => None,
        }
    }

    /// Whether the profile knows the frontmatter fields of `source`, one group or several
    /// separated by `, ` (see `KNOWN_FIELDS` of `validate::fields`).
    pub fn knows(self, source: &str) -> bool {
        let mut groups = source.split(", ");
        match self {
            Profile::Default => true,
            Profile::AgentSkills => groups.any(|g| g == "spec"),
            Profile::DbGpt => groups.any(|g| g == "spec" || g == "DB-GPT"),
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
    /// `[requires]`: the skills (and version ranges) the agent relies on, resolved at build time.
    pub requires: Vec<crate::model::Requirement>,
    /// `[route]` and `[catalog]`: routing tests, near-duplicates and the catalog budget.
    pub route: RouteConfig,
    /// `[packs.NAME.lints]`: per-pack levels, by the skill name of the pack's folder.
    pub pack_lints: BTreeMap<String, BTreeMap<Code, Level>>,
}

/// `[route]` and `[catalog]` of `skillbake.toml`.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteConfig {
    /// `[route] top`: how many candidates a `route_tests` request may look at.
    pub top: usize,
    /// `[route] duplicate-threshold`: the share of a pack's own score another pack must reach on
    /// the pack's description for `description-near-duplicate`.
    pub duplicate_threshold: f64,
    /// `[catalog] format`: the catalog whose cost `check` reports and limits.
    pub catalog_format: skillbake_format::catalog::Format,
    /// `[catalog] max-tokens`: `catalog-over-budget` above this estimate.
    pub max_tokens: Option<u64>,
    /// `[catalog] max-chars`: `catalog-over-budget` above this many characters.
    pub max_chars: Option<u64>,
    /// Where `max-tokens` (else `max-chars`) is set in `skillbake.toml`.
    pub budget_pos: Option<crate::diagnostic::Position>,
}

// `duplicate_threshold` is checked to lie in 0..=1 (never NaN), so equality is total.
impl Eq for RouteConfig {}

/// Default of `[route] top`.
pub const DEFAULT_ROUTE_TOP: usize = 5;
/// Default of `[route] duplicate-threshold`.
pub const DEFAULT_DUPLICATE_THRESHOLD: f64 = 0.9;

impl Default for RouteConfig {
    fn default() -> Self {
        RouteConfig {
            top: DEFAULT_ROUTE_TOP,
            duplicate_threshold: DEFAULT_DUPLICATE_THRESHOLD,
            catalog_format: skillbake_format::catalog::Format::Xml,
            max_tokens: None,
            max_chars: None,
            budget_pos: None,
        }
    }
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
            requires: Vec::new(),
            route: RouteConfig::default(),
            pack_lints: BTreeMap::new(),
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

    /// The severity of one diagnostic: [`ProjectConfig::severity`], except that a
    /// profile-exempt one ignores the profile's level.
    pub fn severity_of(&self, d: &Diagnostic) -> Option<Severity> {
        if let (Some(severity), false) = (d.pack_level, d.code.is_hard()) {
            return Some(severity);
        }
        if d.profile_exempt && !d.code.is_hard() {
            return match self.lints.get(&d.code) {
                None => Some(d.code.default_severity()),
                Some(Level::Allow) => None,
                Some(Level::Warn) => Some(Severity::Warning),
                Some(Level::Deny) => Some(Severity::Error),
            };
        }
        self.severity(d.code)
    }

    /// Marks the diagnostics of the pack whose folder's skill name is `pack` with the levels of
    /// its `[packs.NAME.lints]`, and drops those it allows.
    pub fn apply_pack_levels(&self, pack: &str, diags: &mut Vec<Diagnostic>) {
        let Some(levels) = self.pack_lints.get(pack) else {
            return;
        };
        diags.retain_mut(|d| match levels.get(&d.code) {
            Some(_) if d.code.is_hard() => true,
            Some(Level::Allow) => false,
            Some(Level::Warn) => {
                d.pack_level = Some(Severity::Warning);
                true
            }
            Some(Level::Deny) => {
                d.pack_level = Some(Severity::Error);
                true
            }
            None => true,
        });
    }

    /// Applies levels to `diags`: drops allowed ones, sets the severity of the rest.
    pub fn apply_levels(&self, diags: &mut Vec<Diagnostic>) {
        diags.retain_mut(|d| match self.severity_of(d) {
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
    #[serde(default)]
    requires: BTreeMap<toml::Spanned<String>, toml::Spanned<String>>,
    #[serde(default)]
    route: RawRoute,
    #[serde(default)]
    catalog: RawCatalog,
    #[serde(default)]
    packs: BTreeMap<String, RawPack>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawPack {
    #[serde(default)]
    lints: BTreeMap<String, toml::Spanned<String>>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawRoute {
    top: Option<toml::Spanned<i64>>,
    duplicate_threshold: Option<toml::Spanned<f64>>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawCatalog {
    format: Option<toml::Spanned<String>>,
    max_tokens: Option<toml::Spanned<u64>>,
    max_chars: Option<toml::Spanned<u64>>,
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

const HELP: &str = "supported: `profile = \"default\"|\"agentskills\"|\"dbgpt\"`, `ignore = [\"glob\", ...]`, `[lints] code = \"allow\"|\"warn\"|\"deny\"` (or `security = ...` for the group), `[packs.NAME.lints] code = ...`, `[tools] known = [...]`, `[limits] max-file-size = BYTES, max-pack-size = BYTES`, `[route] top = K, duplicate-threshold = 0.0..=1.0`, `[catalog] format = \"xml\"|\"dbgpt\"|\"codex\"|\"markdown\", max-tokens = N, max-chars = N`, `[embed] compress = [\"glob\", ...]`, `[requires] skill-name = \"^1.2\"`";

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
    let sites = Sites {
        text,
        idx: &idx,
        file,
        at: &at,
    };
    cfg.lints = levels(&raw.lints, "[lints]", &sites, &mut diags);
    for (pack, p) in &raw.packs {
        let section = format!("[packs.{pack}.lints]");
        let map = levels(&p.lints, &section, &sites, &mut diags);
        cfg.pack_lints.insert(pack.clone(), map);
    }
    glob_sections(&raw, file, &at, &mut cfg, &mut diags);
    route_section(&raw, file, &at, &mut cfg, &mut diags);
    cfg.known_tools = raw.tools.known;
    if let Some(n) = raw.limits.max_file_size {
        cfg.max_file_size = n;
    }
    if let Some(n) = raw.limits.max_pack_size {
        cfg.max_pack_size = n;
    }
    for (skill, range) in &raw.requires {
        cfg.requires.push(crate::model::Requirement {
            skill: skill.get_ref().clone(),
            range: range.get_ref().clone(),
            file: file.to_string(),
            name_pos: at(&skill.span()),
            range_pos: at(&range.span()),
        });
    }
    if diags.is_empty() {
        Ok(cfg)
    } else {
        Err(diags)
    }
}

/// Where a value of the file is.
type At<'a> = &'a dyn Fn(&std::ops::Range<usize>) -> Option<crate::diagnostic::Position>;

/// What [`levels`] needs to point into the file.
struct Sites<'a> {
    text: &'a str,
    idx: &'a LineIndex<'a>,
    file: &'a str,
    at: At<'a>,
}

/// A `[lints]` table (the project's, or one pack's): each code or group with its level; unknown
/// codes (with a did-you-mean), unknown levels and hard errors set below `deny` are reported.
/// Groups are applied first, so a code named on its own wins over its group.
fn levels(
    table: &BTreeMap<String, toml::Spanned<String>>,
    section: &str,
    s: &Sites<'_>,
    diags: &mut Vec<Diagnostic>,
) -> BTreeMap<Code, Level> {
    // Problems are reported in the file's order; groups are applied before single codes.
    let mut valid: Vec<(bool, Vec<Code>, Level)> = Vec::new();
    for (name, level) in table {
        let key_pos = s
            .text
            .find(&format!("\n{name}"))
            .map(|i| s.idx.range(i + 1, i + 1 + name.len()))
            .or_else(|| (s.at)(&level.span()));
        let Some(codes) = Code::named(name) else {
            let mut d = Diagnostic::new(
                Code::ConfigInvalid,
                s.file,
                format!("`{section}` names `{name}`, which is not a skillbake code or group"),
            )
            .at(key_pos);
            d = match closest(name, Code::ALL.iter().map(|c| c.as_str())) {
                Some(s) => d.help(did_you_mean(s)),
                None => d.help("`skillbake explain CODE` documents every code; README lists them"),
            };
            diags.push(d);
            continue;
        };
        let Some(lvl) = Level::from_name(level.get_ref()) else {
            diags.push(
                Diagnostic::new(
                    Code::ConfigInvalid,
                    s.file,
                    format!("`{name}` has level `{}`", level.get_ref()),
                )
                .at((s.at)(&level.span()))
                .help("use \"allow\", \"warn\" or \"deny\""),
            );
            continue;
        };
        if codes.iter().any(|c| c.is_hard()) && lvl != Level::Deny {
            diags.push(
                Diagnostic::new(
                    Code::ConfigInvalid,
                    s.file,
                    format!(
                        "`{name}` is a hard error and cannot be set to `{}`",
                        level.get_ref()
                    ),
                )
                .at((s.at)(&level.span()))
                .help(
                    "fix the packs instead: a pack with this problem cannot be embedded correctly",
                ),
            );
            continue;
        }
        valid.push((Code::from_name(name).is_some(), codes, lvl));
    }
    valid.sort_by_key(|(single, _, _)| *single);
    let mut out = BTreeMap::new();
    for (_, codes, lvl) in valid {
        for c in codes {
            out.insert(c, lvl);
        }
    }
    out
}

/// `ignore` and `[embed] compress`: glob patterns, each checked.
fn glob_sections(
    raw: &RawConfig,
    file: &str,
    at: At<'_>,
    cfg: &mut ProjectConfig,
    diags: &mut Vec<Diagnostic>,
) {
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
}

/// `[route]` and `[catalog]`.
fn route_section(
    raw: &RawConfig,
    file: &str,
    at: &dyn Fn(&std::ops::Range<usize>) -> Option<crate::diagnostic::Position>,
    cfg: &mut ProjectConfig,
    diags: &mut Vec<Diagnostic>,
) {
    if let Some(top) = &raw.route.top {
        match usize::try_from(*top.get_ref()) {
            Ok(k) if k > 0 => cfg.route.top = k,
            _ => diags.push(
                Diagnostic::new(
                    Code::ConfigInvalid,
                    file,
                    format!(
                        "`[route] top` is {}; it must be a positive number",
                        top.get_ref()
                    ),
                )
                .at(at(&top.span()))
                .help("set how many candidates a routing test may look at, e.g. `top = 5`"),
            ),
        }
    }
    if let Some(t) = &raw.route.duplicate_threshold {
        let v = *t.get_ref();
        if (0.0..=1.0).contains(&v) {
            cfg.route.duplicate_threshold = v;
        } else {
            diags.push(
                Diagnostic::new(
                    Code::ConfigInvalid,
                    file,
                    format!("`[route] duplicate-threshold` is {v}; it must be between 0 and 1"),
                )
                .at(at(&t.span()))
                .help("0.9 warns when another pack scores 90% of a pack's own score on its description; allow `description-near-duplicate` in `[lints]` to turn the check off"),
            );
        }
    }
    if let Some(f) = &raw.catalog.format {
        match skillbake_format::catalog::Format::from_name(f.get_ref()) {
            Some(format) => cfg.route.catalog_format = format,
            None => diags.push(
                Diagnostic::new(
                    Code::ConfigInvalid,
                    file,
                    format!("unknown catalog format `{}`", f.get_ref()),
                )
                .at(at(&f.span()))
                .help("use one of: xml, dbgpt, codex, markdown"),
            ),
        }
    }
    cfg.route.max_tokens = raw.catalog.max_tokens.as_ref().map(|v| *v.get_ref());
    cfg.route.max_chars = raw.catalog.max_chars.as_ref().map(|v| *v.get_ref());
    cfg.route.budget_pos = raw
        .catalog
        .max_tokens
        .as_ref()
        .or(raw.catalog.max_chars.as_ref())
        .and_then(|v| at(&v.span()));
}

/// `config-invalid` for a configuration file that was asked for (`--config`,
/// `Config::config_file`) and does not exist.
pub fn missing(file: &str) -> Diagnostic {
    Diagnostic::new(
        Code::ConfigInvalid,
        file,
        "the configuration file given does not exist",
    )
    .help("fix the path, or drop the option to use skillbake.toml at the skills root")
}

/// The text of the configuration file at `path` (`file` in diagnostics); `None` when there is
/// no such file.
pub fn read(path: &Path, file: &str) -> Result<Option<String>, Vec<Diagnostic>> {
    match std::fs::read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => Ok(Some(text)),
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
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(vec![crate::discover::io_error(
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
