//! Signed manifests through the real binary: `skillbake keygen` writes a key pair,
//! `skillbake verify --key` accepts a manifest signed with it (a file, the output of another
//! binary, or the manifest a folder is checked against) and refuses one byte changed or another
//! key; this binary, built without a key, says so instead of printing an unsigned manifest.
//! (A build that signs is tested where the compiler is, and served over MCP with its
//! provenance in `crates/skillbake-mcp/tests/it/skills.rs`.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use skillbake_build::sign::{PublicKey, SecretKey};

use super::binary::{shown, skillbake, BIN};

/// A fixed key, so that the snapshots hold the same key and signature on every run.
fn key() -> SecretKey {
    SecretKey::from_seed([0x5b; 32])
}

/// A signed manifest of one file `pack/SKILL.md` holding `body`.
fn signed(body: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(body.as_bytes());
    let manifest = format!(
        "{}  pack/SKILL.md\n",
        skillbake_format::manifest::hex(&digest)
    );
    let key = key();
    skillbake_format::manifest::signed_text(&manifest, &key.public().0, &key.sign(&manifest))
}

#[test]
fn keygen_writes_a_pair_that_signs_and_verifies() {
    let tmp = tempfile::tempdir().unwrap();
    let o = skillbake(tmp.path(), &["keygen", "--out", "release"]);
    assert_eq!(o.status.code(), Some(0), "{}", shown(&o));
    let public = std::fs::read_to_string(tmp.path().join("release.pub")).unwrap();
    let secret = std::fs::read_to_string(tmp.path().join("release.key")).unwrap();
    let out = String::from_utf8_lossy(&o.stdout).replace(public.trim(), "ed25519:PUBLIC");
    insta::assert_snapshot!("keygen", out);
    assert!(secret.starts_with("-----BEGIN PRIVATE KEY-----\n"));
    let pair = SecretKey::parse(&secret).unwrap();
    assert_eq!(PublicKey::parse(&public), Ok(pair.public()));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(tmp.path().join("release.key"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "only the owner reads the secret key");
    }
    let again = skillbake(tmp.path(), &["keygen", "--out", "release"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("release.key exists already"));
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("release.key")).unwrap(),
        secret
    );
}

#[test]
fn verify_accepts_the_signed_and_refuses_the_tampered() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let body = "---\nname: pack\ndescription: A pack.\n---\nBody.\n";
    let text = signed(body);
    std::fs::write(dir.join("signed.txt"), &text).unwrap();
    std::fs::write(dir.join("key.pub"), format!("{}\n", key().public())).unwrap();
    // One byte of the digest changed.
    let at = text.find("  pack/SKILL.md").unwrap() - 1;
    let mut tampered = text.clone().into_bytes();
    tampered[at] = if tampered[at] == b'0' { b'1' } else { b'0' };
    std::fs::write(dir.join("tampered.txt"), &tampered).unwrap();
    let other = SecretKey::from_seed([1; 32]).public().to_string();
    // Another binary that prints the signed manifest, as a signed skillbake does.
    let fake = dir.join("other-skillbake");
    std::fs::write(&fake, "#!/bin/sh\n[ \"$1 $2\" = \"manifest --signed\" ] || exit 9\ncat \"$(dirname \"$0\")/signed.txt\"\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // A materialised copy of the signed manifest's one file, then the same with an edit.
    std::fs::create_dir_all(dir.join("copy/pack")).unwrap();
    std::fs::write(dir.join("copy/pack/SKILL.md"), body).unwrap();
    std::fs::create_dir_all(dir.join("edited/pack")).unwrap();
    std::fs::write(
        dir.join("edited/pack/SKILL.md"),
        body.replace("Body", "body"),
    )
    .unwrap();

    let mut out = String::new();
    for (args, code) in [
        (&["verify", "--key", "key.pub", "signed.txt"][..], 0),
        (&["verify", "--key", "key.pub", "tampered.txt"], 1),
        (&["verify", "--key", &other, "signed.txt"], 1),
        (&["verify", "--key", "key.pub", "other-skillbake"], 0),
        (
            &[
                "verify",
                "--key",
                "key.pub",
                "--manifest",
                "signed.txt",
                "copy",
            ],
            0,
        ),
        (
            &[
                "verify",
                "--key",
                "key.pub",
                "--manifest",
                "signed.txt",
                "edited",
            ],
            1,
        ),
        (
            &[
                "verify",
                "--key",
                "key.pub",
                "--manifest",
                "tampered.txt",
                "copy",
            ],
            1,
        ),
        (&["verify", "--key", "ed25519:1234", "signed.txt"], 2),
        (&["verify", "signed.txt"], 2),
    ] {
        let o = skillbake(dir, args);
        out.push_str(&format!("$ skillbake {}\n{}\n", args.join(" "), shown(&o)));
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", shown(&o));
    }
    insta::assert_snapshot!("verify_signed", out);
}

#[test]
fn an_unsigned_binary_says_it_is_unsigned() {
    let tmp = tempfile::tempdir().unwrap();
    let o = skillbake(tmp.path(), &["manifest", "--signed"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("built without a signing key"), "{err}");
    assert!(err.contains("SKILLBAKE_SIGNING_KEY"), "{err}");
    // Run as another binary, it cannot be verified, and the reason says why.
    std::fs::write(tmp.path().join("key.pub"), format!("{}\n", key().public())).unwrap();
    let o = skillbake(tmp.path(), &["verify", "--key", "key.pub", BIN]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("manifest --signed` failed"), "{err}");
    assert!(err.contains("built without a signing key"), "{err}");
    // `manifest --signed` lists what `manifest` does (this binary's skills all portable).
    let plain = skillbake(tmp.path(), &["manifest"]);
    assert_eq!(plain.status.code(), Some(0));
}
