//! The licence of a vendored pack, as `skills.lock` records it: the SPDX expression of the
//! pack's frontmatter `license` when it is one, else what a licence file next to the pack says
//! (in its folder, then each folder above it up to the top of the repository), else `unknown`.
//!
//! A licence file is recognised by an `SPDX-License-Identifier:` line or by the opening words of
//! the common licences' texts; anything else is `unknown`, never a guess.

/// What `skills.lock` records when no licence could be told.
pub const UNKNOWN: &str = "unknown";

/// The names a licence file goes by, in the order they are looked for.
pub const FILE_NAMES: &[&str] = &[
    "LICENSE",
    "LICENSE.txt",
    "LICENSE.md",
    "LICENCE",
    "LICENCE.txt",
    "LICENCE.md",
    "COPYING",
    "COPYING.txt",
    "LICENSE-MIT",
    "LICENSE-APACHE",
];

/// Whether `value` reads as an SPDX licence expression: identifiers (`MIT`, `Apache-2.0`,
/// `LicenseRef-x`) joined by `AND`, `OR` and `WITH`, with parentheses.
pub fn is_spdx_expression(value: &str) -> bool {
    let spaced = value.replace('(', " ( ").replace(')', " ) ");
    let mut expect_id = true;
    let mut depth = 0i32;
    let mut seen = false;
    for w in spaced.split_whitespace() {
        match w {
            "(" if expect_id => depth += 1,
            ")" if !expect_id => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            "AND" | "OR" | "WITH" if !expect_id => expect_id = true,
            id if expect_id => {
                let id = id.strip_suffix('+').unwrap_or(id);
                let ok = !id.is_empty()
                    && id.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
                    && id
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-');
                if !ok {
                    return false;
                }
                seen = true;
                expect_id = false;
            }
            _ => return false,
        }
    }
    seen && !expect_id && depth == 0
}

/// The SPDX identifier a licence file's text names, when it is recognisable.
pub fn from_text(text: &str) -> Option<String> {
    for line in text.lines().take(40) {
        if let Some((_, id)) = line.split_once("SPDX-License-Identifier:") {
            let id = id.trim().trim_end_matches("*/").trim();
            if is_spdx_expression(id) {
                return Some(id.to_string());
            }
        }
    }
    let head: String = text
        .chars()
        .take(4000)
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let has = |s: &str| head.contains(s);
    let id = if has("Apache License") && has("Version 2.0") {
        "Apache-2.0"
    } else if has("Permission is hereby granted, free of charge") {
        "MIT"
    } else if has("Mozilla Public License Version 2.0") || has("Mozilla Public License, v. 2.0") {
        "MPL-2.0"
    } else if has("GNU AFFERO GENERAL PUBLIC LICENSE") && has("Version 3") {
        "AGPL-3.0"
    } else if has("GNU LESSER GENERAL PUBLIC LICENSE") && has("Version 3") {
        "LGPL-3.0"
    } else if has("GNU GENERAL PUBLIC LICENSE") && has("Version 3") {
        "GPL-3.0"
    } else if has("GNU GENERAL PUBLIC LICENSE") && has("Version 2") {
        "GPL-2.0"
    } else if has("Redistribution and use in source and binary forms") {
        if has("Neither the name") || has("names of its contributors") {
            "BSD-3-Clause"
        } else {
            "BSD-2-Clause"
        }
    } else if has("Permission to use, copy, modify, and/or distribute this software") {
        "ISC"
    } else if has("This is free and unencumbered software released into the public domain") {
        "Unlicense"
    } else if has("CC0 1.0 Universal") {
        "CC0-1.0"
    } else if has("Attribution 4.0 International") && !has("NonCommercial") {
        "CC-BY-4.0"
    } else {
        return None;
    };
    Some(id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions() {
        for ok in [
            "MIT",
            "Apache-2.0",
            "MIT OR Apache-2.0",
            "(MIT AND BSD-3-Clause) OR GPL-2.0+",
            "Apache-2.0 WITH LLVM-exception",
        ] {
            assert!(is_spdx_expression(ok), "{ok}");
        }
        for bad in [
            "",
            "Complete terms in LICENSE.txt",
            "MIT OR",
            "(MIT",
            "Proprietary. LICENSE.txt has complete terms",
        ] {
            assert!(!is_spdx_expression(bad), "{bad}");
        }
    }

    #[test]
    fn texts() {
        assert_eq!(
            from_text("MIT License\n\nPermission is hereby granted, free of charge, to any")
                .as_deref(),
            Some("MIT")
        );
        assert_eq!(
            from_text("   Apache License\n   Version 2.0, January 2004").as_deref(),
            Some("Apache-2.0")
        );
        assert_eq!(
            from_text("// SPDX-License-Identifier: MPL-2.0\n").as_deref(),
            Some("MPL-2.0")
        );
        assert_eq!(from_text("All rights reserved.").as_deref(), None);
    }
}
