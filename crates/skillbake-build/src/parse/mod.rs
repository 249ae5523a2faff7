//! Parse layer: turns the bytes of a pack into structured data with source positions.
//!
//! [`frontmatter`] splits and parses `SKILL.md`; [`jinja`] parses bodies as Jinja2 templates;
//! [`json`] maps JSON pointers of `schema.json` to positions; `keys` locates frontmatter keys,
//! `lines` splits text into lines as YAML does, `tokens` says where the frontmatter's plain,
//! quoted and block scalars and comments lie, `quote` quotes a plain value (the fix several
//! rules share) and `yaml_error` maps YAML errors to diagnostics. Nothing here decides whether a
//! value is acceptable: that is [`crate::validate`].

pub mod frontmatter;
pub mod jinja;
pub mod json;
mod keys;
mod lines;
pub(crate) mod quote;
pub(crate) mod tokens;
mod yaml_error;

use serde_json::{Map, Number, Value as Json};
use yaml_serde::Value as Yaml;

/// Converts a YAML value to JSON (tags dropped, non-string keys written as YAML text, non-finite
/// floats as strings), keeping mapping order.
pub fn yaml_to_json(v: &Yaml) -> Json {
    match v {
        Yaml::Null => Json::Null,
        Yaml::Bool(b) => Json::Bool(*b),
        Yaml::Number(n) => {
            if let Some(i) = n.as_i64() {
                Json::Number(i.into())
            } else if let Some(u) = n.as_u64() {
                Json::Number(u.into())
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                Number::from_f64(f).map_or_else(|| Json::String(n.to_string()), Json::Number)
            }
        }
        Yaml::String(s) => Json::String(s.clone()),
        Yaml::Sequence(items) => Json::Array(items.iter().map(yaml_to_json).collect()),
        Yaml::Mapping(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                out.insert(key_text(k), yaml_to_json(v));
            }
            Json::Object(out)
        }
        Yaml::Tagged(t) => yaml_to_json(&t.value),
    }
}

/// A mapping key as text: strings as they are, anything else in YAML notation.
pub fn key_text(k: &Yaml) -> String {
    match k {
        Yaml::String(s) => s.clone(),
        other => yaml_serde::to_string(other)
            .map(|s| s.trim_end().to_string())
            .unwrap_or_default(),
    }
}

/// A short description of a YAML value's type, for messages.
pub fn type_name(v: &Yaml) -> &'static str {
    match v {
        Yaml::Null => "nothing (null)",
        Yaml::Bool(_) => "a boolean",
        Yaml::Number(_) => "a number",
        Yaml::String(_) => "a string",
        Yaml::Sequence(_) => "a list",
        Yaml::Mapping(_) => "a mapping",
        Yaml::Tagged(_) => "a tagged value",
    }
}
