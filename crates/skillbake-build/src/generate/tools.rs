//! Tool definitions for every LLM API, precomputed per registry: the `load_skill` tool (its
//! `skill_name` constrained to the embedded names) and, for every pack with a `schema.json`, one
//! tool whose parameters are that schema.

use serde_json::{json, Map, Value};

/// Tool-definition dialects, in the order of the generated table.
pub const FORMATS: [&str; 4] = ["openai", "anthropic", "mcp", "json-schema"];

/// Tool names skillbake itself defines (here and in the MCP server).
pub const RESERVED_TOOL_NAMES: &[&str] = &["load_skill", "list_skills"];

/// Description of the `load_skill` tool.
pub const LOAD_SKILL_DESCRIPTION: &str = "Load a skill: returns its instructions (the body of its SKILL.md) as DB-GPT chunks, or one of its files when file_path names one. Call it when a task matches a skill from the catalog, before acting.";

/// What a pack contributes to the tool definitions.
#[derive(Debug, Clone, Copy)]
pub struct ToolSource<'a> {
    /// The skill's name.
    pub name: &'a str,
    /// Its description.
    pub description: &'a str,
    /// The path of its `SKILL.md` as the catalog lists it.
    pub skill_md_path: &'a str,
    /// The bytes of its `schema.json`, if any.
    pub schema: Option<&'a [u8]>,
}

/// (name, description, input JSON Schema) of every tool, for skills in name order.
pub fn tools(skills: &[ToolSource<'_>]) -> Vec<(String, String, Value)> {
    let names: Vec<&str> = skills.iter().map(|s| s.name).collect();
    let example = skills
        .first()
        .map_or("skills/NAME/SKILL.md", |s| s.skill_md_path);
    let mut out = vec![(
        "load_skill".to_string(),
        LOAD_SKILL_DESCRIPTION.to_string(),
        json!({
            "type": "object",
            "properties": {
                "skill_name": {
                    "type": "string",
                    "description": "Name of the skill to load, as listed in the catalog.",
                    "enum": names,
                },
                "file_path": {
                    "type": "string",
                    "description": format!("Optional. Path of the skill's SKILL.md as listed in the catalog (e.g. {example}; the default), or of another file of the skill (e.g. scripts/run.py) to read that file."),
                },
            },
            "required": ["skill_name"],
            "additionalProperties": false,
        }),
    )];
    for s in skills {
        // A pack named like a built-in tool (possible where `_` is allowed) keeps its
        // instructions but gets no tool of its own: the built-in wins.
        if RESERVED_TOOL_NAMES.contains(&s.name) {
            continue;
        }
        let Some(bytes) = s.schema else {
            continue;
        };
        let Ok(Value::Object(mut schema)) = serde_json::from_slice::<Value>(bytes) else {
            continue;
        };
        // Dialect markers confuse some APIs' schema subsets; the schema itself stays as written.
        schema.shift_remove("$schema");
        schema.shift_remove("$id");
        out.push((
            s.name.to_string(),
            s.description.to_string(),
            Value::Object(schema),
        ));
    }
    out
}

/// The tools as JSON in dialect `format` (one of [`FORMATS`]), pretty-printed.
pub fn render(format: &str, tools: &[(String, String, Value)]) -> String {
    let value = match format {
        "openai" => Value::Array(
            tools
                .iter()
                .map(|(n, d, s)| json!({"type": "function", "function": {"name": n, "description": d, "parameters": s}}))
                .collect(),
        ),
        "anthropic" => Value::Array(
            tools
                .iter()
                .map(|(n, d, s)| json!({"name": n, "description": d, "input_schema": s}))
                .collect(),
        ),
        "mcp" => Value::Array(
            tools
                .iter()
                .map(|(n, d, s)| json!({"name": n, "description": d, "inputSchema": s}))
                .collect(),
        ),
        _ => {
            let mut map = Map::new();
            for (n, d, s) in tools {
                let mut schema = s.clone();
                if let Value::Object(o) = &mut schema {
                    o.insert("title".into(), json!(n));
                    o.insert("description".into(), json!(d));
                }
                map.insert(n.clone(), schema);
            }
            Value::Object(map)
        }
    };
    let mut s = serde_json::to_string_pretty(&value).unwrap_or_default();
    s.push('\n');
    s
}
