//! `schema.json` at the pack root: valid JSON, a valid JSON Schema (checked offline against the
//! meta-schema of its draft), only local `$ref`s, every local `$ref` resolves, no `$ref` cycle
//! without a step into a child value, and every `format` one that validators know.

use crate::diagnostic::{Code, Diagnostic, Position};
use crate::parse::json::JsonIndex;
use crate::source::LineIndex;
use serde_json::Value;
use skillbake_format::suggest::{closest, did_you_mean};

/// File name of a pack's parameter schema.
pub const SCHEMA_JSON: &str = "schema.json";

/// Meta-schemas bundled with the validator (anything else would be fetched from the network).
const KNOWN_META_SCHEMAS: &[&str] = &[
    "json-schema.org/draft-04/schema",
    "json-schema.org/draft-06/schema",
    "json-schema.org/draft-07/schema",
    "json-schema.org/draft/2019-09/schema",
    "json-schema.org/draft/2020-12/schema",
];

/// Subtrees that hold data, not subschemas: a `$ref` key there is not a reference.
const DATA_KEYWORDS: &[&str] = &["enum", "const", "examples", "default"];

/// Checks the bytes of a `schema.json`; `file` is its path in diagnostics.
pub fn check(bytes: &[u8], file: &str, diags: &mut Vec<Diagnostic>) {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t.strip_prefix('\u{feff}').unwrap_or(t),
        Err(e) => {
            diags.push(
                Diagnostic::new(
                    Code::SchemaJsonSyntax,
                    file,
                    format!(
                        "schema.json is not valid UTF-8 (byte offset {})",
                        e.valid_up_to()
                    ),
                )
                .help("save the file as UTF-8"),
            );
            return;
        }
    };
    let schema: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            let msg = e.to_string();
            let msg = msg.find(" at line ").map_or(msg.as_str(), |i| &msg[..i]);
            diags.push(
                Diagnostic::new(
                    Code::SchemaJsonSyntax,
                    file,
                    format!("schema.json is not valid JSON: {msg}"),
                )
                .at(Some(Position::span(
                    u32::try_from(e.line()).unwrap_or(u32::MAX),
                    u32::try_from(e.column()).unwrap_or(u32::MAX).max(1),
                    1,
                )))
                .help("fix the JSON syntax (no comments, no trailing commas, double-quoted keys)"),
            );
            return;
        }
    };
    let idx = JsonIndex::new(text);
    let lines = LineIndex::new(text);
    let pos_of = |ptr: &str| {
        idx.value(ptr)
            .map(|(s, e)| lines.range(s, e))
            .or(Some(Position::point(1, 1)))
    };
    let before = diags.len();
    if let Some(Value::String(uri)) = schema.get("$schema") {
        let bare = uri
            .trim_start_matches("https://")
            .trim_start_matches("http://")
            .trim_end_matches('#');
        if !KNOWN_META_SCHEMAS.contains(&bare) {
            diags.push(
                Diagnostic::new(
                    Code::SchemaRemoteRef,
                    file,
                    format!("`$schema` names `{uri}`, a meta-schema that would have to be fetched from the network"),
                )
                .at(pos_of("/$schema"))
                .help("use a standard draft, e.g. `\"$schema\": \"https://json-schema.org/draft/2020-12/schema\"`"),
            );
        }
    }
    check_refs(&schema, &schema, String::new(), file, &pos_of, diags);
    if diags.len() > before {
        return;
    }
    check_ref_cycles(&schema, file, &pos_of, diags);
    if diags.len() > before {
        return;
    }
    check_formats(&schema, String::new(), file, &pos_of, diags);
    let meta = match jsonschema::meta::validator_for(&schema) {
        Ok(m) => m,
        Err(e) => {
            diags.push(
                Diagnostic::new(
                    Code::SchemaInvalid,
                    file,
                    format!("cannot load the meta-schema: {e}"),
                )
                .at(pos_of("/$schema"))
                .help("use a standard `$schema` draft URL or remove `$schema`"),
            );
            return;
        }
    };
    for err in meta.iter_errors(&schema) {
        let ptr = err.instance_path().to_string();
        let at = if ptr.is_empty() {
            "the top level".to_string()
        } else {
            format!("`{ptr}`")
        };
        diags.push(
            Diagnostic::new(
                Code::SchemaInvalid,
                file,
                format!("not a valid JSON Schema at {at}: {err}"),
            )
            .at(pos_of(&ptr))
            .help("fix this keyword so the schema validates against its draft's meta-schema"),
        );
    }
    if diags.len() > before {
        return;
    }
    if let Err(e) = jsonschema::validator_for(&schema) {
        diags.push(
            Diagnostic::new(
                Code::SchemaInvalid,
                file,
                format!("the schema cannot be compiled: {e}"),
            )
            .at(pos_of(&e.instance_path().to_string()))
            .help("fix the schema so a validator can be built from it"),
        );
    }
}

