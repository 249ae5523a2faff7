//! `skillbake cat`: the exact bytes of a file embedded in this binary.

use super::output::write_stdout;
use anyhow::Result;
use skillbake_cli::BUNDLED;
use std::process::ExitCode;

/// `skillbake cat`.
pub fn run(skill_name: &str, path: &str) -> Result<ExitCode> {
    let skill = match BUNDLED.lookup(skill_name) {
        Ok(skill) => skill,
        Err(skillbake::LookupError::UnknownSkill) => {
            let names: Vec<&str> = BUNDLED.names().collect();
            eprintln!(
                "skillbake: no skill named '{skill_name}'. Available: {}",
                names.join(", ")
            );
            return Ok(ExitCode::from(1));
        }
        Err(why) => {
            eprintln!("skillbake: `{skill_name}`: {why}");
            return Ok(ExitCode::from(1));
        }
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
