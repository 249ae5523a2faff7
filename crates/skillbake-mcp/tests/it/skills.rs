//! The MCP Skills extension in process, through `Server` (what every transport hands
//! `skills/list`, `skills/get`, `resources/directory/read` and `resources/read` to), on the
//! executor's fixture packs (two versions of one skill among them): every digest and size is
//! that of the bytes `resources/read` serves, every frontmatter is the YAML of the served
//! `SKILL.md`, pages add up to the whole listing, folders add up to the manifest, and every
//! hostile request gets a message that says what is wrong.

use serde_json::{Map, Value};
use sha2::Digest as _;
use skillbake_exec_fixtures::REGISTRY;
use skillbake_mcp::{Contents, DirEntry, Server, SkillEntry, DIRECTORY_MIME_TYPE};
use std::collections::BTreeSet;

fn server() -> Server {
    Server::new(&REGISTRY).unwrap()
}

/// Every entry, walking the pages of `server`.
fn walk(server: &Server) -> (Vec<SkillEntry>, usize) {
    let (mut all, mut pages, mut cursor) = (Vec::new(), 0, None::<String>);
    loop {
        let page = server.skills_page(cursor.as_deref()).unwrap();
        pages += 1;
        assert!(
            pages <= REGISTRY.all_versions().len() + 1,
            "the pages never end"
        );
        all.extend(page.skills);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return (all, pages),
        }
    }
}

fn bytes(c: &Contents) -> &'static [u8] {
    match c {
        Contents::Text { text, .. } => text.as_bytes(),
        Contents::Blob { bytes, .. } => bytes,
    }
}

