//! Bearer tokens: the token file (`AGENT TOKEN` a line) and the constant-time check of a
//! presented token.
//!
//! Every token is kept as its SHA-256 digest only (a `sha256:<hex>` line is one already), and a
//! presented token is hashed and compared with every digest without stopping at the first
//! match, so neither the time of a check nor the memory of the server tells a token.

use crate::agent::Agent;
use crate::error::Error;
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// The fewest characters of a token written in clear.
pub const MIN_TOKEN_LEN: usize = 16;

/// The longest agent name.
const MAX_AGENT_LEN: usize = 64;

/// The agents a server accepts, each with its tokens (one agent may have several, to rotate
/// them). Built from a token file ([`Tokens::load`]) or its text ([`Tokens::parse`]).
#[derive(Clone, PartialEq, Eq)]
pub struct Tokens {
    entries: Vec<Entry>,
}

#[derive(Clone, PartialEq, Eq)]
struct Entry {
    agent: Arc<str>,
    digest: [u8; 32],
}

impl fmt::Debug for Tokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the digests.
        f.debug_struct("Tokens")
            .field("agents", &self.agents())
            .finish_non_exhaustive()
    }
}

impl Tokens {
    /// Reads and parses the token file at `path` (see [`Tokens::parse`]).
    pub fn load(path: &Path) -> Result<Tokens, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::Config(format!(
                "cannot read the token file {}: {e}",
                path.display()
            ))
        })?;
        Tokens::parse(&text, &path.display().to_string())
    }

    /// Parses a token file's text: one `AGENT TOKEN` line per token, where `AGENT` is a name of
    /// letters, digits and `._-` (at most 64 characters, starting with a letter or digit) and
    /// `TOKEN` is the token in clear (at least [`MIN_TOKEN_LEN`] characters of `A-Z a-z 0-9
    /// -._~+/=`) or `sha256:` and the 64 hex digits of its SHA-256. Blank lines and lines
    /// starting with `#` are skipped. Every bad line is reported, as `source:line: what`, in
    /// one error; a file without any token is an error too.
    pub fn parse(text: &str, source: &str) -> Result<Tokens, Error> {
        let mut entries: Vec<Entry> = Vec::new();
        let mut lines_of: Vec<usize> = Vec::new();
        let mut problems = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            match parse_line(line) {
                Ok(entry) => {
                    if let Some(j) = entries.iter().position(|e| e.digest == entry.digest) {
                        problems.push(format!(
                            "{source}:{n}: this token is already agent `{}`'s (line {}): give \
                             every agent a token of its own",
                            entries[j].agent, lines_of[j]
                        ));
                    } else {
                        entries.push(entry);
                        lines_of.push(n);
                    }
                }
                Err(p) => problems.push(format!("{source}:{n}: {p}")),
            }
        }
        if problems.is_empty() && entries.is_empty() {
            problems.push(format!(
                "{source}: no token: write one `AGENT TOKEN` line per agent"
            ));
        }
        if problems.is_empty() {
            Ok(Tokens { entries })
        } else {
            Err(Error::Config(format!(
                "bad token file:\n  {}",
                problems.join("\n  ")
            )))
        }
    }

    /// The agents, in the file's order, each once.
    pub fn agents(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for e in &self.entries {
            if !names.contains(&&*e.agent) {
                names.push(&e.agent);
            }
        }
        names
    }

    /// The agent `token` belongs to, if any. Takes the same time whichever token matches (or
    /// none): every digest is compared in full.
    pub fn verify(&self, token: &str) -> Option<Agent> {
        let presented: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut found: Option<&Entry> = None;
        for entry in &self.entries {
            if same(&presented, &entry.digest) {
                found = Some(entry);
            }
        }
        found.map(|e| Agent::authenticated(Arc::clone(&e.agent)))
    }
}

