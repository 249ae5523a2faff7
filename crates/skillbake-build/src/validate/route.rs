//! Routing rules, run against the index `check` compiles (the same bytes the runtime serves):
//!
//! * `route-test-failed` — a request in a pack's `route_tests` does not route as declared:
//!   a `match` request must bring the pack into the top `[route] top` (default 5), a `no_match`
//!   request must not;
//! * `description-near-duplicate` — on a pack's own description, another pack scores at least
//!   `[route] duplicate-threshold` (default 0.9) of the pack's own score: routing cannot tell
//!   them apart;
//! * `catalog-over-budget` — the full catalog costs more than `[catalog] max-tokens` or
//!   `max-chars`.
//!
//! `route_tests` is a frontmatter mapping:
//!
//! ```yaml
//! route_tests:
//!   match:
//!     - email the quarterly report to finance@example.com
//!   no_match:
//!     - what does SMTP stand for?
//! ```
//!
//! Each of `match` and `no_match` is one request or a list of them. The shape is checked per pack
//! (`field-type`, `unknown-key`); the requests run once every pack is indexed.

use super::PackCtx;
use crate::config::ProjectConfig;
use crate::diagnostic::{Code, Diagnostic};
use crate::generate::route::Built;
use crate::model::{RouteDoc, RouteTest};
use crate::parse::frontmatter::SkillMd;
use crate::parse::{key_text, type_name};
use skillbake_format::suggest::{closest, did_you_mean};
use skillbake_format::{catalog, tokens};
use skillbake_route::index::{query_terms, search, search_near, Hit, Index};
use skillbake_route::tokenize::Tokenizer;
use std::collections::BTreeSet;
use yaml_serde::Value;

/// The frontmatter key holding routing test cases.
pub const ROUTE_TESTS: &str = "route_tests";
/// Its sub-keys: requests that must route to the pack, and requests that must not.
pub const CASES: [&str; 2] = ["match", "no_match"];

/// Checks the shape of `route_tests` and `bucket`.
pub fn check(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) {
    if let Some(Value::String(b)) = ctx.field("bucket") {
        let bad = b.trim() != b
            || b.is_empty()
            || b.starts_with('/')
            || b.ends_with('/')
            || b.split('/')
                .any(|p| p.trim().is_empty() || p == "." || p == "..");
        if bad {
            diags.push(
                super::fields::wrong_shape(
                    &ctx.file,
                    format!("`bucket` is `{b}`; it must be a folder-like name such as `support` or `data/sql`"),
                )
                .at(ctx.md.value_pos("bucket"))
                .help("use `/`-separated parts without spaces around them, or remove `bucket` to use the pack's parent folder"),
            );
        }
    }
    let Some(Value::Mapping(m)) = ctx.field(ROUTE_TESTS) else {
        return;
    };
    for (k, v) in m {
        let key = key_text(k);
        if !CASES.contains(&key.as_str()) {
            let mut d = super::fields::unknown_sub_key(
                &ctx.file,
                format!("unknown key `{key}` in `{ROUTE_TESTS}`; its cases are never run"),
            )
            .at(ctx.md.find_in_value(ROUTE_TESTS, &key));
            d = match closest(&key, CASES).filter(|s| *s != key) {
                Some(s) => d.help(did_you_mean(s)),
                None => d.help("use `match:` for requests that must route to this pack and `no_match:` for requests that must not"),
            };
            diags.push(d);
            continue;
        }
        let ok = match v {
            Value::String(_) | Value::Null => true,
            Value::Sequence(items) => items.iter().all(|i| matches!(i, Value::String(_))),
            _ => false,
        };
        if !ok {
            diags.push(
                super::fields::wrong_shape(
                    &ctx.file,
                    format!(
                        "`{ROUTE_TESTS}.{key}` must be a request or a list of requests (strings), found {}",
                        type_name(v)
                    ),
                )
                .at(ctx.md.find_in_value(ROUTE_TESTS, &key))
                .help(format!("write it as `{key}: [\"a request\", \"another request\"]`")),
            );
        }
    }
}

