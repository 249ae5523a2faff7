//! Requirements, resolved at build time: the skills a pack relies on (`requires:` in its
//! frontmatter, a mapping of skill name → version range) and the skills the agent relies on
//! (`[requires]` in `skillbake.toml`, or `skillbake_build::Config::require`). Ranges use Cargo's
//! syntax ([`skillbake_format::semver::Req`]).
//!
//! Rules that live here: `requires-invalid`, `requires-unsatisfied`, `requires-cycle`,
//! `agent-requires-unsatisfied`.
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

use super::PackCtx;
use crate::diagnostic::{Code, Diagnostic, Position};
use crate::model::{NameSite, Requirement};
use skillbake_format::semver::{Req, Version};
use skillbake_format::suggest::{closest, did_you_mean};
use std::collections::BTreeMap;
use yaml_serde::Value;

/// The `requires:` entries of a pack, with their positions; `requires-invalid` for ranges that
/// do not parse (other shapes are `field-type`'s).
pub fn check(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) -> Vec<Requirement> {
    let Some(Value::Mapping(map)) = ctx.field("requires") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in map {
        let (Value::String(skill), Value::String(range)) = (k, v) else {
            continue;
        };
        let (name_pos, range_pos) = entry_positions(ctx, skill, range);
        let r = Requirement {
            skill: skill.clone(),
            range: range.clone(),
            file: ctx.file.clone(),
            name_pos,
            range_pos,
        };
        if let Some(d) = invalid(&r, "`requires`") {
            diags.push(d);
        }
        out.push(r);
    }
    out
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

    fn matching(&self, packs: &[usize], req: &Req<'_>) -> Vec<usize> {
        packs
            .iter()
            .copied()
            .filter(|&p| self.version(p).is_some_and(|v| req.matches(&v)))
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
                let ok = group
                    .default
                    .and_then(|g| r.version(g))
                    .is_some_and(|v| range.matches(&v));
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
