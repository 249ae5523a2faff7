//! Diagnostics as data: every problem the compiler finds is a [`Diagnostic`] with a stable
//! kebab-case [`Code`], a [`Severity`], the file it concerns and, where known, a 1-based line and
//! column. Rendering (human, JSON, GitHub annotations) lives in [`crate::report`].

use serde::Serialize;
use std::fmt;

/// How serious a diagnostic is. Any `Error` fails the build and makes `skillbake check` exit 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Fails the build.
    Error,
    /// Reported, never fails the build.
    Warning,
}

impl Severity {
    /// `"error"` or `"warning"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! codes {
    ($(
        $(#[$doc:meta])*
        $variant:ident = $code:literal, $severity:ident, $module:literal, $summary:literal;
    )*) => {
        /// A stable diagnostic code. The kebab-case string form never changes once released.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum Code {
            $( $(#[$doc])* $variant, )*
        }

        impl Code {
            /// Every code, in documentation order.
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// The stable kebab-case name, e.g. `name-dir-mismatch`.
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $code,)* }
            }

            /// The severity this code has unless configured otherwise.
            pub fn default_severity(self) -> Severity {
                match self { $(Code::$variant => Severity::$severity,)* }
            }

            /// The source module (under `crates/skillbake-build/src/`) where the rule lives.
            pub fn module(self) -> &'static str {
                match self { $(Code::$variant => $module,)* }
            }

            /// One sentence: what the rule checks.
            pub fn summary(self) -> &'static str {
                match self { $(Code::$variant => $summary,)* }
            }

            /// The rule's documentation (`rules/<code>.md` in this crate): what the rule checks,
            /// why, a failing and a passing example, how to fix and how to silence it. Printed by
            /// `skillbake explain CODE`.
            pub fn doc(self) -> &'static str {
                match self { $(Code::$variant => include_str!(concat!("../rules/", $code, ".md")),)* }
            }

            /// Looks a code up by its kebab-case name.
            pub fn from_name(name: &str) -> Option<Code> {
                match name { $($code => Some(Code::$variant),)* _ => None }
            }
        }
    };
}

