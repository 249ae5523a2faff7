//! Agent profiles and gradual rollout: what each agent of one server sees, which version of a
//! skill it gets by name, what its runs may do and how often it may call; read from the
//! service's profiles file (`skillbake serve --http --token-file T --profiles FILE`).
//!
//! ```toml
//! [default]                       # every agent without a table of its own
//! skills = ["read-file"]
//!
//! [agents.reporting-bot]
//! buckets = ["finance"]           # every skill of these buckets (and the buckets below)
//! skills = ["send-email"]         # and these skills
//! requires = { send-email = "^1" } # the version it gets by name (a pin: no rollout moves it)
//! allow = ["filesystem:read"]     # the permissions its runs get: a subset of the server's
//! max-runs = 2                    # its scripts running at once
//! rate = "120/min"                # tool calls per second, minute or hour
//!
//! [rollout.send-email]
//! version = "2.0.0"               # the newer embedded version (a range: the newest in it)
//! share = 10                      # percent of agents, by a stable hash of the agent's name
//! agents = ["canary-bot"]         # and these agents, whatever their hash
//! ```
//!
//! An agent's share point for a skill is the first 8 bytes of SHA-256(`SKILL/AGENT`) read as a
//! big-endian integer, modulo 10,000: the agent is in the rollout when the point is below
//! `share × 100`. The same agent always gets the same version, and the agents of one skill's
//! rollout are independent of another's. Every mistake (an unknown key, skill, bucket, agent
//! or permission, a requirement no embedded version meets) is reported as `FILE:LINE:COLUMN:
//! what` before the server starts.

use crate::error::Error;
use sha2::{Digest, Sha256};
use skillbake::{Registry, Skill, VersionReq};
use skillbake_format::suggest::{closest, did_you_mean};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// The `_meta` key of every tool reply's served skill and version.
pub const SERVED_KEY: &str = "io.github.skillbake/served";

/// Share points: an agent's point for a skill is in `0..SHARE_POINTS`.
pub const SHARE_POINTS: u64 = 10_000;

/// The profiles of a server's agents and the rollouts of its skills, checked against one
/// registry ([`Profiles::parse`]).
#[derive(Debug, Clone)]
pub struct Profiles {
    registry: &'static Registry,
    views: HashMap<String, Arc<View>>,
    rollouts: Vec<Rollout>,
}

/// One skill's rollout: the version a share of agents (and the named ones) get by name.
#[derive(Debug, Clone, PartialEq)]
pub struct Rollout {
    /// The skill.
    pub skill: &'static str,
    /// The version the rollout sends agents to.
    pub version: &'static str,
    /// The share of agents, in percent.
    pub share: f64,
    /// Agents always sent to it.
    pub agents: Vec<String>,
}

/// What one agent sees and may do.
#[derive(Debug)]
pub(crate) struct View {
    /// Skill names it sees; `None`: every skill.
    visible: Option<HashSet<&'static str>>,
    /// The version it gets by name where it is not the registry's, and why.
    versions: HashMap<&'static str, (Skill<'static>, Origin)>,
    /// The only permissions its runs get; `None`: the server's.
    pub(crate) allow: Option<Vec<String>>,
    /// Its own run limit.
    pub(crate) runs: Option<Arc<tokio::sync::Semaphore>>,
    /// Its call rate.
    rate: Option<Mutex<Bucket>>,
    /// The rate as written, for messages.
    rate_text: String,
}

/// Why an agent gets a version other than the registry's by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The profile's `requires`.
    Requirement,
    /// A rollout.
    Rollout,
}

/// A token bucket: `capacity` calls, refilled over `period`.
#[derive(Debug)]
struct Bucket {
    capacity: f64,
    tokens: f64,
    per_second: f64,
    at: Instant,
}

impl View {
    /// The view of a server without profiles: every skill, the registry's versions.
    pub(crate) fn everything() -> View {
        View {
            visible: None,
            versions: HashMap::new(),
            allow: None,
            runs: None,
            rate: None,
            rate_text: String::new(),
        }
    }

    /// The view of an agent no profile names when there is no `[default]`: nothing.
    fn nothing() -> View {
        View {
            visible: Some(HashSet::new()),
            ..View::everything()
        }
    }

