//! Requirements, resolved at build time: the skills a pack relies on (`requires.skills` in its
//! frontmatter, a mapping of skill name → version range) and the skills the agent relies on
//! (`[requires]` in `skillbake.toml`, or `skillbake_build::Config::require`). Ranges use Cargo's
//! syntax ([`skillbake_format::semver::Req`]).
//!
//! `requires:` is a mapping of *kinds* of requirement, as packs in the wild write it: `skills`
//! (this pack's skills), `mcp` (the MCP servers the skill needs, Composio's convention) and
//! OpenClaw's `bins`, `anyBins`, `env` and `config`, each a list of names. A kind skillbake does
//! not know, written as a list or a mapping, belongs to another tool and is left alone. The old
//! flat form, `requires: {NAME: RANGE}`, still reads as skill dependencies, with
//! `requires-deprecated`. OpenClaw's own place, `metadata.openclaw.requires` (also
//! `metadata.clawdbot`, `metadata.clawdis`), is checked for the shapes OpenClaw reads.
//!
//! Rules that live here: `requires-invalid`, `requires-unsatisfied`, `requires-cycle`,
//! `agent-requires-unsatisfied`, `requires-deprecated`.
//!
//! Resolution picks, for every skill, the version an agent gets when it asks for the skill by
//! name (the *default*, served by `load_skill(name)`, listed in the catalogs and tools):
//!
//! 1. the candidates are every embedded version of the skill, narrowed to the agent's range
//!    when the agent requires the skill;
//! 2. the default is the newest release among the candidates (the newest pre-release when
//!    there is no release);
//! 3. every requirement of a default narrows the candidates of the skill it names, until no
//!    default changes. A requirement that leaves no candidate is reported, with the
//!    constraints it conflicts with. Nothing backtracks: a pack's own choice is never undone to
//!    please the packs it requires, so the result is the newest consistent set or an error
//!    that names why.
//!
//! Independently, every requirement of every version must be met by some embedded version
//! (`name@range` then finds it), and requirements may not form a cycle (each requirement
//! followed to the newest version it matches).

use super::fields::{field_type, unknown_sub_key};
use super::PackCtx;
use crate::diagnostic::{Code, Diagnostic, Position};
use crate::model::{NameSite, Requirement};
use crate::parse::{key_text, type_name};
use skillbake_format::semver::{Req, Version};
use skillbake_format::suggest::{closest, did_you_mean};
use std::collections::BTreeMap;
use yaml_serde::Value;

/// The kind of `requires:` that names this pack's skills.
pub const SKILLS: &str = "skills";

/// The kinds of `requires:` read as lists of names (one string is a list of one), with what
/// they name.
pub const LIST_KINDS: &[(&str, &str)] = &[
    ("mcp", "MCP servers"),
    ("bins", "programs"),
    ("anyBins", "programs"),
    ("env", "environment variables"),
    ("config", "configuration keys"),
];

/// Where OpenClaw reads a skill's requirements: `metadata.<one of these>.requires`.
pub const OPENCLAW_KEYS: &[&str] = &["openclaw", "clawdbot", "clawdis"];

/// One skill dependency read from `requires:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillDep {
    /// The skill required.
    pub skill: String,
    /// The version range, as written (`*` for a name listed without one).
    pub range: String,
    /// Written in the old flat form, `requires: {NAME: RANGE}`.
    pub flat: bool,
}

/// The skill dependencies of a `requires:` value: `requires.skills` (a mapping of name →
/// range, or a list of names, any version) and the old flat `NAME: RANGE` entries. Entries of
/// other shapes are skipped (`check` reports them).
pub fn skill_deps(requires: &Value) -> Vec<SkillDep> {
    let Value::Mapping(map) = requires else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in map {
        let Value::String(key) = k else { continue };
        match (key.as_str(), v) {
            (SKILLS, Value::Mapping(skills)) => {
                out.extend(
                    skills
                        .iter()
                        .filter_map(|(name, range)| match (name, range) {
                            (Value::String(skill), Value::String(range)) => Some(SkillDep {
                                skill: skill.clone(),
                                range: range.clone(),
                                flat: false,
                            }),
                            _ => None,
                        }),
                );
            }
            (SKILLS, Value::Sequence(names)) => {
                out.extend(names.iter().filter_map(|n| match n {
                    Value::String(skill) => Some(SkillDep {
                        skill: skill.clone(),
                        range: "*".to_string(),
                        flat: false,
                    }),
                    _ => None,
                }));
            }
            (kind, Value::String(range)) if kind != SKILLS && !is_list_kind(kind) => {
                out.push(SkillDep {
                    skill: key.clone(),
                    range: range.clone(),
                    flat: true,
                });
            }
            _ => {}
        }
    }
    out
}

