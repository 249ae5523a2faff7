//! Resource URIs of embedded files: `skill://{name}/{path}`, percent-encoded
//! (`skillbake_format::percent`).

use skillbake_format::percent::{self, Keep};

/// Scheme and separator of resource URIs: `skill://{name}/{path}`.
pub const URI_PREFIX: &str = "skill://";

/// The resource template of every embedded file.
pub const RESOURCE_TEMPLATE: &str = "skill://{name}/{path}";

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

/// Splits `skill://{name}/{path}` into the decoded name and path.
pub(crate) fn parse_uri(uri: &str) -> Option<(String, String)> {
    let scheme = uri.get(..URI_PREFIX.len())?;
    if !scheme.eq_ignore_ascii_case(URI_PREFIX) {
        return None;
    }
    let rest = uri.get(URI_PREFIX.len()..)?;
    let (name, path) = rest.split_once('/')?;
    let (name, path) = (percent::decode(name)?, percent::decode(path)?);
    if name.is_empty() || path.is_empty() {
        return None;
    }
    Some((name, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip() {
        let uri = resource_uri("read-file", "scripts/my file ü.py");
        assert_eq!(uri, "skill://read-file/scripts/my%20file%20%C3%BC.py");
        assert_eq!(
            parse_uri(&uri),
            Some(("read-file".into(), "scripts/my file ü.py".into()))
        );
        assert_eq!(
            parse_uri("skill://x/scripts%2Frun.py"),
            Some(("x".into(), "scripts/run.py".into()))
        );
        for bad in [
            "",
            "skill://",
            "skill://x",
            "skill://x/",
            "skill:///SKILL.md",
            "file://x/SKILL.md",
            "skill://x/%zz",
            "skill://x/%",
            "skill://x/%ff",
            "skil",
            "sküll://x/y",
        ] {
            assert_eq!(parse_uri(bad), None, "{bad}");
        }
    }
}
