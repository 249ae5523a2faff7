//! The incremental build: [`build`] checks and generates a skills tree like
//! [`check`](crate::check()) then [`generate`](crate::generate::generate) would, reusing what it
//! did for every pack whose files did not change since the last build. The cache is two files in
//! the output directory: `skillbake_cache.bin` holds, per pack, its files' stamps and SHA-256
//! hashes and its generated [`Fragment`] but for the fragment's text, which is a stretch of
//! `skillbake_cache_text.bin`, the text store ([`Store`]: a rebuild appends the texts it
//! generated, and reused fragments share it instead of holding copies).
//!
//! A pack is reused when every file it has is the one it had:
//!
//! * same paths, and each file's *stamp* (size, modification and change times, inode, device)
//!   equal to the recorded one — no read at all — unless the recorded stamp was *racy* (taken
//!   less than two seconds after the file's last change, when a later edit could keep the same
//!   stamp: the rule git uses for its index), then
//! * same content: the files are read and their SHA-256 compared with the recorded ones.
//!
//! Everything else is done again every time: the configuration (its text and the options are part
//! of the cache's key, with this crate's version and the build script's own executable), the walk
//! of the tree (which finds additions, deletions, renames and link problems), packs with any
//! diagnostic (so warnings are reported on every build), the cross-pack rules (`duplicate-name`,
//! and over the routing index `route-test-failed`, `description-near-duplicate`,
//! `catalog-over-budget`: the index is rebuilt from every pack's cached terms, a [`RouteDoc`]; and
//! the requirements that choose each skill's default version, from every pack's [`CrossPack`]),
//! the name index and tool definitions. Any error makes the whole check run again
//! without the cache, so a failing build reports exactly what `skillbake check` reports. The
//! output is byte-identical to a build without the cache (`tests/incremental.rs`).
//!
//! The cache is read on a second thread while the tree is walked, and written on one as soon as
//! every pack is reused or checked, while the cross-pack rules run (so also by a build that those
//! rules fail: what it records of a pack does not depend on them), unless the build reused every
//! pack it records from its stamps and found no other: then it is left as it is.

use crate::check::{self, check_one};
use crate::diagnostic::{Diagnostic, Position, Severity};
use crate::discover::{self, PackEntry, PackSource};
use crate::generate::pack::StoredText;
use crate::generate::versions;
use crate::generate::{pack, Cell, Facts, Fragment, Text, TooLarge};
use crate::glob::GlobSet;
use crate::model::NameSite;
use crate::model::Requirement;
use crate::model::{CrossPack, RouteDoc, RouteTest, Routing};
use crate::report::Report;
use crate::CheckOptions;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::{BufWriter, Read, Seek, Write};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// File name of the cache in the output directory.
pub const CACHE_FILE: &str = "skillbake_cache.bin";

/// File name of the cache's text store in the output directory: the packs' text segments, one
/// after the other, after a header naming the store (see [`Store`]).
pub const TEXT_STORE: &str = "skillbake_cache_text.bin";

/// Changes whenever the cache's layout or the meaning of a fragment changes (the tables' own
/// layout version, `skillbake_format::layout::FORMAT`, is part of the key as well).
const FORMAT: &[u8; 8] = b"SKBC0009";

/// The text store's first bytes, before its name.
const STORE_MAGIC: &[u8; 8] = b"SKBT0001";

/// The text store's header: the magic, then the store's name.
const STORE_HEADER: u64 = 40;

/// A stamp taken less than this after the file changed does not vouch for its content.
const RACY: Duration = Duration::from_secs(2);

/// What one build did, for `SKILLBAKE_BUILD_STATS` and the benchmarks.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Packs in the tree.
    pub packs: usize,
    /// Packs reused from their stamps alone (no file read).
    pub reused_by_stamp: usize,
    /// Packs reused after reading and hashing their files.
    pub reused_by_hash: usize,
    /// Packs checked and generated.
    pub generated: usize,
    /// Whether a cache was found and matched the configuration.
    pub cache_hit: bool,
    /// Reading the configuration, then walking the tree and reading the cache (at once, on
    /// two threads).
    pub walk: Duration,
    /// Stamping, reading, checking and generating the packs.
    pub packs_time: Duration,
    /// The cross-pack rules, the routing index and the default versions (while the cache is
    /// written).
    pub cross: Duration,
}

/// A file's identity on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Stamp {
    len: u64,
    mtime: i128,
    ctime: i128,
    ino: u64,
    dev: u64,
}

fn nanos(t: SystemTime) -> i128 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        let m = std::fs::metadata(path).ok()?;
        let mtime = nanos(m.modified().ok()?);
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Some(Stamp {
                len: m.len(),
                mtime,
                ctime: i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()),
                ino: m.ino(),
                dev: m.dev(),
            })
        }
        #[cfg(not(unix))]
        {
            Some(Stamp {
                len: m.len(),
                mtime,
                ..Stamp::default()
            })
        }
    }

    /// Whether the stamp, taken during a scan that started at `scan`, proves the content.
    fn settled(&self, scan: i128) -> bool {
        self.mtime.max(self.ctime) + RACY.as_nanos() as i128 <= scan
    }
}

#[derive(Debug, Clone)]
struct CachedFile {
    path: String,
    stamp: Stamp,
    /// The stamp vouches for the content (it was not racy when taken).
    settled: bool,
    hash: [u8; 32],
}

#[derive(Debug, Clone)]
struct Entry {
    rel_dir: String,
    files: Vec<CachedFile>,
    fragment: Fragment,
    /// What the cross-pack rules and the routing index need of the pack.
    cross: CrossPack,
    /// Written to the cache (false for packs with diagnostics, checked again every time).
    keep: bool,
}

