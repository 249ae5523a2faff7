//! The YAML error mapping: turns the YAML library's errors into `yaml-syntax`, `yaml-limit` and
//! `duplicate-key` diagnostics with file positions.
//!
//! `yaml_serde` exposes no error kinds (its error enum is private), only messages. So the message
//! is classified once, by [`YamlErrorKind::of`] and the [`PATTERNS`] table, and every pattern is
//! pinned by a test that feeds the library an input producing it: if a release rewords a
//! message, that test fails instead of the rule silently changing.

use super::keys::second_key_occurrence;
use super::quote::quote_value;
use crate::diagnostic::{Code, Diagnostic, Position};
use crate::source::{to_u32, LineIndex};

/// What a YAML error is about, as far as skillbake's diagnostics care.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum YamlErrorKind {
    /// Nesting deeper than the library's recursion limit (128 levels).
    NestingDepth,
    /// An alias bomb: more alias expansions than the library's repetition limit.
    AliasBomb,
    /// A key given twice in one mapping (the key as the library prints it, quotes removed).
    DuplicateKey(String),
    /// A `---` or `...` marker inside the frontmatter: several YAML documents.
    SeveralDocuments,
    /// Any other syntax error, with the help that fits it best.
    Syntax(&'static str),
}

/// Message fragments of the library, and what they mean. The order matters: the first match wins.
pub(crate) const PATTERNS: &[(&str, Pattern)] = &[
    ("recursion limit exceeded", Pattern::NestingDepth),
    ("repetition limit exceeded", Pattern::AliasBomb),
    ("duplicate entry with key ", Pattern::DuplicateKey),
    ("more than one document", Pattern::SeveralDocuments),
    ("a tab character", Pattern::Hint(TAB_HELP)),
    (
        "mapping values are not allowed",
        Pattern::Hint(
            "a value containing `: ` must be quoted, e.g. `description: \"Use when: ...\"`",
        ),
    ),
    (
        "found character that cannot start any token",
        Pattern::CannotStart(
            "quote the value; characters such as `@` and `` ` `` cannot start a plain YAML value",
        ),
    ),
];

/// The help for tabs used as indentation.
const TAB_HELP: &str = "indent with spaces; YAML does not allow tabs for indentation";

/// The help of a syntax error no pattern matches.
const GENERIC_HELP: &str =
    "fix the YAML syntax; quote values that contain `:`, `#`, `[`, `{` or start with a symbol";

