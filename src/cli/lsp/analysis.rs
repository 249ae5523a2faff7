//! What the language server knows about one document: the diagnostics of `skillbake check` on
//! the pack as the editor holds it (unsaved buffers over the files on disk, the configuration's
//! buffer too), or on the folder a `skillbake.toml` governs; the code actions of their fixes,
//! hover text for frontmatter keys and the completions of keys and permissions.

use super::text::Lines;
use lsp_types::{
    CodeAction, CodeActionKind, CompletionItem, CompletionItemKind, Diagnostic,
    DiagnosticRelatedInformation, DiagnosticSeverity, Documentation, Hover, HoverContents,
    Location, MarkupContent, MarkupKind, NumberOrString, Position, Range, TextEdit, Url,
    WorkspaceEdit,
};
use skillbake_build::{CheckOptions, Severity, KNOWN_FIELDS};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The files of a pack the server checks and publishes diagnostics for.
pub const CHECKED_FILES: [&str; 2] = ["SKILL.md", "schema.json"];

/// The project configuration, whose buffer the checks of the packs under it read.
pub const CONFIG_FILE: &str = "skillbake.toml";

/// The configuration a check reads: the `skillbake.toml` that applies and, when the editor
/// holds it, its buffer's text (then the file need not exist on disk).
pub struct Config<'a> {
    /// The file.
    pub path: PathBuf,
    /// The open buffer's text.
    pub text: Option<&'a str>,
}

/// The check of one pack folder with the open buffers `open` (file name → text) in place of
/// the files on disk: every diagnostic, by file name, and the texts they were found in.
pub struct PackCheck {
    /// The diagnostics of each file.
    pub by_file: BTreeMap<String, Vec<skillbake_build::Diagnostic>>,
    /// The texts checked (the buffer, else the file on disk), by file name.
    pub texts: BTreeMap<String, String>,
}

impl PackCheck {
    /// The diagnostics of `checked` by file, with the texts they point into: the report's
    /// sources, and `files` (the buffer, else the file on disk under `root`).
    fn of(
        checked: skillbake_build::Checked,
        root: &Path,
        files: &[&str],
        open: &dyn Fn(&str) -> Option<String>,
    ) -> PackCheck {
        let mut by_file: BTreeMap<String, Vec<skillbake_build::Diagnostic>> = BTreeMap::new();
        for d in checked.report.diagnostics {
            by_file.entry(d.file.clone()).or_default().push(d);
        }
        let mut texts = checked.report.sources;
        for &name in files {
            let text = open(name).or_else(|| std::fs::read_to_string(root.join(name)).ok());
            if let Some(t) = text {
                texts.insert(name.to_string(), t);
            }
        }
        PackCheck { by_file, texts }
    }
}

/// Checks the pack at `pack` with the buffers of `open` over its files, under `config` (as
/// `check` on the skills root would, with that configuration).
pub fn check_pack(
    pack: &Path,
    open: &BTreeMap<String, String>,
    config: Option<&Config<'_>>,
) -> PackCheck {
    let opts = CheckOptions {
        // The pack's own `skillbake.toml` is the one `check` reads at the root; another is given.
        config_file: config
            .filter(|c| c.path.parent() != Some(pack))
            .map(|c| c.path.clone()),
        config_text: config.and_then(|c| c.text).map(str::to_string),
        // An editor shows diagnostics, not the catalog's cost.
        without_cost: true,
        ..CheckOptions::default()
    };
    let overlay: Vec<(String, Vec<u8>)> = open
        .iter()
        .map(|(p, t)| (p.clone(), t.clone().into_bytes()))
        .collect();
    let checked = skillbake_build::check_overlay(pack, &opts, &overlay);
    PackCheck::of(checked, pack, &CHECKED_FILES, &|name| {
        open.get(name).cloned()
    })
}

/// Checks `dir`, the folder that holds a `skillbake.toml` (`text`: its buffer, when open), as
/// `check` on it would, with the open files of its packs (`open`: `/`-separated paths relative
/// to `dir`, and texts) in place of the files on disk.
pub fn check_config(dir: &Path, text: Option<&str>, open: &[(String, Vec<u8>)]) -> PackCheck {
    let opts = CheckOptions {
        config_text: text.map(str::to_string),
        without_cost: true,
        ..CheckOptions::default()
    };
    let checked = skillbake_build::check_overlay(dir, &opts, open);
    PackCheck::of(checked, dir, &[CONFIG_FILE], &|_| text.map(str::to_string))
}

/// The message an editor shows: the compiler's message, its help and its note.
fn message(d: &skillbake_build::Diagnostic) -> String {
    let mut m = d.message.clone();
    if let Some(help) = &d.help {
        m.push_str("\nhelp: ");
        m.push_str(help);
    }
    if let Some(note) = &d.note {
        m.push_str("\nnote: ");
        m.push_str(note);
    }
    m
}