/// What building needs besides the tree.
struct Ctx<'a> {
    cfg: &'a crate::config::ProjectConfig,
    compress: &'a GlobSet,
    prefix: &'a str,
    scan: i128,
}

/// The text store a cache was read with: its name (a random token the cache file repeats) and
/// the text its entries use (its first `text.len()` bytes after the header; more may follow, the
/// tail of an append that a crash cut short, which nothing uses).
///
/// A pack reused from the cache keeps its text as a stretch of `text` ([`Text::stored`]), which
/// stays on disk until the registry's text is written (then each stretch is read and checked to
/// be UTF-8; a store damaged after the cache was read makes the build run again without the
/// cache). So a rebuild neither reads the texts into memory up front nor writes them back: it
/// appends the texts of the packs it generated to the store and writes the cache file, which is
/// small, again. The store is written anew (with a new name) when nothing usable was read, or
/// when the text no pack uses any more would make up more than half of it.
struct Store {
    name: [u8; 32],
    text: Arc<StoredText>,
}

/// The result of [`build`].
pub struct Built {
    /// The check's report (every diagnostic; with errors, exactly `check`'s).
    pub report: Report,
    /// Every pack's fragment in name order (empty when there are errors).
    pub fragments: Vec<Fragment>,
    /// Per fragment, whether it is the version of its skill an agent gets by name.
    pub defaults: Vec<bool>,
    /// The routing index of the default versions.
    pub route: Option<crate::generate::route::Built>,
    /// What was reused.
    pub stats: Stats,
    /// For each fragment, what the cache records about its pack.
    meta: Vec<Meta>,
}

/// What the manifest needs of an entry besides its fragment.
struct Meta {
    files: Vec<CachedFile>,
}

impl Entry {
    /// The entry's fragment, and what the manifest needs of the rest.
    fn split(self) -> (Meta, Fragment) {
        (Meta { files: self.files }, self.fragment)
    }
}