fn is_list_kind(kind: &str) -> bool {
    LIST_KINDS.iter().any(|(k, _)| *k == kind)
}

/// The `requires:` entries of a pack, with their positions: `field-type` for kinds of the
/// wrong shape, `requires-deprecated` for the flat form, `requires-invalid` for ranges that do
/// not parse. Also checks OpenClaw's `metadata.openclaw.requires` in the profiles that read it.
pub fn check(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) -> Vec<Requirement> {
    if ctx.config.profile.knows("OpenClaw") {
        check_openclaw(ctx, diags);
    }
    let Some(requires @ Value::Mapping(map)) = ctx.field("requires") else {
        return Vec::new();
    };
    for (k, v) in map {
        check_kind(ctx, k, v, diags);
    }
    let mut out = Vec::new();
    for dep in skill_deps(requires) {
        let (name_pos, range_pos) = entry_positions(ctx, &dep.skill, &dep.range);
        let r = Requirement {
            skill: dep.skill,
            range: dep.range,
            file: ctx.file.clone(),
            name_pos,
            range_pos,
        };
        if dep.flat {
            diags.push(deprecated(&r));
        }
        if let Some(d) = invalid(&r, "`requires`") {
            diags.push(d);
        }
        out.push(r);
    }
    out
}

/// The shape of one `requires:` entry (its skills are read by [`skill_deps`]).
fn check_kind(ctx: &PackCtx<'_>, k: &Value, v: &Value, diags: &mut Vec<Diagnostic>) {
    let key = key_text(k);
    let at = || ctx.md.find_in_value("requires", &key);
    if !matches!(k, Value::String(_)) {
        diags.push(field_type(
            &ctx.file,
            &format!("requires.{key}"),
            "keyed by a string",
            type_name(k),
            at(),
            "write each kind of requirement as a name: `skills:`, `mcp:`, …",
        ));
        return;
    }
    if key == SKILLS {
        check_skills(ctx, v, diags);
    } else if let Some((_, what)) = LIST_KINDS.iter().find(|(kind, _)| *kind == key) {
        if !is_name_list(v) {
            diags.push(field_type(
                &ctx.file,
                &format!("requires.{key}"),
                &format!("a list of names ({what})"),
                type_name(v),
                at(),
                format!("write it as `{key}: [name, other]`"),
            ));
        }
    } else {
        match v {
            Value::String(_) | Value::Null => {}
            Value::Sequence(_) | Value::Mapping(_) => {
                // Another tool's kind; a near miss of one of ours is worth a word.
                let ours = std::iter::once(SKILLS).chain(LIST_KINDS.iter().map(|(k, _)| *k));
                if let Some(s) = closest(&key, ours).filter(|s| *s != key) {
                    diags.push(
                        unknown_sub_key(
                            &ctx.file,
                            format!("`requires.{key}` is no kind of requirement skillbake reads; other tools' kinds are left alone"),
                        )
                        .at(at())
                        .help(did_you_mean(s)),
                    );
                }
            }
            other => diags.push(field_type(
                &ctx.file,
                &format!("requires.{key}"),
                "a version range (a string), or a list or mapping",
                type_name(other),
                at(),
                format!("a skill dependency is `requires: {{skills: {{{key}: \"^1\"}}}}` (quote the range)"),
            )),
        }
    }
}