    /// Whether the agent sees skill `name` (as the registry writes it).
    pub(crate) fn sees(&self, name: &str) -> bool {
        self.visible.as_ref().is_none_or(|v| v.contains(name))
    }

    /// The version of `skill` (any version of it) the agent gets by name, when it sees it.
    pub(crate) fn by_name(
        &self,
        skill: &Skill<'static>,
    ) -> Option<(Skill<'static>, Option<Origin>)> {
        if !self.sees(skill.name()) {
            return None;
        }
        Some(match self.versions.get(skill.name()) {
            Some((s, origin)) => (*s, Some(*origin)),
            None => {
                let default = skill.versions().find(|v| v.is_default()).unwrap_or(*skill);
                (default, None)
            }
        })
    }

    /// Whether `skill` is the version the agent gets by name.
    pub(crate) fn is_by_name(&self, skill: &Skill<'static>) -> bool {
        match self.versions.get(skill.name()) {
            Some((s, _)) => s.version() == skill.version(),
            None => skill.is_default(),
        }
    }

    /// The skill a request names for this agent (`name`, or `name@range`), when it sees it.
    pub(crate) fn lookup(
        &self,
        registry: &'static Registry,
        request: &str,
    ) -> Option<Skill<'static>> {
        let skill = registry.get(request)?;
        if !self.sees(skill.name()) {
            return None;
        }
        let by_name = registry
            .get(request)
            .is_some_and(|s| s.is_default() && request.eq_ignore_ascii_case(s.name()));
        if by_name {
            return self.by_name(&skill).map(|(s, _)| s);
        }
        Some(skill)
    }

    /// Takes one call from the agent's rate; `Err` with the seconds until the next one.
    pub(crate) fn take_call(&self) -> Result<(), (f64, &str)> {
        let Some(bucket) = &self.rate else {
            return Ok(());
        };
        let mut b = bucket.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let refill = now.duration_since(b.at).as_secs_f64() * b.per_second;
        b.tokens = (b.tokens + refill).min(b.capacity);
        b.at = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - b.tokens) / b.per_second, &self.rate_text))
        }
    }
}

/// The point of `agent` for `skill`'s rollout: the first 8 bytes of SHA-256(`SKILL/AGENT`) as a
/// big-endian integer, modulo [`SHARE_POINTS`].
pub fn share_point(skill: &str, agent: &str) -> u64 {
    let digest = Sha256::digest(format!("{skill}/{agent}").as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first) % SHARE_POINTS
}

/// Whether `agent` is in a rollout of `skill` to `share` percent of agents.
pub fn in_share(skill: &str, agent: &str, share: f64) -> bool {
    (share_point(skill, agent) as f64) < (share * 100.0).round()
}

impl Profiles {
    /// Reads and checks the profiles file at `path` (see [`Profiles::parse`]).
    pub fn load(
        path: &std::path::Path,
        registry: &'static Registry,
        agents: &[&str],
        server_grants: Option<&[&str]>,
    ) -> Result<Profiles, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::Config(format!(
                "cannot read the profiles file {}: {e}",
                path.display()
            ))
        })?;
        Profiles::parse(
            &text,
            &path.display().to_string(),
            registry,
            agents,
            server_grants,
        )
    }

    /// Parses and checks a profiles file's text (the module documentation shows its keys)
    /// against `registry`, the server's `agents` (the token file's, or the anonymous caller)
    /// and the permissions the server's policy grants (`None`: it runs nothing). Every problem
    /// is reported, as `source:line:column: what`, in one error.
    pub fn parse(
        text: &str,
        source: &str,
        registry: &'static Registry,
        agents: &[&str],
        server_grants: Option<&[&str]>,
    ) -> Result<Profiles, Error> {
        let mut p = Parser {
            text,
            source,
            registry,
            problems: Vec::new(),
        };
        let out = p.document(agents, server_grants);
        if p.problems.is_empty() {
            Ok(out)
        } else {
            Err(Error::Config(format!(
                "bad profiles file:\n  {}",
                p.problems.join("\n  ")
            )))
        }
    }

    /// The view of `agent`: its profile (or `[default]`), else nothing at all.
    pub(crate) fn view(&self, agent: &str) -> Arc<View> {
        self.views
            .get(agent)
            .cloned()
            .unwrap_or_else(|| Arc::new(View::nothing()))
    }

    /// The rollouts, by skill.
    pub fn rollouts(&self) -> &[Rollout] {
        &self.rollouts
    }

    /// The agents with a profile of their own, sorted.
    pub fn agents(&self) -> Vec<&str> {
        let mut out: Vec<&str> = self.views.keys().map(String::as_str).collect();
        out.sort_unstable();
        out
    }

    /// The version of skill `name` that `agent` gets by name (`None` when it does not see it,
    /// or the version has no number).
    pub fn version_for(&self, agent: &str, name: &str) -> Option<&'static str> {
        let skill = self.registry.get_exact(name)?;
        self.view(agent).by_name(&skill)?.0.version()
    }
}

