//! The pipeline: discover → parse → validate → model. Collects every diagnostic of every pack.

use crate::config::{self, Level, Profile, ProjectConfig, CONFIG_FILE};
use crate::diagnostic::{sort, Code, Diagnostic, Severity};
use crate::discover::{discover, PackSource, SKILL_MD};
use crate::glob::GlobSet;
use crate::model::Skill;
use crate::parse::frontmatter::{self, SkillMd};
use crate::parse::{key_text, yaml_to_json};
use crate::report::Report;
use crate::validate::{self, duplicate, tools::list_items, PackCtx};
use std::path::{Path, PathBuf};
use yaml_serde::Value;

/// What checking a skills root produced.
#[derive(Debug, Default)]
pub struct Checked {
    /// The diagnostics and sources.
    pub report: Report,
    /// The packs that parsed, as they would be embedded (only meaningful without errors).
    pub skills: Vec<Skill>,
    /// Every path read (for rebuild tracking).
    pub tracked: Vec<PathBuf>,
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
}

/// What one pack contributes to the check.
#[derive(Default)]
pub(crate) struct PackOutcome {
    pub(crate) diags: Vec<Diagnostic>,
    pub(crate) skill: Option<Skill>,
    pub(crate) site: Option<duplicate::NameSite>,
    pub(crate) sources: Vec<(String, String)>,
}

/// The configuration in effect for a check, with what reading it reported.
pub(crate) struct Configured {
    pub(crate) cfg: ProjectConfig,
    pub(crate) diags: Vec<Diagnostic>,
    pub(crate) sources: Vec<(String, String)>,
    pub(crate) tracked: Vec<PathBuf>,
}

/// Reads the configuration file (`skillbake.toml` at `root`, or the one given) and applies the
/// options on top of it.
pub(crate) fn configure(root: &Path, opts: &CheckOptions) -> Configured {
    let mut diags = Vec::new();
    let mut sources = Vec::new();
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
        diags.push(
            Diagnostic::new(
                Code::ConfigInvalid,
                &config_label,
                "the configuration file given does not exist",
            )
            .help("fix the path, or drop the option to use skillbake.toml at the skills root"),
        );
    }
    let mut cfg = match config::load(&config_path, &config_label) {
        Ok(c) => c,
        Err(d) => {
            if let Ok(text) = std::fs::read_to_string(&config_path) {
                sources.push((config_label.clone(), text));
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
    Configured {
        cfg,
        diags,
        sources,
        tracked,
    }
}

/// The cross-pack rule (`duplicate-name`), then levels, `--deny warnings` and the order.
pub(crate) fn finish(
    cfg: &ProjectConfig,
    opts: &CheckOptions,
    names: &[duplicate::NameSite],
    diags: &mut Vec<Diagnostic>,
) {
    duplicate::check(names, diags);
    cfg.apply_levels(diags);
    if opts.deny_warnings {
        for d in diags.iter_mut() {
            d.severity = Severity::Error;
        }
    }
    sort(diags);
}

/// Checks the skills root (or single pack) at `root`.
pub fn check(root: &Path, opts: &CheckOptions) -> Checked {
    let mut report = Report::default();
    let Configured {
        cfg,
        mut diags,
        sources,
        mut tracked,
    } = configure(root, opts);
    report.sources.extend(sources);

    let found = discover(root, &GlobSet::new(&cfg.ignore));
    diags.extend(found.diagnostics);
    tracked.extend(found.tracked);
    report.packs = found.packs.len();

    let compress = GlobSet::new(&cfg.compress);
    let outcomes = check_packs(found.packs, &cfg, &compress);
    let mut skills = Vec::new();
    let mut names = Vec::new();
    for outcome in outcomes {
        diags.extend(outcome.diags);
        skills.extend(outcome.skill);
        names.extend(outcome.site);
        report.sources.extend(outcome.sources);
    }
    finish(&cfg, opts, &names, &mut diags);
    add_missing_sources(&mut report, &diags, &skills);
    report.diagnostics = diags;
    tracked.sort();
    tracked.dedup();
    Checked {
        report,
        skills,
        tracked,
    }
}

/// Checks packs on every available core, keeping their order; each pack's files move into its
/// model (nothing is copied).
fn check_packs(
    packs: Vec<PackSource>,
    cfg: &ProjectConfig,
    compress: &GlobSet,
) -> Vec<PackOutcome> {
    crate::par_map_owned(packs, |p| check_one(p, cfg, compress))
}

/// Parses and validates one pack.
pub(crate) fn check_one(
    mut pack: PackSource,
    cfg: &ProjectConfig,
    compress: &GlobSet,
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
    let ctx = PackCtx {
        pack: &pack,
        md: &md,
        file: file.clone(),
        config: cfg,
    };
    validate::check_pack(&ctx, &mut out.diags);
    out.keep_sources(&pack, Some(&md.text));
    if let Some(mut skill) = model(&pack, &md) {
        out.site = Some(duplicate::NameSite {
            name: skill.name.clone(),
            file: file.clone(),
            pos: md.value_pos("name"),
        });
        skill.compress = pack
            .files
            .iter()
            .filter(|f| compress.matches(&pack.display_path(&f.path)))
            .map(|f| f.path.clone())
            .collect();
        skill.files = std::mem::take(&mut pack.files);
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

/// Sources for diagnostics found after the packs were checked (duplicate names), from the
/// packs' own files.
fn add_missing_sources(report: &mut Report, diags: &[Diagnostic], skills: &[Skill]) {
    for d in diags {
        if report.sources.contains_key(&d.file) {
            continue;
        }
        let found = skills.iter().find_map(|s| {
            s.files.iter().find_map(|f| {
                (crate::discover::join(&s.rel_dir, &f.path) == d.file)
                    .then(|| std::str::from_utf8(&f.bytes).ok())
                    .flatten()
            })
        });
        if let Some(text) = found {
            report.sources.insert(d.file.clone(), text.to_string());
        }
    }
}

/// Builds the embeddable model of a pack whose frontmatter parsed and has a string name (its
/// files are moved in by the caller).
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
    let version = match fm.mapping.get("version") {
        Some(Value::String(s)) => Some(s.clone()),
        // A number keeps the spelling it has in the file (`1.10`, not `1.1`).
        Some(Value::Number(n)) => Some(
            md.value_pos("version")
                .and_then(|p| {
                    // `value_pos` spans the value as written, comment and trailing blanks excluded.
                    let line = md.index().line_text(p.line)?;
                    let skip = (p.column as usize).saturating_sub(1);
                    Some(
                        line.chars()
                            .skip(skip)
                            .take(p.len as usize)
                            .collect::<String>(),
                    )
                })
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| n.to_string()),
        ),
        _ => None,
    };
    let list = |k: &str| fm.mapping.get(k).map(list_items).unwrap_or_default();
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
    })
}
