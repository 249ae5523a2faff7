//! Locks every bundled pack's `load_skill` output and file table: a skill change is a snapshot diff.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

#[test]
fn bundled_skills_are_snapshotted() {
    assert_eq!(skillbake::BUNDLED.len(), 5);
    skillbake::assert_skill_snapshots!(skillbake::BUNDLED);
}