/// What one `[agents.NAME]` (or `[default]`) table says, before it is resolved per agent.
#[derive(Default)]
struct Table {
    visible: Option<HashSet<&'static str>>,
    requires: Vec<(&'static str, Skill<'static>)>,
    allow: Option<Vec<String>>,
    max_runs: Option<usize>,
    rate: Option<(f64, f64, String)>,
}

struct Parser<'a> {
    text: &'a str,
    source: &'a str,
    registry: &'static Registry,
    problems: Vec<String>,
}

impl Parser<'_> {
    fn at(&self, span: std::ops::Range<usize>) -> String {
        let upto = self.text.get(..span.start).unwrap_or(self.text);
        let line = upto.matches('\n').count() + 1;
        let column = upto.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        format!("{}:{line}:{column}", self.source)
    }

    fn problem(&mut self, span: std::ops::Range<usize>, what: impl AsRef<str>) {
        let at = self.at(span);
        self.problems.push(format!("{at}: {}", what.as_ref()));
    }

    fn document(&mut self, agents: &[&str], grants: Option<&[&str]>) -> Profiles {
        let empty = Profiles {
            registry: self.registry,
            views: HashMap::new(),
            rollouts: Vec::new(),
        };
        let doc = match DeTable::parse(self.text) {
            Ok(d) => d.into_inner(),
            Err(e) => {
                let span = e.span().unwrap_or(0..0);
                let msg = e.message().to_string();
                self.problem(span, msg);
                return empty;
            }
        };
        let mut tables: BTreeMap<String, (Table, std::ops::Range<usize>)> = BTreeMap::new();
        let mut default = None;
        let mut rollouts = Vec::new();
        for (key, value) in &doc {
            match (key.get_ref().as_ref(), value.get_ref()) {
                ("default", DeValue::Table(t)) => default = Some(self.table(t, grants)),
                ("agents", DeValue::Table(t)) => {
                    for (name, v) in t {
                        let name_str = name.get_ref().to_string();
                        if !agents.contains(&name_str.as_str()) {
                            let hint = closest(&name_str, agents.iter().copied())
                                .map(|s| format!(" {}", did_you_mean(s)))
                                .unwrap_or_default();
                            self.problem(
                                name.span(),
                                format!(
                                    "unknown agent `{name_str}`: the token file names {}{hint}",
                                    list(agents)
                                ),
                            );
                            continue;
                        }
                        match v.get_ref() {
                            DeValue::Table(t) => {
                                let table = self.table(t, grants);
                                tables.insert(name_str, (table, name.span()));
                            }
                            _ => self.problem(v.span(), format!("`agents.{name_str}` must be a table")),
                        }
                    }
                }
                ("rollout", DeValue::Table(t)) => {
                    for (skill, v) in t {
                        if let Some(r) = self.rollout(skill, v, agents) {
                            rollouts.push(r);
                        }
                    }
                }
                (k @ ("default" | "agents" | "rollout"), _) => {
                    self.problem(value.span(), format!("`{k}` must be a table"))
                }
                (k, _) => self.problem(
                    key.span(),
                    format!("unknown key `{k}`: the profiles file holds `[default]`, `[agents.NAME]` and `[rollout.SKILL]`"),
                ),
            }
        }
        let mut views = HashMap::new();
        for agent in agents {
            let view = match (tables.get(*agent), &default) {
                (Some((t, _)), _) => resolve(self.registry, t, agent, &rollouts),
                (None, Some(d)) => resolve(self.registry, d, agent, &rollouts),
                (None, None) => continue,
            };
            views.insert(agent.to_string(), Arc::new(view));
        }
        if default.is_none() {
            let missing: Vec<&str> = agents
                .iter()
                .copied()
                .filter(|a| !tables.contains_key(*a))
                .collect();
            if !missing.is_empty() {
                self.problem(
                    0..0,
                    format!(
                        "no profile for {}: give each an `[agents.NAME]` table, or write a `[default]` table for every agent without one",
                        list(&missing)
                    ),
                );
            }
        }
        Profiles {
            registry: self.registry,
            views,
            rollouts,
        }
    }

    fn table(&mut self, t: &DeTable<'_>, grants: Option<&[&str]>) -> Table {
        let mut out = Table::default();
        let mut visible: Option<HashSet<&'static str>> = None;
        for (key, value) in t {
            let k = key.get_ref().as_ref();
            match k {
                "skills" => {
                    let set = visible.get_or_insert_with(HashSet::new);
                    for (name, span) in self.strings(value, k) {
                        match self.registry.get_exact(&name).or_else(|| self.registry.get(&name)) {
                            Some(s) if !name.contains('@') => {
                                set.insert(s.name());
                            }
                            _ => {
                                let hint = closest(&name, self.registry.names())
                                    .map(|s| format!("; {}", did_you_mean(s)))
                                    .unwrap_or_default();
                                self.problem(
                                    span,
                                    format!("unknown skill `{name}`: no embedded skill has this name{hint}"),
                                );
                            }
                        }
                    }
                }
                "buckets" => {
                    let set = visible.get_or_insert_with(HashSet::new);
                    let buckets = self.registry.buckets();
                    for (bucket, span) in self.strings(value, k) {
                        let members: Vec<&'static str> = self
                            .registry
                            .iter()
                            .filter(|s| skillbake::in_bucket(s.bucket(), &bucket))
                            .map(|s| s.name())
                            .collect();
                        if members.is_empty() || bucket.trim_matches('/').is_empty() {
                            self.problem(
                                span,
                                format!(
                                    "unknown bucket `{bucket}`: the buckets are {}",
                                    list(&buckets.iter().copied().filter(|b| !b.is_empty()).collect::<Vec<_>>())
                                ),
                            );
                        }
                        set.extend(members);
                    }
                }
                "requires" => {
                    let DeValue::Table(reqs) = value.get_ref() else {
                        self.problem(value.span(), "`requires` must be a table of `SKILL = \"RANGE\"`");
                        continue;
                    };
                    for (name, range) in reqs {
                        let name_s = name.get_ref().to_string();
                        let Some(skill) = self.registry.get_exact(&name_s) else {
                            self.problem(name.span(), format!("unknown skill `{name_s}` in `requires`"));
                            continue;
                        };
                        let DeValue::String(r) = range.get_ref() else {
                            self.problem(range.span(), format!("the requirement of `{name_s}` must be a version range in quotes, such as \"^1\""));
                            continue;
                        };
                        match VersionReq::parse(r) {
                            Err(e) => self.problem(range.span(), format!("bad requirement `{r}` for `{name_s}`: {e}")),
                            Ok(req) => match skill.version_matching(&req) {
                                Some(v) => out.requires.push((skill.name(), v)),
                                None => self.problem(
                                    range.span(),
                                    format!(
                                        "no embedded version of `{name_s}` meets `{r}`; embedded versions: {}",
                                        versions(&skill)
                                    ),
                                ),
                            },
                        }
                    }
                }
                "allow" => {
                    let mut allow = Vec::new();
                    for (perm, span) in self.strings(value, k) {
                        let canonical = match skillbake_exec::Policy::new().allow(&perm) {
                            Ok(p) => p.granted().first().map(|s| s.to_string()).unwrap_or(perm.clone()),
                            Err(e) => {
                                self.problem(span, format!("{e}"));
                                continue;
                            }
                        };
                        match grants {
                            None => self.problem(span, format!("`allow` grants `{canonical}`, but the server runs nothing: start it with --execute or --allow")),
                            Some(g) if !g.contains(&canonical.as_str()) => self.problem(
                                span,
                                format!("`{canonical}` is more than the server's policy grants ({}): a profile can only narrow it; start the server with --allow {canonical}", if g.is_empty() { "nothing".to_string() } else { g.join(", ") }),
                            ),
                            Some(_) => allow.push(canonical),
                        }
                    }
                    out.allow = Some(allow);
                }
                "max-runs" => match value.get_ref() {
                    DeValue::Integer(i) if i.radix() == 10 && i.as_str().parse::<usize>().is_ok_and(|n| n >= 1) => {
                        out.max_runs = i.as_str().parse().ok();
                    }
                    _ => self.problem(value.span(), "`max-runs` must be an integer of at least 1"),
                },
                "rate" => match value.get_ref() {
                    DeValue::String(s) => match parse_rate(s) {
                        Some((n, per)) => out.rate = Some((n, per, s.to_string())),
                        None => self.problem(value.span(), format!("bad rate `{s}`: write CALLS/s, CALLS/min or CALLS/h, such as \"120/min\"")),
                    },
                    _ => self.problem(value.span(), "`rate` must be a string such as \"120/min\""),
                },
                other => self.problem(
                    key.span(),
                    format!("unknown key `{other}`: a profile holds `skills`, `buckets`, `requires`, `allow`, `max-runs` and `rate`"),
                ),
            }
        }
        out.visible = visible;
        out
    }

    fn rollout(
        &mut self,
        skill: &Spanned<std::borrow::Cow<'_, str>>,
        value: &Spanned<DeValue<'_>>,
        agents: &[&str],
    ) -> Option<Rollout> {
        let name = skill.get_ref().to_string();
        let Some(found) = self.registry.get_exact(&name) else {
            let hint = closest(&name, self.registry.names())
                .map(|s| format!("; {}", did_you_mean(s)))
                .unwrap_or_default();
            self.problem(
                skill.span(),
                format!("unknown skill `{name}` in `[rollout]`{hint}"),
            );
            return None;
        };
        let DeValue::Table(t) = value.get_ref() else {
            self.problem(value.span(), format!("`rollout.{name}` must be a table"));
            return None;
        };
        let mut version = None;
        let mut share = 0.0;
        let mut named = Vec::new();
        let mut ok = true;
        for (key, v) in t {
            match (key.get_ref().as_ref(), v.get_ref()) {
                ("version", DeValue::String(r)) => match VersionReq::parse(r) {
                    Err(e) => {
                        self.problem(v.span(), format!("bad requirement `{r}` for `{name}`: {e}"));
                        ok = false;
                    }
                    Ok(req) => match found.version_matching(&req) {
                        Some(s) => version = s.version(),
                        None => {
                            self.problem(
                                v.span(),
                                format!("no embedded version of `{name}` meets `{r}`; embedded versions: {}", versions(&found)),
                            );
                            ok = false;
                        }
                    },
                },
                ("share", DeValue::Integer(i)) => match i.as_str().parse::<f64>() {
                    Ok(n) if i.radix() == 10 && (0.0..=100.0).contains(&n) => share = n,
                    _ => {
                        self.problem(v.span(), "`share` must be a percentage from 0 to 100");
                        ok = false;
                    }
                },
                ("share", DeValue::Float(f)) => match f.as_str().parse::<f64>() {
                    Ok(n) if (0.0..=100.0).contains(&n) => share = n,
                    _ => {
                        self.problem(v.span(), "`share` must be a percentage from 0 to 100");
                        ok = false;
                    }
                },
                ("agents", _) => {
                    for (a, span) in self.strings(v, "agents") {
                        if agents.contains(&a.as_str()) {
                            named.push(a);
                        } else {
                            self.problem(
                                span,
                                format!(
                                    "unknown agent `{a}`: the token file names {}",
                                    list(agents)
                                ),
                            );
                        }
                    }
                }
                (k @ ("version" | "share"), _) => {
                    self.problem(
                        v.span(),
                        format!(
                            "`{k}` has the wrong type: `version` is a string, `share` a number"
                        ),
                    );
                    ok = false;
                }
                (k, _) => {
                    self.problem(
                        key.span(),
                        format!(
                            "unknown key `{k}`: a rollout holds `version`, `share` and `agents`"
                        ),
                    );
                }
            }
        }
        let Some(version) = version else {
            if ok {
                self.problem(
                    skill.span(),
                    format!("`rollout.{name}` needs `version`, the embedded version to roll out"),
                );
            }
            return None;
        };
        Some(Rollout {
            skill: found.name(),
            version,
            share,
            agents: named,
        })
    }

    /// A list of strings (each with its span); anything else is reported.
    fn strings(
        &mut self,
        value: &Spanned<DeValue<'_>>,
        key: &str,
    ) -> Vec<(String, std::ops::Range<usize>)> {
        let DeValue::Array(items) = value.get_ref() else {
            self.problem(value.span(), format!("`{key}` must be a list of strings"));
            return Vec::new();
        };
        let mut out = Vec::new();
        for item in items {
            match item.get_ref() {
                DeValue::String(s) => out.push((s.to_string(), item.span())),
                _ => self.problem(item.span(), format!("`{key}` must be a list of strings")),
            }
        }
        out
    }
}

