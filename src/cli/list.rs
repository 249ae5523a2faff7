//! `skillbake list`: the skills compiled into this binary, as text or JSON. No file-system access.

use super::args::ListFormat;
use super::output::write_stdout;
use anyhow::Result;
use serde_json::{json, Value};
use skillbake::Skill;
use skillbake_cli::BUNDLED;
use std::process::ExitCode;

fn skill_json(s: &Skill<'_>) -> Value {
    let frontmatter: Value = serde_json::from_str(s.frontmatter_json()).unwrap_or(Value::Null);
    json!({
        "name": s.name(),
        "description": s.description(),
        "location": s.skill_md_path(),
        "version": s.version(),
        "versions": s.versions().map(|v| v.version()).collect::<Vec<_>>(),
        "requires": s.requires().collect::<std::collections::BTreeMap<_, _>>(),
        "tags": s.tags().collect::<Vec<_>>(),
        "required_tools": s.required_tools().collect::<Vec<_>>(),
        "files": s.files().map(|f| json!({
            "path": f.path(),
            "size": f.bytes().len(),
            "kind": f.kind().output_type(),
        })).collect::<Vec<_>>(),
        "frontmatter": frontmatter,
    })
}

/// `skillbake list`.
pub fn run(format: ListFormat) -> Result<ExitCode> {
    let out = match format {
        ListFormat::Json => {
            let all: Vec<Value> = BUNDLED.iter().map(|s| skill_json(&s)).collect();
            let mut s = serde_json::to_string_pretty(&all)?;
            s.push('\n');
            s
        }
        ListFormat::Text => {
            let width = BUNDLED
                .names()
                .map(|n| n.chars().count())
                .max()
                .unwrap_or(0);
            let mut s = String::new();
            for skill in BUNDLED.iter() {
                let description = skill
                    .description()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                s.push_str(&format!("{:width$}  {description}\n", skill.name()));
                // Versions kept beside the one agents get by name, one indented line each.
                for other in skill.versions().filter(|v| !v.is_default()) {
                    s.push_str(&format!(
                        "{:width$}  @{}  {}\n",
                        "",
                        other.version().unwrap_or(""),
                        other.skill_md_path()
                    ));
                }
            }
            s
        }
    };
    write_stdout(out.as_bytes());
    Ok(ExitCode::SUCCESS)
}