codes! {
    /// A file or folder could not be read.
    IoError = "io-error", Error, "discover.rs", "A file or folder of the skills tree could not be read.";
    /// The skills root holds no pack at all.
    NoPacks = "no-packs", Warning, "discover.rs", "The skills root contains no pack (no folder with a SKILL.md).";
    /// A file named like SKILL.md but with other letter case.
    MisnamedSkillMd = "misnamed-skill-md", Warning, "discover.rs", "A file named `skill.md` (any case but `SKILL.md`) makes no pack; rename it to `SKILL.md`.";
    /// A SKILL.md below another pack.
    NestedPack = "nested-pack", Error, "discover.rs", "A `SKILL.md` lies inside another pack outside its `assets/`, `references/`, `templates/` and `examples/`; packs do not nest.";
    /// A symbolic link that points outside its pack (or the skills root).
    SymlinkEscape = "symlink-escape", Error, "discover.rs", "A symbolic link points outside its pack; it is never embedded.";
    /// A symbolic link cycle.
    SymlinkCycle = "symlink-cycle", Error, "discover.rs", "Symbolic links form a cycle.";
    /// A FIFO, socket or device inside a pack.
    UnsupportedFileType = "unsupported-file-type", Error, "discover.rs", "A pack holds something that is neither a regular file nor a folder (FIFO, socket, device).";
    /// A file or folder name that is not UTF-8.
    PathNotUtf8 = "path-not-utf8", Error, "discover.rs", "A file or folder name is not valid UTF-8 and cannot be served under a `/`-separated path.";
    /// SKILL.md is not UTF-8.
    InvalidUtf8 = "invalid-utf8", Error, "parse/frontmatter.rs", "`SKILL.md` is not valid UTF-8.";
    /// No frontmatter.
    FrontmatterMissing = "frontmatter-missing", Error, "parse/frontmatter.rs", "`SKILL.md` does not start with a `---` line opening the YAML frontmatter.";
    /// No closing `---`.
    FrontmatterUnterminated = "frontmatter-unterminated", Error, "parse/frontmatter.rs", "The frontmatter has no closing line that is exactly `---`.";
    /// A `---` inside the frontmatter, where DB-GPT would split.
    FrontmatterDashes = "frontmatter-dashes", Warning, "parse/frontmatter.rs", "The frontmatter holds `---`, where DB-GPT's substring split would end it (DB-GPT would serve other bytes).";
    /// Nothing between the delimiters.
    FrontmatterEmpty = "frontmatter-empty", Error, "parse/frontmatter.rs", "The frontmatter holds no YAML.";
    /// Frontmatter is YAML but not a mapping.
    FrontmatterNotMapping = "frontmatter-not-mapping", Error, "parse/frontmatter.rs", "The frontmatter is not a YAML mapping of keys to values.";
    /// YAML syntax error.
    YamlSyntax = "yaml-syntax", Error, "parse/yaml_error.rs", "The frontmatter is not valid YAML.";
    /// Alias bombs and deep nesting.
    YamlLimit = "yaml-limit", Error, "parse/yaml_error.rs", "The frontmatter expands too many aliases or nests too deeply.";
    /// A YAML merge key.
    YamlMergeKey = "yaml-merge-key", Error, "parse/frontmatter.rs", "The frontmatter uses a YAML merge key (`<<: *anchor`), which is not supported.";
    /// A UTF-8 byte order mark before the frontmatter.
    ByteOrderMark = "byte-order-mark", Warning, "parse/frontmatter.rs", "`SKILL.md` starts with a UTF-8 byte order mark, which DB-GPT keeps: it refuses a file that does not start with `---`.";
    /// A key given twice.
    DuplicateKey = "duplicate-key", Error, "parse/yaml_error.rs", "A key appears twice in one YAML mapping.";
    /// `name` absent.
    NameMissing = "name-missing", Error, "validate/name.rs", "The required `name` field is missing or empty.";
    /// `name` length.
    NameLength = "name-length", Error, "validate/name.rs", "`name` is longer than 64 characters.";
    /// `name` characters.
    NameCharset = "name-charset", Error, "validate/name.rs", "`name` uses characters other than `a-z`, `0-9`, `-`, `_`, or starts or ends with `-`/`_`.";
    /// `name` differs from the folder.
    NameDirMismatch = "name-dir-mismatch", Error, "validate/name.rs", "`name` differs from the name of the pack's folder.";
    /// `_` or `--` in a name.
    NameNotPortable = "name-not-portable", Warning, "validate/name.rs", "`name` contains `_` or `--`, which Agent Skills clients reject.";
    /// Two packs with one name.
    DuplicateName = "duplicate-name", Error, "validate/duplicate.rs", "Two packs have the same name, or names that differ only in letter case.";
    /// `description` absent.
    DescriptionMissing = "description-missing", Error, "validate/description.rs", "The required `description` field is missing.";
    /// `description` present but empty.
    DescriptionEmpty = "description-empty", Error, "validate/description.rs", "`description` is present but empty or has no value.";
    /// `description` too long.
    DescriptionLength = "description-length", Error, "validate/description.rs", "`description` is longer than 1024 characters.";
    /// `compatibility` too long.
    CompatibilityLength = "compatibility-length", Error, "validate/fields.rs", "`compatibility` is empty or longer than 500 characters.";
    /// A known field with the wrong type.
    FieldType = "field-type", Error, "validate/fields.rs", "A known frontmatter field has the wrong type.";
    /// An unknown top-level key.
    UnknownKey = "unknown-key", Warning, "validate/fields.rs", "A top-level frontmatter key is not one skillbake knows (often a typo).";
    /// A control character in frontmatter text.
    ControlCharacter = "control-character", Error, "validate/text.rs", "A frontmatter string holds a control character (terminal escape, BEL, NUL, …) other than tab and line breaks.";
    /// `required_tools` names an unknown tool.
    UnknownTool = "unknown-tool", Error, "validate/tools.rs", "`required_tools` names a tool that is neither a DB-GPT built-in nor declared in `skillbake.toml`.";
    /// `schema.json` is not JSON.
    SchemaJsonSyntax = "schema-json-syntax", Error, "validate/schema.rs", "`schema.json` is not valid JSON.";
    /// `schema.json` is not a JSON Schema.
    SchemaInvalid = "schema-invalid", Error, "validate/schema.rs", "`schema.json` is not a valid JSON Schema (checked against its meta-schema).";
    /// A remote `$ref`.
    SchemaRemoteRef = "schema-remote-ref", Error, "validate/schema.rs", "`schema.json` has a `$ref` to another document; only local `#...` references are allowed.";
    /// A local `$ref` that does not resolve.
    SchemaUnresolvedRef = "schema-unresolved-ref", Error, "validate/schema.rs", "A local `$ref` in `schema.json` points at nothing.";
    /// `$ref`s that lead back to themselves with nothing in between.
    SchemaRefCycle = "schema-ref-cycle", Error, "validate/schema.rs", "`$ref`s in `schema.json` form a cycle that never reaches a child value (`a` → `b` → `a`).";
    /// A `format` no validator knows.
    SchemaUnknownFormat = "schema-unknown-format", Warning, "validate/schema.rs", "A `format` in `schema.json` is not one JSON Schema defines; validators silently ignore it.";
    /// Body that Jinja2 would reject.
    BodyJinja = "body-jinja", Warning, "validate/body.rs", "The body is not a template Jinja2 accepts (DB-GPT parses every body with Jinja2 and fails on it).";
    /// Empty body.
    BodyEmpty = "body-empty", Warning, "validate/body.rs", "The body after the frontmatter is empty.";
    /// Long body.
    BodyTooLong = "body-too-long", Warning, "validate/body.rs", "The body is longer than 500 lines.";
    /// A file above the size limit.
    FileTooLarge = "file-too-large", Warning, "validate/size.rs", "A file of a pack is larger than `[limits] max-file-size` (default 1 MiB).";
    /// A pack above the size limit.
    PackTooLarge = "pack-too-large", Warning, "validate/size.rs", "A pack's files add up to more than `[limits] max-pack-size` (default 10 MiB).";
    /// A pack over the MCP Skills extension's limits per skill.
    PackOverMcpLimits = "pack-over-mcp-limits", Warning, "validate/size.rs", "A pack holds more than 512 files or 16 MiB of files, the MCP Skills extension's limits per skill, so hosts may decline it.";
    /// `skillbake.toml` problems.
    ConfigInvalid = "config-invalid", Error, "config.rs", "`skillbake.toml` is not valid TOML or has unknown keys, values or wrong types.";
    /// `version` is not semver.
    VersionInvalid = "version-invalid", Error, "validate/version.rs", "`version` is not a semantic version (`MAJOR.MINOR.PATCH`, in quotes).";
    /// A `NAME@VERSION` folder holds another version.
    VersionDirMismatch = "version-dir-mismatch", Error, "validate/version.rs", "A pack in a `NAME@VERSION` folder declares another `version`, or none.";
    /// Two packs of one skill with the same version.
    DuplicateVersion = "duplicate-version", Error, "validate/duplicate.rs", "Two packs of one skill declare the same version.";
    /// A requirement that is not a version range.
    RequiresInvalid = "requires-invalid", Error, "validate/requires.rs", "A requirement (`requires:` of a pack, `[requires]` of `skillbake.toml`) is not a version range.";
    /// A pack requires what is not embedded.
    RequiresUnsatisfied = "requires-unsatisfied", Error, "validate/requires.rs", "A pack's `requires:` names a skill, or a version range, that no embedded pack satisfies.";
    /// Packs requiring each other.
    RequiresCycle = "requires-cycle", Error, "validate/requires.rs", "Packs require each other in a cycle.";
    /// The agent requires what is not embedded.
    AgentRequiresUnsatisfied = "agent-requires-unsatisfied", Error, "validate/requires.rs", "The agent's `[requires]` (`skillbake.toml`, or `Config::require`) names a skill, or a version range, that no embedded pack satisfies.";
    /// A skill dependency in the old flat `requires:` form.
    RequiresDeprecated = "requires-deprecated", Warning, "validate/requires.rs", "A skill dependency written in the old flat form `requires: {NAME: RANGE}` instead of under `requires.skills`.";
    /// A change bigger than the version bump (`check --baseline`).
    VersionNotBumped = "version-not-bumped", Error, "diff/gate.rs", "Against the baseline (`check --baseline REV`), a pack changed without the version bump the change needs (major for breaking, minor for compatible).";
    /// A new permission (`check --baseline`).
    PermissionEscalation = "permission-escalation", Warning, "diff/gate.rs", "Against the baseline (`check --baseline REV`), a pack asks for a permission it did not have.";
    /// A vendored pack's files differ from `skills.lock` (`check --locked`).
    LockMismatch = "lock-mismatch", Error, "vendor/lock.rs", "With `check --locked`, a vendored pack's files no longer match `skills.lock`: a file changed, was added or was removed since `skillbake add` or `skillbake update` wrote it.";
    /// `skills.lock` missing or malformed (`check --locked`).
    LockInvalid = "lock-invalid", Error, "vendor/lock.rs", "With `check --locked`, `skills.lock` is missing, is not valid TOML, or holds an entry skillbake cannot read.";
    /// A routing test case that does not route as declared.
    RouteTestFailed = "route-test-failed", Error, "validate/route.rs", "A request in a pack's `route_tests` does not route as declared: a `match` request misses the top `[route] top`, or a `no_match` request reaches it.";
    /// Two packs that routing cannot tell apart.
    DescriptionNearDuplicate = "description-near-duplicate", Warning, "validate/route.rs", "On a pack's own description, another pack scores nearly as high (`[route] duplicate-threshold`): routing cannot tell them apart.";
    /// The catalog costs more than the configured budget.
    CatalogOverBudget = "catalog-over-budget", Error, "validate/route.rs", "The full skill catalog costs more than `[catalog] max-tokens` or `max-chars` in `skillbake.toml`.";
    /// `entrypoint` names no file of the pack.
    EntrypointNotFound = "entrypoint-not-found", Error, "validate/entrypoint.rs", "`entrypoint` does not name a file of the pack (a `/`-separated path relative to the pack, without `..`).";
    /// `entrypoint` names a binary file.
    EntrypointBinary = "entrypoint-binary", Error, "validate/entrypoint.rs", "The `entrypoint` is a binary file, not a script an interpreter can run.";
    /// No known interpreter runs the entrypoint.
    UnknownInterpreter = "unknown-interpreter", Error, "validate/entrypoint.rs", "Neither the `#!` line nor the extension of the `entrypoint` names an interpreter skillbake can start (python3, bash, sh, node).";
    /// A runnable pack without `schema.json`.
    SchemaMissing = "schema-missing", Warning, "validate/entrypoint.rs", "A runnable pack (one with an `entrypoint`) has no `schema.json`, so the parameters of a call cannot be checked.";
    /// `timeout` out of range.
    TimeoutInvalid = "timeout-invalid", Error, "validate/entrypoint.rs", "`timeout` is not a number of seconds above 0 and at most 86400 (one day).";
    /// `permission` outside the vocabulary.
    UnknownPermission = "unknown-permission", Error, "validate/permission.rs", "`permission` names something outside the permission vocabulary (network, smtp, filesystem:read, filesystem:write, filesystem, subprocess).";
    /// A YAML flow-style list or mapping, which the reference validator rejects.
    FlowStyle = "flow-style", Error, "validate/flow.rs", "The frontmatter writes a list or mapping in YAML flow style (`[a, b]`, `{k: v}`), which the Agent Skills reference validator rejects (an error in the `agentskills` profile, allowed in the others).";
    /// A tab outside quotes that PyYAML refuses.
    YamlTab = "yaml-tab", Error, "validate/yaml_tab.rs", "The frontmatter holds a tab outside quotes, block scalars and comments (in a plain value, after a `:`, at the end of a line), which PyYAML refuses: DB-GPT and the Agent Skills reference validator skip the pack.";
    /// A ` #` that cuts a plain value short.
    YamlInlineComment = "yaml-inline-comment", Warning, "validate/inline_comment.rs", "A `#` after whitespace in a plain (unquoted) text value starts a YAML comment, so every loader drops it and the rest of the line from the value.";
    /// The body points at a file of its pack that is not there.
    ReferenceMissing = "reference-missing", Warning, "validate/references.rs", "The body points at a file of its pack that is not there: a relative link, or a `references/`, `scripts/` or `assets/` path in a code span.";
    /// `allowed-tools` names an unknown tool or a malformed pattern.
    AllowedToolsUnknown = "allowed-tools-unknown", Warning, "validate/allowed_tools.rs", "`allowed-tools` names a tool no agent has (Claude Code, Codex, DB-GPT, or `[tools] known` in `skillbake.toml`), or writes a malformed pattern such as `Bash(git:*`.";
    /// Text hidden from a human reviewer.
    HiddenText = "hidden-text", Error, "validate/security/hidden.rs", "A file holds text a reviewer does not see but the model reads: bidi overrides, tag characters, zero-width runs, instructions in HTML comments, or padding that pushes content out of view.";
    /// Instructions that take the agent over.
    AgentHijack = "agent-hijack", Error, "validate/security/hijack.rs", "Text tells the agent to ignore its instructions, poses as a system message, hides things from the user or switches off confirmations (English and Chinese).";
    /// Secrets read and data sent out.
    CredentialHarvest = "credential-harvest", Error, "validate/security/harvest.rs", "The pack reads secrets (SSH or cloud keys, browser data, keychains, wallets, `.env`, the whole environment) and sends data out, or sends to a known collection endpoint.";
    /// Download and execute.
    DownloadExec = "download-exec", Error, "validate/security/fetch_exec.rs", "Code fetched at run time is executed at once (`curl … | sh`, a downloaded \"prerequisite\" run, a download cradle, a password-protected archive, a program from a downloaded archive, a script from a paste site run in a terminal).";
    /// Decoded blobs executed.
    ObfuscatedExec = "obfuscated-exec", Error, "validate/security/obfuscation.rs", "Decoded or assembled data is handed to `eval`, `exec` or a shell (`base64 -d | sh`, `exec(b64decode(…))`, `eval(atob(…))`).";
    /// Code installed to run again later.
    Persistence = "persistence", Warning, "validate/security/persistence.rs", "A script or instruction installs something that runs outside the task: a cron job, a shell start file line, a git hook, a service or autorun entry, an `authorized_keys` key.";
    /// Capabilities used but not declared.
    UndeclaredCapability = "undeclared-capability", Warning, "validate/security/capabilities.rs", "A script of a pack that declares its permissions uses the network, other programs or writes outside `OUTPUT_DIR` without `permission:` saying so, or the body runs shell commands `allowed-tools` does not allow.";
    /// Binary content where text is expected.
    BinaryPayload = "binary-payload", Warning, "validate/security/binary.rs", "A pack holds compiled Python, an executable or shared library, an archive, or an Office file that can carry macros: content no reviewer can read.";
    /// Lines of `SKILL.md` ending with CRLF or a lone CR.
    LineEndings = "line-endings", Warning, "validate/line_endings.rs", "`SKILL.md` has lines that end with CRLF or a lone CR instead of LF, which hosts that find the frontmatter by `---` and a line feed do not read.";
    /// Lines of a shell script ending with CRLF or a lone CR.
    ShellLineEndings = "shell-line-endings", Warning, "validate/line_endings.rs", "A shell script (bash or sh, by its #! line or extension) ends lines with CRLF or a lone CR, which the shell reads as part of every command.";
}