/// One pack's outcome.
enum Processed {
    Reused(Entry, bool),
    Checked {
        diags: Vec<Diagnostic>,
        sources: Vec<(String, String)>,
        entry: Option<Entry>,
    },
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// The cache's key: this crate and build script, the configuration and options, the prefix.
fn context(cfg: &crate::config::ProjectConfig, opts: &CheckOptions, prefix: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(FORMAT);
    h.update(skillbake_format::layout::FORMAT.to_le_bytes());
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    if let Some(stamp) = std::env::current_exe().ok().and_then(|p| Stamp::of(&p)) {
        h.update(format!("{stamp:?}").as_bytes());
    }
    h.update(format!("{cfg:?}\n{opts:?}\n{prefix:?}").as_bytes());
    h.finalize().into()
}

/// Checks and generates the tree at `root`, reusing the cache in `out` (see the module docs).
pub fn build(
    root: &Path,
    opts: &CheckOptions,
    prefix: &str,
    out: &Path,
) -> Result<Built, TooLarge> {
    let started = Instant::now();
    let scan = nanos(SystemTime::now());
    let mut configured = check::configure(root, opts);
    let mut diags = std::mem::take(&mut configured.diags);
    let sources = std::mem::take(&mut configured.sources);
    let cfg = &configured.cfg;
    let context = context(cfg, opts, prefix);
    // The cache is read on a second thread while the tree is walked (neither needs the other).
    let (walked, cached) = std::thread::scope(|scope| {
        let cached = scope.spawn(|| {
            if opts.baseline.is_some() {
                None
            } else {
                load(out, &context)
            }
        });
        let walked = discover::walk(root, &GlobSet::new(&cfg.ignore));
        // A thread that panicked read nothing usable: the build goes on without the cache.
        (walked, cached.join().ok().flatten())
    });
    diags.extend(walked.diagnostics);
    let mut stats = Stats {
        packs: walked.packs.len(),
        walk: started.elapsed(),
        ..Stats::default()
    };
    if opts.baseline.is_some() {
        return full(root, opts, prefix, stats);
    }
    let (cached, store) = cached.unzip();
    let (work, gone) = pair_with_cache(walked.packs, cached, &mut stats);
    let compress = GlobSet::new(&cfg.compress);
    let ctx = Ctx {
        cfg,
        compress: &compress,
        prefix,
        scan,
    };
    let t = Instant::now();
    let processed = crate::parallel::par_map_owned(work, |(p, c)| process(p, c, &ctx));
    stats.packs_time = t.elapsed();
    let mut report = Report {
        packs: stats.packs,
        ..Report::default()
    };
    report.sources.extend(sources);
    let Some(mut entries) = collect(processed, &mut stats, &mut diags, &mut report) else {
        return full(root, opts, prefix, stats);
    };
    // Record order (by name, then version), which the defaults and the fragments follow.
    entries.sort_by(|a, b| versions::cmp(&key(a), &key(b)));
    let crosses: Vec<&CrossPack> = entries.iter().map(|e| &e.cross).collect();
    // What the cache records of each pack is final once the packs are collected: it is written
    // (into `out`, where it was read from) on a second thread while the cross-pack rules run,
    // unless it would record what it holds already: every pack it has, reused from its stamps,
    // and no other.
    let unchanged = stats.cache_hit && gone == 0 && stats.reused_by_stamp == stats.packs;
    let t = Instant::now();
    let finished = std::thread::scope(|scope| {
        // Without the cache the next build starts from scratch: not worth failing this one.
        if !unchanged {
            scope.spawn(|| save(out, &context, &entries, store.as_ref()));
        }
        check::finish(
            root,
            &configured,
            opts,
            &crosses,
            |_, _| {},
            &mut diags,
            &mut report,
        )
    });
    stats.cross = t.elapsed();
    if diags.iter().any(|d| d.severity == Severity::Error) {
        // Report exactly what a check without the cache reports (sources included).
        return full(root, opts, prefix, stats);
    }
    read_quoted_sources(root, &diags, &mut report);
    report.diagnostics = diags;
    let (meta, fragments) = entries.into_iter().map(Entry::split).unzip();
    Ok(Built {
        report,
        fragments,
        defaults: finished.defaults,
        route: finished.route,
        stats,
        meta,
    })
}

/// Each pack found, with its entry in `cached` (the cache's entries, when it was made with the
/// same context), and how many of the cache's entries name no pack found (removed or renamed).
fn pair_with_cache(
    packs: Vec<PackEntry>,
    cached: Option<Vec<Entry>>,
    stats: &mut Stats,
) -> (Vec<(PackEntry, Option<Entry>)>, usize) {
    stats.cache_hit = cached.is_some();
    let mut cached: HashMap<String, Entry> = cached
        .unwrap_or_default()
        .into_iter()
        .map(|e| (e.rel_dir.clone(), e))
        .collect();
    let paired = packs
        .into_iter()
        .map(|p| {
            let c = cached.remove(&p.rel_dir);
            (p, c)
        })
        .collect();
    (paired, cached.len())
}

/// The entries of every pack, reused or checked (their diagnostics and sources added to the
/// report); `None` when a pack could not be made into one (it has errors).
fn collect(
    processed: Vec<Processed>,
    stats: &mut Stats,
    diags: &mut Vec<Diagnostic>,
    report: &mut Report,
) -> Option<Vec<Entry>> {
    let mut entries = Vec::new();
    let mut complete = true;
    for p in processed {
        match p {
            Processed::Reused(entry, by_stamp) => {
                if by_stamp {
                    stats.reused_by_stamp += 1;
                } else {
                    stats.reused_by_hash += 1;
                }
                entries.push(entry);
            }
            Processed::Checked {
                diags: d,
                sources,
                entry,
            } => {
                stats.generated += 1;
                diags.extend(d);
                report.sources.extend(sources);
                match entry {
                    Some(e) => entries.push(e),
                    None => complete = false,
                }
            }
        }
    }
    complete.then_some(entries)
}

/// Warnings the cross-pack rules raised on packs taken from the cache quote files that were not
/// read: reads them into the report.
fn read_quoted_sources(root: &Path, diags: &[Diagnostic], report: &mut Report) {
    let files = diags
        .iter()
        .flat_map(|d| std::iter::once(&d.file).chain(d.related.iter().map(|r| &r.file)));
    for file in files {
        if !report.sources.contains_key(file) {
            if let Ok(text) = std::fs::read_to_string(root.join(file)) {
                report.sources.insert(file.clone(), text);
            }
        }
    }
}

/// The build without the cache: a whole check, then every pack generated (after an error, so
/// that the report is exactly `check`'s, and for a check against a baseline).
fn full(root: &Path, opts: &CheckOptions, prefix: &str, stats: Stats) -> Result<Built, TooLarge> {
    let checked = crate::check(root, opts);
    if checked.report.has_errors() {
        return Ok(Built {
            report: checked.report,
            fragments: Vec::new(),
            defaults: Vec::new(),
            route: None,
            stats,
            meta: Vec::new(),
        });
    }
    // No error after all (a pack lost a file between the walk and the read): generate from
    // that check.
    let skills = versions::order(&checked.skills);
    let fragments = crate::parallel::par_map(&skills, |s| pack::fragment(s, prefix))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Built {
        report: checked.report,
        fragments,
        defaults: skills.iter().map(|s| s.default).collect(),
        route: checked.route,
        stats,
        meta: Vec::new(),
    })
}

/// An entry's place in record order.
fn key(e: &Entry) -> versions::Key<'_> {
    versions::Key {
        name: &e.fragment.facts.name,
        version: e.fragment.facts.version.as_deref(),
        rel_dir: &e.fragment.facts.rel_dir,
        default: true,
    }
}

/// Reuses, or checks and generates, one pack.
fn process(pack: PackEntry, cached: Option<Entry>, ctx: &Ctx<'_>) -> Processed {
    let stamps: Vec<Option<Stamp>> = pack.files.iter().map(|f| Stamp::of(&f.disk)).collect();
    let same_paths = |c: &Entry| {
        c.files.len() == pack.files.len()
            && c.files
                .iter()
                .zip(&pack.files)
                .all(|(a, b)| a.path == b.path)
    };
    if let Some(c) = cached.as_ref().filter(|c| same_paths(c)) {
        let unchanged = c
            .files
            .iter()
            .zip(&stamps)
            .all(|(f, s)| f.settled && Some(f.stamp) == *s);
        if unchanged {
            if let Some(c) = cached {
                return Processed::Reused(c, true);
            }
        }
    }
    let mut read_diags = Vec::new();
    let rel_dir = pack.rel_dir.clone();
    let source = pack.read(&mut read_diags);
    let files: Vec<CachedFile> = source
        .files
        .iter()
        .zip(&stamps)
        .map(|(f, s)| {
            let stamp = s.unwrap_or_default();
            CachedFile {
                path: f.path.clone(),
                stamp,
                settled: s.is_some() && stamp.settled(ctx.scan),
                hash: sha256(&f.bytes),
            }
        })
        .collect();
    if read_diags.is_empty() {
        if let Some(c) = cached.filter(|c| {
            c.files.len() == files.len()
                && c.files
                    .iter()
                    .zip(&files)
                    .all(|(a, b)| a.path == b.path && a.hash == b.hash)
        }) {
            return Processed::Reused(
                Entry {
                    rel_dir,
                    files,
                    fragment: c.fragment,
                    cross: c.cross,
                    keep: true,
                },
                false,
            );
        }
    }
    checked(source, rel_dir, files, read_diags, ctx)
}

