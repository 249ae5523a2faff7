//! Signed manifests: the build signs the registry's manifest (every embedded file's SHA-256
//! under its skill path, `skillbake_format::manifest`) with an Ed25519 key, and the signature
//! travels inside the registry; `skillbake manifest --signed` prints it and `skillbake verify
//! --key` checks it.
//!
//! The signature is pure Ed25519 (RFC 8032) over exactly the bytes
//! [`skillbake_format::manifest::signed_message`] gives: the line
//! `skillbake signed manifest v1\n`, then every manifest line `HEX␠␠PATH\n` sorted by path.
//! Ed25519 is deterministic: the same key and packs give the same signature, so a signed build
//! is as reproducible as an unsigned one.
//!
//! Keys: a secret key is a PKCS#8 PEM document (`-----BEGIN PRIVATE KEY-----`, what
//! `skillbake keygen` and `openssl genpkey -algorithm ed25519` write) or its 32-byte seed in
//! hexadecimal; a public key is `ed25519:` and 64 hexadecimal digits (what `skillbake keygen`
//! writes and `manifest --signed` shows), the bare digits, or a PEM `PUBLIC KEY`.

use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey};
use ed25519_dalek::{Signer as _, SigningKey, VerifyingKey};
use skillbake_format::manifest::{self, ED25519, HEADER, KEY_LINE, SIGNATURE_LINE};

/// Environment variable holding the secret key a build signs with (the key's text, not a path),
/// when `Config::sign_with_key_file` names no file.
pub const SIGNING_KEY_ENV: &str = "SKILLBAKE_SIGNING_KEY";

/// Why a key or a signed manifest was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SignError {
    /// The text is no secret key this module reads.
    BadSecretKey(String),
    /// The text is no public key this module reads.
    BadPublicKey(String),
    /// The signed manifest is malformed: the line (1-based) and what is wrong.
    Malformed(usize, String),
    /// The manifest carries no signature.
    Unsigned,
    /// Signed, but by another key than the one given.
    OtherKey {
        /// The key the manifest names.
        signed_by: String,
        /// The key given.
        expected: String,
    },
    /// The signature does not cover these bytes: the manifest changed after it was signed.
    BadSignature,
}

impl std::fmt::Display for SignError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SignError::BadSecretKey(m) => write!(f, "not an Ed25519 secret key ({m}): give a PKCS#8 PEM file (`skillbake keygen` writes one) or 64 hexadecimal digits"),
            SignError::BadPublicKey(m) => write!(f, "not an Ed25519 public key ({m}): give `ed25519:` and 64 hexadecimal digits (the `.pub` file `skillbake keygen` writes), or a PEM public key"),
            SignError::Malformed(line, m) => write!(f, "line {line}: {m}"),
            SignError::Unsigned => f.write_str("the manifest is not signed (it has no `# signature` line): the binary was built without a signing key"),
            SignError::OtherKey { signed_by, expected } => write!(f, "the manifest is signed by {signed_by}, not by the key given ({expected})"),
            SignError::BadSignature => f.write_str("the signature does not match the manifest: its lines changed after it was signed (or the signature did)"),
        }
    }
}

impl std::error::Error for SignError {}

/// A secret signing key.
#[derive(Clone)]
pub struct SecretKey(SigningKey);

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretKey({})", self.public())
    }
}

/// A public key: checks signatures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublicKey(pub [u8; 32]);

impl std::fmt::Display for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{ED25519}{}", manifest::hex(&self.0))
    }
}

impl SecretKey {
    /// The key whose seed is `seed` (32 random bytes make a new key).
    pub fn from_seed(seed: [u8; 32]) -> Self {
        SecretKey(SigningKey::from_bytes(&seed))
    }

    /// Reads a PKCS#8 PEM document or a hexadecimal seed.
    pub fn parse(text: &str) -> Result<Self, SignError> {
        let text = text.trim();
        if text.starts_with("-----BEGIN") {
            return SigningKey::from_pkcs8_pem(text)
                .map(SecretKey)
                .map_err(|e| SignError::BadSecretKey(e.to_string()));
        }
        manifest::unhex::<32>(text)
            .map(Self::from_seed)
            .ok_or_else(|| SignError::BadSecretKey("neither PEM nor 64 hexadecimal digits".into()))
    }

    /// The key as a PKCS#8 PEM document (keep it secret).
    pub fn to_pem(&self) -> Result<String, SignError> {
        self.0
            .to_pkcs8_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
            .map(|s| s.to_string())
            .map_err(|e| SignError::BadSecretKey(e.to_string()))
    }

    /// The public half.
    pub fn public(&self) -> PublicKey {
        PublicKey(self.0.verifying_key().to_bytes())
    }

    /// The signature of `manifest` (its lines, see the module documentation).
    pub fn sign(&self, manifest: &str) -> [u8; 64] {
        self.0.sign(&manifest::signed_message(manifest)).to_bytes()
    }
}

