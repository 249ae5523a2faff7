//! The one check of a pack tool's arguments, whoever calls the tool: the [`Executor`](crate::Executor)
//! before anything runs, and `skillbake-mcp` for a pack tool it does not run (a server without
//! a policy, a pack without an entrypoint), so a call is accepted or refused the same way
//! whatever the transport or the policy. [`ParamCheck`] compiles the pack's `schema.json` once
//! per skill (on first use) and shares it with every later call and thread.
//!
//! **Defaults.** Before validation, every property that the call leaves out and whose schema
//! has a `default` is filled in: the properties of the top-level object and, recursively, of the
//! objects the call does give (following local `$ref`s). Defaults under `allOf`/`anyOf`/`oneOf`/
//! `if` branches are not applied (which branch applies depends on the value). The script
//! receives the parameters with the defaults in.
//!
//! **Violations.** `INVALID_PARAMS` lists every violation (up to 50) with its JSON pointer, in the
//! validator's order: `at /subject: "" is shorter than 1 character`.

use crate::outcome::{ErrorCode, Failure};
use serde_json::Value;
use skillbake::{Registry, Skill};
use std::sync::OnceLock;

/// Violations listed in one `INVALID_PARAMS` message at most.
const MAX_LISTED: usize = 50;
/// Deepest schema nesting followed when applying defaults.
const MAX_DEPTH: usize = 64;

/// A pack's compiled schema.
pub(crate) struct Compiled {
    schema: Value,
    validator: jsonschema::Validator,
}

/// The argument check of one registry's pack tools: one slot per skill, its `schema.json`
/// compiled on first use. `Send + Sync`: share one across threads.
pub struct ParamCheck {
    slots: Vec<OnceLock<Option<Result<Compiled, String>>>>,
}

impl std::fmt::Debug for ParamCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParamCheck")
            .field("skills", &self.slots.len())
            .finish_non_exhaustive()
    }
}

impl ParamCheck {
    /// The check for the skills of `registry` (nothing is compiled yet).
    pub fn new(registry: &Registry) -> Self {
        ParamCheck {
            slots: (0..registry.len()).map(|_| OnceLock::new()).collect(),
        }
    }

    fn compiled(&self, skill: &Skill<'_>) -> Option<&Result<Compiled, String>> {
        let slot = self.slots.get(skill.index())?;
        slot.get_or_init(|| skill.schema_json().map(compile))
            .as_ref()
    }

    /// Compiles the `schema.json` of `skill` now rather than on its first call; `Err` holds what
    /// the JSON Schema compiler reported (a registry that `skillbake-build` generated has only
    /// schemas that compile).
    pub fn compile(&self, skill: &Skill<'_>) -> Result<(), String> {
        match self.compiled(skill) {
            Some(Err(e)) => Err(e.clone()),
            _ => Ok(()),
        }
    }

    /// Checks the arguments `params` of a call of `skill`: a JSON object, every default of its
    /// `schema.json` applied (see the module documentation), valid against the schema. `Ok` is
    /// the arguments the script receives; `Err` is `INVALID_PARAMS` with every violation (or
    /// `NOT_RUNNABLE` when the schema does not compile).
    pub fn check(&self, skill: &Skill<'_>, params: Value) -> Result<Value, Failure> {
        let name = skill.name();
        let Value::Object(_) = params else {
            return Err(Failure::new(
                ErrorCode::InvalidParams,
                format!(
                    "The parameters for `{name}` must be a JSON object, not {}.",
                    kind(&params)
                ),
            ));
        };
        let Some(compiled) = self.compiled(skill) else {
            return Ok(params);
        };
        let compiled = compiled.as_ref().map_err(|e| {
            Failure::new(
                ErrorCode::NotRunnable,
                format!("The schema.json of `{name}` cannot be used to check parameters: {e}."),
            )
        })?;
        let mut params = params;
        apply_defaults(&compiled.schema, &compiled.schema, &mut params, 0);
        let mut problems: Vec<String> = Vec::new();
        let mut more = 0usize;
        for e in compiled.validator.iter_errors(&params) {
            if problems.len() == MAX_LISTED {
                more += 1;
                continue;
            }
            let at = e.instance_path().as_str();
            let at = if at.is_empty() {
                "the top level".to_string()
            } else {
                at.to_string()
            };
            problems.push(format!("at {at}: {e}"));
        }
        if problems.is_empty() {
            return Ok(params);
        }
        let n = problems.len() + more;
        let mut message = format!(
            "The parameters for `{name}` do not match its schema.json ({n} problem{}): {}",
            if n == 1 { "" } else { "s" },
            problems.join("; ")
        );
        if more > 0 {
            message.push_str(&format!("; and {more} more"));
        }
        message.push('.');
        Err(Failure::new(ErrorCode::InvalidParams, message))
    }
}