fn checked(
    source: PackSource,
    rel_dir: String,
    files: Vec<CachedFile>,
    mut diags: Vec<Diagnostic>,
    ctx: &Ctx<'_>,
) -> Processed {
    let outcome = check_one(source, ctx.cfg, ctx.compress, crate::check::Index::Always);
    let clean = diags.is_empty() && outcome.diags.is_empty();
    diags.extend(outcome.diags);
    // A pack with diagnostics is not cached (checked again next time, so its warnings are
    // reported on every build) but still generated: they may all be warnings.
    let entry = outcome
        .skill
        .as_ref()
        .zip(outcome.cross)
        .and_then(|(skill, cross)| {
            let fragment = pack::fragment(skill, ctx.prefix).ok()?;
            Some(Entry {
                rel_dir,
                files,
                fragment,
                cross,
                keep: clean,
            })
        });
    Processed::Checked {
        diags,
        sources: outcome.sources,
        entry,
    }
}

impl Built {
    /// The registry's manifest (`skillbake_format::manifest::text`): every file of every pack
    /// under its skill path with the SHA-256 this build computed, as `skillbake manifest
    /// --signed` prints it from the binary.
    pub fn manifest(&self) -> String {
        let mut files = Vec::new();
        for ((fragment, meta), &default) in
            self.fragments.iter().zip(&self.meta).zip(&self.defaults)
        {
            let facts = &fragment.facts;
            for f in &meta.files {
                let path = skillbake_format::manifest::skill_path(
                    &facts.name,
                    facts.version.as_deref(),
                    default,
                    &f.path,
                );
                files.push((path, &f.hash));
            }
        }
        skillbake_format::manifest::text(files)
    }
}

/// Writes the cache for the next build into `out`, for the entries of the packs without
/// diagnostics: the texts that `store` (the store the cache was read with) lacks appended to
/// it, or a new store when there is none or most of it is unused, then the cache file. Each
/// file is whole before the cache file names it: a new store is written aside and renamed into
/// place before the cache file that names it, and an append lands past the text the cache file
/// on disk uses; the cache file itself is written aside and renamed.
fn save(
    out: &Path,
    context: &[u8; 32],
    entries: &[Entry],
    store: Option<&Store>,
) -> std::io::Result<()> {
    let kept: Vec<&Entry> = entries.iter().filter(|e| e.keep).collect();
    let live: usize = kept.iter().map(|e| e.fragment.text.len()).sum();
    let added: usize = kept
        .iter()
        .filter(|e| store.is_none_or(|s| e.fragment.text.within(&s.text).is_none()))
        .map(|e| e.fragment.text.len())
        .sum();
    let store = store.filter(|s| 2 * live >= s.text.len() + added);
    let path = out.join(TEXT_STORE);
    // Where each kept entry's text is in the store the cache file will name.
    let (name, ranges, len) = match store {
        Some(s) => {
            let mut f = std::fs::OpenOptions::new().write(true).open(&path)?;
            f.seek(std::io::SeekFrom::Start(STORE_HEADER + s.text.len() as u64))?;
            let mut w = BufWriter::with_capacity(1 << 16, f);
            let (ranges, end) = put_texts(&mut w, &kept, Some(&s.text), s.text.len())?;
            w.into_inner()
                .map_err(|e| e.into_error())?
                .set_len(STORE_HEADER + end as u64)?;
            (s.name, ranges, end)
        }
        None => {
            let mut h = Sha256::new();
            h.update(context);
            h.update(format!("{:?} {}", SystemTime::now(), std::process::id()).as_bytes());
            let name: [u8; 32] = h.finalize().into();
            let tmp = out.join(format!("{TEXT_STORE}.tmp"));
            let mut w = BufWriter::with_capacity(1 << 16, std::fs::File::create(&tmp)?);
            w.write_all(STORE_MAGIC)?;
            w.write_all(&name)?;
            let (ranges, end) = put_texts(&mut w, &kept, None, 0)?;
            w.flush()?;
            drop(w);
            std::fs::rename(&tmp, &path)?;
            (name, ranges, end)
        }
    };
    let path = out.join(CACHE_FILE);
    let tmp = out.join(format!("{CACHE_FILE}.tmp"));
    {
        let mut w = BufWriter::with_capacity(1 << 16, std::fs::File::create(&tmp)?);
        w.write_all(FORMAT)?;
        w.write_all(context)?;
        w.write_all(&name)?;
        put_u64(&mut w, len as u64)?;
        put_u64(&mut w, kept.len() as u64)?;
        for (e, text) in kept.iter().zip(ranges) {
            put_entry(&mut w, e, text)?;
        }
        w.write_all(FORMAT)?;
        w.flush()?;
    }
    std::fs::rename(&tmp, path)
}

/// Writes the texts of `kept` that are not stretches of `store` to `w`, where the store's text
/// reaches `end`; where each kept entry's text is in the store, and where its text then ends.
fn put_texts(
    w: &mut impl Write,
    kept: &[&Entry],
    store: Option<&Arc<StoredText>>,
    mut end: usize,
) -> std::io::Result<(Vec<Range<usize>>, usize)> {
    let mut ranges = Vec::with_capacity(kept.len());
    let mut buf = Vec::new();
    for e in kept {
        let text = &e.fragment.text;
        match store.and_then(|s| text.within(s)) {
            Some(r) => ranges.push(r),
            None => {
                w.write_all(text.bytes(&mut buf)?)?;
                ranges.push(end..end + text.len());
                end += text.len();
            }
        }
    }
    Ok((ranges, end))
}

