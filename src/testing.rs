//! Snapshot testing of embedded skills (feature `testing`): one call locks every skill's
//! `load_skill` output and file list with [insta](https://insta.rs), so any change to a pack shows
//! up as a reviewable snapshot diff.
//!
//! ```text
//! skillbake::include_skills!();
//!
//! #[test]
//! fn skills_are_reviewed() {
//!     skillbake::assert_skill_snapshots!(REGISTRY);
//! }
//! ```

use crate::{FileKind, Skill};
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

/// The snapshot text of one skill: the `load_skill` reply for its `SKILL.md`, its file table
/// (path, chunk type, size, FNV-1a), and the reply for its first other text file.
pub fn render_skill(skill: &Skill<'_>) -> String {
    let mut out = String::new();
    let md = skill.skill_md_path();
    let _ = writeln!(out, "== load_skill({:?}, {:?})", skill.name(), md);
    let _ = writeln!(out, "{}", skill.load(md));
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
        let _ = writeln!(out, "== load_skill({:?}, {:?})", skill.name(), other.path());
        let _ = writeln!(out, "{}", skill.load(other.path()));
    }
    out
}

/// Asserts an insta snapshot per skill of the registry (named after the skill), rendered by
/// [`render_skill`]. Snapshots land beside the calling test, in its `snapshots/` folder.
#[macro_export]
macro_rules! assert_skill_snapshots {
    ($registry:expr) => {
        for skill in $registry.iter() {
            let mut settings = $crate::testing::insta::Settings::clone_current();
            settings.set_omit_expression(true);
            settings.set_description(format!(
                "load_skill output and embedded files of skill `{}`",
                skill.name()
            ));
            settings.bind(|| {
                $crate::testing::insta::assert_snapshot!(
                    skill.name(),
                    $crate::testing::render_skill(&skill)
                );
            });
        }
    };
}