/// The test cases of `route_tests`, with the position of each request.
pub fn tests(md: &SkillMd) -> Vec<RouteTest> {
    let Some(fm) = md.frontmatter.as_ref() else {
        return Vec::new();
    };
    let Some(Value::Mapping(m)) = fm.mapping.get(ROUTE_TESTS) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in m {
        let key = key_text(k);
        let should_match = match key.as_str() {
            "match" => true,
            "no_match" => false,
            _ => continue,
        };
        let items: Vec<&str> = match v {
            Value::String(s) => vec![s.as_str()],
            Value::Sequence(items) => items.iter().filter_map(|i| i.as_str()).collect(),
            _ => Vec::new(),
        };
        for q in items {
            let q = q.trim();
            if q.is_empty() {
                continue;
            }
            out.push(RouteTest {
                query: q.to_string(),
                should_match,
                pos: md
                    .find_in_value(ROUTE_TESTS, q)
                    .or_else(|| md.find_in_value(ROUTE_TESTS, &key)),
            });
        }
    }
    out
}

/// What the whole-registry routing checks measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Cost {
    /// The catalog format measured (`[catalog] format`).
    pub catalog_format: &'static str,
    /// Characters of the full catalog.
    pub catalog_chars: usize,
    /// Estimated tokens of the full catalog (`skillbake_format::tokens::estimate`).
    pub catalog_tokens: usize,
    /// Bytes of the routing index.
    pub index_bytes: usize,
}

impl Cost {
    /// `catalog (xml): 2,345 characters, about 610 tokens; routing index: 56,119 bytes`.
    pub fn summary(&self) -> String {
        format!(
            "catalog ({}): {} characters, about {} tokens; routing index: {} bytes",
            self.catalog_format,
            thousands(self.catalog_chars),
            thousands(self.catalog_tokens),
            thousands(self.index_bytes)
        )
    }
}

fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Runs every pack's routing tests, the near-duplicate check and the catalog budget against
/// `built`, the index of `skills` (sorted by name; `None` when no pack has tests and there is
/// only one, so that neither of the first two can fire: the cost then has no index bytes).
/// `prefix` is the location prefix catalogs use; `config_file` names `skillbake.toml` in
/// diagnostics.
pub fn check_all(
    skills: &[&RouteDoc],
    built: Option<&Built>,
    cfg: &ProjectConfig,
    prefix: &str,
    config_file: &str,
    diags: &mut Vec<Diagnostic>,
) -> Cost {
    let mut cost = Cost {
        catalog_format: cfg.route.catalog_format.name(),
        index_bytes: built.map_or(0, |b| b.bytes.len()),
        ..Cost::default()
    };
    if let Some(index) = built.and_then(|b| Index::new(&b.bytes)) {
        let mut tok = Tokenizer::new().with_word_cache();
        run_tests(skills, &index, &mut tok, cfg.route.top, diags);
        near_duplicates(skills, &index, cfg.route.duplicate_threshold, diags);
    }
    let locations: Vec<String> = skills
        .iter()
        .map(|s| format!("{}/SKILL.md", crate::generate::location(prefix, &s.rel_dir)))
        .collect();
    let tag_lists: Vec<Vec<&str>> = skills
        .iter()
        .map(|s| s.tags.iter().map(String::as_str).collect())
        .collect();
    let entries: Vec<catalog::Entry<'_>> = skills
        .iter()
        .zip(&locations)
        .zip(&tag_lists)
        .map(|((s, loc), tags)| catalog::Entry {
            name: &s.name,
            description: &s.description,
            location: loc,
            tags,
        })
        .collect();
    let format = cfg.route.catalog_format;
    let text = catalog::render(format, &entries, None).text;
    cost.catalog_chars = text.chars().count();
    cost.catalog_tokens = tokens::estimate(&text);
    let over_tokens = cfg
        .route
        .max_tokens
        .filter(|&m| cost.catalog_tokens as u64 > m);
    let over_chars = cfg
        .route
        .max_chars
        .filter(|&m| cost.catalog_chars as u64 > m);
    if over_tokens.is_some() || over_chars.is_some() {
        let pos = cfg.route.budget_pos;
        let limit = match (over_tokens, over_chars) {
            (Some(t), _) => format!("`[catalog] max-tokens = {t}`"),
            (None, Some(c)) => format!("`[catalog] max-chars = {c}`"),
            (None, None) => String::new(),
        };
        let biggest = skills
            .iter()
            .max_by_key(|s| (s.description.chars().count(), std::cmp::Reverse(&s.name)))
            .map(|s| {
                format!(
                    "; the longest description is `{}`'s ({} characters)",
                    s.name,
                    s.description.chars().count()
                )
            })
            .unwrap_or_default();
        diags.push(
            Diagnostic::new(
                Code::CatalogOverBudget,
                config_file,
                format!(
                    "the {} catalog of {} costs {} characters, about {} tokens, over {limit}",
                    format.name(),
                    if skills.len() == 1 { "1 skill".to_string() } else { format!("{} skills", skills.len()) },
                    cost.catalog_chars,
                    cost.catalog_tokens
                ),
            )
            .at(pos)
            .help(format!(
                "shorten descriptions{biggest}, split the packs into buckets and give each agent its own (`skillbake prompt --query` lists only the candidates), or raise the budget"
            )),
        );
    }
    cost
}