/// The name of the `security` group of codes (`-D security`, `[lints] security = "deny"`).
pub const SECURITY: &str = "security";

impl Code {
    /// The group the code belongs to: `Some("security")` for the rules that look for malicious
    /// or injected content, `None` for the rest.
    pub fn group(self) -> Option<&'static str> {
        self.module()
            .starts_with("validate/security/")
            .then_some(SECURITY)
    }

    /// The codes a name given to `[lints]`, `-D`, `-W` or `-A` stands for: one code, or every
    /// code of a group (`security`).
    pub fn named(name: &str) -> Option<Vec<Code>> {
        if name == SECURITY {
            return Some(
                Code::ALL
                    .iter()
                    .copied()
                    .filter(|c| c.group().is_some())
                    .collect(),
            );
        }
        Code::from_name(name).map(|c| vec![c])
    }

    /// Hard errors cannot be allowed or downgraded: a pack with one of them cannot be embedded
    /// correctly (or the runtime's lookup rules would break).
    pub fn is_hard(self) -> bool {
        matches!(
            self,
            Code::IoError
                | Code::NestedPack
                | Code::SymlinkEscape
                | Code::SymlinkCycle
                | Code::UnsupportedFileType
                | Code::PathNotUtf8
                | Code::InvalidUtf8
                | Code::FrontmatterMissing
                | Code::FrontmatterUnterminated
                | Code::FrontmatterEmpty
                | Code::FrontmatterNotMapping
                | Code::YamlSyntax
                | Code::YamlLimit
                | Code::DuplicateKey
                | Code::NameMissing
                | Code::DuplicateName
                | Code::ConfigInvalid
                | Code::DuplicateVersion
        )
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A 1-based line and column, plus the length of the highlighted text in characters
/// (0 when only a point is known).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Position {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, counted in Unicode scalar values.
    pub column: u32,
    /// Number of characters to underline (0: just a point).
    #[serde(skip)]
    pub len: u32,
}

