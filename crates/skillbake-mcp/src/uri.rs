//! Resource URIs of embedded files, percent-encoded (`skillbake_format::percent`): the version
//! agents get by name at `skill://{name}/{path}`, the others at
//! `skill://v{version}/{name}/{path}` (the MCP Skills extension's skill path: a prefix, then
//! the name).

use skillbake::Skill;
use skillbake_format::percent::{self, Keep};

/// Scheme and separator of resource URIs: `skill://{name}/{path}`.
pub const URI_PREFIX: &str = "skill://";

/// The resource template of every embedded file (at the version agents get by name).
pub const RESOURCE_TEMPLATE: &str = "skill://{name}/{path}";

/// The resource template of every embedded file at one version.
pub const VERSION_TEMPLATE: &str = "skill://v{version}/{name}/{path}";

/// The URI of an embedded file: `skill://{name}/{path}`, percent-encoding every byte of `name`
/// and `path` outside `A-Z a-z 0-9 - . _ ~` (and `/` in `path`).
pub fn resource_uri(name: &str, path: &str) -> String {
    let mut out = String::with_capacity(URI_PREFIX.len() + name.len() + path.len() + 1);
    out.push_str(URI_PREFIX);
    percent::encode_into(&mut out, name, Keep::Unreserved);
    out.push('/');
    percent::encode_into(&mut out, path, Keep::Path);
    out
}

/// The URI of a skill's folder, without a trailing `/`: `skill://{name}` for the version agents
/// get by name, `skill://v{version}/{name}` for the others. A version always holds a `.` and a
/// name never does, so the two forms cannot meet.
pub fn skill_root(skill: &Skill<'_>) -> String {
    skill_root_as(skill, skill.is_default())
}

/// [`skill_root`] for a skill that the caller gets by name (`by_name`) or not: an agent's
/// profile may make another version the one it gets by name.
pub(crate) fn skill_root_as(skill: &Skill<'_>, by_name: bool) -> String {
    let mut out = String::from(URI_PREFIX);
    match skill.version() {
        Some(v) if !by_name => {
            out.push('v');
            percent::encode_into(&mut out, v, Keep::Unreserved);
            out.push('/');
        }
        _ => {}
    }
    percent::encode_into(&mut out, skill.name(), Keep::Unreserved);
    out
}

/// The parts of a `skill://` URI, still encoded: the first segment (the authority) and what
/// follows its `/`, if anything. `None` for another scheme, an empty authority, a query or a
/// fragment.
pub(crate) fn segments(uri: &str) -> Option<(&str, Option<&str>)> {
    let scheme = uri.get(..URI_PREFIX.len())?;
    if !scheme.eq_ignore_ascii_case(URI_PREFIX) {
        return None;
    }
    let rest = uri.get(URI_PREFIX.len()..)?;
    if rest.contains(['?', '#']) {
        return None;
    }
    let (first, path) = match rest.split_once('/') {
        Some((first, path)) => (first, Some(path)),
        None => (rest, None),
    };
    (!first.is_empty()).then_some((first, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_encode_and_split() {
        let uri = resource_uri("read-file", "scripts/my file ü.py");
        assert_eq!(uri, "skill://read-file/scripts/my%20file%20%C3%BC.py");
        assert_eq!(
            segments(&uri),
            Some(("read-file", Some("scripts/my%20file%20%C3%BC.py")))
        );
        assert_eq!(segments("SKILL://x"), Some(("x", None)));
        assert_eq!(segments("skill://v1.0.0/x/"), Some(("v1.0.0", Some("x/"))));
        for bad in [
            "",
            "skill://",
            "skill:///SKILL.md",
            "file://x/SKILL.md",
            "skill://x/SKILL.md?v=1",
            "skill://x/SKILL.md#top",
            "skil",
            "sküll://x/y",
        ] {
            assert_eq!(segments(bad), None, "{bad}");
        }
    }
}
