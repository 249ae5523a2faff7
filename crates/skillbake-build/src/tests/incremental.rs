//! The incremental build (`crate::cache`): after every kind of change to a skills tree
//! (none, an edit, a touch without change, an addition, a rename, a deletion, a configuration
//! change, a pack with warnings, an error), a build that reuses the cache in its output folder
//! writes byte for byte what a clean build writes, reuses what it should and reports what a
//! check reports.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::cache::Stats;
use crate::generate::{BYTES_FILE, REGISTRY_RS, ROUTE_FILE, TEXT_FILE};
use crate::{CheckOptions, Config};
use std::path::{Path, PathBuf};

struct Tree {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    out: PathBuf,
    clean: PathBuf,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn pack(name: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: Test pack {name}. Use when testing the build cache.\n---\n# {name}\n\n{body}\n")
}

impl Tree {
    fn new() -> Tree {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("skills");
        for i in 0..24 {
            let name = format!("pack-{i:02}");
            write(
                &root.join(&name).join("SKILL.md"),
                &pack(
                    &name,
                    &format!("Body of pack {i}.\n\n\"Quoted\"\tand\\back-slashed."),
                ),
            );
            write(
                &root.join(&name).join("scripts/run.py"),
                &format!("print({i})\n"),
            );
        }
        write(
            &root.join("pack-03/assets/data.bin"),
            "\u{0}\u{1}binary\u{0}",
        );
        write(
            &root.join("pack-04/references/guide.md"),
            &"A guide line.\n".repeat(200),
        );
        let out = tmp.path().join("out");
        let clean = tmp.path().join("clean");
        std::fs::create_dir_all(&out).unwrap();
        Tree {
            _tmp: tmp,
            root,
            out,
            clean,
        }
    }

    fn config(&self, out: &Path) -> Config {
        let mut c = Config::new();
        c.skills_dir(&self.root)
            .ignore_env()
            .out_dir(out)
            .location_prefix("skills")
            .no_cargo_output();
        c
    }

    /// Builds incrementally into `out` and from scratch into `clean`; the outputs must agree.
    fn build(&self) -> Stats {
        let stats = self.config(&self.out).compile_stats().unwrap();
        let _ = std::fs::remove_dir_all(&self.clean);
        std::fs::create_dir_all(&self.clean).unwrap();
        let fresh = self.config(&self.clean).compile_stats().unwrap();
        assert!(!fresh.cache_hit);
        for file in [REGISTRY_RS, TEXT_FILE, BYTES_FILE, ROUTE_FILE] {
            let a = std::fs::read(self.out.join(file)).unwrap();
            let b = std::fs::read(self.clean.join(file)).unwrap();
            assert!(a == b, "{file} differs from a clean build");
        }
        stats
    }
}

/// When the cache file in the output folder was last written.
fn cache_written(t: &Tree) -> std::time::SystemTime {
    std::fs::metadata(t.out.join(crate::cache::CACHE_FILE))
        .and_then(|m| m.modified())
        .unwrap()
}

/// Files written by the test are younger than the cache's racy window until this much later.
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(2100));
}

