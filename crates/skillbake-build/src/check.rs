//! The pipeline: discover → parse → validate → model. Collects every diagnostic of every pack.

use crate::checked::Checked;
use crate::config::{self, Level, Profile, ProjectConfig, CONFIG_FILE};
use crate::diagnostic::{sort, Code, Diagnostic, Severity};
use crate::discover::{discover, PackSource, SourceFile, SKILL_MD};
use crate::glob::GlobSet;
use crate::model::{default_bucket, CrossPack, RouteDoc, Routing, Skill};
use crate::model::{NameSite, Requirement};
use crate::parse::frontmatter::{self, SkillMd};
use crate::parse::{key_text, yaml_to_json};
use crate::report::Report;
use crate::validate::requires;
use crate::validate::{self, duplicate, tools::list_items, version, PackCtx};
use std::path::{Path, PathBuf};
use yaml_serde::Value;

thread_local! {
    /// One tokenizer per worker, remembering the term of every word it has seen: pack bodies
    /// share most of their words, and stemming was most of `check`'s time.
    static TOKENIZER: std::cell::RefCell<skillbake_route::tokenize::Tokenizer> =
        std::cell::RefCell::new(skillbake_route::tokenize::Tokenizer::new().with_word_cache());
}

/// Options of a check.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// `skillbake.toml` to use instead of `<root>/skillbake.toml`.
    pub config_file: Option<PathBuf>,
    /// The text of the configuration file (`config_file`, or `<root>/skillbake.toml`) to use
    /// instead of reading it: an editor's unsaved buffer. Its diagnostics, spans and sources are
    /// those of that text, under the file's usual name; the file need not exist.
    pub config_text: Option<String>,
    /// Tool names known in addition to the built-ins and the config file's.
    pub extra_tools: Vec<String>,
    /// Profile to use instead of the config file's.
    pub profile: Option<Profile>,
    /// Levels that win over the config file's `[lints]` (hard errors stay errors).
    pub lints: Vec<(Code, Level)>,
    /// Report every warning as an error (`--deny warnings`).
    pub deny_warnings: bool,
    /// Skills the agent relies on, as (name, version range), in addition to the config
    /// file's `[requires]` (`Config::require`).
    pub requires: Vec<(String, String)>,
    /// The skills folder as it was before the change under review (`check --baseline REV`:
    /// a revision read with [`crate::diff::git::read`], or any folder): adds
    /// `version-not-bumped` and `permission-escalation` (see `diff::gate`).
    pub baseline: Option<Baseline>,
    /// Compare every vendored pack with `skills.lock` at the root (`check --locked`):
    /// `lock-mismatch` and `lock-invalid` (see `vendor::lock`).
    pub locked: bool,
    /// Leave the report's [`Report::cost`] out (what the catalog costs in a prompt and how large
    /// the routing index is), for a caller that does not show it (`check --quiet`, the formats
    /// other than human and JSON, the editor): the routing index of a single pack is then built
    /// only for its `route_tests`, since no other routing rule can fire on one pack. The
    /// diagnostics are the same either way.
    pub without_cost: bool,
}

/// The state a check compares against.
#[derive(Debug, Clone)]
pub struct Baseline {
    /// The skills folder as it was.
    pub dir: PathBuf,
    /// What it is, for messages (`main:skills`).
    pub label: String,
}

/// What one pack contributes to the check.
#[derive(Default)]
pub(crate) struct PackOutcome {
    pub(crate) diags: Vec<Diagnostic>,
    pub(crate) skill: Option<Skill>,
    pub(crate) sources: Vec<(String, String)>,
    /// What the cross-pack rules need of the pack (with `skill`, when it has a model).
    pub(crate) cross: Option<CrossPack>,
}

/// The configuration in effect for a check, with what reading it reported.
pub(crate) struct Configured {
    pub(crate) cfg: ProjectConfig,
    pub(crate) diags: Vec<Diagnostic>,
    pub(crate) sources: Vec<(String, String)>,
    /// The configuration file's text (given, or read once), when there is one.
    pub(crate) text: Option<String>,
    /// The configuration file's name in diagnostics.
    pub(crate) label: String,
}

impl Configured {
    /// Adds the configuration file's text to the report's sources (a diagnostic points into it).
    fn keep_source(&self, report: &mut Report) {
        if let Some(text) = &self.text {
            report.sources.insert(self.label.clone(), text.clone());
        }
    }
}

