//! `obfuscated-exec`: a decoded blob handed to something that runs it: `base64 -d | sh`,
//! `eval(atob(…))`, `exec(base64.b64decode(…))`, `exec(zlib.decompress(…))`,
//! `marshal.loads` into `exec`, character codes joined and evaluated, hex decoded and run.
//!
//! In JavaScript the decoding must open within 40 characters of the call (`eval(atob(`,
//! `eval(Buffer.from(`), and only the `Function` constructor counts, written as such: in
//! minified bundles `function(` opens every other declaration, and an `atob(` anywhere later on
//! a line of 100 kB is not what the call runs.

use super::scan::{Pat, Role, Scope};
use crate::diagnostic::Code;

const A: Role = Role::Alone;

/// The code these patterns raise.
pub const CODE: Code = Code::ObfuscatedExec;

/// The patterns.
pub const PATTERNS: &[Pat] = &[
    Pat {
        triggers: &["base64", "base32", "xxd", "openssl"],
        re: r"\b(base64|base32)\s+(-d|--decode|-D)\b[^\n]*\|\s*(sudo\s+)?((ba|z|k|da)?sh|python3?|perl|node|ruby|php)\b|\bxxd\s+-r[^\n]*\|\s*(ba|z)?sh\b|\bopenssl\s+(enc\s+)?(-d\s+)?-?base64\s+-d[^\n]*\|\s*(ba|z)?sh\b|\b(ba|z)?sh\s+-c\s+[\x22']?\$\([^)]*base64\s+(-d|--decode)",
        needs: Some(r"\||\$\("),
        unless: None,
        unless_before: None,
        what: "it decodes a blob and pipes it into a shell or interpreter",
        scope: Scope::Code,
        role: A,
    },
    Pat {
        triggers: &[
            "b64decode",
            "b32decode",
            "a85decode",
            "b85decode",
            "decompress",
            "marshal.loads",
            "codecs.decode",
            "fromhex",
            "unhexlify",
            "rot13",
            "rot_13",
        ],
        re: r"\b(exec|eval|compile)\s*\([^\n]*(b64decode|b32decode|a85decode|b85decode|decompress|marshal\.loads|codecs\.decode|fromhex|unhexlify|rot_?13)",
        needs: None,
        unless: None,
        unless_before: None,
        what: "it executes decoded data",
        scope: Scope::Code,
        role: A,
    },
    Pat {
        triggers: &["atob", "buffer.from", "fromcharcode", "unescape"],
        re: r"\b(eval|(?-i:Function)|setTimeout|setInterval|execSync|exec)\s*\(\s*(new\s+(?-i:Function)\s*\()?[^\n;]{0,40}?(atob\s*\(|Buffer\.from\s*\([^\n]*[\x22'](base64|hex)[\x22']|String\.fromCharCode|unescape\s*\()",
        needs: Some(r"(eval|Function|setTimeout|setInterval|execSync|exec)\s*\("),
        unless: None,
        unless_before: None,
        what: "it evaluates decoded JavaScript",
        scope: Scope::Code,
        role: A,
    },
    Pat {
        triggers: &["chr("],
        re: r"\b(exec|eval)\s*\(\s*[\x22']{2}\s*\.join\s*\(\s*(\[|map\s*\(\s*)?chr\b",
        needs: None,
        unless: None,
        unless_before: None,
        what: "it evaluates code assembled from character codes",
        scope: Scope::Code,
        role: A,
    },
    Pat {
        triggers: &["__import__("],
        re: r"\b(exec|eval)\s*\(\s*__import__\s*\(\s*[\x22'](base64|zlib|codecs|marshal|binascii|bz2|lzma)[\x22']",
        needs: None,
        unless: None,
        unless_before: None,
        what: "it executes decoded data",
        scope: Scope::Code,
        role: A,
    },
    Pat {
        triggers: &["-enc", "-encodedcommand", "frombase64string"],
        re: r"\b(powershell|pwsh)(\.exe)?\b[^\n]*\s-(e|ec|enc|encodedcommand)\s+[A-Za-z0-9+/=]{16,}|(iex|invoke-expression)[^\n]*frombase64string",
        needs: Some(r"powershell|pwsh|frombase64string"),
        unless: None,
        unless_before: None,
        what: "it runs an encoded PowerShell command",
        scope: Scope::Code,
        role: A,
    },
];