fn hits(index: &Index<'_>, tok: &mut Tokenizer, query: &str, k: usize) -> Vec<Hit> {
    let terms = query_terms(index, tok, query);
    search(index, &terms, k, |_| true)
}

fn describe(skills: &[&RouteDoc], hits: &[Hit]) -> String {
    hits.iter()
        .filter_map(|h| {
            let s = skills.get(h.doc as usize)?;
            Some(format!("`{}` ({:.2})", s.name, h.score))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn run_tests(
    skills: &[&RouteDoc],
    index: &Index<'_>,
    tok: &mut Tokenizer,
    top: usize,
    diags: &mut Vec<Diagnostic>,
) {
    for (doc, skill) in skills.iter().enumerate() {
        for t in &skill.route.tests {
            let found = hits(index, tok, &t.query, top);
            let rank = found.iter().position(|h| h.doc as usize == doc);
            let d = match (t.should_match, rank) {
                (true, None) => {
                    let all = hits(index, tok, &t.query, skills.len().max(1));
                    let actual = all.iter().position(|h| h.doc as usize == doc);
                    let where_ = match actual {
                        Some(r) => format!("it ranks {} of {}", r + 1, all.len()),
                        None => "it shares no term with the pack".to_string(),
                    };
                    let tops = if found.is_empty() {
                        "no pack matches it".to_string()
                    } else {
                        format!("the top {} are {}", found.len(), describe(skills, &found))
                    };
                    Diagnostic::new(
                        Code::RouteTestFailed,
                        &skill.route.file,
                        format!(
                            "`{ROUTE_TESTS}.match`: \"{}\" does not route to `{}` within the top {top}: {where_}; {tops}",
                            t.query, skill.name
                        ),
                    )
                    .at(t.pos)
                    .help("use the words such requests use in `description` or `when_to_use` (they weigh most), or make the packs that win say in `when_not_to_use` when they are not meant")
                }
                (false, Some(r)) => {
                    let h = found[r];
                    let fields: Vec<&str> = h.fields.names().collect();
                    Diagnostic::new(
                        Code::RouteTestFailed,
                        &skill.route.file,
                        format!(
                            "`{ROUTE_TESTS}.no_match`: \"{}\" routes to `{}` at rank {} of the top {top} (score {:.2}, matched in {})",
                            t.query,
                            skill.name,
                            r + 1,
                            h.score,
                            fields.join(", ")
                        ),
                    )
                    .at(t.pos)
                    .help("say in `when_not_to_use` when this pack is not meant (its words count against the pack), or narrow `description`")
                }
                _ => continue,
            };
            diags.push(d);
        }
    }
}

/// The pack routing cannot tell from pack `doc`, and its score over `doc`'s, from the best hits
/// of `doc`'s own description: when `doc` is among them with a positive score and the best
/// other pack scores at least `threshold` of it.
fn nearest(doc: usize, found: &[Hit], threshold: f64) -> Option<(usize, f64)> {
    let own = found.iter().find(|h| h.doc as usize == doc)?;
    let other = found.iter().find(|h| h.doc as usize != doc)?;
    if own.score <= 0.0 {
        return None;
    }
    let ratio = f64::from(other.score) / f64::from(own.score);
    (ratio >= threshold).then_some((other.doc as usize, ratio))
}

fn near_duplicates(
    skills: &[&RouteDoc],
    index: &Index<'_>,
    threshold: f64,
    diags: &mut Vec<Diagnostic>,
) {
    // Each pack's search is independent of the others': they run on every core (a run of
    // packs per worker, with one tokenizer and its word cache), and what they find is reported
    // below in the packs' order, as one pass would report it.
    let numbered: Vec<(u32, &RouteDoc)> = (0u32..).zip(skills.iter().copied()).collect();
    let searched = crate::parallel::par_parts(&numbered, |part| {
        let mut tok = Tokenizer::new().with_word_cache();
        part.iter()
            .map(|&(doc, skill)| {
                if skill.description.trim().is_empty() {
                    Vec::new()
                } else {
                    // Only whether the pack is among the 3 best and which other pack comes
                    // within `threshold` of it matter below: the hits under that may be left out.
                    let terms = query_terms(index, &mut tok, &skill.description);
                    search_near(index, &terms, doc, threshold, 3)
                }
            })
            .collect::<Vec<_>>()
    });
    let mut seen: BTreeSet<(usize, usize)> = BTreeSet::new();
    for (doc, (skill, found)) in skills.iter().zip(searched).enumerate() {
        // (A pack without a description was not searched: nothing found, nothing reported.)
        let Some((j, ratio)) = nearest(doc, &found, threshold) else {
            continue;
        };
        if !seen.insert((doc.min(j), doc.max(j))) {
            continue;
        }
        let Some(near) = skills.get(j) else { continue };
        // Two packs of one name are `duplicate-name`'s to report.
        if near.name.eq_ignore_ascii_case(&skill.name) {
            continue;
        }
        diags.push(
            Diagnostic::new(
                Code::DescriptionNearDuplicate,
                &skill.route.file,
                format!(
                    "routing cannot tell `{}` from `{}`: on `{}`'s own description, `{}` scores {:.0}% of `{}`'s own score",
                    skill.name, near.name, skill.name, near.name, ratio * 100.0, skill.name
                ),
            )
            .at(skill.route.description_pos)
            .note(format!("the nearest pack is `{}` in `{}`", near.name, near.route.file))
            .help(format!(
                "say in each description what sets it apart, or name what `{}` is for in `{}`'s `when_not_to_use` (its words count against `{}`)",
                skill.name, near.name, near.name
            )),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::route::{build_fields, FieldTexts};

    /// The near-duplicate check searches each pack's description with `search_near`, which may
    /// leave out the hits below the threshold: what it concludes must be what the whole top 3
    /// gives, at every threshold, over packs with many near and exact duplicates.
    #[test]
    fn the_pruned_near_search_finds_what_the_whole_top_3_finds() {
        let words = [
            "csv",
            "report",
            "email",
            "invoice",
            "chart",
            "table",
            "merge",
            "split",
            "pdf",
            "image",
            "resize",
            "translate",
            "summary",
            "calendar",
            "meeting",
            "budget",
        ];
        let mut state = 17u64;
        let mut next = |n: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize % n
        };
        let mut docs = Vec::new();
        let mut descriptions: Vec<String> = Vec::new();
        for i in 0..300 {
            let len = 3 + next(8);
            let text: Vec<&str> = (0..len).map(|_| words[next(words.len())]).collect();
            // Every fifth pack repeats an earlier one's description, word for word.
            let description = if i % 5 == 4 {
                descriptions[next(descriptions.len())].clone()
            } else {
                text.join(" ")
            };
            let mut f = FieldTexts::default();
            f.texts[0].push(format!("pack-{i:03}"));
            f.texts[1].push(description.clone());
            f.texts[5].push(format!("{description} body {}", words[i % words.len()]));
            descriptions.push(description);
            docs.push(f);
        }
        let buckets = vec![""; docs.len()];
        let built = build_fields(&docs, &buckets).unwrap();
        let index = Index::new(&built.bytes).unwrap();
        let mut tok = Tokenizer::new();
        let mut reported = 0;
        for threshold in [0.0, 0.5, 0.8, 0.9, 0.97, 1.0] {
            for (doc, description) in descriptions.iter().enumerate() {
                let terms = query_terms(&index, &mut tok, description);
                let whole = search(&index, &terms, 3, |_| true);
                let near = search_near(&index, &terms, doc as u32, threshold, 3);
                let want = nearest(doc, &whole, threshold);
                assert_eq!(
                    nearest(doc, &near, threshold),
                    want,
                    "pack {doc} at {threshold}"
                );
                reported += usize::from(want.is_some());
            }
        }
        assert!(reported > 300, "{reported}");
    }
}