/// `requires.skills`: a mapping of skill name → range (a string), or a list of names.
fn check_skills(ctx: &PackCtx<'_>, v: &Value, diags: &mut Vec<Diagnostic>) {
    match v {
        Value::Null => {}
        Value::Sequence(items) => {
            if let Some(bad) = items.iter().find(|i| !matches!(i, Value::String(_))) {
                diags.push(field_type(
                    &ctx.file,
                    "requires.skills",
                    "a mapping of skill name → version range, or a list of skill names",
                    &format!("a list with {} in it", type_name(bad)),
                    ctx.md.find_in_value("requires", SKILLS),
                    "write it as `skills: {read-file: \"^1.2\"}`, or `skills: [read-file]` for any version",
                ));
            }
        }
        Value::Mapping(m) => {
            for (name, range) in m {
                let skill = key_text(name);
                let (expected, found) = match (name, range) {
                    (Value::String(_), Value::String(_)) => continue,
                    (Value::String(_), other) => ("a version range (a string)", type_name(other)),
                    (other, _) => ("keyed by a skill name", type_name(other)),
                };
                diags.push(field_type(
                    &ctx.file,
                    &format!("requires.skills.{skill}"),
                    expected,
                    found,
                    ctx.md.find_in_value("requires", &skill),
                    format!("quote the range: `{skill}: \"^1.2\"` (YAML reads 1.0 as a number)"),
                ));
            }
        }
        other => diags.push(field_type(
            &ctx.file,
            "requires.skills",
            "a mapping of skill name → version range, or a list of skill names",
            type_name(other),
            ctx.md.find_in_value("requires", SKILLS),
            "write it as `skills: {read-file: \"^1.2\"}`, or `skills: [read-file]` for any version",
        )),
    }
}

/// A list of strings, one string, or nothing.
fn is_name_list(v: &Value) -> bool {
    match v {
        Value::Null | Value::String(_) => true,
        Value::Sequence(items) => items.iter().all(|i| matches!(i, Value::String(_))),
        _ => false,
    }
}

/// `requires-deprecated` for a skill dependency in the flat form.
fn deprecated(r: &Requirement) -> Diagnostic {
    let d = Diagnostic::new(
        Code::RequiresDeprecated,
        &r.file,
        format!(
            "`requires: {{{}: \"{}\"}}` is the old spelling of a skill dependency",
            r.skill, r.range
        ),
    )
    .at(r.name_pos)
    .note("`requires:` holds kinds of requirement (`skills`, `mcp`, …), as other tools read it; a flat entry is still read as a skill, for now");
    if Req::parse(&r.range).is_ok() {
        d.help(format!(
            "move it under `skills:`: `requires: {{skills: {{{}: \"{}\"}}}}`",
            r.skill, r.range
        ))
    } else {
        d.help(format!(
            "if `{0}` is a skill, write `requires: {{skills: {{{0}: \"^1\"}}}}` with its version range; if it is something else the pack needs, write it as a list (`{0}: [...]`), which skillbake leaves to the tool that reads it",
            r.skill
        ))
    }
}

/// OpenClaw's requirements, `metadata.openclaw.requires.{bins,anyBins,env,config}`: lists of
/// names (OpenClaw ignores them silently otherwise, and the skill is gated on nothing).
fn check_openclaw(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) {
    let Some(Value::Mapping(meta)) = ctx.field("metadata") else {
        return;
    };
    for host in OPENCLAW_KEYS {
        let Some(Value::Mapping(block)) = meta.get(*host) else {
            continue;
        };
        let Some(Value::Mapping(requires)) = block.get("requires") else {
            continue;
        };
        for (kind, what) in LIST_KINDS.iter().filter(|(k, _)| *k != "mcp") {
            let Some(v) = requires.get(*kind) else {
                continue;
            };
            if !is_name_list(v) {
                diags.push(field_type(
                    &ctx.file,
                    &format!("metadata.{host}.requires.{kind}"),
                    &format!("a list of names ({what})"),
                    type_name(v),
                    ctx.md.find_in_value("metadata", kind),
                    format!(
                        "write it as `{kind}: [name, other]`; OpenClaw ignores any other shape"
                    ),
                ));
            }
        }
    }
}

/// `requires-invalid` when the range of `r` does not parse; `whose` names where it is written
/// (`` `requires` ``, `` `[requires]` ``, `` `Config::require` ``).
pub fn invalid(r: &Requirement, whose: &str) -> Option<Diagnostic> {
    let why = Req::parse(&r.range).err()?;
    Some(
        Diagnostic::new(
            Code::RequiresInvalid,
            &r.file,
            format!(
                "{whose} gives `{}` the range `{}`, which is not a version range: {why}",
                r.skill, r.range
            ),
        )
        .at(r.range_pos.or(r.name_pos))
        .help("write a Cargo-style range: `^1.2` (1.2 or later, before 2), `~1.2.3`, `=1.2.0`, `>=1, <3` or `*`"),
    )
}

