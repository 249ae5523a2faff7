//! The pipeline: discover → parse → validate → model. Collects every diagnostic of every pack.

use crate::config::{self, Level, Profile, ProjectConfig, CONFIG_FILE};
use crate::diagnostic::{sort, Code, Diagnostic, Severity};
use crate::discover::{discover, PackSource, SKILL_MD};
use crate::glob::GlobSet;
use crate::model::{default_bucket, Routing, Skill};
use crate::parse::frontmatter::{self, SkillMd};
use crate::parse::{key_text, yaml_to_json};
use crate::report::Report;
use crate::validate::requires::{self, Requirement};
use crate::validate::{self, duplicate, tools::list_items, version, PackCtx};
use std::path::{Path, PathBuf};
use yaml_serde::Value;

/// What checking a skills root produced.
#[derive(Debug, Default)]
pub struct Checked {
    /// The diagnostics and sources.
    pub report: Report,
    /// The packs that parsed, as they would be embedded (only meaningful without errors). Not
    /// public API: the model changes with the generated registry.
    #[doc(hidden)]
    pub skills: Vec<Skill>,
    /// Every path read (for rebuild tracking).
    pub tracked: Vec<PathBuf>,
    /// The routing index of `skills` (in name order), as the registry embeds it.
    pub route: Option<crate::generate::route::Built>,
}

/// Options of a check.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// `skillbake.toml` to use instead of `<root>/skillbake.toml`.
    pub config_file: Option<PathBuf>,
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
    /// `version-not-bumped` and `permission-escalation` (see [`crate::diff::gate`]).
    pub baseline: Option<Baseline>,
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
struct PackOutcome {
    diags: Vec<Diagnostic>,
    skill: Option<Skill>,
    site: Option<duplicate::NameSite>,
    requires: Vec<Requirement>,
    sources: Vec<(String, String)>,
}

/// Checks the skills root (or single pack) at `root`.
pub fn check(root: &Path, opts: &CheckOptions) -> Checked {
    let mut diags: Vec<Diagnostic> = Vec::new();
    let mut report = Report::default();
    let mut tracked = Vec::new();

    let (config_path, config_label) = match &opts.config_file {
        Some(p) => (p.clone(), p.to_string_lossy().replace('\\', "/")),
        None => (root.join(CONFIG_FILE), CONFIG_FILE.to_string()),
    };
    // A missing file is not tracked (cargo would rerun the build script every time); the skills
    // root is tracked, so creating the file there triggers a rebuild.
    if config_path.exists() {
        tracked.push(config_path.clone());
    } else if opts.config_file.is_some() {
        diags.push(config::missing(&config_label));
    }
    let mut cfg = match config::load(&config_path, &config_label) {
        Ok(c) => c,
        Err(d) => {
            if let Ok(text) = std::fs::read_to_string(&config_path) {
                report.sources.insert(config_label.clone(), text);
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
        }
    }

    let found = discover(root, &GlobSet::new(&cfg.ignore));
    diags.extend(found.diagnostics);
    tracked.extend(found.tracked);
    report.packs = found.packs.len();

    let outcomes = check_packs(&found.packs, &cfg);
    let mut skills: Vec<Skill> = Vec::new();
    let mut names = Vec::new();
    let mut pack_requires = Vec::new();
    for outcome in outcomes {
        diags.extend(outcome.diags);
        if let (Some(skill), Some(site)) = (outcome.skill, outcome.site) {
            skills.push(skill);
            names.push(site);
            pack_requires.push(outcome.requires);
        }
        report.sources.extend(outcome.sources);
    }
    duplicate::check(&names, &mut diags);
    let mut agent = cfg.requires.clone();
    if !agent.is_empty() {
        if let Ok(text) = std::fs::read_to_string(&config_path) {
            report.sources.insert(config_label.clone(), text);
        }
    }
    agent.extend(opts.requires.iter().map(|(skill, range)| Requirement {
        skill: skill.clone(),
        range: range.clone(),
        file: "build.rs".into(),
        name_pos: None,
        range_pos: None,
    }));
    let defaults = requires::resolve(&names, &pack_requires, &agent, &mut diags);
    for (skill, default) in skills.iter_mut().zip(defaults) {
        skill.default = default;
    }
    if let Some(baseline) = &opts.baseline {
        let old_opts = CheckOptions {
            config_file: None,
            baseline: None,
            ..opts.clone()
        };
        let old = check(&baseline.dir, &old_opts);
        let diff = crate::diff::diff(&old.skills, &skills, &baseline.label, ".");
        diags.extend(crate::diff::gate::diagnostics(&diff, &skills));
    }
    let mut route = None;
    if !skills.is_empty() {
        // Routing chooses among skills, each at the version an agent gets by name.
        let mut sorted: Vec<&Skill> = skills.iter().filter(|s| s.default).collect();
        sorted.sort_by(|a, b| a.name.cmp(&b.name));
        if let Ok(built) = crate::generate::route::build(&sorted) {
            let prefix = crate::default_prefix(root);
            let before = diags.len();
            report.cost = Some(validate::route::check_all(
                &sorted,
                &built,
                &cfg,
                &prefix,
                &config_label,
                &mut diags,
            ));
            if diags[before..]
                .iter()
                .any(|d| d.code == Code::CatalogOverBudget)
            {
                if let Ok(text) = std::fs::read_to_string(&config_path) {
                    report.sources.insert(config_label.clone(), text);
                }
            }
            route = Some(built);
        }
    }
    cfg.apply_levels(&mut diags);
    if opts.deny_warnings {
        for d in &mut diags {
            d.severity = Severity::Error;
        }
    }
    sort(&mut diags);
    report.diagnostics = diags;
    tracked.sort();
    tracked.dedup();
    Checked {
        report,
        skills,
        tracked,
        route,
    }
}

/// Checks packs on every available core, keeping their order.
fn check_packs(packs: &[PackSource], cfg: &ProjectConfig) -> Vec<PackOutcome> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(packs.len() / 16)
        .max(1);
    if workers == 1 {
        return packs.iter().map(|p| check_one(p, cfg)).collect();
    }
    let chunk = packs.len().div_ceil(workers);
    std::thread::scope(|scope| {
        let handles: Vec<_> = packs
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || part.iter().map(|p| check_one(p, cfg)).collect::<Vec<_>>())
            })
            .collect();
        let mut out = Vec::with_capacity(packs.len());
        for h in handles {
            // A worker only panics on a bug; re-raise it here rather than lose packs.
            out.extend(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        }
        out
    })
}

