//! Tool definitions for every LLM API, precomputed per registry: the `load_skill` tool (its
//! `skill_name` constrained to the embedded names), the `find_skills` tool (routing: the top
//! candidates for a request) and, for every pack with a `schema.json`, one tool whose parameters
//! are that schema.

use serde_json::{json, Map, Value};
use skillbake_format::tools::Format;

/// Tool names skillbake itself defines (here and in the MCP server).
pub const RESERVED_TOOL_NAMES: &[&str] = &["load_skill", "list_skills", "find_skills"];

/// Description of the `find_skills` tool.
pub const FIND_SKILLS_DESCRIPTION: &str = "Find the skills that fit a request: returns the top_k candidates (default 5), best first, as a JSON array of {name, score, matched, bucket, description, location, when_to_use, when_not_to_use, parameters}. Choose the one whose description and when_to_use fit (and whose when_not_to_use does not), then call load_skill with its name and location. Use it when no skill in the catalog obviously fits, or the catalog is long.";

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
    /// Its routing bucket (`""` at the root).
    pub bucket: &'a str,
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
    let mut buckets: Vec<&str> = skills
        .iter()
        .map(|s| s.bucket)
        .filter(|b| !b.is_empty())
        .collect();
    buckets.sort_unstable();
    buckets.dedup();
    let mut find = json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "The user's request, in their own words.",
            },
            "top_k": {
                "type": "integer",
                "minimum": 1,
                "maximum": 50,
                "description": "How many candidates to return (default 5).",
            },
        },
        "required": ["query"],
        "additionalProperties": false,
    });
    if !buckets.is_empty() {
        find["properties"]["bucket"] = json!({
            "type": "string",
            "description": "Only skills of this bucket (and of the buckets below it).",
            "enum": buckets,
        });
    }
    out.push((
        "find_skills".to_string(),
        FIND_SKILLS_DESCRIPTION.to_string(),
        find,
    ));
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

/// The tools as JSON in dialect `format`, pretty-printed.
pub fn render(format: Format, tools: &[(String, String, Value)]) -> String {
    let value = match format {
        Format::OpenAi => Value::Array(
            tools
                .iter()
                .map(|(n, d, s)| json!({"type": "function", "function": {"name": n, "description": d, "parameters": s}}))
                .collect(),
        ),
        Format::Anthropic => Value::Array(
            tools
                .iter()
                .map(|(n, d, s)| json!({"name": n, "description": d, "input_schema": s}))
                .collect(),
        ),
        Format::Mcp => Value::Array(
            tools
                .iter()
                .map(|(n, d, s)| json!({"name": n, "description": d, "inputSchema": s}))
                .collect(),
        ),
        Format::JsonSchema => {
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