/// Positions of `skill: range` inside the `requires` value of `SKILL.md`.
fn entry_positions(
    ctx: &PackCtx<'_>,
    skill: &str,
    range: &str,
) -> (Option<Position>, Option<Position>) {
    let md = ctx.md;
    let Some(loc) = md.key("requires") else {
        return (None, None);
    };
    let region = md.text.get(loc.value_offset..loc.end).unwrap_or("");
    let Some(at) = find_word(region, skill) else {
        return (md.value_pos("requires"), None);
    };
    let key_offset = loc.value_offset + at;
    let name_pos = Some(md.index().position(key_offset, skill.chars().count()));
    let after = region.get(at + skill.len()..).unwrap_or("");
    let range_pos = after.find(range).map(|rel| {
        md.index()
            .position(key_offset + skill.len() + rel, range.chars().count())
    });
    (name_pos, range_pos.or(name_pos))
}

/// The first occurrence of `word` in `hay` not inside a longer name.
fn find_word(hay: &str, word: &str) -> Option<usize> {
    let is_name = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
    let mut from = 0;
    while let Some(rel) = hay.get(from..)?.find(word) {
        let start = from + rel;
        let end = start + word.len();
        let before = hay.get(..start)?.chars().next_back();
        let after = hay.get(end..)?.chars().next();
        if !before.is_some_and(is_name) && !after.is_some_and(is_name) {
            return Some(start);
        }
        from = end;
    }
    None
}

/// One skill's embedded versions.
struct Group<'a> {
    /// Indices into the packs, oldest first.
    packs: Vec<usize>,
    /// The versions still allowed for the default.
    candidates: Vec<usize>,
    /// The constraints that narrowed `candidates`, for messages.
    constraints: Vec<&'a Requirement>,
    default: Option<usize>,
}

struct Resolver<'a> {
    sites: &'a [NameSite],
    requires: &'a [Vec<Requirement>],
    groups: BTreeMap<&'a str, Group<'a>>,
}

impl<'a> Resolver<'a> {
    fn version(&self, pack: usize) -> Option<Version<'a>> {
        crate::model::effective_version(self.sites.get(pack)?.version.as_deref())
    }

    /// The newest release of `packs`, else the newest pre-release, else the only pack.
    fn newest(&self, packs: &[usize]) -> Option<usize> {
        let release = packs
            .iter()
            .rev()
            .find(|&&p| self.version(p).is_some_and(|v| !v.is_prerelease()));
        release.or(packs.last()).copied()
    }

    /// Whether pack `p` satisfies `req` (a pack without a version only satisfies `*`).
    fn satisfies(&self, p: usize, req: &Req<'_>) -> bool {
        self.version(p).map_or(req.is_star(), |v| req.matches(&v))
    }

    fn matching(&self, packs: &[usize], req: &Req<'_>) -> Vec<usize> {
        packs
            .iter()
            .copied()
            .filter(|&p| self.satisfies(p, req))
            .collect()
    }

    /// `1.0.0, 2.0.0` (or what the pack declares instead).
    fn available(&self, group: &Group<'_>) -> String {
        let list: Vec<String> = group
            .packs
            .iter()
            .map(|&p| match (self.version(p), self.sites.get(p)) {
                (Some(v), _) => v.to_string(),
                (None, Some(s)) => match &s.version {
                    Some(v) => format!("`{v}` (not a semantic version)"),
                    None => "no version".to_string(),
                },
                (None, None) => String::new(),
            })
            .collect();
        list.join(", ")
    }

    /// The newest version of a group as a related place: where its version is declared.
    fn declared(&self, group: &Group<'_>, d: Diagnostic) -> Diagnostic {
        let Some(site) = group.packs.last().and_then(|&p| self.sites.get(p)) else {
            return d;
        };
        let what = match &site.version {
            Some(v) => format!("`{}` {v} is declared here", site.name),
            None => format!("`{}` is declared here, without a version", site.name),
        };
        d.related(&site.file, site.version_pos.or(site.pos), what)
    }
}