/// Reads the configuration file (`skillbake.toml` at `root`, or the one given) and applies the
/// options on top of it.
pub(crate) fn configure(root: &Path, opts: &CheckOptions) -> Configured {
    let mut diags = Vec::new();
    let mut sources = Vec::new();
    let (config_path, config_label) = match &opts.config_file {
        Some(p) => (p.clone(), p.to_string_lossy().replace('\\', "/")),
        None => (root.join(CONFIG_FILE), CONFIG_FILE.to_string()),
    };
    let (loaded, text) = match &opts.config_text {
        Some(text) => (config::parse(text, &config_label), Some(text.clone())),
        None => match config::read(&config_path, &config_label) {
            Ok(Some(text)) => (config::parse(&text, &config_label), Some(text)),
            Ok(None) => {
                if opts.config_file.is_some() {
                    diags.push(config::missing(&config_label));
                }
                (Ok(ProjectConfig::default()), None)
            }
            Err(d) => (Err(d), None),
        },
    };
    let mut cfg = match loaded {
        Ok(c) => c,
        Err(d) => {
            if let Some(text) = &text {
                sources.push((config_label.clone(), text.clone()));
            }
            diags.extend(d);
            ProjectConfig::default()
        }
    };
    cfg.known_tools.extend(opts.extra_tools.iter().cloned());
    if let Some(p) = opts.profile {
        cfg.profile = p;
    }
    for &(code, level) in &opts.lints {
        if !code.is_hard() {
            cfg.lints.insert(code, level);
            // The command line wins over a pack's own levels too.
            for levels in cfg.pack_lints.values_mut() {
                levels.remove(&code);
            }
        }
    }
    Configured {
        cfg,
        diags,
        sources,
        text,
        label: config_label,
    }
}

/// What [`finish`] computed besides diagnostics.
pub(crate) struct Finished {
    /// Per pack (in the order given), whether it is the version of its skill an agent gets by
    /// name.
    pub(crate) defaults: Vec<bool>,
    /// The routing index of the default versions, in name order.
    pub(crate) route: Option<crate::generate::route::Built>,
}

/// The cross-pack rules: `duplicate-name`; the agent's and the packs' requirements, which say
/// which version of each skill is the default (`then` sees those defaults and may add
/// diagnostics); over the routing index of the default versions (built here, in name order)
/// `route-test-failed`, `description-near-duplicate` and `catalog-over-budget`, with the
/// catalog's cost in the report; then levels, `--deny warnings` and the order.
pub(crate) fn finish(
    root: &Path,
    configured: &Configured,
    opts: &CheckOptions,
    packs: &[&CrossPack],
    then: impl FnOnce(&[bool], &mut Vec<Diagnostic>),
    diags: &mut Vec<Diagnostic>,
    report: &mut Report,
) -> Finished {
    let cfg = &configured.cfg;
    if opts.locked {
        crate::vendor::lock::check(root, diags, &mut report.sources);
    }
    let names: Vec<NameSite> = packs.iter().map(|p| p.site.clone()).collect();
    duplicate::check(&names, diags);
    let mut agent = cfg.requires.clone();
    if !agent.is_empty() {
        configured.keep_source(report);
    }
    agent.extend(opts.requires.iter().map(|(skill, range)| Requirement {
        skill: skill.clone(),
        range: range.clone(),
        file: "build.rs".into(),
        name_pos: None,
        range_pos: None,
    }));
    let pack_requires: Vec<Vec<Requirement>> = packs.iter().map(|p| p.requires.clone()).collect();
    let defaults = requires::resolve(&names, &pack_requires, &agent, diags);
    then(&defaults, diags);
    let mut route = None;
    // Routing chooses among skills, each at the version an agent gets by name.
    let mut docs: Vec<&RouteDoc> = packs
        .iter()
        .zip(&defaults)
        .filter(|(_, &d)| d)
        .map(|(p, _)| &p.doc)
        .collect();
    if !docs.is_empty() {
        docs.sort_by(|a, b| a.name.cmp(&b.name));
        // Without a cost to report, the index of one pack serves only its routing tests.
        let index_read =
            !opts.without_cost || docs.len() > 1 || docs.iter().any(|d| !d.route.tests.is_empty());
        let built = if index_read {
            crate::generate::route::build_docs(&docs).ok()
        } else {
            None
        };
        if index_read == built.is_some() {
            let prefix = crate::generate::default_prefix(root);
            let before = diags.len();
            let cost = validate::route::check_all(
                &docs,
                built.as_ref(),
                cfg,
                &prefix,
                &configured.label,
                diags,
            );
            if !opts.without_cost {
                report.cost = Some(cost);
            }
            let over = diags
                .get(before..)
                .unwrap_or_default()
                .iter()
                .any(|d| d.code == Code::CatalogOverBudget);
            if over {
                configured.keep_source(report);
            }
            route = built;
        }
    }
    cfg.apply_levels(diags);
    if opts.deny_warnings {
        for d in diags.iter_mut() {
            d.severity = Severity::Error;
        }
    }
    sort(diags);
    Finished { defaults, route }
}