/// Where a diagnostic of the compiler sits in `lines`: its span, or its line's start, or the
/// start of the file.
fn range_of(d: &skillbake_build::Diagnostic, lines: &Lines<'_>) -> Range {
    match (d.line, d.column) {
        (Some(l), Some(c)) => lines.span(l, c, d.len),
        (Some(l), None) => lines.span(l, 1, 0),
        _ => Range::default(),
    }
}

/// The compiler's diagnostics of one file as LSP diagnostics (`uri` is the file's, `pack_uri`
/// maps another file of the pack to its URI for related places).
pub fn to_lsp(
    diags: &[skillbake_build::Diagnostic],
    text: &str,
    texts: &BTreeMap<String, String>,
    uri_of: &dyn Fn(&str) -> Option<Url>,
) -> Vec<Diagnostic> {
    let lines = Lines::new(text);
    diags
        .iter()
        .map(|d| {
            let related: Vec<DiagnosticRelatedInformation> = d
                .related
                .iter()
                .filter_map(|r| {
                    let uri = uri_of(&r.file)?;
                    let other = texts.get(&r.file)?;
                    let lines = Lines::new(other);
                    let range = match (r.line, r.column) {
                        (Some(l), Some(c)) => lines.span(l, c, r.len),
                        (Some(l), None) => lines.span(l, 1, 0),
                        _ => Range::default(),
                    };
                    Some(DiagnosticRelatedInformation {
                        location: Location::new(uri, range),
                        message: r.message.clone(),
                    })
                })
                .collect();
            Diagnostic {
                range: range_of(d, &lines),
                severity: Some(match d.severity {
                    Severity::Error => DiagnosticSeverity::ERROR,
                    Severity::Warning => DiagnosticSeverity::WARNING,
                }),
                code: Some(NumberOrString::String(d.code.as_str().to_string())),
                source: Some("skillbake".to_string()),
                message: message(d),
                related_information: (!related.is_empty()).then_some(related),
                ..Diagnostic::default()
            }
        })
        .collect()
}

/// The code actions of the fixes of `diags` (in `text`, the file at `uri`) whose diagnostics
/// touch `range`. A fix that needs a folder renamed is not offered (`check --fix --rename-dirs`
/// does it).
pub fn code_actions(
    diags: &[skillbake_build::Diagnostic],
    text: &str,
    uri: &Url,
    range: Range,
) -> Vec<CodeAction> {
    let lines = Lines::new(text);
    let lsp = to_lsp(diags, text, &BTreeMap::new(), &|_| None);
    diags
        .iter()
        .zip(lsp)
        .filter_map(|(d, ld)| {
            let fix = d.fix.as_deref()?;
            if fix.rename_dir.is_some() || fix.edits.is_empty() {
                return None;
            }
            let r = ld.range;
            let touches = r.start <= range.end && range.start <= r.end;
            if !touches {
                return None;
            }
            let edits: Vec<TextEdit> = fix
                .edits
                .iter()
                .map(|e| TextEdit {
                    range: Range::new(lines.position(e.start), lines.position(e.end)),
                    new_text: e.text.clone(),
                })
                .collect();
            Some(CodeAction {
                title: fix.message.clone(),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![ld]),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(uri.clone(), edits)])),
                    ..WorkspaceEdit::default()
                }),
                is_preferred: Some(true),
                ..CodeAction::default()
            })
        })
        .collect()
}

/// The 0-based lines of the frontmatter's content (after the opening `---`, before the
/// closing one, or to the end when it is unclosed); `None` without an opening line.
fn frontmatter_lines(lines: &Lines<'_>) -> Option<std::ops::Range<usize>> {
    let first = lines.line(0).trim_start_matches('\u{feff}');
    if first.trim_end() != "---" {
        return None;
    }
    let end = (1..lines.count())
        .find(|&l| lines.line(l) == "---")
        .unwrap_or(lines.count());
    Some(1..end)
}

/// The top-level key written at the start of `line`, and its length in bytes.
fn key_at_start(line: &str) -> Option<&str> {
    let colon = line.find(':')?;
    let key = line.get(..colon)?;
    let ok = !key.is_empty()
        && !key.starts_with([' ', '\t', '-', '#'])
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '_');
    ok.then_some(key)
}

/// Hover on a top-level frontmatter key of a `SKILL.md`: what the field means.
pub fn hover(text: &str, pos: Position) -> Option<Hover> {
    let lines = Lines::new(text);
    let line = pos.line as usize;
    if !frontmatter_lines(&lines)?.contains(&line) {
        return None;
    }
    let key = key_at_start(lines.line(line))?;
    let width = super::text::utf16_len(key);
    if pos.character as usize > width {
        return None;
    }
    let field = KNOWN_FIELDS.iter().find(|f| f.name == key)?;
    let value = format!(
        "**`{}`**: {}\n\n{}\n\n*{}*",
        field.name,
        field.expects(),
        field.meaning,
        field.source
    );
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value,
        }),
        range: Some(Range::new(
            Position::new(pos.line, 0),
            Position::new(pos.line, super::text::utf16_len(key) as u32),
        )),
    })
}

