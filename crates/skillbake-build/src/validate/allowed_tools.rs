//! `allowed-tools-unknown`: every entry of `allowed-tools` names a tool an agent has. The spec
//! writes the field as one space-separated string (`Read Grep Bash(git:*)`), Claude Code also
//! reads a list and commas; an entry is a tool name, optionally with a pattern in parentheses
//! (`Bash(git diff:*)`), or an MCP tool (`mcp__server__tool`, `mcp__server`). Names are
//! compared with the tools of Claude Code, Codex and DB-GPT and the names declared in
//! `skillbake.toml` (`[tools] known`); a pattern must close its parenthesis and hold something.

use super::PackCtx;
use crate::diagnostic::{Code, Diagnostic};
use skillbake_format::suggest::{closest, did_you_mean};
use yaml_serde::Value;

/// Tools agents name in `allowed-tools`: Claude Code's, then Codex's (DB-GPT's are
/// `validate::tools::BUILTIN_TOOLS`).
pub const AGENT_TOOLS: &[&str] = &[
    "Agent",
    "AskUserQuestion",
    "Bash",
    "BashOutput",
    "Edit",
    "ExitPlanMode",
    "Glob",
    "Grep",
    "KillShell",
    "LS",
    "MultiEdit",
    "NotebookEdit",
    "NotebookRead",
    "Read",
    "Skill",
    "SlashCommand",
    "Task",
    "TodoRead",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
    "Write",
    "apply_patch",
    "shell",
    "update_plan",
    "view_image",
    "web_search",
];

/// The entries of `allowed-tools`: a list, or one string split at spaces and commas outside
/// parentheses.
pub fn entries(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => split(s),
        Value::Sequence(items) => items
            .iter()
            .filter_map(Value::as_str)
            .flat_map(split)
            .collect(),
        _ => Vec::new(),
    }
}

fn split(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0 && (c == ',' || c.is_whitespace()) {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// What is wrong with one entry, if anything: `Err(help)`.
fn judge(entry: &str, known: &dyn Fn(&str) -> bool) -> Result<(), (String, Option<String>)> {
    let (name, pattern) = match entry.split_once('(') {
        Some((name, rest)) => (name, Some(rest)),
        None => (entry, None),
    };
    if let Some(rest) = pattern {
        let Some(inner) = rest.strip_suffix(')') else {
            return Err((format!("`{entry}` opens a pattern it does not close"), None));
        };
        if inner.trim().is_empty() || inner.contains(['(', ')']) {
            return Err((format!("`{entry}` has an empty or nested pattern"), None));
        }
    }
    if name.starts_with("mcp__") || known(name) {
        return Ok(());
    }
    Err((
        format!("`allowed-tools` names `{name}`, which is not a known tool"),
        Some(name.to_string()),
    ))
}

/// Checks `allowed-tools`.
pub fn check(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) {
    let Some(v) = ctx.field("allowed-tools") else {
        return;
    };
    let all = || {
        AGENT_TOOLS
            .iter()
            .copied()
            .chain(super::tools::BUILTIN_TOOLS.iter().copied())
            .chain(ctx.config.known_tools.iter().map(String::as_str))
    };
    let known = |n: &str| all().any(|k| k == n);
    for entry in entries(v) {
        let Err((message, name)) = judge(&entry, &known) else {
            continue;
        };
        let mut d = Diagnostic::new(Code::AllowedToolsUnknown, &ctx.file, message)
            .at(ctx.md.find_in_value("allowed-tools", &entry));
        d = match name {
            Some(n) => match closest(&n, all()) {
                Some(s) => d.help(format!(
                    "{} If `{n}` is a tool of your agent, declare it in skillbake.toml: `[tools] known = [\"{n}\"]`",
                    did_you_mean(s)
                )),
                None => d.help(format!(
                    "declare your agent's own tools in skillbake.toml: `[tools] known = [\"{n}\"]`"
                )),
            },
            None => d.help("write a pattern as `Tool(pattern)`, e.g. `Bash(git diff:*)`"),
        };
        diags.push(d);
    }
}

#[cfg(test)]
mod tests {
    use super::{judge, split};

    #[test]
    fn entries_split_outside_patterns() {
        assert_eq!(
            split("Read, Grep Bash(git diff:*) mcp__github"),
            ["Read", "Grep", "Bash(git diff:*)", "mcp__github"]
        );
    }

    #[test]
    fn names_and_patterns_are_judged() {
        let known = |n: &str| n == "Bash" || n == "Read";
        assert!(judge("Bash(git:*)", &known).is_ok());
        assert!(judge("mcp__github__create_issue", &known).is_ok());
        assert!(judge("Raed", &known).is_err());
        assert!(judge("Bash(git:*", &known).is_err());
        assert!(judge("Bash()", &known).is_err());
    }
}