/// Checks the skills root (or single pack) at `root`.
pub fn check(root: &Path, opts: &CheckOptions) -> Checked {
    check_with(root, opts, |cfg| discover(root, &GlobSet::new(&cfg.ignore)))
}

/// Checks the skills root (or single pack) at `root` as [`check`] does, with the files of
/// `overlay` in place of what is on disk: each entry is a `/`-separated path relative to `root`
/// and the bytes to check under it (an editor's unsaved buffer). A file the walk did not find
/// is added to the pack whose folder holds it; a `SKILL.md` of a folder that holds no pack on
/// disk makes one. Nothing is written.
pub fn check_overlay(root: &Path, opts: &CheckOptions, overlay: &[(String, Vec<u8>)]) -> Checked {
    check_with(root, opts, |cfg| {
        let mut found = discover(root, &GlobSet::new(&cfg.ignore));
        if overlay.iter().any(|(p, _)| p == SKILL_MD) {
            // The root itself is the pack: what the walk said about a missing one is moot.
            found
                .diagnostics
                .retain(|d| d.file != "." || !matches!(d.code, Code::NoPacks | Code::IoError));
        }
        for (path, bytes) in overlay {
            apply_overlay(root, &mut found.packs, path, bytes);
        }
        found
    })
}

/// Checks one pack that exists only in memory (a scaffold before it is written): `dir_name` is
/// the name of the folder it would have, `files` its `/`-separated paths and bytes. The
/// configuration is `root`'s `skillbake.toml` (the skills root the pack would be created in),
/// when there is one; nothing else is read.
pub fn check_files(
    root: &Path,
    opts: &CheckOptions,
    dir_name: &str,
    files: Vec<(String, Vec<u8>)>,
) -> Checked {
    let mut files: Vec<SourceFile> = files
        .into_iter()
        .map(|(path, bytes)| SourceFile { path, bytes })
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let pack = PackSource {
        rel_dir: String::new(),
        dir_name: dir_name.to_string(),
        files,
    };
    check_with(root, opts, |_| crate::discover::Discovered {
        packs: vec![pack],
        diagnostics: Vec::new(),
    })
}

