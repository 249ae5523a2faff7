//! The text manifest of a registry and the bytes its signature covers, written the same way by
//! the compiler (which signs them) and by the command (which prints and verifies them).
//!
//! A manifest line is `HEX␠␠PATH\n`: the 64 lower-case hexadecimal digits of a file's SHA-256,
//! two spaces, and the file's path under its skill path (`send-email/SKILL.md` for the version
//! agents get by name, `v1.0.0/send-email/SKILL.md` for the others), as `sha256sum` writes it.
//! The lines of a manifest are sorted by path, byte for byte.
//!
//! The signed message is [`SIGNED_PREFIX`] followed by every line of the manifest exactly as
//! printed; nothing else (no `#` line, no key) is part of it.

/// What the signed message starts with: names the format, so a signature over a manifest can
/// never be taken for a signature over anything else.
pub const SIGNED_PREFIX: &str = "skillbake signed manifest v1\n";

/// The first line of `skillbake manifest --signed`.
pub const HEADER: &str = "# skillbake signed manifest v1";

/// The `#` line naming the key that signed (`# key ed25519:HEX`).
pub const KEY_LINE: &str = "# key ";

/// The `#` line holding the signature (`# signature ed25519:HEX`).
pub const SIGNATURE_LINE: &str = "# signature ";

/// How public keys and signatures are written: `ed25519:` and lower-case hexadecimal.
pub const ED25519: &str = "ed25519:";

/// The path of a file of a skill in the manifest: `{name}/{path}` for the version agents get by
/// name (or a skill without a version), `v{version}/{name}/{path}` for the others.
pub fn skill_path(name: &str, version: Option<&str>, default: bool, path: &str) -> String {
    match version {
        Some(v) if !default => format!("v{v}/{name}/{path}"),
        _ => format!("{name}/{path}"),
    }
}

/// Lower-case hexadecimal of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        for nibble in [b >> 4, b & 0xf] {
            if let Some(&d) = DIGITS.get(usize::from(nibble)) {
                out.push(char::from(d));
            }
        }
    }
    out
}

/// The bytes `hex` writes, when `text` is exactly `N` of them in hexadecimal (either case).
pub fn unhex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let digits = text.as_bytes();
    if digits.len() != 2 * N {
        return None;
    }
    let value = |d: u8| match d {
        b'0'..=b'9' => Some(d - b'0'),
        b'a'..=b'f' => Some(d - b'a' + 10),
        b'A'..=b'F' => Some(d - b'A' + 10),
        _ => None,
    };
    let mut out = [0u8; N];
    for (slot, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        let [hi, lo] = pair else { return None };
        *slot = (value(*hi)? << 4) | value(*lo)?;
    }
    Some(out)
}

/// The manifest text of `files` (path under the skill path, SHA-256): one line per file,
/// sorted by path.
pub fn text<'a>(files: impl IntoIterator<Item = (String, &'a [u8; 32])>) -> String {
    let mut lines: Vec<(String, &[u8; 32])> = files.into_iter().collect();
    lines.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut out = String::new();
    for (path, digest) in lines {
        out.push_str(&hex(digest));
        out.push_str("  ");
        out.push_str(&path);
        out.push('\n');
    }
    out
}

/// The message a signature covers: [`SIGNED_PREFIX`] then the manifest's lines.
pub fn signed_message(manifest: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(SIGNED_PREFIX.len() + manifest.len());
    out.extend_from_slice(SIGNED_PREFIX.as_bytes());
    out.extend_from_slice(manifest.as_bytes());
    out
}

/// `skillbake manifest --signed`: the header, the key and signature lines, then the manifest.
pub fn signed_text(manifest: &str, public_key: &[u8], signature: &[u8]) -> String {
    format!(
        "{HEADER}\n{KEY_LINE}{ED25519}{}\n{SIGNATURE_LINE}{ED25519}{}\n{manifest}",
        hex(public_key),
        hex(signature)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_the_version_only_when_not_default() {
        assert_eq!(
            skill_path("a", Some("1.0.0"), true, "SKILL.md"),
            "a/SKILL.md"
        );
        assert_eq!(
            skill_path("a", Some("1.0.0"), false, "x/y.py"),
            "v1.0.0/a/x/y.py"
        );
        assert_eq!(skill_path("a", None, false, "SKILL.md"), "a/SKILL.md");
    }

    #[test]
    fn hex_round_trips() {
        let bytes = [0u8, 1, 0xab, 0xff];
        assert_eq!(hex(&bytes), "0001abff");
        assert_eq!(unhex::<4>("0001ABff"), Some(bytes));
        assert_eq!(unhex::<4>("0001abf"), None);
        assert_eq!(unhex::<4>("0001abfg"), None);
    }

    #[test]
    fn lines_are_sorted_by_path_bytes() {
        let (a, b) = ([1u8; 32], [2u8; 32]);
        let t = text([("b/SKILL.md".to_string(), &b), ("a/Z".to_string(), &a)]);
        assert!(t.starts_with(&format!("{}  a/Z\n", hex(&a))));
        assert!(t.ends_with("  b/SKILL.md\n"));
        assert!(signed_message(&t).starts_with(SIGNED_PREFIX.as_bytes()));
    }
}