/// The cached entries and the store of their texts, when the cache file in `out` exists, is
/// whole and has this `context`, and the store it names is there with the text it uses.
fn load(out: &Path, context: &[u8; 32]) -> Option<(Vec<Entry>, Store)> {
    // Read whole, then parsed in memory: reading each field from a buffered file took as long
    // again as the parse.
    let bytes = std::fs::read(out.join(CACHE_FILE)).ok()?;
    let mut r = bytes.as_slice();
    let magic: [u8; 8] = get_array(&mut r)?;
    let key: [u8; 32] = get_array(&mut r)?;
    if &magic != FORMAT || &key != context {
        return None;
    }
    let name: [u8; 32] = get_array(&mut r)?;
    let len = get_u64(&mut r)?;
    let text = read_store(out, &name, len)?;
    let n = get_u64(&mut r)?;
    let mut entries = Vec::with_capacity(n.min(1 << 20) as usize);
    for _ in 0..n {
        entries.push(get_entry(&mut r, &text)?);
    }
    let magic: [u8; 8] = get_array(&mut r)?;
    (&magic == FORMAT && r.is_empty()).then_some((entries, Store { name, text }))
}

/// The first `len` bytes of text of the store named `name` in `out`, left on disk until they are
/// written out (reading the store whole cost a rebuild more than the rest of the cache).
fn read_store(out: &Path, name: &[u8; 32], len: u64) -> Option<Arc<StoredText>> {
    let mut f = std::fs::File::open(out.join(TEXT_STORE)).ok()?;
    if f.metadata().ok()?.len() < STORE_HEADER.checked_add(len)? {
        return None;
    }
    let mut header = [0u8; STORE_HEADER as usize];
    f.read_exact(&mut header).ok()?;
    if header.get(..8)? != STORE_MAGIC || header.get(8..)? != name {
        return None;
    }
    Some(Arc::new(StoredText::new(
        f,
        STORE_HEADER,
        usize::try_from(len).ok()?,
    )))
}

fn put_u64(w: &mut impl Write, v: u64) -> std::io::Result<()> {
    w.write_all(&v.to_le_bytes())
}

fn put_bytes(w: &mut impl Write, b: &[u8]) -> std::io::Result<()> {
    put_u64(w, b.len() as u64)?;
    w.write_all(b)
}

fn put_stamp(w: &mut impl Write, s: &Stamp) -> std::io::Result<()> {
    put_u64(w, s.len)?;
    w.write_all(&s.mtime.to_le_bytes())?;
    w.write_all(&s.ctime.to_le_bytes())?;
    put_u64(w, s.ino)?;
    put_u64(w, s.dev)
}

fn put_cells(w: &mut impl Write, cells: &[Cell]) -> std::io::Result<()> {
    put_u64(w, cells.len() as u64)?;
    for c in cells {
        let (tag, v) = match *c {
            Cell::Plain(v) => (0u8, v),
            Cell::Text(v) => (1, v),
            Cell::Data(v) => (2, v),
            Cell::File(v) => (3, v),
            Cell::Field(v) => (4, v),
            Cell::List(v) => (5, v),
            Cell::ByteSlot(v) => (6, v),
        };
        w.write_all(&[tag])?;
        w.write_all(&v.to_le_bytes())?;
    }
    Ok(())
}

/// Writes `e`, whose text is at `text` in the store.
fn put_entry(w: &mut impl Write, e: &Entry, text: Range<usize>) -> std::io::Result<()> {
    let fr = &e.fragment;
    put_bytes(w, e.rel_dir.as_bytes())?;
    put_u64(w, e.files.len() as u64)?;
    for f in &e.files {
        put_bytes(w, f.path.as_bytes())?;
        put_stamp(w, &f.stamp)?;
        w.write_all(&[u8::from(f.settled)])?;
        w.write_all(&f.hash)?;
    }
    put_u64(w, text.start as u64)?;
    put_u64(w, text.len() as u64)?;
    put_bytes(w, &fr.data)?;
    put_cells(w, &fr.skill)?;
    put_u64(w, fr.files.len() as u64)?;
    for row in &fr.files {
        put_cells(w, row)?;
    }
    put_u64(w, fr.fields.len() as u64)?;
    for row in &fr.fields {
        put_cells(w, row)?;
    }
    put_u64(w, fr.lists.len() as u64)?;
    for row in &fr.lists {
        put_cells(w, row)?;
    }
    put_u64(w, u64::from(fr.byte_slots))?;
    let facts = &fr.facts;
    put_bytes(w, facts.name.as_bytes())?;
    put_bytes(w, facts.description.as_bytes())?;
    put_bytes(w, facts.skill_md_path.as_bytes())?;
    match &facts.schema {
        Some(s) => {
            w.write_all(&[1])?;
            put_bytes(w, s)?;
        }
        None => w.write_all(&[0])?,
    }
    put_bytes(w, facts.bucket.as_bytes())?;
    put_opt(w, facts.version.as_deref())?;
    put_bytes(w, facts.rel_dir.as_bytes())?;
    put_cross(w, &e.cross)
}

fn put_opt(w: &mut impl Write, s: Option<&str>) -> std::io::Result<()> {
    match s {
        Some(s) => {
            w.write_all(&[1])?;
            put_bytes(w, s.as_bytes())
        }
        None => w.write_all(&[0]),
    }
}

