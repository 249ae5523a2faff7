//! `skillbake explain [CODE]`: the documentation of one diagnostic code, or the list of all.

use super::check::code_arg;
use anyhow::Result;
use skillbake_build::Code;
use std::io::Write;
use std::process::ExitCode;

/// `skillbake explain [CODE]`.
pub fn run(code: Option<&str>) -> Result<ExitCode> {
    let text = match code {
        Some(name) => code_arg(name)?.doc().to_string(),
        None => {
            let mut s = String::new();
            for c in Code::ALL {
                s.push_str(&format!(
                    "{:<26} {:<8} {}\n",
                    c.as_str(),
                    c.default_severity(),
                    c.summary()
                ));
            }
            s
        }
    };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
    Ok(ExitCode::SUCCESS)
}