impl Position {
    /// A point with nothing to underline.
    pub fn point(line: u32, column: u32) -> Self {
        Position {
            line,
            column,
            len: 0,
        }
    }

    /// A span of `len` characters starting at `line`:`column`.
    pub fn span(line: u32, column: u32, len: u32) -> Self {
        Position { line, column, len }
    }
}

/// Another place a diagnostic points at, with what it is (a secondary label, as cargo-deny and
/// rustc draw them): the first declaration of a duplicate, a line that almost closes a block.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Related {
    /// The file, `/`-separated and relative to the checked root (as [`Diagnostic::file`]).
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<u32>,
    /// 1-based column, when known.
    pub column: Option<u32>,
    /// Characters to underline at `line`:`column`.
    #[serde(skip)]
    pub len: u32,
    /// What is there, e.g. `first declared here`.
    pub message: String,
}

/// One problem found in the skills tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Stable code.
    pub code: Code,
    /// Error or warning.
    pub severity: Severity,
    /// The group of the code (`"security"`), omitted from JSON when it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<&'static str>,
    /// The file concerned, `/`-separated and relative to the checked root.
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<u32>,
    /// 1-based column, when known.
    pub column: Option<u32>,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
    /// Extra context that has no place of its own (places go in `related`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Other places this diagnostic points at (omitted from JSON when empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<Related>,
    /// Characters to underline at `line`:`column`.
    #[serde(skip)]
    pub len: u32,
    /// The profile does not change this one's level (it concerns something the profile's
    /// runtime cannot serve either); `[lints]` and the command line still do.
    #[serde(skip)]
    pub profile_exempt: bool,
    /// The severity the pack's own `[packs.NAME.lints]` sets, which wins over the project's.
    #[serde(skip)]
    pub pack_level: Option<Severity>,
    /// The mechanical change that resolves it, when one is safe (`check --fix`, an editor's
    /// code action).
    #[serde(skip)]
    pub fix: Option<Box<Fix>>,
}

