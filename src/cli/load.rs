//! `skillbake load`: DB-GPT's `load_skill` reply (or another activation shape) for a skill
//! compiled into this binary. No file-system access.

use super::output::write_stdout;
use anyhow::Result;
use skillbake::{Activation, Resolution, BUNDLED};
use std::process::ExitCode;

/// The `--format` of DB-GPT's chunk reply; the other formats are the activation shapes.
pub const CHUNKS: &str = "chunks";

/// Every `--format` value: `chunks`, then every [`Activation`] shape.
pub fn formats() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(std::iter::once(CHUNKS).chain(Activation::NAMES))
}

/// `skillbake load`.
pub fn run(format: &str, skill_name: &str, file_path: Option<&str>) -> Result<ExitCode> {
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