fn put_cross(w: &mut impl Write, c: &CrossPack) -> std::io::Result<()> {
    let s = &c.site;
    put_bytes(w, s.name.as_bytes())?;
    put_bytes(w, s.file.as_bytes())?;
    put_pos(w, s.pos)?;
    put_opt(w, s.version.as_deref())?;
    put_pos(w, s.version_pos)?;
    w.write_all(&[u8::from(s.versioned_dir)])?;
    put_u64(w, c.requires.len() as u64)?;
    for r in &c.requires {
        put_bytes(w, r.skill.as_bytes())?;
        put_bytes(w, r.range.as_bytes())?;
        put_bytes(w, r.file.as_bytes())?;
        put_pos(w, r.name_pos)?;
        put_pos(w, r.range_pos)?;
    }
    put_doc(w, &c.doc)
}

fn get_opt(r: &mut &[u8]) -> Option<Option<String>> {
    Some(match get_u8(r)? {
        1 => Some(get_string(r)?),
        _ => None,
    })
}

fn get_cross(r: &mut &[u8]) -> Option<CrossPack> {
    let site = NameSite {
        name: get_string(r)?,
        file: get_string(r)?,
        pos: get_pos(r)?,
        version: get_opt(r)?,
        version_pos: get_pos(r)?,
        versioned_dir: get_u8(r)? == 1,
    };
    let n = get_count(r)?;
    let mut requires = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        requires.push(Requirement {
            skill: get_string(r)?,
            range: get_string(r)?,
            file: get_string(r)?,
            name_pos: get_pos(r)?,
            range_pos: get_pos(r)?,
        });
    }
    Some(CrossPack {
        site,
        requires,
        doc: get_doc(r)?,
    })
}

fn put_strings(w: &mut impl Write, items: &[String]) -> std::io::Result<()> {
    put_u64(w, items.len() as u64)?;
    for s in items {
        put_bytes(w, s.as_bytes())?;
    }
    Ok(())
}

fn put_pos(w: &mut impl Write, pos: Option<Position>) -> std::io::Result<()> {
    match pos {
        Some(p) => {
            w.write_all(&[1])?;
            for v in [p.line, p.column, p.len] {
                w.write_all(&v.to_le_bytes())?;
            }
            Ok(())
        }
        None => w.write_all(&[0]),
    }
}

fn put_doc(w: &mut impl Write, d: &RouteDoc) -> std::io::Result<()> {
    put_bytes(w, d.name.as_bytes())?;
    put_bytes(w, d.description.as_bytes())?;
    put_bytes(w, d.rel_dir.as_bytes())?;
    put_strings(w, &d.tags)?;
    let r = &d.route;
    put_bytes(w, r.bucket.as_bytes())?;
    put_strings(w, &r.when_to_use)?;
    put_strings(w, &r.when_not_to_use)?;
    put_u64(w, r.tests.len() as u64)?;
    for t in &r.tests {
        put_bytes(w, t.query.as_bytes())?;
        w.write_all(&[u8::from(t.should_match)])?;
        put_pos(w, t.pos)?;
    }
    put_bytes(w, r.file.as_bytes())?;
    put_pos(w, r.description_pos)?;
    put_u64(w, d.terms.count() as u64)?;
    put_bytes(w, d.terms.text().as_bytes())?;
    let mut ends = Vec::with_capacity(d.terms.count() * 8);
    let mut start = 0;
    for &(end, ref tf) in d.terms.ends() {
        put_term(&mut ends, end.saturating_sub(start), tf)?;
        start = end;
    }
    put_bytes(w, &ends)?;
    for v in d.terms.len {
        w.write_all(&v.to_le_bytes())?;
    }
    Ok(())
}

/// One term of a pack and its weight in each field, compactly (the term's bytes are in the
/// pack's text of terms): most of a cache is terms, and most terms occur in one or two of the
/// eight fields. The term's length as a LEB128 number, a byte with one bit per field whose
/// weight is not `+0.0`, then those weights' bits; a weight left out reads back as `+0.0`, so
/// every weight round-trips bit for bit.
fn put_term(w: &mut impl Write, len: usize, tf: &[f32; 8]) -> std::io::Result<()> {
    put_leb128(w, len as u64)?;
    let mut mask = 0u8;
    for (f, v) in tf.iter().enumerate() {
        if v.to_bits() != 0 {
            mask |= 1 << f;
        }
    }
    w.write_all(&[mask])?;
    for v in tf.iter().filter(|v| v.to_bits() != 0) {
        w.write_all(&v.to_bits().to_le_bytes())?;
    }
    Ok(())
}

/// Reads what [`put_term`] wrote: the term's length and its weights.
fn get_term(r: &mut &[u8]) -> Option<(usize, [f32; 8])> {
    let len = usize::try_from(get_leb128(r)?).ok()?;
    let (&mask, rest) = r.split_first()?;
    *r = rest;
    let mut tf = [0f32; 8];
    for (f, v) in tf.iter_mut().enumerate() {
        if mask & (1 << f) != 0 {
            let (bits, rest) = r.split_first_chunk::<4>()?;
            *v = f32::from_bits(u32::from_le_bytes(*bits));
            *r = rest;
        }
    }
    Some((len, tf))
}

fn put_leb128(w: &mut impl Write, mut v: u64) -> std::io::Result<()> {
    let mut buf = [0u8; 10];
    let mut n = 0;
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if let Some(b) = buf.get_mut(n) {
            *b = if v == 0 { byte } else { byte | 0x80 };
        }
        n += 1;
        if v == 0 {
            break;
        }
    }
    w.write_all(buf.get(..n).unwrap_or(&buf))
}