/// Where [`compile`] registers a pack's schema.
const SCHEMA_URI: &str = "urn:skillbake:params";

/// The pack's `schema.json` compiled into a validator.
///
/// Every schema a generated registry embeds was checked against its meta-schema when the
/// registry was built (the `schema` rule of `skillbake-build`), so this does not check it
/// again: the schema is compiled as a resource of its own, under its own `$schema`, which a
/// draft-07 root names by `$ref`. Checking it against the 2020-12 meta-schema would first build
/// that meta-schema's validator, most of a run's start-up (about 1.1 ms of 1.7 ms). A schema
/// this way refuses is compiled the usual way, so that its error is the meta-schema's.
fn compile(text: &str) -> Result<Compiled, String> {
    let schema: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let validator = match by_reference(&schema) {
        Some(v) => v,
        None => full(&schema)?,
    };
    Ok(Compiled { schema, validator })
}

/// `schema` compiled without its meta-schema check (see [`compile`]); `None` when it does not
/// compile that way.
fn by_reference(schema: &Value) -> Option<jsonschema::Validator> {
    let resource = jsonschema::Resource::from_contents(schema.clone());
    let registry = jsonschema::Registry::new()
        .add(SCHEMA_URI, resource)
        .ok()?
        .prepare()
        .ok()?;
    let root = serde_json::json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$ref": SCHEMA_URI,
    });
    jsonschema::options()
        .should_validate_formats(true)
        .with_registry(&registry)
        .build(&root)
        .ok()
}

/// `schema` checked against its meta-schema and compiled.
fn full(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| e.to_string())
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Follows a local `$ref` (`#/$defs/x`, `#/definitions/x`, `#`) from `schema`.
fn resolve<'a>(root: &'a Value, schema: &'a Value, depth: usize) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) if depth < MAX_DEPTH => match r.strip_prefix('#') {
            // The fragment is percent-encoded (RFC 3986); `pointer` undoes `~0` and `~1`.
            Some(pointer) => match skillbake_format::percent::decode(pointer)
                .as_deref()
                .and_then(|p| root.pointer(p))
            {
                Some(target) => resolve(root, target, depth + 1),
                None => schema,
            },
            None => schema,
        },
        _ => schema,
    }
}