/// Resolves the agent's and the packs' requirements over the packs (`sites[i]` and
/// `requires[i]` describe pack `i`); returns, per pack, whether it is the default version of its
/// skill. Reports every unsatisfied, conflicting or cyclic requirement.
pub fn resolve(
    sites: &[NameSite],
    requires: &[Vec<Requirement>],
    agent: &[Requirement],
    diags: &mut Vec<Diagnostic>,
) -> Vec<bool> {
    let mut r = Resolver {
        sites,
        requires,
        groups: BTreeMap::new(),
    };
    for (i, site) in sites.iter().enumerate() {
        r.groups
            .entry(site.name.as_str())
            .or_insert_with(|| Group {
                packs: Vec::new(),
                candidates: Vec::new(),
                constraints: Vec::new(),
                default: None,
            })
            .packs
            .push(i);
    }
    let versions: Vec<Option<Version<'_>>> = (0..sites.len()).map(|p| r.version(p)).collect();
    for group in r.groups.values_mut() {
        group
            .packs
            .sort_by(|&a, &b| match (versions[a], versions[b]) {
                (Some(x), Some(y)) => x.precedence(&y),
                (x, y) => x.is_some().cmp(&y.is_some()),
            });
        group.candidates = group.packs.clone();
    }

    agent_requirements(&mut r, agent, diags);
    for group in r.groups.values_mut() {
        group.default = None;
    }
    let names: Vec<&str> = r.groups.keys().copied().collect();
    for name in &names {
        let default = r.groups.get(name).and_then(|g| r.newest(&g.candidates));
        if let Some(g) = r.groups.get_mut(name) {
            g.default = default;
        }
    }
    every_requirement_is_met(&r, diags);
    narrow_defaults(&mut r, diags);
    cycles(&r, diags);

    let mut defaults = vec![false; sites.len()];
    for group in r.groups.values() {
        if let Some(d) = group.default.and_then(|d| defaults.get_mut(d)) {
            *d = true;
        }
    }
    defaults
}

fn agent_requirements<'a>(
    r: &mut Resolver<'a>,
    agent: &'a [Requirement],
    diags: &mut Vec<Diagnostic>,
) {
    for req in agent {
        let whose = if req.name_pos.is_some() {
            "`[requires]`"
        } else {
            "`Config::require`"
        };
        if let Some(d) = invalid(req, whose) {
            diags.push(d);
            continue;
        }
        let Some(range) = req.req() else { continue };
        let Some(group) = r.groups.get(req.skill.as_str()) else {
            let mut d = Diagnostic::new(
                Code::AgentRequiresUnsatisfied,
                &req.file,
                format!(
                    "the agent requires skill `{}` ({}), but no pack of that name is embedded",
                    req.skill, req.range
                ),
            )
            .at(req.name_pos);
            d = match closest(&req.skill, r.groups.keys().copied()) {
                Some(s) => d.help(did_you_mean(s)),
                None => d.help("add the pack to the skills folder, or remove the requirement"),
            };
            diags.push(d);
            continue;
        };
        let matching = r.matching(&group.candidates, &range);
        if matching.is_empty() {
            diags.push(r.declared(
                group,
                Diagnostic::new(
                    Code::AgentRequiresUnsatisfied,
                    &req.file,
                    format!(
                        "the agent requires `{}` {}, but the embedded versions are {}",
                        req.skill,
                        req.range,
                        r.available(group)
                    ),
                )
                .at(req.range_pos.or(req.name_pos))
                .help(format!(
                    "widen the range, or add a pack of `{}` in a version it matches (in a `{}@VERSION` folder to keep the others)",
                    req.skill, req.skill
                )),
            ));
            continue;
        }
        if let Some(g) = r.groups.get_mut(req.skill.as_str()) {
            g.candidates = matching;
            g.constraints.push(req);
        }
    }
}

