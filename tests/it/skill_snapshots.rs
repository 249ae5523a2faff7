//! Locks every bundled pack's `load_skill` output and file table: a skill change is a snapshot diff.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

#[test]
fn bundled_skills_are_snapshotted() {
    assert_eq!(skillbake_cli::BUNDLED.len(), 5);
    skillbake::assert_skill_snapshots!(skillbake_cli::BUNDLED);
}

/// Every pack is checked before the test fails, and the failure names every pack that differs.
#[test]
fn every_pack_is_checked_and_every_difference_reported() {
    let mut seen = Vec::new();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        skillbake::testing::assert_all(&skillbake_cli::BUNDLED, |name, text| {
            seen.push(name.to_string());
            assert!(text.contains("== files"), "{name}");
            assert!(
                !name.starts_with('e') && !name.starts_with('r'),
                "{name} differs"
            );
        });
    }));
    assert_eq!(seen, skillbake_cli::BUNDLED.names().collect::<Vec<_>>());
    let message = *outcome.unwrap_err().downcast::<String>().unwrap();
    assert!(
        message.starts_with("2 of 5 skill snapshots differ")
            && message.ends_with(": excel, read-file"),
        "{message}"
    );
}
