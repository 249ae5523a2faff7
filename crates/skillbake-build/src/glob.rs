//! Minimal glob patterns for `ignore` in `skillbake.toml`: `*` matches within one path
//! component, `**` matches any number of components, `?` one character; paths are
//! `/`-separated and relative to the skills root. A pattern without `/` matches a name at any
//! depth (like `.gitignore`).

/// A compiled pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    parts: Vec<String>,
}

impl Glob {
    /// Compiles `pattern`.
    pub fn new(pattern: &str) -> Result<Glob, String> {
        let p = pattern
            .trim()
            .trim_start_matches("./")
            .trim_end_matches('/');
        if p.is_empty() {
            return Err("the pattern is empty".into());
        }
        if p.starts_with('/') {
            return Err("patterns are relative to the skills root; drop the leading `/`".into());
        }
        if p.split('/').any(|c| c == "..") {
            return Err("`..` cannot appear in a pattern".into());
        }
        let mut parts: Vec<String> = p
            .split('/')
            .filter(|c| !c.is_empty())
            .map(str::to_string)
            .collect();
        if parts.len() == 1 && parts[0] != "**" {
            parts.insert(0, "**".into());
        }
        Ok(Glob { parts })
    }

    /// Whether the `/`-separated relative `path` matches.
    pub fn matches(&self, path: &str) -> bool {
        let comps: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
        match_parts(&self.parts, &comps)
    }
}

fn match_parts(pat: &[String], path: &[&str]) -> bool {
    match pat.split_first() {
        None => path.is_empty(),
        Some((first, rest)) if first == "**" => {
            (0..=path.len()).any(|skip| match_parts(rest, &path[skip..]))
        }
        Some((first, rest)) => match path.split_first() {
            Some((name, tail)) => {
                match_name(first.as_bytes(), name.as_bytes()) && match_parts(rest, tail)
            }
            None => false,
        },
    }
}

fn match_name(p: &[u8], s: &[u8]) -> bool {
    match (p.first(), s.first()) {
        (None, None) => true,
        (Some(b'*'), _) => match_name(&p[1..], s) || (!s.is_empty() && match_name(p, &s[1..])),
        (Some(b'?'), Some(_)) => match_name(&p[1..], &s[1..]),
        (Some(a), Some(b)) if a == b => match_name(&p[1..], &s[1..]),
        _ => false,
    }
}

/// A set of patterns.
#[derive(Debug, Clone, Default)]
pub struct GlobSet {
    globs: Vec<Glob>,
}

impl GlobSet {
    /// Compiles every valid pattern (invalid ones are reported by the config parser).
    pub fn new(patterns: &[String]) -> GlobSet {
        GlobSet {
            globs: patterns.iter().filter_map(|p| Glob::new(p).ok()).collect(),
        }
    }

    /// Whether any pattern matches `path`.
    pub fn matches(&self, path: &str) -> bool {
        self.globs.iter().any(|g| g.matches(path))
    }
}

#[cfg(test)]
mod tests {
    use super::Glob;

    fn m(p: &str, s: &str) -> bool {
        Glob::new(p).unwrap().matches(s)
    }

    #[test]
    fn globs() {
        assert!(m("drafts/**", "drafts/x/SKILL.md"));
        assert!(m("drafts/**", "drafts"));
        assert!(!m("drafts/**", "team/drafts"));
        assert!(m("*.tmp", "team/x/a.tmp"));
        assert!(m("**/*.tmp", "a.tmp"));
        assert!(m("team/*/notes.md", "team/x/notes.md"));
        assert!(!m("team/*/notes.md", "team/x/y/notes.md"));
        assert!(m("a?c", "abc"));
        assert!(Glob::new("").is_err());
        assert!(Glob::new("/abs").is_err());
        assert!(Glob::new("../x").is_err());
    }
}
