//! Snapshot testing of embedded skills (feature `testing`): one call locks every skill's
//! `load_skill` output and file table with [insta](https://insta.rs), in a layout a reviewer can
//! read, so any change to a pack shows up as a diff of the lines that changed.
//!
//! ```text
//! skillbake::include_skills!();
//!
//! #[test]
//! fn skills_are_reviewed() {
//!     skillbake::assert_skill_snapshots!(REGISTRY);
//! }
//! ```
//!
//! One snapshot per pack: named after the skill (`tests/snapshots/<test>__send-email.snap`), or
//! `name@version` for versions an agent does not get by name. Each holds:
//!
//! * the `load_skill` reply for the pack's `SKILL.md`, then for its first other text file:
//!   a header with the reply's exact size and FNV-1a hash (so the bytes stay locked: escaping,
//!   separators, every character), then each chunk on its own, its content as plain multi-line
//!   text (the markdown body as you wrote it, not one escaped JSON line);
//! * the file table: path, chunk kind, size and FNV-1a of every embedded file.
//!
//! Every pack is checked in one run: differences are reported (and `.snap.new` files written)
//! for all of them, then the test fails once, naming every pack that differs.

use crate::{FileKind, Registry, Skill};
use std::fmt::Write as _;

pub use insta;

/// 64-bit FNV-1a of `bytes` (a stable fingerprint for the file table, not a security hash).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Reads one JSON string starting after its opening quote; returns the text and the rest after
/// the closing quote.
fn json_string(s: &str) -> Option<(String, &str)> {
    let mut out = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, s.get(i + 1..)?)),
            '\\' => {
                let (_, e) = chars.next()?;
                match e {
                    '"' | '\\' | '/' => out.push(e),
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'u' => {
                        let hex = |chars: &mut std::str::CharIndices<'_>| -> Option<u32> {
                            let mut v = 0;
                            for _ in 0..4 {
                                v = v * 16 + chars.next()?.1.to_digit(16)?;
                            }
                            Some(v)
                        };
                        let hi = hex(&mut chars)?;
                        let code = if (0xd800..0xdc00).contains(&hi) {
                            let (_, b) = chars.next()?;
                            let (_, u) = chars.next()?;
                            if (b, u) != ('\\', 'u') {
                                return None;
                            }
                            let lo = hex(&mut chars)?;
                            0x10000 + ((hi - 0xd800) << 10) + (lo.checked_sub(0xdc00)?)
                        } else {
                            hi
                        };
                        out.push(char::from_u32(code)?);
                    }
                    _ => return None,
                }
            }
            c => out.push(c),
        }
    }
    None
}