#[test]
fn rebuilds_reuse_unchanged_packs_and_match_a_clean_build() {
    let t = Tree::new();
    settle();
    let s = t.build();
    assert!(!s.cache_hit);
    assert_eq!((s.packs, s.generated), (24, 24));

    // No change: every pack from its stamps, nothing read, and the cache not written again.
    let written = cache_written(&t);
    let s = t.build();
    assert!(s.cache_hit);
    assert_eq!(
        (s.reused_by_stamp, s.reused_by_hash, s.generated),
        (24, 0, 0)
    );
    assert_eq!(cache_written(&t), written, "an unchanged cache was written");

    // One edit: that pack alone is checked and generated.
    write(
        &t.root.join("pack-07/SKILL.md"),
        &pack("pack-07", "An edited body, longer than the one before it."),
    );
    let s = t.build();
    assert_eq!((s.reused_by_stamp, s.generated), (23, 1));

    // A touch that changes no byte: read and hashed, not generated (pack-07 too: its stamp was
    // taken within the racy window of its edit, so it does not vouch for the content).
    settle();
    let p = t.root.join("pack-08/scripts/run.py");
    let same = std::fs::read_to_string(&p).unwrap();
    write(&p, &same);
    let s = t.build();
    assert_eq!(
        (s.reused_by_stamp, s.reused_by_hash, s.generated),
        (22, 2, 0)
    );

    // A pack deleted, every other one reused from its stamps: the cache forgets it.
    settle();
    let _ = t.build();
    let gone = t.root.join("pack-23");
    let kept = std::fs::read_to_string(gone.join("SKILL.md")).unwrap();
    std::fs::remove_dir_all(&gone).unwrap();
    let written = cache_written(&t);
    let s = t.build();
    assert_eq!((s.packs, s.reused_by_stamp), (23, 23));
    assert_ne!(
        cache_written(&t),
        written,
        "the cache still records a deleted pack"
    );
    write(&gone.join("SKILL.md"), &kept);
    write(&gone.join("scripts/run.py"), "print(23)\n");
    settle();
    let s = t.build();
    assert_eq!((s.packs, s.generated), (24, 1));

    // Additions, renames and deletions, of files and of packs.
    write(&t.root.join("pack-09/references/new.md"), "new\n");
    std::fs::rename(
        t.root.join("pack-10/scripts/run.py"),
        t.root.join("pack-10/scripts/main.py"),
    )
    .unwrap();
    std::fs::remove_file(t.root.join("pack-11/scripts/run.py")).unwrap();
    write(
        &t.root.join("pack-99/SKILL.md"),
        &pack("pack-99", "New pack."),
    );
    std::fs::remove_dir_all(t.root.join("pack-12")).unwrap();
    let s = t.build();
    assert_eq!(s.packs, 24);
    assert_eq!(s.generated, 4);
    assert_eq!(s.reused_by_stamp + s.reused_by_hash, 20);

    // A pack with a warning is checked again every time; the warning is reported every time.
    write(
        &t.root.join("pack-13/SKILL.md"),
        "---\nname: pack-13\ndescription: Test pack. Use when testing the build cache.\nflavour: x\n---\nBody.\n",
    );
    let s = t.build();
    assert_eq!(s.generated, 1);
    settle();
    let s = t.build();
    assert_eq!(s.generated, 1);
    assert_eq!(s.reused_by_stamp + s.reused_by_hash, 23);

    // The configuration is part of the key: a new one regenerates everything.
    write(
        &t.root.join("skillbake.toml"),
        "[embed]\ncompress = [\"references/**\"]\n",
    );
    let s = t.build();
    assert!(!s.cache_hit);
    assert_eq!(s.generated, 24);

    // An error fails the build with exactly what `check` reports.
    write(&t.root.join("pack-14/SKILL.md"), &pack("pack-forty", "x"));
    let err = t.config(&t.out).compile().unwrap_err();
    let checked = crate::check(&t.root, &CheckOptions::default());
    assert!(checked.report.has_errors());
    match err {
        crate::Error::Invalid(report) => {
            let render = crate::report::human::render;
            assert_eq!(render(&report, false), render(&checked.report, false));
            assert_eq!(report.sources, checked.report.sources);
        }
        other => panic!("{other}"),
    }
}

#[test]
fn a_damaged_cache_is_ignored() {
    let t = Tree::new();
    t.build();
    let cache = t.out.join(crate::cache::CACHE_FILE);
    let bytes = std::fs::read(&cache).unwrap();
    std::fs::write(&cache, &bytes[..bytes.len() / 2]).unwrap();
    let s = t.build();
    assert!(!s.cache_hit);
    assert_eq!(s.generated, 24);
}

/// The cache file is read whole and parsed from memory: cut short anywhere (in its header,
/// inside an entry, before its closing tag), it is refused, never half used, and the build
/// writes what a clean build writes.
#[test]
fn a_cache_cut_anywhere_is_refused_and_the_build_matches_a_clean_one() {
    let t = Tree::new();
    t.build();
    let cache = t.out.join(crate::cache::CACHE_FILE);
    let store = t.out.join(crate::cache::TEXT_STORE);
    let (bytes, text) = (
        std::fs::read(&cache).unwrap(),
        std::fs::read(&store).unwrap(),
    );
    // Each build without the cache writes a new store and cache: both are put back each time,
    // so that only the cut can make the cache unusable.
    let put_back = |cut: usize| {
        std::fs::write(&cache, &bytes[..cut]).unwrap();
        std::fs::write(&store, &text).unwrap();
    };
    // Every length through the header and the first entry, then lengths at even steps.
    let mut cuts: Vec<usize> = (0..bytes.len().min(120)).collect();
    cuts.extend((1..24).map(|k| bytes.len() * k / 24));
    cuts.push(bytes.len() - 1);
    for cut in cuts {
        put_back(cut);
        let s = t.build();
        assert!(
            !s.cache_hit,
            "a cache cut to {cut} of {} bytes was used",
            bytes.len()
        );
        assert_eq!(s.generated, 24);
    }
    // Whole, the same files are used.
    put_back(bytes.len());
    let s = t.build();
    assert!(s.cache_hit);
    assert_eq!(s.generated, 0);
}

/// The texts of the packs are kept in a store beside the cache file: a store that is gone or
/// shorter than the text the cache uses makes the cache unusable (every pack is generated
/// again); bytes after that text (an append cut short) are ignored.
#[test]
fn a_missing_or_cut_text_store_is_ignored_and_a_longer_one_is_used() {
    let t = Tree::new();
    settle();
    t.build();
    let store = t.out.join(crate::cache::TEXT_STORE);
    let bytes = std::fs::read(&store).unwrap();

    std::fs::write(&store, [bytes.as_slice(), b"an append cut short"].concat()).unwrap();
    let s = t.build();
    assert!(s.cache_hit);
    assert_eq!((s.reused_by_stamp, s.generated), (24, 0));

    std::fs::write(&store, &bytes[..bytes.len() - 1]).unwrap();
    let s = t.build();
    assert!(!s.cache_hit);
    assert_eq!(s.generated, 24);

    std::fs::remove_file(&store).unwrap();
    let s = t.build();
    assert!(!s.cache_hit);
    assert_eq!(s.generated, 24);
}

