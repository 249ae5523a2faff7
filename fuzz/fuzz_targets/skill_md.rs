//! Fuzzes `SKILL.md` parsing: arbitrary bytes through `parse::frontmatter::parse`.
//!
//! Invariants: no panic; `None` only for input that is not UTF-8, and then with an
//! `invalid-utf8` diagnostic; every position is 1-based; the body is normalised (no `\r`, no
//! leading or trailing whitespace).

#![no_main]

use libfuzzer_sys::fuzz_target;
use skillbake_build::__internal::frontmatter;
use skillbake_build::Code;

fuzz_target!(|data: &[u8]| {
    let mut diags = Vec::new();
    let parsed = frontmatter::parse(data, "SKILL.md", &mut diags);

    for d in &diags {
        assert_eq!(d.file, "SKILL.md", "{d:?}");
        assert!(d.line.is_none_or(|l| l >= 1), "line 0 in {d:?}");
        assert!(d.column.is_none_or(|c| c >= 1), "column 0 in {d:?}");
    }

    let utf8 = std::str::from_utf8(data);
    match parsed {
        None => {
            assert!(utf8.is_err(), "None for valid UTF-8 input");
            assert!(
                diags.iter().any(|d| d.code == Code::InvalidUtf8),
                "None without an invalid-utf8 diagnostic: {diags:?}"
            );
        }
        Some(md) => {
            let text = utf8.expect("Some(..) for input that is not UTF-8");
            assert_eq!(md.text, text);
            assert!(md.body_offset <= md.text.len());
            // Every path normalises the body; the brief's minimum is the parsed-frontmatter case.
            assert!(!md.body.contains('\r'), "body has a CR: {:?}", md.body);
            assert_eq!(md.body, md.body.trim(), "body is not stripped");
            if md.frontmatter.is_some() {
                assert_eq!(md.body, frontmatter::normalize_body(md.raw_body()));
            }
        }
    }
});