/// Compares two digests in constant time: no early exit, and the result is read only once.
fn same(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let mut diff = 0u8;
    for (x, y) in a.iter().zip(b) {
        diff |= std::hint::black_box(x ^ y);
    }
    std::hint::black_box(diff) == 0
}

fn parse_line(line: &str) -> Result<Entry, String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let [agent, token] = fields[..] else {
        return Err(format!(
            "expected `AGENT TOKEN` (two fields), found {} field{}",
            fields.len(),
            if fields.len() == 1 { "" } else { "s" }
        ));
    };
    let agent_ok = agent.len() <= MAX_AGENT_LEN
        && agent.starts_with(|c: char| c.is_ascii_alphanumeric())
        && agent
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if !agent_ok {
        return Err(format!(
            "agent name `{agent}`: use letters, digits and `._-` (starting with a letter or \
             digit, at most {MAX_AGENT_LEN} characters)"
        ));
    }
    let digest = match token.strip_prefix("sha256:") {
        Some(hex) => from_hex(hex).ok_or_else(|| {
            "a `sha256:` token must be followed by the 64 hex digits of the token's SHA-256 \
             (`printf %s TOKEN | sha256sum`)"
                .to_string()
        })?,
        None => {
            let plain = token
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._~+/=".contains(c));
            if !plain {
                return Err(format!(
                    "agent `{agent}`'s token holds a character a bearer token cannot carry: use \
                     letters, digits and `-._~+/=`"
                ));
            }
            if token.len() < MIN_TOKEN_LEN {
                return Err(format!(
                    "agent `{agent}`'s token is {} characters long; use at least \
                     {MIN_TOKEN_LEN} random ones (such as `openssl rand -hex 32`)",
                    token.len()
                ));
            }
            Sha256::digest(token.as_bytes()).into()
        }
    };
    Ok(Entry {
        agent: agent.into(),
        digest,
    })
}

fn from_hex(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in hex.as_bytes().chunks(2).enumerate() {
        let text = std::str::from_utf8(pair).ok()?;
        out[i] = u8::from_str_radix(text, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn clear_and_hashed_tokens_name_their_agents() {
        let hashed: String = Sha256::digest(b"0123456789abcdef-beta")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let text = format!(
            "# agents\n\nalpha  0123456789abcdef-alpha\nbeta sha256:{}\n",
            hashed.to_uppercase()
        );
        let tokens = Tokens::parse(&text, "t").unwrap();
        assert_eq!(tokens.agents(), ["alpha", "beta"]);
        assert_eq!(
            tokens.verify("0123456789abcdef-alpha").unwrap().name(),
            "alpha"
        );
        assert_eq!(
            tokens.verify("0123456789abcdef-beta").unwrap().name(),
            "beta"
        );
        assert!(tokens.verify("0123456789abcdef-gamma").is_none());
        assert!(tokens.verify("").is_none());
        assert!(!format!("{tokens:?}").contains(&hashed));
    }

    #[test]
    fn every_bad_line_is_reported_with_its_line() {
        let text = "alpha\nbad/name 0123456789abcdef0\nbeta short\ngamma sha256:12\n\
                    delta 0123456789abcdef0\nepsilon 0123456789abcdef0\nzeta tok\u{e9}n0123456789abc\n";
        let Err(Error::Config(m)) = Tokens::parse(text, "tokens.txt") else {
            panic!("accepted")
        };
        for needle in [
            "tokens.txt:1: expected `AGENT TOKEN`",
            "tokens.txt:2: agent name `bad/name`",
            "tokens.txt:3: agent `beta`'s token is 5 characters long",
            "tokens.txt:4: a `sha256:` token",
            "tokens.txt:6: this token is already agent `delta`'s (line 5)",
            "tokens.txt:7: agent `zeta`'s token holds a character",
        ] {
            assert!(m.contains(needle), "{needle} not in {m}");
        }
        let Err(Error::Config(m)) = Tokens::parse("# nothing\n", "empty") else {
            panic!("accepted")
        };
        assert!(m.contains("empty: no token"), "{m}");
    }
}