/// The store is read only when the registry's text is written: a store damaged in place after
/// the cache was checked (a byte that makes a reused text not UTF-8) is found then, and the
/// build is done again without the cache instead of writing the damage or failing.
#[test]
fn a_text_store_damaged_in_place_is_found_when_written_and_the_build_done_again() {
    let t = Tree::new();
    settle();
    t.build();
    let store = t.out.join(crate::cache::TEXT_STORE);
    let mut bytes = std::fs::read(&store).unwrap();
    let last = bytes.len() - 1;
    bytes[last] = 0xFF;
    std::fs::write(&store, &bytes).unwrap();
    let s = t.build();
    assert!(!s.cache_hit, "the second attempt starts without the cache");
    assert_eq!(s.generated, 24);
    // The next build reuses the cache that attempt wrote.
    let s = t.build();
    assert!(s.cache_hit);
    assert_eq!(s.generated, 0);
}

/// A rebuild appends the texts of the packs it generated to the store; once the texts no pack
/// uses would make up more than half of it, the store is written anew with the used ones only.
#[test]
fn the_text_store_grows_by_appends_and_is_compacted() {
    let t = Tree::new();
    settle();
    t.build();
    let store = t.out.join(crate::cache::TEXT_STORE);
    let size = || std::fs::metadata(&store).unwrap().len();
    let text = || std::fs::metadata(t.out.join(TEXT_FILE)).unwrap().len();
    let mut sizes = vec![size()];
    for i in 0..12 {
        write(
            &t.root.join("pack-05/SKILL.md"),
            &pack(
                "pack-05",
                &format!(
                    "Edit {i}.
{}",
                    "A long line.
"
                    .repeat(300)
                ),
            ),
        );
        let s = t.build();
        assert_eq!((s.reused_by_stamp, s.generated), (23, 1), "edit {i}");
        sizes.push(size());
        // Never more than twice the texts in use (the registry's text holds them all).
        assert!(size() <= 40 + 2 * text(), "edit {i}: {sizes:?}");
    }
    // Edits 0 to 9 leave the text as long as it was: only an append makes the store longer.
    assert!(
        sizes[1..11].windows(2).any(|w| w[1] > w[0]),
        "no edit appended: {sizes:?}"
    );
    assert!(
        sizes.windows(2).any(|w| w[1] < w[0]),
        "the store was never compacted: {sizes:?}"
    );
}

/// What is decided across packs — which version of a skill is the default (from the agent's
/// requirements), the routing index, warnings one pack gets because of another — is decided
/// again on every build from what the cache keeps of each pack: the output matches a clean
/// build, and a warning raised on a pack taken from the cache is reported with its source.
#[test]
fn versions_requirements_and_cross_pack_warnings_survive_the_cache() {
    let t = Tree::new();
    let versioned = |version: &str| {
        format!("---\nname: greet\ndescription: Greets a user by name, version {version}.\nversion: {version}\n---\n# Greet {version}\n")
    };
    write(&t.root.join("greet/SKILL.md"), &versioned("2.0.0"));
    write(&t.root.join("greet@1.0.0/SKILL.md"), &versioned("1.0.0"));
    write(
        &t.root.join("skillbake.toml"),
        "[requires]\ngreet = \"^1\"\n",
    );
    let twin =
        "Summarises quarterly sales figures from the finance spreadsheet into a short table.";
    for name in ["sales-a", "sales-b"] {
        write(
            &t.root.join(name).join("SKILL.md"),
            &format!("---\nname: {name}\ndescription: {twin}\n---\n# {name}\n"),
        );
    }
    settle();
    let s = t.build();
    assert_eq!(s.packs, 28);
    let near = |report: &crate::Report| {
        report
            .diagnostics
            .iter()
            .filter(|d| d.code == crate::Code::DescriptionNearDuplicate)
            .map(|d| (d.file.clone(), report.sources.contains_key(&d.file)))
            .collect::<Vec<_>>()
    };
    let opts = CheckOptions::default();
    let checked = crate::check(&t.root, &opts);
    let expected = near(&checked.report);
    assert!(!expected.is_empty(), "the twins raise no warning");
    assert!(expected.iter().all(|(_, quoted)| *quoted));

    // Nothing changed: every pack from the cache, the same warnings with their sources.
    let built = crate::cache::build(&t.root, &opts, "skills", &t.out).unwrap();
    assert_eq!(built.stats.generated, 0);
    assert_eq!(near(&built.report), expected);

    // An edit elsewhere: the default version and the index are decided again, the same way.
    write(
        &t.root.join("pack-05/SKILL.md"),
        &pack("pack-05", "Edited."),
    );
    let s = t.build();
    assert_eq!(s.generated, 1);

    // A new requirement moves the default: the cached packs follow.
    write(
        &t.root.join("skillbake.toml"),
        "[requires]\ngreet = \"^2\"\n",
    );
    let s = t.build();
    assert_eq!(s.packs, 28);
}