/// Reports remote and unresolved `$ref`s anywhere in the schema.
fn check_refs(
    root: &Value,
    node: &Value,
    ptr: String,
    file: &str,
    pos_of: &dyn Fn(&str) -> Option<Position>,
    diags: &mut Vec<Diagnostic>,
) {
    match node {
        Value::Object(map) => {
            for kw in ["$ref", "$dynamicRef", "$recursiveRef"] {
                if let Some(Value::String(r)) = map.get(kw) {
                    let at = format!("{ptr}/{}", kw.replace('~', "~0"));
                    check_ref(root, kw, r, file, pos_of(&at), diags);
                }
            }
            for (k, v) in map {
                if DATA_KEYWORDS.contains(&k.as_str()) {
                    continue;
                }
                let child = format!("{ptr}/{}", crate::parse::json::escape_token(k));
                check_refs(root, v, child, file, pos_of, diags);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                check_refs(root, v, format!("{ptr}/{i}"), file, pos_of, diags);
            }
        }
        _ => {}
    }
}

fn check_ref(
    root: &Value,
    kw: &str,
    r: &str,
    file: &str,
    pos: Option<Position>,
    diags: &mut Vec<Diagnostic>,
) {
    let Some(fragment) = r.strip_prefix('#') else {
        if has_embedded_id(root, r) {
            return;
        }
        diags.push(
            Diagnostic::new(
                Code::SchemaRemoteRef,
                file,
                format!("`{kw}` points at `{r}`, another document; skillbake never fetches schemas"),
            )
            .at(pos)
            .help("copy the referenced definition into this file under `$defs` and use `\"$ref\": \"#/$defs/NAME\"`"),
        );
        return;
    };
    let resolves = if fragment.is_empty() {
        true
    } else if fragment.starts_with('/') {
        // A fragment is percent-encoded (RFC 3986); a broken escape points at nothing.
        skillbake_format::percent::decode(fragment).is_some_and(|p| root.pointer(&p).is_some())
    } else {
        has_anchor(root, fragment)
    };
    if !resolves {
        diags.push(
            Diagnostic::new(
                Code::SchemaUnresolvedRef,
                file,
                format!("`{kw}` `{r}` points at nothing in this schema"),
            )
            .at(pos)
            .help("fix the pointer (e.g. `#/$defs/NAME` or `#/definitions/NAME`) or add the missing definition"),
        );
    }
}

/// Keywords that apply a subschema to the same instance: a cycle through them (and `$ref`) never
/// reaches a child value, so a validator following it recurses forever.
const IN_PLACE: &[&str] = &[
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
];

/// The JSON pointer a local `$ref` leads to, if it resolves.
fn ref_target(root: &Value, r: &str) -> Option<String> {
    let fragment = r.strip_prefix('#')?;
    if fragment.is_empty() {
        return Some(String::new());
    }
    if fragment.starts_with('/') {
        let ptr = skillbake_format::percent::decode(fragment)?;
        return root.pointer(&ptr).map(|_| ptr);
    }
    let mut found = None;
    find_anchor(root, String::new(), fragment, &mut found);
    found
}

fn find_anchor(v: &Value, ptr: String, name: &str, found: &mut Option<String>) {
    if found.is_some() {
        return;
    }
    match v {
        Value::Object(m) => {
            let hash = format!("#{name}");
            let is = ["$anchor", "$dynamicAnchor"]
                .iter()
                .any(|k| m.get(*k).and_then(Value::as_str) == Some(name))
                || ["$id", "id"]
                    .iter()
                    .any(|k| m.get(*k).and_then(Value::as_str) == Some(hash.as_str()));
            if is {
                *found = Some(ptr);
                return;
            }
            for (k, c) in m {
                if !DATA_KEYWORDS.contains(&k.as_str()) {
                    find_anchor(
                        c,
                        format!("{ptr}/{}", crate::parse::json::escape_token(k)),
                        name,
                        found,
                    );
                }
            }
        }
        Value::Array(items) => {
            for (i, c) in items.iter().enumerate() {
                find_anchor(c, format!("{ptr}/{i}"), name, found);
            }
        }
        _ => {}
    }
}

