//! `skillbake-example-agent`: the smallest agent-like front end over the skills compiled into this
//! binary.
//!
//! * `skillbake-example-agent list` — one line per skill: name and description;
//! * `skillbake-example-agent load NAME [PATH]` — DB-GPT's `load_skill` reply; `PATH` defaults to
//!   the pack's own `SKILL.md` path. Exit 1 (reply still printed) when the skill or file is not
//!   found.
//!
//! Exit 2 on a usage error.

#![forbid(unsafe_code)]

use skillbake_example_agent::REGISTRY;
use std::io::Write as _;
use std::process::ExitCode;

const USAGE: &str = "usage: skillbake-example-agent <list | load NAME [PATH]>";

fn list() -> String {
    let width = REGISTRY
        .names()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for skill in REGISTRY.iter() {
        let description = skill
            .description()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        out.push_str(&format!("{:width$}  {description}\n", skill.name()));
    }
    out
}

/// The reply and whether the skill and file were found.
fn load(name: &str, path: Option<&str>) -> (String, bool) {
    let path = match (path, REGISTRY.get(name)) {
        (Some(p), _) => p,
        (None, Some(skill)) => skill.skill_md_path(),
        (None, None) => "",
    };
    let found = REGISTRY.resolve(name, path).is_found();
    let mut reply = REGISTRY.load_skill(name, path);
    reply.push('\n');
    (reply, found)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (out, code) = match args.as_slice() {
        ["list"] => (list(), ExitCode::SUCCESS),
        ["load", name] | ["load", name, _] => {
            let (reply, found) = load(name, args.get(2).copied());
            let code = if found {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            };
            (reply, code)
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let mut stdout = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth a panic.
    let _ = stdout.write_all(out.as_bytes());
    let _ = stdout.flush();
    code
}