impl PublicKey {
    /// Reads `ed25519:HEX`, bare hexadecimal, or a PEM `PUBLIC KEY`.
    pub fn parse(text: &str) -> Result<Self, SignError> {
        let text = text.trim();
        if text.starts_with("-----BEGIN") {
            return VerifyingKey::from_public_key_pem(text)
                .map(|k| PublicKey(k.to_bytes()))
                .map_err(|e| SignError::BadPublicKey(e.to_string()));
        }
        let hex = text.strip_prefix(ED25519).unwrap_or(text);
        let bytes = manifest::unhex::<32>(hex)
            .ok_or_else(|| SignError::BadPublicKey("not 64 hexadecimal digits".into()))?;
        VerifyingKey::from_bytes(&bytes)
            .map_err(|_| SignError::BadPublicKey("not a point of the curve".into()))?;
        Ok(PublicKey(bytes))
    }

    /// Whether `signature` is this key's over `manifest`. Strict verification: no malleable
    /// or small-order encodings.
    pub fn verify(&self, manifest: &str, signature: &[u8; 64]) -> Result<(), SignError> {
        let key = VerifyingKey::from_bytes(&self.0).map_err(|_| SignError::BadSignature)?;
        let sig = ed25519_dalek::Signature::from_bytes(signature);
        key.verify_strict(&manifest::signed_message(manifest), &sig)
            .map_err(|_| SignError::BadSignature)
    }
}

/// A manifest as `skillbake manifest --signed` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedManifest {
    /// The manifest's lines (what the signature covers, after the prefix).
    pub manifest: String,
    /// The key it names.
    pub key: Option<PublicKey>,
    /// The signature.
    pub signature: Option<[u8; 64]>,
}

impl SignedManifest {
    /// Reads a signed manifest: `#` lines (the header, the key, the signature), then manifest
    /// lines. Every line is checked; the first problem is reported with its line.
    pub fn parse(text: &str) -> Result<Self, SignError> {
        let mut out = SignedManifest {
            manifest: String::new(),
            key: None,
            signature: None,
        };
        if !text.is_empty() && !text.ends_with('\n') {
            return Err(SignError::Malformed(
                text.lines().count(),
                "the last line does not end with a newline".into(),
            ));
        }
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let bad = |m: &str| SignError::Malformed(n, m.to_string());
            if let Some(rest) = line.strip_prefix(KEY_LINE) {
                let key = PublicKey::parse(rest).map_err(|e| bad(&e.to_string()))?;
                out.key = Some(key);
            } else if let Some(rest) = line.strip_prefix(SIGNATURE_LINE) {
                let hex = rest
                    .trim()
                    .strip_prefix(ED25519)
                    .ok_or_else(|| bad("the signature does not start with `ed25519:`"))?;
                out.signature = Some(
                    manifest::unhex::<64>(hex)
                        .ok_or_else(|| bad("the signature is not 128 hexadecimal digits"))?,
                );
            } else if line == HEADER || line.starts_with('#') {
                continue;
            } else {
                let (digest, path) = line
                    .split_once("  ")
                    .ok_or_else(|| bad("expected `HEX  PATH`"))?;
                if manifest::unhex::<32>(digest).is_none()
                    || digest.bytes().any(|b| b.is_ascii_uppercase())
                {
                    return Err(bad("the digest is not 64 lower-case hexadecimal digits"));
                }
                if path.is_empty() {
                    return Err(bad("no path after the digest"));
                }
                out.manifest.push_str(line);
                out.manifest.push('\n');
            }
        }
        Ok(out)
    }

    /// Checks the signature against `key`.
    pub fn verify(&self, key: &PublicKey) -> Result<(), SignError> {
        let Some(signature) = &self.signature else {
            return Err(SignError::Unsigned);
        };
        if let Some(named) = &self.key {
            if named != key {
                return Err(SignError::OtherKey {
                    signed_by: named.to_string(),
                    expected: key.to_string(),
                });
            }
        }
        key.verify(&self.manifest, signature)
    }

    /// The text `manifest --signed` prints.
    pub fn render(&self) -> String {
        match (&self.key, &self.signature) {
            (Some(k), Some(s)) => manifest::signed_text(&self.manifest, &k.0, s),
            _ => self.manifest.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str =
        "0000000000000000000000000000000000000000000000000000000000000000  a/SKILL.md\n";

    #[test]
    fn a_signed_manifest_verifies_and_a_changed_byte_does_not() {
        let key = SecretKey::from_seed([7; 32]);
        let sig = key.sign(MANIFEST);
        let text = manifest::signed_text(MANIFEST, &key.public().0, &sig);
        let parsed = SignedManifest::parse(&text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.manifest, MANIFEST);
        assert_eq!(parsed.verify(&key.public()), Ok(()));
        assert_eq!(parsed.render(), text);
        let tampered = text.replace("a/SKILL.md", "b/SKILL.md");
        let parsed = SignedManifest::parse(&tampered).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.verify(&key.public()), Err(SignError::BadSignature));
        let other = SecretKey::from_seed([8; 32]).public();
        assert!(matches!(
            SignedManifest::parse(&text).map(|m| m.verify(&other)),
            Ok(Err(SignError::OtherKey { .. }))
        ));
    }

    #[test]
    fn keys_round_trip_through_their_texts() {
        let key = SecretKey::from_seed([3; 32]);
        let pem = key.to_pem().unwrap_or_default();
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----"));
        let again = SecretKey::parse(&pem).map(|k| k.public());
        assert_eq!(again, Ok(key.public()));
        assert_eq!(
            PublicKey::parse(&key.public().to_string()),
            Ok(key.public())
        );
        assert!(PublicKey::parse("ed25519:zz").is_err());
        assert!(SecretKey::parse("hello").is_err());
    }
}
