//! Signed builds: `Config::sign_with_key_file` embeds a signature over the manifest of exactly
//! the files embedded (recomputed here from the files on disk with their own SHA-256, not with
//! the compiler's), and it is the same whether the packs come from the cache or not; a key that
//! cannot be read fails the build with a message naming the file.

use crate::sign::{PublicKey, SecretKey};
use crate::Config;
use sha2::Digest as _;
use std::path::Path;

/// The value of `field: "…",` in generated registry code.
fn field(code: &str, field: &str) -> String {
    let line = code
        .lines()
        .find_map(|l| l.trim().strip_prefix(&format!("{field}: ")))
        .unwrap();
    line.trim_end_matches(',').trim_matches('"').to_string()
}

/// Every file under `root` as `HEX  PATH` lines (the skills here have one version each).
fn manifest_of(root: &Path) -> String {
    let mut lines = Vec::new();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().unwrap().is_dir() {
                stack.push((e.path(), format!("{prefix}{name}/")));
            } else if !prefix.is_empty() {
                let digest = sha2::Sha256::digest(std::fs::read(e.path()).unwrap());
                lines.push((
                    format!("{prefix}{name}"),
                    skillbake_format::manifest::hex(&digest),
                ));
            }
        }
    }
    lines.sort();
    lines.iter().map(|(p, h)| format!("{h}  {p}\n")).collect()
}

#[test]
fn a_signed_build_embeds_a_signature_over_its_files() {
    let tmp = tempfile::tempdir().unwrap();
    let key = SecretKey::from_seed([42; 32]);
    let key_file = tmp.path().join("signing.key");
    std::fs::write(&key_file, key.to_pem().unwrap()).unwrap();
    let root = tmp.path().join("skills");
    super::common::copy_tree(&super::skills(), &root, super::common::Order::Sorted);
    let build = |out: &Path| {
        std::fs::create_dir_all(out).unwrap();
        let mut c = Config::new();
        c.skills_dir(&root)
            .ignore_env()
            .out_dir(out)
            .no_cargo_output()
            .sign_with_key_file(&key_file);
        c.compile().unwrap();
        std::fs::read_to_string(out.join(crate::generate::REGISTRY_RS)).unwrap()
    };
    let out = tmp.path().join("out");
    let code = build(&out);
    assert_eq!(field(&code, "signing_key"), key.public().to_string());
    let signature = field(&code, "signature");
    let bytes =
        skillbake_format::manifest::unhex::<64>(signature.strip_prefix("ed25519:").unwrap())
            .unwrap();
    let manifest = manifest_of(&root);
    assert!(!manifest.is_empty());
    assert_eq!(key.public().verify(&manifest, &bytes), Ok(()));
    let other = PublicKey::parse(&SecretKey::from_seed([1; 32]).public().to_string()).unwrap();
    assert!(other.verify(&manifest, &bytes).is_err());
    // Again from the cache: the same code, the same signature.
    assert_eq!(build(&out), code);

    let mut c = Config::new();
    c.skills_dir(&root)
        .ignore_env()
        .out_dir(tmp.path().join("out2"))
        .no_cargo_output()
        .sign_with_key_file(tmp.path().join("missing.key"));
    let err = c.compile().err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        err.starts_with("skillbake: cannot sign the manifest: cannot read the signing key "),
        "{err}"
    );
    assert!(err.contains("missing.key"), "{err}");
}