/// The chunks of a `load_skill` reply as (output type, content), or `None` when the reply is
/// not DB-GPT's `{"chunks": [{"output_type": ..., "content": ...}, ...]}`.
pub fn chunks(reply: &str) -> Option<Vec<(String, String)>> {
    let mut rest = reply.strip_prefix(r#"{"chunks": ["#)?;
    let mut out = Vec::new();
    loop {
        rest = rest.strip_prefix(r#"{"output_type": ""#)?;
        let (kind, r) = json_string(rest)?;
        let r = r.strip_prefix(r#", "content": ""#)?;
        let (content, r) = json_string(r)?;
        out.push((kind, content));
        let r = r.strip_prefix('}')?;
        if let Some(r) = r.strip_prefix(", ") {
            rest = r;
            continue;
        }
        return (r == "]}").then_some(out);
    }
}

/// One reply: its exact size and hash, then each chunk with its content as plain text.
fn write_reply(out: &mut String, skill: &Skill<'_>, file_path: &str) {
    let reply = skill.load(file_path);
    let _ = writeln!(
        out,
        "== load_skill({:?}, {:?}): {} bytes, fnv1a64={:016x}",
        skill.name(),
        file_path,
        reply.len(),
        fnv1a64(reply.as_bytes())
    );
    match chunks(&reply) {
        Some(chunks) => {
            for (i, (kind, content)) in chunks.iter().enumerate() {
                let _ = writeln!(out, "-- chunk {} ({kind})", i + 1);
                out.push_str(content);
                if !content.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
        None => {
            let _ = writeln!(out, "{reply}");
        }
    }
}

/// The snapshot text of one pack (see the module docs).
pub fn render_skill(skill: &Skill<'_>) -> String {
    let mut out = String::new();
    if let Some(v) = skill.version() {
        let _ = writeln!(
            out,
            "== version {v}{}",
            match (skill.versions().len() > 1, skill.is_default()) {
                (true, true) => " (the version agents get by name)",
                (true, false) => " (beside the version agents get by name)",
                (false, _) => "",
            }
        );
    }
    write_reply(&mut out, skill, skill.skill_md_path());
    let _ = writeln!(out, "== files");
    for f in skill.files() {
        let kind = f.kind().name();
        let _ = writeln!(
            out,
            "{:<40} {:<8} {:>8} bytes  fnv1a64={:016x}",
            f.path(),
            kind,
            f.bytes().len(),
            fnv1a64(f.bytes())
        );
    }
    if let Some(other) = skill
        .files()
        .find(|f| f.path() != "SKILL.md" && f.kind() != FileKind::Binary)
    {
        write_reply(&mut out, skill, other.path());
    }
    out
}

/// The snapshot name of a pack: the skill's name for the version agents get by name,
/// `name@version` for the others.
pub fn snapshot_name(skill: &Skill<'_>) -> String {
    match skill.version() {
        Some(v) if !skill.is_default() => format!("{}@{v}", skill.name()),
        _ => skill.name().to_string(),
    }
}

/// Runs `assert(name, text)` (an insta assertion, see [`assert_skill_snapshots!`]) for every
/// pack of `registry`, every version included, and fails once at the end naming every pack
/// whose snapshot differs.
///
/// [`assert_skill_snapshots!`]: crate::assert_skill_snapshots
pub fn assert_all(registry: &Registry, mut assert: impl FnMut(&str, &str)) {
    let mut failed = Vec::new();
    let total = registry.all_versions().len();
    for skill in registry.all_versions() {
        let name = snapshot_name(&skill);
        let text = render_skill(&skill);
        let mut settings = insta::Settings::clone_current();
        settings.set_omit_expression(true);
        settings.set_description(format!(
            "load_skill output and embedded files of skill `{name}`"
        ));
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            settings.bind(|| assert(&name, &text));
        }));
        if outcome.is_err() {
            failed.push(name);
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {total} skill snapshots differ (each is shown above; review them with `cargo insta review`): {}",
        failed.len(),
        failed.join(", ")
    );
}

/// Asserts an insta snapshot per pack of the registry (every version of every skill), rendered
/// by [`render_skill`] and named by [`snapshot_name`]; every pack is checked before the test
/// fails. Snapshots land beside the calling test, in its `snapshots/` folder.
#[macro_export]
macro_rules! assert_skill_snapshots {
    ($registry:expr) => {
        $crate::testing::assert_all(&$registry, |name, text| {
            $crate::testing::insta::assert_snapshot!(name, text);
        })
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_decode_what_the_escaper_writes() {
        let mut reply = String::from(r#"{"chunks": [{"output_type": "text", "content": ""#);
        let text = "a \"q\" \\ / \n\t\r\u{8}\u{c}\u{1} é 中 😀";
        crate::chunk::escape_into(&mut reply, text);
        reply.push_str(r#""}, {"output_type": "markdown", "content": "x"}]}"#);
        assert_eq!(
            chunks(&reply),
            Some(vec![
                ("text".to_string(), text.to_string()),
                ("markdown".to_string(), "x".to_string())
            ])
        );
        assert_eq!(chunks(r#"{"chunks": []}"#), None);
        assert_eq!(
            chunks(r#"{"chunks": [{"output_type": "text", "content": "\ud83d\ude00"}]}"#),
            Some(vec![("text".into(), "😀".into())])
        );
        assert_eq!(
            chunks(r#"{"chunks": [{"output_type": "text", "content": "\x"}]}"#),
            None
        );
    }
}