/// Every requirement of every pack is met by some embedded version.
fn every_requirement_is_met(r: &Resolver<'_>, diags: &mut Vec<Diagnostic>) {
    for (p, reqs) in r.requires.iter().enumerate() {
        let Some(site) = r.sites.get(p) else { continue };
        for req in reqs {
            let Some(range) = req.req() else { continue };
            if req.skill == site.name {
                diags.push(
                    Diagnostic::new(
                        Code::RequiresCycle,
                        &req.file,
                        format!("`{}` requires itself", site.name),
                    )
                    .at(req.name_pos)
                    .help("remove the requirement: a pack is always served with its own files"),
                );
                continue;
            }
            let Some(group) = r.groups.get(req.skill.as_str()) else {
                let mut d = Diagnostic::new(
                    Code::RequiresUnsatisfied,
                    &req.file,
                    format!(
                        "`{}` requires skill `{}` ({}), but no pack of that name is embedded",
                        site.name, req.skill, req.range
                    ),
                )
                .at(req.name_pos);
                d = match closest(&req.skill, r.groups.keys().copied()) {
                    Some(s) => d.help(did_you_mean(s)),
                    None => d.help(format!(
                        "add the `{}` pack to the skills folder, or remove the requirement",
                        req.skill
                    )),
                };
                diags.push(d);
                continue;
            };
            if r.matching(&group.packs, &range).is_empty() {
                diags.push(r.declared(
                    group,
                    Diagnostic::new(
                        Code::RequiresUnsatisfied,
                        &req.file,
                        format!(
                            "`{}` requires `{}` {}, but the embedded versions are {}",
                            site.name,
                            req.skill,
                            req.range,
                            r.available(group)
                        ),
                    )
                    .at(req.range_pos.or(req.name_pos))
                        .help(format!(
                        "widen the range, or add a pack of `{}` in a version it matches (in a `{}@VERSION` folder to keep the others)",
                        req.skill, req.skill
                    )),
                ));
            }
        }
    }
}