/// Parses and validates one pack.
fn check_one(pack: &PackSource, cfg: &ProjectConfig) -> PackOutcome {
    let mut out = PackOutcome::default();
    let file = validate::skill_md_path(pack);
    let Some(md_file) = pack.file(SKILL_MD) else {
        return out;
    };
    let Some(md) = frontmatter::parse(&md_file.bytes, &file, &mut out.diags) else {
        return out;
    };
    let ctx = PackCtx {
        pack,
        md: &md,
        file: file.clone(),
        config: cfg,
    };
    validate::check_pack(&ctx, &mut out.diags);
    if ctx.md.frontmatter.is_some() {
        out.requires = requires::check(&ctx, &mut out.diags);
    }
    if let Some(schema) = pack.file(validate::schema::SCHEMA_JSON) {
        if let Ok(text) = std::str::from_utf8(&schema.bytes) {
            out.sources.push((
                pack.display_path(validate::schema::SCHEMA_JSON),
                text.to_string(),
            ));
        }
    }
    if let Some(skill) = model(pack, &md) {
        out.site = Some(duplicate::NameSite {
            name: skill.name.clone(),
            file: file.clone(),
            pos: md.value_pos("name"),
            version: skill.version.clone(),
            version_pos: md.value_pos("version"),
            versioned_dir: pack.dir_version().is_some(),
        });
        out.skill = Some(skill);
    }
    out.sources.push((file, md.text));
    out
}

/// Builds the embeddable model of a pack whose frontmatter parsed and has a string name.
fn model(pack: &PackSource, md: &SkillMd) -> Option<Skill> {
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
    let requires = match fm.mapping.get("requires") {
        Some(Value::Mapping(m)) => m
            .iter()
            .filter_map(|(k, v)| match (k, v) {
                (Value::String(k), Value::String(v)) => Some((k.clone(), v.clone())),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
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
        files: pack.files.clone(),
        requires,
        default: true,
        template_vars: crate::parse::jinja::analyse(&md.body)
            .map(|a| a.vars)
            .unwrap_or_default(),
        template: crate::generate::template::compile(&md.body).map(|p| p.encode()),
        route,
    })
}