/// Puts `bytes` at `path` (relative to the skills root `root`) into the pack that holds it.
fn apply_overlay(root: &Path, packs: &mut Vec<PackSource>, path: &str, bytes: &[u8]) {
    let (dir, file) = match path.rsplit_once('/') {
        Some((d, f)) => (d, f),
        None => ("", path),
    };
    let holder = packs
        .iter_mut()
        .filter(|p| {
            p.rel_dir.is_empty() || dir == p.rel_dir || dir.starts_with(&format!("{}/", p.rel_dir))
        })
        .max_by_key(|p| p.rel_dir.len());
    let pack = match holder {
        Some(p) => p,
        None if file == SKILL_MD => {
            let dir_name = match dir.rsplit('/').next().filter(|d| !d.is_empty()) {
                Some(d) => d.to_string(),
                None => std::fs::canonicalize(root)
                    .ok()
                    .and_then(|r| r.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .unwrap_or_default(),
            };
            packs.push(PackSource {
                rel_dir: dir.to_string(),
                dir_name,
                files: Vec::new(),
            });
            packs.sort_by(|a, b| a.rel_dir.cmp(&b.rel_dir));
            return apply_overlay(root, packs, path, bytes);
        }
        None => return,
    };
    let rel = match pack.rel_dir.len() {
        0 => path.to_string(),
        n => path.get(n + 1..).unwrap_or_default().to_string(),
    };
    match pack.files.binary_search_by(|f| f.path.as_str().cmp(&rel)) {
        Ok(i) => {
            if let Some(f) = pack.files.get_mut(i) {
                f.bytes = bytes.to_vec();
            }
        }
        Err(i) => pack.files.insert(
            i,
            SourceFile {
                path: rel,
                bytes: bytes.to_vec(),
            },
        ),
    }
}

/// [`check`] on the packs `find` returns (given the configuration in effect).
fn check_with(
    root: &Path,
    opts: &CheckOptions,
    find: impl FnOnce(&ProjectConfig) -> crate::discover::Discovered,
) -> Checked {
    let mut report = Report::default();
    let mut configured = configure(root, opts);
    let mut diags = std::mem::take(&mut configured.diags);
    report
        .sources
        .extend(std::mem::take(&mut configured.sources));
    let cfg = &configured.cfg;

    let found = find(cfg);
    diags.extend(found.diagnostics);
    report.packs = found.packs.len();

    let compress = GlobSet::new(&cfg.compress);
    // With one pack, only its own routing tests can read the index.
    let index = if opts.without_cost && found.packs.len() <= 1 {
        Index::ForTests
    } else {
        Index::Always
    };
    let outcomes = check_packs(found.packs, cfg, &compress, index);
    let mut skills: Vec<Skill> = Vec::new();
    let mut crosses = Vec::new();
    for outcome in outcomes {
        diags.extend(outcome.diags);
        if let (Some(skill), Some(cross)) = (outcome.skill, outcome.cross) {
            skills.push(skill);
            crosses.push(cross);
        }
        report.sources.extend(outcome.sources);
    }
    let refs: Vec<&CrossPack> = crosses.iter().collect();
    let finished = finish(
        root,
        &configured,
        opts,
        &refs,
        |defaults, diags| {
            for (skill, &default) in skills.iter_mut().zip(defaults) {
                skill.default = default;
            }
            if let Some(baseline) = &opts.baseline {
                let old_opts = CheckOptions {
                    config_file: None,
                    config_text: None,
                    baseline: None,
                    locked: false,
                    ..opts.clone()
                };
                let old = check(&baseline.dir, &old_opts);
                let diff = crate::diff::diff_packs(&old.skills, &skills, &baseline.label, ".");
                diags.extend(crate::diff::gate::diagnostics(&diff, &skills));
            }
        },
        &mut diags,
        &mut report,
    );
    let route = finished.route;
    add_missing_sources(&mut report, &diags, &skills);
    report.diagnostics = diags;
    Checked {
        report,
        skills,
        route,
    }
}

/// When a check needs the routing terms of its packs (the index built over them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Index {
    /// Always: the build embeds the index, the report shows its size, or several packs are
    /// compared (`description-near-duplicate`).
    Always,
    /// Only for a pack with `route_tests`.
    ForTests,
}

/// Checks packs on every available core, keeping their order; each pack's files move into its
/// model (nothing is copied).
fn check_packs(
    packs: Vec<PackSource>,
    cfg: &ProjectConfig,
    compress: &GlobSet,
    index: Index,
) -> Vec<PackOutcome> {
    crate::parallel::par_map_owned(packs, |p| check_one(p, cfg, compress, index))
}

/// Parses and validates one pack.
pub(crate) fn check_one(
    mut pack: PackSource,
    cfg: &ProjectConfig,
    compress: &GlobSet,
    index: Index,
) -> PackOutcome {
    let mut out = PackOutcome::default();
    let file = validate::skill_md_path(&pack);
    let Some(md_file) = pack.file(SKILL_MD) else {
        return out;
    };
    let Some(md) = frontmatter::parse(&md_file.bytes, &file, &mut out.diags) else {
        out.keep_sources(&pack, None);
        return out;
    };
    // One parse of the body for the Jinja2 rule, the variables and the instruction table.
    let (jinja, template) = crate::generate::template::analyse_and_compile(&md.body);
    let ctx = PackCtx {
        pack: &pack,
        md: &md,
        file: file.clone(),
        config: cfg,
        jinja: &jinja,
    };
    validate::check_pack(&ctx, &mut out.diags);
    let mut requires = Vec::new();
    if ctx.md.frontmatter.is_some() {
        requires = requires::check(&ctx, &mut out.diags);
    }
    cfg.apply_pack_levels(pack.dir_skill_name(), &mut out.diags);
    out.keep_sources(&pack, Some(&md.text));
    if let Some(mut skill) = model(&pack, &md, &jinja, template) {
        let site = NameSite {
            name: skill.name.clone(),
            file: file.clone(),
            pos: md.value_pos("name"),
            version: skill.version.clone(),
            version_pos: md.value_pos("version"),
            versioned_dir: pack.dir_version().is_some(),
        };
        skill.compress = pack
            .files
            .iter()
            .filter(|f| compress.matches(&pack.display_path(&f.path)))
            .map(|f| f.path.clone())
            .collect();
        skill.files = std::mem::take(&mut pack.files);
        let doc = if index == Index::Always || !skill.route.tests.is_empty() {
            TOKENIZER.with_borrow_mut(|tok| crate::generate::route::doc(&skill, tok))
        } else {
            crate::generate::route::doc_without_terms(&skill)
        };
        out.cross = Some(CrossPack {
            site,
            requires,
            doc,
        });
        out.skill = Some(skill);
    }
    out
}