/// The view a table gives `agent`, with the rollouts it is in.
fn resolve(registry: &'static Registry, table: &Table, agent: &str, rollouts: &[Rollout]) -> View {
    let mut versions = HashMap::new();
    for r in rollouts {
        let chosen = r.agents.iter().any(|a| a == agent) || in_share(r.skill, agent, r.share);
        if let (true, Some(s)) = (chosen, registry.get(&format!("{}@={}", r.skill, r.version))) {
            versions.insert(r.skill, (s, Origin::Rollout));
        }
    }
    for (name, s) in &table.requires {
        versions.insert(*name, (*s, Origin::Requirement));
    }
    View {
        visible: table.visible.clone(),
        versions,
        allow: table.allow.clone(),
        runs: table
            .max_runs
            .map(|n| Arc::new(tokio::sync::Semaphore::new(n.max(1)))),
        rate: table.rate.as_ref().map(|(n, per, _)| {
            Mutex::new(Bucket {
                capacity: *n,
                tokens: *n,
                per_second: n / per,
                at: Instant::now(),
            })
        }),
        rate_text: table.rate.as_ref().map(|r| r.2.clone()).unwrap_or_default(),
    }
}

fn versions(skill: &Skill<'_>) -> String {
    skill
        .versions()
        .map(|v| v.version().unwrap_or("(none)").to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn list(items: &[&str]) -> String {
    if items.is_empty() {
        return "none".to_string();
    }
    items
        .iter()
        .map(|a| format!("`{a}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `N/s`, `N/min`, `N/h`: (calls, seconds).
fn parse_rate(text: &str) -> Option<(f64, f64)> {
    let (n, unit) = text.trim().split_once('/')?;
    let n: f64 = n
        .trim()
        .parse()
        .ok()
        .filter(|n: &f64| n.is_finite() && *n >= 1.0)?;
    let per = match unit.trim() {
        "s" | "sec" | "second" => 1.0,
        "min" | "minute" => 60.0,
        "h" | "hour" => 3600.0,
        _ => return None,
    };
    Some((n, per))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use skillbake_exec_fixtures::REGISTRY;

    fn parse(text: &str, agents: &[&str], grants: Option<&[&str]>) -> Result<Profiles, String> {
        Profiles::parse(text, "profiles.toml", &REGISTRY, agents, grants).map_err(|e| e.to_string())
    }

    #[test]
    fn an_agent_sees_its_profile_and_gets_its_versions() {
        let text = r#"
[default]
skills = ["echo"]

[agents.alpha]
skills = ["echo", "versioned"]
requires = { versioned = "^1" }
allow = ["network"]
max-runs = 2
rate = "5/s"
"#;
        let p = parse(text, &["alpha", "beta"], Some(&["network"])).unwrap();
        let alpha = p.view("alpha");
        assert!(alpha.sees("echo") && alpha.sees("versioned") && !alpha.sees("fails"));
        assert_eq!(p.version_for("alpha", "versioned"), Some("1.0.0"));
        assert_eq!(alpha.allow.as_deref(), Some(&["network".to_string()][..]));
        let beta = p.view("beta");
        assert!(beta.sees("echo") && !beta.sees("versioned"));
        assert_eq!(p.version_for("beta", "versioned"), None);
        // An agent no profile covers sees nothing.
        assert!(!p.view("stranger").sees("echo"));
        // The rate: five calls, then a wait.
        for _ in 0..5 {
            assert!(alpha.take_call().is_ok());
        }
        let (wait, rate) = alpha.take_call().unwrap_err();
        assert!(wait > 0.0 && wait <= 1.0, "{wait}");
        assert_eq!(rate, "5/s");
    }

    /// The rollout sends the configured share of 1,000 agent names to the new version (within
    /// ±3 points, three standard deviations of a fair 10% draw), the named agents whatever
    /// their hash, and every agent the same version on every lookup and every parse.
    #[test]
    fn a_rollout_sends_its_share_of_agents_and_keeps_each_one() {
        let names: Vec<String> = (0..1000).map(|i| format!("agent-{i:04}")).collect();
        let mut agents: Vec<&str> = names.iter().map(String::as_str).collect();
        agents.push("canary");
        for (share, low, high) in [
            (10.0, 70, 130),
            (50.0, 450, 550),
            (0.0, 0, 0),
            (100.0, 1000, 1000),
        ] {
            let text = format!(
                "[default]\n[rollout.versioned]\nversion = \"=1.0.0\"\nshare = {share:.1}\nagents = [\"canary\"]\n"
            );
            let p = parse(&text, &agents, None).unwrap();
            let again = parse(&text, &agents, None).unwrap();
            let rolled = names
                .iter()
                .filter(|a| p.version_for(a, "versioned") == Some("1.0.0"))
                .count();
            eprintln!("share {share}%: {rolled} of 1000 agents on 1.0.0");
            assert!(
                (low..=high).contains(&rolled),
                "share {share}%: {rolled} of 1000"
            );
            for a in &names {
                let v = p.version_for(a, "versioned");
                assert_eq!(v, p.version_for(a, "versioned"));
                assert_eq!(v, again.version_for(a, "versioned"));
                assert!(matches!(v, Some("1.0.0" | "2.0.0")));
            }
            assert_eq!(p.version_for("canary", "versioned"), Some("1.0.0"));
        }
        // The hash is the documented one: SHA-256("versioned/agent-0000"), 8 bytes, mod 10,000.
        let d = Sha256::digest(b"versioned/agent-0000");
        let n = u64::from_be_bytes(d[..8].try_into().unwrap()) % 10_000;
        assert_eq!(share_point("versioned", "agent-0000"), n);
    }

    #[test]
    fn a_requirement_pins_an_agent_against_the_rollout() {
        let text = "[agents.a]\nrequires = { versioned = \"^2\" }\n\
                    [rollout.versioned]\nversion = \"1.0.0\"\nshare = 100\n";
        let p = parse(text, &["a"], None).unwrap();
        assert_eq!(p.version_for("a", "versioned"), Some("2.0.0"));
    }

    #[test]
    fn every_mistake_is_reported_with_its_line_and_column() {
        let text = r#"[agents.alpha]
skills = ["ech0"]
requires = { versioned = "^9", echo = "not a range" }
allow = ["network", "smtp"]
max-runs = 0
rate = "fast"
colour = "blue"

[agents.gamma]
skills = []

[rollout.versioned]
version = "3"
share = 101
agents = ["omega"]

[rollout.nope]
version = "1"
"#;
        let m = parse(text, &["alpha", "beta"], Some(&["network"])).unwrap_err();
        for needle in [
            "profiles.toml:2:11: unknown skill `ech0`: no embedded skill has this name; did you mean `echo`?",
            "profiles.toml:3:26: no embedded version of `versioned` meets `^9`; embedded versions: 1.0.0, 2.0.0",
            "profiles.toml:3:39: bad requirement `not a range` for `echo`",
            "profiles.toml:4:21: `smtp` is more than the server's policy grants (network)",
            "profiles.toml:5:12: `max-runs` must be an integer of at least 1",
            "profiles.toml:6:8: bad rate `fast`",
            "profiles.toml:7:1: unknown key `colour`",
            "profiles.toml:9:9: unknown agent `gamma`: the token file names `alpha`, `beta`",
            "profiles.toml:13:11: no embedded version of `versioned` meets `3`",
            "profiles.toml:14:9: `share` must be a percentage from 0 to 100",
            "profiles.toml:15:11: unknown agent `omega`",
            "profiles.toml:17:10: unknown skill `nope` in `[rollout]`",
            "no profile for `beta`",
        ] {
            assert!(m.contains(needle), "{needle}\nnot in\n{m}");
        }
        let m = parse("[agents.alpha\n", &["alpha"], None).unwrap_err();
        assert!(m.contains("profiles.toml:1:"), "{m}");
        let m = parse("[default]\nallow = [\"network\"]\n", &["a"], None).unwrap_err();
        assert!(
            m.contains("profiles.toml:2:10: `allow` grants `network`, but the server runs nothing"),
            "{m}"
        );
    }
}
