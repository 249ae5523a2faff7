//! `schema.json` at the pack root: valid JSON, a valid JSON Schema (checked offline against the
//! meta-schema of its draft), only local `$ref`s, and every local `$ref` resolves.

use crate::diagnostic::{Code, Diagnostic, Position};
use crate::parse::json::JsonIndex;
use crate::source::LineIndex;
use serde_json::Value;

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
    }
}