/// Completions at `pos` in a `SKILL.md`: the known keys at the start of a frontmatter line
/// (those not written yet), the permission names in the `permission` field's list.
pub fn completion(text: &str, pos: Position) -> Vec<CompletionItem> {
    let lines = Lines::new(text);
    let line = pos.line as usize;
    let Some(fm) = frontmatter_lines(&lines) else {
        return Vec::new();
    };
    if !fm.contains(&line) {
        return Vec::new();
    }
    let current = lines.line(line);
    let offset = lines.offset(pos);
    let line_start = lines.offset(Position::new(pos.line, 0));
    let before = current
        .get(..offset.saturating_sub(line_start))
        .unwrap_or(current);
    if in_permission(&lines, fm.start, line, before) {
        let written: Vec<&str> = (fm.start..fm.end).map(|l| lines.line(l).trim()).collect();
        return skillbake_format::permission::ALL
            .iter()
            .filter(|p| !written.iter().any(|w| w.trim_start_matches("- ") == p.name))
            .map(|p| CompletionItem {
                label: p.name.to_string(),
                kind: Some(CompletionItemKind::ENUM_MEMBER),
                detail: Some("permission".to_string()),
                documentation: Some(Documentation::String(p.summary.to_string())),
                ..CompletionItem::default()
            })
            .collect();
    }
    let typing_key = !before.contains(':')
        && !before.starts_with([' ', '\t', '-', '#'])
        && before
            .chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '_');
    if !typing_key {
        return Vec::new();
    }
    let present: Vec<&str> = fm
        .filter(|&l| l != line)
        .filter_map(|l| key_at_start(lines.line(l)))
        .collect();
    KNOWN_FIELDS
        .iter()
        .filter(|f| !present.contains(&f.name))
        .map(|f| CompletionItem {
            label: f.name.to_string(),
            kind: Some(CompletionItemKind::FIELD),
            detail: Some(f.expects().to_string()),
            documentation: Some(Documentation::MarkupContent(MarkupContent {
                kind: MarkupKind::Markdown,
                value: format!("{}\n\n*{}*", f.meaning, f.source),
            })),
            insert_text: Some(format!("{}: ", f.name)),
            ..CompletionItem::default()
        })
        .collect()
}

/// Whether `line` (its text up to the cursor is `before`) is an item of the `permission` list:
/// `permission: [` on the line itself, or a `- ` item below a `permission:` key.
fn in_permission(lines: &Lines<'_>, fm_start: usize, line: usize, before: &str) -> bool {
    if let Some(rest) = before.strip_prefix("permission:") {
        // A flow list on the key's own line.
        return rest.trim_start().starts_with('[');
    }
    if !before.trim_start().starts_with('-') {
        return false;
    }
    for l in (fm_start..line).rev() {
        let text = lines.line(l);
        if text.trim().is_empty() || text.trim_start().starts_with('-') {
            continue;
        }
        return key_at_start(text) == Some("permission")
            && text
                .split_once(':')
                .is_some_and(|(_, v)| v.trim().is_empty());
    }
    false
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests fail loudly by design

    use super::*;

    /// The `line-endings` fix as a code action: one edit per line break, each replacing a whole
    /// CRLF (end of one line to the start of the next) or lone CR with LF, which an editor
    /// applying them literally turns into the LF text.
    #[test]
    fn the_line_endings_action_replaces_whole_line_breaks() {
        let tmp = tempfile::tempdir().unwrap();
        let pack = tmp.path().join("my-skill");
        std::fs::create_dir(&pack).unwrap();
        let text = "---\r\nname: my-skill\r\ndescription: Summarise text.\n---\r\n\r# Body\r\n";
        let open = BTreeMap::from([("SKILL.md".to_string(), text.to_string())]);
        let checked = check_pack(&pack, &open, None);
        let diags = &checked.by_file["SKILL.md"];
        let uri = Url::from_file_path(pack.join("SKILL.md")).unwrap();
        let all = Range::new(Position::new(0, 0), Position::new(99, 0));
        let actions = code_actions(diags, text, &uri, all);
        assert_eq!(actions.len(), 1, "{actions:?}");
        assert_eq!(actions[0].title, "end every line with LF");
        let edits = &actions[0].edit.as_ref().unwrap().changes.as_ref().unwrap()[&uri];
        let lines = Lines::new(text);
        let mut after = String::new();
        let mut at = 0;
        for e in edits {
            let (start, end) = (lines.offset(e.range.start), lines.offset(e.range.end));
            assert_eq!(e.range.end, Position::new(e.range.start.line + 1, 0));
            assert!(matches!(&text[start..end], "\r\n" | "\r"), "{e:?}");
            after.push_str(&text[at..start]);
            after.push_str(&e.new_text);
            at = end;
        }
        after.push_str(&text[at..]);
        assert_eq!(
            after,
            "---\nname: my-skill\ndescription: Summarise text.\n---\n\n# Body\n"
        );
    }
}