/// A mechanical change that resolves a diagnostic: edits of the diagnostic's file, and the
/// folder rename it needs, if any. Applying it changes nothing but what it says.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fix {
    /// What it does, for humans (`quote the value of \`description\``).
    pub message: String,
    /// Replacements in [`Diagnostic::file`], by byte range of the text that was checked;
    /// they do not overlap.
    pub edits: Vec<Edit>,
    /// The new name of the pack's folder, when the fix is only complete with it renamed
    /// (applied only when asked: `check --fix --rename-dirs`).
    pub rename_dir: Option<String>,
}

/// One replacement: bytes `start..end` of a file become `text`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Edit {
    /// First byte replaced.
    pub start: usize,
    /// One past the last byte replaced (`start` for an insertion).
    pub end: usize,
    /// What replaces them.
    pub text: String,
}

impl Fix {
    /// A fix of one edit.
    pub fn replace(
        message: impl Into<String>,
        start: usize,
        end: usize,
        text: impl Into<String>,
    ) -> Fix {
        Fix {
            message: message.into(),
            edits: vec![Edit {
                start,
                end,
                text: text.into(),
            }],
            rename_dir: None,
        }
    }
}

impl Diagnostic {
    /// A diagnostic with the code's default severity and no position.
    pub fn new(code: Code, file: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            severity: code.default_severity(),
            group: code.group(),
            file: file.into(),
            line: None,
            column: None,
            message: message.into(),
            help: None,
            note: None,
            related: Vec::new(),
            len: 0,
            profile_exempt: false,
            pack_level: None,
            fix: None,
        }
    }

    /// Attaches the fix.
    pub fn with_fix(mut self, fix: Fix) -> Self {
        self.fix = Some(Box::new(fix));
        self
    }

    /// Sets the position.
    pub fn at(mut self, pos: Option<Position>) -> Self {
        if let Some(p) = pos {
            self.line = Some(p.line);
            self.column = Some(p.column);
            self.len = p.len;
        }
        self
    }

    /// Keeps the profile from changing this diagnostic's level (see
    /// [`Diagnostic::profile_exempt`]).
    pub fn profile_exempt(mut self) -> Self {
        self.profile_exempt = true;
        self
    }

    /// Sets the fix.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Sets a note.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }

    /// Adds another place this diagnostic points at.
    pub fn related(
        mut self,
        file: impl Into<String>,
        pos: Option<Position>,
        message: impl Into<String>,
    ) -> Self {
        self.related.push(Related {
            file: file.into(),
            line: pos.map(|p| p.line),
            column: pos.map(|p| p.column),
            len: pos.map_or(0, |p| p.len),
            message: message.into(),
        });
        self
    }

    /// The sort key that makes reports deterministic.
    pub(crate) fn sort_key(&self) -> (&str, u32, u32, Code, &str) {
        (
            self.file.as_str(),
            self.line.unwrap_or(0),
            self.column.unwrap_or(0),
            self.code,
            self.message.as_str(),
        )
    }
}

/// Sorts diagnostics by file, position and code, and drops exact duplicates.
pub fn sort(diags: &mut Vec<Diagnostic>) {
    diags.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    diags.dedup();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_kebab_case_and_round_trip() {
        let mut seen = std::collections::BTreeSet::new();
        for &code in Code::ALL {
            let s = code.as_str();
            assert!(seen.insert(s), "duplicate code {s}");
            assert!(
                s.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{s}"
            );
            assert_eq!(Code::from_name(s), Some(code));
        }
    }
}
