//! Line endings other than LF, in whole or in part:
//!
//! * `line-endings`: in `SKILL.md`. skillbake reads all three endings (so do DB-GPT and the
//!   reference validator, which open the file with Python's universal newlines), but the file is
//!   embedded and served byte for byte, and many hosts find the frontmatter with a pattern such
//!   as `^---\n`: on a CRLF file that finds nothing, and the skill is skipped or loaded without
//!   its name and description.
//! * `shell-line-endings`: in a shell script, a file of the pack that bash or sh would run (by
//!   its `#!` line, else its extension: `skillbake_format::interpreter::detect`). Both shells
//!   read a `\r` before the line feed as part of the line, so the script fails (`$'\r': command
//!   not found`), whoever runs it: skillbake, DB-GPT or a reader following the instructions.
//!
//! Both fixes turn every CRLF and lone CR into LF and change no other byte.

use super::PackCtx;
use crate::diagnostic::{Code, Diagnostic, Edit, Fix};
use crate::discover::SKILL_MD;
use crate::source::LineIndex;
use skillbake_format::interpreter::{self, Interpreter};

/// How many lines of a text end each way, and where the first non-LF ending is.
#[derive(Debug, Default, PartialEq, Eq)]
struct Endings {
    crlf: usize,
    cr: usize,
    lf: usize,
    /// Byte offset of the first `\r` that ends a line.
    first: Option<usize>,
}

/// Counts the line endings of `text`; a `\r` followed by `\n` is one CRLF ending.
fn count(text: &str) -> Endings {
    let bytes = text.as_bytes();
    let mut e = Endings::default();
    // Most texts have no `\r`: every ending is then a line feed, counted without a byte loop.
    let Some(first) = memchr::memchr(b'\r', bytes) else {
        e.lf = memchr::memchr_iter(b'\n', bytes).count();
        return e;
    };
    e.first = Some(first);
    e.lf = memchr::memchr_iter(b'\n', &bytes[..first]).count();
    for (i, &b) in bytes.iter().enumerate().skip(first) {
        match b {
            b'\r' => {
                if bytes.get(i + 1) == Some(&b'\n') {
                    e.crlf += 1;
                } else {
                    e.cr += 1;
                }
            }
            b'\n' if i == 0 || bytes[i - 1] != b'\r' => e.lf += 1,
            _ => {}
        }
    }
    e
}

/// The edits that make every line of `text` end with LF: each `\r\n` and each lone `\r`
/// replaced by `\n` (a CRLF ending is replaced whole, so an editor sees one line break become
/// another, not a change inside a line).
pub fn to_lf(text: &str) -> Vec<Edit> {
    let bytes = text.as_bytes();
    let mut edits = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\r' {
            let end = if bytes.get(i + 1) == Some(&b'\n') {
                i + 2
            } else {
                i + 1
            };
            edits.push(Edit {
                start: i,
                end,
                text: "\n".into(),
            });
        }
    }
    edits
}

/// `N line(s)`.
fn lines(n: usize) -> String {
    if n == 1 {
        "1 line".into()
    } else {
        format!("{n} lines")
    }
}

/// What the endings of `file` (a name in backticks) are, in words.
fn describe(file: &str, e: &Endings) -> String {
    if e.lf == 0 && e.cr == 0 {
        return format!("{file} ends its lines with CRLF (`\\r\\n`), not LF (`\\n`)");
    }
    if e.lf == 0 && e.crlf == 0 {
        return format!("{file} ends its lines with a lone CR (`\\r`), not LF (`\\n`)");
    }
    let mut parts = Vec::new();
    if e.crlf > 0 {
        parts.push(format!("{} with CRLF (`\\r\\n`)", lines(e.crlf)));
    }
    if e.cr > 0 {
        parts.push(format!("{} with a lone CR (`\\r`)", lines(e.cr)));
    }
    if e.lf > 0 {
        parts.push(format!("{} with LF (`\\n`)", lines(e.lf)));
    }
    format!("{file} mixes line endings: {}", parts.join(", "))
}

/// Checks `line-endings` on one pack's `SKILL.md` and `shell-line-endings` on its shell
/// scripts.
pub fn check(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) {
    check_shell(ctx, diags);
    let text = &ctx.md.text;
    let endings = count(text);
    let Some(first) = endings.first else {
        return;
    };
    diags.push(
        Diagnostic::new(Code::LineEndings, &ctx.file, describe("`SKILL.md`", &endings))
            .at(Some(ctx.md.index().position(first, 1)))
            .help("save the file with LF line endings (`skillbake check --fix` does it): hosts that find the frontmatter by `---` and a line feed skip the skill; `SKILL.md text eol=lf` in `.gitattributes` keeps Git for Windows from checking it out with CRLF again")
            .with_fix(Fix {
                message: "end every line with LF".into(),
                edits: to_lf(text),
                rename_dir: None,
            }),
    );
}