/// What a fragment of [`PATTERNS`] stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pattern {
    /// [`YamlErrorKind::NestingDepth`].
    NestingDepth,
    /// [`YamlErrorKind::AliasBomb`].
    AliasBomb,
    /// [`YamlErrorKind::DuplicateKey`]; the key follows the fragment.
    DuplicateKey,
    /// [`YamlErrorKind::SeveralDocuments`].
    SeveralDocuments,
    /// A syntax error with this help.
    Hint(&'static str),
    /// A character no token starts with: a tab (indentation) gets the tab help, others this one.
    CannotStart(&'static str),
}

impl YamlErrorKind {
    /// Classifies a message of the library (without its ` at line L column C` suffix);
    /// `offending` is the character at the error's position, when known.
    pub(crate) fn of(message: &str, offending: Option<char>) -> YamlErrorKind {
        for (fragment, pattern) in PATTERNS {
            let Some(at) = message.find(fragment) else {
                continue;
            };
            return match pattern {
                Pattern::NestingDepth => YamlErrorKind::NestingDepth,
                Pattern::AliasBomb => YamlErrorKind::AliasBomb,
                Pattern::DuplicateKey => {
                    let key = message.get(at + fragment.len()..).unwrap_or("");
                    YamlErrorKind::DuplicateKey(key.trim().trim_matches('"').to_string())
                }
                Pattern::SeveralDocuments => YamlErrorKind::SeveralDocuments,
                Pattern::Hint(help) => YamlErrorKind::Syntax(help),
                Pattern::CannotStart(_) if offending == Some('\t') => {
                    YamlErrorKind::Syntax(TAB_HELP)
                }
                Pattern::CannotStart(help) => YamlErrorKind::Syntax(help),
            };
        }
        YamlErrorKind::Syntax(GENERIC_HELP)
    }
}

/// The library's message without the ` at line L column C` it appends with frontmatter-relative
/// numbers (the diagnostic carries file-relative ones).
fn message(err: &yaml_serde::Error) -> String {
    let mut raw = err.to_string();
    if let Some(i) = raw.find(" at line ") {
        raw.truncate(i);
    }
    raw
}

/// The diagnostic for a YAML error in the frontmatter `fm_text`, which starts at byte
/// `fm_start` (line `line_shift + 1`) of the file `text`.
pub(super) fn yaml_error(
    err: &yaml_serde::Error,
    text: &str,
    fm_start: usize,
    fm_text: &str,
    line_shift: u32,
    idx: &LineIndex<'_>,
    file: &str,
) -> Diagnostic {
    let message = message(err);
    let loc = err.location();
    let pos = loc.as_ref().map(|l| {
        let offset = fm_start + l.index().min(fm_text.len());
        let p = idx.position(offset, 1);
        Position::span(to_u32(l.line()) + line_shift, p.column, 1)
    });
    let start = || Some(idx.position(fm_start, 0));
    let offending = loc
        .as_ref()
        .and_then(|l| text.get(fm_start + l.index().min(fm_text.len())..))
        .and_then(|rest| rest.chars().next());
    match YamlErrorKind::of(&message, offending) {
        YamlErrorKind::NestingDepth => Diagnostic::new(
            Code::YamlLimit,
            file,
            "the frontmatter nests deeper than 128 levels",
        )
        .at(pos)
        .help("flatten the structure; frontmatter holds metadata, not data"),
        YamlErrorKind::AliasBomb => Diagnostic::new(
            Code::YamlLimit,
            file,
            "the frontmatter expands too many YAML aliases (an alias bomb)",
        )
        .at(pos.or_else(start))
        .help("write values out instead of repeating `*alias` references"),
        YamlErrorKind::DuplicateKey(key) => {
            let from = loc
                .as_ref()
                .map_or(fm_start, |l| fm_start + l.index().min(fm_text.len()));
            let second = second_key_occurrence(text, from, fm_start + fm_text.len(), &key);
            let pos = second.map(|o| idx.position(o, key.chars().count())).or(pos);
            Diagnostic::new(
                Code::DuplicateKey,
                file,
                format!("key `{key}` appears more than once in the same mapping"),
            )
            .at(pos)
            .help("keep one of the entries; YAML loaders differ on which one wins")
        }
        YamlErrorKind::SeveralDocuments => Diagnostic::new(
            Code::YamlSyntax,
            file,
            "the frontmatter holds more than one YAML document (a `...` or `---` marker inside it)",
        )
        .at(pos.or_else(start))
        .help("remove the document marker; the frontmatter is a single mapping"),
        YamlErrorKind::Syntax(help) => {
            let d = Diagnostic::new(
                Code::YamlSyntax,
                file,
                format!("invalid YAML in the frontmatter: {message}"),
            )
            .at(pos)
            .help(help);
            let quotable = help != TAB_HELP && help != GENERIC_HELP;
            let at = loc
                .as_ref()
                .map(|l| fm_start + l.index().min(fm_text.len()));
            match at
                .filter(|_| quotable)
                .and_then(|at| quote_value(text, at, fm_start + fm_text.len()))
            {
                Some(fix) => d.with_fix(fix),
                None => d,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use yaml_serde::Value;

    /// The message the library gives for `yaml`, which must not parse, and the character at
    /// the error's position.
    fn library_error(yaml: &str) -> (String, Option<char>) {
        match yaml_serde::from_str::<Value>(yaml) {
            Ok(v) => unreachable!("{yaml:?} parsed as {v:?}"),
            Err(e) => {
                let at = e
                    .location()
                    .and_then(|l| yaml.get(l.index()..)?.chars().next());
                (message(&e), at)
            }
        }
    }

    fn alias_bomb() -> String {
        let mut s = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
        for (prev, name) in "abcdefgh".chars().zip("bcdefghi".chars()) {
            s.push_str(&format!(
                "{name}: &{name} [{}]\n",
                vec![format!("*{prev}"); 9].join(", ")
            ));
        }
        s
    }

    /// One input per pattern, with the kind it must give: if the library rewords a message, the
    /// input falls through to another kind and this test names the pattern that broke.
    #[test]
    fn every_pattern_is_pinned_to_the_library_message() {
        let cases: Vec<(String, YamlErrorKind)> = vec![
            (format!("a: {}", "[".repeat(200)), YamlErrorKind::NestingDepth),
            (alias_bomb(), YamlErrorKind::AliasBomb),
            (
                "name: a\nname: b\n".into(),
                YamlErrorKind::DuplicateKey("name".into()),
            ),
            ("name: a\n--- x\nb: c\n".into(), YamlErrorKind::SeveralDocuments),
            ("name: a\n...\nb: c\n".into(), YamlErrorKind::SeveralDocuments),
            (
                "description: Use when: x\n".into(),
                YamlErrorKind::Syntax(
                    "a value containing `: ` must be quoted, e.g. `description: \"Use when: ...\"`",
                ),
            ),
            (
                "description: @me\n".into(),
                YamlErrorKind::Syntax(
                    "quote the value; characters such as `@` and `` ` `` cannot start a plain YAML value",
                ),
            ),
            ("a: b\n\tc: d\n".into(), YamlErrorKind::Syntax(TAB_HELP)),
            ("a: |\n\tx\n".into(), YamlErrorKind::Syntax(TAB_HELP)),
            // A tab where a key should start: the library says "cannot start any token".
            ("config:\n\tx: 1\n".into(), YamlErrorKind::Syntax(TAB_HELP)),
            ("a: [b\n".into(), YamlErrorKind::Syntax(GENERIC_HELP)),
        ];
        for (yaml, kind) in &cases {
            let (message, at) = library_error(yaml);
            assert_eq!(
                &YamlErrorKind::of(&message, at),
                kind,
                "{yaml:?} gave {message:?}"
            );
        }
        // Every pattern of the table is exercised by a case above.
        for (fragment, _) in PATTERNS {
            assert!(
                cases
                    .iter()
                    .any(|(yaml, _)| library_error(yaml).0.contains(fragment)),
                "no case pins `{fragment}`"
            );
        }
    }

    fn diagnose(src: &str) -> Vec<Diagnostic> {
        let mut d = Vec::new();
        let _ = super::super::frontmatter::parse(src.as_bytes(), "SKILL.md", &mut d);
        d
    }

    #[test]
    fn nesting_depth_is_a_limit_at_the_deep_value() {
        let d = diagnose(&format!("---\nname: a\nx: {}\n---\nb", "[".repeat(200)));
        assert_eq!(d.len(), 1);
        let d = &d[0];
        assert_eq!(d.code, Code::YamlLimit);
        assert_eq!(d.message, "the frontmatter nests deeper than 128 levels");
        assert_eq!(d.line, Some(3));
    }

    #[test]
    fn several_documents_are_a_syntax_error() {
        for src in [
            "---\nname: a\n...\nb: c\n---\nbody",
            "---\nname: a\n--- # second\nb: c\n---\nbody",
        ] {
            // A `---` marker is also where DB-GPT would split (`frontmatter-dashes`).
            let d: Vec<_> = diagnose(src)
                .into_iter()
                .filter(|d| d.code != Code::FrontmatterDashes)
                .collect();
            assert_eq!(d.len(), 1, "{src:?}: {d:?}");
            assert_eq!(d[0].code, Code::YamlSyntax);
            assert!(
                d[0].message.contains("more than one YAML document"),
                "{d:?}"
            );
            assert!(d[0].line.is_some());
        }
    }

    #[test]
    fn other_syntax_errors_keep_the_library_message() {
        let d = diagnose("---\nname: a\nx: [b\n---\nbody");
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].code, Code::YamlSyntax);
        assert!(d[0]
            .message
            .starts_with("invalid YAML in the frontmatter: "));
        assert!(!d[0].message.contains(" at line "), "{}", d[0].message);
        assert_eq!(d[0].help.as_deref(), Some(GENERIC_HELP));
    }
}
