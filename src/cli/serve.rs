//! `skillbake list`, `load` and `cat`: serve the skills compiled into this binary. No file-system
//! access.

use super::ListFormat;
use anyhow::Result;
use serde_json::{json, Value};
use skillbake::{Activation, CatalogFormat, Resolution, Skill, ToolsFormat, BUNDLED};
use std::io::Write;
use std::process::ExitCode;

fn write_stdout(bytes: &[u8]) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(bytes);
    let _ = out.flush();
}

fn skill_json(s: &Skill<'_>) -> Value {
    let frontmatter: Value = serde_json::from_str(s.frontmatter_json()).unwrap_or(Value::Null);
    json!({
        "name": s.name(),
        "description": s.description(),
        "location": s.skill_md_path(),
        "version": s.version(),
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
pub fn list(format: ListFormat) -> Result<ExitCode> {
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
            }
            s
        }
    };
    write_stdout(out.as_bytes());
    Ok(ExitCode::SUCCESS)
}

/// `skillbake prompt`.
pub fn prompt(format: &str, budget: Option<usize>) -> Result<ExitCode> {
    let format = CatalogFormat::from_name(format).unwrap_or(CatalogFormat::Xml);
    let catalog = BUNDLED.catalog(format, budget);
    let mut text = catalog.text;
    if !text.is_empty() {
        text.push('\n');
    }
    write_stdout(text.as_bytes());
    if catalog.omitted > 0 {
        eprintln!(
            "skillbake: {} of {} skills left out to fit {} characters",
            catalog.omitted,
            BUNDLED.len(),
            budget.unwrap_or(0)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `skillbake tools`.
pub fn tools(format: &str) -> Result<ExitCode> {
    let format = ToolsFormat::ALL
        .into_iter()
        .find(|f| f.name() == format)
        .unwrap_or(ToolsFormat::OpenAi);
    write_stdout(BUNDLED.tools_json(format).as_bytes());
    Ok(ExitCode::SUCCESS)
}

/// `skillbake load`.
pub fn load(format: &str, skill_name: &str, file_path: Option<&str>) -> Result<ExitCode> {
    let shape = match format {
        "skill-tag" => Some(Activation::SkillTag),
        "skill-content" => Some(Activation::SkillContent),
        _ => None,
    };
    if let Some(shape) = shape {
        return Ok(match BUNDLED.get(skill_name) {
            Some(skill) => {
                write_stdout(format!("{}\n", skill.activation(shape)).as_bytes());
                ExitCode::SUCCESS
            }
            None => {
                let names: Vec<&str> = BUNDLED.names().collect();
                write_stdout(
                    format!(
                        "Error: Unknown skill '{skill_name}'. Available: {}\n",
                        names.join(", ")
                    )
                    .as_bytes(),
                );
                ExitCode::from(1)
            }
        });
    }
    let (file_path, resolution) = match BUNDLED.get(skill_name) {
        Some(skill) => {
            let path = file_path.unwrap_or(skill.skill_md_path());
            (path, skill.resolve(path))
        }
        None => (file_path.unwrap_or(""), Resolution::SkillNotFound),
    };
    let mut out = String::new();
    resolution.write_reply(skill_name, file_path, &mut out);
    out.push('\n');
    write_stdout(out.as_bytes());
    Ok(if resolution.is_found() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `skillbake cat`.
pub fn cat(skill_name: &str, path: &str) -> Result<ExitCode> {
    let Some(skill) = BUNDLED.get(skill_name) else {
        let names: Vec<&str> = BUNDLED.names().collect();
        eprintln!(
            "skillbake: no skill named '{skill_name}'. Available: {}",
            names.join(", ")
        );
        return Ok(ExitCode::from(1));
    };
    match skill.find_file(path) {
        Some(file) => {
            write_stdout(file.bytes());
            Ok(ExitCode::SUCCESS)
        }
        None => {
            let files: Vec<&str> = skill.files().map(|f| f.path()).collect();
            eprintln!(
                "skillbake: skill '{}' has no file '{path}'. Files: {}",
                skill.name(),
                files.join(", ")
            );
            Ok(ExitCode::from(1))
        }
    }
}