impl PackOutcome {
    /// Keeps the texts that diagnostics quote (`SKILL.md`, `schema.json`), when there are any.
    fn keep_sources(&mut self, pack: &PackSource, md_text: Option<&str>) {
        if self.diags.is_empty() {
            return;
        }
        for name in [SKILL_MD, validate::schema::SCHEMA_JSON] {
            let text = match (name, md_text) {
                (SKILL_MD, Some(t)) => Some(t),
                _ => pack
                    .file(name)
                    .and_then(|f| std::str::from_utf8(&f.bytes).ok()),
            };
            if let Some(text) = text {
                self.sources
                    .push((pack.display_path(name), text.to_string()));
            }
        }
    }
}

/// Sources for diagnostics found after the packs were checked (duplicate names, routing rules)
/// and for the places they relate to, from the packs' own files.
fn add_missing_sources(report: &mut Report, diags: &[Diagnostic], skills: &[Skill]) {
    let files = diags
        .iter()
        .flat_map(|d| std::iter::once(&d.file).chain(d.related.iter().map(|r| &r.file)));
    // Every file of the packs by its path (packs do not nest, so a path names one file), made
    // when a file is first missing: looking through every pack's files for each diagnostic
    // was quadratic.
    let mut bytes_at: Option<std::collections::HashMap<String, &[u8]>> = None;
    for file in files {
        if report.sources.contains_key(file) {
            continue;
        }
        let bytes_at = bytes_at.get_or_insert_with(|| {
            skills
                .iter()
                .flat_map(|s| {
                    s.files.iter().map(|f| {
                        (
                            crate::discover::join(&s.rel_dir, &f.path),
                            f.bytes.as_slice(),
                        )
                    })
                })
                .collect()
        });
        let found = bytes_at
            .get(file.as_str())
            .and_then(|b| std::str::from_utf8(b).ok());
        if let Some(text) = found {
            report.sources.insert(file.clone(), text.to_string());
        }
    }
}

/// Builds the embeddable model of a pack whose frontmatter parsed and has a string name (its
/// files are moved in by the caller), with what Jinja2 makes of its body and its instruction
/// table.
fn model(
    pack: &PackSource,
    md: &SkillMd,
    jinja: &Result<crate::parse::jinja::Analysis, crate::parse::jinja::JinjaError>,
    template: Result<skillbake_format::template::Program, String>,
) -> Option<Skill> {
    let fm = md.frontmatter.as_ref()?;
    let text = |k: &str| match fm.mapping.get(k) {
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    };
    let name = text("name")?;
    let description = text("description").unwrap_or_default();
    let fields: Vec<(String, String)> = fm
        .mapping
        .iter()
        .map(|(k, v)| {
            (
                key_text(k),
                serde_json::to_string(&yaml_to_json(v)).unwrap_or_default(),
            )
        })
        .collect();
    let json = yaml_to_json(&Value::Mapping(fm.mapping.clone()));
    let version = version::written(md);
    let requires = fm
        .mapping
        .get("requires")
        .map(requires::skill_deps)
        .unwrap_or_default()
        .into_iter()
        .map(|d| (d.skill, d.range))
        .collect();
    let list = |k: &str| fm.mapping.get(k).map(list_items).unwrap_or_default();
    let texts = |k: &str| match fm.mapping.get(k) {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Sequence(items)) => items
            .iter()
            .filter_map(|i| i.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    let route = Routing {
        bucket: text("bucket")
            .map(|b| b.trim().trim_matches('/').to_string())
            .unwrap_or_else(|| default_bucket(&pack.rel_dir)),
        when_to_use: texts("when_to_use"),
        when_not_to_use: texts("when_not_to_use"),
        tests: validate::route::tests(md),
        file: validate::skill_md_path(pack),
        description_pos: md.value_pos("description"),
    };
    Some(Skill {
        name,
        description,
        rel_dir: pack.rel_dir.clone(),
        body: md.body.clone(),
        fields,
        frontmatter_json: serde_json::to_string(&json).unwrap_or_default(),
        tags: list("tags"),
        required_tools: list("required_tools"),
        version,
        files: Vec::new(),
        compress: Vec::new(),
        requires,
        default: true,
        template_vars: jinja.as_ref().map(|a| a.vars.clone()).unwrap_or_default(),
        template: template.map(|p| p.encode()),
        route,
    })
}