/// The subschemas `node` (at `ptr`) applies to its own instance: (their pointer, the pointer of
/// the `$ref` that leads there, if it is one).
fn in_place(root: &Value, ptr: &str, node: &Value) -> Vec<(String, Option<String>)> {
    let Value::Object(m) = node else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for kw in ["$ref", "$dynamicRef", "$recursiveRef"] {
        if let Some(target) = m
            .get(kw)
            .and_then(Value::as_str)
            .and_then(|r| ref_target(root, r))
        {
            out.push((target, Some(format!("{ptr}/{kw}"))));
        }
    }
    for kw in IN_PLACE {
        match m.get(*kw) {
            Some(Value::Array(items)) => {
                for i in 0..items.len() {
                    out.push((format!("{ptr}/{kw}/{i}"), None));
                }
            }
            Some(Value::Object(sub)) if *kw == "dependentSchemas" => {
                for k in sub.keys() {
                    out.push((
                        format!("{ptr}/{kw}/{}", crate::parse::json::escape_token(k)),
                        None,
                    ));
                }
            }
            Some(Value::Object(_) | Value::Bool(_)) => out.push((format!("{ptr}/{kw}"), None)),
            _ => {}
        }
    }
    out
}

/// Reports `$ref` chains that lead back to where they started without passing through a keyword
/// that moves to a child value (`a` → `b` → `a`, or a schema that refers to itself).
fn check_ref_cycles(
    root: &Value,
    file: &str,
    pos_of: &dyn Fn(&str) -> Option<Position>,
    diags: &mut Vec<Diagnostic>,
) {
    let mut starts = Vec::new();
    collect_pointers(root, String::new(), &mut starts);
    let mut done: std::collections::HashSet<String> = std::collections::HashSet::new();
    for start in starts {
        if done.contains(&start) {
            continue;
        }
        // Depth-first along in-place edges, keeping the path.
        let mut path: Vec<(String, Option<String>)> = vec![(start.clone(), None)];
        let mut stack: Vec<Vec<(String, Option<String>)>> = vec![root
            .pointer(&start)
            .map(|n| in_place(root, &start, n))
            .unwrap_or_default()];
        while let Some(top) = stack.last_mut() {
            let Some((next, via)) = top.pop() else {
                stack.pop();
                if let Some((p, _)) = path.pop() {
                    done.insert(p);
                }
                continue;
            };
            if let Some(i) = path.iter().position(|(p, _)| *p == next) {
                let mut chain: Vec<String> = path[i..]
                    .iter()
                    .map(|(p, _)| {
                        if p.is_empty() {
                            "#".to_string()
                        } else {
                            format!("#{p}")
                        }
                    })
                    .collect();
                chain.push(if next.is_empty() {
                    "#".into()
                } else {
                    format!("#{next}")
                });
                let at = via.clone().unwrap_or_else(|| next.clone());
                diags.push(
                    Diagnostic::new(
                        Code::SchemaRefCycle,
                        file,
                        format!(
                            "`$ref`s form a cycle with nothing in between: {}; a validator following them never stops",
                            chain.join(" → ")
                        ),
                    )
                    .at(pos_of(&at))
                    .help("point the `$ref` at the definition itself, or put the recursion under `properties`/`items` so each step validates a child value"),
                );
                return;
            }
            if done.contains(&next) {
                continue;
            }
            let children = root
                .pointer(&next)
                .map(|n| in_place(root, &next, n))
                .unwrap_or_default();
            path.push((next, via));
            stack.push(children);
        }
    }
}