/// A LEB128 number of at most ten bytes (`None` past that or past 64 bits).
fn get_leb128(r: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..70).step_by(7) {
        let byte = get_u8(r)?;
        let bits = u64::from(byte & 0x7f);
        if shift == 63 && bits > 1 {
            return None;
        }
        v |= bits << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

fn get_u32(r: &mut &[u8]) -> Option<u32> {
    Some(u32::from_le_bytes(get_array(r)?))
}

fn get_strings(r: &mut &[u8]) -> Option<Vec<String>> {
    let n = get_count(r)?;
    let mut v = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        v.push(get_string(r)?);
    }
    Some(v)
}

fn get_pos(r: &mut &[u8]) -> Option<Option<Position>> {
    Some(match get_u8(r)? {
        1 => Some(Position {
            line: get_u32(r)?,
            column: get_u32(r)?,
            len: get_u32(r)?,
        }),
        _ => None,
    })
}

fn get_doc(r: &mut &[u8]) -> Option<RouteDoc> {
    let name = get_string(r)?;
    let description = get_string(r)?;
    let rel_dir = get_string(r)?;
    let tags = get_strings(r)?;
    let bucket = get_string(r)?;
    let when_to_use = get_strings(r)?;
    let when_not_to_use = get_strings(r)?;
    let n = get_count(r)?;
    let mut tests = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        tests.push(RouteTest {
            query: get_string(r)?,
            should_match: get_u8(r)? == 1,
            pos: get_pos(r)?,
        });
    }
    let file = get_string(r)?;
    let description_pos = get_pos(r)?;
    let n = get_count(r)?;
    let text = get_string(r)?;
    let mut rest = get_slice(r)?;
    let mut ends = Vec::with_capacity(n.min(rest.len()));
    let mut end = 0usize;
    for _ in 0..n {
        let (len, tf) = get_term(&mut rest)?;
        end = end.checked_add(len)?;
        ends.push((end, tf));
    }
    let mut len = [0f64; 8];
    for v in &mut len {
        *v = f64::from_bits(get_u64(r)?);
    }
    if !rest.is_empty() {
        return None;
    }
    let terms = crate::model::DocTerms::from_parts(text, ends, len)?;
    Some(RouteDoc {
        name,
        description,
        rel_dir,
        tags,
        route: Routing {
            bucket,
            when_to_use,
            when_not_to_use,
            tests,
            file,
            description_pos,
        },
        terms,
    })
}

fn get_u64(r: &mut &[u8]) -> Option<u64> {
    Some(u64::from_le_bytes(get_array(r)?))
}

fn get_i128(r: &mut &[u8]) -> Option<i128> {
    Some(i128::from_le_bytes(get_array(r)?))
}

fn get_u8(r: &mut &[u8]) -> Option<u8> {
    let (&b, rest) = r.split_first()?;
    *r = rest;
    Some(b)
}

/// The next `N` bytes.
fn get_array<const N: usize>(r: &mut &[u8]) -> Option<[u8; N]> {
    let (b, rest) = r.split_first_chunk::<N>()?;
    *r = rest;
    Some(*b)
}

/// The next `n` bytes, `n` read first (a damaged length finds too few bytes and allocates
/// nothing).
fn get_slice<'a>(r: &mut &'a [u8]) -> Option<&'a [u8]> {
    let n = usize::try_from(get_u64(r)?).ok()?;
    let (b, rest) = r.split_at_checked(n)?;
    *r = rest;
    Some(b)
}

fn get_bytes(r: &mut &[u8]) -> Option<Vec<u8>> {
    get_slice(r).map(<[u8]>::to_vec)
}

fn get_string(r: &mut &[u8]) -> Option<String> {
    std::str::from_utf8(get_slice(r)?).ok().map(str::to_owned)
}

fn get_count(r: &mut &[u8]) -> Option<usize> {
    usize::try_from(get_u64(r)?).ok().filter(|&n| n < 1 << 32)
}

fn get_cells(r: &mut &[u8]) -> Option<Vec<Cell>> {
    let n = get_count(r)?;
    let mut cells = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        let tag = get_u8(r)?;
        let v = get_u32(r)?;
        cells.push(match tag {
            0 => Cell::Plain(v),
            1 => Cell::Text(v),
            2 => Cell::Data(v),
            3 => Cell::File(v),
            4 => Cell::Field(v),
            5 => Cell::List(v),
            6 => Cell::ByteSlot(v),
            _ => return None,
        });
    }
    Some(cells)
}

fn get_row<const N: usize>(r: &mut &[u8]) -> Option<[Cell; N]> {
    get_cells(r)?.try_into().ok()
}

