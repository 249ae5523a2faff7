//! Routing: the `k` skills most likely to serve a request, answered from the index that
//! `skillbake-build` compiled into the registry (`skillbake_route::index`). No file system, no
//! allocation that grows with the number of skills (the work is proportional to the request's
//! terms' postings, the memory to the request and `k`), no panic on any input.
//!
//! ```text
//! skillbake::include_skills!();
//!
//! let top = REGISTRY.route("email the quarterly report to the finance team", 3);
//! assert_eq!(top[0].skill.name(), "send-email");
//! assert!(top[0].fields().any(|f| f == "description"));
//! ```
//!
//! A bucket narrows routing to one group of packs: packs grouped in folders (`support/…`,
//! `data/…`) are in the bucket of their parent folder unless they declare `bucket:`; a bucket
//! also holds the buckets below it (`data` holds `data/sql`).

use crate::registry::{Registry, Skill};
use skillbake_format::candidates::{self, Candidate};
use skillbake_format::catalog::Format;
use skillbake_route::index::{query_terms, search, Fields, Index};
use skillbake_route::tokenize::Tokenizer;

/// One routed skill.
#[derive(Debug, Clone, Copy)]
pub struct Routed<'r> {
    /// The skill.
    pub skill: Skill<'r>,
    /// Its BM25F score for the request (higher is better; comparable within one request).
    pub score: f32,
    /// The fields of the skill the request's words matched (bit set).
    pub matched: Fields,
}

impl Routed<'_> {
    /// The names of the fields the request matched: `name`, `description`, `when_to_use`,
    /// `tags`, `headings`, `body`, `schema`, and `when_not_to_use` (which counted against it).
    pub fn fields(&self) -> impl Iterator<Item = &'static str> {
        self.matched.names()
    }
}

/// Options of [`Registry::route_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteOptions<'a> {
    /// How many skills to return at most.
    pub top: usize,
    /// Only skills of this bucket (or of buckets below it).
    pub bucket: Option<&'a str>,
}

impl Default for RouteOptions<'_> {
    fn default() -> Self {
        RouteOptions {
            top: 5,
            bucket: None,
        }
    }
}

/// True when `bucket` is `filter` or lies below it (`data/sql` is in `data`).
pub fn in_bucket(bucket: &str, filter: &str) -> bool {
    let filter = filter.trim_matches('/');
    filter.is_empty()
        || bucket == filter
        || bucket
            .strip_prefix(filter)
            .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg_attr(docsrs, doc(cfg(feature = "route")))]
impl Registry {
    fn route_index(&self) -> Option<Index<'static>> {
        Index::new(self.__parts().route)
    }

    /// The `top` skills for `request`, best first (see the module documentation). Skills that
    /// share no word with the request, or whose `when_not_to_use` outweighs what they share,
    /// are not returned, so fewer than `top` may come back.
    pub fn route(&self, request: &str, top: usize) -> Vec<Routed<'_>> {
        self.route_with(request, RouteOptions { top, bucket: None })
    }

    /// [`Registry::route`] with options (a bucket filter).
    pub fn route_with(&self, request: &str, opts: RouteOptions<'_>) -> Vec<Routed<'_>> {
        let Some(index) = self.route_index() else {
            return Vec::new();
        };
        if index.docs() as usize != self.len() {
            return Vec::new();
        }
        let mut tok = Tokenizer::new();
        let terms = query_terms(&index, &mut tok, request);
        let keep = |doc: u32| match opts.bucket {
            Some(b) => in_bucket(index.bucket_of(doc), b),
            None => true,
        };
        search(&index, &terms, opts.top, keep)
            .into_iter()
            .filter_map(|h| {
                Some(Routed {
                    skill: self.nth_default(h.doc as usize)?,
                    score: h.score,
                    matched: h.fields,
                })
            })
            .collect()
    }

    /// The candidates for `request` (see [`Registry::route_with`]) in a catalog format, with
    /// each one's description, `when_to_use`, `when_not_to_use` and parameters: the input of the
    /// model's final choice (`skillbake prompt --query`).
    pub fn route_catalog(&self, request: &str, opts: RouteOptions<'_>, format: Format) -> String {
        let routed = self.route_with(request, opts);
        with_candidates(&routed, |c| candidates::render(format, c))
    }

    /// The candidates for `request` as a JSON array, best first (`skillbake route --format
    /// json`, the MCP tool `find_skills`); see `skillbake_format::candidates::json`.
    pub fn route_json(&self, request: &str, opts: RouteOptions<'_>) -> String {
        let routed = self.route_with(request, opts);
        with_candidates(&routed, candidates::json)
    }

    /// Every bucket that holds a skill, sorted (`""` is the bucket of packs at the skills root).
    pub fn buckets(&self) -> Vec<&'static str> {
        let Some(index) = self.route_index() else {
            return Vec::new();
        };
        let mut out: Vec<&'static str> = (0..index.docs()).map(|d| index.bucket_of(d)).collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The size in bytes of the compiled routing index.
    pub fn route_index_size(&self) -> usize {
        self.__parts().route.len()
    }
}

fn with_candidates<T>(routed: &[Routed<'_>], f: impl FnOnce(&[Candidate<'_>]) -> T) -> T {
    let matched: Vec<Vec<&'static str>> = routed.iter().map(|r| r.fields().collect()).collect();
    let list: Vec<Candidate<'_>> = routed
        .iter()
        .zip(&matched)
        .map(|(r, m)| Candidate {
            name: r.skill.name(),
            description: r.skill.description(),
            location: r.skill.skill_md_path(),
            bucket: r.skill.bucket(),
            score: r.score,
            matched: m,
            when_to_use: r.skill.field_json("when_to_use").filter(|v| *v != "null"),
            when_not_to_use: r
                .skill
                .field_json("when_not_to_use")
                .filter(|v| *v != "null"),
            schema: r.skill.schema_json(),
        })
        .collect();
    f(&list)
}

#[cfg_attr(docsrs, doc(cfg(feature = "route")))]
impl<'r> Skill<'r> {
    /// The skill's routing bucket: `bucket:` from its frontmatter, else its parent folder under
    /// the skills root (`""` for a pack at the root).
    pub fn bucket(&self) -> &'static str {
        self.registry()
            .route_index()
            .map_or("", |ix| ix.bucket_of(self.index() as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::in_bucket;

    #[test]
    fn buckets_nest() {
        assert!(in_bucket("data/sql", "data"));
        assert!(in_bucket("data", "data/"));
        assert!(!in_bucket("database", "data"));
        assert!(in_bucket("anything", ""));
        assert!(!in_bucket("", "data"));
    }
}