fn apply_defaults(root: &Value, schema: &Value, value: &mut Value, depth: usize) {
    if depth >= MAX_DEPTH {
        return;
    }
    let schema = resolve(root, schema, 0);
    let (Some(props), Value::Object(obj)) =
        (schema.get("properties").and_then(Value::as_object), value)
    else {
        return;
    };
    for (key, sub) in props {
        let sub = resolve(root, sub, 0);
        match obj.get_mut(key) {
            Some(v) => apply_defaults(root, sub, v, depth + 1),
            None => {
                if let Some(d) = sub.get("default") {
                    obj.insert(key.clone(), d.clone());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The violations a validator reports for `instance`, sorted, with their pointers.
    fn violations(v: &jsonschema::Validator, instance: &Value) -> Vec<String> {
        let mut found: Vec<String> = v
            .iter_errors(instance)
            .map(|e| format!("{} at {}", e, e.instance_path().as_str()))
            .collect();
        found.sort();
        found
    }

    #[test]
    fn a_schema_compiled_by_reference_reports_what_the_full_build_reports() {
        let cases = [
            // `$id`, a local and an absolute `$ref`, closed properties.
            (
                json!({"$schema": "https://json-schema.org/draft/2020-12/schema",
                    "$id": "https://example.com/p", "type": "object",
                    "$defs": {"n": {"type": "integer", "minimum": 1}},
                    "properties": {"a": {"$ref": "#/$defs/n"},
                        "b": {"$ref": "https://example.com/p#/$defs/n"}},
                    "required": ["a"], "additionalProperties": false}),
                json!({"a": 0, "b": 0, "q": 1}),
                3,
            ),
            // Draft 7: `definitions`, `dependencies`, `exclusiveMinimum` as a number, a format.
            (
                json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                    "definitions": {"n": {"type": "integer", "exclusiveMinimum": 0}},
                    "properties": {"a": {"$ref": "#/definitions/n"},
                        "d": {"type": "string", "format": "date"}},
                    "dependencies": {"a": ["d"]}}),
                json!({"a": 0, "d": "2020-13-45"}),
                2,
            ),
            // No `$schema` (2020-12): formats asserted, unevaluated and dependent keywords.
            (
                json!({"type": "object",
                    "properties": {"a": {"type": "string", "format": "email"},
                        "e": {"enum": [1, 2]}},
                    "unevaluatedProperties": false, "dependentRequired": {"a": ["e"]}}),
                json!({"a": "nope", "z": 1}),
                3,
            ),
            // `$dynamicRef` and `prefixItems`.
            (
                json!({"$schema": "https://json-schema.org/draft/2020-12/schema",
                    "type": "object", "$dynamicAnchor": "meta",
                    "properties": {"x": {"$dynamicRef": "#meta"}},
                    "prefixItems": [{"type": "string"}]}),
                json!([5]),
                2,
            ),
        ];
        for (schema, instance, expected) in cases {
            let full = full(&schema).map_err(|e| format!("{schema}: {e}"));
            let quick = by_reference(&schema);
            let (Ok(full), Some(quick)) = (full, quick) else {
                panic!("{schema} did not compile both ways");
            };
            let found = violations(&full, &instance);
            assert_eq!(found.len(), expected, "{schema}: {found:?}");
            assert_eq!(violations(&quick, &instance), found, "{schema}");
            assert!(violations(&quick, &json!({})).len() <= 1, "{schema}");
        }
    }

    #[test]
    fn a_schema_that_breaks_its_meta_schema_keeps_the_meta_schema_message() {
        let text = r#"{"type": "object", "properties": {"a": {"type": "strin"}}}"#;
        let Err(e) = compile(text) else {
            panic!("a misspelt type compiled");
        };
        assert!(e.contains("anyOf"), "{e}");
    }

    #[test]
    fn defaults_fill_missing_properties_recursively() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "default": 3},
                "b": {"$ref": "#/$defs/b"},
                "c": {"type": "object", "properties": {"x": {"default": "y"}}, "default": {}},
                "keep": {"default": 1}
            },
            "$defs": {"b": {"type": "object", "properties": {"deep": {"default": true}}}}
        });
        let mut v = json!({"b": {}, "keep": 2});
        apply_defaults(&schema, &schema, &mut v, 0);
        assert_eq!(v, json!({"b": {"deep": true}, "keep": 2, "a": 3, "c": {}}));
    }

    #[test]
    fn refs_are_percent_decoded_then_read_as_json_pointers() {
        // `a~1b` is the key `a/b`, `%25` a `%`, `%20` a space; a broken escape points nowhere.
        let schema = json!({
            "properties": {
                "slash": {"$ref": "#/$defs/a~1b"},
                "space": {"$ref": "#/$defs/two%20words"},
                "pct": {"$ref": "#/$defs/100%25"},
                "broken": {"$ref": "#/$defs/two%2words"}
            },
            "$defs": {
                "a/b": {"type": "object", "properties": {"x": {"default": 1}}},
                "two words": {"type": "object", "properties": {"y": {"default": 2}}},
                "100%": {"type": "object", "properties": {"z": {"default": 3}}},
                "a": {"b": {"type": "object", "properties": {"wrong": {"default": 0}}}}
            }
        });
        let mut v = json!({"slash": {}, "space": {}, "pct": {}, "broken": {}});
        apply_defaults(&schema, &schema, &mut v, 0);
        assert_eq!(
            v,
            json!({"slash": {"x": 1}, "space": {"y": 2}, "pct": {"z": 3}, "broken": {}})
        );
    }

    #[test]
    fn refs_that_point_nowhere_or_loop_are_left_alone() {
        let schema =
            json!({"properties": {"a": {"$ref": "#/nope"}, "b": {"$ref": "#/properties/b"}}});
        let mut v = json!({});
        apply_defaults(&schema, &schema, &mut v, 0);
        assert_eq!(v, json!({}));
    }
}