fn collect_pointers(v: &Value, ptr: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            out.push(ptr.clone());
            for (k, c) in m {
                if !DATA_KEYWORDS.contains(&k.as_str()) {
                    collect_pointers(
                        c,
                        format!("{ptr}/{}", crate::parse::json::escape_token(k)),
                        out,
                    );
                }
            }
        }
        Value::Array(items) => {
            for (i, c) in items.iter().enumerate() {
                collect_pointers(c, format!("{ptr}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// Formats defined by JSON Schema (2020-12 and the older drafts) and the OpenAPI data types tool
/// schemas often carry.
pub const KNOWN_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
    // draft 3 and 4 spellings
    "host-name",
    "ip-address",
    "color",
    "utc-millisec",
    // OpenAPI
    "int32",
    "int64",
    "float",
    "double",
    "byte",
    "binary",
    "password",
];

/// Warns about `format` values no validator knows (they are silently ignored).
fn check_formats(
    node: &Value,
    ptr: String,
    file: &str,
    pos_of: &dyn Fn(&str) -> Option<Position>,
    diags: &mut Vec<Diagnostic>,
) {
    match node {
        Value::Object(map) => {
            if let Some(Value::String(f)) = map.get("format") {
                if !KNOWN_FORMATS.contains(&f.as_str()) {
                    let mut d = Diagnostic::new(
                        Code::SchemaUnknownFormat,
                        file,
                        format!("`format` `{f}` is not a format JSON Schema defines; validators ignore it, so the value is not checked"),
                    )
                    .at(pos_of(&format!("{ptr}/format")));
                    d = match closest(f, KNOWN_FORMATS.iter().copied()) {
                        Some(s) => d.help(did_you_mean(&format!("\"format\": \"{s}\""))),
                        None => d.help("use a standard format (`email`, `uri`, `date-time`, `uuid`, …) or describe the constraint with `pattern`"),
                    };
                    diags.push(d);
                }
            }
            for (k, v) in map {
                if DATA_KEYWORDS.contains(&k.as_str()) || k == "properties" && !v.is_object() {
                    continue;
                }
                let child = format!("{ptr}/{}", crate::parse::json::escape_token(k));
                check_formats(v, child, file, pos_of, diags);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                check_formats(v, format!("{ptr}/{i}"), file, pos_of, diags);
            }
        }
        _ => {}
    }
}

fn walk<'a>(v: &'a Value, f: &mut dyn FnMut(&'a serde_json::Map<String, Value>) -> bool) -> bool {
    match v {
        Value::Object(m) => {
            if f(m) {
                return true;
            }
            m.iter()
                .filter(|(k, _)| !DATA_KEYWORDS.contains(&k.as_str()))
                .any(|(_, v)| walk(v, f))
        }
        Value::Array(items) => items.iter().any(|v| walk(v, f)),
        _ => false,
    }
}

fn has_anchor(root: &Value, name: &str) -> bool {
    let hash = format!("#{name}");
    walk(root, &mut |m| {
        ["$anchor", "$dynamicAnchor"]
            .iter()
            .any(|k| m.get(*k).and_then(Value::as_str) == Some(name))
            || ["$id", "id"]
                .iter()
                .any(|k| m.get(*k).and_then(Value::as_str) == Some(hash.as_str()))
    })
}

fn has_embedded_id(root: &Value, r: &str) -> bool {
    let base = r.split('#').next().unwrap_or(r);
    if base.is_empty() {
        return false;
    }
    walk(root, &mut |m| {
        m.get("$id")
            .and_then(Value::as_str)
            .is_some_and(|id| id.trim_end_matches('#') == base)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(text: &str) -> Vec<&'static str> {
        let mut d = Vec::new();
        check(text.as_bytes(), "schema.json", &mut d);
        d.iter().map(|d| d.code.as_str()).collect()
    }

    #[test]
    fn schema_rules() {
        assert!(codes(r##"{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}"##).is_empty());
        assert_eq!(codes("{\"type\": \"object\",}"), ["schema-json-syntax"]);
        assert_eq!(codes(r#"{"type": "strin"}"#), ["schema-invalid"]);
        assert_eq!(
            codes(r#"{"$ref": "https://example.com/s.json"}"#),
            ["schema-remote-ref"]
        );
        assert_eq!(
            codes(r##"{"$ref": "#/$defs/missing"}"##),
            ["schema-unresolved-ref"]
        );
        assert!(codes(r##"{"$defs":{"a b":{"$anchor":"n"}},"properties":{"p":{"$ref":"#/$defs/a%20b"},"q":{"$ref":"#n"}}}"##).is_empty());
        assert!(codes(r#"{"enum": [{"$ref": "https://x"}]}"#).is_empty());
        assert_eq!(
            codes(
                r##"{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}"##
            ),
            ["schema-ref-cycle"]
        );
        assert_eq!(codes(r##"{"allOf":[{"$ref":"#"}]}"##), ["schema-ref-cycle"]);
        assert!(codes(r##"{"type":"object","properties":{"child":{"$ref":"#"}}}"##).is_empty());
        assert_eq!(
            codes(r#"{"type":"string","format":"emial"}"#),
            ["schema-unknown-format"]
        );
        assert!(codes(r#"{"type":"string","format":"email"}"#).is_empty());
    }
}
