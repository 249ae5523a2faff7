//! Resource URIs of embedded files: `skill://{name}/{path}`, percent-encoded.

/// Scheme and separator of resource URIs: `skill://{name}/{path}`.
pub const URI_PREFIX: &str = "skill://";

/// The resource template of every embedded file.
pub const RESOURCE_TEMPLATE: &str = "skill://{name}/{path}";

/// The URI of an embedded file: `skill://{name}/{path}`, percent-encoding every byte of `name`
/// and `path` outside `A-Z a-z 0-9 - . _ ~` (and `/` in `path`).
pub fn resource_uri(name: &str, path: &str) -> String {
    let mut out = String::with_capacity(URI_PREFIX.len() + name.len() + path.len() + 1);
    out.push_str(URI_PREFIX);
    percent_encode(name, false, &mut out);
    out.push('/');
    percent_encode(path, true, &mut out);
    out
}

fn percent_encode(s: &str, keep_slash: bool, out: &mut String) {
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~')
            || (keep_slash && b == b'/')
        {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Splits `skill://{name}/{path}` into the decoded name and path.
pub(super) fn parse_uri(uri: &str) -> Option<(String, String)> {
    let scheme = uri.get(..URI_PREFIX.len())?;
    if !scheme.eq_ignore_ascii_case(URI_PREFIX) {
        return None;
    }
    let rest = uri.get(URI_PREFIX.len()..)?;
    let (name, path) = rest.split_once('/')?;
    let (name, path) = (percent_decode(name)?, percent_decode(path)?);
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