/// Narrows every skill's default until the defaults satisfy each other's requirements.
fn narrow_defaults<'a>(r: &mut Resolver<'a>, diags: &mut Vec<Diagnostic>) {
    let requires = r.requires;
    let sites = r.sites;
    let mut reported: Vec<(usize, usize)> = Vec::new();
    // Each round narrows at least one candidate list or stops: bounded by the number of packs.
    for _ in 0..=sites.len() {
        let mut changed = false;
        let defaults: Vec<usize> = r.groups.values().filter_map(|g| g.default).collect();
        for d in defaults {
            let Some(site) = sites.get(d) else { continue };
            // A default replaced earlier in this round no longer constrains anything.
            let current = r.groups.get(site.name.as_str()).and_then(|g| g.default);
            if current != Some(d) {
                continue;
            }
            for (k, req) in requires.get(d).into_iter().flatten().enumerate() {
                let Some(range) = req.req() else { continue };
                let Some(group) = r.groups.get(req.skill.as_str()) else {
                    continue;
                };
                if req.skill == site.name || r.matching(&group.packs, &range).is_empty() {
                    continue; // reported by `every_requirement_is_met` or `cycles`
                }
                let ok = group.default.is_some_and(|g| r.satisfies(g, &range));
                if ok {
                    continue;
                }
                let narrowed = r.matching(&group.candidates, &range);
                if narrowed.is_empty() {
                    if !reported.contains(&(d, k)) {
                        reported.push((d, k));
                        let against: Vec<String> = group
                            .constraints
                            .iter()
                            .map(|c| format!("`{}`", c.range))
                            .collect();
                        let gets = group
                            .default
                            .and_then(|g| r.version(g))
                            .map_or_else(|| "no version".to_string(), |v| v.to_string());
                        let mut d = Diagnostic::new(
                                Code::RequiresUnsatisfied,
                                &req.file,
                                format!(
                                    "`{}` requires `{}` {}, but no embedded version of `{}` ({}) satisfies both this and {}, required for the version agents get",
                                    site.name,
                                    req.skill,
                                    req.range,
                                    req.skill,
                                    r.available(group),
                                    against.join(" and ")
                                ),
                            )
                            .at(req.range_pos.or(req.name_pos))
                            .help(format!(
                                "make the ranges overlap, or embed a version of `{}` that satisfies all of them",
                                req.skill
                            ));
                        for c in &group.constraints {
                            d = d.related(
                                &c.file,
                                c.range_pos.or(c.name_pos),
                                format!(
                                    "agents get `{}` {gets} by name because of this requirement",
                                    req.skill
                                ),
                            );
                        }
                        diags.push(d);
                    }
                    continue;
                }
                let newest = r.newest(&narrowed);
                if let Some(g) = r.groups.get_mut(req.skill.as_str()) {
                    g.candidates = narrowed;
                    g.constraints.push(req);
                    g.default = newest;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
}

/// Requirements followed to the newest version they match may not lead back to where they
/// started.
fn cycles(r: &Resolver<'_>, diags: &mut Vec<Diagnostic>) {
    // Edges: pack → (requirement index, pack it resolves to).
    let edges: Vec<Vec<(usize, usize)>> = r
        .requires
        .iter()
        .enumerate()
        .map(|(p, reqs)| {
            reqs.iter()
                .enumerate()
                .filter(|(_, req)| r.sites.get(p).is_some_and(|s| s.name != req.skill))
                .filter_map(|(k, req)| {
                    let range = req.req()?;
                    let group = r.groups.get(req.skill.as_str())?;
                    let to = *r.matching(&group.packs, &range).last()?;
                    Some((k, to))
                })
                .collect()
        })
        .collect();
    // Iterative depth-first search; 0 = new, 1 = on the path, 2 = done.
    let mut state = vec![0u8; r.sites.len()];
    let mut seen_cycles: Vec<Vec<usize>> = Vec::new();
    for start in 0..r.sites.len() {
        if state[start] != 0 {
            continue;
        }
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        state[start] = 1;
        while let Some(&(node, next)) = path.last() {
            let out = edges.get(node).map_or(&[][..], Vec::as_slice);
            let Some(&(_, to)) = out.get(next) else {
                state[node] = 2;
                path.pop();
                continue;
            };
            if let Some(top) = path.last_mut() {
                top.1 += 1;
            }
            match state.get(to) {
                Some(0) => {
                    state[to] = 1;
                    path.push((to, 0));
                }
                Some(1) => {
                    let from = path.iter().position(|&(n, _)| n == to).unwrap_or(0);
                    // (pack, requirement index) of every edge on the cycle.
                    let cycle: Vec<(usize, usize)> = path[from..]
                        .iter()
                        .map(|&(n, taken)| {
                            let k = edges
                                .get(n)
                                .and_then(|e| e.get(taken.saturating_sub(1)))
                                .map_or(0, |e| e.0);
                            (n, k)
                        })
                        .collect();
                    let mut key: Vec<usize> = cycle.iter().map(|c| c.0).collect();
                    key.sort_unstable();
                    if !seen_cycles.contains(&key) {
                        seen_cycles.push(key);
                        report_cycle(r, &cycle, diags);
                    }
                }
                _ => {}
            }
        }
    }
}

fn report_cycle(r: &Resolver<'_>, cycle: &[(usize, usize)], diags: &mut Vec<Diagnostic>) {
    let label = |p: usize| {
        let site = r.sites.get(p);
        match (site.map(|s| &s.name), site.and_then(|s| s.version.as_ref())) {
            (Some(n), Some(v)) => format!("{n} {v}"),
            (Some(n), None) => n.clone(),
            _ => String::new(),
        }
    };
    let req = |&(p, k): &(usize, usize)| r.requires.get(p).and_then(|v| v.get(k));
    // Report at the edge whose file sorts first, so the diagnostic is stable.
    let Some(first) = (0..cycle.len()).min_by_key(|&i| {
        cycle
            .get(i)
            .and_then(req)
            .map(|q| (q.file.clone(), q.name_pos))
    }) else {
        return;
    };
    let ordered: Vec<&(usize, usize)> =
        cycle.iter().cycle().skip(first).take(cycle.len()).collect();
    let Some(edge) = ordered.first().and_then(|e| req(e)) else {
        return;
    };
    let mut chain: Vec<String> = ordered.iter().map(|e| label(e.0)).collect();
    chain.push(label(ordered[0].0));
    let message = format!("requirements form a cycle: {}", chain.join(" → "));
    let mut d = Diagnostic::new(Code::RequiresCycle, &edge.file, message)
        .at(edge.name_pos)
        .help("remove one of the requirements: a skill cannot rely on a skill that relies on it");
    for e in ordered.iter().skip(1) {
        if let Some(q) = req(e) {
            d = d.related(
                &q.file,
                q.name_pos,
                format!("`{}` requires `{}` here", label(e.0), q.skill),
            );
        }
    }
    diags.push(d);
}
