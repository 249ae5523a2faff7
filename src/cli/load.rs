//! `skillbake load`: DB-GPT's `load_skill` reply (or another activation shape) for a skill
//! compiled into this binary, its body rendered with `--var KEY=VALUE` when given (the
//! precompiled template, `Skill::render`). No file-system access.

use super::output::write_stdout;
use anyhow::Result;
use skillbake::{Activation, Resolution};
use skillbake_cli::BUNDLED;
use std::process::ExitCode;

/// The `--format` of DB-GPT's chunk reply; the other formats are the activation shapes.
pub const CHUNKS: &str = "chunks";

/// Every `--format` value: `chunks`, then every [`Activation`] shape.
pub fn formats() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(std::iter::once(CHUNKS).chain(Activation::NAMES))
}

/// Parses `--var KEY=VALUE`.
pub fn parse_var(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("`{s}` is not KEY=VALUE")),
    }
}

/// `skillbake load`.
pub fn run(
    format: &str,
    skill_name: &str,
    file_path: Option<&str>,
    vars: &[(String, String)],
) -> Result<ExitCode> {
    if !vars.is_empty() {
        return render(format, skill_name, file_path, vars);
    }
    let shape = Activation::from_name(format);
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
    let (file_path, resolution) = match BUNDLED.lookup(skill_name) {
        Ok(skill) => {
            let path = file_path.unwrap_or(skill.skill_md_path());
            (path, skill.resolve(path))
        }
        Err(why) => {
            // DB-GPT's reply on stdout; why, for a person, on stderr.
            if skill_name.contains('@') {
                eprintln!("skillbake: `{skill_name}`: {why}");
            }
            (file_path.unwrap_or(""), Resolution::SkillNotFound)
        }
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

/// `skillbake load --var …`: the reply with the rendered body in place of the body.
fn render(
    format: &str,
    skill_name: &str,
    file_path: Option<&str>,
    vars: &[(String, String)],
) -> Result<ExitCode> {
    let Some(skill) = BUNDLED.get(skill_name) else {
        let mut out = String::new();
        Resolution::SkillNotFound.write_reply(skill_name, file_path.unwrap_or(""), &mut out);
        out.push('\n');
        write_stdout(out.as_bytes());
        return Ok(ExitCode::from(1));
    };
    let path = file_path.unwrap_or(skill.skill_md_path());
    if !matches!(skill.resolve(path), Resolution::Body(_)) {
        anyhow::bail!(
            "--var renders the body; `{path}` names another file of `{}`",
            skill.name()
        );
    }
    let pairs: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let body = match skill.render(&pairs) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("skillbake: cannot render `{}`: {e}", skill.name());
            return Ok(ExitCode::from(1));
        }
    };
    let text = match Activation::from_name(format) {
        Some(Activation::SkillTag) => skillbake_format::activation::skill_tag(skill.name(), &body),
        Some(Activation::SkillContent) => skillbake_format::activation::skill_content(
            skill.name(),
            &body,
            skill.location(),
            skill.files().map(|f| f.path()),
        ),
        _ => {
            let mut s = skillbake_format::chunks::head(skill.name());
            skillbake_format::escape::json_into(&mut s, path);
            s.push_str(&skillbake_format::chunks::tail(&body));
            s
        }
    };
    write_stdout(format!("{text}\n").as_bytes());
    Ok(ExitCode::SUCCESS)
}