fn sha256(bytes: &[u8]) -> String {
    let hex: String = sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// The frontmatter of a served `SKILL.md` as a YAML parser reads it, as JSON.
fn parsed_frontmatter(skill_md: &str) -> Map<String, Value> {
    let rest = skill_md.strip_prefix("---\n").expect("frontmatter");
    let end = rest.find("\n---").expect("closing ---");
    let yaml: yaml_serde::Value = yaml_serde::from_str(&rest[..end]).unwrap();
    match serde_json::to_value(yaml).unwrap() {
        Value::Object(m) => m,
        other => panic!("frontmatter is not a mapping: {other}"),
    }
}

#[test]
fn every_digest_size_and_frontmatter_is_what_read_serves() {
    let server = server();
    let (entries, _) = walk(&server);
    // Every version of every fixture pack (their names and metadata are all portable).
    assert_eq!(entries.len(), REGISTRY.all_versions().len());
    for entry in &entries {
        assert_eq!(server.skill_entry(&entry.uri).as_ref(), Ok(entry));
        let skill_md = server.read(&entry.uri).expect("SKILL.md reads");
        let Contents::Text { text, .. } = skill_md else {
            panic!("{}: SKILL.md is not served as text", entry.uri)
        };
        assert_eq!(parsed_frontmatter(text), entry.frontmatter, "{}", entry.uri);
        assert!(entry.resources.iter().any(|r| r.uri == entry.uri));
        for r in &entry.resources {
            let read = server
                .read(&r.uri)
                .unwrap_or_else(|| panic!("{} reads", r.uri));
            assert_eq!(r.size, bytes(&read).len() as u64, "{}", r.uri);
            assert_eq!(r.digest, sha256(bytes(&read)), "{}", r.uri);
        }
    }
}

#[test]
fn pages_add_up_to_the_whole_listing() {
    let (whole, pages) = walk(&server());
    assert_eq!(pages, 1);
    for size in [1, 2, 3, 7] {
        let (paged, pages) = walk(&server().with_skills_page(size));
        assert_eq!(paged, whole, "pages of {size}");
        assert_eq!(pages, whole.len().div_ceil(size), "pages of {size}");
    }
    let uris: BTreeSet<&str> = whole.iter().map(|e| e.uri.as_str()).collect();
    assert_eq!(uris.len(), whole.len(), "a skill is listed twice");
}

#[test]
fn versions_side_by_side_have_their_own_skill_paths() {
    let server = server();
    let (entries, _) = walk(&server);
    let versioned: Vec<(&str, &Value)> = entries
        .iter()
        .filter(|e| e.frontmatter["name"] == "versioned")
        .map(|e| (e.uri.as_str(), &e.frontmatter["version"]))
        .collect();
    assert_eq!(
        versioned,
        [
            ("skill://v1.0.0/versioned/SKILL.md", &Value::from("1.0.0")),
            ("skill://versioned/SKILL.md", &Value::from("2.0.0")),
        ]
    );
    let script = |uri: &str| match server.read(uri) {
        Some(Contents::Text { text, .. }) => text,
        other => panic!("{uri}: {other:?}"),
    };
    let old = script("skill://v1.0.0/versioned/scripts/which.py");
    assert_ne!(old, script("skill://versioned/scripts/which.py"));
    // The default version at its versioned path, and the alias of earlier releases.
    assert_eq!(
        script("skill://v2.0.0/versioned/scripts/which.py"),
        script("skill://versioned/scripts/which.py")
    );
    assert_eq!(script("skill://versioned%401.0.0/scripts/which.py"), old);
    let dir: Vec<String> = server
        .read_directory("skill://v1.0.0", None)
        .unwrap()
        .into_iter()
        .map(|d| format!("{} {}", d.uri, d.mime_type))
        .collect();
    assert_eq!(dir, ["skill://v1.0.0/versioned inode/directory"]);
}

/// Every file under `uri`, reading folders down.
fn files_under(server: &Server, uri: &str, depth: usize) -> Vec<DirEntry> {
    assert!(depth < 16, "folders nest deeper than any pack");
    let mut out = Vec::new();
    for child in server.read_directory(uri, None).unwrap() {
        assert_eq!(child.uri, format!("{uri}/{}", child.name));
        if child.mime_type == DIRECTORY_MIME_TYPE {
            assert_eq!(child.size, None);
            out.extend(files_under(server, &child.uri, depth + 1));
        } else {
            out.push(child);
        }
    }
    out
}

#[test]
fn folders_add_up_to_the_manifest() {
    let server = server();
    for entry in walk(&server).0 {
        let root = entry.uri.strip_suffix("/SKILL.md").unwrap();
        let found: Vec<(String, Option<u64>)> = files_under(&server, root, 0)
            .into_iter()
            .map(|d| (d.uri, d.size))
            .collect();
        let manifest: Vec<(String, Option<u64>)> = entry
            .resources
            .iter()
            .map(|r| (r.uri.clone(), Some(r.size)))
            .collect();
        assert_eq!(found, manifest, "{root}");
    }
}

#[test]
fn hostile_requests_say_what_is_wrong() {
    let server = server();
    let mut out = String::new();
    for uri in [
        "skill://nope/SKILL.md",
        "skill://echo/schema.json",
        "skill://echo",
        "skill://Echo/SKILL.md",
        "skill://v2.0.0/versioned/SKILL.md",
        "skill://v9.9.9/versioned/SKILL.md",
        "skill://echo/SKILL.md?x=1",
        "file://echo/SKILL.md",
        "",
    ] {
        let e = server.skill_entry(uri).unwrap_err();
        out.push_str(&format!("skills/get {uri:?}\n  {e}\n"));
    }
    for cursor in ["x", "-1", "1000000", "", " 1"] {
        let e = server.skills_page(Some(cursor)).unwrap_err();
        out.push_str(&format!("skills/list cursor {cursor:?}\n  {e}\n"));
    }
    for (uri, cursor) in [
        ("skill://echo/SKILL.md", None),
        ("skill://echo/scripts/echo.py", None),
        ("skill://echo/nope", None),
        ("skill://echo/", None),
        ("skill://echo/scripts/", None),
        ("skill://nope", None),
        ("skill://v9.9.9", None),
        ("skill://echo", Some("1")),
        ("https://example.com/x", None),
    ] {
        let e = server.read_directory(uri, cursor).unwrap_err();
        out.push_str(&format!(
            "resources/directory/read {uri:?} cursor {cursor:?}\n  {e}\n"
        ));
    }
    for uri in [
        "skill://echo",
        "skill://v1.0.0",
        "skill://echo/",
        "skill://echo/scripts",
    ] {
        assert_eq!(server.read(uri), None, "{uri}");
    }
    insta::assert_snapshot!("hostile_requests", out);
}

/// The fixture registry is built signed (with the test key next to its build script): every
/// entry carries the same provenance under skillbake's own `_meta` prefix, and a host that
/// rebuilds the manifest from the digests it was served (every entry's resources, as
/// `SHA256  PATH` lines sorted by path) finds the signature good under the published key, and
/// bad as soon as one digest differs.
#[test]
fn signed_registries_offer_their_signature_as_provenance() {
    use skillbake_build::sign::PublicKey;
    let server = server();
    let (entries, _) = walk(&server);
    let published = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../skillbake-exec/tests/exec-fixtures/test-signing.pub"
    ))
    .unwrap();
    let key = PublicKey::parse(&published).unwrap();
    let provenance = entries[0].provenance.clone().expect("a signed registry");
    assert_eq!(provenance["algorithm"], "ed25519");
    assert_eq!(provenance["publicKey"], key.to_string().as_str());
    assert_eq!(provenance["signedFormat"], "skillbake signed manifest v1");
    assert!(entries
        .iter()
        .all(|e| e.provenance.as_ref() == Some(&provenance)));
    let signature = provenance["signature"].as_str().unwrap();
    let signature =
        skillbake_format::manifest::unhex::<64>(signature.strip_prefix("ed25519:").unwrap())
            .unwrap();
    let mut lines: Vec<String> = entries
        .iter()
        .flat_map(|e| &e.resources)
        .map(|r| {
            let path =
                skillbake_format::percent::decode(r.uri.strip_prefix("skill://").unwrap()).unwrap();
            format!("{}  {path}\n", r.digest.strip_prefix("sha256:").unwrap())
        })
        .collect();
    lines.sort_by(|a, b| {
        a.split_once("  ")
            .unwrap()
            .1
            .cmp(b.split_once("  ").unwrap().1)
    });
    let manifest = lines.concat();
    assert_eq!(key.verify(&manifest, &signature), Ok(()));
    let tampered = manifest.replacen(
        &manifest[..1],
        if manifest.starts_with('0') { "1" } else { "0" },
        1,
    );
    assert!(key.verify(&tampered, &signature).is_err());
}