/// Checks `shell-line-endings`: every text file of the pack that bash or sh would run.
fn check_shell(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) {
    for f in &ctx.pack.files {
        if f.path == SKILL_MD || memchr::memchr(b'\r', &f.bytes).is_none() {
            continue;
        }
        // Binary files are `binary-payload`'s and `entrypoint-binary`'s.
        let Ok(text) = std::str::from_utf8(&f.bytes) else {
            continue;
        };
        if text.contains('\0') {
            continue;
        }
        let shell = match interpreter::detect(&f.path, &f.bytes) {
            Ok(launch) if matches!(launch.interpreter, Interpreter::Bash | Interpreter::Sh) => {
                launch.interpreter.program()
            }
            _ => continue,
        };
        let endings = count(text);
        let Some(first) = endings.first else {
            continue;
        };
        let file = ctx.pack.display_path(&f.path);
        diags.push(
            Diagnostic::new(
                Code::ShellLineEndings,
                &file,
                format!(
                    "{}, and {shell} runs it",
                    describe(&format!("`{}`", f.path), &endings)
                ),
            )
            .at(Some(LineIndex::new(text).position(first, 1)))
            .help(format!(
                "save the script with LF line endings (`skillbake check --fix` does it): {shell} reads the `\\r` before each line feed as part of the line, so commands fail (`$'\\r': command not found`, `set: -: invalid option`) and redirections write to files whose names end in `\\r`; `*.sh text eol=lf` in `.gitattributes` keeps Git for Windows from checking it out with CRLF again"
            ))
            .with_fix(Fix {
                message: "end every line with LF".into(),
                edits: to_lf(text),
                rename_dir: None,
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` with `edits` (sorted, not overlapping) applied.
    fn apply(text: &str, edits: &[Edit]) -> String {
        let mut out = String::new();
        let mut at = 0;
        for e in edits {
            assert!(e.start >= at && e.end > e.start);
            out.push_str(&text[at..e.start]);
            out.push_str(&e.text);
            at = e.end;
        }
        out + &text[at..]
    }

    proptest::proptest! {
        /// Every `\n` not after a `\r` is an LF ending, every `\r` a CRLF or CR one, however
        /// the count skips ahead.
        #[test]
        fn counts_match_a_byte_by_byte_walk(text in "[ab\r\n]{0,40}") {
            let bytes = text.as_bytes();
            let mut want = Endings::default();
            for (i, &b) in bytes.iter().enumerate() {
                match b {
                    b'\r' if bytes.get(i + 1) == Some(&b'\n') => want.crlf += 1,
                    b'\r' => want.cr += 1,
                    b'\n' if i == 0 || bytes[i - 1] != b'\r' => want.lf += 1,
                    _ => {}
                }
            }
            want.first = memchr::memchr(b'\r', bytes);
            proptest::prop_assert_eq!(count(&text), want);
        }
    }

    #[test]
    fn counts_each_ending_once() {
        let e = count("a\r\nb\nc\rd\r\n\r\n");
        assert_eq!((e.crlf, e.lf, e.cr, e.first), (3, 1, 1, Some(1)));
        assert_eq!(
            count("a\nb\n"),
            Endings {
                lf: 2,
                ..Endings::default()
            }
        );
        assert_eq!(count("\n\r").first, Some(1));
    }

    #[test]
    fn describes_pure_and_mixed_files() {
        assert_eq!(
            describe("`SKILL.md`", &count("a\r\nb\r\n")),
            "`SKILL.md` ends its lines with CRLF (`\\r\\n`), not LF (`\\n`)"
        );
        assert_eq!(
            describe("`SKILL.md`", &count("a\rb\r")),
            "`SKILL.md` ends its lines with a lone CR (`\\r`), not LF (`\\n`)"
        );
        assert_eq!(
            describe("`SKILL.md`", &count("a\r\nb\nc\nd\r")),
            "`SKILL.md` mixes line endings: 1 line with CRLF (`\\r\\n`), 1 line with a lone CR (`\\r`), 2 lines with LF (`\\n`)"
        );
    }

    /// The fix changes line endings and no other byte: the text after it is the text with
    /// every `\r\n` and lone `\r` made `\n`, and it has as many lines as before.
    #[test]
    fn the_fix_changes_only_line_endings() {
        for text in [
            "---\r\nname: a\r\ndescription: \"x\ty \u{e9}\"  \r\n---\r\n\r\nBody \r\n",
            "---\nname: a\r\ndescription: d\n---\r\nno final newline",
            "---\rname: a\rdescription: d\r---\r\rBody\r",
            "\u{feff}---\r\n\r\n\r\r\n\n",
        ] {
            let edits = to_lf(text);
            assert!(edits
                .iter()
                .all(|e| matches!(&text[e.start..e.end], "\r\n" | "\r")));
            let after = apply(text, &edits);
            assert_eq!(after, text.replace("\r\n", "\n").replace('\r', "\n"));
            assert!(!after.contains('\r'));
            assert_eq!(
                crate::source::LineIndex::new(&after).line_count(),
                crate::source::LineIndex::new(text).line_count()
            );
            assert_eq!(count(&after).first, None);
        }
        assert!(to_lf("a\nb\n").is_empty());
    }
}