fn get_entry(r: &mut &[u8], store: &Arc<StoredText>) -> Option<Entry> {
    let rel_dir = get_string(r)?;
    let n = get_count(r)?;
    let mut files = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        let path = get_string(r)?;
        let stamp = Stamp {
            len: get_u64(r)?,
            mtime: get_i128(r)?,
            ctime: get_i128(r)?,
            ino: get_u64(r)?,
            dev: get_u64(r)?,
        };
        let settled = get_u8(r)? == 1;
        let hash = get_array(r)?;
        files.push(CachedFile {
            path,
            stamp,
            settled,
            hash,
        });
    }
    let start = usize::try_from(get_u64(r)?).ok()?;
    let len = usize::try_from(get_u64(r)?).ok()?;
    let text = Text::stored(store, start..start.checked_add(len)?)?;
    let data = get_bytes(r)?;
    let skill = get_cells(r)?;
    let n = get_count(r)?;
    let mut frows = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        frows.push(get_cells(r)?);
    }
    let n = get_count(r)?;
    let mut fields = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        fields.push(get_row(r)?);
    }
    let n = get_count(r)?;
    let mut lists = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        lists.push(get_row(r)?);
    }
    let byte_slots = u32::try_from(get_u64(r)?).ok()?;
    let name = get_string(r)?;
    let description = get_string(r)?;
    let skill_md_path = get_string(r)?;
    let schema = match get_u8(r)? {
        1 => Some(get_bytes(r)?),
        _ => None,
    };
    let bucket = get_string(r)?;
    let version = get_opt(r)?;
    let pack_dir = get_string(r)?;
    let cross = get_cross(r)?;
    Some(Entry {
        rel_dir,
        files,
        cross,
        keep: true,
        fragment: Fragment {
            text,
            data,
            skill,
            files: frows,
            fields,
            lists,
            byte_slots,
            facts: Facts {
                name,
                description,
                skill_md_path,
                schema,
                bucket,
                version,
                rel_dir: pack_dir,
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::DocTerms;

    fn round_trip(len: usize, tf: [f32; 8]) -> Option<(usize, [f32; 8])> {
        let mut bytes = Vec::new();
        put_term(&mut bytes, len, &tf).ok()?;
        let mut r = bytes.as_slice();
        let back = get_term(&mut r)?;
        r.is_empty().then_some(back)
    }

    /// Every weight comes back bit for bit, whichever fields hold one.
    #[test]
    fn terms_round_trip_bit_for_bit() {
        let odd = [
            0.0,
            -0.0,
            f32::NAN,
            f32::MIN_POSITIVE / 2.0,
            1.5,
            f32::INFINITY,
            0.0,
            3.25,
        ];
        for (len, tf) in [
            (6, [0.0; 8]),
            (7, [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.5]),
            (6, [1.0; 8]),
            (0, odd),
            (300, [0.0; 8]),
        ] {
            let Some((l, back)) = round_trip(len, tf) else {
                panic!("{len}, {tf:?} did not round-trip")
            };
            assert_eq!(l, len);
            let bits = |a: [f32; 8]| a.map(f32::to_bits);
            assert_eq!(bits(back), bits(tf), "{len}");
        }
    }

    #[test]
    fn leb128_round_trips_and_refuses_overlong_numbers() {
        for v in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut bytes = Vec::new();
            assert!(put_leb128(&mut bytes, v).is_ok());
            assert_eq!(get_leb128(&mut bytes.as_slice()), Some(v));
        }
        // Eleven continuation bytes, and a tenth byte past 64 bits.
        assert_eq!(get_leb128(&mut [0x80u8; 11].as_slice()), None);
        let mut past = vec![0xffu8; 9];
        past.push(0x02);
        assert_eq!(get_leb128(&mut past.as_slice()), None);
        // Cut short.
        assert_eq!(get_leb128(&mut [0x80u8].as_slice()), None);
    }

    /// A term cut short reads as `None`.
    #[test]
    fn a_damaged_term_is_refused() {
        let mut cut = Vec::new();
        assert!(put_term(&mut cut, 6, &[1.0; 8]).is_ok());
        for n in 0..cut.len() {
            assert_eq!(get_term(&mut &cut[..n]), None, "{n} bytes");
        }
    }

    /// A pack's terms come back from the cache as they went in, in order; bytes that are not
    /// UTF-8, a term past the end of the pack's text, or one that ends inside a character make
    /// the entry unreadable.
    #[test]
    fn a_packs_terms_round_trip_and_bad_bytes_are_refused() {
        let mut terms = crate::model::DocTerms::with_capacity(3, 16);
        for (t, f) in [("analys", 0usize), ("report", 7), ("用户", 3)] {
            let mut tf = [0f32; 8];
            tf[f] = 1.25;
            terms.push(t, tf);
        }
        terms.len = [1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.5];
        let doc = RouteDoc {
            name: "pack".into(),
            terms,
            ..RouteDoc::default()
        };
        let mut bytes = Vec::new();
        assert!(put_doc(&mut bytes, &doc).is_ok());
        assert_eq!(get_doc(&mut bytes.as_slice()).as_ref(), Some(&doc));
        let listed: Vec<&str> = doc.terms.iter().map(|(t, _)| t).collect();
        assert_eq!(listed, ["analys", "report", "用户"]);
        let Some(at) = bytes.windows(6).position(|w| w == b"report") else {
            panic!("the term is not in the entry")
        };
        let mut bad = bytes.clone();
        bad[at] = 0xff;
        assert_eq!(get_doc(&mut bad.as_slice()), None);
        // The terms' lengths (6, 6 and 6 bytes) follow the text: the last one one byte longer
        // runs past the text, and the second one byte shorter ends the third inside `用`.
        let text = "analysreport用户".as_bytes();
        let Some(at) = bytes.windows(text.len()).position(|w| w == text) else {
            panic!("the text of terms is not in the entry")
        };
        let lens: Vec<usize> = (0..bytes.len())
            .filter(|&i| i > at + text.len() && bytes[i] == 6)
            .take(3)
            .collect();
        assert_eq!(lens.len(), 3);
        let mut long = bytes.clone();
        long[lens[2]] = 7;
        assert_eq!(get_doc(&mut long.as_slice()), None);
        assert!(DocTerms::from_parts("用".into(), vec![(1, [0.0; 8])], [0.0; 8]).is_none());
        // Text after the last term.
        assert!(DocTerms::from_parts("abc".into(), vec![(2, [0.0; 8])], [0.0; 8]).is_none());
        assert!(
            DocTerms::from_parts("ab".into(), vec![(2, [0.0; 8]), (1, [0.0; 8])], [0.0; 8])
                .is_none()
        );
        assert!(
            DocTerms::from_parts("ab".into(), vec![(1, [0.0; 8]), (2, [0.0; 8])], [0.0; 8])
                .is_some()
        );
    }
}
